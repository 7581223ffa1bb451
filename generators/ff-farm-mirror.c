/* fusefarm: building a farm, mirror and raid LVs
 * (see ff-farm-int.h).
 *
 * Mirrors lvm2 2.03.16's lib/metadata/mirror.c and raid_manip.c (with
 * lvcreate.c's region and stripe defaults): region sizes, the sub-LVs
 * (rimage/rmeta, mimage/mlog) in lvm's order, the disk log's header and
 * fill.  Their names, UUIDs, extents and the log's bytes must stay
 * byte-identical to what lvm writes.
 */
#include "ff-farm-int.h"
#include "ff-error.h"

#include <stdlib.h>
#include <string.h>

/* The region size (sectors) lvcreate gives a mirror or raid LV of
 * lv_sectors from the asked one, a power of 2 of at least a page (the
 * spec checks it as lvcreate --regionsize does): raid raises it to the
 * stripe size (lvcreate.c _read_raid_params); an LV smaller than it gets
 * the largest power of 2 that fits ("Using reduced mirror region size");
 * raid doubles it until the LV has fewer than 2^21 regions
 * (raid_manip.c raid_ensure_min_region_size). */
static uint64_t
region_sectors(uint64_t asked, uint64_t lv_sectors, int raid,
               uint64_t stripe_sectors)
{
  uint64_t r = asked;

  if (raid && stripe_sectors > r)
    r = stripe_sectors;
  if (lv_sectors < r) {
    r = 1;
    while (r * 2 <= lv_sectors)
      r *= 2;
  }
  if (raid)
    while (lv_sectors / r >= (1u << 21))
      r *= 2;
  return r;
}

/* (ff-farm-int.h) mirror.c adjusted_mirror_region_size of lvm's default
 * 2 MiB for an internal mirror of extents extents: at most the extent
 * size's lowest power of 2 times the extents. */
uint64_t
ff_fb_mirror_region(const struct ff_vg *vg, uint64_t extents)
{
  uint64_t es = vg->extent_size / FF_SECTOR, max = (es & -es) * extents;

  return max < 4096 ? max : 4096;
}

/* _mirror_log_extents: a header, a sector, a bit per region. */
static uint64_t
mirror_log_extents(uint64_t region, uint64_t lv_sectors, uint64_t extent_size)
{
  uint64_t regions = (lv_sectors + region - 1) / region;
  uint64_t bytes = 1024 + (regions + 31) / 32 * 4;
  uint64_t sectors = (bytes + 511) / 512;

  return (sectors * FF_SECTOR + extent_size - 1) / extent_size;
}

/* _raid_rmeta_extents: two 4 KiB superblocks and a bit per region. */
static uint64_t
raid_rmeta_extents(uint64_t region, uint64_t rimage_ext, uint64_t extent_size)
{
  uint64_t regions = rimage_ext * (extent_size / FF_SECTOR) / region;
  uint64_t bytes = 2 * 4096 + (regions + 7) / 8;
  uint64_t sectors = (bytes + 511) / 512;

  return (sectors * FF_SECTOR + extent_size - 1) / extent_size;
}

/* Sub-LV j of top LV li: name, UUID, one linear segment on pv:pe. */
static int
make_sub(struct bctx *b, const struct ff_spec_lv *sl, struct ff_lv *top,
         uint32_t li, uint32_t j, enum ff_sub_role role, int idx, uint32_t pv,
         uint64_t pe, uint64_t len)
{
  struct ff_lv *sub = &top->subs[j];
  struct ff_sb sb = FF_SB_INIT;

  ff_sb_addf(&sb, "%s_%s", top->name, ff_sub_role_name(role));
  if (idx >= 0)
    ff_sb_addf(&sb, "_%d", idx);
  if (!(sub->name = ff_sb_detach(&sb, NULL)))
    return ff_error("out of memory");
  if (sl->uuids)
    memcpy(sub->uuid, sl->uuids[j], FF_UUID_LEN);
  else
    ff_uuid_make(sub->uuid, b->spec->seed, K_SUBLV, b->v,
                 ((uint64_t)li << 16) | j);
  sub->role = (uint8_t)role;
  sub->parent = li;
  sub->time = top->time;
  sub->alloc = top->alloc; /* sub-LVs are made with lv->alloc */
  sub->extents = len;
  sub->writes = 1;
  sub->segs = calloc(1, sizeof *sub->segs);
  if (!sub->segs || !(sub->segs[0].areas = calloc(1, sizeof(struct ff_area))))
    return ff_error("out of memory");
  sub->nsegs = 1;
  sub->segs[0].len = len;
  sub->segs[0].stripes = 1;
  sub->segs[0].areas[0].pv = pv;
  sub->segs[0].areas[0].pe = pe;
  return 0;
}

/* integrity_manip.c _lv_size_bytes_to_integrity_meta_bytes: 4 MiB per
 * started 500 MiB of data, and the journals' room (4 MiB up to 512 MiB,
 * 8 MiB up to 1 GiB, 32 MiB up to 4 GiB, 64 MiB beyond). */
static uint64_t
integrity_meta_bytes(uint64_t data)
{
  const uint64_t mib = 1ull << 20;
  uint64_t journal = data <= 512 * mib       ? 4 * mib
                     : data <= 1024 * mib    ? 8 * mib
                     : data <= 4096ull * mib ? 32 * mib
                                             : 64 * mib;

  return (data / (500 * mib) + 1) * 4 * mib + journal;
}

/* lvcreate --raidintegrity y (lv_add_integrity_to_raid): each rimage_N
 * gets rimage_N_imeta, a linear LV on rimage_N's PV, placed by the VG's
 * policy after the raid LV (one lvcreate each); then rimage_N becomes an
 * integrity layer over the new rimage_N_iorig, which takes its extents
 * (insert_layer_for_lv).  Subs [2 * images + i] and [3 * images + i]. */
static int
add_integrity(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
              struct ff_vg *vg, struct freelist *fl, uint32_t li)
{
  struct ff_lv *lv = &vg->lvs[li];
  uint32_t n = sl->images;
  uint64_t es = vg->extent_size / FF_SECTOR;

  lv->integrity = (uint8_t)sl->integrity_mode;
  for (uint32_t i = 0; i < n; i++) {
    struct ff_lv *img = &lv->subs[2 * i], *meta = &lv->subs[2 * n + i],
                 *io = &lv->subs[3 * n + i];
    uint32_t pv = img->segs[0].areas[0].pv;
    /* _lv_create_integrity_metadata: whole extents, rounded down */
    uint64_t ext =
      integrity_meta_bytes(img->extents * vg->extent_size) / FF_SECTOR / es;
    struct ff_sb nb = FF_SB_INIT;
    uint8_t *use;
    uint64_t avail;
    int r;

    if (!ext)
      return ff_fb_err(b, sl->line, lp,
                       "LV %s: not supported: its integrity metadata (%llu "
                       "bytes) is less than one extent, which lvm 2.03.16 "
                       "makes a 0-extent LV of and fails",
                       lv->name,
                       (unsigned long long)integrity_meta_bytes(
                         img->extents * vg->extent_size));
    /* lp_meta.pvh: the image's PVs only */
    if (!(use = calloc(vg->npvs, 1)))
      return ff_error("out of memory");
    use[pv] = 1;
    avail = ff_fb_free_on(vg, fl, use);
    if (avail < ext) {
      free(use);
      return ff_fb_err(
        b, sl->line, lp,
        "LV %s: lvm refuses it: Insufficient free space: %llu extents "
        "needed, but only %llu available (%s_imeta goes on the PV of %s, "
        "PV %u of the VG)",
        lv->name, (unsigned long long)ext, (unsigned long long)avail,
        img->name, img->name, pv);
    }
    ff_sb_addf(&nb, "%s_imeta", img->name);
    meta->name = ff_sb_detach(&nb, NULL);
    meta->extents = ext;
    r = meta->name ? ff_fb_allocate_on(b, sl->line, lp, vg, fl, meta, use)
                   : ff_error("out of memory");
    free(use);
    if (r < 0)
      return -1;
    meta->role = FF_SUB_IMETA;
    meta->parent = li;
    meta->writes = 1;
    meta->f.read_ahead = -1; /* lp_meta.read_ahead: DM_READ_AHEAD_NONE */
    /* rimage_N_iorig: rimage_N's extents, a new LV */
    ff_sb_addf(&nb, "%s_iorig", img->name);
    if (!(io->name = ff_sb_detach(&nb, NULL)) ||
        !(io->segs = calloc(1, sizeof *io->segs)) ||
        !(io->segs[0].areas = calloc(1, sizeof(struct ff_area))))
      return ff_error("out of memory");
    io->nsegs = 1;
    {
      struct ff_area *areas = io->segs[0].areas;

      io->segs[0] = img->segs[0];
      io->segs[0].areas = areas;
      areas[0] = img->segs[0].areas[0];
    }
    io->extents = img->extents;
    io->role = FF_SUB_IORIG;
    io->parent = li;
    io->writes = 1;
    io->alloc = img->alloc;
    for (int k = 0; k < 2; k++) {
      struct ff_lv *x = k ? io : meta;
      uint32_t j = k ? 3 * n + i : 2 * n + i;

      if (sl->uuids)
        memcpy(x->uuid, sl->uuids[j], FF_UUID_LEN);
      else
        ff_uuid_make(x->uuid, b->spec->seed, K_SUBLV, b->v,
                     ((uint64_t)li << 16) | j);
    }
  }
  return 0;
}

static const uint8_t mlog_header[16] = {0x72, 0x52, 0x69, 0x4d, 2,    0,
                                        0,    0,    0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0xff};

/* Place mirror or raid LV li (lv->extents already rounded to its
 * stripes) as one lvcreate --type would, making its sub-LVs. */
int
ff_fb_allocate_mirror_raid(struct bctx *b, const struct ff_spec_lv *sl,
                           const char *lp, struct ff_vg *vg,
                           struct freelist *fl, uint32_t li)
{
  struct ff_lv *lv = &vg->lvs[li];
  uint64_t es = vg->extent_size / FF_SECTOR, lv_sectors = lv->extents * es;
  uint64_t ssize = 0, per, meta = 0, img;
  struct ff_lv tmp = {.name = lv->name};
  int raid = sl->kind == FF_LVK_RAID, r = -1;
  /* raid0: rimages alone; raid0_meta: rmetas sized as raid's, from
   * lvm.conf's default raid_region_size, 2 MiB (lvm gives raid0 no region
   * size whatever -R says: _raid_rmeta_extents takes the default) */
  int raid0 = raid && !strncmp(sl->segtype, "raid0", 5);

  lv->kind = (uint8_t)sl->kind;
  lv->segtype = sl->segtype;
  lv->ktype = sl->ktype;
  lv->nosync = (uint8_t)sl->nosync;
  lv->writes = (uint8_t)ff_spec_lv_writes(sl);
  lv->images = sl->images;
  lv->stripes = sl->stripes;
  lv->data_copies = sl->data_copies;
  if (raid && sl->stripe_size) /* capped at the extent size */
    ssize =
      (sl->stripe_size < vg->extent_size ? sl->stripe_size : vg->extent_size) /
      FF_SECTOR;
  lv->stripe_size = ssize;
  lv->region_size =
    region_sectors(sl->region_size / FF_SECTOR, lv_sectors, raid, ssize);
  /* the one segment of the top LV: over its sub-LVs */
  lv->segs = calloc(1, sizeof *lv->segs);
  if (!lv->segs)
    return ff_error("out of memory");
  lv->nsegs = 1;
  lv->segs[0].len = lv->extents;
  lv->segs[0].stripes = 1;
  lv->nsubs = sl->no_rmeta ? sl->images
              : raid       ? (sl->integrity ? 4 : 2) * sl->images
                           : sl->images + !sl->core_log;
  lv->subs = calloc(lv->nsubs, sizeof *lv->subs);
  if (!lv->subs)
    return ff_error("out of memory");

  if (raid) {
    img = sl->stripes > 1 ? lv->extents / sl->stripes : lv->extents;
    meta = sl->no_rmeta
             ? 0
             : raid_rmeta_extents(
                 raid0 ? (2u << 20) / FF_SECTOR : lv->region_size,
                 !strcmp(sl->segtype, "raid10")
                   ? (lv->extents * 2 + sl->stripes - 1) / sl->stripes
                   : img,
                 vg->extent_size);
  } else
    img = lv->extents;
  /* one allocate_extents(): an area of rmeta + rimage (mirror: the
   * image) per image, on different PVs unless alloc = anywhere */
  per = meta + img;
  tmp.extents = per * sl->images;
  if (ff_fb_allocate_unsplit(b, sl->line, lp, vg, fl, &tmp, sl->images,
                             sl->alloc, "LV %s: a %s image", lv->name,
                             sl->segtype) < 0)
    goto out;
  for (uint32_t i = 0; i < sl->images; i++) {
    const struct ff_area *a = &tmp.segs[0].areas[i];

    if (sl->no_rmeta) {
      if (make_sub(b, sl, lv, li, i, FF_SUB_RIMAGE, (int)i, a->pv, a->pe,
                   img) < 0)
        goto out;
    } else if (raid) {
      if (make_sub(b, sl, lv, li, 2 * i, FF_SUB_RIMAGE, (int)i, a->pv,
                   a->pe + meta, img) < 0 ||
          make_sub(b, sl, lv, li, 2 * i + 1, FF_SUB_RMETA, (int)i, a->pv,
                   a->pe, meta) < 0)
        goto out;
    } else if (make_sub(b, sl, lv, li, i, FF_SUB_MIMAGE, (int)i, a->pv, a->pe,
                        img) < 0)
      goto out;
  }
  if (!raid && !sl->core_log) {
    uint64_t log_len =
      mirror_log_extents(lv->region_size, lv_sectors, vg->extent_size);
    uint64_t pe = 0, off;
    uint32_t pv = 0;

    if (ff_fb_place_mirror_log(b, sl->line, lp, vg, fl, lv, log_len, sl->alloc,
                               &pv, &pe) < 0 ||
        make_sub(b, sl, lv, li, sl->images, FF_SUB_MLOG, -1, pv, pe, log_len) <
          0)
      goto out;
    /* _init_mirror_log: the log wiped (0xFF with --nosync), then its
     * 16-byte header (magic "rRiM", version 2, nr_regions ~0) */
    off = vg->fmt.pe_start + pe * vg->extent_size;
    if ((sl->nosync && ff_fb_add_blob(vg, pv, off, log_len * vg->extent_size,
                                      0xff, NULL) < 0) ||
        ff_fb_add_blob(vg, pv, off, sizeof mlog_header, 0, mlog_header) < 0)
      goto out;
  }
  if (raid0)
    lv->region_size = 0;
  if (sl->integrity && add_integrity(b, sl, lp, vg, fl, li) < 0)
    goto out;
  r = 0;
out:
  for (uint32_t s = 0; s < tmp.nsegs; s++)
    free(tmp.segs[s].areas);
  free(tmp.segs);
  return r;
}
