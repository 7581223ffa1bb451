/* fusefarm: reading a built farm (see ff-farm.h for the invariants and
 * the thread model): its bytes, extents, device lookup and descriptions,
 * the accessors.  Building it is ff-farm.c.
 *
 * A device's base bytes are zeros except for a few pieces, each computed
 * on demand from the shared tables: the label sector, one mda_header per
 * metadata area, the VG's metadata copies in each area's circular buffer
 * (oldest first, so newer copies and their zero padding overwrite older
 * ones exactly as lvm's successive writes did), the bytes lvm writes
 * into a new LV (a mirror log's header: the VG's blobs), or another
 * format's signature.  The tables are read-only once built, so no lock is
 * taken; writes go to the overlay (ff-overlay.h), which has its own locking.
 */
#include "ff-farm-int.h"
#include "ff-error.h"
#include "ff-pvlayout-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lookup ------------------------------------------------------------ */

int64_t
ff_farm_lookup(const struct ff_farm *farm, const char *name)
{
  uint32_t lo = 0, hi = farm->ndevs;

  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = strcmp(name, farm->devs[farm->by_name[mid]].name);

    if (c == 0)
      return farm->by_name[mid];
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return -1;
}

/* ---- serving ----------------------------------------------------------- */

/* Copy the part of [at, at + n) that overlaps [off, off + len) into buf;
 * src == NULL writes zeros there. */
static void
put(uint8_t *buf, uint64_t off, size_t len, uint64_t at, const void *src,
    uint64_t n)
{
  uint64_t lo = off > at ? off : at;
  uint64_t hi = off + len < at + n ? off + len : at + n;

  if (lo >= hi)
    return;
  if (src)
    memcpy(buf + (lo - off), (const uint8_t *)src + (lo - at), hi - lo);
  else
    memset(buf + (lo - off), 0, hi - lo);
}

static int
overlaps(uint64_t off, size_t len, uint64_t at, uint64_t n)
{
  return at < off + len && off < at + n;
}

/* One copy of text t placed at mda-relative o in an mda at start of size,
 * with lvm's zero padding to the next sector.  A packed text is unpacked
 * only when some of it is in the window: straight into the window when
 * all of it is (lvm's label scan reads the whole mda), else into a
 * scratch buffer.  0, or -1 (out of memory). */
static int
put_copy(const struct ff_farm *farm, uint8_t *buf, uint64_t off, size_t len,
         uint64_t start, uint64_t size, uint64_t o, const struct ff_text *t)
{
  /* the bytes before the end of the mda; the rest wraps to its sector 1 */
  uint64_t first = o + t->size <= size ? t->size : size - o;
  uint64_t end = first == t->size ? o + t->size : 512 + t->size - first;
  const char *src = t->buf;
  char small[4096], *own = NULL;
  int r = 0;

  if (t->zsize) {
    src = NULL;
    if (first == t->size && start + o >= off &&
        start + o + t->size <= off + len) {
      r = ff_farm_text_unpack(farm, t, (char *)buf + (start + o - off));
    } else if (overlaps(off, len, start + o, first) ||
               (first < t->size &&
                overlaps(off, len, start + 512, t->size - first))) {
      char *tmp = t->size <= sizeof small ? small : (own = malloc(t->size));

      if (!tmp)
        return ff_error("out of memory");
      r = ff_farm_text_unpack(farm, t, tmp);
      src = tmp;
    }
  }
  if (src && r == 0) {
    put(buf, off, len, start + o, src, first);
    if (first < t->size)
      put(buf, off, len, start + 512, src + first, t->size - first);
  }
  free(own);
  if (r < 0)
    return -1;
  put(buf, off, len, start + end, NULL, (end + 511) / 512 * 512 - end);
  return 0;
}

struct pv_view {
  const struct ff_device *d;
  const struct ff_pvfmt *fmt;
  const struct ff_vg *vg; /* NULL for orphans */
  uint64_t mda_start[2];
  uint64_t mda_size[2];
  unsigned nmdas;
  unsigned ignored; /* bit m: mda m ignored */
};

/* The writes mda m of the PV holds, [*first, *last): every kept one, or
 * an ignored mda's only, write 1 (vgcreate marked it and no later write
 * reached it). */
static void
mda_writes(const struct pv_view *v, unsigned m, uint32_t *first,
           uint32_t *last)
{
  *first = v->vg ? v->vg->first_kept : 0;
  *last = v->vg ? v->d->ncopies : 0;
  if (v->ignored >> m & 1) {
    *first = 0;
    if (*last > 1)
      *last = 1;
  }
}

/* 0, or -1 when a lazy farm cannot build the VG.  Give v back with
 * pv_view_done. */
static int
pv_view_init(const struct ff_farm *farm, const struct ff_device *d,
             struct pv_view *v)
{
  v->d = d;
  v->fmt = &farm->fmts[d->fmt];
  v->vg = NULL;
  if (d->role == FF_ROLE_PV && !(v->vg = ff_farm_vg_get(farm, d->vg)))
    return -1;
  v->nmdas = v->fmt->mda_copies;
  v->ignored = v->vg ? v->vg->pvs[d->pv].ignored : 0;
  v->mda_start[0] = FF_MDA0_START;
  v->mda_size[0] = v->fmt->mda_size;
  ff_mda1_place(v->fmt, d->size, &v->mda_start[1], &v->mda_size[1]);
  return 0;
}

static void
pv_view_done(const struct ff_farm *farm, struct pv_view *v)
{
  ff_farm_vg_put(farm, v->vg);
}

static int
read_pv_view(const struct ff_farm *farm, const struct ff_device *d,
             const struct pv_view *vp, uint8_t *buf, uint64_t off, size_t len)
{
  const struct pv_view v = *vp;
  uint8_t sec[512];

  if (overlaps(off, len, v.fmt->label_sector * 512ull, 512)) {
    struct ff_label_info li = {
      .uuid = d->uuid,
      .dev_size = d->size,
      .pe_start = v.fmt->pe_start,
      .nmdas = v.nmdas,
      .sector = v.fmt->label_sector,
      .used = v.vg != NULL,
      .ba_start = v.fmt->ba_start,
      .ba_size = v.fmt->ba_size,
    };

    for (unsigned m = 0; m < v.nmdas; m++) {
      li.mda_start[m] = v.mda_start[m];
      li.mda_size[m] = v.mda_size[m];
    }
    ff_label_build(sec, &li);
    if (d->damage == FF_DMG_LABEL_CRC)
      ff_put_le32(sec + 16, ff_get_le32(sec + 16) ^ 0xDEADBEEFu);
    put(buf, off, len, v.fmt->label_sector * 512ull, sec, 512);
  }

  for (unsigned m = 0; m < v.nmdas; m++) {
    uint64_t start = v.mda_start[m], size = v.mda_size[m];
    const struct ff_text *cur = NULL;
    uint32_t first, last;

    if (!overlaps(off, len, start, size))
      continue;
    mda_writes(&v, m, &first, &last);
    if (last)
      cur = &v.vg->texts[last - 1];
    if (overlaps(off, len, start, 512)) {
      if (cur)
        ff_mda_header_build(sec, start, size,
                            m ? cur->mda1_off : cur->mda0_off, cur->size,
                            cur->crc, v.ignored >> m & 1);
      else
        ff_mda_header_build(sec, start, size, 0, 0, 0, 0);
      if (m == 0 && d->damage == FF_DMG_MDA_CHECKSUM)
        ff_put_le32(sec, ff_get_le32(sec) ^ 0xDEADBEEFu);
      put(buf, off, len, start, sec, 512);
    }
    for (uint32_t w = first; w < last; w++) {
      const struct ff_text *t = &v.vg->texts[w];

      if (put_copy(farm, buf, off, len, start, size,
                   m ? t->mda1_off : t->mda0_off, t) < 0)
        return -1;
    }
  }

  /* what lvm wrote into LVs (the data area), later pieces on top */
  for (uint32_t i = 0; v.vg && i < v.vg->nblobs; i++) {
    const struct ff_blob *bl = &v.vg->blobs[i];
    uint64_t lo, hi;

    if (bl->pv != d->pv || !overlaps(off, len, bl->off, bl->len))
      continue;
    if (bl->bytes) {
      put(buf, off, len, bl->off, bl->bytes, bl->len);
      continue;
    }
    lo = off > bl->off ? off : bl->off;
    hi = off + len < bl->off + bl->len ? off + len : bl->off + bl->len;
    memset(buf + (lo - off), bl->fill, hi - lo);
  }
  return 0;
}

static int
read_pv(const struct ff_farm *farm, const struct ff_device *d, uint8_t *buf,
        uint64_t off, size_t len)
{
  struct pv_view v;
  int r;

  if (pv_view_init(farm, d, &v) < 0)
    return -1;
  r = read_pv_view(farm, d, &v, buf, off, len);
  pv_view_done(farm, &v);
  return r;
}

int
ff_farm_read_base(const struct ff_farm *farm, uint32_t dev, void *buf,
                  uint64_t off, size_t len)
{
  const struct ff_device *d;

  if (dev >= farm->ndevs)
    return ff_error("no device %u (the farm has %u)", dev, farm->ndevs);
  d = &farm->devs[ff_farm_target(farm, dev)];
  if (off > d->size || len > d->size - off)
    return ff_error("read of %zu bytes at %llu is beyond the end of %s "
                    "(%llu bytes)",
                    len, (unsigned long long)off, farm->devs[dev].name,
                    (unsigned long long)d->size);
  memset(buf, 0, len);
  switch (d->role) {
  case FF_ROLE_PV:
  case FF_ROLE_ORPHAN:
    return read_pv(farm, d, buf, off, len);
  case FF_ROLE_SIGNATURE:
    ff_sig_read((enum ff_sig_type)d->sig, d->size,
                ff_hash4(farm->seed, K_SIG, (uint64_t)(d - farm->devs), 0),
                buf, off, len);
    break;
  default:
    break;
  }
  return 0;
}

int
ff_farm_read(const struct ff_farm *farm, uint32_t dev, void *buf, uint64_t off,
             size_t len)
{
  if (ff_farm_read_base(farm, dev, buf, off, len) < 0)
    return -1;
  ff_overlay_apply(farm->overlay, ff_farm_target(farm, dev), buf, off, len);
  return 0;
}

int
ff_farm_write(struct ff_farm *farm, uint32_t dev, const void *buf,
              uint64_t off, size_t len)
{
  if (dev >= farm->ndevs)
    return ff_error("no device %u (the farm has %u)", dev, farm->ndevs);
  return ff_overlay_write(farm->overlay, ff_farm_target(farm, dev), buf, off,
                          len);
}

int
ff_farm_zero(struct ff_farm *farm, uint32_t dev, uint64_t off, uint64_t len)
{
  if (dev >= farm->ndevs)
    return ff_error("no device %u (the farm has %u)", dev, farm->ndevs);
  return ff_overlay_zero(farm->overlay, ff_farm_target(farm, dev), off, len);
}

/* ---- extents ------------------------------------------------------------ */

struct rangev {
  struct ff_range *v;
  size_t n, alloc;
  int failed;
};

static void
rv_add(struct rangev *rv, uint64_t off, uint64_t len)
{
  const uint64_t a = 4096;
  uint64_t lo = off / a * a, hi = (off + len + a - 1) / a * a;

  if (rv->n == rv->alloc) {
    size_t na = rv->alloc ? rv->alloc * 2 : 16;
    struct ff_range *nv = realloc(rv->v, na * sizeof *nv);

    if (!nv) {
      rv->failed = 1;
      return;
    }
    rv->v = nv;
    rv->alloc = na;
  }
  rv->v[rv->n].off = lo;
  rv->v[rv->n].len = hi - lo;
  rv->n++;
}

static int
cmp_range(const void *a, const void *b)
{
  const struct ff_range *x = a, *y = b;

  return x->off < y->off ? -1 : x->off > y->off;
}

static int
overlay_extent(void *opaque, uint64_t off, int is_zero)
{
  (void)is_zero; /* a zero marker still hides base bytes: report it */
  rv_add(opaque, off, FF_OVERLAY_BLOCK);
  return 0;
}

/* ff_farm_extents, exact in [lo, hi) only: the overlay's blocks outside
 * it are not looked at (the layout's few ranges all are). */
static int64_t
extents_in(const struct ff_farm *farm, uint32_t dev, uint64_t lo, uint64_t hi,
           struct ff_range *out, size_t max)
{
  struct rangev rv = {0};
  const struct ff_device *d;
  size_t n = 0;

  if (dev >= farm->ndevs)
    return ff_error("no device %u (the farm has %u)", dev, farm->ndevs);
  d = &farm->devs[ff_farm_target(farm, dev)];
  if (d->role == FF_ROLE_PV || d->role == FF_ROLE_ORPHAN) {
    struct pv_view v;

    if (pv_view_init(farm, d, &v) < 0)
      return -1;
    rv_add(&rv, v.fmt->label_sector * 512ull, 512);
    for (unsigned m = 0; m < v.nmdas; m++) {
      uint32_t first, last;

      rv_add(&rv, v.mda_start[m], 512);
      mda_writes(&v, m, &first, &last);
      for (uint32_t w = first; w < last; w++) {
        const struct ff_text *t = &v.vg->texts[w];
        uint64_t o = m ? t->mda1_off : t->mda0_off;

        if (o + t->size <= v.mda_size[m]) {
          rv_add(&rv, v.mda_start[m] + o, t->size);
        } else {
          rv_add(&rv, v.mda_start[m] + o, v.mda_size[m] - o);
          rv_add(&rv, v.mda_start[m] + 512, t->size - (v.mda_size[m] - o));
        }
      }
    }
    for (uint32_t i = 0; v.vg && i < v.vg->nblobs; i++)
      if (v.vg->blobs[i].pv == d->pv)
        rv_add(&rv, v.vg->blobs[i].off, v.vg->blobs[i].len);
    pv_view_done(farm, &v);
  } else if (d->role == FF_ROLE_SIGNATURE) {
    struct ff_range tmp[16];
    size_t k = ff_sig_extents((enum ff_sig_type)d->sig, d->size, tmp, 16);

    for (size_t i = 0; i < k && i < 16; i++)
      rv_add(&rv, tmp[i].off, tmp[i].len);
  }
  ff_overlay_foreach_in(farm->overlay, (uint32_t)(d - farm->devs), lo, hi - lo,
                        overlay_extent, &rv);
  if (rv.failed) {
    free(rv.v);
    return ff_error("out of memory");
  }
  if (rv.n)
    qsort(rv.v, rv.n, sizeof *rv.v, cmp_range);
  for (size_t i = 0; i < rv.n; i++) {
    struct ff_range r = rv.v[i];

    if (r.off >= d->size)
      continue;
    if (r.off + r.len > d->size)
      r.len = d->size - r.off;
    if (n && rv.v[n - 1].off + rv.v[n - 1].len >= r.off) {
      if (r.off + r.len > rv.v[n - 1].off + rv.v[n - 1].len)
        rv.v[n - 1].len = r.off + r.len - rv.v[n - 1].off;
      continue;
    }
    rv.v[n++] = r;
  }
  for (size_t i = 0; i < n && i < max; i++)
    out[i] = rv.v[i];
  free(rv.v);
  return (int64_t)n;
}

int64_t
ff_farm_extents(const struct ff_farm *farm, uint32_t dev, struct ff_range *out,
                size_t max)
{
  return extents_in(farm, dev, 0, UINT64_MAX, out, max);
}

void
ff_farm_describe(const struct ff_farm *farm, uint32_t dev, char *buf,
                 size_t len)
{
  const struct ff_device *d = &farm->devs[dev];
  const char *dmg = d->damage != FF_DMG_NONE && d->role != FF_ROLE_DUPLICATE
                      ? ff_damage_name((enum ff_damage)d->damage)
                      : NULL;

  switch (d->role) {
  case FF_ROLE_PV: {
    const struct ff_vg *vg = ff_farm_vg_get(farm, d->vg);

    if (!vg) {
      snprintf(buf, len, "PV %u of a VG (%s)", d->pv + 1, ff_errmsg());
      break;
    }
    snprintf(buf, len, "PV %u of %u of VG %s%s%s", d->pv + 1, vg->npvs,
             vg->name, dmg ? ", damaged: " : "", dmg ? dmg : "");
    ff_farm_vg_put(farm, vg);
    break;
  }
  case FF_ROLE_ORPHAN:
    snprintf(buf, len, "orphan PV%s%s", dmg ? ", damaged: " : "",
             dmg ? dmg : "");
    break;
  case FF_ROLE_BLANK:
    snprintf(buf, len, "blank");
    break;
  case FF_ROLE_SIGNATURE:
    snprintf(buf, len, "%s signature", ff_sig_name((enum ff_sig_type)d->sig));
    break;
  case FF_ROLE_DUPLICATE:
    snprintf(buf, len, "duplicate of %s (same PV UUID)",
             farm->devs[d->alias].name);
    break;
  }
}

/* ---- accessors ---------------------------------------------------------- */

uint32_t
ff_farm_ndevs(const struct ff_farm *farm)
{
  return farm->ndevs;
}

uint64_t
ff_farm_seed(const struct ff_farm *farm)
{
  return farm->seed;
}

uint32_t
ff_farm_nvgs(const struct ff_farm *farm)
{
  return farm->nvgs;
}

uint64_t
ff_farm_nlvs(const struct ff_farm *farm)
{
  uint64_t n = 0;

  for (uint32_t i = 0; i < farm->nvgs; i++) {
    const struct ff_vg *vg = ff_farm_vg_get(farm, i);

    for (uint32_t l = 0; vg && l < vg->nlvs; l++)
      n += !vg->lvs[l].f.removed;
    ff_farm_vg_put(farm, vg);
  }
  return n;
}

const char *
ff_farm_dev_name(const struct ff_farm *farm, uint32_t dev)
{
  return farm->devs[dev].name;
}

uint64_t
ff_farm_dev_size(const struct ff_farm *farm, uint32_t dev)
{
  return farm->devs[dev].size;
}

enum ff_role
ff_farm_dev_role(const struct ff_farm *farm, uint32_t dev)
{
  return (enum ff_role)farm->devs[dev].role;
}

const char *
ff_farm_dev_uuid(const struct ff_farm *farm, uint32_t dev)
{
  return farm->devs[dev].uuid;
}

uint64_t
ff_farm_fingerprint(const struct ff_farm *farm)
{
  return farm->fingerprint;
}

struct ff_overlay *
ff_farm_overlay(const struct ff_farm *farm)
{
  return farm->overlay;
}

int
ff_farm_save_overlay(const struct ff_farm *farm, const char *path)
{
  return ff_overlay_save(farm->overlay, path, farm->fingerprint);
}

int
ff_farm_load_overlay(struct ff_farm *farm, const char *path)
{
  return ff_overlay_load(farm->overlay, path, farm->fingerprint);
}

/* ff_farm_extents_all, exact in [lo, hi) only (extents_in). */
static int64_t
extents_all_in(const struct ff_farm *farm, uint32_t dev, uint64_t lo,
               uint64_t hi, struct ff_range **out)
{
  struct ff_range *r = NULL;
  int64_t n;
  size_t room = 0;

  *out = NULL;
  for (;;) {
    n = extents_in(farm, dev, lo, hi, r, room);
    if (n < 0) {
      free(r);
      return -1;
    }
    if ((uint64_t)n <= room)
      break;
    /* Count, then fetch with some slack for writes landing meanwhile. */
    free(r);
    room = (size_t)n + 16;
    r = malloc(room * sizeof *r);
    if (!r)
      return ff_error("extents of device %u: out of memory", dev);
  }
  if (n == 0) {
    free(r);
    r = NULL;
  }
  *out = r;
  return n;
}

int64_t
ff_farm_extents_all(const struct ff_farm *farm, uint32_t dev,
                    struct ff_range **out)
{
  return extents_all_in(farm, dev, 0, UINT64_MAX, out);
}

int
ff_farm_zero_sparse(struct ff_farm *farm, uint32_t dev, uint64_t off,
                    uint64_t len)
{
  struct ff_range *r;
  uint64_t end = off + len;
  int64_t n;
  int rc = 0;

  if (dev >= farm->ndevs || off > farm->devs[dev].size ||
      len > farm->devs[dev].size - off)
    return ff_farm_zero(farm, dev, off, len); /* its range error */
  /* only the overlay blocks in the range: a zero costs what its range
   * holds, not what the whole device's overlay does */
  n = extents_all_in(farm, dev, off, end, &r);
  if (n < 0)
    return -1;
  for (int64_t i = 0; i < n && rc == 0; i++) {
    uint64_t s = r[i].off > off ? r[i].off : off;
    uint64_t e = r[i].off + r[i].len < end ? r[i].off + r[i].len : end;

    if (s < e)
      rc = ff_farm_zero(farm, dev, s, e - s);
  }
  free(r);
  return rc;
}
