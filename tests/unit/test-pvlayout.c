/* Label sector, mda_header and copy placement, against the real PV of
 * docs/ondisk-format.md §3, §4.2 and §4.3. */
#include "ff-test.h"
#include "ff-crc.h"
#include "ff-pvlayout-int.h"

#include <string.h>

static void
test_label_real_pv(void **state)
{
  struct ff_label_info li = {
    .uuid = "wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5",
    .dev_size = 0x4000000,
    .pe_start = 0x100000,
    .mda_start = {0x1000},
    .mda_size = {0xff000},
    .nmdas = 1,
    .sector = 1,
    .used = 1,
  };
  uint8_t s[512];

  (void)state;
  ff_label_build(s, &li);
  assert_memory_equal(s, "LABELONE", 8);
  assert_int_equal(ff_get_le64(s + 8), 1);
  assert_int_equal(ff_get_le32(s + 16), 0x38CC4F28u); /* value on disk */
  assert_int_equal(ff_get_le32(s + 20), 32);
  assert_memory_equal(s + 24, "LVM2 001", 8);
  /* Offsets relative to the sector; §3.2 gives them absolute (+0x200). */
  assert_int_equal(ff_get_le64(s + 0x48), 0x100000); /* data area */
  assert_int_equal(ff_get_le64(s + 0x50), 0);
  assert_int_equal(ff_get_le64(s + 0x68), 0x1000); /* mda0 */
  assert_int_equal(ff_get_le64(s + 0x70), 0xff000);
  assert_int_equal(ff_get_le32(s + 0x88), 2); /* ext version */
  assert_int_equal(ff_get_le32(s + 0x8c), 1); /* PV_EXT_USED */
  for (int i = 0x90; i < 512; i++)
    assert_int_equal(s[i], 0);
}

static void
test_label_two_mdas_orphan(void **state)
{
  struct ff_label_info li = {
    .uuid = "wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5",
    .dev_size = 64u << 20,
    .pe_start = 1u << 20,
    .mda_start = {4096, 66060288},
    .mda_size = {1044480, 1048576},
    .nmdas = 2,
    .sector = 3,
    .used = 0,
  };
  uint8_t s[512];

  (void)state;
  ff_label_build(s, &li);
  assert_int_equal(ff_get_le64(s + 8), 3);
  assert_int_equal(ff_get_le64(s + 0x78), 66060288); /* mda1 */
  assert_int_equal(ff_get_le64(s + 0x80), 1048576);
  assert_int_equal(ff_get_le64(s + 0x88), 0); /* terminator */
  assert_int_equal(ff_get_le32(s + 0x98), 2);
  assert_int_equal(ff_get_le32(s + 0x9c), 0); /* orphan */
  assert_int_equal(ff_get_le32(s + 16), ff_lvm_crc(s + 20, 492));
}

static void
test_mda_header_real(void **state)
{
  uint8_t h[512];

  (void)state;
  ff_mda_header_build(h, 0x1000, 0xff000, 0xc00, 0x605, 0xaf83fd68u, 0);
  assert_int_equal(ff_get_le32(h), 0xC9A558B0u); /* value on disk */
  assert_memory_equal(h + 4, " LVM2 x[5A%r0N*>", 16);
  assert_int_equal(ff_get_le32(h + 20), 1);
  assert_int_equal(ff_get_le64(h + 24), 0x1000);
  assert_int_equal(ff_get_le64(h + 32), 0xff000);
  assert_int_equal(ff_get_le64(h + 40), 0xc00);
  assert_int_equal(ff_get_le64(h + 48), 0x605);
  assert_int_equal(ff_get_le32(h + 56), 0xaf83fd68u);
  for (int i = 60; i < 512; i++)
    assert_int_equal(h[i], 0);

  /* An orphan's header has raw_locn[0] all zeros. */
  ff_mda_header_build(h, 0x1000, 0xff000, 0, 0, 0, 0);
  for (int i = 40; i < 512; i++)
    assert_int_equal(h[i], 0);
  assert_int_equal(ff_get_le32(h), ff_lvm_crc(h + 4, 508));
}

static void
test_placement(void **state)
{
  static const struct {
    uint64_t mda, off, size, want;
  } v[] = {
    {1044480, 0, 0, 512},      /* first write */
    {1044480, 512, 904, 1536}, /* §4.3 real sequence */
    {1044480, 1536, 1221, 3072},
    {1044480, 512, 1049, 2048},     /* §9.1 synthetic VG */
    {1044480, 512, 512, 1024},      /* exactly one sector */
    {1044480, 1043968, 512, 512},   /* ends at the end: back to 512 */
    {1044480, 1043456, 600, 512},   /* next start > size - 512 */
    {1044480, 1043968, 1000, 1024}, /* wrapped: 488 bytes at 512 */
    {32768, 31744, 2000, 1536},     /* wrapped in a small mda */
  };

  (void)state;
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    assert_int_equal(ff_mda_next_offset(v[i].mda, v[i].off, v[i].size),
                     v[i].want);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_label_real_pv),
    cmocka_unit_test(test_label_two_mdas_orphan),
    cmocka_unit_test(test_mda_header_real),
    cmocka_unit_test(test_placement),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
