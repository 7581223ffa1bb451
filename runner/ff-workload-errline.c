/* fusefarm: the line of a failed command's stderr that says why it
 * failed, past lvm's warnings and notices (ff_lvm_error_line,
 * ff-workload.h), and with the signal that killed it (ff_w_error_line_of,
 * ff-workload-int.h).  No threads. */
#include "ff-workload-int.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* One of lvm's warnings or notices, not what made the command fail:
 * warnings, unknown or deprecated settings, leaked fds, and the notices
 * devices-file and hint code print on their way ("Devices file /dev/x is
 * excluded: ...", "PVID ... last written to ...", "VG x not using quick
 * activation", also as pvscan[PID] says it). */
static int
lvm_warning(const char *line, size_t n)
{
  static const char *const pfx[] = {"WARNING:",
                                    "Configuration setting \"",
                                    "File descriptor ",
                                    "Please remove the lvm.conf",
                                    "DEPRECATED",
                                    "Devices file ",
                                    "PVID ",
                                    NULL};
  static const char quick[] = " not using quick activation";

  for (int i = 0; pfx[i]; i++)
    if (n >= strlen(pfx[i]) && !strncmp(line, pfx[i], strlen(pfx[i])))
      return 1;
  return memmem(line, n, quick, strlen(quick)) != NULL;
}

void
ff_lvm_error_line(const char *text, char *buf, size_t len)
{
  const char *p = text ? text : "", *first = NULL;
  size_t firstn = 0;

  while (*p) {
    size_t n;

    while (*p == ' ' || *p == '\t')
      p++;
    n = strcspn(p, "\n");
    if (n && !first) {
      first = p;
      firstn = n;
    }
    if (n && !lvm_warning(p, n)) {
      first = p;
      firstn = n;
      break;
    }
    p += n + (p[n] == '\n');
  }
  if (!first)
    ff_pathf(buf, len, "(no message)");
  else
    ff_pathf(buf, len, "%.*s", (int)(firstn < 1000 ? firstn : 1000), first);
}

/* Why an lvm command that exited with status ex (ff-spawn: 128 +
 * signal when a signal killed it) failed: the error line of its stderr
 * file, after the signal that killed it if one did ("killed by signal 11
 * (Segmentation fault)": a crash says little on stderr, or only a
 * warning printed before it). */
void
ff_w_error_line_of(const char *path, int ex, char *buf, size_t len)
{
  char *s = ff_slurp(path, 65536), line[1024];

  ff_lvm_error_line(s, line, sizeof line);
  if (ex > 128 && ex < 128 + 65) {
    /* only a line that says something of its own follows */
    int said =
      strcmp(line, "(no message)") && !lvm_warning(line, strlen(line));

    ff_pathf(buf, len, "killed by signal %d (%s)%s%s", ex - 128,
             strsignal(ex - 128), said ? "; " : "", said ? line : "");
  } else
    ff_pathf(buf, len, "%s", line);
  free(s);
}
