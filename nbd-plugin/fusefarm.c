/* nbdkit-fusefarm-plugin: the farm's devices as NBD exports.
 *
 * One export per farm device, named as the device is everywhere else
 * (`fusefarm gen`, the FUSE mount).  Every byte, every delay and every
 * statistic comes from the request engine (serve/ff-server.h), the same
 * one the FUSE daemon runs: begin (the model decides, writes land),
 * complete (reads take their bytes), end (stats).  This file only
 * translates nbdkit callbacks into those calls and waits with
 * nbdkit_nanosleep; docs/nbd.md and nbdkit-fusefarm-plugin.pod say what
 * the user sees.
 *
 * THREAD MODEL
 * - NBDKIT_THREAD_MODEL_PARALLEL: nbdkit may call any data callback from
 *   any number of threads at once, on one connection or many.
 * - Everything below "configuration" and "the farm" is written by
 *   .config, .config_complete and .get_ready, before any connection, and
 *   only read afterwards: no lock.  The server (farm, overlay shared by
 *   every connection to an export, model, stats) is safe from many
 *   threads (ff-server.h).
 * - A request asks the model at arrival when to answer; a write or zero
 *   lands in the overlay at once (unless the model fails it) and only the
 *   reply waits, so a request arriving after a write was acknowledged,
 *   on any connection, sees it.  The wait is nbdkit_nanosleep in the
 *   calling nbdkit worker thread, which ends early when the client goes
 *   away or the server shuts down.  With --threads 1 a connection has one
 *   request in flight; each connection has its own worker, so exports
 *   never wait for each other unless the profile makes them share a queue.
 * - One background thread (started in .after_fork so that it survives
 *   --daemonize, stopped in .cleanup) watches the profile file and writes
 *   the stats file.  bg.lock guards bg.stop and the condition variable it
 *   waits on; the profile switch itself is ff_server_set_profile, safe
 *   against concurrent requests.  The watch state (last stat, last error)
 *   belongs to that thread alone.
 */
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-file.h"
#include "ff-iomodel.h"
#include "ff-overlay.h"
#include "ff-sched.h"
#include "ff-server.h"
#include "ff-util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#define THREAD_MODEL       NBDKIT_THREAD_MODEL_PARALLEL
#include <nbdkit-plugin.h>

#ifndef FF_VERSION
#define FF_VERSION "unknown"
#endif

/* Block sizes offered to clients: any byte range is served exactly (no
 * read-modify-write in the client is needed), the overlay's block is the
 * size without a penalty, and a request up to the overlay's atomic limit
 * lands as one piece. */
#define BLOCK_MIN       1
#define BLOCK_PREFERRED FF_OVERLAY_BLOCK
#define BLOCK_MAX       FF_OVERLAY_ATOMIC_MAX

/* File descriptors: nbdkit holds one per connection with --threads 1
 * (three with more threads: a status pipe each); the rule of
 * docs/nbd.md ("ulimit -n"), 2 per export plus 64, leaves room for listing
 * clients, the log, the spec and the files this plugin writes. */
#define FDS_PER_EXPORT 2
#define FDS_SPARE      64

/* How often the profile file is checked for a new version. */
#define PROFILE_POLL_NS 1000000000ull

/* devices=N: the bounds of `fusefarm mount --devices N`. */
#define DEVICES_MIN 1
#define DEVICES_MAX 1000000

/* ---- configuration (.config) ------------------------------------------ */

static char *spec_path;    /* NULL: the built-in farm */
static char *profile_path; /* NULL: ideal; absolute, not resolved */
static char *stats_path;   /* NULL: no stats file */
static uint64_t stats_interval_ns = 1000000000ull;
static unsigned shard_k, shard_m = 1;
static const char *shard_arg;   /* as given, for messages */
static unsigned scale_devices;  /* devices=N; 0: as the spec says */
static char *overlay_path;      /* load at start */
static char *save_overlay_path; /* save at exit */
static char *trace_path;        /* trace=FILE: a line per request */

/* ---- the farm (.config_complete, .get_ready) -------------------------- */

static struct ff_server *srv;
static uint32_t *served; /* device indices this shard serves, ascending */
static uint32_t nserved;
static bool serving; /* after_fork ran: cleanup saves and writes */

/* ---- the background thread (.after_fork .. .cleanup) ------------------ */

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* CLOCK_MONOTONIC */
  bool stop;           /* guarded by lock */
  bool running;
  pthread_t thread;
  /* Owned by the thread (and by cleanup once it is joined). */
  struct stat seen; /* the profile file as last loaded or rejected */
  bool seen_valid;
  bool stat_failed;  /* reported that the profile file is missing */
  bool stats_failed; /* reported that the stats file cannot be written */
} bg = {
  .lock = PTHREAD_MUTEX_INITIALIZER,
};

struct handle {
  uint32_t dev;
};

static bool
in_shard(uint32_t dev)
{
  return dev % shard_m == shard_k;
}

/* ---- .config ------------------------------------------------------------ */

/* A key given twice is an error, not "the last one wins". */
static int
set_once(const char *key, const char *value, char **slot, bool must_exist)
{
  if (*slot) {
    nbdkit_error("%s=%s: %s given twice", key, value, key);
    return -1;
  }
  /* nbdkit changes to / when it starts: keep absolute paths. */
  if (must_exist) {
    *slot = realpath(value, NULL);
    if (!*slot) {
      nbdkit_error("%s=%s: %m", key, value);
      return -1;
    }
    return 0;
  }
  *slot = nbdkit_absolute_path(value);
  return *slot ? 0 : -1; /* nbdkit said why */
}

/* "2", "0.5" (seconds) or a duration with a unit ("500ms"). */
static int
parse_interval(const char *key, const char *value, uint64_t *out)
{
  uint64_t ns;
  char *end;
  double s;

  errno = 0;
  s = strtod(value, &end);
  if (end != value && !*end && !errno)
    ns = s >= 0 && s <= 3600 ? (uint64_t)(s * 1e9 + 0.5) : 0;
  else if (ff_parse_duration(value, &ns) < 0)
    ns = 0;
  if (ns < 10000000ull || ns > 3600000000000ull) {
    nbdkit_error("%s=%s: expected seconds (\"2\", \"0.5\") or a duration "
                 "(\"500ms\") from 10ms to 1h",
                 key, value);
    return -1;
  }
  *out = ns;
  return 0;
}

/* A decimal number starting at *s (digits only); moves *s past it. */
static int
parse_digits(const char **s, unsigned *out)
{
  unsigned long v;
  char *end;

  if (**s < '0' || **s > '9')
    return -1;
  errno = 0;
  v = strtoul(*s, &end, 10);
  if (errno || v > 1000000)
    return -1;
  *out = (unsigned)v;
  *s = end;
  return 0;
}

static int
parse_shard(const char *key, const char *value)
{
  const char *p = value;
  unsigned k, m;

  if (shard_arg) {
    nbdkit_error("%s=%s: %s given twice", key, value, key);
    return -1;
  }
  if (parse_digits(&p, &k) < 0 || *p++ != '/' || parse_digits(&p, &m) < 0 ||
      *p || m < 1 || k >= m) {
    nbdkit_error("%s=%s: expected K/M with 0 <= K < M (serve the devices "
                 "whose index is K modulo M)",
                 key, value);
    return -1;
  }
  shard_k = k;
  shard_m = m;
  shard_arg = value;
  return 0;
}

/* devices=N, bounded as `fusefarm mount --devices N` is. */
static int
parse_devices(const char *key, const char *value)
{
  const char *p = value;
  unsigned n;

  if (scale_devices) {
    nbdkit_error("%s=%s: %s given twice", key, value, key);
    return -1;
  }
  if (parse_digits(&p, &n) < 0 || *p || n < DEVICES_MIN || n > DEVICES_MAX) {
    nbdkit_error("%s=%s: expected a device count from %d to %d (scale the "
                 "farm to that many devices, as fusefarm mount "
                 "--devices does)",
                 key, value, DEVICES_MIN, DEVICES_MAX);
    return -1;
  }
  scale_devices = n;
  return 0;
}

/* overlay-max=SIZE: the overlay's cap (ff_overlay_set_max). */
static uint64_t overlay_max;

static int
parse_overlay_max(const char *key, const char *value)
{
  if (overlay_max) {
    nbdkit_error("%s=%s: %s given twice", key, value, key);
    return -1;
  }
  if (ff_parse_size(value, &overlay_max) < 0 || !overlay_max) {
    nbdkit_error("%s=%s: expected a size such as 64M or 2G (greater than "
                 "0): the most written blocks' bytes the overlay holds",
                 key, value);
    overlay_max = 0;
    return -1;
  }
  return 0;
}

static int
ff_config(const char *key, const char *value)
{
  if (!strcmp(key, "spec"))
    return set_once(key, value, &spec_path, true);
  if (!strcmp(key, "profile")) {
    /* Absolute but not resolved: a symlink stays a symlink, so pointing
     * it at another file switches the profile. */
    return set_once(key, value, &profile_path, false);
  }
  if (!strcmp(key, "stats"))
    return set_once(key, value, &stats_path, false);
  if (!strcmp(key, "stats-interval"))
    return parse_interval(key, value, &stats_interval_ns);
  if (!strcmp(key, "shard"))
    return parse_shard(key, value);
  if (!strcmp(key, "devices"))
    return parse_devices(key, value);
  if (!strcmp(key, "overlay"))
    return set_once(key, value, &overlay_path, true);
  if (!strcmp(key, "save-overlay"))
    return set_once(key, value, &save_overlay_path, false);
  if (!strcmp(key, "trace"))
    return set_once(key, value, &trace_path, false);
  if (!strcmp(key, "overlay-max"))
    return parse_overlay_max(key, value);
  nbdkit_error("unknown parameter '%s=%s' (expected spec, profile, stats, "
               "stats-interval, devices, shard, overlay, save-overlay, "
               "overlay-max or trace; see nbdkit fusefarm --help)",
               key, value);
  return -1;
}

/* ---- .config_complete ----------------------------------------------------
 * Everything that can be wrong with the input is found here, before
 * nbdkit listens, so a bad key never gives a half-working server. */

/* Enough descriptors for one connection per export: raise the soft limit
 * to the hard one, else refuse to start (a farm whose connections start
 * failing after some hundreds would look like missing disks to the
 * guest). */
static int
check_fd_limit(void)
{
  uint64_t need = (uint64_t)nserved * FDS_PER_EXPORT + FDS_SPARE;
  struct rlimit rl;

  if (ff_nofile_raise((rlim_t)need, "the exports", "", NULL) == 0) {
    nbdkit_debug("fusefarm: %" PRIu32 " exports need %" PRIu64
                 " file descriptors",
                 nserved, need);
    return 0;
  }
  /* Say it in the plugin's terms: exports, the rule, shards. */
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
    nbdkit_error("%s", ff_errmsg());
    return -1;
  }
  nbdkit_error("file descriptor limit too low: %" PRIu32 " exports need "
               "%" PRIu64 " (2 per export + 64) but ulimit -n is %llu "
               "and the hard limit %s%llu; raise it (ulimit -n %" PRIu64
               ") or serve fewer exports per server (shard=K/M)",
               nserved, need, (unsigned long long)rl.rlim_cur,
               rl.rlim_max == RLIM_INFINITY ? "unlimited " : "",
               (unsigned long long)rl.rlim_max, need);
  return -1;
}

/* What the server could not build, named by this plugin's keys. */
static void
report_fault(enum ff_server_fault f)
{
  const char *what = spec_path ? spec_path : "(built-in)";
  uint32_t n;

  switch (f) {
  case FF_SERVER_BAD_SAVE_OVERLAY:
    nbdkit_error("save-overlay=%s: %s", save_overlay_path, ff_errmsg());
    break;
  case FF_SERVER_BAD_TRACE:
    nbdkit_error("trace: %s", ff_errmsg());
    break;
  case FF_SERVER_BAD_SPEC:
    nbdkit_error("spec=%s: %s", what, ff_errmsg());
    break;
  case FF_SERVER_BAD_DEVICES:
    nbdkit_error("devices=%u: %s", scale_devices, ff_errmsg());
    break;
  case FF_SERVER_BAD_FARM:
    if (scale_devices)
      nbdkit_error("spec=%s devices=%u: %s", what, scale_devices, ff_errmsg());
    else
      nbdkit_error("spec=%s: %s", what, ff_errmsg());
    break;
  case FF_SERVER_BAD_PROFILE:
    nbdkit_error("profile=%s: %s", profile_path ? profile_path : "(ideal)",
                 ff_errmsg());
    break;
  case FF_SERVER_BAD_OVERLAY:
    if (scale_devices) {
      /* The farm is gone with the server: count it again for the hint
       * (keeping the overlay's message, which loading may replace). */
      char why[1024];
      struct ff_farm *f2;

      snprintf(why, sizeof why, "%s", ff_errmsg());
      f2 = ff_server_load_farm(spec_path, scale_devices, NULL);
      n = f2 ? ff_farm_ndevs(f2) : 0;
      ff_farm_free(f2);
      nbdkit_error("overlay=%s: %s (this farm: the spec scaled by "
                   "devices=%u to %" PRIu32 " devices; an overlay is "
                   "loaded with the devices= it was saved with)",
                   overlay_path, why, scale_devices, n);
    } else {
      nbdkit_error("overlay=%s: %s", overlay_path, ff_errmsg());
    }
    break;
  default:
    nbdkit_error("%s", ff_errmsg());
    break;
  }
}

static int
ff_config_complete(void)
{
  struct ff_server_options so = {
    .spec = spec_path,
    .devices = scale_devices,
    .profile = profile_path,
    .overlay = overlay_path,
    .save_overlay = save_overlay_path,
    .stats = 1,
    .trace = trace_path,
    .overlay_max = overlay_max,
    /* nbdkit holds thousands of exports for hours, each read now and
     * then: VGs are built again when read, none kept */
    .lazy = 1,
  };
  enum ff_server_fault fault;
  uint32_t ndevs;

  /* Everything that can be wrong with the input is found here, before
   * nbdkit listens, so a bad key never gives a half-working server. */
  srv = ff_server_new(&so, &fault);
  if (!srv) {
    report_fault(fault);
    return -1;
  }
  ndevs = ff_server_ndevs(srv);
  if (scale_devices)
    nbdkit_debug("fusefarm: spec=%s scaled by devices=%u to %" PRIu32
                 " devices",
                 spec_path ? spec_path : "(built-in)", scale_devices, ndevs);
  served = calloc(ndevs ? ndevs : 1, sizeof *served);
  if (!served) {
    nbdkit_error("out of memory for %" PRIu32 " devices", ndevs);
    return -1;
  }
  for (uint32_t i = 0; i < ndevs; i++)
    if (in_shard(i))
      served[nserved++] = i;
  if (nserved == 0) {
    char scaled[64] = "";

    if (scale_devices)
      snprintf(scaled, sizeof scaled, " scaled by devices=%u", scale_devices);
    nbdkit_error("shard=%s: serves no device (the farm%s has %" PRIu32
                 " devices, indices 0 to %" PRIu32 ")",
                 shard_arg ? shard_arg : "0/1", scaled, ndevs,
                 ndevs ? ndevs - 1 : 0);
    return -1;
  }
  if (check_fd_limit() < 0)
    return -1;
  if (profile_path && stat(profile_path, &bg.seen) == 0)
    bg.seen_valid = true;
  return 0;
}

/* ---- the stats file ----------------------------------------------------- */

static int
keep_served(uint32_t dev, void *arg)
{
  (void)arg;
  return in_shard(dev);
}

/* Write the stats file atomically: a reader never sees half a document.
 * The snapshot (idle devices included) lists only the devices this shard
 * serves: another server writes the others.  The counters of the rest are
 * zero, so totals are unchanged. */
static int
write_stats(void)
{
  char *text =
    ff_server_stats_json(srv, 1, 0, shard_m == 1 ? NULL : keep_served, NULL);
  int rc;

  if (!text)
    return ff_error_prefix("stats snapshot: ");
  rc = ff_write_file_atomic(stats_path, text, strlen(text));
  free(text);
  if (rc < 0)
    return ff_error_prefix("stats=%s: ", stats_path);
  return 0;
}

/* ---- the profile file ------------------------------------------------- */

static bool
same_file_version(const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
         a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
         a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
         a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* A new version of the profile file (edited, or replaced by a rename or
 * a retargeted symlink) is loaded and applied; a bad one is reported once
 * and the current profile stays. */
static void
check_profile(void)
{
  struct stat st;

  if (stat(profile_path, &st) < 0) {
    if (!bg.stat_failed)
      nbdkit_error("profile=%s: %m (keeping profile '%s')", profile_path,
                   ff_server_profile_name(srv));
    bg.stat_failed = true;
    return;
  }
  bg.stat_failed = false;
  if (bg.seen_valid && same_file_version(&st, &bg.seen))
    return;
  bg.seen = st;
  bg.seen_valid = true;
  if (ff_server_set_profile(srv, profile_path, ff_now_ns()) < 0) {
    nbdkit_error("profile=%s: %s (keeping profile '%s')", profile_path,
                 ff_errmsg(), ff_server_profile_name(srv));
    return;
  }
  nbdkit_debug("fusefarm: profile=%s: now '%s'", profile_path,
               ff_server_profile_name(srv));
}

static void
stats_tick(void)
{
  if (write_stats() < 0) {
    if (!bg.stats_failed)
      nbdkit_error("%s", ff_errmsg());
    bg.stats_failed = true;
  } else {
    bg.stats_failed = false;
  }
}

static void *
bg_thread(void *arg)
{
  uint64_t next_profile = ff_now_ns() + PROFILE_POLL_NS;
  uint64_t next_stats = ff_now_ns() + stats_interval_ns;

  (void)arg;
  pthread_mutex_lock(&bg.lock);
  while (!bg.stop) {
    uint64_t now = ff_now_ns(), due = UINT64_MAX;
    struct timespec ts;

    pthread_mutex_unlock(&bg.lock);
    if (profile_path && now >= next_profile) {
      check_profile();
      next_profile = now + PROFILE_POLL_NS;
    }
    if (stats_path && now >= next_stats) {
      stats_tick();
      next_stats = now + stats_interval_ns;
    }
    if (profile_path)
      due = next_profile;
    if (stats_path && next_stats < due)
      due = next_stats;
    ts.tv_sec = (time_t)(due / 1000000000ull);
    ts.tv_nsec = (long)(due % 1000000000ull);
    pthread_mutex_lock(&bg.lock);
    if (!bg.stop)
      pthread_cond_timedwait(&bg.cond, &bg.lock, &ts);
  }
  pthread_mutex_unlock(&bg.lock);
  return NULL;
}

/* ---- lifecycle -------------------------------------------------------- */

/* On a host whose udevd runs, an nbd-client of these exports hands
 * them to the host's lvm2 rules unless fusefarm's PV rule is installed
 * (`fusefarm udev-rule`, docs/nbd.md): say so once, on stderr while the
 * user still sees it.  Not an error: the client may be another machine. */
static void
note_udev(void)
{
  static const char *const rules[] = {
    "/etc/udev/rules.d/61-fusefarm-pv.rules",
    "/run/udev/rules.d/61-fusefarm-pv.rules",
    "/usr/lib/udev/rules.d/61-fusefarm-pv.rules",
    "/lib/udev/rules.d/61-fusefarm-pv.rules",
  };
  struct stat st;

  if (stat("/run/udev/control", &st) < 0 || !S_ISSOCK(st.st_mode))
    return;
  for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
    if (access(rules[i], F_OK) == 0)
      return;
  fprintf(stderr,
          "nbdkit-fusefarm-plugin: note: udevd runs here and fusefarm's PV "
          "rule is not installed: nbd-client of these exports on this host "
          "would let its lvm2 activate the farm's VGs (run `fusefarm "
          "udev-rule --install` first; docs/nbd.md)\n");
}

static int
ff_get_ready(void)
{
  /* The profile's clock (spin-up, stalls, vanish_at, appear_at) starts
   * now.  The model owns the profile from here on, even on failure. */
  if (ff_server_start(srv, ff_now_ns()) < 0) {
    nbdkit_error("profile=%s: %s", profile_path ? profile_path : "(ideal)",
                 ff_errmsg());
    return -1;
  }
  /* A stats file that cannot be written is found now, while the user
   * still sees the error, not in the background. */
  if (stats_path && write_stats() < 0) {
    nbdkit_error("%s", ff_errmsg());
    return -1;
  }
  note_udev();
  return 0;
}

static int
ff_after_fork(void)
{
  pthread_condattr_t ca;
  int e;

  serving = true;
  if (!profile_path && !stats_path)
    return 0;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&bg.cond, &ca);
  pthread_condattr_destroy(&ca);
  e = pthread_create(&bg.thread, NULL, bg_thread, NULL);
  if (e) {
    errno = e;
    nbdkit_error("start the profile and stats thread: %m");
    pthread_cond_destroy(&bg.cond);
    return -1;
  }
  bg.running = true;
  return 0;
}

static void
ff_cleanup(void)
{
  if (bg.running) {
    pthread_mutex_lock(&bg.lock);
    bg.stop = true;
    pthread_cond_signal(&bg.cond);
    pthread_mutex_unlock(&bg.lock);
    pthread_join(bg.thread, NULL);
    pthread_cond_destroy(&bg.cond);
    bg.running = false;
  }
  if (!serving)
    return;
  serving = false;
  /* Every connection is closed: this snapshot is exact. */
  if (stats_path && write_stats() < 0)
    nbdkit_error("%s", ff_errmsg());
  if (ff_server_save_at_exit(srv, NULL) < 0)
    nbdkit_error("save-overlay=%s: %s", save_overlay_path, ff_errmsg());
  if (ff_server_trace_check(srv) < 0)
    nbdkit_error("trace: %s", ff_errmsg());
}

static void
ff_unload(void)
{
  ff_cleanup(); /* in case nbdkit did not reach .cleanup */
  ff_server_free(srv);
  free(served);
  free(spec_path);
  free(profile_path);
  free(stats_path);
  free(overlay_path);
  free(save_overlay_path);
  free(trace_path);
}

static void
ff_dump_plugin(void)
{
  printf("fusefarm_version=%s\n", FF_VERSION);
  printf("fusefarm_block_size=%u/%u/%u\n", BLOCK_MIN, BLOCK_PREFERRED,
         BLOCK_MAX);
}

/* ---- exports ------------------------------------------------------------ */

static bool
present(uint32_t dev)
{
  return ff_server_present(srv, dev, ff_now_ns());
}

static int
ff_list_exports(int readonly, int is_tls, struct nbdkit_exports *exports)
{
  char desc[256];

  (void)readonly;
  (void)is_tls;
  for (uint32_t i = 0; i < nserved; i++) {
    uint32_t dev = served[i];

    if (!present(dev))
      continue; /* not yet (the profile's appear_at) */
    ff_farm_describe(ff_server_farm(srv), dev, desc, sizeof desc);
    if (nbdkit_add_export(exports, ff_server_dev_name(srv, dev), desc) < 0) {
      nbdkit_error("list exports: %" PRIu32 " exports, more than nbdkit "
                   "lists (10000); connect by name, or split the farm with "
                   "shard=K/M",
                   nserved);
      return -1;
    }
  }
  return 0;
}

/* The first device this server serves: a client that asks for no name
 * gets a real device rather than an error. */
static const char *
ff_default_export(int readonly, int is_tls)
{
  (void)readonly;
  (void)is_tls;
  for (uint32_t i = 0; i < nserved; i++)
    if (present(served[i]))
      return ff_server_dev_name(srv, served[i]);
  return NULL;
}

static void *
ff_open(int readonly)
{
  const char *name = nbdkit_export_name();
  struct handle *h;
  int64_t dev;

  (void)readonly;
  if (!name)
    return NULL; /* nbdkit said why */
  dev = ff_server_lookup(srv, name);
  if (dev < 0) {
    nbdkit_error("unknown export '%s': the farm has no such device "
                 "(nbdinfo --list shows the %" PRIu32 " exports)",
                 name, nserved);
    return NULL;
  }
  if (!in_shard((uint32_t)dev)) {
    nbdkit_error("export '%s' (device %" PRId64 ") is served by shard "
                 "%" PRId64 "/%u, not by this server (shard=%u/%u)",
                 name, dev, dev % shard_m, shard_m, shard_k, shard_m);
    return NULL;
  }
  if (!present((uint32_t)dev)) {
    nbdkit_error("export '%s' is not present yet (the profile's appear_at)",
                 name);
    return NULL;
  }
  h = malloc(sizeof *h);
  if (!h) {
    nbdkit_error("open %s: %m", name);
    return NULL;
  }
  h->dev = (uint32_t)dev;
  return h;
}

static void
ff_close(void *handle)
{
  free(handle);
}

static const char *
ff_export_description(void *handle)
{
  struct handle *h = handle;
  char desc[256];

  ff_farm_describe(ff_server_farm(srv), h->dev, desc, sizeof desc);
  return nbdkit_strdup_intern(desc);
}

static int64_t
ff_get_size(void *handle)
{
  struct handle *h = handle;

  return (int64_t)ff_server_dev_size(srv, h->dev);
}

static int
ff_block_size(void *handle, uint32_t *minimum, uint32_t *preferred,
              uint32_t *maximum)
{
  (void)handle;
  *minimum = BLOCK_MIN;
  *preferred = BLOCK_PREFERRED;
  *maximum = BLOCK_MAX;
  return 0;
}

static int
ff_is_rotational(void *handle)
{
  (void)handle;
  return ff_iomodel_rotational(ff_server_model(srv));
}

static int
ff_can_true(void *handle)
{
  (void)handle;
  return 1;
}

/* Writes reach the overlay before they are acknowledged and a flush has
 * nothing to write back, so what one connection had acknowledged is seen
 * by every other connection to the export: multi-conn is safe. */
static int
ff_can_multi_conn(void *handle)
{
  (void)handle;
  return 1;
}

static int
ff_can_fua(void *handle)
{
  (void)handle;
  return NBDKIT_FUA_NATIVE; /* ff_pwrite writes back a write cache */
}

/* ---- data ------------------------------------------------------------- */

/* Wait in this worker until the model's time (ff_server_run); a client
 * that went away, or a server that stops, ends the wait early: nbdkit
 * said why, the request is answered ESHUTDOWN. */
static int
wait_nbdkit(uint64_t done_ns, void *arg)
{
  uint64_t now = ff_now_ns(), d;

  (void)arg;
  if (done_ns <= now)
    return 0;
  d = done_ns - now;
  return nbdkit_nanosleep((unsigned)(d / 1000000000ull),
                          (unsigned)(d % 1000000000ull)) < 0
           ? ESHUTDOWN
           : 0;
}

/* One request through the engine (ff_server_run: begin at arrival, the
 * model decides and a write, zero or trim lands at once unless the model
 * fails it; wait until the model's time; a read takes its bytes when it
 * is answered; end), answered by the return value. */
static int
serve(struct handle *h, enum ff_req_kind kind, void *rbuf, const void *wbuf,
      uint32_t count, uint64_t off)
{
  struct ff_request r = {
    .dev = h->dev, .kind = kind, .off = off, .len = count, .wbuf = wbuf};

  if (ff_server_run(srv, &r, rbuf, wait_nbdkit, NULL) < 0)
    nbdkit_error("%s", ff_errmsg());
  if (!r.error)
    return 0;
  if (r.injected)
    nbdkit_debug(
      "fusefarm: %s %s at %" PRIu64 " length %" PRIu32 ": injected %s",
      ff_req_kind_name(kind), ff_server_dev_name(srv, h->dev), off, count,
      r.error == ENODEV ? "ENODEV (device vanished)" : "EIO");
  /* NBD has no ENODEV: a vanished disk answers EIO. */
  nbdkit_set_error(r.error == ENODEV ? EIO : r.error);
  return -1;
}

static int
ff_pread(void *handle, void *buf, uint32_t count, uint64_t offset,
         uint32_t flags)
{
  (void)flags;
  return serve(handle, FF_REQ_READ, buf, NULL, count, offset);
}

static int
ff_pwrite(void *handle, const void *buf, uint32_t count, uint64_t offset,
          uint32_t flags)
{
  struct handle *h = handle;

  if (serve(h, FF_REQ_WRITE, NULL, buf, count, offset) < 0)
    return -1;
  /* FUA on a device whose profile gives it a write cache: the write is
   * durable once the cache is written back, as a flush does (what
   * NBDKIT_FUA_EMULATE would send).  Without a cache every write is. */
  if ((flags & NBDKIT_FLAG_FUA) &&
      ff_iomodel_write_cache(ff_server_model(srv), h->dev))
    return serve(h, FF_REQ_FLUSH, NULL, NULL, 0, 0);
  return 0;
}

static int
ff_zero(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  (void)flags; /* MAY_TRIM, FAST_ZERO: zeroing is always cheap here */
  return serve(handle, FF_REQ_ZERO, NULL, NULL, count, offset);
}

static int
ff_trim(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  (void)flags;
  return serve(handle, FF_REQ_TRIM, NULL, NULL, count, offset);
}

static int
ff_flush(void *handle, uint32_t flags)
{
  (void)flags;
  return serve(handle, FF_REQ_FLUSH, NULL, NULL, 0, 0);
}

/* Holes and data from the layout and the overlay (ff_farm_extents), so
 * nbdinfo --map, nbdcopy and qemu skip the zeros.  Extents are not I/O:
 * the profile does not delay them. */
static int
ff_extents(void *handle, uint32_t count, uint64_t offset, uint32_t flags,
           struct nbdkit_extents *extents)
{
  const uint32_t hole = NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO;
  struct handle *h = handle;
  uint64_t size = ff_server_dev_size(srv, h->dev), end = offset + count;
  uint64_t pos = offset;
  struct ff_range *r;
  int64_t n;
  int rc = -1;

  n = ff_server_extents(srv, h->dev, &r);
  if (n < 0) {
    nbdkit_error("extents %s: %s", ff_server_dev_name(srv, h->dev),
                 ff_errmsg());
    return -1;
  }
  for (int64_t i = 0; i < n && pos < end; i++) {
    uint64_t s = r[i].off, e = r[i].off + r[i].len;

    if (e > size)
      e = size;
    if (e <= pos)
      continue;
    if (s > pos) {
      if (nbdkit_add_extent(extents, pos, s - pos, hole) < 0)
        goto out;
      pos = s;
      if (flags & NBDKIT_FLAG_REQ_ONE)
        break;
    }
    if (nbdkit_add_extent(extents, pos, e - pos, 0) < 0)
      goto out;
    pos = e;
    if (flags & NBDKIT_FLAG_REQ_ONE)
      break;
  }
  if (pos < end && !(pos > offset && (flags & NBDKIT_FLAG_REQ_ONE)) &&
      nbdkit_add_extent(extents, pos, size - pos, hole) < 0)
    goto out;
  rc = 0;
out:
  free(r);
  return rc;
}

#define CONFIG_HELP                                                           \
  "spec=FILE            farm spec (default: the built-in farm)\n"             \
  "profile=FILE         I/O profile: latency, contention, faults; the\n"      \
  "                     file is watched and a new version applies live\n"     \
  "stats=FILE           write per-export statistics (JSON) there\n"           \
  "stats-interval=SECS  every SECS seconds (default 1; or \"500ms\")\n"       \
  "devices=N            scale the farm to N devices, keeping its\n"           \
  "                     shape, as fusefarm mount --devices N does\n"          \
  "shard=K/M            serve only the devices whose index is K mod M\n"      \
  "overlay=FILE         load a saved write overlay at start\n"                \
  "save-overlay=FILE    save the write overlay there at exit\n"               \
  "overlay-max=SIZE     cap the overlay's written blocks (64M, 2G): a\n"      \
  "                     write past it fails with ENOSPC (stats: overlay)\n"   \
  "trace=FILE           write one line per request there (docs/stats.md)"

static struct nbdkit_plugin plugin = {
  .name = "fusefarm",
  .longname = "fusefarm: synthetic LVM2 PVs, one export per farm device",
  .version = FF_VERSION,
  .description = "Serves every device of a fusefarm farm as an NBD export",
  .unload = ff_unload,
  .config = ff_config,
  .config_complete = ff_config_complete,
  .config_help = CONFIG_HELP,
  .magic_config_key = "spec",
  .get_ready = ff_get_ready,
  .after_fork = ff_after_fork,
  .cleanup = ff_cleanup,
  .dump_plugin = ff_dump_plugin,
  .list_exports = ff_list_exports,
  .default_export = ff_default_export,
  .open = ff_open,
  .close = ff_close,
  .export_description = ff_export_description,
  .get_size = ff_get_size,
  .block_size = ff_block_size,
  .is_rotational = ff_is_rotational,
  .can_write = ff_can_true,
  .can_flush = ff_can_true,
  .can_trim = ff_can_true,
  .can_zero = ff_can_true,
  .can_fast_zero = ff_can_true,
  .can_extents = ff_can_true,
  .can_multi_conn = ff_can_multi_conn,
  .can_fua = ff_can_fua,
  .pread = ff_pread,
  .pwrite = ff_pwrite,
  .zero = ff_zero,
  .trim = ff_trim,
  .flush = ff_flush,
  .extents = ff_extents,
  .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN(plugin)
