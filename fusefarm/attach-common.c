/* fusefarm attach/detach: small helpers (attach.h).
 *
 * Thread model: single-threaded; the signal handler only sets
 * fa_interrupted.
 */
#include "attach.h"
#include "ff-cli.h"
#include "ff-error.h"
#include "ff-file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers ---------------------------------------------------- */

volatile sig_atomic_t fa_interrupted;

static void
on_signal(int sig)
{
  fa_interrupted = sig;
}

static const int caught[3] = {SIGINT, SIGTERM, SIGHUP};

void
fa_signals_catch(struct signals *s)
{
  struct sigaction sa;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  fa_interrupted = 0;
  for (int i = 0; i < 3; i++)
    sigaction(caught[i], &sa, &s->old[i]);
}

void
fa_signals_restore(struct signals *s)
{
  for (int i = 0; i < 3; i++)
    sigaction(caught[i], &s->old[i], NULL);
}

double
fa_now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void
fa_sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

  nanosleep(&ts, NULL);
}

void
fa_progress_init(struct progress *p, const char *verb, size_t total, int quiet)
{
  p->verb = verb;
  p->total = total;
  p->on = !quiet && total > 0 && isatty(STDERR_FILENO);
  p->last = 0;
  p->last_pct = -1;
}

void
fa_progress_update(struct progress *p, size_t done)
{
  enum { WIDTH = 30 };
  char bar[WIDTH + 1];
  size_t fill;
  double t;
  int pct;

  if (!p->on)
    return;
  pct = (int)(done * 100 / p->total);
  t = fa_now_s();
  if (done != p->total && pct == p->last_pct && t - p->last < 0.1)
    return;
  p->last = t;
  p->last_pct = pct;
  fill = done * WIDTH / p->total;
  for (size_t i = 0; i < WIDTH; i++)
    bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
  bar[WIDTH] = '\0';
  fprintf(stderr, "\r%s %zu/%zu [%s] %3d%%", p->verb, done, p->total, bar,
          pct);
  fflush(stderr);
}

void
fa_progress_end(struct progress *p)
{
  if (p->on && p->last_pct >= 0)
    fputs("\r\033[K", stderr);
}

/* mkdir -p with mode for every directory created.  The last one, ours,
 * must not be a symbolic link (ff_mkdir); the ones above it may be (a
 * /var/run -> /run). */
int
fa_mkdir_p(const char *path, mode_t mode)
{
  char *tmp = strdup(path);
  int r = 0;

  if (!tmp)
    return ff_error("out of memory");
  for (char *p = tmp + 1;; p++) {
    if (*p == '/' || !*p) {
      char c = *p;

      *p = '\0';
      if (!c) {
        r = ff_mkdir(tmp, mode) < 0 ? -1 : 0;
        break;
      }
      if (mkdir(tmp, mode) < 0 && errno != EEXIST) {
        r = ff_error("mkdir %s: %m", tmp);
        break;
      }
      *p = c;
    }
  }
  free(tmp);
  return r;
}

/* Shell-quote s for a hint line only when it needs it. */
void
fa_add_shell_word(struct ff_sb *sb, const char *s)
{
  if (s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789%+,-./:=@_")] == '\0') {
    ff_sb_add(sb, s);
    return;
  }
  ff_sb_add(sb, "'");
  for (; *s; s++)
    if (*s == '\'')
      ff_sb_add(sb, "'\\''");
    else
      ff_sb_addn(sb, s, 1);
  ff_sb_add(sb, "'");
}

int
fa_operands(const char *cmd, int argc, char **argv, const char *state_opt,
            const char **mnt)
{
  if (optind == argc)
    return ff_cli_usage(cmd, "missing MNT");
  if (argc - optind > 1)
    return ff_cli_usage(cmd, "too many arguments (from '%s')",
                        argv[optind + 1]);
  *mnt = argv[optind];
  if (state_opt && !*state_opt) {
    fprintf(stderr, "fusefarm %s: --state: empty path\n", cmd);
    return 2;
  }
  return 0;
}
