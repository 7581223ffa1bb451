/* fusefarm: sparse per-device write overlay.
 *
 * Every synthetic device's bytes are computed on demand from the spec
 * (its "base").  Writes coming from lvm commands (through FUSE + loop
 * devices, or NBD) land here, in FF_OVERLAY_BLOCK-sized blocks, so that
 * later reads return the written bytes.  A reader first fills its buffer
 * with base bytes and then calls ff_overlay_apply() to overlay the
 * written blocks.
 *
 * INVARIANTS
 *
 * - Blocks are FF_OVERLAY_BLOCK bytes, aligned to FF_OVERLAY_BLOCK within
 *   the device.  If a device's size is not a multiple of the block size
 *   its last block is short: only the part inside the device is
 *   meaningful and the rest of the stored block is always zero.
 * - An overlay block is either a data block (holds a FF_OVERLAY_BLOCK
 *   buffer whose in-device bytes are never all zero) or a zero marker (no
 *   buffer: the block reads as zeros, hiding non-zero base bytes).
 * - A block whose content is all zeros and whose base is all zeros too is
 *   never kept ("blocks ignored when all zero").  A zero marker therefore
 *   always hides a base block that is not all zero.
 * - Blocks never written are absent and read as base.  A block that has
 *   been written stays in the overlay even if its content later equals
 *   the base (only the all-zero case above is dropped).
 * - The overlay allocates nothing for a device until the first write
 *   that stores a block in it (writing or zeroing zeros over a zero base
 *   allocates nothing): each device costs 16 bytes (its size and a
 *   pointer) before that.
 *
 * THREAD MODEL
 *
 * All functions except ff_overlay_new, ff_overlay_free and
 * ff_overlay_load may be called concurrently from any number of threads.
 *
 * - Each device has its own state (block index + pthread rwlock),
 *   allocated on the device's first write and published with an atomic
 *   compare-and-swap; it lives until ff_overlay_free.  The device's
 *   rwlock guards its block index (a sorted array) and the data buffers
 *   it points to.  No lock is shared between devices, so different
 *   devices never contend.  No function holds more than one lock at a
 *   time and no lock is held while calling the base function or a
 *   ff_overlay_foreach callback, so there is no lock order to respect.
 * - Each device's block count is also kept in an atomic, stored under
 *   the write lock at the end of every change.  Readers of a device with
 *   no state or a zero count (the common case: most devices are never
 *   written) take no lock at all, only one or two atomic loads.
 * - Writers (write, zero) read any base bytes they need before taking
 *   the device's write lock (the base is immutable), then merge partial
 *   blocks and splice the result into the index under the write lock.
 *   Readers (apply, foreach, save, stats) take the read lock.
 * - Atomicity: readers never see part of a write within a block.  A
 *   write or zero request of up to FF_OVERLAY_ATOMIC_MAX bytes (32 MiB,
 *   the largest NBD request) is applied under one hold of the write
 *   lock, so a reader sees either none or all of it, across all its
 *   blocks.  Larger requests are applied as consecutive block-aligned
 *   pieces of at most that size, in ascending order, each atomic on its
 *   own.  Concurrent writes to the same device are serialised, so each
 *   block ends up holding exactly one writer's bytes where the writes
 *   cover it completely, and both writers' bytes where they cover
 *   disjoint parts of it (read-modify-write happens under the lock).
 * - Lock failures (which would mean memory corruption or a bug) abort.
 *
 * OWNERSHIP
 *
 * The overlay owns all its memory; it copies dev_sizes and the bytes
 * written.  The caller owns the base function's opaque pointer, which
 * must outlive the overlay.  Buffers passed in are only borrowed for the
 * duration of the call.
 *
 * ERRORS
 *
 * Functions that can fail return -1 (or NULL) after recording one
 * message with ff_error(); see ff-error.h.
 */
#ifndef FF_OVERLAY_H
#define FF_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

/* Size of one overlay block in bytes. */
#define FF_OVERLAY_BLOCK 4096

/* Largest request (bytes) that is applied atomically across blocks. */
#define FF_OVERLAY_ATOMIC_MAX (32u * 1024 * 1024)

struct ff_overlay;

/* Reads the device's base (generated) bytes [off, off+len) into buf;
 * returns 0, or -1 with ff_error set.  Called for read-modify-write of
 * partial blocks and to decide whether a zero block can be dropped.
 * Requests never extend beyond the device's size.  Must be thread-safe;
 * the overlay calls it without holding any lock, possibly from several
 * threads at once.  Its result for a given range must never change.
 */
typedef int (*ff_base_read_fn)(void *opaque, uint32_t dev, void *buf,
                               uint64_t off, size_t len);

/* Create an overlay for ndev devices; dev_sizes[i] is device i's size in
 * bytes.  The array is copied; base and opaque are borrowed and must
 * stay valid until ff_overlay_free.  Returns a new overlay, owned by the
 * caller and released with ff_overlay_free, or NULL with ff_error set
 * (null arguments, out of memory).  ndev may be 0.
 */
struct ff_overlay *ff_overlay_new(uint32_t ndev, const uint64_t *dev_sizes,
                                  ff_base_read_fn base, void *opaque);

/* Cap the memory the overlay's written blocks hold: at most bytes of
 * data blocks (FF_OVERLAY_BLOCK each; bytes rounded down to whole
 * blocks, at least one) across all devices, 0 for no cap.  A write or
 * load that would need more fails with errno ENOSPC and holds nothing
 * new, and is counted; zero markers (16 bytes of index each) and the
 * index are not counted, and a write that replaces held blocks, or a
 * zero or trim that frees them, makes room.  Set before any write. */
void ff_overlay_set_max(struct ff_overlay *ov, uint64_t bytes);

/* The cap in bytes (0: none) and the writes it refused so far. */
void ff_overlay_cap(struct ff_overlay *ov, uint64_t *max_bytes,
                    uint64_t *full);

/* Free the overlay and every block it holds.  No other call on ov may be
 * running or start afterwards.  NULL is accepted and ignored.
 */
void ff_overlay_free(struct ff_overlay *ov);

/* Write len bytes from buf at off on device dev.  The range must lie
 * inside the device, else -1 with "write beyond end of device N: ..."
 * (an unknown device gives "write: no such device N ...").
 * Partial blocks are completed from the current contents (overlay if
 * present, else base).  A block whose resulting content is all zeros is
 * stored without a data buffer: removed from the overlay if its base is
 * all zeros too, else kept as a zero marker.  len 0 is a no-op (off may
 * then equal the device size).
 *
 * Returns 0, or -1 with ff_error set: range error, base read error or
 * out of memory.  On failure nothing of the current FF_OVERLAY_ATOMIC_MAX
 * piece has been applied, but earlier pieces of a larger request have.
 */
int ff_overlay_write(struct ff_overlay *ov, uint32_t dev, const void *buf,
                     uint64_t off, size_t len);

/* Same as ff_overlay_write of len zero bytes, without needing a buffer
 * (NBD zero/trim, FUSE fallocate punch-hole).  The range error reads
 * "zero beyond end of device N: ...".  Zeroing a range reads the base of
 * every block in it (without holding a lock) to decide whether a zero
 * marker is needed, so its cost grows with the range.
 */
int ff_overlay_zero(struct ff_overlay *ov, uint32_t dev, uint64_t off,
                    uint64_t len);

/* buf already holds the BASE bytes of [off, off+len) of device dev;
 * replace the parts covered by overlay blocks with the overlay's bytes
 * (zeros for zero markers).  Never fails: parts beyond the device's end,
 * and every byte of an unknown device, are left alone.  Takes no lock if
 * the device has no blocks.
 */
void ff_overlay_apply(struct ff_overlay *ov, uint32_t dev, void *buf,
                      uint64_t off, size_t len);

/* Number of blocks (data blocks + zero markers) device dev holds in the
 * overlay; 0 for an unknown device.  Lock-free (atomic loads only): a
 * fast "does this device have any writes" test.
 */
uint64_t ff_overlay_blocks(struct ff_overlay *ov, uint32_t dev);

/* Call fn(opaque, block_offset_bytes, is_zero) for each overlay block of
 * dev in ascending offset order (SEEK_DATA, NBD block status).  is_zero
 * is 1 for a zero marker, 0 for a data block.  Returns 0, or the first
 * non-zero value fn returned (iteration stops there).
 *
 * fn is called with no lock held, so it may call any ff_overlay function
 * (except ff_overlay_free).  The blocks are read in batches under the
 * device's read lock: with concurrent writers each block is reported at
 * most once, in ascending order, but blocks added or removed during the
 * iteration may or may not be reported.
 */
int ff_overlay_foreach(struct ff_overlay *ov, uint32_t dev,
                       int (*fn)(void *opaque, uint64_t off, int is_zero),
                       void *opaque);

/* ff_overlay_foreach of the blocks that meet [off, off+len) only: its
 * cost grows with the blocks in the range, not with the device's (a
 * zero of a small range on a device with a big overlay). */
int ff_overlay_foreach_in(struct ff_overlay *ov, uint32_t dev, uint64_t off,
                          uint64_t len,
                          int (*fn)(void *opaque, uint64_t off, int is_zero),
                          void *opaque);

/* Totals over all devices: blocks with data, zero markers, and bytes of
 * memory held by data buffers (data_blocks * FF_OVERLAY_BLOCK; the index
 * itself is not counted).  Any pointer may be NULL.  Each device is
 * counted consistently; with concurrent writers the totals are a sum of
 * per-device snapshots.
 */
void ff_overlay_stats(struct ff_overlay *ov, uint64_t *data_blocks,
                      uint64_t *zero_blocks, uint64_t *bytes);

/* Save every block of every device to path, atomically: the file is
 * written as "path.tmp", fsynced, then renamed over path (and the
 * directory fsynced, best effort: once the rename is done the save has
 * succeeded).  fingerprint identifies the farm (a 64-bit hash of the
 * spec that the caller computes) and is stored in the header.
 *
 * File format, all integers little-endian:
 *   header  "FFOVRLAY" (8), u32 version = 1, u32 block size = 4096,
 *           u64 fingerprint, u32 device count, u32 zero          32 bytes
 *   records in ascending (device, block) order, each
 *           u32 device, u32 flags (bit 0: zero marker), u64 block index,
 *           then 4096 data bytes unless it is a zero marker
 *   trailer "FFOVEND" NUL (8), u64 record count,
 *           u32 ff_crc32() of every byte of the file before it  20 bytes
 * so a truncated or corrupted file is detected on load.
 *
 * May run concurrently with reads and writes: each device is captured
 * under its read lock (writes to that device wait meanwhile), one device
 * after another, so the file is a per-device consistent snapshot.
 * Callers must not save to the same path from two threads at once.
 *
 * Returns 0, or -1 with ff_error set to a message naming path, the step
 * and the system's reason ("save overlay P: write P.tmp: No space left on
 * device") and errno set to that step's errno (EACCES, EROFS, ENOSPC,
 * EDQUOT, EIO, ...).  On error the previous file at path is untouched and
 * path.tmp is removed; the overlay itself is never changed by a save, so
 * a later save (to another path) still has every block.  A process killed
 * during a save leaves at most path.tmp behind, never a partial path
 * (rename is atomic); the next save replaces that path.tmp, and
 * ff_overlay_load refuses it as truncated.
 */
int ff_overlay_save(struct ff_overlay *ov, const char *path,
                    uint64_t fingerprint);

/* Check, before serving, that a later ff_overlay_save(path) can create
 * its temporary file: creates path.tmp (replacing a stale one, as a save
 * does) and removes it.  Front ends call it at start-up so that an
 * unwritable save path (missing directory, read-only file system,
 * EACCES) is refused before anything is served, not discovered at exit.
 * It cannot promise free space: a save can still fail with ENOSPC.
 * Returns 0, or -1 with a message as ff_overlay_save's and errno set.
 */
int ff_overlay_save_check(const char *path);

/* Load a file written by ff_overlay_save into ov, which must be empty
 * (no blocks on any device).  Must not run concurrently with any other
 * call on ov (load at start-up, before serving).
 *
 * Rejects, with a message naming path and what is wrong: a file that is
 * not an overlay (bad magic), an unsupported version or block size, a
 * truncated file, a bad CRC, a fingerprint mismatch ("overlay PATH was
 * saved for another farm ..."), a record for a device or block beyond
 * this farm, unknown flags, records out of order or a record count that
 * does not match the trailer.  Integrity (size, trailer, CRC) is checked
 * over the whole file before anything is interpreted.
 *
 * Returns 0, or -1 with ff_error set.  All-or-nothing: after any error
 * the overlay is empty, except when it was not empty to begin with (that
 * error is reported before anything is touched).
 */
int ff_overlay_load(struct ff_overlay *ov, const char *path,
                    uint64_t fingerprint);

#endif
