/* fusefarm fuzz targets: shared checks (see fuzz-common.h). */
#include "fuzz-common.h"
#include "ff-error.h"
#include "ff-farm-int.h"
#include "ff-pvlayout-int.h"
#include "ff-spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Limits of a farm built for every input: a few milliseconds each. */
#define MAX_DEVICES   256
#define MAX_VGS       32
#define MAX_LVS       512
#define MAX_TEXT_COST 32768.0 /* metadata writes x (PVs + LV segments) */
#define MAX_CHECKED   48      /* devices read per farm */
#define MAX_PROBE     65536   /* bytes read per probe */

void
ff_fuzz_fail(const char *file, int line, const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, "%s:%d: fuzz invariant violated: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(last core error: %s)\n", ff_errmsg());
  abort();
}

char *
ff_fuzz_text(const uint8_t *data, size_t size)
{
  char *t = malloc(size + 1);

  if (!t)
    abort();
  memcpy(t, data, size);
  t[size] = '\0';
  return t;
}

void
ff_fuzz_check_error(const char *name)
{
  const char *msg = ff_errmsg();
  size_t n = strlen(name);

  if (strncmp(msg, name, n) || msg[n] != ':')
    ff_fuzz_fail(__FILE__, __LINE__, "message does not start with '%s:': %s",
                 name, msg);
}

int
ff_fuzz_spec_buildable(const struct ff_spec *sp)
{
  uint64_t devs = ff_spec_devices(sp);
  double vgs = 0, lvs = 0, cost = 0;

  for (unsigned i = 0; i < sp->nvgs; i++) {
    const struct ff_spec_vg *g = &sp->vgs[i];
    double nl = 0, writes;

    for (unsigned j = 0; j < g->nlvs; j++)
      nl += g->lvs[j].count;
    writes = g->seqno ? g->seqno : 1 + nl;
    vgs += g->count;
    lvs += g->count * nl;
    cost += g->count * writes * (1.0 + g->pvs + nl * g->pvs);
  }
  /* ff_farm_new rejects these before allocating anything. */
  if (devs == 0 || devs > 1000000 || vgs > 1000000)
    return 1;
  return devs <= MAX_DEVICES && vgs <= MAX_VGS && lvs <= MAX_LVS &&
         cost <= MAX_TEXT_COST;
}

/* The ranges of dev that may hold non-zero bytes, checked for order and
 * bounds.  Caller frees. */
static struct ff_range *
extents(const struct ff_farm *farm, uint32_t dev, size_t *count)
{
  const struct ff_device *d = &farm->devs[ff_farm_target(farm, dev)];
  int64_t n = ff_farm_extents(farm, dev, NULL, 0), n2;
  struct ff_range *r;

  FF_FUZZ_CHECK(n >= 0);
  r = calloc((size_t)n + 1, sizeof *r);
  if (!r)
    abort();
  n2 = ff_farm_extents(farm, dev, r, (size_t)n);
  FF_FUZZ_CHECK(n2 == n);
  for (int64_t i = 0; i < n; i++) {
    FF_FUZZ_CHECK(r[i].len > 0);
    FF_FUZZ_CHECK(r[i].off < d->size && r[i].len <= d->size - r[i].off);
    FF_FUZZ_CHECK(i == 0 || r[i - 1].off + r[i - 1].len < r[i].off);
  }
  *count = (size_t)n;
  return r;
}

void
ff_fuzz_check_read(const struct ff_farm *farm, uint32_t dev, uint64_t off,
                   uint64_t len, uint64_t split)
{
  uint32_t target = ff_farm_target(farm, dev);
  uint64_t size = farm->devs[target].size;
  struct ff_range *ext;
  size_t next = 0;
  uint8_t *a, *b;

  if (off > size || len > size - off) {
    size_t n = len < MAX_PROBE ? (size_t)len : MAX_PROBE;

    a = malloc(n ? n : 1);
    if (!a)
      abort();
    if (ff_farm_read(farm, dev, a, off, (size_t)len) == 0)
      ff_fuzz_fail(__FILE__, __LINE__,
                   "read of %llu bytes at %llu of %s (%llu bytes) succeeded",
                   (unsigned long long)len, (unsigned long long)off,
                   farm->devs[dev].name, (unsigned long long)size);
    free(a);
    return;
  }
  FF_FUZZ_CHECK(len <= 16 * MAX_PROBE && split <= len);
  a = malloc(len ? len : 1);
  b = malloc(len ? len : 1);
  if (!a || !b)
    abort();
  FF_FUZZ_CHECK(ff_farm_read(farm, dev, a, off, len) == 0);
  FF_FUZZ_CHECK(ff_farm_read_base(farm, dev, b, off, len) == 0);
  FF_FUZZ_CHECK(memcmp(a, b, len) == 0); /* nothing was written */
  memset(b, 0xA5, len);
  FF_FUZZ_CHECK(ff_farm_read(farm, dev, b, off, split) == 0);
  FF_FUZZ_CHECK(ff_farm_read(farm, dev, b + split, off + split, len - split) ==
                0);
  if (memcmp(a, b, len))
    ff_fuzz_fail(__FILE__, __LINE__,
                 "%s: [%llu, +%llu) read whole differs from two pieces split "
                 "at +%llu",
                 farm->devs[dev].name, (unsigned long long)off,
                 (unsigned long long)len, (unsigned long long)split);
  if (target != dev) {
    FF_FUZZ_CHECK(ff_farm_read(farm, target, b, off, len) == 0);
    FF_FUZZ_CHECK(memcmp(a, b, len) == 0);
  }

  /* Every non-zero byte lies inside an extent. */
  ext = extents(farm, dev, &next);
  for (uint64_t i = 0, e = 0; i < len; i++) {
    if (!a[i])
      continue;
    while (e < next && ext[e].off + ext[e].len <= off + i)
      e++;
    if (e == next || ext[e].off > off + i)
      ff_fuzz_fail(__FILE__, __LINE__,
                   "%s: byte %llu is 0x%02x but lies in no extent",
                   farm->devs[dev].name, (unsigned long long)(off + i), a[i]);
  }
  free(ext);
  free(a);
  free(b);
}

/* Offsets where pieces of a PV meet. */
static void
check_device(const struct ff_farm *farm, uint32_t dev)
{
  const struct ff_device *d = &farm->devs[ff_farm_target(farm, dev)];
  uint64_t size = d->size, probe = size < 8192 ? size : 8192;
  struct ff_range *ext;
  size_t n;
  char desc[256];

  ff_farm_describe(farm, dev, desc, sizeof desc);
  FF_FUZZ_CHECK(desc[0] != '\0');
  FF_FUZZ_CHECK(ff_farm_lookup(farm, farm->devs[dev].name) == dev);

  ff_fuzz_check_read(farm, dev, 0, probe, probe / 3);
  ff_fuzz_check_read(farm, dev, size - probe, probe, probe / 2);
  ff_fuzz_check_read(farm, dev, size, 0, 0);
  ff_fuzz_check_read(farm, dev, size, 1, 0);
  ff_fuzz_check_read(farm, dev, size - 1, 2, 0);
  ff_fuzz_check_read(farm, dev, UINT64_MAX, 1, 0);
  ff_fuzz_check_read(farm, dev, 0, UINT64_MAX, 0);
  if (d->role == FF_ROLE_PV || d->role == FF_ROLE_ORPHAN) {
    const struct ff_pvfmt *f = &farm->fmts[d->fmt];
    uint64_t at[] = {f->label_sector * 512ull, FF_MDA0_START,
                     FF_MDA0_START + f->mda_size, f->pe_start};
    uint64_t m1, m1size;
    uint8_t sec[512];

    /* The pieces lie in order, inside the device: label, mda0, data
     * area, mda1 (a PV with mda_copies 0 has the label alone). */
    ff_mda1_place(f, size, &m1, &m1size);
    FF_FUZZ_CHECK(f->label_sector < 4 && f->mda_copies <= 2);
    FF_FUZZ_CHECK(f->mda_copies == 0 || f->mda_size >= 32768);
    FF_FUZZ_CHECK(f->mda_copies == 0 ||
                  f->mda_size <= f->pe_start - FF_MDA0_START);
    FF_FUZZ_CHECK(f->pe_start <= size);
    FF_FUZZ_CHECK(
      f->mda_copies < 2 ||
      (m1size >= f->mda_size && m1 >= f->pe_start && m1 + m1size == size));
    if (d->role == FF_ROLE_PV) {
      const struct ff_vg *vg = &farm->vgs[d->vg];
      uint64_t pes = vg->pvs[d->pv].pe_count;

      FF_FUZZ_CHECK(pes >= 1 && pes <= (size - f->pe_start) / vg->extent_size);
      FF_FUZZ_CHECK(f->mda_copies < 2 ||
                    pes <= (m1 - f->pe_start) / vg->extent_size);
    }

    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
      uint64_t lo = at[i] > 700 ? at[i] - 700 : 0;

      if (lo + 1400 <= size)
        ff_fuzz_check_read(farm, dev, lo, 1400, at[i] - lo);
    }
    /* The label and mda0's header are where lvm looks for them. */
    FF_FUZZ_CHECK(
      ff_farm_read(farm, dev, sec, f->label_sector * 512ull, 512) == 0);
    FF_FUZZ_CHECK(memcmp(sec, FF_LABEL_ID, 8) == 0);
    FF_FUZZ_CHECK(ff_farm_read(farm, dev, sec, FF_MDA0_START, 512) == 0);
    FF_FUZZ_CHECK(f->mda_copies == 0 ||
                  memcmp(sec + 4, FF_MDA_MAGIC, 16) == 0);
  }

  ext = extents(farm, dev, &n);
  for (size_t i = 0; i < n && i < 16; i++) {
    uint64_t len = ext[i].len < MAX_PROBE ? ext[i].len : MAX_PROBE;

    ff_fuzz_check_read(farm, dev, ext[i].off, len, len / 2);
    if (ext[i].off + ext[i].len < size)
      ff_fuzz_check_read(farm, dev, ext[i].off + ext[i].len - 1, 2, 1);
  }
  free(ext);
}

struct ff_farm *
ff_fuzz_build_farm(const struct ff_spec *sp, const char *name)
{
  struct ff_farm *farm;

  if (!ff_fuzz_spec_buildable(sp))
    return NULL;
  farm = ff_farm_new(sp);
  if (!farm) {
    ff_fuzz_check_error(name);
    return NULL;
  }
  FF_FUZZ_CHECK(farm->ndevs == ff_spec_devices(sp));
  {
    uint8_t byte;

    FF_FUZZ_CHECK(ff_farm_read(farm, farm->ndevs, &byte, 0, 1) < 0);
  }
  for (uint32_t i = 0; i < farm->ndevs; i++)
    if (i < MAX_CHECKED / 2 || farm->ndevs - i <= MAX_CHECKED / 2)
      check_device(farm, i);
  return farm;
}
