/* fusefarm: `fusefarm attach` measures the transport share of a mount
 * whose daemon asks for it (`fusefarm mount --transport-share auto`).
 *
 * What a reader of a farm loop waits for is the profile's latency plus
 * the path: its syscall, the loop driver, FUSE to the daemon and back,
 * the reader waking.  The daemon sees none of that; attach can time it:
 * it binds a temporary loop (autoclear, direct I/O, read-only) to the
 * mount's .fusefarm/probe, a file the daemon answers at once outside the
 * model, reads it with O_DIRECT one 4 KiB block at a time, and hands the
 * median to the daemon through .fusefarm/control ("transport-share
 * DURATION WHO"), which answers every delayed request that much sooner
 * (ff_server_set_transport_share).  The loop goes when its fd closes,
 * also when attach is killed; a loop device created for it is deleted.
 *
 * Measuring is best effort: whatever fails is a warning, the attach
 * stands and the share stays as it was.
 */
#include "attach.h"
#include "ff-error.h"
#include "ff-sched.h"
#include "ff-workload.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INFO_JSON       ".fusefarm/info.json"
#define PROBE_FILE      ".fusefarm/probe"
#define CONTROL_FILE    ".fusefarm/control"
#define SHARE_WARMUP    20  /* reads not counted: the first open, cold paths */
#define SHARE_READS     200 /* reads timed; the median is the share */
#define SHARE_BLOCK     4096
#define SHARE_SPAN      (1u << 20) /* the probe's size */
#define SHARE_REMOVE_MS 200 /* how long a created probe loop is waited for */

/* 1 when MNT's daemon says transport_share.mode "auto" in info.json, 0
 * when it says another mode or has no info.json (a directory of images,
 * a daemon older than the share), -1 on error.  *hold: the daemon holds
 * the CPUs awake while it delays replies (cpu_latency.on). */
static int
share_wanted(const char *mnt, int *hold)
{
  char path[PATH_MAX];
  json_error_t jerr;
  json_t *j;
  const char *mode;
  int r;

  if (fa_join(path, mnt, INFO_JSON) < 0)
    return -1;
  j = json_load_file(path, 0, &jerr);
  if (!j)
    return access(path, F_OK) < 0 && errno == ENOENT
             ? 0
             : ff_error("%s: %s", path, jerr.text);
  mode = json_string_value(
    json_object_get(json_object_get(j, "transport_share"), "mode"));
  r = mode && !strcmp(mode, "auto");
  *hold =
    json_is_true(json_object_get(json_object_get(j, "cpu_latency"), "on"));
  json_decref(j);
  return r;
}

/* Time SHARE_READS O_DIRECT reads of fd after SHARE_WARMUP untimed ones:
 * the median in *p50.  0 or -1. */
static int
time_reads(int fd, const char *dev, uint64_t *p50)
{
  double t[SHARE_READS];
  void *buf;

  if (posix_memalign(&buf, SHARE_BLOCK, SHARE_BLOCK))
    return ff_error("out of memory");
  for (int i = 0; i < SHARE_WARMUP + SHARE_READS; i++) {
    off_t off = (off_t)((unsigned)i * SHARE_BLOCK % SHARE_SPAN);
    uint64_t t0 = ff_now_ns();
    ssize_t n = pread(fd, buf, SHARE_BLOCK, off);

    if (n != SHARE_BLOCK) {
      free(buf);
      return n < 0 ? ff_error("read %s: %m", dev)
                   : ff_error("read %s: %zd of %d bytes", dev, n, SHARE_BLOCK);
    }
    if (i >= SHARE_WARMUP)
      t[i - SHARE_WARMUP] = (double)(ff_now_ns() - t0);
  }
  free(buf);
  *p50 = (uint64_t)ff_median(t, SHARE_READS);
  return 0;
}

/* Give the daemon the share: one write to its control file. */
static int
tell_daemon(const char *mnt, uint64_t ns, const char *dev)
{
  char path[PATH_MAX], cmd[256];
  int fd, n;
  ssize_t w;

  if (fa_join(path, mnt, CONTROL_FILE) < 0)
    return -1;
  n = snprintf(cmd, sizeof cmd,
               "transport-share %lluns fusefarm attach: the median of %d "
               "O_DIRECT 4 KiB reads of %s through %s\n",
               (unsigned long long)ns, SHARE_READS, PROBE_FILE, dev);
  fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return ff_error("open %s: %m", path);
  w = write(fd, cmd, (size_t)n);
  if (w != n) {
    int e = errno;

    close(fd);
    errno = e;
    return w < 0 ? ff_error("write %s: %m", path)
                 : ff_error("write %s: short write", path);
  }
  return close(fd) < 0 ? ff_error("close %s: %m", path) : 0;
}

int
fa_measure_share(int ctl, const char *mnt, const struct ff_loop_seen *seen,
                 uint64_t *share)
{
  char probe[PATH_MAX];
  struct ff_loop_cursor cur = {seen, 0};
  struct ff_loop lp;
  int hold = 0, w = share_wanted(mnt, &hold), r, qos = -1;

  *share = 0;
  if (w <= 0)
    return w;
  /* The delayed reads the share is for travel while the daemon holds the
   * CPUs out of deep idle (--cpu-latency), and a halted CPU takes 10-30 us
   * to wake on each of the path's hops: time the probe alike, holding
   * them the same way (the kernel lets go when the fd closes). */
  if (hold) {
    int32_t zero = 0;

    qos = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
    if (qos >= 0 && write(qos, &zero, sizeof zero) != sizeof zero) {
      close(qos);
      qos = -1;
    }
  }
  if (fa_join(probe, mnt, PROBE_FILE) < 0 ||
      ff_loop_attach(ctl, probe, FF_LOOP_DIRECT_IO | FF_LOOP_TEMPORARY, &cur,
                     &lp) < 0) {
    if (qos >= 0)
      close(qos);
    return -1;
  }
  /* the reads bypass the loop's page cache, as the farm's readers' do */
  if (fcntl(lp.fd, F_SETFL, O_DIRECT) < 0)
    r = ff_error("%s: O_DIRECT: %m", lp.dev);
  else
    r = time_reads(lp.fd, lp.dev, share);
  if (qos >= 0)
    close(qos);
  close(lp.fd); /* autoclear: the kernel detaches it now */
  /* a loop device made for the probe goes as well, once the kernel has
   * cleared it (it may finish an autoclear after the close returned);
   * still busy after SHARE_REMOVE_MS (someone opened it meanwhile: udev,
   * blkid), it stays an unbound device like any other */
  if (!ff_loop_seen_has(seen, lp.nr))
    for (int i = 0;
         i < SHARE_REMOVE_MS && ff_loop_remove(ctl, lp.nr) == FF_LOOP_BUSY;
         i++)
      usleep(1000);
  if (r == 0 && tell_daemon(mnt, *share, lp.dev) < 0)
    return -1;
  return r < 0 ? -1 : 1;
}
