/* fakedm.c: an LD_PRELOAD shim that emulates the device-mapper ioctl
 * interface in user space, so that the real lvm2 creates mirror and raid
 * LVs on a host whose kernel has no device-mapper.
 *
 * Why: tests/integration/test-byte-identical.sh compares `fusefarm gen`
 * with what lvm2 itself writes on loop devices.  lvm refuses to create a
 * mirror or raid LV without activation ("Can't create ... without using
 * device-mapper kernel driver"), and it must activate the rmeta and mlog
 * sub-LVs to wipe them between the two metadata writes of such an
 * lvcreate.  This shim answers libdm's ioctls from process memory so that
 * lvm runs its normal activating code paths, and it forwards what lvm
 * writes into linear dm devices to the PVs, so the PV images hold exactly
 * the bytes lvm wrote: both metadata copies, the rmeta wipes and the
 * disk-log header written through `_mlog`.
 *
 * What it emulates (docs/testing.md "The fake device-mapper"):
 *   - /dev/mapper/control: opening it opens /dev/null; every DM_* ioctl
 *     on that fd is answered here: VERSION, LIST_DEVICES, DEV_CREATE,
 *     DEV_REMOVE, DEV_RENAME, DEV_SUSPEND (resume swaps in the loaded
 *     table), DEV_STATUS, DEV_WAIT, TABLE_LOAD, TABLE_CLEAR, TABLE_DEPS,
 *     TABLE_STATUS, LIST_VERSIONS, GET_TARGET_VERSION, TARGET_MSG.  The
 *     target versions are kernel 6.1's where lvm chooses table syntax by
 *     them (raid 1.15.1, mirror 1.14.0; dm ioctl 4.47.0).
 *   - /proc/devices gains "252 device-mapper" and /proc/misc reads as
 *     "236 device-mapper", so libdm believes the driver is loaded.
 *   - libdm mknod()s /dev/mapper/VG-LV (udev is off in the fence; the
 *     caller gives lvm a private tmpfs /dev).  Opening such a node (block
 *     major 252) opens a sparse scratch file $FF_FAKEDM_DIR/dm-MINOR
 *     instead; fstat() reports the block device and BLKGETSIZE64 & co.
 *     answer from the live table.
 *   - Writes (pwrite, pwrite64, write, libaio io_submit, BLKZEROOUT as a
 *     zero write) to a dm device whose live table maps the written range
 *     through linear targets only (also a linear target on another dm
 *     device: a chain) go to the scratch file AND to the underlying block
 *     device at the table's offset.  The scratch file of such a device is
 *     refilled from the block device at every open, so reads (bcache's
 *     read-modify-write of the log header) see the device's real bytes.
 *   - mirror status lines in sync, except a pvmove mirror's when
 *     FF_FAKEDM_PVMOVE_STALLS is set (an interrupted pvmove);
 *   - thin-pool, thin and snapshot status lines, and the set_transaction_id
 *     message: a pool's transaction id is kept in FF_FAKEDM_DIR across lvm
 *     commands, as the kernel keeps it in the pool's metadata.
 *   - Writes to any other target (raid, mirror, striped, ...) go to the
 *     scratch file only.  lvm writes there only when it zeroes the first
 *     4 KiB of a new top LV (not with -Zn or -an); on the fresh, zeroed
 *     images of the tests that changes no PV byte, and a real kernel
 *     would pass those zeros on to every image.
 *
 * What it does not emulate: anything the kernel itself writes (dm-raid
 * and md bitmap superblocks in rmeta, the dm-log header update and clean
 * bits in mlog, resync copies between images, the thin-pool metadata a
 * pool's first activation formats, a snapshot's exception store
 * header).  Those are the guest tier's (docs/guest.md).  Writes through a
 * dup()ed fd, writev/pwritev
 * or mmap are not seen (lvm uses none of them on dm devices).
 * BLKDISCARD is logged and ignored.  State is per process: every lvm
 * command starts with no dm devices, as after a deactivation.
 *
 * Environment:
 *   FF_FAKEDM_DIR  directory for the scratch files (required once a dm
 *                  device is opened; an open fails with EINVAL without it)
 *   FF_FAKEDM_LOG  file to append a line per ioctl, table and write to
 *                  (optional).  Lines the tests parse:
 *                    LOADTABLE NAME: START LEN TYPE PARAMS
 *                    FWD NAME OFF LEN MAJ:MIN DEVOFF zero|data FILL
 *                    SCRATCH NAME OFF LEN zero|data FILL
 *                  FILL is all=0xNN or mixed head=HEX (first 16 bytes).
 *
 * Thread model: none.  lvm runs activation and wipes on its main thread;
 * the tables here have no lock.
 *
 * Build: a MODULE library (tests/CMakeLists.txt, ff-fakedm), -ldl, never
 * with the sanitizers (it is preloaded into lvm, which has no ASan
 * runtime).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* open and open64, pwrite and pwrite64 ... are distinct symbols to
 * interpose: without large-file redirection in the headers. */
#undef _FILE_OFFSET_BITS
/* and no fortify wrappers around open() */
#undef _FORTIFY_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/aio_abi.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define FAKE_MAJOR 252 /* what the kernel gives device-mapper here */
#define MAXDEV     256 /* dm devices per process */
#define MAXT       16  /* targets per table */
#define MAXFD      65536
#define MAXREAL    32 /* underlying block devices kept open */
#define CHUNK      (64 * 1024)
#define MAXDEPTH   8 /* linear devices stacked on linear devices */

struct tgt {
  uint64_t start, len; /* sectors */
  char type[DM_MAX_TYPE_NAME];
  char *params;
};

struct table {
  int n;
  struct tgt t[MAXT];
};

struct fdev {
  int used;
  unsigned minor;
  char name[DM_NAME_LEN];
  char uuid[DM_UUID_LEN];
  struct table live, inactive;
  int has_live, has_inactive;
  int suspended;
  uint32_t event_nr;
};

struct realdev {
  dev_t dev;
  int fd;
};

static struct fdev devs[MAXDEV];
static unsigned next_minor;
static int control_fd = -1;
static unsigned fdminor[MAXFD]; /* fd -> minor + 1 of a fake dm device */
static struct realdev reals[MAXREAL];
static int nreals;
static FILE *log_file;

/* The interposed functions' prototypes that no header gives. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int io_submit(aio_context_t ctx, long nr, struct iocb **ios);

#define REAL(name)                                                            \
  static __typeof__(name) *real_##name;                                       \
  if (!real_##name)                                                           \
  real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static void lg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
lg(const char *fmt, ...)
{
  va_list ap;

  if (!log_file) {
    const char *p = getenv("FF_FAKEDM_LOG");

    if (!p || !*p)
      return;
    log_file = fopen(p, "ae");
    if (!log_file)
      return;
    setvbuf(log_file, NULL, _IOLBF, 0);
  }
  va_start(ap, fmt);
  vfprintf(log_file, fmt, ap);
  va_end(ap);
}

/* The kernel's new_encode_dev(), as dm_ioctl.dev carries it. */
static uint64_t
enc(unsigned ma, unsigned mi)
{
  return (mi & 0xff) | (ma << 8) | ((uint64_t)(mi & ~0xffu) << 12);
}

static unsigned
dec_minor(uint64_t dev)
{
  return (unsigned)((dev & 0xff) | ((dev >> 12) & 0xfff00));
}

static uint64_t
tsize(const struct table *t)
{
  uint64_t s = 0;

  for (int i = 0; i < t->n; i++)
    s += t->t[i].len;
  return s;
}

static int
fd_minor(int fd)
{
  if (fd < 0 || fd >= MAXFD || !fdminor[fd])
    return -1;
  return (int)fdminor[fd] - 1;
}

static int
scratch_path(unsigned minor, char *buf, size_t n)
{
  const char *d = getenv("FF_FAKEDM_DIR");

  if (!d || !*d)
    return -1;
  return snprintf(buf, n, "%s/dm-%u", d, minor) < (int)n ? 0 : -1;
}

/* A new or removed device starts with no content of its own (minors are
 * reused across lvm processes). */
static void
scratch_forget(unsigned minor)
{
  char p[4096];

  if (scratch_path(minor, p, sizeof p) == 0)
    unlink(p);
}

/* --- the underlying block devices ------------------------------------ */

/* An fd on block device MA:MI, found by its /sys uevent's DEVNAME in
 * /dev (the private /dev holds the loops by their own names). */
static int
real_fd(unsigned ma, unsigned mi)
{
  REAL(open);
  dev_t want = makedev(ma, mi);
  char p[256], line[256], node[300] = "";
  struct stat st;
  FILE *f;
  int fd;

  for (int i = 0; i < nreals; i++)
    if (reals[i].dev == want)
      return reals[i].fd;
  if (nreals == MAXREAL)
    return -1;
  snprintf(p, sizeof p, "/sys/dev/block/%u:%u/uevent", ma, mi);
  f = fopen(p, "re");
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "DEVNAME=", 8) == 0) {
      line[strcspn(line, "\n")] = 0;
      snprintf(node, sizeof node, "/dev/%s", line + 8);
    }
  fclose(f);
  if (!node[0] || stat(node, &st) < 0 || !S_ISBLK(st.st_mode) ||
      st.st_rdev != want) {
    lg("no node for block device %u:%u (%s)\n", ma, mi, node);
    return -1;
  }
  fd = real_open(node, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return -1;
  reals[nreals].dev = want;
  reals[nreals++].fd = fd;
  return fd;
}

static const char *
fill_of(const unsigned char *b, size_t n, char *out, size_t on)
{
  size_t i;

  for (i = 1; i < n && b[i] == b[0]; i++)
    ;
  if (i >= n) {
    snprintf(out, on, "all=0x%02x", n ? b[0] : 0);
    return out;
  }
  strcpy(out, "mixed head=");
  for (i = 0; i < n && i < 16; i++)
    snprintf(out + strlen(out), on - strlen(out), "%02x", b[i]);
  return out;
}

enum xop { X_CHECK, X_READ, X_WRITE, X_ZERO };

static int
real_io(unsigned ma, unsigned mi, enum xop op, void *buf, uint64_t off,
        uint64_t len)
{
  REAL(pwrite);
  static const char zeros[CHUNK];
  int fd = real_fd(ma, mi);

  if (fd < 0)
    return -1;
  while (len > 0) {
    size_t n = len > CHUNK ? CHUNK : (size_t)len;
    ssize_t r;

    if (op == X_READ)
      r = pread(fd, buf, n, (off_t)off);
    else
      r = real_pwrite(fd, op == X_ZERO ? zeros : buf, n, (off_t)off);
    if (r <= 0)
      return -1;
    if (op == X_READ && r < (ssize_t)n)
      memset((char *)buf + r, 0, n - (size_t)r);
    off += n;
    len -= n;
    if (op != X_ZERO)
      buf = (char *)buf + n;
  }
  return op == X_READ ? 0 : fdatasync(fd);
}

/* Map bytes [off, off + len) of fake dm device MINOR through its live
 * table and do OP on the block devices under it.  Only linear targets
 * are followed (one on another fake dm device is followed into that
 * device's table); -1 when a byte lands on another target type, outside
 * the table or on a device that cannot be opened.  X_CHECK only answers
 * whether the whole range maps.  TOP and TOP_OFF name the device and
 * offset lvm wrote, for the log. */
static int
xfer(unsigned minor, enum xop op, void *buf, uint64_t off, uint64_t len,
     int depth, const char *top, uint64_t top_off)
{
  const struct fdev *f;

  if (depth > MAXDEPTH || minor >= MAXDEV || !devs[minor].used ||
      !devs[minor].has_live)
    return -1;
  f = &devs[minor];
  while (len > 0) {
    const struct tgt *t = NULL;
    unsigned ma, mi;
    unsigned long long toff;
    uint64_t end, n, doff;

    for (int i = 0; i < f->live.n; i++)
      if (off >= f->live.t[i].start * 512 &&
          off < (f->live.t[i].start + f->live.t[i].len) * 512)
        t = &f->live.t[i];
    if (!t || strcmp(t->type, "linear") != 0 ||
        sscanf(t->params, "%u:%u %llu", &ma, &mi, &toff) != 3)
      return -1;
    end = (t->start + t->len) * 512;
    n = len < end - off ? len : end - off;
    doff = off - t->start * 512 + toff * 512;
    if (ma == FAKE_MAJOR) {
      if (xfer(mi, op, buf, doff, n, depth + 1, top, top_off) < 0)
        return -1;
    } else if (op != X_CHECK) {
      if (real_io(ma, mi, op, buf, doff, n) < 0) {
        lg("FWD-FAILED %s %" PRIu64 " %" PRIu64 " %u:%u %" PRIu64 ": %m\n",
           top, top_off, n, ma, mi, doff);
        return -1;
      }
      if (op != X_READ) {
        char fill[64];

        lg("FWD %s %" PRIu64 " %" PRIu64 " %u:%u %" PRIu64 " %s %s\n", top,
           top_off, n, ma, mi, doff, op == X_ZERO ? "zero" : "data",
           op == X_ZERO ? "all=0x00" : fill_of(buf, n, fill, sizeof fill));
      }
    }
    off += n;
    len -= n;
    top_off += n;
    if (buf && op != X_ZERO)
      buf = (char *)buf + n;
  }
  return 0;
}

/* A write lvm made to fake dm device MINOR (BUF NULL: zeros), before it
 * goes to the scratch file: forwarded when the range maps through linear
 * targets. */
static void
on_write(unsigned minor, const void *buf, uint64_t len, uint64_t off)
{
  const char *name = devs[minor].name;
  char fill[64];

  if (len == 0)
    return;
  if (xfer(minor, X_CHECK, NULL, off, len, 0, name, off) == 0) {
    if (xfer(minor, buf ? X_WRITE : X_ZERO, (void *)buf, off, len, 0, name,
             off) < 0)
      lg("FWD-FAILED %s %" PRIu64 " %" PRIu64 "\n", name, off, len);
    return;
  }
  lg("SCRATCH %s %" PRIu64 " %" PRIu64 " %s %s\n", name, off, len,
     buf ? "data" : "zero",
     buf ? fill_of(buf, (size_t)len, fill, sizeof fill) : "all=0x00");
}

/* Refill the scratch file FD of a linear device from the block devices
 * under it (all-zero chunks stay holes). */
static void
refill(unsigned minor, int fd)
{
  REAL(pwrite);
  static char buf[CHUNK];
  uint64_t size = tsize(&devs[minor].live) * 512;

  if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)size) < 0)
    return;
  for (uint64_t off = 0; off < size; off += CHUNK) {
    uint64_t n = size - off < CHUNK ? size - off : CHUNK;
    size_t i;

    if (xfer(minor, X_READ, buf, off, n, 0, devs[minor].name, off) < 0) {
      lg("refill %s: cannot read at %" PRIu64 "\n", devs[minor].name, off);
      return;
    }
    for (i = 0; i < n && !buf[i]; i++)
      ;
    if (i < n && real_pwrite(fd, buf, n, (off_t)off) < 0)
      return;
  }
}

/* --- open redirection ------------------------------------------------ */

static int
is_fake_dm(const char *path, unsigned *minor)
{
  struct stat st;

  if (!path || stat(path, &st) < 0 || !S_ISBLK(st.st_mode) ||
      major(st.st_rdev) != FAKE_MAJOR)
    return 0;
  *minor = minor(st.st_rdev);
  return 1;
}

static int
ends_with(const char *s, const char *suffix)
{
  size_t a = strlen(s), b = strlen(suffix);

  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int
do_open(const char *path, int flags, mode_t mode,
        int (*ro)(const char *, int, ...))
{
  unsigned minor;
  char p[4096];
  int fd, fl;

  if (path && ends_with(path, "/mapper/control")) {
    fd = ro("/dev/null", O_RDWR | (flags & O_CLOEXEC));
    control_fd = fd;
    lg("open control %s -> fd %d\n", path, fd);
    return fd;
  }
  if (!is_fake_dm(path, &minor))
    return ro(path, flags, mode);
  if (minor >= MAXDEV || scratch_path(minor, p, sizeof p) < 0) {
    lg("open %s: no FF_FAKEDM_DIR or minor %u too large\n", path, minor);
    errno = EINVAL;
    return -1;
  }
  /* a file: no O_DIRECT (tmpfs), no block-device O_EXCL */
  fl =
    (flags & ~(O_DIRECT | O_EXCL | O_NOATIME | O_ACCMODE)) | O_RDWR | O_CREAT;
  fd = ro(p, fl, 0600);
  if (fd >= MAXFD) {
    close(fd);
    errno = EMFILE;
    return -1;
  }
  if (fd >= 0) {
    fdminor[fd] = minor + 1;
    if (devs[minor].used &&
        xfer(minor, X_CHECK, NULL, 0, tsize(&devs[minor].live) * 512, 0,
             devs[minor].name, 0) == 0)
      refill(minor, fd);
    else if (devs[minor].used &&
             ftruncate(fd, (off_t)(tsize(&devs[minor].live) * 512)) < 0)
      lg("ftruncate %s: %m\n", p);
  }
  lg("open dmdev %s (252:%u %s) flags %#x -> fd %d\n", path, minor,
     devs[minor].name, flags, fd);
  return fd;
}

/* as glibc decides whether open() has a mode argument */
static int
needs_mode(int flags)
{
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

int
open(const char *path, int flags, ...)
{
  REAL(open);
  mode_t m = 0;

  if (needs_mode(flags)) {
    va_list ap;

    va_start(ap, flags);
    m = (mode_t)va_arg(ap, int);
    va_end(ap);
  }
  return do_open(path, flags, m, real_open);
}

int
open64(const char *path, int flags, ...)
{
  REAL(open64);
  mode_t m = 0;

  if (needs_mode(flags)) {
    va_list ap;

    va_start(ap, flags);
    m = (mode_t)va_arg(ap, int);
    va_end(ap);
  }
  return do_open(path, flags, m, real_open64);
}

int
__open_2(const char *path, int flags)
{
  REAL(open);
  return do_open(path, flags, 0, real_open);
}

int
__open64_2(const char *path, int flags)
{
  REAL(open64);
  return do_open(path, flags, 0, real_open64);
}

int
close(int fd)
{
  REAL(close);
  if (fd >= 0 && fd < MAXFD)
    fdminor[fd] = 0;
  if (fd == control_fd)
    control_fd = -1;
  return real_close(fd);
}

static void
fake_st(int fd, struct stat *st)
{
  int mi = fd_minor(fd);

  if (mi < 0)
    return;
  st->st_mode = (st->st_mode & 07777) | S_IFBLK;
  st->st_rdev = makedev(FAKE_MAJOR, (unsigned)mi);
  st->st_size = 0;
}

int
fstat(int fd, struct stat *st)
{
  REAL(fstat);
  int r = real_fstat(fd, st);

  if (r == 0)
    fake_st(fd, st);
  return r;
}

int
fstat64(int fd, struct stat64 *st)
{
  REAL(fstat64);
  int r = real_fstat64(fd, st);

  /* struct stat and struct stat64 are one layout on 64-bit Linux */
  if (r == 0)
    fake_st(fd, (struct stat *)st);
  return r;
}

/* libdm decides "the driver is there" from /proc/devices and finds the
 * control node's minor in /proc/misc. */
static FILE *
do_fopen(const char *path, const char *mode,
         FILE *(*rf)(const char *, const char *))
{
  static char devices[8192];
  static char misc[] = "236 device-mapper\n";

  if (path && strcmp(path, "/proc/devices") == 0) {
    FILE *f = rf(path, mode);
    size_t n;

    if (!f)
      return f;
    n = fread(devices, 1, sizeof devices - 64, f);
    fclose(f);
    n += (size_t)snprintf(devices + n, 64, "%d device-mapper\n", FAKE_MAJOR);
    return fmemopen(devices, n, "r");
  }
  if (path && strcmp(path, "/proc/misc") == 0)
    return fmemopen(misc, strlen(misc), "r");
  return rf(path, mode);
}

FILE *
fopen(const char *p, const char *m)
{
  REAL(fopen);
  return do_fopen(p, m, real_fopen);
}

FILE *
fopen64(const char *p, const char *m)
{
  REAL(fopen64);
  return do_fopen(p, m, real_fopen64);
}

/* --- writes ---------------------------------------------------------- */

ssize_t
pwrite(int fd, const void *b, size_t n, off_t o)
{
  REAL(pwrite);
  int mi = fd_minor(fd);

  if (mi >= 0)
    on_write((unsigned)mi, b, n, (uint64_t)o);
  return real_pwrite(fd, b, n, o);
}

ssize_t
pwrite64(int fd, const void *b, size_t n, off64_t o)
{
  REAL(pwrite64);
  int mi = fd_minor(fd);

  if (mi >= 0)
    on_write((unsigned)mi, b, n, (uint64_t)o);
  return real_pwrite64(fd, b, n, o);
}

ssize_t
write(int fd, const void *b, size_t n)
{
  REAL(write);
  int mi = fd_minor(fd);

  if (mi >= 0)
    on_write((unsigned)mi, b, n, (uint64_t)lseek(fd, 0, SEEK_CUR));
  return real_write(fd, b, n);
}

/* lvm's bcache submits its writes with libaio; libaio's struct iocb is
 * the kernel's layout.  The buffer is lvm's until completion, so it can
 * be forwarded at submission. */
int
io_submit(aio_context_t ctx, long nr, struct iocb **ios)
{
  REAL(io_submit);
  for (long i = 0; i < nr; i++) {
    int mi = fd_minor((int)ios[i]->aio_fildes);

    if (mi >= 0 && ios[i]->aio_lio_opcode == IOCB_CMD_PWRITE)
      on_write((unsigned)mi, (const void *)(uintptr_t)ios[i]->aio_buf,
               ios[i]->aio_nbytes, (uint64_t)ios[i]->aio_offset);
  }
  return real_io_submit(ctx, nr, ios);
}

/* --- dm ioctl emulation ---------------------------------------------- */

static struct fdev *
find(const struct dm_ioctl *d)
{
  unsigned mi;

  if (d->name[0]) {
    for (int i = 0; i < MAXDEV; i++)
      if (devs[i].used && strcmp(devs[i].name, d->name) == 0)
        return &devs[i];
    return NULL;
  }
  if (d->uuid[0]) {
    for (int i = 0; i < MAXDEV; i++)
      if (devs[i].used && strcmp(devs[i].uuid, d->uuid) == 0)
        return &devs[i];
    return NULL;
  }
  mi = dec_minor(d->dev);
  if (d->dev && mi < MAXDEV && devs[mi].used)
    return &devs[mi];
  return NULL;
}

static void
status_out(struct dm_ioctl *d, const struct fdev *f)
{
  d->flags &=
    ~(DM_SUSPEND_FLAG | DM_ACTIVE_PRESENT_FLAG | DM_INACTIVE_PRESENT_FLAG |
      DM_READONLY_FLAG | DM_BUFFER_FULL_FLAG);
  if (f->suspended)
    d->flags |= DM_SUSPEND_FLAG;
  if (f->has_live)
    d->flags |= DM_ACTIVE_PRESENT_FLAG;
  if (f->has_inactive)
    d->flags |= DM_INACTIVE_PRESENT_FLAG;
  d->open_count = 0;
  d->event_nr = f->event_nr;
  d->dev = enc(FAKE_MAJOR, f->minor);
  d->target_count = f->has_live ? (uint32_t)f->live.n : 0;
  strcpy(d->name, f->name);
  strcpy(d->uuid, f->uuid);
  d->data_size = sizeof(*d);
}

static void
free_table(struct table *t)
{
  for (int i = 0; i < t->n; i++)
    free(t->t[i].params);
  t->n = 0;
}

/* The reply area after the struct, and its length. */
static char *
outbuf(struct dm_ioctl *d, size_t *len, size_t psize)
{
  d->data_start = (sizeof(*d) + 7) & ~7u;
  *len = psize - d->data_start;
  return (char *)d + d->data_start;
}

static char *
align8(char *p)
{
  return (char *)(((uintptr_t)p + 7) & ~(uintptr_t)7);
}

/* --- thin pools ------------------------------------------------------ */

/* A thin pool's transaction id is the kernel's, read from its metadata
 * device at activation.  Nothing formats the tmeta here, and every lvm
 * command starts with no dm devices, so the id lives in a file of
 * FF_FAKEDM_DIR named after the pool LV's dm uuid ("LVM-" + VG and LV
 * uuids, without a layer suffix such as -tpool): 0 until a
 * set_transaction_id message changes it, as for a freshly formatted
 * pool. */
static int
tid_path(const char *uuid, char *buf, size_t n)
{
  const char *d = getenv("FF_FAKEDM_DIR");
  size_t l = strlen(uuid);

  if (!d || !*d)
    return -1;
  if (l > 68)
    l = 68;
  return snprintf(buf, n, "%s/thin-tid-%.*s", d, (int)l, uuid) < (int)n ? 0
                                                                        : -1;
}

static uint64_t
tid_get(const char *uuid)
{
  char p[4096];
  unsigned long long v = 0;
  FILE *f;

  if (tid_path(uuid, p, sizeof p) < 0)
    return 0;
  f = fopen(p, "re");
  if (!f)
    return 0;
  if (fscanf(f, "%llu", &v) != 1)
    v = 0;
  fclose(f);
  return v;
}

static int
tid_set(const char *uuid, uint64_t v)
{
  char p[4096];
  FILE *f;

  if (tid_path(uuid, p, sizeof p) < 0)
    return -1;
  f = fopen(p, "we");
  if (!f)
    return -1;
  fprintf(f, "%" PRIu64 "\n", v);
  return fclose(f);
}

/* Size in sectors of the device a table parameter "MAJ:MIN" names, when
 * it is one of ours; 0 otherwise. */
static uint64_t
param_dev_size(const char *params)
{
  unsigned ma, mi;

  if (sscanf(params, "%u:%u", &ma, &mi) != 2 || ma != FAKE_MAJOR ||
      mi >= MAXDEV || !devs[mi].used)
    return 0;
  return tsize(&devs[mi].live);
}

/* dm-thin-pool's status: TRANSACTION_ID USED_META/TOTAL_META
 * USED_DATA/TOTAL_DATA HELD_ROOT rw|ro DISCARDS NO_SPACE needs_check|-
 * METADATA_LOW_WATERMARK, for an empty pool (the 10 metadata blocks a
 * format uses).  Params: META DATA BLOCK_SECTORS LOW_WATER ... */
static void
thin_pool_status(const struct fdev *f, const struct tgt *t, char *o, size_t n)
{
  unsigned long long block = 128;
  char meta[32] = "";
  uint64_t mblocks, dblocks;

  sscanf(t->params, "%31s %*s %llu", meta, &block);
  if (!block)
    block = 128;
  mblocks = param_dev_size(meta) / 8;
  dblocks = t->len / block;
  snprintf(o, n,
           "%" PRIu64 " %" PRIu64 "/%" PRIu64 " 0/%" PRIu64
           " - rw %s queue_if_no_space - %" PRIu64,
           tid_get(f->uuid), mblocks < 10 ? mblocks : 10, mblocks, dblocks,
           strstr(t->params, "no_discard_passdown") ? "no_discard_passdown"
           : strstr(t->params, "ignore_discard")    ? "ignore_discard"
                                                    : "discard_passdown",
           mblocks / 4 < 1024 ? mblocks / 4 : 1024);
}

/* A message to a thin pool: set_transaction_id checks and moves the
 * pool's id as dm-thin does (EINVAL on a wrong current id); create_thin,
 * create_snap and delete change nothing lvm reads back. */
static int
thin_pool_message(struct fdev *f, const char *msg)
{
  unsigned long long a, b;

  if (!f->has_live || f->live.n != 1 ||
      strcmp(f->live.t[0].type, "thin-pool") != 0)
    return 0;
  if (sscanf(msg, "set_transaction_id %llu %llu", &a, &b) == 2) {
    uint64_t cur = tid_get(f->uuid);

    if (cur != a) {
      lg("MSG-FAILED %s: transaction id is %" PRIu64 ", not %llu\n", f->name,
         cur, a);
      errno = EINVAL;
      return -1;
    }
    if (tid_set(f->uuid, b) < 0) {
      errno = EIO;
      return -1;
    }
  }
  return 0;
}

/* A healthy, in-sync status line for the targets lvm asks about (lvs,
 * the wait for a mirror's sync); every image 'A'; thin pools, thin
 * devices and snapshots empty. */
static void
fake_status(const struct fdev *f, const struct tgt *t, char *o, size_t n)
{
  o[0] = 0;
  if (strcmp(t->type, "thin-pool") == 0) {
    thin_pool_status(f, t, o, n);
    return;
  }
  if (strcmp(t->type, "thin") == 0) {
    /* no mapped sectors, no highest mapped sector */
    snprintf(o, n, "0 -");
    return;
  }
  if (strcmp(t->type, "snapshot") == 0) {
    /* SECTORS_ALLOCATED/TOTAL_SECTORS METADATA_SECTORS: the header
     * chunk only (params: ORIGIN COW P|N CHUNK) */
    unsigned long long chunk = 8;

    sscanf(t->params, "%*s %*s %*s %llu", &chunk);
    snprintf(
      o, n, "%llu/%" PRIu64 " %llu", chunk,
      param_dev_size(strchr(t->params, ' ') ? strchr(t->params, ' ') + 1 : ""),
      chunk);
    return;
  }
  if (strcmp(t->type, "raid") == 0) {
    char ty[32] = "", health[300];
    int nparams = 0, ndev = 2;
    const char *p = t->params;

    /* raid TYPE #PARAMS PARAMS... #DEVS META DATA ... */
    sscanf(p, "%31s %d", ty, &nparams);
    for (int i = 0; i < 2 + nparams && p; i++) {
      p = strchr(p, ' ');
      if (p)
        p++;
    }
    if (p)
      ndev = atoi(p);
    if (ndev < 1 || ndev > 299)
      ndev = 2;
    memset(health, 'A', (size_t)ndev);
    health[ndev] = 0;
    snprintf(o, n, "%s %d %s %" PRIu64 "/%" PRIu64 " idle 0 0 -", ty, ndev,
             health, t->len, t->len);
  } else if (strcmp(t->type, "mirror") == 0) {
    /* FF_FAKEDM_PVMOVE_STALLS set: pvmove's mirrors never sync (0 of 1
     * regions), so pvmove polls after its first write until it is
     * stopped: the interrupted pvmove a reference run wants */
    const char *stall = getenv("FF_FAKEDM_PVMOVE_STALLS");

    snprintf(o, n, "2 252:1 252:2 %s 1 AA 1 core",
             stall && *stall && strstr(f->name, "-pvmove") ? "0/1" : "1/1");
  } else if (strcmp(t->type, "striped") == 0) {
    snprintf(o, n, "2 252:1 252:2 1 AA");
  }
}

static void
log_table(const char *what, const struct fdev *f, const struct table *t)
{
  for (int i = 0; i < t->n; i++)
    lg("  %s %s: %" PRIu64 " %" PRIu64 " %s %s\n", what, f->name,
       t->t[i].start, t->t[i].len, t->t[i].type, t->t[i].params);
}

static int
dev_create(struct dm_ioctl *d)
{
  struct fdev *f;
  unsigned mi;

  if (d->flags & DM_PERSISTENT_DEV_FLAG) {
    mi = dec_minor(d->dev);
  } else {
    while (next_minor < MAXDEV && devs[next_minor].used)
      next_minor++;
    mi = next_minor++;
  }
  if (mi >= MAXDEV || devs[mi].used) {
    errno = mi >= MAXDEV ? ENOSPC : EBUSY;
    return -1;
  }
  f = &devs[mi];
  memset(f, 0, sizeof(*f));
  f->used = 1;
  f->minor = mi;
  strcpy(f->name, d->name);
  strcpy(f->uuid, d->uuid);
  scratch_forget(mi);
  lg("CREATE %s uuid %s -> 252:%u\n", f->name, f->uuid, mi);
  status_out(d, f);
  return 0;
}

static int
table_load(struct dm_ioctl *d, struct fdev *f)
{
  const char *base = (const char *)d + d->data_start;
  const struct dm_target_spec *sp = (const void *)base;

  free_table(&f->inactive);
  lg("LOAD %s 252:%u (%u targets)\n", f->name, f->minor, d->target_count);
  for (unsigned i = 0; i < d->target_count; i++) {
    struct tgt *t = &f->inactive.t[i];

    if (i == MAXT) {
      free_table(&f->inactive);
      errno = EINVAL;
      return -1;
    }
    t->start = sp->sector_start;
    t->len = sp->length;
    snprintf(t->type, sizeof t->type, "%s", sp->target_type);
    t->params = strdup((const char *)(sp + 1));
    f->inactive.n++;
    /* on a load, next counts from this spec (on a status reply, from
     * the first: table_status) */
    sp = (const void *)((const char *)sp + sp->next);
  }
  log_table("LOADTABLE", f, &f->inactive);
  f->has_inactive = 1;
  status_out(d, f);
  return 0;
}

static int
table_deps(struct dm_ioctl *d, struct fdev *f, size_t psize)
{
  const struct table *t =
    (d->flags & DM_QUERY_INACTIVE_TABLE_FLAG) ? &f->inactive : &f->live;
  struct dm_target_deps *dp;
  size_t len;

  status_out(d, f);
  dp = (void *)outbuf(d, &len, psize);
  dp->count = 0;
  dp->padding = 0;
  /* every MAJ:MIN word of the parameters */
  for (int i = 0; i < t->n; i++) {
    const char *p = t->t[i].params;
    unsigned ma, mi;
    int c;

    while (*p) {
      if ((p == t->t[i].params || p[-1] == ' ') &&
          sscanf(p, "%u:%u%n", &ma, &mi, &c) == 2 && (p[c] == ' ' || !p[c])) {
        uint64_t e = enc(ma, mi);
        int dup = 0;

        for (unsigned k = 0; k < dp->count; k++)
          dup |= dp->dev[k] == e;
        if (!dup && sizeof(*dp) + (dp->count + 1) * 8 <= len)
          dp->dev[dp->count++] = e;
        p += c;
      } else {
        p++;
      }
    }
  }
  d->data_size = d->data_start + sizeof(*dp) + dp->count * 8;
  return 0;
}

static int
table_status(struct dm_ioctl *d, struct fdev *f, size_t psize)
{
  const struct table *t =
    (d->flags & DM_QUERY_INACTIVE_TABLE_FLAG) ? &f->inactive : &f->live;
  int want_table = (d->flags & DM_STATUS_TABLE_FLAG) != 0;
  size_t len, used;
  char *o, *p;

  status_out(d, f);
  o = outbuf(d, &len, psize);
  p = o;
  used = d->data_start;
  for (int i = 0; i < t->n; i++) {
    struct dm_target_spec *sp = (void *)p;

    if ((size_t)(p - o) + sizeof(*sp) + 4096 > len) {
      d->flags |= DM_BUFFER_FULL_FLAG;
      break;
    }
    sp->status = 0;
    sp->sector_start = t->t[i].start;
    sp->length = t->t[i].len;
    memset(sp->target_type, 0, sizeof sp->target_type);
    snprintf(sp->target_type, sizeof sp->target_type, "%s", t->t[i].type);
    p += sizeof(*sp);
    if (want_table)
      snprintf(p, 4096, "%s", t->t[i].params);
    else
      fake_status(f, &t->t[i], p, 4096);
    p += strlen(p) + 1;
    used = d->data_start + (size_t)(p - o);
    p = align8(p);
    sp->next = (uint32_t)(p - o);
  }
  d->target_count = (uint32_t)t->n;
  d->data_size = (uint32_t)used;
  return 0;
}

static int
list_devices(struct dm_ioctl *d, size_t psize)
{
  struct dm_name_list *old = NULL;
  size_t len;
  char *o = outbuf(d, &len, psize), *p = o;
  int any = 0;

  memset(o, 0, 16);
  for (int i = 0; i < MAXDEV; i++) {
    struct dm_name_list *nl;
    uint32_t *ev;
    char *q;

    if (!devs[i].used)
      continue;
    if ((size_t)(p - o) + sizeof(*nl) + 2 * DM_NAME_LEN + 16 > len) {
      d->flags |= DM_BUFFER_FULL_FLAG;
      break;
    }
    any = 1;
    nl = (void *)p;
    nl->dev = enc(FAKE_MAJOR, devs[i].minor);
    nl->next = 0;
    strcpy(nl->name, devs[i].name);
    /* after the name: event_nr, flags, the uuid (dm ioctl 4.45+) */
    q = align8(nl->name + strlen(nl->name) + 1);
    ev = (void *)q;
    ev[0] = devs[i].event_nr;
    ev[1] = DM_NAME_LIST_FLAG_HAS_UUID;
    q = (char *)(ev + 2);
    strcpy(q, devs[i].uuid);
    q = align8(q + strlen(devs[i].uuid) + 1);
    if (old)
      old->next = (uint32_t)((char *)nl - (char *)old);
    old = nl;
    p = q;
  }
  d->data_size = (uint32_t)(d->data_start + (any ? (size_t)(p - o) : 16));
  return 0;
}

static int
target_versions(struct dm_ioctl *d, size_t psize, int one)
{
  static const struct {
    const char *n;
    uint32_t v[3];
  } tv[] = {
    {"raid", {1, 15, 1}},          {"mirror", {1, 14, 0}},
    {"striped", {1, 6, 0}},        {"linear", {1, 4, 0}},
    {"zero", {1, 2, 0}},           {"error", {1, 5, 0}},
    {"snapshot", {1, 16, 0}},      {"snapshot-origin", {1, 9, 0}},
    {"snapshot-merge", {1, 5, 0}}, {"thin-pool", {1, 22, 0}},
    {"thin", {1, 22, 0}},          {"cache", {2, 2, 0}},
    {"writecache", {1, 6, 0}},     {"integrity", {1, 10, 0}},
    {"crypt", {1, 23, 0}},         {"multipath", {1, 14, 0}},
  };
  struct dm_target_versions *old = NULL;
  char want[64] = "";
  size_t len;
  char *o, *p;

  if (one)
    snprintf(want, sizeof want, "%s", (const char *)d + d->data_start);
  o = outbuf(d, &len, psize);
  p = o;
  for (size_t i = 0; i < sizeof tv / sizeof tv[0]; i++) {
    struct dm_target_versions *v;

    if (want[0] && strcmp(want, tv[i].n) != 0)
      continue;
    v = (void *)p;
    v->next = 0;
    memcpy(v->version, tv[i].v, sizeof v->version);
    strcpy(v->name, tv[i].n);
    if (old)
      old->next = (uint32_t)((char *)v - (char *)old);
    old = v;
    p = align8(v->name + strlen(v->name) + 1);
  }
  if (want[0] && !old) {
    errno = EINVAL;
    return -1;
  }
  d->data_size = (uint32_t)(d->data_start + (size_t)(p - o));
  lg("ioctl VERSIONS %s\n", want);
  return 0;
}

static int
dm_ioctl_emul(unsigned long req, struct dm_ioctl *d)
{
  size_t psize = d->data_size;
  unsigned cmd = _IOC_NR(req);
  struct fdev *f = NULL;

  d->version[0] = 4;
  d->version[1] = 47;
  d->version[2] = 0;
  switch (cmd) {
  case DM_VERSION_CMD:
  case DM_REMOVE_ALL_CMD:
  case DM_DEV_ARM_POLL_CMD:
  case DM_DEV_SET_GEOMETRY_CMD:
    lg("ioctl cmd %u\n", cmd);
    d->data_size = sizeof(*d);
    return 0;
  case DM_LIST_DEVICES_CMD:
    return list_devices(d, psize);
  case DM_DEV_CREATE_CMD:
    return dev_create(d);
  case DM_LIST_VERSIONS_CMD:
  case DM_GET_TARGET_VERSION_CMD:
    return target_versions(d, psize, cmd == DM_GET_TARGET_VERSION_CMD);
  case DM_TARGET_MSG_CMD: {
    const char *msg =
      (const char *)d + d->data_start + sizeof(struct dm_target_msg);

    lg("MSG %s %s\n", d->name, msg);
    f = find(d);
    if (f && thin_pool_message(f, msg) < 0)
      return -1;
    d->data_size = sizeof(*d);
    return 0;
  }
  case DM_DEV_REMOVE_CMD:
  case DM_DEV_RENAME_CMD:
  case DM_DEV_SUSPEND_CMD:
  case DM_DEV_STATUS_CMD:
  case DM_DEV_WAIT_CMD:
  case DM_TABLE_LOAD_CMD:
  case DM_TABLE_CLEAR_CMD:
  case DM_TABLE_DEPS_CMD:
  case DM_TABLE_STATUS_CMD:
    f = find(d);
    if (!f) {
      errno = ENXIO;
      return -1;
    }
    break;
  default:
    lg("unknown dm ioctl %u\n", cmd);
    errno = ENOTTY;
    return -1;
  }

  switch (cmd) {
  case DM_DEV_REMOVE_CMD:
    lg("REMOVE %s 252:%u\n", f->name, f->minor);
    free_table(&f->live);
    free_table(&f->inactive);
    f->used = 0;
    scratch_forget(f->minor);
    d->flags &= ~DM_UEVENT_GENERATED_FLAG;
    d->data_size = sizeof(*d);
    return 0;
  case DM_DEV_RENAME_CMD: {
    const char *nn = (const char *)d + d->data_start;

    if (d->flags & DM_UUID_FLAG) {
      lg("SETUUID %s -> %s\n", f->name, nn);
      snprintf(f->uuid, sizeof f->uuid, "%s", nn);
    } else {
      lg("RENAME %s -> %s\n", f->name, nn);
      snprintf(f->name, sizeof f->name, "%s", nn);
    }
    status_out(d, f);
    return 0;
  }
  case DM_DEV_SUSPEND_CMD:
    if (d->flags & DM_SUSPEND_FLAG) {
      f->suspended = 1;
      lg("SUSPEND %s\n", f->name);
    } else {
      /* resume: the loaded table goes live */
      if (f->has_inactive) {
        free_table(&f->live);
        f->live = f->inactive;
        f->inactive.n = 0;
        f->has_inactive = 0;
        f->has_live = 1;
        f->event_nr++;
      }
      f->suspended = 0;
      lg("RESUME %s 252:%u\n", f->name, f->minor);
      log_table("TABLE", f, &f->live);
    }
    status_out(d, f);
    return 0;
  case DM_DEV_STATUS_CMD:
  case DM_DEV_WAIT_CMD:
    status_out(d, f);
    return 0;
  case DM_TABLE_LOAD_CMD:
    return table_load(d, f);
  case DM_TABLE_CLEAR_CMD:
    free_table(&f->inactive);
    f->has_inactive = 0;
    status_out(d, f);
    return 0;
  case DM_TABLE_DEPS_CMD:
    return table_deps(d, f, psize);
  case DM_TABLE_STATUS_CMD:
    return table_status(d, f, psize);
  }
  return 0;
}

/* Block-device ioctls on a fake dm device's fd. */
static int
dmdev_ioctl(unsigned mi, unsigned long req, void *arg)
{
  uint64_t sz = devs[mi].used ? tsize(&devs[mi].live) * 512 : 0;

  switch (req) {
  case BLKGETSIZE64:
    *(uint64_t *)arg = sz;
    return 0;
  case BLKGETSIZE:
    *(unsigned long *)arg = sz / 512;
    return 0;
  case BLKSSZGET:
  case BLKPBSZGET:
    *(int *)arg = 512;
    return 0;
  case BLKIOMIN:
  case BLKIOOPT:
  case BLKALIGNOFF:
    *(int *)arg = 0;
    return 0;
  case BLKBSZGET:
    *(int *)arg = 4096;
    return 0;
  case BLKRAGET:
    *(long *)arg = 256;
    return 0;
  case BLKROGET:
    *(int *)arg = 0;
    return 0;
  case BLKFLSBUF:
  case BLKRASET:
    return 0;
  case BLKZEROOUT: {
    const uint64_t *r = arg;
    char p[4096];
    int fd;

    /* a zero write: forwarded like one, and zeroes in the scratch file */
    lg("ZEROOUT %s off %" PRIu64 " len %" PRIu64 "\n", devs[mi].name, r[0],
       r[1]);
    on_write(mi, NULL, r[1], r[0]);
    if (scratch_path(mi, p, sizeof p) == 0) {
      REAL(open);
      fd = real_open(p, O_RDWR | O_CLOEXEC);
      if (fd >= 0) {
        if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      (off_t)r[0], (off_t)r[1]) < 0)
          lg("punch %s: %m\n", p);
        close(fd);
      }
    }
    return 0;
  }
  case BLKDISCARD: {
    const uint64_t *r = arg;

    lg("DISCARD %s off %" PRIu64 " len %" PRIu64 " (ignored)\n", devs[mi].name,
       r[0], r[1]);
    return 0;
  }
  }
  lg("ioctl on dm-%u: unhandled %#lx\n", mi, req);
  errno = ENOTTY;
  return -1;
}

int
ioctl(int fd, unsigned long req, ...)
{
  REAL(ioctl);
  va_list ap;
  void *arg;
  int mi;

  va_start(ap, req);
  arg = va_arg(ap, void *);
  va_end(ap);
  if (fd >= 0 && fd == control_fd && _IOC_TYPE(req) == DM_IOCTL)
    return dm_ioctl_emul(req, arg);
  mi = fd_minor(fd);
  if (mi >= 0)
    return dmdev_ioctl((unsigned)mi, req, arg);
  return real_ioctl(fd, req, arg);
}
