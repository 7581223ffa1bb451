/* fusefarm attach: MNT/.fusefarm/devices, the farm's device list
 * (attach.h).
 *
 * Thread model: single-threaded.
 */
#include "attach.h"
#include "ff-error.h"
#include "ff-file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- MNT/.fusefarm/devices -------------------------------------------- */

void
fa_devlist_free(struct devlist *l)
{
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].name);
    free(l->v[i].role);
  }
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

int
fa_valid_dev_name(const char *s)
{
  size_t n = strlen(s);

  if (!n || n > NAME_MAX || !strcmp(s, ".") || !strcmp(s, "..") || s[0] == '.')
    return 0;
  for (; *s; s++)
    if (*s == '/' || (unsigned char)*s < 0x21 || *s == 0x7f)
      return 0;
  return 1;
}

int
fa_valid_pvid(const char *s)
{
  if (strlen(s) != FF_UUID_LEN)
    return 0;
  for (; *s; s++)
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
          (*s >= 'A' && *s <= 'Z') || *s == '!' || *s == '#'))
      return 0;
  return 1;
}

int
fa_cmp_dev_name(const void *a, const void *b)
{
  return strcmp((*(const struct farm_dev *const *)a)->name,
                (*(const struct farm_dev *const *)b)->name);
}

static int
cmp_name(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
fa_mark_cached(const char *mnt, struct devlist *l)
{
  char path[PATH_MAX];
  const char **names = NULL;
  size_t n = 0, i;
  json_error_t jerr;
  json_t *j, *devs, *dev;
  FILE *f;
  int r = -1;

  if (fa_join(path, mnt, PROFILE_JSON) < 0)
    return -1;
  /* a directory of images with a devices list (tests) has no profile */
  f = fopen(path, "re");
  if (!f)
    return errno == ENOENT ? 0 : ff_error("open %s: %m", path);
  j = json_loadf(f, 0, &jerr);
  fclose(f);
  if (!j)
    return ff_error("%s: %s (line %d)", path, jerr.text, jerr.line);
  devs = json_object_get(j, "devices");
  if (!json_is_array(devs)) {
    ff_error("%s: no devices array", path);
    goto out;
  }
  names = calloc(json_array_size(devs) + 1, sizeof *names);
  if (!names) {
    ff_error("out of memory");
    goto out;
  }
  json_array_foreach(devs, i, dev)
  {
    const char *name = json_string_value(json_object_get(dev, "name"));
    json_t *dio = json_object_get(dev, "direct_io");

    if (!name || !json_is_boolean(dio)) {
      ff_error("%s: devices[%zu]: expected a name and direct_io", path, i);
      goto out;
    }
    if (json_is_false(dio))
      names[n++] = name;
  }
  qsort(names, n, sizeof *names, cmp_name);
  for (i = 0; i < l->n && n; i++)
    l->v[i].cached =
      bsearch(&l->v[i].name, names, n, sizeof *names, cmp_name) != NULL;
  r = 0;
out:
  free(names);
  json_decref(j);
  return r;
}

/* Read and check MNT/.fusefarm/devices: "<name> <role> <pvid|->" lines.
 * A missing file means MNT is not a fusefarm mount. */
int
fa_read_devices_list(const char *mnt, struct devlist *l)
{
  static const char *const roles[] = {"pv",        "orphan",    "blank",
                                      "signature", "duplicate", NULL};
  char path[PATH_MAX], *line = NULL;
  struct farm_dev **sorted = NULL;
  size_t cap = 0, alloc = 0;
  unsigned lineno = 0;
  FILE *f;
  int r = -1;

  if (fa_join(path, mnt, DEVICES_LIST) < 0)
    return -1;
  f = fopen(path, "re");
  if (!f) {
    if (errno == ENOENT)
      return ff_error("%s: not a fusefarm mount (no %s); mount one with "
                      "`fusefarm mount SPEC %s` first",
                      mnt, DEVICES_LIST, mnt);
    if (errno == ENOTCONN)
      return ff_error("open %s: %m (the fusefarm daemon serving %s is dead: "
                      "`fusefarm detach %s`, `fusermount3 -u %s`, then mount "
                      "it again)",
                      path, mnt, mnt, mnt);
    return ff_error("open %s: %m", path);
  }
  while (getline(&line, &cap, f) >= 0) {
    char *fields[4], *save = NULL;
    int nf = 0, known = 0;

    lineno++;
    for (char *t = strtok_r(line, " \t\r\n", &save); t;
         t = strtok_r(NULL, " \t\r\n", &save))
      if (nf < 4)
        fields[nf++] = t;
      else
        nf = 5;
    if (nf == 0)
      continue;
    if (nf != 3) {
      ff_error("%s:%u: expected '<name> <role> <pvid or ->'", path, lineno);
      goto out;
    }
    if (!fa_valid_dev_name(fields[0])) {
      ff_error("%s:%u: bad device name '%s'", path, lineno, fields[0]);
      goto out;
    }
    for (int i = 0; roles[i]; i++)
      known |= !strcmp(fields[1], roles[i]);
    if (!known) {
      ff_error("%s:%u: %s: unknown role '%s' (expected pv, orphan, blank, "
               "signature or duplicate)",
               path, lineno, fields[0], fields[1]);
      goto out;
    }
    if (strcmp(fields[2], "-") && !fa_valid_pvid(fields[2])) {
      ff_error("%s:%u: %s: bad pvid '%s' (expected 32 characters without "
               "dashes, or -)",
               path, lineno, fields[0], fields[2]);
      goto out;
    }
    if (l->n == alloc) {
      size_t na = alloc ? 2 * alloc : 256;
      struct farm_dev *nv = realloc(l->v, na * sizeof *nv);

      if (!nv) {
        ff_error("out of memory");
        goto out;
      }
      l->v = nv;
      alloc = na;
    }
    l->v[l->n].name = strdup(fields[0]);
    l->v[l->n].role = strdup(fields[1]);
    snprintf(l->v[l->n].pvid, sizeof l->v[l->n].pvid, "%s",
             strcmp(fields[2], "-") ? fields[2] : "");
    l->v[l->n].cached = 0;
    l->n++;
    if (!l->v[l->n - 1].name || !l->v[l->n - 1].role) {
      ff_error("out of memory");
      goto out;
    }
  }
  if (ferror(f)) {
    ff_error("read %s: %m", path);
    goto out;
  }
  /* Duplicate names would make two loops for one file. */
  sorted = malloc((l->n + 1) * sizeof *sorted);
  if (!sorted) {
    ff_error("out of memory");
    goto out;
  }
  for (size_t i = 0; i < l->n; i++)
    sorted[i] = &l->v[i];
  qsort(sorted, l->n, sizeof *sorted, fa_cmp_dev_name);
  for (size_t i = 1; i < l->n; i++)
    if (!strcmp(sorted[i]->name, sorted[i - 1]->name)) {
      ff_error("%s: device %s listed twice", path, sorted[i]->name);
      goto out;
    }
  r = 0;
out:
  free(sorted);
  free(line);
  fclose(f);
  if (r < 0)
    fa_devlist_free(l);
  return r;
}

/* --only NAME,...: keep just those devices of l, in l's order. */
int
fa_filter_only(struct devlist *l, const char *only, const char *mnt)
{
  char *copy = strdup(only), *save = NULL;
  unsigned char *want;
  size_t kept = 0;
  int r = 0;

  want = calloc(l->n + 1, 1);
  if (!copy || !want) {
    free(copy);
    free(want);
    return ff_error("out of memory");
  }
  for (char *t = strtok_r(copy, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    size_t i;

    for (i = 0; i < l->n && strcmp(l->v[i].name, t); i++)
      ;
    if (i == l->n) {
      r = ff_error("--only %s: no such device in %s/" DEVICES_LIST, t, mnt);
      break;
    }
    want[i] = 1;
  }
  if (r == 0) {
    for (size_t i = 0; i < l->n; i++) {
      if (want[i]) {
        l->v[kept++] = l->v[i];
      } else {
        free(l->v[i].name);
        free(l->v[i].role);
      }
    }
    l->n = kept;
  }
  free(copy);
  free(want);
  return r;
}
