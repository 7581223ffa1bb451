/* fusefarm: device-mapper as the runner needs it (`fusefarm run` with
 * fusefarm/dm = real), through the kernel's control node and its ioctls
 * (linux/dm-ioctl.h), without libdevmapper.
 *
 * What for:
 * - whether this kernel can make dm devices at all (ff_dm_usable), which
 *   decides fusefarm/dm = auto;
 * - the devices that exist now, with their UUIDs (ff_dm_list): before a
 *   run activates anything, a device the host or another farm has with a
 *   farm VG's name or UUID is a clash, and the run refuses, naming it
 *   (the kernel would refuse lvm's create with a bare EBUSY instead);
 * - which of them are the run's (ff_dm_of_vgs: lvm names a VG's devices
 *   "VG-LV[-layer]" with '-' doubled inside VG and LV, their UUIDs
 *   "LVM-<VG uuid><LV uuid>[-layer]" without the dashes);
 * - removing them (ff_dm_remove_all), top first, whatever state lvm left;
 *   a device held open for a moment (udev's blkid) is tried again for
 *   up to 5 s, as `dmsetup remove --retry` does.
 *
 * The control node is /dev/mapper/control (in the runner's private /dev
 * it is a node of the host's).  Every call opens and closes it.
 *
 * Ownership: ff_dm_list's array is the caller's, freed with
 * ff_dm_list_free.  Errors: -1 after ff_error().
 */
#ifndef FF_DM_H
#define FF_DM_H

#include <stddef.h>

struct ff_dm_dev {
  char name[128]; /* DM_NAME_LEN */
  char uuid[129]; /* DM_UUID_LEN */
  int open_count;
  unsigned long long dev; /* the kernel's dev_t (huge_encode_dev) */
};

struct ff_dm_list {
  struct ff_dm_dev *v;
  size_t n;
};

/* 1 when device-mapper answers on /dev/mapper/control (its version read
 * with DM_VERSION), else 0 with ff_error saying what is missing. */
int ff_dm_usable(void);

/* Every dm device of the kernel, with its UUID and open count. */
int ff_dm_list(struct ff_dm_list *out);
void ff_dm_list_free(struct ff_dm_list *l);

/* Split lvm's dm name "VG-LV..." into the VG ('--' is one '-'); 0, or -1
 * when name is not one of lvm's. */
int ff_dm_vg_of(const char *name, char *vg, size_t len);

/* Whether device d belongs to one of the VGs vgs[0..n) (names) or
 * vg_uuids[0..n) (lvm's form with dashes; NULL entries skipped): 1 or 0. */
int ff_dm_of_vgs(const struct ff_dm_dev *d, const char *const *vgs,
                 const char *const *vg_uuids, size_t n);

/* The first device of l that belongs to one of the VGs (as ff_dm_of_vgs),
 * or NULL. */
const struct ff_dm_dev *ff_dm_clash(const struct ff_dm_list *l,
                                    const char *const *vgs,
                                    const char *const *vg_uuids, size_t n);

/* Remove every device of the VGs: those nobody holds open first, again
 * until none is left or a pass removes nothing.  The number removed, or
 * -1 (ff_error names the first device that could not be removed). */
long ff_dm_remove_all(const char *const *vgs, const char *const *vg_uuids,
                      size_t n);

/* Wait until no device of the VGs is held open by anything but another
 * of them (the host's udev probing a new LV with blkid holds it for a
 * moment, and lvm then refuses to deactivate it "in use"): polls every
 * 20 ms for at most ms milliseconds.  The number still held, or -1. */
long ff_dm_wait_released(const char *const *vgs, const char *const *vg_uuids,
                         size_t n, unsigned ms);

/* How many devices of the VGs exist now, or -1. */
long ff_dm_count(const char *const *vgs, const char *const *vg_uuids,
                 size_t n);

#endif
