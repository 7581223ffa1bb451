/* fusefarm: farm spec parser, the values several groups take
 * (ff-spec-int.h): lists of strings, tags, UUIDs, name formats, damage;
 * and damage's names (ff_damage_name, ff-spec.h).
 */
#include "ff-spec-int.h"
#include "ff-cfg-int.h"
#include "ff-error.h"
#include "ff-util.h"

#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

static const char *const damage_names[] = {
  [FF_DMG_NONE] = "none",
  [FF_DMG_LABEL_CRC] = "bad-label-crc",
  [FF_DMG_MDA_CHECKSUM] = "bad-mda-checksum",
  [FF_DMG_BAD_TEXT] = "bad-metadata-text",
  [FF_DMG_DUPLICATE] = "duplicate-pv",
  [FF_DMG_MISSING_PV] = "missing-pv",
  [FF_DMG_STALE] = "stale-metadata",
};

const char *
ff_damage_name(enum ff_damage d)
{
  return (unsigned)d < sizeof damage_names / sizeof *damage_names
           ? damage_names[d]
           : "?";
}

int
ff_sp_list(const struct ff_spec_ctx *c, const config_setting_t *grp,
           const char *path, const char *key, int n, const char *what,
           const char *why, const config_setting_t **out, char kp[256])
{
  const config_setting_t *s = config_setting_get_member(grp, key);

  *out = s;
  if (!s)
    return 0;
  ff_cfg_join(kp, 256, path, key);
  if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
      config_setting_type(s) != CONFIG_TYPE_LIST)
    return ff_cfg_err(c->file, s, kp, "expected a list of %s", what);
  if (n >= 0 && config_setting_length(s) != n)
    return ff_cfg_err(c->file, s, kp, "has %d entries (expected %d%s)",
                      config_setting_length(s), n, why);
  return 1;
}

int
ff_sp_strlist(const struct ff_spec_ctx *c, const config_setting_t *grp,
              const char *path, const char *key, unsigned n, int uuids,
              char ***out)
{
  const config_setting_t *s;
  char kp[256];
  char **v;
  int r = ff_sp_list(c, grp, path, key, (int)n,
                     "strings such as [\"a\", \"b\"]", "", &s, kp);

  if (r <= 0)
    return r;
  v = calloc(n + 1, sizeof *v);
  if (!v)
    return ff_cfg_err(c->file, s, kp, "out of memory");
  *out = v;
  for (unsigned i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, i);
    const char *str;

    if (config_setting_type(e) != CONFIG_TYPE_STRING)
      return ff_cfg_err(c->file, e, kp, "entry %u is not a string", i);
    str = config_setting_get_string(e);
    if (uuids) {
      v[i] = calloc(1, FF_UUID_LEN + 1);
      if (v[i] && ff_uuid_parse(str, v[i]) < 0)
        return ff_cfg_err(c->file, e, kp, "%s", ff_errmsg());
    } else {
      v[i] = strdup(str);
    }
    if (!v[i])
      return ff_cfg_err(c->file, e, kp, "out of memory");
  }
  return 1;
}

int
ff_sp_tags(const struct ff_spec_ctx *c, const config_setting_t *grp,
           const char *path, const char *key, char ***out)
{
  const config_setting_t *s;
  char kp[256];
  int n, r = ff_sp_list(c, grp, path, key, -1, "tags such as [\"a\", \"b\"]",
                        "", &s, kp);

  if (r <= 0)
    return r;
  n = config_setting_length(s);
  if (n == 0)
    return 0;
  for (int i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, i);
    const char *t;

    if (config_setting_type(e) != CONFIG_TYPE_STRING)
      return ff_cfg_err(c->file, e, kp, "entry %d is not a string", i);
    t = config_setting_get_string(e);
    if (!*t || t[strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
                           "YZ0123456789._-+/=!:&#")])
      return ff_cfg_err(c->file, e, kp,
                        "'%s' is not a valid tag (letters, digits and "
                        "._-+/=!:&# only, not empty)",
                        t);
    for (int j = 0; j < i; j++)
      if (!strcmp(t, config_setting_get_string_elem(s, j)))
        return ff_cfg_err(c->file, e, kp, "tag '%s' is given twice", t);
  }
  return ff_sp_strlist(c, grp, path, key, (unsigned)n, 0, out);
}

int
ff_sp_uuid(const struct ff_spec_ctx *c, const config_setting_t *grp,
           const char *path, const char *key, char **out)
{
  char *raw = NULL;
  char kp[256];
  int r = ff_cfg_str(c->file, grp, path, key, &raw);

  if (r <= 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, key);
  *out = calloc(1, FF_UUID_LEN + 1);
  if (!*out) {
    free(raw);
    return ff_cfg_err(c->file, config_setting_get_member(grp, key), kp,
                      "out of memory");
  }
  if (ff_uuid_parse(raw, *out) < 0) {
    free(raw);
    return ff_cfg_err(c->file, config_setting_get_member(grp, key), kp, "%s",
                      ff_errmsg());
  }
  free(raw);
  return 1;
}

#define MAX_FORMAT_WIDTH 127 /* lvm names are shorter than 128 characters */

int
ff_sp_format_check(const char *fmt, int allow_int, int allow_str, int *nconv)
{
  if (ff_format_check(fmt, allow_int, allow_str, nconv) < 0)
    return -1;
  for (const char *p = fmt; *p; p++) {
    unsigned long w;

    if (*p != '%')
      continue;
    if (*++p == '%')
      continue;
    w = strtoul(p, NULL, 10); /* ff_format_check allowed only digits */
    if (w > MAX_FORMAT_WIDTH)
      return ff_error("'%s' has a field width of %lu (at most %d)", fmt, w,
                      MAX_FORMAT_WIDTH);
  }
  return 0;
}

int
ff_sp_check_format(const struct ff_spec_ctx *c, const config_setting_t *grp,
                   const char *path, const char *key, const char *fmt,
                   unsigned count)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];
  int nconv;

  ff_cfg_join(kp, sizeof kp, path, key);
  if (ff_sp_format_check(fmt, 1, 0, &nconv) < 0)
    return ff_cfg_err(c->file, s ? s : grp, kp, "%s", ff_errmsg());
  if (nconv == 0 && count > 1)
    return ff_cfg_err(c->file, s ? s : grp, kp,
                      "'%s' has no %%u but the group makes %u objects", fmt,
                      count);
  return 0;
}

int
ff_sp_damage(const struct ff_spec_ctx *c, const config_setting_t *grp,
             const char *path, int orphan, enum ff_damage *out)
{
  char *v = NULL;
  char kp[256];
  int r = ff_cfg_str(c->file, grp, path, "damage", &v);

  if (r <= 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, "damage");
  for (unsigned d = 0; d < sizeof damage_names / sizeof *damage_names; d++) {
    if (strcmp(v, damage_names[d]))
      continue;
    if (orphan && d != FF_DMG_NONE && d != FF_DMG_LABEL_CRC &&
        d != FF_DMG_MDA_CHECKSUM)
      break;
    free(v);
    *out = (enum ff_damage)d;
    return 1;
  }
  r = ff_cfg_err(c->file, config_setting_get_member(grp, "damage"), kp,
                 "unknown damage '%s' (expected %s)", v,
                 orphan ? "none, bad-label-crc or bad-mda-checksum"
                        : "none, bad-label-crc, bad-mda-checksum, "
                          "bad-metadata-text, duplicate-pv, missing-pv or "
                          "stale-metadata");
  free(v);
  return r;
}

/* isalnum() in the C locale, as lvm runs */
static int
alnum(char ch)
{
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
         (ch >= '0' && ch <= '9');
}

int
ff_sp_system_id(const struct ff_spec_ctx *c, const config_setting_t *grp,
                const char *path, const char *key, char **out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char *v = NULL, *cp, *d;
  const char *p;
  char kp[256];
  int r = ff_cfg_str(c->file, grp, path, key, &v), n = 0;

  if (r <= 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, key);
  if (!*v) { /* --systemid "": none */
    free(v);
    free(*out);
    *out = NULL;
    return 1;
  }
  /* lvm's copy_systemid_chars: from the first letter or digit, only
   * letters, digits and . _ - +, at most NAME_LEN (128) of them */
  if (!(cp = calloc(strlen(v) + 1, 1))) {
    free(v);
    return ff_cfg_err(c->file, s, kp, "out of memory");
  }
  for (p = v; *p && !alnum(*p); p++)
    ;
  for (d = cp; *p && n < 128; p++)
    if (alnum(*p) || *p == '.' || *p == '_' || *p == '-' || *p == '+') {
      *d++ = *p;
      n++;
    }
  if (!*cp)
    r = ff_cfg_err(c->file, s, kp,
                   "'%s': lvm refuses it (\"Invalid system ID format: %s\")",
                   v, v);
  else if (strcmp(cp, v))
    r = ff_cfg_err(c->file, s, kp,
                   "'%s': lvm would write it as '%s' (a system ID keeps "
                   "letters, digits and . _ - + from the first letter or "
                   "digit, at most 128); write that",
                   v, cp);
  else if (!strncmp(cp, "localhost", 9))
    r = ff_cfg_err(c->file, s, kp,
                   "'%s': lvm refuses it (\"system ID may not begin with the "
                   "string \\\"localhost\\\".\")",
                   v);
  free(v);
  if (r < 0) {
    free(cp);
    return r;
  }
  free(*out);
  *out = cp;
  return 1;
}

int
ff_sp_alloc(const struct ff_spec_ctx *c, const config_setting_t *grp,
            const char *path, int vg, enum ff_alloc_policy *out)
{
  static const char *const policies[] = {"inherit", "contiguous", "cling",
                                         "normal", "anywhere"};
  const config_setting_t *s = config_setting_get_member(grp, "alloc");
  char *v = NULL;
  char kp[256];
  int r = ff_cfg_str(c->file, grp, path, "alloc", &v);

  if (r <= 0)
    return r;
  ff_cfg_join(kp, sizeof kp, path, "alloc");
  for (unsigned i = 0; i <= FF_ALLOC_ANYWHERE; i++)
    if (!strcmp(v, policies[i])) {
      free(v);
      if (vg && i == FF_ALLOC_INHERIT)
        return ff_cfg_err(c->file, s, kp,
                          "lvm refuses inherit for a VG (\"Volume Group "
                          "allocation policy cannot inherit from "
                          "anything\")");
      *out = (enum ff_alloc_policy)i;
      return 1;
    }
  if (!strcmp(v, "cling_by_tags"))
    r = ff_cfg_err(c->file, s, kp, "cling_by_tags is not supported yet");
  else
    r = ff_cfg_err(c->file, s, kp,
                   "unknown allocation policy '%s' (expected contiguous, "
                   "cling, normal, anywhere%s; lvm: \"Unrecognised "
                   "allocation policy %s\")",
                   v, vg ? "" : " or inherit", v);
  free(v);
  return r;
}
