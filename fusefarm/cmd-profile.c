/* fusefarm: `fusefarm profile`: show or switch the I/O profile of a
 * mounted farm, through its control files (ff-ctl.h).  No threads. */
#include "ff-builtin.h"
#include "ff-cfgkind.h"
#include "ff-cli.h"
#include "ff-ctl.h"
#include "ff-daemon.h"
#include "ff-error.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char profile_usage[] =
  "usage: fusefarm profile MNT PROFILE\n"
  "\n"
  "Switch the I/O profile of the farm mounted at MNT, live: requests that\n"
  "arrive afterwards get the new latency, contention and faults; the\n"
  "profile's clock (spin-up, stalls, vanish_at, appear_at) restarts.\n"
  "`fusefarm profile MNT` alone prints the current profile.\n";

int
ff_cmd_profile(int argc, char **argv)
{
  static const struct option opts[] = {
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  char path[PATH_MAX];
  char *text;
  int rc, c;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 'h':
      fputs(profile_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("profile", c, argv, opts);
    }
  }
  if (optind == argc)
    return ff_cli_usage("profile", "missing MNT");
  if (argc - optind > 2)
    return ff_cli_usage("profile", "too many arguments (from '%s')",
                        argv[optind + 2]);
  argv += optind - 1;
  argc -= optind - 1;
  if (argc == 2) {
    text = ff_ctl_read(argv[1], "profile", 1u << 20);
    if (!text) {
      fprintf(stderr, "fusefarm profile: %s is not a fusefarm mount (%s)\n",
              argv[1], ff_errmsg());
      return 1;
    }
    fputs(text, stdout);
    free(text);
    return 0;
  }
  if (ff_is_builtin(argv[2]))
    snprintf(path, sizeof path, "%s", argv[2]);
  else if (!realpath(argv[2], path)) {
    fprintf(stderr, "fusefarm profile: %s: %m\n", argv[2]);
    return 2;
  } else {
    enum ff_cfg_kind kind = ff_cfg_kind_of_file(path);
    char msg[2 * PATH_MAX + 256];

    /* Say so here, before the daemon refuses it as "unknown key". */
    if (kind != FF_CFG_UNKNOWN && kind != FF_CFG_PROFILE) {
      fprintf(
        stderr, "fusefarm profile: %s\n",
        ff_cfg_kind_mismatch(kind, FF_CFG_PROFILE, argv[2], msg, sizeof msg));
      return 2;
    }
  }
  rc = ff_ctl_write(argv[1], "profile", path);
  if (rc == FF_CTL_NOFILE) {
    fprintf(stderr, "fusefarm profile: %s is not a fusefarm mount (%s)\n",
            argv[1], ff_errmsg());
    return 1;
  }
  if (rc < 0) {
    fprintf(stderr, "fusefarm profile: %s\n", ff_errmsg());
    return 2;
  }
  printf("%s: profile %s\n", argv[1], path);
  return 0;
}
