/* fusefarm: starting child processes and waiting for them (ff-spawn.h). */
#include "ff-spawn.h"

#include "ff-error.h"
#include "ff-file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The parent's environment with the NAME, VALUE pairs of set replacing
 * or adding to it; the array and the added strings are malloc'd (the
 * parent's strings are borrowed).  NULL: out of memory. */
static char **
make_env(const char *const *set, char ***added)
{
  size_t n = 0, nset = 0, k = 0;
  char **env;

  while (environ[n])
    n++;
  while (set[nset] && set[nset + 1])
    nset += 2;
  env = calloc(n + nset / 2 + 1, sizeof *env);
  *added = calloc(nset / 2 + 1, sizeof **added);
  if (!env || !*added) {
    free(env);
    free(*added);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    int replaced = 0;

    for (size_t j = 0; j < nset && !replaced; j += 2) {
      size_t l = strlen(set[j]);

      replaced = !strncmp(environ[i], set[j], l) && environ[i][l] == '=';
    }
    if (!replaced)
      env[k++] = environ[i];
  }
  for (size_t j = 0; j < nset; j += 2) {
    char *s;

    if (asprintf(&s, "%s=%s", set[j], set[j + 1]) < 0) {
      for (size_t i = 0; (*added)[i]; i++)
        free((*added)[i]);
      free(*added);
      free(env);
      return NULL;
    }
    (*added)[j / 2] = s;
    env[k++] = s;
  }
  env[k] = NULL;
  return env;
}

static void
free_env(char **env, char **added)
{
  for (size_t i = 0; added && added[i]; i++)
    free(added[i]);
  free(added);
  free(env);
}

static int
open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
  /* A child that has already exited is still there (unreaped): the
   * pidfd is then readable at once. */
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

/* posix_spawn: everything but the limit. */
static int
start_spawn(const struct ff_spawn *o, char **env, pid_t *pid)
{
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t def;
  short flags = POSIX_SPAWN_SETSIGDEF;
  int ofd[2] = {-1, -1}; /* out, err: opened here, never through a link */
  int e;

  if (!o->inherit_stdio) {
    const char *path[2] = {o->out, o->err};

    for (int i = 0; i < 2; i++) {
      if (i == 0 && o->out_fd > 2)
        ofd[i] = fcntl(o->out_fd, F_DUPFD_CLOEXEC, 3);
      else if (path[i])
        ofd[i] = ff_open_write(path[i], O_TRUNC);
      else
        continue;
      if (ofd[i] < 0) {
        if (i == 0 && o->out_fd > 2)
          ff_error("dup: %m");
        if (i)
          close(ofd[0]);
        return -1;
      }
    }
  }

  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  posix_spawnattr_setsigdefault(&at, &def);
  if (o->own_pgroup) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&at, 0);
  }
  posix_spawnattr_setflags(&at, flags);
  if (!o->inherit_stdio) {
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    for (int i = 0; i < 2; i++)
      if (ofd[i] >= 0)
        posix_spawn_file_actions_adddup2(&fa, ofd[i], i + 1);
      else
        posix_spawn_file_actions_addopen(&fa, i + 1, "/dev/null", O_WRONLY, 0);
  }
  if (o->cwd)
    posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
  e = posix_spawnp(pid, o->argv[0], &fa, &at, (char *const *)o->argv,
                   env ? env : environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  for (int i = 0; i < 2; i++)
    if (ofd[i] >= 0)
      close(ofd[i]);
  if (e) {
    errno = e;
    return ff_error("posix_spawn %s: %m", o->argv[0]);
  }
  return 0;
}

/* fork + exec, for what posix_spawn cannot do (the limit).  The files
 * are opened here so that the child only moves fds. */
static int
start_fork(const struct ff_spawn *o, char **env, pid_t *pid)
{
  int fd[3] = {-1, -1, -1};
  int rc = 0;

  if (!o->inherit_stdio) {
    const char *path[3] = {"/dev/null", o->out ? o->out : "/dev/null",
                           o->err ? o->err : "/dev/null"};

    for (int i = 0; i < 3 && !rc; i++) {
      if (i == 1 && o->out_fd > 2) {
        fd[i] = fcntl(o->out_fd, F_DUPFD_CLOEXEC, 3);
        rc = fd[i] < 0 ? ff_error("dup: %m") : 0;
        continue;
      }
      if (i && (i == 1 ? o->out : o->err)) {
        fd[i] = ff_open_write(path[i], O_TRUNC);
        rc = fd[i] < 0 ? -1 : 0;
        continue;
      }
      fd[i] = open(path[i], i ? O_WRONLY | O_CLOEXEC : O_RDONLY | O_CLOEXEC);
      if (fd[i] < 0)
        rc = ff_error("%s: %m", path[i]);
    }
  }
  if (!rc) {
    *pid = fork();
    if (*pid < 0)
      rc = ff_error("fork: %m");
  }
  if (!rc && *pid == 0) {
    for (int i = 0; i < 3 && !o->inherit_stdio; i++)
      if (dup2(fd[i], i) < 0)
        _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (o->own_pgroup)
      setpgid(0, 0);
    if (o->cwd && chdir(o->cwd) < 0)
      _exit(127);
    if (o->raise_nofile)
      ff_nofile_raise(0, "", "", NULL); /* soft to hard; need 0 */
    execvpe(o->argv[0], (char *const *)o->argv, env ? env : environ);
    dprintf(2, "exec %s: %s\n", o->argv[0], strerror(errno));
    _exit(127);
  }
  for (int i = 0; i < 3; i++)
    if (fd[i] >= 0)
      close(fd[i]);
  return rc;
}

int
ff_proc_start(struct ff_proc *p, const struct ff_spawn *o)
{
  char **env = NULL, **added = NULL;
  pid_t pid = 0;
  int rc;

  p->pid = 0;
  p->pidfd = -1;
  p->status = -1;
  if (!o->argv || !o->argv[0])
    return ff_error("spawn: no command");
  if (o->env && !(env = make_env(o->env, &added)))
    return ff_error("out of memory");
  rc = o->raise_nofile ? start_fork(o, env, &pid) : start_spawn(o, env, &pid);
  free_env(env, added);
  if (rc < 0)
    return -1;
  p->pid = pid;
  p->pidfd = open_pidfd(pid);
  return 0;
}

static int
status_of(int st)
{
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
reaped(struct ff_proc *p, int st)
{
  p->status = status_of(st);
  p->pid = 0;
  if (p->pidfd >= 0)
    close(p->pidfd);
  p->pidfd = -1;
}

int
ff_proc_wait(struct ff_proc *p)
{
  int st;

  if (p->pid <= 0)
    return ff_error("wait: no child");
  while (waitpid(p->pid, &st, 0) < 0)
    if (errno != EINTR)
      return ff_error("waitpid %d: %m", (int)p->pid);
  reaped(p, st);
  return p->status;
}

int
ff_proc_try(struct ff_proc *p)
{
  pid_t r;
  int st;

  if (p->pid <= 0)
    return ff_error("wait: no child");
  do
    r = waitpid(p->pid, &st, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return ff_error("waitpid %d: %m", (int)p->pid);
  if (r == 0)
    return 0;
  reaped(p, st);
  return 1;
}

void
ff_proc_kill(struct ff_proc *p)
{
  if (p->pid <= 0)
    return;
  kill(p->pid, SIGKILL);
  ff_proc_wait(p);
}

int
ff_spawn_run(const struct ff_spawn *o)
{
  struct ff_proc p;

  if (ff_proc_start(&p, o) < 0)
    return -1;
  return ff_proc_wait(&p);
}

pid_t
ff_spawn(const char *const argv[], const char *out, const char *err,
         const char *const *env)
{
  const struct ff_spawn o = {
    .argv = argv,
    .env = env,
    .out = out,
    .err = err,
    .raise_nofile = env != NULL,
  };
  struct ff_proc p;

  if (ff_proc_start(&p, &o) < 0)
    return -1;
  if (p.pidfd >= 0)
    close(p.pidfd);
  return p.pid;
}

int
ff_wait_status(pid_t pid)
{
  int st;

  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return status_of(st);
}
