/* fusefarm: building a farm from a spec (see ff-farm.h for the
 * invariants and the thread model): the devices, the VGs with their PV
 * and LV tables, the LV allocation, every metadata write of each VG and
 * its placement in the metadata areas, the checks that the result is one
 * lvm would accept.  Serving the built farm's bytes is ff-farm-read.c;
 * the layout both share is ff-farm-int.h.
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

/* ---- building ---------------------------------------------------------- */

/* A farm-owned copy of s (NULL stays NULL); NULL with ff_errmsg() when out
 * of memory, which the caller tells from s == NULL. */
static const char *
keep(struct ff_farm *farm, const char *s)
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

struct bctx {
  const struct ff_spec *spec;
  struct ff_farm *farm;
  uint32_t d; /* next device index */
  uint32_t v; /* next VG index */
};

/* "file:line: path: message" for a group of the spec. */
__attribute__((format(printf, 4, 5))) static int
berr(const struct bctx *b, int line, const char *path, const char *fmt, ...)
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
  struct ff_device *dev = &b->farm->devs[b->d];

  dev->name =
    names ? strdup(names[k]) : ff_format_uint(b->spec->device_name, b->d);
  if (!dev->name) {
    ff_error("out of memory");
    return NULL;
  }
  dev->size = size;
  dev->role = (uint8_t)role;
  dev->vg = dev->pv = dev->alias = dev->fmt = FF_NONE;
  b->d++;
  return dev;
}

/* lvm2 2.03.16's allocator for one new LV (lvcreate), as
 * lib/metadata/lv_manip.c (_allocate and what it calls) and pv_map.c do
 * it, for what a farm LV can be: linear or striped on PV areas, no
 * mirror logs, no parity, no cling tags, no PV list on the command line,
 * allocation/maximise_cling = 1 (the default), no earlier segment to
 * extend.  Each lvcreate reads the VG afresh, so the free space of each PV
 * is its maximal free runs, one area each.
 *
 * The structure follows lvm's so that every tie falls the same way:
 * - each PV's areas are kept in a list, largest first, an area inserted
 *   after those of equal size (pv_map.c _insert_area), and reserving part
 *   of an area moves it within the list while the list is being walked;
 * - the candidate areas are sorted by the extents they would give, most
 *   first; lvm calls qsort, which glibc (2.36, Debian 12) does as a merge
 *   sort, so equal candidates stay in PV order: a stable sort here;
 * - the policies are tried in turn from contiguous up to the LV's one. */

enum { A_CLING_TO_ALLOCED = 1, A_POSITIONAL_FILL = 2, A_CAN_SPLIT = 4 };
enum { USE_AREA, NEXT_PV, NEXT_AREA, PREFERRED };

struct apva {
  struct apva *prev, *next; /* in the PV's list (the head is a dummy) */
  uint32_t pv;
  uint64_t start, count, unreserved;
};

struct apvm {
  struct apva head;
  uint64_t pe_count; /* free extents in the list */
};

struct aused {
  struct apva *pva;
  uint64_t used;
  uint32_t ord; /* position before sorting: ties keep it */
};

static int
cmp_used(const void *l, const void *r)
{
  const struct aused *a = l, *b = r;

  if (a->used != b->used)
    return a->used < b->used ? 1 : -1;
  return a->ord < b->ord ? -1 : a->ord > b->ord;
}

struct abatch { /* one _alloc_parallel_area: a segment before merging */
  uint64_t len; /* per stripe */
  struct ff_area *areas;
};

struct astate {
  uint32_t npvs, area_count, areas_size, num_positional;
  struct apvm *pvms;
  struct aused *areas;
  struct abatch *batches;
  uint32_t nbatches;
  uint64_t allocated, new_extents;
  int alloc, flags;
  /* a thin pool's metadata: one "log" area of log_len extents, found
   * with the first batch (lvm's log_area_count 1) */
  uint64_t log_len;
  uint32_t log_needed; /* log_area_count_still_needed */
  struct ff_area log_area;
};

static void
insert_area(struct apvm *m, struct apva *a, int reduced)
{
  uint64_t count = reduced ? a->unreserved : a->count;
  struct apva *p;

  for (p = m->head.next; p != &m->head; p = p->next)
    if (count > p->count)
      break;
  a->next = p;
  a->prev = p->prev;
  p->prev->next = a;
  p->prev = a;
  m->pe_count += a->count;
}

static void
remove_area(struct apvm *m, struct apva *a)
{
  a->prev->next = a->next;
  a->next->prev = a->prev;
  m->pe_count -= a->count;
}

static void
reinsert_area(struct astate *st, struct apva *a)
{
  remove_area(&st->pvms[a->pv], a);
  insert_area(&st->pvms[a->pv], a, 1);
}

static void
consume_area(struct astate *st, struct apva *a, uint64_t n)
{
  remove_area(&st->pvms[a->pv], a);
  if (n < a->count) {
    a->start += n;
    a->count -= n;
    a->unreserved = a->count;
    insert_area(&st->pvms[a->pv], a, 0);
  }
}

static int
reserve_area(struct astate *st, struct apva *a, uint64_t required, uint32_t ix)
{
  if (ix >= st->areas_size) {
    struct aused *n = realloc(st->areas, 2 * st->areas_size * sizeof *n);

    if (!n)
      return ff_error("out of memory");
    for (uint32_t s = st->areas_size; s < 2 * st->areas_size; s++)
      n[s].pva = NULL;
    st->areas = n;
    st->areas_size *= 2;
  }
  st->areas[ix].pva = a;
  st->areas[ix].used = required;
  return 0;
}

/* _check_cling_to_alloced: is a on a PV that a stripe already uses?
 * -1 on error. */
static int
cling_to_alloced(struct astate *st, struct apva *a)
{
  int positional = st->flags & A_POSITIONAL_FILL;

  for (uint32_t s = 0; s < st->area_count; s++) {
    if (positional && st->areas[s].pva)
      continue;
    for (uint32_t b = 0; b < st->nbatches; b++)
      if (st->batches[b].areas[s].pv == a->pv) {
        if (positional && reserve_area(st, a, a->count, s) < 0)
          return -1;
        return 1;
      }
  }
  return 0;
}

/* _check_pva; -1 on error. */
static int
check_pva(struct astate *st, struct apva *a, uint64_t still_needed,
          int already_found_one, unsigned iteration_count,
          unsigned log_iteration_count)
{
  if (!a->unreserved)
    return NEXT_AREA;
  if (iteration_count)
    for (uint32_t s = 0; s < st->areas_size; s++)
      if (st->areas[s].pva == a)
        return NEXT_AREA;
  if (!iteration_count && !log_iteration_count &&
      (st->flags & A_CLING_TO_ALLOCED)) {
    int r = cling_to_alloced(st, a);

    if (r < 0)
      return -1;
    if (!r)
      return NEXT_PV;
  } else if (a->unreserved * st->area_count < still_needed &&
             ((!(st->flags & A_CAN_SPLIT) && !st->log_len) ||
              (already_found_one && st->alloc != FF_ALLOC_ANYWHERE)))
    return NEXT_PV;
  return st->flags & A_POSITIONAL_FILL ? PREFERRED : USE_AREA;
}

/* _calc_required_extents */
static uint64_t
required_extents(struct astate *st, struct apva *a, uint32_t ix,
                 uint64_t max_to_allocate)
{
  uint64_t required = max_to_allocate / st->area_count;

  if (st->alloc == FF_ALLOC_ANYWHERE) {
    if (ix >= st->area_count)
      required = st->log_len;
  } else if (required < st->log_len)
    required = st->log_len;
  if (required >= a->unreserved) {
    required = a->unreserved;
    a->unreserved = 0;
  } else {
    a->unreserved -= required;
    reinsert_area(st, a);
  }
  return required;
}

/* _alloc_parallel_area: the data areas from areas[0..area_count), the
 * log (when still needed) from areas[ix_log_offset], after them when
 * they share an area. */
static int
alloc_parallel_area(struct astate *st, uint64_t max_to_allocate,
                    uint32_t ix_log_offset)
{
  uint64_t len = max_to_allocate / st->area_count;
  struct abatch *b, *nb;

  for (uint32_t s = 0; s < st->area_count; s++)
    if (len > st->areas[s].used)
      len = st->areas[s].used;
  nb = realloc(st->batches, (st->nbatches + 1) * sizeof *nb);
  if (!nb)
    return ff_error("out of memory");
  st->batches = nb;
  b = &nb[st->nbatches];
  b->len = len;
  b->areas = calloc(st->area_count, sizeof *b->areas);
  if (!b->areas)
    return ff_error("out of memory");
  st->nbatches++;
  for (uint32_t s = 0; s < st->area_count; s++) {
    struct apva *a = st->areas[s].pva;

    b->areas[s].pv = a->pv;
    b->areas[s].pe = a->start;
    consume_area(st, a, len);
  }
  if (st->log_needed) {
    struct apva *a = st->areas[ix_log_offset].pva;

    st->log_area.pv = a->pv;
    st->log_area.pe = a->start;
    consume_area(st, a, st->log_len);
    st->log_needed = 0; /* "Log is always allocated first time" */
  }
  st->allocated += len * st->area_count;
  return 0;
}

/* _find_some_parallel_space */
static int
find_some_parallel_space(struct astate *st, uint64_t max_to_allocate)
{
  uint32_t devices_needed = st->area_count, ix = 0, last_ix;
  uint32_t preferred_count = 0, too_small_for_log_count = 0;
  uint32_t ix_log_offset = 0;
  unsigned iteration_count = 0, log_iteration_count = 0;
  int more;

  st->num_positional = 0;
  for (uint32_t s = 0; s < st->areas_size; s++)
    st->areas[s].pva = NULL;
  for (uint32_t p = 0; p < st->npvs; p++) /* _reset_unreserved */
    for (struct apva *a = st->pvms[p].head.next; a != &st->pvms[p].head;
         a = a->next)
      if (a->unreserved != a->count) {
        a->unreserved = a->count;
        reinsert_area(st, a);
      }
  if ((st->flags & A_POSITIONAL_FILL) && (st->flags & A_CLING_TO_ALLOCED))
    st->num_positional = st->area_count;

  do {
    last_ix = ix;
    for (uint32_t p = 0; p < st->npvs; p++) {
      struct apvm *m = &st->pvms[p];
      int already_found_one = 0;

      if (m->head.next == &m->head)
        continue;
      if (st->alloc != FF_ALLOC_ANYWHERE) {
        if (log_iteration_count) {
          /* not the PVs already set aside for the log */
          for (uint32_t s = devices_needed; s < ix + st->num_positional; s++)
            if (st->areas[s].pva && st->areas[s].pva->pv == p)
              goto next_pv;
        } else if (iteration_count)
          for (uint32_t s = 0; s < devices_needed; s++)
            if (st->areas[s].pva && st->areas[s].pva->pv == p)
              goto next_pv;
      }
      for (struct apva *a = m->head.next; a != &m->head; a = a->next) {
        uint32_t slot;
        uint64_t required;

        switch (check_pva(st, a, max_to_allocate, already_found_one,
                          iteration_count, log_iteration_count)) {
        case -1:
          return -1;
        case PREFERRED:
          preferred_count++;
          goto next_pv;
        case NEXT_PV:
          goto next_pv;
        case NEXT_AREA:
          continue;
        default: /* USE_AREA */
          if (!already_found_one || st->alloc == FF_ALLOC_ANYWHERE) {
            ix++;
            already_found_one = 1;
          }
          slot = ix + st->num_positional - 1;
          required = required_extents(st, a, slot, max_to_allocate);
          if (reserve_area(st, a, required, slot) < 0)
            return -1;
        }
      }
    next_pv:
      if ((st->alloc == FF_ALLOC_ANYWHERE &&
           ix + st->num_positional >= devices_needed + st->log_needed) ||
          (preferred_count == st->num_positional &&
           st->num_positional == devices_needed + st->log_needed))
        break;
    }
    /* lvm's loop condition, its side effects in the same order */
    more =
      (st->alloc == FF_ALLOC_ANYWHERE && last_ix != ix &&
       ix < devices_needed + st->log_needed) ||
      (st->alloc == FF_ALLOC_NORMAL && preferred_count &&
       (preferred_count < st->num_positional || st->log_needed) &&
       (st->flags & A_CLING_TO_ALLOCED) && !iteration_count++) ||
      /* an extra iteration to fill the log on PVs already used */
      (st->alloc == FF_ALLOC_NORMAL && preferred_count == st->num_positional &&
       ix + preferred_count >= devices_needed &&
       ix + preferred_count < devices_needed + st->log_needed &&
       !log_iteration_count++);
  } while (more);

  if (preferred_count < st->num_positional &&
      !(st->flags & A_CLING_TO_ALLOCED) && !ix)
    return 0;
  if (ix + preferred_count < devices_needed + st->log_needed)
    return 0;
  /* qsort(_comp_area) on glibc: stable, most extents first */
  if (log_iteration_count) {
    if (ix > devices_needed + 1) {
      for (uint32_t i = devices_needed; i < ix; i++)
        st->areas[i].ord = i;
      qsort(st->areas + devices_needed, ix - devices_needed, sizeof *st->areas,
            cmp_used);
    }
  } else {
    for (uint32_t i = 0; i < ix; i++)
      st->areas[st->num_positional + i].ord = i;
    qsort(st->areas + st->num_positional, ix, sizeof *st->areas, cmp_used);
  }
  if (preferred_count && preferred_count != st->num_positional)
    for (uint32_t s = 0; s < devices_needed; s++)
      if (!st->areas[s].pva) {
        st->areas[s] = st->areas[st->num_positional];
        st->areas[st->num_positional++].pva = NULL;
      }
  /* the log on the smallest area that has room for it */
  if (st->log_needed) {
    while (
      too_small_for_log_count < st->num_positional + ix &&
      st->areas[st->num_positional + ix - 1 - too_small_for_log_count].used <
        st->log_len)
      too_small_for_log_count++;
    if (st->num_positional + ix < too_small_for_log_count + 1)
      return 0;
    ix_log_offset = st->num_positional + ix - (too_small_for_log_count + 1);
  }
  if (ix + st->num_positional < devices_needed)
    return 0;
  return alloc_parallel_area(st, max_to_allocate, ix_log_offset);
}

/* _find_max_parallel_space_for_one_policy */
static int
find_max_parallel_space(struct astate *st)
{
  do {
    uint64_t old = st->allocated;

    if (find_some_parallel_space(st, st->new_extents - st->allocated) < 0)
      return -1;
    if (old == st->allocated) {
      if (st->alloc == FF_ALLOC_NORMAL && (st->flags & A_CLING_TO_ALLOCED))
        st->flags &= ~A_CLING_TO_ALLOCED;
      else
        break;
    } else if (st->alloc == FF_ALLOC_NORMAL &&
               !(st->flags & A_CLING_TO_ALLOCED))
      st->flags |= A_CLING_TO_ALLOCED;
  } while (st->alloc != FF_ALLOC_CONTIGUOUS &&
           st->allocated != st->new_extents && (st->flags & A_CAN_SPLIT));
  return 0;
}

/* Free runs of each PV of a VG, kept in PE order as LVs are placed. */
struct freelist {
  uint32_t n, cap;
  struct apva *runs; /* start, count only */
};

static int
free_take(struct freelist *f, uint64_t pe, uint64_t len)
{
  for (uint32_t i = 0; i < f->n; i++) {
    struct apva *r = &f->runs[i];

    if (pe < r->start || pe + len > r->start + r->count)
      continue;
    if (pe > r->start && pe + len < r->start + r->count) {
      if (f->n == f->cap) {
        struct apva *n =
          realloc(f->runs, (f->cap ? 2 * f->cap : 4) * sizeof *n);

        if (!n)
          return ff_error("out of memory");
        f->runs = n;
        f->cap = f->cap ? 2 * f->cap : 4;
        r = &f->runs[i];
      }
      memmove(r + 2, r + 1, (f->n - i - 1) * sizeof *r);
      f->n++;
      r[1].start = pe + len;
      r[1].count = r->start + r->count - (pe + len);
      r->count = pe - r->start;
    } else if (pe == r->start && len == r->count) {
      memmove(r, r + 1, (f->n - i - 1) * sizeof *r);
      f->n--;
    } else if (pe == r->start) {
      r->start += len;
      r->count -= len;
    } else
      r->count -= len;
    return 0;
  }
  return ff_error("internal error: PV %llu+%llu is not free",
                  (unsigned long long)pe, (unsigned long long)len);
}

static const char *const policy_names[] = {"inherit", "contiguous", "cling",
                                           "normal", "anywhere"};

/* Place lv (lv->extents, stripes of stripe_size) as lvcreate --alloc
 * policy would on the free runs fl[npvs]; take them from fl.  With
 * log_len, one more area of log_len extents is found in the same
 * allocation (a thin pool's metadata: lvm allocates it as a mirror log)
 * and returned in *log_area.  Returns -1 with the error set (naming lp),
 * as lvcreate refuses. */
static int
lvm_allocate(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
             struct freelist *fl, struct ff_lv *lv, uint32_t stripes,
             uint64_t stripe_size, enum ff_alloc_policy policy,
             uint64_t log_len, struct ff_area *log_area)
{
  struct astate st = {0};
  struct apva *pool = NULL;
  uint64_t free_pes = 0;
  uint32_t nruns = 0, k = 0;
  int r = -1, top = policy == FF_ALLOC_INHERIT ? FF_ALLOC_NORMAL : policy;
  int can_split = top != FF_ALLOC_CONTIGUOUS;

  st.npvs = vg->npvs;
  st.area_count = stripes;
  st.new_extents = lv->extents;
  st.log_len = log_len;
  st.log_needed = log_len ? 1 : 0;
  st.areas_size =
    vg->npvs < stripes + st.log_needed ? stripes + st.log_needed : vg->npvs;
  for (uint32_t p = 0; p < vg->npvs; p++)
    nruns += fl[p].n;
  st.pvms = calloc(vg->npvs, sizeof *st.pvms);
  st.areas = calloc(st.areas_size, sizeof *st.areas);
  pool = calloc(nruns ? nruns : 1, sizeof *pool);
  if (!st.pvms || !st.areas || !pool) {
    ff_error("out of memory");
    goto out;
  }
  for (uint32_t p = 0; p < vg->npvs; p++) { /* _create_maps */
    st.pvms[p].head.next = st.pvms[p].head.prev = &st.pvms[p].head;
    for (uint32_t i = 0; i < fl[p].n; i++, k++) {
      pool[k].pv = p;
      pool[k].start = fl[p].runs[i].start;
      pool[k].count = pool[k].unreserved = fl[p].runs[i].count;
      insert_area(&st.pvms[p], &pool[k], 0);
    }
    free_pes += st.pvms[p].pe_count;
  }

  for (int alloc = FF_ALLOC_CONTIGUOUS; alloc <= top; alloc++) {
    uint64_t old = st.allocated;

    if (st.new_extents - st.allocated + st.log_needed * log_len >
        free_pes - st.allocated) {
      berr(b, line, lp, "VG %s has %llu free extents, LV %s needs %llu",
           vg->name, (unsigned long long)free_pes, lv->name,
           (unsigned long long)(st.new_extents + log_len));
      goto out;
    }
    st.alloc = alloc;
    st.flags = can_split ? A_CAN_SPLIT : 0;
    if (alloc == FF_ALLOC_CLING)
      st.flags |= A_CLING_TO_ALLOCED | A_POSITIONAL_FILL;
    if (alloc == FF_ALLOC_NORMAL && st.allocated != st.new_extents)
      st.flags |= A_CLING_TO_ALLOCED; /* maximise_cling */
    if (find_max_parallel_space(&st) < 0)
      goto out;
    /* lvm: "if only the log is missing now, fall through and try later
     * policies up to normal" */
    if (st.allocated == st.new_extents && st.log_needed &&
        top < FF_ALLOC_NORMAL) {
      top = FF_ALLOC_NORMAL;
      continue;
    }
    if ((st.allocated == st.new_extents && !st.log_needed) ||
        (!can_split && st.allocated != old))
      break;
  }
  if (st.allocated == st.new_extents && st.log_needed) {
    berr(b, line, lp,
         "lvm's %s policy finds no room for the metadata of LV %s in VG %s "
         "(%llu extents; lvcreate: insufficient free space for log "
         "allocation)",
         policy_names[top], lv->name, vg->name, (unsigned long long)log_len);
    goto out;
  }
  if (st.allocated != st.new_extents) {
    berr(b, line, lp,
         "lvm's %s policy finds no room for LV %s in VG %s: %llu more "
         "extents needed (lvcreate: insufficient suitable %sallocatable "
         "extents)",
         policy_names[top], lv->name, vg->name,
         (unsigned long long)(st.new_extents - st.allocated),
         can_split ? "" : "contiguous ");
    goto out;
  }

  /* _setup_alloced_segments, then lv_merge_segments */
  lv->segs = calloc(st.nbatches, sizeof *lv->segs);
  if (!lv->segs) {
    ff_error("out of memory");
    goto out;
  }
  for (uint32_t i = 0; i < st.nbatches; i++) {
    struct abatch *ba = &st.batches[i];
    struct ff_seg *prev = lv->nsegs ? &lv->segs[lv->nsegs - 1] : NULL;
    int merge = prev != NULL;

    for (uint32_t s = 0; s < stripes; s++)
      if (free_take(&fl[ba->areas[s].pv], ba->areas[s].pe, ba->len) < 0)
        goto out;
    for (uint32_t s = 0; merge && s < stripes; s++)
      merge = prev->areas[s].pv == ba->areas[s].pv &&
              prev->areas[s].pe + prev->len / stripes == ba->areas[s].pe;
    if (merge) {
      prev->len += ba->len * stripes;
      continue;
    }
    lv->segs[lv->nsegs].le = prev ? prev->le + prev->len : 0;
    lv->segs[lv->nsegs].len = ba->len * stripes;
    lv->segs[lv->nsegs].stripes = stripes;
    lv->segs[lv->nsegs].stripe_size = stripes > 1 ? stripe_size : 0;
    lv->segs[lv->nsegs].areas = ba->areas;
    ba->areas = NULL;
    lv->nsegs++;
  }
  if (log_len) {
    if (free_take(&fl[st.log_area.pv], st.log_area.pe, log_len) < 0)
      goto out;
    *log_area = st.log_area;
  }
  r = 0;
out:
  for (uint32_t i = 0; i < st.nbatches; i++)
    free(st.batches[i].areas);
  free(st.batches);
  free(st.areas);
  free(st.pvms);
  free(pool);
  return r;
}

/* lvm_allocate() of lv->extents as one segment of `areas` parallel areas
 * (a cache pool's metadata + data, a mirror's or raid's images), or -1
 * with the error: the farm places each such area in one free run, and
 * when lvm would split one (no free run is long enough) the spec is
 * refused, the rest of the message (fmt) saying what and why. */
__attribute__((format(printf, 9, 10))) static int
allocate_unsplit(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
                 struct freelist *fl, struct ff_lv *lv, uint32_t areas,
                 enum ff_alloc_policy policy, const char *fmt, ...)
{
  char what[512];
  va_list ap;

  if (lvm_allocate(b, line, lp, vg, fl, lv, areas, 0, policy, 0, NULL) < 0)
    return -1;
  if (lv->nsegs == 1)
    return 0;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return berr(b, line, lp, "%s would need more than one free area (%s)", what,
              "the farm places it in one area; lvm would split it");
}

/* ---- mirror and raid LVs ------------------------------------------------ */

static const char *const sub_role_names[] = {
  [FF_SUB_NONE] = "lv",           [FF_SUB_RIMAGE] = "rimage",
  [FF_SUB_RMETA] = "rmeta",       [FF_SUB_MIMAGE] = "mimage",
  [FF_SUB_MLOG] = "mlog",         [FF_SUB_PMSPARE] = "pmspare",
  [FF_SUB_TMETA] = "tmeta",       [FF_SUB_TDATA] = "tdata",
  [FF_SUB_SNAPSHOT] = "snapshot", [FF_SUB_CMETA] = "cmeta",
  [FF_SUB_CDATA] = "cdata",       [FF_SUB_CORIG] = "corig",
};

const char *
ff_sub_role_name(enum ff_sub_role r)
{
  return (unsigned)r <= FF_SUB_CORIG ? sub_role_names[r] : "?";
}

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

  ff_sb_addf(&sb, "%s_%s", top->name, sub_role_names[role]);
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

/* The disk log of a mirror whose images are placed, as add_mirror_log's
 * own allocate_extents() places it (lv_manip.c _find_some_parallel_space
 * with area_count 0 and log_count 1): on each PV that holds no image,
 * its areas are visited largest first, each one reserving log_len, so
 * the PV's candidate is the last one visited; the log goes to the last
 * candidate PV, at its candidate's start.  With no such PV, the normal
 * policy's extra log iteration takes the last PV with free space (image
 * PVs included), its smallest area's first extent. */
static int
place_mirror_log(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
                 struct freelist *fl, const struct ff_lv *top,
                 uint64_t log_len, enum ff_alloc_policy policy, uint32_t *pv,
                 uint64_t *pe)
{
  struct apvm *pvms = calloc(vg->npvs, sizeof *pvms);
  uint8_t *img = calloc(vg->npvs, 1);
  struct astate st = {0};
  struct apva *pool;
  uint32_t nruns = 0, k = 0;
  int found = 0;

  for (uint32_t p = 0; p < vg->npvs; p++)
    nruns += fl[p].n;
  pool = calloc(nruns ? nruns : 1, sizeof *pool);
  if (!pvms || !img || !pool) {
    free(pvms);
    free(img);
    free(pool);
    return ff_error("out of memory");
  }
  st.npvs = vg->npvs;
  st.pvms = pvms;
  for (uint32_t u = 0; u < top->nsubs; u++)
    if (top->subs[u].role == FF_SUB_MIMAGE)
      img[top->subs[u].segs[0].areas[0].pv] = 1;
  for (uint32_t p = 0; p < vg->npvs; p++) {
    pvms[p].head.next = pvms[p].head.prev = &pvms[p].head;
    for (uint32_t i = 0; i < fl[p].n; i++, k++) {
      pool[k].pv = p;
      pool[k].start = fl[p].runs[i].start;
      pool[k].count = pool[k].unreserved = fl[p].runs[i].count;
      insert_area(&pvms[p], &pool[k], 0);
    }
  }
  for (uint32_t p = 0; p < vg->npvs; p++) {
    struct apva *cand = NULL;

    if (img[p])
      continue;
    for (struct apva *a = pvms[p].head.next; a != &pvms[p].head; a = a->next) {
      if (a->unreserved < log_len)
        continue;
      cand = a;
      a->unreserved -= log_len;
      reinsert_area(&st, a);
    }
    if (cand) {
      *pv = p;
      *pe = cand->start;
      found = 1;
    }
  }
  if (!found && (policy == FF_ALLOC_INHERIT || policy >= FF_ALLOC_NORMAL))
    for (uint32_t p = 0; p < vg->npvs; p++) {
      struct apva *small = NULL;

      for (struct apva *a = pvms[p].head.next; a != &pvms[p].head; a = a->next)
        if (a->count >= log_len)
          small = a;
      if (small) {
        *pv = p;
        *pe = small->start;
        found = 1;
      }
    }
  free(pvms);
  free(img);
  free(pool);
  if (!found)
    return berr(
      b, line, lp,
      "lvm's %s policy finds no room for the mirror log of LV %s "
      "in VG %s (%llu extents)",
      policy_names[policy == FF_ALLOC_INHERIT ? FF_ALLOC_NORMAL : policy],
      top->name, vg->name, (unsigned long long)log_len);
  return free_take(&fl[*pv], *pe, log_len);
}

static const uint8_t mlog_header[16] = {0x72, 0x52, 0x69, 0x4d, 2,    0,
                                        0,    0,    0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0xff};

static int
add_blob(struct ff_vg *vg, uint32_t pv, uint64_t off, uint64_t len,
         uint8_t fill, const uint8_t *bytes)
{
  struct ff_blob *n = realloc(vg->blobs, (vg->nblobs + 1) * sizeof *n);

  if (!n)
    return ff_error("out of memory");
  vg->blobs = n;
  n[vg->nblobs++] = (struct ff_blob){pv, off, len, fill, bytes};
  return 0;
}

/* Place mirror or raid LV li (lv->extents already rounded to its
 * stripes) as one lvcreate --type would, making its sub-LVs. */
static int
allocate_mirror_raid(struct bctx *b, const struct ff_spec_lv *sl,
                     const char *lp, struct ff_vg *vg, struct freelist *fl,
                     uint32_t li)
{
  struct ff_lv *lv = &vg->lvs[li];
  uint64_t es = vg->extent_size / FF_SECTOR, lv_sectors = lv->extents * es;
  uint64_t ssize = 0, per, meta = 0, img;
  struct ff_lv tmp = {.name = lv->name};
  int raid = sl->kind == FF_LVK_RAID, r = -1;

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
  lv->nsubs = raid ? 2 * sl->images : sl->images + !sl->core_log;
  lv->subs = calloc(lv->nsubs, sizeof *lv->subs);
  if (!lv->subs)
    return ff_error("out of memory");

  if (raid) {
    img = sl->stripes > 1 ? lv->extents / sl->stripes : lv->extents;
    meta =
      raid_rmeta_extents(lv->region_size,
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
  if (allocate_unsplit(b, sl->line, lp, vg, fl, &tmp, sl->images, sl->alloc,
                       "LV %s: a %s image", lv->name, sl->segtype) < 0)
    goto out;
  for (uint32_t i = 0; i < sl->images; i++) {
    const struct ff_area *a = &tmp.segs[0].areas[i];

    if (raid) {
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

    if (place_mirror_log(b, sl->line, lp, vg, fl, lv, log_len, sl->alloc, &pv,
                         &pe) < 0 ||
        make_sub(b, sl, lv, li, sl->images, FF_SUB_MLOG, -1, pv, pe, log_len) <
          0)
      goto out;
    /* _init_mirror_log: the log wiped (0xFF with --nosync), then its
     * 16-byte header (magic "rRiM", version 2, nr_regions ~0) */
    off = vg->fmt.pe_start + pe * vg->extent_size;
    if ((sl->nosync &&
         add_blob(vg, pv, off, log_len * vg->extent_size, 0xff, NULL) < 0) ||
        add_blob(vg, pv, off, sizeof mlog_header, 0, mlog_header) < 0)
      goto out;
  }
  r = 0;
out:
  for (uint32_t s = 0; s < tmp.nsegs; s++)
    free(tmp.segs[s].areas);
  free(tmp.segs);
  return r;
}

/* Who holds some of extents first..last of PV pv: an LV before li, or
 * li's own earlier ranges (NULL when none does). */
static const char *
holder(const struct ff_vg *vg, uint32_t li, uint32_t pv, uint64_t first,
       uint64_t last)
{
  for (uint32_t l = 0; l <= li; l++)
    for (uint32_t u = 0; u <= vg->lvs[l].nsubs; u++) {
      const struct ff_lv *lv = u ? &vg->lvs[l].subs[u - 1] : &vg->lvs[l];

      for (uint32_t s = 0; s < lv->nsegs; s++) {
        const struct ff_seg *seg = &lv->segs[s];
        uint64_t n = seg->len / seg->stripes;

        if (!seg->areas) /* a mirror or raid top LV's */
          continue;
        for (uint32_t a = 0; a < seg->stripes; a++)
          if (seg->areas[a].pv == pv && seg->areas[a].pe <= last &&
              first < seg->areas[a].pe + n)
            return l == li ? "an earlier range of this LV" : lv->name;
      }
    }
  return NULL;
}

/* Lay LV li out as its placement says, after checking every range: inside
 * its PV, free, and the sum the LV's size. */
static int
place_lv(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
         struct ff_vg *vg, struct freelist *fl, uint32_t li,
         uint64_t stripe_size)
{
  struct ff_lv *lv = &vg->lvs[li];
  uint64_t le = 0;
  char kp[128];

  if (sl->size) {
    uint64_t want = (sl->size + vg->extent_size - 1) / vg->extent_size;

    want = (want + sl->stripes - 1) / sl->stripes * sl->stripes;
    if (want != lv->extents)
      return berr(
        b, sl->line, lp, "size gives LV %s %llu extents, its placement %llu",
        lv->name, (unsigned long long)want, (unsigned long long)lv->extents);
  }
  lv->segs = calloc(sl->nplace, sizeof *lv->segs);
  if (!lv->segs)
    return ff_error("out of memory");
  for (unsigned i = 0; i < sl->nplace; i++) {
    const struct ff_spec_range *rg = &sl->place[i * sl->stripes];
    struct ff_seg *seg = &lv->segs[i];
    uint64_t n = rg->last - rg->first + 1;

    if (snprintf(kp, sizeof kp, "%s.placement.[%u]", lp, i) < 0)
      kp[0] = '\0';
    seg->areas = calloc(sl->stripes, sizeof *seg->areas);
    if (!seg->areas)
      return ff_error("out of memory");
    seg->le = le;
    seg->len = n * sl->stripes;
    seg->stripes = sl->stripes;
    seg->stripe_size = sl->stripes > 1 ? stripe_size : 0;
    for (unsigned k = 0; k < sl->stripes; k++)
      seg->areas[k].pv = FF_NONE;
    lv->nsegs++; /* holder() sees the stripes placed so far */
    for (unsigned k = 0; k < sl->stripes; k++) {
      const struct ff_pv *pv = &vg->pvs[rg[k].pv];
      const char *who;
      int ok = 0;

      if (rg[k].last >= pv->pe_count)
        return berr(b, sl->place_lines[i], kp,
                    "%u:%llu-%llu runs past PV %u's last extent (it has "
                    "%llu)",
                    rg[k].pv, (unsigned long long)rg[k].first,
                    (unsigned long long)rg[k].last, rg[k].pv,
                    (unsigned long long)pv->pe_count);
      for (uint32_t f = 0; f < fl[rg[k].pv].n && !ok; f++)
        ok =
          rg[k].first >= fl[rg[k].pv].runs[f].start &&
          rg[k].last < fl[rg[k].pv].runs[f].start + fl[rg[k].pv].runs[f].count;
      if (!ok) {
        who = holder(vg, li, rg[k].pv, rg[k].first, rg[k].last);
        return berr(b, sl->place_lines[i], kp,
                    "%u:%llu-%llu overlaps %s%s on PV %u", rg[k].pv,
                    (unsigned long long)rg[k].first,
                    (unsigned long long)rg[k].last,
                    who ? "" : "extents in use", who ? who : "", rg[k].pv);
      }
      if (free_take(&fl[rg[k].pv], rg[k].first, n) < 0)
        return -1;
      seg->areas[k].pv = rg[k].pv;
      seg->areas[k].pe = rg[k].first;
    }
    le += seg->len;
  }
  return 0;
}

/* ---- thin pools, thin LVs, old-style snapshots -------------------------- */

/* lvm's generate_lv_name(): PREFIX and one more than the highest N of
 * the LVs (hidden ones too) named PREFIX N..., as its sscanf("PREFIX%d")
 * reads them, among the first nl top LVs of vg and their sub-LVs, and
 * extra (a sub-LV made already, or NULL). */
static char *
generate_lv_name(const struct ff_vg *vg, uint32_t nl, const struct ff_lv *top,
                 const char *prefix)
{
  size_t pl = strlen(prefix);
  long high = -1;
  char *name;

  for (uint32_t l = 0; l <= nl; l++) {
    const struct ff_lv *t = l < nl ? &vg->lvs[l] : top;

    if (!t)
      continue;
    for (uint32_t u = 0; u <= t->nsubs; u++) {
      const char *n = u ? t->subs[u - 1].name : t->name;
      int v;

      if (n && !strncmp(n, prefix, pl) && sscanf(n + pl, "%d", &v) == 1 &&
          v > high)
        high = v;
    }
  }
  if (asprintf(&name, "%s%ld", prefix, high + 1) < 0) {
    ff_error("out of memory");
    return NULL;
  }
  return name;
}

/* Sub-LV j of top LV li named name (taken): UUID, role, no segments. */
static struct ff_lv *
new_sub(struct bctx *b, const struct ff_spec_lv *sl, struct ff_lv *top,
        uint32_t li, uint32_t j, enum ff_sub_role role, char *name)
{
  struct ff_lv *sub = &top->subs[j];

  sub->name = name;
  if (sl->uuids)
    memcpy(sub->uuid, sl->uuids[j], FF_UUID_LEN);
  else
    ff_uuid_make(sub->uuid, b->spec->seed, K_SUBLV, b->v,
                 ((uint64_t)li << 16) | j);
  sub->role = (uint8_t)role;
  sub->parent = li;
  sub->time = top->time;
  sub->writes = 1;
  return sub;
}

/* An LV of the first li of vg named name, or NULL. */
static struct ff_lv *
find_lv(struct ff_vg *vg, uint32_t li, const char *name)
{
  for (uint32_t l = 0; l < li; l++)
    if (!strcmp(vg->lvs[l].name, name))
      return &vg->lvs[l];
  return NULL;
}

static uint64_t
round_up(uint64_t v, uint64_t to)
{
  return (v + to - 1) / to * to;
}

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

  min_chunk = round_up((data + 999999) / 1000000, 64);
  *chunk = sl->chunk_size / FF_SECTOR;
  if (!*chunk)
    *chunk = 128 < min_chunk ? min_chunk : 128;
  else if (*chunk < min_chunk)
    return berr(b, sl->line, lp,
                "pool %s: lvm refuses it: Chunk size %llu KiB is less then "
                "required minimal chunk size %llu KiB for a cache pool of "
                "%llu KiB size and limit 1000000 chunks",
                lv->name, (unsigned long long)(*chunk / 2),
                (unsigned long long)(min_chunk / 2),
                (unsigned long long)(data / 2));
  min_meta = round_up((data / *chunk * 44 + 511) / 512 + 8192, es);
  *meta =
    sl->metadata_size ? round_up(sl->metadata_size / FF_SECTOR, es) : min_meta;
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
static int
allocate_pool(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
              struct ff_vg *vg, struct freelist *fl, uint32_t li)
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
    meta = round_up(meta, es);
  } else {
    meta = round_up(sl->metadata_size, vg->extent_size) / FF_SECTOR;
    if (!chunk)
      chunk = estimate_chunk(data, meta);
  }
  max_meta = round_up(THIN_MAX_META_SECTORS, es);
  if (meta > max_meta)
    meta = max_meta;
  else if (meta < round_up(4096, es))
    meta = round_up(4096, es);
  meta_ext = meta / es;
  if (THIN_MAX_META_SECTORS * chunk * 8 / es < lv->extents)
    return berr(
      b, sl->line, lp,
      "pool %s: lvm refuses it: Selected chunk size %llu KiB "
      "cannot address more then %llu MiB of thin pool data space",
      lv->name, (unsigned long long)(chunk / 2),
      (unsigned long long)(THIN_MAX_META_SECTORS * chunk * 8 / 2048));
  if (chunk > data)
    return berr(b, sl->line, lp,
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
  lv->new_spare = (uint8_t)sl->new_spare;
  lv->writes = (uint8_t)ff_spec_lv_writes(sl);
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
        return berr(b, sl->line, lp,
                    "pool %s: not supported yet: its metadata (%llu extents) "
                    "is larger than the VG's pool metadata spare %s (%llu "
                    "extents), which lvm would extend",
                    lv->name, (unsigned long long)meta_ext, spare->name,
                    (unsigned long long)spare->extents);
    } else {
      sp.extents = want;
      if (lvm_allocate(b, sl->line, lp, vg, fl, &sp, 1, 0, FF_ALLOC_INHERIT, 0,
                       NULL) < 0)
        goto out;
      if (!(name = generate_lv_name(vg, li, NULL, "lvol")))
        goto out;
      spare = new_sub(b, sl, lv, li, j++, FF_SUB_PMSPARE, NULL);
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
    if (allocate_unsplit(b, sl->line, lp, vg, fl, &tmp, 1, FF_ALLOC_INHERIT,
                         "pool %s: its metadata and data", lv->name) < 0)
      goto out;
    log_area = tmp.segs[0].areas[0];
    tmp.segs[0].areas[0].pe += meta_ext;
    tmp.segs[0].len = lv->extents;
  } else {
    tmp.extents = lv->extents;
    if (lvm_allocate(b, sl->line, lp, vg, fl, &tmp, 1, 0, FF_ALLOC_INHERIT,
                     meta_ext, &log_area) < 0)
      goto out;
  }
  {
    struct ff_lv *tm, *td;
    struct ff_sb nb = FF_SB_INIT;

    ff_sb_addf(&nb, "%s_%s", lv->name, cache ? "cmeta" : "tmeta");
    tm = new_sub(b, sl, lv, li, j++, cache ? FF_SUB_CMETA : FF_SUB_TMETA,
                 ff_sb_detach(&nb, NULL));
    ff_sb_addf(&nb, "%s_%s", lv->name, cache ? "cdata" : "tdata");
    td = new_sub(b, sl, lv, li, j++, cache ? FF_SUB_CDATA : FF_SUB_TDATA,
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

/* Thin LV li in the pool its spec names (lvcreate -T -V): the next
 * device id, the pool's transaction id, one more message for the pool. */
static int
make_thin(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
          struct ff_vg *vg, uint32_t li)
{
  struct ff_lv *lv = &vg->lvs[li], *pool = find_lv(vg, li, sl->pool);

  if (!pool)
    return berr(b, sl->line, lp,
                "pool '%s': lvm refuses it: Couldn't find volume %s in "
                "Volume group %s (the pool must be an LV made before it)",
                sl->pool, sl->pool, vg->name);
  if (pool->kind != FF_LVK_THIN_POOL)
    return berr(b, sl->line, lp,
                "pool '%s': lvm refuses it: Logical volume %s/%s is not a "
                "thin pool",
                sl->pool, vg->name, sl->pool);
  if (pool->nthins >= FF_THINMETA_MAX_DEV_ID)
    return berr(b, sl->line, lp,
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

/* Cache LV li (its extents placed in its own segments) with cache pool
 * pool_name, as lvcreate --type cache or lvconvert --type cache
 * --cachepool do (lib/metadata/cache_manip.c cache_lv_create_cache): the
 * LV's segments move to the new LV_corig, the pool is renamed POOL_cpool
 * with POOL_cpool_cmeta and POOL_cpool_cdata, takes the given cache mode
 * and policy (or keeps its own, or writethrough and smq).  The pool is
 * one of the first nl LVs; corig_uuid: raw, or NULL for one of the
 * seed. */
static int
attach_cache(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
             uint32_t li, uint32_t nl, const char *pool_name,
             enum ff_cache_mode mode, enum ff_cache_policy policy,
             const char *corig_uuid)
{
  struct ff_lv *lv = &vg->lvs[li], *pool = find_lv(vg, nl, pool_name);
  struct ff_lv *co;
  struct ff_sb nb = FF_SB_INIT;

  if (!pool || (pool->kind == FF_LVK_CACHE_POOL && pool->attach_seq))
    return berr(b, line, lp,
                "pool '%s': lvm refuses it: Ambiguous syntax, please create "
                "--type cache-pool %s separately (no unused cache pool of "
                "that name in VG %s)",
                pool_name, pool_name, vg->name);
  if (pool->kind != FF_LVK_CACHE_POOL)
    return berr(b, line, lp,
                "pool '%s': lvm refuses it: Logical volume %s/%s is not a "
                "cache pool",
                pool_name, vg->name, pool_name);
  if (lv->kind != FF_LVK_STRIPED)
    return berr(b, line, lp,
                "LV %s: not supported yet: caching a %s LV (the farm caches "
                "linear and striped LVs)",
                lv->name, lv->segtype ? lv->segtype : "striped");
  lv->subs = calloc(1, sizeof *lv->subs);
  if (!lv->subs)
    return ff_error("out of memory");
  lv->nsubs = 1;
  co = &lv->subs[0];
  ff_sb_addf(&nb, "%s_corig", lv->name);
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

/* lib/metadata/snapshot_manip.c _cow_max_size, in extents (the kernel's
 * snapshot target has the leak fix: no extra chunks). */
static uint64_t
cow_max_extents(uint64_t origin_sectors, uint64_t chunk, uint64_t es)
{
  uint64_t origin_chunks = (origin_sectors + chunk - 1) / chunk;
  uint64_t per_area = chunk << (9 - 4);
  uint64_t meta_chunks = (origin_chunks + per_area) / per_area;

  return round_up((1 + origin_chunks + meta_chunks) * chunk, es) / es;
}

/* Snapshot li of the origin its spec names (lvcreate -s): the COW LV
 * placed as a linear LV, then the hidden snapshotN over it. */
static int
allocate_snapshot(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
                  struct ff_vg *vg, struct freelist *fl, uint32_t li)
{
  struct ff_lv *lv = &vg->lvs[li], *o = find_lv(vg, li, sl->origin), *sn;
  uint64_t es = vg->extent_size / FF_SECTOR, chunk = sl->chunk_size / 512;
  uint64_t max;
  char *name;

  if (!o)
    return berr(b, sl->line, lp,
                "origin '%s': lvm refuses it: Couldn't find origin volume "
                "'%s' (the origin must be an LV made before it)",
                sl->origin, sl->origin);
  if (o->kind == FF_LVK_SNAPSHOT || o->kind == FF_LVK_THIN_POOL)
    return berr(b, sl->line, lp,
                "origin '%s': lvm refuses it: Snapshots of %s are not "
                "supported",
                sl->origin,
                o->kind == FF_LVK_SNAPSHOT ? "snapshots"
                                           : "thin pool type volumes");
  if (o->kind != FF_LVK_STRIPED)
    return berr(b, sl->line, lp,
                "origin '%s': not supported yet: snapshots of %s LVs (the "
                "farm makes snapshots of linear and striped LVs)",
                sl->origin, o->segtype);
  max = cow_max_extents(o->extents * es, chunk, es);
  if (lv->extents > max) /* "Reducing COW size ... down to maximum" */
    lv->extents = max;
  if (lv->extents * es < 3 * chunk)
    return berr(b, sl->line, lp,
                "LV %s: lvm refuses it: Snapshot volume cannot be smaller "
                "than 3 chunks (%llu extents, %llu KiB)",
                lv->name, (unsigned long long)((3 * chunk + es - 1) / es),
                (unsigned long long)(3 * chunk / 2));
  if (lvm_allocate(b, sl->line, lp, vg, fl, lv, 1, 0, FF_ALLOC_INHERIT, 0,
                   NULL) < 0)
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
  if (!(name = generate_lv_name(vg, li, lv, "snapshot")))
    return -1;
  sn = new_sub(b, sl, lv, li, 0, FF_SUB_SNAPSHOT, name);
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
    if (add_blob(vg, a->pv, vg->fmt.pe_start + a->pe * vg->extent_size,
                 sizeof lv->cow_header, 0, lv->cow_header) < 0)
      return -1;
  }
  return 0;
}

/* The tmeta of every pool with thin LVs: the kernel's metadata after the
 * lvcreates (all with -an: each thin's lvcreate activates the pool, the
 * first one formats it first), an image shared by pools of one shape,
 * served as data-area bytes of the tmeta's extents. */
static int
thin_pool_images(struct bctx *b, struct ff_vg *vg)
{
  for (uint32_t l = 0; l < vg->nlvs; l++) {
    const struct ff_lv *lv = &vg->lvs[l], *tm;
    uint64_t tb, blocks;
    struct ff_thinmeta *m = NULL;
    struct ff_farm *farm = b->farm;

    if (lv->kind != FF_LVK_THIN_POOL || !lv->nthins)
      continue;
    tm = &lv->subs[lv->new_spare];
    tb = tm->extents * vg->extent_size;
    blocks = lv->extents * vg->extent_size / FF_SECTOR / lv->chunk;
    for (uint32_t i = 0; i < farm->ntms && !m; i++)
      if (farm->tms[i].tmeta_bytes == tb &&
          farm->tms[i].data_blocks == blocks &&
          farm->tms[i].chunk == lv->chunk && farm->tms[i].nthin == lv->nthins)
        m = farm->tms[i].m;
    if (!m) {
      struct ff_thinmeta_op *ops =
        calloc(4 + 6 * (size_t)lv->nthins, sizeof *ops);
      struct ff_tmcache *n;
      size_t k = 0;

      if (!ops)
        return ff_error("out of memory");
      /* check_new_thin_pool: open (format), resize, commit, close */
      ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_OPEN, 0, 0};
      ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_RESIZE, blocks, 0};
      ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_COMMIT, 0, 0};
      ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_CLOSE, 0, 0};
      for (uint32_t t = 1; t <= lv->nthins; t++) {
        ops[k++] = (struct ff_thinmeta_op){FF_THINMETA_OPEN, 0, 0};
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

        snprintf(msg, sizeof msg, "%s", ff_errmsg());
        return ff_error("VG %s, pool %s: %s", vg->name, lv->name, msg);
      }
      n = realloc(farm->tms, (farm->ntms + 1) * sizeof *n);
      if (!n) {
        ff_thinmeta_free(m);
        return ff_error("out of memory");
      }
      farm->tms = n;
      n[farm->ntms++] =
        (struct ff_tmcache){tb, blocks, lv->chunk, lv->nthins, m};
    }
    for (size_t i = 0; i < ff_thinmeta_nblocks(m); i++) {
      const struct ff_area *a = &tm->segs[0].areas[0];

      if (add_blob(vg, a->pv,
                   vg->fmt.pe_start + a->pe * vg->extent_size +
                     ff_thinmeta_blocknr(m, i) * FF_THINMETA_BLOCK,
                   FF_THINMETA_BLOCK, 0, ff_thinmeta_block(m, i)) < 0)
        return -1;
    }
  }
  return 0;
}

static int lv_writes_meta(const struct ff_spec_lv *sl, const struct ff_vg *vg,
                          struct ff_lv *lv);

static const char *const reserved_parts[] = {
  "_mimage",  "_mlog",  "_rimage", "_rmeta", "_tmeta", "_tdata",
  "_pmspare", "_cmeta", "_cdata",  "_corig", "_cpool", NULL};

/* Lay out the LVs of vg on its PVs, one lvcreate after another. */
static int
allocate_lvs(struct bctx *b, const struct ff_spec_vg *g, struct ff_vg *vg,
             const char *path)
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
      if (!ff_valid_lvm_name(lv->name)) {
        berr(b, sl->line, lp, "'%s' is not a valid LV name", lv->name);
        goto out;
      }
      /* the sub-LV names (lvm refuses these in any LV name) */
      for (const char *const *rp = reserved_parts; *rp; rp++)
        if (strstr(lv->name, *rp)) {
          berr(b, sl->line, lp,
               "LV name '%s': lvm refuses it: Names including \"%s\" are "
               "reserved",
               lv->name, *rp);
          goto out;
        }
      if (!strncmp(lv->name, "snapshot", 8)) {
        berr(b, sl->line, lp,
             "LV name '%s': lvm refuses it: Names starting \"snapshot\" are "
             "reserved",
             lv->name);
        goto out;
      }
      for (uint32_t o = 0; o < li; o++)
        if (!strcmp(vg->lvs[o].name, lv->name)) {
          berr(b, sl->line, lp, "LV name '%s' is used twice in VG %s",
               lv->name, vg->name);
          goto out;
        }
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
      } else if (sl->size) {
        ext = (sl->size + vg->extent_size - 1) / vg->extent_size;
        ext = (ext + sl->stripes - 1) / sl->stripes * sl->stripes;
      } else {
        ext = (uint64_t)(sl->fill * (double)total);
        ext = ext / sl->stripes * sl->stripes;
      }
      if (ext == 0) {
        berr(b, sl->line, lp,
             "LV %s would have no extents (VG %s has %llu extents of %llu "
             "bytes)",
             lv->name, vg->name, (unsigned long long)total,
             (unsigned long long)vg->extent_size);
        goto out;
      }
      lv->extents = ext;
      if (sl->alloc != FF_ALLOC_INHERIT)
        lv->alloc = policy_names[sl->alloc];
      /* lvcreate: "Reducing requested stripe size … to maximum,
       * physical extent size" */
      ssize =
        sl->stripe_size < vg->extent_size ? sl->stripe_size : vg->extent_size;
      if (sl->kind == FF_LVK_THIN_POOL || sl->kind == FF_LVK_CACHE_POOL) {
        if (allocate_pool(b, sl, lp, vg, fl, li) < 0)
          goto out;
      } else if (sl->kind == FF_LVK_CACHE) {
        if (lvm_allocate(b, sl->line, lp, vg, fl, lv, 1, 0, sl->alloc, 0,
                         NULL) < 0 ||
            attach_cache(b, sl->line, lp, vg, li, li, sl->pool, sl->cache_mode,
                         sl->cache_policy,
                         sl->uuids ? sl->uuids[0] : NULL) < 0)
          goto out;
      } else if (sl->kind == FF_LVK_THIN) {
        if (make_thin(b, sl, lp, vg, li) < 0)
          goto out;
      } else if (sl->kind == FF_LVK_SNAPSHOT) {
        if (allocate_snapshot(b, sl, lp, vg, fl, li) < 0)
          goto out;
      } else if (sl->kind != FF_LVK_STRIPED) {
        if (allocate_mirror_raid(b, sl, lp, vg, fl, li) < 0)
          goto out;
      } else if (sl->nplace
                   ? place_lv(b, sl, lp, vg, fl, li, ssize)
                   : lvm_allocate(b, sl->line, lp, vg, fl, lv, sl->stripes,
                                  ssize, sl->alloc, 0, NULL))
        goto out;
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
      }
    }
  }
  /* lvconvert --type cache (a change): after every lvcreate */
  for (unsigned k = 0; k < g->nchanges; k++) {
    const struct ff_spec_change *ch = &g->changes[k];
    struct ff_lv *t;
    char cp[96];

    if (ch->cmd != FF_CHG_CACHE)
      continue;
    if (snprintf(cp, sizeof cp, "%s.changes.[%u]", path, k) < 0)
      cp[0] = '\0';
    if (!(t = find_lv(vg, vg->nlvs, ch->lv))) {
      berr(b, ch->line, cp, "lv '%s': VG %s has no such LV", ch->lv, vg->name);
      goto out;
    }
    if (attach_cache(b, ch->line, cp, vg, (uint32_t)(t - vg->lvs), vg->nlvs,
                     ch->pool, ch->cache_mode, ch->cache_policy, ch->uuid) < 0)
      goto out;
  }
  if (thin_pool_images(b, vg) < 0)
    goto out;
  r = 0;
out:
  for (uint32_t p = 0; p < vg->npvs; p++)
    free(fl[p].runs);
  free(fl);
  return r;
}

static char *
default_vg_description(const struct ff_vg *vg)
{
  struct ff_sb sb = FF_SB_INIT;

  ff_sb_addf(&sb, "Write from vgcreate %s", vg->name);
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
  if (lv->kind == FF_LVK_CACHE_POOL || lv->kind == FF_LVK_CACHE) {
    ff_sb_addf(&sb, " --type %s -l %llu", lv->segtype,
               (unsigned long long)lv->extents);
    if (sl->chunk_size)
      ff_sb_addf(&sb, " -c %lluk", (unsigned long long)(sl->chunk_size >> 10));
    if (sl->metadata_size)
      ff_sb_addf(&sb, " --poolmetadatasize %lluk",
                 (unsigned long long)(sl->metadata_size >> 10));
    add_cache_opts(&sb, sl->cache_mode, sl->cache_policy);
    if (lv->kind == FF_LVK_CACHE_POOL && !sl->pmspare)
      ff_sb_add(&sb, " --poolmetadataspare n");
    ff_sb_addf(&sb, " -n %s", lv->name);
    if (lv->kind == FF_LVK_CACHE)
      ff_sb_addf(&sb, " --cachepool %s/%s", vg->name, sl->pool);
    ff_sb_addf(&sb, " %s.", vg->name);
    return ff_sb_detach(&sb, NULL);
  }
  if (lv->kind == FF_LVK_THIN_POOL) {
    ff_sb_addf(&sb, " --type thin-pool -l %llu",
               (unsigned long long)lv->extents);
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
    if (sl->alloc != FF_ALLOC_INHERIT)
      ff_sb_addf(&sb, " --alloc %s", lv->alloc);
  }
  ff_sb_addf(&sb, " -l %llu", (unsigned long long)lv->extents);
  if (lv->kind == FF_LVK_STRIPED && seg && seg->stripes > 1)
    ff_sb_addf(&sb, " -i %u -I %lluk", seg->stripes,
               (unsigned long long)(seg->stripe_size / 1024));
  ff_sb_addf(&sb, " -n %s %s.", lv->name, vg->name);
  return ff_sb_detach(&sb, NULL);
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
  lv->wdesc[0] = d1 ? strdup(d1) : default_lv_description(sl, vg, lv);
  if (!lv->wdesc[0])
    return ff_error("out of memory");
  for (unsigned w = 1; w < lv->writes && w < 3; w++) {
    if (sl->descriptions[w])
      lv->wdesc[w] = strdup(sl->descriptions[w]);
    else if (!strncmp(lv->wdesc[0], "Write from ", 11)) {
      if (asprintf(&lv->wdesc[w], "Write[%u] from %s", w + 1,
                   lv->wdesc[0] + 11) < 0)
        lv->wdesc[w] = NULL;
    } else
      lv->wdesc[w] = strdup(lv->wdesc[0]);
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
  static const char *const cmd[] = {"vgchange", "lvchange", "pvchange",
                                    "lvconvert"};
  struct ff_sb sb = FF_SB_INIT;

  ff_sb_addf(&sb, "Write from %s", cmd[ch->cmd]);
  if (ch->cmd == FF_CHG_CACHE) {
    ff_sb_add(&sb, " --type cache");
    add_cache_opts(&sb, ch->cache_mode, ch->cache_policy);
    ff_sb_addf(&sb, " --cachepool %s/%s", vg->name, ch->pool);
  }
  for (char **t = ch->addtag; t && *t; t++)
    ff_sb_addf(&sb, " --addtag %s", *t);
  for (char **t = ch->deltag; t && *t; t++)
    ff_sb_addf(&sb, " --deltag %s", *t);
  if (ch->cmd == FF_CHG_LV || ch->cmd == FF_CHG_CACHE)
    ff_sb_addf(&sb, " %s/%s.", vg->name, target);
  else
    ff_sb_addf(&sb, " %s.", target);
  return ff_sb_detach(&sb, NULL);
}

/* Build every metadata write of vg, place it in both mdas, keep the
 * copies still on disk. */
static int
build_texts(struct bctx *b, const struct ff_spec_vg *g, struct ff_vg *vg,
            const char *path)
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
  int r = -1;

  ff_mda1_place(&vg->fmt, vg->pvs[0].dev_size, &mda1_start, &mda1_size);
  for (uint32_t i = 0; i < vg->nlvs; i++)
    nlw += vg->lvs[i].writes;
  vg->seqno = g->seqno ? g->seqno : 1 + nlw + g->nchanges;
  vg->texts = calloc(vg->seqno, sizeof *vg->texts);
  if (!vg->texts)
    return ff_error("out of memory");
  vg->first_kept = g->history < 0 || (uint64_t)g->history >= vg->seqno - 1
                     ? 0
                     : vg->seqno - 1 - (uint32_t)g->history;
  vgdesc =
    g->description ? strdup(g->description) : default_vg_description(vg);
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
  if (!lvt || !pvt || !lvtext || !lvctext || !pvtext || !wlv || !wphase) {
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
      if (lvt[li].text && !(lvctext[li] = keep(b->farm, lvt[li].text)))
        goto out;
    }
  for (uint32_t i = 0, k = 0; i < vg->nlvs; i++)
    for (uint32_t p = 0; p < vg->lvs[i].writes; p++, k++) {
      wlv[k] = i;
      wphase[k] = (uint8_t)p;
    }

  for (uint32_t w = 0; w < vg->seqno; w++) {
    struct ff_text *t = &vg->texts[w];
    struct ff_text_meta meta = {
      .phase = -1,
      .host = sp->creation_host,
      .uname = sp->uname,
      .lvm_version = sp->lvm_version,
    };
    uint32_t nl = w == 0 ? 0 : w <= nlw ? wlv[w - 1] + 1 : vg->nlvs;
    char *desc = NULL;

    if (w > nlw && w <= nlw + g->nchanges) {
      const struct ff_spec_change *ch = &g->changes[w - nlw - 1];
      struct tagset *ts = &vgt;
      const char *target = vg->name;
      char cp[96];

      snprintf(cp, sizeof cp, "%s.changes.[%u]", path, w - nlw - 1);
      if (ch->cmd == FF_CHG_LV || ch->cmd == FF_CHG_CACHE) {
        uint32_t li = 0;

        while (li < vg->nlvs && strcmp(vg->lvs[li].name, ch->lv))
          li++;
        if (li == vg->nlvs) {
          berr(b, ch->line, cp, "lv '%s': VG %s has no such LV", ch->lv,
               vg->name);
          goto out;
        }
        ts = &lvt[li];
        target = vg->lvs[li].name;
        if (ch->cmd == FF_CHG_CACHE) {
          /* the new LV_corig: made by this write */
          vg->lvs[li].attach_seq = vg->lvs[vg->lvs[li].link].attach_seq =
            w + 1;
          vg->lvs[li].subs[0].time = ch->has_time ? ch->time : prev_time;
        }
      } else if (ch->cmd == FF_CHG_PV) {
        ts = &pvt[ch->pv];
        target = vg->pvs[ch->pv].hint;
      }
      if (tagset_change(ts, ch->addtag, ch->deltag) < 0)
        goto out;
      for (uint32_t i = 0; i < vg->nlvs; i++)
        lvtext[i] = lvt[i].text;
      for (uint32_t i = 0; i < vg->npvs; i++)
        pvtext[i] = pvt[i].text;
      desc = ch->description ? strdup(ch->description)
                             : default_change_description(ch, vg, target);
      meta.description = desc;
      meta.time = ch->has_time ? ch->time : prev_time;
    } else if (w == 0) {
      meta.description = vgdesc;
      meta.time = g->has_time ? g->time : sp->creation_time;
    } else if (w <= nlw) {
      struct ff_lv *lv = &vg->lvs[wlv[w - 1]];

      if (lv->kind == FF_LVK_CACHE && wphase[w - 1] == 1)
        lv->attach_seq = vg->lvs[lv->link].attach_seq = w + 1;
      desc = strdup(lv->wdesc[wphase[w - 1]]);
      meta.description = desc;
      meta.time = lv->wtime[wphase[w - 1]];
      meta.phase = wphase[w - 1];
      meta.first_write =
        (lv->kind == FF_LVK_MIRROR || lv->kind == FF_LVK_RAID) &&
        lv->writes == 2 && wphase[w - 1] == 0;
    } else {
      desc = NULL;
      if (asprintf(&desc, "Write from vgck --updatemetadata %s.", vg->name) <
          0)
        desc = NULL;
      meta.description = desc;
      meta.time = prev_time;
    }
    prev_time = meta.time;
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
      berr(b, g->line, path,
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
    if (w < vg->first_kept) {
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
  return r;
}

static int build_vg(struct bctx *b, unsigned gi, uint32_t fi,
                    const char *path);

static int
build_vg_group(struct bctx *b, unsigned gi)
{
  const struct ff_spec *sp = b->spec;
  const struct ff_spec_vg *g = &sp->vgs[gi];
  struct ff_farm *farm = b->farm;
  uint32_t fi = farm->nfmts++;
  char path[64];

  snprintf(path, sizeof path, "vgs.[%u]", gi);
  farm->fmts[fi] = g->fmt.lay; /* ff-spec.c checked every PV's size */
  for (unsigned k = 0; k < g->count; k++)
    if (build_vg(b, gi, fi, path) < 0)
      return -1;
  return 0;
}

/* One VG of group gi, of format fi, as farm->vgs[b->v]. */
static int
build_vg(struct bctx *b, unsigned gi, uint32_t fi, const char *path)
{
  const struct ff_spec *sp = b->spec;
  const struct ff_spec_vg *g = &sp->vgs[gi];
  struct ff_farm *farm = b->farm;
  {
    struct ff_vg *vg = &farm->vgs[b->v];
    uint32_t nlvs = 0;

    vg->name = ff_format_uint(g->name, b->v);
    if (!vg->name)
      return ff_error("out of memory");
    if (!ff_valid_lvm_name(vg->name))
      return berr(b, g->line, path, "'%s' is not a valid VG name", vg->name);
    if (g->uuid)
      memcpy(vg->uuid, g->uuid, FF_UUID_LEN);
    else
      ff_uuid_make(vg->uuid, sp->seed, K_VG, b->v, 0);
    vg->extent_size = g->extent_size;
    vg->fmt = farm->fmts[fi];
    vg->damage = g->damage;
    vg->device_id_type = g->device_id_type;

    vg->npvs = g->pvs;
    vg->pvs = calloc(g->pvs, sizeof *vg->pvs);
    if (!vg->pvs)
      return ff_error("out of memory");
    for (uint32_t p = 0; p < g->pvs; p++) {
      struct ff_pv *pv = &vg->pvs[p];
      int missing = g->damage == FF_DMG_MISSING_PV && p == g->pvs - 1;
      uint64_t size = g->device_sizes ? g->device_sizes[p] : g->device_size;
      uint64_t mda1_start, mda1_size, pe_count;

      ff_mda1_place(&vg->fmt, size, &mda1_start, &mda1_size);
      if (vg->fmt.mda_copies == 2 && !mda1_size)
        return berr(b, g->line, path,
                    "device_size %llu is too small for mda_copies = 2: less "
                    "than 32 KiB (lvm's minimum) is left for mda1 after "
                    "pe_start %llu",
                    (unsigned long long)size,
                    (unsigned long long)vg->fmt.pe_start);
      if (size < vg->fmt.pe_start + mda1_size)
        pe_count = 0;
      else
        pe_count = (size - vg->fmt.pe_start - mda1_size) / g->extent_size;
      if (pe_count == 0)
        return berr(
          b, g->line, path,
          "device_size %llu leaves no extent of %llu bytes after "
          "pe_start %llu%s",
          (unsigned long long)size, (unsigned long long)g->extent_size,
          (unsigned long long)vg->fmt.pe_start, mda1_size ? " and mda1" : "");
      if (g->device_ids && !(pv->device_id = keep(farm, g->device_ids[p])))
        return -1;

      if (g->pv_uuids)
        memcpy(pv->uuid, g->pv_uuids[p], FF_UUID_LEN);
      else
        ff_pv_uuid_make(pv->uuid, sp->seed, K_PV, b->v, p);
      pv->dev_size = size;
      pv->pe_count = pe_count;
      pv->dev = FF_NONE;
      if (!missing) {
        struct ff_device *dev = new_device(b, g->devices, p, size, FF_ROLE_PV);

        if (!dev)
          return -1;
        pv->dev = b->d - 1;
        dev->vg = b->v;
        dev->pv = p;
        dev->fmt = fi;
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
          dup->fmt = fi;
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
    vg->nlvs = nlvs;
    vg->lvs = calloc(nlvs ? nlvs : 1, sizeof *vg->lvs);
    if (!vg->lvs)
      return ff_error("out of memory");
    if (allocate_lvs(b, g, vg, path) < 0 || build_texts(b, g, vg, path) < 0)
      return -1;

    /* Each PV holds every kept write, a stale one all but the last. */
    for (uint32_t p = 0; p < g->pvs; p++) {
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
      return berr(b, o->line, path,
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
      return berr(b, line, path,
                  "device name '%s' is used twice (devices %u and %u; the "
                  "other is made by %s at line %d)",
                  n, di < dj ? di : dj, di < dj ? dj : di, other, oline);
    }
    if (strchr(n, '/') || !ff_valid_lvm_name(n)) {
      line = dev_origin(b->spec, di, path, sizeof path);
      return berr(b, line, path,
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
      r = berr(b, line, path,
               "VG name '%s' is used twice (the other is made by %s at line "
               "%d)",
               vgs[i]->name, other, oline);
    }
  free(vgs);
  return r;
}

/* The mda0 header checksum sits at byte 4096, where lvm's md filter looks
 * for the md magic (lvm2-ondisk-format.md §8 item 14). */
static int
check_md_collision(const struct bctx *b)
{
  const struct ff_farm *farm = b->farm;

  for (uint32_t i = 0; i < farm->ndevs; i++) {
    const struct ff_device *d = &farm->devs[i];
    uint8_t sec[512];
    char path[64];

    if (d->role != FF_ROLE_PV && d->role != FF_ROLE_ORPHAN)
      continue;
    if (ff_farm_read_base(farm, i, sec, FF_MDA0_START, 4) < 0)
      return -1;
    if (ff_get_le32(sec) == FF_MD_MAGIC)
      return berr(b, dev_origin(b->spec, i, path, sizeof path), path,
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

static uint64_t
fingerprint(const struct ff_farm *farm)
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
    const struct ff_text *t = &farm->vgs[i].texts[farm->vgs[i].seqno - 1];

    h = fnv(h, &t->crc, sizeof t->crc);
  }
  return h;
}

static int
overlay_base(void *opaque, uint32_t dev, void *buf, uint64_t off, size_t len)
{
  return ff_farm_read_base(opaque, dev, buf, off, len);
}

struct ff_farm *
ff_farm_new(const struct ff_spec *sp)
{
  struct bctx b = {.spec = sp};
  struct ff_farm *farm;
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
    return NULL;
  }
  if (ndevs > 1000000 || nvgs > 1000000) {
    ff_error("%s: the spec makes %llu devices and %llu VGs (at most "
             "1000000 each)",
             sp->file, (unsigned long long)ndevs, (unsigned long long)nvgs);
    return NULL;
  }

  farm = calloc(1, sizeof *farm);
  if (!farm) {
    ff_error("out of memory");
    return NULL;
  }
  b.farm = farm;
  farm->seed = sp->seed;
  farm->ndevs = (uint32_t)ndevs;
  farm->nvgs = (uint32_t)nvgs;
  farm->devs = calloc(ndevs, sizeof *farm->devs);
  farm->vgs = calloc(nvgs ? nvgs : 1, sizeof *farm->vgs);
  farm->fmts = calloc(sp->nvgs + sp->nothers + 1, sizeof *farm->fmts);
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
  if (check_unique(&b) < 0 || check_md_collision(&b) < 0)
    goto fail;
  farm->fingerprint = fingerprint(farm);

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
  return farm;

fail:
  ff_farm_free(farm);
  return NULL;
}

static void
free_lv(struct ff_lv *lv)
{
  for (uint32_t s = 0; s < lv->nsegs; s++)
    free(lv->segs[s].areas);
  free(lv->segs);
  free(lv->name);
  free(lv->oldname);
  free(lv->wdesc[0]);
  free(lv->wdesc[1]);
  free(lv->wdesc[2]);
}

void
ff_farm_free(struct ff_farm *farm)
{
  if (!farm)
    return;
  ff_overlay_free(farm->overlay);
  for (uint32_t i = 0; i < farm->nvgs; i++) {
    struct ff_vg *vg = &farm->vgs[i];

    for (uint32_t p = 0; p < vg->npvs; p++)
      free(vg->pvs[p].hint);
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
    free(vg->name);
  }
  for (uint32_t i = 0; i < farm->ntms; i++)
    ff_thinmeta_free(farm->tms[i].m);
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
  free(farm);
}
