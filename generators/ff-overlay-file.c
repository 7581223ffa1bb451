/* fusefarm: the write overlay's save file (format in ff-overlay.h, at
 * ff_overlay_save): header, one record per block, trailer with a record
 * count and a CRC of everything before it; written to path.tmp and
 * renamed over path (ff_atomic_*), checked whole before anything is
 * loaded.
 *
 * THREAD MODEL: a save reads each device under its read lock in turn
 * (ff-overlay.c's rules: one lock at a time); a load fills an overlay
 * nobody else uses yet, through ff_ov_append.
 */
#include "ff-overlay-int.h"
#include "ff-file.h"
#include "ff-bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ff-crc.h"
#include "ff-error.h"

#define BLOCK FF_OVERLAY_BLOCK

/* On-disk format, see ff_overlay_save in ff-overlay.h. */
#define FILE_MAGIC    "FFOVRLAY"
#define TRAILER_MAGIC "FFOVEND"
#define FILE_VERSION  1
#define HEADER_SIZE   32
#define RECORD_SIZE   16
#define TRAILER_SIZE  20
#define REC_ZERO      1u
#define IO_BUF        (64 * 1024)

/* --- saving -------------------------------------------------------- */

/* Buffered writer keeping a running CRC.  crc is the raw register:
 * ff_crc32(bytes) == ~ff_crc_update(0xFFFFFFFF, bytes), so the trailer
 * holds ~crc. */
struct fwriter {
  int fd;
  uint32_t crc;
  size_t used;
  unsigned char buf[IO_BUF];
};

static int
fw_flush(struct fwriter *w)
{
  size_t done = 0;

  while (done < w->used) {
    ssize_t r = write(w->fd, w->buf + done, w->used - done);

    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0) {
      errno = ENOSPC;
      return -1;
    }
    done += (size_t)r;
  }
  w->used = 0;
  return 0;
}

static int
fw_put(struct fwriter *w, const void *p, size_t n)
{
  const unsigned char *s = p;

  w->crc = ff_crc_update(w->crc, s, n);
  while (n > 0) {
    size_t k;

    if (w->used == sizeof w->buf && fw_flush(w) == -1)
      return -1;
    k = sizeof w->buf - w->used;
    if (k > n)
      k = n;
    memcpy(w->buf + w->used, s, k);
    w->used += k;
    s += k;
    n -= k;
  }
  return 0;
}

/* Write every record of one device under its read lock. */
static int
save_dev(struct fwriter *w, struct ov_dev *d, uint32_t dev, uint64_t *count)
{
  unsigned char rec[RECORD_SIZE];
  int r = 0;

  rdlock(d);
  for (size_t i = 0; i < d->len && r == 0; i++) {
    ff_put_le32(rec, dev);
    ff_put_le32(rec + 4, d->v[i].data ? 0 : REC_ZERO);
    ff_put_le64(rec + 8, d->v[i].blk);
    r = fw_put(w, rec, sizeof rec);
    if (r == 0 && d->v[i].data != NULL)
      r = fw_put(w, d->v[i].data, BLOCK);
    (*count)++;
  }
  unlock(d);
  return r;
}

/* Record "save overlay PATH: WHAT TMP: strerror" and keep errno. */
static void
save_error(int err, const char *path, const char *what, const char *tmp)
{
  errno = err;
  ff_error("save overlay %s: %s %s: %m", path, what, tmp);
  errno = err;
}

int
ff_overlay_save_check(const char *path)
{
  struct ff_atomic a;

  if (path == NULL || *path == '\0')
    return ff_error("save overlay: no path");
  /* The save's own first step (a link planted at path or path.tmp is
   * refused now, not at unmount), undone. */
  if (ff_atomic_begin(&a, path) == -1) {
    ff_error_prefix("save overlay %s: ", path);
    return -1;
  }
  close(a.fd);
  if (unlink(a.tmp) == -1) {
    save_error(errno, path, "remove", a.tmp);
    return -1;
  }
  return 0;
}

int
ff_overlay_save(struct ff_overlay *ov, const char *path, uint64_t fingerprint)
{
  unsigned char hdr[HEADER_SIZE] = {0}, trl[TRAILER_SIZE] = {0};
  struct fwriter *w = NULL;
  struct ff_atomic a;
  const char *step = NULL;
  uint64_t count = 0;
  bool created = false;
  int r = -1, err = 0;

  if (ov == NULL || path == NULL) {
    errno = EINVAL;
    return ff_error("save overlay: no overlay or path");
  }
  w = malloc(sizeof *w);
  if (w == NULL) {
    err = errno;
    ff_error("save overlay %s: %m", path);
    goto out;
  }
  /* A stale temporary file of ours from an interrupted save is replaced;
   * a link there is refused, never written through (ff_atomic_begin). */
  if (ff_atomic_begin(&a, path) == -1) {
    err = errno;
    ff_error_prefix("save overlay %s: ", path);
    goto out;
  }
  created = true;
  w->fd = a.fd;
  w->crc = 0xFFFFFFFFu;
  w->used = 0;

  memcpy(hdr, FILE_MAGIC, 8);
  ff_put_le32(hdr + 8, FILE_VERSION);
  ff_put_le32(hdr + 12, BLOCK);
  ff_put_le64(hdr + 16, fingerprint);
  ff_put_le32(hdr + 24, ov->ndev);
  if (fw_put(w, hdr, sizeof hdr) == -1)
    goto write_err;
  for (uint32_t i = 0; i < ov->ndev; i++) {
    struct ov_dev *d = dev_state(ov, i);

    if (d != NULL && save_dev(w, d, i, &count) == -1)
      goto write_err;
  }
  memcpy(trl, TRAILER_MAGIC, 8);
  ff_put_le64(trl + 8, count);
  if (fw_put(w, trl, 16) == -1)
    goto write_err;
  ff_put_le32(trl + 16, ~w->crc);
  if (fw_put(w, trl + 16, 4) == -1 || fw_flush(w) == -1)
    goto write_err;

  /* fsync, close, rename over path, fsync the directory; on failure the
   * temporary file is gone and path is as it was. */
  created = false;
  if (ff_atomic_commit(&a, &step) == -1) {
    err = errno;
    if (step)
      save_error(err, path, step, a.tmp);
    else /* its own message: path became a link */
      ff_error_prefix("save overlay %s: ", path);
    goto out;
  }
  r = 0;
  goto out;

write_err:
  err = errno;
  save_error(err, path, "write", a.tmp);
out:
  if (created)
    ff_atomic_abort(&a);
  free(w);
  if (r == -1)
    errno = err ? err : EIO;
  return r;
}

/* --- loading ------------------------------------------------------- */

/* Buffered sequential reader. */
struct freader {
  int fd;
  size_t at, len;
  unsigned char buf[IO_BUF];
};

/* Read exactly n bytes: 0, or -1 with errno set (0 at end of file). */
static int
fr_get(struct freader *r, void *out, size_t n)
{
  unsigned char *o = out;

  while (n > 0) {
    size_t k;

    if (r->at == r->len) {
      ssize_t got = read(r->fd, r->buf, sizeof r->buf);

      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0) {
        if (got == 0)
          errno = 0;
        return -1;
      }
      r->at = 0;
      r->len = (size_t)got;
    }
    k = r->len - r->at;
    if (k > n)
      k = n;
    memcpy(o, r->buf + r->at, k);
    r->at += k;
    o += k;
    n -= k;
  }
  return 0;
}

static int
fr_seek(struct freader *r, uint64_t off)
{
  r->at = r->len = 0;
  return lseek(r->fd, (off_t)off, SEEK_SET) == (off_t)-1 ? -1 : 0;
}

/* Report a failed read of the overlay file. */
static int
read_error(const char *path)
{
  if (errno == 0)
    return ff_error("overlay %s is truncated (it changed while loading)",
                    path);
  return ff_error("read overlay %s: %m", path);
}

/* Check the header, trailer and CRC of the whole file. */
static int
load_check(struct freader *r, const char *path, uint64_t size,
           uint64_t fingerprint, uint64_t *nrec)
{
  unsigned char hdr[HEADER_SIZE], trl[TRAILER_SIZE], chunk[BLOCK];
  uint32_t crc = 0xFFFFFFFFu, version, bsize, stored;
  uint64_t left, fp;
  ssize_t got;
  size_t k;

  if (size < HEADER_SIZE + TRAILER_SIZE)
    return ff_error("overlay %s is truncated (%" PRIu64
                    " bytes, shorter than a header and trailer)",
                    path, size);
  if (fr_get(r, hdr, sizeof hdr) == -1)
    return read_error(path);
  if (memcmp(hdr, FILE_MAGIC, 8) != 0)
    return ff_error("overlay %s is not a fusefarm overlay file (bad magic)",
                    path);
  version = ff_get_le32(hdr + 8);
  if (version != FILE_VERSION)
    return ff_error("overlay %s has unsupported version %" PRIu32
                    " (expected %d)",
                    path, version, FILE_VERSION);
  bsize = ff_get_le32(hdr + 12);
  if (bsize != BLOCK)
    return ff_error("overlay %s has block size %" PRIu32 " (expected %d)",
                    path, bsize, BLOCK);
  got = pread(r->fd, trl, sizeof trl, (off_t)(size - TRAILER_SIZE));
  if (got != (ssize_t)sizeof trl) {
    if (got >= 0)
      errno = 0;
    return read_error(path);
  }
  if (memcmp(trl, TRAILER_MAGIC, 8) != 0)
    return ff_error("overlay %s is truncated or corrupt (no trailer at the "
                    "end)",
                    path);

  /* CRC of everything before the stored CRC, header included. */
  crc = ff_crc_update(crc, hdr, sizeof hdr);
  for (left = size - 4 - HEADER_SIZE; left > 0; left -= k) {
    k = (size_t)min_u64(left, sizeof chunk);
    if (fr_get(r, chunk, k) == -1)
      return read_error(path);
    crc = ff_crc_update(crc, chunk, k);
  }
  stored = ff_get_le32(trl + 16);
  if (stored != ~crc)
    return ff_error("overlay %s is corrupt (CRC mismatch: stored %08" PRIx32
                    ", computed %08" PRIx32 ")",
                    path, stored, ~crc);

  fp = ff_get_le64(hdr + 16);
  if (fp != fingerprint)
    return ff_error("overlay %s was saved for another farm (fingerprint "
                    "%016" PRIx64 ", this farm %016" PRIx64 ")",
                    path, fp, fingerprint);
  *nrec = ff_get_le64(trl + 8);
  return 0;
}

/* Parse the records (integrity already checked) into the overlay. */
static int
load_records(struct ff_overlay *ov, struct freader *r, const char *path,
             uint64_t size, uint64_t nrec_trailer)
{
  uint64_t pos = HEADER_SIZE, end = size - TRAILER_SIZE, nrec = 0;
  uint64_t prev_dev = 0, prev_blk = 0;
  unsigned char rec[RECORD_SIZE];

  if (fr_seek(r, HEADER_SIZE) == -1)
    return ff_error("seek overlay %s: %m", path);
  for (; pos < end; nrec++) {
    unsigned char *data = NULL;
    uint32_t dev, flags;
    uint64_t blk;

    if (end - pos < RECORD_SIZE)
      return ff_error("overlay %s is corrupt (record %" PRIu64
                      " runs into the trailer)",
                      path, nrec);
    if (fr_get(r, rec, sizeof rec) == -1)
      return read_error(path);
    pos += RECORD_SIZE;
    dev = ff_get_le32(rec);
    flags = ff_get_le32(rec + 4);
    blk = ff_get_le64(rec + 8);
    if ((flags & ~REC_ZERO) != 0)
      return ff_error("overlay %s: record %" PRIu64
                      " has unknown flags 0x%" PRIx32,
                      path, nrec, flags);
    if (dev >= ov->ndev)
      return ff_error("overlay %s: record %" PRIu64 " is for device %" PRIu32
                      ", beyond this farm's %" PRIu32 " devices",
                      path, nrec, dev, ov->ndev);
    if (blk >= dev_blocks(ov->sizes[dev]))
      return ff_error("overlay %s: record %" PRIu64 ": block %" PRIu64
                      " is beyond the end of device %" PRIu32 " (%" PRIu64
                      " bytes)",
                      path, nrec, blk, dev, ov->sizes[dev]);
    if (nrec > 0 && (dev < prev_dev || (dev == prev_dev && blk <= prev_blk)))
      return ff_error("overlay %s: record %" PRIu64 " is out of order", path,
                      nrec);
    prev_dev = dev;
    prev_blk = blk;

    if ((flags & REC_ZERO) == 0) {
      size_t bl = block_len(ov->sizes[dev], blk * BLOCK);

      if (end - pos < BLOCK)
        return ff_error("overlay %s is corrupt (record %" PRIu64
                        " runs into the trailer)",
                        path, nrec);
      data = malloc(BLOCK);
      if (data == NULL)
        return ff_error("load overlay %s: %m", path);
      if (fr_get(r, data, BLOCK) == -1) {
        free(data);
        return read_error(path);
      }
      pos += BLOCK;
      /* Keep the invariants: data blocks are not all zero and bytes past
       * the device's end are zero. */
      memset(data + bl, 0, BLOCK - bl);
      if (all_zero(data, bl)) {
        free(data);
        return ff_error("overlay %s: record %" PRIu64
                        " is a data block holding only zeros",
                        path, nrec);
      }
    }
    if (ff_ov_append(ov, dev, blk, data) == -1) {
      free(data);
      return ff_error_prefix("load overlay %s: ", path);
    }
  }
  if (nrec != nrec_trailer)
    return ff_error("overlay %s is corrupt (the trailer counts %" PRIu64
                    " records, the file holds %" PRIu64 ")",
                    path, nrec_trailer, nrec);
  return 0;
}

int
ff_overlay_load(struct ff_overlay *ov, const char *path, uint64_t fingerprint)
{
  struct freader *r = NULL;
  struct stat st;
  uint64_t nrec = 0;
  int fd, ret = -1;

  if (ov == NULL || path == NULL)
    return ff_error("load overlay: no overlay or path");
  for (uint32_t i = 0; i < ov->ndev; i++)
    if (ff_overlay_blocks(ov, i) != 0)
      return ff_error("load overlay %s: the overlay is not empty (device "
                      "%" PRIu32 " has blocks)",
                      path, i);

  fd = ff_open_regular(path, NULL);
  if (fd == -1)
    return -1;
  if (fstat(fd, &st) == -1) {
    ff_error("stat overlay %s: %m", path);
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    ff_error("overlay %s is not a regular file", path);
    goto out;
  }
  r = malloc(sizeof *r);
  if (r == NULL) {
    ff_error("load overlay %s: %m", path);
    goto out;
  }
  r->fd = fd;
  r->at = r->len = 0;
  if (load_check(r, path, (uint64_t)st.st_size, fingerprint, &nrec) == -1)
    goto out;
  ret = load_records(ov, r, path, (uint64_t)st.st_size, nrec);
  if (ret == -1) /* all-or-nothing */
    ff_ov_clear(ov);

out:
  free(r);
  close(fd);
  return ret;
}
