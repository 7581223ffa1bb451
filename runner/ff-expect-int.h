/* fusefarm: what the --expect parser and its judge share (ff-expect.h is
 * the interface; runner/ and its unit tests only).
 *
 *   ff-expect-parse.c  the lexer, the recursive-descent parser over its
 *                      tokens (one table of precedence levels), bare
 *                      baselines bound, every node's dimension checked:
 *                      ff_expect_parse() and the tree's accessors
 *   ff-expect.c        judging: each configuration's terms resolved in
 *                      the run and the baseline, the tree evaluated with
 *                      its values written out, wall-time comparisons by
 *                      the 95% interval ("confidently", baselines)
 *
 * The tree is built once by the parser and only read by the judge.
 * No threads.
 */
#ifndef FF_EXPECT_INT_H
#define FF_EXPECT_INT_H

#include "ff-expect.h"

#include <stdbool.h>
#include <stddef.h>

/* What a number measures.  A number written without a unit is D_NONE:
 * it takes the dimension of what it is compared with or added to (so
 * `lvchange < 2` is 2 s and `reads(pvs) < 300` is 300 reads). */
enum dim {
  D_NONE,  /* a plain number or a ratio */
  D_TIME,  /* seconds */
  D_BYTES, /* bytes */
  D_COUNT, /* reads */
};

/* The functions of a workload term: what of W a term measures. */
enum fn {
  F_WALL, /* W alone: the median wall time */
  F_READS,
  F_BYTES,
  F_READS_PER_DEVICE,
  F_BYTES_PER_DEVICE,
  F_READS_PER_COMMAND,
  F_BYTES_PER_COMMAND,
};

/* ---- the tree ---------------------------------------------------------- */

enum node_kind {
  N_NUM,
  N_TERM,
  N_ARITH, /* op: + - * / */
  N_NEG,
  N_CMP, /* op: < L (<=) > G (>=) */
  N_AND,
  N_OR,
};

struct qual {
  char *key, *value;
  size_t off; /* of the key, for errors */
};

struct node {
  enum node_kind kind;
  size_t off, end; /* the text it was parsed from: [off, end) */
  bool paren;      /* written in parentheses */
  bool confident;  /* N_CMP: "confidently": the whole 95% interval */
  char op;
  size_t opoff; /* N_ARITH, N_CMP: the operator's offset */
  double num;
  enum dim dim; /* N_NUM: its unit's; others: set by check_dims() */
  struct node *a, *b;
  /* N_TERM */
  bool base, bare; /* baseline.W; bare "baseline" (name set after parse) */
  enum fn fn;
  char *name;
  struct qual *q;
  size_t nq;
};

struct ff_expect {
  char *text;
  struct node *root;
  bool uses_base;
};

/* "reads", "bytes", ...: FUNCTION's name as written ("" for F_WALL). */
const char *ff_ex_fn_name(enum fn f);

/* ff_error("--expect: out of memory"); returns -1. */
int ff_ex_oom(void);

/* A side of a comparison that is a wall time scaled by a positive
 * number (W, k * W, W * k, W / k): its term, and k in *k; else NULL. */
const struct node *ff_ex_scaled_wall(const struct node *n, double *k);

#endif
