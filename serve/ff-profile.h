/* fusefarm: I/O profiles and the I/O model.
 *
 * A profile (docs/profile-format.md) says how the farm's devices behave:
 * latency distributions per operation, queues shared by devices,
 * per-device bandwidth and IOPS caps, periodic stalls, spin-up, and
 * injected faults.  The I/O model applies a profile to requests: at each
 * request's arrival it decides WHEN the request is to be answered and
 * WITH WHAT ERROR.  It never sleeps; the front end (FUSE daemon, nbdkit
 * plugin) schedules the reply on a timer.
 *
 * Invariants
 * - A struct ff_profile is built against one farm (its device names and
 *   count) and is immutable once loaded: any number of threads may read
 *   it.  Every device resolves to one "class" (the merged settings of the
 *   groups that select it) and at most one group queue; devices with the
 *   same settings share a class, so a profile costs 8 bytes per device
 *   plus one class per distinct combination of groups.
 * - Decisions are reproducible: the random numbers for a request come from
 *   ff_hash4(farm seed ^ profile seed, device, per-device request counter,
 *   op), so the same requests in the same per-device order (and, for
 *   shared queues, the same global order) give the same decisions on every
 *   host.
 * - All times are CLOCK_MONOTONIC nanoseconds (uint64_t); the model never
 *   reads a clock itself, callers pass now_ns.
 *
 * Thread model
 * - ff_profile_* functions: load/free run in one thread; a loaded profile
 *   may be read from any number of threads.
 * - ff_iomodel_submit, _present, _direct_io, _rotational, _profile_name and
 *   _latency_quantile may be called from any number of threads at once,
 *   concurrently with ff_iomodel_set_profile.  None of them blocks for
 *   long or allocates: per-device state (request counter, spin-up time,
 *   bandwidth and IOPS buckets) is four atomics updated with
 *   compare-and-swap, and each queue (global or group shard) has its own
 *   mutex held for one O(log depth) heap update.  There is no lock shared
 *   by all devices unless the profile itself declares a global queue.
 * - ff_iomodel_set_profile publishes the new state with one atomic pointer
 *   store; concurrent set_profile calls are serialised by a mutex.
 * - ff_iomodel_new and ff_iomodel_free must not race with anything.
 *
 * Ownership: the model takes ownership of the profiles given to it and
 * frees them in ff_iomodel_free.  A profile replaced by set_profile is
 * NOT freed at once (a submitter may still be reading it); it and its
 * runtime state (32 bytes per device plus its queues) are kept until
 * ff_iomodel_free.  Profile switches are operator actions, so this cost
 * grows with the number of switches, not with traffic.
 */
#ifndef FF_PROFILE_H
#define FF_PROFILE_H

#include <stdint.h>

#include "ff-farm.h"

enum ff_op {
  FF_OP_READ,
  FF_OP_WRITE,
  FF_OP_FLUSH,
};
#define FF_OP_COUNT 3

/* Parse a duration: a decimal number (digits, optionally a fraction)
 * directly followed by a unit ns, us, ms, s or m (minutes), e.g. "0.2ms",
 * "1.5s", "30s".  A number without a unit, an unknown unit, a negative or
 * a value above 10^18 ns is an error.  Rounds to the nearest nanosecond.
 * Locale-independent. */
int ff_parse_duration(const char *s, uint64_t *ns);

/* --- profiles ----------------------------------------------------------- */

struct ff_profile;

/* Load a profile for farm.  Every error names file:line: key: what was
 * expected (a syntax error, an unknown key, a duration without a unit, a
 * device name that is not in the farm, ...).  NULL on error.  The profile
 * keeps no pointer to farm; it may only be used with a farm of the same
 * fingerprint (ff_iomodel_new checks). */
struct ff_profile *ff_profile_load_file(const char *path,
                                        const struct ff_farm *farm);

/* Same from text; name stands for the file in messages and gives the
 * default profile name (its basename without a ".conf" suffix). */
struct ff_profile *ff_profile_load_string(const char *text, const char *name,
                                          const struct ff_farm *farm);

/* The "ideal" profile, named "ideal": no delay, no queue, no fault, not
 * rotational, direct_io on every device.  NULL on allocation failure. */
struct ff_profile *ff_profile_ideal(const struct ff_farm *farm);

/* NULL is a no-op.  Never free a profile handed to an ff_iomodel. */
void ff_profile_free(struct ff_profile *p);

/* The profile's name (key "name", else the file's basename without
 * ".conf").  Lives as long as p. */
const char *ff_profile_name(const struct ff_profile *p);

/* --- the I/O model ------------------------------------------------------ */

struct ff_iomodel;

/* A model for farm, applying p from start_ns on (the time origin of
 * spin-up, stalls, vanish_at and appear_at).  Takes ownership of p, also
 * on failure (p is then freed); p == NULL means ff_profile_ideal(farm).
 * The farm must outlive the model.  NULL on error (allocation failure, or
 * p was loaded for another farm). */
struct ff_iomodel *ff_iomodel_new(const struct ff_farm *farm,
                                  struct ff_profile *p, uint64_t start_ns);

/* Frees the model, its current profile and every profile it replaced.
 * NULL is a no-op.  No other call on m may be running. */
void ff_iomodel_free(struct ff_iomodel *m);

/* Live switch to p (ownership taken, also on failure; NULL means ideal).
 * Requests arriving after the call use p; the time origin restarts at
 * now_ns; queues, buckets, request counters and first-access flags start
 * afresh.  The replaced profile stays allocated until ff_iomodel_free (see
 * Ownership above).  -1 on error (allocation failure, profile loaded for
 * another farm); the current profile then stays in force. */
int ff_iomodel_set_profile(struct ff_iomodel *m, struct ff_profile *p,
                           uint64_t now_ns);

struct ff_io_decision {
  uint64_t done_ns; /* absolute CLOCK_MONOTONIC time to reply (>= now_ns) */
  int error;        /* 0, EIO or ENODEV */
  int injected;     /* 1 if error was injected by a fault */
};

/* Decide request (dev, op, off, len) arriving at now_ns.  Never sleeps,
 * never allocates, safe from many threads at once.  Stages, in order:
 *   - a device not yet present (appear_at) or vanished (vanish_at) fails
 *     with ENODEV at once (done_ns = now_ns, injected = 1), touching no
 *     other state;
 *   - t = now_ns, then the global queue, then the device's group queue:
 *     start = max(t, earliest free slot), the slot is busy until
 *     start + service, t = start + service;
 *   - the device's bandwidth then IOPS bucket: t = max(t, bucket's
 *     next-free time), and the bucket's next-free time becomes
 *     t + len / bandwidth (resp. t + 1 / iops): a request's cost delays
 *     the next request of the device, not itself (no burst allowance);
 *   - a stall window containing t pushes t to the window's end;
 *   - spin-up: the device's first request adds the spin-up time, and
 *     requests arriving while it spins up wait for its end too;
 *   - t += a sample of the op's latency distribution: done_ns = t;
 *   - faults: EIO when [off, off + len) overlaps an eio range, or with
 *     probability eio_rate; such requests still take their time.
 * dev must be < farm->ndevs (otherwise ENODEV, injected = 0). */
void ff_iomodel_submit(struct ff_iomodel *m, uint32_t dev, enum ff_op op,
                       uint64_t off, uint64_t len, uint64_t now_ns,
                       struct ff_io_decision *out);

/* 1 when dev exists at now_ns (its appear_at has passed), else 0.  A
 * vanished device stays present: it fails every request with ENODEV. */
int ff_iomodel_present(struct ff_iomodel *m, uint32_t dev, uint64_t now_ns);

/* 1 when the FUSE daemon should open dev with direct_io (default 1). */
int ff_iomodel_direct_io(struct ff_iomodel *m, uint32_t dev);

/* 1 when the profile says the devices are rotational (for NBD clients). */
int ff_iomodel_rotational(struct ff_iomodel *m);

/* The current profile's name; valid until ff_iomodel_free (replaced
 * profiles are kept). */
const char *ff_iomodel_profile_name(struct ff_iomodel *m);

/* The quantile q (0..1, clamped) of the latency distribution configured
 * for op on dev, in ns, without queueing, caps, stalls or spin-up: what
 * submit samples from.  Samples are clamped to [0, 1 h]. */
uint64_t ff_iomodel_latency_quantile(struct ff_iomodel *m, uint32_t dev,
                                     enum ff_op op, double q);

#endif
