/* fusefarm: a set of folded stacks drawn as an SVG flame graph, plain or
 * coloured by the change from another set (ff-flame.h).
 *
 * Written as SVG text, not through cairo (ff-report.c): every frame
 * carries a <title>, the tooltip a browser shows and its find-in-page
 * can reach, which cairo's SVG surface cannot write.  The font is the
 * charts' family in its monospace cut, so a label's width is known
 * without measuring (DejaVu Sans Mono: 0.602 em a character); text is
 * escaped as the JUnit report escapes it (ff_junit_escape).  No
 * threads.
 */
#include "ff-flame-int.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-junit.h" /* ff_junit_escape */

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH   1200.0
#define PAD     10.0
#define FRAME_H 16.0
#define FONT    "DejaVu Sans Mono, monospace"
#define FONT_PX 11.0
#define CHAR_W  (0.602 * FONT_PX)
#define HEAD_H  64.0 /* title, subtitle, legend */
#define FOOT_H  24.0
#define MIN_W   0.1 /* narrower frames are left out */

#define C_ROOT 0xc8c8c8

struct node {
  const char *name; /* into a stack of the set */
  size_t len;
  uint64_t value; /* samples with this frame (and the path to it) */
  struct node *kids;
  size_t nkids, cap;
};

static void
node_free(struct node *n)
{
  for (size_t i = 0; i < n->nkids; i++)
    node_free(&n->kids[i]);
  free(n->kids);
}

static int
by_name(const void *x, const void *y)
{
  const struct node *a = x, *b = y;
  int c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);

  return c ? c : (a->len > b->len) - (a->len < b->len);
}

static void
node_sort(struct node *n, unsigned level, unsigned *depth)
{
  if (level + 1 > *depth)
    *depth = level + 1;
  if (n->nkids > 1) /* a leaf's kids may be NULL: qsort's base must not be */
    qsort(n->kids, n->nkids, sizeof *n->kids, by_name);
  for (size_t i = 0; i < n->nkids; i++)
    node_sort(&n->kids[i], level + 1, depth);
}

/* The tree of fl's stacks under a root "all"; depth: its levels. */
static int
build(const struct ff_flame *fl, struct node *root, unsigned *depth)
{
  memset(root, 0, sizeof *root);
  root->name = "all";
  root->len = 3;
  for (size_t i = 0; i < fl->stacks.n; i++) {
    const char *st = fl->stacks.keys[i];
    struct node *at = root;

    root->value += fl->counts[i];
    for (const char *b = st; *b;) {
      size_t n = strcspn(b, ";");
      struct node *k = NULL;

      /* Stacks with a common prefix are often consecutive: the last
       * child first. */
      for (size_t j = at->nkids; j-- > 0;)
        if (at->kids[j].len == n && !memcmp(at->kids[j].name, b, n)) {
          k = &at->kids[j];
          break;
        }
      if (!k) {
        if (at->nkids == at->cap) {
          size_t cap = at->cap ? at->cap * 2 : 4;
          struct node *m = realloc(at->kids, cap * sizeof *m);

          if (!m) {
            node_free(root);
            return ff_error("out of memory");
          }
          at->kids = m;
          at->cap = cap;
        }
        k = &at->kids[at->nkids++];
        memset(k, 0, sizeof *k);
        k->name = b;
        k->len = n;
      }
      k->value += fl->counts[i];
      at = k;
      b += n;
      if (*b == ';')
        b++;
    }
  }
  *depth = 0;
  node_sort(root, 0, depth);
  return 0;
}

static const struct node *
find_kid(const struct node *n, const struct node *like)
{
  /* a leaf has no kids array: bsearch's base must not be NULL */
  return n && n->nkids
           ? bsearch(like, n->kids, n->nkids, sizeof *n->kids, by_name)
           : NULL;
}

/* A number in [0, 1) from the name: the shade of a frame, the same in
 * every graph. */
static double
name_hash(const char *s, size_t n, unsigned salt)
{
  uint32_t h = 2166136261u ^ salt;

  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  h ^= h >> 15;
  h *= 0x2c1b3c6d;
  h ^= h >> 12;
  return (h & 0xffff) / 65536.0;
}

static uint32_t
rgb3(double r, double g, double b)
{
  return (uint32_t)lround(r) << 16 | (uint32_t)lround(g) << 8 |
         (uint32_t)lround(b);
}

static uint32_t
kind_colour(char kind, const char *s, size_t n)
{
  double v1 = name_hash(s, n, 1), v2 = name_hash(s, n, 2);

  switch (kind) {
  case 'k': /* kernel: amber */
    return rgb3(235 + 20 * v1, 150 + 45 * v2, 30 + 30 * v1);
  case 'f': /* the farm: green */
    return rgb3(80 + 40 * v2, 170 + 40 * v1, 80 + 40 * v2);
  default: /* user: lvm and its libraries, fio: red */
    return rgb3(205 + 40 * v1, 70 + 50 * v2, 70 + 35 * v2);
  }
}

/* White at no change, red (grew) or blue (shrank) at the largest. */
static uint32_t
delta_colour(double d, double max)
{
  double t = max > 0 ? fabs(d) / max : 0, c = 255 - 200 * (t > 1 ? 1 : t);

  return d > 0 ? rgb3(255, c, c) : d < 0 ? rgb3(c, c, 255) : 0xffffff;
}

struct draw {
  FILE *out;
  const struct node *root, *base_root;
  const char *unit; /* "samples", "us" */
  double scale;     /* pixels per sample */
  double base_total;
  double max_delta;
  unsigned depth;
  struct ff_flame_svg_info info;
  int oom;
};

static void
put_escaped(struct draw *d, const char *s)
{
  char *e = ff_junit_escape(s, 0);

  if (!e) {
    d->oom = 1;
    return;
  }
  fputs(e, d->out);
  free(e);
}

static double
share(uint64_t v, uint64_t total)
{
  return total ? (double)v / (double)total : 0;
}

/* The largest change of share over the tree (level 0: the root, which
 * never changes). */
static void
scan_delta(struct draw *d, const struct node *n, const struct node *b)
{
  double dv = share(n->value, d->root->value) -
              (b ? (double)b->value / d->base_total : 0);

  if (fabs(dv) > d->max_delta)
    d->max_delta = fabs(dv);
  for (size_t i = 0; i < n->nkids; i++)
    scan_delta(d, &n->kids[i], find_kid(b, &n->kids[i]));
}

static const char *
kind_word(unsigned level, char kind)
{
  return !level        ? "all"
         : kind == 'k' ? "kernel"
         : kind == 'f' ? "farm"
                       : "user";
}

static void
frame(struct draw *d, const struct node *n, const struct node *b,
      unsigned level, double x)
{
  double w = (double)n->value * d->scale;
  double y = HEAD_H + (d->depth - 1 - level) * FRAME_H;
  char name[1024], label[1200];
  char kind = level ? ff_flame_frame_kind(n->name, n->len) : 'u';
  uint32_t fill;
  double pct = 100 * share(n->value, d->root->value);

  if (w < MIN_W) {
    d->info.hidden++;
    return;
  }
  d->info.frames++;
  ff_flame_frame_name(n->name, n->len, name, sizeof name);
  if (d->base_root) {
    double was = b ? (double)b->value / d->base_total : 0;

    fill = delta_colour(share(n->value, d->root->value) - was, d->max_delta);
    snprintf(label, sizeof label,
             "%s (%s): %" PRIu64 " %s, %.2f%% (before: %.2f%%, "
             "%+.2f points)",
             name, kind_word(level, kind), n->value, d->unit, pct, 100 * was,
             pct - 100 * was);
  } else {
    fill = level ? kind_colour(kind, n->name, n->len) : C_ROOT;
    snprintf(label, sizeof label, "%s (%s): %" PRIu64 " %s, %.2f%%", name,
             kind_word(level, kind), n->value, d->unit, pct);
  }
  fputs("<g class=\"f\"><title>", d->out);
  put_escaped(d, label);
  fprintf(d->out,
          "</title><rect class=\"f\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
          "height=\"%.1f\" fill=\"#%06x\" rx=\"2\"/>",
          x, y, w, FRAME_H - 1, fill);
  if (w > 3 * CHAR_W + 6) {
    size_t fit = (size_t)((w - 6) / CHAR_W), len = strlen(name);

    if (len > fit) {
      /* Cut on a character boundary: no UTF-8 sequence split. */
      size_t cut = fit - 2;

      while (cut > 0 && ((unsigned char)name[cut] & 0xC0) == 0x80)
        cut--;
      memcpy(name + cut, "..", 3);
    }
    fprintf(d->out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
    put_escaped(d, name);
    fputs("</text>", d->out);
  }
  fputs("</g>\n", d->out);
  for (size_t i = 0; i < n->nkids; i++) {
    frame(d, &n->kids[i], find_kid(b, &n->kids[i]), level + 1, x);
    x += (double)n->kids[i].value * d->scale;
  }
}

static void
legend(struct draw *d, double x, double y, uint32_t c, const char *s)
{
  fprintf(d->out,
          "<rect class=\"k\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
          "fill=\"#%06x\" stroke=\"#888\" stroke-width=\"0.5\"/>"
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">",
          x, y - 10, c, x + 16, y);
  put_escaped(d, s);
  fputs("</text>\n", d->out);
}

int
ff_flame_svg(const struct ff_flame *fl, const struct ff_flame *base,
             const char *title, FILE *out, struct ff_flame_svg_info *info)
{
  struct node root, broot = {0};
  struct draw d = {.out = out, .unit = ff_flame_unit(fl)};
  unsigned bdepth = 0;
  double h;

  if (build(fl, &root, &d.depth) < 0)
    return -1;
  if (base && build(base, &broot, &bdepth) < 0) {
    node_free(&root);
    return -1;
  }
  d.root = &root;
  d.base_root = base ? &broot : NULL;
  d.base_total = broot.value ? (double)broot.value : 1;
  d.scale = root.value ? (WIDTH - 2 * PAD) / (double)root.value : 0;
  if (base)
    scan_delta(&d, &root, &broot);
  h = HEAD_H + d.depth * FRAME_H + FOOT_H;
  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\" "
          "font-size=\"%.0f\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
          "<text x=\"%.0f\" y=\"20\" font-size=\"15\" "
          "text-anchor=\"middle\">",
          WIDTH, h, WIDTH, h, FONT, FONT_PX, WIDTH / 2);
  put_escaped(&d, title);
  fprintf(out,
          "</text>\n<text x=\"%.0f\" y=\"38\" font-size=\"12\" "
          "text-anchor=\"middle\" fill=\"#444444\">%" PRIu64
          " %s%s; a frame's width is its share of them; hover a frame "
          "for its numbers</text>\n",
          WIDTH / 2, root.value,
          fl->unit && !strcmp(fl->unit, "us") ? "microseconds blocked"
                                              : ff_flame_unit(fl),
          base ? ", each side over its own total" : "");
  if (base) {
    char s[160];

    snprintf(s, sizeof s, "grew (deepest red: +%.2f points)",
             100 * d.max_delta);
    legend(&d, PAD, 58, delta_colour(1, 1), s);
    snprintf(s, sizeof s, "shrank (deepest blue: -%.2f points)",
             100 * d.max_delta);
    legend(&d, PAD + 300, 58, delta_colour(-1, 1), s);
    legend(&d, PAD + 600, 58, 0xffffff, "the same");
  } else {
    legend(&d, PAD, 58, kind_colour('u', "", 0),
           "user: lvm and its libraries");
    legend(&d, PAD + 260, 58, kind_colour('k', "", 0), "kernel");
    legend(&d, PAD + 360, 58, kind_colour('f', "", 0),
           "farm: fusefarm daemon");
  }
  if (root.value)
    frame(&d, &root, base ? &broot : NULL, 0, PAD);
  fprintf(out,
          "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#444444\">"
          "%zu frames drawn, %zu narrower than %.1f px left out</text>\n"
          "</svg>\n",
          PAD, h - 8, d.info.frames, d.info.hidden, MIN_W);
  node_free(&root);
  node_free(&broot);
  d.info.depth = d.depth;
  d.info.max_delta = d.max_delta;
  if (info)
    *info = d.info;
  if (d.oom)
    return ff_error("out of memory");
  if (fflush(out) == EOF || ferror(out))
    return ff_error("write flame graph: %m");
  return 0;
}

int
ff_flame_svg_file(const struct ff_flame *fl, const struct ff_flame *base,
                  const char *title, const char *path,
                  struct ff_flame_svg_info *info)
{
  FILE *f = ff_fopen_write(path, "w");
  int rc;

  if (!f)
    return -1;
  rc = ff_flame_svg(fl, base, title, f, info);
  if (fclose(f) == EOF && !rc)
    rc = ff_error("close %s: %m", path);
  if (rc)
    ff_error_prefix("%s: ", path);
  return rc;
}
