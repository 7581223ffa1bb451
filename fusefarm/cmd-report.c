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
  "Exit status: 0 success, 1 runtime failure (an output file that cannot\n"
  "be written), 2 bad usage or bad input (a document that is missing,\n"
  "unreadable or malformed).\n";

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
  unsigned long long top = FF_RUNREPORT_TOP;
  int c, rc = 0;
  struct ff_runreport *rr;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":c:s:t:h", opts, NULL)) != -1) {
    switch (c) {
    case 'c':
      csv = optarg;
      break;
    case 's':
      svg = optarg;
      break;
    case 't':
      if (ff_cli_number("report", "--top", optarg, 0, INT_MAX, &top))
        return 2;
      break;
    case 'h':
      fputs(report_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("report", c, argv, opts);
    }
  }
  if (optind == argc)
    return ff_cli_usage("report", "missing FILE.json");
  if (optind + 1 != argc)
    return ff_cli_usage("report", "too many arguments (from '%s')",
                        argv[optind + 1]);
  path = argv[optind];

  /* Check the whole document before printing or writing anything: one
   * that is missing, unreadable or malformed is bad input. */
  rr = ff_runreport_load_file(path);
  if (!rr) {
    enum ff_cfg_kind kind = ff_cfg_kind_of_file(path);
    char msg[2 * PATH_MAX + 256];

    if (kind != FF_CFG_UNKNOWN && kind != FF_CFG_RUNDOC)
      fprintf(
        stderr, "fusefarm report: %s\n",
        ff_cfg_kind_mismatch(kind, FF_CFG_RUNDOC, path, msg, sizeof msg));
    else
      fprintf(stderr, "fusefarm report: %s\n", ff_errmsg());
    return 2;
  }
  if (ff_report_print(rr, stdout, (int)top) < 0 ||
      (csv && ff_report_csv(rr, csv) < 0) ||
      (svg && ff_report_svg_top(rr, svg, (int)top) < 0)) {
    fprintf(stderr, "fusefarm report: %s\n", ff_errmsg());
    rc = 1;
  }
  ff_runreport_free(rr);
  return rc;
}
