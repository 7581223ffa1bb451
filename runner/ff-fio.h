/* fusefarm: fio for the io workload (docs/scenario-format.md): the job
 * file a scenario's io keys make, and fio's JSON output read back into
 * the numbers the run document keeps (docs/run-json.md, "io").
 *
 * fio runs as a child of ff-workload-io.c (ff-spawn.h), never here: this
 * module only writes and reads text, so its unit test needs no fio.
 *
 * INVARIANTS
 *
 * - The job file has one job section and group_reporting on, so fio's
 *   document has exactly one entry in "jobs" however many numjobs ran
 *   (their I/O summed, their latency percentiles merged by fio).
 * - The job covers [0, size) of the target from offset 0; a random
 *   pattern touches every block of it once (fio's random map), so a job
 *   that is not time_based does size / bs I/Os per job.
 *
 * ERRORS
 *
 * -1 with one message recorded by ff_error(): "JOBFILE: ...: REASON",
 * "fio output: no JSON document", "fio output: jobs[0].read: missing
 * \"bw_bytes\"".
 *
 * THREADS
 *
 * None; no global state.
 */
#ifndef FF_FIO_H
#define FF_FIO_H

#include "ff-scenario.h"

#include <stddef.h>

/* One direction of fio's job: its "read" or "write" object. */
struct ff_fio_dir {
  double bw;             /* bytes per second (bw_bytes) */
  double iops;           /* I/Os per second */
  long long ios;         /* I/Os done (total_ios) */
  long long bytes;       /* bytes moved (io_bytes) */
  long long clat_p50_ns; /* completion latency percentiles, ns; -1: no */
  long long clat_p99_ns; /* I/O this way, so no percentiles */
};

struct ff_fio_result {
  struct ff_fio_dir read, write;
  long long error;  /* the job's "error": an errno, 0 when it ran */
  char version[32]; /* "fio-3.33", "" when fio did not say */
};

/* Write the job file for io, run against path (the target's block
 * device; a ':' in it is escaped, fio's file separator), into file.  0,
 * or -1 with ff_error naming file. */
int ff_fio_write_job(const struct ff_io_job *io, const char *path,
                     const char *file);

/* Parse what `fio --output-format=json` printed on stdout (text, NUL
 * terminated).  Lines fio prints before its document (warnings) and
 * after it are skipped.  0 and *out filled, or -1 with ff_error. */
int ff_fio_parse(const char *text, struct ff_fio_result *out);

/* The workload's "command" member: "fio --output-format=json JOB
 * (rw=randread bs=4K iodepth=1 direct=1 ioengine=libaio size=16M
 * numjobs=1 on TARGET)", cut to len. */
void ff_fio_describe(const struct ff_io_job *io, char *buf, size_t len);

#endif
