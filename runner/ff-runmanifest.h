/* fusefarm: what the runners need from a farm's manifest
 * (docs/manifest.md): its devices in farm order with the VG of each PV,
 * how many VGs and LVs it has, and the LV `lvchange` works on by default.
 *
 * `fusefarm run` reads MNT/.fusefarm/manifest.json of the farm it
 * mounted; `ff-guestrun` reads the manifest `fusefarm vm` put in the
 * guest.  Both read it here, so the "first LV of the first undamaged VG"
 * rule is written once.
 *
 * INVARIANTS (of a manifest ff_runmanifest_load() filled)
 *
 * - names[i] is the name of device i (every device has one); vgs[i] is
 *   its VG when its role is "pv", else NULL (an orphan, a blank, a
 *   signature or a duplicate is in no VG that lvm activates).
 * - first_lv is "VG/LV": the first LV of the first VG, in manifest
 *   order, whose damage is "none" and that has an LV; NULL when no VG
 *   qualifies.
 * - nvgs and nlvs count every VG and LV of the manifest, damaged or not.
 *
 * OWNERSHIP
 *
 * Everything belongs to the struct; ff_runmanifest_release() frees it and
 * zeroes the struct.  A caller may take an array (set the member to NULL)
 * before releasing.
 *
 * ERRORS
 *
 * -1 with one message (ff-error.h) naming the file and what was wrong:
 * "m.json:3: '[' or '{' expected near 'x'", "m.json: devices[2]: no
 * name", "m.json: no devices array".
 */
#ifndef FF_RUNMANIFEST_H
#define FF_RUNMANIFEST_H

#include <stdint.h>

struct ff_runmanifest {
  uint32_t ndevs;
  char **names; /* [ndevs] */
  char **vgs;   /* [ndevs] VG of a PV, NULL otherwise */
  uint32_t nvgs, nlvs;
  char *first_lv; /* "VG/LV" or NULL */
};

/* Read the manifest at path into m (whose previous contents are not
 * looked at).  0, or -1 with m zeroed. */
int ff_runmanifest_load(struct ff_runmanifest *m, const char *path);

/* The same from JSON text; name is used in messages. */
int ff_runmanifest_parse(struct ff_runmanifest *m, const char *text,
                         const char *name);

void ff_runmanifest_release(struct ff_runmanifest *m);

#endif
