/* fusefarm: what FUSE 7.40 adds for passthrough, newer than Debian 12's
 * <linux/fuse.h> (7.38): the INIT flag, the open flag, and the ioctl
 * that registers a backing file.  In 7.38's structures fuse_init_out's
 * max_stack_depth is unused[0] and fuse_open_out's backing_id is
 * padding.  Used by ff-passthrough.c and bench/fuse-uring.c. */
#ifndef FF_FUSE740_H
#define FF_FUSE740_H

#include <stdint.h>
#include <sys/ioctl.h>

#define FF_FUSE_PASSTHROUGH  (1ULL << 37) /* INIT flag, in flags2 << 32 */
#define FF_FOPEN_PASSTHROUGH (1u << 7)    /* fuse_open_out.open_flags */

struct ff_fuse_backing_map {
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};

#define FF_FUSE_DEV_IOC_BACKING_OPEN _IOW(229, 1, struct ff_fuse_backing_map)

#endif
