/* fusefarm: helpers for the front ends that serve a farm (the FUSE
 * daemon, the nbdkit plugin), so that neither writes them for itself.
 *
 * Invariants: every function here is built from the public ff_farm_*
 * calls and returns what they would; none keeps state.
 *
 * Thread model: as the ff_farm_* calls they use (ff-farm.h): any number
 * of threads at once, concurrently with writes.
 *
 * Errors: -1 (or NULL) after recording one message with ff_error().
 */
#ifndef FF_SERVE_H
#define FF_SERVE_H

#include <stdint.h>

#include "ff-farm.h"

/* Load the spec at path (NULL: the built-in default farm) and build its
 * farm.  NULL on error, with the message of the spec parser or of
 * ff_farm_new (it names the file, line and key).  Prints nothing: the
 * caller reports ff_errmsg() its own way (stderr, nbdkit_error). */
struct ff_farm *ff_farm_load(const char *path);

/* Every range of device dev that may hold non-zero bytes
 * (ff_farm_extents: layout and overlay blocks), in a malloc'd array the
 * caller frees.  Returns the count (0: *out is NULL, the device reads as
 * zeros) or -1.  A write landing meanwhile may add ranges: the call then
 * fetches again, so the array is one consistent answer. */
int64_t ff_farm_extents_all(const struct ff_farm *farm, uint32_t dev,
                            struct ff_range **out);

/* ff_farm_zero(farm, dev, off, len), touching only the parts of the range
 * that may hold non-zero bytes: elsewhere there is no overlay block and
 * the base is zero, so zeroing changes nothing.  The result is the same
 * as ff_farm_zero's, but the cost grows with the device's layout and
 * writes instead of with len (ff_overlay_zero reads the base of every
 * block of its range): an NBD trim or a loop discard of a whole 1 TiB
 * device costs what its few metadata blocks cost.  Each piece is atomic on
 * its own (ff-overlay.h), not the whole request.  An out-of-range request
 * fails as ff_farm_zero does. */
int ff_farm_zero_sparse(struct ff_farm *farm, uint32_t dev, uint64_t off,
                        uint64_t len);

#endif
