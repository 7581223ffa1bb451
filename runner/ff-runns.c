/* fusefarm: the runner's private mount namespace (ff-runns.h). */
#include "ff-runns.h"
#include "ff-error.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

static int
real_mount(const char *src, const char *target, const char *type,
           unsigned long flags, const void *data)
{
  return mount(src, target, type, flags, data);
}

static int
real_stat(const char *path, struct stat *st)
{
  return stat(path, st);
}

const struct ff_runns_sys ff_runns_real = {
  .unshare = unshare,
  .mount = real_mount,
  .umount2 = umount2,
  .stat = real_stat,
  .mkdir = mkdir,
};

static int
bind_dir(const struct ff_runns_sys *sys, const char *src, const char *dst)
{
  if (sys->mount(src, dst, NULL, MS_BIND, NULL) < 0)
    return ff_error("bind %s on %s: %m", src, dst);
  return 0;
}

int
ff_runns_enter(const struct ff_runns_sys *sys, const char *rundir,
               const char *lockdir)
{
  struct stat st;

  if (sys->unshare(CLONE_NEWNS) < 0)
    return ff_error("unshare(CLONE_NEWNS): %m (the runner needs root)");
  if (sys->mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return ff_error("make / private: %m");
  if (sys->stat("/run/lvm", &st) < 0 || sys->stat("/run/lock/lvm", &st) < 0) {
    /* No host dirs to cover: a private /run supplies them, touching
     * nothing of the host's. */
    if (sys->mount("fusefarm-run", "/run", "tmpfs", 0, "mode=0755") < 0)
      return ff_error("mount a private /run: %m");
    if (sys->mkdir("/run/lvm", 0700) < 0 ||
        sys->mkdir("/run/lock", 0755) < 0 ||
        sys->mkdir("/run/lock/lvm", 0700) < 0)
      return ff_error("mkdir in the private /run: %m");
  }
  if (bind_dir(sys, rundir, "/run/lvm") < 0 ||
      bind_dir(sys, lockdir, "/run/lock/lvm") < 0)
    return -1;
  return 0;
}

int
ff_runns_unmount(const struct ff_runns_sys *sys, const char *mnt)
{
  if (sys->umount2(mnt, 0) < 0 && sys->umount2(mnt, MNT_DETACH) < 0)
    return ff_error("unmount %s: %m", mnt);
  return 0;
}
