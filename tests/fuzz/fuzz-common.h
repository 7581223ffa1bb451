/* fusefarm fuzz targets: what they share (see docs/fuzzing.md).
 *
 * Each target (fuzz-spec.c, fuzz-profile.c, fuzz-scenario.c, fuzz-read.c)
 * defines LLVMFuzzerTestOneInput.  It is linked either with libFuzzer
 * (the FF_FUZZ clang build) or with replay-main.c, which runs every file
 * of the corpus and regression directories once (a ctest test in every
 * build).
 *
 * A violated invariant calls abort() through FF_FUZZ_CHECK, so libFuzzer
 * and the replay driver both report it as a crash.  Nothing here keeps
 * state between inputs except the read-only farm fuzz-profile builds once.
 */
#ifndef FF_FUZZ_COMMON_H
#define FF_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

struct ff_spec;
struct ff_farm;

/* The libFuzzer entry point each target defines; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Report a violated invariant and abort(). */
#define FF_FUZZ_CHECK(cond)                                                   \
  do {                                                                        \
    if (!(cond))                                                              \
      ff_fuzz_fail(__FILE__, __LINE__, #cond);                                \
  } while (0)

__attribute__((noreturn, format(printf, 3, 4))) void
ff_fuzz_fail(const char *file, int line, const char *fmt, ...);

/* The input as a NUL-terminated string (libconfig reads up to the first
 * NUL, as it would from a file).  Caller frees. */
char *ff_fuzz_text(const uint8_t *data, size_t size);

/* The parsers' last message must be "NAME:LINE: key: ..." or "NAME: ...":
 * every error names the file it is about.  Aborts otherwise. */
void ff_fuzz_check_error(const char *name);

/* 1 when building sp's farm is cheap enough to do for every input: few
 * devices, VGs, LVs and metadata writes.  Specs beyond the limits the
 * farm itself enforces (1000000 devices or VGs) and specs that make no
 * device are "cheap" too, since ff_farm_new rejects them before it
 * allocates anything, so those checks are still fuzzed. */
int ff_fuzz_spec_buildable(const struct ff_spec *sp);

/* Build sp's farm when buildable; on failure check the message names
 * the spec (name).  On success read a few ranges of every device and
 * check the invariants that hold for any farm (reads are repeatable,
 * non-zero bytes lie inside ff_farm_extents, a duplicate reads like its
 * target, names look up to their device).  Returns the farm (caller
 * frees) or NULL. */
struct ff_farm *ff_fuzz_build_farm(const struct ff_spec *sp, const char *name);

/* Check one read of dev at [off, off + len): it must succeed exactly when
 * the range lies inside the device, give the same bytes twice and the
 * same bytes read as two pieces split at off + split (split <= len), put
 * non-zero bytes only inside the device's extents, and match the device
 * a duplicate copies.  Ranges past the end are passed a buffer of only
 * min(len, 64 KiB) bytes: a read that wrote before failing would
 * overflow it. */
void ff_fuzz_check_read(const struct ff_farm *farm, uint32_t dev, uint64_t off,
                        uint64_t len, uint64_t split);

#endif
