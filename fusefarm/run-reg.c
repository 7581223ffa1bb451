/* fusefarm run: the farm's registry entry (farm-registry.h) and the
 * watchdog that tears the farm down when the runner is killed (run-int.h). */
#include "run-int.h"

/* ---- the registry entry and the watchdog (farm-registry.h) ------------- */

/* Write the entry as the run knows it now.  A registry that cannot be
 * written is a warning, not an error: the watchdog works without it. */
void
reg_update(struct run *r, int fresh)
{
  if (r->regfd < 0 || ff_reg_write(r->regfd, &r->reg, fresh) == 0)
    return;
  fprintf(stderr,
          "fusefarm run: warning: %s: if this run is cut off, `fusefarm "
          "cleanup` will not find its farm\n",
          ff_errmsg());
  close(r->regfd);
  r->regfd = -1;
}

void
reg_start(struct run *r)
{
  const char *base = strrchr(r->scratch, '/');

  r->regfd = ff_reg_open(1);
  ff_pathf(r->reg.name, sizeof r->reg.name, "%d-%s", (int)getpid(),
           base ? base + 1 : r->scratch);
  ff_pathf(r->reg.mnt, sizeof r->reg.mnt, "%s", r->mnt);
  ff_pathf(r->reg.state, sizeof r->reg.state, "%s", r->state);
  ff_pathf(r->reg.scratch, sizeof r->reg.scratch, "%s", r->scratch);
  ff_pathf(r->reg.exe, sizeof r->reg.exe, "%s", r->self);
  r->reg.creator.pid = getpid();
  r->reg.creator.start = ff_proc_start_time(getpid());
  if (r->regfd < 0) {
    fprintf(stderr,
            "fusefarm run: warning: %s: if this run is cut off, `fusefarm "
            "cleanup` will not find its farm\n",
            ff_errmsg());
    return;
  }
  reg_update(r, 1);
}

void
reg_end(struct run *r)
{
  if (r->regfd < 0)
    return;
  if (ff_reg_remove(r->regfd, r->reg.name) < 0)
    fprintf(stderr, "fusefarm run: warning: %s\n", ff_errmsg());
  close(r->regfd);
  r->regfd = -1;
}

/* The watchdog (see the top of this file): wait for the runner to go;
 * if it went without removing its entry, tear its farm down. */
static void __attribute__((noreturn))
watchdog_main(struct run *r, pid_t runner)
{
  struct pollfd p = {.events = POLLIN};
  struct ff_reg e;
  int fd, rc;

  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  setpgid(0, 0); /* a kill of the run's process group leaves it */
  /* A caller reading the run's stdout to its end is not held by it. */
  fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    dup2(fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    close(fd);
  }
  p.fd = (int)syscall(SYS_pidfd_open, runner, 0);
  if (p.fd >= 0 && getppid() == runner)
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
      ;
  if (r->regfd >= 0 && ff_reg_read(r->regfd, r->reg.name, &e) < 0 &&
      errno == ENOENT)
    _exit(0); /* the runner's own teardown ended with the entry */
  if (r->regfd < 0 || ff_reg_read(r->regfd, r->reg.name, &e) < 0)
    e = r->reg;
  fprintf(stderr,
          "fusefarm run: the runner %d is gone without its teardown; its "
          "watchdog %d tears the farm down\n",
          (int)runner, (int)getpid());
  rc = ff_farm_teardown(r->regfd, &e, 1, 0, stderr);
  if (rc < 0)
    fprintf(stderr, "fusefarm run: watchdog: %s\n", ff_errmsg());
  _exit(rc < 0 ? 1 : 0);
}

/* Start the watchdog in the runner's namespace; without one (fork
 * failed) the run goes on, as it did before watchdogs. */
void
watchdog_start(struct run *r)
{
  pid_t runner = getpid(), pid;

  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    fprintf(stderr, "fusefarm run: warning: fork the watchdog: %m\n");
    return;
  }
  if (pid == 0)
    watchdog_main(r, runner);
  r->watchdog = pid;
  r->reg.watchdog.pid = pid;
  r->reg.watchdog.start = ff_proc_start_time(pid);
  r->reg.mntns = ff_proc_mntns(runner);
  reg_update(r, 0);
}

/* The teardown ran: the watchdog has nothing left to do. */
void
watchdog_stop(struct run *r)
{
  if (r->watchdog <= 0)
    return;
  kill(r->watchdog, SIGKILL);
  ff_wait_status(r->watchdog);
  r->watchdog = 0;
}
