/* fusefarm: the io workload's fio job file and fio's JSON (ff-fio.h). */
#include "ff-fio.h"

#include "ff-error.h"
#include "ff-file.h"
#include "ff-util.h"

#include <jansson.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int
ff_fio_write_job(const struct ff_io_job *io, const char *path,
                 const char *file)
{
  FILE *f = ff_fopen_write(file, "w");

  if (!f)
    return -1;
  fprintf(f, "# fusefarm io workload (docs/scenario-format.md)\n[global]\n");
  /* fio splits filename= and directory= at ':' (several): escape it. */
  fputs(io->fstype ? "directory=" : "filename=", f);
  for (const char *p = path; *p; p++) {
    if (*p == ':')
      fputc('\\', f);
    fputc(*p, f);
  }
  fprintf(f,
          "\nrw=%s\nbs=%" PRIu64 "\niodepth=%u\ndirect=%d\nioengine=%s\n"
          "size=%" PRIu64 "\nnumjobs=%u\ngroup_reporting=1\n",
          io->rw, io->bs, io->iodepth, io->direct ? 1 : 0, io->ioengine,
          io->size, io->numjobs);
  /* fs: nrfiles files per job, written as an application writes them
   * (no preallocation: the filesystem allocates as the data comes) */
  if (io->fstype)
    fprintf(f, "nrfiles=%u\nfallocate=none\n", io->nrfiles);
  if (io->fsync)
    fprintf(f, "fsync=%u\n", io->fsync);
  if (io->fdatasync)
    fprintf(f, "fdatasync=%u\n", io->fdatasync);
  if (io->runtime_ns)
    fprintf(f, "time_based=1\nruntime=%" PRIu64 "\n",
            io->runtime_ns / 1000000000u);
  fprintf(f, "\n[ff-io]\n");
  if (ferror(f)) {
    fclose(f);
    return ff_error("%s: write failed", file);
  }
  if (fclose(f) != 0)
    return ff_error("%s: %m", file);
  return 0;
}

/* A number member of o (integer or real) into *out. */
static int
num(const json_t *o, const char *path, const char *key, double *out)
{
  const json_t *v = json_object_get(o, key);

  if (!json_is_number(v))
    return ff_error("fio output: %s: missing \"%s\" (a number)", path, key);
  *out = json_number_value(v);
  return 0;
}

static int
parse_dir(const json_t *job, const char *key, struct ff_fio_dir *d)
{
  const json_t *o = json_object_get(job, key), *clat, *pct;
  char path[32];
  double ios = 0, bytes = 0, p = 0;

  snprintf(path, sizeof path, "jobs[0].%s", key);
  if (!json_is_object(o))
    return ff_error("fio output: jobs[0]: missing \"%s\"", key);
  if (num(o, path, "bw_bytes", &d->bw) < 0 ||
      num(o, path, "iops", &d->iops) < 0 ||
      num(o, path, "total_ios", &ios) < 0 ||
      num(o, path, "io_bytes", &bytes) < 0)
    return -1;
  d->ios = (long long)ios;
  d->bytes = (long long)bytes;
  d->clat_p50_ns = d->clat_p99_ns = -1;
  clat = json_object_get(o, "clat_ns");
  pct = json_object_get(clat, "percentile");
  /* fio leaves the percentiles out when it did no I/O this way. */
  if (!pct)
    return 0;
  if (!json_is_object(pct))
    return ff_error("fio output: %s.clat_ns.percentile: expected an object",
                    path);
  if (num(pct, path, "50.000000", &p) < 0)
    return -1;
  d->clat_p50_ns = (long long)p;
  if (num(pct, path, "99.000000", &p) < 0)
    return -1;
  d->clat_p99_ns = (long long)p;
  return 0;
}

int
ff_fio_parse(const char *text, struct ff_fio_result *out)
{
  const char *p = text;
  json_error_t err;
  json_t *doc, *jobs, *job, *e;
  int rc = 0;

  memset(out, 0, sizeof *out);
  /* The document starts at the first line that opens an object. */
  while (p && *p != '{') {
    p = strchr(p, '\n');
    if (p)
      p++;
  }
  if (!p)
    return ff_error("fio output: no JSON document");
  doc = json_loads(p, JSON_DISABLE_EOF_CHECK, &err);
  if (!doc)
    return ff_error("fio output: line %d: %s", err.line, err.text);
  jobs = json_object_get(doc, "jobs");
  job = json_array_get(jobs, 0);
  if (!json_is_object(job)) {
    json_decref(doc);
    return ff_error("fio output: no jobs[0]");
  }
  if (json_array_size(jobs) != 1) {
    size_t n = json_array_size(jobs);

    json_decref(doc);
    return ff_error("fio output: %zu jobs, expected 1 (group_reporting)", n);
  }
  e = json_object_get(job, "error");
  if (!json_is_integer(e))
    rc = ff_error("fio output: jobs[0]: missing \"error\" (an integer)");
  else
    out->error = json_integer_value(e);
  if (!rc && (parse_dir(job, "read", &out->read) < 0 ||
              parse_dir(job, "write", &out->write) < 0))
    rc = -1;
  if (json_is_string(json_object_get(doc, "fio version")))
    snprintf(out->version, sizeof out->version, "%s",
             json_string_value(json_object_get(doc, "fio version")));
  json_decref(doc);
  return rc;
}

void
ff_fio_describe(const struct ff_io_job *io, char *buf, size_t len)
{
  char bs[32], size[32], extra[96] = "", where[384];
  int n = 0;

  ff_format_size(io->bs, bs, sizeof bs);
  ff_format_size(io->size, size, sizeof size);
  /* fs: "xfs -o logbufs=8 (mkfs -m crc=0) [sysfs a=1] of pv0001" */
  if (io->fstype) {
    const char *tun = io->fs_tunables ? io->fs_tunables : "";

    n += snprintf(extra, sizeof extra, " nrfiles=%u", io->nrfiles);
    snprintf(where, sizeof where, "%s%s%s%s%s%s%s%s%s of %s", io->fstype,
             io->mount_options[0] ? " -o " : "", io->mount_options,
             io->mkfs_options[0] ? " (mkfs " : "", io->mkfs_options,
             io->mkfs_options[0] ? ")" : "", tun[0] ? " [sysfs " : "", tun,
             tun[0] ? "]" : "", io->target);
    if (io->mkdirs) {
      snprintf(buf, len, "mkdir storm (%u jobs x %u directories) in %s",
               io->numjobs, io->mkdirs, where);
      return;
    }
  } else {
    snprintf(where, sizeof where, "%s", io->target);
  }
  if (io->fsync)
    n += snprintf(extra + n, sizeof extra - (size_t)n, " fsync=%u", io->fsync);
  if (io->fdatasync && n >= 0 && (size_t)n < sizeof extra)
    n += snprintf(extra + n, sizeof extra - (size_t)n, " fdatasync=%u",
                  io->fdatasync);
  if (io->runtime_ns && n >= 0 && (size_t)n < sizeof extra)
    snprintf(extra + n, sizeof extra - (size_t)n, " runtime=%" PRIu64 "s",
             io->runtime_ns / 1000000000u);
  snprintf(buf, len,
           "fio --output-format=json JOB (rw=%s bs=%s iodepth=%u direct=%d "
           "ioengine=%s size=%s numjobs=%u%s on %s)",
           io->rw, bs, io->iodepth, io->direct ? 1 : 0, io->ioengine, size,
           io->numjobs, extra, where);
}
