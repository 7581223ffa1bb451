/* fusefarm: `fusefarm attach MNT` and `fusefarm detach MNT`: a loop device
 * per farm device file of a fusefarm mount, recorded in a state dir, plus
 * an lvm config and devices file that make lvm see exactly those loops.
 *
 * State dir (default /run/fusefarm/<MNT's real path, '/' as %2F>/):
 *   loops                        "<loop dev> <device name> <backing file>"
 *                                per attached loop, appended and fsync'd
 *                                right after each attach, so a crash
 *                                leaves an accurate record
 *   lvm/lvm.conf                 LVM_SYSTEM_DIR config: devices file on,
 *                                no udev, no hints, no backups, no dbus
 *   lvm/devices/system.devices   the farm's loops, nothing else
 * The state dir is locked (flock on the directory) while a command runs.
 *
 * Thread model: single-threaded.  SIGINT, SIGTERM and SIGHUP only set a
 * flag while loops are attached or detached, so an interrupted command
 * still records (or forgets) exactly what it did.
 */
#include "ff-error.h"
#include "ff-file.h"
#include "ff-loop.h"
#include "ff-util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

#define STATE_ROOT   "/run/fusefarm"
#define DEVICES_LIST ".fusefarm/devices"

/* Per-loop warnings printed before summarizing the rest in one line. */
#define MAX_WARNINGS 20

/* How long detach keeps retrying loops that are still open elsewhere. */
#define BUSY_WAIT_MS 3000

/* Descriptors attach needs at most at once (stdio, the loop control
 * device, the state dir lock, the loops file, one farm file and its loop
 * node, files it rewrites), with room to spare. */
#define ATTACH_FDS 16

/* Descriptors lvm needs besides one per device (lvm-env.sh, ff_lvm). */
#define LVM_SPARE_FDS 64

static const char attach_usage[] =
  "usage: fusefarm attach MNT [--state DIR] [--only NAME,...] [--quiet]\n"
  "\n"
  "Attach a loop device to every farm device file of the fusefarm mount\n"
  "MNT (the devices listed in MNT/.fusefarm/devices) that is not attached\n"
  "yet, and write an lvm config that sees exactly those loop devices.\n"
  "Attaching is incremental: devices that appeared since the last attach\n"
  "of MNT are attached, the others are left as they are.  Free loop\n"
  "devices are reused; none is ever deleted.  Loops have no autoclear, no\n"
  "partition scan and direct I/O off; a device file that cannot be opened\n"
  "for writing is attached read-only.\n"
  "\n"
  "The state dir (default " STATE_ROOT "/<MNT's real path with '/' as\n"
  "%2F>) holds:\n"
  "  loops                       \"<loop dev> <device name> <backing file>\"\n"
  "                              per loop attached, written as they are\n"
  "  lvm/lvm.conf                use with LVM_SYSTEM_DIR=DIR/lvm\n"
  "  lvm/devices/system.devices  the farm's loops and nothing else\n"
  "\n"
  "stdout gets the path of the devices file as its last line; stderr gets\n"
  "a progress bar (only on a terminal), a summary and how to run lvm:\n"
  "  LVM_SYSTEM_DIR=DIR/lvm lvm pvs\n"
  "attach itself holds a few fds whatever the device count, but lvm keeps\n"
  "one per PV (raise ulimit -n above the device count; attach warns when\n"
  "the hard limit is too low), and\n"
  "pvscan --cache and activation write /run/lvm and /run/lock/lvm, which\n"
  "are compiled in: give them a private mount namespace.\n"
  "\n"
  "If attaching fails midway, the loops attached so far stay recorded and\n"
  "`fusefarm detach MNT` frees them.\n"
  "\n"
  "  -s, --state DIR      state dir to use instead of the default\n"
  "      --only NAME,...  attach only these devices\n"
  "  -q, --quiet          no progress, summary or hint on stderr (the\n"
  "                       devices file path is still printed)\n"
  "  -h, --help           this text\n"
  "\n"
  "Exit status: 0 success, 1 runtime failure, 2 bad usage.\n";

static const char detach_usage[] =
  "usage: fusefarm detach MNT [--state DIR] [--quiet]\n"
  "\n"
  "Detach exactly the loop devices `fusefarm attach MNT` recorded in its\n"
  "state dir, and nothing else.  A recorded loop is detached only while\n"
  "the kernel still shows it backed by the recorded file; a loop detached\n"
  "meanwhile and reused by someone else is left alone, with a warning.\n"
  "The farm's files are never opened, so this works when the fusefarm\n"
  "daemon is dead or MNT is no longer mounted.\n"
  "\n"
  "A loop still open elsewhere (lvm, a mount, a holder) is retried for a\n"
  "few seconds; if it stays open it is reported, stays recorded, and the\n"
  "exit status is 1 (the kernel detaches it by itself at its last close;\n"
  "run detach again to forget it).  A recorded loop that is no longer\n"
  "attached (someone ran losetup -d) is reported and forgotten.  When\n"
  "every loop is detached, the state dir is removed, and if MNT is a\n"
  "fusefarm mount whose daemon is dead (Transport endpoint is not\n"
  "connected), MNT is unmounted as well.\n"
  "\n"
  "  -s, --state DIR   state dir to use instead of the default\n"
  "                    (" STATE_ROOT "/<MNT's real path with '/' as %2F>)\n"
  "  -q, --quiet       no progress or summary on stderr\n"
  "  -h, --help        this text\n"
  "\n"
  "Exit status: 0 success, 1 runtime failure or busy loops, 2 bad usage.\n";

/* ---- small helpers ---------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
  interrupted = sig;
}

struct signals {
  struct sigaction old[3];
};
static const int caught[3] = {SIGINT, SIGTERM, SIGHUP};

static void
signals_catch(struct signals *s)
{
  struct sigaction sa;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  interrupted = 0;
  for (int i = 0; i < 3; i++)
    sigaction(caught[i], &sa, &s->old[i]);
}

static void
signals_restore(struct signals *s)
{
  for (int i = 0; i < 3; i++)
    sigaction(caught[i], &s->old[i], NULL);
}

static double
now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

  nanosleep(&ts, NULL);
}

/* A progress bar on stderr, drawn only when stderr is a terminal. */
struct progress {
  const char *verb;
  size_t total;
  int on;
  double last;
  int last_pct;
};

static void
progress_init(struct progress *p, const char *verb, size_t total, int quiet)
{
  p->verb = verb;
  p->total = total;
  p->on = !quiet && total > 0 && isatty(STDERR_FILENO);
  p->last = 0;
  p->last_pct = -1;
}

static void
progress_update(struct progress *p, size_t done)
{
  enum { WIDTH = 30 };
  char bar[WIDTH + 1];
  size_t fill;
  double t;
  int pct;

  if (!p->on)
    return;
  pct = (int)(done * 100 / p->total);
  t = now_s();
  if (done != p->total && pct == p->last_pct && t - p->last < 0.1)
    return;
  p->last = t;
  p->last_pct = pct;
  fill = done * WIDTH / p->total;
  for (size_t i = 0; i < WIDTH; i++)
    bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
  bar[WIDTH] = '\0';
  fprintf(stderr, "\r%s %zu/%zu [%s] %3d%%", p->verb, done, p->total, bar,
          pct);
  fflush(stderr);
}

static void
progress_end(struct progress *p)
{
  if (p->on && p->last_pct >= 0)
    fputs("\r\033[K", stderr);
}

/* mkdir -p with mode for every directory created. */
static int
mkdir_p(const char *path, mode_t mode)
{
  char *tmp = strdup(path);
  int r = 0;

  if (!tmp)
    return ff_error("out of memory");
  for (char *p = tmp + 1;; p++) {
    if (*p == '/' || !*p) {
      char c = *p;

      *p = '\0';
      if (mkdir(tmp, mode) < 0 && errno != EEXIST) {
        r = ff_error("mkdir %s: %m", tmp);
        break;
      }
      if (!c)
        break;
      *p = c;
    }
  }
  free(tmp);
  return r;
}

/* Replace path with data: write path.tmp, fsync, rename, fsync the dir. */
/* Shell-quote s for a hint line only when it needs it. */
static void
add_shell_word(struct ff_sb *sb, const char *s)
{
  if (s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789%+,-./:=@_")] == '\0') {
    ff_sb_add(sb, s);
    return;
  }
  ff_sb_add(sb, "'");
  for (; *s; s++)
    if (*s == '\'')
      ff_sb_add(sb, "'\\''");
    else
      ff_sb_addn(sb, s, 1);
  ff_sb_add(sb, "'");
}

/* ---- MNT and the state dir -------------------------------------------- */

/* The absolute path of mount point mnt without looking at mnt itself
 * (a stuck FUSE daemon would never answer): the real path of its parent
 * plus its last component. */
static int
mount_point_path(const char *mnt, char *out)
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
static int
resolve_mnt(const char *mnt, int strict, char *out)
{
  if (realpath(mnt, out))
    return 0;
  if (strict)
    return ff_error(
      "%s: %m%s", mnt,
      errno == ENOTCONN ? " (the fusefarm daemon serving it is dead)" : "");
  if (mount_point_path(mnt, out) == 0)
    return 0;
  if (mnt[0] == '/' && strlen(mnt) < PATH_MAX) {
    snprintf(out, PATH_MAX, "%s", mnt);
    return 0;
  }
  return -1;
}

/* STATE_ROOT "/" + path with every byte outside [A-Za-z0-9._+-] as %XX
 * ('/' is %2F): one directory per mount point, reversible. */
static int
default_state_dir(const char *mnt_real, char *out, size_t len)
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

static int
join(char *out, const char *a, const char *b)
{
  if (snprintf(out, PATH_MAX, "%s/%s", a, b) >= PATH_MAX)
    return ff_error("%s/%s: path too long", a, b);
  return 0;
}

/* Lock the state dir against a concurrent attach or detach.  Returns the
 * fd holding the lock. */
static int
lock_state(const char *state)
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
static int
prepare_state(const char *state, int *fresh)
{
  char p[PATH_MAX];
  struct stat st;
  DIR *d;
  int lockfd, fd;

  if (mkdir_p(state, 0755) < 0)
    return -1;
  if (join(p, state, "loops") < 0)
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
  lockfd = lock_state(state);
  if (lockfd < 0)
    return -1;
  fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0 || close(fd) < 0) {
    ff_error("create %s: %m", p);
    close(lockfd);
    return -1;
  }
  if (join(p, state, "lvm/devices") < 0 || mkdir_p(p, 0755) < 0) {
    close(lockfd);
    return -1;
  }
  return lockfd;
}

/* ---- MNT/.fusefarm/devices -------------------------------------------- */

struct farm_dev {
  char *name;
  char *role;
  char pvid[FF_UUID_LEN + 1]; /* "" when the device is not a PV */
};

struct devlist {
  struct farm_dev *v;
  size_t n;
};

static void
devlist_free(struct devlist *l)
{
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].name);
    free(l->v[i].role);
  }
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

static int
valid_dev_name(const char *s)
{
  size_t n = strlen(s);

  if (!n || n > NAME_MAX || !strcmp(s, ".") || !strcmp(s, "..") || s[0] == '.')
    return 0;
  for (; *s; s++)
    if (*s == '/' || (unsigned char)*s < 0x21 || *s == 0x7f)
      return 0;
  return 1;
}

static int
valid_pvid(const char *s)
{
  if (strlen(s) != FF_UUID_LEN)
    return 0;
  for (; *s; s++)
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
          (*s >= 'A' && *s <= 'Z') || *s == '!' || *s == '#'))
      return 0;
  return 1;
}

static int
cmp_dev_name(const void *a, const void *b)
{
  return strcmp((*(const struct farm_dev *const *)a)->name,
                (*(const struct farm_dev *const *)b)->name);
}

/* Read and check MNT/.fusefarm/devices: "<name> <role> <pvid|->" lines.
 * A missing file means MNT is not a fusefarm mount. */
static int
read_devices_list(const char *mnt, struct devlist *l)
{
  static const char *const roles[] = {"pv",        "orphan",    "blank",
                                      "signature", "duplicate", NULL};
  char path[PATH_MAX], *line = NULL;
  struct farm_dev **sorted = NULL;
  size_t cap = 0, alloc = 0;
  unsigned lineno = 0;
  FILE *f;
  int r = -1;

  if (join(path, mnt, DEVICES_LIST) < 0)
    return -1;
  f = fopen(path, "re");
  if (!f) {
    if (errno == ENOENT)
      return ff_error("%s: not a fusefarm mount (no %s); mount one with "
                      "`fusefarm mount SPEC %s` first",
                      mnt, DEVICES_LIST, mnt);
    if (errno == ENOTCONN)
      return ff_error("open %s: %m (the fusefarm daemon serving %s is dead: "
                      "`fusefarm detach %s`, `fusermount3 -u %s`, then mount "
                      "it again)",
                      path, mnt, mnt, mnt);
    return ff_error("open %s: %m", path);
  }
  while (getline(&line, &cap, f) >= 0) {
    char *fields[4], *save = NULL;
    int nf = 0, known = 0;

    lineno++;
    for (char *t = strtok_r(line, " \t\r\n", &save); t;
         t = strtok_r(NULL, " \t\r\n", &save))
      if (nf < 4)
        fields[nf++] = t;
      else
        nf = 5;
    if (nf == 0)
      continue;
    if (nf != 3) {
      ff_error("%s:%u: expected '<name> <role> <pvid or ->'", path, lineno);
      goto out;
    }
    if (!valid_dev_name(fields[0])) {
      ff_error("%s:%u: bad device name '%s'", path, lineno, fields[0]);
      goto out;
    }
    for (int i = 0; roles[i]; i++)
      known |= !strcmp(fields[1], roles[i]);
    if (!known) {
      ff_error("%s:%u: %s: unknown role '%s' (expected pv, orphan, blank, "
               "signature or duplicate)",
               path, lineno, fields[0], fields[1]);
      goto out;
    }
    if (strcmp(fields[2], "-") && !valid_pvid(fields[2])) {
      ff_error("%s:%u: %s: bad pvid '%s' (expected 32 characters without "
               "dashes, or -)",
               path, lineno, fields[0], fields[2]);
      goto out;
    }
    if (l->n == alloc) {
      size_t na = alloc ? 2 * alloc : 256;
      struct farm_dev *nv = realloc(l->v, na * sizeof *nv);

      if (!nv) {
        ff_error("out of memory");
        goto out;
      }
      l->v = nv;
      alloc = na;
    }
    l->v[l->n].name = strdup(fields[0]);
    l->v[l->n].role = strdup(fields[1]);
    snprintf(l->v[l->n].pvid, sizeof l->v[l->n].pvid, "%s",
             strcmp(fields[2], "-") ? fields[2] : "");
    l->n++;
    if (!l->v[l->n - 1].name || !l->v[l->n - 1].role) {
      ff_error("out of memory");
      goto out;
    }
  }
  if (ferror(f)) {
    ff_error("read %s: %m", path);
    goto out;
  }
  /* Duplicate names would make two loops for one file. */
  sorted = malloc((l->n + 1) * sizeof *sorted);
  if (!sorted) {
    ff_error("out of memory");
    goto out;
  }
  for (size_t i = 0; i < l->n; i++)
    sorted[i] = &l->v[i];
  qsort(sorted, l->n, sizeof *sorted, cmp_dev_name);
  for (size_t i = 1; i < l->n; i++)
    if (!strcmp(sorted[i]->name, sorted[i - 1]->name)) {
      ff_error("%s: device %s listed twice", path, sorted[i]->name);
      goto out;
    }
  r = 0;
out:
  free(sorted);
  free(line);
  fclose(f);
  if (r < 0)
    devlist_free(l);
  return r;
}

/* ---- the loops file --------------------------------------------------- */

struct record {
  char dev[FF_LOOP_DEV_LEN];
  char *name;
  char *backing;
  int keep; /* still ours: stays in the loops file */
};

struct records {
  struct record *v;
  size_t n, alloc;
};

static void
records_free(struct records *rs)
{
  for (size_t i = 0; i < rs->n; i++) {
    free(rs->v[i].name);
    free(rs->v[i].backing);
  }
  free(rs->v);
  memset(rs, 0, sizeof *rs);
}

static int
records_add(struct records *rs, const char *dev, const char *name,
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
static int
read_records(const char *state, struct records *rs)
{
  char path[PATH_MAX], *line = NULL;
  size_t cap = 0;
  unsigned lineno = 0;
  ssize_t n;
  FILE *f;
  int r = -1;

  if (join(path, state, "loops") < 0)
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
    if (records_add(rs, dev, name, backing) < 0)
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

/* Replace STATE/loops with the records still kept. */
static int
rewrite_records(const char *state, const struct records *rs)
{
  struct ff_sb sb = FF_SB_INIT;
  char path[PATH_MAX];
  int r;

  if (join(path, state, "loops") < 0)
    return -1;
  ff_sb_add(&sb, "");
  for (size_t i = 0; i < rs->n; i++)
    if (rs->v[i].keep)
      add_record_line(&sb, rs->v[i].dev, rs->v[i].name, rs->v[i].backing);
  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    return ff_error("out of memory");
  }
  r = ff_write_file_atomic(path, sb.buf, sb.len);
  ff_sb_release(&sb);
  return r;
}

/* Append one record and make it durable before the next attach. */
static int
append_record(int fd, const char *path, const char *dev, const char *name,
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
  if (fsync(fd) < 0)
    return ff_error("fsync %s: %m", path);
  return 0;
}

/* ---- lvm config and devices file --------------------------------------- */

static int
write_lvm_conf(const char *state, const char *mnt)
{
  struct ff_sb sb = FF_SB_INIT;
  char path[PATH_MAX], lvmdir[PATH_MAX];
  int r;

  if (join(lvmdir, state, "lvm") < 0 || join(path, lvmdir, "lvm.conf") < 0)
    return -1;
  ff_sb_addf(&sb,
             "# lvm.conf written by `fusefarm attach` for the farm mounted "
             "at\n#   %s\n",
             mnt);
  ff_sb_add(&sb, "#\n"
                 "# With it lvm sees exactly the farm's loop devices, listed "
                 "in\n"
                 "# devices/system.devices next to this file, and no other "
                 "disk of the\n"
                 "# machine.  Use it as\n"
                 "#   LVM_SYSTEM_DIR=");
  ff_sb_add(&sb, lvmdir);
  ff_sb_add(
    &sb,
    " lvm pvs\n"
    "# lvm keeps one fd per PV: raise `ulimit -n` above the device count,\n"
    "# or pvs lists fewer PVs and still exits 0.\n"
    "# /run/lvm (hints, pvscan --cache's online files) and /run/lock/lvm\n"
    "# are compiled into lvm, not moved by LVM_SYSTEM_DIR: run pvscan\n"
    "# --cache, activation and anything else that writes there in a "
    "private\n"
    "# mount namespace, e.g.\n"
    "#   unshare -m sh -c 'mount --bind PRIVATE_RUN /run/lvm &&\n"
    "#     mount --bind PRIVATE_LOCK /run/lock/lvm && exec lvm pvscan "
    "--cache'\n"
    "# `fusefarm detach` removes this file with the loops.\n"
    "devices {\n"
    "\t# only the devices in devices/system.devices\n"
    "\tuse_devicesfile = 1\n"
    "\tdevicesfile = \"system.devices\"\n"
    "\t# no udev daemon here: list devices from /dev\n"
    "\tobtain_device_list_from_udev = 0\n"
    "\t# never trust /run/lvm/hints, shared with the host\n"
    "\thints = \"none\"\n"
    "}\n"
    "activation {\n"
    "\tudev_sync = 0\n"
    "\tudev_rules = 0\n"
    "\t# never ask the host's dmeventd to monitor farm LVs\n"
    "\tmonitoring = 0\n"
    "}\n"
    "backup {\n"
    "\t# write nothing under /etc/lvm\n"
    "\tbackup = 0\n"
    "\tarchive = 0\n"
    "}\n"
    "global {\n"
    "\t# never talk to the host's lvmdbusd or lvmpolld\n"
    "\tnotify_dbus = 0\n"
    "\tuse_lvmpolld = 0\n"
    "}\n");
  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    return ff_error("out of memory");
  }
  r = ff_write_file_atomic(path, sb.buf, sb.len);
  ff_sb_release(&sb);
  return r;
}

/* lvm reads IDNAME up to the next blank: a path with one cannot be a
 * loop_file id. */
static int
idname_ok(const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s <= ' ' || *s == 0x7f)
      return 0;
  return 1;
}

static const char *
pvid_of(struct farm_dev **sorted, size_t n, const char *name)
{
  struct farm_dev key = {.name = (char *)name}, *kp = &key, **hit;

  if (!sorted)
    return "";
  hit = bsearch(&kp, sorted, n, sizeof *sorted, cmp_dev_name);
  return hit ? (*hit)->pvid : "";
}

/* Write STATE/lvm/devices/system.devices: every kept record, with the
 * PVID the devices list gives (lvm checks it; "." when none). */
static int
write_devices_file(const char *state, const char *mnt,
                   const struct records *rs, const struct devlist *l,
                   const char *cmd, int quiet)
{
  struct ff_sb sb = FF_SB_INIT;
  struct farm_dev **sorted = NULL;
  char path[PATH_MAX];
  int r, warned = 0;

  if (join(path, state, "lvm/devices/system.devices") < 0)
    return -1;
  if (l && l->n) {
    sorted = malloc(l->n * sizeof *sorted);
    if (!sorted)
      return ff_error("out of memory");
    for (size_t i = 0; i < l->n; i++)
      sorted[i] = &l->v[i];
    qsort(sorted, l->n, sizeof *sorted, cmp_dev_name);
  }
  ff_sb_addf(&sb,
             "# LVM uses devices listed in this file.\n"
             "# Written by fusefarm attach: the loop devices of the farm "
             "at %s, nothing else.\n"
             "VERSION=1.1.1\n",
             mnt);
  for (size_t i = 0; i < rs->n; i++) {
    const struct record *rec = &rs->v[i];
    const char *pvid;

    if (!rec->keep)
      continue;
    pvid = pvid_of(sorted, l ? l->n : 0, rec->name);
    if (idname_ok(rec->backing)) {
      ff_sb_addf(&sb, "IDTYPE=loop_file IDNAME=%s DEVNAME=%s PVID=%s\n",
                 rec->backing, rec->dev, *pvid ? pvid : ".");
    } else {
      /* Loop numbers change across reattach; good enough until then. */
      if (!warned && !quiet)
        fprintf(stderr,
                "fusefarm %s: warning: %s has a blank in its path: the "
                "devices file names its loops by device name instead\n",
                cmd, rec->backing);
      warned = 1;
      ff_sb_addf(&sb, "IDTYPE=devname IDNAME=%s DEVNAME=%s PVID=%s\n",
                 rec->dev, rec->dev, *pvid ? pvid : ".");
    }
  }
  free(sorted);
  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    return ff_error("out of memory");
  }
  r = ff_write_file_atomic(path, sb.buf, sb.len);
  ff_sb_release(&sb);
  return r;
}

/* Keep only the devices-file entries of loops that stay recorded (detach
 * cannot ask the daemon for PVIDs, so it filters what attach wrote). */
static int
filter_devices_file(const char *state, const struct records *rs)
{
  struct ff_sb sb = FF_SB_INIT;
  char path[PATH_MAX], *line = NULL;
  size_t cap = 0;
  FILE *f;
  int r;

  if (join(path, state, "lvm/devices/system.devices") < 0)
    return -1;
  f = fopen(path, "re");
  if (!f)
    return errno == ENOENT ? 0 : ff_error("open %s: %m", path);
  ff_sb_add(&sb, "");
  while (getline(&line, &cap, f) >= 0) {
    const char *dn = strstr(line, " DEVNAME=");
    int keep = strncmp(line, "IDTYPE=", 7) != 0;

    for (size_t i = 0; !keep && dn && i < rs->n; i++) {
      size_t dl = strlen(rs->v[i].dev);

      keep = rs->v[i].keep && !strncmp(dn + 9, rs->v[i].dev, dl) &&
             (dn[9 + dl] == ' ' || dn[9 + dl] == '\n' || !dn[9 + dl]);
    }
    if (keep)
      ff_sb_add(&sb, line);
  }
  free(line);
  fclose(f);
  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    return ff_error("out of memory");
  }
  r = ff_write_file_atomic(path, sb.buf, sb.len);
  ff_sb_release(&sb);
  return r;
}

/* Remove what attach created in the state dir, then the dir.  Files we
 * did not write (or lvm's own files in lvm/devices) keep it. */
static int
remove_state(const char *state)
{
  static const char *const files[] = {"loops",
                                      "loops.tmp",
                                      "lvm/lvm.conf",
                                      "lvm/lvm.conf.tmp",
                                      "lvm/devices/system.devices",
                                      "lvm/devices/system.devices.tmp",
                                      "lvm/devices/system.devices_new",
                                      NULL};
  static const char *const dirs[] = {"lvm/devices", "lvm", "", NULL};
  char p[PATH_MAX];

  for (int i = 0; files[i]; i++)
    if (join(p, state, files[i]) == 0 && unlink(p) < 0 && errno != ENOENT)
      return ff_error("remove %s: %m", p);
  for (int i = 0; dirs[i]; i++) {
    if (dirs[i][0])
      join(p, state, dirs[i]);
    else
      snprintf(p, sizeof p, "%s", state);
    if (rmdir(p) < 0 && errno != ENOENT)
      return ff_error("remove %s: %m (it holds files fusefarm did not "
                      "write; left in place)",
                      p);
  }
  return 0;
}

/* ---- attach ----------------------------------------------------------- */

/* Raise the soft fd limit to the hard one and refuse, before anything is
 * created, when even that is below what attach itself needs.  attach
 * holds a constant number of descriptors whatever the device count (a
 * file and its loop node at a time): a low limit could only make it fail
 * on its first device, but it says so up front instead.  *inherited gets
 * the hard limit the caller had, for the lvm warning below. */
static int
check_nofile(rlim_t *inherited)
{
  return ff_nofile_raise(ATTACH_FDS, "attach",
                         "ulimit -n 1024 or more: lvm needs one per device "
                         "as well",
                         inherited);
}

/* lvm keeps one descriptor per PV and, short of them, fails or lists
 * fewer PVs.  It raises its soft limit itself, but not the hard one: warn
 * when the hard limit attach inherited cannot hold the farm's devices. */
static void
warn_lvm_nofile(rlim_t hard, size_t ndev)
{
  size_t need = ndev + LVM_SPARE_FDS;

  if (hard == RLIM_INFINITY || hard >= need)
    return;
  fprintf(stderr,
          "fusefarm attach: warning: the hard file descriptor limit here "
          "is %llu, but lvm keeps one per device and needs %zu for these "
          "%zu devices (it fails or lists fewer PVs with less); raise it "
          "before running lvm: ulimit -n %zu\n",
          (unsigned long long)hard, need, ndev, need);
}

/* --only NAME,...: keep just those devices of l, in l's order. */
static int
filter_only(struct devlist *l, const char *only, const char *mnt)
{
  char *copy = strdup(only), *save = NULL;
  unsigned char *want;
  size_t kept = 0;
  int r = 0;

  want = calloc(l->n + 1, 1);
  if (!copy || !want) {
    free(copy);
    free(want);
    return ff_error("out of memory");
  }
  for (char *t = strtok_r(copy, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    size_t i;

    for (i = 0; i < l->n && strcmp(l->v[i].name, t); i++)
      ;
    if (i == l->n) {
      r = ff_error("--only %s: no such device in %s/" DEVICES_LIST, t, mnt);
      break;
    }
    want[i] = 1;
  }
  if (r == 0) {
    for (size_t i = 0; i < l->n; i++) {
      if (want[i]) {
        l->v[kept++] = l->v[i];
      } else {
        free(l->v[i].name);
        free(l->v[i].role);
      }
    }
    l->n = kept;
  }
  free(copy);
  free(want);
  return r;
}

static int
cmp_record_name(const void *a, const void *b)
{
  return strcmp((*(const struct record *const *)a)->name,
                (*(const struct record *const *)b)->name);
}

int
ff_cmd_attach(int argc, char **argv)
{
  static const struct option opts[] = {
    {"state", required_argument, NULL, 's'},
    {"only", required_argument, NULL, 'O'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *state_opt = NULL, *only = NULL, *mnt;
  char mnt_real[PATH_MAX], state[PATH_MAX], path[PATH_MAX], loops[PATH_MAX];
  char why[1024];
  struct devlist list = {NULL, 0};
  struct records recs = {NULL, 0, 0};
  struct record **by_name = NULL;
  struct ff_loop *lp = NULL;
  struct progress prog;
  struct signals sigs;
  size_t *todo = NULL, ntodo = 0, nattached = 0, nlive = 0, ndropped = 0;
  size_t nreused = 0;
  int quiet = 0, c, rc = 1, ctl = -1, lockfd = -1, loopsfd = -1;
  int failed = 0, caught_sigs = 0, fresh = 0;
  size_t ngone = 0;
  rlim_t hard_nofile = RLIM_INFINITY;
  double t0;

  optind = 1;
  while ((c = getopt_long(argc, argv, "s:qh", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      state_opt = optarg;
      break;
    case 'O':
      only = optarg;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'h':
      fputs(attach_usage, stdout);
      return 0;
    default:
      fputs(attach_usage, stderr);
      return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "fusefarm attach: %s\n%s",
            optind == argc ? "missing MNT" : "too many arguments",
            attach_usage);
    return 2;
  }
  mnt = argv[optind];
  if (state_opt && !*state_opt) {
    fprintf(stderr, "fusefarm attach: --state: empty path\n");
    return 2;
  }
  t0 = now_s();

  /* Everything that can refuse does so before anything is created. */
  if (check_nofile(&hard_nofile) < 0)
    goto fail;
  ctl = ff_loop_control_open();
  if (ctl < 0)
    goto fail;
  if (resolve_mnt(mnt, 1, mnt_real) < 0)
    goto fail;
  if (strchr(mnt_real, '\n')) {
    ff_error("%s: a newline in the path cannot be recorded", mnt_real);
    goto fail;
  }
  if (read_devices_list(mnt_real, &list) < 0)
    goto fail;
  if (only && filter_only(&list, only, mnt_real) < 0)
    goto fail;
  if (state_opt)
    snprintf(state, sizeof state, "%s", state_opt);
  else if (default_state_dir(mnt_real, state, sizeof state) < 0)
    goto fail;
  if (strchr(state, '\n')) {
    ff_error("%s: a newline in the state dir path", state);
    goto fail;
  }
  lockfd = prepare_state(state, &fresh);
  if (lockfd < 0)
    goto fail;
  /* Absolute from here on: it goes into LVM_SYSTEM_DIR hints and the
   * printed devices file path. */
  if (!realpath(state, path)) {
    ff_error("%s: %m", state);
    goto fail;
  }
  memcpy(state, path, strlen(path) + 1);

  /* Which recorded loops are still ours?  A loop detached behind our back
   * is forgotten; one someone else reused is forgotten with a warning. */
  if (read_records(state, &recs) < 0)
    goto fail;
  for (size_t i = 0; i < recs.n; i++) {
    int st = ff_loop_check(recs.v[i].dev, recs.v[i].backing);

    if (st < 0) {
      fprintf(stderr, "fusefarm attach: warning: %s; keeping its record\n",
              ff_errmsg());
      st = FF_LOOP_OK;
    }
    if (st == FF_LOOP_OTHER && nreused++ < MAX_WARNINGS)
      fprintf(stderr,
              "fusefarm attach: warning: %s: %s; someone else reused it: "
              "forgetting it\n",
              recs.v[i].name, ff_errmsg());
    /* Detached behind our back (losetup -d, a reboot): say so, since
     * the device gets a new loop below if the farm still lists it. */
    if (st == FF_LOOP_UNBOUND && ngone++ < MAX_WARNINGS)
      fprintf(stderr,
              "fusefarm attach: warning: %s: %s is no longer attached "
              "(detached by someone else): forgetting it; it is attached "
              "again if %s still lists %s\n",
              recs.v[i].name, recs.v[i].dev, DEVICES_LIST, recs.v[i].name);
    recs.v[i].keep = st == FF_LOOP_OK;
    if (recs.v[i].keep)
      nlive++;
    else
      ndropped++;
  }
  if (nreused > MAX_WARNINGS)
    fprintf(stderr,
            "fusefarm attach: warning: %zu more recorded loops were reused "
            "by someone else: forgetting them\n",
            nreused - MAX_WARNINGS);
  if (ngone > MAX_WARNINGS)
    fprintf(stderr,
            "fusefarm attach: warning: %zu more recorded loops are no "
            "longer attached: forgetting them\n",
            ngone - MAX_WARNINGS);
  if (ndropped && rewrite_records(state, &recs) < 0)
    goto fail;

  /* The devices file must exist before any lvm call (an absent one makes
   * lvm scan every disk of the machine), so write it before attaching. */
  if (write_lvm_conf(state, mnt_real) < 0 ||
      write_devices_file(state, mnt_real, &recs, &list, "attach", quiet) < 0)
    goto fail;

  by_name = malloc((recs.n + 1) * sizeof *by_name);
  todo = malloc((list.n + 1) * sizeof *todo);
  lp = malloc(sizeof *lp);
  if (!by_name || !todo || !lp) {
    ff_error("out of memory");
    goto fail;
  }
  {
    size_t k = 0;

    for (size_t i = 0; i < recs.n; i++)
      if (recs.v[i].keep)
        by_name[k++] = &recs.v[i];
    qsort(by_name, k, sizeof *by_name, cmp_record_name);
    for (size_t i = 0; i < list.n; i++) {
      struct record key = {.name = list.v[i].name}, *kp = &key;

      if (!bsearch(&kp, by_name, k, sizeof *by_name, cmp_record_name))
        todo[ntodo++] = i;
    }
    /* by_name points into recs.v, which grows (moves) below. */
    free(by_name);
    by_name = NULL;
  }

  if (join(loops, state, "loops") < 0)
    goto fail;
  loopsfd = open(loops, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (loopsfd < 0) {
    ff_error("open %s: %m", loops);
    goto fail;
  }
  progress_init(&prog, "attaching", ntodo, quiet);
  signals_catch(&sigs);
  caught_sigs = 1;
  for (size_t i = 0; i < ntodo; i++) {
    const struct farm_dev *d = &list.v[todo[i]];

    if (interrupted) {
      ff_error("interrupted by signal %d", (int)interrupted);
      failed = 1;
      break;
    }
    if (join(path, mnt_real, d->name) < 0) {
      failed = 1;
      break;
    }
    if (ff_loop_attach(ctl, path, lp) < 0) {
      int e = errno;

      snprintf(why, sizeof why, "%s", ff_errmsg());
      if (e == ENOTCONN)
        ff_error("%s (the fusefarm daemon serving %s is dead)", why, mnt_real);
      else if (e == ENOENT)
        ff_error("%s (listed in %s/" DEVICES_LIST " but not there)", why,
                 mnt_real);
      else if (e == EACCES || e == EPERM)
        ff_error("%s (cannot open the farm's files: a FUSE mount of another "
                 "user needs -o allow_other)",
                 why);
      failed = 1;
      break;
    }
    if (append_record(loopsfd, loops, lp->dev, d->name, lp->backing) < 0 ||
        records_add(&recs, lp->dev, d->name, lp->backing) < 0) {
      /* Recording failed: do not leave an unrecorded loop behind. */
      ff_loop_detach(lp->dev, lp->backing);
      failed = 1;
      break;
    }
    nattached++;
    progress_update(&prog, nattached);
  }
  progress_end(&prog);
  signals_restore(&sigs);
  caught_sigs = 0;

  if (failed) /* keep the reason: writing the devices file may fail too */
    snprintf(why, sizeof why, "%s", ff_errmsg());
  if (nattached &&
      write_devices_file(state, mnt_real, &recs, &list, "attach", quiet) < 0) {
    fprintf(stderr, "fusefarm attach: %s\n", ff_errmsg());
    if (!failed)
      snprintf(why, sizeof why, "%s", ff_errmsg());
    failed = 1;
  }
  if (failed) {
    fprintf(stderr, "fusefarm attach: %s\n", why);
    if (nattached + nlive == 0)
      fprintf(stderr, "fusefarm attach: no loop device was attached\n");
    else
      fprintf(stderr,
              "fusefarm attach: attached %zu of %zu loop devices before the "
              "failure (and %zu before this run); %s records them all and "
              "`fusefarm detach %s%s%s` frees them\n",
              nattached, ntodo, nlive, loops, mnt,
              state_opt ? " --state " : "", state_opt ? state : "");
    goto out;
  }
  warn_lvm_nofile(hard_nofile, nlive + nattached);
  if (!quiet) {
    struct ff_sb sb = FF_SB_INIT;
    char lvmdir[PATH_MAX];

    fprintf(stderr, "attached %zu loop device%s in %.1f s", nattached,
            nattached == 1 ? "" : "s", now_s() - t0);
    if (nlive)
      fprintf(stderr, " (%zu %s attached already)", nlive,
              nlive == 1 ? "was" : "were");
    fputc('\n', stderr);
    join(lvmdir, state, "lvm");
    ff_sb_add(&sb, "LVM_SYSTEM_DIR=");
    add_shell_word(&sb, lvmdir);
    ff_sb_add(&sb, " lvm pvs");
    if (!ff_sb_failed(&sb))
      fprintf(stderr,
              "%s\n"
              "  (lvm keeps one fd per PV: ulimit -n must exceed %zu; "
              "pvscan --cache and activation write /run/lvm: give them a "
              "private one, e.g. unshare -m + mount --bind)\n",
              sb.buf, nlive + nattached);
    ff_sb_release(&sb);
  }
  if (join(path, state, "lvm/devices/system.devices") < 0)
    goto fail;
  printf("%s\n", path);
  if (fflush(stdout) == EOF) {
    ff_error("write stdout: %m");
    goto fail;
  }
  rc = 0;
  goto out;

fail:
  fprintf(stderr, "fusefarm attach: %s\n", ff_errmsg());
out:
  if (caught_sigs)
    signals_restore(&sigs);
  /* A failed first attach that attached nothing leaves nothing behind. */
  if (rc != 0 && fresh && lockfd >= 0 && nattached + nlive == 0 &&
      remove_state(state) < 0)
    fprintf(stderr, "fusefarm attach: warning: %s\n", ff_errmsg());
  if (loopsfd >= 0)
    close(loopsfd);
  if (lockfd >= 0)
    close(lockfd);
  if (ctl >= 0)
    close(ctl);
  free(lp);
  free(todo);
  free(by_name);
  records_free(&recs);
  devlist_free(&list);
  return rc;
}

/* ---- detach ----------------------------------------------------------- */

/* Undo the octal escapes (\040 for a blank, ...) of a /proc mountinfo
 * field, in place. */
static void
unescape_mountinfo(char *s)
{
  char *o = s;

  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
        s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else {
      *o++ = *s;
    }
  }
  *o = '\0';
}

/* The file system type of the topmost mount at path (absolute, no
 * symlinks) from /proc/self/mountinfo, into type; 1 found, 0 not a mount
 * point, -1 error.  Never touches path itself (a dead FUSE mount answers
 * ENOTCONN). */
static int
mount_type(const char *path, char *type, size_t len)
{
  char *line = NULL;
  size_t cap = 0;
  int found = 0;
  FILE *f = fopen("/proc/self/mountinfo", "re");

  if (!f)
    return ff_error("open /proc/self/mountinfo: %m");
  while (getline(&line, &cap, f) >= 0) {
    char *save = NULL, *field[5], *t, *fstype = NULL;
    int n = 0;

    for (t = strtok_r(line, " \n", &save); t && n < 5;
         t = strtok_r(NULL, " \n", &save))
      field[n++] = t;
    if (n < 5)
      continue;
    /* Optional fields, then "-", then the type. */
    while ((t = strtok_r(NULL, " \n", &save)) && strcmp(t, "-"))
      ;
    if (t)
      fstype = strtok_r(NULL, " \n", &save);
    unescape_mountinfo(field[4]);
    if (fstype && !strcmp(field[4], path)) {
      snprintf(type, len, "%s", fstype);
      found = 1; /* keep going: the last one is on top */
    }
  }
  free(line);
  fclose(f);
  return found;
}

/* Is the FUSE mount at path dead (its daemon gone: ENOTCONN)?  statfs
 * always asks the daemon (stat may be answered from the attribute cache
 * for a second after it died), so a live but stuck daemon would never
 * answer: ask from a child and give up after DEAD_PROBE_MS, calling the
 * mount alive.  1 dead, 0 alive or unknown. */
#define DEAD_PROBE_MS 2000
static int
mount_is_dead(const char *path)
{
  int status;
  pid_t pid, w;

  fflush(NULL);
  pid = fork();
  if (pid < 0)
    return 0;
  if (pid == 0) {
    struct statfs sf;

    _exit(statfs(path, &sf) < 0 && errno == ENOTCONN ? 1 : 0);
  }
  for (int waited = 0;; waited += 10) {
    w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      return WIFEXITED(status) && WEXITSTATUS(status) == 1;
    if (w < 0 && errno != EINTR)
      return 0;
    if (waited >= DEAD_PROBE_MS) {
      kill(pid, SIGKILL); /* a FUSE request wait ends on SIGKILL */
      waitpid(pid, &status, 0);
      return 0;
    }
    sleep_ms(10);
  }
}

/* When MNT is a fusefarm mount whose daemon is dead (the kernel answers
 * ENOTCONN), nothing can use it again: unmount it, so that `fusefarm
 * detach` after a crash leaves neither loops nor a dead mount.  Called
 * once every loop is detached (the loops held its files).  A mount still
 * held by someone else (an open file, a shell's cwd) is detached lazily.
 * A live mount is never touched, and MNT itself is only looked at from a
 * child process (mount_is_dead).  Returns 0 (unmounted, or nothing to do)
 * or -1 with a message. */
static int
unmount_dead(const char *mnt, int quiet)
{
  char real[PATH_MAX], type[64];
  int r;

  if (mount_point_path(mnt, real) < 0)
    return 0;
  r = mount_type(real, type, sizeof type);
  if (r < 0)
    return -1;
  if (r == 0 || strcmp(type, "fuse.fusefarm") || !mount_is_dead(real))
    return 0;
  if (umount2(real, UMOUNT_NOFOLLOW) == 0) {
    if (!quiet)
      fprintf(stderr,
              "fusefarm detach: unmounted %s (the fusefarm daemon serving "
              "it was dead)\n",
              real);
    return 0;
  }
  if (errno == EBUSY && umount2(real, UMOUNT_NOFOLLOW | MNT_DETACH) == 0) {
    fprintf(stderr,
            "fusefarm detach: warning: unmounted %s lazily (the fusefarm "
            "daemon serving it was dead, and something still holds a file "
            "or directory of it open)\n",
            real);
    return 0;
  }
  return ff_error("%s: the fusefarm daemon serving it is dead, but it "
                  "could not be unmounted: %m; unmount it with "
                  "`fusermount3 -u %s`",
                  real, real);
}

int
ff_cmd_detach(int argc, char **argv)
{
  static const struct option opts[] = {
    {"state", required_argument, NULL, 's'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *state_opt = NULL, *mnt;
  char mnt_real[PATH_MAX], state[PATH_MAX];
  struct records recs = {NULL, 0, 0};
  struct progress prog;
  struct signals sigs;
  size_t ndetached = 0, ngone = 0, nother = 0, nbusy = 0, nerr = 0, done = 0;
  unsigned char *busy = NULL;
  int quiet = 0, c, rc = 1, lockfd = -1;
  struct stat st;
  double t0, t_pass;

  optind = 1;
  while ((c = getopt_long(argc, argv, "s:qh", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      state_opt = optarg;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'h':
      fputs(detach_usage, stdout);
      return 0;
    default:
      fputs(detach_usage, stderr);
      return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "fusefarm detach: %s\n%s",
            optind == argc ? "missing MNT" : "too many arguments",
            detach_usage);
    return 2;
  }
  mnt = argv[optind];
  if (state_opt && !*state_opt) {
    fprintf(stderr, "fusefarm detach: --state: empty path\n");
    return 2;
  }
  t0 = now_s();

  if (state_opt) {
    snprintf(state, sizeof state, "%s", state_opt);
  } else if (resolve_mnt(mnt, 0, mnt_real) < 0 ||
             default_state_dir(mnt_real, state, sizeof state) < 0) {
    fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
    return 1;
  }
  if (stat(state, &st) < 0 && errno == ENOENT) {
    if (!quiet)
      fprintf(stderr,
              "fusefarm detach: %s: no state dir: nothing is attached for "
              "%s\n",
              state, mnt);
    if (unmount_dead(mnt, quiet) < 0) {
      fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
      return 1;
    }
    return 0;
  }
  lockfd = lock_state(state);
  if (lockfd < 0 || read_records(state, &recs) < 0) {
    fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
    goto out;
  }
  busy = calloc(recs.n + 1, 1);
  if (!busy) {
    fprintf(stderr, "fusefarm detach: out of memory\n");
    goto out;
  }

  progress_init(&prog, "detaching", recs.n, quiet);
  signals_catch(&sigs);
  for (size_t i = 0; i < recs.n && !interrupted; i++) {
    struct record *r = &recs.v[i];
    int s = ff_loop_detach(r->dev, r->backing);

    switch (s) {
    case FF_LOOP_OK:
      ndetached++;
      r->keep = 0;
      break;
    case FF_LOOP_UNBOUND:
      /* Not an error (nothing of ours is left there), but not silent
       * either: someone detached it, or the machine rebooted. */
      if (ngone++ < MAX_WARNINGS)
        fprintf(stderr,
                "fusefarm detach: warning: %s: %s was no longer attached "
                "(detached by someone else): nothing to do\n",
                r->name, r->dev);
      r->keep = 0;
      break;
    case FF_LOOP_OTHER:
      r->keep = 0;
      if (nother++ < MAX_WARNINGS)
        fprintf(stderr,
                "fusefarm detach: warning: %s: %s; someone else reused it: "
                "left alone\n",
                r->name, ff_errmsg());
      break;
    case FF_LOOP_BUSY:
      busy[i] = 1;
      nbusy++;
      break;
    default:
      if (nerr++ < MAX_WARNINGS)
        fprintf(stderr, "fusefarm detach: %s: %s\n", r->name, ff_errmsg());
      break;
    }
    done = i + 1;
    progress_update(&prog, done);
  }
  progress_end(&prog);
  t_pass = now_s() - t0;

  /* Loops still open elsewhere: the kernel detaches them at their last
   * close (ff-loop.h); give short-lived holders a moment. */
  for (double end = now_s() + BUSY_WAIT_MS / 1000.0;
       nbusy && !interrupted && now_s() < end;) {
    sleep_ms(50);
    for (size_t i = 0; i < recs.n; i++) {
      int s;

      if (!busy[i])
        continue;
      s = ff_loop_detach(recs.v[i].dev, recs.v[i].backing);
      if (s == FF_LOOP_BUSY)
        continue;
      busy[i] = 0;
      nbusy--;
      if (s == FF_LOOP_OK || s == FF_LOOP_UNBOUND) {
        ndetached++;
        recs.v[i].keep = 0;
      } else if (s == FF_LOOP_OTHER) {
        recs.v[i].keep = 0;
        if (nother++ < MAX_WARNINGS)
          fprintf(stderr,
                  "fusefarm detach: warning: %s: %s; someone else reused "
                  "it: left alone\n",
                  recs.v[i].name, ff_errmsg());
      } else {
        if (nerr++ < MAX_WARNINGS)
          fprintf(stderr, "fusefarm detach: %s: %s\n", recs.v[i].name,
                  ff_errmsg());
      }
    }
  }
  signals_restore(&sigs);

  if (nbusy || nerr || done < recs.n) {
    /* Keep exactly the loops that may still be ours. */
    if (rewrite_records(state, &recs) < 0 ||
        filter_devices_file(state, &recs) < 0) {
      fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
      goto out;
    }
  } else if (remove_state(state) < 0) {
    fprintf(stderr, "fusefarm detach: warning: %s\n", ff_errmsg());
  }

  if (!quiet) {
    fprintf(stderr, "detached %zu loop device%s in %.1f s", ndetached,
            ndetached == 1 ? "" : "s", t_pass);
    if (ngone)
      fprintf(stderr, "; %zu %s detached already", ngone,
              ngone == 1 ? "was" : "were");
    if (nother)
      fprintf(stderr, "; %zu reused by someone else were left alone", nother);
    fputc('\n', stderr);
  }
  if (interrupted && done < recs.n)
    fprintf(stderr,
            "fusefarm detach: interrupted by signal %d after %zu of %zu "
            "records; the rest stay recorded in %s/loops\n",
            (int)interrupted, done, recs.n, state);
  if (nbusy) {
    struct ff_sb sb = FF_SB_INIT;
    size_t shown = 0;

    for (size_t i = 0; i < recs.n; i++)
      if (busy[i] && shown++ < 20)
        ff_sb_addf(&sb, "%s%s (%s)", shown > 1 ? ", " : "", recs.v[i].dev,
                   recs.v[i].name);
    fprintf(stderr,
            "fusefarm detach: %zu loop device%s still open elsewhere after "
            "%.0f s: %s%s\n"
            "fusefarm detach: %s recorded in %s/loops; the kernel "
            "detaches %s when the last user (lvm, a mount) closes %s; "
            "run `fusefarm detach %s%s%s` again then\n",
            nbusy, nbusy == 1 ? " is" : "s are", BUSY_WAIT_MS / 1000.0,
            ff_sb_failed(&sb) ? "" : sb.buf, nbusy > 20 ? ", ..." : "",
            nbusy == 1 ? "it stays" : "they stay", state,
            nbusy == 1 ? "it" : "them", nbusy == 1 ? "it" : "them", mnt,
            state_opt ? " --state " : "", state_opt ? state_opt : "");
    ff_sb_release(&sb);
  }
  if (nerr)
    fprintf(stderr,
            "fusefarm detach: %zu loop device%s could not be detached; "
            "they stay recorded in %s/loops\n",
            nerr, nerr == 1 ? "" : "s", state);
  if (ngone > MAX_WARNINGS)
    fprintf(stderr,
            "fusefarm detach: warning: %zu more recorded loops were no "
            "longer attached\n",
            ngone - MAX_WARNINGS);
  rc = nbusy || nerr || done < recs.n ? 1 : 0;
  if (rc == 0 && unmount_dead(mnt, quiet) < 0) {
    fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
    rc = 1;
  }
out:
  if (lockfd >= 0)
    close(lockfd);
  free(busy);
  records_free(&recs);
  return rc;
}
