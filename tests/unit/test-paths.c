/* fusefarm/ff-paths: where the program's files are, the environment
 * overrides, installed scenarios by name, TMPDIR. */
#include "ff-paths.h"
#include "ff-test.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A scratch data directory with configs/scenarios/{small.conf,plain},
 * the test's working directory while it runs. */
struct fx {
  char dir[PATH_MAX];
  char data[PATH_MAX + 16];
  char oldcwd[PATH_MAX];
};

static void
touch(const char *path)
{
  FILE *f = fopen(path, "w");

  assert_non_null(f);
  fputs("name = \"x\";\n", f);
  fclose(f);
}

static int
setup(void **state)
{
  static struct fx fx;
  char p[PATH_MAX * 2], real[PATH_MAX];
  const char *t = getenv("TMPDIR");

  snprintf(fx.dir, sizeof fx.dir, "%s/ff-paths.XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(fx.dir) || !realpath(fx.dir, real))
    return -1;
  memcpy(fx.dir, real, sizeof fx.dir);
  snprintf(fx.data, sizeof fx.data, "%s/data", fx.dir);
  snprintf(p, sizeof p, "%s/configs", fx.data);
  if (mkdir(fx.data, 0700) || mkdir(p, 0700))
    return -1;
  snprintf(p, sizeof p, "%s/configs/scenarios", fx.data);
  if (mkdir(p, 0700))
    return -1;
  snprintf(p, sizeof p, "%s/configs/scenarios/small.conf", fx.data);
  touch(p);
  snprintf(p, sizeof p, "%s/configs/scenarios/plain", fx.data);
  touch(p);
  if (!getcwd(fx.oldcwd, sizeof fx.oldcwd) || chdir(fx.dir))
    return -1;
  unsetenv("FUSEFARM_DATADIR");
  unsetenv("FUSEFARM_LIBEXECDIR");
  unsetenv("FUSEFARM_PLUGIN");
  *state = &fx;
  return 0;
}

static int
teardown(void **state)
{
  struct fx *fx = *state;
  char cmd[PATH_MAX + 32];

  if (chdir(fx->oldcwd))
    return -1;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void
test_tmpdir(void **state)
{
  char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;

  (void)state;
  unsetenv("TMPDIR");
  assert_string_equal(ff_tmpdir(), "/tmp");
  setenv("TMPDIR", "", 1);
  assert_string_equal(ff_tmpdir(), "/tmp");
  setenv("TMPDIR", "/scratch/x", 1);
  assert_string_equal(ff_tmpdir(), "/scratch/x");
  if (old)
    setenv("TMPDIR", old, 1);
  else
    unsetenv("TMPDIR");
  free(old);
}

/* Without overrides: the layout next to this program (installed: bin/..
 * share/fusefarm; this test is no build tree's fusefarm). */
static void
test_installed_layout(void **state)
{
  struct ff_paths p;
  char want[PATH_MAX * 2];
  char *s;

  (void)state;
  assert_ok(ff_paths_find(&p));
  assert_string_equal(p.from, "installed");
  assert_int_equal(p.exe[0], '/');
  s = strrchr(p.exe, '/');
  snprintf(want, sizeof want, "%.*s", (int)(s - p.exe), p.exe);
  s = strrchr(want, '/');
  *s = '\0'; /* the prefix: bin/.. */
  assert_true(strncmp(p.datadir, want, strlen(want)) == 0);
  assert_string_equal(p.datadir + strlen(want), "/share/fusefarm");
  assert_string_equal(p.libexecdir + strlen(want), "/libexec/fusefarm");
  assert_non_null(strstr(p.plugin, "/nbdkit-fusefarm-plugin.so"));
}

static void
test_env_overrides(void **state)
{
  struct fx *fx = *state;
  struct ff_paths p;
  char want[PATH_MAX * 2];

  setenv("FUSEFARM_DATADIR", "data", 1); /* relative: to the cwd */
  setenv("FUSEFARM_LIBEXECDIR", fx->dir, 1);
  setenv("FUSEFARM_PLUGIN", "/nowhere/./x//../p.so", 1); /* tidied */
  assert_ok(ff_paths_find(&p));
  assert_string_equal(p.from, "environment");
  assert_string_equal(p.datadir, fx->data);
  assert_string_equal(p.libexecdir, fx->dir);
  assert_string_equal(p.plugin, "/nowhere/p.so");

  /* a missing file: -1, the message names it and the variable */
  assert_int_equal(
    ff_paths_require(&p, p.plugin, "the nbd plugin", "FUSEFARM_PLUGIN"), -1);
  assert_non_null(strstr(ff_errmsg(), "/nowhere/p.so"));
  assert_non_null(strstr(ff_errmsg(), "the nbd plugin not found"));
  assert_non_null(strstr(ff_errmsg(), "FUSEFARM_PLUGIN"));
  snprintf(want, sizeof want, "%s/configs", p.datadir);
  assert_int_equal(ff_paths_require(&p, want, "configs", "X"), 0);
  unsetenv("FUSEFARM_DATADIR");
  unsetenv("FUSEFARM_LIBEXECDIR");
  unsetenv("FUSEFARM_PLUGIN");
}

static void
test_scenario_by_name(void **state)
{
  struct fx *fx = *state;
  char buf[PATH_MAX + 64], want[PATH_MAX * 2];

  setenv("FUSEFARM_DATADIR", fx->data, 1);
  /* NAME: configs/scenarios/NAME.conf, else configs/scenarios/NAME */
  snprintf(want, sizeof want, "%s/configs/scenarios/small.conf", fx->data);
  assert_string_equal(ff_paths_scenario("small", buf, sizeof buf), want);
  assert_string_equal(ff_paths_scenario("small.conf", buf, sizeof buf), want);
  snprintf(want, sizeof want, "%s/configs/scenarios/plain", fx->data);
  assert_string_equal(ff_paths_scenario("plain", buf, sizeof buf), want);
  /* a path, a file in the cwd, an unknown name: the argument itself */
  assert_string_equal(ff_paths_scenario("./small", buf, sizeof buf),
                      "./small");
  assert_string_equal(ff_paths_scenario("nosuch", buf, sizeof buf), "nosuch");
  touch("small");
  assert_string_equal(ff_paths_scenario("small", buf, sizeof buf), "small");
  unlink("small");
  unsetenv("FUSEFARM_DATADIR");
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_tmpdir),
    cmocka_unit_test(test_installed_layout),
    cmocka_unit_test(test_env_overrides),
    cmocka_unit_test(test_scenario_by_name),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
