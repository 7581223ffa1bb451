/* fusefarm: delayed work without sleeping threads (see ff-sched.h for
 * the thread model). */
#include "ff-sched.h"
#include "ff-error.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* item->state, under the heap mutex. */
enum {
  ITEM_NEW,       /* not added yet (zeroed), or given back by a cancel */
  ITEM_WAITING,   /* in the heap */
  ITEM_TAKEN,     /* handed to the workers */
  ITEM_CANCELLED, /* cancelled before it was added: the add refuses it */
};

struct ff_sched {
  pthread_mutex_t lock;        /* guards heap, n, alloc, stopping */
  pthread_cond_t timer_cond;   /* the timer thread waits here */
  struct ff_sched_item **heap; /* min-heap on due_ns */
  size_t n, alloc;
  int stopping;

  pthread_mutex_t run_lock; /* guards run_head/tail, run_stop */
  pthread_cond_t run_cond;
  struct ff_sched_item *run_head, *run_tail;
  int run_stop;

  uint64_t pending, max_pending; /* under lock */
  uint64_t seq;                  /* under lock: the next item's arrival */
  /* timer thread only: how late its timed waits wake (ns, a running
   * mean): it waits that much less and spins the rest */
  uint64_t wake_lead;

  /* The CPU wake hold (ff_sched_hold_cpus), under lock: hold_fd (-1:
   * none), whether the CPUs are held now and since when, how often and
   * how long in all, why the hold was given up. */
  int hold_fd;
  uint64_t hold_linger;
  int held;
  uint64_t held_since, holds, held_ns;
  int hold_errno;

  pthread_t timer;
  pthread_t *workers;
  unsigned nworkers;
};

uint64_t
ff_now_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Earlier due first; equal due times in arrival order. */
static int
before(const struct ff_sched_item *a, const struct ff_sched_item *b)
{
  return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

/* Exchange two heap entries, keeping each item's slot. */
static void
heap_swap(struct ff_sched_item **h, size_t i, size_t j)
{
  struct ff_sched_item *t = h[i];

  h[i] = h[j];
  h[j] = t;
  h[i]->slot = i;
  h[j]->slot = j;
}

static void
heap_up(struct ff_sched_item **h, size_t i)
{
  while (i > 0) {
    size_t p = (i - 1) / 2;

    if (!before(h[i], h[p]))
      break;
    heap_swap(h, i, p);
    i = p;
  }
}

static void
heap_down(struct ff_sched_item **h, size_t n, size_t i)
{
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;

    if (l < n && before(h[l], h[m]))
      m = l;
    if (r < n && before(h[r], h[m]))
      m = r;
    if (m == i)
      return;
    heap_swap(h, i, m);
    i = m;
  }
}

/* Take the item at slot i out of the heap of s (lock held). */
static struct ff_sched_item *
heap_take(struct ff_sched *s, size_t i)
{
  struct ff_sched_item *it = s->heap[i], *last = s->heap[--s->n];

  if (i < s->n) {
    s->heap[i] = last;
    last->slot = i;
    heap_up(s->heap, i);
    heap_down(s->heap, s->n, last->slot);
  }
  return it;
}

/* Queue head..tail for the workers, unless it is a lone item and the
 * run queue is empty (lone_ok): then 0, and the caller runs it; else 1.
 * One lock round either way. */
static int
run_push(struct ff_sched *s, struct ff_sched_item *head,
         struct ff_sched_item *tail, int lone_ok)
{
  pthread_mutex_lock(&s->run_lock);
  if (lone_ok && head == tail && !s->run_head) {
    pthread_mutex_unlock(&s->run_lock);
    return 0;
  }
  if (s->run_tail)
    s->run_tail->next = head;
  else
    s->run_head = head;
  s->run_tail = tail;
  pthread_cond_broadcast(&s->run_cond);
  pthread_mutex_unlock(&s->run_lock);
  return 1;
}

/* at (ns, CLOCK_MONOTONIC) as the timer condition's deadline. */
static struct timespec
abs_ts(uint64_t at)
{
  return (struct timespec){
    .tv_sec = (time_t)(at / 1000000000u),
    .tv_nsec = (long)(at % 1000000000u),
  };
}

/* The most the timer thread waits less than it should (it spins the
 * rest): a wake-up later than this is the machine's load, not its timer. */
#define WAKE_LEAD_MAX 200000u

/* Wait on the timer condition until at (ns, CLOCK_MONOTONIC), or until
 * an add signals it.  A wait that timed out tells how late the thread
 * woke: wake_lead follows that (a running mean over ~8 wake-ups).  Called
 * and returns with the lock held. */
static void
timed_wait(struct ff_sched *s, uint64_t at)
{
  struct timespec ts = abs_ts(at);

  if (pthread_cond_timedwait(&s->timer_cond, &s->lock, &ts) == ETIMEDOUT) {
    uint64_t now = ff_now_ns(), late = now > at ? now - at : 0;

    if (late > WAKE_LEAD_MAX)
      late = WAKE_LEAD_MAX;
    s->wake_lead = s->wake_lead - s->wake_lead / 8 + late / 8;
  }
}

/* The head item is due at due, sooner than the thread would wake for
 * it: spin to it without the lock (an add of an earlier item waits for
 * the next round, at most wake_lead).  Called and returns with the lock
 * held. */
static void
spin_until(struct ff_sched *s, uint64_t due)
{
  pthread_mutex_unlock(&s->lock);
  while (ff_now_ns() < due)
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    ;
#endif
  pthread_mutex_lock(&s->lock);
}

/* Hold the CPUs awake (on) or let them go (!on): 0 or -1 (the kernel's
 * "no constraint") written to the hold fd, a /dev/cpu_dma_latency.  A
 * write that fails gives the hold up for good: the fd is closed (the
 * kernel drops its request with it) and hold_errno says why; items run as
 * before.  Lock held. */
static void
hold_set(struct ff_sched *s, int on)
{
  int32_t v = on ? 0 : -1;
  uint64_t now = ff_now_ns();

  if (write(s->hold_fd, &v, sizeof v) != (ssize_t)sizeof v) {
    s->hold_errno = errno ? errno : EIO;
    close(s->hold_fd);
    s->hold_fd = -1;
    on = 0;
  }
  if (on && !s->held) {
    s->holds++;
    s->held_since = now;
  } else if (!on && s->held) {
    s->held_ns += now - s->held_since;
  }
  s->held = on;
}

/* With the heap empty: wait for an add; while the CPUs are held, for at
 * most hold_linger, then let them go if nothing was added and nothing is
 * running.  Called and returns with the lock held. */
static void
idle_wait(struct ff_sched *s)
{
  if (s->held) {
    struct timespec ts = abs_ts(ff_now_ns() + s->hold_linger);

    if (pthread_cond_timedwait(&s->timer_cond, &s->lock, &ts) == ETIMEDOUT &&
        s->n == 0 && s->pending == 0)
      hold_set(s, 0);
  } else {
    pthread_cond_wait(&s->timer_cond, &s->lock);
  }
}

static void *
timer_main(void *arg)
{
  struct ff_sched *s = arg;

  /* The kernel may fire a timed wait up to the thread's timer slack late
   * (50 us by default), which every delayed reply would inherit: 1 ns,
   * the least it takes (docs/benchmarks.md, "Where the time goes"). */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  pthread_mutex_lock(&s->lock);
  for (;;) {
    struct ff_sched_item *head = NULL, *tail = NULL;
    uint64_t now;

    while (!s->stopping && s->n == 0)
      idle_wait(s);
    if (s->stopping && s->n == 0)
      break;
    if (!s->stopping && s->hold_fd >= 0 && !s->held)
      hold_set(s, 1);
    now = ff_now_ns();
    if (!s->stopping && s->heap[0]->due_ns > now) {
      uint64_t due = s->heap[0]->due_ns;

      if (due - now > s->wake_lead)
        timed_wait(s, due - s->wake_lead);
      else
        spin_until(s, due);
      continue;
    }
    /* Take every due item (all of them when stopping). */
    while (s->n && (s->stopping || s->heap[0]->due_ns <= now)) {
      struct ff_sched_item *it = heap_take(s, 0);

      it->state = ITEM_TAKEN;
      it->next = NULL;
      if (tail)
        tail->next = it;
      else
        head = it;
      tail = it;
    }
    pthread_mutex_unlock(&s->lock);
    /* A lone due item with no earlier one still queued runs here, on
     * time: handing it to a worker would add that thread's wake-up to its
     * latency (docs/benchmarks.md, "Where the time goes").  Several go to
     * the workers, in parallel; either way items start in due order. */
    if (!run_push(s, head, tail, 1)) {
      head->by_timer = 1;
      head->fn(head);
      pthread_mutex_lock(&s->lock);
      s->pending--;
      continue;
    }
    pthread_mutex_lock(&s->lock);
  }
  if (s->held)
    hold_set(s, 0);
  if (s->hold_fd >= 0)
    close(s->hold_fd);
  s->hold_fd = -1;
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

static void *
worker_main(void *arg)
{
  struct ff_sched *s = arg;

  pthread_mutex_lock(&s->run_lock);
  for (;;) {
    struct ff_sched_item *it;

    while (!s->run_head && !s->run_stop)
      pthread_cond_wait(&s->run_cond, &s->run_lock);
    if (!s->run_head)
      break;
    it = s->run_head;
    s->run_head = it->next;
    if (!s->run_head)
      s->run_tail = NULL;
    pthread_mutex_unlock(&s->run_lock);
    it->by_timer = 0;
    it->fn(it);
    pthread_mutex_lock(&s->lock);
    s->pending--;
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->run_lock);
  }
  pthread_mutex_unlock(&s->run_lock);
  return NULL;
}

struct ff_sched *
ff_sched_new(unsigned nworkers)
{
  struct ff_sched *s = calloc(1, sizeof *s);
  pthread_condattr_t ca;
  int err;

  if (!s || !(s->workers = calloc(nworkers, sizeof *s->workers))) {
    free(s);
    ff_error("out of memory");
    return NULL;
  }
  s->hold_fd = -1;
  pthread_mutex_init(&s->lock, NULL);
  pthread_mutex_init(&s->run_lock, NULL);
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->timer_cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_cond_init(&s->run_cond, NULL);
  err = pthread_create(&s->timer, NULL, timer_main, s);
  if (err) {
    ff_error("timer thread: %s", strerror(err));
    goto fail;
  }
  for (; s->nworkers < nworkers; s->nworkers++) {
    err = pthread_create(&s->workers[s->nworkers], NULL, worker_main, s);
    if (err) {
      ff_error("worker thread: %s", strerror(err));
      ff_sched_stop(s);
      return NULL;
    }
  }
  return s;

fail:
  free(s->workers);
  free(s);
  return NULL;
}

int
ff_sched_add(struct ff_sched *s, struct ff_sched_item *item)
{
  pthread_mutex_lock(&s->lock);
  if (item->state == ITEM_CANCELLED) {
    item->state = ITEM_NEW;
    pthread_mutex_unlock(&s->lock);
    return 1;
  }
  /* Once ff_sched_stop has begun, the timer thread may already have taken
   * its last batch: an item queued now would never run.  Refuse it like a
   * heap that cannot grow, so that the caller runs it itself. */
  if (s->stopping) {
    pthread_mutex_unlock(&s->lock);
    return -1;
  }
  if (s->n == s->alloc) {
    size_t na = s->alloc ? s->alloc * 2 : 1024;
    struct ff_sched_item **nh = realloc(s->heap, na * sizeof *nh);

    if (!nh) {
      pthread_mutex_unlock(&s->lock);
      return -1;
    }
    s->heap = nh;
    s->alloc = na;
  }
  item->seq = s->seq++;
  item->state = ITEM_WAITING;
  item->slot = s->n;
  s->heap[s->n] = item;
  heap_up(s->heap, s->n);
  s->n++;
  if (++s->pending > s->max_pending)
    s->max_pending = s->pending;
  if (s->heap[0] == item)
    pthread_cond_signal(&s->timer_cond);
  pthread_mutex_unlock(&s->lock);
  return 0;
}

int
ff_sched_cancel(struct ff_sched *s, struct ff_sched_item *item)
{
  int r = 0;

  pthread_mutex_lock(&s->lock);
  /* The timer thread, waiting for this item's deadline, wakes then to
   * find the next one not due and waits again. */
  if (item->state == ITEM_WAITING) {
    heap_take(s, item->slot);
    item->state = ITEM_NEW;
    s->pending--;
    r = 1;
  } else if (item->state == ITEM_NEW) {
    item->state = ITEM_CANCELLED;
  }
  pthread_mutex_unlock(&s->lock);
  return r;
}

void
ff_sched_counts(struct ff_sched *s, uint64_t *pending, uint64_t *max)
{
  pthread_mutex_lock(&s->lock);
  *pending = s->pending;
  *max = s->max_pending;
  pthread_mutex_unlock(&s->lock);
}

void
ff_sched_hold_cpus(struct ff_sched *s, int fd, uint64_t linger_ns)
{
  pthread_mutex_lock(&s->lock);
  if (s->hold_fd >= 0 && s->hold_fd != fd) {
    if (s->held)
      hold_set(s, 0);
    close(s->hold_fd);
  }
  s->hold_fd = fd;
  s->hold_linger = linger_ns;
  s->hold_errno = 0;
  pthread_mutex_unlock(&s->lock);
}

void
ff_sched_hold_stats(struct ff_sched *s, struct ff_sched_hold *h)
{
  pthread_mutex_lock(&s->lock);
  h->on = s->hold_fd >= 0;
  h->held = s->held;
  h->holds = s->holds;
  h->held_ns = s->held_ns + (s->held ? ff_now_ns() - s->held_since : 0);
  h->err = s->hold_errno;
  pthread_mutex_unlock(&s->lock);
}

unsigned
ff_sched_threads(const struct ff_sched *s)
{
  return 1 + s->nworkers;
}

void
ff_sched_stop(struct ff_sched *s)
{
  if (!s)
    return;
  pthread_mutex_lock(&s->lock);
  s->stopping = 1;
  pthread_cond_signal(&s->timer_cond);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->timer, NULL);
  pthread_mutex_lock(&s->run_lock);
  s->run_stop = 1;
  pthread_cond_broadcast(&s->run_cond);
  pthread_mutex_unlock(&s->run_lock);
  for (unsigned i = 0; i < s->nworkers; i++)
    pthread_join(s->workers[i], NULL);
  pthread_mutex_destroy(&s->lock);
  pthread_mutex_destroy(&s->run_lock);
  pthread_cond_destroy(&s->timer_cond);
  pthread_cond_destroy(&s->run_cond);
  free(s->heap);
  free(s->workers);
  free(s);
}
