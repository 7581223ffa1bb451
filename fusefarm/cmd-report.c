/* fusefarm: `fusefarm report`: render a run document again.
 *
 * Reads what `fusefarm run --json FILE` wrote (docs/run-json.md) and
 * prints the same table the run printed, optionally writing the CSV and
 * SVG files (ff-report.h; docs/report.md shows them).  Runs nothing.
 * The document is checked before anything is printed or written.  No
 * threads.
 */
#include "ff-error.h"
#include "ff-report.h"
#include "ff-runreport.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char report_usage[] =
  "usage: fusefarm report FILE.json [--csv OUT.csv] [--svg OUT.svg] "
  "[--top N]\n"
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
  "  -t, --top N        list the N slowest units of each event activation\n"
  "                     and label them in its timeline (default 10; 0: no\n"
  "                     list)\n"
  "  -h, --help         this text\n"
  "\n"
  "Exit status: 0 success, 1 runtime failure (unreadable or malformed\n"
  "document, write error), 2 bad usage.\n";

/* N for --top: a whole number from 0 to INT_MAX. */
static int
parse_top(const char *s, int *out)
{
  char *end;
  long v;

  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < 0 || v > INT_MAX)
    return -1;
  *out = (int)v;
  return 0;
}

int
ff_cmd_report(int argc, char **argv)
{
  static const struct option opts[] = {
    {"csv", required_argument, NULL, 'c'},
    {"svg", required_argument, NULL, 's'},
    {"top", required_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *csv = NULL, *svg = NULL, *path;
  int top = FF_RUNREPORT_TOP, c, rc = 0;
  struct ff_runreport *rr;

  optind = 1;
  while ((c = getopt_long(argc, argv, "c:s:t:h", opts, NULL)) != -1) {
    switch (c) {
    case 'c':
      csv = optarg;
      break;
    case 's':
      svg = optarg;
      break;
    case 't':
      if (parse_top(optarg, &top) < 0) {
        fprintf(stderr,
                "fusefarm report: --top %s: expected a whole number >= 0\n",
                optarg);
        return 2;
      }
      break;
    case 'h':
      fputs(report_usage, stdout);
      return 0;
    default:
      fputs(report_usage, stderr);
      return 2;
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, "fusefarm report: %s\n%s",
            optind == argc ? "missing FILE.json" : "too many arguments",
            report_usage);
    return 2;
  }
  path = argv[optind];

  /* Check the whole document before printing or writing anything. */
  rr = ff_runreport_load_file(path);
  if (!rr) {
    fprintf(stderr, "fusefarm report: %s\n", ff_errmsg());
    return 1;
  }
  if (ff_report_print(rr, stdout, top) < 0 ||
      (csv && ff_report_csv(rr, csv) < 0) ||
      (svg && ff_report_svg_top(rr, svg, top) < 0)) {
    fprintf(stderr, "fusefarm report: %s\n", ff_errmsg());
    rc = 1;
  }
  ff_runreport_free(rr);
  return rc;
}
