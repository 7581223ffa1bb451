/* fusefarm vm: boot a guest over the farm and check real device-mapper
 * activation there (docs/guest.md).
 *
 * The guest tier is shell: guest/run-initramfs.sh (busybox initramfs,
 * vgchange -aay, ff-dmcheck, nbd-client) and guest/run-systemd.sh (a
 * Debian root with systemd and udev: event activation, systemd-analyze).
 * This command is their front end: it loads the scenario (or takes a
 * plain spec), turns what the guest can honour into the scripts' options
 * (spec, profile, the lvm.conf of one matrix configuration), runs one
 * script and returns its verdict.  Built-in specs and profiles and inline
 * farms are written to files first, because nbdkit reads a path.
 *
 * No threads.  The script runs in the foreground of our process group; on
 * Ctrl-C it gets the signal too and kills its own qemu and nbdkit, while
 * we ignore the signal and wait for it.
 */
#include "ff-builtin.h"
#include "ff-cli.h"
#include "ff-daemon.h"
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-scenario.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FF_SOURCE_DIR
#define FF_SOURCE_DIR "."
#endif

static const char vm_usage[] =
  "usage: fusefarm vm [SCENARIO|SPEC] [OPTIONS]\n"
  "\n"
  "Boot a qemu guest whose SCSI disks are the farm (served by the nbd\n"
  "plugin) and check real activation there.  KVM when a real one is\n"
  "present, TCG otherwise.  Without an argument: the built-in scenario.\n"
  "\n"
  "  --boot initramfs   busybox initramfs: vgchange -aay, every dm table\n"
  "                     checked against the manifest (ff-dmcheck), and\n"
  "                     nbd-client on --nbd-client exports (default)\n"
  "  --boot systemd     Debian root with systemd, udev and lvm2: udev's\n"
  "                     lvm rules activate the VGs; reports the time until\n"
  "                     every LV was active and systemd-analyze (time,\n"
  "                     blame, plot SVG)\n"
  "  --disks N          attach only the farm's first N devices (VGs with a\n"
  "                     PV beyond them are left out of the checks)\n"
  "  --nbd-client K     initramfs: attach K PVs with nbd-client (default 2)\n"
  "  --profile P        I/O profile (path or builtin:NAME), overrides the\n"
  "                     scenario's; the plugin applies it to the guest's "
  "disks\n"
  "  --config K         the matrix configuration whose lvm.conf settings\n"
  "                     the guest uses (default 0, the first)\n"
  "  --timeout S        give up after S seconds (default 300 initramfs,\n"
  "                     900 systemd)\n"
  "  --cache DIR        image cache (default /var/cache/fusefarm/guest)\n"
  "  --out DIR          systemd: where to put the results (default\n"
  "                     ./fusefarm-vm-NAME)\n"
  "  --keep             keep the run directory (logs, image copy)\n"
  "  --json FILE        write the timings and verdict as JSON\n"
  "\n"
  "FF_GUEST_DIR overrides where the guest scripts are (default: the\n"
  "source tree's guest/).  Exit: 0 pass, 1 failed check or boot, 2 usage.\n";

static int
write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "fusefarm vm: %s: %s\n", path, strerror(errno));
    return -1;
  }
  fputs(text, f);
  if (fclose(f) != 0) {
    fprintf(stderr, "fusefarm vm: %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* A path the scripts can read: builtin:NAME is written into dir. */
static int
materialize(const char *kind, const char *path, const char *dir, char *out,
            size_t outsz)
{
  const char *text;

  if (!ff_is_builtin(path)) {
    snprintf(out, outsz, "%s", path);
    return 0;
  }
  text = ff_builtin_text(kind, path + 8);
  if (!text) {
    fprintf(stderr, "fusefarm vm: %s: no such built-in %s (known: %s)\n", path,
            kind, ff_builtin_names(kind));
    return -1;
  }
  snprintf(out, outsz, "%s/%s-%s.conf", dir, kind, path + 8);
  return write_file(out, text);
}

/* lvm.conf of configuration k: every "section/name" axis except the
 * runner's own (fusefarm/...) and devices/use_devicesfile, which only
 * makes sense for the loop farm.  Returns 1 if it wrote a file, 0 if the
 * matrix has no lvm.conf keys, -1 on error. */
static int
write_lvmconf(const struct ff_scenario *sc, uint64_t k, const char *path)
{
  unsigned *idx;
  FILE *f;
  int n = 0;
  static const char *const sections[] = {"devices", "activation", "global",
                                         "log",     "backup",     "metadata",
                                         "report",  "allocation"};

  if (!sc->naxes)
    return 0;
  idx = calloc(sc->naxes, sizeof *idx);
  if (!idx)
    return -1;
  ff_scenario_config(sc, k, idx);
  f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "fusefarm vm: %s: %s\n", path, strerror(errno));
    free(idx);
    return -1;
  }
  fprintf(f, "# fusefarm vm: %s, configuration %llu\n", sc->name,
          (unsigned long long)k);
  for (size_t s = 0; s < sizeof sections / sizeof *sections; s++) {
    size_t sl = strlen(sections[s]);
    int open = 0;
    for (unsigned a = 0; a < sc->naxes; a++) {
      const struct ff_axis *ax = &sc->axes[a];
      const struct ff_sval *v = &ax->values[idx[a]];
      if (strncmp(ax->key, sections[s], sl) || ax->key[sl] != '/' ||
          !strcmp(ax->key, "devices/use_devicesfile"))
        continue;
      if (!open)
        fprintf(f, "%s {\n", sections[s]);
      open = 1;
      if (v->is_str)
        fprintf(f, "  %s = \"%s\"\n", ax->key + sl + 1, v->s);
      else
        fprintf(f, "  %s = %lld\n", ax->key + sl + 1, (long long)v->i);
      fprintf(stderr, "fusefarm vm: lvm.conf: %s = ", ax->key);
      if (v->is_str)
        fprintf(stderr, "\"%s\"\n", v->s);
      else
        fprintf(stderr, "%lld\n", (long long)v->i);
      n++;
    }
    if (open)
      fputs("}\n", f);
  }
  free(idx);
  if (fclose(f) != 0)
    return -1;
  return n > 0;
}

/* The fusefarm/profile value of configuration k, or NULL. */
static const char *
config_profile(const struct ff_scenario *sc, uint64_t k)
{
  const char *p = NULL;
  unsigned *idx;

  if (!sc->naxes)
    return NULL;
  idx = calloc(sc->naxes, sizeof *idx);
  if (!idx)
    return NULL;
  ff_scenario_config(sc, k, idx);
  for (unsigned a = 0; a < sc->naxes; a++)
    if (!strcmp(sc->axes[a].key, "fusefarm/profile") &&
        sc->axes[a].values[idx[a]].is_str)
      p = sc->axes[a].values[idx[a]].s;
  free(idx);
  return p;
}

static int
parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || v > max || *s == '-')
    return -1;
  *out = v;
  return 0;
}

/* BUILD/fusefarm/fusefarm -> BUILD */
static int
build_dir(char *out, size_t outsz)
{
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *s;
  if (n < 0)
    return -1;
  exe[n] = '\0';
  for (int i = 0; i < 2; i++) {
    s = strrchr(exe, '/');
    if (!s)
      return -1;
    *s = '\0';
  }
  snprintf(out, outsz, "%s", exe);
  return 0;
}

static int
run_script(char **args)
{
  struct sigaction ign = {0}, oldint, oldterm;
  pid_t pid;
  int st;

  ign.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ign, &oldint);
  sigaction(SIGTERM, &ign, &oldterm);
  pid = fork();
  if (pid < 0) {
    fprintf(stderr, "fusefarm vm: fork: %s\n", strerror(errno));
    return 1;
  }
  if (pid == 0) {
    sigaction(SIGINT, &oldint, NULL);
    sigaction(SIGTERM, &oldterm, NULL);
    execvp(args[0], args);
    fprintf(stderr, "fusefarm vm: %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) {
      fprintf(stderr, "fusefarm vm: waitpid: %s\n", strerror(errno));
      st = 1 << 8;
      break;
    }
  sigaction(SIGINT, &oldint, NULL);
  sigaction(SIGTERM, &oldterm, NULL);
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  fprintf(stderr, "fusefarm vm: %s killed by signal %d\n", args[0],
          WTERMSIG(st));
  return 1;
}

int
ff_cmd_vm(int argc, char **argv)
{
  enum {
    O_DISKS = 256,
    O_BOOT,
    O_PROFILE,
    O_TIMEOUT,
    O_CACHE,
    O_KEEP,
    O_JSON,
    O_NBD,
    O_CONFIG,
    O_OUT
  };
  static const struct option opts[] = {
    {"disks", required_argument, NULL, O_DISKS},
    {"boot", required_argument, NULL, O_BOOT},
    {"profile", required_argument, NULL, O_PROFILE},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"cache", required_argument, NULL, O_CACHE},
    {"keep", no_argument, NULL, O_KEEP},
    {"json", required_argument, NULL, O_JSON},
    {"nbd-client", required_argument, NULL, O_NBD},
    {"config", required_argument, NULL, O_CONFIG},
    {"out", required_argument, NULL, O_OUT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *boot = "initramfs", *profile = NULL, *cache = NULL;
  const char *json = NULL, *timeout = NULL, *disks = NULL, *out = NULL;
  const char *nbd = "2";
  unsigned long long num, config = 0;
  int keep = 0, c, rc = 2, is_spec = 0;
  struct ff_scenario *sc = NULL;
  char tmp[] = "/tmp/ff-vm.XXXXXX";
  int have_tmp = 0;
  char guest[PATH_MAX], build[PATH_MAX], script[PATH_MAX + 32];
  char spec[PATH_MAX + 64], prof[PATH_MAX + 64], lvmconf[PATH_MAX + 32];
  char outdir[PATH_MAX];

  spec[0] = prof[0] = lvmconf[0] = '\0';
  const char *env;
  const char *args[40];
  int a = 0;

  optind = 1;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case O_DISKS:
      if (parse_num(optarg, 4096, &num) < 0 || num == 0) {
        fprintf(stderr, "fusefarm vm: --disks %s: expected 1..4096\n", optarg);
        return 2;
      }
      disks = optarg;
      break;
    case O_BOOT:
      if (strcmp(optarg, "initramfs") && strcmp(optarg, "systemd")) {
        fprintf(stderr,
                "fusefarm vm: --boot %s: expected initramfs or systemd\n",
                optarg);
        return 2;
      }
      boot = optarg;
      break;
    case O_PROFILE:
      profile = optarg;
      break;
    case O_TIMEOUT:
      if (parse_num(optarg, 86400, &num) < 0 || num == 0) {
        fprintf(stderr, "fusefarm vm: --timeout %s: expected 1..86400\n",
                optarg);
        return 2;
      }
      timeout = optarg;
      break;
    case O_CACHE:
      cache = optarg;
      break;
    case O_KEEP:
      keep = 1;
      break;
    case O_JSON:
      json = optarg;
      break;
    case O_NBD:
      if (parse_num(optarg, 64, &num) < 0) {
        fprintf(stderr, "fusefarm vm: --nbd-client %s: expected 0..64\n",
                optarg);
        return 2;
      }
      nbd = optarg;
      break;
    case O_CONFIG:
      if (parse_num(optarg, 1000000, &config) < 0) {
        fprintf(stderr, "fusefarm vm: --config %s: expected a number\n",
                optarg);
        return 2;
      }
      break;
    case O_OUT:
      out = optarg;
      break;
    case 'h':
      fputs(vm_usage, stdout);
      return 0;
    default:
      fputs(vm_usage, stderr);
      return 2;
    }
  }
  if (argc - optind > 1) {
    fprintf(stderr, "fusefarm vm: expected at most one SCENARIO or SPEC\n%s",
            vm_usage);
    return 2;
  }

  /* A scenario, else a plain spec. */
  if (argc - optind == 1) {
    sc = ff_scenario_load_file(argv[optind]);
    if (!sc) {
      char *serr = strdup(ff_errmsg());
      struct ff_farm *farm = ff_cli_load_farm("vm", argv[optind]);
      if (!farm) {
        fprintf(stderr,
                "fusefarm vm: %s is neither a scenario (%s) nor a "
                "spec (above)\n",
                argv[optind], serr ? serr : "?");
        free(serr);
        return 2;
      }
      free(serr);
      ff_farm_free(farm);
      is_spec = 1;
    }
  } else {
    sc = ff_scenario_load_string(ff_scenario_builtin_default, "default", NULL);
    if (!sc) {
      fprintf(stderr, "fusefarm vm: built-in scenario: %s\n", ff_errmsg());
      return 2;
    }
  }
  if (sc && config >= ff_scenario_nconfigs(sc)) {
    fprintf(stderr,
            "fusefarm vm: --config %llu: the scenario has %llu "
            "configurations\n",
            config, (unsigned long long)ff_scenario_nconfigs(sc));
    goto out;
  }
  if (sc && sc->devices) {
    fprintf(stderr,
            "fusefarm vm: %s: devices = %llu: the guest cannot scale a farm "
            "(the nbd plugin serves the spec as written); remove the key "
            "and use --disks N to attach the first N devices\n",
            sc->file, (unsigned long long)sc->devices);
    goto out;
  }
  if (sc && sc->attach && strcmp(sc->attach, "loop"))
    fprintf(stderr,
            "fusefarm vm: note: attach = \"%s\" is ignored: in the "
            "guest the farm's disks are virtio-scsi\n",
            sc->attach);
  if (sc && sc->lvm && strcmp(sc->lvm, "lvm"))
    fprintf(stderr,
            "fusefarm vm: note: lvm = \"%s\" is not used: the guest "
            "runs its Debian lvm2 (the report says which)\n",
            sc->lvm);
  if (sc && sc->nworkloads)
    fprintf(stderr,
            "fusefarm vm: note: the scenario's %u workloads are not "
            "run in the guest yet; it checks activation\n",
            sc->nworkloads);

  env = getenv("FF_GUEST_DIR");
  snprintf(guest, sizeof guest, "%s",
           env && *env ? env : FF_SOURCE_DIR "/guest");
  snprintf(script, sizeof script, "%s/run-%s.sh", guest, boot);
  if (access(script, R_OK) != 0) {
    fprintf(stderr,
            "fusefarm vm: %s: %s (set FF_GUEST_DIR to the source tree's "
            "guest/)\n",
            script, strerror(errno));
    goto out;
  }
  if (build_dir(build, sizeof build) < 0) {
    fprintf(stderr, "fusefarm vm: cannot find the build directory\n");
    goto out;
  }
  if (!mkdtemp(tmp)) {
    fprintf(stderr, "fusefarm vm: mkdtemp: %s\n", strerror(errno));
    goto out;
  }
  have_tmp = 1;

  /* spec */
  if (is_spec) {
    snprintf(spec, sizeof spec, "%s", argv[optind]);
  } else if (sc->farm) {
    snprintf(spec, sizeof spec, "%s/farm.conf", tmp);
    if (write_file(spec, sc->farm) < 0)
      goto out;
  } else if (materialize("spec", sc->spec ? sc->spec : "builtin:default", tmp,
                         spec, sizeof spec) < 0) {
    goto out;
  }
  /* profile */
  prof[0] = '\0';
  if (!profile && sc)
    profile = config_profile(sc, config);
  if (!profile && sc && sc->profile)
    profile = sc->profile;
  if (!profile && sc && sc->latency_ns)
    fprintf(stderr, "fusefarm vm: note: latency shorthand is not passed to "
                    "the guest's plugin; give a profile file\n");
  if (profile && strcmp(profile, "ideal") &&
      materialize("profile", profile, tmp, prof, sizeof prof) < 0)
    goto out;
  /* lvm.conf of the chosen configuration */
  lvmconf[0] = '\0';
  if (sc) {
    snprintf(lvmconf, sizeof lvmconf, "%s/lvm.conf", tmp);
    int w = write_lvmconf(sc, config, lvmconf);
    if (w < 0)
      goto out;
    if (w == 0)
      lvmconf[0] = '\0';
  }

  args[a++] = "bash";
  args[a++] = script;
  args[a++] = "--build";
  args[a++] = build;
  if (disks) {
    args[a++] = "--disks";
    args[a++] = disks;
  }
  if (prof[0]) {
    args[a++] = "--profile";
    args[a++] = prof;
  }
  if (lvmconf[0]) {
    args[a++] = "--lvm-conf";
    args[a++] = lvmconf;
  }
  if (timeout) {
    args[a++] = "--timeout";
    args[a++] = timeout;
  }
  if (cache) {
    args[a++] = "--cache";
    args[a++] = cache;
  }
  if (keep)
    args[a++] = "--keep";
  if (json) {
    args[a++] = "--json";
    args[a++] = json;
  }
  if (!strcmp(boot, "initramfs")) {
    if (strcmp(nbd, "0")) {
      args[a++] = "--nbd-client";
      args[a++] = nbd;
    }
  } else {
    if (!out) {
      snprintf(outdir, sizeof outdir, "fusefarm-vm-%s",
               sc && sc->name ? sc->name : "spec");
      out = outdir;
    }
    args[a++] = "--out";
    args[a++] = out;
  }
  args[a++] = spec;
  args[a] = NULL;

  fprintf(stderr, "fusefarm vm: %s boot of %s%s%s\n", boot,
          sc ? sc->file : spec, prof[0] ? ", profile " : "",
          prof[0] ? prof : "");
  rc = run_script((char **)args);
  if (rc != 0 && rc != 1)
    rc = rc == 2 ? 2 : 1;

out:
  if (have_tmp) {
    /* only the files we wrote */
    char p[PATH_MAX + 64];
    static const char *const names[] = {"farm.conf", "lvm.conf"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
      snprintf(p, sizeof p, "%s/%s", tmp, names[i]);
      unlink(p);
    }
    if (spec[0] && !strncmp(spec, tmp, strlen(tmp)))
      unlink(spec);
    if (prof[0] && !strncmp(prof, tmp, strlen(tmp)))
      unlink(prof);
    rmdir(tmp);
  }
  ff_scenario_free(sc);
  return rc;
}
