/* fusefarm: `fusefarm gen`, `fusefarm manifest`, `fusefarm check`. */
#include "ff-cfgkind.h"
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-file.h"
#include "ff-manifest.h"
#include "ff-server.h"
#include "run-check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct ff_farm *
ff_cli_load_farm(const char *cmd, const char *path)
{
  return ff_cli_load_farm_scaled(cmd, path, 0);
}

struct ff_farm *
ff_cli_load_farm_scaled(const char *cmd, const char *path, uint64_t devices)
{
  struct ff_farm *farm = ff_server_load_farm(path, devices, NULL);

  if (!farm)
    fprintf(stderr, "fusefarm %s: %s\n", cmd, ff_errmsg());
  return farm;
}

static const char gen_usage[] =
  "usage: fusefarm gen [SPEC] -o DIR [--force] [--overlay FILE]\n"
  "\n"
  "Write one sparse image file per farm device into DIR, named after the\n"
  "device (DIR/pv0000, ...).  Only the bytes that are not zero are written:\n"
  "a 1 TiB device costs a few KiB of disk.  Without SPEC, the built-in\n"
  "default farm is used.\n"
  "\n"
  "  -o, --output DIR   directory to write (created if missing)\n"
  "  -f, --force        overwrite image files that already exist\n"
  "      --overlay FILE load a saved write overlay first, so the images\n"
  "                     hold what lvm wrote to the farm\n"
  "  -q, --quiet        print nothing on success\n"
  "  -h, --help         this text\n";

static int
write_image(const struct ff_farm *farm, uint32_t dev, const char *out,
            int force)
{
  const char *name = ff_farm_dev_name(farm, dev);
  uint64_t size = ff_farm_dev_size(farm, dev);
  struct ff_range *ranges = NULL;
  size_t bufsz = 1u << 20;
  int64_t n;
  char *buf;
  char path[PATH_MAX];
  int fd, r = -1;

  if ((size_t)snprintf(path, sizeof path, "%s/%s", out, name) >= sizeof path)
    return ff_error("%s/%s: path too long", out, name);

  fd = ff_open_write(path, force ? O_TRUNC : O_EXCL);
  if (fd < 0)
    return errno == EEXIST
             ? ff_error("%s: %m (use --force to overwrite)", path)
             : -1;
  buf = malloc(bufsz);
  if (!buf) {
    ff_error("out of memory");
    goto out;
  }
  if (ftruncate(fd, (off_t)size) < 0) {
    ff_error("%s: truncate to %llu bytes: %m", path, (unsigned long long)size);
    goto out;
  }
  n = ff_farm_extents_all(farm, dev, &ranges);
  if (n < 0)
    goto out;
  for (int64_t i = 0; i < n; i++)
    for (uint64_t o = 0; o < ranges[i].len; o += bufsz) {
      uint64_t chunk = ranges[i].len - o < bufsz ? ranges[i].len - o : bufsz;
      uint64_t at = ranges[i].off + o;

      if (ff_farm_read(farm, dev, buf, at, chunk) < 0)
        goto out;
      if (pwrite(fd, buf, chunk, (off_t)at) != (ssize_t)chunk) {
        ff_error("%s: write at %llu: %m", path, (unsigned long long)at);
        goto out;
      }
    }
  r = 0;
out:
  free(ranges);
  free(buf);
  if (close(fd) < 0 && r == 0)
    r = ff_error("%s: close: %m", path);
  return r;
}

int
ff_cmd_gen(int argc, char **argv)
{
  static const struct option opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, 'f'},
    {"quiet", no_argument, NULL, 'q'},
    {"overlay", required_argument, NULL, 'O'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *out = NULL, *spec = NULL, *overlay = NULL;
  int force = 0, quiet = 0, c, dirfd, rc = 0;
  struct ff_farm *farm;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
    switch (c) {
    case 'o':
      out = optarg;
      break;
    case 'f':
      force = 1;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'O':
      overlay = optarg;
      break;
    case 'h':
      fputs(gen_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("gen", c, argv, opts);
    }
  }
  if (optind < argc)
    spec = argv[optind++];
  if (optind < argc)
    return ff_cli_usage("gen", "too many arguments (from '%s')", argv[optind]);
  if (!out)
    return ff_cli_usage("gen", "missing -o DIR");
  farm = ff_cli_load_farm("gen", spec);
  if (!farm)
    return 2;
  if (overlay && ff_farm_load_overlay(farm, overlay) < 0) {
    /* An input file that is missing, unreadable or invalid. */
    fprintf(stderr, "fusefarm gen: %s\n", ff_errmsg());
    ff_farm_free(farm);
    return 2;
  }
  if (ff_mkdir(out, 0755) < 0) {
    fprintf(stderr, "fusefarm gen: %s\n", ff_errmsg());
    ff_farm_free(farm);
    return 1;
  }
  dirfd = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0) {
    fprintf(stderr, "fusefarm gen: %s: %m\n", out);
    ff_farm_free(farm);
    return 1;
  }
  for (uint32_t i = 0; i < ff_farm_ndevs(farm); i++)
    if (write_image(farm, i, out, force) < 0) {
      fprintf(stderr, "fusefarm gen: %s\n", ff_errmsg());
      rc = 1;
      break;
    }
  close(dirfd);
  if (!rc && !quiet)
    printf("wrote %u device images (%u VGs) to %s\n", ff_farm_ndevs(farm),
           ff_farm_nvgs(farm), out);
  ff_farm_free(farm);
  return rc;
}

static const char manifest_usage[] =
  "usage: fusefarm manifest [SPEC] [--compact] [--devices N]\n"
  "\n"
  "Print the farm as JSON: every device (name, size, role, PV UUID, VG),\n"
  "every VG (name, UUID, extent size, PVs) and every LV (name, UUID,\n"
  "segments as PV + extent ranges).  docs/manifest.md describes the\n"
  "fields.  Without SPEC, the built-in default farm is used.\n"
  "\n"
  "  -c, --compact   one line instead of indented JSON\n"
  "  -D, --devices N the farm scaled to N devices, as `fusefarm\n"
  "                  mount --devices N` and the plugin's devices=N serve it\n"
  "  -h, --help      this text\n";

int
ff_cmd_manifest(int argc, char **argv)
{
  static const struct option opts[] = {
    {"compact", no_argument, NULL, 'c'},
    {"devices", required_argument, NULL, 'D'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *spec = NULL;
  int compact = 0, c, rc = 0;
  uint64_t devices = 0;
  struct ff_farm *farm;
  char *text;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":cD:h", opts, NULL)) != -1) {
    switch (c) {
    case 'c':
      compact = 1;
      break;
    case 'D': {
      unsigned long long v;

      if (ff_cli_number("manifest", "--devices", optarg, 1, 1000000, &v))
        return 2;
      devices = v;
      break;
    }
    case 'h':
      fputs(manifest_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("manifest", c, argv, opts);
    }
  }
  if (optind < argc)
    spec = argv[optind++];
  if (optind < argc)
    return ff_cli_usage("manifest", "too many arguments (from '%s')",
                        argv[optind]);
  farm = ff_cli_load_farm_scaled("manifest", spec, devices);
  if (!farm)
    return 2;
  text = ff_manifest_text(farm, compact ? FF_MANIFEST_COMPACT
                                        : FF_MANIFEST_INDENTED);
  if (!text) {
    fprintf(stderr, "fusefarm manifest: %s\n", ff_errmsg());
    rc = 1;
  } else {
    if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF ||
        fflush(stdout) == EOF) {
      fprintf(stderr, "fusefarm manifest: write: %m\n");
      rc = 1;
    }
    free(text);
  }
  ff_farm_free(farm);
  return rc;
}

static const char check_usage[] =
  "usage: fusefarm check [SPEC | SCENARIO]\n"
  "\n"
  "Load SPEC and build its farm without writing anything: every error a\n"
  "later command would meet (syntax, unknown keys, values, allocation,\n"
  "metadata that would not fit) is reported with file:line: key.\n"
  "A scenario is checked as `fusefarm run SCENARIO --check` checks it\n"
  "(its lvm builds resolved, every lvm.conf key against each build's\n"
  "list, every profile loaded) and its configurations printed.\n";

int
ff_cmd_check(int argc, char **argv)
{
  static const struct option opts[] = {
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *spec = NULL;
  struct ff_farm *farm;
  uint64_t lvs = 0;
  int c;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 'h':
      fputs(check_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("check", c, argv, opts);
    }
  }
  if (optind < argc)
    spec = argv[optind++];
  if (optind < argc)
    return ff_cli_usage("check", "too many arguments (from '%s')",
                        argv[optind]);
  /* A scenario is checked as run --check does; any other kind of file
   * gets the spec loader's refusal, naming what it is. */
  if (spec && ff_cfg_kind_of_file(spec) == FF_CFG_SCENARIO)
    return ff_run_check_file("fusefarm check", spec);
  farm = ff_cli_load_farm("check", spec);
  if (!farm)
    return 2;
  lvs = ff_farm_nlvs(farm);
  printf("%s: ok: %u devices, %u VGs, %llu LVs\n", spec ? spec : "<built-in>",
         ff_farm_ndevs(farm), ff_farm_nvgs(farm), (unsigned long long)lvs);
  ff_farm_free(farm);
  return 0;
}
