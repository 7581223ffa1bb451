/* ff-flame-off: off-CPU time from `perf script` text of sched_switch
 * events (tests/data/flame-offcpu-script.txt, written by hand in perf
 * 6.1's layout): a kept thread's blocked switch-out paired with its
 * next switch-in, the time folded by the switch-out's stack in
 * microseconds; a preemption (R+) that does not count, a stranger's
 * thread left out, the farm's daemon marked, perf 6.1's ":-1  202/-1"
 * header, a switch-out never switched in (dropped), a dead thread's
 * last switch, lost events, nanoseconds rounded per stack. */
#include "ff-test.h"
#include "ff-capture.h"
#include "ff-flame.h"
#include "ff-testdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runner is 100, perf 150, the daemon 300 (305 its thread); lvm
 * 201 and 202 (204 its worker) are the runner's; lvm 400 is someone
 * else's. */
static const struct ff_flame_filter run_filter = {
  .root = 100, .skip = 150, .farm = 300};

/* 201: 100 us, then 0.7 + 0.7 us (101.4 us: 101, not 100 + 1 + 1);
 * 305 (the farm's daemon, waiting for a request): 250 us, counted in
 * farm_us and left out of the graph; 202: 1500 us; 204 never switched
 * in. */
static const char folded_want[] =
  "lvm;main;lvm_run_command;dev_read_bytes;io_schedule_[k];__schedule_[k] "
  "101\n"
  "lvm;main;poll;schedule_[k] 1500\n";

static struct ff_flame *
parse_data(const struct ff_flame_filter *flt, struct ff_flame_off *st)
{
  char *text = ff_test_data("flame-offcpu-script.txt");
  FILE *in = fmemopen(text, strlen(text), "r");
  struct ff_flame *fl = ff_flame_new();

  assert_non_null(in);
  assert_nonnull_err(fl);
  assert_ok(ff_flame_parse_offcpu(fl, in, "flame-offcpu-script.txt", flt, st));
  fclose(in);
  free(text);
  return fl;
}

static char *
folded(const struct ff_flame *fl)
{
  struct ff_capture c;

  assert_ok(ff_flame_write_folded(fl, ff_capture_open(&c)));
  return ff_capture_close(&c);
}

static void
test_pair_fold(void **state)
{
  struct ff_flame_off st;
  struct ff_flame *fl = parse_data(&run_filter, &st);
  char *text = folded(fl);

  (void)state;
  assert_string_equal(text, folded_want);
  assert_int_equal(ff_flame_samples(fl), 1601);
  assert_string_equal(ff_flame_unit(fl), "us");
  assert_int_equal(st.events, 14);
  assert_int_equal(ff_flame_seen(fl), 14);
  assert_int_equal(st.blocked, 6);
  assert_int_equal(st.paired, 5);
  assert_int_equal(st.unpaired, 1);
  assert_int_equal(st.preempted, 1);
  assert_int_equal(st.lost, 3);
  assert_int_equal(st.blocked_ns, 1851400);
  assert_int_equal(st.farm_us, 250);
  free(text);
  ff_flame_free(fl);

  /* No filter: the stranger's 400 counts too (blocked from 1.00005 to
   * 1.1: 99950 us; its last switch-out is never paired), and the
   * daemon's frames are not the farm's. */
  fl = parse_data(NULL, &st);
  text = folded(fl);
  assert_non_null(strstr(text, "\nlvm;main;io_schedule_[k] 99950\n"));
  assert_non_null(strstr(text, "fusefarm;fuse_session_loop_mt;"));
  assert_null(strstr(text, "_[f]"));
  assert_int_equal(ff_flame_samples(fl), 1851 + 99950);
  assert_int_equal(st.unpaired, 2);
  assert_int_equal(st.preempted, 1);
  free(text);
  ff_flame_free(fl);
}

/* The SVG of a set in microseconds says so. */
static void
test_svg_unit(void **state)
{
  struct ff_flame *fl = parse_data(&run_filter, NULL);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);

  (void)state;
  assert_non_null(out);
  assert_ok(ff_flame_svg(fl, NULL, "w: off-CPU", out, NULL));
  fclose(out);
  assert_non_null(strstr(buf, "<title>all (all): 1601 us, 100.00%</title>"));
  assert_non_null(strstr(buf, ">1601 microseconds blocked;"));
  free(buf);
  ff_flame_free(fl);
}

/* A switch-out while the thread is still switched out (its switch-in
 * lost) drops the first; a switch-in earlier than its switch-out (out
 * of order) counts nothing. */
static void
test_lost_switch_in(void **state)
{
  static const char text[] =
    "lvm 7/7 2.000000000: sched:sched_switch: prev_comm=lvm prev_pid=7 "
    "prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 "
    "next_prio=120\n"
    "\tffffffff81000100 first ([kernel.kallsyms])\n"
    "\n"
    "lvm 7/7 3.000000000: sched:sched_switch: prev_comm=lvm prev_pid=7 "
    "prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 "
    "next_prio=120\n"
    "\tffffffff81000200 second ([kernel.kallsyms])\n"
    "\n"
    "swapper 0/0 3.000002000: sched:sched_switch: prev_comm=swapper/0 "
    "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=lvm next_pid=7 "
    "next_prio=120\n"
    "lvm 7/7 4.000000000: sched:sched_switch: prev_comm=lvm prev_pid=7 "
    "prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 "
    "next_prio=120\n"
    "swapper 0/0 3.500000000: sched:sched_switch: prev_comm=swapper/0 "
    "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=lvm next_pid=7 "
    "next_prio=120\n";
  struct ff_flame *fl = ff_flame_new();
  FILE *in = fmemopen((void *)text, strlen(text), "r");
  struct ff_flame_off st;
  char *got;

  (void)state;
  assert_ok(ff_flame_parse_offcpu(fl, in, "p", NULL, &st));
  fclose(in);
  got = folded(fl);
  assert_string_equal(got, "lvm;second_[k] 2\n");
  assert_int_equal(st.events, 5);
  assert_int_equal(st.blocked, 3);
  assert_int_equal(st.paired, 1);
  assert_int_equal(st.unpaired, 2);
  free(got);
  ff_flame_free(fl);
}

static void
test_bad_input(void **state)
{
  static const struct {
    const char *text, *error;
  } cases[] = {
    {"\tffffffff81000100 f ([kernel.kallsyms])\n",
     "p line 1: a frame outside an event"},
    {"lvm 1/1 1.0: sched:sched_switch: prev_comm=lvm prev_pid=1 "
     "prev_state=S ==> next_comm=x\n",
     "p line 1: expected COMM PID/TID TIME: sched:sched_switch:"},
    {"lvm 1/1 soon: sched:sched_switch: prev_comm=lvm prev_pid=1 "
     "prev_state=S ==> next_comm=x next_pid=2\n",
     "p line 1: expected COMM PID/TID TIME"},
    {"[ perf record: woken up ]\n", "p line 1: expected COMM PID/TID"},
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct ff_flame *fl = ff_flame_new();
    FILE *in = fmemopen((void *)cases[i].text, strlen(cases[i].text), "r");

    assert_int_equal(ff_flame_parse_offcpu(fl, in, "p", NULL, NULL), -1);
    if (strncmp(ff_errmsg(), cases[i].error, strlen(cases[i].error)))
      fail_msg("case %zu: '%s', want '%s...'", i, ff_errmsg(), cases[i].error);
    fclose(in);
    ff_flame_free(fl);
  }
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pair_fold),
    cmocka_unit_test(test_svg_unit),
    cmocka_unit_test(test_lost_switch_in),
    cmocka_unit_test(test_bad_input),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
