/* fusefarm: thin-pool metadata as the Linux 6.1 dm-thin-pool target
 * leaves it on the pool's metadata LV (tmeta).
 *
 * lvm zeroes a new pool's tmeta and activates the pool; the kernel
 * formats the metadata, grows its data space map and commits; every
 * thin LV is then a `create_thin N` message and a `set_transaction_id`,
 * each followed by a commit.  The kernel's block placement depends on
 * that sequence of sessions (its metadata allocator restarts at block 0
 * after every open and never reuses a block freed in the running
 * transaction), so this module replays the operations in dm-thin's order
 * with a clean-room model of its persistent-data library and returns the
 * resulting image, byte for byte.  docs/thin-metadata.md describes the
 * format and the algorithm.
 *
 * Scope: empty thin devices (no data mappings), snapshots of devices that
 * no other snapshot shares yet, deletes while the pool's btrees are one
 * node each, any number of devices (btree nodes split
 * as the kernel splits them), data space maps of any size and metadata
 * devices up to the kernel's maximum (255 bitmap blocks, 4161600 blocks;
 * a larger tmeta is used only up to that size, like the kernel does).
 *
 * Invariants: an image is built once and never changes, so any number of
 * threads may read it at once.  Functions that fail return NULL or -1
 * after ff_error().
 */
#ifndef FF_THINMETA_H
#define FF_THINMETA_H

#include <stddef.h>
#include <stdint.h>

#define FF_THINMETA_BLOCK 4096u /* metadata block size in bytes */
/* The kernel's limits: 255 metadata bitmaps of 16320 entries. */
#define FF_THINMETA_MAX_BLOCKS (255u * 16320u)
/* Device ids are 24 bits in dm-thin's mapping values and messages. */
#define FF_THINMETA_MAX_DEV_ID ((1u << 24) - 1)

enum ff_thinmeta_op_kind {
  FF_THINMETA_OPEN,               /* pool table loaded: open, format if block 0
                                     is all zero */
  FF_THINMETA_RESIZE,             /* a = data blocks (tdata size / chunk) */
  FF_THINMETA_CREATE_THIN,        /* a = device id */
  FF_THINMETA_CREATE_SNAP,        /* a = new device id, b = origin device id */
  FF_THINMETA_SET_TRANSACTION_ID, /* a = current id, b = new id */
  FF_THINMETA_DELETE,             /* a = device id */
  FF_THINMETA_COMMIT,
  FF_THINMETA_CLOSE, /* pool device removed (commits if in service) */
};

struct ff_thinmeta_op {
  enum ff_thinmeta_op_kind kind;
  uint64_t a, b;
};

struct ff_thinmeta;

/* Replay ops on a zeroed metadata device of tmeta_bytes (a multiple of
 * 512, at least 2 blocks) for a pool of data_block_sectors (dm-thin's
 * range: 128..2097152, a multiple of 128).  The sequence must begin with
 * an open, may open and close any number of times, and must leave
 * nothing uncommitted at its end (end with commit or close), since
 * uncommitted changes are never on disk.  Returns the image (caller
 * frees with ff_thinmeta_free) or NULL with a message naming the
 * operation (by its 1-based position) and what was wrong. */
struct ff_thinmeta *ff_thinmeta_build(uint64_t tmeta_bytes,
                                      uint32_t data_block_sectors,
                                      const struct ff_thinmeta_op *ops,
                                      size_t nops);

/* Parse an operation script: words separated by blanks, as
 *   open resize:256 commit close open create:1 commit trans:0:1 commit
 * with create:ID, snap:ID:ORIGIN, delete:ID, trans:OLD:NEW, resize:BLOCKS,
 * open
 * (or open:SECTORS, checked against data_block_sectors at build time,
 * recorded in a), commit, close.  *ops is malloc'd (caller frees).
 * 0, or -1 naming the bad word. */
int ff_thinmeta_parse_ops(const char *text, struct ff_thinmeta_op **ops,
                          size_t *nops);

/* The ops lvm 2.03.16 makes the kernel run for a pool created by
 * `lvcreate --type thin-pool` followed by nthin `lvcreate -T -V` in a
 * row (thin ids 1..nthin, transaction ids 0..nthin): format, resize,
 * commit; close and reopen (lvm re-creates the pool device for the
 * first thin); then per thin create + commit, set_transaction_id +
 * commit; close.  *ops is malloc'd (caller frees).  0 or -1. */
int ff_thinmeta_lvm_ops(uint64_t data_blocks, unsigned nthin,
                        struct ff_thinmeta_op **ops, size_t *nops);

/* Nonzero blocks of the image, ascending block numbers; block i's 4096
 * bytes are ff_thinmeta_block(m, i).  Every other block is zero. */
size_t ff_thinmeta_nblocks(const struct ff_thinmeta *m);
uint64_t ff_thinmeta_blocknr(const struct ff_thinmeta *m, size_t i);
const uint8_t *ff_thinmeta_block(const struct ff_thinmeta *m, size_t i);

/* Size of the metadata device the image was built for, in bytes. */
uint64_t ff_thinmeta_size(const struct ff_thinmeta *m);

/* Fill buf with len bytes of the device from offset: the image's
 * blocks, zeros elsewhere (also past the end).  Never fails. */
void ff_thinmeta_read(const struct ff_thinmeta *m, uint64_t offset, size_t len,
                      void *buf);

void ff_thinmeta_free(struct ff_thinmeta *m);

/* The checksum the kernel stores in a metadata block's first 4 bytes:
 * CRC-32C (Castagnoli) of bytes 4..4095 seeded with ~0, not inverted at
 * the end, XORed with the block kind's constant (exposed for tests). */
uint32_t ff_thinmeta_csum(const uint8_t *block, uint32_t xor_value);

#define FF_THINMETA_XOR_SUPERBLOCK 160774u
#define FF_THINMETA_XOR_BTREE      121107u
#define FF_THINMETA_XOR_BITMAP     240779u
#define FF_THINMETA_XOR_INDEX      160478u

#endif
