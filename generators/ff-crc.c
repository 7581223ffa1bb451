/* fusefarm: CRC-32 variants (see ff-crc.h). */
#include "ff-crc.h"

static uint32_t crc_table[256];    /* CRC-32, reflected 0xEDB88320 */
static uint32_t crc32c_table[256]; /* CRC-32C, reflected 0x82F63B78 */

static void
table_init(uint32_t table[256], uint32_t poly)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;

    for (int k = 0; k < 8; k++)
      c = (c & 1) ? poly ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
}

/* The tables are built by a constructor so that every caller, in every
 * thread, sees them complete without a lock. */
__attribute__((constructor)) static void
crc_table_init(void)
{
  table_init(crc_table, 0xEDB88320u);
  table_init(crc32c_table, 0x82F63B78u);
}

static uint32_t
update(const uint32_t table[256], uint32_t crc, const void *buf, size_t len)
{
  const unsigned char *p = buf;

  while (len--)
    crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

uint32_t
ff_crc_update(uint32_t crc, const void *buf, size_t len)
{
  return update(crc_table, crc, buf, len);
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

uint32_t
ff_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
  return update(crc32c_table, crc, buf, len);
}
