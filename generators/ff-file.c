/* fusefarm: atomic file replacement and the descriptor limit (ff-file.h). */
#include "ff-file.h"
#include "ff-error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a path that is not a regular file is, for a refusal. */
static const char *
kind_of(mode_t m)
{
  return S_ISLNK(m)    ? "a symbolic link (not made by fusefarm)"
         : S_ISDIR(m)  ? "a directory"
         : S_ISFIFO(m) ? "a fifo"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
         : S_ISREG(m)  ? "a regular file"
                       : "not a regular file";
}

/* Record a refusal to write through path (lstat'ed as st).  -1, errno
 * ELOOP for a link, EISDIR for a directory, else EINVAL (never EEXIST,
 * which callers read as "a regular file is there"). */
static int
refuse(const char *path, const struct stat *st)
{
  errno = S_ISLNK(st->st_mode)   ? ELOOP
          : S_ISDIR(st->st_mode) ? EISDIR
                                 : EINVAL;
  return ff_error("refusing to write through %s: it is %s", path,
                  kind_of(st->st_mode));
}

/* Refuse a path that is a symbolic link (the rename would replace it, but
 * whoever planted it meant something else). */
static int
check_not_link(const char *path)
{
  struct stat st;

  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
    return refuse(path, &st);
  return 0;
}

int
ff_atomic_begin(struct ff_atomic *a, const char *path)
{
  struct stat st;

  a->fd = -1;
  if ((size_t)snprintf(a->path, sizeof a->path, "%s", path) >=
        sizeof a->path ||
      (size_t)snprintf(a->tmp, sizeof a->tmp, "%s.tmp", path) >=
        sizeof a->tmp) {
    errno = ENAMETOOLONG;
    return ff_error("%s: path too long", path);
  }
  if (check_not_link(path) < 0)
    return -1;
  for (int tries = 0;; tries++) {
    a->fd =
      open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (a->fd >= 0)
      return 0;
    if (errno != EEXIST || lstat(a->tmp, &st) < 0)
      return ff_error("create %s: %m", a->tmp);
    /* Only a regular file of ours, left by a crash, is replaced. */
    if (!S_ISREG(st.st_mode))
      return refuse(a->tmp, &st);
    if (st.st_uid != geteuid() || tries > 0) {
      errno = EEXIST;
      return ff_error("refusing to write through %s: it exists and is not "
                      "ours (uid %u)",
                      a->tmp, (unsigned)st.st_uid);
    }
    if (unlink(a->tmp) < 0 && errno != ENOENT)
      return ff_error("remove stale %s: %m", a->tmp);
  }
}

void
ff_atomic_abort(struct ff_atomic *a)
{
  int e = errno;

  if (a->fd >= 0) {
    close(a->fd);
    a->fd = -1;
  }
  unlink(a->tmp);
  errno = e;
}

/* fsync the directory holding path, so the rename survives a crash. */
static void
sync_dir_of(const char *path)
{
  char dir[4096];
  char *slash;
  int dfd;

  snprintf(dir, sizeof dir, "%s", path);
  slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

int
ff_atomic_commit(struct ff_atomic *a, const char **step)
{
  const char *what = NULL;
  int fd = a->fd;

  a->fd = -1;
  if (fsync(fd) < 0)
    what = "fsync";
  if (close(fd) < 0 && !what)
    what = "close";
  if (!what && check_not_link(a->path) < 0) {
    if (step)
      *step = NULL;
    ff_atomic_abort(a);
    return -1;
  }
  if (!what && rename(a->tmp, a->path) < 0)
    what = "rename";
  if (step)
    *step = what;
  if (what) {
    ff_error("%s %s: %m", what, a->tmp);
    ff_atomic_abort(a);
    return -1;
  }
  sync_dir_of(a->path);
  return 0;
}

int
ff_write_file_atomic(const char *path, const void *data, size_t len)
{
  struct ff_atomic a;
  const char *p = data;

  if (ff_atomic_begin(&a, path) < 0)
    return -1;
  for (size_t off = 0; off < len;) {
    ssize_t n = write(a.fd, p + off, len - off);

    if (n < 0) {
      if (errno == EINTR)
        continue;
      ff_error("write %s: %m", a.tmp);
      ff_atomic_abort(&a);
      return -1;
    }
    off += (size_t)n;
  }
  return ff_atomic_commit(&a, NULL);
}

int
ff_open_write_at(int dirfd, const char *path, int flags)
{
  struct stat st;
  int fd, e;

  /* O_NONBLOCK: a fifo without a reader fails (ENXIO) instead of
   * blocking; O_TRUNC waits for the fstat below. */
  fd = openat(dirfd, path,
              O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
                (flags & (O_APPEND | O_EXCL)),
              0644);
  if (fd < 0) {
    /* ELOOP, EISDIR, ENXIO (a fifo), or EACCES for a link of someone
     * else's in a sticky directory: say what is there */
    e = errno;
    if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISREG(st.st_mode))
      return refuse(path, &st);
    errno = e;
    return ff_error("%s: %m", path);
  }
  if (fstat(fd, &st) < 0) {
    e = errno;
    close(fd);
    errno = e;
    return ff_error("stat %s: %m", path);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return refuse(path, &st);
  }
  if (fcntl(fd, F_SETFL, flags & O_APPEND) < 0 ||
      ((flags & O_TRUNC) && ftruncate(fd, 0) < 0)) {
    e = errno;
    close(fd);
    errno = e;
    return ff_error("open %s: %m", path);
  }
  return fd;
}

int
ff_open_write(const char *path, int flags)
{
  return ff_open_write_at(AT_FDCWD, path, flags);
}

FILE *
ff_fopen_write(const char *path, const char *mode)
{
  int append = mode[0] == 'a';
  int fd = ff_open_write(path, append ? O_APPEND : O_TRUNC);
  FILE *f;

  if (fd < 0)
    return NULL;
  f = fdopen(fd, append ? "a" : "w");
  if (!f) {
    ff_error("%s: %m", path);
    close(fd);
  }
  return f;
}

int
ff_mkdir(const char *path, mode_t mode)
{
  struct stat st;
  int e;

  if (mkdir(path, mode) == 0)
    return 1;
  e = errno;
  if (e == EEXIST && lstat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return 0;
    errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
    return ff_error("refusing to use %s: it is %s", path, kind_of(st.st_mode));
  }
  errno = e;
  return ff_error("mkdir %s: %m", path);
}

int
ff_nofile_raise(rlim_t need, const char *who, const char *advice,
                rlim_t *hard_before)
{
  struct rlimit rl;

  if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
    return ff_error("getrlimit RLIMIT_NOFILE: %m");
  if (hard_before)
    *hard_before = rl.rlim_max;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
      return ff_error("getrlimit RLIMIT_NOFILE: %m");
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
    return ff_error("file descriptor limit too low: ulimit -n is %llu and "
                    "the hard limit %llu, but %s needs %llu; raise it (%s)",
                    (unsigned long long)rl.rlim_cur,
                    (unsigned long long)rl.rlim_max, who,
                    (unsigned long long)need, advice);
  return 0;
}

int
ff_open_regular(const char *path, const char *what)
{
  struct stat st;
  const char *pre = what ? ": cannot read the " : "", *w = what ? what : "";
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

  if (fd < 0)
    return ff_error("%s%s%s: %m", path, pre, w);
  if (fstat(fd, &st) < 0) {
    ff_error("%s%s%s: %m", path, pre, w);
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    errno = EINVAL;
    return ff_error("%s%s%s: not a regular file (%s)", path, pre, w,
                    kind_of(st.st_mode));
  }
  /* Regular files ignore O_NONBLOCK; clear it all the same. */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}
