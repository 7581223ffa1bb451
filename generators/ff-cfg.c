/* fusefarm: helpers for our libconfig formats (see ff-cfg.h). */
#include "ff-cfg.h"
#include "ff-error.h"
#include "ff-util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Report an error on setting s as "file:line: path: message". */
int
ff_cfg_err(const char *file, const config_setting_t *s, const char *path,
           const char *fmt, ...)
{
  char msg[768];
  const char *where = NULL;
  int line = 0;
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (s) {
    where = config_setting_source_file(s);
    line = (int)config_setting_source_line(s);
  }
  if (!where)
    where = file;
  if (line > 0)
    return ff_error("%s:%d: %s: %s", where, line, path, msg);
  return ff_error("%s: %s: %s", where, path, msg);
}

/* Key paths are short; a path that would not fit is cut, never overrun. */
void
ff_cfg_pathf(char *out, size_t len, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(out, len, fmt, ap);
  va_end(ap);
  if (n < 0)
    out[0] = '\0';
}

void
ff_cfg_join(char *out, size_t len, const char *path, const char *key)
{
  if (path[0])
    ff_cfg_pathf(out, len, "%s.%s", path, key);
  else
    ff_cfg_pathf(out, len, "%s", key);
}

int
ff_cfg_check_keys(const char *file, const config_setting_t *grp,
                  const char *path, const char *const *allowed)
{
  int n = config_setting_length(grp);

  for (int i = 0; i < n; i++) {
    const config_setting_t *s = config_setting_get_elem(grp, (unsigned)i);
    const char *name = config_setting_name(s);
    char kp[256], list[512] = "";
    int ok = 0;

    for (const char *const *a = allowed; *a; a++)
      if (!strcmp(*a, name))
        ok = 1;
    if (ok)
      continue;
    for (const char *const *a = allowed; *a; a++) {
      strncat(list, *a, sizeof list - strlen(list) - 1);
      if (a[1])
        strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    ff_cfg_join(kp, sizeof kp, path, name);
    return ff_cfg_err(file, s, kp, "unknown key (expected one of: %s)", list);
  }
  return 0;
}

/* Each getter returns 1 when the key is present and valid, 0 when it is
 * absent (out untouched), -1 on error. */
int
ff_cfg_int(const char *file, const config_setting_t *grp, const char *path,
           const char *key, int64_t min, int64_t max, int64_t *out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];
  int64_t v;

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  if (config_setting_type(s) != CONFIG_TYPE_INT &&
      config_setting_type(s) != CONFIG_TYPE_INT64)
    return ff_cfg_err(file, s, kp, "expected an integer");
  v = config_setting_get_int64(s);
  if (v < min || v > max)
    return ff_cfg_err(file, s, kp,
                      "%lld is out of range (expected %lld to %lld)",
                      (long long)v, (long long)min, (long long)max);
  *out = v;
  return 1;
}

int
ff_cfg_uint(const char *file, const config_setting_t *grp, const char *path,
            const char *key, unsigned min, unsigned max, unsigned *out)
{
  int64_t v;
  int r = ff_cfg_int(file, grp, path, key, min, max, &v);

  if (r == 1)
    *out = (unsigned)v;
  return r;
}

int
ff_cfg_size_value(const char *file, const config_setting_t *s, const char *kp,
                  uint64_t *out)
{
  switch (config_setting_type(s)) {
  case CONFIG_TYPE_INT:
  case CONFIG_TYPE_INT64: {
    int64_t v = config_setting_get_int64(s);

    if (v < 0)
      return ff_cfg_err(file, s, kp, "a size cannot be negative");
    *out = (uint64_t)v;
    return 1;
  }
  case CONFIG_TYPE_STRING:
    if (ff_parse_size(config_setting_get_string(s), out) < 0)
      return ff_cfg_err(file, s, kp, "%s", ff_errmsg());
    return 1;
  default:
    return ff_cfg_err(file, s, kp,
                      "expected a size (an integer or a string such as "
                      "\"64M\")");
  }
}

int
ff_cfg_size(const char *file, const config_setting_t *grp, const char *path,
            const char *key, uint64_t *out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  return ff_cfg_size_value(file, s, kp, out);
}

int
ff_cfg_str(const char *file, const config_setting_t *grp, const char *path,
           const char *key, char **out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];
  char *v;

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  if (config_setting_type(s) != CONFIG_TYPE_STRING)
    return ff_cfg_err(file, s, kp, "expected a string");
  v = strdup(config_setting_get_string(s));
  if (!v)
    return ff_cfg_err(file, s, kp, "out of memory");
  free(*out);
  *out = v;
  return 1;
}

/* A finite number in [min, max]. */
int
ff_cfg_float(const char *file, const config_setting_t *grp, const char *path,
             const char *key, double min, double max, double *out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];
  double v;

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  switch (config_setting_type(s)) {
  case CONFIG_TYPE_FLOAT:
    v = config_setting_get_float(s);
    break;
  case CONFIG_TYPE_INT:
  case CONFIG_TYPE_INT64:
    v = (double)config_setting_get_int64(s);
    break;
  default:
    return ff_cfg_err(file, s, kp, "expected a number");
  }
  if (!isfinite(v) || v < min || v > max)
    return ff_cfg_err(file, s, kp, "%g is out of range (expected %g to %g)", v,
                      min, max);
  *out = v;
  return 1;
}

int
ff_cfg_bool(const char *file, const config_setting_t *grp, const char *path,
            const char *key, int *out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  if (config_setting_type(s) != CONFIG_TYPE_BOOL)
    return ff_cfg_err(file, s, kp, "expected true or false");
  *out = config_setting_get_bool(s);
  return 1;
}

int
ff_cfg_read_error(config_t *cfg, const char *name, const char *what)
{
  const char *f = config_error_file(cfg);

  if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
    return ff_error("%s: cannot read the %s: %m", name, what);
  return ff_error("%s:%d: syntax error: %s", f ? f : name,
                  config_error_line(cfg), config_error_text(cfg));
}
