/* fusefarm: per-thread last error (see ff-error.h). */
#include "ff-error.h"

#include <stdio.h>
#include <string.h>

#define FF_ERRMSG_MAX 1024

static _Thread_local char errbuf[FF_ERRMSG_MAX];

int
ff_verror(const char *fmt, va_list ap)
{
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  return -1;
}

int
ff_error(const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  ff_verror(fmt, ap);
  va_end(ap);
  return -1;
}

int
ff_error_prefix(const char *fmt, ...)
{
  char old[FF_ERRMSG_MAX];
  va_list ap;
  int n;

  memcpy(old, errbuf, sizeof old);
  va_start(ap, fmt);
  n = vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof errbuf)
    snprintf(errbuf + n, sizeof errbuf - (size_t)n, "%s", old);
  return -1;
}

const char *
ff_errmsg(void)
{
  return errbuf;
}
