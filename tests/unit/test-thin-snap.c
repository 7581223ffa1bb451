/* Thin pools, thin LVs and old-style snapshots (docs/spec-format.md "Thin
 * pools, thin LVs and snapshots"; docs/research/thin-snapshot.md): the
 * spec's errors, lvm's default chunk and metadata sizes, the allocation
 * of the spare, tdata and tmeta, the lines of every write, the tmeta's
 * bytes (ff-thinmeta's image) and a COW's header.  The byte-for-byte
 * comparison with real lvm is test-byte-identical's (tp, t1, t2, sn). */
#include "ff-farm-int.h"
#include "ff-manifest.h"
#include "ff-spec.h"
#include "ff-test.h"
#include "ff-thinmeta.h"

#include <stdlib.h>
#include <string.h>

/* Errors: the parser's and the farm's, each naming the key. */
static const struct ff_test_bad bad[] = {
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; chunk_size = \"32K\"; size = "
   "\"16M\"; }); });",
   "t:1: vgs.[0].lvs.[0].chunk_size",
   "not in the range 64.00 KiB to 1.00 GiB"},
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; chunk_size = \"96K\"; size = "
   "\"16M\"; }); });",
   "vgs.[0].lvs.[0].chunk_size", "must be a multiple of 64.00 KiB"},
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; discards = \"x\"; size = \"8M\"; "
   "}); });",
   "vgs.[0].lvs.[0].discards", "unknown discards 'x'"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"cache-pool\"; stripes = 2; size = "
   "\"8M\"; }); });",
   "vgs.[0].lvs.[0].stripes", "not supported yet for type cache-pool"},
  {"vgs = ({ pvs = 2; lvs = ({ type = \"thin-pool\"; stripes = 2; "
   "stripe_size = \"3K\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].stripe_size",
   "3072 is not a power of 2 of at least 4 KiB"},
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; alloc = \"anywhere\"; size = "
   "\"8M\"; }); });",
   "vgs.[0].lvs.[0].alloc", "not supported yet"},
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; fill = 0.5; }); });",
   "vgs.[0].lvs.[0].fill", "not supported yet for type thin-pool (give size)"},
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; size = \"8M\"; write_times = [1, "
   "2]; }); });",
   "vgs.[0].lvs.[0].write_times", "has 2 entries (expected 3"},
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; pmspare = false; size = \"8M\"; "
   "write_times = [1, 2, 3]; }); });",
   "vgs.[0].lvs.[0].write_times", "has 3 entries (expected 2"},
  {"vgs = ({ lvs = ({ type = \"thin-pool\"; size = \"8M\"; origin = \"a\"; "
   "}); });",
   "vgs.[0].lvs.[0].origin", "type thin-pool takes no origin"},
  {"vgs = ({ lvs = ({ type = \"thin\"; size = \"8M\"; }); });",
   "t:1: vgs.[0].lvs.[0]", "type thin needs pool = \"NAME\""},
  {"vgs = ({ lvs = ({ type = \"thin\"; pool = \"p\"; size = \"8M\"; uuids = "
   "[\"a\"]; }); });",
   "vgs.[0].lvs.[0].uuids", "a thin LV has no sub-LVs"},
  {"vgs = ({ lvs = ({ zero = false; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].zero", "zero needs type = \"thin-pool\""},
  {"vgs = ({ lvs = ({ pool = \"p\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].pool", "pool needs type = \"thin\""},
  {"vgs = ({ lvs = ({ type = \"snapshot\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]", "type snapshot needs origin = \"NAME\""},
  {"vgs = ({ lvs = ({ type = \"snapshot\"; origin = \"a\"; chunk_size = "
   "\"6K\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].chunk_size", "power of 2 in the range 4K to 512K"},
  {"vgs = ({ lvs = ({ type = \"snapshot\"; origin = \"a\"; metadata_size = "
   "\"4M\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].metadata_size", "type snapshot takes no metadata_size"},
  {"vgs = ({ lvs = ({ type = \"snapshot\"; origin = \"a\"; alloc = "
   "\"cling\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].alloc", "not supported yet for type snapshot"},
  {"vgs = ({ lvs = ({ type = \"vdo\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0].type", "type vdo is not supported yet"},
};

static const struct ff_test_bad bad_farm[] = {
  {"vgs = ({ lvs = ({ name = \"lv\"; size = \"8M\"; },\n { type = \"thin\"; "
   "pool = \"lv\"; size = \"8M\"; }); });",
   "t:2: vgs.[0].lvs.[1]", "Logical volume vg0000/lv is not a thin pool"},
  {"vgs = ({ lvs = ({ type = \"thin\"; pool = \"p\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]", "Couldn't find volume p in Volume group vg0000"},
  {"vgs = ({ lvs = ({ type = \"snapshot\"; origin = \"x\"; size = \"8M\"; }); "
   "});",
   "vgs.[0].lvs.[0]", "Couldn't find origin volume 'x'"},
  {"vgs = ({ lvs = ({ name = \"lv\"; size = \"8M\"; },\n { name = \"s\"; type "
   "= \"snapshot\"; origin = \"lv\"; size = \"4M\"; },\n { type = "
   "\"snapshot\"; origin = \"s\"; size = \"4M\"; }); });",
   "t:3: vgs.[0].lvs.[2]", "Snapshots of snapshots are not supported"},
  {"vgs = ({ lvs = ({ name = \"p\"; type = \"thin-pool\"; size = \"8M\"; },\n "
   "{ type = \"snapshot\"; origin = \"p\"; size = \"4M\"; }); });",
   "vgs.[0].lvs.[1]", "Snapshots of thin pool type volumes are not supported"},
  {"vgs = ({ pvs = 2; lvs = ({ name = \"r\"; type = \"raid1\"; size = \"8M\"; "
   "},\n { type = \"snapshot\"; origin = \"r\"; size = \"4M\"; }); });",
   "vgs.[0].lvs.[1]", "not supported yet: snapshots of raid1 LVs"},
  {"vgs = ({ extent_size = \"4K\"; lvs = ({ name = \"lv\"; size = \"8M\"; },\n"
   " { type = \"snapshot\"; origin = \"lv\"; chunk_size = \"8K\"; size = "
   "\"16K\"; }); });",
   "vgs.[0].lvs.[1]", "Snapshot volume cannot be smaller than 3 chunks"},
  {"vgs = ({ lvs = ({ name = \"x_tdata\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]", "Names including \"_tdata\" are reserved"},
  {"vgs = ({ lvs = ({ name = \"snapshot\"; size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]", "Names starting \"snapshot\" are reserved"},
  {"vgs = ({ device_size = \"64M\"; lvs = ({ type = \"thin-pool\"; size = "
   "\"4M\"; chunk_size = \"8M\"; }); });",
   "vgs.[0].lvs.[0]",
   "Size of thin-pool data volume cannot be smaller than chunk size"},
  {"vgs = ({ device_size = \"64M\"; lvs = ({ name = \"a\"; type = "
   "\"thin-pool\"; size = \"8M\"; },\n { name = \"b\"; type = \"thin-pool\"; "
   "size = \"8M\"; metadata_size = \"8M\"; }); });",
   "t:2: vgs.[0].lvs.[1]", "not supported yet: its metadata (2 extents)"},
};

static void
test_errors(void **state)
{
  (void)state;
  ff_test_refused(bad, sizeof bad / sizeof *bad, 0);
  ff_test_refused(bad_farm, sizeof bad_farm / sizeof *bad_farm, 1);
}

/* lvcreate's chunk and metadata sizes: what lvm 2.03.16 chose on a 3 TiB
 * PV with 4 MiB extents (research notes §2.3, tp3). */
static void
test_sizes(void **state)
{
  struct ff_farm *farm =
    ff_test_farm("vgs = ({ device_size = \"3T\"; lvs = (\n"
                 " { name = \"p1\"; type = \"thin-pool\"; size = \"1T\"; },\n"
                 " { name = \"p2\"; type = \"thin-pool\"; size = \"100M\"; "
                 "metadata_size = \"8M\"; },\n"
                 " { name = \"p3\"; type = \"thin-pool\"; size = \"200M\"; "
                 "chunk_size = \"256K\"; },\n"
                 " { name = \"p4\"; type = \"thin-pool\"; size = \"10G\"; },\n"
                 " { name = \"p5\"; type = \"thin-pool\"; size = \"20G\"; "
                 "metadata_size = \"6M\"; }); });");
  static const struct {
    const char *pool, *tmeta;
    uint32_t chunk;
    uint64_t meta_ext, at;
  } want[] = {
    {"p1", "p1_tmeta", 1024, 32, 262176}, {"p2", "p2_tmeta", 128, 2, 262233},
    {"p3", "p3_tmeta", 512, 1, 262285},   {"p4", "p4_tmeta", 128, 3, 264846},
    {"p5", "p5_tmeta", 512, 2, 269969},
  };
  const struct ff_vg *vg = &farm->vgs[0];

  (void)state;
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const struct ff_lv *p = ff_test_lv(vg, want[i].pool);
    const struct ff_lv *tm = ff_test_lv(vg, want[i].tmeta);

    assert_int_equal(p->chunk, want[i].chunk);
    assert_int_equal(tm->extents, want[i].meta_ext);
    assert_int_equal(tm->segs[0].areas[0].pe, want[i].at);
  }
  /* the spare: made by p1, its size */
  assert_int_equal(ff_test_lv(vg, "lvol0_pmspare")->extents, 32);
  assert_int_equal(ff_test_lv(vg, "lvol0_pmspare")->segs[0].areas[0].pe, 0);
  assert_int_equal(vg->seqno, 1 + 3 + 4 * 2);
  ff_farm_free(farm);
}

static const char pool_spec[] =
  "vgs = ({ name = \"vg\"; pvs = %u; device_size = \"64M\"; lvs = (\n"
  " { name = \"lvol3\"; size = \"4M\"; },\n"
  " { name = \"pool\"; type = \"thin-pool\"; size = \"16M\"; zero = false; "
  "},\n"
  " { name = \"thin1\"; type = \"thin\"; pool = \"pool\"; size = \"20M\"; },\n"
  " { name = \"thin2\"; type = \"thin\"; pool = \"pool\"; size = \"40M\"; },\n"
  " { name = \"snap\"; type = \"snapshot\"; origin = \"lvol3\"; size = "
  "\"40M\"; cow_header = true; }); });";

/* The text of write w (1-based) of the VG. */
static const char *
text(const struct ff_farm *farm, uint32_t w)
{
  return farm->vgs[0].texts[w - 1].buf;
}

static void
test_texts(void **state)
{
  char spec[2048];
  struct ff_farm *farm;

  (void)state;
  snprintf(spec, sizeof spec, pool_spec, 1u);
  farm = ff_test_farm(spec);
  /* vgcreate, lvol3, pool 3, thins 2 + 2, snapshot 2 */
  assert_int_equal(farm->vgs[0].seqno, 1 + 1 + 3 + 4 + 2);
  /* pool write 1: the spare as lvol4 (after lvol3), visible */
  assert_non_null(strstr(text(farm, 3), "\nlvol4 {\n"));
  assert_null(strstr(text(farm, 3), "\npool {"));
  /* write 2: the pool over its metadata area, the spare hidden */
  assert_non_null(strstr(text(farm, 4), "\npool {\n"));
  assert_non_null(strstr(text(farm, 4), "\nlvol4_pmspare {\n"));
  assert_null(strstr(text(farm, 4), "type = \"thin-pool\""));
  assert_non_null(strstr(text(farm, 4), "Write[2] from lvcreate"));
  /* write 3: the pool; -Zn: no zero_new_blocks */
  assert_non_null(strstr(text(farm, 5),
                         "type = \"thin-pool\"\nmetadata = "
                         "\"pool_tmeta\"\npool = \"pool_tdata\"\n"
                         "transaction_id = 0\nchunk_size = 128\n"
                         "discards = \"passdown\"\n}\n"));
  assert_non_null(strstr(text(farm, 5), "Write[3] from lvcreate"));
  /* thin1 write 1: the queued message; write 2 without it */
  assert_non_null(strstr(text(farm, 6),
                         "transaction_id = 1\nchunk_size = 128\ndiscards = "
                         "\"passdown\"\n\nmessage1 {\ncreate = \"thin1\"\n}"));
  assert_null(strstr(text(farm, 7), "message1"));
  assert_non_null(strstr(text(farm, 9), "type = \"thin\"\nthin_pool = "
                                        "\"pool\"\ntransaction_id = 1\n"
                                        "device_id = 2\n}"));
  assert_non_null(strstr(text(farm, 9), "transaction_id = 2\nchunk_size"));
  /* the snapshot: the COW visible in write 1, snapshot0 in write 2 over
   * the origin's extents; 40M cut to what an 4M origin can use: 2
   * extents (1 header + 1024 + 1 metadata chunks of 4 KiB) */
  assert_non_null(strstr(text(farm, 10), "\nsnap {\nid = "));
  assert_null(strstr(text(farm, 10), "snapshot0"));
  assert_non_null(strstr(text(farm, 11),
                         "type = \"snapshot\"\nchunk_size = 8\n"
                         "origin = \"lvol3\"\ncow_store = "
                         "\"snap\"\n}"));
  assert_int_equal(ff_test_lv(&farm->vgs[0], "snap")->extents, 2);
  assert_int_equal(ff_test_lv(&farm->vgs[0], "snapshot0")->extents, 1);
  ff_farm_free(farm);
}

/* Allocation: one PV: spare, tdata, then tmeta after it; two PVs: tmeta
 * on the other PV (research notes §2.2, tp1, tp2). */
/* lvcreate --addtag: the LV's own tags, the pool's from its write 2 on
 * (scenario tg of test-byte-identical). */
static void
test_tags(void **state)
{
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ lvs = ( { name = \"pool\"; type = \"thin-pool\"; size "
    "= \"8M\"; tags = [\"pa\"]; },\n { name = \"t\"; type = "
    "\"thin\"; pool = \"pool\"; size = \"8M\"; tags = [\"ta\"]; "
    "}); });");

  (void)state;
  assert_null(strstr(text(farm, 2), "tags"));
  assert_non_null(strstr(text(farm, 3), "\npool {\nid = "));
  assert_non_null(strstr(text(farm, 3), "flags = []\ntags = [\"pa\"]\n"));
  assert_non_null(strstr(text(farm, 5), "tags = [\"ta\"]"));
  /* one tags line each: not on the spare, tmeta, tdata */
  assert_null(
    strstr(strstr(text(farm, 6), "tags = [\"pa\"]") + 1, "tags = [\"pa\"]"));
  ff_farm_free(farm);
}

static void
test_alloc(void **state)
{
  char spec[2048];
  struct ff_farm *farm;
  const struct ff_vg *vg;

  (void)state;
  snprintf(spec, sizeof spec, pool_spec, 1u);
  farm = ff_test_farm(spec);
  vg = &farm->vgs[0];
  assert_int_equal(ff_test_lv(vg, "lvol4_pmspare")->segs[0].areas[0].pe, 1);
  assert_int_equal(ff_test_lv(vg, "pool_tdata")->segs[0].areas[0].pe, 2);
  assert_int_equal(ff_test_lv(vg, "pool_tmeta")->segs[0].areas[0].pe, 6);
  ff_farm_free(farm);
  snprintf(spec, sizeof spec, pool_spec, 2u);
  farm = ff_test_farm(spec);
  vg = &farm->vgs[0];
  /* each candidate gives what is asked: ties in PV order */
  assert_int_equal(ff_test_lv(vg, "lvol4_pmspare")->segs[0].areas[0].pv, 0);
  assert_int_equal(ff_test_lv(vg, "lvol4_pmspare")->segs[0].areas[0].pe, 1);
  assert_int_equal(ff_test_lv(vg, "pool_tdata")->segs[0].areas[0].pv, 0);
  assert_int_equal(ff_test_lv(vg, "pool_tdata")->segs[0].areas[0].pe, 2);
  assert_int_equal(ff_test_lv(vg, "pool_tmeta")->segs[0].areas[0].pv, 1);
  assert_int_equal(ff_test_lv(vg, "pool_tmeta")->segs[0].areas[0].pe, 0);
  ff_farm_free(farm);
}

/* The tmeta holds ff_thinmeta's image of lvm's -an sequence; the COW the
 * kernel's header. */
static void
test_bytes(void **state)
{
  char spec[2048];
  struct ff_farm *farm;
  const struct ff_vg *vg;
  const struct ff_lv *tm, *cow;
  struct ff_thinmeta_op *ops;
  struct ff_thinmeta *m;
  size_t n;
  uint8_t *a, *b;
  uint64_t off;
  static const uint8_t head[16] = {0x53, 0x6e, 0x41, 0x70, 1, 0, 0, 0,
                                   1,    0,    0,    0,    8, 0, 0, 0};

  (void)state;
  snprintf(spec, sizeof spec, pool_spec, 1u);
  farm = ff_test_farm(spec);
  vg = &farm->vgs[0];
  tm = ff_test_lv(vg, "pool_tmeta");
  off = vg->fmt.pe_start + tm->segs[0].areas[0].pe * vg->extent_size;
  assert_ok(
    ff_thinmeta_parse_ops("open resize:256 commit close "
                          "open create:1 commit trans:0:1 commit close "
                          "open create:2 commit trans:1:2 commit close",
                          &ops, &n));
  m = ff_thinmeta_build(4 << 20, 128, ops, n);
  assert_nonnull_err(m);
  a = malloc(4 << 20);
  b = malloc(4 << 20);
  assert_non_null(a);
  assert_non_null(b);
  assert_ok(ff_farm_read(farm, 0, a, off, 4 << 20));
  ff_thinmeta_read(m, 0, 4 << 20, b);
  assert_memory_equal(a, b, 4 << 20);
  cow = ff_test_lv(vg, "snap");
  assert_ok(ff_farm_read(
    farm, 0, a, vg->fmt.pe_start + cow->segs[0].areas[0].pe * vg->extent_size,
    4096));
  assert_memory_equal(a, head, 16);
  for (int i = 16; i < 4096; i++)
    assert_int_equal(a[i], 0);
  free(a);
  free(b);
  free(ops);
  ff_thinmeta_free(m);
  ff_farm_free(farm);
}

/* lvremove of thin LVs: the pool's delete message in the first of two
 * writes, each at its write_times entry; the origin of a live snapshot
 * kept as a historical LV (removal_time: the first write's), the
 * snapshot without its origin line; a linear LV's lvremove writes once. */
static void
test_lvremove(void **state)
{
  static const struct ff_test_bad refused[] = {
    {"vgs = ({ lvs = ({ name = \"l\"; size = \"4M\"; }); changes = ({ "
     "command = \"lvremove\";\n lv = \"l\"; write_times = [1, 2]; }); });",
     "t:1: vgs.[0].changes.[0]",
     "write_times: lvremove of a linear LV writes once (give time)"},
  };
  struct ff_farm *farm = ff_test_farm(
    "vgs = ({ lvs = ({ name = \"p\"; type = \"thin-pool\"; size = \"8M\"; "
    "},\n { name = \"t\"; type = \"thin\"; pool = \"p\"; size = \"8M\"; "
    "time = 50; },\n { name = \"s\"; type = \"thin\"; origin = \"t\"; });\n"
    " changes = ({ command = \"lvremove\"; lv = \"t\"; record_lvs_history = "
    "true;\n write_times = [100, 101]; }); });");
  const struct ff_vg *vg = &farm->vgs[0];
  const char *w1 = vg->texts[vg->seqno - 2].buf,
             *w2 = vg->texts[vg->seqno - 1].buf;

  (void)state;
  assert_non_null(strstr(w1, "message1 {\ndelete = 1\n}"));
  assert_null(strstr(w2, "message1"));
  assert_non_null(strstr(w1, "transaction_id = 3\n"));
  assert_non_null(strstr(w1, "historical_logical_volumes {\n\nt {\n"));
  assert_non_null(strstr(w1, "creation_time = 50\nremoval_time = 100\n"
                             "descendants = [\"s\"]\n}\n}\n}\n"));
  assert_non_null(strstr(w2, "removal_time = 100\n"));
  assert_non_null(strstr(w1, "\ncreation_time = 100\t#"));
  assert_non_null(strstr(w2, "\ncreation_time = 101\t#"));
  assert_non_null(strstr(w2, "Write[2] from lvremove vg0000/t."));
  assert_null(strstr(w2, "origin = \"t\""));
  /* t only as the historical LV now: once, after the live ones */
  assert_ptr_equal(strstr(w2, "\nt {\n"), strstr(w2, "\n\nt {\n") + 1);
  assert_null(strstr(strstr(w2, "\nt {\n") + 1, "\nt {\n"));
  ff_farm_free(farm);
  ff_test_refused(refused, sizeof refused / sizeof *refused, 1);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_errors),   cmocka_unit_test(test_sizes),
    cmocka_unit_test(test_texts),    cmocka_unit_test(test_tags),
    cmocka_unit_test(test_alloc),    cmocka_unit_test(test_bytes),
    cmocka_unit_test(test_lvremove),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
