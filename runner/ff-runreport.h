/* fusefarm: render a run document (docs/run-json.md) as text and CSV.
 *
 * `fusefarm run --json FILE` writes one document per run; `fusefarm
 * report` and the runner itself render it (docs/report.md).  This module
 * holds the part that needs no graphics library: ff_runreport_load_text()
 * and ff_runreport_load_file() parse the document, check it once and build
 * a read-only model of it; the text table and the CSV files are printed
 * from the model, and the SVG charts (runner/ff-report.c) are drawn from
 * the same model.
 *
 * INVARIANTS (of a model ff_runreport_load_text or _file returned)
 *
 * - Every field a renderer uses was present with its documented type;
 *   optional fields (listed at each member below) are NULL or -1 when
 *   the document leaves them out (or, for strings, has null), and an
 *   error when present with the wrong type.  Fields the renderers do
 *   not use are not looked at.
 * - "format" is "fusefarm-run" and "version" is 1.
 * - Times are from 0 to 1e9 seconds; per workload min <= median <= max;
 *   every unit has start <= end.
 * - Config ids are unique; workload names are unique within a config.
 * - A workload's units are set exactly when its type is
 *   "event-activation" (which needs "devices" and "activations").
 * - keys[] is the union of the configs' settings keys, in the order the
 *   document first names them.
 *
 * OWNERSHIP
 *
 * The model owns everything it points to (it keeps the parsed document
 * for its strings) until ff_runreport_free(); the text it was loaded from
 * is not kept.  Strings the functions below return are malloc'd; caller
 * frees.
 *
 * ERRORS
 *
 * Functions return -1 or NULL after recording one message with ff_error()
 * (ff-error.h).  A document error names where it is, as a path into the
 * document: `configs[2].workloads[0]: missing "median"`,
 * `configs[0].workloads[1].devices[3]: end 0.1 is before start 0.3`.
 *
 * THREADS
 *
 * None.  The model is not modified after loading, so any number of
 * threads may render from one model at once.
 */
#ifndef FF_RUNREPORT_H
#define FF_RUNREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The "slowest units" list and the timeline labels default to this. */
#define FF_RUNREPORT_TOP 10

/* Varying settings get their own table columns up to this many; beyond,
 * the table shows each config's label instead. */
#define FF_RUNREPORT_SETTING_COLS 4

enum ff_rr_unit_kind {
  FF_RR_PVSCAN,   /* a device's `pvscan --cache ... DEV` */
  FF_RR_VGCHANGE, /* a VG's `vgchange -aay --autoactivation event VG` */
};

/* One command of an event activation (a "unit", as in systemd-analyze
 * blame), from the workload's last repetition. */
struct ff_rr_unit {
  enum ff_rr_unit_kind kind;
  const char *device; /* pvscan: the device; vgchange: NULL */
  const char *vg;     /* the VG; NULL for a pvscan whose "vg" is null */
  double start, end;  /* seconds from the start of the repetition */
  long long exit;
  int vg_complete; /* pvscan: 0 or 1; vgchange: -1 */
};

/* One direction of an io run (fio's "read" or "write"): bytes/s, I/Os
 * per second, I/Os done, completion latency p50 and p99 in ns (-1: no
 * I/O this way). */
struct ff_rr_iodir {
  double bw, iops;
  long long ios, clat_p50_ns, clat_p99_ns;
};

/* One PV of an io run's LV target: what the farm served it during the
 * run (io.devices). */
struct ff_rr_iodev {
  const char *name;
  long long writes, flushes;
};

struct ff_rr_run {
  double wall;
  long long exit, errors;
  const char *message; /* the first failed command's error line, or NULL */
  /* optional (-1 when absent): what the farm served during this run, and
   * the number of commands it ran (lvchange's "commands") */
  long long reads, bytes_read, commands;
  /* io workloads: has_io when the run has an "io" object (a run whose
   * fio failed may have none) */
  bool has_io;
  struct ff_rr_iodir io_read, io_write;
  long long io_error;
  /* optional (-1 when absent): the farm's writes and flushes during the
   * run (io.farm: the target's, or the whole farm's for an LV) */
  long long io_farm_writes, io_farm_flushes;
  /* io on an LV: each PV of its VG, in the document's order (NULL and 0
   * otherwise) */
  struct ff_rr_iodev *io_devs;
  size_t nio_devs;
  /* fs workloads' mkdir storm (fs.mkdir; -1 when absent): directories
   * made, creates per second; the farm's reads and bytes during the load
   * (fs.load_farm; -1 when absent) */
  long long mkdir_made;
  double mkdir_per_s;
  long long load_reads, load_bytes;
};

struct ff_rr_workload {
  const char *name, *type;
  bool event;         /* type is "event-activation" */
  bool io;            /* type is "io" */
  const char *target; /* io: the target (optional: NULL) */
  long long repeat;
  struct ff_rr_run *runs;
  size_t nruns;
  double min, median, max;
  /* optional (-1 when absent): what the farm served during the last run */
  long long reads, bytes_read;
  /* event only: devices' pvscans in document order, then the VGs'
   * vgchanges in document order; NULL and 0 otherwise */
  struct ff_rr_unit *units;
  size_t nunits, npvscan, nvgchange;
  /* derived: runs with exit != 0 or errors > 0, the largest exit
   * status of the runs (0 if none is positive), their errors summed,
   * units with exit != 0 */
  size_t failed_runs;
  long long worst_exit, errors;
  size_t failed_units;
  const char *message; /* the first run's "message", or NULL */
};

enum ff_rr_value_kind {
  FF_RR_STRING,
  FF_RR_INTEGER,
  FF_RR_REAL,
  FF_RR_BOOLEAN,
};

/* One member of a config's "settings" object. */
struct ff_rr_setting {
  const char *key;
  /* the value as text: a string as it is, an integer in decimal, a real
   * as "%.15g", a boolean as "true" or "false" */
  const char *text;
  enum ff_rr_value_kind kind;
};

struct ff_rr_config {
  long long id;
  const char *label;
  struct ff_rr_setting *settings; /* in document order */
  size_t nsettings;
  /* "profile" and "lvm"'s "label" and "version" (optional: NULL) */
  const char *profile, *lvm_label, *lvm_version;
  bool has_farm; /* "farm" present: devices, vgs, lvs are set */
  long long devices, vgs, lvs;
  /* "dm" (fusefarm run): "real" or "none", NULL when absent; with real,
   * the dm devices its activations made in all and the most at once */
  const char *dm_mode;
  long long dm_created, dm_max_active;
  /* "slow" (optional): the name of the profile this config ran under and
   * the devices it made slow (nslow of them, by name, in document
   * order); slow_profile is NULL when the document has no "slow" (older
   * runs: nothing is known, nothing is marked) */
  const char *slow_profile;
  const char **slow_devices;
  size_t nslow;
  struct ff_rr_workload *workloads;
  size_t nworkloads;
};

/* One evaluation of an --expect expression (ff-expect.h): in config
 * `config` (label), the expression with its values substituted (text;
 * NULL when not judged), holds 1 or 0, or -1 when not judged (then
 * reason says why). */
struct ff_rr_expect_eval {
  long long config;
  const char *label, *text, *reason;
  int holds;
};

/* An "expect" entry: the expression, its result ("holds", "fails", "not
 * judged") and its evaluations (at least one). */
struct ff_rr_expect {
  const char *expression, *result;
  struct ff_rr_expect_eval *evals;
  size_t nevals;
};

struct ff_runreport {
  const char *scenario;
  const char *scenario_file, *description; /* optional: NULL */
  const char *started;
  const char *finished; /* optional: NULL */
  const char *error;    /* optional: NULL; set when the run stopped early */
  const char *kernel, *lvm_version;
  const char *lvm, *fusefarm_version; /* optional: NULL */
  long long cpus;                     /* optional: -1 */
  int device_mapper;                  /* optional: -1; else 0 or 1 */
  const char **notes;                 /* optional: nnotes == 0 */
  size_t nnotes;
  struct ff_rr_config *configs;
  size_t nconfigs;
  const char **keys; /* union of the settings keys */
  bool *varying;     /* keys[k] differs between configs or is missing
                      * from one */
  size_t nkeys;
  struct ff_rr_expect *expect; /* optional: nexpect == 0 */
  size_t nexpect;
};

/* Parse the run document json (len bytes, need not be NUL-terminated),
 * check it and build its model.  NULL with an ff_error naming the first
 * problem (see ERRORS), prefixed with "name: " when name is not NULL;
 * text that is not JSON gives "NAME:LINE:COLUMN: not valid JSON: WHY"
 * ("not valid JSON at line LINE, column COLUMN: WHY" without a name).
 * json == NULL is an error too. */
struct ff_runreport *ff_runreport_load_text(const char *json, size_t len,
                                            const char *name);

/* ff_runreport_load_text() of the file at path, named by path; a file
 * that cannot be read gives "PATH: REASON". */
struct ff_runreport *ff_runreport_load_file(const char *path);

/* Frees the model.  NULL is a no-op. */
void ff_runreport_free(struct ff_runreport *rr);

/* Print the report to out: a header (scenario, host, dates, settings
 * common to every config), the table (one row per config, one column
 * group per workload name: median wall time with min–max when repeat >
 * 1; for event activation also the slowest pvscan and vgchange of the
 * last repetition), the definitions of its terms (repetitions, units,
 * built-in profiles), failed runs, for io workloads the io table (fio's
 * MB/s, IOPS, clat p50/p99 per config, workload and direction: median
 * and min–max over the runs), the verdict
 * (ff_runreport_print_verdict), then per event-activation workload the
 * `top` slowest units (no such lists when top is 0), then the notes.  UTF-8
 * (the ranges use an en dash).  -1 with ff_error if top < 0 or writing fails.
 */
int ff_runreport_print(const struct ff_runreport *rr, FILE *out, int top);

/* ---- the verdict (ff-runreport-verdict.c, docs/report.md) -------------
 *
 * Printed under the table by ff_runreport_print(), so `fusefarm run` and
 * `fusefarm report` say the same: the biggest ratios of wall times, each
 * with its 95% confidence interval from the repetitions (ff-stats-ci.h:
 * the Hodges-Lehmann ratio, the Mann-Whitney interval), a difference
 * whose interval holds 1 never called a result. */

enum ff_rr_judgement {
  FF_RR_CLEAR,       /* the 95% interval is clear of 1: a result */
  FF_RR_NOISE,       /* it holds 1: no clear difference */
  FF_RR_TOO_FEW,     /* too few repetitions for a 95% interval (4 a
                      * side, ff_ci_enough): not judged */
  FF_RR_MIXED,       /* (an effect over several pairs) clear in some
                      * pairs or directions, not in others */
  FF_RR_FAILED,      /* a side has a failed run: its times are not the
                      * workload's, not judged */
  FF_RR_INTERACTION, /* (an effect over several pairs) two pairs'
                      * intervals do not overlap: the effect depends on
                      * the other settings */
};

/* a's wall times against b's: ratio is the Hodges-Lehmann estimate of
 * a / b from the runs' wall times, [lo, hi] its 95% interval (exact
 * level: confidence); CLEAR when lo > 1 or hi < 1, NOISE otherwise,
 * TOO_FEW (lo = hi = ratio, confidence 0) when the runs are too few,
 * FAILED (before all else) when a or b has a failed run or unit (the
 * table's "!"). */
struct ff_rr_ratio {
  double ratio, lo, hi, confidence;
  size_t nruns_a, nruns_b;
  enum ff_rr_judgement judgement;
};

/* Compare a to b into *out.  -1 with ff_error when a wall time is 0
 * (no ratio) or memory runs out. */
int ff_runreport_ratio(const struct ff_rr_workload *a,
                       const struct ff_rr_workload *b,
                       struct ff_rr_ratio *out);

/* What one value of a matrix key does to one workload: over the npairs
 * pairs of configs that differ only in that key (one with the key's
 * first value in the document, the base, one with this value), ratio
 * is the geometric mean of the pairs' ratios (value / base), lo and hi
 * the smallest lo and largest hi of the pairs' intervals, rmin and rmax
 * the smallest and largest pair ratio; judgement is the pairs' common
 * one: FAILED, else TOO_FEW, if any pair has it; else INTERACTION when
 * two pairs' intervals do not overlap; else CLEAR or NOISE when every
 * pair is so (CLEAR in one direction), MIXED otherwise. */
struct ff_rr_effect {
  const char *workload;
  size_t npairs;
  double ratio, lo, hi, rmin, rmax;
  enum ff_rr_judgement judgement;
};

/* The effects of value `value` of settings key `key` against the key's
 * base value: one per workload name that both configs of at least one
 * pair ran (with a ratio), in the order of ff_runreport_workload_names().
 * *n of them, malloc'd (caller frees; NULL with *n == 0 when there are
 * none).  *npairs: how many pairs of configs differ only in key.  NULL
 * with ff_error on allocation failure (then *n is (size_t)-1). */
struct ff_rr_effect *ff_runreport_effects(const struct ff_runreport *rr,
                                          const char *key, const char *value,
                                          size_t *n, size_t *npairs);

/* Print the verdict to out: "verdict (...):" then, for every config that
 * ran both, event activation against direct activation (every config up
 * to 4 of them, else the smallest and the largest ratio), then for every
 * varying settings key and each of its values other than the base, the
 * effects (ff_runreport_effects), clear ones biggest first, one a line,
 * then interactions and mixed effects, each a line listing its pairs by
 * their other settings, then those with no clear difference and those
 * not judged on one line each.  -1
 * with ff_error on allocation failure. */
int ff_runreport_print_verdict(const struct ff_runreport *rr, FILE *out);

/* Print the --expect verdicts the document holds (docs/report.md):
 * "expect (exit N: ...):" then one line per expression, its result and,
 * for one evaluation, the expression with its values substituted; for
 * several, one line per evaluation under it.  Nothing when the document
 * has none.  -1 with ff_error if writing fails. */
int ff_runreport_print_expect(const struct ff_runreport *rr, FILE *out);

/* A judgement's name in the run document's "verdict"
 * (ff-runreport-json.h): "clear", "noise", "too-few", "mixed", "failed"
 * or "interaction". */
const char *ff_runreport_judgement_name(enum ff_rr_judgement j);

/* A ratio for people: "96x", "3.1x", "1.02x", "0.004x". */
char *ff_runreport_fmt_ratio(double r, char *buf, size_t len);

/* The runs CSV (RFC 4180 quoting, LF line ends, header line first): one row
 * per run, columns scenario, config_id, config_label, then one per keys[]
 * entry (the setting's value, empty when the config lacks it), then workload,
 * type, run (1-based), wall, exit, errors.  -1 with ff_error if writing fails.
 */
int ff_runreport_csv_runs(const struct ff_runreport *rr, FILE *out);

/* The units CSV: one row per unit of every event-activation workload,
 * columns config_id, workload, unit ("pvscan" or "vgchange"), device
 * (empty for vgchange), vg (empty when null), start, end, duration,
 * exit, vg_complete ("true"/"false"; empty for vgchange).  Just the
 * header when the run has no event activation.  -1 with ff_error if
 * writing fails. */
int ff_runreport_csv_units(const struct ff_runreport *rr, FILE *out);

/* Indexes into w->units (w->nunits of them), in this order:
 * FF_RR_BY_DURATION: longest first (ties: earlier start, then pvscan
 * before vgchange, then name); FF_RR_BY_START: earliest start first (ties:
 * earlier end, then pvscan first, then name).  NULL with ff_error on
 * allocation failure or if w has no units; caller frees. */
enum ff_rr_order {
  FF_RR_BY_DURATION,
  FF_RR_BY_START,
};
size_t *ff_runreport_order(const struct ff_rr_workload *w,
                           enum ff_rr_order order);

/* The distinct workload names over all configs, in the order the
 * document first names them: an array of *n strings borrowed from the
 * model (caller frees the array).  NULL with ff_error on allocation
 * failure. */
const char **ff_runreport_workload_names(const struct ff_runreport *rr,
                                         size_t *n);

/* Config c's setting named key, or NULL. */
const struct ff_rr_setting *ff_runreport_setting(const struct ff_rr_config *c,
                                                 const char *key);

/* Config c's workload named name, or NULL. */
const struct ff_rr_workload *
ff_runreport_find_workload(const struct ff_rr_config *c, const char *name);

/* Which of w's units (w a workload of c) touched a device c's profile
 * made slow (c->slow_devices): a pvscan of one, a vgchange of a VG one of
 * whose devices a pvscan of w names.  *out: w->nunits flags (malloc'd,
 * caller frees), or NULL when c has no "slow" or w no units; *n: how many
 * are set.  0, or -1 with ff_error on allocation failure. */
int ff_runreport_slow_units(const struct ff_rr_config *c,
                            const struct ff_rr_workload *w, bool **out,
                            size_t *n);

/* A unit's name: the device for pvscan, the VG for vgchange. */
const char *ff_runreport_unit_name(const struct ff_rr_unit *u);

/* Format seconds for people, as the table does: "0.085", "1.23",
 * "23.3", "2 min 6.7" (3 decimals below 1 s, 2 below 10 s, 1 below
 * 60 s, then minutes), followed by " s" when unit is true.  Writes at
 * most len bytes (NUL included) and returns buf. */
char *ff_runreport_fmt_secs(double s, bool unit, char *buf, size_t len);

/* A file name next to path: path without its ending `ext` (if it ends
 * so) followed by suffix.  ("out.csv", ".csv", "-devices.csv") gives
 * "out-devices.csv"; ("out", ".csv", "-devices.csv") "out-devices.csv".
 * NULL with ff_error on allocation failure. */
char *ff_runreport_sibling(const char *path, const char *ext,
                           const char *suffix);

/* The io chart next to svg_path (the bar chart's path): "-io.svg"
 * after it, ".svg" stripped; written when the document has io rows. */
char *ff_runreport_io_chart_path(const char *svg_path);

/* The timeline SVG for workload w of config c, next to svg_path (the bar
 * chart's path, ".svg" stripped): "-timeline-<id>.svg" when the config
 * has one event-activation workload, "-timeline-<id>-<name>.svg" when it
 * has several (bytes of the name other than [A-Za-z0-9._-] become '_').
 * NULL with ff_error on allocation failure. */
char *ff_runreport_timeline_path(const struct ff_rr_config *c,
                                 const struct ff_rr_workload *w,
                                 const char *svg_path);

/* The runs CSV path's companion for ff_runreport_csv_units:
 * ff_runreport_sibling(csv_path, ".csv", "-devices.csv"). */
char *ff_runreport_units_csv_path(const char *csv_path);

#endif
