/* fusefarm: device-mapper through its ioctls (ff-dm.h). */
#include "ff-dm.h"

#include "ff-error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define CONTROL "/dev/mapper/control"

static void
dm_init(struct dm_ioctl *io, size_t size, const char *name)
{
  memset(io, 0, sizeof *io);
  io->version[0] = DM_VERSION_MAJOR;
  io->version[1] = 0;
  io->version[2] = 0;
  io->data_size = (uint32_t)size;
  io->data_start = sizeof *io;
  if (name)
    snprintf(io->name, sizeof io->name, "%s", name);
}

int
ff_dm_usable(void)
{
  struct dm_ioctl io;
  int fd = open(CONTROL, O_RDWR | O_CLOEXEC);

  if (fd < 0) {
    ff_error("%s: %m", CONTROL);
    return 0;
  }
  dm_init(&io, sizeof io, NULL);
  if (ioctl(fd, DM_VERSION, &io) < 0) {
    ff_error("%s: DM_VERSION: %m", CONTROL);
    close(fd);
    return 0;
  }
  close(fd);
  return 1;
}

/* DM_DEV_STATUS of name into d: 0, 1 when it went meanwhile, or -1. */
static int
dev_status(int fd, const char *name, struct ff_dm_dev *d)
{
  struct dm_ioctl io;

  dm_init(&io, sizeof io, name);
  if (ioctl(fd, DM_DEV_STATUS, &io) < 0) {
    if (errno == ENXIO)
      return 1;
    return ff_error("%s: DM_DEV_STATUS %s: %m", CONTROL, name);
  }
  snprintf(d->name, sizeof d->name, "%s", io.name);
  snprintf(d->uuid, sizeof d->uuid, "%s", io.uuid);
  d->open_count = io.open_count;
  d->dev = io.dev;
  return 0;
}

int
ff_dm_list(struct ff_dm_list *out)
{
  size_t size = 16384;
  struct dm_ioctl *io = NULL;
  int fd, rc = -1;

  out->v = NULL;
  out->n = 0;
  fd = open(CONTROL, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return ff_error("%s: %m", CONTROL);
  for (;;) {
    struct dm_ioctl *bigger = realloc(io, size);

    if (!bigger) {
      ff_error("out of memory");
      goto out;
    }
    io = bigger;
    dm_init(io, size, NULL);
    if (ioctl(fd, DM_LIST_DEVICES, io) < 0) {
      ff_error("%s: DM_LIST_DEVICES: %m", CONTROL);
      goto out;
    }
    if (!(io->flags & DM_BUFFER_FULL_FLAG))
      break;
    size *= 2;
  }
  if (io->data_size > io->data_start) {
    const char *base = (const char *)io + io->data_start;
    const struct dm_name_list *nl = (const struct dm_name_list *)base;

    if (nl->dev) /* an empty list is one entry with dev 0 */
      for (;;) {
        struct ff_dm_dev *v = realloc(out->v, (out->n + 1) * sizeof *v);
        int st;

        if (!v) {
          ff_error("out of memory");
          goto out;
        }
        out->v = v;
        st = dev_status(fd, nl->name, &out->v[out->n]);
        if (st < 0)
          goto out;
        if (st == 0)
          out->n++;
        if (!nl->next)
          break;
        nl = (const struct dm_name_list *)((const char *)nl + nl->next);
      }
  }
  rc = 0;
out:
  if (rc < 0)
    ff_dm_list_free(out);
  free(io);
  close(fd);
  return rc;
}

void
ff_dm_list_free(struct ff_dm_list *l)
{
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

int
ff_dm_vg_of(const char *name, char *vg, size_t len)
{
  size_t o = 0;

  for (const char *p = name; *p; p++) {
    if (*p == '-') {
      if (p[1] != '-')
        break; /* the separator */
      p++;
    }
    if (o + 1 >= len)
      return -1;
    vg[o++] = *p;
    if (!p[1])
      return -1; /* no separator: not VG-LV */
  }
  if (!o)
    return -1;
  vg[o] = '\0';
  return 0;
}

/* lvm's UUID "xxxxxx-xxxx-...-xxxxxx" without its dashes into out (33). */
static void
undash(const char *uuid, char *out, size_t len)
{
  size_t o = 0;

  for (; *uuid && o + 1 < len; uuid++)
    if (*uuid != '-')
      out[o++] = *uuid;
  out[o] = '\0';
}

int
ff_dm_of_vgs(const struct ff_dm_dev *d, const char *const *vgs,
             const char *const *vg_uuids, size_t n)
{
  char vg[128], id[64];
  int named = ff_dm_vg_of(d->name, vg, sizeof vg) == 0;

  for (size_t i = 0; i < n; i++) {
    if (named && vgs && vgs[i] && !strcmp(vg, vgs[i]))
      return 1;
    if (vg_uuids && vg_uuids[i] && !strncmp(d->uuid, "LVM-", 4)) {
      undash(vg_uuids[i], id, sizeof id);
      if (id[0] && !strncmp(d->uuid + 4, id, strlen(id)))
        return 1;
    }
  }
  return 0;
}

const struct ff_dm_dev *
ff_dm_clash(const struct ff_dm_list *l, const char *const *vgs,
            const char *const *vg_uuids, size_t n)
{
  for (size_t i = 0; i < l->n; i++)
    if (ff_dm_of_vgs(&l->v[i], vgs, vg_uuids, n))
      return &l->v[i];
  return NULL;
}

long
ff_dm_count(const char *const *vgs, const char *const *vg_uuids, size_t n)
{
  struct ff_dm_list l;
  long c = 0;

  if (ff_dm_list(&l) < 0)
    return -1;
  for (size_t i = 0; i < l.n; i++)
    c += ff_dm_of_vgs(&l.v[i], vgs, vg_uuids, n);
  ff_dm_list_free(&l);
  return c;
}

static void
pause_ms(unsigned ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* Add 1 to held[j] for every device j of l that device i depends on. */
static int
count_deps(int fd, const struct ff_dm_list *l, size_t i, int *held)
{
  union {
    struct dm_ioctl io;
    char buf[sizeof(struct dm_ioctl) + 4096];
  } u;
  const struct dm_target_deps *deps;

  dm_init(&u.io, sizeof u, l->v[i].name);
  if (ioctl(fd, DM_TABLE_DEPS, &u.io) < 0)
    return errno == ENXIO
             ? 0
             : ff_error("%s: DM_TABLE_DEPS %s: %m", CONTROL, l->v[i].name);
  deps = (const struct dm_target_deps *)(u.buf + u.io.data_start);
  for (uint32_t k = 0; k < deps->count; k++)
    for (size_t j = 0; j < l->n; j++)
      if (l->v[j].dev == deps->dev[k])
        held[j]++;
  return 0;
}

long
ff_dm_wait_released(const char *const *vgs, const char *const *vg_uuids,
                    size_t n, unsigned ms)
{
  for (unsigned waited = 0;; waited += 20) {
    struct ff_dm_list l;
    long outside = 0;
    int fd, *held;

    if (ff_dm_list(&l) < 0)
      return -1;
    fd = open(CONTROL, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      ff_error("%s: %m", CONTROL);
      ff_dm_list_free(&l);
      return -1;
    }
    held = calloc(l.n + 1, sizeof *held);
    if (!held) {
      close(fd);
      ff_dm_list_free(&l);
      return ff_error("out of memory");
    }
    for (size_t i = 0; i < l.n; i++)
      if (ff_dm_of_vgs(&l.v[i], vgs, vg_uuids, n) &&
          count_deps(fd, &l, i, held) < 0) {
        outside = -1;
        break;
      }
    for (size_t i = 0; outside >= 0 && i < l.n; i++)
      outside +=
        ff_dm_of_vgs(&l.v[i], vgs, vg_uuids, n) && l.v[i].open_count > held[i];
    close(fd);
    free(held);
    ff_dm_list_free(&l);
    if (outside <= 0 || waited >= ms)
      return outside;
    pause_ms(20);
  }
}

long
ff_dm_remove_all(const char *const *vgs, const char *const *vg_uuids, size_t n)
{
  long removed = 0;
  int fd = open(CONTROL, O_RDWR | O_CLOEXEC);

  if (fd < 0)
    return ff_error("%s: %m", CONTROL);
  for (unsigned tries = 0;; tries++) {
    struct ff_dm_list l;
    long left = 0, pass = 0;
    const char *stuck = NULL;
    int stuck_errno = 0;

    if (ff_dm_list(&l) < 0) {
      close(fd);
      return -1;
    }
    /* Unheld devices first: a top goes before what it sits on. */
    for (int held = 0; held < 2; held++)
      for (size_t i = 0; i < l.n; i++) {
        struct dm_ioctl io;

        if (!ff_dm_of_vgs(&l.v[i], vgs, vg_uuids, n) ||
            (l.v[i].open_count > 0) != held)
          continue;
        dm_init(&io, sizeof io, l.v[i].name);
        if (ioctl(fd, DM_DEV_REMOVE, &io) == 0 || errno == ENXIO) {
          pass++;
        } else {
          left++;
          if (!stuck) {
            stuck = l.v[i].name;
            stuck_errno = errno;
          }
        }
      }
    removed += pass;
    /* Held by someone else for a moment (udev's blkid): again, for up to
     * 5 s, as `dmsetup remove --retry`. */
    if (left && !pass && stuck_errno == EBUSY && tries < 50) {
      ff_dm_list_free(&l);
      pause_ms(100);
      continue;
    }
    if (!left || !pass) {
      long rc = removed;

      if (left) {
        errno = stuck_errno;
        rc = ff_error("device-mapper device %s could not be removed: %m "
                      "(%ld of the farm's left; `dmsetup info %s` says who "
                      "holds it)",
                      stuck, left, stuck);
      }
      ff_dm_list_free(&l);
      close(fd);
      return rc;
    }
    ff_dm_list_free(&l);
  }
}
