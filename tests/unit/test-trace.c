/* The request trace of the engine (ff-server.h, docs/stats.md): one line
 * per ended request with the fields the requests carried, in end order,
 * sequence numbers in begin order; lines from many threads never
 * interleave; a path that cannot be written is refused at ff_server_new
 * (FF_SERVER_BAD_TRACE, the path named); a write that fails later stops
 * the trace and ff_server_trace_check says so.  Times are synthetic
 * (now_ns passed in): nothing here sleeps. */
#include "ff-server.h"
#include "ff-test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define MS  1000000ull
#define SEC 1000000000ull
#define T0  (1000 * SEC)

static char tmpdir[4096];

static const char spec_text[] =
  "seed = 7; device_size = \"64M\"; blanks = ({ count = 4; });\n";

/* One queue of depth 1, 20 ms a request; the first MiB of pv0003 fails. */
static const char queue_text[] =
  "name = \"queue\";\n"
  "queue = { depth = 1; service = \"20ms\"; };\n"
  "groups = ({ devices = \"all\"; },\n"
  "          { devices = \"pv0003\";\n"
  "            faults = { eio_ranges = ( [\"0\", \"1M\"] ); }; });\n";

struct line {
  unsigned long long seq, off, len, arrival, done, end;
  unsigned dev;
  char name[64], kind[16];
  int error, injected;
};

static char *
tmp_file(const char *name, const char *text)
{
  char *p;
  FILE *f;

  if (asprintf(&p, "%s/%s", tmpdir, name) < 0)
    fail_msg("asprintf: %m");
  if (text) {
    f = fopen(p, "w");
    if (!f || fputs(text, f) == EOF || fclose(f) != 0)
      fail_msg("write %s: %m", p);
  }
  return p;
}

static struct ff_server *
server(const char *profile_text, const char *trace)
{
  char *spec = tmp_file("spec.conf", spec_text);
  char *prof = profile_text ? tmp_file("p.conf", profile_text) : NULL;
  struct ff_server_options o = {
    .spec = spec, .profile = prof, .stats = 1, .trace = trace};
  enum ff_server_fault f;
  struct ff_server *s = ff_server_new(&o, &f);

  assert_nonnull_err(s);
  assert_int_equal(f, FF_SERVER_OK);
  assert_ok(ff_server_start(s, T0));
  free(spec);
  free(prof);
  return s;
}

/* The trace's lines after its header; *n of them. */
static struct line *
read_trace(const char *path, size_t *n)
{
  FILE *f = fopen(path, "r");
  char buf[1024];
  struct line *v = NULL;
  size_t cap = 0;

  *n = 0;
  if (!f)
    fail_msg("open %s: %m", path);
  if (!fgets(buf, sizeof buf, f) ||
      strncmp(buf, "# fusefarm trace v1: seq dev name kind", 38) != 0)
    fail_msg("%s: no header line", path);
  while (fgets(buf, sizeof buf, f)) {
    struct line *l;
    int k;

    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      v = realloc(v, cap * sizeof *v);
      assert_non_null(v);
    }
    l = &v[(*n)++];
    k = sscanf(buf, "%llu %u %63s %15s %llu %llu %llu %llu %llu %d %d",
               &l->seq, &l->dev, l->name, l->kind, &l->off, &l->len,
               &l->arrival, &l->done, &l->end, &l->error, &l->injected);
    if (k != 11 || buf[strlen(buf) - 1] != '\n')
      fail_msg("%s: line %zu is not 11 fields: %s", path, *n + 1, buf);
  }
  fclose(f);
  return v;
}

static void
begin(struct ff_server *s, struct ff_request *r, uint32_t dev,
      enum ff_req_kind kind, uint64_t off, uint64_t len, uint64_t now)
{
  *r = (struct ff_request){.dev = dev, .kind = kind, .off = off, .len = len};
  ff_server_begin(s, r, now);
}

static void
test_lines_are_the_requests(void **state)
{
  char *path = tmp_file("trace", NULL);
  struct ff_server *s = server(queue_text, path);
  struct ff_request r[5];
  static const int end_order[] = {2, 0, 4, 1, 3};
  struct line *l;
  size_t n;
  char buf[4096];

  (void)state;
  /* Three reads at once through the depth-1 queue: served one at a
   * time, 20 ms each. */
  begin(s, &r[0], 0, FF_REQ_READ, 4096, 4096, T0);
  begin(s, &r[1], 1, FF_REQ_READ, 8192, 512, T0);
  begin(s, &r[2], 2, FF_REQ_ZERO, 0, 4096, T0 + 1 * MS);
  assert_int_equal(r[0].done_ns, T0 + 20 * MS);
  assert_int_equal(r[1].done_ns, T0 + 40 * MS);
  assert_int_equal(r[2].done_ns, T0 + 60 * MS);
  /* A fault the profile injects, and a request the engine refuses. */
  begin(s, &r[3], 3, FF_REQ_READ, 0, 4096, T0 + 2 * MS);
  assert_int_equal(r[3].error, EIO);
  begin(s, &r[4], 99, FF_REQ_READ, 0, 4096, T0 + 3 * MS);
  assert_int_equal(r[4].error, EINVAL);
  for (int i = 0; i < 5; i++) {
    int k = end_order[i];

    if (r[k].kind == FF_REQ_READ)
      ff_server_complete(s, &r[k], buf);
    ff_server_end(s, &r[k], r[k].done_ns + 1000 + (uint64_t)i);
  }
  l = read_trace(path, &n);
  assert_int_equal(n, 5);
  for (int i = 0; i < 5; i++) {
    const struct ff_request *q = &r[end_order[i]];

    assert_int_equal(l[i].seq, (unsigned long long)end_order[i]);
    assert_int_equal(l[i].seq, q->seq);
    assert_int_equal(l[i].dev, q->dev);
    assert_string_equal(l[i].kind, ff_req_kind_name(q->kind));
    assert_int_equal(l[i].off, q->off);
    assert_int_equal(l[i].len, q->len);
    assert_int_equal(l[i].arrival, q->arrival_ns);
    assert_int_equal(l[i].done, q->done_ns);
    assert_int_equal(l[i].end, q->done_ns + 1000 + (uint64_t)i);
    assert_int_equal(l[i].error, q->error);
  }
  assert_string_equal(l[1].name, "pv0000");
  assert_string_equal(l[0].name, "pv0002");
  assert_int_equal(l[4].injected, 1);  /* pv0003's eio range */
  assert_string_equal(l[2].name, "-"); /* no device 99 */
  assert_int_equal(l[2].injected, 0);
  assert_ok(ff_server_trace_check(s));
  ff_server_free(s);
  free(l);
  free(path);
}

#define THREADS 4
#define PER     500

struct worker {
  struct ff_server *s;
  int k;
};

static void *
work(void *arg)
{
  struct worker *w = arg;

  for (int i = 0; i < PER; i++) {
    struct ff_request r = {
      .dev = (uint32_t)(w->k % 4), .kind = FF_REQ_FLUSH, .off = (uint64_t)i};
    uint64_t now = T0 + (uint64_t)i * MS;

    ff_server_begin(w->s, &r, now);
    ff_server_end(w->s, &r, r.done_ns);
  }
  return NULL;
}

/* Lines written by many threads at once are whole, and every request has
 * one with its own sequence number. */
static void
test_threads(void **state)
{
  char *path = tmp_file("trace-mt", NULL);
  struct ff_server *s = server(NULL, path);
  struct worker w[THREADS];
  pthread_t t[THREADS];
  static unsigned char seen[THREADS * PER];
  struct line *l;
  size_t n;

  (void)state;
  for (int k = 0; k < THREADS; k++) {
    w[k] = (struct worker){.s = s, .k = k};
    assert_int_equal(pthread_create(&t[k], NULL, work, &w[k]), 0);
  }
  for (int k = 0; k < THREADS; k++)
    pthread_join(t[k], NULL);
  l = read_trace(path, &n);
  assert_int_equal(n, THREADS * PER);
  for (size_t i = 0; i < n; i++) {
    assert_true(l[i].seq < THREADS * PER);
    assert_int_equal(seen[l[i].seq], 0);
    seen[l[i].seq] = 1;
    assert_string_equal(l[i].kind, "flush");
  }
  ff_server_free(s);
  free(l);
  free(path);
}

static void
test_bad_path(void **state)
{
  char *spec = tmp_file("spec.conf", spec_text);
  char *nodir = tmp_file("nodir/trace", NULL);
  const char *bad[] = {nodir, tmpdir, "/dev/full"};

  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct ff_server_options o = {.spec = spec, .stats = 1, .trace = bad[i]};
    enum ff_server_fault f = FF_SERVER_OK;

    if (i == 2 && access("/dev/full", W_OK) < 0)
      continue; /* no /dev/full in this sandbox */
    assert_null(ff_server_new(&o, &f));
    assert_int_equal(f, FF_SERVER_BAD_TRACE);
    if (!strstr(ff_errmsg(), bad[i]))
      fail_msg("message '%s' does not name %s", ff_errmsg(), bad[i]);
  }
  free(spec);
  free(nodir);
}

/* A write that fails (here: the file size limit) stops the trace; the
 * check names the file, the reason and how many requests were lost. */
static void
test_write_failure(void **state)
{
  char *path = tmp_file("trace-full", NULL);
  struct ff_server *s = server(NULL, path);
  struct rlimit old, small;
  struct ff_request r;
  struct line *l;
  size_t n;

  (void)state;
  assert_ok(ff_server_trace_check(s));
  begin(s, &r, 0, FF_REQ_FLUSH, 0, 0, T0);
  ff_server_end(s, &r, T0);
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = 200; /* the header and one line fit, not two */
  signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
  for (int i = 0; i < 3; i++) {
    begin(s, &r, 1, FF_REQ_FLUSH, 0, 0, T0);
    ff_server_end(s, &r, T0);
  }
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, SIG_DFL);
  assert_int_equal(ff_server_trace_check(s), -1);
  if (!strstr(ff_errmsg(), path) || !strstr(ff_errmsg(), "File too large") ||
      !strstr(ff_errmsg(), "(3 requests not traced)"))
    fail_msg("unexpected message: %s", ff_errmsg());
  ff_server_free(s);
  l = read_trace(path, &n); /* cut back to the whole lines */
  assert_int_equal(n, 1);
  assert_int_equal(l[0].dev, 0);
  free(l);
  free(path);
}

static int
setup(void **state)
{
  (void)state;
  return ff_test_mkscratch(tmpdir, sizeof tmpdir, "trace");
}

static int
teardown(void **state)
{
  (void)state;
  return ff_test_rmtree(tmpdir);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lines_are_the_requests),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_bad_path),
    cmocka_unit_test(test_write_failure),
  };

  return cmocka_run_group_tests(tests, setup, teardown);
}
