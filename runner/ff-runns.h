/* fusefarm: the runner's private mount namespace (`fusefarm run`).
 *
 * Everything a run mounts happens in a mount namespace of its own, so
 * that nothing of it reaches the host and a crash leaves nothing
 * mounted there: unshare(CLONE_NEWNS), then "/" made private
 * recursively (before anything else is mounted: a shared "/" would
 * propagate every later mount to the host), then /run/lvm and
 * /run/lock/lvm covered by the run's own directories (bind mounts; on a
 * host without them, a private tmpfs /run first supplies them).  The
 * private /dev is ff-privdev.h's.
 *
 * The order is the safety: ff_runns_enter stops at the first failure,
 * so no mount is made outside a namespace and no bind before "/" is
 * private.  The system calls go through a table (struct ff_runns_sys)
 * so that tests/unit/test-runns.c checks that order with a fake.
 *
 * No threads; no state.  Errors: -1 after ff_error().
 */
#ifndef FF_RUNNS_H
#define FF_RUNNS_H

#include <sys/stat.h>
#include <sys/types.h>

struct ff_runns_sys {
  int (*unshare)(int flags);
  int (*mount)(const char *src, const char *target, const char *type,
               unsigned long flags, const void *data);
  int (*umount2)(const char *target, int flags);
  int (*stat)(const char *path, struct stat *st);
  int (*mkdir)(const char *path, mode_t mode);
};

/* The real system calls. */
extern const struct ff_runns_sys ff_runns_real;

/* Enter the run's namespace (above): /run/lvm becomes rundir and
 * /run/lock/lvm lockdir.  0, or -1 naming the step that failed. */
int ff_runns_enter(const struct ff_runns_sys *sys, const char *rundir,
                   const char *lockdir);

/* Unmount the farm's mount point mnt: plainly, else lazily (MNT_DETACH:
 * a loop or a process still holds it).  0, or -1 when neither worked. */
int ff_runns_unmount(const struct ff_runns_sys *sys, const char *mnt);

#endif
