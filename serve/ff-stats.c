/* fusefarm: per-device I/O statistics (see ff-stats.h, docs/stats.md).
 *
 * THREAD MODEL (details in ff-stats.h): counters and histogram buckets
 * are relaxed atomics; histograms are allocated once per (device, op) and
 * published by compare-and-swap; each device's log (read rings and
 * touched-block set) is guarded by stripes[dev % FF_STATS_STRIPES].lock.
 * No function holds more than one lock.
 */
#include "ff-stats.h"
#include "ff-error.h"
#include "ff-stats-int.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define NB FF_STATS_HIST_BUCKETS

/* One histogram.  min starts at UINT64_MAX ("no sample"). */
struct hist {
  _Atomic uint64_t max, min;
  _Atomic uint64_t b[NB];
};

/* Guarded by the device's stripe lock. */
struct dev_log {
  uint64_t nreads;               /* reads logged: next ring position */
  uint64_t first[FF_STATS_RING]; /* offsets of reads 0..15 */
  uint64_t last[FF_STATS_RING];  /* read k is at last[k % RING] */
  uint64_t *slots;               /* open addressing; block + 1, 0 empty */
  uint32_t mask;                 /* slots - 1; 0 while slots is NULL */
  uint32_t n;                    /* blocks in the set */
  bool capped;                   /* a block was not added: n is a bound */
};

/* One device.  Aligned to a cache line: neighbouring devices are often
 * served by different threads at once. */
struct dev {
  _Alignas(64) _Atomic uint64_t ops[FF_STAT_OPS];
  _Atomic uint64_t bytes[2]; /* read, written */
  _Atomic uint64_t errors, injected;
  _Atomic uint64_t interrupted;
  _Atomic(struct hist *) hist[FF_STAT_OPS];
  struct dev_log *log;
};

/* ff_stats_new takes zero bytes for zero counters and NULL pointers */
_Static_assert(ATOMIC_LONG_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2 &&
                 ATOMIC_POINTER_LOCK_FREE == 2,
               "the stats' atomics must be lock-free");

struct stripe {
  _Alignas(64) pthread_mutex_t lock;
};

struct ff_stats {
  struct stripe stripes[FF_STATS_STRIPES];
  struct dev *devs; /* mmap'd, devs_bytes */
  size_t devs_bytes;
  uint32_t ndevs;
  _Atomic int64_t inflight, inflight_max;
  _Atomic uint64_t dropped, alloc_failures;
  _Atomic size_t mem;
  _Atomic int64_t since_ns; /* CLOCK_REALTIME of new or last reset */
  /* replies after the decided time (ff_stats_late): allocated on first
   * use */
  struct hist *_Atomic late;
};

static const char *const op_names[FF_STAT_OPS] = {"read", "write", "flush"};

/* --- small helpers --------------------------------------------------- */

static void
lock(pthread_mutex_t *m)
{
  if (pthread_mutex_lock(m))
    abort();
}

static void
unlock(pthread_mutex_t *m)
{
  if (pthread_mutex_unlock(m))
    abort();
}

static int64_t
realtime_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
atomic_max_u64(_Atomic uint64_t *a, uint64_t v)
{
  uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);

  while (v > cur && !atomic_compare_exchange_weak_explicit(
                      a, &cur, v, memory_order_relaxed, memory_order_relaxed))
    ;
}

static void
atomic_min_u64(_Atomic uint64_t *a, uint64_t v)
{
  uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);

  while (v < cur && !atomic_compare_exchange_weak_explicit(
                      a, &cur, v, memory_order_relaxed, memory_order_relaxed))
    ;
}

static uint64_t
ld(_Atomic uint64_t *a)
{
  return atomic_load_explicit(a, memory_order_relaxed);
}

static void
inc(_Atomic uint64_t *a, uint64_t v)
{
  atomic_fetch_add_explicit(a, v, memory_order_relaxed);
}

static void
mem_add(struct ff_stats *s, size_t n)
{
  atomic_fetch_add_explicit(&s->mem, n, memory_order_relaxed);
}

static void
mem_sub(struct ff_stats *s, size_t n)
{
  atomic_fetch_sub_explicit(&s->mem, n, memory_order_relaxed);
}

/* --- histogram buckets ----------------------------------------------- */

static unsigned
bucket_of(uint64_t v)
{
  unsigned e;

  if (v < (UINT64_C(1) << FF_STATS_HIST_LOW_SHIFT))
    return 0;
  if (v >= (UINT64_C(1) << FF_STATS_HIST_HIGH_SHIFT))
    return NB - 1;
  e = 63u - (unsigned)__builtin_clzll(v);
  return 1 + (e - FF_STATS_HIST_LOW_SHIFT) * FF_STATS_HIST_SUB +
         (unsigned)((v >> (e - 3)) & (FF_STATS_HIST_SUB - 1));
}

/* [lo, hi) of bucket i; hi is UINT64_MAX for the overflow bucket. */
static void
bucket_range(unsigned i, uint64_t *lo, uint64_t *hi)
{
  unsigned e, sub;

  if (i == 0) {
    *lo = 0;
    *hi = UINT64_C(1) << FF_STATS_HIST_LOW_SHIFT;
    return;
  }
  if (i == NB - 1) {
    *lo = UINT64_C(1) << FF_STATS_HIST_HIGH_SHIFT;
    *hi = UINT64_MAX;
    return;
  }
  e = FF_STATS_HIST_LOW_SHIFT + (i - 1) / FF_STATS_HIST_SUB;
  sub = (i - 1) % FF_STATS_HIST_SUB;
  *lo = (UINT64_C(1) << e) + ((uint64_t)sub << (e - 3));
  *hi = *lo + (UINT64_C(1) << (e - 3));
}

/* An empty histogram, or NULL. */
static struct hist *
hist_new(void)
{
  struct hist *h = malloc(sizeof *h);

  if (!h)
    return NULL;
  atomic_init(&h->max, 0);
  atomic_init(&h->min, UINT64_MAX);
  for (unsigned i = 0; i < NB; i++)
    atomic_init(&h->b[i], 0);
  return h;
}

/* Zero h in place (ff_stats_reset). */
static void
hist_clear(struct hist *h)
{
  for (unsigned b = 0; b < NB; b++)
    atomic_store_explicit(&h->b[b], 0, memory_order_relaxed);
  atomic_store_explicit(&h->max, 0, memory_order_relaxed);
  atomic_store_explicit(&h->min, UINT64_MAX, memory_order_relaxed);
}

static struct hist *
hist_get(struct ff_stats *s, struct dev *d, unsigned op)
{
  struct hist *h = atomic_load_explicit(&d->hist[op], memory_order_acquire);
  struct hist *expected = NULL;

  if (h)
    return h;
  if (!(h = hist_new()))
    return NULL;
  if (!atomic_compare_exchange_strong_explicit(&d->hist[op], &expected, h,
                                               memory_order_acq_rel,
                                               memory_order_acquire)) {
    free(h); /* another thread published first */
    return expected;
  }
  mem_add(s, sizeof *h);
  return h;
}

/* --- the touched-block set (caller holds the stripe lock) ------------- */

static size_t
slot_of(uint64_t key, uint32_t mask)
{
  key *= UINT64_C(0x9e3779b97f4a7c15);
  return (size_t)((key ^ (key >> 29)) & mask);
}

static int
set_grow(struct ff_stats *s, struct dev_log *lg)
{
  uint32_t nmask = lg->mask ? lg->mask * 2 + 1 : 15;
  uint64_t *ns = calloc((size_t)nmask + 1, sizeof *ns);

  if (!ns)
    return -1;
  if (lg->slots)
    for (size_t i = 0; i <= lg->mask; i++) {
      size_t j;

      if (!lg->slots[i])
        continue;
      for (j = slot_of(lg->slots[i], nmask); ns[j]; j = (j + 1) & nmask)
        ;
      ns[j] = lg->slots[i];
    }
  if (lg->slots)
    mem_sub(s, ((size_t)lg->mask + 1) * sizeof *ns);
  mem_add(s, ((size_t)nmask + 1) * sizeof *ns);
  free(lg->slots);
  lg->slots = ns;
  lg->mask = nmask;
  return 0;
}

/* Add block blk.  -1 when the set could not grow (allocation). */
static int
set_add(struct ff_stats *s, struct dev_log *lg, uint64_t blk)
{
  uint64_t key = blk + 1; /* blk <= 2^47: never 0, never wraps */
  size_t j;

  if (lg->slots) {
    for (j = slot_of(key, lg->mask); lg->slots[j]; j = (j + 1) & lg->mask)
      if (lg->slots[j] == key)
        return 0;
  }
  if (lg->n >= FF_STATS_BLOCKS_MAX) {
    lg->capped = true;
    return 0;
  }
  /* Keep the load at most 3/4. */
  if (!lg->slots || ((uint64_t)lg->n + 1) * 4 > ((uint64_t)lg->mask + 1) * 3)
    if (set_grow(s, lg) < 0)
      return -1;
  for (j = slot_of(key, lg->mask); lg->slots[j]; j = (j + 1) & lg->mask)
    ;
  lg->slots[j] = key;
  lg->n++;
  return 0;
}

static void
log_free(struct ff_stats *s, struct dev *d)
{
  if (!d->log)
    return;
  if (d->log->slots)
    mem_sub(s, ((size_t)d->log->mask + 1) * sizeof *d->log->slots);
  mem_sub(s, sizeof *d->log);
  free(d->log->slots);
  free(d->log);
  d->log = NULL;
}

/* Reads and writes: the read ring and the blocks touched. */
static void
log_request(struct ff_stats *s, uint32_t dev, unsigned op, uint64_t off,
            uint64_t len, int error)
{
  struct stripe *st = &s->stripes[dev % FF_STATS_STRIPES];
  struct dev *d = &s->devs[dev];
  struct dev_log *lg;
  uint64_t first, last;
  int failed = 0;

  lock(&st->lock);
  lg = d->log;
  if (!lg) {
    lg = calloc(1, sizeof *lg);
    if (!lg) {
      unlock(&st->lock);
      inc(&s->alloc_failures, 1);
      return;
    }
    d->log = lg;
    mem_add(s, sizeof *lg);
  }
  if (op == FF_STAT_READ) {
    if (lg->nreads < FF_STATS_RING)
      lg->first[lg->nreads] = off;
    lg->last[lg->nreads % FF_STATS_RING] = off;
    lg->nreads++;
  }
  if (!error && !lg->capped) {
    first = off >> FF_STATS_BLOCK_SHIFT;
    last = len == 0              ? first
           : off + len - 1 < off ? UINT64_MAX >> FF_STATS_BLOCK_SHIFT
                                 : (off + len - 1) >> FF_STATS_BLOCK_SHIFT;
    for (uint64_t b = first; !lg->capped; b++) {
      if (set_add(s, lg, b) < 0) {
        failed = 1;
        break;
      }
      if (b == last)
        break;
    }
  }
  unlock(&st->lock);
  if (failed)
    inc(&s->alloc_failures, 1);
}

/* --- lifetime -------------------------------------------------------- */

struct ff_stats *
ff_stats_new(uint32_t ndevs)
{
  struct ff_stats *s;
  void *p;
  size_t i;

  if (posix_memalign(&p, 64, sizeof *s)) {
    ff_error("stats: out of memory");
    return NULL;
  }
  s = p;
  memset(s, 0, sizeof *s);
  s->ndevs = ndevs;
  /* The per-device table (128 bytes a device) is mmap'd: its pages are
   * zero and cost no memory until a device is used (1.1 MiB at 9000
   * devices: an idle server's RSS), and zero is where every counter
   * starts (the atomics are lock-free: zero bytes are a zero value, a
   * NULL pointer). */
  s->devs_bytes = ((size_t)ndevs ? ndevs : 1) * sizeof *s->devs;
  p = mmap(NULL, s->devs_bytes, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    free(s);
    ff_error("stats: out of memory for %" PRIu32 " devices", ndevs);
    return NULL;
  }
  s->devs = p;
  for (i = 0; i < FF_STATS_STRIPES; i++)
    if (pthread_mutex_init(&s->stripes[i].lock, NULL)) {
      while (i--)
        pthread_mutex_destroy(&s->stripes[i].lock);
      munmap(s->devs, s->devs_bytes);
      free(s);
      ff_error("stats: cannot initialise a mutex");
      return NULL;
    }
  atomic_init(&s->inflight, 0);
  atomic_init(&s->inflight_max, 0);
  atomic_init(&s->dropped, 0);
  atomic_init(&s->alloc_failures, 0);
  atomic_init(&s->mem, sizeof *s + (size_t)ndevs * sizeof *s->devs);
  atomic_init(&s->since_ns, realtime_ns());
  atomic_init(&s->late, NULL);
  return s;
}

void
ff_stats_free(struct ff_stats *s)
{
  if (!s)
    return;
  for (uint32_t i = 0; i < s->ndevs; i++) {
    for (unsigned op = 0; op < FF_STAT_OPS; op++)
      free(atomic_load_explicit(&s->devs[i].hist[op], memory_order_relaxed));
    log_free(s, &s->devs[i]);
  }
  for (unsigned i = 0; i < FF_STATS_STRIPES; i++)
    pthread_mutex_destroy(&s->stripes[i].lock);
  free(atomic_load_explicit(&s->late, memory_order_relaxed));
  munmap(s->devs, s->devs_bytes);
  free(s);
}

size_t
ff_stats_memory(const struct ff_stats *s)
{
  return atomic_load_explicit(&((struct ff_stats *)s)->mem,
                              memory_order_relaxed);
}

/* --- the hot path ---------------------------------------------------- */

void
ff_stats_record(struct ff_stats *s, uint32_t dev, enum ff_stat_op op,
                uint64_t off, uint64_t len, uint64_t latency_ns, int error,
                int injected)
{
  unsigned o = (unsigned)op;
  struct dev *d;
  struct hist *h;

  if (dev >= s->ndevs || o >= FF_STAT_OPS) {
    inc(&s->dropped, 1);
    return;
  }
  d = &s->devs[dev];
  inc(&d->ops[o], 1);
  if (error) {
    inc(&d->errors, 1);
    if (injected)
      inc(&d->injected, 1);
  } else if (o != FF_STAT_FLUSH) {
    inc(&d->bytes[o], len);
  }
  h = hist_get(s, d, o);
  if (h) {
    atomic_max_u64(&h->max, latency_ns);
    atomic_min_u64(&h->min, latency_ns);
    inc(&h->b[bucket_of(latency_ns)], 1);
  } else {
    inc(&s->alloc_failures, 1);
  }
  if (o != FF_STAT_FLUSH)
    log_request(s, dev, o, off, len, error);
}

void
ff_stats_late(struct ff_stats *s, uint64_t late_ns)
{
  struct hist *h = atomic_load_explicit(&s->late, memory_order_acquire);

  if (!h) {
    struct hist *expected = NULL;

    if (!(h = hist_new())) {
      inc(&s->alloc_failures, 1);
      return;
    }
    if (!atomic_compare_exchange_strong_explicit(&s->late, &expected, h,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire)) {
      free(h); /* another thread published first */
      h = expected;
    } else
      mem_add(s, sizeof *h);
  }
  atomic_max_u64(&h->max, late_ns);
  atomic_min_u64(&h->min, late_ns);
  inc(&h->b[bucket_of(late_ns)], 1);
}

void
ff_stats_interrupted(struct ff_stats *s, uint32_t dev)
{
  if (dev >= s->ndevs) {
    inc(&s->dropped, 1);
    return;
  }
  inc(&s->devs[dev].interrupted, 1);
}

void
ff_stats_inflight_add(struct ff_stats *s, int delta)
{
  int64_t now =
    atomic_fetch_add_explicit(&s->inflight, delta, memory_order_relaxed) +
    delta;
  int64_t cur = atomic_load_explicit(&s->inflight_max, memory_order_relaxed);

  while (now > cur && !atomic_compare_exchange_weak_explicit(
                        &s->inflight_max, &cur, now, memory_order_relaxed,
                        memory_order_relaxed))
    ;
}

void
ff_stats_reset(struct ff_stats *s)
{
  for (uint32_t i = 0; i < s->ndevs; i++) {
    struct dev *d = &s->devs[i];
    struct stripe *st = &s->stripes[i % FF_STATS_STRIPES];

    for (unsigned op = 0; op < FF_STAT_OPS; op++) {
      struct hist *h =
        atomic_load_explicit(&d->hist[op], memory_order_acquire);

      atomic_store_explicit(&d->ops[op], 0, memory_order_relaxed);
      if (h)
        hist_clear(h);
    }
    atomic_store_explicit(&d->bytes[0], 0, memory_order_relaxed);
    atomic_store_explicit(&d->bytes[1], 0, memory_order_relaxed);
    atomic_store_explicit(&d->errors, 0, memory_order_relaxed);
    atomic_store_explicit(&d->injected, 0, memory_order_relaxed);
    atomic_store_explicit(&d->interrupted, 0, memory_order_relaxed);
    lock(&st->lock);
    log_free(s, d);
    unlock(&st->lock);
  }
  atomic_store_explicit(
    &s->inflight_max, atomic_load_explicit(&s->inflight, memory_order_relaxed),
    memory_order_relaxed);
  atomic_store_explicit(&s->dropped, 0, memory_order_relaxed);
  atomic_store_explicit(&s->alloc_failures, 0, memory_order_relaxed);
  if (atomic_load_explicit(&s->late, memory_order_acquire))
    hist_clear(atomic_load_explicit(&s->late, memory_order_acquire));
  atomic_store_explicit(&s->since_ns, realtime_ns(), memory_order_relaxed);
}

/* --- snapshots ------------------------------------------------------- */

/* A copy of one histogram, summed over devices for the totals. */
struct hsnap {
  uint64_t b[NB];
  uint64_t count, min, max;
};

static void
hsnap_init(struct hsnap *hs)
{
  memset(hs, 0, sizeof *hs);
  hs->min = UINT64_MAX;
}

static void
hsnap_add(struct hsnap *hs, struct hist *h)
{
  uint64_t mn, mx;

  if (!h)
    return;
  for (unsigned i = 0; i < NB; i++) {
    uint64_t c = ld(&h->b[i]);

    hs->b[i] += c;
    hs->count += c;
  }
  mx = ld(&h->max);
  mn = ld(&h->min);
  if (mx > hs->max)
    hs->max = mx;
  if (mn < hs->min)
    hs->min = mn;
}

/* Nearest-rank percentile pct (1..100) of hs: the middle of the bucket
 * holding that rank, clamped to the exact min/max when they lie in it
 * (if they do not, a concurrent record tore the copy: keep the middle). */
static uint64_t
hsnap_pct(const struct hsnap *hs, unsigned pct)
{
  uint64_t rank, cum = 0, lo, hi, v;
  unsigned i;

  if (!hs->count)
    return 0;
  rank = (hs->count * pct + 99) / 100;
  if (!rank)
    rank = 1;
  for (i = 0; i < NB - 1; i++) {
    cum += hs->b[i];
    if (cum >= rank)
      break;
  }
  bucket_range(i, &lo, &hi);
  if (i == NB - 1)
    return hs->max >= lo ? hs->max : lo;
  v = lo + (hi - lo) / 2;
  if (hs->max >= lo && hs->max < hi && v > hs->max)
    v = hs->max;
  if (hs->min >= lo && hs->min < hi && v < hs->min)
    v = hs->min;
  return v;
}

static json_int_t
jint(uint64_t v)
{
  return v > INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

static json_t *
latency_json(const struct hsnap *hs)
{
  json_t *buckets = json_array(), *o;

  if (!buckets)
    return NULL;
  for (unsigned i = 0; i < NB; i++) {
    uint64_t lo, hi;

    if (!hs->b[i])
      continue;
    bucket_range(i, &lo, &hi);
    if (json_array_append_new(
          buckets,
          json_pack("[o, I]",
                    i == NB - 1 ? json_null() : json_integer(jint(hi)),
                    jint(hs->b[i]))) < 0) {
      json_decref(buckets);
      return NULL;
    }
  }
  o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "count",
                jint(hs->count), "p50_ns", jint(hsnap_pct(hs, 50)), "p90_ns",
                jint(hsnap_pct(hs, 90)), "p99_ns", jint(hsnap_pct(hs, 99)),
                "min_ns", jint(hs->count ? hs->min : 0), "max_ns",
                jint(hs->max), "buckets", buckets);
  return o;
}

static json_t *
latencies_json(const struct hsnap hs[FF_STAT_OPS])
{
  json_t *o = json_object();

  if (!o)
    return NULL;
  for (unsigned op = 0; op < FF_STAT_OPS; op++)
    if (json_object_set_new(o, op_names[op], latency_json(&hs[op])) < 0) {
      json_decref(o);
      return NULL;
    }
  return o;
}

static json_t *
offsets_json(const uint64_t *v, size_t n)
{
  json_t *a = json_array();

  if (!a)
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (json_array_append_new(a, json_integer(jint(v[i]))) < 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

/* Plain-number sums for the totals. */
struct sums {
  uint64_t ops[FF_STAT_OPS], bytes[2], errors, injected, interrupted, blocks;
  uint64_t active;
  bool capped;
  struct hsnap hs[FF_STAT_OPS];
};

static json_t *
device_json(struct ff_stats *s, uint32_t i, const char *const *names,
            int include_idle, struct sums *t)
{
  struct dev *d = &s->devs[i];
  struct stripe *st = &s->stripes[i % FF_STATS_STRIPES];
  uint64_t ops[FF_STAT_OPS], bytes[2], errors, injected, interrupted;
  uint64_t nreads = 0;
  uint64_t first[FF_STATS_RING], last[FF_STATS_RING];
  uint64_t blocks = 0;
  size_t nfirst, nlast;
  bool capped = false;
  struct hsnap hs[FF_STAT_OPS];
  char namebuf[32];
  const char *name;
  json_t *o;

  for (unsigned op = 0; op < FF_STAT_OPS; op++)
    ops[op] = ld(&d->ops[op]);
  bytes[0] = ld(&d->bytes[0]);
  bytes[1] = ld(&d->bytes[1]);
  errors = ld(&d->errors);
  injected = ld(&d->injected);
  interrupted = ld(&d->interrupted);
  for (unsigned op = 0; op < FF_STAT_OPS; op++) {
    hsnap_init(&hs[op]);
    hsnap_add(&hs[op],
              atomic_load_explicit(&d->hist[op], memory_order_acquire));
    for (unsigned b = 0; b < NB; b++)
      t->hs[op].b[b] += hs[op].b[b];
    t->hs[op].count += hs[op].count;
    if (hs[op].max > t->hs[op].max)
      t->hs[op].max = hs[op].max;
    if (hs[op].min < t->hs[op].min)
      t->hs[op].min = hs[op].min;
  }
  lock(&st->lock);
  if (d->log) {
    nreads = d->log->nreads;
    memcpy(first, d->log->first, sizeof first);
    memcpy(last, d->log->last, sizeof last);
    blocks = d->log->n;
    capped = d->log->capped;
  }
  unlock(&st->lock);

  for (unsigned op = 0; op < FF_STAT_OPS; op++)
    t->ops[op] += ops[op];
  t->bytes[0] += bytes[0];
  t->bytes[1] += bytes[1];
  t->errors += errors;
  t->injected += injected;
  t->interrupted += interrupted;
  t->blocks += blocks;
  t->capped = t->capped || capped;
  if (ops[0] + ops[1] + ops[2] == 0) {
    if (!include_idle)
      return json_null(); /* a placeholder the caller skips */
  } else {
    t->active++;
  }

  /* Put the last ring in order: the oldest kept read first. */
  nfirst = nreads < FF_STATS_RING ? (size_t)nreads : FF_STATS_RING;
  nlast = nfirst;
  if (nreads > FF_STATS_RING) {
    uint64_t tmp[FF_STATS_RING];

    for (size_t k = 0; k < FF_STATS_RING; k++)
      tmp[k] = last[(nreads - FF_STATS_RING + k) % FF_STATS_RING];
    memcpy(last, tmp, sizeof last);
  }

  if (names && names[i]) {
    name = names[i];
  } else {
    snprintf(namebuf, sizeof namebuf, "dev%" PRIu32, i);
    name = namebuf;
  }
  o = json_pack(
    "{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:I, "
    "s:I, s:o, s:o, s:o}",
    "name", name, "index", (json_int_t)i, "reads", jint(ops[0]), "writes",
    jint(ops[1]), "flushes", jint(ops[2]), "bytes_read", jint(bytes[0]),
    "bytes_written", jint(bytes[1]), "blocks_touched", jint(blocks),
    "blocks_touched_capped", (int)capped, "errors", jint(errors),
    "errors_injected", jint(injected), "interrupted", jint(interrupted),
    "read_offsets_first", offsets_json(first, nfirst), "read_offsets_last",
    offsets_json(last, nlast), "latency", latencies_json(hs));
  return o;
}

json_t *
ff_stats_json(struct ff_stats *s, const char *const *names, int include_idle)
{
  json_t *devs = json_array(), *totals, *root;
  struct sums *t = calloc(1, sizeof *t);
  struct hsnap late;
  int64_t now = realtime_ns(), since;

  if (!devs || !t)
    goto oom;
  for (unsigned op = 0; op < FF_STAT_OPS; op++)
    hsnap_init(&t->hs[op]);
  for (uint32_t i = 0; i < s->ndevs; i++) {
    json_t *o = device_json(s, i, names, include_idle, t);

    if (!o)
      goto oom;
    if (json_is_null(o))
      continue;
    if (json_array_append_new(devs, o) < 0)
      goto oom;
  }
  totals = json_pack(
    "{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:o}", "reads",
    jint(t->ops[0]), "writes", jint(t->ops[1]), "flushes", jint(t->ops[2]),
    "bytes_read", jint(t->bytes[0]), "bytes_written", jint(t->bytes[1]),
    "blocks_touched", jint(t->blocks), "blocks_touched_capped", (int)t->capped,
    "errors", jint(t->errors), "errors_injected", jint(t->injected),
    "interrupted", jint(t->interrupted), "devices_active", jint(t->active),
    "latency", latencies_json(t->hs));
  if (!totals)
    goto oom;
  since = atomic_load_explicit(&s->since_ns, memory_order_relaxed);
  {
    struct hist *lh = atomic_load_explicit(&s->late, memory_order_acquire);

    hsnap_init(&late);
    if (lh)
      hsnap_add(&late, lh);
  }
  root = json_pack(
    "{s:s, s:i, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, "
    "s:{s:i, s:I, s:I, s:f}, s:o, s:o, s:o}",
    "format", "fusefarm-stats", "version", 1, "time", (double)now / 1e9,
    "since", (double)since / 1e9, "ndevs", (json_int_t)s->ndevs, "inflight",
    (json_int_t)atomic_load_explicit(&s->inflight, memory_order_relaxed),
    "inflight_max",
    (json_int_t)atomic_load_explicit(&s->inflight_max, memory_order_relaxed),
    "dropped_records", jint(ld(&s->dropped)), "alloc_failures",
    jint(ld(&s->alloc_failures)), "memory_bytes", jint(ff_stats_memory(s)),
    "histogram", "sub_buckets_per_octave", FF_STATS_HIST_SUB, "lowest_ns",
    (json_int_t)1 << FF_STATS_HIST_LOW_SHIFT, "highest_ns",
    (json_int_t)1 << FF_STATS_HIST_HIGH_SHIFT, "relative_error",
    0.5 / FF_STATS_HIST_SUB, "totals", totals, "devices", devs, "reply_late",
    latency_json(&late));
  free(t);
  if (!root)
    ff_error("stats: out of memory building the snapshot");
  return root;

oom:
  json_decref(devs);
  free(t);
  ff_error("stats: out of memory building the snapshot");
  return NULL;
}

char *
ff_stats_json_dump(const json_t *j, int indent)
{
  char *text = json_dumps(j, indent ? JSON_INDENT(2) : JSON_COMPACT);
  char *out = NULL;

  if (!text || asprintf(&out, "%s\n", text) < 0) {
    out = NULL;
    ff_error("stats snapshot: out of memory");
  }
  free(text);
  return out;
}

char *
ff_stats_json_text(struct ff_stats *s, const char *const *names,
                   int include_idle, int indent)
{
  json_t *j = ff_stats_json(s, names, include_idle);
  char *text;

  if (!j)
    return NULL;
  text = ff_stats_json_dump(j, indent);
  json_decref(j);
  return text;
}

char *
ff_stats_text(struct ff_stats *s, const char *const *names)
{
  json_t *j = ff_stats_json(s, names, 0);
  char *text;

  if (!j)
    return NULL;
  text = ff_stats_text_from_json(j, NULL);
  json_decref(j);
  return text;
}

/* --- the text table, from a JSON snapshot ---------------------------- */

/* Checked accessors: each names the path of what is missing or wrong. */
static const json_t *
get_obj(const json_t *o, const char *path, const char *key)
{
  const json_t *v = json_object_get(o, key);

  if (!v)
    ff_error("%s: missing \"%s\"", path, key);
  else if (!json_is_object(v))
    ff_error("%s.%s: expected an object", path, key);
  else
    return v;
  return NULL;
}

static int
get_u64(const json_t *o, const char *path, const char *key, uint64_t *out)
{
  const json_t *v = json_object_get(o, key);

  if (!v)
    return ff_error("%s: missing \"%s\"", path, key);
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return ff_error("%s.%s: expected a non-negative integer", path, key);
  *out = (uint64_t)json_integer_value(v);
  return 0;
}

static int
get_bool(const json_t *o, const char *path, const char *key, bool *out)
{
  const json_t *v = json_object_get(o, key);

  if (!v)
    return ff_error("%s: missing \"%s\"", path, key);
  if (!json_is_boolean(v))
    return ff_error("%s.%s: expected true or false", path, key);
  *out = json_is_true(v);
  return 0;
}

#define NCOLS 12

/* One row of the table, already formatted. */
struct row {
  char c[NCOLS][32];
};

static const char *const headers[NCOLS] = {
  "device", "reads",  "writes", "read_MiB", "blocks",   "p50_ms",
  "p90_ms", "p99_ms", "max_ms", "errors",   "injected", "interrupted",
};

static void
fmt_ms(char *buf, uint64_t ns, uint64_t count)
{
  if (!count)
    snprintf(buf, 32, "-");
  else
    snprintf(buf, 32, "%.3f", (double)ns / 1e6);
}

/* Fill row r (all but the name) from a device or totals object. */
static int
row_fill(struct row *r, const json_t *o, const char *path)
{
  char lpath[96];
  uint64_t reads, writes, bytes_read, blocks, errors, injected;
  uint64_t interrupted = 0;
  uint64_t count, p50, p90, p99, max;
  const json_t *lat, *rd;
  bool capped = false;

  if (get_u64(o, path, "reads", &reads) < 0 ||
      get_u64(o, path, "writes", &writes) < 0 ||
      get_u64(o, path, "bytes_read", &bytes_read) < 0 ||
      get_u64(o, path, "blocks_touched", &blocks) < 0 ||
      get_bool(o, path, "blocks_touched_capped", &capped) < 0 ||
      get_u64(o, path, "errors", &errors) < 0 ||
      get_u64(o, path, "errors_injected", &injected) < 0)
    return -1;
  /* Absent from snapshots made before it was counted: 0 then. */
  if (json_object_get(o, "interrupted") &&
      get_u64(o, path, "interrupted", &interrupted) < 0)
    return -1;
  lat = get_obj(o, path, "latency");
  if (!lat)
    return -1;
  snprintf(lpath, sizeof lpath, "%s.latency", path);
  rd = get_obj(lat, lpath, "read");
  if (!rd)
    return -1;
  snprintf(lpath, sizeof lpath, "%s.latency.read", path);
  if (get_u64(rd, lpath, "count", &count) < 0 ||
      get_u64(rd, lpath, "p50_ns", &p50) < 0 ||
      get_u64(rd, lpath, "p90_ns", &p90) < 0 ||
      get_u64(rd, lpath, "p99_ns", &p99) < 0 ||
      get_u64(rd, lpath, "max_ns", &max) < 0)
    return -1;
  snprintf(r->c[1], 32, "%" PRIu64, reads);
  snprintf(r->c[2], 32, "%" PRIu64, writes);
  snprintf(r->c[3], 32, "%.2f", (double)bytes_read / (1024.0 * 1024.0));
  snprintf(r->c[4], 32, "%" PRIu64 "%s", blocks, capped ? "+" : "");
  fmt_ms(r->c[5], p50, count);
  fmt_ms(r->c[6], p90, count);
  fmt_ms(r->c[7], p99, count);
  fmt_ms(r->c[8], max, count);
  snprintf(r->c[9], 32, "%" PRIu64, errors);
  snprintf(r->c[10], 32, "%" PRIu64, injected);
  snprintf(r->c[11], 32, "%" PRIu64, interrupted);
  return 0;
}

static char *
fail_text(char **errmsg)
{
  if (errmsg)
    *errmsg = strdup(ff_errmsg());
  return NULL;
}

char *
ff_stats_text_from_json(const json_t *j, char **errmsg)
{
  const json_t *v, *devs, *totals;
  uint64_t version, inflight, inflight_max, ndevs, active;
  struct row *rows = NULL;
  const char **names = NULL;
  size_t n, w[NCOLS];
  char path[64], *buf = NULL;
  size_t bufsz = 0;
  FILE *f;

  if (errmsg)
    *errmsg = NULL;
  if (!j || !json_is_object(j)) {
    ff_error("stats json: expected an object");
    return fail_text(errmsg);
  }
  v = json_object_get(j, "format");
  if (!v || !json_is_string(v) ||
      strcmp(json_string_value(v), "fusefarm-stats")) {
    ff_error("stats json: \"format\" is not \"fusefarm-stats\"");
    return fail_text(errmsg);
  }
  if (get_u64(j, "stats json", "version", &version) < 0)
    return fail_text(errmsg);
  if (version != 1) {
    ff_error("stats json: version %" PRIu64 " is not supported (expected 1)",
             version);
    return fail_text(errmsg);
  }
  if (get_u64(j, "stats json", "inflight", &inflight) < 0 ||
      get_u64(j, "stats json", "inflight_max", &inflight_max) < 0 ||
      get_u64(j, "stats json", "ndevs", &ndevs) < 0)
    return fail_text(errmsg);
  totals = get_obj(j, "stats json", "totals");
  if (!totals || get_u64(totals, "totals", "devices_active", &active) < 0)
    return fail_text(errmsg);
  devs = json_object_get(j, "devices");
  if (!devs || !json_is_array(devs)) {
    ff_error("stats json: %s",
             devs ? "\"devices\" is not an array" : "missing \"devices\"");
    return fail_text(errmsg);
  }

  /* Rows: devices, then the totals. */
  n = json_array_size(devs);
  rows = calloc(n + 2, sizeof *rows);
  if (!rows) {
    ff_error("stats: out of memory");
    return fail_text(errmsg);
  }
  for (size_t i = 0; i < NCOLS; i++)
    snprintf(rows[0].c[i], 32, "%s", headers[i]);
  names = calloc(n + 2, sizeof *names);
  if (!names) {
    ff_error("stats: out of memory");
    goto fail;
  }
  names[0] = headers[0];
  for (size_t i = 0; i < n; i++) {
    const json_t *d = json_array_get(devs, i), *nm;

    snprintf(path, sizeof path, "devices[%zu]", i);
    if (!json_is_object(d)) {
      ff_error("%s: expected an object", path);
      goto fail;
    }
    nm = json_object_get(d, "name");
    if (!nm || !json_is_string(nm)) {
      ff_error("%s: %s", path,
               nm ? "\"name\" is not a string" : "missing \"name\"");
      goto fail;
    }
    names[i + 1] = json_string_value(nm);
    if (row_fill(&rows[i + 1], d, path) < 0)
      goto fail;
  }
  names[n + 1] = "total";
  if (row_fill(&rows[n + 1], totals, "totals") < 0)
    goto fail;

  /* Column widths: the name column left-aligned, numbers right. */
  for (size_t c = 0; c < NCOLS; c++) {
    w[c] = 0;
    for (size_t r = 0; r < n + 2; r++) {
      size_t l = strlen(c ? rows[r].c[c] : names[r]);

      if (l > w[c])
        w[c] = l;
    }
  }
  f = open_memstream(&buf, &bufsz);
  if (!f) {
    ff_error("stats: open_memstream: %m");
    goto fail;
  }
  for (size_t r = 0; r < n + 2; r++) {
    fprintf(f, "%-*s", (int)w[0], names[r]);
    for (size_t c = 1; c < NCOLS; c++)
      fprintf(f, "  %*s", (int)w[c], rows[r].c[c]);
    fputc('\n', f);
  }
  fprintf(f,
          "in flight: %" PRIu64 " (max %" PRIu64 "); %" PRIu64 " of %" PRIu64
          " devices with I/O; latency columns are reads\n",
          inflight, inflight_max, active, ndevs);
  {
    /* the server's own share (absent in older snapshots) */
    const json_t *late = json_object_get(j, "reply_late");
    uint64_t cnt, p50, p99, mx;

    if (json_is_object(late) &&
        get_u64(late, "reply_late", "count", &cnt) == 0 && cnt &&
        get_u64(late, "reply_late", "p50_ns", &p50) == 0 &&
        get_u64(late, "reply_late", "p99_ns", &p99) == 0 &&
        get_u64(late, "reply_late", "max_ns", &mx) == 0)
      fprintf(f,
              "replies after the model's time: p50 %.1f us, p99 %.1f us, "
              "max %.1f us (%" PRIu64 " replies)\n",
              (double)p50 / 1e3, (double)p99 / 1e3, (double)mx / 1e3, cnt);
  }
  if (fclose(f) == EOF) {
    free(buf);
    buf = NULL;
    ff_error("stats: out of memory");
    goto fail;
  }
  free(rows);
  free(names);
  return buf;

fail:
  free(rows);
  free(names);
  return fail_text(errmsg);
}

/* --- the text table, from a snapshot's JSON text --------------------- */

/* The document at json, parsed and checked to be a stats snapshot. */
static json_t *
load_snapshot(const char *json, size_t len, const char *name)
{
  json_error_t jerr;
  const json_t *fmt;
  json_t *j;

  if (!name)
    name = "stats json";
  j = json_loadb(json, len, 0, &jerr);
  if (!j) {
    ff_error("%s:%d:%d: not valid JSON: %s", name, jerr.line, jerr.column,
             jerr.text);
    return NULL;
  }
  fmt = json_object_get(j, "format");
  if (!json_is_object(j) || !json_is_string(fmt) ||
      strcmp(json_string_value(fmt), "fusefarm-stats")) {
    ff_error("%s: not a stats snapshot (\"format\" is not "
             "\"fusefarm-stats\")",
             name);
    json_decref(j);
    return NULL;
  }
  return j;
}

int
ff_stats_json_text_check(const char *json, size_t len, const char *name)
{
  json_t *j = load_snapshot(json, len, name);

  if (!j)
    return -1;
  json_decref(j);
  return 0;
}

/* Drop devices with no request (the rule of ff_stats_json's
 * include_idle = 0: reads, writes and flushes all 0).  Anything
 * malformed is kept for ff_stats_text_from_json to report. */
static void
drop_idle(json_t *j)
{
  static const char *const keys[] = {"reads", "writes", "flushes"};
  json_t *devs = json_object_get(j, "devices");
  size_t i = 0;

  if (!json_is_array(devs))
    return;
  while (i < json_array_size(devs)) {
    json_t *d = json_array_get(devs, i);
    int idle = json_is_object(d);

    for (size_t k = 0; idle && k < 3; k++) {
      json_t *v = json_object_get(d, keys[k]);

      idle = json_is_integer(v) && json_integer_value(v) == 0;
    }
    if (idle)
      json_array_remove(devs, i);
    else
      i++;
  }
}

char *
ff_stats_text_from_json_text(const char *json, size_t len, const char *name,
                             int all, struct ff_stats_text_info *info,
                             char **errmsg)
{
  json_t *j;
  size_t listed;
  char *text;

  if (errmsg)
    *errmsg = NULL;
  j = load_snapshot(json, len, name);
  if (!j)
    return fail_text(errmsg);
  listed = json_array_size(json_object_get(j, "devices"));
  if (!all)
    drop_idle(j);
  text = ff_stats_text_from_json(j, NULL);
  if (!text) {
    if (name)
      ff_error_prefix("%s: ", name);
    json_decref(j);
    return fail_text(errmsg);
  }
  /* Rendering checked "ndevs": an integer >= 0. */
  if (info) {
    info->listed = listed;
    info->ndevs = (uint64_t)json_integer_value(json_object_get(j, "ndevs"));
  }
  json_decref(j);
  return text;
}
