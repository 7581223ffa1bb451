/* CRC vectors from docs/ondisk-format.md §2.3. */
#include "ff-test.h"
#include "ff-crc.h"

#include <string.h>

static void
test_lvm_vectors(void **state)
{
  static const struct {
    const char *in;
    uint32_t want;
  } v[] = {
    {"", 0xF597A6CFu},
    {"a", 0x319B1949u},
    {"123456789", 0x4991CF02u},
    {"LVM2", 0x34FF1083u},
  };

  (void)state;
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    assert_int_equal(ff_lvm_crc(v[i].in, strlen(v[i].in)), v[i].want);
}

static void
test_standard_crc32(void **state)
{
  (void)state;
  assert_int_equal(ff_crc32("123456789", 9), 0xCBF43926u);
  assert_int_equal(ff_crc32("", 0), 0);
}

static void
test_incremental(void **state)
{
  const char *s = "metadata text split in two parts";
  size_t n = strlen(s);

  (void)state;
  /* A wrapped copy's CRC is computed over both parts in order. */
  for (size_t cut = 0; cut <= n; cut++)
    assert_int_equal(ff_crc_update(ff_lvm_crc(s, cut), s + cut, n - cut),
                     ff_lvm_crc(s, n));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lvm_vectors),
    cmocka_unit_test(test_standard_crc32),
    cmocka_unit_test(test_incremental),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
