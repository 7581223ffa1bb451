/* fusefarm: the client side of a mounted farm's control files
 * (ff-ctl.h). */
#include "ff-ctl.h"

#include "ff-error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *
ff_ctl_read(const char *mnt, const char *file, size_t max)
{
  char path[PATH_MAX + 64];
  char *buf;
  size_t got = 0;
  int fd;

  snprintf(path, sizeof path, "%s/.fusefarm/%s", mnt, file);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ff_error("%s: %m", path);
    return NULL;
  }
  buf = malloc(max + 1);
  if (!buf) {
    close(fd);
    ff_error("out of memory");
    return NULL;
  }
  while (got < max) {
    ssize_t n = read(fd, buf + got, max - got);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      ff_error("read %s: %m", path);
      close(fd);
      free(buf);
      return NULL;
    }
    if (n == 0)
      break;
    got += (size_t)n;
  }
  close(fd);
  buf[got] = '\0';
  return buf;
}

int
ff_ctl_write(const char *mnt, const char *file, const char *cmd)
{
  char path[PATH_MAX + 64], *msg;
  size_t len = strlen(cmd);
  ssize_t w;
  int fd, saved;

  snprintf(path, sizeof path, "%s/.fusefarm/%s", mnt, file);
  fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    ff_error("%s: %m", path);
    return FF_CTL_NOFILE;
  }
  /* The daemon takes a command in one write and answers it there. */
  w = write(fd, cmd, len);
  saved = errno;
  if (close(fd) < 0 && w == (ssize_t)len) {
    w = -1;
    saved = errno;
  }
  if (w == (ssize_t)len)
    return 0;
  msg = ff_ctl_read(mnt, "last-error", 1024);
  if (msg && msg[0]) {
    size_t n = strlen(msg);

    while (n && msg[n - 1] == '\n')
      msg[--n] = '\0';
    ff_error("%s", msg);
  } else if (w < 0) {
    errno = saved;
    ff_error("write %s: %m", path);
  } else {
    ff_error("short write to %s", path);
  }
  free(msg);
  return FF_CTL_REFUSED;
}
