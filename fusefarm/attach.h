/* fusefarm: the internals of `fusefarm attach` and `fusefarm detach`,
 * shared by their files:
 *   attach-common.c   signals, clock, progress bar, mkdir -p, shell words
 *   attach-state.c    MNT and the state dir; the loops (records) file
 *   attach-devices.c  MNT/.fusefarm/devices, the farm's device list
 *   attach-lvmconf.c  the state dir's lvm config (runner/ff-fence.h)
 *   cmd-attach.c      `fusefarm attach`
 *   cmd-detach.c      `fusefarm detach`
 *
 * State dir (default /run/fusefarm/<MNT's real path, '/' as %2F>/):
 *   loops                        "<loop dev> <device name> <backing file>"
 *                                per attached loop, appended and fsync'd
 *                                right after each attach, so a crash
 *                                leaves an accurate record
 *   created                      "<loop dev>" per loop device attach
 *                                created (LOOP_CTL_GET_FREE made it: it
 *                                did not exist when attach began), written
 *                                before its record; detach deletes exactly
 *                                these once detached (ff_loop_remove)
 *   lvm/lvm.conf, lvmlocal.conf  LVM_SYSTEM_DIR config (ff-fence.h)
 *   lvm/devices/system.devices   the farm's loops, nothing else
 * The state dir is locked (flock on the directory) while a command runs.
 *
 * Errors: functions return 0/-1 (or an fd / -1) after ff_error().
 * Ownership: a struct devlist / records owns its strings; free them with
 * fa_devlist_free / fa_records_free.
 */
#ifndef FF_ATTACH_H
#define FF_ATTACH_H

#include "ff-loop.h"
#include "ff-util.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STATE_ROOT   "/run/fusefarm"
#define DEVICES_LIST ".fusefarm/devices"
#define PROFILE_JSON ".fusefarm/profile.json"

/* Per-loop warnings printed before summarizing the rest in one line. */
#define MAX_WARNINGS 20

/* How long detach keeps retrying loops that are still open elsewhere. */
#define BUSY_WAIT_MS 3000

/* Descriptors attach needs at most at once (stdio, the loop control
 * device, the state dir lock, the loops file, one farm file and its loop
 * node, files it rewrites), with room to spare. */
#define ATTACH_FDS 16

/* Descriptors lvm needs besides one per device (lvm-env.sh, ff_lvm). */
#define LVM_SPARE_FDS 64

/* ---- attach-common.c ---- */

/* The signal SIGINT, SIGTERM or SIGHUP that arrived while caught, or 0. */
extern volatile sig_atomic_t fa_interrupted;

struct signals {
  struct sigaction old[3];
};

/* Catch SIGINT, SIGTERM and SIGHUP into fa_interrupted; restore them. */
void fa_signals_catch(struct signals *s);
void fa_signals_restore(struct signals *s);

/* CLOCK_MONOTONIC in seconds; sleep ms milliseconds. */
double fa_now_s(void);

/* After getopt: exactly one MNT operand, and --state (if given) not
 * empty.  Else print "fusefarm CMD: why" (ff_cli_usage for the operands)
 * and return 2; 0 and *mnt set when all is well. */
int fa_operands(const char *cmd, int argc, char **argv, const char *state_opt,
                const char **mnt);
void fa_sleep_ms(long ms);

/* A progress bar on stderr, drawn only when stderr is a terminal. */
struct progress {
  const char *verb;
  size_t total;
  int on;
  double last;
  int last_pct;
};

void fa_progress_init(struct progress *p, const char *verb, size_t total,
                      int quiet);
void fa_progress_update(struct progress *p, size_t done);
void fa_progress_end(struct progress *p);

/* mkdir -p with mode for every directory created. */
int fa_mkdir_p(const char *path, mode_t mode);

/* Append s to sb, shell-quoted only when it needs it (hint lines). */
void fa_add_shell_word(struct ff_sb *sb, const char *s);

/* ---- attach-state.c ---- */

/* out (PATH_MAX) = a "/" b. */
int fa_join(char *out, const char *a, const char *b);

/* The absolute path of mount point mnt without looking at mnt itself. */
int fa_mount_point_path(const char *mnt, char *out);

/* The real path of MNT into out (PATH_MAX); strict = 0 falls back to the
 * mount point path, then to mnt as written (detach of a dead mount). */
int fa_resolve_mnt(const char *mnt, int strict, char *out);

/* STATE_ROOT "/" + mnt_real with every byte outside [A-Za-z0-9._+-] as
 * %XX. */
int fa_default_state_dir(const char *mnt_real, char *out, size_t len);

/* A farm daemon whose overlay save at exit failed leaves its report in
 * STATE_ROOT/<the state dir's name>.save-failed (on /run: room even when
 * the save's own file system is full) until `fusefarm detach MNT` or a
 * later `fusefarm mount` at MNT has told it.  fa_note_save_failed writes
 * it (best effort: the daemon has already said it on stderr, in the
 * system log and in the overlay's PATH.failed).  fa_tell_save_failed
 * prints "fusefarm WHO: MNT: ..." with the report when there is one and
 * returns 1 (then removes it when forget), else 0. */
void fa_note_save_failed(const char *mnt_real, const char *report);
int fa_tell_save_failed(const char *mnt_real, const char *who, int forget);

/* Lock the state dir; returns the fd holding the lock. */
int fa_lock_state(const char *state);

/* Create (refusing a foreign non-empty dir) and lock the state dir;
 * *fresh when it had no loops file yet.  Returns the lock fd. */
int fa_prepare_state(const char *state, int *fresh);

/* Remove what attach created in the state dir, then the dir. */
int fa_remove_state(const char *state);

struct record {
  char dev[FF_LOOP_DEV_LEN];
  char *name;
  char *backing;
  int keep; /* still ours: stays in the loops file */
};

struct records {
  struct record *v;
  size_t n, alloc;
};

void fa_records_free(struct records *rs);
int fa_records_add(struct records *rs, const char *dev, const char *name,
                   const char *backing);

/* Read STATE/loops (a missing file is no record); each line must be
 * "<loop device> <device name> <backing file>". */
int fa_read_records(const char *state, struct records *rs);

/* Replace STATE/loops with the records still kept. */
int fa_rewrite_records(const char *state, const struct records *rs);

/* STATE/created (a missing file: none) into *created, a set of loop
 * numbers (ff-loop.h). */
int fa_read_created(const char *state, struct ff_loop_seen *created);
/* Replace STATE/created with the created loops of the records still
 * kept (none left: the file is removed). */
int fa_rewrite_created(const char *state, const struct records *rs,
                       const struct ff_loop_seen *created);
/* Append "<dev>" to the open created file (one write).  Not fsynced:
 * the record has to outlive this process, which the page cache does, not
 * the machine, whose reboot detaches and deletes every loop anyway; an
 * fsync each made attach of 15,000 loops wait 30,000 times on a disk. */
int fa_append_created(int fd, const char *path, const char *dev);
/* With FUSEFARM_LOOP_JOURNAL=FILE in the environment, append
 * "<what> <dev> <backing>" to FILE (one write, O_APPEND): what is
 * "created" (attach made the loop device) or "deleted" / "left" (detach
 * deleted it, or found it someone else's).  tests/check-leftovers.sh
 * reads it to tell the loop devices a test pass created from everyone
 * else's.  Best effort: a journal that cannot be written is warned about
 * once, never an error. */
void fa_journal(const char *what, const char *dev, const char *backing);
/* Append one record to the open loops file (one write, not fsynced:
 * fa_append_created says why). */
int fa_append_record(int fd, const char *path, const char *dev,
                     const char *name, const char *backing);

/* ---- attach-devices.c ---- */

struct farm_dev {
  char *name;
  char *role;
  char pvid[FF_UUID_LEN + 1]; /* "" when the device is not a PV */
  int cached; /* its profile says direct_io = false (fa_mark_cached) */
};

struct devlist {
  struct farm_dev *v;
  size_t n;
};

void fa_devlist_free(struct devlist *l);
int fa_valid_dev_name(const char *s);
int fa_valid_pvid(const char *s);
/* qsort/bsearch order of struct farm_dev pointers by name. */
int fa_cmp_dev_name(const void *a, const void *b);

/* Read and check MNT/.fusefarm/devices: "<name> <role> <pvid|->" lines. */
int fa_read_devices_list(const char *mnt, struct devlist *l);

/* Set cached on the devices of l that MNT/.fusefarm/profile.json says the
 * daemon opens without direct_io (a profile's `direct_io = false`: their
 * pages are cached, so their loops must read through the page cache). */
int fa_mark_cached(const char *mnt, struct devlist *l);

/* --only NAME,...: keep just those devices of l, in l's order. */
int fa_filter_only(struct devlist *l, const char *only, const char *mnt);

/* ---- attach-share.c ---- */

/* When MNT's daemon runs with --transport-share auto, time reads of its
 * .fusefarm/probe through a temporary loop (ctl: /dev/loop-control; seen:
 * the loop devices that existed, so that one created for the probe is
 * deleted after) and give the daemon their median.  Returns 1 with the
 * share in *share, 0 when the daemon does not ask for it (another mode,
 * no info.json), -1 on error (nothing given; the loop is gone). */
int fa_measure_share(int ctl, const char *mnt, const struct ff_loop_seen *seen,
                     uint64_t *share);

/* ---- attach-lvmconf.c ---- */

/* Write STATE/lvm/lvm.conf and STATE/lvm/devices/system.devices for the
 * kept records (runner/ff-fence.h), with the PVIDs l gives (NULL: none).
 * cmd names the command in warnings. */
int fa_write_lvm_config(const char *state, const struct records *rs,
                        const struct devlist *l, const char *cmd, int quiet);

/* Rewrite the state dir's lvm config for the records still kept, with the
 * PVIDs of the devices file attach wrote (detach cannot ask the daemon). */
int fa_filter_lvm_config(const char *state, const struct records *rs);

#endif
