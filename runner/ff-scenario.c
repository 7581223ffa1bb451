/* fusefarm: scenario parser (see ff-scenario.h, docs/scenario-format.md). */
#include "ff-scenario.h"
#include "ff-cfg-int.h"
#include "ff-error.h"
#include "ff-fence.h"
#include "ff-profile.h"
#include "ff-util.h"

#include <ctype.h>
#include <libconfig.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char ff_scenario_builtin_default[] =
  "# The built-in default scenario (`fusefarm run` with no argument):\n"
  "# 160 devices with the shape of a SAN host (builtin:default-1000 at\n"
  "# 16%: 136 VGs, 8 orphans), every workload 4 times (what the\n"
  "# verdict needs for its 95% interval) so that it can tell a result\n"
  "# from noise, with and without libaio, on an ideal farm and under\n"
  "# 1 ms of latency (docs/results.md: what it measures; about 3\n"
  "# minutes on an idle 2-core machine).\n"
  "name = \"default\";\n"
  "description = \"160 devices: scans, event-style vs direct activation, "
  "lvchange; use_aio x latency; 4 repetitions each\";\n"
  "spec = \"builtin:default-1000\";\n"
  "devices = 160;\n"
  "matrix = ( { key = \"global/use_aio\"; values = [1, 0]; },\n"
  "           { key = \"fusefarm/profile\"; values = [\"ideal\", "
  "\"builtin:fixed-1ms\"]; } );\n"
  "workloads = ( { type = \"pvs\"; repeat = 4; },\n"
  "              { type = \"pvscan-cache\"; repeat = 4; },\n"
  "              { type = \"event-activation\"; concurrency = 64; "
  "repeat = 4; },\n"
  "              { type = \"direct-activation\"; repeat = 4; },\n"
  "              { type = \"lvchange\"; count = 5; repeat = 4; } );\n";

static const char *const wtype_names[FF_W_COUNT] = {
  [FF_W_PVS] = "pvs",
  [FF_W_VGS] = "vgs",
  [FF_W_LVS] = "lvs",
  [FF_W_PVSCAN_CACHE] = "pvscan-cache",
  [FF_W_EVENT_ACTIVATION] = "event-activation",
  [FF_W_DIRECT_ACTIVATION] = "direct-activation",
  [FF_W_LVCHANGE] = "lvchange",
  [FF_W_IO] = "io",
  [FF_W_FS] = "fs",
};

const char *
ff_wtype_name(enum ff_wtype t)
{
  return (unsigned)t < FF_W_COUNT ? wtype_names[t] : "?";
}

/* A path in the scenario: "builtin:NAME" is kept as is, an absolute path
 * too, a relative one is resolved against the scenario's directory. */
static char *
resolve(const char *basedir, const char *p)
{
  char *out;

  if (!strncmp(p, "builtin:", 8) || p[0] == '/' || !basedir)
    return strdup(p);
  if (asprintf(&out, "%s/%s", basedir, p) < 0)
    return NULL;
  return out;
}

static int
valid_matrix_key(const char *k)
{
  const char *slash = strchr(k, '/');

  if (!slash || slash == k || !slash[1] || strchr(slash + 1, '/'))
    return 0;
  for (const char *p = k; *p; p++)
    if (p != slash && !islower((unsigned char)*p) &&
        !isdigit((unsigned char)*p) && *p != '_')
      return 0;
  return 1;
}

static int
parse_axis(const char *file, const config_setting_t *g, const char *path,
           const char *basedir, struct ff_axis *ax)
{
  static const char *const keys[] = {"key", "values", NULL};
  const config_setting_t *vals;
  char kp[256];

  if (ff_cfg_check_keys(file, g, path, keys) < 0 ||
      ff_cfg_str(file, g, path, "key", &ax->key) < 0)
    return -1;
  if (!ax->key)
    return ff_cfg_err(file, g, path,
                      "missing key (expected a name such "
                      "as \"global/use_aio\")");
  ff_cfg_join(kp, sizeof kp, path, "key");
  ax->line =
    (unsigned)config_setting_source_line(config_setting_get_member(g, "key"));
  if (!valid_matrix_key(ax->key))
    return ff_cfg_err(file, config_setting_get_member(g, "key"), kp,
                      "'%s' is not SECTION/NAME in lowercase, such as "
                      "\"devices/hints\" or \"fusefarm/profile\"",
                      ax->key);
  if (!strncmp(ax->key, "fusefarm/", 9) &&
      strcmp(ax->key, "fusefarm/profile") &&
      strcmp(ax->key, "fusefarm/aio_contention") &&
      strcmp(ax->key, "fusefarm/aio_inflight") &&
      strcmp(ax->key, "fusefarm/devices") &&
      strcmp(ax->key, "fusefarm/spec") && strcmp(ax->key, "fusefarm/fence") &&
      strcmp(ax->key, "fusefarm/lvm") && strcmp(ax->key, "fusefarm/target") &&
      strcmp(ax->key, "fusefarm/fstype") &&
      strcmp(ax->key, "fusefarm/mount_options") &&
      strcmp(ax->key, "fusefarm/fs_tunables") &&
      strcmp(ax->key, "fusefarm/transport") && strcmp(ax->key, "fusefarm/dm"))
    return ff_cfg_err(
      file, config_setting_get_member(g, "key"), kp,
      "unknown runner setting '%s' (expected "
      "fusefarm/profile, fusefarm/aio_contention, "
      "fusefarm/aio_inflight, fusefarm/devices, "
      "fusefarm/spec, fusefarm/fence, fusefarm/lvm, fusefarm/target, "
      "fusefarm/fstype, fusefarm/mount_options, "
      "fusefarm/fs_tunables, "
      "fusefarm/transport or fusefarm/dm)",
      ax->key);
  vals = config_setting_get_member(g, "values");
  ff_cfg_join(kp, sizeof kp, path, "values");
  if (!vals || (config_setting_type(vals) != CONFIG_TYPE_ARRAY &&
                config_setting_type(vals) != CONFIG_TYPE_LIST))
    return ff_cfg_err(file, vals ? vals : g, kp,
                      "expected a list of values such as [0, 1]");
  ax->nvalues = (unsigned)config_setting_length(vals);
  if (ax->nvalues == 0)
    return ff_cfg_err(file, vals, kp, "is empty (give at least one value)");
  ax->values = calloc(ax->nvalues, sizeof *ax->values);
  if (!ax->values) {
    ax->nvalues = 0; /* ff_scenario_free walks values[nvalues] */
    return ff_error("out of memory");
  }
  for (unsigned i = 0; i < ax->nvalues; i++) {
    const config_setting_t *e = config_setting_get_elem(vals, i);
    struct ff_sval *v = &ax->values[i];
    char shown[96]; /* the value as the messages name it */

    switch (config_setting_type(e)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
    case CONFIG_TYPE_BOOL:
      v->i = config_setting_type(e) == CONFIG_TYPE_BOOL
               ? config_setting_get_bool(e)
               : config_setting_get_int64(e);
      break;
    case CONFIG_TYPE_STRING:
      v->is_str = 1;
      v->s = (!strcmp(ax->key, "fusefarm/profile") &&
              strcmp(config_setting_get_string(e), "ideal")) ||
                 !strcmp(ax->key, "fusefarm/spec")
               ? resolve(basedir, config_setting_get_string(e))
               : strdup(config_setting_get_string(e));
      if (!v->s)
        return ff_error("out of memory");
      if (strchr(v->s, '"') || strchr(v->s, '\n'))
        return ff_cfg_err(file, e, kp, "value %u has a quote or a newline", i);
      break;
    default:
      return ff_cfg_err(file, e, kp, "value %u is not an integer or a string",
                        i);
    }
    v->line = (unsigned)config_setting_source_line(e);
    if (v->is_str)
      snprintf(shown, sizeof shown, "'%.80s%s'", v->s,
               strlen(v->s) > 80 ? "..." : "");
    else
      snprintf(shown, sizeof shown, "%lld", (long long)v->i);
    if (!strcmp(ax->key, "fusefarm/transport") &&
        (!v->is_str || !ff_scenario_transport_valid(v->s)))
      return ff_cfg_err(file, e, kp,
                        "value %u %s is not a transport of "
                        "fusefarm/transport (expected \"scsi\" or "
                        "\"nbd\")",
                        i, shown);
    if ((!strcmp(ax->key, "fusefarm/aio_contention") &&
         (v->is_str || v->i < 0 || v->i > 1)) ||
        (!strcmp(ax->key, "fusefarm/devices") && (v->is_str || v->i < 1)) ||
        (!strcmp(ax->key, "fusefarm/aio_inflight") &&
         (v->is_str || v->i < 0 || v->i > 65536)) ||
        (!strcmp(ax->key, "fusefarm/profile") && !v->is_str) ||
        (!strcmp(ax->key, "fusefarm/spec") && (!v->is_str || !v->s[0])) ||
        (!strcmp(ax->key, "fusefarm/lvm") && (!v->is_str || !v->s[0])) ||
        (!strcmp(ax->key, "fusefarm/fence") &&
         (!v->is_str || !ff_scenario_fence_valid(v->s))) ||
        (!strcmp(ax->key, "fusefarm/target") &&
         (!v->is_str || !ff_scenario_target_valid(v->s))) ||
        (!strcmp(ax->key, "fusefarm/fstype") &&
         (!v->is_str || !ff_scenario_fstype_valid(v->s))) ||
        (!strcmp(ax->key, "fusefarm/mount_options") && !v->is_str) ||
        (!strcmp(ax->key, "fusefarm/fs_tunables") &&
         (!v->is_str || ff_scenario_tunables_check(v->s) < 0)) ||
        (!strcmp(ax->key, "fusefarm/dm") &&
         (!v->is_str || !ff_scenario_dm_valid(v->s))))
      return ff_cfg_err(
        file, e, kp, "value %u %s does not fit %s (expected %s)", i, shown,
        ax->key,
        !strcmp(ax->key, "fusefarm/fence")     ? FF_FENCE_VALUES
        : !strcmp(ax->key, "fusefarm/profile") ? "a profile path or \"ideal\""
        : !strcmp(ax->key, "fusefarm/spec")
          ? "a farm spec's path or \"builtin:NAME\""
        : !strcmp(ax->key, "fusefarm/lvm")
          ? "an lvm binary's path, a name on PATH or a git ref"
        : !strcmp(ax->key, "fusefarm/devices")      ? "a device count >= 1"
        : !strcmp(ax->key, "fusefarm/aio_inflight") ? "a read count 0..65536"
        : !strcmp(ax->key, "fusefarm/target")
          ? "a farm device such as \"pv0001\" or an LV as \"VG/LV\""
        : !strcmp(ax->key, "fusefarm/fstype") ? "\"ext4\" or \"xfs\""
        : !strcmp(ax->key, "fusefarm/mount_options")
          ? "mount options, a string such as \"logbufs=8\""
        : !strcmp(ax->key, "fusefarm/fs_tunables")
          ? "sysfs tunables, a string such as \"mb_prefetch_limit=0\" or \"\""
        : !strcmp(ax->key, "fusefarm/dm") ? "\"auto\", \"real\" or \"none\""
                                          : "0 or 1");
  }
  return 0;
}

/* A string key of an io workload that must be one of allowed[]
 * (NULL-terminated); absent: *out = strdup(dflt). */
static int
io_choice(const char *file, const config_setting_t *g, const char *path,
          const char *key, const char *const *allowed, const char *expected,
          const char *dflt, char **out)
{
  char kp[256];

  if (ff_cfg_str(file, g, path, key, out) < 0)
    return -1;
  if (!*out)
    return (*out = strdup(dflt)) ? 0 : ff_error("out of memory");
  for (size_t i = 0; allowed[i]; i++)
    if (!strcmp(*out, allowed[i]))
      return 0;
  ff_cfg_join(kp, sizeof kp, path, key);
  return ff_cfg_err(file, config_setting_get_member(g, key), kp,
                    "unknown %s '%s' (expected %s)", key, *out, expected);
}

int
ff_scenario_target_valid(const char *t)
{
  const char *slash = strchr(t, '/');
  char vg[128];

  if (!slash)
    return t[0] && strlen(t) < 128 && !strpbrk(t, " \t\n\"'\\:") &&
           strcmp(t, ".") && strcmp(t, "..");
  if (slash == t || (size_t)(slash - t) >= sizeof vg || strchr(slash + 1, '/'))
    return 0;
  memcpy(vg, t, (size_t)(slash - t));
  vg[slash - t] = '\0';
  return ff_valid_lvm_name(vg) && ff_valid_lvm_name(slash + 1);
}

int
ff_scenario_fstype_valid(const char *s)
{
  return s && (!strcmp(s, "ext4") || !strcmp(s, "xfs"));
}

int
ff_scenario_transport_valid(const char *s)
{
  return s && (!strcmp(s, "scsi") || !strcmp(s, "nbd"));
}

int
ff_scenario_uses_nbd(const struct ff_scenario *sc)
{
  const struct ff_axis *ax = ff_scenario_axis(sc, "fusefarm/transport");

  for (unsigned i = 0; ax && i < ax->nvalues; i++)
    if (ax->values[i].is_str && !strcmp(ax->values[i].s, "nbd"))
      return 1;
  return 0;
}

int
ff_scenario_tunables_check(const char *t)
{
  const char *p = t;

  while (*p) {
    size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
    size_t v;

    if (!k || p[k] != '=')
      return ff_error("'%s': expected KEY=VALUE[,KEY=VALUE...], each KEY a "
                      "file of /sys/fs/FSTYPE/DEV/ such as mb_prefetch_limit",
                      t);
    v = strcspn(p + k + 1, ",");
    if (!v || strcspn(p + k + 1, "/ \t\n\"'\\") < v)
      return ff_error("'%s': the value of %.*s is empty or has a slash, a "
                      "blank or a quote",
                      t, (int)k, p);
    p += k + 1 + v;
    if (*p == ',' && !*++p)
      return ff_error("'%s': ends with a comma", t);
  }
  return 0;
}

/* An fs workload's filesystem keys (the fio keys are parse_io's). */
static int
parse_fs(const char *file, const config_setting_t *g, const char *path,
         struct ff_io_job *io)
{
  static const char *const types[] = {"ext4", "xfs", NULL};
  char kp[256];

  io->nrfiles = 1;
  if (io_choice(file, g, path, "fstype", types, "ext4 or xfs", "ext4",
                &io->fstype) < 0 ||
      ff_cfg_str(file, g, path, "mkfs_options", &io->mkfs_options) < 0 ||
      ff_cfg_str(file, g, path, "mount_options", &io->mount_options) < 0 ||
      ff_cfg_str(file, g, path, "fs_tunables", &io->fs_tunables) < 0 ||
      ff_cfg_uint(file, g, path, "nrfiles", 1, 100000, &io->nrfiles) < 0 ||
      ff_cfg_uint(file, g, path, "mkdirs", 1, 10000000, &io->mkdirs) < 0)
    return -1;
  if ((!io->mkfs_options && !(io->mkfs_options = strdup(""))) ||
      (!io->mount_options && !(io->mount_options = strdup(""))) ||
      (!io->fs_tunables && !(io->fs_tunables = strdup(""))))
    return ff_error("out of memory");
  ff_cfg_join(kp, sizeof kp, path, "fs_tunables");
  if (ff_scenario_tunables_check(io->fs_tunables) < 0)
    return ff_cfg_err(file, config_setting_get_member(g, "fs_tunables"), kp,
                      "%s", ff_errmsg());
  ff_cfg_join(kp, sizeof kp, path, "mkdirs");
  if (io->mkdirs && config_setting_get_member(g, "nrfiles"))
    return ff_cfg_err(file, config_setting_get_member(g, "mkdirs"), kp,
                      "makes directories instead of fio's files: give "
                      "mkdirs or nrfiles, not both");
  ff_cfg_join(kp, sizeof kp, path, "mkfs_options");
  if (strpbrk(io->mkfs_options, "\"'\\\n"))
    return ff_cfg_err(file, config_setting_get_member(g, "mkfs_options"), kp,
                      "has a quote, a backslash or a newline (the options "
                      "are split at blanks, never by a shell)");
  ff_cfg_join(kp, sizeof kp, path, "mount_options");
  if (strpbrk(io->mount_options, " \t\n"))
    return ff_cfg_err(file, config_setting_get_member(g, "mount_options"), kp,
                      "'%s' has a blank (expected mount's -o list, such "
                      "as \"logbufs=8,logbsize=256k\")",
                      io->mount_options);
  ff_cfg_join(kp, sizeof kp, path, "size");
  if (io->size / io->nrfiles < io->bs)
    return ff_cfg_err(file, config_setting_get_member(g, "size"), kp,
                      "%llu bytes over %u files is less than one bs (%llu "
                      "bytes) per file",
                      (unsigned long long)io->size, io->nrfiles,
                      (unsigned long long)io->bs);
  return 0;
}

/* The keys of an io workload (docs/scenario-format.md): the fio job. */
static int
parse_io(const char *file, const config_setting_t *g, const char *path, int fs,
         struct ff_io_job *io)
{
  static const char *const rws[] = {"read", "write",  "randread", "randwrite",
                                    "rw",   "randrw", NULL};
  static const char *const engines[] = {"libaio", "psync", "io_uring", NULL};
  char kp[256], *runtime = NULL;

  io->bs = 4096;
  io->iodepth = 1;
  /* fs: buffered writes through the page cache, as applications do */
  io->direct = !fs;
  io->size = 16u << 20;
  io->numjobs = 1;
  if (ff_cfg_str(file, g, path, "target", &io->target) < 0)
    return -1;
  ff_cfg_join(kp, sizeof kp, path, "target");
  if (!io->target)
    return ff_cfg_err(file, g, kp,
                      "missing (expected a farm device such as \"pv0001\" "
                      "or an LV as \"VG/LV\")");
  if (!ff_scenario_target_valid(io->target))
    return ff_cfg_err(file, config_setting_get_member(g, "target"), kp,
                      "'%s' is not a device name or VG/LV", io->target);
  if (io_choice(file, g, path, "rw", rws,
                "read, write, randread, randwrite, rw or randrw",
                fs ? "write" : "randread", &io->rw) < 0 ||
      io_choice(file, g, path, "ioengine", engines,
                "libaio, psync or io_uring", fs ? "psync" : "libaio",
                &io->ioengine) < 0 ||
      ff_cfg_size(file, g, path, "bs", &io->bs) < 0 ||
      ff_cfg_size(file, g, path, "size", &io->size) < 0 ||
      ff_cfg_uint(file, g, path, "iodepth", 1, 1024, &io->iodepth) < 0 ||
      ff_cfg_bool(file, g, path, "direct", &io->direct) < 0 ||
      ff_cfg_uint(file, g, path, "fsync", 0, 1000000, &io->fsync) < 0 ||
      ff_cfg_uint(file, g, path, "fdatasync", 0, 1000000, &io->fdatasync) <
        0 ||
      ff_cfg_uint(file, g, path, "numjobs", 1, 64, &io->numjobs) < 0 ||
      ff_cfg_str(file, g, path, "runtime", &runtime) < 0)
    return -1;
  if (runtime) {
    int r = ff_parse_duration(runtime, &io->runtime_ns);

    free(runtime);
    ff_cfg_join(kp, sizeof kp, path, "runtime");
    if (r < 0)
      return ff_cfg_err(file, config_setting_get_member(g, "runtime"), kp,
                        "%s", ff_errmsg());
    if (io->runtime_ns < 1000000000ull)
      return ff_cfg_err(file, config_setting_get_member(g, "runtime"), kp,
                        "is under 1 s (fio counts its runtime in seconds)");
  }
  ff_cfg_join(kp, sizeof kp, path, "bs");
  if (io->bs == 0 || io->bs > (64u << 20))
    return ff_cfg_err(file, config_setting_get_member(g, "bs"), kp,
                      "%llu bytes is out of range (expected 512 to 64M)",
                      (unsigned long long)io->bs);
  if (io->direct && io->bs % 512)
    return ff_cfg_err(file, config_setting_get_member(g, "bs"), kp,
                      "%llu bytes is not a multiple of 512 (direct I/O "
                      "needs whole sectors)",
                      (unsigned long long)io->bs);
  ff_cfg_join(kp, sizeof kp, path, "size");
  if (io->size < io->bs || io->size % io->bs)
    return ff_cfg_err(file, config_setting_get_member(g, "size"), kp,
                      "%llu bytes is not a multiple of bs (%llu bytes, at "
                      "least one)",
                      (unsigned long long)io->size,
                      (unsigned long long)io->bs);
  return 0;
}

/* A workload's repeat: a number, or "auto" (ff-plan.h: rounds until the
 * verdict is confident); w->repeat stays 1 for auto. */
static int
parse_repeat(const char *file, const config_setting_t *g, const char *path,
             struct ff_workload *w)
{
  const config_setting_t *s = config_setting_get_member(g, "repeat");
  char kp[256];

  if (!s || config_setting_type(s) != CONFIG_TYPE_STRING)
    return ff_cfg_uint(file, g, path, "repeat", 1, 1000, &w->repeat) < 0 ? -1
                                                                         : 0;
  if (strcmp(config_setting_get_string(s), "auto")) {
    ff_cfg_join(kp, sizeof kp, path, "repeat");
    return ff_cfg_err(file, s, kp,
                      "'%s' is not a repeat (expected a number from 1 to "
                      "1000, or \"auto\")",
                      config_setting_get_string(s));
  }
  w->repeat_auto = true;
  return 0;
}

static int
parse_workload(const char *file, const config_setting_t *g, const char *path,
               struct ff_workload *w)
{
  static const char *const keys[] = {
    "type",          "name",      "repeat",      "concurrency", "spread",
    "count",         "lv",        "target",      "rw",          "bs",
    "iodepth",       "direct",    "ioengine",    "size",        "runtime",
    "fsync",         "fdatasync", "numjobs",     "fstype",      "mkfs_options",
    "mount_options", "nrfiles",   "fs_tunables", "mkdirs",      NULL};
  char *type = NULL, *spread = NULL;
  char kp[256];
  int r;

  w->repeat = 1;
  w->concurrency = 64;
  w->count = 10;
  if (ff_cfg_check_keys(file, g, path, keys) < 0 ||
      ff_cfg_str(file, g, path, "type", &type) < 0)
    return -1;
  ff_cfg_join(kp, sizeof kp, path, "type");
  if (!type)
    return ff_cfg_err(file, g, kp,
                      "missing (expected one of pvs, vgs, "
                      "lvs, pvscan-cache, event-activation, "
                      "direct-activation, lvchange, io, fs)");
  w->type = FF_W_COUNT;
  for (int t = 0; t < FF_W_COUNT; t++)
    if (!strcmp(type, wtype_names[t]))
      w->type = (enum ff_wtype)t;
  if (w->type == FF_W_COUNT) {
    r = ff_cfg_err(file, config_setting_get_member(g, "type"), kp,
                   "unknown workload '%s' (expected pvs, vgs, lvs, "
                   "pvscan-cache, event-activation, direct-activation, "
                   "lvchange, io or fs)",
                   type);
    free(type);
    return r;
  }
  free(type);
  if (ff_cfg_str(file, g, path, "name", &w->name) < 0 ||
      parse_repeat(file, g, path, w) < 0 ||
      ff_cfg_uint(file, g, path, "concurrency", 1, 100000, &w->concurrency) <
        0 ||
      ff_cfg_uint(file, g, path, "count", 1, 100000, &w->count) < 0 ||
      ff_cfg_str(file, g, path, "lv", &w->lv) < 0 ||
      ff_cfg_str(file, g, path, "spread", &spread) < 0)
    return -1;
  if (!w->name && !(w->name = strdup(wtype_names[w->type])))
    return ff_error("out of memory");
  if (spread) {
    r = ff_parse_duration(spread, &w->spread_ns);
    free(spread);
    if (r < 0) {
      ff_cfg_join(kp, sizeof kp, path, "spread");
      return ff_cfg_err(file, config_setting_get_member(g, "spread"), kp, "%s",
                        ff_errmsg());
    }
  }
  if (w->lv && !strchr(w->lv, '/')) {
    ff_cfg_join(kp, sizeof kp, path, "lv");
    return ff_cfg_err(file, config_setting_get_member(g, "lv"), kp,
                      "'%s' is not VG/LV", w->lv);
  }
  {
    static const char *const only[][2] = {
      {"concurrency", "event-activation"},
      {"spread", "event-activation"},
      {"count", "lvchange"},
      {"lv", "lvchange"},
      {"target", "io and fs"},
      {"rw", "io and fs"},
      {"bs", "io and fs"},
      {"iodepth", "io and fs"},
      {"direct", "io and fs"},
      {"ioengine", "io and fs"},
      {"size", "io and fs"},
      {"runtime", "io and fs"},
      {"fsync", "io and fs"},
      {"fdatasync", "io and fs"},
      {"numjobs", "io and fs"},
      {"fstype", "fs"},
      {"mkfs_options", "fs"},
      {"mount_options", "fs"},
      {"nrfiles", "fs"},
      {"fs_tunables", "fs"},
      {"mkdirs", "fs"},
    };
    const char *tn = wtype_names[w->type];

    for (size_t i = 0; i < sizeof only / sizeof *only; i++)
      if (config_setting_get_member(g, only[i][0]) && strcmp(tn, only[i][1]) &&
          (strcmp(only[i][1], "io and fs") ||
           (w->type != FF_W_IO && w->type != FF_W_FS))) {
        ff_cfg_join(kp, sizeof kp, path, only[i][0]);
        return ff_cfg_err(file, config_setting_get_member(g, only[i][0]), kp,
                          "only %s workloads take %s", only[i][1], only[i][0]);
      }
  }
  if (w->type == FF_W_IO)
    return parse_io(file, g, path, 0, &w->io);
  if (w->type == FF_W_FS)
    return parse_io(file, g, path, 1, &w->io) < 0
             ? -1
             : parse_fs(file, g, path, &w->io);
  return 0;
}

/* fence (default "none") and dev_names (default "farm"): what lvm sees
 * and how it is kept off the host's disks (ff-privdev.h, ff-fence.h). */
static int
parse_dev_keys(const char *file, const config_setting_t *root,
               struct ff_scenario *sc)
{
  if (ff_cfg_str(file, root, "", "fence", &sc->fence) < 0 ||
      ff_cfg_str(file, root, "", "dev_names", &sc->dev_names) < 0 ||
      ff_cfg_str(file, root, "", "dm", &sc->dm) < 0)
    return -1;
  if (!sc->dm && !(sc->dm = strdup("auto")))
    return ff_error("out of memory");
  if (!ff_scenario_dm_valid(sc->dm))
    return ff_cfg_err(file, config_setting_get_member(root, "dm"), "dm",
                      "unknown device-mapper mode '%s' (expected \"auto\": "
                      "real when the kernel has device-mapper, \"real\" or "
                      "\"none\")",
                      sc->dm);
  if (!sc->fence && !(sc->fence = strdup("none")))
    return ff_error("out of memory");
  if (!sc->dev_names && !(sc->dev_names = strdup("farm")))
    return ff_error("out of memory");
  if (!ff_scenario_fence_valid(sc->fence))
    return ff_cfg_err(file, config_setting_get_member(root, "fence"), "fence",
                      "fence \"%s\": expected " FF_FENCE_VALUES, sc->fence);
  if (strcmp(sc->dev_names, "farm") && strcmp(sc->dev_names, "loop") &&
      strcmp(sc->dev_names, "disk"))
    return ff_cfg_err(file, config_setting_get_member(root, "dev_names"),
                      "dev_names",
                      "unknown naming '%s' (expected \"farm\": as the "
                      "PVs' device hints say, \"loop\" or \"disk\")",
                      sc->dev_names);
  return 0;
}

int
ff_scenario_dm_valid(const char *s)
{
  return s && (!strcmp(s, "auto") || !strcmp(s, "real") || !strcmp(s, "none"));
}

enum ff_dm_asker
ff_scenario_dm_asks(const struct ff_scenario *sc, const char *override,
                    const char *mode)
{
  const struct ff_axis *dx = ff_scenario_axis(sc, "fusefarm/dm");

  if (dx) {
    for (unsigned i = 0; i < dx->nvalues; i++)
      if (dx->values[i].is_str && !strcmp(dx->values[i].s, mode))
        return FF_DM_ASKED_AXIS;
    return FF_DM_NOT_ASKED;
  }
  if (override)
    return !strcmp(override, mode) ? FF_DM_ASKED_OVERRIDE : FF_DM_NOT_ASKED;
  return !strcmp(sc->dm, mode) ? FF_DM_ASKED_KEY : FF_DM_NOT_ASKED;
}

int
ff_scenario_fence_valid(const char *s)
{
  enum ff_fence_mode m;

  return s && ff_fence_mode_parse(s, &m) == 0;
}

/* Make entries[n] the fusefarm/lvm axis, the first of the matrix (an
 * existing one is replaced), and sc->lvm its first entry. */
static int
set_lvm_axis(struct ff_scenario *sc, const char *const *entries, unsigned n)
{
  struct ff_axis ax = {NULL, 0, 0, 0, NULL}, *axes;
  unsigned keep = 0;
  char *first = strdup(entries[0]);

  if (!first || !(ax.key = strdup("fusefarm/lvm")) ||
      !(ax.values = calloc(n, sizeof *ax.values)))
    goto oom;
  for (ax.nvalues = 0; ax.nvalues < n; ax.nvalues++) {
    ax.values[ax.nvalues].is_str = 1;
    if (!(ax.values[ax.nvalues].s = strdup(entries[ax.nvalues])))
      goto oom;
  }
  axes = calloc(sc->naxes + 1, sizeof *axes);
  if (!axes)
    goto oom;
  axes[keep++] = ax;
  for (unsigned i = 0; i < sc->naxes; i++) {
    if (strcmp(sc->axes[i].key, "fusefarm/lvm")) {
      axes[keep++] = sc->axes[i];
      continue;
    }
    for (unsigned j = 0; j < sc->axes[i].nvalues; j++)
      free(sc->axes[i].values[j].s);
    free(sc->axes[i].values);
    free(sc->axes[i].key);
  }
  free(sc->axes);
  sc->axes = axes;
  sc->naxes = keep;
  free(sc->lvm);
  sc->lvm = first;
  return 0;
oom:
  for (unsigned j = 0; j < ax.nvalues; j++)
    free(ax.values[j].s);
  free(ax.values);
  free(ax.key);
  free(first);
  return ff_error("out of memory");
}

int
ff_scenario_set_lvms(struct ff_scenario *sc, const char *const *entries,
                     unsigned n)
{
  char *one;

  for (unsigned i = 0; i < n; i++)
    if (!entries[i][0] || strchr(entries[i], '"') || strchr(entries[i], '\n'))
      return ff_error("--lvm '%s': expected an lvm binary's path, a name on "
                      "PATH or a git ref",
                      entries[i]);
  if (n > 1) {
    if (set_lvm_axis(sc, entries, n) < 0)
      return -1;
    if (ff_scenario_nconfigs(sc) > 10000)
      return ff_error("--lvm x %u: the matrix crosses into %llu "
                      "configurations (at most 10000)",
                      n, (unsigned long long)ff_scenario_nconfigs(sc));
    return 0;
  }
  if (n == 0)
    return 0;
  if (!(one = strdup(entries[0])))
    return ff_error("out of memory");
  /* One lvm: no axis (as `lvm = "PATH"` in the scenario). */
  for (unsigned i = 0; i < sc->naxes; i++)
    if (!strcmp(sc->axes[i].key, "fusefarm/lvm")) {
      for (unsigned j = 0; j < sc->axes[i].nvalues; j++)
        free(sc->axes[i].values[j].s);
      free(sc->axes[i].values);
      free(sc->axes[i].key);
      memmove(&sc->axes[i], &sc->axes[i + 1],
              (sc->naxes - i - 1) * sizeof *sc->axes);
      sc->naxes--;
      break;
    }
  free(sc->lvm);
  sc->lvm = one;
  return 0;
}

/* lvm: a string (one lvm), or a list, the fusefarm/lvm axis (set after
 * the matrix is parsed: *list is the setting); lvm_git: the tree refs
 * are built from, a URL as is, a directory relative to the scenario. */
static int
parse_lvm_keys(const char *file, const config_setting_t *root,
               const char *basedir, struct ff_scenario *sc,
               const config_setting_t **list)
{
  const config_setting_t *l = config_setting_get_member(root, "lvm");
  char *git = NULL;

  *list = NULL;
  if (l && (config_setting_type(l) == CONFIG_TYPE_ARRAY ||
            config_setting_type(l) == CONFIG_TYPE_LIST)) {
    unsigned n = (unsigned)config_setting_length(l);

    if (n == 0)
      return ff_cfg_err(file, l, "lvm",
                        "is empty (give an lvm binary, or a list of builds "
                        "such as [\"/usr/sbin/lvm\", \"v2_03_12\"])");
    for (unsigned i = 0; i < n; i++) {
      const char *e = config_setting_get_string_elem(l, i);

      if (!e || !e[0] || strchr(e, '"') || strchr(e, '\n'))
        return ff_cfg_err(file, l, "lvm",
                          "entry %u is not a path, a name on PATH or a git "
                          "ref (a non-empty string)",
                          i);
    }
    *list = l;
  } else if (ff_cfg_str(file, root, "", "lvm", &sc->lvm) < 0) {
    return -1;
  }
  if (ff_cfg_str(file, root, "", "lvm_git", &git) < 0)
    return -1;
  if (git) {
    sc->lvm_git = strstr(git, "://") || !strncmp(git, "git@", 4)
                    ? strdup(git)
                    : resolve(basedir, git);
    free(git);
    if (!sc->lvm_git)
      return ff_error("out of memory");
  }
  if (basedir && !(sc->dir = strdup(basedir)))
    return ff_error("out of memory");
  return 0;
}

/* fusefarm/target needs an io or fs workload, fusefarm/fstype and
 * fusefarm/mount_options an fs workload: an axis that changes nothing
 * would show differences that are noise. */
static int
check_workload_axes(const char *file, const config_setting_t *m,
                    const struct ff_scenario *sc)
{
  int io = 0, fs = 0;

  for (unsigned i = 0; i < sc->nworkloads; i++) {
    io |= sc->workloads[i].type == FF_W_IO || sc->workloads[i].type == FF_W_FS;
    fs |= sc->workloads[i].type == FF_W_FS;
  }
  for (unsigned a = 0; a < sc->naxes; a++) {
    const char *k = sc->axes[a].key;
    char ep[64];

    if ((!strcmp(k, "fusefarm/target") && !io) ||
        ((!strcmp(k, "fusefarm/fstype") ||
          !strcmp(k, "fusefarm/mount_options") ||
          !strcmp(k, "fusefarm/fs_tunables")) &&
         !fs)) {
      ff_pathf(ep, sizeof ep, "matrix.[%u]", a);
      return ff_cfg_err(file, m ? config_setting_get_elem(m, a) : NULL, ep,
                        "%s changes %s workloads, and this scenario has none",
                        k, strcmp(k, "fusefarm/target") ? "fs" : "io and fs");
    }
  }
  return 0;
}

static struct ff_scenario *
parse_root(const char *file, const config_setting_t *root, const char *basedir)
{
  static const char *const keys[] = {
    "name",          "description",       "spec",           "farm",
    "devices",       "profile",           "latency",        "lvm",
    "matrix",        "workloads",         "aio_contention", "attach",
    "fence",         "dev_names",         "lvm_git",        "dm",
    "repeat_budget", "repeat_max_rounds", "flamegraph",     NULL,
  };
  struct ff_scenario *sc = calloc(1, sizeof *sc);
  const config_setting_t *m, *w, *aio, *lvms = NULL;
  char *s = NULL;
  int64_t devices = 0;

  if (!sc) {
    ff_error("out of memory");
    return NULL;
  }
  sc->aio_share = 0.98;
  sc->aio_inflight = 32;
  if (!(sc->file = strdup(file)))
    goto oom;
  if (ff_cfg_check_root(file, root, FF_CFG_SCENARIO, keys) < 0 ||
      ff_cfg_str(file, root, "", "name", &sc->name) < 0 ||
      ff_cfg_str(file, root, "", "description", &sc->description) < 0 ||
      ff_cfg_int(file, root, "", "devices", 1, 1000000, &devices) < 0 ||
      ff_cfg_bool(file, root, "", "flamegraph", &sc->flamegraph) < 0 ||
      parse_lvm_keys(file, root, basedir, sc, &lvms) < 0)
    goto fail;
  sc->devices = (uint64_t)devices;
  if (ff_cfg_str(file, root, "", "spec", &s) < 0)
    goto fail;
  if (s) {
    sc->spec = resolve(basedir, s);
    free(s);
    s = NULL;
    if (!sc->spec)
      goto oom;
  }
  if (ff_cfg_str(file, root, "", "farm", &sc->farm) < 0)
    goto fail;
  if (sc->farm && sc->spec) {
    ff_cfg_err(file, config_setting_get_member(root, "farm"), "farm",
               "give spec (a file) or farm (the spec inline), not both");
    goto fail;
  }
  if (ff_cfg_str(file, root, "", "attach", &sc->attach) < 0)
    goto fail;
  if (!sc->attach && !(sc->attach = strdup("loop")))
    goto oom;
  if (strcmp(sc->attach, "loop")) {
    ff_cfg_err(file, config_setting_get_member(root, "attach"), "attach",
               "unknown attach method '%s' (expected \"loop\": the FUSE "
               "daemon and loop devices)",
               sc->attach);
    goto fail;
  }
  if (parse_dev_keys(file, root, sc) < 0)
    goto fail;
  if (ff_cfg_str(file, root, "", "profile", &s) < 0)
    goto fail;
  if (s) {
    sc->profile_line = (unsigned)config_setting_source_line(
      config_setting_get_member(root, "profile"));
    sc->profile = strcmp(s, "ideal") ? resolve(basedir, s) : NULL;
    free(s);
    s = NULL;
  }
  if (ff_cfg_uint(file, root, "", "repeat_max_rounds", 4, 1000,
                  &sc->repeat_max_rounds) < 0 ||
      ff_cfg_str(file, root, "", "repeat_budget", &s) < 0)
    goto fail;
  if (s) {
    int r = ff_parse_duration(s, &sc->repeat_budget_ns);

    free(s);
    s = NULL;
    if (r < 0 || !sc->repeat_budget_ns) {
      ff_cfg_err(file, config_setting_get_member(root, "repeat_budget"),
                 "repeat_budget", "%s",
                 r < 0 ? ff_errmsg() : "a budget of 0 runs nothing");
      goto fail;
    }
  }
  if (ff_cfg_str(file, root, "", "latency", &s) < 0)
    goto fail;
  if (s) {
    int r = ff_parse_duration(s, &sc->latency_ns);

    free(s);
    s = NULL;
    if (r < 0) {
      ff_cfg_err(file, config_setting_get_member(root, "latency"), "latency",
                 "%s", ff_errmsg());
      goto fail;
    }
    if (sc->profile) {
      ff_cfg_err(file, config_setting_get_member(root, "latency"), "latency",
                 "give profile or latency, not both");
      goto fail;
    }
  }
  if (!sc->lvm && !(sc->lvm = strdup("lvm")))
    goto oom;
  if (!sc->name && !(sc->name = ff_cfg_default_name(file)))
    goto oom;

  aio = config_setting_get_member(root, "aio_contention");
  if (aio) {
    static const char *const akeys[] = {"share", "inflight", NULL};

    if (config_setting_type(aio) != CONFIG_TYPE_GROUP) {
      ff_cfg_err(file, aio, "aio_contention",
                 "expected a group { share = 0.98; inflight = 32; }");
      goto fail;
    }
    if (ff_cfg_check_keys(file, aio, "aio_contention", akeys) < 0 ||
        ff_cfg_float(file, aio, "aio_contention", "share", 0.0, 1.0,
                     &sc->aio_share) < 0 ||
        ff_cfg_uint(file, aio, "aio_contention", "inflight", 0, 65536,
                    &sc->aio_inflight) < 0)
      goto fail;
  }

  m = config_setting_get_member(root, "matrix");
  if (m) {
    if (config_setting_type(m) != CONFIG_TYPE_LIST) {
      ff_cfg_err(file, m, "matrix",
                 "expected a list of groups: ( { key = \"global/use_aio\"; "
                 "values = [1, 0]; }, ... )");
      goto fail;
    }
    sc->naxes = (unsigned)config_setting_length(m);
    sc->axes = calloc(sc->naxes ? sc->naxes : 1, sizeof *sc->axes);
    if (!sc->axes) {
      sc->naxes = 0;
      goto oom;
    }
    for (unsigned i = 0; i < sc->naxes; i++) {
      const config_setting_t *e = config_setting_get_elem(m, i);
      char ep[64];

      ff_pathf(ep, sizeof ep, "matrix.[%u]", i);
      if (config_setting_type(e) != CONFIG_TYPE_GROUP) {
        ff_cfg_err(file, e, ep,
                   "expected a group { key = ...; values = "
                   "[...]; }");
        goto fail;
      }
      if (parse_axis(file, e, ep, basedir, &sc->axes[i]) < 0)
        goto fail;
      sc->axes[i].index = i;
      for (unsigned j = 0; j < i; j++)
        if (!strcmp(sc->axes[j].key, sc->axes[i].key)) {
          ff_cfg_err(file, e, ep, "'%s' is already an axis of the matrix",
                     sc->axes[i].key);
          goto fail;
        }
    }
  }
  if ((sc->spec || sc->farm) && ff_scenario_axis(sc, "fusefarm/spec")) {
    const char *k = sc->spec ? "spec" : "farm";

    ff_cfg_err(file, config_setting_get_member(root, k), k,
               "a farm and a fusefarm/spec axis in the matrix: give one "
               "(the axis names every configuration's farm)");
    goto fail;
  }
  if (lvms) {
    unsigned n = (unsigned)config_setting_length(lvms);
    const char **e = calloc(n, sizeof *e);

    if (!e)
      goto oom;
    for (unsigned i = 0; i < n; i++)
      e[i] = config_setting_get_string_elem(lvms, i);
    if (ff_scenario_axis(sc, "fusefarm/lvm")) {
      free(e);
      ff_cfg_err(file, lvms, "lvm",
                 "a list of builds and a fusefarm/lvm axis in the matrix: "
                 "give one");
      goto fail;
    }
    if (set_lvm_axis(sc, e, n) < 0) {
      free(e);
      goto fail;
    }
    free(e);
  }
  if (m || lvms) {
    if (ff_scenario_nconfigs(sc) > 10000) {
      ff_cfg_err(file, m ? m : lvms, m ? "matrix" : "lvm",
                 "crosses into %llu configurations (at "
                 "most 10000)",
                 (unsigned long long)ff_scenario_nconfigs(sc));
      goto fail;
    }
  }

  w = config_setting_get_member(root, "workloads");
  if (!w || config_setting_type(w) != CONFIG_TYPE_LIST ||
      config_setting_length(w) == 0) {
    ff_cfg_err(file, w ? w : root, "workloads",
               "%s (expected a list such as ( { type = \"pvs\"; repeat = 3; "
               "} ))",
               w ? "must be a non-empty list of groups" : "missing");
    goto fail;
  }
  sc->nworkloads = (unsigned)config_setting_length(w);
  sc->workloads = calloc(sc->nworkloads, sizeof *sc->workloads);
  if (!sc->workloads) {
    sc->nworkloads = 0;
    goto oom;
  }
  for (unsigned i = 0; i < sc->nworkloads; i++) {
    const config_setting_t *e = config_setting_get_elem(w, i);
    char ep[64];

    ff_pathf(ep, sizeof ep, "workloads.[%u]", i);
    if (config_setting_type(e) != CONFIG_TYPE_GROUP) {
      ff_cfg_err(file, e, ep, "expected a group { type = ...; }");
      goto fail;
    }
    if (parse_workload(file, e, ep, &sc->workloads[i]) < 0)
      goto fail;
    for (unsigned j = 0; j < i; j++)
      if (!strcmp(sc->workloads[j].name, sc->workloads[i].name)) {
        ff_cfg_err(file, e, ep,
                   "a workload is already named '%s' (give "
                   "name = ...)",
                   sc->workloads[i].name);
        goto fail;
      }
  }
  if (check_workload_axes(file, m, sc) < 0)
    goto fail;
  return sc;

oom:
  ff_error("out of memory");
fail:
  free(s);
  ff_scenario_free(sc);
  return NULL;
}

static struct ff_scenario *
load(config_t *cfg, int ok, const char *name, const char *basedir)
{
  struct ff_scenario *sc;

  if (!ok) { /* ff_cfg_load said why */
    config_destroy(cfg);
    return NULL;
  }
  sc = parse_root(name, config_root_setting(cfg), basedir);
  config_destroy(cfg);
  return sc;
}

struct ff_scenario *
ff_scenario_load_file(const char *path)
{
  char *abs = realpath(path, NULL), *dir;
  struct ff_scenario *sc;
  config_t cfg;

  if (!abs) {
    ff_error("%s: cannot read the scenario: %m", path);
    return NULL;
  }
  dir = strdup(abs);
  if (!dir) {
    free(abs);
    ff_error("out of memory");
    return NULL;
  }
  *strrchr(dir, '/') = '\0';
  config_init(&cfg);
  sc = load(&cfg, ff_cfg_load(&cfg, NULL, abs, "scenario") == 0, abs,
            dir[0] ? dir : "/");
  free(dir);
  free(abs);
  return sc;
}

struct ff_scenario *
ff_scenario_load_string(const char *text, const char *name,
                        const char *basedir)
{
  config_t cfg;

  config_init(&cfg);
  return load(&cfg, ff_cfg_load(&cfg, text, name, "scenario") == 0, name,
              basedir);
}

void
ff_scenario_free(struct ff_scenario *sc)
{
  if (!sc)
    return;
  for (unsigned i = 0; i < sc->naxes; i++) {
    for (unsigned j = 0; j < sc->axes[i].nvalues; j++)
      free(sc->axes[i].values[j].s);
    free(sc->axes[i].values);
    free(sc->axes[i].key);
  }
  free(sc->axes);
  for (unsigned i = 0; i < sc->nworkloads; i++) {
    free(sc->workloads[i].name);
    free(sc->workloads[i].lv);
    free(sc->workloads[i].io.target);
    free(sc->workloads[i].io.rw);
    free(sc->workloads[i].io.ioengine);
    free(sc->workloads[i].io.fstype);
    free(sc->workloads[i].io.mkfs_options);
    free(sc->workloads[i].io.mount_options);
    free(sc->workloads[i].io.fs_tunables);
  }
  free(sc->workloads);
  free(sc->file);
  free(sc->name);
  free(sc->description);
  free(sc->spec);
  free(sc->farm);
  free(sc->attach);
  free(sc->fence);
  free(sc->dm);
  free(sc->dev_names);
  free(sc->profile);
  free(sc->lvm);
  free(sc->lvm_git);
  free(sc->dir);
  free(sc);
}

uint64_t
ff_scenario_nconfigs(const struct ff_scenario *sc)
{
  uint64_t n = 1;

  /* Saturate: 64 axes of two values would wrap to 0 and pass the limit. */
  for (unsigned i = 0; i < sc->naxes; i++)
    n = n > UINT64_MAX / sc->axes[i].nvalues ? UINT64_MAX
                                             : n * sc->axes[i].nvalues;
  return n;
}

void
ff_scenario_config(const struct ff_scenario *sc, uint64_t k, unsigned *idx)
{
  for (unsigned i = sc->naxes; i-- > 0;) {
    idx[i] = (unsigned)(k % sc->axes[i].nvalues);
    k /= sc->axes[i].nvalues;
  }
}

const struct ff_axis *
ff_scenario_axis(const struct ff_scenario *sc, const char *key)
{
  for (unsigned i = 0; i < sc->naxes; i++)
    if (!strcmp(sc->axes[i].key, key))
      return &sc->axes[i];
  return NULL;
}
