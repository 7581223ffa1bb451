/* fusefarm: a private /dev for the runner (`fusefarm run`).
 *
 * Inside the runner's private mount namespace, after the farm is
 * attached, /dev becomes a tmpfs that holds the basic nodes (null, zero,
 * full, random, urandom, tty, ptmx with a private devpts, shm, fd and
 * std{in,out,err} links, mapper/control when the host has it) and one
 * block node per farm device, made with mknod from the loop's own
 * major:minor (so /sys/dev/block/MAJ:MIN, which lvm reads, still
 * describes it).  An lvm scan then sees N disks, as on the reporter's
 * host, not the host's thousands of loopN nodes, and a fence is no longer
 * needed to keep lvm off the host's disks.
 *
 * The block views of sysfs that lvm lists (/sys/dev/block,
 * /sys/class/block, /sys/block) are covered the same way: a tmpfs each,
 * holding the farm devices' entries only, as symlinks with the kernel's
 * own targets.  lvm 2.02 opens every listed entry's holders/, so the
 * kernel's idle loop devices (thousands, once many farms have come and
 * gone) would cost each short command seconds of CPU.
 *
 * How the farm's nodes are named (scenario key dev_names):
 *   farm  the path the PV's metadata names as its device hint (the spec's
 *         device_hint, "/dev/%s" of the device's name by default), so the
 *         hint is true and lvm 2.03.12+ uses quick activation; a hint
 *         outside /dev falls back to /dev/NAME
 *   loop  the loop's own name (/dev/loopN), as on the host
 *   disk  sda, sdb, ..., sdz, sdaa, ... like the kernel's sd driver, with
 *         a /dev/disk/by-id/scsi-0FUSEFARM_<name> link each
 *
 * Invariant: ff_privdev_mount() is called only in a private mount
 * namespace; the host's /dev is never written.  ff_privdev_umount()
 * lazily unmounts the whole private tree, and the host's /dev shows
 * through again (the runner does that before it mounts, attaches or
 * detaches a farm, which need /dev/fuse, /dev/loop-control and the loops).
 *
 * Ownership: the caller's strings; nothing is kept.  Errors: -1 after
 * ff_error().
 */
#ifndef FF_PRIVDEV_H
#define FF_PRIVDEV_H

#include <stddef.h>
#include <stdint.h>

enum ff_devnames {
  FF_DEVNAMES_FARM,
  FF_DEVNAMES_LOOP,
  FF_DEVNAMES_DISK,
};

/* "farm", "loop", "disk" -> *out; 0, or -1 for another word. */
int ff_devnames_parse(const char *s, enum ff_devnames *out);
const char *ff_devnames_name(enum ff_devnames how);

/* The kernel's sd name of disk i (0-based): sda ... sdz, sdaa ... sdzz,
 * sdaaa ...  out must hold 16 bytes. */
void ff_privdev_disk_name(uint32_t i, char *out, size_t len);

/* The node path of device i of the farm in the private /dev:
 *   farm: hint_fmt with name in place of its %s, when that is a clean
 *         path under /dev/ ("/dev/x", "/dev/mapper/x"; no "." or ".."
 *         component, no "//"), else "/dev/" name (*fallback set to 1);
 *   loop: loop ("/dev/loop12");
 *   disk: "/dev/sd..." of i.
 * The result never names a basic node (/dev/null, /dev/pts/..., ...):
 * such a name is an error.  0 or -1. */
int ff_privdev_path(enum ff_devnames how, const char *hint_fmt,
                    const char *name, const char *loop, uint32_t i, char *out,
                    size_t len, int *fallback);

/* One farm device in the private /dev. */
struct ff_privdev_node {
  const char *path; /* "/dev/pv0002" */
  const char *loop; /* its loop on the host's /dev, "/dev/loop12" */
  const char *link; /* a symlink to path ("/dev/disk/by-id/..."), or NULL */
};

/* What the private /dev holds (for the run document). */
struct ff_privdev_info {
  unsigned nbasic;   /* basic nodes and links made */
  size_t nnodes;     /* farm nodes */
  size_t nlinks;     /* by-id links */
  int devpts;        /* a private devpts instance is mounted on /dev/pts */
  int dm_control;    /* /dev/mapper/control was made */
  unsigned sysviews; /* sysfs block views covered (/sys/dev/block, ...) */
  size_t sys_nodes;  /* farm entries in /sys/dev/block */
  size_t sys_host;   /* entries the host's /sys/dev/block had */
};

/* Mount the private /dev over /dev (see above).  The loops are looked up
 * on the host's /dev before it is covered.  On failure nothing stays
 * mounted.  0 or -1. */
int ff_privdev_mount(const struct ff_privdev_node *nodes, size_t n,
                     struct ff_privdev_info *info);

/* Unmount it (lazily, with everything mounted under it).  0 or -1. */
int ff_privdev_umount(void);

#endif
