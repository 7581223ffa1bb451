/* ff-file: atomic replacement and in-place writes never go through a link
 * or into something that is not a regular file of ours. */
#include "ff-test.h"
#include "ff-file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096];

static int
group_setup(void **state)
{
  (void)state;
  return ff_test_mkscratch(dir, sizeof dir, "file");
}

static int
group_teardown(void **state)
{
  (void)state;
  return ff_test_rmtree(dir);
}

/* dir/NAME into buf. */
static const char *
at(char *buf, size_t n, const char *name)
{
  snprintf(buf, n, "%s/%s", dir, name);
  return buf;
}

static void
put(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");

  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

/* The file's text, which the test expects to be short. */
static void
assert_holds(const char *path, const char *want)
{
  char got[256] = "";
  FILE *f = fopen(path, "r");
  size_t n;

  assert_non_null(f);
  n = fread(got, 1, sizeof got - 1, f);
  got[n] = '\0';
  fclose(f);
  assert_string_equal(got, want);
}

static void
assert_msg(const char *want)
{
  if (!strstr(ff_errmsg(), want))
    fail_msg("message '%s' does not say '%s'", ff_errmsg(), want);
}

/* The last call refused link as a symbolic link, naming it; the victim
 * it points to is intact. */
static void
assert_link_refused(const char *link, const char *victim)
{
  char want[4300];

  snprintf(want, sizeof want,
           "refusing to write through %s: it is a symbolic link", link);
  assert_msg(want);
  assert_holds(victim, "SECRET\n");
}

/* A link planted at PATH.tmp is refused, named; its target is intact. */
static void
test_tmp_link_refused(void **state)
{
  char victim[4200], path[4200], tmp[4200];

  (void)state;
  put(at(victim, sizeof victim, "victim1"), "SECRET\n");
  at(path, sizeof path, "out1");
  at(tmp, sizeof tmp, "out1.tmp");
  assert_int_equal(symlink(victim, tmp), 0);
  assert_int_equal(ff_write_file_atomic(path, "new\n", 4), -1);
  assert_link_refused(tmp, victim);
  assert_int_equal(access(path, F_OK), -1);
  /* a dangling link too (O_CREAT would have made its target) */
  at(tmp, sizeof tmp, "out2.tmp");
  assert_int_equal(symlink(at(victim, sizeof victim, "nothing"), tmp), 0);
  assert_int_equal(ff_write_file_atomic(at(path, sizeof path, "out2"), "x", 1),
                   -1);
  assert_msg("it is a symbolic link");
  assert_int_equal(access(victim, F_OK), -1);
}

/* A PATH.tmp of ours left by a crash is replaced. */
static void
test_stale_tmp_replaced(void **state)
{
  char path[4200], tmp[4200];

  (void)state;
  at(path, sizeof path, "out3");
  put(at(tmp, sizeof tmp, "out3.tmp"), "half a write");
  assert_ok(ff_write_file_atomic(path, "whole\n", 6));
  assert_holds(path, "whole\n");
  assert_int_equal(access(tmp, F_OK), -1);
}

/* A path that is itself a link is refused; neither it nor its target
 * changes, and no PATH.tmp is left. */
static void
test_final_link_refused(void **state)
{
  char victim[4200], path[4200], tmp[4200];
  struct stat st;

  (void)state;
  put(at(victim, sizeof victim, "victim2"), "SECRET\n");
  at(path, sizeof path, "out4");
  assert_int_equal(symlink(victim, path), 0);
  assert_int_equal(ff_write_file_atomic(path, "new\n", 4), -1);
  assert_link_refused(path, victim);
  assert_int_equal(lstat(path, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  assert_int_equal(access(at(tmp, sizeof tmp, "out4.tmp"), F_OK), -1);
}

/* Written in place: a fifo and a link are refused, named; a regular file
 * is truncated ("w") or appended to ("a"). */
static void
test_in_place(void **state)
{
  char victim[4200], p[4200], want[4300];
  FILE *f;

  (void)state;
  put(at(victim, sizeof victim, "victim3"), "SECRET\n");
  assert_int_equal(mkfifo(at(p, sizeof p, "fifo"), 0600), 0);
  for (int i = 0; i < 2; i++) {
    assert_null(ff_fopen_write(p, i ? "a" : "w"));
    snprintf(want, sizeof want, "refusing to write through %s: it is a fifo",
             p);
    assert_msg(want);
  }
  assert_int_equal(symlink(victim, at(p, sizeof p, "link")), 0);
  for (int i = 0; i < 2; i++) {
    assert_null(ff_fopen_write(p, i ? "a" : "w"));
    assert_link_refused(p, victim);
    assert_int_equal(ff_open_write(p, O_APPEND), -1);
  }
  assert_int_equal(ff_open_write(dir, 0), -1);
  assert_msg("it is a directory");

  put(at(p, sizeof p, "log"), "one\n");
  f = ff_fopen_write(p, "a");
  assert_nonnull_err(f);
  fputs("two\n", f);
  assert_int_equal(fclose(f), 0);
  assert_holds(p, "one\ntwo\n");
  f = ff_fopen_write(p, "w");
  assert_nonnull_err(f);
  fputs("three\n", f);
  assert_int_equal(fclose(f), 0);
  assert_holds(p, "three\n");
}

/* ff_mkdir: made, reused, or refused for a link to a directory. */
static void
test_mkdir(void **state)
{
  char p[4200], l[4200];

  (void)state;
  assert_int_equal(ff_mkdir(at(p, sizeof p, "d"), 0755), 1);
  assert_int_equal(ff_mkdir(p, 0755), 0);
  assert_int_equal(symlink(p, at(l, sizeof l, "dlink")), 0);
  assert_int_equal(ff_mkdir(l, 0755), -1);
  assert_msg("refusing to use ");
  assert_msg("it is a symbolic link");
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_tmp_link_refused),
    cmocka_unit_test(test_stale_tmp_replaced),
    cmocka_unit_test(test_final_link_refused),
    cmocka_unit_test(test_in_place),
    cmocka_unit_test(test_mkdir),
  };

  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
