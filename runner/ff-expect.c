/* fusefarm: --expect, judging (ff-expect.h, docs/bisect.md; the parser is
 * ff-expect-parse.c, what both share ff-expect-int.h): the tree is
 * evaluated once per configuration, its terms resolved in the run and in
 * the baseline, and each evaluation written with its values substituted;
 * two wall times compared "confidently" or against a baseline are judged
 * by the 95% interval of their ratio.  No threads. */
#include "ff-expect-int.h"
#include "ff-error.h"
#include "ff-workload.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- judging ----------------------------------------------------------- */

struct judge {
  const struct ff_expect *e;
  const struct ff_runreport *rr, *base;
  const struct ff_rr_config *cur;
  bool skip;     /* a qualified term has no configuration for cur */
  char why[768]; /* why skip */
  char *reason;  /* set: this evaluation cannot be judged */
  json_t *values;
  long long used[64]; /* config ids the terms resolved to (baseline: -id) */
  size_t nused;
  const struct ff_rr_workload *last_w; /* the last wall time term's */
};

static const char *
doc_name(const struct judge *j, const struct ff_runreport *doc)
{
  /* ff_expect_skeleton()'s document has no start time */
  if (!doc->started[0])
    return doc == j->base ? "the baseline scenario" : "the scenario";
  return doc == j->base ? "the baseline run" : "the run";
}

static void unjudged(struct judge *j, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void
unjudged(struct judge *j, const char *fmt, ...)
{
  va_list ap;

  if (j->reason)
    return;
  va_start(ap, fmt);
  if (vasprintf(&j->reason, fmt, ap) < 0)
    j->reason = NULL;
  va_end(ap);
  if (!j->reason)
    j->reason = strdup("out of memory");
}

/* The settings key of doc that q names: itself, or the one key ending in
 * "/KEY".  -1 with ff_error when none or several do. */
static long
find_key(const struct judge *j, const struct ff_runreport *doc,
         const struct qual *q)
{
  long found = -1;
  size_t n = strlen(q->key);
  char list[512] = "";
  size_t used = 0;

  for (size_t k = 0; k < doc->nkeys; k++)
    if (!strcmp(doc->keys[k], q->key))
      return (long)k;
  for (size_t k = 0; k < doc->nkeys; k++) {
    size_t kl = strlen(doc->keys[k]);

    if (kl > n && doc->keys[k][kl - n - 1] == '/' &&
        !strcmp(doc->keys[k] + kl - n, q->key)) {
      if (found >= 0) {
        ff_error("at column %zu: '%s' is ambiguous: %s and %s (write the "
                 "whole key)",
                 q->off + 1, q->key, doc->keys[found], doc->keys[k]);
        return -1;
      }
      found = (long)k;
    }
  }
  if (found >= 0)
    return found;
  for (size_t k = 0; k < doc->nkeys && used < sizeof list; k++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "",
                     doc->keys[k]);

    used = w < 0 ? sizeof list : used + (size_t)w;
  }
  ff_error("at column %zu: %s has no setting '%s' (%s%s)", q->off + 1,
           doc_name(j, doc), q->key, doc->nkeys ? "its settings: " : "",
           doc->nkeys ? list : "no matrix settings");
  return -1;
}

static bool
text_eq(const char *a, const char *b)
{
  return a ? b && !strcmp(a, b) : !b;
}

/* The configuration of doc for term n evaluated in j->cur.  NULL with
 * j->skip when there is none for cur; NULL with ff_error (err = 1) on bad
 * input. */
static const struct ff_rr_config *
resolve(struct judge *j, const struct ff_runreport *doc, const struct node *n,
        int *err)
{
  long qkey[16];
  const struct ff_rr_config *found = NULL;
  size_t nfound = 0;

  *err = 0;
  if (doc == j->rr && !n->nq)
    return j->cur;
  if (n->nq > sizeof qkey / sizeof *qkey) {
    *err = 1;
    ff_error("at column %zu: more than 16 qualifiers", n->off + 1);
    return NULL;
  }
  for (size_t i = 0; i < n->nq; i++) {
    bool seen = false;

    qkey[i] = find_key(j, doc, &n->q[i]);
    if (qkey[i] < 0) {
      *err = 1;
      return NULL;
    }
    for (size_t c = 0; c < doc->nconfigs && !seen; c++) {
      const struct ff_rr_setting *s =
        ff_runreport_setting(&doc->configs[c], doc->keys[qkey[i]]);

      seen = s && !strcmp(s->text, n->q[i].value);
    }
    if (!seen) {
      *err = 1;
      ff_error("at column %zu: no configuration of %s has %s=%s",
               n->q[i].off + 1, doc_name(j, doc), doc->keys[qkey[i]],
               n->q[i].value);
      return NULL;
    }
  }
  for (size_t c = 0; c < doc->nconfigs; c++) {
    const struct ff_rr_config *cf = &doc->configs[c];
    bool match = true;

    for (size_t k = 0; k < doc->nkeys && match; k++) {
      const struct ff_rr_setting *have =
        ff_runreport_setting(cf, doc->keys[k]);
      const char *want = NULL;
      bool qualified = false;

      for (size_t i = 0; i < n->nq; i++)
        if (qkey[i] == (long)k) {
          want = n->q[i].value;
          qualified = true;
        }
      if (!qualified) {
        const struct ff_rr_setting *s;

        if (!doc->varying[k])
          continue;
        s = ff_runreport_setting(j->cur, doc->keys[k]);
        want = s ? s->text : NULL;
      }
      match = text_eq(want, have ? have->text : NULL);
    }
    if (match) {
      found = found ? found : cf;
      nfound++;
    }
  }
  if (nfound > 1) {
    *err = 1;
    ff_error("at column %zu: %zu configurations of %s match '%.*s' (qualify "
             "it by the setting that tells them apart)",
             n->off + 1, nfound, doc_name(j, doc), (int)(n->end - n->off),
             j->e->text + n->off);
    return NULL;
  }
  if (!found) {
    size_t used = 0;

    j->skip = true;
    used = (size_t)snprintf(j->why, sizeof j->why,
                            "%s has no configuration for '%.*s' beside config "
                            "%lld (%s): it varies ",
                            doc_name(j, doc), (int)(n->end - n->off),
                            j->e->text + n->off, j->cur->id, j->cur->label);
    for (size_t k = 0, first = 1; k < doc->nkeys && used < sizeof j->why; k++)
      if (doc->varying[k]) {
        used += (size_t)snprintf(j->why + used, sizeof j->why - used, "%s%s",
                                 first ? "" : ", ", doc->keys[k]);
        first = 0;
      }
  }
  return found;
}

static bool
doc_has_workload(const struct ff_runreport *doc, const char *name)
{
  for (size_t c = 0; c < doc->nconfigs; c++)
    if (ff_runreport_find_workload(&doc->configs[c], name))
      return true;
  return false;
}

static int
no_workload(const struct judge *j, const struct ff_runreport *doc,
            const struct node *n)
{
  size_t nn;
  const char **names = ff_runreport_workload_names(doc, &nn);
  char list[512] = "";
  size_t used = 0;

  for (size_t i = 0; names && i < nn && used < sizeof list; i++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                     names[i]);

    used = w < 0 ? sizeof list : used + (size_t)w;
  }
  free(names);
  return ff_error("at column %zu: %s has no workload '%s' (its "
                  "workloads: %s)",
                  n->off + 1, doc_name(j, doc), n->name,
                  list[0] ? list : "none");
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts it). */
static double
median(double *v, size_t n)
{
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The commands a run of w ran: 1 for a single-command workload, the
 * run's "commands" for lvchange; 0 when the document does not say (an
 * event activation: its pvscans and vgchanges are not per run). */
static long long
run_commands(const struct ff_rr_workload *w, const struct ff_rr_run *r)
{
  if (w->event)
    return 0;
  if (!strcmp(w->type, "lvchange"))
    return r->commands > 0 ? r->commands : 0;
  return 1;
}

/* The I/O measure fn of n over w (in c of doc): the median over w's runs
 * of what the farm served in each (reads or bytes), divided per device or
 * per command; when the runs do not have their own counts (documents
 * before they did), the workload's, from its last run.  NAN with
 * j->reason when the document does not have what it needs; *err = -1
 * with ff_error when the workload can never have it. */
static double
measure(struct judge *j, const struct ff_runreport *doc,
        const struct ff_rr_config *c, const struct ff_rr_workload *w,
        const struct node *n, int *err)
{
  bool rd = n->fn == F_READS || n->fn == F_READS_PER_DEVICE ||
            n->fn == F_READS_PER_COMMAND;
  bool per_cmd = n->fn == F_READS_PER_COMMAND || n->fn == F_BYTES_PER_COMMAND;
  const char *field = rd ? "reads" : "bytes_read";
  double *v, m;
  size_t nv = 0;

  if (per_cmd && w->event) {
    *err = -1;
    ff_error("at column %zu: %s(%s): '%s' is an event activation: the run "
             "document does not count its commands per run (use %s(%s) or "
             "%s(%s))",
             n->off + 1, ff_ex_fn_name(n->fn), n->name, n->name,
             rd ? "reads" : "bytes", n->name,
             rd ? "reads_per_device" : "bytes_per_device", n->name);
    return NAN;
  }
  v = calloc(w->nruns, sizeof *v);
  if (!v) {
    *err = ff_ex_oom();
    return NAN;
  }
  for (size_t i = 0; i < w->nruns; i++) {
    long long x = rd ? w->runs[i].reads : w->runs[i].bytes_read;
    long long k = run_commands(w, &w->runs[i]);

    if (x < 0 || (per_cmd && !k))
      break;
    v[nv++] = per_cmd ? (double)x / (double)k : (double)x;
  }
  if (nv < w->nruns) {
    /* the document's runs lack their own counts: the last run's */
    long long x = rd ? w->reads : w->bytes_read;
    long long k = run_commands(w, &w->runs[w->nruns - 1]);

    nv = 0;
    if (x >= 0 && (!per_cmd || k))
      v[nv++] = per_cmd ? (double)x / (double)k : (double)x;
  }
  if (!nv) {
    free(v);
    unjudged(j,
             "'%s' in config %lld of %s: the run document has no \"%s\"%s "
             "(the farm's read counters were not recorded)",
             n->name, c->id, doc_name(j, doc), field,
             per_cmd ? " or no \"commands\" per run" : "");
    return NAN;
  }
  m = median(v, nv);
  free(v);
  if (n->fn == F_READS_PER_DEVICE || n->fn == F_BYTES_PER_DEVICE) {
    if (!c->has_farm || c->devices <= 0) {
      unjudged(j,
               "'%s' in config %lld of %s: the run document has no device "
               "count (\"farm\": {\"devices\"}) for %s()",
               n->name, c->id, doc_name(j, doc), ff_ex_fn_name(n->fn));
      return NAN;
    }
    m /= (double)c->devices;
  }
  return m;
}

/* A term's value.  NAN with j->reason (not judged) or j->skip; -1 in *err
 * with ff_error on bad input. */
static double
term_value(struct judge *j, const struct node *n, int *err)
{
  const struct ff_runreport *doc = n->base ? j->base : j->rr;
  const struct ff_rr_config *c;
  const struct ff_rr_workload *w;
  char key[256];
  double v;

  if (!doc) {
    *err = -1;
    ff_error("at column %zu: '%.*s' needs --baseline RUN.json", n->off + 1,
             (int)(n->end - n->off), j->e->text + n->off);
    return NAN;
  }
  if (!doc_has_workload(doc, n->name)) {
    if (doc->error) {
      unjudged(j, "%s stopped early (%s) before any '%s' ran",
               doc_name(j, doc), doc->error, n->name);
      return NAN;
    }
    *err = no_workload(j, doc, n);
    return NAN;
  }
  c = resolve(j, doc, n, err);
  if (!c)
    return NAN;
  if (j->nused < sizeof j->used / sizeof *j->used)
    j->used[j->nused++] = n->base ? -c->id : c->id;
  w = ff_runreport_find_workload(c, n->name);
  if (!w) {
    unjudged(j, "%s did not time '%s' in config %lld (%s)%s%s",
             doc_name(j, doc), n->name, c->id, c->label,
             doc->error ? ": it stopped early: " : "",
             doc->error ? doc->error : "");
    return NAN;
  }
  /* bad input before "not judged": per command of an event activation */
  if (w->event &&
      (n->fn == F_READS_PER_COMMAND || n->fn == F_BYTES_PER_COMMAND))
    return measure(j, doc, c, w, n, err);
  if (w->failed_runs) {
    unjudged(j,
             "'%s' in config %lld of %s: %zu of %zu runs failed (worst "
             "exit %lld, failed commands: %lld): its time is not the "
             "workload's",
             n->name, c->id, doc_name(j, doc), w->failed_runs, w->nruns,
             w->worst_exit, w->errors);
    return NAN;
  }
  if (w->failed_units) {
    unjudged(j,
             "'%s' in config %lld of %s: %zu of its commands failed: its "
             "time is not the workload's",
             n->name, c->id, doc_name(j, doc), w->failed_units);
    return NAN;
  }
  v = n->fn == F_WALL ? w->median : measure(j, doc, c, w, n, err);
  if (isnan(v))
    return NAN;
  j->last_w = n->fn == F_WALL ? w : NULL;
  snprintf(key, sizeof key, "%.*s", (int)(n->end - n->off),
           j->e->text + n->off);
  if (n->bare)
    snprintf(key, sizeof key, "baseline.%s%s%s%s", ff_ex_fn_name(n->fn),
             n->fn ? "(" : "", n->name, n->fn ? ")" : "");
  json_object_set_new(j->values, key, json_real(v));
  return v;
}

static void
put_value(FILE *out, double v, enum dim dim)
{
  char buf[64];

  switch (dim) {
  case D_TIME:
    fputs(ff_runreport_fmt_secs(v, true, buf, sizeof buf), out);
    break;
  case D_BYTES:
    if (fabs(v) >= 1048576)
      fprintf(out, "%.4g MiB", v / 1048576);
    else if (fabs(v) >= 1024)
      fprintf(out, "%.4g KiB", v / 1024);
    else
      fprintf(out, "%.4g B", v);
    break;
  case D_COUNT:
    fprintf(out, "%.4g reads", v);
    break;
  case D_NONE:
    fprintf(out, "%.4g", v);
    break;
  }
}

/* A comparison k0 * A op k1 * B of wall times by the 95% interval of
 * A / B (ff-stats-ci.h) against t = k1 / k0: "confidently" holds only
 * when the whole interval is on the right side of t; otherwise (against
 * the baseline) it fails only when the whole interval is on the wrong
 * side.  Too few repetitions: "confidently" is not judged, a baseline
 * comparison keeps the medians' answer (median).  Writes what it found
 * to out; returns the verdict (NAN with j->reason). */
static double
interval_cmp(struct judge *j, const struct node *n,
             const struct ff_rr_workload *const w[2], double t, double median,
             FILE *out)
{
  bool less = n->op == '<' || n->op == 'L',
       strict = n->op == '<' || n->op == '>';
  struct ff_rr_ratio r;
  char a[32], b[32], c[32], th[32];
  bool v;

  if (ff_runreport_ratio(w[0], w[1], &r) < 0) {
    unjudged(j, "%s", ff_errmsg());
    return NAN;
  }
  if (r.judgement == FF_RR_TOO_FEW) {
    if (n->confident) {
      unjudged(j,
               "'confidently' needs a 95%% interval: %zu and %zu "
               "repetitions are too few (4 a side, or 3 and 5)",
               r.nruns_a, r.nruns_b);
      return NAN;
    }
    fprintf(out,
            " (medians: %zu and %zu repetitions are too few for a "
            "95%% interval)",
            r.nruns_a, r.nruns_b);
    return median;
  }
  if (n->confident)
    v =
      less ? (strict ? r.hi < t : r.hi <= t) : (strict ? r.lo > t : r.lo >= t);
  else
    v = less ? !(strict ? r.lo >= t : r.lo > t)
             : !(strict ? r.hi <= t : r.hi < t);
  ff_runreport_fmt_ratio(r.ratio, a, sizeof a);
  ff_runreport_fmt_ratio(r.lo, b, sizeof b);
  ff_runreport_fmt_ratio(r.hi, c, sizeof c);
  snprintf(th, sizeof th, "%.4g", t);
  b[strlen(b) - 1] = '\0';
  fprintf(out, " (ratio %s, 95%% CI %s\u2013%s against %s: %s)", a, b, c, th,
          n->confident ? (v ? "the whole interval is on its side"
                            : "the interval is not wholly on its side")
                       : (v ? "not clearly on the wrong side"
                            : "the whole interval is on the wrong side"));
  return v;
}

/* Evaluate n, writing it with the values substituted to out.  NAN with
 * j->reason or j->skip set, or *err. */
static double
eval(struct judge *j, const struct node *n, FILE *out, int *err)
{
  double a, b, v = NAN;

  if (*err || j->reason || j->skip)
    return NAN;
  if (n->paren)
    fputc('(', out);
  switch (n->kind) {
  case N_NUM:
    fprintf(out, "%.*s", (int)(n->end - n->off), j->e->text + n->off);
    v = n->num;
    break;
  case N_TERM:
    v = term_value(j, n, err);
    if (!isnan(v))
      put_value(out, v, n->dim);
    break;
  case N_NEG:
    fputc('-', out);
    v = -eval(j, n->a, out, err);
    break;
  case N_ARITH:
    a = eval(j, n->a, out, err);
    fprintf(out, " %c ", n->op);
    b = eval(j, n->b, out, err);
    if (n->op == '/' && b == 0 && !isnan(b)) {
      unjudged(j, "'%.*s' is 0: no ratio", (int)(n->b->end - n->b->off),
               j->e->text + n->b->off);
      break;
    }
    v = n->op == '+'   ? a + b
        : n->op == '-' ? a - b
        : n->op == '*' ? a * b
                       : a / b;
    break;
  case N_CMP: {
    static const char *const ops[] = {"<", "<=", ">", ">="};
    const char *op = ops[n->op == '<'   ? 0
                         : n->op == 'L' ? 1
                         : n->op == '>' ? 2
                                        : 3];
    const struct node *side[2] = {n->a, n->b}, *t[2];
    const struct ff_rr_workload *w[2] = {NULL, NULL};
    double sv[2], k[2];

    for (int s = 0; s < 2; s++) {
      t[s] = ff_ex_scaled_wall(side[s], &k[s]);
      j->last_w = NULL;
      sv[s] = eval(j, side[s], out, err);
      w[s] = t[s] ? j->last_w : NULL;
      if (side[s]->kind != N_NUM && side[s]->kind != N_TERM && !isnan(sv[s])) {
        fputs(" = ", out);
        put_value(out, sv[s], side[s]->dim);
      }
      if (!s)
        fprintf(out, " %s ", op);
    }
    a = sv[0];
    b = sv[1];
    v = n->op == '<'   ? a < b
        : n->op == 'L' ? a <= b
        : n->op == '>' ? a > b
                       : a >= b;
    /* against the baseline, or confidently: the 95% interval */
    if (w[0] && w[1] && (n->confident || t[0]->base != t[1]->base))
      v = interval_cmp(j, n, w, k[1] / k[0], v, out);
    fprintf(out, ": %s", v ? "true" : "false");
    break;
  }
  case N_AND:
  case N_OR:
    a = eval(j, n->a, out, err);
    fprintf(out, n->kind == N_AND ? " and " : " or ");
    b = eval(j, n->b, out, err);
    v = n->kind == N_AND ? (a && b) : (a || b);
    break;
  }
  if (n->paren)
    fputc(')', out);
  if (*err || j->reason || j->skip)
    return NAN;
  return v;
}

static bool
seen_before(long long used[][64], size_t *nused, size_t neval,
            const struct judge *j)
{
  for (size_t i = 0; i < neval; i++)
    if (nused[i] == j->nused &&
        !memcmp(used[i], j->used, j->nused * sizeof *j->used))
      return true;
  return false;
}

/* The short name of a setting: "use_aio" of "global/use_aio". */
static const char *
short_key(const char *key)
{
  const char *s = strrchr(key, '/');

  return s ? s + 1 : key;
}

/* Whether n has a workload term and every one (baseline terms aside)
 * qualifies the setting whose short name is key (len bytes). */
static bool
terms_fix(const struct node *n, const char *key, size_t len, bool *any)
{
  if (!n)
    return true;
  if (n->kind == N_TERM) {
    if (n->base)
      return true;
    *any = true;
    for (size_t i = 0; i < n->nq; i++) {
      const char *k = short_key(n->q[i].key);

      if (strlen(k) == len && !strncmp(k, key, len))
        return true;
    }
    return false;
  }
  return terms_fix(n->a, key, len, any) && terms_fix(n->b, key, len, any);
}

/* An evaluation's label: its configuration's ("lvm=2.02.180 use_aio=1")
 * less the settings every term of e fixes by its qualifier, which would
 * name the anchor configuration, not the ones compared.  Nothing left:
 * the whole label. */
static char *
eval_label(const struct ff_expect *e, const char *label)
{
  size_t n = strlen(label), o = 0;
  char *out = malloc(n + 1);

  if (!out)
    return NULL;
  for (const char *w = label; *w;) {
    size_t wl = strcspn(w, " "), kl = strcspn(w, "=");
    bool any = false;

    if (kl >= wl || !terms_fix(e->root, w, kl, &any) || !any) {
      if (o)
        out[o++] = ' ';
      memcpy(out + o, w, wl);
      o += wl;
    }
    w += wl;
    w += strspn(w, " ");
  }
  out[o] = '\0';
  if (!o)
    snprintf(out, n + 1, "%s", label);
  return out;
}

json_t *
ff_expect_judge(const struct ff_expect *e, const struct ff_runreport *rr,
                const struct ff_runreport *base, enum ff_expect_status *st)
{
  json_t *entry, *evals = json_array();
  long long(*used)[64] = calloc(rr->nconfigs, sizeof *used);
  size_t *nused = calloc(rr->nconfigs, sizeof *nused), neval = 0;
  bool any_fail = false, any_unjudged = false;
  char why_skip[768] = "";

  if (!evals || !used || !nused) {
    json_decref(evals);
    free(used);
    free(nused);
    ff_ex_oom();
    return NULL;
  }
  for (size_t c = 0; c < rr->nconfigs; c++) {
    struct judge j = {.e = e, .rr = rr, .base = base, .cur = &rr->configs[c]};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    int err = 0;
    double v;
    json_t *ev;
    char *label;

    j.values = json_object();
    if (!out || !j.values) {
      if (out)
        fclose(out);
      free(text);
      json_decref(j.values);
      json_decref(evals);
      free(used);
      free(nused);
      ff_ex_oom();
      return NULL;
    }
    v = eval(&j, e->root, out, &err);
    fclose(out);
    if (err || j.skip || seen_before(used, nused, neval, &j)) {
      free(text);
      free(j.reason);
      json_decref(j.values);
      if (err) {
        json_decref(evals);
        free(used);
        free(nused);
        return NULL;
      }
      if (j.skip)
        snprintf(why_skip, sizeof why_skip, "%s", j.why);
      continue;
    }
    memcpy(used[neval], j.used, sizeof j.used);
    nused[neval++] = j.nused;
    label = eval_label(e, j.cur->label);
    if (!label)
      ff_ex_oom();
    ev = json_pack("{s:I, s:s, s:o}", "config", (json_int_t)j.cur->id, "label",
                   label, "values", j.values);
    free(label);
    if (j.reason) {
      any_unjudged = true;
      json_object_set_new(ev, "holds", json_null());
      json_object_set_new(ev, "reason", json_string(j.reason));
    } else {
      any_fail |= !v;
      json_object_set_new(ev, "text", json_string(text));
      json_object_set_new(ev, "holds", json_boolean(v));
    }
    json_array_append_new(evals, ev);
    free(text);
    free(j.reason);
  }
  free(used);
  free(nused);
  if (!neval) {
    json_decref(evals);
    ff_error("no configuration to judge it in: %s",
             why_skip[0] ? why_skip : "the run has none");
    return NULL;
  }
  *st = any_unjudged ? FF_EXPECT_UNJUDGED
        : any_fail   ? FF_EXPECT_FAILS
                     : FF_EXPECT_HOLDS;
  entry = json_pack("{s:s, s:s, s:o}", "expression", e->text, "result",
                    ff_expect_status_name(*st), "evaluations", evals);
  if (!entry)
    ff_ex_oom();
  return entry;
}

int
ff_expect_exit(const enum ff_expect_status *st, size_t n)
{
  int rc = 0;

  for (size_t i = 0; i < n; i++)
    if (st[i] == FF_EXPECT_UNJUDGED)
      return 125;
    else if (st[i] == FF_EXPECT_FAILS)
      rc = 1;
  return rc;
}

int
ff_expect_judge_all(struct ff_expect *const *ex, size_t n,
                    const struct ff_runreport *rr,
                    const struct ff_runreport *base, json_t *doc)
{
  enum ff_expect_status *st = calloc(n ? n : 1, sizeof *st);
  json_t *arr = json_array();
  int rc;

  if (!st || !arr) {
    free(st);
    json_decref(arr);
    return ff_ex_oom();
  }
  for (size_t i = 0; i < n; i++) {
    json_t *entry = ff_expect_judge(ex[i], rr, base, &st[i]);

    if (!entry) {
      ff_error_prefix("--expect '%s': ", ex[i]->text);
      free(st);
      json_decref(arr);
      return -1;
    }
    json_array_append_new(arr, entry);
  }
  json_object_set_new(doc, "expect", arr);
  rc = ff_expect_exit(st, n);
  free(st);
  return rc;
}

void
ff_expect_print_error(FILE *out, const char *cmd, const char *text)
{
  const char *msg = ff_errmsg();
  unsigned col = 0;

  fprintf(out, "fusefarm %s: --expect: %s\n", cmd, msg);
  if (sscanf(msg, "at column %u:", &col) == 1 && col >= 1 &&
      col <= strlen(text) + 1)
    fprintf(out, "  %s\n  %*s^\n", text, (int)col - 1, "");
}

const char *
ff_expect_status_name(enum ff_expect_status st)
{
  return st == FF_EXPECT_HOLDS   ? "holds"
         : st == FF_EXPECT_FAILS ? "fails"
                                 : "not judged";
}

struct ff_runreport *
ff_expect_skeleton(const struct ff_scenario *sc)
{
  uint64_t nconf = ff_scenario_nconfigs(sc);
  unsigned *idx = calloc(sc->naxes + 1, sizeof *idx);
  json_t *doc, *configs = json_array();
  struct ff_runreport *rr = NULL;
  char *text;

  doc = json_pack("{s:s, s:i, s:{s:s}, s:s, s:{s:s, s:s}}", "format",
                  "fusefarm-run", "version", 1, "scenario", "name", sc->name,
                  "started", "", "host", "kernel", "", "lvm_version", "");
  if (!idx || !doc || !configs)
    goto out;
  json_object_set(doc, "configs", configs);
  for (uint64_t k = 0; k < nconf; k++) {
    char label[512], *st;
    json_t *settings, *wls = json_array(), *cj;

    ff_scenario_config(sc, k, idx);
    ff_config_label(sc, idx, label, sizeof label);
    st = ff_config_settings(sc, idx);
    settings = st ? json_loads(st, 0, NULL) : NULL;
    free(st);
    for (unsigned w = 0; wls && w < sc->nworkloads; w++) {
      const struct ff_workload *wl = &sc->workloads[w];
      json_t *wj = json_pack(
        "{s:s, s:s, s:i, s:[{s:f, s:i, s:i}], s:f, s:f, s:f}", "name",
        wl->name ? wl->name : ff_wtype_name(wl->type), "type",
        ff_wtype_name(wl->type), "repeat", 1, "runs", "wall", 1.0, "exit", 0,
        "errors", 0, "min", 1.0, "median", 1.0, "max", 1.0);

      if (wj && wl->type == FF_W_EVENT_ACTIVATION) {
        json_object_set_new(wj, "devices", json_array());
        json_object_set_new(wj, "activations", json_array());
      }
      json_array_append_new(wls, wj);
    }
    cj = json_pack("{s:I, s:s, s:o*, s:o*}", "id", (json_int_t)k + 1, "label",
                   label, "settings", settings, "workloads", wls);
    if (!cj || json_array_append_new(configs, cj) < 0)
      goto out;
  }
  text = json_dumps(doc, JSON_COMPACT);
  if (text)
    rr = ff_runreport_load_text(text, strlen(text), "the scenario");
  free(text);
  if (!rr)
    goto fail;
  goto done;
out:
  ff_ex_oom();
fail:
  rr = NULL;
done:
  json_decref(configs);
  json_decref(doc);
  free(idx);
  return rr;
}
