/* fusefarm: what the pieces of the farm spec parser share, for generators/
 * and nothing else (ff-spec.h is the interface).
 *
 * The parser is split by what it walks:
 *
 *   ff-spec.c       the entry points, the top level, VG groups (their PV
 *                   layouts, device ids and sizes, changes), orphan, blank
 *                   and signature groups, freeing, and --devices scaling
 *   ff-spec-lv.c    LV groups (ff_sp_lv): linear and striped, mirror and
 *                   raid, thin and cache pools, thin, cache and snapshot
 *                   LVs, and their placement
 *   ff-spec-keys.c  the values several groups take: lists of strings,
 *                   tags, UUIDs, name formats, damage
 *
 * Every function here checks one key or group of settings and, as the
 * getters of ff-cfg-int.h do, returns 1 when the key is present and valid
 * (out set), 0 when it is absent (out untouched), -1 after ff_cfg_err()
 * named file:line: key and what was expected; the messages are listed in
 * docs/parser-errors.md and must not change with where a check lives.
 * No threads: one parse works on its own tree and struct ff_spec.
 */
#ifndef FF_SPEC_INT_H
#define FF_SPEC_INT_H

#include "ff-spec.h"

#include <libconfig.h>
#include <stdint.h>

/* One parse: the name messages give when libconfig knows no file. */
struct ff_spec_ctx {
  const char *file;
};

/* ---- ff-spec-keys.c ---------------------------------------------------- */

/* The list or array KEY of grp into *out, its path into kp: 0 when it
 * is absent, 1 when it is a list (of n entries unless n < 0; the count
 * error ends with why), else an error asking for a list of what. */
int ff_sp_list(const struct ff_spec_ctx *c, const config_setting_t *grp,
               const char *path, const char *key, int n, const char *what,
               const char *why, const config_setting_t **out, char kp[256]);

/* A list or array of exactly n strings.  uuids: parse each as a UUID. */
int ff_sp_strlist(const struct ff_spec_ctx *c, const config_setting_t *grp,
                  const char *path, const char *key, unsigned n, int uuids,
                  char ***out);

/* cachesettings (lvcreate or lvconvert --cachesettings, cmd): a list of
 * NAME=NUMBER strings into *out (NULL when absent); kp gets the key's
 * path.  0, or -1 with the error set (naming example as the form). */
int ff_sp_cachesettings(const struct ff_spec_ctx *c, const config_setting_t *g,
                        const char *path, const char *cmd, const char *example,
                        char ***out, char kp[256]);

/* cachesettings of a writecache (lvcreate or lvconvert --type writecache
 * --cachesettings, cmd): NAME=NUMBER entries into *list, checked as lvm's
 * get_writecache_settings checks them into *w (an unknown name, which
 * lvm would ask about before passing it on, refused).  0, or -1. */
int ff_sp_wc_settings(const struct ff_spec_ctx *c, const config_setting_t *g,
                      const char *path, const char *cmd,
                      struct ff_wcsettings *w, char ***list);

/* key: a list of tags (vgcreate/lvcreate/...change --addtag, in that
 * order) into *out, NULL-terminated; an empty list is none (NULL).
 * lvm's tag characters only, each tag once. */
int ff_sp_tags(const struct ff_spec_ctx *c, const config_setting_t *grp,
               const char *path, const char *key, char ***out);

/* key: one UUID as ff_uuid_parse() takes it, into *out (FF_UUID_LEN
 * characters and a NUL, malloc'ed). */
int ff_sp_uuid(const struct ff_spec_ctx *c, const config_setting_t *grp,
               const char *path, const char *key, char **out);

/* ff_format_check, and a field width that makes a name, not a gigabyte
 * ("%0999999999u" would have asprintf allocate one). */
int ff_sp_format_check(const char *fmt, int allow_int, int allow_str,
                       int *nconv);

/* The name format fmt of key (ff_sp_format_check(), integers only),
 * which needs a %u when the group makes count > 1 objects.  0 or -1. */
int ff_sp_check_format(const struct ff_spec_ctx *c,
                       const config_setting_t *grp, const char *path,
                       const char *key, const char *fmt, unsigned count);

/* damage of a VG group, or of an orphan group (orphan: the damages a PV
 * without a VG can have). */
int ff_sp_damage(const struct ff_spec_ctx *c, const config_setting_t *grp,
                 const char *path, int orphan, enum ff_damage *out);

/* a + b, or UINT64_MAX when that does not fit: sizes from the spec may be
 * as large as 16 EiB, and a sum that wraps would pass a size check. */
static inline uint64_t
ff_sp_sat_add(uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline int
ff_sp_is_pow2(uint64_t v)
{
  return v && !(v & (v - 1));
}

/* key: a system ID (the host's, or vgcreate --systemid) into *out, as
 * lvm takes one: "" is none (*out NULL); what lvm would change or refuse
 * is refused. */
int ff_sp_system_id(const struct ff_spec_ctx *c, const config_setting_t *grp,
                    const char *path, const char *key, char **out);

/* alloc: an allocation policy (vgcreate/lvcreate --alloc); vg: inherit is
 * refused, as vgcreate refuses it. */
int ff_sp_alloc(const struct ff_spec_ctx *c, const config_setting_t *grp,
                const char *path, int vg, enum ff_alloc_policy *out);

/* ---- ff-spec-lv.c ------------------------------------------------------ */

/* One LV group g at path into *lv (lv->new_spare set by the VG from the
 * groups before it).  0 or -1. */
int ff_sp_lv(const struct ff_spec_ctx *c, const config_setting_t *g,
             const char *path, struct ff_spec_lv *lv);

/* permission, activation_skip, read_ahead, minor and major of g into
 * *lv (lvcreate -p, -k, -r, -My --minor; also an lvchange change's), when
 * lv->kind is linear or striped; refused for another kind.  0 or -1. */
int ff_sp_lv_flags(const struct ff_spec_ctx *c, const config_setting_t *g,
                   const char *path, struct ff_spec_lv *lv);

/* cachemode and policy (lvcreate/lvconvert --cachemode, --cachepolicy)
 * of a cache pool, cache LV or lvconvert change.  0 or -1. */
int ff_sp_cache_opts(const struct ff_spec_ctx *c, const config_setting_t *g,
                     const char *path, enum ff_cache_mode *mode,
                     enum ff_cache_policy *policy);

#endif
