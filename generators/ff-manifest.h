/* fusefarm: the farm manifest as JSON (docs/manifest.md).
 *
 * Returns a new jansson object owned by the caller (json_decref), or NULL
 * with ff_error on allocation failure.  Read-only on the farm.
 */
#ifndef FF_MANIFEST_H
#define FF_MANIFEST_H

#include <jansson.h>

struct ff_farm;

json_t *ff_manifest_json(const struct ff_farm *farm);

#endif
