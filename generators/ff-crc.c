/* fusefarm: CRC-32 variants (see ff-crc.h). */
#include "ff-crc.h"

static uint32_t crc_table[256];

/* The table is built by a constructor so that every caller, in every
 * thread, sees it complete without a lock. */
__attribute__((constructor)) static void
crc_table_init(void)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;

    for (int k = 0; k < 8; k++)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
}

uint32_t
ff_crc_update(uint32_t crc, const void *buf, size_t len)
{
  const unsigned char *p = buf;

  while (len--)
    crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

uint32_t
ff_lvm_crc(const void *buf, size_t len)
{
  return ff_crc_update(FF_LVM_INITIAL_CRC, buf, len);
}

uint32_t
ff_crc32(const void *buf, size_t len)
{
  return ~ff_crc_update(0xFFFFFFFFu, buf, len);
}
