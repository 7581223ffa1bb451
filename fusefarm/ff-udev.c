/* fusefarm: keeping a host's udev and lvm2 off the farm's loops
 * (ff-udev.h). */
#include "ff-udev.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-spawn.h"
#include "ff-util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define UDEV_CONTROL "/run/udev/control"
#define UDEV_DATA    "/run/udev/data"

/* FNV-1a: the rule files of one mount point have one name. */
static uint64_t
fnv1a(const char *s)
{
  uint64_t h = 0xcbf29ce484222325ull;

  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ull;
  }
  return h;
}

const char *
ff_udev_rules_dir(void)
{
  const char *d = getenv("FUSEFARM_UDEV_RULES_DIR");

  return d && *d ? d : FF_UDEV_RULES_DIR;
}

int
ff_udev_rule_paths(const char *mnt_real, char *early, char *late)
{
  uint64_t h = fnv1a(mnt_real);
  const char *dir = ff_udev_rules_dir();

  if ((size_t)snprintf(early, PATH_MAX, "%s/00-fusefarm-%016" PRIx64 ".rules",
                       dir, h) >= PATH_MAX ||
      (size_t)snprintf(late, PATH_MAX, "%s/61-fusefarm-%016" PRIx64 ".rules",
                       dir, h) >= PATH_MAX)
    return ff_error("%s: path too long", dir);
  return 0;
}

char *
ff_udev_rules_text(const char *mnt_real, int late)
{
  struct ff_sb sb = FF_SB_INIT;

  for (const char *p = mnt_real; *p; p++)
    if (strchr("*?[]|\"\\", *p) || (unsigned char)*p < 0x20) {
      ff_error("%s: a farm mount point with '%c' cannot be named in a udev "
               "rule (its patterns would take it as a wildcard): mount the "
               "farm elsewhere",
               mnt_real, *p < 0x20 ? '?' : *p);
      return NULL;
    }
  ff_sb_addf(&sb,
             "# fusefarm: the loop devices of the farm mounted at\n"
             "# mount: %s\n"
             "# are a test farm's, not this host's disks.  Written by "
             "`fusefarm attach`,\n"
             "# removed by `fusefarm detach` (fusefarm's docs/fuse.md, "
             "\"A host with udev\").\n",
             mnt_real);
  if (!late)
    ff_sb_addf(&sb,
               "ACTION==\"remove\", GOTO=\"fusefarm_end\"\n"
               "SUBSYSTEM!=\"block\", GOTO=\"fusefarm_end\"\n"
               "KERNEL!=\"loop[0-9]*\", GOTO=\"fusefarm_end\"\n"
               "ATTR{loop/backing_file}!=\"%s/*\", GOTO=\"fusefarm_end\"\n"
               "ENV{FUSEFARM_MOUNT}=\"%s\"\n"
               "# lvm2's rules (every version) end here: no pvscan, no "
               "autoactivation\n"
               "ENV{DM_UDEV_DISABLE_OTHER_RULES_FLAG}=\"1\"\n"
               "# no blkid probe, no /dev/disk links (systemd >= 249)\n"
               "ENV{UDEV_DISABLE_PERSISTENT_STORAGE_RULES_FLAG}=\"1\"\n"
               "ENV{SYSTEMD_READY}=\"0\"\n"
               "ENV{UDISKS_IGNORE}=\"1\"\n"
               "LABEL=\"fusefarm_end\"\n",
               mnt_real, mnt_real);
  else
    ff_sb_addf(&sb,
               "# after blkid (60-persistent-storage.rules) on an older "
               "systemd:\n"
               "# no signature for mdadm's or lvm2's rules to act on\n"
               "ENV{FUSEFARM_MOUNT}!=\"%s\", GOTO=\"fusefarm_late_end\"\n"
               "ENV{ID_FS_TYPE}=\"\", ENV{ID_FS_USAGE}=\"\", "
               "ENV{ID_FS_UUID}=\"\", ENV{ID_FS_UUID_ENC}=\"\"\n"
               "ENV{SYSTEMD_READY}=\"0\"\n"
               "LABEL=\"fusefarm_late_end\"\n",
               mnt_real);
  return ff_sb_text(&sb);
}

int
ff_udev_running(void)
{
  struct stat st;

  return stat(UDEV_CONTROL, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* `udevadm ARGS...` with its stderr shown; 0 or -1. */
static int
udevadm(const char *const *argv)
{
  struct ff_spawn o = {.argv = argv, .inherit_stdio = 1};
  int st = ff_spawn_run(&o);

  if (st < 0)
    return -1;
  if (st != 0)
    return ff_error("%s %s failed (status %d)", argv[0], argv[1], st);
  return 0;
}

static int
reload(void)
{
  static const char *const argv[] = {"udevadm", "control", "--reload", NULL};

  return ff_udev_running() ? udevadm(argv) : 0;
}

int
ff_udev_reload(void)
{
  return reload();
}

int
ff_udev_fence(const char *mnt_real)
{
  char early[PATH_MAX], late[PATH_MAX];
  char *t[2] = {ff_udev_rules_text(mnt_real, 0),
                ff_udev_rules_text(mnt_real, 1)};
  int r = -1;

  if (!t[0] || !t[1] || ff_udev_rule_paths(mnt_real, early, late) < 0)
    goto out;
  /* No /run/udev: udev does not run on this host (nor did it since
   * boot); nothing to fence off. */
  if (!getenv("FUSEFARM_UDEV_RULES_DIR") && access("/run/udev", F_OK) < 0) {
    r = 0;
    goto out;
  }
  if (ff_mkdir(ff_udev_rules_dir(), 0755) < 0 ||
      ff_write_file_atomic(early, t[0], strlen(t[0])) < 0 ||
      ff_write_file_atomic(late, t[1], strlen(t[1])) < 0)
    goto out;
  r = reload();
out:
  free(t[0]);
  free(t[1]);
  return r;
}

int
ff_udev_unfence(const char *mnt_real)
{
  char early[PATH_MAX], late[PATH_MAX];
  int any = 0, r = 0;

  if (ff_udev_rule_paths(mnt_real, early, late) < 0)
    return -1;
  for (int i = 0; i < 2; i++) {
    const char *p = i ? late : early;

    if (unlink(p) == 0)
      any = 1;
    else if (errno != ENOENT)
      r = ff_error("remove %s: %m", p);
  }
  if (any && reload() < 0)
    r = -1;
  return r;
}

int
ff_udev_settle(void)
{
  static const char *const argv[] = {"udevadm", "settle", "--timeout=120",
                                     NULL};

  return ff_udev_running() ? udevadm(argv) : 0;
}

int
ff_udev_loop_fenced(const char *dev, const char *mnt_real)
{
  char path[64], line[PATH_MAX + 64], want[PATH_MAX + 32];
  struct stat st;
  FILE *f;
  int r = 0;

  if (stat(dev, &st) < 0 || !S_ISBLK(st.st_mode))
    return -1;
  snprintf(path, sizeof path, UDEV_DATA "/b%u:%u", major(st.st_rdev),
           minor(st.st_rdev));
  f = fopen(path, "re");
  if (!f)
    return -1;
  snprintf(want, sizeof want, "E:FUSEFARM_MOUNT=%s\n", mnt_real);
  while (!r && fgets(line, sizeof line, f))
    r = !strcmp(line, want);
  fclose(f);
  return r;
}

/* ---- dm devices on the farm's loops ------------------------------------ */

struct nameset {
  char **v;
  size_t n, cap;
};

static int
has(const struct nameset *s, const char *name)
{
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], name))
      return 1;
  return 0;
}

static int
add(struct nameset *s, const char *name)
{
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    char **v = realloc(s->v, cap * sizeof *v);

    if (!v)
      return ff_error("out of memory");
    s->v = v;
    s->cap = cap;
  }
  if (!(s->v[s->n] = strdup(name)))
    return ff_error("out of memory");
  s->n++;
  return 0;
}

/* Do all of /sys/block/KNAME/slaves/ lie in s? */
static int
rests_on(const struct nameset *s, const char *kname)
{
  char dir[PATH_MAX];
  struct dirent *e;
  DIR *d;
  int ok = 1, any = 0;

  snprintf(dir, sizeof dir, "/sys/block/%s/slaves", kname);
  d = opendir(dir);
  if (!d)
    return 0;
  while (ok && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    any = 1;
    ok = has(s, e->d_name);
  }
  closedir(d);
  return ok && any;
}

int
ff_udev_host_holders(const char *const *devs, size_t n, char ***names,
                     size_t *count)
{
  struct nameset on = {0}, dm = {0};
  size_t scan = 0;
  int r = -1;

  *names = NULL;
  *count = 0;
  for (size_t i = 0; i < n; i++) {
    const char *b = strrchr(devs[i], '/');

    if (add(&on, b ? b + 1 : devs[i]) < 0)
      goto out;
  }
  /* A dm device joins once everything it sits on has: those below it
   * join first, so the reverse of the join order removes tops first. */
  for (; scan < on.n; scan++) {
    char dir[PATH_MAX];
    struct dirent *e;
    DIR *d;

    snprintf(dir, sizeof dir, "/sys/block/%s/holders", on.v[scan]);
    d = opendir(dir);
    if (!d)
      continue;
    while ((e = readdir(d))) {
      char np[PATH_MAX], name[256] = "";
      FILE *f;

      if (e->d_name[0] == '.' || has(&on, e->d_name) ||
          !rests_on(&on, e->d_name))
        continue;
      snprintf(np, sizeof np, "/sys/block/%s/dm/name", e->d_name);
      f = fopen(np, "re");
      if (!f)
        continue; /* not a dm device (md?): not ours to remove */
      if (!fgets(name, sizeof name, f))
        name[0] = '\0';
      fclose(f);
      name[strcspn(name, "\n")] = '\0';
      if (!name[0])
        continue;
      if (add(&on, e->d_name) < 0 || add(&dm, name) < 0) {
        closedir(d);
        goto out;
      }
    }
    closedir(d);
  }
  for (size_t i = 0; i < dm.n / 2; i++) {
    char *t = dm.v[i];

    dm.v[i] = dm.v[dm.n - 1 - i];
    dm.v[dm.n - 1 - i] = t;
  }
  *names = dm.v;
  *count = dm.n;
  dm.v = NULL;
  dm.n = 0;
  r = 0;
out:
  ff_udev_names_free(on.v, on.n);
  ff_udev_names_free(dm.v, dm.n);
  return r;
}

int
ff_udev_remove_dm(char *const *names, size_t count)
{
  for (size_t i = 0; i < count; i++) {
    const char *argv[] = {"dmsetup", "remove", "--retry", names[i], NULL};
    struct ff_spawn o = {.argv = argv, .inherit_stdio = 1};
    int st = ff_spawn_run(&o);

    if (st != 0)
      return ff_error("dmsetup remove %s failed (%s %d)", names[i],
                      st < 0 ? "could not start:" : "status", st);
  }
  return (int)count;
}

void
ff_udev_names_free(char **names, size_t count)
{
  for (size_t i = 0; i < count; i++)
    free(names[i]);
  free(names);
}

/* ---- farm PVs by content ----------------------------------------------- */

const char *
ff_udev_pv_rule_text(void)
{
  return "# fusefarm: block devices holding a fusefarm PV (an LVM2_member "
         "whose\n"
         "# UUID starts \"" FF_PV_UUID_MARK
         "-\", as every PV UUID fusefarm makes "
         "does)\n"
         "# are a test farm's, not this host's disks, however they arrive:\n"
         "# nbd-client, a qemu disk, a loop of `fusefarm gen` images.  "
         "Written\n"
         "# by `fusefarm udev-rule --install`, removed by `fusefarm "
         "udev-rule\n"
         "# --remove` (fusefarm's docs/fuse.md, \"A host with udev\").\n"
         "# After blkid (60-persistent-storage.rules), before lvm2's 69-*.\n"
         "ACTION==\"remove\", GOTO=\"fusefarm_pv_end\"\n"
         "SUBSYSTEM!=\"block\", GOTO=\"fusefarm_pv_end\"\n"
         "ENV{ID_FS_TYPE}!=\"LVM2_member\", GOTO=\"fusefarm_pv_end\"\n"
         "ENV{ID_FS_UUID}!=\"" FF_PV_UUID_MARK
         "-*\", GOTO=\"fusefarm_pv_end\"\n"
         "ENV{FUSEFARM_PV}=\"1\"\n"
         "# lvm2's rules (every version) end here: no pvscan, no "
         "autoactivation\n"
         "ENV{DM_UDEV_DISABLE_OTHER_RULES_FLAG}=\"1\"\n"
         "ENV{SYSTEMD_READY}=\"0\"\n"
         "ENV{UDISKS_IGNORE}=\"1\"\n"
         "# no signature for mdadm's, multipath's or lvm2's rules to act on\n"
         "ENV{ID_FS_TYPE}=\"\", ENV{ID_FS_USAGE}=\"\"\n"
         "LABEL=\"fusefarm_pv_end\"\n";
}

int
ff_udev_farm_pvs(char ***devs, size_t *count)
{
  static const char want[] = "E:ID_FS_UUID=" FF_PV_UUID_MARK "-";
  struct nameset out = {0};
  struct dirent *e;
  DIR *d;

  *devs = NULL;
  *count = 0;
  d = opendir(UDEV_DATA);
  if (!d)
    return errno == ENOENT ? 0 : ff_error("%s: %m", UDEV_DATA);
  while ((e = readdir(d))) {
    char path[PATH_MAX], line[512], link[PATH_MAX], dev[PATH_MAX];
    unsigned maj, min;
    int found = 0;
    ssize_t n;
    FILE *f;

    if (sscanf(e->d_name, "b%u:%u", &maj, &min) != 2)
      continue;
    snprintf(path, sizeof path, UDEV_DATA "/%s", e->d_name);
    if (!(f = fopen(path, "re")))
      continue;
    while (!found && fgets(line, sizeof line, f))
      found = !strncmp(line, want, sizeof want - 1);
    fclose(f);
    if (!found)
      continue;
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u", maj, min);
    n = readlink(path, link, sizeof link - 1);
    if (n <= 0)
      continue; /* gone since */
    link[n] = 0;
    snprintf(dev, sizeof dev, "/dev/%s", strrchr(link, '/') + 1);
    if (add(&out, dev) < 0) {
      closedir(d);
      ff_udev_names_free(out.v, out.n);
      return -1;
    }
  }
  closedir(d);
  *devs = out.v;
  *count = out.n;
  return 0;
}

int
ff_udev_retrigger_farm_pvs(void)
{
  static const char *const argv[] = {
    "udevadm",
    "trigger",
    "--action=change",
    "--subsystem-match=block",
    "--property-match=ID_FS_UUID=" FF_PV_UUID_MARK "-*",
    NULL};

  if (!ff_udev_running())
    return 0;
  if (udevadm(argv) < 0)
    return -1;
  return ff_udev_settle();
}
