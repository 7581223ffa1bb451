/* I/O profiles and the I/O model: parsing (good profiles, the shipped ones,
 * a table of bad ones with their messages), the distributions against
 * their configured quantiles, determinism, queues, caps, stalls, spin-up,
 * faults, live switching, fraction selection, and a multi-threaded smoke
 * test.  Times are synthetic: the model never reads a clock. */
#include "ff-farm.h"
#include "ff-iomodel.h"
#include "ff-spec.h"
#include "ff-test.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS  1000000ull
#define SEC 1000000000ull
#define T0  (1000 * SEC) /* the time origin of every model here */

static struct ff_farm *
farm_n(unsigned n, unsigned seed)
{
  char spec[128];

  snprintf(spec, sizeof spec,
           "seed = %u; device_size = \"64M\"; blanks = ({ count = %u; });",
           seed, n);
  return ff_test_farm(spec);
}

static struct ff_profile *
load(const char *text, const struct ff_farm *farm)
{
  struct ff_profile *p = ff_profile_load_string(text, "t.conf", farm);

  assert_nonnull_err(p);
  return p;
}

static struct ff_iomodel *
model(const char *text, const struct ff_farm *farm)
{
  struct ff_iomodel *m = ff_iomodel_new(farm, load(text, farm), T0);

  assert_nonnull_err(m);
  return m;
}

static struct ff_io_decision
sub(struct ff_iomodel *m, uint32_t dev, enum ff_op op, uint64_t off,
    uint64_t len, uint64_t now)
{
  struct ff_io_decision d;

  ff_iomodel_submit(m, dev, op, off, len, now, &d);
  assert_true(d.done_ns >= now);
  return d;
}

/* The source tree: FF_SOURCE_DIR, else FF_TEST_DATA without /tests/data,
 * else this file's path without /tests/unit/test-profile.c. */
static void
source_dir(char *out, size_t len)
{
  const char *s = getenv("FF_SOURCE_DIR");
  const char *data = getenv("FF_TEST_DATA");
  static const char tail[] = "/tests/unit/test-profile.c";
  const char *file = __FILE__;
  size_t n;

  if (s && *s) {
    snprintf(out, len, "%s", s);
    return;
  }
  if (data && (n = strlen(data)) > 11 &&
      !strcmp(data + n - 11, "/tests/data")) {
    snprintf(out, len, "%.*s", (int)(n - 11), data);
    return;
  }
  n = strlen(file);
  if (n >= sizeof tail && !strcmp(file + n - (sizeof tail - 1), tail))
    snprintf(out, len, "%.*s", (int)(n - (sizeof tail - 1)), file);
  else
    snprintf(out, len, ".");
}

/* ---- durations --------------------------------------------------------- */

static void
test_duration(void **state)
{
  static const struct {
    const char *in;
    uint64_t ns; /* UINT64_MAX: must fail with msg */
    const char *msg;
  } t[] = {
    {"0.2ms", 200000, NULL},
    {"1.5s", 1500000000, NULL},
    {"4ms", 4000000, NULL},
    {"250us", 250000, NULL},
    {"7ns", 7, NULL},
    {"2m", 120 * SEC, NULL},
    {"0s", 0, NULL},
    {"0.0000001ms", 0, NULL},
    {"0.5ns", 1, NULL},
    {"4", UINT64_MAX, "'4' has no unit"},
    {"4 ms", UINT64_MAX, "unknown unit ' ms'"},
    {"4xs", UINT64_MAX, "unknown unit 'xs'"},
    {"4h", UINT64_MAX, "unknown unit 'h'"},
    {"-1ms", UINT64_MAX, "is not a duration"},
    {"", UINT64_MAX, "is not a duration"},
    {"1.ms", UINT64_MAX, "digits after the decimal point"},
    {".5ms", UINT64_MAX, "is not a duration"},
    {"99999999999m", UINT64_MAX, "too large"},
    {"1234567890123456789s", UINT64_MAX, "too many digits"},
  };

  (void)state;
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    uint64_t ns = 12345;
    int r = ff_parse_duration(t[i].in, &ns);

    if (t[i].ns != UINT64_MAX) {
      if (r < 0)
        fail_msg("'%s': %s", t[i].in, ff_errmsg());
      if (ns != t[i].ns)
        fail_msg("'%s' gave %llu, expected %llu", t[i].in,
                 (unsigned long long)ns, (unsigned long long)t[i].ns);
    } else {
      if (r == 0)
        fail_msg("'%s' was accepted", t[i].in);
      if (!strstr(ff_errmsg(), t[i].msg))
        fail_msg("'%s': message '%s' lacks '%s'", t[i].in, ff_errmsg(),
                 t[i].msg);
    }
  }
}

/* ---- parsing ----------------------------------------------------------- */

static const char example[] =
  "# example\n"
  "name = \"hdd\";\n"
  "seed = 1;\n"
  "rotational = true;\n"
  "queue = { depth = 32; service = \"0.1ms\"; };\n"
  "groups = (\n"
  "  { devices = \"all\";\n"
  "    read  = { dist = \"lognormal\"; median = \"4ms\"; p99 = \"20ms\"; };\n"
  "    write = { dist = \"fixed\"; value = \"1ms\"; };\n"
  "    flush = { dist = \"uniform\"; min = \"1ms\"; max = \"3ms\"; };\n"
  "    spinup = \"500ms\";\n"
  "    stall = { every = \"10s\"; duration = \"200ms\"; };\n"
  "    queue = { depth = 1; service = \"2ms\"; shards = 4; };\n"
  "    bandwidth = \"200M\";\n"
  "    iops = 150;\n"
  "    direct_io = true;\n"
  "    faults = { eio_rate = 0.001;\n"
  "               eio_ranges = ( [\"0\", \"1M\"] );\n"
  "               vanish_at = \"30s\";\n"
  "               appear_at = \"5s\"; };\n"
  "  },\n"
  "  { devices = [\"pv0001\", \"pv0002\"]; direct_io = false; },\n"
  "  { devices = \"pv000*\"; fraction = 0.5;\n"
  "    read = { dist = \"pareto\"; scale = \"1ms\"; alpha = 1.5; }; },\n"
  "  { read = { dist = \"normal\"; mean = \"3ms\"; stddev = \"1ms\"; };\n"
  "    devices = \"pv0003\"; }\n"
  ");\n";

static void
test_example(void **state)
{
  struct ff_farm *farm = farm_n(8, 1);
  struct ff_iomodel *m = model(example, farm);
  unsigned pareto = 0;

  (void)state;
  assert_string_equal(ff_iomodel_profile_name(m), "hdd");
  assert_int_equal(ff_iomodel_rotational(m), 1);
  assert_int_equal(ff_iomodel_direct_io(m, 0), 1);
  assert_int_equal(ff_iomodel_direct_io(m, 1), 0);
  assert_int_equal(ff_iomodel_direct_io(m, 2), 0);
  assert_int_equal(ff_iomodel_direct_io(m, 3), 1);
  assert_int_equal(ff_iomodel_latency_quantile(m, 0, FF_OP_WRITE, 0.5),
                   1 * MS);
  assert_int_equal(ff_iomodel_latency_quantile(m, 0, FF_OP_FLUSH, 0.5),
                   2 * MS);
  /* normal: the mean is the median */
  assert_int_equal(ff_iomodel_latency_quantile(m, 3, FF_OP_READ, 0.5), 3 * MS);
  /* pareto: scale * 2^(1/alpha) is the median; half of pv0000..pv0007 */
  for (uint32_t d = 0; d < 8; d++) {
    uint64_t q = ff_iomodel_latency_quantile(m, d, FF_OP_READ, 0.5);

    if (d != 3 && q == (uint64_t)(1e6 * pow(2, 1 / 1.5) + 0.5))
      pareto++;
    else if (d != 3)
      assert_int_equal(q, 4 * MS);
  }
  assert_true(pareto >= 3 && pareto <= 4); /* 4 of 8, one may be pv0003 */
  assert_int_equal(ff_iomodel_present(m, 0, T0), 0);
  assert_int_equal(ff_iomodel_present(m, 0, T0 + 5 * SEC), 1);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

static void
test_defaults(void **state)
{
  struct ff_farm *farm = farm_n(3, 1);
  struct ff_profile *p = load("", farm);
  struct ff_iomodel *m;
  struct ff_io_decision d;

  (void)state;
  assert_string_equal(ff_profile_name(p), "t");
  m = ff_iomodel_new(farm, p, T0);
  assert_nonnull_err(m);
  assert_int_equal(ff_iomodel_rotational(m), 0);
  assert_int_equal(ff_iomodel_direct_io(m, 2), 1);
  assert_int_equal(ff_iomodel_present(m, 2, 0), 1);
  d = sub(m, 1, FF_OP_READ, 0, 4096, T0 + 5);
  assert_int_equal(d.done_ns, T0 + 5);
  assert_int_equal(d.error, 0);
  ff_iomodel_free(m);

  p = ff_profile_load_string("", "/x/y/slow.conf", farm);
  assert_nonnull_err(p);
  assert_string_equal(ff_profile_name(p), "slow");
  ff_profile_free(p);
  p = ff_profile_load_string("", "plain", farm);
  assert_nonnull_err(p);
  assert_string_equal(ff_profile_name(p), "plain");
  ff_profile_free(p);
  ff_farm_free(farm);
}

static void
test_ideal(void **state)
{
  struct ff_farm *farm = farm_n(4, 1);
  struct ff_iomodel *m = ff_iomodel_new(farm, NULL, T0);
  struct ff_io_decision d;
  unsigned char slow[4];

  (void)state;
  assert_nonnull_err(m);
  assert_string_equal(ff_iomodel_profile_name(m), "ideal");
  for (int i = 0; i < 1000; i++) {
    d = sub(m, (uint32_t)i % 4, (enum ff_op)(i % 3), (uint64_t)i * 4096, 4096,
            T0 + (uint64_t)i);
    assert_int_equal(d.done_ns, T0 + (uint64_t)i);
    assert_int_equal(d.error, 0);
  }
  assert_int_equal(ff_iomodel_direct_io(m, 0), 1);
  assert_int_equal(ff_iomodel_rotational(m), 0);
  assert_int_equal(ff_iomodel_latency_quantile(m, 0, FF_OP_READ, 0.99), 0);
  memset(slow, 7, sizeof slow);
  assert_int_equal(ff_iomodel_slow_devices(m, slow), 0);
  assert_memory_equal(slow, "\0\0\0\0", 4);
  d = sub(m, 4, FF_OP_READ, 0, 1, T0); /* no such device */
  assert_int_equal(d.error, ENODEV);
  assert_int_equal(d.injected, 0);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

static void
test_shipped(void **state)
{
  static const char *const want[] = {"ssd", "hdd", "san-congested",
                                     "slow-tail", "flaky"};
  struct ff_farm *farm = farm_n(300, 5);
  char dir[4096], pat[4200];
  glob_t g;
  unsigned found = 0;

  (void)state;
  source_dir(dir, sizeof dir);
  snprintf(pat, sizeof pat, "%s/configs/profiles/*.conf", dir);
  if (glob(pat, 0, NULL, &g) != 0)
    fail_msg("no profiles match %s (set FF_SOURCE_DIR)", pat);
  for (size_t i = 0; i < g.gl_pathc; i++) {
    struct ff_profile *p = ff_profile_load_file(g.gl_pathv[i], farm);
    struct ff_iomodel *m;
    const char *base = strrchr(g.gl_pathv[i], '/') + 1;

    if (!p)
      fail_msg("%s", ff_errmsg());
    assert_int_equal(
      strncmp(ff_profile_name(p), base, strlen(ff_profile_name(p))), 0);
    for (size_t w = 0; w < sizeof want / sizeof *want; w++)
      if (!strcmp(ff_profile_name(p), want[w]))
        found |= 1u << w;
    m = ff_iomodel_new(farm, p, T0);
    assert_nonnull_err(m);
    for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++)
      sub(m, d, FF_OP_READ, 0, 65536, T0 + 6 * SEC);
    ff_iomodel_free(m);
  }
  globfree(&g);
  assert_int_equal(found, (1u << (sizeof want / sizeof *want)) - 1);

  /* What the shipped profiles promise. */
  {
    struct ff_profile *p;
    struct ff_iomodel *m;
    unsigned slow = 0;
    unsigned char marks[300];

    snprintf(pat, sizeof pat, "%s/configs/profiles/hdd.conf", dir);
    p = ff_profile_load_file(pat, farm);
    assert_nonnull_err(p);
    m = ff_iomodel_new(farm, p, T0);
    assert_int_equal(ff_iomodel_rotational(m), 1);
    assert_int_equal(ff_iomodel_latency_quantile(m, 7, FF_OP_READ, 0.5),
                     4 * MS);
    /* the same latency everywhere: no device is slow */
    assert_int_equal(ff_iomodel_slow_devices(m, marks), 0);
    ff_iomodel_free(m);

    snprintf(pat, sizeof pat, "%s/configs/profiles/ssd.conf", dir);
    p = ff_profile_load_file(pat, farm);
    assert_nonnull_err(p);
    m = ff_iomodel_new(farm, p, T0);
    assert_int_equal(ff_iomodel_rotational(m), 0);
    assert_int_equal(ff_iomodel_latency_quantile(m, 7, FF_OP_READ, 0.5),
                     100000);
    ff_iomodel_free(m);

    snprintf(pat, sizeof pat, "%s/configs/profiles/slow-tail.conf", dir);
    p = ff_profile_load_file(pat, farm);
    assert_nonnull_err(p);
    m = ff_iomodel_new(farm, p, T0);
    assert_int_equal(ff_iomodel_slow_devices(m, marks), 3);
    for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++) {
      int tail = ff_iomodel_latency_quantile(m, d, FF_OP_READ, 0.5) >= 10 * MS;

      slow += tail;
      /* the slow devices are exactly the fraction group's */
      assert_int_equal(marks[d], tail);
    }
    assert_int_equal(slow, 3); /* 1% of 300 */
    ff_iomodel_free(m);
  }
  ff_farm_free(farm);
}

static void
test_bad(void **state)
{
  static const struct {
    const char *text;
    const char *msg[2];
  } t[] = {
    {"nmae = \"x\";", {"t.conf:1: nmae: unknown key", "expected one of"}},
    {"name = ;", {"t.conf:1: syntax error", NULL}},
    /* libconfig 1.5 would read 4294967297 as 1. */
    {"seed = 4294967297;",
     {"t.conf:1: syntax error: integer 4294967297 is out of range",
      "write 4294967297L"}},
    {"groups = ({ bandwidth = \"1.5M\"; });",
     {"groups.[0].bandwidth: '1.5M' is not a whole number", NULL}},
    {"name = \"\";", {"t.conf:1: name: expected a non-empty string", NULL}},
    {"rotational = 1;", {"rotational: expected true or false", NULL}},
    {"seed = \"x\";", {"seed: expected an integer", NULL}},
    {"groups = { a = 1; };", {"groups: expected a list of groups", NULL}},
    {"groups = ( 1 );", {"groups.[0]: expected a group", NULL}},
    {"groups = ({ colour = 1; });",
     {"groups.[0].colour: unknown key", "devices, fraction, read"}},
    {"groups = ({\n read = { dist = \"lognormal\"; median = \"4\"; "
     "p99 = \"20ms\"; };\n});",
     {"t.conf:2: groups.[0].read.median: '4' has no unit", NULL}},
    {"groups = ({ read = { dist = \"lognormal\"; median = 4; p99 = \"1s\"; "
     "}; });",
     {"groups.[0].read.median: expected a duration string with a unit", NULL}},
    {"groups = ({ write = { dist = \"fixed\"; value = \"4xs\"; }; });",
     {"groups.[0].write.value: '4xs' has an unknown unit 'xs'", NULL}},
    {"seed = 1;\ngroups = ({\n  read = { dist = \"gamma\"; };\n});",
     {"t.conf:3: groups.[0].read.dist: unknown distribution 'gamma'",
      "fixed, uniform, normal, lognormal or pareto"}},
    {"groups = ({ read = { median = \"1ms\"; p99 = \"2ms\"; }; });",
     {"groups.[0].read.dist: missing", NULL}},
    {"groups = ({ read = \"1ms\"; });",
     {"groups.[0].read: expected a group such as", NULL}},
    {"groups = ({ read = { dist = \"lognormal\"; median = \"20ms\"; "
     "p99 = \"4ms\"; }; });",
     {"groups.[0].read: median 20000000 ns must be below p99", NULL}},
    {"groups = ({ read = { dist = \"uniform\"; median = \"4ms\"; "
     "p99 = \"4ms\"; }; });",
     {"groups.[0].read: median 4000000 ns must be below p99", NULL}},
    {"groups = ({ read = { dist = \"lognormal\"; median = \"0ms\"; "
     "p99 = \"4ms\"; }; });",
     {"groups.[0].read: median must be positive", NULL}},
    {"groups = ({ read = { dist = \"lognormal\"; value = \"4ms\"; }; });",
     {"groups.[0].read.value: unknown key", "dist, mu, sigma, median, p99"}},
    {"groups = ({ read = { dist = \"pareto\"; median = \"4ms\"; }; });",
     {"groups.[0].read: median needs p99 too", NULL}},
    {"groups = ({ read = { dist = \"normal\"; stddev = \"4ms\"; }; });",
     {"groups.[0].read: stddev needs mean too", NULL}},
    {"groups = ({ read = { dist = \"lognormal\"; mu = -5.0; sigma = 1.0; "
     "median = \"1ms\"; p99 = \"2ms\"; }; });",
     {"groups.[0].read: give either mu and sigma, or median and p99", NULL}},
    {"groups = ({ read = { dist = \"pareto\"; }; });",
     {"groups.[0].read: missing parameters", "scale and alpha"}},
    {"groups = ({ read = { dist = \"fixed\"; }; });",
     {"groups.[0].read.value: missing", NULL}},
    {"groups = ({ read = { dist = \"uniform\"; min = \"2ms\"; "
     "max = \"1ms\"; }; });",
     {"groups.[0].read: min must not be above max", NULL}},
    {"groups = ({ read = { dist = \"pareto\"; scale = \"1ms\"; alpha = 0; "
     "}; });",
     {"groups.[0].read.alpha: 0 is out of range", NULL}},
    {"groups = ({ devices = [\"pv0001\", \"pv9999\"]; });",
     {"groups.[0].devices: no device 'pv9999' in the farm", NULL}},
    {"groups = ({ devices = \"pv9999\"; });",
     {"groups.[0].devices: no device 'pv9999' in the farm", NULL}},
    {"groups = ({ devices = \"zz*\"; });",
     {"groups.[0].devices: 'zz*' matches no device of the farm", NULL}},
    {"groups = ({ devices = 3; });",
     {"groups.[0].devices: expected \"all\", a glob", NULL}},
    {"groups = ({ devices = []; });",
     {"groups.[0].devices: the list is empty", NULL}},
    {"groups = ({ fraction = 1.5; });",
     {"groups.[0].fraction: 1.5 is out of range (expected 0 to 1)", NULL}},
    {"groups = ({ fraction = -0.1; });",
     {"groups.[0].fraction: -0.1 is out of range", NULL}},
    {"queue = { depth = 0; service = \"1ms\"; };",
     {"t.conf:1: queue.depth: 0 is out of range", NULL}},
    {"groups = ({ queue = { depth = 2; }; });",
     {"groups.[0].queue.service: missing", NULL}},
    {"groups = ({ queue = { depth = 2; service = \"1ms\"; shards = 0; }; "
     "});",
     {"groups.[0].queue.shards: 0 is out of range", NULL}},
    {"groups = ({ queue = { depth = 65536; service = \"1ms\"; "
     "shards = 65536; }; });",
     {"groups.[0].queue: depth 65536 x shards 65536 is too many", NULL}},
    {"groups = ({ queue = { depth = 2; service = \"1ms\"; lanes = 1; }; });",
     {"groups.[0].queue.lanes: unknown key", NULL}},
    {"groups = ({ stall = { every = \"1s\"; duration = \"1s\"; }; });",
     {"groups.[0].stall: duration must be positive and shorter than every",
      NULL}},
    {"groups = ({ stall = { every = \"1s\"; }; });",
     {"groups.[0].stall.duration: missing", NULL}},
    {"groups = ({ spinup = \"1.5\"; });",
     {"groups.[0].spinup: '1.5' has no unit", NULL}},
    {"groups = ({ bandwidth = \"200Q\"; });",
     {"groups.[0].bandwidth: '200Q' has an unknown unit", NULL}},
    {"groups = ({ iops = \"fast\"; });",
     {"groups.[0].iops: expected a number", NULL}},
    {"groups = ({ iops = -1; });",
     {"groups.[0].iops: -1 is out of range", NULL}},
    /* 10^9 / 1e-20 ns does not fit a uint64_t (UB; found by review
     * while fuzzing). */
    {"groups = ({ iops = 1e-20; });",
     {"groups.[0].iops: 1e-20 is out of range (expected 0 for no cap", NULL}},
    {"groups = ({ direct_io = 1; });",
     {"groups.[0].direct_io: expected true or false", NULL}},
    {"groups = ({ faults = { eio_rate = 2.0; }; });",
     {"groups.[0].faults.eio_rate: 2 is out of range", NULL}},
    {"groups = ({ faults = { eio_ranges = [\"0\", \"1M\"]; }; });",
     {"groups.[0].faults.eio_ranges: expected a list of [offset, length]",
      NULL}},
    {"groups = ({ faults = { eio_ranges = ( [\"0\"] ); }; });",
     {"groups.[0].faults.eio_ranges.[0]: expected an [offset, length] pair",
      NULL}},
    {"groups = ({ faults = { eio_ranges = ( [\"0\", \"0\"] ); }; });",
     {"groups.[0].faults.eio_ranges.[0]: the length must be positive", NULL}},
    {"groups = ({ faults = { eio_ranges = ( [\"x\", \"1M\"] ); }; });",
     {"groups.[0].faults.eio_ranges.[0]: 'x' is not a size", NULL}},
    {"groups = ({ faults = { vanish_at = 30; }; });",
     {"groups.[0].faults.vanish_at: expected a duration string", NULL}},
    {"groups = ({ faults = { crash = true; }; });",
     {"groups.[0].faults.crash: unknown key", "vanish_after, eio_after"}},
    {"groups = ({\n faults = { vanish_after = -1; }; });",
     {"t.conf:2: groups.[0].faults.vanish_after: -1 is out of range",
      "expected 0 to 1000000000000000000"}},
    {"groups = ({ faults = { vanish_after = 1000000000000000001L; }; });",
     {"groups.[0].faults.vanish_after: 1000000000000000001 is out of range",
      NULL}},
    {"groups = ({ faults = { vanish_after = \"10\"; }; });",
     {"groups.[0].faults.vanish_after: expected an integer", NULL}},
    {"groups = ({ faults = { vanish_after = 2.5; }; });",
     {"groups.[0].faults.vanish_after: expected an integer", NULL}},
    {"groups = ({ faults = { eio_after = -5; }; });",
     {"groups.[0].faults.eio_after: -5 is out of range", NULL}},
    {"groups = ({ faults = { eio_after = true; }; });",
     {"groups.[0].faults.eio_after: expected an integer", NULL}},
    {"groups = ({ write_cache = 1; });",
     {"groups.[0].write_cache: expected true, false or a group", NULL}},
    {"groups = ({ write_cache = { size = \"32Q\"; }; });",
     {"groups.[0].write_cache.size: '32Q' has an unknown unit", NULL}},
    {"groups = ({ write_cache = { sise = \"32M\"; }; });",
     {"groups.[0].write_cache.sise: unknown key", NULL}},
    {"groups = ({ read = { dist = \"fixed\"; value = \"1ms\"; }; },\n"
     "          { devices = \"nope\"; });",
     {"t.conf:2: groups.[1].devices: no device 'nope'", NULL}},
  };
  struct ff_farm *farm = farm_n(4, 1);

  (void)state;
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    struct ff_profile *p = ff_profile_load_string(t[i].text, "t.conf", farm);

    if (p)
      fail_msg("case %zu was accepted: %s", i, t[i].text);
    for (int k = 0; k < 2; k++)
      if (t[i].msg[k] && !strstr(ff_errmsg(), t[i].msg[k]))
        fail_msg("case %zu: message '%s' lacks '%s'", i, ff_errmsg(),
                 t[i].msg[k]);
  }
  assert_null(ff_profile_load_file("/nonexistent/p.conf", farm));
  assert_non_null(strstr(ff_errmsg(), "/nonexistent/p.conf: cannot read"));
  ff_farm_free(farm);
}

static void
test_wrong_farm(void **state)
{
  struct ff_farm *a = farm_n(4, 1), *b = farm_n(5, 1);
  struct ff_profile *p = load("", a);
  struct ff_iomodel *m;

  (void)state;
  assert_null(ff_iomodel_new(b, p, T0)); /* p is freed */
  assert_non_null(strstr(ff_errmsg(), "loaded for another farm"));
  m = ff_iomodel_new(b, NULL, T0);
  assert_nonnull_err(m);
  assert_int_equal(ff_iomodel_set_profile(m, load("", a), T0), -1);
  assert_string_equal(ff_iomodel_profile_name(m), "ideal");
  ff_iomodel_free(m);
  ff_farm_free(a);
  ff_farm_free(b);
}

/* Later groups override only the keys they give, on their devices. */
static void
test_merge(void **state)
{
  static const char text[] =
    "groups = (\n"
    "  { read = { dist = \"fixed\"; value = \"1ms\"; };\n"
    "    write = { dist = \"fixed\"; value = \"2ms\"; };\n"
    "    faults = { eio_rate = 0.5; vanish_at = \"10s\"; }; },\n"
    "  { devices = \"pv0001\";\n"
    "    read = { dist = \"fixed\"; value = \"100ms\"; };\n"
    "    faults = { eio_rate = 0.0; }; }\n"
    ");\n";
  struct ff_farm *farm = farm_n(3, 1);
  struct ff_iomodel *m = model(text, farm);
  struct ff_io_decision d;
  unsigned char slow[3];

  (void)state;
  assert_int_equal(ff_iomodel_latency_quantile(m, 0, FF_OP_READ, 0.5), 1 * MS);
  assert_int_equal(ff_iomodel_latency_quantile(m, 1, FF_OP_READ, 0.5),
                   100 * MS);
  assert_int_equal(ff_iomodel_latency_quantile(m, 1, FF_OP_WRITE, 0.5),
                   2 * MS);
  /* slower reads alone make pv0001 slow */
  assert_int_equal(ff_iomodel_slow_devices(m, slow), 1);
  assert_memory_equal(slow, "\0\1\0", 3);
  for (int i = 0; i < 100; i++) {
    d = sub(m, 1, FF_OP_READ, 0, 512, T0 + (uint64_t)i);
    assert_int_equal(d.error, 0);
  }
  d = sub(m, 1, FF_OP_READ, 0, 512, T0 + 10 * SEC); /* vanish_at kept */
  assert_int_equal(d.error, ENODEV);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

/* ---- distributions ----------------------------------------------------- */

static int
cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

  return x < y ? -1 : x > y;
}

static void
check_close(const char *what, double got, double want, double tol)
{
  if (fabs(got - want) > tol * want)
    fail_msg("%s: %.0f, expected %.0f within %.1f%%", what, got, want,
             tol * 100);
}

static void
test_distributions(void **state)
{
  static const struct {
    const char *dist;
    uint64_t median, p99;
  } t[] = {
    {"uniform", 4 * MS, 6 * MS},    {"normal", 10 * MS, 20 * MS},
    {"lognormal", 4 * MS, 20 * MS}, {"pareto", 4 * MS, 20 * MS},
    {"lognormal", 100000, 500000},  {"normal", 4 * MS, 20 * MS},
  };
  enum { N = 200000 };
  struct ff_farm *farm = farm_n(4, 1);
  uint64_t *v = malloc(N * sizeof *v);

  (void)state;
  assert_non_null(v);
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    char text[256], what[64];
    struct ff_iomodel *m;

    snprintf(text, sizeof text,
             "groups = ({ read = { dist = \"%s\"; median = \"%lluns\"; "
             "p99 = \"%lluns\"; }; });",
             t[i].dist, (unsigned long long)t[i].median,
             (unsigned long long)t[i].p99);
    m = model(text, farm);
    for (int k = 0; k < N; k++) {
      uint64_t now = T0 + (uint64_t)k * 1000;
      struct ff_io_decision d =
        sub(m, (uint32_t)k % 4, FF_OP_READ, 0, 4096, now);

      v[k] = d.done_ns - now;
    }
    qsort(v, N, sizeof *v, cmp_u64);
    snprintf(what, sizeof what, "%s median", t[i].dist);
    check_close(what, (double)v[N / 2], (double)t[i].median, 0.03);
    snprintf(what, sizeof what, "%s p99", t[i].dist);
    check_close(what, (double)v[N * 99 / 100], (double)t[i].p99, 0.03);
    for (uint32_t d = 0; d < 4; d++) {
      check_close("quantile(0.5)",
                  (double)ff_iomodel_latency_quantile(m, d, FF_OP_READ, 0.5),
                  (double)t[i].median, 1e-6);
      check_close("quantile(0.99)",
                  (double)ff_iomodel_latency_quantile(m, d, FF_OP_READ, 0.99),
                  (double)t[i].p99, 1e-6);
    }
    ff_iomodel_free(m);
  }
  free(v);
  ff_farm_free(farm);
}

/* The native parameters: quantiles in closed form. */
static void
test_native_params(void **state)
{
  static const char text[] =
    "groups = (\n"
    " { devices = \"pv0000\";\n"
    "   read = { dist = \"lognormal\"; mu = -6.0; sigma = 0.5; };\n"
    "   write = { dist = \"pareto\"; scale = \"2ms\"; alpha = 2.0; };\n"
    "   flush = { dist = \"normal\"; mean = \"5ms\"; stddev = \"1ms\"; }; },\n"
    " { devices = \"pv0001\";\n"
    "   read = { dist = \"uniform\"; min = \"1ms\"; max = \"3ms\"; };\n"
    "   write = { dist = \"normal\"; mean = \"1ms\"; stddev = \"10ms\"; }; }\n"
    ");\n";
  struct ff_farm *farm = farm_n(2, 1);
  struct ff_iomodel *m = model(text, farm);

  (void)state;
  check_close("lognormal q50",
              (double)ff_iomodel_latency_quantile(m, 0, FF_OP_READ, 0.5),
              exp(-6.0) * 1e9, 1e-6);
  check_close("lognormal q99",
              (double)ff_iomodel_latency_quantile(m, 0, FF_OP_READ, 0.99),
              exp(-6.0 + 0.5 * 2.3263478740408408) * 1e9, 1e-6);
  check_close("pareto q50",
              (double)ff_iomodel_latency_quantile(m, 0, FF_OP_WRITE, 0.5),
              2e6 * sqrt(2.0), 1e-6);
  check_close("pareto q99",
              (double)ff_iomodel_latency_quantile(m, 0, FF_OP_WRITE, 0.99),
              2e6 * 10.0, 1e-6);
  assert_int_equal(ff_iomodel_latency_quantile(m, 0, FF_OP_WRITE, 0.0),
                   2 * MS);
  check_close(
    "normal q84",
    (double)ff_iomodel_latency_quantile(m, 0, FF_OP_FLUSH, 0.8413447460685429),
    6e6, 1e-6);
  assert_int_equal(ff_iomodel_latency_quantile(m, 1, FF_OP_READ, 0.25),
                   1500000);
  /* clamped at 0 */
  assert_int_equal(ff_iomodel_latency_quantile(m, 1, FF_OP_WRITE, 0.1), 0);
  /* clamped at 1 h */
  assert_int_equal(ff_iomodel_latency_quantile(m, 0, FF_OP_WRITE, 1.0),
                   3600 * SEC);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

/* ---- determinism ------------------------------------------------------- */

static const char busy[] =
  "seed = %d;\n"
  "queue = { depth = 4; service = \"50us\"; };\n"
  "groups = ({ read = { dist = \"lognormal\"; median = \"1ms\"; "
  "p99 = \"9ms\"; };\n"
  "  write = { dist = \"pareto\"; median = \"2ms\"; p99 = \"30ms\"; };\n"
  "  flush = { dist = \"normal\"; median = \"2ms\"; p99 = \"3ms\"; };\n"
  "  queue = { depth = 2; service = \"100us\"; shards = 3; };\n"
  "  bandwidth = \"100M\"; iops = 5000; spinup = \"10ms\";\n"
  "  stall = { every = \"1s\"; duration = \"10ms\"; };\n"
  "  faults = { eio_rate = 0.05; eio_ranges = ( [\"1M\", \"64K\"] ); }; });\n";

static void
run_sequence(struct ff_iomodel *m, struct ff_io_decision *out, int n)
{
  for (int i = 0; i < n; i++) {
    uint32_t dev = (uint32_t)(i * 7) % 6;
    enum ff_op op = (enum ff_op)(i % 3);

    ff_iomodel_submit(m, dev, op, (uint64_t)(i % 64) * 65536, 65536,
                      T0 + (uint64_t)i * 200000, &out[i]);
  }
}

static void
test_determinism(void **state)
{
  enum { N = 5000 };
  struct ff_farm *farm = farm_n(6, 3);
  struct ff_io_decision *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
  char text[1024];
  struct ff_iomodel *m1, *m2;
  int differ = 0, eio = 0;

  (void)state;
  snprintf(text, sizeof text, busy, 1);
  m1 = model(text, farm);
  m2 = model(text, farm);
  run_sequence(m1, a, N);
  run_sequence(m2, b, N);
  for (int i = 0; i < N; i++) {
    assert_int_equal(a[i].done_ns, b[i].done_ns);
    assert_int_equal(a[i].error, b[i].error);
    assert_int_equal(a[i].injected, b[i].injected);
    eio += a[i].error == EIO;
  }
  assert_true(eio > 0);
  ff_iomodel_free(m2);
  snprintf(text, sizeof text, busy, 2);
  m2 = model(text, farm);
  run_sequence(m2, b, N);
  for (int i = 0; i < N; i++)
    differ += a[i].done_ns != b[i].done_ns || a[i].error != b[i].error;
  assert_true(differ > N / 2);
  ff_iomodel_free(m1);
  ff_iomodel_free(m2);
  free(a);
  free(b);
  ff_farm_free(farm);
}

/* ---- queues, caps, stalls, spin-up ------------------------------------- */

static void
test_queue(void **state)
{
  struct ff_farm *farm = farm_n(8, 1);
  const uint64_t S = 2 * MS, now = T0 + SEC;
  struct ff_iomodel *m;
  struct ff_io_decision d;

  (void)state;
  /* depth 1: one after another, whichever device */
  m =
    model("groups = ({ queue = { depth = 1; service = \"2ms\"; }; });", farm);
  for (uint64_t i = 0; i < 10; i++) {
    d = sub(m, (uint32_t)i % 8, FF_OP_READ, 0, 4096, now);
    assert_int_equal(d.done_ns, now + (i + 1) * S);
  }
  /* a request after the queue drained waits only its service */
  d = sub(m, 0, FF_OP_READ, 0, 4096, now + 100 * S);
  assert_int_equal(d.done_ns, now + 101 * S);
  ff_iomodel_free(m);

  /* depth 64: all at S, the 65th at 2S */
  m =
    model("groups = ({ queue = { depth = 64; service = \"2ms\"; }; });", farm);
  for (int i = 0; i < 64; i++) {
    d = sub(m, (uint32_t)i % 8, FF_OP_WRITE, 0, 4096, now);
    assert_int_equal(d.done_ns, now + S);
  }
  d = sub(m, 0, FF_OP_WRITE, 0, 4096, now);
  assert_int_equal(d.done_ns, now + 2 * S);
  ff_iomodel_free(m);

  /* shards = 2: even and odd devices queue apart */
  m = model("groups = ({ queue = { depth = 1; service = \"2ms\"; "
            "shards = 2; }; });",
            farm);
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now).done_ns, now + S);
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 1, now).done_ns, now + S);
  assert_int_equal(sub(m, 2, FF_OP_READ, 0, 1, now).done_ns, now + 2 * S);
  assert_int_equal(sub(m, 5, FF_OP_READ, 0, 1, now).done_ns, now + 2 * S);
  assert_int_equal(sub(m, 4, FF_OP_READ, 0, 1, now).done_ns, now + 3 * S);
  ff_iomodel_free(m);

  /* a group's queue holds only its devices; the global queue all */
  m = model("queue = { depth = 1; service = \"1ms\"; };\n"
            "groups = ({ devices = [\"pv0000\", \"pv0001\"];\n"
            "  queue = { depth = 1; service = \"2ms\"; }; });",
            farm);
  /* pv0000: global 0..1ms, group 1..3ms */
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now).done_ns, now + 3 * MS);
  /* pv0001: global 1..2ms, group 3..5ms */
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 1, now).done_ns, now + 5 * MS);
  /* pv0005: global 2..3ms only */
  assert_int_equal(sub(m, 5, FF_OP_READ, 0, 1, now).done_ns, now + 3 * MS);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

static void
test_caps(void **state)
{
  struct ff_farm *farm = farm_n(2, 1);
  const uint64_t now = T0 + SEC;
  struct ff_iomodel *m;

  (void)state;
  /* 1 MiB/s, 4 KiB requests: 3906250 ns apart */
  m = model("groups = ({ bandwidth = \"1M\"; });", farm);
  for (uint64_t i = 0; i < 10; i++)
    assert_int_equal(sub(m, 0, FF_OP_READ, 0, 4096, now).done_ns,
                     now + i * 3906250);
  /* the other device has its own bucket */
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 4096, now).done_ns, now);
  /* flushes move no bytes */
  assert_int_equal(sub(m, 1, FF_OP_FLUSH, 0, 0, now).done_ns, now + 3906250);
  assert_int_equal(sub(m, 1, FF_OP_FLUSH, 0, 0, now).done_ns, now + 3906250);
  /* an idle device does not bank tokens */
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 4096, now + 100 * SEC).done_ns,
                   now + 100 * SEC);
  ff_iomodel_free(m);

  /* 150 IOPS: 6666667 ns apart */
  m = model("groups = ({ iops = 150; });", farm);
  for (uint64_t i = 0; i < 10; i++)
    assert_int_equal(sub(m, 1, FF_OP_WRITE, 0, 512, now).done_ns,
                     now + i * 6666667);
  ff_iomodel_free(m);

  /* both: every request waits for the tighter of the two */
  m = model("groups = ({ iops = 1000; bandwidth = \"1M\"; });", farm);
  for (uint64_t i = 0; i < 5; i++) /* 512 B: 488281 ns, IOPS bind */
    assert_int_equal(sub(m, 0, FF_OP_READ, 0, 512, now).done_ns, now + i * MS);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

/* A write cache moves the write latency from the writes to the next
 * flush; a full cache writes through; FUA is the plugin's business. */
static void
test_write_cache(void **state)
{
  struct ff_farm *farm = farm_n(3, 1);
  const uint64_t now = T0 + SEC;
  struct ff_iomodel *m;

  (void)state;
  m = model("groups = ({ write = { dist = \"fixed\"; value = \"2ms\"; };\n"
            "             flush = { dist = \"fixed\"; value = \"1ms\"; };\n"
            "             write_cache = true; },\n"
            "           { devices = \"pv0001\";\n"
            "             write_cache = { size = \"8K\"; }; },\n"
            "           { devices = \"pv0002\"; write_cache = false; });",
            farm);
  assert_int_equal(ff_iomodel_write_cache(m, 0), 1);
  assert_int_equal(ff_iomodel_write_cache(m, 1), 1);
  assert_int_equal(ff_iomodel_write_cache(m, 2), 0);
  assert_int_equal(ff_iomodel_write_cache(m, 99), 0);
  /* three cached writes answered at once; the flush pays 3 x 2 ms + 1 ms */
  for (int i = 0; i < 3; i++)
    assert_int_equal(sub(m, 0, FF_OP_WRITE, 0, 4096, now).done_ns, now);
  assert_int_equal(sub(m, 0, FF_OP_FLUSH, 0, 0, now).done_ns, now + 7 * MS);
  /* the flush emptied the cache: the next one pays its own latency only */
  assert_int_equal(sub(m, 0, FF_OP_FLUSH, 0, 0, now).done_ns, now + MS);
  /* reads are not cached */
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 4096, now).done_ns, now);
  /* 8 KiB of cache: two 4 KiB writes fit, the third writes through */
  assert_int_equal(sub(m, 1, FF_OP_WRITE, 0, 4096, now).done_ns, now);
  assert_int_equal(sub(m, 1, FF_OP_WRITE, 4096, 4096, now).done_ns, now);
  assert_int_equal(sub(m, 1, FF_OP_WRITE, 8192, 4096, now).done_ns,
                   now + 2 * MS);
  assert_int_equal(sub(m, 1, FF_OP_FLUSH, 0, 0, now).done_ns, now + 5 * MS);
  /* ... and after the flush there is room again */
  assert_int_equal(sub(m, 1, FF_OP_WRITE, 0, 8192, now).done_ns, now);
  assert_int_equal(sub(m, 1, FF_OP_WRITE, 0, 1, now).done_ns, now + 2 * MS);
  /* a later group turned the cache off: writes pay, flushes are cheap */
  assert_int_equal(sub(m, 2, FF_OP_WRITE, 0, 4096, now).done_ns, now + 2 * MS);
  assert_int_equal(sub(m, 2, FF_OP_FLUSH, 0, 0, now).done_ns, now + MS);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

static void
test_stall(void **state)
{
  struct ff_farm *farm = farm_n(2, 1);
  struct ff_iomodel *m =
    model("groups = ({ stall = { every = \"10s\"; duration = \"200ms\"; };\n"
          "  read = { dist = \"fixed\"; value = \"1ms\"; }; });",
          farm);
  static const struct {
    uint64_t at, done; /* relative to T0 */
  } t[] = {
    {100 * MS, 101 * MS},            /* no window at the origin */
    {5 * SEC, 5 * SEC + MS},         /* between windows */
    {10 * SEC, 10 * SEC + 201 * MS}, /* window opens */
    {10 * SEC + 50 * MS, 10 * SEC + 201 * MS},
    {10 * SEC + 199 * MS, 10 * SEC + 201 * MS},
    {10 * SEC + 200 * MS, 10 * SEC + 201 * MS}, /* window closed */
    {30 * SEC + 100 * MS, 30 * SEC + 201 * MS},
  };

  (void)state;
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, T0 + t[i].at).done_ns,
                     T0 + t[i].done);
  /* a request before the origin (a stale timestamp) is not stalled */
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 1, T0 - SEC).done_ns,
                   T0 - SEC + MS);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

static void
test_spinup(void **state)
{
  struct ff_farm *farm = farm_n(2, 1);
  struct ff_iomodel *m =
    model("groups = ({ spinup = \"500ms\";\n"
          "  read = { dist = \"fixed\"; value = \"1ms\"; }; });",
          farm);
  uint64_t now = T0 + SEC;

  (void)state;
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now).done_ns, now + 501 * MS);
  /* arriving while it spins up: waits for the end of spin-up */
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now + 10 * MS).done_ns,
                   now + 501 * MS);
  /* afterwards: only the latency */
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now + SEC).done_ns,
                   now + SEC + MS);
  /* the other device spins up on its own first access */
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 1, now + SEC).done_ns,
                   now + SEC + 501 * MS);
  /* a new profile (even the same one) spins every device up again */
  assert_ok(ff_iomodel_set_profile(
    m,
    load("groups = ({ spinup = \"500ms\";\n"
         "  read = { dist = \"fixed\"; value = \"1ms\"; }; });",
         farm),
    now + 2 * SEC));
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now + 3 * SEC).done_ns,
                   now + 3 * SEC + 501 * MS);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

/* ---- faults ------------------------------------------------------------ */

static void
test_vanish_appear(void **state)
{
  struct ff_farm *farm = farm_n(3, 1);
  struct ff_iomodel *m =
    model("groups = ({ devices = \"pv0001\";\n"
          "  read = { dist = \"fixed\"; value = \"1ms\"; };\n"
          "  faults = { appear_at = \"5s\"; vanish_at = \"30s\"; }; });",
          farm);
  struct ff_io_decision d;

  (void)state;
  assert_int_equal(ff_iomodel_present(m, 1, T0), 0);
  assert_int_equal(ff_iomodel_present(m, 1, T0 + 4 * SEC), 0);
  assert_int_equal(ff_iomodel_present(m, 0, T0), 1);
  d = sub(m, 1, FF_OP_READ, 0, 1, T0 + SEC);
  assert_int_equal(d.error, ENODEV);
  assert_int_equal(d.injected, 1);
  assert_int_equal(d.done_ns, T0 + SEC);
  assert_int_equal(ff_iomodel_present(m, 1, T0 + 5 * SEC), 1);
  d = sub(m, 1, FF_OP_READ, 0, 1, T0 + 10 * SEC);
  assert_int_equal(d.error, 0);
  assert_int_equal(d.done_ns, T0 + 10 * SEC + MS);
  d = sub(m, 1, FF_OP_WRITE, 0, 1, T0 + 30 * SEC);
  assert_int_equal(d.error, ENODEV);
  assert_int_equal(d.injected, 1);
  assert_int_equal(d.done_ns, T0 + 30 * SEC);
  assert_int_equal(ff_iomodel_present(m, 1, T0 + 40 * SEC), 1);
  d = sub(m, 0, FF_OP_READ, 0, 1, T0 + 40 * SEC);
  assert_int_equal(d.error, 0);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

/* vanish_after and eio_after count each device's requests from the
 * profile's application, in decision order: request N succeeds, N+1
 * fails. */
static void
test_vanish_after(void **state)
{
  static const char text[] =
    "groups = ({ read = { dist = \"fixed\"; value = \"1ms\"; };\n"
    "            write = { dist = \"fixed\"; value = \"2ms\"; }; },\n"
    "  { devices = \"pv0000\"; faults = { vanish_after = 0; }; },\n"
    "  { devices = \"pv0001\"; faults = { vanish_after = 3; }; },\n"
    "  { devices = \"pv0002\"; faults = { eio_after = 2; }; },\n"
    "  { devices = \"pv0003\";\n"
    "    faults = { eio_after = 1; vanish_after = 2; appear_at = \"5s\"; "
    "}; });";
  struct ff_farm *farm = farm_n(5, 1);
  struct ff_iomodel *m = model(text, farm);
  struct ff_io_decision d;
  uint64_t now = T0 + SEC;

  (void)state;
  /* 0: vanished from its first request */
  d = sub(m, 0, FF_OP_READ, 0, 512, now);
  assert_int_equal(d.error, ENODEV);
  assert_int_equal(d.injected, 1);
  assert_int_equal(d.done_ns, now);
  assert_int_equal(ff_iomodel_present(m, 0, now), 1);
  /* 1: three requests of any kind answered, then ENODEV at once */
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 512, now).error, 0);
  assert_int_equal(sub(m, 1, FF_OP_WRITE, 0, 512, now).error, 0);
  assert_int_equal(sub(m, 4, FF_OP_READ, 0, 512, now).error, 0); /* apart */
  d = sub(m, 1, FF_OP_FLUSH, 0, 0, now);
  assert_int_equal(d.error, 0);
  assert_int_equal(d.done_ns, now);
  for (int i = 0; i < 3; i++) {
    d = sub(m, 1, (enum ff_op)i, 0, 512, now + (uint64_t)i);
    assert_int_equal(d.error, ENODEV);
    assert_int_equal(d.injected, 1);
    assert_int_equal(d.done_ns, now + (uint64_t)i);
  }
  /* 2: two answered, then EIO after the request's time */
  assert_int_equal(sub(m, 2, FF_OP_READ, 0, 512, now).error, 0);
  assert_int_equal(sub(m, 2, FF_OP_READ, 0, 512, now).error, 0);
  for (int i = 0; i < 3; i++) {
    d = sub(m, 2, FF_OP_WRITE, 0, 512, now);
    assert_int_equal(d.error, EIO);
    assert_int_equal(d.injected, 1);
    assert_int_equal(d.done_ns, now + 2 * MS);
  }
  /* 3: requests refused before appear_at do not count */
  for (int i = 0; i < 4; i++)
    assert_int_equal(sub(m, 3, FF_OP_READ, 0, 512, T0 + SEC).error, ENODEV);
  assert_int_equal(sub(m, 3, FF_OP_READ, 0, 512, T0 + 5 * SEC).error, 0);
  assert_int_equal(sub(m, 3, FF_OP_READ, 0, 512, T0 + 5 * SEC).error, EIO);
  assert_int_equal(sub(m, 3, FF_OP_READ, 0, 512, T0 + 5 * SEC).error, ENODEV);
  /* 4: no count trigger */
  for (int i = 0; i < 100; i++)
    assert_int_equal(sub(m, 4, FF_OP_READ, 0, 512, now).error, 0);

  /* A profile switch restarts the counts: 1 answers three more. */
  assert_ok(ff_iomodel_set_profile(m, load(text, farm), now + SEC));
  for (int i = 0; i < 3; i++)
    assert_int_equal(sub(m, 1, FF_OP_READ, 0, 512, now + SEC).error, 0);
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 512, now + SEC).error, ENODEV);
  ff_iomodel_free(m);

  /* Each key merges on its own; a later group can lift a count. */
  m = model("groups = ({ faults = { vanish_after = 1; eio_after = 0; }; },\n"
            "  { devices = \"pv0001\"; faults = { vanish_after = 2; }; },\n"
            "  { devices = \"pv0002\";\n"
            "    faults = { vanish_after = 1000000000000000000L; }; });",
            farm);
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 512, now).error, EIO);
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 512, now).error, ENODEV);
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 512, now).error, EIO);
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 512, now).error, EIO);
  assert_int_equal(sub(m, 1, FF_OP_READ, 0, 512, now).error, ENODEV);
  for (int i = 0; i < 10; i++)
    assert_int_equal(sub(m, 2, FF_OP_READ, 0, 512, now).error, EIO);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

/* Concurrent submitters: exactly vanish_after requests are answered. */
struct counter {
  struct ff_iomodel *m;
  unsigned ok, enodev, other;
};

static void *
counter_run(void *arg)
{
  struct counter *c = arg;

  for (unsigned i = 0; i < 20000; i++) {
    struct ff_io_decision d;

    ff_iomodel_submit(c->m, 0, FF_OP_READ, 0, 4096, T0 + i, &d);
    if (d.error == 0)
      c->ok++;
    else if (d.error == ENODEV && d.injected)
      c->enodev++;
    else
      c->other++;
  }
  return NULL;
}

static void
test_count_race(void **state)
{
  enum { NT = 8 };
  struct ff_farm *farm = farm_n(2, 1);
  struct ff_iomodel *m =
    model("groups = ({ faults = { vanish_after = 77777; }; });", farm);
  struct counter c[NT];
  pthread_t th[NT];
  unsigned ok = 0, enodev = 0;

  (void)state;
  for (unsigned i = 0; i < NT; i++) {
    c[i] = (struct counter){m, 0, 0, 0};
    assert_int_equal(pthread_create(&th[i], NULL, counter_run, &c[i]), 0);
  }
  for (unsigned i = 0; i < NT; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(c[i].other, 0);
    ok += c[i].ok;
    enodev += c[i].enodev;
  }
  assert_int_equal(ok, 77777);
  assert_int_equal(enodev, NT * 20000 - 77777);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

static void
test_eio_ranges(void **state)
{
  static const struct {
    uint32_t dev;
    enum ff_op op;
    uint64_t off, len;
    int error;
  } t[] = {
    {0, FF_OP_READ, 0, 1 << 20, 0},             /* ends where it starts */
    {0, FF_OP_READ, (1 << 20) - 1, 2, EIO},     /* overlaps the first byte */
    {0, FF_OP_WRITE, (1 << 20) + 4095, 1, EIO}, /* the last byte */
    {0, FF_OP_READ, (1 << 20) + 4096, 4096, 0}, /* just after */
    {0, FF_OP_READ, 0, 1ull << 30, EIO},        /* covers it */
    {0, FF_OP_READ, 8ull << 30, 512, EIO},      /* the second range */
    {0, FF_OP_READ, (8ull << 30) - 10, UINT64_MAX, EIO}, /* wraps */
    {0, FF_OP_FLUSH, 0, 0, 0},                           /* no range */
    {1, FF_OP_READ, 1 << 20, 4096, 0},                   /* not in the group */
  };
  struct ff_farm *farm = farm_n(2, 1);
  struct ff_iomodel *m =
    model("groups = ({ devices = [\"pv0000\"];\n"
          "  read = { dist = \"fixed\"; value = \"3ms\"; };\n"
          "  faults = { eio_ranges = ( [\"1M\", \"4K\"],\n"
          "                            (\"8G\", 512) ); }; });",
          farm);

  (void)state;
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    struct ff_io_decision d =
      sub(m, t[i].dev, t[i].op, t[i].off, t[i].len, T0);

    if (d.error != t[i].error || d.injected != (t[i].error != 0))
      fail_msg("case %zu: error %d injected %d, expected %d", i, d.error,
               d.injected, t[i].error);
    if (t[i].op == FF_OP_READ && t[i].dev == 0) /* failing takes time too */
      assert_int_equal(d.done_ns, T0 + 3 * MS);
  }
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

static unsigned
count_eio(const struct ff_farm *farm, const char *text, int n)
{
  struct ff_iomodel *m = model(text, farm);
  unsigned eio = 0;

  for (int i = 0; i < n; i++) {
    struct ff_io_decision d = sub(m, (uint32_t)i % 4, (enum ff_op)(i % 3),
                                  (uint64_t)i * 512, 512, T0 + (uint64_t)i);

    assert_true(d.error == 0 || (d.error == EIO && d.injected));
    eio += d.error == EIO;
  }
  ff_iomodel_free(m);
  return eio;
}

static void
test_eio_rate(void **state)
{
  enum { N = 200000 };
  struct ff_farm *farm = farm_n(4, 1);
  const char *text = "groups = ({ faults = { eio_rate = 0.01; }; });";
  unsigned a = count_eio(farm, text, N), b = count_eio(farm, text, N);

  (void)state;
  /* expected 2000, standard deviation ~44.5: +-200 is 4.5 sigma */
  if (a < 1800 || a > 2200)
    fail_msg("%u EIO in %d requests at rate 0.01", a, N);
  assert_int_equal(a, b);
  assert_int_equal(count_eio(farm,
                             "groups = ({ faults = { eio_rate = 0; }; "
                             "});",
                             N / 10),
                   0);
  assert_int_equal(count_eio(farm,
                             "groups = ({ faults = { eio_rate = 1; }; "
                             "});",
                             N / 10),
                   N / 10);
  ff_farm_free(farm);
}

/* ---- live switch ------------------------------------------------------- */

static void
test_live_switch(void **state)
{
  struct ff_farm *farm = farm_n(2, 1);
  struct ff_iomodel *m =
    model("name = \"fast\"; groups = ({ read = { dist = \"fixed\"; "
          "value = \"1ms\"; }; queue = { depth = 1; service = \"1ms\"; "
          "}; });",
          farm);
  const char *old_name = ff_iomodel_profile_name(m);
  uint64_t now = T0 + SEC;

  (void)state;
  assert_string_equal(old_name, "fast");
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now).done_ns, now + 2 * MS);
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now).done_ns, now + 3 * MS);
  assert_ok(ff_iomodel_set_profile(
    m,
    load("name = \"slow\"; groups = ({ read = { dist = \"fixed\"; "
         "value = \"50ms\"; }; faults = { vanish_at = \"1s\"; }; });",
         farm),
    now + MS));
  assert_string_equal(ff_iomodel_profile_name(m), "slow");
  assert_string_equal(old_name, "fast"); /* still allocated */
  /* new latency, the old queue is gone, the origin restarted */
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now + MS).done_ns,
                   now + 51 * MS);
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now + 900 * MS).error, 0);
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now + 1001 * MS).error, ENODEV);
  assert_int_equal(ff_iomodel_latency_quantile(m, 1, FF_OP_READ, 0.5),
                   50 * MS);
  assert_ok(ff_iomodel_set_profile(m, NULL, now + 2 * SEC));
  assert_string_equal(ff_iomodel_profile_name(m), "ideal");
  assert_int_equal(sub(m, 0, FF_OP_READ, 0, 1, now + 3 * SEC).done_ns,
                   now + 3 * SEC);
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

/* ---- fraction ---------------------------------------------------------- */

/* Devices whose read median is 100 ms: the ones the fraction chose. */
static unsigned
chosen(const struct ff_farm *farm, const char *text, uint8_t *set)
{
  struct ff_iomodel *m = model(text, farm);
  unsigned n = 0;

  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++) {
    set[d] = ff_iomodel_latency_quantile(m, d, FF_OP_READ, 0.5) == 100 * MS;
    n += set[d];
  }
  ff_iomodel_free(m);
  return n;
}

static void
test_fraction(void **state)
{
  static const char fmt[] =
    "seed = %d;\n"
    "groups = ({ read = { dist = \"fixed\"; value = \"1ms\"; }; },\n"
    "  { %s fraction = %s;\n"
    "    read = { dist = \"fixed\"; value = \"100ms\"; }; });\n";
  static const struct {
    const char *devices, *fraction;
    unsigned expect;
  } t[] = {
    {"", "0.01", 10},   {"", "0.0333", 33},
    {"", "0.0336", 34}, {"", "0", 0},
    {"", "1", 1000},    {"", "0.0004", 0},
    {"", "0.0006", 1},  {"devices = \"pv00[0-4]*\";", "0.1", 5},
  };
  struct ff_farm *farm = farm_n(1000, 9);
  uint8_t *a = malloc(1000), *b = malloc(1000);
  char text[512];
  int diff = 0;

  (void)state;
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    snprintf(text, sizeof text, fmt, 1, t[i].devices, t[i].fraction);
    assert_int_equal(chosen(farm, text, a), t[i].expect);
    if (t[i].devices[0])
      for (uint32_t d = 50; d < 1000; d++)
        assert_int_equal(a[d], 0);
  }
  snprintf(text, sizeof text, fmt, 1, "", "0.05");
  chosen(farm, text, a);
  chosen(farm, text, b);
  assert_memory_equal(a, b, 1000);
  snprintf(text, sizeof text, fmt, 2, "", "0.05");
  assert_int_equal(chosen(farm, text, b), 50);
  for (int d = 0; d < 1000; d++)
    diff += a[d] != b[d];
  assert_true(diff > 50); /* two random 5% sets share few devices */
  free(a);
  free(b);
  ff_farm_free(farm);
}

/* ---- threads ----------------------------------------------------------- */

struct worker {
  struct ff_iomodel *m;
  uint32_t ndevs;
  unsigned id;
  struct ff_profile *swap; /* worker 0 switches to it halfway */
  unsigned bad;
};

static void *
worker_run(void *arg)
{
  struct worker *w = arg;

  for (unsigned i = 0; i < 100000; i++) {
    struct ff_io_decision d;
    uint64_t now = T0 + (uint64_t)i * 10000;

    if (w->swap && i == 50000) {
      if (ff_iomodel_set_profile(w->m, w->swap, now) < 0)
        w->bad++;
      w->swap = NULL;
    }
    ff_iomodel_submit(w->m, (w->id * 7919 + i) % w->ndevs, (enum ff_op)(i % 3),
                      (uint64_t)(i % 512) * 65536, 65536, now, &d);
    if (d.done_ns < now || (d.error && d.error != EIO && d.error != ENODEV))
      w->bad++;
    (void)ff_iomodel_present(w->m, i % w->ndevs, now);
    (void)ff_iomodel_latency_quantile(w->m, i % w->ndevs, FF_OP_READ, 0.9);
    (void)ff_iomodel_profile_name(w->m);
  }
  return NULL;
}

static void
test_threads(void **state)
{
  enum { NT = 8 };
  struct ff_farm *farm = farm_n(64, 1);
  char text[1024];
  struct ff_iomodel *m;
  struct worker w[NT];
  pthread_t th[NT];

  (void)state;
  snprintf(text, sizeof text, busy, 7);
  m = model(text, farm);
  for (unsigned i = 0; i < NT; i++) {
    w[i] = (struct worker){m, ff_farm_ndevs(farm), i, NULL, 0};
    if (i == 0)
      w[i].swap = load("groups = ({ queue = { depth = 8; service = "
                       "\"10us\"; }; faults = { eio_rate = 0.1; }; });",
                       farm);
    assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
  }
  for (unsigned i = 0; i < NT; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(w[i].bad, 0);
  }
  assert_string_equal(ff_iomodel_profile_name(m), "t");
  ff_iomodel_free(m);
  ff_farm_free(farm);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_duration),      cmocka_unit_test(test_example),
    cmocka_unit_test(test_defaults),      cmocka_unit_test(test_ideal),
    cmocka_unit_test(test_shipped),       cmocka_unit_test(test_bad),
    cmocka_unit_test(test_wrong_farm),    cmocka_unit_test(test_merge),
    cmocka_unit_test(test_distributions), cmocka_unit_test(test_native_params),
    cmocka_unit_test(test_determinism),   cmocka_unit_test(test_queue),
    cmocka_unit_test(test_caps),          cmocka_unit_test(test_write_cache),
    cmocka_unit_test(test_stall),         cmocka_unit_test(test_spinup),
    cmocka_unit_test(test_vanish_appear), cmocka_unit_test(test_eio_ranges),
    cmocka_unit_test(test_eio_rate),      cmocka_unit_test(test_live_switch),
    cmocka_unit_test(test_fraction),      cmocka_unit_test(test_vanish_after),
    cmocka_unit_test(test_count_race),    cmocka_unit_test(test_threads),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
