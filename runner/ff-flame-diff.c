/* fusefarm: two runs' flame graphs compared (ff-flame-diff.h).  No
 * threads.
 */
#include "ff-flame-diff.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-flame.h"
#include "ff-util.h" /* ff_pathf */

#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One run document. */
struct side {
  const char *path;
  json_t *doc;
  json_t *configs, *graphs; /* borrowed from doc */
  char dir[PATH_MAX];
};

/* One workload compared. */
struct item {
  char workload[256];
  unsigned ca, cb;
  struct ff_flame *a, *b;
  struct ff_flame *oa, *ob; /* off-CPU, when both sides have it */
};

static int
load_side(struct side *s, const char *path)
{
  json_error_t jerr;
  json_t *flame, *err;

  s->path = path;
  ff_dirname(path, s->dir, sizeof s->dir);
  if (!(s->doc = json_load_file(path, 0, &jerr)))
    return ff_error("%s: %s", path, jerr.text);
  s->configs = json_object_get(s->doc, "configs");
  if (!json_is_array(s->configs))
    return ff_error("%s: not a run document (no \"configs\")", path);
  flame = json_object_get(s->doc, "flame");
  if (!flame)
    return ff_error("%s: no flame graphs (a run made without --flamegraph: "
                    "no \"flame\" member)",
                    path);
  if ((err = json_object_get(flame, "error")) && json_is_string(err))
    return ff_error("%s: %s", path, json_string_value(err));
  s->graphs = json_object_get(flame, "graphs");
  if (!json_is_array(s->graphs))
    return ff_error("%s: flame.graphs is not an array", path);
  return 0;
}

/* The positive whole number o[key], or 0. */
static unsigned
id_of(json_t *o, const char *key)
{
  json_t *id = json_object_get(o, key);

  return json_is_integer(id) && json_integer_value(id) > 0 &&
             json_integer_value(id) <= UINT_MAX
           ? (unsigned)json_integer_value(id)
           : 0;
}

static unsigned
config_id(json_t *c)
{
  return id_of(c, "id");
}

/* A graph's configuration. */
static unsigned
graph_config(json_t *g)
{
  return id_of(g, "config");
}

/* Configuration id's label ("" when it has none), or NULL: no such
 * configuration. */
static const char *
config_label(const struct side *s, unsigned id)
{
  size_t i;
  json_t *c;

  json_array_foreach(s->configs, i, c)
  {
    if (config_id(c) == id) {
      const char *l = json_string_value(json_object_get(c, "label"));

      return l ? l : "";
    }
  }
  return NULL;
}

static int
no_config(const struct side *s, unsigned id)
{
  char have[256] = "";
  size_t i, k = 0;
  json_t *c;

  json_array_foreach(s->configs, i, c)
  {
    if (k < sizeof have)
      k += (size_t)snprintf(have + k, sizeof have - k, "%s%u", k ? ", " : "",
                            config_id(c));
  }
  return ff_error("%s has no configuration %u (its configurations: %s)",
                  s->path, id, k ? have : "none");
}

/* B's graph of configuration id and workload w, or NULL. */
static json_t *
find_graph(const struct side *s, unsigned id, const char *w)
{
  size_t i;
  json_t *g;

  json_array_foreach(s->graphs, i, g)
  {
    const char *gw = json_string_value(json_object_get(g, "workload"));

    if (graph_config(g) == id && gw && !strcmp(gw, w))
      return g;
  }
  return NULL;
}

/* The folded stacks of graph g of side s (g's "offcpu" member for the
 * off-CPU ones). */
static struct ff_flame *
load_graph(const struct side *s, json_t *g, unsigned id, const char *w)
{
  const char *f = json_string_value(json_object_get(g, "folded"));
  bool off = json_object_get(g, "blocked_us") != NULL;
  char path[2 * PATH_MAX];
  struct ff_flame *fl;

  if (!f) {
    ff_error("%s: config %u, %s: the graph names no folded file", s->path, id,
             w);
    return NULL;
  }
  ff_pathf(path, sizeof path, "%s%s%s", f[0] == '/' ? "" : s->dir,
           f[0] == '/' ? "" : "/", f);
  if (!(fl = ff_flame_new()))
    return NULL;
  if (off)
    ff_flame_set_unit(fl, "us");
  if (ff_flame_load(fl, path) < 0) {
    ff_error_prefix("%s: config %u, %s%s: ", s->path, id, w,
                    off ? " (off-CPU)" : "");
    ff_flame_free(fl);
    return NULL;
  }
  return fl;
}

/* Every workload of A's configuration ca that B's cb has a graph of
 * too, appended to *items. */
static int
pair_up(const struct side *a, const struct side *b, unsigned ca, unsigned cb,
        bool named, struct item **items, size_t *n, FILE *err)
{
  size_t i, mine = 0;
  json_t *ga;

  json_array_foreach(a->graphs, i, ga)
  {
    const char *w = json_string_value(json_object_get(ga, "workload"));
    json_t *gb, *e;
    struct item *it;

    if (graph_config(ga) != ca || !w)
      continue;
    mine++;
    if (!(gb = find_graph(b, cb, w))) {
      fprintf(err,
              "fusefarm report: %s: no flame graph of config %u in %s: "
              "left out\n",
              w, cb, b->path);
      continue;
    }
    if ((e = json_object_get(ga, "error")) ||
        (e = json_object_get(gb, "error"))) {
      fprintf(err,
              "fusefarm report: %s: the flame graph of config %u in %s "
              "failed (%s): left out\n",
              w, e == json_object_get(ga, "error") ? ca : cb,
              e == json_object_get(ga, "error") ? a->path : b->path,
              json_string_value(e) ? json_string_value(e) : "?");
      continue;
    }
    it = realloc(*items, (*n + 1) * sizeof *it);
    if (!it)
      return ff_error("out of memory");
    *items = it;
    it = &it[*n];
    memset(it, 0, sizeof *it);
    ff_pathf(it->workload, sizeof it->workload, "%s", w);
    it->ca = ca;
    it->cb = cb;
    (*n)++;
    if (!(it->a = load_graph(a, ga, ca, w)) ||
        !(it->b = load_graph(b, gb, cb, w)))
      return -1;
    /* Off-CPU too, when both sides recorded it. */
    {
      json_t *oa = json_object_get(ga, "offcpu");
      json_t *ob = json_object_get(gb, "offcpu");

      if (json_is_string(json_object_get(oa, "folded")) &&
          json_is_string(json_object_get(ob, "folded")) &&
          (!(it->oa = load_graph(a, oa, ca, w)) ||
           !(it->ob = load_graph(b, ob, cb, w))))
        return -1;
    }
  }
  if (!mine && named)
    return ff_error("%s: configuration %u has no flame graph", a->path, ca);
  return 0;
}

/* A workload's name as a file name's part (as run-flame.c names the
 * run's graphs). */
static void
file_part(const char *s, char *out, size_t len)
{
  size_t k = 0;

  for (; *s && k + 1 < len; s++)
    out[k++] = isalnum((unsigned char)*s) || strchr("._-", *s) ? *s : '_';
  out[k] = '\0';
}

static const char *
base_name(const char *path)
{
  const char *s = strrchr(path, '/');

  return s ? s + 1 : path;
}

/* "config 2 (profile=ideal)", or with two documents "B.json config 2
 * (profile=ideal)". */
static void
side_name(const struct side *s, unsigned id, bool two, char *buf, size_t len)
{
  const char *l = config_label(s, id);

  ff_pathf(buf, len, "%s%sconfig %u%s%s%s", two ? base_name(s->path) : "",
           two ? " " : "", id, l && *l ? " (" : "", l ? l : "",
           l && *l ? ")" : "");
}

static int
write_all(const struct ff_flame_diff *d, const struct side *a,
          const struct side *b, struct item *items, size_t n, FILE *out)
{
  const char *dir = d->outdir ? d->outdir : ".";
  size_t top = d->top ? d->top : FF_FLAME_DIFF_TOP;
  bool two = a != b;

  if (ff_mkdir(dir, 0755) < 0)
    return -1;
  fprintf(out,
          "Flame graphs compared, B against A (A: %s, B: %s).\n"
          "Shares are inclusive: the samples with the frame name anywhere "
          "on their stack (once per sample)\nover the side's own total; "
          "change in percentage points; per workload the %zu frames\n"
          "that grew most.\n",
          a->path, b->path, top);
  for (size_t i = 0; i < n; i++) {
    struct item *it = &items[i];
    char na[1200], nb[1200], part[256], file[300], path[PATH_MAX + 320];
    char title[3000];
    struct ff_flame_svg_info info;

    side_name(a, it->ca, two, na, sizeof na);
    side_name(b, it->cb, two, nb, sizeof nb);
    file_part(it->workload, part, sizeof part);
    ff_pathf(file, sizeof file, "flame-diff-%u-%u-%s.svg", it->ca, it->cb,
             part);
    ff_pathf(path, sizeof path, "%s/%s", dir, file);
    ff_pathf(title, sizeof title, "%s: %s against %s", it->workload, nb, na);
    if (ff_flame_svg_file(it->b, it->a, title, path, &info) < 0)
      return -1;
    fprintf(out,
            "\n%s: A %s, %llu samples; B %s, %llu samples\n"
            "  %s: widths from B, red grew, blue shrank (deepest: %.2f "
            "points)\n",
            it->workload, na, (unsigned long long)ff_flame_samples(it->a), nb,
            (unsigned long long)ff_flame_samples(it->b), path,
            100 * info.max_delta);
    if (ff_flame_print_grew(it->a, it->b, top, out) < 0)
      return -1;
    if (!it->oa || !it->ob)
      continue;
    ff_pathf(file, sizeof file, "flame-diff-off-%u-%u-%s.svg", it->ca, it->cb,
             part);
    ff_pathf(path, sizeof path, "%s/%s", dir, file);
    ff_pathf(title, sizeof title,
             "%s: %s against %s: off-CPU, microseconds blocked", it->workload,
             nb, na);
    if (ff_flame_svg_file(it->ob, it->oa, title, path, &info) < 0)
      return -1;
    fprintf(out,
            "\n%s off-CPU: A %s, %llu us blocked; B %s, %llu us blocked\n"
            "  %s: widths from B, red grew, blue shrank (deepest: %.2f "
            "points)\n",
            it->workload, na, (unsigned long long)ff_flame_samples(it->oa), nb,
            (unsigned long long)ff_flame_samples(it->ob), path,
            100 * info.max_delta);
    if (ff_flame_print_grew(it->oa, it->ob, top, out) < 0)
      return -1;
  }
  if (fflush(out) == EOF || ferror(out))
    return ff_error("write: %m");
  return 0;
}

int
ff_flame_diff_runs(const struct ff_flame_diff *d, FILE *out, FILE *err)
{
  struct side sa = {0}, sb = {0}, *a = &sa, *b = &sb;
  struct item *items = NULL;
  size_t n = 0;
  int rc = FF_FLAME_DIFF_BAD;
  bool named = d->a_config || d->b_config;

  if (load_side(a, d->a) < 0)
    goto out;
  if (!d->b || !strcmp(d->b, d->a))
    b = a;
  else if (load_side(b, d->b) < 0)
    goto out;
  if (named) {
    if (!config_label(a, d->a_config)) {
      no_config(a, d->a_config);
      goto out;
    }
    if (!config_label(b, d->b_config)) {
      no_config(b, d->b_config);
      goto out;
    }
    if (pair_up(a, b, d->a_config, d->b_config, true, &items, &n, err) < 0)
      goto out;
  } else {
    size_t i;
    json_t *c;

    json_array_foreach(a->configs, i, c)
    {
      unsigned id = config_id(c);

      if (id && config_label(b, id) &&
          pair_up(a, b, id, id, false, &items, &n, err) < 0)
        goto out;
    }
  }
  if (!n) {
    if (named)
      ff_error("no workload has a flame graph in both config %u of %s and "
               "config %u of %s",
               d->a_config, a->path, d->b_config, b->path);
    else
      ff_error("no workload has a flame graph in the same configuration of "
               "%s and %s",
               a->path, b->path);
    goto out;
  }
  rc = write_all(d, a, b, items, n, out) < 0 ? FF_FLAME_DIFF_WRITE
                                             : FF_FLAME_DIFF_OK;
out:
  for (size_t i = 0; i < n; i++) {
    ff_flame_free(items[i].a);
    ff_flame_free(items[i].b);
    ff_flame_free(items[i].oa);
    ff_flame_free(items[i].ob);
  }
  free(items);
  json_decref(sa.doc);
  json_decref(sb.doc);
  return rc;
}
