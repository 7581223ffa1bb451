/* fusefarm: the run report's verdict and definitions (see ff-runreport.h,
 * docs/report.md): what the table says, in a few lines, computed from the
 * document alone so that `fusefarm run` and `fusefarm report` print the
 * same.
 *
 * A ratio of two workloads' wall times is the Hodges-Lehmann estimate
 * from their repetitions, with its 95% confidence interval (the
 * Mann-Whitney interval on log times: ff-stats-ci.h).  When the
 * interval holds 1 there is no clear difference, never a result; with
 * fewer than 4 repetitions a side (3 and 5, 2 and 10) there is no 95%
 * interval, and the ratio is not judged.  An effect over several pairs
 * of configurations whose intervals do not overlap is an interaction:
 * printed per pair, named by its other settings.  No threads. */
#include "ff-error.h"
#include "ff-runreport-int.h"
#include "ff-runreport.h"
#include "ff-runreport-json.h"
#include "ff-stats-ci.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ratios ------------------------------------------------------------ */

/* The wall times of w's runs, malloc'd (NULL with ff_error). */
static double *
walls(const struct ff_rr_workload *w)
{
  double *v = calloc(w->nruns ? w->nruns : 1, sizeof *v);

  if (!v) {
    ff_rr_oom();
    return NULL;
  }
  for (size_t i = 0; i < w->nruns; i++)
    v[i] = w->runs[i].wall;
  return v;
}

int
ff_runreport_ratio(const struct ff_rr_workload *a,
                   const struct ff_rr_workload *b, struct ff_rr_ratio *out)
{
  double *va, *vb;
  struct ff_ci ci;
  int rc;

  memset(out, 0, sizeof *out);
  if (a->min <= 0 || b->min <= 0)
    return ff_error("run report: %s: a wall time of 0 s has no ratio",
                    a->min <= 0 ? a->name : b->name);
  va = walls(a);
  vb = walls(b);
  rc = va && vb ? ff_ci_ratio(va, a->nruns, vb, b->nruns, &ci) : -1;
  free(va);
  free(vb);
  if (rc < 0)
    return ff_error_prefix("run report: %s against %s: ", a->name, b->name);
  out->ratio = ci.ratio;
  out->lo = ci.lo;
  out->hi = ci.hi;
  out->confidence = ci.confidence;
  out->nruns_a = a->nruns;
  out->nruns_b = b->nruns;
  if (a->failed_runs || a->failed_units || b->failed_runs || b->failed_units)
    out->judgement = FF_RR_FAILED;
  else if (!ci.judged)
    out->judgement = FF_RR_TOO_FEW;
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

/* One pair of configs behind an effect: cj has the value, ci the base. */
struct pair {
  const struct ff_rr_config *cj, *ci;
  struct ff_rr_ratio r;
};

/* The pairs of key=value against base for workload name, with a ratio,
 * into p (room for rr->nconfigs); how many. */
static long
effect_pairs(const struct ff_runreport *rr, const char *key, const char *value,
             const char *base, const char *name, struct pair *p)
{
  long n = 0;

  for (size_t j = 0; j < rr->nconfigs; j++) {
    const struct ff_rr_config *cj = &rr->configs[j], *ci;
    const struct ff_rr_setting *s = ff_runreport_setting(cj, key);
    const struct ff_rr_workload *a, *b;

    if (!s || strcmp(s->text, value) || !(ci = partner(rr, cj, key, base)))
      continue;
    a = ff_runreport_find_workload(cj, name);
    b = ff_runreport_find_workload(ci, name);
    /* no ratio (a time of 0): no pair, as the table shows no ratio */
    if (!a || !b || ff_runreport_ratio(a, b, &p[n].r) < 0)
      continue;
    p[n].cj = cj;
    p[n].ci = ci;
    n++;
  }
  return n;
}

/* The effect of pairs p[0..n) (n > 0) into *e. */
static void
combine(const struct pair *p, size_t n, struct ff_rr_effect *e)
{
  double logsum = 0;
  bool up = false, down = false, noise = false, few = false, bad = false;
  bool apart = false;

  e->npairs = n;
  e->lo = p[0].r.lo;
  e->hi = p[0].r.hi;
  e->rmin = e->rmax = p[0].r.ratio;
  for (size_t i = 0; i < n; i++) {
    const struct ff_rr_ratio *r = &p[i].r;

    logsum += log(r->ratio);
    e->lo = r->lo < e->lo ? r->lo : e->lo;
    e->hi = r->hi > e->hi ? r->hi : e->hi;
    e->rmin = r->ratio < e->rmin ? r->ratio : e->rmin;
    e->rmax = r->ratio > e->rmax ? r->ratio : e->rmax;
    bad |= r->judgement == FF_RR_FAILED;
    few |= r->judgement == FF_RR_TOO_FEW;
    noise |= r->judgement == FF_RR_NOISE;
    up |= r->judgement == FF_RR_CLEAR && r->lo > 1;
    down |= r->judgement == FF_RR_CLEAR && r->hi < 1;
    for (size_t k = 0; k < i; k++)
      apart |= r->hi < p[k].r.lo || p[k].r.hi < r->lo;
  }
  e->ratio = exp(logsum / (double)n);
  e->judgement = bad                      ? FF_RR_FAILED
                 : few                    ? FF_RR_TOO_FEW
                 : apart                  ? FF_RR_INTERACTION
                 : noise && !up && !down  ? FF_RR_NOISE
                 : (up != down) && !noise ? FF_RR_CLEAR
                                          : FF_RR_MIXED;
}

struct ff_rr_effect *
ff_runreport_effects(const struct ff_runreport *rr, const char *key,
                     const char *value, size_t *n, size_t *npairs)
{
  const char *base = base_value(rr, key);
  const char **names;
  struct ff_rr_effect *fx;
  struct pair *p;
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
  p = calloc(rr->nconfigs + 1, sizeof *p);
  if (!fx || !p) {
    ff_rr_oom();
    goto fail;
  }
  for (size_t j = 0; j < rr->nconfigs; j++) {
    const struct ff_rr_config *cj = &rr->configs[j];
    const struct ff_rr_setting *s = ff_runreport_setting(cj, key);

    if (s && !strcmp(s->text, value) && partner(rr, cj, key, base))
      (*npairs)++;
  }
  for (size_t k = 0; k < nnames; k++) {
    long np = effect_pairs(rr, key, value, base, names[k], p);

    if (np < 0)
      goto fail;
    if (!np)
      continue;
    combine(p, (size_t)np, &fx[*n]);
    fx[(*n)++].workload = names[k];
  }
  free(p);
  free(names);
  if (!*n) {
    free(fx);
    return NULL;
  }
  return fx;
fail:
  free(p);
  free(fx);
  free(names);
  *n = (size_t)-1;
  return NULL;
}

/* What else pair p's config has, for people: its other varying settings,
 * "profile=slow-2pct lvm=A" (short keys), into buf. */
static char *
pair_with(const struct ff_runreport *rr, const struct ff_rr_config *c,
          const char *key, char *buf, size_t len)
{
  size_t used = 0;

  buf[0] = '\0';
  for (size_t k = 0; k < rr->nkeys && used < len; k++) {
    const struct ff_rr_setting *s;
    int w;

    if (!rr->varying[k] || !strcmp(rr->keys[k], key) ||
        !(s = ff_runreport_setting(c, rr->keys[k])))
      continue;
    w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
                 ff_rr_short_key(rr, k), s->text);
    used = w < 0 ? len : used + (size_t)w;
  }
  if (!buf[0])
    snprintf(buf, len, "config %lld", c->id);
  return buf;
}

/* ---- text ---------------------------------------------------------------
 */

/* "95% CI 35–41x" */
static void
print_range(FILE *out, double lo, double hi)
{
  char a[32], b[32];

  ff_runreport_fmt_ratio(lo, a, sizeof a);
  ff_runreport_fmt_ratio(hi, b, sizeof b);
  /* "35x" -> "35" for the lower end: one x per range */
  a[strlen(a) - 1] = '\0';
  fprintf(out, "95%% CI %s\u2013%s", a, b);
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

/* The effects printed on one line per judgement: its label, then each
 * workload with its ratio (and interval, when it has one). */
struct effect_group {
  enum ff_rr_judgement judgement;
  const char *label;
};

static const struct effect_group groups[] = {
  {FF_RR_NOISE, "no clear difference (the 95% interval holds 1)"},
  {FF_RR_TOO_FEW, "too few repetitions for a 95% interval (4 a side, or 3 "
                  "and 5): not judged"},
  {FF_RR_FAILED, "a run failed, not judged"},
};

static void
print_group(FILE *out, const struct ff_rr_effect *fx, size_t n,
            const struct effect_group *g)
{
  size_t m = 0;
  char r[32];

  for (size_t e = 0; e < n; e++) {
    if (fx[e].judgement != g->judgement)
      continue;
    if (m++)
      fputs(", ", out);
    else
      fprintf(out, "    %s: ", g->label);
    fprintf(out, "%s %s", fx[e].workload,
            ff_runreport_fmt_ratio(fx[e].ratio, r, sizeof r));
    if (g->judgement == FF_RR_NOISE) {
      fputs(" (", out);
      print_range(out, fx[e].lo, fx[e].hi);
      fputc(')', out);
    }
  }
  if (m)
    fputc('\n', out);
}

/* An effect that is not the same in every pair, pair by pair: "lvchange
 * differs with the other settings: 1.47x (95% CI 1.30–1.60x) with
 * profile=slow-2pct, 1.05x (95% CI 0.98–1.10x; no clear difference)
 * with profile=ideal". */
static int
print_per_pair(const struct ff_runreport *rr, const char *key,
               const char *value, const struct ff_rr_effect *f, FILE *out)
{
  struct pair *p = calloc(rr->nconfigs + 1, sizeof *p);
  char r[32], with[256];
  long np;

  if (!p)
    return ff_rr_oom();
  np = effect_pairs(rr, key, value, base_value(rr, key), f->workload, p);
  if (np < 0) {
    free(p);
    return -1;
  }
  fprintf(out, "    %s %s: ", f->workload,
          f->judgement == FF_RR_INTERACTION
            ? "differs with the other settings (interaction: the pairs' "
              "intervals do not overlap)"
            : "is not clear in every pair");
  for (long i = 0; i < np; i++) {
    fprintf(out, "%s%s (", i ? ", " : "",
            ff_runreport_fmt_ratio(p[i].r.ratio, r, sizeof r));
    print_range(out, p[i].r.lo, p[i].r.hi);
    fprintf(out, "%s) with %s",
            p[i].r.judgement == FF_RR_NOISE ? "; no clear difference" : "",
            pair_with(rr, p[i].cj, key, with, sizeof with));
  }
  fputc('\n', out);
  free(p);
  return 0;
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
            "- %s=%s vs %s=%s (%zu pair%s of configs differing only in "
            "it):\n",
            name, values[v], name, base, npairs, npairs == 1 ? "" : "s");
    for (size_t e = 0; e < n; e++) {
      const struct ff_rr_effect *f = &fx[e];

      if (f->judgement == FF_RR_CLEAR) {
        fprintf(out, "    %s %s (", f->workload,
                ff_runreport_fmt_ratio(f->ratio, r, sizeof r));
        print_range(out, f->lo, f->hi);
        if (f->npairs > 1)
          fprintf(out, ": the widest of %zu pairs, each clear", f->npairs);
        if (f->npairs != npairs)
          fprintf(out, "; %zu pair%s", f->npairs, f->npairs == 1 ? "" : "s");
        fputs(")\n", out);
      }
    }
    for (size_t e = 0; e < n; e++)
      if ((fx[e].judgement == FF_RR_INTERACTION ||
           fx[e].judgement == FF_RR_MIXED) &&
          print_per_pair(rr, key, values[v], &fx[e], out) < 0) {
        free(fx);
        free(values);
        return -1;
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
  case FF_RR_NOISE:
    fprintf(out, "- %s = %s %s in config %lld (", ev->name, t, dir->name,
            c->id);
    if (r->nruns_a == r->nruns_b)
      fprintf(out, "%zu repetitions each, ", r->nruns_a);
    else
      fprintf(out, "%zu and %zu repetitions, ", r->nruns_a, r->nruns_b);
    print_range(out, r->lo, r->hi);
    fprintf(out, ")%s\n",
            r->judgement == FF_RR_NOISE ? ": no clear difference" : "");
    break;
  case FF_RR_FAILED:
    fprintf(out, "- %s = %s %s in config %lld (a run failed: not judged)\n",
            ev->name, t, dir->name, c->id);
    break;
  default:
    fprintf(out,
            "- %s = %s %s in config %lld (%zu and %zu repetitions: too "
            "few for a 95%% interval, not judged)\n",
            ev->name, t, dir->name, c->id, r->nruns_a, r->nruns_b);
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
    fputs("verdict (ratios of wall times: the Hodges-Lehmann estimate "
          "from the repetitions with its 95% confidence interval, "
          "Mann-Whitney; an interval holding 1 is no clear difference; "
          "fewer than 4 repetitions a side are not judged):\n",
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
  case FF_RR_TOO_FEW:
    return "too-few";
  case FF_RR_MIXED:
    return "mixed";
  case FF_RR_INTERACTION:
    return "interaction";
  default:
    return "failed";
  }
}

/* {"ratio", "low", "high", "confidence", "judgement"} of r, into o:
 * low and high are null when the ratio has no interval. */
static int
ratio_members(json_t *o, const struct ff_rr_ratio *r)
{
  bool ci = r->judgement == FF_RR_CLEAR || r->judgement == FF_RR_NOISE ||
            (r->judgement == FF_RR_FAILED && r->confidence > 0);

  return json_object_set_new(o, "ratio", json_real(r->ratio)) |
         json_object_set_new(o, "low", ci ? json_real(r->lo) : json_null()) |
         json_object_set_new(o, "high", ci ? json_real(r->hi) : json_null()) |
         json_object_set_new(o, "confidence",
                             ci ? json_real(r->confidence) : json_null()) |
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
    if (o)
      json_object_set_new(o, "compares",
                          json_sprintf("%s vs %s in config %lld (%s)",
                                       ev->name, dir->name, c->id, c->label));
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
  struct pair *p = calloc(rr->nconfigs + 1, sizeof *p);
  long np = p ? effect_pairs(rr, key, value, base, name, p) : -1;
  char with[256];

  for (long i = 0; a && i < np; i++) {
    json_t *o = json_pack(
      "{s:I, s:s, s:I, s:s, s:s}", "config", (json_int_t)p[i].cj->id, "label",
      p[i].cj->label, "base_config", (json_int_t)p[i].ci->id, "base_label",
      p[i].ci->label, "with", pair_with(rr, p[i].cj, key, with, sizeof with));

    if (!o || ratio_members(o, &p[i].r) || json_array_append_new(a, o)) {
      json_decref(a);
      a = NULL;
    }
  }
  if (np < 0) {
    json_decref(a);
    a = NULL;
  }
  free(p);
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
  if (o)
    json_object_set_new(o, "compares",
                        json_sprintf("%s=%s vs %s=%s", key, value, key, base));
  if (!o || !effects || json_object_set(o, "effects", effects)) {
    json_decref(o);
    o = NULL;
  }
  for (size_t e = 0; o && e < n; e++) {
    const struct ff_rr_effect *f = &fx[e];
    json_t *x =
      json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:o*}", "workload",
                f->workload, "ratio", f->ratio, "low", f->lo, "high", f->hi,
                "pair_ratio_min", f->rmin, "pair_ratio_max", f->rmax,
                "judgement", ff_runreport_judgement_name(f->judgement),
                "pairs", pairs_json(rr, key, value, base, f->workload));

    if (x && f->judgement == FF_RR_TOO_FEW)
      json_object_set_new(x, "low", json_null()),
        json_object_set_new(x, "high", json_null());
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
