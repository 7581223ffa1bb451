/* fusefarm: delayed work without sleeping threads.
 *
 * A min-heap of deadlines served by one timer thread, which hands due
 * items to a small pool of worker threads.  Thousands of items may wait;
 * no thread sleeps per item.  This is how the FUSE daemon answers a read
 * whose reply the I/O model put in the future.
 *
 * Thread model
 * - ff_sched_add() may be called from any thread; it takes the heap mutex
 *   briefly and signals the timer thread when the new item is the
 *   earliest.
 * - The timer thread waits on a condition variable with an absolute
 *   CLOCK_MONOTONIC deadline (its timer slack 1 ns), set earlier than the
 *   head item's due time by how late its waits have been waking (a
 *   running mean, at most 200 us), and spins the rest without the heap
 *   mutex: items run on time, never early (an add of an earlier item
 *   during the spin waits for the next round); it moves every due
 *   item to the run queue (a second mutex) and wakes the workers, but
 *   runs a lone due item itself when the run queue is empty (a worker's
 *   wake-up would be added to the item's latency).
 * - Worker threads (and the timer thread, so) run item->fn(item) with no
 *   lock held; fn owns the item from then on (typically it replies and
 *   frees it).
 * - Items start in due order; items with the same due time in the order
 *   they were added.  With one worker they also run in that order.
 * - ff_sched_stop() runs every item still waiting, at once, in the
 *   calling thread's pool (their deadlines are ignored), then joins the
 *   threads.  No item is lost.
 * - ff_sched_cancel() may be called from any thread.  Taking an item out
 *   of the heap (the timer thread, when it is due) and cancelling it are
 *   both done under the heap mutex, so exactly one of them gets it: a
 *   cancelled item never runs, an item handed to a worker is no longer
 *   cancellable.
 *
 * - The CPU wake hold (ff_sched_hold_cpus): while any item waits or runs,
 *   and for a linger after, the timer thread keeps a 0 us request on
 *   /dev/cpu_dma_latency, so that idle CPUs poll rather than sleep and
 *   every wake-up on a delayed request's path (the timer's, the reply's,
 *   the reader's, the next request's) is not an idle exit's late
 *   (docs/benchmarks.md, "Idle CPUs wake late").  Written under the heap
 *   mutex: once when the heap stops being empty, once after the linger.
 *
 * Ownership: the caller allocates items (embedding struct ff_sched_item
 * first in its own struct, its internal fields zeroed) and frees them in
 * fn, or after ff_sched_cancel gave one back.
 */
#ifndef FF_SCHED_H
#define FF_SCHED_H

#include <stddef.h>
#include <stdint.h>

struct ff_sched_item {
  uint64_t due_ns;                        /* CLOCK_MONOTONIC */
  void (*fn)(struct ff_sched_item *item); /* runs in a worker or the timer */
  struct ff_sched_item *next;             /* run queue link, internal */
  uint64_t seq;                           /* arrival order, internal */
  size_t slot;                            /* heap index, internal */
  int state;                              /* internal; 0 before the add */
  int by_timer; /* set before fn runs: 1 when the timer thread runs it (a
                 * lone due item), 0 in a worker */
};

struct ff_sched;

/* Start the timer thread and nworkers workers.  NULL + ff_error. */
struct ff_sched *ff_sched_new(unsigned nworkers);

/* Queue item to run at or after item->due_ns.  Returns 0; 1 when item
 * was cancelled before it was added (below: it is not queued, the caller
 * still owns it); -1 when the heap cannot grow or the scheduler is
 * stopping (the caller should run the item itself). */
int ff_sched_add(struct ff_sched *s, struct ff_sched_item *item);

/* Withdraw item.  Returns 1 when it was waiting: it will never run, and
 * it is the caller's again (to free, or to add again).  Returns 0 when it
 * is not waiting: either a worker has it (fn runs or has run; the caller
 * must make sure by its own means that item is still allocated when it
 * calls this) or it has not been added yet, and then the next
 * ff_sched_add of it returns 1, so a cancel racing the add is not lost. */
int ff_sched_cancel(struct ff_sched *s, struct ff_sched_item *item);

/* Items waiting or running now, and the most ever at once. */
void ff_sched_counts(struct ff_sched *s, uint64_t *pending, uint64_t *max);

/* Hold the CPUs awake while items wait or run, and linger_ns after the
 * last: fd is an open /dev/cpu_dma_latency (O_WRONLY), the scheduler's
 * from now on (closed at ff_sched_stop, or at once when a write to it
 * fails: ff_sched_hold_stats says why).  -1: no hold. */
void ff_sched_hold_cpus(struct ff_sched *s, int fd, uint64_t linger_ns);

struct ff_sched_hold {
  int on;           /* a hold fd is set and works */
  int held;         /* the CPUs are held now */
  uint64_t holds;   /* times the CPUs were held */
  uint64_t held_ns; /* for how long in all, until now */
  int err;          /* errno of the write that gave the hold up, or 0 */
};

void ff_sched_hold_stats(struct ff_sched *s, struct ff_sched_hold *h);

/* Threads the scheduler runs (timer + workers). */
unsigned ff_sched_threads(const struct ff_sched *s);

/* Run what is left, stop and free. */
void ff_sched_stop(struct ff_sched *s);

uint64_t ff_now_ns(void);

#endif
