/* fusefarm: which configuration and repetition a run does next
 * (ff-plan.h).  No threads. */
#include "ff-plan.h"

#include "ff-error.h"
#include "ff-runreport-json.h"
#include "ff-util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ff_plan {
  uint64_t nconfigs;
  unsigned nworkloads;
  unsigned *repeat; /* [nworkloads]; an auto workload's is its rounds */
  bool *autow;      /* [nworkloads] */
  bool any_auto;
  bool auto_done; /* the auto workloads stopped */
  bool look_due;  /* FF_PLAN_LOOK given, ff_plan_look not yet called */
  bool over;
  unsigned fixed;  /* the most rounds a fixed workload runs */
  unsigned rounds; /* rounds begun */
  unsigned looked; /* the rounds at the last look */
  uint64_t next;   /* the next configuration of the current round */
  struct ff_plan_opts o;
  enum ff_plan_stop auto_stop; /* why the auto workloads stopped */
  struct ff_plan_step *order;
  size_t norder, cap;
};

struct ff_plan *
ff_plan_new(uint64_t nconfigs, unsigned nworkloads, const unsigned *repeat,
            const bool *autow, const struct ff_plan_opts *o)
{
  struct ff_plan *p;

  if (!nconfigs || !nworkloads) {
    ff_error("plan: no configuration or no workload");
    return NULL;
  }
  p = calloc(1, sizeof *p);
  if (p) {
    p->repeat = calloc(nworkloads, sizeof *p->repeat);
    p->autow = calloc(nworkloads, sizeof *p->autow);
  }
  if (!p || !p->repeat || !p->autow) {
    ff_plan_free(p);
    ff_error("plan: out of memory");
    return NULL;
  }
  p->nconfigs = nconfigs;
  p->nworkloads = nworkloads;
  if (o)
    p->o = *o;
  if (!p->o.max_rounds)
    p->o.max_rounds = FF_PLAN_MAX_ROUNDS;
  if (p->o.max_rounds < FF_PLAN_MIN_ROUNDS)
    p->o.max_rounds = FF_PLAN_MIN_ROUNDS;
  if (!(p->o.budget_s > 0))
    p->o.budget_s = FF_PLAN_BUDGET_S;
  for (unsigned w = 0; w < nworkloads; w++) {
    p->autow[w] = autow && autow[w];
    p->any_auto |= p->autow[w];
    p->repeat[w] = p->autow[w] ? 0 : repeat[w] ? repeat[w] : 1;
    if (p->repeat[w] > p->fixed)
      p->fixed = p->repeat[w];
  }
  p->auto_done = !p->any_auto;
  return p;
}

void
ff_plan_free(struct ff_plan *p)
{
  if (!p)
    return;
  free(p->repeat);
  free(p->autow);
  free(p->order);
  free(p);
}

/* Whether round k (0-based) has a workload to run. */
static bool
round_runs(const struct ff_plan *p, unsigned k)
{
  return k < p->fixed || !p->auto_done;
}

bool
ff_plan_runs(const struct ff_plan *p, const struct ff_plan_step *s, unsigned w)
{
  if (w >= p->nworkloads)
    return false;
  if (p->autow[w] && !p->auto_done)
    return true;
  return s->round < p->repeat[w];
}

/* Record s in the order; a visit the order has no room for is left out of
 * it (out of memory: the run goes on). */
static void
record(struct ff_plan *p, const struct ff_plan_step *s)
{
  if (p->norder == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 16;
    struct ff_plan_step *o = realloc(p->order, cap * sizeof *o);

    if (!o)
      return;
    p->order = o;
    p->cap = cap;
  }
  p->order[p->norder++] = *s;
}

enum ff_plan_next
ff_plan_next(struct ff_plan *p, struct ff_plan_step *s)
{
  if (p->over)
    return FF_PLAN_DONE;
  if (p->look_due)
    return FF_PLAN_LOOK;
  if (!p->rounds || p->next == p->nconfigs) {
    /* Round p->rounds - 1 ended (or none began): the auto workloads have
     * run that many rounds; look from the minimum on. */
    if (p->rounds && !p->auto_done) {
      for (unsigned w = 0; w < p->nworkloads; w++)
        if (p->autow[w])
          p->repeat[w] = p->rounds;
      if (p->rounds >= FF_PLAN_MIN_ROUNDS && p->looked < p->rounds) {
        p->looked = p->rounds;
        p->look_due = true;
        return FF_PLAN_LOOK;
      }
    }
    if (!round_runs(p, p->rounds)) {
      p->over = true;
      return FF_PLAN_DONE;
    }
    p->rounds++;
    p->next = 0;
  }
  s->round = p->rounds - 1;
  s->config = p->next++;
  record(p, s);
  return FF_PLAN_VISIT;
}

void
ff_plan_look(struct ff_plan *p, int confident, double elapsed_s)
{
  if (!p->look_due)
    return;
  p->look_due = false;
  if (confident > 0)
    p->auto_stop = FF_PLAN_CONFIDENT;
  else if (confident < 0)
    p->auto_stop = FF_PLAN_NOTHING;
  else if (p->rounds >= p->o.max_rounds)
    p->auto_stop = FF_PLAN_MAX;
  else if (elapsed_s + elapsed_s / p->rounds > p->o.budget_s)
    p->auto_stop = FF_PLAN_BUDGET;
  p->auto_done = p->auto_stop != FF_PLAN_RUNNING;
}

enum ff_plan_stop
ff_plan_auto_stop(const struct ff_plan *p)
{
  return p->auto_stop;
}

enum ff_plan_stop
ff_plan_stopped(const struct ff_plan *p)
{
  if (!p->over)
    return FF_PLAN_RUNNING;
  return p->any_auto ? p->auto_stop : FF_PLAN_FIXED;
}

unsigned
ff_plan_rounds(const struct ff_plan *p)
{
  return p->rounds;
}

bool
ff_plan_is_auto(const struct ff_plan *p)
{
  return p->any_auto;
}

unsigned
ff_plan_max_rounds(const struct ff_plan *p)
{
  return p->o.max_rounds;
}

double
ff_plan_budget(const struct ff_plan *p)
{
  return p->o.budget_s;
}

const char *
ff_plan_stop_name(enum ff_plan_stop s)
{
  switch (s) {
  case FF_PLAN_RUNNING:
    break;
  case FF_PLAN_FIXED:
    return "fixed";
  case FF_PLAN_CONFIDENT:
    return "confident";
  case FF_PLAN_BUDGET:
    return "budget";
  case FF_PLAN_MAX:
    return "max-rounds";
  case FF_PLAN_NOTHING:
    return "nothing-to-compare";
  }
  return "running";
}

const struct ff_plan_step *
ff_plan_order(const struct ff_plan *p, size_t *n)
{
  *n = p->norder;
  return p->order;
}

/* ---- confidence --------------------------------------------------------- */

static bool
named(const char *name, const char *const *names, size_t n)
{
  for (size_t i = 0; name && i < n; i++)
    if (!strcmp(name, names[i]))
      return true;
  return false;
}

/* Whether a judgement is settled: clear of 1, or failed (no more rounds
 * judge it). */
static bool
settled(const char *judgement)
{
  return judgement &&
         (!strcmp(judgement, "clear") || !strcmp(judgement, "failed"));
}

int
ff_plan_confident(const struct ff_runreport *rr, const char *const *names,
                  size_t nnames, char *why, size_t len)
{
  json_t *v = ff_runreport_verdict_json(rr), *e, *ax, *ef, *pr;
  size_t i, j, k, seen = 0;
  int rc = 1;

  if (!v)
    return -2;
  if (why && len)
    why[0] = '\0';
  json_array_foreach(json_object_get(v, "event_direct"), i, e)
  {
    const char *j_ = json_string_value(json_object_get(e, "judgement"));

    if (!named(json_string_value(json_object_get(e, "workload")), names,
               nnames) &&
        !named(json_string_value(json_object_get(e, "against")), names,
               nnames))
      continue;
    seen++;
    if (!settled(j_) && rc == 1) {
      rc = 0;
      if (why)
        snprintf(why, len, "%s: %s",
                 json_string_value(json_object_get(e, "compares")),
                 j_ ? j_ : "?");
    }
  }
  json_array_foreach(json_object_get(v, "axes"), i, ax)
  {
    json_array_foreach(json_object_get(ax, "effects"), j, ef)
    {
      const char *wn = json_string_value(json_object_get(ef, "workload"));

      if (!named(wn, names, nnames))
        continue;
      json_array_foreach(json_object_get(ef, "pairs"), k, pr)
      {
        const char *j_ = json_string_value(json_object_get(pr, "judgement"));

        seen++;
        if (settled(j_) || rc != 1)
          continue;
        rc = 0;
        if (why)
          snprintf(
            why, len, "%s, %s in config %lld vs %lld: %s", wn,
            json_string_value(json_object_get(ax, "compares")),
            (long long)json_integer_value(json_object_get(pr, "config")),
            (long long)json_integer_value(json_object_get(pr, "base_config")),
            j_ ? j_ : "?");
      }
    }
  }
  json_decref(v);
  if (!seen) {
    if (why)
      snprintf(why, len, "the verdict compares no workload of auto repeat");
    return -1;
  }
  return rc;
}
