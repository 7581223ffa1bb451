/* fusefarm: fixed-endian integer stores and loads for on-disk structures.
 * Pure inline helpers; p need not be aligned. */
#ifndef FF_BYTES_H
#define FF_BYTES_H

#include <stdint.h>

static inline void
ff_put_le16(uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static inline void
ff_put_le32(uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
ff_put_le64(uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
ff_put_be16(uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static inline void
ff_put_be32(uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static inline void
ff_put_be64(uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static inline uint32_t
ff_get_le32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static inline uint64_t
ff_get_le64(const uint8_t *p)
{
  return (uint64_t)ff_get_le32(p) | (uint64_t)ff_get_le32(p + 4) << 32;
}

#endif
