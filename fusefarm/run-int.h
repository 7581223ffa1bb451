/* fusefarm: what the parts of `fusefarm run` share (run.c, the run
 * itself; run-reg.c, its registry entry and watchdog; run-dm.c, real
 * device-mapper; run-aio.c, the aio companion and the 2.02 lvmetad;
 * run-slow.c, the devices the profile made slow; run-farm.c, the farm
 * and the private /dev).
 * One struct run per run, owned by ff_cmd_run; nothing here is thread
 * safe (the runner is one thread; the watchdog is a forked process).
 */
#ifndef FF_RUN_INT_H
#define FF_RUN_INT_H

#include "farm-registry.h"
#include "ff-builtin.h"
#include "ff-cli.h"
#include "ff-ctl.h"
#include "ff-daemon.h"
#include "ff-dm.h"
#include "ff-error.h"
#include "ff-expect.h"
#include "ff-fence.h"
#include "ff-junit.h"
#include "ff-file.h"
#include "ff-paths.h"
#include "ff-plan.h"
#include "ff-privdev.h"
#include "ff-runns.h"
#include "ff-rundir.h"
#include "ff-report.h"
#include "ff-runreport-json.h"
#include "ff-runmanifest.h"
#include "ff-scenario.h"
#include "ff-sched.h"
#include "ff-spec.h"
#include "ff-util.h"
#include "ff-workload.h"
#include "lvm-resolve.h"
#include "run-check.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <linux/aio_abi.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the runner knows of the mounted farm. */
struct farmview {
  uint32_t ndevs;
  char **names; /* [ndevs] */
  char **loops; /* [ndevs] loop device, NULL when not attached */
  char **paths; /* [ndevs] the node lvm sees: in the private /dev, or the
                   loop (NULL when not attached) */
  char **vg;    /* [ndevs] VG of a PV, NULL otherwise */
  uint32_t nvgs, nlvs;
  char *first_lv; /* "VG/LV" or NULL */
};

struct run {
  struct ff_scenario *sc;
  struct ff_lvm_set lvms; /* the scenario's lvm builds (lvm-resolve.h) */
  const char *lvm_path;   /* the current configuration's lvm */
  char self[PATH_MAX];
  char scratch[PATH_MAX];
  char mnt[PATH_MAX + 16], state[PATH_MAX + 16], etc[PATH_MAX + 16];
  char rundir[PATH_MAX + 16], outdir[PATH_MAX + 16];
  int tty, quiet;
  int mounted;
  pid_t daemon_pid;
  /* the transport share attach measured (info.json; docs/fuse.md), ns */
  long long share_ns;
  uint64_t devices; /* current scale, 0: as the spec says */
  const char *spec; /* the mounted farm's spec (NULL: the built-in one) */
  struct farmview fv;
  pid_t aio_pid;
  char lvm_version[128];
  /* the private /dev (ff-privdev.h) */
  enum ff_devnames devnames;
  int privdev_up;          /* mounted over /dev now */
  int privdev_failed;      /* could not be made: fence none is refused */
  unsigned hint_fallbacks; /* hints outside /dev: named /dev/NAME */
  struct ff_privdev_info pd;
  char privdev_err[512];
  /* The lvm build's dialect in the current configuration (ff-fence.h);
   * with FF_DIALECT_LVMETAD the runner's own lvmetad serves it. */
  enum ff_lvm_dialect dialect;
  /* The current configuration's fence: the devices its devices file (or
   * filter) named, of the farm's attached ones; -1: fence none. */
  long fence_listed, fence_present;
  struct ff_proc lvmetad;
  /* Failed timed lvm commands so far, and the summary line's text. */
  long long failed;
  long long failed_io; /* of them, io and fs workloads' */
  struct ff_sb failures;
  /* device-mapper (ff-dm.h): the --dm override, whether the current
   * configuration activates for real, and what its activations made. */
  const char *dm_override;
  int dm_real;
  int dm_udev; /* real, and lvm synchronises with the host's udevd */
  struct dmcount {
    long activations; /* cold starts that found the farm's devices */
    long created;     /* the devices they found, summed */
    long removed;     /* removed by `vgchange -an` */
    long forced;      /* removed by the runner (lvm left them) */
    long max_active;  /* the most at once */
  } dm;
  /* The farm's registry entry (farm-registry.h) and the watchdog. */
  int regfd; /* REGISTRY_DIR, opened before the namespace; -1: none */
  struct ff_reg reg;
  pid_t watchdog;
  /* Flame graphs (run-flame.c): NULL when none are made; flame_off why
   * not, when the scenario asked and perf cannot record ("": said
   * nothing). */
  struct run_flame *flame;
  char flame_off[768];
};

/* Progress on stderr: a line (run_say), or a line that rewrites itself on
 * a terminal and is not printed otherwise (run_progress). */
void run_say(struct run *r, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));
void run_progress(struct run *r, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

/* ---- processes (run.c) */

/* lvm's environment, as ff-spawn.h pairs: the scratch etc/ (its lvm.conf
 * and devices file), no fd warnings, times in UTC (and DM_DISABLE_UDEV
 * for real dm without udev synchronisation). */
#define LVM_ENV_LEN 9
void lvm_env(struct run *r, const char *env[LVM_ENV_LEN]);

/* Run argv (argv[0] found on PATH), stdout and stderr to the given files
 * (NULL: /dev/null), lvm's environment when lvm is set.  Returns the pid,
 * or -1; run_wait waits too and returns the exit status (127: could not
 * exec). */
pid_t spawn(struct run *r, const char *const argv[], const char *out,
            const char *err, int lvm);
int run_wait(struct run *r, const char *const argv[], const char *out,
             const char *err, int lvm);

/* ---- the farm and the private /dev (run-farm.c) */

/* Mount the farm of spec (a path or builtin:NAME; NULL: the built-in
 * default) scaled to devices (0: as the spec says),
 * attach it and cover /dev with the private one; r->fv then describes
 * it.  0, or -1 with ff_error (what is mounted stays for unmount_farm). */
int mount_farm(struct run *r, const char *spec, uint64_t devices);
/* Tear down what mount_farm made (dm devices, private /dev, loops,
 * mount, daemon); a no-op when nothing is mounted. */
void unmount_farm(struct run *r);
void farmview_free(struct farmview *fv);
/* The run document's description of /dev for the current configuration,
 * and the report's notes on /dev and the fence, one line per run of
 * configurations that had the same. */
json_t *dev_json(struct run *r);
void dev_notes(json_t *configs, json_t *notes);

/* ---- the registry entry and the watchdog (run-reg.c) */
void reg_update(struct run *r, int fresh);
void reg_start(struct run *r);
void reg_end(struct run *r);
void watchdog_start(struct run *r);
void watchdog_stop(struct run *r);

/* ---- device-mapper, fusefarm/dm = real (run-dm.c) */
int dm_sweep(struct run *r, int lvm);
void dm_teardown(struct run *r);
int dm_check_clash(struct run *r);
int dm_resolve(struct run *r, const char *mode, int udev_sync);
json_t *dm_json(const struct run *r, const char *requested);

/* ---- the devices the profile made slow (run-slow.c) */
json_t *slow_json(struct run *r);

/* ---- flame graphs, --flamegraph (run-flame.c) */
/* Before anything runs: 0 (graphs on, or not asked, or only the
 * scenario asked and perf cannot: said), or the exit status (2: asked
 * with --flamegraph and perf cannot record). */
int run_flame_setup(struct run *r, int asked);
/* The graphs go beside the run document json_out. */
void run_flame_outdir(struct run *r, const char *json_out);
/* The document's "flame" member, once the configurations ran (and a
 * note when perf could not record). */
void run_flame_doc(struct run *r, json_t *doc);
/* Around a workload: perf started, events off; then folded and drawn. */
void run_flame_begin(struct run *r, unsigned config, const char *label,
                     const char *workload);
void run_flame_end(struct run *r);
/* In wenv_cold: done 0 at its start (a recording stops), 1 at its end
 * (the first repetition's recording starts). */
void run_flame_cold(struct run *r, int done);
void run_flame_free(struct run *r);

/* ---- the aio companion and the 2.02 lvmetad (run-aio.c) */
void aio_companion(struct run *r, long want, unsigned inflight);
int aio_start(struct run *r, unsigned inflight);
void aio_stop(struct run *r);
void lvmetad_stop(struct run *r);
int lvmetad_start(struct run *r);

/* ---- the order of the visits and "schedule" (run-plan.c, ff-plan.h) */
struct run_sched;
/* The document's model (for the verdict, the outputs); NULL with
 * ff_error. */
struct ff_runreport *run_doc_model(json_t *doc);
/* --repeat N (0: none) and --until-confident over every workload of sc;
 * -1 with ff_error when both are given. */
int run_sched_repeat(struct ff_scenario *sc, unsigned repeat, int until);
/* The plan of sc's visits; doc is the run document, which its looks
 * judge (borrowed).  NULL with ff_error. */
struct run_sched *run_sched_new(const struct ff_scenario *sc, json_t *doc);
/* The next visit into *s: 1; 0 when the plan is over; -1 with ff_error.
 * Merges the previous visit's entry first (run_sched_put). */
int run_sched_next(struct run_sched *rs, struct run *r,
                   struct ff_plan_step *s);
/* Whether workload w runs in the visit s. */
bool run_sched_runs(const struct run_sched *rs, const struct ff_plan_step *s,
                    unsigned w);
/* cj (owned from here) as configuration k's entry of configs: a first
 * visit appends it, a later one replaces the entry, whose workloads' runs
 * the next run_sched_next or run_sched_end puts before cj's. */
void run_sched_put(struct run_sched *rs, json_t *configs, uint64_t k,
                   json_t *cj);
/* Merge the last visit, set doc's "schedule" and free rs (NULL: no-op). */
void run_sched_end(struct run_sched *rs, json_t *doc);

#endif
