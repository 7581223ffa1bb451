/* fusefarm: lvm fencing (ff-fence.h).
 *
 * lvm.conf holds which devices lvm may see and the scenario's settings,
 * the same text wherever it runs:
 *   devices  use_devicesfile = 1, devicesfile = "system.devices": only the
 *            devices named in LVM_SYSTEM_DIR/devices/system.devices (or,
 *            without a devices file, global_filter and filter accepting
 *            exactly the farm's devices).
 * lvmlocal.conf (the host only; lvm reads it after lvm.conf) holds what a
 * fenced lvm on this host needs besides, the union of what attach, run
 * and tests/lib/lvm-env.sh each needed:
 *   devices  obtain_device_list_from_udev = 0: no udev daemon on the host;
 *            hints = "none": never reuse /run/lvm/hints (stale hints hide
 *            new PVs)
 *   activation  udev_sync = 0, udev_rules = 0 (no udev), monitoring = 0
 *            (never ask dmeventd to watch farm LVs)
 *   global   locking_dir = "/run/lock/lvm" (a private bind mount),
 *            use_lvmlockd = 0, use_lvmpolld = 0, notify_dbus = 0 (never
 *            talk to the host's daemons), event_activation = 1 (2.03.01+),
 *            use_lvmetad = 0 (2.02.x: no lvmetad unless the scenario
 *            asks for one)
 *   backup   backup = 0, archive = 0, their dirs under /run/lvm (a private
 *            bind mount of the caller's scratch dir): nothing is written
 *            under /etc/lvm
 *   log      verbose = 0, syslog = 0, command_names = 0
 * A setting of the scenario configuration replaces the lvmlocal.conf
 * default of the same key (the default is left out); the keys that hold
 * the fence itself cannot be set.  A key the lvm build does not know
 * (lvm_keys[] below: introduced later, or removed) is written in neither
 * file (2.02 prints 'Configuration setting "..." unknown.' for each), and
 * ff_fence_left_out() names the scenario's ones for the report.
 */
#include "ff-fence.h"
#include "ff-spawn.h"

#include "ff-error.h"
#include "ff-file.h"
#include "ff-scenario.h"
#include "ff-util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the lvm build ------------------------------------------------------ */

static int
version_ge(const struct ff_lvm_caps *c, unsigned major, unsigned minor,
           unsigned patch)
{
  if (c->major != major)
    return c->major > major;
  if (c->minor != minor)
    return c->minor > minor;
  return c->patch >= patch;
}

void
ff_lvm_caps_for(unsigned major, unsigned minor, unsigned patch,
                struct ff_lvm_caps *caps)
{
  memset(caps, 0, sizeof *caps);
  caps->major = major;
  caps->minor = minor;
  caps->patch = patch;
  caps->has_devicesfile = version_ge(caps, 2, 3, 12);
  caps->has_hints = version_ge(caps, 2, 3, 2);
}

unsigned
ff_lvm_caps_version(const struct ff_lvm_caps *caps)
{
  return FF_LVM_V(caps->major, caps->minor, caps->patch);
}

/* ---- dialects ------------------------------------------------------------
 *
 * What each lvm2 version's own udev rule and systemd units ran when a PV
 * appeared (lvm2 tree, per release tag):
 *   2.02.x        udev/69-dm-lvm-metad.rules.in: with lvmetad, SYSTEMD_WANTS
 *                 lvm2-pvscan@$major:$minor.service; scripts/
 *                 lvm2_pvscan_systemd_red_hat@.service.in: ExecStart=lvm
 *                 pvscan --cache --activate ay %i, beside
 *                 lvm2_lvmetad_systemd_red_hat.service.in: ExecStart=lvmetad
 *                 -f.  Without lvmetad the rule runs no pvscan and boot
 *                 activation is lvm2-activation*.service: vgchange -aay.
 *   2.03.00-13    69-dm-lvm-metad.rules.in (lvmetad gone): the same
 *                 lvm2-pvscan@ unit (scripts/lvm2-pvscan.service.in from
 *                 2.03.02): pvscan --cache --activate ay %i, which
 *                 activates the VG it completes itself.
 *   2.03.14       udev/69-dm-lvm.rules.in: IMPORT{program}=lvm pvscan
 *                 --cache --listvg --checkcomplete --vgonline --udevoutput
 *                 DEVNAME; a complete VG gets systemd-run lvm vgchange -aay
 *                 --nohints VG.
 *   2.03.15+      the same with --autoactivation event on both commands
 *                 (tools/args.h has autoactivation_ARG from 2.03.15).
 */
static const struct {
  unsigned from; /* first version of the range */
  enum ff_lvm_dialect d;
} dialects[] = {
  {FF_LVM_V(2, 3, 15), FF_DIALECT_EVENT},
  {FF_LVM_V(2, 3, 14), FF_DIALECT_EVENT_2_03_14},
  {FF_LVM_V(2, 3, 0), FF_DIALECT_PVSCAN_AY},
  {0, FF_DIALECT_LVMETAD}, /* 2.02.x: FF_DIALECT_NONE without lvmetad */
};

const char *
ff_lvm_dialect_name(enum ff_lvm_dialect d)
{
  switch (d) {
  case FF_DIALECT_EVENT:
    return "event";
  case FF_DIALECT_EVENT_2_03_14:
    return "event-2.03.14";
  case FF_DIALECT_PVSCAN_AY:
    return "pvscan-activate";
  case FF_DIALECT_LVMETAD:
    return "lvmetad";
  case FF_DIALECT_NONE:
    return "none";
  }
  return "?";
}

enum ff_lvm_dialect
ff_lvm_dialect_for(const struct ff_lvm_caps *caps, int use_lvmetad)
{
  unsigned v = ff_lvm_caps_version(caps);
  size_t i = 0;

  while (v < dialects[i].from)
    i++;
  if (dialects[i].d == FF_DIALECT_LVMETAD && !use_lvmetad)
    return FF_DIALECT_NONE;
  return dialects[i].d;
}

/* lvm.conf keys by the version that introduced them and the one that
 * removed them (0: still there), from lib/config/config_settings.h of
 * each tag (its vsn() and deprecated-since fields): the keys the fence
 * writes itself and those configs/scenarios set.  A key not listed is
 * assumed known. */
static const struct {
  const char *key;
  unsigned since, removed;
  const char *why_since, *why_removed;
} lvm_keys[] = {
  {"devices/obtain_device_list_from_udev", FF_LVM_V(2, 2, 85), 0,
   "since 2.02.85", NULL},
  {"devices/global_filter", FF_LVM_V(2, 2, 98), 0, "since 2.02.98", NULL},
  {"devices/hints", FF_LVM_V(2, 3, 2), 0, "since 2.03.02", NULL},
  {"devices/use_devicesfile", FF_LVM_V(2, 3, 12), 0, "since 2.03.12", NULL},
  {"devices/devicesfile", FF_LVM_V(2, 3, 12), 0, "since 2.03.12", NULL},
  {"devices/search_for_devnames", FF_LVM_V(2, 3, 12), 0, "since 2.03.12",
   NULL},
  {"activation/udev_sync", FF_LVM_V(2, 2, 51), 0, "since 2.02.51", NULL},
  {"activation/udev_rules", FF_LVM_V(2, 2, 57), 0, "since 2.02.57", NULL},
  {"activation/monitoring", FF_LVM_V(2, 2, 63), 0, "since 2.02.63", NULL},
  {"global/use_lvmetad", FF_LVM_V(2, 2, 93), FF_LVM_V(2, 3, 0),
   "since 2.02.93", "removed in 2.03.00"},
  {"global/use_lvmpolld", FF_LVM_V(2, 2, 120), 0, "since 2.02.120", NULL},
  {"global/use_lvmlockd", FF_LVM_V(2, 2, 124), 0, "since 2.02.124", NULL},
  {"global/notify_dbus", FF_LVM_V(2, 2, 145), 0, "since 2.02.145", NULL},
  {"global/use_aio", FF_LVM_V(2, 2, 183), 0, "since 2.02.183", NULL},
  {"global/event_activation", FF_LVM_V(2, 3, 1), 0, "since 2.03.01", NULL},
};

int
ff_lvm_key_listed(const char *key)
{
  for (size_t i = 0; i < sizeof lvm_keys / sizeof *lvm_keys; i++)
    if (!strcmp(lvm_keys[i].key, key))
      return 1;
  return 0;
}

int
ff_lvm_key_known(const struct ff_lvm_caps *caps, const char *key,
                 const char **why)
{
  unsigned v = ff_lvm_caps_version(caps);

  for (size_t i = 0; i < sizeof lvm_keys / sizeof *lvm_keys; i++) {
    if (strcmp(lvm_keys[i].key, key))
      continue;
    if (v < lvm_keys[i].since) {
      if (why)
        *why = lvm_keys[i].why_since;
      return 0;
    }
    if (lvm_keys[i].removed && v >= lvm_keys[i].removed) {
      if (why)
        *why = lvm_keys[i].why_removed;
      return 0;
    }
    return 1;
  }
  return 1;
}

int
ff_lvm_caps_parse(const char *text, struct ff_lvm_caps *caps)
{
  const char *p = text ? strstr(text, "LVM version:") : NULL;
  unsigned a, b, c;
  int n = 0;

  if (!p)
    return ff_error("lvm version output has no 'LVM version:' line");
  p += strlen("LVM version:");
  if (sscanf(p, " %u.%u.%u%n", &a, &b, &c, &n) != 3 || !n)
    return ff_error("lvm version output: cannot read the version after "
                    "'LVM version:'");
  ff_lvm_caps_for(a, b, c, caps);
  return 0;
}

int
ff_lvm_caps_probe(const char *lvm, const char *system_dir,
                  struct ff_lvm_caps *caps)
{
  const char *argv[] = {lvm, "version", NULL};
  const char *env[] = {"LVM_SUPPRESS_FD_WARNINGS", "1",
                       system_dir ? "LVM_SYSTEM_DIR" : NULL, system_dir, NULL};
  char buf[8192];
  struct ff_spawn o = {.argv = argv, .env = env};
  ssize_t n;
  int fd, st;

  /* Its stdout in memory: a memfd that ff_spawn gives the child. */
  fd = memfd_create("lvm-version", MFD_CLOEXEC);
  if (fd < 0)
    return ff_error("memfd_create: %m");
  if (fd <= 2) { /* stdio closed: keep clear of the child's 0-2 */
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);

    close(fd);
    if ((fd = high) < 0)
      return ff_error("dup: %m");
  }
  o.out_fd = fd;
  st = ff_spawn_run(&o);
  n = st < 0 ? -1 : pread(fd, buf, sizeof buf - 1, 0);
  close(fd);
  if (st < 0)
    return -1;
  buf[n > 0 ? n : 0] = '\0';
  /* `lvm version` exits non-zero without device-mapper; its first line
   * is all we need. */
  if (!strstr(buf, "LVM version:"))
    return ff_error("'%s version' printed no version: is lvm2 installed? "
                    "(apt-get install lvm2, or --lvm PATH)",
                    lvm);
  return ff_lvm_caps_parse(buf, caps);
}

/* ---- settings --------------------------------------------------------- */

static int
valid_word(const char *s, size_t n)
{
  if (!n)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return 0;
  return 1;
}

static int
is_runner_key(const char *key)
{
  return !strncmp(key, "fusefarm/", 9);
}

/* Keys whose value is the fence itself. */
static int
is_fence_key(const char *key, int filter)
{
  static const char *const keys[] = {"devices/devicesfile",
                                     "global/locking_dir", "backup/backup_dir",
                                     "backup/archive_dir", NULL};

  for (int i = 0; keys[i]; i++)
    if (!strcmp(key, keys[i]))
      return 1;
  return filter && (!strcmp(key, "devices/filter") ||
                    !strcmp(key, "devices/global_filter"));
}

static int
check_settings(const struct ff_fence *f, int filter)
{
  for (size_t i = 0; i < f->nsettings; i++) {
    const struct ff_fence_setting *s = &f->settings[i];
    const char *slash = s->key ? strchr(s->key, '/') : NULL;

    if (!slash || !valid_word(s->key, (size_t)(slash - s->key)) ||
        !valid_word(slash + 1, strlen(slash + 1)))
      return ff_error("lvm setting '%s': expected \"section/name\" of "
                      "letters, digits and '_'",
                      s->key ? s->key : "(null)");
    if (is_runner_key(s->key))
      continue;
    if (is_fence_key(s->key, filter))
      return ff_error("lvm setting '%s': the fence sets it (lvm would see "
                      "devices outside the farm otherwise)",
                      s->key);
    if (!strcmp(s->key, "devices/use_devicesfile") &&
        (s->type != FF_FENCE_INT || (s->i != 0 && s->i != 1)))
      return ff_error("lvm setting 'devices/use_devicesfile': expected 0 "
                      "(a filter naming the farm's devices) or 1 (the "
                      "devices file)");
    if ((s->type == FF_FENCE_STR && !s->s) ||
        (s->type == FF_FENCE_LIST && s->nlist && !s->list))
      return ff_error("lvm setting '%s': no value", s->key);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(f->settings[j].key, s->key))
        return ff_error("lvm setting '%s': given twice", s->key);
  }
  return 0;
}

static const struct ff_fence_setting *
find_setting(const struct ff_fence *f, const char *key)
{
  for (size_t i = 0; i < f->nsettings; i++)
    if (!strcmp(f->settings[i].key, key))
      return &f->settings[i];
  return NULL;
}

/* ---- the fence mode ----------------------------------------------------- */

static const struct {
  const char *name;
  enum ff_fence_mode mode;
} fence_modes[] = {
  {"none", FF_FENCE_MODE_NONE},
  {"devicesfile", FF_FENCE_MODE_DEVICESFILE},
  {"devicesfile-all", FF_FENCE_MODE_DEVICESFILE}, /* the clearer name */
  {"devicesfile-used", FF_FENCE_MODE_DEVICESFILE_USED},
  {"filter", FF_FENCE_MODE_FILTER},
};

int
ff_fence_mode_parse(const char *s, enum ff_fence_mode *out)
{
  for (size_t i = 0; s && i < sizeof fence_modes / sizeof *fence_modes; i++)
    if (!strcmp(s, fence_modes[i].name)) {
      *out = fence_modes[i].mode;
      return 0;
    }
  return ff_error("fence \"%s\": expected " FF_FENCE_VALUES, s ? s : "(null)");
}

/* ---- the VGs a configuration uses (devicesfile-used) ------------------- */

void
ff_fence_vgs_free(struct ff_fence_vgs *u)
{
  for (size_t i = 0; i < u->n; i++)
    free(u->v[i]);
  free(u->v);
  u->v = NULL;
  u->n = 0;
  u->all = 0;
}

int
ff_fence_vgs_lists(const struct ff_fence_vgs *u, const char *vg)
{
  if (!vg)
    return 0;
  if (u->all)
    return 1;
  for (size_t i = 0; i < u->n; i++)
    if (!strcmp(u->v[i], vg))
      return 1;
  return 0;
}

/* Add the VG of "VG/LV" lv (anything else names none). */
static int
add_vg_of(struct ff_fence_vgs *u, const char *lv)
{
  const char *slash = lv ? strchr(lv, '/') : NULL;
  char *vg, **nv;

  if (!slash || slash == lv)
    return 0;
  vg = strndup(lv, (size_t)(slash - lv));
  if (!vg)
    return ff_error("out of memory");
  if (ff_fence_vgs_lists(u, vg)) {
    free(vg);
    return 0;
  }
  nv = realloc(u->v, (u->n + 1) * sizeof *nv);
  if (!nv) {
    free(vg);
    return ff_error("out of memory");
  }
  u->v = nv;
  u->v[u->n++] = vg;
  return 0;
}

int
ff_fence_used_vgs(const struct ff_scenario *sc, const char *first_lv,
                  const char *target, struct ff_fence_vgs *out)
{
  memset(out, 0, sizeof *out);
  for (unsigned i = 0; i < sc->nworkloads; i++) {
    const struct ff_workload *w = &sc->workloads[i];
    int r = 0;

    switch (w->type) {
    case FF_W_LVCHANGE:
      r = add_vg_of(out, w->lv ? w->lv : first_lv);
      break;
    case FF_W_IO:
    case FF_W_FS:
      r = add_vg_of(out, target ? target : w->io.target);
      break;
    default: /* scans and activations: every VG */
      out->all = 1;
      break;
    }
    if (r < 0) {
      ff_fence_vgs_free(out);
      return -1;
    }
  }
  return 0;
}

/* No fence at all: lvm.conf without a devices file or filter. */
static int
fence_none(const struct ff_fence *f)
{
  return f->mode == FF_FENCE_MODE_NONE;
}

int
ff_fence_uses_filter(const struct ff_fence *f)
{
  const struct ff_fence_setting *s =
    find_setting(f, "devices/use_devicesfile");

  if (fence_none(f))
    return 0;
  if (f->mode == FF_FENCE_MODE_FILTER)
    return 1;
  return !f->caps.has_devicesfile ||
         (s && s->type == FF_FENCE_INT && s->i == 0);
}

enum ff_lvm_dialect
ff_fence_dialect(const struct ff_fence *f)
{
  const struct ff_fence_setting *s = find_setting(f, "global/use_lvmetad");

  return ff_lvm_dialect_for(&f->caps,
                            s && s->type == FF_FENCE_INT && s->i != 0);
}

/* A scenario setting that lvm.conf holds: not the runner's, not the
 * fence's switch, and known to the build. */
static int
written(const struct ff_fence *f, const struct ff_fence_setting *s)
{
  return !is_runner_key(s->key) &&
         (fence_none(f) || strcmp(s->key, "devices/use_devicesfile") != 0) &&
         ff_lvm_key_known(&f->caps, s->key, NULL);
}

char *
ff_fence_left_out(const struct ff_fence *f)
{
  struct ff_sb sb = FF_SB_INIT;

  ff_sb_add(&sb, "");
  for (size_t i = 0; i < f->nsettings; i++) {
    const char *why = NULL;

    if (is_runner_key(f->settings[i].key) ||
        ff_lvm_key_known(&f->caps, f->settings[i].key, &why))
      continue;
    ff_sb_addf(&sb, "%s%s (%s)", sb.len ? ", " : "", f->settings[i].key, why);
  }
  return ff_sb_text(&sb);
}

/* ---- text ------------------------------------------------------------- */

/* An lvm.conf string: backslash and double quote escaped. */
static void
add_string(struct ff_sb *sb, const char *s)
{
  ff_sb_add(sb, "\"");
  for (; *s; s++) {
    if (*s == '\\' || *s == '"')
      ff_sb_addn(sb, "\\", 1);
    ff_sb_addn(sb, s, 1);
  }
  ff_sb_add(sb, "\"");
}

static void
add_value(struct ff_sb *sb, const struct ff_fence_setting *s)
{
  switch (s->type) {
  case FF_FENCE_INT:
    ff_sb_addf(sb, "%lld", (long long)s->i);
    break;
  case FF_FENCE_STR:
    add_string(sb, s->s);
    break;
  case FF_FENCE_LIST:
    ff_sb_add(sb, "[");
    for (size_t i = 0; i < s->nlist; i++) {
      ff_sb_add(sb, i ? ", " : " ");
      add_string(sb, s->list[i]);
    }
    ff_sb_add(sb, " ]");
    break;
  }
}

/* A filter entry accepting exactly path: "a|^<path, regex-escaped>$|". */
static void
add_accept(struct ff_sb *sb, const char *path)
{
  struct ff_sb re = FF_SB_INIT;

  ff_sb_add(&re, "a|^");
  for (const char *p = path; *p; p++) {
    if (strchr("\\^$.|?*+()[]{}", *p))
      ff_sb_addn(&re, "\\", 1);
    ff_sb_addn(&re, p, 1);
  }
  ff_sb_add(&re, "$|");
  if (ff_sb_failed(&re))
    ff_sb_add(sb, "\"\"");
  else
    add_string(sb, re.buf);
  ff_sb_release(&re);
}

static void
add_filter(struct ff_sb *sb, const struct ff_fence *f, const char *name)
{
  ff_sb_addf(sb, "\t%s = [ ", name);
  if (!f->restrict_devices) {
    ff_sb_add(sb, "\"a|.*|\" ]\n");
    return;
  }
  for (size_t i = 0; i < f->ndevs; i++) {
    add_accept(sb, f->devs[i].devname);
    ff_sb_add(sb, ", ");
  }
  ff_sb_add(sb, "\"r|.*|\" ]\n");
}

struct def {
  const char *key;  /* "section/name" */
  const char *text; /* the value as lvm.conf text */
};

static void
add_defaults(struct ff_sb *sb, const struct ff_fence *f,
             const struct def *defs)
{
  for (; defs->key; defs++)
    if (!find_setting(f, defs->key) &&
        ff_lvm_key_known(&f->caps, defs->key, NULL))
      ff_sb_addf(sb, "\t%s = %s\n", strchr(defs->key, '/') + 1, defs->text);
}

/* The scenario's settings of section sec (length n). */
static void
add_settings(struct ff_sb *sb, const struct ff_fence *f, const char *sec,
             size_t n)
{
  for (size_t i = 0; i < f->nsettings; i++) {
    const struct ff_fence_setting *s = &f->settings[i];

    if (strncmp(s->key, sec, n) || s->key[n] != '/' || !written(f, s))
      continue;
    ff_sb_addf(sb, "\t%s = ", s->key + n + 1);
    add_value(sb, s);
    ff_sb_add(sb, "\n");
  }
}

static const char *const fence_sections[] = {"devices", "activation", "global",
                                             "backup",  "log",        NULL};

static int
is_fence_section(const char *key, size_t n)
{
  for (int i = 0; fence_sections[i]; i++)
    if (strlen(fence_sections[i]) == n && !strncmp(key, fence_sections[i], n))
      return 1;
  return 0;
}

/* The scenario's settings of section sec (length n), as a whole section
 * when there are any. */
static void
add_section(struct ff_sb *sb, const struct ff_fence *f, const char *sec,
            size_t n)
{
  size_t before = sb->len;

  ff_sb_addf(sb, "%.*s {\n", (int)n, sec);
  add_settings(sb, f, sec, n);
  if (sb->len == before + n + 3) { /* nothing set: no section */
    sb->len = before;
    if (sb->buf)
      sb->buf[before] = '\0';
    return;
  }
  ff_sb_add(sb, "}\n");
}

char *
ff_fence_lvm_conf(const struct ff_fence *f)
{
  int filter = ff_fence_uses_filter(f);
  struct ff_sb sb = FF_SB_INIT;

  if (check_settings(f, filter) < 0)
    return NULL;
  ff_sb_add(&sb, "# lvm.conf written by fusefarm (runner/ff-fence.c): which "
                 "devices lvm may\n# see, and the scenario's settings.  The "
                 "same text on the host and in\n# the guest; what the host "
                 "needs besides (no udev, private dirs) is\n# lvmlocal.conf "
                 "beside it.\n");
  if (f->title)
    ff_sb_addf(&sb, "# %s\n", f->title);

  ff_sb_add(&sb, "devices {\n");
  if (fence_none(f)) {
    /* the scenario's settings alone (use_devicesfile included) */
  } else if (!filter) {
    ff_sb_add(&sb, "\tuse_devicesfile = 1\n\tdevicesfile = "
                   "\"system.devices\"\n");
  } else {
    if (f->caps.has_devicesfile)
      ff_sb_add(&sb, "\tuse_devicesfile = 0\n");
    add_filter(&sb, f, "global_filter");
    add_filter(&sb, f, "filter");
  }
  add_settings(&sb, f, "devices", 7);
  ff_sb_add(&sb, "}\n");
  for (int i = 1; fence_sections[i]; i++)
    add_section(&sb, f, fence_sections[i], strlen(fence_sections[i]));

  /* Every other section the settings name, in the order first named. */
  for (size_t i = 0; i < f->nsettings; i++) {
    const char *key = f->settings[i].key;
    size_t n = (size_t)(strchr(key, '/') - key);
    int seen = !written(f, &f->settings[i]) || is_fence_section(key, n);

    for (size_t j = 0; !seen && j < i; j++)
      seen = written(f, &f->settings[j]) &&
             !strncmp(f->settings[j].key, key, n + 1);
    if (seen)
      continue;
    ff_sb_addf(&sb, "%.*s {\n", (int)n, key);
    add_settings(&sb, f, key, n);
    ff_sb_add(&sb, "}\n");
  }
  return ff_sb_text(&sb);
}

char *
ff_fence_lvmlocal_conf(const struct ff_fence *f)
{
  static const struct def devices[] = {
    {"devices/obtain_device_list_from_udev", "0"}, {NULL, NULL}};
  static const struct def hints[] = {{"devices/hints", "\"none\""},
                                     {NULL, NULL}};
  static const struct def activation[] = {{"activation/udev_sync", "0"},
                                          {"activation/udev_rules", "0"},
                                          {"activation/monitoring", "0"},
                                          {NULL, NULL}};
  static const struct def global[] = {
    {"global/locking_dir", "\"/run/lock/lvm\""},
    {"global/use_lvmlockd", "0"},
    {"global/use_lvmpolld", "0"},
    {"global/notify_dbus", "0"},
    {NULL, NULL}};
  static const struct def evact[] = {{"global/event_activation", "1"},
                                     {"global/use_lvmetad", "0"},
                                     {NULL, NULL}};
  static const struct def backup[] = {
    {"backup/backup", "0"},
    {"backup/archive", "0"},
    {"backup/backup_dir", "\"/run/lvm/backup\""},
    {"backup/archive_dir", "\"/run/lvm/archive\""},
    {NULL, NULL}};
  static const struct def logd[] = {{"log/verbose", "0"},
                                    {"log/syslog", "0"},
                                    {"log/command_names", "0"},
                                    {NULL, NULL}};
  struct ff_sb sb = FF_SB_INIT;

  if (check_settings(f, ff_fence_uses_filter(f)) < 0)
    return NULL;
  ff_sb_add(&sb, "# lvmlocal.conf written by fusefarm (runner/ff-fence.c): "
                 "what a fenced lvm\n# on this host needs besides lvm.conf: "
                 "no udev manages the farm's\n# devices, /run/lvm and "
                 "/run/lock/lvm are private (a mount namespace),\n# nothing "
                 "is written under /etc/lvm, no host daemon is asked.  lvm\n"
                 "# reads it after lvm.conf; a setting the scenario makes is "
                 "left out\n# here, so the scenario's value holds.  A guest "
                 "gets none of this:\n# it runs lvm as its own system "
                 "would.\n");
  ff_sb_add(&sb, "devices {\n");
  add_defaults(&sb, f, devices);
  if (f->caps.has_hints && !fence_none(f))
    add_defaults(&sb, f, hints); /* fence none: lvm's own hints, as shipped */
  ff_sb_add(&sb, "}\nactivation {\n");
  add_defaults(&sb, f, activation);
  ff_sb_add(&sb, "}\nglobal {\n");
  add_defaults(&sb, f, global);
  add_defaults(&sb, f, evact);
  ff_sb_add(&sb, "}\nbackup {\n");
  add_defaults(&sb, f, backup);
  ff_sb_add(&sb, "}\nlog {\n");
  add_defaults(&sb, f, logd);
  ff_sb_add(&sb, "}\n");
  return ff_sb_text(&sb);
}

/* lvm reads IDNAME up to the next blank. */
static int
idname_ok(const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s <= ' ' || *s == 0x7f)
      return 0;
  return 1;
}

char *
ff_fence_devices_file(const struct ff_fence *f)
{
  struct ff_sb sb = FF_SB_INIT;
  int filter = ff_fence_uses_filter(f);

  ff_sb_add(&sb, "# LVM uses devices listed in this file.\n"
                 "# Written by fusefarm (runner/ff-fence.c): the farm's "
                 "devices, nothing else.\n"
                 "VERSION=1.1.1\n");
  for (size_t i = 0; !filter && f->restrict_devices && i < f->ndevs; i++) {
    const struct ff_fence_dev *d = &f->devs[i];
    const char *pvid = d->pvid && *d->pvid ? d->pvid : ".";

    if (!d->devname || !*d->devname || !idname_ok(d->devname)) {
      ff_sb_release(&sb);
      ff_error("device '%s': not a device path lvm can name (empty or with "
               "a blank)",
               d->devname ? d->devname : "");
      return NULL;
    }
    if (d->backing && *d->backing && idname_ok(d->backing))
      ff_sb_addf(&sb, "IDTYPE=loop_file IDNAME=%s DEVNAME=%s PVID=%s\n",
                 d->backing, d->devname, pvid);
    else
      ff_sb_addf(&sb, "IDTYPE=devname IDNAME=%s DEVNAME=%s PVID=%s\n",
                 d->devname, d->devname, pvid);
  }
  return ff_sb_text(&sb);
}

int
ff_fence_write(const char *dir, const struct ff_fence *f)
{
  char path[PATH_MAX];
  char *conf, *local = NULL, *devs = NULL;
  int r = -1;

  conf = ff_fence_lvm_conf(f);
  local = conf ? ff_fence_lvmlocal_conf(f) : NULL;
  devs = local ? ff_fence_devices_file(f) : NULL;
  if (!conf || !local || !devs)
    goto out;
  if (snprintf(path, sizeof path, "%s/devices", dir) >= (int)sizeof path) {
    ff_error("%s: path too long", dir);
    goto out;
  }
  if (ff_mkdir(dir, 0700) < 0 || ff_mkdir(path, 0700) < 0)
    goto out;
  /* The devices file first: lvm.conf turns it on. */
  snprintf(path, sizeof path, "%s/devices/system.devices", dir);
  if (ff_write_file_atomic(path, devs, strlen(devs)) < 0)
    goto out;
  snprintf(path, sizeof path, "%s/lvmlocal.conf", dir);
  if (ff_write_file_atomic(path, local, strlen(local)) < 0)
    goto out;
  snprintf(path, sizeof path, "%s/lvm.conf", dir);
  if (ff_write_file_atomic(path, conf, strlen(conf)) < 0)
    goto out;
  r = 0;
out:
  free(conf);
  free(local);
  free(devs);
  return r;
}

/* ---- scenario configurations ------------------------------------------ */

int
ff_fence_scenario_settings(const struct ff_scenario *sc, uint64_t k,
                           struct ff_fence_setting **out, size_t *n)
{
  unsigned *idx = calloc(sc->naxes + 1, sizeof *idx);
  struct ff_fence_setting *v = calloc(sc->naxes + 1, sizeof *v);

  *out = NULL;
  *n = 0;
  if (!idx || !v) {
    free(idx);
    free(v);
    return ff_error("out of memory");
  }
  ff_scenario_config(sc, k, idx);
  for (unsigned a = 0; a < sc->naxes; a++) {
    const struct ff_axis *ax = &sc->axes[a];
    const struct ff_sval *sv = &ax->values[idx[a]];

    if (is_runner_key(ax->key))
      continue;
    v[*n].key = ax->key;
    v[*n].type = sv->is_str ? FF_FENCE_STR : FF_FENCE_INT;
    v[*n].i = sv->i;
    v[*n].s = sv->s;
    (*n)++;
  }
  free(idx);
  *out = v;
  return 0;
}

/* ---- reading a devices file ------------------------------------------- */

void
ff_fence_devlist_free(struct ff_fence_devlist *l)
{
  for (size_t i = 0; i < l->n; i++) {
    free((char *)l->v[i].devname);
    free((char *)l->v[i].backing);
    free((char *)l->v[i].pvid);
  }
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

/* The value of " KEY=" in the blank-separated fields of line, or NULL. */
static char *
field(const char *line, const char *key)
{
  size_t kl = strlen(key);
  const char *p = line;

  while (*p) {
    const char *end;

    while (*p == ' ' || *p == '\t')
      p++;
    end = p + strcspn(p, " \t");
    if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=')
      return strndup(p + kl + 1, (size_t)(end - p) - kl - 1);
    p = end;
  }
  return NULL;
}

int
ff_fence_parse_devices(const char *text, const char *name,
                       struct ff_fence_devlist *out)
{
  const char *p = text;
  unsigned lineno = 0;
  size_t alloc = 0;

  out->v = NULL;
  out->n = 0;
  while (*p) {
    size_t len = strcspn(p, "\n");
    char *line = strndup(p, len), *type, *idname, *dev, *pvid;
    struct ff_fence_dev *d;

    p += len + (p[len] == '\n');
    lineno++;
    if (!line)
      goto oom;
    if (!line[strspn(line, " \t\r")] || line[0] == '#' ||
        !strncmp(line, "VERSION=", 8) || !strncmp(line, "SYSTEMID=", 9)) {
      free(line);
      continue;
    }
    line[strcspn(line, "\r")] = '\0';
    type = field(line, "IDTYPE");
    idname = field(line, "IDNAME");
    dev = field(line, "DEVNAME");
    pvid = field(line, "PVID");
    free(line);
    if (!type || !idname || !dev || !*dev) {
      free(type);
      free(idname);
      free(dev);
      free(pvid);
      ff_fence_devlist_free(out);
      return ff_error("%s:%u: expected 'IDTYPE=... IDNAME=... DEVNAME=... "
                      "PVID=...'",
                      name, lineno);
    }
    if (out->n == alloc) {
      size_t na = alloc ? 2 * alloc : 64;
      struct ff_fence_dev *nv = realloc(out->v, na * sizeof *nv);

      if (!nv) {
        free(type);
        free(idname);
        free(dev);
        free(pvid);
        goto oom;
      }
      out->v = nv;
      alloc = na;
    }
    d = &out->v[out->n++];
    d->devname = dev;
    d->backing = NULL;
    if (!strcmp(type, "loop_file"))
      d->backing = idname;
    else
      free(idname);
    free(type);
    if (pvid && (!strcmp(pvid, ".") || !*pvid)) {
      free(pvid);
      pvid = NULL;
    }
    d->pvid = pvid;
  }
  return 0;
oom:
  ff_fence_devlist_free(out);
  return ff_error("out of memory");
}

int
ff_fence_read_devices(const char *path, struct ff_fence_devlist *out)
{
  struct ff_sb sb = FF_SB_INIT;
  char buf[65536];
  size_t n;
  FILE *f = fopen(path, "re");
  int r;

  out->v = NULL;
  out->n = 0;
  if (!f)
    return ff_error("open %s: %m", path);
  ff_sb_add(&sb, "");
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    ff_sb_addn(&sb, buf, n);
  if (ferror(f)) {
    fclose(f);
    ff_sb_release(&sb);
    return ff_error("read %s: %m", path);
  }
  fclose(f);
  if (ff_sb_failed(&sb)) {
    ff_sb_release(&sb);
    return ff_error("out of memory");
  }
  r = ff_fence_parse_devices(sb.buf, path, out);
  ff_sb_release(&sb);
  return r;
}
