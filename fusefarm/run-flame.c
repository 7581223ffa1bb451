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
  unsigned config;
  char label[1024], workload[256];
};

int
run_flame_setup(struct run *r, int asked)
{
  struct run_flame *f;

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
}

/* Stop the recording; a failure is said and leaves no graph. */
static void
stop(struct run *r, struct run_flame *f)
{
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
    } else {
      f->state = FL_RECORDING;
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

/* Fold the recording into the two files; -1 with ff_error. */
static int
graph(struct run *r, struct run_flame *f, json_t *entry)
{
  char script[PATH_MAX + 32], name[300], base[PATH_MAX + 320];
  char folded[PATH_MAX + 340], svg[PATH_MAX + 340], title[1600];
  struct ff_flame_filter flt = {
    .root = getpid(), .skip = f->perf_pid, .farm = r->daemon_pid};
  struct ff_flame *fl = NULL;
  struct ff_flame_svg_info info;
  FILE *in;
  int rc = -1;

  ff_pathf(script, sizeof script, "%s/script.txt", f->workdir);
  if (ff_perf_script(f->perf, f->workdir, script) < 0)
    goto out;
  if (!(in = fopen(script, "re"))) {
    ff_error("open %s: %m", script);
    goto out;
  }
  fl = ff_flame_new();
  rc = fl ? ff_flame_parse_perf(fl, in, "perf script", &flt) : -1;
  fclose(in);
  if (rc < 0)
    goto out;
  file_part(f->workload, name, sizeof name);
  ff_pathf(base, sizeof base, "flame-%u-%s", f->config, name);
  ff_pathf(folded, sizeof folded, "%s/%s.folded", f->outdir, base);
  ff_pathf(svg, sizeof svg, "%s/%s.svg", f->outdir, base);
  ff_pathf(title, sizeof title, "%s, config %u (%s), first repetition",
           f->workload, f->config, f->label);
  rc = -1;
  if (ff_flame_save(fl, folded) < 0 ||
      ff_flame_svg_file(fl, NULL, title, svg, &info) < 0)
    goto out;
  ff_pathf(folded, sizeof folded, "%s.folded", base);
  ff_pathf(svg, sizeof svg, "%s.svg", base);
  json_object_set_new(entry, "folded", json_string(folded));
  json_object_set_new(entry, "svg", json_string(svg));
  json_object_set_new(entry, "samples",
                      json_integer((json_int_t)ff_flame_samples(fl)));
  json_object_set_new(entry, "seen",
                      json_integer((json_int_t)ff_flame_seen(fl)));
  json_object_set_new(entry, "stacks",
                      json_integer((json_int_t)ff_flame_nstacks(fl)));
  rc = 0;
out:
  ff_flame_free(fl);
  /* perf.data and its text are large: gone as soon as folded. */
  ff_pathf(base, sizeof base, "%s/perf.data", f->workdir);
  unlink(base);
  unlink(script);
  return rc;
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
    f->state = FL_IDLE;
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
  json_array_append_new(f->graphs, entry);
}

void
run_flame_free(struct run *r)
{
  if (!r->flame)
    return;
  ff_perf_kill(&r->flame->p);
  json_decref(r->flame->graphs);
  free(r->flame);
  r->flame = NULL;
}
