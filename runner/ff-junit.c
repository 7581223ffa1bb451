/* fusefarm: a run document as a JUnit XML report (see ff-junit.h,
 * docs/ci.md).  The counts of every suite are computed from the model
 * before it is printed, since they are attributes of its opening tag.
 * No threads. */
#include "ff-junit.h"

#include "ff-error.h"
#include "ff-file.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- escaping ---------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when the
 * bytes there are not one (overlong forms and surrogates included). */
static size_t
utf8_len(const unsigned char *s)
{
  size_t n;
  uint32_t c;

  if (s[0] < 0x80)
    return 1;
  if ((s[0] & 0xe0) == 0xc0)
    n = 2, c = s[0] & 0x1f;
  else if ((s[0] & 0xf0) == 0xe0)
    n = 3, c = s[0] & 0x0f;
  else if ((s[0] & 0xf8) == 0xf0)
    n = 4, c = s[0] & 0x07;
  else
    return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    c = c << 6 | (s[i] & 0x3f);
  }
  if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
      (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
      (c >= 0xd800 && c <= 0xdfff) || c == 0xfffe || c == 0xffff)
    return 0;
  return n;
}

char *
ff_junit_escape(const char *s, int attr)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  const unsigned char *p = (const unsigned char *)(s ? s : "");

  if (!f) {
    ff_error("junit: out of memory");
    return NULL;
  }
  while (*p) {
    size_t n;

    switch (*p) {
    case '&':
      fputs("&amp;", f);
      break;
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    case '\'':
      fputs("&apos;", f);
      break;
    case '\t':
    case '\n':
      /* an attribute's whitespace is normalised to spaces unless it is
       * a character reference */
      if (attr)
        fprintf(f, "&#%d;", *p);
      else
        fputc(*p, f);
      break;
    case '\r':
      fputs("&#13;", f);
      break;
    default:
      if (*p < 0x20 || *p == 0x7f) {
        fputs("\xef\xbf\xbd", f); /* U+FFFD: XML 1.0 has no way to say it */
        break;
      }
      n = utf8_len(p);
      if (!n) {
        fputs("\xef\xbf\xbd", f);
        break;
      }
      fwrite(p, 1, n, f);
      p += n;
      continue;
    }
    p++;
  }
  if (fclose(f) != 0 || !buf) {
    free(buf);
    ff_error("junit: out of memory");
    return NULL;
  }
  return buf;
}

/* ---- the report -------------------------------------------------------- */

/* A stream and whether an escape failed (an allocation). */
struct jw {
  FILE *out;
  bool oom;
};

/* fputs of s escaped (attr as in ff_junit_escape). */
static void
put(struct jw *w, const char *s, int attr)
{
  char *e = ff_junit_escape(s, attr);

  if (!e)
    w->oom = true;
  else
    fputs(e, w->out);
  free(e);
}

/* ` NAME="VALUE"` */
static void
attr(struct jw *w, const char *name, const char *value)
{
  fprintf(w->out, " %s=\"", name);
  put(w, value, 1);
  fputc('"', w->out);
}

/* A workload's time: its runs' wall times summed. */
static double
workload_time(const struct ff_rr_workload *wl)
{
  double t = 0;

  for (size_t r = 0; r < wl->nruns; r++)
    t += wl->runs[r].wall;
  return t;
}

static bool
workload_failed(const struct ff_rr_workload *wl)
{
  return wl->failed_runs || wl->failed_units;
}

/* The opening tag of a suite with its counts. */
static void
suite_open(struct jw *w, const struct ff_runreport *rr, const char *name,
           size_t tests, size_t failures, size_t errors, double time)
{
  char *full = NULL;

  if (asprintf(&full, "%s: %s", rr->scenario, name) < 0) {
    w->oom = true;
    return;
  }
  fputs("  <testsuite", w->out);
  attr(w, "name", full);
  fprintf(w->out,
          " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" "
          "time=\"%.3f\"",
          tests, failures, errors, time);
  attr(w, "timestamp", rr->started);
  fputs(">\n", w->out);
  free(full);
}

/* A failed workload's <failure>: the message is its first error line, or
 * which run failed with what exit status; the text has one line per
 * failed run and the units count. */
static void
workload_failure(struct jw *w, const struct ff_rr_workload *wl)
{
  char msg[256];

  if (wl->message)
    snprintf(msg, sizeof msg, "%s", wl->message);
  else if (wl->failed_runs)
    snprintf(msg, sizeof msg, "%zu of %zu runs failed (worst exit %lld)",
             wl->failed_runs, wl->nruns, wl->worst_exit);
  else
    snprintf(msg, sizeof msg, "%zu of %zu units exited non-zero",
             wl->failed_units, wl->nunits);
  fputs("      <failure", w->out);
  attr(w, "message", wl->message ? wl->message : msg);
  attr(w, "type", wl->failed_runs ? "lvm command failed" : "unit failed");
  fputs(">", w->out);
  for (size_t r = 0; r < wl->nruns; r++) {
    const struct ff_rr_run *run = &wl->runs[r];
    char line[128];

    if (!run->exit && !run->errors)
      continue;
    snprintf(line, sizeof line,
             "run %zu of %zu: exit %lld, %lld failed command%s%s", r + 1,
             wl->nruns, run->exit, run->errors, run->errors == 1 ? "" : "s",
             run->message ? ": " : "\n");
    put(w, line, 0);
    if (run->message) {
      put(w, run->message, 0);
      fputc('\n', w->out);
    }
  }
  if (wl->failed_units) {
    snprintf(msg, sizeof msg,
             "%zu of %zu units exited non-zero in the last repetition\n",
             wl->failed_units, wl->nunits);
    put(w, msg, 0);
  }
  fputs("</failure>\n", w->out);
}

static void
print_config(struct jw *w, const struct ff_runreport *rr,
             const struct ff_rr_config *c)
{
  size_t failures = 0;
  double time = 0;
  char name[64], *title = NULL;

  for (size_t j = 0; j < c->nworkloads; j++) {
    failures += workload_failed(&c->workloads[j]);
    time += workload_time(&c->workloads[j]);
  }
  if (asprintf(&title, "config %lld (%s)", c->id, c->label) < 0) {
    w->oom = true;
    return;
  }
  suite_open(w, rr, title, c->nworkloads, failures, 0, time);
  free(title);
  if (c->nsettings) {
    fputs("    <properties>\n", w->out);
    for (size_t k = 0; k < c->nsettings; k++) {
      fputs("      <property", w->out);
      attr(w, "name", c->settings[k].key);
      attr(w, "value", c->settings[k].text);
      fputs("/>\n", w->out);
    }
    fputs("    </properties>\n", w->out);
  }
  snprintf(name, sizeof name, "config-%lld", c->id);
  for (size_t j = 0; j < c->nworkloads; j++) {
    const struct ff_rr_workload *wl = &c->workloads[j];
    char *cls = NULL;

    if (asprintf(&cls, "%s.%s", rr->scenario, name) < 0) {
      w->oom = true;
      return;
    }
    fputs("    <testcase", w->out);
    attr(w, "classname", cls);
    attr(w, "name", wl->name);
    fprintf(w->out, " time=\"%.3f\"", workload_time(wl));
    free(cls);
    if (!workload_failed(wl)) {
      fputs("/>\n", w->out);
      continue;
    }
    fputs(">\n", w->out);
    workload_failure(w, wl);
    fputs("    </testcase>\n", w->out);
  }
  fputs("  </testsuite>\n", w->out);
}

/* An expression's evaluations as text, one a line. */
static void
expect_text(struct jw *w, const struct ff_rr_expect *x)
{
  for (size_t k = 0; k < x->nevals; k++) {
    const struct ff_rr_expect_eval *v = &x->evals[k];
    char *line = NULL;

    if (asprintf(&line, "[%lld] %s: %s%s\n", v->config, v->label,
                 v->holds < 0 ? "not judged: " : "",
                 v->holds < 0 ? v->reason : v->text) < 0) {
      w->oom = true;
      return;
    }
    put(w, line, 0);
    free(line);
  }
}

/* The first evaluation that does not hold (or is not judged: want -1). */
static const struct ff_rr_expect_eval *
first_eval(const struct ff_rr_expect *x, int want)
{
  for (size_t k = 0; k < x->nevals; k++)
    if (x->evals[k].holds == want)
      return &x->evals[k];
  return x->nevals ? &x->evals[0] : NULL;
}

static void
print_expect(struct jw *w, const struct ff_runreport *rr)
{
  size_t failures = 0, errors = 0;
  char *cls = NULL;

  for (size_t i = 0; i < rr->nexpect; i++) {
    failures += !strcmp(rr->expect[i].result, "fails");
    errors += strcmp(rr->expect[i].result, "fails") &&
              strcmp(rr->expect[i].result, "holds");
  }
  if (asprintf(&cls, "%s.expect", rr->scenario) < 0) {
    w->oom = true;
    return;
  }
  suite_open(w, rr, "expect", rr->nexpect, failures, errors, 0);
  for (size_t i = 0; i < rr->nexpect; i++) {
    const struct ff_rr_expect *x = &rr->expect[i];
    bool fails = !strcmp(x->result, "fails");
    const struct ff_rr_expect_eval *v = first_eval(x, fails ? 0 : -1);
    char *msg = NULL;

    fputs("    <testcase", w->out);
    attr(w, "classname", cls);
    attr(w, "name", x->expression);
    fputs(" time=\"0\"", w->out);
    if (!strcmp(x->result, "holds")) {
      fputs("/>\n", w->out);
      continue;
    }
    if (asprintf(&msg, "%s: %s", x->result,
                 !v             ? x->expression
                 : v->holds < 0 ? v->reason
                                : v->text) < 0) {
      w->oom = true;
      break;
    }
    fprintf(w->out, ">\n      <%s", fails ? "failure" : "error");
    attr(w, "message", msg);
    attr(w, "type", fails ? "expectation failed" : "not judged");
    fputs(">", w->out);
    expect_text(w, x);
    fprintf(w->out, "</%s>\n    </testcase>\n", fails ? "failure" : "error");
    free(msg);
  }
  free(cls);
  fputs("  </testsuite>\n", w->out);
}

/* The run stopped early: one testcase in error. */
static void
print_run_error(struct jw *w, const struct ff_runreport *rr)
{
  char *cls = NULL;

  if (asprintf(&cls, "%s.run", rr->scenario) < 0) {
    w->oom = true;
    return;
  }
  suite_open(w, rr, "run", 1, 0, 1, 0);
  fputs("    <testcase", w->out);
  attr(w, "classname", cls);
  fputs(" name=\"run\" time=\"0\">\n      <error", w->out);
  attr(w, "message", rr->error);
  fputs(" type=\"run stopped\">", w->out);
  put(w, rr->error, 0);
  fputs("</error>\n    </testcase>\n  </testsuite>\n", w->out);
  free(cls);
}

int
ff_junit_print(const struct ff_runreport *rr, FILE *out)
{
  struct jw w = {.out = out};
  size_t tests = rr->nexpect + (rr->error != NULL), failures = 0;
  size_t errors = rr->error != NULL;
  double time = 0;
  char *title = NULL;

  for (size_t i = 0; i < rr->nexpect; i++) {
    failures += !strcmp(rr->expect[i].result, "fails");
    errors += strcmp(rr->expect[i].result, "fails") &&
              strcmp(rr->expect[i].result, "holds");
  }
  for (size_t i = 0; i < rr->nconfigs; i++)
    for (size_t j = 0; j < rr->configs[i].nworkloads; j++) {
      tests++;
      failures += workload_failed(&rr->configs[i].workloads[j]);
      time += workload_time(&rr->configs[i].workloads[j]);
    }
  if (asprintf(&title, "fusefarm run %s", rr->scenario) < 0)
    return ff_error("junit: out of memory");
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", out);
  attr(&w, "name", title);
  /* no "skipped" here: Jenkins' schema (junit-10.xsd) has it on
   * <testsuite> only */
  fprintf(out,
          " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
          tests, failures, errors, time);
  free(title);
  if (rr->error)
    print_run_error(&w, rr);
  if (rr->nexpect)
    print_expect(&w, rr);
  for (size_t i = 0; i < rr->nconfigs; i++)
    print_config(&w, rr, &rr->configs[i]);
  fputs("</testsuites>\n", out);
  if (w.oom)
    return ff_error("junit: out of memory");
  if (ferror(out))
    return ff_error("junit: writing the report: %m");
  return 0;
}

int
ff_junit_write(const struct ff_runreport *rr, const char *path)
{
  FILE *f = ff_fopen_write(path, "w");
  int r;

  if (!f)
    return -1;
  r = ff_junit_print(rr, f);
  if (fclose(f) != 0 && r == 0)
    r = ff_error("junit: %s: %m", path);
  else if (r < 0)
    ff_error_prefix("%s: ", path);
  return r;
}
