/* fusefarm: the registry of the farms `fusefarm run` made, and their
 * teardown when the run that made one is gone (`fusefarm cleanup`, the
 * run's watchdog).
 *
 * Why: a run's farm lives in the run's private mount namespace, its
 * attach state in the run's scratch dir (TMPDIR/fusefarm-run.XXXXXX), and
 * its daemon is nobody's child.  A run cut off by SIGKILL (or SIGHUP
 * before it was handled) ran no teardown, and nothing on the machine said
 * where its farm was.  The registry says it.
 *
 * Registry: REGISTRY_DIR (/run/fusefarm/farms), a directory owned by
 * root, mode 0700, never a symlink; one file per farm, named
 * "<runner pid>-<scratch dir's name>", of "key value" lines:
 *   format   fusefarm-farm 1
 *   mnt      the farm's mount point (SCRATCH/mnt)
 *   state    its attach state dir (SCRATCH/state)
 *   scratch  the run's scratch dir
 *   exe      the fusefarm program that made it
 *   creator  "PID START": the runner (START: /proc/PID/stat's starttime,
 *            so a pid used again is never taken for it)
 *   watchdog "PID START": the runner's watchdog (run.c), if started
 *   daemon   "PID START": the FUSE daemon, once mounted
 *   mntns    the inode of the run's private mount namespace
 * Paths run to the end of the line (a scratch path with a newline is
 * refused by the run).  A file is written whole under a temporary name
 * (O_EXCL|O_NOFOLLOW) and renamed into place, so a reader sees the old
 * entry or the new one; the runner removes its entry at the end of a
 * clean teardown, ff_farm_teardown() after it.
 *
 * Invariants of ff_farm_teardown (what makes it safe beside other farms):
 * - it acts only on an entry that describes a run's farm (scratch is an
 *   absolute path named fusefarm-run.*, mnt and state inside it);
 * - a process is stopped only if it is the recorded daemon (pid, start
 *   time, /proc/PID/exe the recorded program, command line `mount ...
 *   MNT`, in the recorded namespace) or lives in that namespace while the
 *   namespace is held open (by the watchdog living in it, or by an fd of
 *   the verified daemon's), and never in the caller's or init's
 *   namespace;
 * - loops are detached by `fusefarm detach MNT --state STATE` (cmd-
 *   detach.c: only a recorded loop still backed by its recorded file),
 *   and only when every record's backing file lies in MNT;
 * - the scratch dir is removed only when it is a real directory owned by
 *   root and MNT is not a mount point in the caller's namespace.
 *
 * Errors: -1 after ff_error().  Threads: none.
 */
#ifndef FF_FARM_REGISTRY_H
#define FF_FARM_REGISTRY_H

#include <limits.h>
#include <stdio.h>
#include <sys/types.h>

#define REGISTRY_DIR "/run/fusefarm/farms"

struct ff_regproc {
  pid_t pid; /* 0: none recorded */
  unsigned long long start;
};

struct ff_reg {
  char name[NAME_MAX + 1]; /* the entry's file name */
  char mnt[PATH_MAX], state[PATH_MAX], scratch[PATH_MAX], exe[PATH_MAX];
  struct ff_regproc creator, watchdog, daemon;
  unsigned long long mntns; /* 0: not recorded */
};

/* Open REGISTRY_DIR (O_DIRECTORY|O_NOFOLLOW), creating it (and
 * /run/fusefarm) when create is set; refused unless a root-owned
 * directory of mode 0700.  The fd, or -1 (missing and !create: -1 with
 * errno ENOENT). */
int ff_reg_open(int create);

/* Write e as entry e->name (fresh: refuse to replace one). */
int ff_reg_write(int dirfd, const struct ff_reg *e, int fresh);

/* Read entry name into *e.  -1 with errno ENOENT when it is gone. */
int ff_reg_read(int dirfd, const char *name, struct ff_reg *e);

/* Remove entry name (a missing one is no error). */
int ff_reg_remove(int dirfd, const char *name);

/* The entry whose mnt is mnt_real, into *e: 1, or 0 (none, or no
 * registry), or -1. */
int ff_reg_find_mnt(const char *mnt_real, struct ff_reg *e);

/* The first len - 1 bytes of /proc/PID/WHAT into buf, NUL-terminated:
 * how many, or -1. */
ssize_t ff_proc_read(pid_t pid, const char *what, char *buf, size_t len);

/* pid's start time (/proc/PID/stat field 22) and mount namespace inode;
 * 0 when it is gone (or a zombie, for the start time). */
unsigned long long ff_proc_start_time(pid_t pid);
unsigned long long ff_proc_mntns(pid_t pid);

/* Is the recorded process still the one recorded? */
int ff_regproc_alive(const struct ff_regproc *p);

/* Tear down the farm of entry e (the invariants above), saying on out
 * what it stops, detaches and removes ("  " before each line), and
 * remove the entry.  inside: the caller lives in the run's namespace (the
 * watchdog): it stops every other process there, uncovers the private
 * /dev and unmounts MNT itself.  dry: only say what it would do.  0, or
 * -1 when something stays (said on stderr). */
int ff_farm_teardown(int dirfd, const struct ff_reg *e, int inside, int dry,
                     FILE *out);

/* `fusefarm cleanup` (cmd-cleanup.c). */
int ff_cmd_cleanup(int argc, char **argv);

#endif
