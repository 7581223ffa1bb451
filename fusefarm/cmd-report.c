/* fusefarm: `fusefarm report`: render a run document again.
 *
 * Reads what `fusefarm run --json FILE` wrote (docs/run-json.md) and
 * prints the same table the run printed, optionally writing the CSV and
 * SVG files (ff-report.h; docs/report.md shows them).  Runs nothing.
 * The document is checked before anything is printed or written.  No
 * threads.
 */
#include "ff-cfgkind.h"
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-expect.h"
#include "ff-flame-diff.h"
#include "ff-junit.h"
#include "ff-report.h"
#include "ff-rundir.h"
#include "ff-runreport.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char report_usage[] =
  "usage: fusefarm report FILE.json [--csv OUT.csv] [--svg OUT.svg] "
  "[--top N]\n"
  "                       [--junit OUT.xml] [--expect EXPR]...\n"
  "                       [--baseline RUN.json]\n"
  "       fusefarm report A.json --diff B.json [--diff-configs I,J] "
  "[--out DIR]\n"
  "                       [--top N]\n"
  "       fusefarm report RUN.json --diff-configs I,J [--out DIR] [--top N]\n"
  "\n"
  "Render a run document written by `fusefarm run --json FILE.json`\n"
  "without running anything: print the table the run printed (one row\n"
  "per lvm.conf configuration, one column group per workload: median wall\n"
  "time, min-max, and for event activation the slowest pvscan and\n"
  "vgchange), the slowest units of each event activation and the run's\n"
  "notes.  docs/report.md describes every output.\n"
  "\n"
  "  -c, --csv OUT.csv  write one row per run to OUT.csv, and one row per\n"
  "                     event-activation unit (pvscan, vgchange) to\n"
  "                     OUT-devices.csv\n"
  "  -s, --svg OUT.svg  draw a bar chart (median per configuration and\n"
  "                     workload) to OUT.svg, and for each configuration\n"
  "                     with event activation a timeline to\n"
  "                     OUT-timeline-<config id>.svg\n"
  "  -j, --junit OUT.xml  write a JUnit XML report for CI (docs/ci.md): a\n"
  "                     testcase per workload and config (failed when one\n"
  "                     of its commands failed) and per --expect EXPR\n"
  "  -t, --top N        list the N slowest units of each event activation\n"
  "                     and label them in its timeline (default 10; 0: no\n"
  "                     list)\n"
  "  -e, --expect EXPR  judge EXPR over the run's median wall times or\n"
  "                     what lvm read (bytes_per_device(W), reads(W)...),\n"
  "                     as `fusefarm run --expect` does (docs/bisect.md):\n"
  "                     exit 0 when every EXPR holds, 1 when one fails,\n"
  "                     125 when one cannot be judged (a failed or\n"
  "                     missing workload); replaces the verdict the run\n"
  "                     stored\n"
  "  -b, --baseline RUN.json  the run that baseline.WORKLOAD names\n"
  "  -d, --diff B.json  compare the flame graphs of two runs made with\n"
  "                     --flamegraph (FILE.json is A, the before; B.json\n"
  "                     the after), each configuration with the same one\n"
  "                     of B: per workload a differential flame graph\n"
  "                     (widths from B, red grew, blue shrank) and the\n"
  "                     --top frames (default 20) whose inclusive share\n"
  "                     of the samples grew most; instead of the table\n"
  "  -D, --diff-configs I,J  compare configuration I of FILE.json with\n"
  "                     configuration J (of B.json with --diff)\n"
  "  -o, --out DIR      where --diff writes flame-diff-I-J-WORKLOAD.svg\n"
  "                     (default: the current directory; made if missing)\n"
  "  -h, --help         this text\n"
  "\n"
  "Exit status: 0 success, 1 runtime failure (an output file that cannot\n"
  "be written), 2 bad usage or bad input (a document that is missing,\n"
  "unreadable or malformed; an EXPR that does not parse or names what the\n"
  "run does not have; with --diff, a run without flame graphs, a\n"
  "configuration it does not have, a folded file missing); with\n"
  "--expect, 0, 1 or 125 as above.\n";

/* Load a run document for `what`, printing why when it is not one. */
static struct ff_runreport *
load_doc(const char *what, const char *path)
{
  struct ff_runreport *rr = ff_runreport_load_file(path);

  if (!rr) {
    enum ff_cfg_kind kind = ff_cfg_kind_of_file(path);
    char msg[2 * PATH_MAX + 256];

    if (kind != FF_CFG_UNKNOWN && kind != FF_CFG_RUNDOC)
      fprintf(
        stderr, "fusefarm report: %s%s\n", what,
        ff_cfg_kind_mismatch(kind, FF_CFG_RUNDOC, path, msg, sizeof msg));
    else
      fprintf(stderr, "fusefarm report: %s%s\n", what, ff_errmsg());
  }
  return rr;
}

/* Judge ex[] over rr and replace rr by the model of its document with
 * the new "expect" array.  The exit status of the expressions; -1 (after
 * printing why) when one does not fit the run. */
static int
judge(const char *path, struct ff_runreport **rr,
      const struct ff_runreport *base, struct ff_expect **ex, size_t n)
{
  json_error_t jerr;
  json_t *doc = json_load_file(path, 0, &jerr);
  struct ff_runreport *again = NULL;
  char *text = NULL;
  int rc;

  if (!doc) {
    fprintf(stderr, "fusefarm report: %s: %s\n", path, jerr.text);
    return -1;
  }
  rc = ff_expect_judge_all(ex, n, *rr, base, doc);
  if (rc >= 0) {
    text = json_dumps(doc, JSON_COMPACT);
    again = text ? ff_runreport_load_text(text, strlen(text), path) : NULL;
    if (!again)
      rc = -1;
  }
  if (rc < 0)
    fprintf(stderr, "fusefarm report: %s\n", ff_errmsg());
  else {
    ff_runreport_free(*rr);
    *rr = again;
  }
  free(text);
  json_decref(doc);
  return rc;
}

/* --diff-configs I,J: 0, or 2 after saying why. */
static int
diff_configs(const char *s, unsigned long long *i, unsigned long long *j)
{
  const char *comma = strchr(s, ',');
  char first[32];

  if (!comma || (size_t)(comma - s) >= sizeof first)
    return ff_cli_usage("report",
                        "--diff-configs %s: expected I,J (two "
                        "configuration numbers, as the table numbers them)",
                        s);
  snprintf(first, sizeof first, "%.*s", (int)(comma - s), s);
  if (ff_cli_number("report", "--diff-configs", first, 1, UINT_MAX, i) ||
      ff_cli_number("report", "--diff-configs", comma + 1, 1, UINT_MAX, j))
    return 2;
  return 0;
}

/* The flame graphs of path (A) against diff's (B), or of configurations
 * ci and cj: the exit status. */
static int
flame_diff(const char *path, const char *diff, unsigned ci, unsigned cj,
           const char *outdir, size_t top)
{
  struct ff_runreport *a = NULL, *b = NULL;
  int rc = 2;

  /* Run documents, whole, before their flame graphs are looked at. */
  if (!(a = load_doc("", path)) || (diff && !(b = load_doc("--diff: ", diff))))
    goto out;
  switch (ff_flame_diff_runs(
    &(struct ff_flame_diff){path, diff ? diff : path, ci, cj, outdir, top},
    stdout, stderr)) {
  case FF_FLAME_DIFF_OK:
    rc = 0;
    break;
  case FF_FLAME_DIFF_WRITE:
    fprintf(stderr, "fusefarm report: %s\n", ff_errmsg());
    rc = 1;
    break;
  default:
    fprintf(stderr, "fusefarm report: %s\n", ff_errmsg());
    rc = 2;
  }
out:
  ff_runreport_free(a);
  ff_runreport_free(b);
  return rc;
}

int
ff_cmd_report(int argc, char **argv)
{
  static const struct option opts[] = {
    {"csv", required_argument, NULL, 'c'},
    {"svg", required_argument, NULL, 's'},
    {"top", required_argument, NULL, 't'},
    {"junit", required_argument, NULL, 'j'},
    {"expect", required_argument, NULL, 'e'},
    {"baseline", required_argument, NULL, 'b'},
    {"diff", required_argument, NULL, 'd'},
    {"diff-configs", required_argument, NULL, 'D'},
    {"out", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *csv = NULL, *svg = NULL, *junit = NULL, *path;
  const char *baseline = NULL, *diff = NULL, *configs = NULL, *outdir = NULL;
  unsigned long long top = FF_RUNREPORT_TOP, ci = 0, cj = 0;
  int c, rc = 0, verdict = 0, top_set = 0;
  struct ff_runreport *rr = NULL, *base = NULL;
  struct ff_expect **ex = NULL;
  size_t nex = 0;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":c:s:j:t:e:b:d:D:o:h", opts, NULL)) !=
         -1) {
    switch (c) {
    case 'c':
      csv = optarg;
      break;
    case 's':
      svg = optarg;
      break;
    case 'j':
      junit = optarg;
      break;
    case 't':
      if (ff_cli_number("report", "--top", optarg, 0, INT_MAX, &top)) {
        rc = 2;
        goto out;
      }
      top_set = 1;
      break;
    case 'e': {
      struct ff_expect **more = realloc(ex, (nex + 1) * sizeof *ex);

      if (!more) {
        fprintf(stderr, "fusefarm report: out of memory\n");
        rc = 1;
        goto out;
      }
      ex = more;
      ex[nex] = ff_expect_parse(optarg);
      if (!ex[nex]) {
        ff_expect_print_error(stderr, "report", optarg);
        rc = 2;
        goto out;
      }
      nex++;
      break;
    }
    case 'b':
      baseline = optarg;
      break;
    case 'd':
      diff = optarg;
      break;
    case 'D':
      configs = optarg;
      if ((rc = diff_configs(optarg, &ci, &cj)) != 0)
        goto out;
      break;
    case 'o':
      outdir = optarg;
      break;
    case 'h':
      fputs(report_usage, stdout);
      goto out;
    default:
      rc = ff_cli_bad_option("report", c, argv, opts);
      goto out;
    }
  }
  rc = 2;
  if (optind == argc) {
    ff_cli_usage("report", "missing FILE.json");
    goto out;
  }
  if (optind + 1 != argc) {
    ff_cli_usage("report", "too many arguments (from '%s')", argv[optind + 1]);
    goto out;
  }
  if (baseline && !nex) {
    ff_cli_usage("report", "--baseline is for --expect: give an EXPR");
    goto out;
  }
  for (size_t i = 0; i < nex; i++)
    if (!baseline && ff_expect_uses_baseline(ex[i])) {
      ff_cli_usage("report",
                   "--expect '%s' names the baseline: give "
                   "--baseline RUN.json",
                   ff_expect_text(ex[i]));
      goto out;
    }
  path = argv[optind];
  if (diff || configs) {
    if (csv || svg || junit || nex || baseline) {
      ff_cli_usage("report",
                   "--diff and --diff-configs print the flame graphs' "
                   "difference only: not with --%s",
                   csv     ? "csv"
                   : svg   ? "svg"
                   : junit ? "junit"
                   : nex   ? "expect"
                           : "baseline");
      goto out;
    }
    if (top_set && !top) {
      ff_cli_usage("report", "--top 0: with --diff, the frames per table "
                             "are 1 or more");
      goto out;
    }
    rc = flame_diff(path, diff, (unsigned)ci, (unsigned)cj, outdir,
                    top_set ? (size_t)top : 0);
    goto out;
  }
  if (outdir) {
    ff_cli_usage("report", "--out is for --diff and --diff-configs");
    goto out;
  }

  /* Check the whole document before printing or writing anything: one
   * that is missing, unreadable or malformed is bad input; so is an
   * expression that does not fit it. */
  rr = load_doc("", path);
  if (!rr)
    goto out;
  if (baseline && !(base = load_doc("--baseline: ", baseline)))
    goto out;
  if (nex && (verdict = judge(path, &rr, base, ex, nex)) < 0)
    goto out;
  rc = 0;
  if (ff_rundir_render(
        rr, &(struct ff_rundir_outputs){NULL, csv, svg, (int)top}) < 0 ||
      (junit && ff_junit_write(rr, junit) < 0)) {
    fprintf(stderr, "fusefarm report: %s\n", ff_errmsg());
    rc = 1;
  } else {
    rc = verdict;
  }
out:
  for (size_t i = 0; i < nex; i++)
    ff_expect_free(ex[i]);
  free(ex);
  ff_runreport_free(rr);
  ff_runreport_free(base);
  return rc;
}
