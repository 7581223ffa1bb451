/* fusefarm: per-thread last error.
 *
 * Invariants: every core function that fails returns -1 (or NULL) after
 * recording one message with ff_error(); callers print ff_errmsg().  The
 * message is lowercase, names what failed first and has no full stop.
 * The buffer is thread-local, so concurrent callers never see each
 * other's messages.
 */
#ifndef FF_ERROR_H
#define FF_ERROR_H

#include <stdarg.h>

/* Record a message (printf format; %m is expanded from errno by the C
 * library).  Always returns -1 so callers can write
 * `return ff_error("open %s: %m", path);`.
 */
int ff_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int ff_verror(const char *fmt, va_list ap)
  __attribute__((format(printf, 1, 0)));

/* Prefix the current message with more context ("spec.conf: " + old). */
int ff_error_prefix(const char *fmt, ...)
  __attribute__((format(printf, 1, 2)));

/* The last message recorded in this thread ("" if none).  Owned by the
 * library; valid until the next ff_error() in this thread. */
const char *ff_errmsg(void);

#endif
