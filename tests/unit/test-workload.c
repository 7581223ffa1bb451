/* The workload scheduler (ff-workload.c) and process spawning
 * (ff-spawn.c), against a stub lvm.
 *
 * The stub is a shell script written into the test's scratch dir.  Each
 * command it plays appends "start CMD ARG" to a log, tells the test
 * through the `events` fifo that it started, and then blocks reading one
 * line from the `gate` fifo: the test decides when each command ends.  A
 * pvscan of a device whose path is "NAME=VG" prints
 * LVM_VG_NAME_COMPLETE='VG' (its VG is complete).  A controller thread
 * reads the events and releases the gate while the workload runs in the
 * test's main thread; it gives up after a minute of silence (a workload
 * that waits for a command it should not wait for would otherwise hang
 * the test), releases everything and makes the test fail.
 *
 * No assertion is about how long anything took: the tests check the
 * order of starts and ends in the log, which commands were queued, and
 * the scheduled times the workload computed.
 */
#include "ff-spawn.h"
#include "ff-workload.h"
#include "ff-test.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NDEV     5 /* pv4 is not present: no path */
#define NPRESENT 4
#define NVG      2

struct fixture {
  char dir[PATH_MAX], lvm[PATH_MAX + 8], out[PATH_MAX + 8], log[PATH_MAX + 8];
  int events, gate; /* held open O_RDWR: no open of the stub's blocks */
};

/* What the controller thread does. */
struct controller {
  struct fixture *f;
  int one_by_one;     /* release each command as it starts; else release
                       * everything once all pvscans have started */
  unsigned expect;    /* starts to see before it is done */
  long hold_first_ns; /* one_by_one: hold the first command until this
                       * long after its start was seen */
  int timed_out;
  unsigned seen;
};

static const char stub_text[] =
  "#!/bin/sh\n"
  "d='%s'\n"
  "cmd=$1\n"
  "for a; do last=$a; done\n"
  "echo \"start $cmd $last\" >> \"$d/log\"\n"
  "echo \"start $cmd $last\" > \"$d/events\"\n"
  "read go < \"$d/gate\"\n"
  "echo \"end $cmd $last\" >> \"$d/log\"\n"
  "case \"$cmd:$last\" in\n"
  "pvscan:*=*) echo \"LVM_VG_NAME_COMPLETE='${last#*=}'\" ;;\n"
  "esac\n"
  "exit 0\n";

static int
setup(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  const char *tmp = getenv("TMPDIR");
  char path[PATH_MAX + 16];
  FILE *fp;

  assert_non_null(f);
  snprintf(f->dir, sizeof f->dir, "%s/ff-test-workload.XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(f->dir));
  snprintf(f->lvm, sizeof f->lvm, "%s/lvm", f->dir);
  snprintf(f->out, sizeof f->out, "%s/out", f->dir);
  snprintf(f->log, sizeof f->log, "%s/log", f->dir);
  assert_int_equal(mkdir(f->out, 0755), 0);
  fp = fopen(f->lvm, "w");
  assert_non_null(fp);
  fprintf(fp, stub_text, f->dir);
  assert_int_equal(fclose(fp), 0);
  assert_int_equal(chmod(f->lvm, 0755), 0);
  snprintf(path, sizeof path, "%s/events", f->dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  f->events = open(path, O_RDWR | O_CLOEXEC);
  assert_true(f->events >= 0);
  snprintf(path, sizeof path, "%s/gate", f->dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  f->gate = open(path, O_RDWR | O_CLOEXEC);
  assert_true(f->gate >= 0);
  *state = f;
  return 0;
}

static int
teardown(void **state)
{
  struct fixture *f = *state;
  const char *names[] = {"lvm",       "log",      "events", "gate",
                         "spawn.out", "lvm-fail", "fio",    "dev0"};
  char path[PATH_MAX + 16];

  close(f->events);
  close(f->gate);
  ff_empty_dir(f->out);
  rmdir(f->out);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    snprintf(path, sizeof path, "%s/%s", f->dir, names[i]);
    unlink(path);
  }
  rmdir(f->dir);
  free(f);
  return 0;
}

static void
release(struct fixture *f, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    if (write(f->gate, "go\n", 3) != 3)
      fail_msg("write gate: %s", strerror(errno));
}

static void *
control_thread(void *arg)
{
  struct controller *c = arg;
  unsigned pvscans = 0;
  char buf[4096];
  size_t have = 0;

  while (c->seen < c->expect) {
    struct pollfd p = {.fd = c->f->events, .events = POLLIN};
    ssize_t n;
    char *nl;

    if (poll(&p, 1, 60000) <= 0) {
      c->timed_out = 1;
      break;
    }
    n = read(c->f->events, buf + have, sizeof buf - 1 - have);
    if (n <= 0)
      continue;
    have += (size_t)n;
    buf[have] = '\0';
    while ((nl = strchr(buf, '\n'))) {
      int pv = !strncmp(buf, "start pvscan", 12);

      c->seen++;
      pvscans += pv;
      if (c->one_by_one) {
        if (c->seen == 1 && c->hold_first_ns) {
          struct timespec t;

          /* Every arrival is due by then: the first command started
           * at or after the workload's time 0, and the last arrival is
           * less than the spread after it. */
          clock_gettime(CLOCK_MONOTONIC, &t);
          t.tv_nsec += c->hold_first_ns % 1000000000;
          t.tv_sec += c->hold_first_ns / 1000000000 + t.tv_nsec / 1000000000;
          t.tv_nsec %= 1000000000;
          while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) ==
                 EINTR)
            ;
        }
        release(c->f, 1);
      } else if (pv && pvscans == NPRESENT) {
        release(c->f, NPRESENT + NVG);
      }
      have -= (size_t)(nl + 1 - buf);
      memmove(buf, nl + 1, have + 1);
    }
  }
  if (c->timed_out)
    release(c->f, 64); /* let the workload finish, then fail */
  return NULL;
}

/* Run an event-activation workload with the stub under controller c. */
static json_t *
run_activation(struct fixture *f, struct controller *c, unsigned concurrency,
               uint64_t spread_ns)
{
  /* ff_wenv's arrays are not const: their strings are the caller's */
  static char *names[NDEV] = {(char *)"pv0", (char *)"pv1", (char *)"pv2",
                              (char *)"pv3", (char *)"pv4"};
  static char *paths[NDEV] = {(char *)"d0", (char *)"d1=vgA", (char *)"d2",
                              (char *)"d3=vgB", NULL};
  static char *vgs[NDEV] = {(char *)"vgA", (char *)"vgA", (char *)"vgB",
                            (char *)"vgB", NULL};
  const struct ff_workload w = {
    .name = (char *)"event-activation",
    .type = FF_W_EVENT_ACTIVATION,
    .repeat = 1,
    .concurrency = concurrency,
    .spread_ns = spread_ns,
  };
  const struct ff_wenv e = {
    .lvm = f->lvm,
    .outdir = f->out,
    .ndevs = NDEV,
    .names = names,
    .paths = paths,
    .vgs = vgs,
  };
  struct ff_wresult *res = ff_wresult_new();
  json_error_t jerr;
  json_t *wl;
  pthread_t th;
  char *text;
  int rc;

  assert_non_null(res);
  c->f = f;
  unlink(f->log);
  assert_int_equal(pthread_create(&th, NULL, control_thread, c), 0);
  rc = ff_workload_run(&e, &w, res);
  assert_int_equal(pthread_join(th, NULL), 0);
  if (rc < 0)
    fail_msg("ff_workload_run: %s", ff_errmsg());
  assert_int_equal(ff_wresult_nruns(res), 1);
  text = ff_wresult_json_text(res);
  assert_non_null(text);
  ff_wresult_free(res);
  wl = json_loads(text, 0, &jerr);
  if (!wl)
    fail_msg("the result is not JSON: %s: %s", jerr.text, text);
  free(text);
  assert_string_equal(json_string_value(json_object_get(wl, "name")),
                      "event-activation");
  if (c->timed_out)
    fail_msg("the workload stopped starting commands: %u of %u started",
             c->seen, c->expect);
  assert_int_equal(
    json_integer_value(json_object_get(
      json_array_get(json_object_get(wl, "runs"), 0), "errors")),
    0);
  return wl;
}

/* The log as lines ("start pvscan d0", "end vgchange vgA", ...). */
static size_t
read_log(struct fixture *f, char lines[][64], size_t max)
{
  FILE *fp = fopen(f->log, "r");
  size_t n = 0;

  assert_non_null(fp);
  while (n < max && fgets(lines[n], 64, fp)) {
    lines[n][strcspn(lines[n], "\n")] = '\0';
    n++;
  }
  fclose(fp);
  return n;
}

static json_t *
device_entry(json_t *wl, const char *name)
{
  size_t i;
  json_t *d;

  json_array_foreach(json_object_get(wl, "devices"), i, d)
  {
    if (!strcmp(json_string_value(json_object_get(d, "device")), name))
      return d;
  }
  fail_msg("no devices entry for %s", name);
  return NULL;
}

static double
num(json_t *o, const char *key)
{
  json_t *v = json_object_get(o, key);

  if (!json_is_number(v))
    fail_msg("\"%s\" is missing or not a number", key);
  return json_number_value(v);
}

/* Every present device has its entry: scheduled at its arrival time
 * (spread * k / n, computed as the workload does), started at or after
 * it, and queued exactly when k >= queued_from; with in_order, the
 * pvscans started one after another in arrival order. */
static void
check_devices(json_t *wl, uint64_t spread, unsigned queued_from, int in_order)
{
  double prev = -1;

  assert_int_equal(json_array_size(json_object_get(wl, "devices")), NPRESENT);
  for (unsigned k = 0; k < NPRESENT; k++) {
    char name[8];
    json_t *d;

    snprintf(name, sizeof name, "pv%u", k);
    d = device_entry(wl, name);
    assert_true(num(d, "scheduled") == (double)spread / 1e9 * k / NPRESENT);
    assert_true(num(d, "start") >= num(d, "scheduled"));
    assert_true(json_is_boolean(json_object_get(d, "queued")));
    assert_int_equal(json_is_true(json_object_get(d, "queued")),
                     k >= queued_from);
    if (in_order) {
      assert_true(num(d, "start") > prev);
      prev = num(d, "start");
    }
  }
}

/* Each vgchange starts after the pvscan that completed its VG ended, and
 * at or after the time it was scheduled (that pvscan's end). */
static void
check_activations(json_t *wl)
{
  static const char *const last_pv[NVG][2] = {{"vgA", "pv1"}, {"vgB", "pv3"}};
  json_t *acts = json_object_get(wl, "activations");

  assert_int_equal(json_array_size(acts), NVG);
  for (size_t k = 0; k < NVG; k++) {
    json_t *a = NULL, *x;
    size_t i;

    json_array_foreach(acts, i, x)
    {
      if (!strcmp(json_string_value(json_object_get(x, "vg")), last_pv[k][0]))
        a = x;
    }
    assert_non_null(a);
    assert_true(num(a, "scheduled") ==
                num(device_entry(wl, last_pv[k][1]), "end"));
    assert_true(num(a, "start") >= num(a, "scheduled"));
    assert_true(json_is_boolean(json_object_get(a, "queued")));
  }
}

/* Arrivals spread over 200 ms, room for all: every pvscan starts while
 * every earlier one is still blocked, so all four have started before
 * any has ended, and none was queued. */
static void
test_arrivals_on_schedule(void **state)
{
  struct fixture *f = *state;
  struct controller c = {.expect = NPRESENT};
  const uint64_t spread = 200000000;
  char lines[32][64];
  json_t *wl = run_activation(f, &c, 8, spread);
  size_t n = read_log(f, lines, 32);

  assert_int_equal(n, 2 * (NPRESENT + NVG));
  for (size_t i = 0; i < NPRESENT; i++)
    if (strncmp(lines[i], "start pvscan", 12))
      fail_msg("log line %zu is \"%s\": a pvscan ended before all had "
               "started",
               i, lines[i]);
  check_devices(wl, spread, NPRESENT, 0);
  check_activations(wl);
  json_decref(wl);
}

/* Concurrency 1, everything arriving at once: one command at a time,
 * the arrivals in arrival order, a complete VG's vgchange before the
 * next arrival, and every arrival after the first queued. */
static void
test_queue_order(void **state)
{
  static const char *const want[] = {
    "start pvscan d0",   "end pvscan d0",      "start pvscan d1=vgA",
    "end pvscan d1=vgA", "start vgchange vgA", "end vgchange vgA",
    "start pvscan d2",   "end pvscan d2",      "start pvscan d3=vgB",
    "end pvscan d3=vgB", "start vgchange vgB", "end vgchange vgB"};
  struct fixture *f = *state;
  struct controller c = {.one_by_one = 1, .expect = NPRESENT + NVG};
  char lines[32][64];
  json_t *wl = run_activation(f, &c, 1, 0);
  size_t n = read_log(f, lines, 32);

  assert_int_equal(n, sizeof want / sizeof *want);
  for (size_t i = 0; i < n; i++)
    assert_string_equal(lines[i], want[i]);
  check_devices(wl, 0, 1, 1);
  check_activations(wl);
  json_decref(wl);
}

/* Concurrency 1, arrivals spread over 200 ms, the first command held
 * until every arrival is due: the scheduled times are the arrival times
 * whatever the delay, the later arrivals are queued and start in arrival
 * order, one at a time. */
static void
test_spread_queued(void **state)
{
  struct fixture *f = *state;
  const uint64_t spread = 200000000;
  struct controller c = {
    .one_by_one = 1, .expect = NPRESENT + NVG, .hold_first_ns = (long)spread};
  char lines[32][64];
  json_t *wl = run_activation(f, &c, 1, spread);
  size_t n = read_log(f, lines, 32);

  assert_int_equal(n, 2 * (NPRESENT + NVG));
  for (size_t i = 0; i < n; i++)
    assert_int_equal(strncmp(lines[i], i % 2 ? "end" : "start", i % 2 ? 3 : 5),
                     0);
  check_devices(wl, spread, 1, 1);
  check_activations(wl);
  json_decref(wl);
}

/* A child the test started before the workload is still the test's to
 * reap afterwards: the workload waits only for its own commands. */
static void
test_other_children_left_alone(void **state)
{
  struct fixture *f = *state;
  struct controller c = {.expect = NPRESENT};
  pid_t mine = fork();
  int st;
  json_t *wl;

  assert_true(mine >= 0);
  if (mine == 0)
    _exit(7);
  wl = run_activation(f, &c, 8, 0);
  json_decref(wl);
  assert_int_equal(waitpid(mine, &st, 0), mine);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 7);
}

/* ff-spawn itself: environment, output file, exit status, signal,
 * a command that does not exist, both start paths. */
static void
test_spawn(void **state)
{
  struct fixture *f = *state;
  char out[PATH_MAX + 16], *text;
  const char *env[] = {"FF_TEST_VALUE", "forty two", NULL};
  const char *echo[] = {"sh", "-c", "echo \"$FF_TEST_VALUE\"; exit 3", NULL};
  const char *killself[] = {"sh", "-c", "kill -9 $$", NULL};
  const char *missing[] = {"ff-no-such-command", NULL};
  struct ff_spawn o = {.argv = echo, .env = env, .out = out};

  snprintf(out, sizeof out, "%s/spawn.out", f->dir);
  for (int fork_path = 0; fork_path < 2; fork_path++) {
    o.argv = echo;
    o.raise_nofile = fork_path;
    assert_int_equal(ff_spawn_run(&o), 3);
    text = ff_slurp(out, 100);
    assert_non_null(text);
    assert_string_equal(text, "forty two\n");
    free(text);
    o.argv = killself;
    assert_int_equal(ff_spawn_run(&o), 128 + 9);
  }
  /* posix_spawn says so; the fork path's child exits 127 */
  o.argv = missing;
  o.raise_nofile = 0;
  assert_int_equal(ff_spawn_run(&o), -1);
  assert_non_null(strstr(ff_errmsg(), "ff-no-such-command"));
  o.raise_nofile = 1;
  assert_int_equal(ff_spawn_run(&o), 127);
}

/* argv[1..] joined with blanks. */
static void
joined(const char **argv, int n, char *buf, size_t len)
{
  size_t used = 0;

  buf[0] = '\0';
  assert_null(argv[0]);
  for (int i = 1; i <= n; i++) {
    assert_non_null(argv[i]);
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i > 1 ? " " : "",
                             argv[i]);
    assert_true(used < len);
  }
  assert_null(argv[n + 1]);
}

/* Each dialect runs what that lvm's own udev rule and units ran. */
static void
test_dialect_argv(void **state)
{
  static const struct {
    int d, no_dm;
    const char *dev, *vg; /* vg NULL: no separate VG command */
  } cases[] = {
    {FF_DIALECT_EVENT, 1,
     "pvscan --cache --listvg --checkcomplete --vgonline --autoactivation "
     "event --udevoutput /dev/loop7",
     "vgchange -aay --autoactivation event --driverloaded n vg1"},
    {FF_DIALECT_EVENT, 0,
     "pvscan --cache --listvg --checkcomplete --vgonline --autoactivation "
     "event --udevoutput /dev/loop7",
     "vgchange -aay --autoactivation event vg1"},
    {FF_DIALECT_EVENT_2_03_14, 1,
     "pvscan --cache --listvg --checkcomplete --vgonline --udevoutput "
     "/dev/loop7",
     "vgchange -aay --nohints --driverloaded n vg1"},
    {FF_DIALECT_PVSCAN_AY, 1,
     "pvscan --cache --activate ay --driverloaded n 7:12", NULL},
    {FF_DIALECT_PVSCAN_AY, 0, "pvscan --cache --activate ay 7:12", NULL},
    {FF_DIALECT_LVMETAD, 1,
     "pvscan --cache --activate ay --driverloaded n 7:12", NULL},
  };
  const char *argv[16];
  char buf[512];
  int n;

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    n = ff_event_device_argv(cases[i].d, cases[i].no_dm, "/dev/loop7", "7:12",
                             argv);
    assert_true(n > 0);
    joined(argv, n, buf, sizeof buf);
    assert_string_equal(buf, cases[i].dev);
    n = ff_event_vg_argv(cases[i].d, cases[i].no_dm, "vg1", argv);
    if (!cases[i].vg) {
      assert_int_equal(n, 0);
      continue;
    }
    joined(argv, n, buf, sizeof buf);
    assert_string_equal(buf, cases[i].vg);
  }
  assert_int_equal(
    ff_event_device_argv(FF_DIALECT_NONE, 1, "/dev/loop7", "7:12", argv), 0);
  assert_int_equal(ff_event_vg_argv(FF_DIALECT_NONE, 1, "vg1", argv), 0);
  assert_non_null(strstr(ff_event_command(FF_DIALECT_PVSCAN_AY, 1),
                         "pvscan --cache --activate ay"));
  assert_null(strstr(ff_event_command(FF_DIALECT_PVSCAN_AY, 1), "--listvg"));
  assert_non_null(strstr(ff_event_command(FF_DIALECT_LVMETAD, 0), "lvmetad"));
}

/* The line that says what failed, not lvm's warnings before it. */
static void
test_error_line(void **state)
{
  static const char *const cases[][2] = {
    {"  Configuration setting \"devices/use_devicesfile\" unknown.\n"
     "  Configuration setting \"devices/hints\" unknown.\n"
     "  Volume group \"vg9\" not found\n"
     "  Cannot process volume group vg9\n",
     "Volume group \"vg9\" not found"},
    {"  WARNING: Failed to connect to lvmetad. Falling back to device "
     "scanning.\npvscan: unrecognized option '--listvg'\n",
     "pvscan: unrecognized option '--listvg'"},
    {"File descriptor 5 (/dev/null) leaked on lvm invocation.\n"
     "  /dev/loop3: open failed: No such device\n",
     "/dev/loop3: open failed: No such device"},
    {"  WARNING: only a warning\n", "WARNING: only a warning"},
    {"", "(no message)"},
    {"\n\n  io_setup failed\n", "io_setup failed"},
    {"  WARNING: Activation disabled. No device-mapper interaction will be "
     "attempted.\n  Devices file /dev/loop383 is excluded: device is an md "
     "component.\n  PVID x1 last written to /dev/sd0002\n  pvscan[12] VG "
     "vg0002 "
     "not using quick activation.\n  Volume group \"ffnovg\" not found\n",
     "Volume group \"ffnovg\" not found"},
  };
  char buf[256];

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ff_lvm_error_line(cases[i][0], buf, sizeof buf);
    assert_string_equal(buf, cases[i][1]);
  }
  ff_lvm_error_line(NULL, buf, sizeof buf);
  assert_string_equal(buf, "(no message)");
}

/* An lvm stub (f->dir/lvm-fail, its path into path) that warns of an
 * unknown setting, as an old build does, then runs tail. */
static void
failing_lvm(struct fixture *f, const char *tail, char *path, size_t len)
{
  FILE *fp;

  snprintf(path, len, "%s/lvm-fail", f->dir);
  fp = fopen(path, "w");
  assert_non_null(fp);
  fprintf(fp,
          "#!/bin/sh\n"
          "echo '  Configuration setting \"devices/hints\" unknown.' >&2\n"
          "%s",
          tail);
  assert_int_equal(fclose(fp), 0);
  assert_int_equal(chmod(path, 0755), 0);
}

/* A failing command: the run counts it and keeps its real error line. */
static void
test_failed_command_message(void **state)
{
  struct fixture *f = *state;
  const struct ff_workload w = {
    .name = (char *)"pvs",
    .type = FF_W_PVS,
    .repeat = 2,
  };
  char lvm[PATH_MAX + 16], *text;
  const char *msg;
  struct ff_wenv e = {.outdir = f->out};
  struct ff_wresult *res = ff_wresult_new();
  json_t *wl, *run;

  failing_lvm(f,
              "echo \"  Failed to find device for physical volume $1\" "
              ">&2\nexit 5\n",
              lvm, sizeof lvm);
  e.lvm = lvm;
  assert_non_null(res);
  assert_int_equal(ff_workload_run(&e, &w, res), 0);
  assert_int_equal(ff_wresult_failed(res, &msg), 2);
  assert_string_equal(msg, "Failed to find device for physical volume pvs");
  text = ff_wresult_json_text(res);
  assert_non_null(text);
  wl = json_loads(text, 0, NULL);
  assert_non_null(wl);
  run = json_array_get(json_object_get(wl, "runs"), 1);
  assert_int_equal(json_integer_value(json_object_get(run, "exit")), 5);
  assert_int_equal(json_integer_value(json_object_get(run, "errors")), 1);
  assert_string_equal(json_string_value(json_object_get(run, "message")),
                      "Failed to find device for physical volume pvs");
  json_decref(wl);
  free(text);
  ff_wresult_free(res);
}

/* A command killed by a signal is reported as such, not by the warning
 * it printed before it crashed. */
static void
test_killed_command_message(void **state)
{
  struct fixture *f = *state;
  const struct ff_workload w = {
    .name = (char *)"pvs",
    .type = FF_W_PVS,
    .repeat = 1,
  };
  char lvm[PATH_MAX + 16];
  const char *msg;
  struct ff_wenv e = {.outdir = f->out};
  struct ff_wresult *res = ff_wresult_new();

  failing_lvm(f, "kill -SEGV $$\n", lvm, sizeof lvm);
  e.lvm = lvm;
  assert_non_null(res);
  assert_int_equal(ff_workload_run(&e, &w, res), 0);
  assert_int_equal(ff_wresult_failed(res, &msg), 1);
  assert_string_equal(msg, "killed by signal 11 (Segmentation fault)");
  ff_wresult_free(res);
}

/* The io workload against a stub fio: it prints tests/data's real fio
 * document (or, with the job's rw = write, fails as fio does); what
 * fio reported lands in each run's "io", the farm's counters of the
 * target in io.farm; a target that is not there, a failing or missing
 * fio are failed commands with their message; an LV target with no
 * device-mapper is refused. */
static int
io_counters(void *ctx, const char *dev, struct ff_wcounters *out)
{
  (void)ctx;
  memset(out, 0, sizeof *out);
  out->reads = dev ? 132 : 140;
  out->writes = dev ? 124 : 130;
  out->flushes = 3;
  return 0;
}

static json_t *
io_run_json(const struct ff_wenv *e, const struct ff_workload *w, int want)
{
  struct ff_wresult *res = ff_wresult_new();
  char *text;
  json_t *wl;

  assert_non_null(res);
  assert_int_equal(ff_workload_run(e, w, res), want);
  text = ff_wresult_json_text(res);
  assert_non_null(text);
  wl = json_loads(text, 0, NULL);
  assert_non_null(wl);
  free(text);
  ff_wresult_free(res);
  return wl;
}

static void
test_io_workload(void **state)
{
  struct fixture *f = *state;
  const char *data = getenv("FF_TEST_DATA");
  char fio[PATH_MAX + 16], dev0[PATH_MAX + 16], nofio[PATH_MAX + 16];
  char *names[] = {(char *)"pv0", (char *)"pv1"}, *paths[] = {dev0, NULL};
  struct ff_workload w = {
    .name = (char *)"rr",
    .type = FF_W_IO,
    .repeat = 2,
    .io = {.target = (char *)"pv0",
           .rw = (char *)"randrw",
           .bs = 4096,
           .iodepth = 4,
           .direct = 1,
           .ioengine = (char *)"libaio",
           .size = 1 << 20,
           .numjobs = 1},
  };
  struct ff_wenv e = {.outdir = f->out,
                      .fio = fio,
                      .ndevs = 2,
                      .names = names,
                      .paths = paths,
                      .counters = io_counters};
  json_t *wl, *run, *io;
  FILE *fp;

  (void)state;
  if (!data)
    fail_msg("FF_TEST_DATA is not set (ctest sets it to tests/data)");
  snprintf(fio, sizeof fio, "%s/fio", f->dir);
  snprintf(dev0, sizeof dev0, "%s/dev0", f->dir);
  snprintf(nofio, sizeof nofio, "%s/no-such-fio", f->dir);
  fp = fopen(dev0, "w");
  assert_non_null(fp);
  assert_int_equal(fclose(fp), 0);
  fp = fopen(fio, "w");
  assert_non_null(fp);
  fprintf(fp,
          "#!/bin/sh\n"
          "[ \"$1\" = --output-format=json ] || exit 9\n"
          "grep -qx 'filename=%s' \"$2\" || exit 8\n"
          "if grep -qx rw=write \"$2\"; then\n"
          "  echo 'fio: pid=1, err=5/file:io_u.c:1889, func=io_u error, "
          "error=Input/output error' >&2; exit 1\n"
          "fi\n"
          "echo 'note: a warning before the document'\n"
          "cat '%s/fio-randrw.json'\n",
          dev0, data);
  assert_int_equal(fclose(fp), 0);
  assert_int_equal(chmod(fio, 0755), 0);

  wl = io_run_json(&e, &w, 0);
  assert_string_equal(json_string_value(json_object_get(wl, "target")), "pv0");
  assert_non_null(strstr(json_string_value(json_object_get(wl, "command")),
                         "fio --output-format=json JOB (rw=randrw bs=4K"));
  assert_int_equal(json_integer_value(json_object_get(wl, "flushes")), 3);
  assert_int_equal(json_array_size(json_object_get(wl, "runs")), 2);
  run = json_array_get(json_object_get(wl, "runs"), 1);
  assert_int_equal(json_integer_value(json_object_get(run, "errors")), 0);
  assert_int_equal(json_integer_value(json_object_get(run, "writes")), 130);
  io = json_object_get(run, "io");
  assert_non_null(io);
  assert_string_equal(json_string_value(json_object_get(io, "path")), dev0);
  assert_int_equal(
    json_integer_value(json_object_get(json_object_get(io, "read"), "ios")),
    132);
  assert_int_equal(
    json_integer_value(json_object_get(json_object_get(io, "write"), "ios")),
    124);
  assert_int_equal(json_integer_value(json_object_get(io, "error")), 0);
  assert_int_equal(
    json_integer_value(json_object_get(json_object_get(io, "farm"), "reads")),
    132);
  json_decref(wl);

  /* fio fails: its first stderr line, no "io" */
  w.io.rw = (char *)"write";
  wl = io_run_json(&e, &w, 0);
  run = json_array_get(json_object_get(wl, "runs"), 0);
  assert_int_equal(json_integer_value(json_object_get(run, "exit")), 1);
  assert_int_equal(json_integer_value(json_object_get(run, "errors")), 1);
  assert_null(json_object_get(run, "io"));
  assert_non_null(strstr(json_string_value(json_object_get(run, "message")),
                         "error=Input/output error"));
  json_decref(wl);

  /* targets that are not there */
  w.io.rw = (char *)"randrw";
  w.io.target = (char *)"pv1";
  wl = io_run_json(&e, &w, 0);
  run = json_array_get(json_object_get(wl, "runs"), 0);
  assert_string_equal(json_string_value(json_object_get(run, "message")),
                      "target pv1: the device is not present");
  json_decref(wl);
  w.io.target = (char *)"pv7";
  wl = io_run_json(&e, &w, 0);
  run = json_array_get(json_object_get(wl, "runs"), 0);
  assert_string_equal(json_string_value(json_object_get(run, "message")),
                      "target pv7: no such device in the farm");
  json_decref(wl);

  /* no fio */
  w.io.target = (char *)"pv0";
  e.fio = nofio;
  wl = io_run_json(&e, &w, 0);
  run = json_array_get(json_object_get(wl, "runs"), 0);
  assert_int_equal(json_integer_value(json_object_get(run, "exit")), 127);
  assert_non_null(strstr(json_string_value(json_object_get(run, "message")),
                         "(install fio, or set $FF_FIO)"));
  json_decref(wl);

  /* an LV without device-mapper: refused, nothing run */
  e.fio = fio;
  e.no_dm = 1;
  w.io.target = (char *)"vg0/lv0";
  wl = io_run_json(&e, &w, -1);
  assert_non_null(strstr(ff_errmsg(), "target vg0/lv0 is an LV"));
  assert_non_null(strstr(ff_errmsg(), "fusefarm vm"));
  assert_null(json_object_get(wl, "runs"));
  json_decref(wl);
}

/* Which io and fs targets run here: without device-mapper (no_dm) an LV
 * or the RAM disk is refused with ff_error naming the workload, target
 * and `fusefarm vm`; anything else passes and leaves the last error. */
static void
test_io_target_check(void **state)
{
  static const struct {
    enum ff_wtype type;
    const char *target;
    int no_dm, want;
    const char *msg;
  } cases[] = {
    {FF_W_IO, "pv0", 1, 0, NULL},
    {FF_W_FS, "pv0", 1, 0, NULL},
    {FF_W_IO, "vg0/lv0", 0, 0, NULL},
    {FF_W_IO, FF_IO_RAM_TARGET, 0, 0, NULL},
    {FF_W_PVS, "vg0/lv0", 1, 0, NULL},
    {FF_W_IO, "vg0/lv0", 1, -1,
     "workload w: target vg0/lv0 is an LV: LV targets need device-mapper, "
     "which this kernel lacks; run the scenario with `fusefarm vm` (a guest "
     "with real device-mapper)"},
    {FF_W_FS, FF_IO_RAM_TARGET, 1, -1,
     "workload w: target ram is the guest's RAM disk, which only `fusefarm "
     "vm` has"},
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct ff_workload w = {.name = (char *)"w", .type = cases[i].type};

    w.io.target = (char *)cases[i].target;
    ff_error("before");
    assert_int_equal(ff_io_target_check(&w, cases[i].no_dm), cases[i].want);
    assert_string_equal(ff_errmsg(), cases[i].msg ? cases[i].msg : "before");
  }
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_arrivals_on_schedule, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_queue_order, setup, teardown),
    cmocka_unit_test_setup_teardown(test_spread_queued, setup, teardown),
    cmocka_unit_test_setup_teardown(test_other_children_left_alone, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_spawn, setup, teardown),
    cmocka_unit_test(test_dialect_argv),
    cmocka_unit_test(test_error_line),
    cmocka_unit_test(test_io_target_check),
    cmocka_unit_test_setup_teardown(test_io_workload, setup, teardown),
    cmocka_unit_test_setup_teardown(test_failed_command_message, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_killed_command_message, setup,
                                    teardown),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
