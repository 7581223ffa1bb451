/* fusefarm: building a farm from a spec (see ff-farm.h for the
 * invariants and the thread model): the devices, the VGs with their PV
 * and LV tables, the LVs one lvcreate after another, every metadata
 * write of each VG and its placement in the metadata areas, the checks
 * that the result is one lvm would accept.  How each kind of LV is laid
 * out is in the files of lvm2's lib/metadata split (ff-farm-int.h):
 * ff-farm-alloc.c (lv_manip.c, pv_map.c), ff-farm-mirror.c (mirror.c,
 * raid_manip.c), ff-farm-pool.c (pool_manip.c, thin_manip.c,
 * cache_manip.c), ff-farm-snap.c (snapshot_manip.c).  Serving the built
 * farm's bytes is ff-farm-read.c; the layout both share is ff-farm-int.h.
 */
#include "ff-farm-int.h"
#include "ff-crc.h"
#include "ff-error.h"
#include "ff-lvmtext-int.h"
#include "ff-pvlayout-int.h"
#include "ff-thinmeta.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const role_names[] = {
  [FF_ROLE_PV] = "pv",
  [FF_ROLE_ORPHAN] = "orphan",
  [FF_ROLE_BLANK] = "blank",
  [FF_ROLE_SIGNATURE] = "signature",
  [FF_ROLE_DUPLICATE] = "duplicate",
};

const char *
ff_role_name(enum ff_role r)
{
  return (unsigned)r < 5 ? role_names[r] : "?";
}

uint64_t
ff_mda_max_text(uint64_t mda_size)
{
  return mda_size < 2048 ? 0 : (mda_size - 512) / 2 - 512;
}

int
ff_pvfmt_layout(const struct ff_spec_pvfmt *s, uint64_t disk,
                struct ff_pvfmt *f)
{
  const uint64_t a = s->dataalignment, o = s->dataalignmentoffset;
  uint64_t start = FF_MDA0_START, size, limit, adj, tmp;

  f->mda_copies = s->mda_copies;
  f->label_sector = s->label_sector;
  f->ba_start = f->ba_size = 0;
  if (s->legacy) {
    /* as given; mda1 of mda0's size, 1 MiB-aligned */
    f->pe_start = s->pe_start;
    f->mda_size = f->mda1_size = s->mda_size;
    f->align = 1u << 20;
    return 0;
  }
  f->align = a;
  f->mda1_size = s->metadatasize;
  if (disk < a + o || disk - (a + o) < s->bootloaderareasize)
    return ff_error("device_size %llu is smaller than dataalignment %llu + "
                    "dataalignmentoffset %llu + bootloaderareasize %llu",
                    (unsigned long long)disk, (unsigned long long)a,
                    (unsigned long long)o,
                    (unsigned long long)s->bootloaderareasize);
  /* pv_initialise: the bootloader area, rounded up to the alignment */
  if (s->bootloaderareasize) {
    f->ba_size = s->bootloaderareasize;
    if ((adj = f->ba_size % a))
      f->ba_size += a - adj;
    if (disk < a + o + f->ba_size)
      f->ba_size = disk - (a + o);
  }
  /* --pvmetadatacopies 0: no mda0, pe_start is the alignment (plus the
   * offset), then the bootloader area (pv_initialise) */
  if (s->mda_copies == 0) {
    f->mda_size = 0;
    f->pe_start = a + o;
    if (f->ba_size) {
      f->ba_start = f->pe_start;
      f->pe_start += f->ba_size;
    }
    return 0;
  }
  /* mda0 at 4096; its end aligned up to the alignment (plus the offset)
   * where that fits before the bootloader area, or the device's end */
  limit = disk - f->ba_size;
  if (limit < start + 32768)
    return ff_error("device_size %llu leaves no room for mda0 (4096 + 32 KiB) "
                    "before the bootloader area of %llu",
                    (unsigned long long)disk, (unsigned long long)f->ba_size);
  size = s->metadatasize;
  if ((adj = (start + size) % a)) {
    tmp = size + a - adj;
    if (start + tmp <= limit)
      size = tmp;
  }
  if (o && (start + size) % a == 0 && start + size + o <= limit)
    size += o;
  if (start + size > limit) {
    if (limit - start > a * 2) {
      size = limit - start - a * 2;
      if ((adj = (start + size) % a))
        size += a - adj;
      if (start + size > limit)
        return ff_error("mda0 of metadatasize %llu does not fit a device of "
                        "%llu",
                        (unsigned long long)s->metadatasize,
                        (unsigned long long)disk);
    } else
      size = limit - start;
  }
  f->mda_size = size;
  f->pe_start = start + size;
  if (f->ba_size) {
    f->ba_start = f->pe_start;
    f->pe_start += f->ba_size;
  }
  return 0;
}

void
ff_mda1_place(const struct ff_pvfmt *fmt, uint64_t disk, uint64_t *start,
              uint64_t *size)
{
  /* lvm's placement at the device's end (format-text.c): the requested
   * size, its start aligned down to the data alignment if that leaves it
   * after pe_start, else all that is left after pe_start */
  uint64_t limit = fmt->pe_start, m = fmt->mda1_size, adj, tmp;

  *start = *size = 0;
  if (fmt->mda_copies < 2 || limit >= disk)
    return;
  if (m > disk)
    m = disk - limit;
  if (disk - m < limit)
    m = disk - limit;
  else if (fmt->align && (adj = (disk - m) % fmt->align)) {
    tmp = m + adj;
    if (tmp < disk && disk - tmp >= limit)
      m = tmp;
  }
  if (m < 32768) /* lvm: "Metadata area size too small" */
    return;
  *start = disk - m;
  *size = m;
}

static const char *const sub_role_names[] = {
  [FF_SUB_NONE] = "lv",           [FF_SUB_RIMAGE] = "rimage",
  [FF_SUB_RMETA] = "rmeta",       [FF_SUB_MIMAGE] = "mimage",
  [FF_SUB_MLOG] = "mlog",         [FF_SUB_PMSPARE] = "pmspare",
  [FF_SUB_TMETA] = "tmeta",       [FF_SUB_TDATA] = "tdata",
  [FF_SUB_SNAPSHOT] = "snapshot", [FF_SUB_CMETA] = "cmeta",
  [FF_SUB_CDATA] = "cdata",       [FF_SUB_CORIG] = "corig",
  [FF_SUB_IMETA] = "imeta",       [FF_SUB_IORIG] = "iorig",
};

const char *
ff_sub_role_name(enum ff_sub_role r)
{
  return (unsigned)r <= FF_SUB_IORIG ? sub_role_names[r] : "?";
}

/* ---- building ---------------------------------------------------------- */

/* (ff-farm-int.h) */
const char *
ff_fb_keep(struct ff_farm *farm, const char *s)
{
  char *c;

  if (!s)
    return NULL;
  if (farm->npool == farm->pool_cap) {
    uint32_t cap = farm->pool_cap ? farm->pool_cap * 2 : 16;
    char **p = realloc(farm->pool, cap * sizeof *p);

    if (!p) {
      ff_error("out of memory");
      return NULL;
    }
    farm->pool = p;
    farm->pool_cap = cap;
  }
  if (!(c = strdup(s))) {
    ff_error("out of memory");
    return NULL;
  }
  farm->pool[farm->npool++] = c;
  return c;
}

/* "file:line: path: message" for a group of the spec. */
__attribute__((format(printf, 4, 5))) int
ff_fb_err(const struct bctx *b, int line, const char *path, const char *fmt,
          ...)
{
  char msg[768];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ff_error("%s:%d: %s: %s", b->spec->file, line, path, msg);
}

static struct ff_device *
new_device(struct bctx *b, char *const *names, unsigned k, uint64_t size,
           enum ff_role role)
{
  struct ff_device *dev = b->out ? &b->scratch : &b->farm->devs[b->d];

  if (b->out) {
    /* built again: the farm has its name and fields already */
    memset(dev, 0, sizeof *dev);
  } else {
    dev->name =
      names ? strdup(names[k]) : ff_format_uint(b->spec->device_name, b->d);
    if (!dev->name) {
      ff_error("out of memory");
      return NULL;
    }
  }
  dev->size = size;
  dev->role = (uint8_t)role;
  dev->vg = dev->pv = dev->alias = dev->fmt = FF_NONE;
  b->d++;
  return dev;
}

int
ff_fb_add_blob(struct ff_vg *vg, uint32_t pv, uint64_t off, uint64_t len,
               uint8_t fill, const uint8_t *bytes)
{
  struct ff_blob *n = realloc(vg->blobs, (vg->nblobs + 1) * sizeof *n);

  if (!n)
    return ff_error("out of memory");
  vg->blobs = n;
  n[vg->nblobs++] = (struct ff_blob){pv, off, len, fill, bytes};
  return 0;
}

static int lv_writes_meta(const struct ff_spec_lv *sl, const struct ff_vg *vg,
                          struct ff_lv *lv);

/* lvm-string.c _lvname_has_reserved_string: in lvm's order (the first
 * found is the one lvm names) */
static const char *const reserved_parts[] = {
  "_cdata",  "_cmeta", "_corig",  "_cpool",   "_cvol",    "_wcorig",
  "_mimage", "_mlog",  "_rimage", "_rmeta",   "_tdata",   "_tmeta",
  "_vdata",  "_imeta", "_iorig",  "_pmspare", "_vorigin", NULL};

/* Is name one lvcreate (taken, the LVs before li) or lvrename (taken:
 * every other LV) accepts in vg?  0, or -1 with lvm's refusal. */
int
ff_fb_check_lv_name(struct bctx *b, int line, const char *path,
                    const struct ff_vg *vg, uint32_t li, const char *name,
                    int rename)
{
  if (!ff_valid_lvm_name(name))
    return ff_fb_err(b, line, path, "'%s' is not a valid LV name", name);
  /* the sub-LV names (lvm refuses these in any LV name) */
  for (const char *const *rp = reserved_parts; *rp; rp++)
    if (strstr(name, *rp))
      return ff_fb_err(b, line, path,
                       "LV name '%s': lvm refuses it: Names including \"%s\" "
                       "are reserved",
                       name, *rp);
  if (!strncmp(name, "snapshot", 8) || !strncmp(name, "pvmove", 6))
    return ff_fb_err(b, line, path,
                     "LV name '%s': lvm refuses it: Names starting \"%s\" "
                     "are reserved",
                     name, name[0] == 's' ? "snapshot" : "pvmove");
  for (uint32_t o = 0; o < (rename ? vg->nlvs : li); o++) {
    const struct ff_lv *x = &vg->lvs[o];

    if (x->f.removed || strcmp(x->name, name))
      continue;
    if (rename)
      return ff_fb_err(b, line, path,
                       "lvm refuses it: Logical Volume \"%s\" already "
                       "exists in volume group \"%s\"",
                       name, vg->name);
    return ff_fb_err(b, line, path, "LV name '%s' is used twice in VG %s",
                     name, vg->name);
  }
  return 0;
}

/* Lay out the LVs of vg on its PVs, one lvcreate after another, then the
 * changes (apply_changes). */
static int
allocate_lvs(struct bctx *b, const struct ff_spec_vg *g, struct ff_vg *vg,
             const char *path, struct chrec *recs)
{
  struct freelist *fl;
  uint64_t total = 0;
  uint32_t li = 0;
  int r = -1;

  fl = calloc(vg->npvs, sizeof *fl);
  if (!fl)
    return ff_error("out of memory");
  for (uint32_t p = 0; p < vg->npvs; p++) {
    total += vg->pvs[p].pe_count;
    if (vg->pvs[p].pe_count) {
      fl[p].runs = calloc(1, sizeof *fl[p].runs);
      if (!fl[p].runs) {
        ff_error("out of memory");
        goto out;
      }
      fl[p].n = fl[p].cap = 1;
      fl[p].runs[0].count = vg->pvs[p].pe_count;
    }
  }
  for (unsigned gi = 0; gi < g->nlvs; gi++) {
    const struct ff_spec_lv *sl = &g->lvs[gi];
    char lp[96];

    if (snprintf(lp, sizeof lp, "%s.lvs.[%u]", path, gi) < 0)
      lp[0] = '\0';
    for (unsigned k = 0; k < sl->count; k++, li++) {
      struct ff_lv *lv = &vg->lvs[li];
      uint64_t ext, ssize;

      lv->name = ff_format_uint(sl->name, li);
      if (!lv->name) {
        ff_error("out of memory");
        goto out;
      }
      if (ff_fb_check_lv_name(b, sl->line, lp, vg, li, lv->name, 0) < 0)
        goto out;
      if (sl->uuid)
        memcpy(lv->uuid, sl->uuid, FF_UUID_LEN);
      else
        ff_uuid_make(lv->uuid, b->spec->seed, K_LV, b->v, li);
      lv->time = sl->has_time  ? sl->time
                 : g->has_time ? g->time
                               : b->spec->creation_time;

      if (sl->nplace) {
        ext = 0;
        for (unsigned i = 0; i < sl->nplace; i++) {
          const struct ff_spec_range *rg = &sl->place[i * sl->stripes];

          ext += (rg->last - rg->first + 1) * sl->stripes;
        }
      } else if (sl->kind == FF_LVK_THIN && sl->origin) {
        /* a thin snapshot or a thin LV of an external origin: the origin's
         * size (ff_fb_make_thin checks it) */
        const struct ff_lv *o = ff_fb_find_lv(vg, li, sl->origin);

        ext = o ? o->extents : 1;
      } else if (sl->size) {
        ext = (sl->size + vg->extent_size - 1) / vg->extent_size;
        ext = (ext + sl->stripes - 1) / sl->stripes * sl->stripes;
      } else {
        ext = (uint64_t)(sl->fill * (double)total);
        ext = ext / sl->stripes * sl->stripes;
      }
      if (ext == 0) {
        ff_fb_err(
          b, sl->line, lp,
          "LV %s would have no extents (VG %s has %llu extents of %llu "
          "bytes)",
          lv->name, vg->name, (unsigned long long)total,
          (unsigned long long)vg->extent_size);
        goto out;
      }
      lv->extents = ext;
      if (sl->alloc != FF_ALLOC_INHERIT)
        lv->alloc = ff_fb_policy_names[sl->alloc];
      lv->f.readonly = (uint8_t)sl->readonly;
      lv->f.act_skip = (uint8_t)sl->activation_skip;
      lv->f.read_ahead = sl->read_ahead;
      lv->f.fixed_minor = (uint8_t)sl->fixed_minor;
      lv->f.major = sl->major;
      lv->f.minor = sl->minor;
      /* lvcreate: "Reducing requested stripe size … to maximum,
       * physical extent size" */
      ssize =
        sl->stripe_size < vg->extent_size ? sl->stripe_size : vg->extent_size;
      if (sl->kind == FF_LVK_THIN_POOL || sl->kind == FF_LVK_CACHE_POOL) {
        if (ff_fb_allocate_pool(b, sl, lp, vg, fl, li) < 0)
          goto out;
      } else if (sl->kind == FF_LVK_CACHE || sl->kind == FF_LVK_WRITECACHE) {
        if (ff_fb_lvm_allocate(b, sl->line, lp, vg, fl, lv, 1, 0, sl->alloc, 0,
                               NULL) < 0 ||
            (sl->cachevol
               ? ff_fb_attach_cachevol(
                   b, sl->line, lp, vg, li, li, sl->cachevol,
                   sl->kind == FF_LVK_WRITECACHE ? &sl->wc : NULL,
                   sl->cache_mode, sl->cache_policy,
                   sl->uuids ? sl->uuids[0] : NULL)
               : ff_fb_attach_cache(b, sl->line, lp, vg, li, li, sl->pool,
                                    sl->cache_mode, sl->cache_policy,
                                    sl->uuids ? sl->uuids[0] : NULL)) < 0)
          goto out;
      } else if (sl->kind == FF_LVK_THIN) {
        if (ff_fb_make_thin(b, sl, lp, vg, li) < 0)
          goto out;
      } else if (sl->kind == FF_LVK_SNAPSHOT) {
        if (ff_fb_allocate_snapshot(b, sl, lp, vg, fl, li) < 0)
          goto out;
      } else if (sl->kind != FF_LVK_STRIPED) {
        if (ff_fb_allocate_mirror_raid(b, sl, lp, vg, fl, li) < 0)
          goto out;
      } else if (sl->nplace ? ff_fb_place_lv(b, sl, lp, vg, fl, li, ssize)
                            : ff_fb_lvm_allocate(b, sl->line, lp, vg, fl, lv,
                                                 sl->stripes, ssize, sl->alloc,
                                                 0, NULL))
        goto out;
      if (!lv->writes) /* (a pool's: whether it makes the spare) */
        lv->writes = (uint8_t)ff_spec_lv_writes(sl);
      if (lv_writes_meta(sl, vg, lv) < 0)
        goto out;
      /* a sub-LV made for a later write has that write's time (lvm:
       * lv_create_empty just before it) */
      for (uint32_t u = 0; u < lv->nsubs; u++) {
        struct ff_lv *sub = &lv->subs[u];

        if (sub->role == FF_SUB_PMSPARE)
          sub->time = lv->wtime[0];
        else if (sub->role == FF_SUB_TMETA || sub->role == FF_SUB_TDATA ||
                 sub->role == FF_SUB_CMETA || sub->role == FF_SUB_CDATA ||
                 sub->role == FF_SUB_SNAPSHOT || sub->role == FF_SUB_CORIG)
          sub->time = lv->wtime[lv->writes - 1];
        else if (sub->role == FF_SUB_IMETA) /* its own lvcreate's */
          sub->time = ff_fb_wtime(lv, 2 + u - 2 * lv->images);
        else if (sub->role == FF_SUB_IORIG) /* the layers' write */
          sub->time = ff_fb_wtime(lv, lv->images + 2);
      }
    }
  }
  if (ff_fb_apply_changes(b, g, vg, path, fl, recs) < 0)
    goto out;
  if (ff_fb_thin_pool_images(b, vg, recs, g->nchanges) < 0)
    goto out;
  r = 0;
out:
  for (uint32_t p = 0; p < vg->npvs; p++)
    free(fl[p].runs);
  free(fl);
  return r;
}

static char *
default_vg_description(const struct ff_vg *vg, const char *host_id)
{
  struct ff_sb sb = FF_SB_INIT;

  ff_sb_add(&sb, "Write from vgcreate");
  /* the options that show in the text (the host's system ID is the
   * default) */
  if (vg->system_id && (!host_id || strcmp(vg->system_id, host_id)))
    ff_sb_addf(&sb, " --systemid %s", vg->system_id);
  else if (!vg->system_id && host_id)
    ff_sb_add(&sb, " --systemid \"\"");
  if (vg->max_lv)
    ff_sb_addf(&sb, " -l %u", vg->max_lv);
  if (vg->max_pv)
    ff_sb_addf(&sb, " -p %u", vg->max_pv);
  if (vg->alloc != FF_ALLOC_INHERIT && vg->alloc != FF_ALLOC_NORMAL)
    ff_sb_addf(&sb, " --alloc %s", ff_fb_policy_names[vg->alloc]);
  ff_sb_addf(&sb, " %s", vg->name);
  for (uint32_t p = 0; p < vg->npvs; p++)
    ff_sb_addf(&sb, " %s", vg->pvs[p].hint);
  ff_sb_add(&sb, ".");
  return ff_sb_detach(&sb, NULL);
}

static const char *const cache_mode_names[] = {"", "writethrough", "writeback",
                                               "passthrough"};
static const char *const cache_policy_names[] = {"", "smq", "mq"};

/* " --cachemode M --cachepolicy P", those given */
static void
add_cache_opts(struct ff_sb *sb, enum ff_cache_mode mode,
               enum ff_cache_policy policy)
{
  if (mode)
    ff_sb_addf(sb, " --cachemode %s", cache_mode_names[mode % 4]);
  if (policy)
    ff_sb_addf(sb, " --cachepolicy %s", cache_policy_names[policy % 3]);
}

static char *
default_lv_description(const struct ff_spec_lv *sl, const struct ff_vg *vg,
                       const struct ff_lv *lv)
{
  struct ff_sb sb = FF_SB_INIT;
  const struct ff_seg *seg = lv->nsegs ? &lv->segs[0] : NULL;

  ff_sb_add(&sb, "Write from lvcreate");
  if (lv->kind == FF_LVK_CACHE_POOL || lv->kind == FF_LVK_CACHE ||
      lv->kind == FF_LVK_WRITECACHE) {
    ff_sb_addf(&sb, " --type %s -l %llu", lv->segtype,
               (unsigned long long)lv->extents);
    if (sl->cachevol)
      ff_sb_addf(&sb, " --cachevol %s", sl->cachevol);
    if (sl->chunk_size)
      ff_sb_addf(&sb, " -c %lluk", (unsigned long long)(sl->chunk_size >> 10));
    if (sl->metadata_size)
      ff_sb_addf(&sb, " --poolmetadatasize %lluk",
                 (unsigned long long)(sl->metadata_size >> 10));
    add_cache_opts(&sb, sl->cache_mode, sl->cache_policy);
    for (char **e = sl->cachesettings; e && *e; e++)
      ff_sb_addf(&sb, " --cachesettings %s", *e);
    if (lv->kind == FF_LVK_CACHE_POOL && !sl->pmspare)
      ff_sb_add(&sb, " --poolmetadataspare n");
    ff_sb_addf(&sb, " -n %s", lv->name);
    if (lv->kind == FF_LVK_CACHE && !sl->cachevol)
      ff_sb_addf(&sb, " --cachepool %s/%s", vg->name, sl->pool);
    ff_sb_addf(&sb, " %s.", vg->name);
    return ff_sb_detach(&sb, NULL);
  }
  if (lv->kind == FF_LVK_THIN_POOL) {
    ff_sb_addf(&sb, " --type thin-pool -l %llu",
               (unsigned long long)lv->extents);
    if (sl->stripes > 1)
      ff_sb_addf(&sb, " -i %u -I %lluk", sl->stripes,
                 (unsigned long long)(sl->stripe_size >> 10));
    if (sl->chunk_size)
      ff_sb_addf(&sb, " -c %lluk", (unsigned long long)(sl->chunk_size >> 10));
    if (sl->metadata_size)
      ff_sb_addf(&sb, " --poolmetadatasize %lluk",
                 (unsigned long long)(sl->metadata_size >> 10));
    if (!sl->zero)
      ff_sb_add(&sb, " -Zn");
    if (sl->discards)
      ff_sb_addf(&sb, " --discards %s",
                 sl->discards == FF_DISCARDS_NOPASSDOWN ? "nopassdown"
                                                        : "ignore");
    if (!sl->pmspare)
      ff_sb_add(&sb, " --poolmetadataspare n");
    ff_sb_addf(&sb, " -n %s %s.", lv->name, vg->name);
    return ff_sb_detach(&sb, NULL);
  }
  if (lv->thin_origin || lv->ext_origin) {
    /* a thin snapshot is skipped by default, a thin LV of an external
     * origin is not */
    uint32_t o = lv->thin_origin ? lv->thin_origin : lv->ext_origin;
    int skip = lv->thin_origin != 0;

    ff_sb_addf(&sb, " -s%s",
               lv->f.act_skip == skip ? ""
               : lv->f.act_skip       ? " -ky"
                                      : " -kn");
    if (!lv->thin_origin)
      ff_sb_addf(&sb, " --thinpool %s/%s", vg->name, vg->lvs[lv->link].name);
    ff_sb_addf(&sb, " -n %s %s/%s.", lv->name, vg->name, vg->lvs[o - 1].name);
    return ff_sb_detach(&sb, NULL);
  }
  if (lv->kind == FF_LVK_THIN || lv->kind == FF_LVK_SNAPSHOT) {
    if (lv->kind == FF_LVK_THIN)
      ff_sb_addf(&sb, " -T -V %lluk",
                 (unsigned long long)(lv->extents * vg->extent_size >> 10));
    else {
      ff_sb_addf(&sb, " -s -l %llu", (unsigned long long)lv->extents);
      if (sl->chunk_size != 4096)
        ff_sb_addf(&sb, " -c %lluk",
                   (unsigned long long)(sl->chunk_size >> 10));
    }
    ff_sb_addf(&sb, " -n %s %s/%s.", lv->name, vg->name,
               vg->lvs[lv->link].name);
    return ff_sb_detach(&sb, NULL);
  }
  if (lv->kind != FF_LVK_STRIPED) {
    ff_sb_addf(&sb, " --type %s", lv->segtype);
    if (lv->kind == FF_LVK_MIRROR || !strcmp(lv->segtype, "raid1"))
      ff_sb_addf(&sb, " -m %u", lv->images - 1);
    else if (lv->data_copies)
      ff_sb_addf(&sb, " -m %u", lv->data_copies - 1);
    if (lv->stripe_size)
      ff_sb_addf(&sb, " -i %u -I %lluk", lv->stripes,
                 (unsigned long long)(lv->stripe_size / 2));
    if (lv->kind == FF_LVK_MIRROR && lv->nsubs == lv->images)
      ff_sb_add(&sb, " --mirrorlog core");
    if (lv->nosync)
      ff_sb_add(&sb, " --nosync");
    if (lv->integrity)
      ff_sb_addf(&sb, " --raidintegrity y%s",
                 lv->integrity == 'B' ? " --raidintegritymode bitmap" : "");
    if (sl->alloc != FF_ALLOC_INHERIT)
      ff_sb_addf(&sb, " --alloc %s", lv->alloc);
  }
  ff_sb_addf(&sb, " -l %llu", (unsigned long long)lv->extents);
  if (lv->kind == FF_LVK_STRIPED && seg && seg->stripes > 1)
    ff_sb_addf(&sb, " -i %u -I %lluk", seg->stripes,
               (unsigned long long)(seg->stripe_size / 1024));
  if (lv->f.readonly)
    ff_sb_add(&sb, " -p r");
  if (lv->f.act_skip)
    ff_sb_add(&sb, " -ky");
  if (lv->f.read_ahead < 0)
    ff_sb_add(&sb, " -r none");
  else if (lv->f.read_ahead)
    ff_sb_addf(&sb, " -r %d", (int)lv->f.read_ahead);
  if (lv->f.fixed_minor)
    ff_sb_addf(&sb, " -My --minor %u", lv->f.minor);
  ff_sb_addf(&sb, " -n %s %s.", lv->name, vg->name);
  return ff_sb_detach(&sb, NULL);
}

/* The description of write N (1-based) of a command whose first write is
 * described as first: lvm's "Write from CMD." becomes "Write[N] from
 * CMD." (what lvm's commands that write more than once log), any other
 * text is kept as it is.  NULL when out of memory. */
static char *
nth_write_desc(const char *first, unsigned n)
{
  char *d = NULL;

  if (strncmp(first, "Write from ", 11))
    return strdup(first);
  if (asprintf(&d, "Write[%u] from %s", n, first + 11) < 0)
    return NULL;
  return d;
}

/* The time and description of each write lv's lvcreate makes: from
 * write_times/descriptions, else time and description (write 1), and for
 * write N the same with "Write[N] from" for "Write from". */
static int
lv_writes_meta(const struct ff_spec_lv *sl, const struct ff_vg *vg,
               struct ff_lv *lv)
{
  const char *d1 = sl->descriptions[0] ? sl->descriptions[0] : sl->description;

  for (unsigned w = 0; w < lv->writes && w < 3; w++)
    lv->wtime[w] = sl->has_write_times ? sl->write_times[w] : lv->time;
  if (lv->writes > 3) {
    if (!(lv->wtime_x = calloc(lv->writes, sizeof *lv->wtime_x)))
      return ff_error("out of memory");
    for (unsigned w = 0; w < lv->writes; w++)
      lv->wtime_x[w] = sl->has_write_times ? sl->write_times[w] : lv->time;
  }
  lv->wdesc[0] = d1 ? strdup(d1) : default_lv_description(sl, vg, lv);
  if (!lv->wdesc[0])
    return ff_error("out of memory");
  for (unsigned w = 1; w < lv->writes && w < 3; w++) {
    lv->wdesc[w] = sl->descriptions[w] ? strdup(sl->descriptions[w])
                                       : nth_write_desc(lv->wdesc[0], w + 1);
    if (!lv->wdesc[w])
      return ff_error("out of memory");
  }
  return 0;
}

/* Make the current copy unparsable while keeping it well framed: lvm
 * reads the VG name, then the config parser meets "{{". */
static int
break_text(struct ff_text *t)
{
  char *brace = strchr(t->buf, '{');
  char *nb;

  nb = malloc((size_t)t->size + 1);
  if (!brace || !nb) {
    free(nb);
    return ff_error("out of memory");
  }
  size_t pre = (size_t)(brace - t->buf) + 1;
  memcpy(nb, t->buf, pre);
  nb[pre] = '{';
  memcpy(nb + pre + 1, t->buf + pre, t->size - pre);
  free(t->buf);
  t->buf = nb;
  t->size++;
  return 0;
}

/* A list of tags as it changes write by write: pointers into the spec,
 * in the order lvm keeps them (an added tag goes last, a tag already
 * there is not added again), and that list as the text writes it. */
struct tagset {
  const char **v;
  unsigned n, cap;
  char *text; /* "[\"a\", \"b\"]", or NULL when empty */
};

static int
tagset_change(struct tagset *t, char *const *add, char *const *del)
{
  struct ff_sb sb = FF_SB_INIT;

  for (; add && *add; add++) {
    unsigned i = 0;

    while (i < t->n && strcmp(t->v[i], *add))
      i++;
    if (i < t->n)
      continue;
    if (t->n == t->cap) {
      unsigned cap = t->cap ? t->cap * 2 : 4;
      const char **v = realloc(t->v, cap * sizeof *v);

      if (!v)
        return ff_error("out of memory");
      t->v = v;
      t->cap = cap;
    }
    t->v[t->n++] = *add;
  }
  for (; del && *del; del++)
    for (unsigned i = 0; i < t->n; i++)
      if (!strcmp(t->v[i], *del)) {
        memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof *t->v);
        t->n--;
        break;
      }
  free(t->text);
  t->text = NULL;
  if (!t->n)
    return 0;
  ff_sb_add(&sb, "[");
  for (unsigned i = 0; i < t->n; i++)
    ff_sb_addf(&sb, "%s\"%s\"", i ? ", " : "", t->v[i]);
  ff_sb_add(&sb, "]");
  if (!(t->text = ff_sb_detach(&sb, NULL)))
    return ff_error("out of memory");
  return 0;
}

/* "Write from vgchange --addtag a --deltag b vg0." and the like: the
 * command line lvm records for a change (tags to add first). */
static char *
default_change_description(const struct ff_spec_change *ch,
                           const struct ff_vg *vg, const char *target)
{
  static const char *const cmd[] = {"vgchange",  "lvchange", "pvchange",
                                    "lvconvert", "lvrename", "lvextend",
                                    "lvconvert", "lvremove", "pvmove"};
  struct ff_sb sb = FF_SB_INIT;

  ff_sb_addf(&sb, "Write from %s", cmd[ch->cmd]);
  if (ch->cmd == FF_CHG_RENAME) {
    ff_sb_addf(&sb, " %s %s %s.", vg->name, target, ch->new_name);
    return ff_sb_detach(&sb, NULL);
  }
  if (ch->cmd == FF_CHG_EXTEND) {
    static const char units[] = "bKMGTPE";
    uint64_t v = ch->size;
    unsigned u = 0;

    while (u + 1 < sizeof units - 1 && v && v % 1024 == 0) {
      v /= 1024;
      u++;
    }
    ff_sb_addf(&sb, " -L %llu%c", (unsigned long long)v, units[u]);
  }
  if (ch->cmd == FF_CHG_WRITECACHE) {
    ff_sb_addf(&sb, " --type writecache --cachevol %s", ch->cachevol);
    for (char **e = ch->cachesettings; e && *e; e++)
      ff_sb_addf(&sb, " --cachesettings %s", *e);
  }
  if (ch->cmd == FF_CHG_CACHE) {
    ff_sb_add(&sb, " --type cache");
    add_cache_opts(&sb, ch->cache_mode, ch->cache_policy);
    if (ch->cachevol)
      ff_sb_addf(&sb, " --cachevol %s", ch->cachevol);
    else
      ff_sb_addf(&sb, " --cachepool %s/%s", vg->name, ch->pool);
  }
  if (ch->resizeable >= 0 || ch->allocatable >= 0)
    ff_sb_addf(&sb, " -x %s",
               (ch->resizeable >= 0 ? ch->resizeable : ch->allocatable) ? "y"
                                                                        : "n");
  if (ch->set_perm)
    ff_sb_addf(&sb, " -p %s", ch->readonly ? "r" : "rw");
  if (ch->set_skip)
    ff_sb_addf(&sb, " -k%s", ch->act_skip ? "y" : "n");
  if (ch->set_ra) {
    if (ch->read_ahead > 0)
      ff_sb_addf(&sb, " -r %d", (int)ch->read_ahead);
    else
      ff_sb_addf(&sb, " -r %s", ch->read_ahead ? "none" : "auto");
  }
  if (ch->set_minor)
    ff_sb_addf(&sb, " -My --minor %u", ch->minor);
  for (char **t = ch->addtag; t && *t; t++)
    ff_sb_addf(&sb, " --addtag %s", *t);
  for (char **t = ch->deltag; t && *t; t++)
    ff_sb_addf(&sb, " --deltag %s", *t);
  if (ch->cmd == FF_CHG_PVMOVE) {
    ff_sb_addf(&sb, " %s", vg->pvs[ch->pv].hint);
    for (unsigned i = 0; i < ch->nto; i++)
      ff_sb_addf(&sb, " %s", vg->pvs[ch->to[i]].hint);
    ff_sb_add(&sb, ".");
  } else if (ch->cmd == FF_CHG_VG || ch->cmd == FF_CHG_PV)
    ff_sb_addf(&sb, " %s.", target);
  else
    ff_sb_addf(&sb, " %s/%s.", vg->name, target);
  return ff_sb_detach(&sb, NULL);
}

/* Build every metadata write of vg, place it in both mdas, keep the
 * copies still on disk. */
static int
build_texts(struct bctx *b, const struct ff_spec_vg *g, struct ff_vg *vg,
            const char *path, const struct chrec *recs)
{
  const struct ff_spec *sp = b->spec;
  uint64_t max0 = ff_mda_max_text(vg->fmt.mda_size);
  uint64_t mda1_start, mda1_size;
  char *vgdesc = NULL;
  struct tagset vgt = {0}, *lvt = NULL, *pvt = NULL;
  const char **lvtext = NULL, **pvtext = NULL, **lvctext = NULL;
  int64_t prev_time = 0;
  uint32_t nlw = 0;       /* the writes of the lvcreates */
  uint32_t *wlv = NULL;   /* [nlw]: the LV each made, */
  uint8_t *wphase = NULL; /* and which of its writes (0, 1) */
  uint32_t ncw = 0;       /* the writes of the changes */
  uint32_t *wch = NULL;   /* [ncw]: the change each belongs to, */
  uint8_t *wchph = NULL;  /* and which of its writes */
  int64_t *rtime = NULL;  /* [nchanges]: each change's (first) write time */
  struct ff_hist *hist = NULL;
  char *chdesc = NULL; /* the running change's description */
  int r = -1;

  ff_mda1_place(&vg->fmt, vg->pvs[0].dev_size, &mda1_start, &mda1_size);
  for (uint32_t i = 0; i < vg->nlvs; i++)
    nlw += vg->lvs[i].writes;
  for (unsigned k = 0; k < g->nchanges; k++)
    ncw += recs[k].writes;
  if (g->seqno && g->seqno < 1 + nlw + ncw)
    return ff_fb_err(b, g->line, path,
                     "seqno %u is below the %u writes of the vgcreate, the "
                     "lvcreates and the changes (an lvremove of a thin LV "
                     "writes twice)",
                     g->seqno, 1 + nlw + ncw);
  vg->seqno = g->seqno ? g->seqno : 1 + nlw + ncw;
  vg->texts = calloc(vg->seqno, sizeof *vg->texts);
  if (!vg->texts)
    return ff_error("out of memory");
  vg->first_kept = g->history < 0 || (uint64_t)g->history >= vg->seqno - 1
                     ? 0
                     : vg->seqno - 1 - (uint32_t)g->history;
  vgdesc = g->description ? strdup(g->description)
                          : default_vg_description(vg, sp->system_id);
  if (!vgdesc)
    return ff_error("out of memory");
  /* the tags of the VG (vgcreate), each LV (its lvcreate) and each PV
   * (none until a pvchange), as they change */
  lvt = calloc(vg->nlvs + 1, sizeof *lvt);
  pvt = calloc(vg->npvs + 1, sizeof *pvt);
  lvtext = calloc(vg->nlvs + 1, sizeof *lvtext);
  lvctext = calloc(vg->nlvs + 1, sizeof *lvctext);
  pvtext = calloc(vg->npvs + 1, sizeof *pvtext);
  wlv = calloc(nlw + 1, sizeof *wlv);
  wphase = calloc(nlw + 1, 1);
  wch = calloc(ncw + 1, sizeof *wch);
  wchph = calloc(ncw + 1, 1);
  rtime = calloc(g->nchanges + 1, sizeof *rtime);
  hist = calloc(g->nchanges + 1, sizeof *hist);
  if (!lvt || !pvt || !lvtext || !lvctext || !pvtext || !wlv || !wphase ||
      !wch || !wchph || !rtime || !hist) {
    ff_error("out of memory");
    goto out;
  }
  if (tagset_change(&vgt, g->tags, NULL) < 0)
    goto out;
  for (unsigned gi = 0, li = 0; gi < g->nlvs; gi++)
    for (unsigned k = 0; k < g->lvs[gi].count; k++, li++) {
      if (tagset_change(&lvt[li], g->lvs[gi].tags, NULL) < 0)
        goto out;
      lvtext[li] = lvt[li].text;
      if (lvt[li].text && !(lvctext[li] = ff_fb_keep(b->farm, lvt[li].text)))
        goto out;
    }
  for (uint32_t i = 0, k = 0; i < vg->nlvs; i++)
    for (uint32_t p = 0; p < vg->lvs[i].writes; p++, k++) {
      wlv[k] = i;
      wphase[k] = (uint8_t)p;
    }
  for (uint32_t c = 0, k = 0; c < g->nchanges; c++)
    for (uint32_t p = 0; p < recs[c].writes; p++, k++) {
      wch[k] = c;
      wchph[k] = (uint8_t)p;
    }

  for (uint32_t w = 0; w < vg->seqno; w++) {
    struct ff_text *t = &vg->texts[w];
    struct ff_text_meta meta = {
      .phase = -1,
      .host = sp->creation_host,
      .uname = sp->uname,
      .lvm_version = sp->lvm_version,
      .host_system_id = sp->system_id,
      .write_locked = vg->system_id != NULL,
    };
    uint32_t nl = w == 0 ? 0 : w <= nlw ? wlv[w - 1] + 1 : vg->nlvs;
    char *desc = NULL;

    if (w > nlw && w <= nlw + ncw) {
      uint32_t c = wch[w - nlw - 1], ph = wchph[w - nlw - 1];
      const struct ff_spec_change *ch = &g->changes[c];
      const struct chrec *rc = &recs[c];
      struct tagset *ts = &vgt;
      const char *target = vg->name;

      if (ph == 0 && rc->target != FF_NONE) {
        /* (found, and checked, by ff_fb_apply_changes) */
        uint32_t li = rc->target;

        ts = &lvt[li];
        /* (lvrename's description names the LV as it was) */
        target = vg->lvs[li].name;
        if (ch->cmd == FF_CHG_CACHE || ch->cmd == FF_CHG_WRITECACHE) {
          /* the new LV_corig (LV_wcorig): made by this write; pvmove0 */
          vg->lvs[li].attach_seq = vg->lvs[vg->lvs[li].link].attach_seq =
            w + 1;
          vg->lvs[li].subs[0].time = ch->has_time ? ch->time : prev_time;
        }
      } else if (ph == 0 && ch->cmd == FF_CHG_PVMOVE) {
        vg->lvs[rc->lv].time = ch->has_time ? ch->time : prev_time;
        target = vg->pvs[ch->pv].hint;
      } else if (ph == 0 && ch->cmd == FF_CHG_PV) {
        ts = &pvt[ch->pv];
        target = vg->pvs[ch->pv].hint;
      }
      if (ph == 0) {
        free(chdesc);
        if (!(chdesc = ch->description
                         ? strdup(ch->description)
                         : default_change_description(ch, vg, target))) {
          ff_error("out of memory");
          goto out;
        }
        if (ff_fb_rec_apply(vg, rc, 1) < 0 ||
            tagset_change(ts, ch->addtag, ch->deltag) < 0)
          goto out;
        for (uint32_t i = 0; i < vg->nlvs; i++)
          lvtext[i] = lvt[i].text;
        for (uint32_t i = 0; i < vg->npvs; i++)
          pvtext[i] = pvt[i].text;
        rtime[c] = ch->has_write_times ? ch->write_times[0]
                   : ch->has_time      ? ch->time
                                       : prev_time;
        desc = strdup(chdesc);
        /* lvremove of a thin LV: write 1 holds the pool's delete message */
        if (rc->writes == 2)
          meta.deleted = &vg->lvs[rc->lv];
      } else
        desc = nth_write_desc(chdesc, ph + 1);
      meta.description = desc;
      meta.time = ph && ch->has_write_times ? ch->write_times[ph] : rtime[c];
    } else if (w == 0) {
      meta.description = vgdesc;
      meta.time = g->has_time ? g->time : sp->creation_time;
    } else if (w <= nlw) {
      struct ff_lv *lv = &vg->lvs[wlv[w - 1]];

      if ((lv->kind == FF_LVK_CACHE || lv->kind == FF_LVK_WRITECACHE) &&
          wphase[w - 1] == 1) {
        lv->attach_seq = vg->lvs[lv->link].attach_seq = w + 1;
        /* (LV_corig, LV_wcorig: made for the write that attaches) */
        lv->subs[0].time = lv->wtime[1];
      }
      /* (the writes after the third, of --raidintegrity: the third's
       * time, "Write[N]" descriptions) */
      if (wphase[w - 1] < 3)
        desc = strdup(lv->wdesc[wphase[w - 1]]);
      else
        desc = nth_write_desc(lv->wdesc[0], wphase[w - 1] + 1u);
      meta.description = desc;
      meta.time = ff_fb_wtime(lv, wphase[w - 1]);
      meta.phase = wphase[w - 1];
      meta.first_write =
        (lv->kind == FF_LVK_MIRROR || lv->kind == FF_LVK_RAID) &&
        lv->writes >= 2 && wphase[w - 1] == 0;
    } else {
      desc = NULL;
      if (asprintf(&desc, "Write from vgck --updatemetadata %s.", vg->name) <
          0)
        desc = NULL;
      meta.description = desc;
      meta.time = prev_time;
    }
    prev_time = meta.time;
    /* a pvmove under way: its pvmove0 (the last slot) is there */
    meta.pvmove = ff_fb_pvmove(vg);
    /* the historical LVs: each removed thin LV whose snapshot lives */
    meta.hist = hist;
    for (uint32_t c = 0; c < g->nchanges; c++) {
      const struct chrec *rc = &recs[c];

      if (rc->hist_desc == FF_NONE || !vg->lvs[rc->lv].f.removed ||
          vg->lvs[rc->hist_desc].f.removed)
        continue;
      hist[meta.nhist++] = (struct ff_hist){rc->was.name, vg->lvs[rc->lv].uuid,
                                            vg->lvs[rc->lv].time, rtime[c],
                                            vg->lvs[rc->hist_desc].name};
    }
    meta.vg_tags = vgt.text;
    meta.lv_tags = lvtext;
    meta.lv_ctags = lvctext;
    meta.pv_tags = pvtext;
    if (!meta.description) {
      ff_error("out of memory");
      goto out;
    }
    t->buf = ff_lvmtext_build(vg, nl, w + 1, &meta, &t->size);
    free(desc);
    if (!t->buf)
      goto out;
    if (w + 1 == vg->seqno && vg->damage == FF_DMG_BAD_TEXT &&
        break_text(t) < 0)
      goto out;
    if (t->size > max0) {
      ff_fb_err(b, g->line, path,
                "the metadata of VG %s (seqno %u) is %u bytes, more than the "
                "%llu that fit in its %llu-byte metadata area; raise mda_size "
                "and pe_start",
                vg->name, w + 1, t->size, (unsigned long long)max0,
                (unsigned long long)vg->fmt.mda_size);
      goto out;
    }
    t->crc = ff_lvm_crc(t->buf, t->size);
    if (w == 0) {
      t->mda0_off = t->mda1_off = 512;
    } else {
      const struct ff_text *pt = &vg->texts[w - 1];

      t->mda0_off =
        ff_mda_next_offset(vg->fmt.mda_size, pt->mda0_off, pt->size);
      t->mda1_off =
        mda1_size ? ff_mda_next_offset(mda1_size, pt->mda1_off, pt->size) : 0;
    }
    if (w < vg->first_kept && !(w == 0 && vg->nignored)) {
      /* (an ignored mda keeps write 1) */
      free(t->buf);
      t->buf = NULL;
    }
  }
  r = 0;
out:
  free(vgdesc);
  free(vgt.v);
  free(vgt.text);
  for (uint32_t i = 0; lvt && i < vg->nlvs; i++) {
    free(lvt[i].v);
    free(lvt[i].text);
  }
  for (uint32_t i = 0; pvt && i < vg->npvs; i++) {
    free(pvt[i].v);
    free(pvt[i].text);
  }
  free(lvt);
  free(pvt);
  free(lvtext);
  free(lvctext);
  free(pvtext);
  free(wlv);
  free(wphase);
  free(wch);
  free(wchph);
  free(rtime);
  free(hist);
  free(chdesc);
  return r;
}

static int build_vg(struct bctx *b, unsigned gi, uint32_t fi,
                    const char *path);
static int md_magic_at_mda0(const struct ff_farm *farm, uint32_t dev);

static int
build_vg_group(struct bctx *b, unsigned gi)
{
  const struct ff_spec *sp = b->spec;
  const struct ff_spec_vg *g = &sp->vgs[gi];
  struct ff_farm *farm = b->farm;
  uint32_t fi = farm->nfmts;
  char path[64];

  /* fi + n: the layout of the group's PVs with n metadata areas (the
   * same pe_start: ff-spec.c checked that and every PV's size) */
  snprintf(path, sizeof path, "vgs.[%u]", gi);
  farm->nfmts += 3;
  for (unsigned n = 0; n < 3; n++) {
    farm->fmts[fi + n] = g->fmt.lay;
    farm->fmts[fi + n].mda_copies = n;
  }
  if (b->lgfi)
    b->lgfi[gi] = fi;
  for (unsigned k = 0; k < g->count; k++) {
    uint32_t v = b->v, d0 = b->d;

    if (build_vg(b, gi, fi, path) < 0)
      return -1;
    if (b->lrecs) {
      /* a lazy farm keeps where the VG came from and its name (until
       * check_unique): it is built again when read */
      struct ff_vg *vg = &farm->vgs[v];

      for (uint32_t d = d0; d < b->d && b->md_first == FF_NONE; d++) {
        int r =
          farm->devs[d].role == FF_ROLE_PV ? md_magic_at_mda0(farm, d) : 0;

        if (r < 0)
          return -1;
        if (r)
          b->md_first = d;
      }
      b->lrecs[v] = (struct ff_lazy_rec){gi, d0};
      b->lcrc[v] = vg->texts[vg->seqno - 1].crc;
      ff_fb_vg_clear(vg, 1);
    }
  }
  return 0;
}

int
ff_fb_vg_rebuild(struct ff_farm *farm, const struct ff_spec *spec,
                 const struct ff_lazy_rec *rec, uint32_t gfi, uint32_t v,
                 struct ff_vg *out)
{
  struct bctx b = {
    .spec = spec, .farm = farm, .d = rec->d0, .v = v, .out = out};
  char path[64], **pool = farm->pool;
  uint32_t npool = farm->npool, pool_cap = farm->pool_cap;
  int r;

  /* what the build keeps (ff_fb_keep) is the VG's own, not the farm's:
   * the farm's pool would grow at every build (the callers build under
   * one lock, and nothing else touches the pool once the farm is made) */
  farm->pool = NULL;
  farm->npool = farm->pool_cap = 0;
  snprintf(path, sizeof path, "vgs.[%u]", rec->gi);
  r = build_vg(&b, rec->gi, gfi, path);
  out->kept = farm->pool;
  out->nkept = farm->npool;
  farm->pool = pool;
  farm->npool = npool;
  farm->pool_cap = pool_cap;
  if (r < 0) {
    ff_fb_vg_clear(out, 0);
    return -1;
  }
  return 0;
}

/* One VG of group gi, its PVs of formats fi + their metadata areas, as
 * farm->vgs[b->v] (or b->out). */
static int
build_vg(struct bctx *b, unsigned gi, uint32_t fi, const char *path)
{
  const struct ff_spec *sp = b->spec;
  const struct ff_spec_vg *g = &sp->vgs[gi];
  struct ff_farm *farm = b->farm;
  {
    struct ff_vg *vg = b->out ? b->out : &farm->vgs[b->v];
    struct chrec *recs;
    uint32_t nlvs = 0, pvmove = 0;
    int r;

    vg->name = ff_format_uint(g->name, b->v);
    if (!vg->name)
      return ff_error("out of memory");
    if (!ff_valid_lvm_name(vg->name))
      return ff_fb_err(b, g->line, path, "'%s' is not a valid VG name",
                       vg->name);
    if (g->uuid)
      memcpy(vg->uuid, g->uuid, FF_UUID_LEN);
    else
      ff_uuid_make(vg->uuid, sp->seed, K_VG, b->v, 0);
    vg->extent_size = g->extent_size;
    vg->fmt = farm->fmts[fi + g->fmt.mda_copies]; /* the most mdas */
    vg->mda_copies = g->vg_mdas;
    vg->damage = g->damage;
    vg->device_id_type = g->device_id_type;
    vg->max_lv = g->max_lv;
    vg->max_pv = g->max_pv;
    vg->alloc = (uint8_t)g->alloc;
    if (g->system_id && !(vg->system_id = ff_fb_keep(farm, g->system_id)))
      return -1;

    vg->npvs = g->pvs;
    vg->pvs = calloc(g->pvs, sizeof *vg->pvs);
    if (!vg->pvs)
      return ff_error("out of memory");
    for (uint32_t p = 0; p < g->pvs; p++) {
      struct ff_pv *pv = &vg->pvs[p];
      int missing = g->damage == FF_DMG_MISSING_PV && p == g->pvs - 1;
      uint64_t size = g->device_sizes ? g->device_sizes[p] : g->device_size;
      unsigned nmdas = g->pv_mdas ? g->pv_mdas[p] : g->fmt.mda_copies;
      uint64_t mda1_start, mda1_size, pe_count;

      ff_mda1_place(&farm->fmts[fi + nmdas], size, &mda1_start, &mda1_size);
      if (nmdas == 2 && !mda1_size)
        return ff_fb_err(
          b, g->line, path,
          "device_size %llu is too small for mda_copies = 2: less "
          "than 32 KiB (lvm's minimum) is left for mda1 after "
          "pe_start %llu",
          (unsigned long long)size, (unsigned long long)vg->fmt.pe_start);
      if (size < vg->fmt.pe_start + mda1_size)
        pe_count = 0;
      else
        pe_count = (size - vg->fmt.pe_start - mda1_size) / g->extent_size;
      if (pe_count == 0)
        return ff_fb_err(
          b, g->line, path,
          "device_size %llu leaves no extent of %llu bytes after "
          "pe_start %llu%s",
          (unsigned long long)size, (unsigned long long)g->extent_size,
          (unsigned long long)vg->fmt.pe_start, mda1_size ? " and mda1" : "");
      if (g->device_ids &&
          !(pv->device_id = ff_fb_keep(farm, g->device_ids[p])))
        return -1;

      if (g->pv_uuids)
        memcpy(pv->uuid, g->pv_uuids[p], FF_UUID_LEN);
      else
        ff_pv_uuid_make(pv->uuid, sp->seed, K_PV, b->v, p);
      pv->dev_size = size;
      pv->pe_count = pe_count;
      pv->nmdas = nmdas;
      pv->ignored = g->pv_ignored ? g->pv_ignored[p] : 0;
      vg->nignored += (pv->ignored & 1) + (pv->ignored >> 1 & 1);
      pv->dev = FF_NONE;
      if (!missing) {
        struct ff_device *dev = new_device(b, g->devices, p, size, FF_ROLE_PV);

        if (!dev)
          return -1;
        pv->dev = b->d - 1;
        dev->vg = b->v;
        dev->pv = p;
        dev->fmt = fi + nmdas;
        memcpy(dev->uuid, pv->uuid, FF_UUID_LEN);
        if (p == g->pvs - 1 &&
            (g->damage == FF_DMG_LABEL_CRC ||
             g->damage == FF_DMG_MDA_CHECKSUM || g->damage == FF_DMG_STALE))
          dev->damage = (uint8_t)g->damage;
        if (g->damage == FF_DMG_DUPLICATE && p == 0) {
          struct ff_device *dup =
            new_device(b, NULL, 0, size, FF_ROLE_DUPLICATE);

          if (!dup)
            return -1;
          dup->alias = pv->dev;
          dup->damage = FF_DMG_DUPLICATE;
          dup->fmt = fi + nmdas;
          memcpy(dup->uuid, pv->uuid, FF_UUID_LEN);
        }
      }
      if (g->hints) {
        pv->hint = strdup(g->hints[p]);
      } else {
        char missing_name[160];

        snprintf(missing_name, sizeof missing_name, "%s-pv%u", vg->name, p);
        pv->hint = ff_format_str(
          sp->device_hint, missing ? missing_name : farm->devs[pv->dev].name);
      }
      if (!pv->hint)
        return ff_error("out of memory");
    }

    for (unsigned l = 0; l < g->nlvs; l++)
      nlvs += g->lvs[l].count;
    /* a pvmove change: its pvmove0, in the last slot, not there (removed)
     * until its write */
    for (unsigned k = 0; k < g->nchanges; k++)
      pvmove |= g->changes[k].cmd == FF_CHG_PVMOVE;
    vg->nlvs = nlvs + pvmove;
    vg->lvs = calloc(vg->nlvs ? vg->nlvs : 1, sizeof *vg->lvs);
    if (!vg->lvs)
      return ff_error("out of memory");
    if (pvmove) {
      struct ff_lv *pm = &vg->lvs[nlvs];

      if (!(pm->name = strdup("pvmove0")))
        return ff_error("out of memory");
      pm->kind = FF_LVK_PVMOVE;
      pm->segtype = pm->ktype = "mirror";
      pm->alloc = "contiguous"; /* lv_create_empty(..., ALLOC_CONTIGUOUS) */
      pm->f.removed = 1;
      pm->link = FF_NONE;
      ff_uuid_make(pm->uuid, sp->seed, K_LV, b->v, nlvs);
    }
    recs = calloc(g->nchanges + 1, sizeof *recs);
    if (!recs)
      return ff_error("out of memory");
    r = allocate_lvs(b, g, vg, path, recs) < 0 ||
        build_texts(b, g, vg, path, recs) < 0 ||
        (b->pk && ff_packer_vg(b->pk, farm, vg) < 0);
    free(recs);
    if (r)
      return -1;
    /* the descriptions of the LVs' writes and the PVs' device hints
     * served the texts only */
    for (uint32_t i = 0; i < vg->nlvs; i++)
      for (unsigned w = 0; w < 3; w++) {
        free(vg->lvs[i].wdesc[w]);
        vg->lvs[i].wdesc[w] = NULL;
      }
    for (uint32_t p = 0; p < vg->npvs; p++) {
      free(vg->pvs[p].hint);
      vg->pvs[p].hint = NULL;
    }

    /* Each PV holds every kept write, a stale one all but the last. */
    for (uint32_t p = 0; p < g->pvs && !b->out; p++) {
      uint32_t di = vg->pvs[p].dev;

      if (di == FF_NONE)
        continue;
      farm->devs[di].ncopies =
        farm->devs[di].damage == FF_DMG_STALE ? vg->seqno - 1 : vg->seqno;
    }
    b->v++;
  }
  return 0;
}

static int
build_other_group(struct bctx *b, unsigned oi)
{
  const struct ff_spec *sp = b->spec;
  const struct ff_spec_other *o = &sp->others[oi];
  static const enum ff_role roles[] = {FF_ROLE_ORPHAN, FF_ROLE_BLANK,
                                       FF_ROLE_SIGNATURE};
  uint32_t fi = FF_NONE;

  if (o->kind == FF_OTHER_ORPHAN) {
    uint64_t m1, m1size;

    char path[64];

    fi = b->farm->nfmts++;
    snprintf(path, sizeof path, "orphans.[%u].device_size", oi);
    b->farm->fmts[fi] = o->fmt.lay;
    /* mda1 goes after pe_start (lvm takes what is left there if its size
     * does not fit); none at all when nothing is left.  (A VG's PVs are
     * checked by their extent count.) */
    ff_mda1_place(&b->farm->fmts[fi], o->device_size, &m1, &m1size);
    if (o->fmt.mda_copies == 2 && !m1size)
      return ff_fb_err(
        b, o->line, path,
        "%llu is too small for mda_copies = 2: less than 32 KiB "
        "(lvm's minimum) is left for mda1 after pe_start %llu",
        (unsigned long long)o->device_size,
        (unsigned long long)b->farm->fmts[fi].pe_start);
  }
  for (unsigned k = 0; k < o->count; k++) {
    struct ff_device *dev =
      new_device(b, o->devices, k, o->device_size, roles[o->kind]);

    if (!dev)
      return -1;
    dev->fmt = fi;
    dev->sig = (uint8_t)o->sig;
    if (o->kind == FF_OTHER_ORPHAN) {
      if (o->pv_uuids)
        memcpy(dev->uuid, o->pv_uuids[k], FF_UUID_LEN);
      else
        ff_pv_uuid_make(dev->uuid, sp->seed, K_ORPHAN, b->d - 1, 0);
      dev->damage = (uint8_t)o->damage;
    }
  }
  return 0;
}

static const struct ff_farm *sort_farm;

static int
cmp_by_name(const void *a, const void *b)
{
  return strcmp(sort_farm->devs[*(const uint32_t *)a].name,
                sort_farm->devs[*(const uint32_t *)b].name);
}

static int
cmp_vg_name(const void *a, const void *b)
{
  return strcmp((*(const struct ff_vg *const *)a)->name,
                (*(const struct ff_vg *const *)b)->name);
}

/* The spec group that made device dev, for messages: its line, and its
 * path ("vgs.[1]", "blanks.[0].devices" when it names its devices).
 * Devices are made group by group in this order (ff_farm_new). */
static int
dev_origin(const struct ff_spec *sp, uint32_t dev, char *path, size_t len)
{
  static const char *const kinds[] = {"orphans", "blanks", "signatures"};
  unsigned k[3] = {0, 0, 0};
  uint64_t d = dev;

  for (unsigned i = 0; i < sp->nvgs; i++) {
    const struct ff_spec_vg *g = &sp->vgs[i];
    uint64_t n =
      (uint64_t)g->count * (g->pvs - (g->damage == FF_DMG_MISSING_PV) +
                            (g->damage == FF_DMG_DUPLICATE));

    if (d < n) {
      snprintf(path, len, "vgs.[%u]%s", i, g->devices ? ".devices" : "");
      return g->line;
    }
    d -= n;
  }
  for (unsigned i = 0; i < sp->nothers; i++) {
    const struct ff_spec_other *o = &sp->others[i];
    unsigned idx = k[o->kind]++;

    if (d < o->count) {
      snprintf(path, len, "%s.[%u]%s", kinds[o->kind], idx,
               o->devices ? ".devices" : "");
      return o->line;
    }
    d -= o->count;
  }
  snprintf(path, len, "device_name");
  return 0;
}

/* The same for VG v: the path of its group's name. */
static int
vg_origin(const struct ff_spec *sp, uint32_t v, char *path, size_t len)
{
  for (unsigned i = 0; i < sp->nvgs; i++) {
    if (v < sp->vgs[i].count) {
      snprintf(path, len, "vgs.[%u].name", i);
      return sp->vgs[i].line;
    }
    v -= sp->vgs[i].count;
  }
  snprintf(path, len, "vgs");
  return 0;
}

static int
check_unique(const struct bctx *b)
{
  const struct ff_farm *farm = b->farm;
  const struct ff_vg **vgs;
  char path[64], other[64];
  int r = 0, line;

  for (uint32_t i = 0; i < farm->ndevs; i++)
    farm->by_name[i] = i;
  /* qsort has no context argument in C11; building is single-threaded. */
  sort_farm = farm;
  qsort(farm->by_name, farm->ndevs, sizeof *farm->by_name, cmp_by_name);
  for (uint32_t i = 0; i < farm->ndevs; i++) {
    uint32_t di = farm->by_name[i];
    const char *n = farm->devs[di].name;

    if (i && !strcmp(n, farm->devs[farm->by_name[i - 1]].name)) {
      uint32_t dj = farm->by_name[i - 1];
      int oline = dev_origin(b->spec, di < dj ? di : dj, other, sizeof other);

      line = dev_origin(b->spec, di < dj ? dj : di, path, sizeof path);
      return ff_fb_err(
        b, line, path,
        "device name '%s' is used twice (devices %u and %u; the "
        "other is made by %s at line %d)",
        n, di < dj ? di : dj, di < dj ? dj : di, other, oline);
    }
    if (strchr(n, '/') || !ff_valid_lvm_name(n)) {
      line = dev_origin(b->spec, di, path, sizeof path);
      return ff_fb_err(b, line, path,
                       "device name '%s' is not a valid file name "
                       "([A-Za-z0-9+_.-], not starting with -)",
                       n);
    }
  }

  vgs = malloc((farm->nvgs ? farm->nvgs : 1) * sizeof *vgs);
  if (!vgs)
    return ff_error("out of memory");
  for (uint32_t i = 0; i < farm->nvgs; i++)
    vgs[i] = &farm->vgs[i];
  qsort(vgs, farm->nvgs, sizeof *vgs, cmp_vg_name);
  for (uint32_t i = 1; i < farm->nvgs && !r; i++)
    if (!strcmp(vgs[i]->name, vgs[i - 1]->name)) {
      uint32_t vi = (uint32_t)(vgs[i] - farm->vgs);
      uint32_t vj = (uint32_t)(vgs[i - 1] - farm->vgs);
      int oline = vg_origin(b->spec, vi < vj ? vi : vj, other, sizeof other);

      line = vg_origin(b->spec, vi < vj ? vj : vi, path, sizeof path);
      r = ff_fb_err(
        b, line, path,
        "VG name '%s' is used twice (the other is made by %s at line "
        "%d)",
        vgs[i]->name, other, oline);
    }
  free(vgs);
  return r;
}

/* The mda0 header checksum sits at byte 4096, where lvm's md filter looks
 * for the md magic (docs/ondisk-format.md §8 item 14). */
static int
md_magic_at_mda0(const struct ff_farm *farm, uint32_t dev)
{
  uint8_t sec[4];

  if (ff_farm_read_base(farm, dev, sec, FF_MDA0_START, 4) < 0)
    return -1;
  return ff_get_le32(sec) == FF_MD_MAGIC;
}

/* (A lazy farm's PVs were looked at as their VGs were built: md_first.) */
static int
check_md_collision(const struct bctx *b)
{
  const struct ff_farm *farm = b->farm;

  for (uint32_t i = 0; i < farm->ndevs; i++) {
    const struct ff_device *d = &farm->devs[i];
    char path[64];
    int r;

    if (d->role != FF_ROLE_PV && d->role != FF_ROLE_ORPHAN)
      continue;
    if (farm->lazy && d->role == FF_ROLE_PV)
      r = i == b->md_first;
    else if ((r = md_magic_at_mda0(farm, i)) < 0)
      return -1;
    if (r)
      return ff_fb_err(
        b, dev_origin(b->spec, i, path, sizeof path), path,
        "device %s: the mda0 header checksum equals the md magic "
        "0x%08X, which lvm would filter; change the seed",
        d->name, FF_MD_MAGIC);
  }
  return 0;
}

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *c = p;

  while (n--) {
    h ^= *c++;
    h *= 0x100000001B3ull;
  }
  return h;
}

/* crcs: each VG's last text's crc (a lazy farm's), or NULL: the VGs' */
static uint64_t
fingerprint(const struct ff_farm *farm, const uint32_t *crcs)
{
  uint64_t h = 0xCBF29CE484222325ull;

  h = fnv(h, &farm->seed, sizeof farm->seed);
  for (uint32_t i = 0; i < farm->ndevs; i++) {
    const struct ff_device *d = &farm->devs[i];

    h = fnv(h, d->name, strlen(d->name) + 1);
    h = fnv(h, &d->size, sizeof d->size);
    h = fnv(h, &d->role, 1);
    h = fnv(h, d->uuid, FF_UUID_LEN);
  }
  for (uint32_t i = 0; i < farm->nvgs; i++) {
    uint32_t crc =
      crcs ? crcs[i] : farm->vgs[i].texts[farm->vgs[i].seqno - 1].crc;

    h = fnv(h, &crc, sizeof crc);
  }
  return h;
}

static int
overlay_base(void *opaque, uint32_t dev, void *buf, uint64_t off, size_t len)
{
  return ff_farm_read_base(opaque, dev, buf, off, len);
}

enum build_mode { BUILD_PLAIN, BUILD_PACKED, BUILD_LAZY };

/* mode BUILD_LAZY: the farm takes sp (freed here on failure) */
static struct ff_farm *
farm_new(const struct ff_spec *sp, enum build_mode mode)
{
  struct bctx b = {.spec = sp, .md_first = FF_NONE};
  struct ff_farm *farm = NULL;
  uint64_t ndevs = 0, nvgs = 0;
  uint64_t *sizes = NULL;

  for (unsigned i = 0; i < sp->nvgs; i++) {
    const struct ff_spec_vg *g = &sp->vgs[i];
    uint64_t per = g->pvs - (g->damage == FF_DMG_MISSING_PV) +
                   (g->damage == FF_DMG_DUPLICATE);

    ndevs += per * g->count;
    nvgs += g->count;
  }
  for (unsigned i = 0; i < sp->nothers; i++)
    ndevs += sp->others[i].count;
  if (ndevs == 0) {
    ff_error("%s: the spec makes no devices (add vgs, orphans, blanks or "
             "signatures)",
             sp->file);
    goto fail;
  }
  if (ndevs > 1000000 || nvgs > 1000000) {
    ff_error("%s: the spec makes %llu devices and %llu VGs (at most "
             "1000000 each)",
             sp->file, (unsigned long long)ndevs, (unsigned long long)nvgs);
    goto fail;
  }

  farm = calloc(1, sizeof *farm);
  if (!farm) {
    ff_error("out of memory");
    goto fail;
  }
  b.farm = farm;
  if (mode == BUILD_PACKED && !(b.pk = ff_packer_new(farm)))
    goto fail;
  if (mode == BUILD_LAZY) {
    b.lrecs = calloc(nvgs ? nvgs : 1, sizeof *b.lrecs);
    b.lcrc = calloc(nvgs ? nvgs : 1, sizeof *b.lcrc);
    b.lgfi = calloc(sp->nvgs ? sp->nvgs : 1, sizeof *b.lgfi);
    if (!b.lrecs || !b.lcrc || !b.lgfi) {
      ff_error("out of memory");
      goto fail;
    }
  }
  farm->seed = sp->seed;
  farm->ndevs = (uint32_t)ndevs;
  farm->nvgs = (uint32_t)nvgs;
  farm->devs = calloc(ndevs, sizeof *farm->devs);
  farm->vgs = calloc(nvgs ? nvgs : 1, sizeof *farm->vgs);
  farm->fmts = calloc(3 * sp->nvgs + sp->nothers + 1, sizeof *farm->fmts);
  farm->by_name = calloc(ndevs, sizeof *farm->by_name);
  if (!farm->devs || !farm->vgs || !farm->fmts || !farm->by_name) {
    ff_error("out of memory");
    goto fail;
  }
  for (unsigned i = 0; i < sp->nvgs; i++)
    if (build_vg_group(&b, i) < 0)
      goto fail;
  for (unsigned i = 0; i < sp->nothers; i++)
    if (build_other_group(&b, i) < 0)
      goto fail;
  if (check_unique(&b) < 0)
    goto fail;
  farm->fingerprint = fingerprint(farm, b.lcrc);
  if (mode == BUILD_LAZY) {
    /* from here on the VGs are built again when read */
    for (uint32_t i = 0; i < farm->nvgs; i++)
      free(farm->vgs[i].name);
    free(farm->vgs);
    farm->vgs = NULL;
    free(b.lcrc);
    b.lcrc = NULL;
    if (ff_lazy_attach(farm, (struct ff_spec *)sp, b.lrecs, b.lgfi) < 0) {
      b.lrecs = NULL;
      b.lgfi = NULL;
      sp = NULL; /* the farm has it */
      goto fail;
    }
    b.lrecs = NULL;
    b.lgfi = NULL;
    sp = NULL;
  }
  if (check_md_collision(&b) < 0)
    goto fail;

  sizes = malloc(ndevs * sizeof *sizes);
  if (!sizes) {
    ff_error("out of memory");
    goto fail;
  }
  for (uint32_t i = 0; i < farm->ndevs; i++)
    sizes[i] = farm->devs[i].size;
  farm->overlay = ff_overlay_new(farm->ndevs, sizes, overlay_base, farm);
  free(sizes);
  if (!farm->overlay)
    goto fail;
  ff_packer_free(b.pk);
  return farm;

fail:
  ff_packer_free(b.pk);
  free(b.lrecs);
  free(b.lcrc);
  free(b.lgfi);
  ff_farm_free(farm);
  if (mode == BUILD_LAZY && sp)
    ff_spec_free((struct ff_spec *)sp);
  return NULL;
}

struct ff_farm *
ff_farm_new(const struct ff_spec *sp)
{
  return farm_new(sp, BUILD_PLAIN);
}

struct ff_farm *
ff_farm_new_packed(const struct ff_spec *sp)
{
  return farm_new(sp, BUILD_PACKED);
}

struct ff_farm *
ff_farm_new_lazy(struct ff_spec *sp)
{
  return farm_new(sp, BUILD_LAZY);
}

static void
free_lv(struct ff_lv *lv)
{
  for (uint32_t s = 0; s < lv->nsegs || s < lv->segs_built; s++)
    free(lv->segs[s].areas);
  free(lv->segs);
  free(lv->name);
  free(lv->oldname);
  free(lv->wdesc[0]);
  free(lv->wdesc[1]);
  free(lv->wdesc[2]);
  free(lv->wtime_x);
}

void
ff_fb_vg_clear(struct ff_vg *vg, int keep_name)
{
  char *name = keep_name ? vg->name : NULL;

  if (vg->pvs)
    for (uint32_t p = 0; p < vg->npvs; p++)
      free(vg->pvs[p].hint);
  if (vg->lvs)
    for (uint32_t l = 0; l < vg->nlvs; l++) {
      struct ff_lv *lv = &vg->lvs[l];

      for (uint32_t u = 0; u < lv->nsubs; u++)
        free_lv(&lv->subs[u]);
      free(lv->subs);
      free_lv(lv);
    }
  free(vg->blobs);
  if (vg->texts)
    for (uint32_t w = 0; w < vg->seqno; w++)
      free(vg->texts[w].buf);
  free(vg->texts);
  free(vg->lvs);
  free(vg->pvs);
  for (uint32_t i = 0; i < vg->nkept; i++)
    free(vg->kept[i]);
  free(vg->kept);
  if (!keep_name)
    free(vg->name);
  memset(vg, 0, sizeof *vg);
  vg->name = name;
}

void
ff_farm_free(struct ff_farm *farm)
{
  if (!farm)
    return;
  ff_overlay_free(farm->overlay);
  for (uint32_t i = 0; farm->vgs && i < farm->nvgs; i++)
    ff_fb_vg_clear(&farm->vgs[i], 0);
  ff_lazy_free(farm->lazy);
  for (uint32_t i = 0; i < farm->ntms; i++) {
    ff_thinmeta_free(farm->tms[i].m);
    free(farm->tms[i].origins);
  }
  free(farm->tms);
  if (farm->devs)
    for (uint32_t i = 0; i < farm->ndevs; i++)
      free(farm->devs[i].name);
  free(farm->devs);
  free(farm->vgs);
  free(farm->fmts);
  free(farm->by_name);
  for (uint32_t i = 0; i < farm->npool; i++)
    free(farm->pool[i]);
  free(farm->pool);
  free(farm->tdict);
  free(farm);
}
