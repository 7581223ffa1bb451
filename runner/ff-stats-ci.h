/* fusefarm: how much two sets of repetitions differ, with the
 * uncertainty the repetitions allow (docs/report.md "The verdict").
 *
 * METHOD
 *
 * The ratio of a's times to b's is estimated on log times, where a
 * constant factor is a shift: the Hodges-Lehmann estimate (the median of
 * the na * nb differences log a_i - log b_j), and its 95% confidence
 * interval from the Mann-Whitney (Wilcoxon rank-sum) test inverted
 * (Hollander & Wolfe, "Nonparametric Statistical Methods", 4.3): the
 * k-th smallest and k-th largest of those differences, k the largest
 * with P(U < k) <= 2.5% under the exact null distribution of U (the
 * number of ways, Gaussian binomial coefficients; a normal approximation
 * when na * nb > 2500).  Distribution-free: the interval covers the true
 * ratio at least 95% of the time whenever a's times are b's times scaled
 * by it (any noise, same shape), and it needs no random numbers: the
 * same times always give the same interval.
 *
 * The smallest k is 1 (the extremes), whose coverage is 1 - 2 /
 * C(na + nb, na); that is 95% or more only when C(na + nb, na) >= 40:
 * 4 repetitions a side (or 3 and 5, 2 and 10).  Fewer: not judged.
 *
 * No threads, no global state. */
#ifndef FF_STATS_CI_H
#define FF_STATS_CI_H

#include <stdbool.h>
#include <stddef.h>

/* The interval's nominal level. */
#define FF_CI_LEVEL 0.95

struct ff_ci {
  bool judged;       /* enough repetitions for a 95% interval */
  double ratio;      /* the Hodges-Lehmann ratio a / b (always set) */
  double lo, hi;     /* its 95% interval (judged only; else ratio) */
  double confidence; /* the interval's exact level (>= 0.95; judged only) */
};

/* Whether na and nb repetitions are enough: C(na + nb, na) >= 40. */
bool ff_ci_enough(size_t na, size_t nb);

/* The ratio of a[0..na) to b[0..nb) with its interval into *out.  -1
 * with ff_error when a side is empty, a time is not above 0 (no log) or
 * memory runs out. */
int ff_ci_ratio(const double *a, size_t na, const double *b, size_t nb,
                struct ff_ci *out);

/* P(U <= u) for the Mann-Whitney U of samples of na and nb with no ties
 * (exact up to na * nb = 2500, a normal approximation beyond).  NAN on
 * allocation failure. */
double ff_ci_mw_cdf(size_t na, size_t nb, size_t u);

#endif
