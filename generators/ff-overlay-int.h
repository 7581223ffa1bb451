/* fusefarm: the write overlay's in-memory layout, shared by ff-overlay.c
 * (blocks, per-device state, locking, write/zero/apply/foreach) and
 * ff-overlay-file.c (the save file: header, records, trailer, CRC).
 *
 * Internal to generators/: everything else sees struct ff_overlay as
 * opaque and uses ff-overlay.h, which documents the invariants, the
 * thread model and the file format.  The helpers here take the same locks
 * under the same rules (one lock at a time, none held across a callback).
 */
#ifndef FF_OVERLAY_INT_H
#define FF_OVERLAY_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ff-overlay.h"

/* One overlay block.  data is FF_OVERLAY_BLOCK bytes whose in-device part is
 * not all zero (bytes past the device's end are zero), or NULL for a zero
 * marker.
 */
struct ov_block {
  uint64_t blk;
  unsigned char *data;
};

/* A device's state, created by the first write that stores a block. */
struct ov_dev {
  pthread_rwlock_t lock; /* guards v, len, cap, nzero and *v[i].data */
  struct ov_block *v;    /* sorted by blk, no duplicates; NULL if len 0 */
  size_t len;
  size_t cap;
  size_t nzero; /* how many of v are zero markers */
  /* Equal to len; stored under the write lock once per change, loaded
   * without a lock by the fast paths. */
  _Atomic uint64_t nblocks;
};

struct ff_overlay {
  uint32_t ndev;
  ff_base_read_fn base;
  void *opaque;
  uint64_t *sizes;                /* ndev entries, immutable */
  _Atomic(struct ov_dev *) *devs; /* ndev entries, NULL until first write */
  /* The cap (ff_overlay_set_max): data blocks held across all devices,
   * at most max_data (0: no cap); changed under a device's write lock
   * with the change it counts. */
  uint64_t max_data;
  _Atomic uint64_t ndata;
  _Atomic uint64_t nfull; /* writes refused: the cap was reached */
};

/* Account for delta more (or fewer) data blocks: 0, or -1 with errno
 * ENOSPC (counted) when more would pass the cap. */
int ff_ov_reserve(struct ff_overlay *ov, int64_t delta);

/* Lock failures mean a corrupted lock or a bug (we never lock
 * recursively), so there is nothing sensible to return. */
static inline void
lock_failed(const char *what, int err)
{
  fprintf(stderr, "fusefarm: overlay: %s: %s\n", what, strerror(err));
  abort();
}

static inline void
rdlock(struct ov_dev *d)
{
  int r = pthread_rwlock_rdlock(&d->lock);

  if (r != 0)
    lock_failed("pthread_rwlock_rdlock", r);
}

static inline void
wrlock(struct ov_dev *d)
{
  int r = pthread_rwlock_wrlock(&d->lock);

  if (r != 0)
    lock_failed("pthread_rwlock_wrlock", r);
}

static inline void
unlock(struct ov_dev *d)
{
  int r = pthread_rwlock_unlock(&d->lock);

  if (r != 0)
    lock_failed("pthread_rwlock_unlock", r);
}

static inline uint64_t
min_u64(uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

static inline bool
all_zero(const unsigned char *p, size_t len)
{
  return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/* Number of in-device bytes of the block starting at bstart (< size). */
static inline size_t
block_len(uint64_t size, uint64_t bstart)
{
  return (size_t)min_u64(FF_OVERLAY_BLOCK, size - bstart);
}

static inline uint64_t
dev_blocks(uint64_t size)
{
  return size / FF_OVERLAY_BLOCK + (size % FF_OVERLAY_BLOCK != 0);
}

/* The device's state if it exists, without creating it. */
static inline struct ov_dev *
dev_state(struct ff_overlay *ov, uint32_t dev)
{
  return atomic_load_explicit(&ov->devs[dev], memory_order_acquire);
}

/* Append block blk (data, or NULL for a zero marker) to device dev,
 * whose blocks so far are all below blk, so the array stays sorted.
 * Ownership of data moves to the overlay on success.  Takes the device's
 * write lock.  Returns 0, or -1 with ff_error set. */
int ff_ov_append(struct ff_overlay *ov, uint32_t dev, uint64_t blk,
                 unsigned char *data);

/* Drop every block of every device (each under its write lock). */
void ff_ov_clear(struct ff_overlay *ov);

#endif
