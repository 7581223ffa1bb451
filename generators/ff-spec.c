/* fusefarm: farm spec parser (see ff-spec.h, docs/spec-format.md).
 *
 * libconfig does the lexing and parsing and keeps the line of every
 * setting; the parser walks the tree, rejects unknown keys and checks
 * every value, naming file:line: key in each message.  This file holds
 * the entry points, the top level, VG groups (their PV layouts, device
 * ids and sizes, changes), orphan, blank and signature groups, freeing
 * and scaling; LV groups are ff-spec-lv.c, the values several groups take
 * ff-spec-keys.c (ff-spec-int.h says what they share).
 */
#include "ff-spec-int.h"
#include "ff-farm.h"
#include "ff-builtin.h"
#include "ff-cfg-int.h"
#include "ff-error.h"
#include "ff-util.h"

#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char ff_spec_builtin_default[] =
  "# The built-in default farm: every kind of device, small and quick.\n"
  "seed = 1;\n"
  "device_size = \"1G\";\n"
  "vgs = (\n"
  "  { count = 4; pvs = 1; lvs = ({ fill = 0.5; }); },\n"
  "  { count = 2; pvs = 3;\n"
  "    lvs = ({ type = \"striped\"; stripes = 3; fill = 0.6; },\n"
  "           { fill = 0.2; }); }\n"
  ");\n"
  "orphans = ({ count = 2; });\n"
  "blanks = ({ count = 1; });\n"
  "signatures = ({ type = \"gpt\"; });\n";

/* The commands a change can be, and the keys each takes beside command,
 * time and description. */
static const struct {
  const char *name;
  enum ff_change_cmd cmd;
  const char *const keys[9];
} change_cmds[] = {
  {"vgchange", FF_CHG_VG, {"addtag", "deltag", "resizeable", NULL}},
  {"lvchange",
   FF_CHG_LV,
   {"lv", "addtag", "deltag", "permission", "activation_skip", "read_ahead",
    "minor", "major", NULL}},
  {"pvchange", FF_CHG_PV, {"pv", "addtag", "deltag", "allocatable", NULL}},
  {"lvconvert",
   FF_CHG_CACHE,
   {"lv", "type", "pool", "cachevol", "cachemode", "policy", "uuid",
    "cachesettings", NULL}},
  {"lvrename", FF_CHG_RENAME, {"lv", "new_name", NULL}},
  {"lvextend", FF_CHG_EXTEND, {"lv", "size", NULL}},
  {"lvremove",
   FF_CHG_REMOVE,
   {"lv", "record_lvs_history", "write_times", NULL}},
  {"pvmove", FF_CHG_PVMOVE, {"pv", "to", "uuid", NULL}},
};

const char *const ff_wc_setting_names[FF_WC_NSETTINGS] = {
  "high_watermark",  "low_watermark", "writeback_jobs", "autocommit_blocks",
  "autocommit_time", "fua",           "nofua",          "cleaner",
  "max_age"};

/* (ff-spec-int.h) */
int
ff_sp_wc_settings(const struct ff_spec_ctx *c, const config_setting_t *g,
                  const char *path, const char *cmd, struct ff_wcsettings *w,
                  char ***list)
{
  const config_setting_t *s = config_setting_get_member(g, "cachesettings");
  char kp[256];

  if (ff_sp_cachesettings(c, g, path, cmd, "high_watermark=50", list, kp) < 0)
    return -1;
  for (char **e = *list; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    size_t klen = (size_t)(eq - *e);
    unsigned k = 0;
    unsigned long long v;

    errno = 0;
    v = strtoull(eq + 1, NULL, 10);
    if (errno || v > UINT32_MAX)
      return ff_cfg_err(c->file, s, kp, "'%s': %s is too large", *e, eq + 1);
    if (klen == 10 && !strncmp(*e, "block_size", 10)) {
      if (v != 512 && v != 4096)
        return ff_cfg_err(c->file, s, kp,
                          "'%s': lvm refuses it: Invalid setting: block_size "
                          "(512 or 4096)",
                          *e);
      w->block_size = (uint32_t)v;
      continue;
    }
    while (k < FF_WC_NSETTINGS && (strlen(ff_wc_setting_names[k]) != klen ||
                                   strncmp(*e, ff_wc_setting_names[k], klen)))
      k++;
    if (k == FF_WC_NSETTINGS)
      return ff_cfg_err(c->file, s, kp,
                        "'%.*s' is not a writecache setting lvm 2.03.16 "
                        "knows (block_size, high_watermark, low_watermark, "
                        "writeback_jobs, autocommit_blocks, autocommit_time, "
                        "fua, nofua, cleaner, max_age)",
                        (int)klen, *e);
    if ((k == FF_WC_HIGH_WATERMARK || k == FF_WC_LOW_WATERMARK) && v > 100)
      return ff_cfg_err(c->file, s, kp,
                        "'%s': lvm refuses it: Invalid setting: %s (at most "
                        "100)",
                        *e, ff_wc_setting_names[k]);
    if ((k == FF_WC_FUA && w->set[FF_WC_NOFUA]) ||
        (k == FF_WC_NOFUA && w->set[FF_WC_FUA]))
      return ff_cfg_err(c->file, s, kp,
                        "lvm refuses it: Setting fua and nofua cannot both "
                        "be set.");
    w->set[k] = 1;
    w->v[k] = v;
  }
  if (w->set[FF_WC_HIGH_WATERMARK] && w->set[FF_WC_LOW_WATERMARK] &&
      w->v[FF_WC_HIGH_WATERMARK] <= w->v[FF_WC_LOW_WATERMARK])
    return ff_cfg_err(c->file, s, kp,
                      "lvm refuses it: High watermark must be greater than "
                      "low watermark.");
  return 0;
}

/* "an lvchange", "a vgchange" */
static const char *
article(const char *cmd)
{
  return cmd[0] == 'l' ? "an" : "a";
}

/* One entry of a VG group's changes: a write of vgchange, lvchange or
 * pvchange (tags, -x, lvchange's -p -k -r -My), of lvconvert --type cache,
 * lvrename, lvextend or lvremove. */
static int
parse_change(const struct ff_spec_ctx *c, const config_setting_t *g,
             const char *path, unsigned npvs, struct ff_spec_change *ch)
{
  static const char *const keys[] = {"command",
                                     "lv",
                                     "pv",
                                     "addtag",
                                     "deltag",
                                     "time",
                                     "description",
                                     "pool",
                                     "cachemode",
                                     "policy",
                                     "uuid",
                                     "resizeable",
                                     "allocatable",
                                     "permission",
                                     "activation_skip",
                                     "read_ahead",
                                     "minor",
                                     "major",
                                     "new_name",
                                     "size",
                                     "type",
                                     "cachevol",
                                     "record_lvs_history",
                                     "cachesettings",
                                     "write_times",
                                     "to",
                                     NULL};
  char *cmd = NULL, kp[256];
  const char *name;
  unsigned ci = 0, nc = sizeof change_cmds / sizeof change_cmds[0];
  int r;

  ch->line = (int)config_setting_source_line(g);
  ch->resizeable = ch->allocatable = ch->history = -1;
  if (ff_cfg_check_keys(c->file, g, path, keys) < 0 ||
      ff_cfg_str(c->file, g, path, "command", &cmd) < 0)
    return -1;
  ff_cfg_join(kp, sizeof kp, path, "command");
  if (!cmd)
    return ff_cfg_err(c->file, g, kp,
                      "missing (vgchange, lvchange, pvchange, lvconvert, "
                      "lvrename, lvextend or lvremove)");
  while (ci < nc && strcmp(cmd, change_cmds[ci].name))
    ci++;
  if (ci == nc) {
    r = ff_cfg_err(c->file, config_setting_get_member(g, "command"), kp,
                   "'%s' is not vgchange, lvchange, pvchange, lvconvert, "
                   "lvrename, lvextend or lvremove",
                   cmd);
    free(cmd);
    return r;
  }
  free(cmd);
  name = change_cmds[ci].name;
  ch->cmd = change_cmds[ci].cmd;
  /* the keys of another command */
  for (const char *const *k = keys + 1; *k; k++) {
    const config_setting_t *m = config_setting_get_member(g, *k);
    const char *const *ok = change_cmds[ci].keys;
    struct ff_sb sb = FF_SB_INIT;

    if (!m || !strcmp(*k, "time") || !strcmp(*k, "description"))
      continue;
    while (*ok && strcmp(*ok, *k))
      ok++;
    if (*ok)
      continue;
    for (ok = change_cmds[ci].keys; *ok; ok++)
      ff_sb_addf(&sb, "%s%s", ok == change_cmds[ci].keys ? "" : ", ", *ok);
    ff_cfg_join(kp, sizeof kp, path, *k);
    r = ff_cfg_err(c->file, m, kp, "%s %s takes no %s (it takes %s)",
                   article(name), name, *k, sb.buf ? sb.buf : "");
    ff_sb_release(&sb);
    return r;
  }
  if (ff_cfg_str(c->file, g, path, "lv", &ch->lv) < 0 ||
      ff_cfg_uint(c->file, g, path, "pv", 0, npvs ? npvs - 1 : 0, &ch->pv) <
        0 ||
      ff_sp_tags(c, g, path, "addtag", &ch->addtag) < 0 ||
      ff_sp_tags(c, g, path, "deltag", &ch->deltag) < 0 ||
      ff_cfg_str(c->file, g, path, "description", &ch->description) < 0 ||
      ff_cfg_bool(c->file, g, path, "resizeable", &ch->resizeable) < 0 ||
      ff_cfg_bool(c->file, g, path, "allocatable", &ch->allocatable) < 0 ||
      ff_cfg_str(c->file, g, path, "new_name", &ch->new_name) < 0 ||
      ff_cfg_size(c->file, g, path, "size", &ch->size) < 0 ||
      ff_cfg_bool(c->file, g, path, "record_lvs_history", &ch->history) < 0)
    return -1;
  if (ch->history < 0)
    ch->history = 0;
  r = ff_cfg_int(c->file, g, path, "time", INT64_MIN / 2, INT64_MAX / 2,
                 &ch->time);
  if (r < 0)
    return -1;
  ch->has_time = r;
  if (ch->cmd == FF_CHG_LV) {
    /* lvchange -p, -k, -r, -My --minor: read as lvcreate's, kept when
     * given */
    struct ff_spec_lv fl = {.kind = FF_LVK_STRIPED};

    if (ff_sp_lv_flags(c, g, path, &fl) < 0)
      return -1;
    ch->set_perm = config_setting_get_member(g, "permission") != NULL;
    ch->readonly = fl.readonly;
    ch->set_skip = config_setting_get_member(g, "activation_skip") != NULL;
    ch->act_skip = fl.activation_skip;
    ch->set_ra = config_setting_get_member(g, "read_ahead") != NULL;
    ch->read_ahead = fl.read_ahead;
    ch->set_minor = fl.fixed_minor;
    ch->major = fl.major;
    ch->minor = fl.minor;
  }
  if (ch->cmd != FF_CHG_VG && ch->cmd != FF_CHG_PV &&
      ch->cmd != FF_CHG_PVMOVE && !ch->lv)
    return ff_cfg_err(c->file, g, path, "%s %s needs lv = \"NAME\"",
                      article(name), name);
  if ((ch->cmd == FF_CHG_PV || ch->cmd == FF_CHG_PVMOVE) &&
      !config_setting_get_member(g, "pv"))
    return ff_cfg_err(c->file, g, path,
                      "%s %s needs pv = N (the PV's index in the VG)",
                      article(name), name);
  switch (ch->cmd) {
  case FF_CHG_CACHE: {
    /* lvconvert --type cache --cachepool POOL VG/LV, or --type writecache
     * --cachevol LV2 VG/LV */
    char *type = NULL;

    if (ff_cfg_str(c->file, g, path, "type", &type) < 0 ||
        ff_cfg_str(c->file, g, path, "pool", &ch->pool) < 0 ||
        ff_cfg_str(c->file, g, path, "cachevol", &ch->cachevol) < 0 ||
        ff_sp_cache_opts(c, g, path, &ch->cache_mode, &ch->cache_policy) < 0 ||
        ff_sp_uuid(c, g, path, "uuid", &ch->uuid) < 0) {
      free(type);
      return -1;
    }
    if (type && strcmp(type, "cache") && strcmp(type, "writecache")) {
      ff_cfg_join(kp, sizeof kp, path, "type");
      r =
        ff_cfg_err(c->file, config_setting_get_member(g, "type"), kp,
                   "'%s' is not cache or writecache (lvconvert --type)", type);
      free(type);
      return r;
    }
    if (type && !strcmp(type, "writecache")) {
      static const char *const no[] = {"pool", "cachemode", "policy", NULL};

      free(type);
      ch->cmd = FF_CHG_WRITECACHE;
      if (ff_sp_wc_settings(c, g, path, "lvconvert", &ch->wc,
                            &ch->cachesettings) < 0)
        return -1;
      for (const char *const *k = no; *k; k++)
        if (config_setting_get_member(g, *k)) {
          ff_cfg_join(kp, sizeof kp, path, *k);
          return ff_cfg_err(c->file, config_setting_get_member(g, *k), kp,
                            "an lvconvert --type writecache takes no %s", *k);
        }
      if (!ch->cachevol)
        return ff_cfg_err(c->file, g, path,
                          "an lvconvert --type writecache needs cachevol = "
                          "\"NAME\" (lvconvert --type writecache --cachevol "
                          "LV2 VG/LV)");
      return 0;
    }
    free(type);
    if (config_setting_get_member(g, "cachesettings")) {
      ff_cfg_join(kp, sizeof kp, path, "cachesettings");
      return ff_cfg_err(c->file, config_setting_get_member(g, "cachesettings"),
                        kp,
                        "not supported yet for lvconvert --type cache (give "
                        "them to the cache pool: its cachesettings)");
    }
    if (ch->cachevol && ch->pool)
      return ff_cfg_err(c->file, g, path,
                        "give pool or cachevol, not both (lvconvert --type "
                        "cache --cachepool POOL, or --cachevol LV2)");
    if (ch->cachevol) /* lvconvert --type cache --cachevol LV2 VG/LV */
      return 0;
    if (!ch->pool)
      return ff_cfg_err(c->file, g, path,
                        "an lvconvert needs lv = \"NAME\" and pool = "
                        "\"NAME\" (lvconvert --type cache --cachepool POOL "
                        "VG/LV) or cachevol = \"NAME\" (--cachevol LV2)");
    return 0;
  }
  case FF_CHG_RENAME:
    if (!ch->new_name)
      return ff_cfg_err(c->file, g, path,
                        "an lvrename needs new_name = \"NAME\" (lvrename VG "
                        "LV NEW_NAME)");
    return 0;
  case FF_CHG_PVMOVE: {
    /* pvmove PV [PV...]: to, the destination PVs (default: any other) */
    const config_setting_t *s = config_setting_get_member(g, "to");

    if (ff_sp_uuid(c, g, path, "uuid", &ch->uuid) < 0)
      return -1;
    if (!s)
      return 0;
    ff_cfg_join(kp, sizeof kp, path, "to");
    if (!config_setting_is_aggregate(s) || !config_setting_length(s))
      return ff_cfg_err(c->file, s, kp,
                        "expected a list of PV indexes (pvmove's "
                        "destinations)");
    ch->nto = (unsigned)config_setting_length(s);
    if (!(ch->to = calloc(ch->nto, sizeof *ch->to)))
      return ff_cfg_err(c->file, s, kp, "out of memory");
    for (unsigned i = 0; i < ch->nto; i++) {
      const config_setting_t *e = config_setting_get_elem(s, i);
      long long v = config_setting_get_int64(e);

      if ((config_setting_type(e) != CONFIG_TYPE_INT &&
           config_setting_type(e) != CONFIG_TYPE_INT64) ||
          v < 0 || v >= (long long)npvs)
        return ff_cfg_err(c->file, e, kp,
                          "entry %u is not a PV index of the VG (0 to %u)", i,
                          npvs ? npvs - 1 : 0);
      if (v == (long long)ch->pv)
        return ff_cfg_err(c->file, e, kp,
                          "PV %lld is the one pvmove moves from", v);
      ch->to[i] = (unsigned)v;
    }
    return 0;
  }
  case FF_CHG_REMOVE: {
    /* write_times: an lvremove of a thin LV writes twice (the pool's
     * delete message, then none) */
    const config_setting_t *s = config_setting_get_member(g, "write_times");

    if (!s)
      return 0;
    ff_cfg_join(kp, sizeof kp, path, "write_times");
    if (!config_setting_is_aggregate(s) || config_setting_length(s) != 2)
      return ff_cfg_err(c->file, s, kp,
                        "expected a list of 2 integers (the two writes of "
                        "an lvremove of a thin LV)");
    for (unsigned i = 0; i < 2; i++) {
      const config_setting_t *e = config_setting_get_elem(s, i);

      if (config_setting_type(e) != CONFIG_TYPE_INT &&
          config_setting_type(e) != CONFIG_TYPE_INT64)
        return ff_cfg_err(c->file, e, kp, "entry %u is not an integer", i);
      ch->write_times[i] = config_setting_get_int64(e);
    }
    if (ch->has_time)
      return ff_cfg_err(c->file, s, kp, "give time or write_times, not both");
    ch->has_write_times = 1;
    return 0;
  }
  case FF_CHG_EXTEND:
    if (!config_setting_get_member(g, "size"))
      return ff_cfg_err(c->file, g, path,
                        "an lvextend needs size = SIZE (the LV's new size, "
                        "as lvextend -L)");
    return 0;
  default:
    break;
  }
  if (!ch->addtag && !ch->deltag && ch->resizeable < 0 &&
      ch->allocatable < 0 && !ch->set_perm && !ch->set_skip && !ch->set_ra &&
      !ch->set_minor) {
    struct ff_sb sb = FF_SB_INIT;

    for (const char *const *k = change_cmds[ci].keys; *k; k++)
      if (strcmp(*k, "lv") && strcmp(*k, "pv") && strcmp(*k, "major"))
        ff_sb_addf(&sb, "%s%s", sb.buf && sb.len ? ", " : "", *k);
    r = ff_cfg_err(c->file, g, path, "changes nothing (give one of %s)",
                   sb.buf ? sb.buf : "");
    ff_sb_release(&sb);
    return r;
  }
  return 0;
}

/* The device_id_type values lvm writes into the metadata (devname never
 * is: lvm leaves those PVs' lines out). */
static const char *const id_types[] = {
  "sys_wwid",   "sys_serial", "mpath_uuid", "crypt_uuid",
  "lvmlv_uuid", "md_uuid",    "loop_file",  NULL};

/* device_id_type and device_ids (one per PV) of a VG group. */
static int
get_device_ids(const struct ff_spec_ctx *c, const config_setting_t *g,
               const char *path, struct ff_spec_vg *vg)
{
  const config_setting_t *s = config_setting_get_member(g, "device_id_type");
  char *type = NULL, kp[256];
  int r;

  if (ff_cfg_str(c->file, g, path, "device_id_type", &type) < 0 ||
      ff_sp_strlist(c, g, path, "device_ids", vg->pvs, 0, &vg->device_ids) <
        0) {
    free(type);
    return -1;
  }
  ff_cfg_join(kp, sizeof kp, path, type ? "device_id_type" : "device_ids");
  if (!type != !vg->device_ids) {
    r = ff_cfg_err(c->file, s ? s : config_setting_get_member(g, "device_ids"),
                   kp, "device_id_type and device_ids go together");
    free(type);
    return r;
  }
  if (!type)
    return 0;
  for (int i = 0; id_types[i]; i++)
    if (!strcmp(type, id_types[i]))
      vg->device_id_type = id_types[i];
  if (!vg->device_id_type) {
    r = ff_cfg_err(c->file, s, kp,
                   "'%s' is not a device_id_type lvm writes (expected "
                   "sys_wwid, sys_serial, mpath_uuid, crypt_uuid, "
                   "lvmlv_uuid, md_uuid or loop_file; devname is never "
                   "written)",
                   type);
    free(type);
    return r;
  }
  free(type);
  ff_cfg_join(kp, sizeof kp, path, "device_ids");
  for (unsigned i = 0; i < vg->pvs; i++) {
    const char *id = vg->device_ids[i];

    for (const char *p = id; *p; p++)
      if (*p == '"' || *p == '\\' || (unsigned char)*p < 32)
        return ff_cfg_err(c->file, config_setting_get_member(g, "device_ids"),
                          kp,
                          "entry %u has a quote, backslash or control "
                          "character (lvm writes the id unquoted)",
                          i);
    if (!*id)
      return ff_cfg_err(c->file, config_setting_get_member(g, "device_ids"),
                        kp, "entry %u is empty", i);
  }
  return 0;
}

/* device_sizes: one size per PV (count = 1), each a positive multiple of
 * 512, into vg->device_sizes. */
static int
get_device_sizes(const struct ff_spec_ctx *c, const config_setting_t *g,
                 const char *path, struct ff_spec_vg *vg)
{
  const config_setting_t *s;
  char kp[256];
  int r = ff_sp_list(c, g, path, "device_sizes", (int)vg->pvs,
                     "sizes such as [\"1G\", \"2G\"]", ", one per PV", &s, kp);

  if (r <= 0)
    return r;
  vg->device_sizes = calloc(vg->pvs, sizeof *vg->device_sizes);
  if (!vg->device_sizes)
    return ff_cfg_err(c->file, s, kp, "out of memory");
  for (unsigned i = 0; i < vg->pvs; i++) {
    const config_setting_t *e = config_setting_get_elem(s, i);

    if (ff_cfg_size_value(c->file, e, kp, &vg->device_sizes[i]) < 0)
      return -1;
    if (!vg->device_sizes[i] || vg->device_sizes[i] % FF_SECTOR)
      return ff_cfg_err(c->file, e, kp,
                        "entry %u: %llu is not a positive multiple of 512", i,
                        (unsigned long long)vg->device_sizes[i]);
  }
  return 1;
}

/* PVs of other sizes than the first must get the same pe_start and mda0
 * (lvm's layout depends on the size only on tiny devices). */
static int
check_layouts(const struct ff_spec_ctx *c, const config_setting_t *g,
              const char *path, const struct ff_spec_vg *vg)
{
  char kp[256];

  ff_cfg_join(kp, sizeof kp, path, "device_sizes");
  for (unsigned p = 1; vg->device_sizes && p < vg->pvs; p++) {
    struct ff_pvfmt other;

    if (ff_pvfmt_layout(&vg->fmt, vg->device_sizes[p], &other) < 0 ||
        other.pe_start != vg->fmt.lay.pe_start ||
        other.mda_size != vg->fmt.lay.mda_size)
      return ff_cfg_err(c->file,
                        config_setting_get_elem(
                          config_setting_get_member(g, "device_sizes"), p),
                        kp,
                        "PV %u (%llu bytes) would get another layout than "
                        "PV 0 (pe_start %llu)",
                        p, (unsigned long long)vg->device_sizes[p],
                        (unsigned long long)vg->fmt.lay.pe_start);
  }
  return 0;
}

/* PV layout keys shared by VG and orphan groups: pvcreate's options
 * (metadatasize, dataalignment, dataalignmentoffset, bootloaderareasize),
 * or the older pe_start and mda_size as they are; not both.  f->lay is
 * then the layout lvm makes of a device of dev_size (ff_pvfmt_layout()),
 * and pe_start and mda_size its values, for the checks that follow. */
/* One mda_copies value (pvcreate --pvmetadatacopies): 0, 1 or 2. */
static int
mda_copies_value(const struct ff_spec_ctx *c, const config_setting_t *s,
                 const char *kp, const char *what, unsigned *out)
{
  int64_t v;

  if (config_setting_type(s) != CONFIG_TYPE_INT &&
      config_setting_type(s) != CONFIG_TYPE_INT64)
    return ff_cfg_err(c->file, s, kp, "%sexpected an integer (0, 1 or 2)",
                      what);
  v = config_setting_get_int64(s);
  if (v < 0 || v > 2)
    return ff_cfg_err(c->file, s, kp,
                      "%s%lld: lvm refuses it (\"Invalid argument for "
                      "--pvmetadatacopies: %lld\"; it takes 0, 1 or 2)",
                      what, (long long)v, (long long)v);
  *out = (unsigned)v;
  return 0;
}

/* mda_copies: an integer for every PV, or (a VG group, npvs > 0) a list
 * of npvs, PV p's of each VG, into *list; f->mda_copies is then the
 * largest entry. */
static int
parse_mda_copies(const struct ff_spec_ctx *c, const config_setting_t *g,
                 const char *path, unsigned npvs, unsigned **list,
                 struct ff_spec_pvfmt *f)
{
  const config_setting_t *s = config_setting_get_member(g, "mda_copies");
  char kp[256], what[32];

  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, "mda_copies");
  if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
      config_setting_type(s) != CONFIG_TYPE_LIST)
    return mda_copies_value(c, s, kp, "", &f->mda_copies);
  if (!list)
    return ff_cfg_err(c->file, s, kp,
                      "expected an integer (0, 1 or 2; a list, one per PV, "
                      "only in a VG group)");
  if ((unsigned)config_setting_length(s) != npvs)
    return ff_cfg_err(c->file, s, kp,
                      "has %d entries (expected %u, one per PV of the VG)",
                      config_setting_length(s), npvs);
  if (!(*list = calloc(npvs, sizeof **list)))
    return ff_cfg_err(c->file, s, kp, "out of memory");
  f->mda_copies = 0;
  for (unsigned i = 0; i < npvs; i++) {
    snprintf(what, sizeof what, "entry %u: ", i);
    if (mda_copies_value(c, config_setting_get_elem(s, i), kp, what,
                         &(*list)[i]) < 0)
      return -1;
    if ((*list)[i] > f->mda_copies)
      f->mda_copies = (*list)[i];
  }
  return 0;
}

static int
parse_pvfmt(const struct ff_spec_ctx *c, const config_setting_t *g,
            const char *path, uint64_t dev_size, unsigned npvs,
            unsigned **list, struct ff_spec_pvfmt *f)
{
  static const char *const pvcreate[] = {"metadatasize", "dataalignment",
                                         "dataalignmentoffset",
                                         "bootloaderareasize", NULL};
  const config_setting_t *s, *first = NULL;
  char kp[256];
  int have_mda, have_pe;

  f->pe_start = 1u << 20;
  f->mda_copies = 1;
  f->label_sector = 1;
  f->metadatasize = 1044480; /* lvm2's default: pe_start at 1 MiB */
  f->dataalignment = 1u << 20;
  f->dataalignmentoffset = 0;
  f->bootloaderareasize = 0;
  if (parse_mda_copies(c, g, path, npvs, list, f) < 0 ||
      ff_cfg_uint(c->file, g, path, "label_sector", 0, 3, &f->label_sector) <
        0 ||
      ff_cfg_size(c->file, g, path, "metadatasize", &f->metadatasize) < 0 ||
      ff_cfg_size(c->file, g, path, "dataalignment", &f->dataalignment) < 0 ||
      ff_cfg_size(c->file, g, path, "dataalignmentoffset",
                  &f->dataalignmentoffset) < 0 ||
      ff_cfg_size(c->file, g, path, "bootloaderareasize",
                  &f->bootloaderareasize) < 0)
    return -1;
  have_pe = ff_cfg_size(c->file, g, path, "pe_start", &f->pe_start);
  have_mda = ff_cfg_size(c->file, g, path, "mda_size", &f->mda_size);
  if (have_pe < 0 || have_mda < 0)
    return -1;
  for (int i = 0; pvcreate[i] && !first; i++)
    first = config_setting_get_member(g, pvcreate[i]);
  f->legacy = have_pe || have_mda;
  if (f->legacy && first) {
    s = config_setting_get_member(g, have_pe ? "pe_start" : "mda_size");
    ff_cfg_join(kp, sizeof kp, path, have_pe ? "pe_start" : "mda_size");
    return ff_cfg_err(c->file, s, kp,
                      "give pvcreate's options (%s here) or the layout they "
                      "make (pe_start, mda_size), not both",
                      config_setting_name(first));
  }
  if (f->legacy) {
    s = config_setting_get_member(g, "pe_start");
    ff_cfg_join(kp, sizeof kp, path, "pe_start");
    if (f->pe_start % FF_SECTOR || f->pe_start < 4096 + 32768)
      return ff_cfg_err(c->file, s ? s : g, kp,
                        "%llu is not a multiple of 512 of at least 36864 (4 "
                        "KiB before mda0 plus its 32 KiB minimum)",
                        (unsigned long long)f->pe_start);
    if (!have_mda)
      f->mda_size = f->pe_start - 4096;
    s = config_setting_get_member(g, "mda_size");
    ff_cfg_join(kp, sizeof kp, path, "mda_size");
    if (f->mda_size % FF_SECTOR || f->mda_size < 32768)
      return ff_cfg_err(c->file, s ? s : g, kp,
                        "%llu is not a multiple of 512 of at least 32 KiB",
                        (unsigned long long)f->mda_size);
    if (f->mda_size > f->pe_start - 4096) /* pe_start >= 36864 here */
      return ff_cfg_err(c->file, s ? s : g, kp,
                        "mda0 [4096, %llu) would overlap the data area at "
                        "pe_start %llu",
                        (unsigned long long)ff_sp_sat_add(4096, f->mda_size),
                        (unsigned long long)f->pe_start);
    return ff_pvfmt_layout(f, dev_size, &f->lay); /* as given: cannot fail */
  }
  {
    static const struct {
      const char *key;
      uint64_t min;
      const char *what;
    } rule[] = {
      {"metadatasize", 32768, "a multiple of 512 of at least 32 KiB"},
      {"dataalignment", 4096, "a multiple of 512 of at least 4 KiB"},
      {"dataalignmentoffset", 0, "a multiple of 512"},
      {"bootloaderareasize", 0, "a multiple of 512"},
    };
    const uint64_t v[] = {f->metadatasize, f->dataalignment,
                          f->dataalignmentoffset, f->bootloaderareasize};

    for (size_t i = 0; i < sizeof rule / sizeof *rule; i++)
      if (v[i] % FF_SECTOR || v[i] < rule[i].min) {
        s = config_setting_get_member(g, rule[i].key);
        ff_cfg_join(kp, sizeof kp, path, rule[i].key);
        return ff_cfg_err(c->file, s ? s : g, kp, "%llu is not %s",
                          (unsigned long long)v[i], rule[i].what);
      }
  }
  if (f->dataalignmentoffset > f->dataalignment) {
    s = config_setting_get_member(g, "dataalignmentoffset");
    ff_cfg_join(kp, sizeof kp, path, "dataalignmentoffset");
    return ff_cfg_err(c->file, s, kp,
                      "%llu is more than dataalignment %llu (lvm: pe_align "
                      "must not be less than pe_align_offset)",
                      (unsigned long long)f->dataalignmentoffset,
                      (unsigned long long)f->dataalignment);
  }
  if (ff_pvfmt_layout(f, dev_size, &f->lay) < 0)
    return ff_cfg_err(c->file, g, path, "%s", ff_errmsg());
  f->pe_start = f->lay.pe_start;
  f->mda_size = f->lay.mda_size;
  return 0;
}

/* PV p's metadata areas (pvcreate --pvmetadatacopies). */
static unsigned
pv_mdas(const struct ff_spec_vg *vg, unsigned p)
{
  return vg->pv_mdas ? vg->pv_mdas[p] : vg->fmt.mda_copies;
}

/* ignored_mdas: the "PV:MDA" areas vgcreate --vgmetadatacopies marked
 * ignored, exactly as many as the VG has beyond vg_mda_copies (lvm's
 * choice is random: a spec names it or is refused). */
static int
parse_ignored(const struct ff_spec_ctx *c, const config_setting_t *g,
              const char *path, struct ff_spec_vg *vg, unsigned total)
{
  const config_setting_t *s;
  unsigned want = vg->vg_mdas && vg->vg_mdas < total ? total - vg->vg_mdas : 0;
  char kp[256];
  int r = ff_sp_list(c, g, path, "ignored_mdas", -1,
                     "strings \"PV:MDA\" such as [\"1:0\"]", "", &s, kp);

  if (r < 0)
    return -1;
  if (!s && want) {
    s = config_setting_get_member(g, "vg_mda_copies");
    ff_cfg_join(kp, sizeof kp, path, "vg_mda_copies");
    return ff_cfg_err(
      c->file, s, kp,
      "%u is less than the VG's %u metadata areas: vgcreate marks %u of "
      "them ignored, chosen at random (lvm's _vg_ignore_mdas, seeded from "
      "/dev/urandom); name the ones lvm chose in ignored_mdas "
      "(\"PV:MDA\", e.g. [\"1:0\"]), or give at least %u, or 0 for "
      "unmanaged",
      vg->vg_mdas, total, want, total);
  }
  if (!s)
    return 0;
  if ((unsigned)config_setting_length(s) != want)
    return ff_cfg_err(c->file, s, kp,
                      "has %d entries, but vg_mda_copies %u of the VG's %u "
                      "metadata areas leaves %u ignored",
                      config_setting_length(s), vg->vg_mdas, total, want);
  if (!(vg->pv_ignored = calloc(vg->pvs, sizeof *vg->pv_ignored)))
    return ff_cfg_err(c->file, s, kp, "out of memory");
  for (unsigned i = 0; i < want; i++) {
    const config_setting_t *e = config_setting_get_elem(s, i);
    const char *v = config_setting_get_string(e);
    unsigned p, m;
    char tail;

    if (!v || sscanf(v, "%u:%u%c", &p, &m, &tail) != 2)
      return ff_cfg_err(c->file, e, kp,
                        "entry %u: expected \"PV:MDA\" (the PV's index in "
                        "the VG, its mda 0 or 1)",
                        i);
    if (p >= vg->pvs || m >= pv_mdas(vg, p))
      return ff_cfg_err(c->file, e, kp,
                        "entry %u: '%s': the VG has no such metadata area "
                        "(PV %u has %u)",
                        i, v, p < vg->pvs ? p : 0,
                        p < vg->pvs ? pv_mdas(vg, p) : 0);
    if (vg->pv_ignored[p] >> m & 1)
      return ff_cfg_err(c->file, e, kp, "entry %u: '%s' is given twice", i, v);
    vg->pv_ignored[p] |= 1u << m;
  }
  return 0;
}

/* The VG's metadata areas: at least one (vgcreate cannot write the VG
 * otherwise); PVs without one must get the pe_start of those with one;
 * vg_mda_copies (vgcreate --vgmetadatacopies) with the damage and the
 * areas lvm would leave in use. */
static int
check_mdas(const struct ff_spec_ctx *c, const config_setting_t *g,
           const char *path, struct ff_spec_vg *vg)
{
  const config_setting_t *s = config_setting_get_member(g, "mda_copies");
  unsigned total = 0, last = pv_mdas(vg, vg->pvs - 1);
  char kp[256];
  int r;

  for (unsigned p = 0; p < vg->pvs; p++)
    total += pv_mdas(vg, p);
  ff_cfg_join(kp, sizeof kp, path, "mda_copies");
  if (total == 0)
    return ff_cfg_err(c->file, s ? s : g, kp,
                      "no PV of the VG has a metadata area: lvm refuses it "
                      "(\"Aborting vg_write: No metadata areas to write "
                      "to!\"); give at least one PV mda_copies 1 or 2");
  if (total < vg->pvs * vg->fmt.mda_copies) {
    /* some PVs have no mda: pvcreate put their pe_start elsewhere */
    struct ff_spec_pvfmt z = vg->fmt;
    struct ff_pvfmt lay;

    z.mda_copies = 0;
    if (ff_pvfmt_layout(
          &z, vg->device_sizes ? vg->device_sizes[0] : vg->device_size, &lay) <
        0)
      return ff_cfg_err(c->file, s ? s : g, kp, "%s", ff_errmsg());
    for (unsigned p = 0; p < vg->pvs; p++)
      if (pv_mdas(vg, p) == 0 && lay.pe_start != vg->fmt.lay.pe_start)
        return ff_cfg_err(
          c->file, s ? s : g, kp,
          "PV %u has no metadata area: pvcreate --pvmetadatacopies 0 puts "
          "its pe_start at %llu, the PVs with one at %llu; PVs of one VG "
          "with different pe_start are not supported (give metadatasize, "
          "dataalignment so that they agree)",
          p, (unsigned long long)lay.pe_start,
          (unsigned long long)vg->fmt.lay.pe_start);
  }
  ff_cfg_join(kp, sizeof kp, path, "damage");
  if ((vg->damage == FF_DMG_MDA_CHECKSUM || vg->damage == FF_DMG_STALE) &&
      last == 0)
    return ff_cfg_err(c->file, config_setting_get_member(g, "damage"), kp,
                      "%s damages the last PV's metadata area, and it has "
                      "none (mda_copies 0)",
                      ff_damage_name(vg->damage));
  if ((vg->damage == FF_DMG_LABEL_CRC || vg->damage == FF_DMG_MDA_CHECKSUM ||
       vg->damage == FF_DMG_MISSING_PV || vg->damage == FF_DMG_STALE) &&
      vg->pvs >= 2 && total == last) /* (pvs 1: refused below) */
    return ff_cfg_err(c->file, config_setting_get_member(g, "damage"), kp,
                      "%s damages the last PV, and only it has metadata "
                      "areas: lvm would find no VG to report the damage in "
                      "(give another PV mda_copies 1 or 2)",
                      ff_damage_name(vg->damage));

  s = config_setting_get_member(g, "vg_mda_copies");
  ff_cfg_join(kp, sizeof kp, path, "vg_mda_copies");
  if (s && config_setting_type(s) == CONFIG_TYPE_STRING) {
    const char *v = config_setting_get_string(s);

    /* "all" unignores every area and is then written as unmanaged */
    if (strcasecmp(v, "unmanaged") && strcasecmp(v, "all"))
      return ff_cfg_err(c->file, s, kp,
                        "'%s': lvm refuses it (\"Invalid argument for "
                        "--vgmetadatacopies: %s\"; it takes a number, "
                        "\"all\" or \"unmanaged\")",
                        v, v);
    vg->vg_mdas = 0;
    return parse_ignored(c, g, path, vg, total);
  }
  if (s && config_setting_type(s) != CONFIG_TYPE_INT &&
      config_setting_type(s) != CONFIG_TYPE_INT64)
    return ff_cfg_err(c->file, s, kp,
                      "expected an integer, \"all\" or \"unmanaged\"");
  if ((r = ff_cfg_uint(c->file, g, path, "vg_mda_copies", 0, INT32_MAX,
                       &vg->vg_mdas)) < 0)
    return r;
  return parse_ignored(c, g, path, vg, total);
}

static int parse_group_list(const struct ff_spec_ctx *c,
                            const config_setting_t *grp, const char *path,
                            const char *key, const config_setting_t **out);

static int
parse_vg(const struct ff_spec_ctx *c, const config_setting_t *g,
         const char *path, const struct ff_spec *top, struct ff_spec_vg *vg)
{
  static const char *const keys[] = {"count",
                                     "name",
                                     "pvs",
                                     "device_size",
                                     "extent_size",
                                     "metadatasize",
                                     "dataalignment",
                                     "dataalignmentoffset",
                                     "bootloaderareasize",
                                     "pe_start",
                                     "mda_size",
                                     "mda_copies",
                                     "vg_mda_copies",
                                     "ignored_mdas",
                                     "label_sector",
                                     "seqno",
                                     "history",
                                     "time",
                                     "description",
                                     "damage",
                                     "lvs",
                                     "uuid",
                                     "devices",
                                     "pv_uuids",
                                     "hints",
                                     "tags",
                                     "device_id_type",
                                     "device_ids",
                                     "device_sizes",
                                     "changes",
                                     "system_id",
                                     "max_lv",
                                     "max_pv",
                                     "alloc",
                                     NULL};
  const config_setting_t *lvs, *s;
  int64_t seqno = 0, nlv_total = 0, max_lv = 0, max_pv = 0;
  int have_spare = 0;
  char kp[256];
  int r;

  vg->line = (int)config_setting_source_line(g);
  vg->count = 1;
  vg->pvs = 1;
  vg->device_size = top->device_size;
  vg->extent_size = 4u << 20;
  vg->history = -1;
  if (ff_cfg_check_keys(c->file, g, path, keys) < 0 ||
      ff_cfg_uint(c->file, g, path, "count", 1, 1000000, &vg->count) < 0 ||
      ff_cfg_str(c->file, g, path, "name", &vg->name) < 0 ||
      ff_cfg_uint(c->file, g, path, "pvs", 1, 4096, &vg->pvs) < 0 ||
      ff_cfg_size(c->file, g, path, "device_size", &vg->device_size) < 0 ||
      ff_cfg_size(c->file, g, path, "extent_size", &vg->extent_size) < 0 ||
      ff_cfg_int(c->file, g, path, "history", 0, 1000000, &vg->history) < 0 ||
      ff_cfg_str(c->file, g, path, "description", &vg->description) < 0 ||
      ff_sp_damage(c, g, path, 0, &vg->damage) < 0 ||
      ff_sp_uuid(c, g, path, "uuid", &vg->uuid) < 0)
    return -1;
  if (top->system_id && !(vg->system_id = strdup(top->system_id)))
    return ff_cfg_err(c->file, g, path, "out of memory");
  if (ff_sp_system_id(c, g, path, "system_id", &vg->system_id) < 0 ||
      ff_cfg_int(c->file, g, path, "max_lv", 0, INT32_MAX, &max_lv) < 0 ||
      ff_cfg_int(c->file, g, path, "max_pv", 0, INT32_MAX, &max_pv) < 0)
    return -1;
  vg->max_lv = (uint32_t)max_lv;
  vg->max_pv = (uint32_t)max_pv;
  if (ff_sp_alloc(c, g, path, 1, &vg->alloc) < 0 ||
      ff_cfg_int(c->file, g, path, "seqno", 1, 1000000, &seqno) < 0)
    return -1;
  vg->seqno = (uint32_t)seqno;
  r = ff_cfg_int(c->file, g, path, "time", INT64_MIN / 2, INT64_MAX / 2,
                 &vg->time);
  if (r < 0)
    return -1;
  vg->has_time = r;
  if (!vg->name && !(vg->name = strdup("vg%04u")))
    return ff_cfg_err(c->file, g, path, "out of memory");
  if (ff_sp_check_format(c, g, path, "name", vg->name, vg->count) < 0)
    return -1;
  s = config_setting_get_member(g, "extent_size");
  ff_cfg_join(kp, sizeof kp, path, "extent_size");
  if (!ff_sp_is_pow2(vg->extent_size) || vg->extent_size < 1024)
    return ff_cfg_err(c->file, s ? s : g, kp,
                      "%llu is not a power of 2 of at least 1 KiB",
                      (unsigned long long)vg->extent_size);

  if (vg->count != 1) {
    static const char *const single[] = {"uuid",  "devices",    "pv_uuids",
                                         "hints", "device_ids", "device_sizes",
                                         NULL};

    for (const char *const *k = single; *k; k++)
      if ((s = config_setting_get_member(g, *k))) {
        ff_cfg_join(kp, sizeof kp, path, *k);
        return ff_cfg_err(c->file, s, kp,
                          "needs count = 1 (the group makes %u VGs)",
                          vg->count);
      }
  }
  if (ff_sp_strlist(c, g, path, "devices", vg->pvs, 0, &vg->devices) < 0 ||
      ff_sp_strlist(c, g, path, "pv_uuids", vg->pvs, 1, &vg->pv_uuids) < 0 ||
      ff_sp_strlist(c, g, path, "hints", vg->pvs, 0, &vg->hints) < 0 ||
      ff_sp_tags(c, g, path, "tags", &vg->tags) < 0 ||
      get_device_ids(c, g, path, vg) < 0 ||
      get_device_sizes(c, g, path, vg) < 0 ||
      parse_pvfmt(c, g, path,
                  vg->device_sizes ? vg->device_sizes[0] : vg->device_size,
                  vg->pvs, &vg->pv_mdas, &vg->fmt) < 0 ||
      check_layouts(c, g, path, vg) < 0 || check_mdas(c, g, path, vg) < 0)
    return -1;

  ff_cfg_join(kp, sizeof kp, path, "damage");
  if ((vg->damage == FF_DMG_LABEL_CRC || vg->damage == FF_DMG_MDA_CHECKSUM ||
       vg->damage == FF_DMG_MISSING_PV || vg->damage == FF_DMG_STALE) &&
      vg->pvs < 2)
    return ff_cfg_err(c->file, config_setting_get_member(g, "damage"), kp,
                      "%s needs pvs >= 2 (the group has %u)",
                      ff_damage_name(vg->damage), vg->pvs);

  if ((r = parse_group_list(c, g, path, "lvs", &lvs)) < 0)
    return -1;
  if (lvs) {
    ff_cfg_join(kp, sizeof kp, path, "lvs");
    vg->nlvs = (unsigned)r;
    vg->lvs = calloc(vg->nlvs ? vg->nlvs : 1, sizeof *vg->lvs);
    if (!vg->lvs)
      return ff_cfg_err(c->file, lvs, kp, "out of memory");
    for (unsigned i = 0; i < vg->nlvs; i++) {
      const config_setting_t *e = config_setting_get_elem(lvs, i);
      char ep[300];

      ff_pathf(ep, sizeof ep, "%s.[%u]", kp, i);
      /* the first pool of the VG that wants a spare makes it */
      vg->lvs[i].new_spare = !have_spare;
      if (ff_sp_lv(c, e, ep, &vg->lvs[i]) < 0)
        return -1;
      if ((vg->lvs[i].kind == FF_LVK_THIN_POOL ||
           vg->lvs[i].kind == FF_LVK_CACHE_POOL) &&
          vg->lvs[i].pmspare)
        have_spare = 1;
      if ((vg->lvs[i].uuid || vg->lvs[i].uuids) && vg->count != 1)
        return ff_cfg_err(c->file, e, ep,
                          "%s needs count = 1 in the VG "
                          "group too",
                          vg->lvs[i].uuid ? "uuid" : "uuids");
      if (vg->lvs[i].kind != FF_LVK_STRIPED &&
          (vg->lvs[i].alloc ? vg->lvs[i].alloc : vg->alloc) !=
            FF_ALLOC_ANYWHERE &&
          vg->lvs[i].images > vg->pvs)
        return ff_cfg_err(c->file, e, ep,
                          "%s makes %u images, each on its own PV, and the "
                          "group has %u PV%s (lvcreate: insufficient "
                          "suitable allocatable extents; alloc = "
                          "\"anywhere\" may share PVs)",
                          vg->lvs[i].segtype, vg->lvs[i].images, vg->pvs,
                          vg->pvs == 1 ? "" : "s");
      if ((vg->lvs[i].kind == FF_LVK_STRIPED ||
           vg->lvs[i].kind == FF_LVK_THIN_POOL) &&
          vg->lvs[i].stripes > vg->pvs)
        return ff_cfg_err(c->file, e, ep,
                          "%u stripes need at least %u PVs in the VG, the "
                          "group has %u (lvm: \"Number of stripes (%u) must "
                          "not exceed number of physical volumes (%u)\")",
                          vg->lvs[i].stripes, vg->lvs[i].stripes, vg->pvs,
                          vg->lvs[i].stripes, vg->pvs);
      for (unsigned k = 0; k < vg->lvs[i].nplace * vg->lvs[i].stripes; k++)
        if (vg->lvs[i].place[k].pv >= vg->pvs) {
          char pp[300];

          ff_pathf(pp, sizeof pp, "%s.placement.[%u]", ep,
                   k / vg->lvs[i].stripes);
          return ff_cfg_err(
            c->file,
            config_setting_get_elem(config_setting_get_member(e, "placement"),
                                    k / vg->lvs[i].stripes),
            pp, "PV %u is not in the VG (its PVs are 0 to %u)",
            vg->lvs[i].place[k].pv, vg->pvs - 1);
        }
      /* (of a group of pools only the first makes the spare: one write
       * more) */
      nlv_total += (int64_t)vg->lvs[i].count * ff_spec_lv_writes(&vg->lvs[i]) -
                   (int64_t)(vg->lvs[i].count - 1) * vg->lvs[i].new_spare;
    }
  }
  ff_cfg_join(kp, sizeof kp, path, "max_pv");
  if (vg->max_pv && vg->max_pv < vg->pvs)
    return ff_cfg_err(c->file, config_setting_get_member(g, "max_pv"), kp,
                      "%u is below the VG's %u PVs: vgcreate refuses it "
                      "(\"No space for '…' - volume group '…' holds max %u "
                      "physical volume(s).\")",
                      vg->max_pv, vg->pvs, vg->max_pv);
  if (vg->max_lv) {
    uint64_t n = 0;

    for (unsigned i = 0; i < vg->nlvs; i++)
      n += vg->lvs[i].count;
    ff_cfg_join(kp, sizeof kp, path, "max_lv");
    if (n > vg->max_lv)
      return ff_cfg_err(c->file, config_setting_get_member(g, "max_lv"), kp,
                        "%u is below the VG's %llu LVs: lvcreate refuses "
                        "the next one (\"Maximum number of logical volumes "
                        "(%u) reached in volume group …\")",
                        vg->max_lv, (unsigned long long)n, vg->max_lv);
  }
  if ((r = parse_group_list(c, g, path, "changes", &lvs)) < 0)
    return -1;
  if (lvs) {
    ff_cfg_join(kp, sizeof kp, path, "changes");
    vg->nchanges = (unsigned)r;
    vg->changes = calloc(vg->nchanges ? vg->nchanges : 1, sizeof *vg->changes);
    if (!vg->changes)
      return ff_cfg_err(c->file, lvs, kp, "out of memory");
    for (unsigned i = 0; i < vg->nchanges; i++) {
      const config_setting_t *e = config_setting_get_elem(lvs, i);
      char ep[300];

      ff_pathf(ep, sizeof ep, "%s.[%u]", kp, i);
      if (parse_change(c, e, ep, vg->pvs, &vg->changes[i]) < 0)
        return -1;
    }
    nlv_total += vg->nchanges;
  }
  ff_cfg_join(kp, sizeof kp, path, "seqno");
  if (vg->seqno && vg->seqno < 1 + nlv_total)
    return ff_cfg_err(
      c->file, config_setting_get_member(g, "seqno"), kp,
      "%u is below 1 + LVs + changes = %lld (vgcreate, one lvcreate per "
      "LV (two writes for a disk-log mirror or raid), one write per change)",
      vg->seqno, (long long)(1 + nlv_total));
  if (vg->damage == FF_DMG_STALE &&
      (vg->seqno ? vg->seqno : 1 + nlv_total) < 2)
    return ff_cfg_err(
      c->file, config_setting_get_member(g, "damage"), path,
      "stale-metadata needs seqno >= 2 (add an LV or set seqno)");
  return 0;
}

static int
parse_other(const struct ff_spec_ctx *c, const config_setting_t *g,
            const char *path, const struct ff_spec *top,
            enum ff_other_kind kind, struct ff_spec_other *o)
{
  static const char *const orphan_keys[] = {"count",
                                            "device_size",
                                            "pe_start",
                                            "mda_size",
                                            "mda_copies",
                                            "label_sector",
                                            "devices",
                                            "pv_uuids",
                                            "damage",
                                            "metadatasize",
                                            "dataalignment",
                                            "dataalignmentoffset",
                                            "bootloaderareasize",
                                            NULL};
  static const char *const blank_keys[] = {"count", "device_size", "devices",
                                           NULL};
  static const char *const sig_keys[] = {"count", "device_size", "devices",
                                         "type", NULL};
  const char *const *keys = kind == FF_OTHER_ORPHAN  ? orphan_keys
                            : kind == FF_OTHER_BLANK ? blank_keys
                                                     : sig_keys;
  const config_setting_t *s;
  char kp[256];

  o->line = (int)config_setting_source_line(g);
  o->kind = kind;
  o->count = 1;
  o->device_size = top->device_size;
  if (ff_cfg_check_keys(c->file, g, path, keys) < 0 ||
      ff_cfg_uint(c->file, g, path, "count", 1, 1000000, &o->count) < 0 ||
      ff_cfg_size(c->file, g, path, "device_size", &o->device_size) < 0)
    return -1;
  if (o->device_size == 0 || o->device_size % FF_SECTOR) {
    s = config_setting_get_member(g, "device_size");
    ff_cfg_join(kp, sizeof kp, path, "device_size");
    return ff_cfg_err(c->file, s ? s : g, kp,
                      "%llu is not a positive multiple of 512",
                      (unsigned long long)o->device_size);
  }
  if (ff_sp_strlist(c, g, path, "devices", o->count, 0, &o->devices) < 0)
    return -1;
  if (kind == FF_OTHER_ORPHAN) {
    if (parse_pvfmt(c, g, path, o->device_size, 0, NULL, &o->fmt) < 0 ||
        ff_sp_strlist(c, g, path, "pv_uuids", o->count, 1, &o->pv_uuids) < 0 ||
        ff_sp_damage(c, g, path, 1, &o->damage) < 0)
      return -1;
    ff_cfg_join(kp, sizeof kp, path, "damage");
    if (o->damage == FF_DMG_MDA_CHECKSUM && o->fmt.mda_copies == 0)
      return ff_cfg_err(c->file, config_setting_get_member(g, "damage"), kp,
                        "bad-mda-checksum damages mda0, and mda_copies 0 "
                        "makes none");
    /* (mda1, which goes after pe_start, is checked when the farm is
     * built: lvm takes what is left there) */
    if (o->fmt.pe_start > o->device_size)
      return ff_cfg_err(c->file, g, path,
                        "device_size %llu is too small for pe_start %llu",
                        (unsigned long long)o->device_size,
                        (unsigned long long)o->fmt.pe_start);
  }
  if (kind == FF_OTHER_SIGNATURE) {
    char *type = NULL;
    int r;

    s = config_setting_get_member(g, "type");
    ff_cfg_join(kp, sizeof kp, path, "type");
    r = ff_cfg_str(c->file, g, path, "type", &type);
    if (r < 0)
      return -1;
    if (r == 0)
      return ff_cfg_err(c->file, g, kp,
                        "missing (expected mbr, gpt, ext4, xfs or md)");
    r = ff_sig_parse(type, &o->sig);
    if (r < 0)
      r = ff_cfg_err(c->file, s, kp,
                     "unknown signature '%s' (expected mbr, gpt, ext4, "
                     "xfs or md)",
                     type);
    free(type);
    if (r < 0)
      return -1;
    if (o->device_size < ff_sig_min_size(o->sig)) {
      s = config_setting_get_member(g, "device_size");
      ff_cfg_join(kp, sizeof kp, path, "device_size");
      return ff_cfg_err(
        c->file, s ? s : g, kp, "%llu is too small for %s (at least %llu)",
        (unsigned long long)o->device_size, ff_sig_name(o->sig),
        (unsigned long long)ff_sig_min_size(o->sig));
    }
  }
  return 0;
}

static int
parse_group_list(const struct ff_spec_ctx *c, const config_setting_t *grp,
                 const char *path, const char *key,
                 const config_setting_t **out)
{
  const config_setting_t *s = config_setting_get_member(grp, key);
  char kp[256];

  *out = s;
  if (!s)
    return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  if (config_setting_type(s) != CONFIG_TYPE_LIST)
    return ff_cfg_err(c->file, s, kp,
                      "expected a list of groups: ( { ... }, ... )");
  for (int i = 0; i < config_setting_length(s); i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    char ep[300];

    ff_pathf(ep, sizeof ep, "%s.[%d]", kp, i);
    if (config_setting_type(e) != CONFIG_TYPE_GROUP)
      return ff_cfg_err(c->file, e, ep, "expected a group { ... }");
  }
  return config_setting_length(s);
}

static struct ff_spec *
parse_root(const struct ff_spec_ctx *c, const config_setting_t *root)
{
  static const char *const keys[] = {
    "seed",   "device_name",   "device_size", "device_hint", "creation_host",
    "uname",  "creation_time", "lvm_version", "vgs",         "orphans",
    "blanks", "signatures",    "system_id",   NULL};
  static const char *const other_keys[] = {"orphans", "blanks", "signatures"};
  const config_setting_t *vgs, *lists[3];
  struct ff_spec *sp;
  int64_t seed = 0;
  int nv, n[3], nconv;
  unsigned k = 0, nothers = 0;

  sp = calloc(1, sizeof *sp);
  if (!sp) {
    ff_error("out of memory");
    return NULL;
  }
  sp->file = strdup(c->file);
  sp->device_size = 1u << 30;
  sp->creation_time = 1796073320;
  sp->device_name = strdup("pv%04u");
  sp->device_hint = strdup("/dev/%s");
  sp->creation_host = strdup("fusefarm");
  sp->uname = strdup("Linux fusefarm 6.1.0 #1 SMP x86_64");
  sp->lvm_version = strdup("2.03.16(2) (2022-05-18)");
  if (!sp->file || !sp->device_name || !sp->device_hint ||
      !sp->creation_host || !sp->uname || !sp->lvm_version) {
    ff_error("out of memory");
    goto fail;
  }
  if (ff_cfg_check_root(c->file, root, FF_CFG_SPEC, keys) < 0 ||
      ff_cfg_int(c->file, root, "", "seed", INT64_MIN, INT64_MAX, &seed) < 0 ||
      ff_cfg_str(c->file, root, "", "device_name", &sp->device_name) < 0 ||
      ff_cfg_size(c->file, root, "", "device_size", &sp->device_size) < 0 ||
      ff_cfg_str(c->file, root, "", "device_hint", &sp->device_hint) < 0 ||
      ff_cfg_str(c->file, root, "", "creation_host", &sp->creation_host) < 0 ||
      ff_cfg_str(c->file, root, "", "uname", &sp->uname) < 0 ||
      ff_cfg_int(c->file, root, "", "creation_time", 0, INT64_MAX / 2,
                 &sp->creation_time) < 0 ||
      ff_cfg_str(c->file, root, "", "lvm_version", &sp->lvm_version) < 0 ||
      ff_sp_system_id(c, root, "", "system_id", &sp->system_id) < 0)
    goto fail;
  sp->seed = (uint64_t)seed;
  if (ff_sp_format_check(sp->device_name, 1, 0, &nconv) < 0) {
    ff_cfg_err(c->file, config_setting_get_member(root, "device_name"),
               "device_name", "%s", ff_errmsg());
    goto fail;
  }
  if (nconv != 1) {
    ff_cfg_err(c->file, config_setting_get_member(root, "device_name"),
               "device_name", "'%s' needs one %%u (the device's index)",
               sp->device_name);
    goto fail;
  }
  if (ff_sp_format_check(sp->device_hint, 0, 1, &nconv) < 0) {
    ff_cfg_err(c->file, config_setting_get_member(root, "device_hint"),
               "device_hint", "%s", ff_errmsg());
    goto fail;
  }
  if (sp->device_size == 0 || sp->device_size % FF_SECTOR) {
    ff_cfg_err(c->file, config_setting_get_member(root, "device_size"),
               "device_size", "%llu is not a positive multiple of 512",
               (unsigned long long)sp->device_size);
    goto fail;
  }

  nv = parse_group_list(c, root, "", "vgs", &vgs);
  if (nv < 0)
    goto fail;
  sp->vgs = calloc(nv ? (size_t)nv : 1, sizeof *sp->vgs);
  if (!sp->vgs) {
    ff_error("out of memory");
    goto fail;
  }
  sp->nvgs = (unsigned)nv;
  for (unsigned i = 0; i < sp->nvgs; i++) {
    char ep[64];
    struct ff_spec_vg *vg = &sp->vgs[i];

    ff_pathf(ep, sizeof ep, "vgs.[%u]", i);
    if (parse_vg(c, config_setting_get_elem(vgs, i), ep, sp, vg) < 0)
      goto fail;
    /* (with device_sizes, the farm checks each PV) */
    if (!vg->device_sizes &&
        (vg->device_size % FF_SECTOR ||
         vg->device_size <
           ff_sp_sat_add(ff_sp_sat_add(vg->fmt.pe_start, vg->extent_size),
                         vg->fmt.mda_copies == 2 ? vg->fmt.mda_size : 0))) {
      const config_setting_t *g = config_setting_get_elem(vgs, i);
      const config_setting_t *s = config_setting_get_member(g, "device_size");

      ff_pathf(ep, sizeof ep, "vgs.[%u].device_size", i);
      ff_cfg_err(c->file, s ? s : g, ep,
                 "%llu is too small or not a multiple of 512 (a PV needs "
                 "pe_start %llu + one extent %llu%s)",
                 (unsigned long long)vg->device_size,
                 (unsigned long long)vg->fmt.pe_start,
                 (unsigned long long)vg->extent_size,
                 vg->fmt.mda_copies == 2 ? " + mda1" : "");
      goto fail;
    }
  }

  /* sp->nothers counts entries of sp->others only once it exists:
   * ff_spec_free walks them. */
  for (int l = 0; l < 3; l++) {
    n[l] = parse_group_list(c, root, "", other_keys[l], &lists[l]);
    if (n[l] < 0)
      goto fail;
    nothers += (unsigned)n[l];
  }
  sp->others = calloc(nothers ? nothers : 1, sizeof *sp->others);
  if (!sp->others) {
    ff_error("out of memory");
    goto fail;
  }
  sp->nothers = nothers;
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < n[l]; i++) {
      char ep[64];

      ff_pathf(ep, sizeof ep, "%s.[%d]", other_keys[l], i);
      if (parse_other(c, config_setting_get_elem(lists[l], (unsigned)i), ep,
                      sp, (enum ff_other_kind)l, &sp->others[k++]) < 0)
        goto fail;
    }
  return sp;

fail:
  ff_spec_free(sp);
  return NULL;
}

static struct ff_spec *
load(config_t *cfg, int ok, const char *name)
{
  struct ff_spec_ctx c = {name};
  struct ff_spec *sp;

  if (!ok) { /* ff_cfg_load said why */
    config_destroy(cfg);
    return NULL;
  }
  sp = parse_root(&c, config_root_setting(cfg));
  config_destroy(cfg);
  return sp;
}

struct ff_spec *
ff_spec_load_file(const char *path)
{
  config_t cfg;

  if (ff_is_builtin(path)) {
    const char *text = ff_builtin_text("spec", path);

    if (!text) {
      ff_error("%s: no such built-in spec (there are %s)", path,
               ff_builtin_names("spec"));
      return NULL;
    }
    return ff_spec_load_string(text, path);
  }
  config_init(&cfg);
  return load(&cfg, ff_cfg_load(&cfg, NULL, path, "spec") == 0, path);
}

struct ff_spec *
ff_spec_load_string(const char *text, const char *name)
{
  config_t cfg;

  config_init(&cfg);
  return load(&cfg, ff_cfg_load(&cfg, text, name, "spec") == 0, name);
}

static void
free_strv(char **v)
{
  if (!v)
    return;
  for (char **p = v; *p; p++)
    free(*p);
  free(v);
}

void
ff_spec_free(struct ff_spec *sp)
{
  if (!sp)
    return;
  for (unsigned i = 0; i < sp->nvgs; i++) {
    struct ff_spec_vg *vg = &sp->vgs[i];

    for (unsigned j = 0; j < vg->nlvs; j++) {
      free(vg->lvs[j].name);
      free(vg->lvs[j].description);
      free(vg->lvs[j].uuid);
      free_strv(vg->lvs[j].tags);
      free(vg->lvs[j].place);
      free(vg->lvs[j].place_lines);
      free_strv(vg->lvs[j].uuids);
      free(vg->lvs[j].descriptions[0]);
      free(vg->lvs[j].descriptions[1]);
      free(vg->lvs[j].descriptions[2]);
      free(vg->lvs[j].pool);
      free(vg->lvs[j].origin);
      free(vg->lvs[j].cachevol);
      free_strv(vg->lvs[j].cachesettings);
    }
    free(vg->lvs);
    free(vg->name);
    free(vg->description);
    free(vg->uuid);
    free_strv(vg->devices);
    free_strv(vg->pv_uuids);
    free_strv(vg->hints);
    free_strv(vg->tags);
    for (unsigned j = 0; j < vg->nchanges; j++) {
      free(vg->changes[j].lv);
      free(vg->changes[j].pool);
      free(vg->changes[j].uuid);
      free_strv(vg->changes[j].addtag);
      free_strv(vg->changes[j].deltag);
      free(vg->changes[j].description);
      free(vg->changes[j].new_name);
      free(vg->changes[j].cachevol);
      free(vg->changes[j].to);
      free_strv(vg->changes[j].cachesettings);
    }
    free(vg->changes);
    free_strv(vg->device_ids);
    free(vg->device_sizes);
    free(vg->pv_mdas);
    free(vg->pv_ignored);
    free(vg->system_id);
  }
  free(sp->vgs);
  for (unsigned i = 0; i < sp->nothers; i++) {
    free_strv(sp->others[i].devices);
    free_strv(sp->others[i].pv_uuids);
  }
  free(sp->others);
  free(sp->file);
  free(sp->device_name);
  free(sp->device_hint);
  free(sp->creation_host);
  free(sp->uname);
  free(sp->lvm_version);
  free(sp->system_id);
  free(sp);
}

/* Devices one VG of group g makes. */
static uint64_t
vg_devices(const struct ff_spec_vg *g)
{
  return g->pvs - (g->damage == FF_DMG_MISSING_PV) +
         (g->damage == FF_DMG_DUPLICATE);
}

uint64_t
ff_spec_devices(const struct ff_spec *sp)
{
  uint64_t n = 0;

  for (unsigned i = 0; i < sp->nvgs; i++)
    n += sp->vgs[i].count * vg_devices(&sp->vgs[i]);
  for (unsigned i = 0; i < sp->nothers; i++)
    n += sp->others[i].count;
  return n;
}

/* One group ff_spec_scale may resize: its count, the devices one member
 * makes (w) and its share of the target in members (q). */
struct scale_group {
  unsigned *count;
  uint64_t w;
  double q;
};

/* Devices the groups make at their current counts. */
static uint64_t
scaled_devices(const struct scale_group *g, size_t n)
{
  uint64_t s = 0;

  for (size_t i = 0; i < n; i++)
    s += *g[i].count * g[i].w;
  return s;
}

/* Largest-remainder apportionment: every group gets the whole part of its
 * share (at least 1), then while the total is short, one more member
 * goes to the group furthest below its share that still fits; while it
 * is over (the "at least 1"s), one member comes off the group furthest
 * above its share, when that brings the total closer; then the gap that
 * left is filled again. */
/* Add members while the total is short (see apportion). */
static uint64_t
fill(struct scale_group *g, size_t n, uint64_t target, uint64_t s)
{
  while (s < target) {
    size_t best = n;

    for (size_t i = 0; i < n; i++)
      if (g[i].w && g[i].w <= target - s && *g[i].count < UINT_MAX &&
          (best == n || g[i].q - *g[i].count > g[best].q - *g[best].count))
        best = i;
    if (best == n)
      break;
    (*g[best].count)++;
    s += g[best].w;
  }
  return s;
}

static void
apportion(struct scale_group *g, size_t n, uint64_t target)
{
  uint64_t s;

  for (size_t i = 0; i < n; i++) {
    double c = floor(g[i].q);

    *g[i].count = c < 1 ? 1 : c > UINT_MAX ? UINT_MAX : (unsigned)c;
  }
  s = fill(g, n, target, scaled_devices(g, n));
  while (s > target) {
    size_t best = n;

    for (size_t i = 0; i < n; i++)
      if (g[i].w && *g[i].count > 1 &&
          (s - target > g[i].w ? s - target - g[i].w : g[i].w - (s - target)) <
            s - target &&
          (best == n || g[i].q - *g[i].count < g[best].q - *g[best].count))
        best = i;
    if (best == n)
      break;
    (*g[best].count)--;
    s -= g[best].w;
  }
  fill(g, n, target, s); /* what a bigger member's removal undershot */
}

int
ff_spec_scale(struct ff_spec *sp, uint64_t ndevices)
{
  uint64_t total = ff_spec_devices(sp), fixed = 0, scalable = 0;
  struct scale_group *g;
  size_t n = 0;
  double f;

  if (total == 0 || ndevices == 0)
    return ff_error("%s: cannot scale a farm of %llu devices to %llu",
                    sp->file, (unsigned long long)total,
                    (unsigned long long)ndevices);
  g = calloc((size_t)sp->nvgs + sp->nothers + 1, sizeof *g);
  if (!g)
    return ff_error("%s: scaling the farm: out of memory", sp->file);
  for (unsigned i = 0; i < sp->nvgs; i++) {
    struct ff_spec_vg *v = &sp->vgs[i];
    uint64_t w = vg_devices(v);

    /* A single VG with named devices is that VG: it keeps them. */
    if ((v->count > 1 || v->devices == NULL) && v->count > 0) {
      g[n++] = (struct scale_group){&v->count, w, v->count};
      scalable += v->count * w;
    } else {
      fixed += v->count * w;
    }
  }
  for (unsigned i = 0; i < sp->nothers; i++) {
    struct ff_spec_other *o = &sp->others[i];

    if (!o->devices && !o->pv_uuids && o->count > 0) {
      g[n++] = (struct scale_group){&o->count, 1, o->count};
      scalable += o->count;
    } else {
      fixed += o->count;
    }
  }
  /* The scalable groups share what the fixed ones leave. */
  f = scalable
        ? (double)(ndevices > fixed ? ndevices - fixed : 0) / (double)scalable
        : 0;
  for (size_t i = 0; i < n; i++)
    g[i].q *= f;
  apportion(g, n, ndevices > fixed ? ndevices - fixed : 0);
  free(g);
  return 0;
}
