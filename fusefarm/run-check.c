/* fusefarm: the whole scenario checked before anything is mounted
 * (run-check.h). */
#include "run-check.h"

#include "ff-check.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-fence.h"
#include "ff-paths.h"
#include "ff-profile.h"
#include "ff-spec.h"
#include "ff-workload.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The matrix keys that go into lvm.conf (not the runner's own). */
static int
lvm_conf_key(const char *key)
{
  return strncmp(key, "fusefarm/", 9) != 0;
}

/* Every lvm.conf key of the matrix against each build's list.  0, 1 or
 * 2 after printing why. */
static int
check_keys(const char *prog, const struct ff_scenario *sc,
           const struct ff_lvm_set *lvms)
{
  char tmp[PATH_MAX];
  int any = 0, rc = 0;

  for (unsigned a = 0; a < sc->naxes; a++)
    any |= lvm_conf_key(sc->axes[a].key);
  if (!any)
    return 0;
  ff_pathf(tmp, sizeof tmp, "%s/fusefarm-check.XXXXXX", ff_tmpdir());
  if (!mkdtemp(tmp)) {
    fprintf(stderr, "%s: mkdtemp %s: %m\n", prog, tmp);
    return 1;
  }
  for (unsigned b = 0; b < lvms->n && !rc; b++) {
    const struct ff_lvm_build *lb = &lvms->b[b];
    struct ff_lvm_keys keys;
    int listed = ff_lvm_keys_list(lb->path, tmp, &keys);

    if (listed < 0) {
      fprintf(stderr, "%s: lvm %s: %s\n", prog, lb->label, ff_errmsg());
      rc = 1;
      break;
    }
    if (!listed) {
      fprintf(stderr,
              "%s: note: lvm %s (%s) cannot list its settings (`lvm config "
              "--type list`): the matrix's lvm.conf keys are not checked "
              "against it\n",
              prog, lb->label, lb->path);
      continue;
    }
    for (unsigned a = 0; a < sc->naxes && !rc; a++) {
      const char *key = sc->axes[a].key, *near;

      /* a key of the fence's version table is left out, and named, for
       * a build without it (ff_lvm_key_known) */
      if (!lvm_conf_key(key) || ff_lvm_keys_has(&keys, key) ||
          ff_lvm_key_listed(key))
        continue;
      near = ff_lvm_key_suggest(&keys, key);
      fprintf(stderr,
              "%s: %s:%u: matrix.[%u].key: %s: lvm %s has no such "
              "setting%s%s%s\n",
              prog, sc->file, sc->axes[a].line, sc->axes[a].index, key,
              lb->label, near ? " (did you mean " : "", near ? near : "",
              near ? "?)" : "");
      rc = 2;
    }
    ff_lvm_keys_free(&keys);
  }
  ff_empty_dir(tmp);
  rmdir(tmp);
  return rc;
}

/* The farm of sc (value s of the fusefarm/spec axis sx, if any) scaled to
 * devices (0: as the spec says). */
static struct ff_farm *
load_farm(const struct ff_scenario *sc, const struct ff_axis *sx, unsigned s,
          uint64_t devices)
{
  struct ff_spec *sp =
    sx         ? ff_spec_load_file(sx->values[s].s)
    : sc->farm ? ff_spec_load_string(sc->farm, sc->file)
    : sc->spec ? ff_spec_load_file(sc->spec)
               : ff_spec_load_string(ff_spec_builtin_default, "<built-in>");
  struct ff_farm *farm;

  if (!sp)
    return NULL;
  if (devices && ff_spec_scale(sp, devices) < 0) {
    ff_spec_free(sp);
    return NULL;
  }
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  return farm;
}

/* The device count of value i of the fusefarm/devices axis, else the
 * scenario's one (0: as the spec says). */
static uint64_t
device_count(const struct ff_scenario *sc, unsigned i)
{
  const struct ff_axis *ax = ff_scenario_axis(sc, "fusefarm/devices");

  return ax ? (uint64_t)ax->values[i].i : sc->devices;
}

/* Load one profile for farm: 0, or 2 after printing why (where the
 * scenario names it, and the profile parser's own message). */
static int
check_profile(const char *prog, const struct ff_scenario *sc, unsigned line,
              const char *where, const char *path, const struct ff_farm *farm)
{
  struct ff_profile *p = ff_profile_load_file(path, farm);

  if (p) {
    ff_profile_free(p);
    return 0;
  }
  /* the loader's message starts with the profile's path or name */
  fprintf(stderr, "%s: %s:%u: %s: %s\n", prog, sc->file, line, where,
          ff_errmsg());
  return 2;
}

int
ff_run_check(const char *prog, const struct ff_scenario *sc,
             const struct ff_lvm_set *lvms, int list)
{
  const struct ff_axis *px = ff_scenario_axis(sc, "fusefarm/profile");
  const struct ff_axis *dx = ff_scenario_axis(sc, "fusefarm/devices");
  const struct ff_axis *sx = ff_scenario_axis(sc, "fusefarm/spec");
  uint64_t total = 0, nconf = ff_scenario_nconfigs(sc);
  /* one farm per spec and device count: farms[s * ncounts + d] */
  unsigned ncounts = dx ? dx->nvalues : 1, nspecs = sx ? sx->nvalues : 1;
  struct ff_farm **farms;
  unsigned *idx;
  int rc = check_keys(prog, sc, lvms);

  if (rc || (!list && !px && !sx && !sc->profile))
    return rc;
  farms = calloc((size_t)nspecs * ncounts, sizeof *farms);
  idx = calloc(sc->naxes + 1, sizeof *idx);
  if (!farms || !idx) {
    free(farms);
    free(idx);
    fprintf(stderr, "%s: out of memory\n", prog);
    return 1;
  }
  for (unsigned f = 0; f < nspecs * ncounts && !rc; f++) {
    unsigned d = f % ncounts, sv = f / ncounts;
    char where[64];

    farms[f] = load_farm(sc, sx, sv, device_count(sc, d));
    if (!farms[f]) {
      if (sx)
        fprintf(stderr, "%s: %s:%u: matrix.[%u].values: value %u: %s\n", prog,
                sc->file, sx->values[sv].line, sx->index, sv, ff_errmsg());
      else
        fprintf(stderr, "%s: %s\n", prog, ff_errmsg());
      rc = 2;
      break;
    }
    if (sc->profile)
      rc = check_profile(prog, sc, sc->profile_line, "profile", sc->profile,
                         farms[f]);
    for (unsigned v = 0; px && v < px->nvalues && !rc; v++) {
      if (!strcmp(px->values[v].s, "ideal"))
        continue;
      ff_pathf(where, sizeof where, "matrix.[%u].values: value %u", px->index,
               v);
      rc = check_profile(prog, sc, px->values[v].line, where, px->values[v].s,
                         farms[f]);
    }
  }
  if (!rc && list) {
    printf("scenario %s (%s): %llu configuration%s x %u workload%s\n",
           sc->name, sc->file, (unsigned long long)nconf,
           nconf == 1 ? "" : "s", sc->nworkloads,
           sc->nworkloads == 1 ? "" : "s");
    printf("config  label\n");
    for (uint64_t k = 0; k < nconf; k++) {
      const struct ff_farm *farm;
      char label[1024];

      ff_scenario_config(sc, k, idx);
      farm = farms[(sx ? idx[sx - sc->axes] : 0) * ncounts +
                   (dx ? idx[dx - sc->axes] : 0)];
      ff_config_label(sc, idx, label, sizeof label);
      printf("%6llu  %s\n", (unsigned long long)k + 1, label);
      for (unsigned w = 0; w < sc->nworkloads; w++)
        total += ff_workload_ncommands(&sc->workloads[w], ff_farm_ndevs(farm),
                                       ff_farm_nvgs(farm));
    }
    printf("about %llu timed command%s (lvm, or fio for io and fs "
           "workloads)\n",
           (unsigned long long)total, total == 1 ? "" : "s");
  }
  for (unsigned f = 0; f < nspecs * ncounts; f++)
    ff_farm_free(farms[f]);
  free(farms);
  free(idx);
  return rc;
}
