/* fusefarm: thin-pool metadata, the btrees (see ff-thinmeta-int.h).
 *
 * Mirrors the kernel's drivers/md/persistent-data/dm-btree.c (lookup,
 * insert with its rebalancing and splits) and dm-btree-spine.c (the
 * shadowed path).  Where nodes split, which keys move and which blocks
 * the new nodes take must stay the kernel's, byte for byte.
 */
#include "ff-thinmeta-int.h"
#include "ff-bytes.h"
#include "ff-error.h"

#include <inttypes.h>
#include <string.h>

/* ---- node accessors (dm-btree-internal.h) ------------------------------ */

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

/* ---- btree: empty, lookup --------------------------------------------- */

int
ff_tm_btree_empty(struct sim *s, uint32_t vsize, uint64_t *root)
{
  uint8_t *n;

  if (ff_tm_new_block(s, K_BTREE, root) < 0)
    return -1;
  n = ff_tm_wr(s, *root);
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
const uint8_t *
ff_tm_btree_lookup(const struct sim *s, uint64_t root, uint64_t key)
{
  for (;;) {
    const uint8_t *n = ff_tm_rd(s, root);
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
  const uint8_t *n = ff_tm_rd(s, nr);
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
    if (i && ff_tm_sm_inc(s, b, e) < 0)
      return -1;
    b = v;
    e = v + 1;
  }
  return cnt ? ff_tm_sm_inc(s, b, e) : 0;
}

static int
shadow_node(struct sim *s, uint64_t orig, enum vt vt, uint64_t *nr)
{
  int inc;

  if (ff_tm_shadow(s, orig, K_BTREE, nr, &inc) < 0)
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
  if (shadow_node(s, n_val64(ff_tm_rd(s, parent), index), vt, nr) < 0)
    return -1;
  ff_put_le64(n_val(ff_tm_wr(s, parent), index), *nr);
  return 0;
}

static int
split_one_into_two(struct sim *s, struct spine *sp, uint32_t pi, uint64_t key)
{
  uint64_t left = sp_cur(sp), right;
  uint8_t *ln, *rn, *pn, loc[8];

  if (ff_tm_new_block(s, K_BTREE, &right) < 0)
    return -1;
  ln = ff_tm_wr(s, left);
  rn = ff_tm_wr(s, right);
  init_sibling(rn, ln);
  redistribute2(ln, rn);
  pn = ff_tm_wr(s, sp->nodes[0]);
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
  if (ff_tm_new_block(s, K_BTREE, &middle) < 0)
    return -1;
  ln = ff_tm_wr(s, left);
  mn = ff_tm_wr(s, middle);
  rn = ff_tm_wr(s, right);
  init_sibling(mn, ln);
  redistribute3(ln, mn, rn);
  pn = ff_tm_wr(s, parent);
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

  if (ff_tm_new_block(s, K_BTREE, &left) < 0)
    return -1;
  pn = ff_tm_wr(s, parent);
  ln = ff_tm_wr(s, left);
  size = n_vsize(pn);
  nl = n_nr(pn) / 2;
  init_sibling(ln, pn);
  n_set_nr(ln, nl);
  memcpy(n_key(ln, 0), n_key(pn, 0), 8 * (size_t)nl);
  memcpy(n_val(ln, 0), n_val(pn, 0), (size_t)nl * size);

  if (ff_tm_new_block(s, K_BTREE, &right) < 0)
    return -1;
  rn = ff_tm_wr(s, right);
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
  pn = ff_tm_wr(s, parent);
  if (to_left) {
    l = ff_tm_wr(s, sib);
    r = ff_tm_wr(s, sp_cur(sp));
    redistribute2(l, r);
    memcpy(n_key(pn, pi), n_key(r, 0), 8);
    if (key < n_keyv(r, 0))
      sp->nodes[1] = sib;
  } else {
    l = ff_tm_wr(s, sp_cur(sp));
    r = ff_tm_wr(s, sib);
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
  const uint8_t *pn = ff_tm_rd(s, sp->nodes[0]);
  uint32_t np = n_nr(pn);
  int lshared = 0, rshared = 0;

  if (pi > 0) {
    uint64_t lb = n_val64(pn, pi - 1);

    if (ff_tm_sm_more_than_one(s, lb, &lshared) < 0)
      return -1;
    if (!lshared &&
        n_max(ff_tm_rd(s, lb)) - n_nr(ff_tm_rd(s, lb)) >= SPACE_THRESHOLD)
      return rebalance_side(s, sp, vt, pi, key, 1);
  }
  if (pi + 1 < np) {
    uint64_t rb = n_val64(pn, pi + 1);

    if (ff_tm_sm_more_than_one(s, rb, &rshared) < 0)
      return -1;
    if (!rshared &&
        n_max(ff_tm_rd(s, rb)) - n_nr(ff_tm_rd(s, rb)) >= SPACE_THRESHOLD)
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
      ff_put_le64(n_val(ff_tm_wr(s, sp->nodes[0]), (uint32_t)i), sp_cur(sp));
    n = ff_tm_rd(s, sp_cur(sp));
    if (!has_space_for_insert(n, key)) {
      if ((top ? split_beneath(s, sp)
               : rebalance_or_split(s, sp, vt, (uint32_t)i, key)) < 0)
        return -1;
      n = ff_tm_rd(s, sp_cur(sp));
    }
    i = lower_bound(n, key);
    if (n_flags(n) & NODE_LEAF)
      break;
    if (i < 0) {
      ff_put_le64(n_key(ff_tm_wr(s, sp_cur(sp)), 0), key);
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
int
ff_tm_btree_insert(struct sim *s, uint64_t *root, enum vt vt, uint64_t key,
                   const void *value)
{
  struct spine sp = {0};
  uint8_t *n;
  int i;

  if (btree_insert_raw(s, &sp, *root, vt, key, &i) < 0)
    return -1;
  n = ff_tm_wr(s, sp_cur(&sp));
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

/* ---- btree: remove ------------------------------------------------------ */

/* dm_btree_del of a device's mapping tree (the value of a top-level
 * entry): a shared root only loses a reference; an unshared one is
 * freed, with what it maps (the farm's thin devices map nothing, so an
 * unshared root is an empty leaf). */
static int
subtree_del(struct sim *s, uint64_t root)
{
  const uint8_t *n;
  int shared;

  if (ff_tm_sm_more_than_one(s, root, &shared) < 0)
    return -1;
  if (!shared) {
    n = ff_tm_rd(s, root);
    if (!(n_flags(n) & NODE_LEAF) || n_nr(n))
      return ff_error("thin metadata: deleting a thin device that maps "
                      "data blocks is not supported");
  }
  return ff_tm_sm_dec(s, root, root + 1);
}

/* dm_btree_remove of key from a one-level btree whose root is a leaf
 * (remove_raw shadows the root; the value's dec runs before delete_at,
 * which leaves the old last entry's bytes behind the new count).  A root
 * with children would need the kernel's rebalancing, which the farm's
 * pools (at most a leaf of devices) never reach: refused. */
int
ff_tm_btree_remove(struct sim *s, uint64_t *root, enum vt vt, uint64_t key)
{
  struct spine sp = {0};
  uint8_t *n;
  uint32_t nr, vs;
  int i;

  if (n_flags(ff_tm_rd(s, *root)) & NODE_INTERNAL)
    return ff_error("thin metadata: deleting from a btree of more than one "
                    "node is not supported");
  i = lower_bound(ff_tm_rd(s, *root), key);
  if (i < 0 || n_keyv(ff_tm_rd(s, *root), (uint32_t)i) != key)
    return ff_error("thin device %" PRIu64 " does not exist", key);
  if (shadow_step(s, &sp, *root, vt) < 0)
    return -1;
  n = ff_tm_wr(s, sp_cur(&sp));
  if (vt == VT_SUBTREE && subtree_del(s, n_val64(n, (uint32_t)i)) < 0)
    return -1;
  n = ff_tm_wr(s, sp_cur(&sp));
  nr = n_nr(n);
  vs = n_vsize(n);
  memmove(n_key(n, (uint32_t)i), n_key(n, (uint32_t)i + 1),
          8 * (size_t)(nr - (uint32_t)i - 1));
  memmove(n_val(n, (uint32_t)i), n_val(n, (uint32_t)i + 1),
          (size_t)vs * (nr - (uint32_t)i - 1));
  n_set_nr(n, nr - 1);
  *root = sp.root;
  return 0;
}
