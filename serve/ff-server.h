/* fusefarm: the request engine both front ends run.
 *
 * A server is built from one options struct and owns the farm, the I/O
 * model, the overlay (the farm's) and the stats.  Every request goes
 * through three steps, whatever protocol brought it:
 *
 *   begin     stats in flight +1; the model decides when the request is
 *             answered (done_ns) and with what error; a write, zero or
 *             trim the model does not fail lands in the overlay now, so
 *             a request arriving after it was acknowledged sees it;
 *             the front end is to answer at done_ns: the model's time
 *             (model_ns) less the transport share, below, never before
 *             arrival;
 *   complete  when the front end has waited until done_ns: a read takes
 *             its bytes now (what it returns is what the farm holds when
 *             it is answered);
 *   end       stats record (latency from arrival), in flight -1.
 *
 * A front end whose requester goes away while it waits (a FUSE
 * interrupt, an NBD client that disconnects) may give up: it sets
 * r->error and r->interrupted, skips complete and ends the request at
 * once.
 *
 * The front ends only translate their protocol and wait: the FUSE daemon
 * hands the request to the timer heap (ff-sched.h) and completes it when
 * due; the nbdkit plugin sleeps with nbdkit_nanosleep in its worker.
 *
 * Request kinds: read, write, zero, trim, flush.  Zero and trim count as
 * writes that move no data: the model times and faults them as writes (a
 * trim, and a flush, with length 0: they transfer nothing) and the stats
 * count them as writes of 0 bytes.
 *
 * Invariants
 * - Every ff_server_begin is followed by exactly one ff_server_end on the
 *   same request (complete in between, once, unless the front end gives
 *   up: then it sets r->error first).
 * - The farm's tables are read-only while serving; the overlay has its
 *   own locks; the model and the stats are safe from many threads.
 *
 * Thread model: begin/complete/end, the accessors, the stats calls,
 * ff_server_set_profile and ff_server_save_overlay may run from any number
 * of threads at once (saves are serialised inside).  ff_server_new,
 * ff_server_start and ff_server_free must not race with anything.
 *
 * Ownership: the server owns everything it builds; strings and the farm
 * pointer returned by accessors live as long as the server.
 *
 * Errors: -1 (or NULL) after recording one message with ff_error().
 */
#ifndef FF_SERVER_H
#define FF_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct ff_farm;
struct ff_iomodel;
struct ff_range;

struct ff_server_options {
  const char *spec;         /* spec path, or NULL: the built-in farm */
  uint64_t devices;         /* scale to N devices; 0: as the spec */
  const char *profile;      /* profile path, or NULL: ideal */
  const char *overlay;      /* load this saved overlay, or NULL */
  const char *save_overlay; /* save here at exit (checked by new), or NULL */
  int stats;                /* keep statistics */
  const char *trace;        /* append a line per request there, or NULL */
  uint64_t overlay_max;     /* cap on written blocks' bytes (0: none;
                               ff_overlay_set_max): past it writes fail
                               ENOSPC */
  int lazy;                 /* the farm keeps no VG, it builds one again
                               when read (ff_farm_new_lazy): the plugin */
};

/* What ff_server_new found wrong, so a front end can name its own
 * option in the message (ff_errmsg() says the rest). */
enum ff_server_fault {
  FF_SERVER_OK,
  FF_SERVER_BAD_SAVE_OVERLAY, /* checked first: nothing else loaded */
  FF_SERVER_BAD_SPEC,
  FF_SERVER_BAD_DEVICES, /* the spec cannot be scaled so */
  FF_SERVER_BAD_FARM,    /* the spec parsed but its farm cannot be built */
  FF_SERVER_BAD_PROFILE,
  FF_SERVER_BAD_OVERLAY,
  FF_SERVER_BAD_TRACE, /* the trace file cannot be created */
  FF_SERVER_NO_MEMORY,
};

struct ff_server;

/* The one farm loader: the spec at path (NULL: the built-in default),
 * scaled to devices devices (0: as it says; ff_spec_scale), built.
 * NULL on error with the message of the spec parser (file, line, key) or
 * of ff_farm_new; *fault (may be NULL) says which step failed
 * (FF_SERVER_BAD_SPEC, _BAD_DEVICES, _BAD_FARM). */
struct ff_farm *ff_server_load_farm(const char *path, uint64_t devices,
                                    enum ff_server_fault *fault);

/* Build a server: check save_overlay can be written, create (or
 * truncate) the trace file, load and scale the farm, load the profile,
 * load the overlay, make the stats.  The model is not running yet: call
 * ff_server_start.  NULL on error, with *fault (may be NULL) saying which
 * input was wrong. */
struct ff_server *ff_server_new(const struct ff_server_options *o,
                                enum ff_server_fault *fault);

/* Start the I/O model: now_ns is the profile's time origin (spin-up,
 * stalls, appear_at, vanish_at).  0 or -1 (allocation failure). */
int ff_server_start(struct ff_server *s, uint64_t now_ns);

/* NULL is a no-op.  Does not save the overlay (ff_server_save_at_exit). */
void ff_server_free(struct ff_server *s);

/* ---- requests ------------------------------------------------------------
 */

enum ff_req_kind {
  FF_REQ_READ,
  FF_REQ_WRITE,
  FF_REQ_ZERO,
  FF_REQ_TRIM,
  FF_REQ_FLUSH,
};

/* "read", "write", "zero", "trim", "flush". */
const char *ff_req_kind_name(enum ff_req_kind k);

struct ff_request {
  /* Set by the front end before begin. */
  uint32_t dev;
  enum ff_req_kind kind;
  uint64_t off;
  uint64_t len;     /* bytes (0 for a flush) */
  const void *wbuf; /* a write's bytes, read during begin only */
  /* Set by begin; error may be set by the front end before complete
   * (it gave up waiting: complete then does nothing). */
  uint64_t seq; /* 0, 1, 2, ...: the order of begin calls */
  uint64_t arrival_ns;
  uint64_t model_ns; /* the model's decided time (>= arrival) */
  uint64_t done_ns;  /* answer at this CLOCK_MONOTONIC time: model_ns less
                        the transport share, never before arrival */
  int error;         /* 0 or an errno (EIO, ENODEV, EINVAL, ...) */
  int injected;      /* 1 when the profile's faults caused error */
  /* Set by the front end, with error (EINTR, ESHUTDOWN), when it answers
   * before done_ns because the requester went away (a killed reader, a
   * disconnected client): counted as "interrupted".  The model's decision
   * stands (the request held its queue slot until done_ns); only the
   * reply came early. */
  int interrupted;
};

/* Step 1, at arrival (now_ns).  Returns 0, or -1 when the request failed
 * on our side (out of range, the overlay could not take a write): r->error
 * is then set and ff_errmsg() says why.  A request the model fails also
 * returns 0 (r->error, r->injected set): the profile's doing, no message.
 * Before ff_server_start every request fails (EINVAL). */
int ff_server_begin(struct ff_server *s, struct ff_request *r,
                    uint64_t now_ns);

/* Step 2, once r->done_ns has come: a read (no error so far) copies its
 * len bytes into rbuf.  Returns 0, or -1 with r->error = EIO and a message
 * when the read failed. */
int ff_server_complete(struct ff_server *s, struct ff_request *r, void *rbuf);

/* Step 3, when the reply goes out (now_ns): stats, and the trace line. */
void ff_server_end(struct ff_server *s, struct ff_request *r, uint64_t now_ns);

/* The request's lifecycle in one place, for both front ends, so that the
 * rules above (a write lands at begin, a read takes its bytes when it is
 * answered, exactly one reply, exactly one end, the reply before the
 * end) are written once.
 *
 * ff_server_finish: steps 2 and 3 for a request whose done time has come
 * (or that the front end gave up on: r->error, r->interrupted set): a
 * read with no error gets its bytes in rbuf, or, when rbuf is NULL, in a
 * buffer made for the call (ENOMEM in r->error when it cannot be); then
 * reply(r, buf, arg) answers the requester (buf: the read's bytes, NULL
 * otherwise; reply may be NULL when the front end answers after the
 * call returns, as nbdkit does with the return value); then
 * ff_server_end at the clock's now.  Returns 0, or -1 when the read
 * failed on our side (r->error = EIO; ff_errmsg() says why): the reply
 * has been made either way. */
typedef void ff_server_reply_fn(const struct ff_request *r, const void *buf,
                                void *arg);
int ff_server_finish(struct ff_server *s, struct ff_request *r, void *rbuf,
                     ff_server_reply_fn *reply, void *arg);

/* A request from arrival to its end, for a front end that waits in its
 * own worker thread (the nbdkit plugin): begin at the clock's now; when
 * the model's answer lies ahead, wait(r->done_ns, arg): 0 once the time
 * has come, or an errno (ESHUTDOWN, EINTR) when the requester went away,
 * which answers it early with that error (r->interrupted; the model's
 * decision stands); then ff_server_finish with rbuf and no reply.  The
 * answer is r->error (0: success).  Returns 0, or -1 when begin or the
 * read failed on our side (ff_errmsg() says why). */
int ff_server_run(struct ff_server *s, struct ff_request *r, void *rbuf,
                  int (*wait)(uint64_t done_ns, void *arg), void *arg);

/* ---- the request trace ---------------------------------------------------
 * With options.trace set, ff_server_end writes one line per request to
 * that file (docs/stats.md, "The request trace"), after a header line
 * starting with '#':
 *
 *   seq dev name kind off len arrival_ns done_ns end_ns error injected
 *   model_ns
 *
 * seq is the order of begin calls; arrival_ns, done_ns (when the reply
 * was due: the model's decision less the transport share), end_ns
 * (ff_server_end's now_ns: the reply has gone out) and model_ns (the
 * model's decision; the last column, so that readers of the eleven before
 * it read on) are CLOCK_MONOTONIC; error is an errno number (0: none).  Lines
 * appear in end order.  A test and diagnostic feature: each line is written
 * with one write(2) under a mutex as the request ends, so a reader sees
 * every ended request without any flush, at the cost of a system call
 * per request.  A failed write cuts the file back to its whole lines and
 * stops the trace (ff_server_trace_check). */

/* 0, or -1 with the message "PATH: write: <why> (N requests not
 * traced)" when a write failed.  Also 0 without a trace. */
int ff_server_trace_check(struct ff_server *s);

/* ---- devices -------------------------------------------------------------
 */

/* The farm (read-only use: manifest, describe, extents). */
struct ff_farm *ff_server_farm(const struct ff_server *s);
uint32_t ff_server_ndevs(const struct ff_server *s);
const char *ff_server_dev_name(const struct ff_server *s, uint32_t dev);
uint64_t ff_server_dev_size(const struct ff_server *s, uint32_t dev);
/* Device index by name, or -1. */
int64_t ff_server_lookup(const struct ff_server *s, const char *name);
/* 1 when dev exists at now_ns (the profile's appear_at has passed); 0
 * before ff_server_start. */
int ff_server_present(const struct ff_server *s, uint32_t dev,
                      uint64_t now_ns);
/* ff_farm_extents_all on dev: ranges that may hold data. */
int64_t ff_server_extents(const struct ff_server *s, uint32_t dev,
                          struct ff_range **out);

/* ---- the model -----------------------------------------------------------
 */

/* The running model, for read-only queries (ff-iomodel.h: direct_io,
 * rotational, latency quantiles).  NULL before ff_server_start. */
struct ff_iomodel *ff_server_model(const struct ff_server *s);
const char *ff_server_profile_name(const struct ff_server *s);

/* The transport share: how long a request spends on its way to the
 * server and its reply on the way back (the loop driver, FUSE, the
 * requester waking), which the server cannot see but the requester
 * does.  Every request the model delays is answered that much sooner,
 * so that the requester sees the model's latency and not the model's
 * latency plus the path (never before its arrival: a shorter delay is
 * answered at once).  0 (the default) leaves every decision as the model
 * made it.  Safe from any thread; requests beginning after the call use
 * the new value. */
void ff_server_set_transport_share(struct ff_server *s, uint64_t ns);
uint64_t ff_server_transport_share(const struct ff_server *s);

/* Load the profile at path for this farm and switch to it at now_ns.  On
 * error the current profile stays. */
int ff_server_set_profile(struct ff_server *s, const char *path,
                          uint64_t now_ns);

/* ---- stats ---------------------------------------------------------------
 * All fail (NULL, -1 message "statistics are off") when the server keeps
 * none. */

/* The stats snapshot as JSON text (docs/stats.md) ending in a newline:
 * indented (indent = 1) or on one line.  include_idle: list devices with
 * no I/O too.  keep (may be NULL): list only devices for which it returns
 * nonzero (totals are unchanged).  Caller frees. */
char *ff_server_stats_json(struct ff_server *s, int include_idle, int indent,
                           int (*keep)(uint32_t dev, void *arg), void *arg);

/* The snapshot as a text table (ff_stats_text).  Caller frees. */
char *ff_server_stats_table(struct ff_server *s);

/* Zero the counters (ff_stats_reset). */
int ff_server_stats_reset(struct ff_server *s);

/* ---- the overlay ---------------------------------------------------------
 */

/* Save the overlay to path (one save at a time).  A failed save changes
 * nothing: the overlay stays in memory, the file at path stays as it was.
 * errno is the save's own (EACCES, ENOSPC, ...). */
int ff_server_save_overlay(struct ff_server *s, const char *path);

/* At exit: save to the options' save_overlay (0 when there is none).  On
 * failure the message is "<why>: the write overlay (N blocks written, M
 * zeroed) was NOT saved and is lost (PATH.failed says so)": the same
 * line, stamped with the time and pid, goes to PATH.failed next to the
 * file asked for and to the system log (LOG_DAEMON), and *report (may be
 * NULL; the caller frees it) gets that stamped line.  A successful save
 * removes a PATH.failed left by an earlier one. */
int ff_server_save_at_exit(struct ff_server *s, char **report);

#endif
