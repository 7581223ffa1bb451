/* fusefarm: thin-pool metadata writer (see ff-thinmeta.h and
 * docs/thin-metadata.md).
 *
 * A clean-room model of what the kernel's dm-thin-pool metadata code
 * does to the metadata device for the operations lvm causes.  The model
 * works on the bytes of the device, as the kernel does: btree nodes,
 * space-map bitmaps and the metadata space-map index are read and
 * written in an in-memory block store, and the block every structure
 * lands in follows the kernel's allocator.  The pieces, bottom up:
 *
 *   store      the device's blocks that were ever written (sparse)
 *   tm         transaction manager: new blocks, copy-on-write shadows
 *              (a block allocated or shadowed in the running transaction
 *              is written in place), commit
 *   msm        metadata space map: 2-bit reference counts in bitmap
 *              blocks listed by one index block; allocation searches the
 *              current bitmaps from a cursor and skips blocks still used
 *              in the last committed state; changes made while the space
 *              map is itself changing are queued and applied afterwards
 *   dsm        data space map: bitmaps indexed by a btree, index entries
 *              cached in a 64-slot table written back on collision and at
 *              commit
 *   btree      insert (with the kernel's rebalancing and splits), lookup
 *   pool       format, open, resize, create_thin, create_snap,
 *              set_transaction_id, commit, close
 *
 * Checksums and block numbers in the headers are set when the image is
 * finished, as the kernel sets them when it writes a block.
 */
#include "ff-thinmeta.h"
#include "ff-bytes.h"
#include "ff-error.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BS      FF_THINMETA_BLOCK
#define EPB     16320u /* bitmap entries per block: (4096 - 16) * 4 */
#define NBITMAP 255u   /* metadata index entries */
#define IEC     64u    /* data space map index cache slots */
#define NBOP    1025u  /* queued space-map operations (one slot unused) */

/* Superblock field offsets. */
#define SB_FLAGS       4
#define SB_MAGIC       32
#define SB_VERSION     40
#define SB_TIME        44
#define SB_TRANS_ID    48
#define SB_HELD_ROOT   56
#define SB_DATA_SM     64
#define SB_META_SM     192
#define SB_MAPPING     320
#define SB_DETAILS     328
#define SB_DATA_BS     336
#define SB_META_BS     340
#define SB_META_NR     344
#define THIN_MAGIC     27022010u
#define THIN_VERSION   2u
#define META_BS_SECTOR 8u

/* Btree node header. */
#define NODE_INTERNAL 1u
#define NODE_LEAF     2u
#define NH            32

enum kind { K_SB, K_BTREE, K_BITMAP, K_INDEX };

struct blk {
  uint64_t nr;
  uint64_t gen; /* == sim.gen: new or shadowed in the running transaction */
  enum kind kind;
  uint8_t data[BS];
};

/* A space map's index entry. */
struct ie {
  uint64_t blocknr;
  uint32_t nr_free, nfb; /* nfb: no free entry before this bit */
};

/* The metadata space map's state (what the kernel keeps twice: current
 * and as of the last commit). */
struct mll {
  uint64_t nr_blocks, nr_allocated, bitmap_root, ref_count_root;
  struct ie mi[NBITMAP];
  int changed;
};

struct iec {
  int valid, dirty;
  uint64_t index;
  struct ie ie;
};

struct dll {
  uint64_t nr_blocks, nr_allocated, bitmap_root, ref_count_root;
  uint64_t committed_nr_blocks;
  int changed, resized;
  struct iec cache[IEC];
};

struct bop {
  int inc;
  uint64_t b, e;
};

/* A thin device changed in the running transaction (dm-thin keeps them
 * in a list, newest first, and writes their details at commit). */
struct td {
  uint64_t id, mapped, trans;
  uint32_t ctime, stime;
  int changed;
};

/* Value kinds of the btrees, for the reference counting of shared nodes. */
enum vt { VT_PLAIN, VT_SUBTREE };

struct sim {
  /* store: open addressing over block numbers */
  struct blk **slot;
  size_t cap, n;

  uint64_t dev_blocks; /* metadata blocks the pool uses */
  uint32_t dbs;        /* data block size, sectors */
  uint64_t gen;
  int is_open;

  struct mll ll, old;
  uint64_t begin;
  unsigned recursion;
  int bootstrap;
  struct bop q[NBOP];
  unsigned qb, qe;

  struct dll d;

  uint64_t root, details_root, held_root, trans_id;
  uint32_t time, flags;
  int in_service, dirty;
  int ooms; /* dm-thin's out-of-metadata-space mode: messages refused */
  struct td *tds;
  size_t ntd, tdcap;
};

struct ff_thinmeta {
  uint64_t size;
  size_t n;
  uint64_t *nr;
  uint8_t *data;
};

/* ---- CRC-32C ---------------------------------------------------------- */

static uint32_t crc32c_table[256];

__attribute__((constructor)) static void
crc32c_init(void)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;

    for (int k = 0; k < 8; k++)
      c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
    crc32c_table[i] = c;
  }
}

uint32_t
ff_thinmeta_csum(const uint8_t *block, uint32_t xor_value)
{
  uint32_t crc = 0xFFFFFFFFu;

  for (size_t i = 4; i < BS; i++)
    crc = crc32c_table[(crc ^ block[i]) & 0xff] ^ (crc >> 8);
  return crc ^ xor_value;
}

/* ---- block store ------------------------------------------------------ */

static size_t
hash_nr(uint64_t nr, size_t cap)
{
  return (size_t)((nr * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static struct blk *
store_find(const struct sim *s, uint64_t nr)
{
  if (!s->cap)
    return NULL;
  for (size_t h = hash_nr(nr, s->cap);; h = (h + 1) & (s->cap - 1)) {
    if (!s->slot[h])
      return NULL;
    if (s->slot[h]->nr == nr)
      return s->slot[h];
  }
}

static int
store_grow(struct sim *s)
{
  size_t cap = s->cap ? s->cap * 2 : 256;
  struct blk **slot = calloc(cap, sizeof *slot);

  if (!slot)
    return ff_error("thin metadata: out of memory");
  for (size_t i = 0; i < s->cap; i++) {
    if (s->slot[i]) {
      size_t h = hash_nr(s->slot[i]->nr, cap);

      while (slot[h])
        h = (h + 1) & (cap - 1);
      slot[h] = s->slot[i];
    }
  }
  free(s->slot);
  s->slot = slot;
  s->cap = cap;
  return 0;
}

static struct blk *
store_get(struct sim *s, uint64_t nr)
{
  struct blk *b = store_find(s, nr);
  size_t h;

  if (b)
    return b;
  if ((s->n + 1) * 2 > s->cap && store_grow(s) < 0)
    return NULL;
  b = calloc(1, sizeof *b);
  if (!b) {
    ff_error("thin metadata: out of memory");
    return NULL;
  }
  b->nr = nr;
  b->gen = (uint64_t)-1;
  for (h = hash_nr(nr, s->cap); s->slot[h]; h = (h + 1) & (s->cap - 1))
    ;
  s->slot[h] = b;
  s->n++;
  return b;
}

static const uint8_t zero_block[BS];

/* Read access: the block's bytes, zeros if it was never written. */
static const uint8_t *
rd(const struct sim *s, uint64_t nr)
{
  struct blk *b = store_find(s, nr);

  return b ? b->data : zero_block;
}

/* Write access to a block that exists (new or shadowed). */
static uint8_t *
wr(struct sim *s, uint64_t nr)
{
  struct blk *b = store_find(s, nr);

  return b ? b->data : NULL;
}

static int
is_shadow(const struct sim *s, uint64_t nr)
{
  struct blk *b = store_find(s, nr);

  return b && b->gen == s->gen;
}

/* ---- node and bitmap accessors ---------------------------------------- */

static uint32_t
n_flags(const uint8_t *n)
{
  return ff_get_le32(n + 4);
}

static uint32_t
n_nr(const uint8_t *n)
{
  return ff_get_le32(n + 16);
}

static uint32_t
n_max(const uint8_t *n)
{
  return ff_get_le32(n + 20);
}

static uint32_t
n_vsize(const uint8_t *n)
{
  return ff_get_le32(n + 24);
}

static void
n_set_nr(uint8_t *n, uint32_t v)
{
  ff_put_le32(n + 16, v);
}

static uint8_t *
n_key(const uint8_t *n, uint32_t i)
{
  return (uint8_t *)n + NH + 8 * (size_t)i;
}

static uint64_t
n_keyv(const uint8_t *n, uint32_t i)
{
  return ff_get_le64(n_key(n, i));
}

static uint8_t *
n_val(const uint8_t *n, uint32_t i)
{
  return (uint8_t *)n + NH + 8 * (size_t)n_max(n) + (size_t)n_vsize(n) * i;
}

static uint64_t
n_val64(const uint8_t *n, uint32_t i)
{
  return ff_get_le64(n_val(n, i));
}

static uint32_t
calc_max_entries(uint32_t vsize)
{
  return (BS - NH) / (8 + vsize) / 3 * 3;
}

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

/* ---- forward declarations --------------------------------------------- */

static int sm_new_block(struct sim *s, uint64_t *b);
static int sm_inc(struct sim *s, uint64_t b, uint64_t e);
static int sm_dec(struct sim *s, uint64_t b, uint64_t e);
static int sm_more_than_one(struct sim *s, uint64_t b, int *res);

/* ---- transaction manager ---------------------------------------------- */

static int
tm_new_block(struct sim *s, enum kind k, uint64_t *nr)
{
  struct blk *b;

  if (sm_new_block(s, nr) < 0)
    return -1;
  b = store_get(s, *nr);
  if (!b)
    return -1;
  memset(b->data, 0, BS);
  b->kind = k;
  b->gen = s->gen;
  return 0;
}

/* Copy-on-write: *nr is orig itself when orig is already the running
 * transaction's and not shared, else a new block holding orig's bytes
 * (orig's count dropped).  *inc: orig was shared, so its children gain
 * a reference. */
static int
tm_shadow(struct sim *s, uint64_t orig, enum kind k, uint64_t *nr, int *inc)
{
  struct blk *b;

  if (sm_more_than_one(s, orig, inc) < 0)
    return -1;
  if (is_shadow(s, orig) && !*inc) {
    *nr = orig;
    return 0;
  }
  if (sm_new_block(s, nr) < 0 || sm_dec(s, orig, orig + 1) < 0)
    return -1;
  b = store_get(s, *nr);
  if (!b)
    return -1;
  memcpy(b->data, rd(s, orig), BS);
  b->kind = k;
  b->gen = s->gen;
  return 0;
}

/* ---- btree: empty, lookup --------------------------------------------- */

static int
btree_empty(struct sim *s, uint32_t vsize, uint64_t *root)
{
  uint8_t *n;

  if (tm_new_block(s, K_BTREE, root) < 0)
    return -1;
  n = wr(s, *root);
  ff_put_le32(n + 4, NODE_LEAF);
  ff_put_le32(n + 20, calc_max_entries(vsize));
  ff_put_le32(n + 24, vsize);
  return 0;
}

/* Index of the largest key <= key, or -1; an equal key wins. */
static int
lower_bound(const uint8_t *n, uint64_t key)
{
  int lo = -1, hi = (int)n_nr(n);

  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    uint64_t k = n_keyv(n, (uint32_t)mid);

    if (k == key)
      return mid;
    if (k < key)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* The value of key (NULL if absent). */
static const uint8_t *
btree_lookup(const struct sim *s, uint64_t root, uint64_t key)
{
  for (;;) {
    const uint8_t *n = rd(s, root);
    int i = lower_bound(n, key);

    if (i < 0 || (uint32_t)i >= n_nr(n))
      return NULL;
    if (n_flags(n) & NODE_INTERNAL) {
      root = n_val64(n, (uint32_t)i);
      continue;
    }
    return n_keyv(n, (uint32_t)i) == key ? n_val(n, (uint32_t)i) : NULL;
  }
}

/* ---- btree: insert ------------------------------------------------------ */

/* The path being shadowed: at most a parent and the current node. */
struct spine {
  int count;
  uint64_t nodes[2];
  uint64_t root;
};

static uint64_t
sp_cur(const struct spine *sp)
{
  return sp->nodes[sp->count - 1];
}

/* A shared node's children gain a reference from its new copy. */
static int
inc_children(struct sim *s, uint64_t nr, enum vt vt)
{
  const uint8_t *n = rd(s, nr);
  uint32_t cnt = n_nr(n);
  uint64_t b = 0, e = 0;

  if (!(n_flags(n) & NODE_INTERNAL) && vt != VT_SUBTREE)
    return 0;
  for (uint32_t i = 0; i < cnt; i++) {
    uint64_t v = n_val64(n, i);

    if (i && v == e) {
      e++;
      continue;
    }
    if (i && sm_inc(s, b, e) < 0)
      return -1;
    b = v;
    e = v + 1;
  }
  return cnt ? sm_inc(s, b, e) : 0;
}

static int
shadow_node(struct sim *s, uint64_t orig, enum vt vt, uint64_t *nr)
{
  int inc;

  if (tm_shadow(s, orig, K_BTREE, nr, &inc) < 0)
    return -1;
  return inc ? inc_children(s, *nr, vt) : 0;
}

static int
shadow_step(struct sim *s, struct spine *sp, uint64_t b, enum vt vt)
{
  uint64_t nb;

  if (sp->count == 2) {
    sp->nodes[0] = sp->nodes[1];
    sp->count = 1;
  }
  if (shadow_node(s, b, vt, &nb) < 0)
    return -1;
  if (!sp->count)
    sp->root = nb;
  sp->nodes[sp->count++] = nb;
  return 0;
}

static int
insert_at(uint8_t *n, uint32_t index, uint64_t key, const void *value)
{
  uint32_t nr = n_nr(n), max = n_max(n), vs = n_vsize(n);

  if (index > nr || index >= max || nr >= max)
    return ff_error("thin metadata: btree node full on insert (internal "
                    "error)");
  memmove(n_key(n, index + 1), n_key(n, index), 8 * (size_t)(nr - index));
  ff_put_le64(n_key(n, index), key);
  memmove(n_val(n, index + 1), n_val(n, index), (size_t)vs * (nr - index));
  memcpy(n_val(n, index), value, vs);
  n_set_nr(n, nr + 1);
  return 0;
}

static void
copy_entries(uint8_t *dst, uint32_t doff, const uint8_t *src, uint32_t soff,
             uint32_t count)
{
  uint32_t vs = n_vsize(dst);

  memcpy(n_key(dst, doff), n_key(src, soff), 8 * (size_t)count);
  memcpy(n_val(dst, doff), n_val(src, soff), (size_t)vs * count);
}

static void
move_entries(uint8_t *dst, uint32_t doff, const uint8_t *src, uint32_t soff,
             uint32_t count)
{
  uint32_t vs = n_vsize(dst);

  memmove(n_key(dst, doff), n_key(src, soff), 8 * (size_t)count);
  memmove(n_val(dst, doff), n_val(src, soff), (size_t)vs * count);
}

static void
shift_down(uint8_t *n, uint32_t count)
{
  move_entries(n, 0, n, count, n_nr(n) - count);
}

static void
shift_up(uint8_t *n, uint32_t count)
{
  move_entries(n, count, n, 0, n_nr(n));
}

static void
redistribute2(uint8_t *l, uint8_t *r)
{
  uint32_t nl = n_nr(l), nr = n_nr(r), total = nl + nr;
  uint32_t tl = total / 2, tr = total - tl;

  if (nl < tl) {
    copy_entries(l, nl, r, 0, tl - nl);
    shift_down(r, tl - nl);
  } else if (nl > tl) {
    if (nr)
      shift_up(r, nl - tl);
    copy_entries(r, 0, l, tl, nl - tl);
  }
  n_set_nr(l, tl);
  n_set_nr(r, tr);
}

static void
redistribute3(uint8_t *l, uint8_t *c, uint8_t *r)
{
  uint32_t nl = n_nr(l), nr = n_nr(r), total = nl + nr;
  uint32_t tl = total / 3, tc = (total - tl) / 2, tr = total - tl - tc;

  if (nl < tl) {
    uint32_t short_l = tl - nl;

    copy_entries(l, nl, r, 0, short_l);
    copy_entries(c, 0, r, short_l, tc);
    shift_down(r, nr - tr);
  } else if (nl < tl + tc) {
    uint32_t l2c = nl - tl;

    copy_entries(c, 0, l, tl, l2c);
    copy_entries(c, l2c, r, 0, tc - l2c);
    shift_down(r, nr - tr);
  } else {
    uint32_t short_r = tr - nr;

    shift_up(r, short_r);
    copy_entries(r, 0, l, nl - short_r, short_r);
    copy_entries(c, 0, l, tl, nl - tl);
  }
  n_set_nr(l, tl);
  n_set_nr(c, tc);
  n_set_nr(r, tr);
}

static void
init_sibling(uint8_t *n, const uint8_t *like)
{
  ff_put_le32(n + 4, n_flags(like));
  n_set_nr(n, 0);
  ff_put_le32(n + 20, n_max(like));
  ff_put_le32(n + 24, n_vsize(like));
}

/* Shadow the parent's index-th child and point the parent at the copy. */
static int
shadow_child(struct sim *s, uint64_t parent, uint32_t index, enum vt vt,
             uint64_t *nr)
{
  if (shadow_node(s, n_val64(rd(s, parent), index), vt, nr) < 0)
    return -1;
  ff_put_le64(n_val(wr(s, parent), index), *nr);
  return 0;
}

static int
split_one_into_two(struct sim *s, struct spine *sp, uint32_t pi, uint64_t key)
{
  uint64_t left = sp_cur(sp), right;
  uint8_t *ln, *rn, *pn, loc[8];

  if (tm_new_block(s, K_BTREE, &right) < 0)
    return -1;
  ln = wr(s, left);
  rn = wr(s, right);
  init_sibling(rn, ln);
  redistribute2(ln, rn);
  pn = wr(s, sp->nodes[0]);
  ff_put_le64(loc, right);
  if (insert_at(pn, pi + 1, n_keyv(rn, 0), loc) < 0)
    return -1;
  sp->nodes[1] = key < n_keyv(rn, 0) ? left : right;
  return 0;
}

static int
split_two_into_three(struct sim *s, struct spine *sp, uint32_t pi, enum vt vt,
                     uint64_t key)
{
  uint64_t parent = sp->nodes[0], left, right, middle;
  uint32_t mi;
  uint8_t *ln, *mn, *rn, *pn, loc[8];

  if (pi == 0) {
    mi = 1;
    left = sp_cur(sp);
    if (shadow_child(s, parent, pi + 1, vt, &right) < 0)
      return -1;
  } else {
    mi = pi;
    right = sp_cur(sp);
    if (shadow_child(s, parent, pi - 1, vt, &left) < 0)
      return -1;
  }
  if (tm_new_block(s, K_BTREE, &middle) < 0)
    return -1;
  ln = wr(s, left);
  mn = wr(s, middle);
  rn = wr(s, right);
  init_sibling(mn, ln);
  redistribute3(ln, mn, rn);
  pn = wr(s, parent);
  memcpy(n_key(pn, mi), n_key(rn, 0), 8);
  ff_put_le64(loc, middle);
  if (insert_at(pn, mi, n_keyv(mn, 0), loc) < 0)
    return -1;
  if (key < n_keyv(mn, 0))
    sp->nodes[1] = left;
  else if (key < n_keyv(rn, 0))
    sp->nodes[1] = middle;
  else
    sp->nodes[1] = right;
  return 0;
}

/* The root is full: move its entries into two new children. */
static int
split_beneath(struct sim *s, struct spine *sp)
{
  uint64_t parent = sp_cur(sp), left, right;
  uint8_t *pn, *ln, *rn;
  uint32_t nl, nr, size;

  if (tm_new_block(s, K_BTREE, &left) < 0)
    return -1;
  pn = wr(s, parent);
  ln = wr(s, left);
  size = n_vsize(pn);
  nl = n_nr(pn) / 2;
  init_sibling(ln, pn);
  n_set_nr(ln, nl);
  memcpy(n_key(ln, 0), n_key(pn, 0), 8 * (size_t)nl);
  memcpy(n_val(ln, 0), n_val(pn, 0), (size_t)nl * size);

  if (tm_new_block(s, K_BTREE, &right) < 0)
    return -1;
  rn = wr(s, right);
  nr = n_nr(pn) - nl;
  init_sibling(rn, pn);
  n_set_nr(rn, nr);
  memcpy(n_key(rn, 0), n_key(pn, nl), 8 * (size_t)nr);
  memcpy(n_val(rn, 0), n_val(pn, nl), (size_t)nr * size);

  /* Only the header, two keys and two values change: the rest of the
   * old root's bytes stay, as on the kernel's disk. */
  ff_put_le32(pn + 4, NODE_INTERNAL);
  n_set_nr(pn, 2);
  ff_put_le32(pn + 20, calc_max_entries(8));
  ff_put_le32(pn + 24, 8);
  memcpy(n_key(pn, 0), n_key(ln, 0), 8);
  ff_put_le64(n_val(pn, 0), left);
  memcpy(n_key(pn, 1), n_key(rn, 0), 8);
  ff_put_le64(n_val(pn, 1), right);
  return 0;
}

static int
rebalance_side(struct sim *s, struct spine *sp, enum vt vt, uint32_t pi,
               uint64_t key, int to_left)
{
  uint64_t parent = sp->nodes[0], sib;
  uint8_t *l, *r, *pn;

  if (shadow_child(s, parent, to_left ? pi - 1 : pi + 1, vt, &sib) < 0)
    return -1;
  pn = wr(s, parent);
  if (to_left) {
    l = wr(s, sib);
    r = wr(s, sp_cur(sp));
    redistribute2(l, r);
    memcpy(n_key(pn, pi), n_key(r, 0), 8);
    if (key < n_keyv(r, 0))
      sp->nodes[1] = sib;
  } else {
    l = wr(s, sp_cur(sp));
    r = wr(s, sib);
    redistribute2(l, r);
    memcpy(n_key(pn, pi + 1), n_key(r, 0), 8);
    if (key >= n_keyv(r, 0))
      sp->nodes[1] = sib;
  }
  return 0;
}

#define SPACE_THRESHOLD 8

static int
rebalance_or_split(struct sim *s, struct spine *sp, enum vt vt, uint32_t pi,
                   uint64_t key)
{
  const uint8_t *pn = rd(s, sp->nodes[0]);
  uint32_t np = n_nr(pn);
  int lshared = 0, rshared = 0;

  if (pi > 0) {
    uint64_t lb = n_val64(pn, pi - 1);

    if (sm_more_than_one(s, lb, &lshared) < 0)
      return -1;
    if (!lshared && n_max(rd(s, lb)) - n_nr(rd(s, lb)) >= SPACE_THRESHOLD)
      return rebalance_side(s, sp, vt, pi, key, 1);
  }
  if (pi + 1 < np) {
    uint64_t rb = n_val64(pn, pi + 1);

    if (sm_more_than_one(s, rb, &rshared) < 0)
      return -1;
    if (!rshared && n_max(rd(s, rb)) - n_nr(rd(s, rb)) >= SPACE_THRESHOLD)
      return rebalance_side(s, sp, vt, pi, key, 0);
  }
  if (lshared || rshared || np <= 2 || pi == 0 || pi + 1 == np)
    return split_one_into_two(s, sp, pi, key);
  return split_two_into_three(s, sp, pi, vt, key);
}

static int
has_space_for_insert(const uint8_t *n, uint64_t key)
{
  int i;

  if (n_nr(n) != n_max(n))
    return 1;
  if (!(n_flags(n) & NODE_LEAF))
    return 0;
  i = lower_bound(n, key);
  return i >= 0 && n_keyv(n, (uint32_t)i) == key;
}

/* Shadow the path to key's leaf, making room on the way; *index is where
 * key is or goes in the leaf sp_cur(sp). */
static int
btree_insert_raw(struct sim *s, struct spine *sp, uint64_t root, enum vt vt,
                 uint64_t key, int *index)
{
  int i = -1, top = 1;
  const uint8_t *n;

  for (;;) {
    if (shadow_step(s, sp, root, vt) < 0)
      return -1;
    if (sp->count == 2 && i >= 0)
      ff_put_le64(n_val(wr(s, sp->nodes[0]), (uint32_t)i), sp_cur(sp));
    n = rd(s, sp_cur(sp));
    if (!has_space_for_insert(n, key)) {
      if ((top ? split_beneath(s, sp)
               : rebalance_or_split(s, sp, vt, (uint32_t)i, key)) < 0)
        return -1;
      n = rd(s, sp_cur(sp));
    }
    i = lower_bound(n, key);
    if (n_flags(n) & NODE_LEAF)
      break;
    if (i < 0) {
      ff_put_le64(n_key(wr(s, sp_cur(sp)), 0), key);
      i = 0;
    }
    root = n_val64(n, (uint32_t)i);
    top = 0;
  }
  if (i < 0 || n_keyv(n, (uint32_t)i) != key)
    i++;
  *index = i;
  return 0;
}

/* Insert or overwrite key in a one-level btree; *root becomes the new
 * root.  value has the tree's value size. */
static int
btree_insert(struct sim *s, uint64_t *root, enum vt vt, uint64_t key,
             const void *value)
{
  struct spine sp = {0};
  uint8_t *n;
  int i;

  if (btree_insert_raw(s, &sp, *root, vt, key, &i) < 0)
    return -1;
  n = wr(s, sp_cur(&sp));
  if ((uint32_t)i >= n_nr(n) || n_keyv(n, (uint32_t)i) != key) {
    if (insert_at(n, (uint32_t)i, key, value) < 0)
      return -1;
  } else {
    if (vt == VT_SUBTREE && memcmp(n_val(n, (uint32_t)i), value, 8))
      return ff_error("thin metadata: replacing a mapping tree is not "
                      "supported");
    memcpy(n_val(n, (uint32_t)i), value, n_vsize(n));
  }
  *root = sp.root;
  return 0;
}

/* ---- metadata space map: the bitmaps ---------------------------------- */

static int
ll_lookup_bitmap(const struct sim *s, const struct mll *ll, uint64_t b,
                 unsigned *rc)
{
  if (b >= ll->nr_blocks)
    return ff_error("thin metadata: block %" PRIu64 " out of bounds", b);
  *rc = bm_get(rd(s, ll->mi[b / EPB].blocknr), (uint32_t)(b % EPB));
  return 0;
}

static int
ll_lookup(const struct sim *s, const struct mll *ll, uint64_t b, uint32_t *rc)
{
  unsigned v;
  const uint8_t *p;

  if (ll_lookup_bitmap(s, ll, b, &v) < 0)
    return -1;
  if (v != 3) {
    *rc = v;
    return 0;
  }
  p = btree_lookup(s, ll->ref_count_root, b);
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
    pos = bitmap_find_free(rd(s, ie->blocknr), from, i == iend - 1 ? e : EPB);
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
      if (ll_lookup(s, &s->old, *b, &count) < 0)
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

    if (tm_shadow(s, ie.blocknr, K_BITMAP, &nb, &shared) < 0)
      return -1;
    ie.blocknr = nb;
    bit_end = e - b < EPB - bit ? bit + (uint32_t)(e - b) : EPB;
    for (; bit != bit_end; bit++, b++) {
      uint8_t *bm = wr(s, ie.blocknr);
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
  if (tm_shadow(s, s->ll.bitmap_root, K_INDEX, &nb, &inc) < 0)
    return -1;
  p = wr(s, nb);
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

static int
bop_push(struct sim *s, int inc, uint64_t b, uint64_t e)
{
  unsigned next = (s->qe + 1) % NBOP;

  if (next == s->qb)
    return ff_error("thin metadata: too many recursive allocations");
  s->q[s->qe] = (struct bop){inc, b, e};
  s->qe = next;
  return 0;
}

static int
apply_bops(struct sim *s)
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
    return bop_push(s, inc, b, e);
  s->recursion++;
  r = ll_update(s, inc, b, e);
  if (!r)
    r = apply_bops(s);
  s->recursion--;
  return r;
}

static int
sm_inc(struct sim *s, uint64_t b, uint64_t e)
{
  return sm_change(s, 1, b, e);
}

static int
sm_dec(struct sim *s, uint64_t b, uint64_t e)
{
  return sm_change(s, 0, b, e);
}

static int
sm_new_block(struct sim *s, uint64_t *b)
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
  return sm_inc(s, *b, *b + 1);
}

static int
sm_more_than_one(struct sim *s, uint64_t b, int *res)
{
  int adj = 0;
  unsigned rc;

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

static int
sm_commit(struct sim *s)
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
  return btree_insert(s, &s->d.bitmap_root, VT_PLAIN, c->index, v);
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

static int
dsm_extend(struct sim *s, uint64_t extra)
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

    if (tm_new_block(s, K_BITMAP, &ie.blocknr) < 0 ||
        dsm_save_ie(s, i, ie) < 0)
      return -1;
  }
  return 0;
}

static int
dsm_commit(struct sim *s)
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

/* ---- the pool ------------------------------------------------------------
 */

static void
put_sm_root(uint8_t *p, uint64_t nr_blocks, uint64_t nr_allocated,
            uint64_t bitmap_root, uint64_t ref_count_root)
{
  ff_put_le64(p, nr_blocks);
  ff_put_le64(p + 8, nr_allocated);
  ff_put_le64(p + 16, bitmap_root);
  ff_put_le64(p + 24, ref_count_root);
}

/* The superblock's transaction fields and both space-map roots, then the
 * end of the transaction. */
static void
write_superblock(struct sim *s, uint8_t *sb)
{
  ff_put_le32(sb + SB_FLAGS, s->flags);
  ff_put_le32(sb + SB_TIME, s->time);
  ff_put_le64(sb + SB_TRANS_ID, s->trans_id);
  ff_put_le64(sb + SB_HELD_ROOT, s->held_root);
  put_sm_root(sb + SB_META_SM, s->ll.nr_blocks, s->ll.nr_allocated,
              s->ll.bitmap_root, s->ll.ref_count_root);
  put_sm_root(sb + SB_DATA_SM, s->d.nr_blocks, s->d.nr_allocated,
              s->d.bitmap_root, s->d.ref_count_root);
  ff_put_le64(sb + SB_MAPPING, s->root);
  ff_put_le64(sb + SB_DETAILS, s->details_root);
  s->gen++; /* the shadow table is wiped */
}

static int
pool_format(struct sim *s)
{
  struct blk *sb;

  /* The metadata space map hands out blocks from 1 while it builds
   * itself, then counts them all at once. */
  memset(&s->ll, 0, sizeof s->ll);
  s->bootstrap = 1;
  s->begin = 1;
  if (tm_new_block(s, K_INDEX, &s->ll.bitmap_root) < 0 ||
      btree_empty(s, 4, &s->ll.ref_count_root) < 0)
    return -1;
  s->ll.nr_blocks = s->dev_blocks;
  for (uint64_t i = 0; i < (s->dev_blocks + EPB - 1) / EPB; i++) {
    s->ll.mi[i].nr_free = EPB;
    if (tm_new_block(s, K_BITMAP, &s->ll.mi[i].blocknr) < 0)
      return -1;
    s->ll.changed = 1;
  }
  s->bootstrap = 0;
  if (bop_push(s, 1, 0, s->begin) < 0 || apply_bops(s) < 0 || sm_commit(s) < 0)
    return -1;

  memset(&s->d, 0, sizeof s->d);
  if (btree_empty(s, 16, &s->d.bitmap_root) < 0 ||
      btree_empty(s, 4, &s->d.ref_count_root) < 0 ||
      btree_empty(s, 8, &s->root) < 0 ||
      btree_empty(s, 24, &s->details_root) < 0)
    return -1;

  if (dsm_commit(s) < 0 || sm_commit(s) < 0)
    return -1;
  sb = store_get(s, 0);
  if (!sb)
    return -1;
  memset(sb->data, 0, BS);
  sb->kind = K_SB;
  s->time = 0;
  s->trans_id = 0;
  s->held_root = 0;
  s->flags = 0;
  ff_put_le64(sb->data + SB_MAGIC, THIN_MAGIC);
  ff_put_le32(sb->data + SB_VERSION, THIN_VERSION);
  ff_put_le32(sb->data + SB_DATA_BS, s->dbs);
  ff_put_le32(sb->data + SB_META_BS, META_BS_SECTOR);
  ff_put_le64(sb->data + SB_META_NR, s->dev_blocks);
  write_superblock(s, sb->data);
  return 0;
}

static int
pool_open(struct sim *s, uint64_t dbs)
{
  const uint8_t *sb, *idx;

  if (s->is_open)
    return ff_error("the pool is already open");
  if (dbs && dbs != s->dbs)
    return ff_error("open with data block size %" PRIu64
                    " sectors, the image is built for %" PRIu32,
                    dbs, s->dbs);
  s->gen++; /* a new transaction manager */
  s->recursion = 0;
  s->qb = s->qe = 0;
  s->ntd = 0;
  s->in_service = 0;
  s->ooms = 0;
  s->is_open = 1;
  sb = rd(s, 0);
  if (!memcmp(sb, zero_block, BS))
    return pool_format(s);

  if (ff_get_le32(sb + SB_DATA_BS) != s->dbs)
    return ff_error("changing the data block size (from %" PRIu32
                    " to %" PRIu32 ") is not supported",
                    ff_get_le32(sb + SB_DATA_BS), s->dbs);
  memset(&s->ll, 0, sizeof s->ll);
  s->ll.nr_blocks = ff_get_le64(sb + SB_META_SM);
  s->ll.nr_allocated = ff_get_le64(sb + SB_META_SM + 8);
  s->ll.bitmap_root = ff_get_le64(sb + SB_META_SM + 16);
  s->ll.ref_count_root = ff_get_le64(sb + SB_META_SM + 24);
  idx = rd(s, s->ll.bitmap_root);
  for (unsigned i = 0; i < NBITMAP; i++) {
    s->ll.mi[i].blocknr = ff_get_le64(idx + 16 + 16 * i);
    s->ll.mi[i].nr_free = ff_get_le32(idx + 24 + 16 * i);
    s->ll.mi[i].nfb = ff_get_le32(idx + 28 + 16 * i);
  }
  s->old = s->ll;
  s->begin = 0; /* the allocator's cursor restarts */

  memset(&s->d, 0, sizeof s->d);
  s->d.nr_blocks = ff_get_le64(sb + SB_DATA_SM);
  s->d.nr_allocated = ff_get_le64(sb + SB_DATA_SM + 8);
  s->d.bitmap_root = ff_get_le64(sb + SB_DATA_SM + 16);
  s->d.ref_count_root = ff_get_le64(sb + SB_DATA_SM + 24);
  s->d.committed_nr_blocks = s->d.nr_blocks;

  s->time = ff_get_le32(sb + SB_TIME);
  s->trans_id = ff_get_le64(sb + SB_TRANS_ID);
  s->held_root = ff_get_le64(sb + SB_HELD_ROOT);
  s->flags = ff_get_le32(sb + SB_FLAGS);
  s->root = ff_get_le64(sb + SB_MAPPING);
  s->details_root = ff_get_le64(sb + SB_DETAILS);
  return 0;
}

static int
pool_commit(struct sim *s)
{
  struct blk *sb;

  if (!s->in_service)
    return 0;
  /* details of the devices changed in this transaction, newest first */
  for (size_t i = 0; i < s->ntd; i++) {
    struct td *t = &s->tds[i];
    uint8_t v[24];

    if (!t->changed)
      continue;
    ff_put_le64(v, t->mapped);
    ff_put_le64(v + 8, t->trans);
    ff_put_le32(v + 16, t->ctime);
    ff_put_le32(v + 20, t->stime);
    if (btree_insert(s, &s->details_root, VT_PLAIN, t->id, v) < 0)
      return -1;
  }
  s->ntd = 0;
  if (dsm_commit(s) < 0 || sm_commit(s) < 0)
    return -1;
  sb = store_find(s, 0);
  write_superblock(s, sb->data);
  s->dirty = 0;
  return 0;
}

static int
td_push(struct sim *s, struct td t)
{
  if (s->ntd == s->tdcap) {
    size_t cap = s->tdcap ? 2 * s->tdcap : 16;
    struct td *p = realloc(s->tds, cap * sizeof *p);

    if (!p)
      return ff_error("thin metadata: out of memory");
    s->tds = p;
    s->tdcap = cap;
  }
  memmove(s->tds + 1, s->tds, s->ntd * sizeof *s->tds);
  s->tds[0] = t;
  s->ntd++;
  return 0;
}

static struct td *
td_find(struct sim *s, uint64_t id)
{
  for (size_t i = 0; i < s->ntd; i++)
    if (s->tds[i].id == id)
      return &s->tds[i];
  return NULL;
}

static int
check_new_id(struct sim *s, uint64_t id)
{
  if (id > FF_THINMETA_MAX_DEV_ID)
    return ff_error("device id %" PRIu64 " is above the maximum %u", id,
                    FF_THINMETA_MAX_DEV_ID);
  if (td_find(s, id) || btree_lookup(s, s->details_root, id))
    return ff_error("thin device %" PRIu64 " already exists", id);
  return 0;
}

static int
pool_create_thin(struct sim *s, uint64_t id)
{
  uint64_t dev_root;
  uint8_t v[8];

  s->in_service = 1;
  if (check_new_id(s, id) < 0 || btree_empty(s, 8, &dev_root) < 0)
    return -1;
  ff_put_le64(v, dev_root);
  if (btree_insert(s, &s->root, VT_SUBTREE, id, v) < 0)
    return -1;
  return td_push(s, (struct td){id, 0, s->trans_id, s->time, s->time, 1});
}

static int
pool_create_snap(struct sim *s, uint64_t id, uint64_t origin)
{
  const uint8_t *p;
  uint64_t origin_root;
  uint32_t rc;
  struct td *o;
  uint8_t v[8];

  s->in_service = 1;
  if (check_new_id(s, id) < 0)
    return -1;
  p = btree_lookup(s, s->root, origin);
  if (!p)
    return ff_error("origin thin device %" PRIu64 " does not exist", origin);
  origin_root = ff_get_le64(p);
  if (ll_lookup(s, &s->ll, origin_root, &rc) < 0)
    return -1;
  if (rc > 1)
    return ff_error("origin thin device %" PRIu64 " already shares its "
                    "mapping tree with a snapshot (not supported)",
                    origin);
  if (!td_find(s, origin) && !btree_lookup(s, s->details_root, origin))
    return ff_error("origin thin device %" PRIu64 " has no details", origin);
  if (sm_inc(s, origin_root, origin_root + 1) < 0)
    return -1;
  ff_put_le64(v, origin_root);
  if (btree_insert(s, &s->root, VT_SUBTREE, id, v) < 0)
    return -1;
  s->time++;
  if (td_push(s, (struct td){id, 0, s->trans_id, s->time, s->time, 1}) < 0)
    return -1;
  o = td_find(s, origin);
  if (!o) {
    p = btree_lookup(s, s->details_root, origin);
    if (td_push(s, (struct td){origin, ff_get_le64(p), ff_get_le64(p + 8),
                               ff_get_le32(p + 16), ff_get_le32(p + 20), 0}) <
        0)
      return -1;
    o = td_find(s, origin);
  }
  o->changed = 1;
  o->stime = s->time;
  /* the snapshot is at index 1 now if the origin was just pushed */
  for (size_t i = 0; i < s->ntd; i++) {
    if (s->tds[i].id == id) {
      s->tds[i].mapped = o->mapped;
      s->tds[i].stime = s->time;
    }
  }
  return 0;
}

/* dm-thin checks the free metadata blocks after each of its commits; at
 * or below the reserve (a tenth of the device, at most 4096 blocks) the
 * pool goes out of metadata space and refuses messages. */
static void
check_metadata_space(struct sim *s)
{
  uint64_t reserve = s->dev_blocks / 10 < 4096 ? s->dev_blocks / 10 : 4096;

  if (s->ll.nr_blocks - s->ll.nr_allocated <= reserve)
    s->ooms = 1;
}

static int
pool_op(struct sim *s, const struct ff_thinmeta_op *op)
{
  if (op->kind != FF_THINMETA_OPEN && !s->is_open)
    return ff_error("the pool is not open");
  if (s->ooms && (op->kind == FF_THINMETA_CREATE_THIN ||
                  op->kind == FF_THINMETA_CREATE_SNAP ||
                  op->kind == FF_THINMETA_SET_TRANSACTION_ID))
    return ff_error("the pool is out of metadata space (%" PRIu64
                    " free blocks of %" PRIu64
                    "; dm-thin keeps a tenth, at most 4096, in reserve "
                    "and refuses messages): tmeta is too small",
                    s->ll.nr_blocks - s->ll.nr_allocated, s->dev_blocks);
  switch (op->kind) {
  case FF_THINMETA_OPEN:
    return pool_open(s, op->a);
  case FF_THINMETA_RESIZE:
    s->in_service = 1;
    s->dirty = 1;
    if (s->d.resized)
      return ff_error("a second resize in one transaction (commit first)");
    if (op->a < s->d.committed_nr_blocks)
      return ff_error("cannot reduce the data space map from %" PRIu64
                      " to %" PRIu64 " blocks",
                      s->d.committed_nr_blocks, op->a);
    if (op->a > (1ull << 40))
      return ff_error("%" PRIu64 " data blocks: above the 2^40 dm-thin can "
                      "map",
                      op->a);
    s->d.resized = 1;
    return op->a == s->d.committed_nr_blocks
             ? 0
             : dsm_extend(s, op->a - s->d.committed_nr_blocks);
  case FF_THINMETA_CREATE_THIN:
    s->dirty = 1;
    return pool_create_thin(s, op->a);
  case FF_THINMETA_CREATE_SNAP:
    s->dirty = 1;
    return pool_create_snap(s, op->a, op->b);
  case FF_THINMETA_SET_TRANSACTION_ID:
    s->in_service = 1;
    s->dirty = 1;
    if (s->trans_id != op->a)
      return ff_error("mismatched transaction id: the pool is at %" PRIu64
                      ", not %" PRIu64,
                      s->trans_id, op->a);
    s->trans_id = op->b;
    return 0;
  case FF_THINMETA_COMMIT:
    if (pool_commit(s) < 0)
      return -1;
    check_metadata_space(s);
    return 0;
  case FF_THINMETA_CLOSE:
    if (pool_commit(s) < 0)
      return -1;
    s->is_open = 0;
    return 0;
  }
  return ff_error("unknown operation %d", (int)op->kind);
}

/* ---- the image ------------------------------------------------------------
 */

static void
sim_free(struct sim *s)
{
  for (size_t i = 0; i < s->cap; i++)
    free(s->slot[i]);
  free(s->slot);
  free(s->tds);
}

static int
cmp_blk(const void *a, const void *b)
{
  uint64_t x = (*(struct blk *const *)a)->nr,
           y = (*(struct blk *const *)b)->nr;

  return x < y ? -1 : x > y;
}

static const char *
op_name(const struct ff_thinmeta_op *op, char *buf, size_t len)
{
  switch (op->kind) {
  case FF_THINMETA_OPEN:
    return "open";
  case FF_THINMETA_RESIZE:
    snprintf(buf, len, "resize:%" PRIu64, op->a);
    return buf;
  case FF_THINMETA_CREATE_THIN:
    snprintf(buf, len, "create:%" PRIu64, op->a);
    return buf;
  case FF_THINMETA_CREATE_SNAP:
    snprintf(buf, len, "snap:%" PRIu64 ":%" PRIu64, op->a, op->b);
    return buf;
  case FF_THINMETA_SET_TRANSACTION_ID:
    snprintf(buf, len, "trans:%" PRIu64 ":%" PRIu64, op->a, op->b);
    return buf;
  case FF_THINMETA_COMMIT:
    return "commit";
  case FF_THINMETA_CLOSE:
    return "close";
  }
  return "?";
}

static struct ff_thinmeta *
finish(struct sim *s, uint64_t size)
{
  struct ff_thinmeta *m = calloc(1, sizeof *m);
  struct blk **v = malloc((s->n ? s->n : 1) * sizeof *v);
  size_t n = 0;

  if (!m || !v)
    goto oom;
  for (size_t i = 0; i < s->cap; i++) {
    struct blk *b = s->slot[i];
    static const uint32_t xor [] = {
      [K_SB] = FF_THINMETA_XOR_SUPERBLOCK,
      [K_BTREE] = FF_THINMETA_XOR_BTREE,
      [K_BITMAP] = FF_THINMETA_XOR_BITMAP,
      [K_INDEX] = FF_THINMETA_XOR_INDEX,
    };

    if (!b)
      continue;
    /* what the kernel sets when it writes the block */
    ff_put_le64(b->data + 8, b->nr);
    ff_put_le32(b->data, ff_thinmeta_csum(b->data, xor[b->kind]));
    v[n++] = b;
  }
  qsort(v, n, sizeof *v, cmp_blk);
  m->size = size;
  m->nr = malloc((n ? n : 1) * sizeof *m->nr);
  m->data = malloc((n ? n : 1) * (size_t)BS);
  if (!m->nr || !m->data)
    goto oom;
  for (size_t i = 0; i < n; i++) {
    if (!memcmp(v[i]->data, zero_block, BS))
      continue;
    m->nr[m->n] = v[i]->nr;
    memcpy(m->data + m->n * (size_t)BS, v[i]->data, BS);
    m->n++;
  }
  free(v);
  return m;
oom:
  free(v);
  ff_thinmeta_free(m);
  ff_error("thin metadata: out of memory");
  return NULL;
}

struct ff_thinmeta *
ff_thinmeta_build(uint64_t tmeta_bytes, uint32_t data_block_sectors,
                  const struct ff_thinmeta_op *ops, size_t nops)
{
  struct sim s = {0};
  struct ff_thinmeta *m = NULL;
  char buf[64];

  if (tmeta_bytes % 512 || tmeta_bytes < 2 * BS) {
    ff_error("thin metadata: tmeta size %" PRIu64
             " bytes: want a multiple of 512, at least %u",
             tmeta_bytes, 2 * BS);
    return NULL;
  }
  if (data_block_sectors < 128 || data_block_sectors > 2097152 ||
      data_block_sectors % 128) {
    ff_error("thin metadata: data block size %" PRIu32
             " sectors: want a multiple of 128 in 128..2097152",
             data_block_sectors);
    return NULL;
  }
  if (!nops || ops[0].kind != FF_THINMETA_OPEN) {
    ff_error("thin metadata: the operations must begin with open");
    return NULL;
  }
  s.dev_blocks = tmeta_bytes / BS;
  if (s.dev_blocks > FF_THINMETA_MAX_BLOCKS)
    s.dev_blocks = FF_THINMETA_MAX_BLOCKS;
  s.dbs = data_block_sectors;
  for (size_t i = 0; i < nops; i++) {
    if (pool_op(&s, &ops[i]) < 0) {
      ff_error_prefix("thin metadata, operation %zu (%s): ", i + 1,
                      op_name(&ops[i], buf, sizeof buf));
      goto out;
    }
  }
  if (s.is_open && s.dirty) {
    ff_error("thin metadata: the operations end with uncommitted changes "
             "(end with commit or close)");
    goto out;
  }
  m = finish(&s, tmeta_bytes);
out:
  sim_free(&s);
  return m;
}

/* ---- parsing and the lvm sequence ----------------------------------------
 */

static int
parse_u64(const char *s, size_t len, uint64_t *v)
{
  uint64_t x = 0;

  if (!len)
    return -1;
  for (size_t i = 0; i < len; i++) {
    if (!isdigit((unsigned char)s[i]) || x > (UINT64_MAX - 9) / 10)
      return -1;
    x = x * 10 + (uint64_t)(s[i] - '0');
  }
  *v = x;
  return 0;
}

/* word = name[:a[:b]] with exactly nargs numbers. */
static int
parse_word(const char *w, size_t len, const char *name, int nargs,
           struct ff_thinmeta_op *op)
{
  size_t nl = strlen(name);
  const char *p = w + nl, *end = w + len, *c;

  if (len < nl || memcmp(w, name, nl) || (p < end && *p != ':'))
    return 0;
  op->a = op->b = 0;
  if (p == end)
    return nargs <= 0 ? 1 : -1;
  if (nargs == 0)
    return -1;
  p++;
  c = memchr(p, ':', (size_t)(end - p));
  if (nargs != 2)
    return !c && !parse_u64(p, (size_t)(end - p), &op->a) ? 1 : -1;
  if (!c || parse_u64(p, (size_t)(c - p), &op->a) ||
      parse_u64(c + 1, (size_t)(end - c - 1), &op->b))
    return -1;
  return 1;
}

int
ff_thinmeta_parse_ops(const char *text, struct ff_thinmeta_op **ops,
                      size_t *nops)
{
  static const struct {
    const char *name;
    int nargs; /* -1: 0 or 1 */
    enum ff_thinmeta_op_kind kind;
  } words[] = {
    {"open", -1, FF_THINMETA_OPEN},
    {"resize", 1, FF_THINMETA_RESIZE},
    {"create", 1, FF_THINMETA_CREATE_THIN},
    {"snap", 2, FF_THINMETA_CREATE_SNAP},
    {"trans", 2, FF_THINMETA_SET_TRANSACTION_ID},
    {"commit", 0, FF_THINMETA_COMMIT},
    {"close", 0, FF_THINMETA_CLOSE},
  };
  struct ff_thinmeta_op *v = NULL;
  size_t n = 0, cap = 0;
  const char *p = text;

  for (;;) {
    const char *w;
    size_t len;
    int r = 0;

    while (isspace((unsigned char)*p))
      p++;
    if (!*p)
      break;
    for (w = p; *p && !isspace((unsigned char)*p); p++)
      ;
    len = (size_t)(p - w);
    if (n == cap) {
      struct ff_thinmeta_op *nv;

      cap = cap ? 2 * cap : 16;
      nv = realloc(v, cap * sizeof *v);
      if (!nv) {
        free(v);
        return ff_error("thin metadata: out of memory");
      }
      v = nv;
    }
    for (size_t i = 0; i < sizeof words / sizeof *words && !r; i++) {
      r = parse_word(w, len, words[i].name, words[i].nargs, &v[n]);
      v[n].kind = words[i].kind;
    }
    if (r != 1) {
      free(v);
      return ff_error("thin metadata operation '%.*s': want open[:SECTORS], "
                      "resize:BLOCKS, create:ID, snap:ID:ORIGIN, "
                      "trans:OLD:NEW, commit or close",
                      (int)len, w);
    }
    n++;
  }
  *ops = v;
  *nops = n;
  return 0;
}

int
ff_thinmeta_lvm_ops(uint64_t data_blocks, unsigned nthin,
                    struct ff_thinmeta_op **ops, size_t *nops)
{
  size_t n = 0, cap = 6 + 4 * (size_t)nthin;
  struct ff_thinmeta_op *v = malloc(cap * sizeof *v);

  if (!v)
    return ff_error("thin metadata: out of memory");
  v[n++] = (struct ff_thinmeta_op){FF_THINMETA_OPEN, 0, 0};
  v[n++] = (struct ff_thinmeta_op){FF_THINMETA_RESIZE, data_blocks, 0};
  v[n++] = (struct ff_thinmeta_op){FF_THINMETA_COMMIT, 0, 0};
  if (nthin) {
    v[n++] = (struct ff_thinmeta_op){FF_THINMETA_CLOSE, 0, 0};
    v[n++] = (struct ff_thinmeta_op){FF_THINMETA_OPEN, 0, 0};
  }
  for (unsigned i = 1; i <= nthin; i++) {
    v[n++] = (struct ff_thinmeta_op){FF_THINMETA_CREATE_THIN, i, 0};
    v[n++] = (struct ff_thinmeta_op){FF_THINMETA_COMMIT, 0, 0};
    v[n++] = (struct ff_thinmeta_op){FF_THINMETA_SET_TRANSACTION_ID, i - 1, i};
    v[n++] = (struct ff_thinmeta_op){FF_THINMETA_COMMIT, 0, 0};
  }
  v[n++] = (struct ff_thinmeta_op){FF_THINMETA_CLOSE, 0, 0};
  *ops = v;
  *nops = n;
  return 0;
}

/* ---- access
 * ------------------------------------------------------------------ */

size_t
ff_thinmeta_nblocks(const struct ff_thinmeta *m)
{
  return m->n;
}

uint64_t
ff_thinmeta_blocknr(const struct ff_thinmeta *m, size_t i)
{
  return m->nr[i];
}

const uint8_t *
ff_thinmeta_block(const struct ff_thinmeta *m, size_t i)
{
  return m->data + i * (size_t)BS;
}

uint64_t
ff_thinmeta_size(const struct ff_thinmeta *m)
{
  return m->size;
}

void
ff_thinmeta_read(const struct ff_thinmeta *m, uint64_t offset, size_t len,
                 void *buf)
{
  uint8_t *out = buf;
  size_t lo = 0, hi = m->n;

  memset(buf, 0, len);
  /* first block ending after offset */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;

    if ((m->nr[mid] + 1) * BS <= offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo; i < m->n; i++) {
    uint64_t start = m->nr[i] * BS, a, b;

    if (start >= offset + len)
      break;
    a = start > offset ? start : offset;
    b = start + BS < offset + len ? start + BS : offset + len;
    memcpy(out + (a - offset), m->data + i * (size_t)BS + (a - start),
           (size_t)(b - a));
  }
}

void
ff_thinmeta_free(struct ff_thinmeta *m)
{
  if (!m)
    return;
  free(m->nr);
  free(m->data);
  free(m);
}
