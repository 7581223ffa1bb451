/* fusefarm: render a run document: the runner's API (ff-report.h) and
 * the SVG charts, drawn with cairo's SVG surface.  The text and CSV come
 * from the core (ff-runreport.h); docs/report.md shows every output.
 *
 * The charts use fixed colours (listed in docs/report.md, and checked by
 * tests/integration/test-report.sh, which counts the bars and text runs
 * of each colour in the SVG): one per workload for the bars, and a text
 * colour per kind of label.  No threads.
 */
#include "ff-report.h"
#include "ff-report-int.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-runreport.h"
#include "ff-workload.h" /* ff_median */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cairo-svg.h>
#include <cairo.h>

#define FONT "DejaVu Sans"

/* Bars, one colour per workload in the order the document first names
 * them (Tableau 10 without its red, kept for failures). */
static const uint32_t palette[] = {
  0x1f77b4, 0xff7f0e, 0x2ca02c, 0x9467bd, 0x8c564b,
  0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf,
};
#define NPALETTE (sizeof palette / sizeof *palette)

#define C_FAILED   0xd62728 /* failed runs (outline), failed units (bar) */
#define C_PVSCAN   0x1f77b4
#define C_VGCHANGE 0xff7f0e
#define C_TEXT     0x000000 /* titles, legends, footers */
#define C_AXIS     0x444444 /* tick labels, axis titles, axis lines */
#define C_CONFIG   0x203060 /* config ids and the config key lines */
#define C_UNIT     0x202020 /* timeline labels */
#define C_SLOW     0x8e24aa /* timeline: marks of a slow device's rows */
#define C_SLOW_ROW 0xf3e5f5 /* timeline: the band behind such a row */
#define C_GRID     0xdddddd
#define C_WHISKER  0x333333

#ifdef __SANITIZE_ADDRESS__
/* FF_SANITIZE builds: cairo's text goes through fontconfig, which keeps
 * patterns for the process's life and leaks a few hundred bytes parsing
 * its configuration (FcInitLoadConfigAndFonts, fontconfig 2.14).  Not
 * ours to fix; LeakSanitizer reads this hook at exit and ignores leaks
 * allocated inside libfontconfig, so `fusefarm report --svg` passes
 * tests/run.sh's detect_leaks=1 and other leaks still fail it. */
const char *__lsan_default_suppressions(void);

const char *
__lsan_default_suppressions(void)
{
  return "leak:libfontconfig.so\n";
}
#endif

/* --- cairo helpers ---------------------------------------------------- */

/* An SVG file being drawn: the stream keeps errno of a failed write. */
struct svg {
  FILE *f;
  const char *path;
  int write_errno;
  cairo_surface_t *s;
  cairo_t *cr;
};

static cairo_status_t
svg_write(void *closure, const unsigned char *data, unsigned int len)
{
  struct svg *svg = closure;

  if (fwrite(data, 1, len, svg->f) != len) {
    svg->write_errno = errno ? errno : EIO;
    return CAIRO_STATUS_WRITE_ERROR;
  }
  return CAIRO_STATUS_SUCCESS;
}

static int
svg_open(struct svg *svg, const char *path, double w, double h)
{
  memset(svg, 0, sizeof *svg);
  svg->path = path;
  svg->f = ff_fopen_write(path, "w");
  if (!svg->f)
    return -1;
  svg->s = cairo_svg_surface_create_for_stream(svg_write, svg, w, h);
  /* Pixels, not points: the file then renders at w x h. */
  cairo_svg_surface_set_document_unit(svg->s, CAIRO_SVG_UNIT_PX);
  svg->cr = cairo_create(svg->s);
  if (cairo_status(svg->cr) != CAIRO_STATUS_SUCCESS) {
    ff_error("%s: cairo: %s", path,
             cairo_status_to_string(cairo_status(svg->cr)));
    cairo_destroy(svg->cr);
    cairo_surface_destroy(svg->s);
    fclose(svg->f);
    return -1;
  }
  cairo_set_source_rgb(svg->cr, 1, 1, 1);
  cairo_paint(svg->cr);
  cairo_select_font_face(svg->cr, FONT, CAIRO_FONT_SLANT_NORMAL,
                         CAIRO_FONT_WEIGHT_NORMAL);
  return 0;
}

/* Finish the file; -1 with ff_error if cairo or a write failed. */
static int
svg_close(struct svg *svg)
{
  cairo_status_t st = cairo_status(svg->cr);
  int r = 0;

  cairo_destroy(svg->cr);
  cairo_surface_finish(svg->s);
  if (st == CAIRO_STATUS_SUCCESS)
    st = cairo_surface_status(svg->s);
  cairo_surface_destroy(svg->s);
  if (svg->write_errno) {
    errno = svg->write_errno;
    r = ff_error("write %s: %m", svg->path);
  } else if (st != CAIRO_STATUS_SUCCESS) {
    r = ff_error("%s: cairo: %s", svg->path, cairo_status_to_string(st));
  }
  if (fclose(svg->f) == EOF && !r)
    r = ff_error("close %s: %m", svg->path);
  return r;
}

static void
rgb(cairo_t *cr, uint32_t c)
{
  cairo_set_source_rgb(cr, ((c >> 16) & 0xff) / 255.0,
                       ((c >> 8) & 0xff) / 255.0, (c & 0xff) / 255.0);
}

/* c with every channel scaled by f (f < 1 darkens). */
static uint32_t
shade(uint32_t c, double f)
{
  uint32_t r = (uint32_t)(((c >> 16) & 0xff) * f);
  uint32_t g = (uint32_t)(((c >> 8) & 0xff) * f);
  uint32_t b = (uint32_t)((c & 0xff) * f);

  return r << 16 | g << 8 | b;
}

/* s in t, at most 1023 bytes of it, without a last UTF-8 sequence cut
 * short: labels are cut to fit buffers (snprintf), and a cut sequence
 * would put cairo in an error state. */
static void
whole_utf8(char t[1024], const char *s)
{
  size_t n = strlen(s) < 1023 ? strlen(s) : 1023, k;

  memcpy(t, s, n);
  t[n] = '\0';
  for (k = n; k > 0 && n - k < 3 && ((unsigned char)t[k - 1] & 0xC0) == 0x80;)
    k--;
  if (k > 0 && ((unsigned char)t[k - 1] & 0xC0) == 0xC0) {
    unsigned char lead = (unsigned char)t[k - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;

    if (n - (k - 1) < need)
      t[k - 1] = '\0';
  }
}

/* A context on ms to measure text before the SVG exists, with the SVG
 * surface's metrics: unhinted (an image surface's hinted advances are
 * narrower, and a line measured there overflows the chart). */
static cairo_t *
scratch(cairo_surface_t *ms)
{
  cairo_t *mc = cairo_create(ms);
  cairo_font_options_t *o = cairo_font_options_create();

  cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style(o, CAIRO_HINT_STYLE_NONE);
  cairo_set_font_options(mc, o);
  cairo_font_options_destroy(o);
  return mc;
}

static double
text_w(cairo_t *cr, const char *s, double size, bool bold)
{
  cairo_text_extents_t e;
  char t[1024];

  whole_utf8(t, s);
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD
                              : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents(cr, t, &e);
  return e.x_advance;
}

/* One text run (one <g> of glyphs in the SVG) with its baseline at y;
 * align 0 puts x at its left, 0.5 at its middle, 1 at its right.  Empty
 * strings draw nothing (and so add no run). */
static void
text(cairo_t *cr, double x, double y, double align, double size, bool bold,
     uint32_t colour, const char *s)
{
  char t[1024];
  double w;

  whole_utf8(t, s);
  if (!*t)
    return;
  w = text_w(cr, t, size, bold);
  rgb(cr, colour);
  cairo_move_to(cr, x - align * w, y);
  cairo_show_text(cr, t);
}

/* Text turned a quarter left, starting at (x, y) and going up. */
static void
text_up(cairo_t *cr, double x, double y, double align, double size,
        uint32_t colour, const char *s)
{
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_rotate(cr, -M_PI / 2);
  text(cr, 0, 0, align, size, false, colour, s);
  cairo_restore(cr);
}

static void
fill_rect(cairo_t *cr, double x, double y, double w, double h, uint32_t c)
{
  rgb(cr, c);
  cairo_rectangle(cr, x, y, w, h);
  cairo_fill(cr);
}

static void
line(cairo_t *cr, double x0, double y0, double x1, double y1, double width,
     uint32_t c)
{
  rgb(cr, c);
  cairo_set_line_width(cr, width);
  cairo_move_to(cr, x0, y0);
  cairo_line_to(cr, x1, y1);
  cairo_stroke(cr);
}

/* A legend entry: a 12 x 12 swatch and its text; returns the x after it. */
static double
legend(cairo_t *cr, double x, double y, uint32_t c, const char *s)
{
  fill_rect(cr, x, y - 10, 12, 12, c);
  text(cr, x + 17, y, 0, 10, false, C_TEXT, s);
  return x + 17 + text_w(cr, s, 10, false) + 18;
}

/* Axis ticks: a step of 1, 2 or 5 times a power of ten giving about
 * `target` steps up to max, the axis end (a whole number of steps >=
 * max) and the decimals a tick label needs. */
struct ticks {
  double step, end;
  int decimals;
};

static struct ticks
nice_ticks(double max, int target)
{
  struct ticks t;
  double raw, mag, f;

  if (!(max > 0))
    max = 1;
  raw = max / target;
  mag = pow(10, floor(log10(raw)));
  f = raw / mag;
  t.step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
  t.end = ceil(max / t.step - 1e-9) * t.step;
  t.decimals = t.step >= 1 ? 0 : (int)ceil(-log10(t.step) - 1e-9);
  return t;
}

static void
fmt_tick(char *buf, size_t len, double v, int decimals)
{
  snprintf(buf, len, "%.*f", decimals, v);
}

/* "kernel K, lvm V, started S": the charts' second line. */
static void
host_line(const struct ff_runreport *rr, char *buf, size_t len)
{
  snprintf(buf, len, "host: kernel %s, lvm %s; %s", rr->kernel,
           rr->lvm_version, rr->started);
}

/* The same string of every configuration of cs (n of them): get(c), or
 * NULL when one has none; *varies when two differ. */
static const char *
common_str(const struct ff_rr_config *cs, size_t n,
           const char *(*get)(const struct ff_rr_config *), bool *varies)
{
  const char *v0 = NULL;

  *varies = false;
  for (size_t i = 0; i < n; i++) {
    const char *v = get(&cs[i]);

    if (!v)
      return NULL;
    if (!v0)
      v0 = v;
    else if (strcmp(v0, v))
      *varies = true;
  }
  return v0;
}

/* A configuration's profile: the matrix's fusefarm/profile, else its
 * "profile", else the one "slow" names. */
static const char *
profile_of(const struct ff_rr_config *c)
{
  const struct ff_rr_setting *st = ff_runreport_setting(c, "fusefarm/profile");

  return st ? st->text : c->profile ? c->profile : c->slow_profile;
}

/* A configuration's lvm build: the matrix's fusefarm/lvm, else its
 * "lvm" label. */
static const char *
lvm_of(const struct ff_rr_config *c)
{
  const struct ff_rr_setting *st = ff_runreport_setting(c, "fusefarm/lvm");

  return st ? st->text : c->lvm_label;
}

void
ff_report_context_line(const struct ff_runreport *rr,
                       const struct ff_rr_config *c, char *buf, size_t len)
{
  const struct ff_rr_config *cs = c ? c : rr->configs;
  size_t ncs = c ? 1 : rr->nconfigs, n = 0;
  const struct ff_rr_config *c0 = ncs ? &cs[0] : NULL;
  bool same_farm = c0 && c0->has_farm, same_dm = c0 && c0->dm_mode, varies;
  const char *lvm, *profile;

  for (size_t i = 1; i < ncs; i++) {
    const struct ff_rr_config *ci = &cs[i];

    same_farm = same_farm && ci->has_farm && ci->devices == c0->devices &&
                ci->vgs == c0->vgs && ci->lvs == c0->lvs;
    same_dm = same_dm && ci->dm_mode && !strcmp(ci->dm_mode, c0->dm_mode);
  }
  buf[0] = 0;
  if (same_farm)
    n += (size_t)snprintf(buf + n, len - n,
                          "farm: %lld devices, %lld VGs, %lld LVs; ",
                          c0->devices, c0->vgs, c0->lvs);
  else if (n < len)
    n += (size_t)snprintf(buf + n, len - n, "farm: per configuration; ");
  /* the lvm build: the matrix's fusefarm/lvm or the configuration's
   * "lvm" label (with its version), else the lvm the run found */
  lvm = common_str(cs, ncs, lvm_of, &varies);
  if (n < len) {
    if (lvm && varies)
      n += (size_t)snprintf(buf + n, len - n, "lvm per configuration; ");
    else if (lvm && ncs == 1 && c0->lvm_version &&
             strcmp(lvm, c0->lvm_version))
      n += (size_t)snprintf(buf + n, len - n, "lvm build %s (%s); ", lvm,
                            c0->lvm_version);
    else if (lvm)
      n += (size_t)snprintf(buf + n, len - n, "lvm build %s; ", lvm);
    else
      n += (size_t)snprintf(buf + n, len - n, "lvm %s%s%s; ", rr->lvm_version,
                            rr->lvm ? " at " : "", rr->lvm ? rr->lvm : "");
  }
  profile = common_str(cs, ncs, profile_of, &varies);
  if (n < len)
    n += (size_t)snprintf(buf + n, len - n, "profile %s; ",
                          !profile ? "not recorded"
                          : varies ? "per configuration"
                                   : profile);
  if (n < len)
    n += (size_t)snprintf(
      buf + n, len - n, "activation: %s",
      !same_dm ? (c0 && c0->dm_mode ? "per configuration" : "as lvm ran it")
      : !strcmp(c0->dm_mode, "real") ? "real device-mapper"
                                     : "--driverloaded n (no dm devices)");
}

void
ff_report_axis_value(const struct ff_rr_config *c, const char *key, char *buf,
                     size_t len)
{
  const struct ff_rr_setting *st = ff_runreport_setting(c, key);
  const char *slash = strrchr(key, '/');

  snprintf(buf, len, "%s=%s", slash ? slash + 1 : key,
           st ? st->text : "\u2013");
}

void
ff_report_config_name(const struct ff_runreport *rr,
                      const struct ff_rr_config *c, char *buf, size_t len)
{
  size_t n = 0;
  char v[256];

  buf[0] = 0;
  for (size_t k = 0; k < rr->nkeys && n < len; k++) {
    if (!rr->varying[k])
      continue;
    ff_report_axis_value(c, rr->keys[k], v, sizeof v);
    n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", v);
  }
  if (!buf[0])
    snprintf(buf, len, "%s", c->label);
}

/* The text of key in c, "" when c lacks it. */
static const char *
setting_text(const struct ff_rr_config *c, const char *key)
{
  const struct ff_rr_setting *st = ff_runreport_setting(c, key);

  return st ? st->text : "";
}

size_t
ff_report_axis_keys(const struct ff_runreport *rr,
                    size_t keys[FF_REPORT_AXIS_ROWS_MAX])
{
  size_t n = 0, changes[FF_REPORT_AXIS_ROWS_MAX];

  for (size_t k = 0; k < rr->nkeys && n < FF_REPORT_AXIS_ROWS_MAX; k++) {
    size_t ch = 0, j;

    if (!rr->varying[k])
      continue;
    for (size_t i = 1; i < rr->nconfigs; i++)
      ch += strcmp(setting_text(&rr->configs[i - 1], rr->keys[k]),
                   setting_text(&rr->configs[i], rr->keys[k])) != 0;
    /* insertion by changes, most first; ties keep the document order */
    for (j = n; j > 0 && changes[j - 1] < ch; j--) {
      keys[j] = keys[j - 1];
      changes[j] = changes[j - 1];
    }
    keys[j] = k;
    changes[j] = ch;
    n++;
  }
  return n;
}

size_t
ff_report_axis_span_end(const struct ff_runreport *rr, const size_t *keys,
                        size_t nrows, size_t r, size_t first)
{
  size_t last = first;

  while (last + 1 < rr->nconfigs) {
    bool same = true;

    for (size_t q = r; q < nrows && same; q++)
      same = !strcmp(setting_text(&rr->configs[first], rr->keys[keys[q]]),
                     setting_text(&rr->configs[last + 1], rr->keys[keys[q]]));
    if (!same)
      break;
    last++;
  }
  return last;
}

/* --- what every chart has around its plot ------------------------------- */

/* The width a chart needs, at least w and at most 1600 px (text wider
 * than that is cut at the edge): its title (bold 16), the host line, the
 * legend of names (at most legend_max px of it), each configuration's
 * key line and the footer (at ml).  Text is measured on a scratch
 * context before the file exists. */
static double
frame_width(const struct ff_runreport *rr, const char *title,
            const char **names, size_t nw, double legend_max, double ml,
            const char *footer, double w)
{
  cairo_surface_t *ms = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
  cairo_t *mc = scratch(ms);
  double lw = 16, tw = 32 + text_w(mc, title, 16, true);
  char buf[512];

  host_line(rr, buf, sizeof buf);
  tw = fmax(tw, 32 + text_w(mc, buf, 10, false));
  ff_report_context_line(rr, NULL, buf, sizeof buf);
  tw = fmax(tw, 32 + text_w(mc, buf, 10, false));
  for (size_t k = 0; k < nw; k++)
    lw += 17 + text_w(mc, names[k], 10, false) + 18;
  tw = fmax(tw, fmin(lw, legend_max));
  for (size_t i = 0; i < rr->nconfigs; i++) {
    snprintf(buf, sizeof buf, "config %lld: %s", rr->configs[i].id,
             rr->configs[i].label);
    tw = fmax(tw, ml + 16 + text_w(mc, buf, 10, false));
  }
  tw = fmax(tw, ml + 16 + text_w(mc, footer, 10, false));
  cairo_destroy(mc);
  cairo_surface_destroy(ms);
  return ceil(fmax(w, fmin(tw, 1600)));
}

/* The title and, under it, what it is of and the host line (FRAME_TOP
 * px in all). */
#define FRAME_TOP 66.0
static void
frame_title(cairo_t *cr, const struct ff_runreport *rr, const char *title)
{
  char buf[512];

  text(cr, 16, 26, 0, 16, true, C_TEXT, title);
  ff_report_context_line(rr, NULL, buf, sizeof buf);
  text(cr, 16, 46, 0, 10, false, C_TEXT, buf);
  host_line(rr, buf, sizeof buf);
  text(cr, 16, 62, 0, 10, false, C_TEXT, buf);
}

/* The rows of axis values under a plot: one per key that varies between
 * the configurations (at most FF_REPORT_AXIS_ROWS_MAX), or one of the
 * configurations' labels when none varies. */
static size_t
axis_rows(const struct ff_runreport *rr)
{
  size_t keys[FF_REPORT_AXIS_ROWS_MAX], n = ff_report_axis_keys(rr, keys);

  return n ? n : 1;
}

/* The height frame_configs needs for the axis values. */
static double
axis_rows_h(const struct ff_runreport *rr)
{
  return 14 * (double)axis_rows(rr);
}

/* s drawn centred at x in at most w px: smaller, then cut with "...". */
static void
text_fit(cairo_t *cr, double x, double y, double w, uint32_t c, const char *s)
{
  char buf[256];
  size_t n = strlen(s);

  if (text_w(cr, s, 10, false) <= w) {
    text(cr, x, y, 0.5, 10, false, c, s);
    return;
  }
  if (text_w(cr, s, 8, false) <= w) {
    text(cr, x, y, 0.5, 8, false, c, s);
    return;
  }
  if (n >= sizeof buf - 4)
    n = sizeof buf - 4;
  while (n > 1) {
    /* cut at a UTF-8 character boundary */
    do
      n--;
    while (n > 1 && ((unsigned char)s[n] & 0xc0) == 0x80);
    snprintf(buf, sizeof buf, "%.*s\u2026", (int)n, s);
    if (text_w(cr, buf, 8, false) <= w)
      break;
  }
  text(cr, x, y, 0.5, 8, false, c, buf);
}

/* Under a plot whose groups (one per configuration, group_w wide) start
 * at ml and whose x axis is at bottom: the groups labelled by their axis
 * values, a row per varying key ("use_aio=0"), the innermost key nearest
 * the axis; in the rows under it, neighbouring configurations that share
 * a value (and those of the rows further out) share one label, with a
 * bracket over the groups it spans.  Then the axis title, a key line per
 * configuration ("config ID: LABEL", the ids the timelines' files are
 * named by) and the footer. */
static void
frame_configs(cairo_t *cr, const struct ff_runreport *rr, double ml,
              double group_w, double top, double bottom, double height,
              const char *footer)
{
  char buf[512];
  size_t nc = rr->nconfigs, keys[FF_REPORT_AXIS_ROWS_MAX];
  size_t nrows = ff_report_axis_keys(rr, keys);
  double below = bottom + axis_rows_h(rr);

  for (size_t i = 0; i < nc; i++) {
    const struct ff_rr_config *c = &rr->configs[i];

    snprintf(buf, sizeof buf, "config %lld: %s", c->id, c->label);
    text(cr, ml, below + 38 + 15 * (double)i, 0, 10, false, C_CONFIG, buf);
    if (!nrows)
      text_fit(cr, ml + group_w * ((double)i + 0.5), bottom + 16, group_w - 4,
               C_CONFIG, c->label);
  }
  /* between the outermost row's spans, a dashed line through the plot */
  for (size_t i = 0, j; nrows > 1 && i < nc; i = j + 1) {
    static const double dash[] = {3, 3};
    double gx;

    j = ff_report_axis_span_end(rr, keys, nrows, nrows - 1, i);
    if (j + 1 >= nc)
      break;
    gx = ml + group_w * (double)(j + 1);
    cairo_save(cr);
    cairo_set_dash(cr, dash, 2, 0);
    line(cr, gx, top, gx, bottom + 14 * (double)nrows + 4, 1, C_GRID);
    cairo_restore(cr);
  }
  for (size_t r = 0; r < nrows; r++) {
    double y = bottom + 16 + 14 * (double)r;

    for (size_t i = 0, j; i < nc; i = j + 1) {
      double x0 = ml + group_w * (double)i;
      double x1;

      j = ff_report_axis_span_end(rr, keys, nrows, r, i);
      x1 = ml + group_w * (double)(j + 1);
      ff_report_axis_value(&rr->configs[i], rr->keys[keys[r]], buf,
                           sizeof buf);
      text_fit(cr, (x0 + x1) / 2, y, x1 - x0 - 4, C_CONFIG, buf);
      if (j > i) {
        /* the bracket: which groups share the value */
        rgb(cr, C_AXIS);
        cairo_set_line_width(cr, 1);
        cairo_move_to(cr, x0 + 4, y - 7);
        cairo_line_to(cr, x0 + 4, y - 10.5);
        cairo_line_to(cr, x1 - 4, y - 10.5);
        cairo_line_to(cr, x1 - 4, y - 7);
        cairo_stroke(cr);
      }
    }
  }
  text(cr, ml + group_w * (double)nc / 2, below + 18, 0.5, 10, false, C_AXIS,
       "configuration");
  text(cr, ml, height - 12, 0, 10, false, C_TEXT, footer);
}

/* --- the bar chart ------------------------------------------------------ */

static bool
workload_failed(const struct ff_rr_workload *w)
{
  return w->failed_runs || w->failed_units;
}

static int
draw_bars(const struct ff_runreport *rr, const char *path)
{
  const double ml = 72, mr = 24, ph = 280, value_room = 48;
  size_t nw, nc = rr->nconfigs;
  const char **names = ff_runreport_workload_names(rr, &nw);
  double bar_w, group_w, width, height, legend_y, top, bottom, x, y;
  double ymax = 0;
  bool any_range = false, any_failed = false;
  struct ticks tk;
  struct svg svg;
  cairo_t *cr;
  char buf[512], v[64], footer[160], title[512];

  if (!names)
    return -1;
  for (size_t i = 0; i < nc; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      const struct ff_rr_workload *w = &rr->configs[i].workloads[j];

      ymax = fmax(ymax, w->repeat > 1 ? w->max : w->median);
      any_range |= w->repeat > 1;
      any_failed |= workload_failed(w);
    }
  tk = nice_ticks(ymax, 6);
  snprintf(footer, sizeof footer, "bars: median of the repetitions%s%s",
           any_range ? "; whiskers: min\u2013max" : "",
           any_failed ? "; red outline, \"!\": a run or command failed" : "");

  /* Layout: title, host line, legend, room for the value labels, the
   * plot, the config ids, then one key line per config and the footer.
   * Groups widen (up to 200 px) to give the plot 720 px; the canvas is
   * as wide as the plot or the widest line of text. */
  bar_w = nw ? fmin(22, fmax(8, 88.0 / (double)nw)) : 22;
  group_w = (double)nw * bar_w + 28;
  if (ml + mr + group_w * (double)nc < 720)
    group_w = fmin(200, (720 - ml - mr) / (double)nc);
  snprintf(title, sizeof title, "%s: median wall time per configuration",
           rr->scenario);
  width = frame_width(rr, title, names, nw, INFINITY, ml, footer,
                      ml + mr + group_w * (double)nc);
  legend_y = FRAME_TOP + 24;
  top = legend_y + 14 + value_room;
  bottom = top + ph;
  height = bottom + axis_rows_h(rr) + 44 + 15 * (double)nc + 30;

  if (svg_open(&svg, path, width, height) < 0) {
    free(names);
    return -1;
  }
  cr = svg.cr;

  frame_title(cr, rr, title);
  x = 16;
  for (size_t k = 0; k < nw; k++) {
    if (k && x + 17 + text_w(cr, names[k], 10, false) > width - 16)
      break; /* the value labels still name the bars by colour */
    x = legend(cr, x, legend_y, palette[k % NPALETTE], names[k]);
  }

  /* y axis: grid, ticks, labels, title */
  for (double t = 0; t <= tk.end + tk.step / 2; t += tk.step) {
    y = bottom - t / tk.end * ph;
    line(cr, ml, y, ml + group_w * (double)nc, y, 1, t == 0 ? C_AXIS : C_GRID);
    fmt_tick(v, sizeof v, t, tk.decimals);
    text(cr, ml - 6, y + 4, 1, 10, false, C_AXIS, v);
  }
  line(cr, ml, top, ml, bottom, 1, C_AXIS);
  text_up(cr, 18, (top + bottom) / 2, 0.5, 10, C_AXIS, "seconds");

  for (size_t i = 0; i < nc; i++) {
    const struct ff_rr_config *c = &rr->configs[i];
    double gx = ml + group_w * (double)i;
    double bx = gx + (group_w - bar_w * (double)nw) / 2;

    for (size_t k = 0; k < nw; k++) {
      const struct ff_rr_workload *w = ff_runreport_find_workload(c, names[k]);
      double x0 = bx + bar_w * (double)k, xm = x0 + bar_w / 2, yt, ylab;

      if (!w)
        continue; /* this config did not run it */
      yt = bottom - w->median / tk.end * ph;
      fill_rect(cr, x0 + 1, yt, bar_w - 2, bottom - yt, palette[k % NPALETTE]);
      if (workload_failed(w)) {
        rgb(cr, C_FAILED);
        cairo_set_line_width(cr, 2);
        cairo_rectangle(cr, x0 + 2, yt + 1, bar_w - 4, bottom - yt - 1);
        cairo_stroke(cr);
      }
      ylab = yt;
      if (w->repeat > 1) {
        double ylo = bottom - w->min / tk.end * ph;
        double yhi = bottom - w->max / tk.end * ph;

        line(cr, xm, ylo, xm, yhi, 1.2, C_WHISKER);
        line(cr, xm - bar_w / 4, ylo, xm + bar_w / 4, ylo, 1.2, C_WHISKER);
        line(cr, xm - bar_w / 4, yhi, xm + bar_w / 4, yhi, 1.2, C_WHISKER);
        ylab = fmin(ylab, yhi);
      }
      snprintf(buf, sizeof buf, "%s%s",
               ff_runreport_fmt_secs(w->median, false, v, sizeof v),
               workload_failed(w) ? " !" : "");
      text_up(cr, xm + 3.5, ylab - 4, 0, 10, shade(palette[k % NPALETTE], 0.6),
              buf);
    }
  }
  frame_configs(cr, rr, ml, group_w, top, bottom, height, footer);
  free(names);
  return svg_close(&svg);
}

/* --- the io chart ---------------------------------------------------------
 *
 * One point per (config, io workload): fio's completion latency p50 (the
 * median over the repetitions of the workload's main direction: writes
 * when it wrote, else reads), on a log scale, the points of a workload
 * joined across the configurations in document order, so that a latency
 * axis reads left to right.  Markers are 7 x 7 squares in the workload's
 * colour of the bar chart. */

/* w's clat p50 in ns, the median over its runs, or -1 (no io). */
static double
io_p50(const struct ff_rr_workload *w)
{
  double v[64];
  size_t n = 0;

  for (size_t r = 0; r < w->nruns && n < 64; r++) {
    const struct ff_rr_run *run = &w->runs[r];
    const struct ff_rr_iodir *d =
      run->io_write.ios > 0 ? &run->io_write : &run->io_read;

    if (run->has_io && d->ios > 0 && d->clat_p50_ns > 0)
      v[n++] = (double)d->clat_p50_ns;
  }
  return n ? ff_median(v, n) : -1;
}

/* "10 µs", "1 ms", "100 ms", "1 s" for 10^e ns. */
static void
fmt_decade(char *buf, size_t len, int e)
{
  static const char *const unit[] = {"ns", "\u00b5s", "ms", "s"};
  int u = e / 3 < 3 ? e / 3 : 3;
  double v = pow(10, e - 3 * u);

  snprintf(buf, len, "%g %s", v, unit[u]);
}

static int
draw_io(const struct ff_runreport *rr, const char *path)
{
  const double ml = 72, mr = 24, ph = 280;
  size_t nw, nc = rr->nconfigs, nio = 0;
  const char **names = ff_runreport_workload_names(rr, &nw);
  double lo = INFINITY, hi = 0, group_w, width, height, top, bottom, x;
  int elo, ehi;
  struct svg svg;
  cairo_t *cr;
  char buf[512], title[512];
  const char *footer = "points: fio's completion latency p50 (clat; median "
                       "of the repetitions), log scale";

  if (!names)
    return -1;
  for (size_t i = 0; i < nc; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      double p = io_p50(&rr->configs[i].workloads[j]);

      if (!rr->configs[i].workloads[j].io || p <= 0)
        continue;
      nio++;
      lo = fmin(lo, p);
      hi = fmax(hi, p);
    }
  if (!nio) {
    free(names);
    return 0; /* no io rows: no chart */
  }
  elo = (int)floor(log10(lo));
  ehi = (int)ceil(log10(hi));
  if (ehi <= elo)
    ehi = elo + 1;
  group_w = nc ? fmin(160, fmax(60, 720.0 / (double)nc)) : 160;
  snprintf(title, sizeof title, "%s: io completion latency per configuration",
           rr->scenario);
  width = frame_width(rr, title, names, nw, 1200, ml, footer,
                      ml + mr + group_w * (double)nc);
  top = FRAME_TOP + 24 + 14 + 16;
  bottom = top + ph;
  height = bottom + axis_rows_h(rr) + 44 + 15 * (double)nc + 30;
  if (svg_open(&svg, path, width, height) < 0) {
    free(names);
    return -1;
  }
  cr = svg.cr;
  frame_title(cr, rr, title);
  x = 16;
  for (size_t k = 0; k < nw; k++) {
    bool io = false;

    for (size_t i = 0; i < nc && !io; i++) {
      const struct ff_rr_workload *w =
        ff_runreport_find_workload(&rr->configs[i], names[k]);

      io = w && w->io && io_p50(w) > 0;
    }
    if (!io)
      continue;
    if (x > 16 && x + 17 + text_w(cr, names[k], 10, false) > width - 16)
      break; /* the points still name the workloads by colour */
    x = legend(cr, x, FRAME_TOP + 24, palette[k % NPALETTE], names[k]);
  }

  /* y axis: a line per decade */
  for (int e = elo; e <= ehi; e++) {
    double y = bottom - (double)(e - elo) / (ehi - elo) * ph;

    line(cr, ml, y, ml + group_w * (double)nc, y, 1,
         e == elo ? C_AXIS : C_GRID);
    fmt_decade(buf, sizeof buf, e);
    text(cr, ml - 6, y + 4, 1, 10, false, C_AXIS, buf);
  }
  line(cr, ml, top, ml, bottom, 1, C_AXIS);
  text_up(cr, 18, (top + bottom) / 2, 0.5, 10, C_AXIS, "clat p50");

  /* per workload: the line through its points, then the markers */
  for (size_t k = 0; k < nw; k++) {
    uint32_t col = palette[k % NPALETTE];

    for (int pass = 0; pass < 2; pass++) {
      bool first = true;

      for (size_t i = 0; i < nc; i++) {
        const struct ff_rr_workload *w =
          ff_runreport_find_workload(&rr->configs[i], names[k]);
        double p = w && w->io ? io_p50(w) : -1, px, py;

        if (p <= 0)
          continue;
        px = ml + group_w * ((double)i + 0.5);
        py = bottom - (log10(p) - elo) / (ehi - elo) * ph;
        if (pass == 1)
          fill_rect(cr, px - 3.5, py - 3.5, 7, 7, col);
        else if (first)
          cairo_move_to(cr, px, py);
        else
          cairo_line_to(cr, px, py);
        first = false;
      }
      if (pass == 0 && !first) {
        rgb(cr, col);
        cairo_set_line_width(cr, 1.5);
        cairo_stroke(cr);
      }
    }
  }

  frame_configs(cr, rr, ml, group_w, top, bottom, height, footer);
  free(names);
  return svg_close(&svg);
}

/* --- the timeline of one event activation ------------------------------ */

/* The mark of a row that touched a slow device: a triangle in the left
 * margin pointing at the row (centre y), at least 7 px high however thin
 * the rows, filled for the slow device's own pvscan, hollow for a
 * vgchange of its VG. */
static void
slow_mark(cairo_t *cr, double y, double h, bool filled)
{
  h = fmax(h, 7);
  cairo_move_to(cr, 3.5, y - h / 2);
  cairo_line_to(cr, 12.5, y);
  cairo_line_to(cr, 3.5, y + h / 2);
  cairo_close_path(cr);
  rgb(cr, C_SLOW);
  if (filled) {
    cairo_fill(cr);
    return;
  }
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
}

/* A legend entry with a slow_mark as its swatch; returns the x after it. */
static double
slow_legend(cairo_t *cr, double x, double y, bool filled, const char *s)
{
  cairo_save(cr);
  cairo_translate(cr, x - 2, 0);
  slow_mark(cr, y - 4, 10, filled);
  cairo_restore(cr);
  text(cr, x + 17, y, 0, 10, false, C_TEXT, s);
  return x + 17 + text_w(cr, s, 10, false) + 18;
}

/* The geometry of w's timeline: 1200 px wide, rows from TL_ROWS_TOP,
 * `pitch` px apart (14 while there are few units, thinner down to 1 px so
 * that they stay under ~2,400 px), a label every `every`-th row at most
 * (labels need TL_LABEL_H px), and a time axis (tk) reaching xmax or the
 * last unit's end. */
#define TL_WIDTH    1200.0
#define TL_ML       16.0
#define TL_MR       16.0
#define TL_ROWS_TOP 146.0
#define TL_LABEL_H  10.0
struct tl_geom {
  double pitch, bar_h, pw;
  unsigned every;
  struct ticks tk;
};

static struct tl_geom
tl_geom(const struct ff_rr_workload *w, double xmax)
{
  struct tl_geom g;
  double tmax = 0;

  for (size_t i = 0; i < w->nunits; i++)
    tmax = fmax(tmax, w->units[i].end);
  g.tk = nice_ticks(fmax(tmax, xmax) > 0 ? fmax(tmax, xmax) : 0.001, 10);
  g.pitch = w->nunits ? fmax(1, fmin(14, 2400.0 / (double)w->nunits)) : 14;
  g.bar_h = g.pitch >= 4 ? g.pitch - 2 : g.pitch;
  g.every = g.pitch >= TL_LABEL_H ? 1 : (unsigned)ceil(TL_LABEL_H / g.pitch);
  g.pw = TL_WIDTH - TL_ML - TL_MR;
  return g;
}

static bool
overlaps(const struct ff_report_label *b, size_t n,
         const struct ff_report_label *nb)
{
  for (size_t i = 0; i < n; i++)
    if (nb->x0 < b[i].x1 && b[i].x0 < nb->x1 && nb->y0 < b[i].y1 &&
        b[i].y0 < nb->y1)
      return true;
  return false;
}

int
ff_report_timeline_bars(const struct ff_rr_workload *w, double xmax,
                        struct ff_report_box **bars)
{
  struct tl_geom g = tl_geom(w, xmax);
  size_t *order;

  *bars = NULL;
  if (!w->nunits)
    return 0;
  if (!(order = ff_runreport_order(w, FF_RR_BY_START)))
    return -1;
  if (!(*bars = calloc(w->nunits, sizeof **bars))) {
    free(order);
    return ff_error("timeline: out of memory");
  }
  for (size_t i = 0; i < w->nunits; i++) {
    const struct ff_rr_unit *u = &w->units[order[i]];
    struct ff_report_box *b = &(*bars)[order[i]];

    b->x0 = TL_ML + u->start / g.tk.end * g.pw;
    b->x1 = b->x0 + fmax((u->end - u->start) / g.tk.end * g.pw, 1);
    b->y0 = TL_ROWS_TOP + g.pitch * (double)i;
    b->y1 = b->y0 + g.bar_h;
  }
  free(order);
  return 0;
}

/* Whether label b of the unit in row `row` covers the bar of another
 * row (bars by unit, order: the units by row). */
static bool
covers_bar(const struct ff_report_label *b, size_t row,
           const struct ff_report_box *bars, const size_t *order, size_t n,
           const struct tl_geom *g)
{
  double r0 = floor((b->y0 - TL_ROWS_TOP) / g->pitch);
  double r1 = floor((b->y1 - TL_ROWS_TOP) / g->pitch);

  for (double r = fmax(r0, 0); r <= r1 && r < (double)n; r++) {
    const struct ff_report_box *o = &bars[order[(size_t)r]];

    if ((size_t)r != row && b->x0 < o->x1 && o->x0 < b->x1 && b->y0 < o->y1 &&
        o->y0 < b->y1)
      return true;
  }
  return false;
}

int
ff_report_timeline_labels(const struct ff_rr_workload *w, int top, double xmax,
                          struct ff_report_label **labels, size_t *nlabels,
                          size_t *unplaced)
{
  size_t n = w->nunits, nlab = 0, ntop, *order = NULL, *rank = NULL;
  struct tl_geom g = tl_geom(w, xmax);
  struct ff_report_label *lab = NULL;
  struct ff_report_box *bars = NULL;
  bool *must = NULL;
  cairo_surface_t *ms = NULL;
  cairo_t *mc = NULL;
  int r = -1;

  *labels = NULL;
  *nlabels = *unplaced = 0;
  if (!n)
    return 0;
  order = ff_runreport_order(w, FF_RR_BY_START);
  rank = ff_runreport_order(w, FF_RR_BY_DURATION);
  if (!order || !rank || ff_report_timeline_bars(w, xmax, &bars) < 0)
    goto out;
  must = calloc(n, sizeof *must);
  lab = calloc(n, sizeof *lab);
  if (!must || !lab) {
    ff_error("timeline: out of memory");
    goto out;
  }
  ntop = top >= 0 && (size_t)top < n ? (size_t)top : n;
  for (size_t k = 0; k < ntop; k++)
    must[rank[k]] = true;
  ms = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
  mc = scratch(ms);

  /* the slowest first (always), then every `every`-th row where it
   * covers neither a label already placed nor another row's bar (the
   * slowest may cover bars when they have to) */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n; i++) {
      const struct ff_rr_unit *u = &w->units[order[i]];
      double x0 = TL_ML + u->start / g.tk.end * g.pw;
      double x1 = TL_ML + u->end / g.tk.end * g.pw, tw, y, cand[3];
      struct ff_report_label *b = &lab[nlab];
      char d[64];
      int nc = 0, k = 0;

      if (pass == 0 ? !must[order[i]] : must[order[i]] || i % g.every)
        continue;
      ff_runreport_fmt_secs(u->end - u->start, true, d, sizeof d);
      snprintf(b->text, sizeof b->text, "%s %s%s", ff_runreport_unit_name(u),
               d, u->exit ? " (failed)" : "");
      b->unit = order[i];
      b->bold = pass == 0;
      tw = text_w(mc, b->text, 9, b->bold);
      y = TL_ROWS_TOP + g.pitch * (double)i + g.pitch / 2;
      /* right of the bar, else left of it (clear of the slow marks in
       * the left margin), else inside it; a label that would cover one
       * already placed is left out (the header names the slowest) */
      if (x1 + 4 + tw <= TL_WIDTH - 4)
        cand[nc++] = x1 + 4;
      if (x0 - 4 - tw >= TL_ML)
        cand[nc++] = x0 - 4 - tw;
      if (!nc)
        cand[nc++] = x0 + 2;
      b->y0 = y - TL_LABEL_H / 2;
      b->y1 = y + TL_LABEL_H / 2;
      for (int bars_ok = 0; bars_ok < 1 + (pass == 0); bars_ok++) {
        for (k = 0; k < nc; k++) {
          b->x0 = cand[k];
          b->x1 = cand[k] + tw;
          if (!overlaps(lab, nlab, b) &&
              (bars_ok || !covers_bar(b, i, bars, order, n, &g)))
            break;
        }
        if (k < nc)
          break;
      }
      if (k == nc) {
        *unplaced += pass == 0;
        continue;
      }
      nlab++;
    }
  if (cairo_status(mc) != CAIRO_STATUS_SUCCESS) {
    ff_error("timeline: cairo: %s", cairo_status_to_string(cairo_status(mc)));
    goto out;
  }
  *labels = lab;
  *nlabels = nlab;
  lab = NULL;
  r = 0;
out:
  if (mc)
    cairo_destroy(mc);
  if (ms)
    cairo_surface_destroy(ms);
  free(order);
  free(rank);
  free(must);
  free(lab);
  free(bars);
  return r;
}

void
ff_report_timeline_title(const struct ff_runreport *rr,
                         const struct ff_rr_config *c,
                         const struct ff_rr_workload *w, char *buf, size_t len)
{
  char name[256];

  ff_report_config_name(rr, c, name, sizeof name);
  snprintf(buf, len,
           "%s: %s, %s (config %lld), repetition %zu of %zu (the last)",
           rr->scenario, w->name, name, c->id, w->nruns, w->nruns);
}

/* The time axis of w's timeline reaches xmax (> 0: the longest of the
 * same workload's timelines in every configuration, so that they compare
 * at a glance), else w's own last unit's end. */
static int
draw_timeline(const struct ff_runreport *rr, const struct ff_rr_config *c,
              const struct ff_rr_workload *w, const char *path, int top,
              double xmax)
{
  const double width = TL_WIDTH, ml = TL_ML, rows_top = TL_ROWS_TOP;
  size_t n = w->nunits, nlab = 0, ntop, unplaced = 0;
  size_t *order = NULL, *rank = NULL, nslow = 0;
  bool *slow = NULL, any_failed = w->failed_units > 0;
  struct ff_report_label *labels = NULL;
  struct ff_report_box *bars = NULL;
  struct tl_geom g = tl_geom(w, xmax);
  double rows_bottom, height, x;
  struct svg svg;
  cairo_t *cr;
  char buf[512], d[64], name[256];
  int r = -1;

  ff_report_config_name(rr, c, name, sizeof name);
  if (!n) {
    /* Nothing arrived: still a chart, saying so. */
    if (svg_open(&svg, path, width, 120) < 0)
      return -1;
    snprintf(buf, sizeof buf,
             "%s: %s, %s (config %lld): no devices and no VGs", rr->scenario,
             w->name, name, c->id);
    text(svg.cr, 16, 26, 0, 16, true, C_TEXT, buf);
    ff_report_context_line(rr, c, buf, sizeof buf);
    text(svg.cr, 16, 46, 0, 10, false, C_TEXT, buf);
    return svg_close(&svg);
  }
  order = ff_runreport_order(w, FF_RR_BY_START);
  rank = ff_runreport_order(w, FF_RR_BY_DURATION);
  if (!order || !rank || ff_runreport_slow_units(c, w, &slow, &nslow) < 0 ||
      ff_report_timeline_bars(w, xmax, &bars) < 0 ||
      ff_report_timeline_labels(w, top, xmax, &labels, &nlab, &unplaced) < 0)
    goto out;
  ntop = (size_t)top < n ? (size_t)top : n;
  rows_bottom = rows_top + g.pitch * (double)n;
  height = rows_bottom + 52;

  if (svg_open(&svg, path, width, height) < 0)
    goto out;
  cr = svg.cr;

  /* the title names the configuration by its axis values and the
   * repetition drawn */
  ff_report_timeline_title(rr, c, w, buf, sizeof buf);
  if (text_w(cr, buf, 16, true) > width - 32)
    snprintf(buf, sizeof buf,
             "%s: %s, config %lld, repetition %zu of %zu (the last)",
             rr->scenario, w->name, c->id, w->nruns, w->nruns);
  text(cr, 16, 26, 0, 16, true, C_TEXT, buf);
  ff_report_context_line(rr, c, buf, sizeof buf);
  text(cr, 16, 46, 0, 10, false, C_TEXT, buf);
  snprintf(buf, sizeof buf, "config %lld: %s", c->id, c->label);
  text(cr, 16, 82, 0, 10, false, C_TEXT, buf);
  x = legend(cr, 16, 104, C_PVSCAN, "pvscan --cache (one per device)");
  x = legend(cr, x, 104, C_VGCHANGE, "vgchange -aay (one per VG)");
  if (any_failed)
    x = legend(cr, x, 104, C_FAILED, "exit status not 0");
  if (nslow) {
    bool vgs = false;

    for (size_t i = 0; i < n; i++)
      vgs |= slow[i] && w->units[i].kind == FF_RR_VGCHANGE;
    snprintf(buf, sizeof buf, "slow device (profile %s: %zu of %lld)",
             c->slow_profile, c->nslow,
             c->has_farm ? c->devices : (long long)w->npvscan);
    x = slow_legend(cr, x, 104, true, buf);
    if (vgs)
      slow_legend(cr, x, 104, false, "vgchange of a slow device's VG");
  }

  /* the rows that touched a slow device: a band under the grid and bars */
  for (size_t i = 0; nslow && i < n; i++)
    if (slow[order[i]])
      fill_rect(cr, ml, rows_top + g.pitch * (double)i, g.pw, g.pitch,
                C_SLOW_ROW);

  /* time axis: grid lines, labels above and below the rows */
  for (double t = 0; t <= g.tk.end + g.tk.step / 2; t += g.tk.step) {
    double gx = ml + t / g.tk.end * g.pw;
    double al = t == 0 ? 0 : t >= g.tk.end - g.tk.step / 2 ? 1 : 0.5;
    char v[64];

    line(cr, gx, rows_top - 4, gx, rows_bottom + 4, 1,
         t == 0 ? C_AXIS : C_GRID);
    fmt_tick(v, sizeof v, t, g.tk.decimals);
    text(cr, gx, rows_top - 8, al, 10, false, C_AXIS, v);
    text(cr, gx, rows_bottom + 16, al, 10, false, C_AXIS, v);
  }
  text(cr, ml + g.pw / 2, rows_bottom + 36, 0.5, 10, false, C_AXIS,
       "seconds from the start of the run (one scale for this workload in "
       "every configuration)");

  /* every bar */
  for (size_t i = 0; i < n; i++) {
    const struct ff_rr_unit *u = &w->units[order[i]];
    const struct ff_report_box *b = &bars[order[i]];

    fill_rect(cr, b->x0, b->y0, b->x1 - b->x0, b->y1 - b->y0,
              u->exit                   ? C_FAILED
              : u->kind == FF_RR_PVSCAN ? C_PVSCAN
                                        : C_VGCHANGE);
    if (nslow && slow[order[i]])
      slow_mark(cr, (b->y0 + b->y1) / 2, b->y1 - b->y0,
                u->kind == FF_RR_PVSCAN);
  }

  /* the labels, each on a veil over the neighbours' bars so it reads */
  for (size_t k = 0; k < nlab; k++) {
    const struct ff_report_label *b = &labels[k];
    double y = (b->y0 + b->y1) / 2;

    cairo_set_source_rgba(cr, 1, 1, 1, 0.8);
    cairo_rectangle(cr, b->x0 - 1, y - 5, b->x1 - b->x0 + 2, 10);
    cairo_fill(cr);
    text(cr, b->x0, y + 3.2, 0, 9, b->bold, C_UNIT, b->text);
  }
  /* the header: it says which labels found no room */
  {
    const struct ff_rr_unit *u = &w->units[rank[0]];
    char wall[64];

    ff_runreport_fmt_secs(w->runs[w->nruns - 1].wall, true, wall, sizeof wall);
    ff_runreport_fmt_secs(u->end - u->start, true, d, sizeof d);
    snprintf(buf, sizeof buf,
             "%zu pvscan, %zu vgchange; wall %s; slowest: %s %s %s; "
             "bold: the %zu slowest%s%s",
             w->npvscan, w->nvgchange, wall,
             u->kind == FF_RR_PVSCAN ? "pvscan" : "vgchange",
             ff_runreport_unit_name(u), d, ntop,
             unplaced ? " where there is room" : "",
             g.every > 1 ? "; other labels where there is room" : "");
    text(cr, 16, 64, 0, 10, false, C_TEXT, buf);
  }
  r = svg_close(&svg);
out:
  free(order);
  free(rank);
  free(slow);
  free(labels);
  free(bars);
  return r;
}

/* --- the API ------------------------------------------------------------ */

int
ff_report_print(const struct ff_runreport *rr, FILE *out, int top)
{
  return ff_runreport_print(rr, out, top);
}

static int
write_csv(const char *path, int (*fn)(const struct ff_runreport *, FILE *),
          const struct ff_runreport *rr)
{
  FILE *f = ff_fopen_write(path, "w");
  int r;

  if (!f)
    return -1;
  r = fn(rr, f);
  if (r < 0)
    ff_error_prefix("%s: ", path);
  if (fclose(f) == EOF && !r)
    r = ff_error("close %s: %m", path);
  return r;
}

int
ff_report_csv(const struct ff_runreport *rr, const char *path)
{
  char *units;
  int r = -1;

  units = ff_runreport_units_csv_path(path);
  if (units && write_csv(path, ff_runreport_csv_runs, rr) == 0 &&
      write_csv(units, ff_runreport_csv_units, rr) == 0)
    r = 0;
  free(units);
  return r;
}

int
ff_report_svg_top(const struct ff_runreport *rr, const char *path, int top)
{
  int r;

  if (top < 0)
    return ff_error("svg: top %d: expected a count >= 0", top);
  r = draw_bars(rr, path);
  if (!r) {
    char *iop = ff_runreport_io_chart_path(path);

    r = iop ? draw_io(rr, iop) : -1;
    free(iop);
  }
  for (size_t i = 0; i < rr->nconfigs && !r; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads && !r; j++) {
      const struct ff_rr_config *c = &rr->configs[i];
      const struct ff_rr_workload *w = &c->workloads[j];
      double xmax = 0;
      char *tp;

      if (!w->event)
        continue;
      /* one time scale for this workload's timelines in every config */
      for (size_t q = 0; q < rr->nconfigs; q++) {
        const struct ff_rr_workload *o =
          ff_runreport_find_workload(&rr->configs[q], w->name);

        for (size_t u = 0; o && o->event && u < o->nunits; u++)
          xmax = fmax(xmax, o->units[u].end);
      }
      tp = ff_runreport_timeline_path(c, w, path);
      r = tp ? draw_timeline(rr, c, w, tp, top, xmax) : -1;
      free(tp);
    }
  return r;
}

int
ff_report_svg(const struct ff_runreport *rr, const char *path)
{
  return ff_report_svg_top(rr, path, FF_RUNREPORT_TOP);
}
