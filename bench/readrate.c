/* readrate: throughput and per-read latency of O_DIRECT reads.
 *
 * usage: readrate [-b BS] [-s SPAN] [-n READS] [-t THREADS] [-r] [-l LOG]
 *                 FILE...
 *        readrate -B [-b BS] FILE...
 *
 * Opens every FILE (a block device or a regular file) with O_DIRECT and
 * reads it with pread(2), BS bytes at a time (default 4 KiB):
 *   - sequential (default): every FILE from offset 0 to SPAN (default
 *     64 MiB, or the file's size if smaller);
 *   - random (-r): READS reads (default 1000) per FILE at BS-aligned
 *     offsets drawn uniformly from [0, SPAN), seeded by the file's index
 *     so that two runs read the same offsets.
 * The files are dealt out to THREADS threads (default 1) round robin; each
 * thread reads its files one after the other, one read at a time.  Prints
 * one line of JSON: bytes and reads done, wall seconds, MiB/s, reads/s and
 * the per-read latency (mean, p50, p90, p99, max, in ns) measured around
 * each pread.  With -l LOG, also one line per read in LOG: "PATH OFFSET
 * START_NS END_NS" (CLOCK_MONOTONIC around the pread, the clock of the
 * farm's --trace, so a read can be matched with the daemon's line:
 * bench/latency-breakdown.sh).
 *
 * -B (burst): one read of BS bytes at offset 0 of every FILE, all sent in
 * one io_submit(2) (Linux AIO; O_DIRECT reads of a block device do not
 * block in it) and reaped as they complete.  Prints one line of JSON:
 * {"mode": "burst", "span": seconds from the submission to the last
 * completion, "reads": [[PATH, 0, START_NS, END_NS], ...]} (START_NS the
 * submission, END_NS when io_getevents returned the read), the shape of
 * tests/lib/timed-reads.py --parallel, whose threads leave their barrier
 * milliseconds apart: here the reads reach the kernel together.
 *
 * Used by bench/lib.sh to read the same bytes through a farm loop device
 * and through a loop device over a sparse image file on tmpfs.  Not a
 * test: it measures, it asserts nothing.
 *
 * Thread model: main opens the files and starts the workers; each worker
 * writes only its own struct worker (buffer, latency array, counters);
 * main reads them after pthread_join.  No locks.
 */
#include "bench-clock.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <sys/syscall.h>

struct file {
  const char *path;
  int fd;
  uint64_t size; /* bytes that may be read: min(SPAN, file size) */
};

struct worker {
  pthread_t tid;
  unsigned index;
  uint64_t *lat; /* ns per read, nreads of them */
  size_t nreads, cap;
  struct logged { /* with -l: each read, in order */
    unsigned file;
    uint64_t off, start, end;
  } * log;
  uint64_t bytes;
  int err; /* errno of the first failed read, 0 if none */
  const char *err_path;
};

static struct file *files;
static unsigned nfiles, nthreads = 1;
static uint64_t bs = 4096, span = 64u << 20;
static long per_file = 1000;
static int random_mode;
static const char *log_path;

/* splitmix64: a seeded, reproducible offset stream per file. */
static uint64_t
mix(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static int
record(struct worker *w, unsigned file, uint64_t off, uint64_t t0, uint64_t t1)
{
  if (w->nreads == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 4096;
    uint64_t *p = realloc(w->lat, cap * sizeof *p);

    if (!p)
      return -1;
    w->lat = p;
    if (log_path) {
      struct logged *l = realloc(w->log, cap * sizeof *l);

      if (!l)
        return -1;
      w->log = l;
    }
    w->cap = cap;
  }
  if (log_path)
    w->log[w->nreads] = (struct logged){file, off, t0, t1};
  w->lat[w->nreads++] = t1 - t0;
  return 0;
}

static void *
work(void *arg)
{
  struct worker *w = arg;
  void *buf;

  if (posix_memalign(&buf, 4096, bs)) {
    w->err = ENOMEM;
    return NULL;
  }
  for (unsigned f = w->index; f < nfiles && !w->err; f += nthreads) {
    const struct file *fl = &files[f];
    uint64_t blocks = fl->size / bs, seed = f, n;

    n = random_mode ? (uint64_t)per_file : blocks;
    for (uint64_t k = 0; k < n; k++) {
      uint64_t off = (random_mode ? mix(&seed) % blocks : k) * bs, t0;
      ssize_t got;

      t0 = now_ns();
      got = pread(fl->fd, buf, bs, (off_t)off);
      if (got != (ssize_t)bs || record(w, f, off, t0, now_ns()) < 0) {
        w->err = got < 0 ? errno : got == (ssize_t)bs ? ENOMEM : EIO;
        w->err_path = fl->path;
        break;
      }
      w->bytes += bs;
    }
  }
  free(buf);
  return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

  return x < y ? -1 : x > y;
}

/* parse "4096", "4K", "1M", "64M", "1G" */
static int
parse_size(const char *s, uint64_t *out)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno || end == s)
    return -1;
  switch (*end) {
  case 'k':
  case 'K':
    v <<= 10;
    end++;
    break;
  case 'm':
  case 'M':
    v <<= 20;
    end++;
    break;
  case 'g':
  case 'G':
    v <<= 30;
    end++;
    break;
  default:
    break;
  }
  if (*end || !v)
    return -1;
  *out = v;
  return 0;
}

static void
usage(void)
{
  fprintf(stderr, "usage: readrate [-b BS] [-s SPAN] [-n READS] "
                  "[-t THREADS] [-r] [-l LOG] FILE...\n"
                  "       readrate -B [-b BS] FILE...\n");
  exit(2);
}

/* -B: one read of bs at offset 0 of every file, submitted at once.  0 or
 * -1 (said why). */
static int
burst(void)
{
  aio_context_t ctx = 0;
  struct iocb *cbs = calloc(nfiles, sizeof *cbs);
  struct iocb **list = calloc(nfiles, sizeof *list);
  struct io_event *ev = calloc(nfiles, sizeof *ev);
  uint64_t *end = calloc(nfiles, sizeof *end), start, last = 0;
  char *bufs = NULL;
  unsigned done = 0;
  int rc = -1;

  if (!cbs || !list || !ev || !end ||
      posix_memalign((void **)&bufs, 4096, (size_t)nfiles * bs)) {
    fprintf(stderr, "readrate: out of memory\n");
    goto out;
  }
  if (syscall(SYS_io_setup, nfiles, &ctx) < 0) {
    fprintf(stderr, "readrate: io_setup(%u): %s\n", nfiles, strerror(errno));
    goto out;
  }
  for (unsigned f = 0; f < nfiles; f++) {
    cbs[f].aio_data = f;
    cbs[f].aio_lio_opcode = IOCB_CMD_PREAD;
    cbs[f].aio_fildes = (uint32_t)files[f].fd;
    cbs[f].aio_buf = (uint64_t)(uintptr_t)(bufs + (size_t)f * bs);
    cbs[f].aio_nbytes = bs;
    list[f] = &cbs[f];
  }
  start = now_ns();
  if (syscall(SYS_io_submit, ctx, (long)nfiles, list) != (long)nfiles) {
    fprintf(stderr, "readrate: io_submit of %u reads: %s\n", nfiles,
            strerror(errno));
    goto out_ctx;
  }
  while (done < nfiles) {
    long n =
      syscall(SYS_io_getevents, ctx, 1L, (long)(nfiles - done), ev, NULL);
    uint64_t t = now_ns();

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      fprintf(stderr, "readrate: io_getevents: %s\n", strerror(errno));
      goto out_ctx;
    }
    for (long i = 0; i < n; i++) {
      unsigned f = (unsigned)ev[i].data;

      if (ev[i].res != (int64_t)bs) {
        fprintf(stderr, "readrate: read %s: %s\n", files[f].path,
                ev[i].res < 0 ? strerror((int)-ev[i].res) : "short read");
        goto out_ctx;
      }
      end[f] = t;
      last = t > last ? t : last;
    }
    done += (unsigned)n;
  }
  printf("{\"mode\": \"burst\", \"span\": %.9f, \"reads\": [",
         (double)(last - start) / 1e9);
  for (unsigned f = 0; f < nfiles; f++)
    printf("%s[\"%s\", 0, %llu, %llu]", f ? ", " : "", files[f].path,
           (unsigned long long)start, (unsigned long long)end[f]);
  printf("]}\n");
  rc = 0;
out_ctx:
  syscall(SYS_io_destroy, ctx);
out:
  free(cbs);
  free(list);
  free(ev);
  free(end);
  free(bufs);
  return rc;
}

int
main(int argc, char **argv)
{
  struct worker *ws = NULL;
  uint64_t t0, wall, bytes = 0, *all = NULL, sum = 0;
  size_t nall = 0;
  unsigned started = 0;
  int c, rc = 1, burst_mode = 0;

  while ((c = getopt(argc, argv, "b:s:n:t:rl:B")) != -1) {
    switch (c) {
    case 'B':
      burst_mode = 1;
      break;
    case 'b':
      if (parse_size(optarg, &bs) || bs % 512)
        usage();
      break;
    case 's':
      if (parse_size(optarg, &span))
        usage();
      break;
    case 'n':
      per_file = strtol(optarg, NULL, 10);
      if (per_file <= 0)
        usage();
      break;
    case 't':
      nthreads = (unsigned)strtoul(optarg, NULL, 10);
      if (!nthreads || nthreads > 4096)
        usage();
      break;
    case 'r':
      random_mode = 1;
      break;
    case 'l':
      log_path = optarg;
      break;
    default:
      usage();
    }
  }
  if (optind >= argc)
    usage();
  nfiles = (unsigned)(argc - optind);
  files = calloc(nfiles, sizeof *files);
  ws = calloc(nthreads, sizeof *ws);
  if (!files || !ws) {
    fprintf(stderr, "readrate: out of memory\n");
    goto out;
  }
  for (unsigned f = 0; f < nfiles; f++)
    files[f].fd = -1;
  for (unsigned f = 0; f < nfiles; f++) {
    struct file *fl = &files[f];
    struct stat st;
    uint64_t size = 0;

    fl->path = argv[optind + f];
    fl->fd = open(fl->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fl->fd < 0 || fstat(fl->fd, &st) < 0) {
      fprintf(stderr, "readrate: open %s: %s\n", fl->path, strerror(errno));
      goto out;
    }
    if (S_ISBLK(st.st_mode)) {
      if (ioctl(fl->fd, BLKGETSIZE64, &size) < 0) {
        fprintf(stderr, "readrate: %s: BLKGETSIZE64: %s\n", fl->path,
                strerror(errno));
        goto out;
      }
    } else {
      size = (uint64_t)st.st_size;
    }
    fl->size = size < span ? size : span;
    if (fl->size < bs) {
      fprintf(stderr, "readrate: %s: smaller than one read of %llu bytes\n",
              fl->path, (unsigned long long)bs);
      goto out;
    }
  }
  if (burst_mode) {
    rc = burst() < 0 ? 1 : 0;
    goto out;
  }
  if (nthreads > nfiles)
    nthreads = nfiles;

  t0 = now_ns();
  for (; started < nthreads; started++) {
    ws[started].index = started;
    if (pthread_create(&ws[started].tid, NULL, work, &ws[started])) {
      fprintf(stderr, "readrate: pthread_create failed\n");
      break;
    }
  }
  for (unsigned i = 0; i < started; i++)
    pthread_join(ws[i].tid, NULL);
  wall = now_ns() - t0;
  if (started < nthreads)
    goto out;

  for (unsigned i = 0; i < nthreads; i++) {
    if (ws[i].err) {
      fprintf(stderr, "readrate: read %s: %s\n",
              ws[i].err_path ? ws[i].err_path : "(buffer)",
              strerror(ws[i].err));
      goto out;
    }
    nall += ws[i].nreads;
    bytes += ws[i].bytes;
  }
  if (log_path) {
    FILE *lf = fopen(log_path, "w");

    for (unsigned i = 0; lf && i < nthreads; i++)
      for (size_t k = 0; k < ws[i].nreads; k++)
        fprintf(lf, "%s %llu %llu %llu\n", files[ws[i].log[k].file].path,
                (unsigned long long)ws[i].log[k].off,
                (unsigned long long)ws[i].log[k].start,
                (unsigned long long)ws[i].log[k].end);
    if (!lf || fclose(lf) != 0) {
      fprintf(stderr, "readrate: -l %s: %s\n", log_path, strerror(errno));
      goto out;
    }
  }
  all = malloc((nall ? nall : 1) * sizeof *all);
  if (!all) {
    fprintf(stderr, "readrate: out of memory\n");
    goto out;
  }
  nall = 0;
  for (unsigned i = 0; i < nthreads; i++) {
    memcpy(all + nall, ws[i].lat, ws[i].nreads * sizeof *all);
    nall += ws[i].nreads;
  }
  qsort(all, nall, sizeof *all, cmp_u64);
  for (size_t i = 0; i < nall; i++)
    sum += all[i];
#define PCT(p) (nall ? all[(size_t)((double)(nall - 1) * (p))] : 0)
  printf(
    "{\"files\": %u, \"threads\": %u, \"bs\": %llu, \"mode\": \"%s\", "
    "\"reads\": %zu, \"bytes\": %llu, \"seconds\": %.6f, "
    "\"mib_s\": %.2f, \"iops\": %.1f, \"lat_ns\": {\"mean\": %llu, "
    "\"p50\": %llu, \"p90\": %llu, \"p99\": %llu, \"max\": %llu}}\n",
    nfiles, nthreads, (unsigned long long)bs,
    random_mode ? "random" : "sequential", nall, (unsigned long long)bytes,
    (double)wall / 1e9, (double)bytes / (1 << 20) / ((double)wall / 1e9),
    (double)nall / ((double)wall / 1e9),
    (unsigned long long)(nall ? sum / nall : 0), (unsigned long long)PCT(0.5),
    (unsigned long long)PCT(0.9), (unsigned long long)PCT(0.99),
    (unsigned long long)(nall ? all[nall - 1] : 0));
#undef PCT
  rc = 0;
out:
  free(all);
  if (ws)
    for (unsigned i = 0; i < nthreads; i++) {
      free(ws[i].lat);
      free(ws[i].log);
    }
  free(ws);
  if (files)
    for (unsigned f = 0; f < nfiles; f++)
      if (files[f].fd >= 0)
        close(files[f].fd);
  free(files);
  return rc;
}
