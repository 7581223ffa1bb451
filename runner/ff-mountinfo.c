/* fusefarm: one parser of /proc/PID/mountinfo (ff-mountinfo.h). */
#include "ff-mountinfo.h"
#include "ff-error.h"

#include <stdlib.h>
#include <string.h>

/* Undo the kernel's \ooo escapes in place. */
static void
unescape(char *s)
{
  char *o = s;

  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
        s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else {
      *o++ = *s;
    }
  }
  *o = '\0';
}

int
ff_mountinfo_parse(char *line, struct ff_mountinfo *m)
{
  char *field[6], *save = NULL, *t;
  int n = 0;

  memset(m, 0, sizeof *m);
  /* no strtok_r past the sixth field: the next token may be the "-" */
  while (n < 6 && (t = strtok_r(n ? NULL : line, " \n", &save)))
    field[n++] = t;
  if (n < 6)
    return -1;
  /* field[5] is the mount options; then optional fields up to "-" */
  while ((t = strtok_r(NULL, " \n", &save)) && strcmp(t, "-"))
    ;
  if (!t || !(m->fstype = strtok_r(NULL, " \n", &save)))
    return -1;
  if ((t = strtok_r(NULL, " \n", &save))) {
    unescape(t);
    m->source = t;
  } else {
    m->source = "";
  }
  unescape(field[3]);
  unescape(field[4]);
  m->id = field[0];
  m->parent = field[1];
  m->root = field[3];
  m->point = field[4];
  return 0;
}

int
ff_mountinfo_each(const char *path,
                  int (*fn)(const struct ff_mountinfo *m, void *arg),
                  void *arg)
{
  char *line = NULL;
  size_t cap = 0;
  int r = 0;
  FILE *f = fopen(path, "re");

  if (!f)
    return ff_error("open %s: %m", path);
  while (!r && getline(&line, &cap, f) >= 0) {
    struct ff_mountinfo m;

    if (ff_mountinfo_parse(line, &m) == 0)
      r = fn(&m, arg);
  }
  free(line);
  fclose(f);
  return r;
}
