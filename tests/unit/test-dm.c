/* runner/ff-dm: which device-mapper devices are a farm's (lvm's names
 * and UUIDs), and what a kernel without device-mapper answers. */
#include "ff-dm.h"
#include "ff-error.h"
#include "ff-test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
test_vg_of(void **state)
{
  static const struct {
    const char *name, *vg; /* vg NULL: not one of lvm's names */
  } cases[] = {
    {"vg0001-lvol0", "vg0001"},
    {"smoke-lin", "smoke"},
    {"a--b-c", "a-b"},       /* '-' doubled inside the VG */
    {"a-b--c", "a"},         /* ... and inside the LV */
    {"vg-pool_tdata", "vg"}, /* a hidden layer */
    {"vg-thin-tpool", "vg"}, /* a -tpool suffix */
    {"x----y-lv", "x--y"},   /* two doubled dashes */
    {"nodash", NULL},        /* no separator */
    {"-lv", NULL},           /* empty VG */
    {"vg--", NULL},          /* a doubled dash and nothing after */
    {"", NULL},
  };
  char vg[128];

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int rc = ff_dm_vg_of(cases[i].name, vg, sizeof vg);

    if (!cases[i].vg) {
      if (rc != -1)
        fail_msg("%s: took VG '%s', want none", cases[i].name, vg);
    } else {
      if (rc != 0)
        fail_msg("%s: no VG, want '%s'", cases[i].name, cases[i].vg);
      assert_string_equal(vg, cases[i].vg);
    }
  }
  /* A VG name longer than the buffer is refused, not cut. */
  assert_int_equal(ff_dm_vg_of("abcdefgh-lv", vg, 4), -1);
}

static void
test_of_vgs(void **state)
{
  /* one entry per farm device, NULL for one that is no PV */
  const char *vgs[] = {"vg0001", NULL, "a-b", "vg0001"};
  const char *uuids[] = {"C1aWYl-gUP2-CACR-FBc9-Fsfg-cmQO-b1kdrN", NULL, NULL,
                         NULL};
  struct ff_dm_dev devs[] = {
    {.name = "vg0001-lvol0"},
    {.name = "a--b-data"},
    {.name = "a-b-data"},   /* VG "a", not "a-b" */
    {.name = "vg00012-lv"}, /* a longer name with the same start */
    {.name = "host-root", .uuid = "LVM-C1aWYlgUP2CACRFBc9FsfgcmQOb1kdrNxxxx"},
    {.name = "host-swap", .uuid = "LVM-ZZZZZZgUP2CACRFBc9FsfgcmQOb1kdrNxxxx"},
    {.name = "crypt", .uuid = "CRYPT-LUKS2-C1aWYlgUP2CACRFBc9FsfgcmQOb1kdrN"},
  };
  const int want[] = {1, 1, 0, 0, 1, 0, 0};
  struct ff_dm_list l = {devs, sizeof devs / sizeof *devs};

  (void)state;
  for (size_t i = 0; i < sizeof devs / sizeof *devs; i++)
    if (ff_dm_of_vgs(&devs[i], vgs, uuids, 4) != want[i])
      fail_msg("%s (%s): %d, want %d", devs[i].name, devs[i].uuid, !want[i],
               want[i]);
  /* names only */
  assert_int_equal(ff_dm_of_vgs(&devs[4], vgs, NULL, 4), 0);
  /* the first clash, in the kernel's order */
  assert_ptr_equal(ff_dm_clash(&l, vgs, uuids, 4), &devs[0]);
  l.v = &devs[2];
  l.n = 2;
  assert_null(ff_dm_clash(&l, vgs, uuids, 4));
}

/* Without device-mapper (this host's kernel has none; a guest's has):
 * usable says why not (ff_error), and nothing is counted or removed; with
 * it, the last error is left alone. */
static void
test_usable(void **state)
{
  int usable;

  (void)state;
  ff_error("before");
  usable = ff_dm_usable();
  if (usable) {
    assert_string_equal(ff_errmsg(), "before");
    return;
  }
  assert_non_null(strstr(ff_errmsg(), "/dev/mapper/control"));
  assert_int_equal(ff_dm_count((const char *const[]){"vg"}, NULL, 1), -1);
  assert_non_null(strstr(ff_errmsg(), "/dev/mapper/control"));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_vg_of),
    cmocka_unit_test(test_of_vgs),
    cmocka_unit_test(test_usable),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
