/* Run a fuzz target once on every file named on the command line, or in
 * the directories named there (not recursive; dot files skipped), in
 * name order: the corpus and the regression inputs as a plain test.
 *
 * usage: replay-TARGET PATH...    Exit 0 when every input ran (a crash or
 * a violated invariant aborts), 1 when a path cannot be read or no input
 * was found.  A missing directory is skipped: a target may have no
 * regression inputs yet. */
#include "fuzz-common.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int
run_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, n;

  if (!f) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  do {
    if (len == cap) {
      uint8_t *nb = realloc(buf, cap ? 2 * cap : 4096);

      if (!nb) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        fclose(f);
        free(buf);
        return -1;
      }
      buf = nb;
      cap = cap ? 2 * cap : 4096;
    }
    n = fread(buf + len, 1, cap - len, f);
    len += n;
  } while (n > 0);
  if (ferror(f)) {
    fprintf(stderr, "replay: %s: read error\n", path);
    fclose(f);
    free(buf);
    return -1;
  }
  fclose(f);
  /* Name the input first, so a crash report can be traced to it. */
  printf("replay: %s (%zu bytes)\n", path, len);
  fflush(stdout);
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  return 0;
}

static int
by_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs the files of dir; returns how many, or -1. */
static long
run_dir(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = NULL;
  size_t n = 0, cap = 0;
  long ran = 0;

  if (!d) {
    if (errno == ENOENT)
      return 0;
    fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
    return -1;
  }
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    if (n == cap) {
      char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *nn);

      if (!nn)
        abort();
      names = nn;
    }
    if (asprintf(&names[n++], "%s/%s", dir, e->d_name) < 0)
      abort();
  }
  closedir(d);
  if (n)
    qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n; i++) {
    struct stat st;

    if (ran >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
      ran = run_file(names[i]) < 0 ? -1 : ran + 1;
    free(names[i]);
  }
  free(names);
  return ran;
}

int
main(int argc, char **argv)
{
  long total = 0;

  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE-OR-DIR...\n", argv[0]);
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    struct stat st;
    long r;

    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
      r = run_dir(argv[i]);
    else if (stat(argv[i], &st) == 0)
      r = run_file(argv[i]) < 0 ? -1 : 1;
    else if (errno == ENOENT)
      r = 0;
    else
      r = -1;
    if (r < 0)
      return 1;
    total += r;
  }
  if (total == 0) {
    fprintf(stderr, "replay: no input found\n");
    return 1;
  }
  printf("replay: %ld inputs, all passed\n", total);
  return 0;
}
