/* fusefarm: the timed lvm workloads of a scenario (ff-workload.h). */
#include "ff-workload.h"

#include "ff-error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

void
ff_pathf(char *buf, size_t len, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(buf, len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= len)
    buf[0] = '\0';
}

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

int
ff_copy_file(const char *src, const char *dst, size_t max)
{
  char *text = ff_slurp(src, max);
  FILE *f;

  if (!text)
    return ff_error("%s: %m", src);
  f = fopen(dst, "w");
  if (!f || fputs(text, f) == EOF || fclose(f) != 0) {
    free(text);
    if (f)
      fclose(f);
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

pid_t
ff_spawn(const char *const argv[], const char *out, const char *err,
         const char *const *setenv_list)
{
  pid_t pid = fork();

  if (pid < 0)
    return ff_error("fork: %m");
  if (pid == 0) {
    int fo = open(out ? out : "/dev/null",
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int fe = open(err ? err : "/dev/null",
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int fi = open("/dev/null", O_RDONLY | O_CLOEXEC);
    struct rlimit rl;

    if (fo < 0 || fe < 0 || fi < 0 || dup2(fi, 0) < 0 || dup2(fo, 1) < 0 ||
        dup2(fe, 2) < 0)
      _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (setenv_list) {
      for (size_t i = 0; setenv_list[i] && setenv_list[i + 1]; i += 2)
        setenv(setenv_list[i], setenv_list[i + 1], 1);
      if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
      }
    }
    execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "exec %s: %m\n", argv[0]);
    _exit(127);
  }
  return pid;
}

int
ff_wait_status(pid_t pid)
{
  int st;

  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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

static pid_t
start_lvm(const struct ff_wenv *e, const char **argv, const char *tag)
{
  char out[PATH_MAX + 64], err[PATH_MAX + 64];

  argv[0] = e->lvm;
  ff_pathf(out, sizeof out, "%s/%s.out", e->outdir, tag);
  ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, tag);
  return e->spawn(e->ctx, argv, out, err);
}

/* One lvm command, timed.  argv[0] is replaced by the scenario's lvm. */
static int
time_lvm(const struct ff_wenv *e, const char **argv, double *wall,
         const char *tag)
{
  double t0 = now_s();
  pid_t pid = start_lvm(e, argv, tag);
  int rc = pid < 0 ? -1 : ff_wait_status(pid);

  *wall = now_s() - t0;
  return rc;
}

/* ---- event-style activation ---------------------------------------------
 */

struct job {
  pid_t pid;
  int kind; /* 0 pvscan of device idx, 1 vgchange of VG idx */
  uint32_t idx;
  double start;
};

/* argv of the next job: a completed VG's vgchange first (as systemd would
 * start it), else the next device's pvscan. */
static void
job_argv(const struct ff_wenv *e, struct job *j, const char **argv, char *tag,
         size_t taglen, char **vgq, uint32_t *vqhead, const uint32_t *order,
         uint32_t *next, int vg)
{
  int a = 0;

  argv[a++] = NULL;
  if (vg) {
    j->kind = 1;
    j->idx = (*vqhead)++;
    argv[a++] = "vgchange";
    argv[a++] = "-aay";
    argv[a++] = "--autoactivation";
    argv[a++] = "event";
    if (e->no_dm) {
      argv[a++] = "--driverloaded";
      argv[a++] = "n";
    }
    argv[a++] = vgq[j->idx];
    ff_pathf(tag, taglen, "vgchange-%u", j->idx);
  } else {
    uint32_t d = order[(*next)++];

    j->kind = 0;
    j->idx = d;
    argv[a++] = "pvscan";
    argv[a++] = "--cache";
    argv[a++] = "--listvg";
    argv[a++] = "--checkcomplete";
    argv[a++] = "--vgonline";
    argv[a++] = "--autoactivation";
    argv[a++] = "event";
    argv[a++] = "--udevoutput";
    argv[a++] = e->paths[d];
    ff_pathf(tag, taglen, "pvscan-%u", d);
  }
  argv[a] = NULL;
}

/* Each device "arrives" (all at once, or spread evenly over spread_ns)
 * and gets the pvscan that lvm2's udev rule (69-dm-lvm.rules) runs; when
 * pvscan says its VG is complete, the vgchange that the rule starts
 * through systemd-run.  At most `concurrency` commands run at once. */
static int
event_activation(const struct ff_wenv *e, const struct ff_workload *w,
                 double *wall, int *worst, int *errors, json_t *devs,
                 json_t *acts)
{
  uint32_t n = 0, *order, next = 0, nvq = 0, vqhead = 0;
  char **vgq;
  struct job *jobs;
  unsigned running = 0;
  double t0 = now_s(), last_end = t0;
  int rc = 0;

  order = calloc(e->ndevs + 1, sizeof *order);
  vgq = calloc(e->ndevs + 1, sizeof *vgq);
  jobs = calloc(w->concurrency, sizeof *jobs);
  if (!order || !vgq || !jobs) {
    rc = ff_error("out of memory");
    goto out;
  }
  for (uint32_t i = 0; i < e->ndevs; i++)
    if (e->paths[i])
      order[n++] = i;
  *worst = 0;
  *errors = 0;

  while (!stopping(e)) {
    double now = now_s() - t0;
    int started = 0;

    /* Start what is due, while there is room. */
    while (running < w->concurrency &&
           (nvq > vqhead ||
            (next < n && (w->spread_ns == 0 ||
                          now >= (double)w->spread_ns / 1e9 * next / n)))) {
      struct job *j = NULL;
      char tag[64];
      const char *argv[16];

      for (unsigned k = 0; k < w->concurrency; k++)
        if (!jobs[k].pid) {
          j = &jobs[k];
          break;
        }
      job_argv(e, j, argv, tag, sizeof tag, vgq, &vqhead, order, &next,
               nvq > vqhead);
      j->start = now_s() - t0;
      j->pid = start_lvm(e, argv, tag);
      if (j->pid < 0) {
        j->pid = 0;
        rc = -1;
        goto out;
      }
      running++;
      started = 1;
    }
    if (!running && next >= n && nvq == vqhead)
      break;

    /* Reap what finished. */
    {
      int st;
      pid_t pid = waitpid(-1, &st, running && !started ? 0 : WNOHANG);

      if (pid < 0 && errno == EINTR)
        continue;
      if (pid <= 0) {
        if (next < n && w->spread_ns) {
          double due = (double)w->spread_ns / 1e9 * next / n;
          double wait = due - (now_s() - t0);

          if (wait > 0)
            usleep(wait > 0.001 ? 1000 : (useconds_t)(wait * 1e6));
        }
        continue;
      }
      if (e->other_child && pid == *e->other_child) {
        *e->other_child = 0;
        continue;
      }
      for (unsigned k = 0; k < w->concurrency; k++) {
        struct job *j = &jobs[k];
        double end;
        int ex;

        if (j->pid != pid)
          continue;
        end = now_s() - t0;
        last_end = now_s();
        ex = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (ex > *worst)
          *worst = ex;
        if (ex)
          (*errors)++;
        if (j->kind == 0) {
          char out[PATH_MAX + 64], *text, *p;

          ff_pathf(out, sizeof out, "%s/pvscan-%u.out", e->outdir, j->idx);
          text = ff_slurp(out, 65536);
          p = text ? strstr(text, "LVM_VG_NAME_COMPLETE='") : NULL;
          json_array_append_new(
            devs, json_pack("{s:s, s:s?, s:f, s:f, s:i, s:b}", "device",
                            e->names[j->idx], "vg", e->vgs[j->idx], "start",
                            j->start, "end", end, "exit", ex, "vg_complete",
                            p != NULL));
          if (p) {
            char *q = p + strlen("LVM_VG_NAME_COMPLETE='"),
                 *e2 = strchr(q, '\'');

            if (e2)
              vgq[nvq++] = strndup(q, (size_t)(e2 - q));
          }
          free(text);
        } else {
          json_array_append_new(acts, json_pack("{s:s, s:f, s:f, s:i}", "vg",
                                                vgq[j->idx], "start", j->start,
                                                "end", end, "exit", ex));
        }
        j->pid = 0;
        running--;
        break;
      }
    }
    emit(e, 1,
         "    event-activation: %u/%u devices arrived, %u VGs complete, %u "
         "running",
         next, n, nvq, running);
  }
  *wall = last_end - t0;

out:
  for (unsigned k = 0; jobs && k < w->concurrency; k++)
    if (jobs[k].pid > 0) {
      kill(jobs[k].pid, SIGKILL);
      ff_wait_status(jobs[k].pid);
    }
  for (uint32_t i = 0; vgq && i < nvq; i++)
    free(vgq[i]);
  free(vgq);
  free(order);
  free(jobs);
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
              int *errors)
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
    if (ex)
      (*errors)++;
    json_array_append_new(cmds, json_real(t));
  }
  json_object_set_new(run, "commands", cmds);
  json_object_set_new(run, "lv", json_string(lv));
  return 0;
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

int
ff_workload_run(const struct ff_wenv *e, const struct ff_workload *w,
                json_t *wl)
{
  json_t *runs = json_array(), *devs = NULL, *acts = NULL;
  double *walls = calloc(w->repeat, sizeof *walls);
  json_int_t reads = 0, bytes = 0;
  const char *cmd = "";
  int rc = 0;

  if (!walls || !runs) {
    free(walls);
    json_decref(runs);
    return ff_error("out of memory");
  }
  for (unsigned rep = 0; rep < w->repeat && !rc; rep++) {
    double wall = 0;
    int worst = 0, errors = 0;
    json_t *run;
    char tag[64];

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
      rc = lvchange_runs(e, w, tag, run, &wall, &worst, &errors);
      break;
    case FF_W_EVENT_ACTIVATION:
      cmd = e->no_dm ? "lvm pvscan --cache --listvg --checkcomplete "
                       "--vgonline --autoactivation event --udevoutput DEV; "
                       "lvm vgchange -aay --autoactivation event "
                       "--driverloaded n VG"
                     : "lvm pvscan --cache --listvg --checkcomplete "
                       "--vgonline --autoactivation event --udevoutput DEV; "
                       "lvm vgchange -aay --autoactivation event VG";
      json_decref(devs);
      json_decref(acts);
      devs = json_array();
      acts = json_array();
      rc = event_activation(e, w, &wall, &worst, &errors, devs, acts);
      break;
    default: {
      const char *argv[8];

      simple_command(e, w->type, argv, &cmd);
      worst = time_lvm(e, argv, &wall, tag);
      errors = worst != 0;
      if (worst < 0)
        rc = -1;
      break;
    }
    }
    if (e->reads)
      e->reads(e->ctx, &reads, &bytes);
    json_object_set_new(run, "wall", json_real(wall));
    json_object_set_new(run, "exit", json_integer(worst));
    json_object_set_new(run, "errors", json_integer(errors));
    json_array_append_new(runs, run);
    walls[rep] = wall;
    if (worst > 0 && !rc) {
      char err[PATH_MAX + 64], msg[512];

      ff_pathf(err, sizeof err, "%s/%s.err", e->outdir, tag);
      ff_first_line(err, msg, sizeof msg);
      emit(e, 0, "    %s: exit %d (%s)", w->name, worst, msg);
    }
  }
  summarize(e, w, wl, runs, walls, cmd, e->reads ? (long long)reads : -1);
  if (e->reads) {
    json_object_set_new(wl, "reads", json_integer(reads));
    json_object_set_new(wl, "bytes_read", json_integer(bytes));
  }
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

json_t *
ff_config_settings(const struct ff_scenario *sc, const unsigned *idx)
{
  json_t *settings = json_object();

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
  return settings;
}
