/* fusefarm: unit tests for ff-signature (non-LVM signatures).
 *
 * Table-driven over every type on a 64 MiB and a 1 TiB device: the
 * structures are where the formats put them, their checksums recompute,
 * reads are the same whole or in odd pieces, everything outside the
 * extents is zero, and the seed alone decides the identifiers.  Real
 * tools (blkid, sgdisk, dumpe2fs, xfs_db, mdadm) are the integration
 * tests' business.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ff-crc.h"
#include "ff-signature.h"

#define MiB (1ull << 20)
#define TiB (1ull << 40)

#define MAX_EXTENTS 8
#define CHUNK       333 /* odd, so pieces cut every structure off-centre */
#define MARGIN      700 /* bytes read either side of each extent */

struct sig_case {
  enum ff_sig_type type;
  uint64_t size;
};

static struct sig_case cases[] = {
  {FF_SIG_MBR, 64 * MiB}, {FF_SIG_MBR, 1 * TiB},   {FF_SIG_GPT, 64 * MiB},
  {FF_SIG_GPT, 1 * TiB},  {FF_SIG_EXT4, 64 * MiB}, {FF_SIG_EXT4, 1 * TiB},
  {FF_SIG_XFS, 64 * MiB}, {FF_SIG_XFS, 1 * TiB},   {FF_SIG_MD, 64 * MiB},
  {FF_SIG_MD, 1 * TiB},
};

static const enum ff_sig_type all_types[] = {
  FF_SIG_MBR, FF_SIG_GPT, FF_SIG_EXT4, FF_SIG_XFS, FF_SIG_MD};
#define NTYPES (sizeof all_types / sizeof all_types[0])

/* ------------------------------------------------------------------ */
/* Helpers. */

static uint16_t
le16(const unsigned char *p)
{
  return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
le32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static uint64_t
le64(const unsigned char *p)
{
  return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint32_t
be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

static uint64_t
be64(const unsigned char *p)
{
  return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static uint16_t
be16(const unsigned char *p)
{
  return (uint16_t)(p[0] << 8 | p[1]);
}

/* A zeroed buffer holding bytes [off, off + len) of the device. */
static unsigned char *
read_dev(const struct sig_case *c, uint64_t seed, uint64_t off, size_t len)
{
  unsigned char *buf = test_calloc(1, len ? len : 1);

  assert_non_null(buf);
  ff_sig_read(c->type, c->size, seed, buf, off, len);
  return buf;
}

/* The same range read in CHUNK-byte pieces. */
static unsigned char *
read_dev_chunked(const struct sig_case *c, uint64_t seed, uint64_t off,
                 size_t len)
{
  unsigned char *buf = test_calloc(1, len ? len : 1);

  assert_non_null(buf);
  for (size_t done = 0; done < len; done += CHUNK) {
    size_t n = len - done < CHUNK ? len - done : CHUNK;

    ff_sig_read(c->type, c->size, seed, buf + done, off + done, n);
  }
  return buf;
}

static size_t
get_extents(const struct sig_case *c, struct ff_range *r)
{
  size_t n = ff_sig_extents(c->type, c->size, r, MAX_EXTENTS);

  assert_in_range(n, 1, MAX_EXTENTS);
  return n;
}

static int
in_extents(const struct ff_range *r, size_t n, uint64_t pos)
{
  for (size_t i = 0; i < n; i++)
    if (pos >= r[i].off && pos - r[i].off < r[i].len)
      return 1;
  return 0;
}

/* Every byte of buf (device bytes from off) outside the extents is 0. */
static void
assert_zero_outside(const struct sig_case *c, const struct ff_range *r,
                    size_t n, const unsigned char *buf, uint64_t off,
                    size_t len)
{
  for (size_t i = 0; i < len; i++) {
    if (buf[i] != 0 && !in_extents(r, n, off + i))
      fail_msg("%s %llu: non-zero byte 0x%02x at %llu outside the extents",
               ff_sig_name(c->type), (unsigned long long)c->size, buf[i],
               (unsigned long long)(off + i));
  }
}

/* The clipped window [ext.off - MARGIN, ext.off + ext.len + MARGIN). */
static void
margin_window(const struct sig_case *c, const struct ff_range *e,
              uint64_t *off, size_t *len)
{
  uint64_t lo = e->off > MARGIN ? e->off - MARGIN : 0;
  uint64_t hi = e->off + e->len + MARGIN;

  if (hi > c->size)
    hi = c->size;
  *off = lo;
  *len = (size_t)(hi - lo);
}

/* mdadm's calc_sb_1_csum(), written out again here. */
static uint32_t
md_csum(const unsigned char *sb)
{
  unsigned char copy[4096];
  size_t size = 256 + 2 * (size_t)le32(sb + 220);
  uint64_t sum = 0;
  size_t i;

  assert_true(size <= sizeof copy);
  memcpy(copy, sb, size);
  memset(copy + 216, 0, 4);
  for (i = 0; i + 4 <= size; i += 4)
    sum += le32(copy + i);
  if (size - i == 2)
    sum += le16(copy + i);
  return (uint32_t)((sum & 0xffffffff) + (sum >> 32));
}

/* Where each type keeps the identifier the seed decides, and its size. */
static void
id_field(enum ff_sig_type t, uint64_t *off, size_t *len)
{
  switch (t) {
  case FF_SIG_MBR:
    *off = 440, *len = 4;
    return;
  case FF_SIG_GPT:
    *off = 512 + 56, *len = 16;
    return;
  case FF_SIG_EXT4:
    *off = 1024 + 0x68, *len = 16;
    return;
  case FF_SIG_XFS:
    *off = 0x20, *len = 16;
    return;
  case FF_SIG_MD:
    *off = 4096 + 16, *len = 16;
    return;
  }
  fail_msg("unknown type %d", (int)t);
}

/* ------------------------------------------------------------------ */
/* Per-type structure checks. */

static void
check_mbr(const struct sig_case *c)
{
  unsigned char *s = read_dev(c, 1, 0, 512);
  uint64_t want = c->size / 512 - 2048;

  if (want > 0xffffffffu)
    want = 0xffffffffu;
  assert_int_equal(s[510], 0x55);
  assert_int_equal(s[511], 0xaa);
  assert_int_not_equal(le32(s + 440), 0); /* disk signature */
  assert_int_equal(s[446], 0x00);         /* not bootable */
  assert_int_equal(s[450], 0x83);
  assert_int_equal(le32(s + 454), 2048);
  assert_int_equal(le32(s + 458), want);
  for (int i = 1; i < 4; i++) {
    static const unsigned char empty[16];

    assert_memory_equal(s + 446 + 16 * i, empty, 16);
  }
  test_free(s);
}

static void
check_gpt_header(const struct sig_case *c, const unsigned char *h,
                 uint64_t my_lba, uint64_t alt_lba, uint64_t entries_lba)
{
  uint64_t last = c->size / 512 - 1;
  unsigned char copy[92];
  unsigned char *array;

  assert_memory_equal(h, "EFI PART", 8);
  assert_int_equal(le32(h + 8), 0x00010000);
  assert_int_equal(le32(h + 12), 92);
  memcpy(copy, h, 92);
  memset(copy + 16, 0, 4);
  assert_int_equal(le32(h + 16), ff_crc32(copy, 92));
  assert_int_equal(le64(h + 24), my_lba);
  assert_int_equal(le64(h + 32), alt_lba);
  assert_int_equal(le64(h + 40), 34);
  assert_int_equal(le64(h + 48), last - 33);
  assert_int_equal(le64(h + 72), entries_lba);
  assert_int_equal(le32(h + 80), 128);
  assert_int_equal(le32(h + 84), 128);

  array = read_dev(c, 1, entries_lba * 512, 128 * 128);
  assert_int_equal(le32(h + 88), ff_crc32(array, 128 * 128));
  test_free(array);
}

static void
check_gpt(const struct sig_case *c)
{
  /* 0FC63DAF-8483-4772-8E79-3D69D8477DE4 in mixed-endian order */
  static const unsigned char linux_fs[16] = {
    0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
    0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4,
  };
  static const unsigned char name[16] = "f\0u\0s\0e\0f\0a\0r\0m\0";
  uint64_t last = c->size / 512 - 1;
  uint64_t pmbr_size = last > 0xffffffffu ? 0xffffffffu : last;
  unsigned char *s0 = read_dev(c, 1, 0, 512);
  unsigned char *h1 = read_dev(c, 1, 512, 512);
  unsigned char *h2 = read_dev(c, 1, last * 512, 512);
  unsigned char *e1 = read_dev(c, 1, 2 * 512, 32 * 512);
  unsigned char *e2 = read_dev(c, 1, (last - 32) * 512, 32 * 512);

  /* protective MBR */
  assert_int_equal(s0[450], 0xee);
  assert_int_equal(le32(s0 + 454), 1);
  assert_int_equal(le32(s0 + 458), pmbr_size);
  assert_int_equal(s0[510], 0x55);
  assert_int_equal(s0[511], 0xaa);

  check_gpt_header(c, h1, 1, last, 2);
  check_gpt_header(c, h2, last, 1, last - 32);
  assert_memory_equal(h1 + 56, h2 + 56, 16); /* disk GUID */
  assert_memory_equal(e1, e2, 32 * 512);

  /* the one partition */
  assert_memory_equal(e1, linux_fs, 16);
  assert_int_equal(le64(e1 + 32), 2048);
  assert_true(le64(e1 + 40) <= last - 33);
  assert_int_equal((le64(e1 + 40) + 1) % 2048, 0);
  assert_memory_equal(e1 + 56, name, 16);
  assert_int_equal(le16(e1 + 72), 0);

  test_free(s0);
  test_free(h1);
  test_free(h2);
  test_free(e1);
  test_free(e2);
}

static void
check_ext4(const struct sig_case *c)
{
  unsigned char *sb = read_dev(c, 1, 1024, 1024);
  uint64_t blocks = le32(sb + 0x04) | (uint64_t)le32(sb + 0x150) << 32;
  uint32_t bpg = le32(sb + 0x20);
  uint64_t groups;

  assert_int_equal(le16(sb + 0x38), 0xef53);
  assert_int_equal(le32(sb + 0x4c), 1);     /* rev 1 */
  assert_int_equal(le32(sb + 0x18), 2);     /* 4 KiB blocks */
  assert_int_equal(blocks, c->size / 4096); /* both sizes fit exactly */
  assert_true(le32(sb + 0x5c) & 0x0004);    /* has_journal */
  /* filetype|extents|64bit|flex_bg */
  assert_int_equal(le32(sb + 0x60), 0x02c2);
  assert_int_equal(le32(sb + 0x64), 0x006b); /* no metadata_csum (0x400) */
  assert_int_equal(le16(sb + 0x58), 256);    /* inode size */
  assert_int_equal(le16(sb + 0xfe), 64);     /* desc size (64bit) */
  assert_memory_equal(sb + 0x78, "fusefarm\0\0\0\0\0\0\0\0", 16);
  /* the geometry is self-consistent */
  assert_in_range(bpg, 256, 32768);
  groups = (blocks + bpg - 1) / bpg;
  assert_int_equal(le32(sb + 0x00), (uint64_t)le32(sb + 0x28) * groups);
  assert_true(le32(sb + 0x0c) < blocks);
  assert_true(le32(sb + 0x10) < le32(sb + 0x00));
  test_free(sb);
}

static void
check_xfs(const struct sig_case *c)
{
  unsigned char *sb = read_dev(c, 1, 0, 512);
  uint64_t dblocks = be64(sb + 0x08);
  uint32_t agblocks = be32(sb + 0x54);
  uint32_t agcount = be32(sb + 0x58);

  assert_memory_equal(sb, "XFSB", 4);
  assert_int_equal(be32(sb + 0x04), 4096);
  assert_int_equal(be16(sb + 0x64) & 0x000f, 4); /* v4: no CRCs */
  assert_int_equal(be16(sb + 0x66), 512);
  assert_int_equal(be16(sb + 0x68), 256);
  assert_int_equal(be16(sb + 0x6a), 16);
  assert_int_equal(sb[0x78], 12);
  assert_int_equal(sb[0x79], 9);
  assert_int_equal(sb[0x7a], 8);
  assert_int_equal(sb[0x7b], 4);
  assert_memory_equal(sb + 0x6c, "fusefarm\0\0\0\0", 12);
  /* blkid's xfs_verify_sb() bounds */
  assert_true(agcount > 0);
  assert_true(dblocks <= (uint64_t)agcount * agblocks);
  assert_true(dblocks >= (uint64_t)(agcount - 1) * agblocks + 64);
  assert_true(dblocks <= c->size / 4096);
  assert_true(be32(sb + 0x50) >= 1); /* rextsize */
  assert_true((1ull << sb[0x7c]) >= agblocks);
  assert_true(be64(sb + 0x30) >> sb[0x7c] < agcount); /* log in an AG */
  test_free(sb);
}

static void
check_md(const struct sig_case *c)
{
  unsigned char *sb = read_dev(c, 1, 4096, 1024);

  assert_int_equal(le32(sb + 0), 0xa92b4efc);
  assert_int_equal(le32(sb + 4), 1);
  assert_memory_equal(sb + 32, "fusefarm:0\0", 11);
  assert_int_equal(le32(sb + 72), 1);     /* raid1 */
  assert_int_equal(le32(sb + 92), 2);     /* raid_disks */
  assert_int_equal(le64(sb + 128), 2048); /* data_offset */
  assert_int_equal(le64(sb + 136), c->size / 512 - 2048);
  assert_int_equal(le64(sb + 144), 8); /* super_offset */
  assert_int_equal(le32(sb + 160), 0); /* dev_number */
  assert_int_equal(le32(sb + 220), 2); /* max_dev */
  assert_int_equal(le16(sb + 256), 0);
  assert_int_equal(le16(sb + 258), 1);
  assert_true(le64(sb + 80) <= le64(sb + 136));
  assert_int_equal(le32(sb + 216), md_csum(sb));
  test_free(sb);
}

/* ------------------------------------------------------------------ */
/* Table-driven checks common to every type. */

static void
check_extents(const struct sig_case *c)
{
  struct ff_range r[MAX_EXTENTS];
  struct ff_range one[2];
  size_t n = get_extents(c, r);

  for (size_t i = 0; i < n; i++) {
    assert_true(r[i].len > 0);
    assert_true(r[i].off + r[i].len <= c->size);
    if (i > 0)
      assert_true(r[i - 1].off + r[i - 1].len <= r[i].off);
  }
  /* counting only, and a short array */
  assert_int_equal(ff_sig_extents(c->type, c->size, NULL, 0), n);
  one[1].off = one[1].len = 12345;
  assert_int_equal(ff_sig_extents(c->type, c->size, one, 1), n);
  assert_int_equal(one[0].off, r[0].off);
  assert_int_equal(one[0].len, r[0].len);
  assert_int_equal(one[1].off, 12345);
  assert_int_equal(one[1].len, 12345);
}

/* LVM looks for its label in the first 4 sectors; only md may put
 * anything in the word at 4096, and then it is md's magic. */
static void
check_offset_4096(const struct sig_case *c)
{
  unsigned char *w = read_dev(c, 1, 4096, 4);

  if (c->type == FF_SIG_MD)
    assert_int_equal(le32(w), 0xa92b4efc);
  else
    assert_int_equal(le32(w), 0);
  test_free(w);
}

static void
check_piecewise(const struct sig_case *c)
{
  struct ff_range r[MAX_EXTENTS];
  size_t n = get_extents(c, r);

  for (size_t i = 0; i < n; i++) {
    uint64_t off;
    size_t len;
    unsigned char *whole, *pieces, *exact;

    margin_window(c, &r[i], &off, &len);
    whole = read_dev(c, 7, off, len);
    pieces = read_dev_chunked(c, 7, off, len);
    if (memcmp(whole, pieces, len) != 0)
      fail_msg("%s %llu: extent %zu differs when read in %d-byte pieces",
               ff_sig_name(c->type), (unsigned long long)c->size, i, CHUNK);
    assert_zero_outside(c, r, n, whole, off, len);

    /* the extent on its own is the same bytes */
    exact = read_dev(c, 7, r[i].off, (size_t)r[i].len);
    assert_memory_equal(exact, whole + (r[i].off - off), (size_t)r[i].len);
    test_free(exact);
    test_free(whole);
    test_free(pieces);
  }
}

/* Bytes outside the extents are zero: the first and last 64 KiB and a
 * spread of 4 KiB samples over the whole device. */
static void
check_zero_elsewhere(const struct sig_case *c)
{
  struct ff_range r[MAX_EXTENTS];
  size_t n = get_extents(c, r);
  const size_t edge = 64 * 1024, sample = 4096;
  unsigned char *buf, *pieces;

  buf = read_dev(c, 3, 0, edge);
  pieces = read_dev_chunked(c, 3, 0, edge);
  assert_memory_equal(buf, pieces, edge);
  assert_zero_outside(c, r, n, buf, 0, edge);
  test_free(buf);
  test_free(pieces);

  buf = read_dev(c, 3, c->size - edge, edge);
  pieces = read_dev_chunked(c, 3, c->size - edge, edge);
  assert_memory_equal(buf, pieces, edge);
  assert_zero_outside(c, r, n, buf, c->size - edge, edge);
  test_free(buf);
  test_free(pieces);

  for (uint64_t k = 0; k < 64; k++) {
    uint64_t off = (c->size - sample) / 64 * k + k * 4099 % 512;

    buf = read_dev(c, 3, off, sample);
    assert_zero_outside(c, r, n, buf, off, sample);
    test_free(buf);
  }
}

/* Empty reads write nothing; reads past the end of the device write
 * nothing past it. */
static void
check_edges(const struct sig_case *c)
{
  unsigned char guard[64];
  unsigned char *tail, *over;
  struct ff_range r[MAX_EXTENTS];
  size_t n = get_extents(c, r);

  memset(guard, 0xa5, sizeof guard);
  for (size_t i = 0; i < n; i++) {
    ff_sig_read(c->type, c->size, 1, guard, r[i].off, 0);
    ff_sig_read(c->type, c->size, 1, guard, r[i].off + 1, 0);
  }
  for (size_t i = 0; i < sizeof guard; i++)
    assert_int_equal(guard[i], 0xa5);

  tail = read_dev(c, 1, c->size - 512, 512);
  over = read_dev(c, 1, c->size - 512, 1536);
  assert_memory_equal(over, tail, 512);
  for (size_t i = 512; i < 1536; i++)
    assert_int_equal(over[i], 0);
  test_free(tail);
  test_free(over);

  /* a range wholly past the end, and one that would wrap 2^64 */
  over = read_dev(c, 1, c->size + 4096, 512);
  for (size_t i = 0; i < 512; i++)
    assert_int_equal(over[i], 0);
  test_free(over);
  over = read_dev(c, 1, UINT64_MAX - 100, 512);
  for (size_t i = 0; i < 512; i++)
    assert_int_equal(over[i], 0);
  test_free(over);
}

static void
check_determinism(const struct sig_case *c)
{
  struct ff_range r[MAX_EXTENTS];
  size_t n = get_extents(c, r);
  static const uint64_t seeds[] = {0, 1, 42, UINT64_MAX};
  uint64_t id_off = 0;
  size_t id_len = 0;

  for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
    for (size_t i = 0; i < n; i++) {
      unsigned char *a = read_dev(c, seeds[s], r[i].off, (size_t)r[i].len);
      unsigned char *b = read_dev(c, seeds[s], r[i].off, (size_t)r[i].len);

      assert_memory_equal(a, b, (size_t)r[i].len);
      test_free(a);
      test_free(b);
    }
  }

  id_field(c->type, &id_off, &id_len);
  for (size_t s = 0; s + 1 < sizeof seeds / sizeof seeds[0]; s++) {
    unsigned char *a = read_dev(c, seeds[s], id_off, id_len);
    unsigned char *b = read_dev(c, seeds[s + 1], id_off, id_len);
    static const unsigned char zeros[16];

    assert_memory_not_equal(a, zeros, id_len);
    assert_memory_not_equal(a, b, id_len);
    test_free(a);
    test_free(b);
  }
}

static void
test_signature(void **state)
{
  const struct sig_case *c = *state;

  check_extents(c);
  check_offset_4096(c);
  switch (c->type) {
  case FF_SIG_MBR:
    check_mbr(c);
    break;
  case FF_SIG_GPT:
    check_gpt(c);
    break;
  case FF_SIG_EXT4:
    check_ext4(c);
    break;
  case FF_SIG_XFS:
    check_xfs(c);
    break;
  case FF_SIG_MD:
    check_md(c);
    break;
  }
  check_piecewise(c);
  check_zero_elsewhere(c);
  check_edges(c);
  check_determinism(c);
}

/* ------------------------------------------------------------------ */
/* Names and minimum sizes. */

static void
test_parse_name(void **state)
{
  static const char *const bad[] = {"bogus", "",    "MBR",  "ext",
                                    "ext4 ", "md0", "gpt\n"};
  enum ff_sig_type t;

  (void)state;
  for (size_t i = 0; i < NTYPES; i++) {
    const char *name = ff_sig_name(all_types[i]);

    assert_non_null(name);
    assert_int_equal(ff_sig_parse(name, &t), 0);
    assert_int_equal(t, all_types[i]);
  }
  assert_string_equal(ff_sig_name(FF_SIG_MBR), "mbr");
  assert_string_equal(ff_sig_name(FF_SIG_GPT), "gpt");
  assert_string_equal(ff_sig_name(FF_SIG_EXT4), "ext4");
  assert_string_equal(ff_sig_name(FF_SIG_XFS), "xfs");
  assert_string_equal(ff_sig_name(FF_SIG_MD), "md");

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    t = FF_SIG_XFS;
    assert_int_equal(ff_sig_parse(bad[i], &t), -1);
    assert_int_equal(t, FF_SIG_XFS); /* left alone */
  }
  assert_int_equal(ff_sig_parse(NULL, &t), -1);
  assert_null(ff_sig_name((enum ff_sig_type)99));
}

static void
test_min_size(void **state)
{
  (void)state;
  for (size_t i = 0; i < NTYPES; i++) {
    struct sig_case c = {all_types[i], ff_sig_min_size(all_types[i])};
    struct ff_range r[MAX_EXTENTS];
    unsigned char guard[8192];
    size_t n;

    assert_true(c.size > 4096 + 1024);
    /* exactly the minimum: a complete signature inside the device */
    n = ff_sig_extents(c.type, c.size, r, MAX_EXTENTS);
    assert_in_range(n, 1, MAX_EXTENTS);
    for (size_t k = 0; k < n; k++) {
      assert_true(r[k].off + r[k].len <= c.size);
      if (k > 0)
        assert_true(r[k - 1].off + r[k - 1].len <= r[k].off);
    }
    check_piecewise(&c);

    /* one byte less: nothing at all */
    assert_int_equal(ff_sig_extents(c.type, c.size - 1, r, MAX_EXTENTS), 0);
    memset(guard, 0xa5, sizeof guard);
    ff_sig_read(c.type, c.size - 1, 1, guard, 0, sizeof guard);
    for (size_t k = 0; k < sizeof guard; k++)
      assert_int_equal(guard[k], 0xa5);
  }
  assert_int_equal(ff_sig_min_size((enum ff_sig_type)99), 0);
  assert_int_equal(ff_sig_extents((enum ff_sig_type)99, TiB, NULL, 0), 0);
}

/* The type specific checks at the minimum sizes too. */
static void
test_min_size_structures(void **state)
{
  (void)state;
  for (size_t i = 0; i < NTYPES; i++) {
    struct sig_case c = {all_types[i], ff_sig_min_size(all_types[i])};

    switch (c.type) {
    case FF_SIG_MBR:
      check_mbr(&c);
      break;
    case FF_SIG_GPT:
      check_gpt(&c);
      break;
    case FF_SIG_EXT4:
      check_ext4(&c);
      break;
    case FF_SIG_XFS:
      check_xfs(&c);
      break;
    case FF_SIG_MD:
      check_md(&c);
      break;
    }
    check_offset_4096(&c);
  }
}

#define CASE(i, label)                                                        \
  {                                                                           \
    label, test_signature, NULL, NULL, &cases[i]                              \
  }

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse_name),
    cmocka_unit_test(test_min_size),
    cmocka_unit_test(test_min_size_structures),
    CASE(0, "mbr 64MiB"),
    CASE(1, "mbr 1TiB"),
    CASE(2, "gpt 64MiB"),
    CASE(3, "gpt 1TiB"),
    CASE(4, "ext4 64MiB"),
    CASE(5, "ext4 1TiB"),
    CASE(6, "xfs 64MiB"),
    CASE(7, "xfs 1TiB"),
    CASE(8, "md 64MiB"),
    CASE(9, "md 1TiB"),
  };

  return cmocka_run_group_tests_name("signature", tests, NULL, NULL);
}
