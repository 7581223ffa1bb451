/* ff-runreport: checking run documents, the text report and the CSV files
 * (docs/run-json.md, docs/report.md).  The exact outputs below are for
 * the small document `tiny`; the sample documents in tests/data (also
 * used by tests/integration/test-report.sh) are loaded and counted. */
#include "ff-test.h"
#include "ff-capture.h"
#include "ff-runreport.h"
#include "ff-testdata.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

/* Two configs; config 1 has an event activation (repeat 2) whose label
 * needs CSV quoting, config 2 a failed run and a workload config 1 does
 * not have. */
static const char tiny[] =
  "{\"format\": \"fusefarm-run\", \"version\": 1,"
  " \"scenario\": {\"name\": \"tiny\", \"file\": \"/s/tiny.conf\","
  "   \"description\": null},"
  " \"started\": \"2026-11-30T23:40:00Z\","
  " \"finished\": \"2026-11-30T23:42:10Z\","
  " \"host\": {\"kernel\": \"6.1.0\", \"cpus\": 2, \"lvm\": \"/sbin/lvm\","
  "   \"lvm_version\": \"2.03.16(2) (2022-05-18)\","
  "   \"fusefarm_version\": \"0.1.0\", \"device_mapper\": false},"
  " \"notes\": [\"a note\"],"
  " \"configs\": ["
  "  {\"id\": 1, \"label\": \"ev=1, \\\"fast\\\"\","
  "   \"settings\": {\"global/event_activation\": 1,"
  "                  \"fusefarm/profile\": \"ideal\"},"
  "   \"farm\": {\"spec\": \"x\", \"devices\": 3, \"vgs\": 1, \"lvs\": 1},"
  "   \"workloads\": ["
  "    {\"name\": \"pvs\", \"type\": \"pvs\", \"repeat\": 1,"
  "     \"runs\": [{\"wall\": 0.52, \"exit\": 0, \"errors\": 0}],"
  "     \"min\": 0.52, \"median\": 0.52, \"max\": 0.52},"
  "    {\"name\": \"ev\", \"type\": \"event-activation\", \"repeat\": 2,"
  "     \"runs\": [{\"wall\": 1.31, \"exit\": 0, \"errors\": 0},"
  "               {\"wall\": 1.2, \"exit\": 0, \"errors\": 0}],"
  "     \"min\": 1.2, \"median\": 1.255, \"max\": 1.31,"
  "     \"devices\": ["
  "      {\"device\": \"pv0\", \"vg\": \"vg0\", \"start\": 0.0,"
  "       \"end\": 0.3, \"exit\": 0, \"vg_complete\": false},"
  "      {\"device\": \"pv1\", \"vg\": \"vg0\", \"start\": 0.01,"
  "       \"end\": 0.9, \"exit\": 0, \"vg_complete\": true},"
  "      {\"device\": \"pv2\", \"vg\": null, \"start\": 0.02,"
  "       \"end\": 0.05, \"exit\": 3, \"vg_complete\": false}],"
  "     \"activations\": ["
  "      {\"vg\": \"vg0\", \"start\": 0.9, \"end\": 1.2, \"exit\": 0}]}]},"
  "  {\"id\": 2, \"label\": \"ev=0\","
  "   \"settings\": {\"global/event_activation\": 0,"
  "                  \"fusefarm/profile\": \"ideal\"},"
  "   \"farm\": {\"spec\": \"x\", \"devices\": 3, \"vgs\": 1, \"lvs\": 1},"
  "   \"workloads\": ["
  "    {\"name\": \"pvs\", \"type\": \"pvs\", \"repeat\": 1,"
  "     \"runs\": [{\"wall\": 61.25, \"exit\": 5, \"errors\": 2}],"
  "     \"min\": 61.25, \"median\": 61.25, \"max\": 61.25},"
  "    {\"name\": \"direct\", \"type\": \"direct-activation\","
  "     \"repeat\": 1,"
  "     \"runs\": [{\"wall\": 0.085, \"exit\": 0, \"errors\": 0}],"
  "     \"min\": 0.085, \"median\": 0.085, \"max\": 0.085}]}]}";

static const char tiny_text[] =
  "scenario: tiny (/s/tiny.conf)\n"
  "host: kernel 6.1.0, 2 cpus, lvm 2.03.16(2) (2022-05-18) (/sbin/lvm), n"
  "o device-mapper, fusefarm 0.1.0\n"
  "date: 2026-11-30T23:40:00Z to 2026-11-30T23:42:10Z\n"
  "farm: 3 devices, 1 VG, 1 LV\n"
  "every config: fusefarm/profile=ideal\n"
  "\n"
  "                               pvs                                 ev "
  "                           direct\n"
  "config  event_activation       median      median (min\u2013max)    sl"
  "owest pvscan  slowest vgchange   median\n"
  "     1                 1      0.520 s    1.25 s (1.20\u20131.31) !    "
  "pv1: 0.890 s      vg0: 0.300 s        -\n"
  "     2                 0  1 min 1.3 s !                   -           "
  "      -                 -  0.085 s\n"
  "\n"
  "median (min\u2013max): wall time of the workload over its repetitions "
  "(up to 2; a time alone: 1 repetition); slowest pvscan, vgchange: the "
  "longest of the last repetition\n"
  "units of ev: 4 = 3 pvscans (one per device) + 1 vgchange (one per VG "
  "the pvscans completed), config 1, last repetition\n"
  "ideal: the profile with no latency: every request is answered at once\n"
  "! config 1, ev: 1 of 4 units exited non-zero in the last repetition\n"
  "! config 2, pvs: 1 of 1 run failed (worst exit 5, 2 failed commands)\n"
  "\n"
  "verdict (ratios of wall times: the Hodges-Lehmann estimate from the "
  "repetitions with its 95% confidence interval, Mann-Whitney; an "
  "interval holding 1 is no clear difference; fewer than 4 repetitions a "
  "side are not judged):\n"
  "- event_activation=0 vs event_activation=1 (1 pair of configs "
  "differing only in it):\n"
  "    a run failed, not judged: pvs 118x\n"
  "\n"
  "slowest units: config 1 (ev=1, \"fast\"), ev, last repetition: 3 of 4"
  "\n"
  "  0.890 s  pvscan pv1 (vg0)\n"
  "  0.300 s  pvscan pv0 (vg0)\n"
  "  0.300 s  vgchange vg0\n"
  "\n"
  "notes:\n"
  "- a note\n";

static const char tiny_runs_csv[] =
  "scenario,config_id,config_label,global/event_activation,fusefarm/profile,"
  "workload,type,run,wall,exit,errors\n"
  "tiny,1,\"ev=1, \"\"fast\"\"\",1,ideal,pvs,pvs,1,0.520000,0,0\n"
  "tiny,1,\"ev=1, \"\"fast\"\"\",1,ideal,ev,event-activation,1,1.310000,0,0\n"
  "tiny,1,\"ev=1, \"\"fast\"\"\",1,ideal,ev,event-activation,2,1.200000,0,0\n"
  "tiny,2,ev=0,0,ideal,pvs,pvs,1,61.250000,5,2\n"
  "tiny,2,ev=0,0,ideal,direct,direct-activation,1,0.085000,0,0\n";

static const char tiny_units_csv[] =
  "config_id,workload,unit,device,vg,start,end,duration,exit,vg_complete\n"
  "1,ev,pvscan,pv0,vg0,0.000000,0.300000,0.300000,0,false\n"
  "1,ev,pvscan,pv1,vg0,0.010000,0.900000,0.890000,0,true\n"
  "1,ev,pvscan,pv2,,0.020000,0.050000,0.030000,3,false\n"
  "1,ev,vgchange,,vg0,0.900000,1.200000,0.300000,0,\n";

static json_t *
parse(const char *text)
{
  json_error_t e;
  json_t *j = json_loads(text, JSON_DECODE_ANY, &e);

  if (!j)
    fail_msg("test document: %d:%d: %s", e.line, e.column, e.text);
  return j;
}

/* The model of doc, loaded the way callers do: from its text. */
static struct ff_runreport *
load(const json_t *doc)
{
  char *text = json_dumps(doc, JSON_COMPACT);
  struct ff_runreport *rr;

  assert_non_null(text);
  rr = ff_runreport_load_text(text, strlen(text), NULL);
  free(text);
  return rr;
}

/* Render with fn into a string (caller frees). */
static char *
render(const struct ff_runreport *rr, int top,
       int (*csv)(const struct ff_runreport *, FILE *))
{
  struct ff_capture c;
  FILE *f = ff_capture_open(&c);

  if (csv)
    assert_ok(csv(rr, f));
  else
    assert_ok(ff_runreport_print(rr, f, top));
  return ff_capture_close(&c);
}

static void
test_tiny_model(void **state)
{
  json_t *doc = parse(tiny);
  struct ff_runreport *rr = load(doc);
  const struct ff_rr_workload *ev;

  (void)state;
  assert_nonnull_err(rr);
  assert_string_equal(rr->scenario, "tiny");
  assert_null(rr->description); /* null in the document */
  assert_int_equal(rr->cpus, 2);
  assert_int_equal(rr->device_mapper, 0);
  assert_int_equal(rr->nconfigs, 2);
  assert_int_equal(rr->nkeys, 2);
  assert_string_equal(rr->keys[0], "global/event_activation");
  assert_true(rr->varying[0]);
  assert_string_equal(rr->keys[1], "fusefarm/profile");
  assert_false(rr->varying[1]);
  ev = ff_runreport_find_workload(&rr->configs[0], "ev");
  assert_non_null(ev);
  assert_true(ev->event);
  assert_int_equal(ev->nunits, 4);
  assert_int_equal(ev->npvscan, 3);
  assert_int_equal(ev->nvgchange, 1);
  assert_null(ev->units[2].vg); /* "vg": null */
  assert_int_equal(ev->units[1].vg_complete, 1);
  assert_int_equal(ev->units[3].vg_complete, -1);
  assert_int_equal(ev->failed_units, 1);
  assert_int_equal(rr->configs[1].workloads[0].failed_runs, 1);
  assert_int_equal(rr->configs[1].workloads[0].worst_exit, 5);
  assert_null(ff_runreport_find_workload(&rr->configs[0], "direct"));
  ff_runreport_free(rr);
  json_decref(doc);
}

static void
test_tiny_text(void **state)
{
  json_t *doc = parse(tiny);
  struct ff_runreport *rr = load(doc);
  char *text;

  (void)state;
  assert_nonnull_err(rr);
  text = render(rr, 3, NULL);
  assert_string_equal(text, tiny_text);
  free(text);

  /* top 0: no list of slowest units; top 1: one line */
  text = render(rr, 0, NULL);
  assert_null(strstr(text, "slowest units:"));
  assert_non_null(strstr(text, "notes:\n- a note\n"));
  free(text);
  text = render(rr, 1, NULL);
  assert_non_null(strstr(text, "last repetition: 1 of 4\n"
                               "  0.890 s  pvscan pv1 (vg0)\n\nnotes:"));
  free(text);
  assert_int_equal(ff_runreport_print(rr, stdout, -1), -1);
  ff_runreport_free(rr);
  json_decref(doc);
}

static void
test_tiny_csv(void **state)
{
  json_t *doc = parse(tiny);
  struct ff_runreport *rr = load(doc);
  char *text;

  (void)state;
  assert_nonnull_err(rr);
  text = render(rr, 0, ff_runreport_csv_runs);
  assert_string_equal(text, tiny_runs_csv);
  free(text);
  text = render(rr, 0, ff_runreport_csv_units);
  assert_string_equal(text, tiny_units_csv);
  free(text);
  ff_runreport_free(rr);
  json_decref(doc);
}

/* --- malformed documents ----------------------------------------------- */

/* The value at path in doc: keys separated by '.', array indexes as
 * "[i]" ("configs[1].workloads[0]"); "" is doc itself. */
static json_t *
at(json_t *doc, const char *path)
{
  json_t *v = doc;
  const char *p = path;

  while (*p) {
    char key[64];
    size_t n = strcspn(p, ".[");

    if (n) {
      assert_true(n < sizeof key);
      memcpy(key, p, n);
      key[n] = '\0';
      v = json_object_get(v, key);
      p += n;
    } else if (*p == '[') {
      v = json_array_get(v, strtoul(p + 1, NULL, 10));
      p = strchr(p, ']') + 1;
    } else {
      p++;
    }
    if (!v)
      fail_msg("test: no %s in the document", path);
  }
  return v;
}

static void
test_malformed(void **state)
{
  /* Set (or with value NULL, delete) key of the object at path; the
   * load must fail with exactly want. */
  static const struct {
    const char *path, *key, *value, *want;
  } cases[] = {
    {"configs[1].workloads[0]", "median", NULL,
     "configs[1].workloads[0]: missing \"median\""},
    {"", "configs", NULL, "run document: missing \"configs\""},
    {"", "configs", "[]", "configs: empty: the run has nothing to report"},
    {"", "configs", "{}", "configs: expected an array"},
    {"", "format", "\"fusefarm-stats\"",
     "format: \"fusefarm-stats\" is not \"fusefarm-run\""},
    {"", "version", "2", "version: 2 is not supported (expected 1)"},
    {"", "started", "7", "started: expected a string"},
    {"", "finished", "7", "finished: expected a string or null"},
    {"", "error", "7", "error: expected a string or null"},
    {"", "notes", "[\"x\", 1]", "notes[1]: expected a string"},
    {"host", "kernel", NULL, "host: missing \"kernel\""},
    {"host", "cpus", "0", "host.cpus: expected an integer >= 1"},
    {"host", "device_mapper", "\"no\"",
     "host.device_mapper: expected true or false"},
    {"scenario", "description", "5",
     "scenario.description: expected a string or null"},
    {"configs[1]", "id", "1", "configs[1]: id 1 is also configs[0]'s"},
    {"configs[0]", "label", NULL, "configs[0]: missing \"label\""},
    {"configs[0].settings", "global/event_activation", "[1]",
     "configs[0].settings[\"global/event_activation\"]: expected a number, "
     "a string or a boolean"},
    {"configs[0].farm", "vgs", "-1",
     "configs[0].farm.vgs: expected an integer >= 0"},
    {"configs[0].workloads[0]", "type", "\"dd\"",
     "configs[0].workloads[0].type: unknown workload type \"dd\""},
    {"configs[1].workloads[1]", "name", "\"pvs\"",
     "configs[1].workloads[1]: name \"pvs\" is also workloads[0]'s"},
    {"configs[0].workloads[0]", "repeat", "0",
     "configs[0].workloads[0].repeat: expected an integer >= 1"},
    {"configs[0].workloads[0]", "runs", "[]",
     "configs[0].workloads[0].runs: empty"},
    {"configs[0].workloads[0]", "runs", "[1]",
     "configs[0].workloads[0].runs[0]: expected an object"},
    {"configs[0].workloads[1].runs[1]", "wall", "-0.5",
     "configs[0].workloads[1].runs[1].wall: expected a number of seconds "
     ">= 0"},
    {"configs[0].workloads[1].runs[1]", "errors", NULL,
     "configs[0].workloads[1].runs[1]: missing \"errors\""},
    {"configs[0].workloads[1]", "median", "2",
     "configs[0].workloads[1]: expected min <= median <= max, got 1.2, 2, "
     "1.31"},
    {"configs[0].workloads[1]", "devices", NULL,
     "configs[0].workloads[1]: missing \"devices\""},
    {"configs[0].workloads[1]", "activations", "{}",
     "configs[0].workloads[1].activations: expected an array"},
    {"configs[0].workloads[1].devices[1]", "end", "0.001",
     "configs[0].workloads[1].devices[1]: end 0.001 is before start 0.01"},
    {"configs[0].workloads[1].devices[1]", "vg", "5",
     "configs[0].workloads[1].devices[1].vg: expected a string or null"},
    {"configs[0].workloads[1].devices[2]", "vg_complete", NULL,
     "configs[0].workloads[1].devices[2]: missing \"vg_complete\""},
    {"configs[0].workloads[1].activations[0]", "vg", NULL,
     "configs[0].workloads[1].activations[0]: missing \"vg\""},
    {"configs[0].workloads[1].activations[0]", "exit", "0.5",
     "configs[0].workloads[1].activations[0].exit: expected an integer"},
    {"configs[0]", "slow", "[\"pv0\"]", "configs[0].slow: expected an object"},
    {"configs[0]", "slow", "{\"devices\": []}",
     "configs[0].slow: expected {\"profile\": NAME, \"devices\": [NAME, "
     "...]}"},
    {"configs[0]", "slow", "{\"profile\": \"p\", \"devices\": [\"pv0\", 1]}",
     "configs[0].slow.devices[1]: expected a device name (a string)"},
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    json_t *doc = parse(tiny), *o = at(doc, cases[i].path);
    struct ff_runreport *rr;

    if (cases[i].value)
      assert_int_equal(
        json_object_set_new(o, cases[i].key, parse(cases[i].value)), 0);
    else
      assert_int_equal(json_object_del(o, cases[i].key), 0);
    rr = load(doc);
    if (rr)
      fail_msg("case %zu (%s.%s): loaded", i, cases[i].path, cases[i].key);
    assert_string_equal(ff_errmsg(), cases[i].want);
    json_decref(doc);
  }
}

/* Apply mutation `repl` (NULL: delete) to the target-th member or
 * element of v, counting depth first in document order; 1 if applied. */
static int
mutate(json_t *v, size_t *seen, size_t target, const char *repl)
{
  if (json_is_object(v)) {
    const char *key;
    json_t *m;

    json_object_foreach(v, key, m)
    {
      if ((*seen)++ == target) {
        if (repl)
          json_object_set_new(v, key, parse(repl));
        else
          json_object_del(v, key);
        return 1;
      }
      if (mutate(m, seen, target, repl))
        return 1;
    }
  } else if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++) {
      if ((*seen)++ == target) {
        if (repl)
          json_array_set_new(v, i, parse(repl));
        else
          json_array_remove(v, i);
        return 1;
      }
      if (mutate(json_array_get(v, i), seen, target, repl))
        return 1;
    }
  }
  return 0;
}

/* Every member and element of tiny deleted or replaced by a value of
 * each JSON type: the load fails with a message or the model renders;
 * nothing crashes (run it under FF_SANITIZE too). */
static void
test_every_member(void **state)
{
  static const char *const repl[] = {
    NULL, "null", "-1", "0", "1e300", "0.5", "\"x\"", "[]", "{}", "true",
  };
  json_t *orig = parse(tiny);
  size_t loaded = 0, rejected = 0;

  (void)state;
  for (size_t r = 0; r < sizeof repl / sizeof *repl; r++)
    for (size_t target = 0;; target++) {
      json_t *doc = json_deep_copy(orig);
      struct ff_runreport *rr;
      size_t seen = 0;

      if (!mutate(doc, &seen, target, repl[r])) {
        json_decref(doc);
        break;
      }
      rr = load(doc);
      if (!rr) {
        /* a message naming a place: "path: ..." */
        if (!*ff_errmsg() || !strstr(ff_errmsg(), ": "))
          fail_msg("mutation %zu/%zu: no proper message: \"%s\"", target, r,
                   ff_errmsg());
        rejected++;
      } else {
        free(render(rr, 5, NULL));
        free(render(rr, 5, ff_runreport_csv_runs));
        free(render(rr, 5, ff_runreport_csv_units));
        ff_runreport_free(rr);
        loaded++;
      }
      json_decref(doc);
    }
  print_message("%zu mutated documents rejected, %zu rendered\n", rejected,
                loaded);
  assert_true(rejected > 500);
  assert_true(loaded > 50);
  json_decref(orig);
}

static void
test_not_a_document(void **state)
{
  static const char cut[] = "{\"format\": \"fusefarm-run\",\n \"version\"";
  static const char array[] = "[]";

  (void)state;
  assert_null(ff_runreport_load_text(NULL, 0, NULL));
  assert_string_equal(ff_errmsg(), "run document: no text");
  assert_null(ff_runreport_load_text(array, strlen(array), NULL));
  assert_string_equal(ff_errmsg(), "run document: expected a JSON object");
  assert_null(ff_runreport_load_text(array, strlen(array), "a.json"));
  assert_string_equal(ff_errmsg(),
                      "a.json: run document: expected a JSON object");
  /* The length counts, not a NUL: the first 3 bytes of tiny are cut. */
  assert_null(ff_runreport_load_text(tiny, 3, "t.json"));
  assert_true(!strncmp(ff_errmsg(), "t.json:1:3: not valid JSON: ", 28));
  assert_null(ff_runreport_load_text(cut, strlen(cut), NULL));
  assert_true(!strncmp(ff_errmsg(), "not valid JSON at line 2, column ", 33));
  assert_null(ff_runreport_load_file("/nonexistent/run.json"));
  assert_string_equal(ff_errmsg(),
                      "/nonexistent/run.json: No such file or directory");
}

/* A file is named in its errors and loads like its text. */
static void
test_load_file(void **state)
{
  char path[] = "/tmp/ff-test-runreport-XXXXXX";
  int fd = mkstemp(path);
  struct ff_runreport *rr;
  FILE *f;

  (void)state;
  assert_true(fd >= 0);
  f = fdopen(fd, "w");
  assert_non_null(f);
  assert_int_equal(
    fputs("{\"format\": \"fusefarm-run\", \"version\": 2}", f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
  assert_null(ff_runreport_load_file(path));
  assert_true(!strncmp(ff_errmsg(), path, strlen(path)));
  assert_string_equal(ff_errmsg() + strlen(path),
                      ": version: 2 is not supported (expected 1)");
  f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fputs(tiny, f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
  rr = ff_runreport_load_file(path);
  assert_nonnull_err(rr);
  assert_string_equal(rr->scenario, "tiny");
  assert_int_equal(rr->nconfigs, 2);
  ff_runreport_free(rr);
  unlink(path);
}

/* Settings are (key, text) pairs in document order, with their kind. */
static void
test_settings(void **state)
{
  json_t *doc = parse(tiny);
  struct ff_runreport *rr;
  const struct ff_rr_config *c;
  const struct ff_rr_setting *st;

  (void)state;
  json_object_set_new(at(doc, "configs[1].settings"), "x/real",
                      json_real(0.25));
  json_object_set_new(at(doc, "configs[1].settings"), "x/bool", json_true());
  rr = load(doc);
  json_decref(doc); /* the model keeps what it needs */
  assert_nonnull_err(rr);
  c = &rr->configs[0];
  assert_int_equal(c->nsettings, 2);
  assert_string_equal(c->settings[0].key, "global/event_activation");
  assert_string_equal(c->settings[0].text, "1");
  assert_int_equal(c->settings[0].kind, FF_RR_INTEGER);
  assert_string_equal(c->settings[1].key, "fusefarm/profile");
  assert_string_equal(c->settings[1].text, "ideal");
  assert_int_equal(c->settings[1].kind, FF_RR_STRING);
  c = &rr->configs[1];
  assert_int_equal(c->nsettings, 4);
  st = ff_runreport_setting(c, "x/real");
  assert_non_null(st);
  assert_string_equal(st->text, "0.25");
  assert_int_equal(st->kind, FF_RR_REAL);
  st = ff_runreport_setting(c, "x/bool");
  assert_non_null(st);
  assert_string_equal(st->text, "true");
  assert_int_equal(st->kind, FF_RR_BOOLEAN);
  assert_null(ff_runreport_setting(&rr->configs[0], "x/real"));
  assert_int_equal(rr->nkeys, 4);
  assert_true(rr->varying[2] && rr->varying[3]);
  ff_runreport_free(rr);
}

/* Optional members may be left out; the report then omits them. */
static void
test_optional_absent(void **state)
{
  static const char *const drop[][2] = {
    {"", "notes"},          {"", "finished"},
    {"scenario", "file"},   {"host", "cpus"},
    {"host", "lvm"},        {"host", "device_mapper"},
    {"configs[0]", "farm"}, {"host", "fusefarm_version"},
  };
  json_t *doc = parse(tiny);
  struct ff_runreport *rr;
  char *text;

  (void)state;
  for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
    assert_int_equal(json_object_del(at(doc, drop[i][0]), drop[i][1]), 0);
  rr = load(doc);
  assert_nonnull_err(rr);
  text = render(rr, 10, NULL);
  assert_non_null(strstr(text, "scenario: tiny\nhost: kernel 6.1.0, lvm "
                               "2.03.16(2) (2022-05-18)\ndate: "
                               "2026-11-30T23:40:00Z\nevery config:"));
  /* the farms now differ (one is unknown): a devices column */
  assert_non_null(strstr(text, "config  event_activation  devices"));
  assert_null(strstr(text, "notes:"));
  free(text);
  ff_runreport_free(rr);
  json_decref(doc);
}

/* "dm" per config (fusefarm run): the header says how activation ran,
 * once when every config ran the same way, else per config; a bad
 * member is named. */
static void
test_dm_line(void **state)
{
  json_t *doc = parse(tiny);
  struct ff_runreport *rr;
  char *text;

  (void)state;
  for (int i = 0; i < 2; i++)
    json_object_set_new(
      at(doc, i ? "configs[1]" : "configs[0]"), "dm",
      json_pack("{s:s, s:s, s:b, s:i, s:i, s:i, s:i, s:i}", "mode", "real",
                "requested", "auto", "udev_sync", 0, "activations", 2,
                "created", 2, "removed", 2, "forced", 0, "max_active", 1));
  rr = load(doc);
  assert_nonnull_err(rr);
  assert_string_equal(rr->configs[1].dm_mode, "real");
  assert_int_equal(rr->configs[0].dm_created, 2);
  text = render(rr, 0, NULL);
  assert_non_null(strstr(text, "\nactivation: real device-mapper devices "
                               "(dm = real; up to 1 at once per config), "
                               "removed before each repetition\n"));
  free(text);
  ff_runreport_free(rr);
  json_object_set_new(json_object_get(at(doc, "configs[1]"), "dm"), "mode",
                      json_string("none"));
  rr = load(doc);
  assert_nonnull_err(rr);
  text = render(rr, 0, NULL);
  assert_non_null(strstr(text, "\n  config 1: activation: real "
                               "device-mapper devices (dm = real; up to 1 "
                               "at once), removed before each repetition\n"
                               "  config 2: activation: --driverloaded n, "
                               "no device-mapper devices (dm = none)\n"));
  free(text);
  ff_runreport_free(rr);
  json_object_del(json_object_get(at(doc, "configs[0]"), "dm"), "mode");
  assert_null(load(doc));
  assert_non_null(strstr(ff_errmsg(), "configs[0].dm"));
  assert_non_null(strstr(ff_errmsg(), "mode"));
  json_decref(doc);
}

/* Many varying settings: the label replaces the settings columns. */
static void
test_label_column(void **state)
{
  static const char *const keys[] = {"a/k1", "a/k2", "a/k3", "a/k4"};
  json_t *doc = parse(tiny);
  struct ff_runreport *rr;
  char *text;

  (void)state;
  for (size_t i = 0; i < 4; i++)
    json_object_set_new(at(doc, "configs[1].settings"), keys[i],
                        json_integer((json_int_t)i));
  rr = load(doc);
  assert_nonnull_err(rr);
  assert_int_equal(rr->nkeys, 6);
  text = render(rr, 0, NULL);
  assert_non_null(strstr(text, "\nconfig  label              median"));
  assert_non_null(strstr(text, "\n     1  ev=1, \"fast\"      0.520 s"));
  free(text);
  /* missing settings are empty CSV fields */
  text = render(rr, 0, ff_runreport_csv_runs);
  assert_non_null(
    strstr(text, "tiny,1,\"ev=1, \"\"fast\"\"\",1,ideal,,,,,pvs"));
  assert_non_null(strstr(text, "tiny,2,ev=0,0,ideal,0,1,2,3,pvs"));
  free(text);
  ff_runreport_free(rr);
  json_decref(doc);
}

static void
test_fmt_secs(void **state)
{
  static const struct {
    double s;
    const char *want;
  } v[] = {
    {0, "0.000 s"},          {0.085, "0.085 s"},      {0.9994, "0.999 s"},
    {1.234, "1.23 s"},       {9.87, "9.87 s"},        {23.26, "23.3 s"},
    {59.94, "59.9 s"},       {59.96, "1 min 0.0 s"},  {126.7, "2 min 6.7 s"},
    {119.96, "2 min 0.0 s"}, {591.8, "9 min 51.8 s"}, {3600, "60 min 0.0 s"},
  };
  char buf[64];

  (void)state;
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    assert_string_equal(ff_runreport_fmt_secs(v[i].s, true, buf, sizeof buf),
                        v[i].want);
  assert_string_equal(ff_runreport_fmt_secs(1.2, false, buf, sizeof buf),
                      "1.20");
}

static void
test_paths(void **state)
{
  static const char *const v[][4] = {
    {"out.csv", ".csv", "-devices.csv", "out-devices.csv"},
    {"d.csv/out", ".csv", "-devices.csv", "d.csv/out-devices.csv"},
    {".csv", ".csv", "-x", ".csv-x"},
    {"a.svg", ".svg", "-timeline-1.svg", "a-timeline-1.svg"},
  };
  json_t *doc = parse(tiny);
  struct ff_runreport *rr;
  char *p;

  (void)state;
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
    p = ff_runreport_sibling(v[i][0], v[i][1], v[i][2]);
    assert_nonnull_err(p);
    assert_string_equal(p, v[i][3]);
    free(p);
  }
  p = ff_runreport_units_csv_path("/tmp/r.csv");
  assert_string_equal(p, "/tmp/r-devices.csv");
  free(p);

  /* one event activation in the config: its id; two: id and name */
  json_array_append_new(
    at(doc, "configs[0].workloads"),
    parse("{\"name\": \"ev/2 x\", \"type\": \"event-activation\","
          " \"repeat\": 1, \"runs\": [{\"wall\": 1, \"exit\": 0,"
          " \"errors\": 0}], \"min\": 1, \"median\": 1, \"max\": 1,"
          " \"devices\": [], \"activations\": []}"));
  rr = load(doc);
  assert_nonnull_err(rr);
  p = ff_runreport_timeline_path(&rr->configs[0], &rr->configs[0].workloads[2],
                                 "out/chart.svg");
  assert_string_equal(p, "out/chart-timeline-1-ev_2_x.svg");
  free(p);
  ff_runreport_free(rr);
  json_array_remove(at(doc, "configs[0].workloads"), 2);
  rr = load(doc);
  assert_nonnull_err(rr);
  p = ff_runreport_timeline_path(&rr->configs[0], &rr->configs[0].workloads[1],
                                 "chart");
  assert_string_equal(p, "chart-timeline-1.svg");
  free(p);
  ff_runreport_free(rr);
  json_decref(doc);
}

static void
test_order(void **state)
{
  json_t *doc = parse(tiny);
  struct ff_runreport *rr = load(doc);
  const struct ff_rr_workload *w;
  size_t *idx;

  (void)state;
  assert_nonnull_err(rr);
  w = &rr->configs[0].workloads[1];
  /* durations: pv0 0.3, pv1 0.89, pv2 0.03, vg0 0.3 (starts later) */
  idx = ff_runreport_order(w, FF_RR_BY_DURATION);
  assert_nonnull_err(idx);
  assert_int_equal(idx[0], 1);
  assert_int_equal(idx[1], 0);
  assert_int_equal(idx[2], 3);
  assert_int_equal(idx[3], 2);
  free(idx);
  idx = ff_runreport_order(w, FF_RR_BY_START);
  assert_nonnull_err(idx);
  for (size_t i = 0; i < 4; i++)
    assert_int_equal(idx[i], i);
  free(idx);
  assert_null(
    ff_runreport_order(&rr->configs[0].workloads[0], FF_RR_BY_START));
  ff_runreport_free(rr);
  json_decref(doc);
}

/* The sample documents the integration test renders. */
static void
test_samples(void **state)
{
  static const struct {
    const char *file;
    size_t configs, runs, units, lines;
  } v[] = {
    {"run-sample.json", 4, 44, 0, 28},
    {"run-event.json", 4, 24, 360, 52},
  };
  const char *dir = getenv("FF_TEST_DATA");

  (void)state;
  if (!dir)
    fail_msg("FF_TEST_DATA is not set (ctest sets it to tests/data)");
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
    char path[4096], *text;
    struct ff_runreport *rr;
    size_t n = 0;

    snprintf(path, sizeof path, "%s/%s", dir, v[i].file);
    rr = ff_runreport_load_file(path);
    assert_nonnull_err(rr);
    assert_int_equal(rr->nconfigs, v[i].configs);
    text = render(rr, 10, ff_runreport_csv_runs);
    for (char *p = text; *p; p++)
      n += *p == '\n';
    assert_int_equal(n, v[i].runs + 1);
    free(text);
    text = render(rr, 10, ff_runreport_csv_units);
    n = 0;
    for (char *p = text; *p; p++)
      n += *p == '\n';
    assert_int_equal(n, v[i].units + 1);
    free(text);
    text = render(rr, 10, NULL);
    n = 0;
    for (char *p = text; *p; p++)
      n += *p == '\n';
    assert_int_equal(n, v[i].lines);
    free(text);
    ff_runreport_free(rr);
  }
}

/* "slow" (docs/run-json.md): the units that touched a device the
 * profile made slow are exactly its pvscans and its VG's vgchanges; a
 * config under ideal has none, a document without "slow" marks none. */
static void
test_slow(void **state)
{
  static const char *const want[] = {"pv0011", "pv0026", "vg0005", "vg0013"};
  char *text = ff_test_data("run-slow.json");
  struct ff_runreport *rr = ff_runreport_load_text(text, strlen(text), NULL);
  const struct ff_rr_workload *w;
  size_t n, found = 0;
  bool *slow;
  json_t *doc;

  (void)state;
  assert_nonnull_err(rr);
  assert_int_equal(rr->nconfigs, 2);
  /* config 1: ideal, no device slow */
  assert_string_equal(rr->configs[0].slow_profile, "ideal");
  assert_int_equal(rr->configs[0].nslow, 0);
  w = ff_runreport_find_workload(&rr->configs[0], "boot-event");
  assert_ok(ff_runreport_slow_units(&rr->configs[0], w, &slow, &n));
  assert_non_null(slow);
  assert_int_equal(n, 0);
  for (size_t i = 0; i < w->nunits; i++)
    assert_false(slow[i]);
  free(slow);
  /* config 2: slow-tail, 2 of 40 devices slow */
  assert_string_equal(rr->configs[1].slow_profile, "slow-tail");
  assert_int_equal(rr->configs[1].nslow, 2);
  w = ff_runreport_find_workload(&rr->configs[1], "boot-event");
  assert_ok(ff_runreport_slow_units(&rr->configs[1], w, &slow, &n));
  assert_int_equal(n, 4);
  for (size_t i = 0; i < w->nunits; i++) {
    const char *name = ff_runreport_unit_name(&w->units[i]);
    bool listed = false;

    for (size_t k = 0; k < sizeof want / sizeof *want; k++)
      listed |= !strcmp(name, want[k]);
    if (slow[i] != listed)
      fail_msg("%s: marked %d, expected %d", name, slow[i], listed);
    found += listed;
  }
  assert_int_equal(found, 4);
  free(slow);
  /* no "slow" (documents of older runs): nothing known, nothing marked */
  doc = parse(text);
  assert_int_equal(json_object_del(at(doc, "configs[1]"), "slow"), 0);
  ff_runreport_free(rr);
  rr = load(doc);
  assert_nonnull_err(rr);
  assert_null(rr->configs[1].slow_profile);
  w = ff_runreport_find_workload(&rr->configs[1], "boot-event");
  assert_ok(ff_runreport_slow_units(&rr->configs[1], w, &slow, &n));
  assert_null(slow);
  assert_int_equal(n, 0);
  ff_runreport_free(rr);
  json_decref(doc);
  free(text);
}

/* An io workload (docs/run-json.md "io"): two configs differing in the
 * profile; the io table gives, per config and direction with I/O, the
 * median (min–max) of MB/s, IOPS and clat p50/p99 over the runs that
 * have fio's numbers (config 2's failed run has none); the CSV keeps one
 * row per run. */
static const char io_doc[] =
  "{\"format\": \"fusefarm-run\", \"version\": 1,"
  " \"scenario\": {\"name\": \"io\", \"description\": null},"
  " \"started\": \"2026-12-02T12:00:00Z\","
  " \"host\": {\"kernel\": \"6.1.0\", \"lvm_version\": \"2.03.16\"},"
  " \"configs\": ["
  "  {\"id\": 1, \"label\": \"profile=ideal\","
  "   \"settings\": {\"fusefarm/profile\": \"ideal\"},"
  "   \"workloads\": ["
  "    {\"name\": \"rw\", \"type\": \"io\", \"target\": \"pv0001\","
  "     \"repeat\": 3, \"min\": 0.4, \"median\": 0.5, \"max\": 0.6,"
  "     \"runs\": ["
#define IORUN(wall, rbw, riops, rp50, rp99, wbw, wiops)                       \
  "{\"wall\": " #wall ", \"exit\": 0, \"errors\": 0, \"io\": {"               \
  "\"read\": {\"bw\": " #rbw ", \"iops\": " #riops ", \"ios\": 256,"          \
  " \"clat_p50_ns\": " #rp50 ", \"clat_p99_ns\": " #rp99 "},"                 \
  "\"write\": {\"bw\": " #wbw ", \"iops\": " #wiops ", \"ios\": 256,"         \
  " \"clat_p50_ns\": 40000, \"clat_p99_ns\": 90000}, \"error\": 0}}"
  IORUN(0.5, 20000000, 4882.8, 50000, 120000, 10000000, 2441.4) "," IORUN(
    0.4, 30000000, 7324.2, 45000, 110000, 12000000,
    2929.7) "," IORUN(0.6, 10000000, 2441.4, 60000, 150000, 8000000,
                      1953.1) "]}]},"
                              "  {\"id\": 2, \"label\": \"profile=slow\","
                              "   \"settings\": {\"fusefarm/profile\": "
                              "\"slow\"},"
                              "   \"workloads\": ["
                              "    {\"name\": \"rw\", \"type\": \"io\", "
                              "\"target\": \"pv0001\","
                              "     \"repeat\": 2, \"min\": 2.0, \"median\": "
                              "2.5, \"max\": 3.0,"
                              "     \"runs\": ["
                              "{\"wall\": 2.0, \"exit\": 0, \"errors\": 0, "
                              "\"io\": {"
                              "\"read\": {\"bw\": 0, \"iops\": 0, \"ios\": 0,"
                              " \"clat_p50_ns\": null, \"clat_p99_ns\": null},"
                              "\"write\": {\"bw\": 1250000, \"iops\": 305.2, "
                              "\"ios\": 512,"
                              " \"clat_p50_ns\": 2240000, \"clat_p99_ns\": "
                              "14000000}, \"error\": 0}},"
                              "{\"wall\": 3.0, \"exit\": 1, \"errors\": 1,"
                              " \"message\": \"fio: no such device\"}"
                              "]}]}]}";
#undef IORUN

static void
test_io(void **state)
{
  json_t *doc = parse(io_doc), *runs;
  struct ff_runreport *rr = load(doc);
  const struct ff_rr_workload *w;
  char *text, *p;

  (void)state;
  assert_nonnull_err(rr);
  w = ff_runreport_find_workload(&rr->configs[0], "rw");
  assert_non_null(w);
  assert_true(w->io);
  assert_false(w->event);
  assert_string_equal(w->target, "pv0001");
  assert_true(w->runs[1].has_io);
  assert_int_equal(w->runs[1].io_read.clat_p50_ns, 45000);
  assert_int_equal(w->runs[1].io_write.ios, 256);
  w = ff_runreport_find_workload(&rr->configs[1], "rw");
  assert_int_equal(w->runs[0].io_read.clat_p50_ns, -1); /* null */
  assert_false(w->runs[1].has_io);
  assert_int_equal(w->failed_runs, 1);

  text = render(rr, 3, NULL);
  assert_non_null(strstr(
    text,
    "\nio (fio): median (min\u2013max) over the runs with fio's numbers; "
    "MB/s = 10^6 bytes/s; clat: completion latency\n"
    "config  profile  workload  target  runs  rw                 MB/s         "
    "     IOPS             clat p50             clat p99\n"
    "     1  ideal    rw        pv0001     3  read   20.0 (10.0\u201330.0)  "
    "4883 (2441\u20137324)  50.0 \u00b5s (45.0\u201360.0)     120 \u00b5s "
    "(110\u2013150)\n"
    "     1  ideal    rw        pv0001     3  write  10.0 (8.00\u201312.0)  "
    "2441 (1953\u20132930)  40.0 \u00b5s (40.0\u201340.0)  90.0 \u00b5s "
    "(90.0\u201390.0)\n"
    "     2  slow     rw        pv0001     1  write              1.25        "
    "       305              2.24 ms              14.0 ms\n\n"));
  free(text);
  text = render(rr, 0, ff_runreport_csv_runs);
  assert_non_null(
    strstr(text, "io,2,profile=slow,slow,rw,io,2,3.000000,1,1\n"));
  free(text);
  ff_runreport_free(rr);
  json_decref(doc);

  /* a malformed io object is named */
  doc = parse(io_doc);
  json_object_del(
    json_object_get(
      json_object_get(
        json_array_get(
          json_object_get(
            json_array_get(
              json_object_get(
                json_array_get(json_object_get(doc, "configs"), 0),
                "workloads"),
              0),
            "runs"),
          0),
        "io"),
      "read"),
    "iops");
  assert_null(load(doc));
  assert_non_null(strstr(ff_errmsg(),
                         "configs[0].workloads[0].runs[0].io.read: missing "
                         "\"iops\""));
  json_decref(doc);

  /* the farm's counters (io.farm) are two more columns, median (min–max)
   * over the runs that have them; a document without them has none */
  doc = parse(io_doc);
  runs = json_object_get(
    json_array_get(
      json_object_get(json_array_get(json_object_get(doc, "configs"), 0),
                      "workloads"),
      0),
    "runs");

  for (size_t i = 0; i < 3; i++)
    json_object_set_new(
      json_object_get(json_array_get(runs, i), "io"), "farm",
      json_pack("{s:I, s:I, s:I, s:I, s:I}", "reads", (json_int_t)256,
                "bytes_read", (json_int_t)1048576, "writes",
                (json_int_t)(256 + i), "bytes_written", (json_int_t)1048576,
                "flushes", (json_int_t)(2 * i)));
  rr = load(doc);
  assert_nonnull_err(rr);
  w = ff_runreport_find_workload(&rr->configs[0], "rw");
  assert_int_equal(w->runs[2].io_farm_writes, 258);
  assert_int_equal(w->runs[2].io_farm_flushes, 4);
  w = ff_runreport_find_workload(&rr->configs[1], "rw");
  assert_int_equal(w->runs[0].io_farm_writes, -1);
  text = render(rr, 3, NULL);
  assert_non_null(strstr(text, "  farm writes  flushes\n"));
  assert_non_null(strstr(text, "  257 (256\u2013258)  2 (0\u20134)\n"));
  /* config 2's runs have no farm counters: "-" in both columns */
  p = strstr(text, "14.0 ms");
  assert_non_null(p);
  assert_memory_equal(strchr(p, '\n') - 2, " -", 2);
  free(text);
  ff_runreport_free(rr);
  json_object_del(
    json_object_get(json_object_get(json_array_get(runs, 0), "io"), "farm"),
    "flushes");
  assert_null(load(doc));
  assert_non_null(strstr(ff_errmsg(), "runs[0].io.farm: missing \"flushes\""));
  json_decref(doc);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_tiny_model),
    cmocka_unit_test(test_tiny_text),
    cmocka_unit_test(test_tiny_csv),
    cmocka_unit_test(test_malformed),
    cmocka_unit_test(test_every_member),
    cmocka_unit_test(test_not_a_document),
    cmocka_unit_test(test_load_file),
    cmocka_unit_test(test_settings),
    cmocka_unit_test(test_optional_absent),
    cmocka_unit_test(test_label_column),
    cmocka_unit_test(test_dm_line),
    cmocka_unit_test(test_fmt_secs),
    cmocka_unit_test(test_paths),
    cmocka_unit_test(test_order),
    cmocka_unit_test(test_samples),
    cmocka_unit_test(test_io),
    cmocka_unit_test(test_slow),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
