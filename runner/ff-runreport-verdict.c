/* fusefarm: the run report's verdict and definitions (see ff-runreport.h,
 * docs/report.md): what the table says, in a few lines, computed from the
 * document alone so that `fusefarm run` and `fusefarm report` print the
 * same.
 *
 * A ratio of two workloads' wall times is the ratio of their medians; its
 * uncertainty is what the repetitions allow: from the fastest of a against
 * the slowest of b (min_a / max_b) to the slowest of a against the fastest
 * of b (max_a / min_b).  When that range holds 1, the two sides' min-max
 * ranges overlap, and the difference is within the repetitions' spread:
 * noise, not a result.  One run has no spread, so it is not judged.
 * No threads. */
#include "ff-error.h"
#include "ff-runreport-int.h"
#include "ff-runreport.h"
#include "ff-runreport-json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ratios ------------------------------------------------------------ */

int
ff_runreport_ratio(const struct ff_rr_workload *a,
                   const struct ff_rr_workload *b, struct ff_rr_ratio *out)
{
  memset(out, 0, sizeof *out);
  if (b->min <= 0 || b->median <= 0)
    return ff_error("run report: %s: a wall time of 0 s has no ratio",
                    b->name);
  out->ratio = a->median / b->median;
  out->lo = a->min / b->max;
  out->hi = a->max / b->min;
  out->nruns_a = a->nruns;
  out->nruns_b = b->nruns;
  if (a->failed_runs || a->failed_units || b->failed_runs || b->failed_units)
    out->judgement = FF_RR_FAILED;
  else if (a->nruns < 2 || b->nruns < 2)
    out->judgement = FF_RR_ONE_SAMPLE;
  else if (out->lo > 1 || out->hi < 1)
    out->judgement = FF_RR_CLEAR;
  else
    out->judgement = FF_RR_NOISE;
  return 0;
}

char *
ff_runreport_fmt_ratio(double r, char *buf, size_t len)
{
  if (r >= 9.95)
    snprintf(buf, len, "%.0fx", r);
  else if (r >= 1.995)
    snprintf(buf, len, "%.1fx", r);
  else if (r >= 0.0995)
    snprintf(buf, len, "%.2fx", r);
  else
    snprintf(buf, len, "%.2gx", r);
  return buf;
}

/* ---- matrix keys --------------------------------------------------------
 */

/* Whether configs a and b have the same value of every settings key but
 * skip (both lacking a key counts as the same). */
static bool
same_but(const struct ff_runreport *rr, const struct ff_rr_config *a,
         const struct ff_rr_config *b, const char *skip)
{
  for (size_t k = 0; k < rr->nkeys; k++) {
    const struct ff_rr_setting *x, *y;

    if (!strcmp(rr->keys[k], skip))
      continue;
    x = ff_runreport_setting(a, rr->keys[k]);
    y = ff_runreport_setting(b, rr->keys[k]);
    if (!x != !y || (x && strcmp(x->text, y->text)))
      return false;
  }
  return true;
}

/* The key's base value: its value in the first config that has it. */
static const char *
base_value(const struct ff_runreport *rr, const char *key)
{
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const struct ff_rr_setting *s = ff_runreport_setting(&rr->configs[i], key);

    if (s)
      return s->text;
  }
  return NULL;
}

/* Config j's partner with the key's base value (and every other setting
 * the same), or NULL. */
static const struct ff_rr_config *
partner(const struct ff_runreport *rr, const struct ff_rr_config *cj,
        const char *key, const char *base)
{
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const struct ff_rr_config *ci = &rr->configs[i];
    const struct ff_rr_setting *s = ff_runreport_setting(ci, key);

    if (ci != cj && s && !strcmp(s->text, base) && same_but(rr, ci, cj, key))
      return ci;
  }
  return NULL;
}

struct ff_rr_effect *
ff_runreport_effects(const struct ff_runreport *rr, const char *key,
                     const char *value, size_t *n, size_t *npairs)
{
  const char *base = base_value(rr, key);
  const char **names;
  struct ff_rr_effect *fx;
  size_t nnames;

  *n = 0;
  *npairs = 0;
  if (!base || !strcmp(base, value))
    return NULL;
  names = ff_runreport_workload_names(rr, &nnames);
  if (!names) {
    *n = (size_t)-1;
    return NULL;
  }
  fx = calloc(nnames ? nnames : 1, sizeof *fx);
  if (!fx) {
    free(names);
    *n = (size_t)-1;
    ff_rr_oom();
    return NULL;
  }
  for (size_t j = 0; j < rr->nconfigs; j++) {
    const struct ff_rr_config *cj = &rr->configs[j];
    const struct ff_rr_setting *s = ff_runreport_setting(cj, key);

    if (s && !strcmp(s->text, value) && partner(rr, cj, key, base))
      (*npairs)++;
  }
  for (size_t k = 0; k < nnames; k++) {
    struct ff_rr_effect *e = &fx[*n];
    double logsum = 0;
    bool up = false, down = false, noise = false, one = false, bad = false;

    memset(e, 0, sizeof *e);
    for (size_t j = 0; j < rr->nconfigs; j++) {
      const struct ff_rr_config *cj = &rr->configs[j], *ci;
      const struct ff_rr_setting *s = ff_runreport_setting(cj, key);
      const struct ff_rr_workload *a, *b;
      struct ff_rr_ratio r;

      if (!s || strcmp(s->text, value) || !(ci = partner(rr, cj, key, base)))
        continue;
      a = ff_runreport_find_workload(cj, names[k]);
      b = ff_runreport_find_workload(ci, names[k]);
      if (!a || !b || ff_runreport_ratio(a, b, &r) < 0 || r.ratio <= 0)
        continue;
      if (!e->npairs) {
        e->lo = r.lo;
        e->hi = r.hi;
        e->rmin = e->rmax = r.ratio;
      }
      e->npairs++;
      logsum += log(r.ratio);
      e->lo = r.lo < e->lo ? r.lo : e->lo;
      e->hi = r.hi > e->hi ? r.hi : e->hi;
      e->rmin = r.ratio < e->rmin ? r.ratio : e->rmin;
      e->rmax = r.ratio > e->rmax ? r.ratio : e->rmax;
      bad |= r.judgement == FF_RR_FAILED;
      one |= r.judgement == FF_RR_ONE_SAMPLE;
      noise |= r.judgement == FF_RR_NOISE;
      up |= r.judgement == FF_RR_CLEAR && r.lo > 1;
      down |= r.judgement == FF_RR_CLEAR && r.hi < 1;
    }
    if (!e->npairs)
      continue;
    e->workload = names[k];
    e->ratio = exp(logsum / (double)e->npairs);
    e->judgement = bad                      ? FF_RR_FAILED
                   : one                    ? FF_RR_ONE_SAMPLE
                   : noise && !up && !down  ? FF_RR_NOISE
                   : (up != down) && !noise ? FF_RR_CLEAR
                                            : FF_RR_MIXED;
    (*n)++;
  }
  free(names);
  if (!*n) {
    free(fx);
    return NULL;
  }
  return fx;
}

/* ---- text ---------------------------------------------------------------
 */

/* "min–max 35–41x" */
static void
print_range(FILE *out, double lo, double hi)
{
  char a[32], b[32];

  ff_runreport_fmt_ratio(lo, a, sizeof a);
  ff_runreport_fmt_ratio(hi, b, sizeof b);
  /* "35x" -> "35" for the lower end: one x per range */
  a[strlen(a) - 1] = '\0';
  fprintf(out, "min\u2013max %s\u2013%s", a, b);
}

/* Order: the biggest effect (either way) first. */
static int
by_size(const void *pa, const void *pb)
{
  const struct ff_rr_effect *a = pa, *b = pb;
  double x = fabs(log(a->ratio)), y = fabs(log(b->ratio));

  return x > y ? -1 : x < y ? 1 : 0;
}

/* The short name of a key as the table shows it. */
static const char *
key_name(const struct ff_runreport *rr, const char *key)
{
  for (size_t k = 0; k < rr->nkeys; k++)
    if (!strcmp(rr->keys[k], key))
      return ff_rr_short_key(rr, k);
  return key;
}

/* One line per value of a varying key other than its base. */
/* The effects that are not clear, one line per judgement: its label,
 * then each workload with its ratio (or, for mixed, its min–max). */
struct effect_group {
  enum ff_rr_judgement judgement;
  const char *label;
};

static const struct effect_group groups[] = {
  {FF_RR_MIXED, "not the same in every pair (noise in some, or both ways)"},
  {FF_RR_NOISE, "within noise"},
  {FF_RR_ONE_SAMPLE, "1 sample, no spread: not judged"},
  {FF_RR_FAILED, "a run failed, not judged"},
};

static void
print_group(FILE *out, const struct ff_rr_effect *fx, size_t n,
            const struct effect_group *g)
{
  size_t m = 0;
  char r[32], lo[32];

  for (size_t e = 0; e < n; e++) {
    if (fx[e].judgement != g->judgement)
      continue;
    if (m++)
      fputs(", ", out);
    else
      fprintf(out, "    %s: ", g->label);
    fputs(fx[e].workload, out);
    if (g->judgement == FF_RR_MIXED) {
      ff_runreport_fmt_ratio(fx[e].rmin, lo, sizeof lo);
      lo[strlen(lo) - 1] = '\0';
      fprintf(out, " %s\u2013%s", lo,
              ff_runreport_fmt_ratio(fx[e].rmax, r, sizeof r));
    } else {
      fprintf(out, " %s", ff_runreport_fmt_ratio(fx[e].ratio, r, sizeof r));
    }
  }
  if (m)
    fputc('\n', out);
}

/* The values of key other than its base, each once, in document order:
 * *n strings borrowed from the model in a malloc'd array (caller frees),
 * or NULL with ff_error on allocation failure. */
static const char **
other_values(const struct ff_runreport *rr, const char *key, size_t *n)
{
  const char *base = base_value(rr, key);
  const char **seen = calloc(rr->nconfigs + 1, sizeof *seen);

  *n = 0;
  if (!seen) {
    ff_rr_oom();
    return NULL;
  }
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const struct ff_rr_setting *s = ff_runreport_setting(&rr->configs[i], key);
    bool dup = false;

    if (!s || !base || !strcmp(s->text, base))
      continue;
    for (size_t q = 0; q < *n; q++)
      dup |= !strcmp(seen[q], s->text);
    if (!dup)
      seen[(*n)++] = s->text;
  }
  return seen;
}

static int
print_key(const struct ff_runreport *rr, size_t k, FILE *out)
{
  const char *key = rr->keys[k], *base = base_value(rr, key);
  const char *name = key_name(rr, key);
  size_t nvalues;
  const char **values = other_values(rr, key, &nvalues);

  if (!values)
    return -1;
  for (size_t v = 0; v < nvalues; v++) {
    struct ff_rr_effect *fx;
    size_t n, npairs;
    char r[32];

    fx = ff_runreport_effects(rr, key, values[v], &n, &npairs);
    if (n == (size_t)-1) {
      free(values);
      return -1;
    }
    if (!n)
      continue;
    qsort(fx, n, sizeof *fx, by_size);
    fprintf(out,
            "- %s=%s vs %s (%zu pair%s of configs differing only in "
            "it):\n",
            name, values[v], base, npairs, npairs == 1 ? "" : "s");
    for (size_t e = 0; e < n; e++) {
      const struct ff_rr_effect *f = &fx[e];

      if (f->judgement == FF_RR_CLEAR) {
        fprintf(out, "    %s %s (", f->workload,
                ff_runreport_fmt_ratio(f->ratio, r, sizeof r));
        print_range(out, f->lo, f->hi);
        if (f->npairs != npairs)
          fprintf(out, "; %zu pair%s", f->npairs, f->npairs == 1 ? "" : "s");
        fputs(")\n", out);
      }
    }
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
      print_group(out, fx, n, &groups[g]);
    free(fx);
  }
  free(values);
  return 0;
}

/* The first workload of config c of the given type, or NULL. */
static const struct ff_rr_workload *
of_type(const struct ff_rr_config *c, const char *type)
{
  for (size_t j = 0; j < c->nworkloads; j++)
    if (!strcmp(c->workloads[j].type, type))
      return &c->workloads[j];
  return NULL;
}

static void
print_event_direct_line(const struct ff_rr_config *c,
                        const struct ff_rr_workload *ev,
                        const struct ff_rr_workload *dir,
                        const struct ff_rr_ratio *r, FILE *out)
{
  char t[32];

  ff_runreport_fmt_ratio(r->ratio, t, sizeof t);
  switch (r->judgement) {
  case FF_RR_CLEAR:
    if (r->nruns_a == r->nruns_b)
      fprintf(out, "- %s = %s %s in config %lld (%zu repetitions each, ",
              ev->name, t, dir->name, c->id, r->nruns_a);
    else
      fprintf(out, "- %s = %s %s in config %lld (%zu and %zu repetitions, ",
              ev->name, t, dir->name, c->id, r->nruns_a, r->nruns_b);
    print_range(out, r->lo, r->hi);
    fputs(")\n", out);
    break;
  case FF_RR_NOISE:
    fprintf(out, "- %s vs %s in config %lld: %s, within noise (", ev->name,
            dir->name, c->id, t);
    print_range(out, r->lo, r->hi);
    fputs(")\n", out);
    break;
  case FF_RR_FAILED:
    fprintf(out, "- %s = %s %s in config %lld (a run failed: not judged)\n",
            ev->name, t, dir->name, c->id);
    break;
  default:
    fprintf(out,
            "- %s = %s %s in config %lld (1 sample, no spread: not "
            "judged)\n",
            ev->name, t, dir->name, c->id);
    break;
  }
}

/* Event against direct activation in each config that ran both: every
 * config up to 4 of them, else the smallest and largest ratio. */
static int
print_event_direct(const struct ff_runreport *rr, FILE *out)
{
  struct ff_rr_ratio *r = calloc(rr->nconfigs + 1, sizeof *r);
  size_t *ci = calloc(rr->nconfigs + 1, sizeof *ci), n = 0, lo = 0, hi = 0;

  if (!r || !ci) {
    free(r);
    free(ci);
    return ff_rr_oom();
  }
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const struct ff_rr_workload *ev =
      of_type(&rr->configs[i], "event-activation");
    const struct ff_rr_workload *dir =
      of_type(&rr->configs[i], "direct-activation");

    if (ev && dir && ff_runreport_ratio(ev, dir, &r[n]) == 0)
      ci[n++] = i;
  }
  for (size_t k = 0; k < n; k++) {
    lo = r[k].ratio < r[lo].ratio ? k : lo;
    hi = r[k].ratio > r[hi].ratio ? k : hi;
  }
  if (n > 4)
    fprintf(out,
            "- event against direct activation in %zu configs; the "
            "smallest and the largest:\n",
            n);
  for (size_t k = 0; k < n; k++) {
    const struct ff_rr_config *c = &rr->configs[ci[k]];

    if (n > 4 && k != lo && k != hi)
      continue;
    print_event_direct_line(c, of_type(c, "event-activation"),
                            of_type(c, "direct-activation"), &r[k], out);
  }
  free(r);
  free(ci);
  return 0;
}

/* What a built-in profile name means, or NULL. */
static const char *
profile_meaning(const char *v)
{
  if (!strcmp(v, "ideal") || !strcmp(v, "builtin:ideal"))
    return "the profile with no latency: every request is answered at once";
  if (!strcmp(v, "builtin:fixed-1ms"))
    return "every read and write takes 1 ms";
  return NULL;
}

/* The terms of the table: the repetitions, the units, the profiles. */
void
ff_rr_print_definitions(const struct ff_runreport *rr, FILE *out)
{
  long long rmin = -1, rmax = -1;
  bool event = false;
  const char **names;
  size_t nnames;

  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const struct ff_rr_workload *w = &rr->configs[i].workloads[j];

      rmin = rmin < 0 || w->repeat < rmin ? w->repeat : rmin;
      rmax = w->repeat > rmax ? w->repeat : rmax;
      event |= w->event;
    }
  if (rmax <= 1)
    fputs("median: wall time of the workload, 1 repetition each (no "
          "spread)",
          out);
  else if (rmin == rmax)
    fprintf(out,
            "median (min\u2013max): wall time of the workload over its %lld "
            "repetitions (middle, fastest, slowest)",
            rmax);
  else if (rmin > 1)
    fprintf(out,
            "median (min\u2013max): wall time of the workload over its "
            "repetitions (%lld to %lld)",
            rmin, rmax);
  else
    fprintf(out,
            "median (min\u2013max): wall time of the workload over its "
            "repetitions (up to %lld; a time alone: 1 repetition)",
            rmax);
  if (event)
    fputs("; slowest pvscan, vgchange: the longest of the last repetition",
          out);
  fputc('\n', out);

  /* units, per event-activation name: the first config that ran it */
  names = ff_runreport_workload_names(rr, &nnames);
  for (size_t k = 0; names && k < nnames; k++)
    for (size_t i = 0; i < rr->nconfigs; i++) {
      const struct ff_rr_workload *w =
        ff_runreport_find_workload(&rr->configs[i], names[k]);

      if (!w || !w->event)
        continue;
      fprintf(out,
              "units of %s: %zu = %zu pvscan%s (one per device) + %zu "
              "vgchange%s (one per VG the pvscans completed), config %lld, "
              "last repetition\n",
              w->name, w->nunits, w->npvscan, w->npvscan == 1 ? "" : "s",
              w->nvgchange, w->nvgchange == 1 ? "" : "s", rr->configs[i].id);
      break;
    }
  free(names);

  /* the built-in profiles the settings name, each once */
  for (size_t i = 0; i < rr->nconfigs; i++) {
    const struct ff_rr_setting *s =
      ff_runreport_setting(&rr->configs[i], "fusefarm/profile");
    bool dup = false;

    if (!s || !profile_meaning(s->text))
      continue;
    for (size_t q = 0; q < i; q++) {
      const struct ff_rr_setting *t =
        ff_runreport_setting(&rr->configs[q], "fusefarm/profile");

      dup |= t && !strcmp(t->text, s->text);
    }
    if (!dup)
      fprintf(out, "%s: %s\n", s->text, profile_meaning(s->text));
  }
}

int
ff_runreport_print_verdict(const struct ff_runreport *rr, FILE *out)
{
  char *body = NULL;
  size_t len = 0;
  FILE *b = open_memstream(&body, &len);
  int rc = 0;

  if (!b)
    return ff_rr_oom();
  if (print_event_direct(rr, b) < 0)
    rc = -1;
  for (size_t k = 0; k < rr->nkeys && !rc; k++)
    if (rr->varying[k] && print_key(rr, k, b) < 0)
      rc = -1;
  if (fclose(b) != 0 && !rc)
    rc = ff_rr_oom();
  if (!rc) {
    fputs("verdict (ratios of median wall times; min\u2013max: fastest "
          "against slowest repetitions; overlapping ranges are noise):\n",
          out);
    fputs(len ? body
              : "- nothing to compare: no config ran both event and direct "
                "activation, and no setting varies between configs\n",
          out);
  }
  free(body);
  return rc;
}

int
ff_runreport_print_expect(const struct ff_runreport *rr, FILE *out)
{
  int worst = 0;

  if (!rr->nexpect)
    return 0;
  for (size_t i = 0; i < rr->nexpect; i++) {
    int st = !strcmp(rr->expect[i].result, "holds")   ? 0
             : !strcmp(rr->expect[i].result, "fails") ? 1
                                                      : 125;

    worst = st == 125 || worst == 125 ? 125 : st > worst ? st : worst;
  }
  fprintf(out, "\nexpect (exit %d: %s):\n", worst,
          worst == 0   ? "every expression holds"
          : worst == 1 ? "an expression fails"
                       : "an expression could not be judged; git bisect "
                         "skips this commit");
  for (size_t i = 0; i < rr->nexpect; i++) {
    const struct ff_rr_expect *x = &rr->expect[i];

    fprintf(out, "- %-10s  %s", x->result, x->expression);
    if (x->nevals == 1) {
      const struct ff_rr_expect_eval *v = &x->evals[0];

      fprintf(out, ": %s\n", v->holds < 0 ? v->reason : v->text);
      continue;
    }
    fputc('\n', out);
    for (size_t k = 0; k < x->nevals; k++) {
      const struct ff_rr_expect_eval *v = &x->evals[k];

      fprintf(out, "    [%lld] %s: %s%s\n", v->config, v->label,
              v->holds < 0 ? "not judged: " : "",
              v->holds < 0 ? v->reason : v->text);
    }
  }
  if (ferror(out))
    return ff_error("writing the report: %m");
  return 0;
}

/* ---- the document's "verdict" (docs/run-json.md) ----------------------- */

const char *
ff_runreport_judgement_name(enum ff_rr_judgement j)
{
  switch (j) {
  case FF_RR_CLEAR:
    return "clear";
  case FF_RR_NOISE:
    return "noise";
  case FF_RR_ONE_SAMPLE:
    return "one-sample";
  case FF_RR_MIXED:
    return "mixed";
  default:
    return "failed";
  }
}

/* {"ratio", "min", "max", "judgement"} of r, into o. */
static int
ratio_members(json_t *o, const struct ff_rr_ratio *r)
{
  return json_object_set_new(o, "ratio", json_real(r->ratio)) |
         json_object_set_new(o, "min", json_real(r->lo)) |
         json_object_set_new(o, "max", json_real(r->hi)) |
         json_object_set_new(
           o, "judgement",
           json_string(ff_runreport_judgement_name(r->judgement)));
}

static json_t *
event_direct_json(const struct ff_runreport *rr)
{
  json_t *a = json_array();

  for (size_t i = 0; a && i < rr->nconfigs; i++) {
    const struct ff_rr_config *c = &rr->configs[i];
    const struct ff_rr_workload *ev = of_type(c, "event-activation");
    const struct ff_rr_workload *dir = of_type(c, "direct-activation");
    struct ff_rr_ratio r;
    json_t *o;

    if (!ev || !dir || ff_runreport_ratio(ev, dir, &r) < 0)
      continue;
    o =
      json_pack("{s:I, s:s, s:s, s:s, s:[I,I]}", "config", (json_int_t)c->id,
                "label", c->label, "workload", ev->name, "against", dir->name,
                "runs", (json_int_t)r.nruns_a, (json_int_t)r.nruns_b);
    if (!o || ratio_members(o, &r) || json_array_append_new(a, o)) {
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

/* The pairs behind one effect of key=value on workload name. */
static json_t *
pairs_json(const struct ff_runreport *rr, const char *key, const char *value,
           const char *base, const char *name)
{
  json_t *a = json_array();

  for (size_t j = 0; a && j < rr->nconfigs; j++) {
    const struct ff_rr_config *cj = &rr->configs[j], *ci;
    const struct ff_rr_setting *s = ff_runreport_setting(cj, key);
    const struct ff_rr_workload *wa, *wb;
    struct ff_rr_ratio r;
    json_t *o;

    if (!s || strcmp(s->text, value) || !(ci = partner(rr, cj, key, base)))
      continue;
    wa = ff_runreport_find_workload(cj, name);
    wb = ff_runreport_find_workload(ci, name);
    if (!wa || !wb || ff_runreport_ratio(wa, wb, &r) < 0 || r.ratio <= 0)
      continue;
    o = json_pack("{s:I, s:s, s:I, s:s}", "config", (json_int_t)cj->id,
                  "label", cj->label, "base_config", (json_int_t)ci->id,
                  "base_label", ci->label);
    if (!o || ratio_members(o, &r) || json_array_append_new(a, o)) {
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

/* One entry of "axes": key=value against the key's base. */
static json_t *
axis_json(const struct ff_runreport *rr, const char *key, const char *value)
{
  const char *base = base_value(rr, key);
  size_t n, npairs;
  struct ff_rr_effect *fx = ff_runreport_effects(rr, key, value, &n, &npairs);
  json_t *o, *effects = json_array();

  if (n == (size_t)-1) {
    json_decref(effects);
    return NULL;
  }
  o = json_pack("{s:s, s:s, s:s, s:I}", "key", key, "value", value, "base",
                base, "pairs", (json_int_t)npairs);
  if (!o || !effects || json_object_set(o, "effects", effects)) {
    json_decref(o);
    o = NULL;
  }
  for (size_t e = 0; o && e < n; e++) {
    const struct ff_rr_effect *f = &fx[e];
    json_t *x =
      json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:o*}", "workload",
                f->workload, "ratio", f->ratio, "min", f->lo, "max", f->hi,
                "pair_ratio_min", f->rmin, "pair_ratio_max", f->rmax,
                "judgement", ff_runreport_judgement_name(f->judgement),
                "pairs", pairs_json(rr, key, value, base, f->workload));

    if (!x || !json_object_get(x, "pairs") ||
        json_array_append_new(effects, x)) {
      json_decref(x);
      json_decref(o);
      o = NULL;
    }
  }
  json_decref(effects);
  free(fx);
  return o;
}

json_t *
ff_runreport_verdict_json(const struct ff_runreport *rr)
{
  json_t *axes = json_array();
  json_t *v = json_pack("{s:o*, s:O*}", "event_direct", event_direct_json(rr),
                        "axes", axes);

  if (!v || !json_object_get(v, "event_direct"))
    goto oom;
  for (size_t k = 0; k < rr->nkeys; k++) {
    size_t nvalues;
    const char **values;

    if (!rr->varying[k])
      continue;
    values = other_values(rr, rr->keys[k], &nvalues);
    if (!values)
      goto oom;
    for (size_t i = 0; i < nvalues; i++) {
      json_t *x = axis_json(rr, rr->keys[k], values[i]);

      if (!x || json_array_append_new(axes, x)) {
        free(values);
        goto oom;
      }
    }
    free(values);
  }
  json_decref(axes);
  return v;
oom:
  json_decref(axes);
  json_decref(v);
  ff_rr_oom();
  return NULL;
}
