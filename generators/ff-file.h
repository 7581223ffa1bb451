/* fusefarm: files written whole or not at all, and the descriptor limit.
 *
 * Every program of the project writes its state, stats and lvm config
 * through ff_write_file_atomic, so a reader (another process, or the same
 * program after a crash) sees the previous version or the new one, never
 * a torn one.  Streaming writers (the overlay's save) use the same steps
 * through ff_atomic_begin / ff_atomic_commit.
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
#include <sys/resource.h>

/* An atomic replacement of path in progress: write to fd, then commit. */
struct ff_atomic {
  char path[4096];
  char tmp[4100]; /* path + ".tmp" */
  int fd;
};

/* Create PATH.tmp (mode 0644, truncated) and open it for writing. */
int ff_atomic_begin(struct ff_atomic *a, const char *path);

/* fsync and close the temporary file, rename it over path, fsync the
 * directory.  On failure PATH.tmp is removed and path is unchanged.
 * step, if not NULL, gets the name of the step that failed ("fsync",
 * "close", "rename") for callers whose messages name it. */
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

/* Raise RLIMIT_NOFILE's soft limit to the hard one and check it is at
 * least need.  Else an error: "file descriptor limit too low: ulimit -n is
 * C and the hard limit H, but WHO needs NEED; raise it (ADVICE)".
 * *hard_before (may be NULL) gets the hard limit found.  0 or -1. */
int ff_nofile_raise(rlim_t need, const char *who, const char *advice,
                    rlim_t *hard_before);

#endif
