/* fusefarm: building a farm, thin and cache pools
 * (see ff-farm-int.h).
 *
 * Mirrors lvm2 2.03.16's lib/metadata/pool_manip.c (the pmspare, pool
 * metadata sizes), thin_manip.c (chunk size, thin LVs, device and
 * transaction ids) and cache_manip.c (cache pool parameters, caching an
 * LV: the _cpool/_corig renames); the tmeta images come from
 * ff-thinmeta.c.  Pool and sub-LV sizes, names, ids and the tmeta bytes
 * must stay byte-identical to what lvm and the kernel write.
 */
#include "ff-farm-int.h"
#include "ff-error.h"
#include "ff-thinmeta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The thin-pool metadata size lvm's kernel table can address, in
 * sectors: 255 bitmaps of 16320 blocks less what lvm keeps back
 * (DEFAULT_THIN_POOL_MAX_METADATA_SIZE_V1_KB). */
#define THIN_MAX_META_SECTORS (2ull * 255 * ((1u << 14) - 64) * 4)

/* The chunk size lvm guesses from the data and metadata sizes (sectors;
 * thin_manip.c _estimate_chunk_size, the kernel taking any multiple of
 * 64 KiB: THIN_FEATURE_BLOCK_SIZE). */
static uint64_t
estimate_chunk(uint64_t data_sectors, uint64_t meta_sectors)
{
  uint64_t c = data_sectors / (meta_sectors * 8);

  if (c > 2047)
    c = (c + 2047) & ~(uint64_t)2047;
  else {
    uint64_t p = 1;

    while (p < c)
      p <<= 1;
    c = p;
  }
  return c < 128 ? 128 : c > 2097152 ? 2097152 : c;
}

/* A cache pool's chunk and metadata sizes (sectors), as lvm's
 * update_cache_pool_params (lib/metadata/cache_manip.c): the chunk at
 * least what keeps the data under 1000000 chunks (a multiple of 32 KiB),
 * the metadata at least 44 bytes a chunk plus 4 MiB, in extents, at most
 * 16 GiB (docs/research/cache.md §2). */
static int
cache_pool_params(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
                  const struct ff_lv *lv, uint64_t es, uint64_t *chunk,
                  uint64_t *meta)
{
  uint64_t data = lv->extents * es, min_chunk, min_meta;

  min_chunk = ff_fb_round_up((data + 999999) / 1000000, 64);
  *chunk = sl->chunk_size / FF_SECTOR;
  if (!*chunk)
    *chunk = 128 < min_chunk ? min_chunk : 128;
  else if (*chunk < min_chunk)
    return ff_fb_err(
      b, sl->line, lp,
      "pool %s: lvm refuses it: Chunk size %llu KiB is less then "
      "required minimal chunk size %llu KiB for a cache pool of "
      "%llu KiB size and limit 1000000 chunks",
      lv->name, (unsigned long long)(*chunk / 2),
      (unsigned long long)(min_chunk / 2), (unsigned long long)(data / 2));
  min_meta = ff_fb_round_up((data / *chunk * 44 + 511) / 512 + 8192, es);
  *meta = sl->metadata_size ? ff_fb_round_up(sl->metadata_size / FF_SECTOR, es)
                            : min_meta;
  if (*meta > 2ull * 16 * 1024 * 1024)
    *meta = 2ull * 16 * 1024 * 1024;
  else if (*meta < min_meta)
    *meta = min_meta;
  return 0;
}

/* Place thin or cache pool li as lvcreate --type thin-pool/cache-pool
 * does: the VG's pool metadata spare first (its own allocation) when
 * this pool makes it, then the data and the metadata in one allocation:
 * a thin pool's metadata as a "log" area (lib/metadata/lv_manip.c
 * lv_extend, pool_manip.c create_pool; docs/research/thin-snapshot.md
 * §2), a cache pool's split off the front of the data's area
 * (alloc_and_split_meta, as a raid image's rmeta; docs/research/cache.md
 * §2). */
int
ff_fb_allocate_pool(struct bctx *b, const struct ff_spec_lv *sl,
                    const char *lp, struct ff_vg *vg, struct freelist *fl,
                    uint32_t li)
{
  struct ff_lv *lv = &vg->lvs[li], *spare = NULL;
  uint64_t es = vg->extent_size / FF_SECTOR, data = lv->extents * es;
  uint64_t chunk = sl->chunk_size / FF_SECTOR, meta = 0, max_meta, meta_ext;
  struct ff_lv tmp = {.name = lv->name}, sp = {.name = lv->name};
  struct ff_area log_area;
  int cache = sl->kind == FF_LVK_CACHE_POOL;
  char *name;
  uint32_t j = 0;
  int r = -1;

  if (cache) {
    if (cache_pool_params(b, sl, lp, lv, es, &chunk, &meta) < 0)
      return -1;
    meta_ext = meta / es;
    lv->kind = FF_LVK_CACHE_POOL;
    lv->segtype = lv->ktype = "cache-pool";
    lv->cache_mode = (uint8_t)sl->cache_mode;
    lv->cache_policy = (uint8_t)sl->cache_policy;
    if (sl->cachesettings) {
      /* --cachesettings: lvm keeps them as config nodes, the last given
       * first, and writes each as NAME=VALUE; a pool with settings has
       * a policy (the default, smq) */
      struct ff_sb st = FF_SB_INIT;
      char *text;
      size_t n = 0;

      while (sl->cachesettings[n])
        n++;
      while (n-- > 0)
        ff_sb_addf(&st, "\t%s\n", sl->cachesettings[n]);
      if (!(text = ff_sb_text(&st)) ||
          !(lv->policy_settings = ff_fb_keep(b->farm, text))) {
        free(text);
        return -1;
      }
      free(text);
      if (!lv->cache_policy)
        lv->cache_policy = FF_CACHE_POLICY_SMQ;
    }
    goto sized;
  }
  /* update_thin_pool_params */
  if (!sl->metadata_size) {
    if (!chunk) {
      chunk = 128;
      meta = data / (chunk * 8);
      while (meta > 262144 && chunk < 2097152) {
        chunk <<= 1;
        meta >>= 1;
      }
    } else
      meta = data / (chunk * 8);
    meta = ff_fb_round_up(meta, es);
  } else {
    meta = ff_fb_round_up(sl->metadata_size, vg->extent_size) / FF_SECTOR;
    if (!chunk)
      chunk = estimate_chunk(data, meta);
  }
  max_meta = ff_fb_round_up(THIN_MAX_META_SECTORS, es);
  if (meta > max_meta)
    meta = max_meta;
  else if (meta < ff_fb_round_up(4096, es))
    meta = ff_fb_round_up(4096, es);
  meta_ext = meta / es;
  if (THIN_MAX_META_SECTORS * chunk * 8 / es < lv->extents)
    return ff_fb_err(
      b, sl->line, lp,
      "pool %s: lvm refuses it: Selected chunk size %llu KiB "
      "cannot address more then %llu MiB of thin pool data space",
      lv->name, (unsigned long long)(chunk / 2),
      (unsigned long long)(THIN_MAX_META_SECTORS * chunk * 8 / 2048));
  if (chunk > data)
    return ff_fb_err(b, sl->line, lp,
                     "pool %s: lvm refuses it: Size of thin-pool data volume "
                     "cannot be smaller than chunk size %llu KiB",
                     lv->name, (unsigned long long)(chunk / 2));
  lv->kind = FF_LVK_THIN_POOL;
  lv->segtype = lv->ktype = "thin-pool";
sized:
  lv->stripes = 1;
  lv->chunk = (uint32_t)chunk;
  lv->discards = (uint8_t)sl->discards;
  lv->zero = (uint8_t)sl->zero;
  /* the group's first pool makes the spare, when no earlier one did */
  lv->new_spare = (uint8_t)sl->new_spare;
  for (uint32_t l = 0; l < li && lv->new_spare; l++)
    if ((vg->lvs[l].kind == FF_LVK_THIN_POOL ||
         vg->lvs[l].kind == FF_LVK_CACHE_POOL) &&
        vg->lvs[l].new_spare)
      lv->new_spare = 0;
  lv->writes = (uint8_t)(2 + lv->new_spare);
  lv->nsubs = 2 + lv->new_spare;
  lv->subs = calloc(lv->nsubs, sizeof *lv->subs);
  if (!lv->subs)
    return ff_error("out of memory");

  /* handle_pool_metadata_spare: at most 16 GiB */
  if (sl->pmspare) {
    uint64_t max_spare = (2ull * 16 * 1024 * 1024 + es - 1) / es;
    uint64_t want = meta_ext < max_spare ? meta_ext : max_spare;

    if (!lv->new_spare) {
      for (uint32_t l = 0; l < li && !spare; l++)
        if ((vg->lvs[l].kind == FF_LVK_THIN_POOL ||
             vg->lvs[l].kind == FF_LVK_CACHE_POOL) &&
            vg->lvs[l].new_spare)
          spare = &vg->lvs[l].subs[0];
      if (spare && spare->extents < want)
        return ff_fb_err(
          b, sl->line, lp,
          "pool %s: not supported yet: its metadata (%llu extents) "
          "is larger than the VG's pool metadata spare %s (%llu "
          "extents), which lvm would extend",
          lv->name, (unsigned long long)meta_ext, spare->name,
          (unsigned long long)spare->extents);
    } else {
      sp.extents = want;
      if (ff_fb_lvm_allocate(b, sl->line, lp, vg, fl, &sp, 1, 0,
                             FF_ALLOC_INHERIT, 0, NULL) < 0)
        goto out;
      if (!(name = ff_fb_generate_lv_name(vg, li, NULL, "lvol")))
        goto out;
      spare = ff_fb_new_sub(b, sl, lv, li, j++, FF_SUB_PMSPARE, NULL);
      if (asprintf(&spare->name, "%s_pmspare", name) < 0) {
        spare->name = NULL;
        free(name);
        ff_error("out of memory");
        goto out;
      }
      free(name);
      spare->extents = want;
      spare->segs = sp.segs;
      spare->nsegs = sp.nsegs;
      sp.segs = NULL;
      sp.nsegs = 0;
    }
  }

  if (cache) {
    /* one area of metadata + data, the metadata taken from its start */
    tmp.extents = lv->extents + meta_ext;
    if (ff_fb_allocate_unsplit(b, sl->line, lp, vg, fl, &tmp, 1,
                               FF_ALLOC_INHERIT,
                               "pool %s: its metadata and data", lv->name) < 0)
      goto out;
    log_area = tmp.segs[0].areas[0];
    tmp.segs[0].areas[0].pe += meta_ext;
    tmp.segs[0].len = lv->extents;
  } else {
    /* -i N -I S: the data striped (the stripe no larger than an
     * extent, as lvcreate cuts it) */
    uint64_t ssize =
      sl->stripe_size < vg->extent_size ? sl->stripe_size : vg->extent_size;

    tmp.extents = lv->extents;
    if (ff_fb_lvm_allocate(b, sl->line, lp, vg, fl, &tmp, sl->stripes, ssize,
                           FF_ALLOC_INHERIT, meta_ext, &log_area) < 0)
      goto out;
  }
  {
    struct ff_lv *tm, *td;
    struct ff_sb nb = FF_SB_INIT;

    ff_sb_addf(&nb, "%s_%s", lv->name, cache ? "cmeta" : "tmeta");
    tm = ff_fb_new_sub(b, sl, lv, li, j++, cache ? FF_SUB_CMETA : FF_SUB_TMETA,
                       ff_sb_detach(&nb, NULL));
    ff_sb_addf(&nb, "%s_%s", lv->name, cache ? "cdata" : "tdata");
    td = ff_fb_new_sub(b, sl, lv, li, j++, cache ? FF_SUB_CDATA : FF_SUB_TDATA,
                       ff_sb_detach(&nb, NULL));
    if (!tm->name || !td->name) {
      ff_error("out of memory");
      goto out;
    }
    tm->extents = meta_ext;
    tm->segs = calloc(1, sizeof *tm->segs);
    if (!tm->segs ||
        !(tm->segs[0].areas = calloc(1, sizeof(struct ff_area)))) {
      ff_error("out of memory");
      goto out;
    }
    tm->nsegs = 1;
    tm->segs[0].len = meta_ext;
    tm->segs[0].stripes = 1;
    tm->segs[0].areas[0] = log_area;
    td->extents = lv->extents;
    td->segs = tmp.segs;
    td->nsegs = tmp.nsegs;
    tmp.segs = NULL;
    tmp.nsegs = 0;
  }
  r = 0;
out:
  for (uint32_t s = 0; s < tmp.nsegs; s++)
    free(tmp.segs[s].areas);
  free(tmp.segs);
  for (uint32_t s = 0; s < sp.nsegs; s++)
    free(sp.segs[s].areas);
  free(sp.segs);
  return r;
}

/* The thin LV whose mapping tree thin LV l shares: l itself, or the
 * first origin of its chain of snapshots. */
static uint32_t
thin_tree(const struct ff_vg *vg, uint32_t l)
{
  while (vg->lvs[l].thin_origin)
    l = vg->lvs[l].thin_origin - 1;
  return l;
}

/* Thin LV li in the pool its spec names (lvcreate -T -V), a thin snapshot
 * of its origin (lvcreate -s VG/THIN), or a thin LV of an external origin
 * (lvcreate -s --thinpool POOL VG/LV): the next device id, the pool's
 * transaction id, one more message for the pool. */
int
ff_fb_make_thin(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
                struct ff_vg *vg, uint32_t li)
{
  struct ff_lv *lv = &vg->lvs[li], *pool;
  const struct ff_lv *o = NULL;

  if (sl->origin && !(o = ff_fb_find_lv(vg, li, sl->origin)))
    return ff_fb_err(b, sl->line, lp,
                     "origin '%s': lvm refuses it: Failed to find LV %s/%s "
                     "(the origin must be an LV made before it)",
                     sl->origin, vg->name, sl->origin);
  if (o && sl->pool) {
    /* lvcreate -s --thinpool POOL VG/LV: a new thin device over the
     * external origin LV (read-only, not thin), of its size */
    if (o->kind != FF_LVK_STRIPED)
      return ff_fb_err(b, sl->line, lp,
                       "origin '%s': not supported yet: a %s LV as an "
                       "external origin (the farm takes linear and striped "
                       "ones)",
                       sl->origin, o->segtype ? o->segtype : "thin");
    if (!o->f.readonly)
      return ff_fb_err(b, sl->line, lp,
                       "origin '%s': lvm refuses it: Cannot use writable LV "
                       "as the external origin. (make it with permission = "
                       "\"r\")",
                       sl->origin);
    lv->ext_origin = (uint32_t)(o - vg->lvs) + 1;
    lv->extents = o->extents;
    pool = ff_fb_find_lv(vg, li, sl->pool);
  } else if (o) {
    /* lvcreate -s VG/THIN: a thin snapshot in its origin's pool */
    if (o->kind != FF_LVK_THIN)
      return ff_fb_err(b, sl->line, lp,
                       "origin '%s': a thin snapshot needs a thin origin, "
                       "and %s is a %s LV: give pool for a thin LV of an "
                       "external origin, or type = \"snapshot\" with a "
                       "size for an old-style snapshot",
                       sl->origin, sl->origin,
                       o->segtype ? o->segtype : "linear");
    /* the kernel shares the origin's (empty) mapping tree with the
     * snapshot; a third user of one tree needs reference counts above 2,
     * which ff-thinmeta does not model */
    for (uint32_t l = 0; l < li; l++)
      if (vg->lvs[l].kind == FF_LVK_THIN &&
          thin_tree(vg, l) == thin_tree(vg, (uint32_t)(o - vg->lvs)) &&
          l != (uint32_t)(o - vg->lvs) && vg->lvs[l].link == o->link)
        return ff_fb_err(b, sl->line, lp,
                         "origin '%s': not supported yet: a second snapshot "
                         "sharing %s's mapping tree (with %s; the farm's "
                         "thin metadata counts references up to 2, "
                         "docs/thin-metadata.md)",
                         sl->origin, vg->lvs[thin_tree(vg, l)].name,
                         vg->lvs[l].name);
    lv->thin_origin = (uint32_t)(o - vg->lvs) + 1;
    lv->ext_origin = o->ext_origin; /* (lvm writes the chain's too) */
    lv->extents = o->extents;
    pool = &vg->lvs[o->link];
  } else
    pool = ff_fb_find_lv(vg, li, sl->pool);
  if (!pool)
    return ff_fb_err(b, sl->line, lp,
                     "pool '%s': lvm refuses it: Couldn't find volume %s in "
                     "Volume group %s (the pool must be an LV made before it)",
                     sl->pool, sl->pool, vg->name);
  if (pool->kind != FF_LVK_THIN_POOL)
    return ff_fb_err(
      b, sl->line, lp,
      "pool '%s': lvm refuses it: Logical volume %s/%s is not a "
      "thin pool",
      sl->pool, vg->name, sl->pool);
  if (pool->nthins >= FF_THINMETA_MAX_DEV_ID)
    return ff_fb_err(b, sl->line, lp,
                     "pool %s: lvm refuses it: Cannot find free device_id",
                     pool->name);
  /* lvcreate rounds lp->extents to a chunk larger than an extent, but a
   * thin LV is made of lp->virtual_extents: -V stays as it is (in
   * extents) */
  lv->kind = FF_LVK_THIN;
  lv->segtype = lv->ktype = "thin";
  lv->stripes = 1;
  lv->link = (uint32_t)(pool - vg->lvs);
  lv->device_id = ++pool->nthins;
  lv->transaction_id = pool->transaction_id++;
  lv->writes = 2;
  return 0;
}

/* LV li's segments move to a new sub-LV LV<suffix> (LV_corig of a cache
 * LV, LV_wcorig of a writecache), made by the write that attaches the
 * cache (its time then; ff-farm.c); corig_uuid: raw, or NULL for one of
 * the seed. */
static int
new_corig(struct bctx *b, struct ff_vg *vg, uint32_t li, const char *suffix,
          const char *corig_uuid)
{
  struct ff_lv *lv = &vg->lvs[li], *co;
  struct ff_sb nb = FF_SB_INIT;

  lv->subs = calloc(1, sizeof *lv->subs);
  if (!lv->subs)
    return ff_error("out of memory");
  lv->nsubs = 1;
  co = &lv->subs[0];
  ff_sb_addf(&nb, "%s%s", lv->name, suffix);
  if (!(co->name = ff_sb_detach(&nb, NULL)))
    return ff_error("out of memory");
  if (corig_uuid)
    memcpy(co->uuid, corig_uuid, FF_UUID_LEN);
  else
    ff_uuid_make(co->uuid, b->spec->seed, K_SUBLV, b->v, (uint64_t)li << 16);
  co->role = FF_SUB_CORIG;
  co->parent = li;
  co->time = lv->time;
  co->writes = 1;
  co->extents = lv->extents;
  co->alloc = lv->alloc;
  co->segs = lv->segs;
  co->nsegs = lv->nsegs;
  lv->segs = NULL;
  lv->nsegs = 0;
  return 0;
}

/* Cache LV li (its extents placed in its own segments) with cache pool
 * pool_name, as lvcreate --type cache or lvconvert --type cache
 * --cachepool do (lib/metadata/cache_manip.c cache_lv_create_cache): the
 * LV's segments move to the new LV_corig, the pool is renamed POOL_cpool
 * with POOL_cpool_cmeta and POOL_cpool_cdata, takes the given cache mode
 * and policy (or keeps its own, or writethrough and smq).  The pool is
 * one of the first nl LVs; corig_uuid: raw, or NULL for one of the
 * seed. */
int
ff_fb_attach_cache(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
                   uint32_t li, uint32_t nl, const char *pool_name,
                   enum ff_cache_mode mode, enum ff_cache_policy policy,
                   const char *corig_uuid)
{
  struct ff_lv *lv = &vg->lvs[li], *pool = ff_fb_find_lv(vg, nl, pool_name);
  struct ff_sb nb = FF_SB_INIT;

  if (!pool || (pool->kind == FF_LVK_CACHE_POOL && pool->attach_seq))
    return ff_fb_err(
      b, line, lp,
      "pool '%s': lvm refuses it: Ambiguous syntax, please create "
      "--type cache-pool %s separately (no unused cache pool of "
      "that name in VG %s)",
      pool_name, pool_name, vg->name);
  if (pool->kind != FF_LVK_CACHE_POOL)
    return ff_fb_err(
      b, line, lp,
      "pool '%s': lvm refuses it: Logical volume %s/%s is not a "
      "cache pool",
      pool_name, vg->name, pool_name);
  if (lv->kind != FF_LVK_STRIPED)
    return ff_fb_err(
      b, line, lp,
      "LV %s: not supported yet: caching a %s LV (the farm caches "
      "linear and striped LVs)",
      lv->name, lv->segtype ? lv->segtype : "striped");
  if (new_corig(b, vg, li, "_corig", corig_uuid) < 0)
    return -1;
  lv->kind = FF_LVK_CACHE;
  lv->segtype = lv->ktype = "cache";
  lv->link = (uint32_t)(pool - vg->lvs);
  lv->chunk = pool->chunk;
  lv->cache_mode = (uint8_t)(mode               ? mode
                             : pool->cache_mode ? pool->cache_mode
                                                : FF_CACHE_MODE_WRITETHROUGH);
  lv->cache_policy = (uint8_t)(policy               ? policy
                               : pool->cache_policy ? pool->cache_policy
                                                    : FF_CACHE_POLICY_SMQ);
  pool->link = li;
  /* attached: the seqno is known when the texts are built */
  pool->attach_seq = UINT32_MAX;
  for (uint32_t u = 0; u <= pool->nsubs; u++) {
    struct ff_lv *p = u ? &pool->subs[u - 1] : pool;

    if (u && p->role == FF_SUB_PMSPARE)
      continue;
    p->oldname = p->name;
    if (u)
      ff_sb_addf(&nb, "%s_cpool_%s", pool->oldname,
                 p->role == FF_SUB_CMETA ? "cmeta" : "cdata");
    else
      ff_sb_addf(&nb, "%s_cpool", p->oldname);
    if (!(p->name = ff_sb_detach(&nb, NULL)))
      return ff_error("out of memory");
  }
  return 0;
}

/* The tmeta of every pool with thin LVs: the kernel's metadata after the
 * lvcreates (all with -an: each thin's lvcreate activates the pool, the
 * first one formats it first) and the lvremoves of thin LVs among the
 * changes recs[nrecs] (each a delete message), an image shared by pools
 * of one shape, served as data-area bytes of the tmeta's extents. */
int
ff_fb_thin_pool_images(struct bctx *b, struct ff_vg *vg,
                       const struct chrec *recs, unsigned nrecs)
{
  for (uint32_t l = 0; l < vg->nlvs; l++) {
    const struct ff_lv *lv = &vg->lvs[l], *tm;
    uint64_t tb, blocks;
    struct ff_thinmeta *m = NULL;
    struct ff_farm *farm = b->farm;
    uint32_t *orig, ndel = 0;

    if (lv->kind != FF_LVK_THIN_POOL || !lv->nthins)
      continue;
    tm = &lv->subs[lv->new_spare];
    tb = tm->extents * vg->extent_size;
    blocks = lv->extents * vg->extent_size / FF_SECTOR / lv->chunk;
    /* which devices are snapshots, and of which; then the devices
     * deleted, in order */
    if (!(orig = calloc(2 * (size_t)lv->nthins, sizeof *orig)))
      return ff_error("out of memory");
    for (uint32_t t = 0; t < vg->nlvs; t++) {
      const struct ff_lv *th = &vg->lvs[t];

      if (th->kind == FF_LVK_THIN && th->link == l && th->thin_origin)
        orig[th->device_id - 1] = vg->lvs[th->thin_origin - 1].device_id;
    }
    for (unsigned k = 0; k < nrecs; k++)
      if (recs[k].writes == 2 && vg->lvs[recs[k].lv].link == l)
        orig[lv->nthins + ndel++] = vg->lvs[recs[k].lv].device_id;
    for (uint32_t i = 0; i < farm->ntms && !m; i++)
      if (farm->tms[i].tmeta_bytes == tb &&
          farm->tms[i].data_blocks == blocks &&
          farm->tms[i].chunk == lv->chunk &&
          farm->tms[i].nthin == lv->nthins && farm->tms[i].ndel == ndel &&
          !memcmp(farm->tms[i].origins, orig,
                  (lv->nthins + ndel) * sizeof *orig))
        m = farm->tms[i].m;
    if (m)
      free(orig);
    else {
      struct ff_thinmeta_op *ops =
        calloc(4 + 6 * ((size_t)lv->nthins + ndel), sizeof *ops);
      struct ff_tmcache *n;
      size_t k = 0;

      if (!ops) {
        free(orig);
        return ff_error("out of memory");
      }
      /* check_new_thin_pool: open (format), resize, commit, close */
      ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_OPEN, 0, 0};
      ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_RESIZE, blocks, 0};
      ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_COMMIT, 0, 0};
      ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_CLOSE, 0, 0};
      /* each lvcreate (lvremove) activates the pool, sends its message
       * and the new transaction id, and deactivates it */
      for (uint32_t t = 1; t <= lv->nthins + ndel; t++) {
        ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_OPEN, 0, 0};
        if (t > lv->nthins)
          ops[k++] =
            (struct ff_thinmeta_op){FF_THINMETA_DELETE, orig[t - 1], 0};
        else if (orig[t - 1])
          ops[k++] =
            (struct ff_thinmeta_op){FF_THINMETA_CREATE_SNAP, t, orig[t - 1]};
        else
          ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_CREATE_THIN, t, 0};
        ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_COMMIT, 0, 0};
        ops[k++] =
          (struct ff_thinmeta_op){FF_THINMETA_SET_TRANSACTION_ID, t - 1, t};
        ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_COMMIT, 0, 0};
        ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_CLOSE, 0, 0};
      }
      m = ff_thinmeta_build(tb, lv->chunk, ops, k);
      free(ops);
      if (!m) {
        char msg[512];

        free(orig);
        snprintf(msg, sizeof msg, "%s", ff_errmsg());
        return ff_error("VG %s, pool %s: %s", vg->name, lv->name, msg);
      }
      n = realloc(farm->tms, (farm->ntms + 1) * sizeof *n);
      if (!n) {
        free(orig);
        ff_thinmeta_free(m);
        return ff_error("out of memory");
      }
      farm->tms = n;
      n[farm->ntms++] =
        (struct ff_tmcache){tb, blocks, lv->chunk, lv->nthins, ndel, orig, m};
    }
    for (size_t i = 0; i < ff_thinmeta_nblocks(m); i++) {
      const struct ff_area *a = &tm->segs[0].areas[0];

      if (ff_fb_add_blob(vg, a->pv,
                         vg->fmt.pe_start + a->pe * vg->extent_size +
                           ff_thinmeta_blocknr(m, i) * FF_THINMETA_BLOCK,
                         FF_THINMETA_BLOCK, 0, ff_thinmeta_block(m, i)) < 0)
        return -1;
    }
  }
  return 0;
}

/* lvconvert --type writecache --cachevol CVOL (writecache) or --type
 * cache --cachevol CVOL of LV li (lib/metadata/writecache_manip.c,
 * cache_manip.c cache_vol_set_params): the LV's segments move to the new
 * LV_wcorig (LV_corig), CVOL (an unused linear or striped LV) is renamed
 * CVOL_cvol and hidden with CACHE_VOL, the LV gets one writecache (cache)
 * segment over both; a cache splits the cachevol into metadata (as lvm
 * sizes it) then data.  corig_uuid: raw, or NULL for one of the seed.
 * The texts show it from attach_seq on. */
/* A writecache's --cachesettings: the text's lines
 * (writecache.c _writecache_text_export) and dm's optional arguments
 * (libdm _writecache_emit_segment_line: fua and nofua whatever their
 * value, cleaner only when not 0). */
static int
wc_settings(struct ff_farm *farm, struct ff_lv *lv,
            const struct ff_wcsettings *ws)
{
  struct ff_sb text = FF_SB_INIT, args = FF_SB_INIT;
  char *t, *a;

  lv->wc_block = ws->block_size ? ws->block_size : 4096;
  for (unsigned k = 0; k < FF_WC_NSETTINGS; k++) {
    int flag = k == FF_WC_FUA || k == FF_WC_NOFUA || k == FF_WC_CLEANER;

    if (!ws->set[k] || (k == FF_WC_CLEANER && !ws->v[k]))
      continue;
    ff_sb_addf(&text, "%s = %llu\n", ff_wc_setting_names[k],
               (unsigned long long)ws->v[k]);
    if (flag)
      ff_sb_addf(&args, " %s", ff_wc_setting_names[k]);
    else
      ff_sb_addf(&args, " %s %llu", ff_wc_setting_names[k],
                 (unsigned long long)ws->v[k]);
  }
  if (!args.len) /* no settings */
    return 0;
  t = ff_sb_detach(&text, NULL);
  a = ff_sb_detach(&args, NULL);
  lv->wc_text = t ? ff_fb_keep(farm, t) : NULL;
  lv->wc_args = a ? ff_fb_keep(farm, a + 1) : NULL;
  free(t);
  free(a);
  if (!lv->wc_text || !lv->wc_args)
    return ff_error("out of memory");
  return 0;
}

int
ff_fb_attach_cachevol(struct bctx *b, int line, const char *lp,
                      struct ff_vg *vg, uint32_t li, uint32_t nl,
                      const char *cvol_name, const struct ff_wcsettings *ws,
                      enum ff_cache_mode mode, enum ff_cache_policy policy,
                      const char *corig_uuid)
{
  int writecache = ws != NULL;
  struct ff_lv *lv = &vg->lvs[li], *cv = ff_fb_find_lv(vg, nl, cvol_name);
  uint64_t es = vg->extent_size / FF_SECTOR, size, meta = 0;
  struct ff_sb nb = FF_SB_INIT;

  if (!cv)
    return ff_fb_err(b, line, lp,
                     "cachevol '%s': lvm refuses it: Failed to find LV %s/%s",
                     cvol_name, vg->name, cvol_name);
  if (cv == lv)
    return ff_fb_err(b, line, lp,
                     "cachevol '%s': lvm refuses it: the cachevol cannot be "
                     "the LV it caches",
                     cvol_name);
  if (cv->kind == FF_LVK_CACHEVOL)
    return ff_fb_err(b, line, lp,
                     "cachevol '%s': it already caches LV %s (a cachevol "
                     "serves one LV)",
                     cvol_name, vg->lvs[cv->link].name);
  if (lv->kind != FF_LVK_STRIPED || cv->kind != FF_LVK_STRIPED)
    return ff_fb_err(b, line, lp,
                     "LV %s: not supported yet: a %s of a %s LV on a %s "
                     "cachevol (the farm takes linear and striped LVs for "
                     "both)",
                     lv->name, writecache ? "writecache" : "cache",
                     lv->segtype ? lv->segtype : "striped",
                     cv->segtype ? cv->segtype : "striped");
  size = cv->extents * es;
  if (!writecache) {
    /* cache_vol_set_params: _cache_min_metadata_size (4 MiB + 44 bytes
     * per 64 KiB chunk), at most half the cachevol, at least an extent,
     * rounded up to extents */
    if (cv->extents < 2)
      return ff_fb_err(b, line, lp,
                       "cachevol '%s': lvm refuses it: The minimum cache "
                       "size is two extents (%llu bytes).",
                       cvol_name, (unsigned long long)(2 * vg->extent_size));
    meta = (4ull * 1024 * 1024 + size / 128 * 44 + 511) / 512;
    if (meta > size / 2)
      meta = size / 2;
    if (meta < es)
      meta = es;
    meta = ff_fb_round_up(meta, es);
    if ((size - meta) / 128 > 1000000)
      return ff_fb_err(b, line, lp,
                       "cachevol '%s': lvm refuses it: Cache data blocks "
                       "%llu and chunk size 128 exceed max chunks 1000000.",
                       cvol_name, (unsigned long long)(size - meta));
  }
  if (new_corig(b, vg, li, writecache ? "_wcorig" : "_corig", corig_uuid) < 0)
    return -1;
  if (writecache) {
    lv->kind = FF_LVK_WRITECACHE;
    lv->segtype = lv->ktype = "writecache";
    if (wc_settings(b->farm, lv, ws) < 0)
      return -1;
  } else {
    lv->kind = FF_LVK_CACHE;
    lv->segtype = lv->ktype = "cache";
    lv->chunk = 128;
    lv->cvol_meta = meta;
    lv->cache_mode = (uint8_t)(mode ? mode : FF_CACHE_MODE_WRITETHROUGH);
    lv->cache_policy = (uint8_t)(policy ? policy : FF_CACHE_POLICY_SMQ);
  }
  lv->link = (uint32_t)(cv - vg->lvs);
  cv->kind = FF_LVK_CACHEVOL;
  cv->link = li;
  cv->attach_seq = lv->attach_seq = UINT32_MAX; /* (set by the texts) */
  cv->oldname = cv->name;
  ff_sb_addf(&nb, "%s_cvol", cv->oldname);
  if (!(cv->name = ff_sb_detach(&nb, NULL)))
    return ff_error("out of memory");
  return 0;
}
