/* fusefarm: one parser of /proc/PID/mountinfo (proc(5)).
 *
 * Each line: mount ID, parent ID, major:minor, root, mount point, mount
 * options, optional fields, "-", file system type, source, super
 * options.  Paths are escaped by the kernel (space, tab, newline and
 * backslash as \ooo); the parser undoes that for root, the mount point
 * and the source, in place.  getmntent(3) reads /proc/self/mounts, which
 * has no mount IDs: the FUSE daemon's watcher needs them.
 *
 * No threads, no state: each call works on its arguments only.
 */
#ifndef FF_MOUNTINFO_H
#define FF_MOUNTINFO_H

#include <stdio.h>

/* One line, its fields pointing into the line (which the parser
 * modified): valid while the line is. */
struct ff_mountinfo {
  const char *id, *parent, *root, *point, *fstype, *source;
};

/* Parse one line (with or without its '\n') in place.  0, or -1 when it
 * is not a mountinfo line (fewer fields, no "-" separator). */
int ff_mountinfo_parse(char *line, struct ff_mountinfo *m);

/* Call fn(m, arg) for every line of the table at path
 * ("/proc/self/mountinfo") in order, until fn returns non-zero: that
 * value is returned; 0 when fn never stopped it; -1 with ff_error when
 * the file cannot be opened. */
int ff_mountinfo_each(const char *path,
                      int (*fn)(const struct ff_mountinfo *m, void *arg),
                      void *arg);

#endif
