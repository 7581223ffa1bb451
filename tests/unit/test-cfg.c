/* The config-kind sniffer (ff-cfgkind.h, ff_cfg_check_root): what each
 * input looks like, the shipped files recognised, the messages a loader
 * gives for a file of another kind, and the sniffer's key lists equal to
 * what each parser accepts. */
#include "ff-cfg-int.h"
#include "ff-farm.h"
#include "ff-profile.h"
#include "ff-scenario.h"
#include "ff-spec.h"
#include "ff-test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
test_kind_of_text(void **state)
{
  static const struct {
    const char *what, *text;
    enum ff_cfg_kind want;
  } cases[] = {
    {"spec", "seed = 1;\nvgs = ({ pvs = 2; });\n", FF_CFG_SPEC},
    {"spec, shared key only besides", "seed = 1; device_size = \"1G\";",
     FF_CFG_SPEC},
    {"profile", "name = \"p\";\ngroups = ({ read_latency = \"1ms\"; });",
     FF_CFG_PROFILE},
    {"scenario", "name = \"s\";\nspec = \"x.conf\";\nworkloads = ();",
     FF_CFG_SCENARIO},
    {"scenario with an inline farm", "farm = \"seed = 1;\";", FF_CFG_SCENARIO},
    {"only a shared key", "name = \"x\";", FF_CFG_UNKNOWN},
    {"only seed", "seed = 3;", FF_CFG_UNKNOWN},
    {"a spec with a typo", "seed = 1;\nvgz = ({ pvs = 2; });", FF_CFG_UNKNOWN},
    {"spec and scenario keys mixed", "vgs = ();\nworkloads = ();",
     FF_CFG_UNKNOWN},
    {"spec and profile keys mixed", "vgs = ();\ngroups = ();", FF_CFG_UNKNOWN},
    {"empty", "", FF_CFG_UNKNOWN},
    {"syntax error", "vgs = ({ pvs = 2; }", FF_CFG_UNKNOWN},
    {"run document", "\n {\"format\": \"fusefarm-run\", \"version\": 1}",
     FF_CFG_RUNDOC},
    {"stats snapshot", "{\"format\": \"fusefarm-stats\", \"version\": 1}",
     FF_CFG_STATS},
    {"other JSON", "{\"format\": \"something\"}", FF_CFG_UNKNOWN},
    {"broken JSON", "{\"format\": \"fusefarm-run\"", FF_CFG_UNKNOWN},
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    enum ff_cfg_kind got =
      ff_cfg_kind_of_text(cases[i].text, strlen(cases[i].text));

    if (got != cases[i].want)
      fail_msg("%s: got %s, want %s", cases[i].what, ff_cfg_kind_name(got),
               ff_cfg_kind_name(cases[i].want));
  }
  /* Not NUL-terminated: only len bytes are looked at. */
  assert_int_equal(ff_cfg_kind_of_text("vgs = ();garbage", 9), FF_CFG_SPEC);
}

static void
test_shipped_files(void **state)
{
  static const struct {
    const char *path;
    enum ff_cfg_kind want;
  } files[] = {
    {"configs/smoke.conf", FF_CFG_SPEC},
    {"configs/damaged.conf", FF_CFG_SPEC},
    {"configs/mixed-1000.conf", FF_CFG_SPEC},
    {"configs/suse-1258.conf", FF_CFG_SPEC},
    {"configs/nomda-10000.conf", FF_CFG_SPEC},
    {"configs/profiles/ssd.conf", FF_CFG_PROFILE},
    {"configs/profiles/hdd.conf", FF_CFG_PROFILE},
    {"configs/profiles/flaky.conf", FF_CFG_PROFILE},
    {"configs/scenarios/ci-small.conf", FF_CFG_SCENARIO},
    {"configs/scenarios/suse-scaling.conf", FF_CFG_SCENARIO},
    {"configs/scenarios/suse-1258-versions.conf", FF_CFG_SCENARIO},
    {"configs/scenarios/aio-lvchange-versions.conf", FF_CFG_SCENARIO},
    {"tests/data/run-sample.json", FF_CFG_RUNDOC},
    {"tests/data/no-such-file.conf", FF_CFG_UNKNOWN},
  };

  (void)state;
  ff_error("earlier error");
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[4200];
    enum ff_cfg_kind got;

    snprintf(path, sizeof path, "%s/%s", ff_test_srcdir(), files[i].path);
    got = ff_cfg_kind_of_file(path);
    if (got != files[i].want)
      fail_msg("%s: got %s, want %s", files[i].path, ff_cfg_kind_name(got),
               ff_cfg_kind_name(files[i].want));
  }
  /* Asking sets no error. */
  assert_string_equal(ff_errmsg(), "earlier error");
}

/* Every scenario shipped in configs/scenarios loads (a typo in one is
 * found here, not by the user who runs it). */
static void
test_shipped_scenarios_load(void **state)
{
  char dir[4200];
  DIR *d;
  struct dirent *de;
  unsigned n = 0;

  (void)state;
  snprintf(dir, sizeof dir, "%s/configs/scenarios", ff_test_srcdir());
  d = opendir(dir);
  assert_non_null(d);
  while ((de = readdir(d))) {
    size_t len = strlen(de->d_name);
    char path[4500];
    struct ff_scenario *sc;

    if (len < 6 || strcmp(de->d_name + len - 5, ".conf"))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    if (ff_cfg_kind_of_file(path) != FF_CFG_SCENARIO)
      fail_msg("%s is not recognised as a scenario", path);
    sc = ff_scenario_load_file(path);
    if (!sc)
      fail_msg("%s: %s", path, ff_errmsg());
    ff_scenario_free(sc);
    n++;
  }
  closedir(d);
  /* ci-small, suse-*, aio-*, latency-tail, fence-comparison */
  assert_true(n >= 8);
}

/* The message of the loader of kind `as` given text. */
static const char *
load_as(enum ff_cfg_kind as, const char *text, const struct ff_farm *farm)
{
  switch (as) {
  case FF_CFG_SPEC: {
    struct ff_spec *sp = ff_spec_load_string(text, "x.conf");

    if (sp)
      fail_msg("the spec parser accepted %s", text);
    break;
  }
  case FF_CFG_PROFILE: {
    struct ff_profile *p = ff_profile_load_string(text, "x.conf", farm);

    if (p)
      fail_msg("the profile parser accepted %s", text);
    break;
  }
  default: {
    struct ff_scenario *sc = ff_scenario_load_string(text, "x.conf", "/");

    if (sc)
      fail_msg("the scenario parser accepted %s", text);
    break;
  }
  }
  return ff_errmsg();
}

static void
test_loader_messages(void **state)
{
  static const char spec[] = "seed = 1;\nvgs = ({ pvs = 2; });\n";
  static const char profile[] = "name = \"p\";\nrotational = true;\n";
  static const char scenario[] = "name = \"s\";\nworkloads = ();\n";
  static const char rundoc[] = "{\"format\": \"fusefarm-run\"}";
  static const struct {
    enum ff_cfg_kind as;
    const char *text, *want;
  } cases[] = {
    {FF_CFG_SCENARIO, spec,
     "x.conf: this is a farm spec, not a scenario (serve it with fusefarm "
     "mount, "
     "or name it in a scenario: spec = \"x.conf\";)"},
    {FF_CFG_SCENARIO, profile,
     "x.conf: this is a profile, not a scenario (serve a farm with it: "
     "fusefarm "
     "mount --profile, or name it in a scenario: profile = \"x.conf\";)"},
    {FF_CFG_SCENARIO, rundoc,
     "x.conf: this is a run document (JSON), not a scenario (render it with "
     "fusefarm report)"},
    {FF_CFG_SPEC, scenario,
     "x.conf: this is a scenario, not a farm spec (run it with fusefarm run)"},
    {FF_CFG_SPEC, profile,
     "x.conf: this is a profile, not a farm spec (give it with --profile, or "
     "the "
     "plugin's profile=)"},
    {FF_CFG_SPEC, rundoc,
     "x.conf: this is a run document (JSON), not a farm spec (render it with "
     "fusefarm report)"},
    {FF_CFG_PROFILE, spec,
     "x.conf: this is a farm spec, not a profile (give it as the farm: "
     "fusefarm "
     "mount SPEC MNT, or the plugin's spec=)"},
    {FF_CFG_PROFILE, scenario,
     "x.conf: this is a scenario, not a profile (run it with fusefarm run)"},
    /* Not clearly another kind: the plain unknown-key message. */
    {FF_CFG_SCENARIO, "seed = 1;\nvgz = 2;\n",
     "x.conf:1: seed: unknown key (expected one of: name, description, spec, "
     "farm, devices, profile, latency, lvm, matrix, workloads, "
     "aio_contention, attach, fence, dev_names, lvm_git, dm, repeat_budget, "
     "repeat_max_rounds, flamegraph)"},
    {FF_CFG_SPEC, "name = \"x\";\n",
     "x.conf:1: name: unknown key (expected one of: seed, device_name, "
     "device_size, device_hint, creation_host, uname, creation_time, "
     "lvm_version, vgs, orphans, blanks, signatures, system_id)"},
  };
  struct ff_farm *farm = ff_test_farm("vgs = ({ pvs = 2; });");

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    assert_string_equal(load_as(cases[i].as, cases[i].text, farm),
                        cases[i].want);
  ff_farm_free(farm);
}

/* The sniffer's key lists equal the "expected one of" list each parser
 * gives for an unknown top-level key. */
static void
test_keys_match_parsers(void **state)
{
  static const enum ff_cfg_kind kinds[] = {FF_CFG_SPEC, FF_CFG_PROFILE,
                                           FF_CFG_SCENARIO};
  struct ff_farm *farm = ff_test_farm("vgs = ({ pvs = 2; });");

  (void)state;
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    const char *const *keys = ff_cfg_kind_keys(kinds[i]);
    const char *msg = load_as(kinds[i], "zz_no_such_key = 1;", farm);
    const char *list = strstr(msg, "expected one of: ");
    char want[1024] = "";

    assert_non_null(keys);
    for (const char *const *k = keys; *k; k++) {
      strncat(want, *k, sizeof want - strlen(want) - 1);
      if (k[1])
        strncat(want, ", ", sizeof want - strlen(want) - 1);
    }
    strncat(want, ")", sizeof want - strlen(want) - 1);
    if (!list || strcmp(list + strlen("expected one of: "), want))
      fail_msg("%s: the parser says \"%s\", the sniffer knows (%s",
               ff_cfg_kind_name(kinds[i]), msg, want);
  }
  assert_null(ff_cfg_kind_keys(FF_CFG_RUNDOC));
  ff_farm_free(farm);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kind_of_text),
    cmocka_unit_test(test_shipped_files),
    cmocka_unit_test(test_shipped_scenarios_load),
    cmocka_unit_test(test_loader_messages),
    cmocka_unit_test(test_keys_match_parsers),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
