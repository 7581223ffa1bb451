/* fusefarm: helpers shared by our libconfig formats (the farm spec, the
 * I/O profile, the scenario): every message is "file:line: key.path: what
 * was expected", unknown keys are errors.
 *
 * `file` is the name used when libconfig does not know a setting's file
 * (a spec parsed from a string).  Key paths look like "vgs.[0].lvs.[1]".
 *
 * Getters return 1 when the key is present and valid (out set), 0 when it
 * is absent (out untouched), -1 on error (ff_error set).  All are pure
 * apart from ff_error's thread-local message.
 *
 * Internal: this is the parsers' helper (ff-spec.c here, serve/ff-profile.c
 * and runner/ff-scenario.c), not an API for front ends; fusefarm/,
 * nbd-plugin/ and guest/ never include it.
 */
#ifndef FF_CFG_INT_H
#define FF_CFG_INT_H

#include "ff-cfgkind.h"

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

/* Record "file:line: path: message" for setting s (or "file: path:
 * message" when s is NULL or has no line).  Always returns -1. */
int ff_cfg_err(const char *file, const config_setting_t *s, const char *path,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* out = path.key (or key at the top level). */
void ff_cfg_join(char *out, size_t len, const char *path, const char *key);

/* Every member of grp must be named in allowed (NULL-terminated). */
int ff_cfg_check_keys(const char *file, const config_setting_t *grp,
                      const char *path, const char *const *allowed);

/* ff_cfg_check_keys for the root group of a file that should be of kind
 * want: when a top-level key is unknown and the file is clearly of
 * another kind (ff-cfgkind.h), the error says that instead, as "FILE:
 * this is a farm spec, not a scenario (serve it with fusefarm mount,
 * ...)" (ff_cfg_kind_mismatch). */
int ff_cfg_check_root(const char *file, const config_setting_t *root,
                      enum ff_cfg_kind want, const char *const *allowed);

/* The kind a parsed root group looks like, by its top-level keys
 * (ff-cfgkind.h says when a guess is made). */
enum ff_cfg_kind ff_cfg_kind_of_root(const config_setting_t *root);

/* The top-level keys of each libconfig kind, NULL-terminated (what the
 * sniffer knows; each parser checks its own list, and test-cfg checks
 * that the two agree).  NULL for the JSON kinds. */
const char *const *ff_cfg_kind_keys(enum ff_cfg_kind kind);

/* An integer in [min, max]. */
int ff_cfg_int(const char *file, const config_setting_t *grp, const char *path,
               const char *key, int64_t min, int64_t max, int64_t *out);
int ff_cfg_uint(const char *file, const config_setting_t *grp,
                const char *path, const char *key, unsigned min, unsigned max,
                unsigned *out);

/* A size: an integer (bytes) or a string such as "64M" (ff_parse_size);
 * ff_cfg_size_value checks setting s itself, named kp in messages. */
int ff_cfg_size_value(const char *file, const config_setting_t *s,
                      const char *kp, uint64_t *out);
int ff_cfg_size(const char *file, const config_setting_t *grp,
                const char *path, const char *key, uint64_t *out);

/* A string, strdup'd into *out (the old *out is freed). */
int ff_cfg_str(const char *file, const config_setting_t *grp, const char *path,
               const char *key, char **out);

/* A finite number in [min, max] (integers accepted). */
int ff_cfg_float(const char *file, const config_setting_t *grp,
                 const char *path, const char *key, double min, double max,
                 double *out);

/* true or false. */
int ff_cfg_bool(const char *file, const config_setting_t *grp,
                const char *path, const char *key, int *out);

/* Record why config_read_file/string failed: "NAME: cannot read the
 * WHAT: ..." or "FILE:LINE: syntax error: ...".  Returns -1. */
int ff_cfg_read_error(config_t *cfg, const char *name, const char *what);

/* Parse text (or, when text is NULL, the file name) into cfg, which the
 * caller has config_init()ed and destroys.  A JSON document of ours (a
 * run document, a stats snapshot) is refused as such: "NAME: this is a
 * run document (JSON), not a scenario (render it with fusefarm report)";
 * WHAT is "spec", "profile" or "scenario".  Before libconfig sees the
 * text, reject what libconfig 1.5 would silently get wrong: an integer literal
 * out of range of its type (a decimal beyond 32 bits without an L suffix
 * is truncated to 32 bits, one beyond 64 bits saturates) and, in a file,
 * a NUL byte (the text would end there).  Messages are "NAME: cannot read
 * the WHAT: ..." or "NAME:LINE: syntax error: ...".  Returns 0 or -1. */
int ff_cfg_load(config_t *cfg, const char *text, const char *name,
                const char *what);

/* The name a file gives when it names none itself: its base name without
 * a ".conf" suffix ("dir/ssd.conf" -> "ssd").  malloc'd; NULL if out of
 * memory. */
char *ff_cfg_default_name(const char *file);

#endif
