/* ff-replay: replay into the farm's overlay what lvm wrote to images of
 * the farm, save the overlay, reload it into a fresh farm and check that
 * the farm now reads exactly like the images.  Used by
 * tests/integration/test-overlay-lvm.sh.
 *
 * usage: ff-replay SPEC IMGDIR OVERLAY
 * For every device it compares, block by block (4 KiB), the image file
 * IMGDIR/<name> with the farm over the union of the image's data regions
 * (SEEK_DATA/SEEK_HOLE) and the farm's extents, and writes every block
 * that differs into the overlay.  Exit 0 when the reloaded farm matches
 * every image, 1 otherwise.
 */
#include "ff-error.h"
#include "ff-farm.h"
#include "ff-spec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLK 4096u

static struct ff_farm *
load(const char *spec)
{
  struct ff_spec *sp = ff_spec_load_file(spec);
  struct ff_farm *farm = sp ? ff_farm_new(sp) : NULL;

  ff_spec_free(sp);
  if (!farm)
    fprintf(stderr, "ff-replay: %s\n", ff_errmsg());
  return farm;
}

/* Call fn on every block of dev that the image or the farm may hold
 * data in.  Returns blocks visited, or -1. */
typedef int (*block_fn)(struct ff_farm *farm, uint32_t dev, int fd,
                        uint64_t off, uint64_t *count);

static int
visit(struct ff_farm *farm, uint32_t dev, int fd, block_fn fn, uint64_t *count)
{
  uint64_t size = ff_farm_dev_size(farm, dev);
  off_t pos = 0;
  int64_t n = ff_farm_extents(farm, dev, NULL, 0);
  struct ff_range *r;

  if (n < 0 || !(r = malloc(((size_t)n + 1) * sizeof *r)))
    return -1;
  ff_farm_extents(farm, dev, r, (size_t)n);
  for (int64_t i = 0; i < n; i++)
    for (uint64_t o = r[i].off / BLK * BLK; o < r[i].off + r[i].len; o += BLK)
      if (fn(farm, dev, fd, o, count) < 0)
        goto fail;
  for (;;) {
    off_t data = lseek(fd, pos, SEEK_DATA), hole;

    if (data < 0 && errno == ENXIO)
      break;
    if (data < 0)
      goto fail;
    hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0)
      goto fail;
    for (uint64_t o = (uint64_t)data / BLK * BLK;
         o < (uint64_t)hole && o < size; o += BLK)
      if (fn(farm, dev, fd, o, count) < 0)
        goto fail;
    pos = hole;
  }
  free(r);
  return 0;
fail:
  free(r);
  return -1;
}

static int
read_both(struct ff_farm *farm, uint32_t dev, int fd, uint64_t off,
          uint8_t *img, uint8_t *mine, size_t *len)
{
  uint64_t size = ff_farm_dev_size(farm, dev);

  *len = size - off < BLK ? size - off : BLK;
  if (pread(fd, img, *len, (off_t)off) != (ssize_t)*len) {
    fprintf(stderr, "ff-replay: %s: short read at %llu\n",
            ff_farm_dev_name(farm, dev), (unsigned long long)off);
    return -1;
  }
  if (ff_farm_read(farm, dev, mine, off, *len) < 0) {
    fprintf(stderr, "ff-replay: %s\n", ff_errmsg());
    return -1;
  }
  return 0;
}

static int
replay_block(struct ff_farm *farm, uint32_t dev, int fd, uint64_t off,
             uint64_t *count)
{
  uint8_t img[BLK], mine[BLK];
  size_t len;

  if (read_both(farm, dev, fd, off, img, mine, &len) < 0)
    return -1;
  if (!memcmp(img, mine, len))
    return 0;
  if (ff_farm_write(farm, dev, img, off, len) < 0) {
    fprintf(stderr, "ff-replay: %s\n", ff_errmsg());
    return -1;
  }
  (*count)++;
  return 0;
}

static int
check_block(struct ff_farm *farm, uint32_t dev, int fd, uint64_t off,
            uint64_t *count)
{
  uint8_t img[BLK], mine[BLK];
  size_t len;

  if (read_both(farm, dev, fd, off, img, mine, &len) < 0)
    return -1;
  if (memcmp(img, mine, len)) {
    fprintf(stderr, "ff-replay: %s differs at %llu after reload\n",
            ff_farm_dev_name(farm, dev), (unsigned long long)off);
    (*count)++;
  }
  return 0;
}

static int
each_device(struct ff_farm *farm, const char *dir, block_fn fn,
            uint64_t *count)
{
  for (uint32_t d = 0; d < ff_farm_ndevs(farm); d++) {
    char path[4096];
    int fd, r;

    snprintf(path, sizeof path, "%s/%s", dir, ff_farm_dev_name(farm, d));
    fd = open(path, O_RDONLY);
    if (fd < 0) {
      fprintf(stderr, "ff-replay: %s: %s\n", path, strerror(errno));
      return -1;
    }
    r = visit(farm, d, fd, fn, count);
    close(fd);
    if (r < 0)
      return -1;
  }
  return 0;
}

int
main(int argc, char **argv)
{
  struct ff_farm *farm, *again;
  uint64_t written = 0, bad = 0, data, zero, bytes;

  if (argc != 4) {
    fprintf(stderr, "usage: ff-replay SPEC IMGDIR OVERLAY\n");
    return 2;
  }
  if (!(farm = load(argv[1])) ||
      each_device(farm, argv[2], replay_block, &written) < 0)
    return 1;
  if (ff_farm_save_overlay(farm, argv[3]) < 0) {
    fprintf(stderr, "ff-replay: %s\n", ff_errmsg());
    return 1;
  }
  ff_overlay_stats(ff_farm_overlay(farm), &data, &zero, &bytes);
  ff_farm_free(farm);

  if (!(again = load(argv[1])))
    return 1;
  if (ff_farm_load_overlay(again, argv[3]) < 0) {
    fprintf(stderr, "ff-replay: %s\n", ff_errmsg());
    return 1;
  }
  if (each_device(again, argv[2], check_block, &bad) < 0)
    return 1;
  ff_farm_free(again);
  printf("replayed %llu changed blocks (%llu data, %llu zero) into the "
         "overlay; after save and reload: %llu blocks differ\n",
         (unsigned long long)written, (unsigned long long)data,
         (unsigned long long)zero, (unsigned long long)bad);
  return bad ? 1 : 0;
}
