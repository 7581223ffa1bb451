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
enum { K_PV = 1, K_VG, K_LV, K_ORPHAN, K_SIG, K_SUBLV };

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

/* What a sub-LV of a mirror or raid LV is (lvm's names: LV_rimage_N,
 * LV_rmeta_N, LV_mimage_N, LV_mlog). */
enum ff_sub_role {
  FF_SUB_NONE = 0, /* a top LV */
  FF_SUB_RIMAGE,
  FF_SUB_RMETA,
  FF_SUB_MIMAGE,
  FF_SUB_MLOG,
  FF_SUB_PMSPARE,  /* the VG's lvolN_pmspare, made by the first pool */
  FF_SUB_TMETA,    /* POOL_tmeta */
  FF_SUB_TDATA,    /* POOL_tdata */
  FF_SUB_SNAPSHOT, /* snapshotN, the snapshot segment over a COW LV */
  FF_SUB_CMETA,    /* POOL_cmeta (POOL_cpool_cmeta once it caches an LV) */
  FF_SUB_CDATA,    /* POOL_cdata (POOL_cpool_cdata) */
  FF_SUB_CORIG,    /* LV_corig, the cached LV's own extents */
};

const char *ff_sub_role_name(enum ff_sub_role r);

/* An LV.  A top LV (vg->lvs) of kind FF_LVK_MIRROR or FF_LVK_RAID has one
 * segment of that kind over its sub-LVs, which are LVs of the VG too
 * (hidden: no VISIBLE), held in subs[] in lvm's creation order: raid
 * rimage_0, rmeta_0, rimage_1, ...; mirror mimage_0 .. mimage_N, mlog.
 * Their own segments are linear (segs).  A top LV of kind FF_LVK_STRIPED
 * has its segments in segs. */
struct ff_lv {
  char *name;
  char uuid[FF_UUID_LEN];
  int64_t time;
  uint64_t extents;
  const char *alloc; /* allocation_policy in the text, NULL: inherit */
  uint32_t nsegs;
  struct ff_seg *segs;
  /* mirror and raid top LVs */
  uint8_t kind;         /* enum ff_lv_kind */
  uint8_t role;         /* enum ff_sub_role (sub-LVs) */
  uint8_t nosync;       /* NOTSYNCED */
  uint8_t writes;       /* metadata writes of its lvcreate: 1 or 2 */
  const char *segtype;  /* the text's type ("raid5"); static */
  const char *ktype;    /* the kernel's ("raid5_ls"); static */
  uint32_t images;      /* device_count / mirror_count */
  uint32_t stripes;     /* raid data stripes (1 for raid1) */
  uint32_t data_copies; /* raid10: 2 */
  uint64_t region_size; /* sectors */
  uint64_t stripe_size; /* raid: sectors, 0 for raid1 */
  uint32_t nsubs;
  struct ff_lv *subs; /* [nsubs], creation order */
  uint32_t parent;    /* sub-LVs: the top LV's index in vg->lvs */
  int64_t wtime[3];   /* the footer time of each write */
  char *wdesc[3];     /* and its description */
  /* thin pools (FF_LVK_THIN_POOL: subs = [pmspare,] tmeta, tdata), thin
   * LVs and snapshots (FF_LVK_SNAPSHOT: the COW, with its own linear
   * segments; subs = [snapshotN]) */
  uint32_t chunk;          /* pool, snapshot: chunk size in sectors */
  uint8_t discards;        /* pool: enum ff_discards */
  uint8_t zero;            /* pool: zero_new_blocks */
  uint8_t new_spare;       /* pool: subs[0] is the spare it made */
  uint32_t link;           /* thin: its pool's, snapshot: its origin's index
                            * in vg->lvs */
  uint32_t device_id;      /* thin */
  uint64_t transaction_id; /* thin: the pool's id before it; pool: the last */
  uint32_t nthins;         /* pool: thin LVs made in it */
  uint8_t cow_header[16];  /* snapshot with cow_header: the kernel's */
  /* cache pools (FF_LVK_CACHE_POOL: subs = [pmspare,] cmeta, cdata) and
   * cached LVs (FF_LVK_CACHE: subs = [corig], no segments of their own).
   * A pool that caches an LV is renamed POOL_cpool (its cmeta and cdata
   * POOL_cpool_cmeta, POOL_cpool_cdata) and hidden from write attach_seq
   * on: name is the last name, oldname the one before (or NULL). */
  uint8_t cache_mode;   /* enum ff_cache_mode: pool, as created; cache LV,
                         * as attached (never NONE) */
  uint8_t cache_policy; /* enum ff_cache_policy, likewise */
  uint32_t attach_seq;  /* pool, cache LV: the seqno of the write that
                         * attaches them (0: not yet, while texts are
                         * built) */
  char *oldname;
};

/* Bytes of a PV's data area that are not zero (what lvm itself writes
 * into an LV when it creates it: a mirror's disk log header, the 0xFF
 * fill of a nosync log): len bytes at off of PV pv, each fill, or bytes
 * when not NULL.  Later ones win over earlier ones where they overlap;
 * the overlay wins over all. */
struct ff_blob {
  uint32_t pv;
  uint64_t off, len;
  uint8_t fill;
  const uint8_t *bytes; /* [len] static, or NULL */
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
  uint32_t nblobs;
  struct ff_blob *blobs;
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
  /* Thin-pool metadata images, shared by pools of the same shape. */
  struct ff_tmcache *tms;
  uint32_t ntms;
};

/* One ff_thinmeta image: for a tmeta of tmeta_bytes, data_blocks chunks
 * of chunk sectors, nthin thin LVs made with lvcreate -an. */
struct ff_tmcache {
  uint64_t tmeta_bytes, data_blocks;
  uint32_t chunk, nthin;
  struct ff_thinmeta *m;
};

/* The device whose bytes dev carries (itself, or the duplicated one). */
static inline uint32_t
ff_farm_target(const struct ff_farm *farm, uint32_t dev)
{
  return farm->devs[dev].role == FF_ROLE_DUPLICATE ? farm->devs[dev].alias
                                                   : dev;
}

#endif
