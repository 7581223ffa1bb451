/* fusefarm: the run report as text: a header, one table row per config,
 * the definitions, the failures, the verdict (ff-runreport-verdict.c) and
 * the slowest units (see ff-runreport.h, docs/report.md).
 * No threads. */
#include "ff-runreport.h"
#include "ff-error.h"
#include "ff-runreport-int.h"

#include <stdlib.h>
#include <string.h>

/* Columns wide enough for what people see: UTF-8 sequences count once
 * (the en dash of the ranges). */
static size_t
text_width(const char *s)
{
  size_t n = 0;

  for (; *s; s++)
    n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

/* One output line, built in memory so that trailing blanks can go. */
struct line {
  char *buf;
  size_t len, cap;
  bool failed;
};

static void
line_add(struct line *l, const char *s, size_t n)
{
  if (l->failed)
    return;
  if (l->len + n + 2 > l->cap) {
    size_t cap = (l->len + n + 2) * 2;
    char *b = realloc(l->buf, cap);

    if (!b) {
      l->failed = true;
      return;
    }
    l->buf = b;
    l->cap = cap;
  }
  memcpy(l->buf + l->len, s, n);
  l->len += n;
}

static void
line_pad(struct line *l, size_t n)
{
  static const char spaces[] = "                                ";

  while (n) {
    size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;

    line_add(l, spaces, k);
    n -= k;
  }
}

/* s in a field of width w, left- or right-aligned. */
static void
line_cell(struct line *l, const char *s, size_t w, bool right)
{
  size_t tw = text_width(s);

  if (right && tw < w)
    line_pad(l, w - tw);
  line_add(l, s, strlen(s));
  if (!right && tw < w)
    line_pad(l, w - tw);
}

static void
line_end(struct line *l, FILE *out)
{
  while (l->len && l->buf[l->len - 1] == ' ')
    l->len--;
  if (!l->failed) {
    l->buf[l->len++] = '\n';
    fwrite(l->buf, 1, l->len, out);
  }
  l->len = 0;
}

/* The table: row 0 holds the column headers; group[c] is the name shown
 * above a run of columns with the same group (NULL: none). */
struct table {
  size_t ncols, nrows;
  char **cell; /* [r * ncols + c]; NULL prints as "" */
  const char **group;
  bool *right;
};

static char **
tcell(struct table *t, size_t r, size_t c)
{
  return &t->cell[r * t->ncols + c];
}

static void
table_free(struct table *t)
{
  if (t->cell)
    for (size_t i = 0; i < t->ncols * t->nrows; i++)
      free(t->cell[i]);
  free(t->cell);
  free(t->group);
  free(t->right);
}

static int
table_print(const struct table *t, FILE *out)
{
  struct line l = {0};
  size_t *w = calloc(t->ncols, sizeof *w);
  bool any_group = false;

  if (!w)
    return ff_rr_oom();
  for (size_t c = 0; c < t->ncols; c++)
    for (size_t r = 0; r < t->nrows; r++) {
      const char *s = t->cell[r * t->ncols + c];
      size_t tw = s ? text_width(s) : 0;

      if (tw > w[c])
        w[c] = tw;
    }
  /* A group name wider than its columns widens the last of them. */
  for (size_t a = 0, b; a < t->ncols; a = b) {
    size_t span = 0;

    for (b = a; b < t->ncols && t->group[b] == t->group[a]; b++)
      span += w[b] + (b > a ? 2 : 0);
    if (t->group[a] && text_width(t->group[a]) > span)
      w[b - 1] += text_width(t->group[a]) - span;
  }
  for (size_t c = 0; c < t->ncols; c++)
    any_group |= t->group[c] != NULL;
  for (size_t a = 0, b; any_group && a < t->ncols; a = b) {
    size_t span = 0;

    for (b = a; b < t->ncols && t->group[b] == t->group[a]; b++)
      span += w[b] + (b > a ? 2 : 0);
    /* centred over its columns */
    if (t->group[a])
      line_pad(&l, (span - text_width(t->group[a])) / 2);
    line_cell(&l, t->group[a] ? t->group[a] : "",
              t->group[a] ? span - (span - text_width(t->group[a])) / 2 : span,
              false);
    if (b < t->ncols)
      line_pad(&l, 2);
  }
  if (any_group)
    line_end(&l, out);
  for (size_t r = 0; r < t->nrows; r++) {
    for (size_t c = 0; c < t->ncols; c++) {
      const char *s = t->cell[r * t->ncols + c];

      if (c)
        line_pad(&l, 2);
      line_cell(&l, s ? s : "", w[c], t->right[c]);
    }
    line_end(&l, out);
  }
  free(w);
  free(l.buf);
  return l.failed ? ff_rr_oom() : 0;
}

/* The slowest unit of kind k, or NULL. */
static const struct ff_rr_unit *
slowest(const struct ff_rr_workload *w, enum ff_rr_unit_kind k)
{
  const struct ff_rr_unit *best = NULL;

  for (size_t i = 0; i < w->nunits; i++) {
    const struct ff_rr_unit *u = &w->units[i];

    if (u->kind == k && (!best || u->end - u->start > best->end - best->start))
      best = u;
  }
  return best;
}

/* A workload column group: a workload name, and whether any workload of
 * that name has repeat > 1, is an event activation, has failures. */
struct wcol {
  const char *name;
  bool range, event, failed;
};

static struct wcol *
workload_columns(const struct ff_runreport *rr, size_t *n)
{
  const char **names = ff_runreport_workload_names(rr, n);
  struct wcol *wc;

  if (!names)
    return NULL;
  wc = calloc(*n ? *n : 1, sizeof *wc);
  if (!wc) {
    free(names);
    ff_rr_oom();
    return NULL;
  }
  for (size_t k = 0; k < *n; k++) {
    wc[k].name = names[k];
    for (size_t i = 0; i < rr->nconfigs; i++) {
      const struct ff_rr_workload *w =
        ff_runreport_find_workload(&rr->configs[i], names[k]);

      wc[k].range |= w && w->repeat > 1;
      wc[k].event |= w && w->event;
      wc[k].failed |= w && (w->failed_runs || w->failed_units);
    }
  }
  free(names);
  return wc;
}

static bool
same_farm(const struct ff_rr_config *a, const struct ff_rr_config *b)
{
  return a->has_farm == b->has_farm &&
         (!a->has_farm ||
          (a->devices == b->devices && a->vgs == b->vgs && a->lvs == b->lvs));
}

/* The last part of a settings key ("global/event_activation" gives
 * "event_activation"), unless another shown key ends the same. */
const char *
ff_rr_short_key(const struct ff_runreport *rr, size_t k)
{
  const char *s = strrchr(rr->keys[k], '/');

  s = s ? s + 1 : rr->keys[k];
  for (size_t o = 0; o < rr->nkeys; o++) {
    const char *t = strrchr(rr->keys[o], '/');

    t = t ? t + 1 : rr->keys[o];
    if (o != k && rr->varying[o] && !strcmp(s, t))
      return rr->keys[k];
  }
  return s;
}

static char *
xstrdup(const char *s, bool *failed)
{
  char *d = strdup(s);

  if (!d)
    *failed = true;
  return d;
}

static char *
unit_cell(const struct ff_rr_unit *u, bool *failed)
{
  char t[64], *s;

  if (!u)
    return xstrdup("-", failed);
  ff_runreport_fmt_secs(u->end - u->start, true, t, sizeof t);
  if (asprintf(&s, "%s: %s", ff_runreport_unit_name(u), t) < 0) {
    *failed = true;
    return NULL;
  }
  return s;
}

/* The median, its range when repeat > 1, and " !" when a run or unit
 * failed; in a column where some cell has " !", the others end in two
 * blanks (mark_room) so that the numbers stay aligned. */
static char *
median_cell(const struct ff_rr_workload *w, bool mark_room, bool *failed)
{
  char m[64], lo[64], hi[64], *s;
  const char *mark;
  int r;

  if (!w)
    return xstrdup(mark_room ? "-  " : "-", failed);
  mark = w->failed_runs || w->failed_units ? " !" : mark_room ? "  " : "";
  ff_runreport_fmt_secs(w->median, true, m, sizeof m);
  if (w->repeat > 1)
    r = asprintf(&s, "%s (%s\u2013%s)%s", m,
                 ff_runreport_fmt_secs(w->min, false, lo, sizeof lo),
                 ff_runreport_fmt_secs(w->max, false, hi, sizeof hi), mark);
  else
    r = asprintf(&s, "%s%s", m, mark);
  if (r < 0) {
    *failed = true;
    return NULL;
  }
  return s;
}

/* The settings that vary (setcols), or the labels, as columns from *col
 * on: row r + 1 shows config cfg[r] (cfg NULL: config r). */
static void
setting_cols(const struct ff_runreport *rr, struct table *t, size_t *col,
             const size_t *cfg, bool setcols, bool *failed)
{
  if (!setcols) {
    *tcell(t, 0, *col) = xstrdup("label", failed);
    for (size_t r = 0; r + 1 < t->nrows; r++)
      *tcell(t, r + 1, *col) =
        xstrdup(rr->configs[cfg ? cfg[r] : r].label, failed);
    (*col)++;
    return;
  }
  for (size_t k = 0; k < rr->nkeys; k++) {
    bool numeric = true;

    if (!rr->varying[k])
      continue;
    *tcell(t, 0, *col) = xstrdup(ff_rr_short_key(rr, k), failed);
    for (size_t r = 0; r + 1 < t->nrows; r++) {
      const struct ff_rr_config *c = &rr->configs[cfg ? cfg[r] : r];
      const struct ff_rr_setting *v = ff_runreport_setting(c, rr->keys[k]);
      char buf[256];

      numeric &= !v || v->kind != FF_RR_STRING;
      ff_rr_setting_text(c, rr->keys[k], buf, sizeof buf);
      *tcell(t, r + 1, *col) = xstrdup(v ? buf : "-", failed);
    }
    t->right[(*col)++] = numeric;
  }
}

static int
build_table(const struct ff_runreport *rr, struct table *t)
{
  size_t nvary = 0, nwc, col = 0;
  struct wcol *wc;
  bool setcols, farmcol = false, failed = false;

  for (size_t k = 0; k < rr->nkeys; k++)
    nvary += rr->varying[k];
  setcols = nvary >= 1 && nvary <= FF_RUNREPORT_SETTING_COLS;
  for (size_t i = 1; i < rr->nconfigs; i++)
    farmcol |= !same_farm(&rr->configs[0], &rr->configs[i]);
  wc = workload_columns(rr, &nwc);
  if (!wc)
    return -1;

  t->ncols = 1 + (setcols ? nvary : 1) + farmcol;
  for (size_t k = 0; k < nwc; k++)
    t->ncols += wc[k].event ? 3 : 1;
  t->nrows = rr->nconfigs + 1;
  t->cell = calloc(t->ncols * t->nrows, sizeof *t->cell);
  t->group = calloc(t->ncols, sizeof *t->group);
  t->right = calloc(t->ncols, sizeof *t->right);
  if (!t->cell || !t->group || !t->right) {
    free(wc);
    return ff_rr_oom();
  }

  /* config id */
  *tcell(t, 0, col) = xstrdup("config", &failed);
  t->right[col] = true;
  for (size_t i = 0; i < rr->nconfigs; i++)
    if (asprintf(tcell(t, i + 1, col), "%lld", rr->configs[i].id) < 0)
      failed = true;
  col++;

  /* settings that vary, or the labels */
  setting_cols(rr, t, &col, NULL, setcols, &failed);

  if (farmcol) {
    *tcell(t, 0, col) = xstrdup("devices", &failed);
    t->right[col] = true;
    for (size_t i = 0; i < rr->nconfigs; i++) {
      const struct ff_rr_config *c = &rr->configs[i];

      if (!c->has_farm)
        *tcell(t, i + 1, col) = xstrdup("-", &failed);
      else if (asprintf(tcell(t, i + 1, col), "%lld", c->devices) < 0)
        failed = true;
    }
    col++;
  }

  for (size_t k = 0; k < nwc; k++) {
    t->group[col] = wc[k].name;
    t->right[col] = true;
    *tcell(t, 0, col) =
      xstrdup(wc[k].range ? (wc[k].failed ? "median (min\u2013max)  "
                                          : "median (min\u2013max)")
                          : (wc[k].failed ? "median  " : "median"),
              &failed);
    if (wc[k].event) {
      t->group[col + 1] = t->group[col + 2] = wc[k].name;
      t->right[col + 1] = t->right[col + 2] = true;
      *tcell(t, 0, col + 1) = xstrdup("slowest pvscan", &failed);
      *tcell(t, 0, col + 2) = xstrdup("slowest vgchange", &failed);
    }
    for (size_t i = 0; i < rr->nconfigs; i++) {
      const struct ff_rr_workload *w =
        ff_runreport_find_workload(&rr->configs[i], wc[k].name);

      *tcell(t, i + 1, col) = median_cell(w, wc[k].failed, &failed);
      if (!wc[k].event)
        continue;
      *tcell(t, i + 1, col + 1) =
        unit_cell(w && w->event ? slowest(w, FF_RR_PVSCAN) : NULL, &failed);
      *tcell(t, i + 1, col + 2) =
        unit_cell(w && w->event ? slowest(w, FF_RR_VGCHANGE) : NULL, &failed);
    }
    col += wc[k].event ? 3 : 1;
  }
  free(wc);
  return failed ? ff_rr_oom() : 0;
}

/* How activation ran (fusefarm run's "dm"): one line for the run when
 * every config ran the same way, else one per config. */
static void
print_dm(const struct ff_runreport *rr, FILE *out)
{
  bool same = true;

  if (!rr->nconfigs || !rr->configs[0].dm_mode)
    return;
  for (size_t i = 1; i < rr->nconfigs; i++)
    same &= rr->configs[i].dm_mode &&
            !strcmp(rr->configs[i].dm_mode, rr->configs[0].dm_mode);
  for (size_t i = 0; i < (same ? 1 : rr->nconfigs); i++) {
    const struct ff_rr_config *c = &rr->configs[i];

    if (!same)
      fprintf(out, "  config %lld: ", c->id);
    if (c->dm_mode && !strcmp(c->dm_mode, "real"))
      fprintf(out,
              "activation: real device-mapper devices (dm = real; up to "
              "%lld at once%s), removed before each repetition\n",
              c->dm_max_active, same && rr->nconfigs > 1 ? " per config" : "");
    else
      fprintf(out, "activation: --driverloaded n, no device-mapper devices "
                   "(dm = none)\n");
  }
}

static void
print_header(const struct ff_runreport *rr, FILE *out)
{
  const struct ff_rr_config *c0 = &rr->configs[0];
  bool farm_same = c0->has_farm, first = true;
  char v[256];

  fprintf(out, "scenario: %s", rr->scenario);
  if (rr->scenario_file)
    fprintf(out, " (%s)", rr->scenario_file);
  fputc('\n', out);
  if (rr->description && *rr->description)
    fprintf(out, "  %s\n", rr->description);
  fprintf(out, "host: kernel %s", rr->kernel);
  if (rr->cpus > 0)
    fprintf(out, ", %lld cpu%s", rr->cpus, rr->cpus == 1 ? "" : "s");
  fprintf(out, ", lvm %s", rr->lvm_version);
  if (rr->lvm)
    fprintf(out, " (%s)", rr->lvm);
  if (rr->device_mapper >= 0)
    fprintf(out, ", %s",
            rr->device_mapper ? "device-mapper" : "no device-mapper");
  if (rr->fusefarm_version)
    fprintf(out, ", fusefarm %s", rr->fusefarm_version);
  fputc('\n', out);
  fprintf(out, "date: %s", rr->started);
  if (rr->finished)
    fprintf(out, " to %s", rr->finished);
  fputc('\n', out);
  if (rr->error)
    fprintf(out,
            "stopped early: %s (what ran before the stop is below; the "
            "rest did not run)\n",
            rr->error);
  for (size_t i = 1; i < rr->nconfigs; i++)
    farm_same &= same_farm(c0, &rr->configs[i]);
  if (farm_same)
    fprintf(out, "farm: %lld device%s, %lld VG%s, %lld LV%s\n", c0->devices,
            c0->devices == 1 ? "" : "s", c0->vgs, c0->vgs == 1 ? "" : "s",
            c0->lvs, c0->lvs == 1 ? "" : "s");
  print_dm(rr, out);
  for (size_t k = 0; k < rr->nkeys; k++) {
    if (rr->varying[k])
      continue;
    ff_rr_setting_text(c0, rr->keys[k], v, sizeof v);
    fprintf(out, "%s%s=%s", first ? "every config: " : ", ", rr->keys[k], v);
    first = false;
  }
  if (!first)
    fputc('\n', out);
}

/* The lines under the table: what its terms mean, then one line per
 * workload with failures. */
static void
print_footer(const struct ff_runreport *rr, FILE *out)
{
  fputc('\n', out);
  ff_rr_print_definitions(rr, out);
  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const struct ff_rr_workload *w = &rr->configs[i].workloads[j];

      if (w->failed_runs)
        fprintf(out,
                "! config %lld, %s: %zu of %zu run%s failed (worst exit %lld, "
                "%lld failed command%s)\n",
                rr->configs[i].id, w->name, w->failed_runs, w->nruns,
                w->nruns == 1 ? "" : "s", w->worst_exit, w->errors,
                w->errors == 1 ? "" : "s");
      if (w->failed_runs && w->message)
        fprintf(out, "!   first error: %s\n", w->message);
      if (w->failed_units)
        fprintf(out,
                "! config %lld, %s: %zu of %zu units exited non-zero in the "
                "last repetition\n",
                rr->configs[i].id, w->name, w->failed_units, w->nunits);
    }
}

static int
print_blame(const struct ff_runreport *rr, FILE *out, int top)
{
  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const struct ff_rr_config *c = &rr->configs[i];
      const struct ff_rr_workload *w = &c->workloads[j];
      size_t n = (size_t)top < w->nunits ? (size_t)top : w->nunits, dw = 0;
      char d[64];
      size_t *idx;

      if (!w->event || !top)
        continue;
      fprintf(out,
              "\nslowest units: config %lld (%s), %s, last repetition: %zu "
              "of %zu\n",
              c->id, c->label, w->name, n, w->nunits);
      if (!n)
        continue; /* no units at all */
      idx = ff_runreport_order(w, FF_RR_BY_DURATION);
      if (!idx)
        return -1;
      for (size_t k = 0; k < n; k++) {
        const struct ff_rr_unit *u = &w->units[idx[k]];
        size_t tw = text_width(
          ff_runreport_fmt_secs(u->end - u->start, true, d, sizeof d));

        if (tw > dw)
          dw = tw;
      }
      for (size_t k = 0; k < n; k++) {
        const struct ff_rr_unit *u = &w->units[idx[k]];

        ff_runreport_fmt_secs(u->end - u->start, true, d, sizeof d);
        fprintf(out, "  %*s  %s %s", (int)dw, d,
                u->kind == FF_RR_PVSCAN ? "pvscan" : "vgchange",
                ff_runreport_unit_name(u));
        if (u->kind == FF_RR_PVSCAN && u->vg)
          fprintf(out, " (%s)", u->vg);
        if (u->exit)
          fprintf(out, " exit %lld", u->exit);
        fputc('\n', out);
      }
      free(idx);
    }
  return 0;
}

/* ---- the io table ------------------------------------------------------
 *
 * One row per (config, io workload, direction with I/O): fio's bandwidth,
 * IOPS and completion latency p50/p99, each the median over the runs
 * that have an "io" object, with min–max when there are several. */

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y;
}

/* What one quantity of a direction was over the runs: median, min, max. */
struct iostat {
  double med, min, max;
  size_t n;
};

/* fio's numbers of a direction, then the farm's counters of the run */
enum ioq { IO_MBS, IO_IOPS, IO_P50, IO_P99, IO_FWRITES, IO_FFLUSHES };

static double
ioq_value(const struct ff_rr_iodir *d, enum ioq q)
{
  switch (q) {
  case IO_MBS:
    return d->bw / 1e6;
  case IO_IOPS:
    return d->iops;
  case IO_P50:
    return (double)d->clat_p50_ns;
  default:
    return (double)d->clat_p99_ns;
  }
}

/* Quantity q of run r, direction d (negative: the run has none). */
static double
ioq_of_run(const struct ff_rr_run *r, const struct ff_rr_iodir *d, enum ioq q)
{
  if (q == IO_FWRITES)
    return (double)r->io_farm_writes;
  if (q == IO_FFLUSHES)
    return (double)r->io_farm_flushes;
  return ioq_value(d, q);
}

static bool
iostat_of(const struct ff_rr_workload *w, bool write, enum ioq q,
          struct iostat *st)
{
  double *v = calloc(w->nruns ? w->nruns : 1, sizeof *v);

  st->n = 0;
  if (!v)
    return false;
  for (size_t i = 0; i < w->nruns; i++) {
    const struct ff_rr_iodir *d =
      write ? &w->runs[i].io_write : &w->runs[i].io_read;

    if (!w->runs[i].has_io || d->ios <= 0 ||
        (q != IO_MBS && q != IO_IOPS && ioq_of_run(&w->runs[i], d, q) < 0))
      continue;
    v[st->n++] = ioq_of_run(&w->runs[i], d, q);
  }
  if (st->n) {
    qsort(v, st->n, sizeof *v, cmp_double);
    st->min = v[0];
    st->max = v[st->n - 1];
    st->med = st->n % 2 ? v[st->n / 2] : (v[st->n / 2 - 1] + v[st->n / 2]) / 2;
  }
  free(v);
  return true;
}

/* A number for people: 3 significant digits up to 999, then whole. */
static void
fmt_num(double v, char *buf, size_t len)
{
  snprintf(buf, len, v >= 99.95 ? "%.0f" : v >= 9.995 ? "%.1f" : "%.2f", v);
}

/* The cell of one quantity: "12.3 (11.0–13.1)", latencies in the unit
 * their median reads best in ("45.1 µs (40.0–50.2)"), "-" when no run
 * has it. */
static char *
io_cell(const struct iostat *st, enum ioq q, bool *failed)
{
  static const struct {
    double div;
    const char *unit;
  } units[] = {{1, " ns"}, {1e3, " \u00b5s"}, {1e6, " ms"}, {1e9, " s"}};
  double div = 1;
  const char *unit = "";
  char m[32], lo[32], hi[32], *s;
  int r;

  if (!st->n)
    return xstrdup("-", failed);
  if (q == IO_P50 || q == IO_P99)
    for (size_t u = 0; u < sizeof units / sizeof *units; u++)
      if (u == 0 || st->med >= units[u].div * 0.9995) {
        div = units[u].div;
        unit = units[u].unit;
      }
  if (q == IO_FWRITES || q == IO_FFLUSHES) { /* counts */
    snprintf(m, sizeof m, "%.0f", st->med);
    snprintf(lo, sizeof lo, "%.0f", st->min);
    snprintf(hi, sizeof hi, "%.0f", st->max);
  } else {
    fmt_num(st->med / div, m, sizeof m);
    fmt_num(st->min / div, lo, sizeof lo);
    fmt_num(st->max / div, hi, sizeof hi);
  }
  if (st->n > 1) {
    r = asprintf(&s, "%s%s (%s\u2013%s)", m, unit, lo, hi);
  } else {
    r = asprintf(&s, "%s%s", m, unit);
  }
  if (r < 0) {
    *failed = true;
    return NULL;
  }
  return s;
}

/* Whether any run of w did I/O in that direction. */
static bool
io_dir_used(const struct ff_rr_workload *w, bool write)
{
  for (size_t i = 0; i < w->nruns; i++)
    if (w->runs[i].has_io &&
        (write ? w->runs[i].io_write.ios : w->runs[i].io_read.ios) > 0)
      return true;
  return false;
}

static int
print_io_table(const struct ff_runreport *rr, FILE *out)
{
  static const char *const heads[] = {"MB/s",     "IOPS",        "clat p50",
                                      "clat p99", "farm writes", "flushes"};
  struct table t = {0};
  size_t nrows = 0, nvary = 0, col = 0, r = 0, *cfg;
  const struct ff_rr_workload **wl;
  bool *wr, setcols, failed = false;
  int rc, nq = 4;

  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const struct ff_rr_workload *w = &rr->configs[i].workloads[j];

      if (w->io)
        nrows += io_dir_used(w, false) + io_dir_used(w, true);
      /* the farm's counters: two more columns when a run has them */
      for (size_t k = 0; w->io && k < w->nruns; k++)
        if (w->runs[k].io_farm_writes >= 0)
          nq = 6;
    }
  if (!nrows)
    return 0;
  for (size_t k = 0; k < rr->nkeys; k++)
    nvary += rr->varying[k];
  setcols = nvary <= FF_RUNREPORT_SETTING_COLS;
  cfg = calloc(nrows, sizeof *cfg);
  wl = calloc(nrows, sizeof *wl);
  wr = calloc(nrows, sizeof *wr);
  t.ncols = 1 + (setcols ? nvary : 1) + 4 + (size_t)nq;
  t.nrows = nrows + 1;
  t.cell = calloc(t.ncols * t.nrows, sizeof *t.cell);
  t.group = calloc(t.ncols, sizeof *t.group);
  t.right = calloc(t.ncols, sizeof *t.right);
  if (!cfg || !wl || !wr || !t.cell || !t.group || !t.right) {
    rc = ff_rr_oom();
    goto out;
  }
  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const struct ff_rr_workload *w = &rr->configs[i].workloads[j];

      for (int d = 0; w->io && d < 2; d++)
        if (io_dir_used(w, d)) {
          cfg[r] = i;
          wl[r] = w;
          wr[r++] = d;
        }
    }
  *tcell(&t, 0, col) = xstrdup("config", &failed);
  t.right[col] = true;
  for (r = 0; r < nrows; r++)
    if (asprintf(tcell(&t, r + 1, col), "%lld", rr->configs[cfg[r]].id) < 0)
      failed = true;
  col++;
  setting_cols(rr, &t, &col, cfg, setcols, &failed);
  *tcell(&t, 0, col) = xstrdup("workload", &failed);
  *tcell(&t, 0, col + 1) = xstrdup("target", &failed);
  *tcell(&t, 0, col + 2) = xstrdup("runs", &failed);
  *tcell(&t, 0, col + 3) = xstrdup("rw", &failed);
  t.right[col + 2] = true;
  for (r = 0; r < nrows; r++) {
    size_t nio = 0;

    for (size_t i = 0; i < wl[r]->nruns; i++)
      nio += wl[r]->runs[i].has_io;
    *tcell(&t, r + 1, col) = xstrdup(wl[r]->name, &failed);
    *tcell(&t, r + 1, col + 1) =
      xstrdup(wl[r]->target ? wl[r]->target : "-", &failed);
    if (asprintf(tcell(&t, r + 1, col + 2), "%zu", nio) < 0)
      failed = true;
    *tcell(&t, r + 1, col + 3) = xstrdup(wr[r] ? "write" : "read", &failed);
  }
  col += 4;
  for (int q = 0; q < nq; q++, col++) {
    *tcell(&t, 0, col) = xstrdup(heads[q], &failed);
    t.right[col] = true;
    for (r = 0; r < nrows; r++) {
      struct iostat st;

      if (!iostat_of(wl[r], wr[r], (enum ioq)q, &st)) {
        failed = true;
        continue;
      }
      *tcell(&t, r + 1, col) = io_cell(&st, (enum ioq)q, &failed);
    }
  }
  if (failed) {
    rc = ff_rr_oom();
    goto out;
  }
  fprintf(out,
          "\nio (fio): median (min\u2013max) over the runs with fio's "
          "numbers; MB/s = 10^6 bytes/s; clat: completion latency%s\n",
          nq > 4 ? "; farm writes, flushes: what the farm served during "
                   "the run (the target device's; for an LV the whole farm's)"
                 : "");
  rc = table_print(&t, out);
out:
  table_free(&t);
  free(cfg);
  free(wl);
  free(wr);
  return rc;
}

/* ---- what each PV of an LV target took ---------------------------------
 *
 * Under the io table, for every io or fs row on an LV: the farm's writes
 * and flushes of each PV of its VG (the run document's io.devices), the
 * median over the runs, so that where an LV type sends its I/O shows (a
 * mirror's log PV, a stripe's halves). */

/* The median of PV dev's writes (flushes: !writes) over w's runs; -1
 * when no run has it. */
static double
iodev_median(const struct ff_rr_workload *w, const char *dev, bool writes)
{
  double *v = calloc(w->nruns ? w->nruns : 1, sizeof *v), m = -1;
  size_t n = 0;

  if (!v)
    return -2;
  for (size_t i = 0; i < w->nruns; i++)
    for (size_t k = 0; k < w->runs[i].nio_devs; k++)
      if (!strcmp(w->runs[i].io_devs[k].name, dev))
        v[n++] = (double)(writes ? w->runs[i].io_devs[k].writes
                                 : w->runs[i].io_devs[k].flushes);
  if (n) {
    qsort(v, n, sizeof *v, cmp_double);
    m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  free(v);
  return m;
}

/* The run of w whose PV list names the PVs (the first that has one). */
static const struct ff_rr_run *
iodev_run(const struct ff_rr_workload *w)
{
  for (size_t i = 0; w->io && i < w->nruns; i++)
    if (w->runs[i].nio_devs)
      return &w->runs[i];
  return NULL;
}

static int
print_io_devices(const struct ff_runreport *rr, FILE *out)
{
  struct table t = {0};
  size_t nrows = 0, r = 1;
  bool failed = false;
  int rc;

  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const struct ff_rr_run *run = iodev_run(&rr->configs[i].workloads[j]);

      nrows += run ? run->nio_devs : 0;
    }
  if (!nrows)
    return 0;
  t.ncols = 6;
  t.nrows = nrows + 1;
  t.cell = calloc(t.ncols * t.nrows, sizeof *t.cell);
  t.group = calloc(t.ncols, sizeof *t.group);
  t.right = calloc(t.ncols, sizeof *t.right);
  if (!t.cell || !t.group || !t.right) {
    rc = ff_rr_oom();
    goto out;
  }
  {
    static const char *const heads[] = {"config", "workload", "target",
                                        "PV",     "writes",   "flushes"};

    for (size_t c = 0; c < t.ncols; c++)
      *tcell(&t, 0, c) = xstrdup(heads[c], &failed);
    t.right[0] = t.right[4] = t.right[5] = true;
  }
  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const struct ff_rr_workload *w = &rr->configs[i].workloads[j];
      const struct ff_rr_run *run = iodev_run(w);

      for (size_t k = 0; run && k < run->nio_devs; k++, r++) {
        const char *dev = run->io_devs[k].name;
        double wr = iodev_median(w, dev, true);
        double fl = iodev_median(w, dev, false);

        if (wr < -1 || fl < -1 ||
            asprintf(tcell(&t, r, 0), "%lld", rr->configs[i].id) < 0 ||
            asprintf(tcell(&t, r, 4), "%.0f", wr) < 0 ||
            asprintf(tcell(&t, r, 5), "%.0f", fl) < 0)
          failed = true;
        *tcell(&t, r, 1) = xstrdup(w->name, &failed);
        *tcell(&t, r, 2) = xstrdup(w->target ? w->target : "-", &failed);
        *tcell(&t, r, 3) = xstrdup(dev, &failed);
      }
    }
  if (failed) {
    rc = ff_rr_oom();
    goto out;
  }
  fprintf(out, "\nio per PV of an LV target (the farm's writes and flushes "
               "to each PV of its VG during the run, median over the runs; "
               "activating the VG writes too):\n");
  rc = table_print(&t, out);
out:
  table_free(&t);
  return rc;
}

/* The median of the runs' values (val: -1 when a run has none), or -1
 * when no run has one; -2 out of memory. */
static double
run_median(const struct ff_rr_workload *w,
           double (*val)(const struct ff_rr_run *))
{
  double *v = calloc(w->nruns ? w->nruns : 1, sizeof *v), m = -1;
  size_t n = 0;

  if (!v)
    return -2;
  for (size_t i = 0; i < w->nruns; i++)
    if (val(&w->runs[i]) >= 0)
      v[n++] = val(&w->runs[i]);
  if (n) {
    qsort(v, n, sizeof *v, cmp_double);
    m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  free(v);
  return m;
}

static double
run_per_s(const struct ff_rr_run *r)
{
  return r->mkdir_per_s;
}

static double
run_made(const struct ff_rr_run *r)
{
  return (double)r->mkdir_made;
}

static double
run_load_reads(const struct ff_rr_run *r)
{
  return (double)r->load_reads;
}

static double
run_load_mib(const struct ff_rr_run *r)
{
  return r->load_bytes < 0 ? -1 : (double)r->load_bytes / (1 << 20);
}

/* The mkdir storms (fs workloads with mkdirs): per configuration and
 * workload, creates/s (median, fastest, slowest run), the directories
 * made and what the farm served during the storm, medians over the
 * runs. */
static int
print_mkdir_table(const struct ff_runreport *rr, FILE *out)
{
  static const char *const heads[] = {"creates/s", "made", "farm reads",
                                      "MiB read"};
  double (*const vals[])(const struct ff_rr_run *) = {
    run_per_s, run_made, run_load_reads, run_load_mib};
  struct table t = {0};
  size_t nrows = 0, nvary = 0, col = 0, r = 0, *cfg = NULL;
  const struct ff_rr_workload **wl = NULL;
  bool failed = false;
  int rc;

  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++)
      nrows += run_median(&rr->configs[i].workloads[j], run_per_s) >= 0;
  if (!nrows)
    return 0;
  for (size_t k = 0; k < rr->nkeys; k++)
    nvary += rr->varying[k];
  t.ncols = 2 + (nvary ? nvary : 1) + 4;
  t.nrows = nrows + 1;
  t.cell = calloc(t.ncols * t.nrows, sizeof *t.cell);
  t.group = calloc(t.ncols, sizeof *t.group);
  t.right = calloc(t.ncols, sizeof *t.right);
  cfg = calloc(nrows, sizeof *cfg);
  wl = calloc(nrows, sizeof *wl);
  if (!t.cell || !t.group || !t.right || !cfg || !wl) {
    rc = ff_rr_oom();
    goto out;
  }
  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++)
      if (run_median(&rr->configs[i].workloads[j], run_per_s) >= 0) {
        cfg[r] = i;
        wl[r++] = &rr->configs[i].workloads[j];
      }
  *tcell(&t, 0, col) = xstrdup("config", &failed);
  t.right[col] = true;
  for (r = 0; r < nrows; r++)
    if (asprintf(tcell(&t, r + 1, col), "%lld", rr->configs[cfg[r]].id) < 0)
      failed = true;
  col++;
  setting_cols(rr, &t, &col, cfg, nvary > 0, &failed);
  *tcell(&t, 0, col) = xstrdup("workload", &failed);
  for (r = 0; r < nrows; r++)
    *tcell(&t, r + 1, col) = xstrdup(wl[r]->name, &failed);
  col++;
  for (size_t q = 0; q < 4; q++, col++) {
    *tcell(&t, 0, col) = xstrdup(heads[q], &failed);
    t.right[col] = true;
    for (r = 0; r < nrows; r++) {
      double m = run_median(wl[r], vals[q]), lo = -1, hi = -1;

      if (m < -1) {
        failed = true;
        continue;
      }
      for (size_t i = 0; q == 0 && i < wl[r]->nruns; i++) {
        double v = wl[r]->runs[i].mkdir_per_s;

        if (v >= 0 && (lo < 0 || v < lo))
          lo = v;
        if (v > hi)
          hi = v;
      }
      if (m < 0)
        *tcell(&t, r + 1, col) = xstrdup("-", &failed);
      else if (q == 0 && wl[r]->nruns > 1
                 ? asprintf(tcell(&t, r + 1, col), "%.0f (%.0f-%.0f)", m, lo,
                            hi) < 0
                 : asprintf(tcell(&t, r + 1, col), q == 3 ? "%.1f" : "%.0f",
                            m) < 0)
        failed = true;
    }
  }
  if (failed) {
    rc = ff_rr_oom();
    goto out;
  }
  fprintf(out, "\nmkdir storms (creates/s: the directories over the "
               "storm's wall, median (min-max) over the runs; made, and what "
               "the farm served during the storm, medians):\n");
  rc = table_print(&t, out);
out:
  free(cfg);
  free(wl);
  table_free(&t);
  return rc;
}

int
ff_runreport_print(const struct ff_runreport *rr, FILE *out, int top)
{
  struct table t = {0};

  if (top < 0)
    return ff_error("run report: top %d: expected a count >= 0", top);
  print_header(rr, out);
  fputc('\n', out);
  if (build_table(rr, &t) < 0 || table_print(&t, out) < 0) {
    table_free(&t);
    return -1;
  }
  table_free(&t);
  print_footer(rr, out);
  if (print_io_table(rr, out) < 0 || print_io_devices(rr, out) < 0 ||
      print_mkdir_table(rr, out) < 0)
    return -1;
  fputc('\n', out);
  if (ff_runreport_print_verdict(rr, out) < 0 || print_blame(rr, out, top) < 0)
    return -1;
  if (rr->nnotes)
    fputs("\nnotes:\n", out);
  for (size_t i = 0; i < rr->nnotes; i++)
    fprintf(out, "- %s\n", rr->notes[i]);
  if (ff_runreport_print_expect(rr, out) < 0)
    return -1;
  if (fflush(out) == EOF || ferror(out))
    return ff_error("run report: write: %m");
  return 0;
}
