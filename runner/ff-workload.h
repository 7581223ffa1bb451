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
 * points to; ff_workload_run() records what it measured in a result object
 * (struct ff_wresult) the caller made and frees; the caller takes it as
 * the JSON text of one "workloads" entry of its run document.
 */
#ifndef FF_WORKLOAD_H
#define FF_WORKLOAD_H

#include "ff-fence.h"
#include "ff-scenario.h"
#include "ff-spawn.h"
#include "ff-util.h" /* ff_pathf */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The farm's request counters since the last cold start (stats.json's
 * counters, docs/stats.md). */
struct ff_wcounters {
  long long reads, bytes_read, writes, bytes_written, flushes;
};

struct ff_wenv {
  const char *lvm;    /* argv[0] of every lvm command */
  const char *fio;    /* fio for io workloads; NULL: $FF_FIO, else fio */
  const char *outdir; /* each command's TAG.out and TAG.err go here */
  uint32_t ndevs;
  char **names;         /* [ndevs] the farm's device names */
  char **paths;         /* [ndevs] block device, NULL when not present */
  char **vgs;           /* [ndevs] VG of a PV, NULL otherwise */
  const char *first_lv; /* "VG/LV" for lvchange, or NULL */
  int no_dm;            /* activation with --driverloaded n */
  /* The block device io target "ram" names: the guest's RAM disk (brd's
   * /dev/ram0, fusefarm vm), a baseline with no farm below it.  NULL: no
   * RAM disk here (the host). */
  const char *ram_disk;
  /* The configuration's fusefarm/target, fusefarm/fstype,
   * fusefarm/mount_options and fusefarm/fs_tunables: they replace every io
   * and fs workload's target, every fs workload's fstype, mount options
   * and sysfs tunables (NULL: the workload's own). */
  const char *target, *fstype, *mount_options, *fs_tunables;
  /* How event activation runs (enum ff_lvm_dialect, ff-fence.h): as the
   * lvm build's own udev rule and systemd units did.  0: 2.03.15+. */
  int dialect;
  volatile sig_atomic_t *stop; /* set by a signal handler: stop soon */
  /* lvm's environment: "NAME", "VALUE", ..., NULL, set in every lvm
   * command (ff-spawn.h); NULL: the caller's own. */
  const char *const *env;
  /* Before each repetition: make the start cold (NULL: nothing). */
  void (*cold)(void *ctx);
  /* After each repetition: the farm's reads and bytes read since the
   * last cold start (NULL: not known; the workload has no "reads"). */
  void (*reads)(void *ctx, long long *reads, long long *bytes);
  /* After each repetition: the farm's counters, of device dev (a farm
   * device name, for an io workload's target) or, dev NULL, of the whole
   * farm (writes, bytes_written, flushes of every run).  0, or -1 when
   * they cannot be read (NULL: not known; left out). */
  int (*counters)(void *ctx, const char *dev, struct ff_wcounters *out);
  /* One finished line for the log, and a progress line that a terminal
   * rewrites (either NULL: quiet). */
  void (*say)(void *ctx, const char *line);
  void (*progress)(void *ctx, const char *line);
  void *ctx;
};

/* What one ff_workload_run() measured: the members of one "workloads"
 * entry of the run document (docs/run-json.md).  Opaque; not shared
 * between threads. */
struct ff_wresult;

/* An empty result.  NULL with ff_error: out of memory. */
struct ff_wresult *ff_wresult_new(void);

/* The failed commands of all of res's runs, and (message non-NULL) the
 * error line of the first one (ff_lvm_error_line; "" when none failed;
 * the string belongs to res). */
long long ff_wresult_failed(const struct ff_wresult *res,
                            const char **message);

/* Frees res.  NULL is a no-op. */
void ff_wresult_free(struct ff_wresult *res);

/* How many runs (repetitions) res holds: 0 when the workload was
 * interrupted before its first run, and then the run document leaves the
 * entry out. */
size_t ff_wresult_nruns(const struct ff_wresult *res);

/* res as the JSON text of the "workloads" entry, one compact object with
 * its members in document order (malloc'd; caller frees).  NULL with
 * ff_error: out of memory. */
char *ff_wresult_json_text(const struct ff_wresult *res);

/* Run workload w (all its repetitions) and record in res, replacing what
 * it held, the members of one "workloads" entry of the run document.
 * Returns 0, or -1 when it could not go on (ff_error set; what ran is
 * still in res).
 *
 * An io workload runs fio (e->fio) with a job file written into
 * e->outdir against its target: a farm device's path from e->paths (by
 * its name in e->names), the RAM disk (target "ram": e->ram_disk), or
 * an LV's /dev/VG/LV, which needs
 * device-mapper: with e->no_dm it is refused (-1, ff_io_target_check's
 * message).  A fio that cannot start, exits non-zero, reports a job
 * error or prints no document is a failed command, like a failed lvm
 * command; each run gets an "io" object (docs/run-json.md).
 *
 * An fs workload makes the filesystem on its target (mkfs.ext4 or
 * mkfs.xfs, found on PATH), mounts it on e->outdir/TAG.mnt, runs its fio
 * job on nrfiles files per job there and unmounts it, in every
 * repetition; a failed mkfs, mount or umount is a failed command. */
int ff_workload_run(const struct ff_wenv *e, const struct ff_workload *w,
                    struct ff_wresult *res);

/* The io target that names the guest's RAM disk (ff_wenv's ram_disk). */
#define FF_IO_RAM_TARGET "ram"

/* 0 when an io or fs workload's target can run here, else -1 with
 * ff_error saying why not: on the host (no_dm: no device-mapper, no RAM
 * disk), an LV target ("VG/LV") or the RAM disk ("ram").  The message
 * names the workload and target and says to use `fusefarm vm`. */
int ff_io_target_check(const struct ff_workload *w, int no_dm);

/* Event activation's commands in dialect d (enum ff_lvm_dialect):
 * argv[1..] of the command a device's arrival runs (dev: its path,
 * devno: "MAJ:MIN"), and of the command a complete VG gets (0 when the
 * dialect runs none: the device's pvscan activates the VG itself).
 * argv[0] is left NULL for the caller's lvm; argv has room for 16.
 * Returns the number of entries set before the terminating NULL, 0 for
 * none (FF_DIALECT_NONE has neither). */
int ff_event_device_argv(int d, int no_dm, const char *dev, const char *devno,
                         const char **argv);
int ff_event_vg_argv(int d, int no_dm, const char *vg, const char **argv);

/* The "command" member of an event-activation workload in dialect d. */
const char *ff_event_command(int d, int no_dm);

/* The line of an lvm command's stderr text that says what failed, into
 * buf: the first line that is not one of lvm's warnings (`WARNING: ...`,
 * `Configuration setting "..." unknown.`, `File descriptor ... leaked`,
 * deprecation notices, the devices-file and hint notices `Devices file
 * ... is excluded ...`, `PVID ... last written to ...`, `VG ... not using
 * quick activation`), leading blanks dropped; the first line when all
 * are warnings; "(no message)" for an empty text. */
void ff_lvm_error_line(const char *text, char *buf, size_t len);

/* The label of a configuration whose axis value indexes are idx
 * ("use_aio=1 profile=ssd.conf": short keys, paths by their file name),
 * "default" when the scenario has no axes. */
void ff_config_label(const struct ff_scenario *sc, const unsigned *idx,
                     char *buf, size_t len);

/* Its "settings" object for the run document as compact JSON text: full
 * keys in axis order, values as numbers or strings (a profile path by its
 * file name).  malloc'd, caller frees; NULL with ff_error: out of
 * memory. */
char *ff_config_settings(const struct ff_scenario *sc, const unsigned *idx);

/* Remove everything inside path (not path itself). */
void ff_empty_dir(const char *path);

/* The first max bytes of a file, NUL-terminated (malloc'd), or NULL. */
char *ff_slurp(const char *path, size_t max);

/* The first line of a file (a command's stderr) into buf, or "(no
 * message)". */
void ff_first_line(const char *path, char *buf, size_t len);

/* Copy a text file of at most max bytes.  0, or -1 with ff_error set
 * (naming the file). */
int ff_copy_file(const char *src, const char *dst, size_t max);

/* Now in UTC, ISO 8601: "2026-12-01T01:02:03Z". */
void ff_iso_now(char *buf, size_t len);

/* Median of v[0..n-1] (sorts v). */
double ff_median(double *v, size_t n);

#endif
