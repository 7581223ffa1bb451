/* fusefarm: the timed lvm workloads of a scenario (ff-workload.h). */
#include "ff-workload.h"

#include "ff-error.h"
#include "ff-fio.h"
#include "ff-file.h"

#include <jansson.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

static double
now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((format(printf, 3, 4))) static void
emit(const struct ff_wenv *e, int progress, const char *fmt, ...)
{
  void (*fn)(void *, const char *) = progress ? e->progress : e->say;
  char line[1024];
  va_list ap;

  if (!fn)
    return;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fn(e->ctx, line);
}

static int
stopping(const struct ff_wenv *e)
{
  return e->stop && *e->stop;
}

char *
ff_slurp(const char *path, size_t max)
{
  FILE *f = fopen(path, "r");
  char *buf;
  size_t n;

  if (!f)
    return NULL;
  buf = malloc(max + 1);
  if (!buf) {
    fclose(f);
    return NULL;
  }
  n = fread(buf, 1, max, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

void
ff_first_line(const char *path, char *buf, size_t len)
{
  char *s = ff_slurp(path, 4096);
  char *nl;

  ff_pathf(buf, len, "%s", s && *s ? s : "(no message)");
  if ((nl = strchr(buf, '\n')))
    *nl = '\0';
  free(s);
}

/* One of lvm's warnings or notices, not what made the command fail:
 * warnings, unknown or deprecated settings, leaked fds, and the notices
 * devices-file and hint code print on their way ("Devices file /dev/x is
 * excluded: ...", "PVID ... last written to ...", "VG x not using quick
 * activation", also as pvscan[PID] says it). */
static int
lvm_warning(const char *line, size_t n)
{
  static const char *const pfx[] = {"WARNING:",
                                    "Configuration setting \"",
                                    "File descriptor ",
                                    "Please remove the lvm.conf",
                                    "DEPRECATED",
                                    "Devices file ",
                                    "PVID ",
                                    NULL};
  static const char quick[] = " not using quick activation";

  for (int i = 0; pfx[i]; i++)
    if (n >= strlen(pfx[i]) && !strncmp(line, pfx[i], strlen(pfx[i])))
      return 1;
  return memmem(line, n, quick, strlen(quick)) != NULL;
}

void
ff_lvm_error_line(const char *text, char *buf, size_t len)
{
  const char *p = text ? text : "", *first = NULL;
  size_t firstn = 0;

  while (*p) {
    size_t n;

    while (*p == ' ' || *p == '\t')
      p++;
    n = strcspn(p, "\n");
    if (n && !first) {
      first = p;
      firstn = n;
    }
    if (n && !lvm_warning(p, n)) {
      first = p;
      firstn = n;
      break;
    }
    p += n + (p[n] == '\n');
  }
  if (!first)
    ff_pathf(buf, len, "(no message)");
  else
    ff_pathf(buf, len, "%.*s", (int)(firstn < 1000 ? firstn : 1000), first);
}

/* Why an lvm command that exited with status ex (ff-spawn: 128 +
 * signal when a signal killed it) failed: the error line of its stderr
 * file, after the signal that killed it if one did ("killed by signal 11
 * (Segmentation fault)": a crash says little on stderr, or only a
 * warning printed before it). */
static void
error_line_of(const char *path, int ex, char *buf, size_t len)
{
  char *s = ff_slurp(path, 65536), line[1024];

  ff_lvm_error_line(s, line, sizeof line);
  if (ex > 128 && ex < 128 + 65) {
    /* only a line that says something of its own follows */
    int said =
      strcmp(line, "(no message)") && !lvm_warning(line, strlen(line));

    ff_pathf(buf, len, "killed by signal %d (%s)%s%s", ex - 128,
             strsignal(ex - 128), said ? "; " : "", said ? line : "");
  } else
    ff_pathf(buf, len, "%s", line);
  free(s);
}

int
ff_copy_file(const char *src, const char *dst, size_t max)
{
  char *text = ff_slurp(src, max);
  FILE *f;

  if (!text)
    return ff_error("%s: %m", src);
  f = ff_fopen_write(dst, "w");
  if (!f) {
    free(text);
    return -1;
  }
  if (fputs(text, f) == EOF || fclose(f) != 0) {
    free(text);
    return ff_error("%s: %m", dst);
  }
  free(text);
  return 0;
}

void
ff_iso_now(char *buf, size_t len)
{
  time_t t = time(NULL);
  struct tm tm;

  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void
ff_empty_dir(const char *path)
{
  DIR *d = opendir(path);
  struct dirent *de;

  if (!d)
    return;
  while ((de = readdir(d))) {
    char p[PATH_MAX + 300];

    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    ff_pathf(p, sizeof p, "%s/%s", path, de->d_name);
    if (de->d_type == DT_DIR) {
      ff_empty_dir(p);
      rmdir(p);
    } else {
      unlink(p);
    }
  }
  closedir(d);
}

double
ff_median(double *v, size_t n)
{
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];

      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- one command ---------------------------------------------------------
 */

/* Where a command's stdout and stderr go: outdir/TAG.out and .err. */
struct cmd_files {
  char out[PATH_MAX + 64], err[PATH_MAX + 64];
};

static void
cmd_files(const struct ff_wenv *e, const char *tag, struct cmd_files *f)
{
  ff_pathf(f->out, sizeof f->out, "%s/%s.out", e->outdir, tag);
  ff_pathf(f->err, sizeof f->err, "%s/%s.err", e->outdir, tag);
}

/* An lvm command (argv[0] becomes the scenario's lvm) with lvm's
 * environment, its output into f. */
static struct ff_spawn
lvm_spawn(const struct ff_wenv *e, const char **argv,
          const struct cmd_files *f)
{
  argv[0] = e->lvm;
  return (struct ff_spawn){
    .argv = argv,
    .env = e->env,
    .out = f->out,
    .err = f->err,
    .raise_nofile = 1,
  };
}

static int
start_lvm(const struct ff_wenv *e, const char **argv, const char *tag,
          struct ff_proc *p)
{
  struct cmd_files f;
  struct ff_spawn o;

  cmd_files(e, tag, &f);
  o = lvm_spawn(e, argv, &f);
  return ff_proc_start(p, &o);
}

/* A command that could not start (ff_error says why). */
#define NOT_STARTED (-2)

/* Run o to its end, timed into *wall (from just before it starts to its
 * reaping; every timed command of a workload is timed here): its exit
 * status, NOT_STARTED, or -1 when it could not be waited for. */
static int
run_timed(const struct ff_spawn *o, double *wall)
{
  struct ff_proc p;
  double t0 = now_s();
  int ex = ff_proc_start(&p, o) < 0 ? NOT_STARTED : ff_proc_wait(&p);

  *wall = now_s() - t0;
  return ex;
}

/* One lvm command, timed.  argv[0] is replaced by the scenario's lvm. */
static int
time_lvm(const struct ff_wenv *e, const char **argv, double *wall,
         const char *tag)
{
  struct cmd_files f;
  struct ff_spawn o;
  int ex;

  cmd_files(e, tag, &f);
  o = lvm_spawn(e, argv, &f);
  ex = run_timed(&o, wall);
  return ex == NOT_STARTED ? -1 : ex;
}

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
  int worst, errors;
  double last_end;
  char msg[512]; /* the first failed command's error line */
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
  double now = now_s() - a->t0;

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
  j->start = now_s() - a->t0;
  if (start_lvm(e, argv, tag, &j->p) < 0)
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
  double end = now_s() - a->t0;
  char tag[64];

  a->last_end = end;
  a->running--;
  if (ex > a->worst)
    a->worst = ex;
  ff_pathf(tag, sizeof tag, "%s-%u", j->kind ? "vgchange" : "pvscan", j->idx);
  if (ex) {
    a->errors++;
    if (!a->msg[0]) {
      char err[PATH_MAX + 64];

      ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, tag);
      error_line_of(err, ex, a->msg, sizeof a->msg);
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
    double due = arrival_time(a, a->arrived) - (now_s() - a->t0);

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

static int
event_activation(const struct ff_wenv *e, const struct ff_workload *w,
                 double *wall, int *worst, int *errors, json_t *devs,
                 json_t *acts, char *msg, size_t msglen)
{
  struct activation a = {.e = e, .w = w, .devs = devs, .acts = acts};
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
  a.t0 = now_s();

  while (!stopping(e)) {
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
    emit(e, 1,
         "    event-activation: %u/%u devices arrived, %u VGs complete, %u "
         "running",
         a.arrived, a.n, a.nvq, a.running);
  }
  *wall = a.last_end;

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
  *worst = a.worst;
  *errors = a.errors;
  ff_pathf(msg, msglen, "%s", a.msg);
  if (stopping(e) && !rc)
    rc = ff_error("interrupted");
  return rc;
}

/* ---- one workload --------------------------------------------------------
 */

/* A single timed command: pvs, vgs, lvs, pvscan --cache, vgchange -aay. */
static int
simple_command(const struct ff_wenv *e, enum ff_wtype t, const char **argv,
               const char **cmd)
{
  int a = 1;

  switch (t) {
  case FF_W_PVS:
    argv[a++] = "pvs";
    *cmd = "lvm pvs";
    break;
  case FF_W_VGS:
    argv[a++] = "vgs";
    *cmd = "lvm vgs";
    break;
  case FF_W_LVS:
    argv[a++] = "lvs";
    *cmd = "lvm lvs";
    break;
  case FF_W_PVSCAN_CACHE:
    argv[a++] = "pvscan";
    argv[a++] = "--cache";
    *cmd = "lvm pvscan --cache";
    break;
  default:
    argv[a++] = "vgchange";
    argv[a++] = "-aay";
    *cmd = "lvm vgchange -aay";
    if (e->no_dm) {
      argv[a++] = "--driverloaded";
      argv[a++] = "n";
      *cmd = "lvm vgchange -aay --driverloaded n";
    }
    break;
  }
  argv[a] = NULL;
  return a;
}

static int
lvchange_runs(const struct ff_wenv *e, const struct ff_workload *w,
              const char *tag, json_t *run, double *wall, int *worst,
              int *errors, char *msg, size_t msglen)
{
  const char *lv = w->lv ? w->lv : e->first_lv;
  json_t *cmds;

  if (!lv)
    return ff_error("workload %s: the farm has no LV to change", w->name);
  cmds = json_array();
  for (unsigned k = 0; k < w->count && !stopping(e); k++) {
    const char *argv[] = {NULL, "lvchange", "-ay", lv, NULL, NULL, NULL};
    double t;
    int ex;

    if (e->no_dm) {
      argv[3] = "--driverloaded";
      argv[4] = "n";
      argv[5] = lv;
    }
    ex = time_lvm(e, argv, &t, tag);
    if (ex < 0) {
      json_decref(cmds);
      return -1;
    }
    *wall += t;
    if (ex > *worst)
      *worst = ex;
    if (ex && !(*errors)++) {
      char err[PATH_MAX + 64];

      ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, tag);
      error_line_of(err, ex, msg, msglen);
    }
    json_array_append_new(cmds, json_real(t));
  }
  json_object_set_new(run, "commands", cmds);
  json_object_set_new(run, "lv", json_string(lv));
  return 0;
}

/* ---- io: fio against one target -----------------------------------------
 */

const char *
ff_io_target_refusal(const struct ff_workload *w, int no_dm, char *buf,
                     size_t len)
{
  if ((w->type != FF_W_IO && w->type != FF_W_FS) || !no_dm)
    return NULL;
  if (!strcmp(w->io.target, FF_IO_RAM_TARGET)) {
    ff_pathf(buf, len,
             "workload %s: target %s is the guest's RAM disk, which only "
             "`fusefarm vm` has",
             w->name, w->io.target);
    return buf;
  }
  if (!strchr(w->io.target, '/'))
    return NULL;
  ff_pathf(buf, len,
           "workload %s: target %s is an LV: LV targets need "
           "device-mapper, which this kernel lacks; run the scenario with "
           "`fusefarm vm` (a guest with real device-mapper)",
           w->name, w->io.target);
  return buf;
}

static json_t *
counters_json(const struct ff_wcounters *c)
{
  return json_pack("{s:I, s:I, s:I, s:I, s:I}", "reads", (json_int_t)c->reads,
                   "bytes_read", (json_int_t)c->bytes_read, "writes",
                   (json_int_t)c->writes, "bytes_written",
                   (json_int_t)c->bytes_written, "flushes",
                   (json_int_t)c->flushes);
}

static json_t *
fio_dir_json(const struct ff_fio_dir *d)
{
  json_t *o =
    json_pack("{s:f, s:f, s:I, s:I}", "bw", d->bw, "iops", d->iops, "ios",
              (json_int_t)d->ios, "bytes", (json_int_t)d->bytes);

  json_object_set_new(o, "clat_p50_ns",
                      d->clat_p50_ns < 0 ? json_null()
                                         : json_integer(d->clat_p50_ns));
  json_object_set_new(o, "clat_p99_ns",
                      d->clat_p99_ns < 0 ? json_null()
                                         : json_integer(d->clat_p99_ns));
  return o;
}

/* The kernel's node of LV target "VG/LV", /dev/dm-N, into path: the dm
 * device whose name (sysfs dm/name) is VG-LV with each '-' inside a name
 * doubled.  /dev/VG/LV and /dev/mapper are lvm's own nodes, which go
 * stale when nothing keeps them (no udev in the guest): a VG activated
 * again may get other minors.  0, or -1 when no such dm device. */
static int
io_lv_dm_node(const char *target, char *path, size_t len)
{
  char want[2 * NAME_MAX + 4], name[2 * NAME_MAX + 4], f[PATH_MAX];
  size_t n = 0;
  DIR *d = opendir("/sys/block");
  struct dirent *de;
  int rc = -1;

  for (const char *p = target; *p && n + 3 < sizeof want; p++) {
    want[n++] = *p == '/' ? '-' : *p;
    if (*p == '-')
      want[n++] = '-';
  }
  want[n] = '\0';
  while (d && rc < 0 && (de = readdir(d))) {
    FILE *fp;

    if (strncmp(de->d_name, "dm-", 3))
      continue;
    ff_pathf(f, sizeof f, "/sys/block/%s/dm/name", de->d_name);
    fp = fopen(f, "re");
    if (!fp)
      continue;
    if (fgets(name, sizeof name, fp) &&
        (name[strcspn(name, "\n")] = '\0', !strcmp(name, want))) {
      ff_pathf(path, len, "/dev/%s", de->d_name);
      rc = 0;
    }
    fclose(fp);
  }
  if (d)
    closedir(d);
  return rc;
}

/* The block device of target, into path: a farm device's node, or an
 * LV's dm node (io_lv_dm_node; /dev/VG/LV where sysfs has none).  NULL
 * and why, in msg, when there is none. */
static const char *
io_target_path(const struct ff_wenv *e, const char *target, char *path,
               size_t len, char *msg, size_t msglen)
{
  struct stat st;

  if (strchr(target, '/')) {
    if (io_lv_dm_node(target, path, len) < 0)
      ff_pathf(path, len, "/dev/%s", target);
    if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode)) {
      ff_pathf(msg, msglen,
               "target %s: %s is not a block device (is the LV "
               "active?)",
               target, path);
      return NULL;
    }
    return path;
  }
  for (uint32_t i = 0; i < e->ndevs; i++) {
    if (!e->names[i] || strcmp(e->names[i], target))
      continue;
    if (!e->paths[i]) {
      ff_pathf(msg, msglen, "target %s: the device is not present", target);
      return NULL;
    }
    ff_pathf(path, len, "%s", e->paths[i]);
    return path;
  }
  if (!strcmp(target, FF_IO_RAM_TARGET)) {
    if (e->ram_disk) {
      ff_pathf(path, len, "%s", e->ram_disk);
      return path;
    }
    ff_pathf(msg, msglen,
             "target %s: no RAM disk here (only the guest of "
             "`fusefarm vm` has one)",
             target);
    return NULL;
  }
  ff_pathf(msg, msglen, "target %s: no such device in the farm", target);
  return NULL;
}

/* Whether target is one of the farm's devices (a raw target the farm
 * counts), not an LV or the RAM disk. */
static int
io_farm_device(const struct ff_wenv *e, const char *target)
{
  for (uint32_t i = 0; i < e->ndevs; i++)
    if (e->names[i] && !strcmp(e->names[i], target))
      return 1;
  return 0;
}

/* What the farm served on w's target into io's "farm"; an LV's I/O
 * lands on its PVs: the whole farm's, and each PV of its VG ("devices":
 * which took the writes, a mirror's log among them). */
static void
io_counters(const struct ff_wenv *e, const struct ff_workload *w, json_t *io)
{
  struct ff_wcounters c;

  if (!e->counters)
    return;
  if (!strchr(w->io.target, '/') && !io_farm_device(e, w->io.target))
    return; /* the RAM disk: the farm served nothing */
  if (!strchr(w->io.target, '/')) {
    if (e->counters(e->ctx, w->io.target, &c) == 0)
      json_object_set_new(io, "farm", counters_json(&c));
  } else {
    size_t vl = strcspn(w->io.target, "/");
    json_t *devs = json_object();

    if (e->counters(e->ctx, NULL, &c) == 0)
      json_object_set_new(io, "farm", counters_json(&c));
    for (uint32_t i = 0; i < e->ndevs; i++)
      if (e->vgs[i] && strlen(e->vgs[i]) == vl &&
          !strncmp(e->vgs[i], w->io.target, vl) &&
          e->counters(e->ctx, e->names[i], &c) == 0)
        json_object_set_new(devs, e->names[i], counters_json(&c));
    json_object_set_new(io, "devices", devs);
  }
}

/* What the kernel says of block device dev's medium: 1 rotational, 0
 * not, -1 unknown (sysfs's queue/rotational, which the guest's SCSI
 * disks take from the farm's profile: docs/guest.md). */
static int
io_rotational(const char *dev)
{
  struct stat st;
  char f[96];
  FILE *fp;
  int v = -1;

  if (stat(dev, &st) < 0 || !S_ISBLK(st.st_mode))
    return -1;
  snprintf(f, sizeof f, "/sys/dev/block/%u:%u/queue/rotational",
           major(st.st_rdev), minor(st.st_rdev));
  fp = fopen(f, "re");
  if (!fp)
    return -1;
  if (fscanf(fp, "%d", &v) != 1 || (v != 0 && v != 1))
    v = -1;
  fclose(fp);
  return v;
}

/* One repetition of an io workload: fio, timed, its document read back
 * into run's "io".  fio runs on at (an fs workload's mount point) or,
 * at NULL, on the target's block device.  A failure is a failed command
 * (exit, errors, msg); -1 only when the run cannot go on. */
static int
io_fio(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
       const char *at, json_t *run, double *wall, int *worst, int *errors,
       char *msg, size_t msglen)
{
  const char *fio = e->fio ? e->fio : getenv("FF_FIO");
  char dev[PATH_MAX], job[PATH_MAX + 64];
  const char *argv[] = {NULL, "--output-format=json", job, NULL};
  struct ff_fio_result fr;
  struct cmd_files f;
  struct ff_spawn o = {.argv = argv, .out = f.out, .err = f.err};
  json_t *io;
  char *text;
  int ex, fd;

  if (!fio || !*fio)
    fio = "fio";
  argv[0] = fio;
  if (at)
    ff_pathf(dev, sizeof dev, "%s", at);
  else if (!io_target_path(e, w->io.target, dev, sizeof dev, msg, msglen)) {
    *worst = 1;
    *errors = 1;
    return 0;
  }
  /* The job reads and writes [0, size): it must fit. */
  fd = at ? -1 : open(dev, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    uint64_t devsize = 0;

    if (ioctl(fd, BLKGETSIZE64, &devsize) == 0 && w->io.size > devsize) {
      ff_pathf(msg, msglen,
               "target %s: size %llu bytes is more than the device's %llu",
               w->io.target, (unsigned long long)w->io.size,
               (unsigned long long)devsize);
      close(fd);
      *worst = 1;
      *errors = 1;
      return 0;
    }
    close(fd);
  }
  ff_pathf(job, sizeof job, "%s/%s.fio", e->outdir, tag);
  cmd_files(e, tag, &f);
  if (ff_fio_write_job(&w->io, dev, job) < 0)
    return -1;
  ex = run_timed(&o, wall);
  if (ex == NOT_STARTED) {
    ff_pathf(msg, msglen, "%s: %s (install fio, or set $FF_FIO)", fio,
             ff_errmsg());
    *worst = 127;
    *errors = 1;
    return 0;
  }
  if (ex < 0)
    return -1;
  if (ex) {
    *worst = ex;
    *errors = 1;
    error_line_of(f.err, ex, msg, msglen);
    if (ex == 127 && !strcmp(msg, "(no message)"))
      ff_pathf(msg, msglen, "%s: not found (install fio, or set $FF_FIO)",
               fio);
    return 0;
  }
  text = ff_slurp(f.out, 16u << 20);
  if (ff_fio_parse(text ? text : "", &fr) < 0) {
    free(text);
    ff_pathf(msg, msglen, "%s", ff_errmsg());
    *worst = 1;
    *errors = 1;
    return 0;
  }
  free(text);
  io = json_pack("{s:s, s:s, s:o, s:o, s:I}", "target", w->io.target, "path",
                 dev, "read", fio_dir_json(&fr.read), "write",
                 fio_dir_json(&fr.write), "error", (json_int_t)fr.error);
  if (fr.version[0])
    json_object_set_new(io, "fio_version", json_string(fr.version));
  if (!at) {
    int rot = io_rotational(dev);

    if (rot >= 0)
      json_object_set_new(io, "rotational", json_boolean(rot));
  }
  if (fr.error) {
    ff_pathf(msg, msglen, "fio: job error %lld (%s)", fr.error,
             strerror((int)fr.error));
    *worst = 1;
    *errors = 1;
  }
  io_counters(e, w, io);
  json_object_set_new(run, "io", io);
  return 0;
}

/* `vgchange -ay VG` (on) or `-an` of an LV target's VG, untimed: 0, or
 * its exit status with why in msg. */
static int
io_vg_change(const struct ff_wenv *e, const char *target, int on,
             const char *tag, char *msg, size_t msglen)
{
  char vg[NAME_MAX + 1], t[96], err[PATH_MAX + 96];
  const char *argv[] = {NULL, "vgchange", on ? "-ay" : "-an", vg, NULL};
  double wall;
  int ex;

  snprintf(vg, sizeof vg, "%.*s", (int)strcspn(target, "/"), target);
  ff_pathf(t, sizeof t, "%s-vg%s", tag, on ? "on" : "off");
  ex = time_lvm(e, argv, &wall, t);
  if (ex > 0) {
    char line[256];

    ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, t);
    error_line_of(err, ex, line, sizeof line);
    ff_pathf(msg, msglen, "target %s: vgchange %s %s: %s", target, argv[2], vg,
             line);
  } else if (ex < 0) {
    ff_pathf(msg, msglen, "target %s: vgchange %s %s: %s", target, argv[2], vg,
             ff_errmsg());
  }
  return ex;
}

/* fio on the target's block device (io_fio with no mount point). */
static int
io_block(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
         json_t *run, double *wall, int *worst, int *errors, char *msg,
         size_t msglen)
{
  return io_fio(e, w, tag, NULL, run, wall, worst, errors, msg, msglen);
}

typedef int repetition_fn(const struct ff_wenv *e, const struct ff_workload *w,
                          const char *tag, json_t *run, double *wall,
                          int *worst, int *errors, char *msg, size_t msglen);

/* An io or fs repetition (body): an LV target's VG is activated first
 * and deactivated after (untimed; real device-mapper only, the host
 * refuses LV targets before anything runs). */
static int
with_vg(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
        repetition_fn *body, json_t *run, double *wall, int *worst,
        int *errors, char *msg, size_t msglen)
{
  int lv = strchr(w->io.target, '/') && !e->no_dm, ex, rc;

  if (lv && (ex = io_vg_change(e, w->io.target, 1, tag, msg, msglen))) {
    *worst = ex < 0 ? 1 : ex;
    *errors = 1;
    return 0;
  }
  rc = body(e, w, tag, run, wall, worst, errors, msg, msglen);
  if (lv) {
    char off[256];

    ex = io_vg_change(e, w->io.target, 0, tag, off, sizeof off);
    if (ex && !*errors) {
      ff_pathf(msg, msglen, "%s", off);
      *worst = ex < 0 ? 1 : ex;
      *errors = 1;
    }
  }
  return rc;
}

/* Run argv (stdout and stderr into outdir/TAG.SUFFIX.out and .err),
 * timed into *wall: 0, or its exit status with the line that says why
 * in msg ("mkfs.xfs: ..."); -1 when it cannot be waited for. */
static int
fs_command(const struct ff_wenv *e, const char *const *argv, const char *tag,
           const char *suffix, double *wall, char *msg, size_t msglen)
{
  char stag[PATH_MAX], line[400];
  struct cmd_files f;
  struct ff_spawn o = {.argv = argv, .out = f.out, .err = f.err};
  int ex;

  ff_pathf(stag, sizeof stag, "%s.%s", tag, suffix);
  cmd_files(e, stag, &f);
  ex = run_timed(&o, wall);
  if (ex == NOT_STARTED) {
    ff_pathf(msg, msglen, "%s: %s", argv[0], ff_errmsg());
    return 127;
  }
  if (ex > 0) {
    ff_first_line(f.err, line, sizeof line);
    ff_pathf(msg, msglen, "%s: exit %d: %s", argv[0], ex, line);
  }
  return ex;
}

/* The options the kernel shows for the mount on mnt (/proc/self/mounts'
 * fourth field: "rw,relatime,attr2,inode64,logbufs=8,..."), into buf;
 * "" when it is not found.  getmntent(3) undoes the kernel's escapes. */
static void
mounted_options(const char *mnt, char *buf, size_t len)
{
  FILE *f = setmntent("/proc/self/mounts", "re");
  struct mntent me, *e;
  char line[4096];

  buf[0] = '\0';
  if (!f)
    return;
  /* the last one wins: a mount over an earlier one on the same point */
  while ((e = getmntent_r(f, &me, line, sizeof line)))
    if (!strcmp(e->mnt_dir, mnt))
      ff_pathf(buf, len, "%s", e->mnt_opts);
  endmntent(f);
}

/* One repetition of an fs workload: mkfs and mount (each timed, not in
 * the wall), fio in the mount point (io_fio: the wall), umount (timed,
 * not in the wall: it writes what the page cache still held).  The
 * filesystem's steps and their times go into run's "io" as "fs".  An LV
 * target's VG is activated before and deactivated after, as for io. */
static int
fs_steps(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
         json_t *run, double *wall, int *worst, int *errors, char *msg,
         size_t msglen)
{
  const struct ff_io_job *io = &w->io;
  int xfs = !strcmp(io->fstype, "xfs");
  const char *argv[48];
  char dev[PATH_MAX], mnt[PATH_MAX + 64], opts[512], cmd[64], mounted[1024];
  double t_mkfs = 0, t_mount = 0, t_umount = 0, t0;
  size_t n = 0;
  int rc = 0, ex;
  json_t *fs;

  if (!io_target_path(e, io->target, dev, sizeof dev, msg, msglen)) {
    *worst = *errors = 1;
    return 0;
  }
  /* mkfs: forced (the target may hold a PV or an earlier filesystem),
   * no discard (the farm does not keep them), and every table written
   * now: ext4's lazy init would write them in the background during the
   * measurement.  Then the workload's own options, split at blanks. */
  ff_pathf(cmd, sizeof cmd, "mkfs.%s", io->fstype);
  argv[n++] = cmd;
  argv[n++] = xfs ? "-f" : "-F";
  argv[n++] = "-q";
  if (xfs) {
    argv[n++] = "-K";
  } else {
    argv[n++] = "-E";
    argv[n++] = "lazy_itable_init=0,lazy_journal_init=0,nodiscard";
  }
  ff_pathf(opts, sizeof opts, "%s", io->mkfs_options);
  for (char *sv, *t = strtok_r(opts, " \t", &sv); t;
       t = strtok_r(NULL, " \t", &sv)) {
    if (n + 2 >= sizeof argv / sizeof *argv) {
      ff_pathf(msg, msglen, "mkfs_options: more than %zu arguments",
               sizeof argv / sizeof *argv - 8);
      *worst = *errors = 1;
      return 0;
    }
    argv[n++] = t;
  }
  argv[n++] = dev;
  argv[n] = NULL;
  ex = fs_command(e, argv, tag, "mkfs", &t_mkfs, msg, msglen);
  if (ex) {
    *worst = ex < 0 ? 1 : ex;
    *errors = 1;
    return ex < 0 ? -1 : 0;
  }
  ff_pathf(mnt, sizeof mnt, "%s/%s.mnt", e->outdir, tag);
  if (ff_mkdir(mnt, 0755) < 0)
    return -1;
  /* mount(8), which turns the generic options (noatime, sync, ...) into
   * mount flags and passes the rest to the filesystem */
  n = 0;
  argv[n++] = "mount";
  argv[n++] = "-t";
  argv[n++] = io->fstype;
  if (io->mount_options[0]) {
    argv[n++] = "-o";
    argv[n++] = io->mount_options;
  }
  argv[n++] = dev;
  argv[n++] = mnt;
  argv[n] = NULL;
  ex = fs_command(e, argv, tag, "mount", &t_mount, msg, msglen);
  if (ex) {
    char line[400], err[PATH_MAX + 64];

    ff_pathf(err, sizeof err, "%s/%s.mount.err", e->outdir, tag);
    ff_first_line(err, line, sizeof line);
    ff_pathf(msg, msglen, "mount -t %s%s%s %s: exit %d: %s", io->fstype,
             io->mount_options[0] ? " -o " : "", io->mount_options, dev, ex,
             line);
    rmdir(mnt);
    *worst = ex < 0 ? 1 : ex;
    *errors = 1;
    return ex < 0 ? -1 : 0;
  }
  /* what the kernel made of the options (mount(8) may drop one it does
   * not know, and the filesystem fills in its defaults) */
  mounted_options(mnt, mounted, sizeof mounted);
  rc = io_fio(e, w, tag, mnt, run, wall, worst, errors, msg, msglen);
  t0 = now_s();
  if (umount(mnt) < 0) {
    int err = errno;

    /* Never leave it mounted under the output directory, which the next
     * repetition empties. */
    umount2(mnt, MNT_DETACH);
    if (!*errors) {
      ff_pathf(msg, msglen, "umount %s: %s", mnt, strerror(err));
      *worst = *errors = 1;
    }
  }
  t_umount = now_s() - t0;
  rmdir(mnt);
  fs = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f}", "fstype", io->fstype,
                 "mkfs_options", io->mkfs_options, "mount_options",
                 io->mount_options, "mounted", mounted, "mkfs_wall", t_mkfs,
                 "mount_wall", t_mount, "umount_wall", t_umount);
  if (json_object_get(run, "io")) {
    json_object_set_new(json_object_get(run, "io"), "fs", fs);
    /* the target's counters with what umount wrote */
    io_counters(e, w, json_object_get(run, "io"));
  } else {
    json_object_set_new(run, "fs", fs);
  }
  return rc;
}

static int
fs_run(const struct ff_wenv *e, const struct ff_workload *w, const char *tag,
       json_t *run, double *wall, int *worst, int *errors, char *msg,
       size_t msglen)
{
  return with_vg(e, w, tag, fs_steps, run, wall, worst, errors, msg, msglen);
}

static void
summarize(const struct ff_wenv *e, const struct ff_workload *w, json_t *wl,
          json_t *runs, double *walls, const char *cmd, long long reads)
{
  size_t nr = json_array_size(runs);
  double mn = INFINITY, mx = 0;

  for (size_t i = 0; i < nr; i++) {
    mn = walls[i] < mn ? walls[i] : mn;
    mx = walls[i] > mx ? walls[i] : mx;
  }
  json_object_set_new(wl, "name", json_string(w->name));
  json_object_set_new(wl, "type", json_string(ff_wtype_name(w->type)));
  json_object_set_new(wl, "command", json_string(cmd));
  json_object_set_new(wl, "repeat", json_integer(w->repeat));
  json_object_set_new(wl, "runs", runs);
  if (!nr)
    return;
  json_object_set_new(wl, "min", json_real(mn));
  json_object_set_new(wl, "median", json_real(ff_median(walls, nr)));
  json_object_set_new(wl, "max", json_real(mx));
  char rd[48] = "";

  if (reads >= 0)
    snprintf(rd, sizeof rd, ", %lld reads", reads);
  emit(e, 0, "    %-20s median %.3f s (min %.3f, max %.3f) over %zu run%s%s",
       w->name, json_real_value(json_object_get(wl, "median")), mn, mx, nr,
       nr > 1 ? "s" : "", rd);
}

struct ff_wresult {
  json_t *wl; /* the "workloads" entry */
};

struct ff_wresult *
ff_wresult_new(void)
{
  struct ff_wresult *res = calloc(1, sizeof *res);

  if (res)
    res->wl = json_object();
  if (!res || !res->wl) {
    free(res);
    ff_error("workload result: out of memory");
    return NULL;
  }
  return res;
}

void
ff_wresult_free(struct ff_wresult *res)
{
  if (!res)
    return;
  json_decref(res->wl);
  free(res);
}

long long
ff_wresult_failed(const struct ff_wresult *res, const char **message)
{
  json_t *runs = json_object_get(res->wl, "runs"), *run;
  long long n = 0;
  size_t i;

  if (message)
    *message = "";
  json_array_foreach(runs, i, run)
  {
    const char *m = json_string_value(json_object_get(run, "message"));

    n += json_integer_value(json_object_get(run, "errors"));
    if (message && m && !**message)
      *message = m;
  }
  return n;
}

size_t
ff_wresult_nruns(const struct ff_wresult *res)
{
  return json_array_size(json_object_get(res->wl, "runs"));
}

char *
ff_wresult_json_text(const struct ff_wresult *res)
{
  char *text = json_dumps(res->wl, JSON_COMPACT);

  if (!text)
    ff_error("workload result: out of memory");
  return text;
}

int
ff_workload_run(const struct ff_wenv *e, const struct ff_workload *w0,
                struct ff_wresult *res)
{
  /* w0 with the configuration's target, fstype and mount options */
  struct ff_workload wv = *w0;
  const struct ff_workload *w = &wv;
  json_t *runs = json_array(), *devs = NULL, *acts = NULL, *wl;
  double *walls = calloc(w->repeat, sizeof *walls);
  long long reads = 0, bytes = 0;
  struct ff_wcounters tot = {0};
  int have_tot = 0;
  const char *cmd = "";
  char iocmd[512];
  int rc = 0;

  if ((w->type == FF_W_IO || w->type == FF_W_FS) && e->target)
    wv.io.target = (char *)e->target;
  if (w->type == FF_W_FS && e->fstype)
    wv.io.fstype = (char *)e->fstype;
  if (w->type == FF_W_FS && e->mount_options)
    wv.io.mount_options = (char *)e->mount_options;
  json_object_clear(res->wl);
  wl = res->wl;
  if (!walls || !runs) {
    free(walls);
    json_decref(runs);
    return ff_error("out of memory");
  }
  if (w->type == FF_W_EVENT_ACTIVATION && e->dialect == FF_DIALECT_NONE) {
    free(walls);
    json_decref(runs);
    return ff_error("workload %s: this lvm ran no event activation (2.02 "
                    "without lvmetad)",
                    w->name);
  }
  if (ff_io_target_refusal(w, e->no_dm, iocmd, sizeof iocmd)) {
    free(walls);
    json_decref(runs);
    return ff_error("%s", iocmd);
  }
  for (unsigned rep = 0; rep < w->repeat && !rc; rep++) {
    double wall = 0;
    int worst = 0, errors = 0;
    json_t *run;
    char tag[64], msg[512] = "";

    if (stopping(e)) {
      rc = ff_error("interrupted");
      break;
    }
    /* Each repetition starts cold: no online PVs, no hints. */
    ff_empty_dir(e->outdir);
    if (e->cold)
      e->cold(e->ctx);
    ff_pathf(tag, sizeof tag, "%s-%u", w->name, rep);
    emit(e, 1, "    %s %u/%u", w->name, rep + 1, w->repeat);
    run = json_object();
    switch (w->type) {
    case FF_W_LVCHANGE:
      cmd = e->no_dm ? "lvm lvchange -ay --driverloaded n VG/LV"
                     : "lvm lvchange -ay VG/LV";
      rc =
        lvchange_runs(e, w, tag, run, &wall, &worst, &errors, msg, sizeof msg);
      break;
    case FF_W_IO:
      ff_fio_describe(&w->io, iocmd, sizeof iocmd);
      cmd = iocmd;
      rc = with_vg(e, w, tag, io_block, run, &wall, &worst, &errors, msg,
                   sizeof msg);
      break;
    case FF_W_FS:
      ff_fio_describe(&w->io, iocmd, sizeof iocmd);
      cmd = iocmd;
      rc = fs_run(e, w, tag, run, &wall, &worst, &errors, msg, sizeof msg);
      break;
    case FF_W_EVENT_ACTIVATION:
      cmd = ff_event_command(e->dialect, e->no_dm);
      json_decref(devs);
      json_decref(acts);
      devs = json_array();
      acts = json_array();
      rc = event_activation(e, w, &wall, &worst, &errors, devs, acts, msg,
                            sizeof msg);
      break;
    default: {
      const char *argv[8];

      simple_command(e, w->type, argv, &cmd);
      worst = time_lvm(e, argv, &wall, tag);
      errors = worst != 0;
      if (worst < 0) {
        rc = -1;
      } else if (worst > 0) {
        char err[PATH_MAX + 64];

        ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, tag);
        error_line_of(err, worst, msg, sizeof msg);
      }
      break;
    }
    }
    if (e->reads)
      e->reads(e->ctx, &reads, &bytes);
    have_tot = e->counters && e->counters(e->ctx, NULL, &tot) == 0;
    json_object_set_new(run, "wall", json_real(wall));
    json_object_set_new(run, "exit", json_integer(worst));
    json_object_set_new(run, "errors", json_integer(errors));
    /* What the first failed command said (not lvm's warnings). */
    if (errors && msg[0])
      json_object_set_new(run, "message", json_string(msg));
    /* What the farm served during this repetition (--expect's bytes()). */
    if (e->reads) {
      json_object_set_new(run, "reads", json_integer(reads));
      json_object_set_new(run, "bytes_read", json_integer(bytes));
    }
    if (have_tot) {
      json_object_set_new(run, "writes", json_integer(tot.writes));
      json_object_set_new(run, "bytes_written",
                          json_integer(tot.bytes_written));
      json_object_set_new(run, "flushes", json_integer(tot.flushes));
    }
    json_array_append_new(runs, run);
    walls[rep] = wall;
    if (errors && !rc)
      emit(e, 0, "    %s: %d failed command%s, exit %d (%s)", w->name, errors,
           errors == 1 ? "" : "s", worst, msg[0] ? msg : "(no message)");
  }
  summarize(e, w, wl, runs, walls, cmd, e->reads ? reads : -1);
  if (e->reads) {
    json_object_set_new(wl, "reads", json_integer(reads));
    json_object_set_new(wl, "bytes_read", json_integer(bytes));
  }
  if (have_tot) {
    json_object_set_new(wl, "writes", json_integer(tot.writes));
    json_object_set_new(wl, "bytes_written", json_integer(tot.bytes_written));
    json_object_set_new(wl, "flushes", json_integer(tot.flushes));
  }
  if (w->type == FF_W_IO || w->type == FF_W_FS)
    json_object_set_new(wl, "target", json_string(w->io.target));
  if (devs) {
    json_object_set_new(wl, "devices", devs);
    json_object_set_new(wl, "activations", acts);
  }
  free(walls);
  return rc;
}

/* ---- configurations ------------------------------------------------------
 */

void
ff_config_label(const struct ff_scenario *sc, const unsigned *idx, char *buf,
                size_t len)
{
  size_t used = 0;

  if (!len)
    return;
  buf[0] = '\0';
  for (unsigned a = 0; a < sc->naxes && used + 1 < len; a++) {
    const struct ff_axis *ax = &sc->axes[a];
    const struct ff_sval *v = &ax->values[idx[a]];
    const char *slash = strchr(ax->key, '/');
    const char *shortk = slash ? slash + 1 : ax->key;
    int n;

    if (v->is_str) {
      const char *b = strrchr(v->s, '/');

      n = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", shortk,
                   b ? b + 1 : v->s);
    } else {
      n = snprintf(buf + used, len - used, "%s%s=%lld", used ? " " : "",
                   shortk, (long long)v->i);
    }
    if (n < 0)
      break;
    used += (size_t)n;
    if (used >= len)
      used = len - 1;
  }
  if (!buf[0])
    snprintf(buf, len, "default");
}

char *
ff_config_settings(const struct ff_scenario *sc, const unsigned *idx)
{
  json_t *settings = json_object();
  char *text;

  for (unsigned a = 0; settings && a < sc->naxes; a++) {
    const struct ff_sval *v = &sc->axes[a].values[idx[a]];
    /* A profile path is shown by its file name; the config's "profile"
     * member keeps the whole path. */
    const char *str = v->is_str &&
                          !strcmp(sc->axes[a].key, "fusefarm/profile") &&
                          strrchr(v->s, '/')
                        ? strrchr(v->s, '/') + 1
                        : v->s;

    json_object_set_new(settings, sc->axes[a].key,
                        v->is_str ? json_string(str) : json_integer(v->i));
  }
  text = settings ? json_dumps(settings, JSON_COMPACT) : NULL;
  json_decref(settings);
  if (!text)
    ff_error("config settings: out of memory");
  return text;
}
