/* fusefarm: farm spec parser, LV groups (ff-spec-int.h): linear and
 * striped LVs and their placement, mirror and raid LVs, thin and cache
 * pools, thin, cache and snapshot LVs.  Every key is checked and named in
 * its message as in the rest of the parser (docs/parser-errors.md); what
 * an LV becomes on disk is ff-farm.c's.
 */
#include "ff-spec-int.h"
#include "ff-cfg-int.h"
#include "ff-error.h"
#include "ff-util.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "PV:FIRST-LAST" or "PV:FIRST" (one extent), as lvcreate's PV:PE
 * ranges. */
static int
parse_range(const char *str, struct ff_spec_range *r)
{
  unsigned long long v[3];
  char *end;
  const char *p = str;

  for (int i = 0; i < 3; i++) {
    if (*p < '0' || *p > '9')
      return -1;
    errno = 0;
    v[i] = strtoull(p, &end, 10);
    if (errno || end - p > 15)
      return -1;
    p = end;
    if (i == 0 && *p++ != ':')
      return -1;
    if (i == 1) {
      if (!*p) {
        v[2] = v[1];
        break;
      }
      if (*p++ != '-')
        return -1;
    }
  }
  if (*p || v[0] > UINT32_MAX)
    return -1;
  r->pv = (unsigned)v[0];
  r->first = v[1];
  r->last = v[2];
  return 0;
}

/* placement = ( [ "PV:FIRST-LAST", ... one per stripe ], ... segments ); */
static int
parse_placement(const struct ff_spec_ctx *c, const config_setting_t *g,
                const char *path, struct ff_spec_lv *lv)
{
  const config_setting_t *s = config_setting_get_member(g, "placement");
  char kp[256], sp[300];
  unsigned n;

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, "placement");
  if ((config_setting_type(s) != CONFIG_TYPE_LIST &&
       config_setting_type(s) != CONFIG_TYPE_ARRAY) ||
      config_setting_length(s) == 0)
    return ff_cfg_err(c->file, s, kp,
                      "expected a list of segments, each a list of "
                      "\"PV:FIRST-LAST\" ranges, one per stripe: "
                      "( [\"0:0-9\"], [\"1:5-9\"] )");
  if (lv->count != 1)
    return ff_cfg_err(c->file, s, kp,
                      "placement needs count = 1 (the group makes %u LVs)",
                      lv->count);
  n = (unsigned)config_setting_length(s);
  lv->place = calloc((size_t)n * lv->stripes, sizeof *lv->place);
  lv->place_lines = calloc(n, sizeof *lv->place_lines);
  if (!lv->place || !lv->place_lines)
    return ff_cfg_err(c->file, s, kp, "out of memory");
  lv->nplace = n;
  for (unsigned i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, i);
    struct ff_spec_range *seg = &lv->place[(size_t)i * lv->stripes];

    ff_pathf(sp, sizeof sp, "%s.[%u]", kp, i);
    lv->place_lines[i] = (int)config_setting_source_line(e);
    if (config_setting_type(e) != CONFIG_TYPE_ARRAY &&
        config_setting_type(e) != CONFIG_TYPE_LIST)
      return ff_cfg_err(c->file, e, sp,
                        "expected a list of \"PV:FIRST-LAST\" ranges, one "
                        "per stripe, such as [\"0:0-9\"]");
    if ((unsigned)config_setting_length(e) != lv->stripes)
      return ff_cfg_err(c->file, e, sp,
                        "has %d ranges, the LV has %u stripe%s (one range "
                        "per stripe)",
                        config_setting_length(e), lv->stripes,
                        lv->stripes == 1 ? "" : "s");
    for (unsigned k = 0; k < lv->stripes; k++) {
      const config_setting_t *r = config_setting_get_elem(e, k);
      const char *str;

      if (config_setting_type(r) != CONFIG_TYPE_STRING)
        return ff_cfg_err(c->file, r, sp,
                          "range %u is not a string \"PV:FIRST-LAST\"", k);
      str = config_setting_get_string(r);
      if (parse_range(str, &seg[k]) < 0)
        return ff_cfg_err(c->file, r, sp,
                          "'%s' is not PV:FIRST-LAST (the PV's index in the "
                          "VG, extents counted from 0)",
                          str);
      if (seg[k].first > seg[k].last)
        return ff_cfg_err(c->file, r, sp, "'%s': %llu is after %llu", str,
                          (unsigned long long)seg[k].first,
                          (unsigned long long)seg[k].last);
      if (k && seg[k].last - seg[k].first != seg[0].last - seg[0].first)
        return ff_cfg_err(
          c->file, r, sp,
          "'%s' has %llu extents, the segment's first stripe %llu (stripes "
          "are equal)",
          str, (unsigned long long)(seg[k].last - seg[k].first + 1),
          (unsigned long long)(seg[0].last - seg[0].first + 1));
    }
  }
  return 0;
}

/* The keys only a mirror or raid LV takes. */
static const char *const mr_keys[] = {"mirrors",
                                      "region_size",
                                      "mirror_log",
                                      "nosync",
                                      "uuids",
                                      "write_times",
                                      "descriptions",
                                      "raidintegrity",
                                      "raidintegritymode",
                                      NULL};

/* The mirror and raid types: the text's name, the kernel target's, the
 * default data stripes (0: no stripes, images from mirrors) and the
 * parity images. */
static const struct segtype {
  const char *name, *ktype;
  unsigned stripes, min_stripes, parity;
} segtypes[] = {
  {"mirror", "mirror", 0, 0, 0},     {"raid1", "raid1", 0, 0, 0},
  {"raid4", "raid4", 2, 2, 1},       {"raid5", "raid5_ls", 2, 2, 1},
  {"raid5_ls", "raid5_ls", 2, 2, 1}, {"raid5_rs", "raid5_rs", 2, 2, 1},
  {"raid5_la", "raid5_la", 2, 2, 1}, {"raid5_ra", "raid5_ra", 2, 2, 1},
  {"raid5_n", "raid5_n", 2, 2, 1},   {"raid6", "raid6_zr", 3, 3, 2},
  {"raid6_zr", "raid6_zr", 3, 3, 2}, {"raid6_nr", "raid6_nr", 3, 3, 2},
  {"raid6_nc", "raid6_nc", 3, 3, 2}, {"raid10", "raid10", 2, 2, 0},
  {"raid0", "raid0", 2, 2, 0},       {"raid0_meta", "raid0", 2, 2, 0},
};

/* type names a mirror or raid type: set lv's kind and names; -1 if not. */
static int
parse_segtype(const char *type, struct ff_spec_lv *lv)
{
  for (size_t i = 0; i < sizeof segtypes / sizeof *segtypes; i++)
    if (!strcmp(type, segtypes[i].name)) {
      lv->kind = i == 0 ? FF_LVK_MIRROR : FF_LVK_RAID;
      lv->segtype = segtypes[i].name;
      lv->ktype = segtypes[i].ktype;
      lv->stripes = segtypes[i].stripes;
      lv->parity = segtypes[i].parity;
      lv->no_rmeta = !strcmp(type, "raid0");
      return 0;
    }
  return -1;
}

static const struct segtype *
segtype_of(const struct ff_spec_lv *lv)
{
  for (size_t i = 0; i < sizeof segtypes / sizeof *segtypes; i++)
    if (lv->segtype == segtypes[i].name)
      return &segtypes[i];
  return &segtypes[0];
}

/* How many sub-LVs a mirror or raid LV of the group makes. */
static unsigned
sub_lvs(const struct ff_spec_lv *lv)
{
  if (lv->kind == FF_LVK_RAID)
    return lv->no_rmeta    ? lv->images
           : lv->integrity ? 4 * lv->images /* and _imeta, _iorig each */
                           : 2 * lv->images;
  return lv->images + !lv->core_log;
}

/* write_times and descriptions of an LV whose lvcreate makes n writes;
 * counted: the "expected a list of ..." message names n (mirror, raid). */
static int
parse_writes(const struct ff_spec_ctx *c, const config_setting_t *g,
             const char *path, struct ff_spec_lv *lv, unsigned n, int counted)
{
  static const char why3[] = " (the three writes of a pool lvcreate that "
                             "makes the pool metadata spare)";
  static const char *const why[] = {
    "", "", " (write 1 and write 2 of the lvcreate)", why3};
  const config_setting_t *s;
  char kp[256], what[32];

  for (int k = 0; k < 2; k++) {
    const char *key = k ? "descriptions" : "write_times";

    if (!(s = config_setting_get_member(g, key)))
      continue;
    snprintf(what, sizeof what, "%.0u%s%s", counted ? n : 0,
             counted ? " " : "", k ? "strings" : "integers");
    if (ff_sp_list(c, g, path, key, (int)n, what,
                   lv->integrity ? " (the raid LV's two writes, one per "
                                   "_imeta LV, the integrity layers and "
                                   "the flag cleared)"
                                 : why[n],
                   &s, kp) < 0)
      return -1;
    for (unsigned i = 0; i < n; i++) {
      const config_setting_t *e = config_setting_get_elem(s, i);

      if (k && config_setting_type(e) != CONFIG_TYPE_STRING)
        return ff_cfg_err(c->file, e, kp, "entry %u is not a string", i);
      if (!k && config_setting_type(e) != CONFIG_TYPE_INT &&
          config_setting_type(e) != CONFIG_TYPE_INT64)
        return ff_cfg_err(c->file, e, kp, "entry %u is not an integer", i);
      if (k && !(lv->descriptions[i] = strdup(config_setting_get_string(e))))
        return ff_cfg_err(c->file, e, kp, "out of memory");
      if (!k)
        lv->write_times[i] = config_setting_get_int64(e);
    }
    if (!k)
      lv->has_write_times = 1;
  }
  return 0;
}

/* The keys of a mirror or raid LV group (type already parsed). */
static int
parse_mirror_raid(const struct ff_spec_ctx *c, const config_setting_t *g,
                  const char *path, struct ff_spec_lv *lv)
{
  const struct segtype *st = segtype_of(lv);
  const config_setting_t *s;
  int raid1 = !strcmp(lv->segtype, "raid1");
  int raid10 = !strcmp(lv->segtype, "raid10");
  int mirrored = lv->kind == FF_LVK_MIRROR || raid1;
  int raid0 = !strncmp(lv->segtype, "raid0", 5);
  char kp[256], *log = NULL, *imode = NULL;
  unsigned mirrors = 1;
  int r;

  /* mirrors: lvcreate -m (images = mirrors + 1) */
  ff_cfg_join(kp, sizeof kp, path, "mirrors");
  if ((s = config_setting_get_member(g, "mirrors")) && raid0)
    return ff_cfg_err(c->file, s, kp,
                      "lvm refuses it: Mirror argument cannot be used with "
                      "segment type, %s",
                      lv->segtype);
  if ((s = config_setting_get_member(g, "mirrors")) && !mirrored && !raid10)
    return ff_cfg_err(c->file, s, kp,
                      "%s takes no mirrors (lvcreate -m is for mirror, "
                      "raid1 and raid10)",
                      lv->segtype);
  if (ff_cfg_uint(c->file, g, path, "mirrors", 1,
                  lv->kind == FF_LVK_MIRROR ? 7
                  : raid1                   ? 63
                                            : 1,
                  &mirrors) < 0)
    return -1;
  /* stripes, stripe_size: raid4/5/6/10 */
  if (mirrored) {
    if ((s = config_setting_get_member(g, "stripes")) ||
        (s = config_setting_get_member(g, "stripe_size"))) {
      ff_cfg_join(kp, sizeof kp, path, config_setting_name(s));
      return ff_cfg_err(
        c->file, s, kp,
        "%s takes no %s (lvm: raid0, raid4, raid5, raid6 and raid10 "
        "are striped)",
        lv->segtype, config_setting_name(s));
    }
    lv->stripes = 1;
    lv->images = mirrors + 1;
  } else {
    lv->stripe_size = 64 * 1024;
    s = config_setting_get_member(g, "stripes");
    if (raid0 && s && config_setting_is_number(s) &&
        config_setting_get_int64(s) < 2) {
      ff_cfg_join(kp, sizeof kp, path, "stripes");
      return ff_cfg_err(c->file, s, kp,
                        "lvm refuses it: Minimum of 2 stripes required for "
                        "%s.",
                        lv->segtype);
    }
    if (ff_cfg_uint(c->file, g, path, "stripes", st->min_stripes, 64,
                    &lv->stripes) < 0 ||
        ff_cfg_size(c->file, g, path, "stripe_size", &lv->stripe_size) < 0)
      return -1;
    if (!ff_sp_is_pow2(lv->stripe_size) || lv->stripe_size < 4096) {
      ff_cfg_join(kp, sizeof kp, path, "stripe_size");
      return ff_cfg_err(c->file, config_setting_get_member(g, "stripe_size"),
                        kp, "%llu is not a power of 2 of at least 4 KiB",
                        (unsigned long long)lv->stripe_size);
    }
    lv->images = raid10 ? 2 * lv->stripes : lv->stripes + lv->parity;
    lv->data_copies = raid10 ? 2 : 0;
    if (lv->images > 64) {
      ff_cfg_join(kp, sizeof kp, path, "stripes");
      return ff_cfg_err(c->file, config_setting_get_member(g, "stripes"), kp,
                        "%u stripes make %u images (lvm's maximum is 64)",
                        lv->stripes, lv->images);
    }
  }
  /* region_size: lvcreate --regionsize (rounded as lvm does, ff-farm.c) */
  lv->region_size = 2u << 20;
  if (ff_cfg_size(c->file, g, path, "region_size", &lv->region_size) < 0)
    return -1;
  /* lvcreate --regionsize refuses the others (lvm's messages) */
  if (!ff_sp_is_pow2(lv->region_size) || lv->region_size % 4096) {
    ff_cfg_join(kp, sizeof kp, path, "region_size");
    return ff_cfg_err(c->file, config_setting_get_member(g, "region_size"), kp,
                      "%llu: lvm refuses it: Region size must be %s",
                      (unsigned long long)lv->region_size,
                      !ff_sp_is_pow2(lv->region_size)
                        ? "a power of 2"
                        : "a multiple of machine memory page size (4096 "
                          "bytes)");
  }
  /* mirror_log: --mirrorlog */
  if (ff_cfg_str(c->file, g, path, "mirror_log", &log) < 0)
    return -1;
  if (log) {
    ff_cfg_join(kp, sizeof kp, path, "mirror_log");
    s = config_setting_get_member(g, "mirror_log");
    if (lv->kind != FF_LVK_MIRROR)
      r = ff_cfg_err(c->file, s, kp,
                     "%s has no mirror log (only type = "
                     "\"mirror\" has one)",
                     lv->segtype);
    else if (!strcmp(log, "core"))
      r = 0, lv->core_log = 1;
    else if (!strcmp(log, "disk"))
      r = 0;
    else if (!strcmp(log, "mirrored"))
      r = ff_cfg_err(c->file, s, kp,
                     "lvm 2.03.16 refuses it: Log type \"mirrored\" is "
                     "DEPRECATED. Use RAID1 LV or disk log instead.");
    else
      r = ff_cfg_err(c->file, s, kp,
                     "unknown mirror log '%s' (expected "
                     "disk or core)",
                     log);
    free(log);
    if (r < 0)
      return -1;
  }
  /* nosync: --nosync */
  if (ff_cfg_bool(c->file, g, path, "nosync", &lv->nosync) < 0)
    return -1;
  if (raid0) /* lvm takes --nosync and writes no NOTSYNCED */
    lv->nosync = 0;
  if (lv->nosync && !strncmp(lv->segtype, "raid6", 5)) {
    ff_cfg_join(kp, sizeof kp, path, "nosync");
    return ff_cfg_err(c->file, config_setting_get_member(g, "nosync"), kp,
                      "lvm refuses it: nosync option prohibited on RAID6");
  }
  /* raidintegrity: --raidintegrity y (lib/metadata/integrity_manip.c
   * lv_add_integrity_to_raid), raidintegritymode: --raidintegritymode */
  if (ff_cfg_bool(c->file, g, path, "raidintegrity", &lv->integrity) < 0 ||
      ff_cfg_str(c->file, g, path, "raidintegritymode", &imode) < 0)
    return -1;
  if (lv->integrity < 0)
    lv->integrity = 0;
  lv->integrity_mode = 'J';
  if (imode) {
    ff_cfg_join(kp, sizeof kp, path, "raidintegritymode");
    s = config_setting_get_member(g, "raidintegritymode");
    r = 0;
    if (!lv->integrity)
      r = ff_cfg_err(c->file, s, kp,
                     "raidintegritymode needs raidintegrity "
                     "= true");
    else if (!strcmp(imode, "bitmap"))
      lv->integrity_mode = 'B';
    else if (strcmp(imode, "journal"))
      r = ff_cfg_err(c->file, s, kp,
                     "'%s' is not journal or bitmap (--raidintegritymode)",
                     imode);
    free(imode);
    if (r < 0)
      return -1;
  }
  if (lv->integrity && (lv->kind != FF_LVK_RAID || lv->no_rmeta)) {
    ff_cfg_join(kp, sizeof kp, path, "raidintegrity");
    return ff_cfg_err(c->file, config_setting_get_member(g, "raidintegrity"),
                      kp,
                      "lvm refuses it: Integrity can only be added to "
                      "raid1,4,5,6,10.");
  }
  /* uuids: one per sub-LV, creation order */
  if ((s = config_setting_get_member(g, "uuids"))) {
    ff_cfg_join(kp, sizeof kp, path, "uuids");
    if (lv->count != 1)
      return ff_cfg_err(c->file, s, kp,
                        "uuids needs count = 1 (the group makes %u LVs)",
                        lv->count);
    lv->nuuids = sub_lvs(lv);
    if (ff_sp_strlist(c, g, path, "uuids", lv->nuuids, 1, &lv->uuids) < 0)
      return -1;
  }
  /* write_times, descriptions: the two writes of a two-write lvcreate */
  if ((lv->kind == FF_LVK_MIRROR && lv->core_log) || lv->no_rmeta)
    for (int k = 0; k < 2; k++) {
      const char *key = k ? "descriptions" : "write_times";

      if ((s = config_setting_get_member(g, key))) {
        ff_cfg_join(kp, sizeof kp, path, key);
        return ff_cfg_err(
          c->file, s, kp, "%s makes one write (use time and description)",
          lv->no_rmeta ? "a raid0 LV" : "a mirror with a core log");
      }
    }
  if (lv->integrity && (s = config_setting_get_member(g, "descriptions"))) {
    ff_cfg_join(kp, sizeof kp, path, "descriptions");
    return ff_cfg_err(c->file, s, kp,
                      "not supported with raidintegrity (give description: "
                      "the writes are \"Write[N] from\" it)");
  }
  /* with integrity, write_times has one entry per write: the raid LV's
   * two, one per _imeta LV, the layers, the flag cleared */
  if (parse_writes(c, g, path, lv, ff_spec_lv_writes(lv), 1) < 0)
    return -1;
  return 0;
}

/* The first of keys that group g has (its setting in *s), or NULL. */
static const char *
first_given(const config_setting_t *g, const char *const *keys,
            const config_setting_t **s)
{
  for (; *keys; keys++)
    if ((*s = config_setting_get_member(g, *keys)))
      return *keys;
  return NULL;
}

/* The keys only a thin or cache pool, thin or cache LV or snapshot
 * takes. */
static const char *const ts_keys[] = {
  "chunk_size",    "metadata_size", "discards",   "zero",      "pmspare",
  "pool",          "origin",        "cow_header", "cachemode", "policy",
  "cachesettings", "cachevol",      NULL};

/* Which of ts_keys each of those types takes, as a string of ' ' and 'x'
 * in ts_keys' order. */
static int
ts_key_ok(enum ff_lv_kind kind, unsigned k)
{
  static const char *const ok[] = {
    [FF_LVK_THIN_POOL] = "xxxxx       ", [FF_LVK_THIN] = "     xx     ",
    [FF_LVK_SNAPSHOT] = "x     xx    ",  [FF_LVK_CACHE_POOL] = "xx  x   xxx ",
    [FF_LVK_CACHE] = "     x  xx x",     [FF_LVK_WRITECACHE] = "          xx",
  };

  return kind < sizeof ok / sizeof *ok && ok[kind] && ok[kind][k] == 'x';
}

static const char *
ts_type_name(enum ff_lv_kind kind)
{
  switch (kind) {
  case FF_LVK_THIN_POOL:
    return "thin-pool";
  case FF_LVK_THIN:
    return "thin";
  case FF_LVK_CACHE_POOL:
    return "cache-pool";
  case FF_LVK_CACHE:
    return "cache";
  case FF_LVK_WRITECACHE:
    return "writecache";
  default:
    return "snapshot";
  }
}

int
ff_sp_cache_opts(const struct ff_spec_ctx *c, const config_setting_t *g,
                 const char *path, enum ff_cache_mode *mode,
                 enum ff_cache_policy *policy)
{
  static const char *const modes[] = {"", "writethrough", "writeback",
                                      "passthrough", NULL};
  static const char *const policies[] = {"", "smq", "mq", NULL};
  char *str = NULL, kp[256];
  unsigned i;

  for (int k = 0; k < 2; k++) {
    const char *key = k ? "policy" : "cachemode";
    const char *const *names = k ? policies : modes;

    if (ff_cfg_str(c->file, g, path, key, &str) < 0)
      return -1;
    if (!str)
      continue;
    for (i = 1; names[i] && strcmp(str, names[i]); i++)
      ;
    if (!names[i]) {
      ff_cfg_join(kp, sizeof kp, path, key);
      ff_cfg_err(c->file, config_setting_get_member(g, key), kp,
                 k ? "unknown policy '%s' (expected smq or mq; lvm's policy "
                     "settings are not supported yet)"
                   : "unknown cachemode '%s' (expected writethrough, "
                     "writeback or passthrough)",
                 str);
      free(str);
      return -1;
    }
    free(str);
    str = NULL;
    if (k)
      *policy = (enum ff_cache_policy)i;
    else
      *mode = (enum ff_cache_mode)i;
  }
  return 0;
}

/* stripes (at least min; default 2, or 1 when min is 1) and stripe_size
 * (default 64 KiB) of a striped LV or a thin pool's data (-i, -I). */
static int
parse_stripes(const struct ff_spec_ctx *c, const config_setting_t *g,
              const char *path, struct ff_spec_lv *lv, unsigned min)
{
  char kp[256];

  lv->stripes = min > 1 ? min : 1;
  lv->stripe_size = 64 * 1024;
  if (ff_cfg_uint(c->file, g, path, "stripes", min, 128, &lv->stripes) < 0 ||
      ff_cfg_size(c->file, g, path, "stripe_size", &lv->stripe_size) < 0)
    return -1;
  if (!ff_sp_is_pow2(lv->stripe_size) || lv->stripe_size < 4096) {
    ff_cfg_join(kp, sizeof kp, path, "stripe_size");
    return ff_cfg_err(c->file, config_setting_get_member(g, "stripe_size"), kp,
                      "%llu is not a power of 2 of at least 4 KiB",
                      (unsigned long long)lv->stripe_size);
  }
  return 0;
}

/* (ff-spec-int.h) */
int
ff_sp_cachesettings(const struct ff_spec_ctx *c, const config_setting_t *g,
                    const char *path, const char *cmd, const char *example,
                    char ***out, char kp[256])
{
  const config_setting_t *s = config_setting_get_member(g, "cachesettings");
  int n;

  ff_cfg_join(kp, 256, path, "cachesettings");
  if (!s)
    return 0;
  n = config_setting_length(s);
  if (ff_sp_strlist(c, g, path, "cachesettings", (unsigned)(n > 0 ? n : 1), 0,
                    out) < 0)
    return -1;
  for (char **e = *out; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    size_t k = 0;

    while (*e + k < eq && (isalnum((unsigned char)(*e)[k]) || (*e)[k] == '_'))
      k++;
    if (!eq || eq == *e || *e + k != eq || !eq[1] ||
        strspn(eq + 1, "0123456789") != strlen(eq + 1))
      return ff_cfg_err(c->file, s, kp,
                        "'%s' is not NAME=NUMBER (%s --cachesettings %s)", *e,
                        cmd, example);
  }
  return 0;
}

/* cachesettings of a cache pool (lvcreate --cachesettings, each a
 * NAME=NUMBER as dm-cache's policies take them). */
static int
parse_cachesettings(const struct ff_spec_ctx *c, const config_setting_t *g,
                    const char *path, struct ff_spec_lv *lv)
{
  char kp[256];

  return ff_sp_cachesettings(c, g, path, "lvcreate",
                             "migration_threshold=2048", &lv->cachesettings,
                             kp);
}

/* The keys of a thin pool, thin LV or snapshot group (type parsed; for a
 * pool, lv->new_spare set by the VG from the groups before it). */
static int
parse_thin_snap(const struct ff_spec_ctx *c, const config_setting_t *g,
                const char *path, struct ff_spec_lv *lv)
{
  static const char *const not_yet[] = {"stripes",   "stripe_size", "alloc",
                                        "placement", "fill",        NULL};
  static const char *const dnames[] = {"passdown", "nopassdown", "ignore"};
  const char *tname = ts_type_name(lv->kind);
  const config_setting_t *s;
  char kp[256], *str = NULL;
  unsigned nuuids;

  for (const char *const *k = mr_keys; *k; k++)
    if (strcmp(*k, "uuids") && strcmp(*k, "write_times") &&
        strcmp(*k, "descriptions") && (s = config_setting_get_member(g, *k))) {
      ff_cfg_join(kp, sizeof kp, path, *k);
      return ff_cfg_err(c->file, s, kp,
                        "%s needs type = \"mirror\" or a raid type", *k);
    }
  for (const char *const *k = not_yet; *k; k++)
    if ((s = config_setting_get_member(g, *k)) &&
        !(lv->kind == FF_LVK_THIN_POOL && !strncmp(*k, "stripe", 6))) {
      ff_cfg_join(kp, sizeof kp, path, *k);
      return ff_cfg_err(
        c->file, s, kp, "not supported yet for type %s%s", tname,
        !strcmp(*k, "fill") ? " (give size)"
        : !strncmp(*k, "stripe", 6) &&
            (lv->kind == FF_LVK_THIN_POOL || lv->kind == FF_LVK_CACHE_POOL)
          ? " (striped pools)"
          : "");
    }
  for (unsigned k = 0; ts_keys[k]; k++)
    if (!ts_key_ok(lv->kind, k) &&
        (s = config_setting_get_member(g, ts_keys[k]))) {
      ff_cfg_join(kp, sizeof kp, path, ts_keys[k]);
      return ff_cfg_err(c->file, s, kp, "type %s takes no %s", tname,
                        ts_keys[k]);
    }
  lv->stripes = 1;
  /* lvcreate --type thin-pool -i N -I S: the data striped */
  if (lv->kind == FF_LVK_THIN_POOL && parse_stripes(c, g, path, lv, 1) < 0)
    return -1;
  if (ff_sp_cache_opts(c, g, path, &lv->cache_mode, &lv->cache_policy) < 0 ||
      (lv->kind == FF_LVK_WRITECACHE
         ? ff_sp_wc_settings(c, g, path, "lvcreate", &lv->wc,
                             &lv->cachesettings)
         : parse_cachesettings(c, g, path, lv)) < 0)
    return -1;
  switch (lv->kind) {
  case FF_LVK_THIN_POOL:
  case FF_LVK_CACHE_POOL:
    lv->zero = lv->kind == FF_LVK_THIN_POOL;
    lv->pmspare = 1;
    if (ff_cfg_size(c->file, g, path, "chunk_size", &lv->chunk_size) < 0 ||
        ff_cfg_size(c->file, g, path, "metadata_size", &lv->metadata_size) <
          0 ||
        ff_cfg_bool(c->file, g, path, "zero", &lv->zero) < 0 ||
        ff_cfg_bool(c->file, g, path, "pmspare", &lv->pmspare) < 0 ||
        ff_cfg_str(c->file, g, path, "discards", &str) < 0)
      return -1;
    ff_cfg_join(kp, sizeof kp, path, "chunk_size");
    s = config_setting_get_member(g, "chunk_size");
    /* lvm's validate_thin_pool_chunk_size, validate_cache_chunk_size:
     * a multiple of the smallest chunk, at most 1 GiB */
    if (s) {
      int cache = lv->kind == FF_LVK_CACHE_POOL;
      uint64_t min = cache ? 32u << 10 : 64u << 10;
      const char *what = cache ? "Cache" : "Thin pool";

      if (lv->chunk_size < min || lv->chunk_size > (1u << 30))
        return ff_cfg_err(c->file, s, kp,
                          "%llu: lvm refuses it: %s chunk size is not in the "
                          "range %.2f KiB to 1.00 GiB",
                          (unsigned long long)lv->chunk_size, what,
                          (double)(min >> 10));
      if (lv->chunk_size % min)
        return ff_cfg_err(c->file, s, kp,
                          "%llu: lvm refuses it: %s chunk size must be a "
                          "multiple of %.2f KiB",
                          (unsigned long long)lv->chunk_size, what,
                          (double)(min >> 10));
    }
    ff_cfg_join(kp, sizeof kp, path, "metadata_size");
    if ((s = config_setting_get_member(g, "metadata_size")) &&
        !lv->metadata_size)
      return ff_cfg_err(c->file, s, kp, "must be positive");
    if (str) {
      unsigned i = 0;

      while (i < 3 && strcmp(str, dnames[i]))
        i++;
      if (i == 3) {
        ff_cfg_join(kp, sizeof kp, path, "discards");
        ff_cfg_err(c->file, config_setting_get_member(g, "discards"), kp,
                   "unknown discards '%s' (expected passdown, nopassdown or "
                   "ignore)",
                   str);
        free(str);
        return -1;
      }
      lv->discards = (enum ff_discards)i;
      free(str);
    }
    if (!lv->pmspare)
      lv->new_spare = 0;
    nuuids = lv->new_spare ? 3 : 2;
    break;
  case FF_LVK_WRITECACHE:
  case FF_LVK_THIN:
  case FF_LVK_CACHE:
    if (ff_cfg_str(c->file, g, path, "pool", &lv->pool) < 0 ||
        ff_cfg_str(c->file, g, path, "origin", &lv->origin) < 0 ||
        ff_cfg_str(c->file, g, path, "cachevol", &lv->cachevol) < 0)
      return -1;
    /* lvcreate --type cache|writecache --cachevol LV2 -n LV -L SIZE: LV
     * made (one write), then LV2 attached to it (a second) */
    if (lv->cachevol && lv->pool)
      return ff_cfg_err(c->file, g, path,
                        "give pool or cachevol, not both (lvcreate --type "
                        "cache --cachepool POOL, or --cachevol LV2)");
    if (lv->cachevol) {
      static const char *const no[] = {"cachemode", "policy", NULL};
      const char *k = first_given(g, no, &s);

      if (k) {
        ff_cfg_join(kp, sizeof kp, path, k);
        return ff_cfg_err(c->file, s, kp,
                          "lvm refuses it: --cache%s is supported only with "
                          "cache. (lvcreate --cachevol takes neither; an "
                          "lvconvert --cachevol change does)",
                          *k == 'c' ? "mode" : "policy");
      }
      nuuids = 1; /* LV_corig, LV_wcorig */
      break;
    }
    if (lv->kind == FF_LVK_WRITECACHE)
      return ff_cfg_err(c->file, g, path,
                        "type writecache needs cachevol = \"NAME\" (an "
                        "unused linear or striped LV of the VG made before "
                        "it)");
    if (lv->origin) {
      /* lvcreate -s VG/THIN: a thin snapshot, in its origin's pool, of its
       * origin's size, skipped by activation unless -kn; with a pool
       * (lvcreate -s --thinpool POOL VG/LV), LV is an external origin */
      static const char *const own[] = {"size", "fill", NULL};
      const char *k = first_given(g, own, &s);

      if (k) {
        ff_cfg_join(kp, sizeof kp, path, k);
        return ff_cfg_err(c->file, s, kp,
                          "a thin snapshot (origin = \"%s\") takes its size "
                          "from its origin",
                          lv->origin);
      }
      lv->activation_skip = !lv->pool;
      if (ff_cfg_bool(c->file, g, path, "activation_skip",
                      &lv->activation_skip) < 0)
        return -1;
      nuuids = 0;
      break;
    }
    if (!lv->pool)
      return ff_cfg_err(c->file, g, path,
                        "type %s needs pool = \"NAME\" (a %s-pool LV of "
                        "the VG made before it)%s",
                        tname, tname,
                        lv->kind == FF_LVK_CACHE
                          ? " or cachevol = \"NAME\" (an unused linear or "
                            "striped LV)"
                          : "");
    nuuids = lv->kind == FF_LVK_CACHE; /* LV_corig */
    break;
  default:
    if (ff_cfg_str(c->file, g, path, "origin", &lv->origin) < 0 ||
        ff_cfg_bool(c->file, g, path, "cow_header", &lv->cow_header) < 0)
      return -1;
    if (!lv->origin)
      return ff_cfg_err(c->file, g, path,
                        "type snapshot needs origin = \"NAME\" (an LV of the "
                        "VG made before it)");
    lv->chunk_size = 4096;
    if (ff_cfg_size(c->file, g, path, "chunk_size", &lv->chunk_size) < 0)
      return -1;
    if (!ff_sp_is_pow2(lv->chunk_size) || lv->chunk_size < 4096 ||
        lv->chunk_size > (512u << 10)) {
      ff_cfg_join(kp, sizeof kp, path, "chunk_size");
      return ff_cfg_err(c->file, config_setting_get_member(g, "chunk_size"),
                        kp,
                        "%llu: lvm refuses it: Chunk size must be a power of "
                        "2 in the range 4K to 512K",
                        (unsigned long long)lv->chunk_size);
    }
    nuuids = 1;
    break;
  }
  /* uuids: the sub-LVs in lvm's creation order */
  if ((s = config_setting_get_member(g, "uuids"))) {
    ff_cfg_join(kp, sizeof kp, path, "uuids");
    if (!nuuids)
      return ff_cfg_err(c->file, s, kp, "a thin LV has no sub-LVs (use uuid)");
    if (lv->count != 1)
      return ff_cfg_err(c->file, s, kp,
                        "uuids needs count = 1 (the group makes %u LVs)",
                        lv->count);
    lv->nuuids = nuuids;
    if (ff_sp_strlist(c, g, path, "uuids", lv->nuuids, 1, &lv->uuids) < 0)
      return -1;
  }
  return parse_writes(c, g, path, lv, ff_spec_lv_writes(lv), 0);
}

/* (ff-spec-int.h) lvm's major is the host's device-mapper major. */
int
ff_sp_lv_flags(const struct ff_spec_ctx *c, const config_setting_t *g,
               const char *path, struct ff_spec_lv *lv)
{
  static const char *const keys[] = {
    "permission", "activation_skip", "read_ahead", "minor", "major", NULL};
  const config_setting_t *s;
  char *v = NULL;
  char kp[256];
  int64_t n;
  int r;

  for (const char *const *k = keys; *k; k++)
    if (lv->kind != FF_LVK_STRIPED && (s = config_setting_get_member(g, *k))) {
      ff_cfg_join(kp, sizeof kp, path, *k);
      return ff_cfg_err(c->file, s, kp,
                        "%s is supported for linear and striped LVs only "
                        "(not yet for type %s)",
                        *k, lv->segtype);
    }
  if ((r = ff_cfg_str(c->file, g, path, "permission", &v)) < 0)
    return -1;
  if (r) {
    s = config_setting_get_member(g, "permission");
    ff_cfg_join(kp, sizeof kp, path, "permission");
    if (strcmp(v, "r") && strcmp(v, "rw")) {
      r = ff_cfg_err(c->file, s, kp,
                     "'%s' is not a permission (expected \"r\" or \"rw\", as "
                     "lvcreate -p takes them)",
                     v);
      free(v);
      return r;
    }
    lv->readonly = !strcmp(v, "r");
    free(v);
    v = NULL;
  }
  if (ff_cfg_bool(c->file, g, path, "activation_skip", &lv->activation_skip) <
      0)
    return -1;

  s = config_setting_get_member(g, "read_ahead");
  ff_cfg_join(kp, sizeof kp, path, "read_ahead");
  if (s && config_setting_type(s) == CONFIG_TYPE_STRING) {
    const char *t = config_setting_get_string(s);
    uint64_t b;

    if (!strcmp(t, "auto"))
      lv->read_ahead = 0;
    else if (!strcmp(t, "none"))
      lv->read_ahead = -1;
    else if (ff_cfg_size_value(c->file, s, kp, &b) < 0)
      return -1;
    else if (b % FF_SECTOR || b / FF_SECTOR > INT32_MAX)
      return ff_cfg_err(c->file, s, kp,
                        "%s is not a whole number of sectors up to %d", t,
                        INT32_MAX);
    else
      lv->read_ahead = (int32_t)(b / FF_SECTOR);
    if (lv->read_ahead == 0 && strcmp(t, "auto"))
      lv->read_ahead = -1; /* lvm: 0 is none */
  } else if (s) {
    if (ff_cfg_int(c->file, g, path, "read_ahead", 0, INT32_MAX, &n) < 0)
      return -1;
    lv->read_ahead = n ? (int32_t)n : -1;
  }
  /* lvcreate: a multiple of the page size (8 sectors); "WARNING:
   * Overriding readahead to N sectors, a multiple of 4K page size." */
  if (lv->read_ahead > 0 && lv->read_ahead % 8)
    lv->read_ahead = lv->read_ahead < 8 ? 8 : lv->read_ahead / 8 * 8;

  lv->major = 253;
  if ((r = ff_cfg_int(c->file, g, path, "minor", INT64_MIN, INT64_MAX, &n)) <
      0)
    return -1;
  if (r) {
    ff_cfg_join(kp, sizeof kp, path, "minor");
    if (n < 0 || n > 1048575)
      return ff_cfg_err(c->file, config_setting_get_member(g, "minor"), kp,
                        "lvm refuses it (\"Minor number %lld outside range "
                        "0-1048575.\")",
                        (long long)n);
    lv->fixed_minor = 1;
    lv->minor = (uint32_t)n;
  }
  if ((r = ff_cfg_int(c->file, g, path, "major", INT64_MIN, INT64_MAX, &n)) <
      0)
    return -1;
  if (r) {
    s = config_setting_get_member(g, "major");
    ff_cfg_join(kp, sizeof kp, path, "major");
    if (!lv->fixed_minor)
      return ff_cfg_err(c->file, s, kp,
                        "major needs minor (lvcreate --persistent y "
                        "--minor N; lvm writes the host's device-mapper "
                        "major)");
    if (n < 0 || n > 4095)
      return ff_cfg_err(c->file, s, kp,
                        "lvm refuses it (\"Major number %lld outside range "
                        "0-4095.\")",
                        (long long)n);
    lv->major = (uint32_t)n;
  }
  return 0;
}

int
ff_sp_lv(const struct ff_spec_ctx *c, const config_setting_t *g,
         const char *path, struct ff_spec_lv *lv)
{
  static const char *const keys[] = {"count",
                                     "name",
                                     "type",
                                     "stripes",
                                     "stripe_size",
                                     "size",
                                     "fill",
                                     "alloc",
                                     "placement",
                                     "time",
                                     "description",
                                     "uuid",
                                     "tags",
                                     "mirrors",
                                     "region_size",
                                     "mirror_log",
                                     "nosync",
                                     "uuids",
                                     "write_times",
                                     "descriptions",
                                     "chunk_size",
                                     "metadata_size",
                                     "discards",
                                     "zero",
                                     "pmspare",
                                     "pool",
                                     "origin",
                                     "cow_header",
                                     "cachemode",
                                     "policy",
                                     "permission",
                                     "activation_skip",
                                     "cachesettings",
                                     "read_ahead",
                                     "minor",
                                     "major",
                                     "cachevol",
                                     "raidintegrity",
                                     "raidintegritymode",
                                     NULL};
  const config_setting_t *s;
  char *type = NULL;
  char kp[256];
  int have_size, have_fill, r;

  lv->line = (int)config_setting_source_line(g);
  lv->count = 1;
  if (ff_cfg_check_keys(c->file, g, path, keys) < 0 ||
      ff_cfg_uint(c->file, g, path, "count", 1, 100000, &lv->count) < 0 ||
      ff_cfg_str(c->file, g, path, "name", &lv->name) < 0 ||
      ff_cfg_str(c->file, g, path, "description", &lv->description) < 0 ||
      ff_sp_uuid(c, g, path, "uuid", &lv->uuid) < 0)
    return -1;
  if (!lv->name && !(lv->name = strdup("lvol%u")))
    return ff_cfg_err(c->file, g, path, "out of memory");
  if (ff_sp_check_format(c, g, path, "name", lv->name, lv->count) < 0)
    return -1;
  r = ff_cfg_int(c->file, g, path, "time", INT64_MIN / 2, INT64_MAX / 2,
                 &lv->time);
  if (r < 0)
    return -1;
  lv->has_time = r;
  if (ff_sp_tags(c, g, path, "tags", &lv->tags) < 0)
    return -1;
  if (lv->uuid && lv->count != 1)
    return ff_cfg_err(c->file, config_setting_get_member(g, "uuid"), path,
                      "uuid needs count = 1 (the group makes %u LVs)",
                      lv->count);

  if (ff_cfg_str(c->file, g, path, "type", &type) < 0)
    return -1;
  ff_cfg_join(kp, sizeof kp, path, "type");
  if (!type || !strcmp(type, "linear")) {
    lv->stripes = 1;
    if (config_setting_get_member(g, "stripes") ||
        config_setting_get_member(g, "stripe_size")) {
      free(type);
      ff_cfg_join(kp, sizeof kp, path, "stripes");
      return ff_cfg_err(c->file, g, kp,
                        "stripes and stripe_size need type = \"striped\"");
    }
  } else if (!strcmp(type, "striped")) {
    lv->striped = 1;
    free(type);
    type = NULL;
    if (parse_stripes(c, g, path, lv, 2) < 0)
      return -1;
  } else if (parse_segtype(type, lv) == 0) {
    free(type);
    if (parse_mirror_raid(c, g, path, lv) < 0)
      return -1;
    type = NULL;
  } else if (!strcmp(type, "thin-pool") || !strcmp(type, "thin") ||
             !strcmp(type, "snapshot") || !strcmp(type, "cache-pool") ||
             !strcmp(type, "cache") || !strcmp(type, "writecache")) {
    lv->kind = !strcmp(type, "thin-pool")    ? FF_LVK_THIN_POOL
               : !strcmp(type, "thin")       ? FF_LVK_THIN
               : !strcmp(type, "cache-pool") ? FF_LVK_CACHE_POOL
               : !strcmp(type, "cache")      ? FF_LVK_CACHE
               : !strcmp(type, "writecache") ? FF_LVK_WRITECACHE
                                             : FF_LVK_SNAPSHOT;
    lv->segtype = ts_type_name(lv->kind);
    lv->ktype = lv->segtype;
    free(type);
    type = NULL;
    if (parse_thin_snap(c, g, path, lv) < 0)
      return -1;
  } else {
    static const char *const later[] = {"vdo", "vdo-pool", "integrity", NULL};

    for (const char *const *l = later; *l; l++)
      if (!strcmp(type, *l)) {
        r = ff_cfg_err(c->file, config_setting_get_member(g, "type"), kp,
                       "type %s is not supported yet", type);
        free(type);
        return r;
      }
    r = ff_cfg_err(c->file, config_setting_get_member(g, "type"), kp,
                   "unknown LV type '%s' (expected linear, striped, mirror, "
                   "raid0, raid0_meta, raid1, raid4, raid5, raid6, raid10, "
                   "thin-pool, thin, "
                   "snapshot, cache-pool, cache or writecache)",
                   type);
    free(type);
    return r;
  }
  free(type);
  if (lv->kind == FF_LVK_STRIPED || lv->kind == FF_LVK_MIRROR ||
      lv->kind == FF_LVK_RAID)
    for (const char *const *k = ts_keys; *k; k++)
      if (config_setting_get_member(g, *k)) {
        ff_cfg_join(kp, sizeof kp, path, *k);
        return ff_cfg_err(
          c->file, config_setting_get_member(g, *k), kp,
          "%s needs type = \"%s\"", *k,
          !strcmp(*k, "pool") ? "thin\" or \"cache"
          : !strcmp(*k, "origin") || !strcmp(*k, "cow_header") ? "snapshot"
          : !strcmp(*k, "chunk_size")
            ? "thin-pool\", \"cache-pool\" or \"snapshot"
          : !strcmp(*k, "metadata_size") || !strcmp(*k, "pmspare")
            ? "thin-pool\" or \"cache-pool"
          : !strcmp(*k, "cachemode") || !strcmp(*k, "policy")
            ? "cache-pool\" or \"cache"
          : !strcmp(*k, "cachesettings") ? "cache-pool\" or \"writecache"
          : !strcmp(*k, "cachevol")      ? "cache\" or \"writecache"
                                         : "thin-pool");
      }
  if (lv->kind == FF_LVK_STRIPED)
    for (const char *const *k = mr_keys; *k; k++)
      if (config_setting_get_member(g, *k)) {
        ff_cfg_join(kp, sizeof kp, path, *k);
        if (!strcmp(*k, "write_times") || !strcmp(*k, "descriptions"))
          return ff_cfg_err(c->file, config_setting_get_member(g, *k), kp,
                            "a %s LV makes one write (use time and "
                            "description)",
                            lv->striped ? "striped" : "linear");
        return ff_cfg_err(c->file, config_setting_get_member(g, *k), kp,
                          "%s needs type = \"mirror\" or a raid type", *k);
      }

  if (ff_sp_alloc(c, g, path, 0, &lv->alloc) < 0)
    return -1;
  if (lv->kind == FF_LVK_THIN && lv->origin) {
    /* (activation_skip read above; the size is the origin's) */
    static const char *const flags[] = {"permission", "read_ahead", "minor",
                                        "major", NULL};

    for (const char *const *k = flags; *k; k++)
      if ((s = config_setting_get_member(g, *k))) {
        ff_cfg_join(kp, sizeof kp, path, *k);
        return ff_cfg_err(c->file, s, kp,
                          "%s is supported for linear and striped LVs only "
                          "(not yet for a thin snapshot)",
                          *k);
      }
    return 0;
  }
  if (ff_sp_lv_flags(c, g, path, lv) < 0)
    return -1;

  have_size = ff_cfg_size(c->file, g, path, "size", &lv->size);
  have_fill = ff_cfg_float(c->file, g, path, "fill", 0, 1, &lv->fill);
  if (have_size < 0 || have_fill < 0)
    return -1;
  if (lv->kind != FF_LVK_STRIPED &&
      config_setting_get_member(g, "placement")) {
    ff_cfg_join(kp, sizeof kp, path, "placement");
    return ff_cfg_err(c->file, config_setting_get_member(g, "placement"), kp,
                      "placement is not supported for type %s (the farm "
                      "places mirror and raid LVs by lvm's policy only)",
                      lv->segtype);
  }
  if (parse_placement(c, g, path, lv) < 0)
    return -1;
  ff_cfg_join(kp, sizeof kp, path, "fill");
  if (lv->nplace && have_fill)
    return ff_cfg_err(c->file, config_setting_get_member(g, "fill"), kp,
                      "fill cannot be used with placement (the placement "
                      "gives the size)");
  if (lv->nplace && !have_size)
    have_size = 1; /* size 0: the placement's */
  else if (have_size == have_fill)
    return ff_cfg_err(c->file, g, path,
                      "give exactly one of size and fill (%s)",
                      have_size ? "both are set" : "neither is set");
  if (have_size && lv->size == 0 && !lv->nplace)
    return ff_cfg_err(c->file, config_setting_get_member(g, "size"), path,
                      "size must be positive");
  ff_cfg_join(kp, sizeof kp, path, "fill");
  if (have_fill && !(lv->fill > 0 && lv->fill <= 1))
    return ff_cfg_err(c->file, config_setting_get_member(g, "fill"), kp,
                      "%g is out of range (expected a fraction in (0, 1])",
                      lv->fill);
  return 0;
}
