/* fusefarm attach/detach: the state dir's lvm config, written by the one
 * fencing module (runner/ff-fence.h): lvm/lvm.conf and
 * lvm/devices/system.devices naming exactly the recorded loops (or, for
 * an lvm without a devices file, a filter naming them).
 *
 * Thread model: single-threaded.
 */
#include "attach.h"
#include "ff-error.h"
#include "ff-fence.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the lvm on PATH supports, asked once per process.  Without an lvm
 * the config is for an lvm installed later: the devices-file form, which
 * is what every lvm since 2.03.12 reads. */
static const struct ff_lvm_caps *
lvm_caps(const char *lvmdir)
{
  static struct ff_lvm_caps caps;
  static int known;

  if (!known && ff_lvm_caps_probe("lvm", lvmdir, &caps) < 0)
    ff_lvm_caps_for(2, 3, 16, &caps);
  known = 1;
  return &caps;
}

static const char *
pvid_of(struct farm_dev **sorted, size_t n, const char *name)
{
  struct farm_dev key = {.name = (char *)name}, *kp = &key, **hit;

  if (!sorted)
    return "";
  hit = bsearch(&kp, sorted, n, sizeof *sorted, fa_cmp_dev_name);
  return hit ? (*hit)->pvid : "";
}

/* lvm reads IDNAME up to the next blank: a path with one cannot be a
 * loop_file id (ff-fence.c names such a loop by its device instead). */
static int
has_blank(const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s <= ' ' || *s == 0x7f)
      return 1;
  return 0;
}

/* Write the fence for the kept records; pvids[i] is record i's PVID. */
static int
write_fence(const char *state, const struct records *rs,
            const char *const *pvids)
{
  struct ff_fence_dev *devs = calloc(rs->n + 1, sizeof *devs);
  struct ff_fence f = {0};
  char lvmdir[PATH_MAX];
  size_t n = 0;
  int r;

  if (!devs)
    return ff_error("out of memory");
  if (fa_join(lvmdir, state, "lvm") < 0) {
    free(devs);
    return -1;
  }
  for (size_t i = 0; i < rs->n; i++) {
    if (!rs->v[i].keep)
      continue;
    devs[n].devname = rs->v[i].dev;
    devs[n].backing = rs->v[i].backing;
    devs[n].pvid = pvids[i];
    n++;
  }
  f.caps = *lvm_caps(lvmdir);
  f.restrict_devices = 1;
  f.devs = devs;
  f.ndevs = n;
  r = ff_fence_write(lvmdir, &f);
  free(devs);
  return r;
}

int
fa_write_lvm_config(const char *state, const struct records *rs,
                    const struct devlist *l, const char *cmd, int quiet)
{
  struct farm_dev **sorted = NULL;
  const char **pvids;
  int r, warned = 0;

  pvids = calloc(rs->n + 1, sizeof *pvids);
  if (!pvids)
    return ff_error("out of memory");
  if (l && l->n) {
    sorted = malloc(l->n * sizeof *sorted);
    if (!sorted) {
      free(pvids);
      return ff_error("out of memory");
    }
    for (size_t i = 0; i < l->n; i++)
      sorted[i] = &l->v[i];
    qsort(sorted, l->n, sizeof *sorted, fa_cmp_dev_name);
  }
  for (size_t i = 0; i < rs->n; i++) {
    if (!rs->v[i].keep)
      continue;
    pvids[i] = pvid_of(sorted, l ? l->n : 0, rs->v[i].name);
    if (has_blank(rs->v[i].backing) && !warned && !quiet) {
      /* Loop numbers change across reattach; good enough until then. */
      fprintf(stderr,
              "fusefarm %s: warning: %s has a blank in its path: the "
              "devices file names its loops by device name instead\n",
              cmd, rs->v[i].backing);
      warned = 1;
    }
  }
  r = write_fence(state, rs, pvids);
  free(sorted);
  free(pvids);
  return r;
}

int
fa_filter_lvm_config(const char *state, const struct records *rs)
{
  struct ff_fence_devlist old = {NULL, 0};
  const char **pvids;
  char path[PATH_MAX];
  int r;

  if (fa_join(path, state, "lvm/devices/system.devices") < 0)
    return -1;
  if (access(path, F_OK) == 0 && ff_fence_read_devices(path, &old) < 0)
    return -1;
  pvids = calloc(rs->n + 1, sizeof *pvids);
  if (!pvids) {
    ff_fence_devlist_free(&old);
    return ff_error("out of memory");
  }
  for (size_t i = 0; i < rs->n; i++)
    for (size_t j = 0; rs->v[i].keep && j < old.n; j++)
      if (!strcmp(old.v[j].devname, rs->v[i].dev))
        pvids[i] = old.v[j].pvid;
  r = write_fence(state, rs, pvids);
  free(pvids);
  ff_fence_devlist_free(&old);
  return r;
}
