/* Cache pools and cache LVs (docs/spec-format.md "Cache pools and cache
 * LVs"; docs/research/cache.md): the spec's errors, lvm's chunk and
 * metadata sizes, the sub-LVs (names, creation order, extents), the
 * lines of every write and the order of the hidden LVs once pools are
 * attached.  The byte-for-byte comparison with real lvm is
 * test-byte-identical's (ca, cb, cc, cd). */
#include "ff-farm-int.h"
#include "ff-spec.h"
#include "ff-test.h"

#include <stdlib.h>
#include <string.h>

/* Errors: the parser's and the farm's, each naming the key. */
static const struct ff_test_bad bad[] = {
  {"vgs = ({ lvs = ({ type = \"cache-pool\"; chunk_size = \"16K\"; size = "
   "\"8M\"; }); });",
   "t:1: vgs.[0].lvs.[0].chunk_size",
   "Cache chunk size is not in the range 32.00 KiB to 1.00 GiB"},
  {"vgs = ({ lvs = ({ type = \"cache-pool\"; chunk_size = \"48K\"; size = "
   "\"8M\"; }); });",
   "vgs.[0].lvs.[0].chunk_size", "must be a multiple of 32.00 KiB"},
  {"vgs = ({ lvs = ({ type = \"cache-pool\"; cachemode = \"fast\"; size = "
   "\"8M\"; }); });",
   "vgs.[0].lvs.[0].cachemode", "unknown cachemode 'fast'"},
  {"vgs = ({ lvs = ({ type = \"cache-pool\"; policy = \"cleaner\"; size = "
   "\"8M\"; }); });",
   "vgs.[0].lvs.[0].policy", "unknown policy 'cleaner'"},
  {"vgs = ({ lvs = ({ type = \"cache-pool\"; zero = false; size = \"8M\"; "
   "}); });",
   "vgs.[0].lvs.[0].zero", "type cache-pool takes no zero"},
  {"vgs = ({ lvs = ({ type = \"cache-pool\"; discards = \"ignore\"; size = "
   "\"8M\"; }); });",
   "vgs.[0].lvs.[0].discards", "type cache-pool takes no discards"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"cache-pool\"; stripes = 2; size = "
   "\"8M\"; }); });",
   "vgs.[0].lvs.[0].stripes", "not supported yet for type cache-pool"},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; }); changes = ({ "
   "command = \"lvconvert\"; type = \"writecache\"; lv = \"a\"; }); });",
   "vgs.[0].changes.[0]", "an lvconvert --type writecache needs cachevol"},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; lv = \"a\"; pool = "
   "\"p\"; cachevol = \"c\"; }); });",
   "vgs.[0].changes.[0]", "give pool or cachevol, not both"},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; }); changes = ({ "
   "command = \"lvconvert\"; type = \"writecache\"; lv = \"a\"; pool = "
   "\"p\"; cachevol = \"b\"; }); });",
   "vgs.[0].changes.[0].pool", "an lvconvert --type writecache takes no pool"},
  {"vgs = ({ lvs = ({ type = \"cache-pool\"; size = \"8M\"; cachesettings = "
   "[\"migration_threshold = 1\"]; }); });",
   "vgs.[0].lvs.[0].cachesettings",
   "'migration_threshold = 1' is not NAME=NUMBER"},
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; size = \"8M\"; cachesettings = "
   "[\"a=1\"]; }); });",
   "vgs.[0].lvs.[0].cachesettings", "type thin-pool takes no cachesettings"},
  {"vgs = ({ lvs = ({ type = \"cache-pool\"; size = \"8M\"; uuids = [\"a\"]; "
   "}); });",
   "vgs.[0].lvs.[0].uuids", "has 1 entr"},
  {"vgs = ({ lvs = ({ type = \"cache\"; size = \"8M\"; }); });",
   "t:1: vgs.[0].lvs.[0]", "type cache needs pool = \"NAME\""},
  {"vgs = ({ lvs = ({ type = \"cache\"; pool = \"p\"; chunk_size = \"64K\"; "
   "size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].chunk_size", "type cache takes no chunk_size"},
  {"vgs = ({ lvs = ({ type = \"cache\"; pool = \"p\"; size = \"8M\"; "
   "write_times = [1]; }); });",
   "vgs.[0].lvs.[0].write_times", "has 1 entries (expected 2"},
  {"vgs = ({ lvs = ({ cachemode = \"writeback\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].cachemode", "needs type = \"cache-pool\" or \"cache\""},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; lv = \"a\"; }); });",
   "t:1: vgs.[0].changes.[0]", "an lvconvert needs lv = \"NAME\" and pool"},
  {"vgs = ({ changes = ({ command = \"lvconvert\"; lv = \"a\"; pool = \"p\"; "
   "addtag = [\"x\"]; }); });",
   "vgs.[0].changes.[0].addtag", "an lvconvert takes no addtag"},
  {"vgs = ({ changes = ({ command = \"vgchange\"; pool = \"p\"; addtag = "
   "[\"x\"]; }); });",
   "vgs.[0].changes.[0].pool",
   "a vgchange takes no pool (it takes addtag, deltag, resizeable)"},
};

static const struct ff_test_bad bad_farm[] = {
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; }, { name = \"c\"; size "
   "= \"4M\"; }); changes = ({ command = \"lvconvert\"; lv = \"a\"; "
   "cachevol = \"c\"; }); });",
   "vgs.[0].changes.[0]", "The minimum cache size is two extents"},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; }); changes = ({ "
   "command = \"lvconvert\"; type = \"writecache\"; lv = \"a\"; cachevol "
   "= \"a\"; }); });",
   "vgs.[0].changes.[0]", "the cachevol cannot be the LV it caches"},
  {"vgs = ({ lvs = ({ name = \"a\"; size = \"8M\"; }); changes = ({ "
   "command = \"lvconvert\"; type = \"writecache\"; lv = \"a\"; cachevol "
   "= \"b\"; }); });",
   "vgs.[0].changes.[0]", "cachevol 'b': lvm refuses it: Failed to find LV"},
  {"vgs = ({ lvs = ({ name = \"x_wcorig\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]", "Names including \"_wcorig\" are reserved"},
  {"vgs = ({ lvs = ({ name = \"pvmove0\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]", "Names starting \"pvmove\" are reserved"},
  {"vgs = ({ lvs = ({ name = \"lv\"; size = \"8M\"; },\n { type = \"cache\"; "
   "pool = \"lv\"; size = \"8M\"; }); });",
   "t:2: vgs.[0].lvs.[1]", "Logical volume vg0000/lv is not a cache pool"},
  {"vgs = ({ lvs = ({ type = \"cache\"; pool = \"p\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]",
   "Ambiguous syntax, please create --type cache-pool p separately"},
  /* a pool caches one LV */
  {"vgs = ({ lvs = ({ name = \"p\"; type = \"cache-pool\"; size = \"8M\"; },\n"
   " { name = \"a\"; type = \"cache\"; pool = \"p\"; size = \"4M\"; },\n"
   " { type = \"cache\"; pool = \"p\"; size = \"4M\"; }); });",
   "t:3: vgs.[0].lvs.[2]", "Ambiguous syntax"},
  {"vgs = ({ lvs = ({ name = \"p\"; type = \"cache-pool\"; size = \"8M\"; },\n"
   " { name = \"a\"; type = \"cache\"; pool = \"p\"; size = \"4M\"; }); "
   "changes = ({ command = \"lvconvert\"; lv = \"a\"; pool = \"p\"; }); });",
   "vgs.[0].changes.[0]", "Ambiguous syntax"},
  {"vgs = ({ pvs = 2; lvs = ({ name = \"r\"; type = \"raid1\"; size = \"8M\"; "
   "},\n { name = \"p\"; type = \"cache-pool\"; size = \"8M\"; }); changes = "
   "({ command = \"lvconvert\"; lv = \"r\"; pool = \"p\"; }); });",
   "vgs.[0].changes.[0]", "not supported yet: caching a raid1 LV"},
  {"vgs = ({ lvs = ({ name = \"x_cpool\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]", "Names including \"_cpool\" are reserved"},
  {"vgs = ({ lvs = ({ name = \"x_corig\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]", "Names including \"_corig\" are reserved"},
  /* the spare of the first pool is smaller than the second's metadata */
  {"vgs = ({ device_size = \"64M\"; lvs = ({ name = \"a\"; type = "
   "\"cache-pool\"; size = \"8M\"; },\n { name = \"b\"; type = "
   "\"cache-pool\"; size = \"8M\"; metadata_size = \"12M\"; }); });",
   "t:2: vgs.[0].lvs.[1]", "not supported yet: its metadata (3 extents)"},
};

static void
test_errors(void **state)
{
  (void)state;
  ff_test_refused(bad, sizeof bad / sizeof *bad, 0);
  ff_test_refused(bad_farm, sizeof bad_farm / sizeof *bad_farm, 1);
}

/* lvcreate --type cache-pool's chunk and metadata sizes: what lvm
 * 2.03.16 chose on a 3 GiB PV with 1 MiB extents (research notes §2,
 * e2): the metadata 4 MiB + 44 bytes a chunk, at least what was asked. */
static void
test_sizes(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ device_size = \"3G\"; extent_size = \"1M\"; lvs = (\n"
    " { name = \"p1\"; type = \"cache-pool\"; size = \"1M\"; },\n"
    " { name = \"p2\"; type = \"cache-pool\"; size = \"100M\"; },\n"
    " { name = \"p3\"; type = \"cache-pool\"; size = \"2G\"; pmspare = false; "
    "},\n"
    " { name = \"p4\"; type = \"cache-pool\"; size = \"20M\"; metadata_size = "
    "\"1M\"; },\n"
    " { name = \"p6\"; type = \"cache-pool\"; size = \"20M\"; chunk_size = "
    "\"32K\"; },\n"
    " { name = \"p7\"; type = \"cache-pool\"; size = \"20M\"; chunk_size = "
    "\"96K\"; metadata_size = \"5M\"; }); });");
  static const struct {
    const char *pool, *cmeta;
    uint32_t chunk;
    uint64_t meta_ext;
  } want[] = {
    {"p1", "p1_cmeta", 128, 5}, {"p2", "p2_cmeta", 128, 5},
    {"p3", "p3_cmeta", 128, 6}, {"p4", "p4_cmeta", 128, 5},
    {"p6", "p6_cmeta", 64, 5},  {"p7", "p7_cmeta", 192, 5},
  };
  const struct ff_vg *vg = &farm->vgs[0];

  (void)state;
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const struct ff_lv *p = ff_test_lv(vg, want[i].pool);

    assert_int_equal(p->kind, FF_LVK_CACHE_POOL);
    assert_int_equal(p->chunk, want[i].chunk);
    assert_int_equal(ff_test_lv(vg, want[i].cmeta)->extents, want[i].meta_ext);
  }
  /* e2: the spare (p1's metadata size), then p1's cmeta and cdata */
  assert_int_equal(ff_test_lv(vg, "lvol0_pmspare")->segs[0].areas[0].pe, 0);
  assert_int_equal(ff_test_lv(vg, "lvol0_pmspare")->extents, 5);
  assert_int_equal(ff_test_lv(vg, "p1_cmeta")->segs[0].areas[0].pe, 5);
  assert_int_equal(ff_test_lv(vg, "p1_cdata")->segs[0].areas[0].pe, 10);
  assert_int_equal(ff_test_lv(vg, "p2_cmeta")->segs[0].areas[0].pe, 11);
  assert_int_equal(ff_test_lv(vg, "p2_cdata")->segs[0].areas[0].pe, 16);
  assert_int_equal(vg->seqno, 1 + 3 + 5 * 2);
  ff_farm_free(farm);
  /* e4, 4 MiB extents: 100G raises the chunk to 128 KiB (at most 1000000
   * chunks), metadata 40M; 10G with 32 KiB chunks, 20M */
  farm = ff_test_farm(
    "vgs = ({ device_size = \"200G\"; lvs = (\n"
    " { name = \"big\"; type = \"cache-pool\"; size = \"100G\"; },\n"
    " { name = \"small\"; type = \"cache-pool\"; size = \"10G\"; "
    "chunk_size = \"32K\"; }); });");
  vg = &farm->vgs[0];
  assert_int_equal(ff_test_lv(vg, "big")->chunk, 256);
  assert_int_equal(ff_test_lv(vg, "big_cmeta")->extents, 10);
  assert_int_equal(ff_test_lv(vg, "big_cmeta")->segs[0].areas[0].pe, 10);
  assert_int_equal(ff_test_lv(vg, "big_cdata")->segs[0].areas[0].pe, 20);
  assert_int_equal(ff_test_lv(vg, "small")->chunk, 64);
  assert_int_equal(ff_test_lv(vg, "small_cmeta")->extents, 5);
  assert_int_equal(ff_test_lv(vg, "small_cmeta")->segs[0].areas[0].pe, 25620);
  ff_farm_free(farm);
}

/* The text of write w (1-based) of the VG. */
static const char *
text(const struct ff_farm *farm, uint32_t w)
{
  return farm->vgs[0].texts[w - 1].buf;
}

/* Scenario cb: a pool, then lvcreate --type cache. */
static void
test_lvcreate(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ name = \"vg\"; device_size = \"64M\"; lvs = (\n"
    " { name = \"cpool\"; type = \"cache-pool\"; size = \"8M\"; },\n"
    " { name = \"lv\"; type = \"cache\"; pool = \"cpool\"; size = \"8M\"; "
    "}); });");
  const struct ff_vg *vg = &farm->vgs[0];
  const struct ff_lv *pool = ff_test_lv(vg, "cpool_cpool");
  const struct ff_lv *lv = ff_test_lv(vg, "lv");
  const char *t;

  (void)state;
  assert_int_equal(vg->seqno, 1 + 3 + 2);
  /* the spare PV0:0-1, cmeta 2-3, cdata 4-5, the LV 6-7 */
  assert_int_equal(pool->nsubs, 3);
  assert_string_equal(pool->subs[0].name, "lvol0_pmspare");
  assert_string_equal(pool->subs[1].name, "cpool_cpool_cmeta");
  assert_string_equal(pool->subs[1].oldname, "cpool_cmeta");
  assert_string_equal(pool->subs[2].name, "cpool_cpool_cdata");
  assert_int_equal(pool->subs[1].segs[0].areas[0].pe, 2);
  assert_int_equal(pool->subs[2].segs[0].areas[0].pe, 4);
  assert_int_equal(lv->kind, FF_LVK_CACHE);
  assert_int_equal(lv->nsegs, 0);
  assert_int_equal(lv->nsubs, 1);
  assert_string_equal(lv->subs[0].name, "lv_corig");
  assert_int_equal(lv->subs[0].role, FF_SUB_CORIG);
  assert_int_equal(lv->subs[0].segs[0].areas[0].pe, 6);
  assert_int_equal(pool->attach_seq, 6);
  /* write 3: the pool over its metadata area; write 4: the pool */
  assert_non_null(strstr(text(farm, 3), "\ncpool {\n"));
  assert_non_null(strstr(text(farm, 4),
                         "type = \"cache-pool\"\ndata = \"cpool_cdata\"\n"
                         "metadata = \"cpool_cmeta\"\nchunk_size = 128\n}\n"));
  /* write 5: the LV, linear; the pool as it was */
  t = text(farm, 5);
  assert_non_null(strstr(t, "\nlv {\n"));
  assert_non_null(strstr(t, "type = \"striped\"\nstripe_count = 1\n\n"
                            "stripes = [\n\"pv0\", 6\n]"));
  assert_non_null(strstr(t, "\ncpool {\n"));
  assert_null(strstr(t, "lv_corig"));
  /* write 6: cached; the pool hidden, renamed, with mode and policy */
  t = text(farm, 6);
  assert_non_null(strstr(t, "type = \"cache\"\ncache_pool = \"cpool_cpool\"\n"
                            "origin = \"lv_corig\"\n}"));
  assert_non_null(strstr(t, "\ncpool_cpool {\nid = "));
  assert_non_null(
    strstr(t, "type = \"cache-pool+METADATA_FORMAT\"\ndata = "
              "\"cpool_cpool_cdata\"\nmetadata = \"cpool_cpool_cmeta\"\n"
              "metadata_format = 2\nchunk_size = 128\ncache_mode = "
              "\"writethrough\"\npolicy = \"smq\"\n}"));
  /* visible lv, then cpool_cpool, the spare, cmeta, cdata, lv_corig */
  assert_true(strstr(t, "\nlv {") < strstr(t, "\ncpool_cpool {"));
  assert_true(strstr(t, "\ncpool_cpool {") < strstr(t, "\nlvol0_pmspare {"));
  assert_true(strstr(t, "\ncpool_cpool_cdata {") < strstr(t, "\nlv_corig {"));
  assert_non_null(strstr(t, "Write[2] from lvcreate --type cache -l 2 -n lv "
                            "--cachepool vg/cpool vg."));
  ff_farm_free(farm);
}

/* Scenarios cc and cd: lvconvert of an LV made before its pool (its
 * _corig after every LV), and two pools attached in turn (the last
 * attached leads the hidden LVs, after the visible ones: a raid LV's
 * rmetas in its write 1). */
static void
test_order(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ name = \"vg\"; pvs = 2; device_size = \"64M\"; lvs = (\n"
    " { name = \"lv\"; size = \"12M\"; },\n"
    " { name = \"cp1\"; type = \"cache-pool\"; size = \"8M\"; cachemode = "
    "\"writeback\"; policy = \"mq\"; },\n"
    " { name = \"cp2\"; type = \"cache-pool\"; size = \"4M\"; pmspare = "
    "false; "
    "},\n"
    " { name = \"c\"; type = \"cache\"; pool = \"cp2\"; size = \"4M\"; "
    "cachemode = \"passthrough\"; },\n"
    " { name = \"r\"; type = \"raid1\"; size = \"4M\"; }); changes = (\n"
    " { command = \"lvconvert\"; lv = \"lv\"; pool = \"cp1\"; time = 99; }); "
    "});");
  const struct ff_vg *vg = &farm->vgs[0];
  const char *t, *before;

  (void)state;
  assert_int_equal(vg->seqno, 1 + 1 + 3 + 2 + 2 + 2 + 1);
  /* before the lvconvert: cp1 visible with its own mode and policy */
  before = text(farm, 9);
  assert_non_null(strstr(before, "\ncp1 {\n"));
  assert_non_null(strstr(before, "chunk_size = 128\ncache_mode = "
                                 "\"writeback\"\npolicy = \"mq\"\n}"));
  assert_non_null(strstr(before, "cache_mode = \"passthrough\"\npolicy = "
                                 "\"smq\"\n}"));
  /* raid write 1: its rmetas visible, before the hidden pool */
  t = text(farm, 10);
  assert_non_null(strstr(t, "\nr_rmeta_0 {"));
  assert_true(strstr(t, "\nr_rmeta_0 {") < strstr(t, "\ncp2_cpool {"));
  t = text(farm, 12);
  assert_non_null(strstr(t, "description = \"Write from lvconvert --type "
                            "cache --cachepool vg/cp1 vg/lv.\""));
  assert_int_equal(ff_test_lv(vg, "lv_corig")->time, 99);
  assert_true(strstr(t, "\ncp1_cpool {") < strstr(t, "\ncp2_cpool {"));
  assert_true(strstr(t, "\ncp2_cpool {") < strstr(t, "\nlvol0_pmspare {"));
  assert_true(strstr(t, "\nc_corig {") < strstr(t, "\nlv_corig {"));
  assert_non_null(strstr(t, "metadata_format = 2\nchunk_size = 128\n"
                            "cache_mode = \"writeback\"\npolicy = \"mq\"\n}"));
  ff_farm_free(farm);
}

/* count > 1 for pools: a group of two thin pools and one of two cache
 * pools make the same bytes as four groups of one (only the first pool
 * of the VG makes the spare: one write fewer for the others). */
static void
test_pool_count(void **state)
{
  static const char head[] =
    "seed = 1;\ndevice_size = \"64M\";\nvgs = ({ pvs = 2; lvs = (";
  static const char tail[] =
    "{ name = \"t%u\"; type = \"thin\"; pool = \"pool0\"; size = "
    "\"1G\"; }); });\n";
  static const char tp[] =
    "{ name = \"pool%%u\"; type = \"thin-pool\"; size = \"16M\"; %s},";
  static const char cp[] = "{ name = \"cp%%u\"; type = \"cache-pool\"; size = "
                           "\"8M\"; pmspare = false; %s},";
  char one[1024], two[1024], a1[128], a2[128], b1[128], b2[128];
  struct ff_farm *f1, *f2;
  uint8_t *x = malloc(1u << 20), *y = malloc(1u << 20);

  (void)state;
  snprintf(a1, sizeof a1, tp, "");
  snprintf(b1, sizeof b1, cp, "");
  snprintf(a2, sizeof a2, tp, "count = 2; ");
  snprintf(b2, sizeof b2, cp, "count = 2; ");
  snprintf(one, sizeof one, "%s%s%s%s%s%s", head, a1, a1, b1, b1, tail);
  snprintf(two, sizeof two, "%s%s%s%s", head, a2, b2, tail);
  f1 = ff_test_farm(one);
  f2 = ff_test_farm(two);
  assert_int_equal(f1->ndevs, 2);
  assert_int_equal(f2->ndevs, 2);
  assert_int_equal(f2->vgs[0].nlvs, 5);
  assert_int_equal(f2->vgs[0].seqno, f1->vgs[0].seqno);
  assert_int_equal(f2->vgs[0].lvs[0].writes, 3); /* it makes the spare */
  assert_int_equal(f2->vgs[0].lvs[1].writes, 2);
  for (uint32_t d = 0; d < 2; d++)
    for (uint64_t off = 0; off < (64u << 20); off += 1u << 20) {
      assert_ok(ff_farm_read(f1, d, x, off, 1u << 20));
      assert_ok(ff_farm_read(f2, d, y, off, 1u << 20));
      assert_memory_equal(x, y, 1u << 20);
    }
  free(x);
  free(y);
  ff_farm_free(f1);
  ff_farm_free(f2);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_errors),     cmocka_unit_test(test_sizes),
    cmocka_unit_test(test_lvcreate),   cmocka_unit_test(test_order),
    cmocka_unit_test(test_pool_count),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
