/* fusefarm unit tests: what a printer writes to a FILE *, as a string
 * (tests/lib/ff-capture.c; linked into every unit test).
 *
 *   struct ff_capture c;
 *   assert_ok(ff_junit_print(rr, ff_capture_open(&c)));
 *   text = ff_capture_close(&c);
 */
#ifndef FF_CAPTURE_H
#define FF_CAPTURE_H

#include <stddef.h>
#include <stdio.h>

struct ff_capture {
  char *buf;
  size_t len;
  FILE *f;
};

/* A memory stream to print into; the test fails if none can be had. */
FILE *ff_capture_open(struct ff_capture *c);

/* Close c's stream: what was printed, NUL-terminated (the caller frees
 * it); the test fails if the stream does. */
char *ff_capture_close(struct ff_capture *c);

#endif
