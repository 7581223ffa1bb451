/* fusefarm: attach files to loop devices and detach them (see ff-loop.h).
 *
 * Thread model: no shared state; see ff-loop.h.
 */
#include "ff-loop.h"
#include "ff-error.h"

#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define LOOP_CONTROL "/dev/loop-control"
/* The misc device the loop driver registers (LOOP_CTRL_MINOR). */
#define LOOP_CONTROL_MAJOR 10
#define LOOP_CONTROL_MINOR 237

/* How often to try again when LOOP_CONFIGURE loses a race for a free
 * device (EBUSY).  Each try takes the next device, so running out means
 * something keeps grabbing every device we are offered. */
#define ATTACH_TRIES 100

/* Record a message and keep the errno the caller should see. */
#define ERR_KEEP(...)                                                         \
  do {                                                                        \
    int saved_errno_ = errno;                                                 \
    ff_error(__VA_ARGS__);                                                    \
    errno = saved_errno_;                                                     \
  } while (0)

static void
sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

static long long
now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
ff_loop_control_open(void)
{
  int fd = open(LOOP_CONTROL, O_RDWR | O_CLOEXEC);
  struct stat st;

  if (fd >= 0) {
    /* Something else mounted or created in its place (a private /dev,
     * a bind mount) would answer LOOP_CTL_ADD with a puzzling
     * ENOTTY: say what is wrong here instead. */
    if (fstat(fd, &st) < 0) {
      ERR_KEEP("stat " LOOP_CONTROL ": %m");
      close(fd);
      return -1;
    }
    if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != LOOP_CONTROL_MAJOR ||
        minor(st.st_rdev) != LOOP_CONTROL_MINOR) {
      if (S_ISCHR(st.st_mode))
        ff_error("%s is character device %u:%u, not the loop control "
                 "device (%d:%d)",
                 LOOP_CONTROL, major(st.st_rdev), minor(st.st_rdev),
                 LOOP_CONTROL_MAJOR, LOOP_CONTROL_MINOR);
      else
        ff_error("%s is not the loop control device but a regular file or "
                 "something else mounted over it (a private /dev?): no "
                 "loop device can be attached",
                 LOOP_CONTROL);
      close(fd);
      errno = ENODEV;
      return -1;
    }
    return fd;
  }
  switch (errno) {
  case ENOENT:
    if (access("/sys/class/misc/loop-control", F_OK) == 0)
      ERR_KEEP("open " LOOP_CONTROL ": %m (the loop driver is loaded but "
               "/dev has no node for it: a private /dev without devtmpfs? "
               "create it with 'mknod " LOOP_CONTROL " c 10 237')");
    else
      ERR_KEEP("open " LOOP_CONTROL ": %m (no loop driver: load it with "
               "'modprobe loop', or create the node with "
               "'mknod " LOOP_CONTROL " c 10 237')");
    break;
  case EISDIR:
    ERR_KEEP("open " LOOP_CONTROL ": %m (a directory is in the place of "
             "the loop control device: no loop device can be attached)");
    break;
  case ENXIO:
  case ENODEV:
    ERR_KEEP("open " LOOP_CONTROL ": %m (the loop driver is not loaded: "
             "'modprobe loop')");
    break;
  case EACCES:
  case EPERM:
    ERR_KEEP("open " LOOP_CONTROL ": %m (attaching loop devices needs "
             "root)");
    break;
  default:
    ERR_KEEP("open " LOOP_CONTROL ": %m");
  }
  return -1;
}

int
ff_loop_number(const char *dev)
{
  const char *p = dev;
  long n = 0;

  if (!strncmp(p, "/dev/", 5))
    p += 5;
  if (strncmp(p, "loop", 4) || !p[4])
    return ff_error("%s: not a loop device name", dev);
  for (p += 4; *p; p++) {
    if (*p < '0' || *p > '9' || n > 100000000)
      return ff_error("%s: not a loop device name", dev);
    n = n * 10 + (*p - '0');
  }
  return (int)n;
}

int
ff_loop_backing(const char *dev, char *buf, size_t len)
{
  char sys[64], tmp[PATH_MAX + 64];
  ssize_t n;
  int nr, fd;

  if (len)
    buf[0] = '\0';
  nr = ff_loop_number(dev);
  if (nr < 0)
    return -1;
  snprintf(sys, sizeof sys, "/sys/block/loop%d/loop/backing_file", nr);
  /* The loop/ directory exists only while the device is attached. */
  fd = open(sys, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    ERR_KEEP("open %s: %m", sys);
    return -1;
  }
  do
    n = read(fd, tmp, sizeof tmp - 1);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    ERR_KEEP("read %s: %m", sys);
    close(fd);
    return -1;
  }
  close(fd);
  while (n > 0 && tmp[n - 1] == '\n')
    n--;
  tmp[n] = '\0';
  if (n == 0)
    return 0;
  if ((size_t)n >= len)
    return ff_error("%s: backing file name longer than %zu bytes", dev, len);
  memcpy(buf, tmp, (size_t)n + 1);
  return 1;
}

enum match { NO_MATCH, MATCH, MAYBE_LAZY };

/* Compare what the kernel shows with what we attached (ff-loop.h,
 * "carries the file").  MAYBE_LAZY still needs the lo_file_name check. */
static enum match
match_backing(const char *shown, const char *expected)
{
  size_t ls = strlen(shown), le = strlen(expected);
  static const char deleted[] = " (deleted)";

  if (!strcmp(shown, expected))
    return MATCH;
  if (ls == le + sizeof deleted - 1 && !strncmp(shown, expected, le) &&
      !strcmp(shown + le, deleted))
    return MATCH;
  /* A file in a lazily unmounted filesystem: d_path() stops at the root
   * of the detached mount, so "/mnt/farm/pv0001" reads "/pv0001". */
  if (shown[0] == '/' && ls < le && !strcmp(expected + le - ls, shown))
    return MAYBE_LAZY;
  return NO_MATCH;
}

/* lo_file_name of the loop device open as lfd equals expected (as far as
 * the kernel keeps it)?  1 yes, 0 no, -1 error.  shown is what
 * backing_file showed (a trailing part of expected). */
static int
file_name_matches(int lfd, const char *dev, const char *expected,
                  const char *shown)
{
  struct loop_info64 info;
  size_t le = strlen(expected), keep = LO_NAME_SIZE - 1;
  const char *name;

  memset(&info, 0, sizeof info);
  if (ioctl(lfd, LOOP_GET_STATUS64, &info) < 0) {
    if (errno == ENXIO)
      return 0;
    /* LOOP_GET_STATUS64 stats the backing file: a FUSE daemon that died
     * after its mount was lazily unmounted answers ENOTCONN, and then
     * nothing tells this loop from another file of the same name. */
    if (errno == ENOTCONN || errno == EIO)
      ERR_KEEP("%s: cannot tell whether it still carries %s: the kernel "
               "shows only %s (its file system was lazily unmounted) and "
               "the file cannot be asked (LOOP_GET_STATUS64: %m: its FUSE "
               "daemon is dead); left alone: if it is yours, detach it "
               "by hand with `losetup -d %s`",
               dev, expected, shown, dev);
    else
      ERR_KEEP("LOOP_GET_STATUS64 %s: %m", dev);
    return -1;
  }
  name = (const char *)info.lo_file_name;
  if (le > keep)
    le = keep;
  return strnlen(name, LO_NAME_SIZE) == le && !strncmp(name, expected, le);
}

int
ff_loop_check(const char *dev, const char *expected_backing)
{
  char shown[PATH_MAX];
  enum match m;
  int r, lfd;

  r = ff_loop_backing(dev, shown, sizeof shown);
  if (r <= 0)
    return r < 0 ? -1 : FF_LOOP_UNBOUND;
  m = match_backing(shown, expected_backing);
  if (m == MATCH)
    return FF_LOOP_OK;
  if (m == MAYBE_LAZY) {
    lfd = open(dev, O_RDONLY | O_CLOEXEC);
    if (lfd < 0) {
      if (errno == ENOENT || errno == ENXIO)
        return FF_LOOP_UNBOUND;
      ERR_KEEP("open %s: %m", dev);
      return -1;
    }
    r = file_name_matches(lfd, dev, expected_backing, shown);
    close(lfd);
    if (r < 0)
      return -1;
    if (r)
      return FF_LOOP_OK;
  }
  ff_error("%s now carries %s, not %s", dev, shown, expected_backing);
  return FF_LOOP_OTHER;
}

int
ff_loop_detach(const char *dev, const char *expected_backing)
{
  char shown[PATH_MAX], sys[64];
  enum match m;
  int nr, lfd, r;

  if (!expected_backing || !*expected_backing)
    return ff_error("detach %s: no expected backing file given", dev);
  nr = ff_loop_number(dev);
  if (nr < 0)
    return -1;
  /* Hold the device open from the check to LOOP_CLR_FD: while we hold
   * it, nobody can detach it and bind it to another file. */
  lfd = open(dev, O_RDONLY | O_CLOEXEC);
  if (lfd < 0) {
    if (errno == ENXIO || errno == ENODEV)
      return FF_LOOP_UNBOUND;
    if (errno == ENOENT) {
      snprintf(sys, sizeof sys, "/sys/block/loop%d", nr);
      if (access(sys, F_OK) < 0)
        return FF_LOOP_UNBOUND; /* the device was deleted */
    }
    ERR_KEEP("open %s: %m", dev);
    return -1;
  }
  r = ff_loop_backing(dev, shown, sizeof shown);
  if (r <= 0) {
    close(lfd);
    return r < 0 ? -1 : FF_LOOP_UNBOUND;
  }
  m = match_backing(shown, expected_backing);
  if (m == MAYBE_LAZY) {
    r = file_name_matches(lfd, dev, expected_backing, shown);
    if (r < 0) {
      close(lfd);
      return -1;
    }
    m = r ? MATCH : NO_MATCH;
  }
  if (m != MATCH) {
    close(lfd);
    ff_error("%s now carries %s, not %s", dev, shown, expected_backing);
    return FF_LOOP_OTHER;
  }
  if (ioctl(lfd, LOOP_CLR_FD, 0) < 0) {
    int e = errno;

    close(lfd);
    if (e == ENXIO)
      return FF_LOOP_UNBOUND; /* detached by someone meanwhile */
    errno = e;
    if (e == EBUSY) {
      ff_error("%s (%s) is busy: still open elsewhere", dev, shown);
      return FF_LOOP_BUSY;
    }
    ERR_KEEP("LOOP_CLR_FD %s: %m", dev);
    return -1;
  }
  /* The kernel detaches at the last close, which is ours unless someone
   * else holds the device open.  Some kernels finish the release in a
   * work queue: look a few times before calling it busy. */
  close(lfd);
  for (int i = 0; i < 5; i++) {
    r = ff_loop_backing(dev, shown, sizeof shown);
    if (r < 0)
      return -1;
    if (r == 0)
      return FF_LOOP_OK;
    sleep_ms(1);
  }
  ff_error("%s (%s) is busy: still open elsewhere; the kernel detaches it "
           "at the last close",
           dev, shown);
  return FF_LOOP_BUSY;
}

/* Open /dev/loopN, waiting for devtmpfs to create the node.  Returns the
 * fd, -1 on error, or -2 when the device went away (deleted by someone
 * between choosing it and now: take another one). */
static int
open_loop_node(int nr, const char *dev, int flags)
{
  long long deadline = now_ms() + FF_LOOP_NODE_WAIT_MS;
  char sys[64];
  int fd;

  snprintf(sys, sizeof sys, "/sys/block/loop%d", nr);
  for (;;) {
    fd = open(dev, flags | O_CLOEXEC);
    if (fd >= 0)
      return fd;
    if (errno == ENXIO || errno == ENODEV)
      return -2;
    if (errno != ENOENT) {
      ERR_KEEP("open %s: %m", dev);
      return -1;
    }
    if (access(sys, F_OK) < 0)
      return -2;
    if (now_ms() > deadline) {
      ff_error("%s: the device node did not appear within %d ms (is "
               "devtmpfs mounted on /dev?)",
               dev, FF_LOOP_NODE_WAIT_MS);
      errno = ETIMEDOUT;
      return -1;
    }
    sleep_ms(1);
  }
}

/* The next loop device cur offers: an existing unbound one (no
 * /sys/block/loopN/loop, which the driver adds at LOOP_CONFIGURE and
 * removes at detach), or a new one.  The number, or -1 (message set). */
static int
cursor_take(int ctl, struct ff_loop_cursor *cur)
{
  const struct ff_loop_seen *s = cur->existing;
  char sys[64];
  int nr;

  while (s && cur->next >= 0 && (size_t)cur->next < s->nbits) {
    nr = cur->next++;
    if (!ff_loop_seen_has(s, nr))
      continue;
    snprintf(sys, sizeof sys, "/sys/block/loop%d/loop", nr);
    if (access(sys, F_OK) < 0 && errno == ENOENT)
      return nr;
  }
  nr = ioctl(ctl, LOOP_CTL_ADD, -1);
  if (nr < 0)
    ERR_KEEP("LOOP_CTL_ADD on " LOOP_CONTROL ": %m");
  return nr;
}

/* /sys/block/loopN/loop/dio: 1 when loop nr reads its file with direct
 * I/O, 0 when not or when it cannot be told. */
static int
loop_dio(int nr)
{
  char sys[64], c = '0';
  int fd;

  snprintf(sys, sizeof sys, "/sys/block/loop%d/loop/dio", nr);
  fd = open(sys, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  if (read(fd, &c, 1) != 1)
    c = '0';
  close(fd);
  return c == '1';
}

int
ff_loop_attach(int ctl, const char *path, int flags,
               struct ff_loop_cursor *cur, struct ff_loop *out)
{
  struct loop_config cfg;
  struct stat st;
  int fd, own_ctl = -1, ro = 0, r = -1;
  int direct_io = flags & FF_LOOP_DIRECT_IO, temp = flags & FF_LOOP_TEMPORARY;

  out->fd = -1;
  fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0 && (errno == EROFS || errno == EACCES || errno == EPERM)) {
    fd = open(path, O_RDONLY | O_CLOEXEC);
    ro = 1;
  }
  if (fd < 0) {
    ERR_KEEP("open %s: %m", path);
    return -1;
  }
  if (fstat(fd, &st) < 0) {
    ERR_KEEP("stat %s: %m", path);
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    ff_error("%s: not a regular file", path);
    errno = EINVAL;
    goto out;
  }
  if (ctl < 0) {
    own_ctl = ff_loop_control_open();
    if (own_ctl < 0)
      goto out;
    ctl = own_ctl;
  }
  /* lo_file_name gets the absolute path, as backing_file will show it:
   * ff_loop_detach compares the two after a lazy unmount. */
  if (!realpath(path, out->backing))
    snprintf(out->backing, sizeof out->backing, "%s", path);

  for (int tries = 0; tries < ATTACH_TRIES; tries++) {
    int nr, lfd;

    nr = cursor_take(ctl, cur);
    if (nr < 0)
      goto out;
    snprintf(out->dev, sizeof out->dev, "/dev/loop%d", nr);
    lfd = open_loop_node(nr, out->dev, ro ? O_RDONLY : O_RDWR);
    if (lfd == -2)
      continue;
    if (lfd < 0)
      goto out;
    memset(&cfg, 0, sizeof cfg);
    cfg.fd = (unsigned)fd;
    cfg.block_size = 512;
    /* No autoclear, no partscan: the loop outlives us (unless it is a
     * temporary one), and lvm's scans must not create partition devices.
     * Direct I/O when asked: the loop then sends its requests to the file
     * asynchronously, without its worker thread waiting for each
     * (docs/fuse.md). */
    cfg.info.lo_flags = (ro ? LO_FLAGS_READ_ONLY : 0) |
                        (direct_io ? LO_FLAGS_DIRECT_IO : 0) |
                        (temp ? LO_FLAGS_AUTOCLEAR : 0);
    /* The kernel keeps LO_NAME_SIZE - 1 bytes: truncate on purpose. */
    memcpy(cfg.info.lo_file_name, out->backing,
           strnlen(out->backing, LO_NAME_SIZE - 1));
    if (ioctl(lfd, LOOP_CONFIGURE, &cfg) < 0) {
      int e = errno;

      close(lfd);
      if (e == EBUSY)
        continue; /* someone else configured it first */
      errno = e;
      if (e == EINVAL || e == ENOTTY)
        ERR_KEEP("LOOP_CONFIGURE %s for %s: %m (kernel older than 5.8?)",
                 out->dev, path);
      else
        ERR_KEEP("LOOP_CONFIGURE %s for %s: %m", out->dev, path);
      goto out;
    }
    if (temp)
      out->fd = lfd; /* the loop lives as long as this fd */
    else
      close(lfd);
    out->nr = nr;
    out->read_only = ro;
    out->direct_io = direct_io && loop_dio(nr);
    {
      char shown[PATH_MAX];

      /* What the kernel shows is what detach will compare with; should
       * it fail to say, the real path is what it would show. */
      if (ff_loop_backing(out->dev, shown, sizeof shown) == 1)
        memcpy(out->backing, shown, strlen(shown) + 1);
    }
    r = nr;
    goto out;
  }
  ff_error("attach %s: every free loop device offered was taken by another "
           "process first (%d tries)",
           path, ATTACH_TRIES);
  errno = EBUSY;
out:
  if (own_ctl >= 0) {
    int e = errno;

    close(own_ctl);
    errno = e;
  }
  {
    int e = errno;

    close(fd);
    errno = e;
  }
  return r;
}

/* ---- which loop devices exist, and deleting the ones we made ---------- */

int
ff_loop_seen_add(struct ff_loop_seen *s, int nr)
{
  if (nr < 0)
    return 0;
  if ((size_t)nr >= s->nbits) {
    size_t nb = s->nbits ? s->nbits : 1024;
    unsigned char *b;

    while (nb <= (size_t)nr)
      nb *= 2;
    b = realloc(s->bits, nb / 8);
    if (!b)
      return ff_error("out of memory");
    memset(b + s->nbits / 8, 0, (nb - s->nbits) / 8);
    s->bits = b;
    s->nbits = nb;
  }
  s->bits[nr / 8] |= (unsigned char)(1u << (nr % 8));
  return 0;
}

int
ff_loop_seen_has(const struct ff_loop_seen *s, int nr)
{
  return nr >= 0 && (size_t)nr < s->nbits &&
         (s->bits[nr / 8] & (1u << (nr % 8))) != 0;
}

void
ff_loop_seen_free(struct ff_loop_seen *s)
{
  free(s->bits);
  s->bits = NULL;
  s->nbits = 0;
}

int
ff_loop_seen_load(struct ff_loop_seen *s)
{
  DIR *d = opendir("/sys/block");
  struct dirent *e;

  s->bits = NULL;
  s->nbits = 0;
  if (!d)
    return ff_error("open /sys/block: %m");
  while ((e = readdir(d))) {
    int nr = strncmp(e->d_name, "loop", 4) ? -1 : ff_loop_number(e->d_name);

    if (nr >= 0 && ff_loop_seen_add(s, nr) < 0) {
      closedir(d);
      ff_loop_seen_free(s);
      return -1;
    }
  }
  closedir(d);
  return 0;
}

int
ff_loop_remove(int ctl, int nr)
{
  int own = -1, r = -1;

  if (ctl < 0) {
    own = ff_loop_control_open();
    if (own < 0)
      return -1;
    ctl = own;
  }
  /* Right after a detach the kernel may still be releasing the device
   * (a work queue): look a few times before calling it someone else's. */
  for (int i = 0; i < 5; i++) {
    if (ioctl(ctl, LOOP_CTL_REMOVE, nr) == 0) {
      r = FF_LOOP_OK;
      break;
    }
    if (errno == ENODEV || errno == ENXIO) {
      r = FF_LOOP_UNBOUND;
      break;
    }
    if (errno != EBUSY) {
      ERR_KEEP("LOOP_CTL_REMOVE loop%d: %m", nr);
      break;
    }
    r = FF_LOOP_BUSY;
    sleep_ms(1);
  }
  if (r == FF_LOOP_BUSY)
    ff_error("loop%d is in use again (someone else's now): left in place", nr);
  if (own >= 0)
    close(own);
  return r;
}
