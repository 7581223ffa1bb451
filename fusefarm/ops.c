/* fusefarm: FUSE low-level operations serving a farm.
 *
 * The tree:
 *   /                   one regular file per farm device (present ones)
 *   /.fusefarm/         control directory:
 *     devices           "<name> <role> <pvid|->" per present device
 *     manifest.json     the farm manifest (docs/manifest.md)
 *     stats.json        stats snapshot (docs/stats.md); stats: as a table
 *     info.json         daemon facts: pid, spec, profile, threads, in flight
 *     profile           read: current profile; write a path: switch to it
 *     control           write "reset" (stats), "save-overlay PATH" or
 *                       "transport-share DURATION [WHO]"
 *     last-error        why the last control write failed
 *     profile.json      what the current profile gives each device
 *     probe             1 MiB of zeros answered at once, outside the
 *                       model, the stats and the trace: what `fusefarm
 *                       attach` times the transport with (transport-share)
 *
 * THREAD MODEL
 * - libfuse runs the operations in at most d->fuse_threads worker threads
 *   (fuse_session_loop_mt).  No operation ever sleeps: a read or write
 *   whose reply the I/O model puts in the future becomes a struct
 *   pending, handed to the scheduler (ff-sched.h), whose timer thread
 *   replies to it itself when it falls due alone, or moves it to a small
 *   reply pool when several do.  The FUSE worker returns at
 *   once, so a few threads keep thousands of requests in flight (the
 *   kernel's max_background is raised in init to let them through).
 * - Every device request (read, write, fsync, fallocate) runs through the
 *   request engine (ff-server.h): begin at arrival (the model decides;
 *   writes, zeroes and punched holes land now), complete and end when the
 *   reply goes out.  The engine is safe from many threads.  Only the
 *   reply waits, so a later read always sees an acknowledged write.
 * - d->ctl_lock guards the current profile path and last_error: the only
 *   daemon state control files change.  save_lock serialises
 *   "save-overlay PATH" commands inside the engine (a save may take
 *   seconds; nothing else waits for it: reads and writes go on, each
 *   device captured under its own overlay lock).  Profile switches go
 *   through ff_server_set_profile(), safe against concurrent requests.
 * - Control-file snapshots are built at open, owned by the open file
 *   (fi->fh) and freed at release; but manifest.json, which never
 *   changes, is built once (at its first open, under manifest_lock) and
 *   shared by every open until the daemon exits.
 * - Every request gets exactly one reply, in whichever thread finishes it.
 * - A delayed request whose reader is interrupted (a signal: the kernel
 *   sends FUSE_INTERRUPT, for a SIGKILL too) is answered EINTR at once
 *   by the libfuse thread that reads the interrupt (interrupted(), below:
 *   "Interrupts" says who replies when they race).
 */
#include "ff-daemon.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-iomodel.h"
#include "ff-manifest.h"
#include "ff-passthrough.h"
#include "ff-sched.h"
#include "ff-server.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INO_CTLDIR 2
#define INO_CTL0   3
#define INO_DEV0   1000

enum ctl {
  CTL_DEVICES,
  CTL_MANIFEST,
  CTL_STATS_JSON,
  CTL_STATS,
  CTL_INFO,
  CTL_PROFILE,
  CTL_CONTROL,
  CTL_LAST_ERROR,
  CTL_PROFILE_JSON,
  CTL_PROBE,
  CTL_COUNT,
};

static const struct {
  const char *name;
  int writable;
} ctl_files[CTL_COUNT] = {
  [CTL_DEVICES] = {"devices", 0},
  [CTL_MANIFEST] = {"manifest.json", 0},
  [CTL_STATS_JSON] = {"stats.json", 0},
  [CTL_STATS] = {"stats", 0},
  [CTL_INFO] = {"info.json", 0},
  [CTL_PROFILE] = {"profile", 1},
  [CTL_CONTROL] = {"control", 1},
  [CTL_LAST_ERROR] = {"last-error", 0},
  [CTL_PROFILE_JSON] = {"profile.json", 0},
  [CTL_PROBE] = {"probe", 0},
};

/* .fusefarm/probe: its size, and the zeros it reads as (never written:
 * the kernel's zero page backs them). */
#define PROBE_SIZE (1u << 20)
static char probe_zeros[PROBE_SIZE];

/* Attribute and entry timeouts: device files never change size; their
 * st_blocks changes with writes, so attributes are kept one second. */
static const double ATTR_TIMEOUT = 1.0;

static struct ff_daemon *
daemon_of(fuse_req_t req)
{
  return fuse_req_userdata(req);
}

static int
is_dev(const struct ff_daemon *d, fuse_ino_t ino)
{
  return ino >= INO_DEV0 && ino - INO_DEV0 < ff_server_ndevs(d->srv);
}

static int
is_ctl(fuse_ino_t ino)
{
  return ino >= INO_CTL0 && ino < INO_CTL0 + CTL_COUNT;
}

static int
present(struct ff_daemon *d, uint32_t dev)
{
  return ff_server_present(d->srv, dev, ff_now_ns());
}

static void
fill_attr(struct ff_daemon *d, fuse_ino_t ino, struct stat *st)
{
  memset(st, 0, sizeof *st);
  st->st_ino = ino;
  st->st_uid = getuid();
  st->st_gid = getgid();
  st->st_mtime = st->st_ctime = st->st_atime = (time_t)d->mounted_at;
  st->st_blksize = 4096;
  if (ino == FUSE_ROOT_ID || ino == INO_CTLDIR) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = ino == FUSE_ROOT_ID ? 3 : 2;
  } else if (is_ctl(ino)) {
    st->st_mode = S_IFREG | (ctl_files[ino - INO_CTL0].writable ? 0644 : 0444);
    st->st_nlink = 1;
    if (ino == INO_CTL0 + CTL_PROBE)
      st->st_size = PROBE_SIZE;
  } else {
    uint32_t dev = (uint32_t)(ino - INO_DEV0);
    struct ff_range *r;
    int64_t n = ff_server_extents(d->srv, dev, &r);
    uint64_t blocks = 0;

    st->st_mode = S_IFREG | 0644;
    st->st_nlink = 1;
    st->st_size = (off_t)ff_server_dev_size(d->srv, dev);
    for (int64_t i = 0; i < n; i++)
      blocks += r[i].len / 512;
    free(r);
    st->st_blocks = (blkcnt_t)blocks;
  }
}

static void
reply_entry(fuse_req_t req, struct ff_daemon *d, fuse_ino_t ino)
{
  struct fuse_entry_param e;

  memset(&e, 0, sizeof e);
  e.ino = ino;
  e.attr_timeout = ATTR_TIMEOUT;
  e.entry_timeout = ATTR_TIMEOUT;
  fill_attr(d, ino, &e.attr);
  fuse_reply_entry(req, &e);
}

static void
op_init(void *userdata, struct fuse_conn_info *conn)
{
  (void)userdata;
  /* Let thousands of asynchronous requests (loop devices, O_DIRECT aio)
   * through to us: the kernel's default of 12 would cap the in-flight
   * count long before our threads do. */
  conn->max_background = 16384;
  conn->congestion_threshold = 12288;
  if (conn->capable & FUSE_CAP_ASYNC_DIO)
    conn->want |= FUSE_CAP_ASYNC_DIO;
  if (conn->capable & FUSE_CAP_ASYNC_READ)
    conn->want |= FUSE_CAP_ASYNC_READ;
}

static void
op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  struct ff_daemon *d = daemon_of(req);

  if (parent == FUSE_ROOT_ID) {
    int64_t dev;

    if (!strcmp(name, ".fusefarm")) {
      reply_entry(req, d, INO_CTLDIR);
      return;
    }
    dev = ff_server_lookup(d->srv, name);
    if (dev >= 0 && present(d, (uint32_t)dev)) {
      reply_entry(req, d, INO_DEV0 + (fuse_ino_t)dev);
      return;
    }
  } else if (parent == INO_CTLDIR) {
    for (int i = 0; i < CTL_COUNT; i++)
      if (!strcmp(name, ctl_files[i].name)) {
        reply_entry(req, d, INO_CTL0 + (fuse_ino_t)i);
        return;
      }
  }
  fuse_reply_err(req, ENOENT);
}

static void
op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);
  struct stat st;

  (void)fi;
  if (ino != FUSE_ROOT_ID && ino != INO_CTLDIR && !is_ctl(ino) &&
      !is_dev(d, ino)) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fill_attr(d, ino, &st);
  fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void
op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
           struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);
  struct stat st;

  (void)fi;
  if (!is_dev(d, ino) && !is_ctl(ino) && ino != FUSE_ROOT_ID &&
      ino != INO_CTLDIR) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  /* A device's size is the spec's; control files ignore O_TRUNC. */
  if ((to_set & FUSE_SET_ATTR_SIZE) && is_dev(d, ino) &&
      (uint64_t)attr->st_size !=
        ff_server_dev_size(d->srv, (uint32_t)(ino - INO_DEV0))) {
    fuse_reply_err(req, EPERM);
    return;
  }
  fill_attr(d, ino, &st);
  fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

/* readdir offsets: 1 ".", 2 "..", then root: 3 ".fusefarm", 4 + i device
 * i; control dir: 3 + i control file i. */
static void
op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
           struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);
  char *buf;
  size_t used = 0;
  uint64_t total;

  (void)fi;
  if (ino != FUSE_ROOT_ID && ino != INO_CTLDIR) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  buf = malloc(size);
  if (!buf) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  total = ino == FUSE_ROOT_ID ? 3 + (uint64_t)ff_server_ndevs(d->srv)
                              : 2 + CTL_COUNT;
  for (uint64_t o = (uint64_t)off; o < total; o++) {
    struct stat st = {0};
    const char *name;
    size_t n;

    if (o == 0) {
      name = ".";
      st.st_ino = ino;
      st.st_mode = S_IFDIR;
    } else if (o == 1) {
      name = "..";
      st.st_ino = FUSE_ROOT_ID;
      st.st_mode = S_IFDIR;
    } else if (ino == INO_CTLDIR) {
      name = ctl_files[o - 2].name;
      st.st_ino = INO_CTL0 + (o - 2);
      st.st_mode = S_IFREG;
    } else if (o == 2) {
      name = ".fusefarm";
      st.st_ino = INO_CTLDIR;
      st.st_mode = S_IFDIR;
    } else {
      uint32_t dev = (uint32_t)(o - 3);

      if (!present(d, dev))
        continue;
      name = ff_server_dev_name(d->srv, dev);
      st.st_ino = INO_DEV0 + dev;
      st.st_mode = S_IFREG;
    }
    n = fuse_add_direntry(req, buf + used, size - used, name, &st,
                          (off_t)(o + 1));
    if (n > size - used)
      break;
    used += n;
  }
  fuse_reply_buf(req, buf, used);
  free(buf);
}

/* ---- control files ----------------------------------------------------- */

struct ctl_file {
  enum ctl which;
  char *buf;
  size_t len;
  int shared; /* buf is the daemon's (manifest.json): not freed here */
};

void
ff_daemon_set_error(struct ff_daemon *d, const char *msg)
{
  pthread_mutex_lock(&d->ctl_lock);
  snprintf(d->last_error, sizeof d->last_error, "%s", msg);
  pthread_mutex_unlock(&d->ctl_lock);
}

static char *
json_text(json_t *j)
{
  char *s = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
  char *t = NULL;

  json_decref(j);
  if (s && asprintf(&t, "%s\n", s) < 0)
    t = NULL;
  free(s);
  return t;
}

/* info.json's transport_share.mode, by enum ff_share_mode */
static const char *const share_modes[] = {"auto", "off", "fixed"};

/* info.json's cpu_latency: the mode, whether the hold works (error: why
 * not), whether the CPUs are held now, how often and how long. */
static json_t *
cpu_latency_json(struct ff_daemon *d)
{
  struct ff_sched_hold h;
  char buf[128];
  int err;

  ff_sched_hold_stats(d->sched, &h);
  err = d->cpu_latency_errno ? d->cpu_latency_errno : h.err;
  return json_pack("{s:s, s:b, s:b, s:I, s:f, s:s?}", "mode",
                   d->cpu_latency ? "auto" : "off", "on", h.on, "held", h.held,
                   "holds", (json_int_t)h.holds, "held_s",
                   (double)h.held_ns / 1e9, "error",
                   err ? strerror_r(err, buf, sizeof buf)
                       : NULL); /* the GNU one; err is 0 when off */
}

static char *
ctl_snapshot(struct ff_daemon *d, enum ctl which)
{
  struct ff_sb sb = FF_SB_INIT;
  const struct ff_farm *farm = ff_server_farm(d->srv);
  struct ff_iomodel *io = ff_server_model(d->srv);
  uint64_t pending, pmax;

  switch (which) {
  case CTL_DEVICES:
    for (uint32_t i = 0; i < ff_farm_ndevs(farm); i++) {
      enum ff_role role = ff_farm_dev_role(farm, i);

      if (!present(d, i))
        continue;
      ff_sb_addf(&sb, "%s %s ", ff_farm_dev_name(farm, i), ff_role_name(role));
      if (role == FF_ROLE_PV || role == FF_ROLE_ORPHAN ||
          role == FF_ROLE_DUPLICATE)
        ff_sb_addn(&sb, ff_farm_dev_uuid(farm, i), FF_UUID_LEN);
      else
        ff_sb_add(&sb, "-");
      ff_sb_add(&sb, "\n");
    }
    return ff_sb_detach(&sb, NULL);
  case CTL_MANIFEST: /* shared_manifest(), not a snapshot of its own */
    return ff_sb_detach(&sb, NULL);
  case CTL_STATS_JSON:
    return ff_server_stats_json(d->srv, 0, 1, NULL, NULL);
  case CTL_STATS:
    return ff_server_stats_table(d->srv);
  case CTL_INFO:
    ff_sched_counts(d->sched, &pending, &pmax);
    pthread_mutex_lock(&d->ctl_lock);
    {
      unsigned builds;
      json_t *j;

      pthread_mutex_lock(&d->manifest_lock);
      builds = d->manifest_builds;
      pthread_mutex_unlock(&d->manifest_lock);
      j = json_pack(
        "{s:s, s:i, s:I, s:s, s:s, s:s?, s:s, s:I, s:i, s:i, s:I, s:I, s:i, "
        "s:{s:b, s:b, s:I}}",
        "format", "fusefarm-info", "version", 1, "pid", (json_int_t)getpid(),
        "spec", d->spec, "mountpoint", d->mountpoint, "profile", d->profile,
        "profile_name", ff_server_profile_name(d->srv), "devices",
        (json_int_t)ff_farm_ndevs(farm), "fuse_threads", (int)d->fuse_threads,
        "sched_threads", (int)ff_sched_threads(d->sched), "delayed_pending",
        (json_int_t)pending, "delayed_max", (json_int_t)pmax,
        "manifest_builds", (int)builds, "passthrough", "asked", d->pt != NULL,
        "kernel", d->pt && ff_pt_enabled(d->pt), "devices",
        (json_int_t)(d->pt ? ff_pt_count(d->pt) : 0));

      json_object_set_new(j, "cpu_latency", cpu_latency_json(d));
      json_object_set_new(
        j, "transport_share",
        json_pack("{s:s, s:I, s:s?}", "mode", share_modes[d->share_mode], "ns",
                  (json_int_t)ff_server_transport_share(d->srv), "by",
                  d->share_by[0] ? d->share_by : NULL));
      pthread_mutex_unlock(&d->ctl_lock);
      return json_text(j);
    }
  case CTL_PROFILE:
    pthread_mutex_lock(&d->ctl_lock);
    ff_sb_addf(&sb, "%s %s\n", ff_server_profile_name(d->srv),
               d->profile ? d->profile : "(ideal)");
    pthread_mutex_unlock(&d->ctl_lock);
    return ff_sb_detach(&sb, NULL);
  case CTL_PROFILE_JSON: {
    json_t *devs = json_array();
    uint64_t now = ff_now_ns();
    unsigned char *slow = calloc(ff_farm_ndevs(farm) + 1, 1);

    if (!slow) {
      json_decref(devs);
      return NULL;
    }
    ff_iomodel_slow_devices(io, slow);
    for (uint32_t i = 0; i < ff_farm_ndevs(farm) && devs; i++)
      json_array_append_new(
        devs,
        json_pack(
          "{s:s, s:b, s:b, s:I, s:I, s:I, s:b}", "name",
          ff_farm_dev_name(farm, i), "present", ff_iomodel_present(io, i, now),
          "direct_io", ff_iomodel_direct_io(io, i), "read_p50_ns",
          (json_int_t)ff_iomodel_latency_quantile(io, i, FF_OP_READ, 0.5),
          "read_p99_ns",
          (json_int_t)ff_iomodel_latency_quantile(io, i, FF_OP_READ, 0.99),
          "write_p50_ns",
          (json_int_t)ff_iomodel_latency_quantile(io, i, FF_OP_WRITE, 0.5),
          "slow", slow[i]));
    free(slow);
    return json_text(json_pack("{s:s, s:s, s:b, s:o}", "format",
                               "fusefarm-profile", "name",
                               ff_iomodel_profile_name(io), "rotational",
                               ff_iomodel_rotational(io), "devices", devs));
  }
  case CTL_LAST_ERROR:
    pthread_mutex_lock(&d->ctl_lock);
    if (d->last_error[0])
      ff_sb_addf(&sb, "%s\n", d->last_error);
    pthread_mutex_unlock(&d->ctl_lock);
    return ff_sb_detach(&sb, NULL);
  default:
    return ff_sb_detach(&sb, NULL);
  }
}

/* manifest.json's text: built at the first open, then the same buffer for
 * every reader until the daemon exits.  Building a 100,000-device
 * manifest takes hundreds of MB of JSON objects on the way; the pages
 * they took go back to the system at once (malloc_trim), so eight readers
 * cost one build and one text, not eight. */
static const char *
shared_manifest(struct ff_daemon *d, size_t *len)
{
  const char *t;

  pthread_mutex_lock(&d->manifest_lock);
  if (!d->manifest) {
    char *m = ff_manifest_text(ff_server_farm(d->srv), FF_MANIFEST_INDENTED);

    if (m && asprintf(&d->manifest, "%s\n", m) < 0)
      d->manifest = NULL;
    free(m);
    malloc_trim(0);
    if (d->manifest) {
      d->manifest_len = strlen(d->manifest);
      d->manifest_builds++;
    }
  }
  t = d->manifest;
  *len = d->manifest_len;
  pthread_mutex_unlock(&d->manifest_lock);
  return t;
}

static void
op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);

  if (is_dev(d, ino)) {
    uint32_t dev = (uint32_t)(ino - INO_DEV0);

    if (!present(d, dev)) {
      fuse_reply_err(req, ENOENT);
      return;
    }
    /* --passthrough: a device with nothing to model is the kernel's to
     * serve from its backing file, and stays so (ff-passthrough.h) */
    if (d->pt && (ff_pt_has(d->pt, dev) ||
                  ff_iomodel_untimed(ff_server_model(d->srv), dev))) {
      int id = ff_pt_backing(d->pt, ff_server_farm(d->srv), dev,
                             fuse_session_fd(d->se));

      fi->fh = 0;
      if (id >= 0) {
        ff_pt_reply_open(req, fi, id);
        return;
      }
      if (id != FF_PT_NOT)
        fprintf(stderr, "fusefarm: --passthrough: %s: %s; served as usual\n",
                ff_farm_dev_name(ff_server_farm(d->srv), dev), ff_errmsg());
    }
    /* direct_io: every read reaches us, so latency applies to warm scans
     * too; without it the page cache answers repeats (docs/fuse.md). */
    fi->direct_io = ff_iomodel_direct_io(ff_server_model(d->srv), dev) ? 1 : 0;
    fi->keep_cache = !fi->direct_io;
    fi->fh = 0;
    fuse_reply_open(req, fi);
    return;
  }
  if (is_ctl(ino)) {
    enum ctl which = (enum ctl)(ino - INO_CTL0);
    struct ctl_file *cf;

    if ((fi->flags & O_ACCMODE) != O_RDONLY && !ctl_files[which].writable) {
      fuse_reply_err(req, EACCES);
      return;
    }
    cf = calloc(1, sizeof *cf);
    if (!cf) {
      fuse_reply_err(req, ENOMEM);
      return;
    }
    cf->which = which;
    if (which == CTL_PROBE) {
      /* like a device's open (direct_io): every read reaches us */
    } else if ((fi->flags & O_ACCMODE) == O_RDONLY) {
      if (which == CTL_MANIFEST) {
        cf->buf = (char *)shared_manifest(d, &cf->len);
        cf->shared = 1;
      } else {
        cf->buf = ctl_snapshot(d, which);
        cf->len = cf->buf ? strlen(cf->buf) : 0;
      }
      if (!cf->buf) {
        free(cf);
        fuse_reply_err(req, ENOMEM);
        return;
      }
    }
    fi->fh = (uint64_t)(uintptr_t)cf;
    fi->direct_io = 1;
    fuse_reply_open(req, fi);
    return;
  }
  fuse_reply_err(req,
                 ino == FUSE_ROOT_ID || ino == INO_CTLDIR ? EISDIR : ENOENT);
}

static void
op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  if (is_ctl(ino)) {
    struct ctl_file *cf = (struct ctl_file *)(uintptr_t)fi->fh;

    if (cf && !cf->shared)
      free(cf->buf);
    free(cf);
  }
  fuse_reply_err(req, 0);
}

/* One write to a control file is one command.  On failure *err is the
 * errno for the writer: EINVAL for a bad command, the save's own errno
 * (EACCES, EROFS, ENOSPC, ...) when saving the overlay failed. */
static int
ctl_command(struct ff_daemon *d, enum ctl which, const char *cmd, int *err)
{
  int r;

  *err = EINVAL;
  if (which == CTL_PROFILE) {
    char *copy = strdup(cmd);

    if (!copy)
      return ff_error("out of memory");
    if (ff_server_set_profile(d->srv, cmd, ff_now_ns()) < 0) {
      free(copy);
      return -1;
    }
    pthread_mutex_lock(&d->ctl_lock);
    free(d->profile);
    d->profile = copy;
    pthread_mutex_unlock(&d->ctl_lock);
    return 0;
  }
  if (!strcmp(cmd, "reset")) {
    return ff_server_stats_reset(d->srv);
  }
  if (!strncmp(cmd, "transport-share ", 16)) {
    const char *arg = cmd + 16, *by = strchr(arg, ' ');
    size_t n = by ? (size_t)(by - arg) : strlen(arg);
    char dur[64];
    uint64_t ns;

    /* a word longer than dur is no valid duration: refuse it whole
     * rather than parse a cut copy */
    snprintf(dur, sizeof dur, "%.*s", (int)(n < sizeof dur ? n : 0), arg);
    if (n >= sizeof dur || ff_parse_duration(dur, &ns) < 0 ||
        ns > SHARE_MAX_NS)
      return ff_error("transport-share '%.*s': expected a duration of at "
                      "most 1s, such as 36us or 0us",
                      (int)(n < 200 ? n : 200), arg);
    ff_server_set_transport_share(d->srv, ns);
    pthread_mutex_lock(&d->ctl_lock);
    snprintf(d->share_by, sizeof d->share_by, "%s",
             by && by[1] ? by + 1 : "the control file");
    pthread_mutex_unlock(&d->ctl_lock);
    return 0;
  }
  if (!strncmp(cmd, "save-overlay ", 13)) {
    const char *path = cmd + 13;

    /* The daemon's working directory is / once in the background. */
    if (path[0] != '/')
      return ff_error("save-overlay %s: expected an absolute path", path);
    /* A failed save changes nothing: the overlay stays in memory, the
     * previous file at path stays as it was; a save elsewhere works.
     * The passthrough devices' writes are in their backing files. */
    r = ff_pt_sync(d->pt, ff_server_farm(d->srv));
    if (r == 0)
      r = ff_server_save_overlay(d->srv, path);
    if (r < 0)
      *err = errno ? errno : EIO;
    return r;
  }
  return ff_error("unknown control command '%s' (expected reset, "
                  "save-overlay PATH or transport-share DURATION)",
                  cmd);
}

static void
ctl_write(fuse_req_t req, struct ff_daemon *d, struct ctl_file *cf,
          const char *buf, size_t size)
{
  char *cmd;
  size_t n;
  int err;

  /* A command is text: "save-overlay /p/z\0junk" must not save to /p/z. */
  if (memchr(buf, '\0', size)) {
    ff_error("the command holds a NUL byte (at offset %zu of %zu): refused",
             (size_t)((const char *)memchr(buf, '\0', size) - buf), size);
    ff_daemon_set_error(d, ff_errmsg());
    fprintf(stderr, "fusefarm: .fusefarm/%s: %s\n", ctl_files[cf->which].name,
            ff_errmsg());
    fuse_reply_err(req, EINVAL);
    return;
  }
  cmd = strndup(buf, size);
  if (!cmd) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  n = strlen(cmd);
  while (n && (cmd[n - 1] == '\n' || cmd[n - 1] == ' '))
    cmd[--n] = '\0';
  if (ctl_command(d, cf->which, cmd, &err) < 0) {
    ff_daemon_set_error(d, ff_errmsg());
    fprintf(stderr, "fusefarm: .fusefarm/%s: %s\n", ctl_files[cf->which].name,
            ff_errmsg());
    fuse_reply_err(req, err);
  } else {
    ff_daemon_set_error(d, "");
    fuse_reply_write(req, size);
  }
  free(cmd);
}

/* ---- device I/O ----------------------------------------------------------
 */

struct pending {
  struct ff_sched_item item; /* first: the scheduler hands us this */
  struct ff_daemon *d;
  fuse_req_t req;
  struct ff_request r;
};

/* Interrupts.  A delayed request has three parties that may touch it: the
 * FUSE worker that submits it, the scheduler's worker that finishes it
 * when due (finish_item) and the libfuse thread that reads a
 * FUSE_INTERRUPT for it (interrupted).  The scheduler decides who replies:
 * the timer thread taking the item when due and ff_sched_cancel both act
 * under the heap mutex, so exactly one of them gets a waiting item.
 *
 * - interrupted() runs with libfuse's lock on the request held.  Its
 *   cancel returns 1 only for an item still waiting: then it replies
 *   EINTR and frees the item; nobody else ever sees it again.  Otherwise
 *   it does nothing: finish_item replies, or submit (not added yet: the
 *   cancel marks the item, and ff_sched_add refuses it).
 * - submit registers the callback before ff_sched_add and never touches
 *   the item after a successful add.  The callback may run inside the
 *   registration when the interrupt came first (libfuse calls it there
 *   for a request already interrupted), and then the add refuses.
 * - finish_item, before it replies and frees the item, unregisters the
 *   callback: fuse_req_interrupt_func takes the request's lock, so a
 *   callback still running with this item has returned, and none starts
 *   later.  Until finish_item's reply the request is alive, since
 *   interrupted() replied only to items it took out of the heap.
 *
 * The model's decision stands: the request held its queue and contention
 * slots until its done time whatever the reader did; only the reply
 * comes early, counted in the stats as interrupted. */

/* The answer to the kernel, made by the engine between complete and end
 * (ff_server_finish): exactly one reply. */
static void
reply_fuse(const struct ff_request *r, const void *buf, void *arg)
{
  fuse_req_t req = arg;

  if (r->error)
    fuse_reply_err(req, r->error);
  else if (r->kind == FF_REQ_READ)
    fuse_reply_buf(req, buf, r->len);
  else if (r->kind == FF_REQ_WRITE)
    fuse_reply_write(req, r->len);
  else
    fuse_reply_err(req, 0);
}

/* Complete and end the request, and answer it. */
static void
finish(struct pending *p)
{
  if (ff_server_finish(p->d->srv, &p->r, NULL, reply_fuse, p->req) < 0)
    fprintf(stderr, "fusefarm: %s\n", ff_errmsg());
}

/* The reader went away: answer EINTR now, not at done_ns. */
static void
finish_interrupted(struct pending *p)
{
  p->r.error = EINTR;
  p->r.injected = 0;
  p->r.interrupted = 1;
  finish(p);
}

static void
finish_item(struct ff_sched_item *it)
{
  struct pending *p = (struct pending *)it;

  fuse_req_interrupt_func(p->req, NULL, NULL); /* see "Interrupts" */
  finish(p);
  free(p);
}

static void
interrupted(fuse_req_t req, void *data)
{
  struct pending *p = data;

  (void)req;
  if (ff_sched_cancel(p->d->sched, &p->item) != 1)
    return; /* not waiting: finish_item or submit replies */
  finish_interrupted(p);
  free(p);
}

/* A request arrives: begin it in the engine (the model decides; a write,
 * zero or punched hole lands now), then answer now or hand it to the
 * scheduler for its done time. */
static void
submit(fuse_req_t req, enum ff_req_kind kind, uint32_t dev, uint64_t off,
       uint64_t len, const void *wbuf)
{
  struct ff_daemon *d = daemon_of(req);
  struct pending *p, local;
  int rc;
  struct ff_request r = {
    .dev = dev, .kind = kind, .off = off, .len = len, .wbuf = wbuf};
  uint64_t now = ff_now_ns();

  if (ff_server_begin(d->srv, &r, now) < 0)
    fprintf(stderr, "fusefarm: %s\n", ff_errmsg());
  r.wbuf = NULL; /* the kernel's buffer is gone once we return */
  p = r.done_ns > now ? malloc(sizeof *p) : NULL;
  if (!p)
    p = &local;
  *p = (struct pending){
    .item = {.due_ns = r.done_ns, .fn = finish_item},
    .d = d,
    .req = req,
    .r = r,
  };
  if (p == &local) {
    finish(p);
    return;
  }
  fuse_req_interrupt_func(req, interrupted, p);
  rc = ff_sched_add(d->sched, &p->item);
  if (rc == 0)
    return; /* p is the scheduler's, or interrupted()'s, now */
  fuse_req_interrupt_func(req, NULL, NULL);
  if (rc > 0)
    finish_interrupted(p); /* interrupted before it was queued */
  else
    finish(p); /* the heap cannot grow: answer now rather than never */
  free(p);
}

static void
op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
        struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);
  struct ctl_file *cf;
  uint64_t devsize;

  if (is_ctl(ino)) {
    size_t n;
    char *copy;

    cf = (struct ctl_file *)(uintptr_t)fi->fh;
    if (cf->which == CTL_PROBE) {
      n = (uint64_t)off >= PROBE_SIZE       ? 0
          : PROBE_SIZE - (size_t)off < size ? PROBE_SIZE - (size_t)off
                                            : size;
      fuse_reply_buf(req, probe_zeros, n);
      return;
    }
    if (!cf->buf || (uint64_t)off >= cf->len) {
      fuse_reply_buf(req, NULL, 0);
      return;
    }
    n = cf->len - (size_t)off < size ? cf->len - (size_t)off : size;
    /* Reply from a copy: once the reply is written the reader may close
     * the file, and its release (another thread) frees cf->buf while
     * fuse_reply_buf is still returning; ASan's writev check then reads
     * freed memory and aborts the daemon. */
    copy = malloc(n);
    if (!copy) {
      fuse_reply_err(req, ENOMEM);
      return;
    }
    memcpy(copy, cf->buf + off, n);
    fuse_reply_buf(req, copy, n);
    free(copy);
    return;
  }
  if (!is_dev(d, ino)) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  /* A read past the end is short, never garbage. */
  devsize = ff_server_dev_size(d->srv, (uint32_t)(ino - INO_DEV0));
  if ((uint64_t)off >= devsize) {
    fuse_reply_buf(req, NULL, 0);
    return;
  }
  if (size > devsize - (uint64_t)off)
    size = devsize - (uint64_t)off;
  submit(req, FF_REQ_READ, (uint32_t)(ino - INO_DEV0), (uint64_t)off, size,
         NULL);
}

static void
op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
         off_t off, struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);
  uint32_t dev;

  if (is_ctl(ino)) {
    ctl_write(req, d, (struct ctl_file *)(uintptr_t)fi->fh, buf, size);
    return;
  }
  if (!is_dev(d, ino)) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  dev = (uint32_t)(ino - INO_DEV0);
  if ((uint64_t)off > ff_server_dev_size(d->srv, dev) ||
      size > ff_server_dev_size(d->srv, dev) - (uint64_t)off) {
    fuse_reply_err(req, ENOSPC);
    return;
  }
  /* The model decides first: a write it fails does not land.  One that
   * succeeds lands now; only its reply waits. */
  submit(req, FF_REQ_WRITE, dev, (uint64_t)off, size, buf);
}

static void
op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)ino;
  (void)fi;
  fuse_reply_err(req, 0); /* close(2), not a device flush */
}

static void
op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
         struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);

  (void)datasync;
  (void)fi;
  if (!is_dev(d, ino)) {
    fuse_reply_err(req, 0);
    return;
  }
  submit(req, FF_REQ_FLUSH, (uint32_t)(ino - INO_DEV0), 0, 0, NULL);
}

static void
op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
         struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);
  uint32_t dev;
  uint64_t size, o = (uint64_t)off;
  struct ff_range *r = NULL;
  int64_t n;

  (void)fi;
  if (!is_dev(d, ino) || (whence != SEEK_DATA && whence != SEEK_HOLE)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  dev = (uint32_t)(ino - INO_DEV0);
  size = ff_server_dev_size(d->srv, dev);
  if (off < 0 || o >= size) {
    fuse_reply_err(req, ENXIO);
    return;
  }
  n = ff_server_extents(d->srv, dev, &r);
  if (n < 0) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    if (r[i].off + r[i].len <= o)
      continue;
    /* The first extent that ends after o. */
    if (whence == SEEK_DATA)
      o = r[i].off > o ? r[i].off : o;
    else if (r[i].off <= o)
      o = r[i].off + r[i].len;
    free(r);
    fuse_reply_lseek(req, (off_t)o);
    return;
  }
  free(r);
  if (whence == SEEK_DATA)
    fuse_reply_err(req, ENXIO);
  else
    fuse_reply_lseek(req, off); /* in the final hole */
}

static void
op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t length,
             struct fuse_file_info *fi)
{
  struct ff_daemon *d = daemon_of(req);
  uint32_t dev;

  (void)fi;
  if (!is_dev(d, ino)) {
    fuse_reply_err(req, EOPNOTSUPP);
    return;
  }
  dev = (uint32_t)(ino - INO_DEV0);
  if (off < 0 || length < 0 ||
      (uint64_t)off + (uint64_t)length > ff_server_dev_size(d->srv, dev)) {
    fuse_reply_err(req, mode & FALLOC_FL_KEEP_SIZE ? EINVAL : EFBIG);
    return;
  }
  if (mode == 0) { /* allocate: every byte already exists */
    fuse_reply_err(req, 0);
    return;
  }
  if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))) {
    fuse_reply_err(req, EOPNOTSUPP);
    return;
  }
  /* A passthrough device's bytes are in its backing file (FUSE does not
   * pass fallocate through): the range goes there too. */
  if (d->pt && ff_pt_punch(d->pt, dev, (uint64_t)off, (uint64_t)length) < 0) {
    fprintf(stderr, "fusefarm: --passthrough: %s\n", ff_errmsg());
    fuse_reply_err(req, EIO);
    return;
  }
  /* A loop discard (punch hole) is a trim, a zero range a zero: both go
   * through the model and the stats like NBD's, and land at once; only
   * ranges that can hold data are zeroed (ff_farm_zero_sparse). */
  submit(req, mode & FALLOC_FL_PUNCH_HOLE ? FF_REQ_TRIM : FF_REQ_ZERO, dev,
         (uint64_t)off, (uint64_t)length, NULL);
}

static void
op_statfs(fuse_req_t req, fuse_ino_t ino)
{
  struct ff_daemon *d = daemon_of(req);
  struct statvfs sv = {0};
  uint64_t total = 0;

  (void)ino;
  for (uint32_t i = 0; i < ff_server_ndevs(d->srv); i++)
    total += ff_server_dev_size(d->srv, i);
  sv.f_bsize = sv.f_frsize = 4096;
  sv.f_blocks = total / 4096;
  sv.f_files = ff_server_ndevs(d->srv) + 2 + CTL_COUNT;
  sv.f_namemax = 255;
  fuse_reply_statfs(req, &sv);
}

const struct fuse_lowlevel_ops ff_daemon_ops = {
  .init = op_init,
  .lookup = op_lookup,
  .getattr = op_getattr,
  .setattr = op_setattr,
  .readdir = op_readdir,
  .open = op_open,
  .release = op_release,
  .read = op_read,
  .write = op_write,
  .flush = op_flush,
  .fsync = op_fsync,
  .lseek = op_lseek,
  .fallocate = op_fallocate,
  .statfs = op_statfs,
};
