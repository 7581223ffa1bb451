/* fusefarm: farm manifest (see ff-manifest.h, docs/manifest.md). */
#include "ff-manifest.h"
#include "ff-error.h"
#include "ff-farm-int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *
uuid_json(const char uuid[FF_UUID_LEN])
{
  char d[FF_UUID_DASHED + 1];

  ff_uuid_dash(uuid, d);
  return json_string(d);
}

static json_t *
dev_name_json(const struct ff_farm *farm, uint32_t dev)
{
  return dev == FF_NONE ? json_null() : json_string(farm->devs[dev].name);
}

static json_t *
device_json(const struct ff_farm *farm, uint32_t i)
{
  const struct ff_device *d = &farm->devs[i];
  int is_pv = d->role == FF_ROLE_PV || d->role == FF_ROLE_ORPHAN ||
              d->role == FF_ROLE_DUPLICATE;
  char desc[256];
  json_t *o, *vgname = json_null();
  uint32_t vi =
    d->role == FF_ROLE_PV ? d->vg
    : d->role == FF_ROLE_DUPLICATE && farm->devs[d->alias].role == FF_ROLE_PV
      ? farm->devs[d->alias].vg
      : FF_NONE;

  if (vi != FF_NONE) {
    const struct ff_vg *vg = ff_farm_vg_get(farm, vi);

    if (!vg)
      return NULL;
    vgname = json_string(vg->name);
    ff_farm_vg_put(farm, vg);
  }
  ff_farm_describe(farm, i, desc, sizeof desc);
  o =
    json_pack("{s:I, s:s, s:I, s:s, s:o, s:o, s:s, s:s}", "index",
              (json_int_t)i, "name", d->name, "size", (json_int_t)d->size,
              "role", ff_role_name((enum ff_role)d->role), "pv_uuid",
              is_pv ? uuid_json(d->uuid) : json_null(), "vg", vgname, "damage",
              ff_damage_name((enum ff_damage)d->damage), "description", desc);
  if (!o)
    return NULL;
  if (d->role == FF_ROLE_SIGNATURE)
    json_object_set_new(o, "signature",
                        json_string(ff_sig_name((enum ff_sig_type)d->sig)));
  if (d->role == FF_ROLE_DUPLICATE)
    json_object_set_new(o, "duplicate_of",
                        json_string(farm->devs[d->alias].name));
  return o;
}

/* The fields of a mirror or raid top LV (docs/manifest.md). */
static void
mirror_raid_json(json_t *o, const struct ff_vg *vg, const struct ff_lv *lv)
{
  json_t *images = json_array(), *metas = json_array(), *log = json_null();

  for (uint32_t u = 0; u < lv->nsubs; u++) {
    const struct ff_lv *sub = &lv->subs[u];

    if (sub->role == FF_SUB_RIMAGE || sub->role == FF_SUB_MIMAGE)
      json_array_append_new(images, json_string(sub->name));
    else if (sub->role == FF_SUB_RMETA)
      json_array_append_new(metas, json_string(sub->name));
    else if (sub->role == FF_SUB_MLOG) {
      json_decref(log);
      log = json_string(sub->name);
    }
  }
  json_object_set_new(o, "type", json_string(lv->segtype));
  json_object_set_new(o, "dm_type", json_string(lv->ktype));
  json_object_set_new(o, "region_size",
                      json_integer((json_int_t)(lv->region_size * FF_SECTOR)));
  json_object_set_new(o, "stripe_size",
                      json_integer((json_int_t)(lv->stripe_size * FF_SECTOR)));
  json_object_set_new(o, "stripes", json_integer((json_int_t)lv->stripes));
  json_object_set_new(o, "data_copies",
                      json_integer((json_int_t)lv->data_copies));
  json_object_set_new(o, "images", images);
  json_object_set_new(o, "metas", metas);
  json_object_set_new(o, "log", log);
  json_object_set_new(o, "nosync", json_boolean(lv->nosync));
  (void)vg;
}

/* The cache table's policy arguments as libdm writes them ("COUNT
 * [migration_threshold N] [NAME VALUE]..."): lvm's cache.c
 * _cache_add_target_line keeps of the pool's settings (NULL: none) those
 * the policy takes (smq: migration_threshold; mq: its five thresholds
 * and adjustments as well), then libdm's dm_tree_node_add_cache_target
 * takes migration_threshold apart (2048, at least 8 chunks) and
 * _cache_emit_segment_line leaves it out at 2048. */
static json_t *
cache_policy_args(const char *settings, const char *policy, uint32_t chunk)
{
  static const char *const mq[] = {
    "sequential_threshold",       "random_threshold",
    "read_promote_adjustment",    "write_promote_adjustment",
    "discard_promote_adjustment", NULL};
  struct ff_sb args = FF_SB_INIT, out = FF_SB_INIT;
  uint64_t mt = 2048;
  unsigned argc = 0;
  json_t *j;
  char *t;

  for (const char *l = settings; l && *l;) {
    const char *eq = strchr(l, '='), *nl = strchr(l, '\n');
    size_t k = strspn(l, "\t");
    int keep = policy && strcmp(policy, "smq") && strcmp(policy, "mq");

    if (!eq || !nl)
      break;
    if (!strncmp(l + k, "migration_threshold=", 20))
      mt = strtoull(eq + 1, NULL, 10);
    else {
      for (const char *const *m = mq; !keep && *m; m++)
        keep = policy && !strcmp(policy, "mq") &&
               strlen(*m) == (size_t)(eq - l - k) &&
               !strncmp(l + k, *m, strlen(*m));
      if (keep) {
        ff_sb_addf(&args, " %.*s %.*s", (int)(eq - l - k), l + k,
                   (int)(nl - eq - 1), eq + 1);
        argc++;
      }
    }
    l = nl + 1;
  }
  if (mt < (uint64_t)chunk * 8)
    mt = (uint64_t)chunk * 8;
  ff_sb_addf(&out, "%u", (argc + (mt != 2048)) * 2);
  if (mt != 2048)
    ff_sb_addf(&out, " migration_threshold %llu", (unsigned long long)mt);
  if (args.buf)
    ff_sb_add(&out, args.buf);
  ff_sb_release(&args);
  t = ff_sb_text(&out);
  j = json_string(t ? t : "0");
  free(t);
  return j;
}

/* The VG's pool metadata spare (made by its first thin or cache pool that
 * wants one), or NULL. */
static const char *
spare_name(const struct ff_vg *vg)
{
  for (uint32_t l = 0; l < vg->nlvs; l++)
    if ((vg->lvs[l].kind == FF_LVK_THIN_POOL ||
         vg->lvs[l].kind == FF_LVK_CACHE_POOL) &&
        vg->lvs[l].new_spare)
      return vg->lvs[l].subs[0].name;
  return NULL;
}

/* A thin or cache pool's metadata and data sub-LVs and the VG's spare. */
static void
pool_parts_json(json_t *o, const struct ff_vg *vg, const struct ff_lv *lv)
{
  const char *spare = spare_name(vg);

  json_object_set_new(o, "metadata",
                      json_string(lv->subs[lv->new_spare].name));
  json_object_set_new(o, "data",
                      json_string(lv->subs[lv->new_spare + 1].name));
  json_object_set_new(o, "pmspare", spare ? json_string(spare) : json_null());
}

/* The fields of a thin or cache pool, a thin or cache LV or a snapshot
 * (docs/manifest.md). */
static void
thin_snap_json(json_t *o, const struct ff_vg *vg, const struct ff_lv *lv)
{
  static const char *const dnames[] = {"passdown", "nopassdown", "ignore"};

  json_object_set_new(o, "type", json_string(lv->segtype));
  json_object_set_new(o, "dm_type", json_string(lv->ktype));
  if (lv->kind == FF_LVK_THIN_POOL) {
    uint64_t tid = lv->transaction_id;

    /* each lvremove of one of its thin LVs: one more (the delete) */
    for (uint32_t l = 0; l < vg->nlvs; l++)
      if (vg->lvs[l].kind == FF_LVK_THIN && vg->lvs[l].f.removed &&
          &vg->lvs[vg->lvs[l].link] == lv)
        tid++;
    json_object_set_new(o, "chunk_size",
                        json_integer((json_int_t)lv->chunk * FF_SECTOR));
    json_object_set_new(o, "transaction_id", json_integer((json_int_t)tid));
    pool_parts_json(o, vg, lv);
    json_object_set_new(o, "discards", json_string(dnames[lv->discards % 3]));
    json_object_set_new(o, "zero", json_boolean(lv->zero));
    json_object_set_new(o, "thins", json_integer((json_int_t)lv->nthins));
  } else if (lv->kind == FF_LVK_CACHE && lv->cvol_meta) {
    /* lvconvert --type cache --cachevol: over the cachevol's two parts */
    static const char *const modes[] = {"", "writethrough", "writeback",
                                        "passthrough"};
    static const char *const policies[] = {"", "smq", "mq"};

    json_object_set_new(o, "chunk_size",
                        json_integer((json_int_t)lv->chunk * FF_SECTOR));
    json_object_set_new(o, "cache_mode",
                        json_string(modes[lv->cache_mode % 4]));
    json_object_set_new(o, "policy",
                        json_string(policies[lv->cache_policy % 3]));
    json_object_set_new(o, "cachevol", json_string(vg->lvs[lv->link].name));
    json_object_set_new(o, "origin", json_string(lv->subs[0].name));
    json_object_set_new(o, "cachevol_metadata",
                        json_integer((json_int_t)(lv->cvol_meta * FF_SECTOR)));
    /* (a cachevol's segment holds no settings, and lvm's table "mq") */
    json_object_set_new(o, "policy_args",
                        cache_policy_args(NULL, "mq", lv->chunk));
  } else if (lv->kind == FF_LVK_CACHE_POOL || lv->kind == FF_LVK_CACHE) {
    static const char *const modes[] = {NULL, "writethrough", "writeback",
                                        "passthrough"};
    static const char *const policies[] = {NULL, "smq", "mq"};
    int pool = lv->kind == FF_LVK_CACHE_POOL;
    const struct ff_lv *p = pool ? lv : &vg->lvs[lv->link];
    const struct ff_lv *user =
      pool ? (lv->attach_seq ? &vg->lvs[lv->link] : NULL) : lv;
    unsigned mode = user ? user->cache_mode : lv->cache_mode;
    unsigned policy = user ? user->cache_policy : lv->cache_policy;

    json_object_set_new(o, "chunk_size",
                        json_integer((json_int_t)p->chunk * FF_SECTOR));
    json_object_set_new(o, "cache_mode",
                        modes[mode % 4] ? json_string(modes[mode % 4])
                                        : json_null());
    json_object_set_new(
      o, "policy",
      policies[policy % 3] ? json_string(policies[policy % 3]) : json_null());
    if (pool) {
      pool_parts_json(o, vg, lv);
      json_object_set_new(o, "cached_lv",
                          user ? json_string(user->name) : json_null());
    } else {
      json_object_set_new(o, "pool", json_string(p->name));
      json_object_set_new(o, "origin", json_string(lv->subs[0].name));
      json_object_set_new(
        o, "policy_args",
        cache_policy_args(p->policy_settings, policies[policy % 3], p->chunk));
    }
  } else if (lv->kind == FF_LVK_THIN) {
    json_object_set_new(o, "pool", json_string(vg->lvs[lv->link].name));
    json_object_set_new(o, "device_id",
                        json_integer((json_int_t)lv->device_id));
    json_object_set_new(o, "transaction_id",
                        json_integer((json_int_t)lv->transaction_id));
    if (lv->thin_origin && !vg->lvs[lv->thin_origin - 1].f.removed)
      json_object_set_new(o, "origin",
                          json_string(vg->lvs[lv->thin_origin - 1].name));
    if (lv->ext_origin)
      json_object_set_new(o, "external_origin",
                          json_string(vg->lvs[lv->ext_origin - 1].name));
  } else {
    json_object_set_new(o, "origin", json_string(vg->lvs[lv->link].name));
    json_object_set_new(o, "chunk_size",
                        json_integer((json_int_t)lv->chunk * FF_SECTOR));
    json_object_set_new(o, "cow", json_string(lv->name));
    json_object_set_new(o, "snapshot", json_string(lv->subs[0].name));
    json_object_set_new(o, "cow_header", json_boolean(lv->cow_header[0] != 0));
  }
}

static int
has_pv_segs(const struct ff_lv *lv)
{
  return lv->kind == FF_LVK_STRIPED || lv->kind == FF_LVK_SNAPSHOT ||
         lv->kind == FF_LVK_CACHEVOL;
}

/* A rimage of a raid LV made with --raidintegrity: an integrity layer
 * over its _iorig LV (which has the image's extents), or NULL. */
static const struct ff_lv *
integrity_top(const struct ff_vg *vg, const struct ff_lv *lv)
{
  const struct ff_lv *top = &vg->lvs[lv->parent];

  return lv->role == FF_SUB_RIMAGE && top->integrity ? top : NULL;
}

static json_t *
lv_json(const struct ff_farm *farm, const struct ff_vg *vg,
        const struct ff_lv *lv)
{
  json_t *segs = json_array(), *o;
  const struct ff_lv *itop = integrity_top(vg, lv);

  if (lv->kind == FF_LVK_PVMOVE) /* each moved piece: from, to */
    for (uint32_t s = 0; s < lv->nsegs; s++) {
      const struct ff_seg *seg = &lv->segs[s];
      json_t *areas = json_array();

      for (uint32_t a = 0; a < 2; a++) {
        const struct ff_pv *pv = &vg->pvs[seg->areas[a].pv];

        json_array_append_new(
          areas, json_pack("{s:o, s:o, s:I, s:I}", "device",
                           dev_name_json(farm, pv->dev), "pv_uuid",
                           uuid_json(pv->uuid), "start_pe",
                           (json_int_t)seg->areas[a].pe, "end_pe",
                           (json_int_t)(seg->areas[a].pe + seg->len - 1)));
      }
      /* lvm moves one segment at a time: the first is being moved (a
       * mirror in dm), the later ones wait (linear on their PV) */
      json_array_append_new(
        segs,
        json_pack("{s:I, s:I, s:s, s:i, s:I, s:o, s:b}", "start_extent",
                  (json_int_t)seg->le, "extent_count", (json_int_t)seg->len,
                  "type", "mirror", "stripes", 1, "stripe_size", (json_int_t)0,
                  "areas", areas, "moving", s == 0));
    }
  else if (lv->role == FF_SUB_SNAPSHOT || itop) /* over the COW, the _iorig */
    json_array_append_new(
      segs, json_pack("{s:I, s:I, s:s, s:i, s:I, s:[]}", "start_extent",
                      (json_int_t)0, "extent_count", (json_int_t)lv->extents,
                      "type", itop ? "integrity" : "snapshot", "stripes", 1,
                      "stripe_size", (json_int_t)0, "areas"));
  else if (!has_pv_segs(lv)) /* one segment over the sub-LVs */
    json_array_append_new(
      segs,
      json_pack("{s:I, s:I, s:s, s:i, s:I, s:[]}", "start_extent",
                (json_int_t)0, "extent_count", (json_int_t)lv->extents, "type",
                lv->segtype, "stripes", (int)lv->stripes, "stripe_size",
                (json_int_t)(lv->stripe_size * FF_SECTOR), "areas"));
  for (uint32_t s = 0; has_pv_segs(lv) && !itop && s < lv->nsegs; s++) {
    const struct ff_seg *seg = &lv->segs[s];
    json_t *areas = json_array();
    uint64_t per = seg->len / seg->stripes;
    const struct ff_lv *pm = ff_fb_pvmove(vg);

    if (seg->stripes == 1 && pm &&
        ff_fb_pvmove_le(pm, &seg->areas[0]) != UINT64_MAX) {
      /* under an interrupted pvmove: one segment per piece of pvmove0
       * it goes through (as lvm's metadata and tables have it) */
      json_decref(areas);
      for (uint32_t p = 0; p < pm->nsegs; p++) {
        const struct ff_seg *ps = &pm->segs[p];

        if (!ff_fb_pvmove_piece(pm, p, seg))
          continue;
        json_array_append_new(
          segs, json_pack(
                  "{s:I, s:I, s:s, s:i, s:I, s:[{s:s, s:I}]}", "start_extent",
                  (json_int_t)(seg->le + ps->areas[0].pe - seg->areas[0].pe),
                  "extent_count", (json_int_t)ps->len, "type", "linear",
                  "stripes", 1, "stripe_size", (json_int_t)0, "areas", "lv",
                  pm->name, "start_le", (json_int_t)ps->le));
      }
      continue;
    }

    for (uint32_t a = 0; a < seg->stripes; a++) {
      const struct ff_pv *pv = &vg->pvs[seg->areas[a].pv];

      json_array_append_new(
        areas,
        json_pack("{s:o, s:o, s:I, s:I}", "device",
                  dev_name_json(farm, pv->dev), "pv_uuid", uuid_json(pv->uuid),
                  "start_pe", (json_int_t)seg->areas[a].pe, "end_pe",
                  (json_int_t)(seg->areas[a].pe + per - 1)));
    }
    json_array_append_new(
      segs,
      json_pack("{s:I, s:I, s:s, s:i, s:I, s:o}", "start_extent",
                (json_int_t)seg->le, "extent_count", (json_int_t)seg->len,
                "type", seg->stripes > 1 ? "striped" : "linear", "stripes",
                (int)seg->stripes, "stripe_size", (json_int_t)seg->stripe_size,
                "areas", areas));
  }
  o = json_pack(
    "{s:s, s:o, s:I, s:I, s:I, s:o, s:b}", "name", lv->name, "uuid",
    uuid_json(lv->uuid), "extents", (json_int_t)lv->extents, "size",
    (json_int_t)(lv->extents * vg->extent_size), "creation_time",
    (json_int_t)lv->time, "segments", segs, "visible",
    lv->role == FF_SUB_NONE && lv->kind != FF_LVK_PVMOVE &&
      !((lv->kind == FF_LVK_CACHE_POOL || lv->kind == FF_LVK_CACHEVOL) &&
        lv->attach_seq));
  if (!o)
    return NULL;
  if (lv->role != FF_SUB_NONE) {
    json_object_set_new(o, "parent", json_string(vg->lvs[lv->parent].name));
    json_object_set_new(
      o, "role", json_string(ff_sub_role_name((enum ff_sub_role)lv->role)));
    if (itop) {
      /* lvm's integrity settings: mode, 4-byte crc32c tags, 512-byte
       * blocks; the table's devices */
      uint32_t i = (uint32_t)(lv - itop->subs) / 2;
      char mode[2] = {(char)itop->integrity, 0};

      json_object_set_new(o, "type", json_string("integrity"));
      json_object_set_new(o, "dm_type", json_string("integrity"));
      json_object_set_new(o, "origin",
                          json_string(itop->subs[3 * itop->images + i].name));
      json_object_set_new(o, "meta",
                          json_string(itop->subs[2 * itop->images + i].name));
      json_object_set_new(o, "mode", json_string(mode));
      json_object_set_new(o, "tag_size", json_integer(4));
      json_object_set_new(o, "block_size", json_integer(512));
      json_object_set_new(o, "internal_hash", json_string("crc32c"));
    }
  } else if (lv->kind == FF_LVK_MIRROR || lv->kind == FF_LVK_RAID)
    mirror_raid_json(o, vg, lv);
  else if (lv->kind == FF_LVK_WRITECACHE) {
    /* lvconvert --type writecache: over LV_cvol and LV_wcorig */
    json_object_set_new(o, "type", json_string("writecache"));
    json_object_set_new(o, "dm_type", json_string("writecache"));
    json_object_set_new(o, "cachevol", json_string(vg->lvs[lv->link].name));
    json_object_set_new(o, "origin", json_string(lv->subs[0].name));
    json_object_set_new(o, "block_size", json_integer(lv->wc_block));
    /* the table's optional arguments (--cachesettings), or none */
    json_object_set_new(o, "settings",
                        json_string(lv->wc_args ? lv->wc_args : ""));
  } else if (lv->kind == FF_LVK_CACHEVOL)
    json_object_set_new(o, "cachevol_of", json_string(vg->lvs[lv->link].name));
  else if (lv->kind == FF_LVK_PVMOVE) {
    /* an interrupted pvmove: each segment moving from its first area to
     * its second, nothing moved yet (the LVs' segments go through it) */
    json_object_set_new(o, "type", json_string("pvmove"));
    json_object_set_new(o, "dm_type", json_string("mirror"));
    json_object_set_new(
      o, "region_size",
      json_integer((json_int_t)(lv->region_size * FF_SECTOR)));
  } else if (lv->kind != FF_LVK_STRIPED)
    thin_snap_json(o, vg, lv);
  return o;
}

static json_t *
vg_json(const struct ff_farm *farm, const struct ff_vg *vg)
{
  json_t *pvs = json_array(), *lvs = json_array();

  for (uint32_t p = 0; p < vg->npvs; p++) {
    const struct ff_pv *pv = &vg->pvs[p];

    json_array_append_new(
      pvs, json_pack("{s:o, s:o, s:I, s:I, s:I, s:i}", "device",
                     dev_name_json(farm, pv->dev), "uuid", uuid_json(pv->uuid),
                     "pe_start", (json_int_t)vg->fmt.pe_start, "pe_count",
                     (json_int_t)pv->pe_count, "dev_size",
                     (json_int_t)pv->dev_size, "mda_count", (int)pv->nmdas));
  }
  /* as lvm lists them: the visible LVs, then the hidden sub-LVs */
  for (uint32_t l = 0; l < vg->nlvs; l++)
    if (!vg->lvs[l].f.removed)
      json_array_append_new(lvs, lv_json(farm, vg, &vg->lvs[l]));
  for (uint32_t l = 0; l < vg->nlvs; l++)
    for (uint32_t u = 0; !vg->lvs[l].f.removed && u < vg->lvs[l].nsubs; u++)
      json_array_append_new(lvs, lv_json(farm, vg, &vg->lvs[l].subs[u]));
  return json_pack(
    "{s:s, s:o, s:I, s:I, s:s, s:i, s:I, s:I, s:s?, s:I, s:I, s:s, s:o, s:o}",
    "name", vg->name, "uuid", uuid_json(vg->uuid), "seqno",
    (json_int_t)vg->seqno, "extent_size", (json_int_t)vg->extent_size,
    "damage", ff_damage_name(vg->damage), "mda_copies",
    (int)vg->fmt.mda_copies, "mda_size", (json_int_t)vg->fmt.mda_size,
    "metadata_copies", (json_int_t)vg->mda_copies, "system_id", vg->system_id,
    "max_lv", (json_int_t)vg->max_lv, "max_pv", (json_int_t)vg->max_pv,
    "alloc", ff_fb_policy_names[vg->alloc ? vg->alloc : FF_ALLOC_NORMAL],
    "pvs", pvs, "lvs", lvs);
}

static json_t *
manifest_json(const struct ff_farm *farm)
{
  json_t *devs = json_array(), *vgs = json_array(), *root;

  if (!devs || !vgs)
    goto oom;
  for (uint32_t i = 0; i < farm->ndevs; i++)
    if (json_array_append_new(devs, device_json(farm, i)) < 0)
      goto oom;
  for (uint32_t i = 0; i < farm->nvgs; i++) {
    const struct ff_vg *vg = ff_farm_vg_get(farm, i);
    int r = vg ? json_array_append_new(vgs, vg_json(farm, vg)) : -1;

    ff_farm_vg_put(farm, vg);
    if (r < 0)
      goto oom;
  }
  root = json_pack("{s:s, s:i, s:I, s:o, s:o}", "format", "fusefarm-manifest",
                   "version", 1, "seed", (json_int_t)farm->seed, "devices",
                   devs, "vgs", vgs);
  if (!root)
    ff_error("out of memory building the manifest");
  return root;

oom:
  json_decref(devs);
  json_decref(vgs);
  ff_error("out of memory building the manifest");
  return NULL;
}

char *
ff_manifest_text(const struct ff_farm *farm, enum ff_manifest_form form)
{
  json_t *j = manifest_json(farm);
  char *t;

  if (!j)
    return NULL;
  t =
    json_dumps(j, form == FF_MANIFEST_COMPACT ? JSON_COMPACT
                                              : JSON_INDENT(2) | JSON_COMPACT);
  json_decref(j);
  if (!t)
    ff_error("manifest: out of memory");
  return t;
}
