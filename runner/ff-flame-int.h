/* fusefarm: what ff-flame.c and ff-flame-svg.c share (ff-flame.h): the
 * set's layout and its string map.  Internal to runner/ and its tests.
 * No threads.
 */
#ifndef FF_FLAME_INT_H
#define FF_FLAME_INT_H

#include "ff-flame.h"
#include "ff-util.h" /* struct ff_sb */

#include <stddef.h>
#include <stdint.h>

/* Strings -> dense indices 0..n-1 in insertion order (keys[i] owned). */
struct ff_flame_map {
  char **keys;
  size_t n, keys_cap;
  size_t *slots; /* [cap] an index, SIZE_MAX: empty */
  size_t cap;
};

/* The index of key[0..n), or -1. */
long ff_flame_map_find(const struct ff_flame_map *m, const char *key,
                       size_t n);
/* Its index, added when missing (*added 1); -1 out of memory. */
long ff_flame_map_add(struct ff_flame_map *m, const char *key, size_t n,
                      int *added);
void ff_flame_map_free(struct ff_flame_map *m);

struct ff_flame {
  struct ff_flame_map stacks;
  uint64_t *counts; /* [stacks.n] */
  size_t counts_cap;
  uint64_t seen, samples;
};

/* The stacks' indices in byte order of the stacks (malloc'd), or NULL
 * with ff_error. */
size_t *ff_flame_order(const struct ff_flame *fl);

#endif
