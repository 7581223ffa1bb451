/* fusefarm: a run document as a JUnit XML report (docs/ci.md).
 *
 * `fusefarm run --junit FILE` and `fusefarm report RUN.json --junit FILE`
 * write the same report from the same model (ff-runreport.h), in the
 * schema CI test reporters read (Jenkins' junit plugin, GitLab's
 * artifacts:reports:junit, GitHub actions that publish test results):
 *
 *   <testsuites name="fusefarm run SCENARIO" tests= failures= errors=
 *               time=>
 *     <testsuite name="SCENARIO: run">             only when the run
 *       <testcase name="run"><error .../></...>    stopped early
 *     <testsuite name="SCENARIO: expect">          with --expect
 *       <testcase classname="SCENARIO.expect" name="EXPR">  one per EXPR:
 *         passes when it holds, <failure> when it fails, <error> when it
 *         could not be judged (exit 125: an error, not a skip, so that a
 *         CI gate that could not be evaluated is red, not green)
 *     <testsuite name="SCENARIO: config ID (LABEL)">   one per config
 *       <properties>: the config's settings
 *       <testcase classname="SCENARIO.config-ID" name="WORKLOAD"
 *                 time="its runs' wall times summed">
 *         <failure> when a run or (event activation) a unit failed: the
 *         message is the first error line the document records
 *
 * Every string is escaped for XML: & < > " ' as entities, tab, newline
 * and carriage return in attributes as character references, other
 * control characters and bytes that are not UTF-8 as U+FFFD (XML 1.0
 * cannot carry them at all).  No <skipped> is written; a <testsuite>'s
 * skipped attribute is there (0) for readers that want it.  The output
 * validates against Jenkins' junit-10.xsd (xunit plugin), the strictest
 * of the common schemas (it has no skipped on <testsuites>).
 *
 * Errors: -1 after one ff_error() message.  No threads; the model is
 * borrowed for the call.
 */
#ifndef FF_JUNIT_H
#define FF_JUNIT_H

#include <stdio.h>

#include "ff-runreport.h"

/* Write rr's JUnit report to out.  -1 with ff_error ("junit: writing
 * the report: REASON") when writing fails. */
int ff_junit_print(const struct ff_runreport *rr, FILE *out);

/* ff_junit_print() to the file at path, created or truncated (never
 * through a symbolic link: ff_fopen_write).  -1 with ff_error naming
 * path on failure; the file may then be partly written. */
int ff_junit_write(const struct ff_runreport *rr, const char *path);

/* s escaped for XML text (attr false) or an attribute value (attr
 * true), as the header says: a malloc'd string (caller frees), or NULL
 * with ff_error on allocation failure. */
char *ff_junit_escape(const char *s, int attr);

#endif
