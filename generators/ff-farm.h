/* fusefarm: the farm, built from a spec, serving device bytes on demand.
 *
 * Invariants
 * - ff_farm_new() builds every piece of metadata up front: device table,
 *   VGs with their PV and LV tables, and each VG's metadata text copies
 *   (one buffer per kept seqno, shared by all the VG's PVs).  After that
 *   the farm's own tables are read-only; reading base bytes takes no lock
 *   (the pattern of nbdkit's sparse-random plugin).
 * - Per device the farm holds one struct ff_device (a few dozen bytes plus
 *   its name); per VG a few small tables; nothing proportional to device
 *   sizes.  A 1 TiB device costs what a 1 MiB one does.
 * - Writes go to the overlay (ff-overlay.h), which has its own locking;
 *   ff_farm_read() returns base bytes with the overlay's blocks on top.
 *   A duplicate device (damage duplicate-pv) is another path to the device
 *   it copies: reads and writes of either reach the same bytes.
 * - The same spec gives the same bytes on every host and every run.
 *
 * Thread model: every function taking a const farm may be called from any
 * number of threads at once; ff_farm_write/zero/overlay calls may run
 * concurrently with reads (the overlay serializes what it must).
 * ff_farm_free() must not race with anything.
 *
 * Ownership: the farm copies what it needs from the spec; the spec may be
 * freed after ff_farm_new().  Pointers returned by accessors live as long
 * as the farm.
 */
#ifndef FF_FARM_H
#define FF_FARM_H

#include <stddef.h>
#include <stdint.h>

#include "ff-overlay.h"
#include "ff-signature.h"
#include "ff-spec.h"
#include "ff-util.h"

enum ff_role {
  FF_ROLE_PV,        /* a PV in a VG */
  FF_ROLE_ORPHAN,    /* a PV in no VG */
  FF_ROLE_BLANK,     /* all zeros */
  FF_ROLE_SIGNATURE, /* another format's signature at offset 0 */
  FF_ROLE_DUPLICATE, /* a second path to another device */
};

const char *ff_role_name(enum ff_role r);

#define FF_NONE UINT32_MAX

/* On-disk PV layout shared by the PVs of a group; bytes. */
struct ff_pvfmt {
  uint64_t pe_start;
  uint64_t mda_size;     /* requested size of each metadata area */
  unsigned mda_copies;   /* 1 or 2 */
  unsigned label_sector; /* 0..3 */
};

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
  uint32_t nsegs;
  struct ff_seg *segs;
};

struct ff_pv {
  char uuid[FF_UUID_LEN];
  uint32_t dev;      /* device index, FF_NONE when missing */
  uint64_t dev_size; /* bytes */
  uint64_t pe_count;
  char *hint; /* device = "..." in the text */
};

struct ff_vg {
  char *name;
  char uuid[FF_UUID_LEN];
  uint64_t extent_size; /* bytes */
  struct ff_pvfmt fmt;
  enum ff_damage damage;
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
};

/* Build the farm.  NULL on error, with a message naming the spec file,
 * line and key (for example a VG whose metadata would not fit its
 * metadata area, with the sizes). */
struct ff_farm *ff_farm_new(const struct ff_spec *spec);

void ff_farm_free(struct ff_farm *farm);

/* Device index by name, or -1. */
int64_t ff_farm_lookup(const struct ff_farm *farm, const char *name);

/* Read len bytes at off of device dev: base bytes with the overlay on top.
 * A range past the end is an error; callers clip to the device size. */
int ff_farm_read(const struct ff_farm *farm, uint32_t dev, void *buf,
                 uint64_t off, size_t len);

/* Only the generated bytes, without the overlay. */
int ff_farm_read_base(const struct ff_farm *farm, uint32_t dev, void *buf,
                      uint64_t off, size_t len);

/* Write into the overlay (all-zero blocks over zero base are dropped). */
int ff_farm_write(struct ff_farm *farm, uint32_t dev, const void *buf,
                  uint64_t off, size_t len);

/* Write zeros (NBD zero/trim, FUSE punch-hole). */
int ff_farm_zero(struct ff_farm *farm, uint32_t dev, uint64_t off,
                 uint64_t len);

/* The ranges of device dev that may hold non-zero bytes (base layout and
 * overlay blocks), sorted, merged, aligned out to 4 KiB.  Writes up to max
 * ranges into out and returns how many there are (may be more than max),
 * or -1 on error. */
int64_t ff_farm_extents(const struct ff_farm *farm, uint32_t dev,
                        struct ff_range *out, size_t max);

/* What device dev is, in words ("PV 2 of 3 of VG vg0001", "orphan PV",
 * "blank", "gpt signature", "duplicate of pv0003", with damage). */
void ff_farm_describe(const struct ff_farm *farm, uint32_t dev, char *buf,
                      size_t len);

/* ---- accessors (front ends use these, never the struct's fields) ----- */

/* Devices, VGs and LVs (over all VGs) in the farm. */
uint32_t ff_farm_ndevs(const struct ff_farm *farm);
uint32_t ff_farm_nvgs(const struct ff_farm *farm);
uint64_t ff_farm_nlvs(const struct ff_farm *farm);

/* Device dev's name (NUL-terminated), size in bytes, role.  dev must be
 * < ff_farm_ndevs(farm). */
const char *ff_farm_dev_name(const struct ff_farm *farm, uint32_t dev);
uint64_t ff_farm_dev_size(const struct ff_farm *farm, uint32_t dev);
enum ff_role ff_farm_dev_role(const struct ff_farm *farm, uint32_t dev);

/* Device dev's PV UUID: FF_UUID_LEN characters, NOT NUL-terminated;
 * meaningful for FF_ROLE_PV, FF_ROLE_ORPHAN and FF_ROLE_DUPLICATE. */
const char *ff_farm_dev_uuid(const struct ff_farm *farm, uint32_t dev);

/* The farm's fingerprint (what an overlay file is checked against). */
uint64_t ff_farm_fingerprint(const struct ff_farm *farm);

/* The farm's write overlay (owned by the farm). */
struct ff_overlay *ff_farm_overlay(const struct ff_farm *farm);

/* Save the overlay to path (ff_overlay_save with the farm's
 * fingerprint); load one saved for this farm (ff_overlay_load). */
int ff_farm_save_overlay(const struct ff_farm *farm, const char *path);
int ff_farm_load_overlay(struct ff_farm *farm, const char *path);

/* Every range of device dev that may hold non-zero bytes
 * (ff_farm_extents: layout and overlay blocks), in a malloc'd array the
 * caller frees.  Returns the count (0: *out is NULL, the device reads as
 * zeros) or -1.  A write landing meanwhile may add ranges: the call then
 * fetches again, so the array is one consistent answer. */
int64_t ff_farm_extents_all(const struct ff_farm *farm, uint32_t dev,
                            struct ff_range **out);

/* ff_farm_zero(farm, dev, off, len), touching only the parts of the range
 * that may hold non-zero bytes: elsewhere there is no overlay block and
 * the base is zero, so zeroing changes nothing.  The result is the same
 * as ff_farm_zero's, but the cost grows with the device's layout and
 * writes instead of with len: an NBD trim or a loop discard of a whole
 * 1 TiB device costs what its few metadata blocks cost.  Each piece is
 * atomic on its own (ff-overlay.h), not the whole request.  An
 * out-of-range request fails as ff_farm_zero does. */
int ff_farm_zero_sparse(struct ff_farm *farm, uint32_t dev, uint64_t off,
                        uint64_t len);

/* The device whose bytes dev carries (itself, or the duplicated one). */
static inline uint32_t
ff_farm_target(const struct ff_farm *farm, uint32_t dev)
{
  return farm->devs[dev].role == FF_ROLE_DUPLICATE ? farm->devs[dev].alias
                                                   : dev;
}

/* The largest metadata text lvm accepts in an mda of mda_size bytes:
 * ((mda_size - 512) / 2) - 512 (lvm2-ondisk-format.md §4.3). */
uint64_t ff_mda_max_text(uint64_t mda_size);

/* Where mda1 sits on a device of dev_size bytes with this layout, or
 * start = size = 0 when there is one mda. */
void ff_mda1_place(const struct ff_pvfmt *fmt, uint64_t dev_size,
                   uint64_t *start, uint64_t *size);

#endif
