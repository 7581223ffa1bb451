/* fusefarm: LVM2 PV structures and copy placement (see ff-pvlayout-int.h). */
#include "ff-pvlayout-int.h"
#include "ff-crc.h"

#include <string.h>

void
ff_label_build(uint8_t out[512], const struct ff_label_info *li)
{
  uint8_t *p;

  memset(out, 0, 512);
  memcpy(out, FF_LABEL_ID, 8);
  ff_put_le64(out + 8, li->sector);
  ff_put_le32(out + 20, 32); /* offset_xl: pv_header follows */
  memcpy(out + 24, FF_LABEL_TYPE, 8);

  memcpy(out + 32, li->uuid, 32);
  ff_put_le64(out + 64, li->dev_size);
  p = out + 72;
  /* Data area list: one entry, size 0 = "to the end", then terminator. */
  ff_put_le64(p, li->pe_start);
  p += 32;
  /* Metadata area list, then terminator. */
  for (unsigned i = 0; i < li->nmdas; i++) {
    ff_put_le64(p, li->mda_start[i]);
    ff_put_le64(p + 8, li->mda_size[i]);
    p += 16;
  }
  p += 16;
  /* pv_header_extension, then its bootloader area list: one entry when
   * there is one, then the terminator. */
  ff_put_le32(p, 2);
  ff_put_le32(p + 4, li->used ? FF_PV_EXT_USED : 0);
  if (li->ba_size) {
    ff_put_le64(p + 8, li->ba_start);
    ff_put_le64(p + 16, li->ba_size);
  }

  ff_put_le32(out + 16, ff_lvm_crc(out + 20, 512 - 20));
}

void
ff_mda_header_build(uint8_t out[512], uint64_t start, uint64_t size,
                    uint64_t text_off, uint64_t text_size, uint32_t text_crc,
                    int ignored)
{
  memset(out, 0, 512);
  memcpy(out + 4, FF_MDA_MAGIC, 16);
  ff_put_le32(out + 20, 1);
  ff_put_le64(out + 24, start);
  ff_put_le64(out + 32, size);
  if (text_off) {
    ff_put_le64(out + 40, text_off);
    ff_put_le64(out + 48, text_size);
    ff_put_le32(out + 56, text_crc);
  }
  if (ignored)
    ff_put_le32(out + 60, 1); /* RAW_LOCN_IGNORED */
  ff_put_le32(out, ff_lvm_crc(out + 4, 512 - 4));
}

uint64_t
ff_mda_next_offset(uint64_t mda_size, uint64_t prev_off, uint64_t prev_size)
{
  uint64_t old_last, start;

  if (prev_size == 0)
    return 512;
  if (prev_off + prev_size > mda_size) /* wrapped: its tail is at 512 */
    old_last = prev_off + prev_size - mda_size + 512 - 1;
  else
    old_last = prev_off + prev_size - 1;
  if (mda_size - old_last < 512)
    return 512;
  start = (old_last + 1 + 511) / 512 * 512;
  if (start > mda_size - 512)
    return 512;
  return start;
}
