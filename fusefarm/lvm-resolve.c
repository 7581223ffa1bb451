/* fusefarm: the lvm builds of a scenario, resolved once (lvm-resolve.h). */
#include "lvm-resolve.h"

#include "ff-error.h"
#include "ff-paths.h"
#include "ff-spawn.h"
#include "ff-workload.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What every step of one resolution shares. */
struct ctx {
  const char *self, *prog, *dir;
  int quiet;
};

/* An executable file at path. */
static int
is_exe(const char *path)
{
  struct stat st;

  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && !access(path, X_OK);
}

int
ff_on_path(const char *name, char *out, size_t len)
{
  const char *p = getenv("PATH");

  if (!p || !*p)
    p = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  while (*p) {
    size_t n = strcspn(p, ":");

    if (n) {
      snprintf(out, len, "%.*s/%s", (int)n, p, name);
      if (is_exe(out))
        return 1;
    }
    p += n + (p[n] == ':');
  }
  return 0;
}

/* Build ref with `fusefarm lvm-build` into b->path.  0, 2 (bad ref or
 * tree) or 1 (does not build, or another failure), after printing why
 * (the build's own message). */
static int
lvm_build_ref(const struct ctx *x, const char *tmp, const char *ref,
              const char *git, struct ff_lvm_build *b)
{
  char out[PATH_MAX + 32], err[PATH_MAX + 32], *text, *msg;
  const char *argv[] = {x->self, "lvm-build", ref, "--git", git, NULL};
  const struct ff_spawn o = {.argv = argv, .out = out, .err = err};
  int st;

  ff_pathf(out, sizeof out, "%s/build.out", tmp);
  ff_pathf(err, sizeof err, "%s/build.err", tmp);
  if (!x->quiet)
    fprintf(stderr,
            "%s: lvm '%s': `fusefarm lvm-build %s --git %s` (the cache, or "
            "a build of several minutes)\n",
            x->prog, ref, ref, git);
  st = ff_spawn_run(&o);
  text = st == 0 ? ff_slurp(out, 65536) : NULL;
  if (text)
    text[strcspn(text, "\n")] = '\0';
  if (st != 0 || !text || !is_exe(text)) {
    msg = ff_slurp(err, 1 << 20);
    fprintf(stderr,
            "%s%s: lvm '%s': `fusefarm lvm-build %s --git %s` %s "
            "(exit %d)%s\n",
            msg ? msg : "", x->prog, ref, ref, git,
            st == 125 ? "could not build it" : "failed", st,
            st == 2 ? ": not a ref of that tree" : "");
    free(msg);
    free(text);
    return st == 2 ? 2 : 1;
  }
  /* what it did: its last line ("lvm-build: cached: REF (COMMIT, …)" or
   * "… built REF …") */
  if (!x->quiet && (msg = ff_slurp(err, 1 << 20))) {
    char *end = msg + strlen(msg), *line;

    while (end > msg && end[-1] == '\n')
      *--end = '\0';
    line = strrchr(msg, '\n');
    if (*msg)
      fprintf(stderr, "%s: lvm '%s': %s\n", x->prog, ref,
              line ? line + 1 : msg);
    free(msg);
  }
  b->path = text;
  return 0;
}

/* `lvm version` of b->path (with an empty LVM_SYSTEM_DIR: nothing of the
 * host's lvm.conf) into b->version, and what that version knows into
 * b->caps.  0, or -1: b->version empty when it gives none, else the
 * version is not MAJOR.MINOR.PATCH (ff_errmsg says so). */
static int
lvm_build_version(const char *tmp, struct ff_lvm_build *b)
{
  char out[PATH_MAX + 32], version[192], *text, *p;
  const char *argv[] = {b->path, "version", NULL};
  const char *env[] = {"LVM_SYSTEM_DIR", tmp, "LVM_SUPPRESS_FD_WARNINGS", "1",
                       NULL};
  const struct ff_spawn o = {.argv = argv, .env = env, .out = out};

  ff_pathf(out, sizeof out, "%s/version.out", tmp);
  text = ff_spawn_run(&o) == 0 ? ff_slurp(out, 65536) : NULL;
  p = text ? strstr(text, "LVM version:") : NULL;
  if (p) {
    p += strlen("LVM version:");
    while (*p == ' ')
      p++;
    ff_pathf(b->version, sizeof b->version, "%.*s", (int)strcspn(p, "\n"), p);
  }
  free(text);
  if (!isdigit((unsigned char)b->version[0])) {
    b->version[0] = '\0';
    return ff_error("no LVM version");
  }
  ff_pathf(version, sizeof version, "LVM version: %s", b->version);
  return ff_lvm_caps_parse(version, &b->caps);
}

/* Resolve one entry into b.  0, 1 or 2 after printing why. */
static int
lvm_resolve_one(const struct ctx *x, struct ff_lvm_build *done,
                const char *tmp, const char *git, struct ff_lvm_build *b)
{
  const char *e = b->entry;
  char cand[PATH_MAX + 64];
  size_t n;
  int found = 0, unique = 0;

  if (e[0] == '/')
    found = is_exe(e) && snprintf(cand, sizeof cand, "%s", e) > 0;
  else if (strchr(e, '/')) {
    /* relative to the scenario file, else (--lvm) to the current one */
    ff_pathf(cand, sizeof cand, "%s/%s", x->dir ? x->dir : ".", e);
    found = is_exe(cand) || (realpath(e, cand) && is_exe(cand));
  } else
    found = ff_on_path(e, cand, sizeof cand);
  if (!found &&
      (e[0] == '/' || !strncmp(e, "./", 2) || !strncmp(e, "../", 3))) {
    /* a path, never a ref: the build is missing (for bisect: could not
     * run, 125 with --expect) */
    fprintf(stderr,
            "%s: lvm '%s': '%s version' failed: not an "
            "executable file%s\n",
            x->prog, e, e[0] == '/' ? e : cand,
            strcmp(e, "/sbin/lvm") && strcmp(e, "/usr/sbin/lvm")
              ? ""
              : " (is lvm2 installed? apt-get install lvm2, or --lvm PATH)");
    return 1;
  }
  if (found) {
    if (!(b->path = strdup(cand))) {
      fprintf(stderr, "%s: out of memory\n", x->prog);
      return 1;
    }
  } else if (!git) {
    fprintf(stderr,
            "%s: lvm '%s': no such executable%s, so it is taken "
            "as a git ref of lvm2, but no lvm2 tree was given to build it "
            "from (lvm_git = \"DIR\" in the scenario, --lvm-git DIR or "
            "$FF_LVM_GIT; for the system's lvm: apt-get install lvm2)\n",
            x->prog, e,
            strchr(e, '/') ? "" : " and no command of that name on PATH");
    return 2;
  } else {
    int st = lvm_build_ref(x, tmp, e, git, b);

    if (st)
      return st;
  }
  if (lvm_build_version(tmp, b) < 0) {
    if (b->version[0])
      fprintf(stderr, "%s: lvm '%s': '%s version' gave '%s': %s\n", x->prog, e,
              b->path, b->version, ff_errmsg());
    else
      fprintf(stderr,
              "%s: lvm '%s': '%s version' gave no LVM version: not "
              "an lvm2 binary, or it does not run here%s\n",
              x->prog, e, b->path,
              strcmp(e, "lvm") ? ""
                               : " (is lvm2 installed? apt-get install "
                                 "lvm2, or --lvm PATH)");
    return 1;
  }
  /* The label: the version's leading "2.03.12", unique within the run. */
  n = strspn(b->version, "0123456789.");
  ff_pathf(b->label, sizeof b->label, "%.*s", (int)(n < 40 ? n : 40),
           b->version);
  while (!unique) {
    unique = 1;
    for (struct ff_lvm_build *o = done; o < b; o++)
      if (!strcmp(o->label, b->label)) {
        char base[64];
        size_t k = strcspn(b->label, "#");
        int next = b->label[k] ? atoi(b->label + k + 1) + 1 : 2;

        ff_pathf(base, sizeof base, "%.*s", (int)k, b->label);
        ff_pathf(b->label, sizeof b->label, "%s#%d", base, next);
        unique = 0;
      }
  }
  return 0;
}

int
ff_lvm_set_resolve(struct ff_lvm_set *s, struct ff_scenario *sc,
                   const char *git, const char *self, const char *prog,
                   int quiet)
{
  const struct ctx x = {
    .self = self, .prog = prog, .dir = sc->dir, .quiet = quiet};
  struct ff_axis *ax = NULL;
  char tmp[PATH_MAX];
  int rc = 0;

  s->axis = -1;
  for (unsigned a = 0; a < sc->naxes; a++)
    if (!strcmp(sc->axes[a].key, "fusefarm/lvm")) {
      ax = &sc->axes[a];
      s->axis = (int)a;
    }
  if (!git)
    git = sc->lvm_git ? sc->lvm_git : getenv("FF_LVM_GIT");
  if (git && !*git)
    git = NULL;
  s->b = calloc(ax ? ax->nvalues : 1, sizeof *s->b);
  s->n = s->b ? (ax ? ax->nvalues : 1) : 0;
  ff_pathf(tmp, sizeof tmp, "%s/fusefarm-lvm.XXXXXX", ff_tmpdir());
  if (!s->b || !mkdtemp(tmp)) {
    fprintf(stderr, "%s: %s\n", prog,
            s->b ? "cannot make a scratch directory" : "out of memory");
    return 1;
  }
  for (unsigned i = 0; i < s->n && !rc; i++) {
    s->b[i].entry = strdup(ax ? ax->values[i].s : sc->lvm);
    rc = s->b[i].entry ? lvm_resolve_one(&x, s->b, tmp, git, &s->b[i]) : 1;
  }
  ff_empty_dir(tmp);
  rmdir(tmp);
  for (unsigned i = 0; ax && !rc && i < ax->nvalues; i++) {
    char *label = strdup(s->b[i].label);

    if (!label)
      return 1;
    free(ax->values[i].s);
    ax->values[i].s = label;
  }
  return rc;
}

const struct ff_lvm_build *
ff_lvm_set_for(const struct ff_lvm_set *s, const unsigned *idx)
{
  return &s->b[s->axis >= 0 && idx ? idx[s->axis] : 0];
}

void
ff_lvm_set_free(struct ff_lvm_set *s)
{
  for (unsigned i = 0; i < s->n; i++) {
    free(s->b[i].entry);
    free(s->b[i].path);
  }
  free(s->b);
  s->b = NULL;
  s->n = 0;
}
