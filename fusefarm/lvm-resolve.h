/* fusefarm: the lvm builds of a scenario, resolved once (run and vm).
 *
 * Every lvm a scenario names (its lvm, or each value of its fusefarm/lvm
 * axis, or --lvm LVM...) is resolved before anything is mounted or
 * booted: a path (relative to the scenario file), a command on PATH, or
 * else a git ref, built (or taken from the cache) by `fusefarm lvm-build
 * REF --git TREE`.  Each must give its version; the axis values become
 * the short versions ("2.03.12"), which tables, charts and --expect
 * qualifiers ([lvm=2.03.12]) show and match.
 */
#ifndef FF_LVM_RESOLVE_H
#define FF_LVM_RESOLVE_H

#include "ff-fence.h"
#include "ff-scenario.h"

/* One lvm build (the scenario's lvm, or one value of its axis). */
struct ff_lvm_build {
  char *entry;       /* as the scenario or --lvm gave it */
  char *path;        /* the binary: a path, or the command found on PATH */
  char version[128]; /* `lvm version`: "2.03.16(2) (2022-05-18)" */
  char label[64];    /* the axis value: "2.03.16" (then "2.03.16#2") */
  /* What the build knows (devices file, hints, which lvm.conf keys),
   * parsed once from its version when the build is resolved. */
  struct ff_lvm_caps caps;
};

/* The builds of one scenario. */
struct ff_lvm_set {
  struct ff_lvm_build *b; /* [n] */
  unsigned n;
  int axis; /* index of the fusefarm/lvm axis, -1: none */
};

/* Resolve every lvm of sc into s (s->b[i] is axis value i, or the one
 * lvm); the axis's values become the builds' labels.  git: the lvm2
 * tree refs are built from (--lvm-git), else the scenario's lvm_git,
 * else $FF_LVM_GIT.  self: the fusefarm program (for `lvm-build`); prog
 * prefixes every message ("fusefarm run").  0, or the exit status (1:
 * a build is missing or does not run, 2: bad ref or no tree given) after
 * printing why. */
int ff_lvm_set_resolve(struct ff_lvm_set *s, struct ff_scenario *sc,
                       const char *git, const char *self, const char *prog,
                       int quiet);

/* The build configuration idx (ff_scenario_config()) runs. */
const struct ff_lvm_build *ff_lvm_set_for(const struct ff_lvm_set *s,
                                          const unsigned *idx);

void ff_lvm_set_free(struct ff_lvm_set *s);

/* name (no slash) found as an executable on PATH (or, with no PATH, the
 * usual directories): its path into out and 1, else 0. */
int ff_on_path(const char *name, char *out, size_t len);

#endif
