/* ff-report: what the charts say and where their labels go
 * (runner/ff-report-int.h, docs/report.md "SVG"), on the run documents
 * of tests/data: the line under every title names the farm, the lvm
 * build and the profile (a timeline's those of its configuration); the
 * bar and io charts label their groups by axis values ("use_aio=0"), the
 * key that changes most often nearest the axis and one label for the
 * neighbours that share a value further out; a timeline's title names
 * the scenario, the configuration by its axis values and the repetition;
 * a timeline's labels never overlap, stay inside the chart, and the
 * slowest are labelled, with few units and with 3,000. */
#include "ff-test.h"
#include "ff-testdata.h"
#include "ff-report-int.h"
#include "ff-runreport.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct ff_rr_workload *
event_workload(const struct ff_rr_config *c)
{
  for (size_t j = 0; j < c->nworkloads; j++)
    if (c->workloads[j].event)
      return &c->workloads[j];
  return NULL;
}

#define assert_contains(hay, needle)                                          \
  do {                                                                        \
    if (!strstr((hay), (needle)))                                             \
      fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));            \
  } while (0)

static void
test_context(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("run-event.json");
  char buf[512];

  (void)state;
  ff_report_context_line(rr, NULL, buf, sizeof buf);
  assert_contains(buf, "farm: 120 devices, 60 VGs, 60 LVs");
  assert_contains(buf, "lvm 2.03.16(2)");
  assert_contains(buf, "profile ideal");
  ff_runreport_free(rr);

  /* two profiles: the document's line says so, a timeline's names its
   * configuration's */
  rr = ff_test_runreport("run-slow.json");
  ff_report_context_line(rr, NULL, buf, sizeof buf);
  assert_contains(buf, "farm: 40 devices, 20 VGs, 20 LVs");
  assert_contains(buf, "profile per configuration");
  ff_report_context_line(rr, &rr->configs[1], buf, sizeof buf);
  assert_contains(buf, "farm: 40 devices");
  assert_contains(buf, "lvm 2.03.16(2)");
  assert_contains(buf, "profile slow-tail.conf");
  assert_null(strstr(buf, "per configuration"));
  ff_report_context_line(rr, &rr->configs[0], buf, sizeof buf);
  assert_contains(buf, "profile ideal");
  ff_runreport_free(rr);

  /* the configuration's lvm build (its "lvm" label) and profile */
  rr = ff_test_runreport("run-io.json");
  ff_report_context_line(rr, &rr->configs[1], buf, sizeof buf);
  assert_contains(buf, "farm: 2 devices");
  assert_contains(buf, "lvm build guest (2.03.16(2)");
  assert_contains(buf, "profile write-5ms.conf");
  ff_report_context_line(rr, NULL, buf, sizeof buf);
  assert_contains(buf, "lvm build guest;");
  ff_runreport_free(rr);
}

static void
test_axis_values(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("verdict-noise.json");
  size_t keys[FF_REPORT_AXIS_ROWS_MAX], n;
  char buf[256];

  (void)state;
  ff_report_axis_value(&rr->configs[1], "global/use_aio", buf, sizeof buf);
  assert_string_equal(buf, "use_aio=0");
  ff_report_config_name(rr, &rr->configs[0], buf, sizeof buf);
  assert_string_equal(buf, "use_aio=1");
  n = ff_report_axis_keys(rr, keys);
  assert_int_equal(n, 1);
  for (size_t i = 0; i < rr->nconfigs; i++)
    assert_int_equal(ff_report_axis_span_end(rr, keys, n, 0, i), i);
  ff_runreport_free(rr);

  /* two keys: obtain_device_list_from_udev changes at every step and is
   * nearest the axis, one label per group; event_activation under it,
   * one label per pair */
  rr = ff_test_runreport("run-event.json");
  n = ff_report_axis_keys(rr, keys);
  assert_int_equal(n, 2);
  assert_non_null(strstr(rr->keys[keys[0]], "obtain_device_list_from_udev"));
  assert_non_null(strstr(rr->keys[keys[1]], "event_activation"));
  for (size_t i = 0; i < rr->nconfigs; i++)
    assert_int_equal(ff_report_axis_span_end(rr, keys, n, 0, i), i);
  assert_int_equal(ff_report_axis_span_end(rr, keys, n, 1, 0), 1);
  assert_int_equal(ff_report_axis_span_end(rr, keys, n, 1, 2), 3);
  ff_report_axis_value(&rr->configs[2], rr->keys[keys[1]], buf, sizeof buf);
  assert_string_equal(buf, "event_activation=0");
  ff_report_config_name(rr, &rr->configs[1], buf, sizeof buf);
  assert_contains(buf, "obtain_device_list_from_udev=0");
  assert_contains(buf, "event_activation=1");
  ff_runreport_free(rr);
}

static void
test_timeline_title(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("run-slow.json");
  const struct ff_rr_config *c = &rr->configs[1];
  const struct ff_rr_workload *w = event_workload(c);
  char buf[512];

  (void)state;
  assert_non_null(w);
  ff_report_timeline_title(rr, c, w, buf, sizeof buf);
  assert_contains(buf, "boot-slow-tail: ");
  assert_contains(buf, "profile=slow-tail.conf (config 2)");
  assert_contains(buf, "repetition 3 of 3 (the last)");
  ff_runreport_free(rr);
}

static bool
meet(double ax0, double ax1, double ay0, double ay1,
     const struct ff_report_box *b)
{
  return ax0 < b->x1 && b->x0 < ax1 && ay0 < b->y1 && b->y0 < ay1;
}

/* No two of labels overlap, every one is inside the 1200 px chart and
 * beside its unit's bar, and none but the `top` slowest covers another
 * unit's bar (bars: ff_report_timeline_bars with xmax); returns how many
 * of the `top` slowest are there and in *covering how many labels cover
 * other bars. */
static size_t
check_labels(const struct ff_rr_workload *w, const struct ff_report_label *l,
             size_t n, size_t top, double xmax, size_t *covering)
{
  size_t *rank = ff_runreport_order(w, FF_RR_BY_DURATION), bold = 0;
  struct ff_report_box *bars;

  assert_non_null(rank);
  assert_ok(ff_report_timeline_bars(w, xmax, &bars));
  *covering = 0;
  for (size_t i = 0; i < n; i++) {
    const struct ff_report_box *own = &bars[l[i].unit];
    bool covers = false;

    /* on its row: the label's middle within its bar's row */
    assert_true((l[i].y0 + l[i].y1) / 2 >= own->y0 - 0.01 &&
                (l[i].y0 + l[i].y1) / 2 <= own->y0 + 14.01);
    for (size_t u = 0; u < w->nunits; u++)
      if (u != l[i].unit && meet(l[i].x0, l[i].x1, l[i].y0, l[i].y1, &bars[u]))
        covers = true;
    if (covers && !l[i].bold)
      fail_msg("label \"%s\" (not of the slowest) covers another row's bar",
               l[i].text);
    *covering += covers;
    assert_true(l[i].x0 >= 0 && l[i].x1 <= 1200 && l[i].x0 < l[i].x1);
    assert_true(l[i].y1 - l[i].y0 >= 9);
    assert_true(l[i].unit < w->nunits);
    for (size_t j = 0; j < i; j++)
      if (l[i].x0 < l[j].x1 && l[j].x0 < l[i].x1 && l[i].y0 < l[j].y1 &&
          l[j].y0 < l[i].y1)
        fail_msg("labels \"%s\" (%g..%g, %g..%g) and \"%s\" (%g..%g, "
                 "%g..%g) overlap",
                 l[i].text, l[i].x0, l[i].x1, l[i].y0, l[i].y1, l[j].text,
                 l[j].x0, l[j].x1, l[j].y0, l[j].y1);
    for (size_t k = 0; k < top && k < w->nunits; k++)
      if (rank[k] == l[i].unit) {
        assert_true(l[i].bold);
        bold++;
      }
  }
  free(rank);
  free(bars);
  return bold;
}

static void
test_labels_few(void **state)
{
  static const char *const docs[] = {"run-event.json", "run-slow.json"};

  (void)state;
  for (size_t d = 0; d < 2; d++) {
    struct ff_runreport *rr = ff_test_runreport(docs[d]);

    for (size_t i = 0; i < rr->nconfigs; i++) {
      const struct ff_rr_workload *w = event_workload(&rr->configs[i]);
      struct ff_report_label *l;
      size_t n, unplaced, covering;

      if (!w)
        continue;
      assert_ok(ff_report_timeline_labels(w, 10, 0, &l, &n, &unplaced));
      /* with 14 px rows every unit has its label */
      assert_int_equal(n, w->nunits);
      assert_int_equal(unplaced, 0);
      assert_int_equal(check_labels(w, l, n, 10, 0, &covering), 10);
      assert_int_equal(covering, 0);
      free(l);
    }
    ff_runreport_free(rr);
  }
}

/* 3,000 units in 1,200 px rows: thin rows, thinned labels, none
 * overlapping, the slowest labelled; the time axis of another
 * configuration's longer timeline (xmax) squeezes the bars. */
static void
test_labels_many(void **state)
{
  struct ff_runreport *rr = ff_test_runreport("run-event.json");
  const struct ff_rr_workload *w0 = event_workload(&rr->configs[1]);
  struct ff_rr_workload w = *w0;
  struct ff_rr_unit *u;
  struct ff_report_label *l;
  size_t n, unplaced, covering;
  unsigned seed = 1;

  (void)state;
  w.nunits = 3000;
  w.npvscan = 2000;
  w.nvgchange = 1000;
  u = calloc(w.nunits, sizeof *u);
  assert_non_null(u);
  for (size_t i = 0; i < w.nunits; i++) {
    seed = seed * 1103515245u + 12345u;
    u[i].kind = i < 2000 ? FF_RR_PVSCAN : FF_RR_VGCHANGE;
    u[i].device = i < 2000 ? "pv9999" : NULL;
    u[i].vg = "vg9999";
    u[i].start = (double)i * 0.003;
    u[i].end = u[i].start + 0.05 + (double)(seed >> 16 & 1023) / 2000.0;
    u[i].vg_complete = i < 2000 ? 0 : -1;
  }
  w.units = u;
  for (double xmax = 0; xmax <= 30; xmax += 30) {
    assert_ok(ff_report_timeline_labels(&w, 15, xmax, &l, &n, &unplaced));
    assert_true(n >= 15 && n < w.nunits / 4);
    assert_int_equal(check_labels(&w, l, n, 15, xmax, &covering) + unplaced,
                     15);
    print_message("3000 units, xmax %g: %zu labels, %zu of the slowest "
                  "unplaced, %zu covering bars\n",
                  xmax, n, unplaced, covering);
    assert_true(unplaced < 15);
    free(l);
  }
  free(u);
  ff_runreport_free(rr);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_context),        cmocka_unit_test(test_axis_values),
    cmocka_unit_test(test_timeline_title), cmocka_unit_test(test_labels_few),
    cmocka_unit_test(test_labels_many),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
