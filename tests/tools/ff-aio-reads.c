/* ff-aio-reads: start one O_DIRECT read on every file given, all at once,
 * with Linux native aio, and time the batch.  Used by
 * tests/integration/test-load.sh to put 10,000 delayed reads in flight
 * against the FUSE daemon at the same moment.
 *
 * usage: ff-aio-reads [--size B] [--offset O] -l LIST
 *        ff-aio-reads [--size B] [--offset O] FILE...
 *
 * LIST holds one "PATH" or "PATH REF" per line.  Each PATH is opened
 * O_RDONLY|O_DIRECT; one aio context with room for every read is set up
 * (io_setup(N) takes N of the machine's fs.aio-max-nr); all N iocbs are
 * handed to io_submit before the first completion is collected.  Each
 * read is B bytes (default 4096) at offset O (default 0).  When a line
 * names a REF file, the read must return exactly REF's bytes at the same
 * offset (after the batch: checking takes no time from it).
 *
 * Prints one JSON object: n, errors (reads that failed, came back short
 * or differed), submit_s (time to submit all N), wall_s (first submit to
 * last completion), lat_min_s, lat_p50_s, lat_max_s (submission of the
 * batch to each read's collection).  Exit 0 when every read succeeded
 * (and matched), 1 otherwise, 2 on bad usage.
 *
 * Raw syscalls via <linux/aio_abi.h>: no libaio needed.  The soft fd
 * limit is raised to the hard one (N files stay open at once).
 *
 * Thread model: single-threaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ALIGN      4096
#define MAX_REPORT 10 /* failures printed before staying quiet */

struct target {
  char *path;
  char *ref; /* or NULL */
  int fd;
  int64_t res;
};

static double
now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y;
}

/* Append "PATH" or "PATH REF" (line is modified). */
static int
add_target(struct target **t, size_t *n, size_t *alloc, char *line)
{
  char *sp = strchr(line, ' ');

  if (*n == *alloc) {
    size_t na = *alloc ? *alloc * 2 : 1024;
    struct target *nt = realloc(*t, na * sizeof *nt);

    if (!nt)
      return -1;
    *t = nt;
    *alloc = na;
  }
  if (sp)
    *sp++ = '\0';
  (*t)[*n] = (struct target){.fd = -1};
  if (!((*t)[*n].path = strdup(line)) || (sp && !((*t)[*n].ref = strdup(sp))))
    return -1;
  (*n)++;
  return 0;
}

/* Does buf hold len bytes of ref at off? */
static int
matches(const char *ref, const char *buf, size_t len, off_t off)
{
  char *want = malloc(len);
  int fd = open(ref, O_RDONLY | O_CLOEXEC), same;

  same = want && fd >= 0 && pread(fd, want, len, off) == (ssize_t)len &&
         !memcmp(want, buf, len);
  if (fd >= 0)
    close(fd);
  free(want);
  return same;
}

static void
usage_exit(void)
{
  fprintf(stderr,
          "usage: ff-aio-reads [--size B] [--offset O] (-l LIST | FILE...)\n");
  exit(2);
}

int
main(int argc, char **argv)
{
  size_t size = 4096, n = 0, alloc = 0, done = 0, errors = 0;
  off_t off = 0;
  const char *list = NULL;
  struct target *t = NULL;
  char *bufs = NULL;
  struct iocb *cbs, **cbp;
  struct io_event *evs;
  double *lat, t0, t_sub, t_end;
  aio_context_t ctx = 0;
  struct rlimit rl;
  long r;

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc)
      size = strtoul(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--offset") && i + 1 < argc)
      off = (off_t)strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "-l") && i + 1 < argc)
      list = argv[++i];
    else if (argv[i][0] == '-')
      usage_exit();
    else if (add_target(&t, &n, &alloc, argv[i]) < 0)
      goto oom;
  }
  if (list) {
    FILE *f = fopen(list, "r");
    char line[8192];

    if (!f) {
      fprintf(stderr, "ff-aio-reads: %s: %s\n", list, strerror(errno));
      return 1;
    }
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\n")] = '\0';
      if (line[0] && add_target(&t, &n, &alloc, line) < 0)
        goto oom;
    }
    fclose(f);
  }
  if (n == 0 || size == 0 || size % 512 || off % 512)
    usage_exit();

  /* N files stay open at once. */
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  cbs = calloc(n, sizeof *cbs);
  cbp = calloc(n, sizeof *cbp);
  evs = calloc(n, sizeof *evs);
  lat = calloc(n, sizeof *lat);
  if (!cbs || !cbp || !evs || !lat ||
      posix_memalign((void **)&bufs, ALIGN, n * size))
    goto oom;
  for (size_t i = 0; i < n; i++) {
    t[i].fd = open(t[i].path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (t[i].fd < 0) {
      fprintf(stderr, "ff-aio-reads: open %s: %s\n", t[i].path,
              strerror(errno));
      return 1;
    }
    cbs[i].aio_fildes = (uint32_t)t[i].fd;
    cbs[i].aio_lio_opcode = IOCB_CMD_PREAD;
    cbs[i].aio_buf = (uint64_t)(uintptr_t)(bufs + i * size);
    cbs[i].aio_nbytes = size;
    cbs[i].aio_offset = off;
    cbs[i].aio_data = i;
    cbp[i] = &cbs[i];
  }
  if (syscall(SYS_io_setup, (long)n, &ctx) < 0) {
    fprintf(stderr,
            "ff-aio-reads: io_setup(%zu): %s (fs.aio-nr near "
            "fs.aio-max-nr?)\n",
            n, strerror(errno));
    return 1;
  }

  t0 = now_s();
  for (size_t sub = 0; sub < n;) {
    r = syscall(SYS_io_submit, ctx, (long)(n - sub), cbp + sub);
    if (r < 0) {
      if (errno == EAGAIN || errno == EINTR)
        continue;
      fprintf(stderr, "ff-aio-reads: io_submit: %s\n", strerror(errno));
      return 1;
    }
    sub += (size_t)r;
  }
  t_sub = now_s();
  while (done < n) {
    r = syscall(SYS_io_getevents, ctx, 1L, (long)(n - done), evs, NULL);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      fprintf(stderr, "ff-aio-reads: io_getevents: %s\n", strerror(errno));
      return 1;
    }
    t_end = now_s();
    for (long k = 0; k < r; k++) {
      t[evs[k].data].res = evs[k].res;
      lat[done + (size_t)k] = t_end - t0;
    }
    done += (size_t)r;
  }
  t_end = now_s();
  syscall(SYS_io_destroy, ctx);

  for (size_t i = 0; i < n; i++) {
    const char *why = NULL;

    if (t[i].res != (int64_t)size)
      why = t[i].res < 0 ? strerror((int)-t[i].res) : "short read";
    else if (t[i].ref && !matches(t[i].ref, bufs + i * size, size, off))
      why = "differs from the reference";
    if (why && errors++ < MAX_REPORT)
      fprintf(stderr, "ff-aio-reads: %s: %s\n", t[i].path, why);
    close(t[i].fd);
    free(t[i].path);
    free(t[i].ref);
  }
  if (errors > MAX_REPORT)
    fprintf(stderr, "ff-aio-reads: %zu failed reads in all\n", errors);

  qsort(lat, n, sizeof *lat, cmp_double);
  printf("{\"n\": %zu, \"errors\": %zu, \"submit_s\": %.6f, "
         "\"wall_s\": %.6f, \"lat_min_s\": %.6f, \"lat_p50_s\": %.6f, "
         "\"lat_max_s\": %.6f}\n",
         n, errors, t_sub - t0, t_end - t0, lat[0], lat[n / 2], lat[n - 1]);
  free(t);
  free(cbs);
  free(cbp);
  free(evs);
  free(lat);
  free(bufs);
  return errors ? 1 : 0;

oom:
  fprintf(stderr, "ff-aio-reads: out of memory\n");
  return 1;
}
