/* fusefarm: the run directory (ff-rundir.h). */
#include "ff-rundir.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-report.h"
#include "ff-util.h"
#include "ff-workload.h" /* ff_pathf */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int
ff_rundir_write_report(const struct ff_runreport *rr, const char *path,
                       int top)
{
  FILE *f = ff_fopen_write(path, "w");

  if (!f)
    return -1;
  if (ff_report_print(rr, f, top) < 0) {
    fclose(f);
    return -1;
  }
  if (fclose(f) != 0)
    return ff_error("write %s: %m", path);
  return 0;
}

int
ff_rundir_check(const char *cmd, const char *dir)
{
  struct stat st;
  DIR *d;
  struct dirent *e;
  int used = 0;

  if (!*dir) {
    fprintf(stderr, "fusefarm %s: --out: expected a directory name\n", cmd);
    return 2;
  }
  if (lstat(dir, &st) < 0)
    return 0; /* made later; a failure then is reported there */
  if (S_ISLNK(st.st_mode)) {
    fprintf(stderr,
            "fusefarm %s: --out %s: refusing to use it: it is a symbolic "
            "link (not made by fusefarm)\n",
            cmd, dir);
    return 2;
  }
  if (!S_ISDIR(st.st_mode)) {
    fprintf(stderr, "fusefarm %s: --out %s: exists and is not a directory\n",
            cmd, dir);
    return 2;
  }
  d = opendir(dir);
  if (!d) {
    fprintf(stderr, "fusefarm %s: --out %s: %m\n", cmd, dir);
    return 2;
  }
  while (!used && (e = readdir(d)))
    used = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  if (used) {
    fprintf(stderr,
            "fusefarm %s: --out %s: exists and is not empty (a run "
            "directory holds one run: name a new or an empty one)\n",
            cmd, dir);
    return 2;
  }
  return 0;
}

int
ff_rundir_make(const char *given, const char *cmd, const char *name, char *out,
               int *made)
{
  char base[PATH_MAX], stamp[32], clean[64];
  time_t now = time(NULL);
  struct tm tm;
  size_t i;

  *made = 0;
  if (given) {
    int m = ff_mkdir(given, 0755);

    if (m == 1)
      *made = 1;
    else if (m < 0 && errno == ENOENT)
      return ff_error("--out %s: cannot create it: %m (its parent must "
                      "exist)",
                      given);
    else if (m < 0)
      return ff_error_prefix("--out %s: ", given);
    if (!realpath(given, out))
      return ff_error("--out %s: %m", given);
    return 0;
  }
  /* the scenario's name, as a file name */
  for (i = 0; name[i] && i < sizeof clean - 1; i++)
    clean[i] = isalnum((unsigned char)name[i]) || strchr("._-", name[i])
                 ? name[i]
                 : '_';
  clean[i] = '\0';
  localtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  ff_pathf(base, sizeof base, "fusefarm-%s-%s-%s", cmd, clean, stamp);
  for (int k = 1; k < 100; k++) {
    char dir[PATH_MAX + 16];

    if (k == 1)
      ff_pathf(dir, sizeof dir, "%s", base);
    else
      ff_pathf(dir, sizeof dir, "%s-%d", base, k);
    if (mkdir(dir, 0755) == 0) {
      *made = 1;
      if (!realpath(dir, out))
        return ff_error("%s: %m", dir);
      return 0;
    }
    if (errno != EEXIST) {
      char cwd[PATH_MAX];

      return ff_error("cannot create the run directory %s in %s: %m "
                      "(--out DIR names another)",
                      dir, getcwd(cwd, sizeof cwd) ? cwd : ".");
    }
  }
  return ff_error("%s: 99 run directories of that name exist already", base);
}

void
ff_rundir_list(const char *dir, char *buf, size_t len)
{
  struct dirent **names;
  int n = scandir(dir, &names, NULL, alphasort);
  size_t used = 0;

  buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (names[i]->d_name[0] != '.' && used + 1 < len) {
      int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                       names[i]->d_name);

      used = w < 0 ? used : used + (size_t)w;
      used = used < len ? used : len - 1;
    }
    free(names[i]);
  }
  if (n >= 0)
    free(names);
}

int
ff_rundir_render(const struct ff_runreport *rr,
                 const struct ff_rundir_outputs *o)
{
  if (ff_report_print(rr, stdout, o->top) < 0 ||
      (o->txt && *o->txt && ff_rundir_write_report(rr, o->txt, o->top) < 0) ||
      (o->csv && *o->csv && ff_report_csv(rr, o->csv) < 0) ||
      (o->svg && *o->svg && ff_report_svg_top(rr, o->svg, o->top) < 0))
    return -1;
  return 0;
}

void
ff_rundir_summary(const char *cmd, const char *dir, int failed,
                  const char *json, int made)
{
  char files[2048];

  ff_rundir_list(dir, files, sizeof files);
  if (files[0])
    fprintf(stderr,
            "fusefarm %s: %s in %s/: %s\n"
            "fusefarm %s: `fusefarm report %s` prints the report again\n",
            cmd, failed ? "what the failed run left" : "results", dir, files,
            cmd, json);
  else if (made)
    rmdir(dir); /* the run wrote nothing: leave no empty directory */
}
