/* fusefarm: `fusefarm udev-rule`, the udev rule that keeps a host off
 * farm PVs however they reach it (ff-udev.h, "farm PVs by content").
 *
 * Thread model: single-threaded.
 */
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-loop.h"
#include "ff-udev.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char udev_rule_usage[] =
  "usage: fusefarm udev-rule [--install | --remove] [--dir DIR] [--quiet]\n"
  "\n"
  "The udev rule that keeps a host's lvm2, systemd, blkid users and\n"
  "udisks off fusefarm's PVs however they arrive: `nbd-client` of the\n"
  "nbdkit plugin's exports, a qemu disk of a guest, a loop of `fusefarm\n"
  "gen` images.  It matches what blkid reads on the device: an\n"
  "LVM2_member whose PV UUID starts \"fusefm-\", as every PV UUID the farm\n"
  "makes does (a UUID a spec gives with pv_uuids is kept as given, and not\n"
  "matched).  Such a device gets DM_UDEV_DISABLE_OTHER_RULES_FLAG=1 (lvm2's\n"
  "rules, every version, then run no pvscan and activate nothing),\n"
  "SYSTEMD_READY=0, UDISKS_IGNORE=1 and FUSEFARM_PV=1, and loses ID_FS_TYPE.\n"
  "Loops that `fusefarm attach` makes need none of this: attach writes\n"
  "rules of its own while the farm is attached.\n"
  "\n"
  "Without an option, print the rule (to copy into a guest or another\n"
  "machine's /etc/udev/rules.d).\n"
  "\n"
  "  -i, --install  write DIR/61-fusefarm-pv.rules, make udevd read it, and\n"
  "                 replay a change event on the farm PVs already there;\n"
  "                 then name any device-mapper device the host already\n"
  "                 stacked on them (fusefarm never removes those: `vgchange\n"
  "                 -an VG` on the host does)\n"
  "  -r, --remove   remove DIR/61-fusefarm-pv.rules (if there) and make\n"
  "                 udevd forget it\n"
  "  -d, --dir DIR  the rules directory (default /etc/udev/rules.d: the\n"
  "                 rule stays across reboots; /run/udev/rules.d until the\n"
  "                 next boot)\n"
  "  -q, --quiet    no summary on stderr\n"
  "  -h, --help     this text\n"
  "\n"
  "Exit status: 0 success (--install: also when the host already\n"
  "activated farm PVs, which it names), 1 runtime failure, 2 bad usage.\n";

/* Name the dm devices the host stacked on farm PVs (those udev knows). */
static int
report_farm_pvs(int quiet)
{
  char **devs = NULL, **dm = NULL;
  size_t n = 0, ndm = 0;
  int r = 0;

  if (ff_udev_farm_pvs(&devs, &n) < 0)
    return -1;
  if (n && ff_udev_host_holders((const char *const *)devs, n, &dm, &ndm) < 0)
    r = -1;
  if (!quiet && n)
    fprintf(stderr,
            "fusefarm udev-rule: %zu farm PV%s on this host now "
            "carr%s the rule's properties\n",
            n, n == 1 ? "" : "s", n == 1 ? "ies" : "y");
  if (ndm) {
    fprintf(stderr,
            "fusefarm udev-rule: the host had already activated farm PVs "
            "before the rule was there: %zu device-mapper device%s on them:",
            ndm, ndm == 1 ? "" : "s");
    for (size_t i = 0; i < ndm; i++)
      fprintf(stderr, " %s", dm[i]);
    fputs(" (deactivate their VGs with the host's vgchange -an)\n", stderr);
  }
  ff_udev_names_free(devs, n);
  ff_udev_names_free(dm, ndm);
  return r;
}

int
ff_cmd_udev_rule(int argc, char **argv)
{
  /* clang-format off */
  static const struct option opts[] = {
    {"install", no_argument, NULL, 'i'},
    {"remove", no_argument, NULL, 'r'},
    {"dir", required_argument, NULL, 'd'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  /* clang-format on */
  const char *dir = FF_UDEV_PV_RULE_DIR, *text = ff_udev_pv_rule_text();
  int install = 0, remove = 0, quiet = 0, c;
  char path[PATH_MAX];
  struct stat st;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+:ird:qh", opts, NULL)) != -1) {
    switch (c) {
    case 'i':
      install = 1;
      break;
    case 'r':
      remove = 1;
      break;
    case 'd':
      dir = optarg;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'h':
      fputs(udev_rule_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("udev-rule", c, argv, opts);
    }
  }
  if (optind < argc)
    return ff_cli_usage("udev-rule", "unexpected argument '%s'", argv[optind]);
  if (install && remove)
    return ff_cli_usage("udev-rule", "--install and --remove exclude each "
                                     "other");
  if (!*dir)
    return ff_cli_usage("udev-rule", "--dir: an empty path");
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, FF_UDEV_PV_RULE) >=
      sizeof path)
    return ff_cli_usage("udev-rule", "--dir '%s': path too long", dir);

  if (!install && !remove) {
    fputs(text, stdout);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (remove) {
    if (unlink(path) < 0) {
      if (errno != ENOENT) {
        ff_error("remove %s: %m", path);
        return 1;
      }
      if (!quiet)
        fprintf(stderr, "fusefarm udev-rule: %s was not there\n", path);
      return 0;
    }
    if (ff_udev_reload() < 0)
      return 1;
    if (!quiet)
      fprintf(stderr, "fusefarm udev-rule: removed %s\n", path);
    return 0;
  }
  if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
    return ff_cli_usage("udev-rule", "--dir '%s' is not a directory", dir);
  if (ff_mkdir(dir, 0755) < 0 ||
      ff_write_file_atomic(path, text, strlen(text)) < 0)
    return 1;
  if (!quiet)
    fprintf(stderr, "fusefarm udev-rule: wrote %s%s\n", path,
            ff_udev_running() ? ""
                              : " (no udevd runs here: it applies once "
                                "one does)");
  if (ff_udev_reload() < 0 || ff_udev_retrigger_farm_pvs() < 0)
    return 1;
  return report_farm_pvs(quiet) < 0 ? 1 : 0;
}
