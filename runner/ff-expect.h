/* fusefarm: expectations on a run, for `git bisect run` (docs/bisect.md).
 *
 * `fusefarm run SCENARIO --expect EXPR` and `fusefarm report RUN.json
 * --expect EXPR` judge an expression over the run document's median wall
 * times and the farm's read counts: 0 when every expression holds, 1 when one
 * fails, 125 (git bisect's "skip") when one cannot be judged because the build
 * or the farm did not run what it needs.
 *
 * GRAMMAR (docs/bisect.md "Expressions")
 *
 *   expr    := and ("or" and)*
 *   and     := cmp ("and" cmp)*
 *   cmp     := sum ("<" | "<=" | ">" | ">=") sum ["confidently"]
 *            |  "(" expr ")"
 *   sum     := prod (("+" | "-") prod)*
 *   prod    := unary (("*" | "/") unary)*
 *   unary   := "-" unary | NUMBER [UNIT] | term | "(" sum ")"
 *   term    := ["baseline" "."] (w | FUNCTION "(" w ")") | "baseline"
 *   w       := WORKLOAD ["[" KEY "=" VALUE ("," ...)* "]"]
 *   FUNCTION := reads | bytes | reads_per_device | bytes_per_device
 *             | reads_per_command | bytes_per_command
 *
 * WORKLOAD is a workload name of the run ([A-Za-z_][A-Za-z0-9_-]*, so
 * `a-b` is one name: subtract with spaces, `a - b`); its value is the
 * workload's median wall time in seconds.  FUNCTION(W) is what the farm
 * served during a run of W, the median over its runs: reads or bytes, per
 * run, per farm device of the configuration, or per command of the run
 * (1, or lvchange's count; refused for event activation).  UNIT is s,
 * ms, us, min (times) or B, KiB, MiB, GiB (bytes, binary only) and must
 * touch its number (`500ms`, `64KiB`); a number without one takes the
 * kind of what it is compared with (`pvs < 2` is 2 s).  Every value is a
 * time, bytes, a count of reads or a plain number: comparing or adding
 * two kinds, multiplying two measured values or dividing a plain number
 * by one is a parse error at the operator.
 * "==" and "!=" are refused: two timings are never equal.  A comparison
 * is not chained (`a < b < c` is an error).  A bare "baseline" is
 * `baseline.W[...]` for the one workload term W[...] on the other side of
 * its comparison.
 *
 * MEANING
 *
 * Two wall times compared, each perhaps times a positive number, are
 * judged by the 95% interval of their ratio (ff_runreport_ratio) when
 * the comparison says "confidently" (it holds when the whole interval is
 * on its side; too few repetitions: not judged) or when one side is a
 * baseline term and the other not (it fails only when the whole interval
 * is on the wrong side; too few repetitions: the medians).  Everything
 * else compares medians.
 *
 * The expression is evaluated once for every configuration C of the run:
 * an unqualified term is the workload in C; `W[k=v]` is W in the
 * configuration whose settings are C's with k set to v (k is a settings
 * key, or its last part: `use_aio` for global/use_aio); `baseline.W` is W
 * in the --baseline run's configuration with the same settings (on the
 * keys that vary in the baseline).  Evaluations that resolve every term to
 * the same configurations as an earlier one are not repeated; a C for
 * which a qualified term has no configuration is passed over.  The
 * expression holds when every evaluation holds.
 *
 * A term whose workload has a failed run or unit (the table's "!"), or
 * that did not run in its configuration, or a run that stopped before it
 * ran, cannot be judged: that is FF_EXPECT_UNJUDGED, never a verdict on
 * the build.  A name or a setting the run does not have at all is bad
 * input (an error, exit 2): a typo must not make bisect skip every commit.
 *
 * OWNERSHIP: a struct ff_expect owns its text and tree; ff_expect_free().
 * ERRORS: NULL or -1 with one ff_error() message (ff-error.h); a parse
 * error starts "at column N: " (1-based, in bytes).
 * THREADS: none; a parsed expression is not modified by judging it.
 */
#ifndef FF_EXPECT_H
#define FF_EXPECT_H

#include <stddef.h>

#include <jansson.h>

#include "ff-runreport.h"
#include "ff-scenario.h"

struct ff_expect;

enum ff_expect_status {
  FF_EXPECT_HOLDS = 0,
  FF_EXPECT_FAILS = 1,
  FF_EXPECT_UNJUDGED = 125,
};

/* Parse text.  NULL with ff_error "at column N: expected a number or a
 * workload name, got '<'" (and the like) when it is not an expression. */
struct ff_expect *ff_expect_parse(const char *text);

void ff_expect_free(struct ff_expect *e);

/* The text it was parsed from. */
const char *ff_expect_text(const struct ff_expect *e);

/* Whether it names the baseline (then judging needs one). */
int ff_expect_uses_baseline(const struct ff_expect *e);

/* Judge e over the run rr (base: the --baseline run, NULL if none).
 * Returns the run document's "expect" entry (docs/run-json.md), a new
 * reference, and its status in *st; NULL with ff_error when e does not fit
 * the run: a workload or setting neither run has, a qualifier value no
 * configuration has, several configurations matching a term, a baseline
 * term without base, or no configuration to evaluate in. */
json_t *ff_expect_judge(const struct ff_expect *e,
                        const struct ff_runreport *rr,
                        const struct ff_runreport *base,
                        enum ff_expect_status *st);

/* The exit status for n judged expressions: 125 when any is unjudged,
 * else 1 when any fails, else 0. */
int ff_expect_exit(const enum ff_expect_status *st, size_t n);

/* Judge the n expressions ex[] over rr (and base) and set doc's "expect"
 * array to their entries (doc: the run document rr was loaded from, or
 * one to be written).  Returns ff_expect_exit() of them; -1 with ff_error
 * (prefixed with the expression) when one does not fit the run. */
int ff_expect_judge_all(struct ff_expect *const *ex, size_t n,
                        const struct ff_runreport *rr,
                        const struct ff_runreport *base, json_t *doc);

/* Print the last ff_error of ff_expect_parse(text) for a command:
 * "fusefarm CMD: --expect: at column N: WHY", then text and a caret under
 * column N. */
void ff_expect_print_error(FILE *out, const char *cmd, const char *text);

/* "holds", "fails", "not judged": the "result" of an "expect" entry. */
const char *ff_expect_status_name(enum ff_expect_status st);

/* A run document of what sc will run, every workload of every
 * configuration with one run of 1 s, loaded as a model: judging an
 * expression over it checks its names and qualifiers (and the baseline's
 * fit) before anything runs.  NULL with ff_error on allocation failure. */
struct ff_runreport *ff_expect_skeleton(const struct ff_scenario *sc);

#endif
