/* fusefarm unit tests: seeded lognormal timing data (ff-fakenoise.h). */
#include "ff-fakenoise.h"

#include <math.h>

double
ff_fakenoise_uniform(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  /* 53 bits, never 0 */
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

void
ff_fakenoise_lognormal(uint64_t *state, double t, double sigma, double *v,
                       size_t n)
{
  for (size_t i = 0; i < n; i++) {
    double u1 = ff_fakenoise_uniform(state), u2 = ff_fakenoise_uniform(state);
    double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);

    v[i] = t * exp(sigma * z);
  }
}
