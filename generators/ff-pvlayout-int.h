/* fusefarm: the binary structures of an LVM2 PV (label sector, pv_header,
 * mda_header) and lvm's placement of metadata copies in the circular
 * buffer.  Facts: docs/ondisk-format.md §2-§4.
 *
 * All functions are pure; all integers written are little-endian.
 *
 * Internal to generators/ (and its unit and fuzz tests): front ends get
 * bytes from ff-farm.h, never build these structures themselves.
 */
#ifndef FF_PVLAYOUT_INT_H
#define FF_PVLAYOUT_INT_H

#include <stdint.h>

#include "ff-bytes.h"

#define FF_LABEL_ID    "LABELONE"
#define FF_LABEL_TYPE  "LVM2 001"
#define FF_MDA_MAGIC   " LVM2 x[5A%r0N*>"
#define FF_MDA0_START  4096u
#define FF_MD_MAGIC    0xA92B4EFCu
#define FF_PV_EXT_USED 1u

/* What goes into a label sector. */
struct ff_label_info {
  const char *uuid;      /* 32 characters, no NUL needed */
  uint64_t dev_size;     /* bytes */
  uint64_t pe_start;     /* bytes (data area list) */
  uint64_t mda_start[2]; /* absolute bytes */
  uint64_t mda_size[2];
  unsigned nmdas;             /* 0..2 */
  uint64_t ba_start, ba_size; /* the bootloader area; 0, 0: none */
  unsigned sector;            /* where the label sits, 0..3 */
  int used;                   /* PV_EXT_USED: the PV is in a VG */
};

/* Fill out[512] with the label sector, CRC included. */
void ff_label_build(uint8_t out[512], const struct ff_label_info *li);

/* Fill out[512] with an mda_header at absolute offset start, of size
 * bytes, whose raw_locn[0] points at text_off (mda-relative) with
 * text_size bytes and text_crc; text_off == 0 means no metadata (an
 * orphan PV): raw_locn[0] is all zeros.  ignored: RAW_LOCN_IGNORED in
 * raw_locn[0]'s flags (an mda vgcreate --vgmetadatacopies left out). */
void ff_mda_header_build(uint8_t out[512], uint64_t start, uint64_t size,
                         uint64_t text_off, uint64_t text_size,
                         uint32_t text_crc, int ignored);

/* Where lvm writes the copy that follows one at prev_off (mda-relative)
 * of prev_size bytes, in an mda of mda_size bytes; prev_size == 0 means
 * there is no committed copy: the first write goes to 512. */
uint64_t ff_mda_next_offset(uint64_t mda_size, uint64_t prev_off,
                            uint64_t prev_size);

#endif
