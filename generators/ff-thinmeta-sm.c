/* fusefarm: thin-pool metadata, the space maps (see ff-thinmeta-int.h).
 *
 * Mirrors the kernel's drivers/md/persistent-data/dm-space-map-common.c
 * (2-bit reference counts in bitmap blocks, index entries),
 * dm-space-map-metadata.c (the metadata space map: one index block,
 * allocation from a cursor that skips blocks still used in the last
 * committed state, operations queued while the space map changes itself)
 * and dm-space-map-disk.c (the data space map: bitmaps indexed by a btree,
 * with dm-space-map-common.c's 64-slot index-entry cache).  Which block
 * each allocation returns must stay the kernel's, byte for byte.
 */
#include "ff-thinmeta-int.h"
#include "ff-bytes.h"
#include "ff-error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- bitmap accessors -------------------------------------------------- */

static unsigned
bm_get(const uint8_t *blk, uint32_t bit)
{
  uint64_t w = ff_get_le64(blk + 16 + 8 * (size_t)(bit >> 5));
  unsigned sh = (bit & 31) * 2;

  return (unsigned)((w >> sh) & 1) << 1 | (unsigned)((w >> (sh + 1)) & 1);
}

static void
bm_set(uint8_t *blk, uint32_t bit, unsigned v)
{
  uint8_t *p = blk + 16 + 8 * (size_t)(bit >> 5);
  uint64_t w = ff_get_le64(p);
  unsigned sh = (bit & 31) * 2;

  w &= ~(3ull << sh);
  w |= (uint64_t)(v >> 1 & 1) << sh | (uint64_t)(v & 1) << (sh + 1);
  ff_put_le64(p, w);
}

/* ---- metadata space map: the bitmaps ---------------------------------- */

static int
ll_lookup_bitmap(const struct sim *s, const struct mll *ll, uint64_t b,
                 unsigned *rc)
{
  if (b >= ll->nr_blocks)
    return ff_error("thin metadata: block %" PRIu64 " out of bounds", b);
  *rc = bm_get(ff_tm_rd(s, ll->mi[b / EPB].blocknr), (uint32_t)(b % EPB));
  return 0;
}

int
ff_tm_ll_lookup(const struct sim *s, const struct mll *ll, uint64_t b,
                uint32_t *rc)
{
  unsigned v = 0;
  const uint8_t *p;

  if (ll_lookup_bitmap(s, ll, b, &v) < 0)
    return -1;
  if (v != 3) {
    *rc = v;
    return 0;
  }
  p = ff_tm_btree_lookup(s, ll->ref_count_root, b);
  if (!p)
    return ff_error(
      "thin metadata: reference count of block %" PRIu64 " missing", b);
  *rc = ff_get_le32(p);
  return 0;
}

/* First free entry in [begin, end) of a bitmap, or -1. */
static int64_t
bitmap_find_free(const uint8_t *blk, uint32_t begin, uint32_t end)
{
  while (begin < end) {
    if (!(begin & 31)) {
      uint64_t w = ff_get_le64(blk + 16 + 8 * (size_t)(begin >> 5));
      uint64_t lo = 0x5555555555555555ull;

      /* every 2-bit entry nonzero: skip the word */
      if (((w | w >> 1) & lo) == lo) {
        begin += 32;
        continue;
      }
    }
    if (!bm_get(blk, begin))
      return begin;
    begin++;
  }
  return -1;
}

static int
ll_find_free(const struct sim *s, const struct mll *ll, uint64_t begin,
             uint64_t end, uint64_t *res)
{
  uint64_t ib = begin / EPB, iend = (end + EPB - 1) / EPB;
  uint32_t b = (uint32_t)(begin % EPB), e = (uint32_t)(end % EPB);

  if (!e)
    e = EPB;
  for (uint64_t i = ib; i < iend; i++, b = 0) {
    const struct ie *ie = &ll->mi[i];
    uint32_t from = b > ie->nfb ? b : ie->nfb;
    int64_t pos;

    if (!ie->nr_free)
      continue;
    pos = bitmap_find_free(ff_tm_rd(s, ie->blocknr), from,
                           i == iend - 1 ? e : EPB);
    if (pos >= 0) {
      *res = i * EPB + (uint64_t)pos;
      return 0;
    }
  }
  return -ENOSPC;
}

/* A block free now and in the last committed state. */
static int
find_common_free(const struct sim *s, uint64_t begin, uint64_t *b)
{
  uint32_t count;

  do {
    int r = ll_find_free(s, &s->ll, begin, s->ll.nr_blocks, b);

    if (r)
      return r;
    count = 0;
    if (*b < s->old.nr_blocks) {
      if (ff_tm_ll_lookup(s, &s->old, *b, &count) < 0)
        return -1;
      if (count)
        begin = *b + 1;
    }
  } while (count);
  return 0;
}

static int
ll_update(struct sim *s, int inc, uint64_t b, uint64_t e)
{
  while (b != e) {
    uint64_t index = b / EPB;
    uint32_t bit = (uint32_t)(b % EPB), bit_end;
    struct ie ie = s->ll.mi[index];
    uint64_t nb;
    int shared;

    if (ff_tm_shadow(s, ie.blocknr, K_BITMAP, &nb, &shared) < 0)
      return -1;
    ie.blocknr = nb;
    bit_end = e - b < EPB - bit ? bit + (uint32_t)(e - b) : EPB;
    for (; bit != bit_end; bit++, b++) {
      uint8_t *bm = ff_tm_wr(s, ie.blocknr);
      unsigned old = bm_get(bm, bit);

      if (inc) {
        if (old >= 2)
          return ff_error("thin metadata: block %" PRIu64
                          " would have more than 2 references (not "
                          "supported)",
                          b);
        bm_set(bm, bit, old + 1);
        if (!old) {
          s->ll.nr_allocated++;
          ie.nr_free--;
          if (ie.nfb == bit)
            ie.nfb = bit + 1;
        }
      } else {
        if (!old)
          return ff_error("thin metadata: unable to decrement free block "
                          "%" PRIu64,
                          b);
        if (old == 3)
          return ff_error("thin metadata: block %" PRIu64
                          " has more than 2 references (not supported)",
                          b);
        bm_set(bm, bit, old - 1);
        if (old == 1) {
          s->ll.nr_allocated--;
          ie.nr_free++;
          if (bit < ie.nfb)
            ie.nfb = bit;
        }
      }
    }
    s->ll.mi[index] = ie;
    s->ll.changed = 1;
  }
  return 0;
}

/* Write the index into a shadow of the index block. */
static int
ll_commit(struct sim *s)
{
  uint64_t nb;
  uint8_t *p;
  int inc;

  if (!s->ll.changed)
    return 0;
  if (ff_tm_shadow(s, s->ll.bitmap_root, K_INDEX, &nb, &inc) < 0)
    return -1;
  p = ff_tm_wr(s, nb);
  memset(p, 0, 16);
  for (unsigned i = 0; i < NBITMAP; i++) {
    ff_put_le64(p + 16 + 16 * i, s->ll.mi[i].blocknr);
    ff_put_le32(p + 24 + 16 * i, s->ll.mi[i].nr_free);
    ff_put_le32(p + 28 + 16 * i, s->ll.mi[i].nfb);
  }
  s->ll.bitmap_root = nb;
  s->ll.changed = 0;
  return 0;
}

/* ---- metadata space map: the operations ------------------------------- */

int
ff_tm_bop_push(struct sim *s, int inc, uint64_t b, uint64_t e)
{
  unsigned next = (s->qe + 1) % NBOP;

  if (next == s->qb)
    return ff_error("thin metadata: too many recursive allocations");
  s->q[s->qe] = (struct bop){inc, b, e};
  s->qe = next;
  return 0;
}

int
ff_tm_apply_bops(struct sim *s)
{
  while (s->qb != s->qe) {
    struct bop op = s->q[s->qb];

    if (ll_update(s, op.inc, op.b, op.e) < 0)
      return -1;
    s->qb = (s->qb + 1) % NBOP;
  }
  return 0;
}

/* A space-map change, applied now or (while the space map is changing
 * itself) queued. */
static int
sm_change(struct sim *s, int inc, uint64_t b, uint64_t e)
{
  int r;

  if (s->bootstrap || s->recursion)
    return ff_tm_bop_push(s, inc, b, e);
  s->recursion++;
  r = ll_update(s, inc, b, e);
  if (!r)
    r = ff_tm_apply_bops(s);
  s->recursion--;
  return r;
}

int
ff_tm_sm_inc(struct sim *s, uint64_t b, uint64_t e)
{
  return sm_change(s, 1, b, e);
}

int
ff_tm_sm_dec(struct sim *s, uint64_t b, uint64_t e)
{
  return sm_change(s, 0, b, e);
}

int
ff_tm_sm_new_block(struct sim *s, uint64_t *b)
{
  int r;

  if (s->bootstrap) {
    /* The kernel checks only begin == nr_blocks (nr_blocks is 0 until the
     * bitmaps are made) and fails later on a block out of bounds. */
    if (s->begin == s->ll.nr_blocks || s->begin >= s->dev_blocks)
      return ff_error("tmeta of %" PRIu64 " blocks is too small for the "
                      "thin-pool metadata",
                      s->dev_blocks);
    *b = s->begin++;
    return 0;
  }
  r = find_common_free(s, s->begin, b);
  if (r == -ENOSPC)
    r = find_common_free(s, 0, b);
  if (r == -ENOSPC)
    return ff_error("tmeta of %" PRIu64 " blocks is too small: no free "
                    "metadata block left",
                    s->dev_blocks);
  if (r)
    return -1;
  s->begin = *b + 1;
  return ff_tm_sm_inc(s, *b, *b + 1);
}

int
ff_tm_sm_more_than_one(struct sim *s, uint64_t b, int *res)
{
  int adj = 0;
  unsigned rc = 0;

  *res = 0;
  if (s->bootstrap)
    return 0;
  for (unsigned i = s->qb; i != s->qe; i = (i + 1) % NBOP) {
    if (b >= s->q[i].b && b < s->q[i].e)
      adj += s->q[i].inc ? 1 : -1;
  }
  if (adj > 1) {
    *res = 1;
    return 0;
  }
  if (ll_lookup_bitmap(s, &s->ll, b, &rc) < 0)
    return -1;
  /* unsigned arithmetic, as the kernel's */
  *res = rc == 3 || (uint32_t)(rc + (uint32_t)adj) > 1;
  return 0;
}

int
ff_tm_sm_commit(struct sim *s)
{
  if (ll_commit(s) < 0)
    return -1;
  s->old = s->ll;
  return 0;
}

/* ---- data space map ----------------------------------------------------- */

static unsigned
iec_hash(uint64_t index)
{
  return (unsigned)((uint32_t)index * 4294967291u) & (IEC - 1);
}

static int
iec_writeback(struct sim *s, struct iec *c)
{
  uint8_t v[16];

  c->dirty = 0;
  ff_put_le64(v, c->ie.blocknr);
  ff_put_le32(v + 8, c->ie.nr_free);
  ff_put_le32(v + 12, c->ie.nfb);
  return ff_tm_btree_insert(s, &s->d.bitmap_root, VT_PLAIN, c->index, v);
}

static int
dsm_save_ie(struct sim *s, uint64_t index, struct ie ie)
{
  struct iec *c = &s->d.cache[iec_hash(index)];

  s->d.changed = 1;
  if (c->valid && c->index == index) {
    c->ie = ie;
    c->dirty = 1;
    return 0;
  }
  if (c->valid && c->dirty && iec_writeback(s, c) < 0)
    return -1;
  *c = (struct iec){1, 1, index, ie};
  return 0;
}

int
ff_tm_dsm_extend(struct sim *s, uint64_t extra)
{
  uint64_t nr = s->d.nr_blocks + extra;
  uint64_t from = (s->d.nr_blocks + EPB - 1) / EPB, to = (nr + EPB - 1) / EPB;

  /* Each bitmap takes a metadata block: refuse early what cannot fit
   * rather than fill memory with bitmaps first. */
  if (to - from > s->ll.nr_blocks - s->ll.nr_allocated)
    return ff_error("tmeta of %" PRIu64 " blocks is too small for %" PRIu64
                    " data space map bitmaps (%" PRIu64 " data blocks)",
                    s->dev_blocks, to - from, nr);
  s->d.nr_blocks = nr;
  for (uint64_t i = from; i < to; i++) {
    struct ie ie = {0, EPB, 0};

    if (ff_tm_new_block(s, K_BITMAP, &ie.blocknr) < 0 ||
        dsm_save_ie(s, i, ie) < 0)
      return -1;
  }
  return 0;
}

int
ff_tm_dsm_commit(struct sim *s)
{
  if (s->d.changed) {
    for (unsigned i = 0; i < IEC; i++) {
      if (s->d.cache[i].valid && s->d.cache[i].dirty &&
          iec_writeback(s, &s->d.cache[i]) < 0)
        return -1;
    }
    s->d.changed = 0;
  }
  s->d.committed_nr_blocks = s->d.nr_blocks;
  s->d.resized = 0;
  return 0;
}
