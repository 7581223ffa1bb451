/* fusefarm mount --passthrough: devices with nothing to model served by
 * the kernel from a backing file (FUSE passthrough, kernel 6.9+).
 *
 * A device the current profile gives no latency, queue, cap, fault or
 * write cache (ff_iomodel_untimed) has nothing for the daemon to decide,
 * yet every read of it would cross /dev/fuse twice: half the IOPS of a
 * tmpfs loop on two CPUs (docs/benchmarks.md "FUSE passthrough").  With
 * --passthrough such a device, at its first open, gets a memfd holding
 * its bytes (the layout's pieces and its overlay blocks), registered with
 * the kernel (FUSE_DEV_IOC_BACKING_OPEN), and is opened with
 * FOPEN_PASSTHROUGH: its reads and writes go from the kernel to the memfd
 * and never reach the daemon.  What that costs, by design:
 *   - the stats and the trace see none of those reads and writes;
 *   - the device stays so until the daemon exits (the kernel wants every
 *     open of a passthrough inode to be passthrough): a later profile
 *     does not reach it;
 *   - its writes are in the memfd, so ff_pt_sync copies them into the
 *     overlay before any save (save-overlay, --save-overlay at exit);
 *   - a trim or zero range (FUSE fallocate, which passthrough does not
 *     carry) is applied to the memfd as well as to the overlay.
 * libfuse 3.14 has no passthrough API: ff_pt_install gives the session a
 * custom io (fuse_session_custom_io) whose read hook notes whether the
 * kernel's INIT offers FUSE_PASSTHROUGH and whose writev hook adds the
 * flag (and a stack depth of 1) to libfuse's INIT reply, and
 * FOPEN_PASSTHROUGH with the backing id to the open reply that
 * ff_pt_reply_open sends from its own thread.  A kernel without it: every
 * device is served as without --passthrough, and info.json says so.
 *
 * Thread model: ff_pt_backing, ff_pt_punch and ff_pt_sync take the
 * struct's lock; the hooks run in libfuse's threads and read only what
 * INIT set (before any other request) and their own thread's pending id.
 */
#ifndef FF_PASSTHROUGH_H
#define FF_PASSTHROUGH_H

#include <stdint.h>

#include <fuse_lowlevel.h> /* (FUSE_USE_VERSION: fusefarm/CMakeLists.txt) */

struct ff_farm;
struct ff_pt;

/* For farm's devices (a duplicate-pv pair is never passed through: two
 * device files on one set of bytes).  NULL on out of memory. */
struct ff_pt *ff_pt_new(const struct ff_farm *farm);
void ff_pt_free(struct ff_pt *pt);

/* Give se (mounted, INIT not yet read) the hooks.  userdata of the session
 * must be the struct ff_daemon whose pt this is.  0 or -1. */
int ff_pt_install(struct ff_pt *pt, struct fuse_session *se);

/* 1 once the kernel took FUSE_PASSTHROUGH at INIT, else 0. */
int ff_pt_enabled(const struct ff_pt *pt);

/* 1 when dev has its backing file already (it must stay passthrough). */
int ff_pt_has(struct ff_pt *pt, uint32_t dev);

/* ff_pt_backing: dev is not to be passed through (passthrough is off,
 * or dev is one of a duplicate-pv pair, two files on one set of bytes):
 * the caller serves it as usual, and says nothing. */
#define FF_PT_NOT (-2)

/* The backing id of dev, made at the first call from the farm's bytes
 * for dev (base and overlay).  FF_PT_NOT, or -1 when it cannot be made
 * (ff_errmsg says why; the caller serves dev as usual). */
int ff_pt_backing(struct ff_pt *pt, struct ff_farm *farm, uint32_t dev,
                  int fuse_fd);

/* fuse_reply_open(req, fi) with FOPEN_PASSTHROUGH and backing id id. */
void ff_pt_reply_open(fuse_req_t req, struct fuse_file_info *fi, int id);

/* Punch [off, off + len) out of dev's backing file, when it has one (a
 * trim or a zero range: both read as zeros after).  0 or -1. */
int ff_pt_punch(struct ff_pt *pt, uint32_t dev, uint64_t off, uint64_t len);

/* Copy what differs between each backing file and the farm's bytes into
 * the overlay (ff_farm_write), so that a save holds the passthrough
 * writes.  0 or -1. */
int ff_pt_sync(struct ff_pt *pt, struct ff_farm *farm);

/* Devices with a backing file. */
uint32_t ff_pt_count(struct ff_pt *pt);

#endif
