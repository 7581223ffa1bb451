/* fusefarm: the run report as CSV: one record per run, one per unit
 * (see ff-runreport.h, docs/report.md).  No threads. */
#include "ff-runreport.h"
#include "ff-error.h"
#include "ff-runreport-int.h"

#include <string.h>

/* One field, quoted when it holds a comma, a quote or a line break
 * (RFC 4180, but records end in LF alone: grep and wc count them). */
static void
csv_field(FILE *out, const char *s, bool last)
{
  if (strpbrk(s, ",\"\r\n")) {
    fputc('"', out);
    for (; *s; s++) {
      if (*s == '"')
        fputc('"', out);
      fputc(*s, out);
    }
    fputc('"', out);
  } else {
    fputs(s, out);
  }
  fputc(last ? '\n' : ',', out);
}

static void
csv_num(FILE *out, double v, bool last)
{
  char b[64];

  snprintf(b, sizeof b, "%.6f", v);
  csv_field(out, b, last);
}

static void
csv_int(FILE *out, long long v, bool last)
{
  char b[32];

  snprintf(b, sizeof b, "%lld", v);
  csv_field(out, b, last);
}

static int
csv_done(FILE *out)
{
  if (fflush(out) == EOF || ferror(out))
    return ff_error("run report: write csv: %m");
  return 0;
}

int
ff_runreport_csv_runs(const struct ff_runreport *rr, FILE *out)
{
  static const char *const head[] = {"scenario", "config_id", "config_label"};
  static const char *const tail[] = {"workload", "type", "run",
                                     "wall",     "exit", "errors"};
  char v[256];

  for (size_t i = 0; i < 3; i++)
    csv_field(out, head[i], false);
  for (size_t k = 0; k < rr->nkeys; k++)
    csv_field(out, rr->keys[k], false);
  for (size_t i = 0; i < 6; i++)
    csv_field(out, tail[i], i == 5);
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const struct ff_rr_config *c = &rr->configs[i];

    for (size_t j = 0; j < c->nworkloads; j++) {
      const struct ff_rr_workload *w = &c->workloads[j];

      for (size_t r = 0; r < w->nruns; r++) {
        csv_field(out, rr->scenario, false);
        csv_int(out, c->id, false);
        csv_field(out, c->label, false);
        for (size_t k = 0; k < rr->nkeys; k++) {
          ff_rr_setting_text(c, rr->keys[k], v, sizeof v);
          csv_field(out, v, false);
        }
        csv_field(out, w->name, false);
        csv_field(out, w->type, false);
        csv_int(out, (long long)r + 1, false);
        csv_num(out, w->runs[r].wall, false);
        csv_int(out, w->runs[r].exit, false);
        csv_int(out, w->runs[r].errors, true);
      }
    }
  }
  return csv_done(out);
}

int
ff_runreport_csv_units(const struct ff_runreport *rr, FILE *out)
{
  static const char *const head[] = {
    "config_id", "workload", "unit",     "device", "vg",
    "start",     "end",      "duration", "exit",   "vg_complete",
  };

  for (size_t i = 0; i < 10; i++)
    csv_field(out, head[i], i == 9);
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const struct ff_rr_config *c = &rr->configs[i];

    for (size_t j = 0; j < c->nworkloads; j++) {
      const struct ff_rr_workload *w = &c->workloads[j];

      for (size_t k = 0; k < w->nunits; k++) {
        const struct ff_rr_unit *u = &w->units[k];

        csv_int(out, c->id, false);
        csv_field(out, w->name, false);
        csv_field(out, u->kind == FF_RR_PVSCAN ? "pvscan" : "vgchange", false);
        csv_field(out, u->device ? u->device : "", false);
        csv_field(out, u->vg ? u->vg : "", false);
        csv_num(out, u->start, false);
        csv_num(out, u->end, false);
        csv_num(out, u->end - u->start, false);
        csv_int(out, u->exit, false);
        csv_field(out,
                  u->vg_complete < 0 ? ""
                  : u->vg_complete   ? "true"
                                     : "false",
                  true);
      }
    }
  }
  return csv_done(out);
}
