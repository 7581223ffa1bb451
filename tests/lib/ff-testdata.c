/* fusefarm unit tests: a file of tests/data as a string (ff-testdata.h). */
#include "ff-testdata.h"
#include "ff-error.h"
#include "ff-runreport.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

/* tests/data/NAME's path into path[4096]. */
static void
data_path(const char *name, char *path, size_t len)
{
  const char *dir = getenv("FF_TEST_DATA");

  if (!dir)
    fail_msg("FF_TEST_DATA is not set (ctest sets it to tests/data)");
  snprintf(path, len, "%s/%s", dir, name);
}

char *
ff_test_data(const char *name)
{
  char path[4096];
  char *buf = NULL;
  long n = 0;
  FILE *f;

  data_path(name, path, sizeof path);
  f = fopen(path, "rb");
  if (!f)
    fail_msg("%s: cannot open", path);
  if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 ||
      fseek(f, 0, SEEK_SET) < 0 || !(buf = malloc((size_t)n + 1)) ||
      fread(buf, 1, (size_t)n, f) != (size_t)n)
    fail_msg("%s: cannot read", path);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

struct ff_runreport *
ff_test_runreport(const char *name)
{
  char path[4096];
  struct ff_runreport *rr;

  data_path(name, path, sizeof path);
  rr = ff_runreport_load_file(path);
  if (!rr)
    fail_msg("%s: %s", path, ff_errmsg());
  return rr;
}
