/* fusefarm: the registry of the farms `fusefarm run` made
 * (farm-registry.h).
 *
 * Thread model: single-threaded.
 */
#include "farm-registry.h"

#include "attach.h"
#include "ff-error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory of root's, 0700, not a symlink: the registry's only form. */
static int
check_dir(int fd, const char *path)
{
  struct stat st;

  if (fstat(fd, &st) < 0)
    return ff_error("%s: %m", path);
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 07777) != 0700)
    return ff_error("%s: not a directory of root's with mode 0700: refused",
                    path);
  return 0;
}

int
ff_reg_open(int create)
{
  int fd;

  if (create) {
    if (mkdir(STATE_ROOT, 0755) < 0 && errno != EEXIST)
      return ff_error("mkdir %s: %m", STATE_ROOT);
    if (mkdir(REGISTRY_DIR, 0700) < 0 && errno != EEXIST)
      return ff_error("mkdir %s: %m", REGISTRY_DIR);
  }
  fd = open(REGISTRY_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;

    ff_error("%s: %m", REGISTRY_DIR);
    errno = e;
    return -1;
  }
  if (check_dir(fd, REGISTRY_DIR) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static void
add_proc(struct ff_sb *sb, const char *key, const struct ff_regproc *p)
{
  if (p->pid > 0)
    ff_sb_addf(sb, "%s %d %llu\n", key, (int)p->pid, p->start);
}

int
ff_reg_write(int dirfd, const struct ff_reg *e, int fresh)
{
  struct ff_sb sb = FF_SB_INIT;
  char tmp[NAME_MAX + 32];
  int fd, rc = -1;

  ff_sb_addf(&sb,
             "format fusefarm-farm 1\nmnt %s\nstate %s\nscratch %s\n"
             "exe %s\n",
             e->mnt, e->state, e->scratch, e->exe);
  add_proc(&sb, "creator", &e->creator);
  add_proc(&sb, "watchdog", &e->watchdog);
  add_proc(&sb, "daemon", &e->daemon);
  if (e->mntns)
    ff_sb_addf(&sb, "mntns %llu\n", e->mntns);
  if (ff_sb_failed(&sb))
    return ff_error("out of memory");
  snprintf(tmp, sizeof tmp, ".%s.%d.tmp", e->name, (int)getpid());
  fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              0600);
  if (fd < 0) {
    ff_error("%s/%s: %m", REGISTRY_DIR, tmp);
    goto out;
  }
  if (write(fd, sb.buf, sb.len) != (ssize_t)sb.len || fsync(fd) < 0) {
    ff_error("write %s/%s: %m", REGISTRY_DIR, tmp);
    close(fd);
    unlinkat(dirfd, tmp, 0);
    goto out;
  }
  close(fd);
  if (renameat2(dirfd, tmp, dirfd, e->name, fresh ? RENAME_NOREPLACE : 0) <
      0) {
    ff_error("rename to %s/%s: %m", REGISTRY_DIR, e->name);
    unlinkat(dirfd, tmp, 0);
    goto out;
  }
  rc = 0;
out:
  ff_sb_release(&sb);
  return rc;
}

static int
read_proc(const char *v, struct ff_regproc *p)
{
  int pid;

  if (sscanf(v, "%d %llu", &pid, &p->start) != 2 || pid <= 0)
    return -1;
  p->pid = pid;
  return 0;
}

int
ff_reg_read(int dirfd, const char *name, struct ff_reg *e)
{
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  struct stat st;
  int fd, rc = -1, bad = 0;
  FILE *f;

  memset(e, 0, sizeof *e);
  if (strlen(name) >= sizeof e->name || name[0] == '.')
    return ff_error("%s/%s: not a registry entry", REGISTRY_DIR, name);
  snprintf(e->name, sizeof e->name, "%s", name);
  fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;

    ff_error("%s/%s: %m", REGISTRY_DIR, name);
    errno = err;
    return -1;
  }
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0) {
    close(fd);
    return ff_error("%s/%s: not a regular file of root's", REGISTRY_DIR, name);
  }
  f = fdopen(fd, "r");
  if (!f) {
    close(fd);
    return ff_error("%s/%s: %m", REGISTRY_DIR, name);
  }
  while ((n = getline(&line, &cap, f)) >= 0) {
    char *v = strchr(line, ' ');

    if (n > 0 && line[n - 1] == '\n')
      line[n - 1] = '\0';
    if (!v)
      continue;
    *v++ = '\0';
    if (!strcmp(line, "format"))
      bad |= strcmp(v, "fusefarm-farm 1") != 0;
    else if (!strcmp(line, "mnt"))
      snprintf(e->mnt, sizeof e->mnt, "%s", v);
    else if (!strcmp(line, "state"))
      snprintf(e->state, sizeof e->state, "%s", v);
    else if (!strcmp(line, "scratch"))
      snprintf(e->scratch, sizeof e->scratch, "%s", v);
    else if (!strcmp(line, "exe"))
      snprintf(e->exe, sizeof e->exe, "%s", v);
    else if (!strcmp(line, "creator"))
      bad |= read_proc(v, &e->creator) != 0;
    else if (!strcmp(line, "watchdog"))
      bad |= read_proc(v, &e->watchdog) != 0;
    else if (!strcmp(line, "daemon"))
      bad |= read_proc(v, &e->daemon) != 0;
    else if (!strcmp(line, "mntns"))
      e->mntns = strtoull(v, NULL, 10);
  }
  free(line);
  fclose(f);
  if (bad || !e->mnt[0] || !e->state[0] || !e->scratch[0] || !e->exe[0])
    ff_error("%s/%s: not a fusefarm-farm 1 entry", REGISTRY_DIR, name);
  else
    rc = 0;
  return rc;
}

int
ff_reg_remove(int dirfd, const char *name)
{
  if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
    return ff_error("remove %s/%s: %m", REGISTRY_DIR, name);
  return 0;
}

int
ff_reg_find_mnt(const char *mnt_real, struct ff_reg *e)
{
  int fd = ff_reg_open(0), found = 0;
  DIR *d;
  struct dirent *de;

  if (fd < 0)
    return errno == ENOENT ? 0 : -1;
  d = fdopendir(fd);
  if (!d) {
    close(fd);
    return ff_error("%s: %m", REGISTRY_DIR);
  }
  while (!found && (de = readdir(d)))
    if (de->d_name[0] != '.' && ff_reg_read(dirfd(d), de->d_name, e) == 0 &&
        !strcmp(e->mnt, mnt_real))
      found = 1;
  closedir(d);
  return found;
}

ssize_t
ff_proc_read(pid_t pid, const char *what, char *buf, size_t len)
{
  char path[64];
  ssize_t n;
  int fd;

  snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  n = read(fd, buf, len - 1);
  close(fd);
  if (n < 0)
    return -1;
  buf[n] = '\0';
  return n;
}

unsigned long long
ff_proc_start_time(pid_t pid)
{
  char buf[1024], *p;
  unsigned long long start = 0;
  char state;

  if (ff_proc_read(pid, "stat", buf, sizeof buf) <= 0)
    return 0;
  p = strrchr(buf, ')');
  /* after the command: state (3), then fields 4..21, starttime 22 */
  if (!p || sscanf(p + 1,
                   " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                   "%*s %*s %*s %*s %*s %*s %*s %llu",
                   &state, &start) != 2)
    return 0;
  return state == 'Z' || state == 'X' ? 0 : start;
}

unsigned long long
ff_proc_mntns(pid_t pid)
{
  char path[64];
  struct stat st;

  snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
  return stat(path, &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

int
ff_regproc_alive(const struct ff_regproc *p)
{
  return p->pid > 0 && p->start && ff_proc_start_time(p->pid) == p->start;
}
