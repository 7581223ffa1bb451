/* fusefarm run: a configuration's "slow" in the run document
 * (docs/run-json.md): the devices its profile made slow, as the daemon
 * says in MNT/.fusefarm/profile.json (each device's "slow":
 * ff_iomodel_slow_devices, serve/ff-iomodel.h), so that the report's
 * timelines can mark their rows.  No threads (run-int.h).
 */
#include "run-int.h"

/* {"profile": NAME, "devices": [NAME, ...]} of the profile the daemon
 * serves now (call it after set_profile), or NULL with ff_error when
 * profile.json cannot be read or is not what ops.c writes. */
json_t *
slow_json(struct run *r)
{
  char path[PATH_MAX + 32];
  json_error_t err;
  json_t *pj, *devs, *names, *d;
  const char *name;
  size_t i;

  ff_pathf(path, sizeof path, "%s/.fusefarm/profile.json", r->mnt);
  pj = json_load_file(path, 0, &err);
  if (!pj) {
    ff_error("%s: %s", path, err.text);
    return NULL;
  }
  name = json_string_value(json_object_get(pj, "name"));
  devs = json_object_get(pj, "devices");
  names = json_array();
  if (!name || !json_is_array(devs) || !names) {
    ff_error("%s: no profile name or no devices", path);
    json_decref(names);
    json_decref(pj);
    return NULL;
  }
  json_array_foreach(devs, i, d)
  {
    if (json_is_true(json_object_get(d, "slow")))
      json_array_append(names, json_object_get(d, "name"));
  }
  d = json_pack("{s:s, s:o}", "profile", name, "devices", names);
  json_decref(pj);
  if (!d)
    ff_error("%s: out of memory", path);
  return d;
}
