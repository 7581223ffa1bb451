/* Fuzz the farm spec parser: any text either loads or fails with a
 * message naming the file; a spec that loads and is small enough builds
 * a farm (or fails naming the file), whose devices are then read. */
#include "fuzz-common.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-spec.h"

#include <stdlib.h>

#define NAME "fuzz.conf"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = ff_fuzz_text(data, size);
  struct ff_spec *sp = ff_spec_load_string(text, NAME);
  struct ff_farm *farm;
  uint64_t n;

  free(text);
  if (!sp) {
    ff_fuzz_check_error(NAME);
    return 0;
  }
  FF_FUZZ_CHECK(sp->file && sp->device_name && sp->device_hint);
  farm = ff_fuzz_build_farm(sp, NAME);
  ff_farm_free(farm);

  /* Scaling keeps the spec valid; the target, 1 to 2048 devices, comes
   * from the input's size (the build guard decides what is built). */
  n = ff_spec_devices(sp);
  if (n && ff_spec_scale(sp, 1 + (size * 37) % 2048) == 0) {
    FF_FUZZ_CHECK(ff_spec_devices(sp) >= 1);
    ff_farm_free(ff_fuzz_build_farm(sp, NAME));
  }
  ff_spec_free(sp);
  return 0;
}
