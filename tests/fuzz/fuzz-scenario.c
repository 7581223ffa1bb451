/* Fuzz the scenario parser: any text either loads or fails with a message
 * naming the file.  A scenario that loads has a consistent matrix (every
 * configuration's value indices in range, every axis found by its key),
 * workloads with their defaults, and an inline farm that is parsed like a
 * spec file. */
#include "fuzz-common.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-scenario.h"
#include "ff-spec.h"

#include <stdlib.h>
#include <string.h>

#define NAME "fuzz.conf"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = ff_fuzz_text(data, size);
  struct ff_scenario *sc = ff_scenario_load_string(text, NAME, "/base");
  uint64_t n;
  unsigned *idx;

  free(text);
  if (!sc) {
    ff_fuzz_check_error(NAME);
    return 0;
  }
  FF_FUZZ_CHECK(sc->name && sc->lvm && sc->attach && sc->nworkloads > 0);
  FF_FUZZ_CHECK(!(sc->spec && sc->farm));
  FF_FUZZ_CHECK(!sc->spec || sc->spec[0] == '/' ||
                !strncmp(sc->spec, "builtin:", 8));
  FF_FUZZ_CHECK(!(sc->profile && sc->latency_ns));
  for (unsigned i = 0; i < sc->nworkloads; i++) {
    const struct ff_workload *w = &sc->workloads[i];

    FF_FUZZ_CHECK(w->name && w->type < FF_W_COUNT && w->repeat >= 1);
    FF_FUZZ_CHECK(strcmp(ff_wtype_name(w->type), "?"));
    FF_FUZZ_CHECK(!w->lv || strchr(w->lv, '/'));
  }
  for (unsigned i = 0; i < sc->naxes; i++) {
    FF_FUZZ_CHECK(sc->axes[i].nvalues >= 1);
    FF_FUZZ_CHECK(ff_scenario_axis(sc, sc->axes[i].key) == &sc->axes[i]);
  }

  n = ff_scenario_nconfigs(sc);
  FF_FUZZ_CHECK(n >= 1 && n <= 10000);
  idx = calloc(sc->naxes + 1, sizeof *idx);
  if (!idx)
    abort();
  for (uint64_t k = 0; k < n; k += 1 + n / 64) {
    ff_scenario_config(sc, k, idx);
    for (unsigned i = 0; i < sc->naxes; i++)
      FF_FUZZ_CHECK(idx[i] < sc->axes[i].nvalues);
  }
  free(idx);

  if (sc->farm) {
    struct ff_spec *sp = ff_spec_load_string(sc->farm, "farm");

    if (sp)
      ff_farm_free(ff_fuzz_build_farm(sp, "farm"));
    else
      ff_fuzz_check_error("farm");
    ff_spec_free(sp);
  }
  ff_scenario_free(sc);
  return 0;
}
