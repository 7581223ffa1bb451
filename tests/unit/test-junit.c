/* ff-junit: the JUnit XML report of a run document (docs/ci.md): XML
 * escaping (entities, control characters, bytes that are not UTF-8) and
 * the report of tests/data/run-sample.json (12 workloads in 4 configs,
 * one failed lvchange run), with and without --expect entries.  The
 * integration test (test-report.sh) parses the same with a real XML
 * parser. */
#include "ff-test.h"
#include "ff-capture.h"
#include "ff-expect.h"
#include "ff-junit.h"
#include "ff-runreport.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static void
test_escape(void **state)
{
  static const struct {
    const char *in;
    int attr;
    const char *out;
  } cases[] = {
    {"plain", 1, "plain"},
    {"a&b<c>d\"e'f", 0, "a&amp;b&lt;c&gt;d&quot;e&apos;f"},
    {"line1\nline2\tx", 0, "line1\nline2\tx"},
    {"line1\nline2\tx", 1, "line1&#10;line2&#9;x"},
    {"cr\r", 0, "cr&#13;"},
    {"bell\a esc\033 del\177", 0,
     "bell\xef\xbf\xbd esc\xef\xbf\xbd "
     "del\xef\xbf\xbd"},
    {"en\xe2\x80\x93"
     "dash",
     1,
     "en\xe2\x80\x93"
     "dash"},
    {"bad\xff\xc3(", 0, "bad\xef\xbf\xbd\xef\xbf\xbd("},
    {"overlong\xc0\xaf", 0, "overlong\xef\xbf\xbd\xef\xbf\xbd"},
    {"cut\xe2\x80", 0, "cut\xef\xbf\xbd\xef\xbf\xbd"},
    {"", 0, ""},
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *e = ff_junit_escape(cases[i].in, cases[i].attr);

    assert_nonnull_err(e);
    if (strcmp(e, cases[i].out))
      fail_msg("case %zu: \"%s\", want \"%s\"", i, e, cases[i].out);
    free(e);
  }
}

static char *
junit(const struct ff_runreport *rr)
{
  struct ff_capture c;

  assert_ok(ff_junit_print(rr, ff_capture_open(&c)));
  return ff_capture_close(&c);
}

static size_t
count(const char *s, const char *what)
{
  size_t n = 0;

  for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
    n++;
  return n;
}

static struct ff_runreport *
sample(json_t **doc)
{
  const char *dir = getenv("FF_TEST_DATA");
  char path[4096];
  json_error_t e;
  char *text;
  struct ff_runreport *rr;

  if (!dir)
    fail_msg("FF_TEST_DATA is not set (ctest sets it to tests/data)");
  snprintf(path, sizeof path, "%s/run-sample.json", dir);
  *doc = json_load_file(path, 0, &e);
  if (!*doc)
    fail_msg("%s: %s", path, e.text);
  text = json_dumps(*doc, JSON_COMPACT);
  rr = ff_runreport_load_text(text, strlen(text), "sample");
  free(text);
  assert_nonnull_err(rr);
  return rr;
}

static void
test_sample(void **state)
{
  json_t *doc;
  struct ff_runreport *rr = sample(&doc);
  char *x = junit(rr);

  (void)state;
  assert_non_null(strstr(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<testsuites name=\"fusefarm run "
                            "short-commands\" tests=\"12\" failures=\"1\" "
                            "errors=\"0\" time=\"64.024\">"));
  assert_int_equal(count(x, "<testsuite "), 4);
  assert_int_equal(count(x, "<testcase "), 12);
  assert_int_equal(count(x, "<failure "), 1);
  assert_non_null(strstr(x, "<testcase classname=\"short-commands.config-3\" "
                            "name=\"lvchange\" time=\"8.444\">\n"
                            "      <failure message=\"1 of 5 runs failed "
                            "(worst exit 5)\""));
  assert_non_null(strstr(x, "run 3 of 5: exit 5, 1 failed command\n"));
  assert_non_null(
    strstr(x, "<property name=\"global/use_aio\" value=\"0\"/>"));
  assert_non_null(strstr(x, "</testsuites>\n"));
  free(x);
  ff_runreport_free(rr);
  json_decref(doc);
}

/* --expect: one testcase per expression; fails is a <failure>, not
 * judged an <error>; a run that stopped early is one more <error>. */
static void
test_expect(void **state)
{
  static const char *exprs[] = {"pvs < 100", "pvs > 100", "lvchange < 100"};
  json_t *doc;
  struct ff_runreport *rr = sample(&doc), *again;
  struct ff_expect *ex[3];
  char *text, *x;
  int rc;

  (void)state;
  for (size_t i = 0; i < 3; i++) {
    ex[i] = ff_expect_parse(exprs[i]);
    assert_nonnull_err(ex[i]);
  }
  rc = ff_expect_judge_all(ex, 3, rr, NULL, doc);
  assert_int_equal(rc, 125);
  json_object_set_new(doc, "error", json_string("mount: <it> & \"failed\""));
  text = json_dumps(doc, JSON_COMPACT);
  again = ff_runreport_load_text(text, strlen(text), "sample");
  assert_nonnull_err(again);
  x = junit(again);
  assert_non_null(strstr(x, "tests=\"16\" failures=\"2\" errors=\"2\""));
  assert_int_equal(count(x, "<testsuite "), 6);
  assert_non_null(strstr(x, "<testcase classname=\"short-commands.expect\" "
                            "name=\"pvs &lt; 100\" time=\"0\"/>"));
  assert_non_null(strstr(x, "name=\"pvs &gt; 100\" time=\"0\">\n"
                            "      <failure message=\"fails: "));
  assert_non_null(strstr(x, "name=\"lvchange &lt; 100\" time=\"0\">\n"
                            "      <error message=\"not judged: "));
  assert_non_null(strstr(x, "<error message=\"mount: &lt;it&gt; &amp; "
                            "&quot;failed&quot;\" type=\"run stopped\">"));
  free(x);
  free(text);
  for (size_t i = 0; i < 3; i++)
    ff_expect_free(ex[i]);
  ff_runreport_free(again);
  ff_runreport_free(rr);
  json_decref(doc);
}

/* A path that cannot be written: an error naming it. */
static void
test_write_error(void **state)
{
  json_t *doc;
  struct ff_runreport *rr = sample(&doc);

  (void)state;
  assert_int_equal(ff_junit_write(rr, "/nonexistent/dir/junit.xml"), -1);
  if (!strstr(ff_errmsg(), "/nonexistent/dir/junit.xml"))
    fail_msg("error does not name the path: %s", ff_errmsg());
  ff_runreport_free(rr);
  json_decref(doc);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_escape),
    cmocka_unit_test(test_sample),
    cmocka_unit_test(test_expect),
    cmocka_unit_test(test_write_error),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
