/* fusefarm: load and check a run document into the model struct
 * ff_runreport, and the small helpers every renderer uses (see
 * ff-runreport.h, docs/run-json.md).  The text report is in
 * ff-runreport-table.c, the CSV files in ff-runreport-csv.c.  No threads. */
#include "ff-runreport.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-runreport-int.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_LEN 320

static void value_text(const json_t *v, char *buf, size_t len);

static const char *const workload_types[] = {
  "pvs",
  "vgs",
  "lvs",
  "pvscan-cache",
  "event-activation",
  "direct-activation",
  "lvchange",
  "io",
  "fs",
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

int
ff_rr_oom(void)
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
    return ff_rr_oom();
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

/* A number >= 0 (integer or real). */
static int
get_num(const json_t *o, const char *path, const char *key, double *out)
{
  const json_t *v = json_object_get(o, key);

  if (!v)
    return missing(path, key);
  if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
      json_number_value(v) < 0)
    return mistyped(path, key, "a number >= 0");
  *out = json_number_value(v);
  return 0;
}

/* An integer >= 0 or null (-1). */
static int
get_int_or_null(const json_t *o, const char *path, const char *key,
                long long *out)
{
  const json_t *v = json_object_get(o, key);

  *out = -1;
  if (!v)
    return missing(path, key);
  if (json_is_null(v))
    return 0;
  return get_int(o, path, key, false, 0, out);
}

static int
load_iodir(struct ff_rr_iodir *d, const json_t *io, const char *path,
           const char *key)
{
  const json_t *o;
  char p[PATH_LEN];

  if (get_typed(io, path, key, false, false, &o) < 0)
    return -1;
  subpath(p, path, key);
  return get_num(o, p, "bw", &d->bw) < 0 ||
             get_num(o, p, "iops", &d->iops) < 0 ||
             get_int(o, p, "ios", false, 0, &d->ios) < 0 ||
             get_int_or_null(o, p, "clat_p50_ns", &d->clat_p50_ns) < 0 ||
             get_int_or_null(o, p, "clat_p99_ns", &d->clat_p99_ns) < 0
           ? -1
           : 0;
}

/* A run's optional "fs" object's mkdir storm and load counters (fs
 * workloads with mkdirs: no "io"). */
static int
load_fs(struct ff_rr_run *r, const json_t *e, const char *path)
{
  const json_t *fs, *m, *lf;
  char p[PATH_LEN], mp[PATH_LEN];

  r->mkdir_made = r->load_reads = r->load_bytes = -1;
  r->mkdir_per_s = -1;
  if (get_typed(e, path, "fs", true, false, &fs) < 0)
    return -1;
  if (!fs)
    return 0;
  subpath(p, path, "fs");
  if (get_typed(fs, p, "mkdir", true, false, &m) < 0 ||
      get_typed(fs, p, "load_farm", true, false, &lf) < 0)
    return -1;
  subpath(mp, p, "mkdir");
  if (m) {
    const json_t *ps = json_object_get(m, "per_second");

    if (get_int(m, mp, "made", false, 0, &r->mkdir_made) < 0)
      return -1;
    if (!ps)
      return missing(mp, "per_second");
    if (!json_is_number(ps) || !isfinite(json_number_value(ps)) ||
        json_number_value(ps) < 0)
      return mistyped(mp, "per_second", "a rate >= 0");
    r->mkdir_per_s = json_number_value(ps);
  }
  subpath(mp, p, "load_farm");
  if (lf && (get_int(lf, mp, "reads", false, 0, &r->load_reads) < 0 ||
             get_int(lf, mp, "bytes_read", false, 0, &r->load_bytes) < 0))
    return -1;
  return 0;
}

/* A run's optional "io" object (io workloads). */
static int
load_io(struct ff_rr_run *r, const json_t *e, const char *path)
{
  const json_t *io, *farm, *devs;
  char p[PATH_LEN], fp[PATH_LEN];

  r->io_farm_writes = r->io_farm_flushes = -1;
  if (get_typed(e, path, "io", true, false, &io) < 0)
    return -1;
  if (!io)
    return 0;
  subpath(p, path, "io");
  if (load_iodir(&r->io_read, io, p, "read") < 0 ||
      load_iodir(&r->io_write, io, p, "write") < 0 ||
      get_int(io, p, "error", false, LLONG_MIN, &r->io_error) < 0 ||
      get_typed(io, p, "farm", true, false, &farm) < 0)
    return -1;
  subpath(fp, p, "farm");
  if (farm &&
      (get_int(farm, fp, "writes", false, 0, &r->io_farm_writes) < 0 ||
       get_int(farm, fp, "flushes", false, 0, &r->io_farm_flushes) < 0))
    return -1;
  if (get_typed(io, p, "devices", true, false, &devs) < 0)
    return -1;
  if (devs && json_object_size(devs)) {
    const char *name;
    const json_t *d;
    size_t n = 0;

    r->io_devs = calloc(json_object_size(devs), sizeof *r->io_devs);
    if (!r->io_devs)
      return ff_rr_oom();
    subpath(fp, p, "devices");
    json_object_foreach((json_t *)devs, name, d)
    {
      char dp[PATH_LEN];
      struct ff_rr_iodev *v = &r->io_devs[n];

      subpath(dp, fp, name);
      if (!json_is_object(d))
        return ff_error("%s: expected an object", dp);
      v->name = name;
      if (get_int(d, dp, "writes", false, 0, &v->writes) < 0 ||
          get_int(d, dp, "flushes", false, 0, &v->flushes) < 0)
        return -1;
      r->nio_devs = ++n;
    }
  }
  r->has_io = true;
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
  w->io = !strcmp(w->type, "io") || !strcmp(w->type, "fs");
  if (get_str(wj, path, "target", true, &w->target) < 0)
    return -1;
  if (get_int(wj, path, "repeat", false, 1, &w->repeat) < 0 ||
      get_typed(wj, path, "runs", false, true, &runs) < 0 ||
      get_secs(wj, path, "min", &w->min) < 0 ||
      get_secs(wj, path, "median", &w->median) < 0 ||
      get_secs(wj, path, "max", &w->max) < 0 ||
      get_int(wj, path, "reads", true, 0, &w->reads) < 0 ||
      get_int(wj, path, "bytes_read", true, 0, &w->bytes_read) < 0)
    return -1;
  if (!(w->min <= w->median && w->median <= w->max))
    return ff_error("%s: expected min <= median <= max, got %g, %g, %g", path,
                    w->min, w->median, w->max);
  w->nruns = json_array_size(runs);
  if (!w->nruns)
    return ff_error("%s.runs: empty", path);
  w->runs = calloc(w->nruns, sizeof *w->runs);
  if (!w->runs)
    return ff_rr_oom();
  for (size_t i = 0; i < w->nruns; i++) {
    struct ff_rr_run *r = &w->runs[i];
    const json_t *e = element(runs, i, path, "runs", p);

    if (!e || get_secs(e, p, "wall", &r->wall) < 0 ||
        get_int(e, p, "exit", false, LLONG_MIN, &r->exit) < 0 ||
        get_int(e, p, "errors", false, 0, &r->errors) < 0 ||
        get_str(e, p, "message", true, &r->message) < 0 ||
        get_int(e, p, "reads", true, 0, &r->reads) < 0 ||
        get_int(e, p, "bytes_read", true, 0, &r->bytes_read) < 0)
      return -1;
    if (load_io(r, e, p) < 0 || load_fs(r, e, p) < 0)
      return -1;
    r->commands = -1;
    if (json_is_array(json_object_get(e, "commands")))
      r->commands = (long long)json_array_size(json_object_get(e, "commands"));
    if (r->exit != 0 || r->errors > 0)
      w->failed_runs++;
    if (r->message && !w->message)
      w->message = r->message;
    if (r->exit > w->worst_exit)
      w->worst_exit = r->exit;
    w->errors += r->errors;
  }
  if (w->event)
    return load_units(w, wj, path);
  return 0;
}

/* "slow": { "profile": NAME, "devices": [NAME, ...] } (optional). */
static int
load_slow(struct ff_rr_config *c, const json_t *cj, const char *path)
{
  const json_t *v, *devs;

  if (get_typed(cj, path, "slow", true, false, &v) < 0)
    return -1;
  if (!v)
    return 0;
  if (!json_is_string(json_object_get(v, "profile")) ||
      !json_is_array(devs = json_object_get(v, "devices")))
    return ff_error("%s.slow: expected {\"profile\": NAME, \"devices\": "
                    "[NAME, ...]}",
                    path);
  c->slow_profile = json_string_value(json_object_get(v, "profile"));
  c->nslow = json_array_size(devs);
  if (c->nslow && !(c->slow_devices = calloc(c->nslow, sizeof(char *))))
    return ff_rr_oom();
  for (size_t i = 0; i < c->nslow; i++)
    if (!(c->slow_devices[i] = json_string_value(json_array_get(devs, i))))
      return ff_error("%s.slow.devices[%zu]: expected a device name (a "
                      "string)",
                      path, i);
  return 0;
}

static int
load_config(struct ff_rr_config *c, const json_t *cj, const char *path)
{
  const json_t *farm, *wls, *v, *settings;
  char p[PATH_LEN];
  const char *key;
  void *it;

  if (get_int(cj, path, "id", false, LLONG_MIN, &c->id) < 0 ||
      get_str(cj, path, "label", false, &c->label) < 0 ||
      get_typed(cj, path, "settings", false, false, &settings) < 0)
    return -1;
  if (json_object_size(settings)) {
    c->settings = calloc(json_object_size(settings), sizeof *c->settings);
    if (!c->settings)
      return ff_rr_oom();
  }
  /* jansson's iterators take a non-const object; they do not change it. */
  for (it = json_object_iter((json_t *)settings); it;
       it = json_object_iter_next((json_t *)settings, it)) {
    struct ff_rr_setting *s = &c->settings[c->nsettings];
    char text[256];

    key = json_object_iter_key(it);
    v = json_object_iter_value(it);
    if (!json_is_number(v) && !json_is_string(v) && !json_is_boolean(v))
      return ff_error("%s.settings[\"%s\"]: expected a number, a string or "
                      "a boolean",
                      path, key);
    s->key = key;
    s->kind = json_is_string(v)    ? FF_RR_STRING
              : json_is_integer(v) ? FF_RR_INTEGER
              : json_is_real(v)    ? FF_RR_REAL
                                   : FF_RR_BOOLEAN;
    if (json_is_string(v)) {
      s->text = strdup(json_string_value(v));
    } else {
      value_text(v, text, sizeof text);
      s->text = strdup(text);
    }
    if (!s->text)
      return ff_rr_oom();
    c->nsettings++;
  }
  /* "profile" and "lvm" (optional): what the charts' titles name */
  v = json_object_get(cj, "lvm");
  if (get_str(cj, path, "profile", true, &c->profile) < 0 ||
      (v && !json_is_null(v) &&
       get_typed(cj, path, "lvm", true, false, &v) < 0))
    return -1;
  if (v && json_is_null(v))
    v = NULL;
  if (v) {
    subpath(p, path, "lvm");
    if (get_str(v, p, "label", true, &c->lvm_label) < 0 ||
        get_str(v, p, "version", true, &c->lvm_version) < 0)
      return -1;
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
  if (get_typed(cj, path, "dm", true, false, &v) < 0)
    return -1;
  if (v) {
    subpath(p, path, "dm");
    if (get_str(v, p, "mode", false, &c->dm_mode) < 0 ||
        get_int(v, p, "created", true, 0, &c->dm_created) < 0 ||
        get_int(v, p, "max_active", true, 0, &c->dm_max_active) < 0)
      return -1;
  }
  if (load_slow(c, cj, path) < 0 ||
      get_typed(cj, path, "workloads", false, true, &wls) < 0)
    return -1;
  c->nworkloads = json_array_size(wls);
  if (!c->nworkloads)
    return 0;
  c->workloads = calloc(c->nworkloads, sizeof *c->workloads);
  if (!c->workloads)
    return ff_rr_oom();
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

/* keys[] and varying[]: the union of the settings keys.  A value varies
 * unless it is equal (as JSON values) in every config of configs, the
 * document's "configs" array. */
static int
collect_keys(struct ff_runreport *rr, const json_t *configs)
{
  size_t cap = 0;

  for (size_t i = 0; i < rr->nconfigs; i++)
    cap += rr->configs[i].nsettings;
  if (!cap)
    return 0;
  rr->keys = calloc(cap, sizeof *rr->keys);
  rr->varying = calloc(cap, sizeof *rr->varying);
  if (!rr->keys || !rr->varying)
    return ff_rr_oom();
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const struct ff_rr_config *c = &rr->configs[i];

    for (size_t j = 0; j < c->nsettings; j++) {
      size_t k;

      for (k = 0; k < rr->nkeys; k++)
        if (!strcmp(rr->keys[k], c->settings[j].key))
          break;
      if (k == rr->nkeys)
        rr->keys[rr->nkeys++] = c->settings[j].key;
    }
  }
  for (size_t k = 0; k < rr->nkeys; k++) {
    const json_t *first = json_object_get(
      json_object_get(json_array_get(configs, 0), "settings"), rr->keys[k]);

    for (size_t i = 0; i < rr->nconfigs && !rr->varying[k]; i++) {
      const json_t *v = json_object_get(
        json_object_get(json_array_get(configs, i), "settings"), rr->keys[k]);

      rr->varying[k] = !first || !v || !json_equal(first, v);
    }
  }
  return 0;
}

/* The optional "expect" array (--expect, ff-expect.h). */
static int
load_expect(struct ff_runreport *rr, const json_t *doc)
{
  const json_t *arr;
  char p[PATH_LEN], q[PATH_LEN];

  if (get_typed(doc, "", "expect", true, true, &arr) < 0 || !arr)
    return 0;
  rr->nexpect = json_array_size(arr);
  if (!rr->nexpect)
    return 0;
  rr->expect = calloc(rr->nexpect, sizeof *rr->expect);
  if (!rr->expect)
    return ff_rr_oom();
  for (size_t i = 0; i < rr->nexpect; i++) {
    struct ff_rr_expect *x = &rr->expect[i];
    const json_t *e = element(arr, i, "", "expect", p), *evs;

    if (!e || get_str(e, p, "expression", false, &x->expression) < 0 ||
        get_str(e, p, "result", false, &x->result) < 0 ||
        get_typed(e, p, "evaluations", false, true, &evs) < 0)
      return -1;
    if (strcmp(x->result, "holds") && strcmp(x->result, "fails") &&
        strcmp(x->result, "not judged"))
      return ff_error("%s.result: \"%s\" is not \"holds\", \"fails\" or "
                      "\"not judged\"",
                      p, x->result);
    x->nevals = json_array_size(evs);
    if (!x->nevals)
      return ff_error("%s.evaluations: empty", p);
    x->evals = calloc(x->nevals, sizeof *x->evals);
    if (!x->evals)
      return ff_rr_oom();
    for (size_t k = 0; k < x->nevals; k++) {
      struct ff_rr_expect_eval *v = &x->evals[k];
      const json_t *ej = element(evs, k, p, "evaluations", q);
      const json_t *h;

      if (!ej || get_int(ej, q, "config", false, LLONG_MIN, &v->config) < 0 ||
          get_str(ej, q, "label", false, &v->label) < 0 ||
          get_str(ej, q, "text", true, &v->text) < 0 ||
          get_str(ej, q, "reason", true, &v->reason) < 0)
        return -1;
      h = json_object_get(ej, "holds");
      if (!h)
        return missing(q, "holds");
      if (!json_is_boolean(h) && !json_is_null(h))
        return mistyped(q, "holds", "true, false or null");
      v->holds = json_is_null(h) ? -1 : json_is_true(h);
      if (v->holds < 0 && !v->reason)
        return ff_error("%s: not judged (holds null) without a \"reason\"", q);
      if (v->holds >= 0 && !v->text)
        return missing(q, "text");
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
      get_str(doc, "", "finished", true, &rr->finished) < 0 ||
      get_str(doc, "", "error", true, &rr->error) < 0)
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
      return ff_rr_oom();
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
    return ff_rr_oom();
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const json_t *e = element(configs, i, "", "configs", p);

    if (!e || load_config(&rr->configs[i], e, p) < 0)
      return -1;
    for (size_t k = 0; k < i; k++)
      if (rr->configs[k].id == rr->configs[i].id)
        return ff_error("%s: id %lld is also configs[%zu]'s", p,
                        rr->configs[i].id, k);
  }
  if (load_expect(rr, doc) < 0)
    return -1;
  return collect_keys(rr, configs);
}

/* The model and the parsed document its strings point into. */
struct rr_owner {
  struct ff_runreport rr; /* first: ff_runreport_free casts back */
  json_t *doc;
};

struct ff_runreport *
ff_runreport_load_text(const char *json, size_t len, const char *name)
{
  struct rr_owner *o;
  json_error_t jerr;

  if (!json) {
    ff_error("%s%srun document: no text", name ? name : "", name ? ": " : "");
    return NULL;
  }
  o = calloc(1, sizeof *o);
  if (!o) {
    ff_rr_oom();
    return NULL;
  }
  o->rr.cpus = -1;
  o->rr.device_mapper = -1;
  o->doc = json_loadb(json, len, 0, &jerr);
  if (!o->doc) {
    if (name)
      ff_error("%s:%d:%d: not valid JSON: %s", name, jerr.line, jerr.column,
               jerr.text);
    else
      ff_error("not valid JSON at line %d, column %d: %s", jerr.line,
               jerr.column, jerr.text);
    free(o);
    return NULL;
  }
  if (load_top(&o->rr, o->doc) < 0) {
    if (name)
      ff_error_prefix("%s: ", name);
    ff_runreport_free(&o->rr);
    return NULL;
  }
  return &o->rr;
}

/* All of f into *text (malloc'd, *len bytes).  0; -1 with errno set when
 * reading fails; -2 when out of memory. */
static int
read_all(FILE *f, char **text, size_t *len)
{
  FILE *mem = open_memstream(text, len);
  char buf[65536];
  bool full = false;
  size_t n;
  int r = 0;

  if (!mem)
    return -2;
  while (!full && (n = fread(buf, 1, sizeof buf, f)) > 0)
    full = fwrite(buf, 1, n, mem) != n;
  if (ferror(f)) {
    if (!errno)
      errno = EIO;
    r = -1;
  }
  if (fclose(mem) != 0 || full)
    r = r ? r : -2;
  if (r) {
    free(*text);
    *text = NULL;
  }
  return r;
}

struct ff_runreport *
ff_runreport_load_file(const char *path)
{
  struct ff_runreport *rr;
  int fd = ff_open_regular(path, NULL);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
  char *text = NULL;
  size_t len = 0;
  int r;

  if (!f) {
    if (fd >= 0) {
      ff_error("%s: %m", path);
      close(fd);
    }
    return NULL;
  }
  errno = 0;
  r = read_all(f, &text, &len);
  if (r == -1)
    ff_error("%s: %m", path);
  else if (r == -2)
    ff_rr_oom();
  fclose(f);
  if (r)
    return NULL;
  rr = ff_runreport_load_text(text, len, path);
  free(text);
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
      for (size_t k = 0; k < c->workloads[j].nruns; k++)
        free(c->workloads[j].runs[k].io_devs);
      free(c->workloads[j].runs);
      free(c->workloads[j].units);
    }
    free(c->workloads);
    free(c->slow_devices);
    for (size_t j = 0; j < c->nsettings; j++)
      free((char *)c->settings[j].text);
    free(c->settings);
  }
  for (size_t i = 0; i < rr->nexpect; i++)
    free(rr->expect[i].evals);
  free(rr->expect);
  free(rr->configs);
  free(rr->notes);
  free(rr->keys);
  free(rr->varying);
  json_decref(((struct rr_owner *)rr)->doc);
  free(rr);
}

/* --- small helpers shared by the renderers --------------------------- */

static bool
listed(const char *const *names, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (!strcmp(names[i], name))
      return true;
  return false;
}

int
ff_runreport_slow_units(const struct ff_rr_config *c,
                        const struct ff_rr_workload *w, bool **out, size_t *n)
{
  const char **vgs = NULL; /* the VGs of the slow devices' pvscans */
  size_t nvgs = 0;

  *out = NULL;
  *n = 0;
  if (!c->slow_profile || !w->nunits)
    return 0;
  if (!(*out = calloc(w->nunits, sizeof **out)) ||
      !(vgs = calloc(w->nunits, sizeof *vgs))) {
    free(*out);
    *out = NULL;
    return ff_rr_oom();
  }
  for (size_t i = 0; i < w->nunits; i++) {
    const struct ff_rr_unit *u = &w->units[i];

    if (u->kind != FF_RR_PVSCAN ||
        !listed(c->slow_devices, c->nslow, u->device))
      continue;
    (*out)[i] = true;
    if (u->vg && !listed(vgs, nvgs, u->vg))
      vgs[nvgs++] = u->vg;
  }
  for (size_t i = 0; i < w->nunits; i++) {
    const struct ff_rr_unit *u = &w->units[i];

    if (u->kind == FF_RR_VGCHANGE && listed(vgs, nvgs, u->vg))
      (*out)[i] = true;
    *n += (*out)[i];
  }
  free(vgs);
  return 0;
}

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
    ff_rr_oom();
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
    ff_rr_oom();
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
ff_runreport_io_chart_path(const char *svg_path)
{
  return ff_runreport_sibling(svg_path, ".svg", "-io.svg");
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
    ff_rr_oom();
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

const struct ff_rr_workload *
ff_runreport_find_workload(const struct ff_rr_config *c, const char *name)
{
  for (size_t i = 0; i < c->nworkloads; i++)
    if (!strcmp(c->workloads[i].name, name))
      return &c->workloads[i];
  return NULL;
}

const struct ff_rr_setting *
ff_runreport_setting(const struct ff_rr_config *c, const char *key)
{
  for (size_t i = 0; i < c->nsettings; i++)
    if (!strcmp(c->settings[i].key, key))
      return &c->settings[i];
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
    ff_rr_oom();
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

/* A settings value as text: strings as they are, numbers and booleans as
 * JSON writes them, "" for NULL. */
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

void
ff_rr_setting_text(const struct ff_rr_config *c, const char *key, char *buf,
                   size_t len)
{
  const struct ff_rr_setting *s = ff_runreport_setting(c, key);

  snprintf(buf, len, "%s", s ? s->text : "");
}
