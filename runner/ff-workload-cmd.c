/* fusefarm: starting and timing the workloads' commands, and the small
 * file and clock helpers the workload runner shares (ff-workload-int.h,
 * ff-workload.h).  No threads; every command is a child process started
 * through ff-spawn.h. */
#include "ff-workload-int.h"

#include "ff-error.h"
#include "ff-file.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double
ff_w_now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((format(printf, 3, 4))) void
ff_w_emit(const struct ff_wenv *e, int progress, const char *fmt, ...)
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

int
ff_w_stopping(const struct ff_wenv *e)
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

/* ---- one command -------------------------------------------------------- */

void
ff_w_files(const struct ff_wenv *e, const char *tag, struct ff_w_files *f)
{
  ff_pathf(f->out, sizeof f->out, "%s/%s.out", e->outdir, tag);
  ff_pathf(f->err, sizeof f->err, "%s/%s.err", e->outdir, tag);
}

/* An lvm command (argv[0] becomes the scenario's lvm) with lvm's
 * environment, its output into f. */
static struct ff_spawn
lvm_spawn(const struct ff_wenv *e, const char **argv,
          const struct ff_w_files *f)
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

int
ff_w_start_lvm(const struct ff_wenv *e, const char **argv, const char *tag,
               struct ff_proc *p)
{
  struct ff_w_files f;
  struct ff_spawn o;

  ff_w_files(e, tag, &f);
  o = lvm_spawn(e, argv, &f);
  return ff_proc_start(p, &o);
}

/* Run o to its end, timed into *wall (from just before it starts to its
 * reaping; every timed command of a workload is timed here): its exit
 * status, FF_W_NOT_STARTED, or -1 when it could not be waited for. */
int
ff_w_run_timed(const struct ff_spawn *o, double *wall)
{
  struct ff_proc p;
  double t0 = ff_w_now();
  int ex = ff_proc_start(&p, o) < 0 ? FF_W_NOT_STARTED : ff_proc_wait(&p);

  *wall = ff_w_now() - t0;
  return ex;
}

/* One lvm command, timed.  argv[0] is replaced by the scenario's lvm. */
int
ff_w_time_lvm(const struct ff_wenv *e, const char **argv, double *wall,
              const char *tag)
{
  struct ff_w_files f;
  struct ff_spawn o;
  int ex;

  ff_w_files(e, tag, &f);
  o = lvm_spawn(e, argv, &f);
  ex = ff_w_run_timed(&o, wall);
  return ex == FF_W_NOT_STARTED ? -1 : ex;
}
