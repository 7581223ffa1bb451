/* The farm: bytes served on demand, determinism, extents, damage kinds,
 * the circular buffer when it wraps, and writes through the overlay. */
#include "ff-crc.h"
#include "ff-farm-int.h"
#include "ff-manifest.h"
#include "ff-pvlayout-int.h"
#include "ff-spec.h"
#include "ff-test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char mixed[] =
  "seed = 42; device_size = \"256M\";\n"
  "vgs = ({ count = 2; pvs = 3; mda_copies = 2;\n"
  "         lvs = ({ type = \"striped\"; stripes = 3; fill = 0.5; },\n"
  "                { fill = 0.3; }); },\n"
  "       { pvs = 1; mda_size = \"32K\"; pe_start = \"1M\"; seqno = 300;\n"
  "         lvs = ({ count = 3; fill = 0.1; }); });\n"
  "orphans = ({ count = 1; mda_copies = 2; });\n"
  "blanks = ({ count = 1; });\n"
  "signatures = ({ type = \"gpt\"; }, { type = \"ext4\"; });\n";

static const char damaged[] =
  "device_size = \"64M\";\n"
  "vgs = ({ name = \"crc\"; pvs = 2; damage = \"bad-label-crc\"; },\n"
  "       { name = \"mda\"; pvs = 2; damage = \"bad-mda-checksum\"; },\n"
  "       { name = \"txt\"; pvs = 1; damage = \"bad-metadata-text\"; },\n"
  "       { name = \"dup\"; pvs = 1; damage = \"duplicate-pv\"; },\n"
  "       { name = \"mis\"; pvs = 3; damage = \"missing-pv\"; },\n"
  "       { name = \"old\"; pvs = 2; damage = \"stale-metadata\";\n"
  "         lvs = ({ fill = 0.5; }); });\n";

/* Read the whole of [off, off+len) at once and in odd-sized pieces. */
static void
check_piecewise(const struct ff_farm *farm, uint32_t dev, uint64_t off,
                size_t len)
{
  uint8_t *a = malloc(len), *b = malloc(len);

  assert_non_null(a);
  assert_non_null(b);
  assert_ok(ff_farm_read(farm, dev, a, off, len));
  for (size_t o = 0; o < len;) {
    size_t n = len - o < 333 ? len - o : 333;

    assert_ok(ff_farm_read(farm, dev, b + o, off + o, n));
    o += n;
  }
  assert_memory_equal(a, b, len);
  free(a);
  free(b);
}

static void
test_piecewise(void **state)
{
  struct ff_farm *farm = ff_test_farm(mixed);

  (void)state;
  for (uint32_t d = 0; d < farm->ndevs; d++) {
    uint64_t sz = farm->devs[d].size;

    check_piecewise(farm, d, 0, 1u << 20);
    check_piecewise(farm, d, sz - (2u << 20), 2u << 20);
  }
  ff_farm_free(farm);
}

static void
test_determinism(void **state)
{
  struct ff_farm *f1 = ff_test_farm(mixed), *f2 = ff_test_farm(mixed);
  char other[sizeof mixed + 8];
  struct ff_farm *f3;
  uint8_t *a = malloc(1u << 20), *b = malloc(1u << 20);

  (void)state;
  assert_int_equal(f1->ndevs, f2->ndevs);
  assert_true(f1->fingerprint == f2->fingerprint);
  for (uint32_t d = 0; d < f1->ndevs; d++) {
    assert_ok(ff_farm_read(f1, d, a, 0, 1u << 20));
    assert_ok(ff_farm_read(f2, d, b, 0, 1u << 20));
    assert_memory_equal(a, b, 1u << 20);
  }
  snprintf(other, sizeof other, "%s", mixed);
  memcpy(strstr(other, "seed = 42"), "seed = 43", 9);
  f3 = ff_test_farm(other);
  assert_true(f3->fingerprint != f1->fingerprint);
  assert_memory_not_equal(f1->devs[0].uuid, f3->devs[0].uuid, FF_UUID_LEN);
  free(a);
  free(b);
  ff_farm_free(f1);
  ff_farm_free(f2);
  ff_farm_free(f3);
}

/* Every byte outside the reported extents is zero. */
static void
test_extents(void **state)
{
  struct ff_farm *farm = ff_test_farm(mixed);
  size_t chunk = 1u << 20;
  uint8_t *buf = malloc(chunk);

  (void)state;
  assert_non_null(buf);
  for (uint32_t d = 0; d < farm->ndevs; d++) {
    struct ff_range r[64];
    int64_t n = ff_farm_extents(farm, d, r, 64);
    uint64_t sz = farm->devs[d].size;
    uint64_t starts[2] = {0, sz - chunk};

    assert_true(n >= 0 && n <= 64);
    for (int64_t i = 1; i < n; i++)
      assert_true(r[i - 1].off + r[i - 1].len < r[i].off);
    for (int s = 0; s < 2; s++) {
      assert_ok(ff_farm_read(farm, d, buf, starts[s], chunk));
      for (size_t o = 0; o < chunk; o++) {
        uint64_t at = starts[s] + o;
        int inside = 0;

        for (int64_t i = 0; i < n && !inside; i++)
          inside = at >= r[i].off && at < r[i].off + r[i].len;
        if (!inside && buf[o])
          fail_msg("device %u: byte %llu is %u outside every extent", d,
                   (unsigned long long)at, buf[o]);
      }
    }
    if (farm->devs[d].role == FF_ROLE_BLANK)
      assert_int_equal(n, 0);
    else
      assert_true(n > 0);
  }
  free(buf);
  ff_farm_free(farm);
}

/* Follow the mda header to the current text, as lvm does, and check the
 * CRC over both parts of a wrapped copy. */
static uint32_t
current_text(const struct ff_farm *farm, uint32_t d, uint64_t mda_start,
             char **text)
{
  uint8_t h[512];
  uint64_t off, size, msize;
  char *t;

  assert_ok(ff_farm_read(farm, d, h, mda_start, 512));
  assert_int_equal(ff_get_le32(h), ff_lvm_crc(h + 4, 508));
  assert_memory_equal(h + 4, FF_MDA_MAGIC, 16);
  assert_int_equal(ff_get_le64(h + 24), mda_start);
  msize = ff_get_le64(h + 32);
  off = ff_get_le64(h + 40);
  size = ff_get_le64(h + 48);
  t = malloc(size);
  assert_non_null(t);
  if (off + size <= msize) {
    assert_ok(ff_farm_read(farm, d, t, mda_start + off, size));
  } else {
    assert_ok(ff_farm_read(farm, d, t, mda_start + off, msize - off));
    assert_ok(ff_farm_read(farm, d, t + (msize - off), mda_start + 512,
                           size - (msize - off)));
  }
  assert_int_equal(ff_lvm_crc(t, size), ff_get_le32(h + 56));
  assert_int_equal(t[size - 1], '\0');
  *text = t;
  return (uint32_t)size;
}

static void
test_wrapping_buffer(void **state)
{
  struct ff_farm *farm = ff_test_farm(mixed);
  const struct ff_vg *vg = &farm->vgs[2];
  int wrapped = 0;
  char *text;

  (void)state;
  assert_int_equal(vg->seqno, 300);
  for (uint32_t w = 0; w < vg->seqno; w++)
    wrapped |= vg->texts[w].mda0_off + vg->texts[w].size > vg->fmt.mda_size;
  assert_true(wrapped); /* the spec must exercise a wrapped copy */
  current_text(farm, vg->pvs[0].dev, FF_MDA0_START, &text);
  assert_non_null(strstr(text, "seqno = 300\n"));
  free(text);
  /* Both mdas of a 2-mda PV carry the same text. */
  {
    const struct ff_device *d = &farm->devs[0];
    uint64_t s1, z1;
    char *t0, *t1;
    uint32_t n0, n1;

    ff_mda1_place(&farm->fmts[d->fmt], d->size, &s1, &z1);
    assert_true(s1 > 0);
    n0 = current_text(farm, 0, FF_MDA0_START, &t0);
    n1 = current_text(farm, 0, s1, &t1);
    assert_int_equal(n0, n1);
    assert_memory_equal(t0, t1, n0);
    free(t0);
    free(t1);
  }
  ff_farm_free(farm);
}

static void
test_damage(void **state)
{
  struct ff_farm *farm = ff_test_farm(damaged);
  uint8_t a[4096], b[4096];
  char *t;

  (void)state;
  /* crc: device 1's label CRC does not match, device 0's does. */
  assert_ok(ff_farm_read(farm, 0, a, 512, 512));
  assert_int_equal(ff_get_le32(a + 16), ff_lvm_crc(a + 20, 492));
  assert_ok(ff_farm_read(farm, 1, a, 512, 512));
  assert_int_not_equal(ff_get_le32(a + 16), ff_lvm_crc(a + 20, 492));
  /* mda: device 3's mda0 header checksum is wrong. */
  assert_ok(ff_farm_read(farm, 3, a, 4096, 512));
  assert_int_not_equal(ff_get_le32(a), ff_lvm_crc(a + 4, 508));
  /* txt: the text is framed and summed right but does not parse. */
  current_text(farm, 4, FF_MDA0_START, &t);
  assert_non_null(strstr(t, "txt {{\n"));
  free(t);
  /* dup: device 6 carries device 5's bytes, and shares its writes. */
  assert_int_equal(farm->devs[6].role, FF_ROLE_DUPLICATE);
  assert_int_equal(farm->devs[6].alias, 5);
  assert_ok(ff_farm_read(farm, 5, a, 0, sizeof a));
  assert_ok(ff_farm_read(farm, 6, b, 0, sizeof b));
  assert_memory_equal(a, b, sizeof a);
  memset(a, 0x5A, 512);
  assert_ok(ff_farm_write(farm, 6, a, 1u << 20, 512));
  assert_ok(ff_farm_read(farm, 5, b, 1u << 20, 512));
  assert_memory_equal(a, b, 512);
  /* mis: the VG lists 3 PVs, only 2 devices exist. */
  assert_int_equal(farm->vgs[4].npvs, 3);
  assert_int_equal(farm->vgs[4].pvs[2].dev, FF_NONE);
  assert_int_equal(farm->ndevs, 2 + 2 + 1 + 2 + 2 + 2);
  /* old: the last PV's header points at seqno 1, the first's at 2. */
  current_text(farm, 9, FF_MDA0_START, &t);
  assert_non_null(strstr(t, "seqno = 2\n"));
  free(t);
  current_text(farm, 10, FF_MDA0_START, &t);
  assert_non_null(strstr(t, "seqno = 1\n"));
  free(t);
  ff_farm_free(farm);
}

static void
test_history(void **state)
{
  struct ff_farm *farm =
    ff_test_farm("vgs = ({ seqno = 5; history = 1; "
                 "lvs = ({ count = 2; fill = 0.1; }); });");
  const struct ff_vg *vg = &farm->vgs[0];
  uint8_t *buf = malloc(16384);

  (void)state;
  assert_int_equal(vg->first_kept, 3);
  assert_null(vg->texts[2].buf);
  assert_non_null(vg->texts[3].buf);
  assert_ok(ff_farm_read(farm, 0, buf, 4096, 16384));
  /* The dropped copies' places read as zeros, the kept two are there. */
  for (uint64_t i = vg->texts[0].mda0_off; i < vg->texts[3].mda0_off; i++)
    assert_int_equal(buf[i], 0);
  assert_non_null(strstr((char *)buf + vg->texts[3].mda0_off, "seqno = 4\n"));
  assert_non_null(strstr((char *)buf + vg->texts[4].mda0_off, "seqno = 5\n"));
  assert_non_null(strstr((char *)buf + vg->texts[4].mda0_off,
                         "Write from vgck --updatemetadata vg0000."));
  free(buf);
  ff_farm_free(farm);
}

static void
test_overlay(void **state)
{
  struct ff_farm *farm = ff_test_farm(mixed);
  uint8_t w[6000], r[6000], base[6000];
  uint64_t sz = farm->devs[0].size;

  (void)state;
  assert_ok(ff_farm_read(farm, 0, base, 0, sizeof base));
  memset(w, 0xA5, sizeof w);
  assert_ok(ff_farm_write(farm, 0, w, 100, 1000));
  assert_ok(ff_farm_read(farm, 0, r, 0, sizeof r));
  assert_memory_equal(r, base, 100);
  assert_memory_equal(r + 100, w, 1000);
  assert_memory_equal(r + 1100, base + 1100, sizeof r - 1100);
  /* The base is untouched. */
  assert_ok(ff_farm_read_base(farm, 0, r, 0, sizeof r));
  assert_memory_equal(r, base, sizeof r);
  /* Zeroing hides base bytes (the label goes away). */
  assert_ok(ff_farm_zero(farm, 0, 0, 4096));
  assert_ok(ff_farm_read(farm, 0, r, 0, 4096));
  for (int i = 0; i < 4096; i++)
    assert_int_equal(r[i], 0);
  /* Out of range is an error naming the device. */
  assert_int_equal(ff_farm_read(farm, 0, r, sz - 10, 20), -1);
  assert_non_null(strstr(ff_errmsg(), "beyond the end of pv0000"));
  assert_int_equal(ff_farm_write(farm, 0, w, sz - 10, 20), -1);
  assert_int_equal(ff_farm_lookup(farm, "pv0003"), 3);
  assert_int_equal(ff_farm_lookup(farm, "nope"), -1);
  ff_farm_free(farm);
}

/* ---- extents of any length, zeroing only where data can be ---------- */

static const char big_spec[] =
  "device_size = \"1T\";\n"
  "vgs = ({ pvs = 2; mda_copies = 2; lvs = ({ fill = 0.5; }); });\n"
  "blanks = ({ count = 1; });\n";

static void
test_extents_all(void **state)
{
  struct ff_farm *farm = ff_test_farm(big_spec);
  uint8_t blk[4096];

  (void)state;
  memset(blk, 0x77, sizeof blk);
  /* Many scattered writes: more ranges than any fixed array would hold. */
  for (int i = 0; i < 300; i++)
    assert_ok(ff_farm_write(farm, 0, blk, (uint64_t)i << 24, sizeof blk));
  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++) {
    struct ff_range *r, big[512];
    int64_t n = ff_farm_extents_all(farm, d, &r);
    int64_t m = ff_farm_extents(farm, d, big, 512);

    assert_true(n >= 0);
    assert_int_equal(n, m);
    if (n)
      assert_memory_equal(r, big, (size_t)n * sizeof *r);
    else
      assert_null(r);
    if (d == 0)
      assert_true(n > 300);
    free(r);
  }
  ff_farm_free(farm);
}

static void
test_zero_sparse(void **state)
{
  struct ff_farm *farm = ff_test_farm(big_spec);
  uint64_t size = ff_farm_dev_size(farm, 0), data, zero, bytes;
  struct ff_range *r;
  int64_t n;

  (void)state;
  /* A whole-device discard of 1 TiB: only the layout's blocks change. */
  assert_ok(ff_farm_zero_sparse(farm, 0, 0, size));
  n = ff_farm_extents_all(farm, 0, &r);
  assert_true(n > 0);
  for (int64_t i = 0; i < n; i++) {
    uint8_t *buf = malloc(r[i].len);

    assert_non_null(buf);
    assert_ok(ff_farm_read(farm, 0, buf, r[i].off, r[i].len));
    for (uint64_t k = 0; k < r[i].len; k++)
      if (buf[k])
        fail_msg("byte %llu is %u after zeroing",
                 (unsigned long long)(r[i].off + k), buf[k]);
    free(buf);
  }
  free(r);
  ff_overlay_stats(ff_farm_overlay(farm), &data, &zero, &bytes);
  assert_int_equal(data, 0);
  assert_true(zero > 0 && zero < 1024);
  /* Out of range is refused. */
  assert_int_equal(ff_farm_zero_sparse(farm, 0, size - 4096, 8192), -1);
  ff_farm_free(farm);
}

/* ff_farm_zero_sparse of a part of a device whose writes lie inside and
 * outside it: the writes in the range (a block cut by its ends in part)
 * read as zeros, the others are kept. */
static void
test_zero_sparse_range(void **state)
{
  struct ff_farm *farm = ff_test_farm(big_spec);
  const uint64_t at = 1ull << 30, b = 4096;
  uint8_t pat[4096], buf[4096];

  (void)state;
  memset(pat, 0xa5, sizeof pat);
  for (uint64_t i = 0; i < 8; i++) /* blocks 0..7 past 1 GiB */
    assert_ok(ff_farm_write(farm, 0, pat, at + i * b, b));
  /* [block 2 + 100, block 5 + 200): 2 and 5 in part, 3 and 4 whole */
  assert_ok(ff_farm_zero_sparse(farm, 0, at + 2 * b + 100, 3 * b + 100));
  for (uint64_t i = 0; i < 8; i++) {
    assert_ok(ff_farm_read(farm, 0, buf, at + i * b, b));
    for (uint64_t k = 0; k < b; k++) {
      uint64_t p = i * b + k;
      int zeroed = p >= 2 * b + 100 && p < 5 * b + 200;

      if (buf[k] != (zeroed ? 0 : 0xa5))
        fail_msg("block %llu byte %llu is %u", (unsigned long long)i,
                 (unsigned long long)k, buf[k]);
    }
  }
  ff_farm_free(farm);
}

/* The allocator's decisions, lvm2 2.03.16's for each lvcreate in turn:
 * which PV, which extents, how many segments.  Each LV is written as
 * "NAME LE+LEN PV:PE[,PV:PE…] LE+LEN …", LVs joined by "; ".  The PVs are
 * 13 MiB (3 extents of 4 MiB after the 1 MiB pe_start) or 21 MiB (5). */
static const struct {
  const char *what, *lvs, *want;
  unsigned pvs;
  const char *size;
} alloc_cases[] = {
  {"-l 2 twice: the second LV whole on the PV with room for it",
   "{ name = \"a\"; size = \"8M\"; }, { name = \"b\"; size = \"8M\"; }",
   "a 0+2 0:0; b 0+2 1:0", 2, "13M"},
  {"-l 1 then -l 4: the largest area first, then the rest",
   "{ name = \"a\"; size = \"4M\"; }, { name = \"b\"; size = \"16M\"; }",
   "a 0+1 0:0; b 0+3 1:0 3+1 0:1", 2, "13M"},
  {"unequal free space: largest areas first, ties in PV order",
   "{ name = \"a\"; size = \"16M\"; }, { name = \"b\"; size = \"12M\"; },"
   " { name = \"c\"; size = \"32M\"; }",
   "a 0+4 0:0; b 0+3 1:0; c 0+5 2:0 5+2 1:3 7+1 0:4", 3, "21M"},
  {"striped: the PVs that give the most, ties in PV order",
   "{ name = \"a\"; size = \"4M\"; }, { name = \"b\"; size = \"16M\";"
   " type = \"striped\"; stripes = 2; }",
   "a 0+1 0:0; b 0+4 0:1,1:0", 2, "13M"},
  {"a striped LV then a linear one on the emptiest PVs",
   "{ name = \"s\"; size = \"24M\"; type = \"striped\"; stripes = 3; },"
   " { name = \"l\"; size = \"36M\"; }",
   "s 0+6 0:0,1:0,2:0; l 0+5 3:0 5+3 0:2 8+1 1:2", 4, "21M"},
  {"contiguous: one area that holds it all",
   "{ name = \"a\"; size = \"8M\"; alloc = \"contiguous\"; },"
   " { name = \"b\"; size = \"12M\"; alloc = \"contiguous\"; },"
   " { name = \"c\"; size = \"4M\"; alloc = \"cling\"; }",
   "a 0+2 0:0; b 0+3 1:0; c 0+1 0:2", 2, "13M"},
  {"anywhere: the rest of the stripes on one PV",
   "{ name = \"a\"; size = \"8M\"; }, { name = \"b\"; size = \"16M\";"
   " type = \"striped\"; stripes = 2; alloc = \"anywhere\"; }",
   "a 0+2 0:0; b 0+2 1:0,0:2 2+2 1:1,1:2", 2, "13M"},
  {"placement as given, in any order; the policy takes what is left",
   "{ name = \"a\"; placement = ( [\"1:1-2\"] ); },"
   " { name = \"b\"; size = \"12M\"; },"
   " { name = \"c\"; type = \"striped\"; placement = ( [\"1:0\", \"2:0\"] ); "
   "},"
   " { name = \"d\"; size = \"8M\"; placement = ( [\"2:2\"], [\"2:1\"] ); }",
   "a 0+2 1:1; b 0+3 0:0; c 0+2 1:0,2:0; d 0+1 2:2 1+1 2:1", 3, "13M"},
  {"the policy around holes: an area reserved and reset goes after its equals",
   "{ name = \"a\"; placement = ( [\"0:1-3\"] ); },"
   " { name = \"b\"; size = \"12M\"; }, { name = \"c\"; size = \"16M\"; }",
   "a 0+3 0:1; b 0+3 1:0; c 0+2 1:3 2+1 0:4 3+1 0:0", 2, "21M"},
};

static const struct {
  const char *lvs, *want;
} alloc_errors[] = {
  {"{ size = \"8M\"; }, { size = \"16M\"; alloc = \"contiguous\"; }",
   "vgs.[0].lvs.[1]: lvm's contiguous policy finds no room for LV lvol1 in "
   "VG vg0000: 4 more extents needed (lvcreate: insufficient suitable "
   "contiguous allocatable extents)"},
  {"{ size = \"8M\"; }, { size = \"16M\"; type = \"striped\"; stripes = 2; }",
   "vgs.[0].lvs.[1]: lvm's normal policy finds no room for LV lvol1 in VG "
   "vg0000: 2 more extents needed"},
  {"{ size = \"8M\"; }, { size = \"16M\"; type = \"striped\"; stripes = 2;"
   " alloc = \"cling\"; }",
   "lvm's cling policy finds no room for LV lvol1 in VG vg0000: 2 more"},
  {"{ size = \"8M\"; }, { size = \"20M\"; alloc = \"anywhere\"; }",
   "vgs.[0].lvs.[1]: VG vg0000 has 4 free extents, LV lvol1 needs 5"},
  {"{ size = \"8M\"; }, { placement = ( [\"1:0\"],\n [\"0:1-2\"] ); }",
   "t:2: vgs.[0].lvs.[1].placement.[1]: 0:1-2 overlaps lvol0 on PV 0"},
  {"{ placement = ( [\"0:0-1\"], [\"1:0\"], [\"0:1\"] ); }",
   "vgs.[0].lvs.[0].placement.[2]: 0:1-1 overlaps an earlier range of this "
   "LV on PV 0"},
  {"{ placement = ( [\"1:2-3\"] ); }",
   "vgs.[0].lvs.[0].placement.[0]: 1:2-3 runs past PV 1's last extent (it "
   "has 3)"},
  {"{ size = \"4M\"; placement = ( [\"0:0-1\"] ); }",
   "vgs.[0].lvs.[0]: size gives LV lvol0 1 extents, its placement 2"},
};

static void
describe_lvs(const struct ff_vg *vg, char *out, size_t n)
{
  size_t o = 0;

  out[0] = '\0';
  for (uint32_t l = 0; l < vg->nlvs; l++) {
    const struct ff_lv *lv = &vg->lvs[l];

    o += (size_t)snprintf(out + o, n - o, "%s%s", l ? "; " : "", lv->name);
    for (uint32_t s = 0; s < lv->nsegs; s++) {
      const struct ff_seg *seg = &lv->segs[s];

      o += (size_t)snprintf(out + o, n - o, " %llu+%llu",
                            (unsigned long long)seg->le,
                            (unsigned long long)seg->len);
      for (uint32_t a = 0; a < seg->stripes; a++)
        o += (size_t)snprintf(out + o, n - o, "%s%u:%llu", a ? "," : " ",
                              seg->areas[a].pv,
                              (unsigned long long)seg->areas[a].pe);
    }
  }
}

static void
test_alloc(void **state)
{
  char spec[1024], got[512];

  (void)state;
  for (size_t i = 0; i < sizeof alloc_cases / sizeof *alloc_cases; i++) {
    struct ff_farm *farm;

    snprintf(spec, sizeof spec,
             "vgs = ({ pvs = %u; device_size = \"%s\"; lvs = (%s); });",
             alloc_cases[i].pvs, alloc_cases[i].size, alloc_cases[i].lvs);
    farm = ff_test_farm(spec);
    describe_lvs(&farm->vgs[0], got, sizeof got);
    if (strcmp(got, alloc_cases[i].want))
      fail_msg("%s: got \"%s\", want \"%s\"", alloc_cases[i].what, got,
               alloc_cases[i].want);
    ff_farm_free(farm);
  }
  /* alloc is written as the LV's allocation_policy; none without it. */
  {
    struct ff_farm *farm = ff_test_farm(
      "vgs = ({ lvs = ({ size = \"4M\"; alloc = \"cling\"; },"
      " { size = \"4M\"; }, { size = \"4M\"; alloc = \"normal\"; }); });");
    const struct ff_text *t = &farm->vgs[0].texts[farm->vgs[0].seqno - 1];

    assert_string_equal(farm->vgs[0].lvs[0].alloc, "cling");
    assert_null(farm->vgs[0].lvs[1].alloc);
    assert_non_null(t->buf);
    assert_non_null(strstr(t->buf, "creation_host = \"fusefarm\"\n"
                                   "allocation_policy = \"cling\"\n"));
    assert_non_null(strstr(t->buf, "allocation_policy = \"normal\"\n"));
    assert_null(strstr(strstr(t->buf, "lvol1 {"), "allocation_policy = "
                                                  "\"cling\""));
    ff_farm_free(farm);
  }
  for (size_t i = 0; i < sizeof alloc_errors / sizeof *alloc_errors; i++) {
    struct ff_spec *sp;
    struct ff_farm *farm;

    snprintf(spec, sizeof spec,
             "vgs = ({ pvs = 2; device_size = \"13M\"; lvs = (%s); });",
             alloc_errors[i].lvs);
    sp = ff_spec_load_string(spec, "t");
    assert_nonnull_err(sp);
    farm = ff_farm_new(sp);
    ff_spec_free(sp);
    if (farm)
      fail_msg("error case %zu was accepted", i);
    if (!strstr(ff_errmsg(), alloc_errors[i].want))
      fail_msg("error case %zu: \"%s\" lacks \"%s\"", i, ff_errmsg(),
               alloc_errors[i].want);
  }
}

/* [off, off + len) of device dev reads the same from farms a and b, read
 * whole and, with pieces, also in 333-byte pieces (a packed text cut by
 * the window's edges is unpacked aside). */
static void
check_same(const struct ff_farm *a, const struct ff_farm *b, uint32_t dev,
           uint64_t off, uint64_t len, int pieces)
{
  uint8_t *x = malloc(len), *y = malloc(len);

  assert_non_null(x);
  assert_non_null(y);
  assert_ok(ff_farm_read(a, dev, x, off, len));
  assert_ok(ff_farm_read(b, dev, y, off, len));
  assert_memory_equal(x, y, len);
  for (uint64_t o = 0; pieces && o < len; o += 333) {
    size_t n = len - o < 333 ? len - o : 333;

    assert_ok(ff_farm_read(b, dev, y, off + o, n));
    assert_memory_equal(x + o, y, n);
  }
  free(x);
  free(y);
}

/* The bytes the farm's kept metadata texts take (packed or not, with the
 * dictionary): what packing saved. */
static size_t
text_bytes(const struct ff_farm *farm)
{
  size_t n = farm->tdict_size;

  for (uint32_t i = 0; farm->vgs && i < farm->nvgs; i++)
    for (uint32_t w = 0; farm->vgs[i].texts && w < farm->vgs[i].seqno; w++) {
      const struct ff_text *t = &farm->vgs[i].texts[w];

      if (t->buf)
        n += t->zsize ? t->zsize : t->size;
    }
  return n;
}

/* The lazy farm c (ff_farm_new_lazy) against a, the same farm built
 * whole: the same fingerprint, manifest (every VG's name, PVs and LVs,
 * every device's description) and LV count, and its cache builds a VG
 * once for reads of its PVs one after the other, again only once it has
 * been dropped. */
static void
check_lazy_farm(const struct ff_farm *a, const struct ff_farm *c,
                const char *what)
{
  char *ma = ff_manifest_text(a, FF_MANIFEST_COMPACT);
  char *mc = ff_manifest_text(c, FF_MANIFEST_COMPACT);
  uint64_t before;
  uint8_t sec[512];

  assert_null(c->vgs);
  assert_non_null(c->lazy);
  assert_int_equal(ff_farm_fingerprint(a), ff_farm_fingerprint(c));
  assert_nonnull_err(ma);
  assert_nonnull_err(mc);
  if (strcmp(ma, mc))
    fail_msg("%s: the lazy farm's manifest differs", what);
  free(ma);
  free(mc);
  assert_int_equal(ff_farm_nlvs(a), ff_farm_nlvs(c));
  for (uint32_t d = 0; d < c->ndevs; d++) {
    if (c->devs[d].role != FF_ROLE_PV)
      continue;
    assert_ok(ff_farm_read(c, d, sec, 0, 512));
    before = ff_lazy_builds(c);
    for (int k = 0; k < 5; k++)
      assert_ok(ff_farm_read(c, d, sec, 4096, 512));
    if (ff_lazy_builds(c) != before)
      fail_msg("%s: reads of device %u one after the other built its VG "
               "%llu more times",
               what, d, (unsigned long long)(ff_lazy_builds(c) - before));
  }
  /* every VG read at least once; with more VGs than the cache holds,
   * the first ones were dropped and are built again */
  before = ff_lazy_builds(c);
  assert_true(before >= c->nvgs);
  for (uint32_t d = 0; d < c->ndevs; d++)
    if (c->devs[d].role == FF_ROLE_PV)
      assert_ok(ff_farm_read(c, d, sec, 0, 512));
  if (c->nvgs > 100 && ff_lazy_builds(c) - before < c->nvgs)
    fail_msg("%s: a second pass over %u VGs built %llu", what, c->nvgs,
             (unsigned long long)(ff_lazy_builds(c) - before));
}

/* The servers' packed farm (ff_farm_new_packed) and the plugin's lazy one
 * (ff_farm_new_lazy, from sp2, a second load of the same spec, which it
 * takes) read as the same farm unpacked: every range a device's layout
 * holds (ff_farm_extents: the label, the mda headers and texts, what lvm
 * wrote into LVs) and the first 128 KiB (lvm's label-scan read); texts
 * are packed, and in a farm of 100 VGs or more take a third of the
 * memory or less.
 * Specs: wrapped circular buffers, damage, a dropped history, and the
 * layouts of configs/ (raid, mirror, thin, cache, a 1000-device farm). */
static void
check_packed(struct ff_spec *sp, struct ff_spec *sp2, const char *what)
{
  struct ff_farm *a = ff_farm_new(sp), *b = ff_farm_new_packed(sp);
  struct ff_farm *c = ff_farm_new_lazy(sp2);
  uint32_t packed = 0, ndevs, npool;

  assert_nonnull_err(a);
  assert_nonnull_err(b);
  assert_nonnull_err(c);
  npool = c->npool;
  for (uint32_t i = 0; i < b->nvgs; i++)
    for (uint32_t w = 0; w < b->vgs[i].seqno; w++)
      packed += b->vgs[i].texts[w].zsize != 0;
  /* (a farm of a few VGs has its texts in the dictionary: no smaller) */
  if (!packed || (b->nvgs >= 100 && 3 * text_bytes(b) > text_bytes(a)))
    fail_msg("%s: %u texts packed, %zu bytes against %zu unpacked", what,
             packed, text_bytes(b), text_bytes(a));
  ndevs = a->ndevs;
  for (uint32_t d = 0; d < ndevs; d++) {
    struct ff_range r[64];
    int64_t n = ff_farm_extents(a, d, r, 64);
    uint64_t head =
      a->devs[d].size < (128u << 10) ? a->devs[d].size : (128u << 10);
    int pieces = d < 24; /* (the 1000-device farm: pieces of a few) */

    struct ff_range rc[64];

    assert_true(n >= 0 && n <= 64);
    assert_int_equal(ff_farm_extents(c, d, rc, 64), n);
    assert_memory_equal(r, rc, (size_t)n * sizeof *r);
    check_same(a, b, d, 0, head, pieces);
    check_same(a, c, d, 0, head, pieces);
    for (int64_t k = 0; k < n; k++) {
      check_same(a, b, d, r[k].off, r[k].len, pieces);
      check_same(a, c, d, r[k].off, r[k].len, pieces);
    }
  }
  check_lazy_farm(a, c, what);
  /* what a VG's build keeps is the VG's: the farm does not grow */
  if (c->npool != npool)
    fail_msg("%s: the farm's kept strings grew from %u to %u with the VGs "
             "built again",
             what, npool, c->npool);
  ff_farm_free(a);
  ff_farm_free(b);
  ff_farm_free(c);
}

static void
test_packed(void **state)
{
  static const char *const inline_specs[] = {
    mixed, damaged,
    "vgs = ({ seqno = 5; history = 1; lvs = ({ count = 2; fill = 0.1; }); "
    "});",
    /* strings a build keeps: system ids, device ids, a rename */
    "system_id = \"hostA\";\n"
    "vgs = ({ count = 40; system_id = \"hostB\";\n"
    "         lvs = ({ name = \"a\"; size = \"8M\"; });\n"
    "         changes = ({ command = \"lvrename\"; lv = \"a\";\n"
    "                      new_name = \"b\"; }); },\n"
    "       { device_id_type = \"sys_serial\"; device_ids = [\"s1\"]; });"};
  static const char *const configs[] = {
    "raid-mirror.conf", "thin-snapshot.conf", "cache.conf", "mixed-1000.conf"};
  char path[4096];

  (void)state;
  for (size_t i = 0; i < sizeof inline_specs / sizeof *inline_specs; i++) {
    struct ff_spec *sp = ff_spec_load_string(inline_specs[i], "test");
    struct ff_spec *sp2 = ff_spec_load_string(inline_specs[i], "test");

    assert_nonnull_err(sp);
    assert_nonnull_err(sp2);
    snprintf(path, sizeof path, "inline spec %zu", i);
    check_packed(sp, sp2, path);
    ff_spec_free(sp);
  }
  for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
    struct ff_spec *sp, *sp2;

    if ((size_t)snprintf(path, sizeof path, "%s/configs/%s", ff_test_srcdir(),
                         configs[i]) >= sizeof path)
      fail_msg("source path too long: %s", ff_test_srcdir());
    sp = ff_spec_load_file(path);
    sp2 = ff_spec_load_file(path);
    assert_nonnull_err(sp);
    assert_nonnull_err(sp2);
    check_packed(sp, sp2, path);
    ff_spec_free(sp);
  }
}

/* configs/NAME built whole (*a, from *sp, which the caller frees) and
 * lazily (*c, from a second load of it). */
static void
whole_and_lazy(const char *name, struct ff_spec **sp, struct ff_farm **a,
               struct ff_farm **c)
{
  char path[4096];
  struct ff_spec *sp2;

  if ((size_t)snprintf(path, sizeof path, "%s/configs/%s", ff_test_srcdir(),
                       name) >= sizeof path)
    fail_msg("source path too long: %s", ff_test_srcdir());
  *sp = ff_spec_load_file(path);
  sp2 = ff_spec_load_file(path);
  assert_nonnull_err(*sp);
  assert_nonnull_err(sp2);
  *a = ff_farm_new(*sp);
  *c = ff_farm_new_lazy(sp2);
  assert_nonnull_err(*a);
  assert_nonnull_err(*c);
}

/* More VGs held at once than the lazy farm keeps built (ff_farm_hold, as
 * a server holds a read's VG across its wait): the ones past the cache
 * are built aside, found there by a second holder and by reads (one
 * build each), give the whole farm's bytes, and go with their last
 * holder. */
static void
test_lazy_held(void **state)
{
  enum { H = 40 };
  struct ff_spec *sp;
  struct ff_farm *a, *c;
  const void *held[H], *again;
  uint32_t dev[H], n = 0, last = FF_NONE;
  uint64_t b0, b1;
  uint8_t x[4096], y[4096];

  (void)state;
  whole_and_lazy("mixed-1000.conf", &sp, &a, &c);
  for (uint32_t d = 0; d < c->ndevs && n < H; d++)
    if (c->devs[d].role == FF_ROLE_PV && c->devs[d].vg != last) {
      last = c->devs[d].vg;
      dev[n++] = d;
    }
  assert_int_equal(n, H);
  b0 = ff_lazy_builds(c);
  for (uint32_t i = 0; i < H; i++)
    assert_non_null(held[i] = ff_farm_hold(c, dev[i]));
  b1 = ff_lazy_builds(c);
  assert_int_equal(b1 - b0, H); /* (no two of them share a VG) */
  again = ff_farm_hold(c, dev[H - 1]);
  assert_ptr_equal(again, held[H - 1]);
  for (uint32_t i = 0; i < H; i++) {
    assert_ok(ff_farm_read(a, dev[i], x, 4096, sizeof x));
    assert_ok(ff_farm_read(c, dev[i], y, 4096, sizeof y));
    assert_memory_equal(x, y, sizeof x);
  }
  if (ff_lazy_builds(c) != b1)
    fail_msg("reads of %u held VGs built %llu more", H,
             (unsigned long long)(ff_lazy_builds(c) - b1));
  ff_farm_release(c, again);
  for (uint32_t i = 0; i < H; i++)
    ff_farm_release(c, held[i]);
  /* (the lone ones are gone: a read builds the last one again) */
  assert_ok(ff_farm_read(c, dev[H - 1], y, 4096, sizeof y));
  assert_int_equal(ff_lazy_builds(c), b1 + 1);
  assert_null(ff_farm_hold(a, dev[0])); /* (a whole farm holds nothing) */
  ff_farm_free(a);
  ff_farm_free(c);
  ff_spec_free(sp);
}

/* Readers on many threads at once, more of them than the lazy farm's
 * cache has slots, each reading the label and first text of PVs of
 * different VGs: every read gives the whole farm's bytes (a VG is never
 * dropped under a read, and one built for a lone reader when every slot
 * is held reads the same). */
struct lazy_reader {
  const struct ff_farm *a, *c;
  uint32_t first;
  int bad;
};

static void *
lazy_reader(void *arg)
{
  struct lazy_reader *r = arg;
  uint8_t x[8192], y[8192];

  for (uint32_t k = 0; k < 3 * r->c->ndevs; k++) {
    uint32_t d = (r->first + k * 7) % r->c->ndevs;
    uint64_t len =
      r->c->devs[d].size < sizeof x ? r->c->devs[d].size : sizeof x;

    if (ff_farm_read(r->a, d, x, 0, len) < 0 ||
        ff_farm_read(r->c, d, y, 0, len) < 0 || memcmp(x, y, len))
      r->bad++;
  }
  return NULL;
}

static void
test_lazy_threads(void **state)
{
  struct ff_spec *sp;
  struct ff_farm *a, *c;
  struct lazy_reader rd[40];
  pthread_t th[40];

  (void)state;
  whole_and_lazy("mixed-1000.conf", &sp, &a, &c);
  for (int i = 0; i < 40; i++) {
    rd[i] = (struct lazy_reader){a, c, (uint32_t)i * 25, 0};
    assert_int_equal(pthread_create(&th[i], NULL, lazy_reader, &rd[i]), 0);
  }
  for (int i = 0; i < 40; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    if (rd[i].bad)
      fail_msg("reader %d: %d reads differ from the whole farm's", i,
               rd[i].bad);
  }
  ff_farm_free(a);
  ff_farm_free(c);
  ff_spec_free(sp);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_piecewise),
    cmocka_unit_test(test_determinism),
    cmocka_unit_test(test_extents),
    cmocka_unit_test(test_wrapping_buffer),
    cmocka_unit_test(test_damage),
    cmocka_unit_test(test_history),
    cmocka_unit_test(test_overlay),
    cmocka_unit_test(test_extents_all),
    cmocka_unit_test(test_zero_sparse),
    cmocka_unit_test(test_zero_sparse_range),
    cmocka_unit_test(test_alloc),
    cmocka_unit_test(test_packed),
    cmocka_unit_test(test_lazy_threads),
    cmocka_unit_test(test_lazy_held),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
