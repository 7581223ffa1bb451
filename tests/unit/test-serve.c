/* ff-serve: the helpers the front ends share (extents of any length,
 * zeroing only where data can be). */
#include "ff-farm.h"
#include "ff-serve.h"
#include "ff-spec.h"
#include "ff-test.h"

#include <stdlib.h>
#include <string.h>

static const char spec[] =
  "device_size = \"1T\";\n"
  "vgs = ({ pvs = 2; mda_copies = 2; lvs = ({ fill = 0.5; }); });\n"
  "blanks = ({ count = 1; });\n";

static void
test_extents_all(void **state)
{
  struct ff_farm *farm = ff_test_farm(spec);
  uint8_t blk[4096];

  (void)state;
  memset(blk, 0x77, sizeof blk);
  /* Many scattered writes: more ranges than any fixed array would hold. */
  for (int i = 0; i < 300; i++)
    assert_ok(ff_farm_write(farm, 0, blk, (uint64_t)i << 24, sizeof blk));
  for (uint32_t d = 0; d < farm->ndevs; d++) {
    struct ff_range *r, big[512];
    int64_t n = ff_farm_extents_all(farm, d, &r);
    int64_t m = ff_farm_extents(farm, d, big, 512);

    assert_true(n >= 0);
    assert_int_equal(n, m);
    if (n)
      assert_memory_equal(r, big, (size_t)n * sizeof *r);
    else
      assert_null(r);
    if (d == 0)
      assert_true(n > 300);
    free(r);
  }
  ff_farm_free(farm);
}

static void
test_zero_sparse(void **state)
{
  struct ff_farm *farm = ff_test_farm(spec);
  uint64_t size = farm->devs[0].size, data, zero, bytes;
  struct ff_range *r;
  int64_t n;

  (void)state;
  /* A whole-device discard of 1 TiB: only the layout's blocks change. */
  assert_ok(ff_farm_zero_sparse(farm, 0, 0, size));
  n = ff_farm_extents_all(farm, 0, &r);
  assert_true(n > 0);
  for (int64_t i = 0; i < n; i++) {
    uint8_t *buf = malloc(r[i].len);

    assert_non_null(buf);
    assert_ok(ff_farm_read(farm, 0, buf, r[i].off, r[i].len));
    for (uint64_t k = 0; k < r[i].len; k++)
      if (buf[k])
        fail_msg("byte %llu is %u after zeroing",
                 (unsigned long long)(r[i].off + k), buf[k]);
    free(buf);
  }
  free(r);
  ff_overlay_stats(farm->overlay, &data, &zero, &bytes);
  assert_int_equal(data, 0);
  assert_true(zero > 0 && zero < 1024);
  /* Out of range is refused. */
  assert_int_equal(ff_farm_zero_sparse(farm, 0, size - 4096, 8192), -1);
  ff_farm_free(farm);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_extents_all),
    cmocka_unit_test(test_zero_sparse),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
