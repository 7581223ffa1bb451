/* The request engine (ff-server.h): a write the model fails does not
 * land; zero and trim (what FUSE fallocate and NBD zero/trim become) go
 * through the model and the stats; a read after an acknowledged write
 * sees it; in-flight counts; the done times the engine decides are the
 * model's for a seeded profile; bad inputs name what was wrong.  Times
 * are synthetic (now_ns passed in): nothing here sleeps. */
#include "ff-farm.h"
#include "ff-iomodel.h"
#include "ff-server.h"
#include "ff-test.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MS  1000000ull
#define SEC 1000000000ull
#define T0  (1000 * SEC)

static char tmpdir[4096];

static const char spec_text[] =
  "seed = 7; device_size = \"64M\"; blanks = ({ count = 4; });\n";

/* Writes, zeroes and trims take 5 ms; reads 2 ms; the first MiB of every
 * device fails with EIO. */
static const char faulty_text[] =
  "name = \"faulty\";\n"
  "groups = ({ devices = \"all\";\n"
  "  read = { dist = \"fixed\"; value = \"2ms\"; };\n"
  "  write = { dist = \"fixed\"; value = \"5ms\"; };\n"
  "  flush = { dist = \"fixed\"; value = \"1ms\"; };\n"
  "  faults = { eio_ranges = ( [\"0\", \"1M\"] ); };\n"
  "});\n";

/* Random latencies, a shared queue and a bandwidth cap: decisions depend
 * on the order and length of every request. */
static const char seeded_text[] =
  "name = \"seeded\"; seed = 42;\n"
  "queue = { depth = 2; service = \"0.3ms\"; };\n"
  "groups = ({ devices = \"all\";\n"
  "  read = { dist = \"lognormal\"; median = \"3ms\"; p99 = \"30ms\"; };\n"
  "  write = { dist = \"uniform\"; min = \"1ms\"; max = \"9ms\"; };\n"
  "  flush = { dist = \"normal\"; mean = \"2ms\"; stddev = \"1ms\"; };\n"
  "  bandwidth = \"100M\";\n"
  "  faults = { eio_rate = 0.05; };\n"
  "});\n";

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
server(const char *profile_text, int stats)
{
  char *spec = tmp_file("spec.conf", spec_text);
  char *prof = profile_text ? tmp_file("p.conf", profile_text) : NULL;
  struct ff_server_options o = {.spec = spec, .profile = prof, .stats = stats};
  enum ff_server_fault f;
  struct ff_server *s = ff_server_new(&o, &f);

  assert_nonnull_err(s);
  assert_int_equal(f, FF_SERVER_OK);
  assert_ok(ff_server_start(s, T0));
  free(spec);
  free(prof);
  return s;
}

/* One request through begin, complete and end at the model's time. */
static struct ff_request
run(struct ff_server *s, enum ff_req_kind kind, uint32_t dev, uint64_t off,
    uint64_t len, const void *wbuf, void *rbuf, uint64_t now)
{
  struct ff_request r = {
    .dev = dev, .kind = kind, .off = off, .len = len, .wbuf = wbuf};

  assert_ok(ff_server_begin(s, &r, now));
  assert_true(r.done_ns >= now);
  assert_int_equal(ff_server_complete(s, &r, rbuf), 0);
  ff_server_end(s, &r, r.done_ns);
  return r;
}

static json_t *
stats(struct ff_server *s)
{
  char *text = ff_server_stats_json(s, 1, 0, NULL, NULL);
  json_t *j;

  assert_nonnull_err(text);
  j = json_loads(text, 0, NULL);
  assert_non_null(j);
  free(text);
  return j;
}

static json_int_t
total(json_t *j, const char *key)
{
  json_t *v = json_object_get(json_object_get(j, "totals"), key);

  if (!json_is_integer(v))
    fail_msg("stats totals.%s missing", key);
  return json_integer_value(v);
}

static json_int_t
top(json_t *j, const char *key)
{
  json_t *v = json_object_get(j, key);

  if (!json_is_integer(v))
    fail_msg("stats %s missing", key);
  return json_integer_value(v);
}

static int
all_bytes(const uint8_t *b, size_t n, uint8_t v)
{
  for (size_t i = 0; i < n; i++)
    if (b[i] != v)
      return 0;
  return 1;
}

/* ---- faults ---------------------------------------------------------------
 */

static void
test_failed_write_does_not_land(void **state)
{
  struct ff_server *s = server(faulty_text, 1);
  const struct ff_farm *farm = ff_server_farm(s);
  uint8_t w[4096], r[4096];
  struct ff_request q;
  json_t *j;

  (void)state;
  memset(w, 0xab, sizeof w);
  /* In the eio range: failed by the model, as injected, after its time. */
  q = run(s, FF_REQ_WRITE, 1, 4096, sizeof w, w, NULL, T0);
  assert_int_equal(q.error, EIO);
  assert_int_equal(q.injected, 1);
  assert_int_equal(q.done_ns, T0 + 5 * MS);
  assert_ok(ff_farm_read(farm, 1, r, 4096, sizeof r));
  assert_true(all_bytes(r, sizeof r, 0));
  /* Outside it: lands. */
  q = run(s, FF_REQ_WRITE, 1, 2 << 20, sizeof w, w, NULL, T0 + SEC);
  assert_int_equal(q.error, 0);
  assert_ok(ff_farm_read(farm, 1, r, 2 << 20, sizeof r));
  assert_memory_equal(r, w, sizeof w);
  /* A zero the model fails does not zero either. */
  assert_ok(ff_farm_write(ff_server_farm(s), 2, w, 8192, sizeof w));
  q = run(s, FF_REQ_ZERO, 2, 8192, sizeof w, NULL, NULL, T0 + 2 * SEC);
  assert_int_equal(q.error, EIO);
  assert_ok(ff_farm_read(farm, 2, r, 8192, sizeof r));
  assert_memory_equal(r, w, sizeof w);
  /* And a read there fails without bytes. */
  q = run(s, FF_REQ_READ, 2, 8192, sizeof r, NULL, r, T0 + 3 * SEC);
  assert_int_equal(q.error, EIO);
  j = stats(s);
  assert_int_equal(total(j, "writes"), 3);
  assert_int_equal(total(j, "reads"), 1);
  assert_int_equal(total(j, "bytes_written"), 4096);
  assert_int_equal(total(j, "errors"), 3);
  assert_int_equal(total(j, "errors_injected"), 3);
  json_decref(j);
  ff_server_free(s);
}

/* vanish_after: the device's first N requests are answered, the next
 * fail with ENODEV at once, do not land, and count as injected. */
static void
test_vanish_after(void **state)
{
  struct ff_server *s = server("groups = ({ devices = \"pv0001\";\n"
                               "  read = { dist = \"fixed\"; value = \"2ms\"; "
                               "};\n"
                               "  faults = { vanish_after = 2; }; });\n",
                               1);
  uint8_t w[4096], r[4096];
  struct ff_request q;
  json_t *j;

  (void)state;
  memset(w, 0xcd, sizeof w);
  q = run(s, FF_REQ_READ, 1, 0, sizeof r, NULL, r, T0);
  assert_int_equal(q.error, 0);
  assert_int_equal(q.done_ns, T0 + 2 * MS);
  q = run(s, FF_REQ_WRITE, 1, 8192, sizeof w, w, NULL, T0 + SEC);
  assert_int_equal(q.error, 0);
  q = run(s, FF_REQ_WRITE, 1, 16384, sizeof w, w, NULL, T0 + 2 * SEC);
  assert_int_equal(q.error, ENODEV);
  assert_int_equal(q.injected, 1);
  assert_int_equal(q.done_ns, T0 + 2 * SEC);
  q = run(s, FF_REQ_READ, 1, 8192, sizeof r, NULL, r, T0 + 3 * SEC);
  assert_int_equal(q.error, ENODEV);
  assert_ok(ff_farm_read(ff_server_farm(s), 1, r, 8192, sizeof r));
  assert_memory_equal(r, w, sizeof w); /* the second request landed */
  assert_ok(ff_farm_read(ff_server_farm(s), 1, r, 16384, sizeof r));
  assert_true(all_bytes(r, sizeof r, 0)); /* the third did not */
  j = stats(s);
  assert_int_equal(total(j, "reads"), 2);
  assert_int_equal(total(j, "writes"), 2);
  assert_int_equal(total(j, "errors"), 2);
  assert_int_equal(total(j, "errors_injected"), 2);
  json_decref(j);
  ff_server_free(s);
}

/* ---- zero and trim --------------------------------------------------------
 */

static void
test_zero_trim_through_model(void **state)
{
  struct ff_server *s = server(faulty_text, 1);
  const struct ff_farm *farm = ff_server_farm(s);
  uint8_t w[8192], r[8192];
  struct ff_request q;
  json_t *j;

  (void)state;
  memset(w, 0x5a, sizeof w);
  run(s, FF_REQ_WRITE, 0, 4 << 20, sizeof w, w, NULL, T0);
  /* Zero range (FUSE fallocate ZERO_RANGE, NBD zero): a write's time,
   * lands at begin, before its reply. */
  q = (struct ff_request){
    .dev = 0, .kind = FF_REQ_ZERO, .off = 4 << 20, .len = 4096};
  assert_ok(ff_server_begin(s, &q, T0 + SEC));
  assert_int_equal(q.done_ns, T0 + SEC + 5 * MS);
  assert_ok(ff_farm_read(farm, 0, r, 4 << 20, sizeof r));
  assert_true(all_bytes(r, 4096, 0));
  assert_true(all_bytes(r + 4096, 4096, 0x5a));
  assert_ok(ff_server_complete(s, &q, NULL));
  ff_server_end(s, &q, q.done_ns);
  /* Punch hole (a loop discard, NBD trim): a write's time too, but the
   * model sees no length (it transfers nothing), so even a range over the
   * eio MiB succeeds; a whole 64 MiB device is cheap (only where data can
   * be). */
  q = run(s, FF_REQ_TRIM, 0, 0, ff_server_dev_size(s, 0), NULL, NULL,
          T0 + 2 * SEC);
  assert_int_equal(q.error, 0);
  assert_int_equal(q.done_ns, T0 + 2 * SEC + 5 * MS);
  assert_ok(ff_farm_read(farm, 0, r, 4 << 20, sizeof r));
  assert_true(all_bytes(r, sizeof r, 0));
  /* A flush: its own time, no bytes. */
  q = run(s, FF_REQ_FLUSH, 0, 0, 0, NULL, NULL, T0 + 4 * SEC);
  assert_int_equal(q.done_ns, T0 + 4 * SEC + MS);
  j = stats(s);
  /* write, zero and trim are writes; only the write moved bytes. */
  assert_int_equal(total(j, "writes"), 3);
  assert_int_equal(total(j, "bytes_written"), sizeof w);
  assert_int_equal(total(j, "flushes"), 1);
  assert_int_equal(total(j, "errors"), 0);
  json_decref(j);
  ff_server_free(s);
}

/* ---- ordering -------------------------------------------------------------
 */

static void
test_read_sees_acknowledged_write(void **state)
{
  struct ff_server *s = server(NULL, 1);
  uint8_t w[4096], r[4096];
  struct ff_request wr = {
    .dev = 3, .kind = FF_REQ_WRITE, .off = 12345, .len = sizeof w, .wbuf = w};
  struct ff_request rd = {
    .dev = 3, .kind = FF_REQ_READ, .off = 12345, .len = sizeof r};

  (void)state;
  for (size_t i = 0; i < sizeof w; i++)
    w[i] = (uint8_t)(i * 7 + 1);
  assert_ok(ff_server_begin(s, &wr, T0));
  memset(w, 0, sizeof w); /* the engine copied it at begin */
  assert_ok(ff_server_complete(s, &wr, NULL));
  ff_server_end(s, &wr, T0);
  assert_ok(ff_server_begin(s, &rd, T0 + 1));
  assert_ok(ff_server_complete(s, &rd, r));
  ff_server_end(s, &rd, T0 + 1);
  for (size_t i = 0; i < sizeof r; i++)
    if (r[i] != (uint8_t)(i * 7 + 1))
      fail_msg("byte %zu reads %u, the write gave %u", i, r[i],
               (uint8_t)(i * 7 + 1));
  ff_server_free(s);
}

static void
test_inflight(void **state)
{
  struct ff_server *s = server(faulty_text, 1);
  struct ff_request q[3];
  json_t *j;

  (void)state;
  for (int i = 0; i < 3; i++) {
    q[i] = (struct ff_request){
      .dev = (uint32_t)i, .kind = FF_REQ_FLUSH, .off = 0, .len = 0};
    assert_ok(ff_server_begin(s, &q[i], T0));
  }
  j = stats(s);
  assert_int_equal(top(j, "inflight"), 3);
  json_decref(j);
  for (int i = 0; i < 3; i++)
    ff_server_end(s, &q[i], q[i].done_ns);
  j = stats(s);
  assert_int_equal(top(j, "inflight"), 0);
  assert_int_equal(top(j, "inflight_max"), 3);
  assert_int_equal(total(j, "flushes"), 3);
  json_decref(j);
  /* Out of range: our error, not the model's; still counted. */
  q[0] = (struct ff_request){
    .dev = 0, .kind = FF_REQ_READ, .off = 64 << 20, .len = 1};
  assert_int_equal(ff_server_begin(s, &q[0], T0), -1);
  assert_int_equal(q[0].error, EINVAL);
  assert_non_null(strstr(ff_errmsg(), "past the end"));
  ff_server_end(s, &q[0], T0);
  j = stats(s);
  assert_int_equal(top(j, "inflight"), 0);
  assert_int_equal(total(j, "errors"), 1);
  assert_int_equal(total(j, "errors_injected"), 0);
  json_decref(j);
  ff_server_free(s);
}

/* ---- the lifecycle in one call (ff_server_finish, ff_server_run) --------
 */

struct lifecycle {
  struct ff_server *s;
  int replies, waits;
  json_int_t inflight_at_reply;
  uint64_t waited_for;
  int wait_answer; /* what the fake wait returns: 0 or an errno */
  uint8_t got[4096];
};

static void
reply_cb(const struct ff_request *r, const void *buf, void *arg)
{
  struct lifecycle *lc = arg;
  json_t *j = stats(lc->s);

  lc->replies++;
  lc->inflight_at_reply = top(j, "inflight"); /* the reply comes before end */
  json_decref(j);
  if (buf)
    memcpy(lc->got, buf, r->len < sizeof lc->got ? r->len : sizeof lc->got);
}

static int
fake_wait(uint64_t done_ns, void *arg)
{
  struct lifecycle *lc = arg;

  lc->waits++;
  lc->waited_for = done_ns;
  return lc->wait_answer;
}

static void
test_lifecycle(void **state)
{
  struct ff_server *s = server(faulty_text, 1);
  struct lifecycle lc = {.s = s};
  uint8_t want[4096], rbuf[4096];
  struct ff_request r;
  json_t *j;

  (void)state;
  assert_ok(
    ff_farm_read(ff_server_farm(s), 1, want, 0, sizeof want)); /* label */
  /* finish with a buffer of its own: one reply, with the bytes, before
   * the end (in flight then), and the end after it */
  r = (struct ff_request){
    .dev = 1, .kind = FF_REQ_READ, .off = 0, .len = sizeof want};
  assert_ok(ff_server_begin(s, &r, T0));
  r.error = 0, r.injected = 0; /* the first MiB fails: not this read */
  assert_ok(ff_server_finish(s, &r, NULL, reply_cb, &lc));
  assert_int_equal(lc.replies, 1);
  assert_int_equal(lc.inflight_at_reply, 1);
  assert_memory_equal(lc.got, want, sizeof want);
  j = stats(s);
  assert_int_equal(top(j, "inflight"), 0);
  assert_int_equal(total(j, "reads"), 1);
  json_decref(j);
  /* a write through run: the wait is asked for the model's time (5 ms
   * ahead), the write lands, no error */
  lc.wait_answer = 0;
  r = (struct ff_request){.dev = 2,
                          .kind = FF_REQ_WRITE,
                          .off = 2 << 20,
                          .len = sizeof want,
                          .wbuf = want};
  assert_ok(ff_server_run(s, &r, NULL, fake_wait, &lc));
  assert_int_equal(lc.waits, 1);
  assert_int_equal(lc.waited_for, r.done_ns);
  assert_int_equal(r.error, 0);
  assert_ok(ff_farm_read(ff_server_farm(s), 2, rbuf, 2 << 20, sizeof rbuf));
  assert_memory_equal(rbuf, want, sizeof want);
  /* a read whose requester goes away during the wait: answered with the
   * wait's errno, counted interrupted, no bytes copied */
  lc.wait_answer = ESHUTDOWN;
  memset(rbuf, 0xAA, sizeof rbuf);
  r = (struct ff_request){
    .dev = 2, .kind = FF_REQ_READ, .off = 2 << 20, .len = sizeof rbuf};
  assert_ok(ff_server_run(s, &r, rbuf, fake_wait, &lc));
  assert_int_equal(lc.waits, 2);
  assert_int_equal(r.error, ESHUTDOWN);
  assert_int_equal(r.interrupted, 1);
  assert_true(all_bytes(rbuf, sizeof rbuf, 0xAA));
  j = stats(s);
  assert_int_equal(top(j, "inflight"), 0);
  assert_int_equal(total(j, "interrupted"), 1);
  json_decref(j);
  /* the model's fault (the first MiB): EIO, injected, not interrupted */
  lc.wait_answer = 0;
  r = (struct ff_request){.dev = 3, .kind = FF_REQ_READ, .off = 0, .len = 512};
  assert_ok(ff_server_run(s, &r, rbuf, fake_wait, &lc));
  assert_int_equal(r.error, EIO);
  assert_int_equal(r.injected, 1);
  assert_int_equal(r.interrupted, 0);
  /* our error at begin (past the end): -1 with the message, still ended */
  r = (struct ff_request){
    .dev = 0, .kind = FF_REQ_READ, .off = 64 << 20, .len = 1};
  assert_int_equal(ff_server_run(s, &r, rbuf, fake_wait, &lc), -1);
  assert_int_equal(r.error, EINVAL);
  assert_non_null(strstr(ff_errmsg(), "past the end"));
  j = stats(s);
  assert_int_equal(top(j, "inflight"), 0);
  json_decref(j);
  ff_server_free(s);
}

/* ---- the model's decisions ------------------------------------------------
 */

/* The engine's requests against a model of the same profile run by hand:
 * model_ns is the model's time; done_ns is it less share, never before
 * arrival.  Returns how many requests share brought forward to their
 * arrival (their delay was shorter). */
static unsigned
done_times_against_model(uint64_t share)
{
  struct ff_server *s = server(seeded_text, 1);
  char *prof = tmp_file("p.conf", NULL);
  struct ff_iomodel *m;
  static uint8_t buf[1 << 16];
  int failures = 0;
  unsigned at_arrival = 0;
  json_t *j;

  ff_server_set_transport_share(s, share);
  assert_int_equal(ff_server_transport_share(s), share);
  /* The same profile, in a model of our own on the same farm. */
  m = ff_iomodel_new(ff_server_farm(s),
                     ff_profile_load_file(prof, ff_server_farm(s)), T0);
  assert_nonnull_err(m);
  for (unsigned i = 0; i < 400; i++) {
    static const enum ff_req_kind kinds[] = {
      FF_REQ_READ, FF_REQ_WRITE, FF_REQ_ZERO, FF_REQ_TRIM, FF_REQ_FLUSH};
    enum ff_req_kind k = kinds[i % 5];
    uint32_t dev = (i * 7) % 4;
    uint64_t off = (uint64_t)((i * 37) % 512) << 16;
    uint64_t len = k == FF_REQ_FLUSH ? 0 : (uint64_t)(1 + i % 16) << 12;
    uint64_t now = T0 + (uint64_t)i * 700000;
    struct ff_io_decision d;
    struct ff_request r = {.dev = dev, .kind = k, .off = off, .len = len};

    memset(buf, (int)i, len);
    r.wbuf = buf;
    assert_ok(ff_server_begin(s, &r, now));
    assert_int_equal(r.arrival_ns, now);
    /* What the model does with the request as the engine describes it:
     * zero is a write of len bytes, trim one of 0 bytes (it transfers
     * nothing), flush has no length. */
    ff_iomodel_submit(m, dev,
                      k == FF_REQ_READ    ? FF_OP_READ
                      : k == FF_REQ_FLUSH ? FF_OP_FLUSH
                                          : FF_OP_WRITE,
                      off, k == FF_REQ_TRIM ? 0 : len, now, &d);
    if (r.model_ns != d.done_ns || r.error != d.error ||
        r.injected != (d.error ? d.injected : 0))
      fail_msg("request %u (%s): engine %llu/%d, model %llu/%d", i,
               ff_req_kind_name(k), (unsigned long long)r.model_ns, r.error,
               (unsigned long long)d.done_ns, d.error);
    if (r.done_ns != (d.done_ns - now > share ? d.done_ns - share : now))
      fail_msg("request %u (%s): due at %llu, the model said %llu, arrival "
               "%llu, share %llu",
               i, ff_req_kind_name(k), (unsigned long long)r.done_ns,
               (unsigned long long)d.done_ns, (unsigned long long)now,
               (unsigned long long)share);
    at_arrival += d.done_ns > now && r.done_ns == now;
    failures += r.error != 0;
    assert_ok(ff_server_complete(s, &r, buf));
    ff_server_end(s, &r, r.done_ns);
  }
  /* The profile injects some faults (5%): the comparison saw both. */
  assert_true(failures > 0 && failures < 100);
  /* stats.json says what the replies were brought forward by */
  j = stats(s);
  assert_int_equal(top(j, "transport_share_ns"), share);
  json_decref(j);
  ff_iomodel_free(m);
  free(prof);
  ff_server_free(s);
  return at_arrival;
}

static void
test_done_times_are_the_models(void **state)
{
  (void)state;
  assert_int_equal(done_times_against_model(0), 0);
}

/* With a transport share every delayed reply is due that much sooner and
 * the model's own decisions (its queue, buckets, faults) stay as they
 * were; a delay shorter than the share is answered at arrival. */
static void
test_transport_share(void **state)
{
  unsigned n;

  (void)state;
  n = done_times_against_model(2 * MS);
  /* the seeded profile's flushes (normal, mean 2 ms) and many of its
   * writes (uniform 1-9 ms) take less than 2 ms: some were */
  assert_true(n > 0 && n < 400);
}

/* ---- setup ----------------------------------------------------------------
 */

static void
test_bad_inputs(void **state)
{
  char *spec = tmp_file("spec.conf", spec_text);
  char *bad = tmp_file("bad.conf", "groups = ({ devices = \"nosuch\"; });\n");
  char *missing = tmp_file("missing.conf", NULL);
  char *nodir = tmp_file("nodir/x.ovl", NULL);
  char *garbage = tmp_file("garbage.ovl", "not an overlay\n");
  static const struct {
    int which; /* 0 spec, 1 profile, 2 save-overlay, 3 overlay */
    enum ff_server_fault fault;
    const char *msg;
  } t[] = {
    {0, FF_SERVER_BAD_SPEC, "missing.conf"},
    {1, FF_SERVER_BAD_PROFILE, "nosuch"},
    {2, FF_SERVER_BAD_SAVE_OVERLAY, "nodir/x.ovl"},
    {3, FF_SERVER_BAD_OVERLAY, "garbage.ovl"},
  };

  (void)state;
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    struct ff_server_options o = {.spec = spec, .stats = 1};
    enum ff_server_fault f = FF_SERVER_OK;

    if (t[i].which == 0)
      o.spec = missing;
    else if (t[i].which == 1)
      o.profile = bad;
    else if (t[i].which == 2)
      o.save_overlay = nodir;
    else
      o.overlay = garbage;
    assert_null(ff_server_new(&o, &f));
    assert_int_equal(f, t[i].fault);
    if (!strstr(ff_errmsg(), t[i].msg))
      fail_msg("case %zu: message '%s' lacks '%s'", i, ff_errmsg(), t[i].msg);
  }
  free(spec);
  free(bad);
  free(missing);
  free(nodir);
  free(garbage);
}

static void
test_save_at_exit(void **state)
{
  char *spec = tmp_file("spec.conf", spec_text);
  char *dir = tmp_file("savedir", NULL), *path, *marker, *report = NULL;
  struct ff_server_options o = {.spec = spec};
  struct ff_server *s;
  uint8_t w[4096];
  struct stat st;

  (void)state;
  if (mkdir(dir, 0755) < 0)
    fail_msg("mkdir %s: %m", dir);
  if (asprintf(&path, "%s/x.ovl", dir) < 0 ||
      asprintf(&marker, "%s.failed", path) < 0)
    fail_msg("asprintf: %m");
  o.save_overlay = path;
  s = ff_server_new(&o, NULL);
  assert_nonnull_err(s);
  /* Not started: no request runs, nothing is present. */
  {
    struct ff_request q = {.dev = 0, .kind = FF_REQ_FLUSH};

    assert_int_equal(ff_server_begin(s, &q, T0), -1);
    assert_int_equal(q.error, EINVAL);
    assert_non_null(strstr(ff_errmsg(), "not started"));
    ff_server_end(s, &q, T0);
    assert_int_equal(ff_server_present(s, 0, T0), 0);
    assert_string_equal(ff_server_profile_name(s), "ideal");
  }
  assert_ok(ff_server_start(s, T0));
  assert_int_equal(ff_server_start(s, T0), -1);
  assert_int_equal(ff_server_present(s, 0, T0), 1);
  /* Statistics are off: asking for them is an error, requests still run. */
  assert_null(ff_server_stats_json(s, 1, 0, NULL, NULL));
  assert_non_null(strstr(ff_errmsg(), "statistics are off"));
  memset(w, 1, sizeof w);
  run(s, FF_REQ_WRITE, 0, 0, sizeof w, w, NULL, T0);
  assert_ok(ff_server_save_at_exit(s, &report));
  assert_null(report);
  assert_int_equal(stat(path, &st), 0);
  /* A directory where the file should go: the save fails, and the marker
   * next to it says so with the report's words. */
  unlink(path);
  assert_int_equal(mkdir(path, 0755), 0);
  assert_int_equal(ff_server_save_at_exit(s, &report), -1);
  assert_non_null(strstr(ff_errmsg(), "was NOT saved and is lost"));
  assert_non_null(strstr(ff_errmsg(), marker));
  assert_non_null(report);
  assert_non_null(strstr(report, "1 blocks written"));
  {
    FILE *f = fopen(marker, "r");
    char line[2048] = "";

    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, report);
  }
  free(report);
  /* A save that works again removes the stale marker. */
  rmdir(path);
  assert_ok(ff_server_save_at_exit(s, NULL));
  assert_int_equal(lstat(marker, &st), -1);
  /* The directory goes away: the save fails and says the writes are
   * lost; no marker can be written there either. */
  unlink(path);
  rmdir(dir);
  assert_int_equal(ff_server_save_at_exit(s, NULL), -1);
  assert_non_null(strstr(ff_errmsg(), "1 blocks written"));
  assert_non_null(strstr(ff_errmsg(), "was NOT saved and is lost"));
  ff_server_free(s);
  free(marker);
  free(path);
  free(dir);
  free(spec);
}

static int
setup(void **state)
{
  (void)state;
  return ff_test_mkscratch(tmpdir, sizeof tmpdir, "server");
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
    cmocka_unit_test(test_failed_write_does_not_land),
    cmocka_unit_test(test_vanish_after),
    cmocka_unit_test(test_zero_trim_through_model),
    cmocka_unit_test(test_read_sees_acknowledged_write),
    cmocka_unit_test(test_inflight),
    cmocka_unit_test(test_lifecycle),
    cmocka_unit_test(test_done_times_are_the_models),
    cmocka_unit_test(test_transport_share),
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_save_at_exit),
  };

  return cmocka_run_group_tests(tests, setup, teardown);
}
