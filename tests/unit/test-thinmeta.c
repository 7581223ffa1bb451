/* fusefarm: unit tests for ff-thinmeta (thin-pool metadata writer).
 *
 * The golden values come from an independent oracle: the unmodified
 * Linux 6.1 (Debian linux-source-6.1 6.1.192) dm-thin-metadata.c and
 * persistent-data/ sources compiled in user space over a stand-in block
 * manager, replaying the same operations (the "kharness" of the issue 14
 * research, /tmp/research/thin-snap-cache.md §3.6.1).  For each image we
 * keep every nonzero block's number and the zlib CRC-32 of its 4096
 * bytes, or for bigger images the count of nonzero blocks and one CRC-32
 * over (block number as 8 bytes LE + the block) for all of them in
 * ascending order.  The block layouts are those of §3.6.3.
 *
 * Besides the oracle's bytes, every image is checked for what makes it
 * valid metadata: checksums and block numbers of every block, the
 * metadata bitmap's reference counts equal to the references reachable
 * from the superblock, the index's free counts, the data space map.  If
 * thin_check is installed it judges images too.
 */
#include "ff-test.h"
#include "ff-bytes.h"
#include "ff-crc.h"
#include "ff-thinmeta.h"

#include <inttypes.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define EPB 16320u

struct golden_block {
  uint64_t nr;
  uint32_t crc;
};

/* Oracle: the three layouts of §3.6.3 and the no-reopen variant. */
static const struct golden_block pool_only[] = {
  {0, 0x3c801707u}, {1, 0x55023a35u}, {2, 0x00315601u},  {3, 0x579f683au},
  {4, 0xad5af8d2u}, {5, 0x4f470edcu}, {6, 0x7261af0bu},  {7, 0xb7b6d9c6u},
  {8, 0x1827d517u}, {9, 0xf5d8f25du}, {10, 0xd7d5ff46u}, {11, 0x6e838264u},
};
static const struct golden_block thin1[] = {
  {0, 0x5ea8f9cbu},  {1, 0x3d17f7d6u},  {2, 0x00315601u},  {3, 0x790fba75u},
  {4, 0xac2d84c2u},  {5, 0x4f470edcu},  {6, 0x7261af0bu},  {7, 0xb7b6d9c6u},
  {8, 0x1827d517u},  {9, 0xf5d8f25du},  {10, 0xd7d5ff46u}, {11, 0x6e838264u},
  {12, 0xc6105941u}, {13, 0x39f708e1u},
};
static const struct golden_block thin2[] = {
  {0, 0x1f4a8b75u},  {1, 0x3d17f7d6u},  {2, 0x00315601u},  {3, 0x790fba75u},
  {4, 0xac2d84c2u},  {5, 0x4f470edcu},  {6, 0x7261af0bu},  {7, 0xb7b6d9c6u},
  {8, 0x1827d517u},  {9, 0xf5d8f25du},  {10, 0xd7d5ff46u}, {11, 0x6e838264u},
  {12, 0xc6105941u}, {13, 0x39f708e1u}, {14, 0x189e53b3u}, {15, 0x324ad14au},
  {16, 0xd6bd5baau}, {17, 0x0595214du}, {18, 0x49cb918bu},
};
static const struct golden_block no_reopen[] = {
  {0, 0xa99b7b08u},  {1, 0x55023a35u},  {2, 0x00315601u},  {3, 0x579f683au},
  {4, 0xad5af8d2u},  {5, 0x4f470edcu},  {6, 0x7261af0bu},  {7, 0xb7b6d9c6u},
  {8, 0x1827d517u},  {9, 0xf5d8f25du},  {10, 0xd7d5ff46u}, {11, 0x6e838264u},
  {12, 0x0221ac9du}, {13, 0x892793c7u}, {14, 0x7631e6e7u}, {15, 0xbc19ffc0u},
  {16, 0xd44c62f8u}, {17, 0xe8e80ea6u}, {18, 0x1a9ad419u}, {19, 0x40e141a4u},
  {20, 0x505c86beu}, {21, 0xb034a1c5u},
};

#define N(a) (sizeof(a) / sizeof *(a))

static struct ff_thinmeta *
build(uint64_t size, const char *text)
{
  struct ff_thinmeta_op *ops;
  struct ff_thinmeta *m;
  size_t n;

  assert_ok(ff_thinmeta_parse_ops(text, &ops, &n));
  m = ff_thinmeta_build(size, 128, ops, n);
  free(ops);
  assert_nonnull_err(m);
  return m;
}

/* The ops lvm's commands cause: format, resize, commit; then per thin
 * (after one close/open) create + commit, set_transaction_id + commit. */
static struct ff_thinmeta *
build_lvm(uint64_t size, uint64_t data, unsigned nthin)
{
  struct ff_thinmeta_op *ops;
  struct ff_thinmeta *m;
  size_t n;

  assert_ok(ff_thinmeta_lvm_ops(data, nthin, &ops, &n));
  m = ff_thinmeta_build(size, 128, ops, n);
  free(ops);
  assert_nonnull_err(m);
  return m;
}

static void
get(const struct ff_thinmeta *m, uint64_t nr, uint8_t *buf)
{
  ff_thinmeta_read(m, nr * FF_THINMETA_BLOCK, FF_THINMETA_BLOCK, buf);
}

static void
check_golden(const struct ff_thinmeta *m, const struct golden_block *g,
             size_t n)
{
  assert_int_equal(ff_thinmeta_nblocks(m), n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(ff_thinmeta_blocknr(m, i), g[i].nr);
    if (ff_crc32(ff_thinmeta_block(m, i), FF_THINMETA_BLOCK) != g[i].crc)
      fail_msg("block %" PRIu64 " differs from the kernel's", g[i].nr);
  }
}

static uint32_t
digest(const struct ff_thinmeta *m)
{
  uint32_t crc = 0xFFFFFFFFu;

  for (size_t i = 0; i < ff_thinmeta_nblocks(m); i++) {
    uint8_t nr[8];

    ff_put_le64(nr, ff_thinmeta_blocknr(m, i));
    crc = ff_crc_update(crc, nr, 8);
    crc = ff_crc_update(crc, ff_thinmeta_block(m, i), FF_THINMETA_BLOCK);
  }
  return ~crc;
}

/* ---- the superblock ------------------------------------------------------
 */

struct sb {
  uint32_t flags, time, data_bs, meta_bs;
  uint64_t trans_id, held_root, mapping_root, details_root, meta_nr;
  uint64_t d_nr, d_alloc, d_bitmap_root, d_rc_root;
  uint64_t m_nr, m_alloc, m_bitmap_root, m_rc_root;
};

static struct sb
decode_sb(const struct ff_thinmeta *m)
{
  uint8_t b[FF_THINMETA_BLOCK];
  struct sb s;

  get(m, 0, b);
  assert_int_equal(ff_get_le64(b + 32), 27022010);
  assert_int_equal(ff_get_le32(b + 40), 2);
  s.flags = ff_get_le32(b + 4);
  s.time = ff_get_le32(b + 44);
  s.trans_id = ff_get_le64(b + 48);
  s.held_root = ff_get_le64(b + 56);
  s.d_nr = ff_get_le64(b + 64);
  s.d_alloc = ff_get_le64(b + 72);
  s.d_bitmap_root = ff_get_le64(b + 80);
  s.d_rc_root = ff_get_le64(b + 88);
  s.m_nr = ff_get_le64(b + 192);
  s.m_alloc = ff_get_le64(b + 200);
  s.m_bitmap_root = ff_get_le64(b + 208);
  s.m_rc_root = ff_get_le64(b + 216);
  s.mapping_root = ff_get_le64(b + 320);
  s.details_root = ff_get_le64(b + 328);
  s.data_bs = ff_get_le32(b + 336);
  s.meta_bs = ff_get_le32(b + 340);
  s.meta_nr = ff_get_le64(b + 344);
  return s;
}

/* ---- a structural check of a whole image ----------------------------------
 */

struct chk {
  const struct ff_thinmeta *m;
  uint64_t nr_blocks;
  uint32_t *refs; /* references found from the superblock */
  uint64_t data_bitmaps, devices;
};

/* A reachable block: its checksum is its kind's and its number is right. */
static void
ref(struct chk *c, uint64_t nr, uint32_t xor, uint8_t *buf)
{
  if (nr >= c->nr_blocks)
    fail_msg("reference to block %" PRIu64 " beyond the device", nr);
  get(c->m, nr, buf);
  if (ff_get_le64(buf + 8) != nr)
    fail_msg("block %" PRIu64 " says it is block %" PRIu64, nr,
             ff_get_le64(buf + 8));
  if (ff_get_le32(buf) != ff_thinmeta_csum(buf, xor))
    fail_msg("block %" PRIu64 ": bad checksum", nr);
  c->refs[nr]++;
}

enum leaf { L_NONE, L_MAPPING_TOP, L_DATA_INDEX, L_DETAILS };

static void
walk(struct chk *c, uint64_t nr, enum leaf kind, uint32_t vsize)
{
  uint8_t b[FF_THINMETA_BLOCK];
  uint32_t flags, cnt, max, vs;

  ref(c, nr, FF_THINMETA_XOR_BTREE, b);
  flags = ff_get_le32(b + 4);
  cnt = ff_get_le32(b + 16);
  max = ff_get_le32(b + 20);
  vs = ff_get_le32(b + 24);
  assert_true(cnt <= max);
  assert_int_equal(max, (4096 - 32) / (8 + vs) / 3 * 3);
  for (uint32_t i = 0; i < cnt; i++) {
    const uint8_t *v = b + 32 + 8 * (size_t)max + (size_t)vs * i;

    if (i)
      assert_true(ff_get_le64(b + 32 + 8 * i) >
                  ff_get_le64(b + 32 + 8 * (i - 1)));
    if (flags & 1) {
      assert_int_equal(vs, 8);
      walk(c, ff_get_le64(v), kind, vsize);
      continue;
    }
    assert_int_equal(flags, 2);
    assert_int_equal(vs, vsize);
    switch (kind) {
    case L_NONE:
      fail_msg("unexpected entry in block %" PRIu64, nr);
      break;
    case L_MAPPING_TOP:
      walk(c, ff_get_le64(v), L_NONE, 8); /* empty device trees */
      break;
    case L_DATA_INDEX: {
      uint8_t bm[FF_THINMETA_BLOCK];

      assert_int_equal(ff_get_le64(b + 32 + 8 * i), c->data_bitmaps);
      ref(c, ff_get_le64(v), FF_THINMETA_XOR_BITMAP, bm);
      for (size_t k = 16; k < FF_THINMETA_BLOCK; k++)
        assert_int_equal(bm[k], 0); /* no data block is used */
      assert_int_equal(ff_get_le32(v + 8), EPB);
      c->data_bitmaps++;
      break;
    }
    case L_DETAILS:
      c->devices++;
      break;
    }
  }
}

/* Check m and return its number of thin devices. */
static uint64_t
check_image(const struct ff_thinmeta *m)
{
  struct sb s = decode_sb(m);
  struct chk c = {m, s.m_nr, NULL, 0, 0};
  uint8_t b[FF_THINMETA_BLOCK], idx[FF_THINMETA_BLOCK];
  uint64_t nbm = (s.m_nr + EPB - 1) / EPB, used = 0;

  assert_int_equal(s.meta_nr, s.m_nr);
  assert_int_equal(s.meta_bs, 8);
  assert_int_equal(s.data_bs, 128);
  c.refs = calloc(s.m_nr, sizeof *c.refs);
  assert_non_null(c.refs);

  /* every nonzero block carries its number and a valid checksum */
  for (size_t i = 0; i < ff_thinmeta_nblocks(m); i++) {
    const uint8_t *p = ff_thinmeta_block(m, i);
    uint32_t sum = ff_get_le32(p);

    assert_int_equal(ff_get_le64(p + 8), ff_thinmeta_blocknr(m, i));
    assert_true(sum == ff_thinmeta_csum(p, FF_THINMETA_XOR_SUPERBLOCK) ||
                sum == ff_thinmeta_csum(p, FF_THINMETA_XOR_BTREE) ||
                sum == ff_thinmeta_csum(p, FF_THINMETA_XOR_BITMAP) ||
                sum == ff_thinmeta_csum(p, FF_THINMETA_XOR_INDEX));
  }

  ref(&c, 0, FF_THINMETA_XOR_SUPERBLOCK, b);
  ref(&c, s.m_bitmap_root, FF_THINMETA_XOR_INDEX, idx);
  for (uint64_t i = 0; i < nbm; i++)
    ref(&c, ff_get_le64(idx + 16 + 16 * i), FF_THINMETA_XOR_BITMAP, b);
  walk(&c, s.m_rc_root, L_NONE, 4);
  walk(&c, s.d_rc_root, L_NONE, 4);
  walk(&c, s.d_bitmap_root, L_DATA_INDEX, 16);
  walk(&c, s.mapping_root, L_MAPPING_TOP, 8);
  walk(&c, s.details_root, L_DETAILS, 24);
  assert_int_equal(c.data_bitmaps, (s.d_nr + EPB - 1) / EPB);
  assert_int_equal(s.d_alloc, 0);

  /* the metadata bitmaps count exactly the references found */
  for (uint64_t i = 0; i < nbm; i++) {
    uint32_t nonzero = 0, first_free = EPB;

    get(m, ff_get_le64(idx + 16 + 16 * i), b);
    for (uint32_t bit = 0; bit < EPB; bit++) {
      uint64_t w = ff_get_le64(b + 16 + 8 * (bit / 32));
      unsigned sh = bit % 32 * 2;
      unsigned v =
        (unsigned)(w >> sh & 1) << 1 | (unsigned)(w >> (sh + 1) & 1);
      uint64_t blk = i * EPB + bit;
      uint32_t want = blk < s.m_nr ? c.refs[blk] : 0;

      if (v != want)
        fail_msg("metadata block %" PRIu64 ": count %u, %u references", blk, v,
                 want);
      if (v)
        nonzero++;
      else if (first_free == EPB)
        first_free = bit;
    }
    used += nonzero;
    assert_int_equal(ff_get_le32(idx + 24 + 16 * i), EPB - nonzero);
    assert_true(ff_get_le32(idx + 28 + 16 * i) <= first_free);
  }
  assert_int_equal(used, s.m_alloc);
  free(c.refs);
  return c.devices;
}

/* ---- the oracle's layouts -------------------------------------------------
 */

static void
test_pool_only(void **state)
{
  struct ff_thinmeta *m = build(4 * MiB, "open resize:256 commit");
  struct sb s = decode_sb(m);

  (void)state;
  check_golden(m, pool_only, N(pool_only));
  assert_int_equal(s.trans_id, 0);
  assert_int_equal(s.time, 0);
  assert_int_equal(s.flags, 0);
  assert_int_equal(s.held_root, 0);
  assert_int_equal(s.d_nr, 256);
  assert_int_equal(s.d_bitmap_root, 10);
  assert_int_equal(s.d_rc_root, 5);
  assert_int_equal(s.m_nr, 1024);
  assert_int_equal(s.m_alloc, 9);
  assert_int_equal(s.m_bitmap_root, 11);
  assert_int_equal(s.m_rc_root, 2);
  assert_int_equal(s.mapping_root, 6);
  assert_int_equal(s.details_root, 7);
  assert_int_equal(check_image(m), 0);
  ff_thinmeta_free(m);
}

static void
test_thin1_after_reopen(void **state)
{
  struct ff_thinmeta *m = build(4 * MiB, "open resize:256 commit close open "
                                         "create:1 commit trans:0:1 commit");
  struct sb s = decode_sb(m);

  (void)state;
  check_golden(m, thin1, N(thin1));
  assert_int_equal(s.trans_id, 1);
  assert_int_equal(s.m_alloc, 10);
  assert_int_equal(s.m_bitmap_root, 13);
  assert_int_equal(s.mapping_root, 4);
  assert_int_equal(s.details_root, 12);
  assert_int_equal(check_image(m), 1);
  ff_thinmeta_free(m);
}

static void
test_thin2_pool_open(void **state)
{
  struct ff_thinmeta *m = build(4 * MiB, "open resize:256 commit close open "
                                         "create:1 commit trans:0:1 commit "
                                         "create:2 commit trans:1:2 commit");
  struct ff_thinmeta *l = build_lvm(4 * MiB, 256, 2);
  struct sb s = decode_sb(m);
  uint8_t b[FF_THINMETA_BLOCK];

  (void)state;
  check_golden(m, thin2, N(thin2));
  /* lvm's sequence ends with a close, which changes nothing */
  check_golden(l, thin2, N(thin2));
  assert_int_equal(s.trans_id, 2);
  assert_int_equal(s.m_alloc, 11);
  assert_int_equal(s.m_bitmap_root, 18);
  assert_int_equal(s.mapping_root, 16);
  assert_int_equal(s.details_root, 17);
  assert_int_equal(check_image(m), 2);
  /* thin 2's details: created at pool transaction 1 */
  get(m, 17, b);
  assert_int_equal(ff_get_le32(b + 16), 2);
  assert_int_equal(ff_get_le64(b + 32 + 8 * 126 + 24 + 8), 1);
  ff_thinmeta_free(m);
  ff_thinmeta_free(l);
}

/* Without the close/open between format and create_thin the allocator's
 * cursor is not reset: the same content lands in other blocks. */
static void
test_sequence_sensitivity(void **state)
{
  struct ff_thinmeta *m = build(4 * MiB, "open resize:256 commit create:1 "
                                         "commit trans:0:1 commit create:2 "
                                         "commit trans:1:2 commit");
  struct sb s = decode_sb(m);

  (void)state;
  check_golden(m, no_reopen, N(no_reopen));
  assert_int_equal(s.mapping_root, 19);
  assert_int_equal(s.details_root, 20);
  assert_int_equal(s.m_bitmap_root, 21);
  assert_int_equal(s.m_alloc, 11);
  assert_int_equal(check_image(m), 2);
  ff_thinmeta_free(m);
}

struct big_case {
  const char *name;
  uint64_t size, data;
  unsigned nthin;
  const char *ops; /* NULL: lvm's sequence for nthin thins */
  size_t nblocks;
  uint32_t digest;
};

/* Oracle digests (see the top of the file). */
static const struct big_case big_cases[] = {
  /* 1029 data bitmaps: the data index btree splits; 300 devices: the
   * details and mapping trees split */
  {"lvm_300_big_data", 64 * MiB, 16777216, 300, NULL, 2774, 0x32602a7eu},
  /* 600 devices: splits of two nodes into three */
  {"lvm_600", 100 * MiB, 100000, 600, NULL, 3863, 0x35a9e6acu},
  {"snap5", 4 * MiB, 256, 0,
   "open resize:256 commit close open create:1 commit create:2 commit "
   "create:3 commit create:4 commit create:5 commit snap:6:1 commit "
   "snap:8:3 commit snap:10:5 commit trans:0:1 commit close",
   46, 0xd853462bu},
  /* 16 GiB: more than the kernel's 255 bitmaps of metadata can count */
  {"max_tmeta", 16 * GiB, 256, 2, NULL, 273, 0xb624b7d8u},
};

static void
test_big_cases(void **state)
{
  (void)state;
  for (size_t i = 0; i < N(big_cases); i++) {
    const struct big_case *b = &big_cases[i];
    struct ff_thinmeta *m =
      b->ops ? build(b->size, b->ops) : build_lvm(b->size, b->data, b->nthin);
    uint64_t devs = check_image(m);

    if (ff_thinmeta_nblocks(m) != b->nblocks || digest(m) != b->digest)
      fail_msg("%s: %zu blocks, digest %08x; the kernel's: %zu, %08x", b->name,
               ff_thinmeta_nblocks(m), digest(m), b->nblocks, b->digest);
    assert_int_equal(devs, b->ops ? 8 : b->nthin);
    if (b->size > (uint64_t)FF_THINMETA_MAX_BLOCKS * FF_THINMETA_BLOCK)
      assert_int_equal(decode_sb(m).meta_nr, FF_THINMETA_MAX_BLOCKS);
    ff_thinmeta_free(m);
  }
}

/* Snapshots share the origin's (empty) mapping tree and bump the time. */
static void
test_snapshot_details(void **state)
{
  struct ff_thinmeta *m = build(4 * MiB, "open resize:256 commit create:1 "
                                         "commit snap:2:1 commit trans:0:2 "
                                         "commit");
  struct sb s = decode_sb(m);
  uint8_t top[FF_THINMETA_BLOCK], det[FF_THINMETA_BLOCK];
  const uint8_t *v;

  (void)state;
  assert_int_equal(s.time, 1);
  assert_int_equal(s.trans_id, 2);
  get(m, s.mapping_root, top);
  assert_int_equal(ff_get_le32(top + 16), 2);
  /* both devices point at the same mapping leaf */
  assert_int_equal(ff_get_le64(top + 32 + 8 * 252),
                   ff_get_le64(top + 32 + 8 * 252 + 8));
  get(m, s.details_root, det);
  v = det + 32 + 8 * 126;
  /* origin: created at time 0, snapshotted at 1; snapshot: 1 and 1 */
  assert_int_equal(ff_get_le32(v + 16), 0);
  assert_int_equal(ff_get_le32(v + 20), 1);
  assert_int_equal(ff_get_le32(v + 24 + 16), 1);
  assert_int_equal(ff_get_le32(v + 24 + 20), 1);
  assert_int_equal(check_image(m), 2); /* the shared leaf counts 2 */
  ff_thinmeta_free(m);
}

/* lvremove of thin LVs: dm-thin's delete message (__delete_device) takes
 * the device out of the details tree and the top-level mapping tree; a
 * snapshot's shared mapping leaf goes back to one reference, an unshared
 * one is freed.  delete_at moves the later entries down and leaves the
 * old last entry's bytes past the new count. */
#define DELETE_OPS                                                            \
  "open resize:256 commit close open create:1 commit trans:0:1 commit "       \
  "close open snap:2:1 commit trans:1:2 commit close open create:3 commit "   \
  "trans:2:3 commit close open delete:1 commit trans:3:4 commit close open "  \
  "delete:3 commit trans:4:5 commit close"

static void
test_delete(void **state)
{
  struct ff_thinmeta *m = build(4 * MiB, DELETE_OPS);
  struct sb s = decode_sb(m);
  uint8_t top[FF_THINMETA_BLOCK], det[FF_THINMETA_BLOCK];

  (void)state;
  assert_int_equal(s.trans_id, 5);
  assert_int_equal(s.time, 1);
  get(m, s.mapping_root, top);
  assert_int_equal(ff_get_le32(top + 16), 1);
  assert_int_equal(ff_get_le64(top + 32), 2);
  /* the stale entries behind the count: 3 (moved down), then 3 again */
  assert_int_equal(ff_get_le64(top + 32 + 8), 3);
  assert_int_equal(ff_get_le64(top + 32 + 16), 3);
  get(m, s.details_root, det);
  assert_int_equal(ff_get_le32(det + 16), 1);
  assert_int_equal(ff_get_le64(det + 32), 2);
  /* one device left; the bitmaps count its leaf once (check_image) */
  assert_int_equal(check_image(m), 1);
  ff_thinmeta_free(m);

  /* deleting every device leaves empty trees */
  m = build(4 * MiB, "open resize:256 commit create:1 commit snap:2:1 commit "
                     "delete:2 commit delete:1 commit trans:0:4 commit");
  assert_int_equal(check_image(m), 0);
  s = decode_sb(m);
  assert_int_equal(s.trans_id, 4);
  ff_thinmeta_free(m);
}

/* ---- reading
 * ------------------------------------------------------------------ */

static void
test_read(void **state)
{
  struct ff_thinmeta *m = build_lvm(4 * MiB, 256, 2);
  uint8_t *img = calloc(1, 4 * MiB), *piece = malloc(4 * MiB + 8192);
  size_t n = ff_thinmeta_nblocks(m);

  (void)state;
  assert_non_null(img);
  assert_non_null(piece);
  assert_int_equal(ff_thinmeta_size(m), 4 * MiB);
  for (size_t i = 0; i < n; i++)
    memcpy(img + ff_thinmeta_blocknr(m, i) * FF_THINMETA_BLOCK,
           ff_thinmeta_block(m, i), FF_THINMETA_BLOCK);
  ff_thinmeta_read(m, 0, 4 * MiB, piece);
  assert_memory_equal(piece, img, 4 * MiB);
  /* odd pieces straddling blocks */
  for (uint64_t off = 0; off < 24 * FF_THINMETA_BLOCK; off += 1333) {
    ff_thinmeta_read(m, off, 777, piece);
    assert_memory_equal(piece, img + off, 777);
  }
  /* zeros past the last block and past the end */
  memset(piece, 0xAA, 8192);
  ff_thinmeta_read(m, 4 * MiB - 4096, 8192, piece);
  for (size_t i = 0; i < 8192; i++)
    assert_int_equal(piece[i], 0);
  ff_thinmeta_read(m, 0, 0, piece);
  free(img);
  free(piece);
  ff_thinmeta_free(m);
}

/* ---- errors
 * ------------------------------------------------------------------- */

static void
expect_fail(uint64_t size, uint32_t dbs, const char *text, const char *want)
{
  struct ff_thinmeta_op *ops;
  size_t n;
  struct ff_thinmeta *m;

  assert_ok(ff_thinmeta_parse_ops(text, &ops, &n));
  m = ff_thinmeta_build(size, dbs, ops, n);
  free(ops);
  if (m)
    fail_msg("'%s' accepted, want an error with '%s'", text, want);
  if (!strstr(ff_errmsg(), want))
    fail_msg("'%s': error '%s' does not say '%s'", text, ff_errmsg(), want);
}

static void
test_errors(void **state)
{
  static const char *bad_words[] = {
    "frob",   "create",   "create:",    "create:x",   "trans:1",
    "snap:1", "commit:3", "open:1:2",   "resize:1:2", "create:1:",
    "closed", "delete",   "delete:1:2",
  };
  struct ff_thinmeta_op *ops;
  char many[16384];
  size_t n, len;

  (void)state;
  expect_fail(1000, 128, "open close", "tmeta size 1000");
  expect_fail(8192, 128, "open close", "too small");
  expect_fail(4 * MiB, 100, "open close", "data block size 100");
  expect_fail(4 * MiB, 192, "open close", "data block size 192");
  expect_fail(4 * MiB, 128, "open:256 close", "data block size 256");
  expect_fail(4 * MiB, 128, "commit", "must begin with open");
  expect_fail(4 * MiB, 128, "open open", "operation 2 (open)");
  expect_fail(4 * MiB, 128, "open close commit", "not open");
  expect_fail(4 * MiB, 128,
              "open resize:256 commit create:1 commit "
              "create:1 commit",
              "operation 6 (create:1): thin device 1 already exists");
  expect_fail(4 * MiB, 128, "open resize:256 commit create:1 create:1",
              "thin device 1 already exists");
  expect_fail(4 * MiB, 128, "open resize:256 commit create:1", "uncommitted");
  expect_fail(4 * MiB, 128, "open resize:256 commit trans:5:6 commit",
              "mismatched transaction id: the pool is at 0, not 5");
  expect_fail(4 * MiB, 128, "open resize:256 commit snap:2:1 commit",
              "origin thin device 1 does not exist");
  expect_fail(4 * MiB, 128, "open resize:256 commit create:1 commit delete:2",
              "operation 6 (delete:2): thin device 2 does not exist");
  expect_fail(4 * MiB, 128,
              "open resize:256 commit create:1 commit delete:1 commit "
              "delete:1 commit",
              "operation 8 (delete:1): thin device 1 does not exist");
  expect_fail(4 * MiB, 128,
              "open resize:256 commit create:1 commit snap:2:1 "
              "commit snap:3:1 commit",
              "not supported");
  expect_fail(4 * MiB, 128, "open resize:256 commit resize:100 commit",
              "cannot reduce");
  expect_fail(4 * MiB, 128, "open resize:256 resize:512 commit",
              "second resize");
  /* 1024 blocks cannot count 2^30 data blocks (65794 bitmaps) */
  expect_fail(4 * MiB, 128, "open resize:1073741824 commit",
              "too small for 65794 data space map bitmaps");
  expect_fail(4 * MiB, 128, "open resize:256 commit create:16777216 commit",
              "above the maximum");
  /* 2 MiB: dm-thin stops taking messages with 51 blocks left */
  len = (size_t)snprintf(many, sizeof many, "open resize:256 commit");
  for (unsigned i = 1; i <= 500; i++)
    len +=
      (size_t)snprintf(many + len, sizeof many - len, " create:%u commit", i);
  expect_fail(2 * MiB, 128, many, "out of metadata space");

  for (size_t i = 0; i < N(bad_words); i++) {
    if (ff_thinmeta_parse_ops(bad_words[i], &ops, &n) == 0)
      fail_msg("'%s' parsed", bad_words[i]);
    assert_non_null(strstr(ff_errmsg(), bad_words[i]));
  }
  assert_ok(ff_thinmeta_parse_ops("  open:128\tresize:7\ncreate:3 snap:4:3 "
                                  "trans:0:9 commit close ",
                                  &ops, &n));
  assert_int_equal(n, 7);
  assert_int_equal(ops[0].kind, FF_THINMETA_OPEN);
  assert_int_equal(ops[0].a, 128);
  assert_int_equal(ops[1].kind, FF_THINMETA_RESIZE);
  assert_int_equal(ops[1].a, 7);
  assert_int_equal(ops[3].kind, FF_THINMETA_CREATE_SNAP);
  assert_int_equal(ops[3].a, 4);
  assert_int_equal(ops[3].b, 3);
  assert_int_equal(ops[4].kind, FF_THINMETA_SET_TRANSACTION_ID);
  assert_int_equal(ops[4].b, 9);
  assert_int_equal(ops[6].kind, FF_THINMETA_CLOSE);
  free(ops);
}

/* ---- thin_check
 * ----------------------------------------------------------------- */

static const char *
find_tool(const char *name, char *buf, size_t len)
{
  const char *path = getenv("PATH");
  char dirs[8192];

  snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/sbin", path ? path : "");
  for (char *save, *d = strtok_r(dirs, ":", &save); d;
       d = strtok_r(NULL, ":", &save)) {
    snprintf(buf, len, "%s/%s", d, name);
    if (access(buf, X_OK) == 0)
      return buf;
  }
  return NULL;
}

static int
run_tool(const char *tool, const char *img, const char *out)
{
  pid_t pid = fork();
  int st;

  if (pid == 0) {
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execl(tool, tool, img, (char *)NULL);
    _exit(127);
  }
  if (pid < 0 || waitpid(pid, &st, 0) < 0)
    return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
test_thin_check(void **state)
{
  char check[4096], dump[4096], dir[4096], img[4200], out[4200];
  struct {
    uint64_t size, data;
    unsigned nthin;
    const char *ops; /* instead of lvm's ops for nthin thins */
  } cases[] = {
    {2 * MiB, 1, 0, NULL},          {4 * MiB, 256, 2, NULL},
    {4 * MiB, 16321, 50, NULL},     {64 * MiB, 100000, 200, NULL},
    {100 * MiB, 100000, 600, NULL}, {16 * GiB, 4194304, 3, NULL},
    {4 * MiB, 256, 1, DELETE_OPS},
  };

  (void)state;
  if (!find_tool("thin_check", check, sizeof check) ||
      !find_tool("thin_dump", dump, sizeof dump)) {
    print_message("thin_check/thin_dump not installed (Debian: apt-get "
                  "install thin-provisioning-tools): skipped\n");
    skip();
  }
  assert_int_equal(ff_test_mkscratch(dir, sizeof dir, "thinmeta"), 0);
  snprintf(img, sizeof img, "%s/tmeta", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  for (size_t i = 0; i < N(cases); i++) {
    struct ff_thinmeta *m =
      cases[i].ops ? build(cases[i].size, cases[i].ops)
                   : build_lvm(cases[i].size, cases[i].data, cases[i].nthin);
    int fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0644);
    char line[512];
    unsigned devices = 0;
    FILE *f;

    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)cases[i].size), 0);
    for (size_t k = 0; k < ff_thinmeta_nblocks(m); k++)
      assert_int_equal(
        pwrite(fd, ff_thinmeta_block(m, k), FF_THINMETA_BLOCK,
               (off_t)(ff_thinmeta_blocknr(m, k) * FF_THINMETA_BLOCK)),
        FF_THINMETA_BLOCK);
    close(fd);
    ff_thinmeta_free(m);
    if (run_tool(check, img, out) != 0)
      fail_msg("thin_check rejects case %zu (see %s)", i, out);
    assert_int_equal(run_tool(dump, img, out), 0);
    f = fopen(out, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
      if (strstr(line, "<device dev_id="))
        devices++;
      if (strstr(line, "<superblock"))
        assert_non_null(strstr(line, "nr_data_blocks"));
    }
    fclose(f);
    assert_int_equal(devices, cases[i].nthin);
  }
  assert_int_equal(ff_test_rmtree(dir), 0);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pool_only),
    cmocka_unit_test(test_thin1_after_reopen),
    cmocka_unit_test(test_thin2_pool_open),
    cmocka_unit_test(test_sequence_sensitivity),
    cmocka_unit_test(test_big_cases),
    cmocka_unit_test(test_snapshot_details),
    cmocka_unit_test(test_delete),
    cmocka_unit_test(test_read),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_thin_check),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
