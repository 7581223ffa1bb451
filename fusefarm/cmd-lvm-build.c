/* fusefarm: `fusefarm lvm-build`: build lvm2 at one commit of a git tree
 * into a cache keyed by the commit and print the lvm binary's path.
 *
 * The options are checked here (ff_cli_usage, exit 2); the work is done
 * by the script lvm-build.sh, which this process becomes (execv), so its
 * exit status is the command's: 0 built or cached, 125 the tree at that
 * commit does not build (for `git bisect run`), 2 bad input (unknown
 * REF, not an lvm2 tree), 1 any other failure.  The script is
 * LIBEXECDIR/lvm-build.sh when installed and SRC/fusefarm/lvm-build.sh
 * in the build tree (ff-paths.h).  No threads. */
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Patches one build may take (--patch FILE, repeated). */
#define FF_LVM_BUILD_MAX_PATCHES 16

static const char lvm_build_usage[] =
  "usage: fusefarm lvm-build REF [--git DIR|URL] [--patch FILE]...\n"
  "                          [--cache DIR] [--jobs N] [--debug] [--force]\n"
  "                          [--quiet]\n"
  "\n"
  "Build lvm2 at REF (a tag, branch or commit, abbreviated or not) of the\n"
  "lvm2 git tree DIR or URL into CACHE/COMMIT/ and print the path of its\n"
  "lvm binary (CACHE/COMMIT/sbin/lvm) on stdout; progress and errors go\n"
  "to stderr.  A build of the same commit already in the cache is\n"
  "printed at once.  The build runs in a scratch copy (git archive); the\n"
  "tree itself is never written (a URL is cloned into CACHE/git/).  The\n"
  "configure flags suit 2.02.177 to today's lvm2: no udev, systemd,\n"
  "dmeventd or lvmetad needed (2.02 builds include lvmetad for a private\n"
  "one), libdevmapper of the same tree (docs/lvm-builds.md).\n"
  "\n"
  "  --git DIR|URL  the lvm2 git tree (default: $FF_LVM_GIT, else the\n"
  "                 current directory)\n"
  "  --patch FILE   apply FILE (a diff, as `git apply` takes it) before\n"
  "                 building; repeat for more, applied in order.  The\n"
  "                 build is cached apart, as COMMIT-pHASH of the patches.\n"
  "                 A bisect over commits that do not build applies the\n"
  "                 later fix this way (docs/bisect.md)\n"
  "  --cache DIR    the build cache (default: $FF_LVM_CACHE, else\n"
  "                 /var/cache/fusefarm/lvm)\n"
  "  --jobs N       make -jN (default: the number of CPUs)\n"
  "  --debug        a build for profilers (perf, flame graphs): frame\n"
  "                 pointers kept (-fno-omit-frame-pointer), symbols as\n"
  "                 always; cached apart, as COMMIT-debug\n"
  "  --force        build again even when the cache has the commit\n"
  "  --quiet        no progress on stderr (errors still)\n"
  "\n"
  "Exit status: 0 built or cached; 125 the tree at that commit cannot be\n"
  "built (a patch does not apply, configure or make failed: the step, the "
  "log's last lines and\n"
  "the full log's path are printed), so a `git bisect run` script can say\n"
  "    lvm=$(fusefarm lvm-build HEAD --git .) || exit 125\n"
  "2 bad usage, unknown REF, not an lvm2 tree; 1 any other failure (the\n"
  "cache is not writable, git is missing, a clone or fetch failed).\n";

/* The script: installed in LIBEXECDIR, or the source tree's copy. */
static int
find_script(char *out, size_t outsz)
{
  struct ff_paths p;
  char alt[PATH_MAX + 32];

  if (ff_paths_find(&p) < 0)
    return -1;
  snprintf(out, outsz, "%s/lvm-build.sh", p.libexecdir);
  if (access(out, R_OK) == 0)
    return 0;
  snprintf(alt, sizeof alt, "%s/fusefarm/lvm-build.sh", p.datadir);
  if (access(alt, R_OK) == 0) {
    snprintf(out, outsz, "%s", alt);
    return 0;
  }
  return ff_paths_require(&p, out, "the lvm-build script",
                          "FUSEFARM_LIBEXECDIR");
}

int
ff_cmd_lvm_build(int argc, char **argv)
{
  static const struct option opts[] = {
    {"git", required_argument, NULL, 'g'},
    {"cache", required_argument, NULL, 'C'},
    {"jobs", required_argument, NULL, 'j'},
    {"patch", required_argument, NULL, 'p'},
    {"force", no_argument, NULL, 'f'},
    {"debug", no_argument, NULL, 'd'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *git = NULL, *cache = NULL, *ref;
  char script[PATH_MAX + 32], jobs[32] = "";
  const char *patches[FF_LVM_BUILD_MAX_PATCHES];
  const char *args[16 + 2 * FF_LVM_BUILD_MAX_PATCHES];
  unsigned long long n;
  int force = 0, debug = 0, quiet = 0, c, a = 0, npatches = 0, i;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":hj:q", opts, NULL)) != -1) {
    switch (c) {
    case 'g':
      if (!optarg[0])
        return ff_cli_usage("lvm-build", "--git: empty directory or URL");
      git = optarg;
      break;
    case 'C':
      if (!optarg[0])
        return ff_cli_usage("lvm-build", "--cache: empty directory");
      cache = optarg;
      break;
    case 'j':
      if (ff_cli_number("lvm-build", "--jobs", optarg, 1, 1024, &n))
        return 2;
      snprintf(jobs, sizeof jobs, "%llu", n);
      break;
    case 'p':
      if (!optarg[0])
        return ff_cli_usage("lvm-build", "--patch: empty file name");
      if (npatches == FF_LVM_BUILD_MAX_PATCHES)
        return ff_cli_usage("lvm-build", "more than %d --patch files",
                            FF_LVM_BUILD_MAX_PATCHES);
      if (access(optarg, R_OK) < 0)
        return ff_cli_usage("lvm-build", "--patch %s: %s", optarg,
                            strerror(errno));
      patches[npatches++] = optarg;
      break;
    case 'f':
      force = 1;
      break;
    case 'd':
      debug = 1;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'h':
      fputs(lvm_build_usage, stdout);
      return 0;
    default:
      return ff_cli_bad_option("lvm-build", c, argv, opts);
    }
  }
  if (optind == argc)
    return ff_cli_usage("lvm-build", "missing REF (a tag, branch or commit "
                                     "of an lvm2 git tree)");
  if (argc - optind > 1)
    return ff_cli_usage("lvm-build", "too many arguments (from '%s')",
                        argv[optind + 1]);
  ref = argv[optind];
  if (!ref[0] || ref[0] == '-')
    return ff_cli_usage("lvm-build", "bad REF '%s'", ref);

  if (find_script(script, sizeof script) < 0) {
    fprintf(stderr, "fusefarm lvm-build: %s\n", ff_errmsg());
    return 1;
  }
  args[a++] = "bash";
  args[a++] = script;
  if (git) {
    args[a++] = "--git";
    args[a++] = git;
  }
  if (cache) {
    args[a++] = "--cache";
    args[a++] = cache;
  }
  if (jobs[0]) {
    args[a++] = "--jobs";
    args[a++] = jobs;
  }
  for (i = 0; i < npatches; i++) {
    args[a++] = "--patch";
    args[a++] = patches[i];
  }
  if (force)
    args[a++] = "--force";
  if (debug)
    args[a++] = "--debug";
  if (quiet)
    args[a++] = "--quiet";
  args[a++] = "--";
  args[a++] = ref;
  args[a] = NULL;
  if (setenv("FF_PROG", "fusefarm lvm-build", 1) < 0) {
    fprintf(stderr, "fusefarm lvm-build: setenv: %s\n", strerror(errno));
    return 1;
  }
  fflush(NULL);
  execvp("bash", (char **)args);
  fprintf(stderr, "fusefarm lvm-build: exec bash %s: %s\n", script,
          strerror(errno));
  return 1;
}
