/* fusefarm: the io and fs workloads (ff-workload-int.h): fio against a
 * farm device, an LV or the guest's RAM disk, and mkfs, mount, fio and
 * umount of a filesystem on one; the farm's counters of the target.  No
 * threads: fio, mkfs and mount are child processes (ff-spawn.h). */
#include "ff-workload-int.h"

#include "ff-error.h"
#include "ff-fio.h"
#include "ff-file.h"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* A failed command with exit status ex: r's worst and errors, and its
 * message (printf format; a message that does not fit leaves "", as
 * ff_pathf does). */
__attribute__((format(printf, 3, 4))) static void
failed(struct ff_wrep *r, int ex, const char *fmt, ...)
{
  va_list ap;
  int n;

  r->worst = ex;
  r->errors = 1;
  va_start(ap, fmt);
  n = vsnprintf(r->msg, sizeof r->msg, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof r->msg)
    r->msg[0] = '\0';
}

int
ff_io_target_check(const struct ff_workload *w, int no_dm)
{
  if ((w->type != FF_W_IO && w->type != FF_W_FS) || !no_dm)
    return 0;
  if (!strcmp(w->io.target, FF_IO_RAM_TARGET))
    return ff_error("workload %s: target %s is the guest's RAM disk, which "
                    "only `fusefarm vm` has",
                    w->name, w->io.target);
  if (!strchr(w->io.target, '/'))
    return 0;
  return ff_error("workload %s: target %s is an LV: LV targets need "
                  "device-mapper, which this kernel lacks; run the scenario "
                  "with `fusefarm vm` (a guest with real device-mapper)",
                  w->name, w->io.target);
}

static json_t *
counters_json(const struct ff_wcounters *c)
{
  return json_pack("{s:I, s:I, s:I, s:I, s:I}", "reads", (json_int_t)c->reads,
                   "bytes_read", (json_int_t)c->bytes_read, "writes",
                   (json_int_t)c->writes, "bytes_written",
                   (json_int_t)c->bytes_written, "flushes",
                   (json_int_t)c->flushes);
}

static json_t *
fio_dir_json(const struct ff_fio_dir *d)
{
  json_t *o =
    json_pack("{s:f, s:f, s:I, s:I}", "bw", d->bw, "iops", d->iops, "ios",
              (json_int_t)d->ios, "bytes", (json_int_t)d->bytes);

  json_object_set_new(o, "clat_p50_ns",
                      d->clat_p50_ns < 0 ? json_null()
                                         : json_integer(d->clat_p50_ns));
  json_object_set_new(o, "clat_p99_ns",
                      d->clat_p99_ns < 0 ? json_null()
                                         : json_integer(d->clat_p99_ns));
  return o;
}

/* The kernel's node of LV target "VG/LV", /dev/dm-N, into path: the dm
 * device whose name (sysfs dm/name) is VG-LV with each '-' inside a name
 * doubled.  /dev/VG/LV and /dev/mapper are lvm's own nodes, which go
 * stale when nothing keeps them (no udev in the guest): a VG activated
 * again may get other minors.  0, or -1 when no such dm device. */
static int
io_lv_dm_node(const char *target, char *path, size_t len)
{
  char want[2 * NAME_MAX + 4], name[2 * NAME_MAX + 4], f[PATH_MAX];
  size_t n = 0;
  DIR *d = opendir("/sys/block");
  struct dirent *de;
  int rc = -1;

  for (const char *p = target; *p && n + 3 < sizeof want; p++) {
    want[n++] = *p == '/' ? '-' : *p;
    if (*p == '-')
      want[n++] = '-';
  }
  want[n] = '\0';
  while (d && rc < 0 && (de = readdir(d))) {
    FILE *fp;

    if (strncmp(de->d_name, "dm-", 3))
      continue;
    ff_pathf(f, sizeof f, "/sys/block/%s/dm/name", de->d_name);
    fp = fopen(f, "re");
    if (!fp)
      continue;
    if (fgets(name, sizeof name, fp) &&
        (name[strcspn(name, "\n")] = '\0', !strcmp(name, want))) {
      ff_pathf(path, len, "/dev/%s", de->d_name);
      rc = 0;
    }
    fclose(fp);
  }
  if (d)
    closedir(d);
  return rc;
}

/* The block device of target, into path: a farm device's node, or an
 * LV's dm node (io_lv_dm_node; /dev/VG/LV where sysfs has none).  NULL
 * with ff_error when there is none. */
static const char *
io_target_path(const struct ff_wenv *e, const char *target, char *path,
               size_t len)
{
  struct stat st;

  if (strchr(target, '/')) {
    if (io_lv_dm_node(target, path, len) < 0)
      ff_pathf(path, len, "/dev/%s", target);
    if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode)) {
      ff_error("target %s: %s is not a block device (is the LV active?)",
               target, path);
      return NULL;
    }
    return path;
  }
  for (uint32_t i = 0; i < e->ndevs; i++) {
    if (!e->names[i] || strcmp(e->names[i], target))
      continue;
    if (!e->paths[i]) {
      ff_error("target %s: the device is not present", target);
      return NULL;
    }
    ff_pathf(path, len, "%s", e->paths[i]);
    return path;
  }
  if (!strcmp(target, FF_IO_RAM_TARGET)) {
    if (e->ram_disk) {
      ff_pathf(path, len, "%s", e->ram_disk);
      return path;
    }
    ff_error("target %s: no RAM disk here (only the guest of `fusefarm vm` "
             "has one)",
             target);
    return NULL;
  }
  ff_error("target %s: no such device in the farm", target);
  return NULL;
}

/* Whether target is one of the farm's devices (a raw target the farm
 * counts), not an LV or the RAM disk. */
static int
io_farm_device(const struct ff_wenv *e, const char *target)
{
  for (uint32_t i = 0; i < e->ndevs; i++)
    if (e->names[i] && !strcmp(e->names[i], target))
      return 1;
  return 0;
}

/* What the farm served on w's target into io's "farm"; an LV's I/O
 * lands on its PVs: the whole farm's, and each PV of its VG ("devices":
 * which took the writes, a mirror's log among them). */
static void
io_counters(const struct ff_wenv *e, const struct ff_workload *w, json_t *io)
{
  struct ff_wcounters c;

  if (!e->counters)
    return;
  if (!strchr(w->io.target, '/') && !io_farm_device(e, w->io.target))
    return; /* the RAM disk: the farm served nothing */
  if (!strchr(w->io.target, '/')) {
    if (e->counters(e->ctx, w->io.target, &c) == 0)
      json_object_set_new(io, "farm", counters_json(&c));
  } else {
    size_t vl = strcspn(w->io.target, "/");
    json_t *devs = json_object();

    if (e->counters(e->ctx, NULL, &c) == 0)
      json_object_set_new(io, "farm", counters_json(&c));
    for (uint32_t i = 0; i < e->ndevs; i++)
      if (e->vgs[i] && strlen(e->vgs[i]) == vl &&
          !strncmp(e->vgs[i], w->io.target, vl) &&
          e->counters(e->ctx, e->names[i], &c) == 0)
        json_object_set_new(devs, e->names[i], counters_json(&c));
    json_object_set_new(io, "devices", devs);
  }
}

/* What the kernel says of block device dev's medium: 1 rotational, 0
 * not, -1 unknown (sysfs's queue/rotational, which the guest's SCSI
 * disks take from the farm's profile: docs/guest.md). */
static int
io_rotational(const char *dev)
{
  struct stat st;
  char f[96];
  FILE *fp;
  int v = -1;

  if (stat(dev, &st) < 0 || !S_ISBLK(st.st_mode))
    return -1;
  snprintf(f, sizeof f, "/sys/dev/block/%u:%u/queue/rotational",
           major(st.st_rdev), minor(st.st_rdev));
  fp = fopen(f, "re");
  if (!fp)
    return -1;
  if (fscanf(fp, "%d", &v) != 1 || (v != 0 && v != 1))
    v = -1;
  fclose(fp);
  return v;
}

/* One repetition of an io workload: fio, timed, its document read back
 * into run's "io".  fio runs on at (an fs workload's mount point) or,
 * at NULL, on the target's block device.  A failure is a failed command
 * in r; -1 with ff_error only when the run cannot go on. */
static int
io_fio(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
       const char *at, struct ff_wrep *r)
{
  const char *fio = e->fio ? e->fio : getenv("FF_FIO");
  char dev[PATH_MAX], job[PATH_MAX + 64];
  const char *argv[] = {NULL, "--output-format=json", job, NULL};
  struct ff_fio_result fr;
  struct ff_w_files f;
  struct ff_spawn o = {.argv = argv, .out = f.out, .err = f.err};
  json_t *io;
  char *text;
  int ex, fd;

  if (!fio || !*fio)
    fio = "fio";
  argv[0] = fio;
  if (at)
    ff_pathf(dev, sizeof dev, "%s", at);
  else if (!io_target_path(e, w->io.target, dev, sizeof dev)) {
    failed(r, 1, "%s", ff_errmsg());
    return 0;
  }
  /* The job reads and writes [0, size): it must fit. */
  fd = at ? -1 : open(dev, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    uint64_t devsize = 0;

    if (ioctl(fd, BLKGETSIZE64, &devsize) == 0 && w->io.size > devsize) {
      failed(r, 1, "target %s: size %llu bytes is more than the device's %llu",
             w->io.target, (unsigned long long)w->io.size,
             (unsigned long long)devsize);
      close(fd);
      return 0;
    }
    close(fd);
  }
  ff_pathf(job, sizeof job, "%s/%s.fio", e->outdir, tag);
  ff_w_files(e, tag, &f);
  if (ff_fio_write_job(&w->io, dev, job) < 0)
    return -1;
  ex = ff_w_run_timed(&o, &r->wall);
  if (ex == FF_W_NOT_STARTED) {
    failed(r, 127, "%s: %s (install fio, or set $FF_FIO)", fio, ff_errmsg());
    return 0;
  }
  if (ex < 0)
    return -1;
  if (ex) {
    r->worst = ex;
    r->errors = 1;
    ff_w_error_line_of(f.err, ex, r->msg, sizeof r->msg);
    if (ex == 127 && !strcmp(r->msg, "(no message)"))
      ff_pathf(r->msg, sizeof r->msg,
               "%s: not found (install fio, or set $FF_FIO)", fio);
    return 0;
  }
  text = ff_slurp(f.out, 16u << 20);
  if (ff_fio_parse(text ? text : "", &fr) < 0) {
    free(text);
    failed(r, 1, "%s", ff_errmsg());
    return 0;
  }
  free(text);
  io = json_pack("{s:s, s:s, s:o, s:o, s:I}", "target", w->io.target, "path",
                 dev, "read", fio_dir_json(&fr.read), "write",
                 fio_dir_json(&fr.write), "error", (json_int_t)fr.error);
  if (fr.version[0])
    json_object_set_new(io, "fio_version", json_string(fr.version));
  if (!at) {
    int rot = io_rotational(dev);

    if (rot >= 0)
      json_object_set_new(io, "rotational", json_boolean(rot));
  }
  if (fr.error)
    failed(r, 1, "fio: job error %lld (%s)", fr.error,
           strerror((int)fr.error));
  io_counters(e, w, io);
  json_object_set_new(r->run, "io", io);
  return 0;
}

/* `vgchange -ay VG` (on) or `-an` of an LV target's VG, untimed: 0, or
 * its exit status (-1: it could not run) with ff_error saying why. */
static int
io_vg_change(const struct ff_wenv *e, const char *target, int on,
             const char *tag)
{
  char vg[NAME_MAX + 1], t[96], err[PATH_MAX + 96];
  const char *argv[] = {NULL, "vgchange", on ? "-ay" : "-an", vg, NULL};
  double wall;
  int ex;

  snprintf(vg, sizeof vg, "%.*s", (int)strcspn(target, "/"), target);
  ff_pathf(t, sizeof t, "%s-vg%s", tag, on ? "on" : "off");
  ex = ff_w_time_lvm(e, argv, &wall, t);
  if (ex > 0) {
    char line[256];

    ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, t);
    ff_w_error_line_of(err, ex, line, sizeof line);
    ff_error("target %s: vgchange %s %s: %s", target, argv[2], vg, line);
  } else if (ex < 0) {
    ff_error_prefix("target %s: vgchange %s %s: ", target, argv[2], vg);
  }
  return ex;
}

/* fio on the target's block device (io_fio with no mount point). */
static int
io_block(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
         struct ff_wrep *r)
{
  return io_fio(e, w, tag, NULL, r);
}

typedef int repetition_fn(const struct ff_wenv *e, const struct ff_workload *w,
                          const char *tag, struct ff_wrep *r);

/* An io or fs repetition (body): an LV target's VG is activated first
 * and deactivated after (untimed; real device-mapper only, the host
 * refuses LV targets before anything runs).  The body's ff_error, when
 * it returns -1, outlives the deactivation's. */
static int
with_vg(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
        repetition_fn *body, struct ff_wrep *r)
{
  int lv = strchr(w->io.target, '/') && !e->no_dm, ex, rc;

  if (lv && (ex = io_vg_change(e, w->io.target, 1, tag))) {
    failed(r, ex < 0 ? 1 : ex, "%s", ff_errmsg());
    return 0;
  }
  rc = body(e, w, tag, r);
  if (lv) {
    char fatal[1024];

    ff_pathf(fatal, sizeof fatal, "%s", rc < 0 ? ff_errmsg() : "");
    ex = io_vg_change(e, w->io.target, 0, tag);
    if (ex && !r->errors)
      failed(r, ex < 0 ? 1 : ex, "%s", ff_errmsg());
    if (ex && rc < 0)
      ff_error("%s", fatal);
  }
  return rc;
}

/* Run argv (stdout and stderr into outdir/TAG.SUFFIX.out and .err),
 * timed into *wall: 0, or its exit status (127: it could not start) with
 * ff_error saying why ("mkfs.xfs: ..."); -1 with ff_error when it cannot
 * be waited for. */
static int
fs_command(const struct ff_wenv *e, const char *const *argv, const char *tag,
           const char *suffix, double *wall)
{
  char stag[PATH_MAX], line[400];
  struct ff_w_files f;
  struct ff_spawn o = {.argv = argv, .out = f.out, .err = f.err};
  int ex;

  ff_pathf(stag, sizeof stag, "%s.%s", tag, suffix);
  ff_w_files(e, stag, &f);
  ex = ff_w_run_timed(&o, wall);
  if (ex == FF_W_NOT_STARTED) {
    ff_error_prefix("%s: ", argv[0]);
    return 127;
  }
  if (ex > 0) {
    ff_first_line(f.err, line, sizeof line);
    ff_error("%s: exit %d: %s", argv[0], ex, line);
  }
  return ex;
}

/* The options the kernel shows for the mount on mnt (/proc/self/mounts'
 * fourth field: "rw,relatime,attr2,inode64,logbufs=8,..."), into buf;
 * "" when it is not found.  getmntent(3) undoes the kernel's escapes. */
static void
mounted_options(const char *mnt, char *buf, size_t len)
{
  FILE *f = setmntent("/proc/self/mounts", "re");
  struct mntent me, *e;
  char line[4096];

  buf[0] = '\0';
  if (!f)
    return;
  /* the last one wins: a mount over an earlier one on the same point */
  while ((e = getmntent_r(f, &me, line, sizeof line)))
    if (!strcmp(e->mnt_dir, mnt))
      ff_pathf(buf, len, "%s", e->mnt_opts);
  endmntent(f);
}

/* The farm's counters of w's target since the cold start (an LV: the
 * whole farm's): 0, or -1 when there are none (no counters here, the
 * RAM disk). */
static int
fs_counters(const struct ff_wenv *e, const struct ff_workload *w,
            struct ff_wcounters *c)
{
  int lv = strchr(w->io.target, '/') != NULL;

  if (!e->counters || (!lv && !io_farm_device(e, w->io.target)))
    return -1;
  return e->counters(e->ctx, lv ? NULL : w->io.target, c);
}

/* {"reads", "bytes_read", "writes", "bytes_written"} of b - a. */
static json_t *
counters_delta(const struct ff_wcounters *a, const struct ff_wcounters *b)
{
  return json_pack("{s:I, s:I, s:I, s:I}", "reads",
                   (json_int_t)(b->reads - a->reads), "bytes_read",
                   (json_int_t)(b->bytes_read - a->bytes_read), "writes",
                   (json_int_t)(b->writes - a->writes), "bytes_written",
                   (json_int_t)(b->bytes_written - a->bytes_written));
}

/* Write the fs workload's sysfs tunables ("KEY=VALUE,...", checked by
 * the parser) into /sys/fs/FSTYPE/DEV/KEY for the filesystem on dev, and
 * read each back into *out ({"KEY": "what the file says"}).  0, or 1
 * with r failed (the file is not there, the kernel refused the value). */
static int
fs_set_tunables(const struct ff_io_job *io, const char *dev, json_t **out,
                struct ff_wrep *r)
{
  char list[512], link[PATH_MAX], sys[PATH_MAX + 64], dir[PATH_MAX + 128];
  const char *name;
  struct stat st;
  ssize_t n;

  *out = json_object();
  if (!io->fs_tunables || !io->fs_tunables[0])
    return 0;
  /* the filesystem's sysfs directory is named after its block device,
   * as the kernel names it (loop3, sdb, dm-0) */
  if (stat(dev, &st) < 0 || !S_ISBLK(st.st_mode)) {
    failed(r, 1, "fs_tunables: %s is not a block device", dev);
    return 1;
  }
  ff_pathf(sys, sizeof sys, "/sys/dev/block/%u:%u", major(st.st_rdev),
           minor(st.st_rdev));
  n = readlink(sys, link, sizeof link - 1);
  if (n <= 0) {
    failed(r, 1, "fs_tunables: %s: %s", sys, strerror(errno));
    return 1;
  }
  link[n] = '\0';
  name = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
  ff_pathf(dir, sizeof dir, "/sys/fs/%s/%s", io->fstype, name);
  ff_pathf(list, sizeof list, "%s", io->fs_tunables);
  for (char *sv, *t = strtok_r(list, ",", &sv); t;
       t = strtok_r(NULL, ",", &sv)) {
    char *eq = strchr(t, '='), path[PATH_MAX + 256], back[128];
    FILE *f;

    *eq = '\0';
    ff_pathf(path, sizeof path, "%s/%s", dir, t);
    /* sysfs says EACCES, not ENOENT, for a file it does not have */
    if (access(path, F_OK) < 0) {
      failed(r, 1, "fs_tunables: %s=%s: %s: no such tunable of %s", t, eq + 1,
             path, io->fstype);
      return 1;
    }
    f = fopen(path, "we");
    if (!f || fprintf(f, "%s\n", eq + 1) < 0 || fclose(f) != 0) {
      int err = errno;

      failed(r, 1, "fs_tunables: %s=%s: %s: %s", t, eq + 1, path,
             strerror(err));
      return 1;
    }
    ff_first_line(path, back, sizeof back);
    json_object_set_new(*out, t, json_string(back));
  }
  return 0;
}

/* The directories in mnt/job.J, counted by reading them back. */
static long long
count_dirs(const char *mnt, unsigned jobs)
{
  long long n = 0;

  for (unsigned j = 0; j < jobs; j++) {
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;

    ff_pathf(path, sizeof path, "%s/job.%u", mnt, j);
    if (!(d = opendir(path)))
      continue;
    while ((de = readdir(d)))
      if (de->d_type == DT_DIR && strcmp(de->d_name, ".") &&
          strcmp(de->d_name, ".."))
        n++;
    closedir(d);
  }
  return n;
}

/* The mkdir storm (mkdirs > 0, mdtest -D -C): numjobs processes, started
 * together, each makes mnt/job.J and then mkdirs directories in it.  The
 * wall is from the start to the last one's end.  Into *out: jobs,
 * per_job, made (the directories there afterwards, read back: untimed),
 * per_second (jobs x mkdirs / wall when every job succeeded).  0, or -1
 * with ff_error when a process cannot be made or waited for. */
static int
fs_mkdirs(const struct ff_io_job *io, const char *mnt, json_t **out,
          struct ff_wrep *r)
{
  unsigned jobs = io->numjobs ? io->numjobs : 1, started = 0, bad = 0;
  pid_t *pids = calloc(jobs, sizeof *pids);
  int go[2], first_err = 0;
  double t0;

  *out = NULL;
  if (!pids || pipe2(go, O_CLOEXEC) < 0) {
    free(pids);
    return ff_error("mkdir storm: %s", pids ? strerror(errno) : "no memory");
  }
  for (; started < jobs; started++) {
    char path[PATH_MAX];
    size_t base;

    ff_pathf(path, sizeof path, "%s/job.%u", mnt, started);
    base = strlen(path);
    if (!base || base + 16 >= sizeof path)
      break;
    pids[started] = fork();
    if (pids[started] < 0)
      break;
    if (pids[started] == 0) {
      char c;

      /* the child: wait for the start (the pipe's end), then only
       * system calls; the exit status is the first errno */
      close(go[1]);
      if (read(go[0], &c, 1) < 0 || mkdir(path, 0755) < 0)
        _exit(errno & 0xff ? errno & 0xff : 1);
      path[base] = '/';
      for (unsigned i = 0; i < io->mkdirs; i++) {
        char digits[12];
        size_t nd = 0, k = base + 1;

        for (unsigned v = i; nd == 0 || v; v /= 10)
          digits[nd++] = (char)('0' + v % 10);
        path[k++] = 'd';
        while (nd)
          path[k++] = digits[--nd];
        path[k] = '\0';
        if (mkdir(path, 0755) < 0)
          _exit(errno & 0xff ? errno & 0xff : 1);
      }
      _exit(0);
    }
  }
  close(go[0]);
  t0 = ff_w_now();
  close(go[1]); /* start */
  for (unsigned j = 0; j < started; j++) {
    int status;

    while (waitpid(pids[j], &status, 0) < 0)
      if (errno != EINTR) {
        free(pids);
        return ff_error("mkdir storm: waitpid: %s", strerror(errno));
      }
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
      bad++;
      if (!first_err)
        first_err = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
    }
  }
  r->wall = ff_w_now() - t0;
  free(pids);
  if (started < jobs)
    return ff_error("mkdir storm: only %u of %u processes started: %s",
                    started, jobs, strerror(errno));
  if (bad)
    failed(r, 1, "mkdir storm: %u of %u jobs failed: %s", bad, jobs,
           strerror(first_err));
  *out = json_pack(
    "{s:i, s:i, s:I, s:f}", "jobs", (int)jobs, "per_job", (int)io->mkdirs,
    "made", (json_int_t)count_dirs(mnt, jobs), "per_second",
    bad || r->wall <= 0 ? 0.0 : (double)jobs * io->mkdirs / r->wall);
  return 0;
}

/* One repetition of an fs workload: mkfs and mount (each timed, not in
 * the wall), fio in the mount point (io_fio: the wall), umount (timed,
 * not in the wall: it writes what the page cache still held).  The
 * filesystem's steps and their times go into run's "io" as "fs".  An LV
 * target's VG is activated before and deactivated after, as for io. */
static int
fs_steps(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
         struct ff_wrep *r)
{
  const struct ff_io_job *io = &w->io;
  int xfs = !strcmp(io->fstype, "xfs");
  const char *argv[48];
  char dev[PATH_MAX], mnt[PATH_MAX + 64], opts[512], cmd[64], mounted[1024];
  double t_mkfs = 0, t_mount = 0, t_umount = 0, t0;
  struct ff_wcounters c_mkfs, c_mount, c_load;
  int have_mkfs, have_mount = -1, have_load = -1;
  size_t n = 0;
  int rc = 0, ex;
  json_t *fs, *tunables = NULL, *storm = NULL;

  if (!io_target_path(e, io->target, dev, sizeof dev)) {
    failed(r, 1, "%s", ff_errmsg());
    return 0;
  }
  /* mkfs: forced (the target may hold a PV or an earlier filesystem),
   * no discard (the farm does not keep them), and every table written
   * now: ext4's lazy init would write them in the background during the
   * measurement.  Then the workload's own options, split at blanks. */
  ff_pathf(cmd, sizeof cmd, "mkfs.%s", io->fstype);
  argv[n++] = cmd;
  argv[n++] = xfs ? "-f" : "-F";
  argv[n++] = "-q";
  if (xfs) {
    argv[n++] = "-K";
  } else {
    argv[n++] = "-E";
    argv[n++] = "lazy_itable_init=0,lazy_journal_init=0,nodiscard";
  }
  ff_pathf(opts, sizeof opts, "%s", io->mkfs_options);
  for (char *sv, *t = strtok_r(opts, " \t", &sv); t;
       t = strtok_r(NULL, " \t", &sv)) {
    if (n + 2 >= sizeof argv / sizeof *argv) {
      failed(r, 1, "mkfs_options: more than %zu arguments",
             sizeof argv / sizeof *argv - 8);
      return 0;
    }
    argv[n++] = t;
  }
  argv[n++] = dev;
  argv[n] = NULL;
  ex = fs_command(e, argv, tag, "mkfs", &t_mkfs);
  if (ex < 0) {
    r->worst = r->errors = 1;
    return -1;
  }
  if (ex) {
    failed(r, ex, "%s", ff_errmsg());
    return 0;
  }
  have_mkfs = fs_counters(e, w, &c_mkfs);
  ff_pathf(mnt, sizeof mnt, "%s/%s.mnt", e->outdir, tag);
  if (ff_mkdir(mnt, 0755) < 0)
    return -1;
  /* mount(8), which turns the generic options (noatime, sync, ...) into
   * mount flags and passes the rest to the filesystem */
  n = 0;
  argv[n++] = "mount";
  argv[n++] = "-t";
  argv[n++] = io->fstype;
  if (io->mount_options[0]) {
    argv[n++] = "-o";
    argv[n++] = io->mount_options;
  }
  argv[n++] = dev;
  argv[n++] = mnt;
  argv[n] = NULL;
  ex = fs_command(e, argv, tag, "mount", &t_mount);
  if (ex) {
    char line[400], err[PATH_MAX + 64];

    ff_pathf(err, sizeof err, "%s/%s.mount.err", e->outdir, tag);
    ff_first_line(err, line, sizeof line);
    failed(r, ex < 0 ? 1 : ex, "mount -t %s%s%s %s: exit %d: %s", io->fstype,
           io->mount_options[0] ? " -o " : "", io->mount_options, dev, ex,
           line);
    rmdir(mnt);
    return ex < 0 ? -1 : 0;
  }
  /* what the kernel made of the options (mount(8) may drop one it does
   * not know, and the filesystem fills in its defaults) */
  mounted_options(mnt, mounted, sizeof mounted);
  have_mount = fs_counters(e, w, &c_mount);
  if (fs_set_tunables(io, dev, &tunables, r) == 0) {
    rc =
      io->mkdirs ? fs_mkdirs(io, mnt, &storm, r) : io_fio(e, w, tag, mnt, r);
    have_load = fs_counters(e, w, &c_load);
  }
  t0 = ff_w_now();
  if (umount(mnt) < 0) {
    int err = errno;

    /* Never leave it mounted under the output directory, which the next
     * repetition empties. */
    umount2(mnt, MNT_DETACH);
    if (!r->errors)
      failed(r, 1, "umount %s: %s", mnt, strerror(err));
  }
  t_umount = ff_w_now() - t0;
  rmdir(mnt);
  fs = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f}", "fstype", io->fstype,
                 "mkfs_options", io->mkfs_options, "mount_options",
                 io->mount_options, "mounted", mounted, "mkfs_wall", t_mkfs,
                 "mount_wall", t_mount, "umount_wall", t_umount);
  if (fs && io->fs_tunables && io->fs_tunables[0])
    json_object_set_new(fs, "tunables", tunables ? tunables : json_object());
  else
    json_decref(tunables);
  /* what the farm served while mounting and during the load (mkdir
   * storm or fio), apart from mkfs's and umount's I/O */
  if (fs && have_mkfs == 0 && have_mount == 0)
    json_object_set_new(fs, "mount_farm", counters_delta(&c_mkfs, &c_mount));
  if (fs && have_mount == 0 && have_load == 0)
    json_object_set_new(fs, "load_farm", counters_delta(&c_mount, &c_load));
  if (fs && storm)
    json_object_set_new(fs, "mkdir", storm);
  if (json_object_get(r->run, "io")) {
    json_object_set_new(json_object_get(r->run, "io"), "fs", fs);
    /* the target's counters with what umount wrote */
    io_counters(e, w, json_object_get(r->run, "io"));
  } else {
    json_object_set_new(r->run, "fs", fs);
  }
  return rc;
}

int
ff_w_fs_run(const struct ff_wenv *e, const struct ff_workload *w,
            const char *tag, struct ff_wrep *r)
{
  return with_vg(e, w, tag, fs_steps, r);
}

int
ff_w_io_run(const struct ff_wenv *e, const struct ff_workload *w,
            const char *tag, struct ff_wrep *r)
{
  return with_vg(e, w, tag, io_block, r);
}
