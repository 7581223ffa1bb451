/* fusefarm: thin-pool metadata writer (see ff-thinmeta.h and
 * docs/thin-metadata.md).
 *
 * A clean-room model of what the kernel's dm-thin-pool metadata code
 * does to the metadata device for the operations lvm causes.  The model
 * works on the bytes of the device, as the kernel does: btree nodes,
 * space-map bitmaps and the metadata space-map index are read and
 * written in an in-memory block store, and the block every structure
 * lands in follows the kernel's allocator.  The pieces, bottom up, in the
 * files of the kernel's own split (ff-thinmeta-int.h):
 *
 *   store      the device's blocks that were ever written (sparse)
 *   tm         transaction manager: new blocks, copy-on-write shadows
 *              (a block allocated or shadowed in the running transaction
 *              is written in place), commit            ff-thinmeta-bm.c
 *   msm        metadata space map: 2-bit reference counts in bitmap
 *              blocks listed by one index block; allocation searches the
 *              current bitmaps from a cursor and skips blocks still used
 *              in the last committed state; changes made while the space
 *              map is itself changing are queued and applied afterwards
 *   dsm        data space map: bitmaps indexed by a btree, index entries
 *              cached in a 64-slot table written back on collision and at
 *              commit                                  ff-thinmeta-sm.c
 *   btree      insert (with the kernel's rebalancing and splits), lookup
 *                                                      ff-thinmeta-btree.c
 *   pool       format, open, resize, create_thin, create_snap,
 *              set_transaction_id, commit, close: the superblock, the
 *              device details and the mapping trees; this file, as the
 *              kernel's drivers/md/dm-thin-metadata.c
 *
 * Checksums and block numbers in the headers are set when the image is
 * finished, as the kernel sets them when it writes a block.  The image
 * must stay byte-identical to what dm-thin-pool writes.
 */
#include "ff-thinmeta-int.h"
#include "ff-bytes.h"
#include "ff-error.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  if (ff_tm_new_block(s, K_INDEX, &s->ll.bitmap_root) < 0 ||
      ff_tm_btree_empty(s, 4, &s->ll.ref_count_root) < 0)
    return -1;
  s->ll.nr_blocks = s->dev_blocks;
  for (uint64_t i = 0; i < (s->dev_blocks + EPB - 1) / EPB; i++) {
    s->ll.mi[i].nr_free = EPB;
    if (ff_tm_new_block(s, K_BITMAP, &s->ll.mi[i].blocknr) < 0)
      return -1;
    s->ll.changed = 1;
  }
  s->bootstrap = 0;
  if (ff_tm_bop_push(s, 1, 0, s->begin) < 0 || ff_tm_apply_bops(s) < 0 ||
      ff_tm_sm_commit(s) < 0)
    return -1;

  memset(&s->d, 0, sizeof s->d);
  if (ff_tm_btree_empty(s, 16, &s->d.bitmap_root) < 0 ||
      ff_tm_btree_empty(s, 4, &s->d.ref_count_root) < 0 ||
      ff_tm_btree_empty(s, 8, &s->root) < 0 ||
      ff_tm_btree_empty(s, 24, &s->details_root) < 0)
    return -1;

  if (ff_tm_dsm_commit(s) < 0 || ff_tm_sm_commit(s) < 0)
    return -1;
  sb = ff_tm_store_get(s, 0);
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
  sb = ff_tm_rd(s, 0);
  if (!memcmp(sb, ff_tm_zero_block, BS))
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
  idx = ff_tm_rd(s, s->ll.bitmap_root);
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
    if (ff_tm_btree_insert(s, &s->details_root, VT_PLAIN, t->id, v) < 0)
      return -1;
  }
  s->ntd = 0;
  if (ff_tm_dsm_commit(s) < 0 || ff_tm_sm_commit(s) < 0)
    return -1;
  sb = ff_tm_store_find(s, 0);
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
  if (td_find(s, id) || ff_tm_btree_lookup(s, s->details_root, id))
    return ff_error("thin device %" PRIu64 " already exists", id);
  return 0;
}

static int
pool_create_thin(struct sim *s, uint64_t id)
{
  uint64_t dev_root;
  uint8_t v[8];

  s->in_service = 1;
  if (check_new_id(s, id) < 0 || ff_tm_btree_empty(s, 8, &dev_root) < 0)
    return -1;
  ff_put_le64(v, dev_root);
  if (ff_tm_btree_insert(s, &s->root, VT_SUBTREE, id, v) < 0)
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
  p = ff_tm_btree_lookup(s, s->root, origin);
  if (!p)
    return ff_error("origin thin device %" PRIu64 " does not exist", origin);
  origin_root = ff_get_le64(p);
  if (ff_tm_ll_lookup(s, &s->ll, origin_root, &rc) < 0)
    return -1;
  if (rc > 1)
    return ff_error("origin thin device %" PRIu64 " already shares its "
                    "mapping tree with a snapshot (not supported)",
                    origin);
  if (!td_find(s, origin) && !ff_tm_btree_lookup(s, s->details_root, origin))
    return ff_error("origin thin device %" PRIu64 " has no details", origin);
  if (ff_tm_sm_inc(s, origin_root, origin_root + 1) < 0)
    return -1;
  ff_put_le64(v, origin_root);
  if (ff_tm_btree_insert(s, &s->root, VT_SUBTREE, id, v) < 0)
    return -1;
  s->time++;
  if (td_push(s, (struct td){id, 0, s->trans_id, s->time, s->time, 1}) < 0)
    return -1;
  o = td_find(s, origin);
  if (!o) {
    p = ff_tm_btree_lookup(s, s->details_root, origin);
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

/* __delete_device: drop the device's in-core details, then its entry
 * in the details tree and in the top-level mapping tree (which frees or
 * unshares its mapping tree). */
static int
pool_delete(struct sim *s, uint64_t id)
{
  s->in_service = 1;
  for (size_t i = 0; i < s->ntd; i++)
    if (s->tds[i].id == id) {
      memmove(s->tds + i, s->tds + i + 1, (s->ntd - i - 1) * sizeof *s->tds);
      s->ntd--;
      break;
    }
  if (!ff_tm_btree_lookup(s, s->details_root, id))
    return ff_error("thin device %" PRIu64 " does not exist", id);
  if (ff_tm_btree_remove(s, &s->details_root, VT_PLAIN, id) < 0)
    return -1;
  return ff_tm_btree_remove(s, &s->root, VT_SUBTREE, id);
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
  if (s->ooms &&
      (op->kind == FF_THINMETA_CREATE_THIN ||
       op->kind == FF_THINMETA_CREATE_SNAP || op->kind == FF_THINMETA_DELETE ||
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
             : ff_tm_dsm_extend(s, op->a - s->d.committed_nr_blocks);
  case FF_THINMETA_CREATE_THIN:
    s->dirty = 1;
    return pool_create_thin(s, op->a);
  case FF_THINMETA_CREATE_SNAP:
    s->dirty = 1;
    return pool_create_snap(s, op->a, op->b);
  case FF_THINMETA_DELETE:
    s->dirty = 1;
    return pool_delete(s, op->a);
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
  case FF_THINMETA_DELETE:
    snprintf(buf, len, "delete:%" PRIu64, op->a);
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
    if (!memcmp(v[i]->data, ff_tm_zero_block, BS))
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
    {"delete", 1, FF_THINMETA_DELETE},
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
                      "delete:ID, trans:OLD:NEW, commit or close",
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
