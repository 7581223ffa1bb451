/* fusefarm vm: boot a guest over the farm and check real device-mapper
 * activation there (docs/guest.md).
 *
 * The guest tier is shell: guest/run-initramfs.sh (busybox initramfs,
 * vgchange -aay, ff-dmcheck, nbd-client) and guest/run-systemd.sh (a
 * Debian root with systemd and udev: event activation, systemd-analyze).
 * This command is their front end: it loads the scenario (or takes a
 * plain spec), turns what the guest can honour into the scripts' options
 * (spec, profile, the lvm.conf of one matrix configuration), runs one
 * script and returns its verdict.  Built-in specs and profiles and inline
 * farms are written to files first, because nbdkit reads a path.
 *
 * No threads.  The script runs in the foreground of our process group; on
 * Ctrl-C it gets the signal too and kills its own qemu and nbdkit, while
 * we ignore the signal and wait for it.
 */
#include "ff-builtin.h"
#include "ff-cfgkind.h"
#include "ff-cli.h"
#include "ff-daemon.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-fence.h"
#include "ff-file.h"
#include "ff-paths.h"
#include "ff-report.h"
#include "ff-rundir.h"
#include "ff-runreport.h"
#include "ff-scenario.h"
#include "ff-spawn.h"
#include "ff-workload.h"
#include "lvm-resolve.h"
#include "run-check.h"

#include <jansson.h>
#include <time.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char vm_usage[] =
  "usage: fusefarm vm [SCENARIO|SPEC] [OPTIONS]\n"
  "\n"
  "Boot a qemu guest whose SCSI disks are the farm (served by the nbd\n"
  "plugin) and check real activation there.  KVM when a real one is\n"
  "present, TCG otherwise.  Without an argument: the built-in scenario.\n"
  "A scenario's workloads run in the guest (initramfs boot) for every\n"
  "configuration of its matrix and are reported like `fusefarm run`;\n"
  "io workloads run fio there (raw farm disks and LVs, with the farm's\n"
  "counters), fs workloads mkfs.ext4 or mkfs.xfs, mount and fio, from\n"
  "an optional fio layer of the initramfs.  The matrix axis\n"
  "fusefarm/transport \"nbd\" attaches every farm device with the\n"
  "guest's kernel nbd client instead of virtio-scsi (initramfs boot; a\n"
  "boot per transport).\n"
  "\n"
  "  --boot initramfs   busybox initramfs: vgchange -aay, every dm table\n"
  "                     checked against the manifest (ff-dmcheck),\n"
  "                     nbd-client on --nbd-client exports, then the\n"
  "                     scenario's workloads (default)\n"
  "  --boot systemd     Debian root with systemd, udev and lvm2: udev's\n"
  "                     lvm rules activate the VGs; reports the time until\n"
  "                     every LV was active and systemd-analyze (time,\n"
  "                     blame, plot SVG); one boot per configuration\n"
  "  --disks N          attach only the farm's first N devices (VGs with a\n"
  "                     PV beyond them are left out of the checks)\n"
  "  --nbd-client K     initramfs: attach K PVs with nbd-client (default 2;\n"
  "                     not with the nbd transport)\n"
  "  --profile P        I/O profile (path or builtin:NAME), overrides the\n"
  "                     scenario's; the plugin applies it to the guest's "
  "disks\n"
  "  --config K         only configuration K of the matrix (1 is the\n"
  "                     first, as the run table numbers them); default all\n"
  "  --lvm LVM          the lvm2 build the guest runs: a path, a command\n"
  "                     on PATH or a git ref (built by `fusefarm\n"
  "                     lvm-build`), overriding the scenario's lvm; given\n"
  "                     again, the builds are a matrix axis.  initramfs:\n"
  "                     the workloads run it; systemd: the boot runs it\n"
  "                     with its own udev rule and systemd units (a build\n"
  "                     of `fusefarm lvm-build`).  Default: the guest's\n"
  "                     Debian lvm2\n"
  "  --lvm-git DIR|URL  the lvm2 git tree refs are built from (default:\n"
  "                     the scenario's lvm_git, else $FF_LVM_GIT)\n"
  "  --timeout S        give up a boot after S seconds (default 300\n"
  "                     initramfs, 1800 when it runs workloads, 900\n"
  "                     systemd)\n"
  "  --cache DIR        image cache (default /var/cache/fusefarm/guest)\n"
  "  --out DIR          with workloads: the run directory (run.json,\n"
  "                     report.txt, run.svg and the charts; default a new\n"
  "                     ./fusefarm-vm-NAME-YYYYmmdd-HHMMSS unless --json,\n"
  "                     --csv or --svg says where outputs go); systemd:\n"
  "                     where to put the results (default\n"
  "                     ./fusefarm-vm-NAME; DIR/config-K per configuration\n"
  "                     when there are several)\n"
  "  --keep             keep the run directory (logs, image copy)\n"
  "  --json FILE        with workloads: the run document (docs/run-json.md,\n"
  "                     `fusefarm report FILE` renders it); otherwise the\n"
  "                     boot's timings and verdict (an array of them for\n"
  "                     several configurations)\n"
  "  --csv FILE, --svg FILE, --top N\n"
  "                     with workloads: as `fusefarm run`\n"
  "\n"
  "  --paths            print where the guest scripts, in-guest binaries\n"
  "                     and nbd plugin are, and exit\n"
  "  --prepare          build (first run: downloads Debian packages) or\n"
  "                     check the cached guest images, print their sizes\n"
  "                     and what they downloaded, and exit; both images,\n"
  "                     or the one of --boot; --cache picks the cache\n"
  "\n"
  "The guest scripts are in DATADIR/guest (FF_GUEST_DIR overrides), the\n"
  "in-guest binaries in LIBEXECDIR: the installed tree's share/fusefarm\n"
  "and libexec/fusefarm, or the source and build trees when run from the\n"
  "build tree; FUSEFARM_DATADIR, FUSEFARM_LIBEXECDIR and FUSEFARM_PLUGIN\n"
  "override them.  Scratch files go to $TMPDIR (default /tmp).\n"
  "Exit: 0 pass, 1 failed check or boot or a timed command (lvm or fio)\n"
  "that failed in the guest, 2 bad usage or bad input.\n";

static int
write_file(const char *path, const char *text)
{
  FILE *f = ff_fopen_write(path, "w");
  if (!f) {
    fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
    return -1;
  }
  fputs(text, f);
  if (fclose(f) != 0) {
    fprintf(stderr, "fusefarm vm: %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* A path the scripts can read: builtin:NAME is written into dir. */
static int
materialize(const char *kind, const char *path, const char *dir, char *out,
            size_t outsz)
{
  const char *text;

  if (!ff_is_builtin(path)) {
    snprintf(out, outsz, "%s", path);
    return 0;
  }
  text = ff_builtin_text(kind, path + 8);
  if (!text) {
    fprintf(stderr, "fusefarm vm: %s: no such built-in %s (known: %s)\n", path,
            kind, ff_builtin_names(kind));
    return -1;
  }
  snprintf(out, outsz, "%s/%s-%s.conf", dir, kind, path + 8);
  return write_file(out, text);
}

/* The guest's /etc/lvm/lvm.conf for configuration k (runner/ff-fence.h):
 * the same text `fusefarm run` gives lvm on the host for this
 * configuration (the fence plus every "section/name" axis; fusefarm/...
 * axes are the runner's own).  The guest's disks are all the farm's, so
 * no device is named: no devices file is needed (lvm uses none when the
 * file is absent) and the filter form accepts every device.  caps: what
 * the configuration's lvm knows (the build's, or the guest's Debian
 * lvm2).  Returns 1 (the file holds settings) or -1 on error. */
static int
write_lvmconf(const struct ff_scenario *sc, uint64_t k,
              const struct ff_lvm_caps *caps, const char *path)
{
  struct ff_fence_setting *set = NULL;
  struct ff_fence f = {0};
  char title[512], *text;
  size_t nset;
  int r = -1;

  if (ff_fence_scenario_settings(sc, k, &set, &nset) < 0) {
    fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
    return -1;
  }
  snprintf(title, sizeof title, "scenario %s, configuration %llu", sc->name,
           (unsigned long long)k + 1);
  f.caps = *caps;
  f.settings = set;
  f.nsettings = nset;
  f.title = title;
  text = ff_fence_lvm_conf(&f);
  if (!text || ff_write_file_atomic(path, text, strlen(text)) < 0) {
    fprintf(stderr, "fusefarm vm: %s: %s\n", path, ff_errmsg());
    goto out;
  }
  for (size_t i = 0; i < nset; i++) {
    fprintf(stderr, "fusefarm vm: lvm.conf: %s = ", set[i].key);
    if (set[i].type == FF_FENCE_STR)
      fprintf(stderr, "\"%s\"\n", set[i].s);
    else
      fprintf(stderr, "%lld\n", (long long)set[i].i);
  }
  r = 1;
out:
  free(text);
  free(set);
  return r;
}

/* The fusefarm/profile value of configuration k, or NULL. */
static const char *
config_profile(const struct ff_scenario *sc, uint64_t k)
{
  const char *p = NULL;
  unsigned *idx;

  if (!sc->naxes)
    return NULL;
  idx = calloc(sc->naxes, sizeof *idx);
  if (!idx)
    return NULL;
  ff_scenario_config(sc, k, idx);
  for (unsigned a = 0; a < sc->naxes; a++)
    if (!strcmp(sc->axes[a].key, "fusefarm/profile") &&
        sc->axes[a].values[idx[a]].is_str)
      p = sc->axes[a].values[idx[a]].s;
  free(idx);
  return p;
}

/* The signal (SIGINT, SIGTERM or SIGHUP) that stopped the run: no boot
 * starts after it. */
static volatile sig_atomic_t vm_stop;

static void
on_stop(int sig)
{
  vm_stop = sig;
}

/* Run a guest script in the foreground (stdio inherited) and wait for it.
 * While it runs a SIGINT, SIGTERM or SIGHUP only marks the run stopped:
 * a ^C (or a kill of the process group) reaches the script, which ends its own
 * way (stopping its qemu and nbdkit), and we report how (ff-spawn.h gives the
 * child the default actions back).  Once stopped, no script starts:
 * 130, as the script's own exit on a signal. */
static int
run_script(char **args)
{
  const struct ff_spawn o = {.argv = (const char *const *)args,
                             .inherit_stdio = 1};
  struct sigaction mark = {0}, oldint, oldterm, oldhup;
  int st;

  if (vm_stop) {
    fprintf(stderr, "fusefarm vm: stopped by signal %d: %s not started\n",
            (int)vm_stop, args[0]);
    return 130;
  }
  mark.sa_handler = on_stop;
  sigemptyset(&mark.sa_mask);
  sigaction(SIGINT, &mark, &oldint);
  sigaction(SIGTERM, &mark, &oldterm);
  sigaction(SIGHUP, &mark, &oldhup);
  st = ff_spawn_run(&o);
  sigaction(SIGINT, &oldint, NULL);
  sigaction(SIGTERM, &oldterm, NULL);
  sigaction(SIGHUP, &oldhup, NULL);
  if (vm_stop) {
    fprintf(stderr, "fusefarm vm: stopped by signal %d\n", (int)vm_stop);
    return 130;
  }
  if (st < 0) {
    fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
    return 127;
  }
  if (st < 128)
    return st;
  fprintf(stderr, "fusefarm vm: %s killed by signal %d\n", args[0], st - 128);
  return 1;
}

/* --prepare: guest/prepare.sh builds or checks the cached images (both,
 * or boot's) in cache (NULL: its default) and reports their sizes. */
static int
prepare_images(const char *guest, const char *boot, const char *cache,
               int nargs)
{
  char script[PATH_MAX + 32];
  const char *args[8];
  int a = 0, st;

  if (nargs) {
    fprintf(stderr, "fusefarm vm: --prepare takes no SCENARIO or SPEC\n");
    return 2;
  }
  snprintf(script, sizeof script, "%s/prepare.sh", guest);
  if (access(script, R_OK) != 0) {
    fprintf(stderr,
            "fusefarm vm: %s: %s (set FUSEFARM_DATADIR to the directory "
            "holding guest/, or FF_GUEST_DIR)\n",
            script, strerror(errno));
    return 1;
  }
  args[a++] = "bash";
  args[a++] = script;
  if (boot) {
    args[a++] = "--boot";
    args[a++] = boot;
  }
  if (cache)
    args[a++] = cache;
  args[a] = NULL;
  st = run_script((char **)args);
  return st == 0 ? 0 : st == 2 ? 2 : 1;
}

/* What one invocation needs across boots. */
struct vm {
  struct ff_scenario *sc; /* NULL: a plain spec */
  const char *boot, *cache, *timeout, *disks, *nbd, *out, *profile;
  int keep;
  /* The lvm builds (--lvm, the scenario's lvm or its fusefarm/lvm
   * axis), resolved when one is not the guest's own ("lvm"). */
  struct ff_lvm_set lvms;
  int have_lvms;
  struct ff_lvm_caps guest_caps; /* the guest's Debian lvm2 */
  char tmp[1024];                /* TMPDIR/ff-vm.XXXXXX */
  char script[PATH_MAX + 32];
  struct ff_paths paths; /* the program, plugin, in-guest binaries */
  char spec[PATH_MAX + 64];
};

/* The profile of configuration k: --profile, else the matrix's
 * fusefarm/profile, else the scenario's; NULL or "ideal": none. */
static const char *
profile_of(const struct vm *v, uint64_t k)
{
  const char *p = v->profile;

  if (!p && v->sc)
    p = config_profile(v->sc, k);
  if (!p && v->sc)
    p = v->sc->profile;
  return p && strcmp(p, "ideal") && strcmp(p, "builtin:ideal") ? p : NULL;
}

/* The farm size of configuration k: the matrix's fusefarm/devices, else
 * the scenario's devices, else 0 (as the spec says). */
static uint64_t
devices_of(const struct vm *v, uint64_t k)
{
  uint64_t d = v->sc ? v->sc->devices : 0;
  const struct ff_axis *ax =
    v->sc ? ff_scenario_axis(v->sc, "fusefarm/devices") : NULL;

  if (ax) {
    unsigned *idx = calloc(v->sc->naxes, sizeof *idx);

    if (idx) {
      ff_scenario_config(v->sc, k, idx);
      for (unsigned a = 0; a < v->sc->naxes; a++)
        if (&v->sc->axes[a] == ax)
          d = (uint64_t)ax->values[idx[a]].i;
      free(idx);
    }
  }
  return d;
}

/* How configuration k's guest reaches the farm: the matrix's
 * fusefarm/transport, "scsi" (virtio-scsi disks, the default) or "nbd"
 * (the guest's kernel nbd client). */
static const char *
transport_of(const struct vm *v, uint64_t k)
{
  const struct ff_axis *ax =
    v->sc ? ff_scenario_axis(v->sc, "fusefarm/transport") : NULL;
  const char *t = "scsi";
  unsigned *idx;

  if (ax && (idx = calloc(v->sc->naxes, sizeof *idx))) {
    ff_scenario_config(v->sc, k, idx);
    for (unsigned a = 0; a < v->sc->naxes; a++)
      if (&v->sc->axes[a] == ax)
        t = ax->values[idx[a]].s;
    free(idx);
  }
  return t;
}

/* The lvm build configuration k runs, or NULL: the guest's own lvm2. */
static const struct ff_lvm_build *
lvm_for(const struct vm *v, uint64_t k)
{
  const struct ff_lvm_build *b = NULL;
  unsigned *idx;

  if (!v->have_lvms)
    return NULL;
  if (!v->sc || !v->sc->naxes)
    b = ff_lvm_set_for(&v->lvms, NULL);
  else if ((idx = calloc(v->sc->naxes, sizeof *idx))) {
    ff_scenario_config(v->sc, k, idx);
    b = ff_lvm_set_for(&v->lvms, idx);
    free(idx);
  }
  return b && strcmp(b->entry, "lvm") ? b : NULL;
}

/* What configuration k's lvm knows: its build's, or the guest's. */
static const struct ff_lvm_caps *
caps_for(const struct vm *v, uint64_t k)
{
  const struct ff_lvm_build *b = lvm_for(v, k);

  return b ? &b->caps : &v->guest_caps;
}

/* The timed commands (lvm or fio) that failed in the guest's runs (their
 * "errors"), each workload's said on stderr with its first message.
 * Returns how many. */
static long long
failed_commands(json_t *doc)
{
  long long n = 0;
  size_t i, j, k;
  json_t *c, *w, *r;

  json_array_foreach(json_object_get(doc, "configs"), i, c)
  {
    json_array_foreach(json_object_get(c, "workloads"), j, w)
    {
      const char *msg = NULL,
                 *label = json_string_value(json_object_get(c, "label"));
      long long m = 0;

      json_array_foreach(json_object_get(w, "runs"), k, r)
      {
        m += json_integer_value(json_object_get(r, "errors"));
        if (!msg)
          msg = json_string_value(json_object_get(r, "message"));
      }
      if (m)
        fprintf(stderr, "fusefarm vm: config %lld (%s) %s: %lld failed (%s)\n",
                (long long)json_integer_value(json_object_get(c, "id")),
                label ? label : "?",
                json_string_value(json_object_get(w, "name")), m,
                msg ? msg : "no message");
      n += m;
    }
  }
  if (n)
    fprintf(stderr, "fusefarm vm: %lld timed (lvm or fio) command%s failed\n",
            n, n == 1 ? "" : "s");
  return n;
}

/* Does the scenario have an io or fs workload (fio, and for fs mkfs, in
 * the guest)? */
static int
has_io(const struct ff_scenario *sc)
{
  for (unsigned i = 0; sc && i < sc->nworkloads; i++)
    if (sc->workloads[i].type == FF_W_IO || sc->workloads[i].type == FF_W_FS)
      return 1;
  return 0;
}

/* One boot: the script with the options of configuration k (lvmconf,
 * plan, result, json, out may be NULL).  Returns its exit status. */
static int
boot_once(struct vm *v, uint64_t k, const char *lvmconf, const char *plan,
          const char *result, const char *json, const char *out)
{
  const char *args[48];
  char prof[PATH_MAX + 64] = "", devs[32] = "";
  const char *profile = profile_of(v, k), *transport = transport_of(v, k);
  const struct ff_lvm_build *lvm = lvm_for(v, k);
  uint64_t devices = devices_of(v, k);
  int a = 0;

  if (profile &&
      materialize("profile", profile, v->tmp, prof, sizeof prof) < 0)
    return 2;
  args[a++] = "bash";
  args[a++] = v->script;
  args[a++] = "--fusefarm";
  args[a++] = v->paths.exe;
  args[a++] = "--plugin";
  args[a++] = v->paths.plugin;
  if (!strcmp(v->boot, "initramfs")) {
    args[a++] = "--guest-bin";
    args[a++] = v->paths.libexecdir;
  }
  if (v->disks) {
    args[a++] = "--disks";
    args[a++] = v->disks;
  }
  if (devices) {
    snprintf(devs, sizeof devs, "%llu", (unsigned long long)devices);
    args[a++] = "--devices";
    args[a++] = devs;
  }
  if (prof[0]) {
    args[a++] = "--profile";
    args[a++] = prof;
  }
  if (lvmconf) {
    args[a++] = "--lvm-conf";
    args[a++] = lvmconf;
  }
  if (v->timeout) {
    args[a++] = "--timeout";
    args[a++] = v->timeout;
  } else if (plan) {
    /* workloads at 10 ms per I/O under TCG take minutes per boot
     * (mirror-log-latency: ~5 min at load 8) */
    args[a++] = "--timeout";
    args[a++] = "1800";
  }
  if (v->cache) {
    args[a++] = "--cache";
    args[a++] = v->cache;
  }
  if (v->keep)
    args[a++] = "--keep";
  if (json) {
    args[a++] = "--json";
    args[a++] = json;
  }
  if (!strcmp(v->boot, "initramfs")) {
    if (strcmp(transport, "scsi")) {
      args[a++] = "--transport";
      args[a++] = transport;
    }
    /* the nbd-client check: moot when every device is attached over nbd */
    if (strcmp(v->nbd, "0") && !strcmp(transport, "scsi")) {
      args[a++] = "--nbd-client";
      args[a++] = v->nbd;
    }
    if (plan) {
      args[a++] = "--plan";
      args[a++] = plan;
      args[a++] = "--result";
      args[a++] = result;
      /* fio's layer (guest/build-fio-layer.sh: fio, mkfs.ext4, mkfs.xfs)
       * only for io and fs workloads */
      if (has_io(v->sc))
        args[a++] = "--fio";
      if (lvm) {
        args[a++] = "--lvm";
        args[a++] = lvm->path;
      }
    }
  } else {
    args[a++] = "--out";
    args[a++] = out;
    if (lvm) {
      args[a++] = "--lvm";
      args[a++] = lvm->path;
    }
  }
  args[a++] = v->spec;
  args[a] = NULL;

  fprintf(stderr, "fusefarm vm: %s boot of %s%s%s%s%s, lvm %s%s\n", v->boot,
          v->sc ? v->sc->file : v->spec, prof[0] ? ", profile " : "",
          prof[0] ? prof : "", devs[0] ? ", devices " : "", devs,
          lvm ? lvm->version : "of the guest (Debian)",
          strcmp(transport, "scsi") ? ", farm over the guest's nbd-client"
                                    : "");
  a = run_script((char **)args);
  return a == 0 ? 0 : a == 2 ? 2 : 1;
}

/* --- the scenario's workloads in the guest ------------------------------ */

static json_t *
plan_workloads(const struct ff_scenario *sc)
{
  json_t *a = json_array();

  for (unsigned i = 0; a && i < sc->nworkloads; i++) {
    const struct ff_workload *w = &sc->workloads[i];
    json_t *wj =
      json_pack("{s:s, s:s, s:i, s:i, s:I, s:i, s:s?}", "name", w->name,
                "type", ff_wtype_name(w->type), "repeat", (int)w->repeat,
                "concurrency", (int)w->concurrency, "spread_ns",
                (json_int_t)w->spread_ns, "count", (int)w->count, "lv", w->lv);

    /* an io or fs workload's fio job, as ff-guestrun's workload_of reads
     * it; an fs workload's filesystem with it */
    if (wj && (w->type == FF_W_IO || w->type == FF_W_FS)) {
      json_t *io = json_pack(
        "{s:s, s:s, s:I, s:i, s:b, s:s, s:I, s:I, s:i, s:i, s:i}", "target",
        w->io.target, "rw", w->io.rw, "bs", (json_int_t)w->io.bs, "iodepth",
        (int)w->io.iodepth, "direct", w->io.direct, "ioengine", w->io.ioengine,
        "size", (json_int_t)w->io.size, "runtime_ns",
        (json_int_t)w->io.runtime_ns, "fsync", (int)w->io.fsync, "fdatasync",
        (int)w->io.fdatasync, "numjobs", (int)w->io.numjobs);

      if (io && w->type == FF_W_FS) {
        json_object_set_new(io, "fstype", json_string(w->io.fstype));
        json_object_set_new(io, "mkfs_options",
                            json_string(w->io.mkfs_options));
        json_object_set_new(io, "mount_options",
                            json_string(w->io.mount_options));
        json_object_set_new(io, "nrfiles", json_integer(w->io.nrfiles));
        json_object_set_new(io, "fs_tunables", json_string(w->io.fs_tunables));
        json_object_set_new(io, "mkdirs", json_integer(w->io.mkdirs));
      }
      json_object_set_new(wj, "io", io);
    }
    json_array_append_new(a, wj);
  }
  return a;
}

/* Configuration k's fusefarm/target, fusefarm/fstype,
 * fusefarm/mount_options and fusefarm/fs_tunables, when the matrix has them,
 * into its plan entry (ff-guestrun gives them to the workloads as `fusefarm
 * run` does). */
static void
plan_config_axes(const struct ff_scenario *sc, uint64_t k, unsigned *idx,
                 json_t *entry)
{
  static const char *const keys[][2] = {
    {"fusefarm/target", "target"},
    {"fusefarm/fstype", "fstype"},
    {"fusefarm/mount_options", "mount_options"},
    {"fusefarm/fs_tunables", "fs_tunables"}};

  ff_scenario_config(sc, k, idx);
  for (unsigned a = 0; a < sc->naxes; a++)
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
      if (!strcmp(sc->axes[a].key, keys[i][0]))
        json_object_set_new(entry, keys[i][1],
                            json_string(sc->axes[a].values[idx[a]].s));
}

/* Config idx's "settings" object (ff_config_settings() parsed), or NULL
 * (then json_pack leaves the config out, as for any allocation
 * failure). */
static json_t *
settings_of(const struct ff_scenario *sc, const unsigned *idx)
{
  char *text = ff_config_settings(sc, idx);
  json_t *j = text ? json_loads(text, 0, NULL) : NULL;

  free(text);
  return j;
}

/* Configurations that share a profile, a farm size, an lvm build and a
 * transport share a boot: the plugin serves both, the guest switches
 * lvm.conf (and the io and fs workloads' target, fstype and mount
 * options) between them.  Fills doc's configs; returns the worst boot
 * status. */
static int
run_workloads(struct vm *v, const uint64_t *ks, size_t nk, json_t *doc,
              json_t *boots)
{
  const struct ff_scenario *sc = v->sc;
  char *done = calloc(nk + 1, 1);
  unsigned *idx = calloc(sc->naxes + 1, sizeof *idx);
  /* what decides a boot, per configuration, decoded once */
  struct boot_key {
    const char *prof;
    uint64_t devs;
    const struct ff_lvm_build *lvm;
    const char *transport;
  } *bk = calloc(nk + 1, sizeof *bk);
  json_t *configs = json_object_get(doc, "configs");
  json_t *host = json_object_get(doc, "host");
  int status = 0;

  if (!done || !idx || !bk) {
    free(done);
    free(idx);
    free(bk);
    fprintf(stderr, "fusefarm vm: out of memory\n");
    return 1;
  }
  for (size_t h = 0; h < nk; h++)
    bk[h] = (struct boot_key){profile_of(v, ks[h]), devices_of(v, ks[h]),
                              lvm_for(v, ks[h]), transport_of(v, ks[h])};
  for (size_t g = 0, group = 0; g < nk; g++) {
    char plan[PATH_MAX], path[PATH_MAX + 64], result[PATH_MAX + 64],
      bootj[PATH_MAX + 64];
    const char *prof = bk[g].prof;
    json_t *pj, *pconfs, *res;
    int rc, bad = 0;

    if (done[g])
      continue;
    snprintf(plan, sizeof plan, "%s/plan-%zu", v->tmp, group);
    snprintf(result, sizeof result, "%s/result-%zu.json", v->tmp, group);
    snprintf(bootj, sizeof bootj, "%s/boot-%zu.json", v->tmp, group);
    group++;
    if (mkdir(plan, 0700) < 0) {
      fprintf(stderr, "fusefarm vm: %s: %s\n", plan, strerror(errno));
      status = 1;
      break;
    }
    pconfs = json_array();
    for (size_t h = g; h < nk; h++) {
      const char *ph = bk[h].prof;

      if (done[h] || bk[h].devs != bk[g].devs || bk[h].lvm != bk[g].lvm ||
          strcmp(bk[h].transport, bk[g].transport) ||
          (prof ? !ph || strcmp(prof, ph) : ph != NULL))
        continue;
      done[h] = 1;
      snprintf(path, sizeof path, "%s/lvm-%llu.conf", plan,
               (unsigned long long)ks[h] + 1);
      if (write_lvmconf(sc, ks[h], caps_for(v, ks[h]), path) < 0) {
        bad = 1;
        break;
      }
      snprintf(path, sizeof path, "lvm-%llu.conf",
               (unsigned long long)ks[h] + 1);
      {
        json_t *ce = json_pack("{s:I, s:s}", "id", (json_int_t)ks[h] + 1,
                               "lvm_conf", path);

        if (ce)
          plan_config_axes(sc, ks[h], idx, ce);
        json_array_append_new(pconfs, ce);
      }
    }
    pj = json_pack("{s:o, s:o}", "workloads", plan_workloads(sc), "configs",
                   pconfs);
    snprintf(path, sizeof path, "%s/plan.json", plan);
    if (bad || !pj || json_dump_file(pj, path, JSON_INDENT(2)) < 0) {
      fprintf(stderr, "fusefarm vm: %s: cannot write the plan\n", path);
      json_decref(pj);
      status = 1;
      break;
    }
    json_decref(pj);

    rc = boot_once(v, ks[g], NULL, plan, result, bootj, NULL);
    if (rc > status)
      status = rc;
    if (vm_stop)
      break;
    {
      json_t *bj = json_load_file(bootj, 0, NULL);

      if (bj)
        json_array_append_new(boots, bj);
    }
    res = json_load_file(result, 0, NULL);
    if (!res) {
      fprintf(stderr, "fusefarm vm: no workload result from the guest\n");
      if (!status)
        status = 1;
      continue;
    }
    json_object_set(host, "kernel", json_object_get(res, "kernel"));
    if (!v->have_lvms || v->lvms.n == 1) {
      /* one lvm for the whole run (with several, new_doc listed them) */
      json_object_set(host, "lvm", json_object_get(res, "lvm"));
      json_object_set(host, "lvm_version",
                      json_object_get(res, "lvm_version"));
    }
    {
      size_t i;
      json_t *rc_j;

      json_array_foreach(json_object_get(res, "configs"), i, rc_j)
      {
        uint64_t k =
          (uint64_t)json_integer_value(json_object_get(rc_j, "id")) - 1;
        char label[1024];
        json_t *farm = json_object_get(res, "farm");
        const struct ff_lvm_build *b = lvm_for(v, k);

        ff_scenario_config(sc, k, idx);
        ff_config_label(sc, idx, label, sizeof label);
        /* which lvm ran it: the guest says (the build's copy, or its
         * own lvm2) */
        json_array_append_new(
          configs,
          json_pack("{s:I, s:s, s:o, s:{s:s, s:O, s:O, s:O}, s:s, s:b, s:O, "
                    "s:{s:O, s:O, s:s}}",
                    "id", (json_int_t)k + 1, "label", label, "settings",
                    settings_of(sc, idx), "farm", "spec", v->spec, "devices",
                    json_object_get(farm, "devices"), "vgs",
                    json_object_get(farm, "vgs"), "lvs",
                    json_object_get(farm, "lvs"), "profile",
                    prof ? prof : "builtin:ideal", "aio_contention", 0,
                    "workloads", json_object_get(rc_j, "workloads"), "lvm",
                    "path", json_object_get(res, "lvm"), "version",
                    json_object_get(res, "lvm_version"), "label",
                    b ? b->label : "guest"));
      }
    }
    json_decref(res);
  }
  free(done);
  free(idx);
  free(bk);
  return status;
}

/* The run's lvm for the document's host: the one build, "several" (the
 * versions go to lvm_version), or the guest's own. */
static const char *
lvm_of(const struct vm *v)
{
  if (v->have_lvms && v->lvms.n > 1)
    return NULL;
  return v->have_lvms && strcmp(v->lvms.b[0].entry, "lvm")
           ? v->lvms.b[0].path
           : "the guest's lvm2";
}

static json_t *
new_doc(const struct vm *v)
{
  char started[32], versions[1024] = "?";
  const struct ff_scenario *sc = v->sc;
  json_t *notes = json_array();

  ff_iso_now(started, sizeof started);
  if (v->have_lvms && v->lvms.n > 1) {
    size_t n = 0;

    for (unsigned i = 0; i < v->lvms.n && n < sizeof versions; i++)
      n += (size_t)snprintf(versions + n, sizeof versions - n, "%s%s",
                            i ? ", " : "", v->lvms.b[i].version);
    json_array_append_new(notes,
                          json_sprintf("lvm builds side by side: %s (the "
                                       "fusefarm/lvm axis)",
                                       versions));
  }
  json_array_append_new(
    notes, json_string("ran in a qemu guest (fusefarm vm --boot initramfs): "
                       "real device-mapper activation; every repetition "
                       "starts with all VGs deactivated and /run/lvm empty"));
  if (v->disks)
    json_array_append_new(
      notes, json_sprintf("--disks %s: only the farm's first %s devices "
                          "were attached",
                          v->disks, v->disks));
  if (ff_scenario_uses_nbd(sc))
    json_array_append_new(
      notes, json_string("fusefarm/transport \"nbd\": those configurations' "
                         "farm devices were attached with the guest's kernel "
                         "nbd client (nbd-client over slirp TCP to the "
                         "host's nbdkit, /dev/nbdN), not as virtio-scsi "
                         "disks; one boot per transport"));
  if (ff_scenario_axis(sc, "fusefarm/aio_contention") ||
      ff_scenario_axis(sc, "fusefarm/aio_inflight"))
    json_array_append_new(
      notes, json_string("fusefarm/aio_contention is not applied in the "
                         "guest: no aio companion runs there"));
  return json_pack(
    "{s:s, s:i, s:{s:s, s:s, s:s?}, s:s, s:{s:s, s:i, s:s?, s:s, s:s, s:b}, "
    "s:o, s:[]}",
    "format", "fusefarm-run", "version", 1, "scenario", "name", sc->name,
    "file", sc->file, "description", sc->description, "started", started,
    "host", "kernel", "?", "cpus", 2, "lvm", lvm_of(v), "lvm_version",
    versions, "fusefarm_version", FF_VERSION, "device_mapper", 1, "notes",
    notes, "configs");
}

int
ff_cmd_vm(int argc, char **argv)
{
  enum {
    O_DISKS = 256,
    O_BOOT,
    O_PROFILE,
    O_TIMEOUT,
    O_CACHE,
    O_KEEP,
    O_JSON,
    O_NBD,
    O_CONFIG,
    O_OUT,
    O_CSV,
    O_SVG,
    O_LVM,
    O_LVM_GIT,
    O_TOP,
    O_PATHS,
    O_PREPARE,
  };
  static const struct option opts[] = {
    {"disks", required_argument, NULL, O_DISKS},
    {"boot", required_argument, NULL, O_BOOT},
    {"profile", required_argument, NULL, O_PROFILE},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"cache", required_argument, NULL, O_CACHE},
    {"keep", no_argument, NULL, O_KEEP},
    {"json", required_argument, NULL, O_JSON},
    {"nbd-client", required_argument, NULL, O_NBD},
    {"config", required_argument, NULL, O_CONFIG},
    {"out", required_argument, NULL, O_OUT},
    {"csv", required_argument, NULL, O_CSV},
    {"svg", required_argument, NULL, O_SVG},
    {"lvm", required_argument, NULL, O_LVM},
    {"lvm-git", required_argument, NULL, O_LVM_GIT},
    {"top", required_argument, NULL, O_TOP},
    {"paths", no_argument, NULL, O_PATHS},
    {"prepare", no_argument, NULL, O_PREPARE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  struct vm v = {.boot = "initramfs", .nbd = "2"};
  const char *json = NULL, *csv = NULL, *svg = NULL, *env;
  /* the run directory of a workloads run (ff-rundir.h), "" when none */
  char run_dir[PATH_MAX] = "", json_default[PATH_MAX + 16],
       svg_default[PATH_MAX + 16], txt_path[PATH_MAX + 16] = "";
  int made_dir = 0;
  const char *lvm[32], *lvm_git = NULL;
  unsigned nlvm = 0;
  unsigned long long num, config = 0, top = FF_RUNREPORT_TOP;
  int c, rc = 2, is_spec = 0, have_config = 0, have_tmp = 0, paths = 0;
  int prepare = 0, boot_set = 0;
  uint64_t *ks = NULL, nk = 0;
  char guest[PATH_MAX], outdir[PATH_MAX], lvmconf[PATH_MAX + 32];
  char scpath[PATH_MAX + 64];

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case O_DISKS:
      if (ff_cli_number("vm", "--disks", optarg, 1, 4096, &num))
        return 2;
      v.disks = optarg;
      break;
    case O_BOOT:
      if (strcmp(optarg, "initramfs") && strcmp(optarg, "systemd"))
        return ff_cli_usage("vm", "--boot %s: expected initramfs or systemd",
                            optarg);
      v.boot = optarg;
      boot_set = 1;
      break;
    case O_PROFILE:
      v.profile = optarg;
      break;
    case O_TIMEOUT:
      if (ff_cli_number("vm", "--timeout", optarg, 1, 86400, &num))
        return 2;
      v.timeout = optarg;
      break;
    case O_CACHE:
      v.cache = optarg;
      break;
    case O_KEEP:
      v.keep = 1;
      break;
    case O_JSON:
      json = optarg;
      break;
    case O_CSV:
      csv = optarg;
      break;
    case O_SVG:
      svg = optarg;
      break;
    case O_LVM:
      if (nlvm == sizeof lvm / sizeof *lvm)
        return ff_cli_usage("vm", "--lvm: at most %zu builds",
                            sizeof lvm / sizeof *lvm);
      lvm[nlvm++] = optarg;
      break;
    case O_LVM_GIT:
      lvm_git = optarg;
      break;
    case O_TOP:
      if (ff_cli_number("vm", "--top", optarg, 0, 100000, &top))
        return 2;
      break;
    case O_NBD:
      if (ff_cli_number("vm", "--nbd-client", optarg, 0, 64, &num))
        return 2;
      v.nbd = optarg;
      break;
    case O_CONFIG:
      if (ff_cli_number("vm", "--config", optarg, 1, 1000000, &config))
        return 2;
      have_config = 1;
      break;
    case O_OUT:
      v.out = optarg;
      break;
    case O_PATHS:
      paths = 1;
      break;
    case O_PREPARE:
      prepare = 1;
      break;
    case 'h':
      fputs(vm_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("vm", c, argv, opts);
    }
  }
  if (argc - optind > 1)
    return ff_cli_usage("vm",
                        "too many arguments (from '%s'; expected at most "
                        "one SCENARIO or SPEC)",
                        argv[optind + 1]);

  /* The program's own files: the guest scripts, in-guest binaries and
   * plugin (ff-paths.h). */
  if (ff_paths_find(&v.paths) < 0) {
    fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
    return 1;
  }
  env = getenv("FF_GUEST_DIR");
  if (snprintf(guest, sizeof guest, env && *env ? "%s" : "%s/guest",
               env && *env ? env : v.paths.datadir) >= (int)sizeof guest) {
    fprintf(stderr, "fusefarm vm: the guest scripts' path is too long\n");
    return 1;
  }
  if (paths) {
    printf("program     %s\n"
           "layout      %s\n"
           "datadir     %s\n"
           "guest       %s\n"
           "libexecdir  %s\n"
           "plugin      %s\n"
           "tmpdir      %s\n",
           v.paths.exe, v.paths.from, v.paths.datadir, guest,
           v.paths.libexecdir, v.paths.plugin, ff_tmpdir());
    return 0;
  }
  if (prepare)
    return prepare_images(guest, boot_set ? v.boot : NULL, v.cache,
                          argc - optind);

  /* A scenario, else a plain spec. */
  if (argc - optind == 1) {
    enum ff_cfg_kind kind;

    argv[optind] =
      (char *)ff_paths_scenario(argv[optind], scpath, sizeof scpath);
    kind = ff_cfg_kind_of_file(argv[optind]);
    if (kind != FF_CFG_UNKNOWN && kind != FF_CFG_SCENARIO &&
        kind != FF_CFG_SPEC) {
      char msg[2 * PATH_MAX + 256];

      fprintf(stderr, "fusefarm vm: %s\n",
              ff_cfg_kind_mismatch(kind, FF_CFG_UNKNOWN, argv[optind], msg,
                                   sizeof msg));
      return 2;
    }
    /* A clear spec or scenario gets its own loader's message alone. */
    v.sc = kind == FF_CFG_SPEC ? NULL : ff_scenario_load_file(argv[optind]);
    if (!v.sc && kind == FF_CFG_SCENARIO) {
      fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
      return 2;
    }
    /* The guest's runner repeats a fixed number of times, in order. */
    for (unsigned i = 0; v.sc && i < v.sc->nworkloads; i++)
      if (v.sc->workloads[i].repeat_auto) {
        fprintf(stderr,
                "fusefarm vm: %s: workload %s: repeat = \"auto\" is for "
                "fusefarm run (give the guest a number)\n",
                argv[optind], v.sc->workloads[i].name);
        return 2;
      }
    if (!v.sc && kind == FF_CFG_SPEC) {
      struct ff_farm *farm = ff_cli_load_farm("vm", argv[optind]);

      if (!farm)
        return 2;
      ff_farm_free(farm);
      is_spec = 1;
    } else if (!v.sc) {
      char *serr = strdup(ff_errmsg());
      struct ff_farm *farm = ff_cli_load_farm("vm", argv[optind]);

      if (!farm) {
        fprintf(stderr,
                "fusefarm vm: %s is neither a scenario (%s) nor a "
                "spec (above)\n",
                argv[optind], serr ? serr : "?");
        free(serr);
        return 2;
      }
      free(serr);
      ff_farm_free(farm);
      is_spec = 1;
    }
  } else {
    v.sc =
      ff_scenario_load_string(ff_scenario_builtin_default, "default", NULL);
    if (!v.sc) {
      fprintf(stderr, "fusefarm vm: built-in scenario: %s\n", ff_errmsg());
      return 2;
    }
  }

  if (v.sc && ff_scenario_uses_nbd(v.sc) && !strcmp(v.boot, "systemd")) {
    fprintf(stderr,
            "fusefarm vm: the matrix axis fusefarm/transport has \"nbd\": "
            "only the initramfs boot attaches the farm with the guest's nbd "
            "client (the systemd boot's disks are virtio-scsi); drop --boot "
            "systemd\n");
    rc = 2;
    goto out;
  }
  if (v.sc && ff_scenario_axis(v.sc, "fusefarm/spec")) {
    fprintf(stderr,
            "fusefarm vm: the matrix axis fusefarm/spec changes the farm per "
            "configuration: a guest boots with one farm's disks; run each "
            "farm as a scenario of its own (spec = ...), or use fusefarm "
            "run\n");
    rc = 2;
    goto out;
  }
  /* The guest activates with real device-mapper, always. */
  if (v.sc) {
    enum ff_dm_asker none = ff_scenario_dm_asks(v.sc, NULL, "none");

    if (none) {
      fprintf(stderr,
              "fusefarm vm: %s \"none\": the guest always activates with "
              "real device-mapper; --driverloaded n is `fusefarm run`'s "
              "(dm = \"none\")\n",
              none == FF_DM_ASKED_AXIS ? "the fusefarm/dm axis has" : "dm =");
      rc = 2;
      goto out;
    }
  }
  /* The lvm builds: --lvm, else the scenario's lvm or fusefarm/lvm
   * axis; resolved (built from a ref if need be) before anything boots,
   * unless every one is the guest's own lvm2 ("lvm"). */
  ff_lvm_caps_for(2, 3, 16, &v.guest_caps);
  if (!v.sc && nlvm > 1) {
    rc = ff_cli_usage("vm",
                      "--lvm given %u times: several builds are a matrix "
                      "axis, which needs a scenario, not a plain spec",
                      nlvm);
    goto out;
  }
  if (v.sc && ff_scenario_set_lvms(v.sc, lvm, nlvm) < 0) {
    fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
    goto out;
  }
  {
    static char guest_lvm[] = "lvm";
    struct ff_scenario one = {.lvm = nlvm ? (char *)lvm[0] : guest_lvm};
    struct ff_scenario *rs = v.sc ? v.sc : &one;

    if (strcmp(rs->lvm, "lvm") || ff_scenario_axis(rs, "fusefarm/lvm")) {
      rc = ff_lvm_set_resolve(&v.lvms, rs, lvm_git, v.paths.exe, "fusefarm vm",
                              0);
      v.have_lvms = 1;
      if (rc)
        goto out;
      rc = 2;
    }
  }
  /* The whole scenario checked before anything boots, as `fusefarm run`
   * checks it (lvm.conf keys against each build's own list, profiles,
   * values): against the builds resolved above, else against this
   * host's lvm as a stand-in for the guest's Debian lvm2 (2.03.16 on a
   * Debian 12 host; without one, the keys are the guest's to judge). */
  if (v.sc) {
    struct ff_lvm_set host = {0};
    const struct ff_lvm_set *cl = v.have_lvms ? &v.lvms : NULL;

    char found[PATH_MAX];

    if (!cl && ff_on_path("lvm", found, sizeof found) &&
        ff_lvm_set_resolve(&host, v.sc, NULL, v.paths.exe, "fusefarm vm", 1) ==
          0)
      cl = &host;
    if (cl)
      rc = ff_run_check("fusefarm vm", v.sc, cl, 0);
    else
      rc = 0;
    if (!cl)
      fprintf(stderr, "fusefarm vm: note: no lvm on this host to check the "
                      "scenario's lvm.conf keys against: the guest's lvm2 "
                      "judges them\n");
    ff_lvm_set_free(&host);
    if (rc)
      goto out;
    rc = 2;
  }
  /* The configurations to boot: --config K (1-based, as the run table
   * numbers them), else all of them. */
  nk = v.sc ? ff_scenario_nconfigs(v.sc) : 1;
  if (have_config && config > nk) {
    fprintf(stderr,
            "fusefarm vm: --config %llu: the scenario has %llu "
            "configuration%s\n",
            config, (unsigned long long)nk, nk == 1 ? "" : "s");
    goto out;
  }
  ks = calloc(nk, sizeof *ks);
  if (!ks)
    goto out;
  if (have_config) {
    ks[0] = config - 1;
    nk = 1;
  } else {
    for (uint64_t k = 0; k < nk; k++)
      ks[k] = k;
  }
  if (v.sc && v.sc->attach && strcmp(v.sc->attach, "loop"))
    fprintf(stderr,
            "fusefarm vm: note: attach = \"%s\" is ignored: in the "
            "guest the farm's disks are virtio-scsi (or nbd: the matrix "
            "axis fusefarm/transport)\n",
            v.sc->attach);
  if (v.have_lvms && !strcmp(v.boot, "initramfs") &&
      (!v.sc || !v.sc->nworkloads))
    fprintf(stderr,
            "fusefarm vm: note: in the initramfs boot the lvm builds run "
            "the workloads only; this scenario has none, so the boot runs "
            "the guest's Debian lvm2 (the systemd boot runs a build: "
            "--boot systemd)\n");
  /* A workloads run's outputs go into a run directory, as `fusefarm
   * run`'s do: --out DIR, else a new ./fusefarm-vm-NAME-STAMP, unless
   * --json, --csv or --svg names where they go. */
  if (v.sc && v.sc->nworkloads && !strcmp(v.boot, "initramfs") &&
      (v.out || (!json && !csv && !svg))) {
    if (v.out && ff_rundir_check("vm", v.out) != 0) {
      rc = 2;
      goto out;
    }
    if (ff_rundir_make(v.out, "vm", v.sc->name, run_dir, &made_dir) < 0) {
      fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
      goto out;
    }
    if (!json) {
      snprintf(json_default, sizeof json_default, "%s/run.json", run_dir);
      json = json_default;
    }
    if (!svg) {
      snprintf(svg_default, sizeof svg_default, "%s/run.svg", run_dir);
      svg = svg_default;
    }
    snprintf(txt_path, sizeof txt_path, "%s/report.txt", run_dir);
    fprintf(stderr, "fusefarm vm: run directory: %s\n", run_dir);
  }
  if (v.sc && v.sc->nworkloads && strcmp(v.boot, "initramfs"))
    fprintf(stderr,
            "fusefarm vm: note: the systemd boot measures boot-time "
            "activation; the scenario's %u workloads run with --boot "
            "initramfs\n",
            v.sc->nworkloads);
  if (!v.profile && v.sc && v.sc->latency_ns && !v.sc->profile)
    fprintf(stderr, "fusefarm vm: note: latency shorthand is not passed to "
                    "the guest's plugin; give a profile file\n");

  snprintf(v.script, sizeof v.script, "%s/run-%s.sh", guest, v.boot);
  if (access(v.script, R_OK) != 0) {
    fprintf(stderr,
            "fusefarm vm: %s: %s (%s layout of %s; set FUSEFARM_DATADIR to "
            "the directory holding guest/, or FF_GUEST_DIR)\n",
            v.script, strerror(errno), v.paths.from, v.paths.exe);
    goto out;
  }
  {
    char check[PATH_MAX + 32];

    snprintf(check, sizeof check, "%s/ff-dmcheck", v.paths.libexecdir);
    if (ff_paths_require(&v.paths, v.paths.plugin, "the nbd plugin",
                         "FUSEFARM_PLUGIN") < 0 ||
        (!strcmp(v.boot, "initramfs") &&
         ff_paths_require(&v.paths, check, "the in-guest checker",
                          "FUSEFARM_LIBEXECDIR") < 0)) {
      fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
      goto out;
    }
  }
  if (strlen(ff_tmpdir()) > sizeof v.tmp - 16) {
    fprintf(stderr, "fusefarm vm: TMPDIR is too long\n");
    goto out;
  }
  snprintf(v.tmp, sizeof v.tmp, "%s/ff-vm.XXXXXX", ff_tmpdir());
  if (!mkdtemp(v.tmp)) {
    fprintf(stderr, "fusefarm vm: mkdtemp %s: %s\n", v.tmp, strerror(errno));
    goto out;
  }
  have_tmp = 1;

  /* spec */
  if (is_spec) {
    snprintf(v.spec, sizeof v.spec, "%s", argv[optind]);
  } else if (v.sc->farm) {
    snprintf(v.spec, sizeof v.spec, "%s/farm.conf", v.tmp);
    if (write_file(v.spec, v.sc->farm) < 0)
      goto out;
  } else if (materialize("spec", v.sc->spec ? v.sc->spec : "builtin:default",
                         v.tmp, v.spec, sizeof v.spec) < 0) {
    goto out;
  }

  if (v.sc && v.sc->nworkloads && !strcmp(v.boot, "initramfs")) {
    json_t *doc = new_doc(&v), *boots = json_array();
    char finished[32];

    rc = run_workloads(&v, ks, nk, doc, boots);
    /* A timed command that failed makes the run a failure, as it does
     * for `fusefarm run`: its numbers time an error path. */
    if (failed_commands(doc) && !rc)
      rc = 1;
    ff_iso_now(finished, sizeof finished);
    json_object_set_new(doc, "finished", json_string(finished));
    json_object_set_new(
      doc, "guest",
      json_pack("{s:s, s:o}", "boot", "initramfs", "boots", boots));
    if (json_array_size(json_object_get(doc, "configs"))) {
      char *text = json_dumps(doc, JSON_COMPACT);
      struct ff_runreport *rr =
        text ? ff_runreport_load_text(text, strlen(text), NULL) : NULL;

      if (!text)
        ff_error("run document: out of memory");
      struct ff_rundir_outputs outs = {txt_path, csv, svg, (int)top};

      if (!rr || (json && json_dump_file(doc, json, JSON_INDENT(2)) < 0) ||
          ff_rundir_render(rr, &outs) < 0) {
        fprintf(stderr, "fusefarm vm: writing the report failed: %s\n",
                ff_errmsg());
        rc = 1;
      }
      ff_runreport_free(rr);
      free(text);
    }
    json_decref(doc);
    goto out;
  }

  /* One boot per configuration (a spec: one). */
  {
    json_t *all = json_array();

    rc = 0;
    for (uint64_t i = 0; i < nk; i++) {
      char bootj[PATH_MAX + 64];
      const char *conf = NULL, *o = v.out;
      int r;

      snprintf(bootj, sizeof bootj, "%s/boot-%llu.json", v.tmp,
               (unsigned long long)i);
      if (v.sc) {
        snprintf(lvmconf, sizeof lvmconf, "%s/lvm.conf", v.tmp);
        if (nk > 1) {
          char label[1024];
          unsigned *idx = calloc(v.sc->naxes + 1, sizeof *idx);

          if (idx) {
            ff_scenario_config(v.sc, ks[i], idx);
            ff_config_label(v.sc, idx, label, sizeof label);
            free(idx);
            fprintf(stderr,
                    "fusefarm vm: [%llu/%llu] configuration %llu: %s\n",
                    (unsigned long long)i + 1, (unsigned long long)nk,
                    (unsigned long long)ks[i] + 1, label);
          }
        }
        r = write_lvmconf(v.sc, ks[i], caps_for(&v, ks[i]), lvmconf);
        if (r < 0) {
          rc = 1;
          break;
        }
        if (r > 0)
          conf = lvmconf;
      }
      if (!strcmp(v.boot, "systemd")) {
        if (!o) {
          snprintf(outdir, sizeof outdir, "fusefarm-vm-%s",
                   v.sc && v.sc->name ? v.sc->name : "spec");
          o = outdir;
        }
        if (nk > 1) {
          char *sub;

          if (asprintf(&sub, "%s/config-%llu", o,
                       (unsigned long long)ks[i] + 1) < 0) {
            rc = 1;
            break;
          }
          if (ff_mkdir(o, 0755) < 0) {
            fprintf(stderr, "fusefarm vm: %s\n", ff_errmsg());
            free(sub);
            rc = 1;
            break;
          }
          snprintf(outdir, sizeof outdir, "%s", sub);
          free(sub);
          o = outdir;
        }
      }
      r = boot_once(&v, ks[i], conf, NULL, NULL, bootj, o);
      if (r > rc)
        rc = r;
      {
        /* a boot that ended without timings (timeout, panic) still has
         * its row: status 1 */
        json_t *bj = json_load_file(bootj, 0, NULL);

        if (!bj)
          bj = json_pack("{s:s, s:i, s:s}", "boot", v.boot, "status", 1,
                         "error", "the boot ended without a result");
        if (v.sc)
          json_object_set_new(bj, "config",
                              json_integer((json_int_t)ks[i] + 1));
        json_array_append_new(all, bj);
      }
      if (r == 2 || vm_stop)
        break;
    }
    if (nk > 1) {
      size_t i;
      json_t *bj;

      printf("== fusefarm vm: %llu configurations, %s boot\n",
             (unsigned long long)nk, v.boot);
      json_array_foreach(all, i, bj)
      {
        const json_t *up = json_object_get(bj, "guest_uptime_s");
        const json_t *t = json_object_get(
          up, strcmp(v.boot, "systemd") ? "activated" : "lvs_active");

        printf("  config %-3lld %-4s  ",
               (long long)json_integer_value(json_object_get(bj, "config")),
               json_integer_value(json_object_get(bj, "status")) ? "FAIL"
                                                                 : "pass");
        if (json_is_number(t))
          printf("%s %7.2f s (guest uptime)\n",
                 strcmp(v.boot, "systemd") ? "activated at"
                                           : "every LV active at",
                 json_number_value(t));
        else
          printf("%s\n", json_string_value(json_object_get(bj, "error"))
                           ? json_string_value(json_object_get(bj, "error"))
                           : "not every LV became active");
      }
    }
    if (json) {
      json_t *w =
        nk > 1 ? json_incref(all) : json_incref(json_array_get(all, 0));

      if (w && json_dump_file(w, json, JSON_INDENT(2)) < 0) {
        fprintf(stderr, "fusefarm vm: %s: cannot write\n", json);
        rc = rc ? rc : 1;
      }
      json_decref(w);
    }
    json_decref(all);
  }

out:
  if (run_dir[0])
    ff_rundir_summary("vm", run_dir, rc, json, made_dir);
  if (have_tmp) {
    /* everything in it is ours: specs, profiles, plans, results */
    ff_empty_dir(v.tmp);
    rmdir(v.tmp);
  }
  free(ks);
  ff_lvm_set_free(&v.lvms);
  ff_scenario_free(v.sc);
  return rc;
}
