/* Unit tests for ff-privdev: how the farm's devices are named in the
 * runner's private /dev (the mount itself is exercised by
 * tests/integration/test-run-dev.sh). */
#include "ff-privdev.h"
#include "ff-test.h"

#include <stdint.h>
#include <string.h>

static void
test_disk_names(void **state)
{
  static const struct {
    uint32_t i;
    const char *want;
  } cases[] = {
    {0, "sda"},     {1, "sdb"},      {25, "sdz"},      {26, "sdaa"},
    {27, "sdab"},   {51, "sdaz"},    {52, "sdba"},     {701, "sdzz"},
    {702, "sdaaa"}, {1257, "sdavj"}, {18277, "sdzzz"}, {18278, "sdaaaa"},
  };
  char out[16];

  (void)state;
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    ff_privdev_disk_name(cases[k].i, out, sizeof out);
    assert_string_equal(out, cases[k].want);
  }
  ff_privdev_disk_name(0, out, 3); /* too small: empty, never truncated */
  assert_string_equal(out, "");
}

static void
test_paths(void **state)
{
  char out[256];
  int fb;

  (void)state;
  /* farm: the hint, where it is a clean path under /dev */
  assert_ok(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/%s", "pv0002",
                            "/dev/loop7", 0, out, sizeof out, &fb));
  assert_string_equal(out, "/dev/pv0002");
  assert_int_equal(fb, 0);
  assert_ok(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/disk/by-id/x-%s", "sd1",
                            "/dev/loop7", 0, out, sizeof out, &fb));
  assert_string_equal(out, "/dev/disk/by-id/x-sd1");
  assert_ok(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/mapper/%s", "mpatha",
                            "/dev/loop7", 0, out, sizeof out, &fb));
  assert_string_equal(out, "/dev/mapper/mpatha");
  assert_int_equal(fb, 0);
  /* a hint outside /dev, or not clean: /dev/NAME, and the caller is told */
  assert_ok(ff_privdev_path(FF_DEVNAMES_FARM, "/mnt/%s", "pv1", "/dev/loop7",
                            0, out, sizeof out, &fb));
  assert_string_equal(out, "/dev/pv1");
  assert_int_equal(fb, 1);
  assert_ok(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/../etc/%s", "pv1",
                            "/dev/loop7", 0, out, sizeof out, &fb));
  assert_string_equal(out, "/dev/pv1");
  assert_int_equal(fb, 1);
  assert_ok(ff_privdev_path(FF_DEVNAMES_FARM, "/dev//%s", "pv1", "/dev/loop7",
                            0, out, sizeof out, &fb));
  assert_int_equal(fb, 1);
  /* loop and disk */
  assert_ok(ff_privdev_path(FF_DEVNAMES_LOOP, "/dev/%s", "pv1", "/dev/loop12",
                            3, out, sizeof out, &fb));
  assert_string_equal(out, "/dev/loop12");
  assert_ok(ff_privdev_path(FF_DEVNAMES_DISK, "/dev/%s", "pv1", "/dev/loop12",
                            27, out, sizeof out, &fb));
  assert_string_equal(out, "/dev/sdab");
  /* names the private /dev keeps for itself, and bad names */
  assert_int_equal(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/%s", "null",
                                   "/dev/loop7", 0, out, sizeof out, &fb),
                   -1);
  assert_non_null(strstr(ff_errmsg(), "'/dev/null'"));
  assert_int_equal(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/pts/%s", "x",
                                   "/dev/loop7", 0, out, sizeof out, &fb),
                   -1);
  assert_int_equal(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/mapper/%s",
                                   "control", "/dev/loop7", 0, out, sizeof out,
                                   &fb),
                   -1);
  assert_int_equal(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/%s", "a/b",
                                   "/dev/loop7", 0, out, sizeof out, &fb),
                   -1);
  assert_int_equal(ff_privdev_path(FF_DEVNAMES_FARM, "/dev/%s", "pv0002",
                                   "/dev/loop7", 0, out, 8, &fb),
                   -1);
}

static void
test_names(void **state)
{
  enum ff_devnames h;

  (void)state;
  assert_ok(ff_devnames_parse("farm", &h));
  assert_int_equal(h, FF_DEVNAMES_FARM);
  assert_string_equal(ff_devnames_name(h), "farm");
  assert_ok(ff_devnames_parse("disk", &h));
  assert_string_equal(ff_devnames_name(h), "disk");
  assert_ok(ff_devnames_parse("loop", &h));
  assert_string_equal(ff_devnames_name(h), "loop");
  assert_int_equal(ff_devnames_parse("nvme", &h), -1);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_disk_names),
    cmocka_unit_test(test_paths),
    cmocka_unit_test(test_names),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
