/* fusefarm: per-device I/O statistics.
 *
 * The front ends (FUSE daemon, nbdkit plugin) call ff_stats_record() once
 * per completed request and ff_stats_inflight_add() when a request
 * arrives and when it is answered.  Snapshots are rendered as JSON
 * (docs/stats.md) or as a text table; the table can also be rendered from
 * a JSON snapshot, so `fusefarm stats` prints the same table from the
 * daemon's stats.json or from the file the nbdkit plugin writes.
 *
 * INVARIANTS
 *
 * - Per device: counts of reads, writes and flushes (every completed
 *   request, failed or not), bytes read and written (successful requests
 *   only), errors (requests answered with an errno), injected errors
 *   (those of them a fault profile caused) and interrupted requests
 *   (those of them answered early, EINTR or ESHUTDOWN, because their
 *   reader went away: ff_stats_interrupted).
 * - Blocks touched: the number of distinct FF_STATS_BLOCK-sized blocks
 *   (offset >> FF_STATS_BLOCK_SHIFT) covered by successful reads and
 *   writes.  A device stops remembering new blocks at FF_STATS_BLOCKS_MAX;
 *   its count is then a lower bound and "blocks_touched_capped" is true.
 * - Read offsets: the offsets of the first and of the last
 *   FF_STATS_RING read requests (failed ones included: it is lvm's read
 *   schedule), in the order ff_stats_record() was called for them, that
 *   is completion order.
 * - Latency: one histogram per device and op kind.  Buckets are
 *   log-linear: FF_STATS_HIST_SUB (8) equal sub-buckets per power of two
 *   of nanoseconds from 2^10 ns (1.024 us) to 2^37 ns (137.4 s), plus an
 *   underflow bucket [0, 1024 ns) and an overflow bucket [2^37 ns, inf).
 *   A bucket is at most 1/8 (12.5%) wider than its lower bound; a
 *   percentile is reported as the middle of the bucket holding that rank
 *   (clamped to the exact minimum and maximum when they lie in that
 *   bucket), so it is within 1/16 (6.25%) of the true sample value for
 *   latencies from 1.024 us to 137 s, within 512 ns below that, and the
 *   maximum itself above.  The maximum (and minimum) are exact.
 * - Percentiles use the nearest-rank rule: pN is the smallest recorded
 *   latency such that at least N% of the samples are <= it.
 * - Farm-wide: requests in flight (a gauge) and its maximum since the last
 *   reset; and a histogram (the same buckets) of how late each reply went
 *   out after the I/O model's decided time (ff_stats_late): the server's
 *   own share of a request's latency, which a profile does not ask for
 *   (docs/stats.md "reply_late").  Totals are sums over devices computed at
 * snapshot time; the totals' latency histograms are the merged device
 * histograms.
 *
 * MEMORY
 *
 * A device with no I/O costs one 128-byte slot (aligned to a cache line,
 * so that threads serving neighbouring devices do not share lines); the
 * set adds a fixed 4,160 bytes (64 cache-line-sized stripe locks and the
 * header): ff_stats_memory(ff_stats_new(10000)) is 1,284,160 bytes, 128.4
 * bytes per device (test-stats prints it).  Allocated on first use:
 * - per op kind with any request: a 1,760-byte histogram, kept until
 *   ff_stats_free (reset zeroes it in place);
 * - on the first read or write: a 288-byte log (offset rings and the set
 *   header), and the touched-block set: 8 bytes per slot, at most 3/4
 *   full, doubling from 16 slots: about 11-21 bytes per block touched, at
 *   most 16 MiB (2^21 slots) per device at the cap.  Both are freed by
 *   ff_stats_reset.
 * So a device lvm has read once costs 128 + 1,760 + 288 + 128 = 2,304
 * bytes; 16,384 such devices about 36 MiB.
 *
 * THREAD MODEL
 *
 * ff_stats_record, ff_stats_interrupted, ff_stats_inflight_add,
 * ff_stats_reset, ff_stats_json_text, ff_stats_text and ff_stats_memory
 * may be called concurrently from any number of threads.  ff_stats_new
 * and ff_stats_free must not race with anything on the same set.
 *
 * - Counters, histogram buckets, the gauge and the maxima are C11 atomics
 *   updated with relaxed order (maxima with a compare-and-swap loop).  A
 *   device's histogram for an op kind is allocated on that kind's first
 *   record and published with a compare-and-swap (acquire/release); it
 *   lives until ff_stats_free.
 * - Each device's log (read-offset rings and touched-block hash set) is
 *   guarded by one of FF_STATS_STRIPES mutexes, chosen by device index
 *   modulo FF_STATS_STRIPES; reads and writes take it once, for a few
 *   hash probes (and, rarely, a doubling of the set).  Flushes take no
 *   lock.  No function holds two locks at a time.
 * - Snapshots read each counter atomically but not all fields at one
 *   instant: a record running concurrently with a snapshot may be counted
 *   in some fields and not yet in others (e.g. in reads but not yet in
 *   bytes_read or in the histogram).  A device's rings and block count
 *   are copied under its stripe lock, so they are consistent with each
 *   other.  Once records stop, a snapshot is exact.
 * - ff_stats_reset running concurrently with records is safe (no crash,
 *   no leak), but a record in progress during the reset may be counted
 *   partly.  It does not zero the in-flight gauge itself (requests in
 *   flight will still decrement it): it sets the maximum to the current
 *   value.
 * - Lock failures (which would mean memory corruption or a bug) abort.
 *   Allocation failure on the hot path does not fail the request: that
 *   record's histogram or touched-block update is skipped and counted in
 *   "alloc_failures".  Records with a device index >= ndevs or an unknown
 *   op kind are counted in "dropped_records" and otherwise ignored.
 *
 * OWNERSHIP
 *
 * The set owns all its memory.  names arrays and JSON texts passed to the
 * renderers are borrowed for the call.  Returned strings belong to the
 * caller (free).  The API is text only: no JSON library type appears in
 * it (the server's json_t snapshot is in ff-stats-int.h, internal to
 * serve/).
 *
 * ERRORS
 *
 * Functions that can fail return NULL after recording one message with
 * ff_error() (ff-error.h).
 */
#ifndef FF_STATS_H
#define FF_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Keep these equal to enum ff_op in ff-profile.h (READ 0, WRITE 1,
 * FLUSH 2): the front ends cast one to the other. */
enum ff_stat_op {
  FF_STAT_READ = 0,
  FF_STAT_WRITE = 1,
  FF_STAT_FLUSH = 2,
};
#define FF_STAT_OPS 3

#define FF_STATS_BLOCK_SHIFT 17 /* 128 KiB blocks for "blocks touched" */
#define FF_STATS_BLOCK       (1u << FF_STATS_BLOCK_SHIFT)
#define FF_STATS_BLOCKS_MAX  (1u << 20) /* per device, then capped */
#define FF_STATS_RING        16         /* first and last read offsets kept */
#define FF_STATS_STRIPES     64

#define FF_STATS_HIST_SUB        8  /* sub-buckets per power of two */
#define FF_STATS_HIST_LOW_SHIFT  10 /* 2^10 ns: top of the underflow */
#define FF_STATS_HIST_HIGH_SHIFT 37 /* 2^37 ns: start of the overflow */
#define FF_STATS_HIST_BUCKETS                                                 \
  (2 +                                                                        \
   (FF_STATS_HIST_HIGH_SHIFT - FF_STATS_HIST_LOW_SHIFT) * FF_STATS_HIST_SUB)

struct ff_stats;

/* A zeroed set for devices 0 .. ndevs-1 (ndevs may be 0).  NULL with
 * ff_error on allocation failure. */
struct ff_stats *ff_stats_new(uint32_t ndevs);

/* Frees everything.  NULL is a no-op.  Nothing else may be running on s. */
void ff_stats_free(struct ff_stats *s);

/* Hot path: one completed request on device dev.  off/len: the request's
 * byte range (ignored for flushes).  latency_ns: from arrival to reply.
 * error: 0 or an errno.  injected: 1 when a fault profile caused error
 * (ignored when error is 0).  Never fails, never blocks for long (see
 * THREAD MODEL). */
void ff_stats_record(struct ff_stats *s, uint32_t dev, enum ff_stat_op op,
                     uint64_t off, uint64_t len, uint64_t latency_ns,
                     int error, int injected);

/* One of the requests recorded on dev was interrupted: its reader went
 * away (a killed process, a disconnected client) and it was answered
 * before its time.  Call it with the request's ff_stats_record.  Never
 * fails, never blocks. */
void ff_stats_interrupted(struct ff_stats *s, uint32_t dev);

/* The in-flight gauge: +1 when a request arrives, -1 when it is answered.
 * Tracks the maximum. */
void ff_stats_inflight_add(struct ff_stats *s, int delta);

/* One reply went out late_ns after the time the I/O model decided for it
 * (0 when on time).  Never fails, never blocks. */
void ff_stats_late(struct ff_stats *s, uint64_t late_ns);

/* Zero every counter, histogram, ring and touched-block set, and free the
 * sets.  The in-flight maximum becomes the current in-flight value (the
 * gauge itself is left alone); the snapshot's "since" restarts. */
void ff_stats_reset(struct ff_stats *s);

/* A snapshot as JSON text (layout: docs/stats.md), ending in a newline:
 * one line, or with indent, pretty-printed with two-space indents.
 * names[i] is device i's name; names == NULL names them "dev<index>".
 * include_idle: also list devices with no request since the last reset
 * (an idle device is one with reads + writes + flushes == 0).  Caller
 * frees.  NULL with ff_error on allocation failure. */
char *ff_stats_json_text(struct ff_stats *s, const char *const *names,
                         int include_idle, int indent);

/* The snapshot as a text table: one row per device with I/O (sorted by
 * device index), then a totals row and a line with the in-flight gauge
 * and its maximum.  Exactly the table ff_stats_text_from_json_text()
 * renders from ff_stats_json_text(s, names, 0, ...).  Caller frees.  NULL
 * with ff_error on allocation failure. */
char *ff_stats_text(struct ff_stats *s, const char *const *names);

/* Checks that the len bytes at json are a stats snapshot: valid JSON
 * whose "format" is "fusefarm-stats" (the rest is checked when it is
 * rendered).  name is what the messages call the document (a path;
 * NULL: "stats json"): "NAME:LINE:COLUMN: not valid JSON: WHAT", "NAME:
 * not a stats snapshot (\"format\" is not \"fusefarm-stats\")".  0, or
 * -1 with ff_error. */
int ff_stats_json_text_check(const char *json, size_t len, const char *name);

/* What ff_stats_text_from_json_text() saw besides the table. */
struct ff_stats_text_info {
  size_t listed;  /* devices the document lists, idle ones included */
  uint64_t ndevs; /* devices the farm has (its "ndevs") */
};

/* The text table from a snapshot as JSON text (len bytes at json; need
 * not be NUL-terminated), in the ff_stats_json_text layout.  all: list
 * every device the document lists, in its order; otherwise leave out the
 * idle ones (reads, writes and flushes all 0), as ff_stats_text does.
 * The document is checked first (ff_stats_json_text_check, then every
 * field): a missing or mistyped field gives NULL, an ff_error naming the
 * document and the field ("NAME: devices[2].latency.read: missing
 * \"p50_ns\"") and, when errmsg is not NULL, *errmsg = a malloc'd copy
 * of that message (caller frees; NULL if even the copy failed).  name:
 * as for ff_stats_json_text_check.  info, when not NULL, is filled on
 * success.  The result is malloc'd; caller frees. */
char *ff_stats_text_from_json_text(const char *json, size_t len,
                                   const char *name, int all,
                                   struct ff_stats_text_info *info,
                                   char **errmsg);

/* Bytes of memory the set holds now (its slots, locks, histograms, logs
 * and hash sets; not malloc's own overhead). */
size_t ff_stats_memory(const struct ff_stats *s);

#endif
