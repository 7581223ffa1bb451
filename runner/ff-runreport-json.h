/* fusefarm: the run report's verdict as JSON, for the run document.
 *
 * ff-runreport.h keeps jansson out of its API (the renderers and their
 * tests need none); what gives the model back as JSON is declared here.
 * Implemented in ff-runreport-verdict.c, next to the text it mirrors.
 * No threads; the model is borrowed for the call.
 */
#ifndef FF_RUNREPORT_JSON_H
#define FF_RUNREPORT_JSON_H

#include <jansson.h>

#include "ff-runreport.h"

/* The verdict as the run document's "verdict" member (docs/run-json.md):
 * {"event_direct": [...], "axes": [...]}, the comparisons
 * ff_runreport_print_verdict() prints, each with its ratio, min, max and
 * judgement (ff_runreport_judgement_name), an axis's effects with the
 * pairs of configs (ids and labels) behind them.  A new reference
 * (caller decrefs), or NULL with ff_error on allocation failure. */
json_t *ff_runreport_verdict_json(const struct ff_runreport *rr);

#endif
