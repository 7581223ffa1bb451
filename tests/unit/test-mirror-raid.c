/* Mirror and raid LVs (docs/spec-format.md "Mirror and raid LVs"): the
 * two metadata writes of their lvcreate against the texts real lvm2
 * 2.03.16 wrote (runs on loop devices with a fake device-mapper, the
 * UUIDs, times and descriptions pinned in the spec), the allocation of
 * every sub-LV, the mirror log's bytes in the data area, the manifest. */
#include "ff-farm-int.h"
#include "ff-manifest.h"
#include "ff-spec.h"
#include "ff-test.h"
#include "ff-testdata.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* lvcreate --type raid1 -m1 -L 8M -n lv vg on two 64 MiB PVs, and
 * lvcreate --type mirror -m1 -L 8M -n lv vg on three: the specs in
 * tests/data/mirror-raid/ (raid1.conf, mirror.conf) pin what lvm chose;
 * NAME-write1.txt and NAME-write2.txt are the copies lvm left in pv0's
 * metadata area (seqno 2: "Write from", seqno 3: "Write[2] from"),
 * byte for byte. */

static void
test_raid1_writes(void **state)
{
  char *spec = ff_test_data("mirror-raid/raid1.conf"),
       *w1 = ff_test_data("mirror-raid/raid1-write1.txt"),
       *w2 = ff_test_data("mirror-raid/raid1-write2.txt");
  struct ff_farm *farm = ff_test_farm(spec);
  const struct ff_vg *vg = &farm->vgs[0];

  (void)state;
  assert_int_equal(vg->seqno, 3);
  assert_string_equal(vg->texts[1].buf, w1);
  assert_string_equal(vg->texts[2].buf, w2);
  assert_int_equal(vg->texts[1].size, strlen(w1) + 1);
  assert_int_equal(vg->texts[1].size, 2410);
  assert_int_equal(vg->texts[2].size, 2374);
  /* both writes are in the ring: write 2 follows write 1 */
  assert_int_equal(vg->texts[1].mda0_off, 1536);
  assert_int_equal(vg->texts[2].mda0_off, 4096);
  /* raid writes nothing into the data area */
  assert_int_equal(vg->nblobs, 0);
  ff_farm_free(farm);
  free(spec);
  free(w1);
  free(w2);
}

static void
test_mirror_writes(void **state)
{
  char *spec = ff_test_data("mirror-raid/mirror.conf"),
       *w1 = ff_test_data("mirror-raid/mirror-write1.txt"),
       *w2 = ff_test_data("mirror-raid/mirror-write2.txt");
  struct ff_farm *farm = ff_test_farm(spec);
  const struct ff_vg *vg = &farm->vgs[0];
  static const uint8_t hdr[16] = {0x72, 0x52, 0x69, 0x4d, 2,    0,
                                  0,    0,    0xff, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xff};
  uint8_t b[4096], zero[4096] = {0};
  struct ff_range r[16];
  int64_t n;
  int found = 0;

  (void)state;
  assert_int_equal(vg->seqno, 3);
  assert_string_equal(vg->texts[1].buf, w1);
  assert_string_equal(vg->texts[2].buf, w2);
  assert_int_equal(vg->texts[1].mda0_off, 2048);
  assert_int_equal(vg->texts[2].mda0_off, 4608);
  /* the log (pv2:0) starts with its header; the rest of it is zero, and
   * so are the images' first bytes */
  assert_ok(ff_farm_read(farm, 2, b, 1 << 20, sizeof b));
  assert_memory_equal(b, hdr, 16);
  assert_memory_equal(b + 16, zero, sizeof b - 16);
  assert_ok(ff_farm_read(farm, 0, b, 1 << 20, sizeof b));
  assert_memory_equal(b, zero, sizeof b);
  /* ... and the log's block is one of pv2's data extents */
  n = ff_farm_extents(farm, 2, r, 16);
  assert_true(n > 0 && n <= 16);
  for (int64_t i = 0; i < n; i++)
    found |= r[i].off <= (1 << 20) && r[i].off + r[i].len >= (1 << 20) + 16;
  assert_true(found);
  ff_farm_free(farm);
  free(spec);
  free(w1);
  free(w2);
}

/* --nosync: the whole log LV is 0xFF but for the header's version and
 * magic; a write to the device still wins. */
static void
test_nosync_log(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ pvs = 3; device_size = \"64M\"; lvs = ({ name = \"lv\"; "
    "type = \"mirror\"; nosync = true; size = \"8M\"; }); });");
  const uint64_t log = 1 << 20, ext = 4 << 20;
  uint8_t *b = malloc(ext + 512), ff[512];

  (void)state;
  assert_non_null(b);
  memset(ff, 0xff, sizeof ff);
  assert_ok(ff_farm_read(farm, 2, b, log, ext + 512));
  assert_int_equal(b[0], 0x72);
  assert_int_equal(b[4], 2);
  assert_int_equal(b[5], 0);
  assert_int_equal(b[7], 0);
  assert_memory_equal(b + 8, ff, 8);
  for (uint64_t i = 16; i < ext; i += 512)
    assert_memory_equal(b + i, ff, i + 512 <= ext ? 512 : ext - i);
  assert_int_equal(b[ext], 0); /* the next extent is free */
  assert_non_null(strstr(farm->vgs[0].texts[2].buf,
                         "status = [\"READ\", \"WRITE\", \"VISIBLE\", "
                         "\"NOTSYNCED\"]"));
  memset(b, 0, 512);
  assert_ok(ff_farm_write(farm, 2, b, log, 512));
  assert_ok(ff_farm_read(farm, 2, b, log, 512));
  assert_int_equal(b[0], 0);
  assert_int_equal(b[511], 0);
  free(b);
  ff_farm_free(farm);
}

/* Where lvm 2.03.16 puts every sub-LV ("NAME PV:PE+LEN", creation
 * order), on PVs of 64 MiB (15 extents of 4 MiB); each case was seen
 * with real lvcreate runs (mirror-raid research, fake device-mapper). */
static const struct {
  const char *what, *lvs, *want;
  unsigned pvs;
} mr_cases[] = {
  {"raid1: rmeta first, then the image, on each PV",
   "{ name = \"lv\"; type = \"raid1\"; size = \"8M\"; }",
   "lv_rimage_0 0:1+2 lv_rmeta_0 0:0+1 lv_rimage_1 1:1+2 lv_rmeta_1 1:0+1", 2},
  {"raid1 -m2",
   "{ name = \"lv\"; type = \"raid1\"; mirrors = 2; size = \"8M\"; }",
   "lv_rimage_0 0:1+2 lv_rmeta_0 0:0+1 lv_rimage_1 1:1+2 lv_rmeta_1 1:0+1 "
   "lv_rimage_2 2:1+2 lv_rmeta_2 2:0+1",
   3},
  {"raid6 -i3: 8M rounded up to 3 extents, 5 images of 1",
   "{ name = \"lv\"; type = \"raid6\"; size = \"8M\"; }",
   "lv_rimage_0 0:1+1 lv_rmeta_0 0:0+1 lv_rimage_1 1:1+1 lv_rmeta_1 1:0+1 "
   "lv_rimage_2 2:1+1 lv_rmeta_2 2:0+1 lv_rimage_3 3:1+1 lv_rmeta_3 3:0+1 "
   "lv_rimage_4 4:1+1 lv_rmeta_4 4:0+1",
   5},
  {"raid10 -i2 -m1: 4 images of LV/2",
   "{ name = \"lv\"; type = \"raid10\"; size = \"8M\"; }",
   "lv_rimage_0 0:1+1 lv_rmeta_0 0:0+1 lv_rimage_1 1:1+1 lv_rmeta_1 1:0+1 "
   "lv_rimage_2 2:1+1 lv_rmeta_2 2:0+1 lv_rimage_3 3:1+1 lv_rmeta_3 3:0+1",
   4},
  {"raid1 anywhere on one PV: the images one after the other",
   "{ name = \"lv\"; type = \"raid1\"; alloc = \"anywhere\"; size = \"8M\"; }",
   "lv_rimage_0 0:1+2 lv_rmeta_0 0:0+1 lv_rimage_1 0:4+2 lv_rmeta_1 0:3+1", 1},
  {"raid1 after a 10-extent LV: every PV that holds the run ties, PV order",
   "{ name = \"a\"; size = \"40M\"; }, { name = \"lv\"; type = \"raid1\"; "
   "size = \"8M\"; }",
   "lv_rimage_0 0:11+2 lv_rmeta_0 0:10+1 lv_rimage_1 1:1+2 lv_rmeta_1 1:0+1",
   3},
  {"mirror, 3 PVs: the log on the PV without an image",
   "{ name = \"lv\"; type = \"mirror\"; size = \"8M\"; }",
   "lv_mimage_0 0:0+2 lv_mimage_1 1:0+2 lv_mlog 2:0+1", 3},
  {"mirror, 2 PVs: no free PV, the log on the last PV with room",
   "{ name = \"lv\"; type = \"mirror\"; size = \"8M\"; }",
   "lv_mimage_0 0:0+2 lv_mimage_1 1:0+2 lv_mlog 1:2+1", 2},
  {"mirror, 4 PVs: the last candidate PV",
   "{ name = \"lv\"; type = \"mirror\"; size = \"8M\"; }",
   "lv_mimage_0 0:0+2 lv_mimage_1 1:0+2 lv_mlog 3:0+1", 4},
  {"mirror -m2, 3 PVs: the log iteration",
   "{ name = \"lv\"; type = \"mirror\"; mirrors = 2; size = \"8M\"; }",
   "lv_mimage_0 0:0+2 lv_mimage_1 1:0+2 lv_mimage_2 2:0+2 lv_mlog 2:2+1", 3},
  {"mirror, core log: no log LV",
   "{ name = \"lv\"; type = \"mirror\"; mirror_log = \"core\"; size = \"8M\"; "
   "}",
   "lv_mimage_0 0:0+2 lv_mimage_1 1:0+2", 2},
  {"mirror anywhere on one PV",
   "{ name = \"lv\"; type = \"mirror\"; alloc = \"anywhere\"; size = \"8M\"; "
   "}",
   "lv_mimage_0 0:0+2 lv_mimage_1 0:2+2 lv_mlog 0:4+1", 1},
  {"mirror log on a PV with two free areas: the smaller one",
   "{ name = \"p\"; placement = ( [\"2:2-3\"] ); },"
   " { name = \"lv\"; type = \"mirror\"; size = \"8M\"; }",
   "lv_mimage_0 0:0+2 lv_mimage_1 1:0+2 lv_mlog 2:0+1", 3},
  {"linear, raid1, linear, mirror: the mirror's images where most is free",
   "{ name = \"lvA\"; size = \"40M\"; }, { name = \"lvR\"; type = \"raid1\"; "
   "size = \"8M\"; }, { name = \"lvB\"; size = \"4M\"; }, { name = \"lvM\"; "
   "type = \"mirror\"; size = \"8M\"; }",
   "lvR_rimage_0 0:11+2 lvR_rmeta_0 0:10+1 lvR_rimage_1 1:1+2 lvR_rmeta_1 "
   "1:0+1 lvM_mimage_0 1:3+2 lvM_mimage_1 2:0+2 lvM_mlog 0:14+1",
   3},
  {"raid5 after a raid1 and a mirror",
   "{ name = \"r1\"; type = \"raid1\"; size = \"8M\"; }, { name = \"m1\"; "
   "type = \"mirror\"; size = \"8M\"; }, { name = \"r5\"; type = \"raid5\"; "
   "size = \"8M\"; }",
   "r1_rimage_0 0:1+2 r1_rmeta_0 0:0+1 r1_rimage_1 1:1+2 r1_rmeta_1 1:0+1 "
   "m1_mimage_0 0:3+2 m1_mimage_1 1:3+2 m1_mlog 2:0+1 r5_rimage_0 0:6+1 "
   "r5_rmeta_0 0:5+1 r5_rimage_1 1:6+1 r5_rmeta_1 1:5+1 r5_rimage_2 2:2+1 "
   "r5_rmeta_2 2:1+1",
   3},
  {"raid0 -i2, then -i3 -I 128k: the rimages alone (byte-identical r0)",
   "{ name = \"lva\"; type = \"raid0\"; size = \"8M\"; }, { name = \"lvb\"; "
   "type = \"raid0\"; stripes = 3; stripe_size = \"128K\"; size = \"12M\"; }",
   "lva_rimage_0 0:0+1 lva_rimage_1 1:0+1 lvb_rimage_0 0:1+1 lvb_rimage_1 "
   "1:1+1 lvb_rimage_2 2:0+1",
   3},
  {"raid0_meta: rmeta, then the rimage, as raid5's (byte-identical r1)",
   "{ name = \"lva\"; type = \"raid0_meta\"; size = \"8M\"; }, { name = "
   "\"lvb\"; type = \"raid0_meta\"; stripes = 3; size = \"12M\"; }",
   "lva_rimage_0 0:1+1 lva_rmeta_0 0:0+1 lva_rimage_1 1:1+1 lva_rmeta_1 "
   "1:0+1 lvb_rimage_0 0:3+1 lvb_rmeta_0 0:2+1 lvb_rimage_1 1:3+1 "
   "lvb_rmeta_1 1:2+1 lvb_rimage_2 2:1+1 lvb_rmeta_2 2:0+1",
   3},
};

static void
describe_subs(const struct ff_vg *vg, char *out, size_t n)
{
  size_t o = 0;

  out[0] = '\0';
  for (uint32_t l = 0; l < vg->nlvs; l++)
    for (uint32_t u = 0; u < vg->lvs[l].nsubs; u++) {
      const struct ff_lv *sub = &vg->lvs[l].subs[u];

      assert_int_equal(sub->nsegs, 1);
      o += (size_t)snprintf(out + o, n - o, "%s%s %u:%llu+%llu", o ? " " : "",
                            sub->name, sub->segs[0].areas[0].pv,
                            (unsigned long long)sub->segs[0].areas[0].pe,
                            (unsigned long long)sub->segs[0].len);
    }
}

static void
test_alloc(void **state)
{
  char spec[1024], got[1024];

  (void)state;
  for (size_t i = 0; i < sizeof mr_cases / sizeof *mr_cases; i++) {
    struct ff_farm *farm;

    snprintf(spec, sizeof spec,
             "vgs = ({ pvs = %u; device_size = \"64M\"; lvs = (%s); });",
             mr_cases[i].pvs, mr_cases[i].lvs);
    farm = ff_test_farm(spec);
    describe_subs(&farm->vgs[0], got, sizeof got);
    if (strcmp(got, mr_cases[i].want))
      fail_msg("%s: got \"%s\", want \"%s\"", mr_cases[i].what, got,
               mr_cases[i].want);
    ff_farm_free(farm);
  }
}

/* raid0: one write (no rmeta to wipe), its segment as raid.c
 * _raid_text_export_raid0 writes it: stripe_count, stripe_size, no
 * region_size, raid0_lvs; raid0_meta: two writes, rmeta/rimage pairs;
 * lvm takes --nosync and -R for both and writes neither. */
static void
test_raid0(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ pvs = 2; device_size = \"64M\"; lvs = ({ name = \"lv\"; type "
    "= \"raid0\"; nosync = true; region_size = \"1M\"; size = \"8M\"; }, "
    "{ name = \"lm\"; type = \"raid0_meta\"; size = \"8M\"; }); });");
  const struct ff_vg *vg = &farm->vgs[0];

  (void)state;
  assert_int_equal(vg->seqno, 4);
  assert_non_null(strstr(vg->texts[1].buf,
                         "type = \"raid0\"\nstripe_count = 2\nstripe_size = "
                         "128\n\nraid0_lvs = [\n\"lv_rimage_0\",\n"
                         "\"lv_rimage_1\"\n]\n}\n"));
  assert_null(strstr(vg->texts[1].buf, "NOTSYNCED"));
  assert_null(strstr(vg->texts[1].buf, "region_size"));
  assert_non_null(strstr(
    vg->texts[3].buf, "type = \"raid0_meta\"\nstripe_count = 2\n"
                      "stripe_size = 128\n\nraids = [\n\"lm_rmeta_0\", "
                      "\"lm_rimage_0\",\n\"lm_rmeta_1\", \"lm_rimage_1\"\n]"));
  assert_non_null(strstr(vg->texts[2].buf, "ACTIVATION_SKIP"));
  assert_null(strstr(vg->texts[3].buf, "region_size"));
  ff_farm_free(farm);
}

/* Write 1 and write 2 of a raid1 and of a disk-log mirror, with the tags
 * and policy every sub-LV inherits (or not), and the default
 * descriptions; a core-log mirror writes once. */
static void
test_writes_defaults(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ pvs = 3; device_size = \"64M\"; time = 5; lvs = ("
    " { name = \"r\"; type = \"raid1\"; tags = [\"t\"]; alloc = \"cling\";"
    "   size = \"8M\"; time = 7; write_times = [8, 9]; },"
    " { name = \"m\"; type = \"mirror\"; tags = [\"u\"]; size = \"8M\"; },"
    " { name = \"c\"; type = \"mirror\"; mirror_log = \"core\"; size = "
    "\"4M\"; }"
    "); });");
  const struct ff_vg *vg = &farm->vgs[0];
  const char *w1, *w2, *p;

  (void)state;
  assert_int_equal(vg->seqno, 1 + 2 + 2 + 1);
  w1 = vg->texts[1].buf;
  w2 = vg->texts[2].buf;
  assert_non_null(strstr(w1, "description = \"Write from lvcreate --type "
                             "raid1 -m 1 --alloc cling -l 2 -n r vg0000.\""));
  assert_non_null(strstr(w2, "description = \"Write[2] from lvcreate --type "
                             "raid1 -m 1 --alloc cling -l 2 -n r vg0000.\""));
  assert_non_null(strstr(w1, "creation_time = 8\t#"));
  assert_non_null(strstr(w2, "creation_time = 9\t#"));
  /* write 1: the top LV is skipped at activation, the rmetas visible and
   * printed before the images; write 2: neither */
  assert_non_null(strstr(w1, "flags = [\"ACTIVATION_SKIP\"]"));
  assert_null(strstr(w2, "ACTIVATION_SKIP"));
  p = strstr(w1, "\nr_rmeta_0 {");
  assert_non_null(p);
  assert_true(p < strstr(w1, "\nr_rimage_0 {"));
  assert_non_null(strstr(p, "status = [\"READ\", \"WRITE\", \"VISIBLE\"]"));
  p = strstr(w2, "\nr_rmeta_0 {");
  assert_true(p > strstr(w2, "\nr_rimage_0 {"));
  /* rmetas keep the LV's tags, images never have them; every sub-LV has
   * the policy */
  assert_non_null(strstr(p, "flags = []\ntags = [\"t\"]\ncreation_time = 7\n"
                            "creation_host = \"fusefarm\"\n"
                            "allocation_policy = \"cling\"\n"));
  p = strstr(w2, "\nr_rimage_1 {");
  assert_non_null(strstr(p, "status = [\"READ\", \"WRITE\"]\nflags = []\n"
                            "creation_time = 7\ncreation_host = \"fusefarm\"\n"
                            "allocation_policy = \"cling\"\n"));
  /* the mirror: write 1 has a visible, tagged log and no mirror_log */
  w1 = vg->texts[3].buf;
  w2 = vg->texts[4].buf;
  assert_null(strstr(w1, "mirror_log"));
  assert_non_null(strstr(w2, "mirror_count = 2\nmirror_log = \"m_mlog\"\n"
                             "region_size = 4096\n"));
  p = strstr(w1, "\nm_mlog {");
  assert_true(p && p < strstr(w1, "\nr_rimage_0 {"));
  assert_non_null(strstr(p, "\"VISIBLE\"]\nflags = []\ntags = [\"u\"]\n"));
  p = strstr(w2, "\nm_mlog {");
  assert_true(p && p > strstr(w2, "\nm_mimage_1 {"));
  assert_non_null(strstr(p, "status = [\"READ\", \"WRITE\"]\nflags = []\n"
                            "creation_time"));
  /* the core-log mirror: one write */
  assert_non_null(strstr(vg->texts[5].buf,
                         "description = \"Write from lvcreate --type mirror "
                         "-m 1 --mirrorlog core -l 1 -n c vg0000.\""));
  assert_null(strstr(vg->texts[5].buf, "c_mlog"));
  /* the final text: visible LVs, then every hidden one in creation order */
  p = vg->texts[5].buf;
  assert_true(strstr(p, "\nc {") < strstr(p, "\nr_rimage_0 {"));
  assert_true(strstr(p, "\nr_rmeta_1 {") < strstr(p, "\nm_mimage_0 {"));
  assert_true(strstr(p, "\nm_mlog {") < strstr(p, "\nc_mimage_0 {"));
  ff_farm_free(farm);
}

/* The region size lvcreate writes (checked with real runs): raised to
 * the stripe size for raid, cut to the LV's size when larger. */
static void
test_region_size(void **state)
{
  static const struct {
    const char *lv;
    uint64_t want;
  } cases[] = {
    {"type = \"raid1\"; size = \"8M\";", 4096},
    {"type = \"raid5\"; region_size = \"32K\"; size = \"8M\";", 128},
    {"type = \"raid1\"; region_size = \"512K\"; size = \"20M\";", 1024},
    {"type = \"mirror\"; region_size = \"16M\"; size = \"8M\";", 16384},
    {"type = \"mirror\"; region_size = \"16M\"; size = \"12M\";", 16384},
  };
  char spec[256];

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct ff_farm *farm;

    snprintf(spec, sizeof spec,
             "vgs = ({ pvs = 3; device_size = \"64M\"; lvs = ({ %s }); });",
             cases[i].lv);
    farm = ff_test_farm(spec);
    if (farm->vgs[0].lvs[0].region_size != cases[i].want)
      fail_msg("%s: region_size %llu, want %llu", cases[i].lv,
               (unsigned long long)farm->vgs[0].lvs[0].region_size,
               (unsigned long long)cases[i].want);
    ff_farm_free(farm);
  }
}

static json_t *
lv_named(json_t *lvs, const char *name)
{
  size_t i;
  json_t *lv;

  json_array_foreach(
    lvs, i, lv) if (!strcmp(json_string_value(json_object_get(lv, "name")),
                            name)) return lv;
  fail_msg("no LV %s in the manifest", name);
  return NULL;
}

static void
test_manifest(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ pvs = 4; device_size = \"64M\"; lvs = ("
    " { name = \"l\"; size = \"4M\"; },"
    " { name = \"r\"; type = \"raid5\"; nosync = true; size = \"8M\"; },"
    " { name = \"m\"; type = \"mirror\"; size = \"8M\"; },"
    " { name = \"c\"; type = \"mirror\"; mirror_log = \"core\"; size = "
    "\"4M\"; }"
    "); });");
  char *text = ff_manifest_text(farm, FF_MANIFEST_COMPACT);
  json_t *root, *lvs, *lv, *seg;
  json_error_t err;

  (void)state;
  assert_non_null(text);
  root = json_loads(text, 0, &err);
  assert_non_null(root);
  lvs =
    json_object_get(json_array_get(json_object_get(root, "vgs"), 0), "lvs");
  /* 4 LVs and 6 + 3 + 2 sub-LVs, visible ones first */
  assert_int_equal(json_array_size(lvs), 4 + 6 + 3 + 2);
  assert_string_equal(
    json_string_value(json_object_get(json_array_get(lvs, 3), "name")), "c");
  assert_string_equal(
    json_string_value(json_object_get(json_array_get(lvs, 4), "name")),
    "r_rimage_0");
  lv = lv_named(lvs, "l");
  assert_true(json_is_true(json_object_get(lv, "visible")));
  assert_null(json_object_get(lv, "role"));
  lv = lv_named(lvs, "r");
  assert_string_equal(json_string_value(json_object_get(lv, "type")), "raid5");
  assert_string_equal(json_string_value(json_object_get(lv, "dm_type")),
                      "raid5_ls");
  assert_int_equal(json_integer_value(json_object_get(lv, "region_size")),
                   2 << 20);
  assert_int_equal(json_integer_value(json_object_get(lv, "stripe_size")),
                   64 << 10);
  assert_int_equal(json_array_size(json_object_get(lv, "images")), 3);
  assert_string_equal(
    json_string_value(json_array_get(json_object_get(lv, "metas"), 2)),
    "r_rmeta_2");
  assert_true(json_is_null(json_object_get(lv, "log")));
  assert_true(json_is_true(json_object_get(lv, "nosync")));
  seg = json_array_get(json_object_get(lv, "segments"), 0);
  assert_string_equal(json_string_value(json_object_get(seg, "type")),
                      "raid5");
  assert_int_equal(json_integer_value(json_object_get(seg, "extent_count")),
                   2);
  lv = lv_named(lvs, "r_rmeta_1");
  assert_true(json_is_false(json_object_get(lv, "visible")));
  assert_string_equal(json_string_value(json_object_get(lv, "parent")), "r");
  assert_string_equal(json_string_value(json_object_get(lv, "role")), "rmeta");
  seg = json_array_get(json_object_get(lv, "segments"), 0);
  assert_string_equal(json_string_value(json_object_get(seg, "type")),
                      "linear");
  assert_int_equal(
    json_integer_value(json_object_get(
      json_array_get(json_object_get(seg, "areas"), 0), "start_pe")),
    0);
  lv = lv_named(lvs, "m");
  assert_string_equal(json_string_value(json_object_get(lv, "log")), "m_mlog");
  assert_true(json_is_false(json_object_get(lv, "nosync")));
  assert_string_equal(
    json_string_value(json_object_get(lv_named(lvs, "m_mlog"), "role")),
    "mlog");
  assert_true(json_is_null(json_object_get(lv_named(lvs, "c"), "log")));
  json_decref(root);
  free(text);
  ff_farm_free(farm);
}

/* lvchange --addtag/--deltag on a raid LV changes its tags only: the
 * rmetas keep the ones it was created with (seen with real lvchange). */
static void
test_lvchange_tags(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ pvs = 2; device_size = \"64M\";\n"
    " changes = ({ command = \"lvchange\"; lv = \"lv\"; addtag = [\"b\"]; },"
    " { command = \"lvchange\"; lv = \"lv\"; deltag = [\"a\"]; });\n"
    " lvs = ({ name = \"lv\"; type = \"raid1\"; tags = [\"a\"]; size = "
    "\"8M\"; }); });");
  const struct ff_vg *vg = &farm->vgs[0];
  const char *t;

  (void)state;
  assert_int_equal(vg->seqno, 5);
  t = vg->texts[3].buf;
  assert_non_null(strstr(t, "\nlv {\nid = "));
  assert_non_null(strstr(strstr(t, "\nlv {"), "tags = [\"a\", \"b\"]\n"));
  assert_non_null(strstr(strstr(t, "\nlv_rmeta_0 {"), "tags = [\"a\"]\n"));
  t = vg->texts[4].buf;
  assert_true(strstr(t, "tags = [\"b\"]\n") < strstr(t, "\nlv_rimage_0 {"));
  assert_non_null(strstr(strstr(t, "\nlv_rmeta_1 {"), "tags = [\"a\"]\n"));
  ff_farm_free(farm);
}

/* A name that could be a sub-LV's is refused, as lvcreate refuses it. */
static void
test_reserved_names(void **state)
{
  struct ff_spec *sp = ff_spec_load_string(
    "vgs = ({ pvs = 2; lvs = ({ name = \"lv\"; type = \"raid1\"; size = "
    "\"8M\"; },\n { name = \"lv_rimage_0\"; size = \"4M\"; }); });",
    "t");
  struct ff_farm *farm;

  (void)state;
  assert_nonnull_err(sp);
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  assert_null(farm);
  assert_string_equal(ff_errmsg(),
                      "t:2: vgs.[0].lvs.[1]: LV name 'lv_rimage_0': lvm "
                      "refuses it: Names including \"_rimage\" are reserved");
}

/* The footer time of write w (1-based) of the first VG. */
static int
footer_time(const struct ff_farm *farm, uint32_t w)
{
  const char *t = farm->vgs[0].texts[w - 1].buf, *last = NULL;

  while ((t = strstr(t, "\ncreation_time = ")))
    last = t++;
  return last ? atoi(last + 17) : -1;
}

/* --raidintegrity: one write per _imeta LV (each made by its own
 * lvcreate, its time), then the layers and the cleared flag; every write
 * its own time from write_times; _iorig LVs made for the layers' write. */
static void
test_integrity_writes(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ pvs = 2; time = 5; lvs = ({ name = \"r\"; type = \"raid1\"; "
    "size = \"8M\";\n raidintegrity = true; write_times = [10, 11, 12, 13, "
    "14, 15]; }); });");
  const struct ff_vg *vg = &farm->vgs[0];

  (void)state;
  assert_int_equal(vg->seqno, 7);
  for (uint32_t w = 2; w <= 7; w++)
    assert_int_equal(footer_time(farm, w), (int)w + 8);
  assert_int_equal(ff_test_lv(vg, "r_rimage_0_imeta")->time, 12);
  assert_int_equal(ff_test_lv(vg, "r_rimage_1_imeta")->time, 13);
  assert_int_equal(ff_test_lv(vg, "r_rimage_1_iorig")->time, 14);
  /* seqno 5 (the lvcreate's write 4) shows both _imeta LVs and no layer
   * yet; 6 the layers recalculating, 7 not */
  assert_non_null(strstr(vg->texts[4].buf, "r_rimage_1_imeta {"));
  assert_null(strstr(vg->texts[4].buf, "_iorig"));
  assert_non_null(strstr(vg->texts[5].buf, "recalculate = 1"));
  assert_null(strstr(vg->texts[6].buf, "recalculate"));
  assert_non_null(
    strstr(vg->texts[6].buf, "Write[6] from lvcreate --type raid1"));
  ff_farm_free(farm);
  /* the extents of an _imeta LV rounded down: 8 MiB of metadata for 8
   * MiB of data in 16 MiB extents is none, which lvm fails on */
  {
    static const struct ff_test_bad bad[] = {
      {"vgs = ({ pvs = 2; extent_size = \"16M\"; lvs = ({ type = "
       "\"raid1\"; size = \"16M\";\n raidintegrity = true; }); });",
       "t:1: vgs.[0].lvs.[0]", "is less than one extent"},
      /* lvm puts each _imeta on its image's PV */
      {"vgs = ({ pvs = 2; device_size = \"16M\"; lvs = ({ type = "
       "\"raid1\"; size = \"8M\";\n raidintegrity = true; }); });",
       "t:1: vgs.[0].lvs.[0]: LV lvol0: lvm refuses it: Insufficient free "
       "space: 2 extents needed, but only 0 available",
       "lvol0_rimage_0_imeta goes on the PV of lvol0_rimage_0"},
    };

    ff_test_refused(bad, sizeof bad / sizeof *bad, 1);
  }
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_raid1_writes),
    cmocka_unit_test(test_mirror_writes),
    cmocka_unit_test(test_nosync_log),
    cmocka_unit_test(test_alloc),
    cmocka_unit_test(test_raid0),
    cmocka_unit_test(test_writes_defaults),
    cmocka_unit_test(test_region_size),
    cmocka_unit_test(test_reserved_names),
    cmocka_unit_test(test_lvchange_tags),
    cmocka_unit_test(test_manifest),
    cmocka_unit_test(test_integrity_writes),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
