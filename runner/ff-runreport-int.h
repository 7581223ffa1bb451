/* fusefarm: what the run report's source files share (ff-runreport.c
 * loads the model, ff-runreport-table.c renders the text report,
 * ff-runreport-csv.c the CSV files).  Internal to libffrun: other modules
 * use ff-runreport.h.  No threads. */
#ifndef FF_RUNREPORT_INT_H
#define FF_RUNREPORT_INT_H

#include <stddef.h>

#include <jansson.h>

/* Records "run report: out of memory" with ff_error(); returns -1. */
int ff_rr_oom(void);

/* A settings value as text into buf (len bytes): strings as they are,
 * numbers and booleans as JSON writes them, "" for NULL. */
void ff_rr_value_text(const json_t *v, char *buf, size_t len);

#endif
