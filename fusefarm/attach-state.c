/* fusefarm attach/detach: MNT, the state dir and its loops file
 * (attach.h).
 *
 * Thread model: single-threaded.
 */
#include "attach.h"
#include "ff-error.h"
#include "ff-file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- MNT and the state dir -------------------------------------------- */

/* The absolute path of mount point mnt without looking at mnt itself
 * (a stuck FUSE daemon would never answer): the real path of its parent
 * plus its last component. */
int
fa_mount_point_path(const char *mnt, char *out)
{
  char tmp[PATH_MAX], parent[PATH_MAX], *base;
  size_t n = strlen(mnt), l;

  if (n == 0 || n >= sizeof tmp)
    return ff_error("%s: bad path", mnt);
  memcpy(tmp, mnt, n + 1);
  while (n > 1 && tmp[n - 1] == '/')
    tmp[--n] = '\0';
  base = strrchr(tmp, '/');
  if (base) {
    *base++ = '\0';
    snprintf(parent, sizeof parent, "%s", tmp[0] ? tmp : "/");
  } else {
    base = tmp;
    snprintf(parent, sizeof parent, ".");
  }
  if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
    return ff_error("%s: not a mount point path", mnt);
  if (!realpath(parent, out))
    return ff_error("%s: %m", parent);
  l = strlen(out);
  if (snprintf(out + l, PATH_MAX - l, "%s%s", l > 1 ? "/" : "", base) >=
      (int)(PATH_MAX - l))
    return ff_error("%s: path too long", mnt);
  return 0;
}

/* The real path of MNT.  When MNT cannot be resolved (a dead FUSE daemon
 * answers ENOTCONN on the mount point; the directory may be gone), fall
 * back to the real path of its parent plus its last component, and then
 * to the absolute path as written: detach must still find the state. */
int
fa_resolve_mnt(const char *mnt, int strict, char *out)
{
  if (realpath(mnt, out))
    return 0;
  if (strict)
    return ff_error(
      "%s: %m%s", mnt,
      errno == ENOTCONN ? " (the fusefarm daemon serving it is dead)" : "");
  if (fa_mount_point_path(mnt, out) == 0)
    return 0;
  if (mnt[0] == '/' && strlen(mnt) < PATH_MAX) {
    snprintf(out, PATH_MAX, "%s", mnt);
    return 0;
  }
  return -1;
}

/* STATE_ROOT "/" + path with every byte outside [A-Za-z0-9._+-] as %XX
 * ('/' is %2F): one directory per mount point, reversible. */
int
fa_default_state_dir(const char *mnt_real, char *out, size_t len)
{
  struct ff_sb sb = FF_SB_INIT;
  size_t start;

  ff_sb_add(&sb, STATE_ROOT "/");
  start = sb.len;
  for (const unsigned char *p = (const unsigned char *)mnt_real; *p; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
        (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '+' ||
        *p == '-')
      ff_sb_addn(&sb, (const char *)p, 1);
    else
      ff_sb_addf(&sb, "%%%02X", *p);
  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    return ff_error("out of memory");
  }
  if (sb.len - start > NAME_MAX || sb.len >= len) {
    ff_sb_release(&sb);
    return ff_error("%s: path too long for a state dir name under " STATE_ROOT
                    " (use --state DIR)",
                    mnt_real);
  }
  memcpy(out, sb.buf, sb.len + 1);
  ff_sb_release(&sb);
  return 0;
}

/* STATE_ROOT/<state dir name>.save-failed for mnt_real. */
static int
save_failed_path(const char *mnt_real, char *out, size_t len)
{
  char dir[PATH_MAX];

  if (fa_default_state_dir(mnt_real, dir, sizeof dir) < 0)
    return -1;
  if ((size_t)snprintf(out, len, "%s.save-failed", dir) >= len)
    return ff_error("%s: path too long", dir);
  return 0;
}

void
fa_note_save_failed(const char *mnt_real, const char *report)
{
  char path[PATH_MAX + 16];

  if (save_failed_path(mnt_real, path, sizeof path) < 0 ||
      fa_mkdir_p(STATE_ROOT, 0755) < 0 ||
      ff_write_file_atomic(path, report, strlen(report)) < 0)
    fprintf(stderr, "fusefarm: cannot record the failed save for %s: %s\n",
            mnt_real, ff_errmsg());
}

int
fa_tell_save_failed(const char *mnt_real, const char *who, int forget)
{
  char path[PATH_MAX + 16], line[4096];
  struct stat st;
  FILE *f;
  int told = 0;

  if (save_failed_path(mnt_real, path, sizeof path) < 0 ||
      lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
    return 0;
  f = fopen(path, "re");
  if (!f)
    return 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    fprintf(stderr,
            "fusefarm %s: %s: the farm's daemon did NOT save its write "
            "overlay at exit: %s\n",
            who, mnt_real, line);
    told = 1;
  }
  fclose(f);
  if (told && forget)
    unlink(path);
  return told;
}

int
fa_join(char *out, const char *a, const char *b)
{
  if (snprintf(out, PATH_MAX, "%s/%s", a, b) >= PATH_MAX)
    return ff_error("%s/%s: path too long", a, b);
  return 0;
}

/* Lock the state dir against a concurrent attach or detach.  Returns the
 * fd holding the lock. */
int
fa_lock_state(const char *state)
{
  int fd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (fd < 0)
    return ff_error("open %s: %m", state);
  if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    if (errno == EWOULDBLOCK)
      ff_error("%s: another fusefarm attach or detach is using this state "
               "dir; try again when it has finished",
               state);
    else
      ff_error("lock %s: %m", state);
    close(fd);
    return -1;
  }
  return fd;
}

/* Create the state dir (refusing a non-empty directory that is not one)
 * and its lvm/devices subdirectory, and lock it.  *fresh is set when
 * there was no loops file yet (a new state dir). */
int
fa_prepare_state(const char *state, int *fresh)
{
  char p[PATH_MAX];
  struct stat st;
  DIR *d;
  int lockfd, fd;

  if (fa_mkdir_p(state, 0755) < 0)
    return -1;
  if (fa_join(p, state, "loops") < 0)
    return -1;
  *fresh = stat(p, &st) < 0;
  if (*fresh) {
    /* A new state dir is empty; refuse to take over anything else (a
     * mistyped --state must not end up cleaned away by detach). */
    d = opendir(state);
    if (!d)
      return ff_error("open %s: %m", state);
    for (struct dirent *e; (e = readdir(d));)
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
          strcmp(e->d_name, "lvm")) {
        closedir(d);
        return ff_error("%s: not empty and not a fusefarm state dir (no "
                        "loops file); choose another --state",
                        state);
      }
    closedir(d);
  }
  lockfd = fa_lock_state(state);
  if (lockfd < 0)
    return -1;
  fd = ff_open_write(p, O_APPEND);
  if (fd < 0 || close(fd) < 0) {
    if (fd >= 0)
      ff_error("create %s: %m", p);
    close(lockfd);
    return -1;
  }
  if (fa_join(p, state, "lvm/devices") < 0 || fa_mkdir_p(p, 0755) < 0) {
    close(lockfd);
    return -1;
  }
  return lockfd;
}

/* ---- the loops file --------------------------------------------------- */

void
fa_records_free(struct records *rs)
{
  for (size_t i = 0; i < rs->n; i++) {
    free(rs->v[i].name);
    free(rs->v[i].backing);
  }
  free(rs->v);
  memset(rs, 0, sizeof *rs);
}

int
fa_records_add(struct records *rs, const char *dev, const char *name,
               const char *backing)
{
  struct record *r;

  if (rs->n == rs->alloc) {
    size_t na = rs->alloc ? 2 * rs->alloc : 256;
    struct record *nv = realloc(rs->v, na * sizeof *nv);

    if (!nv)
      return ff_error("out of memory");
    rs->v = nv;
    rs->alloc = na;
  }
  r = &rs->v[rs->n];
  snprintf(r->dev, sizeof r->dev, "%s", dev);
  r->name = strdup(name);
  r->backing = strdup(backing);
  r->keep = 1;
  rs->n++;
  if (!r->name || !r->backing)
    return ff_error("out of memory");
  return 0;
}

/* Read STATE/loops; a missing file is an empty record. */
int
fa_read_records(const char *state, struct records *rs)
{
  char path[PATH_MAX], *line = NULL;
  size_t cap = 0;
  unsigned lineno = 0;
  ssize_t n;
  FILE *f;
  int r = -1;

  if (fa_join(path, state, "loops") < 0)
    return -1;
  f = fopen(path, "re");
  if (!f) {
    if (errno == ENOENT)
      return 0;
    return ff_error("open %s: %m", path);
  }
  while ((n = getline(&line, &cap, f)) >= 0) {
    char *dev, *name, *backing, *sp;

    lineno++;
    if (n > 0 && line[n - 1] == '\n')
      line[--n] = '\0';
    if (n == 0)
      continue;
    dev = line;
    sp = strchr(dev, ' ');
    name = sp ? sp + 1 : NULL;
    sp = name ? strchr(name, ' ') : NULL;
    backing = sp ? sp + 1 : NULL;
    if (!backing || backing[0] != '/') {
      ff_error("%s:%u: malformed record (expected '<loop device> <device "
               "name> <backing file>'); fix or remove the line by hand",
               path, lineno);
      goto out;
    }
    name[-1] = '\0';
    backing[-1] = '\0';
    if (ff_loop_number(dev) < 0 || strlen(dev) >= FF_LOOP_DEV_LEN || !*name) {
      ff_error("%s:%u: malformed record (expected '<loop device> <device "
               "name> <backing file>'); fix or remove the line by hand",
               path, lineno);
      goto out;
    }
    if (fa_records_add(rs, dev, name, backing) < 0)
      goto out;
  }
  if (ferror(f)) {
    ff_error("read %s: %m", path);
    goto out;
  }
  r = 0;
out:
  free(line);
  fclose(f);
  return r;
}

static void
add_record_line(struct ff_sb *sb, const char *dev, const char *name,
                const char *backing)
{
  ff_sb_addf(sb, "%s %s %s\n", dev, name, backing);
}

/* The one writer of STATE/NAME: FORMAT adds a kept record's line (or
 * nothing) to SB; the file is replaced atomically (ff_write_file_atomic:
 * a temp file next to it, fsync, rename).  With DROP_EMPTY, no line at
 * all removes the file instead of leaving it empty. */
typedef void fa_format_fn(struct ff_sb *sb, const struct record *rec,
                          const void *arg);

static int
fa_rewrite(const char *state, const char *name, const struct records *rs,
           fa_format_fn *format, const void *arg, int drop_empty)
{
  struct ff_sb sb = FF_SB_INIT;
  char path[PATH_MAX];
  int r;

  if (fa_join(path, state, name) < 0)
    return -1;
  ff_sb_add(&sb, "");
  for (size_t i = 0; i < rs->n; i++)
    if (rs->v[i].keep)
      format(&sb, &rs->v[i], arg);
  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    return ff_error("out of memory");
  }
  if (sb.len == 0 && drop_empty) {
    ff_sb_release(&sb);
    if (unlink(path) < 0 && errno != ENOENT)
      return ff_error("remove %s: %m", path);
    return 0;
  }
  r = ff_write_file_atomic(path, sb.buf, sb.len);
  ff_sb_release(&sb);
  return r;
}

static void
format_record(struct ff_sb *sb, const struct record *rec, const void *arg)
{
  (void)arg;
  add_record_line(sb, rec->dev, rec->name, rec->backing);
}

/* Replace STATE/loops with the records still kept. */
int
fa_rewrite_records(const char *state, const struct records *rs)
{
  return fa_rewrite(state, "loops", rs, format_record, NULL, 0);
}

int
fa_read_created(const char *state, struct ff_loop_seen *created)
{
  char path[PATH_MAX], *line = NULL;
  size_t cap = 0;
  ssize_t n;
  FILE *f;
  int r = 0;

  created->bits = NULL;
  created->nbits = 0;
  if (fa_join(path, state, "created") < 0)
    return -1;
  f = fopen(path, "re");
  if (!f)
    return errno == ENOENT ? 0 : ff_error("open %s: %m", path);
  while (r == 0 && (n = getline(&line, &cap, f)) >= 0) {
    int nr;

    if (n > 0 && line[n - 1] == '\n')
      line[--n] = '\0';
    if (n == 0)
      continue;
    nr = ff_loop_number(line);
    if (nr < 0)
      r = ff_error("%s: '%s' is not a loop device; fix or remove the line "
                   "by hand",
                   path, line);
    else
      r = ff_loop_seen_add(created, nr);
  }
  free(line);
  fclose(f);
  if (r < 0)
    ff_loop_seen_free(created);
  return r;
}

static void
format_created(struct ff_sb *sb, const struct record *rec, const void *arg)
{
  const struct ff_loop_seen *created = arg;

  if (ff_loop_seen_has(created, ff_loop_number(rec->dev)))
    ff_sb_addf(sb, "%s\n", rec->dev);
}

int
fa_rewrite_created(const char *state, const struct records *rs,
                   const struct ff_loop_seen *created)
{
  return fa_rewrite(state, "created", rs, format_created, created, 1);
}

int
fa_append_created(int fd, const char *path, const char *dev)
{
  char line[FF_LOOP_DEV_LEN + 2];
  int len = snprintf(line, sizeof line, "%s\n", dev);

  if (len < 0 || (size_t)len >= sizeof line)
    return ff_error("%s: loop device name too long", dev);
  if (write(fd, line, (size_t)len) != len)
    return ff_error("write %s: %m", path);
  return 0;
}

void
fa_journal(const char *what, const char *dev, const char *backing)
{
  static int warned;
  const char *path = getenv("FUSEFARM_LOOP_JOURNAL");
  char line[PATH_MAX + 64];
  int fd, n;

  if (!path || !*path)
    return;
  n = snprintf(line, sizeof line, "%s %s %s\n", what, dev,
               backing ? backing : "-");
  if (n < 0 || (size_t)n >= sizeof line)
    return;
  fd = ff_open_write(path, O_APPEND);
  if (fd < 0 && !warned++)
    fprintf(stderr, "fusefarm: warning: FUSEFARM_LOOP_JOURNAL %s\n",
            ff_errmsg());
  else if (fd >= 0 && write(fd, line, (size_t)n) != n && !warned++)
    fprintf(stderr, "fusefarm: warning: FUSEFARM_LOOP_JOURNAL %s: %s\n", path,
            strerror(errno));
  if (fd >= 0)
    close(fd);
}

/* Append one record and make it durable before the next attach. */
int
fa_append_record(int fd, const char *path, const char *dev, const char *name,
                 const char *backing)
{
  struct ff_sb sb = FF_SB_INIT;
  ssize_t n;

  add_record_line(&sb, dev, name, backing);
  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    return ff_error("out of memory");
  }
  n = write(fd, sb.buf, sb.len);
  if (n != (ssize_t)sb.len) {
    ff_sb_release(&sb);
    return ff_error("write %s: %s", path,
                    n < 0 ? strerror(errno) : "short write");
  }
  ff_sb_release(&sb);
  return 0;
}

/* Remove what attach created in the state dir, then the dir.  Files we
 * did not write (or lvm's own files in lvm/devices) keep it. */
int
fa_remove_state(const char *state)
{
  static const char *const files[] = {"loops",
                                      "loops.tmp",
                                      "created",
                                      "created.tmp",
                                      "lvm/lvm.conf",
                                      "lvm/lvm.conf.tmp",
                                      "lvm/lvmlocal.conf",
                                      "lvm/lvmlocal.conf.tmp",
                                      "lvm/devices/system.devices",
                                      "lvm/devices/system.devices.tmp",
                                      "lvm/devices/system.devices_new",
                                      NULL};
  static const char *const dirs[] = {"lvm/devices", "lvm", "", NULL};
  char p[PATH_MAX];

  for (int i = 0; files[i]; i++)
    if (fa_join(p, state, files[i]) == 0 && unlink(p) < 0 && errno != ENOENT)
      return ff_error("remove %s: %m", p);
  for (int i = 0; dirs[i]; i++) {
    if (dirs[i][0])
      fa_join(p, state, dirs[i]);
    else
      snprintf(p, sizeof p, "%s", state);
    if (rmdir(p) < 0 && errno != ENOENT)
      return ff_error("remove %s: %m (it holds files fusefarm did not "
                      "write; left in place)",
                      p);
  }
  return 0;
}
