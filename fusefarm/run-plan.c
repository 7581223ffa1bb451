/* fusefarm run: the order of the run's visits (runner/ff-plan.h:
 * repetitions interleaved round by round, repeat = "auto" looking at the
 * verdict after each round) and what it leaves in the run document: one
 * "configs" entry per configuration whatever the number of its visits,
 * each workload's runs in round order, and "schedule" (docs/run-json.md).
 * No threads (run-int.h).
 */
#include "run-int.h"

#include "ff-plan.h"

struct run_sched {
  struct ff_plan *plan;
  const struct ff_scenario *sc;
  json_t *doc;        /* borrowed */
  json_t *pending;    /* the configs entry of the last visit, to merge */
  json_t *prev;       /* its workloads before that visit (NULL: first) */
  json_t *prev_dm;    /* its dm counts before that visit (NULL: none) */
  const char **autos; /* names of the auto workloads */
  size_t nautos;
  int started;
  struct timespec t0;
  char why[512]; /* the last look's answer, in words */
};

struct ff_runreport *
run_doc_model(json_t *doc)
{
  char *text = json_dumps(doc, JSON_COMPACT);
  struct ff_runreport *rr =
    text ? ff_runreport_load_text(text, strlen(text), "run document") : NULL;

  if (!text)
    ff_error("run document: out of memory");
  free(text);
  return rr;
}

int
run_sched_repeat(struct ff_scenario *sc, unsigned repeat, int until)
{
  if (repeat && until)
    return ff_error("--repeat %u and --until-confident: give one", repeat);
  for (unsigned i = 0; (repeat || until) && i < sc->nworkloads; i++) {
    sc->workloads[i].repeat = repeat ? repeat : 1;
    sc->workloads[i].repeat_auto = until;
  }
  return 0;
}

struct run_sched *
run_sched_new(const struct ff_scenario *sc, json_t *doc)
{
  struct run_sched *rs = calloc(1, sizeof *rs);
  unsigned *repeat = calloc(sc->nworkloads + 1, sizeof *repeat);
  bool *autow = calloc(sc->nworkloads + 1, sizeof *autow);
  struct ff_plan_opts o = {
    .max_rounds = sc->repeat_max_rounds,
    .budget_s = (double)sc->repeat_budget_ns / 1e9,
  };

  if (rs)
    rs->autos = calloc(sc->nworkloads + 1, sizeof *rs->autos);
  if (!rs || !repeat || !autow || !rs->autos) {
    ff_error("out of memory");
    goto fail;
  }
  rs->sc = sc;
  rs->doc = doc;
  for (unsigned w = 0; w < sc->nworkloads; w++) {
    repeat[w] = sc->workloads[w].repeat;
    autow[w] = sc->workloads[w].repeat_auto;
    if (autow[w])
      rs->autos[rs->nautos++] = sc->workloads[w].name;
  }
  rs->plan =
    ff_plan_new(ff_scenario_nconfigs(sc), sc->nworkloads, repeat, autow, &o);
  if (!rs->plan)
    goto fail;
  free(repeat);
  free(autow);
  return rs;
fail:
  free(repeat);
  free(autow);
  if (rs)
    free(rs->autos);
  free(rs);
  return NULL;
}

bool
run_sched_runs(const struct run_sched *rs, const struct ff_plan_step *s,
               unsigned w)
{
  return ff_plan_runs(rs->plan, s, w);
}

void
run_sched_put(struct run_sched *rs, json_t *configs, uint64_t k, json_t *cj)
{
  json_t *old = json_array_get(configs, (size_t)k);

  rs->pending = cj;
  rs->prev = NULL;
  if (!old) {
    json_array_append_new(configs, cj);
    return;
  }
  rs->prev = json_incref(json_object_get(old, "workloads"));
  rs->prev_dm = json_incref(json_object_get(old, "dm"));
  json_array_set_new(configs, (size_t)k, cj);
}

static json_t *
by_name(json_t *wls, const char *name)
{
  size_t i;
  json_t *e;

  json_array_foreach(wls, i, e)
  {
    const char *n = json_string_value(json_object_get(e, "name"));

    if (n && !strcmp(n, name))
      return e;
  }
  return NULL;
}

/* e's runs prefixed with before's, and its min, median and max of them
 * all; its "repeat" what the scenario asked (auto: the runs it has). */
static int
merge_entry(json_t *e, json_t *before, const struct ff_workload *w)
{
  json_t *runs = json_object_get(e, "runs"), *all = json_array(), *run;
  size_t i, n;
  double *walls, mn = INFINITY, mx = 0;

  if (!all)
    return ff_error("out of memory");
  json_array_extend(all, json_object_get(before, "runs"));
  json_array_extend(all, runs);
  n = json_array_size(all);
  walls = calloc(n + 1, sizeof *walls);
  if (!walls) {
    json_decref(all);
    return ff_error("out of memory");
  }
  json_array_foreach(all, i, run)
  {
    walls[i] = json_number_value(json_object_get(run, "wall"));
    mn = walls[i] < mn ? walls[i] : mn;
    mx = walls[i] > mx ? walls[i] : mx;
  }
  json_object_set_new(e, "runs", all);
  json_object_set_new(
    e, "repeat",
    json_integer(w->repeat_auto ? (json_int_t)n : (json_int_t)w->repeat));
  if (w->repeat_auto)
    json_object_set_new(e, "repeat_auto", json_true());
  if (n) {
    json_object_set_new(e, "min", json_real(mn));
    json_object_set_new(e, "median", json_real(ff_median(walls, n)));
    json_object_set_new(e, "max", json_real(mx));
  }
  free(walls);
  return 0;
}

/* The pending visit's workloads merged with the configuration's earlier
 * visits', in scenario order. */
/* A configuration's dm counts over all its visits: the earlier visits'
 * (before) added to the last one's (dm), max_active their largest
 * (dm_resolve zeroes the counters at every visit). */
static void
merge_dm(json_t *dm, json_t *before)
{
  static const char *const sum[] = {"activations", "created", "removed",
                                    "forced"};

  if (!json_is_object(dm) || !json_is_object(before))
    return;
  for (size_t i = 0; i < sizeof sum / sizeof *sum; i++)
    json_object_set_new(
      dm, sum[i],
      json_integer(json_integer_value(json_object_get(dm, sum[i])) +
                   json_integer_value(json_object_get(before, sum[i]))));
  if (json_integer_value(json_object_get(before, "max_active")) >
      json_integer_value(json_object_get(dm, "max_active")))
    json_object_set(dm, "max_active", json_object_get(before, "max_active"));
}

static int
merge_pending(struct run_sched *rs)
{
  json_t *cj = rs->pending, *now, *out;
  int rc = 0;

  if (!cj)
    return 0;
  now = json_object_get(cj, "workloads");
  out = json_array();
  if (!out)
    rc = ff_error("out of memory");
  for (unsigned w = 0; !rc && w < rs->sc->nworkloads; w++) {
    const struct ff_workload *wk = &rs->sc->workloads[w];
    json_t *b = by_name(rs->prev, wk->name), *e = by_name(now, wk->name);

    if (e)
      rc = merge_entry(e, b, wk);
    if (e || b)
      json_array_append(out, e ? e : b);
  }
  if (!rc)
    json_object_set_new(cj, "workloads", out);
  else
    json_decref(out);
  merge_dm(json_object_get(cj, "dm"), rs->prev_dm);
  json_decref(rs->prev);
  json_decref(rs->prev_dm);
  rs->prev = rs->prev_dm = NULL;
  rs->pending = NULL;
  return rc;
}

static double
elapsed(const struct run_sched *rs)
{
  struct timespec t;

  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - rs->t0.tv_sec) +
         (double)(t.tv_nsec - rs->t0.tv_nsec) / 1e9;
}

int
run_sched_next(struct run_sched *rs, struct run *r, struct ff_plan_step *s)
{
  if (merge_pending(rs) < 0)
    return -1;
  if (!rs->started) {
    rs->started = 1;
    clock_gettime(CLOCK_MONOTONIC, &rs->t0);
  }
  for (;;) {
    enum ff_plan_next n = ff_plan_next(rs->plan, s);
    enum ff_plan_stop stop;
    struct ff_runreport *rr;
    int c;

    if (n == FF_PLAN_VISIT)
      return 1;
    if (n == FF_PLAN_DONE)
      return 0;
    rr = run_doc_model(rs->doc);
    c = rr ? ff_plan_confident(rr, rs->autos, rs->nautos, rs->why,
                               sizeof rs->why)
           : -2;
    ff_runreport_free(rr);
    if (c < -1)
      return -1;
    ff_plan_look(rs->plan, c, elapsed(rs));
    stop = ff_plan_auto_stop(rs->plan);
    run_say(r, "round %u: %s%s%s", ff_plan_rounds(rs->plan),
            c > 0 ? "every ratio of an auto workload is clear of 1" : rs->why,
            stop ? "; auto stops: " : "", stop ? ff_plan_stop_name(stop) : "");
  }
}

void
run_sched_end(struct run_sched *rs, json_t *doc)
{
  json_t *sj, *visits = json_array(), *autos = json_array();
  const struct ff_plan_step *o;
  size_t n;

  if (!rs)
    return;
  merge_pending(rs);
  o = ff_plan_order(rs->plan, &n);
  for (size_t i = 0; i < n; i++)
    json_array_append_new(visits,
                          json_pack("{s:i, s:I}", "round", (int)o[i].round + 1,
                                    "config", (json_int_t)o[i].config + 1));
  for (size_t i = 0; i < rs->nautos; i++)
    json_array_append_new(autos, json_string(rs->autos[i]));
  sj =
    json_pack("{s:s, s:i, s:s, s:o}", "order", "interleaved", "rounds",
              (int)ff_plan_rounds(rs->plan), "stop",
              ff_plan_stop_name(ff_plan_stopped(rs->plan)), "visits", visits);
  if (ff_plan_is_auto(rs->plan))
    json_object_set_new(
      sj, "auto",
      json_pack("{s:o, s:i, s:f, s:f, s:s}", "workloads", autos, "max_rounds",
                (int)ff_plan_max_rounds(rs->plan), "budget_s",
                ff_plan_budget(rs->plan), "elapsed_s",
                rs->started ? elapsed(rs) : 0.0, "why",
                ff_plan_stopped(rs->plan) == FF_PLAN_CONFIDENT
                  ? "every ratio of an auto workload is clear of 1"
                  : rs->why));
  else
    json_decref(autos);
  json_object_set_new(doc, "schedule", sj);
  ff_plan_free(rs->plan);
  free(rs->autos);
  free(rs);
}
