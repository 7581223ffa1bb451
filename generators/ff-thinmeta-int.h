/* fusefarm: the thin-pool metadata model's internals, shared by its
 * layers and by nothing else (ff-thinmeta.h is the interface).
 *
 * The model follows the kernel's split of the metadata code (Linux 6.1):
 *
 *   ff-thinmeta-bm.c     block store, checksum and transaction manager:
 *                        drivers/md/persistent-data/dm-block-manager.c,
 *                        dm-transaction-manager.c
 *   ff-thinmeta-btree.c  btree lookup and insert:
 *                        drivers/md/persistent-data/dm-btree.c,
 *                        dm-btree-spine.c
 *   ff-thinmeta-sm.c     metadata and data space maps:
 *                        drivers/md/persistent-data/dm-space-map-common.c,
 *                        dm-space-map-metadata.c, dm-space-map-disk.c
 *   ff-thinmeta.c        superblock, device details, mappings, the pool's
 *                        operations, the image:
 *                        drivers/md/dm-thin-metadata.c
 *
 * Every layer must place blocks exactly where the kernel does: the image
 * is compared byte for byte with what dm-thin-pool writes
 * (tests/unit/test-thinmeta.c, tests/integration/test-byte-identical.sh).
 */
#ifndef FF_THINMETA_INT_H
#define FF_THINMETA_INT_H

#include "ff-thinmeta.h"

#include <stddef.h>
#include <stdint.h>

#define BS      FF_THINMETA_BLOCK
#define EPB     16320u /* bitmap entries per block: (4096 - 16) * 4 */
#define NBITMAP 255u   /* metadata index entries */
#define IEC     64u    /* data space map index cache slots */
#define NBOP    1025u  /* queued space-map operations (one slot unused) */

/* Superblock field offsets. */
#define SB_FLAGS       4
#define SB_MAGIC       32
#define SB_VERSION     40
#define SB_TIME        44
#define SB_TRANS_ID    48
#define SB_HELD_ROOT   56
#define SB_DATA_SM     64
#define SB_META_SM     192
#define SB_MAPPING     320
#define SB_DETAILS     328
#define SB_DATA_BS     336
#define SB_META_BS     340
#define SB_META_NR     344
#define THIN_MAGIC     27022010u
#define THIN_VERSION   2u
#define META_BS_SECTOR 8u

/* Btree node header. */
#define NODE_INTERNAL 1u
#define NODE_LEAF     2u
#define NH            32

enum kind { K_SB, K_BTREE, K_BITMAP, K_INDEX };

struct blk {
  uint64_t nr;
  uint64_t gen; /* == sim.gen: new or shadowed in the running transaction */
  enum kind kind;
  uint8_t data[BS];
};

/* A space map's index entry. */
struct ie {
  uint64_t blocknr;
  uint32_t nr_free, nfb; /* nfb: no free entry before this bit */
};

/* The metadata space map's state (what the kernel keeps twice: current
 * and as of the last commit). */
struct mll {
  uint64_t nr_blocks, nr_allocated, bitmap_root, ref_count_root;
  struct ie mi[NBITMAP];
  int changed;
};

struct iec {
  int valid, dirty;
  uint64_t index;
  struct ie ie;
};

struct dll {
  uint64_t nr_blocks, nr_allocated, bitmap_root, ref_count_root;
  uint64_t committed_nr_blocks;
  int changed, resized;
  struct iec cache[IEC];
};

struct bop {
  int inc;
  uint64_t b, e;
};

/* A thin device changed in the running transaction (dm-thin keeps them
 * in a list, newest first, and writes their details at commit). */
struct td {
  uint64_t id, mapped, trans;
  uint32_t ctime, stime;
  int changed;
};

/* Value kinds of the btrees, for the reference counting of shared nodes. */
enum vt { VT_PLAIN, VT_SUBTREE };

struct sim {
  /* store: open addressing over block numbers */
  struct blk **slot;
  size_t cap, n;

  uint64_t dev_blocks; /* metadata blocks the pool uses */
  uint32_t dbs;        /* data block size, sectors */
  uint64_t gen;
  int is_open;

  struct mll ll, old;
  uint64_t begin;
  unsigned recursion;
  int bootstrap;
  struct bop q[NBOP];
  unsigned qb, qe;

  struct dll d;

  uint64_t root, details_root, held_root, trans_id;
  uint32_t time, flags;
  int in_service, dirty;
  int ooms; /* dm-thin's out-of-metadata-space mode: messages refused */
  struct td *tds;
  size_t ntd, tdcap;
};

struct ff_thinmeta {
  uint64_t size;
  size_t n;
  uint64_t *nr;
  uint8_t *data;
};

/* ---- block store and transaction manager (ff-thinmeta-bm.c) ----------- */

/* A block of zeros: what a block never written reads as. */
extern const uint8_t ff_tm_zero_block[BS];

struct blk *ff_tm_store_find(const struct sim *s, uint64_t nr);
/* The block nr, created (zeroed, gen ~0) if it was never written; NULL
 * after ff_error when out of memory. */
struct blk *ff_tm_store_get(struct sim *s, uint64_t nr);
/* Read access: the block's bytes, zeros if it was never written. */
const uint8_t *ff_tm_rd(const struct sim *s, uint64_t nr);
/* Write access to a block that exists (new or shadowed). */
uint8_t *ff_tm_wr(struct sim *s, uint64_t nr);
int ff_tm_new_block(struct sim *s, enum kind k, uint64_t *nr);
int ff_tm_shadow(struct sim *s, uint64_t orig, enum kind k, uint64_t *nr,
                 int *inc);

/* ---- btrees (ff-thinmeta-btree.c) ------------------------------------- */

int ff_tm_btree_empty(struct sim *s, uint32_t vsize, uint64_t *root);
/* The value of key (NULL if absent). */
const uint8_t *ff_tm_btree_lookup(const struct sim *s, uint64_t root,
                                  uint64_t key);
int ff_tm_btree_insert(struct sim *s, uint64_t *root, enum vt vt, uint64_t key,
                       const void *value);
/* Remove key (which must be there) from a one-level btree whose root is
 * a leaf; *root becomes the new root.  0, or -1 with the error set. */
int ff_tm_btree_remove(struct sim *s, uint64_t *root, enum vt vt,
                       uint64_t key);

/* ---- space maps (ff-thinmeta-sm.c) ------------------------------------ */

int ff_tm_ll_lookup(const struct sim *s, const struct mll *ll, uint64_t b,
                    uint32_t *rc);
int ff_tm_bop_push(struct sim *s, int inc, uint64_t b, uint64_t e);
int ff_tm_apply_bops(struct sim *s);
int ff_tm_sm_new_block(struct sim *s, uint64_t *b);
int ff_tm_sm_inc(struct sim *s, uint64_t b, uint64_t e);
int ff_tm_sm_dec(struct sim *s, uint64_t b, uint64_t e);
int ff_tm_sm_more_than_one(struct sim *s, uint64_t b, int *res);
int ff_tm_sm_commit(struct sim *s);
int ff_tm_dsm_extend(struct sim *s, uint64_t extra);
int ff_tm_dsm_commit(struct sim *s);

#endif
