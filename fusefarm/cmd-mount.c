/* fusefarm: `fusefarm mount` (the FUSE daemon) and `fusefarm profile`.
 *
 * mount loads and checks everything it can before touching the mount
 * point (spec, profile, overlay), so a bad input leaves nothing mounted.
 * It then mounts, detaches into the background unless -f, starts the
 * scheduler threads (after the fork: threads do not survive it) and
 * serves until unmounted or signalled, then saves the overlay if asked.
 *
 * Threads here: besides libfuse's workers and the scheduler's (ops.c has
 * the thread model), one watcher blocks in poll() on the daemon's mount
 * table, all signals blocked, and sends SIGTERM to the main thread when
 * the farm's mount is gone from it; it shares nothing else (its mount ID
 * is set before it starts) and is joined before the exit path runs.
 */
#include "attach.h"
#include "ff-builtin.h"
#include "ff-cli.h"
#include "ff-daemon.h"
#include "ff-passthrough.h"
#include "ff-error.h"
#include "ff-mountinfo.h"
#include "ff-profile.h"
#include "ff-file.h"
#include "ff-loop.h"
#include "ff-sched.h"
#include "ff-server.h"
#include "ff-util.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char mount_usage[] =
  "usage: fusefarm mount [SPEC] MNT [options]\n"
  "\n"
  "Serve the farm of SPEC (default: the built-in farm) over FUSE at MNT:\n"
  "one file per device, MNT/<name>, sized as the spec says, whose bytes\n"
  "are computed on demand; writes land in an in-memory overlay.  The\n"
  "control directory MNT/.fusefarm/ holds devices, manifest.json,\n"
  "stats.json, stats, info.json, profile, control and last-error\n"
  "(docs/fuse.md).  Returns once MNT is mounted; the daemon runs until\n"
  "`fusermount3 -u MNT` or SIGINT/SIGTERM/SIGHUP.\n"
  "\n"
  "  -p, --profile FILE     I/O profile: latency, contention, faults\n"
  "                         (docs/profile-format.md; default: none)\n"
  "  -f, --foreground       stay in the foreground\n"
  "      --overlay FILE     load a saved write overlay at start\n"
  "      --save-overlay FILE  save the write overlay there at exit (a\n"
  "                         path that cannot be written is refused now)\n"
  "      --overlay-max SIZE cap the overlay's written blocks at SIZE bytes\n"
  "                         (64M, 2G): a write past it fails with ENOSPC,\n"
  "                         counted in stats.json's overlay.full\n"
  "      --threads N        FUSE worker threads (default 8, 1..64)\n"
  "      --reply-threads N  threads answering delayed requests (default 4)\n"
  "      --devices N        scale the farm to N devices, keeping its\n"
  "                         shape (every group's count scaled)\n"
  "      --log FILE         where the daemon's messages go once in the\n"
  "                         background (default: discarded)\n"
  "      --trace FILE       write one line per request there: arrival,\n"
  "                         the model's done time, reply (docs/stats.md;\n"
  "                         a test and diagnostic feature)\n"
  "      --passthrough      let the kernel serve devices the profile gives\n"
  "                         nothing to model, from a memory file, at a\n"
  "                         tmpfs loop's speed (FUSE passthrough, kernel\n"
  "                         6.9+); their I/O is then not in the stats\n"
  "                         (docs/fuse.md)\n"
  "      --cpu-latency MODE  auto (default): while delayed replies wait,\n"
  "                         keep idle CPUs polling (a 0 us request on\n"
  "                         /dev/cpu_dma_latency, root only, let go 20 ms\n"
  "                         after the last) so that they wake on time;\n"
  "                         off: leave the CPUs' idle alone (docs/fuse.md)\n"
  "      --transport-share T  answer every delayed request T sooner, the\n"
  "                         time the loop and FUSE take to bring it here\n"
  "                         and its reply back, so that readers see the\n"
  "                         profile's latency: auto (default): 0 until\n"
  "                         `fusefarm attach` measures it; off: 0; or a\n"
  "                         duration (36us; docs/fuse.md)\n"
  "  -o OPTS                extra FUSE mount options\n"
  "  -h, --help             this text\n";

/* Descriptors the daemon needs at most at once: stdio, /dev/fuse, the
 * log, fuse_daemonize's pipe, /dev/cpu_dma_latency, an overlay or profile
 * file being read or written, with room to spare.  None is per device or per
 * thread (no clone_fd, no splice), so a farm of any size fits. */
#define MOUNT_FDS 32

/* Raise the soft fd limit to the hard one; refuse when even that is below
 * MOUNT_FDS, before anything is mounted (fuse_daemonize, for one, cannot
 * make its pipe and would leave the daemon in the foreground). */
static int
check_nofile(void)
{
  return ff_nofile_raise(MOUNT_FDS, "the daemon",
                         "whatever the device count: ulimit -n 1024", NULL);
}

/* --cpu-latency auto: the scheduler holds /dev/cpu_dma_latency at 0 us
 * while delayed replies wait (ff-sched.h).  Where it cannot be opened (not
 * root, no such device) the daemon runs without; info.json's cpu_latency
 * says which, and why. */
#define HOLD_LINGER_NS 20000000u

static void
hold_cpus(struct ff_daemon *d)
{
  int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

  d->cpu_latency = 1;
  if (fd < 0) {
    d->cpu_latency_errno = errno;
    return;
  }
  ff_sched_hold_cpus(d->sched, fd, HOLD_LINGER_NS);
}

/* --save-overlay F as an absolute path (the daemon changes to / when it
 * goes to the background).  The server checks it can be written
 * (ff_server_new), before anything is mounted.  NULL with a message on
 * error. */
static char *
save_path(const char *path)
{
  char cwd[PATH_MAX], *abs = NULL;

  if (path[0] != '/' && !getcwd(cwd, sizeof cwd)) {
    ff_error("--save-overlay %s: getcwd: %m", path);
    return NULL;
  }
  if (path[0] == '/')
    abs = strdup(path);
  else if (asprintf(&abs, "%s/%s", cwd, path) < 0)
    abs = NULL;
  if (!abs) {
    ff_error("--save-overlay %s: out of memory", path);
    return NULL;
  }
  return abs;
}

/* Before libfuse lets go of the mount (fuse_session_unmount), unmount it
 * for real.  libfuse unmounts lazily as root: with loop devices still
 * holding farm files, the mount would vanish from every namespace yet
 * live on behind the loops, whose backing files then read "/pv0001" and
 * cannot even be stat'ed once the daemon is gone, so `fusefarm detach`
 * could not tell them apart from anyone else's.  When the mount is busy,
 * leave it mounted and only abort the connection (as kill -9 would): every
 * request through it fails at once, the mount point answers ENOTCONN, and
 * `fusefarm detach MNT` detaches the loops and unmounts it. */
static void
release_mount(struct fuse_session *se, const char *mnt)
{
  int p[2], err;

  if (umount2(mnt, UMOUNT_NOFOLLOW) == 0)
    return;
  err = errno;
  /* EINVAL: unmounted here already (fusermount3 -u).  If a copy of the
   * mount lives on in another mount namespace (see the watcher below),
   * the connection is still up and libfuse would try, and fail loudly,
   * to unmount it again: the same abort ends it for the copies. */
  if (err != EBUSY && err != EINVAL)
    return; /* not ours to do */
  if (err == EBUSY)
    fprintf(stderr,
            "fusefarm: %s is busy (loop devices or open files hold it): left "
            "mounted without a daemon, so every access fails at once "
            "(Transport endpoint is not connected); `fusefarm detach %s` "
            "detaches the loops and unmounts it\n",
            mnt, mnt);
  /* Closing /dev/fuse aborts the connection.  A pipe whose reader is gone
   * takes the fd's place: libfuse polls it, sees POLLERR ("connection
   * already severed") and closes it without its lazy unmount. */
  if (pipe2(p, O_CLOEXEC) < 0) {
    fprintf(stderr, "fusefarm: pipe: %m (unmounting lazily instead)\n");
    return;
  }
  close(p[0]);
  if (dup2(p[1], fuse_session_fd(se)) < 0)
    fprintf(stderr, "fusefarm: dup2: %m (unmounting lazily instead)\n");
  close(p[1]);
}

/* ---- unmounted here means done ------------------------------------------
 *
 * The kernel ends a FUSE connection (and so the session loop) when the
 * last copy of the mount goes.  A mount namespace made while the farm was
 * mounted (any `unshare -m` on the machine: an lvm call fenced by the
 * tests, a chroot builder) holds such a copy, so after `fusermount3 -u`
 * the daemon would wait for processes it does not know: seen as a daemon
 * exiting tens of seconds, or minutes, after its unmount.  The watcher
 * thread waits for mount-table changes in the daemon's own namespace
 * (POLLPRI on /proc/self/mountinfo: an event per change, no timer) and,
 * once the farm's mount is gone from it, ends the session as SIGTERM does
 * (the same exit path: pending replies answered, overlay saved). */
struct mount_watch {
  char id[32];     /* the farm mount's mount ID, "" if not found */
  int fd, stop[2]; /* /proc/self/mountinfo; a pipe that ends the watch */
  pthread_t thread, main;
  int running;
};

/* Whether mount w->id (fstype fuse.fusefarm) is in the table (1, or 0);
 * with mnt non-NULL, find it first: the newest fuse.fusefarm mount on
 * mnt.  -1: the table could not be read whole. */
static int
watch_scan(struct mount_watch *w, const char *mnt)
{
  static char buf[1 << 20];
  size_t used = 0;
  ssize_t n;
  int found = 0;

  if (lseek(w->fd, 0, SEEK_SET) < 0)
    return -1;
  while (used < sizeof buf - 1 &&
         (n = read(w->fd, buf + used, sizeof buf - 1 - used)) > 0)
    used += (size_t)n;
  if (used == sizeof buf - 1)
    return -1; /* a table this big is not read in part: no decision */
  buf[used] = '\0';
  for (char *line = buf, *nl; line && *line; line = nl) {
    struct ff_mountinfo m;

    if ((nl = strchr(line, '\n')))
      *nl++ = '\0';
    if (ff_mountinfo_parse(line, &m) < 0 || strcmp(m.fstype, "fuse.fusefarm"))
      continue;
    if (mnt) {
      if (!strcmp(m.point, mnt))
        snprintf(w->id, sizeof w->id, "%s", m.id);
    } else if (!strcmp(m.id, w->id)) {
      found = 1;
    }
  }
  return mnt ? (w->id[0] ? 1 : 0) : found;
}

static void *
watch_main(void *arg)
{
  struct mount_watch *w = arg;
  sigset_t all;

  /* Signals for the process are the main thread's business. */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  for (;;) {
    struct pollfd p[2] = {{.fd = w->fd, .events = POLLPRI},
                          {.fd = w->stop[0], .events = POLLIN}};

    if (poll(p, 2, -1) < 0 && errno != EINTR)
      return NULL;
    if (p[1].revents)
      return NULL;
    if ((p[0].revents & (POLLPRI | POLLERR)) && watch_scan(w, NULL) == 0) {
      pthread_kill(w->main, SIGTERM);
      return NULL;
    }
  }
}

/* Start watching mnt (best effort: without it the daemon still ends
 * when the last copy of the mount goes). */
static void
watch_start(struct mount_watch *w, const char *mnt)
{
  w->running = 0;
  w->fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (w->fd < 0)
    return;
  if (watch_scan(w, mnt) != 1 || pipe2(w->stop, O_CLOEXEC) < 0) {
    close(w->fd);
    return;
  }
  w->main = pthread_self();
  if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
    close(w->stop[0]);
    close(w->stop[1]);
    close(w->fd);
    return;
  }
  w->running = 1;
}

/* Stop the watcher before anything else of the exit path (release_mount
 * changes the mount table; the signal handlers go later). */
static void
watch_stop(struct mount_watch *w)
{
  if (!w->running)
    return;
  if (write(w->stop[1], "x", 1) < 0)
    pthread_cancel(w->thread);
  pthread_join(w->thread, NULL);
  close(w->stop[0]);
  close(w->stop[1]);
  close(w->fd);
  w->running = 0;
}

static int
check_mountpoint(const char *mnt)
{
  struct stat st, parent;
  char up[PATH_MAX];

  if (stat(mnt, &st) < 0)
    return ff_error("mount point %s: %m", mnt);
  if (!S_ISDIR(st.st_mode))
    return ff_error("mount point %s is not a directory", mnt);
  snprintf(up, sizeof up, "%s/..", mnt);
  if (stat(up, &parent) == 0 && parent.st_dev != st.st_dev)
    return ff_error("%s is already a mount point (unmount it first)", mnt);
  return 0;
}

/* Two `fusefarm mount` of one MNT at once: each takes this lock on the
 * directory before it checks MNT is no mount point, and holds it until
 * its own mount is there, so the second one sees the first's mount and
 * is refused.  The fd holding the lock, or -1 when MNT is no directory
 * it can open (check_mountpoint says why). */
static int
lock_mountpoint(const char *mnt)
{
  int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  while (fd >= 0 && flock(fd, LOCK_EX) < 0)
    if (errno != EINTR) {
      close(fd);
      fd = -1;
    }
  return fd;
}

int
ff_cmd_mount(int argc, char **argv)
{
  static const struct option opts[] = {
    {"profile", required_argument, NULL, 'p'},
    {"foreground", no_argument, NULL, 'f'},
    {"overlay", required_argument, NULL, 'O'},
    {"save-overlay", required_argument, NULL, 'S'},
    {"threads", required_argument, NULL, 'T'},
    {"reply-threads", required_argument, NULL, 'R'},
    {"log", required_argument, NULL, 'L'},
    {"devices", required_argument, NULL, 'D'},
    {"trace", required_argument, NULL, 'A'},
    {"overlay-max", required_argument, NULL, 'M'},
    {"passthrough", no_argument, NULL, 'P'},
    {"cpu-latency", required_argument, NULL, 'C'},
    {"transport-share", required_argument, NULL, 'X'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *profile = NULL, *overlay = NULL, *logfile = NULL;
  const char *fuseopts = NULL, *spec = NULL, *mnt, *save_arg = NULL;
  const char *trace = NULL;
  unsigned long long threads = 8, reply_threads = 4, devices = 0;
  int foreground = 0, c, rc = 1, mntlock = -1, passthrough = 0;
  int cpu_latency = 1, share_mode = FF_SHARE_AUTO;
  uint64_t share_ns = 0;
  struct ff_daemon d = {0};
  struct ff_server_options so = {.stats = 1};
  enum ff_server_fault fault;
  struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
  struct fuse_loop_config *lc = NULL;
  char *save_abs = NULL;
  char realmnt[PATH_MAX];
  struct mount_watch watch = {.running = 0};

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":p:fo:h", opts, NULL)) != -1) {
    switch (c) {
    case 'p':
      profile = optarg;
      break;
    case 'f':
      foreground = 1;
      break;
    case 'O':
      overlay = optarg;
      break;
    case 'S':
      save_arg = optarg;
      break;
    case 'T':
      if (ff_cli_number("mount", "--threads", optarg, 1, 64, &threads))
        return 2;
      break;
    case 'R':
      if (ff_cli_number("mount", "--reply-threads", optarg, 1, 64,
                        &reply_threads))
        return 2;
      break;
    case 'L':
      logfile = optarg;
      break;
    case 'D':
      if (ff_cli_number("mount", "--devices", optarg, 1, 1000000, &devices))
        return 2;
      break;
    case 'A':
      trace = optarg;
      break;
    case 'M':
      if (ff_parse_size(optarg, &so.overlay_max) < 0 || !so.overlay_max) {
        fprintf(stderr,
                "fusefarm mount: --overlay-max '%s': expected a size such "
                "as 64M or 2G (greater than 0)\n",
                optarg);
        return 2;
      }
      break;
    case 'o':
      fuseopts = optarg;
      break;
    case 'P':
      passthrough = 1;
      break;
    case 'C':
      if (strcmp(optarg, "auto") && strcmp(optarg, "off"))
        return ff_cli_usage(
          "mount", "--cpu-latency '%s': expected auto or off", optarg);
      cpu_latency = !strcmp(optarg, "auto");
      break;
    case 'X':
      if (!strcmp(optarg, "auto") || !strcmp(optarg, "off")) {
        share_mode = !strcmp(optarg, "auto") ? FF_SHARE_AUTO : FF_SHARE_OFF;
        share_ns = 0;
      } else if (ff_parse_duration(optarg, &share_ns) == 0 &&
                 share_ns <= SHARE_MAX_NS) {
        share_mode = FF_SHARE_FIXED;
      } else {
        return ff_cli_usage("mount",
                            "--transport-share '%s': expected auto, off or "
                            "a duration of at most 1s (36us)",
                            optarg);
      }
      break;
    case 'h':
      fputs(mount_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("mount", c, argv, opts);
    }
  }
  if (argc - optind == 2) {
    spec = argv[optind];
    mnt = argv[optind + 1];
  } else if (argc - optind == 1) {
    mnt = argv[optind];
  } else if (argc == optind) {
    return ff_cli_usage("mount", "missing MNT (expected [SPEC] MNT)");
  } else {
    return ff_cli_usage("mount",
                        "too many arguments (from '%s'; expected [SPEC] MNT)",
                        argv[optind + 2]);
  }

  /* Everything that can be wrong with the input is found before mount:
   * the arguments and input files (2), then the machine (1). */
  mntlock = lock_mountpoint(mnt);
  if (check_mountpoint(mnt) < 0 || !realpath(mnt, realmnt)) {
    fprintf(stderr, "fusefarm mount: %s\n", ff_errmsg());
    rc = 2;
    goto out;
  }
  /* The daemon that served here before lost its writes: say it again. */
  fa_tell_save_failed(realmnt, "mount", 1);
  if (check_nofile() < 0) {
    fprintf(stderr, "fusefarm mount: %s\n", ff_errmsg());
    goto out;
  }
  if (save_arg && !(save_abs = save_path(save_arg))) {
    fprintf(stderr, "fusefarm mount: %s\n", ff_errmsg());
    goto out;
  }
  so.spec = spec;
  so.devices = devices;
  so.profile = profile;
  so.overlay = overlay;
  so.save_overlay = save_abs;
  so.trace = trace; /* opened now: the daemon's chdir("/") does not matter */
  d.srv = ff_server_new(&so, &fault);
  if (!d.srv) {
    if (fault == FF_SERVER_BAD_SAVE_OVERLAY)
      ff_error_prefix("--save-overlay %s: ", save_arg);
    else if (fault == FF_SERVER_BAD_TRACE)
      ff_error_prefix("--trace: ");
    fprintf(stderr, "fusefarm mount: %s\n", ff_errmsg());
    /* A bad input (spec, profile, overlay to load) is 2; an output file
     * that cannot be written (--save-overlay, --trace) or no memory 1. */
    rc = fault == FF_SERVER_BAD_SAVE_OVERLAY || fault == FF_SERVER_BAD_TRACE ||
             fault == FF_SERVER_NO_MEMORY
           ? 1
           : 2;
    goto out;
  }
  if (access("/dev/fuse", R_OK | W_OK) < 0) {
    fprintf(stderr,
            "fusefarm mount: /dev/fuse: %m (load the fuse module, install "
            "fuse3)\n");
    goto out;
  }
  d.mounted_ns = ff_now_ns();
  d.mounted_at = (int64_t)time(NULL);
  if (ff_server_start(d.srv, d.mounted_ns) < 0) {
    fprintf(stderr, "fusefarm mount: %s\n", ff_errmsg());
    goto out;
  }
  d.spec = !spec                 ? strdup("<built-in>")
           : ff_is_builtin(spec) ? strdup(spec)
                                 : realpath(spec, NULL);
  d.mountpoint = realmnt;
  d.fuse_threads = (unsigned)threads;
  d.share_mode = share_mode;
  ff_server_set_transport_share(d.srv, share_ns);
  if (share_mode == FF_SHARE_FIXED)
    snprintf(d.share_by, sizeof d.share_by, "--transport-share");
  if (profile)
    d.profile =
      ff_is_builtin(profile) ? strdup(profile) : realpath(profile, NULL);
  pthread_mutex_init(&d.ctl_lock, NULL);
  pthread_mutex_init(&d.manifest_lock, NULL);

  if (fuse_opt_add_arg(&args, "fusefarm") < 0 ||
      fuse_opt_add_arg(&args, "-o") < 0 ||
      fuse_opt_add_arg(&args, "fsname=fusefarm,subtype=fusefarm,"
                              "default_permissions") < 0 ||
      (fuseopts && (fuse_opt_add_arg(&args, "-o") < 0 ||
                    fuse_opt_add_arg(&args, fuseopts) < 0))) {
    fprintf(stderr, "fusefarm mount: out of memory\n");
    goto out;
  }
  d.se = fuse_session_new(&args, &ff_daemon_ops, sizeof ff_daemon_ops, &d);
  if (!d.se) {
    fprintf(stderr, "fusefarm mount: cannot start a FUSE session (bad -o "
                    "options?)\n");
    rc = 2;
    goto out;
  }
  if (fuse_set_signal_handlers(d.se) < 0) {
    fprintf(stderr, "fusefarm mount: cannot install signal handlers\n");
    goto out_session;
  }
  if (fuse_session_mount(d.se, realmnt) < 0) {
    fprintf(stderr, "fusefarm mount: cannot mount %s (see above)\n", realmnt);
    goto out_signals;
  }
  /* (INIT is read by the loop, after this: the hooks see it) */
  if (passthrough && (!(d.pt = ff_pt_new(ff_server_farm(d.srv))) ||
                      ff_pt_install(d.pt, d.se) < 0)) {
    fprintf(stderr, "fusefarm mount: %s\n", ff_errmsg());
    goto out_unmount;
  }
  close(mntlock); /* a mount at MNT now refuses the next one */
  mntlock = -1;
  if (!foreground && logfile) {
    int fd = ff_open_write(logfile, O_APPEND);

    if (fd < 0) {
      fprintf(stderr, "fusefarm mount: --log %s\n", ff_errmsg());
      goto out_unmount;
    }
    fprintf(stderr, "fusefarm: serving %u devices at %s\n",
            ff_server_ndevs(d.srv), realmnt);
    if (fuse_daemonize(0) < 0) { /* it said why */
      close(fd);
      goto out_unmount;
    }
    dup2(fd, STDERR_FILENO);
    close(fd);
  } else {
    if (foreground)
      fprintf(stderr, "fusefarm: serving %u devices at %s (pid %d)\n",
              ff_server_ndevs(d.srv), realmnt, (int)getpid());
    if (fuse_daemonize(foreground) < 0)
      goto out_unmount;
  }

  d.sched = ff_sched_new((unsigned)reply_threads);
  lc = fuse_loop_cfg_create();
  if (!d.sched || !lc) {
    fprintf(stderr, "fusefarm: %s\n", d.sched ? "out of memory" : ff_errmsg());
    goto out_unmount;
  }
  if (cpu_latency)
    hold_cpus(&d);
  fuse_loop_cfg_set_max_threads(lc, (unsigned)threads);
  fuse_loop_cfg_set_idle_threads(lc, (unsigned)threads);
  watch_start(&watch, realmnt);
  /* 0, -errno, or the signal that ended it (a clean end, too). */
  rc = fuse_session_loop_mt(d.se, lc) < 0 ? 1 : 0;
  watch_stop(&watch);

out_unmount:
  /* Answer whatever is still waiting while the kernel may still take the
   * replies, then let go of the mount (no write can arrive after that),
   * then save. */
  ff_sched_stop(d.sched);
  d.sched = NULL;
  release_mount(d.se, realmnt);
  fuse_session_unmount(d.se);
  /* On failure say plainly that the writes are lost, where it cannot be
   * missed: stderr (the --log, or /dev/null in the background), the
   * system log and SAVE.failed (ff_server_save_at_exit), and the record
   * `fusefarm detach MNT` and `fusefarm stats MNT` report. */
  {
    char *report = NULL;

    /* the passthrough devices' writes are in their backing files */
    if (ff_pt_sync(d.pt, ff_server_farm(d.srv)) < 0) {
      fprintf(stderr, "fusefarm: %s\n", ff_errmsg());
      rc = 1;
    }
    if (ff_server_save_at_exit(d.srv, &report) < 0) {
      fprintf(stderr, "fusefarm: %s with this daemon\n", ff_errmsg());
      if (report)
        fa_note_save_failed(realmnt, report);
      rc = 1;
    }
    free(report);
  }
  if (ff_server_trace_check(d.srv) < 0) {
    fprintf(stderr, "fusefarm: --trace: %s\n", ff_errmsg());
    rc = 1;
  }
out_signals:
  fuse_remove_signal_handlers(d.se);
out_session:
  fuse_session_destroy(d.se);
out:
  if (mntlock >= 0)
    close(mntlock);
  if (lc)
    fuse_loop_cfg_destroy(lc);
  fuse_opt_free_args(&args);
  ff_pt_free(d.pt);
  ff_server_free(d.srv);
  free(d.spec);
  free(d.profile);
  free(d.manifest);
  free(save_abs);
  return rc;
}
