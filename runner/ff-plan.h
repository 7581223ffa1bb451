/* fusefarm: which configuration and repetition a run does next
 * (docs/scenario-format.md "Repetitions"; docs/run-json.md "schedule").
 *
 * Repetitions are interleaved: round 1 is the first repetition of every
 * configuration, in configuration order, round 2 the second, and so on
 * (A B A B, never A A B B), so that a drift of the machine (a warming
 * cache, a neighbour's load) falls on every side of a comparison
 * alike.  In a round a configuration is visited once and runs each of
 * its workloads whose repetitions are not done, in scenario order.
 *
 * A workload's repeat is a number (that many rounds) or auto: at least
 * FF_PLAN_MIN_ROUNDS rounds (what the verdict needs for a 95% interval,
 * ff-stats-ci.h), then one more round at a time until the caller finds
 * every ratio the verdict compares clear of 1 (ff_plan_confident), the
 * time budget would be passed by one more round (the mean round so far),
 * or max_rounds rounds ran.  The plan asks the caller to look (FF_PLAN_
 * LOOK) after each round from the FF_PLAN_MIN_ROUNDS-th on while an auto
 * workload is still running; the caller answers with ff_plan_look().
 *
 * INVARIANTS: a step's round never decreases; in a round configurations
 * come in increasing order; a workload runs in rounds 0 .. n-1 with no
 * gap, so its k-th run is from round k.  The plan keeps the visits in the
 * order it gave them (ff_plan_order).
 *
 * No threads; no clock: the caller passes the elapsed time, so a test
 * gives the same plan on every machine.  The plan owns its memory;
 * ff_plan_free frees it.
 */
#ifndef FF_PLAN_H
#define FF_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ff-runreport.h"

/* Rounds an auto workload runs before the first look: the verdict's 4
 * repetitions a side (ff_ci_enough). */
#define FF_PLAN_MIN_ROUNDS 4u
/* Its defaults: at most 20 rounds, a budget of 10 minutes. */
#define FF_PLAN_MAX_ROUNDS 20u
#define FF_PLAN_BUDGET_S   600.0

struct ff_plan_opts {
  unsigned max_rounds; /* 0: FF_PLAN_MAX_ROUNDS */
  double budget_s;     /* seconds; 0: FF_PLAN_BUDGET_S */
};

/* Why the plan ended. */
enum ff_plan_stop {
  FF_PLAN_RUNNING,   /* not yet */
  FF_PLAN_FIXED,     /* every workload ran its fixed repeat */
  FF_PLAN_CONFIDENT, /* auto: every ratio clear of 1 */
  FF_PLAN_BUDGET,    /* auto: one more round would pass the budget */
  FF_PLAN_MAX,       /* auto: max_rounds rounds ran */
  FF_PLAN_NOTHING,   /* auto: the verdict compares nothing */
};

struct ff_plan;

/* A plan for nconfigs configurations of nworkloads workloads, workload
 * w repeated repeat[w] times (>= 1) or, autow[w] set, auto (autow NULL:
 * none is).  o NULL: the defaults.  NULL with ff_error: out of memory, or
 * no configuration or workload. */
struct ff_plan *ff_plan_new(uint64_t nconfigs, unsigned nworkloads,
                            const unsigned *repeat, const bool *autow,
                            const struct ff_plan_opts *o);

/* Frees p.  NULL is a no-op. */
void ff_plan_free(struct ff_plan *p);

/* One visit: configuration config (0-based) in round round (0-based). */
struct ff_plan_step {
  unsigned round;
  uint64_t config;
};

enum ff_plan_next {
  FF_PLAN_VISIT, /* *s is the next visit */
  FF_PLAN_LOOK,  /* a round of auto workloads ended: call ff_plan_look */
  FF_PLAN_DONE,  /* the plan is over: ff_plan_stopped says why */
};

/* What comes next. */
enum ff_plan_next ff_plan_next(struct ff_plan *p, struct ff_plan_step *s);

/* Whether workload w runs in the visit s. */
bool ff_plan_runs(const struct ff_plan *p, const struct ff_plan_step *s,
                  unsigned w);

/* The caller's answer to FF_PLAN_LOOK: confident is 1 when every ratio
 * the verdict compares over the auto workloads is clear of 1, 0 when one
 * is not, -1 when it compares none; elapsed_s the seconds since the
 * first visit began. */
void ff_plan_look(struct ff_plan *p, int confident, double elapsed_s);

/* Why the auto workloads stopped: FF_PLAN_RUNNING while they go on (and
 * when there is none), else as ff_plan_stopped will say, from the look
 * that stopped them on, while fixed workloads may still run. */
enum ff_plan_stop ff_plan_auto_stop(const struct ff_plan *p);

/* Why the plan ended (FF_PLAN_RUNNING before), and the rounds it ran. */
enum ff_plan_stop ff_plan_stopped(const struct ff_plan *p);
unsigned ff_plan_rounds(const struct ff_plan *p);

/* Whether any workload is auto, and the options in force. */
bool ff_plan_is_auto(const struct ff_plan *p);
unsigned ff_plan_max_rounds(const struct ff_plan *p);
double ff_plan_budget(const struct ff_plan *p);

/* The stop reason's name in the run document ("fixed", "confident",
 * "budget", "max-rounds", "nothing-to-compare", "running"). */
const char *ff_plan_stop_name(enum ff_plan_stop s);

/* The visits given so far, in order (*n of them; the plan's memory). */
const struct ff_plan_step *ff_plan_order(const struct ff_plan *p, size_t *n);

/* Whether every ratio the verdict of rr compares (ff_runreport_verdict_
 * json: each event_direct entry, each pair of each axis effect) over a
 * workload named in names[0..nnames-1] is clear of 1: 1 yes, 0 no (why,
 * if not NULL, names the first that is not, and its judgement), -1 when
 * it compares none of them (why says so); a failed comparison counts as
 * settled (more rounds cannot judge it).  -2 with ff_error: out of
 * memory. */
int ff_plan_confident(const struct ff_runreport *rr, const char *const *names,
                      size_t nnames, char *why, size_t len);

#endif
