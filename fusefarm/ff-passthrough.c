/* fusefarm mount --passthrough (ff-passthrough.h says what and why). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ff-passthrough.h"
#include "ff-fuse740.h"
#include "ff-daemon.h"
#include "ff-error.h"
#include "ff-farm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* backing files on a plain file system (fuse_init_out.max_stack_depth) */
#define PT_STACK_DEPTH 1

#define SYNC_BLOCK 4096u

struct ff_pt {
  pthread_mutex_t lock; /* guards fd, id */
  uint32_t ndevs;
  int *fd;         /* [ndevs] the memfd, or -1 */
  int *id;         /* [ndevs] its backing id */
  uint8_t *shared; /* [ndevs] a duplicate-pv pair: never passthrough
                    * (two paths to one set of bytes) */
  uint32_t count;  /* devices with a backing file */
  /* set while INIT is read and answered, before any other request */
  int offered;         /* the kernel's INIT had FUSE_PASSTHROUGH */
  _Atomic int enabled; /* and our reply asked for it (0 again if the
                        * kernel refuses a backing file) */
  uint64_t init_unique;
};

/* The backing id of the open reply this thread is sending, or -1. */
static _Thread_local int tl_open_id = -1;

struct ff_pt *
ff_pt_new(const struct ff_farm *farm)
{
  uint32_t ndevs = ff_farm_ndevs(farm);
  struct ff_pt *pt = calloc(1, sizeof *pt);

  if (!pt || !(pt->fd = malloc((ndevs ? ndevs : 1) * sizeof *pt->fd)) ||
      !(pt->id = malloc((ndevs ? ndevs : 1) * sizeof *pt->id)) ||
      !(pt->shared = calloc(ndevs ? ndevs : 1, 1))) {
    if (pt) {
      free(pt->fd);
      free(pt->id);
      free(pt);
    }
    ff_error("--passthrough: out of memory");
    return NULL;
  }
  for (uint32_t i = 0; i < ndevs; i++) {
    pt->fd[i] = pt->id[i] = -1;
    if (ff_farm_dev_role(farm, i) != FF_ROLE_DUPLICATE)
      continue;
    /* the duplicate and the device it copies (same PV UUID) */
    for (uint32_t j = 0; j < ndevs; j++)
      if (ff_farm_dev_role(farm, j) != FF_ROLE_BLANK &&
          ff_farm_dev_role(farm, j) != FF_ROLE_SIGNATURE &&
          !memcmp(ff_farm_dev_uuid(farm, i), ff_farm_dev_uuid(farm, j),
                  FF_UUID_LEN))
        pt->shared[j] = 1;
  }
  pt->ndevs = ndevs;
  pthread_mutex_init(&pt->lock, NULL);
  return pt;
}

void
ff_pt_free(struct ff_pt *pt)
{
  if (!pt)
    return;
  for (uint32_t i = 0; i < pt->ndevs; i++)
    if (pt->fd[i] >= 0)
      close(pt->fd[i]);
  pthread_mutex_destroy(&pt->lock);
  free(pt->fd);
  free(pt->id);
  free(pt->shared);
  free(pt);
}

/* ---- the session's hooks ------------------------------------------------ */

static ssize_t
hook_read(int fd, void *buf, size_t len, void *userdata)
{
  struct ff_pt *pt = ((struct ff_daemon *)userdata)->pt;
  ssize_t n = read(fd, buf, len);
  const struct fuse_in_header *in = buf;

  if (n >= (ssize_t)(sizeof *in + sizeof(struct fuse_init_in)) &&
      in->opcode == FUSE_INIT) {
    const struct fuse_init_in *ii = (const void *)(in + 1);
    uint64_t flags = ii->flags;

    if (flags & FUSE_INIT_EXT)
      flags |= (uint64_t)ii->flags2 << 32;
    pt->offered = (flags & FF_FUSE_PASSTHROUGH) != 0;
    pt->init_unique = in->unique;
  }
  return n;
}

static ssize_t
hook_writev(int fd, struct iovec *iov, int count, void *userdata)
{
  struct ff_pt *pt = ((struct ff_daemon *)userdata)->pt;
  const struct fuse_out_header *oh = iov[0].iov_base;

  if (count >= 2 && oh->error == 0) {
    if (pt->offered && !pt->enabled && oh->unique == pt->init_unique &&
        iov[1].iov_len >= sizeof(struct fuse_init_out)) {
      struct fuse_init_out *o = iov[1].iov_base;

      o->flags |= FUSE_INIT_EXT;
      o->flags2 |= (uint32_t)(FF_FUSE_PASSTHROUGH >> 32);
      o->unused[0] = PT_STACK_DEPTH;
      pt->enabled = 1;
    } else if (tl_open_id >= 0 &&
               iov[1].iov_len == sizeof(struct fuse_open_out)) {
      struct fuse_open_out *o = iov[1].iov_base;

      o->open_flags =
        (o->open_flags & ~(uint32_t)FOPEN_DIRECT_IO) | FF_FOPEN_PASSTHROUGH;
      o->padding = (uint32_t)tl_open_id;
    }
  }
  return writev(fd, iov, count);
}

int
ff_pt_install(struct ff_pt *pt, struct fuse_session *se)
{
  static const struct fuse_custom_io io = {.read = hook_read,
                                           .writev = hook_writev};
  int r;

  (void)pt;
  r = fuse_session_custom_io(se, &io, fuse_session_fd(se));
  if (r < 0)
    return ff_error("--passthrough: fuse_session_custom_io: %s", strerror(-r));
  return 0;
}

int
ff_pt_enabled(const struct ff_pt *pt)
{
  return pt->enabled;
}

/* ---- backing files ------------------------------------------------------ */

int
ff_pt_has(struct ff_pt *pt, uint32_t dev)
{
  int has;

  pthread_mutex_lock(&pt->lock);
  has = dev < pt->ndevs && pt->id[dev] >= 0;
  pthread_mutex_unlock(&pt->lock);
  return has;
}

/* Write the farm's bytes of dev where they may not be zero (its layout
 * and its overlay blocks) into fd.  0 or -1. */
static int
fill(struct ff_farm *farm, uint32_t dev, int fd)
{
  struct ff_range *r = NULL;
  int64_t n = ff_farm_extents_all(farm, dev, &r);
  char *buf = malloc(1u << 20);
  int rc = -1;

  if (n < 0 || !buf) {
    if (!buf)
      ff_error("out of memory");
    goto out;
  }
  for (int64_t k = 0; k < n; k++)
    for (uint64_t o = 0; o < r[k].len;) {
      size_t len =
        r[k].len - o < (1u << 20) ? (size_t)(r[k].len - o) : (1u << 20);

      if (ff_farm_read(farm, dev, buf, r[k].off + o, len) < 0)
        goto out;
      if (pwrite(fd, buf, len, (off_t)(r[k].off + o)) != (ssize_t)len) {
        ff_error("write of its backing file: %s", strerror(errno));
        goto out;
      }
      o += len;
    }
  rc = 0;
out:
  free(r);
  free(buf);
  return rc;
}

int
ff_pt_backing(struct ff_pt *pt, struct ff_farm *farm, uint32_t dev,
              int fuse_fd)
{
  struct ff_fuse_backing_map map = {.fd = -1};
  int id = -1;

  if (!pt->enabled || dev >= pt->ndevs || pt->shared[dev])
    return FF_PT_NOT;
  pthread_mutex_lock(&pt->lock);
  if (pt->id[dev] >= 0) {
    id = pt->id[dev];
    goto out;
  }
  map.fd = memfd_create(ff_farm_dev_name(farm, dev), MFD_CLOEXEC);
  if (map.fd < 0) {
    ff_error("memfd_create: %s", strerror(errno));
    goto out;
  }
  if (ftruncate(map.fd, (off_t)ff_farm_dev_size(farm, dev)) < 0) {
    ff_error("ftruncate of its backing file: %s", strerror(errno));
    goto out;
  }
  if (fill(farm, dev, map.fd) < 0)
    goto out;
  id = ioctl(fuse_fd, FF_FUSE_DEV_IOC_BACKING_OPEN, &map);
  if (id < 0) {
    /* the kernel refused our INIT's passthrough after all: no device
     * will be passed through, each served as usual */
    ff_error("FUSE_DEV_IOC_BACKING_OPEN: %s; passthrough off",
             strerror(errno));
    if (errno != ENOMEM)
      pt->enabled = 0;
    goto out;
  }
  pt->fd[dev] = map.fd;
  pt->id[dev] = id;
  pt->count++;
  map.fd = -1;
out:
  pthread_mutex_unlock(&pt->lock);
  if (map.fd >= 0)
    close(map.fd);
  return id;
}

void
ff_pt_reply_open(fuse_req_t req, struct fuse_file_info *fi, int id)
{
  /* the writev hook patches the reply libfuse writes from this thread */
  fi->direct_io = 0;
  fi->keep_cache = 0;
  tl_open_id = id;
  fuse_reply_open(req, fi);
  tl_open_id = -1;
}

int
ff_pt_punch(struct ff_pt *pt, uint32_t dev, uint64_t off, uint64_t len)
{
  int fd, r = 0;

  pthread_mutex_lock(&pt->lock);
  fd = dev < pt->ndevs ? pt->fd[dev] : -1;
  if (fd >= 0 && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                           (off_t)off, (off_t)len) < 0)
    r = ff_error("fallocate of its backing file: %s", strerror(errno));
  pthread_mutex_unlock(&pt->lock);
  return r;
}

/* Bring [off, off + len) of the overlay to fd's bytes, block by block. */
static int
sync_range(struct ff_farm *farm, uint32_t dev, int fd, uint64_t off,
           uint64_t len)
{
  char a[SYNC_BLOCK], b[SYNC_BLOCK];
  uint64_t size = ff_farm_dev_size(farm, dev);
  uint64_t lo = off / SYNC_BLOCK * SYNC_BLOCK, hi = off + len;

  for (uint64_t o = lo; o < hi && o < size; o += SYNC_BLOCK) {
    size_t n = size - o < SYNC_BLOCK ? (size_t)(size - o) : SYNC_BLOCK;
    ssize_t got = pread(fd, a, n, (off_t)o);

    if (got < 0)
      return ff_error("read of a backing file: %s", strerror(errno));
    memset(a + got, 0, n - (size_t)got);
    if (ff_farm_read(farm, dev, b, o, n) < 0)
      return -1;
    if (memcmp(a, b, n) && ff_farm_write(farm, dev, a, o, n) < 0)
      return -1;
  }
  return 0;
}

int
ff_pt_sync(struct ff_pt *pt, struct ff_farm *farm)
{
  int r = 0;

  if (!pt)
    return 0;
  pthread_mutex_lock(&pt->lock);
  for (uint32_t dev = 0; dev < pt->ndevs && r == 0; dev++) {
    int fd = pt->fd[dev];
    struct ff_range *ext = NULL;
    int64_t n;
    off_t at = 0, data, hole;

    if (fd < 0)
      continue;
    /* what the kernel wrote (the memfd's data), and what the farm holds
     * that a trim may have punched (its extents) */
    while (r == 0 && (data = lseek(fd, at, SEEK_DATA)) >= 0) {
      hole = lseek(fd, data, SEEK_HOLE);
      if (hole < 0)
        break;
      r = sync_range(farm, dev, fd, (uint64_t)data, (uint64_t)(hole - data));
      at = hole;
    }
    n = r == 0 ? ff_farm_extents_all(farm, dev, &ext) : 0;
    if (n < 0)
      r = -1;
    for (int64_t k = 0; r == 0 && k < n; k++)
      r = sync_range(farm, dev, fd, ext[k].off, ext[k].len);
    free(ext);
    if (r < 0)
      ff_error_prefix("--passthrough: %s: ", ff_farm_dev_name(farm, dev));
  }
  pthread_mutex_unlock(&pt->lock);
  return r;
}

uint32_t
ff_pt_count(struct ff_pt *pt)
{
  uint32_t n;

  pthread_mutex_lock(&pt->lock);
  n = pt->count;
  pthread_mutex_unlock(&pt->lock);
  return n;
}
