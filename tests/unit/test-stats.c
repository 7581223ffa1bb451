/* fusefarm: unit tests for the I/O statistics (ff-stats.h; the json_t
 * snapshot of ff-stats-int.h too).
 *
 * Most tests record a known sequence and read the result back through the
 * JSON snapshot, the interface the front ends and `fusefarm stats` use.
 *
 * THREAD MODEL: test_threads and test_reset_concurrent start threads;
 * the threads only call the stats functions and never assert (cmocka's
 * asserts are not thread-safe); the main thread checks after joining.
 */
#include "ff-test.h"

#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ff-stats-int.h"
#include "ff-stats.h"

#define MS    UINT64_C(1000000)
#define KIB   UINT64_C(1024)
#define MIB   (KIB * KIB)
#define GIB   (MIB * KIB)
#define BLOCK UINT64_C(131072)

/* --- helpers --------------------------------------------------------- */

static struct ff_stats *
new_stats(uint32_t ndevs)
{
  struct ff_stats *s = ff_stats_new(ndevs);

  assert_nonnull_err(s);
  return s;
}

static json_t *
snapshot(struct ff_stats *s, int include_idle)
{
  json_t *j = ff_stats_json(s, NULL, include_idle);

  assert_nonnull_err(j);
  return j;
}

/* devices[] entry for device index dev, or NULL if not listed. */
static json_t *
dev_of(json_t *j, uint32_t dev)
{
  json_t *devs = json_object_get(j, "devices"), *d;
  size_t i;

  assert_non_null(devs);
  json_array_foreach(devs, i, d)
  {
    if (json_integer_value(json_object_get(d, "index")) == (json_int_t)dev)
      return d;
  }
  return NULL;
}

static uint64_t
u64(json_t *o, const char *key)
{
  json_t *v = json_object_get(o, key);

  if (!v || !json_is_integer(v))
    fail_msg("missing integer \"%s\"", key);
  return (uint64_t)json_integer_value(v);
}

static json_t *
lat(json_t *o, const char *op)
{
  json_t *v = json_object_get(json_object_get(o, "latency"), op);

  assert_non_null(v);
  return v;
}

/* |got - want| <= want * tol */
static void
assert_near(uint64_t got, uint64_t want, double tol, const char *what)
{
  double d = (double)got - (double)want;

  if (d < 0)
    d = -d;
  if (d > (double)want * tol)
    fail_msg("%s: got %" PRIu64 ", want %" PRIu64 " within %.2f%%", what, got,
             want, tol * 100);
}

/* The documented resolution: within 1/16 of the value. */
#define RES (1.0 / 16)

static uint64_t
lcg(uint64_t *st)
{
  *st = *st * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
  return *st >> 11;
}

/* --- counters -------------------------------------------------------- */

static void
test_counters(void **state)
{
  struct ff_stats *s = new_stats(4);
  json_t *j, *d, *t;

  (void)state;
  ff_stats_record(s, 1, FF_STAT_READ, 0, 4096, MS, 0, 0);
  ff_stats_record(s, 1, FF_STAT_READ, 8192, 512, MS, 0, 0);
  ff_stats_record(s, 1, FF_STAT_WRITE, 4096, 4096, MS, 0, 0);
  ff_stats_record(s, 1, FF_STAT_FLUSH, 0, 0, MS, 0, 0);
  ff_stats_record(s, 1, FF_STAT_READ, 0, 4096, MS, 5 /* EIO */, 1);
  ff_stats_record(s, 1, FF_STAT_WRITE, 0, 4096, MS, 28 /* ENOSPC */, 0);
  ff_stats_record(s, 3, FF_STAT_FLUSH, 0, 0, 2 * MS, 0, 1);
  /* injected without an error is not an injected error */
  ff_stats_interrupted(s, 3);

  j = snapshot(s, 0);
  assert_string_equal(json_string_value(json_object_get(j, "format")),
                      "fusefarm-stats");
  assert_int_equal(u64(j, "version"), 1);
  assert_int_equal(u64(j, "ndevs"), 4);
  assert_int_equal(json_array_size(json_object_get(j, "devices")), 2);
  assert_null(dev_of(j, 0));
  d = dev_of(j, 1);
  assert_non_null(d);
  assert_string_equal(json_string_value(json_object_get(d, "name")), "dev1");
  assert_int_equal(u64(d, "reads"), 3);
  assert_int_equal(u64(d, "writes"), 2);
  assert_int_equal(u64(d, "flushes"), 1);
  assert_int_equal(u64(d, "bytes_read"), 4096 + 512);
  assert_int_equal(u64(d, "bytes_written"), 4096);
  assert_int_equal(u64(d, "errors"), 2);
  assert_int_equal(u64(d, "errors_injected"), 1);
  assert_int_equal(u64(d, "interrupted"), 0);
  assert_int_equal(u64(lat(d, "read"), "count"), 3);
  assert_int_equal(u64(lat(d, "write"), "count"), 2);
  assert_int_equal(u64(lat(d, "flush"), "count"), 1);
  d = dev_of(j, 3);
  assert_int_equal(u64(d, "flushes"), 1);
  assert_int_equal(u64(d, "errors_injected"), 0);
  assert_int_equal(u64(d, "interrupted"), 1);
  assert_int_equal(u64(lat(d, "flush"), "max_ns"), 2 * MS);

  t = json_object_get(j, "totals");
  assert_int_equal(u64(t, "reads"), 3);
  assert_int_equal(u64(t, "writes"), 2);
  assert_int_equal(u64(t, "flushes"), 2);
  assert_int_equal(u64(t, "devices_active"), 2);
  assert_int_equal(u64(t, "interrupted"), 1);
  assert_int_equal(u64(lat(t, "flush"), "count"), 2);
  assert_int_equal(u64(lat(t, "flush"), "max_ns"), 2 * MS);
  assert_int_equal(u64(lat(t, "flush"), "min_ns"), MS);
  assert_int_equal(u64(j, "dropped_records"), 0);
  json_decref(j);

  /* include_idle lists every device, in index order, with names. */
  {
    static const char *const names[] = {"pv0", "pv1", "pv2", "pv3"};
    json_t *devs;

    j = ff_stats_json(s, names, 1);
    assert_nonnull_err(j);
    devs = json_object_get(j, "devices");
    assert_int_equal(json_array_size(devs), 4);
    for (size_t i = 0; i < 4; i++) {
      d = json_array_get(devs, i);
      assert_int_equal(u64(d, "index"), i);
      assert_string_equal(json_string_value(json_object_get(d, "name")),
                          names[i]);
    }
    d = json_array_get(devs, 0);
    assert_int_equal(u64(d, "reads"), 0);
    assert_int_equal(u64(lat(d, "read"), "count"), 0);
    assert_int_equal(
      json_array_size(json_object_get(lat(d, "read"), "buckets")), 0);
    json_decref(j);
  }
  ff_stats_free(s);
}

static void
test_bad_index(void **state)
{
  struct ff_stats *s = new_stats(2);
  json_t *j;

  (void)state;
  ff_stats_record(s, 2, FF_STAT_READ, 0, 512, MS, 0, 0);
  ff_stats_record(s, UINT32_MAX, FF_STAT_READ, 0, 512, MS, 0, 0);
  ff_stats_record(s, 0, (enum ff_stat_op)7, 0, 512, MS, 0, 0);
  j = snapshot(s, 1);
  assert_int_equal(u64(j, "dropped_records"), 3);
  assert_int_equal(u64(json_object_get(j, "totals"), "reads"), 0);
  json_decref(j);
  ff_stats_free(s);

  /* An empty farm is allowed. */
  s = new_stats(0);
  ff_stats_record(s, 0, FF_STAT_READ, 0, 512, MS, 0, 0);
  j = snapshot(s, 1);
  assert_int_equal(json_array_size(json_object_get(j, "devices")), 0);
  json_decref(j);
  ff_stats_free(s);
}

/* --- blocks touched -------------------------------------------------- */

static void
test_blocks_distinct(void **state)
{
  struct ff_stats *s = new_stats(4);
  json_t *j;

  (void)state;
  ff_stats_record(s, 0, FF_STAT_READ, 0, 4096, MS, 0, 0);
  ff_stats_record(s, 0, FF_STAT_READ, 0, 4096, MS, 0, 0);
  ff_stats_record(s, 0, FF_STAT_READ, 4096, 4096, MS, 0, 0);
  ff_stats_record(s, 0, FF_STAT_READ, BLOCK, 4096, MS, 0, 0);
  /* A write in an already-touched block; a failed read elsewhere. */
  ff_stats_record(s, 0, FF_STAT_WRITE, 8192, 4096, MS, 0, 0);
  ff_stats_record(s, 0, FF_STAT_READ, 50 * BLOCK, 4096, MS, 5, 0);

  /* A request straddling a block boundary touches both. */
  ff_stats_record(s, 1, FF_STAT_READ, BLOCK - 512, 1024, MS, 0, 0);
  /* A write alone counts, a flush does not. */
  ff_stats_record(s, 2, FF_STAT_WRITE, 7 * BLOCK, BLOCK, MS, 0, 0);
  ff_stats_record(s, 2, FF_STAT_FLUSH, 0, 0, MS, 0, 0);

  /* A full sequential read of 1 GiB in 128 KiB chunks, twice. */
  for (int pass = 0; pass < 2; pass++)
    for (uint64_t off = 0; off < GIB; off += BLOCK)
      ff_stats_record(s, 3, FF_STAT_READ, off, BLOCK, MS, 0, 0);

  j = snapshot(s, 0);
  assert_int_equal(u64(dev_of(j, 0), "blocks_touched"), 2);
  assert_int_equal(u64(dev_of(j, 1), "blocks_touched"), 2);
  assert_int_equal(u64(dev_of(j, 2), "blocks_touched"), 1);
  assert_int_equal(u64(dev_of(j, 3), "blocks_touched"), 8192);
  assert_false(
    json_is_true(json_object_get(dev_of(j, 3), "blocks_touched_capped")));
  assert_int_equal(u64(json_object_get(j, "totals"), "blocks_touched"),
                   2 + 2 + 1 + 8192);
  assert_int_equal(u64(dev_of(j, 3), "bytes_read"), 2 * GIB);
  json_decref(j);
  ff_stats_free(s);
}

static void
test_blocks_cap(void **state)
{
  struct ff_stats *s = new_stats(2);
  size_t before = ff_stats_memory(s);
  json_t *j;

  (void)state;
  /* One absurd request: the set stops at FF_STATS_BLOCKS_MAX blocks. */
  ff_stats_record(s, 1, FF_STAT_READ, 0, UINT64_C(1) << 40, MS, 0, 0);
  ff_stats_record(s, 1, FF_STAT_READ, UINT64_MAX - 10, 100, MS, 0, 0);
  j = snapshot(s, 0);
  assert_int_equal(u64(dev_of(j, 1), "blocks_touched"), FF_STATS_BLOCKS_MAX);
  assert_true(
    json_is_true(json_object_get(dev_of(j, 1), "blocks_touched_capped")));
  assert_true(json_is_true(
    json_object_get(json_object_get(j, "totals"), "blocks_touched_capped")));
  json_decref(j);
  /* At most 16 MiB of set plus the fixed parts. */
  assert_true(ff_stats_memory(s) - before <= 16 * MIB + 4096);
  /* Reset frees the set and the log; the histogram stays. */
  ff_stats_reset(s);
  assert_true(ff_stats_memory(s) - before < 2048);
  ff_stats_free(s);
}

/* --- latency histograms ---------------------------------------------- */

static void
test_percentiles_uniform(void **state)
{
  struct ff_stats *s = new_stats(1);
  uint64_t st = 42, max = 0;
  json_t *j, *r;

  (void)state;
  for (int i = 0; i < 100000; i++) {
    uint64_t v = MS + lcg(&st) % (MS + 1);

    if (v > max)
      max = v;
    ff_stats_record(s, 0, FF_STAT_READ, 0, 4096, v, 0, 0);
  }
  j = snapshot(s, 0);
  r = lat(dev_of(j, 0), "read");
  assert_int_equal(u64(r, "count"), 100000);
  assert_near(u64(r, "p50_ns"), 1500000, RES, "p50");
  assert_near(u64(r, "p90_ns"), 1900000, RES, "p90");
  assert_near(u64(r, "p99_ns"), 1990000, RES, "p99");
  assert_int_equal(u64(r, "max_ns"), max);
  assert_true(u64(r, "min_ns") >= MS);
  assert_true(u64(r, "p99_ns") <= max);
  json_decref(j);
  ff_stats_free(s);
}

static void
test_percentiles_constant(void **state)
{
  struct ff_stats *s = new_stats(1);
  json_t *j, *r;

  (void)state;
  for (int i = 0; i < 1000; i++)
    ff_stats_record(s, 0, FF_STAT_WRITE, 0, 4096, 5 * MS, 0, 0);
  j = snapshot(s, 0);
  r = lat(dev_of(j, 0), "write");
  assert_near(u64(r, "p50_ns"), 5 * MS, RES, "p50");
  assert_near(u64(r, "p99_ns"), 5 * MS, RES, "p99");
  assert_int_equal(u64(r, "max_ns"), 5 * MS);
  /* Clamped to the exact min/max inside the bucket: exact here. */
  assert_int_equal(u64(r, "p50_ns"), 5 * MS);
  assert_int_equal(u64(r, "p99_ns"), 5 * MS);
  assert_int_equal(json_array_size(json_object_get(r, "buckets")), 1);
  json_decref(j);
  ff_stats_free(s);
}

/* 99 fast requests and one slow one: p50 and p90 fast, p99 fast (rank 99
 * of 100), max slow; 98 fast + 2 slow: p99 slow. */
static void
test_percentiles_ranks(void **state)
{
  struct ff_stats *s = new_stats(2);
  json_t *j, *r;

  (void)state;
  for (int i = 0; i < 99; i++)
    ff_stats_record(s, 0, FF_STAT_READ, 0, 512, MS, 0, 0);
  ff_stats_record(s, 0, FF_STAT_READ, 0, 512, 1000 * MS, 0, 0);
  for (int i = 0; i < 98; i++)
    ff_stats_record(s, 1, FF_STAT_READ, 0, 512, MS, 0, 0);
  for (int i = 0; i < 2; i++)
    ff_stats_record(s, 1, FF_STAT_READ, 0, 512, 1000 * MS, 0, 0);
  j = snapshot(s, 0);
  r = lat(dev_of(j, 0), "read");
  assert_near(u64(r, "p50_ns"), MS, RES, "p50");
  assert_near(u64(r, "p99_ns"), MS, RES, "p99");
  assert_int_equal(u64(r, "max_ns"), 1000 * MS);
  r = lat(dev_of(j, 1), "read");
  assert_near(u64(r, "p90_ns"), MS, RES, "p90");
  assert_near(u64(r, "p99_ns"), 1000 * MS, RES, "p99");
  json_decref(j);
  ff_stats_free(s);
}

/* Every value from 1.024 us to 137 s, alone in a histogram, comes back
 * within the documented resolution; below and above the range the
 * underflow and overflow buckets answer with min/max. */
static void
test_percentile_resolution(void **state)
{
  static const uint64_t edge[] = {
    0,       1,       500,     1023,        1024,           1151,    1152,
    1279,    2047,    2048,    999999,      1000000,        1048575, 1048576,
    1179647, 1179648, 5000000, 99999999999, 137438953471ULL};
  uint64_t st = 7;
  double worst = 0;

  (void)state;
  for (size_t i = 0; i < sizeof edge / sizeof *edge + 3000; i++) {
    uint64_t v = i < sizeof edge / sizeof *edge
                   ? edge[i]
                   : 1024 + lcg(&st) % ((UINT64_C(1) << 37) - 1024);
    struct ff_stats *s = new_stats(1);
    uint64_t p;
    json_t *j, *r;

    ff_stats_record(s, 0, FF_STAT_READ, 0, 512, v, 0, 0);
    j = snapshot(s, 0);
    r = lat(dev_of(j, 0), "read");
    p = u64(r, "p50_ns");
    /* A single sample is its bucket's min and max: exact. */
    assert_int_equal(p, v);
    json_decref(j);
    ff_stats_free(s);
  }

  /* Without clamping: samples at the bottom and top of the range make
   * min and max fall outside the bucket of a middle value. */
  for (int i = 0; i < 3000; i++) {
    uint64_t v = 2048 + lcg(&st) % ((UINT64_C(1) << 36) - 2048);
    struct ff_stats *s = new_stats(1);
    double err;
    json_t *j, *r;

    ff_stats_record(s, 0, FF_STAT_READ, 0, 512, 0, 0, 0);
    ff_stats_record(s, 0, FF_STAT_READ, 0, 512, v, 0, 0);
    ff_stats_record(s, 0, FF_STAT_READ, 0, 512, v, 0, 0);
    ff_stats_record(s, 0, FF_STAT_READ, 0, 512, 200000 * MS, 0, 0);
    j = snapshot(s, 0);
    r = lat(dev_of(j, 0), "read");
    /* ranks: p50 = 2nd sample = v */
    err = ((double)u64(r, "p50_ns") - (double)v) / (double)v;
    if (err < 0)
      err = -err;
    if (err > worst)
      worst = err;
    assert_near(u64(r, "p50_ns"), v, RES, "p50");
    /* p99 = 4th = overflow bucket: the exact max. */
    assert_int_equal(u64(r, "p99_ns"), 200000 * MS);
    assert_int_equal(u64(r, "max_ns"), 200000 * MS);
    json_decref(j);
    ff_stats_free(s);
  }
  print_message("worst relative percentile error seen: %.3f%% (bound "
                "%.3f%%)\n",
                worst * 100, RES * 100);

  /* Underflow: 500 ns samples report 500 exactly (clamped). */
  {
    struct ff_stats *s = new_stats(1);
    json_t *j, *b;

    for (int i = 0; i < 10; i++)
      ff_stats_record(s, 0, FF_STAT_FLUSH, 0, 0, 500, 0, 0);
    j = snapshot(s, 0);
    assert_int_equal(u64(lat(dev_of(j, 0), "flush"), "p50_ns"), 500);
    b = json_array_get(json_object_get(lat(dev_of(j, 0), "flush"), "buckets"),
                       0);
    assert_int_equal(json_integer_value(json_array_get(b, 0)), 1024);
    assert_int_equal(json_integer_value(json_array_get(b, 1)), 10);
    json_decref(j);
    ff_stats_free(s);
  }
  /* Overflow bucket: upper bound null. */
  {
    struct ff_stats *s = new_stats(1);
    json_t *j, *b;

    ff_stats_record(s, 0, FF_STAT_FLUSH, 0, 0, 300000 * MS, 0, 0);
    j = snapshot(s, 0);
    b = json_array_get(json_object_get(lat(dev_of(j, 0), "flush"), "buckets"),
                       0);
    assert_true(json_is_null(json_array_get(b, 0)));
    assert_int_equal(u64(lat(dev_of(j, 0), "flush"), "p50_ns"), 300000 * MS);
    json_decref(j);
    ff_stats_free(s);
  }
}

/* Samples 6.25% apart hit every bucket (none is narrower than 1/15 of
 * its lower bound); the JSON lists them all, bounds increasing, the
 * overflow bucket last with a null bound. */
static void
test_bucket_bounds(void **state)
{
  struct ff_stats *s = new_stats(1);
  json_t *j, *bk, *e;
  uint64_t prev = 0, total = 0;
  size_t i;

  (void)state;
  for (uint64_t v = 1; v < (UINT64_C(1) << 38); v = v * 17 / 16 + 1)
    ff_stats_record(s, 0, FF_STAT_READ, 0, 512, v, 0, 0);
  j = snapshot(s, 0);
  bk = json_object_get(lat(dev_of(j, 0), "read"), "buckets");
  json_array_foreach(bk, i, e)
  {
    json_t *ub = json_array_get(e, 0);

    total += (uint64_t)json_integer_value(json_array_get(e, 1));
    if (json_is_null(ub)) {
      assert_int_equal(i, json_array_size(bk) - 1);
      continue;
    }
    assert_true((uint64_t)json_integer_value(ub) > prev);
    prev = (uint64_t)json_integer_value(ub);
  }
  assert_int_equal(json_array_size(bk), FF_STATS_HIST_BUCKETS);
  assert_int_equal(total, u64(lat(dev_of(j, 0), "read"), "count"));
  assert_int_equal(prev, UINT64_C(1) << 37);
  json_decref(j);
  ff_stats_free(s);
}

/* --- read offset rings ----------------------------------------------- */

static void
check_offsets(json_t *d, const char *key, uint64_t from, size_t n)
{
  json_t *a = json_object_get(d, key);

  assert_non_null(a);
  assert_int_equal(json_array_size(a), n);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(json_integer_value(json_array_get(a, i)),
                     (from + i) * 512);
}

static void
test_read_ring(void **state)
{
  struct ff_stats *s = new_stats(3);
  json_t *j, *a;

  (void)state;
  for (uint64_t i = 0; i < 40; i++) {
    ff_stats_record(s, 0, FF_STAT_READ, i * 512, 512, MS, 0, 0);
    /* Writes and flushes are not logged. */
    ff_stats_record(s, 0, FF_STAT_WRITE, 999 * 512, 512, MS, 0, 0);
    ff_stats_record(s, 0, FF_STAT_FLUSH, 0, 0, MS, 0, 0);
  }
  for (uint64_t i = 0; i < 10; i++)
    ff_stats_record(s, 1, FF_STAT_READ, i * 512, 512, MS, 0, 0);
  /* Exactly 17: the last 16 are reads 1..16. */
  for (uint64_t i = 0; i < 17; i++)
    ff_stats_record(s, 2, FF_STAT_READ, i * 512, 512, MS, i == 3 ? 5 : 0, 0);

  j = snapshot(s, 0);
  check_offsets(dev_of(j, 0), "read_offsets_first", 0, 16);
  check_offsets(dev_of(j, 0), "read_offsets_last", 24, 16);
  check_offsets(dev_of(j, 1), "read_offsets_first", 0, 10);
  check_offsets(dev_of(j, 1), "read_offsets_last", 0, 10);
  check_offsets(dev_of(j, 2), "read_offsets_first", 0, 16);
  check_offsets(dev_of(j, 2), "read_offsets_last", 1, 16);
  json_decref(j);

  /* lvm's pattern: "0, 0" per device per pass. */
  ff_stats_reset(s);
  ff_stats_record(s, 1, FF_STAT_READ, 0, 4096, MS, 0, 0);
  ff_stats_record(s, 1, FF_STAT_READ, 0, 4096, MS, 0, 0);
  j = snapshot(s, 0);
  a = json_object_get(dev_of(j, 1), "read_offsets_first");
  assert_int_equal(json_array_size(a), 2);
  assert_int_equal(json_integer_value(json_array_get(a, 0)), 0);
  assert_int_equal(json_integer_value(json_array_get(a, 1)), 0);
  json_decref(j);
  ff_stats_free(s);
}

/* --- gauge, reset ---------------------------------------------------- */

static void
test_inflight(void **state)
{
  struct ff_stats *s = new_stats(1);
  json_t *j;

  (void)state;
  for (int i = 0; i < 5; i++)
    ff_stats_inflight_add(s, 1);
  for (int i = 0; i < 3; i++)
    ff_stats_inflight_add(s, -1);
  ff_stats_inflight_add(s, 1);
  j = snapshot(s, 0);
  assert_int_equal(u64(j, "inflight"), 3);
  assert_int_equal(u64(j, "inflight_max"), 5);
  json_decref(j);

  /* Reset: the maximum restarts from the requests still in flight. */
  ff_stats_reset(s);
  j = snapshot(s, 0);
  assert_int_equal(u64(j, "inflight"), 3);
  assert_int_equal(u64(j, "inflight_max"), 3);
  json_decref(j);
  for (int i = 0; i < 3; i++)
    ff_stats_inflight_add(s, -1);
  j = snapshot(s, 0);
  assert_int_equal(u64(j, "inflight"), 0);
  assert_int_equal(u64(j, "inflight_max"), 3);
  json_decref(j);
  ff_stats_free(s);
}

static void
test_reset(void **state)
{
  struct ff_stats *s = new_stats(8);
  size_t base = ff_stats_memory(s);
  json_t *j, *t, *d;

  (void)state;
  for (uint32_t dev = 0; dev < 8; dev++)
    for (uint64_t i = 0; i < 100; i++) {
      ff_stats_record(s, dev, FF_STAT_READ, i * BLOCK, 4096, MS, 0, 0);
      ff_stats_record(s, dev, FF_STAT_WRITE, i * BLOCK, 4096, MS, 5, 1);
      ff_stats_record(s, dev, FF_STAT_FLUSH, 0, 0, MS, 0, 0);
    }
  ff_stats_inflight_add(s, 1);
  ff_stats_inflight_add(s, -1);
  assert_true(ff_stats_memory(s) > base);
  ff_stats_reset(s);

  j = snapshot(s, 1);
  assert_int_equal(u64(j, "inflight_max"), 0);
  t = json_object_get(j, "totals");
  assert_int_equal(u64(t, "reads") + u64(t, "writes") + u64(t, "flushes"), 0);
  assert_int_equal(u64(t, "blocks_touched") + u64(t, "errors") +
                     u64(t, "errors_injected") + u64(t, "bytes_read") +
                     u64(t, "devices_active"),
                   0);
  for (uint32_t dev = 0; dev < 8; dev++) {
    d = dev_of(j, dev);
    assert_int_equal(u64(d, "blocks_touched"), 0);
    assert_int_equal(json_array_size(json_object_get(d, "read_offsets_first")),
                     0);
    assert_int_equal(u64(lat(d, "read"), "count"), 0);
    assert_int_equal(u64(lat(d, "read"), "max_ns"), 0);
    assert_int_equal(u64(lat(d, "write"), "min_ns"), 0);
  }
  json_decref(j);
  /* The logs and sets are freed; histograms stay (3 per device). */
  assert_true(ff_stats_memory(s) <= base + 8 * 3 * 1800);

  /* Counting starts over cleanly. */
  ff_stats_record(s, 2, FF_STAT_READ, 0, 4096, 3 * MS, 0, 0);
  j = snapshot(s, 0);
  assert_int_equal(json_array_size(json_object_get(j, "devices")), 1);
  assert_int_equal(u64(lat(dev_of(j, 2), "read"), "min_ns"), 3 * MS);
  assert_int_equal(u64(lat(dev_of(j, 2), "read"), "p50_ns"), 3 * MS);
  assert_int_equal(u64(dev_of(j, 2), "blocks_touched"), 1);
  json_decref(j);
  ff_stats_free(s);
}

/* --- text and JSON round trip ---------------------------------------- */

static struct ff_stats *
busy_stats(void)
{
  struct ff_stats *s = new_stats(6);
  uint64_t st = 1;

  for (int i = 0; i < 5000; i++) {
    uint32_t dev = (uint32_t)(lcg(&st) % 5); /* device 5 stays idle */
    uint64_t v = 1000 + lcg(&st) % (50 * MS);
    enum ff_stat_op op = (enum ff_stat_op)(lcg(&st) % 3);

    ff_stats_record(s, dev, op, (lcg(&st) % 4096) * 4096, 4096, v,
                    i % 97 == 0 ? 5 : 0, i % 194 == 0);
  }
  ff_stats_record(s, 4, FF_STAT_READ, 0, UINT64_C(1) << 40, MS, 0, 0);
  ff_stats_inflight_add(s, 7);
  ff_stats_inflight_add(s, -7);
  return s;
}

static const char *const busy_names[] = {"pv0000", "pv0001", "a-long-name",
                                         "pv0003", "pv0004", "idle"};

static void
test_json_roundtrip(void **state)
{
  struct ff_stats *s = busy_stats();
  char *text, *text2, *text3, *dump, *err = NULL;
  json_t *j, *j2;

  (void)state;
  text = ff_stats_text(s, busy_names);
  assert_nonnull_err(text);
  j = ff_stats_json(s, busy_names, 0);
  assert_nonnull_err(j);
  text2 = ff_stats_text_from_json(j, &err);
  if (!text2)
    fail_msg("text_from_json: %s", err);
  assert_null(err);
  assert_string_equal(text, text2);

  /* Through a file's bytes, as `fusefarm stats` reads it. */
  dump = json_dumps(j, JSON_INDENT(2));
  assert_non_null(dump);
  j2 = json_loads(dump, 0, NULL);
  assert_non_null(j2);
  text3 = ff_stats_text_from_json(j2, NULL);
  assert_nonnull_err(text3);
  assert_string_equal(text, text3);

  /* Shape of the table: header, 5 devices (idle one absent), total,
   * footer; the capped device shows a lower bound. */
  {
    int lines = 0;

    for (const char *p = text; *p; p++)
      lines += *p == '\n';
    assert_int_equal(lines, 1 + 5 + 1 + 1);
  }
  assert_non_null(strstr(text, "device"));
  assert_non_null(strstr(text, "a-long-name"));
  assert_null(strstr(text, "idle"));
  assert_non_null(strstr(text, "1048576+"));
  assert_non_null(strstr(text, "\ntotal "));
  assert_non_null(
    strstr(text, "in flight: 0 (max 7); 5 of 6 devices with I/O"));
  print_message("%s", text);

  /* With include_idle the idle device gets a row of dashes. */
  json_decref(j);
  j = ff_stats_json(s, busy_names, 1);
  free(text2);
  text2 = ff_stats_text_from_json(j, NULL);
  assert_nonnull_err(text2);
  assert_non_null(strstr(text2, "\nidle "));

  free(text);
  free(text2);
  free(text3);
  free(dump);
  json_decref(j);
  json_decref(j2);
  ff_stats_free(s);
}

/* Each entry: a mutation of a valid document (a JSON patch of sorts:
 * path to an object, key, replacement or NULL to delete) and the text
 * the error must contain. */
struct bad_case {
  const char *obj; /* "", "totals", "dev0", "dev0.latency", "dev0.read" */
  const char *key;
  const char *value; /* JSON text, or NULL to delete the key */
  const char *want;
};

static const struct bad_case bad_cases[] = {
  {"", "format", "\"fusefarm-manifest\"", "\"format\" is not"},
  {"", "format", NULL, "\"format\" is not"},
  {"", "version", "2", "version 2 is not supported"},
  {"", "version", "\"1\"", "version: expected a non-negative integer"},
  {"", "inflight", NULL, "missing \"inflight\""},
  {"", "inflight_max", "-1", "inflight_max: expected a non-negative"},
  {"", "ndevs", "null", "ndevs: expected"},
  {"", "totals", "[]", "totals: expected an object"},
  {"", "devices", "{}", "\"devices\" is not an array"},
  {"", "devices", NULL, "missing \"devices\""},
  {"", "devices", "[1]", "devices[0]: expected an object"},
  {"totals", "devices_active", NULL, "totals: missing \"devices_active\""},
  {"totals", "reads", "1.5", "totals.reads: expected"},
  {"dev0", "name", NULL, "devices[0]: missing \"name\""},
  {"dev0", "name", "7", "devices[0]: \"name\" is not a string"},
  {"dev0", "reads", "\"many\"", "devices[0].reads: expected"},
  {"dev0", "blocks_touched_capped", "1", "devices[0].blocks_touched_capped"},
  {"dev0", "latency", NULL, "devices[0]: missing \"latency\""},
  {"dev0.latency", "read", "[]", "devices[0].latency.read: expected an"},
  {"dev0.read", "p50_ns", NULL, "devices[0].latency.read: missing \"p50"},
  {"dev0.read", "max_ns", "true", "devices[0].latency.read.max_ns"},
};

static void
test_json_malformed(void **state)
{
  struct ff_stats *s = busy_stats();
  char *err = NULL, *text;
  json_t *good, *j, *target, *v;

  (void)state;
  good = ff_stats_json(s, busy_names, 0);
  assert_nonnull_err(good);

  /* Not even an object. */
  text = ff_stats_text_from_json(NULL, &err);
  assert_null(text);
  assert_non_null(err);
  assert_non_null(strstr(err, "expected an object"));
  free(err);
  j = json_loads("[1, 2]", 0, NULL);
  text = ff_stats_text_from_json(j, &err);
  assert_null(text);
  assert_non_null(err);
  free(err);
  json_decref(j);

  for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
    const struct bad_case *c = &bad_cases[i];

    j = json_deep_copy(good);
    assert_non_null(j);
    target = j;
    if (!strncmp(c->obj, "dev0", 4))
      target = json_array_get(json_object_get(j, "devices"), 0);
    if (!strcmp(c->obj, "totals"))
      target = json_object_get(j, "totals");
    if (!strcmp(c->obj, "dev0.latency"))
      target = json_object_get(target, "latency");
    if (!strcmp(c->obj, "dev0.read"))
      target = json_object_get(json_object_get(target, "latency"), "read");
    assert_non_null(target);
    if (c->value) {
      v = json_loads(c->value, JSON_DECODE_ANY, NULL);
      assert_non_null(v);
      json_object_set_new(target, c->key, v);
    } else {
      json_object_del(target, c->key);
    }
    err = NULL;
    text = ff_stats_text_from_json(j, &err);
    if (text)
      fail_msg("case %zu (%s.%s) was accepted", i, c->obj, c->key);
    assert_non_null(err);
    if (!strstr(err, c->want))
      fail_msg("case %zu: error \"%s\" lacks \"%s\"", i, err, c->want);
    assert_string_equal(err, ff_errmsg());
    free(err);
    json_decref(j);
  }
  json_decref(good);
  ff_stats_free(s);
}

/* The text API `fusefarm stats` uses: the snapshot as JSON text and the
 * table from JSON text, with the document's name in every message. */
static void
test_json_text(void **state)
{
  struct ff_stats *s = busy_stats();
  struct ff_stats_text_info info = {0};
  char *table, *json, *pretty, *text, *exact, *err = NULL;
  size_t len;

  (void)state;
  table = ff_stats_text(s, busy_names);
  assert_nonnull_err(table);

  /* One line, then the same table as ff_stats_text; the idle device is
   * neither listed nor counted as listed. */
  json = ff_stats_json_text(s, busy_names, 0, 0);
  assert_nonnull_err(json);
  len = strlen(json);
  assert_true(len > 2 && json[len - 1] == '\n');
  assert_ptr_equal(strchr(json, '\n'), json + len - 1);
  assert_int_equal(ff_stats_json_text_check(json, len, "snap.json"), 0);
  text = ff_stats_text_from_json_text(json, len, "snap.json", 0, &info, &err);
  if (!text)
    fail_msg("text_from_json_text: %s", err);
  assert_null(err);
  assert_string_equal(text, table);
  assert_int_equal(info.listed, 5);
  assert_int_equal(info.ndevs, 6);
  free(text);

  /* Not NUL-terminated: exactly len bytes. */
  exact = malloc(len);
  assert_non_null(exact);
  memcpy(exact, json, len);
  text = ff_stats_text_from_json_text(exact, len, "snap.json", 0, NULL, NULL);
  assert_nonnull_err(text);
  assert_string_equal(text, table);
  free(text);
  free(exact);

  /* Pretty-printed, idle device included: without `all` the idle row is
   * dropped (the same table again), with it the row is there. */
  pretty = ff_stats_json_text(s, busy_names, 1, 1);
  assert_nonnull_err(pretty);
  assert_non_null(strstr(pretty, "{\n  \""));
  assert_non_null(strstr(pretty, "\"idle\""));
  text =
    ff_stats_text_from_json_text(pretty, strlen(pretty), NULL, 0, &info, NULL);
  assert_nonnull_err(text);
  assert_string_equal(text, table);
  assert_int_equal(info.listed, 6);
  free(text);
  text =
    ff_stats_text_from_json_text(pretty, strlen(pretty), NULL, 1, &info, NULL);
  assert_nonnull_err(text);
  assert_non_null(strstr(text, "\nidle "));
  assert_int_equal(info.listed, 6);
  assert_int_equal(info.ndevs, 6);
  free(text);

  free(table);
  free(json);
  free(pretty);
  ff_stats_free(s);
}

/* Each entry: a document, the name given for it, how the message begins
 * and what else it holds (jansson words its own part). */
static const struct {
  const char *doc, *name, *start, *has;
} bad_texts[] = {
  {"{\"format\": ", "snap.json", "snap.json:1:", ": not valid JSON: "},
  {"", NULL, "stats json:1:", ": not valid JSON: "},
  {"[1]", "snap.json",
   "snap.json: not a stats snapshot (\"format\" is not \"fusefarm-stats\")",
   ""},
  {"{\"format\": \"fusefarm-run\"}", "s",
   "s: not a stats snapshot (\"format\" is not \"fusefarm-stats\")", ""},
  {"{\"format\": \"fusefarm-stats\", \"version\": 2}", "snap.json",
   "snap.json: stats json: version 2 is not supported (expected 1)", ""},
  {"{\"format\": \"fusefarm-stats\", \"version\": 2}", NULL,
   "stats json: version 2 is not supported (expected 1)", ""},
};

static void
test_json_text_malformed(void **state)
{
  (void)state;
  for (size_t i = 0; i < sizeof bad_texts / sizeof *bad_texts; i++) {
    const char *doc = bad_texts[i].doc;
    char *err = (char *)"unset", *text;
    int check;

    text = ff_stats_text_from_json_text(doc, strlen(doc), bad_texts[i].name, 1,
                                        NULL, &err);
    if (text)
      fail_msg("case %zu was accepted", i);
    assert_non_null(err);
    if (strncmp(err, bad_texts[i].start, strlen(bad_texts[i].start)) ||
        !strstr(err, bad_texts[i].has))
      fail_msg("case %zu: error \"%s\", expected \"%s...%s...\"", i, err,
               bad_texts[i].start, bad_texts[i].has);
    assert_string_equal(err, ff_errmsg());
    /* The same message from the check, which accepts what it does not
     * look at (the version). */
    check = ff_stats_json_text_check(doc, strlen(doc), bad_texts[i].name);
    if (strstr(bad_texts[i].start, "version")) {
      assert_int_equal(check, 0);
    } else {
      assert_int_equal(check, -1);
      assert_string_equal(ff_errmsg(), err);
    }
    free(err);
  }
}

/* --- memory ---------------------------------------------------------- */

static void
test_memory(void **state)
{
  struct mallinfo2 before, after;
  struct ff_stats *s;
  size_t mem, heap;
  json_t *j;

  (void)state;
  before = mallinfo2();
  s = new_stats(10000);
  after = mallinfo2();
  mem = ff_stats_memory(s);
  heap = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
  print_message("10000 idle devices: %zu bytes (%.1f per device); malloc "
                "heap grew by %zu\n",
                mem, (double)mem / 10000, heap);
  assert_true(mem / 10000 <= 160);
  /* Under ASan mallinfo2 reports nothing useful: only check if it grew. */
  if (heap)
    assert_true(heap <= mem + 64 * 1024);

  /* One 4 KiB read on each of 1000 devices: histogram + log + set. */
  for (uint32_t i = 0; i < 1000; i++)
    ff_stats_record(s, i, FF_STAT_READ, 0, 4096, MS, 0, 0);
  print_message("after one read on 1000 devices: +%.1f bytes per "
                "active device\n",
                (double)(ff_stats_memory(s) - mem) / 1000);
  j = snapshot(s, 0);
  assert_int_equal(u64(j, "memory_bytes"), ff_stats_memory(s));
  json_decref(j);
  ff_stats_free(s);
}

/* --- threads --------------------------------------------------------- */

#define NTHREADS 8
#define NRECORDS 200000
#define NDEVS    64

struct worker {
  pthread_t tid;
  struct ff_stats *s;
  unsigned id;
};

static atomic_int stop_snapshots;

static void *
worker_main(void *arg)
{
  struct worker *w = arg;
  uint64_t st = w->id + 1;

  for (unsigned i = 0; i < NRECORDS; i++) {
    uint32_t dev = (uint32_t)((i + w->id * 7) % NDEVS);
    enum ff_stat_op op = (enum ff_stat_op)(i % 3);
    uint64_t r = lcg(&st);

    ff_stats_inflight_add(w->s, 1);
    ff_stats_record(w->s, dev, op, (r % 65536) * 4096, 4096,
                    1000 + r % (10 * MS), i % 100 == 0 ? 5 : 0, i % 200 == 0);
    ff_stats_inflight_add(w->s, -1);
  }
  return NULL;
}

static void *
snapshot_main(void *arg)
{
  struct ff_stats *s = arg;

  while (!atomic_load(&stop_snapshots)) {
    json_t *j = ff_stats_json(s, NULL, 1);
    char *t = ff_stats_text(s, NULL);

    json_decref(j);
    free(t);
  }
  return NULL;
}

static void
test_threads(void **state)
{
  struct ff_stats *s = new_stats(NDEVS);
  struct worker w[NTHREADS];
  pthread_t snap;
  uint64_t per_op[3] = {0}, errs = 0, inj = 0, sum = 0;
  json_t *j, *t, *d;
  size_t i;

  (void)state;
  atomic_store(&stop_snapshots, 0);
  assert_int_equal(pthread_create(&snap, NULL, snapshot_main, s), 0);
  for (unsigned k = 0; k < NTHREADS; k++) {
    w[k].s = s;
    w[k].id = k;
    assert_int_equal(pthread_create(&w[k].tid, NULL, worker_main, &w[k]), 0);
  }
  for (unsigned k = 0; k < NTHREADS; k++)
    pthread_join(w[k].tid, NULL);
  atomic_store(&stop_snapshots, 1);
  pthread_join(snap, NULL);

  for (unsigned i2 = 0; i2 < NRECORDS; i2++) {
    per_op[i2 % 3]++;
    errs += i2 % 100 == 0;
    inj += i2 % 200 == 0;
  }
  j = snapshot(s, 1);
  t = json_object_get(j, "totals");
  assert_int_equal(u64(t, "reads"), NTHREADS * per_op[0]);
  assert_int_equal(u64(t, "writes"), NTHREADS * per_op[1]);
  assert_int_equal(u64(t, "flushes"), NTHREADS * per_op[2]);
  assert_int_equal(u64(t, "errors"), NTHREADS * errs);
  assert_int_equal(u64(t, "errors_injected"), NTHREADS * inj);
  assert_int_equal(u64(lat(t, "read"), "count") +
                     u64(lat(t, "write"), "count") +
                     u64(lat(t, "flush"), "count"),
                   (uint64_t)NTHREADS * NRECORDS);
  assert_int_equal(u64(t, "devices_active"), NDEVS);
  assert_int_equal(u64(j, "inflight"), 0);
  assert_true(u64(j, "inflight_max") >= 1);
  assert_true(u64(j, "inflight_max") <= NTHREADS);
  assert_int_equal(u64(j, "alloc_failures"), 0);
  json_array_foreach(json_object_get(j, "devices"), i, d)
  {
    uint64_t n = u64(d, "reads") + u64(d, "writes") + u64(d, "flushes");

    assert_int_equal(n, (uint64_t)NTHREADS * NRECORDS / NDEVS);
    assert_int_equal(u64(lat(d, "read"), "count"), u64(d, "reads"));
    sum += u64(d, "reads");
    assert_true(u64(d, "blocks_touched") <= 65536 / 32);
  }
  assert_int_equal(sum, u64(t, "reads"));
  print_message("%u threads x %u records on %u devices: inflight_max %" PRIu64
                "\n",
                NTHREADS, NRECORDS, NDEVS, u64(j, "inflight_max"));
  json_decref(j);
  ff_stats_free(s);
}

static void *
resetter_main(void *arg)
{
  struct ff_stats *s = arg;

  while (!atomic_load(&stop_snapshots))
    ff_stats_reset(s);
  return NULL;
}

/* Resets racing with records and snapshots: no crash, no leak (ASan), no
 * data race (TSan); once quiet, a reset zeroes everything. */
static void
test_reset_concurrent(void **state)
{
  struct ff_stats *s = new_stats(NDEVS);
  size_t base = ff_stats_memory(s);
  struct worker w[4];
  pthread_t snap, rst;
  json_t *j;

  (void)state;
  atomic_store(&stop_snapshots, 0);
  assert_int_equal(pthread_create(&snap, NULL, snapshot_main, s), 0);
  assert_int_equal(pthread_create(&rst, NULL, resetter_main, s), 0);
  for (unsigned k = 0; k < 4; k++) {
    w[k].s = s;
    w[k].id = k;
    assert_int_equal(pthread_create(&w[k].tid, NULL, worker_main, &w[k]), 0);
  }
  for (unsigned k = 0; k < 4; k++)
    pthread_join(w[k].tid, NULL);
  atomic_store(&stop_snapshots, 1);
  pthread_join(snap, NULL);
  pthread_join(rst, NULL);

  ff_stats_reset(s);
  j = snapshot(s, 0);
  assert_int_equal(json_array_size(json_object_get(j, "devices")), 0);
  assert_int_equal(u64(json_object_get(j, "totals"), "blocks_touched"), 0);
  json_decref(j);
  assert_true(ff_stats_memory(s) <= base + NDEVS * 3 * 1800);
  ff_stats_free(s);
}

/* --- main ------------------------------------------------------------ */

/* --- how late the replies went out ----------------------------------- */

/* ff_stats_late: "reply_late" has the count, the exact max, percentiles
 * within the resolution; a reset zeroes it; the text names it; a
 * snapshot with no late reply says count 0 and the text says nothing. */
static void
test_reply_late(void **state)
{
  struct ff_stats *s = new_stats(4);
  json_t *j, *l;
  char *text;

  (void)state;
  j = snapshot(s, 0);
  l = json_object_get(j, "reply_late");
  assert_non_null(l);
  assert_int_equal(u64(l, "count"), 0);
  json_decref(j);
  text = ff_stats_text(s, NULL);
  assert_non_null(text);
  assert_null(strstr(text, "replies after the model's time"));
  free(text);

  for (unsigned i = 0; i < 99; i++)
    ff_stats_late(s, 30 * MS / 1000);
  ff_stats_late(s, 2 * MS);
  j = snapshot(s, 0);
  l = json_object_get(j, "reply_late");
  assert_int_equal(u64(l, "count"), 100);
  assert_near(u64(l, "p50_ns"), 30 * MS / 1000, RES, "reply_late p50");
  assert_int_equal(u64(l, "max_ns"), 2 * MS);
  json_decref(j);
  text = ff_stats_text(s, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "replies after the model's time: p50 "));
  assert_non_null(strstr(text, "(100 replies)"));
  free(text);

  ff_stats_reset(s);
  j = snapshot(s, 0);
  assert_int_equal(u64(json_object_get(j, "reply_late"), "count"), 0);
  json_decref(j);
  ff_stats_free(s);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_counters),
    cmocka_unit_test(test_bad_index),
    cmocka_unit_test(test_blocks_distinct),
    cmocka_unit_test(test_blocks_cap),
    cmocka_unit_test(test_percentiles_uniform),
    cmocka_unit_test(test_percentiles_constant),
    cmocka_unit_test(test_percentiles_ranks),
    cmocka_unit_test(test_percentile_resolution),
    cmocka_unit_test(test_bucket_bounds),
    cmocka_unit_test(test_read_ring),
    cmocka_unit_test(test_inflight),
    cmocka_unit_test(test_reset),
    cmocka_unit_test(test_json_roundtrip),
    cmocka_unit_test(test_json_malformed),
    cmocka_unit_test(test_json_text),
    cmocka_unit_test(test_json_text_malformed),
    cmocka_unit_test(test_memory),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_reset_concurrent),
    cmocka_unit_test(test_reply_late),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
