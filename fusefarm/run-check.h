/* fusefarm: the whole scenario checked before anything is mounted
 * (`fusefarm run`, `fusefarm run --check`, `fusefarm check SCENARIO`;
 * docs/scenario-format.md "Checked before a run").
 *
 * What the parser cannot know without the lvm builds and the farm:
 * every lvm.conf key of the matrix against the list of settings each
 * build prints (`lvm config --type list`: a key no build of the run knows
 * is refused, with a suggestion; a key the fence's version table lists
 * is left out for builds without it, as the run does); every profile
 * (the scenario's, each fusefarm/profile value) loaded for the farm of
 * every device count the scenario runs.  The parser has already checked
 * every fence, target, fstype, dm and workload value.
 */
#ifndef FF_RUN_CHECK_H
#define FF_RUN_CHECK_H

#include "ff-scenario.h"
#include "lvm-resolve.h"

/* Check sc, whose builds lvms resolved (ff_lvm_set_resolve).  prog
 * prefixes every message ("fusefarm run").  With list, also print on
 * stdout the configurations, numbered as the run's table numbers them,
 * and the number of commands the run would time.  0, or the exit status
 * after printing why on stderr: 2 bad input (file:line, the key and the
 * value), 1 the check could not run (no scratch directory, no memory). */
int ff_run_check(const char *prog, const struct ff_scenario *sc,
                 const struct ff_lvm_set *lvms, int list);

/* `fusefarm check SCENARIO`: load the scenario at path, resolve its lvm
 * builds and check it as `fusefarm run SCENARIO --check` does, printing
 * the same.  The exit status: 0, 1 or 2. */
int ff_run_check_file(const char *prog, const char *path);

#endif
