/* fusefarm: keeping a host's udev, lvm2, systemd, blkid and udisks off
 * the farm's loop devices.
 *
 * On a host with udev, every loop device fires a "change" event when a
 * file is bound to it, and lvm2's own rule (69-dm-lvm.rules in 2.03,
 * 69-dm-lvm-metad.rules in 2.02) then runs `pvscan --cache
 * --autoactivation event` on it: the host's lvm, with the host's
 * lvm.conf, activates every farm VG, its dm devices hold the loops open
 * and two farms of one spec collide on VG names and dm UUIDs.  So while
 * a farm is attached, two rule files name its mount point:
 *
 *   /run/udev/rules.d/00-fusefarm-<hash>.rules   before every other rule:
 *     for a loop whose backing file lies in the mount, set
 *     FUSEFARM_MOUNT=<mount>, DM_UDEV_DISABLE_OTHER_RULES_FLAG=1 (the
 *     first thing every dialect of lvm2's rule checks: it then ends),
 *     UDEV_DISABLE_PERSISTENT_STORAGE_RULES_FLAG=1 (no blkid probe, no
 *     /dev/disk links: systemd 249 and later), SYSTEMD_READY=0 (no
 *     .device unit becomes ready), UDISKS_IGNORE=1 (no desktop disk);
 *   /run/udev/rules.d/61-fusefarm-<hash>.rules   after blkid ran (older
 *     systemd): clear the ID_FS_* it found, so mdadm's and lvm2's rules
 *     see no signature.
 *
 * `fusefarm attach` writes them before the first loop is bound and
 * reloads udevd; `fusefarm detach` removes them once the farm's loops are
 * gone.  A host without /run/udev has no udev at work: nothing is
 * written there.
 *
 * Whatever the host did before the rules were there (a farm attached by
 * an older fusefarm, or by hand) shows as device-mapper devices stacked
 * on farm loops (sysfs holders): ff_udev_host_holders lists them, and
 * detach removes exactly those, nothing else.
 *
 * No threads, no state of its own.  Errors: -1 after ff_error().
 */
#ifndef FF_UDEV_H
#define FF_UDEV_H

#include <stddef.h>

#define FF_UDEV_RULES_DIR "/run/udev/rules.d"

/* Where the rules go: $FUSEFARM_UDEV_RULES_DIR when set (a test's own
 * directory, read by `udevadm test` in its private namespace), else
 * FF_UDEV_RULES_DIR. */
const char *ff_udev_rules_dir(void);

/* The rule files' paths for mnt_real (PATH_MAX each); 0 or -1. */
int ff_udev_rule_paths(const char *mnt_real, char *early, char *late);

/* The two files' text (malloc'd), or NULL with an ff_error when
 * mnt_real holds a character that udev's patterns cannot take literally
 * (* ? [ ] | " \ or a control character). */
char *ff_udev_rules_text(const char *mnt_real, int late);

/* Is udevd running (its control socket exists)? */
int ff_udev_running(void);

/* Write both rule files (atomically) and, when udevd runs, make it read
 * them before returning; nothing without /run/udev (and no override).
 * 0 or -1. */
int ff_udev_fence(const char *mnt_real);

/* Remove both rule files (those that exist) and reload udevd.  0 or -1. */
int ff_udev_unfence(const char *mnt_real);

/* Wait until udevd has handled every event queued so far (bounded: 120
 * s); 0 when no udevd runs. */
int ff_udev_settle(void);

/* 1 when udev's database says the loop device dev ("/dev/loop7") was
 * fenced for mnt_real, 0 when udev handled it without our rule, -1 when
 * it holds nothing for it (no udevd, or not handled yet). */
int ff_udev_loop_fenced(const char *dev, const char *mnt_real);

/* The device-mapper devices stacked on the loop devices devs[n] (names
 * as /dev/loopN), directly or through other dm devices, as dm names in
 * an order that removes each before what it sits on (top first).  Only
 * dm devices resting on nothing but these loops (and each other) are
 * listed.  *names (malloc'd array of malloc'd strings, NULL when none)
 * and *count; 0 or -1. */
int ff_udev_host_holders(const char *const *devs, size_t n, char ***names,
                         size_t *count);

/* Remove those dm devices (dmsetup remove, in the given order); the
 * number removed, or -1 after the first that could not be. */
int ff_udev_remove_dm(char *const *names, size_t count);

void ff_udev_names_free(char **names, size_t count);

/* ---- farm PVs by content: `fusefarm udev-rule` --------------------------
 *
 * The loop rules above name a mount point, so they cover loops attach
 * made.  Farm devices reach hosts other ways too: `nbd-client` of the
 * nbdkit plugin's exports, a qemu disk of a guest, a loop of `fusefarm
 * gen`'s images.  Every PV UUID the farm makes starts with
 * FF_PV_UUID_MARK (generators/ff-util.h), and blkid
 * (60-persistent-storage.rules) reports it as ID_FS_UUID; the rule file
 * FF_UDEV_PV_RULE, ordered after blkid and before lvm2's 69-*, gives a
 * block device whose LVM2_member UUID starts "fusefm-" the same
 * properties as a farm loop (FUSEFARM_PV=1), whatever carries it.  A PV
 * UUID that a spec gives (pv_uuids) is not marked, and not matched. */
#define FF_UDEV_PV_RULE     "61-fusefarm-pv.rules"
#define FF_UDEV_PV_RULE_DIR "/etc/udev/rules.d"

/* The rule file's text (static). */
const char *ff_udev_pv_rule_text(void);

/* The block devices udev's database holds as farm PVs (ID_FS_UUID
 * "fusefm-..."), as /dev/KNAME (malloc'd array of malloc'd strings);
 * 0 or -1.  Nothing without udevd. */
int ff_udev_farm_pvs(char ***devs, size_t *count);

/* `udevadm control --reload` when udevd runs; 0 or -1. */
int ff_udev_reload(void);

/* `udevadm trigger --action=change` of the farm PVs udev holds (so that
 * an installed rule applies to those already there); 0 or -1. */
int ff_udev_retrigger_farm_pvs(void);

#endif
