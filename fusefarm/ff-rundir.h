/* fusefarm: the run directory of `fusefarm run` and `fusefarm vm`
 * (docs/report.md): one new directory per run holding its run.json,
 * report.txt and charts.
 */
#ifndef FF_RUNDIR_H
#define FF_RUNDIR_H

#include "ff-runreport.h"

#include <stddef.h>

/* --out DIR given to `fusefarm CMD`: refuse, before anything runs, one
 * that is not a directory or not empty (a run directory holds one run).
 * Returns 0, or 2 after printing why. */
int ff_rundir_check(const char *cmd, const char *dir);

/* Make the run directory into out (PATH_MAX): given (--out DIR), or a
 * new ./fusefarm-CMD-NAME-YYYYmmdd-HHMMSS (then -2, -3, ... if that
 * exists), NAME the scenario's name made a file name.  *made: whether
 * this call created it.  -1 with ff_error. */
int ff_rundir_make(const char *given, const char *cmd, const char *name,
                   char *out, int *made);

/* "run.json, report.txt, run.svg ...": the names in dir, sorted, into
 * buf ("" when it holds none). */
void ff_rundir_list(const char *dir, char *buf, size_t len);

/* The printed report (ff_report_print), as the file path. */
int ff_rundir_write_report(const struct ff_runreport *rr, const char *path,
                           int top);

/* What a run (`fusefarm run`, `vm`) or `fusefarm report` gives from one
 * run document, in one order: the report on stdout, then each output
 * that is named (NULL or "": none): report.txt, the CSV files, the SVG
 * charts.  0, or -1 with ff_error at the first that failed. */
struct ff_rundir_outputs {
  const char *txt, *csv, *svg;
  int top;
};
int ff_rundir_render(const struct ff_runreport *rr,
                     const struct ff_rundir_outputs *o);

/* The closing lines of a run with a run directory, on stderr: "fusefarm
 * CMD: results in DIR/: FILES" (or "what the failed run left") and how
 * to print the report again from json; a directory the run made and left
 * empty is removed instead. */
void ff_rundir_summary(const char *cmd, const char *dir, int failed,
                       const char *json, int made);

#endif
