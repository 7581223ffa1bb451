/* fusefarm: unit tests for the write overlay (ff-overlay.h).
 *
 * Most tests keep a reference model (the bytes every device should read
 * back, and which blocks were ever written) next to the overlay, and
 * compare the two after every step: the bytes must match, and the set of
 * overlay blocks must follow the invariants (data blocks are never all
 * zero, zero markers only hide non-zero base blocks, untouched blocks are
 * absent).
 *
 * THREAD MODEL: only test_threads starts threads; they report failures
 * through atomics and a mutex-guarded message because cmocka's asserts
 * are not thread-safe, and the main thread asserts after joining them.
 */
#include "ff-test.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ff-crc.h"
#include "ff-error.h"
#include "ff-overlay.h"

#define B    FF_OVERLAY_BLOCK
#define NDEV 4
#define FP   0x0123456789abcdefULL

/* Device 1 ends with a short block; device 2 has more blocks than one
 * ff_overlay_foreach batch. */
static const uint64_t sizes[NDEV] = {16 * B, 10 * B + 1536, 200 * B, 3 * B};

/* Under /tmp, not $TMPDIR: a save runs as nobody, which must reach the
 * directory, and the suite's TMPDIR is private (0700). */
static char tmpdir[] = "/tmp/ff-test-overlay.XXXXXX";

/* --- base and helpers ---------------------------------------------- */

/* Every third block (0, 3, 6, ...) is all zero; the others hold a
 * pattern with no zero byte that depends on the device and offset. */
static unsigned char
base_byte(uint32_t dev, uint64_t p)
{
  if ((p / B) % 3 == 0)
    return 0;
  return (unsigned char)(((p * 2654435761u) >> 11) ^ (dev * 37u)) | 1;
}

static bool
base_block_zero(uint64_t blk)
{
  return blk % 3 == 0;
}

struct base_ctx {
  const uint64_t *sizes;
  uint32_t ndev;
  _Atomic uint64_t calls;
  _Atomic int fail; /* make the next reads fail */
};

static int
test_base(void *opaque, uint32_t dev, void *buf, uint64_t off, size_t len)
{
  struct base_ctx *c = opaque;
  unsigned char *p = buf;

  atomic_fetch_add(&c->calls, 1);
  if (atomic_load(&c->fail))
    return ff_error("injected base failure");
  if (dev >= c->ndev || off > c->sizes[dev] || len > c->sizes[dev] - off)
    return ff_error("base read out of range: dev %" PRIu32 " off %" PRIu64
                    " len %zu",
                    dev, off, len);
  for (size_t i = 0; i < len; i++)
    p[i] = base_byte(dev, off + i);
  return 0;
}

static struct base_ctx base_ctx = {sizes, NDEV, 0, 0};

/* xorshift64*: deterministic test data. */
static uint64_t
rnd(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

static uint64_t
rnd_below(uint64_t *s, uint64_t n)
{
  return n ? rnd(s) % n : 0;
}

static void
fill_random(uint64_t *s, unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(rnd(s) >> 56);
}

static bool
is_zero(const unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0)
      return false;
  return true;
}

static struct ff_overlay *
new_overlay(void)
{
  struct ff_overlay *ov = ff_overlay_new(NDEV, sizes, test_base, &base_ctx);

  if (ov == NULL)
    fail_msg("ff_overlay_new: %s", ff_errmsg());
  return ov;
}

/* The call failed and the message contains sub, is lowercase and has no
 * full stop. */
static void
assert_failed_with(int r, const char *sub)
{
  const char *m = ff_errmsg();
  size_t n = strlen(m);

  if (r != -1)
    fail_msg("expected failure with \"%s\", got %d", sub, r);
  if (strstr(m, sub) == NULL)
    fail_msg("expected \"%s\" in error \"%s\"", sub, m);
  if (n == 0 || (m[0] >= 'A' && m[0] <= 'Z') || m[n - 1] == '.')
    fail_msg("badly formed error message \"%s\"", m);
}

/* Read a device range as a front end does: base, then the overlay. */
static void
read_dev(struct ff_overlay *ov, uint32_t dev, unsigned char *buf, uint64_t off,
         size_t len)
{
  assert_ok(test_base(&base_ctx, dev, buf, off, len));
  ff_overlay_apply(ov, dev, buf, off, len);
}

/* --- reference model ----------------------------------------------- */

struct model {
  unsigned char *bytes[NDEV];
  bool *written[NDEV]; /* per block: touched by a write or zero */
};

static void
model_init(struct model *m)
{
  for (uint32_t d = 0; d < NDEV; d++) {
    m->bytes[d] = malloc(sizes[d]);
    m->written[d] = calloc(sizes[d] / B + 1, sizeof(bool));
    assert_non_null(m->bytes[d]);
    assert_non_null(m->written[d]);
    assert_ok(test_base(&base_ctx, d, m->bytes[d], 0, sizes[d]));
  }
}

static void
model_free(struct model *m)
{
  for (uint32_t d = 0; d < NDEV; d++) {
    free(m->bytes[d]);
    free(m->written[d]);
  }
}

/* Apply a write (src) or zero (src NULL) to both overlay and model. */
static void
do_write(struct ff_overlay *ov, struct model *m, uint32_t dev,
         const unsigned char *src, uint64_t off, size_t len)
{
  if (src != NULL)
    assert_ok(ff_overlay_write(ov, dev, src, off, len));
  else
    assert_ok(ff_overlay_zero(ov, dev, off, len));
  if (src != NULL)
    memcpy(m->bytes[dev] + off, src, len);
  else
    memset(m->bytes[dev] + off, 0, len);
  for (uint64_t b = off / B; len > 0 && b <= (off + len - 1) / B; b++)
    m->written[dev][b] = true;
}

struct entry {
  uint64_t off;
  int is_zero;
};

struct entries {
  struct entry v[256];
  size_t n;
  size_t stop_at; /* return 42 at this call (1-based); 0: never */
};

static int
collect(void *opaque, uint64_t off, int is_zero)
{
  struct entries *e = opaque;

  if (e->n < sizeof e->v / sizeof e->v[0]) {
    e->v[e->n].off = off;
    e->v[e->n].is_zero = is_zero;
  }
  e->n++;
  return e->stop_at != 0 && e->n == e->stop_at ? 42 : 0;
}

/* The overlay reads back exactly the model, and holds exactly the blocks
 * the invariants say it should. */
static void
check_model(struct ff_overlay *ov, const struct model *m)
{
  uint64_t tdata = 0, tzero = 0, sdata, szero, sbytes;

  for (uint32_t d = 0; d < NDEV; d++) {
    unsigned char *buf = malloc(sizes[d]);
    struct entries e = {.n = 0};
    uint64_t nblk = sizes[d] / B + (sizes[d] % B != 0), k = 0;

    assert_non_null(buf);
    read_dev(ov, d, buf, 0, sizes[d]);
    for (uint64_t i = 0; i < sizes[d]; i++)
      if (buf[i] != m->bytes[d][i])
        fail_msg("device %" PRIu32 " offset %" PRIu64 ": read %u, want %u", d,
                 i, buf[i], m->bytes[d][i]);
    free(buf);

    assert_int_equal(ff_overlay_foreach(ov, d, collect, &e), 0);
    assert_true(e.n <= sizeof e.v / sizeof e.v[0]);
    assert_int_equal(ff_overlay_blocks(ov, d), e.n);
    for (uint64_t b = 0; b < nblk; b++) {
      uint64_t bl = sizes[d] - b * B < B ? sizes[d] - b * B : B;
      bool zero = is_zero(m->bytes[d] + b * B, bl);
      bool want = m->written[d][b] && !(zero && base_block_zero(b));

      if (want && (k == e.n || e.v[k].off != b * B))
        fail_msg("device %" PRIu32 " block %" PRIu64 " missing", d, b);
      if (!want && k < e.n && e.v[k].off == b * B)
        fail_msg("device %" PRIu32 " block %" PRIu64 " should be absent", d,
                 b);
      if (want) {
        if (e.v[k].is_zero != zero)
          fail_msg("device %" PRIu32 " block %" PRIu64 ": is_zero %d", d, b,
                   e.v[k].is_zero);
        if (zero)
          tzero++;
        else
          tdata++;
        k++;
      }
    }
    assert_int_equal(k, e.n);
  }
  ff_overlay_stats(ov, &sdata, &szero, &sbytes);
  assert_int_equal(sdata, tdata);
  assert_int_equal(szero, tzero);
  assert_int_equal(sbytes, tdata * B);
}

static void
assert_empty(struct ff_overlay *ov)
{
  uint64_t data, zero, bytes;

  for (uint32_t d = 0; d < NDEV; d++) {
    struct entries e = {.n = 0};

    assert_int_equal(ff_overlay_blocks(ov, d), 0);
    assert_int_equal(ff_overlay_foreach(ov, d, collect, &e), 0);
    assert_int_equal(e.n, 0);
  }
  ff_overlay_stats(ov, &data, &zero, &bytes);
  assert_int_equal(data + zero + bytes, 0);
}

/* --- writes and zeros ---------------------------------------------- */

struct write_case {
  const char *name;
  uint32_t dev;
  uint64_t off;
  uint64_t len;
};

static const struct write_case write_cases[] = {
  {"aligned block over non-zero base", 0, 1 * B, B},
  {"aligned block over zero base", 0, 0, B},
  {"partial block over non-zero base", 0, B + 100, 200},
  {"partial block over zero base", 0, 3 * B + 10, 20},
  {"across one block boundary", 0, 2 * B - 7, 14},
  {"across many blocks, unaligned", 0, 100, 5 * B + 333},
  {"whole device", 0, 0, 16 * B},
  {"last full block", 0, 15 * B, B},
  {"up to the end of a short last block", 1, 9 * B + 100, B + 1436},
  {"all of a short last block", 1, 10 * B, 1536},
  {"last byte of a device", 1, 10 * B + 1535, 1},
  {"first byte of a device", 3, 0, 1},
  {"zero length", 0, 5 * B, 0},
  {"zero length at the end", 0, 16 * B, 0},
};

/* For each range: write random bytes, overwrite part of it, write a
 * buffer of zeros, write again, zero with ff_overlay_zero; the model is
 * checked after every step. */
static void
test_write_cases(void **state)
{
  (void)state;
  for (size_t i = 0; i < sizeof write_cases / sizeof write_cases[0]; i++) {
    const struct write_case *c = &write_cases[i];
    struct ff_overlay *ov = new_overlay();
    unsigned char *buf = malloc(c->len + 1);
    uint64_t seed = 0x9e3779b97f4a7c15ULL + i;
    struct model m;

    print_message("  case: %s\n", c->name);
    assert_non_null(buf);
    model_init(&m);
    fill_random(&seed, buf, c->len);
    do_write(ov, &m, c->dev, buf, c->off, c->len);
    check_model(ov, &m);
    if (c->len > 2) {
      do_write(ov, &m, c->dev, buf + 1, c->off + 1, c->len - 2);
      check_model(ov, &m);
    }
    memset(buf, 0, c->len);
    do_write(ov, &m, c->dev, buf, c->off, c->len);
    check_model(ov, &m);
    fill_random(&seed, buf, c->len);
    do_write(ov, &m, c->dev, buf, c->off, c->len);
    check_model(ov, &m);
    do_write(ov, &m, c->dev, NULL, c->off, c->len);
    check_model(ov, &m);
    model_free(&m);
    free(buf);
    ff_overlay_free(ov);
  }
}

/* Partial writes keep the base bytes around them, and a second partial
 * write merges with the first (overlay), not with the base. */
static void
test_partial_merge(void **state)
{
  struct ff_overlay *ov = new_overlay();
  unsigned char blk[B], base[B], pat[100];
  uint64_t data, zero;

  (void)state;
  memset(pat, 0xA5, sizeof pat);
  assert_ok(ff_overlay_write(ov, 0, pat, B + 1000, sizeof pat));
  assert_ok(ff_overlay_write(ov, 0, pat, B + 3000, 50));
  assert_int_equal(ff_overlay_blocks(ov, 0), 1);
  read_dev(ov, 0, blk, B, B);
  assert_ok(test_base(&base_ctx, 0, base, B, B));
  assert_memory_equal(blk, base, 1000);
  assert_memory_equal(blk + 1000, pat, 100);
  assert_memory_equal(blk + 1100, base + 1100, 1900);
  assert_memory_equal(blk + 3000, pat, 50);
  assert_memory_equal(blk + 3050, base + 3050, B - 3050);

  /* Over a zero base block the rest of the block stays zero. */
  assert_ok(ff_overlay_write(ov, 0, pat, 3 * B + 7, 10));
  read_dev(ov, 0, blk, 3 * B, B);
  assert_true(is_zero(blk, 7));
  assert_memory_equal(blk + 7, pat, 10);
  assert_true(is_zero(blk + 17, B - 17));

  ff_overlay_stats(ov, &data, &zero, NULL);
  assert_int_equal(data, 2);
  assert_int_equal(zero, 0);
  ff_overlay_free(ov);
}

/* All-zero blocks over an all-zero base are removed, not stored. */
static void
test_zero_over_zero_base(void **state)
{
  struct ff_overlay *ov = new_overlay();
  unsigned char pat[B], zeros[B] = {0};

  (void)state;
  memset(pat, 0x5A, sizeof pat);
  assert_true(base_block_zero(3));
  assert_ok(ff_overlay_write(ov, 0, pat, 3 * B, B));
  assert_int_equal(ff_overlay_blocks(ov, 0), 1);
  assert_ok(ff_overlay_zero(ov, 0, 3 * B, B));
  assert_empty(ov);

  /* Partial: write then zero the same bytes. */
  assert_ok(ff_overlay_write(ov, 0, pat, 3 * B + 10, 20));
  assert_int_equal(ff_overlay_blocks(ov, 0), 1);
  assert_ok(ff_overlay_write(ov, 0, zeros, 3 * B + 10, 20));
  assert_empty(ov);

  /* A buffer of zeros over a zero base never creates a block, nor does
   * zeroing a device that was never written. */
  assert_ok(ff_overlay_write(ov, 2, zeros, 6 * B, B));
  assert_ok(ff_overlay_zero(ov, 3, 0, 1));
  assert_empty(ov);
  ff_overlay_free(ov);
}

/* Zeros over a non-zero base are kept as zero markers (no data). */
static void
test_zero_marker(void **state)
{
  struct ff_overlay *ov = new_overlay();
  unsigned char blk[B], pat[10], zeros[B] = {0};
  uint64_t data, zero, bytes;
  struct entries e = {.n = 0};
  struct model m;

  (void)state;
  assert_false(base_block_zero(1));
  assert_ok(ff_overlay_zero(ov, 0, B, B));
  assert_int_equal(ff_overlay_blocks(ov, 0), 1);
  ff_overlay_stats(ov, &data, &zero, &bytes);
  assert_int_equal(data, 0);
  assert_int_equal(zero, 1);
  assert_int_equal(bytes, 0);
  read_dev(ov, 0, blk, B, B);
  assert_true(is_zero(blk, B));
  assert_int_equal(ff_overlay_foreach(ov, 0, collect, &e), 0);
  assert_int_equal(e.n, 1);
  assert_int_equal(e.v[0].off, B);
  assert_int_equal(e.v[0].is_zero, 1);

  /* A partial write into a marker merges with zeros, not the base. */
  memset(pat, 0x77, sizeof pat);
  assert_ok(ff_overlay_write(ov, 0, pat, B + 5, sizeof pat));
  read_dev(ov, 0, blk, B, B);
  assert_true(is_zero(blk, 5));
  assert_memory_equal(blk + 5, pat, sizeof pat);
  assert_true(is_zero(blk + 15, B - 15));
  ff_overlay_stats(ov, &data, &zero, &bytes);
  assert_int_equal(data, 1);
  assert_int_equal(zero, 0);
  assert_int_equal(bytes, B);

  /* Zeroing those bytes again turns it back into a marker. */
  assert_ok(ff_overlay_write(ov, 0, zeros, B + 5, sizeof pat));
  ff_overlay_stats(ov, &data, &zero, NULL);
  assert_int_equal(data, 0);
  assert_int_equal(zero, 1);
  ff_overlay_free(ov);

  /* Unaligned zero over mixed bases, checked against the model:
   * partial non-zero base (data), full non-zero (marker), full zero base
   * (absent), partial non-zero base (data). */
  ov = new_overlay();
  model_init(&m);
  do_write(ov, &m, 0, NULL, B + 100, 3 * B);
  check_model(ov, &m);
  do_write(ov, &m, 1, NULL, 0, sizes[1]);
  check_model(ov, &m);
  model_free(&m);
  ff_overlay_free(ov);
}

struct range_case {
  uint32_t dev;
  uint64_t off;
  uint64_t len;
  bool zero;
  const char *msg;
};

static const struct range_case range_cases[] = {
  {1, 10 * B + 1536, 1, false, "write beyond end of device 1: "},
  {1, 10 * B + 1535, 2, false, "write beyond end of device 1: "},
  {1, 10 * B + 1537, 0, false, "write beyond end of device 1: "},
  {0, UINT64_MAX, 2, false, "write beyond end of device 0: "},
  {0, 1, UINT64_MAX, false, "write beyond end of device 0: "},
  {3, 3 * B, 1, true, "zero beyond end of device 3: "},
  {0, UINT64_MAX - 1, 2, true, "zero beyond end of device 0: "},
  {0, 8, UINT64_MAX - 7, true, "zero beyond end of device 0: "},
  {NDEV, 0, 1, false, "write: no such device 4"},
  {UINT32_MAX, 0, 1, true, "zero: no such device 4294967295"},
};

static void
test_out_of_range(void **state)
{
  struct ff_overlay *ov = new_overlay();
  unsigned char buf[16] = {1};

  (void)state;
  for (size_t i = 0; i < sizeof range_cases / sizeof range_cases[0]; i++) {
    const struct range_case *c = &range_cases[i];
    int r;

    /* buf is far shorter than len: the range check must come first. */
    if (c->zero)
      r = ff_overlay_zero(ov, c->dev, c->off, c->len);
    else
      r = ff_overlay_write(ov, c->dev, buf, c->off, (size_t)c->len);
    assert_failed_with(r, c->msg);
    assert_empty(ov);
  }
  assert_failed_with(ff_overlay_write(ov, 0, NULL, 0, 1), "no buffer");

  /* Reads outside the device are left alone. */
  memset(buf, 0xEE, sizeof buf);
  assert_ok(ff_overlay_write(ov, 3, buf, 3 * B - 8, 8));
  memset(buf, 0x11, sizeof buf);
  ff_overlay_apply(ov, 3, buf, 3 * B - 8, sizeof buf);
  for (size_t i = 0; i < 8; i++)
    assert_int_equal(buf[i], 0xEE);
  for (size_t i = 8; i < sizeof buf; i++)
    assert_int_equal(buf[i], 0x11);
  ff_overlay_apply(ov, NDEV, buf, 0, sizeof buf);
  ff_overlay_apply(ov, 3, buf, UINT64_MAX - 4, sizeof buf);
  for (size_t i = 8; i < sizeof buf; i++)
    assert_int_equal(buf[i], 0x11);
  assert_int_equal(ff_overlay_blocks(ov, NDEV), 0);
  ff_overlay_free(ov);
}

/* A failing base read fails the write and changes nothing. */
static void
test_base_failure(void **state)
{
  struct ff_overlay *ov = new_overlay();
  unsigned char pat[10] = {1, 2, 3};

  (void)state;
  atomic_store(&base_ctx.fail, 1);
  assert_failed_with(ff_overlay_write(ov, 0, pat, B + 3, sizeof pat),
                     "injected base failure");
  assert_failed_with(ff_overlay_zero(ov, 0, 0, 4 * B),
                     "zero device 0: read base at 0: injected");
  atomic_store(&base_ctx.fail, 0);
  assert_empty(ov);
  ff_overlay_free(ov);
}

static void
test_foreach_order(void **state)
{
  static const uint64_t order[] = {7, 2, 11, 0, 5, 15};
  struct ff_overlay *ov = new_overlay();
  struct entries e = {.n = 0};
  unsigned char pat[B];
  uint64_t seed = 7;

  (void)state;
  memset(pat, 0x42, sizeof pat);
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    assert_ok(ff_overlay_write(ov, 0, pat, order[i] * B, B));
  assert_ok(ff_overlay_zero(ov, 0, 4 * B, B)); /* marker */
  assert_int_equal(ff_overlay_foreach(ov, 0, collect, &e), 0);
  assert_int_equal(e.n, 7);
  {
    static const uint64_t want[] = {0, 2, 4, 5, 7, 11, 15};

    for (size_t i = 0; i < 7; i++) {
      assert_int_equal(e.v[i].off, want[i] * B);
      assert_int_equal(e.v[i].is_zero, want[i] == 4);
    }
  }

  /* Stops at, and returns, the first non-zero value of fn. */
  e.n = 0;
  e.stop_at = 3;
  assert_int_equal(ff_overlay_foreach(ov, 0, collect, &e), 42);
  assert_int_equal(e.n, 3);

  /* More blocks than one internal batch, written in random order. */
  {
    uint64_t perm[200];

    for (uint64_t i = 0; i < 200; i++)
      perm[i] = i;
    for (uint64_t i = 199; i > 0; i--) {
      uint64_t j = rnd_below(&seed, i + 1), t = perm[i];

      perm[i] = perm[j];
      perm[j] = t;
    }
    for (size_t i = 0; i < 200; i++)
      assert_ok(ff_overlay_write(ov, 2, pat, perm[i] * B, B));
  }
  e.n = 0;
  e.stop_at = 0;
  assert_int_equal(ff_overlay_foreach(ov, 2, collect, &e), 0);
  assert_int_equal(e.n, 200);
  for (size_t i = 0; i < 200; i++)
    assert_int_equal(e.v[i].off, i * B);
  e.n = 0;
  e.stop_at = 130;
  assert_int_equal(ff_overlay_foreach(ov, 2, collect, &e), 42);
  assert_int_equal(e.n, 130);
  e.n = 0;
  e.stop_at = 0;
  assert_int_equal(ff_overlay_foreach(ov, 1, collect, &e), 0);
  assert_int_equal(e.n, 0);
  ff_overlay_free(ov);
}

/* Random writes and zeros of random sizes and contents, checked against
 * the model. */
static void
random_ops(struct ff_overlay *ov, struct model *m, uint64_t seed, int nops,
           int check_every)
{
  unsigned char *buf = malloc(8 * B);

  assert_non_null(buf);
  for (int i = 0; i < nops; i++) {
    uint32_t dev = (uint32_t)rnd_below(&seed, NDEV);
    uint64_t len = 1 + rnd_below(&seed, rnd_below(&seed, 2) ? 8 * B : 300);
    uint64_t off;
    int kind = (int)rnd_below(&seed, 10);

    if (len > sizes[dev])
      len = sizes[dev];
    off = rnd_below(&seed, sizes[dev] - len + 1);
    if (rnd_below(&seed, 3) == 0) /* aligned */
      off -= off % B;
    if (kind < 5)
      fill_random(&seed, buf, len);
    else if (kind < 7)
      memset(buf, 0, len);
    else if (kind < 9) { /* mostly zero */
      memset(buf, 0, len);
      buf[rnd_below(&seed, len)] = 1;
    }
    do_write(ov, m, dev, kind == 9 ? NULL : buf, off, len);
    if ((i + 1) % check_every == 0)
      check_model(ov, m);
  }
  check_model(ov, m);
  free(buf);
}

static void
test_random_ops(void **state)
{
  struct ff_overlay *ov = new_overlay();
  struct model m;

  (void)state;
  model_init(&m);
  random_ops(ov, &m, 12345, 3000, 100);
  model_free(&m);
  ff_overlay_free(ov);
}

/* --- save and load ------------------------------------------------- */

static char *
tmp_path(const char *name)
{
  char *p;

  if (asprintf(&p, "%s/%s", tmpdir, name) == -1)
    fail_msg("asprintf: %m");
  return p;
}

static bool
file_exists(const char *path)
{
  struct stat st;

  return stat(path, &st) == 0;
}

static unsigned char *
slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  unsigned char *p;
  long n;

  if (f == NULL)
    fail_msg("open %s: %m", path);
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  rewind(f);
  p = malloc((size_t)n + 1);
  assert_non_null(p);
  assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return p;
}

static void
spit(const char *path, const unsigned char *p, size_t len)
{
  FILE *f = fopen(path, "wb");

  if (f == NULL)
    fail_msg("create %s: %m", path);
  assert_int_equal(fwrite(p, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

/* Two overlays read back the same bytes and hold the same blocks. */
static void
assert_same(struct ff_overlay *a, struct ff_overlay *b)
{
  uint64_t s1[3], s2[3];

  for (uint32_t d = 0; d < NDEV; d++) {
    unsigned char *x = malloc(sizes[d]), *y = malloc(sizes[d]);
    struct entries ea = {.n = 0}, eb = {.n = 0};

    assert_non_null(x);
    assert_non_null(y);
    read_dev(a, d, x, 0, sizes[d]);
    read_dev(b, d, y, 0, sizes[d]);
    assert_memory_equal(x, y, sizes[d]);
    free(x);
    free(y);
    ff_overlay_foreach(a, d, collect, &ea);
    ff_overlay_foreach(b, d, collect, &eb);
    assert_int_equal(ea.n, eb.n);
    assert_memory_equal(ea.v, eb.v, ea.n * sizeof ea.v[0]);
  }
  ff_overlay_stats(a, &s1[0], &s1[1], &s1[2]);
  ff_overlay_stats(b, &s2[0], &s2[1], &s2[2]);
  assert_memory_equal(s1, s2, sizeof s1);
}

static void
test_save_load_roundtrip(void **state)
{
  struct ff_overlay *ov = new_overlay(), *ov2 = new_overlay();
  char *path = tmp_path("roundtrip"), *tmp = tmp_path("roundtrip.tmp");
  struct model m;

  (void)state;
  /* Empty overlay. */
  assert_ok(ff_overlay_save(ov, path, FP));
  assert_ok(ff_overlay_load(ov2, path, FP));
  assert_empty(ov2);

  model_init(&m);
  random_ops(ov, &m, 777, 400, 1000);
  assert_ok(ff_overlay_save(ov, path, FP));
  assert_false(file_exists(tmp));
  assert_ok(ff_overlay_load(ov2, path, FP));
  assert_same(ov, ov2);
  check_model(ov2, &m);

  /* Saving again replaces the file; a stale .tmp does not get in the
   * way. */
  spit(tmp, (const unsigned char *)"junk", 4);
  random_ops(ov, &m, 778, 100, 1000);
  assert_ok(ff_overlay_save(ov, path, FP));
  assert_false(file_exists(tmp));
  ff_overlay_free(ov2);
  ov2 = new_overlay();
  assert_ok(ff_overlay_load(ov2, path, FP));
  assert_same(ov, ov2);
  check_model(ov2, &m);

  /* Loading into a non-empty overlay is refused and keeps its blocks. */
  assert_failed_with(ff_overlay_load(ov2, path, FP), "is not empty");
  check_model(ov2, &m);

  model_free(&m);
  ff_overlay_free(ov);
  ff_overlay_free(ov2);
  free(path);
  free(tmp);
}

/* Offsets inside a saved file (see the format in ff-overlay.h). */
#define HDR 32
#define REC 16
#define TRL 20

enum mutation {
  TRUNCATE, /* keep the first arg bytes */
  APPEND,   /* append arg bytes of garbage */
  FLIP,     /* flip a bit of byte arg */
  SET32,    /* store val as le32 at arg, then fix the CRC */
  SET64,    /* store val as le64 at arg, then fix the CRC */
  CUT,      /* remove val bytes at arg, then fix the CRC */
  ZERO_BLK, /* zero B bytes at arg, then fix the CRC */
};

struct load_case {
  const char *name;
  enum mutation mut;
  long arg; /* negative: from the end of the file */
  uint64_t val;
  const char *msg;
};

/* The saved file below holds, in order: dev 0 block 1 (data), dev 0
 * block 4 (marker), dev 0 block 6 (data), dev 3 block 2 (data). */
#define REC0 HDR
#define REC1 (REC0 + REC + B)
#define REC2 (REC1 + REC)
#define REC3 (REC2 + REC + B)

static const struct load_case load_cases[] = {
  {"empty file", TRUNCATE, 0, 0, "is truncated"},
  {"half a magic", TRUNCATE, 4, 0, "is truncated"},
  {"header only", TRUNCATE, HDR, 0, "is truncated"},
  {"header and a bit", TRUNCATE, HDR + TRL - 1, 0, "is truncated"},
  {"inside record header", TRUNCATE, REC0 + 5, 0, "truncated"},
  {"inside record data", TRUNCATE, REC0 + REC + 100, 0,
   "truncated or corrupt"},
  {"at a record boundary", TRUNCATE, REC2, 0, "truncated"},
  {"without the trailer", TRUNCATE, -TRL, 0, "truncated"},
  {"half a trailer", TRUNCATE, -10, 0, "truncated"},
  {"last byte missing", TRUNCATE, -1, 0, "truncated"},
  {"bad magic", FLIP, 0, 0, "not a fusefarm overlay file"},
  {"bad version", FLIP, 8, 0, "unsupported version"},
  {"bad block size", FLIP, 13, 0, "block size"},
  {"flipped fingerprint", FLIP, 16, 0, "CRC mismatch"},
  {"flipped record device", FLIP, REC0, 0, "CRC mismatch"},
  {"flipped record flags", FLIP, REC0 + 4, 0, "CRC mismatch"},
  {"flipped data byte", FLIP, REC0 + REC + 1234, 0, "CRC mismatch"},
  {"flipped last data byte", FLIP, REC3 + REC + B - 1, 0, "CRC mismatch"},
  {"flipped trailer count", FLIP, -12, 0, "CRC mismatch"},
  {"flipped stored CRC", FLIP, -1, 0, "CRC mismatch"},
  {"trailing garbage", APPEND, 16, 0, "truncated or corrupt"},
  {"unknown flag", SET32, REC1 + 4, 3, "unknown flags 0x3"},
  {"device beyond the farm", SET32, REC3, NDEV, "beyond this farm"},
  {"block beyond the device", SET64, REC3 + 8, 3, "beyond the end of device"},
  {"out of order", SET64, REC2 + 8, 1, "out of order"},
  {"duplicate", SET64, REC2 + 8, 4, "out of order"},
  {"count too high", SET64, -12, 5, "trailer counts 5 records"},
  {"count too low", SET64, -12, 3, "trailer counts 3 records"},
  {"flipped block index", FLIP, REC1 + 9, 0, "CRC mismatch"},
  {"unknown flag on a marker", SET32, REC1 + 4, 2, "unknown flags 0x2"},
  {"data cut short", CUT, REC3 + REC + 10, 4000, "runs into the trailer"},
  {"data missing", CUT, REC3 + REC, B, "runs into the trailer"},
  {"record header cut short", CUT, REC3 + 8, REC - 8 + B,
   "runs into the trailer"},
  {"all-zero data block", ZERO_BLK, REC2 + REC, 0, "holding only zeros"},
};

static void
fix_crc(unsigned char *p, size_t len)
{
  uint32_t crc = ff_crc32(p, len - 4);

  for (int i = 0; i < 4; i++)
    p[len - 4 + i] = (unsigned char)(crc >> (8 * i));
}

/* Every corruption is rejected with its message and leaves the overlay
 * empty, even when valid records were loaded before the bad one. */
static void
test_load_rejects(void **state)
{
  struct ff_overlay *ov = new_overlay();
  char *good = tmp_path("good"), *bad = tmp_path("bad");
  unsigned char pat[B], *orig;
  size_t olen;

  (void)state;
  memset(pat, 0x33, sizeof pat);
  assert_ok(ff_overlay_write(ov, 0, pat, 1 * B, B));
  assert_ok(ff_overlay_zero(ov, 0, 4 * B, B));
  assert_ok(ff_overlay_write(ov, 0, pat, 6 * B, B));
  assert_ok(ff_overlay_write(ov, 3, pat, 2 * B, B));
  assert_ok(ff_overlay_save(ov, good, FP));
  ff_overlay_free(ov);
  orig = slurp(good, &olen);
  assert_int_equal(olen, REC3 + REC + B + TRL);

  for (size_t i = 0; i < sizeof load_cases / sizeof load_cases[0]; i++) {
    const struct load_case *c = &load_cases[i];
    unsigned char *p = malloc(olen + 16);
    size_t len = olen;
    size_t at = c->arg < 0 ? olen - (size_t)-c->arg : (size_t)c->arg;

    print_message("  case: %s\n", c->name);
    assert_non_null(p);
    memcpy(p, orig, olen);
    switch (c->mut) {
    case TRUNCATE:
      len = at;
      break;
    case APPEND:
      memset(p + olen, 0xAB, (size_t)c->arg);
      len = olen + (size_t)c->arg;
      break;
    case FLIP:
      p[at] ^= 0x10;
      break;
    case SET32:
      for (int k = 0; k < 4; k++)
        p[at + k] = (unsigned char)(c->val >> (8 * k));
      fix_crc(p, len);
      break;
    case SET64:
      for (int k = 0; k < 8; k++)
        p[at + k] = (unsigned char)(c->val >> (8 * k));
      fix_crc(p, len);
      break;
    case CUT:
      memmove(p + at, p + at + c->val, len - at - c->val);
      len -= c->val;
      fix_crc(p, len);
      break;
    case ZERO_BLK:
      memset(p + at, 0, B);
      fix_crc(p, len);
      break;
    }
    spit(bad, p, len);
    ov = new_overlay();
    assert_failed_with(ff_overlay_load(ov, bad, FP), c->msg);
    if (strstr(ff_errmsg(), bad) == NULL)
      fail_msg("error \"%s\" does not name the file", ff_errmsg());
    assert_empty(ov);
    ff_overlay_free(ov);
    free(p);
  }

  /* Wrong fingerprint; a farm with fewer devices or a smaller device
   * (records of device 0 load first, then device 3 fails). */
  ov = new_overlay();
  assert_failed_with(ff_overlay_load(ov, good, FP ^ 1),
                     "was saved for another farm");
  assert_empty(ov);
  ff_overlay_free(ov);
  {
    uint64_t small[NDEV] = {sizes[0], sizes[1], sizes[2], 2 * B};

    ov = ff_overlay_new(NDEV, small, test_base, &base_ctx);
    assert_non_null(ov);
    assert_failed_with(ff_overlay_load(ov, good, FP),
                       "block 2 is beyond the end of device 3");
    assert_empty(ov);
    ff_overlay_free(ov);
    ov = ff_overlay_new(3, sizes, test_base, &base_ctx);
    assert_non_null(ov);
    assert_failed_with(ff_overlay_load(ov, good, FP),
                       "device 3, beyond this farm's 3 devices");
    for (uint32_t d = 0; d < 3; d++)
      assert_int_equal(ff_overlay_blocks(ov, d), 0);
    ff_overlay_free(ov);
  }

  /* Missing file; a directory. */
  ov = new_overlay();
  assert_failed_with(ff_overlay_load(ov, "/nonexistent/overlay", FP),
                     "/nonexistent/overlay: No such file");
  assert_failed_with(ff_overlay_load(ov, tmpdir, FP), "not a regular file");
  /* A fifo is refused at once, not read forever. */
  {
    char fifo[4200];

    snprintf(fifo, sizeof fifo, "%s/fifo.ovl", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_failed_with(ff_overlay_load(ov, fifo, FP),
                       "not a regular file (a fifo)");
    unlink(fifo);
  }
  /* And the good file still loads. */
  assert_ok(ff_overlay_load(ov, good, FP));
  assert_int_equal(ff_overlay_blocks(ov, 0), 3);
  assert_int_equal(ff_overlay_blocks(ov, 3), 1);
  ff_overlay_free(ov);

  free(orig);
  free(good);
  free(bad);
}

struct child_result {
  int r;
  char msg[512];
};

/* Run ff_overlay_save in a child process (after setup(arg), e.g. to drop
 * privileges or limit the file size) and return its result. */
static struct child_result
save_in_child(struct ff_overlay *ov, const char *path, int (*setup)(void))
{
  struct child_result res = {-2, ""};
  int pfd[2], status;
  pid_t pid;

  assert_int_equal(pipe(pfd), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(pfd[0]);
    if (setup() == -1)
      snprintf(res.msg, sizeof res.msg, "child setup: %s", strerror(errno));
    else {
      res.r = ff_overlay_save(ov, path, FP);
      snprintf(res.msg, sizeof res.msg, "%s", ff_errmsg());
    }
    if (write(pfd[1], &res, sizeof res) != (ssize_t)sizeof res)
      _exit(2);
    _exit(0);
  }
  close(pfd[1]);
  assert_int_equal(read(pfd[0], &res, sizeof res), (ssize_t)sizeof res);
  close(pfd[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return res;
}

static int
drop_privileges(void)
{
  if (geteuid() != 0)
    return 0;
  if (setgroups(0, NULL) == -1 || setgid(65534) == -1 || setuid(65534) == -1)
    return -1;
  return 0;
}

static int
limit_file_size(void)
{
  struct rlimit rl = {3 * B, 3 * B};

  signal(SIGXFSZ, SIG_IGN); /* write() fails with EFBIG instead */
  return setrlimit(RLIMIT_FSIZE, &rl);
}

/* Failed saves leave the previous file as it was and no .tmp behind. */
static void
test_save_failures(void **state)
{
  struct ff_overlay *ov = new_overlay();
  char *dir = tmp_path("ro"), *path, *tmp;
  unsigned char pat[B], *before, *after;
  size_t blen, alen;
  struct child_result res;

  (void)state;
  assert_int_equal(mkdir(dir, 0755), 0);
  if (asprintf(&path, "%s/overlay", dir) == -1 ||
      asprintf(&tmp, "%s/overlay.tmp", dir) == -1)
    fail_msg("asprintf: %m");
  memset(pat, 0x61, sizeof pat);
  assert_ok(ff_overlay_write(ov, 0, pat, B, B));
  assert_ok(ff_overlay_save(ov, path, FP));
  before = slurp(path, &blen);
  for (uint64_t b = 0; b < 16; b++)
    assert_ok(ff_overlay_write(ov, 2, pat, b * B, B));

  /* Read-only directory (as root, the save runs as nobody). */
  assert_int_equal(chmod(dir, 0555), 0);
  res = save_in_child(ov, path, drop_privileges);
  assert_int_equal(chmod(dir, 0755), 0);
  assert_int_equal(res.r, -1);
  if (strstr(res.msg, path) == NULL || strstr(res.msg, "Permission") == NULL)
    fail_msg("unexpected error \"%s\"", res.msg);
  assert_false(file_exists(tmp));
  after = slurp(path, &alen);
  assert_int_equal(alen, blen);
  assert_memory_equal(after, before, blen);
  free(after);

  /* The file system refuses part-way through (EFBIG, as ENOSPC would). */
  res = save_in_child(ov, path, limit_file_size);
  assert_int_equal(res.r, -1);
  if (strstr(res.msg, "save overlay ") == NULL ||
      strstr(res.msg, path) == NULL || strstr(res.msg, "write ") == NULL)
    fail_msg("unexpected error \"%s\"", res.msg);
  assert_false(file_exists(tmp));
  after = slurp(path, &alen);
  assert_int_equal(alen, blen);
  assert_memory_equal(after, before, blen);
  free(after);

  /* Missing directory. */
  {
    char *nope = tmp_path("missing/overlay");

    assert_failed_with(ff_overlay_save(ov, nope, FP), nope);
    assert_false(file_exists(nope));
    free(nope);
  }

  free(before);
  free(path);
  free(tmp);
  free(dir);
  ff_overlay_free(ov);
}

/* --- concurrency --------------------------------------------------- */

#define NTHREADS 8
#define NREADERS 2
#define TDEVS    3 /* devices 0..2: whole-block writes */
#define RMW_DEV  3 /* device 3: sub-block writes, one quarter per thread */
#define WRITES   1500

struct shared {
  struct ff_overlay *ov;
  const char *save_path;
  _Atomic int writers_left;
  _Atomic unsigned long failures;
  _Atomic unsigned long reads;
  pthread_mutex_t lock;
  char first_failure[256];
};

struct worker {
  struct shared *sh;
  int id;
};

static void report(struct shared *sh, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void
report(struct shared *sh, const char *fmt, ...)
{
  va_list ap;

  if (atomic_fetch_add(&sh->failures, 1) != 0)
    return;
  pthread_mutex_lock(&sh->lock);
  va_start(ap, fmt);
  vsnprintf(sh->first_failure, sizeof sh->first_failure, fmt, ap);
  va_end(ap);
  pthread_mutex_unlock(&sh->lock);
}

/* Every whole-block write covers whole groups of GROUP blocks and stamps
 * each block with the write's tag (thread + 1) << 32 | seq: bytes 0..7
 * hold the tag, 8..15 the block index, the rest a fill derived from both.
 * A block is then the base, all zeros, or one write's full stamp. */
#define GROUP 4

static unsigned char
stamp_fill(uint64_t tag, uint64_t blk)
{
  return (unsigned char)((tag * 31 + blk * 7) >> 3 | 1);
}

static void
stamp(unsigned char *p, uint64_t tag, uint64_t blk)
{
  for (int i = 0; i < 8; i++) {
    p[i] = (unsigned char)(tag >> (8 * i));
    p[8 + i] = (unsigned char)(blk >> (8 * i));
  }
  memset(p + 16, stamp_fill(tag, blk), B - 16);
}

enum { WHOLE_BASE = -1, WHOLE_ZERO = -2, TORN = -3 };

/* The block's tag, or WHOLE_BASE, WHOLE_ZERO or TORN. */
static int64_t
block_state(uint32_t dev, uint64_t blk, const unsigned char *p)
{
  uint64_t tag = 0, b = 0;
  bool base = true;

  if (is_zero(p, B))
    return WHOLE_ZERO;
  for (size_t i = 0; i < B && base; i++)
    base = p[i] == base_byte(dev, blk * B + i);
  if (base)
    return WHOLE_BASE;
  for (int i = 0; i < 8; i++) {
    tag |= (uint64_t)p[i] << (8 * i);
    b |= (uint64_t)p[8 + i] << (8 * i);
  }
  if (b != blk || tag >> 32 == 0 || tag >> 32 > NTHREADS)
    return TORN;
  for (size_t i = 16; i < B; i++)
    if (p[i] != stamp_fill(tag, blk))
      return TORN;
  return (int64_t)tag;
}

/* Check a snapshot of the first nblk blocks of dev: every block whole,
 * every group one write.  Returns NULL or what is wrong. */
static const char *
check_snapshot(uint32_t dev, const unsigned char *buf, uint64_t nblk,
               uint64_t *where)
{
  for (uint64_t g = 0; g + GROUP <= nblk; g += GROUP) {
    int64_t first = block_state(dev, g, buf + g * B);

    for (uint64_t b = g; b < g + GROUP; b++) {
      int64_t st = block_state(dev, b, buf + b * B);

      *where = b;
      if (st == TORN)
        return "torn block";
      /* Base and zero mix in a zeroed group (zero-base blocks are
       * dropped and read as base zeros, which are zeros too). */
      if (st != first && !(st < 0 && first < 0))
        return "group holds more than one write";
    }
  }
  return NULL;
}

static void *
writer_main(void *arg)
{
  struct worker *w = arg;
  struct shared *sh = w->sh;
  unsigned char *buf = malloc(8 * B), quarter[B / 4], last[3] = {0};
  uint64_t seed = 1000 + (uint64_t)w->id;
  unsigned char seq = 0;

  if (buf == NULL) {
    report(sh, "writer %d: out of memory", w->id);
    goto done;
  }
  for (int i = 0; i < WRITES; i++) {
    uint32_t dev = (uint32_t)rnd_below(&seed, TDEVS);
    uint64_t ngroups = sizes[dev] / B / GROUP;
    uint64_t n = 1 + rnd_below(&seed, 2), g0;
    uint64_t tag = (uint64_t)(w->id + 1) << 32 | (uint64_t)i;
    int r;

    /* Hot spot: most writes land on the first 3 groups. */
    uint64_t span = i % 4 && ngroups > 3 ? 3 : ngroups;

    g0 = rnd_below(&seed, span - n + 1);
    if (i % 7 == 3)
      r = ff_overlay_zero(sh->ov, dev, g0 * GROUP * B, n * GROUP * B);
    else {
      for (uint64_t k = 0; k < n * GROUP; k++)
        stamp(buf + k * B, tag, g0 * GROUP + k);
      r = ff_overlay_write(sh->ov, dev, buf, g0 * GROUP * B, n * GROUP * B);
    }
    if (r != 0)
      report(sh, "writer %d: %s", w->id, ff_errmsg());

    /* Sub-block read-modify-write: thread t alone writes quarter t of
     * each block, a new value each time, so its quarter must still hold
     * what it wrote last; anything else is another thread's stale
     * read-modify-write (a lost update). */
    if (w->id < 4) {
      uint64_t blk = rnd_below(&seed, 3);
      uint64_t qoff = blk * B + (uint64_t)w->id * sizeof quarter;

      if (last[blk] != 0) {
        if (test_base(&base_ctx, RMW_DEV, quarter, qoff, sizeof quarter) != 0)
          report(sh, "writer %d: %s", w->id, ff_errmsg());
        ff_overlay_apply(sh->ov, RMW_DEV, quarter, qoff, sizeof quarter);
        for (size_t k = 0; k < sizeof quarter; k++)
          if (quarter[k] != last[blk]) {
            report(sh,
                   "lost update: device %d block %" PRIu64
                   " quarter %d holds %u, wrote %u",
                   RMW_DEV, blk, w->id, quarter[k], last[blk]);
            break;
          }
      }
      seq = (unsigned char)(seq % 255 + 1);
      memset(quarter, seq, sizeof quarter);
      if (ff_overlay_write(sh->ov, RMW_DEV, quarter, qoff, sizeof quarter) !=
          0)
        report(sh, "writer %d: %s", w->id, ff_errmsg());
      last[blk] = seq;
    }
  }
done:
  free(buf);
  atomic_fetch_sub(&sh->writers_left, 1);
  return NULL;
}

static int
count_entry(void *opaque, uint64_t off, int is_zero)
{
  uint64_t *last = opaque;

  (void)is_zero;
  if (*last != UINT64_MAX && off <= *last)
    return -1; /* out of order */
  *last = off;
  return 0;
}

static void *
reader_main(void *arg)
{
  struct worker *w = arg;
  struct shared *sh = w->sh;
  unsigned char *buf = malloc(sizes[2]);

  if (buf == NULL) {
    report(sh, "reader: out of memory");
    return NULL;
  }
  while (atomic_load(&sh->writers_left) > 0) {
    for (uint32_t dev = 0; dev < TDEVS; dev++) {
      uint64_t nblk = sizes[dev] / B, last = UINT64_MAX;
      size_t len = (size_t)((w->id && nblk > 12 ? 12 : nblk) * B);
      const char *bad;
      uint64_t where;

      /* One apply call is one snapshot of the device. */
      if (test_base(&base_ctx, dev, buf, 0, len) != 0)
        report(sh, "reader: %s", ff_errmsg());
      ff_overlay_apply(sh->ov, dev, buf, 0, len);
      bad = check_snapshot(dev, buf, len / B, &where);
      if (bad != NULL)
        report(sh, "%s: device %" PRIu32 " block %" PRIu64, bad, dev, where);
      if (ff_overlay_foreach(sh->ov, dev, count_entry, &last) != 0)
        report(sh, "foreach out of order on device %" PRIu32, dev);
      atomic_fetch_add(&sh->reads, 1);
    }
    ff_overlay_stats(sh->ov, NULL, NULL, NULL);
  }
  free(buf);
  return NULL;
}

static void *
saver_main(void *arg)
{
  struct worker *w = arg;
  struct shared *sh = w->sh;

  for (int i = 0; i < 3 && atomic_load(&sh->writers_left) > 0; i++)
    if (ff_overlay_save(sh->ov, sh->save_path, FP) != 0)
      report(sh, "saver: %s", ff_errmsg());
  return NULL;
}

/* 8 writers hammer overlapping groups of blocks on 3 devices (zeros mixed
 * in) and the same 3 blocks of a 4th device with sub-block writes, while
 * readers check that no block is torn and no multi-block write is seen in
 * part, and a saver saves.  The RMW writers check that their bytes are
 * never lost.  Afterwards the same holds, and the last save loads back. */
static void
test_threads(void **state)
{
  struct shared sh = {.failures = 0, .reads = 0};
  pthread_t th[NTHREADS + NREADERS + 1];
  struct worker wk[NTHREADS + NREADERS + 1];
  char *save_path = tmp_path("threads");
  unsigned char blk[B];
  struct timespec t0, t1;
  struct ff_overlay *ov2;
  int i;

  (void)state;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sh.ov = new_overlay();
  sh.save_path = save_path;
  atomic_init(&sh.writers_left, NTHREADS);
  pthread_mutex_init(&sh.lock, NULL);
  for (i = 0; i < NTHREADS + NREADERS + 1; i++) {
    void *(*fn)(void *) = i < NTHREADS              ? writer_main
                          : i < NTHREADS + NREADERS ? reader_main
                                                    : saver_main;

    wk[i].sh = &sh;
    wk[i].id = i < NTHREADS ? i : i - NTHREADS;
    assert_int_equal(pthread_create(&th[i], NULL, fn, &wk[i]), 0);
  }
  for (i = 0; i < NTHREADS + NREADERS + 1; i++)
    pthread_join(th[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  print_message("  %lu reader passes, %.2f s\n", atomic_load(&sh.reads),
                (double)(t1.tv_sec - t0.tv_sec) +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
  if (atomic_load(&sh.failures) != 0)
    fail_msg("%lu failures, first: %s", atomic_load(&sh.failures),
             sh.first_failure);

  for (uint32_t dev = 0; dev < TDEVS; dev++) {
    unsigned char *all = malloc(sizes[dev]);
    const char *bad;
    uint64_t where;

    assert_non_null(all);
    read_dev(sh.ov, dev, all, 0, sizes[dev]);
    bad = check_snapshot(dev, all, sizes[dev] / B, &where);
    if (bad != NULL)
      fail_msg("%s: device %" PRIu32 " block %" PRIu64, bad, dev, where);
    free(all);
  }
  for (uint64_t b = 0; b < 3; b++) {
    read_dev(sh.ov, RMW_DEV, blk, b * B, B);
    for (int t = 0; t < 4; t++) {
      const unsigned char *q = blk + (size_t)t * B / 4;

      if (q[0] == 0 || memcmp(q, q + 1, B / 4 - 1) != 0)
        fail_msg("device 3 block %" PRIu64 " quarter %d is not one write", b,
                 t);
    }
  }

  /* The final state saves and loads back identically. */
  assert_ok(ff_overlay_save(sh.ov, save_path, FP));
  ov2 = new_overlay();
  assert_ok(ff_overlay_load(ov2, save_path, FP));
  assert_same(sh.ov, ov2);
  ff_overlay_free(ov2);
  ff_overlay_free(sh.ov);
  pthread_mutex_destroy(&sh.lock);
  free(save_path);
}

/* --- scale --------------------------------------------------------- */

static int
zero_base(void *opaque, uint32_t dev, void *buf, uint64_t off, size_t len)
{
  (void)opaque;
  (void)dev;
  (void)off;
  memset(buf, 0, len);
  return 0;
}

/* 16384 devices that are read but never written cost 16 bytes each, and
 * zeroing a never-written device allocates nothing.  (The measurement is
 * skipped under sanitizers, whose allocators mallinfo2 does not see.) */
static void
test_many_devices(void **state)
{
  enum { N = 16384 };
  uint64_t *sz = malloc(N * sizeof *sz);
  struct ff_overlay *ov;
  unsigned char buf[512];
  size_t before, after;
  struct mallinfo2 mi;

  (void)state;
  assert_non_null(sz);
  for (uint32_t i = 0; i < N; i++)
    sz[i] = (uint64_t)(i + 1) << 30;
  mi = mallinfo2();
  before = mi.uordblks + mi.hblkhd;
  ov = ff_overlay_new(N, sz, zero_base, NULL);
  assert_non_null(ov);
  for (uint32_t i = 0; i < N; i++) {
    memset(buf, 0, sizeof buf);
    ff_overlay_apply(ov, i, buf, (uint64_t)i << 20, sizeof buf);
    assert_ok(ff_overlay_zero(ov, i, 0, 3 * B + 5));
    assert_int_equal(ff_overlay_blocks(ov, i), 0);
  }
  mi = mallinfo2();
  after = mi.uordblks + mi.hblkhd;
  print_message("  %zu bytes for %d devices\n", after - before, N);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  assert_true(after - before < (size_t)N * 16 + 64 * 1024);
#endif
  /* A write near the end of a large device. */
  memset(buf, 0x99, sizeof buf);
  assert_ok(ff_overlay_write(ov, N - 1, buf, sz[N - 1] - 100, 100));
  assert_int_equal(ff_overlay_blocks(ov, N - 1), 1);
  ff_overlay_free(ov);
  free(sz);
}

/* A zero over a range larger than one atomic piece (32 MiB). */
static void
test_large_zero(void **state)
{
  uint64_t sz[1] = {FF_OVERLAY_ATOMIC_MAX * 2ULL + 3 * B};
  struct ff_overlay *ov = ff_overlay_new(1, sz, zero_base, NULL);
  unsigned char pat[B];
  struct entries e = {.n = 0};

  (void)state;
  assert_non_null(ov);
  memset(pat, 1, sizeof pat);
  for (uint64_t off = 0; off < sz[0]; off += FF_OVERLAY_ATOMIC_MAX / 2)
    assert_ok(ff_overlay_write(ov, 0, pat, off + 2, 100));
  assert_int_equal(ff_overlay_blocks(ov, 0), 5);
  assert_ok(ff_overlay_zero(ov, 0, 5, sz[0] - 5));
  assert_int_equal(ff_overlay_foreach(ov, 0, collect, &e), 0);
  assert_int_equal(e.n, 1); /* block 0 keeps bytes 2..4 */
  assert_int_equal(ff_overlay_blocks(ov, 0), 1);
  assert_ok(ff_overlay_zero(ov, 0, 0, sz[0]));
  assert_int_equal(ff_overlay_blocks(ov, 0), 0);
  ff_overlay_free(ov);
}

/* --- main ---------------------------------------------------------- */

/* overlay-max: data blocks past the cap fail with ENOSPC and land
 * nowhere; rewriting held blocks, zero markers and freed room work. */
static void
test_cap(void **state)
{
  struct ff_overlay *ov = new_overlay(), *ov2;
  unsigned char buf[2 * B];
  uint64_t data, max, full;
  char *path = tmp_path("cap");

  (void)state;
  ff_overlay_set_max(ov, 2 * B);
  ff_overlay_cap(ov, &max, &full);
  assert_int_equal(max, 2 * B);
  assert_int_equal(full, 0);
  memset(buf, 0xa5, sizeof buf);
  assert_ok(ff_overlay_write(ov, 0, buf, 1 * B, B));
  assert_ok(ff_overlay_write(ov, 1, buf, 1 * B, B));
  /* A third data block: refused whole, ENOSPC, counted; nothing lands. */
  errno = 0;
  assert_failed_with(ff_overlay_write(ov, 2, buf, 1 * B, B),
                     "the overlay is full");
  assert_int_equal(errno, ENOSPC);
  assert_int_equal(ff_overlay_blocks(ov, 2), 0);
  /* Two blocks, one of them held: still one new block too many. */
  assert_failed_with(ff_overlay_write(ov, 0, buf, 1 * B, 2 * B),
                     "the overlay is full");
  assert_int_equal(ff_overlay_blocks(ov, 0), 1);
  ff_overlay_cap(ov, &max, &full);
  assert_int_equal(full, 2);
  /* Rewriting a held block needs no room. */
  memset(buf, 0x5a, sizeof buf);
  assert_ok(ff_overlay_write(ov, 0, buf, 1 * B, B));
  /* A zero marker holds no data block: over a non-zero base it fits. */
  assert_ok(ff_overlay_zero(ov, 2, 1 * B, B));
  ff_overlay_stats(ov, &data, NULL, NULL);
  assert_int_equal(data, 2);
  /* Zeroing a held block frees its room for another. */
  assert_ok(ff_overlay_zero(ov, 1, 1 * B, B));
  assert_ok(ff_overlay_write(ov, 3, buf, 1 * B, B));
  ff_overlay_stats(ov, &data, NULL, NULL);
  assert_int_equal(data, 2);
  /* A saved overlay larger than another's cap is refused at load. */
  assert_ok(ff_overlay_save(ov, path, FP));
  ov2 = new_overlay();
  ff_overlay_set_max(ov2, 1 * B);
  errno = 0;
  assert_failed_with(ff_overlay_load(ov2, path, FP), "overlay-max");
  ff_overlay_free(ov2);
  ov2 = new_overlay();
  ff_overlay_set_max(ov2, 2 * B);
  assert_ok(ff_overlay_load(ov2, path, FP));
  assert_same(ov, ov2);
  ff_overlay_free(ov2);
  unlink(path);
  free(path);
  ff_overlay_free(ov);
}

static int
group_setup(void **state)
{
  (void)state;
  if (mkdtemp(tmpdir) == NULL) {
    fprintf(stderr, "mkdtemp %s: %s\n", tmpdir, strerror(errno));
    return -1;
  }
  /* Let an unprivileged child reach the read-only directory. */
  return chmod(tmpdir, 0755);
}

static int
group_teardown(void **state)
{
  (void)state;
  return ff_test_rmtree(tmpdir);
}

/* ff_overlay_foreach_in: only the blocks that meet the range, in order,
 * across foreach batches (device 2 has more blocks than one batch);
 * partial blocks at both ends count, an empty range and one reaching
 * past UINT64_MAX neither fail nor wrap. */
static void
test_foreach_in(void **state)
{
  struct ff_overlay *ov = new_overlay();
  unsigned char pat[B];
  struct entries e = {.n = 0};

  (void)state;
  memset(pat, 0x5a, sizeof pat);
  for (uint64_t b = 1; b < 200; b += 2) /* blocks 1, 3, ..., 199 */
    assert_ok(ff_overlay_write(ov, 2, pat, b * B, B));
  assert_ok(ff_overlay_zero(ov, 2, 100 * B, B)); /* a marker at 100 */
  /* [3B + 1, 9B - 1): blocks 3, 5, 7 (3 and 8 only in part) */
  assert_int_equal(
    ff_overlay_foreach_in(ov, 2, 3 * B + 1, 6 * B - 2, collect, &e), 0);
  assert_int_equal(e.n, 3);
  assert_int_equal(e.v[0].off, 3 * B);
  assert_int_equal(e.v[1].off, 5 * B);
  assert_int_equal(e.v[2].off, 7 * B);
  /* [9B, 9B + B): block 9 alone; [10B, 11B): nothing (10 is not written) */
  e.n = 0;
  assert_int_equal(ff_overlay_foreach_in(ov, 2, 9 * B, B, collect, &e), 0);
  assert_int_equal(e.n, 1);
  assert_int_equal(e.v[0].off, 9 * B);
  e.n = 0;
  assert_int_equal(ff_overlay_foreach_in(ov, 2, 10 * B, B, collect, &e), 0);
  assert_int_equal(e.n, 0);
  /* 150 blocks of the range [0, 200B): 100 writes and the marker, more
   * than a batch */
  e.n = 0;
  assert_int_equal(ff_overlay_foreach_in(ov, 2, 0, 200 * B, collect, &e), 0);
  assert_int_equal(e.n, 101);
  for (size_t i = 1; i < e.n; i++)
    assert_true(e.v[i - 1].off < e.v[i].off);
  assert_int_equal(e.v[50].off, 100 * B);
  assert_int_equal(e.v[50].is_zero, 1);
  /* the tail, to the end of the address space, and an empty range */
  e.n = 0;
  assert_int_equal(
    ff_overlay_foreach_in(ov, 2, 190 * B, UINT64_MAX, collect, &e), 0);
  assert_int_equal(e.n, 5); /* 191 193 195 197 199 */
  e.n = 0;
  assert_int_equal(ff_overlay_foreach_in(ov, 2, 5 * B, 0, collect, &e), 0);
  assert_int_equal(e.n, 0);
  /* the whole device: what ff_overlay_foreach reports */
  e.n = 0;
  assert_int_equal(ff_overlay_foreach(ov, 2, collect, &e), 0);
  assert_int_equal(e.n, 101);
  ff_overlay_free(ov);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_write_cases),
    cmocka_unit_test(test_partial_merge),
    cmocka_unit_test(test_zero_over_zero_base),
    cmocka_unit_test(test_zero_marker),
    cmocka_unit_test(test_out_of_range),
    cmocka_unit_test(test_base_failure),
    cmocka_unit_test(test_foreach_order),
    cmocka_unit_test(test_random_ops),
    cmocka_unit_test(test_save_load_roundtrip),
    cmocka_unit_test(test_load_rejects),
    cmocka_unit_test(test_save_failures),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_many_devices),
    cmocka_unit_test(test_large_zero),
    cmocka_unit_test(test_cap),
    cmocka_unit_test(test_foreach_in),
  };

  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
