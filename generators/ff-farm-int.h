/* fusefarm: the layout of a farm, shared by ff-farm.c (building) and
 * ff-farm-read.c (reading), for generators/ and the unit tests.
 *
 * Everything else sees struct ff_farm as opaque and uses the accessors of
 * ff-farm.h: a front end that read these fields would tie itself to how
 * the farm is built.  Invariants, thread model and ownership: ff-farm.h.
 */
#ifndef FF_FARM_INT_H
#define FF_FARM_INT_H

#include "ff-farm.h"

/* Hash kinds, so every UUID stream is independent (building hashes the
 * UUIDs, reading hashes a signature's bytes). */
enum { K_PV = 1, K_VG, K_LV, K_ORPHAN, K_SIG };

/* One metadata write (one seqno).  buf is NULL for a write whose copy is
 * no longer on disk (only its size mattered, for placement). */
struct ff_text {
  char *buf; /* size bytes, the last one NUL */
  uint32_t size;
  uint32_t crc;      /* ff_lvm_crc over size bytes */
  uint64_t mda0_off; /* where it sits, relative to mda0's start */
  uint64_t mda1_off; /* and to mda1's */
};

struct ff_area {
  uint32_t pv; /* index in the VG's PV table */
  uint64_t pe; /* first PE on that PV */
};

struct ff_seg {
  uint64_t le;  /* first logical extent */
  uint64_t len; /* extents, over all stripes */
  uint32_t stripes;
  uint64_t stripe_size;  /* bytes; 0 when stripes == 1 */
  struct ff_area *areas; /* [stripes] */
};

struct ff_lv {
  char *name;
  char uuid[FF_UUID_LEN];
  int64_t time;
  uint64_t extents;
  const char *alloc; /* allocation_policy in the text, NULL: inherit */
  uint32_t nsegs;
  struct ff_seg *segs;
};

struct ff_pv {
  char uuid[FF_UUID_LEN];
  uint32_t dev;      /* device index, FF_NONE when missing */
  uint64_t dev_size; /* bytes */
  uint64_t pe_count;
  char *hint;            /* device = "..." in the text */
  const char *device_id; /* the spec's, or NULL */
};

struct ff_vg {
  char *name;
  char uuid[FF_UUID_LEN];
  uint64_t extent_size; /* bytes */
  struct ff_pvfmt fmt;
  enum ff_damage damage;
  const char *device_id_type; /* with each PV's device_id, or NULL */
  uint32_t npvs;
  struct ff_pv *pvs;
  uint32_t nlvs;
  struct ff_lv *lvs;
  uint32_t seqno;        /* current seqno == number of writes */
  uint32_t first_kept;   /* oldest write still on disk (0-based) */
  struct ff_text *texts; /* [seqno]; texts[w] is seqno w + 1 */
};

struct ff_device {
  char *name;
  uint64_t size;          /* bytes */
  uint8_t role;           /* enum ff_role */
  uint8_t damage;         /* enum ff_damage, as it applies to this device */
  uint8_t sig;            /* enum ff_sig_type for signatures */
  uint32_t vg;            /* FF_ROLE_PV: VG index, else FF_NONE */
  uint32_t pv;            /* FF_ROLE_PV: index in the VG's PV table */
  uint32_t alias;         /* FF_ROLE_DUPLICATE: the device it copies */
  uint32_t ncopies;       /* writes present on this PV (stale: seqno-1) */
  uint32_t fmt;           /* PV layout index (ff_farm.fmts) */
  char uuid[FF_UUID_LEN]; /* PV roles */
};

struct ff_farm {
  uint64_t seed;
  uint32_t ndevs;
  struct ff_device *devs;
  uint32_t nvgs;
  struct ff_vg *vgs;
  uint32_t nfmts;
  struct ff_pvfmt *fmts;
  uint32_t *by_name; /* device indices sorted by name */
  uint64_t fingerprint;
  struct ff_overlay *overlay;
  /* Strings of the spec the farm keeps (device ids), one copy each. */
  char **pool;
  uint32_t npool, pool_cap;
};

/* The device whose bytes dev carries (itself, or the duplicated one). */
static inline uint32_t
ff_farm_target(const struct ff_farm *farm, uint32_t dev)
{
  return farm->devs[dev].role == FF_ROLE_DUPLICATE ? farm->devs[dev].alias
                                                   : dev;
}

#endif
