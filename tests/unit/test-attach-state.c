/* Unit tests for the parsers of `fusefarm attach`/`detach` (fusefarm/
 * attach-state.c, attach-devices.c): the state dir's loops file and
 * MNT/.fusefarm/devices.  Each malformed line gets its own error. */
#include "attach.h"
#include "ff-test.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

/* dir/rel, in a buffer of its own per call site use. */
static const char *
in_dir(const char *rel)
{
  static char p[512];

  snprintf(p, sizeof p, "%s/%s", dir, rel);
  return p;
}

static int
setup(void **state)
{
  (void)state;
  return ff_test_mkscratch(dir, sizeof dir, "attach-state");
}

static int
teardown(void **state)
{
  (void)state;
  return ff_test_rmtree(dir);
}

static void
put(const char *rel, const char *text)
{
  FILE *f = fopen(in_dir(rel), "w");

  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static char *
get(const char *rel)
{
  char *buf = calloc(1, 65536);
  FILE *f = fopen(in_dir(rel), "r");
  size_t n;

  assert_non_null(f);
  n = fread(buf, 1, 65535, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void
test_records_round_trip(void **state)
{
  static const char text[] = "/dev/loop3 pv0000 /mnt/farm/pv0000\n"
                             "/dev/loop17 pv0001 /mnt/farm with blank/pv0001\n"
                             "\n"
                             "/dev/loop4 orphan0 /mnt/farm/orphan0\n";
  struct records rs = {NULL, 0, 0}, again = {NULL, 0, 0};
  char *out;

  (void)state;
  put("loops", text);
  assert_ok(fa_read_records(dir, &rs));
  assert_int_equal(rs.n, 3);
  assert_string_equal(rs.v[0].dev, "/dev/loop3");
  assert_string_equal(rs.v[0].name, "pv0000");
  assert_string_equal(rs.v[1].backing, "/mnt/farm with blank/pv0001");
  assert_string_equal(rs.v[2].name, "orphan0");
  /* Printing what was read gives the same lines back (blank ones go). */
  assert_ok(fa_rewrite_records(dir, &rs));
  out = get("loops");
  assert_string_equal(out, "/dev/loop3 pv0000 /mnt/farm/pv0000\n"
                           "/dev/loop17 pv0001 /mnt/farm with blank/pv0001\n"
                           "/dev/loop4 orphan0 /mnt/farm/orphan0\n");
  free(out);
  /* Records not kept are left out. */
  rs.v[1].keep = 0;
  assert_ok(fa_rewrite_records(dir, &rs));
  assert_ok(fa_read_records(dir, &again));
  assert_int_equal(again.n, 2);
  assert_string_equal(again.v[1].dev, "/dev/loop4");
  fa_records_free(&rs);
  fa_records_free(&again);
  /* No loops file: no record, no error. */
  unlink(in_dir("loops"));
  assert_ok(fa_read_records(dir, &rs));
  assert_int_equal(rs.n, 0);
  fa_records_free(&rs);
}

/* STATE/created keeps the created loops of the records still kept, in
 * record order; with none left the file goes. */
static void
test_created_rewrite(void **state)
{
  struct records rs = {NULL, 0, 0};
  struct ff_loop_seen created = {NULL, 0}, again = {NULL, 0};
  char *out;

  (void)state;
  assert_ok(fa_records_add(&rs, "/dev/loop17", "pv0", "/mnt/farm/pv0"));
  assert_ok(fa_records_add(&rs, "/dev/loop3", "pv1", "/mnt/farm/pv1"));
  assert_ok(fa_records_add(&rs, "/dev/loop4", "pv2", "/mnt/farm/pv2"));
  put("created", "/dev/loop3\n\n/dev/loop17\n/dev/loop99\n");
  assert_ok(fa_read_created(dir, &created));
  assert_true(ff_loop_seen_has(&created, 99));
  assert_ok(fa_rewrite_created(dir, &rs, &created));
  out = get("created");
  assert_string_equal(out, "/dev/loop17\n/dev/loop3\n");
  free(out);
  assert_ok(fa_read_created(dir, &again));
  assert_true(ff_loop_seen_has(&again, 3));
  assert_false(ff_loop_seen_has(&again, 99));
  ff_loop_seen_free(&again);
  /* A record not kept leaves its loop out; no created loop kept: no file. */
  rs.v[0].keep = 0;
  assert_ok(fa_rewrite_created(dir, &rs, &created));
  out = get("created");
  assert_string_equal(out, "/dev/loop3\n");
  free(out);
  rs.v[1].keep = 0;
  assert_ok(fa_rewrite_created(dir, &rs, &created));
  assert_int_equal(access(in_dir("created"), F_OK), -1);
  /* The loops file, by contrast, stays as an empty file. */
  rs.v[2].keep = 0;
  assert_ok(fa_rewrite_records(dir, &rs));
  out = get("loops");
  assert_string_equal(out, "");
  free(out);
  ff_loop_seen_free(&created);
  fa_records_free(&rs);
}

static void
test_records_malformed(void **state)
{
  static const char *const bad[] = {
    "garbage\n",                      /* one field */
    "/dev/loop1 pv0\n",               /* no backing file */
    "/dev/loop1 pv0 relative/path\n", /* backing not absolute */
    "/dev/sda pv0 /mnt/pv0\n",        /* not a loop device */
    "/dev/loop1  /mnt/pv0\n",         /* empty name */
    "/dev/loopX pv0 /mnt/pv0\n",      /* no loop number */
  };

  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct records rs = {NULL, 0, 0};
    char want[PATH_MAX + 32];

    put("loops", "/dev/loop9 ok /mnt/ok\n");
    {
      FILE *f = fopen(in_dir("loops"), "a");

      assert_non_null(f);
      fputs(bad[i], f);
      fclose(f);
    }
    if (fa_read_records(dir, &rs) != -1)
      fail_msg("line '%s' was accepted", bad[i]);
    snprintf(want, sizeof want, "%s/loops:2: malformed record", dir);
    if (!strstr(ff_errmsg(), want))
      fail_msg("line '%s': got '%s'", bad[i], ff_errmsg());
    fa_records_free(&rs);
  }
}

static void
test_devices_list(void **state)
{
  struct devlist l = {NULL, 0};

  (void)state;
  assert_int_equal(mkdir(in_dir(".fusefarm"), 0755), 0);
  put(".fusefarm/devices",
      "pv0 pv 0123456789abcdefABCDEF!#01234567\n"
      "\n"
      "orphan0 orphan -\n"
      "blank0\tblank\t-\n"
      "sig0 signature -\n"
      "dup0 duplicate 0123456789abcdefABCDEF!#01234567\n");
  assert_ok(fa_read_devices_list(dir, &l));
  assert_int_equal(l.n, 5);
  assert_string_equal(l.v[0].name, "pv0");
  assert_string_equal(l.v[0].role, "pv");
  assert_string_equal(l.v[0].pvid, "0123456789abcdefABCDEF!#01234567");
  assert_string_equal(l.v[1].pvid, "");
  assert_string_equal(l.v[2].role, "blank");
  /* --only keeps the named ones in list order, and names a stranger. */
  assert_ok(fa_filter_only(&l, "sig0,pv0", dir));
  assert_int_equal(l.n, 2);
  assert_string_equal(l.v[0].name, "pv0");
  assert_string_equal(l.v[1].name, "sig0");
  assert_int_equal(fa_filter_only(&l, "nosuch", dir), -1);
  assert_non_null(strstr(ff_errmsg(), "--only nosuch: no such device"));
  fa_devlist_free(&l);
}

static void
test_devices_list_malformed(void **state)
{
  static const struct {
    const char *line, *err;
  } cases[] = {
    {"pv1 pv\n", ":2: expected '<name> <role> <pvid or ->'"},
    {"pv1 pv - extra\n", ":2: expected '<name> <role> <pvid or ->'"},
    {".hidden pv -\n", ":2: bad device name '.hidden'"},
    {"pv1 disk -\n", ":2: pv1: unknown role 'disk'"},
    {"pv1 pv short\n", ":2: pv1: bad pvid 'short'"},
    {"pv1 pv 0123456789abcdef-BCDEF!#01234567\n", ":2: pv1: bad pvid"},
    {"pv0 orphan -\n", "device pv0 listed twice"},
  };

  (void)state;
  mkdir(in_dir(".fusefarm"), 0755);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct devlist l = {NULL, 0};
    char text[256];

    snprintf(text, sizeof text, "pv0 pv -\n%s", cases[i].line);
    put(".fusefarm/devices", text);
    assert_int_equal(fa_read_devices_list(dir, &l), -1);
    if (!strstr(ff_errmsg(), cases[i].err))
      fail_msg("line '%s': got '%s'", cases[i].line, ff_errmsg());
    assert_int_equal(l.n, 0);
  }
  /* No list at all: not a fusefarm mount. */
  {
    struct devlist l = {NULL, 0};
    unlink(in_dir(".fusefarm/devices"));
    assert_int_equal(fa_read_devices_list(dir, &l), -1);
    assert_non_null(strstr(ff_errmsg(), "not a fusefarm mount"));
  }
}

static void
test_default_state_dir(void **state)
{
  char out[PATH_MAX], longp[PATH_MAX];

  (void)state;
  assert_ok(fa_default_state_dir("/mnt/my farm", out, sizeof out));
  assert_string_equal(out, STATE_ROOT "/%2Fmnt%2Fmy%20farm");
  assert_ok(fa_default_state_dir("/a/b-c_d.e+f", out, sizeof out));
  assert_string_equal(out, STATE_ROOT "/%2Fa%2Fb-c_d.e+f");
  memset(longp, '/', 200);
  longp[200] = '\0';
  assert_int_equal(fa_default_state_dir(longp, out, sizeof out), -1);
  assert_non_null(strstr(ff_errmsg(), "use --state DIR"));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_records_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown(test_created_rewrite, setup, teardown),
    cmocka_unit_test_setup_teardown(test_records_malformed, setup, teardown),
    cmocka_unit_test_setup_teardown(test_devices_list, setup, teardown),
    cmocka_unit_test_setup_teardown(test_devices_list_malformed, setup,
                                    teardown),
    cmocka_unit_test(test_default_state_dir),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
