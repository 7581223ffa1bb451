/* The farm spec parser: good specs, and a table of bad ones with the
 * message each must give (file:line: key: what was expected). */
#include "ff-test.h"
#include "ff-bytes.h"
#include "ff-farm-int.h"
#include "ff-spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
test_defaults(void **state)
{
  struct ff_spec *sp = ff_spec_load_string("vgs = ({ lvs = ({ fill = 1; }); "
                                           "});",
                                           "t");

  (void)state;
  assert_nonnull_err(sp);
  assert_int_equal(sp->seed, 0);
  assert_string_equal(sp->device_name, "pv%04u");
  assert_int_equal(sp->device_size, 1u << 30);
  assert_int_equal(sp->nvgs, 1);
  assert_int_equal(sp->vgs[0].count, 1);
  assert_int_equal(sp->vgs[0].pvs, 1);
  assert_int_equal(sp->vgs[0].extent_size, 4u << 20);
  assert_int_equal(sp->vgs[0].fmt.pe_start, 1u << 20);
  assert_int_equal(sp->vgs[0].fmt.mda_size, 1044480);
  assert_int_equal(sp->vgs[0].fmt.mda_copies, 1);
  assert_int_equal(sp->vgs[0].fmt.label_sector, 1);
  assert_int_equal(sp->vgs[0].history, -1);
  assert_int_equal(sp->vgs[0].lvs[0].stripes, 1);
  assert_true(sp->vgs[0].lvs[0].fill == 1.0);
  ff_spec_free(sp);
}

/* mda_copies per PV and vg_mda_copies: the spec's values, the labels
 * (no mda location on a PV without one), the text's metadata_copies and
 * the extents of a PV with mda1 (issue 33). */
static void
test_mdas(void **state)
{
  struct ff_spec *sp = ff_spec_load_string(
    "device_size = \"64M\";\n"
    "vgs = ({ count = 2; pvs = 3; mda_copies = [0, 2, 1]; vg_mda_copies = 5;"
    " },\n"
    "  { name = \"all\"; vg_mda_copies = \"all\"; });\n"
    "orphans = ({ mda_copies = 0; });",
    "t");
  struct ff_farm *farm;
  uint8_t lab[1024];
  char *text;

  (void)state;
  assert_nonnull_err(sp);
  assert_int_equal(sp->vgs[0].fmt.mda_copies, 2);
  assert_non_null(sp->vgs[0].pv_mdas);
  assert_int_equal(sp->vgs[0].pv_mdas[0], 0);
  assert_int_equal(sp->vgs[0].pv_mdas[1], 2);
  assert_int_equal(sp->vgs[0].pv_mdas[2], 1);
  assert_int_equal(sp->vgs[0].vg_mdas, 5);
  assert_int_equal(sp->vgs[1].vg_mdas, 0); /* "all": written unmanaged */
  assert_null(sp->vgs[1].pv_mdas);
  assert_int_equal(sp->others[0].fmt.mda_copies, 0);
  ff_spec_free(sp);

  sp = ff_spec_load_string("device_size = \"65M\";\n"
                           "vgs = ({ count = 2; pvs = 3; mda_copies = [0, 2, "
                           "1]; vg_mda_copies = 5; });\n"
                           "orphans = ({ mda_copies = 0; });",
                           "t");
  assert_nonnull_err(sp);
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  assert_nonnull_err(farm);
  assert_int_equal(ff_farm_ndevs(farm), 7);
  /* PV 0 of each VG, and the orphan: the mda list is the terminator, the
   * extension follows at 0x278 */
  for (uint32_t d = 0; d < 7; d += 3) {
    assert_int_equal(ff_farm_read(farm, d, lab, 0, 1024), 0);
    assert_memory_equal(lab + 512, "LABELONE", 8);
    assert_int_equal(ff_get_le64(lab + 0x248), 1u << 20); /* pe_start */
    assert_int_equal(ff_get_le64(lab + 0x268), 0);        /* no mda: the */
    assert_int_equal(ff_get_le64(lab + 0x270), 0);        /* terminator */
    assert_int_equal(ff_get_le32(lab + 0x278), 2);        /* extension */
    assert_int_equal(ff_get_le32(lab + 0x27c), d < 6 ? 1 : 0); /* used */
  }
  /* PV 1: mda0 and mda1; PV 2: mda0 only */
  assert_int_equal(ff_farm_read(farm, 1, lab, 0, 1024), 0);
  assert_int_equal(ff_get_le64(lab + 0x268), 4096);
  assert_int_equal(ff_get_le64(lab + 0x278), 67108864);
  assert_int_equal(ff_farm_read(farm, 2, lab, 0, 1024), 0);
  assert_int_equal(ff_get_le64(lab + 0x268), 4096);
  assert_int_equal(ff_get_le64(lab + 0x278), 0);
  /* the VG's text: metadata_copies = 5; PV 1 has 15 extents, the others
   * 16 (64 MiB after pe_start; mda1 takes the last) */
  assert_int_equal(farm->vgs[0].mda_copies, 5);
  assert_int_equal(farm->vgs[0].pvs[0].pe_count, 16);
  assert_int_equal(farm->vgs[0].pvs[1].pe_count, 15);
  assert_int_equal(farm->vgs[0].pvs[2].pe_count, 16);
  text = farm->vgs[0].texts[0].buf;
  assert_non_null(strstr(text, "\nmetadata_copies = 5\n"));
  ff_farm_free(farm);

  /* vg_mda_copies 2 of 4 mdas, lvm's choice named: the ignored ones keep
   * write 1 (seqno 1) with RAW_LOCN_IGNORED, the others the last write */
  sp = ff_spec_load_string(
    "device_size = \"64M\";\n"
    "vgs = ({ pvs = 3; mda_copies = [1, 2, 1]; vg_mda_copies = 2;\n"
    "  ignored_mdas = [\"1:1\", \"2:0\"]; lvs = ({ size = \"8M\"; }); });",
    "t");
  assert_nonnull_err(sp);
  assert_int_equal(sp->vgs[0].pv_ignored[0], 0);
  assert_int_equal(sp->vgs[0].pv_ignored[1], 2);
  assert_int_equal(sp->vgs[0].pv_ignored[2], 1);
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  assert_nonnull_err(farm);
  {
    static const struct {
      uint32_t dev;
      uint64_t at;
      int ignored;
    } mdah[] = {{0, 4096, 0}, {1, 4096, 0}, {1, 66060288, 1}, {2, 4096, 1}};
    uint8_t h[512];

    for (size_t i = 0; i < sizeof mdah / sizeof *mdah; i++) {
      const struct ff_text *t = &farm->vgs[0].texts[mdah[i].ignored ? 0 : 1];

      assert_int_equal(ff_farm_read(farm, mdah[i].dev, h, mdah[i].at, 512), 0);
      assert_memory_equal(h + 4, " LVM2 x[5A%r0N*>", 16);
      assert_int_equal(ff_get_le64(h + 48), t->size);
      assert_int_equal(ff_get_le32(h + 56), t->crc);
      assert_int_equal(ff_get_le32(h + 60), mdah[i].ignored);
    }
  }
  ff_farm_free(farm);
}

/* system IDs, max_lv, max_pv, the VG's alloc and the LV flags (issue 33):
 * the spec's values and the text lvm writes of them (test-byte-identical
 * s0-s2, x0-x2, y0-y1 compare them with lvm's). */
static void
test_vg_keys(void **state)
{
  struct ff_spec *sp = ff_spec_load_string(
    "device_size = \"64M\"; system_id = \"hostA\";\n"
    "vgs = ({ pvs = 2; max_lv = 3; max_pv = 4; alloc = \"cling\";\n"
    "  lvs = ({ name = \"ro\"; size = \"4M\"; permission = \"r\";\n"
    "           activation_skip = true; read_ahead = 100; },\n"
    "         { name = \"fm\"; size = \"4M\"; minor = 7; major = 0;\n"
    "           activation_skip = true; read_ahead = \"none\"; },\n"
    "         { name = \"ra\"; size = \"4M\"; read_ahead = \"128K\";\n"
    "           alloc = \"inherit\"; }); },\n"
    "  { name = \"plain\"; system_id = \"\"; },\n"
    "  { name = \"other\"; system_id = \"b.c-d_e+f\"; });",
    "t");
  struct ff_farm *farm;
  const char *text;

  (void)state;
  assert_nonnull_err(sp);
  assert_string_equal(sp->system_id, "hostA");
  assert_string_equal(sp->vgs[0].system_id, "hostA"); /* the host's */
  assert_null(sp->vgs[1].system_id);                  /* --systemid "" */
  assert_string_equal(sp->vgs[2].system_id, "b.c-d_e+f");
  assert_int_equal(sp->vgs[0].max_lv, 3);
  assert_int_equal(sp->vgs[0].max_pv, 4);
  assert_int_equal(sp->vgs[0].alloc, FF_ALLOC_CLING);
  assert_int_equal(sp->vgs[0].lvs[0].readonly, 1);
  assert_int_equal(sp->vgs[0].lvs[0].read_ahead, 96); /* lvm: 4K pages */
  assert_int_equal(sp->vgs[0].lvs[1].read_ahead, -1);
  assert_int_equal(sp->vgs[0].lvs[1].fixed_minor, 1);
  assert_int_equal(sp->vgs[0].lvs[2].read_ahead, 256);
  assert_int_equal(sp->vgs[0].lvs[2].alloc, FF_ALLOC_INHERIT);
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  assert_nonnull_err(farm);
  text = farm->vgs[0].texts[farm->vgs[0].seqno - 1].buf;
  assert_non_null(strstr(text, "status = [\"RESIZEABLE\", \"READ\"]\n"
                               "flags = [\"WRITE_LOCKED\"]\n"
                               "system_id = \"hostA\"\n"));
  assert_non_null(strstr(text, "max_lv = 3\nmax_pv = 4\n\n"
                               "allocation_policy = \"cling\"\n"
                               "metadata_copies = 0\n"));
  assert_non_null(strstr(text, "status = [\"READ\", \"VISIBLE\"]\n"
                               "flags = [\"ACTIVATION_SKIP\"]\n"));
  assert_non_null(strstr(text, "read_ahead = 96\nsegment_count"));
  assert_non_null(strstr(text,
                         "status = [\"READ\", \"FIXED_MINOR\", \"VISIBLE\"]\n"
                         "flags = [\"WRITE_LOCKED\", \"ACTIVATION_SKIP\"]\n"));
  assert_non_null(
    strstr(text, "read_ahead = -1\nmajor = 0\nminor = 7\nsegment_count"));
  assert_non_null(strstr(text, "read_ahead = 256\nsegment_count"));
  assert_non_null(strstr(text, "creation_host_system_id = \"hostA\"\n"));
  /* no system ID: WRITE as usual, the host's still in the footer */
  text = farm->vgs[1].texts[0].buf;
  assert_non_null(strstr(text, "status = [\"RESIZEABLE\", \"READ\", "
                               "\"WRITE\"]\nflags = []\nextent_size"));
  assert_non_null(strstr(text, "creation_host_system_id = \"hostA\"\n"));
  ff_farm_free(farm);
}

/* configs/nomda-10000.conf: 10,000 PVs, 9000 of them without a metadata
 * area, in 1000 VGs of 10. */
static void
test_nomda_config(void **state)
{
  char path[4200];
  struct ff_spec *sp;
  struct ff_farm *farm;
  unsigned none = 0, with = 0;

  (void)state;
  snprintf(path, sizeof path, "%s/configs/nomda-10000.conf", ff_test_srcdir());
  sp = ff_spec_load_file(path);
  assert_nonnull_err(sp);
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  assert_nonnull_err(farm);
  assert_int_equal(ff_farm_ndevs(farm), 10000);
  assert_int_equal(ff_farm_nvgs(farm), 1000);
  for (uint32_t v = 0; v < farm->nvgs; v++)
    for (uint32_t p = 0; p < farm->vgs[v].npvs; p++)
      if (farm->vgs[v].pvs[p].nmdas)
        with++;
      else
        none++;
  assert_int_equal(none, 9000);
  assert_int_equal(with, 1000);
  ff_farm_free(farm);
}

static void
test_full(void **state)
{
  static const char text[] =
    "seed = 7; device_name = \"d%03u\"; device_size = \"1T\";\n"
    "device_hint = \"/dev/mapper/%s\"; creation_host = \"h\";\n"
    "uname = \"Linux h 1 #1 x86_64\"; creation_time = 1000;\n"
    "lvm_version = \"2.03.99\";\n"
    "vgs = ({ count = 3; name = \"g%u\"; pvs = 4; device_size = \"2G\";\n"
    "  extent_size = \"8M\"; pe_start = \"2M\"; mda_size = \"1M\";\n"
    "  mda_copies = 2; label_sector = 0; seqno = 9; history = 2;\n"
    "  time = 5; description = \"d\"; damage = \"stale-metadata\";\n"
    "  lvs = ({ count = 2; name = \"l%u\"; type = \"striped\"; stripes = 4;\n"
    "           stripe_size = \"128K\"; size = \"64M\"; time = 6; }); });\n"
    "orphans = ({ count = 2; mda_copies = 2; damage = \"bad-label-crc\"; });\n"
    "blanks = ({ count = 1; devices = [\"zero\"]; });\n"
    "signatures = ({ type = \"xfs\"; }, { type = \"md\"; count = 2; });\n";
  struct ff_spec *sp = ff_spec_load_string(text, "t");

  (void)state;
  assert_nonnull_err(sp);
  assert_int_equal(sp->seed, 7);
  assert_int_equal(sp->device_size, 1ull << 40);
  assert_int_equal(sp->vgs[0].count, 3);
  assert_int_equal(sp->vgs[0].fmt.mda_size, 1u << 20);
  assert_int_equal(sp->vgs[0].fmt.mda_copies, 2);
  assert_int_equal(sp->vgs[0].seqno, 9);
  assert_int_equal(sp->vgs[0].history, 2);
  assert_int_equal(sp->vgs[0].damage, FF_DMG_STALE);
  assert_int_equal(sp->vgs[0].lvs[0].stripes, 4);
  assert_int_equal(sp->vgs[0].lvs[0].stripe_size, 128 * 1024);
  assert_int_equal(sp->vgs[0].lvs[0].size, 64u << 20);
  assert_int_equal(sp->nothers, 4);
  assert_int_equal(sp->others[0].kind, FF_OTHER_ORPHAN);
  assert_int_equal(sp->others[0].damage, FF_DMG_LABEL_CRC);
  assert_int_equal(sp->others[1].kind, FF_OTHER_BLANK);
  assert_string_equal(sp->others[1].devices[0], "zero");
  assert_int_equal(sp->others[2].sig, FF_SIG_XFS);
  assert_int_equal(sp->others[3].count, 2);
  ff_spec_free(sp);
}

/* Bad specs: each must fail, and the message must contain both the
 * location and the words that say what was wrong. */
static const struct {
  const char *text;
  const char *want1, *want2;
} bad[] = {
  {"colour = 1;", "t:1: colour: unknown key", "expected one of: seed"},
  {"seed = ;", "t:1: syntax error", ""},
  {"vgs = ({ pvs = 0; });", "t:1: vgs.[0].pvs", "out of range"},
  {"vgs = ({ bogus = 1; });", "vgs.[0].bogus: unknown key", "lvs"},
  {"vgs = ({ extent_size = \"3M\"; });", "vgs.[0].extent_size", "power of 2"},
  {"vgs = ({ extent_size = \"4Q\"; });", "vgs.[0].extent_size",
   "unknown unit 'Q'"},
  {"vgs = ({ extent_size = 4.5; });", "vgs.[0].extent_size",
   "expected a size"},
  {"vgs = ({ count = 2; name = \"fixed\"; });", "vgs.[0].name",
   "has no %u but the group makes 2"},
  {"vgs = ({ name = \"v%s\"; });", "vgs.[0].name", "unsupported conversion"},
  /* asprintf once allocated a gigabyte for this name (found by review). */
  {"vgs = ({ name = \"v%0999999999u\"; });", "t:1: vgs.[0].name",
   "'v%0999999999u' has a field width of 999999999 (at most 127)"},
  {"device_hint = \"/dev/%200s\";", "t:1: device_hint", "field width of 200"},
  {"vgs = ({ count = 2; uuid = \"wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5\"; });",
   "vgs.[0].uuid", "needs count = 1"},
  {"vgs = ({ uuid = \"short\"; });", "vgs.[0].uuid", "expected 32"},
  {"vgs = ({ uuid = \"wJ1fvV-xxNA-dvRX-wDUP-mNTo-wXFQ-GKLk_5\"; });",
   "vgs.[0].uuid", "invalid character '_'"},
  {"vgs = ({ pvs = 2; devices = [\"a\"]; });", "vgs.[0].devices",
   "has 1 entries (expected 2)"},
  {"vgs = ({ damage = \"bad-label-crc\"; });", "vgs.[0].damage",
   "needs pvs >= 2"},
  {"vgs = ({ damage = \"on-fire\"; });", "vgs.[0].damage",
   "unknown damage 'on-fire'"},
  /* mda_copies, vg_mda_copies: lvm's words where lvm refuses */
  {"vgs = ({ mda_copies = 3; });",
   "t:1: vgs.[0].mda_copies: 3: lvm refuses "
   "it (\"Invalid argument for --pvmetadatacopies: 3\"; it takes 0, 1 or 2)",
   ""},
  {"vgs = ({ pvs = 2; mda_copies = [1]; });",
   "t:1: vgs.[0].mda_copies: has 1 entries (expected 2, one per PV of the "
   "VG)",
   ""},
  {"vgs = ({ pvs = 2;\n mda_copies = [1, 5]; });",
   "t:2: vgs.[0].mda_copies: entry 1: 5: lvm refuses it", ""},
  {"vgs = ({ pvs = 2; mda_copies = (1, \"x\"); });",
   "t:1: vgs.[0].mda_copies: entry 1: expected an integer (0, 1 or 2)", ""},
  {"vgs = ({ pvs = 2; mda_copies = [0, 0]; });",
   "t:1: vgs.[0].mda_copies: no PV of the VG has a metadata area: lvm "
   "refuses it (\"Aborting vg_write: No metadata areas to write to!\")",
   ""},
  {"vgs = ({ mda_copies = 0; });", "t:1: vgs.[0].mda_copies: no PV", ""},
  {"orphans = ({ mda_copies = [1]; });",
   "t:1: orphans.[0].mda_copies: expected an integer (0, 1 or 2; a list, "
   "one per PV, only in a VG group)",
   ""},
  {"vgs = ({ pvs = 2; mda_copies = [1, 0]; metadatasize = \"4M\"; });",
   "t:1: vgs.[0].mda_copies: PV 1 has no metadata area: pvcreate "
   "--pvmetadatacopies 0 puts its pe_start at 1048576, the PVs with one at "
   "5242880",
   "not supported"},
  {"vgs = ({ pvs = 2; mda_copies = [1, 0]; damage = \"bad-mda-checksum\"; "
   "});",
   "t:1: vgs.[0].damage: bad-mda-checksum damages the last PV's metadata "
   "area, and it has none",
   ""},
  {"vgs = ({ pvs = 2; mda_copies = [0, 1]; damage = \"missing-pv\"; });",
   "t:1: vgs.[0].damage: missing-pv damages the last PV, and only it has "
   "metadata areas",
   ""},
  {"orphans = ({ mda_copies = 0; damage = \"bad-mda-checksum\"; });",
   "t:1: orphans.[0].damage: bad-mda-checksum damages mda0, and "
   "mda_copies 0 makes none",
   ""},
  {"vgs = ({ pvs = 3; mda_copies = [2, 1, 0]; vg_mda_copies = 2; });",
   "t:1: vgs.[0].vg_mda_copies: 2 is less than the VG's 3 metadata areas: "
   "vgcreate marks 1 of them ignored, chosen at random",
   "name the ones lvm chose in ignored_mdas"},
  {"vgs = ({ pvs = 3; vg_mda_copies = 1; ignored_mdas = [\"0:0\"]; });",
   "t:1: vgs.[0].ignored_mdas: has 1 entries, but vg_mda_copies 1 of the "
   "VG's 3 metadata areas leaves 2 ignored",
   ""},
  {"vgs = ({ pvs = 2; ignored_mdas = [\"0:0\"]; });",
   "t:1: vgs.[0].ignored_mdas: has 1 entries, but vg_mda_copies 0", ""},
  {"vgs = ({ pvs = 2; vg_mda_copies = 1; ignored_mdas = [\"0:1\"]; });",
   "t:1: vgs.[0].ignored_mdas: entry 0: '0:1': the VG has no such metadata "
   "area (PV 0 has 1)",
   ""},
  {"vgs = ({ pvs = 3; vg_mda_copies = 1; ignored_mdas = [\"2:0\", "
   "\"2:0\"]; });",
   "t:1: vgs.[0].ignored_mdas: entry 1: '2:0' is given twice", ""},
  {"vgs = ({ pvs = 2; vg_mda_copies = 1; ignored_mdas = [\"1\"]; });",
   "t:1: vgs.[0].ignored_mdas: entry 0: expected \"PV:MDA\"", ""},
  {"vgs = ({ vg_mda_copies = \"most\"; });",
   "t:1: vgs.[0].vg_mda_copies: 'most': lvm refuses it (\"Invalid argument "
   "for --vgmetadatacopies: most\"",
   ""},
  {"vgs = ({ vg_mda_copies = -1; });",
   "t:1: vgs.[0].vg_mda_copies: -1 is out of range", ""},
  {"vgs = ({ vg_mda_copies = 1.5; });",
   "t:1: vgs.[0].vg_mda_copies: expected an integer, \"all\" or "
   "\"unmanaged\"",
   ""},
  /* system IDs, max_lv/max_pv, alloc, the LV flags (issue 33) */
  {"system_id = \"$$\";",
   "t:1: system_id: '$$': lvm refuses it (\"Invalid system ID format: $$\")",
   ""},
  {"vgs = ({ system_id = \"a b\"; });",
   "t:1: vgs.[0].system_id: 'a b': lvm would write it as 'ab'", ""},
  {"vgs = ({ system_id = \"localhost1\"; });",
   "t:1: vgs.[0].system_id: 'localhost1': lvm refuses it",
   "may not begin with the string"},
  {"vgs = ({ pvs = 3; max_pv = 2; });",
   "t:1: vgs.[0].max_pv: 2 is below the VG's 3 PVs", "holds max 2"},
  {"vgs = ({ max_lv = 1; lvs = ({ count = 2; size = \"4M\"; }); });",
   "t:1: vgs.[0].max_lv: 1 is below the VG's 2 LVs",
   "Maximum number of logical volumes (1) reached"},
  {"vgs = ({ max_lv = -1; });", "t:1: vgs.[0].max_lv: -1 is out of range", ""},
  {"vgs = ({ alloc = \"inherit\"; });",
   "t:1: vgs.[0].alloc: lvm refuses inherit for a VG",
   "cannot inherit from anything"},
  {"vgs = ({ alloc = \"nearest\"; });",
   "t:1: vgs.[0].alloc: unknown allocation policy 'nearest'",
   "Unrecognised allocation policy nearest"},
  {"vgs = ({ lvs = ({ size = \"4M\"; permission = \"w\"; }); });",
   "t:1: vgs.[0].lvs.[0].permission: 'w' is not a permission", ""},
  {"vgs = ({ lvs = ({ size = \"4M\"; minor = 1048576; }); });",
   "t:1: vgs.[0].lvs.[0].minor: lvm refuses it (\"Minor number 1048576 "
   "outside range 0-1048575.\")",
   ""},
  {"vgs = ({ lvs = ({ size = \"4M\"; minor = 1; major = 4096; }); });",
   "t:1: vgs.[0].lvs.[0].major: lvm refuses it (\"Major number 4096 "
   "outside range 0-4095.\")",
   ""},
  {"vgs = ({ lvs = ({ size = \"4M\"; major = 253; }); });",
   "t:1: vgs.[0].lvs.[0].major: major needs minor", ""},
  {"vgs = ({ lvs = ({ size = \"4M\"; read_ahead = \"100b\"; }); });",
   "t:1: vgs.[0].lvs.[0].read_ahead: 100b is not a whole number of sectors",
   ""},
  {"vgs = ({ pvs = 2; lvs = ({ size = \"4M\"; type = \"raid1\"; "
   "activation_skip = true; }); });",
   "t:1: vgs.[0].lvs.[0].activation_skip: activation_skip is supported for "
   "linear and striped LVs only",
   ""},
  {"vgs = ({ mda_size = \"2M\"; });", "vgs.[0].mda_size",
   "would overlap the data area"},
  {"vgs = ({ pe_start = 1000; });", "vgs.[0].pe_start",
   "not a multiple of 512"},
  /* 4096 + 2^64 - 512 wrapped and passed the check (found by review). */
  {"vgs = ({ mda_size = \"36028797018963967s\"; });", "vgs.[0].mda_size",
   "mda0 [4096, 18446744073709551615) would overlap"},
  {"orphans = ({ pe_start = \"9E\"; mda_size = \"8E\"; mda_copies = 2;\n"
   "  device_size = \"1E\"; });",
   "t:1: orphans.[0]: device_size 1152921504606846976 is too small",
   "pe_start 10376293541461622784"},
  {"vgs = ({ device_size = \"1M\"; });", "vgs.[0].device_size", "too small"},
  {"vgs = ({ lvs = ({ }); });", "vgs.[0].lvs.[0]",
   "exactly one of size and fill (neither is set)"},
  {"vgs = ({ lvs = ({ size = \"1G\"; fill = 0.5; }); });", "vgs.[0].lvs.[0]",
   "both are set"},
  {"vgs = ({ lvs = ({ fill = 1.5; }); });", "vgs.[0].lvs.[0].fill",
   "out of range"},
  {"vgs = ({ lvs = ({ type = \"raid7\"; fill = 1; }); });",
   "vgs.[0].lvs.[0].type", "unknown LV type 'raid7'"},
  /* mirror and raid */
  {"vgs = ({ lvs = ({ type = \"raid5\"; fill = 1; }); });",
   "t:1: vgs.[0].lvs.[0]",
   "raid5 makes 3 images, each on its own PV, and the group has 1 PV"},
  {"vgs = ({ pvs = 3; lvs = ({ type = \"raid5\"; mirrors = 2; size = 8388608; "
   "}); "
   "});",
   "t:1: vgs.[0].lvs.[0].mirrors", "raid5 takes no mirrors"},
  {"vgs = ({ pvs = 3; lvs = ({ type = \"raid0_meta\"; mirrors = 1; size = "
   "8388608; }); });",
   "t:1: vgs.[0].lvs.[0].mirrors",
   "lvm refuses it: Mirror argument cannot be used with segment type, "
   "raid0_meta"},
  {"vgs = ({ pvs = 3; lvs = ({ type = \"raid0\"; stripes = 1; size = "
   "8388608; }); });",
   "t:1: vgs.[0].lvs.[0].stripes",
   "lvm refuses it: Minimum of 2 stripes required for raid0."},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"raid0\"; stripes = 3; size = "
   "8388608; }); });",
   "t:1: vgs.[0].lvs.[0]",
   "raid0 makes 3 images, each on its own PV, and the group has 2 PVs"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"raid0\"; write_times = [1, 2]; "
   "size = 8388608; }); });",
   "vgs.[0].lvs.[0].write_times", "a raid0 LV makes one write"},
  {"vgs = ({ pvs = 4; lvs = ({ type = \"raid10\"; mirrors = 2; size = "
   "8388608; }); "
   "});",
   "vgs.[0].lvs.[0].mirrors", "out of range"},
  {"vgs = ({ pvs = 9; lvs = ({ type = \"mirror\"; mirrors = 8; size = "
   "8388608; }); "
   "});",
   "vgs.[0].lvs.[0].mirrors", "out of range"},
  {"vgs = ({ pvs = 3; lvs = ({ type = \"raid1\"; stripes = 2; size = 8388608; "
   "}); "
   "});",
   "vgs.[0].lvs.[0].stripes", "raid1 takes no stripes"},
  {"vgs = ({ pvs = 5; lvs = ({ type = \"raid6\"; stripes = 2; size = 8388608; "
   "}); "
   "});",
   "vgs.[0].lvs.[0].stripes", "out of range"},
  {"vgs = ({ pvs = 3; lvs = ({ type = \"raid4\"; stripe_size = \"3K\"; size "
   "= 8388608; }); });",
   "vgs.[0].lvs.[0].stripe_size", "not a power of 2"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"raid1\"; region_size = 1000; size = "
   "8388608; }); });",
   "vgs.[0].lvs.[0].region_size", "Region size must be a power of 2"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"mirror\"; region_size = \"2K\"; size "
   "= 8388608; }); });",
   "vgs.[0].lvs.[0].region_size",
   "2048: lvm refuses it: Region size must be a multiple of machine memory "
   "page size (4096 bytes)"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"mirror\"; mirror_log = \"mirrored\"; "
   "size = 8388608; }); });",
   "vgs.[0].lvs.[0].mirror_log", "Log type \"mirrored\" is DEPRECATED"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"mirror\"; mirror_log = \"ram\"; size "
   "= 8388608; }); });",
   "vgs.[0].lvs.[0].mirror_log", "unknown mirror log 'ram'"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"raid1\"; mirror_log = \"core\"; size "
   "= 8388608; }); });",
   "vgs.[0].lvs.[0].mirror_log", "raid1 has no mirror log"},
  {"vgs = ({ pvs = 5; lvs = ({ type = \"raid6\"; nosync = true; size = "
   "8388608; }); "
   "});",
   "vgs.[0].lvs.[0].nosync", "nosync option prohibited on RAID6"},
  {"vgs = ({ lvs = ({ nosync = true; size = 8388608; }); });",
   "vgs.[0].lvs.[0].nosync", "needs type = \"mirror\" or a raid type"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"raid1\"; uuids = [\"a\"]; size = "
   "8388608; "
   "}); });",
   "vgs.[0].lvs.[0].uuids", "has 1 entries (expected 4)"},
  {"vgs = ({ pvs = 2; lvs = ({ count = 2; type = \"mirror\"; uuids = []; "
   "size = 8388608; }); });",
   "vgs.[0].lvs.[0].uuids", "needs count = 1"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"mirror\"; mirror_log = \"core\"; "
   "write_times = [1, 2]; size = 8388608; }); });",
   "vgs.[0].lvs.[0].write_times", "core log makes one write"},
  {"vgs = ({ lvs = ({ descriptions = [\"a\", \"b\"]; size = 8388608; }); });",
   "vgs.[0].lvs.[0].descriptions", "a linear LV makes one write"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"raid1\"; write_times = [1]; size = "
   "8388608; }); });",
   "vgs.[0].lvs.[0].write_times",
   "has 1 entries (expected 2 (write 1 and "
   "write 2"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"raid1\"; descriptions = [1, 2]; size "
   "= 8388608; }); });",
   "vgs.[0].lvs.[0].descriptions", "entry 0 is not a string"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"raid1\"; size = 8388608;\n"
   "  placement = ( [\"0:0\"] ); }); });",
   "t:2: vgs.[0].lvs.[0].placement", "not supported for type raid1"},
  {"vgs = ({ pvs = 2; seqno = 2; lvs = ({ type = \"raid1\"; size = 8388608; "
   "}); "
   "});",
   "vgs.[0].seqno", "is below 1 + LVs + changes = 3"},
  {"vgs = ({ lvs = ({ stripes = 2; fill = 1; }); });",
   "vgs.[0].lvs.[0].stripes", "need type = \"striped\""},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"striped\"; stripes = 3; fill = 1; "
   "}); });",
   "vgs.[0].lvs.[0]", "3 stripes need at least 3 PVs"},
  {"vgs = ({ lvs = ({ type = \"striped\"; stripe_size = \"3K\"; fill = 1; "
   "}); });",
   "stripe_size", "power of 2"},
  {"vgs = ({ seqno = 1; lvs = ({ fill = 1; }); });", "vgs.[0].seqno",
   "below 1 + LVs"},
  {"vgs = ({ pvs = 2; damage = \"stale-metadata\"; });", "vgs.[0]",
   "stale-metadata needs seqno >= 2"},
  {"vgs = { pvs = 1; };", "vgs", "expected a list of groups"},
  {"vgs = ( 5 );", "vgs.[0]", "expected a group"},
  {"orphans = ({ damage = \"missing-pv\"; });", "orphans.[0].damage",
   "none, bad-label-crc or bad-mda-checksum"},
  {"blanks = ({ pe_start = 0; });", "blanks.[0].pe_start", "unknown key"},
  {"signatures = ({ count = 1; });", "signatures.[0].type", "missing"},
  {"signatures = ({ type = \"ntfs\"; });", "signatures.[0].type",
   "unknown signature 'ntfs'"},
  {"signatures = ({ type = \"xfs\"; device_size = \"1M\"; });",
   "signatures.[0].device_size", "too small for xfs"},
  {"device_name = \"dev\";", "device_name", "needs one %u"},
  {"device_hint = \"/dev/x\";", "device_hint", "exactly one %s"},
  {"device_size = 1000;", "device_size", "not a positive multiple of 512"},
  {"creation_time = \"now\";", "creation_time", "expected an integer"},
  {"seed = 1;\n\nvgs = ({\n  pvs = 2;\n  bad = 1; });", "t:5: vgs.[0].bad",
   "unknown key"},
  /* libconfig 1.5 would truncate these to 32 bits or saturate them. */
  {"seed = 1;\ndevice_size = 4294967296;",
   "t:2: syntax error: integer 4294967296 is out of range", "4294967296L"},
  {"seed = 99999999999999999999;", "t:1: syntax error",
   "99999999999999999999 is out of range (at most 64 bits)"},
  {"seed = 0x80000000;", "t:1: syntax error", "0x80000000L"},
  {"seed = 99999999999999999999L;", "t:1: syntax error", "at most 64 bits"},
  {"device_size = \"1.5G\";", "t:1: device_size", "not a whole number"},
  {"seed = ;", "t:1: syntax error (expected settings such as key = value", ""},
  /* A later list of the wrong type once freed the earlier ones' groups
   * through a NULL array (found by fuzz-spec). */
  {"orphans = ({ count = 1; });\nblanks = 1;", "t:2: blanks",
   "expected a list of groups"},
};

static void
test_bad(void **state)
{
  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct ff_spec *sp = ff_spec_load_string(bad[i].text, "t");

    if (sp)
      fail_msg("spec %zu was accepted: %s", i, bad[i].text);
    if (!strstr(ff_errmsg(), bad[i].want1) ||
        !strstr(ff_errmsg(), bad[i].want2))
      fail_msg("spec %zu: message \"%s\" lacks \"%s\" or \"%s\"", i,
               ff_errmsg(), bad[i].want1, bad[i].want2);
  }
}

/* Errors found while building the farm also name file, line and key. */
static const struct {
  const char *text;
  const char *want1, *want2;
} bad_farm[] = {
  /* lvm would split these across PVs: the farm refuses (one area each) */
  {"device_size = \"64M\"; vgs = ({ pvs = 4; lvs = ({ type = \"mirror\"; "
   "size = \"100M\"; mirror_log = \"core\"; }); });",
   "t:1: vgs.[0].lvs.[0]",
   "LV lvol0: a mirror image would need more than one free area (the farm "
   "places it in one area; lvm would split it)"},
  {"device_size = \"64M\"; vgs = ({ pvs = 2; lvs = ({ name = \"cp\"; "
   "type = \"cache-pool\"; size = \"100M\"; }); });",
   "t:1: vgs.[0].lvs.[0]",
   "pool cp: its metadata and data would need more than one free area"},
  {"vgs = ({ device_size = \"8M\"; lvs = ({ size = \"1G\"; }); });",
   "t:1: vgs.[0].lvs.[0]", "has 1 free extents, LV lvol0 needs 256"},
  {"vgs = ({ lvs = ({ fill = 0.7; }, { fill = 0.7; }); });", "vgs.[0].lvs.[1]",
   "LV lvol1 needs"},
  {"vgs = ({ pvs = 3; device_size = \"64M\";\n lvs = ({ size = \"40M\"; },\n"
   " { type = \"striped\"; stripes = 3; size = \"120M\"; }); });",
   "t:3: vgs.[0].lvs.[1]", "no room for LV lvol1 in VG vg0000: 15 more"},
  {"vgs = ({ lvs = ({ count = 2; name = \"same\"; fill = 0.1; }); });",
   "vgs.[0].lvs.[0].name", "has no %u"},
  {"vgs = ({ lvs = ({ name = \"a\"; fill = 0.1; }, { name = \"a\"; fill = "
   "0.1; }); });",
   "vgs.[0].lvs.[1]", "LV name 'a' is used twice"},
  {"vgs = ({ count = 2; name = \"v%u\"; },\n { name = \"v1\"; });",
   "t:2: vgs.[1].name: VG name 'v1' is used twice",
   "made by vgs.[0].name at line 1"},
  {"orphans = ({ count = 1; });\nblanks = ({ devices = [\"pv0000\"]; });",
   "t:2: blanks.[0].devices: device name 'pv0000' is used twice",
   "made by orphans.[0] at line 1"},
  {"device_name = \"p.%u\"; blanks = ({ devices = [\"ok\"]; });\n"
   "orphans = ({ devices = [\"a b\"]; });",
   "t:2: orphans.[0].devices: device name 'a b' is not a valid file name", ""},
  {"vgs = ({ name = \"-bad\"; });", "vgs.[0]", "not a valid VG name"},
  {"vgs = ({ mda_size = \"32K\"; pe_start = \"36K\"; lvs = ({ count = 90; "
   "fill = 0.01; }); });",
   "vgs.[0]", "more than the 15616 that fit in its 32768-byte metadata"},
  {"vgs = ({ device_size = \"4T\"; extent_size = \"1K\"; lvs = ({ fill = "
   "0.000000000001; }); });",
   "vgs.[0].lvs.[0]", "would have no extents"},
  {"", "makes no devices", ""},
  /* mda1 goes after pe_start, as lvm places it; less than lvm's 32 KiB
   * minimum left there is an error (mda1 aligned down to 1 MiB once
   * landed on the label and mda0: found by the fuzz targets' label
   * check). */
  {"orphans = ({ device_size = 65536; pe_start = 36864; mda_size = 32768;\n"
   "  mda_copies = 2; label_sector = 0; });",
   "t:1: orphans.[0].device_size: 65536 is too small for mda_copies = 2",
   "less than 32 KiB (lvm's minimum) is left for mda1 after pe_start 36864"},
  /* tags, device ids, per-PV sizes */
  {"vgs = ({ tags = [\"ok\", \"not ok\"]; });",
   "t:1: vgs.[0].tags: 'not ok' is not a valid tag", ""},
  {"vgs = ({ lvs = ({ size = \"4M\"; tags = [\"a\", \"a\"]; }); });",
   "t:1: vgs.[0].lvs.[0].tags: tag 'a' is given twice", ""},
  {"vgs = ({ device_id_type = \"devname\"; device_ids = [\"/dev/sda\"]; });",
   "t:1: vgs.[0].device_id_type: 'devname' is not a device_id_type lvm writes",
   "devname is never written"},
  {"vgs = ({ pvs = 2; device_ids = [\"a\", \"b\"]; });",
   "t:1: vgs.[0].device_ids: device_id_type and device_ids go together", ""},
  {"vgs = ({ pvs = 2; device_sizes = [\"1G\"]; });",
   "t:1: vgs.[0].device_sizes: has 1 entries (expected 2, one per PV)", ""},
  /* lvm's layout depends on the size on small devices: mda0 of 2 MiB
   * ends at 3 MiB on the first PV, at 2 MiB + 4 KiB on the second */
  {"vgs = ({ pvs = 2; metadatasize = \"2M\"; extent_size = \"4K\";\n"
   "device_sizes = [\"64M\", \"2560K\"]; });",
   "t:2: vgs.[0].device_sizes: PV 1 (2621440 bytes) would get another "
   "layout than PV 0 (pe_start 3145728)",
   ""},
  /* changes */
  {"vgs = ({ changes = ({ command = \"vgrename\"; addtag = [\"a\"]; }); });",
   "t:1: vgs.[0].changes.[0].command: 'vgrename' is not vgchange, lvchange, "
   "pvchange, lvconvert, lvrename, lvextend or lvremove",
   ""},
  {"vgs = ({ changes = ({ command = \"lvchange\"; addtag = [\"a\"]; }); });",
   "t:1: vgs.[0].changes.[0]: an lvchange needs lv = \"NAME\"", ""},
  {"vgs = ({ changes = ({ command = \"vgchange\"; }); });",
   "t:1: vgs.[0].changes.[0]: changes nothing (give one of addtag, deltag, "
   "resizeable)",
   ""},
  /* thin snapshots */
  {"vgs = ({ lvs = ({ name = \"p\"; type = \"thin-pool\"; size = \"8M\"; },\n"
   "  { name = \"t\"; type = \"thin\"; pool = \"p\"; size = \"8M\"; },\n"
   "  { name = \"s\"; type = \"thin\"; origin = \"t\"; size = \"8M\"; }); });",
   "t:3: vgs.[0].lvs.[2].size: a thin snapshot (origin = \"t\") takes its "
   "size from its origin",
   ""},
  {"vgs = ({ lvs = ({ name = \"l\"; size = \"8M\"; },\n"
   "  { name = \"s\"; type = \"thin\"; origin = \"l\"; }); });",
   "t:2: vgs.[0].lvs.[1]: origin 'l': a thin snapshot needs a thin origin, "
   "and l is a linear LV",
   ""},
  {"vgs = ({ lvs = ({ name = \"p\"; type = \"thin-pool\"; size = \"8M\"; },\n"
   "  { name = \"t\"; type = \"thin\"; pool = \"p\"; size = \"8M\"; },\n"
   "  { name = \"s\"; type = \"thin\"; origin = \"t\"; },\n"
   "  { name = \"s2\"; type = \"thin\"; origin = \"t\"; }); });",
   "t:4: vgs.[0].lvs.[3]: origin 't': not supported yet: a second snapshot "
   "sharing t's mapping tree (with s;",
   ""},
  {"vgs = ({ lvs = ({ name = \"p\"; type = \"thin-pool\"; size = \"8M\"; },\n"
   "  { name = \"l\"; size = \"8M\"; },\n"
   "  { name = \"x\"; type = \"thin\"; pool = \"p\"; origin = \"l\"; }); });",
   "t:3: vgs.[0].lvs.[2]: origin 'l': lvm refuses it: Cannot use writable "
   "LV as the external origin.",
   ""},
  /* histories */
  {"vgs = ({ changes = ({ command = \"vgchange\"; size = \"8M\"; }); });",
   "t:1: vgs.[0].changes.[0].size: a vgchange takes no size (it takes "
   "addtag, deltag, resizeable)",
   ""},
  {"vgs = ({ changes = ({ command = \"lvrename\"; lv = \"a\"; }); });",
   "t:1: vgs.[0].changes.[0]: an lvrename needs new_name = \"NAME\"", ""},
  {"vgs = ({ changes = ({ command = \"lvextend\"; lv = \"a\"; }); });",
   "t:1: vgs.[0].changes.[0]: an lvextend needs size = SIZE", ""},
  {"vgs = ({ changes = ({ command = \"lvchange\"; lv = \"a\";\n"
   "  permission = \"x\"; }); });",
   "t:2: vgs.[0].changes.[0].permission: 'x' is not a permission", ""},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"4M\"; }, { name = \"b\";\n"
   "  size = \"4M\"; }); changes = ({ command = \"lvrename\"; lv = \"a\";\n"
   "  new_name = \"b\"; }); });",
   "t:2: vgs.[0].changes.[0]: lvm refuses it: Logical Volume \"b\" already "
   "exists in volume group \"vg0000\"",
   ""},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"4M\"; }); changes = ({\n"
   "  command = \"lvrename\"; lv = \"a\"; new_name = \"a_tmeta\"; }); });",
   "t:1: vgs.[0].changes.[0]: LV name 'a_tmeta': lvm refuses it: Names "
   "including \"_tmeta\" are reserved",
   ""},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; }); changes = ({\n"
   "  command = \"lvextend\"; lv = \"a\"; size = \"4M\"; }); });",
   "t:1: vgs.[0].changes.[0]: lvm refuses it: New size given (1 extents) "
   "not larger than existing size (2 extents)",
   ""},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; }); changes = ({\n"
   "  command = \"lvextend\"; lv = \"a\"; size = \"8M\"; }); });",
   "t:1: vgs.[0].changes.[0]: lvm refuses it: New size (2 extents) matches "
   "existing size (2 extents).",
   ""},
  {"vgs = ({ device_size = \"64M\"; lvs = ({ name = \"a\"; size = \"8M\";\n"
   "  }); changes = ({ command = \"lvextend\"; lv = \"a\"; size = \"1G\";\n"
   "  }); });",
   "t:2: vgs.[0].changes.[0]: lvm refuses it: \"Insufficient free space: "
   "254 extents needed, but only 13 available\"",
   ""},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; permission = \"r\"; });\n"
   "  changes = ({ command = \"lvchange\"; lv = \"a\"; permission = \"r\";\n"
   "  }); });",
   "t:2: vgs.[0].changes.[0]: lvm refuses it: Logical volume "
   "\"vg0000/a\" is already read only.",
   ""},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; read_ahead = 256; });\n"
   "  changes = ({ command = \"lvchange\"; lv = \"a\"; read_ahead = 256;\n"
   "  }); });",
   "t:2: vgs.[0].changes.[0]: changes nothing: LV a already is as asked", ""},
  {"vgs = ({ changes = ({ command = \"vgchange\"; resizeable = true; }); });",
   "t:1: vgs.[0].changes.[0]: lvm refuses it: Volume group \"vg0000\" is "
   "already resizeable",
   ""},
  {"vgs = ({ changes = ({ command = \"pvchange\"; pv = 0; allocatable = "
   "true; }); });",
   "t:1: vgs.[0].changes.[0]: changes nothing: lvm says Physical volume",
   "is already allocatable."},
  {"vgs = ({ pvs = 2; lvs = ({ name = \"m\"; type = \"raid1\"; size = "
   "\"8M\";\n"
   "  }); changes = ({ command = \"lvextend\"; lv = \"m\"; size = \"16M\";\n"
   "  }); });",
   "t:2: vgs.[0].changes.[0]: LV m: not supported yet: lvextend of a raid1 "
   "LV",
   ""},
  {"vgs = ({ seqno = 1; changes = ({ command = \"vgchange\"; addtag = "
   "[\"a\"]; }); });",
   "t:1: vgs.[0].seqno: 1 is below 1 + LVs + changes = 2", ""},
  /* pvcreate's options or the layout, not both */
  {"vgs = ({ dataalignment = \"4M\"; pe_start = \"4M\"; });",
   "t:1: vgs.[0].pe_start: give pvcreate's options (dataalignment here)",
   "not both"},
  {"vgs = ({ dataalignment = \"1M\"; dataalignmentoffset = \"2M\"; });",
   "t:1: vgs.[0].dataalignmentoffset: 2097152 is more than dataalignment",
   "1048576"},
  {"orphans = ({ metadatasize = \"16K\"; });",
   "t:1: orphans.[0].metadatasize: 16384 is not a multiple of 512 of at "
   "least 32 KiB",
   ""},
  {"vgs = ({ device_size = \"8M\"; bootloaderareasize = \"8M\"; });",
   "t:1: vgs.[0]: device_size 8388608 is smaller than dataalignment", ""},
  {"vgs = ({ lvs = ({ size = \"4M\"; }); changes = ({ command = "
   "\"lvchange\"; lv = \"nope\"; addtag = [\"a\"]; }); });",
   "t:1: vgs.[0].changes.[0]", "lv 'nope': VG vg0000 has no such LV"},
  /* writecache settings */
  {"vgs = ({ changes = ({ command = \"lvconvert\"; type = \"writecache\";\n"
   "  lv = \"a\"; cachevol = \"b\"; cachesettings = [\"frob=1\"]; }); });",
   "t:2: vgs.[0].changes.[0].cachesettings: 'frob' is not a writecache "
   "setting lvm 2.03.16 knows",
   ""},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; type = \"writecache\";\n"
   "  lv = \"a\"; cachevol = \"b\"; cachesettings = [\"fua=1\", "
   "\"nofua=1\"]; }); });",
   "t:2: vgs.[0].changes.[0].cachesettings: lvm refuses it: Setting fua and "
   "nofua cannot both be set.",
   ""},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; type = \"writecache\";\n"
   "  lv = \"a\"; cachevol = \"b\"; cachesettings = "
   "[\"high_watermark=10\", \"low_watermark=20\"]; }); });",
   "t:2: vgs.[0].changes.[0].cachesettings: lvm refuses it: High watermark "
   "must be greater than low watermark.",
   ""},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; type = \"writecache\";\n"
   "  lv = \"a\"; cachevol = \"b\"; cachesettings = "
   "[\"high_watermark=101\"]; }); });",
   "t:2: vgs.[0].changes.[0].cachesettings: 'high_watermark=101': lvm "
   "refuses it: Invalid setting: high_watermark (at most 100)",
   ""},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; type = \"writecache\";\n"
   "  lv = \"a\"; cachevol = \"b\"; cachesettings = [\"block_size=1024\"]; "
   "}); });",
   "t:2: vgs.[0].changes.[0].cachesettings: 'block_size=1024': lvm refuses "
   "it: Invalid setting: block_size (512 or 4096)",
   ""},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; type = \"writecache\";\n"
   "  lv = \"a\"; cachevol = \"b\"; cachesettings = [\"max_age\"]; }); });",
   "t:2: vgs.[0].changes.[0].cachesettings: 'max_age' is not NAME=NUMBER", ""},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; lv = \"a\";\n"
   "  pool = \"p\"; cachesettings = [\"migration_threshold=1\"]; }); });",
   "t:2: vgs.[0].changes.[0].cachesettings: not supported yet for lvconvert "
   "--type cache (give them to the cache pool: its cachesettings)",
   ""},
  /* lvcreate --cachevol */
  {"vgs = ({ lvs = ({ name = \"f\"; size = \"8M\"; }, { type = "
   "\"cache\";\n"
   "  cachevol = \"f\"; size = \"8M\"; cachemode = \"writeback\"; }); });",
   "t:2: vgs.[0].lvs.[1].cachemode: lvm refuses it: --cachemode is "
   "supported only with cache.",
   ""},
  {"vgs = ({ lvs = ({ name = \"f\"; size = \"8M\"; }, { type = "
   "\"writecache\";\n"
   "  size = \"8M\"; }); });",
   "t:1: vgs.[0].lvs.[1]: type writecache needs cachevol = \"NAME\"", ""},
  {"vgs = ({ lvs = ({ name = \"f\"; size = \"8M\"; }, { type = "
   "\"cache\";\n"
   "  cachevol = \"f\"; pool = \"p\"; size = \"8M\"; }); });",
   "t:1: vgs.[0].lvs.[1]: give pool or cachevol, not both", ""},
  {"vgs = ({ lvs = ({ name = \"f\"; size = \"8M\"; cachevol = \"x\"; "
   "}); });",
   "t:1: vgs.[0].lvs.[0].cachevol: cachevol needs type = \"cache\" or "
   "\"writecache\"",
   ""},
  {"vgs = ({ lvs = ({ name = \"f\"; size = \"8M\"; }, { count = 2; type = "
   "\"writecache\";\n"
   "  cachevol = \"f\"; size = \"8M\"; }); });",
   "t:1: vgs.[0].lvs.[1]: cachevol 'f': lvm refuses it: Failed to find LV "
   "vg0000/f",
   ""},
  {"vgs = ({ lvs = ({ name = \"f\"; size = \"8M\"; }, { type = "
   "\"writecache\";\n"
   "  cachevol = \"f\"; size = \"8M\"; }, { type = \"cache\"; cachevol = "
   "\"f_cvol\";\n"
   "  size = \"8M\"; }); });",
   "t:2: vgs.[0].lvs.[2]: cachevol 'f_cvol': it already caches LV lvol1 (a "
   "cachevol serves one LV)",
   ""},
  {"vgs = ({ lvs = ({ type = \"writecache\"; cachevol = \"later\"; size = "
   "\"8M\"; },\n"
   "  { name = \"later\"; size = \"8M\"; }); });",
   "t:1: vgs.[0].lvs.[0]: cachevol 'later': lvm refuses it: Failed to find "
   "LV vg0000/later",
   ""},
  /* pvmove */
  {"vgs = ({ pvs = 2; changes = ({ command = \"pvmove\"; }); });",
   "t:1: vgs.[0].changes.[0]: a pvmove needs pv = N", ""},
  {"vgs = ({ pvs = 2; changes = ({ command = \"pvmove\"; pv = 0; to = [0]; "
   "}); });",
   "t:1: vgs.[0].changes.[0].to: PV 0 is the one pvmove moves from", ""},
  {"vgs = ({ pvs = 2; changes = ({ command = \"pvmove\"; pv = 0; to = [5]; "
   "}); });",
   "t:1: vgs.[0].changes.[0].to: entry 0 is not a PV index of the VG (0 to 1)",
   ""},
  {"vgs = ({ pvs = 2; lvs = ({ size = \"4M\"; placement = ( [\"1:0\"] ); "
   "});\n changes = ({ command = \"pvmove\"; pv = 0; }); });",
   "t:2: vgs.[0].changes.[0]: lvm refuses it: No data to move for vg0000.",
   ""},
  {"vgs = ({ pvs = 3; lvs = ({ name = \"m\"; type = \"raid1\"; size = "
   "\"4M\"; });\n changes = ({ command = \"pvmove\"; pv = 0; }); });",
   "t:2: vgs.[0].changes.[0]: not supported yet: pvmove of PV 0, which "
   "m_rimage_0 of LV m uses",
   ""},
  {"vgs = ({ pvs = 2; lvs = ({ name = \"a\"; size = \"4M\"; });\n changes "
   "= ({ command = \"pvmove\"; pv = 0; },\n { command = \"lvchange\"; lv = "
   "\"a\"; addtag = [\"x\"]; }); });",
   "t:2: vgs.[0].changes.[0]: not supported yet: changes after a pvmove", ""},
  {"vgs = ({ pvs = 2; device_size = \"16M\"; lvs = ({ size = \"8M\"; "
   "placement = ( [\"0:0-1\"] ); },\n { size = \"8M\"; placement = ( "
   "[\"1:0-1\"] ); });\n changes = ({ command = \"pvmove\"; pv = 0; }); "
   "});",
   "t:3: vgs.[0].changes.[0]", "Insufficient free space"},
  /* lvremove */
  {"vgs = ({ changes = ({ command = \"lvremove\"; }); });",
   "t:1: vgs.[0].changes.[0]: an lvremove needs lv = \"NAME\"", ""},
  {"vgs = ({ changes = ({ command = \"lvremove\"; lv = \"a\"; size = "
   "\"4M\"; }); });",
   "t:1: vgs.[0].changes.[0].size: an lvremove takes no size (it takes lv, "
   "record_lvs_history, write_times)",
   ""},
  {"vgs = ({ changes = ({ command = \"lvremove\"; lv = \"a\";\n"
   "  record_lvs_history = 1; }); });",
   "t:2: vgs.[0].changes.[0].record_lvs_history", "true or false"},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"4M\"; }); changes = (\n"
   "  { command = \"lvremove\"; lv = \"a\"; },\n"
   "  { command = \"lvchange\"; lv = \"a\"; addtag = [\"x\"]; }); });",
   "t:3: vgs.[0].changes.[1]", "lv 'a': VG vg0000 has no such LV"},
  {"vgs = ({ pvs = 2; lvs = ({ name = \"m\"; type = \"raid1\"; size = "
   "\"8M\"; }); changes = ({ command = \"lvremove\"; lv = \"m\"; }); });",
   "t:1: vgs.[0].changes.[0]: LV m: not supported yet: lvremove of a raid1 "
   "LV (the farm removes linear, striped and thin LVs)",
   ""},
  {"vgs = ({ lvs = ({ name = \"p\"; type = \"thin-pool\"; size = \"8M\"; "
   "},\n"
   "  { name = \"l\"; size = \"8M\"; permission = \"r\"; },\n"
   "  { name = \"x\"; type = \"thin\"; pool = \"p\"; origin = \"l\"; });\n"
   "  changes = ({ command = \"lvremove\"; lv = \"l\"; }); });",
   "t:4: vgs.[0].changes.[0]: LV l: not supported yet: it is the external "
   "origin of thin LV x (lvremove would remove that too; remove it first)",
   ""},
  {"vgs = ({ lvs = ({ name = \"l\"; size = \"8M\"; },\n"
   "  { name = \"s\"; type = \"snapshot\"; origin = \"l\"; size = "
   "\"4M\"; });\n"
   "  changes = ({ command = \"lvremove\"; lv = \"l\"; }); });",
   "t:3: vgs.[0].changes.[0]: LV l: not supported yet: it is the origin of "
   "snapshot s",
   ""},
  {"vgs = ({ lvs = ({ name = \"p\"; type = \"thin-pool\"; size = \"8M\"; "
   "},\n"
   "  { name = \"t\"; type = \"thin\"; pool = \"p\"; size = \"8M\"; },\n"
   "  { name = \"s\"; type = \"thin\"; origin = \"t\"; },\n"
   "  { name = \"l\"; size = \"4M\"; }); changes = (\n"
   "  { command = \"lvremove\"; lv = \"t\"; record_lvs_history = true; "
   "},\n"
   "  { command = \"lvrename\"; lv = \"l\"; new_name = \"t\"; }); });",
   "t:6: vgs.[0].changes.[1]: lvm refuses it: Historical Logical Volume "
   "\"t\" already exists in volume group \"vg0000\"",
   ""},
  {"vgs = ({ seqno = 7; lvs = ({ name = \"p\"; type = \"thin-pool\"; size "
   "= \"8M\"; },\n"
   "  { name = \"t\"; type = \"thin\"; pool = \"p\"; size = \"8M\"; });\n"
   "  changes = ({ command = \"lvremove\"; lv = \"t\"; }); });",
   "t:1: vgs.[0]: seqno 7 is below the 8 writes of the vgcreate, the "
   "lvcreates and the changes (an lvremove of a thin LV writes twice)",
   ""},
};

static void
test_bad_farm(void **state)
{
  (void)state;
  for (size_t i = 0; i < sizeof bad_farm / sizeof *bad_farm; i++) {
    struct ff_spec *sp = ff_spec_load_string(bad_farm[i].text, "t");
    struct ff_farm *farm;

    if (!sp) {
      if (strstr(ff_errmsg(), bad_farm[i].want1) &&
          strstr(ff_errmsg(), bad_farm[i].want2))
        continue; /* caught by the parser already: also fine */
      fail_msg("farm spec %zu rejected early: %s", i, ff_errmsg());
    }
    farm = ff_farm_new(sp);
    ff_spec_free(sp);
    if (farm)
      fail_msg("farm spec %zu was accepted: %s", i, bad_farm[i].text);
    if (!strstr(ff_errmsg(), bad_farm[i].want1) ||
        !strstr(ff_errmsg(), bad_farm[i].want2))
      fail_msg("farm spec %zu: message \"%s\" lacks \"%s\" or \"%s\"", i,
               ff_errmsg(), bad_farm[i].want1, bad_farm[i].want2);
  }
}

static void
test_files(void **state)
{
  char path[] = "/tmp/ff-test-spec-XXXXXX";
  char want[128];
  int fd = mkstemp(path);
  FILE *f;
  struct ff_spec *sp;

  (void)state;
  assert_true(fd >= 0);
  f = fdopen(fd, "w");
  assert_non_null(f);
  fputs("# a farm\nseed = 3;\nvgs = ({ count = 2; lvs = ({ fill = 0.5; });"
        " });\n",
        f);
  fclose(f);
  sp = ff_spec_load_file(path);
  assert_nonnull_err(sp);
  assert_string_equal(sp->file, path);
  assert_int_equal(sp->seed, 3);
  assert_int_equal(sp->vgs[0].count, 2);
  ff_spec_free(sp);

  f = fopen(path, "w");
  assert_non_null(f);
  fputs("seed = 3;\n\nvgs = ({\n  count = 2;\n  colour = \"red\"; });\n", f);
  fclose(f);
  assert_null(ff_spec_load_file(path));
  snprintf(want, sizeof want, "%s:5: vgs.[0].colour: unknown key", path);
  if (!strstr(ff_errmsg(), want))
    fail_msg("message \"%s\" lacks \"%s\"", ff_errmsg(), want);

  /* A NUL byte would end the text libconfig sees: the file is rejected. */
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("seed = 3;\n", f);
  fputc('\0', f);
  fputs("vgs = ({ colour = 1; });\n", f);
  fclose(f);
  assert_null(ff_spec_load_file(path));
  snprintf(want, sizeof want, "%s:2: syntax error: a NUL byte", path);
  if (!strstr(ff_errmsg(), want))
    fail_msg("message \"%s\" lacks \"%s\"", ff_errmsg(), want);
  unlink(path);

  assert_null(ff_spec_load_file(path));
  if (!strstr(ff_errmsg(), "cannot read the spec"))
    fail_msg("missing file: \"%s\"", ff_errmsg());
}

static void
test_builtin(void **state)
{
  struct ff_spec *sp = ff_spec_load_string(ff_spec_builtin_default, "b");
  struct ff_farm *farm;

  (void)state;
  assert_nonnull_err(sp);
  farm = ff_farm_new(sp);
  assert_nonnull_err(farm);
  assert_int_equal(farm->ndevs, 14);
  ff_farm_free(farm);
  ff_spec_free(sp);
}

/* Groups of one VG's devices of spec sp: a copy of every count. */
static void
counts(const struct ff_spec *sp, unsigned *c)
{
  for (unsigned i = 0; i < sp->nvgs; i++)
    c[i] = sp->vgs[i].count;
  for (unsigned i = 0; i < sp->nothers; i++)
    c[sp->nvgs + i] = sp->others[i].count;
}

/* ff_spec_scale on the shipped specs: the total is exactly what was
 * asked, every group keeps at least 1, and each group's count is within
 * one member of its exact share (the shape kept). */
static void
test_scale(void **state)
{
  static const uint64_t totals[] = {100, 200, 160, 1258, 50, 999, 3000};
  char mixed[4200];
  const char *specs[2];

  (void)state;
  snprintf(mixed, sizeof mixed, "%s/configs/mixed-1000.conf",
           ff_test_srcdir());
  specs[0] = "builtin:default-1000";
  specs[1] = mixed;
  for (size_t k = 0; k < 2; k++)
    for (size_t t = 0; t < sizeof totals / sizeof *totals; t++) {
      struct ff_spec *sp = ff_spec_load_file(specs[k]);
      unsigned before[64], after[64];
      uint64_t total;
      struct ff_farm *farm;

      assert_nonnull_err(sp);
      assert_true(sp->nvgs + sp->nothers <= 64);
      total = ff_spec_devices(sp);
      counts(sp, before);
      assert_int_equal(ff_spec_scale(sp, totals[t]), 0);
      counts(sp, after);
      if (ff_spec_devices(sp) != totals[t])
        fail_msg("%s at %llu: %llu devices", specs[k],
                 (unsigned long long)totals[t],
                 (unsigned long long)ff_spec_devices(sp));
      for (unsigned i = 0; i < sp->nvgs + sp->nothers; i++) {
        double share = (double)before[i] * (double)totals[t] / (double)total;

        assert_true(after[i] >= 1);
        if (fabs(after[i] - share) > 1.0 + 1e-9)
          fail_msg("%s at %llu: group %u has %u for a share of %.2f", specs[k],
                   (unsigned long long)totals[t], i, after[i], share);
      }
      farm = ff_farm_new(sp); /* the farm made has that many */
      assert_nonnull_err(farm);
      assert_int_equal(farm->ndevs, totals[t]);
      ff_farm_free(farm);
      ff_spec_free(sp);
    }
}

/* Below one member of every group the farm is that minimum; a group with
 * named devices keeps them. */
static struct ff_spec *
small_spec(void)
{
  struct ff_spec *sp =
    ff_spec_load_string("vgs = ({ count = 10; pvs = 3; }, { count = 30; });\n"
                        "orphans = ({ count = 10; });\n",
                        "t");

  assert_nonnull_err(sp);
  assert_int_equal(ff_spec_devices(sp), 70);
  return sp;
}

static void
test_scale_small(void **state)
{
  static const struct {
    uint64_t ask, got;
    unsigned c0, c1, c2;
  } cases[] = {
    {2, 5, 1, 1, 1},    /* one of each is the least */
    {7, 7, 1, 3, 1},    /* 3 devices per VG of group 0 */
    {35, 35, 5, 15, 5}, /* half */
    {71, 71, 10, 31, 10},
  };
  struct ff_spec *sp;

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    sp = small_spec();
    assert_int_equal(ff_spec_scale(sp, cases[i].ask), 0);
    if (ff_spec_devices(sp) != cases[i].got ||
        sp->vgs[0].count != cases[i].c0 || sp->vgs[1].count != cases[i].c1 ||
        sp->others[0].count != cases[i].c2)
      fail_msg("at %llu: %llu devices, counts %u %u %u",
               (unsigned long long)cases[i].ask,
               (unsigned long long)ff_spec_devices(sp), sp->vgs[0].count,
               sp->vgs[1].count, sp->others[0].count);
    ff_spec_free(sp);
  }
  sp = small_spec();
  assert_int_equal(ff_spec_scale(sp, 0), -1);
  ff_spec_free(sp);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_mdas),
    cmocka_unit_test(test_full),        cmocka_unit_test(test_bad),
    cmocka_unit_test(test_bad_farm),    cmocka_unit_test(test_files),
    cmocka_unit_test(test_builtin),     cmocka_unit_test(test_scale),
    cmocka_unit_test(test_scale_small), cmocka_unit_test(test_nomda_config),
    cmocka_unit_test(test_vg_keys),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
