/* fusefarm: helpers for our libconfig formats (see ff-cfg-int.h). */
#include "ff-cfg-int.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-util.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CONFIG_FILE (64u << 20)
#define PATH_MAX_HINT   4200

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
ff_cfg_join(char *out, size_t len, const char *path, const char *key)
{
  if (path[0])
    ff_pathf(out, len, "%s.%s", path, key);
  else
    ff_pathf(out, len, "%s", key);
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

/* ---- which kind of file is this (ff-cfgkind.h) ---------------------- */

/* The top-level keys of each libconfig format: ff-spec.c, ff-profile.c
 * and ff-scenario.c check their own lists; test-cfg checks these match. */
static const char *const spec_keys[] = {
  "seed",   "device_name",   "device_size", "device_hint", "creation_host",
  "uname",  "creation_time", "lvm_version", "vgs",         "orphans",
  "blanks", "signatures",    "system_id",   NULL};
static const char *const profile_keys[] = {"name",  "seed",   "rotational",
                                           "queue", "groups", NULL};
static const char *const scenario_keys[] = {
  "name",          "description",       "spec",           "farm",
  "devices",       "profile",           "latency",        "lvm",
  "matrix",        "workloads",         "aio_contention", "attach",
  "fence",         "dev_names",         "lvm_git",        "dm",
  "repeat_budget", "repeat_max_rounds", "flamegraph",     NULL,
};

static const enum ff_cfg_kind cfg_kinds[] = {FF_CFG_SPEC, FF_CFG_PROFILE,
                                             FF_CFG_SCENARIO};

const char *const *
ff_cfg_kind_keys(enum ff_cfg_kind kind)
{
  switch (kind) {
  case FF_CFG_SPEC:
    return spec_keys;
  case FF_CFG_PROFILE:
    return profile_keys;
  case FF_CFG_SCENARIO:
    return scenario_keys;
  default:
    return NULL;
  }
}

static int
has_key(const char *const *keys, const char *name)
{
  for (; *keys; keys++)
    if (!strcmp(*keys, name))
      return 1;
  return 0;
}

enum ff_cfg_kind
ff_cfg_kind_of_root(const config_setting_t *root)
{
  enum { NK = sizeof cfg_kinds / sizeof *cfg_kinds };
  unsigned known[NK] = {0}, own[NK] = {0};
  int n = root ? config_setting_length(root) : 0;
  enum ff_cfg_kind kind = FF_CFG_UNKNOWN;

  for (int i = 0; i < n; i++) {
    const char *name =
      config_setting_name(config_setting_get_elem(root, (unsigned)i));
    unsigned in = 0, last = 0;

    if (!name)
      return FF_CFG_UNKNOWN;
    for (unsigned k = 0; k < NK; k++)
      if (has_key(ff_cfg_kind_keys(cfg_kinds[k]), name)) {
        known[k]++;
        in++;
        last = k;
      }
    if (in == 1)
      own[last]++;
  }
  /* Every key one kind's, and some key that kind's alone. */
  for (unsigned k = 0; k < NK; k++) {
    if (!own[k])
      continue;
    if (kind != FF_CFG_UNKNOWN || known[k] != (unsigned)n)
      return FF_CFG_UNKNOWN;
    kind = cfg_kinds[k];
  }
  return kind;
}

/* A JSON document of ours, by its "format" member. */
static enum ff_cfg_kind
json_kind(const char *text, size_t len)
{
  json_t *doc = json_loadb(text, len, 0, NULL);
  const char *format = json_string_value(json_object_get(doc, "format"));
  enum ff_cfg_kind kind = FF_CFG_UNKNOWN;

  if (format && !strcmp(format, "fusefarm-run"))
    kind = FF_CFG_RUNDOC;
  else if (format && !strcmp(format, "fusefarm-stats"))
    kind = FF_CFG_STATS;
  json_decref(doc);
  return kind;
}

enum ff_cfg_kind
ff_cfg_kind_of_text(const char *text, size_t len)
{
  enum ff_cfg_kind kind = FF_CFG_UNKNOWN;
  size_t i = 0;
  config_t cfg;
  char *copy;

  while (i < len && isspace((unsigned char)text[i]))
    i++;
  /* A libconfig file never starts with a brace. */
  if (i < len && text[i] == '{')
    return json_kind(text, len);
  if (memchr(text, '\0', len))
    return FF_CFG_UNKNOWN;
  copy = strndup(text, len);
  if (!copy)
    return FF_CFG_UNKNOWN;
  config_init(&cfg);
  if (config_read_string(&cfg, copy) == CONFIG_TRUE)
    kind = ff_cfg_kind_of_root(config_root_setting(&cfg));
  config_destroy(&cfg);
  free(copy);
  return kind;
}

static char *slurp(const char *path, const char *what, size_t *len);

enum ff_cfg_kind
ff_cfg_kind_of_file(const char *path)
{
  enum ff_cfg_kind kind;
  char *saved = strdup(ff_errmsg()), *text;
  size_t len;

  text = slurp(path, "file", &len);
  kind = text ? ff_cfg_kind_of_text(text, len) : FF_CFG_UNKNOWN;
  free(text);
  /* Asking is not failing: leave the caller's error as it was. */
  if (saved) {
    ff_error("%s", saved);
    free(saved);
  }
  return kind;
}

const char *
ff_cfg_kind_name(enum ff_cfg_kind kind)
{
  switch (kind) {
  case FF_CFG_SPEC:
    return "a farm spec";
  case FF_CFG_PROFILE:
    return "a profile";
  case FF_CFG_SCENARIO:
    return "a scenario";
  case FF_CFG_RUNDOC:
    return "a run document (JSON)";
  case FF_CFG_STATS:
    return "a stats snapshot (JSON)";
  default:
    return "unknown";
  }
}

char *
ff_cfg_kind_hint(enum ff_cfg_kind have, enum ff_cfg_kind want,
                 const char *path, char *out, size_t len)
{
  out[0] = '\0';
  switch (have) {
  case FF_CFG_SPEC:
    if (want == FF_CFG_SCENARIO)
      snprintf(out, len,
               "serve it with fusefarm mount, or name it in a scenario: "
               "spec = \"%s\";",
               path);
    else if (want == FF_CFG_PROFILE)
      snprintf(out, len,
               "give it as the farm: fusefarm mount SPEC MNT, "
               "or the plugin's spec=");
    else
      snprintf(out, len, "serve it with fusefarm mount");
    break;
  case FF_CFG_PROFILE:
    if (want == FF_CFG_SCENARIO)
      snprintf(out, len,
               "serve a farm with it: fusefarm mount --profile, or name it "
               "in a scenario: profile = \"%s\";",
               path);
    else
      snprintf(out, len,
               "give it with --profile, or the plugin's "
               "profile=");
    break;
  case FF_CFG_SCENARIO:
    if (want == FF_CFG_RUNDOC)
      snprintf(out, len,
               "run it with fusefarm run --json FILE, then "
               "render FILE");
    else
      snprintf(out, len, "run it with fusefarm run");
    break;
  case FF_CFG_RUNDOC:
    snprintf(out, len, "render it with fusefarm report");
    break;
  case FF_CFG_STATS:
    snprintf(out, len, "print it with fusefarm stats");
    break;
  default:
    break;
  }
  return out;
}

char *
ff_cfg_kind_mismatch(enum ff_cfg_kind have, enum ff_cfg_kind want,
                     const char *path, char *out, size_t len)
{
  char hint[PATH_MAX_HINT];

  snprintf(out, len, "%s: this is %s, not %s (%s)", path,
           ff_cfg_kind_name(have),
           want == FF_CFG_UNKNOWN  ? "a scenario or farm spec"
           : want == FF_CFG_RUNDOC ? "a run document"
           : want == FF_CFG_STATS  ? "a stats snapshot"
                                   : ff_cfg_kind_name(want),
           ff_cfg_kind_hint(have, want, path, hint, sizeof hint));
  return out;
}

int
ff_cfg_check_root(const char *file, const config_setting_t *root,
                  enum ff_cfg_kind want, const char *const *allowed)
{
  enum ff_cfg_kind have;
  char msg[2 * PATH_MAX_HINT];

  if (ff_cfg_check_keys(file, root, "", allowed) == 0)
    return 0;
  have = ff_cfg_kind_of_root(root);
  if (have == FF_CFG_UNKNOWN || have == want)
    return -1;
  return ff_error("%s",
                  ff_cfg_kind_mismatch(have, want, file, msg, sizeof msg));
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
    if (strchr(config_setting_get_string(s), '.'))
      return ff_cfg_err(file, s, kp,
                        "'%s' is not a whole number (write \"1536M\", not "
                        "\"1.5G\")",
                        config_setting_get_string(s));
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
  const char *text = config_error_text(cfg);

  if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
    return ff_error("%s: cannot read the %s: %m", name, what);
  /* libconfig says only "syntax error": say what it expects. */
  if (text && !strcmp(text, "syntax error"))
    return ff_error("%s:%d: syntax error (expected settings such as "
                    "key = value; with matched quotes and brackets)",
                    f ? f : name, config_error_line(cfg));
  return ff_error("%s:%d: syntax error: %s", f ? f : name,
                  config_error_line(cfg), text ? text : "?");
}

/* The integer literal t[0..n) (libconfig's [-+]?[0-9]+ or 0x[0-9a-f]+,
 * with an optional L or LL for 64 bits) must fit its type: libconfig 1.5
 * truncates a plain one to 32 bits and saturates a 64-bit one.  Anything
 * else (a float, a name) is not ours to judge. */
static int
check_int_literal(const char *t, size_t n, const char *name, int line)
{
  size_t i = 0, end = n, nl = 0;
  int neg = 0, hex = 0, over = 0;
  uint64_t v = 0, max;

  if (t[0] == '-' || t[0] == '+')
    neg = t[i++] == '-';
  while (end > i && t[end - 1] == 'L' && nl < 2) {
    end--;
    nl++;
  }
  if (end - i > 2 && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
    hex = 1;
    i += 2;
  }
  if (i == end)
    return 0;
  for (size_t k = i; k < end; k++) {
    unsigned d;

    if (isdigit((unsigned char)t[k]))
      d = (unsigned)(t[k] - '0');
    else if (hex && isxdigit((unsigned char)t[k]))
      d = (unsigned)(tolower((unsigned char)t[k]) - 'a' + 10);
    else
      return 0;
    if (v > (UINT64_MAX - d) / (hex ? 16 : 10))
      over = 1;
    else
      v = v * (hex ? 16 : 10) + d;
  }
  max = nl ? (uint64_t)INT64_MAX + (uint64_t)neg : (uint64_t)INT32_MAX + neg;
  if (!over && v <= max)
    return 0;
  if (nl || over || v > (uint64_t)INT64_MAX + (uint64_t)neg)
    return ff_error("%s:%d: syntax error: integer %.*s is out of range (at "
                    "most 64 bits)",
                    name, line, (int)n, t);
  return ff_error("%s:%d: syntax error: integer %.*s is out of range for a "
                  "32-bit integer (write %.*sL for a 64-bit one)",
                  name, line, (int)n, t, (int)n, t);
}

/* Walk the text as libconfig's scanner does (comments, strings, names,
 * numbers) and check every integer literal. */
static int
check_ints(const char *t, size_t n, const char *name)
{
  int line = 1;
  size_t i = 0;

  while (i < n) {
    char c = t[i];

    if (c == '\n') {
      line++;
      i++;
    } else if (c == '#' || (c == '/' && i + 1 < n && t[i + 1] == '/')) {
      while (i < n && t[i] != '\n')
        i++;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '*') {
      for (i += 2; i < n && !(t[i] == '*' && i + 1 < n && t[i + 1] == '/');
           i++)
        line += t[i] == '\n';
      i += 2;
    } else if (c == '"') {
      for (i++; i < n && t[i] != '"'; i++) {
        if (t[i] == '\\' && i + 1 < n)
          i++;
        line += t[i] == '\n';
      }
      i++;
    } else if (isalpha((unsigned char)c) || c == '*') {
      while (i < n && (isalnum((unsigned char)t[i]) || t[i] == '-' ||
                       t[i] == '_' || t[i] == '*'))
        i++;
    } else if (isdigit((unsigned char)c) ||
               ((c == '-' || c == '+') && i + 1 < n &&
                isdigit((unsigned char)t[i + 1]))) {
      size_t s = i++;

      /* A number runs on through letters, digits, dots and the sign of
       * an exponent. */
      while (i < n && (isalnum((unsigned char)t[i]) || t[i] == '.' ||
                       ((t[i] == '-' || t[i] == '+') &&
                        (t[i - 1] == 'e' || t[i - 1] == 'E'))))
        i++;
      if (check_int_literal(t + s, i - s, name, line) < 0)
        return -1;
    } else {
      i++;
    }
  }
  return 0;
}

/* The whole file, NUL-terminated; NULL with the error set. */
static char *
slurp(const char *path, const char *what, size_t *len)
{
  int fd = ff_open_regular(path, what);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "re");
  char *buf = NULL;
  size_t n = 0, cap = 0, got;

  if (!f) {
    if (fd >= 0) {
      ff_error("%s: cannot read the %s: %m", path, what);
      close(fd);
    }
    return NULL;
  }
  do {
    if (cap - n < 4096) {
      char *nb;

      if (cap >= MAX_CONFIG_FILE) {
        ff_error("%s: cannot read the %s: larger than %u MiB", path, what,
                 MAX_CONFIG_FILE >> 20);
        goto fail;
      }
      nb = realloc(buf, (cap = cap ? 2 * cap : 65536) + 1);
      if (!nb) {
        ff_error("%s: cannot read the %s: out of memory", path, what);
        goto fail;
      }
      buf = nb;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  if (ferror(f)) {
    ff_error("%s: cannot read the %s: %s", path, what,
             strerror(errno ? errno : EIO));
    goto fail;
  }
  fclose(f);
  buf[n] = '\0';
  *len = n;
  return buf;

fail:
  fclose(f);
  free(buf);
  return NULL;
}

int
ff_cfg_load(config_t *cfg, const char *text, const char *name,
            const char *what)
{
  char *own = NULL;
  size_t len;
  const char *nul;
  int r = -1;

  if (!text) {
    text = own = slurp(name, what, &len);
    if (!text)
      return -1;
    nul = memchr(text, '\0', len);
    if (nul) {
      int line = 1;

      for (const char *p = text; p < nul; p++)
        line += *p == '\n';
      ff_error("%s:%d: syntax error: a NUL byte (this is not a text file)",
               name, line);
      goto out;
    }
  } else {
    len = strlen(text);
  }
  {
    enum ff_cfg_kind want = !strcmp(what, "spec")      ? FF_CFG_SPEC
                            : !strcmp(what, "profile") ? FF_CFG_PROFILE
                                                       : FF_CFG_SCENARIO;
    size_t i = strspn(text, " \t\r\n");
    enum ff_cfg_kind have =
      text[i] == '{' ? ff_cfg_kind_of_text(text, len) : FF_CFG_UNKNOWN;
    char msg[2 * PATH_MAX_HINT];

    if (have != FF_CFG_UNKNOWN) {
      ff_error("%s", ff_cfg_kind_mismatch(have, want, name, msg, sizeof msg));
      goto out;
    }
  }
  if (check_ints(text, len, name) < 0)
    goto out;
  if (config_read_string(cfg, text) != CONFIG_TRUE) {
    ff_cfg_read_error(cfg, name, what);
    goto out;
  }
  r = 0;
out:
  free(own);
  return r;
}

char *
ff_cfg_default_name(const char *file)
{
  const char *b = strrchr(file, '/');
  size_t n;

  b = b ? b + 1 : file;
  n = strlen(b);
  if (n > 5 && !strcmp(b + n - 5, ".conf"))
    n -= 5;
  return strndup(b, n);
}
