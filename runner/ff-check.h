/* fusefarm: checking a scenario before anything runs (`fusefarm run`,
 * `fusefarm run --check`, `fusefarm check SCENARIO`).
 *
 * The pure parts live here so that they can be unit-tested: the lvm.conf
 * keys an lvm build lists (`lvm config --type list`), a suggestion for a
 * key it does not list, and the number of commands a workload times.
 * fusefarm/run-check.c puts them together with the lvm builds, the farm
 * and the profiles.
 *
 * Ownership: a struct ff_lvm_keys owns its strings; ff_lvm_keys_free()
 * releases them.  Errors: -1 after ff_error().
 */
#ifndef FF_CHECK_H
#define FF_CHECK_H

#include "ff-scenario.h"

#include <stddef.h>
#include <stdint.h>

/* The lvm.conf settings one build knows, "section/name" each, sorted. */
struct ff_lvm_keys {
  char **v;
  size_t n;
};

/* The keys in text, the output of `lvm config --type list`: one
 * "section/name" a line (lines of another form, such as a warning, are
 * skipped; a deeper path keeps its first two components).  An empty
 * list is not an error: out->n is 0.  0 or -1 (out of memory). */
int ff_lvm_keys_parse(const char *text, struct ff_lvm_keys *out);

/* Run `LVM config --type list` (with --showdeprecated --showunsupported,
 * else without them, for builds that lack those options) with
 * LVM_SYSTEM_DIR set to the empty directory tmpdir and parse its keys.
 * 1: listed; 0: the build cannot list its keys (an old lvm: its config
 * command has no --type list, or it printed no key); -1: error. */
int ff_lvm_keys_list(const char *lvm, const char *tmpdir,
                     struct ff_lvm_keys *out);

/* 1 if keys has key ("section/name"). */
int ff_lvm_keys_has(const struct ff_lvm_keys *keys, const char *key);

/* A known key close to key, for "did you mean ...?": the nearest one
 * within edit distance 2 (ties: the first in order), else one of the
 * same name in another section; NULL when there is none.  Points into
 * keys. */
const char *ff_lvm_key_suggest(const struct ff_lvm_keys *keys,
                               const char *key);

void ff_lvm_keys_free(struct ff_lvm_keys *keys);

/* Levenshtein distance between a and b, counting at most to limit (a
 * larger distance returns limit + 1). */
unsigned ff_edit_distance(const char *a, const char *b, unsigned limit);

/* The commands one workload times in one configuration: repeat (auto:
 * its first FF_PLAN_MIN_ROUNDS rounds, the fewest it runs) times
 * its commands per repetition (event-activation: one pvscan per device
 * and one vgchange per VG, ndevs + nvgs; lvchange: count; every other
 * workload: 1). */
uint64_t ff_workload_ncommands(const struct ff_workload *w, uint64_t ndevs,
                               uint64_t nvgs);

#endif
