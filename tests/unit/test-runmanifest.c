/* The runners' manifest reader (ff-runmanifest.c): devices and their VGs,
 * the counts, the "first LV of the first undamaged VG" rule, and bad
 * manifests with the message each must give. */
#include "ff-runmanifest.h"
#include "ff-test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
test_devices_and_first_lv(void **state)
{
  /* vg0 is damaged, vg1 has no LV: the rule lands on vg2's first LV
   * (its first visible one: a raid LV's hidden sub-LV is neither counted
   * nor taken) */
  static const char text[] =
    "{\"format\": \"fusefarm-manifest\", \"version\": 1,"
    " \"devices\": ["
    "  {\"name\": \"pv0000\", \"role\": \"pv\", \"vg\": \"vg0\"},"
    "  {\"name\": \"pv0001\", \"role\": \"pv\", \"vg\": \"vg1\"},"
    "  {\"name\": \"pv0002\", \"role\": \"pv\", \"vg\": \"vg2\"},"
    "  {\"name\": \"pv0003\", \"role\": \"duplicate\", \"vg\": \"vg2\","
    "   \"duplicate_of\": \"pv0002\"},"
    "  {\"name\": \"pv0004\", \"role\": \"orphan\", \"vg\": null},"
    "  {\"name\": \"pv0005\", \"role\": \"blank\", \"vg\": null}],"
    " \"vgs\": ["
    "  {\"name\": \"vg0\", \"damage\": \"missing-pv\","
    "   \"lvs\": [{\"name\": \"lvx\"}]},"
    "  {\"name\": \"vg1\", \"damage\": \"none\", \"lvs\": []},"
    "  {\"name\": \"vg2\", \"damage\": \"none\","
    "   \"lvs\": [{\"name\": \"r_rimage_0\", \"visible\": false},"
    "    {\"name\": \"lvol0\", \"visible\": true}, {\"name\": \"lvol1\"}]},"
    "  {\"name\": \"vg3\", \"damage\": \"none\","
    "   \"lvs\": [{\"name\": \"lvol0\"}]}]}";
  static const char *const vg_of[] = {"vg0", "vg1", "vg2", NULL, NULL, NULL};
  struct ff_runmanifest m;

  (void)state;
  assert_ok(ff_runmanifest_parse(&m, text, "m.json"));
  assert_int_equal(m.ndevs, 6);
  for (uint32_t i = 0; i < m.ndevs; i++) {
    char name[16];

    snprintf(name, sizeof name, "pv%04u", i);
    assert_string_equal(m.names[i], name);
    if (vg_of[i])
      assert_string_equal(m.vgs[i], vg_of[i]);
    else
      assert_null(m.vgs[i]);
  }
  assert_int_equal(m.nvgs, 4);
  assert_int_equal(m.nlvs, 4);
  assert_string_equal(m.first_lv, "vg2/lvol0");
  ff_runmanifest_release(&m);
  assert_int_equal(m.ndevs, 0);
  assert_null(m.names);
}

static void
test_no_undamaged_lv(void **state)
{
  struct ff_runmanifest m;

  (void)state;
  assert_ok(ff_runmanifest_parse(
    &m,
    "{\"devices\": [{\"name\": \"pv0\", \"role\": \"orphan\"}],"
    " \"vgs\": [{\"name\": \"vg0\", \"damage\": \"stale-metadata\","
    " \"lvs\": [{\"name\": \"lv\"}]}]}",
    "m.json"));
  assert_null(m.first_lv);
  assert_null(m.vgs[0]);
  assert_int_equal(m.nvgs, 1);
  ff_runmanifest_release(&m);
  /* no "vgs" at all: a farm without VGs */
  assert_ok(ff_runmanifest_parse(&m, "{\"devices\": []}", "m.json"));
  assert_int_equal(m.ndevs, 0);
  assert_int_equal(m.nvgs, 0);
  assert_null(m.first_lv);
  ff_runmanifest_release(&m);
}

static void
test_bad(void **state)
{
  static const struct {
    const char *text, *msg;
  } cases[] = {
    {"{\"devices\": [", "m.json:1: "},
    {"{}", "m.json: no devices array"},
    {"{\"devices\": {}}", "m.json: no devices array"},
    {"{\"devices\": [{\"name\": \"a\"}, {\"role\": \"pv\"}]}",
     "m.json: devices[1]: no name"},
    {"{\"devices\": [], \"vgs\": 3}", "m.json: vgs is not an array"},
    {"{\"devices\": [], \"vgs\": [{\"damage\": \"none\"}]}",
     "m.json: vgs[0]: no name"},
    {"{\"devices\": [], \"vgs\": [{\"name\": \"v\", \"lvs\": 1}]}",
     "m.json: vgs[0] (v): lvs is not an array"},
  };
  struct ff_runmanifest m;

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    assert_int_equal(ff_runmanifest_parse(&m, cases[i].text, "m.json"), -1);
    if (strncmp(ff_errmsg(), cases[i].msg, strlen(cases[i].msg)))
      fail_msg("case %zu: got \"%s\", want \"%s...\"", i, ff_errmsg(),
               cases[i].msg);
    assert_int_equal(m.ndevs, 0);
    assert_null(m.names);
  }
  assert_int_equal(ff_runmanifest_load(&m, "/nonexistent/m.json"), -1);
  assert_non_null(strstr(ff_errmsg(), "/nonexistent/m.json"));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_devices_and_first_lv),
    cmocka_unit_test(test_no_undamaged_lv),
    cmocka_unit_test(test_bad),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
