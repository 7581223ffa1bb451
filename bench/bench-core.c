/* bench-core: the core library's cost, measured side by side in one run.
 *
 *   - spec load + farm build time (ff_farm_new_packed, as the servers
 *     build; best of 3) and RSS growth (of the first build) for N devices
 *     of 1 TiB;
 *   - the same for the plugin's lazy farm (ff_farm_new_lazy: no VG kept,
 *     each built again when read), built right after the first, and its
 *     synthesized reads (below) against the packed farm's;
 *   - bytes/s of synthesized reads of the first 128 KiB of every device
 *     (what lvm's label scan reads), against the same reads done with
 *     pread(2) on sparse image files that `fusefarm gen` wrote for the same
 *     farm (page cache warm), printed as a ratio;
 *   - the bytes those sparse image files hold (st_blocks), per device: what
 *     the same farm costs as files on tmpfs, next to the RSS per device;
 *   - a 4 KiB zero (NBD trim, loop discard, mkfs's zeroout:
 *     ff_farm_zero_sparse) on a device whose overlay holds ZERO_BLOCKS
 *     written blocks elsewhere (a filesystem's bitmaps after mkfs), against
 *     the same zero on a device with no writes: 1 when a zero costs what its
 *     range holds, ZERO_BLOCKS-fold when it walks the whole overlay.
 *
 * usage: bench-core [--json | --spec] [N_DEVICES] [SCRATCH_DIR]
 *        (defaults 10000, /tmp; the images go under SCRATCH_DIR)
 * --json prints one JSON object instead of the table (bench/lib.sh reads
 * it); --spec prints the farm spec of N_DEVICES and exits, so that the
 * FUSE daemon and the nbdkit plugin can be measured on the same farm.
 * Not a test: it prints figures, it asserts nothing about speed.
 */
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-spec.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_SIZE (128u * 1024)

static double
now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define ZERO_BLOCKS 32768u /* a 4 TiB ext4's block bitmaps */
#define ZEROS       2000u

/* Seconds per 4 KiB ff_farm_zero_sparse on device dev, each at its own
 * 1 MiB step from 512 GiB (blocks the writes never touch), best of 3. */
static double
zero_cost(struct ff_farm *farm, uint32_t dev)
{
  double best = 1e9;

  for (int pass = 0; pass < 3; pass++) {
    double t0 = now();

    for (unsigned i = 0; i < ZEROS; i++)
      if (ff_farm_zero_sparse(
            farm, dev, (512ull << 30) + (uint64_t)i * (1 << 20), 4096) < 0)
        return -1;
    t0 = now() - t0;
    if (t0 < best)
      best = t0;
  }
  return best / ZEROS;
}

static long
rss_kib(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;

  if (!f)
    return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &v) == 1)
      break;
  fclose(f);
  return v;
}

/* Read the first READ_SIZE bytes of every device of farm; *best: the
 * fastest pass's seconds so far.  0, or -1 with ff_errmsg(). */
static int
read_heads(const struct ff_farm *farm, char *buf, double *best)
{
  double t0 = now();

  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++)
    if (ff_farm_read(farm, d, buf, 0, READ_SIZE) < 0)
      return -1;
  t0 = now() - t0;
  if (t0 < *best)
    *best = t0;
  return 0;
}

int
main(int argc, char **argv)
{
  int json = argc > 1 && !strcmp(argv[1], "--json");
  int spec_only = argc > 1 && !strcmp(argv[1], "--spec");
  unsigned n;
  const char *scratch;
  char spec[1024], dir[4096], cmd[8192];
  struct ff_spec *sp;
  struct ff_farm *farm, *lazy;
  double t0, t_build, t_synth = 1e9, t_pread = 1e9, t_zero_busy, t_zero_empty;
  double t_lazy_build, t_lazy = 1e9;
  long rss0, rss1, rss2;
  unsigned pairs, singles;
  char *buf = malloc(READ_SIZE);
  unsigned long long img_bytes = 0;
  int *fds;

  argv += json || spec_only;
  argc -= json || spec_only;
  n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 10000;
  scratch = argc > 2 ? argv[2] : "/tmp";
  if (n < 10 || argc > 3 || !buf) {
    fprintf(stderr, "usage: bench-core [--json | --spec] [N_DEVICES >= 10] "
                    "[SCRATCH_DIR]\n");
    return 2;
  }
  pairs = n / 10;
  singles = n - 2 * pairs;
  snprintf(spec, sizeof spec,
           "seed = 1; device_size = \"1T\";\n"
           "vgs = ({ count = %u; lvs = ({ fill = 0.5; }); },\n"
           "       { count = %u; pvs = 2; lvs = ({ type = \"striped\"; "
           "fill = 0.5; }); });\n",
           singles, pairs);
  if (spec_only) {
    fputs(spec, stdout);
    return 0;
  }

  rss0 = rss_kib();
  t0 = now();
  sp = ff_spec_load_string(spec, "bench");
  farm = sp ? ff_farm_new_packed(sp) : NULL;
  t_build = now() - t0;
  ff_spec_free(sp);
  rss1 = rss_kib();
  if (!farm) {
    fprintf(stderr, "bench-core: %s\n", ff_errmsg());
    return 1;
  }
  /* The lazy farm, grown on the heap as the packed one left it. */
  t0 = now();
  sp = ff_spec_load_string(spec, "bench");
  lazy = sp ? ff_farm_new_lazy(sp) : NULL;
  t_lazy_build = now() - t0;
  rss2 = rss_kib();
  if (!lazy) {
    fprintf(stderr, "bench-core: %s\n", ff_errmsg());
    return 1;
  }
  /* Two more builds, freed at once, for the best time of three (one
   * build of a small farm takes milliseconds: one sample is noise). */
  for (int pass = 0; pass < 2; pass++) {
    struct ff_farm *again;
    double t;

    t0 = now();
    sp = ff_spec_load_string(spec, "bench");
    again = sp ? ff_farm_new_packed(sp) : NULL;
    t = now() - t0;
    ff_spec_free(sp);
    if (!again) {
      fprintf(stderr, "bench-core: %s\n", ff_errmsg());
      return 1;
    }
    ff_farm_free(again);
    if (t < t_build)
      t_build = t;
  }

  /* the lazy farm's passes alternate with the packed one's */
  for (int pass = 0; pass < 3; pass++)
    if (read_heads(farm, buf, &t_synth) < 0 ||
        read_heads(lazy, buf, &t_lazy) < 0) {
      fprintf(stderr, "bench-core: %s\n", ff_errmsg());
      return 1;
    }
  ff_farm_free(lazy);

  /* The same farm as sparse files, read with pread. */
  snprintf(dir, sizeof dir, "%s/bench-core.XXXXXX", scratch);
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  {
    char specpath[4200];
    FILE *f;

    snprintf(specpath, sizeof specpath, "%s/spec.conf", dir);
    f = fopen(specpath, "w");
    if (!f || fputs(spec, f) < 0 || fclose(f) != 0) {
      perror(specpath);
      return 1;
    }
    if (snprintf(cmd, sizeof cmd, "%s gen -q %s -o %s/img",
                 getenv("FUSEFARM") ? getenv("FUSEFARM") : "fusefarm",
                 specpath, dir) >= (int)sizeof cmd ||
        system(cmd) != 0) {
      fprintf(stderr,
              "bench-core: '%s' failed (set FUSEFARM to the "
              "fusefarm binary)\n",
              cmd);
      return 1;
    }
  }
  fds = calloc(ff_farm_ndevs(farm), sizeof *fds);
  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++) {
    char p[4400];
    struct stat st;

    snprintf(p, sizeof p, "%s/img/%s", dir, ff_farm_dev_name(farm, d));
    fds[d] = open(p, O_RDONLY);
    if (fds[d] < 0 || fstat(fds[d], &st) < 0) {
      perror(p);
      return 1;
    }
    img_bytes += (unsigned long long)st.st_blocks * 512;
  }
  for (int pass = 0; pass < 4; pass++) { /* the first pass warms the cache */
    t0 = now();
    for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++)
      if (pread(fds[d], buf, READ_SIZE, 0) != READ_SIZE) {
        perror("pread");
        return 1;
      }
    t0 = now() - t0;
    if (pass && t0 < t_pread)
      t_pread = t0;
  }
  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++)
    close(fds[d]);
  if (snprintf(cmd, sizeof cmd, "rm -rf %s", dir) >= (int)sizeof cmd ||
      system(cmd) != 0)
    fprintf(stderr, "bench-core: could not remove %s\n", dir);

  /* The zero's cost with and without a big overlay: device 0 gets
   * ZERO_BLOCKS written blocks (every 32nd block of its first 4 GiB),
   * device 1 none. */
  {
    static const unsigned char one[4096] = {1};

    for (unsigned i = 0; i < ZERO_BLOCKS; i++)
      if (ff_farm_write(farm, 0, one, (uint64_t)i * 32 * 4096, 4096) < 0) {
        fprintf(stderr, "bench-core: %s\n", ff_errmsg());
        return 1;
      }
    t_zero_busy = zero_cost(farm, 0);
    t_zero_empty = zero_cost(farm, 1);
    if (t_zero_busy < 0 || t_zero_empty < 0) {
      fprintf(stderr, "bench-core: %s\n", ff_errmsg());
      return 1;
    }
  }

  {
    double bytes = (double)ff_farm_ndevs(farm) * READ_SIZE;
    double rss_dev = (double)(rss1 - rss0) / ff_farm_ndevs(farm);
    double img_dev = (double)img_bytes / 1024 / ff_farm_ndevs(farm);
    double lazy_dev = (double)(rss2 - rss1) / ff_farm_ndevs(farm);

    if (json) {
      printf("{\"devices\": %u, \"vgs\": %u, \"build_s\": %.6f, "
             "\"rss_growth_kib\": %ld, \"rss_kib_per_device\": %.4f, "
             "\"image_kib_per_device\": %.4f, \"synth_gib_s\": %.4f, "
             "\"pread_gib_s\": %.4f, \"synth_us_per_device\": %.4f, "
             "\"pread_us_per_device\": %.4f, \"zero_us_busy\": %.4f, "
             "\"zero_us_empty\": %.4f, \"zero_busy_blocks\": %u, "
             "\"lazy_build_s\": %.6f, \"lazy_rss_kib_per_device\": %.4f, "
             "\"lazy_synth_gib_s\": %.4f, "
             "\"lazy_synth_us_per_device\": %.4f}\n",
             ff_farm_ndevs(farm), ff_farm_nvgs(farm), t_build, rss1 - rss0,
             rss_dev, img_dev, bytes / t_synth / (1 << 30),
             bytes / t_pread / (1 << 30), t_synth / ff_farm_ndevs(farm) * 1e6,
             t_pread / ff_farm_ndevs(farm) * 1e6, t_zero_busy * 1e6,
             t_zero_empty * 1e6, ZERO_BLOCKS, t_lazy_build, lazy_dev,
             bytes / t_lazy / (1 << 30), t_lazy / ff_farm_ndevs(farm) * 1e6);
    } else {
      printf("fusefarm core benchmark: %u devices of 1 TiB (%u VGs)\n",
             ff_farm_ndevs(farm), ff_farm_nvgs(farm));
      printf("  spec load + farm build     %8.3f s\n", t_build);
      printf("  RSS growth                 %8.1f MiB (%.2f KiB per device)\n",
             (double)(rss1 - rss0) / 1024, rss_dev);
      printf("  sparse images hold         %8.1f MiB (%.2f KiB per device)\n",
             (double)img_bytes / (1 << 20), img_dev);
      printf("  synthesized first 128 KiB  %8.2f GiB/s (%.1f us per device)\n",
             bytes / t_synth / (1 << 30), t_synth / ff_farm_ndevs(farm) * 1e6);
      printf("  pread of sparse images     %8.2f GiB/s (%.1f us per device)\n",
             bytes / t_pread / (1 << 30), t_pread / ff_farm_ndevs(farm) * 1e6);
      printf("  ratio synthesized / pread  %8.2f\n", t_pread / t_synth);
      printf("  lazy farm: build %.3f s, RSS %.2f KiB per device, reads "
             "%.2f GiB/s (%.1f us per device)\n",
             t_lazy_build, lazy_dev, bytes / t_lazy / (1 << 30),
             t_lazy / ff_farm_ndevs(farm) * 1e6);
      printf("  4 KiB zero, %u writes      %8.2f us (no writes: %.2f us, "
             "ratio %.2f)\n",
             ZERO_BLOCKS, t_zero_busy * 1e6, t_zero_empty * 1e6,
             t_zero_busy / t_zero_empty);
    }
  }
  free(fds);
  free(buf);
  ff_farm_free(farm);
  return 0;
}
