/* fusefarm: `fusefarm attach MNT`: a loop device per farm device file of a
 * fusefarm mount, recorded in a state dir, plus an lvm config and devices
 * file that make lvm see exactly those loops (attach.h has the state dir's
 * layout and the files of attach and detach).
 *
 * Thread model: single-threaded.  SIGINT, SIGTERM and SIGHUP only set a
 * flag while loops are attached, so an interrupted command still records
 * exactly what it did.
 */
#include "attach.h"
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-udev.h"
#include <getopt.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char attach_usage[] =
  "usage: fusefarm attach MNT [--state DIR] [--only NAME,...] [--new-loops]\n"
  "                       [--direct-io MODE] [--quiet]\n"
  "\n"
  "Attach a loop device to every farm device file of the fusefarm mount\n"
  "MNT (the devices listed in MNT/.fusefarm/devices) that is not attached\n"
  "yet, and write an lvm config that sees exactly those loop devices.\n"
  "Attaching is incremental: devices that appeared since the last attach\n"
  "of MNT are attached, the others are left as they are.  Free loop\n"
  "devices are reused (--new-loops: new ones are created instead); one\n"
  "that had to be created is recorded, and `fusefarm detach` deletes it\n"
  "again, so the kernel's loop devices stay as attach found them.  Loops\n"
  "have no autoclear and no partition scan, and read their files with\n"
  "direct I/O (--direct-io); a device file that cannot be opened for\n"
  "writing is attached read-only.\n"
  "\n"
  "The state dir (default " STATE_ROOT "/<MNT's real path with '/' as\n"
  "%2F>) holds:\n"
  "  loops                       \"<loop dev> <device name> <backing file>\"\n"
  "                              per loop attached, written as they are\n"
  "  created                     the loop devices attach created\n"
  "  lvm/lvm.conf                use with LVM_SYSTEM_DIR=DIR/lvm\n"
  "  lvm/lvmlocal.conf           what lvm on this host needs besides\n"
  "  lvm/devices/system.devices  the farm's loops and nothing else\n"
  "\n"
  "stdout gets the path of the devices file as its last line; stderr gets\n"
  "a progress bar (only on a terminal), a summary and how to run lvm:\n"
  "  LVM_SYSTEM_DIR=DIR/lvm lvm pvs\n"
  "attach itself holds a few fds whatever the device count, but lvm keeps\n"
  "one per PV (raise ulimit -n above the device count; attach warns when\n"
  "the hard limit is too low), and\n"
  "pvscan --cache and activation write /run/lvm and /run/lock/lvm, which\n"
  "are compiled in: give them a private mount namespace.\n"
  "\n"
  "If attaching fails midway, the loops attached so far stay recorded and\n"
  "`fusefarm detach MNT` frees them.\n"
  "\n"
  "When MNT's daemon runs with --transport-share auto (the default), attach\n"
  "also times 200 O_DIRECT reads of MNT/.fusefarm/probe through a temporary\n"
  "loop (autoclear: gone when attach closes it) and gives the daemon their\n"
  "median: the path's own time, by which it answers delayed requests\n"
  "sooner (docs/fuse.md); a failure there is a warning.\n"
  "\n"
  "  -s, --state DIR      state dir to use instead of the default\n"
  "      --only NAME,...  attach only these devices\n"
  "      --new-loops      create a new loop device for each (detach deletes\n"
  "                       them) instead of reusing free ones\n"
  "      --direct-io MODE auto (default): the loops of the devices the\n"
  "                       current profile gives direct_io (all, unless a\n"
  "                       group says direct_io = false) read their files\n"
  "                       with direct I/O: asynchronously, many requests\n"
  "                       in flight per loop, a hop less per read; the\n"
  "                       others through the page cache.  on, off: every\n"
  "                       loop so (losetup --direct-io; docs/fuse.md)\n"
  "  -q, --quiet          no progress, summary or hint on stderr (the\n"
  "                       devices file path is still printed)\n"
  "  -h, --help           this text\n"
  "\n"
  "Exit status: 0 success, 1 runtime failure, 2 bad usage.\n";

/* ---- attach ----------------------------------------------------------- */

/* Raise the soft fd limit to the hard one and refuse, before anything is
 * created, when even that is below what attach itself needs.  attach
 * holds a constant number of descriptors whatever the device count (a
 * file and its loop node at a time): a low limit could only make it fail
 * on its first device, but it says so up front instead.  *inherited gets
 * the hard limit the caller had, for the lvm warning below. */
static int
check_nofile(rlim_t *inherited)
{
  return ff_nofile_raise(ATTACH_FDS, "attach",
                         "ulimit -n 1024 or more: lvm needs one per device "
                         "as well",
                         inherited);
}

/* lvm keeps one descriptor per PV and, short of them, fails or lists
 * fewer PVs.  It raises its soft limit itself, but not the hard one: warn
 * when the hard limit attach inherited cannot hold the farm's devices. */
static void
warn_lvm_nofile(rlim_t hard, size_t ndev)
{
  size_t need = ndev + LVM_SPARE_FDS;

  if (hard == RLIM_INFINITY || hard >= need)
    return;
  fprintf(stderr,
          "fusefarm attach: warning: the hard file descriptor limit here "
          "is %llu, but lvm keeps one per device and needs %zu for these "
          "%zu devices (it fails or lists fewer PVs with less); raise it "
          "before running lvm: ulimit -n %zu\n",
          (unsigned long long)hard, need, ndev, need);
}

/* After attaching: did the host's udev leave the farm's loops alone?
 * Once udevd has handled their events, each loop's udev record must
 * carry fusefarm's rule, and no device-mapper device may sit on any of
 * them (the host activated a farm VG: an attach before the rule was
 * there, or by hand).  Says what it found; `fusefarm detach` removes
 * exactly those dm devices. */
static void
check_host(const char *mnt_real, const struct records *rs, int quiet)
{
  const char **devs = malloc((rs->n + 1) * sizeof *devs);
  size_t n = 0, fenced = 0, missed = 0, ndm = 0;
  char **dm = NULL;

  if (!devs)
    return;
  for (size_t i = 0; i < rs->n; i++)
    if (rs->v[i].keep)
      devs[n++] = rs->v[i].dev;
  if (ff_udev_running()) {
    if (ff_udev_settle() < 0)
      fprintf(stderr, "fusefarm attach: warning: %s\n", ff_errmsg());
    for (size_t i = 0; i < n; i++) {
      int f = ff_udev_loop_fenced(devs[i], mnt_real);

      if (f == 1)
        fenced++;
      else if (missed++ < MAX_WARNINGS)
        fprintf(stderr,
                "fusefarm attach: warning: %s: udev %s without fusefarm's "
                "rule: the host's lvm2, systemd and udisks may act on it\n",
                devs[i], f < 0 ? "has no record of it" : "handled it");
    }
    if (!quiet && !missed)
      fprintf(stderr,
              "udev: all %zu loop devices fenced (lvm2's rules, blkid, "
              "systemd and udisks leave them alone)\n",
              fenced);
  }
  if (ff_udev_host_holders(devs, n, &dm, &ndm) < 0) {
    fprintf(stderr, "fusefarm attach: warning: %s\n", ff_errmsg());
  } else if (ndm) {
    struct ff_sb sb = FF_SB_INIT;

    for (size_t i = 0; i < ndm && i < 20; i++)
      ff_sb_addf(&sb, "%s%s", i ? ", " : "", dm[i]);
    fprintf(stderr,
            "fusefarm attach: warning: the host activated %zu device-mapper "
            "device%s on the farm's loops: %s%s; `fusefarm detach` removes "
            "exactly these\n",
            ndm, ndm == 1 ? "" : "s", ff_sb_failed(&sb) ? "" : sb.buf,
            ndm > 20 ? ", ..." : "");
    ff_sb_release(&sb);
  } else if (!quiet && ff_udev_running()) {
    fprintf(stderr, "host: no device-mapper device on the farm's loops\n");
  }
  ff_udev_names_free(dm, ndm);
  free(devs);
}

static int
cmp_record_name(const void *a, const void *b)
{
  return strcmp((*(const struct record *const *)a)->name,
                (*(const struct record *const *)b)->name);
}

int
ff_cmd_attach(int argc, char **argv)
{
  static const struct option opts[] = {
    {"state", required_argument, NULL, 's'},
    {"only", required_argument, NULL, 'O'},
    {"new-loops", no_argument, NULL, 'N'},
    {"direct-io", required_argument, NULL, 'D'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *state_opt = NULL, *only = NULL, *mnt;
  char mnt_real[PATH_MAX], state[PATH_MAX], path[PATH_MAX], loops[PATH_MAX];
  char why[1024];
  struct devlist list = {NULL, 0};
  struct records recs = {NULL, 0, 0};
  struct record **by_name = NULL;
  struct ff_loop *lp = NULL;
  struct progress prog;
  struct signals sigs;
  size_t *todo = NULL, ntodo = 0, nattached = 0, nlive = 0, ndropped = 0;
  size_t nreused = 0;
  int quiet = 0, c, rc = 1, ctl = -1, lockfd = -1, loopsfd = -1;
  int createdfd = -1, new_loops = 0;
  enum { DIO_AUTO, DIO_ON, DIO_OFF } dio = DIO_AUTO;
  size_t ndio = 0, nnodio = 0;
  char createdpath[PATH_MAX];
  struct ff_loop_seen seen = {NULL, 0}, created = {NULL, 0};
  struct ff_loop_cursor cur = {NULL, 0};
  int failed = 0, caught_sigs = 0, fresh = 0, fenced = 0;
  size_t ngone = 0;
  rlim_t hard_nofile = RLIM_INFINITY;
  double t0;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":s:qh", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      state_opt = optarg;
      break;
    case 'O':
      only = optarg;
      break;
    case 'N':
      new_loops = 1;
      break;
    case 'D':
      if (!strcmp(optarg, "auto"))
        dio = DIO_AUTO;
      else if (!strcmp(optarg, "on"))
        dio = DIO_ON;
      else if (!strcmp(optarg, "off"))
        dio = DIO_OFF;
      else
        return ff_cli_usage(
          "attach", "--direct-io '%s': expected auto, on or off", optarg);
      break;
    case 'q':
      quiet = 1;
      break;
    case 'h':
      fputs(attach_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("attach", c, argv, opts);
    }
  }
  if (fa_operands("attach", argc, argv, state_opt, &mnt))
    return 2;
  t0 = fa_now_s();

  /* Everything that can refuse does so before anything is created. */
  if (check_nofile(&hard_nofile) < 0)
    goto fail;
  ctl = ff_loop_control_open();
  if (ctl < 0)
    goto fail;
  if (fa_resolve_mnt(mnt, 1, mnt_real) < 0)
    goto fail;
  if (strchr(mnt_real, '\n')) {
    ff_error("%s: a newline in the path cannot be recorded", mnt_real);
    goto fail;
  }
  if (fa_read_devices_list(mnt_real, &list) < 0)
    goto fail;
  if (only && fa_filter_only(&list, only, mnt_real) < 0)
    goto fail;
  if (dio == DIO_AUTO && fa_mark_cached(mnt_real, &list) < 0)
    goto fail;
  if (state_opt)
    snprintf(state, sizeof state, "%s", state_opt);
  else if (fa_default_state_dir(mnt_real, state, sizeof state) < 0)
    goto fail;
  if (strchr(state, '\n')) {
    ff_error("%s: a newline in the state dir path", state);
    goto fail;
  }
  lockfd = fa_prepare_state(state, &fresh);
  if (lockfd < 0)
    goto fail;
  /* Absolute from here on: it goes into LVM_SYSTEM_DIR hints and the
   * printed devices file path. */
  if (!realpath(state, path)) {
    ff_error("%s: %m", state);
    goto fail;
  }
  memcpy(state, path, strlen(path) + 1);

  /* Which recorded loops are still ours?  A loop detached behind our back
   * is forgotten; one someone else reused is forgotten with a warning. */
  if (fa_read_records(state, &recs) < 0)
    goto fail;
  for (size_t i = 0; i < recs.n; i++) {
    int st = ff_loop_check(recs.v[i].dev, recs.v[i].backing);

    if (st < 0) {
      fprintf(stderr, "fusefarm attach: warning: %s; keeping its record\n",
              ff_errmsg());
      st = FF_LOOP_OK;
    }
    if (st == FF_LOOP_OTHER && nreused++ < MAX_WARNINGS)
      fprintf(stderr,
              "fusefarm attach: warning: %s: %s; someone else reused it: "
              "forgetting it\n",
              recs.v[i].name, ff_errmsg());
    /* Detached behind our back (losetup -d, a reboot): say so, since
     * the device gets a new loop below if the farm still lists it. */
    if (st == FF_LOOP_UNBOUND && ngone++ < MAX_WARNINGS)
      fprintf(stderr,
              "fusefarm attach: warning: %s: %s is no longer attached "
              "(detached by someone else): forgetting it; it is attached "
              "again if %s still lists %s\n",
              recs.v[i].name, recs.v[i].dev, DEVICES_LIST, recs.v[i].name);
    recs.v[i].keep = st == FF_LOOP_OK;
    if (recs.v[i].keep)
      nlive++;
    else
      ndropped++;
  }
  if (nreused > MAX_WARNINGS)
    fprintf(stderr,
            "fusefarm attach: warning: %zu more recorded loops were reused "
            "by someone else: forgetting them\n",
            nreused - MAX_WARNINGS);
  if (ngone > MAX_WARNINGS)
    fprintf(stderr,
            "fusefarm attach: warning: %zu more recorded loops are no "
            "longer attached: forgetting them\n",
            ngone - MAX_WARNINGS);
  if (fa_read_created(state, &created) < 0)
    goto fail;
  if (ndropped && (fa_rewrite_records(state, &recs) < 0 ||
                   fa_rewrite_created(state, &recs, &created) < 0))
    goto fail;

  /* The devices file must exist before any lvm call (an absent one makes
   * lvm scan every disk of the machine), so write it before attaching. */
  if (fa_write_lvm_config(state, &recs, &list, "attach", quiet) < 0)
    goto fail;
  /* And the host's udev must know the farm's loops before the first one
   * fires its event (ff-udev.h). */
  if (ff_udev_fence(mnt_real) < 0) {
    if (ff_udev_running())
      goto fail;
    fprintf(stderr, "fusefarm attach: warning: %s (no udevd runs here)\n",
            ff_errmsg());
  }
  fenced = 1;

  by_name = malloc((recs.n + 1) * sizeof *by_name);
  todo = malloc((list.n + 1) * sizeof *todo);
  lp = malloc(sizeof *lp);
  if (!by_name || !todo || !lp) {
    ff_error("out of memory");
    goto fail;
  }
  {
    size_t k = 0;

    for (size_t i = 0; i < recs.n; i++)
      if (recs.v[i].keep)
        by_name[k++] = &recs.v[i];
    qsort(by_name, k, sizeof *by_name, cmp_record_name);
    for (size_t i = 0; i < list.n; i++) {
      struct record key = {.name = list.v[i].name}, *kp = &key;

      if (!bsearch(&kp, by_name, k, sizeof *by_name, cmp_record_name))
        todo[ntodo++] = i;
    }
    /* by_name points into recs.v, which grows (moves) below. */
    free(by_name);
    by_name = NULL;
  }

  if (fa_join(loops, state, "loops") < 0)
    goto fail;
  loopsfd = open(loops, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (loopsfd < 0) {
    ff_error("open %s: %m", loops);
    goto fail;
  }
  /* Which loop devices exist before we ask for any: the unbound ones are
   * used first (ff_loop_cursor), and one outside this set was created for
   * us, and detach deletes it again. */
  if (fa_join(createdpath, state, "created") < 0 ||
      ff_loop_seen_load(&seen) < 0)
    goto fail;
  if (!new_loops)
    cur.existing = &seen;
  createdfd = ff_open_write(createdpath, O_APPEND);
  if (createdfd < 0)
    goto fail;
  fa_progress_init(&prog, "attaching", ntodo, quiet);
  fa_signals_catch(&sigs);
  caught_sigs = 1;
  for (size_t i = 0; i < ntodo; i++) {
    const struct farm_dev *d = &list.v[todo[i]];
    int want_dio;

    if (fa_interrupted) {
      ff_error("fa_interrupted by signal %d", (int)fa_interrupted);
      failed = 1;
      break;
    }
    if (fa_join(path, mnt_real, d->name) < 0) {
      failed = 1;
      break;
    }
    want_dio = dio == DIO_ON || (dio == DIO_AUTO && !d->cached);
    if (ff_loop_attach(ctl, path, want_dio ? FF_LOOP_DIRECT_IO : 0, &cur, lp) <
        0) {
      int e = errno;

      snprintf(why, sizeof why, "%s", ff_errmsg());
      if (e == ENOTCONN)
        ff_error("%s (the fusefarm daemon serving %s is dead)", why, mnt_real);
      else if (e == ENOENT)
        ff_error("%s (listed in %s/" DEVICES_LIST " but not there)", why,
                 mnt_real);
      else if (e == EACCES || e == EPERM)
        ff_error("%s (cannot open the farm's files: a FUSE mount of another "
                 "user needs -o allow_other)",
                 why);
      failed = 1;
      break;
    }
    if ((!ff_loop_seen_has(&seen, lp->nr) &&
         fa_append_created(createdfd, createdpath, lp->dev) < 0) ||
        fa_append_record(loopsfd, loops, lp->dev, d->name, lp->backing) < 0 ||
        fa_records_add(&recs, lp->dev, d->name, lp->backing) < 0) {
      /* Recording failed: do not leave an unrecorded loop behind. */
      if (ff_loop_detach(lp->dev, lp->backing) == FF_LOOP_OK &&
          !ff_loop_seen_has(&seen, lp->nr))
        ff_loop_remove(ctl, lp->nr);
      failed = 1;
      break;
    }
    if (!ff_loop_seen_has(&seen, lp->nr))
      fa_journal("created", lp->dev, lp->backing);
    /* In the set now: handed back later in this run (someone detached
     * it meanwhile), it is not recorded as created twice. */
    if (ff_loop_seen_add(&seen, lp->nr) < 0) {
      failed = 1;
      break;
    }
    nattached++;
    ndio += lp->direct_io;
    nnodio += want_dio && !lp->direct_io;
    fa_progress_update(&prog, nattached);
  }
  fa_progress_end(&prog);
  fa_signals_restore(&sigs);
  caught_sigs = 0;

  if (failed) /* keep the reason: writing the devices file may fail too */
    snprintf(why, sizeof why, "%s", ff_errmsg());
  if (nattached &&
      fa_write_lvm_config(state, &recs, &list, "attach", quiet) < 0) {
    fprintf(stderr, "fusefarm attach: %s\n", ff_errmsg());
    if (!failed)
      snprintf(why, sizeof why, "%s", ff_errmsg());
    failed = 1;
  }
  if (failed) {
    fprintf(stderr, "fusefarm attach: %s\n", why);
    if (nattached + nlive == 0)
      fprintf(stderr, "fusefarm attach: no loop device was attached\n");
    else
      fprintf(stderr,
              "fusefarm attach: attached %zu of %zu loop devices before the "
              "failure (and %zu before this run); %s records them all and "
              "`fusefarm detach %s%s%s` frees them\n",
              nattached, ntodo, nlive, loops, mnt,
              state_opt ? " --state " : "", state_opt ? state : "");
    goto out;
  }
  warn_lvm_nofile(hard_nofile, nlive + nattached);
  /* Asked for and not had: the file's filesystem cannot do direct I/O,
   * or its block size is larger than the loop's 512 bytes; those loops
   * work, through the page cache. */
  if (nnodio)
    fprintf(stderr,
            "fusefarm attach: warning: %zu of the loops attached read their "
            "files through the page cache: the kernel refused direct I/O "
            "for them\n",
            nnodio);
  /* The path's own time, for a daemon that answers sooner by it
   * (--transport-share auto): best effort. */
  {
    uint64_t share;
    int m = fa_measure_share(ctl, mnt_real, &seen, &share);

    if (m < 0)
      fprintf(stderr,
              "fusefarm attach: warning: the transport share was not "
              "measured: %s\n",
              ff_errmsg());
    else if (m > 0 && !quiet)
      fprintf(stderr,
              "transport share: %.1f us (median of a probe loop's reads); "
              "the daemon answers delayed requests that much sooner\n",
              (double)share / 1e3);
  }
  check_host(mnt_real, &recs, quiet);
  if (!quiet) {
    struct ff_sb sb = FF_SB_INIT;
    char lvmdir[PATH_MAX];

    fprintf(stderr, "attached %zu loop device%s in %.1f s", nattached,
            nattached == 1 ? "" : "s", fa_now_s() - t0);
    if (nlive)
      fprintf(stderr, " (%zu %s attached already)", nlive,
              nlive == 1 ? "was" : "were");
    if (nattached)
      fprintf(stderr, ", %zu with direct I/O", ndio);
    fputc('\n', stderr);
    fa_join(lvmdir, state, "lvm");
    ff_sb_add(&sb, "LVM_SYSTEM_DIR=");
    fa_add_shell_word(&sb, lvmdir);
    ff_sb_add(&sb, " lvm pvs");
    if (!ff_sb_failed(&sb))
      fprintf(stderr,
              "%s\n"
              "  (lvm keeps one fd per PV: ulimit -n must exceed %zu; "
              "pvscan --cache and activation write /run/lvm: give them a "
              "private one, e.g. unshare -m + mount --bind)\n",
              sb.buf, nlive + nattached);
    ff_sb_release(&sb);
  }
  if (fa_join(path, state, "lvm/devices/system.devices") < 0)
    goto fail;
  printf("%s\n", path);
  if (fflush(stdout) == EOF) {
    ff_error("write stdout: %m");
    goto fail;
  }
  rc = 0;
  goto out;

fail:
  fprintf(stderr, "fusefarm attach: %s\n", ff_errmsg());
out:
  if (caught_sigs)
    fa_signals_restore(&sigs);
  /* A failed first attach that attached nothing leaves nothing behind. */
  if (rc != 0 && fresh && lockfd >= 0 && nattached + nlive == 0) {
    if (fa_remove_state(state) < 0)
      fprintf(stderr, "fusefarm attach: warning: %s\n", ff_errmsg());
    if (fenced && ff_udev_unfence(mnt_real) < 0)
      fprintf(stderr, "fusefarm attach: warning: %s\n", ff_errmsg());
  }
  if (loopsfd >= 0)
    close(loopsfd);
  if (createdfd >= 0)
    close(createdfd);
  ff_loop_seen_free(&seen);
  ff_loop_seen_free(&created);
  if (lockfd >= 0)
    close(lockfd);
  if (ctl >= 0)
    close(ctl);
  free(lp);
  free(todo);
  free(by_name);
  fa_records_free(&recs);
  fa_devlist_free(&list);
  return rc;
}
