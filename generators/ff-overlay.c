/* fusefarm: sparse per-device write overlay.
 *
 * THREAD MODEL (details in ff-overlay.h): each device's state is allocated
 * on its first write, published with a compare-and-swap and freed only by
 * ff_overlay_free.  Its rwlock guards the sorted block array and the data
 * buffers; its atomic block count lets readers of unwritten devices skip
 * the lock.  Base reads happen before the write lock is taken; a callback
 * is never called with a lock held; no thread ever holds two locks.
 */
#include "ff-overlay.h"
#include "ff-file.h"
#include "ff-bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ff-crc.h"
#include "ff-error.h"

#define BLOCK         FF_OVERLAY_BLOCK
#define PIECE_BLOCKS  (FF_OVERLAY_ATOMIC_MAX / FF_OVERLAY_BLOCK)
#define FOREACH_BATCH 64

/* On-disk format, see ff_overlay_save in ff-overlay.h. */
#define FILE_MAGIC    "FFOVRLAY"
#define TRAILER_MAGIC "FFOVEND"
#define FILE_VERSION  1
#define HEADER_SIZE   32
#define RECORD_SIZE   16
#define TRAILER_SIZE  20
#define REC_ZERO      1u
#define IO_BUF        (64 * 1024)

/* One overlay block.  data is BLOCK bytes whose in-device part is not all
 * zero (bytes past the device's end are zero), or NULL for a zero marker.
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
};

/* Lock failures mean a corrupted lock or a bug (we never lock
 * recursively), so there is nothing sensible to return. */
static void
lock_failed(const char *what, int err)
{
  fprintf(stderr, "fusefarm: overlay: %s: %s\n", what, strerror(err));
  abort();
}

static void
rdlock(struct ov_dev *d)
{
  int r = pthread_rwlock_rdlock(&d->lock);

  if (r != 0)
    lock_failed("pthread_rwlock_rdlock", r);
}

static void
wrlock(struct ov_dev *d)
{
  int r = pthread_rwlock_wrlock(&d->lock);

  if (r != 0)
    lock_failed("pthread_rwlock_wrlock", r);
}

static void
unlock(struct ov_dev *d)
{
  int r = pthread_rwlock_unlock(&d->lock);

  if (r != 0)
    lock_failed("pthread_rwlock_unlock", r);
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

static bool
all_zero(const unsigned char *p, size_t len)
{
  return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/* Number of in-device bytes of the block starting at bstart (< size). */
static size_t
block_len(uint64_t size, uint64_t bstart)
{
  return (size_t)min_u64(BLOCK, size - bstart);
}

static uint64_t
dev_blocks(uint64_t size)
{
  return size / BLOCK + (size % BLOCK != 0);
}

/* The device's state if it exists, without creating it. */
static struct ov_dev *
dev_state(struct ff_overlay *ov, uint32_t dev)
{
  return atomic_load_explicit(&ov->devs[dev], memory_order_acquire);
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

/* Drop every block of the device. */
static void
dev_clear(struct ov_dev *d)
{
  wrlock(d);
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
  struct ov_dev *d = dev_nonempty(ov, dev);
  struct {
    uint64_t blk;
    int is_zero;
  } batch[FOREACH_BATCH];
  uint64_t next = 0;
  size_t nb;

  if (d == NULL)
    return 0;
  /* Copy a batch under the lock, call fn without it, resume after the
   * last block seen. */
  do {
    nb = 0;
    rdlock(d);
    for (size_t i = lower_bound(d, next); i < d->len && nb < FOREACH_BATCH;
         i++) {
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

/* --- saving -------------------------------------------------------- */

/* Buffered writer keeping a running CRC.  crc is the raw register:
 * ff_crc32(bytes) == ~ff_crc_update(0xFFFFFFFF, bytes), so the trailer
 * holds ~crc. */
struct fwriter {
  int fd;
  uint32_t crc;
  size_t used;
  unsigned char buf[IO_BUF];
};

static int
fw_flush(struct fwriter *w)
{
  size_t done = 0;

  while (done < w->used) {
    ssize_t r = write(w->fd, w->buf + done, w->used - done);

    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0) {
      errno = ENOSPC;
      return -1;
    }
    done += (size_t)r;
  }
  w->used = 0;
  return 0;
}

static int
fw_put(struct fwriter *w, const void *p, size_t n)
{
  const unsigned char *s = p;

  w->crc = ff_crc_update(w->crc, s, n);
  while (n > 0) {
    size_t k;

    if (w->used == sizeof w->buf && fw_flush(w) == -1)
      return -1;
    k = sizeof w->buf - w->used;
    if (k > n)
      k = n;
    memcpy(w->buf + w->used, s, k);
    w->used += k;
    s += k;
    n -= k;
  }
  return 0;
}

/* Write every record of one device under its read lock. */
static int
save_dev(struct fwriter *w, struct ov_dev *d, uint32_t dev, uint64_t *count)
{
  unsigned char rec[RECORD_SIZE];
  int r = 0;

  rdlock(d);
  for (size_t i = 0; i < d->len && r == 0; i++) {
    ff_put_le32(rec, dev);
    ff_put_le32(rec + 4, d->v[i].data ? 0 : REC_ZERO);
    ff_put_le64(rec + 8, d->v[i].blk);
    r = fw_put(w, rec, sizeof rec);
    if (r == 0 && d->v[i].data != NULL)
      r = fw_put(w, d->v[i].data, BLOCK);
    (*count)++;
  }
  unlock(d);
  return r;
}

/* Record "save overlay PATH: WHAT TMP: strerror" and keep errno. */
static void
save_error(int err, const char *path, const char *what, const char *tmp)
{
  errno = err;
  ff_error("save overlay %s: %s %s: %m", path, what, tmp);
  errno = err;
}

/* Create path.tmp for writing: a stale temporary file from an interrupted
 * save is replaced; O_EXCL keeps us from writing through a symlink or a
 * hard link.  Returns the fd, or -1 with errno set. */
static int
create_tmp(const char *tmp)
{
  unlink(tmp);
  return open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
}

int
ff_overlay_save_check(const char *path)
{
  char *tmp;
  int fd, e;

  if (path == NULL || *path == '\0')
    return ff_error("save overlay: no path");
  if (asprintf(&tmp, "%s.tmp", path) == -1)
    return ff_error("save overlay %s: %m", path);
  fd = create_tmp(tmp);
  if (fd == -1) {
    save_error(errno, path, "create", tmp);
    free(tmp);
    return -1;
  }
  close(fd);
  if (unlink(tmp) == -1) {
    e = errno;
    save_error(e, path, "remove", tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  return 0;
}

int
ff_overlay_save(struct ff_overlay *ov, const char *path, uint64_t fingerprint)
{
  unsigned char hdr[HEADER_SIZE] = {0}, trl[TRAILER_SIZE] = {0};
  struct fwriter *w = NULL;
  struct ff_atomic a;
  const char *step = NULL;
  uint64_t count = 0;
  bool created = false;
  int r = -1, err = 0;

  if (ov == NULL || path == NULL) {
    errno = EINVAL;
    return ff_error("save overlay: no overlay or path");
  }
  w = malloc(sizeof *w);
  if (w == NULL) {
    err = errno;
    ff_error("save overlay %s: %m", path);
    goto out;
  }
  /* A stale temporary file from an interrupted save is replaced, not
   * written through (it may be a symlink or a hard link). */
  if (strlen(path) + 5 > sizeof a.path) {
    err = ENAMETOOLONG;
    errno = err;
    ff_error("save overlay %s: %m", path);
    goto out;
  }
  snprintf(a.tmp, sizeof a.tmp, "%s.tmp", path);
  unlink(a.tmp);
  if (ff_atomic_begin(&a, path) == -1) {
    err = errno;
    save_error(err, path, "create", a.tmp);
    goto out;
  }
  created = true;
  w->fd = a.fd;
  w->crc = 0xFFFFFFFFu;
  w->used = 0;

  memcpy(hdr, FILE_MAGIC, 8);
  ff_put_le32(hdr + 8, FILE_VERSION);
  ff_put_le32(hdr + 12, BLOCK);
  ff_put_le64(hdr + 16, fingerprint);
  ff_put_le32(hdr + 24, ov->ndev);
  if (fw_put(w, hdr, sizeof hdr) == -1)
    goto write_err;
  for (uint32_t i = 0; i < ov->ndev; i++) {
    struct ov_dev *d = dev_state(ov, i);

    if (d != NULL && save_dev(w, d, i, &count) == -1)
      goto write_err;
  }
  memcpy(trl, TRAILER_MAGIC, 8);
  ff_put_le64(trl + 8, count);
  if (fw_put(w, trl, 16) == -1)
    goto write_err;
  ff_put_le32(trl + 16, ~w->crc);
  if (fw_put(w, trl + 16, 4) == -1 || fw_flush(w) == -1)
    goto write_err;

  /* fsync, close, rename over path, fsync the directory; on failure the
   * temporary file is gone and path is as it was. */
  created = false;
  if (ff_atomic_commit(&a, &step) == -1) {
    err = errno;
    save_error(err, path, step ? step : "commit", a.tmp);
    goto out;
  }
  r = 0;
  goto out;

write_err:
  err = errno;
  save_error(err, path, "write", a.tmp);
out:
  if (created)
    ff_atomic_abort(&a);
  free(w);
  if (r == -1)
    errno = err ? err : EIO;
  return r;
}

/* --- loading ------------------------------------------------------- */

/* Buffered sequential reader. */
struct freader {
  int fd;
  size_t at, len;
  unsigned char buf[IO_BUF];
};

/* Read exactly n bytes: 0, or -1 with errno set (0 at end of file). */
static int
fr_get(struct freader *r, void *out, size_t n)
{
  unsigned char *o = out;

  while (n > 0) {
    size_t k;

    if (r->at == r->len) {
      ssize_t got = read(r->fd, r->buf, sizeof r->buf);

      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0) {
        if (got == 0)
          errno = 0;
        return -1;
      }
      r->at = 0;
      r->len = (size_t)got;
    }
    k = r->len - r->at;
    if (k > n)
      k = n;
    memcpy(o, r->buf + r->at, k);
    r->at += k;
    o += k;
    n -= k;
  }
  return 0;
}

static int
fr_seek(struct freader *r, uint64_t off)
{
  r->at = r->len = 0;
  return lseek(r->fd, (off_t)off, SEEK_SET) == (off_t)-1 ? -1 : 0;
}

/* Report a failed read of the overlay file. */
static int
read_error(const char *path)
{
  if (errno == 0)
    return ff_error("overlay %s is truncated (it changed while loading)",
                    path);
  return ff_error("read overlay %s: %m", path);
}

/* Append a record to a device.  Records arrive in ascending order, so
 * appending keeps the array sorted.  data may be NULL (zero marker);
 * ownership moves to the overlay on success. */
static int
load_append(struct ff_overlay *ov, uint32_t dev, uint64_t blk,
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
  d->v[d->len].blk = blk;
  d->v[d->len].data = data;
  d->len++;
  if (data == NULL)
    d->nzero++;
  atomic_store_explicit(&d->nblocks, d->len, memory_order_release);
  unlock(d);
  return 0;
}

/* Check the header, trailer and CRC of the whole file. */
static int
load_check(struct freader *r, const char *path, uint64_t size,
           uint64_t fingerprint, uint64_t *nrec)
{
  unsigned char hdr[HEADER_SIZE], trl[TRAILER_SIZE], chunk[BLOCK];
  uint32_t crc = 0xFFFFFFFFu, version, bsize, stored;
  uint64_t left, fp;
  ssize_t got;
  size_t k;

  if (size < HEADER_SIZE + TRAILER_SIZE)
    return ff_error("overlay %s is truncated (%" PRIu64
                    " bytes, shorter than a header and trailer)",
                    path, size);
  if (fr_get(r, hdr, sizeof hdr) == -1)
    return read_error(path);
  if (memcmp(hdr, FILE_MAGIC, 8) != 0)
    return ff_error("overlay %s is not a fusefarm overlay file (bad magic)",
                    path);
  version = ff_get_le32(hdr + 8);
  if (version != FILE_VERSION)
    return ff_error("overlay %s has unsupported version %" PRIu32
                    " (expected %d)",
                    path, version, FILE_VERSION);
  bsize = ff_get_le32(hdr + 12);
  if (bsize != BLOCK)
    return ff_error("overlay %s has block size %" PRIu32 " (expected %d)",
                    path, bsize, BLOCK);
  got = pread(r->fd, trl, sizeof trl, (off_t)(size - TRAILER_SIZE));
  if (got != (ssize_t)sizeof trl) {
    if (got >= 0)
      errno = 0;
    return read_error(path);
  }
  if (memcmp(trl, TRAILER_MAGIC, 8) != 0)
    return ff_error("overlay %s is truncated or corrupt (no trailer at the "
                    "end)",
                    path);

  /* CRC of everything before the stored CRC, header included. */
  crc = ff_crc_update(crc, hdr, sizeof hdr);
  for (left = size - 4 - HEADER_SIZE; left > 0; left -= k) {
    k = (size_t)min_u64(left, sizeof chunk);
    if (fr_get(r, chunk, k) == -1)
      return read_error(path);
    crc = ff_crc_update(crc, chunk, k);
  }
  stored = ff_get_le32(trl + 16);
  if (stored != ~crc)
    return ff_error("overlay %s is corrupt (CRC mismatch: stored %08" PRIx32
                    ", computed %08" PRIx32 ")",
                    path, stored, ~crc);

  fp = ff_get_le64(hdr + 16);
  if (fp != fingerprint)
    return ff_error("overlay %s was saved for another farm (fingerprint "
                    "%016" PRIx64 ", this farm %016" PRIx64 ")",
                    path, fp, fingerprint);
  *nrec = ff_get_le64(trl + 8);
  return 0;
}

/* Parse the records (integrity already checked) into the overlay. */
static int
load_records(struct ff_overlay *ov, struct freader *r, const char *path,
             uint64_t size, uint64_t nrec_trailer)
{
  uint64_t pos = HEADER_SIZE, end = size - TRAILER_SIZE, nrec = 0;
  uint64_t prev_dev = 0, prev_blk = 0;
  unsigned char rec[RECORD_SIZE];

  if (fr_seek(r, HEADER_SIZE) == -1)
    return ff_error("seek overlay %s: %m", path);
  for (; pos < end; nrec++) {
    unsigned char *data = NULL;
    uint32_t dev, flags;
    uint64_t blk;

    if (end - pos < RECORD_SIZE)
      return ff_error("overlay %s is corrupt (record %" PRIu64
                      " runs into the trailer)",
                      path, nrec);
    if (fr_get(r, rec, sizeof rec) == -1)
      return read_error(path);
    pos += RECORD_SIZE;
    dev = ff_get_le32(rec);
    flags = ff_get_le32(rec + 4);
    blk = ff_get_le64(rec + 8);
    if ((flags & ~REC_ZERO) != 0)
      return ff_error("overlay %s: record %" PRIu64
                      " has unknown flags 0x%" PRIx32,
                      path, nrec, flags);
    if (dev >= ov->ndev)
      return ff_error("overlay %s: record %" PRIu64 " is for device %" PRIu32
                      ", beyond this farm's %" PRIu32 " devices",
                      path, nrec, dev, ov->ndev);
    if (blk >= dev_blocks(ov->sizes[dev]))
      return ff_error("overlay %s: record %" PRIu64 ": block %" PRIu64
                      " is beyond the end of device %" PRIu32 " (%" PRIu64
                      " bytes)",
                      path, nrec, blk, dev, ov->sizes[dev]);
    if (nrec > 0 && (dev < prev_dev || (dev == prev_dev && blk <= prev_blk)))
      return ff_error("overlay %s: record %" PRIu64 " is out of order", path,
                      nrec);
    prev_dev = dev;
    prev_blk = blk;

    if ((flags & REC_ZERO) == 0) {
      size_t bl = block_len(ov->sizes[dev], blk * BLOCK);

      if (end - pos < BLOCK)
        return ff_error("overlay %s is corrupt (record %" PRIu64
                        " runs into the trailer)",
                        path, nrec);
      data = malloc(BLOCK);
      if (data == NULL)
        return ff_error("load overlay %s: %m", path);
      if (fr_get(r, data, BLOCK) == -1) {
        free(data);
        return read_error(path);
      }
      pos += BLOCK;
      /* Keep the invariants: data blocks are not all zero and bytes past
       * the device's end are zero. */
      memset(data + bl, 0, BLOCK - bl);
      if (all_zero(data, bl)) {
        free(data);
        return ff_error("overlay %s: record %" PRIu64
                        " is a data block holding only zeros",
                        path, nrec);
      }
    }
    if (load_append(ov, dev, blk, data) == -1) {
      free(data);
      return ff_error_prefix("load overlay %s: ", path);
    }
  }
  if (nrec != nrec_trailer)
    return ff_error("overlay %s is corrupt (the trailer counts %" PRIu64
                    " records, the file holds %" PRIu64 ")",
                    path, nrec_trailer, nrec);
  return 0;
}

int
ff_overlay_load(struct ff_overlay *ov, const char *path, uint64_t fingerprint)
{
  struct freader *r = NULL;
  struct stat st;
  uint64_t nrec = 0;
  int fd, ret = -1;

  if (ov == NULL || path == NULL)
    return ff_error("load overlay: no overlay or path");
  for (uint32_t i = 0; i < ov->ndev; i++)
    if (ff_overlay_blocks(ov, i) != 0)
      return ff_error("load overlay %s: the overlay is not empty (device "
                      "%" PRIu32 " has blocks)",
                      path, i);

  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd == -1)
    return ff_error("open overlay %s: %m", path);
  if (fstat(fd, &st) == -1) {
    ff_error("stat overlay %s: %m", path);
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    ff_error("overlay %s is not a regular file", path);
    goto out;
  }
  r = malloc(sizeof *r);
  if (r == NULL) {
    ff_error("load overlay %s: %m", path);
    goto out;
  }
  r->fd = fd;
  r->at = r->len = 0;
  if (load_check(r, path, (uint64_t)st.st_size, fingerprint, &nrec) == -1)
    goto out;
  ret = load_records(ov, r, path, (uint64_t)st.st_size, nrec);
  if (ret == -1) /* all-or-nothing */
    for (uint32_t i = 0; i < ov->ndev; i++) {
      struct ov_dev *d = dev_state(ov, i);

      if (d != NULL)
        dev_clear(d);
    }

out:
  free(r);
  close(fd);
  return ret;
}
