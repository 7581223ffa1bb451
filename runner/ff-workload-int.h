/* fusefarm: what the workload runner's source files share (ff-workload.c
 * runs one workload and its repetitions, ff-workload-cmd.c starts and
 * times one command, ff-workload-errline.c picks the line that says why
 * a command failed, ff-workload-event.c emulates event activation,
 * ff-workload-io.c runs the io and fs workloads).  Internal to libffrun:
 * other modules use ff-workload.h.
 *
 * Threads: none (ff-workload.h).  Every function here takes the caller's
 * struct ff_wenv, which the caller owns.
 */
#ifndef FF_WORKLOAD_INT_H
#define FF_WORKLOAD_INT_H

#include "ff-workload.h"

#include <jansson.h>
#include <limits.h>

/* ---- helpers (ff-workload-cmd.c) ---------------------------------------- */

/* The monotonic clock in seconds. */
double ff_w_now(void);

/* A line for e's log (progress 0: e->say) or its progress line
 * (e->progress); nothing when that callback is NULL. */
void ff_w_emit(const struct ff_wenv *e, int progress, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/* Whether a signal asked the run to stop (e->stop). */
int ff_w_stopping(const struct ff_wenv *e);

/* ---- one command (ff-workload-cmd.c) ------------------------------------ */

/* Where a command's stdout and stderr go: outdir/TAG.out and .err. */
struct ff_w_files {
  char out[PATH_MAX + 64], err[PATH_MAX + 64];
};

void ff_w_files(const struct ff_wenv *e, const char *tag,
                struct ff_w_files *f);

/* Start an lvm command (argv[0] becomes e->lvm) with lvm's environment,
 * its output into outdir/TAG.out and .err: 0, or -1 with ff_error. */
int ff_w_start_lvm(const struct ff_wenv *e, const char **argv, const char *tag,
                   struct ff_proc *p);

/* A command that could not start (ff_error says why). */
#define FF_W_NOT_STARTED (-2)

/* Run o to its end, timed into *wall (from just before it starts to its
 * reaping; every timed command of a workload is timed here): its exit
 * status, FF_W_NOT_STARTED, or -1 when it could not be waited for. */
int ff_w_run_timed(const struct ff_spawn *o, double *wall);

/* One lvm command, timed, as ff_w_start_lvm starts it: its exit status,
 * or -1 with ff_error when it could not start or be waited for. */
int ff_w_time_lvm(const struct ff_wenv *e, const char **argv, double *wall,
                  const char *tag);

/* ---- error lines (ff-workload-errline.c) -------------------------------- */

/* Why a command that exited with status ex (ff-spawn: 128 + signal when
 * a signal killed it) failed, into buf: the error line of its stderr
 * file (ff_lvm_error_line), after the signal that killed it if one did. */
void ff_w_error_line_of(const char *path, int ex, char *buf, size_t len);

/* ---- workloads ---------------------------------------------------------- */

/* One repetition as the run document keeps it.  msg is data, not an
 * error channel: the run's "message", the first failed command's own
 * error line (or what made fusefarm count the command failed); an error
 * that stops the run goes through ff_error. */
struct ff_wrep {
  json_t *run; /* the run's object: "commands", "io", "fs", ... */
  double wall; /* its time, in seconds */
  int worst;   /* the highest exit status of its commands */
  int errors;  /* how many of them failed */
  char msg[512];
};

/* The repetitions below record into r (a failed command counts in
 * r->errors, raises r->worst and, the first, gives r->msg) and return 0,
 * or -1 with ff_error when the run cannot go on. */

/* Event activation (ff-workload-event.c): each device's arrival and each
 * complete VG go into devs and acts. */
int ff_w_event_activation(const struct ff_wenv *e, const struct ff_workload *w,
                          json_t *devs, json_t *acts, struct ff_wrep *r);

/* An io workload's repetition, fio on its target's block device, and an
 * fs workload's, mkfs, mount, fio and umount (ff-workload-io.c). */
int ff_w_io_run(const struct ff_wenv *e, const struct ff_workload *w,
                const char *tag, struct ff_wrep *r);
int ff_w_fs_run(const struct ff_wenv *e, const struct ff_workload *w,
                const char *tag, struct ff_wrep *r);

#endif
