/* fusefarm: starting child processes and waiting for them, once.
 *
 * Every program of the project that runs another one (lvm commands of
 * the workloads, `fusefarm run` calling `fusefarm mount/attach/detach`,
 * `fusefarm vm` calling the guest scripts, `ff-guestrun` calling lvm in
 * the guest) starts it here.
 *
 * INVARIANTS
 *
 * - A child is waited for by its own pid (or polled through its pidfd);
 *   nothing here waits for "any child", so a caller's other children
 *   (the aio companion of `fusefarm run`, a test's own child) are never
 *   reaped behind its back.
 * - The child's stdin is /dev/null and its stdout/stderr go to the
 *   files named (NULL: /dev/null), unless inherit_stdio is set.
 *   SIGINT and SIGTERM are back to their default action in the child,
 *   whatever the parent does with them.
 * - posix_spawn starts the child; fork + exec only where posix_spawn
 *   cannot do what is asked (raising the child's RLIMIT_NOFILE).
 *
 * OWNERSHIP
 *
 * struct ff_proc holds the pidfd of a started child (or -1 where the
 * kernel has no pidfd_open); ff_proc_wait() and ff_proc_try() reap the
 * child and close it once the child is reaped.  A caller that gives up
 * on a child calls ff_proc_kill() (kills, reaps, closes).
 *
 * ERRORS
 *
 * -1 with one message recorded by ff_error() (ff-error.h): "fork: ...",
 * "posix_spawn lvm: No such file or directory".
 *
 * THREADS
 *
 * None of its own.  Everything the child needs (its environment, its
 * stdio files) is made in the parent before it starts; the fork path's
 * child only moves fds, sets its limit and execs.
 */
#ifndef FF_SPAWN_H
#define FF_SPAWN_H

#include <sys/types.h>

struct ff_spawn {
  const char *const *argv; /* argv[0] is found on PATH */
  /* NULL-terminated "NAME", "VALUE", ... set in the child's environment
   * (the rest of the parent's is kept); NULL: the parent's as it is. */
  const char *const *env;
  const char *out, *err; /* stdout/stderr files (truncated); NULL:
                          * /dev/null */
  int out_fd;            /* > 2: stdout is this open file instead of out
                          * (a memfd the parent reads back) */
  int inherit_stdio;     /* keep the parent's stdin/stdout/stderr */
  int raise_nofile;      /* RLIMIT_NOFILE soft = hard in the child (lvm
                          * keeps one fd per PV and silently lists fewer
                          * when short) */
  int own_pgroup;        /* the child leads a new process group */
  const char *cwd;       /* NULL: the parent's */
};

struct ff_proc {
  pid_t pid;  /* 0: no child (never started, or reaped) */
  int pidfd;  /* readable once the child has exited; -1: none */
  int status; /* after reaping: exit status, or 128 + signal */
};

/* Start a child as o says.  0 and p filled, or -1 (p->pid 0). */
int ff_proc_start(struct ff_proc *p, const struct ff_spawn *o);

/* Wait for the child (through EINTR) and reap it: its status (exit
 * status, or 128 + signal), or -1. */
int ff_proc_wait(struct ff_proc *p);

/* Reap the child if it has exited: 1 (p->status set), 0 still running,
 * -1 error. */
int ff_proc_try(struct ff_proc *p);

/* Kill (SIGKILL), reap and forget the child, if there is one. */
void ff_proc_kill(struct ff_proc *p);

/* Start and wait: the child's status, or -1 when it could not start. */
int ff_spawn_run(const struct ff_spawn *o);

/* The short forms `fusefarm run` and `ff-guestrun` use: argv with
 * stdout/stderr to out/err (NULL: /dev/null) and, when env is non-NULL,
 * those variables set and RLIMIT_NOFILE raised (lvm's environment).
 * Returns the pid (no pidfd kept) or -1; ff_wait_status() reaps it. */
pid_t ff_spawn(const char *const argv[], const char *out, const char *err,
               const char *const *env);

/* waitpid(pid) through EINTR: the exit status, 128 + signal, or -1. */
int ff_wait_status(pid_t pid);

#endif
