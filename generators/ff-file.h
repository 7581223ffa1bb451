/* fusefarm: files written whole or not at all, and the descriptor limit.
 *
 * Every program of the project writes its state, stats and lvm config
 * through ff_write_file_atomic, so a reader (another process, or the same
 * program after a crash) sees the previous version or the new one, never
 * a torn one.  Streaming writers (the overlay's save) use the same steps
 * through ff_atomic_begin / ff_atomic_commit.
 *
 * No file is written through a link fusefarm did not make: the temporary
 * file is created O_EXCL|O_NOFOLLOW, a path that is a symbolic link is
 * refused with a message naming it, and files written in place
 * (ff_open_write: logs, traces, reports) and directories (ff_mkdir) are
 * opened or checked the same way.  A directory anyone may write to (a
 * sticky /tmp) then cannot turn a write of ours into a write elsewhere.
 *
 * Thread model: no shared state; two writers of the same path at once
 * share PATH.tmp, so callers serialise writes of one path.
 *
 * Errors: -1 after recording one message with ff_error() (errno is kept
 * from the failing call).
 */
#ifndef FF_FILE_H
#define FF_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/resource.h>

/* An atomic replacement of path in progress: write to fd, then commit. */
struct ff_atomic {
  char path[4096];
  char tmp[4100]; /* path + ".tmp" */
  int fd;
};

/* Create PATH.tmp (mode 0644, O_EXCL|O_NOFOLLOW) and open it for writing.
 * A PATH.tmp left by a crash (a regular file of our euid) is removed and
 * created again; a symbolic link or anything else there is refused, as is
 * a path that is itself a symbolic link. */
int ff_atomic_begin(struct ff_atomic *a, const char *path);

/* fsync and close the temporary file, rename it over path, fsync the
 * directory.  On failure PATH.tmp is removed and path is unchanged.
 * step, if not NULL, gets the name of the step that failed ("fsync",
 * "close", "rename") for callers whose messages name it, or NULL when
 * path has become a symbolic link (refused, the message names it). */
int ff_atomic_commit(struct ff_atomic *a, const char **step);

/* Give up: close and remove PATH.tmp; path is unchanged.  errno kept. */
void ff_atomic_abort(struct ff_atomic *a);

/* Replace path by len bytes of data, atomically (the steps above). */
int ff_write_file_atomic(const char *path, const void *data, size_t len);

/* Open an input file (spec, profile, scenario, overlay, run document)
 * for reading, refusing anything but a regular file without blocking: a
 * fifo would hang the reader, a directory or device is no input.  The fd,
 * or -1 with "PATH: cannot read the WHAT: REASON" ("PATH: REASON" when
 * what is NULL; errno EINVAL for the wrong kind of file). */
int ff_open_regular(const char *path, const char *what);

/* Open path for writing in place (O_WRONLY|O_CLOEXEC, mode 0644 when
 * created), relative to dirfd (AT_FDCWD: the cwd).  flags is 0 or any of
 * O_TRUNC, O_APPEND, O_EXCL.  The last component is never followed: a
 * symbolic link is refused ("refusing to write through PATH: it is a
 * symbolic link (not made by fusefarm)"), and so is anything but a
 * regular file (a fifo, a device, a directory), before anything is
 * truncated.  The fd, or -1. */
int ff_open_write_at(int dirfd, const char *path, int flags);
int ff_open_write(const char *path, int flags);

/* ff_open_write as a stdio stream: mode "w" (truncate) or "a" (append).
 * The stream, or NULL after ff_error. */
FILE *ff_fopen_write(const char *path, const char *mode);

/* Create directory path (mode) or reuse it: a path that exists must be a
 * directory, not a symbolic link to one ("refusing to use PATH: it is a
 * symbolic link (not made by fusefarm)").  1 created, 0 there already, or
 * -1 (errno kept from mkdir for other failures). */
int ff_mkdir(const char *path, mode_t mode);

/* Raise RLIMIT_NOFILE's soft limit to the hard one and check it is at
 * least need.  Else an error: "file descriptor limit too low: ulimit -n is
 * C and the hard limit H, but WHO needs NEED; raise it (ADVICE)".
 * *hard_before (may be NULL) gets the hard limit found.  0 or -1. */
int ff_nofile_raise(rlim_t need, const char *who, const char *advice,
                    rlim_t *hard_before);

#endif
