/* fusefarm: atomic file replacement and the descriptor limit (ff-file.h). */
#include "ff-file.h"
#include "ff-error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
ff_atomic_begin(struct ff_atomic *a, const char *path)
{
  a->fd = -1;
  if ((size_t)snprintf(a->path, sizeof a->path, "%s", path) >=
        sizeof a->path ||
      (size_t)snprintf(a->tmp, sizeof a->tmp, "%s.tmp", path) >=
        sizeof a->tmp) {
    errno = ENAMETOOLONG;
    return ff_error("%s: path too long", path);
  }
  a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (a->fd < 0)
    return ff_error("create %s: %m", a->tmp);
  return 0;
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
                    S_ISFIFO(st.st_mode)   ? "a fifo"
                    : S_ISDIR(st.st_mode)  ? "a directory"
                    : S_ISSOCK(st.st_mode) ? "a socket"
                                           : "a device");
  }
  /* Regular files ignore O_NONBLOCK; clear it all the same. */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}
