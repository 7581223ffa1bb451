/* fusefarm run: real device-mapper activation, fusefarm/dm = real
 * (runner/ff-dm.h; run-int.h). */
#include "run-int.h"

/* ---- device-mapper (fusefarm/dm = real) ----------------------------------
 */

/* The farm's VG names, one per device (NULL: not a PV), for ff-dm.h. */
#define FARM_VGS(r) ((const char *const *)(r)->fv.vg), NULL, (r)->fv.ndevs

/* Whatever dm devices of the farm's VGs exist go: `vgchange -an` first
 * when lvm is to do it (lvm), then the runner's own removal of anything
 * left.  Counted into r->dm.  0, or -1 with ff_error. */
int
dm_sweep(struct run *r, int lvm)
{
  long before, after;

  before = ff_dm_count(FARM_VGS(r));
  if (before < 0)
    return -1;
  if (!before)
    return 0;
  r->dm.activations++;
  r->dm.created += before;
  if (before > r->dm.max_active)
    r->dm.max_active = before;
  after = before;
  if (lvm) {
    const char *argv[] = {r->lvm_path, "vgchange", "-an", NULL};
    char err[PATH_MAX + 32];

    /* The host's udev may still be probing the new LVs (blkid holds each
     * for a moment): lvm would call them "in use" and keep them. */
    if (ff_dm_wait_released(FARM_VGS(r), 5000) < 0)
      return -1;
    ff_pathf(err, sizeof err, "%s/vgchange-an.err", r->outdir);
    run_wait(r, argv, NULL, err, 1);
    after = ff_dm_count(FARM_VGS(r));
    if (after < 0)
      return -1;
    r->dm.removed += before - after;
  }
  if (after > 0) {
    long gone = ff_dm_remove_all(FARM_VGS(r));

    if (gone < 0)
      return -1;
    r->dm.forced += gone;
  }
  return 0;
}

/* On the way out (any way): no dm device of the farm's VGs is left. */
void
dm_teardown(struct run *r)
{
  long gone;

  if (!r->fv.vg || !ff_dm_usable())
    return;
  gone = ff_dm_remove_all(FARM_VGS(r));
  if (gone < 0)
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
  else if (gone > 0)
    run_say(r, "removed %ld device-mapper device%s of the farm's VGs", gone,
            gone == 1 ? "" : "s");
}

/* Before a configuration with real activation: a dm device that already
 * has a farm VG's name is the host's or another farm's, and lvm's create
 * would fail on it (or a later `vgchange -an` take it down).  Refuse,
 * naming it. */
int
dm_check_clash(struct run *r)
{
  struct ff_dm_list l;
  const struct ff_dm_dev *d;
  char vg[128] = "?";

  if (ff_dm_list(&l) < 0)
    return -1;
  d = ff_dm_clash(&l, FARM_VGS(r));
  if (d) {
    ff_dm_vg_of(d->name, vg, sizeof vg);
    ff_error("fusefarm/dm = real: device-mapper device %s (UUID %s) "
             "already exists, and VG %s is one of the farm's: activating "
             "the farm would clash with it (another farm of the same spec, "
             "or a VG of the host's by that name); tear that down first, "
             "or run with dm = \"none\"",
             d->name, d->uuid[0] ? d->uuid : "none", vg);
    ff_dm_list_free(&l);
    return -1;
  }
  ff_dm_list_free(&l);
  return 0;
}

/* The configuration's device-mapper mode: "real" or "none" from its
 * fusefarm/dm (auto: real when device-mapper answers).  0, or -1 when
 * real is asked of a kernel without it. */
int
dm_resolve(struct run *r, const char *mode, int udev_sync)
{
  int usable = ff_dm_usable();

  if (!strcmp(mode, "real") && !usable) {
    char why[256];

    ff_pathf(why, sizeof why, "%s", ff_errmsg());
    return ff_error("fusefarm/dm = real, but this kernel's device-mapper "
                    "cannot be used (%s); dm = \"auto\" or \"none\" "
                    "activates with --driverloaded n",
                    why);
  }
  r->dm_real = strcmp(mode, "none") && usable;
  r->dm_udev = r->dm_real && udev_sync;
  /* lvm would wait for a udev that never answers, or (libdevmapper's
   * own check) quietly not wait: either way not what the axis asks. */
  if (r->dm_udev && access("/run/udev/control", F_OK) < 0)
    return ff_error("activation/udev_sync = 1 with real device-mapper: lvm "
                    "waits for udev to process every dm device, and no "
                    "udevd runs here (/run/udev/control: %m)");
  memset(&r->dm, 0, sizeof r->dm);
  return 0;
}

json_t *
dm_json(const struct run *r, const char *requested)
{
  return json_pack(
    "{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I}", "mode",
    r->dm_real ? "real" : "none", "requested", requested, "udev_sync",
    r->dm_udev, "activations", (json_int_t)r->dm.activations, "created",
    (json_int_t)r->dm.created, "removed", (json_int_t)r->dm.removed, "forced",
    (json_int_t)r->dm.forced, "max_active", (json_int_t)r->dm.max_active);
}
