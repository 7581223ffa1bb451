/* fusefarm: `fusefarm detach MNT`: detach exactly the loops `fusefarm
 * attach` recorded (attach.h), and unmount MNT when its daemon is dead.
 *
 * Thread model: loops are detached by the main thread; the loop devices
 * attach created are deleted afterwards by up to REMOVE_THREADS threads
 * at once (remove_queued), each with its own slice of a queue that only
 * the main thread reads again, after joining them.  SIGINT, SIGTERM and
 * SIGHUP only set a flag while loops are detached, so an interrupted
 * command still forgets exactly what it did.
 */
#include "attach.h"
#include "farm-registry.h"
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-file.h"
#include "ff-mountinfo.h"
#include "ff-udev.h"
#include <getopt.h>

#include <pthread.h>
#include <stdatomic.h>

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

static const char detach_usage[] =
  "usage: fusefarm detach MNT [--state DIR] [--quiet]\n"
  "\n"
  "Detach exactly the loop devices `fusefarm attach MNT` recorded in its\n"
  "state dir, and nothing else.  A recorded loop is detached only while\n"
  "the kernel still shows it backed by the recorded file; a loop detached\n"
  "meanwhile and reused by someone else is left alone, with a warning.\n"
  "The farm's files are never opened, so this works when the fusefarm\n"
  "daemon is dead or MNT is no longer mounted.\n"
  "\n"
  "A loop still open elsewhere (lvm, a mount, a holder) is retried for a\n"
  "few seconds; if it stays open it is reported, stays recorded, and the\n"
  "exit status is 1 (the kernel detaches it by itself at its last close;\n"
  "run detach again to forget it).  A recorded loop that is no longer\n"
  "attached (someone ran losetup -d) is reported and forgotten.  When\n"
  "every loop is detached, the state dir is removed, and if MNT is a\n"
  "fusefarm mount whose daemon is dead (Transport endpoint is not\n"
  "connected), MNT is unmounted as well.\n"
  "\n"
  "A loop device that attach created (it did not exist before: the\n"
  "kernel keeps every loop device ever made) is deleted once detached;\n"
  "one attach reused stays, free, and one that someone else has taken or\n"
  "opened again in between is left in place.\n"
  "\n"
  "When the farm's daemon could not save its write overlay at exit\n"
  "(`fusefarm mount --save-overlay F` on a full or read-only file\n"
  "system), detach says so, with the reason, and exits 1 (once: the\n"
  "report is then forgotten; F.failed stays).\n"
  "\n"
  "  -s, --state DIR   state dir to use instead of the default\n"
  "                    (" STATE_ROOT "/<MNT's real path with '/' as %2F>,\n"
  "                    or, for the farm of a `fusefarm run`, the state\n"
  "                    dir its entry in " REGISTRY_DIR " names)\n"
  "  -q, --quiet       no progress or summary on stderr\n"
  "  -h, --help        this text\n"
  "\n"
  "Exit status: 0 success, 1 runtime failure, busy loops or a lost\n"
  "overlay, 2 bad usage.\n";

/* ---- detach ----------------------------------------------------------- */

/* Loop devices attach created, deleted once detached (ff_loop_remove).
 * Deleting one (LOOP_CTL_REMOVE) waits in the kernel for the disk's
 * teardown (RCU grace periods, devtmpfs, writeback shutdown): 46 ms
 * each on a quiet 2-core machine, nearly all of it waiting, not CPU,
 * and outside the kernel's loop_ctl_mutex, so the time divides by the
 * number of threads: 2,000 took 92 s one at a time, 5.1 s with 16
 * threads, 0.6 s with 128 (measured on 6.18).  So they are queued while
 * the loops are detached and deleted REMOVE_THREADS at a time, each
 * thread on a small stack. */
#define REMOVE_THREADS 128
#define REMOVE_STACK   (64 * 1024)

struct removal {
  struct ff_loop_seen created; /* STATE/created */
  int ctl;                     /* /dev/loop-control, or -1 */
  size_t nremoved, nleft;
  const struct record **q; /* detached loops attach created, to delete */
  int *res;                /* [nq] ff_loop_remove's result */
  size_t nq, cap;
  atomic_size_t next; /* the next queue entry a thread takes */
};

/* Record r is detached (or was no longer attached): queue its loop
 * device for deletion if attach created it (out of memory: it stays,
 * free, and is journalled as left). */
static void
remove_created(struct removal *rm, const struct record *r)
{
  int nr = ff_loop_number(r->dev);

  if (!ff_loop_seen_has(&rm->created, nr))
    return;
  if (rm->nq == rm->cap) {
    size_t ncap = rm->cap ? 2 * rm->cap : 256;
    const struct record **q = realloc(rm->q, ncap * sizeof *q);

    if (!q) {
      rm->nleft++;
      fa_journal("left", r->dev, r->backing);
      return;
    }
    rm->q = q;
    rm->cap = ncap;
  }
  rm->q[rm->nq++] = r;
}

/* Record r's loop carries someone else's file now: it is theirs, the
 * node too when attach created it (journalled as left, not deleted). */
static void
leave_reused(const struct removal *rm, const struct record *r)
{
  if (ff_loop_seen_has(&rm->created, ff_loop_number(r->dev)))
    fa_journal("left", r->dev, r->backing);
}

static void *
remove_worker(void *arg)
{
  struct removal *rm = arg;
  size_t i;

  while ((i = atomic_fetch_add(&rm->next, 1)) < rm->nq)
    rm->res[i] = ff_loop_remove(rm->ctl, ff_loop_number(rm->q[i]->dev));
  return NULL;
}

/* Delete the queued loop devices, REMOVE_THREADS at once, then journal
 * each in queue order.  One bound or opened again meanwhile is someone
 * else's now: left in place, not an error. */
static void
remove_queued(struct removal *rm)
{
  pthread_t th[REMOVE_THREADS];
  pthread_attr_t attr;
  size_t nth = 0;

  if (rm->nq == 0)
    return;
  rm->res = calloc(rm->nq, sizeof *rm->res);
  if (rm->ctl < 0 || !rm->res) {
    if (rm->ctl >= 0)
      fprintf(stderr, "fusefarm detach: warning: out of memory: the loop "
                      "devices attach created stay in place\n");
    for (size_t i = 0; i < rm->nq; i++)
      fa_journal("left", rm->q[i]->dev, rm->q[i]->backing);
    rm->nleft += rm->nq;
    return;
  }
  for (size_t i = 0; i < rm->nq; i++)
    rm->res[i] = FF_LOOP_BUSY; /* not tried: left */
  atomic_store(&rm->next, 0);
  if (pthread_attr_init(&attr) == 0) {
    pthread_attr_setstacksize(&attr, REMOVE_STACK);
    while (nth < REMOVE_THREADS && nth < rm->nq &&
           pthread_create(&th[nth], &attr, remove_worker, rm) == 0)
      nth++;
    pthread_attr_destroy(&attr);
  }
  if (nth == 0) /* no thread to be had: this one does it */
    remove_worker(rm);
  for (size_t k = 0; k < nth; k++)
    pthread_join(th[k], NULL);
  for (size_t i = 0; i < rm->nq; i++) {
    const struct record *r = rm->q[i];

    switch (rm->res[i]) {
    case FF_LOOP_OK:
      rm->nremoved++;
      fa_journal("deleted", r->dev, r->backing);
      break;
    case FF_LOOP_UNBOUND:
      fa_journal("deleted", r->dev, r->backing);
      break;
    default:
      rm->nleft++;
      fa_journal("left", r->dev, r->backing);
      break;
    }
  }
}

struct mount_type_q {
  const char *path;
  char *type;
  size_t len;
  int found;
};

static int
mount_type_one(const struct ff_mountinfo *m, void *arg)
{
  struct mount_type_q *q = arg;

  if (!strcmp(m->point, q->path)) {
    snprintf(q->type, q->len, "%s", m->fstype);
    q->found = 1; /* keep going: the last one is on top */
  }
  return 0;
}

/* The file system type of the topmost mount at path (absolute, no
 * symlinks) from /proc/self/mountinfo, into type; 1 found, 0 not a mount
 * point, -1 error.  Never touches path itself (a dead FUSE mount answers
 * ENOTCONN). */
static int
mount_type(const char *path, char *type, size_t len)
{
  struct mount_type_q q = {path, type, len, 0};

  if (ff_mountinfo_each("/proc/self/mountinfo", mount_type_one, &q) < 0)
    return -1;
  return q.found;
}

/* Is the FUSE mount at path dead (its daemon gone: ENOTCONN)?  statfs
 * always asks the daemon (stat may be answered from the attribute cache
 * for a second after it died), so a live but stuck daemon would never
 * answer: ask from a child and give up after DEAD_PROBE_MS, calling the
 * mount alive.  1 dead, 0 alive or unknown. */
#define DEAD_PROBE_MS 2000
static int
mount_is_dead(const char *path)
{
  int status;
  pid_t pid, w;

  fflush(NULL);
  pid = fork();
  if (pid < 0)
    return 0;
  if (pid == 0) {
    struct statfs sf;

    _exit(statfs(path, &sf) < 0 && errno == ENOTCONN ? 1 : 0);
  }
  for (int waited = 0;; waited += 10) {
    w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      return WIFEXITED(status) && WEXITSTATUS(status) == 1;
    if (w < 0 && errno != EINTR)
      return 0;
    if (waited >= DEAD_PROBE_MS) {
      kill(pid, SIGKILL); /* a FUSE request wait ends on SIGKILL */
      waitpid(pid, &status, 0);
      return 0;
    }
    fa_sleep_ms(10);
  }
}

/* When MNT is a fusefarm mount whose daemon is dead (the kernel answers
 * ENOTCONN), nothing can use it again: unmount it, so that `fusefarm
 * detach` after a crash leaves neither loops nor a dead mount.  Called
 * once every loop is detached (the loops held its files).  A mount still
 * held by someone else (an open file, a shell's cwd) is detached lazily.
 * A live mount is never touched, and MNT itself is only looked at from a
 * child process (mount_is_dead).  Returns 0 (unmounted, or nothing to do)
 * or -1 with a message. */
static int
unmount_dead(const char *mnt, int quiet)
{
  char real[PATH_MAX], type[64];
  int r;

  if (fa_mount_point_path(mnt, real) < 0)
    return 0;
  r = mount_type(real, type, sizeof type);
  if (r < 0)
    return -1;
  if (r == 0 || strcmp(type, "fuse.fusefarm") || !mount_is_dead(real))
    return 0;
  if (umount2(real, UMOUNT_NOFOLLOW) == 0) {
    if (!quiet)
      fprintf(stderr,
              "fusefarm detach: unmounted %s (the fusefarm daemon serving "
              "it was dead)\n",
              real);
    return 0;
  }
  if (errno == EBUSY && umount2(real, UMOUNT_NOFOLLOW | MNT_DETACH) == 0) {
    fprintf(stderr,
            "fusefarm detach: warning: unmounted %s lazily (the fusefarm "
            "daemon serving it was dead, and something still holds a file "
            "or directory of it open)\n",
            real);
    return 0;
  }
  return ff_error("%s: the fusefarm daemon serving it is dead, but it "
                  "could not be unmounted: %m; unmount it with "
                  "`fusermount3 -u %s`",
                  real, real);
}

/* Remove the device-mapper devices the host stacked on the recorded
 * loops (ff_udev_host_holders: nothing that rests on anything else), top
 * first, saying which.  0 or -1. */
static int
remove_host_dm(const struct records *rs, int quiet)
{
  const char **devs = malloc((rs->n + 1) * sizeof *devs);
  char **dm = NULL;
  size_t ndm = 0;
  int r;

  if (!devs)
    return ff_error("out of memory");
  for (size_t i = 0; i < rs->n; i++)
    devs[i] = rs->v[i].dev;
  r = ff_udev_host_holders(devs, rs->n, &dm, &ndm);
  free(devs);
  if (r < 0 || !ndm)
    return r;
  r = ff_udev_remove_dm(dm, ndm);
  if (r >= 0 && !quiet)
    fprintf(stderr,
            "removed %zu device-mapper device%s the host had activated on "
            "the farm's loops\n",
            ndm, ndm == 1 ? "" : "s");
  ff_udev_names_free(dm, ndm);
  return r < 0 ? -1 : 0;
}

/* 1 after telling that the daemon of mnt_real lost its overlay at exit
 * (the record is then forgotten: told once), else 0. */
static int
save_failed(const char *mnt_real)
{
  return mnt_real[0] && fa_tell_save_failed(mnt_real, "detach", 1);
}

int
ff_cmd_detach(int argc, char **argv)
{
  static const struct option opts[] = {
    {"state", required_argument, NULL, 's'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *state_opt = NULL, *mnt;
  char mnt_real[PATH_MAX], state[PATH_MAX];
  struct records recs = {NULL, 0, 0};
  struct removal rm = {.ctl = -1};
  struct progress prog;
  struct signals sigs;
  size_t ndetached = 0, ngone = 0, nother = 0, nbusy = 0, nerr = 0, done = 0;
  unsigned char *busy = NULL;
  int quiet = 0, c, rc = 1, lockfd = -1;
  struct stat st;
  double t0, elapsed;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":s:qh", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      state_opt = optarg;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'h':
      fputs(detach_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("detach", c, argv, opts);
    }
  }
  if (fa_operands("detach", argc, argv, state_opt, &mnt))
    return 2;
  t0 = fa_now_s();

  mnt_real[0] = '\0';
  if (state_opt) {
    snprintf(state, sizeof state, "%s", state_opt);
    if (fa_resolve_mnt(mnt, 0, mnt_real) < 0)
      mnt_real[0] = '\0';
  } else if (fa_resolve_mnt(mnt, 0, mnt_real) < 0 ||
             fa_default_state_dir(mnt_real, state, sizeof state) < 0) {
    fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
    return 1;
  }
  if (!state_opt && stat(state, &st) < 0 && errno == ENOENT) {
    /* Not attached with the default state: a farm `fusefarm run` made
     * keeps its state in the run's scratch, and says so in the registry
     * (farm-registry.h). */
    struct ff_reg e;

    if (ff_reg_find_mnt(mnt_real, &e) == 1)
      snprintf(state, sizeof state, "%s", e.state);
  }
  if (stat(state, &st) < 0 && errno == ENOENT) {
    if (!quiet)
      fprintf(stderr,
              "fusefarm detach: %s: no state dir: nothing is attached for "
              "%s\n",
              state, mnt);
    if (unmount_dead(mnt, quiet) < 0) {
      fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
      return 1;
    }
    /* An attach cut off before its first loop may have left its rules. */
    if (mnt_real[0] && ff_udev_unfence(mnt_real) < 0) {
      fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
      return 1;
    }
    return save_failed(mnt_real);
  }
  lockfd = fa_lock_state(state);
  if (lockfd < 0 || fa_read_records(state, &recs) < 0 ||
      fa_read_created(state, &rm.created) < 0) {
    fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
    goto out;
  }
  busy = calloc(recs.n + 1, 1);
  if (!busy) {
    fprintf(stderr, "fusefarm detach: out of memory\n");
    goto out;
  }

  if (rm.created.nbits) {
    rm.ctl = ff_loop_control_open();
    if (rm.ctl < 0)
      fprintf(stderr,
              "fusefarm detach: warning: %s: the loop devices attach "
              "created stay in place\n",
              ff_errmsg());
  }
  /* What the host activated on the farm's loops (ff-udev.h) goes first:
   * it holds them open.  Exactly the dm devices stacked on them. */
  if (remove_host_dm(&recs, quiet) < 0)
    fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
  fa_progress_init(&prog, "detaching", recs.n, quiet);
  fa_signals_catch(&sigs);
  for (size_t i = 0; i < recs.n && !fa_interrupted; i++) {
    struct record *r = &recs.v[i];
    int s = ff_loop_detach(r->dev, r->backing);

    switch (s) {
    case FF_LOOP_OK:
      ndetached++;
      r->keep = 0;
      remove_created(&rm, r);
      break;
    case FF_LOOP_UNBOUND:
      /* Not an error (nothing of ours is left there), but not silent
       * either: someone detached it, or the machine rebooted. */
      if (ngone++ < MAX_WARNINGS)
        fprintf(stderr,
                "fusefarm detach: warning: %s: %s was no longer attached "
                "(detached by someone else): nothing to do\n",
                r->name, r->dev);
      r->keep = 0;
      remove_created(&rm, r);
      break;
    case FF_LOOP_OTHER:
      r->keep = 0;
      leave_reused(&rm, r);
      if (nother++ < MAX_WARNINGS)
        fprintf(stderr,
                "fusefarm detach: warning: %s: %s; someone else reused it: "
                "left alone\n",
                r->name, ff_errmsg());
      break;
    case FF_LOOP_BUSY:
      busy[i] = 1;
      nbusy++;
      break;
    default:
      if (nerr++ < MAX_WARNINGS)
        fprintf(stderr, "fusefarm detach: %s: %s\n", r->name, ff_errmsg());
      break;
    }
    done = i + 1;
    fa_progress_update(&prog, done);
  }
  fa_progress_end(&prog);

  /* Loops still open elsewhere: the kernel detaches them at their last
   * close (ff-loop.h); give short-lived holders a moment. */
  for (double end = fa_now_s() + BUSY_WAIT_MS / 1000.0;
       nbusy && !fa_interrupted && fa_now_s() < end;) {
    fa_sleep_ms(50);
    for (size_t i = 0; i < recs.n; i++) {
      int s;

      if (!busy[i])
        continue;
      s = ff_loop_detach(recs.v[i].dev, recs.v[i].backing);
      if (s == FF_LOOP_BUSY)
        continue;
      busy[i] = 0;
      nbusy--;
      if (s == FF_LOOP_OK || s == FF_LOOP_UNBOUND) {
        ndetached++;
        recs.v[i].keep = 0;
        remove_created(&rm, &recs.v[i]);
      } else if (s == FF_LOOP_OTHER) {
        recs.v[i].keep = 0;
        leave_reused(&rm, &recs.v[i]);
        if (nother++ < MAX_WARNINGS)
          fprintf(stderr,
                  "fusefarm detach: warning: %s: %s; someone else reused "
                  "it: left alone\n",
                  recs.v[i].name, ff_errmsg());
      } else {
        if (nerr++ < MAX_WARNINGS)
          fprintf(stderr, "fusefarm detach: %s: %s\n", recs.v[i].name,
                  ff_errmsg());
      }
    }
  }
  remove_queued(&rm);
  elapsed = fa_now_s() - t0; /* with the deletions: what the user waited */
  fa_signals_restore(&sigs);

  if (nbusy || nerr || done < recs.n) {
    /* Keep exactly the loops that may still be ours. */
    if (fa_rewrite_records(state, &recs) < 0 ||
        fa_rewrite_created(state, &recs, &rm.created) < 0 ||
        fa_filter_lvm_config(state, &recs) < 0) {
      fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
      goto out;
    }
  } else {
    if (fa_remove_state(state) < 0)
      fprintf(stderr, "fusefarm detach: warning: %s\n", ff_errmsg());
    /* No loop of the farm is left: the udev rules naming it go. */
    if (mnt_real[0] && ff_udev_unfence(mnt_real) < 0)
      fprintf(stderr, "fusefarm detach: warning: %s\n", ff_errmsg());
  }

  if (!quiet) {
    fprintf(stderr, "detached %zu loop device%s in %.1f s", ndetached,
            ndetached == 1 ? "" : "s", elapsed);
    if (ngone)
      fprintf(stderr, "; %zu %s detached already", ngone,
              ngone == 1 ? "was" : "were");
    if (nother)
      fprintf(stderr, "; %zu reused by someone else were left alone", nother);
    if (rm.nremoved || rm.nleft)
      fprintf(stderr, "; deleted %zu loop device%s attach created",
              rm.nremoved, rm.nremoved == 1 ? "" : "s");
    if (rm.nleft)
      fprintf(stderr, " (%zu in use again, left in place)", rm.nleft);
    fputc('\n', stderr);
  }
  if (fa_interrupted && done < recs.n)
    fprintf(stderr,
            "fusefarm detach: fa_interrupted by signal %d after %zu of %zu "
            "records; the rest stay recorded in %s/loops\n",
            (int)fa_interrupted, done, recs.n, state);
  if (nbusy) {
    struct ff_sb sb = FF_SB_INIT;
    size_t shown = 0;

    for (size_t i = 0; i < recs.n; i++)
      if (busy[i] && shown++ < 20)
        ff_sb_addf(&sb, "%s%s (%s)", shown > 1 ? ", " : "", recs.v[i].dev,
                   recs.v[i].name);
    fprintf(stderr,
            "fusefarm detach: %zu loop device%s still open elsewhere after "
            "%.0f s: %s%s\n"
            "fusefarm detach: %s recorded in %s/loops; the kernel "
            "detaches %s when the last user (lvm, a mount) closes %s; "
            "run `fusefarm detach %s%s%s` again then\n",
            nbusy, nbusy == 1 ? " is" : "s are", BUSY_WAIT_MS / 1000.0,
            ff_sb_failed(&sb) ? "" : sb.buf, nbusy > 20 ? ", ..." : "",
            nbusy == 1 ? "it stays" : "they stay", state,
            nbusy == 1 ? "it" : "them", nbusy == 1 ? "it" : "them", mnt,
            state_opt ? " --state " : "", state_opt ? state_opt : "");
    ff_sb_release(&sb);
  }
  if (nerr)
    fprintf(stderr,
            "fusefarm detach: %zu loop device%s could not be detached; "
            "they stay recorded in %s/loops\n",
            nerr, nerr == 1 ? "" : "s", state);
  if (ngone > MAX_WARNINGS)
    fprintf(stderr,
            "fusefarm detach: warning: %zu more recorded loops were no "
            "longer attached\n",
            ngone - MAX_WARNINGS);
  rc = nbusy || nerr || done < recs.n ? 1 : 0;
  if (rc == 0 && unmount_dead(mnt, quiet) < 0) {
    fprintf(stderr, "fusefarm detach: %s\n", ff_errmsg());
    rc = 1;
  }
  if (save_failed(mnt_real))
    rc = 1;
out:
  if (rm.ctl >= 0)
    close(rm.ctl);
  free(rm.q);
  free(rm.res);
  ff_loop_seen_free(&rm.created);
  if (lockfd >= 0)
    close(lockfd);
  free(busy);
  fa_records_free(&recs);
  return rc;
}
