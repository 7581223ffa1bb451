/* fusefarm: lvm fencing, the one place that writes a private lvm.conf and
 * the devices file that makes lvm see exactly the farm's devices.
 *
 * Used by `fusefarm attach` (its state dir), `fusefarm run` (each matrix
 * configuration), `fusefarm vm` (the guest's /etc/lvm/lvm.conf) and the
 * test helpers (tests/lib/lvm-env.sh through `fusefarm fence`).
 *
 * Inputs: the farm's devices, what the lvm build supports (struct
 * ff_lvm_caps, read from `lvm version` output) and the lvm settings of one
 * scenario configuration ("section/key" = int | string | list).
 * Outputs: lvm.conf text and devices-file text, or, for an lvm build
 * without a devices file (lvm2 before 2.03.12), lvm.conf with a
 * devices/global_filter and filter accepting exactly the farm's devices.
 *
 * Invariant (the reason for this module): the lvm.conf text depends only
 * on the settings and the lvm build, never on where it runs.  Device
 * names go into the devices file; paths in lvm.conf are fixed ones that
 * every fenced caller makes private with a mount namespace (/run/lvm and
 * /run/lock/lvm are bind mounts of a scratch directory).  So one scenario
 * configuration gives a byte-identical lvm.conf on the host and in the
 * guest.  The one exception is the filter form: there the device names
 * must be in lvm.conf, and host and guest lvm.conf differ in the two
 * filter lines only.
 *
 * Ownership: the fence holds pointers to the caller's strings (settings,
 * devices); they must outlive it.  Texts returned are malloc'd, the
 * caller frees them.  Errors: -1 or NULL after ff_error().
 */
#ifndef FF_FENCE_H
#define FF_FENCE_H

#include <stddef.h>
#include <stdint.h>

struct ff_scenario;

/* What the lvm build supports. */
struct ff_lvm_caps {
  unsigned major, minor, patch; /* 2.03.16 -> 2, 3, 16 */
  int has_devicesfile;          /* devices/use_devicesfile (>= 2.03.12) */
  int has_hints;                /* devices/hints (>= 2.03.02) */
};

/* An lvm version as one number, for comparisons: FF_LVM_V(2, 3, 12). */
#define FF_LVM_V(a, b, c) ((a)*1000000u + (b)*1000u + (c))

/* caps' version as FF_LVM_V() gives it. */
unsigned ff_lvm_caps_version(const struct ff_lvm_caps *caps);

/* How a build's own udev rule and systemd units ran event activation at
 * boot (the runner's event-activation workload runs it the same way;
 * the table is in ff-fence.c, with what each version's files ran). */
enum ff_lvm_dialect {
  /* 2.03.15+: 69-dm-lvm.rules runs `pvscan --cache --listvg
   * --checkcomplete --vgonline --autoactivation event --udevoutput DEV`
   * per device, then `vgchange -aay --autoactivation event VG` per
   * complete VG (systemd-run).  0: the default of a zeroed ff_wenv. */
  FF_DIALECT_EVENT = 0,
  /* 2.03.14: the same rule without --autoactivation (first version of
   * 69-dm-lvm.rules); the VG's command is `vgchange -aay --nohints VG`. */
  FF_DIALECT_EVENT_2_03_14,
  /* 2.03.00-2.03.13: 69-dm-lvm-metad.rules wants
   * lvm2-pvscan@MAJ:MIN.service, which runs `pvscan --cache --activate ay
   * MAJ:MIN`; that pvscan activates the VG itself when it completes it. */
  FF_DIALECT_PVSCAN_AY,
  /* 2.02.x with global/use_lvmetad = 1: lvm2-lvmetad.service runs
   * `lvmetad -f`, lvm2-pvscan@MAJ:MIN.service `pvscan --cache --activate
   * ay MAJ:MIN` (the lvmetad cache decides when a VG is complete). */
  FF_DIALECT_LVMETAD,
  /* 2.02.x with global/use_lvmetad = 0: the udev rule runs no pvscan;
   * boot activation was `vgchange -aay` (lvm2-activation*.service), so
   * event activation does not apply. */
  FF_DIALECT_NONE,
};

/* "event", "event-2.03.14", "pvscan-activate", "lvmetad", "none". */
const char *ff_lvm_dialect_name(enum ff_lvm_dialect d);

/* The dialect of a build; use_lvmetad (global/use_lvmetad of the
 * configuration, 0 when not set) matters for 2.02.x only. */
enum ff_lvm_dialect ff_lvm_dialect_for(const struct ff_lvm_caps *caps,
                                       int use_lvmetad);

/* Whether the build knows lvm.conf key ("section/name"): 0 when the key
 * came in a later version or was removed before this one (then *why, if
 * why is given, says which: "since 2.03.12", "removed in 2.03.00"), 1
 * otherwise, including keys the table does not list (ff-fence.c: the keys
 * the fence writes and the scenarios of configs/ use). */
int ff_lvm_key_known(const struct ff_lvm_caps *caps, const char *key,
                     const char **why);

/* 1 if the version table above lists key: a setting some lvm version
 * knows, which the fence leaves out (and names in a note) for a build
 * that does not; 0 otherwise. */
int ff_lvm_key_listed(const char *key);

/* The capabilities of an lvm build from its `lvm version` output ("  LVM
 * version:     2.03.16(2) (2022-05-18)" somewhere in text).  0 or -1
 * (no LVM version line). */
int ff_lvm_caps_parse(const char *text, struct ff_lvm_caps *caps);

/* Capabilities for version major.minor.patch. */
void ff_lvm_caps_for(unsigned major, unsigned minor, unsigned patch,
                     struct ff_lvm_caps *caps);

/* Run `LVM version` (lvm: a path or a name on PATH) with LVM_SYSTEM_DIR
 * set to system_dir (so the host's /etc/lvm is not read) and parse it. */
int ff_lvm_caps_probe(const char *lvm, const char *system_dir,
                      struct ff_lvm_caps *caps);

enum ff_fence_vtype { FF_FENCE_INT, FF_FENCE_STR, FF_FENCE_LIST };

/* One lvm.conf setting. */
struct ff_fence_setting {
  const char *key; /* "section/name" */
  enum ff_fence_vtype type;
  int64_t i;
  const char *s;
  const char *const *list; /* FF_FENCE_LIST: nlist strings */
  size_t nlist;
};

/* One device lvm may see.  The devices file names it by its backing file
 * (IDTYPE=loop_file) when one is given and has no blank, else by its
 * device name (IDTYPE=devname). */
struct ff_fence_dev {
  const char *devname; /* "/dev/loop12" */
  const char *backing; /* loop's backing file, or NULL */
  const char *pvid;    /* 32 characters, or NULL / "": unknown */
};

/* Which fence: AUTO (0) is the devices file where the build has one and
 * the settings do not turn it off, else the filter.  NONE writes neither:
 * lvm.conf holds the scenario's settings alone, as the reporter's own
 * would; only a caller whose lvm sees nothing but farm devices (the
 * runner's private /dev, ff-privdev.h) may ask for it.  DEVICESFILE is
 * AUTO over every device the caller gives (the safety fence: every farm
 * device listed); DEVICESFILE_USED is AUTO too, for a caller that gave
 * only the PVs of the VGs its workloads use (ff_fence_used_vgs): a
 * devices file as a user's host has one, so lvm skips the devices it does
 * not name although they are in /dev.  FILTER is the filter form
 * whatever the build has. */
enum ff_fence_mode {
  FF_FENCE_AUTO = 0,
  FF_FENCE_MODE_NONE,
  FF_FENCE_MODE_DEVICESFILE,
  FF_FENCE_MODE_DEVICESFILE_USED,
  FF_FENCE_MODE_FILTER,
};

/* The fence values, as every message about a bad one lists them. */
#define FF_FENCE_VALUES                                                       \
  "\"none\", \"devicesfile\", \"devicesfile-all\", \"devicesfile-used\" "     \
  "or \"filter\""

/* "none", "devicesfile" (or its alias "devicesfile-all"),
 * "devicesfile-used", "filter" -> *out; 0, or -1 with the message
 * 'fence "S": expected ...' (FF_FENCE_VALUES). */
int ff_fence_mode_parse(const char *s, enum ff_fence_mode *out);

/* The VGs whose PVs fence devicesfile-used lists: those a
 * configuration's workloads use, as a host's devices file lists the PVs
 * of the VGs that host uses.  all = 1 when a workload scans or activates
 * every VG (pvs, vgs, lvs, pvscan-cache, event-activation,
 * direct-activation); else the VGs named by lvchange workloads (lv, or
 * the farm's first LV) and by io/fs workloads whose target is "VG/LV"
 * (the configuration's fusefarm/target replacing theirs).  A target that
 * is a farm device or "ram" names no VG: fio opens it without lvm. */
struct ff_fence_vgs {
  int all;
  char **v; /* [n] VG names, each once, in the workloads' order */
  size_t n;
};

/* Fill *out (whose previous contents are not looked at) for sc's
 * workloads; first_lv ("VG/LV", or NULL) is lvchange's default, target
 * the configuration's fusefarm/target (NULL: each workload's own).
 * 0, or -1 (out of memory) with *out empty. */
int ff_fence_used_vgs(const struct ff_scenario *sc, const char *first_lv,
                      const char *target, struct ff_fence_vgs *out);
void ff_fence_vgs_free(struct ff_fence_vgs *u);

/* 1 if devicesfile-used lists a device whose VG is vg (NULL: the device
 * is in no VG: an orphan PV, a blank, another signature, a duplicate),
 * 0 otherwise: a device in no VG never, a PV when its VG is used. */
int ff_fence_vgs_lists(const struct ff_fence_vgs *u, const char *vg);

struct ff_fence {
  struct ff_lvm_caps caps;
  enum ff_fence_mode mode;
  /* Devices lvm may see.  restrict_devices = 0: no restriction at all
   * (a guest, whose every disk is the farm's): no devices file is
   * needed, and the filter form accepts everything. */
  int restrict_devices;
  const struct ff_fence_dev *devs;
  size_t ndevs;
  /* The configuration's lvm settings, in order; fusefarm/... keys (the
   * runner's own) are ignored.  devices/use_devicesfile = 0 asks for the
   * filter form even where the build has a devices file. */
  const struct ff_fence_setting *settings;
  size_t nsettings;
  const char *title; /* a comment line in lvm.conf, or NULL */
};

/* The lvm settings of scenario configuration k (fusefarm/... axes left
 * out), in the matrix's order.  *out is malloc'd (free it; the strings
 * belong to sc).  0 or -1. */
int ff_fence_scenario_settings(const struct ff_scenario *sc, uint64_t k,
                               struct ff_fence_setting **out, size_t *n);

/* 1 if this fence writes a filter instead of using a devices file. */
int ff_fence_uses_filter(const struct ff_fence *f);

/* The dialect of this fence's build with its settings (global/use_lvmetad
 * counts on 2.02.x builds only). */
enum ff_lvm_dialect ff_fence_dialect(const struct ff_fence *f);

/* The settings this build does not know, which lvm.conf leaves out: ""
 * when none, else "global/use_aio (since 2.02.183), ..." (malloc'd,
 * caller frees; NULL after ff_error: out of memory). */
char *ff_fence_left_out(const struct ff_fence *f);

/* lvm.conf text: which devices lvm may see (the devices file, or the
 * filter) and the scenario's settings the build knows (ff_lvm_key_known;
 * the others are left out, ff_fence_left_out() names them), nothing that
 * depends on the machine; NULL after ff_error() for a bad key or value. */
char *ff_fence_lvm_conf(const struct ff_fence *f);

/* lvmlocal.conf text: what a fenced lvm on the host needs besides (lvm
 * reads it after lvm.conf, so it wins): no udev (device list from /dev,
 * no udev sync or rules), no hints, no monitoring, no host daemons,
 * locking and backup dirs under the private /run, nothing written under
 * /etc/lvm, no syslog.  A key the scenario sets is left out here, so the
 * scenario's value holds, and so is a key the build does not know (2.02
 * warns about each unknown one).  On 2.02.x it also sets use_lvmetad = 0
 * unless the scenario sets it.  A guest gets no lvmlocal.conf from us: its lvm
 * runs with its image's defaults, as on a real system. */
char *ff_fence_lvmlocal_conf(const struct ff_fence *f);

/* devices/system.devices text (the header and one line per device). */
char *ff_fence_devices_file(const struct ff_fence *f);

/* Write DIR/lvm.conf, DIR/lvmlocal.conf and DIR/devices/system.devices
 * (creating DIR/devices) atomically.  In the filter form the devices file is
 * still written, with no device in it, so a later lvm with a devices file sees
 * nothing by accident.  0 or -1. */
int ff_fence_write(const char *dir, const struct ff_fence *f);

/* Devices read back from a devices file (`fusefarm detach` filters the
 * file attach wrote; `fusefarm run` re-fences from it).  Strings are
 * owned by the list; ff_fence_devlist_free() releases them. */
struct ff_fence_devlist {
  struct ff_fence_dev *v;
  size_t n;
};

/* Parse devices-file text: comment, VERSION= and blank lines are skipped;
 * each "IDTYPE=... IDNAME=... DEVNAME=... PVID=..." line gives one device
 * (IDTYPE loop_file keeps IDNAME as the backing file).  name is for
 * messages ("file:line: ...").  0 or -1. */
int ff_fence_parse_devices(const char *text, const char *name,
                           struct ff_fence_devlist *out);
int ff_fence_read_devices(const char *path, struct ff_fence_devlist *out);
void ff_fence_devlist_free(struct ff_fence_devlist *l);

#endif
