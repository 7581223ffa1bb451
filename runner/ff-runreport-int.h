/* fusefarm: what the run report's source files share (ff-runreport.c
 * loads the model, ff-runreport-table.c renders the text report,
 * ff-runreport-csv.c the CSV files, ff-runreport-verdict.c the verdict).
 * Internal to libffrun: other modules use ff-runreport.h.  No threads. */
#ifndef FF_RUNREPORT_INT_H
#define FF_RUNREPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "ff-runreport.h"

/* Records "run report: out of memory" with ff_error(); returns -1. */
int ff_rr_oom(void);

/* Config c's setting key as text (ff_rr_setting.text) into buf (len
 * bytes, cut to fit), "" when c has no such setting. */
void ff_rr_setting_text(const struct ff_rr_config *c, const char *key,
                        char *buf, size_t len);

/* The short name of keys[k] as the table shows it: the last part
 * ("global/use_aio" gives "use_aio") unless another varying key ends
 * the same. */
const char *ff_rr_short_key(const struct ff_runreport *rr, size_t k);

/* The lines under the table that define its terms: the median and its
 * range over N repetitions, the units of each event activation, the
 * built-in profiles the settings name (ff-runreport-verdict.c). */
void ff_rr_print_definitions(const struct ff_runreport *rr, FILE *out);

#endif
