/* fusefarm: attach files to loop devices and detach them again, through
 * /dev/loop-control and the loop ioctls directly (no losetup).
 *
 * Invariants:
 *   - A loop device attached here has no autoclear, no partition scan,
 *     direct I/O as the caller asks and 512-byte logical blocks;
 *     lo_file_name holds the
 *     file's absolute path without symlinks (the kernel keeps its first
 *     63 bytes).
 *     It stays attached after the process exits.
 *   - Free loop devices are reused (ff_loop_cursor offers the unbound ones
 *     before creating new ones).  The kernel keeps every loop device ever
 *     created, and old lvm walks /sys/dev/block/7:N/holders of each, so
 *     `fusefarm detach` deletes (LOOP_CTL_REMOVE) the loop devices its
 *     attach created, and only those: ff_loop_seen tells a created device
 *     from a reused one (it did not exist when attach began), and
 *     ff_loop_remove leaves a device alone that someone has bound or
 *     opened again meanwhile (EBUSY).
 *   - A loop device is detached only after checking, while holding it
 *     open, that it still carries the file the caller attached: the
 *     machine is shared and a loop number we once used may since have
 *     been detached and reused by someone else.  Holding it open makes
 *     the check stick: while we hold an fd, no one can rebind the loop.
 *   - Detaching never opens or stats the backing file, so it works when a
 *     FUSE daemon behind it is dead (ENOTCONN) or its mount is gone.
 *
 * What "carries the file" means (ff_loop_check, ff_loop_detach): the
 * kernel's /sys/block/loopN/loop/backing_file is expected_backing, or
 * expected_backing + " (deleted)" (the file was unlinked), or, after a
 * lazy unmount of the file's filesystem, where the kernel shows only the
 * path inside the detached mount, a trailing part of expected_backing
 * that starts with '/' while lo_file_name still equals expected_backing
 * (up to the 63 bytes the kernel keeps).  Reading lo_file_name
 * (LOOP_GET_STATUS64) stats the backing file: when the lazily unmounted
 * file system is a FUSE mount whose daemon has died as well, that fails
 * with ENOTCONN and nothing can tell the loop from another file of the
 * same name, so the loop is left alone with an error saying so and how to
 * detach it by hand.  (`fusefarm mount` never unmounts lazily while
 * files are held open, so only a lazy unmount by hand leads there.)
 *
 * Kernel behaviour this relies on (checked on 6.18): LOOP_CLR_FD on a
 * loop device that someone else still holds open does not fail with
 * EBUSY; it marks the device autoclear and the kernel detaches it at the
 * last close.  ff_loop_detach reports that case as FF_LOOP_BUSY.  Older
 * kernels that do answer EBUSY are reported the same way.
 *
 * Ownership: callers pass buffers; nothing here allocates memory that
 * outlives a call.  File descriptors returned by ff_loop_control_open
 * belong to the caller, who closes them.
 *
 * Thread model: no global state; every function may be called from any
 * thread.  Errors are recorded with ff_error() (a per-thread message) and
 * the failing call's errno is left in errno.  Calls may block briefly:
 * waiting for a /dev/loopN node (at most FF_LOOP_NODE_WAIT_MS) and for
 * the kernel to finish a detach (a few milliseconds).
 */
#ifndef FF_LOOP_H
#define FF_LOOP_H

#include <limits.h>
#include <stddef.h>

/* "/dev/loop" + up to 10 digits + NUL, rounded up. */
#define FF_LOOP_DEV_LEN 32

/* How long attaching waits for devtmpfs to create /dev/loopN. */
#define FF_LOOP_NODE_WAIT_MS 5000

/* What ff_loop_check and ff_loop_detach found.  Negative is an error. */
enum ff_loop_state {
  FF_LOOP_OK = 0,      /* check: carries the expected file;
                          detach: it did, and is now detached */
  FF_LOOP_UNBOUND = 1, /* attached to nothing, or no such loop device:
                          nothing to do */
  FF_LOOP_OTHER = 2,   /* attached to another file: left alone */
  FF_LOOP_BUSY = 3,    /* detach only: carries the expected file but is
                          still open elsewhere (lvm, a mount, a holder);
                          the kernel detaches it at the last close */
};

/* One attached loop device, as ff_loop_attach fills it in. */
struct ff_loop {
  int nr;                    /* N of /dev/loopN */
  char dev[FF_LOOP_DEV_LEN]; /* "/dev/loopN" */
  int read_only;             /* attached read-only (file not writable) */
  int direct_io; /* the kernel reads the file with direct I/O (asked for,
                  * and /sys/block/loopN/loop/dio says 1) */
  /* The backing file as /sys/block/loopN/loop/backing_file shows it:
   * the absolute path without symlinks.  This is what to pass as
   * expected_backing later, and what lvm's devices file calls
   * IDTYPE=loop_file IDNAME. */
  char backing[PATH_MAX];
  /* FF_LOOP_TEMPORARY: the loop device, open; the kernel detaches the
   * loop at its last close.  Otherwise -1. */
  int fd;
};

/* ff_loop_attach's flags.  FF_LOOP_DIRECT_IO: the loop's direct I/O mode
 * (LO_FLAGS_DIRECT_IO).  FF_LOOP_TEMPORARY: autoclear, the loop is
 * detached when out->fd, left open, is closed (by the caller, or at its
 * exit). */
#define FF_LOOP_DIRECT_IO 1
#define FF_LOOP_TEMPORARY 2

/* Open /dev/loop-control (read-write, close-on-exec) and check that it
 * is the loop driver's control device (character device 10:237).
 * Returns the fd, or -1 with a message naming /dev/loop-control, saying
 * what is missing and what to do (no loop driver, no device node, not
 * root, a file or directory mounted over it in a private /dev). */
int ff_loop_control_open(void);

/* The loop devices that exist (/sys/block/loopN), as a set of numbers:
 * loaded once before attaching, it is where ff_loop_cursor looks for
 * unbound devices, and it tells a device attach created (not in the
 * set) from an existing one.
 * Owned by the struct; ff_loop_seen_free releases it. */
struct ff_loop_seen {
  unsigned char *bits;
  size_t nbits;
};

/* Fill s with every loop device of /sys/block now.  0 or -1. */
int ff_loop_seen_load(struct ff_loop_seen *s);
/* 1 if nr is in s, else 0. */
int ff_loop_seen_has(const struct ff_loop_seen *s, int nr);
/* Add nr to s.  0 or -1 (out of memory). */
int ff_loop_seen_add(struct ff_loop_seen *s, int nr);
void ff_loop_seen_free(struct ff_loop_seen *s);

/* Where ff_loop_attach takes its loop devices from: first the existing
 * ones of *existing that are unbound, in ascending order from next, then
 * new ones (LOOP_CTL_ADD of the lowest unused number).  existing NULL:
 * new ones only (`fusefarm attach --new-loops`).  Not the kernel's
 * LOOP_CTL_GET_FREE, which walks every loop device from loop0 under the
 * driver's mutex on each call: attaching N loops with it costs N^2
 * steps (at 15,000, nearly half of attach's time).  Start with next = 0;
 * ff_loop_attach moves it on. */
struct ff_loop_cursor {
  const struct ff_loop_seen *existing;
  int next;
};

/* Attach the regular file at path to a loop device that cur offers.
 * path is opened O_RDWR, or O_RDONLY when the file or its filesystem is
 * not writable (then the loop is read-only too).  flags: FF_LOOP_DIRECT_IO
 * asks for the loop's direct I/O mode (a kernel or file that cannot do it
 * attaches without, out->direct_io says which); FF_LOOP_TEMPORARY makes
 * a loop that lives only while out->fd is open (the invariants' "no
 * autoclear" and "stays attached" do not hold for it).  ctl is an fd
 * from ff_loop_control_open, or -1 to open one for this call.  A race with
 * another process binding the same device first (EBUSY from
 * LOOP_CONFIGURE) or deleting it is retried with the next device; a
 * missing /dev/loopN node is waited for up to FF_LOOP_NODE_WAIT_MS.  On
 * success fills *out and returns the loop number (>= 0); on failure
 * returns -1 with nothing attached.  When opening path failed, the
 * message starts with path and errno is the open's errno (ENOTCONN: the
 * FUSE daemon is dead). */
int ff_loop_attach(int ctl, const char *path, int flags,
                   struct ff_loop_cursor *cur, struct ff_loop *out);

/* Delete loop device nr (LOOP_CTL_REMOVE on ctl, or on a control fd of
 * its own when ctl < 0).  Returns FF_LOOP_OK (deleted), FF_LOOP_UNBOUND
 * (no such device: nothing to do), FF_LOOP_BUSY (bound or open again,
 * someone else's now: left alone, not an error), or -1.  Call it only for
 * a device this program created and has detached. */
int ff_loop_remove(int ctl, int nr);

/* Parse dev ("/dev/loopN" or "loopN") into N.  Returns N or -1. */
int ff_loop_number(const char *dev);

/* Read /sys/block/loopN/loop/backing_file for dev into buf (newline
 * stripped).  Returns 1 when dev is attached, 0 when it is not (buf
 * empty; also when no such loop device exists), -1 on error (including
 * a path longer than len). */
int ff_loop_backing(const char *dev, char *buf, size_t len);

/* Does dev still carry expected_backing (see "carries the file" above)?
 * Returns FF_LOOP_OK, FF_LOOP_UNBOUND or FF_LOOP_OTHER (with a message
 * naming what dev carries now, for a warning), or -1.  Opens dev only
 * in the lazy-unmount case. */
int ff_loop_check(const char *dev, const char *expected_backing);

/* Detach dev if, and only if, it carries expected_backing (non-NULL).
 * Returns:
 *   FF_LOOP_OK       detached; the device is free (and stays: it is not
 *                    deleted, so the next attach reuses it);
 *   FF_LOOP_UNBOUND  it was not attached: nothing done;
 *   FF_LOOP_OTHER    it carries another file: left alone, message set;
 *   FF_LOOP_BUSY     it carries the file but someone else holds it open:
 *                    the kernel has marked it autoclear and will detach it
 *                    at the last close; message set.  Calling again later
 *                    is safe and returns FF_LOOP_OK or FF_LOOP_UNBOUND
 *                    once the holder has gone;
 *   -1               error, message set, nothing changed.
 * The backing file is never opened.  Flushing the loop's page cache to
 * the file happens in the kernel when the device is released. */
int ff_loop_detach(const char *dev, const char *expected_backing);

/* The `fusefarm attach` and `fusefarm detach` subcommands (cmd-attach.c,
 * cmd-detach.c; their internals: attach.h).
 * argv[0] is the subcommand name; the return value is the exit status:
 * 0 success, 1 runtime failure, 2 bad usage. */
int ff_cmd_attach(int argc, char **argv);
int ff_cmd_detach(int argc, char **argv);
/* `fusefarm fence` (cmd-fence.c): runner/ff-fence.h from the command line. */
int ff_cmd_fence(int argc, char **argv);
int ff_cmd_udev_rule(int argc, char **argv);

#endif
