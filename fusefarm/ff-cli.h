/* fusefarm: the generator's subcommands of the `fusefarm` program.
 *
 * Each takes the argv of its subcommand (argv[0] is the subcommand name)
 * and returns the process exit status: 0 success, 1 a runtime failure,
 * 2 bad usage or a bad spec.  Messages go to stderr as
 * "fusefarm CMD: message".
 */
#ifndef FF_CLI_H
#define FF_CLI_H

#include <stdint.h>

struct ff_farm;

int ff_cmd_gen(int argc, char **argv);
int ff_cmd_manifest(int argc, char **argv);
int ff_cmd_check(int argc, char **argv);

/* Load the spec at path (NULL: the built-in default) and build its farm
 * with the one farm loader (ff_server_load_farm); on failure print
 * "fusefarm CMD: message" and return NULL. */
struct ff_farm *ff_cli_load_farm(const char *cmd, const char *path);

/* The same, with the farm scaled to about `devices` devices (0: as the
 * spec says; ff_spec_scale). */
struct ff_farm *ff_cli_load_farm_scaled(const char *cmd, const char *path,
                                        uint64_t devices);

#endif
