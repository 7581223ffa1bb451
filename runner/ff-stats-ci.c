/* fusefarm: the Hodges-Lehmann ratio and its Mann-Whitney interval
 * (ff-stats-ci.h).  No threads. */
#include "ff-stats-ci.h"
#include "ff-error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The exact distribution up to this many pairs; normal beyond. */
#define EXACT_MAX 2500

bool
ff_ci_enough(size_t na, size_t nb)
{
  double c = 1;

  /* C(na + nb, na), stopping once it reaches 40 */
  for (size_t i = 1; i <= na && c < 40; i++)
    c = c * (double)(nb + i) / (double)i;
  return na && nb && c >= 40 - 1e-9;
}

/* Counts of U = 0..m*n for samples of m and n: the coefficients of the
 * Gaussian binomial [m+n choose m]_q, by f(i,j,u) = f(i-1,j,u-j) +
 * f(i,j-1,u) (the largest of i+j values is an a or a b); rows over j
 * only, additions only.  cnt has m*n+1 entries.  -1 on allocation
 * failure. */
static int
mw_counts(size_t m, size_t n, double *cnt)
{
  size_t w = m * n + 1;
  double *prev, *cur;

  prev = calloc((n + 1) * w, sizeof *prev);
  cur = calloc((n + 1) * w, sizeof *cur);
  if (!prev || !cur) {
    free(prev);
    free(cur);
    return -1;
  }
  for (size_t j = 0; j <= n; j++)
    prev[j * w] = 1; /* i = 0: U = 0 one way */
  for (size_t i = 1; i <= m; i++) {
    double *t;

    memset(cur, 0, (n + 1) * w * sizeof *cur);
    cur[0] = 1; /* j = 0 */
    for (size_t j = 1; j <= n; j++)
      for (size_t u = 0; u <= i * j; u++)
        cur[j * w + u] = (u >= j ? prev[j * w + u - j] : 0) +
                         (u <= i * (j - 1) ? cur[(j - 1) * w + u] : 0);
    t = prev;
    prev = cur;
    cur = t;
  }
  memcpy(cnt, prev + n * w, w * sizeof *cnt);
  free(prev);
  free(cur);
  return 0;
}

/* P(U <= u) for u = 0..m*n into a new array (NULL on allocation
 * failure). */
static double *
mw_table(size_t na, size_t nb)
{
  size_t m = na < nb ? na : nb, n = na < nb ? nb : na;
  double *p = calloc(m * n + 1, sizeof *p), all = 0;

  if (!p)
    return NULL;
  if (m * n > EXACT_MAX) {
    double mu = (double)(m * n) / 2;
    double sd = sqrt((double)(m * n) * (double)(m + n + 1) / 12);

    /* continuity-corrected */
    for (size_t u = 0; u <= m * n; u++)
      p[u] = 0.5 * erfc(-((double)u + 0.5 - mu) / sd / sqrt(2));
    return p;
  }
  if (mw_counts(m, n, p) < 0) {
    free(p);
    return NULL;
  }
  for (size_t u = 0; u <= m * n; u++) {
    all += p[u];
    p[u] = all;
  }
  for (size_t u = 0; u <= m * n; u++)
    p[u] /= all;
  return p;
}

double
ff_ci_mw_cdf(size_t na, size_t nb, size_t u)
{
  double *p, v;

  if (u >= na * nb)
    return 1;
  p = mw_table(na, nb);
  if (!p)
    return NAN;
  v = p[u];
  free(p);
  return v;
}

static int
by_value(const void *pa, const void *pb)
{
  double a = *(const double *)pa, b = *(const double *)pb;

  return a < b ? -1 : a > b ? 1 : 0;
}

int
ff_ci_ratio(const double *a, size_t na, const double *b, size_t nb,
            struct ff_ci *out)
{
  size_t nd = na * nb, k = 0;
  double *d, *cdf;

  memset(out, 0, sizeof *out);
  if (!na || !nb)
    return ff_error("confidence interval: no times on one side");
  for (size_t i = 0; i < na + nb; i++)
    if (!((i < na ? a[i] : b[i - na]) > 0))
      return ff_error("confidence interval: a time of %g s has no ratio",
                      i < na ? a[i] : b[i - na]);
  d = malloc(nd * sizeof *d);
  if (!d)
    return ff_error("out of memory");
  for (size_t i = 0; i < na; i++)
    for (size_t j = 0; j < nb; j++)
      d[i * nb + j] = log(a[i]) - log(b[j]);
  qsort(d, nd, sizeof *d, by_value);
  out->ratio = exp(nd % 2 ? d[nd / 2] : (d[nd / 2 - 1] + d[nd / 2]) / 2);
  out->lo = out->hi = out->ratio;
  if (!ff_ci_enough(na, nb)) {
    free(d);
    return 0;
  }
  /* the largest k with P(U <= k - 1) <= 2.5% */
  cdf = mw_table(na, nb);
  if (!cdf) {
    free(d);
    return ff_error("out of memory");
  }
  while (k < nd / 2 && cdf[k] <= (1 - FF_CI_LEVEL) / 2)
    k++;
  if (!k) {
    free(cdf);
    free(d);
    return 0;
  }
  out->judged = true;
  out->lo = exp(d[k - 1]);
  out->hi = exp(d[nd - k]);
  out->confidence = 1 - 2 * cdf[k - 1];
  free(cdf);
  free(d);
  return 0;
}
