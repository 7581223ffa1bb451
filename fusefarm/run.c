/* fusefarm: `fusefarm run`, the scenario runner.
 *
 * For a scenario (docs/scenario-format.md) it mounts the farm with
 * `fusefarm mount`, attaches it with `fusefarm attach`, and for every
 * configuration of the matrix writes a private lvm.conf, switches the I/O
 * profile, optionally starts the aio companion, and times each workload
 * with real lvm commands.  The result is the run document
 * (docs/run-json.md), printed as a table with its verdict; the document,
 * the same report as text and the charts go into one run directory
 * (./fusefarm-run-NAME-YYYYmmdd-HHMMSS/ or --out DIR), and --json, --csv,
 * --svg FILE write them to paths of their own instead (ff-report.h).
 *
 * Safety (the reason most of this file exists):
 * - The runner enters a private mount namespace before anything else:
 *   /run/lvm and /run/lock/lvm are bind mounts of its scratch directory,
 *   so pvscan --cache, hints, pvs_online and locks never touch the host's.
 *   The farm's FUSE mount lives in that namespace too.
 * - Once the farm is attached, /dev in that namespace is a private one
 *   (runner/ff-privdev.h): the basic nodes and the farm's devices only,
 *   named as the PVs' metadata hints say.  lvm sees N disks and nothing
 *   of the host's; it is unmounted while mount, attach and detach run.
 * - Every lvm command gets LVM_SYSTEM_DIR = the scratch etc/ directory,
 *   written by runner/ff-fence.h with the configuration's fence: none
 *   (the default, allowed only with the private /dev: lvm.conf holds the
 *   scenario's settings alone), devicesfile or devicesfile-all (a
 *   devices file that names exactly the farm's devices and exists before
 *   the first call; with devices/use_devicesfile = 0, or an lvm without a
 *   devices file, the filter form), devicesfile-used (the same naming only
 *   the PVs of the VGs the workloads use, as a user's host would: the
 *   other farm devices stay in /dev, unlisted) or filter (a global_filter
 *   and filter accepting only the farm's devices).
 * - Teardown always runs (normal end, failure, SIGINT/SIGTERM/SIGHUP):
 *   children are killed, the aio companion stopped, the private /dev
 *   unmounted, exactly the loops attach attached are detached (and the
 *   loop devices it created deleted), the farm is unmounted, scratch
 *   removed.
 * - A runner that dies without its teardown (SIGKILL, the OOM killer) is
 *   covered by its watchdog: a child forked right after the runner enters
 *   its namespace, living there, ignoring SIGINT/SIGTERM/SIGHUP, in a
 *   process group of its own, blocked on a pidfd of the runner.  When the
 *   runner has gone without removing its registry entry, the watchdog
 *   tears the farm down as `fusefarm cleanup` would (farm-registry.h):
 *   every other process of the namespace stopped (the daemon by its
 *   SIGTERM path, after the loops), the private /dev uncovered, the loops
 *   detached, the farm unmounted, scratch and entry removed; then it
 *   exits and the namespace goes with its last process.  Chosen over
 *   PR_SET_PDEATHSIG in each child: the daemon is nobody's child (it
 *   daemonizes), the loops need someone to detach them, and the lvm
 *   commands start by posix_spawn, which cannot set it.  The farm is in
 *   the registry (REGISTRY_DIR) from before the namespace is made, so
 *   when the watchdog is killed too (kill -9 of both), `fusefarm detach
 *   MNT` still finds the state and `fusefarm cleanup` the rest.
 *
 * Threads: none; children are processes (ff-spawn.h), each waited for by
 * its own pid.  Event-style activation (ff-workload.c) keeps up to
 * `concurrency` lvm processes running and starts each arrival on time.
 */

#include "run-int.h"

static volatile sig_atomic_t stop_requested;

static void
on_signal(int sig)
{
  (void)sig;
  stop_requested = 1;
}

void
run_say(struct run *r, const char *fmt, ...)
{
  va_list ap;

  if (r->quiet)
    return;
  if (r->tty)
    fputs("\r\033[K", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* A progress line that rewrites itself on a terminal, and is not printed
 * at all otherwise (the plain `say` lines mark the steps). */
void
run_progress(struct run *r, const char *fmt, ...)
{
  va_list ap;

  if (r->quiet || !r->tty)
    return;
  fputs("\r\033[K", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
}

/* ---- processes --------------------------------------------------------- */

/* lvm's environment, as ff-spawn.h pairs: the scratch etc/ (its lvm.conf
 * and devices file), no fd warnings, times in UTC. */
void
lvm_env(struct run *r, const char *env[LVM_ENV_LEN])
{
  env[0] = "LVM_SYSTEM_DIR";
  env[1] = r->etc;
  env[2] = "LVM_SUPPRESS_FD_WARNINGS";
  env[3] = "1";
  env[4] = "TZ";
  env[5] = "UTC";
  env[6] = NULL;
  /* Real device-mapper in the private /dev: libdevmapper makes the nodes
   * there itself, and its cookie tells the host's udev rules to leave
   * /dev/mapper and /dev/VG alone (DM_UDEV_DISABLE_DM_RULES_FLAG,
   * DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG). */
  if (r->dm_real && !r->dm_udev) {
    env[6] = "DM_DISABLE_UDEV";
    env[7] = "1";
    env[8] = NULL;
  }
}

pid_t
spawn(struct run *r, const char *const argv[], const char *out,
      const char *err, int lvm)
{
  const char *env[LVM_ENV_LEN];

  lvm_env(r, env);
  return ff_spawn(argv, out, err, lvm ? env : NULL);
}

/* Run and wait; returns the exit status (127: could not exec). */
int
run_wait(struct run *r, const char *const argv[], const char *out,
         const char *err, int lvm)
{
  pid_t pid = spawn(r, argv, out, err, lvm);

  return pid < 0 ? -1 : ff_wait_status(pid);
}

/* ---- the namespace ------------------------------------------------------ */

/* Enter a private mount namespace in which /run/lvm and /run/lock/lvm are
 * the scratch dir's own (runner/ff-runns.h). */
static int
enter_namespace(struct run *r)
{
  char lock[PATH_MAX + 16];

  ff_pathf(lock, sizeof lock, "%s/lock", r->scratch);
  return ff_runns_enter(&ff_runns_real, r->rundir, lock);
}

/* Write path to the daemon's profile control file. */
static int
set_profile(struct run *r, const char *path)
{
  if (ff_ctl_write(r->mnt, "profile", path) < 0)
    return ff_error_prefix("profile %s: ", path);
  return 0;
}

static void
control(struct run *r, const char *cmd)
{
  if (ff_ctl_write(r->mnt, "control", cmd) < 0)
    fprintf(stderr, "fusefarm run: %s: %s\n", cmd, ff_errmsg());
}

/* reads and bytes read since the last reset */
static void
farm_reads(struct run *r, long long *reads, long long *bytes)
{
  char path[PATH_MAX + 32];
  json_t *st, *tot;

  ff_pathf(path, sizeof path, "%s/.fusefarm/stats.json", r->mnt);
  st = json_load_file(path, 0, NULL);
  tot = json_object_get(st, "totals");
  *reads = json_integer_value(json_object_get(tot, "reads"));
  *bytes = json_integer_value(json_object_get(tot, "bytes_read"));
  json_decref(st);
}

/* ---- configurations ------------------------------------------------------
 */

struct config {
  uint64_t index;
  unsigned *idx;
  const char *profile; /* path, builtin:..., or NULL (ideal) */
  int aio;
  unsigned aio_inflight;
  uint64_t devices;
  const char *spec;  /* the farm's spec: path, builtin:..., NULL (default) */
  const char *fence; /* "none", "devicesfile", "devicesfile-used", ... */
  /* fusefarm/target, fusefarm/fstype, fusefarm/mount_options,
   * fusefarm/fs_tunables (NULL:
   * each workload's own) */
  const char *target, *fstype, *mount_options, *fs_tunables;
  const char *dm; /* fusefarm/dm: "auto", "real", "none" */
  int udev_sync;  /* the matrix's activation/udev_sync (0: none given) */
  const struct ff_lvm_build *lvm;
  char label[1024];
};

/* Two specs the same farm: both NULL (the built-in one) or one path. */
static int
same_spec(const char *a, const char *b)
{
  return a == b || (a && b && !strcmp(a, b));
}

static void
config_resolve(struct run *r, uint64_t k, struct config *c)
{
  const struct ff_scenario *sc = r->sc;

  c->index = k;
  ff_scenario_config(sc, k, c->idx);
  c->profile = sc->profile;
  c->aio = 0;
  c->aio_inflight = sc->aio_inflight;
  c->devices = sc->devices;
  c->spec = sc->spec;
  c->fence = sc->fence;
  c->target = c->fstype = c->mount_options = c->fs_tunables = NULL;
  c->dm = r->dm_override ? r->dm_override : sc->dm;
  c->udev_sync = 0;
  for (unsigned a = 0; a < sc->naxes; a++) {
    const struct ff_axis *ax = &sc->axes[a];
    const struct ff_sval *v = &ax->values[c->idx[a]];

    if (!strcmp(ax->key, "fusefarm/profile"))
      c->profile = strcmp(v->s, "ideal") ? v->s : NULL;
    else if (!strcmp(ax->key, "fusefarm/aio_contention"))
      c->aio = (int)v->i;
    else if (!strcmp(ax->key, "fusefarm/aio_inflight"))
      c->aio_inflight = (unsigned)v->i;
    else if (!strcmp(ax->key, "fusefarm/devices"))
      c->devices = (uint64_t)v->i;
    else if (!strcmp(ax->key, "fusefarm/spec"))
      c->spec = v->s;
    else if (!strcmp(ax->key, "fusefarm/fence"))
      c->fence = v->s;
    else if (!strcmp(ax->key, "fusefarm/target"))
      c->target = v->s;
    else if (!strcmp(ax->key, "fusefarm/fstype"))
      c->fstype = v->s;
    else if (!strcmp(ax->key, "fusefarm/mount_options"))
      c->mount_options = v->s;
    else if (!strcmp(ax->key, "fusefarm/fs_tunables"))
      c->fs_tunables = v->s;
    else if (!strcmp(ax->key, "fusefarm/dm"))
      c->dm = v->s;
    else if (!strcmp(ax->key, "activation/udev_sync") && !v->is_str)
      c->udev_sync = v->i != 0;
  }
  ff_config_label(sc, c->idx, c->label, sizeof c->label);
  /* This configuration's lvm: its binary, version (fence caps, dialect)
   * and lvmetad. */
  c->lvm = ff_lvm_set_for(&r->lvms, c->idx);
  r->lvm_path = c->lvm->path;
  ff_pathf(r->lvm_version, sizeof r->lvm_version, "%s", c->lvm->version);
}

/* The devices file attach wrote names the loops of the host's /dev: name
 * each as lvm sees it now (its node in the private /dev), in the devices
 * file's DEVNAME and in a filter alike. */
static int
fence_devnames(struct run *r, struct ff_fence_devlist *l)
{
  for (size_t i = 0; i < l->n; i++)
    for (uint32_t k = 0; k < r->fv.ndevs; k++)
      if (r->fv.loops[k] && r->fv.paths[k] && l->v[i].devname &&
          !strcmp(l->v[i].devname, r->fv.loops[k])) {
        char *p = strdup(r->fv.paths[k]);

        if (!p)
          return ff_error("out of memory");
        free((char *)l->v[i].devname);
        l->v[i].devname = p;
        break;
      }
  return 0;
}

/* Fence devicesfile-used: keep in l only the PVs of the VGs c's
 * workloads use (ff_fence_used_vgs), each found by its node (after
 * fence_devnames) among the farm's devices; the others stay in /dev. */
static int
fence_keep_used(struct run *r, const struct config *c,
                struct ff_fence_devlist *l)
{
  struct ff_fence_vgs used;
  size_t kept = 0;

  if (ff_fence_used_vgs(r->sc, r->fv.first_lv, c->target, &used) < 0)
    return -1;
  for (size_t i = 0; i < l->n; i++) {
    const char *vg = NULL;

    for (uint32_t k = 0; r->fv.vg && k < r->fv.ndevs; k++)
      if (r->fv.paths[k] && !strcmp(l->v[i].devname, r->fv.paths[k])) {
        vg = r->fv.vg[k];
        break;
      }
    if (ff_fence_vgs_lists(&used, vg)) {
      l->v[kept++] = l->v[i];
      continue;
    }
    free((char *)l->v[i].devname);
    free((char *)l->v[i].backing);
    free((char *)l->v[i].pvid);
  }
  l->n = kept;
  ff_fence_vgs_free(&used);
  return 0;
}

/* Append text to notes unless an equal note is there already. */
static void
note_once(json_t *notes, const char *text)
{
  size_t i;
  json_t *n;

  json_array_foreach(notes, i, n)
  {
    if (!strcmp(json_string_value(n), text))
      return;
  }
  json_array_append_new(notes, json_string(text));
}

/* LVM_SYSTEM_DIR of configuration c (runner/ff-fence.h): the fence, the
 * matrix's lvm settings, and the loops of the devices file attach wrote
 * (with their backing files and PVIDs); it exists before the first lvm
 * call of every configuration.  The same lvm.conf text as the guest's of
 * `fusefarm vm` for this configuration (in the filter form, where the
 * loops are named in lvm.conf, all but the filter lines). */
static int
write_lvm_conf(struct run *r, const struct config *c, json_t *notes)
{
  struct ff_fence_devlist loops = {NULL, 0};
  struct ff_fence_setting *set = NULL;
  struct ff_fence f = {.caps = c->lvm->caps};
  char path[PATH_MAX + 64], title[512];
  char *left = NULL;
  size_t nset;
  int rc = -1;

  if (ff_fence_mode_parse(c->fence, &f.mode) < 0)
    return -1;
  if (f.mode == FF_FENCE_MODE_NONE && !r->privdev_up)
    return ff_error("fence none without a private /dev: refused (lvm would "
                    "see the host's disks)");
  ff_pathf(path, sizeof path, "%s/lvm/devices/system.devices", r->state);
  r->fence_listed = r->fence_present = -1;
  if (ff_fence_read_devices(path, &loops) < 0 ||
      fence_devnames(r, &loops) < 0 ||
      ff_fence_scenario_settings(r->sc, c->index, &set, &nset) < 0)
    goto out;
  if (f.mode != FF_FENCE_MODE_NONE) {
    r->fence_present = (long)loops.n;
    if (f.mode == FF_FENCE_MODE_DEVICESFILE_USED &&
        fence_keep_used(r, c, &loops) < 0)
      goto out;
    r->fence_listed = (long)loops.n;
  }
  ff_pathf(title, sizeof title, "scenario %s, configuration %llu", r->sc->name,
           (unsigned long long)c->index + 1);
  f.restrict_devices = 1;
  f.devs = loops.v;
  f.ndevs = loops.n;
  f.settings = set;
  f.nsettings = nset;
  f.title = title;
  rc = ff_fence_write(r->etc, &f);
  r->dialect = ff_fence_dialect(&f);
  left = rc == 0 ? ff_fence_left_out(&f) : NULL;
  if (rc == 0 && !left)
    rc = -1;
  if (left && left[0]) {
    char note[2048];

    ff_pathf(note, sizeof note,
             "lvm %s does not know these settings; they were left out of its "
             "lvm.conf: %s",
             c->lvm->version, left);
    note_once(notes, note);
    run_say(r, "  %s", note);
  }
  if (rc == 0 && ff_fence_uses_filter(&f))
    note_once(notes,
              f.mode == FF_FENCE_MODE_DEVICESFILE_USED
                ? "fence devicesfile-used: a global_filter and filter "
                  "accepting only the PVs of the VGs the workloads use (this "
                  "lvm has no devices file, or the configuration turned it "
                  "off)"
                : "fence: a global_filter and filter accepting only the "
                  "farm's devices (this lvm has no devices file, or the "
                  "configuration turned it off)");
out:
  free(left);
  free(set);
  ff_fence_devlist_free(&loops);
  return rc;
}

/* ---- workloads (ff-workload.c runs them) ----------------------------------
 */

/* Each repetition starts cold: no online PVs, no hints, fresh counters. */
static void
wenv_cold(void *ctx)
{
  struct run *r = ctx;

  run_flame_cold(r, 0);
  /* Real activation: what the last repetition activated goes first (with
   * the lvmetad it may need), untimed. */
  if (r->dm_real && dm_sweep(r, 1) < 0)
    run_say(r, "  device-mapper: %s", ff_errmsg());
  lvmetad_stop(r);
  ff_empty_dir(r->rundir);
  control(r, "reset");
  /* A fresh lvmetad: an empty cache, as at boot.  If it cannot start, the
   * pvscans fail and say so. */
  if (r->dialect == FF_DIALECT_LVMETAD && lvmetad_start(r) < 0)
    run_say(r, "  lvmetad: %s", ff_errmsg());
  run_flame_cold(r, 1);
}

static void
wenv_reads(void *ctx, long long *reads, long long *bytes)
{
  farm_reads(ctx, reads, bytes);
}

/* The farm's counters since the last reset: the totals (dev NULL) or
 * device dev's (0 everywhere when it did no I/O: the daemon lists only
 * devices with I/O). */
static int
wenv_counters(void *ctx, const char *dev, struct ff_wcounters *out)
{
  struct run *r = ctx;
  char path[PATH_MAX + 32];
  json_t *st, *o = NULL, *d;
  size_t i;

  memset(out, 0, sizeof *out);
  ff_pathf(path, sizeof path, "%s/.fusefarm/stats.json", r->mnt);
  st = json_load_file(path, 0, NULL);
  if (!st)
    return -1;
  if (!dev)
    o = json_object_get(st, "totals");
  else
    json_array_foreach(json_object_get(st, "devices"), i, d)
    {
      const char *name = json_string_value(json_object_get(d, "name"));

      if (name && !strcmp(name, dev))
        o = d;
    }
  out->reads = json_integer_value(json_object_get(o, "reads"));
  out->bytes_read = json_integer_value(json_object_get(o, "bytes_read"));
  out->writes = json_integer_value(json_object_get(o, "writes"));
  out->bytes_written = json_integer_value(json_object_get(o, "bytes_written"));
  out->flushes = json_integer_value(json_object_get(o, "flushes"));
  json_decref(st);
  return 0;
}

static void
wenv_say(void *ctx, const char *line)
{
  run_say(ctx, "%s", line);
}

static void
wenv_progress(void *ctx, const char *line)
{
  run_progress(ctx, "%s", line);
}

/* Parse text, JSON that the runner library wrote (malloc'd; freed here;
 * NULL: the library's ff_error stands).  NULL with ff_error on failure. */
static json_t *
from_text(char *text, const char *what)
{
  json_error_t err;
  json_t *j;

  if (!text)
    return NULL;
  j = json_loads(text, 0, &err);
  free(text);
  if (!j)
    ff_error("%s: %s", what, err.text);
  return j;
}

/* Run one repetition of workload w (round: which, 0-based; --flamegraph
 * samples round 0's) and append its entry to wls (a workload interrupted
 * before its first run is left out). */
static int
run_workload(struct run *r, const struct config *c,
             const struct ff_workload *w, json_t *wls, unsigned round)
{
  const char *env[LVM_ENV_LEN];
  const struct ff_wenv e = {
    .lvm = r->lvm_path,
    .env = env,
    .outdir = r->outdir,
    .ndevs = r->fv.ndevs,
    .names = r->fv.names,
    .paths = r->fv.paths,
    .vgs = r->fv.vg,
    .first_lv = r->fv.first_lv,
    .no_dm = !r->dm_real,
    .target = c->target,
    .fstype = c->fstype,
    .mount_options = c->mount_options,
    .fs_tunables = c->fs_tunables,
    .dialect = r->dialect,
    .stop = &stop_requested,
    .cold = wenv_cold,
    .reads = wenv_reads,
    .counters = wenv_counters,
    .say = wenv_say,
    .progress = wenv_progress,
    .ctx = r,
  };

  struct ff_wresult *res = ff_wresult_new();
  struct ff_workload one = *w; /* a visit runs one repetition (run-plan.c) */
  json_t *wl;
  int rc;

  if (!res)
    return -1;
  lvm_env(r, env);
  one.repeat = 1;
  if (round == 0)
    run_flame_begin(r, (unsigned)c->index + 1, c->label, w->name);
  rc = ff_workload_run(&e, &one, res);
  if (round == 0)
    run_flame_end(r);
  {
    const char *msg;
    long long nf = ff_wresult_failed(res, &msg);

    if (nf > 0) {
      r->failed += nf;
      if (w->type == FF_W_IO || w->type == FF_W_FS)
        r->failed_io += nf;
      ff_sb_addf(&r->failures, "%sconfig %llu (%s) %s: %lld failed (%s)",
                 r->failures.len ? "; " : "", (unsigned long long)c->index + 1,
                 c->label, w->name, nf, msg[0] ? msg : "(no message)");
    }
  }
  if (ff_wresult_nruns(res)) {
    wl = from_text(ff_wresult_json_text(res), "workload result");
    if (!wl || json_array_append_new(wls, wl) < 0)
      rc = -1;
  }
  ff_wresult_free(res);
  return rc;
}

/* ---- the run ---------------------------------------------------------------
 */

/* The host, and the run's lvm builds: "lvm" and "lvm_version" name the
 * only one (with an lvm axis: lvm is null, lvm_version lists every
 * build's version), "lvms" each build as resolved; "device_mapper"
 * whether device-mapper answers here (ff_dm_usable, as activation asks
 * it). */
static json_t *
host_json(struct run *r)
{
  struct utsname u;
  struct ff_sb versions = {0};
  json_t *host, *lvms = json_array();

  for (unsigned i = 0; i < r->lvms.n; i++) {
    ff_sb_addf(&versions, "%s%s", i ? ", " : "", r->lvms.b[i].version);
    json_array_append_new(
      lvms, json_pack("{s:s, s:s, s:s, s:s}", "entry", r->lvms.b[i].entry,
                      "path", r->lvms.b[i].path, "version",
                      r->lvms.b[i].version, "label", r->lvms.b[i].label));
  }
  uname(&u);
  host =
    json_pack("{s:s, s:i, s:s?, s:s, s:s, s:b, s:o}", "kernel", u.release,
              "cpus", (int)sysconf(_SC_NPROCESSORS_ONLN), "lvm",
              r->lvms.n > 1 ? NULL : r->lvms.b[0].path, "lvm_version",
              ff_sb_failed(&versions) || !versions.buf ? "" : versions.buf,
              "fusefarm_version", FF_VERSION, "device_mapper", ff_dm_usable(),
              "lvms", lvms);
  ff_sb_release(&versions);
  return host;
}

static int
run_scenario(struct run *r, json_t *doc)
{
  const struct ff_scenario *sc = r->sc;
  uint64_t nconf = ff_scenario_nconfigs(sc);
  json_t *configs = json_array(), *notes = json_array();
  struct config c = {0};
  char latency_profile[PATH_MAX + 32] = "";
  struct run_sched *rs = run_sched_new(sc, doc);
  struct ff_plan_step st;
  int rc = 0, more = 0;

  c.idx = calloc(sc->naxes + 1, sizeof *c.idx);
  if (!c.idx || !configs || !notes || !rs)
    return rs ? ff_error("out of memory") : -1;
  json_object_set_new(doc, "configs", configs);
  json_object_set_new(doc, "notes", notes);
  json_array_append_new(
    notes,
    json_string(access("/run/udev/control", F_OK) < 0
                  ? "no udev runs here: obtain_device_list_from_udev=1 "
                    "falls back to scanning /dev, as lvm does when udev is "
                    "not running"
                  : "the host's udevd runs: obtain_device_list_from_udev=1 "
                    "would list the host's udev database, whose devices "
                    "other than the farm's have no node in the private /dev; "
                    "the runner's lvmlocal.conf sets it to 0 unless the "
                    "matrix sets it"));

  if (sc->farm) {
    char path[PATH_MAX + 32];
    FILE *f;

    ff_pathf(path, sizeof path, "%s/farm.conf", r->scratch);
    f = ff_fopen_write(path, "w");
    if (!f)
      return -1;
    if (fputs(sc->farm, f) == EOF || fclose(f) != 0)
      return ff_error("%s: %m", path);
    r->sc->spec = strdup(path);
    if (!r->sc->spec)
      return ff_error("out of memory");
  }
  if (sc->latency_ns) {
    FILE *f;

    ff_pathf(latency_profile, sizeof latency_profile, "%s/latency.conf",
             r->scratch);
    f = ff_fopen_write(latency_profile, "w");
    if (!f)
      return -1;
    fprintf(f,
            "name = \"latency-%lluns\";\ngroups = ({ devices = \"all\";\n"
            "  read = { dist = \"fixed\"; value = \"%lluns\"; };\n"
            "  write = { dist = \"fixed\"; value = \"%lluns\"; }; });\n",
            (unsigned long long)sc->latency_ns,
            (unsigned long long)sc->latency_ns,
            (unsigned long long)sc->latency_ns);
    fclose(f);
  }

  while (!rc && (more = run_sched_next(rs, r, &st)) > 0) {
    json_t *cj, *settings = json_object(), *wls = json_array();
    const char *profile;
    const uint64_t k = st.config;

    if (stop_requested) {
      rc = ff_error("interrupted");
      break;
    }
    config_resolve(r, k, &c);
    profile = c.profile            ? c.profile
              : latency_profile[0] ? latency_profile
                                   : "builtin:ideal";
    run_say(r, "[%llu/%llu] %s (round %u)", (unsigned long long)k + 1,
            (unsigned long long)nconf, c.label, st.round + 1);
    if ((!r->mounted || c.devices != r->devices ||
         !same_spec(c.spec, r->spec)) &&
        mount_farm(r, c.spec, c.devices) < 0) {
      rc = -1;
      json_decref(settings);
      json_decref(wls);
      break;
    }
    if (dm_resolve(r, c.dm, c.udev_sync) < 0 ||
        (r->dm_real && dm_check_clash(r) < 0)) {
      rc = -1;
      json_decref(settings);
      json_decref(wls);
      break;
    }
    note_once(notes,
              r->dm_real
                ? "activation created real device-mapper devices (dm = "
                  "real): DM_DISABLE_UDEV=1, so libdevmapper made their "
                  "nodes in the private /dev and told the host's udev rules "
                  "to leave /dev/mapper alone; no udev synchronisation was "
                  "timed; every repetition starts with the farm's devices "
                  "removed (vgchange -an, untimed)"
                : "activation ran with --driverloaded n (dm = none, or "
                  "auto on a kernel without device-mapper): vgchange and "
                  "lvchange do all of lvm's scanning and metadata work but "
                  "create no dm devices");
    if (r->dm_udev)
      note_once(notes,
                "activation/udev_sync = 1 with real device-mapper: lvm "
                "waited for the host's udevd to run its rules on every dm "
                "device it made (libdevmapper's cookie, completed by "
                "95-dm-notify.rules); the nodes are still libdevmapper's, "
                "in the private /dev (udev_rules = 0 unless the matrix "
                "sets it), so the host's /dev/mapper gets no link");
    /* A build that needs lvmetad and cannot start one stops the run here
     * (2.02 would quietly scan without it, in another dialect). */
    if (set_profile(r, profile) < 0 || write_lvm_conf(r, &c, notes) < 0 ||
        (r->dialect == FF_DIALECT_LVMETAD && lvmetad_start(r) < 0) ||
        (c.aio && aio_start(r, c.aio_inflight) < 0)) {
      rc = -1;
      json_decref(settings);
      json_decref(wls);
      break;
    }
    json_decref(settings);
    settings = from_text(ff_config_settings(sc, c.idx), "config settings");
    if (!settings) {
      rc = -1;
      json_decref(wls);
      break;
    }
    cj =
      json_pack("{s:I, s:s, s:o, s:{s:s, s:i, s:i, s:i, s:I}, s:s, s:b, s:o}",
                "id", (json_int_t)k + 1, "label", c.label, "settings",
                settings, "farm", "spec", c.spec ? c.spec : "<built-in>",
                "devices", (int)r->fv.ndevs, "vgs", (int)r->fv.nvgs, "lvs",
                (int)r->fv.nlvs, "transport_share_ns", (json_int_t)r->share_ns,
                "profile", profile, "aio_contention", c.aio, "workloads", wls);
    json_object_set_new(cj, "fence", json_string(c.fence));
    if (r->fence_listed >= 0)
      json_object_set_new(cj, "fence_devices",
                          json_pack("{s:I, s:I}", "listed",
                                    (json_int_t)r->fence_listed, "present",
                                    (json_int_t)r->fence_present));
    json_object_set_new(cj, "lvm",
                        json_pack("{s:s, s:s, s:s, s:s}", "path", c.lvm->path,
                                  "version", c.lvm->version, "label",
                                  c.lvm->label, "dialect",
                                  ff_lvm_dialect_name(r->dialect)));
    json_object_set_new(cj, "dev", dev_json(r));
    {
      json_t *slow = slow_json(r);

      if (slow)
        json_object_set_new(cj, "slow", slow);
      else
        run_say(r,
                "config %u: which devices the profile slows is not "
                "recorded (%s): its timeline marks none",
                (unsigned)k + 1, ff_errmsg());
    }
    run_sched_put(rs, configs, k, cj);
    for (unsigned w = 0; w < sc->nworkloads && !rc; w++) {
      const struct ff_workload *wk = &sc->workloads[w];

      if (!run_sched_runs(rs, &st, w))
        continue;
      if (wk->type == FF_W_EVENT_ACTIVATION && r->dialect == FF_DIALECT_NONE) {
        char note[1024];

        ff_pathf(note, sizeof note,
                 "config %llu (%s), %s: not applicable, left out: lvm %s "
                 "with use_lvmetad=0 ran no pvscan from udev (its boot "
                 "activation was vgchange -aay, lvm2-activation.service: "
                 "the direct-activation workload); global/use_lvmetad=1 "
                 "runs it with lvmetad",
                 (unsigned long long)k + 1, c.label, wk->name, r->lvm_version);
        note_once(notes, note);
        run_say(r, "  %s", note);
        continue;
      }
      rc = run_workload(r, &c, wk, wls, st.round);
    }
    if (r->dm_real && dm_sweep(r, 1) < 0 && !rc)
      rc = -1;
    json_object_set_new(cj, "dm", dm_json(r, c.dm));
    aio_stop(r);
    lvmetad_stop(r);
  }
  if (!rc && more < 0)
    rc = -1;
  run_sched_end(rs, doc);
  free(c.idx);
  dev_notes(configs, notes);
  return rc;
}

/* --expect: judge ex[] over the finished run's document and add its
 * "expect" array (ff-expect.h).  0, 1 or 125; -1 with ff_error. */
static int
judge_run(json_t *doc, struct ff_expect *const *ex, size_t nex,
          const struct ff_runreport *base)
{
  struct ff_runreport *rr = run_doc_model(doc);
  int rc = rr ? ff_expect_judge_all(ex, nex, rr, base, doc) : -1;

  ff_runreport_free(rr);
  return rc;
}

/* Where the run asks for real dm devices ("real" as --dm, the scenario's
 * dm or a value of its fusefarm/dm axis), in its own words, or NULL. */
static const char *
dm_real_asked(const struct run *r)
{
  switch (ff_scenario_dm_asks(r->sc, r->dm_override, "real")) {
  case FF_DM_ASKED_OVERRIDE:
    return "--dm real";
  case FF_DM_ASKED_KEY:
    return "dm = \"real\"";
  case FF_DM_ASKED_AXIS:
    return "the fusefarm/dm axis's \"real\"";
  case FF_DM_NOT_ASKED:
    break;
  }
  return NULL;
}

/* Whether every configuration of r->sc activates with real dm devices. */
static int
dm_always_real(const struct run *r)
{
  return ff_dm_usable() && !ff_scenario_dm_asks(r->sc, r->dm_override, "none");
}

/* What is checked before anything is mounted, in order: a transport,
 * device-mapper mode and io target this host can run, then every lvm
 * build resolved (ff_lvm_set_resolve; prog prefixes every message).  0,
 * or the exit status after printing why. */
static int
precheck(struct run *r, const char *prog, const char *lvm_git)
{
  ssize_t n;

  /* The host attaches the farm with loop devices: nbd is the guest's
   * (fusefarm vm). */
  if (ff_scenario_uses_nbd(r->sc)) {
    fprintf(stderr,
            "%s: the matrix axis fusefarm/transport has \"nbd\": "
            "the host attaches the farm with loop devices; the nbd transport "
            "runs in the guest (`fusefarm vm`)\n",
            prog);
    return 2;
  }
  {
    const char *asked = dm_real_asked(r);

    if (asked && !ff_dm_usable()) {
      fprintf(stderr,
              "%s: %s, but this kernel's device-mapper cannot be "
              "used (%s); dm = \"auto\" or \"none\" activates with "
              "--driverloaded n (`fusefarm vm` runs real device-mapper in a "
              "guest)\n",
              prog, asked, ff_errmsg());
      return 2;
    }
  }
  /* A configuration that activates with --driverloaded n (dm none, or
   * auto without device-mapper): an io workload on an LV has no device to
   * run on (the guest has one: fusefarm vm). */
  for (unsigned i = 0; i < r->sc->nworkloads && !dm_always_real(r); i++) {
    const struct ff_axis *tx = ff_scenario_axis(r->sc, "fusefarm/target");
    struct ff_workload w = r->sc->workloads[i];

    /* the workload's own target, or each of the axis's */
    for (unsigned v = 0; v < (tx ? tx->nvalues : 1); v++) {
      if (tx)
        w.io.target = tx->values[v].s;
      if (ff_io_target_check(&w, 1) < 0) {
        fprintf(stderr, "%s: %s%s\n", prog, ff_errmsg(),
                tx ? " (a value of the fusefarm/target axis)" : "");
        return 2;
      }
    }
  }
  n = readlink("/proc/self/exe", r->self, sizeof r->self - 1);
  if (n < 0) {
    fprintf(stderr, "%s: /proc/self/exe: %m\n", prog);
    return 1;
  }
  r->self[n] = '\0';
  /* Every lvm build, before anything is mounted (and before --expect's
   * qualifiers are checked: they name the builds by version). */
  return ff_lvm_set_resolve(&r->lvms, r->sc, lvm_git, r->self, prog, r->quiet);
}

/* Add the document's "verdict" (ff_runreport_verdict_json), the
 * comparisons the report prints.  0, or -1 with ff_error. */
static int
add_verdict(json_t *doc)
{
  struct ff_runreport *rr = run_doc_model(doc);
  json_t *v = rr ? ff_runreport_verdict_json(rr) : NULL;

  ff_runreport_free(rr);
  return v ? json_object_set_new(doc, "verdict", v) : -1;
}

/* --junit: the JUnit report of the document (ff-junit.h), written
 * whether the run succeeded or not.  0, or -1 with ff_error. */
static int
write_junit(json_t *doc, const char *path)
{
  struct ff_runreport *rr = run_doc_model(doc);
  int r = rr ? ff_junit_write(rr, path) : -1;

  ff_runreport_free(rr);
  return r;
}

static const char run_usage[] =
  "usage: fusefarm run [SCENARIO] [--out DIR] [--json FILE] [--csv FILE]\n"
  "                    [--svg FILE | --no-svg] [--top N] [--lvm LVM]...\n"
  "                    [--lvm-git DIR|URL]\n"
  "                    [--keep] [--quiet] [--expect EXPR]...\n"
  "                    [--baseline RUN.json] [--devices N]\n"
  "                    [--repeat N | --until-confident]\n"
  "                    [--dm auto|real|none] [--check] [--junit FILE]\n"
  "                    [--flamegraph]\n"
  "\n"
  "Run a scenario (docs/scenario-format.md; default: the built-in one, 160\n"
  "devices, use_aio x latency, every workload 4 times): mount and attach\n"
  "the farm, then for every configuration of the matrix time each workload\n"
  "with real lvm commands (or fio: io workloads, $FF_FIO), kept off the\n"
  "host's disks: a private /dev that holds the farm's devices only (named\n"
  "as their PV metadata says), a private lvm.conf and /run/lvm, and the\n"
  "scenario's fence (default none; devicesfile, devicesfile-used or\n"
  "filter).  Prints a table and its verdict (docs/report.md).\n"
  "\n"
  "Every output goes into one run directory, named at the start and the\n"
  "end: ./fusefarm-run-NAME-YYYYmmdd-HHMMSS/ (a new one, never an existing\n"
  "one), or --out DIR.  It holds run.json (the run document,\n"
  "docs/run-json.md: `fusefarm report DIR/run.json` prints the report\n"
  "again), report.txt (what was printed), run.svg (bar chart) and\n"
  "run-timeline-<config>.svg (one per event activation).\n"
  "\n"
  "  --out DIR     the run directory: made if missing, else it must be empty\n"
  "  --json FILE   write the run document to FILE instead\n"
  "  --csv FILE    one row per run (and FILE-devices.csv for activation)\n"
  "  --svg FILE    bar chart to FILE instead (and a timeline per\n"
  "                event-activation config next to it)\n"
  "  --no-svg      write no chart\n"
  "  --junit FILE  a JUnit XML report for CI too (docs/ci.md): a testcase\n"
  "                per workload and config, failed when one of its\n"
  "                commands failed, and per --expect EXPR\n"
  "  --flamegraph  perf-sampled flame graphs per config and workload\n"
  "                (flame-*.folded, flame-*.svg; docs/run-json.md)\n"
  "  --top N       slowest units listed per config (default 10)\n"
  "  --lvm LVM     lvm binary (a path or a name on PATH) or a git ref of\n"
  "                lvm2, overriding the scenario's; given several times,\n"
  "                the builds are the matrix's lvm axis (side by side)\n"
  "  --lvm-git DIR|URL  the lvm2 tree refs are built from with `fusefarm\n"
  "                lvm-build` (default: the scenario's lvm_git, else\n"
  "                $FF_LVM_GIT)\n"
  "  --keep        keep the scratch directory (lvm output, configs)\n"
  "  --quiet       no progress on stderr\n"
  "  --expect EXPR judge EXPR over the run's median wall times or what\n"
  "                lvm read (bytes_per_device(W), reads(W)...) for `git\n"
  "                bisect run` (docs/bisect.md), e.g.\n"
  "                'event-activation < 10 * direct-activation': exit 0 when\n"
  "                every EXPR holds, 1 when one fails, 125 when the build\n"
  "                or the farm could not run what it needs\n"
  "  --baseline RUN.json  the run that baseline.WORKLOAD names\n"
  "  --devices N   scale the farm to N devices, overriding the scenario's\n"
  "                devices (as `fusefarm mount --devices`)\n"
  "  --repeat N    run every workload N times, overriding each one's repeat\n"
  "                (1: a quick look; the verdict needs 4 or more)\n"
  "  --until-confident  every workload's repeat \"auto\": rounds until each\n"
  "                ratio's interval excludes 1 or the scenario's\n"
  "                repeat_budget (10 min) or repeat_max_rounds (20) ends\n"
  "  --dm MODE     device-mapper: auto (default: real when the kernel has\n"
  "                it), real (activation makes dm devices, removed before\n"
  "                each repetition and at the end) or none (--driverloaded\n"
  "                n); overrides the scenario's dm\n"
  "  --check       check the whole scenario (lvm.conf keys against each lvm\n"
  "                build's own list, profiles, values), print the\n"
  "                configurations and how many commands the run would\n"
  "                time, and stop: nothing is mounted, no root needed\n"
  "  -h, --help    this text\n"
  "\n"
  "With --json and --svg (or --no-svg) and no --out, no run directory is\n"
  "made.  SCENARIO is a file; a bare NAME that is no file here is the\n"
  "installed configs/scenarios/NAME.conf (FUSEFARM_DATADIR overrides\n"
  "where).  The scratch directory is made in $TMPDIR (default /tmp).\n"
  "Exit status: 0 success, 1 runtime failure (also: a timed lvm command,\n"
  "or an io workload's fio, failed; the last line names which), 2 bad\n"
  "usage or input (checked before anything runs, EXPR included), 77 this\n"
  "machine cannot run it (not root, no /dev/fuse or /dev/loop-control;\n"
  "with --expect too); with --expect: 0 holds, 1 fails, 125 could not\n"
  "judge (the run failed, or an EXPR reads a workload whose commands\n"
  "failed), 2 bad input.\n";

int
ff_cmd_run(int argc, char **argv)
{
  static const struct option opts[] = {
    {"json", required_argument, NULL, 'j'},
    {"csv", required_argument, NULL, 'c'},
    {"svg", required_argument, NULL, 's'},
    {"top", required_argument, NULL, 't'},
    {"lvm", required_argument, NULL, 'l'},
    {"lvm-git", required_argument, NULL, 'g'},
    {"keep", no_argument, NULL, 'k'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"no-svg", no_argument, NULL, 'n'},
    {"out", required_argument, NULL, 'o'},
    {"expect", required_argument, NULL, 'e'},
    {"baseline", required_argument, NULL, 'b'},
    {"dm", required_argument, NULL, 'D'},
    {"devices", required_argument, NULL, 'N'},
    {"repeat", required_argument, NULL, 'R'},
    {"until-confident", no_argument, NULL, 'A'},
    {"check", no_argument, NULL, 'C'},
    {"junit", required_argument, NULL, 'U'},
    {"flamegraph", no_argument, NULL, 'F'},
    {NULL, 0, NULL, 0},
  };
  struct ff_expect *ex[32];
  size_t nex = 0;
  const char *baseline = NULL;
  struct ff_runreport *base = NULL;
  int verdict = 0;
  const char *json_out = NULL, *csv_out = NULL, *svg_out = NULL;
  const char *junit_out = NULL;
  const char *lvm[32], *lvm_git = NULL, *out_given = NULL;
  unsigned nlvm = 0;
  unsigned long long ndevices = 0, nrepeat = 0;
  int top = 10, keep = 0, no_svg = 0, c, rc = 2, want_dir, made_dir = 0;
  int check = 0, until = 0, flamegraph = 0;
  char scpath[PATH_MAX + 64], out_dir[PATH_MAX] = "";
  char json_default[PATH_MAX + 16], svg_default[PATH_MAX + 16];
  char txt_path[PATH_MAX + 16] = "";
  struct run r = {.regfd = -1};
  json_t *doc = NULL;
  char when[64];

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 'j':
      json_out = optarg;
      break;
    case 'c':
      csv_out = optarg;
      break;
    case 'U':
      junit_out = optarg;
      break;
    case 's':
      svg_out = optarg;
      break;
    case 't': {
      unsigned long long v;

      if (ff_cli_number("run", "--top", optarg, 0, 100000, &v))
        goto out_expect;
      top = (int)v;
      break;
    }
    case 'l':
      if (nlvm == sizeof lvm / sizeof *lvm) {
        ff_cli_usage("run", "more than %zu --lvm", sizeof lvm / sizeof *lvm);
        goto out_expect;
      }
      lvm[nlvm++] = optarg;
      break;
    case 'g':
      lvm_git = optarg;
      break;
    case 'k':
      keep = 1;
      break;
    case 'n':
      no_svg = 1;
      break;
    case 'o':
      out_given = optarg;
      break;
    case 'q':
      r.quiet = 1;
      break;
    case 'e':
      if (nex == sizeof ex / sizeof *ex) {
        ff_cli_usage("run", "more than %zu --expect", sizeof ex / sizeof *ex);
        goto out_expect;
      }
      ex[nex] = ff_expect_parse(optarg);
      if (!ex[nex]) {
        ff_expect_print_error(stderr, "run", optarg);
        goto out_expect;
      }
      nex++;
      break;
    case 'b':
      baseline = optarg;
      break;
    case 'D':
      if (!ff_scenario_dm_valid(optarg)) {
        ff_cli_usage("run",
                     "--dm %s: expected auto (real when the kernel has "
                     "device-mapper), real or none",
                     optarg);
        goto out_expect;
      }
      r.dm_override = optarg;
      break;
    case 'N':
      if (ff_cli_number("run", "--devices", optarg, 1, 1u << 24, &ndevices))
        goto out_expect;
      break;
    case 'R':
      if (ff_cli_number("run", "--repeat", optarg, 1, 1000, &nrepeat))
        goto out_expect;
      break;
    case 'C':
      check = 1;
      break;
    case 'A':
      until = 1;
      break;
    case 'F':
      flamegraph = 1;
      break;
    case 'h':
      fputs(run_usage, stdout);
      rc = 0;
      goto out_expect;
    default:
      ff_cli_bad_option("run", c, argv, opts);
      goto out_expect;
    }
  }
  rc = 2;
  if (argc - optind > 1) {
    ff_cli_usage("run", "too many arguments (from '%s')", argv[optind + 1]);
    goto out_expect;
  }
  if (baseline && !nex) {
    ff_cli_usage("run", "--baseline is for --expect: give an EXPR");
    goto out_expect;
  }
  /* Not root: nothing of the run can happen here, whatever the scenario
   * says (and its checks may need a scratch dir of TMPDIR, which may not
   * be this user's); --check needs no root. */
  if (!check && geteuid() != 0) {
    fprintf(stderr, "fusefarm run: needs root (loop devices, FUSE, a "
                    "private mount namespace)\n");
    rc = FF_EXIT_CANNOT_RUN;
    goto out_expect;
  }
  if (baseline && !(base = ff_runreport_load_file(baseline))) {
    fprintf(stderr, "fusefarm run: --baseline: %s\n", ff_errmsg());
    goto out_expect;
  }
  r.sc = optind < argc ? ff_scenario_load_file(ff_paths_scenario(
                           argv[optind], scpath, sizeof scpath))
                       : ff_scenario_load_string(ff_scenario_builtin_default,
                                                 "<built-in>", NULL);
  if (!r.sc) {
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
    goto out_expect;
  }
  if (ff_scenario_set_lvms(r.sc, lvm, nlvm) < 0) {
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
    goto out;
  }
  if (ndevices && ff_scenario_axis(r.sc, "fusefarm/devices")) {
    fprintf(stderr,
            "fusefarm run: --devices %llu and the scenario's "
            "fusefarm/devices axis: give one\n",
            ndevices);
    goto out;
  }
  if (ndevices)
    r.sc->devices = ndevices;
  if (run_sched_repeat(r.sc, (unsigned)nrepeat, until) < 0) {
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
    goto out;
  }
  if (r.dm_override && ff_scenario_axis(r.sc, "fusefarm/dm")) {
    fprintf(stderr,
            "fusefarm run: --dm %s and the scenario's fusefarm/dm axis: "
            "give one\n",
            r.dm_override);
    goto out;
  }
  if ((rc = precheck(&r, "fusefarm run", lvm_git)) != 0)
    goto out;
  r.lvm_path = r.lvms.b[0].path;
  ff_pathf(r.lvm_version, sizeof r.lvm_version, "%s", r.lvms.b[0].version);
  rc = 2;
  if (nex) {
    /* Every name and qualifier must fit what the scenario will run. */
    struct ff_runreport *skel = ff_expect_skeleton(r.sc);
    json_t *scratch = json_object();
    int k =
      skel && scratch ? ff_expect_judge_all(ex, nex, skel, base, scratch) : -1;

    ff_runreport_free(skel);
    json_decref(scratch);
    if (k < 0) {
      fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
      goto out;
    }
  }
  /* The whole scenario, before anything is mounted (run-check.h);
   * --check stops here, having printed what the run would do. */
  if ((rc = ff_run_check("fusefarm run", r.sc, &r.lvms, check)) != 0 || check)
    goto out;
  rc = 1;
  if (svg_out && no_svg) {
    fprintf(stderr, "fusefarm run: --svg and --no-svg: give one\n%s",
            run_usage);
    rc = 2;
    goto out;
  }
  /* The run directory takes whatever has no path of its own. */
  want_dir = out_given || !json_out || (!svg_out && !no_svg);
  if (out_given && ff_rundir_check("run", out_given) != 0) {
    rc = 2;
    goto out;
  }
  r.tty = isatty(STDERR_FILENO);

  /* Refuse clearly before touching anything. */
  if (geteuid() != 0) {
    fprintf(stderr, "fusefarm run: needs root (loop devices, FUSE, a "
                    "private mount namespace)\n");
    rc = FF_EXIT_CANNOT_RUN;
    goto out;
  }
  if (access("/dev/loop-control", R_OK | W_OK) < 0 ||
      access("/dev/fuse", R_OK | W_OK) < 0) {
    fprintf(stderr,
            "fusefarm run: %s: %m (the runner needs loop devices "
            "and FUSE)\n",
            access("/dev/fuse", F_OK) ? "/dev/fuse" : "/dev/loop-control");
    rc = FF_EXIT_CANNOT_RUN;
    goto out;
  }
  if ((rc = run_flame_setup(&r, flamegraph)) != 0)
    goto out;
  rc = 1;
  if (want_dir) {
    if (ff_rundir_make(out_given, "run", r.sc->name, out_dir, &made_dir) < 0) {
      fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
      goto out;
    }
    if (!json_out) {
      ff_pathf(json_default, sizeof json_default, "%s/run.json", out_dir);
      json_out = json_default;
    }
    if (!svg_out && !no_svg) {
      ff_pathf(svg_default, sizeof svg_default, "%s/run.svg", out_dir);
      svg_out = svg_default;
    }
    ff_pathf(txt_path, sizeof txt_path, "%s/report.txt", out_dir);
    run_say(&r, "run directory: %s", out_dir);
  }
  run_flame_outdir(&r, json_out);
  {
    const char *tmp = ff_tmpdir();

    if (strlen(tmp) > 256) {
      fprintf(stderr, "fusefarm run: TMPDIR is longer than 256 bytes\n");
      goto out;
    }
    if (strchr(tmp, '\n')) { /* the registry's lines end paths */
      fprintf(stderr, "fusefarm run: TMPDIR has a newline\n");
      goto out;
    }
    ff_pathf(r.scratch, sizeof r.scratch, "%s/fusefarm-run.XXXXXX", tmp);
  }
  if (!mkdtemp(r.scratch)) {
    fprintf(stderr, "fusefarm run: mkdtemp %s: %m\n", r.scratch);
    goto out;
  }
  ff_pathf(r.mnt, sizeof r.mnt, "%s/mnt", r.scratch);
  ff_pathf(r.state, sizeof r.state, "%s/state", r.scratch);
  ff_pathf(r.etc, sizeof r.etc, "%s/etc", r.scratch);
  ff_pathf(r.rundir, sizeof r.rundir, "%s/run", r.scratch);
  ff_pathf(r.outdir, sizeof r.outdir, "%s/out", r.scratch);
  {
    const char *dirs[] = {r.mnt, r.etc, r.rundir, r.outdir};
    char p[PATH_MAX + 32];

    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
      mkdir(dirs[i], 0700);
    ff_pathf(p, sizeof p, "%s/devices", r.etc);
    mkdir(p, 0700);
    ff_pathf(p, sizeof p, "%s/lock", r.scratch);
    mkdir(p, 0700);
  }
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGHUP, on_signal); /* a lost terminal or SSH session */
  signal(SIGPIPE, SIG_IGN);
  reg_start(&r);
  if (enter_namespace(&r) < 0) {
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
    goto cleanup;
  }
  watchdog_start(&r);

  ff_iso_now(when, sizeof when);
  doc = json_pack("{s:s, s:i, s:{s:s, s:s, s:s?}, s:s, s:o}", "format",
                  "fusefarm-run", "version", 1, "scenario", "name", r.sc->name,
                  "file", r.sc->file, "description", r.sc->description,
                  "started", when, "host", host_json(&r));
  {
    run_say(&r, "scenario %s: %llu configuration%s x %u workload%s, lvm %s",
            r.sc->name, (unsigned long long)ff_scenario_nconfigs(r.sc),
            ff_scenario_nconfigs(r.sc) > 1 ? "s" : "", r.sc->nworkloads,
            r.sc->nworkloads > 1 ? "s" : "",
            json_string_value(
              json_object_get(json_object_get(doc, "host"), "lvm_version")));
  }
  rc = run_scenario(&r, doc) < 0 ? 1 : 0;
  run_flame_doc(&r, doc);
  if (rc)
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
  ff_iso_now(when, sizeof when);
  json_object_set_new(doc, "finished", json_string(when));
  if (rc)
    json_object_set_new(doc, "error", json_string(ff_errmsg()));

cleanup:
  run_flame_free(&r);
  aio_stop(&r);
  lvmetad_stop(&r);
  unmount_farm(&r);
  watchdog_stop(&r);
  farmview_free(&r.fv);
  if (doc) {
    if (!rc && nex && (verdict = judge_run(doc, ex, nex, base)) < 0) {
      fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
      rc = 2;
    }
    if (!rc && add_verdict(doc) < 0) {
      fprintf(stderr, "fusefarm run: verdict: %s\n", ff_errmsg());
      rc = 1;
    }
    if (json_out && json_dump_file(doc, json_out, JSON_INDENT(1)) < 0) {
      fprintf(stderr, "fusefarm run: cannot write %s\n", json_out);
      rc = 1;
    }
    if (!rc) {
      char *text = json_dumps(doc, JSON_COMPACT);
      struct ff_runreport *rr =
        text ? ff_runreport_load_text(text, strlen(text), NULL) : NULL;

      if (r.tty && !r.quiet)
        fputs("\r\033[K", stderr);
      if (!text)
        ff_error("run document: out of memory");
      struct ff_rundir_outputs outs = {txt_path, csv_out, svg_out, top};

      if (!rr || ff_rundir_render(rr, &outs) < 0) {
        fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
        rc = 1;
      } else if (svg_out && !r.quiet && !out_dir[0]) {
        fprintf(stderr, "fusefarm run: chart written to %s\n", svg_out);
      }
      ff_runreport_free(rr);
      free(text);
    }
    if (junit_out && write_junit(doc, junit_out) < 0) {
      fprintf(stderr, "fusefarm run: --junit: %s\n", ff_errmsg());
      rc = rc ? rc : 1;
    }
    json_decref(doc);
  }
  /* A timed lvm command that failed makes the run a failure: its numbers
   * time an error path, not the work asked for.  With --expect the
   * expressions decide, term by term: one that reads such a workload
   * (in the configuration it resolves to) is not judged (125); a failure
   * none of them reads leaves their verdict standing, and is said. */
  if (r.failed) {
    fprintf(stderr, "fusefarm run: %lld %s command%s failed: %s\n", r.failed,
            r.failed_io == r.failed ? "io or fs"
            : r.failed_io           ? "timed (lvm, io or fs)"
                                    : "lvm",
            r.failed == 1 ? "" : "s",
            ff_sb_failed(&r.failures) || !r.failures.buf ? "(out of memory)"
                                                         : r.failures.buf);
    if (!nex)
      rc = 1;
    else if (!rc && verdict == 125)
      fprintf(stderr, "fusefarm run: --expect: not judged (exit 125): the "
                      "report's verdict says why\n");
    else if (!rc)
      fprintf(stderr,
              "fusefarm run: --expect: no expression reads a workload "
              "whose commands failed: the verdict stands (exit %d)\n",
              verdict);
  }
  ff_sb_release(&r.failures);
  if (out_dir[0])
    ff_rundir_summary("run", out_dir, rc || r.failed, json_out, made_dir);
  if (keep) {
    fprintf(stderr, "fusefarm run: kept %s\n", r.scratch);
  } else {
    ff_empty_dir(r.scratch);
    rmdir(r.scratch);
  }
  reg_end(&r);
out:
  ff_lvm_set_free(&r.lvms);
  ff_scenario_free(r.sc);
  /* --expect: the verdict is the exit status; a run that failed is
   * "could not judge" (git bisect skips the commit), bad input stays 2. */
  if (nex && rc == 1) {
    fprintf(stderr, "fusefarm run: --expect: not judged: the run failed "
                    "(exit 125)\n");
    rc = 125;
  } else if (nex && rc == 0) {
    rc = verdict;
  }
out_expect:
  for (size_t i = 0; i < nex; i++)
    ff_expect_free(ex[i]);
  ff_runreport_free(base);
  return rc;
}

int
ff_run_check_file(const char *prog, const char *path)
{
  struct run r = {.regfd = -1, .quiet = 1};
  char scpath[PATH_MAX + 64];
  int rc = 2;

  r.sc = ff_scenario_load_file(ff_paths_scenario(path, scpath, sizeof scpath));
  if (!r.sc) {
    fprintf(stderr, "%s: %s\n", prog, ff_errmsg());
    return 2;
  }
  if ((rc = precheck(&r, prog, NULL)) == 0)
    rc = ff_run_check(prog, r.sc, &r.lvms, 1);
  ff_lvm_set_free(&r.lvms);
  ff_scenario_free(r.sc);
  return rc;
}
