/* fusefarm: I/O profiles (the parser) and what the I/O model
 * (ff-iomodel.h) does with them.
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
 * - ff_iomodel_submit, _present, _direct_io, _write_cache, _rotational,
 *   _profile_name and
 *   _latency_quantile may be called from any number of threads at once,
 *   concurrently with ff_iomodel_set_profile.  None of them blocks for
 *   long or allocates: per-device state (request counter, spin-up time,
 *   bandwidth and IOPS buckets, write-cache debt) is six atomics updated with
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
 * runtime state (48 bytes per device plus its queues) are kept until
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

#endif
