/* fusefarm: the one user-facing program; dispatches to subcommands. */
#include "farm-registry.h"
#include "ff-cli.h"
#include "ff-daemon.h"
#include "ff-loop.h"
#include "ff-report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

static const struct command commands[] = {
  {"gen", ff_cmd_gen, "write one sparse image file per farm device"},
  {"manifest", ff_cmd_manifest,
   "print the farm's devices, VGs and LVs as "
   "JSON"},
  {"check", ff_cmd_check,
   "validate a farm spec or a scenario without running anything"},
  {"mount", ff_cmd_mount, "serve the farm over FUSE: one file per device"},
  {"attach", ff_cmd_attach, "attach a mounted farm's files to loop devices"},
  {"detach", ff_cmd_detach, "detach exactly the loop devices attach attached"},
  {"cleanup", ff_cmd_cleanup,
   "tear down the farms of runs that were cut off (SIGKILL)"},
  {"fence", ff_cmd_fence,
   "write a private lvm.conf + devices file for given devices"},
  {"udev-rule", ff_cmd_udev_rule,
   "print or install the udev rule keeping a host off farm PVs"},
  {"profile", ff_cmd_profile, "switch the I/O profile of a mounted farm"},
  {"stats", ff_cmd_stats, "print a mounted farm's I/O statistics"},
  {"run", ff_cmd_run, "run a scenario: time lvm workloads over a matrix"},
  {"report", ff_cmd_report, "render a saved run (table, CSV, SVG)"},
  {"vm", ff_cmd_vm, "boot a guest over the farm: real dm and nbd activation"},
  {"lvm-build", ff_cmd_lvm_build,
   "build lvm2 at a git ref into a cache; print its lvm"},
};

static void
usage(FILE *f)
{
  fputs("usage: fusefarm COMMAND [ARGS...]\n"
        "       fusefarm COMMAND --help\n"
        "\n"
        "fusefarm synthesizes thousands of virtual LVM2 PVs on demand from a\n"
        "farm spec (docs/spec-format.md); without a SPEC argument, commands\n"
        "use the built-in default farm.\n"
        "\n"
        "commands:\n",
        f);
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fputs("\n"
        "Exit status: 0 success; 1 runtime failure (mounting, attaching,\n"
        "lvm, I/O, an output file that cannot be written); 2 bad usage or\n"
        "bad input (an unknown option or bad value; an input file that is\n"
        "missing, unreadable, invalid or of another kind); run: 77 this\n"
        "machine cannot run it (not root, no /dev/fuse or loop-control);\n"
        "run and report --expect: 125 could not judge.\n",
        f);
}

static void
list_commands(char *out, size_t len)
{
  out[0] = '\0';
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
    size_t l = strlen(out);

    snprintf(out + l, len - l, "%s%s", i ? ", " : "", commands[i].name);
  }
}

int
main(int argc, char **argv)
{
  char names[256];

  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
      !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("fusefarm %s\n", FF_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (!strcmp(argv[1], commands[i].name))
      return commands[i].run(argc - 1, argv + 1);
  list_commands(names, sizeof names);
  if (argv[1][0] == '-')
    return ff_cli_usage(NULL,
                        "unknown option '%s' (a COMMAND comes first: "
                        "%s)",
                        argv[1], names);
  return ff_cli_usage(NULL, "unknown command '%s' (commands: %s)", argv[1],
                      names);
}
