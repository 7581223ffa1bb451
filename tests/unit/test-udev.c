/* fusefarm/ff-udev: the rules that keep a host's udev off the farm's
 * loops, where they go, and the dm devices stacked on loops. */
#include "ff-udev.h"
#include "ff-error.h"
#include "ff-test.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
test_rules_text(void **state)
{
  char *t;

  (void)state;
  t = ff_udev_rules_text("/tmp/farm 1/mnt", 0);
  assert_non_null(t);
  /* Only loops backed by a file in the mount; every flag set. */
  assert_non_null(strstr(t, "# mount: /tmp/farm 1/mnt\n"));
  assert_non_null(
    strstr(t, "KERNEL!=\"loop[0-9]*\", GOTO=\"fusefarm_end\"\n"));
  assert_non_null(strstr(t, "ATTR{loop/backing_file}!=\"/tmp/farm 1/mnt/*\", "
                            "GOTO=\"fusefarm_end\"\n"));
  assert_non_null(strstr(t, "ENV{FUSEFARM_MOUNT}=\"/tmp/farm 1/mnt\"\n"));
  assert_non_null(strstr(t, "ENV{DM_UDEV_DISABLE_OTHER_RULES_FLAG}=\"1\"\n"));
  assert_non_null(
    strstr(t, "ENV{UDEV_DISABLE_PERSISTENT_STORAGE_RULES_FLAG}=\"1\"\n"));
  assert_non_null(strstr(t, "ENV{SYSTEMD_READY}=\"0\"\n"));
  assert_non_null(strstr(t, "ENV{UDISKS_IGNORE}=\"1\"\n"));
  assert_non_null(strstr(t, "LABEL=\"fusefarm_end\"\n"));
  free(t);
  t = ff_udev_rules_text("/tmp/farm 1/mnt", 1);
  assert_non_null(t);
  assert_non_null(strstr(
    t,
    "ENV{FUSEFARM_MOUNT}!=\"/tmp/farm 1/mnt\", GOTO=\"fusefarm_late_end\"\n"));
  assert_non_null(strstr(t, "ENV{ID_FS_TYPE}=\"\""));
  free(t);
  /* udev would take these as patterns: refused, naming the character. */
  assert_null(ff_udev_rules_text("/tmp/a*b", 0));
  assert_non_null(strstr(ff_errmsg(), "'*'"));
  assert_null(ff_udev_rules_text("/tmp/a|b", 1));
  assert_non_null(strstr(ff_errmsg(), "'|'"));
  assert_null(ff_udev_rules_text("/tmp/a\"b", 0));
  assert_null(ff_udev_rules_text("/tmp/a\nb", 0));
}

static void
test_fence_files(void **state)
{
  char dir[PATH_MAX], early[PATH_MAX], late[PATH_MAX], e2[PATH_MAX],
    l2[PATH_MAX];
  const char *t = getenv("TMPDIR");
  struct stat st;

  (void)state;
  snprintf(dir, sizeof dir, "%s/ff-udev.XXXXXX", t && *t ? t : "/tmp");
  assert_non_null(mkdtemp(dir));
  assert_int_equal(setenv("FUSEFARM_UDEV_RULES_DIR", dir, 1), 0);
  assert_string_equal(ff_udev_rules_dir(), dir);
  assert_int_equal(ff_udev_rule_paths("/mnt/a", early, late), 0);
  assert_int_equal(strncmp(early, dir, strlen(dir)), 0);
  assert_non_null(strstr(early, "/00-fusefarm-"));
  assert_non_null(strstr(late, "/61-fusefarm-"));
  /* One mount, one name; another mount, another. */
  assert_int_equal(ff_udev_rule_paths("/mnt/a", e2, l2), 0);
  assert_string_equal(early, e2);
  assert_int_equal(ff_udev_rule_paths("/mnt/b", e2, l2), 0);
  assert_string_not_equal(early, e2);

  assert_int_equal(ff_udev_fence("/mnt/a"), 0);
  assert_int_equal(stat(early, &st), 0);
  assert_int_equal(stat(late, &st), 0);
  assert_int_equal(ff_udev_unfence("/mnt/a"), 0);
  assert_int_equal(stat(early, &st), -1);
  assert_int_equal(stat(late, &st), -1);
  /* Nothing to remove is no error. */
  assert_int_equal(ff_udev_unfence("/mnt/a"), 0);
  /* A bad mount point writes nothing. */
  assert_int_equal(ff_udev_fence("/mnt/a*"), -1);
  assert_int_equal(ff_udev_rule_paths("/mnt/a*", e2, l2), 0);
  assert_int_equal(stat(e2, &st), -1);
  assert_int_equal(rmdir(dir), 0);
  unsetenv("FUSEFARM_UDEV_RULES_DIR");
}

static void
test_holders_none(void **state)
{
  const char *devs[] = {"/dev/loop-ff-test-none"};
  char **names = (char **)1;
  size_t n = 7;

  (void)state;
  /* A loop with no sysfs entry has nothing stacked on it. */
  assert_int_equal(ff_udev_host_holders(devs, 1, &names, &n), 0);
  assert_null(names);
  assert_int_equal(n, 0);
  assert_int_equal(ff_udev_remove_dm(NULL, 0), 0);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rules_text),
    cmocka_unit_test(test_fence_files),
    cmocka_unit_test(test_holders_none),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
