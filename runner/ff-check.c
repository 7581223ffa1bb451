/* fusefarm: checking a scenario before anything runs (see ff-check.h). */
#include "ff-check.h"
#include "ff-error.h"
#include "ff-plan.h"
#include "ff-spawn.h"
#include "ff-util.h"
#include "ff-workload.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 if s[0..n) is a key component: lowercase letters, digits, '_'. */
static int
component(const char *s, size_t n)
{
  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
          s[i] == '_'))
      return 0;
  return 1;
}

int
ff_lvm_keys_parse(const char *text, struct ff_lvm_keys *out)
{
  size_t cap = 0;

  out->v = NULL;
  out->n = 0;
  for (const char *p = text; *p;) {
    size_t len = strcspn(p, "\n"), s1 = strcspn(p, "/\n"), s2;
    char **nv;

    if (s1 < len && component(p, s1)) {
      s2 = s1 + 1 + strcspn(p + s1 + 1, "/\n");
      if (s2 > len)
        s2 = len;
      /* "section/name", or the first two components of a deeper one */
      if ((s2 == len || p[s2] == '/') && component(p + s1 + 1, s2 - s1 - 1)) {
        if (out->n == cap) {
          cap = cap ? 2 * cap : 256;
          nv = realloc(out->v, cap * sizeof *nv);
          if (!nv)
            goto oom;
          out->v = nv;
        }
        if (!(out->v[out->n] = strndup(p, s2)))
          goto oom;
        out->n++;
      }
    }
    p += len + (p[len] == '\n');
  }
  if (out->n)
    qsort(out->v, out->n, sizeof *out->v, cmp_str);
  /* drop duplicates (deeper paths share their first two components) */
  {
    size_t k = 0;

    for (size_t i = 0; i < out->n; i++) {
      if (k && !strcmp(out->v[i], out->v[k - 1]))
        free(out->v[i]);
      else
        out->v[k++] = out->v[i];
    }
    out->n = k;
  }
  return 0;
oom:
  ff_lvm_keys_free(out);
  return ff_error("out of memory");
}

int
ff_lvm_keys_list(const char *lvm, const char *tmpdir, struct ff_lvm_keys *out)
{
  static const char *const flags[][3] = {
    {"--showdeprecated", "--showunsupported", NULL}, {NULL, NULL, NULL}};
  const char *env[] = {"LVM_SYSTEM_DIR", tmpdir, "LVM_SUPPRESS_FD_WARNINGS",
                       "1", NULL};
  char path[PATH_MAX + 32];

  out->v = NULL;
  out->n = 0;
  ff_pathf(path, sizeof path, "%s/config-list.out", tmpdir);
  for (size_t f = 0; f < sizeof flags / sizeof *flags; f++) {
    const char *argv[] = {lvm,         "config",    "--type", "list",
                          flags[f][0], flags[f][1], NULL};
    const struct ff_spawn o = {.argv = argv, .env = env, .out = path};
    char *text;
    int st = ff_spawn_run(&o), r;

    if (st < 0)
      return -1;
    text = st == 0 ? ff_slurp(path, 1 << 22) : NULL;
    unlink(path);
    if (!text)
      continue;
    r = ff_lvm_keys_parse(text, out);
    free(text);
    if (r < 0)
      return -1;
    if (out->n)
      return 1;
  }
  return 0;
}

int
ff_lvm_keys_has(const struct ff_lvm_keys *keys, const char *key)
{
  return keys->n &&
         bsearch(&key, keys->v, keys->n, sizeof *keys->v, cmp_str) != NULL;
}

unsigned
ff_edit_distance(const char *a, const char *b, unsigned limit)
{
  size_t la = strlen(a), lb = strlen(b);
  unsigned row[128], best;

  if (lb >= sizeof row / sizeof *row || la >= sizeof row / sizeof *row)
    return strcmp(a, b) ? limit + 1 : 0;
  if ((la > lb ? la - lb : lb - la) > limit)
    return limit + 1;
  for (size_t j = 0; j <= lb; j++)
    row[j] = (unsigned)j;
  for (size_t i = 1; i <= la; i++) {
    unsigned diag = row[0];

    row[0] = (unsigned)i;
    best = row[0];
    for (size_t j = 1; j <= lb; j++) {
      unsigned up = row[j], v = diag + (a[i - 1] != b[j - 1]);

      if (up + 1 < v)
        v = up + 1;
      if (row[j - 1] + 1 < v)
        v = row[j - 1] + 1;
      diag = up;
      row[j] = v;
      if (v < best)
        best = v;
    }
    if (best > limit)
      return limit + 1;
  }
  return row[lb] > limit ? limit + 1 : row[lb];
}

const char *
ff_lvm_key_suggest(const struct ff_lvm_keys *keys, const char *key)
{
  const char *best = NULL, *name = strchr(key, '/');
  unsigned bd = 3;

  for (size_t i = 0; i < keys->n; i++) {
    unsigned d = ff_edit_distance(key, keys->v[i], 2);

    if (d < bd) {
      bd = d;
      best = keys->v[i];
    }
  }
  if (best || !name)
    return best;
  for (size_t i = 0; i < keys->n; i++) {
    const char *n = strchr(keys->v[i], '/');

    if (n && !strcmp(n, name))
      return keys->v[i];
  }
  return NULL;
}

void
ff_lvm_keys_free(struct ff_lvm_keys *keys)
{
  for (size_t i = 0; i < keys->n; i++)
    free(keys->v[i]);
  free(keys->v);
  keys->v = NULL;
  keys->n = 0;
}

uint64_t
ff_workload_ncommands(const struct ff_workload *w, uint64_t ndevs,
                      uint64_t nvgs)
{
  uint64_t per = w->type == FF_W_EVENT_ACTIVATION ? ndevs + nvgs
                 : w->type == FF_W_LVCHANGE       ? w->count
                                                  : 1;

  return per * (w->repeat_auto ? FF_PLAN_MIN_ROUNDS : w->repeat);
}
