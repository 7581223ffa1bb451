/* fusefarm: scenarios for `fusefarm run` (docs/scenario-format.md).
 *
 * A scenario names a farm spec and an I/O profile, the lvm binary, a
 * matrix of settings crossed into configurations, and the workloads timed
 * in each.  Parsed with libconfig like the spec and the profile; every
 * error is "file:line: key: what was expected".
 *
 * Ownership: a struct ff_scenario owns every string and array it holds;
 * ff_scenario_free() releases them.  Paths in it are absolute (relative
 * ones are resolved against the scenario file's directory).
 */
#ifndef FF_SCENARIO_H
#define FF_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

enum ff_wtype {
  FF_W_PVS,
  FF_W_VGS,
  FF_W_LVS,
  FF_W_PVSCAN_CACHE,
  FF_W_EVENT_ACTIVATION,
  FF_W_DIRECT_ACTIVATION,
  FF_W_LVCHANGE,
  FF_W_IO, /* fio against one target (ff-fio.h) */
  FF_W_FS, /* mkfs, mount, fio on files in the filesystem, umount */
  FF_W_COUNT,
};

/* "pvs", "event-activation", ... */
const char *ff_wtype_name(enum ff_wtype t);

/* An io workload's fio job (docs/scenario-format.md): what fio runs
 * against the target, every value checked by the parser.  Strings are
 * owned by the workload. */
struct ff_io_job {
  char *target;        /* a farm device name ("pv0001") or "VG/LV" */
  char *rw;            /* read write randread randwrite rw randrw */
  uint64_t bs;         /* bytes per I/O (4K) */
  unsigned iodepth;    /* 1..1024 (1) */
  int direct;          /* O_DIRECT (1) */
  char *ioengine;      /* libaio (default), psync, io_uring */
  uint64_t size;       /* bytes per job, from offset 0 (16M) */
  uint64_t runtime_ns; /* 0: none; else time_based for this long */
  unsigned fsync;      /* fsync every N writes (0: never) */
  unsigned fdatasync;  /* fdatasync every N writes (0: never) */
  unsigned numjobs;    /* jobs at once on the target (1) */
  /* fs workloads only (NULL / 0 for io): the filesystem fio's files
   * live in */
  char *fstype;        /* "ext4" or "xfs" */
  char *mkfs_options;  /* more mkfs arguments, split at blanks ("") */
  char *mount_options; /* mount's -o ("": the filesystem's defaults) */
  unsigned nrfiles;    /* files per job (1) */
  /* The filesystem's sysfs tunables, written after mount into
   * /sys/fs/FSTYPE/DEV/KEY: "KEY=VALUE[,KEY=VALUE...]" ("": none) */
  char *fs_tunables;
  /* > 0: instead of fio, each of numjobs processes makes a directory of
   * its own at the root and mkdirs directories in it (mdtest -D -C) */
  unsigned mkdirs;
};

struct ff_workload {
  char *name; /* default: the type's name */
  enum ff_wtype type;
  unsigned repeat;      /* >= 1 */
  bool repeat_auto;     /* repeat = "auto": rounds until confident */
  unsigned concurrency; /* event-activation: commands at once (64) */
  uint64_t spread_ns;   /* event-activation: arrivals spread over this */
  unsigned count;       /* lvchange: commands per repetition (10) */
  char *lv;             /* lvchange: "VG/LV", NULL: the farm's first LV */
  struct ff_io_job io;  /* io, fs: the fio job */
};

/* One value of a matrix axis: an integer or a string. */
struct ff_sval {
  int is_str;
  int64_t i;
  char *s;
  unsigned line; /* its line in the scenario file, 0: unknown (--lvm) */
};

/* Matrix keys: "section/key" of lvm.conf (devices/hints, global/use_aio,
 * ...), or the runner's own: fusefarm/profile (a profile path or
 * "ideal"), fusefarm/aio_contention (0 or 1), fusefarm/aio_inflight (the
 * companion's reads in flight), fusefarm/devices (scale the
 * farm to this many devices), fusefarm/fence ("none", "devicesfile",
 * "devicesfile-all", "devicesfile-used", "filter"), fusefarm/lvm (lvm builds:
 * a path, a name on PATH or a git ref of the lvm_git tree; `lvm = [...]` is
 * its shorthand; fusefarm run resolves each and replaces the value by the
 * build's short version), fusefarm/target (the target of every io and fs
 * workload), fusefarm/fstype, fusefarm/mount_options and fusefarm/fs_tunables
 * (every fs workload's), fusefarm/spec (the farm's spec), fusefarm/dm ("auto",
 * "real", "none": how activation runs). devices/use_devicesfile = 0 replaces
 * the devices file by a global_filter that accepts only the farm's devices. */
struct ff_axis {
  char *key;
  unsigned line;  /* the line of its key in the scenario, 0: unknown */
  unsigned index; /* its place in the scenario's matrix list (messages'
                     matrix.[index]); a fusefarm/lvm axis made of the lvm
                     list or --lvm, which goes first, has none (0) */
  unsigned nvalues;
  struct ff_sval *values;
};

struct ff_scenario {
  char *file; /* absolute path, or "<built-in>" */
  char *name;
  char *description;
  char *spec;            /* absolute path of the farm spec, NULL: built-in */
  char *farm;            /* or the spec's text, inline (key farm) */
  char *attach;          /* how devices reach lvm: "loop" (FUSE + loop) */
  uint64_t devices;      /* scale the farm to this many devices, 0: as is */
  char *profile;         /* absolute path, NULL: ideal (or latency) */
  unsigned profile_line; /* the line of the profile key, 0: none */
  uint64_t latency_ns;   /* shorthand: fixed read and write latency */
  char *lvm;             /* lvm binary: a path or a name on PATH (the
                            first entry of the fusefarm/lvm axis if any) */
  char *lvm_git;         /* lvm_git: the lvm2 tree refs are built from
                            (absolute, or a URL), NULL: none given */
  char *dir;             /* the scenario file's directory, NULL: none */
  double aio_share;      /* fusefarm/aio_contention: share of the free
                            aio-max-nr the companion reserves (0.98) */
  unsigned aio_inflight; /* reads it keeps in flight (32) */
  char *fence;           /* "none" (default: the private /dev alone),
                            "devicesfile" (alias "devicesfile-all"),
                            "devicesfile-used" or "filter" (ff-fence.h);
                            fusefarm/fence overrides */
  char *dm;              /* "auto" (default: real when the kernel has
                            device-mapper), "real" or "none" (activation
                            with --driverloaded n); fusefarm/dm overrides */
  char *dev_names;       /* the farm's nodes in the private /dev: "farm"
                            (default: as the PVs' hints say), "loop", "disk" */
  /* repeat = "auto" (ff-plan.h): the most rounds (0: the default) and
   * the time budget (0: the default) */
  unsigned repeat_max_rounds;
  uint64_t repeat_budget_ns;
  int flamegraph; /* flamegraph = true: sample each workload's first
                     repetition with perf where it can (fusefarm
                     run --flamegraph insists) */
  unsigned naxes;
  struct ff_axis *axes;
  unsigned nworkloads;
  struct ff_workload *workloads;
};

struct ff_scenario *ff_scenario_load_file(const char *path);
struct ff_scenario *ff_scenario_load_string(const char *text, const char *name,
                                            const char *basedir);
void ff_scenario_free(struct ff_scenario *sc);

/* The built-in default: the README's main job (1000 devices, a small
 * matrix, every workload, a few minutes on 2 cores). */
extern const char ff_scenario_builtin_default[];

/* Number of configurations: the product of the axes' value counts. */
uint64_t ff_scenario_nconfigs(const struct ff_scenario *sc);

/* The value index of each axis in configuration k (0-based; the first
 * axis varies slowest).  idx has naxes entries. */
void ff_scenario_config(const struct ff_scenario *sc, uint64_t k,
                        unsigned *idx);

/* 1 if s is a device-mapper mode: auto, real, none. */
int ff_scenario_dm_valid(const char *s);

/* Where a scenario asks for a device-mapper mode (ff_scenario_dm_asks). */
enum ff_dm_asker {
  FF_DM_NOT_ASKED = 0,
  FF_DM_ASKED_OVERRIDE, /* the command line's override (--dm) */
  FF_DM_ASKED_KEY,      /* the scenario's dm key */
  FF_DM_ASKED_AXIS,     /* a value of its fusefarm/dm axis */
};

/* Whether sc asks for the device-mapper mode mode ("auto", "real",
 * "none"), and where: with a fusefarm/dm axis, if any of its values is
 * mode (override is not looked at: the caller refuses it beside the
 * axis); else if override (NULL: none given), or else sc's dm key, is
 * mode. */
enum ff_dm_asker ff_scenario_dm_asks(const struct ff_scenario *sc,
                                     const char *override, const char *mode);

/* 1 if s is a fence the runner knows (ff_fence_mode_parse). */
int ff_scenario_fence_valid(const char *s);

/* Replace the scenario's lvm by entries[n] (`fusefarm run --lvm`, given
 * n times): one entry sets lvm and drops a fusefarm/lvm axis, several
 * make (or replace) the fusefarm/lvm axis, the first axis.  -1 with
 * ff_error. */
int ff_scenario_set_lvms(struct ff_scenario *sc, const char *const *entries,
                         unsigned n);

/* 1 if t can be an io or fs workload's target: a farm device's name
 * ("pv0001") or an LV as "VG/LV" (lvm's name rules). */
int ff_scenario_target_valid(const char *t);

/* 1 if s is a filesystem an fs workload makes: ext4, xfs. */
int ff_scenario_fstype_valid(const char *s);

/* 1 if s is a transport of the fusefarm/transport axis: scsi (the
 * guest's disks on virtio-scsi, the default), nbd (the guest's kernel nbd
 * client). */
int ff_scenario_transport_valid(const char *s);

/* 1 if the scenario's fusefarm/transport axis has the value "nbd" (only
 * `fusefarm vm`'s initramfs boot attaches over nbd). */
int ff_scenario_uses_nbd(const struct ff_scenario *sc);

/* The axis named key, or NULL. */
const struct ff_axis *ff_scenario_axis(const struct ff_scenario *sc,
                                       const char *key);

/* An fs workload's fs_tunables (and a fusefarm/fs_tunables value):
 * "" or "KEY=VALUE[,KEY=VALUE...]", each KEY [a-z0-9_]+, each VALUE
 * non-empty without a slash, blank or quote.  0, or -1 with ff_error. */
int ff_scenario_tunables_check(const char *t);

#endif
