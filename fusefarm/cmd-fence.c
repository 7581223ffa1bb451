/* fusefarm: `fusefarm fence`, the private lvm.conf and devices file of
 * runner/ff-fence.h for a list of devices, from the command line (the
 * test helpers in tests/lib/lvm-env.sh use it instead of writing their
 * own).
 *
 * Thread model: single-threaded.
 */
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-fence.h"
#include "ff-loop.h"
#include "ff-scenario.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char fence_usage[] =
  "usage: fusefarm fence --dir DIR [--lvm PATH | --lvm-version X.Y.Z]\n"
  "                      [--scenario FILE --config K] [--quiet] [DEV...]\n"
  "\n"
  "Write a private lvm configuration that makes lvm see exactly the\n"
  "devices DEV... and nothing else of this machine:\n"
  "  DIR/lvm.conf                  use it as LVM_SYSTEM_DIR=DIR\n"
  "  DIR/lvmlocal.conf             what lvm on this host needs besides\n"
  "  DIR/devices/system.devices    one line per DEV (IDTYPE=devname)\n"
  "Where the lvm build has no devices file (lvm2 before 2.03.12), or the\n"
  "scenario sets devices/use_devicesfile = 0, lvm.conf gets a\n"
  "devices/global_filter and filter accepting exactly DEV... instead, and\n"
  "the devices file lists nothing.  Without DEV, lvm sees no device.\n"
  "Running it again rewrites both files (to add a device, give them all).\n"
  "The scenario's fence key does not change what is listed: DEV... is.\n"
  "For the devices file of `fusefarm run`'s fence devicesfile-used (a\n"
  "host's own: the PVs of the VGs it uses), give those PVs only.\n"
  "\n"
  "lvmlocal.conf (read after lvm.conf) turns off udev, hints, backups,\n"
  "dbus, lvmpolld and dmeventd, and puts locks under /run/lock/lvm and\n"
  "backups under /run/lvm, unless the scenario sets the key: run lvm\n"
  "in a private mount namespace where both are bind mounts of a scratch\n"
  "directory (tests/lib/lvm-env.sh's ff_lvm does).  lvm.conf's text\n"
  "depends only on the scenario configuration and the lvm build, not on\n"
  "DEV (except in the filter form): `fusefarm run` and the guest of\n"
  "`fusefarm vm` get the same lvm.conf for the same configuration; the\n"
  "guest gets no lvmlocal.conf (its lvm runs as its system would).\n"
  "\n"
  "stdout gets the paths written, one a line; stderr a one-line summary.\n"
  "\n"
  "  -d, --dir DIR          the LVM_SYSTEM_DIR to write (created if missing)\n"
  "  -l, --lvm PATH         lvm binary whose build decides the form (lvm)\n"
  "      --lvm-version V    assume lvm version V (2.03.16) instead of\n"
  "                         asking the binary\n"
  "  -s, --scenario FILE    a scenario (docs/scenario-format.md) whose\n"
  "  -k, --config K         configuration K (1-based, as `fusefarm run`\n"
  "                         numbers them) adds its lvm settings\n"
  "  -q, --quiet            no summary on stderr\n"
  "  -h, --help             this text\n"
  "\n"
  "Exit status: 0 success, 1 runtime failure, 2 bad usage or scenario.\n";

int
ff_cmd_fence(int argc, char **argv)
{
  static const struct option opts[] = {
    {"dir", required_argument, NULL, 'd'},
    {"lvm", required_argument, NULL, 'l'},
    {"lvm-version", required_argument, NULL, 'V'},
    {"scenario", required_argument, NULL, 's'},
    {"config", required_argument, NULL, 'k'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *dir = NULL, *lvm = NULL, *version = NULL, *scenario = NULL,
             *config = NULL;
  struct ff_scenario *sc = NULL;
  struct ff_fence_setting *set = NULL;
  struct ff_fence_dev *devs = NULL;
  struct ff_fence f = {0};
  unsigned long long k = 0;
  char title[512];
  int quiet = 0, c, rc = 1;
  size_t ndevs;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+:d:l:s:k:qh", opts, NULL)) != -1) {
    switch (c) {
    case 'd':
      dir = optarg;
      break;
    case 'l':
      lvm = optarg;
      break;
    case 'V':
      version = optarg;
      break;
    case 's':
      scenario = optarg;
      break;
    case 'k':
      config = optarg;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'h':
      fputs(fence_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("fence", c, argv, opts);
    }
  }
  if (!dir)
    return ff_cli_usage("fence", "--dir DIR is required");
  if (lvm && version)
    return ff_cli_usage("fence", "--lvm and --lvm-version exclude each other");
  if (!scenario != !config)
    return ff_cli_usage("fence", "--scenario and --config go together");
  if (config && ff_cli_number("fence", "--config", config, 1, 1000000, &k))
    return 2;
  ndevs = (size_t)(argc - optind);
  for (int i = optind; i < argc; i++)
    if (argv[i][0] != '/' || strpbrk(argv[i], " \t\n"))
      return ff_cli_usage("fence",
                          "device '%s': expected an absolute device path "
                          "without blanks",
                          argv[i]);

  if (version) {
    unsigned a, b, p;
    char extra;

    if (sscanf(version, "%u.%u.%u%c", &a, &b, &p, &extra) != 3)
      return ff_cli_usage(
        "fence", "--lvm-version '%s': expected X.Y.Z (2.03.16)", version);
    ff_lvm_caps_for(a, b, p, &f.caps);
  } else if (ff_lvm_caps_probe(lvm ? lvm : "lvm", dir, &f.caps) < 0) {
    fprintf(stderr, "fusefarm fence: %s\n", ff_errmsg());
    return 1;
  }
  if (scenario) {
    size_t nset;

    sc = ff_scenario_load_file(scenario);
    if (!sc) {
      fprintf(stderr, "fusefarm fence: %s\n", ff_errmsg());
      return 2;
    }
    if (k > ff_scenario_nconfigs(sc)) {
      fprintf(stderr,
              "fusefarm fence: --config %llu: scenario %s has %llu "
              "configuration%s\n",
              k, scenario, (unsigned long long)ff_scenario_nconfigs(sc),
              ff_scenario_nconfigs(sc) == 1 ? "" : "s");
      rc = 2;
      goto out;
    }
    if (ff_fence_scenario_settings(sc, k - 1, &set, &nset) < 0) {
      fprintf(stderr, "fusefarm fence: %s\n", ff_errmsg());
      goto out;
    }
    f.settings = set;
    f.nsettings = nset;
    snprintf(title, sizeof title, "scenario %s, configuration %llu", sc->name,
             k);
    f.title = title;
  }
  devs = calloc(ndevs + 1, sizeof *devs);
  if (!devs) {
    fprintf(stderr, "fusefarm fence: out of memory\n");
    goto out;
  }
  for (size_t i = 0; i < ndevs; i++)
    devs[i].devname = argv[optind + (int)i];
  f.restrict_devices = 1;
  f.devs = devs;
  f.ndevs = ndevs;
  if (ff_fence_write(dir, &f) < 0) {
    fprintf(stderr, "fusefarm fence: %s\n", ff_errmsg());
    goto out;
  }
  printf("%s/lvm.conf\n%s/lvmlocal.conf\n%s/devices/system.devices\n", dir,
         dir, dir);
  if (!quiet)
    fprintf(
      stderr, "fusefarm fence: %zu device%s, lvm %u.%02u.%02u, %s\n", ndevs,
      ndevs == 1 ? "" : "s", f.caps.major, f.caps.minor, f.caps.patch,
      ff_fence_uses_filter(&f) ? "filter (no devices file)" : "devices file");
  rc = 0;
out:
  free(devs);
  free(set);
  ff_scenario_free(sc);
  return rc;
}
