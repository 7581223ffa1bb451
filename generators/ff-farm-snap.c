/* fusefarm: building a farm, old-style snapshots
 * (see ff-farm-int.h).
 *
 * Mirrors lvm2 2.03.16's lib/metadata/snapshot_manip.c: the COW LV's
 * size and the hidden snapshotN segment over it, with the kernel's COW
 * header.  Its extents, name and header bytes must stay byte-identical
 * to what lvm writes.
 */
#include "ff-farm-int.h"
#include "ff-error.h"

#include <stdlib.h>
#include <string.h>

/* lib/metadata/snapshot_manip.c _cow_max_size, in extents (the kernel's
 * snapshot target has the leak fix: no extra chunks). */
static uint64_t
cow_max_extents(uint64_t origin_sectors, uint64_t chunk, uint64_t es)
{
  uint64_t origin_chunks = (origin_sectors + chunk - 1) / chunk;
  uint64_t per_area = chunk << (9 - 4);
  uint64_t meta_chunks = (origin_chunks + per_area) / per_area;

  return ff_fb_round_up((1 + origin_chunks + meta_chunks) * chunk, es) / es;
}

/* Snapshot li of the origin its spec names (lvcreate -s): the COW LV
 * placed as a linear LV, then the hidden snapshotN over it. */
int
ff_fb_allocate_snapshot(struct bctx *b, const struct ff_spec_lv *sl,
                        const char *lp, struct ff_vg *vg, struct freelist *fl,
                        uint32_t li)
{
  struct ff_lv *lv = &vg->lvs[li], *o = ff_fb_find_lv(vg, li, sl->origin), *sn;
  uint64_t es = vg->extent_size / FF_SECTOR, chunk = sl->chunk_size / 512;
  uint64_t max;
  char *name;

  if (!o)
    return ff_fb_err(
      b, sl->line, lp,
      "origin '%s': lvm refuses it: Couldn't find origin volume "
      "'%s' (the origin must be an LV made before it)",
      sl->origin, sl->origin);
  if (o->kind == FF_LVK_SNAPSHOT || o->kind == FF_LVK_THIN_POOL)
    return ff_fb_err(b, sl->line, lp,
                     "origin '%s': lvm refuses it: Snapshots of %s are not "
                     "supported",
                     sl->origin,
                     o->kind == FF_LVK_SNAPSHOT ? "snapshots"
                                                : "thin pool type volumes");
  if (o->kind != FF_LVK_STRIPED)
    return ff_fb_err(
      b, sl->line, lp,
      "origin '%s': not supported yet: snapshots of %s LVs (the "
      "farm makes snapshots of linear and striped LVs)",
      sl->origin, o->segtype);
  max = cow_max_extents(o->extents * es, chunk, es);
  if (lv->extents > max) /* "Reducing COW size ... down to maximum" */
    lv->extents = max;
  if (lv->extents * es < 3 * chunk)
    return ff_fb_err(
      b, sl->line, lp,
      "LV %s: lvm refuses it: Snapshot volume cannot be smaller "
      "than 3 chunks (%llu extents, %llu KiB)",
      lv->name, (unsigned long long)((3 * chunk + es - 1) / es),
      (unsigned long long)(3 * chunk / 2));
  if (ff_fb_lvm_allocate(b, sl->line, lp, vg, fl, lv, 1, 0, FF_ALLOC_INHERIT,
                         0, NULL) < 0)
    return -1;
  lv->kind = FF_LVK_SNAPSHOT;
  lv->segtype = lv->ktype = "snapshot";
  lv->chunk = (uint32_t)chunk;
  lv->link = (uint32_t)(o - vg->lvs);
  lv->writes = 2;
  lv->nsubs = 1;
  lv->subs = calloc(1, sizeof *lv->subs);
  if (!lv->subs)
    return ff_error("out of memory");
  if (!(name = ff_fb_generate_lv_name(vg, li, lv, "snapshot")))
    return -1;
  sn = ff_fb_new_sub(b, sl, lv, li, 0, FF_SUB_SNAPSHOT, name);
  sn->extents = o->extents;
  if (sl->cow_header) {
    /* dm-snap-persistent.c write_header: magic "SnAp", valid 1,
     * version 1, chunk size in sectors, all little-endian */
    static const uint8_t head[12] = {0x53, 0x6e, 0x41, 0x70, 1, 0,
                                     0,    0,    1,    0,    0, 0};
    const struct ff_area *a = &lv->segs[0].areas[0];

    memcpy(lv->cow_header, head, sizeof head);
    for (int i = 0; i < 4; i++)
      lv->cow_header[12 + i] = (uint8_t)(chunk >> (8 * i));
    if (ff_fb_add_blob(vg, a->pv, vg->fmt.pe_start + a->pe * vg->extent_size,
                       sizeof lv->cow_header, 0, lv->cow_header) < 0)
      return -1;
  }
  return 0;
}
