/* fusefarm: the one user-facing program; dispatches to subcommands. */
#include "farm-registry.h"
#include "ff-cli.h"
#include "ff-daemon.h"
#include "ff-loop.h"
#include "ff-report.h"

#include <errno.h>
#include <stdarg.h>
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

int
ff_cli_usage(const char *cmd, const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, "fusefarm%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'fusefarm%s%s --help'.\n", cmd ? " " : "",
          cmd ? cmd : "");
  return 2;
}

int
ff_cli_bad_option(const char *cmd, int c, char *const *argv,
                  const struct option *opts)
{
  /* getopt_long has moved past a long option it refused, so it is
   * argv[optind - 1]; a short one may sit inside a cluster (-qx), so it
   * is named by optopt alone. */
  const char *arg = optind > 0 ? argv[optind - 1] : NULL;
  int is_long = arg && !strncmp(arg, "--", 2) && arg[2];
  int n = is_long ? (int)strcspn(arg, "=") : 0;
  char also[256] = "";
  unsigned matches = 0;

  if (c == ':') {
    if (is_long)
      return ff_cli_usage(cmd, "option '%.*s' needs an argument", n, arg);
    return ff_cli_usage(cmd, "option '-%c' needs an argument", optopt);
  }
  if (optopt) {
    /* A long option given an argument it does not take ("--keep=1"), or
     * an unknown short option (argv[optind - 1] may then be anything). */
    for (const struct option *o = opts; is_long && arg[n] == '=' && o->name;
         o++)
      if (o->val == optopt && o->has_arg == no_argument &&
          !strncmp(o->name, arg + 2, (size_t)n - 2))
        return ff_cli_usage(cmd, "option '--%s' takes no argument", o->name);
    return ff_cli_usage(cmd, "unknown option '-%c'", optopt);
  }
  if (!is_long) /* a bare "-" or something getopt did not say */
    return ff_cli_usage(cmd, "unknown option '%s'", arg ? arg : "?");
  /* An unknown long option, or a prefix of several. */
  for (const struct option *o = opts; o && o->name; o++) {
    size_t l = strlen(also);

    if (strncmp(o->name, arg + 2, (size_t)n - 2))
      continue;
    snprintf(also + l, sizeof also - l, "%s--%s", matches ? ", " : "",
             o->name);
    matches++;
  }
  if (matches > 1)
    return ff_cli_usage(cmd, "ambiguous option '%.*s' (%s)", n, arg, also);
  return ff_cli_usage(cmd, "unknown option '%.*s'", n, arg);
}

int
ff_cli_number(const char *cmd, const char *opt, const char *s,
              unsigned long long lo, unsigned long long hi,
              unsigned long long *out)
{
  unsigned long long v;
  char *end;

  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] < '0' || s[0] > '9' || v < lo ||
      v > hi)
    return ff_cli_usage(cmd,
                        "%s %s: expected a whole number from %llu to "
                        "%llu",
                        opt, s, lo, hi);
  *out = v;
  return 0;
}

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
