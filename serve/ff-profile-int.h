/* fusefarm: what a loaded profile holds, shared by the profile parser
 * (ff-profile.c) and the I/O model (ff-iomodel.c).  Internal to serve/:
 * no front end includes it.
 *
 * Invariants: as ff-profile.h says, a struct ff_profile is immutable once
 * loaded; every device has one class (dev_class) and at most one group
 * queue (dev_queue, FF_NONE: none).
 */
#ifndef FF_PROFILE_INT_H
#define FF_PROFILE_INT_H

#include <stdint.h>

#include "ff-profile.h"

/* ---- distributions ----------------------------------------------------- */

enum dist_kind {
  DIST_FIXED,
  DIST_UNIFORM,
  DIST_NORMAL,
  DIST_LOGNORMAL,
  DIST_PARETO,
};

/* Parameters in nanoseconds: fixed: a = value; uniform: [a, b]; normal:
 * mean a, stddev b; lognormal: mu a (ln ns), sigma b; pareto: scale a,
 * alpha b. */
struct dist {
  enum dist_kind kind;
  double a, b;
};

#define FF_MAX_DURATION_NS 1000000000000000000ull /* 10^18 ns, ~31 years */
#define FF_MAX_COUNT       1000000000000000000ll  /* vanish_after, eio_after */
#define FF_DIST_SAMPLE_CAP 3600e9 /* 1 h, so a sample always fits */

/* The q quantile of d in ns (unclamped; may be negative or infinite). */
double ff_dist_quantile(const struct dist *d, double q);

/* x rounded to ns and clamped to [0, FF_DIST_SAMPLE_CAP] (NaN: 0). */
uint64_t ff_dist_clamp_ns(double x);

/* A uniform in (0, 1), never 0 or 1, from 53 bits of h. */
static inline double
ff_u01(uint64_t h)
{
  return ((double)(h >> 11) + 0.5) * 0x1p-53;
}

/* ---- profile data ------------------------------------------------------ */

struct eio_range {
  uint64_t off, len;
};

struct qspec {
  uint32_t depth;  /* 0: no queue */
  uint32_t shards; /* >= 1 */
  uint64_t service_ns;
};

/* The merged settings of a device; devices with equal settings share one. */
struct devclass {
  struct dist lat[FF_OP_COUNT];
  uint64_t spinup_ns;
  uint64_t stall_every_ns; /* 0: no stalls */
  uint64_t stall_dur_ns;
  uint64_t bandwidth;    /* bytes/s, 0: no cap */
  uint64_t iops_cost_ns; /* 0: no cap */
  double eio_rate;
  uint32_t range_first; /* into ff_profile.ranges */
  uint32_t range_count;
  uint64_t appear_at_ns;
  uint64_t vanish_at_ns; /* UINT64_MAX: never */
  /* Count triggers: the device's requests since the profile was applied,
   * numbered from 0 in the model's decision order; request n fails when
   * n >= the value (UINT64_MAX: never). */
  uint64_t vanish_after; /* ENODEV at once */
  uint64_t eio_after;    /* EIO, after the request's time */
  int direct_io;
  /* A volatile write cache (write_cache): writes are answered without
   * their write latency, which the next flush pays instead.  wcache_size:
   * the dirty bytes it holds (0: no limit); a write that does not fit
   * pays its own latency (write-through). */
  int wcache;
  uint64_t wcache_size;
};

struct ff_profile {
  char *name;
  uint64_t seed; /* farm seed ^ profile seed */
  uint64_t fingerprint;
  uint32_t ndevs;
  int rotational;
  struct qspec global;
  uint32_t nqueues; /* group queue instances (a group's shards) */
  struct qspec *queues;
  uint32_t nclasses;
  struct devclass *classes;
  uint32_t *dev_class; /* [ndevs] */
  uint32_t *dev_queue; /* [ndevs], FF_NONE: no group queue */
  uint32_t nranges;
  struct eio_range *ranges;
};

#endif
