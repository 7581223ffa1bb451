/* fusefarm: where the program's own files are, installed or in the build
 * tree, and where scratch directories go.
 *
 * Installed (cmake --install, see README.md "Install"):
 *   PREFIX/bin/fusefarm
 *   PREFIX/share/fusefarm/guest/      the guest scripts (run-*.sh, lib.sh,
 *                                     build-*.sh, init.sh, ...)
 *   PREFIX/share/fusefarm/configs/    specs, profiles/, scenarios/
 *   PREFIX/libexec/fusefarm/          ff-dmcheck, ff-guestrun (in-guest)
 *   nbdkit's plugin directory         nbdkit-fusefarm-plugin.so
 * The directories are found from the program's own location
 * (/proc/self/exe), relative to its bin directory, so a tree installed
 * with DESTDIR or moved as a whole keeps working.
 *
 * Build tree: BUILD/fusefarm/fusefarm next to the marker file
 * BUILD/fusefarm/ff-build-tree (which names the source tree); then the
 * data directory is the source tree (guest/, configs/), the libexec
 * directory BUILD/guest and the plugin BUILD/nbd-plugin's.
 *
 * Environment overrides: FUSEFARM_DATADIR, FUSEFARM_LIBEXECDIR,
 * FUSEFARM_PLUGIN.
 */
#ifndef FF_PATHS_H
#define FF_PATHS_H

#include <limits.h>
#include <stddef.h>

struct ff_paths {
  char exe[PATH_MAX];        /* this program */
  char datadir[PATH_MAX];    /* holds guest/ and configs/ */
  char libexecdir[PATH_MAX]; /* holds ff-dmcheck and ff-guestrun */
  char plugin[PATH_MAX];     /* nbdkit-fusefarm-plugin.so */
  const char *from;          /* "installed", "build tree" or "environment" */
};

/* Fill p.  The directories are the ones the layout says; whether they
 * exist is for the caller to check (ff_paths_require).  -1 (ff_error)
 * only when the program cannot find itself. */
int ff_paths_find(struct ff_paths *p);

/* 0 when PATH (a file or directory of p) is there, else -1 with an
 * ff_error naming it, WHAT it is, where the program looked and ENV, the
 * variable that points the program at it. */
int ff_paths_require(const struct ff_paths *p, const char *path,
                     const char *what, const char *env);

/* The scenario a command-line argument names: ARG itself when it is a
 * path that exists or has a '/'; else, when the data directory has
 * configs/scenarios/ARG.conf (or ARG), that file.  The result is ARG or
 * buf. */
const char *ff_paths_scenario(const char *arg, char *buf, size_t bufsz);

/* Where scratch directories go: $TMPDIR when set and not empty, else
 * /tmp. */
const char *ff_tmpdir(void);

#endif
