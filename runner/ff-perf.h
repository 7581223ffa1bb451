/* fusefarm: sampling the whole machine with `perf record` around a
 * workload, and its samples as `perf script` text (ff-flame.h folds
 * them; docs/report.md, "Where the time goes").
 *
 * INVARIANTS
 *
 * - perf is a child started through ff-spawn.h, recording `-e cpu-clock
 *   -g -a` (every CPU, call graphs by frame pointers; or
 *   sched:sched_switch for off-CPU time) with its events
 *   off (`-D -1`) until ff_perf_enable(); enable and disable go through
 *   perf's control fifo and return once perf acknowledged them, so
 *   samples are taken exactly between the two calls, without sleeping
 *   to wait for perf to be ready.
 * - Everything perf writes (the fifos, perf.data, its log, the script
 *   text) is in the directory given to ff_perf_start, which the caller
 *   owns and removes.
 *
 * OWNERSHIP
 *
 * struct ff_perf is the caller's; ff_perf_stop() ends the child and
 * closes the fifos (also after a failed enable); ff_perf_kill() is the
 * way out on errors.
 *
 * ERRORS
 *
 * -1 with one ff_error(): "perf record: exited 255 before it was ready
 * (DIR/perf.log)", "perf_event_open: Permission denied".
 *
 * THREADS
 *
 * None.
 */
#ifndef FF_PERF_H
#define FF_PERF_H

#include "ff-spawn.h"

#include <limits.h>
#include <stddef.h>

struct ff_perf {
  struct ff_proc proc;
  int ctl, ack; /* the control fifos' fds, -1: closed */
  char dir[PATH_MAX];
  int enabled;
};

/* Whether perf can record here: perf (FF_PERF, else `perf` on PATH)
 * runs (`perf --version`), and a system-wide cpu-clock event opens.
 * The perf to run into path, or -1 with why (the message) in ff_error. */
int ff_perf_probe(char *path, size_t len);

/* Whether sched_switch can be recorded here (off-CPU time): tracefs
 * (FF_TRACEFS, else /sys/kernel/tracing or /sys/kernel/debug/tracing)
 * has events/sched/sched_switch, and a system-wide event of it opens.
 * Without FF_TRACEFS and with no tracefs mounted, it mounts one on
 * /sys/kernel/tracing (as perf does for a tracepoint; root only) and sets
 * *mounted.  The tracefs found into tracefs, or -1 with why in ff_error. */
int ff_perf_probe_sched(char *tracefs, size_t len, int *mounted);

/* Start `PERF record` into dir (made by the caller), events off; the
 * second records `-e sched:sched_switch -g -a` instead of cpu-clock
 * (every switch, its call graph: off-CPU time). */
int ff_perf_start(struct ff_perf *p, const char *perf, const char *dir);
int ff_perf_start_offcpu(struct ff_perf *p, const char *perf, const char *dir);

/* Events on, off: 0 once perf acknowledged, or -1 (perf died, did not
 * answer within a minute). */
int ff_perf_enable(struct ff_perf *p);
int ff_perf_disable(struct ff_perf *p);

/* Stop the recording (SIGINT), wait for perf to write its file. */
int ff_perf_stop(struct ff_perf *p);

/* Kill perf, if running, and close the fifos. */
void ff_perf_kill(struct ff_perf *p);

/* `PERF script --show-task-events -F comm,pid,tid,ip,sym,dso` of the
 * recording in dir into the file out. */
int ff_perf_script(const char *perf, const char *dir, const char *out);
/* `PERF script --ns --show-task-events --show-lost-events -F
 * comm,pid,tid,time,event,trace,ip,sym,dso` (ff_flame_parse_offcpu's
 * input) of the recording in dir into out. */
int ff_perf_script_offcpu(const char *perf, const char *dir, const char *out);

#endif
