/* The scenario parser: shipped scenarios, defaults, the matrix, and bad
 * inputs with the message each must give. */
#include "ff-scenario.h"
#include "ff-stats-ci.h"
#include "ff-test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
test_shipped(void **state)
{
  static const char *const names[] = {
    "ci-small", "suse-1258-event-activation", "suse-scaling",
    "aio-contention-lvchange", "latency-tail"};

  (void)state;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char path[4200];
    struct ff_scenario *sc;

    snprintf(path, sizeof path, "%s/configs/scenarios/%s.conf",
             ff_test_srcdir(), names[i]);
    sc = ff_scenario_load_file(path);
    assert_nonnull_err(sc);
    assert_string_equal(sc->name, names[i]);
    assert_true(sc->nworkloads > 0);
    if (ff_scenario_axis(sc, "fusefarm/spec")) {
      /* the axis names the farms, resolved against the scenario */
      const struct ff_axis *sx = ff_scenario_axis(sc, "fusefarm/spec");

      assert_null(sc->spec);
      for (unsigned v = 0; v < sx->nvalues; v++)
        assert_true(sx->values[v].s[0] == '/');
    } else {
      assert_non_null(sc->spec);
      assert_true(sc->spec[0] == '/');
    }
    ff_scenario_free(sc);
  }
}

static void
test_builtin_and_matrix(void **state)
{
  struct ff_scenario *sc =
    ff_scenario_load_string(ff_scenario_builtin_default, "<built-in>", NULL);
  unsigned idx[2];

  (void)state;
  assert_nonnull_err(sc);
  assert_int_equal(sc->naxes, 2);
  assert_int_equal(ff_scenario_nconfigs(sc), 4);
  /* The first axis varies slowest. */
  ff_scenario_config(sc, 0, idx);
  assert_int_equal(idx[0], 0);
  assert_int_equal(idx[1], 0);
  ff_scenario_config(sc, 1, idx);
  assert_int_equal(idx[0], 0);
  assert_int_equal(idx[1], 1);
  ff_scenario_config(sc, 2, idx);
  assert_int_equal(idx[0], 1);
  assert_int_equal(idx[1], 0);
  assert_non_null(ff_scenario_axis(sc, "global/use_aio"));
  assert_null(ff_scenario_axis(sc, "global/nope"));
  assert_string_equal(sc->lvm, "lvm");
  /* no fence beyond the runner's private /dev, named as the hints say */
  assert_string_equal(sc->fence, "none");
  assert_string_equal(sc->dev_names, "farm");
  assert_int_equal(sc->workloads[0].type, FF_W_PVS);
  assert_int_equal(sc->workloads[0].repeat, 4);
  assert_false(sc->workloads[0].repeat_auto);
  assert_int_equal(sc->workloads[2].type, FF_W_EVENT_ACTIVATION);
  assert_int_equal(sc->workloads[2].concurrency, 64);
  /* the verdict judges every ratio: each workload is repeated as often
   * as its 95% interval needs (ff_ci_enough) */
  for (unsigned w = 0; w < sc->nworkloads; w++)
    assert_true(
      ff_ci_enough(sc->workloads[w].repeat, sc->workloads[w].repeat));
  ff_scenario_free(sc);
}

static void
test_paths_and_values(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "spec = \"farm.conf\"; profile = \"p/hdd.conf\"; lvm = \"/opt/lvm\";\n"
    "matrix = ({ key = \"fusefarm/profile\"; values = [\"ideal\", "
    "\"x.conf\", \"builtin:fixed-1ms\"]; },\n"
    "          { key = \"devices/hints\"; values = [\"none\", \"all\"]; });\n"
    "workloads = ({ type = \"event-activation\"; spread = \"2s\"; "
    "concurrency = 8; },\n"
    "             { type = \"lvchange\"; lv = \"vg/lv\"; count = 5; });\n",
    "t", "/base");

  (void)state;
  assert_nonnull_err(sc);
  assert_string_equal(sc->spec, "/base/farm.conf");
  assert_string_equal(sc->profile, "/base/p/hdd.conf");
  assert_string_equal(sc->lvm, "/opt/lvm");
  assert_string_equal(sc->axes[0].values[0].s, "ideal");
  assert_string_equal(sc->axes[0].values[1].s, "/base/x.conf");
  assert_string_equal(sc->axes[0].values[2].s, "builtin:fixed-1ms");
  assert_string_equal(sc->axes[1].values[1].s, "all");
  assert_int_equal(sc->workloads[0].spread_ns, 2000000000ull);
  assert_int_equal(sc->workloads[0].concurrency, 8);
  assert_string_equal(sc->workloads[1].lv, "vg/lv");
  assert_int_equal(ff_scenario_nconfigs(sc), 6);
  assert_string_equal(sc->attach, "loop");
  assert_null(sc->farm);
  ff_scenario_free(sc);
}

static const struct {
  const char *text, *want1, *want2;
} bad[] = {
  {"", "workloads", "missing"},
  {"workloads = ();", "workloads", "non-empty"},
  {"workloads = ({ type = \"pvs\"; repeat = \"often\"; });",
   "t:1: workloads.[0].repeat", "'often' is not a repeat"},
  {"workloads = ({ type = \"pvs\"; repeat = 2.5; });", "workloads.[0].repeat",
   "expected an integer"},
  {"repeat_budget = \"soon\";\nworkloads = ({ type = \"pvs\"; });",
   "t:1: repeat_budget", "'soon' is not a duration"},
  {"repeat_budget = \"0s\";\nworkloads = ({ type = \"pvs\"; });",
   "t:1: repeat_budget", "a budget of 0"},
  {"repeat_max_rounds = 3;\nworkloads = ({ type = \"pvs\"; });",
   "t:1: repeat_max_rounds", "3 is out of range (expected 4 to 1000)"},
  {"colour = 1; workloads = ({ type = \"pvs\"; });", "t:1: colour",
   "unknown key"},
  {"workloads = ({ type = \"fsck\"; });", "workloads.[0].type",
   "unknown workload 'fsck'"},
  {"workloads = ({ });", "workloads.[0].type", "missing"},
  {"fence = \"lvmetad\"; workloads = ({ type = \"pvs\"; });", "t:1: fence",
   "fence \"lvmetad\": expected \"none\", \"devicesfile\", "
   "\"devicesfile-all\", \"devicesfile-used\" or \"filter\""},
  {"fence = 0; workloads = ({ type = \"pvs\"; });", "t:1: fence", "string"},
  {"dev_names = \"nvme\"; workloads = ({ type = \"pvs\"; });",
   "t:1: dev_names", "unknown naming 'nvme'"},
  {"matrix = ({ key = \"fusefarm/fence\"; values = [\"udev\"]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "matrix.[0].values", "value 0 'udev' does not fit fusefarm/fence"},
  {"workloads = ({ type = \"pvs\"; repeat = 0; });", "workloads.[0].repeat",
   "out of range"},
  {"workloads = ({ type = \"pvs\"; concurrency = 4; });",
   "workloads.[0].concurrency", "only event-activation"},
  {"workloads = ({ type = \"lvchange\"; lv = \"novg\"; });",
   "workloads.[0].lv", "not VG/LV"},
  {"workloads = ({ type = \"event-activation\"; spread = \"2\"; });",
   "workloads.[0].spread", "no unit"},
  {"workloads = ({ type = \"pvs\"; }, { type = \"pvs\"; });", "workloads.[1]",
   "already named 'pvs'"},
  {"matrix = ({ key = \"use_aio\"; values = [0]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "matrix.[0].key", "not SECTION/NAME"},
  {"matrix = ({ key = \"fusefarm/colour\"; values = [0]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "matrix.[0].key", "unknown runner setting"},
  {"matrix = ({ key = \"global/use_aio\"; values = []; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "matrix.[0].values", "is empty"},
  {"matrix = ({ key = \"global/use_aio\"; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "matrix.[0].values", "expected a list"},
  {"matrix = ({ key = \"fusefarm/aio_contention\"; values = [2]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "matrix.[0].values", "0 or 1"},
  {"matrix = ({ key = \"global/use_aio\"; values = [0]; },\n"
   "          { key = \"global/use_aio\"; values = [1]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "t:2: matrix.[1]", "already an axis"},
  {"profile = \"a.conf\"; latency = \"1ms\"; workloads = ({ type = \"pvs\"; "
   "});",
   "latency", "not both"},
  {"devices = 0; workloads = ({ type = \"pvs\"; });", "devices",
   "out of range"},
  {"workloads = ({ type = \"pvs\"; }", "t:1: syntax error", ""},
  /* libconfig 1.5 would read 4294967297 as 1. */
  {"devices = 4294967297; workloads = ({ type = \"pvs\"; });",
   "t:1: syntax error: integer 4294967297 is out of range", "4294967297L"},
  {"spec = \"a.conf\"; farm = \"seed = 1;\"; workloads = ({ type = \"pvs\"; "
   "});",
   "farm", "not both"},
  {"attach = \"iscsi\"; workloads = ({ type = \"pvs\"; });", "attach",
   "unknown attach method 'iscsi'"},
  {"matrix = ({ key = \"a/b\"; values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]; "
   "},\n{ key = \"a/c\"; values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]; },\n"
   "{ key = \"a/d\"; values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]; },\n"
   "{ key = \"a/e\"; values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "t:1: matrix: crosses into 11000 configurations", "at most 10000"},
  {"lvm = [];\nworkloads = ({ type = \"pvs\"; });", "t:1: lvm: is empty",
   "a list of builds"},
  {"lvm = (\"/usr/sbin/lvm\", 3);\nworkloads = ({ type = \"pvs\"; });",
   "t:1: lvm: entry 1", "a git ref"},
  {"lvm = [\"/a/lvm\", \"v2_03_12\"];\n"
   "matrix = ({ key = \"fusefarm/lvm\"; values = [\"/b/lvm\"]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "t:1: lvm: a list of builds and a fusefarm/lvm axis", "give one"},
  {"matrix = ({ key = \"fusefarm/lvm\"; values = [2]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "value 0 2 does not fit fusefarm/lvm", "a name on PATH or a git ref"},
  {"lvm_git = 3;\nworkloads = ({ type = \"pvs\"; });", "lvm_git", "string"},
  /* dm and fusefarm/dm: auto, real or none */
  {"dm = 1;\nworkloads = ({ type = \"pvs\"; });", "dm", "string"},
  {"dm = \"on\";\nworkloads = ({ type = \"pvs\"; });",
   "t:1: dm: unknown device-mapper mode 'on'", "\"real\" or \"none\""},
  {"matrix = ({ key = \"fusefarm/dm\"; values = (\"real\", 1); });\n"
   "workloads = ({ type = \"pvs\"; });",
   "value 1 1 does not fit fusefarm/dm", "\"auto\", \"real\" or \"none\""},
  /* io workloads: every bad value names the line and the key */
  {"workloads = ({ type = \"io\"; });", "t:1: workloads.[0].target",
   "missing (expected a farm device"},
  {"workloads = ({ type = \"io\";\n target = \"a/b/c\"; });",
   "t:2: workloads.[0].target", "'a/b/c' is not a device name or VG/LV"},
  {"workloads = ({ type = \"io\";\n target = \"pv:1\"; });",
   "t:2: workloads.[0].target", "not a device name"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n rw = \"trim\"; });",
   "t:2: workloads.[0].rw", "unknown rw 'trim' (expected read, write,"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n bs = \"4Q\"; });",
   "t:2: workloads.[0].bs", ""},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n bs = 1000; });",
   "t:2: workloads.[0].bs", "not a multiple of 512"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n bs = 0; });",
   "t:2: workloads.[0].bs", "out of range"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n iodepth = 0; });",
   "t:2: workloads.[0].iodepth", "out of range"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n iodepth = 1025; });",
   "t:2: workloads.[0].iodepth", "out of range"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n direct = 2; });",
   "t:2: workloads.[0].direct", ""},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n ioengine = \"mmap\"; "
   "});",
   "t:2: workloads.[0].ioengine", "unknown ioengine 'mmap'"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n size = \"6K\"; });",
   "t:2: workloads.[0].size", "not a multiple of bs"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n runtime = \"5\"; });",
   "t:2: workloads.[0].runtime", "no unit"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n runtime = \"500ms\"; "
   "});",
   "t:2: workloads.[0].runtime", "under 1 s"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n fsync = -1; });",
   "t:2: workloads.[0].fsync", "out of range"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n fdatasync = \"x\"; "
   "});",
   "t:2: workloads.[0].fdatasync", ""},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n numjobs = 0; });",
   "t:2: workloads.[0].numjobs", "out of range"},
  {"workloads = ({ type = \"pvs\";\n target = \"pv0001\"; });",
   "t:2: workloads.[0].target", "only io and fs workloads take target"},
  {"workloads = ({ type = \"lvchange\";\n rw = \"read\"; });",
   "t:2: workloads.[0].rw", "only io and fs workloads take rw"},
  /* fs workloads and the axes of io and fs workloads */
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n nrfiles = 3; });",
   "t:2: workloads.[0].nrfiles", "only fs workloads take nrfiles"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n fstype = \"xfs\"; "
   "});",
   "t:2: workloads.[0].fstype", "only fs workloads take fstype"},
  {"workloads = ({ type = \"fs\"; });", "t:1: workloads.[0].target",
   "missing"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n fstype = "
   "\"btrfs\"; });",
   "t:2: workloads.[0].fstype",
   "unknown fstype 'btrfs' (expected ext4 or xfs)"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n mount_options = "
   "\"logbufs=8, logbsize=256k\"; });",
   "t:2: workloads.[0].mount_options", "has a blank"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n mkfs_options = "
   "\"-L 'my fs'\"; });",
   "t:2: workloads.[0].mkfs_options", "has a quote"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\"; size = \"8K\";\n "
   "nrfiles = 4; });",
   "t:1: workloads.[0].size", "less than one bs"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n nrfiles = 0; });",
   "t:2: workloads.[0].nrfiles", "out of range"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n fs_tunables = "
   "\"mb_prefetch_limit\"; });",
   "t:2: workloads.[0].fs_tunables",
   "'mb_prefetch_limit': expected KEY=VALUE[,KEY=VALUE...]"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n fs_tunables = "
   "\"a=1,B=2\"; });",
   "t:2: workloads.[0].fs_tunables", "expected KEY=VALUE"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n fs_tunables = "
   "\"a=1,\"; });",
   "t:2: workloads.[0].fs_tunables", "'a=1,': ends with a comma"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n fs_tunables = "
   "\"a=\"; });",
   "t:2: workloads.[0].fs_tunables", "the value of a is empty"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n fs_tunables = "
   "\"a=x y\"; });",
   "t:2: workloads.[0].fs_tunables", "has a slash, a blank or a quote"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\";\n mkdirs = 0; });",
   "t:2: workloads.[0].mkdirs", "out of range"},
  {"workloads = ({ type = \"fs\"; target = \"pv0001\"; mkdirs = 5;\n "
   "nrfiles = 2; });",
   "t:1: workloads.[0].mkdirs", "give mkdirs or nrfiles, not both"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n mkdirs = 3; });",
   "t:2: workloads.[0].mkdirs", "only fs workloads take mkdirs"},
  {"matrix = ({ key = \"fusefarm/fs_tunables\"; values = [\"\"]; });\n"
   "workloads = ({ type = \"io\"; target = \"pv0001\"; });",
   "t:1: matrix.[0]", "fusefarm/fs_tunables changes fs workloads"},
  {"matrix = ({ key = \"fusefarm/fs_tunables\"; values = [\"a=/x\"]; });\n"
   "workloads = ({ type = \"fs\"; target = \"pv0001\"; });",
   "t:1: matrix.[0].values",
   "value 0 'a=/x' does not fit fusefarm/fs_tunables (expected sysfs "
   "tunables"},
  {"matrix = ({ key = \"fusefarm/target\"; values = [\"pv0001\"]; });\n"
   "workloads = ({ type = \"pvs\"; });",
   "t:1: matrix.[0]",
   "fusefarm/target changes io and fs workloads, and this "
   "scenario has none"},
  {"matrix = ({ key = \"fusefarm/mount_options\"; values = [\"\"]; });\n"
   "workloads = ({ type = \"io\"; target = \"pv0001\"; });",
   "t:1: matrix.[0]", "fusefarm/mount_options changes fs workloads"},
  {"matrix = ({ key = \"fusefarm/target\"; values = [\"pv0001\", \"a/b/c\"]; "
   "});\nworkloads = ({ type = \"io\"; target = \"pv0001\"; });",
   "t:1: matrix.[0].values", "value 1 'a/b/c' does not fit fusefarm/target"},
  {"matrix = ({ key = \"fusefarm/fstype\"; values = [\"ext3\"]; });\n"
   "workloads = ({ type = \"fs\"; target = \"pv0001\"; });",
   "t:1: matrix.[0].values",
   "value 0 'ext3' does not fit fusefarm/fstype (expected "
   "\"ext4\" or \"xfs\")"},
  {"matrix = ({ key = \"fusefarm/mount_options\"; values = [8]; });\n"
   "workloads = ({ type = \"fs\"; target = \"pv0001\"; });",
   "t:1: matrix.[0].values", "value 0 8 does not fit fusefarm/mount_options"},
  {"matrix = ({ key = \"fusefarm/transport\";\n values = [\"scsi\", "
   "\"iscsi\"]; });",
   "t:2: matrix.[0].values",
   "value 1 'iscsi' is not a transport of fusefarm/transport (expected "
   "\"scsi\" or \"nbd\")"},
  {"matrix = ({ key = \"fusefarm/transport\"; values = [1]; });",
   "t:1: matrix.[0].values", "value 0 1 is not a transport"},
  {"matrix = ({ key = \"fusefarm/transport\"; values = [\"NBD\"]; });",
   "t:1: matrix.[0].values", "value 0 'NBD' is not a transport"},
  {"workloads = ({ type = \"io\"; target = \"pv0001\";\n count = 3; });",
   "t:2: workloads.[0].count", "only lvchange workloads take count"},
};

static void
test_fence_keys(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "fence = \"filter\"; dev_names = \"disk\";\n"
    "matrix = ({ key = \"fusefarm/fence\";\n"
    "            values = [\"none\", \"devicesfile\", \"filter\"]; });\n"
    "workloads = ({ type = \"pvs\"; });",
    "t", "/b");

  (void)state;
  assert_nonnull_err(sc);
  assert_string_equal(sc->fence, "filter");
  assert_string_equal(sc->dev_names, "disk");
  assert_int_equal(ff_scenario_nconfigs(sc), 3);
  assert_string_equal(ff_scenario_axis(sc, "fusefarm/fence")->values[1].s,
                      "devicesfile");
  assert_true(ff_scenario_fence_valid("none"));
  assert_false(ff_scenario_fence_valid("None"));
  assert_false(ff_scenario_fence_valid(NULL));
  ff_scenario_free(sc);
}

/* lvm: one string stays the scenario's lvm; a list is the fusefarm/lvm
 * axis, the first of the matrix, its entries as given (paths, names on
 * PATH and git refs alike: fusefarm run resolves them); lvm_git is
 * resolved against the scenario's directory, a URL kept; --lvm replaces
 * both (ff_scenario_set_lvms). */
static void
test_lvm_list(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "lvm = [\"/usr/sbin/lvm\", \"v2_03_12\", \"builds/lvm\"];\n"
    "lvm_git = \"../lvm2\";\n"
    "matrix = ({ key = \"global/use_aio\"; values = [1, 0]; });\n"
    "workloads = ({ type = \"pvs\"; });",
    "t", "/b/sc");
  const struct ff_axis *ax;
  const char *two[] = {"/x/lvm", "v2_03_05"}, *one[] = {"/y/lvm"};
  unsigned idx[2];

  (void)state;
  assert_nonnull_err(sc);
  assert_int_equal(sc->naxes, 2);
  assert_string_equal(sc->axes[0].key, "fusefarm/lvm");
  assert_string_equal(sc->axes[1].key, "global/use_aio");
  assert_int_equal(ff_scenario_nconfigs(sc), 6);
  ax = ff_scenario_axis(sc, "fusefarm/lvm");
  assert_non_null(ax);
  assert_int_equal(ax->nvalues, 3);
  assert_string_equal(ax->values[1].s, "v2_03_12");
  assert_string_equal(ax->values[2].s, "builds/lvm");
  assert_string_equal(sc->lvm, "/usr/sbin/lvm");
  assert_string_equal(sc->lvm_git, "/b/sc/../lvm2");
  assert_string_equal(sc->dir, "/b/sc");
  /* the builds vary slowest: each build's configurations side by side */
  ff_scenario_config(sc, 2, idx);
  assert_int_equal(idx[0], 1);
  assert_int_equal(idx[1], 0);

  /* --lvm A --lvm B replaces the list; one --lvm drops the axis */
  assert_ok(ff_scenario_set_lvms(sc, two, 2));
  ax = ff_scenario_axis(sc, "fusefarm/lvm");
  assert_int_equal(ax->nvalues, 2);
  assert_string_equal(ax->values[1].s, "v2_03_05");
  assert_string_equal(sc->axes[0].key, "fusefarm/lvm");
  assert_int_equal(sc->naxes, 2);
  assert_ok(ff_scenario_set_lvms(sc, one, 1));
  assert_null(ff_scenario_axis(sc, "fusefarm/lvm"));
  assert_int_equal(sc->naxes, 1);
  assert_string_equal(sc->lvm, "/y/lvm");
  assert_int_equal(ff_scenario_nconfigs(sc), 2);
  ff_scenario_free(sc);

  /* one string: no axis, as before; a URL is kept */
  sc = ff_scenario_load_string("lvm = \"lvm\"; lvm_git = "
                               "\"https://example.org/lvm2.git\";\n"
                               "workloads = ({ type = \"pvs\"; });",
                               "t", "/b");
  assert_nonnull_err(sc);
  assert_int_equal(sc->naxes, 0);
  assert_string_equal(sc->lvm, "lvm");
  assert_string_equal(sc->lvm_git, "https://example.org/lvm2.git");
  /* --lvm twice makes an axis where there was none */
  assert_ok(ff_scenario_set_lvms(sc, two, 2));
  assert_int_equal(sc->naxes, 1);
  assert_int_equal(ff_scenario_nconfigs(sc), 2);
  assert_string_equal(sc->lvm, "/x/lvm");
  ff_scenario_free(sc);

  /* a matrix axis fusefarm/lvm is the same as the list */
  sc = ff_scenario_load_string(
    "matrix = ({ key = \"fusefarm/fence\"; values = [\"none\"]; },\n"
    "          { key = \"fusefarm/lvm\"; values = [\"a\", \"b\"]; });\n"
    "workloads = ({ type = \"pvs\"; });",
    "t", "/b");
  assert_nonnull_err(sc);
  assert_int_equal(ff_scenario_nconfigs(sc), 2);
  assert_int_equal(ff_scenario_axis(sc, "fusefarm/lvm")->nvalues, 2);
  assert_int_equal(ff_scenario_set_lvms(sc, (const char *[]){""}, 1), -1);
  assert_non_null(strstr(ff_errmsg(), "--lvm ''"));
  ff_scenario_free(sc);
}

/* io: the defaults, every key given, and the LV target form. */
static void
test_io_keys(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "workloads = ({ type = \"io\"; target = \"pv0001\"; },\n"
    "  { type = \"io\"; name = \"w\"; target = \"vg0001/lv0001\";\n"
    "    rw = \"randrw\"; bs = \"64K\"; iodepth = 32; direct = false;\n"
    "    ioengine = \"io_uring\"; size = \"1M\"; runtime = \"2s\";\n"
    "    fsync = 4; fdatasync = 8; numjobs = 2; repeat = 3; },\n"
    "  { type = \"io\"; name = \"b\"; target = \"pv0002\"; bs = 1000;\n"
    "    direct = false; size = 3000; });",
    "t", "/b");
  const struct ff_io_job *io;

  (void)state;
  assert_nonnull_err(sc);
  assert_int_equal(sc->nworkloads, 3);
  assert_int_equal(sc->workloads[0].type, FF_W_IO);
  assert_string_equal(ff_wtype_name(FF_W_IO), "io");
  assert_string_equal(sc->workloads[0].name, "io");
  io = &sc->workloads[0].io;
  assert_string_equal(io->target, "pv0001");
  assert_string_equal(io->rw, "randread");
  assert_int_equal(io->bs, 4096);
  assert_int_equal(io->iodepth, 1);
  assert_int_equal(io->direct, 1);
  assert_string_equal(io->ioengine, "libaio");
  assert_int_equal(io->size, 16 << 20);
  assert_int_equal(io->runtime_ns, 0);
  assert_int_equal(io->fsync, 0);
  assert_int_equal(io->fdatasync, 0);
  assert_int_equal(io->numjobs, 1);
  io = &sc->workloads[1].io;
  assert_string_equal(io->target, "vg0001/lv0001");
  assert_string_equal(io->rw, "randrw");
  assert_int_equal(io->bs, 65536);
  assert_int_equal(io->iodepth, 32);
  assert_int_equal(io->direct, 0);
  assert_string_equal(io->ioengine, "io_uring");
  assert_int_equal(io->size, 1 << 20);
  assert_int_equal(io->runtime_ns, 2000000000ull);
  assert_int_equal(io->fsync, 4);
  assert_int_equal(io->fdatasync, 8);
  assert_int_equal(io->numjobs, 2);
  assert_int_equal(sc->workloads[1].repeat, 3);
  /* buffered I/O takes any block size */
  assert_int_equal(sc->workloads[2].io.bs, 1000);
  ff_scenario_free(sc);
}

/* fs: the fio keys with the defaults of buffered writes, the
 * filesystem's keys; the axes that change io and fs workloads. */
static void
test_fs_keys(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "matrix = ({ key = \"fusefarm/mount_options\";\n"
    "            values = [\"logbufs=2\", \"logbufs=8,logbsize=256k\"]; },\n"
    "          { key = \"fusefarm/target\"; values = [\"pv0001\", "
    "\"vg/lv\"]; },\n"
    "          { key = \"fusefarm/fstype\"; values = [\"xfs\"]; });\n"
    "workloads = ({ type = \"fs\"; target = \"pv0003\"; },\n"
    "  { type = \"fs\"; name = \"x\"; target = \"pv0002\"; fstype = \"xfs\";\n"
    "    mkfs_options = \"-m crc=1  -l size=8m\"; mount_options = "
    "\"logbufs=4\";\n"
    "    nrfiles = 16; numjobs = 8; fsync = 1; size = \"1M\"; });",
    "t", "/b");
  const struct ff_io_job *io;

  (void)state;
  assert_nonnull_err(sc);
  assert_int_equal(ff_scenario_nconfigs(sc), 4);
  assert_int_equal(sc->workloads[0].type, FF_W_FS);
  assert_string_equal(ff_wtype_name(FF_W_FS), "fs");
  assert_string_equal(sc->workloads[0].name, "fs");
  io = &sc->workloads[0].io;
  assert_string_equal(io->target, "pv0003");
  assert_string_equal(io->fstype, "ext4");
  assert_string_equal(io->mkfs_options, "");
  assert_string_equal(io->mount_options, "");
  assert_int_equal(io->nrfiles, 1);
  assert_string_equal(io->rw, "write");
  assert_int_equal(io->direct, 0);
  assert_string_equal(io->ioengine, "psync");
  assert_int_equal(io->size, 16 << 20);
  io = &sc->workloads[1].io;
  assert_string_equal(io->fstype, "xfs");
  assert_string_equal(io->mkfs_options, "-m crc=1  -l size=8m");
  assert_string_equal(io->mount_options, "logbufs=4");
  assert_int_equal(io->nrfiles, 16);
  assert_int_equal(io->numjobs, 8);
  assert_int_equal(io->fsync, 1);
  assert_string_equal(
    ff_scenario_axis(sc, "fusefarm/mount_options")->values[1].s,
    "logbufs=8,logbsize=256k");
  /* the target axis's values are not paths: kept as given */
  assert_string_equal(ff_scenario_axis(sc, "fusefarm/target")->values[1].s,
                      "vg/lv");
  assert_true(ff_scenario_target_valid("vg0001/lv0001"));
  assert_false(ff_scenario_target_valid("vg/lv/x"));
  assert_false(ff_scenario_target_valid("a:b"));
  assert_true(ff_scenario_fstype_valid("xfs"));
  assert_false(ff_scenario_fstype_valid("btrfs"));
  ff_scenario_free(sc);
}

/* fusefarm/transport: scsi (default) or nbd, a boot of its own each in
 * `fusefarm vm`; the host refuses nbd (ff_scenario_uses_nbd). */
static void
test_transport_axis(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "matrix = ({ key = \"fusefarm/transport\"; values = [\"scsi\", "
    "\"nbd\"]; },\n"
    "          { key = \"global/use_aio\"; values = [0, 1]; });\n"
    "workloads = ({ type = \"io\"; target = \"pv0001\"; });",
    "t", "/b");
  unsigned idx[2];

  (void)state;
  assert_nonnull_err(sc);
  assert_int_equal(ff_scenario_nconfigs(sc), 4);
  assert_string_equal(ff_scenario_axis(sc, "fusefarm/transport")->values[1].s,
                      "nbd");
  ff_scenario_config(sc, 2, idx);
  assert_int_equal(idx[0], 1);
  assert_true(ff_scenario_uses_nbd(sc));
  assert_true(ff_scenario_transport_valid("scsi"));
  assert_true(ff_scenario_transport_valid("nbd"));
  assert_false(ff_scenario_transport_valid("virtio"));
  assert_false(ff_scenario_transport_valid(NULL));
  ff_scenario_free(sc);

  /* scsi alone, or no axis: nothing over nbd */
  sc = ff_scenario_load_string(
    "matrix = ({ key = \"fusefarm/transport\"; values = [\"scsi\"]; });\n"
    "workloads = ({ type = \"pvs\"; });",
    "t", "/b");
  assert_nonnull_err(sc);
  assert_false(ff_scenario_uses_nbd(sc));
  ff_scenario_free(sc);
  sc =
    ff_scenario_load_string("workloads = ({ type = \"pvs\"; });", "t", "/b");
  assert_nonnull_err(sc);
  assert_false(ff_scenario_uses_nbd(sc));
  ff_scenario_free(sc);
}

/* ff_scenario_dm_asks: the fusefarm/dm axis's values, else the override,
 * else the dm key; where the mode is asked. */
static void
test_dm_asks(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "dm = \"real\"; workloads = ({ type = \"pvs\"; });", "t", "/b");

  (void)state;
  assert_nonnull_err(sc);
  assert_int_equal(ff_scenario_dm_asks(sc, NULL, "real"), FF_DM_ASKED_KEY);
  assert_int_equal(ff_scenario_dm_asks(sc, NULL, "none"), FF_DM_NOT_ASKED);
  assert_int_equal(ff_scenario_dm_asks(sc, "none", "none"),
                   FF_DM_ASKED_OVERRIDE);
  assert_int_equal(ff_scenario_dm_asks(sc, "none", "real"), FF_DM_NOT_ASKED);
  ff_scenario_free(sc);

  sc = ff_scenario_load_string(
    "matrix = ({ key = \"fusefarm/dm\"; values = [\"none\", \"real\"]; });\n"
    "workloads = ({ type = \"pvs\"; });",
    "t", "/b");
  assert_nonnull_err(sc);
  assert_int_equal(ff_scenario_dm_asks(sc, NULL, "none"), FF_DM_ASKED_AXIS);
  assert_int_equal(ff_scenario_dm_asks(sc, NULL, "real"), FF_DM_ASKED_AXIS);
  assert_int_equal(ff_scenario_dm_asks(sc, NULL, "auto"), FF_DM_NOT_ASKED);
  ff_scenario_free(sc);

  /* the default dm is auto */
  sc =
    ff_scenario_load_string("workloads = ({ type = \"pvs\"; });", "t", "/b");
  assert_nonnull_err(sc);
  assert_int_equal(ff_scenario_dm_asks(sc, NULL, "auto"), FF_DM_ASKED_KEY);
  assert_int_equal(ff_scenario_dm_asks(sc, NULL, "real"), FF_DM_NOT_ASKED);
  ff_scenario_free(sc);
}

/* repeat = "auto" and its limits; a number is no auto. */
static void
test_repeat_auto(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "repeat_budget = \"90s\"; repeat_max_rounds = 8;\n"
    "workloads = ({ type = \"pvs\"; repeat = \"auto\"; },\n"
    "             { type = \"vgs\"; repeat = 5; });",
    "t", "/b");

  (void)state;
  assert_nonnull_err(sc);
  assert_true(sc->workloads[0].repeat_auto);
  assert_int_equal(sc->workloads[0].repeat, 1);
  assert_false(sc->workloads[1].repeat_auto);
  assert_int_equal(sc->workloads[1].repeat, 5);
  assert_int_equal(sc->repeat_max_rounds, 8);
  assert_int_equal(sc->repeat_budget_ns, 90000000000ull);
  ff_scenario_free(sc);
  sc =
    ff_scenario_load_string("workloads = ({ type = \"pvs\"; });", "t", "/b");
  assert_nonnull_err(sc);
  assert_int_equal(sc->repeat_max_rounds, 0); /* ff-plan's defaults */
  assert_int_equal(sc->repeat_budget_ns, 0);
  ff_scenario_free(sc);
}

static void
test_bad(void **state)
{
  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct ff_scenario *sc = ff_scenario_load_string(bad[i].text, "t", "/b");

    if (sc)
      fail_msg("scenario %zu was accepted: %s", i, bad[i].text);
    if (!strstr(ff_errmsg(), bad[i].want1) ||
        !strstr(ff_errmsg(), bad[i].want2))
      fail_msg("scenario %zu: message \"%s\" lacks \"%s\" or \"%s\"", i,
               ff_errmsg(), bad[i].want1, bad[i].want2);
  }
  /* 64 axes of two values: 2^64 configurations once wrapped to 0 and
   * passed the limit (found by fuzz-scenario's invariant). */
  {
    char text[4096];
    size_t n = 0;
    struct ff_scenario *sc;

    n += (size_t)snprintf(text + n, sizeof text - n, "matrix = (");
    for (int i = 0; i < 64; i++)
      n += (size_t)snprintf(text + n, sizeof text - n,
                            "%s{ key = \"a/k%d\"; values = [0, 1]; }",
                            i ? ", " : "", i);
    snprintf(text + n, sizeof text - n,
             ");\nworkloads = ({ type = \"pvs\"; });");
    sc = ff_scenario_load_string(text, "t", "/b");
    if (sc)
      fail_msg("2^64 configurations were accepted");
    assert_non_null(strstr(ff_errmsg(),
                           "t:1: matrix: crosses into "
                           "18446744073709551615 configurations"));
  }
  assert_null(ff_scenario_load_file("/nonexistent/x.conf"));
  assert_non_null(strstr(ff_errmsg(), "cannot read the scenario"));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_shipped),
    cmocka_unit_test(test_builtin_and_matrix),
    cmocka_unit_test(test_paths_and_values),
    cmocka_unit_test(test_fence_keys),
    cmocka_unit_test(test_lvm_list),
    cmocka_unit_test(test_io_keys),
    cmocka_unit_test(test_fs_keys),
    cmocka_unit_test(test_transport_axis),
    cmocka_unit_test(test_dm_asks),
    cmocka_unit_test(test_repeat_auto),
    cmocka_unit_test(test_bad),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
