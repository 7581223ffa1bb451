/* fusefarm: the layout of a farm, shared by ff-farm.c (building) and
 * ff-farm-read.c (reading), for generators/ and the unit tests; and, at
 * its end, what the files that build a farm share (ff_fb_*).
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
 * no longer on disk (only its size mattered, for placement).  In a packed
 * farm (ff_farm_new_packed) buf may hold the text compressed: read it
 * with ff_farm_text_unpack. */
struct ff_text {
  char *buf;         /* size bytes, the last one NUL; or zsize packed ones */
  uint32_t size;     /* the text's bytes */
  uint32_t zsize;    /* 0: buf is the text; else LZ4 against farm->tdict's */
  uint32_t zdict;    /* first zdict bytes */
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
  FF_SUB_IMETA,    /* LV_rimage_N_imeta, an image's integrity metadata */
  FF_SUB_IORIG,    /* LV_rimage_N_iorig, the image's own extents */
};

const char *ff_sub_role_name(enum ff_sub_role r);

/* What lvcreate -p, -k, -r and -My --minor (and later lvchanges) set. */
struct ff_lvflags {
  uint8_t readonly;    /* -p r: READ without WRITE */
  uint8_t act_skip;    /* --setactivationskip y: ACTIVATION_SKIP */
  uint8_t fixed_minor; /* --persistent y: FIXED_MINOR, major, minor */
  int32_t read_ahead;  /* sectors; 0: auto (no line), -1: none */
  uint32_t major, minor;
  uint8_t removed; /* lvremove (a change): gone from the texts from then */
};
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
  const char *alloc;   /* allocation_policy in the text, NULL: inherit */
  struct ff_lvflags f; /* lvcreate's -p, -k, -r, -My (and lvchange's) */
  uint32_t nsegs;
  struct ff_seg *segs;
  uint32_t segs_built; /* lvextend: the segments segs holds (nsegs is fewer
                        * while the texts before it are written) */
  /* mirror and raid top LVs */
  uint8_t kind;         /* enum ff_lv_kind */
  uint8_t role;         /* enum ff_sub_role (sub-LVs) */
  uint8_t nosync;       /* NOTSYNCED */
  uint8_t writes;       /* metadata writes of its lvcreate: 1 or 2 (more
                         * for --raidintegrity) */
  uint8_t integrity;    /* raid --raidintegrity: its mode, 'J' or 'B'; the
                         * rimages are integrity layers over the subs
                         * [2 * images + i] (_imeta) and [3 * images + i]
                         * (_iorig); else 0 */
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
  int64_t *wtime_x;   /* [writes] when more than 3 (--raidintegrity), or
                       * NULL */
  char *wdesc[3];     /* and its description (freed once the VG's texts
                       * are built) */
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
  uint32_t thin_origin;    /* thin snapshot: its origin's index in vg->lvs
                            * + 1; 0: a thin LV of its own */
  uint32_t ext_origin;     /* thin LV of an external origin (or a thin
                            * snapshot of one): the origin's index in
                            * vg->lvs + 1, or 0 */
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
  uint64_t cvol_meta;   /* cache LV over a cachevol: its metadata part
                         * (sectors, from the cachevol's start; the data
                         * part is the rest), or 0 */
  const char *policy_settings; /* cache pool: the text's policy_settings
                                * lines (farm-owned), or NULL */
  /* writecache LV: --cachesettings as the text's lines after
   * writecache_block_size and as dm's optional arguments (libdm's order;
   * farm-owned, or NULL), and the block size */
  const char *wc_text, *wc_args;
  uint32_t wc_block;
  uint32_t attach_seq; /* pool, cache LV: the seqno of the write that
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
  unsigned nmdas;        /* its metadata areas, 0..2 */
  unsigned ignored;      /* bit m: mda m is ignored (vg_mda_copies) */
  uint8_t unalloc;       /* pvchange -x n: no ALLOCATABLE */
  char *hint;            /* device = "..." in the text (freed once the
                          * VG's texts are built) */
  const char *device_id; /* the spec's, or NULL */
};

struct ff_vg {
  char *name;
  char uuid[FF_UUID_LEN];
  uint64_t extent_size; /* bytes */
  struct ff_pvfmt fmt;  /* the layout of its PVs with the most mdas */
  unsigned mda_copies;  /* metadata_copies (--vgmetadatacopies) */
  unsigned nignored;    /* its mdas marked ignored (they keep write 1) */
  enum ff_damage damage;
  const char *device_id_type; /* with each PV's device_id, or NULL */
  const char *system_id;      /* vgcreate --systemid, or NULL:
                               * WRITE_LOCKED with one */
  uint32_t max_lv, max_pv;
  uint8_t alloc;        /* enum ff_alloc_policy of vgcreate --alloc; what LVs
                         * of policy inherit are placed by */
  uint8_t unresizeable; /* vgchange -x n: no RESIZEABLE */
  uint32_t npvs;
  struct ff_pv *pvs;
  uint32_t nlvs;
  struct ff_lv *lvs;
  uint32_t nblobs;
  struct ff_blob *blobs;
  uint32_t seqno;        /* current seqno == number of writes */
  uint32_t first_kept;   /* oldest write still on disk (0-based) */
  struct ff_text *texts; /* [seqno]; texts[w] is seqno w + 1 */
  /* a VG built again (ff_fb_vg_rebuild): the strings its build kept
   * (ff_fb_keep), its own, freed with it; else NULL */
  char **kept;
  uint32_t nkept;
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
  /* ff_farm_new_packed: the dictionary the packed texts refer to (a few
   * of the farm's own texts), or NULL */
  char *tdict;
  uint32_t tdict_size;
  /* ff_farm_new_lazy: the VGs are built again when read (vgs is NULL;
   * ff-farm-lazy.c), else NULL */
  struct ff_lazy *lazy;
};

/* The VG of index v, for reading: &farm->vgs[v], or in a lazy farm the
 * VG built again from the spec (a cache of the VGs read last).  Give it
 * back with ff_farm_vg_put.  NULL with ff_errmsg() when a lazy farm
 * runs out of memory. */
const struct ff_vg *ff_farm_vg_get(const struct ff_farm *farm, uint32_t v);
void ff_farm_vg_put(const struct ff_farm *farm, const struct ff_vg *vg);

/* ff-farm-lazy.c, for ff-farm.c: make farm lazy, taking spec; recs[v]
 * says where VG v was built from (its group, its first device) and gfi
 * each group's first PV layout.  Takes recs and gfi (freed with the
 * farm, also on failure).  0, or -1 when out of memory. */
struct ff_lazy_rec {
  uint32_t gi, d0;
};
int ff_lazy_attach(struct ff_farm *farm, struct ff_spec *spec,
                   struct ff_lazy_rec *recs, uint32_t *gfi);
void ff_lazy_free(struct ff_lazy *lz);
/* VGs built again so far (test-farm). */
uint64_t ff_lazy_builds(const struct ff_farm *farm);

/* ff-farm.c, for ff-farm-lazy.c: build VG v of farm again into out
 * (zeroed by the caller), as it was first built from spec.  Free it with
 * ff_fb_vg_clear.  0, or -1. */
int ff_fb_vg_rebuild(struct ff_farm *farm, const struct ff_spec *spec,
                     const struct ff_lazy_rec *rec, uint32_t gfi, uint32_t v,
                     struct ff_vg *out);
/* Free what vg holds, the name too when keep_name is 0; vg is left
 * zeroed but for the name. */
void ff_fb_vg_clear(struct ff_vg *vg, int keep_name);

/* Packing the texts VG by VG as they are built (ff-farm-pack.c).  new
 * gives farm its dictionary; ff_packer_vg adds to it (the first VG of a
 * shape) and packs vg's kept texts.  NULL / -1 on out of memory. */
struct ff_packer;
struct ff_packer *ff_packer_new(struct ff_farm *farm);
int ff_packer_vg(struct ff_packer *pk, struct ff_farm *farm, struct ff_vg *vg);
void ff_packer_free(struct ff_packer *pk);

/* Put the size bytes of text t into dst (ff-farm-pack.c): a copy, or
 * the text unpacked.  0, or -1 (a packed text that does not unpack: a
 * bug). */
int ff_farm_text_unpack(const struct ff_farm *farm, const struct ff_text *t,
                        char *dst);

/* One ff_thinmeta image: for a tmeta of tmeta_bytes, data_blocks chunks
 * of chunk sectors, nthin thin LVs made with lvcreate -an. */
struct ff_tmcache {
  uint64_t tmeta_bytes, data_blocks;
  uint32_t chunk, nthin, ndel;
  uint32_t *origins; /* [nthin + ndel]: device t + 1 a snapshot of
                      * origins[t] (a device id), or 0; then the devices
                      * deleted, in order */
  struct ff_thinmeta *m;
};

/* The device whose bytes dev carries (itself, or the duplicated one). */
static inline uint32_t
ff_farm_target(const struct ff_farm *farm, uint32_t dev)
{
  return farm->devs[dev].role == FF_ROLE_DUPLICATE ? farm->devs[dev].alias
                                                   : dev;
}

/* ---- building a farm ----------------------------------------------------
 *
 * ff-farm.c builds the farm: devices, VGs and their PVs, the LVs one
 * lvcreate after another, every metadata write.  What an LV's kind needs
 * is in the files of lvm2's own split (lib/metadata/):
 *
 *   ff-farm-alloc.c   lv_manip.c (the allocator, the mirror log's place,
 *                     generate_lv_name) and pv_map.c (free areas)
 *   ff-farm-mirror.c  mirror.c and raid_manip.c: mirror and raid LVs
 *   ff-farm-pool.c    pool_manip.c, thin_manip.c, cache_manip.c: thin and
 *                     cache pools, thin LVs, caching an LV, the tmeta
 *                     images
 *   ff-farm-snap.c    snapshot_manip.c: old-style snapshots
 *   ff-farm-change.c  tools/vgchange.c, pvchange.c, lvchange.c,
 *                     lvrename.c, lvresize.c: the changes after the LVs
 *
 * Every one must place extents, name sub-LVs and order them exactly as
 * lvm 2.03.16 does: `fusefarm gen` output is compared byte for byte with
 * lvm's (tests/integration/test-byte-identical.sh).  Functions that fail
 * return -1 (or NULL) after ff_error(). */

/* A farm being built from its spec. */
struct bctx {
  const struct ff_spec *spec;
  struct ff_farm *farm;
  struct ff_packer *pk; /* ff_farm_new_packed, else NULL */
  uint32_t d;           /* next device index */
  uint32_t v;           /* next VG index */
  /* building a VG again (ff_fb_vg_rebuild): the VG goes here and the
   * devices it makes into scratch (the farm's own are there already);
   * else NULL */
  struct ff_vg *out;
  struct ff_device scratch;
  /* ff_farm_new_lazy: each VG's origin, the crc of its last text and each
   * group's first PV layout, kept as its VGs are built and dropped; else
   * NULL */
  struct ff_lazy_rec *lrecs;
  uint32_t *lcrc;
  uint32_t *lgfi;
  /* ff_farm_new_lazy: the first PV whose mda0 header checksum is the md
   * magic (check_md_collision), found while its VG was still built;
   * FF_NONE */
  uint32_t md_first;
};

/* A free area of a PV (pv_map.c's struct pv_area). */
struct apva {
  struct apva *prev, *next; /* in the PV's list (the head is a dummy) */
  uint32_t pv;
  uint64_t start, count, unreserved;
};

/* Free runs of each PV of a VG, kept in PE order as LVs are placed. */
struct freelist {
  uint32_t n, cap;
  struct apva *runs; /* start, count only */
};

static inline uint64_t
ff_fb_round_up(uint64_t v, uint64_t to)
{
  return (v + to - 1) / to * to;
}

/* ff-farm.c */

/* Where pvmove0 pm (NULL: no pvmove) has area a's extents: its LE, or
 * UINT64_MAX when a is not being moved.  (pm's segments: areas[0] the
 * extents moved, areas[1] their new place.) */
static inline uint64_t
ff_fb_pvmove_le(const struct ff_lv *pm, const struct ff_area *a)
{
  for (uint32_t s = 0; pm && s < pm->nsegs; s++) {
    const struct ff_seg *sg = &pm->segs[s];

    if (a->pv == sg->areas[0].pv && a->pe >= sg->areas[0].pe &&
        a->pe < sg->areas[0].pe + sg->len)
      return sg->le + (a->pe - sg->areas[0].pe);
  }
  return UINT64_MAX;
}

/* Is pvmove0 pm's segment p a piece of linear segment seg (its extents
 * go there)? */
static inline int
ff_fb_pvmove_piece(const struct ff_lv *pm, uint32_t p,
                   const struct ff_seg *seg)
{
  const struct ff_area *a = &pm->segs[p].areas[0];

  return a->pv == seg->areas[0].pv && a->pe >= seg->areas[0].pe &&
         a->pe < seg->areas[0].pe + seg->len;
}

/* The VG's pvmove0 while a pvmove is under way, or NULL. */
static inline const struct ff_lv *
ff_fb_pvmove(const struct ff_vg *vg)
{
  const struct ff_lv *pm = vg->nlvs ? &vg->lvs[vg->nlvs - 1] : NULL;

  return pm && pm->kind == FF_LVK_PVMOVE && !pm->f.removed ? pm : NULL;
}

/* The footer time of write p of lv's lvcreate. */
static inline int64_t
ff_fb_wtime(const struct ff_lv *lv, unsigned p)
{
  return lv->wtime_x ? lv->wtime_x[p] : lv->wtime[p < 3 ? p : 2];
}

/* "file:line: path: message" for a group of the spec; -1. */
__attribute__((format(printf, 4, 5))) int ff_fb_err(const struct bctx *b,
                                                    int line, const char *path,
                                                    const char *fmt, ...);
/* Bytes of PV pv's data area that are not zero (struct ff_blob). */
int ff_fb_add_blob(struct ff_vg *vg, uint32_t pv, uint64_t off, uint64_t len,
                   uint8_t fill, const uint8_t *bytes);

/* A farm-owned copy of s (NULL stays NULL); NULL with ff_errmsg() when out
 * of memory, which the caller tells from s == NULL. */
const char *ff_fb_keep(struct ff_farm *farm, const char *s);
/* Is name one lvcreate (taken: the LVs before li) or lvrename (rename:
 * taken by any LV) accepts in vg?  0, or -1 with lvm's refusal. */
int ff_fb_check_lv_name(struct bctx *b, int line, const char *path,
                        const struct ff_vg *vg, uint32_t li, const char *name,
                        int rename);

/* ff-farm-change.c */
/* What an LV is like before and after a change (lvchange -p -k -r -My,
 * lvrename, lvextend): the texts before the change show the first.
 * Once every LV is built, each change is undone, last first; the texts
 * then apply each again at its write. */
struct lvstate {
  const char *name; /* farm-owned copy */
  struct ff_lvflags f;
  uint32_t nsegs;
  uint64_t extents, mlen; /* mlen: segs[mseg].len (lvextend may grow it) */
};

struct chrec {
  uint32_t target; /* the LV the change names (its lv), FF_NONE: none */
  uint32_t lv;     /* the LV whose state it alters, FF_NONE: none */
  uint32_t mseg;
  struct lvstate was, is;
  int pv; /* pvchange -x: the PV, or -1 */
  uint8_t pv_was, pv_is;
  int vg; /* vgchange -x: 1 */
  uint8_t vg_was, vg_is;
  uint8_t writes; /* metadata writes of the command: 1, or 2 (lvremove of
                   * a thin LV: the pool's delete message, then none) */
  /* lvremove with record_lvs_history of a thin LV with a thin snapshot:
   * that snapshot (vg->lvs index); the text lists the removed LV among
   * historical_logical_volumes while the snapshot lives.  Else FF_NONE. */
  uint32_t hist_desc;
};

/* The changes of VG group g after its LVs, in order (lvconvert --type
 * cache, vgchange/pvchange -x, lvchange -p -k -r -My, lvrename,
 * lvextend on the free runs fl): each checked as lvm checks it and
 * applied, recorded in recs[k] (g->nchanges of them); then every one
 * undone.  0, or -1 with the error set (naming path.changes.[k]). */
int ff_fb_apply_changes(struct bctx *b, const struct ff_spec_vg *g,
                        struct ff_vg *vg, const char *path,
                        struct freelist *fl, struct chrec *recs);
/* Undo (fwd 0) or redo (1) change rc in vg.  0, or -1 out of memory. */
int ff_fb_rec_apply(struct ff_vg *vg, const struct chrec *rc, int fwd);

/* ff-farm-mirror.c */
/* The region size (sectors) lvm gives pvmove's mirror of extents. */
uint64_t ff_fb_mirror_region(const struct ff_vg *vg, uint64_t extents);

/* ff-farm-alloc.c */
/* Give len extents from pe back to the free runs f (lvremove), merged
 * with the runs next to them.  0, or -1 with the error set. */
int ff_fb_free_give(struct freelist *f, uint64_t pe, uint64_t len);
/* Free extents on the allocatable PVs p with use[p] set. */
uint64_t ff_fb_free_on(const struct ff_vg *vg, const struct freelist *fl,
                       const uint8_t *use);
/* A linear allocation of lv->extents for lv (a new LV, lvm's
 * lv_create_single with pvh: the PVs p with use[p] set), by the VG's
 * policy.  0, or -1 with the error set. */
int ff_fb_allocate_on(struct bctx *b, int line, const char *lp,
                      struct ff_vg *vg, struct freelist *fl, struct ff_lv *lv,
                      const uint8_t *use);

/* The allocation policies' names, by enum ff_alloc_policy. */
extern const char *const ff_fb_policy_names[];
int ff_fb_lvm_allocate(struct bctx *b, int line, const char *lp,
                       struct ff_vg *vg, struct freelist *fl, struct ff_lv *lv,
                       uint32_t stripes, uint64_t stripe_size,
                       enum ff_alloc_policy policy, uint64_t log_len,
                       struct ff_area *log_area);
/* lvextend of linear or striped lv to new_extents, as lvm extends its
 * last segment (the same stripes; contiguous to it, then on its PVs,
 * then by policy; merged into it when contiguous), on the PVs not made
 * unallocatable; -1 with the error set as lvextend refuses. */
int ff_fb_lvm_extend(struct bctx *b, int line, const char *lp,
                     struct ff_vg *vg, struct freelist *fl, struct ff_lv *lv,
                     uint64_t new_extents, enum ff_alloc_policy policy);
__attribute__((format(printf, 9, 10))) int
ff_fb_allocate_unsplit(struct bctx *b, int line, const char *lp,
                       struct ff_vg *vg, struct freelist *fl, struct ff_lv *lv,
                       uint32_t areas, enum ff_alloc_policy policy,
                       const char *fmt, ...);
int ff_fb_place_mirror_log(struct bctx *b, int line, const char *lp,
                           struct ff_vg *vg, struct freelist *fl,
                           const struct ff_lv *top, uint64_t log_len,
                           enum ff_alloc_policy policy, uint32_t *pv,
                           uint64_t *pe);
int ff_fb_place_lv(struct bctx *b, const struct ff_spec_lv *sl, const char *lp,
                   struct ff_vg *vg, struct freelist *fl, uint32_t li,
                   uint64_t stripe_size);
char *ff_fb_generate_lv_name(const struct ff_vg *vg, uint32_t nl,
                             const struct ff_lv *top, const char *prefix);
struct ff_lv *ff_fb_new_sub(struct bctx *b, const struct ff_spec_lv *sl,
                            struct ff_lv *top, uint32_t li, uint32_t j,
                            enum ff_sub_role role, char *name);
struct ff_lv *ff_fb_find_lv(struct ff_vg *vg, uint32_t li, const char *name);

/* ff-farm-mirror.c */

int ff_fb_allocate_mirror_raid(struct bctx *b, const struct ff_spec_lv *sl,
                               const char *lp, struct ff_vg *vg,
                               struct freelist *fl, uint32_t li);

/* ff-farm-pool.c */

int ff_fb_allocate_pool(struct bctx *b, const struct ff_spec_lv *sl,
                        const char *lp, struct ff_vg *vg, struct freelist *fl,
                        uint32_t li);
int ff_fb_make_thin(struct bctx *b, const struct ff_spec_lv *sl,
                    const char *lp, struct ff_vg *vg, uint32_t li);
int ff_fb_attach_cache(struct bctx *b, int line, const char *lp,
                       struct ff_vg *vg, uint32_t li, uint32_t nl,
                       const char *pool_name, enum ff_cache_mode mode,
                       enum ff_cache_policy policy, const char *corig_uuid);
int ff_fb_thin_pool_images(struct bctx *b, struct ff_vg *vg,
                           const struct chrec *recs, unsigned nrecs);
/* lvconvert (or lvcreate) --type writecache (ws: its --cachesettings) or
 * --type cache --cachevol CVOL (ws NULL) of LV li, CVOL one of the first
 * nl LVs: LV_wcorig (LV_corig), CVOL renamed CVOL_cvol. */
int ff_fb_attach_cachevol(struct bctx *b, int line, const char *lp,
                          struct ff_vg *vg, uint32_t li, uint32_t nl,
                          const char *cvol_name,
                          const struct ff_wcsettings *ws,
                          enum ff_cache_mode mode, enum ff_cache_policy policy,
                          const char *corig_uuid);

/* ff-farm-snap.c */

int ff_fb_allocate_snapshot(struct bctx *b, const struct ff_spec_lv *sl,
                            const char *lp, struct ff_vg *vg,
                            struct freelist *fl, uint32_t li);

#endif
