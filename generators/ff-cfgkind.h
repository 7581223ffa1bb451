/* fusefarm: which of our input formats a file looks like.
 *
 * The farm spec, the I/O profile and the scenario are libconfig files
 * that differ only in their top-level keys; a run document and a stats
 * snapshot are JSON with a "format" member.  When a file is given where
 * another kind is expected (a spec to `fusefarm run`, a scenario to
 * `fusefarm mount`), the loaders say which kind it is instead of
 * "unknown key" (ff_cfg_check_root in ff-cfg-int.h); front ends that
 * take more than one kind (`fusefarm vm`, `fusefarm report`) ask here
 * first.  Messages keep the parsers' form, "FILE: what was wrong":
 * "run.conf: this is a farm spec, not a scenario (...)".
 *
 * The verdict is a guess made only when it is clear: a libconfig file is
 * of kind K when every top-level key is one of K's and at least one of
 * them belongs to no other kind; anything else (a typo, a file with only
 * shared keys such as name or seed, a syntax error) is FF_CFG_UNKNOWN.
 * Nothing here fails or sets ff_error: an unreadable file is
 * FF_CFG_UNKNOWN, and its loader says why.
 */
#ifndef FF_CFGKIND_H
#define FF_CFGKIND_H

#include <stddef.h>

enum ff_cfg_kind {
  FF_CFG_UNKNOWN = 0,
  FF_CFG_SPEC,     /* a farm spec (docs/spec-format.md) */
  FF_CFG_PROFILE,  /* an I/O profile (docs/profile-format.md) */
  FF_CFG_SCENARIO, /* a scenario (docs/scenario-format.md) */
  FF_CFG_RUNDOC,   /* a run document, JSON (docs/run-json.md) */
  FF_CFG_STATS,    /* a stats snapshot, JSON (docs/stats.md) */
};

/* The kind of text[0..len) (NUL-terminated or not). */
enum ff_cfg_kind ff_cfg_kind_of_text(const char *text, size_t len);

/* The kind of the file at path (builtin:NAME is not a file: unknown). */
enum ff_cfg_kind ff_cfg_kind_of_file(const char *path);

/* "a farm spec", "a profile", "a scenario", "a run document (JSON)",
 * "a stats snapshot (JSON)", "unknown". */
const char *ff_cfg_kind_name(enum ff_cfg_kind kind);

/* The message for a file of kind `have` given where `want` was expected
 * (FF_CFG_UNKNOWN: a scenario or a farm spec), in the form every parser
 * message has, "PATH: what": "PATH: this is a farm spec, not a scenario
 * (serve it with fusefarm mount, or name it in a scenario: spec =
 * \"PATH\";)".  Writes at most len bytes to out and returns out. */
char *ff_cfg_kind_mismatch(enum ff_cfg_kind have, enum ff_cfg_kind want,
                           const char *path, char *out, size_t len);

/* What to do with a file of kind `have` given where `want` was expected,
 * for a message's parentheses: "run it with fusefarm run".  path is
 * quoted where the hint names it.  Writes at most len bytes to out and
 * returns out (empty when there is nothing to say). */
char *ff_cfg_kind_hint(enum ff_cfg_kind have, enum ff_cfg_kind want,
                       const char *path, char *out, size_t len);

#endif
