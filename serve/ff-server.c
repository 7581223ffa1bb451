/* fusefarm: the request engine (ff-server.h).
 *
 * Thread model: after ff_server_start nothing in struct ff_server changes
 * but through objects with their own locking (model, overlay, stats) and
 * the atomic request counter; save_lock serialises overlay saves (two at
 * once to the same path would share its PATH.tmp); trace_lock guards the
 * trace's fd and counters (one write(2) per line under it, so lines never
 * interleave).
 */
#include "ff-server.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-file.h"
#include "ff-iomodel.h"
#include "ff-overlay.h"
#include "ff-sched.h"
#include "ff-spec.h"
#include "ff-stats.h"
#include "ff-stats-int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

struct ff_server {
  struct ff_farm *farm;
  struct ff_profile *first; /* until ff_server_start hands it to the model */
  struct ff_iomodel *io;
  struct ff_stats *stats; /* NULL: not kept */
  const char **names;     /* names[i]: device i's name */
  char *save_overlay;
  pthread_mutex_t save_lock;
  _Atomic uint64_t seq;      /* the next request's sequence number */
  _Atomic uint64_t share_ns; /* the transport share (ff-server.h) */
  /* The request trace (ff-server.h); trace_fd -1: none, or stopped. */
  int tracing; /* options.trace was set (never changes after new) */
  pthread_mutex_t trace_lock;
  int trace_fd;
  char *trace_path;
  uint64_t trace_size; /* bytes of whole lines written */
  int trace_errno;     /* why a write failed; 0: none did */
  uint64_t trace_lost; /* requests not traced since */
};

#define TRACE_HEADER                                                          \
  "# fusefarm trace v1: seq dev name kind off len arrival_ns done_ns end_ns " \
  "error injected model_ns\n"

static void
set_fault(enum ff_server_fault *fault, enum ff_server_fault f)
{
  if (fault)
    *fault = f;
}

static struct ff_farm *
load_farm(const char *path, uint64_t devices, int lazy,
          enum ff_server_fault *fault)
{
  struct ff_spec *sp;
  struct ff_farm *farm;

  set_fault(fault, FF_SERVER_OK);
  sp = path ? ff_spec_load_file(path)
            : ff_spec_load_string(ff_spec_builtin_default, "<built-in>");
  if (!sp) {
    set_fault(fault, FF_SERVER_BAD_SPEC);
    return NULL;
  }
  if (devices && ff_spec_scale(sp, devices) < 0) {
    ff_spec_free(sp);
    set_fault(fault, FF_SERVER_BAD_DEVICES);
    return NULL;
  }
  /* a server holds its farm for hours: its texts packed, 5-6x smaller;
   * or no VG kept at all (the farm takes sp) */
  if (lazy) {
    farm = ff_farm_new_lazy(sp);
  } else {
    farm = ff_farm_new_packed(sp);
    ff_spec_free(sp);
  }
  if (!farm)
    set_fault(fault, FF_SERVER_BAD_FARM);
  return farm;
}

struct ff_farm *
ff_server_load_farm(const char *path, uint64_t devices,
                    enum ff_server_fault *fault)
{
  return load_farm(path, devices, 0, fault);
}

/* write(2) all of buf: 0, or -1 with errno (a short write is retried, so
 * the real reason, ENOSPC or EFBIG, comes out). */
static int
write_all(int fd, const char *buf, size_t n)
{
  while (n) {
    ssize_t w = write(fd, buf, n);

    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return w < 0 ? -1 : (errno = EIO, -1);
    buf += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Create (truncate) the trace file and write its header. */
static int
trace_open(struct ff_server *s, const char *path)
{
  size_t n = sizeof TRACE_HEADER - 1;

  s->trace_fd = ff_open_write(path, O_TRUNC | O_APPEND);
  if (s->trace_fd < 0)
    return -1;
  if (write_all(s->trace_fd, TRACE_HEADER, n) < 0) {
    ff_error("%s: write: %m", path);
    close(s->trace_fd);
    s->trace_fd = -1;
    return -1;
  }
  s->tracing = 1;
  s->trace_size = n;
  s->trace_path = strdup(path);
  if (!s->trace_path)
    return ff_error("out of memory");
  return 0;
}

/* One line for r, which ended at end_ns.  A failed write stops the trace
 * (a file with a hole in it would mislead its reader): the file is cut
 * back to its whole lines, and this line and every later one are counted
 * as lost. */
static void
trace_line(struct ff_server *s, const struct ff_request *r, uint64_t end_ns)
{
  char line[512];
  int n;

  n = snprintf(
    line, sizeof line, "%llu %u %s %s %llu %llu %llu %llu %llu %d %d %llu\n",
    (unsigned long long)r->seq, r->dev,
    r->dev < ff_farm_ndevs(s->farm) ? s->names[r->dev] : "-",
    ff_req_kind_name(r->kind), (unsigned long long)r->off,
    (unsigned long long)r->len, (unsigned long long)r->arrival_ns,
    (unsigned long long)r->done_ns, (unsigned long long)end_ns, r->error,
    r->error ? r->injected : 0, (unsigned long long)r->model_ns);
  if (n < 0 || (size_t)n >= sizeof line) { /* names are < 128 bytes */
    n = 0;
    errno = EOVERFLOW;
  }
  pthread_mutex_lock(&s->trace_lock);
  if (s->trace_fd < 0) {
    s->trace_lost++;
  } else if (!n || write_all(s->trace_fd, line, (size_t)n) < 0) {
    s->trace_errno = errno;
    s->trace_lost++;
    (void)!ftruncate(s->trace_fd, (off_t)s->trace_size);
    close(s->trace_fd);
    s->trace_fd = -1;
  } else {
    s->trace_size += (uint64_t)n;
  }
  pthread_mutex_unlock(&s->trace_lock);
}

int
ff_server_trace_check(struct ff_server *s)
{
  int e;
  uint64_t lost;

  pthread_mutex_lock(&s->trace_lock);
  e = s->trace_errno;
  lost = s->trace_lost;
  pthread_mutex_unlock(&s->trace_lock);
  if (!e)
    return 0;
  errno = e;
  return ff_error("%s: write: %m (%llu requests not traced)", s->trace_path,
                  (unsigned long long)lost);
}

struct ff_server *
ff_server_new(const struct ff_server_options *o, enum ff_server_fault *fault)
{
  struct ff_server *s;
  enum ff_server_fault f = FF_SERVER_NO_MEMORY;
  uint32_t n;

  set_fault(fault, FF_SERVER_OK);
  s = calloc(1, sizeof *s);
  if (!s) {
    set_fault(fault, f);
    ff_error("out of memory");
    return NULL;
  }
  pthread_mutex_init(&s->save_lock, NULL);
  pthread_mutex_init(&s->trace_lock, NULL);
  s->trace_fd = -1;
  /* An overlay that cannot be saved is refused before anything else is
   * loaded, not found at exit with the writes in memory only. */
  if (o->save_overlay) {
    if (ff_overlay_save_check(o->save_overlay) < 0) {
      f = FF_SERVER_BAD_SAVE_OVERLAY;
      goto fail;
    }
    s->save_overlay = strdup(o->save_overlay);
    if (!s->save_overlay) {
      ff_error("out of memory");
      goto fail;
    }
  }
  if (o->trace && trace_open(s, o->trace) < 0) {
    f = FF_SERVER_BAD_TRACE;
    goto fail;
  }
  s->farm = load_farm(o->spec, o->devices, o->lazy, &f);
  if (!s->farm)
    goto fail;
  n = ff_farm_ndevs(s->farm);
  s->first = o->profile ? ff_profile_load_file(o->profile, s->farm)
                        : ff_profile_ideal(s->farm);
  if (!s->first) {
    f = FF_SERVER_BAD_PROFILE;
    goto fail;
  }
  ff_overlay_set_max(ff_farm_overlay(s->farm), o->overlay_max);
  /* The fingerprint is the scaled farm's: an overlay saved with another
   * device count is refused. */
  if (o->overlay && ff_farm_load_overlay(s->farm, o->overlay) < 0) {
    f = FF_SERVER_BAD_OVERLAY;
    goto fail;
  }
  f = FF_SERVER_NO_MEMORY;
  s->names = calloc(n ? n : 1, sizeof *s->names);
  if (!s->names) {
    ff_error("out of memory for %u devices", n);
    goto fail;
  }
  for (uint32_t i = 0; i < n; i++)
    s->names[i] = ff_farm_dev_name(s->farm, i);
  if (o->stats && !(s->stats = ff_stats_new(n)))
    goto fail;
  return s;
fail:
  set_fault(fault, f);
  ff_server_free(s);
  return NULL;
}

int
ff_server_start(struct ff_server *s, uint64_t now_ns)
{
  if (s->io)
    return ff_error("the server is already started");
  /* The model owns the profile from here on, even on failure. */
  s->io = ff_iomodel_new(s->farm, s->first, now_ns);
  s->first = NULL;
  return s->io ? 0 : -1;
}

void
ff_server_free(struct ff_server *s)
{
  if (!s)
    return;
  ff_iomodel_free(s->io);
  ff_profile_free(s->first);
  ff_stats_free(s->stats);
  free(s->names);
  ff_farm_free(s->farm);
  free(s->save_overlay);
  pthread_mutex_destroy(&s->save_lock);
  if (s->trace_fd >= 0)
    close(s->trace_fd);
  free(s->trace_path);
  pthread_mutex_destroy(&s->trace_lock);
  free(s);
}

/* ---- requests ------------------------------------------------------------
 */

const char *
ff_req_kind_name(enum ff_req_kind k)
{
  static const char *const names[] = {
    [FF_REQ_READ] = "read", [FF_REQ_WRITE] = "write", [FF_REQ_ZERO] = "zero",
    [FF_REQ_TRIM] = "trim", [FF_REQ_FLUSH] = "flush",
  };

  return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

static enum ff_op
model_op(enum ff_req_kind k)
{
  return k == FF_REQ_READ    ? FF_OP_READ
         : k == FF_REQ_FLUSH ? FF_OP_FLUSH
                             : FF_OP_WRITE;
}

int
ff_server_begin(struct ff_server *s, struct ff_request *r, uint64_t now_ns)
{
  struct ff_io_decision dec;
  uint32_t n = ff_farm_ndevs(s->farm);
  uint64_t model_len;
  int rc = 0;

  r->seq = atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed);
  r->arrival_ns = r->model_ns = r->done_ns = now_ns;
  r->error = r->injected = r->interrupted = 0;
  if (s->stats)
    ff_stats_inflight_add(s->stats, 1);
  if (!s->io) {
    r->error = EINVAL;
    return ff_error("%s: the server is not started (ff_server_start)",
                    ff_req_kind_name(r->kind));
  }
  if (r->dev >= n || (r->kind != FF_REQ_FLUSH &&
                      (r->off > ff_farm_dev_size(s->farm, r->dev) ||
                       r->len > ff_farm_dev_size(s->farm, r->dev) - r->off))) {
    r->error = EINVAL;
    if (r->dev >= n)
      return ff_error("%s on device %u: the farm has %u devices",
                      ff_req_kind_name(r->kind), r->dev, n);
    return ff_error("%s %s at %llu length %llu: past the end of the device",
                    ff_req_kind_name(r->kind), s->names[r->dev],
                    (unsigned long long)r->off, (unsigned long long)r->len);
  }
  /* A trim and a flush transfer nothing: the model sees length 0. */
  model_len = r->kind == FF_REQ_TRIM || r->kind == FF_REQ_FLUSH ? 0 : r->len;
  ff_iomodel_submit(s->io, r->dev, model_op(r->kind), r->off, model_len,
                    now_ns, &dec);
  r->model_ns = r->done_ns = dec.done_ns;
  {
    uint64_t share = atomic_load_explicit(&s->share_ns, memory_order_relaxed);

    /* answered sooner by the path's own time, never before arrival */
    r->done_ns -= share < dec.done_ns - now_ns ? share : dec.done_ns - now_ns;
  }
  r->error = dec.error;
  r->injected = dec.error ? dec.injected : 0;
  if (r->error)
    return 0; /* the model failed it: a failed write does not land */
  /* Land now; only the reply waits. */
  if (r->kind == FF_REQ_WRITE)
    rc = ff_farm_write(s->farm, r->dev, r->wbuf, r->off, r->len);
  else if (r->kind == FF_REQ_ZERO || r->kind == FF_REQ_TRIM)
    rc = ff_farm_zero_sparse(s->farm, r->dev, r->off, r->len);
  if (rc < 0) {
    /* The overlay's cap (overlay-max) is the writer's "disk full". */
    r->error = errno == ENOSPC ? ENOSPC : EIO;
    ff_error_prefix("%s %s at %llu: ", ff_req_kind_name(r->kind),
                    s->names[r->dev], (unsigned long long)r->off);
    return -1;
  }
  return 0;
}

int
ff_server_complete(struct ff_server *s, struct ff_request *r, void *rbuf)
{
  if (r->error || r->kind != FF_REQ_READ)
    return 0;
  if (ff_farm_read(s->farm, r->dev, rbuf, r->off, r->len) < 0) {
    r->error = EIO;
    ff_error_prefix("read %s at %llu: ", s->names[r->dev],
                    (unsigned long long)r->off);
    return -1;
  }
  return 0;
}

void
ff_server_end(struct ff_server *s, struct ff_request *r, uint64_t now_ns)
{
  uint64_t stat_len;

  if (s->tracing)
    trace_line(s, r, now_ns);
  if (!s->stats)
    return;
  /* Zero and trim are writes that move no data. */
  stat_len = r->kind == FF_REQ_READ || r->kind == FF_REQ_WRITE ? r->len : 0;
  ff_stats_record(s->stats, r->dev, (enum ff_stat_op)model_op(r->kind), r->off,
                  stat_len,
                  now_ns > r->arrival_ns ? now_ns - r->arrival_ns : 0,
                  r->error, r->error && r->injected);
  /* how long after the model's time the reply went out (the server's own
   * share; an interrupted request went out early) */
  if (!r->interrupted)
    ff_stats_late(s->stats, now_ns > r->done_ns ? now_ns - r->done_ns : 0);
  if (r->interrupted)
    ff_stats_interrupted(s->stats, r->dev);
  ff_stats_inflight_add(s->stats, -1);
}

int
ff_server_finish(struct ff_server *s, struct ff_request *r, void *rbuf,
                 ff_server_reply_fn *reply, void *arg)
{
  void *own = NULL;
  int rc;

  if (!r->error && r->kind == FF_REQ_READ && !rbuf) {
    rbuf = own = malloc(r->len ? r->len : 1);
    if (!own)
      r->error = ENOMEM;
  }
  rc = ff_server_complete(s, r, rbuf);
  if (reply)
    reply(r, !r->error && r->kind == FF_REQ_READ ? rbuf : NULL, arg);
  free(own);
  ff_server_end(s, r, ff_now_ns());
  return rc;
}

int
ff_server_run(struct ff_server *s, struct ff_request *r, void *rbuf,
              int (*wait)(uint64_t done_ns, void *arg), void *arg)
{
  int rc = ff_server_begin(s, r, ff_now_ns()), e;
  /* a lazy farm builds the read's VG while the model's time runs, not
   * after it */
  const void *hold =
    !r->error && r->kind == FF_REQ_READ ? ff_farm_hold(s->farm, r->dev) : NULL;

  if (r->done_ns > ff_now_ns() && (e = wait(r->done_ns, arg)) != 0 &&
      !r->error) {
    r->error = e;
    r->injected = 0;
    r->interrupted = 1;
  }
  if (ff_server_finish(s, r, rbuf, NULL, NULL) < 0)
    rc = -1;
  ff_farm_release(s->farm, hold);
  return rc;
}

/* ---- devices -------------------------------------------------------------
 */

struct ff_farm *
ff_server_farm(const struct ff_server *s)
{
  return s->farm;
}

uint32_t
ff_server_ndevs(const struct ff_server *s)
{
  return ff_farm_ndevs(s->farm);
}

const char *
ff_server_dev_name(const struct ff_server *s, uint32_t dev)
{
  return s->names[dev];
}

uint64_t
ff_server_dev_size(const struct ff_server *s, uint32_t dev)
{
  return ff_farm_dev_size(s->farm, dev);
}

int64_t
ff_server_lookup(const struct ff_server *s, const char *name)
{
  return ff_farm_lookup(s->farm, name);
}

int
ff_server_present(const struct ff_server *s, uint32_t dev, uint64_t now_ns)
{
  return s->io ? ff_iomodel_present(s->io, dev, now_ns) : 0;
}

int64_t
ff_server_extents(const struct ff_server *s, uint32_t dev,
                  struct ff_range **out)
{
  return ff_farm_extents_all(s->farm, dev, out);
}

/* ---- the model -----------------------------------------------------------
 */

struct ff_iomodel *
ff_server_model(const struct ff_server *s)
{
  return s->io;
}

void
ff_server_set_transport_share(struct ff_server *s, uint64_t ns)
{
  atomic_store_explicit(&s->share_ns, ns, memory_order_relaxed);
}

uint64_t
ff_server_transport_share(const struct ff_server *s)
{
  return atomic_load_explicit(&s->share_ns, memory_order_relaxed);
}

const char *
ff_server_profile_name(const struct ff_server *s)
{
  return s->io ? ff_iomodel_profile_name(s->io) : ff_profile_name(s->first);
}

int
ff_server_set_profile(struct ff_server *s, const char *path, uint64_t now_ns)
{
  struct ff_profile *p;

  if (!s->io)
    return ff_error("profile %s: the server is not started", path);
  p = ff_profile_load_file(path, s->farm);
  if (!p)
    return -1;
  return ff_iomodel_set_profile(s->io, p, now_ns); /* takes p */
}

/* ---- stats ---------------------------------------------------------------
 */

static int
stats_off(void)
{
  return ff_error("statistics are off");
}

char *
ff_server_stats_json(struct ff_server *s, int include_idle, int indent,
                     int (*keep)(uint32_t dev, void *arg), void *arg)
{
  json_t *j;
  char *out;

  if (!s->stats) {
    stats_off();
    return NULL;
  }
  j = ff_stats_json(s->stats, s->names, include_idle);
  if (!j)
    return NULL;
  /* what every delayed reply was answered sooner by (ff-server.h) */
  if (json_object_set_new(
        j, "transport_share_ns",
        json_integer((json_int_t)ff_server_transport_share(s))) < 0) {
    json_decref(j);
    ff_error("out of memory");
    return NULL;
  }
  if (keep) {
    json_t *devs = json_object_get(j, "devices"), *mine = json_array();

    if (!mine) {
      json_decref(j);
      ff_error("out of memory");
      return NULL;
    }
    for (size_t i = 0; i < json_array_size(devs); i++) {
      json_t *d = json_array_get(devs, i);
      json_int_t idx = json_integer_value(json_object_get(d, "index"));

      if (idx >= 0 && keep((uint32_t)idx, arg))
        json_array_append(mine, d);
    }
    json_object_set_new(j, "devices", mine);
  }
  {
    uint64_t data, max, full;

    ff_overlay_stats(ff_farm_overlay(s->farm), &data, NULL, NULL);
    ff_overlay_cap(ff_farm_overlay(s->farm), &max, &full);
    json_object_set_new(j, "overlay",
                        json_pack("{s:I, s:I, s:I}", "data_bytes",
                                  (json_int_t)(data * FF_OVERLAY_BLOCK),
                                  "max_bytes", (json_int_t)max, "full",
                                  (json_int_t)full));
  }
  out = ff_stats_json_dump(j, indent);
  json_decref(j);
  return out;
}

char *
ff_server_stats_table(struct ff_server *s)
{
  if (!s->stats) {
    stats_off();
    return NULL;
  }
  return ff_stats_text(s->stats, s->names);
}

int
ff_server_stats_reset(struct ff_server *s)
{
  if (!s->stats)
    return stats_off();
  ff_stats_reset(s->stats);
  return 0;
}

/* ---- the overlay ---------------------------------------------------------
 */

int
ff_server_save_overlay(struct ff_server *s, const char *path)
{
  int r, e;

  pthread_mutex_lock(&s->save_lock);
  r = ff_farm_save_overlay(s->farm, path);
  e = errno;
  pthread_mutex_unlock(&s->save_lock);
  errno = e;
  return r;
}

/* The marker next to a save-at-exit target: "<path>.failed". */
static int
failed_marker(const char *path, char *out, size_t len)
{
  return (size_t)snprintf(out, len, "%s.failed", path) < len ? 0 : -1;
}

int
ff_server_save_at_exit(struct ff_server *s, char **report)
{
  uint64_t data = 0, zero = 0;
  char why[1024], marker[4200], stamp[64], *text = NULL;
  struct stat st;
  time_t now;
  struct tm tm;

  if (report)
    *report = NULL;
  if (!s->save_overlay)
    return 0;
  if (failed_marker(s->save_overlay, marker, sizeof marker) < 0)
    marker[0] = '\0';
  if (ff_server_save_overlay(s, s->save_overlay) == 0) {
    /* A marker of an earlier failed save no longer tells the truth. */
    if (marker[0] && lstat(marker, &st) == 0 && S_ISREG(st.st_mode))
      unlink(marker);
    return 0;
  }
  snprintf(why, sizeof why, "%s", ff_errmsg()); /* ff_error reuses it */
  ff_overlay_stats(ff_farm_overlay(s->farm), &data, &zero, NULL);
  now = time(NULL);
  if (!localtime_r(&now, &tm) ||
      !strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S %z", &tm))
    snprintf(stamp, sizeof stamp, "%lld", (long long)now);
  if (asprintf(&text,
               "%s: fusefarm (pid %d): %s: the write overlay (%llu blocks "
               "written, %llu zeroed) was NOT saved and is lost\n",
               stamp, (int)getpid(), why, (unsigned long long)data,
               (unsigned long long)zero) < 0)
    text = NULL;
  /* Impossible to miss: the marker next to the file the user asked for
   * (the failed save removed its temporary file, so even a full file
   * system has room for these few bytes), and the system log, which a
   * daemon whose stderr went to /dev/null still reaches. */
  if (text && marker[0] &&
      ff_write_file_atomic(marker, text, strlen(text)) < 0)
    fprintf(stderr, "fusefarm: cannot write %s either: %s\n", marker,
            ff_errmsg());
  openlog("fusefarm", LOG_PID, LOG_DAEMON);
  syslog(LOG_ERR,
         "overlay save to %s failed: %s (%llu blocks written, %llu "
         "zeroed, lost)",
         s->save_overlay, why, (unsigned long long)data,
         (unsigned long long)zero);
  closelog();
  if (report)
    *report = text;
  else
    free(text);
  return ff_error("%s: the write overlay (%llu blocks written, %llu zeroed) "
                  "was NOT saved and is lost (%s says so)",
                  why, (unsigned long long)data, (unsigned long long)zero,
                  marker[0] ? marker : "the system log");
}
