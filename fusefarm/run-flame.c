/* fusefarm: `fusefarm run --flamegraph` (or the scenario's `flamegraph =
 * true`): where each workload's time goes, per configuration
 * (docs/report.md, "Where the time goes").
 *
 * For every configuration and workload, perf (runner/ff-perf.h) is
 * started before the workload with its events off, switched on at the
 * end of the first repetition's cold start (wenv_cold: so the untimed
 * teardown of the last repetition is not in it) and off at the start of
 * the second one's, or when the workload returns; then its samples are
 * folded (runner/ff-flame.h), keeping the processes the runner started
 * (lvm, fio, mkfs, lvmetad, the aio companion: its descendants by
 * perf's fork events, perf itself not) and the farm's FUSE daemon, whose
 * frames are marked as the farm's.  Each gives
 * flame-<config>-<workload>.folded and .svg beside the run document,
 * listed in its "flame" member (docs/run-json.md).
 *
 * Off-CPU time: where the kernel lets perf record sched:sched_switch
 * (ff_perf_probe_sched: tracefs), a second perf records every switch,
 * with call graphs, over the same span (switched on and off with the
 * first); the workload's threads' blocked time, paired switch-out to
 * switch-in (ff_flame_parse_offcpu), gives flame-off-<config>-<workload>
 * .folded and .svg, counts in microseconds, in the graph's "offcpu"
 * member.  Where it cannot, the run goes on with on-CPU graphs and each
 * "offcpu" says why under "error".
 *
 * Perf that is missing or cannot record here is said once, and the run
 * goes on without graphs; --flamegraph asked for them, so it stops the
 * run before anything runs (exit 2).  A graph that fails later (perf
 * died, its text did not parse) is said and recorded in its entry, and
 * the run goes on.  One struct run_flame per run; no threads.
 */
#include "run-int.h"
#include "ff-flame.h"
#include "ff-perf.h"

enum { FL_IDLE, FL_ARMED, FL_RECORDING, FL_STOPPED };

struct run_flame {
  char perf[PATH_MAX];
  char outdir[PATH_MAX];  /* where the files go: the document's dir */
  char workdir[PATH_MAX]; /* scratch: perf.data, the script text */
  json_t *graphs;         /* the document's flame.graphs, so far */
  struct ff_perf p;
  pid_t perf_pid;
  int state;
  /* off-CPU: the second perf, its state (FL_*), why there is none */
  char offdir[PATH_MAX];
  char tracefs[PATH_MAX];
  char off_unavail[512]; /* for the whole run ("" when it can) */
  char off_err[768];     /* this workload's recording failed */
  struct ff_perf po;
  pid_t off_pid;
  int off_state;
  unsigned config;
  char label[1024], workload[256];
};

int
run_flame_setup(struct run *r, int asked)
{
  struct run_flame *f;
  int mounted = 0;

  if (!asked && !r->sc->flamegraph)
    return 0;
  f = calloc(1, sizeof *f);
  if (!f) {
    fprintf(stderr, "fusefarm run: out of memory\n");
    return 1;
  }
  if (ff_perf_probe(f->perf, sizeof f->perf) < 0) {
    if (asked) {
      fprintf(stderr,
              "fusefarm run: --flamegraph: perf cannot record here: %s\n",
              ff_errmsg());
      free(f);
      return 2;
    }
    snprintf(r->flame_off, sizeof r->flame_off,
             "no flame graphs: perf cannot record here: %s", ff_errmsg());
    run_say(r, "%s (the scenario's flamegraph = true)", r->flame_off);
    free(f);
    return 0;
  }
  f->p.ctl = f->p.ack = -1;
  f->po.ctl = f->po.ack = -1;
  if (ff_perf_probe_sched(f->tracefs, sizeof f->tracefs, &mounted) < 0) {
    snprintf(f->off_unavail, sizeof f->off_unavail,
             "no off-CPU graphs: sched_switch cannot be recorded here: %s",
             ff_errmsg());
    run_say(r, "%s (on-CPU graphs only)", f->off_unavail);
  } else if (mounted) {
    run_say(r,
            "no tracefs was mounted: mounted one on %s for the "
            "off-CPU graphs (as perf does; it stays)",
            f->tracefs);
  }
  if (!(f->graphs = json_array())) {
    free(f);
    fprintf(stderr, "fusefarm run: out of memory\n");
    return 1;
  }
  r->flame = f;
  return 0;
}

void
run_flame_outdir(struct run *r, const char *json_out)
{
  if (r->flame)
    ff_dirname(json_out, r->flame->outdir, sizeof r->flame->outdir);
}

void
run_flame_doc(struct run *r, json_t *doc)
{
  json_t *fo;

  if (r->flame_off[0]) {
    json_array_append_new(json_object_get(doc, "notes"),
                          json_string(r->flame_off));
    json_object_set_new(doc, "flame",
                        json_pack("{s:s}", "error", r->flame_off));
  }
  if (!r->flame)
    return;
  fo = json_pack("{s:s, s:i, s:s, s:O}", "perf", r->flame->perf, "repetition",
                 1, "kept",
                 "the runner's descendants (lvm, fio, mkfs, lvmetad, the aio "
                 "companion; not perf) and the farm's daemon",
                 "graphs", r->flame->graphs);
  if (fo)
    json_object_set_new(
      fo, "offcpu",
      r->flame->off_unavail[0]
        ? json_pack("{s:s}", "error", r->flame->off_unavail)
        : json_pack("{s:s, s:s, s:s}", "event", "sched:sched_switch",
                    "tracefs", r->flame->tracefs, "unit", "microseconds"));
  if (fo)
    json_object_set_new(doc, "flame", fo);
}

void
run_flame_begin(struct run *r, unsigned config, const char *label,
                const char *workload)
{
  struct run_flame *f = r->flame;

  if (!f)
    return;
  f->state = FL_IDLE;
  f->config = config;
  ff_pathf(f->label, sizeof f->label, "%s", label);
  ff_pathf(f->workload, sizeof f->workload, "%s", workload);
  ff_pathf(f->workdir, sizeof f->workdir, "%s/perf", r->scratch);
  if (mkdir(f->workdir, 0700) < 0 && errno != EEXIST) {
    run_say(r, "  flame graph: mkdir %s: %m", f->workdir);
    return;
  }
  if (ff_perf_start(&f->p, f->perf, f->workdir) < 0) {
    run_say(r, "  flame graph: %s", ff_errmsg());
    return;
  }
  f->perf_pid = f->p.proc.pid;
  f->state = FL_ARMED;
  f->off_state = FL_IDLE;
  f->off_pid = 0;
  f->off_err[0] = '\0';
  if (f->off_unavail[0])
    return;
  ff_pathf(f->offdir, sizeof f->offdir, "%s/perf-off", r->scratch);
  if (mkdir(f->offdir, 0700) < 0 && errno != EEXIST) {
    ff_pathf(f->off_err, sizeof f->off_err, "mkdir %s: %m", f->offdir);
    return;
  }
  if (ff_perf_start_offcpu(&f->po, f->perf, f->offdir) < 0) {
    ff_pathf(f->off_err, sizeof f->off_err, "%s", ff_errmsg());
    return;
  }
  f->off_pid = f->po.proc.pid;
  f->off_state = FL_ARMED;
}

/* The off-CPU recording failed: said, kept for its entry. */
static void
off_failed(struct run *r, struct run_flame *f)
{
  ff_pathf(f->off_err, sizeof f->off_err, "%s", ff_errmsg());
  run_say(r, "  off-CPU graph: %s", f->off_err);
  ff_perf_kill(&f->po);
  f->off_state = FL_IDLE;
}

/* Stop the recordings; a failure is said and leaves no graph. */
static void
stop(struct run *r, struct run_flame *f)
{
  if (f->off_state == FL_RECORDING) {
    if (ff_perf_disable(&f->po) < 0 || ff_perf_stop(&f->po) < 0)
      off_failed(r, f);
    else
      f->off_state = FL_STOPPED;
  }
  if (ff_perf_disable(&f->p) < 0 || ff_perf_stop(&f->p) < 0) {
    run_say(r, "  flame graph: %s", ff_errmsg());
    ff_perf_kill(&f->p);
    f->state = FL_IDLE;
    return;
  }
  f->state = FL_STOPPED;
}

void
run_flame_cold(struct run *r, int done)
{
  struct run_flame *f = r->flame;

  if (!f)
    return;
  if (!done && f->state == FL_RECORDING) {
    stop(r, f);
  } else if (done && f->state == FL_ARMED) {
    if (ff_perf_enable(&f->p) < 0) {
      run_say(r, "  flame graph: %s", ff_errmsg());
      ff_perf_kill(&f->p);
      f->state = FL_IDLE;
      if (f->off_state == FL_ARMED)
        off_failed(r, f);
    } else {
      f->state = FL_RECORDING;
      if (f->off_state == FL_ARMED) {
        if (ff_perf_enable(&f->po) < 0)
          off_failed(r, f);
        else
          f->off_state = FL_RECORDING;
      }
    }
  }
}

/* A workload's name as a file name's part. */
static void
file_part(const char *s, char *out, size_t len)
{
  size_t k = 0;

  for (; *s && k + 1 < len; s++)
    out[k++] = isalnum((unsigned char)*s) || strchr("._-", *s) ? *s : '_';
  out[k] = '\0';
}

/* perf script of dir's recording parsed into a new graph (off: as
 * sched_switch events, their tallies into *st); NULL with ff_error.
 * perf.data and its text are large: gone as soon as folded, either way. */
static struct ff_flame *
fold(struct run *r, struct run_flame *f, const char *dir, int off,
     struct ff_flame_off *st)
{
  char script[PATH_MAX + 32], data[PATH_MAX + 32];
  struct ff_flame_filter flt = {.root = getpid(),
                                .skip = f->perf_pid,
                                .skip2 = f->off_pid,
                                .farm = r->daemon_pid};
  struct ff_flame *fl = NULL;
  FILE *in;
  int rc = -1;

  ff_pathf(script, sizeof script, "%s/script.txt", dir);
  if ((off ? ff_perf_script_offcpu : ff_perf_script)(f->perf, dir, script) <
      0) {
    /* said by ff_error */
  } else if (!(in = fopen(script, "re"))) {
    ff_error("open %s: %m", script);
  } else {
    fl = ff_flame_new();
    rc = !fl   ? -1
         : off ? ff_flame_parse_offcpu(fl, in, "perf script (sched_switch)",
                                       &flt, st)
               : ff_flame_parse_perf(fl, in, "perf script", &flt);
    fclose(in);
  }
  ff_pathf(data, sizeof data, "%s/perf.data", dir);
  unlink(data);
  unlink(script);
  if (rc < 0) {
    ff_flame_free(fl);
    return NULL;
  }
  return fl;
}

/* Save fl as OUTDIR/PREFIX-CONFIG-WORKLOAD.folded and .svg under title,
 * both named (relative to the document) in entry; -1 with ff_error. */
static int
save(struct run_flame *f, const struct ff_flame *fl, const char *prefix,
     const char *title, struct ff_flame_svg_info *info, json_t *entry)
{
  char name[300], base[PATH_MAX + 320];
  char folded[PATH_MAX + 340], svg[PATH_MAX + 340];

  file_part(f->workload, name, sizeof name);
  ff_pathf(base, sizeof base, "%s-%u-%s", prefix, f->config, name);
  ff_pathf(folded, sizeof folded, "%s/%s.folded", f->outdir, base);
  ff_pathf(svg, sizeof svg, "%s/%s.svg", f->outdir, base);
  if (ff_flame_save(fl, folded) < 0 ||
      ff_flame_svg_file(fl, NULL, title, svg, info) < 0)
    return -1;
  ff_pathf(folded, sizeof folded, "%s.folded", base);
  ff_pathf(svg, sizeof svg, "%s.svg", base);
  json_object_set_new(entry, "folded", json_string(folded));
  json_object_set_new(entry, "svg", json_string(svg));
  return 0;
}

/* Fold the recording into the two files; -1 with ff_error. */
static int
graph(struct run *r, struct run_flame *f, json_t *entry)
{
  char title[1600];
  struct ff_flame *fl = fold(r, f, f->workdir, 0, NULL);
  struct ff_flame_svg_info info;
  int rc = -1;

  ff_pathf(title, sizeof title, "%s, config %u (%s), first repetition",
           f->workload, f->config, f->label);
  if (fl && save(f, fl, "flame", title, &info, entry) == 0) {
    json_object_set_new(entry, "samples",
                        json_integer((json_int_t)ff_flame_samples(fl)));
    json_object_set_new(entry, "seen",
                        json_integer((json_int_t)ff_flame_seen(fl)));
    json_object_set_new(entry, "stacks",
                        json_integer((json_int_t)ff_flame_nstacks(fl)));
    rc = 0;
  }
  ff_flame_free(fl);
  return rc;
}

/* Fold the off-CPU recording into its two files, described in off;
 * -1 with ff_error. */
static int
graph_off(struct run *r, struct run_flame *f, json_t *off)
{
  char title[1600];
  struct ff_flame_off st;
  struct ff_flame *fl = fold(r, f, f->offdir, 1, &st);
  int rc = -1;

  ff_pathf(title, sizeof title,
           "%s, config %u (%s), first repetition: off-CPU, microseconds "
           "blocked",
           f->workload, f->config, f->label);
  if (fl && save(f, fl, "flame-off", title, NULL, off) == 0) {
    json_object_set_new(off, "blocked_us",
                        json_integer((json_int_t)ff_flame_samples(fl)));
    json_object_set_new(off, "farm_us", json_integer((json_int_t)st.farm_us));
    json_object_set_new(off, "events", json_integer((json_int_t)st.events));
    json_object_set_new(off, "lost", json_integer((json_int_t)st.lost));
    json_object_set_new(off, "waits", json_integer((json_int_t)st.paired));
    json_object_set_new(off, "unpaired",
                        json_integer((json_int_t)st.unpaired));
    json_object_set_new(off, "preempted",
                        json_integer((json_int_t)st.preempted));
    json_object_set_new(off, "stacks",
                        json_integer((json_int_t)ff_flame_nstacks(fl)));
    rc = 0;
  }
  ff_flame_free(fl);
  return rc;
}

/* The graph's "offcpu" member. */
static json_t *
offcpu_entry(struct run *r, struct run_flame *f)
{
  json_t *off = json_object();

  if (!off)
    return NULL;
  if (f->off_unavail[0]) {
    json_object_set_new(off, "error", json_string(f->off_unavail));
  } else if (f->off_state != FL_STOPPED) {
    json_object_set_new(
      off, "error", json_string(f->off_err[0] ? f->off_err : "not recorded"));
  } else if (graph_off(r, f, off) < 0) {
    run_say(r, "  off-CPU graph of %s: %s", f->workload, ff_errmsg());
    json_object_set_new(off, "error", json_string(ff_errmsg()));
  }
  f->off_state = FL_IDLE;
  return off;
}

void
run_flame_end(struct run *r)
{
  struct run_flame *f = r->flame;
  json_t *entry;

  if (!f || f->state == FL_IDLE)
    return;
  if (f->state == FL_RECORDING)
    stop(r, f);
  if (f->state == FL_ARMED) { /* no repetition ran */
    ff_perf_kill(&f->p);
    ff_perf_kill(&f->po);
    f->state = f->off_state = FL_IDLE;
    return;
  }
  if (f->state != FL_STOPPED)
    return;
  f->state = FL_IDLE;
  entry =
    json_pack("{s:i, s:s}", "config", (int)f->config, "workload", f->workload);
  if (!entry)
    return;
  if (graph(r, f, entry) < 0) {
    run_say(r, "  flame graph of %s: %s", f->workload, ff_errmsg());
    json_object_set_new(entry, "error", json_string(ff_errmsg()));
  }
  json_object_set_new(entry, "offcpu", offcpu_entry(r, f));
  json_array_append_new(f->graphs, entry);
}

void
run_flame_free(struct run *r)
{
  if (!r->flame)
    return;
  ff_perf_kill(&r->flame->p);
  ff_perf_kill(&r->flame->po);
  json_decref(r->flame->graphs);
  free(r->flame);
  r->flame = NULL;
}
