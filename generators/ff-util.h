/* fusefarm: small helpers shared by the core: sizes, name formats, UUIDs,
 * a deterministic hash-based random source, a growable string buffer.
 *
 * Everything here is pure (no global state) and thread-safe.  Functions
 * that can fail return -1 with a message recorded by ff_error().
 */
#ifndef FF_UTIL_H
#define FF_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define FF_SECTOR      512u
#define FF_UUID_LEN    32 /* characters on disk, no dashes */
#define FF_UUID_DASHED 38 /* 6-4-4-4-4-4-6 with dashes, without NUL */

/* Parse an lvm-style size: digits with an optional unit letter
 * (s = 512-byte sectors, b = bytes, k m g t p e = powers of 1024, either
 * case).  No unit means bytes.  Rejects empty, negative, fractional and
 * overflowing values. */
int ff_parse_size(const char *s, uint64_t *out);

/* Render a size as lvm's -L would accept it ("64M", "1T", "3584K",
 * "100B" when it is not a multiple of 1 KiB).  buf >= 32 bytes. */
void ff_format_size(uint64_t bytes, char *buf, size_t len);

/* Check a name format: literal text plus at most one integer conversion
 * (%u %d %x with an optional 0 flag and width) when allow_int, or exactly
 * one %s when allow_str; %% is a literal.  Sets *nconv to the number of
 * conversions. */
int ff_format_check(const char *fmt, int allow_int, int allow_str, int *nconv);

/* Expand a format checked by ff_format_check.  Returns a malloc'd string
 * (caller frees) or NULL on allocation failure. */
char *ff_format_uint(const char *fmt, unsigned v);
char *ff_format_str(const char *fmt, const char *s);

/* lvm's name rule: [A-Za-z0-9+_.-]+, not starting with '-', not "." or
 * "..", shorter than 128 characters. */
int ff_valid_lvm_name(const char *name);

/* Deterministic 64-bit hash of (seed, kind, a, b): splitmix64 steps.  The
 * same inputs give the same value on every host. */
uint64_t ff_hash4(uint64_t seed, uint64_t kind, uint64_t a, uint64_t b);

/* A UUID from the 62-character alphabet lvm uses, derived from the hash
 * inputs.  out gets exactly FF_UUID_LEN characters, no NUL. */
void ff_uuid_make(char out[FF_UUID_LEN], uint64_t seed, uint64_t kind,
                  uint64_t a, uint64_t b);

/* The first characters of every PV UUID the farm makes (the dashed
 * form's first group): what a host's udev rule recognises a farm PV by,
 * whatever carries it (loop, nbd-client, a qemu disk): blkid reports it
 * as ID_FS_UUID (fusefarm udev-rule, docs/fuse.md).  A PV UUID a spec
 * gives (pv_uuids) is kept as given. */
#define FF_PV_UUID_MARK "fusefm"

/* ff_uuid_make's UUID with FF_PV_UUID_MARK in front: 26 characters stay
 * from the hash. */
void ff_pv_uuid_make(char out[FF_UUID_LEN], uint64_t seed, uint64_t kind,
                     uint64_t a, uint64_t b);

/* Parse a UUID, dashed or not, into 32 raw characters.  Characters must
 * be [0-9a-zA-Z!#] as lvm requires. */
int ff_uuid_parse(const char *s, char out[FF_UUID_LEN]);

/* snprintf for paths, tags and config key paths: a result that does not
 * fit leaves an empty string rather than a wrong (cut) one.  0, or -1
 * when it did not fit. */
int ff_pathf(char *buf, size_t len, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/* The directory part of path into dir, as dirname(1) says it for a
 * file's path: "." without a slash, "/" for "/x", else everything before
 * the last slash.  0, or -1 (dir empty) when it does not fit. */
int ff_dirname(const char *path, char *dir, size_t len);

/* Write the dashed form (6-4-4-4-4-4-6) with a terminating NUL. */
void ff_uuid_dash(const char in[FF_UUID_LEN], char out[FF_UUID_DASHED + 1]);

/* ctime()-style text of t in UTC, without the trailing newline:
 * "Mon Nov 30 21:15:20 2026".  buf >= 32 bytes. */
void ff_ctime_utc(int64_t t, char *buf, size_t len);

/* A growable, always NUL-terminated string buffer.  Init with
 * FF_SB_INIT; release with ff_sb_release.  On allocation failure the
 * buffer is marked failed, further appends are no-ops, and
 * ff_sb_failed() tells the caller. */
struct ff_sb {
  char *buf;
  size_t len;
  size_t alloc;
  int failed;
};
#define FF_SB_INIT                                                            \
  {                                                                           \
    NULL, 0, 0, 0                                                             \
  }

void ff_sb_addf(struct ff_sb *sb, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));
void ff_sb_add(struct ff_sb *sb, const char *s);
void ff_sb_addn(struct ff_sb *sb, const char *s, size_t n);
int ff_sb_failed(const struct ff_sb *sb);
/* Hand the buffer to the caller (who frees it) and reset sb. */
char *ff_sb_detach(struct ff_sb *sb, size_t *len);
/* The text built, or NULL with ff_error "out of memory" (and sb
 * released) when an append failed. */
char *ff_sb_text(struct ff_sb *sb);
void ff_sb_release(struct ff_sb *sb);

#endif
