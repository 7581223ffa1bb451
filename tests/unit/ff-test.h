/* fusefarm unit tests: shared includes and helpers.  Every assertion that
 * checks a call into the core prints the core's last error on failure. */
#ifndef FF_TEST_H
#define FF_TEST_H

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ff-error.h"

#define assert_ok(expr)                                                       \
  do {                                                                        \
    if ((expr) < 0)                                                           \
      fail_msg("%s failed: %s", #expr, ff_errmsg());                          \
  } while (0)

#define assert_nonnull_err(ptr)                                               \
  do {                                                                        \
    if (!(ptr))                                                               \
      fail_msg("%s is NULL: %s", #ptr, ff_errmsg());                          \
  } while (0)

/* The source tree: $FF_SOURCE_DIR (ctest sets it), else the tree this
 * file was compiled from. */
static inline const char *
ff_test_srcdir(void)
{
  static char buf[4096];
  const char *s = getenv("FF_SOURCE_DIR");
  char *p;

  if (s && *s)
    return s;
  snprintf(buf, sizeof buf, "%s", __FILE__);
  p = strstr(buf, "/tests/unit/");
  if (p)
    *p = '\0';
  return buf;
}

/* A test group's scratch directory: dir (n bytes) becomes a new
 * ${TMPDIR:-/tmp}/ff-test-NAME.XXXXXX (the suite's TMPDIR is the scope
 * its leftover check watches).  0 or -1 with a message on stderr. */
static inline int
ff_test_mkscratch(char *dir, size_t n, const char *name)
{
  const char *t = getenv("TMPDIR");

  if ((size_t)snprintf(dir, n, "%s/ff-test-%s.XXXXXX", t && *t ? t : "/tmp",
                       name) >= n ||
      !mkdtemp(dir)) {
    fprintf(stderr, "scratch dir %s: %m\n", dir);
    return -1;
  }
  return 0;
}

static inline int
ff_test_rm_entry(const char *path, const struct stat *st, int flag,
                 struct FTW *ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* Remove a scratch directory and everything under it (no shell, no
 * following of symlinks).  0 or -1. */
static inline int
ff_test_rmtree(const char *dir)
{
  return nftw(dir, ff_test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Build a farm from spec text, failing the test with the core's message
 * when the spec or the farm is rejected. */
#ifdef FF_FARM_H
static inline struct ff_farm *
ff_test_farm(const char *text)
{
  struct ff_spec *sp = ff_spec_load_string(text, "test");
  struct ff_farm *farm;

  assert_nonnull_err(sp);
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  assert_nonnull_err(farm);
  return farm;
}

/* A spec the core must refuse, and two parts of the message it must
 * give (the place, then the words). */
struct ff_test_bad {
  const char *text, *want1, *want2;
};

/* Each of bad[n] must be refused: by the parser (in_farm 0), or parsed
 * and then refused by ff_farm_new (in_farm 1). */
static inline void
ff_test_refused(const struct ff_test_bad *bad, size_t n, int in_farm)
{
  for (size_t i = 0; i < n; i++) {
    struct ff_spec *sp = ff_spec_load_string(bad[i].text, "t");
    struct ff_farm *farm = NULL;

    if (in_farm && !sp)
      fail_msg("farm spec %zu rejected by the parser: %s", i, ff_errmsg());
    if (in_farm) {
      farm = ff_farm_new(sp);
      ff_spec_free(sp);
    }
    if (sp && !in_farm)
      fail_msg("spec %zu was accepted: %s", i, bad[i].text);
    if (farm)
      fail_msg("farm spec %zu was accepted: %s", i, bad[i].text);
    if (!strstr(ff_errmsg(), bad[i].want1) ||
        !strstr(ff_errmsg(), bad[i].want2))
      fail_msg("%sspec %zu: message \"%s\" lacks \"%s\" or \"%s\"",
               in_farm ? "farm " : "", i, ff_errmsg(), bad[i].want1,
               bad[i].want2);
  }
}
#endif

/* LV or sub-LV name of vg (failing the test when there is none). */
#ifdef FF_FARM_INT_H
static inline const struct ff_lv *
ff_test_lv(const struct ff_vg *vg, const char *name)
{
  for (uint32_t l = 0; l < vg->nlvs; l++) {
    if (!strcmp(vg->lvs[l].name, name))
      return &vg->lvs[l];
    for (uint32_t u = 0; u < vg->lvs[l].nsubs; u++)
      if (!strcmp(vg->lvs[l].subs[u].name, name))
        return &vg->lvs[l].subs[u];
  }
  fail_msg("no LV %s", name);
  return NULL;
}
#endif

#endif
