/* ff-plan: the order of a run's repetitions (interleaved: round by round,
 * every configuration in each), fixed repeats of different lengths, and
 * repeat = auto: a look after each round from the 4th, stopping when
 * confident, at the round cap, at the budget, or when the verdict
 * compares nothing.  The last tests drive the plan with run documents of
 * fake times (tests/lib ff-fakenoise: seeded lognormal noise) judged by
 * ff_plan_confident: a true ratio of 2 stops confident at once, one of
 * 1.1 mostly after more rounds, a true ratio of 1 runs to the cap. */
#include "ff-test.h"
#include "ff-fakenoise.h"
#include "ff-plan.h"
#include "ff-runreport.h"

#include <jansson.h>
#include <stdbool.h>

/* Run p to its end, answering every look with confident[look] (the last
 * entry repeats) and an elapsed time of secs per round; the visits into
 * v (up to nv), their count returned. */
static size_t
drive(struct ff_plan *p, const int *confident, size_t nconf, double secs,
      struct ff_plan_step *v, size_t nv)
{
  struct ff_plan_step s;
  enum ff_plan_next n;
  size_t nvisit = 0, looks = 0;

  while ((n = ff_plan_next(p, &s)) != FF_PLAN_DONE) {
    if (n == FF_PLAN_LOOK) {
      ff_plan_look(p, confident[looks < nconf ? looks : nconf - 1],
                   secs * ff_plan_rounds(p));
      looks++;
      continue;
    }
    assert_true(nvisit < nv);
    v[nvisit++] = s;
  }
  return nvisit;
}

/* Two configurations, repeat 3: A B A B A B, not A A A B B B. */
static void
test_interleaved(void **state)
{
  unsigned repeat[] = {3, 3};
  struct ff_plan *p = ff_plan_new(2, 2, repeat, NULL, NULL);
  struct ff_plan_step v[16];
  const struct ff_plan_step *o;
  size_t n, no;

  (void)state;
  assert_nonnull_err(p);
  assert_false(ff_plan_is_auto(p));
  n = drive(p, (const int[]){0}, 1, 1, v, 16);
  assert_int_equal(n, 6);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(v[i].round, i / 2);
    assert_int_equal(v[i].config, i % 2);
    assert_true(ff_plan_runs(p, &v[i], 0));
    assert_true(ff_plan_runs(p, &v[i], 1));
  }
  assert_int_equal(ff_plan_stopped(p), FF_PLAN_FIXED);
  assert_string_equal(ff_plan_stop_name(ff_plan_stopped(p)), "fixed");
  assert_int_equal(ff_plan_rounds(p), 3);
  o = ff_plan_order(p, &no);
  assert_int_equal(no, n);
  for (size_t i = 0; i < n; i++) { /* fields: the struct has padding */
    assert_int_equal(o[i].round, v[i].round);
    assert_int_equal(o[i].config, v[i].config);
  }
  ff_plan_free(p);
}

/* Repeats of 1 and 4 over three configurations: four rounds, the first
 * workload in round 0 only; a workload's k-th run is from round k. */
static void
test_uneven(void **state)
{
  unsigned repeat[] = {1, 4};
  struct ff_plan *p = ff_plan_new(3, 2, repeat, NULL, NULL);
  struct ff_plan_step v[32];
  size_t n;

  (void)state;
  assert_nonnull_err(p);
  n = drive(p, (const int[]){0}, 1, 1, v, 32);
  assert_int_equal(n, 12);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(v[i].round, i / 3);
    assert_int_equal(v[i].config, i % 3);
    assert_int_equal(ff_plan_runs(p, &v[i], 0), v[i].round == 0);
    assert_true(ff_plan_runs(p, &v[i], 1));
  }
  assert_false(ff_plan_runs(p, &v[0], 2)); /* no such workload */
  ff_plan_free(p);
}

/* auto: no look before round 4; confident at the first look stops at 4
 * rounds, at the third at 6. */
static void
test_auto_confident(void **state)
{
  unsigned repeat[] = {1};
  bool autow[] = {true};
  struct ff_plan_step v[64];
  struct ff_plan *p = ff_plan_new(2, 1, repeat, autow, NULL);

  (void)state;
  assert_nonnull_err(p);
  assert_true(ff_plan_is_auto(p));
  assert_int_equal(drive(p, (const int[]){1}, 1, 1, v, 64), 8);
  assert_int_equal(ff_plan_stopped(p), FF_PLAN_CONFIDENT);
  assert_int_equal(ff_plan_rounds(p), FF_PLAN_MIN_ROUNDS);
  ff_plan_free(p);

  p = ff_plan_new(2, 1, repeat, autow, NULL);
  assert_int_equal(drive(p, (const int[]){0, 0, 1}, 3, 1, v, 64), 12);
  assert_int_equal(ff_plan_stopped(p), FF_PLAN_CONFIDENT);
  assert_int_equal(ff_plan_rounds(p), 6);
  for (size_t i = 0; i < 12; i++) {
    assert_int_equal(v[i].round, i / 2);
    assert_int_equal(v[i].config, i % 2);
  }
  ff_plan_free(p);
}

/* auto, never confident: the cap (default 20, or given), the budget (one
 * more round of the mean length would pass it), nothing to compare. */
static void
test_auto_limits(void **state)
{
  unsigned repeat[] = {1};
  bool autow[] = {true};
  struct ff_plan_step v[128];
  struct ff_plan_opts o = {.max_rounds = 7};
  struct ff_plan *p = ff_plan_new(2, 1, repeat, autow, NULL);

  (void)state;
  assert_int_equal(drive(p, (const int[]){0}, 1, 1, v, 128),
                   2 * FF_PLAN_MAX_ROUNDS);
  assert_int_equal(ff_plan_stopped(p), FF_PLAN_MAX);
  assert_string_equal(ff_plan_stop_name(FF_PLAN_MAX), "max-rounds");
  ff_plan_free(p);

  p = ff_plan_new(2, 1, repeat, autow, &o);
  assert_int_equal(drive(p, (const int[]){0}, 1, 1, v, 128), 14);
  assert_int_equal(ff_plan_stopped(p), FF_PLAN_MAX);
  ff_plan_free(p);

  /* 10 s a round, 55 s: after 5 rounds (50 s) a 6th would end at 60 s */
  o = (struct ff_plan_opts){.budget_s = 55};
  p = ff_plan_new(2, 1, repeat, autow, &o);
  assert_int_equal(drive(p, (const int[]){0}, 1, 10, v, 128), 10);
  assert_int_equal(ff_plan_stopped(p), FF_PLAN_BUDGET);
  assert_int_equal(ff_plan_rounds(p), 5);
  ff_plan_free(p);

  p = ff_plan_new(1, 1, repeat, autow, NULL);
  assert_int_equal(drive(p, (const int[]){-1}, 1, 1, v, 128), 4);
  assert_int_equal(ff_plan_stopped(p), FF_PLAN_NOTHING);
  ff_plan_free(p);
}

/* An auto workload beside a fixed repeat of 6: auto confident after 4
 * rounds, the fixed one goes on alone to its 6th; the reason stays. */
static void
test_auto_and_fixed(void **state)
{
  unsigned repeat[] = {6, 1};
  bool autow[] = {false, true};
  struct ff_plan_step v[64];
  struct ff_plan *p = ff_plan_new(2, 2, repeat, autow, NULL);
  size_t n;

  (void)state;
  assert_int_equal(ff_plan_auto_stop(p), FF_PLAN_RUNNING);
  n = drive(p, (const int[]){1}, 1, 1, v, 64);
  assert_int_equal(n, 12);
  for (size_t i = 0; i < n; i++) {
    assert_true(ff_plan_runs(p, &v[i], 0));
    assert_int_equal(ff_plan_runs(p, &v[i], 1), v[i].round < 4);
  }
  assert_int_equal(ff_plan_auto_stop(p), FF_PLAN_CONFIDENT);
  assert_int_equal(ff_plan_stopped(p), FF_PLAN_CONFIDENT);
  ff_plan_free(p);
}

/* ---- with fake times -----------------------------------------------------
 */

/* A run document of two configurations (use_aio 1 and 0), one pvs workload
 * each, n runs: config 1's times true time 1 s, config 2's ratio s. */
static struct ff_runreport *
fake_doc(const double *a, const double *b, size_t n)
{
  json_t *doc =
    json_pack("{s:s, s:i, s:{s:s}, s:s, s:{s:s, s:s}, s:[]}", "format",
              "fusefarm-run", "version", 1, "scenario", "name", "plan",
              "started", "2026-12-01T00:00:00Z", "host", "kernel", "6.1",
              "lvm_version", "2.03.16", "configs");
  json_t *configs = json_object_get(doc, "configs");
  struct ff_runreport *rr;
  char *text;

  for (int c = 0; c < 2; c++) {
    const double *t = c ? b : a;
    json_t *runs = json_array();
    double mn = t[0], mx = t[0];

    for (size_t i = 0; i < n; i++) {
      json_array_append_new(runs, json_pack("{s:f, s:i, s:i}", "wall", t[i],
                                            "exit", 0, "errors", 0));
      mn = t[i] < mn ? t[i] : mn;
      mx = t[i] > mx ? t[i] : mx;
    }
    json_array_append_new(
      configs,
      json_pack("{s:i, s:s, s:{s:i}, s:[{s:s, s:s, s:s, s:i, s:o, s:f, s:f, "
                "s:f}]}",
                "id", c + 1, "label", c ? "use_aio=0" : "use_aio=1",
                "settings", "global/use_aio", c ? 0 : 1, "workloads", "name",
                "pvs", "type", "pvs", "command", "lvm pvs", "repeat", (int)n,
                "runs", runs, "min", mn, "median", (mn + mx) / 2, "max", mx));
  }
  text = json_dumps(doc, JSON_COMPACT);
  json_decref(doc);
  rr = ff_runreport_load_text(text, strlen(text), "fake");
  free(text);
  assert_nonnull_err(rr);
  return rr;
}

/* The plan over fake repetitions of true ratio `ratio` (noise sigma
 * 0.1, seeded): the rounds it ran and why it stopped. */
static enum ff_plan_stop
simulate(double ratio, uint64_t seed, unsigned *rounds)
{
  unsigned repeat[] = {1};
  bool autow[] = {true};
  const char *names[] = {"pvs"};
  struct ff_plan *p = ff_plan_new(2, 1, repeat, autow, NULL);
  double a[FF_PLAN_MAX_ROUNDS], b[FF_PLAN_MAX_ROUNDS];
  size_t na = 0, nb = 0;
  struct ff_plan_step s;
  enum ff_plan_next n;
  enum ff_plan_stop stop;

  assert_nonnull_err(p);
  while ((n = ff_plan_next(p, &s)) != FF_PLAN_DONE) {
    if (n == FF_PLAN_VISIT) {
      /* a round's visits come in config order: a, then b */
      if (s.config == 0)
        ff_fakenoise_lognormal(&seed, 1.0, 0.1, &a[na++], 1);
      else
        ff_fakenoise_lognormal(&seed, ratio, 0.1, &b[nb++], 1);
      continue;
    }
    assert_int_equal(na, nb);
    struct ff_runreport *rr = fake_doc(a, b, na);
    char why[256];
    int c = ff_plan_confident(rr, names, 1, why, sizeof why);

    assert_true(c == 0 || c == 1);
    assert_true(c == 1 || strstr(why, "pvs") != NULL);
    ff_runreport_free(rr);
    ff_plan_look(p, c, (double)na);
  }
  stop = ff_plan_stopped(p);
  *rounds = ff_plan_rounds(p);
  assert_int_equal(na, *rounds);
  ff_plan_free(p);
  return stop;
}

static void
test_fake_confident(void **state)
{
  unsigned rounds;

  (void)state;
  /* a clear ratio: confident at the first look */
  assert_int_equal(simulate(2.0, 1, &rounds), FF_PLAN_CONFIDENT);
  assert_int_equal(rounds, FF_PLAN_MIN_ROUNDS);
  assert_int_equal(simulate(0.5, 7, &rounds), FF_PLAN_CONFIDENT);
  assert_int_equal(rounds, FF_PLAN_MIN_ROUNDS);
  /* 1.10 with noise 0.1, eight seeds: mostly clear, mostly only after
   * more rounds than the minimum (what auto is for) */
  unsigned confident = 0, later = 0;

  for (uint64_t seed = 1; seed <= 8; seed++)
    if (simulate(1.10, seed, &rounds) == FF_PLAN_CONFIDENT) {
      confident++;
      later += rounds > FF_PLAN_MIN_ROUNDS;
    }
  assert_true(confident >= 6);
  assert_true(later >= 5);
}

static void
test_fake_noise(void **state)
{
  unsigned rounds;

  (void)state;
  /* no difference: the interval keeps holding 1, up to the cap */
  assert_int_equal(simulate(1.0, 11, &rounds), FF_PLAN_MAX);
  assert_int_equal(rounds, FF_PLAN_MAX_ROUNDS);
}

/* ff_plan_confident over names the verdict does not compare: -1. */
static void
test_confident_nothing(void **state)
{
  double a[] = {1, 1.1, 0.9, 1.05}, b[] = {2, 2.1, 1.9, 2.05};
  struct ff_runreport *rr = fake_doc(a, b, 4);
  const char *names[] = {"lvs"}, *pvs[] = {"pvs"};
  char why[256];

  (void)state;
  assert_int_equal(ff_plan_confident(rr, names, 1, why, sizeof why), -1);
  assert_int_equal(ff_plan_confident(rr, pvs, 1, why, sizeof why), 1);
  ff_runreport_free(rr);
  rr = fake_doc(a, b, 3); /* too few */
  assert_int_equal(ff_plan_confident(rr, pvs, 1, why, sizeof why), 0);
  assert_non_null(strstr(why, "too-few"));
  ff_runreport_free(rr);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_interleaved),
    cmocka_unit_test(test_uneven),
    cmocka_unit_test(test_auto_confident),
    cmocka_unit_test(test_auto_limits),
    cmocka_unit_test(test_auto_and_fixed),
    cmocka_unit_test(test_fake_confident),
    cmocka_unit_test(test_fake_noise),
    cmocka_unit_test(test_confident_nothing),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
