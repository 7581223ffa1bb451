/* nbd-burst: one read per export, all sent at once, timed from one thread.
 *
 * usage: nbd-burst SOCKET SIZE SPAN EXPORT...
 *
 * Connects one libnbd handle per EXPORT to the NBD server listening on the
 * Unix socket SOCKET, then, from this one thread, sends one read of SIZE
 * bytes on every handle (nbd_aio_pread, back to back) and polls every
 * handle's socket until each has its reply.  The offset of export k's read
 * is drawn from [0, SPAN) SIZE-aligned, seeded by k, so two runs read the
 * same offsets.  Prints one line of JSON, the shape of
 * tests/lib/nbd-timed-reads.py's:
 *   {"span": s, "wall": s, "errors": {export: [errno name...]},
 *    "latencies": {export: [s]}, "reads": [[export, offset, start_ns,
 *    end_ns], ...]}
 * "span" is from the first read sent to the last reply seen, "wall" the
 * same here (no barrier); times are CLOCK_MONOTONIC, the plugin's clock,
 * so a read can be matched with its line of the plugin's trace=.
 *
 * Why not nbd-timed-reads.py: its Python threads leave their barrier and
 * send 0.4-1.2 ms apart (the GIL), and that spread lands in a span meant
 * to show the server's queue; here the sends are microseconds apart
 * (bench/run's rows nbd.queue.d1, nbd.queue.d64; docs/benchmarks.md).
 * Not a test: it measures, it asserts nothing.
 */
#include "bench-clock.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnbd.h>

struct read {
  const char *name;
  struct nbd_handle *h;
  uint64_t off, start, end;
  int err; /* errno of the read, 0 if it succeeded */
  int done;
  char *buf;
};

static int
on_reply(void *opaque, int *error)
{
  struct read *r = opaque;

  r->end = now_ns();
  r->err = *error;
  r->done = 1;
  return 1; /* retire the command */
}

static int
die_nbd(const char *what, const char *name)
{
  fprintf(stderr, "nbd-burst: %s %s: %s\n", what, name, nbd_get_error());
  return 1;
}

static int
parse_size(const char *s, const char *what, uint64_t *out)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull(s, &end, 0);
  if (errno || end == s || *end || v == 0) {
    fprintf(stderr, "nbd-burst: %s: not a positive number of bytes: '%s'\n",
            what, s);
    return -1;
  }
  *out = v;
  return 0;
}

/* the JSON of a read's errno: its name where we know it */
static const char *
errno_name(int e)
{
  switch (e) {
  case EIO:
    return "EIO";
  case ENOSPC:
    return "ENOSPC";
  case EINVAL:
    return "EINVAL";
  case ENOMEM:
    return "ENOMEM";
  case EPERM:
    return "EPERM";
  case ESHUTDOWN:
    return "ESHUTDOWN";
  default:
    return NULL;
  }
}

static void
print_json(const struct read *rd, size_t n)
{
  uint64_t first = UINT64_MAX, last = 0;
  size_t i;

  for (i = 0; i < n; i++) {
    first = rd[i].start < first ? rd[i].start : first;
    last = rd[i].end > last ? rd[i].end : last;
  }
  printf("{\"span\": %.9f, \"wall\": %.9f, \"errors\": {",
         (last - first) / 1e9, (last - first) / 1e9);
  for (i = 0; i < n; i++) {
    const char *en = errno_name(rd[i].err);

    printf("%s\"%s\": [", i ? ", " : "", rd[i].name);
    if (rd[i].err && en)
      printf("\"%s\"", en);
    else if (rd[i].err)
      printf("\"%d\"", rd[i].err);
    printf("]");
  }
  printf("}, \"latencies\": {");
  for (i = 0; i < n; i++)
    printf("%s\"%s\": [%.9f]", i ? ", " : "", rd[i].name,
           (rd[i].end - rd[i].start) / 1e9);
  printf("}, \"reads\": [");
  for (i = 0; i < n; i++)
    printf("%s[\"%s\", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", i ? ", " : "",
           rd[i].name, rd[i].off, rd[i].start, rd[i].end);
  printf("]}\n");
}

int
main(int argc, char **argv)
{
  uint64_t size, span;
  struct read *rd;
  struct pollfd *pfd;
  size_t n, i, left;
  int rc = 1;

  if (argc < 5) {
    fprintf(stderr, "usage: nbd-burst SOCKET SIZE SPAN EXPORT...\n");
    return 2;
  }
  if (parse_size(argv[2], "SIZE", &size) || parse_size(argv[3], "SPAN", &span))
    return 2;
  if (span < size) {
    fprintf(stderr,
            "nbd-burst: SPAN (%" PRIu64 ") is less than SIZE (%" PRIu64 ")\n",
            span, size);
    return 2;
  }
  n = (size_t)argc - 4;
  rd = calloc(n, sizeof *rd);
  pfd = calloc(n, sizeof *pfd);
  if (!rd || !pfd) {
    fprintf(stderr, "nbd-burst: out of memory\n");
    return 1;
  }
  for (i = 0; i < n; i++) {
    struct read *r = &rd[i];

    r->name = argv[4 + i];
    /* the name goes into JSON as it is: refuse what would need escaping */
    if (strpbrk(r->name, "\"\\") || !*r->name) {
      fprintf(stderr, "nbd-burst: export name '%s': empty or has \" or \\\n",
              r->name);
      goto out;
    }
    srandom((unsigned)i + 1);
    r->off = ((uint64_t)random() % (span / size)) * size;
    r->buf = malloc(size);
    r->h = nbd_create();
    if (!r->buf || !r->h) {
      fprintf(stderr, "nbd-burst: out of memory\n");
      goto out;
    }
    if (nbd_set_export_name(r->h, r->name) == -1) {
      rc = die_nbd("export", r->name);
      goto out;
    }
    if (nbd_connect_unix(r->h, argv[1]) == -1) {
      rc = die_nbd("connect to", r->name);
      goto out;
    }
  }

  /* the burst: every read sent before any reply is looked at */
  for (i = 0; i < n; i++) {
    struct read *r = &rd[i];
    nbd_completion_callback cb = {.callback = on_reply, .user_data = r};

    r->start = now_ns();
    if (nbd_aio_pread(r->h, r->buf, size, r->off, cb, 0) == -1) {
      rc = die_nbd("read of", r->name);
      goto out;
    }
  }
  for (left = n; left;) {
    for (i = 0; i < n; i++) {
      unsigned dir = rd[i].done ? 0 : nbd_aio_get_direction(rd[i].h);

      pfd[i].fd = rd[i].done ? -1 : nbd_aio_get_fd(rd[i].h);
      pfd[i].events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
                      (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);
      pfd[i].revents = 0;
    }
    if (poll(pfd, n, -1) == -1) {
      if (errno == EINTR)
        continue;
      perror("nbd-burst: poll");
      goto out;
    }
    for (i = 0; i < n; i++) {
      struct read *r = &rd[i];

      if (r->done || !pfd[i].revents)
        continue;
      if (((pfd[i].revents & POLLIN) && nbd_aio_notify_read(r->h) == -1) ||
          ((pfd[i].revents & POLLOUT) && nbd_aio_notify_write(r->h) == -1)) {
        rc = die_nbd("reply for", r->name);
        goto out;
      }
      if (pfd[i].revents & (POLLHUP | POLLERR) && !r->done &&
          !(pfd[i].revents & POLLIN)) {
        fprintf(stderr, "nbd-burst: %s: connection closed before the reply\n",
                r->name);
        goto out;
      }
      left -= r->done;
    }
  }
  print_json(rd, n);
  rc = 0;
out:
  for (i = 0; i < n; i++) {
    if (rd[i].h && rc == 0)
      nbd_shutdown(rd[i].h, 0);
    nbd_close(rd[i].h);
    free(rd[i].buf);
  }
  free(rd);
  free(pfd);
  return rc;
}
