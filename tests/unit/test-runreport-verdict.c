/* ff-runreport-verdict: the verdict under the run report's table
 * (docs/report.md): ratios with their 95% interval from the
 * repetitions, noise, single samples, failed runs, the effect of a matrix
 * key over several pairs of configs.  The documents are tests/data/
 * verdict-clear.json (ratios clear of the spread), verdict-noise.json
 * (differences within it) and verdict-single.json (one repetition each),
 * and run-sample.json (two keys, two pairs each, a failed run). */
#include "ff-test.h"
#include "ff-testdata.h"
#include "ff-capture.h"
#include "ff-runreport.h"
#include "ff-runreport-json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static char *
verdict(const struct ff_runreport *rr)
{
  struct ff_capture c;

  assert_ok(ff_runreport_print_verdict(rr, ff_capture_open(&c)));
  return ff_capture_close(&c);
}

static char *
report(const struct ff_runreport *rr)
{
  struct ff_capture c;

  assert_ok(ff_runreport_print(rr, ff_capture_open(&c), 0));
  return ff_capture_close(&c);
}

/* A workload of the given wall times (runs[] is static: up to 8). */
static struct ff_rr_workload
wl(const char *name, struct ff_rr_run *runs, size_t nruns, const double *walls)
{
  struct ff_rr_workload w = {0};

  w.name = name;
  w.type = "pvs";
  w.repeat = (long long)nruns;
  w.nruns = nruns;
  w.runs = runs;
  w.min = w.max = walls[0];
  for (size_t i = 0; i < nruns; i++) {
    runs[i].wall = walls[i];
    w.min = walls[i] < w.min ? walls[i] : w.min;
    w.max = walls[i] > w.max ? walls[i] : w.max;
  }
  w.median = walls[nruns / 2]; /* the tests give them sorted, n odd */
  return w;
}

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* ratio: the Hodges-Lehmann estimate, [lo, hi] the Mann-Whitney 95%
 * interval (ff-stats-ci.h, tested there); judged by whether it holds 1,
 * with 4 repetitions a side at least. */
static void
test_ratio(void **state)
{
  static struct ff_rr_run r1[8], r2[8], r3[8], r4[8], r5[8], r6[8], r7[8];
  struct ff_rr_workload ev =
    wl("ev", r1, 5, (const double[]){9.0, 9.1, 9.3, 9.4, 9.6});
  struct ff_rr_workload dir =
    wl("dir", r2, 5, (const double[]){0.20, 0.205, 0.21, 0.215, 0.22});
  /* min-max ranges apart, but by 1% only: a result, 0.96-0.98x */
  struct ff_rr_workload near =
    wl("near", r3, 5, (const double[]){9.61, 9.62, 9.65, 9.7, 9.75});
  /* the 0.96x (min-max 0.92-1.00x) with 3 a side: not judged */
  struct ff_rr_workload three =
    wl("three", r4, 3, (const double[]){0.92, 0.96, 1.0});
  struct ff_rr_workload one =
    wl("one", r5, 3, (const double[]){0.95, 1.0, 1.02});
  /* overlapping: no clear difference */
  struct ff_rr_workload ov =
    wl("ov", r6, 5, (const double[]){9.05, 9.2, 9.35, 9.5, 9.7});
  struct ff_rr_workload zero = wl("zero", r7, 2, (const double[]){0, 0.1});
  struct ff_rr_ratio r;

  (void)state;
  assert_ok(ff_runreport_ratio(&ev, &dir, &r));
  assert_near(r.ratio, 9.3 / 0.21);
  /* 5 and 5: k = 3, the 3rd smallest and largest of the 25 ratios */
  assert_near(r.lo, 9.0 / 0.215);
  assert_near(r.hi, 9.6 / 0.205);
  assert_true(r.confidence >= 0.95);
  assert_int_equal(r.nruns_a, 5);
  assert_int_equal(r.nruns_b, 5);
  assert_int_equal(r.judgement, FF_RR_CLEAR);
  /* the other way round: clear too, below 1 */
  assert_ok(ff_runreport_ratio(&dir, &ev, &r));
  assert_true(r.hi < 1);
  assert_int_equal(r.judgement, FF_RR_CLEAR);
  assert_ok(ff_runreport_ratio(&ev, &near, &r));
  assert_true(r.hi < 1 && r.lo > 0.9);
  assert_int_equal(r.judgement, FF_RR_CLEAR);
  assert_ok(ff_runreport_ratio(&ev, &ov, &r));
  assert_true(r.lo < 1 && r.hi > 1);
  assert_int_equal(r.judgement, FF_RR_NOISE);
  /* 3 on a side: an estimate, no interval, not judged */
  assert_ok(ff_runreport_ratio(&three, &one, &r));
  assert_int_equal(r.judgement, FF_RR_TOO_FEW);
  assert_near(r.lo, r.ratio);
  assert_near(r.hi, r.ratio);
  /* 5 and 3 are enough (C(8, 3) = 56 >= 40) */
  assert_ok(ff_runreport_ratio(&dir, &three, &r));
  assert_int_equal(r.judgement, FF_RR_CLEAR);
  /* a failed run or unit: not judged, before anything else */
  dir.failed_runs = 1;
  assert_ok(ff_runreport_ratio(&ev, &dir, &r));
  assert_int_equal(r.judgement, FF_RR_FAILED);
  dir.failed_runs = 0;
  ev.failed_units = 2;
  assert_ok(ff_runreport_ratio(&dir, &ev, &r));
  assert_int_equal(r.judgement, FF_RR_FAILED);
  /* no ratio to a time of 0 */
  assert_int_equal(ff_runreport_ratio(&dir, &zero, &r), -1);
  assert_non_null(strstr(ff_errmsg(), "zero: a wall time of 0 s"));
}

static void
test_fmt_ratio(void **state)
{
  static const struct {
    double r;
    const char *want;
  } cases[] = {
    {96.4, "96x"},  {10.0, "10x"},     {9.96, "10x"},   {3.14, "3.1x"},
    {2.0, "2.0x"},  {1.994, "1.99x"},  {1.02, "1.02x"}, {0.98, "0.98x"},
    {0.1, "0.10x"}, {0.004, "0.004x"},
  };
  char buf[32];

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    assert_string_equal(ff_runreport_fmt_ratio(cases[i].r, buf, sizeof buf),
                        cases[i].want);
}

/* verdict-clear.json: event activation far above direct activation, and
 * 1 ms per I/O slower than ideal beyond the spread. */
static void
test_clear(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("verdict-clear.json");
  struct ff_rr_effect *fx;
  size_t n, npairs;
  char *text;

  (void)state;
  fx = ff_runreport_effects(rr, "fusefarm/profile", "builtin:fixed-1ms", &n,
                            &npairs);
  assert_non_null(fx);
  assert_int_equal(n, 3);
  assert_int_equal(npairs, 1);
  assert_string_equal(fx[0].workload, "pvs");
  /* 5 and 5: the 3rd smallest and largest of the 25 ratios */
  assert_near(fx[0].lo, 0.95 / 0.315);
  assert_near(fx[0].hi, 1.00 / 0.305);
  assert_true(fx[0].lo < fx[0].ratio && fx[0].ratio < fx[0].hi);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(fx[i].judgement, FF_RR_CLEAR);
    assert_int_equal(fx[i].npairs, 1);
  }
  free(fx);
  /* the base value against itself, or a value no config has: nothing */
  assert_null(
    ff_runreport_effects(rr, "fusefarm/profile", "ideal", &n, &npairs));
  assert_int_equal(n, 0);
  assert_null(
    ff_runreport_effects(rr, "fusefarm/profile", "builtin:none", &n, &npairs));
  assert_int_equal(n, 0);

  text = verdict(rr);
  assert_string_equal(
    text, "verdict (ratios of wall times: the Hodges-Lehmann estimate "
          "from the repetitions with its 95% confidence interval, "
          "Mann-Whitney; an interval holding 1 is no clear difference; "
          "fewer than 4 repetitions a side are not judged):\n"
          "- event-activation = 44x direct-activation in config 1 (5 "
          "repetitions each, 95% CI 42\u201347x)\n"
          "- event-activation = 20x direct-activation in config 2 (5 "
          "repetitions each, 95% CI 19\u201321x)\n"
          "- profile=builtin:fixed-1ms vs profile=ideal (1 pair of configs "
          "differing only in it):\n"
          "    pvs 3.1x (95% CI 3.0\u20133.3x)\n"
          "    direct-activation 3.0x (95% CI 2.8\u20133.2x)\n"
          "    event-activation 1.33x (95% CI 1.27\u20131.40x)\n");
  free(text);

  /* The report prints it under the table, after the definitions. */
  text = report(rr);
  assert_non_null(
    strstr(text, "\nmedian (min\u2013max): wall time of the workload over "
                 "its 5 repetitions (middle, fastest, slowest); slowest "
                 "pvscan, vgchange: the longest of the last repetition\n"
                 "units of event-activation: 4 = 3 pvscans (one per "
                 "device) + 1 vgchange (one per VG the pvscans completed), "
                 "config 1, last repetition\n"
                 "ideal: the profile with no latency: every request is "
                 "answered at once\n"
                 "builtin:fixed-1ms: every read and write takes 1 ms\n"
                 "\nverdict ("));
  free(text);
  ff_runreport_free(rr);
}

/* verdict-noise.json: every difference is inside the repetitions'
 * spread: every interval holds 1, and none is called a result. */
static void
test_noise(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("verdict-noise.json");
  struct ff_rr_effect *fx;
  size_t n, npairs;
  char *text;

  (void)state;
  fx = ff_runreport_effects(rr, "global/use_aio", "0", &n, &npairs);
  assert_non_null(fx);
  assert_int_equal(n, 3);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(fx[i].judgement, FF_RR_NOISE);
  free(fx);
  text = verdict(rr);
  assert_string_equal(
    text, "verdict (ratios of wall times: the Hodges-Lehmann estimate "
          "from the repetitions with its 95% confidence interval, "
          "Mann-Whitney; an interval holding 1 is no clear difference; "
          "fewer than 4 repetitions a side are not judged):\n"
          "- event-activation = 1.00x direct-activation in config 1 (5 "
          "repetitions each, 95% CI 0.87\u20131.14x): no clear "
          "difference\n"
          "- event-activation = 0.97x direct-activation in config 2 (5 "
          "repetitions each, 95% CI 0.88\u20131.08x): no clear "
          "difference\n"
          "- use_aio=0 vs use_aio=1 (1 pair of configs differing only in "
          "it):\n"
          "    no clear difference (the 95% interval holds 1): pvs 1.03x "
          "(95% CI 0.95\u20131.12x), event-activation 1.02x (95% CI "
          "0.85\u20131.19x), direct-activation 1.02x (95% CI "
          "0.94\u20131.11x)\n");
  free(text);
  ff_runreport_free(rr);
}

/* verdict-single.json: one repetition each: ratios shown, not judged. */
static void
test_single(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("verdict-single.json");
  struct ff_rr_effect *fx;
  size_t n, npairs;
  char *text;

  (void)state;
  fx = ff_runreport_effects(rr, "fusefarm/profile", "builtin:fixed-1ms", &n,
                            &npairs);
  assert_non_null(fx);
  assert_int_equal(n, 3);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(fx[i].judgement, FF_RR_TOO_FEW);
  free(fx);
  text = verdict(rr);
  assert_string_equal(
    text, "verdict (ratios of wall times: the Hodges-Lehmann estimate "
          "from the repetitions with its 95% confidence interval, "
          "Mann-Whitney; an interval holding 1 is no clear difference; "
          "fewer than 4 repetitions a side are not judged):\n"
          "- event-activation = 44x direct-activation in config 1 (1 and 1 "
          "repetitions: too few for a 95% interval, not judged)\n"
          "- event-activation = 20x direct-activation in config 2 (1 and 1 "
          "repetitions: too few for a 95% interval, not judged)\n"
          "- profile=builtin:fixed-1ms vs profile=ideal (1 pair of configs "
          "differing only in it):\n"
          "    too few repetitions for a 95% interval (4 a side, or 3 and "
          "5): not judged: pvs 3.1x, direct-activation 3.0x, "
          "event-activation 1.33x\n");
  free(text);
  text = report(rr);
  assert_non_null(strstr(text, "\nmedian: wall time of the workload, 1 "
                               "repetition each (no spread)"));
  free(text);
  ff_runreport_free(rr);
}

/* run-sample.json: a key's effect over two pairs of configs is the
 * geometric mean of the pairs' ratios; 3 repetitions a side (pvs) are
 * too few to judge; a failed run in one pair is not judged. */
static void
test_pairs(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("run-sample.json");
  struct ff_rr_effect *fx;
  struct ff_rr_ratio p1, p2;
  size_t n, npairs;

  (void)state;
  fx = ff_runreport_effects(rr, "global/use_aio", "0", &n, &npairs);
  assert_non_null(fx);
  assert_int_equal(npairs, 2);
  assert_int_equal(n, 3);
  /* pvs: configs 3/1 and 4/2 */
  assert_string_equal(fx[0].workload, "pvs");
  assert_int_equal(fx[0].npairs, 2);
  assert_ok(ff_runreport_ratio(&rr->configs[2].workloads[0],
                               &rr->configs[0].workloads[0], &p1));
  assert_ok(ff_runreport_ratio(&rr->configs[3].workloads[0],
                               &rr->configs[1].workloads[0], &p2));
  assert_near(fx[0].ratio, sqrt(p1.ratio * p2.ratio));
  assert_near(fx[0].rmin, fmin(p1.ratio, p2.ratio));
  assert_near(fx[0].rmax, fmax(p1.ratio, p2.ratio));
  assert_int_equal(fx[0].judgement, FF_RR_TOO_FEW);
  /* lvchange: config 3's failed run */
  assert_string_equal(fx[2].workload, "lvchange");
  assert_int_equal(fx[2].judgement, FF_RR_FAILED);
  free(fx);
  ff_runreport_free(rr);
}

/* More than 4 configs with both activations: the smallest and the
 * largest ratio only; a single config with neither: nothing to compare. */
static void
test_many_and_none(void **state)
{
  const char *dir = getenv("FF_TEST_DATA");
  char path[4096], *text, *p;
  json_t *doc, *configs, *c0;
  json_error_t e;
  struct ff_runreport *rr;
  int lines = 0;

  (void)state;
  assert_non_null(dir);
  snprintf(path, sizeof path, "%s/verdict-clear.json", dir);
  doc = json_load_file(path, 0, &e);
  assert_non_null(doc);
  configs = json_object_get(doc, "configs");
  c0 = json_array_get(configs, 0);
  for (int i = 3; i <= 6; i++) {
    json_t *c = json_deep_copy(c0);
    char v[32];

    json_object_set_new(c, "id", json_integer(i));
    snprintf(v, sizeof v, "p%d", i);
    json_object_set_new(json_object_get(c, "settings"), "fusefarm/profile",
                        json_string(v));
    json_array_append_new(configs, c);
  }
  text = json_dumps(doc, 0);
  rr = ff_runreport_load_text(text, strlen(text), "many");
  free(text);
  assert_nonnull_err(rr);
  text = verdict(rr);
  assert_non_null(strstr(text, "- event against direct activation in 6 "
                               "configs; the smallest and the largest:\n"));
  for (p = text; (p = strstr(p, "\n- event-activation = ")); p++)
    lines++;
  assert_int_equal(lines, 2);
  assert_non_null(strstr(text, "direct-activation in config 2 ("));
  free(text);
  ff_runreport_free(rr);

  /* a run that stopped early says so under its date */
  json_object_set_new(doc, "error", json_string("interrupted"));
  text = json_dumps(doc, 0);
  rr = ff_runreport_load_text(text, strlen(text), "stopped");
  free(text);
  assert_nonnull_err(rr);
  assert_string_equal(rr->error, "interrupted");
  text = report(rr);
  assert_non_null(strstr(text, "\nstopped early: interrupted (what ran "
                               "before the stop is below; the rest did "
                               "not run)\n"));
  free(text);
  ff_runreport_free(rr);
  json_object_del(doc, "error");

  /* one config, pvs only */
  while (json_array_size(configs) > 1)
    json_array_remove(configs, 1);
  json_array_remove(json_object_get(c0, "workloads"), 2);
  text = json_dumps(doc, 0);
  rr = ff_runreport_load_text(text, strlen(text), "one");
  free(text);
  assert_nonnull_err(rr);
  text = verdict(rr);
  assert_non_null(strstr(text, "\n- nothing to compare: "));
  free(text);
  ff_runreport_free(rr);
  json_decref(doc);
}

/* verdict-noise.json's configs 1 and 2 under profile "ideal", and again
 * as configs 3 and 4 under profile "slow", where use_aio=0's pvs (config
 * 4's) takes `factor` times as long. */
static struct ff_runreport *
two_profiles(double factor)
{
  const char *dir = getenv("FF_TEST_DATA");
  char path[4096], *text;
  json_t *doc, *configs;
  json_error_t e;
  struct ff_runreport *rr;

  assert_non_null(dir);
  snprintf(path, sizeof path, "%s/verdict-noise.json", dir);
  doc = json_load_file(path, 0, &e);
  assert_non_null(doc);
  configs = json_object_get(doc, "configs");
  for (size_t i = 0; i < 2; i++) {
    json_t *c = json_deep_copy(json_array_get(configs, i));
    json_t *pvs = json_array_get(json_object_get(c, "workloads"), 0);

    json_object_set_new(
      json_object_get(json_array_get(configs, i), "settings"),
      "fusefarm/profile", json_string("ideal"));
    json_object_set_new(c, "id", json_integer((json_int_t)i + 3));
    json_object_set_new(json_object_get(c, "settings"), "fusefarm/profile",
                        json_string("slow"));
    if (i == 1) {
      json_t *runs = json_object_get(pvs, "runs");
      static const char *const stat[] = {"min", "median", "max"};

      for (size_t r = 0; r < json_array_size(runs); r++) {
        json_t *run = json_array_get(runs, r);

        json_object_set_new(
          run, "wall",
          json_real(factor * json_real_value(json_object_get(run, "wall"))));
      }
      for (size_t k = 0; k < 3; k++)
        json_object_set_new(
          pvs, stat[k],
          json_real(factor * json_real_value(json_object_get(pvs, stat[k]))));
    }
    json_array_append_new(configs, c);
  }
  text = json_dumps(doc, 0);
  rr = ff_runreport_load_text(text, strlen(text), "two profiles");
  free(text);
  json_decref(doc);
  assert_nonnull_err(rr);
  return rr;
}

/* Two pairs that disagree (no clear difference under one profile, 3x
 * under the other, the intervals apart): an interaction, listed pair by
 * pair, each named by its other setting. */
static void
test_interaction(void **state)
{
  struct ff_runreport *rr = two_profiles(3);
  struct ff_rr_effect *fx;
  size_t n, npairs;
  char *text;

  (void)state;
  fx = ff_runreport_effects(rr, "global/use_aio", "0", &n, &npairs);
  assert_non_null(fx);
  assert_int_equal(npairs, 2);
  assert_string_equal(fx[0].workload, "pvs");
  assert_int_equal(fx[0].judgement, FF_RR_INTERACTION);
  assert_int_equal(fx[1].judgement, FF_RR_NOISE);
  free(fx);
  text = verdict(rr);
  assert_non_null(strstr(
    text, "- use_aio=0 vs use_aio=1 (2 pairs of configs differing only in "
          "it):\n"
          "    pvs differs with the other settings (interaction: the pairs' "
          "intervals do not overlap): 1.03x (95% CI 0.95\u20131.12x; no "
          "clear difference) with profile=ideal, 3.1x (95% CI "
          "2.9\u20133.4x) with profile=slow\n"
          "    no clear difference (the 95% interval holds 1): "));
  assert_non_null(strstr(text, "with use_aio=1, 3.0x (95% CI 2.8\u20133.2x) "
                               "with use_aio=0\n"));
  free(text);
  ff_runreport_free(rr);
}

/* A result in one pair and no clear difference in the other, their
 * intervals overlapping: mixed, listed pair by pair too, never a
 * result. */
static void
test_mixed(void **state)
{
  struct ff_runreport *rr = two_profiles(1.12);
  struct ff_rr_effect *fx;
  size_t n, npairs;
  char *text;

  (void)state;
  fx = ff_runreport_effects(rr, "global/use_aio", "0", &n, &npairs);
  assert_non_null(fx);
  assert_string_equal(fx[0].workload, "pvs");
  assert_int_equal(fx[0].judgement, FF_RR_MIXED);
  free(fx);
  text = verdict(rr);
  assert_non_null(strstr(
    text, "    pvs is not clear in every pair: 1.03x (95% CI "
          "0.95\u20131.12x; no clear difference) with profile=ideal, 1.15x "
          "(95% CI 1.07\u20131.25x) with profile=slow\n"));
  assert_null(strstr(text, "\n    pvs 1."));
  free(text);
  ff_runreport_free(rr);
}

/* The document's "verdict" (docs/run-json.md): every axis value with
 * its effects and the pairs of configs behind them, as printed. */
static void
test_verdict_json(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("run-sample.json");
  json_t *v = ff_runreport_verdict_json(rr), *axes, *ax, *fx, *pair;
  size_t i;

  (void)state;
  assert_nonnull_err(v);
  assert_int_equal(json_array_size(json_object_get(v, "event_direct")), 0);
  axes = json_object_get(v, "axes");
  assert_int_equal(json_array_size(axes), 2);
  ax = json_array_get(axes, 0);
  assert_string_equal(json_string_value(json_object_get(ax, "key")),
                      "global/use_aio");
  assert_string_equal(json_string_value(json_object_get(ax, "value")), "0");
  assert_string_equal(json_string_value(json_object_get(ax, "base")), "1");
  assert_int_equal(json_integer_value(json_object_get(ax, "pairs")), 2);
  assert_string_equal(json_string_value(json_object_get(ax, "compares")),
                      "global/use_aio=0 vs global/use_aio=1");
  json_array_foreach(json_object_get(ax, "effects"), i, fx)
  {
    const char *w = json_string_value(json_object_get(fx, "workload"));
    const char *j = json_string_value(json_object_get(fx, "judgement"));
    double r = json_real_value(json_object_get(fx, "ratio"));

    json_t *lo = json_object_get(fx, "low"), *hi = json_object_get(fx, "high");

    assert_int_equal(json_array_size(json_object_get(fx, "pairs")), 2);
    assert_string_equal(j, !strcmp(w, "lvchange") ? "failed" : "too-few");
    /* too few: no interval; lvchange (5 a side): one, around the ratio */
    if (!strcmp(w, "lvchange")) {
      assert_true(json_real_value(lo) <= r && r <= json_real_value(hi));
    } else {
      assert_true(json_is_null(lo) && json_is_null(hi));
    }
  }
  /* pvs, first pair: config 3 (use_aio=0) against config 1 */
  fx = json_array_get(json_object_get(ax, "effects"), 0);
  assert_string_equal(json_string_value(json_object_get(fx, "workload")),
                      "pvs");
  pair = json_array_get(json_object_get(fx, "pairs"), 0);
  assert_int_equal(json_integer_value(json_object_get(pair, "config")), 3);
  assert_int_equal(json_integer_value(json_object_get(pair, "base_config")),
                   1);
  assert_string_equal(json_string_value(json_object_get(pair, "base_label")),
                      rr->configs[0].label);
  assert_string_equal(json_string_value(json_object_get(pair, "with")),
                      "obtain_device_list_from_udev=1");
  {
    struct ff_rr_ratio r;

    assert_ok(ff_runreport_ratio(&rr->configs[2].workloads[0],
                                 &rr->configs[0].workloads[0], &r));
    assert_near(json_real_value(json_object_get(pair, "ratio")), r.ratio);
    assert_true(json_is_null(json_object_get(pair, "low")));
  }
  json_decref(v);
  ff_runreport_free(rr);

  /* event against direct activation, per config */
  rr = ff_test_runreport("verdict-clear.json");
  v = ff_runreport_verdict_json(rr);
  assert_nonnull_err(v);
  fx = json_array_get(json_object_get(v, "event_direct"), 0);
  assert_non_null(fx);
  assert_non_null(json_object_get(fx, "config"));
  assert_non_null(json_object_get(fx, "label"));
  assert_string_equal(json_string_value(json_object_get(fx, "judgement")),
                      "clear");
  assert_string_equal(
    json_string_value(json_object_get(fx, "compares")),
    "event-activation vs direct-activation in config 1 (profile=ideal)");
  assert_true(json_real_value(json_object_get(fx, "low")) > 40);
  assert_true(json_real_value(json_object_get(fx, "high")) < 48);
  assert_true(json_real_value(json_object_get(fx, "confidence")) >= 0.95);
  json_decref(v);
  ff_runreport_free(rr);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_ratio),         cmocka_unit_test(test_fmt_ratio),
    cmocka_unit_test(test_clear),         cmocka_unit_test(test_noise),
    cmocka_unit_test(test_single),        cmocka_unit_test(test_pairs),
    cmocka_unit_test(test_interaction),   cmocka_unit_test(test_mixed),
    cmocka_unit_test(test_many_and_none), cmocka_unit_test(test_verdict_json),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
