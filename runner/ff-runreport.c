/* fusefarm: render a run document as text and CSV (see ff-runreport.h,
 * docs/run-json.md, docs/report.md).  No threads. */
#include "ff-runreport.h"
#include "ff-error.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PATH_LEN 320

static const char *const workload_types[] = {
  "pvs",
  "vgs",
  "lvs",
  "pvscan-cache",
  "event-activation",
  "direct-activation",
  "lvchange",
};

/* --- checking the document -------------------------------------------
 *
 * Every getter takes the object, the object's path in the document ("" at
 * the top) and the key; it records an error naming path and key and
 * returns -1 when the member is missing (unless optional) or mistyped.
 */

static void
subpath(char *buf, const char *path, const char *key)
{
  snprintf(buf, PATH_LEN, *path ? "%s.%s" : "%s%s", path, key);
}

static int
missing(const char *path, const char *key)
{
  return ff_error("%s: missing \"%s\"", *path ? path : "run document", key);
}

static int
mistyped(const char *path, const char *key, const char *what)
{
  char p[PATH_LEN];

  subpath(p, path, key);
  return ff_error("%s: expected %s", p, what);
}

static int
get_str(const json_t *o, const char *path, const char *key, bool optional,
        const char **out)
{
  const json_t *v = json_object_get(o, key);

  *out = NULL;
  if (!v)
    return optional ? 0 : missing(path, key);
  /* An optional string may be null (json_pack's "s?" writes that). */
  if (optional && json_is_null(v))
    return 0;
  if (!json_is_string(v))
    return mistyped(path, key, optional ? "a string or null" : "a string");
  *out = json_string_value(v);
  return 0;
}

/* An integer >= min; absent and optional: *out = -1. */
static int
get_int(const json_t *o, const char *path, const char *key, bool optional,
        long long min, long long *out)
{
  const json_t *v = json_object_get(o, key);
  char what[64];

  *out = -1;
  if (!v)
    return optional ? 0 : missing(path, key);
  if (!json_is_integer(v) || json_integer_value(v) < min) {
    if (min == LLONG_MIN)
      snprintf(what, sizeof what, "an integer");
    else
      snprintf(what, sizeof what, "an integer >= %lld", min);
    return mistyped(path, key, what);
  }
  *out = json_integer_value(v);
  return 0;
}

/* A time: a number of seconds from 0 to FF_RR_SECS_MAX (integer or
 * real).  Anything longer is not a measurement (and would not fit the
 * table). */
#define FF_RR_SECS_MAX 1e9

static int
get_secs(const json_t *o, const char *path, const char *key, double *out)
{
  const json_t *v = json_object_get(o, key);
  char p[PATH_LEN];

  if (!v)
    return missing(path, key);
  if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
      json_number_value(v) < 0)
    return mistyped(path, key, "a number of seconds >= 0");
  if (json_number_value(v) > FF_RR_SECS_MAX) {
    subpath(p, path, key);
    return ff_error("%s: %g s is more than %g s (31 years)", p,
                    json_number_value(v), FF_RR_SECS_MAX);
  }
  *out = json_number_value(v);
  return 0;
}

/* Absent and optional: *out = -1. */
static int
get_bool(const json_t *o, const char *path, const char *key, bool optional,
         int *out)
{
  const json_t *v = json_object_get(o, key);

  *out = -1;
  if (!v)
    return optional ? 0 : missing(path, key);
  if (!json_is_boolean(v))
    return mistyped(path, key, "true or false");
  *out = json_is_true(v);
  return 0;
}

/* Absent and optional: *out = NULL. */
static int
get_typed(const json_t *o, const char *path, const char *key, bool optional,
          bool array, const json_t **out)
{
  const json_t *v = json_object_get(o, key);

  *out = NULL;
  if (!v)
    return optional ? 0 : missing(path, key);
  if (array ? !json_is_array(v) : !json_is_object(v))
    return mistyped(path, key, array ? "an array" : "an object");
  *out = v;
  return 0;
}

static int
oom(void)
{
  return ff_error("run report: out of memory");
}

/* An element of an array that must be an object. */
static const json_t *
element(const json_t *a, size_t i, const char *path, const char *key,
        char *elpath)
{
  const json_t *e = json_array_get(a, i);

  snprintf(elpath, PATH_LEN, *path ? "%s.%s[%zu]" : "%s%s[%zu]", path, key, i);
  if (!json_is_object(e)) {
    ff_error("%s: expected an object", elpath);
    return NULL;
  }
  return e;
}

static int
load_unit(struct ff_rr_unit *u, const json_t *e, const char *path,
          enum ff_rr_unit_kind kind)
{
  u->kind = kind;
  u->vg_complete = -1;
  if (kind == FF_RR_PVSCAN) {
    const json_t *vg = json_object_get(e, "vg");

    if (get_str(e, path, "device", false, &u->device) < 0)
      return -1;
    /* A PV in no VG: the runner may write null. */
    if (!vg)
      return missing(path, "vg");
    if (!json_is_string(vg) && !json_is_null(vg))
      return mistyped(path, "vg", "a string or null");
    u->vg = json_string_value(vg);
    if (get_bool(e, path, "vg_complete", false, &u->vg_complete) < 0)
      return -1;
  } else if (get_str(e, path, "vg", false, &u->vg) < 0) {
    return -1;
  }
  if (get_secs(e, path, "start", &u->start) < 0 ||
      get_secs(e, path, "end", &u->end) < 0 ||
      get_int(e, path, "exit", false, LLONG_MIN, &u->exit) < 0)
    return -1;
  if (u->end < u->start)
    return ff_error("%s: end %g is before start %g", path, u->end, u->start);
  return 0;
}

static int
load_units(struct ff_rr_workload *w, const json_t *wj, const char *path)
{
  const json_t *devs, *acts;
  char p[PATH_LEN];
  size_t n = 0;

  if (get_typed(wj, path, "devices", false, true, &devs) < 0 ||
      get_typed(wj, path, "activations", false, true, &acts) < 0)
    return -1;
  w->npvscan = json_array_size(devs);
  w->nvgchange = json_array_size(acts);
  w->nunits = w->npvscan + w->nvgchange;
  if (!w->nunits)
    return 0;
  w->units = calloc(w->nunits, sizeof *w->units);
  if (!w->units)
    return oom();
  for (size_t i = 0; i < w->npvscan; i++, n++) {
    const json_t *e = element(devs, i, path, "devices", p);

    if (!e || load_unit(&w->units[n], e, p, FF_RR_PVSCAN) < 0)
      return -1;
  }
  for (size_t i = 0; i < w->nvgchange; i++, n++) {
    const json_t *e = element(acts, i, path, "activations", p);

    if (!e || load_unit(&w->units[n], e, p, FF_RR_VGCHANGE) < 0)
      return -1;
  }
  for (size_t i = 0; i < w->nunits; i++)
    if (w->units[i].exit != 0)
      w->failed_units++;
  return 0;
}

static int
load_workload(struct ff_rr_workload *w, const json_t *wj, const char *path)
{
  const json_t *runs;
  char p[PATH_LEN];
  size_t t;

  if (get_str(wj, path, "name", false, &w->name) < 0 ||
      get_str(wj, path, "type", false, &w->type) < 0)
    return -1;
  for (t = 0; t < sizeof workload_types / sizeof *workload_types; t++)
    if (!strcmp(w->type, workload_types[t]))
      break;
  if (t == sizeof workload_types / sizeof *workload_types)
    return ff_error("%s.type: unknown workload type \"%s\"", path, w->type);
  w->event = !strcmp(w->type, "event-activation");
  if (get_int(wj, path, "repeat", false, 1, &w->repeat) < 0 ||
      get_typed(wj, path, "runs", false, true, &runs) < 0 ||
      get_secs(wj, path, "min", &w->min) < 0 ||
      get_secs(wj, path, "median", &w->median) < 0 ||
      get_secs(wj, path, "max", &w->max) < 0)
    return -1;
  if (!(w->min <= w->median && w->median <= w->max))
    return ff_error("%s: expected min <= median <= max, got %g, %g, %g", path,
                    w->min, w->median, w->max);
  w->nruns = json_array_size(runs);
  if (!w->nruns)
    return ff_error("%s.runs: empty", path);
  w->runs = calloc(w->nruns, sizeof *w->runs);
  if (!w->runs)
    return oom();
  for (size_t i = 0; i < w->nruns; i++) {
    struct ff_rr_run *r = &w->runs[i];
    const json_t *e = element(runs, i, path, "runs", p);

    if (!e || get_secs(e, p, "wall", &r->wall) < 0 ||
        get_int(e, p, "exit", false, LLONG_MIN, &r->exit) < 0 ||
        get_int(e, p, "errors", false, 0, &r->errors) < 0)
      return -1;
    if (r->exit != 0 || r->errors > 0)
      w->failed_runs++;
    if (r->exit > w->worst_exit)
      w->worst_exit = r->exit;
    w->errors += r->errors;
  }
  if (w->event)
    return load_units(w, wj, path);
  return 0;
}

static int
load_config(struct ff_rr_config *c, const json_t *cj, const char *path)
{
  const json_t *farm, *wls, *v;
  char p[PATH_LEN];
  const char *key;
  void *it;

  if (get_int(cj, path, "id", false, LLONG_MIN, &c->id) < 0 ||
      get_str(cj, path, "label", false, &c->label) < 0 ||
      get_typed(cj, path, "settings", false, false, &c->settings) < 0)
    return -1;
  /* jansson's iterators take a non-const object; they do not change it. */
  for (it = json_object_iter((json_t *)c->settings); it;
       it = json_object_iter_next((json_t *)c->settings, it)) {
    key = json_object_iter_key(it);
    v = json_object_iter_value(it);
    if (!json_is_number(v) && !json_is_string(v) && !json_is_boolean(v))
      return ff_error("%s.settings[\"%s\"]: expected a number, a string or "
                      "a boolean",
                      path, key);
  }
  if (get_typed(cj, path, "farm", true, false, &farm) < 0)
    return -1;
  if (farm) {
    subpath(p, path, "farm");
    if (get_int(farm, p, "devices", false, 0, &c->devices) < 0 ||
        get_int(farm, p, "vgs", false, 0, &c->vgs) < 0 ||
        get_int(farm, p, "lvs", false, 0, &c->lvs) < 0)
      return -1;
    c->has_farm = true;
  }
  if (get_typed(cj, path, "workloads", false, true, &wls) < 0)
    return -1;
  c->nworkloads = json_array_size(wls);
  if (!c->nworkloads)
    return 0;
  c->workloads = calloc(c->nworkloads, sizeof *c->workloads);
  if (!c->workloads)
    return oom();
  for (size_t i = 0; i < c->nworkloads; i++) {
    const json_t *e = element(wls, i, path, "workloads", p);

    if (!e || load_workload(&c->workloads[i], e, p) < 0)
      return -1;
    for (size_t k = 0; k < i; k++)
      if (!strcmp(c->workloads[k].name, c->workloads[i].name))
        return ff_error("%s: name \"%s\" is also workloads[%zu]'s", p,
                        c->workloads[i].name, k);
  }
  return 0;
}

/* keys[] and varying[]: the union of the settings keys. */
static int
collect_keys(struct ff_runreport *rr)
{
  size_t cap = 0;

  for (size_t i = 0; i < rr->nconfigs; i++)
    cap += json_object_size(rr->configs[i].settings);
  if (!cap)
    return 0;
  rr->keys = calloc(cap, sizeof *rr->keys);
  rr->varying = calloc(cap, sizeof *rr->varying);
  if (!rr->keys || !rr->varying)
    return oom();
  for (size_t i = 0; i < rr->nconfigs; i++) {
    json_t *s = (json_t *)rr->configs[i].settings; /* see load_config */

    for (void *it = json_object_iter(s); it;
         it = json_object_iter_next(s, it)) {
      const char *key = json_object_iter_key(it);
      size_t k;

      for (k = 0; k < rr->nkeys; k++)
        if (!strcmp(rr->keys[k], key))
          break;
      if (k == rr->nkeys)
        rr->keys[rr->nkeys++] = key;
    }
  }
  for (size_t k = 0; k < rr->nkeys; k++) {
    const json_t *first =
      json_object_get(rr->configs[0].settings, rr->keys[k]);

    for (size_t i = 0; i < rr->nconfigs && !rr->varying[k]; i++) {
      const json_t *v = json_object_get(rr->configs[i].settings, rr->keys[k]);

      rr->varying[k] = !first || !v || !json_equal(first, v);
    }
  }
  return 0;
}

static int
load_top(struct ff_runreport *rr, const json_t *doc)
{
  const json_t *scen, *host, *notes, *configs;
  const char *format;
  long long version;
  char p[PATH_LEN];

  if (!doc || !json_is_object(doc))
    return ff_error("run document: expected a JSON object");
  if (get_str(doc, "", "format", false, &format) < 0)
    return -1;
  if (strcmp(format, "fusefarm-run"))
    return ff_error("format: \"%s\" is not \"fusefarm-run\"", format);
  if (get_int(doc, "", "version", false, LLONG_MIN, &version) < 0)
    return -1;
  if (version != 1)
    return ff_error("version: %lld is not supported (expected 1)", version);
  if (get_typed(doc, "", "scenario", false, false, &scen) < 0 ||
      get_str(scen, "scenario", "name", false, &rr->scenario) < 0 ||
      get_str(scen, "scenario", "file", true, &rr->scenario_file) < 0 ||
      get_str(scen, "scenario", "description", true, &rr->description) < 0 ||
      get_str(doc, "", "started", false, &rr->started) < 0 ||
      get_str(doc, "", "finished", true, &rr->finished) < 0)
    return -1;
  if (get_typed(doc, "", "host", false, false, &host) < 0 ||
      get_str(host, "host", "kernel", false, &rr->kernel) < 0 ||
      get_str(host, "host", "lvm_version", false, &rr->lvm_version) < 0 ||
      get_str(host, "host", "lvm", true, &rr->lvm) < 0 ||
      get_str(host, "host", "fusefarm_version", true, &rr->fusefarm_version) <
        0 ||
      get_int(host, "host", "cpus", true, 1, &rr->cpus) < 0 ||
      get_bool(host, "host", "device_mapper", true, &rr->device_mapper) < 0)
    return -1;

  if (get_typed(doc, "", "notes", true, true, &notes) < 0)
    return -1;
  rr->nnotes = json_array_size(notes);
  if (rr->nnotes) {
    rr->notes = calloc(rr->nnotes, sizeof *rr->notes);
    if (!rr->notes)
      return oom();
  }
  for (size_t i = 0; i < rr->nnotes; i++) {
    rr->notes[i] = json_string_value(json_array_get(notes, i));
    if (!rr->notes[i])
      return ff_error("notes[%zu]: expected a string", i);
  }

  if (get_typed(doc, "", "configs", false, true, &configs) < 0)
    return -1;
  rr->nconfigs = json_array_size(configs);
  if (!rr->nconfigs)
    return ff_error("configs: empty: the run has nothing to report");
  rr->configs = calloc(rr->nconfigs, sizeof *rr->configs);
  if (!rr->configs)
    return oom();
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const json_t *e = element(configs, i, "", "configs", p);

    if (!e || load_config(&rr->configs[i], e, p) < 0)
      return -1;
    for (size_t k = 0; k < i; k++)
      if (rr->configs[k].id == rr->configs[i].id)
        return ff_error("%s: id %lld is also configs[%zu]'s", p,
                        rr->configs[i].id, k);
  }
  return collect_keys(rr);
}

struct ff_runreport *
ff_runreport_load(const json_t *doc)
{
  struct ff_runreport *rr = calloc(1, sizeof *rr);

  if (!rr) {
    oom();
    return NULL;
  }
  rr->cpus = -1;
  rr->device_mapper = -1;
  if (load_top(rr, doc) < 0) {
    ff_runreport_free(rr);
    return NULL;
  }
  return rr;
}

void
ff_runreport_free(struct ff_runreport *rr)
{
  if (!rr)
    return;
  for (size_t i = 0; i < rr->nconfigs; i++) {
    struct ff_rr_config *c = &rr->configs[i];

    for (size_t j = 0; j < c->nworkloads; j++) {
      free(c->workloads[j].runs);
      free(c->workloads[j].units);
    }
    free(c->workloads);
  }
  free(rr->configs);
  free(rr->notes);
  free(rr->keys);
  free(rr->varying);
  free(rr);
}

/* --- small helpers shared by the renderers --------------------------- */

char *
ff_runreport_fmt_secs(double s, bool unit, char *buf, size_t len)
{
  const char *u = unit ? " s" : "";

  if (s < 1)
    snprintf(buf, len, "%.3f%s", s, u);
  else if (s < 10)
    snprintf(buf, len, "%.2f%s", s, u);
  else if (s < 59.95)
    snprintf(buf, len, "%.1f%s", s, u);
  else {
    /* Round first, so that 119.96 is "2 min 0.0", not "1 min 60.0". */
    double t = round(s * 10) / 10;
    double m = floor(t / 60);

    snprintf(buf, len, "%.0f min %.1f%s", m, t - 60 * m, u);
  }
  return buf;
}

const char *
ff_runreport_unit_name(const struct ff_rr_unit *u)
{
  return u->kind == FF_RR_PVSCAN ? u->device : u->vg;
}

static int
cmp_tail(const struct ff_rr_unit *a, const struct ff_rr_unit *b)
{
  if (a->kind != b->kind)
    return a->kind == FF_RR_PVSCAN ? -1 : 1;
  return strcmp(ff_runreport_unit_name(a), ff_runreport_unit_name(b));
}

static int
cmp_duration(const void *pa, const void *pb)
{
  const struct ff_rr_unit *a = *(const struct ff_rr_unit *const *)pa;
  const struct ff_rr_unit *b = *(const struct ff_rr_unit *const *)pb;
  double da = a->end - a->start, db = b->end - b->start;

  if (da != db)
    return da > db ? -1 : 1;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return cmp_tail(a, b);
}

static int
cmp_start(const void *pa, const void *pb)
{
  const struct ff_rr_unit *a = *(const struct ff_rr_unit *const *)pa;
  const struct ff_rr_unit *b = *(const struct ff_rr_unit *const *)pb;

  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  if (a->end != b->end)
    return a->end < b->end ? -1 : 1;
  return cmp_tail(a, b);
}

size_t *
ff_runreport_order(const struct ff_rr_workload *w, enum ff_rr_order order)
{
  const struct ff_rr_unit **p;
  size_t *idx;

  if (!w->nunits) {
    ff_error("workload %s: no units to order", w->name);
    return NULL;
  }
  p = malloc(w->nunits * sizeof *p);
  idx = malloc(w->nunits * sizeof *idx);
  if (!p || !idx) {
    free(p);
    free(idx);
    oom();
    return NULL;
  }
  for (size_t i = 0; i < w->nunits; i++)
    p[i] = &w->units[i];
  qsort(p, w->nunits, sizeof *p,
        order == FF_RR_BY_DURATION ? cmp_duration : cmp_start);
  for (size_t i = 0; i < w->nunits; i++)
    idx[i] = (size_t)(p[i] - w->units);
  free(p);
  return idx;
}

char *
ff_runreport_sibling(const char *path, const char *ext, const char *suffix)
{
  size_t n = strlen(path), e = strlen(ext);
  char *s;

  if (n > e && !strcmp(path + n - e, ext))
    n -= e;
  if (asprintf(&s, "%.*s%s", (int)n, path, suffix) < 0) {
    oom();
    return NULL;
  }
  return s;
}

char *
ff_runreport_units_csv_path(const char *csv_path)
{
  return ff_runreport_sibling(csv_path, ".csv", "-devices.csv");
}

char *
ff_runreport_timeline_path(const struct ff_rr_config *c,
                           const struct ff_rr_workload *w,
                           const char *svg_path)
{
  size_t nevent = 0;
  char *suffix, *path;
  int r;

  for (size_t i = 0; i < c->nworkloads; i++)
    nevent += c->workloads[i].event;
  if (nevent > 1)
    r = asprintf(&suffix, "-timeline-%lld-%s.svg", c->id, w->name);
  else
    r = asprintf(&suffix, "-timeline-%lld.svg", c->id);
  if (r < 0) {
    oom();
    return NULL;
  }
  /* Only the name can hold odd bytes: everything after "-timeline-". */
  for (char *q = suffix + strlen("-timeline-"); *q; q++)
    if (!(q[0] >= 'a' && q[0] <= 'z') && !(q[0] >= 'A' && q[0] <= 'Z') &&
        !(q[0] >= '0' && q[0] <= '9') && !strchr("._-", q[0]))
      *q = '_';
  path = ff_runreport_sibling(svg_path, ".svg", suffix);
  free(suffix);
  return path;
}

/* A settings value as text: strings as they are, numbers and booleans as
 * JSON writes them. */
static void
value_text(const json_t *v, char *buf, size_t len)
{
  if (!v)
    snprintf(buf, len, "%s", "");
  else if (json_is_string(v))
    snprintf(buf, len, "%s", json_string_value(v));
  else if (json_is_integer(v))
    snprintf(buf, len, "%lld", (long long)json_integer_value(v));
  else if (json_is_real(v))
    snprintf(buf, len, "%.15g", json_real_value(v));
  else
    snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
}

/* --- the text report -------------------------------------------------- */

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
    return oom();
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
  return l.failed ? oom() : 0;
}

const struct ff_rr_workload *
ff_runreport_find_workload(const struct ff_rr_config *c, const char *name)
{
  for (size_t i = 0; i < c->nworkloads; i++)
    if (!strcmp(c->workloads[i].name, name))
      return &c->workloads[i];
  return NULL;
}

const char **
ff_runreport_workload_names(const struct ff_runreport *rr, size_t *n)
{
  const char **names;
  size_t cap = 0;

  *n = 0;
  for (size_t i = 0; i < rr->nconfigs; i++)
    cap += rr->configs[i].nworkloads;
  names = calloc(cap ? cap : 1, sizeof *names);
  if (!names) {
    oom();
    return NULL;
  }
  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const char *name = rr->configs[i].workloads[j].name;
      size_t k;

      for (k = 0; k < *n && strcmp(names[k], name); k++)
        ;
      if (k == *n)
        names[(*n)++] = name;
    }
  return names;
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
    oom();
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
static const char *
short_key(const struct ff_runreport *rr, size_t k)
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
    return oom();
  }

  /* config id */
  *tcell(t, 0, col) = xstrdup("config", &failed);
  t->right[col] = true;
  for (size_t i = 0; i < rr->nconfigs; i++)
    if (asprintf(tcell(t, i + 1, col), "%lld", rr->configs[i].id) < 0)
      failed = true;
  col++;

  /* settings that vary, or the labels */
  if (setcols) {
    for (size_t k = 0; k < rr->nkeys; k++) {
      bool numeric = true;

      if (!rr->varying[k])
        continue;
      *tcell(t, 0, col) = xstrdup(short_key(rr, k), &failed);
      for (size_t i = 0; i < rr->nconfigs; i++) {
        const json_t *v =
          json_object_get(rr->configs[i].settings, rr->keys[k]);
        char buf[256];

        numeric &= !v || json_is_number(v) || json_is_boolean(v);
        value_text(v, buf, sizeof buf);
        *tcell(t, i + 1, col) = xstrdup(v ? buf : "-", &failed);
      }
      t->right[col++] = numeric;
    }
  } else {
    *tcell(t, 0, col) = xstrdup("label", &failed);
    for (size_t i = 0; i < rr->nconfigs; i++)
      *tcell(t, i + 1, col) = xstrdup(rr->configs[i].label, &failed);
    col++;
  }

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
  return failed ? oom() : 0;
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
  for (size_t i = 1; i < rr->nconfigs; i++)
    farm_same &= same_farm(c0, &rr->configs[i]);
  if (farm_same)
    fprintf(out, "farm: %lld device%s, %lld VG%s, %lld LV%s\n", c0->devices,
            c0->devices == 1 ? "" : "s", c0->vgs, c0->vgs == 1 ? "" : "s",
            c0->lvs, c0->lvs == 1 ? "" : "s");
  for (size_t k = 0; k < rr->nkeys; k++) {
    if (rr->varying[k])
      continue;
    value_text(json_object_get(c0->settings, rr->keys[k]), v, sizeof v);
    fprintf(out, "%s%s=%s", first ? "every config: " : ", ", rr->keys[k], v);
    first = false;
  }
  if (!first)
    fputc('\n', out);
}

/* The line under the table saying what the columns mean, then one line
 * per workload with failures. */
static void
print_footer(const struct ff_runreport *rr, FILE *out)
{
  bool range = false, event = false;

  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      range |= rr->configs[i].workloads[j].repeat > 1;
      event |= rr->configs[i].workloads[j].event;
    }
  fprintf(out, "\nmedian%s: wall time of the workload over its repetitions",
          range ? " (min\u2013max)" : "");
  if (event)
    fputs("; slowest pvscan, vgchange: the longest of the last repetition",
          out);
  fputc('\n', out);
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
  if (print_blame(rr, out, top) < 0)
    return -1;
  if (rr->nnotes)
    fputs("\nnotes:\n", out);
  for (size_t i = 0; i < rr->nnotes; i++)
    fprintf(out, "- %s\n", rr->notes[i]);
  if (fflush(out) == EOF || ferror(out))
    return ff_error("run report: write: %m");
  return 0;
}

/* --- CSV -------------------------------------------------------------- */

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
          value_text(json_object_get(c->settings, rr->keys[k]), v, sizeof v);
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
