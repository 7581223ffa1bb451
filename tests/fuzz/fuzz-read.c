/* Fuzz the farm's read path.  The input's first bytes generate a small
 * spec (or choose the built-in default farm); the farm is built three
 * times, the second time packed as the servers build it
 * (ff_farm_new_packed), the third lazy as the plugin does
 * (ff_farm_new_lazy, from a second load of the spec);
 * the rest of the input is a sequence of reads of any device at offsets
 * near the places where the label, the metadata areas, the data area and
 * the device's end meet, and past the end, of any length.  Each read is
 * checked by ff_fuzz_check_read (fails exactly when past the end,
 * repeatable, whole equals piecewise, non-zero bytes inside the extents)
 * and against the other builds (same spec, same bytes, texts packed,
 * VGs built again or not). */
#include "fuzz-common.h"
#include "ff-error.h"
#include "ff-farm-int.h"
#include "ff-pvlayout-int.h"
#include "ff-spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME      "read.conf"
#define MAX_READS 48
#define MAX_LEN   (1u << 20)

/* The input as a stream of numbers; zeros once it runs out. */
struct src {
  const uint8_t *p;
  size_t n;
};

static uint64_t
take(struct src *s, unsigned bytes)
{
  uint64_t v = 0;

  for (unsigned i = 0; i < bytes; i++) {
    v = v << 8 | (s->n ? *s->p : 0);
    if (s->n) {
      s->p++;
      s->n--;
    }
  }
  return v;
}

/* One of n choices, 0..n-1. */
static unsigned
pick(struct src *s, unsigned n)
{
  return (unsigned)(take(s, n > 256 ? 2 : 1) % n);
}

struct text {
  char buf[8192];
  size_t len;
};

__attribute__((format(printf, 2, 3))) static void
add(struct text *t, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
  va_end(ap);
  if (n > 0)
    t->len += (size_t)n < sizeof t->buf - t->len ? (size_t)n
                                                 : sizeof t->buf - t->len - 1;
}

static const char *const sizes[] = {"4M",    "5M",      "8M", "64M",
                                    "65M",   "1G",      "1T", "16T",
                                    "70656", "1052672", "2M", "3M"};

/* PV layout keys: mostly the defaults, sometimes the smallest legal ones,
 * sometimes pe_start and mda_size off the usual 1 MiB grid. */
static void
gen_pvfmt(struct src *s, struct text *t)
{
  static const char *const layouts[] = {
    "",
    "pe_start = 36864; ",
    "pe_start = 36864; mda_size = 32768; ",
    "pe_start = \"2M\"; mda_size = \"1M\"; ",
    "pe_start = 70144; mda_size = 66048; ",
    "pe_start = \"1M\"; mda_size = 40960; "};

  add(t, "%s", layouts[pick(s, 6)]);
  /* mda_copies 0 to 2 (a VG with no mda at all is refused) */
  add(t, "mda_copies = %u; label_sector = %u; ", pick(s, 3), pick(s, 4));
}

static void
gen_spec(struct src *s, struct text *t)
{
  static const char *const damages[] = {
    "none",         "bad-label-crc", "bad-mda-checksum", "bad-metadata-text",
    "duplicate-pv", "missing-pv",    "stale-metadata"};
  static const char *const extents[] = {"1K", "4K", "64K", "1M", "4M"};
  static const char *const sigs[] = {"mbr", "gpt", "ext4", "xfs", "md"};
  unsigned nvg = pick(s, 3), norph = pick(s, 3), nsig = pick(s, 3);

  add(t, "seed = %llu; device_size = \"%s\";\n",
      (unsigned long long)take(s, 4), sizes[pick(s, 8)]);
  if (nvg) {
    add(t, "vgs = (");
    for (unsigned i = 0; i < nvg; i++) {
      unsigned pvs = 1 + pick(s, 4), nlv = pick(s, 4);

      add(t, "%s{ count = %u; pvs = %u; extent_size = \"%s\"; ", i ? ", " : "",
          1 + pick(s, 2), pvs, extents[pick(s, 5)]);
      if (pick(s, 3) == 0)
        add(t, "device_size = \"%s\"; ", sizes[pick(s, 12)]);
      gen_pvfmt(s, t);
      if (pvs >= 2 && pick(s, 2))
        add(t, "damage = \"%s\"; ", damages[pick(s, 7)]);
      else if (pick(s, 4) == 0)
        add(t, "damage = \"%s\"; ", damages[pick(s, 2) ? 3 : 4]);
      if (pick(s, 3) == 0)
        add(t, "history = %u; ", pick(s, 4));
      if (pick(s, 3) == 0)
        add(t, "seqno = %u; ", 2 + nlv * 3 + pick(s, 8));
      if (nlv) {
        add(t, "lvs = (");
        for (unsigned l = 0; l < nlv; l++) {
          add(t, "%s{ count = %u; ", l ? ", " : "", 1 + pick(s, 3));
          if (pvs >= 2 && pick(s, 2))
            add(t, "type = \"striped\"; stripes = %u; stripe_size = \"%s\"; ",
                2 + pick(s, pvs - 1), pick(s, 2) ? "4K" : "64K");
          if (pick(s, 2))
            add(t, "fill = %.2f; }", 0.01 + pick(s, 30) / 100.0);
          else
            add(t, "size = %u; }", 1 + (unsigned)take(s, 3));
        }
        add(t, "); ");
      }
      add(t, "}");
    }
    add(t, ");\n");
  }
  if (norph) {
    add(t, "orphans = (");
    for (unsigned i = 0; i < norph; i++) {
      add(t, "%s{ count = %u; ", i ? ", " : "", 1 + pick(s, 2));
      if (pick(s, 2))
        add(t, "device_size = \"%s\"; ", sizes[pick(s, 12)]);
      gen_pvfmt(s, t);
      add(t, "damage = \"%s\"; }", damages[pick(s, 3)]);
    }
    add(t, ");\n");
  }
  if (pick(s, 2))
    add(t, "blanks = ({ count = %u; device_size = \"%s\"; });\n",
        1 + pick(s, 2), sizes[pick(s, 12)]);
  if (nsig) {
    add(t, "signatures = (");
    for (unsigned i = 0; i < nsig; i++)
      add(t, "%s{ type = \"%s\"; device_size = \"%s\"; }", i ? ", " : "",
          sigs[pick(s, 5)], sizes[pick(s, 12)]);
    add(t, ");\n");
  }
}

/* An offset near one of the places pieces of the device meet. */
static uint64_t
gen_offset(struct src *s, const struct ff_farm *farm,
           const struct ff_device *d)
{
  uint64_t size = d->size, at = 0, delta = take(s, 2) % 1400;
  unsigned where = pick(s, 9);

  if (d->role == FF_ROLE_PV || d->role == FF_ROLE_ORPHAN) {
    const struct ff_pvfmt *f = &farm->fmts[d->fmt];
    uint64_t m1, m1size;

    ff_mda1_place(f, size, &m1, &m1size);
    switch (where) {
    case 1:
      at = f->label_sector * 512ull;
      break;
    case 2:
      at = FF_MDA0_START + 512;
      break;
    case 3:
      at = FF_MDA0_START + f->mda_size;
      break;
    case 4:
      at = f->pe_start;
      break;
    case 5:
      at = m1 ? m1 + 512 : FF_MDA0_START;
      break;
    default:
      break;
    }
  }
  switch (where) {
  case 0:
    return take(s, 8) % (size + 1);
  case 6:
    return size > delta ? size - delta : 0;
  case 7:
    return size + delta;
  case 8:
    return UINT64_MAX - delta;
  default:
    return at > 700 ? at - 700 + delta : delta;
  }
}

static uint64_t
gen_length(struct src *s, uint64_t size, uint64_t off)
{
  switch (pick(s, 6)) {
  case 0:
    return 0;
  case 1:
    return 1 + take(s, 2) % 1024;
  case 2:
    return 512 * (1 + take(s, 1) % 16);
  case 3:
    return take(s, 3) % (256 * 1024);
  case 4: /* to the end */
    return off < size && size - off <= MAX_LEN ? size - off : 4096;
  default:
    return UINT64_MAX - take(s, 2);
  }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct src s = {data, size};
  struct text *t = calloc(1, sizeof *t);
  struct ff_spec *sp, *sp2;
  struct ff_farm *a, *b, *c;

  if (!t)
    abort();
  if (pick(&s, 8) == 0)
    add(t, "%s", ff_spec_builtin_default);
  else
    gen_spec(&s, t);
  sp = ff_spec_load_string(t->buf, NAME);
  sp2 = sp ? ff_spec_load_string(t->buf, NAME) : NULL;
  free(t);
  if (!sp) {
    ff_fuzz_check_error(NAME);
    return 0;
  }
  FF_FUZZ_CHECK(sp2 != NULL);
  a = ff_fuzz_build_farm(sp, NAME);
  b = a ? ff_farm_new_packed(sp) : NULL;
  ff_spec_free(sp);
  if (!a) {
    ff_spec_free(sp2);
    return 0;
  }
  c = ff_farm_new_lazy(sp2);
  FF_FUZZ_CHECK(b && a->fingerprint == b->fingerprint);
  FF_FUZZ_CHECK(c && a->fingerprint == c->fingerprint);

  for (unsigned i = 0; i < MAX_READS && s.n; i++) {
    uint32_t dev = pick(&s, a->ndevs);
    const struct ff_device *d = &a->devs[ff_farm_target(a, dev)];
    uint64_t off = gen_offset(&s, a, d);
    uint64_t len = gen_length(&s, d->size, off);
    uint64_t split = take(&s, 4) % (len < MAX_LEN ? len + 1 : 1);

    if (off <= d->size && len <= d->size - off && len > MAX_LEN)
      len = MAX_LEN;
    ff_fuzz_check_read(a, dev, off, len, split);
    if (off <= d->size && len <= d->size - off) {
      uint8_t *x = malloc(len + 1), *y = malloc(len + 1);

      if (!x || !y)
        abort();
      FF_FUZZ_CHECK(ff_farm_read(a, dev, x, off, len) == 0);
      FF_FUZZ_CHECK(ff_farm_read(b, dev, y, off, len) == 0);
      FF_FUZZ_CHECK(memcmp(x, y, len) == 0);
      FF_FUZZ_CHECK(ff_farm_read(c, dev, y, off, len) == 0);
      FF_FUZZ_CHECK(memcmp(x, y, len) == 0);
      free(x);
      free(y);
    }
  }
  ff_farm_free(a);
  ff_farm_free(b);
  ff_farm_free(c);
  return 0;
}
