/* fusefarm: small shared helpers (see ff-util.h). */
#include "ff-util.h"
#include "ff-error.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int
ff_parse_size(const char *s, uint64_t *out)
{
  uint64_t v = 0, mult = 1;
  const char *p = s;

  if (!isdigit((unsigned char)*p))
    return ff_error("'%s' is not a size (expected digits with an optional "
                    "unit s, b, k, m, g, t, p or e)",
                    s);
  for (; isdigit((unsigned char)*p); p++) {
    if (v > (UINT64_MAX - 9) / 10)
      return ff_error("size '%s' is too large", s);
    v = v * 10 + (uint64_t)(*p - '0');
  }
  if (*p) {
    switch (tolower((unsigned char)*p)) {
    case 'b':
      mult = 1;
      break;
    case 's':
      mult = 512;
      break;
    case 'k':
      mult = 1ull << 10;
      break;
    case 'm':
      mult = 1ull << 20;
      break;
    case 'g':
      mult = 1ull << 30;
      break;
    case 't':
      mult = 1ull << 40;
      break;
    case 'p':
      mult = 1ull << 50;
      break;
    case 'e':
      mult = 1ull << 60;
      break;
    default:
      return ff_error("'%s' has an unknown unit '%c' (expected s, b, k, m, "
                      "g, t, p or e)",
                      s, *p);
    }
    if (p[1])
      return ff_error("'%s' has trailing text after the unit", s);
  }
  if (v && mult > UINT64_MAX / v)
    return ff_error("size '%s' is too large", s);
  *out = v * mult;
  return 0;
}

void
ff_format_size(uint64_t bytes, char *buf, size_t len)
{
  static const char units[] = "KMGTPE";
  int u = -1;

  if (bytes == 0 || bytes % 1024) {
    snprintf(buf, len, "%lluB", (unsigned long long)bytes);
    return;
  }
  while (bytes % 1024 == 0 && u < 5) {
    bytes /= 1024;
    u++;
  }
  snprintf(buf, len, "%llu%c", (unsigned long long)bytes, units[u]);
}

int
ff_format_check(const char *fmt, int allow_int, int allow_str, int *nconv)
{
  int n = 0;

  for (const char *p = fmt; *p; p++) {
    if (*p != '%')
      continue;
    p++;
    if (*p == '%')
      continue;
    if (*p == '0')
      p++;
    while (isdigit((unsigned char)*p))
      p++;
    if (allow_int && (*p == 'u' || *p == 'd' || *p == 'x'))
      n++;
    else if (allow_str && *p == 's')
      n++;
    else
      return ff_error("'%s' has an unsupported conversion (expected %s)", fmt,
                      allow_int ? "one %u, %d or %x, optionally like %04u"
                                : "one %s");
  }
  if (n > 1)
    return ff_error("'%s' has %d conversions (expected at most one)", fmt, n);
  if (allow_str && n != 1)
    return ff_error("'%s' needs exactly one %%s", fmt);
  *nconv = n;
  return 0;
}

/* The formats were validated by ff_format_check, so the argument list
 * always matches; the pragma silences -Wformat-nonliteral for this one
 * deliberate use. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
char *
ff_format_uint(const char *fmt, unsigned v)
{
  char *s;

  if (asprintf(&s, fmt, v) < 0)
    return NULL;
  return s;
}

char *
ff_format_str(const char *fmt, const char *str)
{
  char *s;

  if (asprintf(&s, fmt, str) < 0)
    return NULL;
  return s;
}
#pragma GCC diagnostic pop

int
ff_valid_lvm_name(const char *name)
{
  size_t n = strlen(name);

  if (n == 0 || n >= 128 || name[0] == '-' || !strcmp(name, ".") ||
      !strcmp(name, ".."))
    return 0;
  for (const char *p = name; *p; p++)
    if (!isalnum((unsigned char)*p) && !strchr("+_.-", *p))
      return 0;
  return 1;
}

static uint64_t
splitmix64(uint64_t *state)
{
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t
ff_hash4(uint64_t seed, uint64_t kind, uint64_t a, uint64_t b)
{
  uint64_t st = seed;

  st = splitmix64(&st) ^ kind;
  st = splitmix64(&st) ^ a;
  st = splitmix64(&st) ^ b;
  return splitmix64(&st);
}

static const char uuid_chars[] =
  "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

void
ff_uuid_make(char out[FF_UUID_LEN], uint64_t seed, uint64_t kind, uint64_t a,
             uint64_t b)
{
  uint64_t st = ff_hash4(seed, kind, a, b);

  for (int i = 0; i < FF_UUID_LEN; i++)
    out[i] = uuid_chars[splitmix64(&st) % 62];
}

void
ff_pv_uuid_make(char out[FF_UUID_LEN], uint64_t seed, uint64_t kind,
                uint64_t a, uint64_t b)
{
  ff_uuid_make(out, seed, kind, a, b);
  memcpy(out, FF_PV_UUID_MARK, sizeof FF_PV_UUID_MARK - 1);
}

int
ff_uuid_parse(const char *s, char out[FF_UUID_LEN])
{
  int n = 0;

  for (const char *p = s; *p; p++) {
    if (*p == '-')
      continue;
    if (!isalnum((unsigned char)*p) && *p != '!' && *p != '#')
      return ff_error("uuid '%s' contains invalid character '%c'", s, *p);
    if (n == FF_UUID_LEN)
      return ff_error("uuid '%s' has more than 32 characters", s);
    out[n++] = *p;
  }
  if (n != FF_UUID_LEN)
    return ff_error("uuid '%s' has %d characters (expected 32, dashes "
                    "optional)",
                    s, n);
  return 0;
}

void
ff_uuid_dash(const char in[FF_UUID_LEN], char out[FF_UUID_DASHED + 1])
{
  static const int groups[] = {6, 4, 4, 4, 4, 4, 6};
  int i = 0, o = 0;

  for (int g = 0; g < 7; g++) {
    if (g)
      out[o++] = '-';
    for (int k = 0; k < groups[g]; k++)
      out[o++] = in[i++];
  }
  out[o] = '\0';
}

void
ff_ctime_utc(int64_t t, char *buf, size_t len)
{
  static const char wday[][4] = {"Sun", "Mon", "Tue", "Wed",
                                 "Thu", "Fri", "Sat"};
  static const char mon[][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  time_t tt = (time_t)t;
  struct tm tm;

  if (!gmtime_r(&tt, &tm)) {
    snprintf(buf, len, "?");
    return;
  }
  /* The layout of asctime(): "%.3s %.3s%3d %.2d:%.2d:%.2d %d". */
  snprintf(buf, len, "%.3s %.3s%3d %.2d:%.2d:%.2d %d", wday[tm.tm_wday],
           mon[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
           1900 + tm.tm_year);
}

static int
sb_grow(struct ff_sb *sb, size_t extra)
{
  size_t want;
  char *nb;

  if (sb->failed)
    return -1;
  want = sb->len + extra + 1;
  if (want <= sb->alloc)
    return 0;
  if (want < sb->alloc * 2)
    want = sb->alloc * 2;
  if (want < 256)
    want = 256;
  nb = realloc(sb->buf, want);
  if (!nb) {
    sb->failed = 1;
    return -1;
  }
  sb->buf = nb;
  sb->alloc = want;
  return 0;
}

void
ff_sb_addn(struct ff_sb *sb, const char *s, size_t n)
{
  if (sb_grow(sb, n) < 0)
    return;
  memcpy(sb->buf + sb->len, s, n);
  sb->len += n;
  sb->buf[sb->len] = '\0';
}

void
ff_sb_add(struct ff_sb *sb, const char *s)
{
  ff_sb_addn(sb, s, strlen(s));
}

void
ff_sb_addf(struct ff_sb *sb, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    sb->failed = 1;
    return;
  }
  if (sb_grow(sb, (size_t)n) < 0)
    return;
  va_start(ap, fmt);
  vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
}

int
ff_sb_failed(const struct ff_sb *sb)
{
  return sb->failed;
}

char *
ff_sb_text(struct ff_sb *sb)
{
  if (ff_sb_failed(sb)) {
    ff_sb_release(sb);
    ff_error("out of memory");
    return NULL;
  }
  return ff_sb_detach(sb, NULL);
}

char *
ff_sb_detach(struct ff_sb *sb, size_t *len)
{
  char *b = sb->buf;

  if (len)
    *len = sb->len;
  if (!b && !sb->failed)
    b = calloc(1, 1);
  /* give back the slack of the doubling (a farm keeps thousands of these
   * strings: the LVs' lvcreate descriptions held 256 bytes each) */
  if (b && sb->alloc > sb->len + 1 + 32) {
    char *nb = realloc(b, sb->len + 1);

    if (nb)
      b = nb;
  }
  sb->buf = NULL;
  sb->len = sb->alloc = 0;
  return b;
}

void
ff_sb_release(struct ff_sb *sb)
{
  free(sb->buf);
  sb->buf = NULL;
  sb->len = sb->alloc = 0;
  sb->failed = 0;
}

int
ff_pathf(char *buf, size_t len, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(buf, len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= len) {
    if (len)
      buf[0] = '\0';
    return -1;
  }
  return 0;
}

int
ff_dirname(const char *path, char *dir, size_t len)
{
  const char *slash = strrchr(path, '/');

  if (!slash)
    return ff_pathf(dir, len, ".");
  if (slash == path)
    return ff_pathf(dir, len, "/");
  return ff_pathf(dir, len, "%.*s", (int)(slash - path), path);
}
