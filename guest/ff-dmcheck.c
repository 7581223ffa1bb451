/* ff-dmcheck: verify device-mapper tables against `fusefarm manifest`.
 *
 *   ff-dmcheck [--tables FILE [--dmdevs FILE]] [--devmap FILE] MANIFEST.json
 *
 * For every LV of every undamaged VG in the manifest, the dm device
 * "VG-LV" (each '-' inside a name doubled, as lvm names them) must exist
 * and have one target per LV segment, in order:
 *   linear:  "MAJ:MIN OFFSET"
 *   striped: "STRIPES CHUNK MAJ:MIN OFFSET ..." (areas in manifest order)
 * where OFFSET = (pe_start + start_pe * extent_size) / 512 on the PV the
 * manifest names, and CHUNK = stripe_size / 512.  A mirror or raid LV
 * (the manifest gives its dm_type) has one target naming its sub-LVs,
 * which are LVs of the manifest themselves, by their dm MAJ:MIN:
 *   mirror:  "core 1 R | disk 2 LOG R" N IMAGE 0 ... "1 handle_errors"
 *   raid:    DM_TYPE #PARAMS CHUNK region_size R [raid10_copies C] N
 *            META IMAGE ...
 * with R = region_size / 512.  Thin pools, thin LVs and old-style
 * snapshots (docs/research/thin-snapshot.md, section 5):
 *   pool:    "VG-POOL-tpool" holds "thin-pool TMETA TDATA CHUNK 0 F
 *            [skip_block_zeroing] [ignore_discard] [no_discard_passdown]"
 *            (TMETA, TDATA: the _tmeta and _tdata LVs' devices) and the
 *            public "VG-POOL" is "linear TPOOL 0" over it; a pool with no
 *            thin LV may carry the thin-pool table on "VG-POOL" itself;
 *   thin:    "thin TPOOL DEVICE_ID" over the pool's virtual size;
 *   origin:  "VG-LV" is "snapshot-origin REAL", its segments are checked
 *            on "VG-LV-real"; an external origin of thin LVs likewise,
 *            "VG-LV" being "linear REAL 0" and the thin LV "thin TPOOL
 *            DEVICE_ID REAL";
 *   snapshot "VG-SNAP" is "snapshot REAL COW P CHUNK", the COW's
 *            segments are checked on "VG-SNAP-cow";
 * the pool metadata spare and the hidden snapshotN LV have no dm device.
 * Cache pools and cache LVs (docs/research/cache.md):
 *   cache:   "cache CMETA CDATA CORIG CHUNK 2 metadata2 MODE POLICY 0"
 *            (CMETA, CDATA: the pool's _cmeta and _cdata LVs' devices,
 *            CORIG the LV's _corig, which has its segments);
 *   a cache pool has no dm device of its own.
 *   over a cachevol (lvconvert --type cache --cachevol): CMETA, CDATA
 *            are VG-CVOL-cmeta and -cdata, "linear CVOL 0" and "linear
 *            CVOL META", and POLICY is mq (lvm's fallback, check_cache_cvol);
 * Raid images under --raidintegrity: "integrity IORIG 0 4 MODE N
 *            OPTIONS" (IORIG: the image's _iorig LV with its extents;
 *            among the options meta_device: its _imeta LV, both linear,
 *            and internal_hash:crc32c; check_integrity);
 * Writecache LVs (lvconvert --type writecache --cachevol):
 *   writecache: "writecache s ORIGIN CVOL BLOCK_SIZE N ARGS" (ORIGIN:
 *            LV_wcorig with the LV's segments, CVOL: LV_cvol, linear on
 *            its PVs; ARGS: --cachesettings, the manifest's settings).
 *
 * Where the tables come from:
 *   default      libdevmapper: DM_DEVICE_LIST, then DM_DEVICE_TABLE each;
 *   --tables F   text in `dmsetup table` format ("NAME: START LEN TYPE
 *                PARAMS" per line), so the check runs on a host without dm;
 *   --dmdevs F   with --tables: lines "MAJ:MIN DM-NAME" numbering the dm
 *                devices (what mirror and raid tables refer to).
 * How MAJ:MIN becomes a PV:
 *   default      /sys/dev/block/MAJ:MIN names the disk; its LVM2 label
 *                (sectors 0-3, "LABELONE") gives the PV UUID.  No udev, no
 *                serial numbers: what the kernel sees is what is checked.
 *   --devmap F   lines "MAJ:MIN DEVICE" with farm device names.
 * PVs are compared by PV UUID, so a PV reached over another path (a
 * duplicate, an nbd device) counts as the same PV.
 *
 * Output: "OK vg/lv: ..." per LV that matches, "MISMATCH vg/lv: ..." per
 * LV that does not or is missing, "SKIP vg: ..." per damaged VG, "EXTRA
 * name" per dm device that is no LV of the manifest (not a failure), and a
 * summary line.  Exit 0 when every LV matched, 1 on any mismatch, 2 when
 * the check could not run.
 *
 * Single-threaded.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <jansson.h>
#include <libdevmapper.h>

/* One dm target: a line of `dmsetup table`. */
struct target {
  char *dev;      /* dm device name */
  uint64_t start; /* sectors */
  uint64_t len;   /* sectors */
  char *type;     /* "linear", "striped", ... */
  char *params;
  bool used; /* matched to an LV */
};

struct targets {
  struct target *v;
  size_t n, cap;
};

/* MAJ:MIN -> PV UUID (32 characters, no dashes) or "" when not a PV. */
struct devmap_entry {
  char majmin[32];
  char uuid[33];
  char name[256]; /* kernel or farm device name, for messages */
};

static struct {
  struct devmap_entry *v;
  size_t n, cap;
  bool from_file; /* --devmap: never fall back to sysfs */
} devmap;

/* dm device name -> its own MAJ:MIN (mirror and raid tables name their
 * sub-LVs by number). */
static struct {
  struct dmdev {
    char *name;
    char majmin[32];
  } * v;
  size_t n, cap;
} dmdevs;

static json_t *manifest;

static void
err(const char *fmt, ...)
{
  va_list ap;

  fputs("ff-dmcheck: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static void *
xrealloc(void *p, size_t n)
{
  p = realloc(p, n);
  if (p == NULL) {
    err("out of memory");
    exit(2);
  }
  return p;
}

static char *
xstrdup(const char *s)
{
  char *d = strdup(s);

  if (d == NULL) {
    err("out of memory");
    exit(2);
  }
  return d;
}

static void
undash(const char *in, char out[33])
{
  size_t j = 0;

  for (; *in && j < 32; in++)
    if (*in != '-')
      out[j++] = *in;
  out[j] = '\0';
}

static void
dmdev_add(const char *name, const char *majmin)
{
  if (dmdevs.n == dmdevs.cap) {
    dmdevs.cap = dmdevs.cap ? 2 * dmdevs.cap : 64;
    dmdevs.v = xrealloc(dmdevs.v, dmdevs.cap * sizeof *dmdevs.v);
  }
  dmdevs.v[dmdevs.n].name = xstrdup(name);
  snprintf(dmdevs.v[dmdevs.n].majmin, sizeof dmdevs.v[dmdevs.n].majmin, "%s",
           majmin);
  dmdevs.n++;
}

/* The MAJ:MIN of dm device name, or NULL. */
static const char *
dmdev_majmin(const char *name)
{
  for (size_t i = 0; i < dmdevs.n; i++)
    if (strcmp(dmdevs.v[i].name, name) == 0)
      return dmdevs.v[i].majmin;
  return NULL;
}

static void
targets_add(struct targets *t, const char *dev, uint64_t start, uint64_t len,
            const char *type, const char *params)
{
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->v = xrealloc(t->v, t->cap * sizeof *t->v);
  }
  t->v[t->n++] = (struct target){
    .dev = xstrdup(dev),
    .start = start,
    .len = len,
    .type = xstrdup(type),
    .params = xstrdup(params),
  };
}

/* Tables from libdevmapper. */
static int
load_tables_dm(struct targets *t)
{
  struct dm_task *list = dm_task_create(DM_DEVICE_LIST);
  struct dm_names *names;
  int r = -1;

  if (list == NULL || !dm_task_run(list)) {
    err("dm list: cannot list device-mapper devices (is dm-mod loaded?)");
    goto out;
  }
  names = dm_task_get_names(list);
  if (names == NULL) {
    err("dm list: no names returned");
    goto out;
  }
  if (names->dev == 0) { /* no devices */
    r = 0;
    goto out;
  }
  for (;;) {
    struct dm_task *tab = dm_task_create(DM_DEVICE_TABLE);
    void *next = NULL;
    char mm[32];

    snprintf(mm, sizeof mm, "%u:%u", (unsigned)major(names->dev),
             (unsigned)minor(names->dev));
    dmdev_add(names->name, mm);

    if (tab == NULL || !dm_task_set_name(tab, names->name) ||
        !dm_task_run(tab)) {
      err("dm table %s: failed", names->name);
      if (tab)
        dm_task_destroy(tab);
      goto out;
    }
    do {
      uint64_t start, len;
      char *type = NULL, *params = NULL;

      next = dm_get_next_target(tab, next, &start, &len, &type, &params);
      if (type)
        targets_add(t, names->name, start, len, type, params ? params : "");
    } while (next);
    dm_task_destroy(tab);
    if (names->next == 0)
      break;
    names = (struct dm_names *)((char *)names + names->next);
  }
  r = 0;
out:
  if (list)
    dm_task_destroy(list);
  return r;
}

/* Tables from `dmsetup table` text. */
static int
load_tables_file(struct targets *t, const char *path)
{
  FILE *f = fopen(path, "r");
  char *line = NULL;
  size_t cap = 0;
  unsigned lineno = 0;
  int r = 0;

  if (f == NULL) {
    err("open %s: %m", path);
    return -1;
  }
  while (getline(&line, &cap, f) != -1) {
    char *colon, *p, *end, type[64];
    uint64_t start, len;
    int n = 0;

    lineno++;
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == '\0' || strcmp(line, "No devices found") == 0)
      continue;
    /* dm names may contain spaces but not ": " followed by a digit */
    colon = strstr(line, ": ");
    if (colon == NULL) {
      err("%s:%u: expected \"NAME: START LEN TYPE PARAMS\"", path, lineno);
      r = -1;
      break;
    }
    *colon = '\0';
    p = colon + 2;
    if (sscanf(p, "%" SCNu64 " %" SCNu64 " %63s %n", &start, &len, type, &n) !=
        3) {
      err("%s:%u: expected \"NAME: START LEN TYPE PARAMS\"", path, lineno);
      r = -1;
      break;
    }
    end = p + n;
    targets_add(t, line, start, len, type, end);
  }
  free(line);
  fclose(f);
  return r;
}

static struct devmap_entry *
devmap_add(const char *majmin)
{
  struct devmap_entry *e;

  if (devmap.n == devmap.cap) {
    devmap.cap = devmap.cap ? 2 * devmap.cap : 64;
    devmap.v = xrealloc(devmap.v, devmap.cap * sizeof *devmap.v);
  }
  e = &devmap.v[devmap.n++];
  memset(e, 0, sizeof *e);
  snprintf(e->majmin, sizeof e->majmin, "%s", majmin);
  return e;
}

static json_t *
manifest_device(const char *name)
{
  json_t *devs = json_object_get(manifest, "devices"), *d;
  size_t i;

  json_array_foreach(devs, i, d)
  {
    const char *n = json_string_value(json_object_get(d, "name"));
    if (n && strcmp(n, name) == 0)
      return d;
  }
  return NULL;
}

/* Read path's lines "MAJ:MIN NAME" ('#' comments and blank lines
 * skipped), calling add for each; add returns an error message or NULL.
 * 0, or -1 after saying which line is wrong. */
static int
load_pairs(const char *path, const char *form,
           const char *(*add)(const char *majmin, const char *name))
{
  FILE *f = fopen(path, "r");
  char mm[32], name[256];
  unsigned lineno = 0;
  char *line = NULL;
  size_t cap = 0;
  int r = 0;

  if (f == NULL) {
    err("open %s: %m", path);
    return -1;
  }
  while (getline(&line, &cap, f) != -1) {
    const char *why;

    lineno++;
    if (line[0] == '#' || line[strspn(line, " \t\n")] == '\0')
      continue;
    if (sscanf(line, "%31s %255s", mm, name) != 2 || !strchr(mm, ':')) {
      err("%s:%u: expected \"%s\"", path, lineno, form);
      r = -1;
      break;
    }
    if ((why = add(mm, name)) != NULL) {
      err("%s:%u: %s %s", path, lineno, name, why);
      r = -1;
      break;
    }
  }
  free(line);
  fclose(f);
  return r;
}

/* --devmap: a farm device behind MAJ:MIN. */
static const char *
devmap_line(const char *majmin, const char *name)
{
  json_t *d = manifest_device(name);
  struct devmap_entry *e;
  const char *uuid;

  if (d == NULL)
    return "is no device of the manifest";
  e = devmap_add(majmin);
  snprintf(e->name, sizeof e->name, "%s", name);
  uuid = json_string_value(json_object_get(d, "pv_uuid"));
  if (uuid)
    undash(uuid, e->uuid);
  return NULL;
}

/* --dmdevs: the dm device name at MAJ:MIN. */
static const char *
dmdevs_line(const char *majmin, const char *name)
{
  dmdev_add(name, majmin);
  return NULL;
}

/* Read the LVM2 label of the disk behind MAJ:MIN. */
static void
probe_sysfs(struct devmap_entry *e)
{
  char link[128], target[512], path[600];
  unsigned char buf[2048];
  const char *base;
  ssize_t n;
  int fd;

  snprintf(link, sizeof link, "/sys/dev/block/%s", e->majmin);
  n = readlink(link, target, sizeof target - 1);
  if (n < 0) {
    snprintf(e->name, sizeof e->name, "%s(?)", e->majmin);
    return;
  }
  target[n] = '\0';
  base = strrchr(target, '/');
  base = base ? base + 1 : target;
  snprintf(e->name, sizeof e->name, "%.200s", base);
  snprintf(path, sizeof path, "/dev/%s", base);
  fd = open(path, O_RDONLY);
  if (fd < 0)
    return;
  n = pread(fd, buf, sizeof buf, 0);
  close(fd);
  for (int s = 0; s < 4 && (s + 1) * 512 <= n; s++) {
    const unsigned char *l = buf + s * 512;
    uint32_t off;

    if (memcmp(l, "LABELONE", 8) != 0 || memcmp(l + 24, "LVM2 001", 8) != 0)
      continue;
    off = (uint32_t)l[20] | (uint32_t)l[21] << 8 | (uint32_t)l[22] << 16 |
          (uint32_t)l[23] << 24;
    if (off + 32 > 512)
      continue;
    memcpy(e->uuid, l + off, 32);
    e->uuid[32] = '\0';
    return;
  }
}

static const struct devmap_entry *
resolve(const char *majmin)
{
  struct devmap_entry *e;

  for (size_t i = 0; i < devmap.n; i++)
    if (strcmp(devmap.v[i].majmin, majmin) == 0)
      return &devmap.v[i];
  e = devmap_add(majmin);
  if (devmap.from_file)
    snprintf(e->name, sizeof e->name, "%s(not in devmap)", majmin);
  else
    probe_sysfs(e);
  return e;
}

/* "VG-LV" with '-' doubled inside each name. */
static void
dm_name(const char *vg, const char *lv, char *out, size_t size)
{
  size_t j = 0;
  const char *parts[2] = {vg, lv};

  for (int k = 0; k < 2; k++) {
    if (k == 1 && j + 1 < size)
      out[j++] = '-';
    for (const char *p = parts[k]; *p && j + 2 < size; p++) {
      if (*p == '-')
        out[j++] = '-';
      out[j++] = *p;
    }
  }
  out[j] = '\0';
}

static json_t *
vg_pv(json_t *vg, const char *uuid)
{
  json_t *pvs = json_object_get(vg, "pvs"), *pv;
  size_t i;

  json_array_foreach(pvs, i, pv)
  {
    const char *u = json_string_value(json_object_get(pv, "uuid"));
    if (u && strcmp(u, uuid) == 0)
      return pv;
  }
  return NULL;
}

static bool check_devword(const char *devname, const char *w, const char *what,
                          char *why, size_t whysize);

/* Compare one area "MAJ:MIN OFFSET" with a manifest area (on a PV, or on
 * another LV: "lv", "start_le"); on a mismatch write why into WHY and
 * return false. */
static bool
check_area(json_t *vg, uint64_t extent, json_t *area, const char *majmin,
           uint64_t offset, char *why, size_t whysize)
{
  const char *uuid = json_string_value(json_object_get(area, "pv_uuid"));
  const char *want_dev = json_string_value(json_object_get(area, "device"));
  const char *over = json_string_value(json_object_get(area, "lv"));
  uint64_t start_pe = json_integer_value(json_object_get(area, "start_pe"));
  const struct devmap_entry *e;
  json_t *pv;
  uint64_t want_off;
  char u[33];

  if (over) {
    /* an LV over another LV (under an interrupted pvmove: pvmove0) */
    char dev[512];
    const char *vgname = json_string_value(json_object_get(vg, "name"));
    uint64_t le = json_integer_value(json_object_get(area, "start_le"));

    dm_name(vgname ? vgname : "?", over, dev, sizeof dev);
    if (!check_devword(dev, majmin, "the LV below", why, whysize))
      return false;
    if (offset != le * extent / 512) {
      snprintf(why, whysize,
               "on %.200s at sector %" PRIu64 ", expected sector %" PRIu64
               " (its extent %" PRIu64 ")",
               dev, offset, le * extent / 512, le);
      return false;
    }
    return true;
  }
  e = resolve(majmin);
  if (uuid == NULL || (pv = vg_pv(vg, uuid)) == NULL) {
    snprintf(why, whysize, "manifest area has no PV of the VG");
    return false;
  }
  undash(uuid, u);
  if (strcmp(e->uuid, u) != 0) {
    snprintf(why, whysize, "on %s (%s, PV %s), expected %s (PV %s)", e->name,
             majmin, e->uuid[0] ? e->uuid : "none", want_dev ? want_dev : "?",
             uuid);
    return false;
  }
  want_off = ((uint64_t)json_integer_value(json_object_get(pv, "pe_start")) +
              start_pe * extent) /
             512;
  if (offset != want_off) {
    snprintf(why, whysize,
             "on %s at sector %" PRIu64 ", expected sector %" PRIu64
             " (extent %" PRIu64 ")",
             want_dev ? want_dev : e->name, offset, want_off, start_pe);
    return false;
  }
  return true;
}

/* Split s into at most max whitespace-separated words (pointers into a
 * copy the caller frees).  Returns the count, or max + 1 when there are
 * more. */
static size_t
words(const char *s, char **copy, char **w, size_t max)
{
  size_t n = 0;
  char *save = NULL, *tok;

  *copy = xstrdup(s);
  for (tok = strtok_r(*copy, " \t", &save); tok;
       tok = strtok_r(NULL, " \t", &save)) {
    if (n == max)
      return max + 1;
    w[n++] = tok;
  }
  return n;
}

/* Does word w name the dm device of LV lvname of VG vgname (by MAJ:MIN)?
 * Else false with WHY. */
static bool
check_sublv(const char *vgname, const char *lvname, const char *w,
            const char *what, char *why, size_t whysize)
{
  char name[512];
  const char *mm;

  dm_name(vgname, lvname, name, sizeof name);
  mm = dmdev_majmin(name);
  if (mm == NULL) {
    snprintf(why, whysize, "%s %.128s: no dm device %.200s", what, lvname,
             name);
    return false;
  }
  if (strcmp(w, mm) != 0) {
    snprintf(why, whysize, "%s is %.32s, expected %s (%.200s)", what, w, mm,
             name);
    return false;
  }
  return true;
}

#define MAX_WORDS 256

/* A mirror LV: "core 1 R | disk 2 LOG R", the images, "1 handle_errors"
 * (lvm asks dmeventd-style error handling unless --monitor n; a mirror
 * the farm made is activated later than lvcreate, so never "nosync"). */
static bool
check_mirror(const char *vgname, json_t *lv, const struct target *t, char *why,
             size_t whysize)
{
  json_t *images = json_object_get(lv, "images");
  const char *log = json_string_value(json_object_get(lv, "log"));
  uint64_t region =
    json_integer_value(json_object_get(lv, "region_size")) / 512;
  char *copy, *w[MAX_WORDS], want[64];
  size_t n = words(t->params, &copy, w, MAX_WORDS), i = 0, nimg;
  bool ok = false;

  nimg = json_array_size(images);
  if (n < 2 || strcmp(w[0], log ? "disk" : "core") != 0 ||
      strcmp(w[1], log ? "2" : "1") != 0) {
    snprintf(why, whysize, "mirror log \"%s %s\", expected %s", n ? w[0] : "",
             n > 1 ? w[1] : "", log ? "disk 2 (a disk log)" : "core 1");
    goto out;
  }
  i = 2;
  if (n != (log ? 4 : 3) + 1 + 2 * nimg + 2) {
    snprintf(why, whysize, "mirror params \"%s\": %zu words, expected %zu",
             t->params, n, (log ? 4 : 3) + 1 + 2 * nimg + 2);
    goto out;
  }
  if (log && !check_sublv(vgname, log, w[i++], "log", why, whysize))
    goto out;
  snprintf(want, sizeof want, "%" PRIu64, region);
  if (strcmp(w[i++], want) != 0) {
    snprintf(why, whysize, "region size %s sectors, expected %s", w[i - 1],
             want);
    goto out;
  }
  snprintf(want, sizeof want, "%zu", nimg);
  if (strcmp(w[i++], want) != 0) {
    snprintf(why, whysize, "%s images, expected %s", w[i - 1], want);
    goto out;
  }
  for (size_t k = 0; k < nimg; k++, i += 2) {
    char what[32];

    snprintf(what, sizeof what, "image %zu", k);
    if (!check_sublv(vgname, json_string_value(json_array_get(images, k)),
                     w[i], what, why, whysize))
      goto out;
    if (strcmp(w[i + 1], "0") != 0) {
      snprintf(why, whysize, "image %zu at offset %s, expected 0", k,
               w[i + 1]);
      goto out;
    }
  }
  if (strcmp(w[i], "1") != 0 || strcmp(w[i + 1], "handle_errors") != 0) {
    snprintf(why, whysize, "features \"%s %s\", expected \"1 handle_errors\"",
             w[i], w[i + 1]);
    goto out;
  }
  ok = true;
out:
  free(copy);
  return ok;
}

/* A raid LV: "TYPE #PARAMS CHUNK [region_size R] [raid10_copies C] N
 * META IMAGE ...", TYPE the kernel's name (raid5_ls for lvm's raid5);
 * raid0 and raid0_meta have no region (the manifest's 0): libdm writes
 * no region_size, and raid0 "-" for each META. */
static bool
check_raid(const char *vgname, json_t *lv, const struct target *t, char *why,
           size_t whysize)
{
  const char *dm_type = json_string_value(json_object_get(lv, "dm_type"));
  json_t *images = json_object_get(lv, "images");
  json_t *metas = json_object_get(lv, "metas");
  uint64_t region =
    json_integer_value(json_object_get(lv, "region_size")) / 512;
  uint64_t chunk =
    json_integer_value(json_object_get(lv, "stripe_size")) / 512;
  uint64_t copies = json_integer_value(json_object_get(lv, "data_copies"));
  size_t nimg = json_array_size(images);
  char *copy, *w[MAX_WORDS], *end;
  size_t n = words(t->params, &copy, w, MAX_WORDS), i, np;
  bool ok = false, seen_region = false, seen_copies = false;

  if (n < 3 || dm_type == NULL || strcmp(w[0], dm_type) != 0) {
    snprintf(why, whysize, "raid type %s, expected %s", n ? w[0] : "(none)",
             dm_type ? dm_type : "?");
    goto out;
  }
  np = strtoul(w[1], &end, 10);
  if (*end || np < 1 || 2 + np + 1 + 2 * nimg != n) {
    snprintf(why, whysize,
             "raid params \"%s\": %zu words for %s parameters and %zu images",
             t->params, n, w[1], nimg);
    goto out;
  }
  if (strtoull(w[2], &end, 10) != chunk || *end) {
    snprintf(why, whysize, "chunk %s sectors, expected %" PRIu64, w[2], chunk);
    goto out;
  }
  for (i = 3; i < 2 + np; i++) {
    uint64_t v = i + 1 < 2 + np ? strtoull(w[i + 1], &end, 10) : 0;

    if (strcmp(w[i], "region_size") == 0 && i + 1 < 2 + np && v == region) {
      seen_region = true;
      i++;
    } else if (strcmp(w[i], "raid10_copies") == 0 && i + 1 < 2 + np &&
               v == copies) {
      seen_copies = true;
      i++;
    } else {
      snprintf(why, whysize, "unexpected raid parameter \"%s%s%s\"", w[i],
               i + 1 < 2 + np ? " " : "", i + 1 < 2 + np ? w[i + 1] : "");
      goto out;
    }
  }
  if ((region > 0) != seen_region || (copies > 0) != seen_copies) {
    if (region)
      snprintf(why, whysize,
               "raid params \"%s\": expected region_size %" PRIu64 "%s",
               t->params, region, copies ? " and raid10_copies" : "");
    else
      snprintf(why, whysize, "raid params \"%s\": expected no region_size",
               t->params);
    goto out;
  }
  if (strtoul(w[i], &end, 10) != nimg || *end) {
    snprintf(why, whysize, "%s images, expected %zu", w[i], nimg);
    goto out;
  }
  i++;
  for (size_t k = 0; k < nimg; k++, i += 2) {
    char what[32];
    const char *meta = json_string_value(json_array_get(metas, k));

    snprintf(what, sizeof what, "rmeta %zu", k);
    if (meta ? !check_sublv(vgname, meta, w[i], what, why, whysize)
             : strcmp(w[i], "-") != 0) {
      if (!meta)
        snprintf(why, whysize, "rmeta %zu is %s, expected -", k, w[i]);
      goto out;
    }
    snprintf(what, sizeof what, "rimage %zu", k);
    if (!check_sublv(vgname, json_string_value(json_array_get(images, k)),
                     w[i + 1], what, why, whysize))
      goto out;
  }
  ok = true;
out:
  free(copy);
  return ok;
}

/* Does word w name dm device devname (by MAJ:MIN)?  Else false with WHY. */
static bool
check_devword(const char *devname, const char *w, const char *what, char *why,
              size_t whysize)
{
  const char *mm = dmdev_majmin(devname);

  if (mm == NULL) {
    snprintf(why, whysize, "%s: no dm device %.200s", what, devname);
    return false;
  }
  if (strcmp(w, mm) != 0) {
    snprintf(why, whysize, "%s is %.32s, expected %s (%.200s)", what, w, mm,
             devname);
    return false;
  }
  return true;
}

/* The common form of a table's params: ndev dm devices by MAJ:MIN (devs
 * their dm names, what how messages call each), then words that must
 * read tail (joined by single spaces).  thin-pool, thin, snapshot, cache
 * and a pool's public layer are all this; mirror and raid interleave
 * devices and numbers and parse their own.  Else false with WHY: the
 * device that differs, or the words after the devices ("label: " before
 * them when label is not NULL). */
static bool
check_params(const struct target *x, size_t ndev, const char *const *devs,
             const char *const *what, const char *tail, const char *label,
             char *why, size_t whysize)
{
  char *copy, *w[MAX_WORDS], got[256] = "";
  size_t n = words(x->params, &copy, w, MAX_WORDS);
  bool ok = false;

  if (n > MAX_WORDS || n < ndev) {
    snprintf(why, whysize, "%s%s%s params \"%.120s\": expected %zu devices",
             label ? label : "", label ? ": " : "", x->type, x->params, ndev);
    goto out;
  }
  for (size_t k = 0; k < ndev; k++)
    if (!check_devword(devs[k], w[k], what[k], why, whysize))
      goto out;
  for (size_t k = ndev; k < n; k++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
             k > ndev ? " " : "", w[k]);
  if (strcmp(got, tail) != 0) {
    snprintf(why, whysize, "%s%s\"%s\" after the devices, expected \"%s\"",
             label ? label : "", label ? ": " : "", got, tail);
    goto out;
  }
  ok = true;
out:
  free(copy);
  return ok;
}

/* The targets of dm device name, in order, marked used: the index of the
 * first in *first, the count returned. */
static size_t
dev_targets(struct targets *t, const char *name, size_t *first)
{
  size_t count = 0;

  *first = 0;
  for (size_t k = 0; k < t->n; k++)
    if (strcmp(t->v[k].dev, name) == 0) {
      if (count++ == 0)
        *first = k;
      t->v[k].used = true;
    }
  return count;
}

/* Exactly one target on dm device name, of type type and length len
 * sectors; NULL with WHY otherwise. */
static const struct target *
one_target(struct targets *t, const char *name, const char *type, uint64_t len,
           char *why, size_t whysize)
{
  size_t first, n = dev_targets(t, name, &first);
  const struct target *x = &t->v[first];

  if (n != 1) {
    snprintf(why, whysize, "%.200s: %zu targets, expected 1 %s", name, n,
             type);
    return NULL;
  }
  if (strcmp(x->type, type) != 0 || x->start != 0 || x->len != len) {
    snprintf(why, whysize,
             "%.200s: %s over sectors %" PRIu64 "+%" PRIu64
             ", expected %s over 0+%" PRIu64,
             name, x->type, x->start, x->len, type, len);
    return NULL;
  }
  return x;
}

/* The thin-pool table of pool lv: "TMETA TDATA CHUNK 0 F FEATURES...". */
static bool
check_pool_params(const char *vgname, json_t *lv, const struct target *x,
                  char *why, size_t whysize)
{
  const char *meta = json_string_value(json_object_get(lv, "metadata"));
  const char *data = json_string_value(json_object_get(lv, "data"));
  const char *discards = json_string_value(json_object_get(lv, "discards"));
  uint64_t chunk = json_integer_value(json_object_get(lv, "chunk_size")) / 512;
  char features[96] = "", tail[160], devs[2][512];
  const char *dp[] = {devs[0], devs[1]}, *what[] = {"metadata", "data"};
  size_t nf = 0;

  if (!meta || !data) {
    snprintf(why, whysize, "the manifest names no metadata or data LV");
    return false;
  }
  if (json_is_false(json_object_get(lv, "zero")))
    nf++, strcat(features, " skip_block_zeroing");
  if (discards && strcmp(discards, "ignore") == 0)
    nf++, strcat(features, " ignore_discard");
  else if (discards && strcmp(discards, "nopassdown") == 0)
    nf++, strcat(features, " no_discard_passdown");
  dm_name(vgname, meta, devs[0], sizeof devs[0]);
  dm_name(vgname, data, devs[1], sizeof devs[1]);
  /* the chunk, the low water mark (0: lvm leaves it to dmeventd), the
   * features */
  snprintf(tail, sizeof tail, "%" PRIu64 " 0 %zu%s", chunk, nf, features);
  return check_params(x, 2, dp, what, tail, NULL, why, whysize);
}

/* A thin pool: the -tpool layer and the public device, or (no thin LV)
 * the thin-pool table on the public device. */
static bool
check_pool(const char *vgname, json_t *lv, uint64_t extent, struct targets *t,
           char *why, size_t whysize)
{
  char pub[512], tpool[520];
  uint64_t len =
    json_integer_value(json_object_get(lv, "extents")) * extent / 512;
  const struct target *x;
  size_t first;

  dm_name(vgname, json_string_value(json_object_get(lv, "name")), pub,
          sizeof pub);
  snprintf(tpool, sizeof tpool, "%s-tpool", pub);
  if (dmdev_majmin(tpool) || dev_targets(t, tpool, &first)) {
    if (!(x = one_target(t, tpool, "thin-pool", len, why, whysize)) ||
        !check_pool_params(vgname, lv, x, why, whysize))
      return false;
    if (dev_targets(t, pub, &first) == 0)
      return true; /* the public device is optional */
    if (!(x = one_target(t, pub, "linear", len, why, whysize)))
      return false;
    {
      const char *dp[] = {tpool}, *what[] = {"the pool's layer"};

      return check_params(x, 1, dp, what, "0", pub, why, whysize);
    }
  }
  if (!(x = one_target(t, pub, "thin-pool", len, why, whysize)))
    return false;
  return check_pool_params(vgname, lv, x, why, whysize);
}

/* A thin LV: "thin TPOOL DEVICE_ID". */
static bool
check_thin(const char *vgname, json_t *lv, uint64_t extent, struct targets *t,
           char *why, size_t whysize)
{
  const char *pool = json_string_value(json_object_get(lv, "pool"));
  const char *ext = json_string_value(json_object_get(lv, "external_origin"));
  uint64_t len =
    json_integer_value(json_object_get(lv, "extents")) * extent / 512;
  char dev[512], tpool[520], want[32];
  const char *dp[] = {tpool}, *what[] = {"the pool"};
  const struct target *x;

  dm_name(vgname, json_string_value(json_object_get(lv, "name")), dev,
          sizeof dev);
  if (!pool) {
    snprintf(why, whysize, "the manifest names no pool");
    return false;
  }
  dm_name(vgname, pool, tpool, sizeof tpool - 6);
  strcat(tpool, "-tpool");
  if (!(x = one_target(t, dev, "thin", len, why, whysize)))
    return false;
  snprintf(want, sizeof want, "%" PRId64,
           (int64_t)json_integer_value(json_object_get(lv, "device_id")));
  if (ext) {
    /* "thin TPOOL DEVICE_ID EXTERNAL": the external origin's -real */
    char *copy, *w[MAX_WORDS], real[520];
    size_t n = words(x->params, &copy, w, MAX_WORDS);
    bool ok;

    dm_name(vgname, ext, real, sizeof real - 5);
    strcat(real, "-real");
    ok = n == 3 && check_devword(tpool, w[0], "the pool", why, whysize) &&
         check_devword(real, w[2], "the external origin", why, whysize);
    if (ok && strcmp(w[1], want) != 0) {
      snprintf(why, whysize, "device id %s, expected %s", w[1], want);
      ok = false;
    } else if (!ok && n != 3)
      snprintf(why, whysize,
               "thin params \"%.120s\": expected the pool, the device id "
               "and the external origin",
               x->params);
    free(copy);
    return ok;
  }
  return check_params(x, 1, dp, what, want, NULL, why, whysize);
}

/* The snapshot LV (its COW) of origin whose name is origin: "snapshot REAL
 * COW P CHUNK" over the origin's size. */
static bool
check_snapshot_target(const char *vgname, json_t *vg, json_t *lv,
                      uint64_t extent, struct targets *t, char *why,
                      size_t whysize)
{
  const char *origin = json_string_value(json_object_get(lv, "origin"));
  json_t *lvs = json_object_get(vg, "lvs"), *o, *found = NULL;
  char dev[512], real[520], cow[520], want[32];
  const char *dp[] = {real, cow}, *what[] = {"the origin", "the COW"};
  const struct target *x;
  size_t i;

  json_array_foreach(lvs, i, o)
  {
    const char *name = json_string_value(json_object_get(o, "name"));
    if (origin && name && strcmp(name, origin) == 0)
      found = o;
  }
  if (!found) {
    snprintf(why, whysize, "origin %s is no LV of the VG",
             origin ? origin : "(none)");
    return false;
  }
  dm_name(vgname, json_string_value(json_object_get(lv, "name")), dev,
          sizeof dev);
  dm_name(vgname, origin, real, sizeof real - 5);
  strcat(real, "-real");
  snprintf(cow, sizeof cow, "%s-cow", dev);
  if (!(x = one_target(t, dev, "snapshot",
                       json_integer_value(json_object_get(found, "extents")) *
                         extent / 512,
                       why, whysize)))
    return false;
  snprintf(want, sizeof want, "P %" PRIu64,
           (uint64_t)json_integer_value(json_object_get(lv, "chunk_size")) /
             512);
  return check_params(x, 2, dp, what, want, NULL, why, whysize);
}

/* The one target of type type that LV lv's dm device holds over the LV's
 * size, or NULL with WHY. */
static const struct target *
lv_target(const char *vgname, json_t *lv, uint64_t extent, struct targets *t,
          const char *type, char *why, size_t whysize)
{
  char dev[512];

  dm_name(vgname, json_string_value(json_object_get(lv, "name")), dev,
          sizeof dev);
  return one_target(t, dev, type,
                    json_integer_value(json_object_get(lv, "extents")) *
                      extent / 512,
                    why, whysize);
}

/* The "cache META DATA CORIG CHUNK 2 metadata2 MODE POLICY ARGS" target
 * of cache LV lv over its size, META and DATA the dm devices given, ARGS
 * the manifest's policy_args (libdm's count and arguments: "0" unless
 * settings or a big chunk set migration_threshold). */
static bool
check_cache_target(const char *vgname, json_t *lv, uint64_t extent,
                   struct targets *t, const char *meta, const char *data,
                   const char *policy, char *why, size_t whysize)
{
  const char *mode = json_string_value(json_object_get(lv, "cache_mode"));
  const char *what[] = {"metadata", "cache", "origin"};
  char origin[512], want[400];
  const char *dp[] = {meta, data, origin};
  const struct target *x;

  if (!(x = lv_target(vgname, lv, extent, t, "cache", why, whysize)))
    return false;
  dm_name(vgname, json_string_value(json_object_get(lv, "origin")), origin,
          sizeof origin);
  const char *args = json_string_value(json_object_get(lv, "policy_args"));

  snprintf(want, sizeof want, "%" PRIu64 " 2 metadata2 %.20s %.20s %.200s",
           (uint64_t)json_integer_value(json_object_get(lv, "chunk_size")) /
             512,
           mode, policy, args ? args : "0");
  return check_params(x, 3, dp, what, want, NULL, why, whysize);
}

/* A cache LV over a cachevol (lvconvert --type cache --cachevol): "cache
 * CVOL-cmeta CVOL-cdata CORIG CHUNK 2 metadata2 MODE POLICY 0", where
 * VG-CVOL-cmeta and VG-CVOL-cdata are "linear CVOL 0" and "linear CVOL
 * META" over the cachevol's first META sectors and the rest.  POLICY is
 * always mq, whatever the metadata says: lvm 2.03.16 (cache.c
 * _cache_add_target_line) takes the policy of the cache pool's segment,
 * which a cachevol's (striped) segment has not, and falls back to "mq"
 * (which the kernel serves with smq). */
static bool
check_cache_cvol(const char *vgname, json_t *vg, json_t *lv, uint64_t extent,
                 struct targets *t, char *why, size_t whysize)
{
  const char *cvol = json_string_value(json_object_get(lv, "cachevol"));
  uint64_t meta =
    json_integer_value(json_object_get(lv, "cachevol_metadata")) / 512;
  uint64_t cvsize = 0;
  json_t *lvs = json_object_get(vg, "lvs"), *o;
  char want[64], devs[2][530], cv[512];
  const char *cvp[] = {cv}, *cvw[] = {"the cachevol"};
  const struct target *x;
  size_t i;

  json_array_foreach(lvs, i, o)
  {
    const char *name = json_string_value(json_object_get(o, "name"));
    if (name && strcmp(name, cvol) == 0)
      cvsize =
        json_integer_value(json_object_get(o, "extents")) * extent / 512;
  }
  dm_name(vgname, cvol, cv, sizeof cv);
  for (int k = 0; k < 2; k++) {
    snprintf(devs[k], sizeof devs[k], "%s-%s", cv, k ? "cdata" : "cmeta");
    if (!(x = one_target(t, devs[k], "linear", k ? cvsize - meta : meta, why,
                         whysize)))
      return false;
    snprintf(want, sizeof want, "%" PRIu64, k ? meta : 0);
    if (!check_params(x, 1, cvp, cvw, want, devs[k], why, whysize))
      return false;
  }
  return check_cache_target(vgname, lv, extent, t, devs[0], devs[1], "mq", why,
                            whysize);
}

/* A cache LV: "cache CMETA CDATA CORIG CHUNK 2 metadata2 MODE POLICY 0"
 * over its size (libdm _cache_emit_segment_line: the features, then the
 * policy and its argument count; migration_threshold left at 2048). */
static bool
check_cache(const char *vgname, json_t *vg, json_t *lv, uint64_t extent,
            struct targets *t, char *why, size_t whysize)
{
  const char *pool = json_string_value(json_object_get(lv, "pool"));
  const char *cvol = json_string_value(json_object_get(lv, "cachevol"));
  const char *origin = json_string_value(json_object_get(lv, "origin"));
  const char *mode = json_string_value(json_object_get(lv, "cache_mode"));
  const char *policy = json_string_value(json_object_get(lv, "policy"));
  json_t *lvs = json_object_get(vg, "lvs"), *o, *p = NULL;
  char devs[2][512];
  size_t i;

  if (cvol && origin && mode && policy)
    return check_cache_cvol(vgname, vg, lv, extent, t, why, whysize);

  json_array_foreach(lvs, i, o)
  {
    const char *name = json_string_value(json_object_get(o, "name"));
    if (pool && name && strcmp(name, pool) == 0)
      p = o;
  }
  if (!p || !origin || !mode || !policy) {
    snprintf(why, whysize,
             "the manifest names no pool, origin, mode or "
             "policy for it");
    return false;
  }
  dm_name(vgname, json_string_value(json_object_get(p, "metadata")), devs[0],
          sizeof devs[0]);
  dm_name(vgname, json_string_value(json_object_get(p, "data")), devs[1],
          sizeof devs[1]);
  return check_cache_target(vgname, lv, extent, t, devs[0], devs[1], policy,
                            why, whysize);
}

/* A writecache LV: "writecache s ORIGIN CVOL BLOCK_SIZE N ARGS" over its
 * size (libdm _writecache_emit_segment_line: an SSD cache; N optional
 * arguments, those --cachesettings gave: the manifest's settings). */
static bool
check_writecache(const char *vgname, json_t *lv, uint64_t extent,
                 struct targets *t, char *why, size_t whysize)
{
  const char *cvol = json_string_value(json_object_get(lv, "cachevol"));
  const char *origin = json_string_value(json_object_get(lv, "origin"));
  const char *settings = json_string_value(json_object_get(lv, "settings"));
  char devs[2][512], want[256], *copy, *scopy, *w[MAX_WORDS], *sw[MAX_WORDS];
  const struct target *x;
  size_t n, nset;
  bool ok = false;

  if (!settings)
    settings = "";
  if (!cvol || !origin) {
    snprintf(why, whysize, "the manifest names no cachevol or origin");
    return false;
  }
  if (!(x = lv_target(vgname, lv, extent, t, "writecache", why, whysize)))
    return false;
  dm_name(vgname, cvol, devs[0], sizeof devs[0]);
  dm_name(vgname, origin, devs[1], sizeof devs[1]);
  /* the block size, the count of optional arguments, the arguments
   * (--cachesettings, in libdm's order) */
  nset = words(settings, &scopy, sw, MAX_WORDS);
  free(scopy);
  snprintf(want, sizeof want, "%" PRId64 " %zu%s%s",
           (int64_t)json_integer_value(json_object_get(lv, "block_size")),
           nset, nset ? " " : "", settings);
  n = words(x->params, &copy, w, MAX_WORDS);
  if (n != 5 + nset || strcmp(w[0], "s") != 0)
    snprintf(why, whysize,
             "writecache params \"%.120s\": expected s, the origin, the "
             "cachevol, %s",
             x->params, want);
  else if (check_devword(devs[1], w[1], "the origin", why, whysize) &&
           check_devword(devs[0], w[2], "the cachevol", why, whysize)) {
    char got[256];
    size_t at = 0;

    for (size_t i = 3; i < n && at < sizeof got; i++)
      at += (size_t)snprintf(got + at, sizeof got - at, "%s%s",
                             i > 3 ? " " : "", w[i]);
    ok = !strcmp(got, want);
    if (!ok)
      snprintf(why, whysize, "\"%s\" after the devices, expected \"%s\"", got,
               want);
  }
  free(copy);
  return ok;
}

/* A raid image under --raidintegrity: "integrity IORIG 0 TAG MODE N
 * OPTIONS" over its size.  lvm loads "fix_padding block_size:B
 * internal_hash:H meta_device:IMETA" (libdm
 * _integrity_emit_segment_line; recalculate only in lvm's first
 * activation, which the metadata no longer asks for), and dm-integrity
 * reports its table in its own form: meta_device first, block_size only
 * when not 512, then its defaults (journal_sectors, interleave_sectors,
 * buffer_sectors, journal_watermark and commit_time or sectors_per_bit
 * and bitmap_flush_interval, fix_padding when the superblock has it),
 * internal_hash last.  So: the origin, start 0, the tag size, the mode,
 * N the options' count, meta_device the image's _imeta, internal_hash
 * and block_size as lvm asked, no recalculate. */
static bool
check_integrity(const char *vgname, json_t *lv, uint64_t extent,
                struct targets *t, char *why, size_t whysize)
{
  const char *origin = json_string_value(json_object_get(lv, "origin"));
  const char *meta = json_string_value(json_object_get(lv, "meta"));
  const char *mode = json_string_value(json_object_get(lv, "mode"));
  const char *hash = json_string_value(json_object_get(lv, "internal_hash"));
  int64_t bs = json_integer_value(json_object_get(lv, "block_size"));
  char odev[512], mdev[512], head[64], want_meta[64], want_hash[64],
    want_bs[64], *copy, *w[MAX_WORDS];
  const struct target *x;
  const char *mm;
  size_t n;
  bool ok = false, got_meta = false, got_hash = false, got_bs = bs == 512;

  if (!origin || !meta || !mode || !hash) {
    snprintf(why, whysize, "the manifest names no origin, meta, mode or hash");
    return false;
  }
  if (!(x = lv_target(vgname, lv, extent, t, "integrity", why, whysize)))
    return false;
  dm_name(vgname, origin, odev, sizeof odev);
  dm_name(vgname, meta, mdev, sizeof mdev);
  if (!(mm = dmdev_majmin(mdev))) {
    snprintf(why, whysize, "the metadata: no dm device %.200s", mdev);
    return false;
  }
  snprintf(head, sizeof head, "0 %" PRId64 " %.8s",
           (int64_t)json_integer_value(json_object_get(lv, "tag_size")), mode);
  snprintf(want_meta, sizeof want_meta, "meta_device:%s", mm);
  snprintf(want_hash, sizeof want_hash, "internal_hash:%.32s", hash);
  snprintf(want_bs, sizeof want_bs, "block_size:%" PRId64, bs);
  n = words(x->params, &copy, w, MAX_WORDS);
  if (n < 5 || n > MAX_WORDS) {
    snprintf(why, whysize, "integrity params \"%.120s\": too short",
             x->params);
    goto out;
  }
  if (!check_devword(odev, w[0], "the origin", why, whysize))
    goto out;
  {
    char got[64];

    snprintf(got, sizeof got, "%s %s %s", w[1], w[2], w[3]);
    if (strcmp(got, head)) {
      snprintf(why, whysize, "\"%s\" after the origin, expected \"%s\"", got,
               head);
      goto out;
    }
  }
  if (strtoul(w[4], NULL, 10) != n - 5) {
    snprintf(why, whysize, "%s options counted, %zu given: \"%.120s\"", w[4],
             n - 5, x->params);
    goto out;
  }
  for (size_t k = 5; k < n; k++) {
    if (!strcmp(w[k], "recalculate")) {
      snprintf(why, whysize,
               "recalculate in the table: lvm's metadata no "
               "longer asks for it");
      goto out;
    }
    got_meta |= !strcmp(w[k], want_meta);
    got_hash |= !strcmp(w[k], want_hash);
    got_bs |= !strcmp(w[k], want_bs);
  }
  if (!got_meta || !got_hash || !got_bs)
    snprintf(why, whysize, "\"%.200s\" lacks %s", x->params,
             !got_meta   ? want_meta
             : !got_hash ? want_hash
                         : want_bs);
  else
    ok = true;
out:
  free(copy);
  return ok;
}

/* Does the cache pool named by parent (a JSON string) cache an LV? */
static bool
cache_pool_used(json_t *vg, json_t *parent)
{
  json_t *lvs = json_object_get(vg, "lvs"), *o;
  size_t i;

  json_array_foreach(lvs, i, o)
  {
    const char *name = json_string_value(json_object_get(o, "name"));

    if (name && json_is_string(parent) &&
        strcmp(name, json_string_value(parent)) == 0)
      return json_is_string(json_object_get(o, "cached_lv"));
  }
  return false;
}

/* Is lv the origin of an old-style snapshot of vg (key "origin" of a
 * snapshot), or an external origin of a thin LV (key "external_origin"
 * of a thin LV)? */
static bool
is_origin_of(json_t *vg, const char *lvname, const char *type_want,
             const char *key)
{
  json_t *lvs = json_object_get(vg, "lvs"), *o;
  size_t i;

  json_array_foreach(lvs, i, o)
  {
    const char *type = json_string_value(json_object_get(o, "type"));
    const char *origin = json_string_value(json_object_get(o, key));

    if (type && strcmp(type, type_want) == 0 && origin &&
        strcmp(origin, lvname) == 0)
      return true;
  }
  return false;
}

static bool
is_origin(json_t *vg, const char *lvname)
{
  return is_origin_of(vg, lvname, "snapshot", "origin");
}

/* Check one segment against one target; false with WHY on a mismatch.
 * A mirror or raid LV (the manifest gives its dm_type) is checked from
 * the LV's fields: its sub-LVs are LVs of their own. */
static bool
check_segment(const char *vgname, json_t *vg, json_t *lv, uint64_t extent,
              json_t *seg, const struct target *t, char *why, size_t whysize)
{
  const char *type = json_string_value(json_object_get(seg, "type"));
  uint64_t se = json_integer_value(json_object_get(seg, "start_extent"));
  uint64_t ec = json_integer_value(json_object_get(seg, "extent_count"));
  json_t *areas = json_object_get(seg, "areas");
  uint64_t want_start = se * extent / 512, want_len = ec * extent / 512;
  char mm[32];
  uint64_t off;
  int n = 0;

  if (t->start != want_start || t->len != want_len) {
    snprintf(why, whysize,
             "target covers sectors %" PRIu64 "+%" PRIu64 ", expected %" PRIu64
             "+%" PRIu64,
             t->start, t->len, want_start, want_len);
    return false;
  }
  /* pvmove0 of an interrupted pvmove: each segment "mirror core 1 REGION
   * 2 FROM OFF TO OFF", the extents and their new place */
  {
    const char *lt = json_string_value(json_object_get(lv, "type"));
    char m1[32], m2[32];
    uint64_t reg, o1, o2;
    int k = 0;

    if (lt && strcmp(lt, "pvmove") == 0) {
      uint64_t want_reg =
        json_integer_value(json_object_get(lv, "region_size")) / 512;

      if (!json_is_true(json_object_get(seg, "moving"))) {
        /* waiting: linear where its extents are */
        if (strcmp(t->type, "linear") != 0 ||
            sscanf(t->params, "%31s %" SCNu64 " %n", m1, &o1, &k) != 2 ||
            t->params[k] != '\0') {
          snprintf(why, whysize,
                   "%s \"%.200s\", expected linear (a segment waiting to "
                   "move)",
                   t->type, t->params);
          return false;
        }
        return check_area(vg, extent, json_array_get(areas, 0), m1, o1, why,
                          whysize);
      }
      if (strcmp(t->type, "mirror") != 0 ||
          sscanf(t->params,
                 "core 1 %" SCNu64 " 2 %31s %" SCNu64 " %31s %" SCNu64 " %n",
                 &reg, m1, &o1, m2, &o2, &k) != 5 ||
          t->params[k] != '\0') {
        snprintf(why, whysize,
                 "%s \"%.200s\", expected mirror \"core 1 REGION 2 FROM "
                 "OFFSET TO OFFSET\"",
                 t->type, t->params);
        return false;
      }
      if (reg != want_reg) {
        snprintf(why, whysize,
                 "region size %" PRIu64 " sectors, expected %" PRIu64, reg,
                 want_reg);
        return false;
      }
      return check_area(vg, extent, json_array_get(areas, 0), m1, o1, why,
                        whysize) &&
             check_area(vg, extent, json_array_get(areas, 1), m2, o2, why,
                        whysize);
    }
  }
  /* A mirror or raid LV is one target over its sub-LVs; a snapshot's
   * COW (dm_type snapshot) has plain segments. */
  bool composite =
    type && json_string_value(json_object_get(lv, "dm_type")) &&
    (strcmp(type, "mirror") == 0 || strncmp(type, "raid", 4) == 0);

  if (type == NULL || (!composite && strcmp(t->type, type) != 0)) {
    snprintf(why, whysize, "target type %s, expected %s", t->type,
             type ? type : "?");
    return false;
  }
  if (composite) {
    const char *dm = strcmp(type, "mirror") == 0 ? "mirror" : "raid";

    if (strcmp(t->type, dm) != 0) {
      snprintf(why, whysize, "target type %s, expected %s", t->type, dm);
      return false;
    }
    return strcmp(dm, "mirror") == 0
             ? check_mirror(vgname, lv, t, why, whysize)
             : check_raid(vgname, lv, t, why, whysize);
  }
  if (strcmp(type, "linear") == 0) {
    if (sscanf(t->params, "%31s %" SCNu64 " %n", mm, &off, &n) != 2 ||
        t->params[n] != '\0' || json_array_size(areas) != 1) {
      snprintf(why, whysize, "linear params \"%s\" not \"MAJ:MIN OFFSET\"",
               t->params);
      return false;
    }
    return check_area(vg, extent, json_array_get(areas, 0), mm, off, why,
                      whysize);
  }
  if (strcmp(type, "striped") == 0) {
    uint64_t stripes, chunk;
    uint64_t want_stripes =
      json_integer_value(json_object_get(seg, "stripes"));
    uint64_t want_chunk =
      json_integer_value(json_object_get(seg, "stripe_size")) / 512;
    const char *p = t->params;

    if (sscanf(p, "%" SCNu64 " %" SCNu64 " %n", &stripes, &chunk, &n) != 2) {
      snprintf(why, whysize, "striped params \"%s\" unreadable", t->params);
      return false;
    }
    if (stripes != want_stripes || stripes != json_array_size(areas)) {
      snprintf(why, whysize, "%" PRIu64 " stripes, expected %" PRIu64, stripes,
               want_stripes);
      return false;
    }
    if (chunk != want_chunk) {
      snprintf(why, whysize, "chunk %" PRIu64 " sectors, expected %" PRIu64,
               chunk, want_chunk);
      return false;
    }
    p += n;
    for (size_t i = 0; i < stripes; i++) {
      char sub[400];

      if (sscanf(p, "%31s %" SCNu64 " %n", mm, &off, &n) != 2) {
        snprintf(why, whysize, "striped params \"%s\": stripe %zu missing",
                 t->params, i);
        return false;
      }
      p += n;
      if (!check_area(vg, extent, json_array_get(areas, i), mm, off, sub,
                      sizeof sub)) {
        snprintf(why, whysize, "stripe %zu %s", i, sub);
        return false;
      }
    }
    if (*p != '\0') {
      snprintf(why, whysize, "striped params \"%s\": trailing \"%s\"",
               t->params, p);
      return false;
    }
    return true;
  }
  snprintf(why, whysize, "segment type %s is not checked", type);
  return false;
}

static int
by_dev_start(const void *a, const void *b)
{
  const struct target *x = a, *y = b;
  int c = strcmp(x->dev, y->dev);

  if (c)
    return c;
  return x->start < y->start ? -1 : x->start > y->start;
}

static void
usage(FILE *f)
{
  fprintf(f,
          "usage: ff-dmcheck [--tables FILE [--dmdevs FILE]] [--devmap FILE] "
          "MANIFEST.json\n");
}

int
main(int argc, char **argv)
{
  const char *tables = NULL, *devmap_path = NULL, *dmdevs_path = NULL,
             *mpath = NULL;
  /* static: every early exit leaves it reachable (no leak to report) */
  static struct targets t;
  json_error_t jerr;
  json_t *vgs, *vg;
  size_t i, checked = 0, bad = 0, skipped = 0, extra = 0;

  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--tables") == 0 && a + 1 < argc)
      tables = argv[++a];
    else if (strcmp(argv[a], "--devmap") == 0 && a + 1 < argc)
      devmap_path = argv[++a];
    else if (strcmp(argv[a], "--dmdevs") == 0 && a + 1 < argc)
      dmdevs_path = argv[++a];
    else if (strcmp(argv[a], "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (argv[a][0] == '-' || mpath) {
      usage(stderr);
      return 2;
    } else
      mpath = argv[a];
  }
  if (mpath == NULL) {
    usage(stderr);
    return 2;
  }
  manifest = json_load_file(mpath, 0, &jerr);
  if (manifest == NULL) {
    err("%s:%d: %s", mpath, jerr.line, jerr.text);
    return 2;
  }
  vgs = json_object_get(manifest, "vgs");
  if (!json_is_array(vgs) ||
      !json_is_array(json_object_get(manifest, "devices"))) {
    err("%s: not a fusefarm manifest (no \"vgs\" or \"devices\" array)",
        mpath);
    return 2;
  }
  devmap.from_file = devmap_path != NULL;
  if (devmap_path && load_pairs(devmap_path, "MAJ:MIN DEVICE", devmap_line))
    return 2;
  if (dmdevs_path && !tables) {
    err("--dmdevs goes with --tables (libdevmapper numbers its devices)");
    return 2;
  }
  if (tables ? load_tables_file(&t, tables) : load_tables_dm(&t))
    return 2;
  if (dmdevs_path && load_pairs(dmdevs_path, "MAJ:MIN DM-NAME", dmdevs_line))
    return 2;
  qsort(t.v, t.n, sizeof *t.v, by_dev_start);

  json_array_foreach(vgs, i, vg)
  {
    const char *vgname = json_string_value(json_object_get(vg, "name"));
    const char *damage = json_string_value(json_object_get(vg, "damage"));
    uint64_t extent = json_integer_value(json_object_get(vg, "extent_size"));
    json_t *lvs = json_object_get(vg, "lvs"), *lv;
    size_t j;

    if (vgname == NULL || extent == 0 || extent % 512) {
      err("%s: vgs[%zu]: no name or bad extent_size", mpath, i);
      return 2;
    }
    if (damage && strcmp(damage, "none") != 0) {
      printf("SKIP %s: damage %s\n", vgname, damage);
      skipped++;
      continue;
    }
    json_array_foreach(lvs, j, lv)
    {
      const char *lvname = json_string_value(json_object_get(lv, "name"));
      const char *role = json_string_value(json_object_get(lv, "role"));
      const char *type = json_string_value(json_object_get(lv, "type"));
      json_t *segs = json_object_get(lv, "segments");
      size_t first = 0, count = 0, nseg = json_array_size(segs);
      char name[512], dev[520], why[600] = "";
      bool ok = true;

      if (lvname == NULL) {
        err("%s: vg %s: lvs[%zu] has no name", mpath, vgname, j);
        return 2;
      }
      checked++;
      dm_name(vgname, lvname, name, sizeof name);
      snprintf(dev, sizeof dev, "%s", name);
      if (role &&
          (strcmp(role, "pmspare") == 0 || strcmp(role, "snapshot") == 0)) {
        /* lvm never activates these: the spare waits for a repair, and
         * snapshotN is the snapshot's text; its device is the COW's */
        if (dev_targets(&t, name, &first)) {
          printf("MISMATCH %s/%s: dm device %s exists; lvm activates no %s\n",
                 vgname, lvname, name,
                 strcmp(role, "pmspare") == 0 ? "pool metadata spare"
                                              : "snapshotN LV");
          bad++;
        } else
          printf("OK %s/%s: no dm device (%s)\n", vgname, lvname, role);
        continue;
      }
      if (type && strcmp(type, "thin-pool") == 0) {
        ok = check_pool(vgname, lv, extent, &t, why, sizeof why);
        nseg = 1;
        goto verdict;
      }
      if (type && strcmp(type, "thin") == 0) {
        ok = check_thin(vgname, lv, extent, &t, why, sizeof why);
        nseg = 1;
        goto verdict;
      }
      if (type && strcmp(type, "cache") == 0) {
        ok = check_cache(vgname, vg, lv, extent, &t, why, sizeof why);
        nseg = 1;
        goto verdict;
      }
      if (type && strcmp(type, "writecache") == 0) {
        ok = check_writecache(vgname, lv, extent, &t, why, sizeof why);
        nseg = 1;
        goto verdict;
      }
      if (type && strcmp(type, "integrity") == 0) {
        ok = check_integrity(vgname, lv, extent, &t, why, sizeof why);
        nseg = 1;
        goto verdict;
      }
      if (role && (strcmp(role, "cmeta") == 0 || strcmp(role, "cdata") == 0) &&
          !cache_pool_used(vg, json_object_get(lv, "parent"))) {
        /* a cache pool that caches nothing is not activated */
        if (dev_targets(&t, name, &first)) {
          printf("MISMATCH %s/%s: dm device %s exists; lvm activates no "
                 "unused cache pool\n",
                 vgname, lvname, name);
          bad++;
        } else
          printf("OK %s/%s: no dm device (unused cache pool)\n", vgname,
                 lvname);
        continue;
      }
      if (type && strcmp(type, "cache-pool") == 0) {
        /* the pool is its sub-LVs, which the cache target names */
        if (dev_targets(&t, name, &first)) {
          printf("MISMATCH %s/%s: dm device %s exists; lvm activates no "
                 "cache pool\n",
                 vgname, lvname, name);
          bad++;
        } else
          printf("OK %s/%s: no dm device (cache pool)\n", vgname, lvname);
        continue;
      }
      if (is_origin(vg, lvname) ||
          is_origin_of(vg, lvname, "thin", "external_origin")) {
        /* VG-LV is the snapshot-origin (an external origin of thin LVs:
         * a linear device) over VG-LV-real, which has the LV's segments */
        bool snap = is_origin(vg, lvname);
        const char *dp[] = {dev}, *what[] = {"the origin's real device"};
        const struct target *x;

        snprintf(dev, sizeof dev, "%s-real", name);
        x = one_target(&t, name, snap ? "snapshot-origin" : "linear",
                       json_integer_value(json_object_get(lv, "extents")) *
                         extent / 512,
                       why, sizeof why);
        if (!x || !check_params(x, 1, dp, what, snap ? "" : "0", NULL, why,
                                sizeof why)) {
          ok = false;
          goto verdict;
        }
      }
      if (type && strcmp(type, "snapshot") == 0) {
        /* VG-SNAP is the snapshot target, VG-SNAP-cow the COW's
         * segments */
        if (!check_snapshot_target(vgname, vg, lv, extent, &t, why,
                                   sizeof why)) {
          ok = false;
          goto verdict;
        }
        snprintf(dev, sizeof dev, "%s-cow", name);
      }
      count = dev_targets(&t, dev, &first);
      if (count == 0) {
        printf("MISMATCH %s/%s: no dm device %s\n", vgname, lvname, dev);
        bad++;
        continue;
      }
      if (count != nseg) {
        snprintf(why, sizeof why, "%zu targets, expected %zu segments", count,
                 nseg);
        ok = false;
      }
      for (size_t s = 0; ok && s < nseg; s++) {
        char sub[500];

        if (!check_segment(vgname, vg, lv, extent, json_array_get(segs, s),
                           &t.v[first + s], sub, sizeof sub)) {
          snprintf(why, sizeof why, "segment %zu: %s", s, sub);
          ok = false;
        }
      }
    verdict:
      if (ok)
        printf("OK %s/%s: %zu segment%s\n", vgname, lvname, nseg,
               nseg == 1 ? "" : "s");
      else {
        printf("MISMATCH %s/%s: %s\n", vgname, lvname, why);
        bad++;
      }
    }
  }
  for (size_t k = 0; k < t.n; k++)
    if (!t.v[k].used && (k == 0 || strcmp(t.v[k].dev, t.v[k - 1].dev))) {
      printf("EXTRA %s: not an LV of the manifest\n", t.v[k].dev);
      extra++;
    }
  printf("ff-dmcheck: %zu LVs checked, %zu mismatched, %zu VGs skipped, "
         "%zu other dm devices: %s\n",
         checked, bad, skipped, extra, bad ? "FAIL" : "PASS");
  for (size_t k = 0; k < t.n; k++) {
    free(t.v[k].dev);
    free(t.v[k].type);
    free(t.v[k].params);
  }
  free(t.v);
  free(devmap.v);
  for (size_t k = 0; k < dmdevs.n; k++)
    free(dmdevs.v[k].name);
  free(dmdevs.v);
  json_decref(manifest);
  return bad ? 1 : 0;
}
