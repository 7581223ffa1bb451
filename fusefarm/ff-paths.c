/* fusefarm: where the program's own files are (ff-paths.h). */
#include "ff-paths.h"

#include "ff-error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Relative to the installed bin directory (fusefarm/CMakeLists.txt). */
#ifndef FF_DATADIR_REL
#define FF_DATADIR_REL "../share/fusefarm"
#endif
#ifndef FF_LIBEXECDIR_REL
#define FF_LIBEXECDIR_REL "../libexec/fusefarm"
#endif
#ifndef FF_PLUGIN_REL
#define FF_PLUGIN_REL "../lib/nbdkit/plugins"
#endif
/* nbdkit's own plugin directory: where the plugin is when the program
 * was copied away from its installed tree. */
#ifndef FF_PLUGIN_DIR
#define FF_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/nbdkit/plugins"
#endif

#define FF_PLUGIN_NAME  "nbdkit-fusefarm-plugin.so"
#define FF_BUILD_MARKER "ff-build-tree"

/* path with "." and "dir/.." taken out, in place (for a path that does
 * not exist, so realpath cannot). */
static void
tidy(char *path)
{
  char *w = path, *r = path;

  while (*r) {
    if (r[0] == '/' && r[1] == '.' && (r[2] == '/' || !r[2])) {
      r += 2;
    } else if (r[0] == '/' && r[1] == '.' && r[2] == '.' &&
               (r[3] == '/' || !r[3])) {
      while (w > path && *--w != '/')
        ;
      r += 3;
    } else if (r[0] == '/' && r[1] == '/') {
      r++;
    } else {
      *w++ = *r++;
    }
  }
  if (w == path)
    *w++ = '/';
  *w = '\0';
}

/* DIR/REL, canonical (so messages and the scripts see no "bin/.."): by
 * realpath when it exists, else by tidy. */
static void
join(char *out, size_t outsz, const char *dir, const char *rel)
{
  char tmp[PATH_MAX * 2 + 2];

  if (rel[0] == '/')
    snprintf(tmp, sizeof tmp, "%s", rel);
  else if (dir[0] == '.' && !dir[1] && getcwd(out, outsz))
    snprintf(tmp, sizeof tmp, "%s/%s", out, rel);
  else
    snprintf(tmp, sizeof tmp, "%s/%s", dir, rel);
  if (realpath(tmp, out))
    return;
  tidy(tmp);
  if (snprintf(out, outsz, "%s", tmp) >= (int)outsz)
    out[0] = '\0'; /* too long: found nowhere */
}

static int
exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

/* The source tree the build tree's marker names, into out; 0 if this is
 * a build tree. */
static int
build_tree_source(const char *bindir, char *out, size_t outsz)
{
  char marker[PATH_MAX + 32];
  FILE *f;
  size_t n;

  snprintf(marker, sizeof marker, "%s/%s", bindir, FF_BUILD_MARKER);
  f = fopen(marker, "r");
  if (!f)
    return -1;
  if (!fgets(out, (int)outsz, f)) {
    fclose(f);
    return -1;
  }
  fclose(f);
  n = strlen(out);
  while (n && (out[n - 1] == '\n' || out[n - 1] == '/'))
    out[--n] = '\0';
  return n ? 0 : -1;
}

static const char *
env(const char *name)
{
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

int
ff_paths_find(struct ff_paths *p)
{
  char bindir[PATH_MAX], top[PATH_MAX], src[PATH_MAX];
  ssize_t n;
  char *s;

  memset(p, 0, sizeof *p);
  n = readlink("/proc/self/exe", p->exe, sizeof p->exe - 1);
  if (n < 0)
    return ff_error("/proc/self/exe: %m (cannot find this program's own "
                    "files)");
  p->exe[n] = '\0';
  snprintf(bindir, sizeof bindir, "%s", p->exe);
  s = strrchr(bindir, '/');
  if (!s)
    return ff_error("/proc/self/exe is %s: not an absolute path", p->exe);
  *s = '\0';
  if (!bindir[0])
    snprintf(bindir, sizeof bindir, "/");

  if (build_tree_source(bindir, src, sizeof src) == 0) {
    /* BUILD/fusefarm/fusefarm: BUILD/guest, BUILD/nbd-plugin */
    join(top, sizeof top, bindir, "..");
    snprintf(p->datadir, sizeof p->datadir, "%s", src);
    join(p->libexecdir, sizeof p->libexecdir, top, "guest");
    join(p->plugin, sizeof p->plugin, top, "nbd-plugin/" FF_PLUGIN_NAME);
    p->from = "build tree";
  } else {
    join(p->datadir, sizeof p->datadir, bindir, FF_DATADIR_REL);
    join(p->libexecdir, sizeof p->libexecdir, bindir, FF_LIBEXECDIR_REL);
    join(p->plugin, sizeof p->plugin, bindir,
         FF_PLUGIN_REL "/" FF_PLUGIN_NAME);
    if (!exists(p->plugin) && exists(FF_PLUGIN_DIR "/" FF_PLUGIN_NAME))
      snprintf(p->plugin, sizeof p->plugin, "%s",
               FF_PLUGIN_DIR "/" FF_PLUGIN_NAME);
    p->from = "installed";
  }
  if (env("FUSEFARM_DATADIR")) {
    join(p->datadir, sizeof p->datadir, ".", env("FUSEFARM_DATADIR"));
    p->from = "environment";
  }
  if (env("FUSEFARM_LIBEXECDIR")) {
    join(p->libexecdir, sizeof p->libexecdir, ".", env("FUSEFARM_LIBEXECDIR"));
    p->from = "environment";
  }
  if (env("FUSEFARM_PLUGIN")) {
    join(p->plugin, sizeof p->plugin, ".", env("FUSEFARM_PLUGIN"));
    p->from = "environment";
  }
  return 0;
}

int
ff_paths_require(const struct ff_paths *p, const char *path, const char *what,
                 const char *envname)
{
  if (exists(path))
    return 0;
  return ff_error("%s: %s not found (%s layout of %s; set %s)", path, what,
                  p->from, p->exe, envname);
}

const char *
ff_paths_scenario(const char *arg, char *buf, size_t bufsz)
{
  struct ff_paths p;

  if (strchr(arg, '/') || exists(arg) || ff_paths_find(&p) < 0)
    return arg;
  snprintf(buf, bufsz, "%s/configs/scenarios/%s.conf", p.datadir, arg);
  if (exists(buf))
    return buf;
  snprintf(buf, bufsz, "%s/configs/scenarios/%s", p.datadir, arg);
  if (exists(buf))
    return buf;
  return arg;
}

const char *
ff_tmpdir(void)
{
  const char *t = env("TMPDIR");
  return t ? t : "/tmp";
}
