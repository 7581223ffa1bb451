/* fusefarm: the timed lvm workloads of a scenario, run on whatever
 * devices the caller presents (docs/run-json.md).
 *
 * `fusefarm run` runs them on the host over the farm's loop devices
 * (activation with --driverloaded n, since the host has no
 * device-mapper); `ff-guestrun` runs the same code inside the guest tier's
 * VM over the farm's SCSI disks, with real activation (docs/guest.md).
 * Each caller says how to start an lvm process (its environment), what
 * "cold" means before a repetition, and where the farm's read counters
 * are, through struct ff_wenv.
 *
 * Threads: none; lvm commands are child processes (ff-spawn.h), started
 * with lvm's environment and RLIMIT_NOFILE raised.  Event-style
 * activation keeps up to `concurrency` of them running and starts each
 * device's pvscan at its scheduled arrival time, whatever the running
 * commands do (a due arrival with no free slot is queued, and recorded
 * so); it waits only for the commands it started, so the caller's other
 * children are left alone.  Ownership: the caller owns everything ff_wenv
 * points to; ff_workload_run() adds what it measured to the JSON object it is
 * given.
 */
#ifndef FF_WORKLOAD_H
#define FF_WORKLOAD_H

#include "ff-scenario.h"
#include "ff-spawn.h"

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct ff_wenv {
  const char *lvm;    /* argv[0] of every lvm command */
  const char *outdir; /* each command's TAG.out and TAG.err go here */
  uint32_t ndevs;
  char **names;         /* [ndevs] the farm's device names */
  char **paths;         /* [ndevs] block device, NULL when not present */
  char **vgs;           /* [ndevs] VG of a PV, NULL otherwise */
  const char *first_lv; /* "VG/LV" for lvchange, or NULL */
  int no_dm;            /* activation with --driverloaded n */
  volatile sig_atomic_t *stop; /* set by a signal handler: stop soon */
  /* lvm's environment: "NAME", "VALUE", ..., NULL, set in every lvm
   * command (ff-spawn.h); NULL: the caller's own. */
  const char *const *env;
  /* Before each repetition: make the start cold (NULL: nothing). */
  void (*cold)(void *ctx);
  /* After each repetition: the farm's reads and bytes read since the
   * last cold start (NULL: not known; the workload has no "reads"). */
  void (*reads)(void *ctx, json_int_t *reads, json_int_t *bytes);
  /* One finished line for the log, and a progress line that a terminal
   * rewrites (either NULL: quiet). */
  void (*say)(void *ctx, const char *line);
  void (*progress)(void *ctx, const char *line);
  void *ctx;
};

/* Run workload w (all its repetitions) and fill wl with the members of
 * one "workloads" entry of the run document.  Returns 0, or -1 when it
 * could not go on (ff_error set; what ran is still in wl). */
int ff_workload_run(const struct ff_wenv *e, const struct ff_workload *w,
                    json_t *wl);

/* The label of a configuration whose axis value indexes are idx
 * ("use_aio=1 profile=ssd.conf": short keys, paths by their file name),
 * "default" when the scenario has no axes. */
void ff_config_label(const struct ff_scenario *sc, const unsigned *idx,
                     char *buf, size_t len);

/* Its "settings" object for the run document: full keys, values as
 * numbers or strings (a profile path by its file name).  NULL: out of
 * memory. */
json_t *ff_config_settings(const struct ff_scenario *sc, const unsigned *idx);

/* Remove everything inside path (not path itself). */
void ff_empty_dir(const char *path);

/* The first max bytes of a file, NUL-terminated (malloc'd), or NULL. */
char *ff_slurp(const char *path, size_t max);

/* The first line of a file (a command's stderr) into buf, or "(no
 * message)". */
void ff_first_line(const char *path, char *buf, size_t len);

/* snprintf for paths and tags: a cut leaves an empty string rather than
 * a wrong path. */
void ff_pathf(char *buf, size_t len, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/* Copy a text file of at most max bytes.  0, or -1 with ff_error set
 * (naming the file). */
int ff_copy_file(const char *src, const char *dst, size_t max);

/* Now in UTC, ISO 8601: "2026-12-01T01:02:03Z". */
void ff_iso_now(char *buf, size_t len);

/* Median of v[0..n-1] (sorts v). */
double ff_median(double *v, size_t n);

#endif
