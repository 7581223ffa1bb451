/* aio-flood: put many O_DIRECT reads in flight at once, with Linux AIO.
 *
 * usage: aio-flood N_PER_FILE FILE...
 * Opens every FILE with O_DIRECT, submits N_PER_FILE 4 KiB reads to each
 * (all before reaping any), waits for all of them and prints how many
 * were in flight, how long submitting and completing took, and how many
 * failed.  Used by bench/lib.sh against a FUSE mount whose profile
 * delays every read, to measure how many delayed reads the daemon holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
  long per = argc > 2 ? strtol(argv[1], NULL, 10) : 0;
  int nfiles = argc - 2;
  long total = per * nfiles, done = 0, failed = 0;
  aio_context_t ctx = 0;
  struct iocb *cbs, **ptrs;
  struct io_event *ev;
  char *buf;
  double t0, t_sub, t_done;

  if (per <= 0 || nfiles <= 0) {
    fprintf(stderr, "usage: aio-flood N_PER_FILE FILE...\n");
    return 2;
  }
  if (syscall(SYS_io_setup, total, &ctx) < 0) {
    fprintf(stderr, "aio-flood: io_setup(%ld): %s (see fs.aio-max-nr)\n",
            total, strerror(errno));
    return 1;
  }
  cbs = calloc((size_t)total, sizeof *cbs);
  ptrs = calloc((size_t)total, sizeof *ptrs);
  ev = calloc((size_t)total, sizeof *ev);
  if (!cbs || !ptrs || !ev ||
      posix_memalign((void **)&buf, 4096, 4096 * (size_t)per)) {
    fprintf(stderr, "aio-flood: out of memory\n");
    return 1;
  }
  for (int f = 0; f < nfiles; f++) {
    int fd = open(argv[2 + f], O_RDONLY | O_DIRECT);

    if (fd < 0) {
      fprintf(stderr, "aio-flood: %s: %s\n", argv[2 + f], strerror(errno));
      return 1;
    }
    for (long k = 0; k < per; k++) {
      struct iocb *cb = &cbs[f * per + k];

      cb->aio_fildes = (uint32_t)fd;
      cb->aio_lio_opcode = IOCB_CMD_PREAD;
      cb->aio_buf =
        (uint64_t)(uintptr_t)(buf + 4096 * k); /* contents unused */
      cb->aio_nbytes = 4096;
      cb->aio_offset = 4096 * k;
      ptrs[f * per + k] = cb;
    }
  }
  t0 = now();
  for (long i = 0; i < total;) {
    long n = syscall(SYS_io_submit, ctx, total - i, ptrs + i);

    if (n <= 0) {
      fprintf(stderr, "aio-flood: io_submit: %s after %ld\n",
              n < 0 ? strerror(errno) : "nothing submitted", i);
      return 1;
    }
    i += n;
  }
  t_sub = now() - t0;
  while (done < total) {
    long n = syscall(SYS_io_getevents, ctx, 1, total - done, ev, NULL);

    if (n < 0) {
      if (errno == EINTR)
        continue;
      fprintf(stderr, "aio-flood: io_getevents: %s\n", strerror(errno));
      return 1;
    }
    for (long i = 0; i < n; i++)
      if (ev[i].res != 4096)
        failed++;
    done += n;
  }
  t_done = now() - t0;
  printf("%ld reads in flight at once over %d files: submitted in %.3f s, "
         "all done in %.3f s, %ld failed\n",
         total, nfiles, t_sub, t_done, failed);
  syscall(SYS_io_destroy, ctx);
  return failed ? 1 : 0;
}
