/* The timer heap (ff-sched.h): items run in due order, equal due times in
 * arrival order, never before they are due; ff_sched_stop runs everything
 * still pending at once; the pending counts; a cancelled item never runs
 * (from anywhere in the heap, or before it was added), one already handed
 * to a worker cannot be cancelled; a lone due item is run by the timer
 * thread, items due together by the workers.  No test waits on a clock:
 * they wait for the items themselves (a condition variable). */
#include "ff-sched.h"
#include "ff-test.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MS  1000000ull
#define SEC 1000000000ull
#define N   300

struct item {
  struct ff_sched_item it; /* first */
  unsigned id;
  uint64_t ran_ns;
};

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  unsigned order[N]; /* ids in the order they ran */
  unsigned nran;
} log_ = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void
ran(struct ff_sched_item *it)
{
  struct item *x = (struct item *)it;

  x->ran_ns = ff_now_ns();
  pthread_mutex_lock(&log_.lock);
  log_.order[log_.nran++] = x->id;
  pthread_cond_broadcast(&log_.cond);
  pthread_mutex_unlock(&log_.lock);
}

static void
log_reset(void)
{
  pthread_mutex_lock(&log_.lock);
  log_.nran = 0;
  pthread_mutex_unlock(&log_.lock);
}

static void
wait_for(unsigned n)
{
  pthread_mutex_lock(&log_.lock);
  while (log_.nran < n)
    pthread_cond_wait(&log_.cond, &log_.lock);
  pthread_mutex_unlock(&log_.lock);
}

/* A shuffled permutation of 0..n-1 (fixed seed: the same every run). */
static void
shuffle(unsigned *p, unsigned n)
{
  uint64_t x = 0x9E3779B97F4A7C15ull;

  for (unsigned i = 0; i < n; i++)
    p[i] = i;
  for (unsigned i = n - 1; i > 0; i--) {
    unsigned j, t;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    j = (unsigned)(x % (i + 1));
    t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

/* Items due far in the future, added in shuffled order with many equal
 * due times; stop runs them all at once, in (due, arrival) order. */
static void
test_stop_runs_all_in_order(void **state)
{
  static struct item items[N];
  struct ff_sched *s = ff_sched_new(1);
  uint64_t base = ff_now_ns() + 3600 * SEC, pending, max;
  unsigned perm[N];

  (void)state;
  assert_nonnull_err(s);
  log_reset();
  shuffle(perm, N);
  for (unsigned k = 0; k < N; k++) {
    unsigned i = perm[k];

    /* 10 distinct due times, 30 items each; id = arrival index. */
    items[k] = (struct item){
      .it = {.due_ns = base + (uint64_t)(i % 10) * SEC, .fn = ran}, .id = k};
    assert_ok(ff_sched_add(s, &items[k].it));
  }
  ff_sched_counts(s, &pending, &max);
  assert_int_equal(pending, N);
  assert_int_equal(max, N);
  assert_int_equal(log_.nran, 0); /* nothing is due for an hour */
  ff_sched_stop(s);
  assert_int_equal(log_.nran, N); /* no item lost */
  for (unsigned k = 1; k < N; k++) {
    const struct item *a = &items[log_.order[k - 1]];
    const struct item *b = &items[log_.order[k]];

    if (a->it.due_ns > b->it.due_ns ||
        (a->it.due_ns == b->it.due_ns && a->id > b->id))
      fail_msg("item %u (due +%llu s) ran before item %u (due +%llu s)", a->id,
               (unsigned long long)((a->it.due_ns - base) / SEC), b->id,
               (unsigned long long)((b->it.due_ns - base) / SEC));
  }
}

/* Items due soon fire by themselves, never early, in due order among
 * those added before any of them was due. */
static void
test_fire_when_due(void **state)
{
  static struct item items[N];
  struct ff_sched *s = ff_sched_new(1);
  uint64_t base = ff_now_ns() + 200 * MS, all_added, pending, max;
  unsigned perm[N], checked = 0;

  (void)state;
  assert_nonnull_err(s);
  log_reset();
  shuffle(perm, N);
  for (unsigned k = 0; k < N; k++) {
    unsigned i = perm[k];

    items[k] = (struct item){
      .it = {.due_ns = base + (uint64_t)(i / 3) * 100000, .fn = ran}, .id = k};
    assert_ok(ff_sched_add(s, &items[k].it));
  }
  all_added = ff_now_ns();
  wait_for(N);
  for (unsigned k = 0; k < N; k++)
    if (items[k].ran_ns < items[k].it.due_ns)
      fail_msg("item %u ran %llu ns before it was due", k,
               (unsigned long long)(items[k].it.due_ns - items[k].ran_ns));
  /* Items due after the last add were all in the heap together: they
   * ran in (due, arrival) order.  (Earlier ones may have been taken
   * before a later-added, earlier-due item arrived.) */
  for (unsigned k = 1; k < N; k++) {
    const struct item *a = &items[log_.order[k - 1]];
    const struct item *b = &items[log_.order[k]];

    if (a->it.due_ns <= all_added || b->it.due_ns <= all_added)
      continue;
    checked++;
    if (a->it.due_ns > b->it.due_ns ||
        (a->it.due_ns == b->it.due_ns && a->id > b->id))
      fail_msg("item %u ran before item %u", a->id, b->id);
  }
  assert_true(checked > 0);
  /* pending drops after an item's fn returns: only the maximum is
   * settled here. */
  ff_sched_counts(s, &pending, &max);
  assert_true(pending <= 1);
  assert_true(max >= 1 && max <= N);
  ff_sched_stop(s);
}

/* Items one by one, each due 2 ms after the one before: the timer
 * thread wakes for each, learns how late it wakes and waits less by that
 * (ff-sched.h), spinning the rest: none runs before it is due. */
static void
test_lone_items_never_early(void **state)
{
  enum { K = 40 };
  static struct item items[K];
  struct ff_sched *s = ff_sched_new(1);
  uint64_t base = ff_now_ns() + 2 * MS;

  (void)state;
  assert_nonnull_err(s);
  log_reset();
  for (unsigned k = 0; k < K; k++) {
    items[k] = (struct item){
      .it = {.due_ns = base + (uint64_t)k * 2 * MS, .fn = ran}, .id = k};
    assert_ok(ff_sched_add(s, &items[k].it));
  }
  wait_for(K);
  for (unsigned k = 0; k < K; k++)
    if (items[k].ran_ns < items[k].it.due_ns)
      fail_msg("item %u ran %llu ns before it was due", k,
               (unsigned long long)(items[k].it.due_ns - items[k].ran_ns));
  ff_sched_stop(s);
}

/* Many workers: every item runs exactly once. */
static void
test_many_workers(void **state)
{
  static struct item items[N];
  struct ff_sched *s = ff_sched_new(4);
  uint64_t now = ff_now_ns();
  unsigned seen[N] = {0};

  (void)state;
  assert_nonnull_err(s);
  assert_int_equal(ff_sched_threads(s), 5);
  log_reset();
  for (unsigned k = 0; k < N; k++) {
    items[k] = (struct item){
      .it = {.due_ns = now + (uint64_t)(k % 7) * MS, .fn = ran}, .id = k};
    assert_ok(ff_sched_add(s, &items[k].it));
  }
  wait_for(N);
  ff_sched_stop(s);
  assert_int_equal(log_.nran, N);
  for (unsigned k = 0; k < N; k++)
    seen[log_.order[k]]++;
  for (unsigned k = 0; k < N; k++)
    if (seen[k] != 1)
      fail_msg("item %u ran %u times", k, seen[k]);
}

/* Cancel every third item of a heap due in an hour, from every position
 * (the rest must still run in order); cancel before the add (the add
 * refuses, once); cancel after the run (nothing to cancel). */
static void
test_cancel(void **state)
{
  static struct item items[N];
  struct ff_sched *s = ff_sched_new(1);
  uint64_t base = ff_now_ns() + 3600 * SEC, pending, max;
  struct item early = {.id = N}, late = {.id = N + 1};
  unsigned perm[N], kept = 0;

  (void)state;
  assert_nonnull_err(s);
  log_reset();
  shuffle(perm, N);
  for (unsigned k = 0; k < N; k++) {
    items[k] = (struct item){
      .it = {.due_ns = base + (uint64_t)(perm[k] % 17) * SEC, .fn = ran},
      .id = k};
    assert_ok(ff_sched_add(s, &items[k].it));
  }
  for (unsigned k = 0; k < N; k += 3) {
    assert_int_equal(ff_sched_cancel(s, &items[k].it), 1);
    assert_int_equal(ff_sched_cancel(s, &items[k].it), 0); /* not twice */
  }
  ff_sched_counts(s, &pending, &max);
  assert_int_equal(pending, N - (N + 2) / 3);
  assert_int_equal(max, N);

  /* Cancelled before it was added: the add refuses it, once. */
  early.it = (struct ff_sched_item){.due_ns = ff_now_ns(), .fn = ran};
  assert_int_equal(ff_sched_cancel(s, &early.it), 0);
  assert_int_equal(ff_sched_add(s, &early.it), 1);
  /* A cancelled item is the caller's again: it may be added anew. */
  assert_ok(ff_sched_add(s, &early.it));
  wait_for(1);
  assert_int_equal(log_.order[0], N);
  assert_int_equal(ff_sched_cancel(s, &early.it), 0); /* it ran */

  /* An item a worker has run is no longer cancellable. */
  late.it = (struct ff_sched_item){.due_ns = ff_now_ns(), .fn = ran};
  assert_ok(ff_sched_add(s, &late.it));
  wait_for(2);
  assert_int_equal(ff_sched_cancel(s, &late.it), 0);

  ff_sched_stop(s);
  /* log_.order[0] and [1] are early and late; the heap's items follow. */
  for (unsigned k = 2; k < log_.nran; k++) {
    const struct item *b = &items[log_.order[k]];

    if (b->id % 3 == 0)
      fail_msg("cancelled item %u ran", b->id);
    if (k > 2) {
      const struct item *a = &items[log_.order[k - 1]];

      if (a->it.due_ns > b->it.due_ns ||
          (a->it.due_ns == b->it.due_ns && a->id > b->id))
        fail_msg("item %u ran before item %u", a->id, b->id);
    }
    kept++;
  }
  assert_int_equal(kept, N - (N + 2) / 3);
}

/* The timer thread runs a lone due item itself (ff-sched.h); items due
 * together go to the workers. */
static void
test_lone_item_on_timer(void **state)
{
  struct ff_sched *s = ff_sched_new(2);
  struct item l = {.id = 0}, p = {.id = 1}, q = {.id = 2};
  uint64_t now = ff_now_ns();

  (void)state;
  assert_non_null(s);
  log_reset();
  l.it.fn = p.it.fn = q.it.fn = ran;
  l.it.by_timer = 0;
  p.it.by_timer = q.it.by_timer = 1;
  l.it.due_ns = now + MS;
  assert_int_equal(ff_sched_add(s, &l.it), 0);
  wait_for(1);
  p.it.due_ns = q.it.due_ns = ff_now_ns() + 2 * MS;
  assert_int_equal(ff_sched_add(s, &p.it), 0);
  assert_int_equal(ff_sched_add(s, &q.it), 0);
  wait_for(3);
  ff_sched_stop(s);
  assert_int_equal(l.it.by_timer, 1);
  assert_int_equal(p.it.by_timer, 0);
  assert_int_equal(q.it.by_timer, 0);
}

/* The CPU wake hold: its writes and the items' own, in one pipe, in the
 * order they happened (each read blocks until the next write). */
static int hold_marks = -1; /* where items write 100 + id */

static void
ran_mark(struct ff_sched_item *it)
{
  int32_t v = 100 + (int32_t)((struct item *)it)->id;

  assert_int_equal(write(hold_marks, &v, sizeof v), sizeof v);
}

/* ran_mark, then wait until the test opens the gate */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int open;
} gate_ = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void
ran_mark_gated(struct ff_sched_item *it)
{
  ran_mark(it);
  pthread_mutex_lock(&gate_.lock);
  while (!gate_.open)
    pthread_cond_wait(&gate_.cond, &gate_.lock);
  pthread_mutex_unlock(&gate_.lock);
}

static int32_t
next_write(int fd)
{
  int32_t v;

  assert_int_equal(read(fd, &v, sizeof v), sizeof v);
  return v;
}

/* Held (0) once the heap has an item, before it runs; let go (-1) only
 * after the linger with nothing waiting or running, so after every item
 * of a burst; held again for the next burst; let go at stop. */
static void
test_hold_cpus(void **state)
{
  struct ff_sched *s = ff_sched_new(1);
  struct item a = {.id = 0}, b = {.id = 1}, c = {.id = 2}, d = {.id = 3};
  struct ff_sched_hold h;
  int p[2];
  int32_t v;

  (void)state;
  assert_non_null(s);
  assert_int_equal(pipe(p), 0);
  hold_marks = dup(p[1]);
  ff_sched_hold_cpus(s, p[1], MS);
  ff_sched_hold_stats(s, &h);
  assert_int_equal(h.on, 1);
  assert_int_equal(h.held, 0);
  assert_int_equal(h.holds, 0);
  a.it.fn = b.it.fn = c.it.fn = d.it.fn = ran_mark;

  a.it.due_ns = ff_now_ns() + 2 * MS;
  assert_int_equal(ff_sched_add(s, &a.it), 0);
  assert_int_equal(next_write(p[0]), 0);
  assert_int_equal(next_write(p[0]), 100);
  assert_int_equal(next_write(p[0]), -1);

  /* Two due together go to the one worker, in order; the heap is empty
   * once the timer took them, but b is still running (held at the gate
   * until its mark was read): with no linger at all, the CPUs are let go
   * only after c ran too. */
  ff_sched_hold_cpus(s, p[1], 0); /* the same fd: the linger only */
  b.it.fn = ran_mark_gated;
  b.it.due_ns = c.it.due_ns = ff_now_ns() + 2 * MS;
  assert_int_equal(ff_sched_add(s, &b.it), 0);
  assert_int_equal(ff_sched_add(s, &c.it), 0);
  assert_int_equal(next_write(p[0]), 0);
  assert_int_equal(next_write(p[0]), 101);
  pthread_mutex_lock(&gate_.lock);
  gate_.open = 1;
  pthread_cond_broadcast(&gate_.cond);
  pthread_mutex_unlock(&gate_.lock);
  assert_int_equal(next_write(p[0]), 102);
  assert_int_equal(next_write(p[0]), -1);
  ff_sched_hold_stats(s, &h);
  assert_int_equal(h.holds, 2);
  assert_int_equal(h.held, 0);
  assert_true(h.held_ns >= MS); /* the first hold outlived its linger */

  d.it.due_ns = ff_now_ns() + 3600 * SEC;
  assert_int_equal(ff_sched_add(s, &d.it), 0);
  assert_int_equal(next_write(p[0]), 0);
  ff_sched_stop(s); /* runs d now, lets go, closes the hold fd */
  assert_int_equal(next_write(p[0]), 103);
  assert_int_equal(next_write(p[0]), -1);
  close(hold_marks);
  assert_int_equal(read(p[0], &v, sizeof v), 0); /* no writer is left */
  close(p[0]);
}

/* A hold fd that cannot be written: given up (closed, errno kept), the
 * items run all the same. */
static void
test_hold_gives_up(void **state)
{
  struct ff_sched *s = ff_sched_new(1);
  struct item a = {.id = 0};
  struct ff_sched_hold h;
  int p[2];

  (void)state;
  assert_non_null(s);
  assert_int_equal(pipe(p), 0);
  log_reset();
  ff_sched_hold_cpus(s, p[0], MS); /* the read end */
  a.it.fn = ran;
  a.it.due_ns = ff_now_ns() + MS;
  assert_int_equal(ff_sched_add(s, &a.it), 0);
  wait_for(1);
  ff_sched_hold_stats(s, &h);
  assert_int_equal(h.on, 0);
  assert_int_equal(h.holds, 0);
  assert_int_equal(h.err, EBADF);
  assert_int_equal(fcntl(p[0], F_GETFD), -1); /* closed */
  ff_sched_stop(s);
  close(p[1]);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stop_runs_all_in_order),
    cmocka_unit_test(test_fire_when_due),
    cmocka_unit_test(test_lone_items_never_early),
    cmocka_unit_test(test_many_workers),
    cmocka_unit_test(test_cancel),
    cmocka_unit_test(test_lone_item_on_timer),
    cmocka_unit_test(test_hold_cpus),
    cmocka_unit_test(test_hold_gives_up),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
