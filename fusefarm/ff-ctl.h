/* fusefarm: the client side of a mounted farm's control files.
 *
 * A running daemon (`fusefarm mount`) serves MNT/.fusefarm/: `profile`
 * (read: the current profile; write a path or builtin:NAME: switch),
 * `control` (write "reset" or "save"), `stats.json`, `info.json`, and
 * `last-error`, where the daemon says why it refused the last write.
 * `fusefarm profile`, `fusefarm stats --reset` and `fusefarm run` talk to
 * it through these two calls.
 *
 * ERRORS
 *
 * ff_ctl_write() tells "not a farm" (the control file cannot be opened:
 * FF_CTL_NOFILE) apart from "the daemon said no" (FF_CTL_REFUSED); both
 * record a message with ff_error() (ff-error.h):
 *   - FF_CTL_NOFILE: "MNT/.fusefarm/profile: No such file or directory"
 *   - FF_CTL_REFUSED: what last-error says (no final newline), or, when it
 * says nothing, "write MNT/.fusefarm/control: <errno text>".
 *
 * THREADS
 *
 * None; each call opens, uses and closes its file.
 */
#ifndef FF_CTL_H
#define FF_CTL_H

#include <stddef.h>

enum {
  FF_CTL_NOFILE = -1,  /* the control file is not there: not a farm */
  FF_CTL_REFUSED = -2, /* the daemon refused the command */
};

/* Write cmd to MNT/.fusefarm/FILE in one write.  0, FF_CTL_NOFILE or
 * FF_CTL_REFUSED. */
int ff_ctl_write(const char *mnt, const char *file, const char *cmd);

/* The first max bytes of MNT/.fusefarm/FILE, NUL-terminated (malloc'd;
 * caller frees), or NULL with ff_error set ("MNT/.fusefarm/FILE: ..."). */
char *ff_ctl_read(const char *mnt, const char *file, size_t max);

#endif
