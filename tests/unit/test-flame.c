/* ff-flame: folding `perf script` text (tests/data/flame-perf-script.txt,
 * written by hand in perf 6.1's layout: task events, a comm with a
 * space, a frame without a symbol, a C++ name, the farm's daemon, the
 * runner, perf and a stranger's lvm), the folded file form, the SVG's
 * frames and widths, and which frames grew between two sets. */
#include "ff-test.h"
#include "ff-capture.h"
#include "ff-flame.h"
#include "ff-testdata.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runner is 100, perf 150 (151 its child), the daemon 300; lvm 201
 * and 202 are the runner's; lvm 400 is someone else's. */
static const struct ff_flame_filter run_filter = {
  .root = 100, .skip = 150, .farm = 300};

static const char folded_want[] =
  "fusefarm_[f];fuse_session_loop_mt_[f];ff_server_begin_[f];"
  "fuse_dev_do_read_[k] 1\n"
  "lvm worker;worker_fn 1\n"
  "lvm;main;[libdevmapper.so.1.02.1] 1\n"
  "lvm;main;lvm_run_command;dev_read_bytes;__read;do_syscall_64_[k];"
  "ksys_read_[k] 2\n"
  "lvm;main;lvm_run_command;label_scan 1\n"
  "lvm;main;operator new(unsigned long) 1\n";

static struct ff_flame *
parse_data(const struct ff_flame_filter *flt)
{
  char *text = ff_test_data("flame-perf-script.txt");
  FILE *in = fmemopen(text, strlen(text), "r");
  struct ff_flame *fl = ff_flame_new();

  assert_non_null(in);
  assert_nonnull_err(fl);
  assert_ok(ff_flame_parse_perf(fl, in, "flame-perf-script.txt", flt));
  fclose(in);
  free(text);
  return fl;
}

static char *
folded(const struct ff_flame *fl)
{
  struct ff_capture c;

  assert_ok(ff_flame_write_folded(fl, ff_capture_open(&c)));
  return ff_capture_close(&c);
}

static void
test_fold(void **state)
{
  struct ff_flame *fl = parse_data(&run_filter);
  char *text = folded(fl);

  (void)state;
  assert_string_equal(text, folded_want);
  assert_int_equal(ff_flame_seen(fl), 12);
  assert_int_equal(ff_flame_samples(fl), 7);
  assert_int_equal(ff_flame_nstacks(fl), 6);
  free(text);
  ff_flame_free(fl);

  /* No filter: every sample, the runner's and perf's and the stranger's
   * too (the daemon's frames are then not the farm's). */
  fl = parse_data(NULL);
  text = folded(fl);
  assert_int_equal(ff_flame_samples(fl), 12);
  assert_non_null(strstr(text, "\nswapper;default_idle_[k] 1\n"));
  assert_non_null(strstr(text, "\nperf;perf_poll_[k] 2\n"));
  assert_non_null(strstr(text, "\nlvm;main;label_scan 1\n"));
  assert_non_null(strstr(text, "fusefarm;fuse_session_loop_mt;"));
  assert_null(strstr(text, "_[f]"));
  free(text);
  ff_flame_free(fl);
}

static void
test_folded_roundtrip(void **state)
{
  struct ff_flame *fl = parse_data(&run_filter), *back = ff_flame_new();
  char *text = folded(fl), *again;
  FILE *in = fmemopen(text, strlen(text), "r");

  (void)state;
  assert_ok(ff_flame_read_folded(back, in, "x.folded"));
  fclose(in);
  again = folded(back);
  assert_string_equal(again, text);
  assert_int_equal(ff_flame_samples(back), 7);
  /* Merging a set into itself doubles every count. */
  assert_ok(ff_flame_merge(back, fl));
  assert_int_equal(ff_flame_samples(back), 14);
  free(again);
  again = folded(back);
  assert_non_null(strstr(again, "\nlvm;main;lvm_run_command;label_scan 2\n"));
  free(again);
  free(text);
  ff_flame_free(back);
  ff_flame_free(fl);
}

/* perf 6.1 writes a thread it has no name for as ":-1  3060/-1" (seen
 * in a ci-small run): a sample, not a malformed line. */
static void
test_unnamed_thread(void **state)
{
  static const char text[] = ":-1  3060/-1    \n"
                             "\tffffffff81a0c1d0 do_exit ([kernel.kallsyms])\n"
                             "\n"
                             "lvm -1/-1\n"
                             "\t55550000c000 main (/usr/sbin/lvm)\n";
  struct ff_flame *fl = ff_flame_new();
  FILE *in = fmemopen((void *)text, strlen(text), "r");
  char *got;

  (void)state;
  assert_ok(ff_flame_parse_perf(fl, in, "p", NULL));
  fclose(in);
  got = folded(fl);
  assert_string_equal(got, ":-1;do_exit_[k] 1\nlvm;main 1\n");
  free(got);
  ff_flame_free(fl);
}

static void
test_bad_input(void **state)
{
  static const struct {
    const char *text, *error;
  } cases[] = {
    {"\t    55550000c000 main (/usr/sbin/lvm)\n",
     "p line 1: a frame outside a sample"},
    {"lvm 1/1\n\tnot-hex main (/usr/sbin/lvm)\n",
     "p line 2: expected ADDRESS SYMBOL (OBJECT)"},
    {"lvm 1/1\n\n[ perf record: woken up ]\n", "p line 3: expected COMM "
                                               "PID/TID"},
  };
  static const struct {
    const char *text, *error;
  } fcases[] = {
    {"a;b 3\nno-count\n", "f:2: expected STACK COUNT"},
    {"a;b x\n", "f:1: expected STACK COUNT"},
    {"a;;b 3\n", "f:1: empty frame in stack 'a;;b'"},
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct ff_flame *fl = ff_flame_new();
    FILE *in = fmemopen((void *)cases[i].text, strlen(cases[i].text), "r");

    assert_int_equal(ff_flame_parse_perf(fl, in, "p", NULL), -1);
    if (strncmp(ff_errmsg(), cases[i].error, strlen(cases[i].error)))
      fail_msg("case %zu: '%s', want '%s...'", i, ff_errmsg(), cases[i].error);
    fclose(in);
    ff_flame_free(fl);
  }
  for (size_t i = 0; i < sizeof fcases / sizeof *fcases; i++) {
    struct ff_flame *fl = ff_flame_new();
    FILE *in = fmemopen((void *)fcases[i].text, strlen(fcases[i].text), "r");

    assert_int_equal(ff_flame_read_folded(fl, in, "f"), -1);
    if (strncmp(ff_errmsg(), fcases[i].error, strlen(fcases[i].error)))
      fail_msg("folded case %zu: '%s', want '%s...'", i, ff_errmsg(),
               fcases[i].error);
    fclose(in);
    ff_flame_free(fl);
  }
}

/* The frames of an SVG: each <rect class="f" ...>'s width, and the
 * <title> before it. */
struct svgframe {
  char title[256];
  double width;
};

static size_t
svg_frames(const char *svg, struct svgframe *f, size_t max)
{
  size_t n = 0;

  for (const char *p = svg; (p = strstr(p, "<g class=\"f\"><title>"));) {
    const char *t = p + strlen("<g class=\"f\"><title>");
    const char *e = strstr(t, "</title><rect class=\"f\"");
    const char *w = e ? strstr(e, "width=\"") : NULL;

    assert_non_null(w);
    assert_true(n < max);
    snprintf(f[n].title, sizeof f[n].title, "%.*s", (int)(e - t), t);
    f[n].width = strtod(w + 7, NULL);
    n++;
    p = w;
  }
  return n;
}

static const struct svgframe *
frame_titled(const struct svgframe *f, size_t n, const char *prefix)
{
  for (size_t i = 0; i < n; i++)
    if (!strncmp(f[i].title, prefix, strlen(prefix)))
      return &f[i];
  fail_msg("no frame titled '%s...'", prefix);
  return NULL;
}

static void
test_svg(void **state)
{
  struct ff_flame *fl = parse_data(&run_filter);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  struct ff_flame_svg_info info;
  struct svgframe f[64];
  size_t n;
  double all;

  (void)state;
  assert_ok(ff_flame_svg(fl, NULL, "config 1 <pvs>", out, &info));
  fclose(out);
  /* all; the daemon's 4; "lvm worker" and worker_fn; lvm, main and its
   * 8 frames below. */
  assert_int_equal(info.frames, 17);
  assert_int_equal(info.hidden, 0);
  assert_int_equal(info.depth, 8);
  n = svg_frames(buf, f, 64);
  assert_int_equal(n, 17);
  assert_non_null(strstr(buf, "config 1 &lt;pvs&gt;"));
  all = frame_titled(f, n, "all (all): 7 samples, 100.00%")->width;
  assert_true(fabs(all - 1180) < 0.01);
  /* Widths in proportion to samples, whatever the frame's kind. */
  assert_true(fabs(frame_titled(f, n, "lvm (user): 5 samples, 71.43%")->width -
                   all * 5 / 7) < 0.01);
  assert_true(
    fabs(frame_titled(f, n, "ksys_read (kernel): 2 samples, 28.57%")->width -
         all * 2 / 7) < 0.01);
  assert_true(
    fabs(
      frame_titled(f, n, "ff_server_begin (farm): 1 samples, 14.29%")->width -
      all / 7) < 0.01);
  frame_titled(f, n, "operator new(unsigned long) (user): 1 samples");
  frame_titled(f, n, "[libdevmapper.so.1.02.1] (user): 1 samples");
  /* Kinds have their colours: the kernel frames are amber (red
   * channel >= 235, blue <= 60), the farm's green. */
  {
    const char *k = strstr(buf, "<title>ksys_read (kernel)");
    const char *g = strstr(buf, "<title>ff_server_begin (farm)");
    unsigned c;

    assert_non_null(k);
    assert_non_null(g);
    assert_int_equal(sscanf(strstr(k, "fill=\"#") + 7, "%6x", &c), 1);
    assert_true((c >> 16) >= 235 && (c & 0xff) <= 60);
    assert_int_equal(sscanf(strstr(g, "fill=\"#") + 7, "%6x", &c), 1);
    assert_true(((c >> 8) & 0xff) > (c >> 16) && ((c >> 8) & 0xff) >= 170);
  }
  free(buf);
  ff_flame_free(fl);
}

/* b: mostly label_scan; the reads as in a. */
static struct ff_flame *
grown(void)
{
  struct ff_flame *b = ff_flame_new();

  assert_ok(ff_flame_add(b, "lvm;main;lvm_run_command;label_scan", 6));
  assert_ok(ff_flame_add(b,
                         "lvm;main;lvm_run_command;dev_read_bytes;__read;"
                         "do_syscall_64_[k];ksys_read_[k]",
                         2));
  return b;
}

static void
test_grew(void **state)
{
  struct ff_flame *a = parse_data(&run_filter), *b = grown();
  struct ff_flame_delta *d;
  long n = ff_flame_grew(a, b, 20, &d);
  static const struct {
    const char *name;
    double a_incl, b_incl;
  } want[] = {
    {"label_scan", 1.0 / 7, 6.0 / 8},
    {"lvm_run_command", 3.0 / 7, 8.0 / 8},
    {"lvm", 5.0 / 7, 1}, /* lvm and main tie: by name */
    {"main", 5.0 / 7, 1},
  };

  (void)state;
  assert_int_equal(n, 4);
  for (long i = 0; i < n; i++) {
    assert_string_equal(d[i].name, want[i].name);
    assert_true(fabs(d[i].a_incl - want[i].a_incl) < 1e-9);
    assert_true(fabs(d[i].b_incl - want[i].b_incl) < 1e-9);
  }
  assert_true(fabs(d[0].b_self - 6.0 / 8) < 1e-9);
  assert_true(fabs(d[0].a_self - 1.0 / 7) < 1e-9);
  ff_flame_deltas_free(d, (size_t)n);
  /* max cuts the list; nothing grew from a set to itself. */
  assert_int_equal(ff_flame_grew(a, b, 1, &d), 1);
  assert_string_equal(d[0].name, "label_scan");
  ff_flame_deltas_free(d, 1);
  assert_int_equal(ff_flame_grew(a, a, 20, &d), 0);
  ff_flame_deltas_free(d, 0);

  /* The table and the difference graph. */
  {
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    struct ff_flame_svg_info info;
    struct svgframe f[64];
    size_t nf;
    const char *red, *blue;

    assert_ok(ff_flame_print_grew(a, b, 20, out));
    fclose(out);
    assert_non_null(strstr(buf, "   A incl  B incl  change  A self  B self  "
                                "frame\n"
                                "   14.29%  75.00%  +60.71  14.29%  75.00%  "
                                "label_scan\n"));
    free(buf);
    buf = NULL;
    out = open_memstream(&buf, &len);
    assert_ok(ff_flame_svg(b, a, "diff", out, &info));
    fclose(out);
    /* b's frames only: all, lvm, main, lvm_run_command, label_scan and
     * the 4 of the reads. */
    assert_int_equal(info.frames, 9);
    nf = svg_frames(buf, f, 64);
    assert_int_equal(nf, 9);
    assert_true(fabs(info.max_delta - (0.75 - 1.0 / 7)) < 1e-9);
    frame_titled(f, nf,
                 "label_scan (user): 6 samples, 75.00% (before: "
                 "14.29%, +60.71 points)");
    /* The deepest red is label_scan's; ksys_read shrank (2/7 -> 2/8):
     * blue. */
    red = strstr(buf, "<title>label_scan (user)");
    blue = strstr(buf, "<title>ksys_read (kernel)");
    assert_non_null(red);
    assert_non_null(blue);
    assert_non_null(strstr(red, "fill=\"#ff3737\""));
    {
      unsigned c;

      assert_int_equal(sscanf(strstr(blue, "fill=\"#") + 7, "%6x", &c), 1);
      assert_true((c & 0xff) == 0xff && (c >> 16) < 0xff);
    }
    free(buf);
  }
  ff_flame_free(a);
  ff_flame_free(b);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fold),      cmocka_unit_test(test_folded_roundtrip),
    cmocka_unit_test(test_bad_input), cmocka_unit_test(test_svg),
    cmocka_unit_test(test_grew),      cmocka_unit_test(test_unnamed_thread),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
