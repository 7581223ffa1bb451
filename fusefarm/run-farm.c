/* fusefarm: the farm a `fusefarm run` times, and the /dev lvm sees.
 *
 * mount_farm runs `fusefarm mount` and `fusefarm attach` of the
 * scenario's spec (scaled when an axis asks), reads back what the farm
 * holds (its manifest and the loops attach made: struct farmview) and
 * covers /dev with the private one (runner/ff-privdev.h): the basic nodes
 * and the farm's devices, named as the scenario's dev_names says.
 * unmount_farm undoes it in the order that keeps the host safe: real dm
 * devices first (run-dm.c), the private /dev (detach names the loops of
 * the host's /dev), the loops, the mount, then the daemon's exit.
 * dev_json and dev_notes describe /dev and the fence in the run document.
 *
 * The namespace these run in is entered by run.c (ff-runns.h) before any
 * of them; nothing here mounts anything itself (ff-runns, ff-privdev and
 * the `fusefarm` children do).
 */

#include "run-int.h"

void
farmview_free(struct farmview *fv)
{
  for (uint32_t i = 0; i < fv->ndevs; i++) {
    free(fv->names[i]);
    free(fv->loops[i]);
    if (fv->paths)
      free(fv->paths[i]);
    free(fv->vg[i]);
  }
  free(fv->names);
  free(fv->loops);
  free(fv->paths);
  free(fv->vg);
  free(fv->first_lv);
  memset(fv, 0, sizeof *fv);
}

static int
read_farmview(struct run *r)
{
  char path[PATH_MAX + 64];
  struct ff_runmanifest m;
  FILE *f;
  char line[PATH_MAX * 2 + 64];

  farmview_free(&r->fv);
  ff_pathf(path, sizeof path, "%s/.fusefarm/manifest.json", r->mnt);
  if (ff_runmanifest_load(&m, path) < 0)
    return -1;
  r->fv.loops = calloc(m.ndevs + 1, sizeof *r->fv.loops);
  r->fv.paths = calloc(m.ndevs + 1, sizeof *r->fv.paths);
  if (!r->fv.loops || !r->fv.paths) {
    free(r->fv.loops);
    free(r->fv.paths);
    r->fv.loops = r->fv.paths = NULL;
    ff_runmanifest_release(&m);
    return ff_error("out of memory");
  }
  /* The view takes the manifest's arrays. */
  r->fv.ndevs = m.ndevs;
  r->fv.names = m.names;
  r->fv.vg = m.vgs;
  r->fv.first_lv = m.first_lv;
  r->fv.nvgs = m.nvgs;
  r->fv.nlvs = m.nlvs;

  ff_pathf(path, sizeof path, "%s/loops", r->state);
  f = fopen(path, "r");
  if (!f)
    return ff_error("%s: %m", path);
  while (fgets(line, sizeof line, f)) {
    char dev[PATH_MAX], name[PATH_MAX];

    if (sscanf(line, "%s %s", dev, name) != 2)
      continue;
    for (uint32_t k = 0; k < r->fv.ndevs; k++)
      if (r->fv.names[k] && !strcmp(r->fv.names[k], name)) {
        free(r->fv.loops[k]);
        free(r->fv.paths[k]);
        r->fv.loops[k] = strdup(dev);
        r->fv.paths[k] = strdup(dev);
      }
  }
  fclose(f);
  return 0;
}

static void privdev_down(struct run *r);
static int privdev_up(struct run *r);

void
unmount_farm(struct run *r)
{
  const char *detach[] = {r->self,  "detach",  r->mnt, "--state",
                          r->state, "--quiet", NULL};

  if (!r->mounted)
    return;
  dm_teardown(r);
  privdev_down(r); /* detach names the loops of the host's /dev */
  run_wait(r, detach, NULL, NULL, 0);
  if (ff_runns_unmount(&ff_runns_real, r->mnt) < 0)
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
  /* The daemon ends when its mount goes: wait for that exit (its pidfd;
   * a loaded machine may take many seconds), so that nothing of the run
   * outlives it; only a daemon still there after a minute is killed. */
  if (r->daemon_pid > 0) {
    struct pollfd p = {
      .fd = (int)syscall(SYS_pidfd_open, r->daemon_pid, 0),
      .events = POLLIN,
    };

    if (p.fd < 0 && errno != ESRCH) {
      kill(r->daemon_pid, SIGKILL);
    } else if (p.fd >= 0) {
      int n;

      do
        n = poll(&p, 1, 60000);
      while (n < 0 && errno == EINTR);
      if (n == 0) {
        fprintf(stderr,
                "fusefarm run: daemon %d still there 60 s after "
                "the unmount: killed\n",
                (int)r->daemon_pid);
        kill(r->daemon_pid, SIGKILL);
        poll(&p, 1, 10000);
      }
      close(p.fd);
    }
  }
  r->mounted = 0;
  r->daemon_pid = 0;
}

int
mount_farm(struct run *r, const char *spec, uint64_t devices)
{
  char log[PATH_MAX + 32], err[PATH_MAX + 32], ndev[32], msg[512];
  const char *argv[16];
  int a = 0, rc;
  json_t *info;

  unmount_farm(r);
  ff_pathf(log, sizeof log, "%s/daemon.log", r->scratch);
  ff_pathf(err, sizeof err, "%s/mount.err", r->scratch);
  ff_pathf(ndev, sizeof ndev, "%llu", (unsigned long long)devices);
  argv[a++] = r->self;
  argv[a++] = "mount";
  if (spec)
    argv[a++] = spec;
  argv[a++] = r->mnt;
  argv[a++] = "--log";
  argv[a++] = log;
  if (devices) {
    argv[a++] = "--devices";
    argv[a++] = ndev;
  }
  argv[a] = NULL;
  run_say(r, "mounting the farm%s%s", devices ? " scaled to " : "",
          devices ? ndev : "");
  rc = run_wait(r, argv, NULL, err, 0);
  if (rc != 0) {
    ff_first_line(err, msg, sizeof msg);
    return ff_error("fusefarm mount failed: %s", msg);
  }
  r->mounted = 1;
  ff_pathf(log, sizeof log, "%s/.fusefarm/info.json", r->mnt);
  info = json_load_file(log, 0, NULL);
  r->daemon_pid = (pid_t)json_integer_value(json_object_get(info, "pid"));
  json_decref(info);
  r->reg.daemon.pid = r->daemon_pid;
  r->reg.daemon.start = ff_proc_start_time(r->daemon_pid);
  reg_update(r, 0);

  {
    const char *attach[] = {r->self,  "attach",  r->mnt, "--state",
                            r->state, "--quiet", NULL};

    ff_pathf(err, sizeof err, "%s/attach.err", r->scratch);
    rc = run_wait(r, attach, NULL, err, 0);
    if (rc != 0) {
      ff_first_line(err, msg, sizeof msg);
      return ff_error("fusefarm attach failed: %s", msg);
    }
  }
  /* what the daemon takes off every delayed reply, for run.json */
  info = json_load_file(log, 0, NULL);
  r->share_ns = json_integer_value(
    json_object_get(json_object_get(info, "transport_share"), "ns"));
  json_decref(info);
  r->devices = devices;
  r->spec = spec;
  if (read_farmview(r) < 0)
    return -1;
  run_say(r, "farm: %u devices, %u VGs, %u LVs attached", r->fv.ndevs,
          r->fv.nvgs, r->fv.nlvs);
  return privdev_up(r);
}

/* ---- the private /dev (runner/ff-privdev.h) ------------------------------
 */

static void
privdev_down(struct run *r)
{
  if (!r->privdev_up)
    return;
  if (ff_privdev_umount() < 0)
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
  r->privdev_up = 0;
  for (uint32_t k = 0; k < r->fv.ndevs; k++) {
    free(r->fv.paths[k]);
    r->fv.paths[k] = r->fv.loops[k] ? strdup(r->fv.loops[k]) : NULL;
  }
}

/* Whether any configuration runs without a fence. */
static int
any_fence_none(const struct ff_scenario *sc)
{
  const struct ff_axis *ax = ff_scenario_axis(sc, "fusefarm/fence");

  if (!ax)
    return !strcmp(sc->fence, "none");
  for (unsigned i = 0; i < ax->nvalues; i++)
    if (!strcmp(ax->values[i].s, "none"))
      return 1;
  return 0;
}

/* The spec's device_hint format ("/dev/%s"): the path the PVs' metadata
 * names, which the farm-named nodes follow.  malloc'd, or NULL. */
static char *
spec_hint_format(struct run *r)
{
  struct ff_spec *sp =
    r->spec ? ff_spec_load_file(r->spec)
            : ff_spec_load_string(ff_spec_builtin_default, "<built-in>");
  char *fmt = sp && sp->device_hint ? strdup(sp->device_hint) : NULL;

  ff_spec_free(sp);
  return fmt;
}

/* Cover /dev with the private one: the basic nodes and the attached
 * farm's devices, named as the scenario says; fv.paths then name them.
 * A failure is fatal only for a run that has a configuration without a
 * fence (it would see the host's /dev); the others run on the host's
 * /dev, fenced, and the run document says so. */
static int
privdev_make(struct run *r)
{
  struct ff_privdev_node *nodes;
  char **paths, **links;
  char *fmt = NULL;
  size_t n = 0;
  int rc = -1;

  if (ff_devnames_parse(r->sc->dev_names, &r->devnames) < 0)
    return ff_error("dev_names '%s': unknown", r->sc->dev_names);
  nodes = calloc(r->fv.ndevs + 1, sizeof *nodes);
  paths = calloc(r->fv.ndevs + 1, sizeof *paths);
  links = calloc(r->fv.ndevs + 1, sizeof *links);
  if (!nodes || !paths || !links) {
    ff_error("out of memory");
    goto out;
  }
  if (r->devnames == FF_DEVNAMES_FARM && !(fmt = spec_hint_format(r))) {
    ff_error("the farm spec's device_hint: %s", ff_errmsg());
    goto out;
  }
  r->hint_fallbacks = 0;
  for (uint32_t k = 0; k < r->fv.ndevs; k++) {
    char p[PATH_MAX];
    int fallback;

    if (!r->fv.loops[k])
      continue;
    if (ff_privdev_path(r->devnames, fmt, r->fv.names[k], r->fv.loops[k],
                        (uint32_t)n, p, sizeof p, &fallback) < 0)
      goto out;
    r->hint_fallbacks += (unsigned)fallback;
    paths[k] = strdup(p);
    if (!paths[k]) {
      ff_error("out of memory");
      goto out;
    }
    if (r->devnames == FF_DEVNAMES_DISK) {
      char l[PATH_MAX];

      ff_pathf(l, sizeof l, "/dev/disk/by-id/scsi-0FUSEFARM_%s",
               r->fv.names[k]);
      if (!(links[k] = strdup(l))) {
        ff_error("out of memory");
        goto out;
      }
    }
    nodes[n].path = paths[k];
    nodes[n].loop = r->fv.loops[k];
    nodes[n].link = links[k];
    n++;
  }
  if (ff_privdev_mount(nodes, n, &r->pd) < 0)
    goto out;
  r->privdev_up = 1;
  for (uint32_t k = 0; k < r->fv.ndevs; k++) {
    free(r->fv.paths[k]);
    r->fv.paths[k] = paths[k];
    paths[k] = NULL;
  }
  rc = 0;
out:
  for (uint32_t k = 0; paths && links && k < r->fv.ndevs; k++) {
    free(paths[k]);
    free(links[k]);
  }
  free(paths);
  free(links);
  free(nodes);
  free(fmt);
  return rc;
}

static int
privdev_up(struct run *r)
{
  r->privdev_failed = 0;
  r->privdev_err[0] = '\0';
  if (getenv("FUSEFARM_TEST_NO_PRIVATE_DEV"))
    ff_error("FUSEFARM_TEST_NO_PRIVATE_DEV is set (a test of the refusal)");
  else if (privdev_make(r) == 0) {
    run_say(r,
            "private /dev: %zu farm devices named as '%s'%s, %u basic nodes; "
            "sysfs block views: %zu of the kernel's %zu devices",
            r->pd.nnodes, ff_devnames_name(r->devnames),
            r->hint_fallbacks ? " (hints outside /dev: /dev/NAME)" : "",
            r->pd.nbasic, r->pd.sys_nodes, r->pd.sys_host);
    return 0;
  }
  r->privdev_failed = 1;
  ff_pathf(r->privdev_err, sizeof r->privdev_err, "%s", ff_errmsg());
  if (any_fence_none(r->sc))
    return ff_error("no private /dev (%s): refusing fence none, which "
                    "would let lvm see the host's disks (set fence = "
                    "\"devicesfile\" or \"filter\" to run on the host's "
                    "/dev)",
                    r->privdev_err);
  run_say(r, "no private /dev (%s): lvm sees the host's /dev, fenced",
          r->privdev_err);
  return 0;
}

/* The run document's description of /dev for this configuration. */
json_t *
dev_json(struct run *r)
{
  if (!r->privdev_up)
    return json_pack("{s:b, s:s, s:s}", "private", 0, "naming", "loop",
                     "error", r->privdev_err[0] ? r->privdev_err : "");
  return json_pack(
    "{s:b, s:s, s:I, s:I, s:I, s:b, s:b, s:I, s:{s:I, s:I, s:I}}", "private",
    1, "naming", ff_devnames_name(r->devnames), "farm_nodes",
    (json_int_t)r->pd.nnodes, "basic_nodes", (json_int_t)r->pd.nbasic, "links",
    (json_int_t)r->pd.nlinks, "dm_control", r->pd.dm_control, "devpts",
    r->pd.devpts, "hint_fallbacks", (json_int_t)r->hint_fallbacks, "sys_block",
    "views", (json_int_t)r->pd.sysviews, "farm_entries",
    (json_int_t)r->pd.sys_nodes, "host_entries", (json_int_t)r->pd.sys_host);
}

/* The report's notes on what /dev held and which fence ran: one line per
 * run of configurations that had the same, "configs 1-3: ...". */
void
dev_notes(json_t *configs, json_t *notes)
{
  size_t n = json_array_size(configs), first = 0;
  char prev[512] = "", cur[512];

  for (size_t i = 0; i <= n; i++) {
    cur[0] = '\0';
    if (i < n) {
      json_t *c = json_array_get(configs, i), *d = json_object_get(c, "dev");
      const char *fence = json_string_value(json_object_get(c, "fence"));
      json_t *fd = json_object_get(c, "fence_devices");
      char fnote[160] = "";

      if (fd)
        ff_pathf(
          fnote, sizeof fnote, " (naming %lld of the %lld farm devices)",
          (long long)json_integer_value(json_object_get(fd, "listed")),
          (long long)json_integer_value(json_object_get(fd, "present")));

      if (json_is_true(json_object_get(d, "private"))) {
        json_t *sys = json_object_get(d, "sys_block");
        char sysnote[160] = "";

        if (json_integer_value(json_object_get(sys, "views")) > 0)
          ff_pathf(
            sysnote, sizeof sysnote,
            "; sysfs block views held the farm's %lld of the kernel's %lld "
            "block devices",
            (long long)json_integer_value(
              json_object_get(sys, "farm_entries")),
            (long long)json_integer_value(
              json_object_get(sys, "host_entries")));
        ff_pathf(
          cur, sizeof cur,
          "/dev was private: %lld farm devices named as '%s'%s, %lld basic "
          "nodes, nothing of the host's%s; fence %s%s",
          (long long)json_integer_value(json_object_get(d, "farm_nodes")),
          json_string_value(json_object_get(d, "naming")),
          json_integer_value(json_object_get(d, "hint_fallbacks"))
            ? " (hints outside /dev: /dev/NAME)"
            : "",
          (long long)json_integer_value(json_object_get(d, "basic_nodes")),
          sysnote, fence ? fence : "?", fnote);
      } else
        ff_pathf(cur, sizeof cur,
                 "/dev was the host's (no private /dev: %s); fence %s%s",
                 json_string_value(json_object_get(d, "error")),
                 fence ? fence : "?", fnote);
    }
    if (i > 0 && strcmp(cur, prev)) {
      char line[640];

      if (first + 1 == i)
        ff_pathf(line, sizeof line, "config %zu: %s", first + 1, prev);
      else
        ff_pathf(line, sizeof line, "configs %zu-%zu: %s", first + 1, i, prev);
      json_array_append_new(notes, json_string(line));
      first = i;
    }
    memcpy(prev, cur, sizeof prev);
  }
}
