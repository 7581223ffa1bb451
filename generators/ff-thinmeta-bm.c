/* fusefarm: thin-pool metadata, the block layer (see ff-thinmeta-int.h).
 *
 * Mirrors the kernel's drivers/md/persistent-data/dm-block-manager.c
 * (the blocks of the device, dm_bm_checksum) and dm-transaction-manager.c
 * (new blocks and copy-on-write shadows: a block allocated or shadowed in
 * the running transaction is written in place).  Which block a new or
 * shadowed block lands in must stay the kernel's, byte for byte.
 */
#include "ff-thinmeta-int.h"
#include "ff-bytes.h"
#include "ff-crc.h"
#include "ff-error.h"

#include <stdlib.h>
#include <string.h>

/* ---- checksum ---------------------------------------------------------- */

uint32_t
ff_thinmeta_csum(const uint8_t *block, uint32_t xor_value)
{
  return ff_crc32c_update(0xFFFFFFFFu, block + 4, BS - 4) ^ xor_value;
}

/* ---- block store ------------------------------------------------------ */

static size_t
hash_nr(uint64_t nr, size_t cap)
{
  return (size_t)((nr * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

struct blk *
ff_tm_store_find(const struct sim *s, uint64_t nr)
{
  if (!s->cap)
    return NULL;
  for (size_t h = hash_nr(nr, s->cap);; h = (h + 1) & (s->cap - 1)) {
    if (!s->slot[h])
      return NULL;
    if (s->slot[h]->nr == nr)
      return s->slot[h];
  }
}

static int
store_grow(struct sim *s)
{
  size_t cap = s->cap ? s->cap * 2 : 256;
  struct blk **slot = calloc(cap, sizeof *slot);

  if (!slot)
    return ff_error("thin metadata: out of memory");
  for (size_t i = 0; i < s->cap; i++) {
    if (s->slot[i]) {
      size_t h = hash_nr(s->slot[i]->nr, cap);

      while (slot[h])
        h = (h + 1) & (cap - 1);
      slot[h] = s->slot[i];
    }
  }
  free(s->slot);
  s->slot = slot;
  s->cap = cap;
  return 0;
}

struct blk *
ff_tm_store_get(struct sim *s, uint64_t nr)
{
  struct blk *b = ff_tm_store_find(s, nr);
  size_t h;

  if (b)
    return b;
  if ((s->n + 1) * 2 > s->cap && store_grow(s) < 0)
    return NULL;
  b = calloc(1, sizeof *b);
  if (!b) {
    ff_error("thin metadata: out of memory");
    return NULL;
  }
  b->nr = nr;
  b->gen = (uint64_t)-1;
  for (h = hash_nr(nr, s->cap); s->slot[h]; h = (h + 1) & (s->cap - 1))
    ;
  s->slot[h] = b;
  s->n++;
  return b;
}

const uint8_t ff_tm_zero_block[BS];

/* Read access: the block's bytes, zeros if it was never written. */
const uint8_t *
ff_tm_rd(const struct sim *s, uint64_t nr)
{
  struct blk *b = ff_tm_store_find(s, nr);

  return b ? b->data : ff_tm_zero_block;
}

/* Write access to a block that exists (new or shadowed). */
uint8_t *
ff_tm_wr(struct sim *s, uint64_t nr)
{
  struct blk *b = ff_tm_store_find(s, nr);

  return b ? b->data : NULL;
}

static int
is_shadow(const struct sim *s, uint64_t nr)
{
  struct blk *b = ff_tm_store_find(s, nr);

  return b && b->gen == s->gen;
}

/* ---- transaction manager ---------------------------------------------- */

int
ff_tm_new_block(struct sim *s, enum kind k, uint64_t *nr)
{
  struct blk *b;

  if (ff_tm_sm_new_block(s, nr) < 0)
    return -1;
  b = ff_tm_store_get(s, *nr);
  if (!b)
    return -1;
  memset(b->data, 0, BS);
  b->kind = k;
  b->gen = s->gen;
  return 0;
}

/* Copy-on-write: *nr is orig itself when orig is already the running
 * transaction's and not shared, else a new block holding orig's bytes
 * (orig's count dropped).  *inc: orig was shared, so its children gain
 * a reference. */
int
ff_tm_shadow(struct sim *s, uint64_t orig, enum kind k, uint64_t *nr, int *inc)
{
  struct blk *b;

  if (ff_tm_sm_more_than_one(s, orig, inc) < 0)
    return -1;
  if (is_shadow(s, orig) && !*inc) {
    *nr = orig;
    return 0;
  }
  if (ff_tm_sm_new_block(s, nr) < 0 || ff_tm_sm_dec(s, orig, orig + 1) < 0)
    return -1;
  b = ff_tm_store_get(s, *nr);
  if (!b)
    return -1;
  memcpy(b->data, ff_tm_rd(s, orig), BS);
  b->kind = k;
  b->gen = s->gen;
  return 0;
}
