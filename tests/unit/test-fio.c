/* ff-fio: the io workload's job file and fio's JSON read back.  The
 * document is tests/data/fio-randrw.json, what fio 3.33 (Debian 12)
 * printed for a 1 MiB randrw job of 4 KiB direct libaio I/Os at depth
 * 4 on a file; the values below are copied from it. */
#include "ff-fio.h"
#include "ff-workload.h" /* ff_slurp */
#include "ff-test.h"
#include "ff-testdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
test_parse_fixture(void **state)
{
  char *text = ff_test_data("fio-randrw.json"), *warned;
  struct ff_fio_result r;

  (void)state;
  assert_ok(ff_fio_parse(text, &r));
  assert_string_equal(r.version, "fio-3.33");
  assert_int_equal(r.error, 0);
  /* 1 MiB of 4 KiB I/Os: 256, split between the two directions */
  assert_int_equal(r.read.ios + r.write.ios, 256);
  assert_int_equal(r.read.ios, 132);
  assert_int_equal(r.write.ios, 124);
  assert_int_equal(r.read.bytes, 132 * 4096);
  assert_int_equal(r.write.bytes, 124 * 4096);
  assert_true(r.read.bw > 0 && r.write.bw > 0);
  assert_true(r.read.iops > 0 && r.write.iops > 0);
  assert_true(r.read.clat_p50_ns > 0);
  assert_true(r.read.clat_p50_ns <= r.read.clat_p99_ns);
  assert_true(r.write.clat_p50_ns > 0);
  assert_true(r.write.clat_p50_ns <= r.write.clat_p99_ns);

  /* what fio prints before its document (a warning) is skipped */
  assert_true(asprintf(&warned,
                       "fio: this platform does not support process shared "
                       "mutexes\nnote: both iodepth >= 1 and synchronous I/O "
                       "engine are selected\n%s\nfio: trailing words\n",
                       text) > 0);
  assert_ok(ff_fio_parse(warned, &r));
  assert_int_equal(r.read.ios, 132);
  free(warned);
  free(text);
}

/* No I/O one way: fio leaves that way's percentiles out. */
static void
test_parse_one_way(void **state)
{
  static const char doc[] =
    "{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": \"ff-io\","
    " \"error\": 0,"
    " \"read\": {\"io_bytes\": 8192, \"bw_bytes\": 4096000, \"iops\": 1000.5,"
    "   \"total_ios\": 2, \"clat_ns\": {\"N\": 2, \"percentile\":"
    "   {\"1.000000\": 10, \"50.000000\": 1000, \"99.000000\": 5000}}},"
    " \"write\": {\"io_bytes\": 0, \"bw_bytes\": 0, \"iops\": 0.0,"
    "   \"total_ios\": 0, \"clat_ns\": {\"N\": 0}}}]}";
  struct ff_fio_result r;

  (void)state;
  assert_ok(ff_fio_parse(doc, &r));
  assert_int_equal(r.read.clat_p50_ns, 1000);
  assert_int_equal(r.read.clat_p99_ns, 5000);
  assert_true(r.read.iops > 1000 && r.read.iops < 1001);
  assert_int_equal(r.write.ios, 0);
  assert_int_equal(r.write.clat_p50_ns, -1);
  assert_int_equal(r.write.clat_p99_ns, -1);
}

static void
test_parse_bad(void **state)
{
  static const struct {
    const char *text, *want;
  } bad[] = {
    {"", "fio output: no JSON document"},
    {"fio: pid=0, err=2/file:filesetup.c:805, func=open(/dev/x), error=No "
     "such file or directory\n",
     "no JSON document"},
    {"{\"jobs\": [", "fio output: line 1:"},
    {"{\"jobs\": []}", "no jobs[0]"},
    {"{\"jobs\": [{\"error\": 0}, {\"error\": 0}]}", "2 jobs, expected 1"},
    {"{\"jobs\": [{\"read\": {}}]}", "jobs[0]: missing \"error\""},
    {"{\"jobs\": [{\"error\": 0, \"read\": {\"bw_bytes\": 1}}]}",
     "jobs[0].read: missing \"iops\""},
    {"{\"jobs\": [{\"error\": 0, \"read\": {\"bw_bytes\": 1, \"iops\": 1,"
     " \"total_ios\": 1, \"io_bytes\": 1}}]}",
     "jobs[0]: missing \"write\""},
  };
  struct ff_fio_result r;

  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    if (ff_fio_parse(bad[i].text, &r) == 0)
      fail_msg("fio output %zu was accepted: %s", i, bad[i].text);
    if (!strstr(ff_errmsg(), bad[i].want))
      fail_msg("fio output %zu: message \"%s\" lacks \"%s\"", i, ff_errmsg(),
               bad[i].want);
  }
}

static void
test_job_file(void **state)
{
  struct ff_io_job io = {
    .target = (char *)"pv0001",
    .rw = (char *)"randwrite",
    .bs = 4096,
    .iodepth = 8,
    .direct = 1,
    .ioengine = (char *)"libaio",
    .size = 2 << 20,
    .runtime_ns = 3000000000ull,
    .fsync = 16,
    .numjobs = 2,
  };
  char dir[4096], file[4200], cmd[512], *text;

  (void)state;
  assert_int_equal(ff_test_mkscratch(dir, sizeof dir, "fio"), 0);
  snprintf(file, sizeof file, "%s/job.fio", dir);
  assert_ok(ff_fio_write_job(&io, "/dev/odd:name", file));
  text = ff_slurp(file, 4096);
  assert_string_equal(text,
                      "# fusefarm io workload (docs/scenario-format.md)\n"
                      "[global]\n"
                      "filename=/dev/odd\\:name\n"
                      "rw=randwrite\n"
                      "bs=4096\n"
                      "iodepth=8\n"
                      "direct=1\n"
                      "ioengine=libaio\n"
                      "size=2097152\n"
                      "numjobs=2\n"
                      "group_reporting=1\n"
                      "fsync=16\n"
                      "time_based=1\n"
                      "runtime=3\n"
                      "\n"
                      "[ff-io]\n");
  free(text);
  unlink(file);
  rmdir(dir);
  snprintf(file, sizeof file, "%s/no/such/dir/job.fio", dir);
  assert_int_equal(ff_fio_write_job(&io, "/dev/x", file), -1);
  assert_non_null(strstr(ff_errmsg(), "no/such/dir/job.fio: No such file"));

  ff_fio_describe(&io, cmd, sizeof cmd);
  assert_string_equal(cmd, "fio --output-format=json JOB (rw=randwrite bs=4K "
                           "iodepth=8 direct=1 ioengine=libaio size=2M "
                           "numjobs=2 fsync=16 runtime=3s on pv0001)");
}

/* An fs workload's job: fio's files in the mount point (directory=),
 * nrfiles per job, no preallocation. */
static void
test_fs_job_file(void **state)
{
  struct ff_io_job io = {
    .target = (char *)"pv0002",
    .rw = (char *)"write",
    .bs = 4096,
    .iodepth = 1,
    .ioengine = (char *)"psync",
    .size = 1 << 20,
    .fsync = 1,
    .numjobs = 8,
    .fstype = (char *)"xfs",
    .mkfs_options = (char *)"-m crc=1",
    .mount_options = (char *)"logbufs=8",
    .nrfiles = 16,
  };
  char dir[4096], file[4200], cmd[512], *text;

  (void)state;
  assert_int_equal(ff_test_mkscratch(dir, sizeof dir, "fio"), 0);
  snprintf(file, sizeof file, "%s/job.fio", dir);
  assert_ok(ff_fio_write_job(&io, "/run/x/fs-0.mnt", file));
  text = ff_slurp(file, 4096);
  assert_string_equal(text,
                      "# fusefarm io workload (docs/scenario-format.md)\n"
                      "[global]\n"
                      "directory=/run/x/fs-0.mnt\n"
                      "rw=write\n"
                      "bs=4096\n"
                      "iodepth=1\n"
                      "direct=0\n"
                      "ioengine=psync\n"
                      "size=1048576\n"
                      "numjobs=8\n"
                      "group_reporting=1\n"
                      "nrfiles=16\n"
                      "fallocate=none\n"
                      "fsync=1\n"
                      "\n"
                      "[ff-io]\n");
  free(text);
  unlink(file);
  rmdir(dir);
  ff_fio_describe(&io, cmd, sizeof cmd);
  assert_string_equal(cmd, "fio --output-format=json JOB (rw=write bs=4K "
                           "iodepth=1 direct=0 ioengine=psync size=1M "
                           "numjobs=8 nrfiles=16 fsync=1 on xfs -o logbufs=8 "
                           "(mkfs -m crc=1) of pv0002)");
  io.mkfs_options = (char *)"";
  io.mount_options = (char *)"";
  ff_fio_describe(&io, cmd, sizeof cmd);
  assert_non_null(strstr(cmd, "fsync=1 on xfs of pv0002)"));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse_fixture), cmocka_unit_test(test_parse_one_way),
    cmocka_unit_test(test_parse_bad),     cmocka_unit_test(test_job_file),
    cmocka_unit_test(test_fs_job_file),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
