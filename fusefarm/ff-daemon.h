/* fusefarm: the FUSE daemon serving a farm (ops.c) and its commands.
 *
 * The daemon owns one struct ff_daemon for its whole life: the server
 * (ff-server.h: farm, I/O model, overlay, stats) and the scheduler of
 * delayed replies.  ops.c says how threads share it.
 */
#ifndef FF_DAEMON_H
#define FF_DAEMON_H

#include <pthread.h>
#include <stdint.h>

struct ff_server;
struct ff_sched;
struct fuse_session;
struct ff_pt;

/* --transport-share (ff_server_set_transport_share): auto, `fusefarm
 * attach` measures it through the probe file and sets it; off, 0 and
 * attach leaves it; fixed, the option's duration and attach leaves it.
 * The control file's transport-share command sets it in any mode. */
enum ff_share_mode { FF_SHARE_AUTO, FF_SHARE_OFF, FF_SHARE_FIXED };

/* The largest transport share accepted (1 s): a path that takes longer is
 * no path to subtract. */
#define SHARE_MAX_NS 1000000000ull

struct ff_daemon {
  struct ff_server *srv;
  struct ff_sched *sched;
  struct fuse_session *se;
  struct ff_pt *pt;      /* --passthrough (ff-passthrough.h), else NULL */
  char *spec;            /* path or "<built-in>" */
  char *mountpoint;      /* absolute */
  unsigned fuse_threads; /* max FUSE worker threads */
  uint64_t mounted_ns;   /* CLOCK_MONOTONIC at mount */
  int64_t mounted_at;    /* wall clock, seconds */
  int cpu_latency;       /* --cpu-latency auto */
  int cpu_latency_errno; /* why /dev/cpu_dma_latency did not open, or 0 */
  int share_mode;        /* --transport-share: enum ff_share_mode */

  pthread_mutex_t ctl_lock; /* guards profile, last_error, share_by */
  char *profile;            /* path of the current profile, or NULL */
  char last_error[1024];
  char share_by[256]; /* who set the transport share ("" : nobody yet) */

  /* manifest.json's text, built at its first open and shared by every
   * open after it (the farm never changes while mounted: a 100,000-device
   * manifest is built once, not once per reader). */
  pthread_mutex_t manifest_lock; /* guards the three below */
  char *manifest;
  size_t manifest_len;
  unsigned manifest_builds;
};

/* The low-level operations (ops.c), with the daemon as userdata. */
struct fuse_lowlevel_ops;
extern const struct fuse_lowlevel_ops ff_daemon_ops;

/* Record a control-file error for .fusefarm/last-error. */
void ff_daemon_set_error(struct ff_daemon *d, const char *msg);

int ff_cmd_mount(int argc, char **argv);
int ff_cmd_profile(int argc, char **argv);
int ff_cmd_stats(int argc, char **argv);
int ff_cmd_run(int argc, char **argv);
int ff_cmd_vm(int argc, char **argv);

#endif
