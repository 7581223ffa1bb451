/* fusefarm: `fusefarm profile`: show or switch the I/O profile of a
 * mounted farm, through its control files (ff-ctl.h).  No threads. */
#include "ff-builtin.h"
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
  char path[PATH_MAX];
  char *text;
  int rc;

  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    fputs(profile_usage, stdout);
    return 0;
  }
  if (argc != 2 && argc != 3) {
    fputs(profile_usage, stderr);
    return 2;
  }
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
