/* fusefarm: sparse per-device write overlay, in memory: the blocks, the
 * per-device state and its locking, write/zero/apply/foreach/stats.  The
 * save file is ff-overlay-file.c; what both share is ff-overlay-int.h.
 *
 * THREAD MODEL (details in ff-overlay.h): each device's state is allocated
 * on its first write, published with a compare-and-swap and freed only by
 * ff_overlay_free.  Its rwlock guards the sorted block array and the data
 * buffers; its atomic block count lets readers of unwritten devices skip
 * the lock.  Base reads happen before the write lock is taken; a callback
 * is never called with a lock held; no thread ever holds two locks.
 */
#include "ff-overlay-int.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ff-error.h"

#define BLOCK         FF_OVERLAY_BLOCK
#define PIECE_BLOCKS  (FF_OVERLAY_ATOMIC_MAX / FF_OVERLAY_BLOCK)
#define FOREACH_BATCH 64

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

/* The device's state if it holds any block (lock-free fast path). */
static struct ov_dev *
dev_nonempty(struct ff_overlay *ov, uint32_t dev)
{
  struct ov_dev *d;

  if (ov == NULL || dev >= ov->ndev)
    return NULL;
  d = dev_state(ov, dev);
  if (d == NULL ||
      atomic_load_explicit(&d->nblocks, memory_order_acquire) == 0)
    return NULL;
  return d;
}

/* The device's state, created on first use.  Two threads may race to
 * create it: the loser of the compare-and-swap frees its copy. */
static struct ov_dev *
dev_get(struct ff_overlay *ov, uint32_t dev)
{
  struct ov_dev *d, *expected = NULL;
  pthread_rwlockattr_t attr;
  int r;

  d = dev_state(ov, dev);
  if (d != NULL)
    return d;

  d = calloc(1, sizeof *d);
  if (d == NULL) {
    ff_error("allocate overlay state of device %" PRIu32 ": %m", dev);
    return NULL;
  }
  r = pthread_rwlockattr_init(&attr);
  if (r == 0) {
#ifdef __GLIBC__
    /* glibc's default prefers readers, which can starve a writer on a
     * busy device.  We never take a read lock recursively, so the
     * writer-preferring kind is safe. */
    pthread_rwlockattr_setkind_np(
      &attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    r = pthread_rwlock_init(&d->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  if (r != 0) {
    errno = r;
    ff_error("create lock of overlay device %" PRIu32 ": %m", dev);
    free(d);
    return NULL;
  }
  atomic_init(&d->nblocks, 0);

  if (!atomic_compare_exchange_strong_explicit(&ov->devs[dev], &expected, d,
                                               memory_order_acq_rel,
                                               memory_order_acquire)) {
    pthread_rwlock_destroy(&d->lock);
    free(d);
    return expected;
  }
  return d;
}

/* Index of the first entry with blk >= key.  Caller holds the lock. */
static size_t
lower_bound(const struct ov_dev *d, uint64_t key)
{
  size_t lo = 0, hi = d->len;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;

    if (d->v[mid].blk < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Make room for at least need entries.  Caller holds the write lock. */
static int
dev_reserve(struct ov_dev *d, size_t need)
{
  struct ov_block *nv;
  size_t ncap;

  if (need <= d->cap)
    return 0;
  ncap = d->cap < 8 ? 8 : d->cap;
  while (ncap < need && ncap <= SIZE_MAX / 2)
    ncap *= 2;
  if (ncap < need || ncap > SIZE_MAX / sizeof *nv) {
    errno = ENOMEM;
    return -1;
  }
  nv = realloc(d->v, ncap * sizeof *nv);
  if (nv == NULL)
    return -1;
  d->v = nv;
  d->cap = ncap;
  return 0;
}

/* Give memory back after the array shrank.  Caller holds the write lock. */
static void
dev_trim(struct ov_dev *d)
{
  if (d->len == 0) {
    free(d->v);
    d->v = NULL;
    d->cap = 0;
  } else if (d->cap > 64 && d->len < d->cap / 4) {
    struct ov_block *nv = realloc(d->v, d->cap / 2 * sizeof *nv);

    if (nv != NULL) { /* else keep the larger array */
      d->v = nv;
      d->cap /= 2;
    }
  }
}

int
ff_ov_reserve(struct ff_overlay *ov, int64_t delta)
{
  uint64_t cur;

  if (delta <= 0) {
    atomic_fetch_sub(&ov->ndata, (uint64_t)-delta);
    return 0;
  }
  cur = atomic_load(&ov->ndata);
  do {
    if (ov->max_data && cur + (uint64_t)delta > ov->max_data) {
      atomic_fetch_add(&ov->nfull, 1);
      errno = ENOSPC;
      return -1;
    }
  } while (
    !atomic_compare_exchange_weak(&ov->ndata, &cur, cur + (uint64_t)delta));
  return 0;
}

void
ff_overlay_set_max(struct ff_overlay *ov, uint64_t bytes)
{
  ov->max_data = bytes / BLOCK + (bytes && bytes < BLOCK);
}

void
ff_overlay_cap(struct ff_overlay *ov, uint64_t *max_bytes, uint64_t *full)
{
  *max_bytes = ov->max_data * BLOCK;
  *full = atomic_load(&ov->nfull);
}

/* Drop every block of the device. */
static void
dev_clear(struct ff_overlay *ov, struct ov_dev *d)
{
  wrlock(d);
  ff_ov_reserve(ov, -(int64_t)(d->len - d->nzero));
  for (size_t i = 0; i < d->len; i++)
    free(d->v[i].data);
  d->len = 0;
  d->nzero = 0;
  dev_trim(d);
  atomic_store_explicit(&d->nblocks, 0, memory_order_release);
  unlock(d);
}

struct ff_overlay *
ff_overlay_new(uint32_t ndev, const uint64_t *dev_sizes, ff_base_read_fn base,
               void *opaque)
{
  struct ff_overlay *ov;

  if (base == NULL || (ndev > 0 && dev_sizes == NULL)) {
    ff_error("create overlay: no base function or device sizes");
    return NULL;
  }
  ov = calloc(1, sizeof *ov);
  if (ov == NULL)
    goto nomem;
  ov->ndev = ndev;
  ov->base = base;
  ov->opaque = opaque;
  if (ndev > 0) {
    ov->sizes = calloc(ndev, sizeof *ov->sizes);
    ov->devs = calloc(ndev, sizeof *ov->devs);
    if (ov->sizes == NULL || ov->devs == NULL)
      goto nomem;
    memcpy(ov->sizes, dev_sizes, ndev * sizeof *ov->sizes);
    for (uint32_t i = 0; i < ndev; i++)
      atomic_init(&ov->devs[i], NULL);
  }
  return ov;

nomem:
  ff_error("create overlay of %" PRIu32 " devices: %m", ndev);
  ff_overlay_free(ov);
  return NULL;
}

void
ff_overlay_free(struct ff_overlay *ov)
{
  if (ov == NULL)
    return;
  for (uint32_t i = 0; ov->devs != NULL && i < ov->ndev; i++) {
    struct ov_dev *d =
      atomic_load_explicit(&ov->devs[i], memory_order_acquire);

    if (d == NULL)
      continue;
    for (size_t j = 0; j < d->len; j++)
      free(d->v[j].data);
    free(d->v);
    pthread_rwlock_destroy(&d->lock);
    free(d);
  }
  free(ov->devs);
  free(ov->sizes);
  free(ov);
}

/* --- writing ------------------------------------------------------- */

/* What a block of a write piece becomes.  Decided without the lock where
 * it depends only on the request and the (immutable) base; MERGE blocks
 * are partial and depend on the current contents, so they are decided
 * under the lock. */
enum plan_kind {
  PLAN_DATA,  /* store data */
  PLAN_MARK,  /* store a zero marker */
  PLAN_DROP,  /* remove from the overlay */
  PLAN_MERGE, /* partial: data holds the base, merge under the lock */
};

struct plan {
  uint64_t blk;
  unsigned char *data;
  enum plan_kind kind;
  bool base_zero; /* PLAN_MERGE: the base block is all zero */
};

/* One write or zero request. */
struct wreq {
  struct ff_overlay *ov;
  uint32_t dev;
  const char *verb;         /* "write" or "zero", for messages */
  const unsigned char *src; /* NULL: zeros */
  uint64_t off;             /* start of the whole request */
  struct plan *plan;        /* room for one piece */
  unsigned char *scratch;   /* BLOCK bytes */
};

static void
plan_free(struct plan *plan, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(plan[i].data);
    plan[i].data = NULL;
  }
}

static int
base_read(struct wreq *w, void *buf, uint64_t off, size_t len)
{
  if (w->ov->base(w->ov->opaque, w->dev, buf, off, len) == -1)
    return ff_error_prefix("%s device %" PRIu32 ": read base at %" PRIu64 ": ",
                           w->verb, w->dev, off);
  return 0;
}

/* Copy (or zero) the part of the request that falls in [ws, we) into the
 * block buffer of the block starting at bstart. */
static void
merge_part(const struct wreq *w, unsigned char *data, uint64_t bstart,
           uint64_t ws, uint64_t we)
{
  if (w->src != NULL)
    memcpy(data + (ws - bstart), w->src + (ws - w->off), we - ws);
  else
    memset(data + (ws - bstart), 0, we - ws);
}

/* Whether a planned piece drops every block when applied over the base:
 * full blocks planned as drops, and partial blocks over a zero base whose
 * part of the request is zero too. */
static bool
piece_is_noop(const struct wreq *w, uint64_t poff, uint64_t pend, size_t n)
{
  uint64_t size = w->ov->sizes[w->dev];

  for (size_t i = 0; i < n; i++) {
    const struct plan *p = &w->plan[i];
    uint64_t bstart = p->blk * BLOCK;
    uint64_t ws = max_u64(poff, bstart);
    uint64_t we = min_u64(pend, bstart + block_len(size, bstart));

    if (p->kind == PLAN_DROP)
      continue;
    if (p->kind != PLAN_MERGE || !p->base_zero)
      return false;
    if (w->src != NULL && !all_zero(w->src + (ws - w->off), we - ws))
      return false;
  }
  return true;
}

/* Apply [poff, pend) of the request, at most PIECE_BLOCKS blocks, under
 * one hold of the device's write lock. */
static int
write_piece(struct wreq *w, uint64_t poff, uint64_t pend)
{
  struct ff_overlay *ov = w->ov;
  uint64_t size = ov->sizes[w->dev];
  uint64_t fb = poff / BLOCK, lb = (pend - 1) / BLOCK;
  size_t n = lb - fb + 1, kmax = 0, k = 0, kz = 0, oldz = 0, i, j, i0, i1;
  size_t kd = 0, oldd = 0;
  struct plan *plan = w->plan;
  struct ov_dev *d;

  /* Phase 1, no lock: everything that depends only on the request and
   * the base, including every base read and allocation. */
  for (i = 0; i < n; i++) {
    struct plan *p = &plan[i];
    uint64_t bstart = (fb + i) * BLOCK;
    size_t bl = block_len(size, bstart);
    uint64_t ws = max_u64(poff, bstart), we = min_u64(pend, bstart + bl);

    p->blk = fb + i;
    p->data = NULL;
    p->base_zero = false;
    if (ws == bstart && we == bstart + bl) {
      const unsigned char *s = w->src ? w->src + (ws - w->off) : NULL;

      if (s != NULL && !all_zero(s, bl)) {
        p->data = malloc(BLOCK);
        if (p->data == NULL)
          goto nomem;
        memcpy(p->data, s, bl);
        memset(p->data + bl, 0, BLOCK - bl);
        p->kind = PLAN_DATA;
      } else {
        if (base_read(w, w->scratch, bstart, bl) == -1)
          goto err;
        p->kind = all_zero(w->scratch, bl) ? PLAN_DROP : PLAN_MARK;
      }
    } else {
      p->data = malloc(BLOCK);
      if (p->data == NULL)
        goto nomem;
      if (base_read(w, p->data, bstart, bl) == -1)
        goto err;
      memset(p->data + bl, 0, BLOCK - bl);
      p->base_zero = all_zero(p->data, bl);
      p->kind = PLAN_MERGE;
    }
    if (p->kind != PLAN_DROP)
      kmax++;
  }

  /* A device that has never held a block reads as its base, so a piece
   * that would only drop blocks changes nothing and allocates nothing (a
   * writer creating the state meanwhile is simply ordered after us). */
  d = dev_state(ov, w->dev);
  if (d == NULL && piece_is_noop(w, poff, pend, n)) {
    plan_free(plan, n);
    return 0;
  }
  if (d == NULL) {
    d = dev_get(ov, w->dev);
    if (d == NULL) {
      ff_error_prefix("%s device %" PRIu32 ": ", w->verb, w->dev);
      plan_free(plan, n);
      return -1;
    }
  }

  /* Phase 2, write lock: merge partial blocks with the current contents
   * and replace entries [i0, i1), the old blocks of [fb, lb]. */
  wrlock(d);
  i0 = lower_bound(d, fb);
  i1 = lower_bound(d, lb + 1);
  if (dev_reserve(d, d->len - (i1 - i0) + kmax) == -1) {
    int e = errno;

    unlock(d);
    errno = e;
    i = n;
    goto nomem;
  }
  for (i = 0; i < n; i++) {
    struct plan *p = &plan[i];
    uint64_t bstart = p->blk * BLOCK;
    size_t bl = block_len(size, bstart);

    if (p->kind == PLAN_MERGE) {
      j = lower_bound(d, p->blk);
      if (j < d->len && d->v[j].blk == p->blk) {
        if (d->v[j].data != NULL)
          memcpy(p->data, d->v[j].data, BLOCK);
        else
          memset(p->data, 0, BLOCK);
      }
      merge_part(w, p->data, bstart, max_u64(poff, bstart),
                 min_u64(pend, bstart + bl));
      if (all_zero(p->data, bl)) {
        free(p->data);
        p->data = NULL;
        p->kind = p->base_zero ? PLAN_DROP : PLAN_MARK;
      } else
        p->kind = PLAN_DATA;
    }
    if (p->kind != PLAN_DROP)
      k++;
    if (p->kind == PLAN_DATA)
      kd++;
  }
  /* The cap counts data blocks: the ones this piece adds, less those it
   * replaces.  Past it nothing of the piece lands. */
  for (j = i0; j < i1; j++)
    if (d->v[j].data != NULL)
      oldd++;
  if (ff_ov_reserve(ov, (int64_t)kd - (int64_t)oldd) < 0) {
    unlock(d);
    plan_free(plan, n);
    ff_error("%s device %" PRIu32 ": the overlay is full (overlay-max: "
             "%" PRIu64 " bytes of written blocks held): %m",
             w->verb, w->dev, ov->max_data * BLOCK);
    errno = ENOSPC;
    return -1;
  }
  for (j = i0; j < i1; j++) {
    if (d->v[j].data == NULL)
      oldz++;
    free(d->v[j].data);
  }
  if (k != i1 - i0)
    memmove(d->v + i0 + k, d->v + i1, (d->len - i1) * sizeof *d->v);
  for (i = 0, j = i0; i < n; i++) {
    if (plan[i].kind == PLAN_DROP)
      continue;
    d->v[j].blk = plan[i].blk;
    d->v[j].data = plan[i].data; /* ownership moves to the overlay */
    plan[i].data = NULL;
    if (d->v[j].data == NULL)
      kz++;
    j++;
  }
  d->len = d->len - (i1 - i0) + k;
  d->nzero = d->nzero - oldz + kz;
  dev_trim(d);
  atomic_store_explicit(&d->nblocks, d->len, memory_order_release);
  unlock(d);
  return 0;

nomem:
  ff_error("%s device %" PRIu32 ": allocate overlay blocks: %m", w->verb,
           w->dev);
err:
  plan_free(plan, i < n ? i + 1 : n);
  return -1;
}

/* Write (src != NULL) or zero len bytes at off. */
static int
overlay_modify(struct ff_overlay *ov, uint32_t dev, const unsigned char *src,
               uint64_t off, uint64_t len, const char *verb)
{
  struct wreq w = {.ov = ov, .dev = dev, .verb = verb, .src = src, .off = off};
  uint64_t end, poff, nblocks;
  int r = 0;

  if (ov == NULL)
    return ff_error("%s: no overlay", verb);
  if (dev >= ov->ndev)
    return ff_error("%s: no such device %" PRIu32 " (the farm has %" PRIu32
                    " devices)",
                    verb, dev, ov->ndev);
  if (off > ov->sizes[dev] || len > ov->sizes[dev] - off)
    return ff_error("%s beyond end of device %" PRIu32 ": offset %" PRIu64
                    " length %" PRIu64 ", device size %" PRIu64,
                    verb, dev, off, len, ov->sizes[dev]);
  if (len == 0)
    return 0;

  end = off + len;
  nblocks = (end - 1) / BLOCK - off / BLOCK + 1;
  w.plan = calloc((size_t)min_u64(nblocks, PIECE_BLOCKS), sizeof *w.plan);
  w.scratch = malloc(BLOCK);
  if (w.plan == NULL || w.scratch == NULL) {
    r = ff_error("%s device %" PRIu32 ": %m", verb, dev);
    goto out;
  }

  /* Pieces end on PIECE_BLOCKS boundaries, counted from off's block, so
   * every piece but the last covers exactly PIECE_BLOCKS blocks.  The
   * sum cannot overflow: pend <= end. */
  for (poff = off; poff < end && r == 0;) {
    uint64_t room = (uint64_t)PIECE_BLOCKS * BLOCK - poff % BLOCK;
    uint64_t pend = poff + min_u64(end - poff, room);

    r = write_piece(&w, poff, pend);
    poff = pend;
  }

out:
  free(w.plan);
  free(w.scratch);
  return r;
}

int
ff_overlay_write(struct ff_overlay *ov, uint32_t dev, const void *buf,
                 uint64_t off, size_t len)
{
  if (buf == NULL && len > 0)
    return ff_error("write device %" PRIu32 ": no buffer", dev);
  if (buf == NULL)
    buf = ""; /* len 0: only the range is checked */
  return overlay_modify(ov, dev, buf, off, len, "write");
}

int
ff_overlay_zero(struct ff_overlay *ov, uint32_t dev, uint64_t off,
                uint64_t len)
{
  return overlay_modify(ov, dev, NULL, off, len, "zero");
}

/* --- reading ------------------------------------------------------- */

void
ff_overlay_apply(struct ff_overlay *ov, uint32_t dev, void *buf, uint64_t off,
                 size_t len)
{
  struct ov_dev *d = dev_nonempty(ov, dev);
  unsigned char *out = buf;
  uint64_t end;

  if (d == NULL || off >= ov->sizes[dev] || len == 0)
    return;
  end = off + min_u64(len, ov->sizes[dev] - off);

  rdlock(d);
  for (size_t i = lower_bound(d, off / BLOCK); i < d->len; i++) {
    uint64_t bstart = d->v[i].blk * BLOCK;
    uint64_t s, e;

    if (bstart >= end)
      break;
    s = max_u64(off, bstart);
    e = min_u64(end, bstart + BLOCK);
    if (d->v[i].data != NULL)
      memcpy(out + (s - off), d->v[i].data + (s - bstart), e - s);
    else
      memset(out + (s - off), 0, e - s);
  }
  unlock(d);
}

uint64_t
ff_overlay_blocks(struct ff_overlay *ov, uint32_t dev)
{
  struct ov_dev *d;

  if (ov == NULL || dev >= ov->ndev)
    return 0;
  d = dev_state(ov, dev);
  return d ? atomic_load_explicit(&d->nblocks, memory_order_acquire) : 0;
}

int
ff_overlay_foreach(struct ff_overlay *ov, uint32_t dev,
                   int (*fn)(void *opaque, uint64_t off, int is_zero),
                   void *opaque)
{
  return ff_overlay_foreach_in(ov, dev, 0, UINT64_MAX, fn, opaque);
}

int
ff_overlay_foreach_in(struct ff_overlay *ov, uint32_t dev, uint64_t off,
                      uint64_t len,
                      int (*fn)(void *opaque, uint64_t off, int is_zero),
                      void *opaque)
{
  struct ov_dev *d = dev_nonempty(ov, dev);
  struct {
    uint64_t blk;
    int is_zero;
  } batch[FOREACH_BATCH];
  /* the blocks [next, end): end rounded up, without overflow */
  uint64_t next = off / BLOCK;
  uint64_t end = len > UINT64_MAX - off
                   ? UINT64_MAX / BLOCK + 1
                   : (off + len) / BLOCK + ((off + len) % BLOCK != 0);
  size_t nb;

  if (d == NULL || len == 0)
    return 0;
  /* Copy a batch under the lock, call fn without it, resume after the
   * last block seen. */
  do {
    nb = 0;
    rdlock(d);
    for (size_t i = lower_bound(d, next);
         i < d->len && d->v[i].blk < end && nb < FOREACH_BATCH; i++) {
      batch[nb].blk = d->v[i].blk;
      batch[nb].is_zero = d->v[i].data == NULL;
      nb++;
    }
    unlock(d);
    for (size_t i = 0; i < nb; i++) {
      int r = fn(opaque, batch[i].blk * BLOCK, batch[i].is_zero);

      if (r != 0)
        return r;
    }
    if (nb > 0)
      next = batch[nb - 1].blk + 1;
  } while (nb == FOREACH_BATCH);
  return 0;
}

void
ff_overlay_stats(struct ff_overlay *ov, uint64_t *data_blocks,
                 uint64_t *zero_blocks, uint64_t *bytes)
{
  uint64_t data = 0, zero = 0;

  for (uint32_t i = 0; ov != NULL && i < ov->ndev; i++) {
    struct ov_dev *d = dev_nonempty(ov, i);

    if (d == NULL)
      continue;
    rdlock(d);
    data += d->len - d->nzero;
    zero += d->nzero;
    unlock(d);
  }
  if (data_blocks != NULL)
    *data_blocks = data;
  if (zero_blocks != NULL)
    *zero_blocks = zero;
  if (bytes != NULL)
    *bytes = data * BLOCK;
}

/* --- appending (for ff-overlay-file.c) ------------------------------ */

int
ff_ov_append(struct ff_overlay *ov, uint32_t dev, uint64_t blk,
             unsigned char *data)
{
  struct ov_dev *d = dev_get(ov, dev);

  if (d == NULL)
    return -1;
  wrlock(d);
  if (dev_reserve(d, d->len + 1) == -1) {
    int e = errno;

    unlock(d);
    errno = e;
    return ff_error("allocate overlay blocks of device %" PRIu32 ": %m", dev);
  }
  if (data != NULL && ff_ov_reserve(ov, 1) < 0) {
    unlock(d);
    errno = ENOSPC;
    return ff_error("device %" PRIu32 ": more written blocks than "
                    "overlay-max (%" PRIu64 " bytes) allows",
                    dev, ov->max_data * BLOCK);
  }
  d->v[d->len].blk = blk;
  d->v[d->len].data = data;
  d->len++;
  if (data == NULL)
    d->nzero++;
  atomic_store_explicit(&d->nblocks, d->len, memory_order_release);
  unlock(d);
  return 0;
}

void
ff_ov_clear(struct ff_overlay *ov)
{
  for (uint32_t i = 0; i < ov->ndev; i++) {
    struct ov_dev *d = dev_state(ov, i);

    if (d != NULL)
      dev_clear(ov, d);
  }
}
