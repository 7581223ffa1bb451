/* fusefarm unit tests: shared includes and helpers.  Every assertion that
 * checks a call into the core prints the core's last error on failure. */
#ifndef FF_TEST_H
#define FF_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ff-error.h"

#define assert_ok(expr)                                                       \
  do {                                                                        \
    if ((expr) < 0)                                                           \
      fail_msg("%s failed: %s", #expr, ff_errmsg());                          \
  } while (0)

#define assert_nonnull_err(ptr)                                               \
  do {                                                                        \
    if (!(ptr))                                                               \
      fail_msg("%s is NULL: %s", #ptr, ff_errmsg());                          \
  } while (0)

/* Build a farm from spec text, failing the test with the core's message
 * when the spec or the farm is rejected. */
#ifdef FF_FARM_H
static inline struct ff_farm *
ff_test_farm(const char *text)
{
  struct ff_spec *sp = ff_spec_load_string(text, "test");
  struct ff_farm *farm;

  assert_nonnull_err(sp);
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  assert_nonnull_err(farm);
  return farm;
}
#endif

#endif
