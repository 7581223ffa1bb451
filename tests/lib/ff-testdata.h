/* fusefarm unit tests: a file of tests/data as a string
 * (tests/lib/ff-testdata.c; linked into every unit test).  ctest sets
 * FF_TEST_DATA to tests/data for every unit test.
 *
 *   char *doc = ff_test_data("fio-randrw.json");
 *   ...
 *   free(doc);
 *   struct ff_runreport *rr = ff_test_runreport("run-event.json");
 */
#ifndef FF_TESTDATA_H
#define FF_TESTDATA_H

/* tests/data/NAME (NAME may hold a subdirectory), NUL-terminated,
 * malloc'd; the test fails when FF_TEST_DATA is unset or the file
 * cannot be read whole. */
char *ff_test_data(const char *name);

/* tests/data/NAME loaded as a run document (ff_runreport_load_file);
 * the test fails, with the loader's message, when it does not load. */
struct ff_runreport *ff_test_runreport(const char *name);

#endif
