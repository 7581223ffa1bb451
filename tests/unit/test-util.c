/* Sizes, name formats, UUIDs, ctime and the string buffer. */
#include "ff-test.h"
#include "ff-util.h"

#include <stdlib.h>
#include <string.h>

static void
test_sizes(void **state)
{
  static const struct {
    const char *in;
    uint64_t want;
  } good[] = {
    {"0", 0},           {"512", 512},       {"8s", 4096},
    {"64M", 64u << 20}, {"64m", 64u << 20}, {"1T", 1ull << 40},
    {"3b", 3},          {"1e", 1ull << 60}, {"4k", 4096},
  };
  static const char *const bad[] = {
    "", "-1", "1.5G", "G", "12Q", "1GB", "99999999999999999999", "16e", " 1"};
  uint64_t v;

  (void)state;
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    assert_ok(ff_parse_size(good[i].in, &v));
    assert_int_equal(v, good[i].want);
  }
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    if (ff_parse_size(bad[i], &v) == 0)
      fail_msg("'%s' was accepted as %llu", bad[i], (unsigned long long)v);
}

static void
test_format_size(void **state)
{
  char b[32];

  (void)state;
  ff_format_size(64u << 20, b, sizeof b);
  assert_string_equal(b, "64M");
  ff_format_size(3584 * 1024, b, sizeof b);
  assert_string_equal(b, "3584K");
  ff_format_size(100, b, sizeof b);
  assert_string_equal(b, "100B");
  ff_format_size(1ull << 40, b, sizeof b);
  assert_string_equal(b, "1T");
}

static void
test_formats(void **state)
{
  int n;
  char *s;

  (void)state;
  assert_ok(ff_format_check("pv%04u", 1, 0, &n));
  assert_int_equal(n, 1);
  assert_ok(ff_format_check("100%% fixed", 1, 0, &n));
  assert_int_equal(n, 0);
  assert_int_equal(ff_format_check("%u-%u", 1, 0, &n), -1);
  assert_int_equal(ff_format_check("%s", 1, 0, &n), -1);
  assert_int_equal(ff_format_check("%n", 1, 0, &n), -1);
  assert_int_equal(ff_format_check("%04.3f", 1, 0, &n), -1);
  assert_ok(ff_format_check("/dev/%s", 0, 1, &n));
  assert_int_equal(ff_format_check("/dev/x", 0, 1, &n), -1);
  s = ff_format_uint("pv%04u", 7);
  assert_string_equal(s, "pv0007");
  free(s);
  s = ff_format_str("/dev/%s", "pv0007");
  assert_string_equal(s, "/dev/pv0007");
  free(s);
}

static void
test_names(void **state)
{
  (void)state;
  assert_true(ff_valid_lvm_name("vg_01.a+b-c"));
  assert_false(ff_valid_lvm_name("-vg"));
  assert_false(ff_valid_lvm_name("."));
  assert_false(ff_valid_lvm_name(".."));
  assert_false(ff_valid_lvm_name("a b"));
  assert_false(ff_valid_lvm_name(""));
}

static void
test_uuids(void **state)
{
  char a[FF_UUID_LEN], b[FF_UUID_LEN], d[FF_UUID_DASHED + 1];

  (void)state;
  ff_uuid_make(a, 1, 2, 3, 4);
  ff_uuid_make(b, 1, 2, 3, 4);
  assert_memory_equal(a, b, FF_UUID_LEN);
  ff_uuid_make(b, 1, 2, 3, 5);
  assert_memory_not_equal(a, b, FF_UUID_LEN);
  for (int i = 0; i < FF_UUID_LEN; i++)
    assert_true((a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'z') ||
                (a[i] >= 'A' && a[i] <= 'Z'));
  ff_pv_uuid_make(b, 1, 2, 3, 4);
  assert_memory_equal(b, "fusefm", 6);
  assert_memory_equal(b + 6, a + 6, FF_UUID_LEN - 6);
  ff_uuid_dash("wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5", d);
  assert_string_equal(d, "wJ1fvV-xxNA-dvRX-wDUP-mNTo-wXFQ-GKLkI5");
  assert_ok(ff_uuid_parse(d, a));
  assert_memory_equal(a, "wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5", FF_UUID_LEN);
  assert_ok(ff_uuid_parse("wJ1fvVxxNAdvRXwDUPmNTowXFQGKLk#!", a));
  assert_int_equal(ff_uuid_parse("wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI", a), -1);
  assert_int_equal(ff_uuid_parse("wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI55", a), -1);
  assert_int_equal(ff_uuid_parse("wJ1fvVxxNAdvRXwDUPmNTowXFQGKLk_5", a), -1);
}

static void
test_ctime(void **state)
{
  char b[32];

  (void)state;
  ff_ctime_utc(1796073320, b, sizeof b);
  assert_string_equal(b, "Mon Nov 30 21:15:20 2026");
  ff_ctime_utc(1793581200, b, sizeof b); /* day < 10 pads with a space */
  assert_string_equal(b, "Mon Nov  2 01:00:00 2026");
  ff_ctime_utc(0, b, sizeof b);
  assert_string_equal(b, "Thu Jan  1 00:00:00 1970");
}

static void
test_sb(void **state)
{
  struct ff_sb sb = FF_SB_INIT;
  size_t len;
  char *s;

  (void)state;
  for (int i = 0; i < 1000; i++)
    ff_sb_addf(&sb, "%d,", i);
  ff_sb_add(&sb, "end");
  assert_false(ff_sb_failed(&sb));
  s = ff_sb_detach(&sb, &len);
  assert_int_equal(len, strlen(s));
  assert_true(strncmp(s, "0,1,2,", 6) == 0);
  assert_string_equal(s + len - 7, "999,end");
  assert_null(sb.buf);
  free(s);
}

static void
test_dirname(void **state)
{
  char d[8];

  (void)state;
  assert_int_equal(ff_dirname("run.json", d, sizeof d), 0);
  assert_string_equal(d, ".");
  assert_int_equal(ff_dirname("/run.json", d, sizeof d), 0);
  assert_string_equal(d, "/");
  assert_int_equal(ff_dirname("a/b/run.json", d, sizeof d), 0);
  assert_string_equal(d, "a/b");
  assert_int_equal(ff_dirname("/tmp/x/", d, sizeof d), 0);
  assert_string_equal(d, "/tmp/x");
  /* too long for d: empty, never cut */
  assert_int_equal(ff_dirname("/a/long/dir/run.json", d, sizeof d), -1);
  assert_string_equal(d, "");
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sizes),   cmocka_unit_test(test_format_size),
    cmocka_unit_test(test_formats), cmocka_unit_test(test_names),
    cmocka_unit_test(test_uuids),   cmocka_unit_test(test_ctime),
    cmocka_unit_test(test_sb),      cmocka_unit_test(test_dirname),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
