/* fusefarm: a private /dev for the runner (ff-privdev.h). */
#include "ff-privdev.h"

#include "ff-error.h"
#include "ff-util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int
ff_devnames_parse(const char *s, enum ff_devnames *out)
{
  if (!strcmp(s, "farm"))
    *out = FF_DEVNAMES_FARM;
  else if (!strcmp(s, "loop"))
    *out = FF_DEVNAMES_LOOP;
  else if (!strcmp(s, "disk"))
    *out = FF_DEVNAMES_DISK;
  else
    return -1;
  return 0;
}

const char *
ff_devnames_name(enum ff_devnames how)
{
  switch (how) {
  case FF_DEVNAMES_FARM:
    return "farm";
  case FF_DEVNAMES_LOOP:
    return "loop";
  case FF_DEVNAMES_DISK:
    return "disk";
  }
  return "?";
}

void
ff_privdev_disk_name(uint32_t i, char *out, size_t len)
{
  char rev[12];
  int n = 0;
  uint64_t v = (uint64_t)i + 1; /* bijective base 26: a=1 ... z=26 */

  while (v && n < (int)sizeof rev) {
    v -= 1;
    rev[n++] = (char)('a' + v % 26);
    v /= 26;
  }
  if (len < (size_t)n + 3) {
    if (len)
      out[0] = '\0';
    return;
  }
  out[0] = 's';
  out[1] = 'd';
  for (int k = 0; k < n; k++)
    out[2 + k] = rev[n - 1 - k];
  out[2 + n] = '\0';
}

/* The names the private /dev keeps for itself. */
static const char *const basic_names[] = {
  "null",   "zero", "full", "random", "urandom", "tty",    "ptmx",
  "pts",    "shm",  "fd",   "stdin",  "stdout",  "stderr", "mapper/control",
  "mapper", "disk", NULL};

/* path is "/dev/" followed by components that are neither empty nor "."
 * nor "..", and names no basic node. */
static int
clean_dev_path(const char *path)
{
  const char *p;

  if (strncmp(path, "/dev/", 5) || !path[5])
    return 0;
  for (p = path + 5; *p;) {
    size_t n = strcspn(p, "/");

    if (n == 0 || (n == 1 && p[0] == '.') ||
        (n == 2 && p[0] == '.' && p[1] == '.'))
      return 0;
    p += n;
    if (*p == '/' && !*++p)
      return 0; /* a trailing slash */
  }
  return 1;
}

static int
is_basic(const char *path)
{
  for (int i = 0; basic_names[i]; i++) {
    size_t n = strlen(basic_names[i]);

    if (!strncmp(path + 5, basic_names[i], n) &&
        (path[5 + n] == '\0' ||
         (path[5 + n] == '/' && strcmp(basic_names[i], "mapper") &&
          strcmp(basic_names[i], "disk"))))
      return 1;
  }
  return 0;
}

int
ff_privdev_path(enum ff_devnames how, const char *hint_fmt, const char *name,
                const char *loop, uint32_t i, char *out, size_t len,
                int *fallback)
{
  char disk[16];
  char *hint = NULL;
  int n;

  *fallback = 0;
  switch (how) {
  case FF_DEVNAMES_LOOP:
    if (!loop || !clean_dev_path(loop))
      return ff_error("loop '%s': not a path under /dev", loop ? loop : "");
    n = snprintf(out, len, "%s", loop);
    break;
  case FF_DEVNAMES_DISK:
    ff_privdev_disk_name(i, disk, sizeof disk);
    n = snprintf(out, len, "/dev/%s", disk);
    break;
  case FF_DEVNAMES_FARM:
  default:
    if (!name || !*name || strchr(name, '/'))
      return ff_error("device name '%s': not a file name", name ? name : "");
    hint = hint_fmt ? ff_format_str(hint_fmt, name) : NULL;
    if (hint && clean_dev_path(hint)) {
      n = snprintf(out, len, "%s", hint);
    } else {
      *fallback = 1;
      n = snprintf(out, len, "/dev/%s", name);
    }
    free(hint);
    break;
  }
  if (n < 0 || (size_t)n >= len)
    return ff_error("device path of '%s': too long", name ? name : "");
  if (!clean_dev_path(out))
    return ff_error("device path '%s': not a clean path under /dev", out);
  if (is_basic(out))
    return ff_error("device path '%s': the private /dev keeps that name for "
                    "itself",
                    out);
  return 0;
}

/* mkdir -p of path's parent directories (path absolute). */
static int
make_parents(const char *path)
{
  char buf[PATH_MAX];
  char *p;

  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return ff_error("%s: path too long", path);
  for (p = buf + 1; (p = strchr(p, '/')); p++) {
    *p = '\0';
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
      return ff_error("mkdir %s: %m", buf);
    *p = '/';
  }
  return 0;
}

struct basic {
  const char *name;
  mode_t perm;
};

/* Character nodes copied from the host's /dev (its device numbers). */
static const struct basic chars[] = {
  {"null", 0666},    {"zero", 0666}, {"full", 0666}, {"random", 0666},
  {"urandom", 0666}, {"tty", 0666},  {NULL, 0},
};

struct hostnode {
  dev_t rdev;
  int have;
};

/* ---- the block views of sysfs -------------------------------------------
 * lvm (2.02 and early 2.03 most of all) lists /sys/dev/block, and
 * /sys/class/block or /sys/block, and opens each entry's holders/: with
 * the kernel's thousands of idle loop devices that is most of a short
 * command's time, whatever /dev holds.  Each view becomes a tmpfs holding
 * the farm's devices' entries only: symlinks with the kernel's own
 * (relative) targets, so every attribute lvm reads behind them (dev,
 * size, queue/, holders/, loop/backing_file, ...) is the real one. */
static const char *const sysviews[] = {"/sys/dev/block", "/sys/class/block",
                                       "/sys/block", NULL};

/* One farm device's entry in each view ("7:12", "loop12"): its name and
 * the host's link target, or "" when the host's view has no entry. */
struct sysent {
  char name[3][64];
  char target[3][PATH_MAX];
};

/* The host's entries of rdev, read before the views are covered. */
static int
sysent_read(dev_t rdev, struct sysent *e)
{
  char p[PATH_MAX];
  const char *base;
  ssize_t len;

  memset(e, 0, sizeof *e);
  snprintf(e->name[0], sizeof e->name[0], "%u:%u", major(rdev), minor(rdev));
  snprintf(p, sizeof p, "%s/%s", sysviews[0], e->name[0]);
  len = readlink(p, e->target[0], sizeof e->target[0] - 1);
  if (len <= 0)
    return ff_error("%s: %m (the kernel's entry of a farm device)", p);
  e->target[0][len] = '\0';
  base = strrchr(e->target[0], '/');
  base = base ? base + 1 : e->target[0];
  if (strlen(base) >= sizeof e->name[1])
    return ff_error("%s: the kernel's name '%s' is too long", p, base);
  for (int v = 1; sysviews[v]; v++) {
    memcpy(e->name[v], base, strlen(base) + 1);
    if (snprintf(p, sizeof p, "%s/%s", sysviews[v], e->name[v]) >=
        (int)sizeof p)
      return ff_error("%s/%s: path too long", sysviews[v], e->name[v]);
    len = readlink(p, e->target[v], sizeof e->target[v] - 1);
    e->target[v][len > 0 ? len : 0] = '\0';
  }
  return 0;
}

/* Entries of a directory, less . and ..; 0 when it cannot be read. */
static size_t
count_entries(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *de;
  size_t n = 0;

  if (!d)
    return 0;
  while ((de = readdir(d)))
    n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
  closedir(d);
  return n;
}

static void
sysviews_umount(void)
{
  for (int v = 0; sysviews[v]; v++)
    (void)umount2(sysviews[v], MNT_DETACH);
}

/* Cover each view that exists with the farm's entries (ents[0..n)). */
static int
sysviews_mount(const struct sysent *ents, size_t n,
               struct ff_privdev_info *info)
{
  struct stat st;

  for (int v = 0; sysviews[v]; v++) {
    if (stat(sysviews[v], &st) < 0 || !S_ISDIR(st.st_mode))
      continue;
    if (v == 0)
      info->sys_host = count_entries(sysviews[v]);
    if (mount("fusefarm-sys", sysviews[v], "tmpfs", MS_NOSUID | MS_NOEXEC,
              "mode=0755,size=4m") < 0)
      return ff_error("mount a tmpfs on %s: %m", sysviews[v]);
    info->sysviews++;
    for (size_t k = 0; k < n; k++) {
      char p[PATH_MAX];

      if (!ents[k].target[v][0])
        continue;
      if (snprintf(p, sizeof p, "%s/%s", sysviews[v], ents[k].name[v]) >=
          (int)sizeof p)
        return ff_error("%s/%s: path too long", sysviews[v], ents[k].name[v]);
      if (symlink(ents[k].target[v], p) < 0)
        return ff_error("symlink %s -> %s: %m", p, ents[k].target[v]);
      if (v == 0)
        info->sys_nodes++;
    }
  }
  return 0;
}

int
ff_privdev_mount(const struct ff_privdev_node *nodes, size_t n,
                 struct ff_privdev_info *info)
{
  static const char *const links[][2] = {{"fd", "/proc/self/fd"},
                                         {"stdin", "/proc/self/fd/0"},
                                         {"stdout", "/proc/self/fd/1"},
                                         {"stderr", "/proc/self/fd/2"},
                                         {NULL, NULL}};
  struct hostnode host[sizeof chars / sizeof *chars];
  struct hostnode dmctl = {0, 0};
  struct sysent *ents;
  dev_t *loops;
  struct stat st;
  mode_t old;
  int rc = -1;

  memset(info, 0, sizeof *info);
  loops = calloc(n ? n : 1, sizeof *loops);
  ents = calloc(n ? n : 1, sizeof *ents);
  if (!loops || !ents) {
    free(loops);
    free(ents);
    return ff_error("out of memory");
  }
  /* Everything from the host's /dev first: it is covered next. */
  for (size_t k = 0; k < n; k++) {
    if (stat(nodes[k].loop, &st) < 0) {
      ff_error("%s: %m", nodes[k].loop);
      goto early;
    }
    if (!S_ISBLK(st.st_mode)) {
      ff_error("%s: not a block device", nodes[k].loop);
      goto early;
    }
    loops[k] = st.st_rdev;
    if (sysent_read(loops[k], &ents[k]) < 0)
      goto early;
  }
  for (int k = 0; chars[k].name; k++) {
    char p[64];

    snprintf(p, sizeof p, "/dev/%s", chars[k].name);
    host[k].have = stat(p, &st) == 0 && S_ISCHR(st.st_mode);
    host[k].rdev = host[k].have ? st.st_rdev : 0;
  }
  if (stat("/dev/mapper/control", &st) == 0 && S_ISCHR(st.st_mode)) {
    dmctl.have = 1;
    dmctl.rdev = st.st_rdev;
  }

  if (mount("fusefarm-dev", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
            "mode=0755,size=16m") < 0) {
    ff_error("mount a tmpfs on /dev: %m");
    goto early;
  }
  old = umask(0);
  for (int k = 0; chars[k].name; k++) {
    char p[64];

    if (!host[k].have)
      continue;
    snprintf(p, sizeof p, "/dev/%s", chars[k].name);
    if (mknod(p, S_IFCHR | chars[k].perm, host[k].rdev) < 0) {
      ff_error("mknod %s: %m", p);
      goto fail;
    }
    info->nbasic++;
  }
  for (int k = 0; links[k][0]; k++) {
    char p[64];

    snprintf(p, sizeof p, "/dev/%s", links[k][0]);
    if (symlink(links[k][1], p) < 0) {
      ff_error("symlink %s: %m", p);
      goto fail;
    }
    info->nbasic++;
  }
  if (mkdir("/dev/shm", 01777) < 0 ||
      mount("fusefarm-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
            "mode=1777") < 0) {
    ff_error("/dev/shm: %m");
    goto fail;
  }
  info->nbasic++;
  /* A private devpts instance; a kernel that refuses it only costs
   * /dev/ptmx (lvm needs none). */
  if (mkdir("/dev/pts", 0755) == 0 &&
      mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
            "newinstance,ptmxmode=0666,mode=0620") == 0 &&
      symlink("pts/ptmx", "/dev/ptmx") == 0) {
    info->devpts = 1;
    info->nbasic += 2;
  }
  if (dmctl.have) {
    if (mkdir("/dev/mapper", 0755) < 0 ||
        mknod("/dev/mapper/control", S_IFCHR | 0600, dmctl.rdev) < 0) {
      ff_error("/dev/mapper/control: %m");
      goto fail;
    }
    info->dm_control = 1;
    info->nbasic++;
  }
  for (size_t k = 0; k < n; k++) {
    if (make_parents(nodes[k].path) < 0)
      goto fail;
    if (mknod(nodes[k].path, S_IFBLK | 0660, loops[k]) < 0) {
      ff_error("mknod %s (%u:%u, for %s): %m%s", nodes[k].path,
               major(loops[k]), minor(loops[k]), nodes[k].loop,
               errno == EEXIST ? " (two devices of the farm get that name)"
                               : "");
      goto fail;
    }
    info->nnodes++;
    if (nodes[k].link) {
      if (make_parents(nodes[k].link) < 0)
        goto fail;
      if (symlink(nodes[k].path, nodes[k].link) < 0) {
        ff_error("symlink %s: %m", nodes[k].link);
        goto fail;
      }
      info->nlinks++;
    }
  }
  if (sysviews_mount(ents, n, info) < 0)
    goto fail;
  rc = 0;
fail:
  umask(old);
  free(loops);
  free(ents);
  if (rc < 0) {
    char msg[1024];

    snprintf(msg, sizeof msg, "%s", ff_errmsg());
    ff_privdev_umount();
    ff_error("%s", msg);
  }
  return rc;
early: /* before anything is mounted: nothing to undo */
  free(loops);
  free(ents);
  return -1;
}

int
ff_privdev_umount(void)
{
  sysviews_umount();
  if (umount2("/dev", MNT_DETACH) < 0)
    return ff_error("unmount the private /dev: %m");
  return 0;
}
