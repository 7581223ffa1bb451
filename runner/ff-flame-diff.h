/* fusefarm: two runs' flame graphs compared, workload by workload:
 * `fusefarm report A.json --diff B.json` and `fusefarm report RUN.json
 * --diff-configs I,J` (docs/report.md, "Where the time goes").
 *
 * INVARIANTS
 *
 * - Side A is the "before", B the "after".  A pair of configurations
 *   (one of A's, one of B's) is compared on every workload both have a
 *   flame graph of (run.json's "flame" member, docs/run-json.md), in
 *   the order of A's graphs.
 * - Each side is normalised by its own total samples: a frame's share is
 *   the samples with it anywhere on their stack (inclusive, once per
 *   sample however often it recurs) over all the side's samples.
 * - Per workload: a differential SVG, flame-diff-<I>-<J>-<workload>.svg
 *   in the output directory (widths from B, colour by the change of share
 *   from A: ff_flame_svg with a base), and a table of the frames whose
 *   inclusive share grew most (ff_flame_print_grew).
 * - Off-CPU graphs (a graph's "offcpu" member, counts in microseconds
 *   blocked) are compared the same way where both sides have them:
 *   flame-diff-off-<I>-<J>-<workload>.svg and a second table; a side
 *   without them (no tracefs, its recording failed) leaves them out
 *   silently.
 * - Everything is read and checked before anything is written.
 *
 * ERRORS
 *
 * FF_FLAME_DIFF_BAD (bad input: a document that is no run document or
 * has no flame graphs, a configuration it does not have, a folded file
 * that is missing or malformed, no workload on both sides) or
 * FF_FLAME_DIFF_WRITE (an output that cannot be written), with one
 * ff_error() message naming the file, configuration or workload.
 *
 * THREADS
 *
 * None.
 */
#ifndef FF_FLAME_DIFF_H
#define FF_FLAME_DIFF_H

#include <stddef.h>
#include <stdio.h>

#define FF_FLAME_DIFF_TOP 20

enum {
  FF_FLAME_DIFF_OK = 0,
  FF_FLAME_DIFF_BAD = -1,
  FF_FLAME_DIFF_WRITE = -2
};

struct ff_flame_diff {
  const char *a, *b;           /* run documents (the same one: configs) */
  unsigned a_config, b_config; /* both 0: every configuration id both have */
  const char *outdir;          /* NULL: "."; made when missing */
  size_t top;                  /* frames per table; 0: FF_FLAME_DIFF_TOP */
};

/* Compare; tables to out, notes (a workload left out: its graph failed
 * on one side) to err.  FF_FLAME_DIFF_OK, _BAD or _WRITE. */
int ff_flame_diff_runs(const struct ff_flame_diff *d, FILE *out, FILE *err);

#endif
