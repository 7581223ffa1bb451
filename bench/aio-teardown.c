/* aio-teardown: what an aio context costs a short-lived command.
 *
 * usage: aio-teardown [N] [NR_EVENTS]
 * Times N (default 40) rounds of io_setup(NR_EVENTS) (default 1024, what
 * lvm 2.02.178-2.02.182 asks for) and io_destroy, and prints the median,
 * 90th percentile and maximum of each.  io_destroy returns only once the
 * kernel has torn the context down, which waits for RCU grace periods:
 * every lvm command of those builds pays it at exit, whatever it read
 * (docs/results.md, "Repeated lvchange, 2.02.177 / 2.02.180 / 2.02.183").
 * Run it beside an aio workload to see what that does to it.
 */
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 10000

static double
now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y;
}

static void
show(const char *what, double *v, long n)
{
  qsort(v, (size_t)n, sizeof *v, cmp);
  printf("%-10s median %.3f ms  p90 %.3f ms  max %.3f ms\n", what,
         v[n / 2] * 1e3, v[n * 9 / 10] * 1e3, v[n - 1] * 1e3);
}

int
main(int argc, char **argv)
{
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 40;
  long nr = argc > 2 ? strtol(argv[2], NULL, 10) : 1024;
  double *setup, *destroy;

  if (argc > 3 || n < 1 || n > MAX_ROUNDS || nr < 1 || nr > 65536) {
    fprintf(stderr, "usage: aio-teardown [N (1-%d)] [NR_EVENTS (1-65536)]\n",
            MAX_ROUNDS);
    return 2;
  }
  setup = calloc((size_t)n, sizeof *setup);
  destroy = calloc((size_t)n, sizeof *destroy);
  if (!setup || !destroy) {
    perror("aio-teardown");
    return 1;
  }
  for (long i = 0; i < n; i++) {
    aio_context_t ctx = 0;
    double t0 = now(), t1, t2;

    if (syscall(SYS_io_setup, nr, &ctx) < 0) {
      perror("aio-teardown: io_setup");
      return 1;
    }
    t1 = now();
    if (syscall(SYS_io_destroy, ctx) < 0) {
      perror("aio-teardown: io_destroy");
      return 1;
    }
    t2 = now();
    setup[i] = t1 - t0;
    destroy[i] = t2 - t1;
  }
  printf("%ld rounds of io_setup(%ld) + io_destroy\n", n, nr);
  show("io_setup", setup, n);
  show("io_destroy", destroy, n);
  free(setup);
  free(destroy);
  return 0;
}
