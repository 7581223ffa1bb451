/* ff-flame-diff: two configurations' flame graphs compared from run
 * documents and folded files written here by hand: each side over its
 * own total, a frame's inclusive share counted once per sample however
 * often it recurs, the table of what grew, the differential SVG's
 * numbers; and bad input (a configuration the run does not have, a run
 * without flame graphs, a folded file missing, nothing on both sides)
 * named, nothing written; off-CPU graphs compared too where both sides
 * have them, in microseconds. */
#include "ff-test.h"
#include "ff-error.h"
#include "ff-flame-diff.h"
#include "ff-util.h" /* ff_pathf */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A: 4 samples, B: 8.  Inclusive shares, A -> B: lvm 100 -> 100, main
 * 100 -> 75, scan 75 -> 25, read 25 -> 50 (counted once per sample on
 * its recursive stack), other 0 -> 25. */
static const char folded_a[] = "lvm;main;read;read 1\n"
                               "lvm;main;scan 3\n";
static const char folded_b[] = "lvm;main;read;read 4\n"
                               "lvm;main;scan 2\n"
                               "lvm;other 2\n";

static const char doc[] =
  "{\"format\": \"fusefarm-run\", \"configs\": ["
  "{\"id\": 1, \"label\": \"x=1\"}, {\"id\": 2, \"label\": \"x=2\"}],"
  "\"flame\": {\"graphs\": ["
  "{\"config\": 1, \"workload\": \"pvs\", \"folded\": \"a.folded\","
  " \"offcpu\": {\"folded\": \"a.folded\", \"blocked_us\": 4}},"
  "{\"config\": 2, \"workload\": \"pvs\", \"folded\": \"b.folded\","
  " \"offcpu\": {\"folded\": \"b.folded\", \"blocked_us\": 8}},"
  "{\"config\": 1, \"workload\": \"vgs\", \"folded\": \"a.folded\","
  " \"offcpu\": {\"error\": \"no tracefs\"}},"
  "{\"config\": 2, \"workload\": \"vgs\", \"error\": \"perf died\"},"
  "{\"config\": 1, \"workload\": \"lvs\", \"folded\": \"gone.folded\"}"
  "]}}";

static char dir[64];

static void
put(const char *name, const char *text)
{
  char path[PATH_MAX];
  FILE *f;

  ff_pathf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static char *
slurp(const char *path)
{
  FILE *f = fopen(path, "r");
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  int c;

  assert_non_null(f);
  assert_non_null(m);
  while ((c = fgetc(f)) != EOF)
    fputc(c, m);
  fclose(f);
  fclose(m);
  return buf;
}

static int
setup(void **state)
{
  (void)state;
  ff_pathf(dir, sizeof dir, "/tmp/ff-test-flame-diff.XXXXXX");
  if (!mkdtemp(dir))
    return -1;
  put("a.folded", folded_a);
  put("b.folded", folded_b);
  put("run.json", doc);
  return 0;
}

static int
teardown(void **state)
{
  char cmd[128];

  (void)state;
  ff_pathf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Run a comparison; its status, *out and *err its two streams. */
static int
diff(const struct ff_flame_diff *d, char **out, char **err)
{
  size_t lo, le;
  FILE *o = open_memstream(out, &lo), *e = open_memstream(err, &le);
  int rc;

  assert_non_null(o);
  assert_non_null(e);
  rc = ff_flame_diff_runs(d, o, e);
  fclose(o);
  fclose(e);
  return rc;
}

static void
test_configs(void **state)
{
  char run[PATH_MAX], outdir[PATH_MAX], svg[PATH_MAX + 64];
  char *out, *err, *text;

  (void)state;
  ff_pathf(run, sizeof run, "%s/run.json", dir);
  ff_pathf(outdir, sizeof outdir, "%s/out", dir);
  assert_int_equal(
    diff(&(struct ff_flame_diff){run, run, 1, 2, outdir, 0}, &out, &err),
    FF_FLAME_DIFF_OK);
  /* Only what grew, largest change first, ties by name: other and read
   * both +25 points. */
  assert_non_null(strstr(out, "pvs: A config 1 (x=1), 4 samples; B config 2 "
                              "(x=2), 8 samples\n"));
  assert_non_null(strstr(out, "   A incl  B incl  change  A self  B self  "
                              "frame\n"
                              "    0.00%  25.00%  +25.00   0.00%  25.00%  "
                              "other\n"
                              "   25.00%  50.00%  +25.00  25.00%  50.00%  "
                              "read\n"));
  /* main and scan shrank: not in the table (the off-CPU one follows,
   * the same numbers in microseconds, and ends the output). */
  assert_non_null(strstr(out, "  read\n\npvs off-CPU: A config 1 (x=1), 4 us "
                              "blocked; B config 2 (x=2), 8 us blocked\n"));
  assert_string_equal(strstr(strstr(out, "off-CPU"), "  read\n"), "  read\n");
  assert_null(strstr(out, "scan\n"));
  assert_null(strstr(out, "main\n"));
  /* vgs failed on one side: left out, said; lvs is config 1's only. */
  assert_null(strstr(out, "vgs:"));
  assert_non_null(strstr(err, "vgs: the flame graph of config 2 in "));
  assert_non_null(strstr(err, "failed (perf died): left out"));
  assert_non_null(strstr(err, "lvs: no flame graph of config 2 in "));
  /* The graph: B's widths, A's shares in the titles. */
  ff_pathf(svg, sizeof svg, "%s/flame-diff-1-2-pvs.svg", outdir);
  text = slurp(svg);
  assert_non_null(strstr(text, "<title>read (user): 4 samples, 50.00% "
                               "(before: 25.00%, +25.00 points)</title>"));
  assert_non_null(strstr(text, "<title>scan (user): 2 samples, 25.00% "
                               "(before: 75.00%, -50.00 points)</title>"));
  assert_non_null(strstr(text, "<title>other (user): 2 samples, 25.00% "
                               "(before: 0.00%, +25.00 points)</title>"));
  assert_non_null(strstr(text, "deepest red: +50.00 points"));
  assert_non_null(strstr(text, "pvs: config 2 (x=2) against config 1 (x=1)"));
  free(text);
  ff_pathf(svg, sizeof svg, "%s/flame-diff-off-1-2-pvs.svg", outdir);
  text = slurp(svg);
  assert_non_null(strstr(text, "<title>read (user): 4 us, 50.00% "
                               "(before: 25.00%, +25.00 points)</title>"));
  assert_non_null(strstr(text, "against config 1 (x=1): off-CPU, "
                               "microseconds blocked"));
  free(text);
  /* vgs is left out (its config 2 graph failed): its off-CPU too. */
  ff_pathf(svg, sizeof svg, "%s/flame-diff-off-1-2-vgs.svg", outdir);
  assert_int_equal(access(svg, F_OK), -1);
  free(out);
  free(err);

  /* --top 1: the first only. */
  assert_int_equal(
    diff(&(struct ff_flame_diff){run, run, 1, 2, outdir, 1}, &out, &err),
    FF_FLAME_DIFF_OK);
  assert_non_null(strstr(out, "  other\n"));
  assert_null(strstr(out, "  read\n"));
  free(out);
  free(err);

  /* The other way round: scan grew, from 25% to 75%. */
  assert_int_equal(
    diff(&(struct ff_flame_diff){run, run, 2, 1, outdir, 0}, &out, &err),
    FF_FLAME_DIFF_OK);
  assert_non_null(strstr(out, "   25.00%  75.00%  +50.00  25.00%  75.00%  "
                              "scan\n"));
  free(out);
  free(err);
}

static void
test_bad(void **state)
{
  char run[PATH_MAX], noflame[PATH_MAX], outdir[PATH_MAX];
  static const struct {
    const char *doc;
    unsigned a, b;
    const char *error;
  } cases[] = {
    {doc, 1, 3, "has no configuration 3 (its configurations: 1, 2)"},
    {doc, 4, 1, "has no configuration 4 (its configurations: 1, 2)"},
    {"{\"configs\": [{\"id\": 1}, {\"id\": 2}]}", 1, 2,
     "no flame graphs (a run made without --flamegraph"},
    {"{\"configs\": [{\"id\": 1}], \"flame\": {\"error\": \"no flame graphs: "
     "perf cannot record here\"}}",
     1, 1, "no flame graphs: perf cannot record here"},
    {"{\"configs\": [{\"id\": 1}, {\"id\": 2}], \"flame\": {\"graphs\": []}}",
     1, 2, "configuration 1 has no flame graph"},
    {"{\"configs\": [{\"id\": 1}, {\"id\": 2}], \"flame\": {\"graphs\": ["
     "{\"config\": 1, \"workload\": \"pvs\", \"folded\": \"a.folded\"},"
     "{\"config\": 2, \"workload\": \"pvs\", \"folded\": \"gone.folded\"}]}}",
     1, 2, "config 2, pvs: open "},
    {"{\"configs\": [{\"id\": 1}, {\"id\": 2}], \"flame\": {\"graphs\": ["
     "{\"config\": 1, \"workload\": \"pvs\", \"folded\": \"a.folded\"},"
     "{\"config\": 2, \"workload\": \"vgs\", \"folded\": \"b.folded\"}]}}",
     1, 2, "no workload has a flame graph in both config 1 of "},
  };

  (void)state;
  ff_pathf(run, sizeof run, "%s/bad.json", dir);
  ff_pathf(outdir, sizeof outdir, "%s/bad-out", dir);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *out, *err;

    put("bad.json", cases[i].doc);
    if (diff(
          &(struct ff_flame_diff){run, run, cases[i].a, cases[i].b, outdir, 0},
          &out, &err) != FF_FLAME_DIFF_BAD ||
        !strstr(ff_errmsg(), cases[i].error))
      fail_msg("case %zu: '%s', want '...%s...'", i, ff_errmsg(),
               cases[i].error);
    assert_string_equal(out, "");
    free(out);
    free(err);
  }
  /* Checked before anything is written. */
  assert_int_equal(access(outdir, F_OK), -1);

  /* Two documents: configurations paired by id; one without flame
   * graphs is named. */
  ff_pathf(run, sizeof run, "%s/run.json", dir);
  ff_pathf(noflame, sizeof noflame, "%s/noflame.json", dir);
  put("noflame.json", "{\"configs\": [{\"id\": 1}]}");
  {
    char *out, *err;

    assert_int_equal(
      diff(&(struct ff_flame_diff){run, noflame, 0, 0, outdir, 0}, &out, &err),
      FF_FLAME_DIFF_BAD);
    assert_non_null(strstr(ff_errmsg(), "noflame.json: no flame graphs"));
    free(out);
    free(err);
    /* The output directory cannot be made: a write failure. */
    put("afile", "");
    ff_pathf(outdir, sizeof outdir, "%s/afile", dir);
    assert_int_equal(
      diff(&(struct ff_flame_diff){run, run, 1, 2, outdir, 0}, &out, &err),
      FF_FLAME_DIFF_WRITE);
    free(out);
    free(err);
  }
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_configs),
    cmocka_unit_test(test_bad),
  };

  return cmocka_run_group_tests(tests, setup, teardown);
}
