/* fusefarm: what ff-flame.c, ff-flame-off.c and ff-flame-svg.c share
 * (ff-flame.h): the set's layout, its string map and the pieces of the
 * `perf script` reader.  Internal to runner/ and its tests.  No threads.
 */
#ifndef FF_FLAME_INT_H
#define FF_FLAME_INT_H

#include "ff-flame.h"
#include "ff-util.h" /* struct ff_sb */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
  const char *unit; /* what a count is ("samples" when NULL); static */
};

/* Add n to stack[0..len) (checked: no empty frame); 0 or -1. */
int ff_flame_add_n(struct ff_flame *fl, const char *stack, size_t len,
                   uint64_t n);

/* pid -> the pid that forked it, from perf's fork events. */
struct ff_flame_pids {
  pid_t *key, *val;
  size_t cap, n;
};
int ff_flame_pid_set(struct ff_flame_pids *m, pid_t k, pid_t v);
pid_t ff_flame_pid_get(const struct ff_flame_pids *m, pid_t k); /* 0: none */
void ff_flame_pids_free(struct ff_flame_pids *m);

/* Whether flt keeps process pid (parents: what forked what); *farm set
 * when it is the farm's. */
bool ff_flame_keeps(const struct ff_flame_filter *flt,
                    const struct ff_flame_pids *parents, pid_t pid,
                    bool *farm);

/* One event of `perf script` text being read: its comm and frames. */
struct ff_flame_sample {
  bool open, keep, farm;
  struct ff_sb comm;
  struct ff_sb frames; /* each frame, '\0'-terminated, leaf first */
  size_t nframes;
};

/* Append a frame line ("  ffffffff8163d350 get_page_from_freelist
 * ([kernel.kallsyms])") to s->frames; -1 when it is none. */
int ff_flame_parse_frame(struct ff_flame_sample *s, const char *line);
/* s as a folded stack (comm, "_[f]" when the farm's, frames root
 * first) appended to st; 0 or -1 (out of memory). */
int ff_flame_sample_stack(const struct ff_flame_sample *s, struct ff_sb *st);
/* Append text to sb with ';' and control characters replaced. */
void ff_flame_add_clean(struct ff_sb *sb, const char *s, size_t n);
/* The last token of line that is PID/TID: its start, *pid set; NULL if
 * none.  Either may be -1: perf 6.1 writes "3060/-1" (and the comm
 * ":-1") for a sample whose thread it knew no name for. */
const char *ff_flame_pid_tid(const char *line, pid_t *pid);

/* The stacks' indices in byte order of the stacks (malloc'd), or NULL
 * with ff_error. */
size_t *ff_flame_order(const struct ff_flame *fl);

#endif
