/* fusefarm: the VG metadata text exactly as lvm2 2.03.16 writes it into
 * a metadata area ("raw" layout: no indentation, no comments but three;
 * docs/ondisk-format.md §5.3).
 *
 * Pure; the result is malloc'd and owned by the caller.
 *
 * Internal to generators/ (and its unit tests): it serializes the farm's
 * own struct ff_vg (ff-farm-int.h).
 */
#ifndef FF_LVMTEXT_INT_H
#define FF_LVMTEXT_INT_H

#include <stdint.h>

struct ff_vg;

/* The text around the VG section, as lvm's _print_header writes it. */
struct ff_text_meta {
  const char *description;    /* e.g. "Write from vgcreate vg0 /dev/sda." */
  const char *host;           /* creation_host, also each LV's */
  const char *uname;          /* the comment after creation_host */
  const char *lvm_version;    /* "2.03.16(2) (2022-05-18)" */
  const char *host_system_id; /* creation_host_system_id, or NULL */
  int write_locked;           /* the VG has a system ID: WRITE_LOCKED */
  int64_t time;               /* creation_time of this write */
  /* The tags at this write, as the text lists them ("[\"a\", \"b\"]"),
   * or NULL: the VG's, each LV's [nlvs] and each PV's [npvs] (the
   * arrays may be NULL: no tags). */
  const char *vg_tags;
  const char *const *lv_tags;
  const char *const *pv_tags;
  /* The tags each LV was created with ([nlvs] or NULL), which a raid
   * LV's _rmeta_N keep for good and a mirror's _mlog has in write 1. */
  const char *const *lv_ctags;
  /* 1: this is write 1 of a two-write lvcreate of LV nlvs - 1 (a raid LV
   * with ACTIVATION_SKIP and visible _rmeta_N, or a mirror with a
   * visible _mlog and no mirror_log line yet); 0: every LV as it stands
   * once created. */
  int first_write;
  /* Which write of the lvcreate of LV nlvs - 1 this is (0-based), or -1:
   * every LV as it stands once created.  A thin pool's, a thin LV's and a
   * snapshot's earlier writes differ from the last (ff-lvmtext.c). */
  int phase;
  /* lvremove of a thin LV, its first write: that LV, whose pool holds the
   * delete message; else NULL */
  const struct ff_lv *deleted;
  /* pvmove0 when a pvmove is under way at this write (the LVs' extents
   * on its PV then go through it), else NULL */
  const struct ff_lv *pvmove;
  /* historical_logical_volumes, in the order they were removed */
  const struct ff_hist *hist;
  uint32_t nhist;
};

/* A removed thin LV that lvm keeps as -NAME (record_lvs_history). */
struct ff_hist {
  const char *name;       /* as it was when removed */
  const char *uuid;       /* raw, FF_UUID_LEN */
  int64_t ctime, rtime;   /* creation_time, removal_time */
  const char *descendant; /* the live LV it descends to (its snapshot) */
};

/* Serialize vg as it stood after its first nlvs LVs were created (the
 * last one at write meta->phase of its lvcreate), with the given seqno:
 * the visible LVs in creation order (a snapshot's COW among them), then
 * the hidden ones (the sub-LVs of mirror, raid and thin-pool LVs, a
 * snapshot's snapshotN), as lvm's _print_lvs.  Returns the
 * text including its final NUL, and its length with the NUL in *size (what
 * raw_locn.size holds); NULL with ff_error on allocation failure. */
char *ff_lvmtext_build(const struct ff_vg *vg, uint32_t nlvs, uint32_t seqno,
                       const struct ff_text_meta *meta, uint32_t *size);

/* Append s to sb with '"' and '\\' escaped as lvm does (backslash). */
struct ff_sb;
void ff_lvmtext_escape(struct ff_sb *sb, const char *s);

#endif
