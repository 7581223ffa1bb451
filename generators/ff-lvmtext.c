/* fusefarm: VG metadata text serializer (see ff-lvmtext-int.h).
 *
 * The order and blank lines follow lvm2 2.03.16's lib/format_text/
 * export.c in raw mode: each outf() is one line, outnl() an empty line,
 * comments dropped except the header's ctime and uname ones.
 */
#include "ff-lvmtext-int.h"
#include "ff-error.h"
#include "ff-farm-int.h"
#include "ff-util.h"

#include <stdlib.h>
#include <string.h>

void
ff_lvmtext_escape(struct ff_sb *sb, const char *s)
{
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      ff_sb_addn(sb, "\\", 1);
    ff_sb_addn(sb, s, 1);
  }
}

static void
add_uuid_line(struct ff_sb *sb, const char uuid[FF_UUID_LEN])
{
  char d[FF_UUID_DASHED + 1];

  ff_uuid_dash(uuid, d);
  ff_sb_addf(sb, "id = \"%s\"\n", d);
}

static void
add_pvs(struct ff_sb *sb, const struct ff_vg *vg, const char *const *pv_tags)
{
  ff_sb_add(sb, "physical_volumes {\n");
  for (uint32_t i = 0; i < vg->npvs; i++) {
    const struct ff_pv *pv = &vg->pvs[i];

    ff_sb_addf(sb, "\npv%u {\n", i);
    add_uuid_line(sb, pv->uuid);
    ff_sb_add(sb, "device = \"");
    ff_lvmtext_escape(sb, pv->hint);
    ff_sb_add(sb, "\"\n\n");
    if (vg->device_id_type && pv->device_id)
      ff_sb_addf(sb, "device_id_type = \"%s\"\ndevice_id = \"%s\"\n",
                 vg->device_id_type, pv->device_id);
    ff_sb_add(sb, pv->unalloc ? "status = []\nflags = []\n"
                              : "status = [\"ALLOCATABLE\"]\nflags = []\n");
    if (pv_tags && pv_tags[i])
      ff_sb_addf(sb, "tags = %s\n", pv_tags[i]);
    ff_sb_addf(sb, "dev_size = %llu\n",
               (unsigned long long)(pv->dev_size / FF_SECTOR));
    ff_sb_addf(sb, "pe_start = %llu\n",
               (unsigned long long)(vg->fmt.pe_start / FF_SECTOR));
    ff_sb_addf(sb, "pe_count = %llu\n", (unsigned long long)pv->pe_count);
    if (vg->fmt.ba_start && vg->fmt.ba_size)
      ff_sb_addf(sb, "ba_start = %llu\nba_size = %llu\n",
                 (unsigned long long)(vg->fmt.ba_start / FF_SECTOR),
                 (unsigned long long)(vg->fmt.ba_size / FF_SECTOR));
    ff_sb_add(sb, "}\n");
  }
  ff_sb_add(sb, "}\n");
}

/* The segment of a mirror top LV (mirrored.c _mirrored_text_export,
 * then out_areas) or a raid one (raid.c _raid_text_export_raid). */
static void
add_mirror_raid_seg(struct ff_sb *sb, const struct ff_lv *lv, int first_write)
{
  ff_sb_addf(sb, "type = \"%s\"\n", lv->segtype);
  if (lv->kind == FF_LVK_MIRROR) {
    ff_sb_addf(sb, "mirror_count = %u\n", lv->images);
    if (!first_write && lv->nsubs > lv->images)
      ff_sb_addf(sb, "mirror_log = \"%s\"\n", lv->subs[lv->images].name);
    ff_sb_addf(sb, "region_size = %llu\n",
               (unsigned long long)lv->region_size);
    ff_sb_add(sb, "\nmirrors = [\n");
    for (uint32_t i = 0; i < lv->images; i++)
      ff_sb_addf(sb, "\"%s\", 0%s\n", lv->subs[i].name,
                 i + 1 == lv->images ? "" : ",");
  } else if (!strncmp(lv->segtype, "raid0", 5)) {
    /* raid.c _raid_text_export_raid0: raid0 lists its rimages,
     * raid0_meta rmeta, rimage pairs */
    int meta = lv->nsubs > lv->images;

    ff_sb_addf(sb, "stripe_count = %u\n", lv->images);
    if (lv->stripe_size)
      ff_sb_addf(sb, "stripe_size = %llu\n",
                 (unsigned long long)lv->stripe_size);
    ff_sb_addf(sb, "\n%s = [\n", meta ? "raids" : "raid0_lvs");
    for (uint32_t i = 0; i < lv->images; i++)
      if (meta)
        ff_sb_addf(sb, "\"%s\", \"%s\"%s\n", lv->subs[2 * i + 1].name,
                   lv->subs[2 * i].name, i + 1 == lv->images ? "" : ",");
      else
        ff_sb_addf(sb, "\"%s\"%s\n", lv->subs[i].name,
                   i + 1 == lv->images ? "" : ",");
  } else {
    ff_sb_addf(sb, "device_count = %u\n", lv->images);
    if (lv->data_copies)
      ff_sb_addf(sb, "data_copies = %u\n", lv->data_copies);
    ff_sb_addf(sb, "region_size = %llu\n",
               (unsigned long long)lv->region_size);
    if (lv->stripe_size)
      ff_sb_addf(sb, "stripe_size = %llu\n",
                 (unsigned long long)lv->stripe_size);
    ff_sb_add(sb, "\nraids = [\n");
    for (uint32_t i = 0; i < lv->images; i++)
      ff_sb_addf(sb, "\"%s\", \"%s\"%s\n", lv->subs[2 * i + 1].name,
                 lv->subs[2 * i].name, i + 1 == lv->images ? "" : ",");
  }
  ff_sb_add(sb, "]\n}\n");
}

/* Does LV lv have extents pvmove0 pm moves (then it is LOCKED)? */
static int
pvmove_locks(const struct ff_lv *pm, const struct ff_lv *lv)
{
  for (uint32_t s = 0; pm && lv->kind != FF_LVK_PVMOVE && s < lv->nsegs; s++)
    for (uint32_t a = 0; lv->segs[s].areas && a < lv->segs[s].stripes; a++)
      if (ff_fb_pvmove_le(pm, &lv->segs[s].areas[a]) != UINT64_MAX)
        return 1;
  return 0;
}

/* The start of LV lv's section, named name: up to its segment count. */
static void
add_head(struct ff_sb *sb, const struct ff_lv *lv, const char *name,
         const struct ff_text_meta *tm, const char *tags, int visible,
         int skip, uint32_t nsegs)
{
  /* export.c _print_lv: WRITE becomes WRITE_LOCKED (a flag) in a VG
   * with a system ID; flags.c's order */
  int wr = !lv->f.readonly, locked = wr && tm->write_locked;
  int skipf = skip || lv->f.act_skip;
  /* a hidden cachevol is one in use: CACHE_VOL */
  int cvol = lv->kind == FF_LVK_CACHEVOL && !visible;

  ff_sb_addf(sb, "\n%s {\n", name);
  add_uuid_line(sb, lv->uuid);
  ff_sb_addf(
    sb, "status = [\"READ\"%s%s%s%s%s]\nflags = [%s%s%s%s%s]\n",
    wr && !locked ? ", \"WRITE\"" : "",
    lv->f.fixed_minor ? ", \"FIXED_MINOR\"" : "",
    visible ? ", \"VISIBLE\"" : "",
    lv->kind == FF_LVK_PVMOVE      ? ", \"PVMOVE\", \"LOCKED\""
    : pvmove_locks(tm->pvmove, lv) ? ", \"LOCKED\""
                                   : "",
    lv->nosync ? ", \"NOTSYNCED\"" : "", locked ? "\"WRITE_LOCKED\"" : "",
    locked && skipf ? ", " : "", skipf ? "\"ACTIVATION_SKIP\"" : "",
    cvol && (locked || skipf) ? ", " : "", cvol ? "\"CACHE_VOL\"" : "");
  if (tags)
    ff_sb_addf(sb, "tags = %s\n", tags);
  ff_sb_addf(sb, "creation_time = %lld\n", (long long)lv->time);
  ff_sb_add(sb, "creation_host = \"");
  ff_lvmtext_escape(sb, tm->host);
  ff_sb_add(sb, "\"\n");
  if (lv->alloc)
    ff_sb_addf(sb, "allocation_policy = \"%s\"\n", lv->alloc);
  if (lv->f.read_ahead)
    ff_sb_addf(sb, "read_ahead = %d\n", (int)lv->f.read_ahead);
  if (lv->f.fixed_minor)
    ff_sb_addf(sb, "major = %u\nminor = %u\n", lv->f.major, lv->f.minor);
  ff_sb_addf(sb, "segment_count = %u\n\n", nsegs);
}

/* Linear or striped segments on PVs, and the end of the LV. */
static void
add_striped_segs(struct ff_sb *sb, const struct ff_seg *segs, uint32_t nsegs,
                 const struct ff_text_meta *tm)
{
  const struct ff_lv *pm = tm->pvmove;
  uint32_t sn = 0;

  for (uint32_t s = 0; s < nsegs; s++) {
    const struct ff_seg *seg = &segs[s];

    if (seg->stripes == 1 &&
        ff_fb_pvmove_le(pm, &seg->areas[0]) != UINT64_MAX) {
      /* moving: one segment per piece of pvmove0 it went to (its
       * allocation split it where the new areas end) */
      for (uint32_t p = 0; p < pm->nsegs; p++) {
        const struct ff_seg *ps = &pm->segs[p];

        if (!ff_fb_pvmove_piece(pm, p, seg))
          continue;
        ff_sb_addf(
          sb,
          "segment%u {\nstart_extent = %llu\nextent_count = "
          "%llu\n\ntype = \"striped\"\nstripe_count = 1\n\n"
          "stripes = [\n\"pvmove0\", %llu\n]\n}\n",
          ++sn,
          (unsigned long long)(seg->le + ps->areas[0].pe - seg->areas[0].pe),
          (unsigned long long)ps->len, (unsigned long long)ps->le);
      }
      continue;
    }
    ff_sb_addf(sb, "segment%u {\n", ++sn);
    ff_sb_addf(sb, "start_extent = %llu\n", (unsigned long long)seg->le);
    ff_sb_addf(sb, "extent_count = %llu\n\n", (unsigned long long)seg->len);
    ff_sb_add(sb, "type = \"striped\"\n");
    ff_sb_addf(sb, "stripe_count = %u\n", seg->stripes);
    if (seg->stripes > 1)
      ff_sb_addf(sb, "stripe_size = %llu\n",
                 (unsigned long long)(seg->stripe_size / FF_SECTOR));
    ff_sb_add(sb, "\nstripes = [\n");
    for (uint32_t a = 0; a < seg->stripes; a++)
      ff_sb_addf(sb, "\"pv%u\", %llu%s\n", seg->areas[a].pv,
                 (unsigned long long)seg->areas[a].pe,
                 a + 1 == seg->stripes ? "" : ",");
    ff_sb_add(sb, "]\n}\n");
  }
  ff_sb_add(sb, "}\n");
}

/* How many segments add_striped_segs writes for segs. */
static uint32_t
printed_segs(const struct ff_seg *segs, uint32_t nsegs,
             const struct ff_text_meta *tm)
{
  const struct ff_lv *pm = tm->pvmove;
  uint32_t n = 0;

  for (uint32_t s = 0; s < nsegs; s++) {
    const struct ff_seg *seg = &segs[s];

    if (seg->stripes != 1 ||
        ff_fb_pvmove_le(pm, &seg->areas[0]) == UINT64_MAX) {
      n++;
      continue;
    }
    for (uint32_t p = 0; p < pm->nsegs; p++)
      n += ff_fb_pvmove_piece(pm, p, seg);
  }
  return n;
}

/* LV lv; visible: VISIBLE in its status; skip: ACTIVATION_SKIP (write 1
 * of a raid LV); first_write: its mirror segment as write 1 has it. */
static void
add_lv(struct ff_sb *sb, const struct ff_lv *lv, const struct ff_text_meta *tm,
       const char *tags, int visible, int skip, int first_write)
{
  add_head(sb, lv, lv->name, tm, tags, visible, skip,
           lv->kind == FF_LVK_STRIPED ? printed_segs(lv->segs, lv->nsegs, tm)
                                      : lv->nsegs);
  if (lv->kind == FF_LVK_MIRROR || lv->kind == FF_LVK_RAID) {
    ff_sb_add(sb, "segment1 {\nstart_extent = 0\n");
    ff_sb_addf(sb, "extent_count = %llu\n\n",
               (unsigned long long)lv->segs[0].len);
    add_mirror_raid_seg(sb, lv, first_write);
    ff_sb_add(sb, "}\n");
    return;
  }
  add_striped_segs(sb, lv->segs, lv->nsegs, tm);
}

/* rimage_N of raid LV top under --raidintegrity, once layered
 * (integrity.c _integrity_text_export): over rimage_N_iorig, its
 * metadata on rimage_N_imeta; recalculate = 1 in the write that adds it. */
static void
add_integrity_image(struct ff_sb *sb, const struct ff_vg *vg,
                    const struct ff_lv *top, const struct ff_lv *img,
                    const struct ff_text_meta *tm, const char *tags,
                    int recalc)
{
  uint32_t i = (uint32_t)(img - top->subs) / 2;

  add_head(sb, img, img->name, tm, tags, 0, 0, 1);
  ff_sb_addf(sb,
             "segment1 {\nstart_extent = 0\nextent_count = %llu\n\ntype = "
             "\"integrity\"\norigin = \"%s\"\ndata_sectors = %llu\nmode = "
             "\"%c\"\ntag_size = 4\nblock_size = 512\ninternal_hash = "
             "\"crc32c\"\nmeta_dev = \"%s\"\n%s}\n}\n",
             (unsigned long long)img->extents,
             top->subs[3 * top->images + i].name,
             (unsigned long long)(img->extents * vg->extent_size / FF_SECTOR),
             top->integrity, top->subs[2 * top->images + i].name,
             recalc ? "recalculate = 1\n" : "");
}

/* The one virtual segment of a pool, thin LV or snapshotN: its head. */
static void
add_virtual_seg(struct ff_sb *sb, uint64_t extents, const char *type)
{
  ff_sb_addf(sb,
             "segment1 {\nstart_extent = 0\nextent_count = %llu\n\ntype = "
             "\"%s\"\n",
             (unsigned long long)extents, type);
}

/* Thin pool i of vg as it stands after the first nlvs LVs: its
 * transaction id counts its thin LVs so far and the deletes of those
 * removed; msg: the thin LV whose create message is still queued (write 1
 * of that thin's lvcreate); del: the one whose delete message is (write
 * 1 of its lvremove). */
static void
add_thin_pool(struct ff_sb *sb, const struct ff_vg *vg, uint32_t i,
              uint32_t nlvs, const struct ff_text_meta *tm, const char *tags,
              const struct ff_lv *msg, const struct ff_lv *del)
{
  static const char *const dnames[] = {"passdown", "nopassdown", "ignore"};
  const struct ff_lv *lv = &vg->lvs[i];
  uint64_t tid = 0;

  for (uint32_t l = i + 1; l < nlvs; l++)
    if (vg->lvs[l].kind == FF_LVK_THIN && vg->lvs[l].link == i)
      tid += vg->lvs[l].f.removed ? 2 : 1;
  add_head(sb, lv, lv->name, tm, tags, 1, 0, 1);
  add_virtual_seg(sb, lv->extents, "thin-pool");
  ff_sb_addf(sb, "metadata = \"%s\"\npool = \"%s\"\n",
             lv->subs[lv->new_spare].name, lv->subs[lv->new_spare + 1].name);
  ff_sb_addf(sb, "transaction_id = %llu\nchunk_size = %u\n",
             (unsigned long long)tid, lv->chunk);
  ff_sb_addf(sb, "discards = \"%s\"\n", dnames[lv->discards % 3]);
  if (lv->zero)
    ff_sb_add(sb, "zero_new_blocks = 1\n");
  if (msg)
    ff_sb_addf(sb, "\nmessage1 {\ncreate = \"%s\"\n}\n", msg->name);
  if (del)
    ff_sb_addf(sb, "\nmessage1 {\ndelete = %u\n}\n", del->device_id);
  ff_sb_add(sb, "}\n}\n");
}

static void
add_thin(struct ff_sb *sb, const struct ff_vg *vg, const struct ff_lv *lv,
         const struct ff_text_meta *tm, const char *tags)
{
  add_head(sb, lv, lv->name, tm, tags, 1, 0, 1);
  add_virtual_seg(sb, lv->extents, "thin");
  ff_sb_addf(sb, "thin_pool = \"%s\"\ntransaction_id = %llu\n",
             vg->lvs[lv->link].name, (unsigned long long)lv->transaction_id);
  ff_sb_addf(sb, "device_id = %u\n", lv->device_id);
  if (lv->ext_origin)
    ff_sb_addf(sb, "external_origin = \"%s\"\n",
               vg->lvs[lv->ext_origin - 1].name);
  /* (an origin removed since: detach_pool_lv made it a thin of its own) */
  if (lv->thin_origin && !vg->lvs[lv->thin_origin - 1].f.removed)
    ff_sb_addf(sb, "origin = \"%s\"\n", vg->lvs[lv->thin_origin - 1].name);
  ff_sb_add(sb, "}\n}\n");
}

/* snapshotN over COW LV cow: VISIBLE in its status, yet among the
 * hidden LVs (lvm's lv_is_visible() is false for a snapshot). */
static void
add_snapshot(struct ff_sb *sb, const struct ff_vg *vg, const struct ff_lv *cow,
             const struct ff_text_meta *tm)
{
  const struct ff_lv *sn = &cow->subs[0];

  add_head(sb, sn, sn->name, tm, NULL, 1, 0, 1);
  add_virtual_seg(sb, sn->extents, "snapshot");
  ff_sb_addf(sb, "chunk_size = %u\norigin = \"%s\"\ncow_store = \"%s\"\n",
             cow->chunk, vg->lvs[cow->link].name, cow->name);
  ff_sb_add(sb, "}\n}\n");
}

/* Whether cache pool or cache LV lv is attached at write seqno. */
static int
attached(const struct ff_lv *lv, uint32_t seqno)
{
  return lv->attach_seq && seqno >= lv->attach_seq;
}

/* lv's name at write seqno (a cache pool's parts are renamed when it
 * caches an LV) */
static const char *
name_at(const struct ff_lv *lv, int att)
{
  return lv->oldname && !att ? lv->oldname : lv->name;
}

/* Cache pool lv (cache_segtype/cache.c _cache_pool_text_export): once it
 * caches LV user, hidden, with the metadata format and user's mode and
 * policy; before, visible, with the mode and policy it was made with. */
static void
add_cache_pool(struct ff_sb *sb, const struct ff_lv *lv,
               const struct ff_lv *user, int att,
               const struct ff_text_meta *tm, const char *tags)
{
  static const char *const modes[] = {"", "writethrough", "writeback",
                                      "passthrough"};
  static const char *const policies[] = {"", "smq", "mq"};
  const struct ff_lv *meta = &lv->subs[lv->new_spare];
  const struct ff_lv *data = &lv->subs[lv->new_spare + 1];
  unsigned mode = att ? user->cache_mode : lv->cache_mode;
  unsigned policy = att ? user->cache_policy : lv->cache_policy;

  add_head(sb, lv, name_at(lv, att), tm, tags, !att, 0, 1);
  add_virtual_seg(sb, lv->extents,
                  att ? "cache-pool+METADATA_FORMAT" : "cache-pool");
  ff_sb_addf(sb, "data = \"%s\"\nmetadata = \"%s\"\n", name_at(data, att),
             name_at(meta, att));
  if (att)
    ff_sb_add(sb, "metadata_format = 2\n");
  ff_sb_addf(sb, "chunk_size = %u\n", lv->chunk);
  if (mode)
    ff_sb_addf(sb, "cache_mode = \"%s\"\n", modes[mode % 4]);
  if (policy)
    ff_sb_addf(sb, "policy = \"%s\"\n", policies[policy % 3]);
  if (lv->policy_settings)
    ff_sb_addf(sb, "policy_settings {\n%s}\n", lv->policy_settings);
  ff_sb_add(sb, "}\n}\n");
}

/* A cache LV: before the write that attaches its pool, the linear LV it
 * was (its segments are LV_corig's now). */
static void
add_cache(struct ff_sb *sb, const struct ff_vg *vg, const struct ff_lv *lv,
          int att, const struct ff_text_meta *tm, const char *tags)
{
  const struct ff_lv *co = &lv->subs[0];

  if (!att) {
    add_head(sb, lv, lv->name, tm, tags, 1, 0, co->nsegs);
    add_striped_segs(sb, co->segs, co->nsegs, tm);
    return;
  }
  add_head(sb, lv, lv->name, tm, tags, 1, 0, 1);
  if (lv->kind == FF_LVK_WRITECACHE) {
    /* writecache.c _writecache_text_export (lvm's default block size for
     * an LV with no file system: 4096) */
    add_virtual_seg(sb, lv->extents, "writecache");
    ff_sb_addf(sb,
               "writecache = \"%s\"\norigin = \"%s\"\n"
               "writecache_block_size = %u\n%s}\n}\n",
               vg->lvs[lv->link].name, co->name, lv->wc_block,
               lv->wc_text ? lv->wc_text : "");
    return;
  }
  if (lv->cvol_meta) {
    /* cache.c _cache_text_export of a cache over a cachevol: the mode,
     * policy and the split of the cachevol with the LV */
    static const char *const modes[] = {"", "writethrough", "writeback",
                                        "passthrough"};
    static const char *const policies[] = {"", "smq", "mq"};
    uint64_t size = vg->lvs[lv->link].extents * vg->extent_size / 512;

    add_virtual_seg(sb, lv->extents, "cache+CACHE_USES_CACHEVOL");
    ff_sb_addf(sb,
               "cache_pool = \"%s\"\norigin = \"%s\"\nmetadata_format = 2\n"
               "chunk_size = %u\ncache_mode = \"%s\"\npolicy = \"%s\"\n"
               "metadata_start = 0\nmetadata_len = %llu\n"
               "data_start = %llu\ndata_len = %llu\n}\n}\n",
               vg->lvs[lv->link].name, co->name, lv->chunk,
               modes[lv->cache_mode % 4], policies[lv->cache_policy % 3],
               (unsigned long long)lv->cvol_meta,
               (unsigned long long)lv->cvol_meta,
               (unsigned long long)(size - lv->cvol_meta));
    return;
  }
  add_virtual_seg(sb, lv->extents, "cache");
  ff_sb_addf(sb, "cache_pool = \"%s\"\norigin = \"%s\"\n}\n}\n",
             vg->lvs[lv->link].name, co->name);
}

/* The hidden LVs start with the cache pools attached so far.  Each
 * command reads
 * the LVs in the order of the text before it (visible, then hidden), so
 * a pool hidden by the write that attaches it comes before the LVs
 * hidden earlier: the last attached first. */
static void
add_attached_pools(struct ff_sb *sb, const struct ff_vg *vg, uint32_t nlvs,
                   uint32_t seqno, const struct ff_text_meta *meta)
{
  for (uint32_t at = UINT32_MAX, next; at; at = next) {
    next = 0;
    for (uint32_t i = 0; i < nlvs; i++) {
      const struct ff_lv *p = &vg->lvs[i];

      if ((p->kind != FF_LVK_CACHE_POOL && p->kind != FF_LVK_CACHEVOL) ||
          !attached(p, seqno))
        continue;
      if (p->attach_seq == at && p->kind == FF_LVK_CACHEVOL) {
        /* a writecache's cachevol: LV_cvol, hidden, CACHE_VOL */
        add_head(sb, p, p->name, meta, meta->lv_tags ? meta->lv_tags[i] : NULL,
                 0, 0, p->nsegs);
        add_striped_segs(sb, p->segs, p->nsegs, meta);
      } else if (p->attach_seq == at)
        add_cache_pool(sb, p, &vg->lvs[p->link], 1, meta,
                       meta->lv_tags ? meta->lv_tags[i] : NULL);
      else if (p->attach_seq < at && p->attach_seq > next)
        next = p->attach_seq;
    }
  }
}

/* pvmove0 (the newest LV: after every other), each segment a mirror of
 * the extents being moved and their new place, none moved yet. */
static void
add_pvmove(struct ff_sb *sb, const struct ff_lv *pm,
           const struct ff_text_meta *tm)
{
  add_head(sb, pm, pm->name, tm, NULL, 0, 0, pm->nsegs);
  for (uint32_t s = 0; s < pm->nsegs; s++) {
    const struct ff_seg *sg = &pm->segs[s];

    ff_sb_addf(sb,
               "segment%u {\nstart_extent = %llu\nextent_count = %llu\n\n"
               "type = \"mirror\"\nmirror_count = 2\nextents_moved = 0\n"
               "region_size = %llu\n\nmirrors = [\n\"pv%u\", %llu,\n"
               "\"pv%u\", %llu\n]\n}\n",
               s + 1, (unsigned long long)sg->le, (unsigned long long)sg->len,
               (unsigned long long)pm->region_size, sg->areas[0].pv,
               (unsigned long long)sg->areas[0].pe, sg->areas[1].pv,
               (unsigned long long)sg->areas[1].pe);
  }
  ff_sb_add(sb, "}\n");
}

/* A cache LV made by lvcreate --type cache --cachepool (two writes, over
 * a cache pool), not by an lvconvert nor over a cachevol. */
static int
made_with_pool(const struct ff_vg *vg, const struct ff_lv *lv)
{
  return lv->writes == 2 && vg->lvs[lv->link].kind == FF_LVK_CACHE_POOL;
}

char *
ff_lvmtext_build(const struct ff_vg *vg, uint32_t nlvs, uint32_t seqno,
                 const struct ff_text_meta *meta, uint32_t *size)
{
  struct ff_sb sb = FF_SB_INIT;
  char when[32];
  size_t len;
  char *text, *shrunk;

  ff_sb_addf(&sb, "%s {\n", vg->name);
  add_uuid_line(&sb, vg->uuid);
  ff_sb_addf(&sb, "seqno = %u\n", seqno);
  ff_sb_add(&sb, "format = \"lvm2\"\n");
  /* export.c _print_vg: a VG with a system ID is WRITE_LOCKED */
  ff_sb_addf(&sb, "status = [%s\"READ\"%s]\nflags = [%s]\n",
             vg->unresizeable ? "" : "\"RESIZEABLE\", ",
             vg->system_id ? "" : ", \"WRITE\"",
             vg->system_id ? "\"WRITE_LOCKED\"" : "");
  if (meta->vg_tags)
    ff_sb_addf(&sb, "tags = %s\n", meta->vg_tags);
  if (vg->system_id) {
    ff_sb_add(&sb, "system_id = \"");
    ff_lvmtext_escape(&sb, vg->system_id);
    ff_sb_add(&sb, "\"\n");
  }
  ff_sb_addf(&sb, "extent_size = %llu\n",
             (unsigned long long)(vg->extent_size / FF_SECTOR));
  ff_sb_addf(&sb, "max_lv = %u\nmax_pv = %u\n", vg->max_lv, vg->max_pv);
  /* the default policy (normal) is not written */
  if (vg->alloc != FF_ALLOC_INHERIT && vg->alloc != FF_ALLOC_NORMAL)
    ff_sb_addf(&sb, "\nallocation_policy = \"%s\"\n",
               ff_fb_policy_names[vg->alloc]);
  ff_sb_addf(&sb, "metadata_copies = %u\n\n", vg->mda_copies);
  add_pvs(&sb, vg, meta->pv_tags);
  ff_sb_add(&sb, "\n");
  if (nlvs) {
    const struct ff_lv *last = &vg->lvs[nlvs - 1];
    int fw = meta->first_write;

    ff_sb_add(&sb, "logical_volumes {\n");
    /* _print_lvs: the visible LVs in list order, then the hidden ones.
     * The LV of an lvcreate still under way (cur) may stand as its
     * earlier writes have it. */
    int cur = meta->phase >= 0 ? (int)nlvs - 1 : -1;
    int ph = meta->phase;
    int done = cur < 0 || ph + 1 >= last->writes;
    const struct ff_lv *msg =
      cur >= 0 && ph == 0 && last->kind == FF_LVK_THIN ? last : NULL;

    for (uint32_t i = 0; i < nlvs; i++) {
      const struct ff_lv *lv = &vg->lvs[i];
      const char *tags = meta->lv_tags ? meta->lv_tags[i] : NULL;

      if ((lv->kind == FF_LVK_THIN_POOL || lv->kind == FF_LVK_CACHE_POOL) &&
          (int)i == cur && !done) {
        const struct ff_lv *tm = &lv->subs[lv->new_spare];

        if (lv->new_spare && ph == 0) {
          /* write 1: only the spare, under lvm's generated name */
          const struct ff_lv *sp = &lv->subs[0];
          size_t n = strlen(sp->name) - strlen("_pmspare");
          char *nm = strndup(sp->name, n);

          add_head(&sb, sp, nm ? nm : sp->name, meta, NULL, 1, 0, sp->nsegs);
          add_striped_segs(&sb, sp->segs, sp->nsegs, meta);
          free(nm);
        } else {
          /* the pool LV over the metadata area, to be wiped */
          add_head(&sb, lv, name_at(lv, 0), meta, tags, 1, 0, tm->nsegs);
          add_striped_segs(&sb, tm->segs, tm->nsegs, meta);
        }
      } else if (lv->f.removed || lv->kind == FF_LVK_PVMOVE)
        continue; /* (pvmove0: after every LV, below) */
      else if (lv->kind == FF_LVK_THIN_POOL)
        add_thin_pool(
          &sb, vg, i, nlvs, meta, tags, msg && msg->link == i ? msg : NULL,
          meta->deleted && meta->deleted->link == i ? meta->deleted : NULL);
      else if (lv->kind == FF_LVK_THIN)
        add_thin(&sb, vg, lv, meta, tags);
      else if (lv->kind == FF_LVK_CACHE_POOL) {
        if (!attached(lv, seqno))
          add_cache_pool(&sb, lv, NULL, 0, meta, tags);
      } else if (lv->kind == FF_LVK_CACHE || lv->kind == FF_LVK_WRITECACHE)
        add_cache(&sb, vg, lv, attached(lv, seqno), meta, tags);
      else if (lv->kind == FF_LVK_CACHEVOL) {
        /* before the write that makes it a cachevol: the LV it was */
        if (!attached(lv, seqno)) {
          add_head(&sb, lv, name_at(lv, 0), meta, tags, 1, 0, lv->nsegs);
          add_striped_segs(&sb, lv->segs, lv->nsegs, meta);
        }
      } else if (lv->kind == FF_LVK_SNAPSHOT) {
        /* the COW: VISIBLE until write 2 makes it the snapshot's */
        add_head(&sb, lv, lv->name, meta, tags, (int)i == cur && ph == 0, 0,
                 lv->nsegs);
        add_striped_segs(&sb, lv->segs, lv->nsegs, meta);
      } else
        add_lv(&sb, lv, meta, tags, 1,
               fw && i + 1 == nlvs && last->kind == FF_LVK_RAID,
               fw && i + 1 == nlvs);
    }
    /* --raidintegrity: the raid LV under way shows its _imeta LVs as
     * they are made, visible (writes 3 and on) */
    int ivis =
      cur >= 0 && last->integrity && ph >= 2 && ph <= (int)last->images + 1;

    for (int pass = fw || ivis ? 0 : 1; pass < 2; pass++) {
      if (pass == 1)
        add_attached_pools(&sb, vg, nlvs, seqno, meta);
      for (uint32_t i = 0; i < nlvs; i++) {
        const struct ff_lv *top = &vg->lvs[i];
        int building = (int)i == cur && !done;

        if (top->f.removed || top->kind == FF_LVK_PVMOVE)
          continue;
        if (top->kind == FF_LVK_SNAPSHOT) {
          if (pass == 1 && !building)
            add_snapshot(&sb, vg, top, meta);
          continue;
        }
        if (top->kind == FF_LVK_THIN_POOL || top->kind == FF_LVK_CACHE_POOL) {
          int att = attached(top, seqno);

          for (uint32_t u = 0; pass == 1 && u < top->nsubs; u++) {
            const struct ff_lv *sub = &top->subs[u];

            /* under way: write 1 shows the spare as lvolN (above); the
             * metadata-only write has the spare, hidden, and no more */
            if (building && (sub->role != FF_SUB_PMSPARE || ph == 0))
              continue;
            add_head(&sb, sub, name_at(sub, att), meta, NULL, 0, 0,
                     sub->nsegs);
            add_striped_segs(&sb, sub->segs, sub->nsegs, meta);
          }
          continue;
        }
        if (top->kind == FF_LVK_CACHE || top->kind == FF_LVK_WRITECACHE) {
          /* lvcreate --type cache --cachepool made LV_corig with the LV;
           * an lvconvert's, and lvcreate --cachevol's (and LV_wcorig),
           * come after every LV (below) */
          if (pass == 1 && made_with_pool(vg, top) && attached(top, seqno))
            add_lv(&sb, &top->subs[0], meta, NULL, 0, 0, 0);
          continue;
        }
        /* --raidintegrity: which of its writes the texts are at (the
         * raid LV's two, one per _imeta, the layers, the flag cleared) */
        int stage = building ? ph : top->writes - 1;
        int layered = top->integrity && stage >= (int)top->images + 2;

        for (uint32_t u = 0; u < top->nsubs; u++) {
          const struct ff_lv *sub = &top->subs[u];
          const char *ct = meta->lv_ctags ? meta->lv_ctags[i] : NULL;
          /* write 1: the rmetas (raid) or the log (mirror) are visible */
          int vis = fw && i + 1 == nlvs &&
                    (sub->role == FF_SUB_RMETA || sub->role == FF_SUB_MLOG);

          if ((sub->role == FF_SUB_IMETA &&
               stage < (int)(u - 2 * top->images) + 2) ||
              (sub->role == FF_SUB_IORIG && !layered))
            continue; /* not made yet */
          if (sub->role == FF_SUB_IMETA && !layered)
            vis = 1;
          if (vis != !pass)
            continue;
          if (sub->role == FF_SUB_RIMAGE && layered)
            add_integrity_image(&sb, vg, top, sub, meta, NULL,
                                stage == (int)top->images + 2);
          else
            add_lv(&sb, sub, meta,
                   sub->role == FF_SUB_RMETA ||
                       (vis && sub->role == FF_SUB_MLOG)
                     ? ct
                     : NULL,
                   vis, 0, 0);
        }
      }
    }
    /* the LV_corig of each lvconvert --type cache so far, in its order */
    for (uint32_t at = 0, next; at != UINT32_MAX; at = next) {
      next = UINT32_MAX;
      for (uint32_t i = 0; i < nlvs; i++) {
        const struct ff_lv *top = &vg->lvs[i];

        if ((top->kind != FF_LVK_CACHE && top->kind != FF_LVK_WRITECACHE) ||
            made_with_pool(vg, top) || !attached(top, seqno))
          continue;
        if (top->attach_seq == at)
          add_lv(&sb, &top->subs[0], meta, NULL, 0, 0, 0);
        else if (top->attach_seq > at && top->attach_seq < next)
          next = top->attach_seq;
      }
    }
    if (meta->pvmove)
      add_pvmove(&sb, meta->pvmove, meta);
    ff_sb_add(&sb, "}\n");
  }
  ff_sb_add(&sb, "\n");
  /* export.c _print_historical_lvs (raw: no time comments) */
  if (meta->nhist) {
    ff_sb_add(&sb, "historical_logical_volumes {\n");
    for (uint32_t h = 0; h < meta->nhist; h++) {
      const struct ff_hist *hl = &meta->hist[h];

      ff_sb_addf(&sb, "\n%s {\n", hl->name);
      add_uuid_line(&sb, hl->uuid);
      ff_sb_addf(&sb,
                 "creation_time = %lld\nremoval_time = %lld\ndescendants = "
                 "[\"%s\"]\n}\n",
                 (long long)hl->ctime, (long long)hl->rtime, hl->descendant);
    }
    ff_sb_add(&sb, "}\n");
  }
  ff_sb_add(&sb, "}\n");

  ff_ctime_utc(meta->time, when, sizeof when);
  ff_sb_addf(&sb, "# Generated by LVM2 version %s: %s\n\n", meta->lvm_version,
             when);
  ff_sb_add(&sb, "contents = \"Text Format Volume Group\"\nversion = 1\n\n");
  ff_sb_add(&sb, "description = \"");
  ff_lvmtext_escape(&sb, meta->description);
  ff_sb_add(&sb, "\"\n\ncreation_host = \"");
  ff_lvmtext_escape(&sb, meta->host);
  ff_sb_addf(&sb, "\"\t# %s\n", meta->uname);
  if (meta->host_system_id) {
    ff_sb_add(&sb, "creation_host_system_id = \"");
    ff_lvmtext_escape(&sb, meta->host_system_id);
    ff_sb_add(&sb, "\"\n");
  }
  ff_sb_addf(&sb, "creation_time = %lld\t# %s\n\n", (long long)meta->time,
             when);

  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    ff_error("out of memory building the metadata of VG %s", vg->name);
    return NULL;
  }
  text = ff_sb_detach(&sb, &len);
  *size = (uint32_t)len + 1; /* the NUL is part of the copy */
  /* every write of every VG stays in memory: no growth slack (up to half
   * the buffer) */
  shrunk = realloc(text, len + 1);
  return shrunk ? shrunk : text;
}
