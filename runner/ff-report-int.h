/* fusefarm: the charts' text and layout (runner/ff-report.c), for its
 * unit test (tests/unit/test-report.c): what the charts say and where
 * the timeline's labels go, without drawing anything.
 */
#ifndef FF_REPORT_INT_H
#define FF_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ff-runreport.h"

/* What a chart is of, for a bug report that carries only the picture:
 * the farm, the lvm build, the profile and how activation ran.  With c,
 * of that configuration alone (a timeline); without, of the document,
 * each "per configuration" when the configurations differ in it. */
void ff_report_context_line(const struct ff_runreport *rr,
                            const struct ff_rr_config *c, char *buf,
                            size_t len);

/* The value of key in c as the charts label it: "use_aio=0" (the key's
 * last path part), "use_aio=–" when c lacks it. */
void ff_report_axis_value(const struct ff_rr_config *c, const char *key,
                          char *buf, size_t len);

/* c by its axis values: "key=value" of each key that varies between the
 * configurations, space-separated, in the document's key order; c's
 * label when none varies. */
void ff_report_config_name(const struct ff_runreport *rr,
                           const struct ff_rr_config *c, char *buf,
                           size_t len);

/* The rows of axis values under a bar or io chart: row r labels key
 * rr->keys[keys[r]], rows ordered innermost first (the key that changes
 * most often between neighbouring configurations nearest the axis).  A
 * span is the configurations first..last (indexes into rr->configs) that
 * share the row's value and those of every row after it: one label for
 * the lot.  ff_report_axis_spans() returns the rows (at most 4; none
 * when no key varies) and fills keys; ff_report_axis_span_end() the last
 * configuration of the span of row r that starts at first. */
#define FF_REPORT_AXIS_ROWS_MAX 4
size_t ff_report_axis_keys(const struct ff_runreport *rr,
                           size_t keys[FF_REPORT_AXIS_ROWS_MAX]);
size_t ff_report_axis_span_end(const struct ff_runreport *rr,
                               const size_t *keys, size_t nrows, size_t r,
                               size_t first);

/* The title of w's timeline in c: the scenario, the workload, c by its
 * axis values (ff_report_config_name) and id, and the repetition drawn:
 * "boot: boot-event, use_aio=0 (config 2), repetition 3 of 3 (the
 * last)".  (The chart shortens it to the id when it is wider than the
 * chart; the line under it has the farm, lvm build and profile:
 * ff_report_context_line.) */
void ff_report_timeline_title(const struct ff_runreport *rr,
                              const struct ff_rr_config *c,
                              const struct ff_rr_workload *w, char *buf,
                              size_t len);

/* A timeline label: the unit (index into w->units), its text, its box
 * (x0, y0, x1, y1 in px of the 1200 px wide chart) and whether it is one
 * of the `top` slowest (bold). */
struct ff_report_label {
  size_t unit;
  char text[160];
  double x0, y0, x1, y1;
  bool bold;
};

/* A box in px: x0 < x1, y0 < y1. */
struct ff_report_box {
  double x0, y0, x1, y1;
};

/* The bar of every unit of w's timeline with its time axis reaching xmax
 * (*bars[i] is w->units[i]'s; malloc'd): rows sorted by start, at least
 * 1 px wide.  -1 with ff_error on failure. */
int ff_report_timeline_bars(const struct ff_rr_workload *w, double xmax,
                            struct ff_report_box **bars);

/* The labels of w's timeline (the chart ff_report_svg draws), with its time
 * axis reaching xmax: the `top` slowest first, right of their bar or else left
 * of it, then every k-th row where there is room.  No two boxes overlap, and
 * no label covers another row's bar, except one of the `top` slowest that has
 * no such room (then it is drawn on a veil over them).  *labels is malloc'd
 * (*nlabels of them); *unplaced counts the slowest that found no room.  -1
 * with ff_error on failure. */
int ff_report_timeline_labels(const struct ff_rr_workload *w, int top,
                              double xmax, struct ff_report_label **labels,
                              size_t *nlabels, size_t *unplaced);

#endif
