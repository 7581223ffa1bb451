/* fusefarm: the I/O model (see ff-iomodel.h, docs/profile-format.md).
 *
 * Thread model (see also ff-iomodel.h): the model's current runtime state
 * (struct iostate: profile, time origin, per-device atomics, queues) is
 * published through one atomic pointer; a submitter loads it once and
 * uses only it.  Per-device state is updated with atomic fetch-add and
 * compare-and-swap, never under a lock.  Each queue has a mutex guarding
 * its slot heap, held for one heap update and never while taking another
 * lock.  switch_lock serialises set_profile calls and guards the chain of
 * replaced states, which are freed only by ff_iomodel_free (no reader can
 * still hold them then).
 */
#include "ff-iomodel.h"
#include "ff-error.h"
#include "ff-profile-int.h"
#include "ff-util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* 48 bytes per device, all updated lock-free. */
struct devstate {
  _Atomic uint64_t count;     /* requests so far: the random stream index and
                                 what vanish_after/eio_after count */
  _Atomic uint64_t ready_at;  /* end of spin-up; 0: not accessed yet */
  _Atomic uint64_t bw_next;   /* bandwidth bucket: next free time */
  _Atomic uint64_t iops_next; /* IOPS bucket: next free time */
  _Atomic uint64_t debt_ns;   /* write cache: the write latency the cached
                                 writes did not pay; the next flush does */
  _Atomic uint64_t dirty;     /* write cache: bytes cached since that flush */
};

/* depth slots, each busy until a time; a binary min-heap by that time. */
struct ioqueue {
  pthread_mutex_t lock;
  uint32_t depth;
  uint64_t service_ns;
  uint64_t *heap;
};

struct iostate {
  struct ff_profile *p;
  uint64_t origin;
  struct devstate *devs; /* [p->ndevs] */
  uint32_t ngq;          /* global queue shards (0: none) */
  struct ioqueue *gq;
  uint32_t nq; /* group queue instances */
  struct ioqueue *q;
  struct iostate *older; /* the state this one replaced */
};

struct ff_iomodel {
  const struct ff_farm *farm;
  _Atomic(struct iostate *) cur;
  pthread_mutex_t switch_lock;
};

static void
queues_free(struct ioqueue *q, uint32_t n)
{
  if (!q)
    return;
  for (uint32_t i = 0; i < n; i++) {
    if (q[i].heap)
      pthread_mutex_destroy(&q[i].lock);
    free(q[i].heap);
  }
  free(q);
}

static struct ioqueue *
queues_new(const struct qspec *specs, uint32_t n, int same)
{
  struct ioqueue *q = calloc(n ? n : 1, sizeof *q);

  if (!q)
    return NULL;
  for (uint32_t i = 0; i < n; i++) {
    const struct qspec *s = same ? specs : &specs[i];

    q[i].depth = s->depth;
    q[i].service_ns = s->service_ns;
    q[i].heap = calloc(s->depth, sizeof *q[i].heap);
    if (!q[i].heap || pthread_mutex_init(&q[i].lock, NULL) != 0) {
      free(q[i].heap);
      q[i].heap = NULL;
      queues_free(q, i);
      return NULL;
    }
  }
  return q;
}

static void
state_free(struct iostate *st)
{
  while (st) {
    struct iostate *older = st->older;

    queues_free(st->gq, st->ngq);
    queues_free(st->q, st->nq);
    free(st->devs);
    ff_profile_free(st->p);
    free(st);
    st = older;
  }
}

/* A fresh runtime state for p; takes ownership of p (frees it on
 * failure). */
static struct iostate *
state_new(const struct ff_farm *farm, struct ff_profile *p, uint64_t origin)
{
  struct iostate *st;

  if (!p && !(p = ff_profile_ideal(farm)))
    return NULL;
  if (p->ndevs != ff_farm_ndevs(farm) ||
      p->fingerprint != ff_farm_fingerprint(farm)) {
    ff_error("profile %s was loaded for another farm (%u devices, this farm "
             "has %u)",
             p->name, p->ndevs, ff_farm_ndevs(farm));
    ff_profile_free(p);
    return NULL;
  }
  st = calloc(1, sizeof *st);
  if (!st) {
    ff_profile_free(p);
    ff_error("out of memory");
    return NULL;
  }
  st->p = p;
  st->origin = origin;
  st->devs = calloc(p->ndevs ? p->ndevs : 1, sizeof *st->devs);
  if (p->global.depth) {
    st->ngq = p->global.shards;
    st->gq = queues_new(&p->global, st->ngq, 1);
  }
  st->nq = p->nqueues;
  st->q = queues_new(p->queues, st->nq, 0);
  if (!st->devs || (p->global.depth && !st->gq) || !st->q) {
    if (!st->gq)
      st->ngq = 0;
    if (!st->q)
      st->nq = 0;
    state_free(st);
    ff_error("out of memory");
    return NULL;
  }
  return st;
}

struct ff_iomodel *
ff_iomodel_new(const struct ff_farm *farm, struct ff_profile *p,
               uint64_t start_ns)
{
  struct ff_iomodel *m = calloc(1, sizeof *m);
  struct iostate *st;

  if (!m) {
    ff_profile_free(p);
    ff_error("out of memory");
    return NULL;
  }
  st = state_new(farm, p, start_ns);
  if (!st || pthread_mutex_init(&m->switch_lock, NULL) != 0) {
    if (st) {
      state_free(st);
      ff_error("cannot initialise a mutex");
    }
    free(m);
    return NULL;
  }
  m->farm = farm;
  atomic_init(&m->cur, st);
  return m;
}

void
ff_iomodel_free(struct ff_iomodel *m)
{
  if (!m)
    return;
  state_free(atomic_load(&m->cur));
  pthread_mutex_destroy(&m->switch_lock);
  free(m);
}

int
ff_iomodel_set_profile(struct ff_iomodel *m, struct ff_profile *p,
                       uint64_t now_ns)
{
  struct iostate *st = state_new(m->farm, p, now_ns);

  if (!st)
    return -1;
  pthread_mutex_lock(&m->switch_lock);
  st->older = atomic_load_explicit(&m->cur, memory_order_relaxed);
  atomic_store_explicit(&m->cur, st, memory_order_release);
  pthread_mutex_unlock(&m->switch_lock);
  return 0;
}

static struct iostate *
current(struct ff_iomodel *m)
{
  return atomic_load_explicit(&m->cur, memory_order_acquire);
}

/* Take the earliest free slot at or after t; the request leaves the queue
 * at the returned time. */
static uint64_t
queue_take(struct ioqueue *q, uint64_t t)
{
  uint64_t *h = q->heap, start, end;
  uint32_t i = 0, n = q->depth;

  pthread_mutex_lock(&q->lock);
  start = h[0] > t ? h[0] : t;
  end = start + q->service_ns;
  for (;;) { /* replace the root by end and sift it down */
    uint32_t l = 2 * i + 1, r = l + 1, s = i;
    uint64_t v = end;

    if (l < n && h[l] < v) {
      s = l;
      v = h[l];
    }
    if (r < n && h[r] < v)
      s = r;
    if (s == i)
      break;
    h[i] = h[s];
    i = s;
  }
  h[i] = end;
  pthread_mutex_unlock(&q->lock);
  return end;
}

/* A virtual-clock bucket: the request may start at max(t, next free time);
 * its cost moves the next free time on. */
static uint64_t
bucket_take(_Atomic uint64_t *next, uint64_t t, uint64_t cost)
{
  uint64_t old = atomic_load_explicit(next, memory_order_relaxed), start;

  do
    start = old > t ? old : t;
  while (!atomic_compare_exchange_weak_explicit(
    next, &old, start + cost, memory_order_relaxed, memory_order_relaxed));
  return start;
}

static uint64_t
xfer_ns(uint64_t len, uint64_t bandwidth)
{
  unsigned __int128 v = (unsigned __int128)len * 1000000000u / bandwidth;

  return v > FF_MAX_DURATION_NS ? FF_MAX_DURATION_NS : (uint64_t)v;
}

/* Stall windows are [origin + k*every, origin + k*every + duration) for
 * k >= 1: the first one opens one period after the profile took effect. */
static uint64_t
stall_end(uint64_t t, uint64_t origin, uint64_t every, uint64_t dur)
{
  uint64_t rel, k;

  if (t < origin)
    return t;
  rel = t - origin;
  k = rel / every;
  if (k >= 1 && rel - k * every < dur)
    return origin + k * every + dur;
  return t;
}

/* The first request of a device sets the end of spin-up; every request
 * waits for it (in practice: the first pays it, and those arriving while
 * the device spins up wait with it). */
static uint64_t
spinup(struct devstate *ds, uint64_t t, uint64_t spin)
{
  uint64_t r = atomic_load_explicit(&ds->ready_at, memory_order_relaxed);

  if (r == 0) {
    uint64_t want = t + spin;

    if (atomic_compare_exchange_strong_explicit(
          &ds->ready_at, &r, want, memory_order_relaxed, memory_order_relaxed))
      return want;
  }
  return t > r ? t : r;
}

/* Write cache: 1 when a write of len bytes fits in the cache (it is then
 * counted as dirty), 0 when the cache is full (the write goes through). */
static int
cache_take(struct devstate *ds, uint64_t size, uint64_t len)
{
  uint64_t old;

  if (size == 0)
    return 1;
  old = atomic_fetch_add_explicit(&ds->dirty, len, memory_order_relaxed);
  if (old + len <= size && old + len >= old)
    return 1;
  atomic_fetch_sub_explicit(&ds->dirty, len, memory_order_relaxed);
  return 0;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
  return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t
mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int
in_eio_range(const struct ff_profile *p, const struct devclass *cl,
             uint64_t off, uint64_t len)
{
  uint64_t end = off + len < off ? UINT64_MAX : off + len;

  if (len == 0)
    return 0;
  for (uint32_t i = 0; i < cl->range_count; i++) {
    const struct eio_range *r = &p->ranges[cl->range_first + i];
    uint64_t rend = r->off + r->len < r->off ? UINT64_MAX : r->off + r->len;

    if (off < rend && r->off < end)
      return 1;
  }
  return 0;
}

void
ff_iomodel_submit(struct ff_iomodel *m, uint32_t dev, enum ff_op op,
                  uint64_t off, uint64_t len, uint64_t now_ns,
                  struct ff_io_decision *out)
{
  const struct iostate *st = current(m);
  const struct ff_profile *p = st->p;
  const struct devclass *cl;
  struct devstate *ds;
  uint64_t rel, n, h, lat, t = now_ns;

  out->done_ns = now_ns;
  out->error = 0;
  out->injected = 0;
  if (dev >= p->ndevs) {
    out->error = ENODEV;
    return;
  }
  if ((unsigned)op >= FF_OP_COUNT) {
    out->error = EIO;
    return;
  }
  cl = &p->classes[p->dev_class[dev]];
  rel = now_ns > st->origin ? now_ns - st->origin : 0;
  if (rel < cl->appear_at_ns || rel >= cl->vanish_at_ns) {
    out->error = ENODEV;
    out->injected = 1;
    return;
  }

  /* n numbers the device's requests in decision order (the fetch-add is
   * the order): the count triggers compare it, and it indexes the random
   * stream. */
  ds = &st->devs[dev];
  n = atomic_fetch_add_explicit(&ds->count, 1, memory_order_relaxed);
  if (n >= cl->vanish_after) {
    out->error = ENODEV;
    out->injected = 1;
    return;
  }
  h = ff_hash4(p->seed, dev, n, (uint64_t)op);
  if (st->ngq)
    t = queue_take(&st->gq[dev % st->ngq], t);
  if (p->dev_queue[dev] != FF_NONE)
    t = queue_take(&st->q[p->dev_queue[dev]], t);
  if (cl->bandwidth)
    t = bucket_take(&ds->bw_next, t, xfer_ns(len, cl->bandwidth));
  if (cl->iops_cost_ns)
    t = bucket_take(&ds->iops_next, t, cl->iops_cost_ns);
  if (cl->stall_every_ns)
    t = stall_end(t, st->origin, cl->stall_every_ns, cl->stall_dur_ns);
  if (cl->spinup_ns)
    t = spinup(ds, t, cl->spinup_ns);
  lat = ff_dist_clamp_ns(ff_dist_quantile(&cl->lat[op], ff_u01(h)));
  if (cl->wcache && op == FF_OP_WRITE &&
      cache_take(ds, cl->wcache_size, len)) {
    atomic_fetch_add_explicit(&ds->debt_ns, lat, memory_order_relaxed);
    lat = 0;
  } else if (cl->wcache && op == FF_OP_FLUSH) {
    /* The cached writes are written back one after another. */
    t = sat_add(
      t, atomic_exchange_explicit(&ds->debt_ns, 0, memory_order_relaxed));
    atomic_store_explicit(&ds->dirty, 0, memory_order_relaxed);
  }
  t = sat_add(t, lat);
  out->done_ns = t;

  if (n >= cl->eio_after) {
    out->error = EIO;
    out->injected = 1;
  } else if (cl->range_count && in_eio_range(p, cl, off, len)) {
    out->error = EIO;
    out->injected = 1;
  } else if (cl->eio_rate > 0 &&
             ff_u01(mix64(h ^ 0x9E3779B97F4A7C15ull)) < cl->eio_rate) {
    out->error = EIO;
    out->injected = 1;
  }
}

int
ff_iomodel_present(struct ff_iomodel *m, uint32_t dev, uint64_t now_ns)
{
  const struct iostate *st = current(m);
  const struct ff_profile *p = st->p;
  uint64_t rel = now_ns > st->origin ? now_ns - st->origin : 0;

  if (dev >= p->ndevs)
    return 0;
  return rel >= p->classes[p->dev_class[dev]].appear_at_ns;
}

int
ff_iomodel_direct_io(struct ff_iomodel *m, uint32_t dev)
{
  const struct ff_profile *p = current(m)->p;

  if (dev >= p->ndevs)
    return 1;
  return p->classes[p->dev_class[dev]].direct_io;
}

int
ff_iomodel_write_cache(struct ff_iomodel *m, uint32_t dev)
{
  const struct ff_profile *p = current(m)->p;

  if (dev >= p->ndevs)
    return 0;
  return p->classes[p->dev_class[dev]].wcache;
}

int
ff_iomodel_untimed(struct ff_iomodel *m, uint32_t dev)
{
  const struct ff_profile *p = current(m)->p;
  const struct devclass *c;

  if (dev >= p->ndevs || p->global.depth ||
      (p->dev_queue && p->dev_queue[dev] != FF_NONE))
    return 0;
  c = &p->classes[p->dev_class[dev]];
  for (unsigned op = 0; op < FF_OP_COUNT; op++)
    if (c->lat[op].kind != DIST_FIXED || c->lat[op].a != 0)
      return 0;
  return !c->spinup_ns && !c->stall_every_ns && !c->bandwidth &&
         !c->iops_cost_ns && c->eio_rate == 0 && !c->range_count &&
         !c->appear_at_ns && c->vanish_at_ns == UINT64_MAX &&
         c->vanish_after == UINT64_MAX && c->eio_after == UINT64_MAX &&
         !c->wcache;
}

int
ff_iomodel_rotational(struct ff_iomodel *m)
{
  return current(m)->p->rotational;
}

const char *
ff_iomodel_profile_name(struct ff_iomodel *m)
{
  return current(m)->p->name;
}

uint64_t
ff_iomodel_latency_quantile(struct ff_iomodel *m, uint32_t dev, enum ff_op op,
                            double q)
{
  const struct ff_profile *p = current(m)->p;

  if (dev >= p->ndevs || (unsigned)op >= FF_OP_COUNT)
    return 0;
  if (!(q > 0x1p-54))
    q = 0x1p-54;
  if (q > 1 - 0x1p-53)
    q = 1 - 0x1p-53;
  return ff_dist_clamp_ns(
    ff_dist_quantile(&p->classes[p->dev_class[dev]].lat[op], q));
}

static uint64_t
median_ns(const struct ff_profile *p, uint32_t dev, enum ff_op op)
{
  return ff_dist_clamp_ns(
    ff_dist_quantile(&p->classes[p->dev_class[dev]].lat[op], 0.5));
}

/* One profile throughout: a concurrent set_profile must not mix two. */
size_t
ff_iomodel_slow_devices(struct ff_iomodel *m, unsigned char *slow)
{
  const struct ff_profile *p = current(m)->p;
  uint64_t low_r = UINT64_MAX, low_w = UINT64_MAX;
  size_t n = 0;

  for (uint32_t d = 0; d < p->ndevs; d++) {
    uint64_t r = median_ns(p, d, FF_OP_READ), w = median_ns(p, d, FF_OP_WRITE);

    low_r = r < low_r ? r : low_r;
    low_w = w < low_w ? w : low_w;
  }
  for (uint32_t d = 0; d < p->ndevs; d++) {
    slow[d] = median_ns(p, d, FF_OP_READ) > low_r ||
              median_ns(p, d, FF_OP_WRITE) > low_w;
    n += slow[d];
  }
  return n;
}
