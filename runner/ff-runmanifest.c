/* fusefarm: what the runners need from a farm's manifest
 * (ff-runmanifest.h). */
#include "ff-runmanifest.h"

#include "ff-error.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
ff_runmanifest_release(struct ff_runmanifest *m)
{
  for (uint32_t i = 0; i < m->ndevs; i++) {
    if (m->names)
      free(m->names[i]);
    if (m->vgs)
      free(m->vgs[i]);
  }
  free(m->names);
  free(m->vgs);
  free(m->first_lv);
  memset(m, 0, sizeof *m);
}

static int
from_json(struct ff_runmanifest *m, json_t *doc, const char *name)
{
  json_t *devs = json_object_get(doc, "devices");
  json_t *vgs = json_object_get(doc, "vgs"), *d;
  size_t i;

  if (!json_is_array(devs))
    return ff_error("%s: no devices array", name);
  if (vgs && !json_is_array(vgs))
    return ff_error("%s: vgs is not an array", name);
  m->ndevs = (uint32_t)json_array_size(devs);
  m->names = calloc(m->ndevs + 1, sizeof *m->names);
  m->vgs = calloc(m->ndevs + 1, sizeof *m->vgs);
  if (!m->names || !m->vgs)
    return ff_error("out of memory");
  json_array_foreach(devs, i, d)
  {
    const char *dn = json_string_value(json_object_get(d, "name"));
    const char *vg = json_string_value(json_object_get(d, "vg"));
    const char *role = json_string_value(json_object_get(d, "role"));

    if (!dn)
      return ff_error("%s: devices[%zu]: no name", name, i);
    if (!(m->names[i] = strdup(dn)) ||
        (vg && role && !strcmp(role, "pv") && !(m->vgs[i] = strdup(vg))))
      return ff_error("out of memory");
  }
  json_array_foreach(vgs, i, d)
  {
    const char *vg = json_string_value(json_object_get(d, "name"));
    const char *dmg = json_string_value(json_object_get(d, "damage"));
    json_t *lvs = json_object_get(d, "lvs"), *l;
    const char *lv = NULL;
    size_t j;

    if (!vg)
      return ff_error("%s: vgs[%zu]: no name", name, i);
    if (lvs && !json_is_array(lvs))
      return ff_error("%s: vgs[%zu] (%s): lvs is not an array", name, i, vg);
    m->nvgs++;
    /* the LVs lvs lists: not the hidden sub-LVs of mirror and raid LVs */
    json_array_foreach(lvs, j, l)
    {
      if (json_is_false(json_object_get(l, "visible")))
        continue;
      m->nlvs++;
      if (!lv)
        lv = json_string_value(json_object_get(l, "name"));
    }
    /* lvchange's default LV: the first visible LV of the first undamaged
     * VG. */
    if (!m->first_lv && lv && dmg && !strcmp(dmg, "none") &&
        asprintf(&m->first_lv, "%s/%s", vg, lv) < 0) {
      m->first_lv = NULL;
      return ff_error("out of memory");
    }
  }
  return 0;
}

static int
finish(struct ff_runmanifest *m, json_t *doc, const json_error_t *je,
       const char *name)
{
  int rc;

  memset(m, 0, sizeof *m);
  if (!doc)
    return je->line > 0 ? ff_error("%s:%d: %s", name, je->line, je->text)
                        : ff_error("%s: %s", name, je->text);
  rc = from_json(m, doc, name);
  json_decref(doc);
  if (rc < 0)
    ff_runmanifest_release(m);
  return rc;
}

int
ff_runmanifest_load(struct ff_runmanifest *m, const char *path)
{
  json_error_t je;

  return finish(m, json_load_file(path, 0, &je), &je, path);
}

int
ff_runmanifest_parse(struct ff_runmanifest *m, const char *text,
                     const char *name)
{
  json_error_t je;

  return finish(m, json_loads(text, 0, &je), &je, name);
}
