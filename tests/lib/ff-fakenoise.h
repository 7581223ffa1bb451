/* fusefarm unit tests: deterministic fake timing data (tests/lib/
 * ff-fakenoise.c): repetitions of a workload whose times are a true time
 * with lognormal noise, from a seeded PRNG (splitmix64 and Box-Muller),
 * so a statistical test gives the same answer on every machine. */
#ifndef FF_FAKENOISE_H
#define FF_FAKENOISE_H

#include <stddef.h>
#include <stdint.h>

/* The next uniform number in (0, 1) of the stream *state. */
double ff_fakenoise_uniform(uint64_t *state);

/* n times t * exp(sigma * Z), Z standard normal, into v. */
void ff_fakenoise_lognormal(uint64_t *state, double t, double sigma, double *v,
                            size_t n);

#endif
