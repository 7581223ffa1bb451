/* fusefarm: the I/O model: applies a profile (ff-profile.h) to requests.
 *
 * At each request's arrival the model decides WHEN the request is to be
 * answered and WITH WHAT ERROR.  It never sleeps; the request engine
 * (ff-server.h) hands the decision to its front end, which waits.
 * Invariants, thread model and ownership: see ff-profile.h (the profile)
 * and the notes below.
 */
#ifndef FF_IOMODEL_H
#define FF_IOMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ff-farm.h"
#include "ff-profile.h"

struct ff_iomodel;

/* A model for farm, applying p from start_ns on (the time origin of
 * spin-up, stalls, vanish_at and appear_at; the request counters of
 * vanish_after and eio_after start at 0).  Takes ownership of p, also
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
 *   - the request takes the next number n (from 0) of the device's
 *     request counter, an atomic fetch-add: requests are numbered in the
 *     order the model decides them, counted since the profile was
 *     applied; n >= vanish_after (every request after the device's first
 *     vanish_after) fails with ENODEV at once, injected = 1;
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
 *     except with a write cache (write_cache): a write that fits in the
 *     cache adds its sample to the device's write-back debt instead and
 *     is answered at t; a flush adds the whole debt (the cached writes,
 *     written back one after another) before its own sample, and empties
 *     the cache;
 *   - faults: EIO when n >= eio_after, when [off, off + len) overlaps an
 *     eio range, or with probability eio_rate; such requests still take
 *     their time.
 * dev must be < farm->ndevs (otherwise ENODEV, injected = 0). */
void ff_iomodel_submit(struct ff_iomodel *m, uint32_t dev, enum ff_op op,
                       uint64_t off, uint64_t len, uint64_t now_ns,
                       struct ff_io_decision *out);

/* 1 when dev exists at now_ns (its appear_at has passed), else 0.  A
 * vanished device stays present: it fails every request with ENODEV. */
int ff_iomodel_present(struct ff_iomodel *m, uint32_t dev, uint64_t now_ns);

/* 1 when the FUSE daemon should open dev with direct_io (default 1). */
int ff_iomodel_direct_io(struct ff_iomodel *m, uint32_t dev);

/* 1 when dev has a write cache (write_cache): a write with FUA must then
 * be followed by a flush (the NBD plugin does). */
int ff_iomodel_write_cache(struct ff_iomodel *m, uint32_t dev);

/* 1 when the current profile gives dev nothing to model: no latency for
 * any operation, no queue, cap, stall, spin-up, write cache or fault, and
 * it is there from the start.  The kernel can then serve its bytes alone
 * (fusefarm mount --passthrough). */
int ff_iomodel_untimed(struct ff_iomodel *m, uint32_t dev);

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

/* The devices the current profile made slow (docs/run-json.md, "slow"):
 * slow[d] (farm->ndevs entries) is 1 when d's configured read or write
 * latency median (ff_iomodel_latency_quantile at 0.5) is above the lowest
 * any device has, else 0.  A profile that gives every device the same
 * latency (ideal, hdd, a fixed delay) slows none; slow-tail slows the 1%
 * its fraction group picked.  Queues, caps, stalls, spin-up and faults do
 * not count.  Returns how many are slow.  Safe from any thread, as
 * ff_iomodel_latency_quantile is. */
size_t ff_iomodel_slow_devices(struct ff_iomodel *m, unsigned char *slow);

#endif
