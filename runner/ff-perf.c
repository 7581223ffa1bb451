/* fusefarm: `perf record` around a workload (ff-perf.h).  No threads. */
#include "ff-perf.h"
#include "ff-error.h"
#include "ff-util.h" /* ff_pathf */

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A bound on how long perf may take to answer a command: a perf that
 * neither answers nor exits is stuck, not slow. */
#define ACK_MS 60000

static int
find_on_path(const char *name, char *path, size_t len)
{
  const char *p = getenv("PATH");

  if (strchr(name, '/')) {
    ff_pathf(path, len, "%s", name);
    return access(path, X_OK);
  }
  if (!p || !*p)
    p = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
  while (*p) {
    size_t n = strcspn(p, ":");

    ff_pathf(path, len, "%.*s/%s", (int)n, n ? p : ".", name);
    if (access(path, X_OK) == 0)
      return 0;
    p += n;
    if (*p == ':')
      p++;
  }
  return -1;
}

int
ff_perf_probe(char *path, size_t len)
{
  const char *name = getenv("FF_PERF");
  struct perf_event_attr a = {
    .type = PERF_TYPE_SOFTWARE,
    .size = sizeof a,
    .config = PERF_COUNT_SW_CPU_CLOCK,
    .disabled = 1,
  };
  int fd, st;

  if (!name || !*name)
    name = "perf";
  if (find_on_path(name, path, len) < 0)
    return ff_error("%s: not found (FF_PERF, or perf on PATH: Debian's "
                    "linux-perf)",
                    name);
  st = ff_spawn_run(&(struct ff_spawn){
    .argv = (const char *const[]){path, "--version", NULL}});
  if (st != 0)
    return ff_error("%s --version: exit %d (a perf for another kernel?)", path,
                    st);
  /* What `perf record -a` opens: a cpu-clock event on every CPU. */
  fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
  if (fd < 0) {
    char par[32] = "?";
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

    if (f) {
      if (!fgets(par, sizeof par, f))
        strcpy(par, "?");
      par[strcspn(par, "\n")] = '\0';
      fclose(f);
    }
    return ff_error("perf_event_open (a system-wide cpu-clock event): %m "
                    "(kernel.perf_event_paranoid = %s)",
                    par);
  }
  close(fd);
  return 0;
}

/* sched_switch's tracepoint id under dir, or -1. */
static long long
sched_switch_id(const char *dir)
{
  char idpath[PATH_MAX + 64];
  long long id = -1;
  FILE *f;

  ff_pathf(idpath, sizeof idpath, "%s/events/sched/sched_switch/id", dir);
  if (!(f = fopen(idpath, "re")))
    return -1;
  if (fscanf(f, "%lld", &id) != 1)
    id = -1;
  fclose(f);
  return id;
}

int
ff_perf_probe_sched(char *tracefs, size_t len, int *mounted)
{
  const char *env = getenv("FF_TRACEFS");
  const char *dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
  size_t ndirs = 2;
  long long id = -1;

  if (env && *env) {
    dirs[0] = env;
    ndirs = 1;
  }
  *mounted = 0;
  for (size_t i = 0; i < ndirs && id < 0; i++)
    if ((id = sched_switch_id(dirs[i])) >= 0)
      ff_pathf(tracefs, len, "%s", dirs[i]);
  /* No tracefs mounted (a container, a minimal boot; systemd mounts it
   * at boot elsewhere): mount it where the kernel made its mount point,
   * as perf itself does for a tracepoint event.  Root only; it stays
   * for every later user, as perf's does. */
  if (id < 0 && ndirs == 2 &&
      mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
    if ((id = sched_switch_id("/sys/kernel/tracing")) >= 0) {
      ff_pathf(tracefs, len, "/sys/kernel/tracing");
      *mounted = 1;
    } else {
      umount("/sys/kernel/tracing");
    }
  }
  if (id < 0) {
    if (ndirs == 1)
      return ff_error("no tracefs: %s/events/sched/sched_switch/id cannot be "
                      "read (FF_TRACEFS)",
                      dirs[0]);
    return ff_error("no tracefs: events/sched/sched_switch/id cannot be read "
                    "under /sys/kernel/tracing or /sys/kernel/debug/tracing "
                    "(mount -t tracefs nodev /sys/kernel/tracing)");
  }
  {
    /* What `perf record -e sched:sched_switch -a` opens, on one CPU. */
    struct perf_event_attr a = {
      .type = PERF_TYPE_TRACEPOINT,
      .size = sizeof a,
      .config = (unsigned long long)id,
      .disabled = 1,
    };
    int fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);

    if (fd < 0)
      return ff_error("perf_event_open (the sched:sched_switch tracepoint, "
                      "system-wide): %m");
    close(fd);
  }
  return 0;
}

/* Start PERF record of event (-g -a) into dir, events off. */
static int
start(struct ff_perf *p, const char *perf, const char *dir, const char *event)
{
  char ctl[PATH_MAX + 16], ack[PATH_MAX + 16], data[PATH_MAX + 16];
  char log[PATH_MAX + 16], control[2 * PATH_MAX + 64];

  memset(p, 0, sizeof *p);
  p->ctl = p->ack = -1;
  ff_pathf(p->dir, sizeof p->dir, "%s", dir);
  ff_pathf(ctl, sizeof ctl, "%s/ctl", dir);
  ff_pathf(ack, sizeof ack, "%s/ack", dir);
  ff_pathf(data, sizeof data, "%s/perf.data", dir);
  ff_pathf(log, sizeof log, "%s/perf.log", dir);
  ff_pathf(control, sizeof control, "fifo:%s,%s", ctl, ack);
  if ((mkfifo(ctl, 0600) < 0 && errno != EEXIST) ||
      (mkfifo(ack, 0600) < 0 && errno != EEXIST))
    return ff_error("mkfifo %s: %m", dir);
  /* O_RDWR: a fifo opened so never blocks, whether perf has it open
   * yet or not. */
  p->ctl = open(ctl, O_RDWR | O_CLOEXEC);
  p->ack = open(ack, O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (p->ctl < 0 || p->ack < 0) {
    ff_perf_kill(p);
    return ff_error("open %s: %m", p->ctl < 0 ? ctl : ack);
  }
  if (ff_proc_start(
        &p->proc,
        &(struct ff_spawn){
          .argv = (const char *const[]){perf, "record", "-e", event, "-g",
                                        "-a", "-D", "-1", "--control", control,
                                        "--no-buildid", "--no-buildid-cache",
                                        "-q", "-o", data, NULL},
          .out = log,
          .err = log,
        }) < 0) {
    ff_perf_kill(p);
    return -1;
  }
  return 0;
}

int
ff_perf_start(struct ff_perf *p, const char *perf, const char *dir)
{
  return start(p, perf, dir, "cpu-clock");
}

int
ff_perf_start_offcpu(struct ff_perf *p, const char *perf, const char *dir)
{
  return start(p, perf, dir, "sched:sched_switch");
}

/* Send cmd and wait for perf's "ack". */
static int
command(struct ff_perf *p, const char *cmd)
{
  char buf[64];
  size_t n = strlen(cmd), got = 0;
  struct pollfd pf[2] = {{p->ack, POLLIN, 0}, {p->proc.pidfd, POLLIN, 0}};

  if (p->ctl < 0 || p->proc.pid <= 0)
    return ff_error("perf record: not running");
  if (write(p->ctl, cmd, n) != (ssize_t)n || write(p->ctl, "\n", 1) != 1)
    return ff_error("perf record: control fifo: %m");
  while (got < 4) {
    int r = poll(pf, p->proc.pidfd >= 0 ? 2 : 1, ACK_MS);
    ssize_t k;

    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return ff_error("poll: %m");
    if (r == 0)
      return ff_error("perf record: no answer to '%s' in %d s (%s/perf.log)",
                      cmd, ACK_MS / 1000, p->dir);
    if (pf[0].revents & POLLIN) {
      k = read(p->ack, buf + got, sizeof buf - 1 - got);
      if (k > 0)
        got += (size_t)k;
      continue;
    }
    if (pf[1].revents) {
      int st = ff_proc_wait(&p->proc);

      return ff_error("perf record: exited %d before it answered '%s' "
                      "(%s/perf.log)",
                      st, cmd, p->dir);
    }
  }
  buf[got] = '\0';
  if (strncmp(buf, "ack", 3))
    return ff_error("perf record: answered '%s' to '%s'", buf, cmd);
  return 0;
}

int
ff_perf_enable(struct ff_perf *p)
{
  if (command(p, "enable") < 0)
    return -1;
  p->enabled = 1;
  return 0;
}

int
ff_perf_disable(struct ff_perf *p)
{
  if (command(p, "disable") < 0)
    return -1;
  p->enabled = 0;
  return 0;
}

static void
close_fifos(struct ff_perf *p)
{
  if (p->ctl >= 0)
    close(p->ctl);
  if (p->ack >= 0)
    close(p->ack);
  p->ctl = p->ack = -1;
}

int
ff_perf_stop(struct ff_perf *p)
{
  int st;

  if (p->proc.pid <= 0) {
    close_fifos(p);
    return ff_error("perf record: not running");
  }
  kill(p->proc.pid, SIGINT);
  st = ff_proc_wait(&p->proc);
  close_fifos(p);
  /* perf record writes its file on SIGINT, then ends by it again
   * (its handler raises it once done): 128 + SIGINT is success. */
  if (st != 0 && st != 128 + SIGINT)
    return ff_error("perf record: exit %d (%s/perf.log)", st, p->dir);
  return 0;
}

void
ff_perf_kill(struct ff_perf *p)
{
  ff_proc_kill(&p->proc);
  close_fifos(p);
}

/* perf script of dir/perf.data into out with the extra arguments (NULL
 * ended), its stderr into dir/script.log; -1 with ff_error. */
static int
script(const char *perf, const char *dir, const char *out,
       const char *const *extra)
{
  char data[PATH_MAX + 16], log[PATH_MAX + 16];
  const char *argv[16] = {perf, "script", "-i", data};
  size_t n = 4;
  int st;

  ff_pathf(data, sizeof data, "%s/perf.data", dir);
  ff_pathf(log, sizeof log, "%s/script.log", dir);
  while (*extra && n + 1 < sizeof argv / sizeof *argv)
    argv[n++] = *extra++;
  argv[n] = NULL;
  st = ff_spawn_run(&(struct ff_spawn){.argv = argv, .out = out, .err = log});
  if (st != 0)
    return ff_error("perf script: exit %d (%s)", st, log);
  return 0;
}

int
ff_perf_script(const char *perf, const char *dir, const char *out)
{
  return script(perf, dir, out,
                (const char *const[]){"--show-task-events", "-F",
                                      "comm,pid,tid,ip,sym,dso", NULL});
}

int
ff_perf_script_offcpu(const char *perf, const char *dir, const char *out)
{
  return script(perf, dir, out,
                (const char *const[]){
                  "--ns", "--show-task-events", "--show-lost-events", "-F",
                  "comm,pid,tid,time,event,trace,ip,sym,dso", NULL});
}
