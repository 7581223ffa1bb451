/* fusefarm: `fusefarm cleanup`, and the teardown of a farm whose run is
 * gone (farm-registry.h), which the run's watchdog (run.c) calls too.
 *
 * Thread model: single-threaded.  Processes are signalled through
 * pidfds, each opened and then checked again to be the process meant, so
 * a pid used again in between is never signalled.
 */
#include "farm-registry.h"

#include "attach.h"
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-mountinfo.h"
#include "ff-privdev.h"
#include "ff-spawn.h"
#include "ff-workload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <mntent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char cleanup_usage[] =
  "usage: fusefarm cleanup [--prefix DIR] [--dry-run] [--quiet]\n"
  "\n"
  "Tear down every farm that a `fusefarm run` made and that outlived its\n"
  "run (the run was killed by SIGKILL, or its watchdog too), from the\n"
  "registry in " REGISTRY_DIR ": stop its daemon and helpers (the\n"
  "processes of the run's private mount namespace), detach exactly the\n"
  "loops its attach recorded, remove its scratch dir and its entry.  Each\n"
  "entry is checked to be still what it recorded before anything is done;\n"
  "a farm whose run still runs is listed and left alone, one whose\n"
  "watchdog is at work is waited for.  Nothing the registry does not name\n"
  "is touched: farms mounted by hand are listed and left alone.\n"
  "\n"
  "  -p, --prefix DIR  only farms whose mount point and scratch dir lie\n"
  "                    under DIR (a test's scratch: other farms on the\n"
  "                    machine are not looked at)\n"
  "  -n, --dry-run     list what would be stopped, detached and removed\n"
  "  -q, --quiet       say only what failed\n"
  "  -h, --help        this text\n"
  "\n"
  "Exit status: 0 nothing left (or nothing to do), 1 something stays,\n"
  "2 bad usage.\n";

/* How long a stopped process gets for its SIGTERM path (the daemon
 * answers what is pending and unmounts) before SIGKILL; a loaded machine
 * may take many seconds. */
#define TERM_WAIT_MS 60000
/* How long `cleanup` waits for a run's watchdog that is at work. */
#define WATCHDOG_WAIT_MS 300000

static int
pidfd_open_(pid_t pid)
{
  return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int
pidfd_signal(int fd, int sig)
{
  return (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

/* Wait up to ms for the pidfd's process to exit: 1 exited, 0 not. */
static int
pidfd_wait(int fd, int ms)
{
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int n;

  do
    n = poll(&p, 1, ms);
  while (n < 0 && errno == EINTR);
  return n > 0;
}

static int
under(const char *path, const char *dir)
{
  size_t n = strlen(dir);

  while (n > 1 && dir[n - 1] == '/')
    n--;
  return !strncmp(path, dir, n) && path[n] == '/';
}

/* The entry describes a run's farm: SCRATCH/fusefarm-run.*, its mnt and
 * state inside. */
static int
entry_sane(const struct ff_reg *e)
{
  const char *base = strrchr(e->scratch, '/');
  char want[PATH_MAX + 16];

  if (e->scratch[0] != '/' || !base || strncmp(base + 1, "fusefarm-run.", 13))
    return 0;
  snprintf(want, sizeof want, "%s/mnt", e->scratch);
  if (strcmp(want, e->mnt))
    return 0;
  snprintf(want, sizeof want, "%s/state", e->scratch);
  return !strcmp(want, e->state);
}

/* Is the recorded daemon still it: start time, program, `mount ... MNT`,
 * namespace? */
static int
daemon_is_ours(const struct ff_reg *e)
{
  char path[64], exe[PATH_MAX + 16], args[8192];
  size_t dl = strlen(e->exe);
  ssize_t n;
  int named = 0;

  if (!ff_regproc_alive(&e->daemon))
    return 0;
  snprintf(path, sizeof path, "/proc/%d/exe", (int)e->daemon.pid);
  n = readlink(path, exe, sizeof exe - 1);
  if (n < 0)
    return 0;
  exe[n] = '\0';
  /* a rebuilt program shows as "PATH (deleted)" */
  if (strncmp(exe, e->exe, dl) || (exe[dl] && strcmp(exe + dl, " (deleted)")))
    return 0;
  n = ff_proc_read(e->daemon.pid, "cmdline", args, sizeof args);
  if (n <= 0)
    return 0;
  {
    const char *a1 = args + strlen(args) + 1;

    if (a1 >= args + n || strcmp(a1, "mount"))
      return 0;
    for (const char *a = a1; a < args + n; a += strlen(a) + 1)
      named |= !strcmp(a, e->mnt);
  }
  return named && (!e->mntns || ff_proc_mntns(e->daemon.pid) == e->mntns);
}

/* Stop every process in mount namespace ns but this one and `spare`:
 * SIGTERM, then SIGKILL after TERM_WAIT_MS.  The caller holds ns (lives
 * in it, or has it open), so its inode names no other namespace.
 * Returns how many are still there. */
static size_t
stop_namespace(unsigned long long ns, pid_t spare, int dry, FILE *out)
{
  int fds[256];
  size_t n = 0, left = 0;
  DIR *d = opendir("/proc");
  struct dirent *de;

  if (!d)
    return 0;
  while ((de = readdir(d)) && n < sizeof fds / sizeof *fds) {
    char comm[64];
    pid_t pid = (pid_t)atoi(de->d_name);
    int fd;

    if (pid <= 0 || pid == getpid() || pid == spare ||
        ff_proc_mntns(pid) != ns)
      continue;
    if (ff_proc_read(pid, "comm", comm, sizeof comm) < 0)
      comm[0] = '\0';
    comm[strcspn(comm, "\n")] = '\0';
    if (dry) {
      fprintf(out, "  would stop process %d (%s) of the run's namespace\n",
              (int)pid, comm);
      continue;
    }
    fd = pidfd_open_(pid);
    /* opened: the pid is that process now; check it still is one of ns */
    if (fd < 0 || ff_proc_mntns(pid) != ns) {
      if (fd >= 0)
        close(fd);
      continue;
    }
    if (pidfd_signal(fd, SIGTERM) == 0) {
      fprintf(out, "  stopped process %d (%s) of the run's namespace\n",
              (int)pid, comm);
      fds[n++] = fd;
    } else {
      close(fd);
    }
  }
  closedir(d);
  for (size_t i = 0; i < n; i++) {
    if (!pidfd_wait(fds[i], i ? 0 : TERM_WAIT_MS) &&
        !pidfd_wait(fds[i], TERM_WAIT_MS)) {
      pidfd_signal(fds[i], SIGKILL);
      left += !pidfd_wait(fds[i], 10000);
    }
    close(fds[i]);
  }
  return left;
}

/* Stop the verified daemon by its SIGTERM path (pending replies
 * answered, the mount released), SIGKILL after TERM_WAIT_MS. */
static int
stop_daemon(const struct ff_reg *e, FILE *out)
{
  int fd = pidfd_open_(e->daemon.pid);

  if (fd < 0)
    return 0;
  if (!daemon_is_ours(e)) { /* exited and its pid used again meanwhile */
    close(fd);
    return 0;
  }
  pidfd_signal(fd, SIGTERM);
  if (!pidfd_wait(fd, TERM_WAIT_MS)) {
    fprintf(stderr,
            "fusefarm cleanup: daemon %d still there %d s after SIGTERM: "
            "killed\n",
            (int)e->daemon.pid, TERM_WAIT_MS / 1000);
    pidfd_signal(fd, SIGKILL);
    pidfd_wait(fd, 10000);
  }
  close(fd);
  fprintf(out, "  stopped daemon %d\n", (int)e->daemon.pid);
  return 0;
}

/* Detach the loops the farm's attach recorded, by `fusefarm detach`,
 * once every record is a file of MNT. */
static int
detach_loops(const struct ff_reg *e, int dry, FILE *out)
{
  struct records rs = {NULL, 0, 0};
  struct stat st;
  const char *argv[] = {e->exe,   "detach",  e->mnt, "--state",
                        e->state, "--quiet", NULL};
  char self[PATH_MAX];
  ssize_t n;
  int rc;

  if (lstat(e->state, &st) < 0 && errno == ENOENT)
    return 0;
  if (fa_read_records(e->state, &rs) < 0)
    return -1;
  for (size_t i = 0; i < rs.n; i++)
    if (!under(rs.v[i].backing, e->mnt)) {
      ff_error("%s/loops records %s backed by %s, outside %s: not touched",
               e->state, rs.v[i].dev, rs.v[i].backing, e->mnt);
      fa_records_free(&rs);
      return -1;
    }
  fprintf(out, "  %s %zu loop device%s (%s/loops)\n",
          dry ? "would detach" : "detaching", rs.n, rs.n == 1 ? "" : "s",
          e->state);
  fa_records_free(&rs);
  if (dry)
    return 0;
  /* This program, not the recorded one: it may be gone (rebuilt). */
  n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    argv[0] = self;
  }
  {
    const struct ff_spawn o = {.argv = argv, .inherit_stdio = 1};

    rc = ff_spawn_run(&o);
  }
  if (rc != 0)
    return ff_error("fusefarm detach %s --state %s: exit %d", e->mnt, e->state,
                    rc);
  return 0;
}

/* Remove the scratch dir: a directory of root's, MNT not mounted in this
 * namespace (a dead FUSE mount answers ENOTCONN: left). */
static int
remove_scratch(const struct ff_reg *e, int dry, FILE *out)
{
  struct stat sc, mn;

  if (lstat(e->scratch, &sc) < 0)
    return errno == ENOENT ? 0 : ff_error("%s: %m", e->scratch);
  if (!S_ISDIR(sc.st_mode) || sc.st_uid != 0)
    return ff_error("%s: not a directory of root's: not removed", e->scratch);
  if (lstat(e->mnt, &mn) < 0 ? errno != ENOENT : mn.st_dev != sc.st_dev)
    return ff_error("%s is still mounted here: %s not removed", e->mnt,
                    e->scratch);
  fprintf(out, "  %s %s\n", dry ? "would remove" : "removed", e->scratch);
  if (dry)
    return 0;
  ff_empty_dir(e->scratch);
  if (rmdir(e->scratch) < 0)
    return ff_error("rmdir %s: %m", e->scratch);
  return 0;
}

/* In the watchdog: the private /dev (ff-privdev.h: a tmpfs named
 * "fusefarm-dev" on /dev) covers the host's loops, which detach names;
 * uncover it when it is up. */
static int
is_privdev(const struct ff_mountinfo *m, void *arg)
{
  (void)arg;
  return !strcmp(m->point, "/dev") && !strcmp(m->fstype, "tmpfs") &&
         !strcmp(m->source, "fusefarm-dev");
}

static void
uncover_dev(void)
{
  int up = ff_mountinfo_each("/proc/self/mountinfo", is_privdev, NULL) == 1;

  if (up && ff_privdev_umount() < 0)
    fprintf(stderr, "fusefarm run: %s\n", ff_errmsg());
}

int
ff_farm_teardown(int dirfd, const struct ff_reg *e, int inside, int dry,
                 FILE *out)
{
  unsigned long long ns = 0, own = ff_proc_mntns(getpid()),
                     init = ff_proc_mntns(1);
  int daemon = 0, nsfd = -1, bad = 0;

  if (!entry_sane(e))
    return ff_error("%s/%s does not describe a run's farm: left alone",
                    REGISTRY_DIR, e->name);
  daemon = daemon_is_ours(e);
  if (inside) {
    ns = own;
  } else if (daemon) {
    char p[64];

    /* Held open, the namespace's inode names it alone until closed. */
    snprintf(p, sizeof p, "/proc/%d/ns/mnt", (int)e->daemon.pid);
    nsfd = open(p, O_RDONLY | O_CLOEXEC);
    if (nsfd >= 0 && daemon_is_ours(e))
      ns = ff_proc_mntns(e->daemon.pid);
  }
  if (ns && (ns == init || (!inside && ns == own)))
    ns = 0; /* never the machine's namespace, never this one from outside */
  if (ns && stop_namespace(ns, daemon ? e->daemon.pid : 0, dry, out))
    bad = ff_error("processes of the run's namespace survived SIGKILL");
  if (inside && !dry)
    uncover_dev();
  if (detach_loops(e, dry, out) < 0) {
    fprintf(stderr, "fusefarm cleanup: %s\n", ff_errmsg());
    bad = -1;
  }
  if (inside && !dry && umount2(e->mnt, UMOUNT_NOFOLLOW) < 0 &&
      errno != EINVAL && errno != ENOENT)
    umount2(e->mnt, UMOUNT_NOFOLLOW | MNT_DETACH);
  if (daemon && dry)
    fprintf(out, "  would stop daemon %d\n", (int)e->daemon.pid);
  else if (daemon)
    stop_daemon(e, out);
  if (nsfd >= 0)
    close(nsfd);
  if (!bad && remove_scratch(e, dry, out) < 0) {
    fprintf(stderr, "fusefarm cleanup: %s\n", ff_errmsg());
    bad = -1;
  }
  if (bad)
    return ff_error("%s: something stays; its entry %s/%s is kept", e->scratch,
                    REGISTRY_DIR, e->name);
  if (!dry && dirfd >= 0 && ff_reg_remove(dirfd, e->name) < 0)
    return -1;
  return 0;
}

/* One entry: skip it (live, out of scope), wait for its watchdog, or
 * tear it down.  0, or -1 when something stays. */
static int
cleanup_one(int dirfd, const char *name, const char *prefix, int dry,
            FILE *out)
{
  struct ff_reg e;

  if (ff_reg_read(dirfd, name, &e) < 0)
    return errno == ENOENT ? 0 : -1;
  if (prefix && !(under(e.mnt, prefix) && under(e.scratch, prefix)))
    return 0;
  if (ff_regproc_alive(&e.creator)) {
    fprintf(out, "farm %s: its run %d still runs: left alone\n", e.mnt,
            (int)e.creator.pid);
    return 0;
  }
  if (ff_regproc_alive(&e.watchdog)) {
    int fd = pidfd_open_(e.watchdog.pid);

    fprintf(out, "farm %s: its run is gone; waiting for its watchdog %d\n",
            e.mnt, (int)e.watchdog.pid);
    if (fd >= 0 && ff_regproc_alive(&e.watchdog) &&
        !pidfd_wait(fd, WATCHDOG_WAIT_MS)) {
      close(fd);
      return ff_error("farm %s: the watchdog %d still works after %d s: "
                      "left to it",
                      e.mnt, (int)e.watchdog.pid, WATCHDOG_WAIT_MS / 1000);
    }
    if (fd >= 0)
      close(fd);
    if (ff_reg_read(dirfd, name, &e) < 0) {
      if (errno != ENOENT)
        return -1;
      fprintf(out, "  removed by the run's watchdog\n");
      return 0;
    }
  }
  fprintf(out, "farm %s (run %d, gone):\n", e.mnt, (int)e.creator.pid);
  return ff_farm_teardown(dirfd, &e, 0, dry, out);
}

/* Farms mounted by hand (`fusefarm mount`, no run): listed, never
 * touched; the user tears them down with detach and fusermount3. */
static void
list_by_hand(const char *prefix, FILE *out)
{
  FILE *m = setmntent("/proc/self/mounts", "re");
  struct mntent *e;

  if (!m)
    return;
  while ((e = getmntent(m)))
    if (!strcmp(e->mnt_type, "fuse.fusefarm") &&
        (!prefix || under(e->mnt_dir, prefix)))
      fprintf(out,
              "left alone: %s, a farm mounted by hand (not by a run): "
              "`fusefarm detach %s && fusermount3 -u %s` removes it\n",
              e->mnt_dir, e->mnt_dir, e->mnt_dir);
  endmntent(m);
}

int
ff_cmd_cleanup(int argc, char **argv)
{
  static const struct option opts[] = {
    {"prefix", required_argument, NULL, 'p'},
    {"dry-run", no_argument, NULL, 'n'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  char prefix[PATH_MAX], **names = NULL;
  const char *prefix_arg = NULL;
  size_t nnames = 0;
  int dry = 0, quiet = 0, c, fd, rc = 0;
  FILE *out = stdout;
  DIR *d;
  struct dirent *de;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":p:nqh", opts, NULL)) != -1) {
    switch (c) {
    case 'p':
      prefix_arg = optarg;
      break;
    case 'n':
      dry = 1;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'h':
      fputs(cleanup_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("cleanup", c, argv, opts);
    }
  }
  if (optind < argc)
    return ff_cli_usage("cleanup", "too many arguments (from '%s')",
                        argv[optind]);
  if (prefix_arg && !realpath(prefix_arg, prefix)) {
    fprintf(stderr, "fusefarm cleanup: --prefix %s: %m\n", prefix_arg);
    return 2;
  }
  if (quiet && !(out = fopen("/dev/null", "we"))) {
    fprintf(stderr, "fusefarm cleanup: /dev/null: %m\n");
    return 1;
  }
  list_by_hand(prefix_arg ? prefix : NULL, out);
  fd = ff_reg_open(0);
  if (fd < 0) {
    if (errno == ENOENT) {
      fprintf(out, "no farms registered (%s does not exist)\n", REGISTRY_DIR);
      goto out;
    }
    fprintf(stderr, "fusefarm cleanup: %s\n", ff_errmsg());
    rc = 1;
    goto out;
  }
  /* The names first: teardown removes entries while we go. */
  d = fdopendir(fd);
  if (!d) {
    close(fd);
    fprintf(stderr, "fusefarm cleanup: %s: %m\n", REGISTRY_DIR);
    rc = 1;
    goto out;
  }
  while ((de = readdir(d))) {
    char **nn;

    if (de->d_name[0] == '.')
      continue;
    nn = realloc(names, (nnames + 1) * sizeof *names);
    if (!nn || !(nn[nnames] = strdup(de->d_name))) {
      names = nn ? nn : names;
      fprintf(stderr, "fusefarm cleanup: out of memory\n");
      rc = 1;
      break;
    }
    names = nn;
    nnames++;
  }
  for (size_t i = 0; i < nnames; i++)
    if (cleanup_one(dirfd(d), names[i], prefix_arg ? prefix : NULL, dry, out) <
        0) {
      fprintf(stderr, "fusefarm cleanup: %s\n", ff_errmsg());
      rc = 1;
    }
  for (size_t i = 0; i < nnames; i++)
    free(names[i]);
  free(names);
  closedir(d);
out:
  if (out != stdout)
    fclose(out);
  return rc;
}
