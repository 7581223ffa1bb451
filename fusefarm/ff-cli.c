/* fusefarm: the subcommands' shared command-line helpers (ff-cli.h):
 * usage errors in one form, getopt's refusals said, whole numbers
 * checked.  No threads. */
#include "ff-cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
