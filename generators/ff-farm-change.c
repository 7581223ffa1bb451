/* fusefarm: building a farm, the changes after the LVs
 * (see ff-farm-int.h).
 *
 * What lvm's tools/vgchange.c, pvchange.c, lvchange.c, lvrename.c and
 * lvresize.c (lib/metadata/lv_manip.c lv_resize) do to the metadata, for
 * the spec's changes (docs/spec-format.md, "Change group"): each is
 * checked as lvm checks it and applied to the VG in order, recorded with
 * what stood before, then all are undone so that build_texts (ff-farm.c)
 * writes every earlier text as it was and applies each change at its own
 * write.  lvconvert --type cache is ff-farm-pool.c's; its texts follow
 * attach_seq instead.
 */
#include "ff-farm-int.h"
#include "ff-error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
lv_save(struct bctx *b, const struct ff_lv *lv, uint32_t mseg,
        struct lvstate *st)
{
  if (!(st->name = ff_fb_keep(b->farm, lv->name)))
    return -1;
  st->f = lv->f;
  st->nsegs = lv->nsegs;
  st->extents = lv->extents;
  st->mlen = lv->nsegs ? lv->segs[mseg].len : 0;
  return 0;
}

int
ff_fb_rec_apply(struct ff_vg *vg, const struct chrec *rc, int fwd)
{
  if (rc->vg > 0)
    vg->unresizeable = fwd ? rc->vg_is : rc->vg_was;
  if (rc->pv >= 0)
    vg->pvs[rc->pv].unalloc = fwd ? rc->pv_is : rc->pv_was;
  if (rc->lv != FF_NONE) {
    struct ff_lv *lv = &vg->lvs[rc->lv];
    const struct lvstate *st = fwd ? &rc->is : &rc->was;

    /* (a new copy only when the name changes: lvrename) */
    if (strcmp(lv->name, st->name)) {
      char *name = strdup(st->name);

      if (!name)
        return ff_error("out of memory");
      free(lv->name);
      lv->name = name;
    }
    lv->f = st->f;
    lv->nsegs = st->nsegs;
    lv->extents = st->extents;
    if (st->nsegs)
      lv->segs[rc->mseg].len = st->mlen;
  }
  return 0;
}

static const char *
lv_type_name(const struct ff_lv *lv)
{
  static const char *const kinds[] = {"linear",     "mirror", "raid",
                                      "thin-pool",  "thin",   "snapshot",
                                      "cache-pool", "cache"};

  if (lv->segtype)
    return lv->segtype;
  return lv->kind < sizeof kinds / sizeof kinds[0] ? kinds[lv->kind] : "?";
}

/* lvremove (lib/metadata/lv_manip.c lv_remove_with_dependencies,
 * pool_manip.c detach_pool_lv) of LV recs[k].target: a linear or
 * striped LV nothing uses (its extents free again), or a thin LV (two
 * writes: the pool's delete message, then none; its thin snapshot loses
 * its origin line and, with record_lvs_history, is the descendant of a
 * historical LV).  What lvm would remove along with the LV (snapshots,
 * thins of an external origin, caches) is refused. */
static int
remove_lv(struct bctx *b, const struct ff_spec_change *ch, const char *cp,
          struct ff_vg *vg, struct freelist *fl, struct chrec *recs,
          unsigned k)
{
  struct chrec *rc = &recs[k];
  uint32_t li = rc->target;
  struct ff_lv *t = &vg->lvs[li];

  if (t->kind != FF_LVK_STRIPED && t->kind != FF_LVK_THIN)
    return ff_fb_err(b, ch->line, cp,
                     "LV %s: not supported yet: lvremove of a %s LV (the "
                     "farm removes linear, striped and thin LVs)",
                     t->name, lv_type_name(t));
  for (uint32_t u = 0; u < vg->nlvs; u++) {
    const struct ff_lv *o = &vg->lvs[u];
    const char *use = NULL;

    if (o->f.removed || u == li)
      continue;
    if (o->kind == FF_LVK_THIN && o->ext_origin == li + 1)
      use = "is the external origin of thin LV";
    else if (o->kind == FF_LVK_SNAPSHOT && o->link == li)
      use = "is the origin of snapshot";
    else if ((o->kind == FF_LVK_CACHE || o->kind == FF_LVK_WRITECACHE ||
              o->kind == FF_LVK_CACHEVOL) &&
             o->link == li)
      use = "is used by";
    if (use)
      return ff_fb_err(b, ch->line, cp,
                       "LV %s: not supported yet: it %s %s (lvremove would "
                       "remove that too; remove it first)",
                       t->name, use, o->name);
  }
  if (ch->has_write_times && t->kind != FF_LVK_THIN)
    return ff_fb_err(b, ch->line, cp,
                     "LV %s: write_times: lvremove of a %s LV writes once "
                     "(give time)",
                     t->name, lv_type_name(t));
  rc->lv = li;
  rc->mseg = t->nsegs ? t->nsegs - 1 : 0;
  if (lv_save(b, t, rc->mseg, &rc->was) < 0)
    return -1;
  t->f.removed = 1;
  if (lv_save(b, t, rc->mseg, &rc->is) < 0)
    return -1;
  if (t->kind == FF_LVK_THIN) {
    rc->writes = 2;
    /* _set_up_historical_lv, then _handle_historical_lvs: the historical
     * LV stays only while it has a live descendant, which for the farm's
     * thin trees (an origin and at most one snapshot) is the origin's
     * snapshot */
    for (uint32_t u = 0; ch->history && u < vg->nlvs; u++)
      if (!vg->lvs[u].f.removed && vg->lvs[u].kind == FF_LVK_THIN &&
          vg->lvs[u].thin_origin == li + 1)
        rc->hist_desc = u;
    return 0;
  }
  for (uint32_t s = 0; s < t->nsegs; s++) {
    const struct ff_seg *sg = &t->segs[s];

    for (uint32_t a = 0; a < sg->stripes; a++)
      if (ff_fb_free_give(&fl[sg->areas[a].pv], sg->areas[a].pe,
                          sg->len / sg->stripes) < 0)
        return -1;
  }
  return 0;
}

/* pvmove PV [DEST...] (tools/pvmove.c _set_up_pvmove_lv,
 * lib/metadata/mirror.c add_mirrors_to_segments), as lvm leaves it
 * stopped before a segment finished: pvmove0 (the VG's last LV slot) gets
 * one segment per LV segment on PV, in the LVs' order, each a mirror of
 * it and of extents allocated, by the VG's policy, on the destinations
 * (a segment split where the allocated areas end); the LVs' segments
 * point into pvmove0.  The farm moves linear segments of linear and
 * striped LVs; what else is on the PV is refused. */
static int
pvmove(struct bctx *b, const struct ff_spec_change *ch, const char *cp,
       struct ff_vg *vg, struct freelist *fl, struct chrec *rc, int last)
{
  struct ff_lv *pm = &vg->lvs[vg->nlvs - 1], tmp = {.name = pm->name};
  uint32_t src = ch->pv, n = 0;
  uint64_t total = 0, le = 0, avail;
  uint8_t *use;
  int r;

  if (!last)
    return ff_fb_err(b, ch->line, cp,
                     "not supported yet: changes after a pvmove (the farm "
                     "makes the pvmove as lvm leaves it interrupted: give it "
                     "last)");
  for (uint32_t l = 0; l + 1 < vg->nlvs; l++) {
    const struct ff_lv *lv = &vg->lvs[l];

    for (uint32_t s = 0; !lv->f.removed && s < lv->nsegs; s++)
      for (uint32_t i = 0; lv->segs[s].areas && i < lv->segs[s].stripes; i++) {
        if (lv->segs[s].areas[i].pv != src)
          continue;
        if (lv->kind != FF_LVK_STRIPED || lv->segs[s].stripes != 1)
          return ff_fb_err(b, ch->line, cp,
                           "not supported yet: pvmove of PV %u, which LV "
                           "%s (%s) uses (the farm moves linear segments)",
                           src, lv->name,
                           lv->segtype ? lv->segtype : "striped");
        n++;
        total += lv->segs[s].len;
      }
    for (uint32_t u = 0; !lv->f.removed && u < lv->nsubs; u++)
      for (uint32_t s = 0; s < lv->subs[u].nsegs; s++)
        for (uint32_t i = 0; i < lv->subs[u].segs[s].stripes; i++)
          if (lv->subs[u].segs[s].areas[i].pv == src)
            return ff_fb_err(b, ch->line, cp,
                             "not supported yet: pvmove of PV %u, which %s "
                             "of LV %s uses (the farm moves linear "
                             "segments)",
                             src, lv->subs[u].name, lv->name);
  }
  if (!n)
    return ff_fb_err(b, ch->line, cp,
                     "lvm refuses it: No data to move for %s.", vg->name);
  /* the new leg, segment by segment (the allocation keeps to pvmove0's
   * segments: a segment that takes several areas is split, in pvmove0
   * and in its LV), on the destinations, by the VG's policy */
  if (!(use = calloc(vg->npvs, 1)))
    return ff_error("out of memory");
  for (uint32_t p = 0; p < vg->npvs; p++)
    use[p] = (uint8_t)(p != src && !ch->nto);
  for (unsigned t = 0; t < ch->nto; t++)
    use[ch->to[t]] = 1;
  if ((avail = ff_fb_free_on(vg, fl, use)) < total) {
    free(use);
    return ff_fb_err(b, ch->line, cp,
                     "lvm refuses it: Insufficient free space: %llu extents "
                     "needed, but only %llu available (on the destination "
                     "PVs)",
                     (unsigned long long)total, (unsigned long long)avail);
  }
  r = 0;
  for (uint32_t l = 0; r == 0 && l + 1 < vg->nlvs; l++) {
    const struct ff_lv *lv = &vg->lvs[l];

    for (uint32_t s = 0; r == 0 && !lv->f.removed && s < lv->nsegs; s++) {
      const struct ff_seg *sg = &lv->segs[s];
      uint64_t done = 0;
      struct ff_seg *ns;

      if (!sg->areas || sg->areas[0].pv != src)
        continue;
      for (uint32_t t = 0; t < tmp.nsegs; t++)
        free(tmp.segs[t].areas);
      free(tmp.segs);
      tmp.segs = NULL;
      tmp.nsegs = 0;
      tmp.extents = sg->len;
      if ((r = ff_fb_allocate_on(b, ch->line, cp, vg, fl, &tmp, use)) < 0)
        break;
      if (!(ns = realloc(pm->segs, (pm->nsegs + tmp.nsegs) * sizeof *ns))) {
        r = ff_error("out of memory");
        break;
      }
      pm->segs = ns;
      for (uint32_t t = 0; t < tmp.nsegs; t++) {
        struct ff_seg *ps = &pm->segs[pm->nsegs];

        if (!(ps->areas = calloc(2, sizeof *ps->areas))) {
          r = ff_error("out of memory");
          break;
        }
        pm->nsegs++;
        ps->le = le;
        ps->len = tmp.segs[t].len;
        ps->stripes = 2; /* (the mirror's two legs) */
        ps->areas[0] = (struct ff_area){src, sg->areas[0].pe + done};
        ps->areas[1] = tmp.segs[t].areas[0];
        le += ps->len;
        done += ps->len;
      }
    }
  }
  free(use);
  if (r < 0)
    goto out;
  pm->extents = total;
  pm->link = src;
  pm->region_size = ff_fb_mirror_region(vg, total);
  if (ch->uuid)
    memcpy(pm->uuid, ch->uuid, FF_UUID_LEN);
  rc->lv = vg->nlvs - 1;
  rc->mseg = 0;
  if (lv_save(b, pm, 0, &rc->was) < 0)
    goto out;
  pm->f.removed = 0;
  r = lv_save(b, pm, 0, &rc->is);
out:
  for (uint32_t s = 0; s < tmp.nsegs; s++)
    free(tmp.segs[s].areas);
  free(tmp.segs);
  return r < 0 ? -1 : 0;
}

/* (ff-farm-int.h) */
int
ff_fb_apply_changes(struct bctx *b, const struct ff_spec_vg *g,
                    struct ff_vg *vg, const char *path, struct freelist *fl,
                    struct chrec *recs)
{
  for (unsigned k = 0; k < g->nchanges; k++) {
    const struct ff_spec_change *ch = &g->changes[k];
    struct chrec *rc = &recs[k];
    struct ff_lv *t = NULL;
    int lvflags = ch->set_perm || ch->set_skip || ch->set_ra || ch->set_minor;
    uint32_t li = 0;
    char cp[96];

    rc->target = rc->lv = rc->hist_desc = FF_NONE;
    rc->pv = -1;
    rc->writes = 1;
    if (snprintf(cp, sizeof cp, "%s.changes.[%u]", path, k) < 0)
      cp[0] = '\0';
    if (ch->lv) {
      if (!(t = ff_fb_find_lv(vg, vg->nlvs, ch->lv)))
        return ff_fb_err(b, ch->line, cp, "lv '%s': VG %s has no such LV",
                         ch->lv, vg->name);
      rc->target = li = (uint32_t)(t - vg->lvs);
    }
    switch (ch->cmd) {
    case FF_CHG_CACHE:
      if ((ch->cachevol ? ff_fb_attach_cachevol(
                            b, ch->line, cp, vg, li, vg->nlvs, ch->cachevol,
                            NULL, ch->cache_mode, ch->cache_policy, ch->uuid)
                        : ff_fb_attach_cache(b, ch->line, cp, vg, li, vg->nlvs,
                                             ch->pool, ch->cache_mode,
                                             ch->cache_policy, ch->uuid)) < 0)
        return -1;
      continue;
    case FF_CHG_WRITECACHE:
      if (ff_fb_attach_cachevol(b, ch->line, cp, vg, li, vg->nlvs,
                                ch->cachevol, &ch->wc, 0, 0, ch->uuid) < 0)
        return -1;
      continue;
    case FF_CHG_VG:
      if (ch->resizeable < 0)
        break;
      if (vg->unresizeable == !ch->resizeable)
        return ff_fb_err(b, ch->line, cp,
                         "lvm refuses it: Volume group \"%s\" is already "
                         "%sresizeable",
                         vg->name, ch->resizeable ? "" : "not ");
      rc->vg = 1;
      rc->vg_was = vg->unresizeable;
      rc->vg_is = vg->unresizeable = (uint8_t)!ch->resizeable;
      break;
    case FF_CHG_PV:
      if (ch->allocatable < 0)
        break;
      if (vg->pvs[ch->pv].unalloc == !ch->allocatable && !ch->addtag &&
          !ch->deltag)
        return ff_fb_err(b, ch->line, cp,
                         "changes nothing: lvm says Physical volume \"%s\" "
                         "is already %sallocatable. and writes nothing",
                         vg->pvs[ch->pv].hint, ch->allocatable ? "" : "un");
      rc->pv = (int)ch->pv;
      rc->pv_was = vg->pvs[ch->pv].unalloc;
      rc->pv_is = vg->pvs[ch->pv].unalloc = (uint8_t)!ch->allocatable;
      break;
    default:
      break;
    }
    if (ch->cmd == FF_CHG_REMOVE) {
      if (remove_lv(b, ch, cp, vg, fl, recs, k) < 0)
        return -1;
      continue;
    }
    if (ch->cmd == FF_CHG_PVMOVE) {
      if (pvmove(b, ch, cp, vg, fl, rc, k + 1 == g->nchanges) < 0)
        return -1;
      continue;
    }
    if ((ch->cmd == FF_CHG_LV && lvflags) || ch->cmd == FF_CHG_RENAME ||
        ch->cmd == FF_CHG_EXTEND) {
      static const char *const what[] = {[FF_CHG_LV] =
                                           "lvchange -p, -k, -r or --minor",
                                         [FF_CHG_RENAME] = "lvrename",
                                         [FF_CHG_EXTEND] = "lvextend"};

      if (t->kind != FF_LVK_STRIPED)
        return ff_fb_err(b, ch->line, cp,
                         "LV %s: not supported yet: %s of a %s LV (the farm "
                         "changes linear and striped LVs)",
                         t->name, what[ch->cmd], lv_type_name(t));
      rc->lv = li;
      rc->mseg = t->nsegs ? t->nsegs - 1 : 0;
      if (lv_save(b, t, rc->mseg, &rc->was) < 0)
        return -1;
    }
    if (ch->cmd == FF_CHG_LV && lvflags) {
      if (ch->set_perm && t->f.readonly == ch->readonly)
        return ff_fb_err(b, ch->line, cp,
                         ch->readonly ? "lvm refuses it: Logical volume "
                                        "\"%s/%s\" is already read only."
                                      : "lvm refuses it: Logical volume %s/%s "
                                        "is already writable.",
                         vg->name, t->name);
      if (ch->set_perm)
        t->f.readonly = (uint8_t)ch->readonly;
      if (ch->set_skip)
        t->f.act_skip = (uint8_t)ch->act_skip;
      if (ch->set_ra)
        t->f.read_ahead = ch->read_ahead;
      if (ch->set_minor) {
        t->f.fixed_minor = 1;
        t->f.major = ch->major;
        t->f.minor = ch->minor;
      }
      if (!ch->addtag && !ch->deltag && t->f.act_skip == rc->was.f.act_skip &&
          t->f.read_ahead == rc->was.f.read_ahead &&
          t->f.fixed_minor == rc->was.f.fixed_minor &&
          t->f.minor == rc->was.f.minor && t->f.major == rc->was.f.major &&
          !ch->set_perm)
        return ff_fb_err(b, ch->line, cp,
                         "changes nothing: LV %s already is as asked (lvm "
                         "writes no metadata then)",
                         t->name);
    } else if (ch->cmd == FF_CHG_RENAME) {
      char *name;

      if (ff_fb_check_lv_name(b, ch->line, cp, vg, li, ch->new_name, 1) < 0)
        return -1;
      for (unsigned h = 0; h < k; h++)
        if (recs[h].hist_desc != FF_NONE &&
            !vg->lvs[recs[h].hist_desc].f.removed &&
            !strcmp(recs[h].was.name, ch->new_name))
          return ff_fb_err(b, ch->line, cp,
                           "lvm refuses it: Historical Logical Volume \"%s\" "
                           "already exists in volume group \"%s\"",
                           ch->new_name, vg->name);
      if (!(name = strdup(ch->new_name)))
        return ff_error("out of memory");
      free(t->name);
      t->name = name;
    } else if (ch->cmd == FF_CHG_EXTEND) {
      uint64_t ext = (ch->size + vg->extent_size - 1) / vg->extent_size;
      uint32_t st = t->segs[t->nsegs - 1].stripes;
      enum ff_alloc_policy pol = FF_ALLOC_INHERIT;

      if (ext == t->extents)
        return ff_fb_err(b, ch->line, cp,
                         "lvm refuses it: New size (%llu extents) matches "
                         "existing size (%llu extents).",
                         (unsigned long long)ext,
                         (unsigned long long)t->extents);
      if (ext < t->extents)
        return ff_fb_err(b, ch->line, cp,
                         "lvm refuses it: New size given (%llu extents) not "
                         "larger than existing size (%llu extents)",
                         (unsigned long long)ext,
                         (unsigned long long)t->extents);
      /* lvresize: "Rounding size (N extents) up to stripe boundary size
       * for segment (M extents)." */
      ext = t->extents + ff_fb_round_up(ext - t->extents, st);
      for (int p = 0; t->alloc && p <= FF_ALLOC_ANYWHERE; p++)
        if (!strcmp(t->alloc, ff_fb_policy_names[p]))
          pol = (enum ff_alloc_policy)p;
      if (ff_fb_lvm_extend(b, ch->line, cp, vg, fl, t, ext, pol) < 0)
        return -1;
      t->segs_built = t->nsegs;
    }
    if (rc->lv != FF_NONE && lv_save(b, t, rc->mseg, &rc->is) < 0)
      return -1;
  }
  for (unsigned k = g->nchanges; k-- > 0;)
    if (ff_fb_rec_apply(vg, &recs[k], 0) < 0)
      return -1;
  return 0;
}
