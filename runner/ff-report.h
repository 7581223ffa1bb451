/* fusefarm: render a run document (docs/run-json.md, docs/report.md).
 *
 * What `fusefarm run` prints at the end of a run and what `fusefarm
 * report FILE.json` prints from the document it wrote: the text table
 * and the CSV files (rendered by the core, ff-runreport.h) and the SVG
 * charts, drawn here with cairo.
 *
 * Every function renders a model that ff_runreport_load_text() or
 * ff_runreport_load_file() built, so the document was checked before
 * anything is written; the model is borrowed for the call and not
 * modified.  Functions return -1 with an ff_error() on failure.  Output
 * files are created or truncated; on a failure after that they may be
 * left partly written.  No threads; cairo's SVG surfaces are private to
 * the call.
 */
#ifndef FF_REPORT_H
#define FF_REPORT_H

#include <stdio.h>

#include "ff-runreport.h"

/* The text report (header, table, failures, the `top` slowest units of
 * each event activation, notes) to out: ff_runreport_print().  -1 with
 * ff_error when top < 0 or writing fails. */
int ff_report_print(const struct ff_runreport *rr, FILE *out, int top);

/* Two CSV files: the runs at path (one row per run of every workload)
 * and the event-activation units at path's sibling
 * ff_runreport_units_csv_path(path) ("out.csv" -> "out-devices.csv").
 * -1 with ff_error ("open out.csv: Permission denied") on failure. */
int ff_report_csv(const struct ff_runreport *rr, const char *path);

/* SVG charts: the grouped bar chart (median per config and workload,
 * min–max whiskers) at path, and for every event-activation workload a
 * timeline of its units at ff_runreport_timeline_path() ("out.svg" ->
 * "out-timeline-<config id>.svg"), labelling the FF_RUNREPORT_TOP
 * slowest units.  -1 with ff_error on failure. */
int ff_report_svg(const struct ff_runreport *rr, const char *path);

/* ff_report_svg labelling the `top` slowest units of each timeline
 * (top >= 0; other units are labelled only where there is room). */
int ff_report_svg_top(const struct ff_runreport *rr, const char *path,
                      int top);

/* `fusefarm report FILE.json [--csv OUT.csv] [--svg OUT.svg] [--top N]`
 * (cmd-report.c): argv[0] is "report"; returns the exit status: 0
 * success, 1 runtime failure (unreadable or malformed document, write
 * error), 2 bad usage. */
int ff_cmd_report(int argc, char **argv);

#endif
