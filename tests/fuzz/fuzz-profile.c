/* Fuzz the I/O profile parser against a small fixed farm: any text either
 * loads or fails with a message naming the file.  A profile that loads
 * loads again to the same decisions: two models fed the same requests
 * must answer them alike, never before the request arrived. */
#include "fuzz-common.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-iomodel.h"
#include "ff-spec.h"

#include <errno.h>
#include <stdlib.h>

#define NAME "fuzz.conf"
#define T0   1000000000000ull /* the models' time origin: 1000 s */

/* Devices pv0000..pv0011 (blanks, orphans, a signature) and "zero". */
static const char farm_spec[] =
  "seed = 5; device_size = \"64M\";\n"
  "blanks = ({ count = 8; }, { devices = [\"zero\"]; });\n"
  "orphans = ({ count = 2; });\n"
  "signatures = ({ type = \"gpt\"; });\n";

static const struct ff_farm *
fuzz_farm(void)
{
  static struct ff_farm *farm;

  if (!farm) {
    struct ff_spec *sp = ff_spec_load_string(farm_spec, "farm.conf");

    farm = sp ? ff_farm_new(sp) : NULL;
    ff_spec_free(sp);
    FF_FUZZ_CHECK(farm != NULL);
  }
  return farm;
}

static void
check_model(const struct ff_farm *farm, struct ff_iomodel *a,
            struct ff_iomodel *b, uint64_t seed)
{
  static const double qs[] = {0, 1e-9, 0.5, 0.99, 1};

  FF_FUZZ_CHECK(ff_iomodel_profile_name(a)[0] != '\0');
  for (unsigned i = 0; i < 96; i++) {
    uint32_t dev = (uint32_t)((seed + i * 7) % (ff_farm_ndevs(farm) + 1));
    enum ff_op op = (enum ff_op)((seed + i) % FF_OP_COUNT);
    uint64_t off = (seed * 2654435761u + i * 4096) % (128ull << 20);
    uint64_t len = i % 5 == 0 ? 0 : 512u << (i % 12);
    /* Arrivals from before the origin to past a minute after it. */
    uint64_t now = T0 - 1000 + (uint64_t)i * ((seed % 4 + 1) * 700000000u);
    struct ff_io_decision x, y;

    ff_iomodel_submit(a, dev, op, off, len, now, &x);
    ff_iomodel_submit(b, dev, op, off, len, now, &y);
    if (x.done_ns < now)
      ff_fuzz_fail(__FILE__, __LINE__,
                   "request %u of dev %u at %llu answered at %llu", i, dev,
                   (unsigned long long)now, (unsigned long long)x.done_ns);
    FF_FUZZ_CHECK(x.error == 0 || x.error == EIO || x.error == ENODEV);
    FF_FUZZ_CHECK(x.done_ns == y.done_ns && x.error == y.error &&
                  x.injected == y.injected);
    FF_FUZZ_CHECK(ff_iomodel_present(a, dev, now) ==
                  ff_iomodel_present(b, dev, now));
  }
  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++) {
    FF_FUZZ_CHECK(ff_iomodel_direct_io(a, d) == 0 ||
                  ff_iomodel_direct_io(a, d) == 1);
    for (int op = 0; op < FF_OP_COUNT; op++)
      for (size_t k = 0; k < sizeof qs / sizeof *qs; k++)
        FF_FUZZ_CHECK(ff_iomodel_latency_quantile(a, d, (enum ff_op)op,
                                                  qs[k]) <= 3600000000000ull);
  }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const struct ff_farm *farm = fuzz_farm();
  char *text = ff_fuzz_text(data, size);
  struct ff_profile *p = ff_profile_load_string(text, NAME, farm), *q;
  struct ff_iomodel *a, *b;
  uint64_t seed = size;

  if (!p) {
    ff_fuzz_check_error(NAME);
    free(text);
    return 0;
  }
  q = ff_profile_load_string(text, NAME, farm);
  free(text);
  FF_FUZZ_CHECK(q != NULL);
  for (size_t i = 0; i < size && i < 8; i++)
    seed = seed * 131 + data[i];
  a = ff_iomodel_new(farm, p, T0);
  b = ff_iomodel_new(farm, q, T0);
  FF_FUZZ_CHECK(a && b);
  check_model(farm, a, b, seed);

  /* A live switch to the ideal profile and back to a fresh copy. */
  FF_FUZZ_CHECK(ff_iomodel_set_profile(a, NULL, T0 + 5) == 0);
  FF_FUZZ_CHECK(ff_iomodel_set_profile(b, NULL, T0 + 5) == 0);
  check_model(farm, a, b, seed + 1);
  ff_iomodel_free(a);
  ff_iomodel_free(b);
  return 0;
}
