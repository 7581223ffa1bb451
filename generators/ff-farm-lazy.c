/* fusefarm: a farm whose VGs are built again when read (ff_farm_new_lazy).
 *
 * What a farm holds is mostly its VGs: their PV and LV tables and the
 * metadata texts, packed or not (docs/benchmarks.md "What a farm holds":
 * ~1.4 KiB a device packed).  A VG is a pure function of the spec, its
 * index and its first device's index (UUIDs, names and times all come
 * from the seed and those), so a lazy farm keeps just those two numbers
 * a VG and the spec, and builds a VG again when a read reaches one of its
 * PVs: ~20 us, the cost of one small read through FUSE or NBD.
 *
 * The VGs built are kept in a small cache, the least recently used one
 * dropped first.  lvm reads a PV in a handful of reads one after the
 * other (label, mda header, text), so one build serves them all; a scan
 * of every PV builds each VG once per pass.  A reader holds its VG
 * (ff_farm_vg_get .. _put) while it copies from it, so a VG is never
 * dropped under a read; when every slot is held, the VG is built aside
 * (the lone list, where other readers of it find it too) and freed when
 * its last reader is done.
 *
 * The cache takes one mutex; a VG is built with it held (the build adds
 * nothing to the farm: the thin-pool images and kept strings it looks up
 * were made by the first build).  Reads that miss wait for each other;
 * reads that hit hold it for a lookup in NSLOTS entries.
 */
#include "ff-farm-int.h"
#include "ff-error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* VGs kept built: more than the threads that read at once (nbdkit's 16,
 * the daemon's workers), few enough to stay a few hundred KiB. */
#define NSLOTS 32

struct slot {
  struct ff_vg vg;
  uint32_t v;        /* which VG; FF_NONE: empty */
  uint32_t refs;     /* readers holding it */
  uint64_t used;     /* the cache's clock at the last get; 0: empty */
  uint8_t lone;      /* built when every slot was held: on the lone list,
                      * freed when its last reader puts it */
  struct slot *next; /* lone ones: the list */
};

struct ff_lazy {
  struct ff_spec *spec;
  struct ff_lazy_rec *recs; /* [farm->nvgs] */
  uint32_t *gfi;            /* [spec->nvgs] */
  pthread_mutex_t lock;
  uint64_t clock, builds;
  struct slot slots[NSLOTS];
  struct slot *lone; /* VGs built past the slots, each held */
};

int
ff_lazy_attach(struct ff_farm *farm, struct ff_spec *spec,
               struct ff_lazy_rec *recs, uint32_t *gfi)
{
  struct ff_lazy *lz = calloc(1, sizeof *lz);

  if (!lz) {
    free(recs);
    free(gfi);
    ff_spec_free(spec);
    return ff_error("out of memory");
  }
  lz->spec = spec;
  lz->recs = recs;
  lz->gfi = gfi;
  pthread_mutex_init(&lz->lock, NULL);
  for (unsigned i = 0; i < NSLOTS; i++)
    lz->slots[i].v = FF_NONE;
  farm->lazy = lz;
  return 0;
}

void
ff_lazy_free(struct ff_lazy *lz)
{
  if (!lz)
    return;
  for (unsigned i = 0; i < NSLOTS; i++)
    if (lz->slots[i].v != FF_NONE)
      ff_fb_vg_clear(&lz->slots[i].vg, 0);
  pthread_mutex_destroy(&lz->lock);
  ff_spec_free(lz->spec);
  free(lz->recs);
  free(lz->gfi);
  free(lz);
}

uint64_t
ff_lazy_builds(const struct ff_farm *farm)
{
  uint64_t n;

  if (!farm->lazy)
    return 0;
  pthread_mutex_lock(&farm->lazy->lock);
  n = farm->lazy->builds;
  pthread_mutex_unlock(&farm->lazy->lock);
  return n;
}

/* Build VG v into s.  Called with the lock held. */
static int
build(const struct ff_farm *farm, struct ff_lazy *lz, struct slot *s,
      uint32_t v)
{
  const struct ff_lazy_rec *rec = &lz->recs[v];

  memset(&s->vg, 0, sizeof s->vg);
  /* the build only looks up what the first one added to the farm */
  if (ff_fb_vg_rebuild((struct ff_farm *)farm, lz->spec, rec, lz->gfi[rec->gi],
                       v, &s->vg) < 0)
    return -1;
  lz->builds++;
  s->v = v;
  s->refs = 1;
  s->used = ++lz->clock;
  return 0;
}

const struct ff_vg *
ff_farm_vg_get(const struct ff_farm *farm, uint32_t v)
{
  struct ff_lazy *lz = farm->lazy;
  struct slot *s, *victim = NULL;

  if (!lz)
    return &farm->vgs[v];
  pthread_mutex_lock(&lz->lock);
  for (unsigned i = 0; i < NSLOTS; i++) {
    s = &lz->slots[i];
    if (s->v == v) {
      s->refs++;
      s->used = ++lz->clock;
      pthread_mutex_unlock(&lz->lock);
      return &s->vg;
    }
    /* an empty slot first (used 0), else the one read longest ago */
    if (s->refs == 0 && (!victim || s->used < victim->used))
      victim = s;
  }
  for (s = lz->lone; s; s = s->next)
    if (s->v == v) {
      s->refs++;
      pthread_mutex_unlock(&lz->lock);
      return &s->vg;
    }
  if (victim) {
    if (victim->v != FF_NONE) {
      ff_fb_vg_clear(&victim->vg, 0);
      victim->v = FF_NONE;
      victim->used = 0;
    }
    s = victim;
  } else if (!(s = calloc(1, sizeof *s))) {
    pthread_mutex_unlock(&lz->lock);
    ff_error("out of memory");
    return NULL;
  } else {
    s->lone = 1;
  }
  if (build(farm, lz, s, v) < 0) {
    s->v = FF_NONE;
    s->refs = 0;
    s->used = 0;
    if (s->lone)
      free(s);
    pthread_mutex_unlock(&lz->lock);
    return NULL;
  }
  if (s->lone) {
    s->next = lz->lone;
    lz->lone = s;
  }
  pthread_mutex_unlock(&lz->lock);
  return &s->vg;
}

void
ff_farm_vg_put(const struct ff_farm *farm, const struct ff_vg *vg)
{
  struct ff_lazy *lz = farm->lazy;
  /* vg is the first member of its slot */
  struct slot *s = (struct slot *)(void *)(uintptr_t)vg;

  if (!lz || !vg)
    return;
  pthread_mutex_lock(&lz->lock);
  if (--s->refs == 0 && s->lone) {
    struct slot **pp = &lz->lone;

    while (*pp != s)
      pp = &(*pp)->next;
    *pp = s->next;
    ff_fb_vg_clear(&s->vg, 0);
    free(s);
  }
  pthread_mutex_unlock(&lz->lock);
}

const void *
ff_farm_hold(const struct ff_farm *farm, uint32_t dev)
{
  const struct ff_device *d;

  if (!farm->lazy || dev >= farm->ndevs)
    return NULL;
  d = &farm->devs[ff_farm_target(farm, dev)];
  return d->role == FF_ROLE_PV ? ff_farm_vg_get(farm, d->vg) : NULL;
}

void
ff_farm_release(const struct ff_farm *farm, const void *hold)
{
  ff_farm_vg_put(farm, hold);
}
