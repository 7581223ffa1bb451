/* ff-parse-check: load one spec, profile or scenario file the way the
 * commands do and print "ok" or the parser's message, for
 * gen-error-table.sh (docs/parser-errors.md).
 *
 * usage: ff-parse-check spec|profile|scenario FILE
 * A spec is also built into a farm (as `fusefarm check` does), so errors
 * found while building are reported too.  A profile is loaded for the
 * built-in default farm (devices pv0000 to pv0013).  Exit 0 when the file
 * loads, 1 when it does not, 2 on usage errors. */
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-profile.h"
#include "ff-scenario.h"
#include "ff-spec.h"

#include <stdio.h>
#include <string.h>

static int
check_spec(const char *path)
{
  struct ff_spec *sp = ff_spec_load_file(path);
  struct ff_farm *farm = sp ? ff_farm_new(sp) : NULL;
  int r = farm ? 0 : -1;

  ff_spec_free(sp);
  ff_farm_free(farm);
  return r;
}

static int
check_profile(const char *path)
{
  struct ff_spec *sp =
    ff_spec_load_string(ff_spec_builtin_default, "<built-in>");
  struct ff_farm *farm = sp ? ff_farm_new(sp) : NULL;
  struct ff_profile *p;
  int r;

  ff_spec_free(sp);
  if (!farm)
    return -1;
  p = ff_profile_load_file(path, farm);
  r = p ? 0 : -1;
  ff_profile_free(p);
  ff_farm_free(farm);
  return r;
}

static int
check_scenario(const char *path)
{
  struct ff_scenario *sc = ff_scenario_load_file(path);
  int r = sc ? 0 : -1;

  ff_scenario_free(sc);
  return r;
}

int
main(int argc, char **argv)
{
  int r;

  if (argc != 3) {
    fputs("usage: ff-parse-check spec|profile|scenario FILE\n", stderr);
    return 2;
  }
  if (!strcmp(argv[1], "spec"))
    r = check_spec(argv[2]);
  else if (!strcmp(argv[1], "profile"))
    r = check_profile(argv[2]);
  else if (!strcmp(argv[1], "scenario"))
    r = check_scenario(argv[2]);
  else {
    fprintf(stderr, "ff-parse-check: unknown format '%s'\n", argv[1]);
    return 2;
  }
  if (r < 0) {
    printf("%s\n", ff_errmsg());
    return 1;
  }
  printf("ok\n");
  return 0;
}
