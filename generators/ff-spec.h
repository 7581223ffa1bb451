/* fusefarm: the farm spec (docs/spec-format.md), parsed with libconfig.
 *
 * ff_spec_load_* turn a text into a struct ff_spec: plain data, checked
 * for types, ranges and unknown keys, with defaults applied.  Checks that
 * need the whole farm (allocation, metadata size, unique names) happen in
 * ff_farm_new(), which reports them with the file and line kept here.
 *
 * Ownership: a struct ff_spec owns every string and array it points to;
 * ff_spec_free() releases all of it.
 */
#ifndef FF_SPEC_H
#define FF_SPEC_H

#include <stdint.h>

#include "ff-signature.h"

enum ff_damage {
  FF_DMG_NONE,
  FF_DMG_LABEL_CRC,
  FF_DMG_MDA_CHECKSUM,
  FF_DMG_BAD_TEXT,
  FF_DMG_DUPLICATE,
  FF_DMG_MISSING_PV,
  FF_DMG_STALE,
};

/* "none", "bad-label-crc", ... */
const char *ff_damage_name(enum ff_damage d);

/* On-disk PV layout shared by the PVs of a group; bytes. */
struct ff_pvfmt {
  uint64_t pe_start;
  uint64_t mda_size;  /* mda0's size (it starts at 4096) */
  uint64_t mda1_size; /* the size pvcreate asked of mda1 */
  uint64_t align;     /* the data alignment mda1's start is aligned to */
  uint64_t ba_start;  /* the bootloader area; 0, 0: none */
  uint64_t ba_size;
  unsigned mda_copies;   /* 0, 1 or 2 */
  unsigned label_sector; /* 0..3 */
};

/* PV layout choices, all in bytes: pvcreate's options, from which
 * pe_start, the metadata areas and the bootloader area follow as lvm
 * computes them (ff_pvfmt_layout()); or, the older form, pe_start and
 * mda_size given as they are (legacy = 1). */
struct ff_spec_pvfmt {
  uint64_t metadatasize;        /* --metadatasize (default 1044480) */
  uint64_t dataalignment;       /* --dataalignment (default 1 MiB) */
  uint64_t dataalignmentoffset; /* --dataalignmentoffset */
  uint64_t bootloaderareasize;  /* --bootloaderareasize */
  int legacy;                   /* pe_start and mda_size were given */
  uint64_t pe_start;            /* legacy */
  uint64_t mda_size;            /* legacy: mda0's size */
  unsigned mda_copies;          /* 0, 1 or 2; a VG group with a list: the
                                 * largest of it */
  unsigned label_sector;        /* 0..3 */
  struct ff_pvfmt lay; /* the layout pvcreate makes of these options on
                        * the group's (first) device: parse_pvfmt() */
};

/* lvcreate --alloc: the policies in lvm's order (each tries the ones
 * before it first).  FF_ALLOC_INHERIT (no `alloc` key) allocates as
 * normal and writes no allocation_policy line. */
enum ff_alloc_policy {
  FF_ALLOC_INHERIT = 0,
  FF_ALLOC_CONTIGUOUS,
  FF_ALLOC_CLING,
  FF_ALLOC_NORMAL,
  FF_ALLOC_ANYWHERE,
};

/* One stripe of a placement segment: extents first..last of PV pv (the
 * PV's index in its VG). */
struct ff_spec_range {
  unsigned pv;
  uint64_t first, last;
};

/* What kind of segment the top LV of a group has: linear/striped
 * (FF_LVK_STRIPED), a mirror (sub-LVs _mimage_N and, with a disk log,
 * _mlog) or raid (_rimage_N and _rmeta_N). */
enum ff_lv_kind {
  FF_LVK_STRIPED = 0,
  FF_LVK_MIRROR,
  FF_LVK_RAID,
  FF_LVK_THIN_POOL,  /* _tmeta, _tdata and maybe the VG's lvol0_pmspare */
  FF_LVK_THIN,       /* a thin LV of an earlier pool of the VG */
  FF_LVK_SNAPSHOT,   /* the COW LV of an old-style snapshot (and snapshotN) */
  FF_LVK_CACHE_POOL, /* _cmeta, _cdata and maybe the VG's lvol0_pmspare */
  FF_LVK_CACHE,      /* an LV cached by an earlier cache pool (_corig) */
  /* made by changes only (lvconvert --type writecache --cachevol): */
  FF_LVK_WRITECACHE, /* an LV with a writecache (_wcorig) */
  FF_LVK_CACHEVOL,   /* the linear LV it caches with (renamed LV_cvol) */
  FF_LVK_PVMOVE,     /* pvmove0, made by a pvmove change */
};

/* lvcreate/lvconvert --cachemode: FF_CACHE_MODE_NONE writes no line (a
 * pool that caches nothing yet; an attached pool then has writethrough). */
enum ff_cache_mode {
  FF_CACHE_MODE_NONE = 0,
  FF_CACHE_MODE_WRITETHROUGH,
  FF_CACHE_MODE_WRITEBACK,
  FF_CACHE_MODE_PASSTHROUGH,
};

/* --cachepolicy: FF_CACHE_POLICY_NONE as above (attached: smq). */
enum ff_cache_policy {
  FF_CACHE_POLICY_NONE = 0,
  FF_CACHE_POLICY_SMQ,
  FF_CACHE_POLICY_MQ,
};

/* Thin pool discards (lvcreate --discards). */
enum ff_discards {
  FF_DISCARDS_PASSDOWN = 0,
  FF_DISCARDS_NOPASSDOWN,
  FF_DISCARDS_IGNORE
};

/* lvcreate or lvconvert --type writecache --cachesettings (tools/toollib.c
 * _get_one_writecache_setting): which settings are given, in lvm's
 * order, and the block size (block_size=512|4096; 0: lvm's 4096). */
enum {
  FF_WC_HIGH_WATERMARK,
  FF_WC_LOW_WATERMARK,
  FF_WC_WRITEBACK_JOBS,
  FF_WC_AUTOCOMMIT_BLOCKS,
  FF_WC_AUTOCOMMIT_TIME,
  FF_WC_FUA,
  FF_WC_NOFUA,
  FF_WC_CLEANER,
  FF_WC_MAX_AGE,
  FF_WC_NSETTINGS
};
struct ff_wcsettings {
  uint8_t set[FF_WC_NSETTINGS];
  uint64_t v[FF_WC_NSETTINGS];
  uint32_t block_size;
};
extern const char *const ff_wc_setting_names[FF_WC_NSETTINGS];

/* The most metadata writes of one lvcreate: a raid LV of 64 images with
 * --raidintegrity (2, one per _imeta, 2). */
#define FF_SPEC_MAX_WRITES 68

struct ff_spec_lv {
  int line;
  unsigned count;
  char *name; /* format */
  int striped;
  enum ff_lv_kind kind;
  /* mirror and raid (docs/spec-format.md "Mirror and raid LVs") */
  const char *segtype;  /* the text's type: "mirror", "raid1", "raid5", ... */
  const char *ktype;    /* the kernel's: "raid5_ls" for "raid5", ... */
  unsigned images;      /* mirror/raid1: mirrors + 1; raid4/5/6/10: all */
  unsigned parity;      /* raid4/5: 1, raid6: 2 */
  unsigned data_copies; /* raid10: 2, else 0 (no line) */
  int no_rmeta;         /* raid0: rimages alone, one write */
  uint64_t region_size; /* bytes as given (default 2 MiB) */
  int core_log;         /* mirror_log = "core" */
  /* raid1/4/5/6/10 --raidintegrity y: an integrity layer on each image
   * (its _imeta and _iorig LVs); mode 'J' (journal) or 'B' (bitmap) */
  int integrity;
  char integrity_mode;
  int nosync;
  char **uuids; /* [nuuids] raw, sub-LVs in creation order, or NULL */
  unsigned nuuids;
  int has_write_times;
  /* [ff_spec_lv_writes()]: up to 3, or with --raidintegrity one per
   * write (FF_SPEC_MAX_WRITES) */
  int64_t write_times[FF_SPEC_MAX_WRITES];
  char *descriptions[3]; /* NULL: derived from description */
  /* thin pools, thin LVs, snapshots (docs/spec-format.md "Thin pools,
   * thin LVs and snapshots") */
  uint64_t chunk_size;    /* bytes; pool: 0 = lvm's default; snapshot */
  uint64_t metadata_size; /* pool: bytes, 0 = lvm's default */
  enum ff_discards discards;
  int zero;       /* pool: zero_new_blocks (lvcreate -Z) */
  int pmspare;    /* pool: --poolmetadataspare y (the default) */
  int new_spare;  /* pool: its lvcreate creates the VG's lvol0_pmspare (no
                   * earlier group of the VG did): three writes */
  char *pool;     /* thin, cache: the pool's LV name */
  char *cachevol; /* cache, writecache (lvcreate --cachevol): the LV that
                   * becomes the cache, or NULL */
  struct ff_wcsettings wc;           /* writecache: --cachesettings */
  enum ff_cache_mode cache_mode;     /* cache pool, cache */
  enum ff_cache_policy cache_policy; /* cache pool, cache */
  char **cachesettings; /* cache pool: --cachesettings NAME=VALUE, in
                         * order; NULL-terminated, or NULL */
  char *origin;         /* snapshot: the origin's LV name */
  int cow_header;       /* snapshot: the kernel's exception store header */
  unsigned stripes;     /* 1 for linear, mirror, raid1; raid: data stripes */
  uint64_t stripe_size; /* bytes, 0 for linear, mirror, raid1 */
  uint64_t size;        /* bytes; 0 when fill is used */
  double fill;          /* 0 when size is used */
  enum ff_alloc_policy alloc;
  unsigned nplace;             /* placement segments, 0: the policy */
  struct ff_spec_range *place; /* [nplace * stripes], segment by segment */
  int *place_lines;            /* [nplace] */
  int has_time;
  int64_t time;
  char *description; /* NULL: default */
  char *uuid;        /* 32 raw chars + NUL, or NULL */
  char **tags;       /* lvcreate --addtag, in order; NULL-terminated, or
                      * NULL */
  /* linear and striped LVs: lvcreate -p r, --setactivationskip y,
   * --readahead, --persistent y --minor (major: the host's dm major) */
  int readonly;        /* permission = "r": READ without WRITE */
  int activation_skip; /* ACTIVATION_SKIP */
  int32_t read_ahead;  /* sectors; 0: auto (no line), -1: none */
  int fixed_minor;     /* FIXED_MINOR with major and minor */
  uint32_t major, minor;
};

/* A write after the LVs are created, with its own time and description:
 * vgchange (tags, -x), lvchange (tags, -p, -k, -r, -My --minor), pvchange
 * (tags, -x), lvconvert --type cache of an LV with a cache pool, lvrename,
 * lvextend, lvremove. */
enum ff_change_cmd {
  FF_CHG_VG,
  FF_CHG_LV,
  FF_CHG_PV,
  FF_CHG_CACHE,
  FF_CHG_RENAME,
  FF_CHG_EXTEND,
  FF_CHG_WRITECACHE,
  FF_CHG_REMOVE,
  FF_CHG_PVMOVE
};

struct ff_spec_change {
  int line;
  enum ff_change_cmd cmd;
  char *lv;       /* lvchange, lvconvert: the LV's name (as rendered) */
  char *pool;     /* lvconvert --type cache: the cache pool's name */
  char *cachevol; /* lvconvert --type writecache: the cachevol's */
  struct ff_wcsettings wc; /* and its --cachesettings */
  char **cachesettings;    /* as given (for the description), or NULL */
  enum ff_cache_mode cache_mode;
  enum ff_cache_policy cache_policy;
  char *uuid;    /* lvconvert: the new LV_corig's, raw, or NULL */
  unsigned pv;   /* pvchange: the PV's index in the VG */
  char **addtag; /* NULL-terminated, or NULL */
  char **deltag;
  /* vgchange -x, pvchange -x: -1 not given, else the new value */
  int resizeable, allocatable;
  /* lvchange -p, -k, -r, -My --minor: each set_* when given */
  int set_perm, readonly, set_skip, act_skip, set_ra, set_minor;
  int32_t read_ahead; /* sectors; 0: auto, -1: none */
  uint32_t major, minor;
  char *new_name; /* lvrename: the LV's new name */
  uint64_t size;  /* lvextend: the LV's new size in bytes */
  int history;    /* lvremove: with metadata/record_lvs_history = 1 */
  unsigned *to;   /* pvmove: the destination PVs' indexes, or NULL (any) */
  unsigned nto;
  int has_write_times;    /* lvremove of a thin LV: its two writes' */
  int64_t write_times[2]; /* times (time: the first's) */
  int has_time;
  int64_t time;
  char *description; /* NULL: "Write from vgchange --addtag t VG." */
};

struct ff_spec_vg {
  int line;
  unsigned count;
  char *name; /* format */
  unsigned pvs;
  uint64_t device_size;
  uint64_t extent_size;
  struct ff_spec_pvfmt fmt;
  uint32_t seqno;  /* 0: 1 + LVs */
  int64_t history; /* -1: all */
  int has_time;
  int64_t time;
  char *description;
  enum ff_damage damage;
  unsigned nlvs; /* LV groups */
  struct ff_spec_lv *lvs;
  char *uuid;      /* raw, or NULL */
  char **devices;  /* [pvs] or NULL */
  char **pv_uuids; /* [pvs] raw, or NULL */
  char **hints;    /* [pvs] or NULL */
  char **tags;     /* vgcreate --addtag, in order; NULL-terminated or NULL */
  unsigned nchanges;
  struct ff_spec_change *changes; /* written after the LVs, in order */
  const char *device_id_type;     /* written with each PV, or NULL */
  char **device_ids;              /* [pvs] with device_id_type */
  uint64_t *device_sizes;         /* [pvs] or NULL: device_size for all */
  unsigned *pv_mdas;       /* [pvs] mda_copies given as a list (PV p of each VG
                            * of the group), or NULL: fmt.mda_copies for all */
  unsigned vg_mdas;        /* vgcreate --vgmetadatacopies: metadata_copies in
                            * the text; 0 unmanaged (lvm's default) */
  unsigned *pv_ignored;    /* [pvs] bit m: PV p's mda m is ignored (the
                            * ignored_mdas lvm chose), or NULL: none */
  char *system_id;         /* vgcreate --systemid (default: the host's), or
                            * NULL: none; WRITE_LOCKED with one */
  uint32_t max_lv, max_pv; /* --maxlogicalvolumes, --maxphysicalvolumes */
  enum ff_alloc_policy alloc; /* vgcreate --alloc; INHERIT: normal */
};

enum ff_other_kind { FF_OTHER_ORPHAN, FF_OTHER_BLANK, FF_OTHER_SIGNATURE };

struct ff_spec_other {
  int line;
  enum ff_other_kind kind;
  unsigned count;
  uint64_t device_size;
  struct ff_spec_pvfmt fmt; /* orphans */
  enum ff_damage damage;    /* orphans */
  enum ff_sig_type sig;     /* signatures */
  char **devices;           /* [count] or NULL */
  char **pv_uuids;          /* [count] raw or NULL (orphans) */
};

struct ff_spec {
  char *file; /* for messages: path or "<built-in>" */
  uint64_t seed;
  char *device_name;
  uint64_t device_size;
  char *device_hint;
  char *creation_host;
  char *uname;
  int64_t creation_time;
  char *lvm_version;
  char *system_id; /* the host's (lvm.conf local/system_id): each write's
                    * creation_host_system_id and each VG's default, or
                    * NULL */
  unsigned nvgs;
  struct ff_spec_vg *vgs;
  unsigned nothers; /* orphans, then blanks, then signatures */
  struct ff_spec_other *others;
};

/* Parse a spec file ("builtin:NAME" names a built-in one, ff-builtin.h).
 * NULL on error with "file:line: key: ..." set. */
struct ff_spec *ff_spec_load_file(const char *path);

/* Parse a spec held in memory; name is used in messages. */
struct ff_spec *ff_spec_load_string(const char *text, const char *name);

/* The built-in default farm (docs/spec-format.md shows it). */
extern const char ff_spec_builtin_default[];

void ff_spec_free(struct ff_spec *spec);

/* The metadata writes one lvcreate of lv makes: 2 for a mirror with a
 * disk log, raid (raid0: 1), a thin LV and a snapshot (lvm2-ondisk-format:
 * "Write from", then "Write[2] from"), 2 for a cache LV (lvcreate --type
 * cache), 2 for a thin or cache pool or 3 when it creates the VG's pool
 * metadata spare, else 1. */
static inline unsigned
ff_spec_lv_writes(const struct ff_spec_lv *lv)
{
  switch (lv->kind) {
  case FF_LVK_RAID:
    /* --raidintegrity: then one write per _imeta LV, the integrity
     * layers (recalculate = 1), and that flag cleared */
    return lv->no_rmeta ? 1 : 2 + (lv->integrity ? lv->images + 2 : 0);
  case FF_LVK_THIN:
  case FF_LVK_SNAPSHOT:
    return 2;
  case FF_LVK_MIRROR:
    return lv->core_log ? 1 : 2;
  case FF_LVK_CACHE:
  case FF_LVK_WRITECACHE:
    return 2;
  case FF_LVK_THIN_POOL:
  case FF_LVK_CACHE_POOL:
    return lv->new_spare ? 3 : 2;
  default:
    return 1;
  }
}

/* How many devices the spec makes. */
uint64_t ff_spec_devices(const struct ff_spec *spec);

/* Scale the groups' counts so the farm makes exactly ndevices devices
 * and keeps its shape: groups with explicit device names or UUIDs (a
 * single VG with named devices) keep their count, and the others share
 * the rest in proportion to their devices by largest-remainder
 * apportionment (docs/spec-format.md): each gets the whole part of its
 * share, at least 1, and the devices left go one member at a time to the
 * groups with the largest remainders whose members still fit (a VG of
 * several PVs is several devices).  Every group is then within one
 * member of its exact share.  When one member of every group is more
 * than ndevices, or only multi-PV members are left to place, the total
 * is the closest the groups allow.  -1 with ff_error when the spec makes
 * no devices or ndevices is 0. */
int ff_spec_scale(struct ff_spec *spec, uint64_t ndevices);

#endif
