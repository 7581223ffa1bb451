/* ff-expect: --expect expressions (ff-expect.h, docs/bisect.md): the
 * grammar, parse errors naming their column, evaluation over run
 * documents loaded from JSON text (the values substituted, every
 * configuration, qualifiers, the baseline), what cannot be judged (a
 * failed or missing workload: 125) against what is bad input (a name the
 * run does not have: an error), the exit status, the skeleton of a
 * scenario, and the "expect" array read back and printed. */
#include "ff-test.h"
#include "ff-expect.h"
#include "ff-fakenoise.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* A workload entry: runs with the given walls (exit 5 when fail[i]). */
static char *
wl_json(const char *name, const char *type, double median, int nfail)
{
  char *s;
  int r = asprintf(
    &s,
    "{\"name\":\"%s\",\"type\":\"%s\",\"repeat\":3,\"runs\":["
    "{\"wall\":%g,\"exit\":%d,\"errors\":%d},{\"wall\":%g,\"exit\":0,"
    "\"errors\":0},{\"wall\":%g,\"exit\":0,\"errors\":0}],"
    "\"min\":%g,\"median\":%g,\"max\":%g%s}",
    name, type, median, nfail ? 5 : 0, nfail ? 1 : 0, median, median, median,
    median, median,
    strcmp(type, "event-activation") ? ""
                                     : ",\"devices\":[],\"activations\":[]");

  assert_true(r > 0);
  return s;
}

/* A run document: configs given as (settings JSON, workloads JSON). */
static struct ff_runreport *
doc(const char *extra, size_t n, const char *const *settings, char *const *wls)
{
  char *text = NULL, *cfgs = strdup("");
  struct ff_runreport *rr;

  for (size_t i = 0; i < n; i++) {
    char *c;

    assert_true(asprintf(&c,
                         "%s%s{\"id\":%zu,\"label\":\"c%zu\",\"settings\":%s,"
                         "\"workloads\":[%s]}",
                         cfgs, i ? "," : "", i + 1, i + 1, settings[i],
                         wls[i]) > 0);
    free(cfgs);
    cfgs = c;
  }
  assert_true(asprintf(&text,
                       "{\"format\":\"fusefarm-run\",\"version\":1,"
                       "\"scenario\":{\"name\":\"t\"},\"started\":\"now\","
                       "\"host\":{\"kernel\":\"k\",\"lvm_version\":\"v\"}%s,"
                       "\"configs\":[%s]}",
                       extra, cfgs) > 0);
  rr = ff_runreport_load_text(text, strlen(text), "doc");
  assert_nonnull_err(rr);
  free(text);
  free(cfgs);
  return rr;
}

/* Two configs, use_aio 0 and 1: event-activation 43.1 and 20 s, direct
 * activation 0.82 and 1 s; lvchange failed once in config 2. */
static struct ff_runreport *
aio_doc(const char *extra)
{
  const char *settings[] = {"{\"global/use_aio\":0,\"fusefarm/profile\":"
                            "\"ideal\"}",
                            "{\"global/use_aio\":1,\"fusefarm/profile\":"
                            "\"ideal\"}"};
  char *w[2], *ev, *dir, *lc;
  struct ff_runreport *rr;

  ev = wl_json("event-activation", "event-activation", 43.1, 0);
  dir = wl_json("direct-activation", "direct-activation", 0.82, 0);
  lc = wl_json("lvchange", "lvchange", 0.085, 0);
  assert_true(asprintf(&w[0], "%s,%s,%s", ev, dir, lc) > 0);
  free(ev);
  free(dir);
  free(lc);
  ev = wl_json("event-activation", "event-activation", 20, 0);
  dir = wl_json("direct-activation", "direct-activation", 1, 0);
  lc = wl_json("lvchange", "lvchange", 0.115, 1);
  assert_true(asprintf(&w[1], "%s,%s,%s", ev, dir, lc) > 0);
  free(ev);
  free(dir);
  free(lc);
  rr = doc(extra, 2, settings, w);
  free(w[0]);
  free(w[1]);
  return rr;
}

static void
test_parse_ok(void **state)
{
  static const char *const good[] = {
    "event-activation < 10 * direct-activation",
    "pvs<1",
    "pvs <= 500ms",
    "pvs > 2us and vgs >= 0.5min",
    "(pvs < 1 or vgs < 1) and lvs < 1",
    "2 * (pvs + vgs) / 3 - -1 < lvs",
    "event-activation[use_aio=0] < event-activation[use_aio=1, "
    "profile=ideal]",
    "lvchange <= 1.2 * baseline",
    "baseline < lvchange[use_aio=1]",
    "lvchange <= 1.2 * baseline.lvchange[global/use_aio=1]",
    ".5 < pvs",
    "bytes_per_device(lvchange) <= 32KiB",
    "reads_per_device(pvs) < 2 * baseline.reads_per_device(pvs)",
    "reads_per_device(pvs) < 2 * baseline",
    "bytes(pvs[use_aio=0]) > 1.5MiB and reads(pvs) < 300",
    "bytes(pvs) / reads(pvs) <= 4KiB",
    "bytes(pvs) / bytes(lvs) < 2 and bytes_per_command(lvs) / 2 > 1B",
    "bytes_per_command(lvchange) < 1GiB + 12B",
    "bytes(pvs) > 0",
  };

  (void)state;
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    struct ff_expect *e = ff_expect_parse(good[i]);

    if (!e)
      fail_msg("'%s' was refused: %s", good[i], ff_errmsg());
    assert_string_equal(ff_expect_text(e), good[i]);
    assert_int_equal(ff_expect_uses_baseline(e),
                     strstr(good[i], "baseline") != NULL);
    ff_expect_free(e);
  }
}

/* Every error names the column where it is. */
static void
test_parse_errors(void **state)
{
  static const struct {
    const char *text, *msg;
  } bad[] = {
    {"event-activation < < 3",
     "at column 20: expected a number or a workload name, got '<'"},
    {"", "at column 1: empty"},
    {"pvs", "at column 4: expected <, <=, > or >=, got the end"},
    {"pvs + 3", "at column 8: expected <, <=, > or >=, got the end"},
    {"pvs == 3", "at column 5: '==' is not allowed"},
    {"pvs != 3", "at column 5: '!=' is not allowed"},
    {"pvs < 1 < 2", "at column 9: comparisons do not chain"},
    {"pvs < 3xs", "at column 8: unknown unit 'xs' (times: s, ms, us, min; "
                  "bytes: B, KiB, MiB, GiB, binary only)"},
    {"bytes(pvs) < 3k", "at column 15: unknown unit 'k'"},
    {"bytes(pvs) < 3KB", "at column 15: unknown unit 'KB'"},
    /* I/O terms: functions, and units that do not mix */
    {"lvchange < 32KiB", "at column 10: cannot compare a time and bytes: "
                         "'lvchange' is a time, '32KiB' is bytes"},
    {"reads(pvs) < 1KiB", "at column 12: cannot compare a count of reads and "
                          "bytes: 'reads(pvs)' is a count of reads"},
    {"bytes_per_device(pvs) > 2 * pvs", "at column 23: cannot compare bytes "
                                        "and a time"},
    {"bytes(pvs) + reads(pvs) > 0", "at column 12: cannot add bytes and a "
                                    "count of reads"},
    {"pvs - bytes(pvs) > 0", "at column 5: cannot subtract a time and bytes"},
    {"bytes(pvs) * bytes(lvs) > 0", "at column 12: cannot multiply bytes and "
                                    "bytes"},
    {"2 / bytes(pvs) < 1", "at column 3: cannot divide a plain number and "
                           "bytes"},
    {"pvs / bytes(pvs) < 1", "at column 5: cannot divide a time and bytes"},
    {"size(pvs) < 1", "at column 1: unknown function 'size' (reads, bytes, "
                      "reads_per_device, bytes_per_device, reads_per_command, "
                      "bytes_per_command; a workload alone is its median wall "
                      "time)"},
    {"bytes(pvs < 1", "at column 11: expected ')', got '<'"},
    {"bytes() < 1", "at column 7: expected a workload name (as in "
                    "bytes(pvs)"},
    {"bytes(baseline.pvs) < 1", "at column 7: expected a workload name (as "
                                "in bytes(pvs); the baseline's is "
                                "baseline.bytes(pvs))"},
    {"baseline(pvs) < 1", "at column 9: 'baseline' is not a function"},
    {"bytes(pvs) < baseline(pvs)", "at column 22: 'baseline' is not a "
                                   "function"},
    {"baseline.bytes(2) < 1", "at column 16: expected a workload name"},
    {"pvs < 3.4.5", "at column 10: '.' after a number"},
    {"(pvs < 1", "at column 9: expected ')', got the end"},
    {"pvs < 1)", "at column 8: unmatched ')'"},
    {"3 < (pvs < 1)", "at column 5: expected a number, got a comparison"},
    {"pvs < 1 and 3", "at column 14: expected <, <=, > or >=, got the end"},
    {"pvs and vgs < 1", "at column 5: expected <, <=, > or >=, got 'and'"},
    {"pvs < 1 pvs", "at column 9: expected 'and', 'or' or the end, got 'pvs'"},
    /* each level: its operands' kind, and comparisons only one at a time */
    {"pvs < vgs >= lvs", "at column 11: comparisons do not chain"},
    {"pvs < 1 + 1 > 2", "at column 13: comparisons do not chain"},
    {"pvs < 1 or vgs + 1", "at column 19: expected <, <=, > or >=, got the "
                           "end"},
    {"pvs or vgs < 1", "at column 5: expected <, <=, > or >=, got 'or'"},
    {"pvs < 1 and vgs < 1 or 2", "at column 25: expected <, <=, > or >=, got "
                                 "the end"},
    {"(pvs < 1) * 2 < 3", "at column 1: expected a number, got a comparison"},
    {"2 * (pvs < 1) < 3", "at column 5: expected a number, got a comparison"},
    {"pvs - (vgs < 1) < 3", "at column 7: expected a number, got a "
                            "comparison"},
    {"(pvs < 1) < 3", "at column 1: expected a number, got a comparison"},
    /* (lvs / vgs) / pvs: a ratio divided by a time */
    {"lvs / vgs / pvs < 2", "at column 11: cannot divide a plain number and "
                            "a time"},
    {"pvs < 2 $", "at column 9: unexpected '$'"},
    {"pvs[use_aio=1 < 2", "at column 4: '[' without its ']'"},
    {"pvs[use_aio 1] < 2", "at column 13: expected '=' after 'use_aio'"},
    {"pvs[=1] < 2", "at column 5: expected a settings key"},
    {"pvs[a=] < 2", "at column 7: expected a value for 'a'"},
    {"pvs[a=1,a=2] < 2", "at column 9: 'a' is qualified twice"},
    {"baseline < baseline", "at column 1: a bare 'baseline' needs one "
                            "workload on the other side"},
    {"baseline < pvs + vgs", "at column 1: a bare 'baseline' needs one"},
    {"baseline. < 2", "at column 11: expected a workload name after "
                      "'baseline.', got '<'"},
    {"baseline[a=1] < pvs", "at column 9: a bare 'baseline' takes the "
                            "qualifier of the other side"},
  };

  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct ff_expect *e = ff_expect_parse(bad[i].text);

    if (e)
      fail_msg("'%s' was accepted", bad[i].text);
    if (strncmp(ff_errmsg(), bad[i].msg, strlen(bad[i].msg)))
      fail_msg("'%s': got \"%s\", want \"%s...\"", bad[i].text, ff_errmsg(),
               bad[i].msg);
  }
}

/* Judge text over rr (and base): the entry, its status in *st. */
static json_t *
judge(const char *text, const struct ff_runreport *rr,
      const struct ff_runreport *base, enum ff_expect_status *st)
{
  struct ff_expect *e = ff_expect_parse(text);
  json_t *j;

  assert_nonnull_err(e);
  j = ff_expect_judge(e, rr, base, st);
  ff_expect_free(e);
  return j;
}

static const char *
eval_str(const json_t *entry, size_t i, const char *key)
{
  return json_string_value(json_object_get(
    json_array_get(json_object_get(entry, "evaluations"), i), key));
}

static size_t
nevals(const json_t *entry)
{
  return json_array_size(json_object_get(entry, "evaluations"));
}

static void
test_judge_values(void **state)
{
  struct ff_runreport *rr = aio_doc("");
  enum ff_expect_status st;
  json_t *j;

  (void)state;
  /* the example, in both configurations: fails in the first */
  j = judge("event-activation < 10 * direct-activation", rr, NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_FAILS);
  assert_string_equal(json_string_value(json_object_get(j, "result")),
                      "fails");
  assert_int_equal(nevals(j), 2);
  assert_string_equal(eval_str(j, 0, "text"),
                      "43.1 s < 10 * 0.820 s = 8.20 s: false");
  assert_string_equal(eval_str(j, 0, "label"), "c1");
  assert_string_equal(eval_str(j, 1, "text"),
                      "20.0 s < 10 * 1.00 s = 10.0 s: false");
  assert_true(json_is_false(json_object_get(
    json_array_get(json_object_get(j, "evaluations"), 0), "holds")));
  /* values by term */
  assert_true(
    json_real_value(json_object_get(
      json_object_get(json_array_get(json_object_get(j, "evaluations"), 0),
                      "values"),
      "direct-activation")) == 0.82);
  json_decref(j);

  j = judge("event-activation < 100 * direct-activation", rr, NULL, &st);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  json_decref(j);
  /* holds in one configuration only: fails */
  j = judge("event-activation < 30s", rr, NULL, &st);
  assert_int_equal(st, FF_EXPECT_FAILS);
  assert_string_equal(eval_str(j, 1, "text"), "20.0 s < 30s: true");
  json_decref(j);
  /* units: 43.1 s is 0.7183 min */
  j = judge("event-activation < 0.72min and direct-activation > 800ms", rr,
            NULL, &st);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  json_decref(j);
  /* or, parentheses, arithmetic */
  j = judge("(event-activation < 1 or direct-activation < 1.5) and "
            "(event-activation - direct-activation) / 2 > 9",
            rr, NULL, &st);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  json_decref(j);
  ff_runreport_free(rr);
}

/* Precedence and associativity, level by level, told apart by the
 * values: pvs 2 s, vgs 4 s, lvs 8 s. */
static void
test_precedence(void **state)
{
  static const struct {
    const char *text, *evaluation;
    enum ff_expect_status st;
  } cases[] = {
    /* left-associative: (8 - 4) - 2, not 8 - (4 - 2) */
    {"lvs - vgs - pvs < 3s", "8.00 s - 4.00 s - 2.00 s = 2.00 s < 3s: true",
     FF_EXPECT_HOLDS},
    /* (8 / 2) * 4, not 8 / (2 * 4) */
    {"lvs / pvs * vgs > 10s", "8.00 s / 2.00 s * 4.00 s = 16.0 s > 10s: true",
     FF_EXPECT_HOLDS},
    /* (8 / 4) / 4, not 8 / (4 / 4) */
    {"lvs / vgs / 4 < 1", "8.00 s / 4.00 s / 4 = 0.5 < 1: true",
     FF_EXPECT_HOLDS},
    /* * before -, / before +: 8 - 8, 2 + 1 */
    {"lvs - 2 * vgs < 1s", "8.00 s - 2 * 4.00 s = 0.000 s < 1s: true",
     FF_EXPECT_HOLDS},
    {"pvs + vgs / 4 > 3.5s", "2.00 s + 4.00 s / 4 = 3.00 s > 3.5s: false",
     FF_EXPECT_FAILS},
    /* unary minus binds tightest: (-2) - 4 */
    {"-pvs - vgs < -5s", "-2.00 s - 4.00 s = -6.000 s < -5s = -5.000 s: true",
     FF_EXPECT_HOLDS},
    /* arithmetic before comparison, on both sides */
    {"pvs + vgs < lvs - 1",
     "2.00 s + 4.00 s = 6.00 s < 8.00 s - 1 = 7.00 s: "
     "true",
     FF_EXPECT_HOLDS},
    /* and before or: (false and true) or true, not false and (...) */
    {"lvs < pvs and pvs < vgs or vgs < lvs",
     "8.00 s < 2.00 s: false and 2.00 s < 4.00 s: true or 4.00 s < 8.00 s: "
     "true",
     FF_EXPECT_HOLDS},
    /* true or (false and false), not (true or false) and false */
    {"pvs < vgs or lvs < pvs and vgs < pvs",
     "2.00 s < 4.00 s: true or 8.00 s < 2.00 s: false and 4.00 s < 2.00 s: "
     "false",
     FF_EXPECT_HOLDS},
    /* parentheses override: (true or false) and false */
    {"(pvs < vgs or lvs < pvs) and vgs < pvs",
     "(2.00 s < 4.00 s: true or 8.00 s < 2.00 s: false) and 4.00 s < 2.00 s: "
     "false",
     FF_EXPECT_FAILS},
    /* and, or: left-associative, all of a chain evaluated */
    {"pvs < vgs and vgs < lvs and lvs < pvs",
     "2.00 s < 4.00 s: true and 4.00 s < 8.00 s: true and 8.00 s < 2.00 s: "
     "false",
     FF_EXPECT_FAILS},
    {"lvs < pvs or vgs < pvs or pvs < vgs",
     "8.00 s < 2.00 s: false or 4.00 s < 2.00 s: false or 2.00 s < 4.00 s: "
     "true",
     FF_EXPECT_HOLDS},
  };
  const char *settings[] = {"{}"};
  char *p = wl_json("pvs", "pvs", 2, 0), *v = wl_json("vgs", "vgs", 4, 0),
       *l = wl_json("lvs", "lvs", 8, 0), *w;
  struct ff_runreport *rr;

  (void)state;
  assert_true(asprintf(&w, "%s,%s,%s", p, v, l) > 0);
  free(p);
  free(v);
  free(l);
  rr = doc("", 1, settings, &w);
  free(w);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    enum ff_expect_status st;
    json_t *j = judge(cases[i].text, rr, NULL, &st);

    assert_nonnull_err(j);
    if (strcmp(eval_str(j, 0, "text"), cases[i].evaluation) ||
        st != cases[i].st)
      fail_msg("'%s': got \"%s\" (%d), want \"%s\" (%d)", cases[i].text,
               eval_str(j, 0, "text"), st, cases[i].evaluation, cases[i].st);
    json_decref(j);
  }
  ff_runreport_free(rr);
}

/* A qualifier picks the configuration beside the current one; an
 * evaluation that resolves to the same configurations is not repeated. */
static void
test_judge_qualifiers(void **state)
{
  struct ff_runreport *rr = aio_doc("");
  enum ff_expect_status st;
  json_t *j;

  (void)state;
  j = judge("event-activation[use_aio=1] < event-activation[use_aio=0]", rr,
            NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  assert_int_equal(nevals(j), 1);
  assert_string_equal(eval_str(j, 0, "text"), "20.0 s < 43.1 s: true");
  json_decref(j);
  /* the whole key, and a key that does not vary */
  j = judge("direct-activation[global/use_aio=0, profile=ideal] < "
            "direct-activation",
            rr, NULL, &st);
  assert_nonnull_err(j);
  /* config 1 against itself (false), config 1 against 2 (true) */
  assert_int_equal(st, FF_EXPECT_FAILS);
  assert_int_equal(nevals(j), 2);
  json_decref(j);
  /* bad input: a setting, a value, a workload the run does not have */
  assert_null(judge("pvs < 1", rr, NULL, &st));
  assert_string_equal(ff_errmsg(),
                      "at column 1: the run has no workload 'pvs' (its "
                      "workloads: event-activation, direct-activation, "
                      "lvchange)");
  assert_null(judge("lvchange[use_aoi=1] < 1", rr, NULL, &st));
  assert_non_null(strstr(ff_errmsg(), "at column 10: the run has no setting "
                                      "'use_aoi' (its settings: "
                                      "global/use_aio, fusefarm/profile)"));
  assert_null(judge("lvchange[use_aio=2] < 1", rr, NULL, &st));
  assert_string_equal(ff_errmsg(), "at column 10: no configuration of the "
                                   "run has global/use_aio=2");
  ff_runreport_free(rr);

  /* two configurations with the same settings: say so */
  {
    const char *settings[] = {"{\"a\":0}", "{\"a\":0}", "{\"a\":1}"};
    char *w = wl_json("pvs", "pvs", 1, 0);
    char *ws[] = {w, w, w};

    rr = doc("", 3, settings, ws);
    free(w);
    assert_null(judge("pvs[a=0] < 2", rr, NULL, &st));
    assert_non_null(strstr(ff_errmsg(), "2 configurations of the run match "
                                        "'pvs[a=0]'"));
    ff_runreport_free(rr);
  }
  /* keys that end the same: a short key is ambiguous */
  {
    const char *settings[] = {"{\"x/k\":0,\"y/k\":0}",
                              "{\"x/k\":1,\"y/k\":1}"};
    char *w = wl_json("pvs", "pvs", 1, 0);
    char *ws[] = {w, w};

    rr = doc("", 2, settings, ws);
    free(w);
    assert_null(judge("pvs[k=0] < 2", rr, NULL, &st));
    assert_non_null(strstr(ff_errmsg(), "'k' is ambiguous: x/k and y/k"));
    j = judge("pvs[x/k=0] < 2", rr, NULL, &st);
    assert_nonnull_err(j);
    json_decref(j);
    ff_runreport_free(rr);
  }
}

/* A failed or missing workload cannot be judged (125); a name no run has
 * is bad input unless the run stopped early. */
static void
test_judge_unjudged(void **state)
{
  struct ff_runreport *rr = aio_doc(""), *stopped;
  enum ff_expect_status st[3];
  json_t *j;

  (void)state;
  j = judge("lvchange < 1", rr, NULL, &st[0]);
  assert_nonnull_err(j);
  assert_int_equal(st[0], FF_EXPECT_UNJUDGED);
  assert_string_equal(json_string_value(json_object_get(j, "result")),
                      "not judged");
  assert_string_equal(eval_str(j, 0, "text"), "0.085 s < 1: true");
  assert_null(eval_str(j, 1, "text"));
  assert_true(json_is_null(json_object_get(
    json_array_get(json_object_get(j, "evaluations"), 1), "holds")));
  assert_non_null(strstr(eval_str(j, 1, "reason"),
                         "'lvchange' in config 2 of the run: 1 of 3 runs "
                         "failed (worst exit 5"));
  json_decref(j);
  /* qualified onto the failed config: one evaluation, not judged */
  j = judge("lvchange[use_aio=1] < 1", rr, NULL, &st[0]);
  assert_nonnull_err(j);
  assert_int_equal(st[0], FF_EXPECT_UNJUDGED);
  assert_int_equal(nevals(j), 1);
  json_decref(j);
  /* qualified away from the failed config: judged */
  j = judge("lvchange[use_aio=0] < 1", rr, NULL, &st[0]);
  assert_int_equal(st[0], FF_EXPECT_HOLDS);
  json_decref(j);
  ff_runreport_free(rr);

  /* the run stopped before lvchange ran: not judged, not an error */
  {
    const char *settings[] = {"{}"};
    char *w = wl_json("pvs", "pvs", 1, 0);
    char *ws[] = {w};

    stopped = doc(",\"error\":\"interrupted\"", 1, settings, ws);
    rr = doc("", 1, settings, ws);
    free(w);
  }
  j = judge("lvchange < 1", stopped, NULL, &st[0]);
  assert_nonnull_err(j);
  assert_int_equal(st[0], FF_EXPECT_UNJUDGED);
  assert_non_null(strstr(eval_str(j, 0, "reason"),
                         "the run stopped early (interrupted) before any "
                         "'lvchange' ran"));
  json_decref(j);
  assert_null(judge("lvchange < 1", rr, NULL, &st[0]));
  /* division by a time of 0: not judged */
  j = judge("pvs / (pvs - pvs) < 1", rr, NULL, &st[0]);
  assert_nonnull_err(j);
  assert_int_equal(st[0], FF_EXPECT_UNJUDGED);
  json_decref(j);
  ff_runreport_free(rr);
  ff_runreport_free(stopped);

  /* the exit status: unjudged wins, then fails */
  st[0] = FF_EXPECT_HOLDS;
  st[1] = FF_EXPECT_HOLDS;
  st[2] = FF_EXPECT_HOLDS;
  assert_int_equal(ff_expect_exit(st, 3), 0);
  assert_int_equal(ff_expect_exit(st, 0), 0);
  st[1] = FF_EXPECT_FAILS;
  assert_int_equal(ff_expect_exit(st, 3), 1);
  st[2] = FF_EXPECT_UNJUDGED;
  assert_int_equal(ff_expect_exit(st, 3), 125);
  st[1] = FF_EXPECT_HOLDS;
  assert_int_equal(ff_expect_exit(st, 3), 125);
}

/* A run document with I/O counts, as the field report's two builds would
 * give: per device, 28 KiB in 7 reads (2.02.177) or 256 KiB in 2 reads
 * (2.02.180), over `devices` devices.  pvs: three runs with their own
 * counts (median of the runs); lvchange: 5 commands per run; the event
 * activation has the workload's counts only (documents before the runs
 * had their own). */
static struct ff_runreport *
io_doc(long long kib_per_dev, long long reads_per_dev, int devices)
{
  long long b = kib_per_dev * 1024 * devices, r = reads_per_dev * devices;
  char *text;
  struct ff_runreport *rr;

  assert_true(
    asprintf(
      &text,
      "{\"format\":\"fusefarm-run\",\"version\":1,\"scenario\":{\"name\":"
      "\"t\"},\"started\":\"now\",\"host\":{\"kernel\":\"k\","
      "\"lvm_version\":\"v\"},\"configs\":[{\"id\":1,\"label\":\"c1\","
      "\"settings\":{},\"farm\":{\"spec\":\"s\",\"devices\":%d,\"vgs\":1,"
      "\"lvs\":1},\"workloads\":["
      "{\"name\":\"pvs\",\"type\":\"pvs\",\"repeat\":3,\"runs\":["
      "{\"wall\":1,\"exit\":0,\"errors\":0,\"reads\":%lld,\"bytes_read\":"
      "%lld},{\"wall\":1,\"exit\":0,\"errors\":0,\"reads\":%lld,"
      "\"bytes_read\":%lld},{\"wall\":1,\"exit\":0,\"errors\":0,\"reads\":"
      "%lld,\"bytes_read\":%lld}],\"min\":1,\"median\":1,\"max\":1,"
      "\"reads\":%lld,\"bytes_read\":%lld},"
      "{\"name\":\"lvchange\",\"type\":\"lvchange\",\"repeat\":2,\"runs\":["
      "{\"wall\":0.5,\"exit\":0,\"errors\":0,\"commands\":[0.1,0.1,0.1,0.1,"
      "0.1],\"reads\":%lld,\"bytes_read\":%lld},{\"wall\":0.5,\"exit\":0,"
      "\"errors\":0,\"commands\":[0.1,0.1,0.1,0.1,0.1],\"reads\":%lld,"
      "\"bytes_read\":%lld}],\"min\":0.5,\"median\":0.5,\"max\":0.5},"
      "{\"name\":\"event-activation\",\"type\":\"event-activation\","
      "\"repeat\":1,\"runs\":[{\"wall\":2,\"exit\":0,\"errors\":0}],"
      "\"min\":2,\"median\":2,\"max\":2,\"reads\":%lld,\"bytes_read\":"
      "%lld,\"devices\":[],\"activations\":[]},"
      "{\"name\":\"vgs\",\"type\":\"vgs\",\"repeat\":1,\"runs\":[{\"wall\":"
      "1,\"exit\":0,\"errors\":0}],\"min\":1,\"median\":1,\"max\":1}"
      "]}]}",
      devices, r, b, r + 7, b + 4096 * 7, r - 1, b - 4096, r, b, 5 * r, 5 * b,
      5 * r + 5, 5 * b + 5 * 4096, 2 * r, 2 * b) > 0);
  rr = ff_runreport_load_text(text, strlen(text), "io");
  assert_nonnull_err(rr);
  free(text);
  return rr;
}

static double
eval_value(const json_t *entry, size_t i, const char *term)
{
  return json_number_value(json_object_get(
    json_object_get(json_array_get(json_object_get(entry, "evaluations"), i),
                    "values"),
    term));
}

/* The I/O terms: medians over the runs, per device, per command, units
 * on numbers, the baseline, and what the document does not have. */
static void
test_judge_io(void **state)
{
  struct ff_runreport *old = io_doc(28, 7, 10), *new = io_doc(256, 2, 10);
  enum ff_expect_status st;
  json_t *j;

  (void)state;
  /* pvs: the median of 280 KiB, 280 KiB + 28 KiB, 280 KiB - 4 KiB */
  j = judge("bytes(pvs) > 0 and reads(pvs) > 0", old, NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  assert_true(eval_value(j, 0, "bytes(pvs)") == 28 * 1024 * 10);
  assert_true(eval_value(j, 0, "reads(pvs)") == 70);
  assert_string_equal(eval_str(j, 0, "text"),
                      "280 KiB > 0: true and 70 reads > 0: true");
  json_decref(j);
  j = judge("bytes_per_device(pvs) <= 28KiB and reads_per_device(pvs) >= 7",
            old, NULL, &st);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  assert_true(eval_value(j, 0, "bytes_per_device(pvs)") == 28 * 1024);
  json_decref(j);
  j = judge("bytes_per_device(pvs) < 28KiB", old, NULL, &st);
  assert_int_equal(st, FF_EXPECT_FAILS);
  assert_string_equal(eval_str(j, 0, "text"), "28 KiB < 28KiB: false");
  json_decref(j);
  /* lvchange: per run 5 commands; the median of the two runs */
  j = judge("bytes_per_device(lvchange) <= 64KiB", new, NULL, &st);
  assert_int_equal(st, FF_EXPECT_FAILS);
  /* (1280 + 1282) KiB per device / 2 */
  assert_true(eval_value(j, 0, "bytes_per_device(lvchange)") ==
              (5 * 256 * 1024 * 10 + 5 * 256 * 1024 * 10 + 5 * 4096) / 2.0 /
                10);
  json_decref(j);
  j = judge("bytes_per_command(lvchange) / 10 <= 256KiB + 1KiB and "
            "reads_per_command(lvchange) >= 20 and bytes_per_command(pvs) > "
            "2MiB",
            new, NULL, &st);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  assert_true(eval_value(j, 0, "reads_per_command(lvchange)") == 20.5);
  assert_true(eval_value(j, 0, "bytes_per_command(pvs)") == 256 * 1024 * 10);
  json_decref(j);
  /* the event activation: the workload's counts (no per-run ones) */
  j = judge("bytes_per_device(event-activation) <= 512KiB", new, NULL, &st);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  assert_true(eval_value(j, 0, "bytes_per_device(event-activation)") ==
              512 * 1024);
  json_decref(j);
  /* bytes per read */
  j = judge("bytes(pvs) / reads(pvs) <= 4KiB", old, NULL, &st);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  assert_string_equal(eval_str(j, 0, "text"),
                      "280 KiB / 70 reads = 4 KiB <= 4KiB: true");
  json_decref(j);
  /* against the baseline: the field report's change, both ways */
  j = judge("bytes_per_device(lvchange) <= 2 * baseline", new, old, &st);
  assert_int_equal(st, FF_EXPECT_FAILS);
  assert_non_null(json_object_get(
    json_object_get(json_array_get(json_object_get(j, "evaluations"), 0),
                    "values"),
    "baseline.bytes_per_device(lvchange)"));
  json_decref(j);
  j = judge("reads_per_device(pvs) < baseline.reads_per_device(pvs)", new, old,
            &st);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  json_decref(j);
  /* what the document does not have: not judged, or bad input */
  j = judge("bytes(vgs) > 0", old, NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_UNJUDGED);
  assert_non_null(strstr(eval_str(j, 0, "reason"),
                         "'vgs' in config 1 of the run: the run document has "
                         "no \"bytes_read\""));
  json_decref(j);
  assert_null(
    judge("bytes_per_command(event-activation) > 0", old, NULL, &st));
  assert_non_null(strstr(ff_errmsg(), "at column 1: "
                                      "bytes_per_command(event-activation): "
                                      "'event-activation' is an event "
                                      "activation"));
  /* a time per read is a time */
  j = judge("lvchange / reads(lvchange) < 1ms", old, NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_FAILS);
  json_decref(j);
  assert_null(judge("bytes(pvz) > 0", old, NULL, &st));
  assert_non_null(strstr(ff_errmsg(), "at column 1: the run has no workload "
                                      "'pvz'"));
  ff_runreport_free(old);
  ff_runreport_free(new);

  /* no device count (no "farm"): per device is not judged */
  {
    const char *settings[] = {"{}"};
    char *w = strdup("{\"name\":\"pvs\",\"type\":\"pvs\",\"repeat\":1,"
                     "\"runs\":[{\"wall\":1,\"exit\":0,\"errors\":0,"
                     "\"reads\":3,\"bytes_read\":4096}],\"min\":1,"
                     "\"median\":1,\"max\":1}");
    char *ws[] = {w};
    struct ff_runreport *rr = doc("", 1, settings, ws);

    free(w);
    j = judge("bytes_per_device(pvs) < 1MiB", rr, NULL, &st);
    assert_nonnull_err(j);
    assert_int_equal(st, FF_EXPECT_UNJUDGED);
    assert_non_null(strstr(eval_str(j, 0, "reason"), "no device count"));
    json_decref(j);
    j = judge("bytes(pvs) <= 4KiB and reads(pvs) < 4", rr, NULL, &st);
    assert_int_equal(st, FF_EXPECT_HOLDS);
    json_decref(j);
    ff_runreport_free(rr);
  }
  /* per command of a failed event activation: bad input all the same */
  {
    const char *settings[] = {"{}"};
    char *w = wl_json("event-activation", "event-activation", 3, 1);
    char *ws[] = {w};
    struct ff_runreport *rr = doc("", 1, settings, ws);

    free(w);
    assert_null(
      judge("reads_per_command(event-activation) < 9", rr, NULL, &st));
    assert_non_null(strstr(ff_errmsg(), "is an event activation: the run "
                                        "document does not count its "
                                        "commands per run"));
    j = judge("reads(event-activation) < 9", rr, NULL, &st);
    assert_nonnull_err(j);
    assert_int_equal(st, FF_EXPECT_UNJUDGED);
    json_decref(j);
    ff_runreport_free(rr);
  }
}

static void
test_judge_baseline(void **state)
{
  struct ff_runreport *rr = aio_doc(""), *one, *two;
  enum ff_expect_status st;
  json_t *j;

  (void)state;
  {
    const char *settings[] = {"{}"};
    char *w = wl_json("event-activation", "event-activation", 30, 0);
    char *ws[] = {w};

    one = doc("", 1, settings, ws);
    free(w);
  }
  /* a baseline of one configuration stands beside every configuration */
  j = judge("event-activation <= 1.2 * baseline", rr, one, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_FAILS);
  assert_string_equal(eval_str(j, 0, "text"),
                      "43.1 s <= 1.2 * 30.0 s = 36.0 s (medians: 3 and 3 "
                      "repetitions are too few for a 95% interval): false");
  assert_string_equal(eval_str(j, 1, "text"),
                      "20.0 s <= 1.2 * 30.0 s = 36.0 s (medians: 3 and 3 "
                      "repetitions are too few for a 95% interval): true");
  assert_non_null(json_object_get(
    json_object_get(json_array_get(json_object_get(j, "evaluations"), 0),
                    "values"),
    "baseline.event-activation"));
  json_decref(j);
  /* none given */
  assert_null(judge("event-activation < baseline", rr, NULL, &st));
  assert_non_null(strstr(ff_errmsg(), "needs --baseline RUN.json"));
  /* a workload the baseline has not */
  assert_null(judge("lvchange < baseline", rr, one, &st));
  assert_non_null(
    strstr(ff_errmsg(), "the baseline run has no workload 'lvchange'"));
  /* the baseline the same run: the same settings match, config by
   * config; baseline's failed lvchange is not judged */
  two = aio_doc("");
  j = judge("direct-activation <= baseline.direct-activation", rr, two, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  assert_int_equal(nevals(j), 2);
  assert_string_equal(eval_str(j, 1, "text"),
                      "1.00 s <= 1.00 s (medians: 3 and 3 repetitions are "
                      "too few for a 95% interval): true");
  json_decref(j);
  j = judge("1 > baseline.lvchange[use_aio=1]", rr, two, &st);
  assert_int_equal(st, FF_EXPECT_UNJUDGED);
  assert_non_null(strstr(eval_str(j, 0, "reason"), "of the baseline run"));
  json_decref(j);
  ff_runreport_free(two);
  ff_runreport_free(one);
  ff_runreport_free(rr);
}

/* A workload entry with n runs of the given walls. */
static char *
walls_json(const char *name, const double *v, size_t n)
{
  double sorted[64];
  char *runs = strdup(""), *s;

  assert_true(n > 0 && n <= 64);
  memcpy(sorted, v, n * sizeof *v);
  for (size_t i = 1; i < n; i++)
    for (size_t k = i; k > 0 && sorted[k - 1] > sorted[k]; k--) {
      double t = sorted[k];

      sorted[k] = sorted[k - 1];
      sorted[k - 1] = t;
    }
  for (size_t i = 0; i < n; i++) {
    char *r;

    assert_true(asprintf(&r, "%s%s{\"wall\":%.17g,\"exit\":0,\"errors\":0}",
                         runs, i ? "," : "", v[i]) > 0);
    free(runs);
    runs = r;
  }
  assert_true(
    asprintf(&s,
             "{\"name\":\"%s\",\"type\":\"lvchange\",\"repeat\":%zu,"
             "\"runs\":[%s],\"min\":%.17g,\"median\":%.17g,\"max\":%.17g}",
             name, n, runs, sorted[0], sorted[n / 2], sorted[n - 1]) > 0);
  free(runs);
  return s;
}

/* One configuration per true time t[i] (settings {"lvm": "A"}, "B",
 * ...), its lvchange n runs of t[i] with lognormal noise sigma. */
static struct ff_runreport *
noisy_doc(uint64_t *seed, const double *t, size_t nconf, size_t n,
          double sigma)
{
  char *settings[4], *ws[4];
  struct ff_runreport *rr;

  assert_true(nconf <= 4);
  for (size_t i = 0; i < nconf; i++) {
    double v[64];

    ff_fakenoise_lognormal(seed, t[i], sigma, v, n);
    ws[i] = walls_json("lvchange", v, n);
    assert_true(asprintf(&settings[i], "{\"lvm\":\"%c\"}", 'A' + (int)i) > 0);
  }
  rr = doc("", nconf, (const char *const *)settings, ws);
  for (size_t i = 0; i < nconf; i++) {
    free(settings[i]);
    free(ws[i]);
  }
  return rr;
}

/* A build against its own saved baseline (the same true time, seeded
 * lognormal noise of 10%, 5 repetitions a side) passes `lvchange <= 1.1 *
 * baseline` in 20 of 20 trials, and even `lvchange <= baseline` in 19 or
 * more, where comparing medians fails that about half the time; a build
 * 1.5x slower fails it in 18 or more (the interval's power at 5
 * repetitions and 10% noise: 19 with these seeds). */
static void
test_judge_baseline_interval(void **state)
{
  size_t held = 0, held_strict = 0, medians_fail = 0, slow_failed = 0;
  uint64_t seed = 2029;
  const double one = 2.0, slow = 3.0;
  enum ff_expect_status st;
  json_t *j;

  (void)state;
  for (int trial = 0; trial < 20; trial++) {
    struct ff_runreport *cur = noisy_doc(&seed, &one, 1, 5, 0.10);
    struct ff_runreport *base = noisy_doc(&seed, &one, 1, 5, 0.10);
    struct ff_runreport *worse = noisy_doc(&seed, &slow, 1, 5, 0.10);

    j = judge("lvchange <= 1.1 * baseline", cur, base, &st);
    assert_nonnull_err(j);
    held += st == FF_EXPECT_HOLDS;
    assert_non_null(strstr(eval_str(j, 0, "text"), ", 95% CI "));
    json_decref(j);
    j = judge("lvchange <= baseline", cur, base, &st);
    assert_nonnull_err(j);
    held_strict += st == FF_EXPECT_HOLDS;
    json_decref(j);
    medians_fail += cur->configs[0].workloads[0].median >
                    base->configs[0].workloads[0].median;
    j = judge("lvchange <= 1.1 * baseline", worse, base, &st);
    assert_nonnull_err(j);
    slow_failed += st == FF_EXPECT_FAILS;
    if (trial == 0)
      assert_non_null(strstr(eval_str(j, 0, "text"),
                             "the whole interval is on the wrong side): "
                             "false"));
    json_decref(j);
    ff_runreport_free(cur);
    ff_runreport_free(base);
    ff_runreport_free(worse);
  }
  print_message("self against baseline: %zu of 20 hold (1.1x), %zu of 20 "
                "(1.0x; medians alone: %zu fail); 1.5x slower: %zu of 20 "
                "fail\n",
                held, held_strict, medians_fail, slow_failed);
  assert_int_equal(held, 20);
  assert_true(held_strict >= 19);
  assert_true(medians_fail >= 5);
  assert_true(slow_failed >= 18);
}

/* `lvchange[lvm=A] < lvchange[lvm=B] confidently` over lvm=A and B of
 * true times t[0] and t[1], n runs each with 5% noise from *seed: its
 * status st, and its evaluation's `key` ("text" or "reason") holding
 * want. */
static void
confident_case(uint64_t *seed, const double *t, size_t n,
               enum ff_expect_status want_st, const char *key,
               const char *want)
{
  struct ff_runreport *rr = noisy_doc(seed, t, 2, n, 0.05);
  enum ff_expect_status st;
  json_t *j;

  j = judge("lvchange[lvm=A] < lvchange[lvm=B] confidently", rr, NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, want_st);
  assert_non_null(strstr(eval_str(j, 0, key), want));
  json_decref(j);
  ff_runreport_free(rr);
}

/* "confidently": the whole 95% interval on the right side; too few
 * repetitions for one: not judged; only between two wall times. */
static void
test_judge_confidently(void **state)
{
  const double apart[] = {1.0, 1.3}, same[] = {1.0, 1.0};
  uint64_t seed = 7;
  struct ff_runreport *rr;
  enum ff_expect_status st;
  struct ff_expect *e;
  json_t *j;

  (void)state;
  confident_case(&seed, apart, 6, FF_EXPECT_HOLDS, "text",
                 "the whole interval is on its side): true");
  rr = noisy_doc(&seed, apart, 2, 6, 0.05);
  /* the other way: false, confidently or not */
  j = judge("lvchange[lvm=B] < 0.9 * lvchange[lvm=A] confidently", rr, NULL,
            &st);
  assert_int_equal(st, FF_EXPECT_FAILS);
  json_decref(j);
  ff_runreport_free(rr);

  /* the same true time: one median is below the other, the interval
   * holds 1 (a seed of its own: in 1 of 40 draws the interval misses 1,
   * as the previous seed's next draw does) */
  seed = 11;
  confident_case(&seed, same, 6, FF_EXPECT_FAILS, "text",
                 "the interval is not wholly on its side): false");
  /* 3 a side: not judged */
  confident_case(&seed, apart, 3, FF_EXPECT_UNJUDGED, "reason",
                 "'confidently' needs a 95% interval: 3 and 3");

  /* a number on a side: a parse error at the word */
  assert_null(e = ff_expect_parse("lvchange < 2 confidently"));
  assert_non_null(strstr(ff_errmsg(), "at column 14: 'confidently' "
                                      "compares two wall times"));
  assert_null(e = ff_expect_parse("reads(lvchange) < reads(pvs) confidently"));
  assert_non_null(e = ff_expect_parse("2 * pvs[a=1] >= pvs[a=0] / 3 "
                                      "confidently and lvs < 1"));
  ff_expect_free(e);
}

/* The skeleton of a scenario: its configurations and workloads. */
static void
test_skeleton(void **state)
{
  struct ff_scenario *sc = ff_scenario_load_string(
    "name = \"s\";\n"
    "matrix = ({ key = \"global/use_aio\"; values = [0, 1]; },\n"
    "          { key = \"fusefarm/profile\"; values = [\"ideal\", "
    "\"x/hdd.conf\"]; });\n"
    "workloads = ({ type = \"pvs\"; }, { type = \"event-activation\"; },\n"
    "             { type = \"lvchange\"; name = \"lc\"; });\n",
    "t", "/b");
  struct ff_runreport *skel;
  enum ff_expect_status st;
  json_t *j;

  (void)state;
  assert_nonnull_err(sc);
  skel = ff_expect_skeleton(sc);
  assert_nonnull_err(skel);
  assert_int_equal(skel->nconfigs, 4);
  j = judge("lc[use_aio=1, profile=hdd.conf] < pvs + event-activation", skel,
            NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  json_decref(j);
  assert_null(judge("lvchange < 1", skel, NULL, &st));
  assert_string_equal(ff_errmsg(),
                      "at column 1: the scenario has no workload 'lvchange' "
                      "(its workloads: pvs, event-activation, lc)");
  assert_null(judge("pvs[profile=ssd.conf] < 1", skel, NULL, &st));
  assert_non_null(strstr(ff_errmsg(), "no configuration of the scenario has "
                                      "fusefarm/profile=ssd.conf"));
  ff_runreport_free(skel);
  ff_scenario_free(sc);
}

/* judge_all writes "expect"; the model reads it back; the report prints
 * it. */
static void
test_round_trip(void **state)
{
  struct ff_runreport *rr = aio_doc(""), *again;
  struct ff_expect *ex[2];
  json_t *d = json_object();
  char *out = NULL;
  size_t len = 0;
  FILE *f;

  (void)state;
  ex[0] = ff_expect_parse("event-activation[use_aio=1] < 30s");
  ex[1] = ff_expect_parse("lvchange < 1");
  assert_nonnull_err(ex[0]);
  assert_nonnull_err(ex[1]);
  assert_int_equal(ff_expect_judge_all(ex, 1, rr, NULL, d), 0);
  assert_int_equal(ff_expect_judge_all(ex, 2, rr, NULL, d), 125);
  assert_int_equal(json_array_size(json_object_get(d, "expect")), 2);
  /* a bad one names its expression */
  {
    struct ff_expect *bad = ff_expect_parse("nope < 1");

    assert_int_equal(ff_expect_judge_all(&bad, 1, rr, NULL, d), -1);
    assert_non_null(strstr(ff_errmsg(), "--expect 'nope < 1': at column 1"));
    ff_expect_free(bad);
  }
  /* into a whole document */
  {
    json_t *e = json_incref(json_object_get(d, "expect"));
    char *head, *arr = json_dumps(e, 0);

    assert_non_null(arr);
    assert_true(asprintf(&head, ",\"expect\":%s", arr) > 0);
    free(arr);
    json_decref(e);
    again = NULL;
    {
      const char *settings[] = {"{}"};
      char *w = wl_json("pvs", "pvs", 1, 0);
      char *ws[] = {w};

      again = doc(head, 1, settings, ws);
      free(w);
    }
    free(head);
  }
  assert_int_equal(again->nexpect, 2);
  assert_string_equal(again->expect[0].result, "holds");
  assert_string_equal(again->expect[1].result, "not judged");
  assert_int_equal(again->expect[1].nevals, 2);
  assert_int_equal(again->expect[1].evals[1].holds, -1);
  f = open_memstream(&out, &len);
  assert_ok(ff_runreport_print_expect(again, f));
  fclose(f);
  assert_non_null(strstr(out, "expect (exit 125: "));
  assert_non_null(strstr(out, "- holds       event-activation[use_aio=1] < "
                              "30s: 20.0 s < 30s: true\n"));
  assert_non_null(strstr(out, "- not judged  lvchange < 1\n"
                              "    [1] c1: 0.085 s < 1: true\n"
                              "    [2] c2: not judged: 'lvchange' in "));
  free(out);
  ff_runreport_free(again);
  /* a malformed "expect" is an error naming where */
  {
    const char *settings[] = {"{}"};
    char *w = wl_json("pvs", "pvs", 1, 0);
    char *t;
    struct ff_runreport *x;

    assert_true(asprintf(&t,
                         "{\"format\":\"fusefarm-run\",\"version\":1,"
                         "\"scenario\":{\"name\":\"t\"},\"started\":\"s\","
                         "\"host\":{\"kernel\":\"k\",\"lvm_version\":\"v\"},"
                         "\"expect\":[{\"expression\":\"a < 1\",\"result\":"
                         "\"maybe\",\"evaluations\":[]}],"
                         "\"configs\":[{\"id\":1,\"label\":\"l\",\"settings\":"
                         "%s,\"workloads\":[%s]}]}",
                         settings[0], w) > 0);
    x = ff_runreport_load_text(t, strlen(t), NULL);
    assert_null(x);
    assert_non_null(strstr(ff_errmsg(), "expect[0].result: \"maybe\""));
    free(t);
    free(w);
  }
  ff_expect_free(ex[0]);
  ff_expect_free(ex[1]);
  json_decref(d);
  ff_runreport_free(rr);
}

/* An evaluation is labelled by the settings its terms do not fix: with
 * lvm x use_aio, `lvchange[lvm=a] < lvchange[lvm=b]` compares a with b
 * beside each use_aio, so its labels are "use_aio=0" and "use_aio=1",
 * not the anchor's "lvm=a use_aio=..."; a term without the qualifier
 * keeps the key in the label; a key no term qualifies stays too. */
static void
test_eval_labels(void **state)
{
  static const char *const lvm[] = {"a", "a", "b", "b"};
  static const int aio[] = {0, 1, 0, 1};
  static const double wall[] = {1, 2, 3, 4};
  char *text = NULL, *cfgs = strdup("");
  struct ff_runreport *rr;
  enum ff_expect_status st;
  json_t *j;

  (void)state;
  for (size_t i = 0; i < 4; i++) {
    char *w = wl_json("lvchange", "lvchange", wall[i], 0), *c;

    assert_true(asprintf(&c,
                         "%s%s{\"id\":%zu,\"label\":\"lvm=%s use_aio=%d\","
                         "\"settings\":{\"fusefarm/lvm\":\"%s\","
                         "\"global/use_aio\":%d},\"workloads\":[%s]}",
                         cfgs, i ? "," : "", i + 1, lvm[i], aio[i], lvm[i],
                         aio[i], w) > 0);
    free(cfgs);
    free(w);
    cfgs = c;
  }
  assert_true(asprintf(&text,
                       "{\"format\":\"fusefarm-run\",\"version\":1,"
                       "\"scenario\":{\"name\":\"t\"},\"started\":\"now\","
                       "\"host\":{\"kernel\":\"k\",\"lvm_version\":\"v\"},"
                       "\"configs\":[%s]}",
                       cfgs) > 0);
  rr = ff_runreport_load_text(text, strlen(text), "doc");
  assert_nonnull_err(rr);
  free(text);
  free(cfgs);

  j = judge("lvchange[lvm=a] < lvchange[lvm=b]", rr, NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(st, FF_EXPECT_HOLDS);
  assert_int_equal(nevals(j), 2);
  assert_string_equal(eval_str(j, 0, "label"), "use_aio=0");
  assert_string_equal(eval_str(j, 1, "label"), "use_aio=1");
  json_decref(j);
  /* both keys fixed: nothing left, the whole label */
  j = judge("lvchange[lvm=a,global/use_aio=1] < lvchange[lvm=b,use_aio=1]", rr,
            NULL, &st);
  assert_nonnull_err(j);
  assert_int_equal(nevals(j), 1);
  assert_string_equal(eval_str(j, 0, "label"), "lvm=a use_aio=0");
  json_decref(j);
  /* an unqualified term: the anchor's lvm is compared, it stays */
  j = judge("lvchange[lvm=a] <= lvchange", rr, NULL, &st);
  assert_nonnull_err(j);
  assert_string_equal(eval_str(j, 2, "label"), "lvm=b use_aio=0");
  json_decref(j);
  ff_runreport_free(rr);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse_ok),
    cmocka_unit_test(test_parse_errors),
    cmocka_unit_test(test_judge_values),
    cmocka_unit_test(test_precedence),
    cmocka_unit_test(test_judge_qualifiers),
    cmocka_unit_test(test_judge_unjudged),
    cmocka_unit_test(test_judge_baseline),
    cmocka_unit_test(test_judge_io),
    cmocka_unit_test(test_judge_baseline_interval),
    cmocka_unit_test(test_judge_confidently),
    cmocka_unit_test(test_skeleton),
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_eval_labels),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
