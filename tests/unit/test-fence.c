/* Unit tests for ff-fence: lvm.conf and devices-file text. */
#include "ff-fence.h"
#include "ff-scenario.h"
#include "ff-test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char scenario_text[] =
  "name = \"t\";\n"
  "matrix = ( { key = \"devices/hints\"; values = [\"all\", \"none\"]; },\n"
  "           { key = \"fusefarm/profile\"; values = [\"ideal\"]; },\n"
  "           { key = \"global/use_aio\"; values = [1, 0]; },\n"
  "           { key = \"report/compact_output\"; values = [1]; },\n"
  "           { key = \"fusefarm/devices\"; values = [8]; },\n"
  "           { key = \"metadata/pvmetadatacopies\"; values = [2]; } );\n"
  "workloads = ( { type = \"pvs\"; } );\n";

static struct ff_scenario *
load_scenario(void)
{
  struct ff_scenario *sc =
    ff_scenario_load_string(scenario_text, "test", "/tmp");

  assert_nonnull_err(sc);
  return sc;
}

/* lvm.conf (local: lvmlocal.conf) of configuration k for a device set,
 * with the build caps. */
static char *
text_for(const struct ff_scenario *sc, uint64_t k, const struct ff_lvm_caps *c,
         const struct ff_fence_dev *devs, size_t ndevs, int restrict_devices,
         int local)
{
  struct ff_fence_setting *set;
  size_t nset;
  struct ff_fence f = {0};
  char *text;

  assert_ok(ff_fence_scenario_settings(sc, k, &set, &nset));
  f.caps = *c;
  f.devs = devs;
  f.ndevs = ndevs;
  f.restrict_devices = restrict_devices;
  f.settings = set;
  f.nsettings = nset;
  f.title = "scenario t";
  text = local ? ff_fence_lvmlocal_conf(&f) : ff_fence_lvm_conf(&f);
  assert_nonnull_err(text);
  free(set);
  return text;
}

static char *
conf_for(const struct ff_scenario *sc, uint64_t k, const struct ff_lvm_caps *c,
         const struct ff_fence_dev *devs, size_t ndevs, int restrict_devices)
{
  return text_for(sc, k, c, devs, ndevs, restrict_devices, 0);
}

static const struct ff_fence_dev host_devs[] = {
  {"/dev/loop12", "/tmp/x/mnt/d0", "abcdefghijklmnopqrstuvwxyz012345"},
  {"/dev/loop13", "/tmp/x/mnt/d1", NULL},
};

static void
test_host_guest_identical(void **state)
{
  struct ff_scenario *sc = load_scenario();
  struct ff_lvm_caps c;

  (void)state;
  ff_lvm_caps_for(2, 3, 16, &c);
  for (uint64_t k = 0; k < ff_scenario_nconfigs(sc); k++) {
    char *host = conf_for(sc, k, &c, host_devs, 2, 1);
    char *guest = conf_for(sc, k, &c, NULL, 0, 0);
    char *other = conf_for(sc, k, &c, host_devs + 1, 1, 1);

    assert_string_equal(host, guest);
    assert_string_equal(host, other);
    /* No device name in lvm.conf: they are in the devices file. */
    assert_null(strstr(host, "/dev/loop"));
    assert_non_null(strstr(host, "\tuse_devicesfile = 1\n"));
    free(host);
    free(guest);
    free(other);
  }
  ff_scenario_free(sc);
}

static void
test_settings_and_sections(void **state)
{
  struct ff_scenario *sc = load_scenario();
  struct ff_lvm_caps c;
  char *t0, *t3, *l0, *l3;

  (void)state;
  ff_lvm_caps_for(2, 3, 16, &c);
  t0 = conf_for(sc, 0, &c, NULL, 0, 0);
  t3 = conf_for(sc, 3, &c, NULL, 0, 0);
  l0 = text_for(sc, 0, &c, NULL, 0, 0, 1);
  l3 = text_for(sc, 3, &c, NULL, 0, 0, 1);
  /* The scenario's hints are lvm.conf's, and replace the host default
   * of lvmlocal.conf (which lvm reads last), which leaves it out. */
  assert_non_null(strstr(t0, "\thints = \"all\"\n"));
  assert_null(strstr(t0, "hints = \"none\""));
  assert_null(strstr(l0, "hints"));
  assert_non_null(strstr(t3, "\thints = \"none\"\n"));
  assert_null(strstr(l3, "hints"));
  assert_non_null(strstr(t0, "global {\n"));
  assert_non_null(strstr(t0, "\tuse_aio = 1\n"));
  assert_non_null(strstr(t3, "\tuse_aio = 0\n"));
  assert_null(strstr(l0, "use_aio"));
  /* Sections outside the fence's own are written too; a section the
   * scenario sets nothing in is not. */
  assert_non_null(strstr(t0, "report {\n\tcompact_output = 1\n}\n"));
  assert_non_null(strstr(t0, "metadata {\n\tpvmetadatacopies = 2\n}\n"));
  assert_null(strstr(t0, "activation {"));
  assert_null(strstr(t0, "backup {"));
  /* The runner's own axes are not lvm.conf. */
  assert_null(strstr(t0, "fusefarm/"));
  assert_null(strstr(t0, "profile"));
  assert_null(strstr(t0, "\tdevices = 8"));
  /* What the host needs is lvmlocal.conf's, not lvm.conf's (a guest runs
   * lvm with its own defaults). */
  assert_non_null(strstr(l0, "\tobtain_device_list_from_udev = 0\n"));
  assert_non_null(strstr(l0, "\tudev_sync = 0\n"));
  assert_non_null(strstr(l0, "\tlocking_dir = \"/run/lock/lvm\"\n"));
  assert_non_null(strstr(l0, "\tnotify_dbus = 0\n"));
  assert_non_null(strstr(l0, "\tbackup = 0\n"));
  assert_non_null(strstr(l0, "\tbackup_dir = \"/run/lvm/backup\"\n"));
  assert_null(strstr(t0, "udev_sync"));
  assert_null(strstr(t0, "obtain_device_list_from_udev"));
  assert_null(strstr(t0, "notify_dbus"));
  assert_null(strstr(t0, "backup_dir"));
  free(l0);
  free(l3);
  free(t0);
  free(t3);
  ff_scenario_free(sc);
}

static void
test_escaping(void **state)
{
  static const char *const list[] = {"a\"b", "c\\d"};
  struct ff_fence_setting set[] = {
    {.key = "report/separator", .type = FF_FENCE_STR, .s = "say \"hi\" \\o/"},
    {.key = "activation/volume_list",
     .type = FF_FENCE_LIST,
     .list = list,
     .nlist = 2},
    {.key = "global/use_aio", .type = FF_FENCE_INT, .i = -3},
  };
  struct ff_fence f = {0};
  char *t;

  (void)state;
  ff_lvm_caps_for(2, 3, 16, &f.caps);
  f.settings = set;
  f.nsettings = 3;
  t = ff_fence_lvm_conf(&f);
  assert_nonnull_err(t);
  assert_non_null(strstr(t, "\tseparator = \"say \\\"hi\\\" \\\\o/\"\n"));
  assert_non_null(strstr(t, "\tvolume_list = [ \"a\\\"b\", \"c\\\\d\" ]\n"));
  assert_non_null(strstr(t, "\tuse_aio = -3\n"));
  free(t);
}

static void
test_bad_settings(void **state)
{
  struct ff_fence_setting bad[][1] = {
    {{.key = "nosection", .type = FF_FENCE_INT}},
    {{.key = "devices/with space", .type = FF_FENCE_INT}},
    {{.key = "devices/devicesfile", .type = FF_FENCE_STR, .s = "x"}},
    {{.key = "global/locking_dir", .type = FF_FENCE_STR, .s = "/x"}},
    {{.key = "report/x", .type = FF_FENCE_STR, .s = NULL}},
    {{.key = "devices/use_devicesfile", .type = FF_FENCE_STR, .s = "yes"}},
  };
  static const char *const expect[] = {
    "nosection",          "with space", "devices/devicesfile",
    "global/locking_dir", "report/x",   "devices/use_devicesfile"};

  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct ff_fence f = {0};

    ff_lvm_caps_for(2, 3, 16, &f.caps);
    f.settings = bad[i];
    f.nsettings = 1;
    assert_null(ff_fence_lvm_conf(&f));
    assert_non_null(strstr(ff_errmsg(), expect[i]));
  }
}

/* The filter form: accept exactly the given devices (regex-escaped), then
 * reject everything; host and guest differ in the filter lines only. */
static void
test_filter_form(void **state)
{
  static const struct ff_fence_dev devs[] = {
    {"/dev/loop12", NULL, NULL},
    {"/dev/odd.dev+1", NULL, NULL},
  };
  struct ff_scenario *sc = load_scenario();
  struct ff_lvm_caps c;
  char *host, *guest, *dfile;
  const char *gf;
  struct ff_fence f = {0};

  (void)state;
  ff_lvm_caps_for(2, 2, 177, &c);
  assert_false(c.has_devicesfile);
  host = conf_for(sc, 0, &c, devs, 2, 1);
  guest = conf_for(sc, 0, &c, NULL, 0, 0);
  assert_null(strstr(host, "use_devicesfile"));
  assert_null(strstr(host, "devicesfile"));
  {
    struct ff_fence plain = {.caps = c};
    char *t = ff_fence_lvm_conf(&plain);

    assert_nonnull_err(t);
    assert_null(strstr(t, "hints")); /* 2.02 has no hints */
    free(t);
  }
  gf = strstr(host, "\tglobal_filter = [ ");
  assert_non_null(gf);
  assert_true(
    !strncmp(gf,
             "\tglobal_filter = [ \"a|^/dev/loop12$|\", "
             "\"a|^/dev/odd\\\\.dev\\\\+1$|\", \"r|.*|\" ]\n",
             strlen("\tglobal_filter = [ \"a|^/dev/loop12$|\", "
                    "\"a|^/dev/odd\\\\.dev\\\\+1$|\", \"r|.*|\" ]\n")));
  assert_non_null(strstr(host,
                         "\tfilter = [ \"a|^/dev/loop12$|\", "
                         "\"a|^/dev/odd\\\\.dev\\\\+1$|\", \"r|.*|\" ]\n"));
  /* Drop the filter lines: the rest is the same text. */
  {
    char *a = strdup(host), *b = strdup(guest);
    char *texts[2] = {a, b};

    for (int i = 0; i < 2; i++) {
      char *p;

      while ((p = strstr(texts[i], "filter = [")) != NULL) {
        char *bol = p, *eol = strchr(p, '\n');

        while (bol > texts[i] && bol[-1] != '\n')
          bol--;
        memmove(bol, eol + 1, strlen(eol + 1) + 1);
      }
    }
    assert_string_equal(a, b);
    free(a);
    free(b);
  }
  /* An lvm with a devices file, told not to use it, gets the filter too. */
  {
    struct ff_fence_setting off = {
      .key = "devices/use_devicesfile", .type = FF_FENCE_INT, .i = 0};
    char *t;

    ff_lvm_caps_for(2, 3, 16, &f.caps);
    f.restrict_devices = 1;
    f.devs = devs;
    f.ndevs = 1;
    f.settings = &off;
    f.nsettings = 1;
    t = ff_fence_lvm_conf(&f);
    assert_nonnull_err(t);
    assert_non_null(strstr(t, "\tuse_devicesfile = 0\n"));
    assert_non_null(
      strstr(t, "\tglobal_filter = [ \"a|^/dev/loop12$|\", \"r|.*|\" ]\n"));
    dfile = ff_fence_devices_file(&f);
    assert_nonnull_err(dfile);
    assert_null(strstr(dfile, "IDTYPE"));
    free(dfile);
    free(t);
  }
  free(host);
  free(guest);
  ff_scenario_free(sc);
}

/* The fence modes: none writes neither a devices file setting nor a
 * filter (the scenario's own settings, devices/filter included, pass
 * through; lvm's own hints); filter gives the filter form even on a
 * build with a devices file; devicesfile is the default form. */
static void
test_fence_modes(void **state)
{
  static const struct ff_fence_dev devs[] = {{"/dev/pv0001", NULL, NULL}};
  static const char *const flt[] = {"a|.*|"};
  struct ff_fence_setting own[] = {
    {.key = "devices/filter", .type = FF_FENCE_LIST, .list = flt, .nlist = 1},
    {.key = "devices/use_devicesfile", .type = FF_FENCE_INT, .i = 0},
  };
  struct ff_fence f = {0};
  enum ff_fence_mode m;
  char *t, *local;

  (void)state;
  assert_ok(ff_fence_mode_parse("none", &m));
  assert_int_equal(m, FF_FENCE_MODE_NONE);
  assert_ok(ff_fence_mode_parse("filter", &m));
  assert_int_equal(m, FF_FENCE_MODE_FILTER);
  assert_ok(ff_fence_mode_parse("devicesfile", &m));
  assert_int_equal(m, FF_FENCE_MODE_DEVICESFILE);
  assert_ok(ff_fence_mode_parse("devicesfile-all", &m));
  assert_int_equal(m, FF_FENCE_MODE_DEVICESFILE);
  assert_ok(ff_fence_mode_parse("devicesfile-used", &m));
  assert_int_equal(m, FF_FENCE_MODE_DEVICESFILE_USED);
  assert_int_equal(ff_fence_mode_parse("udev", &m), -1);
  assert_string_equal(ff_errmsg(),
                      "fence \"udev\": expected \"none\", \"devicesfile\", "
                      "\"devicesfile-all\", \"devicesfile-used\" or "
                      "\"filter\"");
  assert_int_equal(ff_fence_mode_parse("devicesfle", &m), -1);
  assert_non_null(strstr(ff_errmsg(), "fence \"devicesfle\": expected"));
  assert_int_equal(ff_fence_mode_parse("", &m), -1);
  assert_non_null(strstr(ff_errmsg(), "fence \"\": expected"));
  assert_true(ff_scenario_fence_valid("devicesfile-used"));
  assert_true(ff_scenario_fence_valid("devicesfile"));
  assert_false(ff_scenario_fence_valid("devicesfile-some"));

  ff_lvm_caps_for(2, 3, 16, &f.caps);
  f.restrict_devices = 1;
  f.devs = devs;
  f.ndevs = 1;

  f.mode = FF_FENCE_MODE_NONE;
  t = ff_fence_lvm_conf(&f);
  local = ff_fence_lvmlocal_conf(&f);
  assert_nonnull_err(t);
  assert_nonnull_err(local);
  assert_false(ff_fence_uses_filter(&f));
  assert_null(strstr(t, "devicesfile"));
  assert_null(strstr(t, "filter"));
  assert_null(strstr(local, "hints"));
  free(t);
  free(local);
  f.settings = own;
  f.nsettings = 2;
  t = ff_fence_lvm_conf(&f);
  assert_nonnull_err(t);
  assert_non_null(strstr(t, "\tfilter = [ \"a|.*|\" ]\n"));
  assert_non_null(strstr(t, "\tuse_devicesfile = 0\n"));
  assert_null(strstr(t, "global_filter"));
  free(t);
  f.settings = NULL;
  f.nsettings = 0;

  f.mode = FF_FENCE_MODE_FILTER;
  t = ff_fence_lvm_conf(&f);
  local = ff_fence_lvmlocal_conf(&f);
  assert_nonnull_err(t);
  assert_true(ff_fence_uses_filter(&f));
  assert_non_null(
    strstr(t, "\tglobal_filter = [ \"a|^/dev/pv0001$|\", \"r|.*|\" ]\n"));
  assert_non_null(strstr(local, "hints = \"none\""));
  free(t);
  free(local);

  f.mode = FF_FENCE_MODE_DEVICESFILE;
  t = ff_fence_lvm_conf(&f);
  assert_nonnull_err(t);
  assert_non_null(strstr(t, "\tuse_devicesfile = 1\n"));
  assert_null(strstr(t, "filter"));
  free(t);
}

static void
test_version_parse(void **state)
{
  static const struct {
    const char *text;
    unsigned maj, min, pat;
    int devicesfile;
  } cases[] = {
    {"  LVM version:     2.02.177(2) (2017-12-18)\n  Library version: "
     "1.02.146 (2017-12-18)\n",
     2, 2, 177, 0},
    {"  LVM version:     2.03.05(2) (2019-06-15)\n", 2, 3, 5, 0},
    {"  LVM version:     2.03.12(2) (2021-05-07)\n  Driver version:  4.45.0\n",
     2, 3, 12, 1},
    {"  LVM version:     2.03.16(2) (2022-05-18)\n  Library version: "
     "1.02.185 (2022-05-18)\n  Configuration:   ./configure\n",
     2, 3, 16, 1},
  };
  struct ff_lvm_caps c;

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    assert_ok(ff_lvm_caps_parse(cases[i].text, &c));
    assert_int_equal(c.major, cases[i].maj);
    assert_int_equal(c.minor, cases[i].min);
    assert_int_equal(c.patch, cases[i].pat);
    assert_int_equal(c.has_devicesfile, cases[i].devicesfile);
  }
  assert_int_equal(ff_lvm_caps_parse("lvm: command not found\n", &c), -1);
  assert_non_null(strstr(ff_errmsg(), "LVM version"));
  assert_int_equal(ff_lvm_caps_parse("  LVM version:  two\n", &c), -1);
}

/* ff_lvm_caps_probe runs the build (through ff-spawn, its stdout in
 * memory) with the system dir it is given: a fake lvm that prints a
 * version only when LVM_SYSTEM_DIR is the one asked for, and exits 5 as
 * lvm does without device-mapper. */
static void
test_version_probe(void **state)
{
  char dir[] = "/tmp/ff-test-fence.XXXXXX", lvm[64];
  struct ff_lvm_caps c;
  FILE *f;

  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(lvm, sizeof lvm, "%s/lvm", dir);
  f = fopen(lvm, "w");
  assert_non_null(f);
  fprintf(f,
          "#!/bin/sh\n"
          "[ \"$1\" = version ] && [ \"$LVM_SYSTEM_DIR\" = %s ] || exit 3\n"
          "echo '  LVM version:     2.02.180(2) (2018-06-18)'\n"
          "echo 'no device-mapper' >&2\n"
          "exit 5\n",
          dir);
  fclose(f);
  assert_int_equal(chmod(lvm, 0755), 0);
  assert_ok(ff_lvm_caps_probe(lvm, dir, &c));
  assert_int_equal(c.minor, 2);
  assert_int_equal(c.patch, 180);
  /* another system dir: the fake prints nothing, and that is said */
  assert_int_equal(ff_lvm_caps_probe(lvm, "/nonexistent", &c), -1);
  assert_non_null(strstr(ff_errmsg(), "printed no version"));
  unlink(lvm);
  rmdir(dir);
}

static void
test_devices_file_round_trip(void **state)
{
  static const struct ff_fence_dev devs[] = {
    {"/dev/loop12", "/tmp/x/mnt/d0", "abcdefghijklmnopqrstuvwxyz012345"},
    {"/dev/loop13", "/tmp/with blank/d1", NULL},
    {"/dev/loop14", NULL, NULL},
  };
  struct ff_fence f = {0};
  struct ff_fence_devlist l;
  char *t, *t2;

  (void)state;
  ff_lvm_caps_for(2, 3, 16, &f.caps);
  f.restrict_devices = 1;
  f.devs = devs;
  f.ndevs = 3;
  t = ff_fence_devices_file(&f);
  assert_nonnull_err(t);
  assert_non_null(strstr(t, "VERSION=1.1.1\n"));
  assert_non_null(strstr(t, "IDTYPE=loop_file IDNAME=/tmp/x/mnt/d0 "
                            "DEVNAME=/dev/loop12 "
                            "PVID=abcdefghijklmnopqrstuvwxyz012345\n"));
  /* A backing file with a blank cannot be an IDNAME: named by device. */
  assert_non_null(strstr(t, "IDTYPE=devname IDNAME=/dev/loop13 "
                            "DEVNAME=/dev/loop13 PVID=.\n"));
  assert_non_null(strstr(t, "IDTYPE=devname IDNAME=/dev/loop14 "
                            "DEVNAME=/dev/loop14 PVID=.\n"));
  assert_ok(ff_fence_parse_devices(t, "t", &l));
  assert_int_equal(l.n, 3);
  f.devs = l.v;
  f.ndevs = l.n;
  t2 = ff_fence_devices_file(&f);
  assert_nonnull_err(t2);
  assert_string_equal(t, t2);
  ff_fence_devlist_free(&l);
  free(t);
  free(t2);

  assert_int_equal(ff_fence_parse_devices("VERSION=1.1.1\nIDTYPE=devname "
                                          "IDNAME=/dev/loop1\n",
                                          "sd", &l),
                   -1);
  assert_non_null(strstr(ff_errmsg(), "sd:2:"));
}

/* Version ranges -> dialect, as each version's udev rule and units ran
 * event activation; use_lvmetad counts on 2.02 only. */
static void
test_dialect_table(void **state)
{
  static const struct {
    unsigned a, b, c;
    int lvmetad;
    enum ff_lvm_dialect d;
  } cases[] = {
    {2, 2, 177, 0, FF_DIALECT_NONE},
    {2, 2, 177, 1, FF_DIALECT_LVMETAD},
    {2, 2, 187, 1, FF_DIALECT_LVMETAD},
    {2, 3, 0, 0, FF_DIALECT_PVSCAN_AY},
    {2, 3, 5, 1, FF_DIALECT_PVSCAN_AY},
    {2, 3, 12, 0, FF_DIALECT_PVSCAN_AY},
    {2, 3, 13, 0, FF_DIALECT_PVSCAN_AY},
    {2, 3, 14, 0, FF_DIALECT_EVENT_2_03_14},
    {2, 3, 15, 0, FF_DIALECT_EVENT},
    {2, 3, 16, 1, FF_DIALECT_EVENT},
    {2, 3, 39, 0, FF_DIALECT_EVENT},
    {3, 0, 0, 0, FF_DIALECT_EVENT},
  };
  struct ff_lvm_caps c;

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ff_lvm_caps_for(cases[i].a, cases[i].b, cases[i].c, &c);
    assert_int_equal(ff_lvm_dialect_for(&c, cases[i].lvmetad), cases[i].d);
  }
  assert_string_equal(ff_lvm_dialect_name(FF_DIALECT_PVSCAN_AY),
                      "pvscan-activate");
  /* The fence reads use_lvmetad from the configuration's settings. */
  {
    struct ff_fence_setting on = {
      .key = "global/use_lvmetad", .type = FF_FENCE_INT, .i = 1};
    struct ff_fence f = {0};

    ff_lvm_caps_for(2, 2, 177, &f.caps);
    assert_int_equal(ff_fence_dialect(&f), FF_DIALECT_NONE);
    f.settings = &on;
    f.nsettings = 1;
    assert_int_equal(ff_fence_dialect(&f), FF_DIALECT_LVMETAD);
    ff_lvm_caps_for(2, 3, 5, &f.caps);
    assert_int_equal(ff_fence_dialect(&f), FF_DIALECT_PVSCAN_AY);
  }
}

static void
test_key_versions(void **state)
{
  static const struct {
    unsigned a, b, c;
    const char *key;
    int known;
    const char *why;
  } cases[] = {
    {2, 2, 180, "global/use_aio", 0, "since 2.02.183"},
    {2, 2, 183, "global/use_aio", 1, NULL},
    {2, 3, 11, "devices/use_devicesfile", 0, "since 2.03.12"},
    {2, 3, 12, "devices/use_devicesfile", 1, NULL},
    {2, 3, 1, "devices/hints", 0, "since 2.03.02"},
    {2, 3, 2, "devices/hints", 1, NULL},
    {2, 3, 0, "global/event_activation", 0, "since 2.03.01"},
    {2, 2, 177, "global/use_lvmetad", 1, NULL},
    {2, 3, 0, "global/use_lvmetad", 0, "removed in 2.03.00"},
    {2, 2, 177, "report/compact_output", 1, NULL}, /* not in the table */
  };
  struct ff_lvm_caps c;

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *why = NULL;

    ff_lvm_caps_for(cases[i].a, cases[i].b, cases[i].c, &c);
    assert_int_equal(ff_lvm_key_known(&c, cases[i].key, &why), cases[i].known);
    if (cases[i].why)
      assert_string_equal(why, cases[i].why);
  }
}

/* Keys the build does not know are in neither file, and are named. */
static void
test_unknown_keys_left_out(void **state)
{
  static const char *const never_2_02[] = {
    "hints",       "event_activation", "use_devicesfile",
    "devicesfile", "use_aio",          NULL};
  struct ff_fence_setting set[] = {
    {.key = "global/use_aio", .type = FF_FENCE_INT, .i = 0},
    {.key = "devices/hints", .type = FF_FENCE_STR, .s = "none"},
    {.key = "devices/use_devicesfile", .type = FF_FENCE_INT, .i = 1},
    {.key = "report/compact_output", .type = FF_FENCE_INT, .i = 1},
    {.key = "global/use_lvmetad", .type = FF_FENCE_INT, .i = 0},
  };
  static const struct ff_fence_dev devs[] = {{"/dev/loop12", NULL, NULL}};
  struct ff_fence f = {.restrict_devices = 1, .devs = devs, .ndevs = 1};
  char *conf, *local, *left;

  (void)state;
  f.settings = set;
  f.nsettings = sizeof set / sizeof *set;
  ff_lvm_caps_for(2, 2, 177, &f.caps);
  conf = ff_fence_lvm_conf(&f);
  local = ff_fence_lvmlocal_conf(&f);
  left = ff_fence_left_out(&f);
  assert_nonnull_err(conf);
  assert_nonnull_err(local);
  assert_nonnull_err(left);
  for (int i = 0; never_2_02[i]; i++) {
    char key[64];

    snprintf(key, sizeof key, "\t%s = ", never_2_02[i]);
    if (strstr(conf, key) || strstr(local, key))
      fail_msg("2.02.177 got '%s':\n%s\n%s", never_2_02[i], conf, local);
  }
  assert_non_null(strstr(conf, "\tglobal_filter = [ \"a|^/dev/loop12$|\""));
  assert_non_null(strstr(conf, "\tcompact_output = 1\n"));
  assert_non_null(strstr(conf, "\tuse_lvmetad = 0\n"));
  assert_null(strstr(local, "use_lvmetad")); /* the scenario's holds */
  assert_string_equal(left, "global/use_aio (since 2.02.183), devices/hints "
                            "(since 2.03.02), devices/use_devicesfile (since "
                            "2.03.12)");
  free(conf);
  free(local);
  free(left);

  /* Without the scenario's use_lvmetad, 2.02 gets use_lvmetad = 0. */
  f.nsettings = 1;
  local = ff_fence_lvmlocal_conf(&f);
  assert_nonnull_err(local);
  assert_non_null(strstr(local, "\tuse_lvmetad = 0\n"));
  free(local);

  /* 2.03.05: hints and event_activation known, no devices file,
   * use_lvmetad removed. */
  f.nsettings = sizeof set / sizeof *set;
  ff_lvm_caps_for(2, 3, 5, &f.caps);
  conf = ff_fence_lvm_conf(&f);
  local = ff_fence_lvmlocal_conf(&f);
  left = ff_fence_left_out(&f);
  assert_nonnull_err(conf);
  assert_nonnull_err(local);
  assert_null(strstr(conf, "use_devicesfile"));
  assert_null(strstr(conf, "use_lvmetad"));
  assert_null(strstr(local, "use_lvmetad"));
  assert_non_null(strstr(conf, "\thints = \"none\"\n"));
  assert_non_null(strstr(conf, "\tuse_aio = 0\n"));
  assert_non_null(strstr(local, "\tevent_activation = 1\n"));
  assert_string_equal(left, "devices/use_devicesfile (since 2.03.12), "
                            "global/use_lvmetad (removed in 2.03.00)");
  free(conf);
  free(local);
  free(left);

  /* 2.03.16 knows them all (but use_lvmetad). */
  f.nsettings = 4;
  ff_lvm_caps_for(2, 3, 16, &f.caps);
  left = ff_fence_left_out(&f);
  assert_nonnull_err(left);
  assert_string_equal(left, "");
  free(left);
}

/* The VGs of workloads wl (a scenario's workloads list), as
 * devicesfile-used chooses them. */
static void
used_vgs(const char *wl, const char *first_lv, const char *target,
         struct ff_fence_vgs *u)
{
  char text[1024];
  struct ff_scenario *sc;

  snprintf(text, sizeof text, "name = \"u\";\nworkloads = ( %s );\n", wl);
  sc = ff_scenario_load_string(text, "used", "/tmp");
  assert_nonnull_err(sc);
  assert_ok(ff_fence_used_vgs(sc, first_lv, target, u));
  ff_scenario_free(sc);
}

/* devicesfile-used: which VGs the workloads use, and which devices the
 * devices file then lists. */
static void
test_used_vgs(void **state)
{
  /* A farm of 8: vg1 (2 PVs), vg2, vg3, an orphan PV, a blank, an ext4
   * signature, a duplicate; vgs[i] is NULL for the last four, as
   * ff-runmanifest gives them. */
  static const char *const vgs[] = {"vg1", "vg1", "vg2", "vg3",
                                    NULL,  NULL,  NULL,  NULL};
  struct ff_fence_vgs u;
  size_t listed;

  (void)state;
  /* Activation and scans: every VG; no device outside a VG. */
  used_vgs("{ type = \"event-activation\"; }", "vg1/lv0", NULL, &u);
  assert_true(u.all);
  listed = 0;
  for (size_t i = 0; i < 8; i++)
    listed += (size_t)ff_fence_vgs_lists(&u, vgs[i]);
  assert_int_equal(listed, 4);
  assert_false(ff_fence_vgs_lists(&u, NULL));
  ff_fence_vgs_free(&u);
  for (const char *const *t =
         (const char *const[]){"pvs", "vgs", "lvs", "pvscan-cache",
                               "direct-activation", NULL};
       *t; t++) {
    char wl[128];

    snprintf(wl, sizeof wl, "{ type = \"%s\"; }", *t);
    used_vgs(wl, NULL, NULL, &u);
    assert_true(u.all);
    ff_fence_vgs_free(&u);
  }

  /* lvchange alone: the VG of its LV (the farm's first LV by default). */
  used_vgs("{ type = \"lvchange\"; }", "vg2/lv0", NULL, &u);
  assert_false(u.all);
  assert_int_equal(u.n, 1);
  assert_string_equal(u.v[0], "vg2");
  listed = 0;
  for (size_t i = 0; i < 8; i++)
    listed += (size_t)ff_fence_vgs_lists(&u, vgs[i]);
  assert_int_equal(listed, 1);
  assert_true(ff_fence_vgs_lists(&u, "vg2"));
  assert_false(ff_fence_vgs_lists(&u, "vg1"));
  ff_fence_vgs_free(&u);
  /* Two lvchanges and an LV io target: their VGs, each once, in order;
   * a device target and "ram" name none. */
  used_vgs("{ type = \"lvchange\"; lv = \"vg3/a\"; name = \"a\"; },"
           "{ type = \"lvchange\"; lv = \"vg1/b\"; name = \"b\"; },"
           "{ type = \"lvchange\"; lv = \"vg3/c\"; name = \"c\"; },"
           "{ type = \"io\"; target = \"pv0001\"; name = \"d\"; },"
           "{ type = \"io\"; target = \"vg2/d\"; name = \"e\"; }",
           NULL, NULL, &u);
  assert_false(u.all);
  assert_int_equal(u.n, 3);
  assert_string_equal(u.v[0], "vg3");
  assert_string_equal(u.v[1], "vg1");
  assert_string_equal(u.v[2], "vg2");
  ff_fence_vgs_free(&u);
  /* The configuration's fusefarm/target replaces the io target. */
  used_vgs("{ type = \"io\"; target = \"vg2/d\"; }", NULL, "pv0003", &u);
  assert_false(u.all);
  assert_int_equal(u.n, 0);
  ff_fence_vgs_free(&u);
  used_vgs("{ type = \"io\"; target = \"pv0003\"; }", NULL, "vg3/x", &u);
  assert_int_equal(u.n, 1);
  assert_string_equal(u.v[0], "vg3");
  ff_fence_vgs_free(&u);
  /* lvchange with no LV anywhere: no VG, nothing listed. */
  used_vgs("{ type = \"lvchange\"; }", NULL, NULL, &u);
  assert_false(u.all);
  assert_int_equal(u.n, 0);
  assert_false(ff_fence_vgs_lists(&u, "vg1"));
  ff_fence_vgs_free(&u);
  /* Scans win over named VGs. */
  used_vgs("{ type = \"lvchange\"; lv = \"vg3/a\"; }, { type = \"pvs\"; }",
           NULL, NULL, &u);
  assert_true(u.all);
  assert_true(ff_fence_vgs_lists(&u, "vg1"));
  ff_fence_vgs_free(&u);
}

/* devicesfile-used writes the devices file of the devices it is given
 * (the caller chose them) with the same lvm.conf as devicesfile. */
static void
test_used_same_conf(void **state)
{
  static const struct ff_fence_dev all[] = {{"/dev/pv0001", NULL, NULL},
                                            {"/dev/pv0002", NULL, NULL}};
  struct ff_fence f = {0};
  char *conf_all, *conf_used, *dfile;

  (void)state;
  ff_lvm_caps_for(2, 3, 16, &f.caps);
  f.restrict_devices = 1;
  f.devs = all;
  f.ndevs = 2;
  f.mode = FF_FENCE_MODE_DEVICESFILE;
  conf_all = ff_fence_lvm_conf(&f);
  f.mode = FF_FENCE_MODE_DEVICESFILE_USED;
  f.ndevs = 1;
  conf_used = ff_fence_lvm_conf(&f);
  dfile = ff_fence_devices_file(&f);
  assert_nonnull_err(conf_all);
  assert_nonnull_err(conf_used);
  assert_nonnull_err(dfile);
  assert_false(ff_fence_uses_filter(&f));
  assert_string_equal(conf_all, conf_used);
  assert_non_null(strstr(dfile, "DEVNAME=/dev/pv0001"));
  assert_null(strstr(dfile, "pv0002"));
  /* Without a devices file in the build: the filter form, of the same
   * devices. */
  free(conf_used);
  ff_lvm_caps_for(2, 3, 11, &f.caps);
  assert_true(ff_fence_uses_filter(&f));
  conf_used = ff_fence_lvm_conf(&f);
  assert_nonnull_err(conf_used);
  assert_non_null(strstr(conf_used, "pv0001"));
  assert_null(strstr(conf_used, "pv0002"));
  free(conf_all);
  free(conf_used);
  free(dfile);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_host_guest_identical),
    cmocka_unit_test(test_version_probe),
    cmocka_unit_test(test_settings_and_sections),
    cmocka_unit_test(test_escaping),
    cmocka_unit_test(test_bad_settings),
    cmocka_unit_test(test_filter_form),
    cmocka_unit_test(test_fence_modes),
    cmocka_unit_test(test_used_vgs),
    cmocka_unit_test(test_used_same_conf),
    cmocka_unit_test(test_version_parse),
    cmocka_unit_test(test_devices_file_round_trip),
    cmocka_unit_test(test_dialect_table),
    cmocka_unit_test(test_key_versions),
    cmocka_unit_test(test_unknown_keys_left_out),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
