/* fusefarm: packing a built farm's metadata texts (ff_farm_pack_texts).
 *
 * The texts are most of what a farm holds: in bench-core's farm of 9000
 * devices, 16,200 texts of ~880 bytes, 14 MiB of 23.  They are alike
 * (the same keys, the same layout, VG after VG; what differs is names,
 * UUIDs, numbers), so each is compressed with LZ4 against one dictionary
 * of the farm's own texts: a few VGs of each shape (PV and LV count),
 * kept as they are.  LZ4 because a read must stay cheap: decompressing
 * a text costs ~0.1 us, against ~1 us for zlib's inflate, for 5-6x less
 * memory (zlib: 6x).  A text that does not get smaller stays as it is.
 *
 * The texts are packed as each VG is built (ff_farm_new_packed), so the
 * raw ones never pile up: freed at once, their memory holds the next
 * VG's.  The dictionary grows as VGs of new shapes come, only at its end,
 * and each text records the prefix it was packed against.  Packing is for
 * the servers (ff_server_load_farm: the FUSE daemon and the nbdkit
 * plugin), which hold a farm for hours; the read path (ff-farm-read.c,
 * put_copy) serves packed and unpacked texts alike, and the unit tests
 * read the texts of unpacked farms directly.
 */
#include "ff-farm-int.h"
#include "ff-error.h"

#include <lz4.h>
#include <stdlib.h>
#include <string.h>

/* The dictionary: at most this many bytes (LZ4 looks back 64 KiB), of
 * texts of at most FF_TDICT_TEXT bytes, from the first VG of each of at
 * most FF_TDICT_SHAPES shapes. */
#define FF_TDICT_MAX    (32u * 1024)
#define FF_TDICT_TEXT   (8u * 1024)
#define FF_TDICT_SHAPES 16u

struct ff_packer {
  LZ4_stream_t *ref;  /* the dictionary so far, hashed */
  LZ4_stream_t *work; /* a copy of ref per text */
  char *out;          /* compressed text, before its own copy */
  size_t out_cap;
  uint32_t shapes[FF_TDICT_SHAPES][2]; /* PV count, LV count */
  uint32_t nshapes;
};

struct ff_packer *
ff_packer_new(struct ff_farm *farm)
{
  struct ff_packer *pk = calloc(1, sizeof *pk);

  /* (fixed size and place: a text refers to a prefix of it) */
  farm->tdict = malloc(FF_TDICT_MAX);
  if (!pk || !farm->tdict || !(pk->ref = LZ4_createStream()) ||
      !(pk->work = LZ4_createStream())) {
    ff_packer_free(pk);
    ff_error("out of memory");
    return NULL;
  }
  return pk;
}

void
ff_packer_free(struct ff_packer *pk)
{
  if (!pk)
    return;
  LZ4_freeStream(pk->ref);
  LZ4_freeStream(pk->work);
  free(pk->out);
  free(pk);
}

/* The first VG of a shape not seen yet adds its kept texts to the
 * dictionary, while there is room. */
static void
grow_dict(struct ff_packer *pk, struct ff_farm *farm, const struct ff_vg *vg)
{
  uint32_t k, n = farm->tdict_size;

  if (pk->nshapes == FF_TDICT_SHAPES)
    return;
  for (k = 0; k < pk->nshapes; k++)
    if (pk->shapes[k][0] == vg->npvs && pk->shapes[k][1] == vg->nlvs)
      return;
  pk->shapes[k][0] = vg->npvs;
  pk->shapes[k][1] = vg->nlvs;
  pk->nshapes++;
  for (uint32_t w = 0; w < vg->seqno; w++) {
    const struct ff_text *t = &vg->texts[w];

    if (t->buf && t->size <= FF_TDICT_TEXT && n + t->size <= FF_TDICT_MAX) {
      memcpy(farm->tdict + n, t->buf, t->size);
      n += t->size;
    }
  }
  if (n != farm->tdict_size) {
    farm->tdict_size = n;
    LZ4_loadDict(pk->ref, farm->tdict, (int)n);
  }
}

int
ff_packer_vg(struct ff_packer *pk, struct ff_farm *farm, struct ff_vg *vg)
{
  grow_dict(pk, farm, vg);
  for (uint32_t w = 0; w < vg->seqno; w++) {
    struct ff_text *t = &vg->texts[w];
    size_t bound;
    char *packed;
    int z;

    if (!t->buf || t->size > (uint32_t)LZ4_MAX_INPUT_SIZE)
      continue;
    bound = (size_t)LZ4_compressBound((int)t->size);
    if (bound > pk->out_cap) {
      char *nb = realloc(pk->out, bound);

      if (!nb)
        return ff_error("out of memory");
      pk->out = nb;
      pk->out_cap = bound;
    }
    /* Each text starts from a copy of the hashed dictionary (lz4.h names
     * the copy as a way to reuse a loaded one); the dictionary may grow
     * later, but only at its end, so the prefix this text refers to
     * stays as it is. */
    memcpy(pk->work, pk->ref, sizeof *pk->work);
    z = LZ4_compress_fast_continue(pk->work, t->buf, pk->out, (int)t->size,
                                   (int)pk->out_cap, 1);
    if (z <= 0 || (uint32_t)z >= t->size)
      continue; /* no smaller: kept as it is */
    if (!(packed = malloc((size_t)z)))
      return ff_error("out of memory");
    memcpy(packed, pk->out, (size_t)z);
    free(t->buf);
    t->buf = packed;
    t->zsize = (uint32_t)z;
    t->zdict = farm->tdict_size;
  }
  return 0;
}

int
ff_farm_text_unpack(const struct ff_farm *farm, const struct ff_text *t,
                    char *dst)
{
  int n;

  if (!t->zsize) {
    memcpy(dst, t->buf, t->size);
    return 0;
  }
  n = LZ4_decompress_safe_usingDict(t->buf, dst, (int)t->zsize, (int)t->size,
                                    farm->tdict, (int)t->zdict);
  if (n < 0 || (uint32_t)n != t->size)
    return ff_error("internal error: a packed metadata text of %u bytes "
                    "unpacked to %d",
                    t->size, n);
  return 0;
}
