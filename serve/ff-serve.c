/* fusefarm: helpers for the front ends that serve a farm (ff-serve.h). */
#include "ff-serve.h"
#include "ff-error.h"
#include "ff-spec.h"

#include <stdlib.h>

struct ff_farm *
ff_farm_load(const char *path)
{
  struct ff_spec *sp;
  struct ff_farm *farm;

  sp = path ? ff_spec_load_file(path)
            : ff_spec_load_string(ff_spec_builtin_default, "<built-in>");
  if (!sp)
    return NULL;
  farm = ff_farm_new(sp);
  ff_spec_free(sp);
  return farm;
}

int64_t
ff_farm_extents_all(const struct ff_farm *farm, uint32_t dev,
                    struct ff_range **out)
{
  struct ff_range *r = NULL;
  int64_t n;
  size_t room = 0;

  *out = NULL;
  for (;;) {
    n = ff_farm_extents(farm, dev, r, room);
    if (n < 0) {
      free(r);
      return -1;
    }
    if ((uint64_t)n <= room)
      break;
    /* Count, then fetch with some slack for writes landing meanwhile. */
    free(r);
    room = (size_t)n + 16;
    r = malloc(room * sizeof *r);
    if (!r)
      return ff_error("extents of device %u: out of memory", dev);
  }
  if (n == 0) {
    free(r);
    r = NULL;
  }
  *out = r;
  return n;
}

int
ff_farm_zero_sparse(struct ff_farm *farm, uint32_t dev, uint64_t off,
                    uint64_t len)
{
  struct ff_range *r;
  uint64_t end = off + len;
  int64_t n;
  int rc = 0;

  if (dev >= farm->ndevs || off > farm->devs[dev].size ||
      len > farm->devs[dev].size - off)
    return ff_farm_zero(farm, dev, off, len); /* its range error */
  n = ff_farm_extents_all(farm, dev, &r);
  if (n < 0)
    return -1;
  for (int64_t i = 0; i < n && rc == 0; i++) {
    uint64_t s = r[i].off > off ? r[i].off : off;
    uint64_t e = r[i].off + r[i].len < end ? r[i].off + r[i].len : end;

    if (s < e)
      rc = ff_farm_zero(farm, dev, s, e - s);
  }
  free(r);
  return rc;
}
