/* runner/ff-mountinfo: /proc/PID/mountinfo lines as the kernel writes
 * them (proc(5)): optional fields, escaped paths, the "-" separator. */
#include "ff-error.h"
#include "ff-mountinfo.h"
#include "ff-test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
test_parse(void **state)
{
  char a[] = "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 "
             "/dev/root rw,errors=continue\n";
  char b[] = "512 30 0:55 / /tmp/a\\040farm\\134x rw,nosuid,nodev shared:7 "
             "propagation_from:2 - fuse.fusefarm fusefarm rw,user_id=0\n";
  char c[] = "77 30 0:60 / /dev rw - tmpfs fusefarm-dev rw";
  char bad1[] = "77 30 0:60 / /dev rw tmpfs fusefarm-dev rw\n";
  char bad2[] = "77 30 0:60\n";
  struct ff_mountinfo m;

  (void)state;
  assert_int_equal(ff_mountinfo_parse(a, &m), 0);
  assert_string_equal(m.id, "36");
  assert_string_equal(m.parent, "35");
  assert_string_equal(m.root, "/mnt1");
  assert_string_equal(m.point, "/mnt/parent");
  assert_string_equal(m.fstype, "ext3");
  assert_string_equal(m.source, "/dev/root");
  /* two optional fields; a blank and a backslash escaped in the path */
  assert_int_equal(ff_mountinfo_parse(b, &m), 0);
  assert_string_equal(m.point, "/tmp/a farm\\x");
  assert_string_equal(m.fstype, "fuse.fusefarm");
  assert_string_equal(m.source, "fusefarm");
  /* no optional field, no newline */
  assert_int_equal(ff_mountinfo_parse(c, &m), 0);
  assert_string_equal(m.point, "/dev");
  assert_string_equal(m.fstype, "tmpfs");
  assert_string_equal(m.source, "fusefarm-dev");
  /* no "-" separator, too few fields */
  assert_int_equal(ff_mountinfo_parse(bad1, &m), -1);
  assert_int_equal(ff_mountinfo_parse(bad2, &m), -1);
}

struct count {
  int lines, root;
};

static int
count_one(const struct ff_mountinfo *m, void *arg)
{
  struct count *c = arg;

  c->lines++;
  c->root += !strcmp(m->point, "/");
  return 0;
}

static int
stop_at_second(const struct ff_mountinfo *m, void *arg)
{
  int *n = arg;

  (void)m;
  return ++*n == 2 ? 7 : 0;
}

static void
test_each(void **state)
{
  char path[] = "/tmp/ff-test-mountinfo.XXXXXX";
  int fd = mkstemp(path), n = 0;
  struct count c = {0, 0};
  static const char table[] = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
                              "not a mountinfo line\n"
                              "2 1 0:5 / /proc rw - proc proc rw\n"
                              "3 1 0:6 / /dev rw - devtmpfs udev rw\n";

  (void)state;
  assert_true(fd >= 0);
  assert_int_equal(write(fd, table, sizeof table - 1), (int)sizeof table - 1);
  close(fd);
  assert_int_equal(ff_mountinfo_each(path, count_one, &c), 0);
  assert_int_equal(c.lines, 3); /* the malformed line is skipped */
  assert_int_equal(c.root, 1);
  /* fn's non-zero value stops the walk and is returned */
  assert_int_equal(ff_mountinfo_each(path, stop_at_second, &n), 7);
  assert_int_equal(n, 2);
  unlink(path);
  assert_int_equal(ff_mountinfo_each(path, count_one, &c), -1);
  assert_non_null(strstr(ff_errmsg(), path));
  /* and the real table of this process has its root */
  c = (struct count){0, 0};
  assert_int_equal(ff_mountinfo_each("/proc/self/mountinfo", count_one, &c),
                   0);
  assert_true(c.lines > 0 && c.root >= 1);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse),
    cmocka_unit_test(test_each),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
