/* fusefarm: the statistics snapshot as a jansson object, for what in
 * serve/ needs to edit one before it is written (ff-server.c keeps only
 * an export's devices) and for the module's unit test.  Internal to
 * serve/: the front ends use the text API of ff-stats.h.
 *
 * Ownership and threads as in ff-stats.h: a returned json_t belongs to
 * the caller (json_decref); ff_stats_json may run concurrently with
 * everything but ff_stats_new and ff_stats_free.
 */
#ifndef FF_STATS_INT_H
#define FF_STATS_INT_H

#include <jansson.h>

#include "ff-stats.h"

/* A snapshot as a JSON object (layout: docs/stats.md); arguments as for
 * ff_stats_json_text.  NULL with ff_error on allocation failure. */
json_t *ff_stats_json(struct ff_stats *s, const char *const *names,
                      int include_idle);

/* The text table from a JSON object in the ff_stats_json layout, listing
 * every device the document lists, in its order.  Checks and errors as
 * ff_stats_text_from_json_text says, but the messages do not name the
 * document ("devices[2].latency.read: missing \"p50_ns\""); j == NULL is
 * an error too.  The result is malloc'd; caller frees. */
char *ff_stats_text_from_json(const json_t *j, char **errmsg);

/* j as JSON text ending in a newline: one line, or with indent,
 * pretty-printed with two-space indents.  Caller frees.  NULL with
 * ff_error on allocation failure. */
char *ff_stats_json_dump(const json_t *j, int indent);

#endif
