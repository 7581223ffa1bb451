/* fusefarm: CRC-32 variants used on disk.
 *
 * lvm2 uses the reflected CRC-32 table (polynomial 0xEDB88320) with the
 * seed 0xF597A6CF and no final XOR (docs/ondisk-format.md §2.3).  GPT and
 * other formats use the standard CRC-32 (seed ~0, final XOR ~0) over the
 * same table.  dm-thin's metadata blocks carry a CRC-32C (Castagnoli,
 * polynomial 0x82F63B78 reflected), which is another function: the
 * kernel's crc32c(~0, ...) with no final XOR (ff_thinmeta_csum).  All
 * functions are pure and thread-safe.
 */
#ifndef FF_CRC_H
#define FF_CRC_H

#include <stddef.h>
#include <stdint.h>

#define FF_LVM_INITIAL_CRC 0xF597A6CFu

/* Continue a raw CRC (no pre- or post-inversion) over len bytes. */
uint32_t ff_crc_update(uint32_t crc, const void *buf, size_t len);

/* lvm2's calc_crc(INITIAL_CRC, buf, len). */
uint32_t ff_lvm_crc(const void *buf, size_t len);

/* Standard CRC-32 as zlib's crc32(0, buf, len) computes it. */
uint32_t ff_crc32(const void *buf, size_t len);

/* Continue a raw CRC-32C (no pre- or post-inversion) over len bytes: the
 * kernel's crc32c(crc, buf, len). */
uint32_t ff_crc32c_update(uint32_t crc, const void *buf, size_t len);

#endif
