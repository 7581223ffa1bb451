/* fusefarm: one workload of a configuration, all its repetitions, and
 * its result (ff-workload.h): the single lvm commands and lvchange here,
 * event activation in ff-workload-event.c, io and fs in ff-workload-io.c,
 * starting and timing commands in ff-workload-cmd.c; and a
 * configuration's label and settings.  No threads. */
#include "ff-workload-int.h"

#include "ff-error.h"
#include "ff-fio.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one workload ------------------------------------------------------- */

/* A single timed command: pvs, vgs, lvs, pvscan --cache, vgchange -aay. */
static int
simple_command(const struct ff_wenv *e, enum ff_wtype t, const char **argv,
               const char **cmd)
{
  int a = 1;

  switch (t) {
  case FF_W_PVS:
    argv[a++] = "pvs";
    *cmd = "lvm pvs";
    break;
  case FF_W_VGS:
    argv[a++] = "vgs";
    *cmd = "lvm vgs";
    break;
  case FF_W_LVS:
    argv[a++] = "lvs";
    *cmd = "lvm lvs";
    break;
  case FF_W_PVSCAN_CACHE:
    argv[a++] = "pvscan";
    argv[a++] = "--cache";
    *cmd = "lvm pvscan --cache";
    break;
  default:
    argv[a++] = "vgchange";
    argv[a++] = "-aay";
    *cmd = "lvm vgchange -aay";
    if (e->no_dm) {
      argv[a++] = "--driverloaded";
      argv[a++] = "n";
      *cmd = "lvm vgchange -aay --driverloaded n";
    }
    break;
  }
  argv[a] = NULL;
  return a;
}

static int
lvchange_runs(const struct ff_wenv *e, const struct ff_workload *w,
              const char *tag, struct ff_wrep *r)
{
  const char *lv = w->lv ? w->lv : e->first_lv;
  json_t *cmds;

  if (!lv)
    return ff_error("workload %s: the farm has no LV to change", w->name);
  cmds = json_array();
  for (unsigned k = 0; k < w->count && !ff_w_stopping(e); k++) {
    const char *argv[] = {NULL, "lvchange", "-ay", lv, NULL, NULL, NULL};
    double t;
    int ex;

    if (e->no_dm) {
      argv[3] = "--driverloaded";
      argv[4] = "n";
      argv[5] = lv;
    }
    ex = ff_w_time_lvm(e, argv, &t, tag);
    if (ex < 0) {
      json_decref(cmds);
      return -1;
    }
    r->wall += t;
    if (ex > r->worst)
      r->worst = ex;
    if (ex && !r->errors++) {
      char err[PATH_MAX + 64];

      ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, tag);
      ff_w_error_line_of(err, ex, r->msg, sizeof r->msg);
    }
    json_array_append_new(cmds, json_real(t));
  }
  json_object_set_new(r->run, "commands", cmds);
  json_object_set_new(r->run, "lv", json_string(lv));
  return 0;
}

static void
summarize(const struct ff_wenv *e, const struct ff_workload *w, json_t *wl,
          json_t *runs, double *walls, const char *cmd, long long reads)
{
  size_t nr = json_array_size(runs);
  double mn = INFINITY, mx = 0;

  for (size_t i = 0; i < nr; i++) {
    mn = walls[i] < mn ? walls[i] : mn;
    mx = walls[i] > mx ? walls[i] : mx;
  }
  json_object_set_new(wl, "name", json_string(w->name));
  json_object_set_new(wl, "type", json_string(ff_wtype_name(w->type)));
  json_object_set_new(wl, "command", json_string(cmd));
  json_object_set_new(wl, "repeat", json_integer(w->repeat));
  json_object_set_new(wl, "runs", runs);
  if (!nr)
    return;
  json_object_set_new(wl, "min", json_real(mn));
  json_object_set_new(wl, "median", json_real(ff_median(walls, nr)));
  json_object_set_new(wl, "max", json_real(mx));
  char rd[48] = "";

  if (reads >= 0)
    snprintf(rd, sizeof rd, ", %lld reads", reads);
  ff_w_emit(e, 0,
            "    %-20s median %.3f s (min %.3f, max %.3f) over %zu run%s%s",
            w->name, json_real_value(json_object_get(wl, "median")), mn, mx,
            nr, nr > 1 ? "s" : "", rd);
}

struct ff_wresult {
  json_t *wl; /* the "workloads" entry */
};

struct ff_wresult *
ff_wresult_new(void)
{
  struct ff_wresult *res = calloc(1, sizeof *res);

  if (res)
    res->wl = json_object();
  if (!res || !res->wl) {
    free(res);
    ff_error("workload result: out of memory");
    return NULL;
  }
  return res;
}

void
ff_wresult_free(struct ff_wresult *res)
{
  if (!res)
    return;
  json_decref(res->wl);
  free(res);
}

long long
ff_wresult_failed(const struct ff_wresult *res, const char **message)
{
  json_t *runs = json_object_get(res->wl, "runs"), *run;
  long long n = 0;
  size_t i;

  if (message)
    *message = "";
  json_array_foreach(runs, i, run)
  {
    const char *m = json_string_value(json_object_get(run, "message"));

    n += json_integer_value(json_object_get(run, "errors"));
    if (message && m && !**message)
      *message = m;
  }
  return n;
}

size_t
ff_wresult_nruns(const struct ff_wresult *res)
{
  return json_array_size(json_object_get(res->wl, "runs"));
}

char *
ff_wresult_json_text(const struct ff_wresult *res)
{
  char *text = json_dumps(res->wl, JSON_COMPACT);

  if (!text)
    ff_error("workload result: out of memory");
  return text;
}

int
ff_workload_run(const struct ff_wenv *e, const struct ff_workload *w0,
                struct ff_wresult *res)
{
  /* w0 with the configuration's target, fstype and mount options */
  struct ff_workload wv = *w0;
  const struct ff_workload *w = &wv;
  json_t *runs = json_array(), *devs = NULL, *acts = NULL, *wl;
  double *walls = calloc(w->repeat, sizeof *walls);
  long long reads = 0, bytes = 0;
  struct ff_wcounters tot = {0};
  int have_tot = 0;
  const char *cmd = "";
  char iocmd[512];
  int rc = 0;

  if ((w->type == FF_W_IO || w->type == FF_W_FS) && e->target)
    wv.io.target = (char *)e->target;
  if (w->type == FF_W_FS && e->fstype)
    wv.io.fstype = (char *)e->fstype;
  if (w->type == FF_W_FS && e->mount_options)
    wv.io.mount_options = (char *)e->mount_options;
  if (w->type == FF_W_FS && e->fs_tunables)
    wv.io.fs_tunables = (char *)e->fs_tunables;
  json_object_clear(res->wl);
  wl = res->wl;
  if (!walls || !runs) {
    free(walls);
    json_decref(runs);
    return ff_error("out of memory");
  }
  if (w->type == FF_W_EVENT_ACTIVATION && e->dialect == FF_DIALECT_NONE) {
    free(walls);
    json_decref(runs);
    return ff_error("workload %s: this lvm ran no event activation (2.02 "
                    "without lvmetad)",
                    w->name);
  }
  if (ff_io_target_check(w, e->no_dm) < 0) {
    free(walls);
    json_decref(runs);
    return -1;
  }
  for (unsigned rep = 0; rep < w->repeat && !rc; rep++) {
    struct ff_wrep r = {0};
    char tag[64];

    if (ff_w_stopping(e)) {
      rc = ff_error("interrupted");
      break;
    }
    /* Each repetition starts cold: no online PVs, no hints. */
    ff_empty_dir(e->outdir);
    if (e->cold)
      e->cold(e->ctx);
    ff_pathf(tag, sizeof tag, "%s-%u", w->name, rep);
    ff_w_emit(e, 1, "    %s %u/%u", w->name, rep + 1, w->repeat);
    r.run = json_object();
    switch (w->type) {
    case FF_W_LVCHANGE:
      cmd = e->no_dm ? "lvm lvchange -ay --driverloaded n VG/LV"
                     : "lvm lvchange -ay VG/LV";
      rc = lvchange_runs(e, w, tag, &r);
      break;
    case FF_W_IO:
      ff_fio_describe(&w->io, iocmd, sizeof iocmd);
      cmd = iocmd;
      rc = ff_w_io_run(e, w, tag, &r);
      break;
    case FF_W_FS:
      ff_fio_describe(&w->io, iocmd, sizeof iocmd);
      cmd = iocmd;
      rc = ff_w_fs_run(e, w, tag, &r);
      break;
    case FF_W_EVENT_ACTIVATION:
      cmd = ff_event_command(e->dialect, e->no_dm);
      json_decref(devs);
      json_decref(acts);
      devs = json_array();
      acts = json_array();
      rc = ff_w_event_activation(e, w, devs, acts, &r);
      break;
    default: {
      const char *argv[8];

      simple_command(e, w->type, argv, &cmd);
      r.worst = ff_w_time_lvm(e, argv, &r.wall, tag);
      r.errors = r.worst != 0;
      if (r.worst < 0) {
        rc = -1;
      } else if (r.worst > 0) {
        char err[PATH_MAX + 64];

        ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, tag);
        ff_w_error_line_of(err, r.worst, r.msg, sizeof r.msg);
      }
      break;
    }
    }
    if (e->reads)
      e->reads(e->ctx, &reads, &bytes);
    have_tot = e->counters && e->counters(e->ctx, NULL, &tot) == 0;
    json_object_set_new(r.run, "wall", json_real(r.wall));
    json_object_set_new(r.run, "exit", json_integer(r.worst));
    json_object_set_new(r.run, "errors", json_integer(r.errors));
    /* What the first failed command said (not lvm's warnings). */
    if (r.errors && r.msg[0])
      json_object_set_new(r.run, "message", json_string(r.msg));
    /* What the farm served during this repetition (--expect's bytes()). */
    if (e->reads) {
      json_object_set_new(r.run, "reads", json_integer(reads));
      json_object_set_new(r.run, "bytes_read", json_integer(bytes));
    }
    if (have_tot) {
      json_object_set_new(r.run, "writes", json_integer(tot.writes));
      json_object_set_new(r.run, "bytes_written",
                          json_integer(tot.bytes_written));
      json_object_set_new(r.run, "flushes", json_integer(tot.flushes));
    }
    json_array_append_new(runs, r.run);
    walls[rep] = r.wall;
    if (r.errors && !rc)
      ff_w_emit(e, 0, "    %s: %d failed command%s, exit %d (%s)", w->name,
                r.errors, r.errors == 1 ? "" : "s", r.worst,
                r.msg[0] ? r.msg : "(no message)");
  }
  summarize(e, w, wl, runs, walls, cmd, e->reads ? reads : -1);
  if (e->reads) {
    json_object_set_new(wl, "reads", json_integer(reads));
    json_object_set_new(wl, "bytes_read", json_integer(bytes));
  }
  if (have_tot) {
    json_object_set_new(wl, "writes", json_integer(tot.writes));
    json_object_set_new(wl, "bytes_written", json_integer(tot.bytes_written));
    json_object_set_new(wl, "flushes", json_integer(tot.flushes));
  }
  if (w->type == FF_W_IO || w->type == FF_W_FS)
    json_object_set_new(wl, "target", json_string(w->io.target));
  if (devs) {
    json_object_set_new(wl, "devices", devs);
    json_object_set_new(wl, "activations", acts);
  }
  free(walls);
  return rc;
}

/* ---- configurations ----------------------------------------------------- */

void
ff_config_label(const struct ff_scenario *sc, const unsigned *idx, char *buf,
                size_t len)
{
  size_t used = 0;

  if (!len)
    return;
  buf[0] = '\0';
  for (unsigned a = 0; a < sc->naxes && used + 1 < len; a++) {
    const struct ff_axis *ax = &sc->axes[a];
    const struct ff_sval *v = &ax->values[idx[a]];
    const char *slash = strchr(ax->key, '/');
    const char *shortk = slash ? slash + 1 : ax->key;
    int n;

    if (v->is_str) {
      const char *b = strrchr(v->s, '/');

      n = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", shortk,
                   b ? b + 1 : v->s);
    } else {
      n = snprintf(buf + used, len - used, "%s%s=%lld", used ? " " : "",
                   shortk, (long long)v->i);
    }
    if (n < 0)
      break;
    used += (size_t)n;
    if (used >= len)
      used = len - 1;
  }
  if (!buf[0])
    snprintf(buf, len, "default");
}

char *
ff_config_settings(const struct ff_scenario *sc, const unsigned *idx)
{
  json_t *settings = json_object();
  char *text;

  for (unsigned a = 0; settings && a < sc->naxes; a++) {
    const struct ff_sval *v = &sc->axes[a].values[idx[a]];
    /* A profile path is shown by its file name; the config's "profile"
     * member keeps the whole path. */
    const char *str = v->is_str &&
                          !strcmp(sc->axes[a].key, "fusefarm/profile") &&
                          strrchr(v->s, '/')
                        ? strrchr(v->s, '/') + 1
                        : v->s;

    json_object_set_new(settings, sc->axes[a].key,
                        v->is_str ? json_string(str) : json_integer(v->i));
  }
  text = settings ? json_dumps(settings, JSON_COMPACT) : NULL;
  json_decref(settings);
  if (!text)
    ff_error("config settings: out of memory");
  return text;
}
