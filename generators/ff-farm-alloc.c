/* fusefarm: building a farm, the allocator
 * (see ff-farm-int.h).
 *
 * Mirrors lvm2 2.03.16's lib/metadata/lv_manip.c (_allocate and what it
 * calls, the mirror log's own allocation, generate_lv_name) and pv_map.c
 * (each PV's free areas, largest first).  Which extents an LV gets, and
 * so every segment of every metadata write, must stay byte-identical to
 * what lvm writes.
 */
#include "ff-farm-int.h"
#include "ff-error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum {
  A_CLING_TO_ALLOCED = 1,
  A_POSITIONAL_FILL = 2,
  A_CAN_SPLIT = 4,
  A_CONTIGUOUS_TO_LVSEG = 8,
  A_CLING_TO_LVSEG = 16,
  A_AREA_COUNT_MATCHES = 32
};
enum { USE_AREA, NEXT_PV, NEXT_AREA, PREFERRED };

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
  /* lvextend: the LV's first and last segments (prev_lvseg), or NULL */
  const struct ff_seg *first_seg, *prev_seg;
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

/* _check_contiguous (contig) and _check_cling through _for_each_pv and
 * _is_condition: does an area of segment seg end right before a (contig),
 * or lie on a's PV?  lvm looks at one segment only: the LV's last for
 * contiguity, the one holding extent 0 (its first) for cling, whatever
 * maximise_cling asks.  Positional: the area is reserved whole in the
 * slot of the segment's area it follows.  1 yes, 0 no, -1 on error. */
static int
seg_condition(struct astate *st, const struct ff_seg *seg, struct apva *a,
              int contig)
{
  int positional = st->flags & A_POSITIONAL_FILL;
  uint64_t alen = seg->len / seg->stripes;

  for (uint32_t s = 0; s < seg->stripes; s++) {
    const struct ff_area *ar = &seg->areas[s];

    if (positional && st->areas[s].pva)
      continue;
    if (ar->pv != a->pv || (contig && ar->pe + alen != a->start))
      continue;
    if (positional && s >= st->num_positional)
      continue;
    if (positional && reserve_area(st, a, a->count, s) < 0)
      return -1;
    return 1;
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
      (st->flags &
       (A_CONTIGUOUS_TO_LVSEG | A_CLING_TO_LVSEG | A_CLING_TO_ALLOCED))) {
    /* maximise_cling: contiguity, then the same PV as the LV, whenever
     * the area counts match */
    int lvseg = st->flags & (A_CONTIGUOUS_TO_LVSEG | A_AREA_COUNT_MATCHES);
    int r = 0;

    if (lvseg && (r = seg_condition(st, st->prev_seg, a, 1)) < 0)
      return -1;
    if (!r && (st->flags & A_CONTIGUOUS_TO_LVSEG))
      return NEXT_AREA;
    lvseg = st->flags & (A_CLING_TO_LVSEG | A_AREA_COUNT_MATCHES);
    if (!r && lvseg && (r = seg_condition(st, st->first_seg, a, 0)) < 0)
      return -1;
    if (!r && (st->flags & A_CLING_TO_ALLOCED) &&
        (r = cling_to_alloced(st, a)) < 0)
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
  if (!(st->flags & A_POSITIONAL_FILL))
    ;
  else if (st->flags & (A_CONTIGUOUS_TO_LVSEG | A_CLING_TO_LVSEG))
    st->num_positional = st->prev_seg->stripes;
  else if (st->flags & A_CLING_TO_ALLOCED)
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
      if (st->alloc == FF_ALLOC_CLING && (st->flags & A_CLING_TO_LVSEG) &&
          (st->flags & A_POSITIONAL_FILL))
        st->flags &= ~A_POSITIONAL_FILL;
      else if (st->alloc == FF_ALLOC_NORMAL &&
               (st->flags & A_CLING_TO_ALLOCED))
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

/* (ff-farm-int.h) */
uint64_t
ff_fb_free_on(const struct ff_vg *vg, const struct freelist *fl,
              const uint8_t *use)
{
  uint64_t n = 0;

  for (uint32_t p = 0; p < vg->npvs; p++)
    for (uint32_t f = 0; use[p] && !vg->pvs[p].unalloc && f < fl[p].n; f++)
      n += fl[p].runs[f].count;
  return n;
}

/* (ff-farm-int.h) */
int
ff_fb_allocate_on(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
                  struct freelist *fl, struct ff_lv *lv, const uint8_t *use)
{
  uint8_t *was = calloc(vg->npvs, 1);
  int r;

  if (!was)
    return ff_error("out of memory");
  /* the others as if unallocatable, for this allocation only */
  for (uint32_t p = 0; p < vg->npvs; p++) {
    was[p] = vg->pvs[p].unalloc;
    vg->pvs[p].unalloc = (uint8_t)(!use[p] || was[p]);
  }
  r = ff_fb_lvm_allocate(b, line, lp, vg, fl, lv, 1, 0, FF_ALLOC_INHERIT, 0,
                         NULL);
  for (uint32_t p = 0; p < vg->npvs; p++)
    vg->pvs[p].unalloc = was[p];
  free(was);
  return r;
}

/* (ff-farm-int.h) */
int
ff_fb_free_give(struct freelist *f, uint64_t pe, uint64_t len)
{
  uint32_t i = 0;
  struct apva *r;

  while (i < f->n && f->runs[i].start + f->runs[i].count <= pe)
    i++;
  if ((i < f->n && f->runs[i].start < pe + len))
    return ff_error("internal error: PV %llu+%llu is already free",
                    (unsigned long long)pe, (unsigned long long)len);
  /* next to the run before it, the one after it, or both */
  if (i > 0 && f->runs[i - 1].start + f->runs[i - 1].count == pe) {
    r = &f->runs[i - 1];
    r->count += len;
    if (i < f->n && r->start + r->count == f->runs[i].start) {
      r->count += f->runs[i].count;
      memmove(&f->runs[i], &f->runs[i + 1], (f->n - i - 1) * sizeof *r);
      f->n--;
    }
    return 0;
  }
  if (i < f->n && pe + len == f->runs[i].start) {
    f->runs[i].start = pe;
    f->runs[i].count += len;
    return 0;
  }
  if (f->n == f->cap) {
    struct apva *n = realloc(f->runs, (f->cap ? 2 * f->cap : 4) * sizeof *n);

    if (!n)
      return ff_error("out of memory");
    f->runs = n;
    f->cap = f->cap ? 2 * f->cap : 4;
  }
  memmove(&f->runs[i + 1], &f->runs[i], (f->n - i) * sizeof *f->runs);
  f->n++;
  f->runs[i] = (struct apva){.start = pe, .count = len};
  return 0;
}

const char *const ff_fb_policy_names[] = {"inherit", "contiguous", "cling",
                                          "normal", "anywhere"};

/* _allocate: lv's segments grow to new_extents (lvcreate: from none;
 * lvextend: after its last segment, prev_lvseg), by policy, on the free
 * runs fl[npvs] of the allocatable PVs, taken from fl; see
 * ff_fb_lvm_allocate. */
static int
allocate(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
         struct freelist *fl, struct ff_lv *lv, uint64_t new_extents,
         uint32_t stripes, uint64_t stripe_size, enum ff_alloc_policy policy,
         uint64_t log_len, struct ff_area *log_area, int extend)
{
  struct astate st = {0};
  struct apva *pool = NULL;
  struct ff_seg *segs;
  uint64_t free_pes = 0, base = extend ? lv->extents : 0;
  uint32_t nruns = 0, k = 0;
  int r = -1, top, can_split;

  /* lvm: an LV of policy inherit is placed by the VG's */
  if (policy == FF_ALLOC_INHERIT)
    policy = (enum ff_alloc_policy)vg->alloc;
  top = policy == FF_ALLOC_INHERIT ? FF_ALLOC_NORMAL : policy;
  can_split = top != FF_ALLOC_CONTIGUOUS;

  st.npvs = vg->npvs;
  st.area_count = stripes;
  st.new_extents = new_extents;
  st.allocated = base;
  if (extend) {
    st.first_seg = &lv->segs[0];
    st.prev_seg = &lv->segs[lv->nsegs - 1];
  }
  st.log_len = log_len;
  st.log_needed = log_len ? 1 : 0;
  st.areas_size =
    vg->npvs < stripes + st.log_needed ? stripes + st.log_needed : vg->npvs;
  if (st.prev_seg)
    st.areas_size += st.prev_seg->stripes;
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
    /* (pvchange -x n: not among the allocatable PVs) */
    for (uint32_t i = 0; i < fl[p].n && !vg->pvs[p].unalloc; i++, k++) {
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
        free_pes - (st.allocated - base)) {
      if (base)
        ff_fb_err(b, line, lp,
                  "lvm refuses it: \"Insufficient free space: %llu extents "
                  "needed, but only %llu available\" (LV %s in VG %s)",
                  (unsigned long long)(st.new_extents - base),
                  (unsigned long long)free_pes, lv->name, vg->name);
      else
        ff_fb_err(b, line, lp, "VG %s has %llu free extents, LV %s needs %llu",
                  vg->name, (unsigned long long)free_pes, lv->name,
                  (unsigned long long)(st.new_extents + log_len));
      goto out;
    }
    st.alloc = alloc;
    st.flags = can_split ? A_CAN_SPLIT : 0;
    /* _init_alloc_parms */
    if (st.prev_seg && stripes == st.prev_seg->stripes) {
      st.flags |= A_AREA_COUNT_MATCHES;
      if (alloc == FF_ALLOC_CONTIGUOUS)
        st.flags |= A_CONTIGUOUS_TO_LVSEG | A_POSITIONAL_FILL;
      else if (alloc == FF_ALLOC_CLING)
        st.flags |= A_CLING_TO_LVSEG | A_POSITIONAL_FILL;
    } else if (alloc == FF_ALLOC_CLING)
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
    ff_fb_err(
      b, line, lp,
      "lvm's %s policy finds no room for the metadata of LV %s in VG %s "
      "(%llu extents; lvcreate: insufficient free space for log "
      "allocation)",
      ff_fb_policy_names[top], lv->name, vg->name,
      (unsigned long long)log_len);
    goto out;
  }
  if (st.allocated != st.new_extents) {
    ff_fb_err(b, line, lp,
              "lvm's %s policy finds no room for LV %s in VG %s: %llu more "
              "extents needed (lvcreate: insufficient suitable %sallocatable "
              "extents)",
              ff_fb_policy_names[top], lv->name, vg->name,
              (unsigned long long)(st.new_extents - st.allocated),
              can_split ? "" : "contiguous ");
    goto out;
  }

  /* _setup_alloced_segments, then lv_merge_segments */
  if (!extend) {
    lv->segs = NULL;
    lv->nsegs = 0;
  }
  segs = realloc(lv->segs, (lv->nsegs + st.nbatches + 1) * sizeof *segs);
  if (!segs) {
    ff_error("out of memory");
    goto out;
  }
  lv->segs = segs;
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
  lv->extents = new_extents;
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

/* Place lv (lv->extents, stripes of stripe_size) as lvcreate --alloc
 * policy would on the free runs fl[npvs]; take them from fl.  With
 * log_len, one more area of log_len extents is found in the same
 * allocation (a thin pool's metadata: lvm allocates it as a mirror log)
 * and returned in *log_area.  Returns -1 with the error set (naming lp),
 * as lvcreate refuses. */
int
ff_fb_lvm_allocate(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
                   struct freelist *fl, struct ff_lv *lv, uint32_t stripes,
                   uint64_t stripe_size, enum ff_alloc_policy policy,
                   uint64_t log_len, struct ff_area *log_area)
{
  return allocate(b, line, lp, vg, fl, lv, lv->extents, stripes, stripe_size,
                  policy, log_len, log_area, 0);
}

int
ff_fb_lvm_extend(struct bctx *b, int line, const char *lp, struct ff_vg *vg,
                 struct freelist *fl, struct ff_lv *lv, uint64_t new_extents,
                 enum ff_alloc_policy policy)
{
  const struct ff_seg *last = &lv->segs[lv->nsegs - 1];

  return allocate(b, line, lp, vg, fl, lv, new_extents, last->stripes,
                  last->stripe_size, policy, 0, NULL, 1);
}

/* ff_fb_lvm_allocate() of lv->extents as one segment of `areas` parallel areas
 * (a cache pool's metadata + data, a mirror's or raid's images), or -1
 * with the error: the farm places each such area in one free run, and
 * when lvm would split one (no free run is long enough) the spec is
 * refused, the rest of the message (fmt) saying what and why. */
__attribute__((format(printf, 9, 10))) int
ff_fb_allocate_unsplit(struct bctx *b, int line, const char *lp,
                       struct ff_vg *vg, struct freelist *fl, struct ff_lv *lv,
                       uint32_t areas, enum ff_alloc_policy policy,
                       const char *fmt, ...)
{
  char what[512];
  va_list ap;

  if (ff_fb_lvm_allocate(b, line, lp, vg, fl, lv, areas, 0, policy, 0, NULL) <
      0)
    return -1;
  if (lv->nsegs == 1)
    return 0;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ff_fb_err(b, line, lp, "%s would need more than one free area (%s)",
                   what, "the farm places it in one area; lvm would split it");
}

/* The disk log of a mirror whose images are placed, as add_mirror_log's
 * own allocate_extents() places it (lv_manip.c _find_some_parallel_space
 * with area_count 0 and log_count 1): on each PV that holds no image,
 * its areas are visited largest first, each one reserving log_len, so
 * the PV's candidate is the last one visited; the log goes to the last
 * candidate PV, at its candidate's start.  With no such PV, the normal
 * policy's extra log iteration takes the last PV with free space (image
 * PVs included), its smallest area's first extent. */
int
ff_fb_place_mirror_log(struct bctx *b, int line, const char *lp,
                       struct ff_vg *vg, struct freelist *fl,
                       const struct ff_lv *top, uint64_t log_len,
                       enum ff_alloc_policy policy, uint32_t *pv, uint64_t *pe)
{
  struct apvm *pvms = calloc(vg->npvs, sizeof *pvms);
  uint8_t *img = calloc(vg->npvs, 1);
  struct astate st = {0};
  struct apva *pool;
  uint32_t nruns = 0, k = 0;
  int found = 0;

  if (policy == FF_ALLOC_INHERIT)
    policy = (enum ff_alloc_policy)vg->alloc;
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
    return ff_fb_err(
      b, line, lp,
      "lvm's %s policy finds no room for the mirror log of LV %s "
      "in VG %s (%llu extents)",
      ff_fb_policy_names[policy == FF_ALLOC_INHERIT ? FF_ALLOC_NORMAL
                                                    : policy],
      top->name, vg->name, (unsigned long long)log_len);
  return free_take(&fl[*pv], *pe, log_len);
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
int
ff_fb_place_lv(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
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
      return ff_fb_err(
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
        return ff_fb_err(b, sl->place_lines[i], kp,
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
        return ff_fb_err(
          b, sl->place_lines[i], kp, "%u:%llu-%llu overlaps %s%s on PV %u",
          rg[k].pv, (unsigned long long)rg[k].first,
          (unsigned long long)rg[k].last, who ? "" : "extents in use",
          who ? who : "", rg[k].pv);
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

/* lvm's ff_fb_generate_lv_name(): PREFIX and one more than the highest N of
 * the LVs (hidden ones too) named PREFIX N..., as its sscanf("PREFIX%d")
 * reads them, among the first nl top LVs of vg and their sub-LVs, and
 * extra (a sub-LV made already, or NULL). */
char *
ff_fb_generate_lv_name(const struct ff_vg *vg, uint32_t nl,
                       const struct ff_lv *top, const char *prefix)
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
struct ff_lv *
ff_fb_new_sub(struct bctx *b, const struct ff_spec_lv *sl, struct ff_lv *top,
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

/* An LV of the first li of vg named name (and not removed by an earlier
 * lvremove), or NULL. */
struct ff_lv *
ff_fb_find_lv(struct ff_vg *vg, uint32_t li, const char *name)
{
  for (uint32_t l = 0; l < li; l++)
    if (!vg->lvs[l].f.removed && !strcmp(vg->lvs[l].name, name))
      return &vg->lvs[l];
  return NULL;
}
