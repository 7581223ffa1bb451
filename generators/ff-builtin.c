/* fusefarm: built-in specs and profiles (see ff-builtin.h). */
#include "ff-builtin.h"
#include "ff-spec.h"

#include <string.h>

static const char default_1000[] =
  "# 1000 devices like a SAN host: 750 single-PV VGs with one LV, 100\n"
  "# two-PV VGs with a striped LV, 50 orphan PVs.\n"
  "seed = 1000;\n"
  "device_size = \"8G\";\n"
  "vgs = ( { count = 750; lvs = ({ name = \"lv0\"; fill = 0.8; }); },\n"
  "        { count = 100; pvs = 2;\n"
  "          lvs = ({ name = \"lv0\"; type = \"striped\"; fill = 0.8; }); } "
  ");\n"
  "orphans = ({ count = 50; });\n";

static const char fixed_1ms[] =
  "name = \"fixed-1ms\";\n"
  "groups = ({ devices = \"all\";\n"
  "            read = { dist = \"fixed\"; value = \"1ms\"; };\n"
  "            write = { dist = \"fixed\"; value = \"1ms\"; }; });\n";

static const char ideal[] = "name = \"ideal\";\n";

static const struct {
  const char *kind, *name, *text;
} builtins[] = {
  {"profile", "ideal", ideal},
  {"spec", "default", ff_spec_builtin_default},
  {"spec", "default-1000", default_1000},
  {"profile", "fixed-1ms", fixed_1ms},
};

int
ff_is_builtin(const char *path)
{
  return !strncmp(path, "builtin:", 8);
}

const char *
ff_builtin_text(const char *kind, const char *name)
{
  if (ff_is_builtin(name))
    name += 8;
  for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
    if (!strcmp(builtins[i].kind, kind) && !strcmp(builtins[i].name, name))
      return builtins[i].text;
  return NULL;
}

const char *
ff_builtin_names(const char *kind)
{
  return !strcmp(kind, "spec") ? "builtin:default, builtin:default-1000"
                               : "builtin:ideal, builtin:fixed-1ms";
}
