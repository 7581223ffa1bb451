/* fusefarm: devices carrying another (non-LVM) signature at offset 0.
 *
 * A "signature" device is all zeros except for the few on-disk structures
 * that make blkid and the format's own tools recognise it: a DOS
 * partition table, a GPT, an ext4 superblock, an XFS v4 superblock or an
 * md 1.2 superblock.  Nothing is stored: every byte is computed on demand
 * from (type, device size, seed), so a farm of thousands of such devices
 * costs no memory.
 *
 * Invariants:
 * - ff_sig_read() is a pure function of its arguments: the same type,
 *   dev_size, seed, off and len always give the same bytes, in any thread,
 *   and reading a range piecewise gives the same bytes as reading it whole.
 * - Every byte outside the ranges ff_sig_extents() lists is zero.
 * - Only FF_SIG_MD puts anything in the 4 bytes at offset 4096 (where an
 *   LVM label could otherwise be looked for); for md they hold its magic.
 * - A device smaller than ff_sig_min_size() carries no signature: it has
 *   no extents and reads as zeros.
 *
 * Nothing here allocates, locks or records errors; no function can fail
 * except ff_sig_parse(), which the caller reports.
 */
#ifndef FF_SIGNATURE_H
#define FF_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

/* The signature kinds.  The layout of each:
 * - FF_SIG_MBR: a DOS partition table in sector 0 (disk signature at 440
 *   from the seed, one Linux (0x83) partition from LBA 2048 to the end of
 *   the device, at most 2^32-1 sectors long, 0x55 0xAA at 510).
 * - FF_SIG_GPT: a protective MBR, the primary GPT header at LBA 1 and its
 *   128-entry array at LBA 2, the backup array at the last LBA - 32 and
 *   the backup header at the last LBA; one Linux filesystem partition
 *   named "fusefarm" from LBA 2048 to the last usable LBA, its end aligned
 *   down to 1 MiB.  Disk and partition GUIDs come from the seed.
 * - FF_SIG_EXT4: an ext4 superblock at byte 1024 (4 KiB blocks, geometry
 *   as mke2fs would choose it for the device, has_journal, no
 *   metadata_csum, label "fusefarm", UUID from the seed).  Only the
 *   superblock exists, so the filesystem cannot be mounted or checked.
 * - FF_SIG_XFS: an XFS v4 (no CRC) superblock at byte 0 with the geometry
 *   mkfs.xfs -m crc=0 would choose (4 KiB blocks, 512-byte sectors,
 *   256-byte inodes), label "fusefarm", UUID from the seed.
 * - FF_SIG_MD: an md 1.2 superblock at byte 4096 (RAID1 member 0 of 2,
 *   array name "fusefarm:0", data from sector 2048, UUIDs from the seed).
 */
enum ff_sig_type {
  FF_SIG_MBR,
  FF_SIG_GPT,
  FF_SIG_EXT4,
  FF_SIG_XFS,
  FF_SIG_MD
};

/* Set *out to the type called name ("mbr", "gpt", "ext4", "xfs", "md";
 * exact, lowercase) and return 0.  Return -1, leaving *out alone, for any
 * other name or NULL; no error is recorded: the caller knows where the
 * name came from and reports it.
 */
int ff_sig_parse(const char *name, enum ff_sig_type *out);

/* The name ff_sig_parse() takes for t, a static string; NULL if t is not
 * an ff_sig_type.
 */
const char *ff_sig_name(enum ff_sig_type t);

/* The smallest device size in bytes that can carry a signature of type t
 * (0 if t is not an ff_sig_type):
 * - mbr: 2049 sectors (the partition at LBA 2048 needs one sector);
 * - gpt: 4129 sectors (34 + 33 sectors of tables and one aligned 1 MiB
 *   partition from LBA 2048);
 * - ext4: 8 MiB (2048 blocks, the least mke2fs gives a journal);
 * - xfs: 16 MiB (the smallest allocation group XFS allows);
 * - md: 2 MiB (1 MiB before the data, and blkid ignores RAID members of
 *   1440 KiB or less).
 */
uint64_t ff_sig_min_size(enum ff_sig_type t);

#ifndef FF_RANGE_DEFINED
#define FF_RANGE_DEFINED
/* A half-open byte range [off, off + len) of a device. */
struct ff_range {
  uint64_t off;
  uint64_t len;
};
#endif

/* Write into out[0..max) the byte ranges of a dev_size-byte device with
 * signature t that may hold non-zero bytes: sorted by offset,
 * non-overlapping, non-empty and inside the device.  Return how many
 * ranges there are; if that is more than max, only the first max were
 * written (call with max 0 to count; out may then be NULL).  A device
 * smaller than ff_sig_min_size(t), or an unknown t, has none.  There are
 * never more than 8.
 */
size_t ff_sig_extents(enum ff_sig_type t, uint64_t dev_size,
                      struct ff_range *out, size_t max);

/* Fill buf with bytes [off, off + len) of a dev_size-byte device carrying
 * signature t.  seed (any value) determines every UUID, GUID and disk
 * identifier: the same arguments always give the same bytes, and
 * different seeds give different identifiers.
 *
 * The caller must have zeroed buf (len bytes); only the parts that
 * overlap ff_sig_extents() are written.  Any off and len are allowed: a
 * range may cut a structure anywhere, be empty, or run past the end of
 * the device (bytes past the end are left as they are).  Pure, thread-safe
 * and allocation-free; it uses a few KiB of stack.
 */
void ff_sig_read(enum ff_sig_type t, uint64_t dev_size, uint64_t seed,
                 void *buf, uint64_t off, size_t len);

#endif
