/* fusefarm run: the aio companion (a process holding aio contexts, as the
 * field report's host had) and the runner's own lvmetad for 2.02 builds
 * (run-int.h). */
#include "run-int.h"

/* ---- aio contention --------------------------------------------------------
 */

static long
read_long(const char *path)
{
  char *s = ff_slurp(path, 64);
  long v = s ? strtol(s, NULL, 10) : -1;

  free(s);
  return v;
}

/* The companion: reserve `want` aio events, keep `inflight` 4 KiB O_DIRECT
 * reads going over the farm's loops until killed.  Runs in a child. */
void
aio_companion(struct run *r, long want, unsigned inflight)
{
  aio_context_t big = 0, io = 0;
  struct iocb *cbs;
  struct iocb **ptrs;
  struct io_event ev[64];
  int *fds;
  uint32_t nfd = 0;
  char *buf;

  /* The kernel rounds nr_events up a little when it counts it against
   * aio-max-nr: step down until a context fits. */
  while (want > 0 && syscall(SYS_io_setup, want, &big) < 0) {
    if (errno != EAGAIN) {
      fprintf(stderr, "aio companion: io_setup(%ld): %m\n", want);
      break;
    }
    want -= want / 100 + 1;
  }
  if (inflight == 0)
    for (;;)
      pause();
  fds = calloc(r->fv.ndevs, sizeof *fds);
  cbs = calloc(inflight, sizeof *cbs);
  ptrs = calloc(inflight, sizeof *ptrs);
  if (!fds || !cbs || !ptrs || posix_memalign((void **)&buf, 4096, 4096) ||
      syscall(SYS_io_setup, inflight, &io) < 0)
    for (;;)
      pause();
  for (uint32_t i = 0; i < r->fv.ndevs; i++)
    if (r->fv.paths[i] &&
        (fds[nfd] = open(r->fv.paths[i], O_RDONLY | O_DIRECT)) >= 0)
      nfd++;
  if (!nfd)
    for (;;)
      pause();
  for (unsigned k = 0; k < inflight; k++) {
    cbs[k].aio_fildes = (uint32_t)fds[k % nfd];
    cbs[k].aio_lio_opcode = IOCB_CMD_PREAD;
    cbs[k].aio_buf = (uint64_t)(uintptr_t)buf;
    cbs[k].aio_nbytes = 4096;
    cbs[k].aio_offset = 4096 * (k % 64);
    cbs[k].aio_data = k;
    ptrs[k] = &cbs[k];
  }
  syscall(SYS_io_submit, io, (long)inflight, ptrs);
  for (uint64_t n = 0;; n++) {
    long got = syscall(SYS_io_getevents, io, 1, 64, ev, NULL);

    for (long i = 0; i < got; i++) {
      struct iocb *cb = &cbs[ev[i].data];

      cb->aio_fildes = (uint32_t)fds[(n + (uint64_t)i) % nfd];
      syscall(SYS_io_submit, io, 1L, &cb);
    }
  }
}

int
aio_start(struct run *r, unsigned inflight)
{
  long max = read_long("/proc/sys/fs/aio-max-nr");
  long used = read_long("/proc/sys/fs/aio-nr");
  long want = (long)((double)(max - used) * r->sc->aio_share);
  pid_t pid;

  if (max < 0 || used < 0)
    return ff_error("cannot read /proc/sys/fs/aio-max-nr or aio-nr");
  pid = fork();
  if (pid < 0)
    return ff_error("fork: %m");
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    aio_companion(r, want, inflight);
    _exit(0);
  }
  r->aio_pid = pid;
  usleep(200000); /* let it reserve before lvm starts */
  run_say(r,
          "aio companion %d: reserving %ld of %ld free aio events "
          "(aio-nr now %ld of %ld), %u reads in flight",
          (int)pid, want, max - used, read_long("/proc/sys/fs/aio-nr"), max,
          inflight);
  return 0;
}

void
aio_stop(struct run *r)
{
  if (r->aio_pid <= 0)
    return;
  kill(r->aio_pid, SIGKILL);
  ff_wait_status(r->aio_pid);
  r->aio_pid = 0;
}

/* ---- lvmetad (2.02.x with global/use_lvmetad = 1) ------------------------
 *
 * What lvm2-lvmetad.service ran (lvmetad -f), with its socket and pid file
 * in the private /run/lvm, where the lvm commands of the namespace look
 * for it.  Each repetition starts cold (wenv_cold empties /run/lvm), so it
 * is restarted then: an empty cache, as at boot.  Stopped (killed and
 * reaped) at the end of each configuration and in every teardown path.
 */

#define LVMETAD_SOCKET "/run/lvm/lvmetad.socket"

void
lvmetad_stop(struct run *r)
{
  if (!r->lvmetad.pid)
    return; /* none of ours runs (never touch a host lvmetad's socket) */
  ff_proc_kill(&r->lvmetad);
  unlink(LVMETAD_SOCKET);
}

int
lvmetad_start(struct run *r)
{
  char bin[PATH_MAX + 16];
  const char *lvm = r->lvm_path, *slash = strrchr(lvm, '/');
  const char *argv[] = {
    bin, "-f", "-s", LVMETAD_SOCKET, "-p", "/run/lvm/lvmetad.pid", NULL};
  char err[PATH_MAX + 32];
  const char *env[LVM_ENV_LEN];
  struct ff_spawn o = {.argv = argv, .err = err, .env = env};
  struct stat st;

  lvmetad_stop(r);
  lvm_env(r, env);
  if (slash)
    ff_pathf(bin, sizeof bin, "%.*s/lvmetad", (int)(slash - lvm), lvm);
  else
    ff_pathf(bin, sizeof bin, "lvmetad");
  if (slash && access(bin, X_OK) < 0)
    return ff_error("global/use_lvmetad = 1: lvm %s uses lvmetad, but %s: "
                    "%m (an lvm2 build with --enable-lvmetad has it)",
                    r->lvm_version, bin);
  ff_pathf(err, sizeof err, "%s/lvmetad.err", r->scratch);
  if (ff_proc_start(&r->lvmetad, &o) < 0)
    return -1;
  /* Ready when its socket exists; give up when it exits, or after 30 s. */
  for (int i = 0; i < 3000; i++) {
    int done = ff_proc_try(&r->lvmetad);

    if (stat(LVMETAD_SOCKET, &st) == 0 && S_ISSOCK(st.st_mode))
      return 0;
    if (done != 0) {
      char msg[512];

      ff_first_line(err, msg, sizeof msg);
      return ff_error("%s exited (status %d) before making %s: %s", bin,
                      r->lvmetad.status, LVMETAD_SOCKET, msg);
    }
    usleep(10000);
  }
  lvmetad_stop(r);
  return ff_error("%s made no %s in 30 s", bin, LVMETAD_SOCKET);
}
