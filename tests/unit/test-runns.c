/* runner/ff-runns: the order of the runner's namespace setup, with a
 * fake system-call table that records every call and fails the one a
 * case asks for: nothing is mounted before unshare, nothing but "/"
 * made private comes before it, the binds come last, and a failure stops
 * everything after it. */
#include "ff-error.h"
#include "ff-runns.h"
#include "ff-test.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

static char calls[32][160];
static int ncalls, fail_at = -1, fail_after, host_has_run_lvm = 1;

/* "WHAT A B FLAGS" (flags in hex; "-" for a NULL string). */
static int
record(const char *what, const char *a, const char *b, unsigned long f)
{
  if (ncalls < 32)
    snprintf(calls[ncalls], sizeof calls[0], "%s %s %s %lx", what, a ? a : "-",
             b ? b : "-", f);
  if (ncalls == fail_at || (fail_after && fail_at >= 0 && ncalls > fail_at)) {
    ncalls++;
    errno = EPERM;
    return -1;
  }
  ncalls++;
  return 0;
}

static int
fake_unshare(int flags)
{
  return record("unshare", NULL, NULL, (unsigned long)flags);
}

static int
fake_mount(const char *src, const char *target, const char *type,
           unsigned long flags, const void *data)
{
  (void)type;
  (void)data;
  return record("mount", src, target, flags);
}

static int
fake_umount2(const char *target, int flags)
{
  return record("umount", target, NULL, (unsigned long)flags);
}

static int
fake_stat(const char *path, struct stat *st)
{
  memset(st, 0, sizeof *st);
  if (!host_has_run_lvm) {
    errno = ENOENT;
    return -1;
  }
  (void)path;
  return 0;
}

static int
fake_mkdir(const char *path, mode_t mode)
{
  return record("mkdir", path, NULL, (unsigned long)mode);
}

static const struct ff_runns_sys fake = {
  .unshare = fake_unshare,
  .mount = fake_mount,
  .umount2 = fake_umount2,
  .stat = fake_stat,
  .mkdir = fake_mkdir,
};

static void
reset(int fail, int has_run)
{
  ncalls = 0;
  fail_at = fail;
  fail_after = 0;
  host_has_run_lvm = has_run;
}

static void
test_order(void **state)
{
  char want_private[64], want_bind[64];

  (void)state;
  snprintf(want_private, sizeof want_private, "mount - / %lx",
           (unsigned long)(MS_REC | MS_PRIVATE));
  snprintf(want_bind, sizeof want_bind, "%lx", (unsigned long)MS_BIND);
  /* a host with /run/lvm: unshare, private /, two binds */
  reset(-1, 1);
  assert_ok(ff_runns_enter(&fake, "/s/run", "/s/lock"));
  assert_int_equal(ncalls, 4);
  assert_string_equal(calls[0], "unshare - - 20000"); /* CLONE_NEWNS */
  assert_string_equal(calls[1], want_private);
  assert_non_null(strstr(calls[2], "mount /s/run /run/lvm "));
  assert_non_null(strstr(calls[2], want_bind));
  assert_non_null(strstr(calls[3], "mount /s/lock /run/lock/lvm "));
  /* a host without: a private tmpfs /run and its dirs come before the
   * binds, after "/" is private */
  reset(-1, 0);
  assert_ok(ff_runns_enter(&fake, "/s/run", "/s/lock"));
  assert_int_equal(ncalls, 8);
  assert_string_equal(calls[1], want_private);
  assert_string_equal(calls[2], "mount fusefarm-run /run 0");
  assert_string_equal(calls[3], "mkdir /run/lvm - 1c0");
  assert_string_equal(calls[5], "mkdir /run/lock/lvm - 1c0");
  assert_non_null(strstr(calls[6], "mount /s/run /run/lvm "));
  assert_non_null(strstr(calls[7], "mount /s/lock /run/lock/lvm "));
}

static void
test_failure_stops(void **state)
{
  (void)state;
  /* unshare fails: nothing is mounted at all (it would be the host's) */
  reset(0, 1);
  assert_int_equal(ff_runns_enter(&fake, "/s/run", "/s/lock"), -1);
  assert_int_equal(ncalls, 1);
  assert_non_null(strstr(ff_errmsg(), "unshare(CLONE_NEWNS)"));
  assert_non_null(strstr(ff_errmsg(), "needs root"));
  /* "/" cannot be made private: no bind (it would propagate) */
  reset(1, 1);
  assert_int_equal(ff_runns_enter(&fake, "/s/run", "/s/lock"), -1);
  assert_int_equal(ncalls, 2);
  assert_non_null(strstr(ff_errmsg(), "make / private"));
  /* the first bind fails: the second is not tried */
  reset(2, 1);
  assert_int_equal(ff_runns_enter(&fake, "/s/run", "/s/lock"), -1);
  assert_int_equal(ncalls, 3);
  assert_non_null(strstr(ff_errmsg(), "bind /s/run on /run/lvm"));
  /* the private /run cannot be mounted: no mkdir, no bind */
  reset(2, 0);
  assert_int_equal(ff_runns_enter(&fake, "/s/run", "/s/lock"), -1);
  assert_int_equal(ncalls, 3);
  assert_non_null(strstr(ff_errmsg(), "private /run"));
}

static void
test_unmount(void **state)
{
  (void)state;
  reset(-1, 1);
  assert_ok(ff_runns_unmount(&fake, "/m"));
  assert_int_equal(ncalls, 1); /* a plain unmount that worked */
  reset(0, 1);                 /* busy: then lazily */
  assert_ok(ff_runns_unmount(&fake, "/m"));
  assert_int_equal(ncalls, 2);
  assert_non_null(strstr(calls[1], "umount /m - 2")); /* MNT_DETACH */
  reset(0, 1);                                        /* neither works: said */
  fail_after = 1;
  assert_int_equal(ff_runns_unmount(&fake, "/m"), -1);
  assert_int_equal(ncalls, 2);
  assert_non_null(strstr(ff_errmsg(), "unmount /m"));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_order),
    cmocka_unit_test(test_failure_stops),
    cmocka_unit_test(test_unmount),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
