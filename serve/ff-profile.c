/* fusefarm: I/O profiles, the parser (see ff-profile.h,
 * docs/profile-format.md).  The model that applies them is ff-iomodel.c.
 *
 * Loading: libconfig parses the file and keeps the line of every setting;
 * this file walks the tree (as ff-spec.c does: unknown keys rejected,
 * every message "file:line: key.path: what was expected"), resolves each
 * group's device selection against the farm, merges the groups into one
 * set of settings per device and deduplicates those into classes
 * (ff-profile-int.h).
 *
 * Thread model: loading runs in one thread; a loaded profile is immutable.
 */
#include "ff-profile-int.h"
#include "ff-builtin.h"
#include "ff-cfg-int.h"
#include "ff-error.h"
#include "ff-util.h"

#include <errno.h>
#include <fnmatch.h>
#include <libconfig.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- durations --------------------------------------------------------- */

int
ff_parse_duration(const char *s, uint64_t *ns)
{
  static const struct {
    const char *name;
    uint64_t ns;
  } units[] = {{"ns", 1},
               {"us", 1000},
               {"ms", 1000000},
               {"s", 1000000000},
               {"m", 60000000000ull}};
  uint64_t mant = 0, div = 1, unit = 0;
  unsigned digits = 0;
  unsigned __int128 v;
  const char *p = s;

  for (; *p >= '0' && *p <= '9'; p++, digits++) {
    if (digits >= 18)
      return ff_error("duration '%s' has too many digits", s);
    mant = mant * 10 + (uint64_t)(*p - '0');
  }
  if (digits == 0)
    return ff_error("'%s' is not a duration (expected a number with a unit "
                    "ns, us, ms, s or m, such as \"4ms\")",
                    s);
  if (*p == '.') {
    p++;
    if (!(*p >= '0' && *p <= '9'))
      return ff_error("'%s' is not a duration (expected digits after the "
                      "decimal point)",
                      s);
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
      if (digits >= 18)
        return ff_error("duration '%s' has too many digits", s);
      mant = mant * 10 + (uint64_t)(*p - '0');
      div *= 10;
    }
  }
  if (!*p)
    return ff_error("'%s' has no unit (expected ns, us, ms, s or m after "
                    "the number)",
                    s);
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (!strcmp(p, units[i].name))
      unit = units[i].ns;
  if (!unit)
    return ff_error("'%s' has an unknown unit '%s' (expected ns, us, ms, s "
                    "or m)",
                    s, p);
  v = ((unsigned __int128)mant * unit + div / 2) / div;
  if (v > FF_MAX_DURATION_NS)
    return ff_error("duration '%s' is too large (at most 10^18 ns)", s);
  *ns = (uint64_t)v;
  return 0;
}

/* ---- distributions ----------------------------------------------------- */

static const char *const dist_names[] = {
  [DIST_FIXED] = "fixed",   [DIST_UNIFORM] = "uniform",
  [DIST_NORMAL] = "normal", [DIST_LOGNORMAL] = "lognormal",
  [DIST_PARETO] = "pareto",
};

#define Z99 2.3263478740408408 /* the standard normal's 0.99 quantile */

/* Inverse of the standard normal CDF: Acklam's rational approximation
 * (relative error 1.2e-9), polished by one Halley step on erfc. */
static double
norm_ppf(double p)
{
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  double q, r, x, e, u;

  if (p <= 0)
    return -INFINITY;
  if (p >= 1)
    return INFINITY;
  if (p < 0.02425 || p > 1 - 0.02425) {
    q = sqrt(-2 * log(p < 0.5 ? p : 1 - p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    if (p > 0.5)
      x = -x;
  } else {
    q = p - 0.5;
    r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) *
        q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  e = 0.5 * erfc(-x / sqrt(2)) - p;
  u = e * sqrt(2 * M_PI) * exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double
ff_dist_quantile(const struct dist *d, double q)
{
  switch (d->kind) {
  case DIST_FIXED:
    return d->a;
  case DIST_UNIFORM:
    return d->a + (d->b - d->a) * q;
  case DIST_NORMAL:
    return d->b > 0 ? d->a + d->b * norm_ppf(q) : d->a;
  case DIST_LOGNORMAL:
    return exp(d->b > 0 ? d->a + d->b * norm_ppf(q) : d->a);
  case DIST_PARETO:
    return d->a / pow(1 - q, 1 / d->b);
  }
  return 0;
}

uint64_t
ff_dist_clamp_ns(double x)
{
  if (!(x > 0)) /* also NaN */
    return 0;
  if (x > FF_DIST_SAMPLE_CAP)
    x = FF_DIST_SAMPLE_CAP;
  return (uint64_t)(x + 0.5);
}

static void
class_defaults(struct devclass *c)
{
  memset(c, 0, sizeof *c);
  for (int op = 0; op < FF_OP_COUNT; op++)
    c->lat[op].kind = DIST_FIXED;
  c->vanish_at_ns = UINT64_MAX;
  c->vanish_after = UINT64_MAX;
  c->eio_after = UINT64_MAX;
  c->direct_io = 1;
}

static int
dist_equal(const struct dist *x, const struct dist *y)
{
  return x->kind == y->kind && x->a == y->a && x->b == y->b;
}

static int
class_equal(const struct devclass *x, const struct devclass *y)
{
  for (int op = 0; op < FF_OP_COUNT; op++)
    if (!dist_equal(&x->lat[op], &y->lat[op]))
      return 0;
  return x->spinup_ns == y->spinup_ns &&
         x->stall_every_ns == y->stall_every_ns &&
         x->stall_dur_ns == y->stall_dur_ns && x->bandwidth == y->bandwidth &&
         x->iops_cost_ns == y->iops_cost_ns && x->eio_rate == y->eio_rate &&
         x->range_first == y->range_first &&
         x->range_count == y->range_count &&
         x->appear_at_ns == y->appear_at_ns &&
         x->vanish_at_ns == y->vanish_at_ns &&
         x->vanish_after == y->vanish_after && x->eio_after == y->eio_after &&
         x->direct_io == y->direct_io && x->wcache == y->wcache &&
         x->wcache_size == y->wcache_size;
}

static uint64_t
dbits(double v)
{
  uint64_t u;

  if (v == 0)
    v = 0; /* -0.0 equals 0.0, so it must hash like it */
  memcpy(&u, &v, sizeof u);
  return u;
}

static uint64_t
class_hash(const struct devclass *c)
{
  uint64_t h = 0;

  for (int op = 0; op < FF_OP_COUNT; op++)
    h = ff_hash4(h, (uint64_t)c->lat[op].kind, dbits(c->lat[op].a),
                 dbits(c->lat[op].b));
  h = ff_hash4(h, c->spinup_ns, c->stall_every_ns, c->stall_dur_ns);
  h = ff_hash4(h, c->bandwidth, c->iops_cost_ns, dbits(c->eio_rate));
  h = ff_hash4(h, ((uint64_t)c->range_first << 32) | c->range_count,
               c->appear_at_ns, c->vanish_at_ns);
  h = ff_hash4(h, (uint64_t)c->wcache, c->wcache_size, 0);
  return ff_hash4(h, (uint64_t)c->direct_io, c->vanish_after, c->eio_after);
}

/* ---- parsing (shared helpers in ff-cfg-int.h) ------------------------- */

struct pctx {
  const char *file;
  const struct ff_farm *farm;
  struct ff_profile *p;
};

static int
get_duration(const struct pctx *c, const config_setting_t *grp,
             const char *path, const char *key, uint64_t *out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  if (config_setting_type(s) != CONFIG_TYPE_STRING)
    return ff_cfg_err(
      c->file, s, kp,
      "expected a duration string with a unit, such as \"4ms\" "
      "(units ns, us, ms, s, m)");
  if (ff_parse_duration(config_setting_get_string(s), out) < 0)
    return ff_cfg_err(c->file, s, kp, "%s", ff_errmsg());
  return 1;
}

/* A request count (vanish_after, eio_after): an integer from 0 to 10^18. */
static int
get_count(const struct pctx *c, const config_setting_t *grp, const char *path,
          const char *key, uint64_t *out)
{
  int64_t v;
  int r = ff_cfg_int(c->file, grp, path, key, 0, FF_MAX_COUNT, &v);

  if (r == 1)
    *out = (uint64_t)v;
  return r;
}

/* A required member: its absence is an error naming path.key. */
static int
need(const struct pctx *c, const config_setting_t *grp, const char *path,
     const char *key, int r, const char *expected)
{
  char kp[256];

  if (r != 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, key);
  return ff_cfg_err(c->file, grp, kp, "missing (expected %s)", expected);
}

/* A group member: 1 and *out when present and a group, 0 when absent. */
static int
get_group(const struct pctx *c, const config_setting_t *grp, const char *path,
          const char *key, const char *example, const config_setting_t **out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  if (config_setting_type(s) != CONFIG_TYPE_GROUP)
    return ff_cfg_err(c->file, s, kp, "expected a group such as %s", example);
  *out = s;
  return 1;
}

/* ---- parsing the pieces ------------------------------------------------ */

static int
parse_dist(const struct pctx *c, const config_setting_t *grp, const char *path,
           const char *key, struct dist *out)
{
  static const char *const keys[][8] = {
    [DIST_FIXED] = {"dist", "value", NULL},
    [DIST_UNIFORM] = {"dist", "min", "max", "median", "p99", NULL},
    [DIST_NORMAL] = {"dist", "mean", "stddev", "median", "p99", NULL},
    [DIST_LOGNORMAL] = {"dist", "mu", "sigma", "median", "p99", NULL},
    [DIST_PARETO] = {"dist", "scale", "alpha", "median", "p99", NULL},
  };
  const config_setting_t *g = NULL, *s;
  char kp[256], dp[256];
  char *name = NULL;
  uint64_t median = 0, p99 = 0, x = 0, y = 0;
  double fx = 0, fy = 0;
  int hm, hp, hx, hy, r, kind = -1;

  r = get_group(c, grp, path, key,
                "{ dist = \"lognormal\"; median = \"4ms\"; p99 = \"20ms\"; }",
                &g);
  if (r <= 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, key);
  ff_cfg_join(dp, sizeof dp, kp, "dist");
  r = need(c, g, kp, "dist", ff_cfg_str(c->file, g, kp, "dist", &name),
           "fixed, uniform, normal, lognormal or pareto");
  if (r < 0)
    return -1;
  for (int k = 0; k < (int)(sizeof dist_names / sizeof *dist_names); k++)
    if (!strcmp(name, dist_names[k]))
      kind = k;
  if (kind < 0) {
    r =
      ff_cfg_err(c->file, config_setting_get_member(g, "dist"), dp,
                 "unknown distribution '%s' (expected fixed, uniform, normal, "
                 "lognormal or pareto)",
                 name);
    free(name);
    return r;
  }
  free(name);
  if (ff_cfg_check_keys(c->file, g, kp, keys[kind]) < 0)
    return -1;
  out->kind = (enum dist_kind)kind;
  if (kind == DIST_FIXED) {
    if (need(c, g, kp, "value", get_duration(c, g, kp, "value", &x),
             "a duration such as \"1ms\"") < 0)
      return -1;
    out->a = (double)x;
    out->b = 0;
    return 1;
  }

  hm = get_duration(c, g, kp, "median", &median);
  hp = get_duration(c, g, kp, "p99", &p99);
  if (hm < 0 || hp < 0)
    return -1;
  switch (kind) {
  case DIST_UNIFORM:
    hx = get_duration(c, g, kp, "min", &x);
    hy = get_duration(c, g, kp, "max", &y);
    fx = (double)x;
    fy = (double)y;
    break;
  case DIST_NORMAL:
    hx = get_duration(c, g, kp, "mean", &x);
    hy = get_duration(c, g, kp, "stddev", &y);
    fx = (double)x;
    fy = (double)y;
    break;
  case DIST_LOGNORMAL:
    hx = ff_cfg_float(c->file, g, kp, "mu", -50, 50, &fx);
    hy = ff_cfg_float(c->file, g, kp, "sigma", 0, 20, &fy);
    break;
  default: /* DIST_PARETO */
    hx = get_duration(c, g, kp, "scale", &x);
    hy = ff_cfg_float(c->file, g, kp, "alpha", 1e-3, 1e3, &fy);
    fx = (double)x;
    break;
  }
  if (hx < 0 || hy < 0)
    return -1;

  /* Exactly one parameterisation, complete. */
  {
    const char *const *k = keys[kind];
    const char *pa = k[1], *pb = k[2];

    if ((hm || hp) && (hx || hy))
      return ff_cfg_err(c->file, g, kp,
                        "give either %s and %s, or median and p99, not both "
                        "(a %s distribution)",
                        pa, pb, dist_names[kind]);
    if (!hm && !hp && !hx && !hy)
      return ff_cfg_err(
        c->file, g, kp,
        "missing parameters (expected %s and %s, or median and "
        "p99)",
        pa, pb);
    if (hm != hp || hx != hy) {
      const char *have = hm ? "median" : hp ? "p99" : hx ? pa : pb;
      const char *want = hm ? "p99" : hp ? "median" : hx ? pb : pa;

      return ff_cfg_err(c->file, config_setting_get_member(g, have), kp,
                        "%s needs %s too", have, want);
    }
  }

  if (hm) {
    s = config_setting_get_member(g, "p99");
    if (p99 <= median)
      return ff_cfg_err(c->file, s, kp,
                        "median %llu ns must be below p99 %llu ns (expected "
                        "median < p99)",
                        (unsigned long long)median, (unsigned long long)p99);
    if ((kind == DIST_LOGNORMAL || kind == DIST_PARETO) && median == 0)
      return ff_cfg_err(c->file, config_setting_get_member(g, "median"), kp,
                        "median must be positive for a %s distribution",
                        dist_names[kind]);
    switch (kind) {
    case DIST_UNIFORM: {
      /* a + (b - a) * 0.5 = median, a + (b - a) * 0.99 = p99 */
      double w = (double)(p99 - median) / 0.49;

      out->a = (double)median - w / 2;
      out->b = out->a + w;
      break;
    }
    case DIST_NORMAL:
      out->a = (double)median;
      out->b = (double)(p99 - median) / Z99;
      break;
    case DIST_LOGNORMAL:
      out->a = log((double)median);
      out->b = log((double)p99 / (double)median) / Z99;
      break;
    default: /* pareto: x_q = scale / (1 - q)^(1 / alpha) */
      out->b = log(50.0) / log((double)p99 / (double)median);
      out->a = (double)median / pow(2.0, 1 / out->b);
      break;
    }
    return 1;
  }

  switch (kind) {
  case DIST_UNIFORM:
    if (fx > fy)
      return ff_cfg_err(c->file, config_setting_get_member(g, "min"), kp,
                        "min must not be above max");
    out->a = fx;
    out->b = fy;
    break;
  case DIST_NORMAL:
    out->a = fx;
    out->b = fy;
    break;
  case DIST_LOGNORMAL:
    out->a = fx + log(1e9); /* log-seconds to log-nanoseconds */
    out->b = fy;
    break;
  default:
    if (fx <= 0)
      return ff_cfg_err(c->file, config_setting_get_member(g, "scale"), kp,
                        "scale must be positive");
    out->a = fx;
    out->b = fy;
    break;
  }
  return 1;
}

#define QUEUE_MAX_SLOTS (1u << 22)

static int
parse_queue(const struct pctx *c, const config_setting_t *grp,
            const char *path, struct qspec *q)
{
  static const char *const keys[] = {"depth", "service", "shards", NULL};
  const config_setting_t *g = NULL;
  char kp[256];
  int r = get_group(c, grp, path, "queue",
                    "{ depth = 32; service = \"0.1ms\"; }", &g);

  if (r <= 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, "queue");
  q->shards = 1;
  if (ff_cfg_check_keys(c->file, g, kp, keys) < 0 ||
      need(c, g, kp, "depth",
           ff_cfg_uint(c->file, g, kp, "depth", 1, 65536, &q->depth),
           "an integer from 1 to 65536") < 0 ||
      need(c, g, kp, "service",
           get_duration(c, g, kp, "service", &q->service_ns),
           "a duration such as \"0.1ms\"") < 0 ||
      ff_cfg_uint(c->file, g, kp, "shards", 1, 65536, &q->shards) < 0)
    return -1;
  if ((uint64_t)q->depth * q->shards > QUEUE_MAX_SLOTS)
    return ff_cfg_err(c->file, g, kp,
                      "depth %u x shards %u is too many slots (at most %u)",
                      q->depth, q->shards, QUEUE_MAX_SLOTS);
  return 1;
}

static int
add_range(const struct pctx *c, const config_setting_t *s, const char *kp,
          uint64_t off, uint64_t len)
{
  struct ff_profile *p = c->p;

  if ((p->nranges & (p->nranges - 1)) == 0) {
    void *n = realloc(p->ranges,
                      (p->nranges ? 2 * p->nranges : 1) * sizeof *p->ranges);
    if (!n)
      return ff_cfg_err(c->file, s, kp, "out of memory");
    p->ranges = n;
  }
  p->ranges[p->nranges].off = off;
  p->ranges[p->nranges].len = len;
  p->nranges++;
  return 0;
}

/* Bits of struct pgroup.set: which keys the group gives. */
enum {
  SET_READ = 1 << FF_OP_READ,
  SET_WRITE = 1 << FF_OP_WRITE,
  SET_FLUSH = 1 << FF_OP_FLUSH,
  SET_SPINUP = 1 << 3,
  SET_STALL = 1 << 4,
  SET_QUEUE = 1 << 5,
  SET_BW = 1 << 6,
  SET_IOPS = 1 << 7,
  SET_DIRECT = 1 << 8,
  SET_EIO_RATE = 1 << 9,
  SET_EIO_RANGES = 1 << 10,
  SET_VANISH = 1 << 11,
  SET_APPEAR = 1 << 12,
  SET_VANISH_AFTER = 1 << 13,
  SET_EIO_AFTER = 1 << 14,
  SET_WCACHE = 1 << 15,
};

struct pgroup {
  unsigned set;
  struct devclass v; /* the values of the keys in set */
  struct qspec queue;
  uint32_t qbase; /* first instance in ff_profile.queues */
};

static int
parse_faults(const struct pctx *c, const config_setting_t *grp,
             const char *path, struct pgroup *pg)
{
  static const char *const keys[] = {"eio_rate",  "eio_ranges",   "vanish_at",
                                     "appear_at", "vanish_after", "eio_after",
                                     NULL};
  const config_setting_t *g = NULL, *rl;
  char kp[256], rp[256];
  int r = get_group(c, grp, path, "faults",
                    "{ eio_rate = 0.001; vanish_at = \"60s\"; }", &g);

  if (r <= 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, "faults");
  if (ff_cfg_check_keys(c->file, g, kp, keys) < 0)
    return -1;
  if ((r = ff_cfg_float(c->file, g, kp, "eio_rate", 0, 1, &pg->v.eio_rate)) <
      0)
    return -1;
  pg->set |= r ? SET_EIO_RATE : 0;
  if ((r = get_duration(c, g, kp, "vanish_at", &pg->v.vanish_at_ns)) < 0)
    return -1;
  pg->set |= r ? SET_VANISH : 0;
  if ((r = get_duration(c, g, kp, "appear_at", &pg->v.appear_at_ns)) < 0)
    return -1;
  pg->set |= r ? SET_APPEAR : 0;
  if ((r = get_count(c, g, kp, "vanish_after", &pg->v.vanish_after)) < 0)
    return -1;
  pg->set |= r ? SET_VANISH_AFTER : 0;
  if ((r = get_count(c, g, kp, "eio_after", &pg->v.eio_after)) < 0)
    return -1;
  pg->set |= r ? SET_EIO_AFTER : 0;

  rl = config_setting_get_member(g, "eio_ranges");
  if (!rl)
    return 1;
  ff_cfg_join(rp, sizeof rp, kp, "eio_ranges");
  if (config_setting_type(rl) != CONFIG_TYPE_LIST)
    return ff_cfg_err(c->file, rl, rp,
                      "expected a list of [offset, length] pairs such as "
                      "( [\"0\", \"1M\"] )");
  pg->set |= SET_EIO_RANGES;
  pg->v.range_first = c->p->nranges;
  pg->v.range_count = (uint32_t)config_setting_length(rl);
  for (unsigned i = 0; i < pg->v.range_count; i++) {
    const config_setting_t *e = config_setting_get_elem(rl, i);
    uint64_t off, len;
    char ep[256];

    ff_pathf(ep, sizeof ep, "%s.[%u]", rp, i);
    if ((config_setting_type(e) != CONFIG_TYPE_ARRAY &&
         config_setting_type(e) != CONFIG_TYPE_LIST) ||
        config_setting_length(e) != 2)
      return ff_cfg_err(c->file, e, ep,
                        "expected an [offset, length] pair such as [\"0\", "
                        "\"1M\"]");
    if (ff_cfg_size_value(c->file, config_setting_get_elem(e, 0), ep, &off) <
          0 ||
        ff_cfg_size_value(c->file, config_setting_get_elem(e, 1), ep, &len) <
          0)
      return -1;
    if (len == 0)
      return ff_cfg_err(c->file, e, ep, "the length must be positive");
    if (add_range(c, e, ep, off, len) < 0)
      return -1;
  }
  return 1;
}

/* write_cache = true | false | { size = "32M"; } */
static int
parse_write_cache(const struct pctx *c, const config_setting_t *grp,
                  const char *path, struct pgroup *pg)
{
  static const char *const keys[] = {"size", NULL};
  const config_setting_t *s = config_setting_get_member(grp, "write_cache");
  char kp[256];

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, "write_cache");
  pg->set |= SET_WCACHE;
  if (config_setting_type(s) == CONFIG_TYPE_BOOL) {
    pg->v.wcache = config_setting_get_bool(s);
    pg->v.wcache_size = 0;
    return 1;
  }
  if (config_setting_type(s) != CONFIG_TYPE_GROUP)
    return ff_cfg_err(c->file, s, kp,
                      "expected true, false or a group such as { size = "
                      "\"32M\"; }");
  if (ff_cfg_check_keys(c->file, s, kp, keys) < 0 ||
      ff_cfg_size(c->file, s, kp, "size", &pg->v.wcache_size) < 0)
    return -1;
  pg->v.wcache = 1;
  return 1;
}

static int
parse_stall(const struct pctx *c, const config_setting_t *grp,
            const char *path, struct pgroup *pg)
{
  static const char *const keys[] = {"every", "duration", NULL};
  const config_setting_t *g = NULL;
  char kp[256];
  int r = get_group(c, grp, path, "stall",
                    "{ every = \"10s\"; duration = \"200ms\"; }", &g);

  if (r <= 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, "stall");
  if (ff_cfg_check_keys(c->file, g, kp, keys) < 0 ||
      need(c, g, kp, "every",
           get_duration(c, g, kp, "every", &pg->v.stall_every_ns),
           "a duration such as \"10s\"") < 0 ||
      need(c, g, kp, "duration",
           get_duration(c, g, kp, "duration", &pg->v.stall_dur_ns),
           "a duration such as \"200ms\"") < 0)
    return -1;
  if (pg->v.stall_dur_ns == 0 || pg->v.stall_dur_ns >= pg->v.stall_every_ns)
    return ff_cfg_err(c->file, config_setting_get_member(g, "duration"), kp,
                      "duration must be positive and shorter than every");
  pg->set |= SET_STALL;
  return 1;
}

static int
has_glob(const char *s)
{
  return strpbrk(s, "*?[") != NULL;
}

/* Add the devices named by pattern (a name or a glob) to sel. */
static int
select_pattern(const struct pctx *c, const config_setting_t *s, const char *kp,
               const char *pattern, uint8_t *sel)
{
  const struct ff_farm *farm = c->farm;
  int any = 0;

  if (!has_glob(pattern)) {
    int64_t d = ff_farm_lookup(farm, pattern);

    if (d < 0)
      return ff_cfg_err(c->file, s, kp, "no device '%s' in the farm", pattern);
    sel[d] = 1;
    return 0;
  }
  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++)
    if (fnmatch(pattern, ff_farm_dev_name(farm, d), 0) == 0) {
      sel[d] = 1;
      any = 1;
    }
  if (!any)
    return ff_cfg_err(c->file, s, kp, "'%s' matches no device of the farm",
                      pattern);
  return 0;
}

struct rank {
  uint64_t key;
  uint32_t dev;
};

static int
rank_cmp(const void *x, const void *y)
{
  const struct rank *a = x, *b = y;

  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return a->dev < b->dev ? -1 : a->dev > b->dev;
}

#define KIND_FRACTION 0x6672616374696f6eull /* "fraction" */

/* Fill sel (ndevs bytes, zeroed by the caller) with the devices group gi
 * selects: devices= (default all) as the pool, then fraction= of it. */
static int
parse_select(const struct pctx *c, const config_setting_t *g, const char *path,
             unsigned gi, uint8_t *sel)
{
  const struct ff_farm *farm = c->farm;
  const config_setting_t *s = config_setting_get_member(g, "devices");
  char kp[256];
  double fraction;
  int r;

  ff_cfg_join(kp, sizeof kp, path, "devices");
  if (!s) {
    memset(sel, 1, ff_farm_ndevs(farm));
  } else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
    const char *v = config_setting_get_string(s);

    if (!strcmp(v, "all"))
      memset(sel, 1, ff_farm_ndevs(farm));
    else if (select_pattern(c, s, kp, v, sel) < 0)
      return -1;
  } else if (config_setting_type(s) == CONFIG_TYPE_ARRAY ||
             config_setting_type(s) == CONFIG_TYPE_LIST) {
    int n = config_setting_length(s);

    if (n == 0)
      return ff_cfg_err(c->file, s, kp,
                        "the list is empty (expected device names)");
    for (int i = 0; i < n; i++) {
      const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

      if (config_setting_type(e) != CONFIG_TYPE_STRING)
        return ff_cfg_err(c->file, e, kp, "entry %d is not a string", i);
      if (select_pattern(c, e, kp, config_setting_get_string(e), sel) < 0)
        return -1;
    }
  } else {
    return ff_cfg_err(
      c->file, s, kp,
      "expected \"all\", a glob such as \"pv00*\" or a list of "
      "names such as [\"pv0001\", \"pv0002\"]");
  }

  r = ff_cfg_float(c->file, g, path, "fraction", 0, 1, &fraction);
  if (r <= 0)
    return r;
  {
    struct rank *rk =
      malloc((ff_farm_ndevs(farm) ? ff_farm_ndevs(farm) : 1) * sizeof *rk);
    uint32_t n = 0;
    uint64_t k;

    if (!rk)
      return ff_cfg_err(c->file, g, path, "out of memory");
    for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++)
      if (sel[d]) {
        rk[n].key = ff_hash4(c->p->seed, KIND_FRACTION, gi, d);
        rk[n].dev = d;
        n++;
      }
    qsort(rk, n, sizeof *rk, rank_cmp);
    k = (uint64_t)floor(fraction * n + 0.5);
    memset(sel, 0, ff_farm_ndevs(farm));
    for (uint64_t i = 0; i < k; i++)
      sel[rk[i].dev] = 1;
    free(rk);
  }
  return 0;
}

static int
parse_group(const struct pctx *c, const config_setting_t *g, const char *path,
            struct pgroup *pg)
{
  static const char *const keys[] = {
    "devices",   "fraction", "read",        "write",     "flush",
    "spinup",    "stall",    "queue",       "bandwidth", "iops",
    "direct_io", "faults",   "write_cache", NULL};
  static const char *const ops[] = {"read", "write", "flush"};
  double iops = 0;
  int r;

  memset(pg, 0, sizeof *pg);
  class_defaults(&pg->v);
  if (ff_cfg_check_keys(c->file, g, path, keys) < 0)
    return -1;
  for (int op = 0; op < FF_OP_COUNT; op++) {
    if ((r = parse_dist(c, g, path, ops[op], &pg->v.lat[op])) < 0)
      return -1;
    pg->set |= r ? 1u << op : 0;
  }
  if ((r = get_duration(c, g, path, "spinup", &pg->v.spinup_ns)) < 0)
    return -1;
  pg->set |= r ? SET_SPINUP : 0;
  if (parse_stall(c, g, path, pg) < 0)
    return -1;
  if ((r = parse_queue(c, g, path, &pg->queue)) < 0)
    return -1;
  pg->set |= r ? SET_QUEUE : 0;
  if ((r = ff_cfg_size(c->file, g, path, "bandwidth", &pg->v.bandwidth)) < 0)
    return -1;
  pg->set |= r ? SET_BW : 0;
  if ((r = ff_cfg_float(c->file, g, path, "iops", 0, 1e9, &iops)) < 0)
    return -1;
  if (r) {
    /* At most 10^18 ns per request, so the cost fits (and is a cap). */
    if (iops > 0 && iops < 1e-9) {
      char kp[256];

      ff_cfg_join(kp, sizeof kp, path, "iops");
      return ff_cfg_err(c->file, config_setting_get_member(g, "iops"), kp,
                        "%g is out of range (expected 0 for no cap, or 1e-09 "
                        "to 1e+09)",
                        iops);
    }
    pg->set |= SET_IOPS;
    pg->v.iops_cost_ns = iops > 0 ? (uint64_t)(1e9 / iops + 0.5) : 0;
  }
  if ((r = ff_cfg_bool(c->file, g, path, "direct_io", &pg->v.direct_io)) < 0)
    return -1;
  pg->set |= r ? SET_DIRECT : 0;
  if (parse_faults(c, g, path, pg) < 0)
    return -1;
  if (parse_write_cache(c, g, path, pg) < 0)
    return -1;
  return 0;
}

static void
apply_group(struct devclass *d, const struct pgroup *pg)
{
  const struct devclass *v = &pg->v;

  for (int op = 0; op < FF_OP_COUNT; op++)
    if (pg->set & (1u << op))
      d->lat[op] = v->lat[op];
  if (pg->set & SET_SPINUP)
    d->spinup_ns = v->spinup_ns;
  if (pg->set & SET_STALL) {
    d->stall_every_ns = v->stall_every_ns;
    d->stall_dur_ns = v->stall_dur_ns;
  }
  if (pg->set & SET_BW)
    d->bandwidth = v->bandwidth;
  if (pg->set & SET_IOPS)
    d->iops_cost_ns = v->iops_cost_ns;
  if (pg->set & SET_DIRECT)
    d->direct_io = v->direct_io;
  if (pg->set & SET_EIO_RATE)
    d->eio_rate = v->eio_rate;
  if (pg->set & SET_EIO_RANGES) {
    d->range_first = v->range_first;
    d->range_count = v->range_count;
  }
  if (pg->set & SET_VANISH)
    d->vanish_at_ns = v->vanish_at_ns;
  if (pg->set & SET_APPEAR)
    d->appear_at_ns = v->appear_at_ns;
  if (pg->set & SET_VANISH_AFTER)
    d->vanish_after = v->vanish_after;
  if (pg->set & SET_EIO_AFTER)
    d->eio_after = v->eio_after;
  if (pg->set & SET_WCACHE) {
    d->wcache = v->wcache;
    d->wcache_size = v->wcache_size;
  }
}

/* Give each device a class, sharing one class among equal settings. */
static int
build_classes(struct ff_profile *p, const struct devclass *per_dev)
{
  size_t tsize = 16;
  uint32_t *table, cap = 0;

  while (tsize < 2 * (size_t)p->ndevs)
    tsize *= 2;
  table = calloc(tsize, sizeof *table); /* class index + 1; 0: empty */
  if (!table)
    return ff_error("out of memory");
  for (uint32_t d = 0; d < p->ndevs; d++) {
    size_t i = class_hash(&per_dev[d]) & (tsize - 1);

    while (table[i] && !class_equal(&p->classes[table[i] - 1], &per_dev[d]))
      i = (i + 1) & (tsize - 1);
    if (!table[i]) {
      if (p->nclasses == cap) {
        uint32_t ncap = cap ? 2 * cap : 4;
        void *n = realloc(p->classes, ncap * sizeof *p->classes);

        if (!n) {
          free(table);
          return ff_error("out of memory");
        }
        p->classes = n;
        cap = ncap;
      }
      p->classes[p->nclasses] = per_dev[d];
      table[i] = ++p->nclasses;
    }
    p->dev_class[d] = table[i] - 1;
  }
  free(table);
  if (!p->classes) { /* a farm without devices */
    p->classes = malloc(sizeof *p->classes);
    if (!p->classes)
      return ff_error("out of memory");
    class_defaults(p->classes);
    p->nclasses = 1;
  }
  return 0;
}

static int
add_queues(const struct pctx *c, const config_setting_t *g, const char *path,
           struct pgroup *pg)
{
  struct ff_profile *p = c->p;
  void *n;

  if (p->nqueues + (uint64_t)pg->queue.shards > UINT32_MAX / 2)
    return ff_cfg_err(c->file, g, path, "too many queues");
  n = realloc(p->queues, (p->nqueues + pg->queue.shards) * sizeof *p->queues);
  if (!n)
    return ff_cfg_err(c->file, g, path, "out of memory");
  p->queues = n;
  pg->qbase = p->nqueues;
  for (uint32_t i = 0; i < pg->queue.shards; i++) {
    p->queues[p->nqueues + i] = pg->queue;
    p->queues[p->nqueues + i].shards = 1;
  }
  p->nqueues += pg->queue.shards;
  return 0;
}

static struct ff_profile *
profile_alloc(const struct ff_farm *farm, const char *name)
{
  struct ff_profile *p = calloc(1, sizeof *p);
  size_t n = ff_farm_ndevs(farm) ? ff_farm_ndevs(farm) : 1;

  if (!p) {
    ff_error("out of memory");
    return NULL;
  }
  p->name = strdup(name);
  p->seed = ff_farm_seed(farm);
  p->fingerprint = ff_farm_fingerprint(farm);
  p->ndevs = ff_farm_ndevs(farm);
  p->dev_class = calloc(n, sizeof *p->dev_class);
  p->dev_queue = malloc(n * sizeof *p->dev_queue);
  if (!p->name || !p->dev_class || !p->dev_queue) {
    ff_profile_free(p);
    ff_error("out of memory");
    return NULL;
  }
  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++)
    p->dev_queue[d] = FF_NONE;
  return p;
}

static struct ff_profile *
parse_root(struct pctx *c, const config_setting_t *root)
{
  static const char *const keys[] = {"name",  "seed",   "rotational",
                                     "queue", "groups", NULL};
  const struct ff_farm *farm = c->farm;
  const config_setting_t *groups;
  struct devclass *per_dev = NULL;
  struct ff_profile *p;
  uint8_t *sel = NULL;
  char *dname = ff_cfg_default_name(c->file);
  int64_t seed = 0;
  int r;

  if (!dname) {
    ff_error("out of memory");
    return NULL;
  }
  p = profile_alloc(farm, dname);
  free(dname);
  if (!p)
    return NULL;
  c->p = p;
  if (ff_cfg_check_root(c->file, root, FF_CFG_PROFILE, keys) < 0 ||
      ff_cfg_str(c->file, root, "", "name", &p->name) < 0 ||
      ff_cfg_int(c->file, root, "", "seed", INT64_MIN, INT64_MAX, &seed) < 0 ||
      ff_cfg_bool(c->file, root, "", "rotational", &p->rotational) < 0 ||
      parse_queue(c, root, "", &p->global) < 0)
    goto fail;
  if (!p->name[0]) {
    ff_cfg_err(c->file, config_setting_get_member(root, "name"), "name",
               "expected a non-empty string");
    goto fail;
  }
  p->seed = ff_farm_seed(farm) ^ (uint64_t)seed;

  per_dev =
    malloc((ff_farm_ndevs(farm) ? ff_farm_ndevs(farm) : 1) * sizeof *per_dev);
  sel = malloc(ff_farm_ndevs(farm) ? ff_farm_ndevs(farm) : 1);
  if (!per_dev || !sel) {
    ff_error("out of memory");
    goto fail;
  }
  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++)
    class_defaults(&per_dev[d]);

  groups = config_setting_get_member(root, "groups");
  if (groups && config_setting_type(groups) != CONFIG_TYPE_LIST) {
    ff_cfg_err(c->file, groups, "groups",
               "expected a list of groups: ( { ... }, ... )");
    goto fail;
  }
  for (int i = 0; groups && i < config_setting_length(groups); i++) {
    const config_setting_t *g = config_setting_get_elem(groups, (unsigned)i);
    struct pgroup pg;
    char path[64];

    ff_pathf(path, sizeof path, "groups.[%d]", i);
    if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
      ff_cfg_err(c->file, g, path, "expected a group { ... }");
      goto fail;
    }
    memset(sel, 0, ff_farm_ndevs(farm));
    if (parse_group(c, g, path, &pg) < 0 ||
        parse_select(c, g, path, (unsigned)i, sel) < 0)
      goto fail;
    if ((pg.set & SET_QUEUE) && add_queues(c, g, path, &pg) < 0)
      goto fail;
    for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++) {
      if (!sel[d])
        continue;
      apply_group(&per_dev[d], &pg);
      if (pg.set & SET_QUEUE)
        p->dev_queue[d] = pg.qbase + d % pg.queue.shards;
    }
  }
  r = build_classes(p, per_dev);
  free(per_dev);
  free(sel);
  if (r < 0) {
    ff_profile_free(p);
    return NULL;
  }
  return p;

fail:
  free(per_dev);
  free(sel);
  ff_profile_free(p);
  return NULL;
}

static struct ff_profile *
load(config_t *cfg, int ok, const char *name, const struct ff_farm *farm)
{
  struct pctx c = {name, farm, NULL};
  struct ff_profile *p;

  if (!ok) { /* ff_cfg_load said why */
    config_destroy(cfg);
    return NULL;
  }
  p = parse_root(&c, config_root_setting(cfg));
  config_destroy(cfg);
  return p;
}

struct ff_profile *
ff_profile_load_file(const char *path, const struct ff_farm *farm)
{
  config_t cfg;

  if (ff_is_builtin(path)) {
    const char *text = ff_builtin_text("profile", path);

    if (!text) {
      ff_error("%s: no such built-in profile (there are %s)", path,
               ff_builtin_names("profile"));
      return NULL;
    }
    return ff_profile_load_string(text, path + 8, farm);
  }
  config_init(&cfg);
  return load(&cfg, ff_cfg_load(&cfg, NULL, path, "profile") == 0, path, farm);
}

struct ff_profile *
ff_profile_load_string(const char *text, const char *name,
                       const struct ff_farm *farm)
{
  config_t cfg;

  config_init(&cfg);
  return load(&cfg, ff_cfg_load(&cfg, text, name, "profile") == 0, name, farm);
}

struct ff_profile *
ff_profile_ideal(const struct ff_farm *farm)
{
  struct ff_profile *p = profile_alloc(farm, "ideal");

  if (!p)
    return NULL;
  p->classes = malloc(sizeof *p->classes);
  if (!p->classes) {
    ff_profile_free(p);
    ff_error("out of memory");
    return NULL;
  }
  class_defaults(&p->classes[0]);
  p->nclasses = 1; /* dev_class is all zeros */
  return p;
}

void
ff_profile_free(struct ff_profile *p)
{
  if (!p)
    return;
  free(p->name);
  free(p->queues);
  free(p->classes);
  free(p->dev_class);
  free(p->dev_queue);
  free(p->ranges);
  free(p);
}

const char *
ff_profile_name(const struct ff_profile *p)
{
  return p->name;
}
