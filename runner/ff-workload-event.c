/* fusefarm: event activation's workload (ff-workload-int.h): each
 * device's pvscan at its arrival, each complete VG's vgchange, as the
 * lvm build's udev rule and systemd units run them (enum ff_lvm_dialect),
 * at most `concurrency` at once.  No threads: the commands are child
 * processes, waited for through their pidfds (ff-spawn.h). */
#include "ff-workload-int.h"

#include "ff-error.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

/* ---- event-style activation ---------------------------------------------
 *
 * Each device "arrives" at its scheduled time (all at time 0, or spread
 * evenly: device i of n at spread * i / n) and gets the pvscan that
 * lvm2's udev rule (69-dm-lvm.rules) runs; when pvscan says its VG is
 * complete, the VG gets the vgchange that the rule starts through
 * systemd-run.  At most `concurrency` commands run at once (udev's
 * children limit); what is due while every slot is busy waits in a
 * queue, VGs' vgchanges first, then arrivals in arrival order.
 *
 * The loop never blocks on a running command: it sleeps in ppoll() over
 * the running commands' pidfds until either one of them exits or the
 * next arrival is due, so arrivals start on schedule however slow the
 * commands are (when a slot is free), and a command that had to wait is
 * recorded as queued.  Only the commands it started are waited for.
 */

int
ff_event_device_argv(int d, int no_dm, const char *dev, const char *devno,
                     const char **argv)
{
  int n = 1;

  argv[0] = NULL;
  switch (d) {
  case FF_DIALECT_EVENT:
  case FF_DIALECT_EVENT_2_03_14:
    argv[n++] = "pvscan";
    argv[n++] = "--cache";
    argv[n++] = "--listvg";
    argv[n++] = "--checkcomplete";
    argv[n++] = "--vgonline";
    if (d == FF_DIALECT_EVENT) {
      argv[n++] = "--autoactivation";
      argv[n++] = "event";
    }
    argv[n++] = "--udevoutput";
    argv[n++] = dev;
    break;
  case FF_DIALECT_PVSCAN_AY:
  case FF_DIALECT_LVMETAD:
    argv[n++] = "pvscan";
    argv[n++] = "--cache";
    argv[n++] = "--activate";
    argv[n++] = "ay";
    if (no_dm) {
      argv[n++] = "--driverloaded";
      argv[n++] = "n";
    }
    argv[n++] = devno;
    break;
  default:
    return 0;
  }
  argv[n] = NULL;
  return n - 1;
}

int
ff_event_vg_argv(int d, int no_dm, const char *vg, const char **argv)
{
  int n = 1;

  argv[0] = NULL;
  if (d != FF_DIALECT_EVENT && d != FF_DIALECT_EVENT_2_03_14)
    return 0;
  argv[n++] = "vgchange";
  argv[n++] = "-aay";
  if (d == FF_DIALECT_EVENT) {
    argv[n++] = "--autoactivation";
    argv[n++] = "event";
  } else {
    argv[n++] = "--nohints";
  }
  if (no_dm) {
    argv[n++] = "--driverloaded";
    argv[n++] = "n";
  }
  argv[n++] = vg;
  argv[n] = NULL;
  return n - 1;
}

const char *
ff_event_command(int d, int no_dm)
{
  switch (d) {
  case FF_DIALECT_EVENT:
    return no_dm ? "lvm pvscan --cache --listvg --checkcomplete --vgonline "
                   "--autoactivation event --udevoutput DEV; lvm vgchange "
                   "-aay --autoactivation event --driverloaded n VG"
                 : "lvm pvscan --cache --listvg --checkcomplete --vgonline "
                   "--autoactivation event --udevoutput DEV; lvm vgchange "
                   "-aay --autoactivation event VG";
  case FF_DIALECT_EVENT_2_03_14:
    return no_dm ? "lvm pvscan --cache --listvg --checkcomplete --vgonline "
                   "--udevoutput DEV; lvm vgchange -aay --nohints "
                   "--driverloaded n VG"
                 : "lvm pvscan --cache --listvg --checkcomplete --vgonline "
                   "--udevoutput DEV; lvm vgchange -aay --nohints VG";
  case FF_DIALECT_PVSCAN_AY:
    return no_dm ? "lvm pvscan --cache --activate ay --driverloaded n MAJ:MIN"
                 : "lvm pvscan --cache --activate ay MAJ:MIN";
  case FF_DIALECT_LVMETAD:
    return no_dm ? "lvmetad; lvm pvscan --cache --activate ay --driverloaded "
                   "n MAJ:MIN"
                 : "lvmetad; lvm pvscan --cache --activate ay MAJ:MIN";
  default:
    return "(none: this lvm ran no event activation)";
  }
}

struct job {
  struct ff_proc p; /* p.pid 0: a free slot */
  int kind;         /* 0 pvscan of device idx, 1 vgchange of VG idx */
  uint32_t idx;
  double sched, start; /* seconds from the first arrival */
  int queued;
};

struct activation {
  const struct ff_wenv *e;
  const struct ff_workload *w;
  double t0;
  uint32_t n, *order;   /* the devices present, in arrival order */
  uint32_t arrived;     /* order[0..arrived-1] have arrived */
  uint32_t pv_next;     /* order[pv_next] is the next pvscan to start */
  uint32_t pv_queued;   /* arrivals before this one that are not started
                         * yet waited for a slot */
  char **vgq;           /* complete VGs, in completion order */
  double *vg_ready;     /* when each was reported complete */
  uint32_t nvq, vqhead; /* vgq[vqhead..nvq-1] are not started yet */
  uint32_t vg_queued;
  struct job *jobs; /* [concurrency] */
  unsigned running;
  json_t *devs, *acts;
  double last_end;
  struct ff_wrep *r; /* worst, errors, msg: the caller's repetition */
};

static double
arrival_time(const struct activation *a, uint32_t k)
{
  return (double)a->w->spread_ns / 1e9 * k / a->n;
}

/* Count the arrivals that are due by now. */
static void
arrive(struct activation *a)
{
  double now = ff_w_now() - a->t0;

  while (a->arrived < a->n && arrival_time(a, a->arrived) <= now)
    a->arrived++;
}

/* Start the next due command in slot j: a completed VG's vgchange first
 * (as systemd would start it), else the next arrival's pvscan. */
static int
start_job(struct activation *a, struct job *j)
{
  const struct ff_wenv *e = a->e;
  const char *argv[16];
  char tag[64], devno[32] = "";

  if (a->vqhead < a->nvq) {
    j->kind = 1;
    j->idx = a->vqhead++;
    j->sched = a->vg_ready[j->idx];
    j->queued = j->idx < a->vg_queued;
    ff_event_vg_argv(e->dialect, e->no_dm, a->vgq[j->idx], argv);
    ff_pathf(tag, sizeof tag, "vgchange-%u", j->idx);
  } else {
    uint32_t k = a->pv_next++;
    uint32_t d = a->order[k];
    struct stat st;

    j->kind = 0;
    j->idx = d;
    j->sched = arrival_time(a, k);
    j->queued = k < a->pv_queued;
    /* lvm2-pvscan@MAJ:MIN.service names the device by its number. */
    if (stat(e->paths[d], &st) == 0 && S_ISBLK(st.st_mode))
      snprintf(devno, sizeof devno, "%u:%u", major(st.st_rdev),
               minor(st.st_rdev));
    else if (e->dialect == FF_DIALECT_PVSCAN_AY ||
             e->dialect == FF_DIALECT_LVMETAD)
      return ff_error("%s: not a block device (%m)", e->paths[d]);
    ff_event_device_argv(e->dialect, e->no_dm, e->paths[d], devno, argv);
    ff_pathf(tag, sizeof tag, "pvscan-%u", d);
  }
  j->start = ff_w_now() - a->t0;
  if (ff_w_start_lvm(e, argv, tag, &j->p) < 0)
    return -1;
  a->running++;
  return 0;
}

/* The VGs a pvscan --activate ay activated, from its stdout ("  1 logical
 * volume(s) in volume group "vg0" now active"): appended to a->acts as
 * activations that ran inside the pvscan of slot j.  Returns how many. */
static int
pvscan_activations(struct activation *a, struct job *j, const char *text,
                   double end, int ex)
{
  static const char key[] = "in volume group \"";
  const char *p = text;
  int n = 0;

  while (p && (p = strstr(p, key))) {
    const char *vg = p + strlen(key), *q = strchr(vg, '"');

    if (!q)
      break;
    if (!strncmp(q, "\" now active", 12)) {
      char *name = strndup(vg, (size_t)(q - vg));

      if (!name)
        return ff_error("out of memory");
      json_array_append_new(
        a->acts, json_pack("{s:s, s:f, s:f, s:f, s:b, s:i}", "vg", name,
                           "scheduled", j->start, "start", j->start, "end",
                           end, "queued", j->queued, "exit", ex));
      free(name);
      n++;
    }
    p = q;
  }
  return n;
}

/* Record the command of slot j, which exited with status ex. */
static int
finish_job(struct activation *a, struct job *j, int ex)
{
  const struct ff_wenv *e = a->e;
  double end = ff_w_now() - a->t0;
  char tag[64];

  a->last_end = end;
  a->running--;
  if (ex > a->r->worst)
    a->r->worst = ex;
  ff_pathf(tag, sizeof tag, "%s-%u", j->kind ? "vgchange" : "pvscan", j->idx);
  if (ex) {
    a->r->errors++;
    if (!a->r->msg[0]) {
      char err[PATH_MAX + 64];

      ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, tag);
      ff_w_error_line_of(err, ex, a->r->msg, sizeof a->r->msg);
    }
  }
  if (j->kind == 0) {
    static const char key[] = "LVM_VG_NAME_COMPLETE='";
    char out[PATH_MAX + 64], *text, *p = NULL, *q;
    int complete;

    ff_pathf(out, sizeof out, "%s/%s.out", e->outdir, tag);
    text = ff_slurp(out, 65536);
    if (e->dialect == FF_DIALECT_EVENT ||
        e->dialect == FF_DIALECT_EVENT_2_03_14) {
      p = text ? strstr(text, key) : NULL;
      complete = p != NULL;
    } else {
      complete = pvscan_activations(a, j, text, end, ex);
      if (complete < 0) {
        free(text);
        return -1;
      }
    }
    json_array_append_new(
      a->devs, json_pack("{s:s, s:s?, s:f, s:f, s:f, s:b, s:i, s:b}", "device",
                         e->names[j->idx], "vg", e->vgs[j->idx], "scheduled",
                         j->sched, "start", j->start, "end", end, "queued",
                         j->queued, "exit", ex, "vg_complete", complete > 0));
    if (p && (q = strchr(p + strlen(key), '\''))) {
      char *vg = strndup(p + strlen(key), (size_t)(q - p - strlen(key)));

      if (!vg) {
        free(text);
        return ff_error("out of memory");
      }
      a->vg_ready[a->nvq] = end;
      a->vgq[a->nvq++] = vg;
    }
    free(text);
  } else {
    json_array_append_new(a->acts,
                          json_pack("{s:s, s:f, s:f, s:f, s:b, s:i}", "vg",
                                    a->vgq[j->idx], "scheduled", j->sched,
                                    "start", j->start, "end", end, "queued",
                                    j->queued, "exit", ex));
  }
  return 0;
}

/* Sleep until a running command exits or the next arrival is due (at
 * most 200 ms, so that a stop request is seen soon), then reap what
 * exited. */
static int
wait_jobs(struct activation *a, struct pollfd *pfd, unsigned *slot)
{
  unsigned np = 0, conc = a->w->concurrency;
  int nopidfd = 0, r;
  double wait = 0.2;
  struct timespec ts;

  for (unsigned k = 0; k < conc; k++) {
    if (!a->jobs[k].p.pid)
      continue;
    if (a->jobs[k].p.pidfd < 0) {
      nopidfd = 1;
      continue;
    }
    pfd[np].fd = a->jobs[k].p.pidfd;
    pfd[np].events = POLLIN;
    pfd[np].revents = 0;
    slot[np++] = k;
  }
  if (a->arrived < a->n) {
    double due = arrival_time(a, a->arrived) - (ff_w_now() - a->t0);

    wait = due < wait ? due : wait;
  }
  if (nopidfd && wait > 0.01)
    wait = 0.01; /* no pidfd_open: look again soon */
  if (wait < 0)
    wait = 0;
  ts.tv_sec = (time_t)wait;
  ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
  r = ppoll(pfd, np, &ts, NULL);
  if (r < 0 && errno != EINTR)
    return ff_error("ppoll: %m");
  /* Arrivals that came while every slot was taken wait for one, even if
   * a slot is freed just below. */
  arrive(a);
  if (a->running >= conc)
    a->pv_queued = a->arrived;
  for (unsigned k = 0; k < conc; k++) {
    struct job *j = &a->jobs[k];
    int done;

    if (!j->p.pid)
      continue;
    done = ff_proc_try(&j->p);
    if (done < 0)
      return -1;
    if (done && finish_job(a, j, j->p.status) < 0)
      return -1;
  }
  return 0;
}

int
ff_w_event_activation(const struct ff_wenv *e, const struct ff_workload *w,
                      json_t *devs, json_t *acts, struct ff_wrep *r)
{
  struct activation a = {.e = e, .w = w, .devs = devs, .acts = acts, .r = r};
  struct pollfd *pfd;
  unsigned *slot;
  int rc = 0;

  a.order = calloc(e->ndevs + 1, sizeof *a.order);
  a.vgq = calloc(e->ndevs + 1, sizeof *a.vgq);
  a.vg_ready = calloc(e->ndevs + 1, sizeof *a.vg_ready);
  a.jobs = calloc(w->concurrency, sizeof *a.jobs);
  pfd = calloc(w->concurrency, sizeof *pfd);
  slot = calloc(w->concurrency, sizeof *slot);
  if (!a.order || !a.vgq || !a.vg_ready || !a.jobs || !pfd || !slot) {
    rc = ff_error("out of memory");
    goto out;
  }
  for (uint32_t i = 0; i < e->ndevs; i++)
    if (e->paths[i])
      a.order[a.n++] = i;
  a.t0 = ff_w_now();

  while (!ff_w_stopping(e)) {
    arrive(&a);
    for (unsigned k = 0; k < w->concurrency && a.running < w->concurrency &&
                         (a.vqhead < a.nvq || a.pv_next < a.arrived);
         k++)
      if (!a.jobs[k].p.pid && start_job(&a, &a.jobs[k]) < 0) {
        rc = -1;
        goto out;
      }
    /* What is due and did not get a slot now waits in the queue. */
    a.pv_queued = a.arrived;
    a.vg_queued = a.nvq;
    if (!a.running && a.pv_next >= a.n && a.vqhead >= a.nvq)
      break;
    if (wait_jobs(&a, pfd, slot) < 0) {
      rc = -1;
      goto out;
    }
    ff_w_emit(
      e, 1,
      "    event-activation: %u/%u devices arrived, %u VGs complete, %u "
      "running",
      a.arrived, a.n, a.nvq, a.running);
  }
  r->wall = a.last_end;

out:
  for (unsigned k = 0; a.jobs && k < w->concurrency; k++)
    ff_proc_kill(&a.jobs[k].p);
  for (uint32_t i = 0; a.vgq && i < a.nvq; i++)
    free(a.vgq[i]);
  free(a.vgq);
  free(a.vg_ready);
  free(a.order);
  free(a.jobs);
  free(pfd);
  free(slot);
  if (ff_w_stopping(e) && !rc)
    rc = ff_error("interrupted");
  return rc;
}
