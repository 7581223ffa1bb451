/* fusefarm: the subcommands' shared command-line helpers, and the
 * generator's subcommands of the `fusefarm` program.
 *
 * Each subcommand takes the argv of its subcommand (argv[0] is the
 * subcommand name) and returns the process exit status, one rule for
 * all (README, fusefarm.pod):
 *   0  success;
 *   1  a runtime failure: mounting, attaching, lvm, I/O, a mount point
 *      that is not a mounted farm, an output file that cannot be written;
 *   2  bad usage or bad input: an unknown option, a missing or bad
 *      value, too many arguments, and an input file (spec, profile,
 *      scenario, overlay, run document, stats snapshot) that is missing,
 *      unreadable, invalid or of another kind;
 *  77  (`fusefarm run`) this machine cannot run it: not root, no
 *      /dev/fuse or /dev/loop-control (automake's "skipped"; distinct
 *      from 125, which `git bisect run` reads as "cannot test this
 *      commit" and `--expect` returns when it could not judge).
 * Messages go to stderr as "fusefarm CMD: message"; a usage error adds
 * "Try 'fusefarm CMD --help'." on a line of its own.
 *
 * Every getopt_long loop sets opterr = 0, starts its optstring with ':'
 * (after a '+' if any) and hands anything it does not know to
 * ff_cli_bad_option.
 */
#ifndef FF_CLI_H
#define FF_CLI_H

#include <getopt.h>
#include <stdint.h>

/* The exit status of a run this machine cannot do (see above). */
#define FF_EXIT_CANNOT_RUN 77

/* Print "fusefarm CMD: MESSAGE" and "Try 'fusefarm CMD --help'." (CMD
 * NULL: the program itself) to stderr.  Returns 2, the exit status. */
int ff_cli_usage(const char *cmd, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

/* Say what getopt_long's '?' or ':' (c) was about, by ff_cli_usage:
 * "unknown option '--bogus'", "ambiguous option '--c' (--csv, --config)",
 * "option '--json' needs an argument", "option '--keep' takes no
 * argument".  opts is the loop's long-option table.  Returns 2. */
int ff_cli_bad_option(const char *cmd, int c, char *const *argv,
                      const struct option *opts);

/* The whole number s for option opt, from lo to hi: 0 with *out set, or,
 * with "fusefarm CMD: OPT S: expected a whole number from LO to HI"
 * printed by ff_cli_usage, 2. */
int ff_cli_number(const char *cmd, const char *opt, const char *s,
                  unsigned long long lo, unsigned long long hi,
                  unsigned long long *out);

struct ff_farm;

int ff_cmd_gen(int argc, char **argv);
int ff_cmd_manifest(int argc, char **argv);
int ff_cmd_check(int argc, char **argv);
/* fusefarm/cmd-lvm-build.c; exits 125 when the lvm2 tree does not build */
int ff_cmd_lvm_build(int argc, char **argv);

/* Load the spec at path (NULL: the built-in default) and build its farm
 * with the one farm loader (ff_server_load_farm); on failure print
 * "fusefarm CMD: message" and return NULL. */
struct ff_farm *ff_cli_load_farm(const char *cmd, const char *path);

/* The same, with the farm scaled to `devices` devices (0: as the
 * spec says; ff_spec_scale). */
struct ff_farm *ff_cli_load_farm_scaled(const char *cmd, const char *path,
                                        uint64_t devices);

#endif
