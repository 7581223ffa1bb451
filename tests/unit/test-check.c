/* Unit tests for runner/ff-check.c: the lvm.conf keys a build lists, the
 * suggestion for a key it does not, and the commands a workload times. */
#include "ff-test.h"

#include "ff-check.h"
#include "ff-fence.h"
#include "ff-scenario.h"

/* What `lvm config --type list` printed (2.03.16, shortened), with a
 * warning line and a deeper path mixed in. */
static const char list_text[] =
  "config/checks\n"
  "devices/dir\n"
  "devices/hints\n"
  "devices/use_devicesfile\n"
  "  WARNING: something lvm said\n"
  "global/use_aio\n"
  "global/event_activation\n"
  "activation/udev_sync\n"
  "report/pvs_cols\n"
  "global/use_aio\n"
  "tags/hosttags\n"
  "backup/backup\n"
  "allocation/cache_settings/mq/migration_threshold\n"
  "Not a key line\n"
  "/dev/mapper/control: open failed: No such device";

static void
test_parse(void **state)
{
  struct ff_lvm_keys k;

  (void)state;
  assert_ok(ff_lvm_keys_parse(list_text, &k));
  /* sorted, no duplicates, the deeper path cut to two components, the
   * other lines skipped */
  assert_int_equal(k.n, 11);
  assert_string_equal(k.v[0], "activation/udev_sync");
  assert_string_equal(k.v[1], "allocation/cache_settings");
  for (size_t i = 1; i < k.n; i++)
    assert_true(strcmp(k.v[i - 1], k.v[i]) < 0);
  assert_true(ff_lvm_keys_has(&k, "global/use_aio"));
  assert_true(ff_lvm_keys_has(&k, "tags/hosttags"));
  assert_false(ff_lvm_keys_has(&k, "global/use_aoi"));
  assert_false(ff_lvm_keys_has(&k, "global"));
  ff_lvm_keys_free(&k);
  assert_int_equal(k.n, 0);

  assert_ok(ff_lvm_keys_parse("", &k));
  assert_int_equal(k.n, 0);
  assert_false(ff_lvm_keys_has(&k, "global/use_aio"));
  ff_lvm_keys_free(&k);
  /* what an old lvm says to an option it does not know */
  assert_ok(ff_lvm_keys_parse("  Invalid argument for --type: list\n"
                              "  Error during parsing of command line.\n",
                              &k));
  assert_int_equal(k.n, 0);
  ff_lvm_keys_free(&k);
}

static void
test_distance(void **state)
{
  static const struct {
    const char *a, *b;
    unsigned want; /* with limit 2 */
  } cases[] = {
    {"global/use_aio", "global/use_aio", 0},
    {"global/use_aoi", "global/use_aio", 2}, /* two substitutions */
    {"global/use_ai", "global/use_aio", 1},
    {"global/usex_aio", "global/use_aio", 1},
    {"devices/hint", "devices/hints", 1},
    {"global/use_aio", "devices/use_aio", 3}, /* over the limit */
    {"", "abc", 3},
    {"ab", "", 2},
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    assert_int_equal(ff_edit_distance(cases[i].a, cases[i].b, 2),
                     cases[i].want);
  assert_int_equal(ff_edit_distance("kitten", "sitting", 5), 3);
}

static void
test_suggest(void **state)
{
  static const struct {
    const char *key, *want; /* NULL: no suggestion */
  } cases[] = {
    {"global/use_aoi", "global/use_aio"},
    {"devices/hint", "devices/hints"},
    {"activation/udev_snyc", "activation/udev_sync"},
    /* the same name in another section */
    {"devices/use_aio", "global/use_aio"},
    {"global/udev_sync", "activation/udev_sync"},
    {"global/completely_else", NULL},
    {"nosection", NULL},
  };
  struct ff_lvm_keys k;

  (void)state;
  assert_ok(ff_lvm_keys_parse(list_text, &k));
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *got = ff_lvm_key_suggest(&k, cases[i].key);

    if (!cases[i].want)
      assert_null(got);
    else {
      assert_non_null(got);
      assert_string_equal(got, cases[i].want);
    }
  }
  ff_lvm_keys_free(&k);
}

static void
test_ncommands(void **state)
{
  struct ff_workload w = {.type = FF_W_PVS, .repeat = 3, .count = 10};

  (void)state;
  assert_int_equal(ff_workload_ncommands(&w, 50, 43), 3);
  w.type = FF_W_EVENT_ACTIVATION;
  assert_int_equal(ff_workload_ncommands(&w, 50, 43), 3 * 93);
  w.type = FF_W_LVCHANGE;
  w.count = 5;
  assert_int_equal(ff_workload_ncommands(&w, 50, 43), 15);
  w.type = FF_W_IO;
  w.repeat = 1;
  assert_int_equal(ff_workload_ncommands(&w, 50, 43), 1);
}

/* The scenario keeps where each axis and value was, for the checks'
 * messages; a key of the fence's version table is known to some build. */
static void
test_lines(void **state)
{
  struct ff_scenario *sc =
    ff_scenario_load_string("name = \"l\";\nprofile = \"builtin:fixed-1ms\";\n"
                            "matrix = ( { key = \"global/use_aio\";\n"
                            "             values = [1,\n 0]; } );\n"
                            "workloads = ({ type = \"pvs\"; });\n",
                            "l.conf", NULL);

  (void)state;
  assert_nonnull_err(sc);
  assert_int_equal(sc->profile_line, 2);
  assert_int_equal(sc->axes[0].line, 3);
  assert_int_equal(sc->axes[0].index, 0);
  assert_int_equal(sc->axes[0].values[0].line, 4);
  assert_int_equal(sc->axes[0].values[1].line, 5);
  ff_scenario_free(sc);
  /* the lvm list goes first as the fusefarm/lvm axis: the others keep
   * their place in the file's matrix */
  sc = ff_scenario_load_string(
    "lvm = [\"lvm\", \"/sbin/lvm\"];\n"
    "matrix = ( { key = \"global/use_aio\"; values = [1, 0]; },\n"
    "           { key = \"devices/hints\"; values = [\"none\"]; } );\n"
    "workloads = ({ type = \"pvs\"; });\n",
    "m.conf", NULL);
  assert_nonnull_err(sc);
  assert_int_equal(sc->naxes, 3);
  assert_string_equal(sc->axes[0].key, "fusefarm/lvm");
  assert_int_equal(sc->axes[1].index, 0);
  assert_int_equal(sc->axes[2].index, 1);
  assert_int_equal(sc->axes[2].line, 3);
  ff_scenario_free(sc);
  assert_true(ff_lvm_key_listed("global/use_lvmetad"));
  assert_true(ff_lvm_key_listed("global/use_aio"));
  assert_false(ff_lvm_key_listed("global/use_aoi"));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse),   cmocka_unit_test(test_distance),
    cmocka_unit_test(test_suggest), cmocka_unit_test(test_ncommands),
    cmocka_unit_test(test_lines),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
