/* ff-guestrun: run a scenario's workloads inside the guest tier's VM
 * (docs/guest.md).
 *
 *   ff-guestrun PLAN MANIFEST OUT
 *
 * PLAN is the JSON `fusefarm vm` writes (run-initramfs.sh puts it in the
 * initramfs as /etc/ff/plan/plan.json):
 *
 *   { "lvm": "/usr/sbin/lvm",
 *     "workloads": [ { "name", "type", "repeat", "concurrency",
 *                      "spread_ns", "count", "lv",
 *                      "io": { fio's job; fs: "fstype", "mkfs_options",
 *                              "mount_options", "nrfiles",
 *                              "fs_tunables", "mkdirs" } }, ... ],
 *     "configs": [ { "id": 1, "lvm_conf": "lvm-1.conf",
 *                    "target", "fstype", "mount_options",
 *                    "fs_tunables" }, ... ] }
 *
 * A config's target, fstype, mount_options and fs_tunables (each there
 * when the matrix has its fusefarm/ axis) replace the io and fs workloads'
 * own, as in `fusefarm run`.
 *
 * MANIFEST is the farm's `fusefarm manifest` (the disks attached): the
 * devices in farm order, their VGs, the first LV.  Each device is found
 * among the guest's SCSI disks by its serial (qemu's serial= is the
 * device name; the kernel shows it in /sys/block/sdX/device/vpd_pg80);
 * with FF_DEVMAP (the nbd transport: init.sh attached every device with
 * nbd-client) from that file's lines "NAME /dev/nbdI", each node checked
 * connected (/sys/block/nbdI/pid) and not empty.
 *
 * For every configuration: its lvm.conf is copied to /etc/lvm/lvm.conf
 * (a relative path is relative to PLAN's directory), then every workload
 * runs through ff_workload_run() (ff-workload.c, the code `fusefarm run`
 * uses on the host), with real activation.  A repetition starts cold:
 * every VG deactivated (`vgchange -an`, untimed), /run/lvm emptied.
 *
 * OUT (a file, or /dev/ttyS1, the report channel) gets one line
 * "FF-RESULT <json>" with { "kernel", "lvm", "lvm_version", "farm": {
 * "devices", "vgs", "lvs" }, "configs": [ { "id", "workloads": [...] } ] },
 * the members `fusefarm vm` puts into the run document (docs/run-json.md).
 * Progress goes to stdout (the console) as "FF-PROGRESS ..." lines.  Exit 0
 * when every workload ran (lvm's own exit statuses are in the result), 1
 * otherwise.
 */
#include "ff-error.h"
#include "ff-runmanifest.h"
#include "ff-scenario.h"
#include "ff-workload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

struct guest {
  const char *lvm;
  const char *outdir;
  const char *ram_disk; /* target "ram", or NULL */
  uint32_t ndevs;
  char **names, **paths, **vgs;
  char *first_lv;
  uint32_t found, nvgs, nlvs; /* devices present; the manifest's VGs, LVs */
  int snap_fd;                /* FF_SNAP's tty, -1: no farm counters */
  json_t *base;               /* the snapshot of the last cold start */
};

/* ---- the farm's counters, from the host ------------------------------------
 *
 * With FF_SNAP (run-initramfs.sh --fio: /dev/ttyS2), each "SNAP" line
 * written there gets one line back from the host's ff-snap.py: the
 * counters of the nbdkit serving the disks, taken after the request
 * arrived ({"devices": {NAME: [reads, bytes_read, writes, bytes_written,
 * flushes]}, "totals": [...]}).  The cold start keeps one; the counters
 * of a repetition are the difference to it. */

static int
snap_open(struct guest *g, const char *tty)
{
  struct termios t;

  g->snap_fd = open(tty, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (g->snap_fd < 0)
    return ff_error("%s: %m", tty);
  if (tcgetattr(g->snap_fd, &t) == 0) {
    cfmakeraw(&t);
    tcsetattr(g->snap_fd, TCSANOW, &t);
  }
  tcflush(g->snap_fd, TCIOFLUSH);
  return 0;
}

/* One SNAP request and its answer, or NULL with ff_error. */
static json_t *
snap_ask(struct guest *g)
{
  static char line[1u << 20]; /* ~60 bytes per device with I/O */
  size_t n = 0;
  json_t *j;

  if (write(g->snap_fd, "SNAP\n", 5) != 5)
    return ff_error("farm counters: write: %m"), NULL;
  while (n < sizeof line - 1) {
    struct pollfd p = {.fd = g->snap_fd, .events = POLLIN};
    ssize_t r;

    if (poll(&p, 1, 60000) <= 0)
      return ff_error("farm counters: no answer from the host in 60 s"), NULL;
    r = read(g->snap_fd, line + n, sizeof line - 1 - n);
    if (r <= 0)
      return ff_error("farm counters: read: %m"), NULL;
    n += (size_t)r;
    if (memchr(line, '\n', n))
      break;
  }
  line[n] = '\0';
  line[strcspn(line, "\r\n")] = '\0';
  if (!strncmp(line, "ERR ", 4))
    return ff_error("farm counters: %s", line + 4), NULL;
  j = json_loads(line, 0, NULL);
  if (!json_is_object(j)) {
    json_decref(j);
    return ff_error("farm counters: not a snapshot: %.60s", line), NULL;
  }
  return j;
}

/* A snapshot from the host, or NULL with ff_error.  After a failure the
 * channel is closed (no counters from then on: a dead ff-snap.py must not
 * cost every later repetition a timeout). */
static json_t *
snap_take(struct guest *g)
{
  json_t *j = snap_ask(g);

  if (!j) {
    printf("FF-PROGRESS ff-guestrun: %s; no farm counters from here on\n",
           ff_errmsg());
    close(g->snap_fd);
    g->snap_fd = -1;
  }
  return j;
}

/* Counters of dev (NULL: the totals) in snapshot j, into c (zero when
 * the device had no I/O). */
static void
snap_counters(json_t *j, const char *dev, long long *c)
{
  json_t *a = dev ? json_object_get(json_object_get(j, "devices"), dev)
                  : json_object_get(j, "totals");

  for (size_t i = 0; i < 5; i++)
    c[i] = json_integer_value(json_array_get(a, i));
}

static int
g_counters(void *ctx, const char *dev, struct ff_wcounters *out)
{
  struct guest *g = ctx;
  long long now[5], was[5];
  json_t *j;

  if (g->snap_fd < 0 || !g->base)
    return -1;
  j = snap_take(g);
  if (!j)
    return -1;
  snap_counters(j, dev, now);
  snap_counters(g->base, dev, was);
  json_decref(j);
  out->reads = now[0] - was[0];
  out->bytes_read = now[1] - was[1];
  out->writes = now[2] - was[2];
  out->bytes_written = now[3] - was[3];
  out->flushes = now[4] - was[4];
  return 0;
}

static const char *const lvm_env[] = {"LVM_SYSTEM_DIR",
                                      "/etc/lvm",
                                      "LVM_SUPPRESS_FD_WARNINGS",
                                      "1",
                                      "TZ",
                                      "UTC",
                                      NULL};

/* Cold start: nothing active, nothing online, no hints. */
static void
g_cold(void *ctx)
{
  struct guest *g = ctx;
  const char *argv[] = {g->lvm, "vgchange", "-an", NULL};
  pid_t pid = ff_spawn(argv, NULL, NULL, lvm_env);

  if (pid > 0)
    ff_wait_status(pid);
  ff_empty_dir("/run/lvm");
  /* the counters start here */
  if (g->snap_fd >= 0) {
    json_decref(g->base);
    g->base = snap_take(g);
  }
}

static void
g_say(void *ctx, const char *line)
{
  (void)ctx;
  printf("FF-PROGRESS %s\n", line + strspn(line, " "));
  fflush(stdout);
}

/* The serial qemu gave the disk: VPD page 0x80 is a 4-byte header, then
 * the serial (padded with spaces). */
static int
disk_serial(const char *dev, char *buf, size_t len)
{
  char path[PATH_MAX];
  unsigned char page[256];
  ssize_t n;
  size_t sl;
  int fd;

  snprintf(path, sizeof path, "/sys/block/%s/device/vpd_pg80", dev);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  n = read(fd, page, sizeof page);
  close(fd);
  if (n < 4)
    return -1;
  sl = ((size_t)page[2] << 8) | page[3];
  if (sl > (size_t)n - 4)
    sl = (size_t)n - 4;
  while (sl && (page[4 + sl - 1] == ' ' || page[4 + sl - 1] == '\0'))
    sl--;
  if (sl + 1 > len)
    return -1;
  memcpy(buf, page + 4, sl);
  buf[sl] = '\0';
  return 0;
}

/* The nbd transport: the map init.sh wrote ("NAME /dev/nbdI" per device
 * nbd-client attached).  A node counts when the kernel says it is
 * connected (its pid file) and has a size. */
static uint32_t
load_devmap(struct guest *g, const char *map)
{
  FILE *f = fopen(map, "r");
  char name[256], path[256];
  uint32_t found = 0;

  if (!f) {
    printf("FF-PROGRESS ff-guestrun: %s: %s\n", map, strerror(errno));
    return 0;
  }
  while (fscanf(f, "%255s %255s", name, path) == 2) {
    const char *dev = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char sys[PATH_MAX], *size;
    int connected;

    snprintf(sys, sizeof sys, "/sys/block/%s/pid", dev);
    connected = access(sys, F_OK) == 0;
    snprintf(sys, sizeof sys, "/sys/block/%s/size", dev);
    size = ff_slurp(sys, 64);
    if (!connected || !size || atoll(size) <= 0) {
      printf("FF-PROGRESS ff-guestrun: %s (%s) is not connected\n", path,
             name);
      free(size);
      continue;
    }
    free(size);
    for (uint32_t k = 0; k < g->ndevs; k++)
      if (g->names[k] && !g->paths[k] && !strcmp(g->names[k], name)) {
        if ((g->paths[k] = strdup(path)))
          found++;
        break;
      }
  }
  fclose(f);
  return found;
}

static int
load_devices(struct guest *g, const char *manifest)
{
  const char *map = getenv("FF_DEVMAP");
  struct ff_runmanifest m;
  DIR *dir;
  struct dirent *de;
  uint32_t found = 0;

  if (ff_runmanifest_load(&m, manifest) < 0)
    return -1;
  g->paths = calloc(m.ndevs + 1, sizeof *g->paths);
  if (!g->paths) {
    ff_runmanifest_release(&m);
    return ff_error("out of memory");
  }
  /* The guest takes the manifest's arrays. */
  g->ndevs = m.ndevs;
  g->names = m.names;
  g->vgs = m.vgs;
  g->first_lv = m.first_lv;
  g->nvgs = m.nvgs;
  g->nlvs = m.nlvs;

  if (map && *map) {
    g->found = found = load_devmap(g, map);
    printf("FF-PROGRESS ff-guestrun: %u of %u farm devices attached over "
           "nbd (%s)\n",
           found, g->ndevs, map);
    if (!found)
      return ff_error("%s: no nbd device of a farm device is connected", map);
    return 0;
  }
  dir = opendir("/sys/block");
  if (!dir)
    return ff_error("/sys/block: %m");
  while ((de = readdir(dir))) {
    char serial[200];

    if (strncmp(de->d_name, "sd", 2) ||
        disk_serial(de->d_name, serial, sizeof serial) < 0)
      continue;
    for (uint32_t k = 0; k < g->ndevs; k++)
      if (g->names[k] && !g->paths[k] && !strcmp(g->names[k], serial)) {
        if (asprintf(&g->paths[k], "/dev/%s", de->d_name) < 0)
          g->paths[k] = NULL;
        else
          found++;
        break;
      }
  }
  closedir(dir);
  g->found = found;
  printf("FF-PROGRESS ff-guestrun: %u of %u farm devices found by serial\n",
         found, g->ndevs);
  if (!found)
    return ff_error("no SCSI disk has the serial of a farm device");
  return 0;
}

/* ---- the RAM disk: io target "ram" -----------------------------------------
 *
 * A baseline with no farm below it: brd's /dev/ram0, in the guest's own
 * memory.  The module is in the initramfs but not loaded at boot (its
 * disks would be in every lvm scan): a plan that names target "ram" (a
 * workload's, or a value of fusefarm/target) loads it once, one disk of
 * 256 MiB (pages are allocated as they are written). */

#define RAM_DISK "/dev/ram0"

static int
plan_wants_ram(json_t *plan)
{
  json_t *j;
  size_t i;

  json_array_foreach(json_object_get(plan, "workloads"), i, j)
  {
    const char *t =
      json_string_value(json_object_get(json_object_get(j, "io"), "target"));

    if (t && !strcmp(t, FF_IO_RAM_TARGET))
      return 1;
  }
  json_array_foreach(json_object_get(plan, "configs"), i, j)
  {
    const char *t = json_string_value(json_object_get(j, "target"));

    if (t && !strcmp(t, FF_IO_RAM_TARGET))
      return 1;
  }
  return 0;
}

/* RAM_DISK, or NULL with a progress line saying why not. */
static const char *
ram_disk_load(void)
{
  struct utsname u;
  struct stat st;
  char ko[PATH_MAX];
  const char *argv[] = {"insmod", ko, "rd_nr=1", "rd_size=262144", NULL};
  pid_t pid;
  int ex;

  if (stat(RAM_DISK, &st) == 0 && S_ISBLK(st.st_mode))
    return RAM_DISK;
  uname(&u);
  snprintf(ko, sizeof ko, "/lib/modules/%s/kernel/drivers/block/brd.ko",
           u.release);
  pid = ff_spawn(argv, "/tmp/ff-brd.out", "/tmp/ff-brd.err", NULL);
  ex = pid > 0 ? ff_wait_status(pid) : -1;
  if (ex != 0 || stat(RAM_DISK, &st) < 0 || !S_ISBLK(st.st_mode)) {
    printf("FF-PROGRESS ff-guestrun: no RAM disk (insmod %s: exit %d): "
           "target ram fails\n",
           ko, ex);
    return NULL;
  }
  printf("FF-PROGRESS ff-guestrun: RAM disk %s (brd, 256 MiB)\n", RAM_DISK);
  return RAM_DISK;
}

/* "2.03.16(2) (2022-05-18)" from `lvm version`, or "unknown". */
static char *
lvm_version(const char *lvm)
{
  const char *argv[] = {lvm, "version", NULL};
  const char *out = "/tmp/ff-lvm-version.out";
  pid_t pid = ff_spawn(argv, out, NULL, lvm_env);
  char *text, *p, *v = NULL;

  if (pid < 0 || ff_wait_status(pid) != 0)
    return strdup("unknown");
  text = ff_slurp(out, 4096);
  p = text ? strstr(text, "LVM version:") : NULL;
  if (p) {
    p += strlen("LVM version:");
    p += strspn(p, " ");
    v = strndup(p, strcspn(p, "\n"));
  }
  free(text);
  return v ? v : strdup("unknown");
}

static int
workload_of(json_t *j, struct ff_workload *w)
{
  const char *type = json_string_value(json_object_get(j, "type"));

  memset(w, 0, sizeof *w);
  w->type = FF_W_COUNT;
  for (int t = 0; type && t < FF_W_COUNT; t++)
    if (!strcmp(type, ff_wtype_name((enum ff_wtype)t)))
      w->type = (enum ff_wtype)t;
  if (w->type == FF_W_COUNT)
    return ff_error("plan: workload type %s: unknown", type ? type : "?");
  w->name = (char *)json_string_value(json_object_get(j, "name"));
  w->repeat = (unsigned)json_integer_value(json_object_get(j, "repeat"));
  w->concurrency =
    (unsigned)json_integer_value(json_object_get(j, "concurrency"));
  w->spread_ns = (uint64_t)json_integer_value(json_object_get(j, "spread_ns"));
  w->count = (unsigned)json_integer_value(json_object_get(j, "count"));
  w->lv = (char *)json_string_value(json_object_get(j, "lv"));
  if (w->type == FF_W_IO || w->type == FF_W_FS) {
    json_t *io = json_object_get(j, "io");

    w->io.target = (char *)json_string_value(json_object_get(io, "target"));
    w->io.rw = (char *)json_string_value(json_object_get(io, "rw"));
    w->io.ioengine =
      (char *)json_string_value(json_object_get(io, "ioengine"));
    w->io.bs = (uint64_t)json_integer_value(json_object_get(io, "bs"));
    w->io.iodepth =
      (unsigned)json_integer_value(json_object_get(io, "iodepth"));
    w->io.direct = json_is_true(json_object_get(io, "direct"));
    w->io.size = (uint64_t)json_integer_value(json_object_get(io, "size"));
    w->io.runtime_ns =
      (uint64_t)json_integer_value(json_object_get(io, "runtime_ns"));
    w->io.fsync = (unsigned)json_integer_value(json_object_get(io, "fsync"));
    w->io.fdatasync =
      (unsigned)json_integer_value(json_object_get(io, "fdatasync"));
    w->io.numjobs =
      (unsigned)json_integer_value(json_object_get(io, "numjobs"));
    if (!w->io.target || !w->io.rw || !w->io.ioengine || !w->io.bs ||
        !w->io.iodepth || !w->io.size || !w->io.numjobs)
      return ff_error("plan: io workload %s: incomplete fio job",
                      w->name ? w->name : "?");
  }
  if (w->type == FF_W_FS) {
    json_t *io = json_object_get(j, "io");

    w->io.fstype = (char *)json_string_value(json_object_get(io, "fstype"));
    w->io.mkfs_options =
      (char *)json_string_value(json_object_get(io, "mkfs_options"));
    w->io.mount_options =
      (char *)json_string_value(json_object_get(io, "mount_options"));
    w->io.nrfiles =
      (unsigned)json_integer_value(json_object_get(io, "nrfiles"));
    w->io.fs_tunables =
      (char *)json_string_value(json_object_get(io, "fs_tunables"));
    w->io.mkdirs = (unsigned)json_integer_value(json_object_get(io, "mkdirs"));
    if (!w->io.fstype || !w->io.mkfs_options || !w->io.mount_options ||
        !w->io.fs_tunables || !w->io.nrfiles)
      return ff_error("plan: fs workload %s: incomplete filesystem",
                      w->name ? w->name : "?");
  }
  if (!w->name || !w->repeat ||
      (w->type == FF_W_EVENT_ACTIVATION && !w->concurrency))
    return ff_error("plan: workload %s: incomplete", w->name ? w->name : "?");
  return 0;
}

int
main(int argc, char **argv)
{
  struct guest g = {0};
  json_error_t je;
  json_t *plan, *configs, *cj, *result, *rconfigs;
  struct utsname u;
  char plandir[PATH_MAX], *slash, *version;
  size_t k;
  int rc = 0;
  FILE *out;

  if (argc != 4) {
    fprintf(stderr, "usage: ff-guestrun PLAN MANIFEST OUT\n");
    return 2;
  }
  plan = json_load_file(argv[1], 0, &je);
  if (!plan) {
    fprintf(stderr, "ff-guestrun: %s:%d: %s\n", argv[1], je.line, je.text);
    return 1;
  }
  snprintf(plandir, sizeof plandir, "%s", argv[1]);
  slash = strrchr(plandir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(plandir, sizeof plandir, ".");
  /* FF_LVM (another lvm2 build, run-initramfs.sh --lvm), else the
   * plan's, else the guest's own */
  g.lvm = getenv("FF_LVM");
  if (!g.lvm || !*g.lvm)
    g.lvm = json_string_value(json_object_get(plan, "lvm"));
  if (!g.lvm)
    g.lvm = "lvm";
  g.outdir = "/tmp/ff-out";
  g.snap_fd = -1;
  if (getenv("FF_SNAP") && *getenv("FF_SNAP") &&
      snap_open(&g, getenv("FF_SNAP")) < 0)
    printf("FF-PROGRESS ff-guestrun: no farm counters: %s\n", ff_errmsg());
  mkdir(g.outdir, 0755);
  mkdir("/run/lvm", 0755);
  if (load_devices(&g, argv[2]) < 0) {
    fprintf(stderr, "ff-guestrun: %s\n", ff_errmsg());
    return 1;
  }
  if (plan_wants_ram(plan))
    g.ram_disk = ram_disk_load();
  version = lvm_version(g.lvm);
  uname(&u);
  rconfigs = json_array();
  result = json_pack("{s:s, s:s, s:s, s:{s:i, s:i, s:i}, s:o}", "kernel",
                     u.release, "lvm", g.lvm, "lvm_version", version, "farm",
                     "devices", (int)g.found, "vgs", (int)g.nvgs, "lvs",
                     (int)g.nlvs, "configs", rconfigs);
  free(version);

  configs = json_object_get(plan, "configs");
  json_array_foreach(configs, k, cj)
  {
    const char *conf = json_string_value(json_object_get(cj, "lvm_conf"));
    json_t *wls = json_array(), *wj;
    size_t i;

    json_array_append_new(rconfigs, json_pack("{s:O, s:o}", "id",
                                              json_object_get(cj, "id"),
                                              "workloads", wls));
    printf("FF-PROGRESS config %lld\n",
           (long long)json_integer_value(json_object_get(cj, "id")));
    fflush(stdout);
    if (conf) {
      char src[PATH_MAX * 2];

      if (conf[0] == '/')
        snprintf(src, sizeof src, "%s", conf);
      else
        snprintf(src, sizeof src, "%s/%s", plandir, conf);
      if (ff_copy_file(src, "/etc/lvm/lvm.conf", 1u << 20) < 0) {
        fprintf(stderr, "ff-guestrun: %s\n", ff_errmsg());
        rc = 1;
        break;
      }
    }
    json_array_foreach(json_object_get(plan, "workloads"), i, wj)
    {
      struct ff_workload w;
      struct ff_wresult *res;
      const struct ff_wenv e = {
        .lvm = g.lvm,
        .outdir = g.outdir,
        .ndevs = g.ndevs,
        .names = g.names,
        .paths = g.paths,
        .vgs = g.vgs,
        .first_lv = g.first_lv,
        .ram_disk = g.ram_disk,
        .target = json_string_value(json_object_get(cj, "target")),
        .fstype = json_string_value(json_object_get(cj, "fstype")),
        .mount_options =
          json_string_value(json_object_get(cj, "mount_options")),
        .fs_tunables = json_string_value(json_object_get(cj, "fs_tunables")),
        .env = lvm_env,
        .cold = g_cold,
        .counters = g.snap_fd >= 0 ? g_counters : NULL,
        .say = g_say,
        .ctx = &g,
      };

      if (workload_of(wj, &w) < 0) {
        fprintf(stderr, "ff-guestrun: %s\n", ff_errmsg());
        rc = 1;
        break;
      }
      res = ff_wresult_new();
      if (!res || ff_workload_run(&e, &w, res) < 0) {
        fprintf(stderr, "ff-guestrun: %s: %s\n", w.name, ff_errmsg());
        rc = 1;
      }
      /* A workload interrupted before its first run is left out. */
      if (res && ff_wresult_nruns(res)) {
        char *text = ff_wresult_json_text(res);
        json_t *wl = text ? json_loads(text, 0, NULL) : NULL;

        free(text);
        if (!wl || json_array_append_new(wls, wl) < 0) {
          fprintf(stderr, "ff-guestrun: %s: out of memory\n", w.name);
          rc = 1;
        }
      }
      ff_wresult_free(res);
    }
    if (rc)
      break;
  }
  g_cold(&g);

  out = fopen(argv[3], "w");
  if (!out) {
    fprintf(stderr, "ff-guestrun: %s: %s\n", argv[3], strerror(errno));
    rc = 1;
  } else {
    fputs("FF-RESULT ", out);
    json_dumpf(result, out, JSON_COMPACT);
    fputs("\nFF-RESULT-END\n", out);
    if (fclose(out) != 0)
      rc = 1;
  }
  json_decref(result);
  json_decref(plan);
  json_decref(g.base);
  if (g.snap_fd >= 0)
    close(g.snap_fd);
  for (uint32_t i = 0; i < g.ndevs; i++) {
    free(g.names[i]);
    free(g.paths[i]);
    free(g.vgs[i]);
  }
  free(g.names);
  free(g.paths);
  free(g.vgs);
  free(g.first_lv);
  return rc;
}
