/* fusefarm unit tests: what a printer writes, as a string (ff-capture.h). */
#include "ff-capture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

FILE *
ff_capture_open(struct ff_capture *c)
{
  c->buf = NULL;
  c->len = 0;
  c->f = open_memstream(&c->buf, &c->len);
  assert_non_null(c->f);
  return c->f;
}

char *
ff_capture_close(struct ff_capture *c)
{
  assert_int_equal(fclose(c->f), 0);
  c->f = NULL;
  return c->buf;
}
