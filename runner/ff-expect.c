/* fusefarm: --expect: parse an expression over a run's median wall times
 * and judge it (ff-expect.h, docs/bisect.md).  A recursive-descent parser
 * over a token array, its binary operators one table of precedence levels
 * (levels[]); judging evaluates the tree once per configuration
 * and writes each evaluation with its values substituted.  No threads. */
#include "ff-expect.h"
#include "ff-error.h"
#include "ff-workload.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens ------------------------------------------------------------ */

enum tok_kind {
  T_END,
  T_NUM,
  T_NAME,
  T_DOT,
  T_QUAL, /* "[...]": its text without the brackets */
  T_LT,
  T_LE,
  T_GT,
  T_GE,
  T_PLUS,
  T_MINUS,
  T_STAR,
  T_SLASH,
  T_LP,
  T_RP,
  T_AND,
  T_OR,
};

/* What a number measures.  A number written without a unit is D_NONE:
 * it takes the dimension of what it is compared with or added to (so
 * `lvchange < 2` is 2 s and `reads(pvs) < 300` is 300 reads). */
enum dim {
  D_NONE,  /* a plain number or a ratio */
  D_TIME,  /* seconds */
  D_BYTES, /* bytes */
  D_COUNT, /* reads */
};

static const char *const dim_names[] = {"a plain number", "a time", "bytes",
                                        "a count of reads"};

struct tok {
  enum tok_kind kind;
  size_t off, len; /* where in the text */
  double num;      /* T_NUM: in seconds or bytes when it has a unit */
  enum dim dim;
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

static const char *const fn_names[] = {
  "",
  "reads",
  "bytes",
  "reads_per_device",
  "bytes_per_device",
  "reads_per_command",
  "bytes_per_command",
};

#define FN_LIST                                                               \
  "reads, bytes, reads_per_device, bytes_per_device, reads_per_command, "     \
  "bytes_per_command"

static enum dim
fn_dim(enum fn f)
{
  return f == F_WALL ? D_TIME
         : f == F_READS || f == F_READS_PER_DEVICE || f == F_READS_PER_COMMAND
           ? D_COUNT
           : D_BYTES;
}

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

struct parser {
  const char *text;
  struct tok *t;
  size_t nt, i;
  struct ff_expect *e;
};

static void
node_free(struct node *n)
{
  if (!n)
    return;
  node_free(n->a);
  node_free(n->b);
  free(n->name);
  for (size_t i = 0; i < n->nq; i++) {
    free(n->q[i].key);
    free(n->q[i].value);
  }
  free(n->q);
  free(n);
}

void
ff_expect_free(struct ff_expect *e)
{
  if (!e)
    return;
  node_free(e->root);
  free(e->text);
  free(e);
}

const char *
ff_expect_text(const struct ff_expect *e)
{
  return e->text;
}

int
ff_expect_uses_baseline(const struct ff_expect *e)
{
  return e->uses_base;
}

static int
oom(void)
{
  return ff_error("--expect: out of memory");
}

static int
col_error(size_t off, const char *fmt, const char *got)
{
  return ff_error("at column %zu: %s%s%s%s", off + 1, fmt,
                  got ? ", got '" : "", got ? got : "", got ? "'" : "");
}

static bool
name_start(int c)
{
  return isalpha(c) || c == '_';
}

static bool
name_char(int c)
{
  return isalnum(c) || c == '_' || c == '-';
}

static int
lex(struct parser *p)
{
  const char *s = p->text;
  size_t i = 0, cap = 0;

  for (;;) {
    struct tok t = {0};

    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')
      i++;
    t.off = i;
    if (!s[i]) {
      t.kind = T_END;
    } else if (isdigit((unsigned char)s[i]) ||
               (s[i] == '.' && isdigit((unsigned char)s[i + 1]))) {
      size_t u;

      while (isdigit((unsigned char)s[i]))
        i++;
      if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i]))
          i++;
      }
      t.num = strtod(s + t.off, NULL);
      u = i;
      while (isalpha((unsigned char)s[i]))
        i++;
      if (i > u) {
        static const struct {
          const char *name;
          double factor;
          enum dim dim;
        } units[] = {
          {"s", 1, D_TIME},          {"ms", 1e-3, D_TIME},
          {"us", 1e-6, D_TIME},      {"min", 60, D_TIME},
          {"B", 1, D_BYTES},         {"KiB", 1024, D_BYTES},
          {"MiB", 1048576, D_BYTES}, {"GiB", 1073741824, D_BYTES},
        };
        size_t k;

        for (k = 0; k < sizeof units / sizeof *units; k++)
          if (strlen(units[k].name) == i - u &&
              !strncmp(units[k].name, s + u, i - u))
            break;
        if (k == sizeof units / sizeof *units)
          return ff_error("at column %zu: unknown unit '%.*s' (times: s, "
                          "ms, us, min; bytes: B, KiB, MiB, GiB, binary "
                          "only)",
                          u + 1, (int)(i - u), s + u);
        t.num *= units[k].factor;
        t.dim = units[k].dim;
      }
      if (name_char((unsigned char)s[i]) || s[i] == '.')
        return ff_error("at column %zu: '%c' after a number", i + 1, s[i]);
      t.kind = T_NUM;
    } else if (name_start((unsigned char)s[i])) {
      while (name_char((unsigned char)s[i]))
        i++;
      t.kind = T_NAME;
      if (i - t.off == 3 && !strncmp(s + t.off, "and", 3))
        t.kind = T_AND;
      else if (i - t.off == 2 && !strncmp(s + t.off, "or", 2))
        t.kind = T_OR;
    } else if (s[i] == '[') {
      const char *close = strchr(s + i, ']');

      if (!close)
        return ff_error("at column %zu: '[' without its ']'", i + 1);
      i = (size_t)(close - s) + 1;
      t.kind = T_QUAL;
    } else if ((s[i] == '=' || s[i] == '!') && s[i + 1] == '=') {
      return ff_error("at column %zu: '%c=' is not allowed: two timings are "
                      "never exactly equal (use <, <=, > or >=)",
                      i + 1, s[i]);
    } else {
      switch (s[i]) {
      case '<':
      case '>':
        if (s[i + 1] == '=') {
          t.kind = s[i] == '<' ? T_LE : T_GE;
          i++;
        } else {
          t.kind = s[i] == '<' ? T_LT : T_GT;
        }
        break;
      case '+':
        t.kind = T_PLUS;
        break;
      case '-':
        t.kind = T_MINUS;
        break;
      case '*':
        t.kind = T_STAR;
        break;
      case '/':
        t.kind = T_SLASH;
        break;
      case '(':
        t.kind = T_LP;
        break;
      case ')':
        t.kind = T_RP;
        break;
      case '.':
        t.kind = T_DOT;
        break;
      default:
        return ff_error("at column %zu: unexpected '%c'", i + 1, s[i]);
      }
      i++;
    }
    t.len = i - t.off;
    if (p->nt == cap) {
      struct tok *nt;

      cap = cap ? 2 * cap : 16;
      nt = realloc(p->t, cap * sizeof *nt);
      if (!nt)
        return oom();
      p->t = nt;
    }
    p->t[p->nt++] = t;
    if (t.kind == T_END)
      return 0;
  }
}

/* ---- parsing ----------------------------------------------------------- */

static const struct tok *
peek(struct parser *p)
{
  return &p->t[p->i];
}

/* "got '...'" text of a token (static buffer; parse errors only). */
static const char *
tok_text(struct parser *p, const struct tok *t)
{
  static char buf[64];

  if (t->kind == T_END)
    return "the end";
  snprintf(buf, sizeof buf, "%.*s", (int)(t->len < 40 ? t->len : 40),
           p->text + t->off);
  return buf;
}

static int
expected(struct parser *p, const char *what)
{
  const struct tok *t = peek(p);

  if (t->kind == T_END)
    return ff_error("at column %zu: %s, got the end", t->off + 1, what);
  return col_error(t->off, what, tok_text(p, t));
}

static struct node *
new_node(enum node_kind kind, size_t off)
{
  struct node *n = calloc(1, sizeof *n);

  if (!n)
    oom();
  else {
    n->kind = kind;
    n->off = off;
  }
  return n;
}

static bool
is_bool(const struct node *n)
{
  return n->kind == N_CMP || n->kind == N_AND || n->kind == N_OR;
}

static struct node *parse_expr(struct parser *p);

static int
parse_quals(struct parser *p, struct node *n, const struct tok *t)
{
  /* t's text is "[k=v, k=v]" */
  size_t i = t->off + 1, end = t->off + t->len - 1;
  const char *s = p->text;

  for (;;) {
    size_t ks, ke, vs, ve;
    struct qual *q;

    while (i < end && isspace((unsigned char)s[i]))
      i++;
    ks = i;
    while (i < end && s[i] != '=' && s[i] != ',' &&
           !isspace((unsigned char)s[i]))
      i++;
    ke = i;
    while (i < end && isspace((unsigned char)s[i]))
      i++;
    if (ke == ks)
      return ff_error("at column %zu: expected a settings key (as in "
                      "[use_aio=0])",
                      ks + 1);
    if (i >= end || s[i] != '=')
      return ff_error("at column %zu: expected '=' after '%.*s' (as in "
                      "[use_aio=0])",
                      i + 1, (int)(ke - ks), s + ks);
    i++;
    while (i < end && isspace((unsigned char)s[i]))
      i++;
    vs = i;
    while (i < end && s[i] != ',' && !isspace((unsigned char)s[i]))
      i++;
    ve = i;
    if (ve == vs)
      return ff_error("at column %zu: expected a value for '%.*s'", vs + 1,
                      (int)(ke - ks), s + ks);
    while (i < end && isspace((unsigned char)s[i]))
      i++;
    q = realloc(n->q, (n->nq + 1) * sizeof *q);
    if (!q)
      return oom();
    n->q = q;
    q = &n->q[n->nq];
    q->key = strndup(s + ks, ke - ks);
    q->value = strndup(s + vs, ve - vs);
    q->off = ks;
    if (!q->key || !q->value) {
      free(q->key);
      free(q->value);
      return oom();
    }
    for (size_t k = 0; k < n->nq; k++)
      if (!strcmp(n->q[k].key, q->key)) {
        free(q->key);
        free(q->value);
        return ff_error("at column %zu: '%.*s' is qualified twice", ks + 1,
                        (int)(ke - ks), s + ks);
      }
    n->nq++;
    if (i >= end)
      return 0;
    if (s[i] != ',')
      return ff_error("at column %zu: expected ',' or ']'", i + 1);
    i++;
  }
}

/* The workload name and qualifier at p (t: the name's token) into n. */
static int
parse_workload(struct parser *p, struct node *n, const struct tok *t)
{
  n->name = strndup(p->text + t->off, t->len);
  if (!n->name)
    return oom();
  n->end = t->off + t->len;
  if (peek(p)->kind == T_QUAL) {
    t = &p->t[p->i++];
    n->end = t->off + t->len;
    if (parse_quals(p, n, t) < 0)
      return -1;
  }
  return 0;
}

/* FUNCTION "(" WORKLOAD [QUAL] ")" at p, t: the function's name. */
static int
parse_call(struct parser *p, struct node *n, const struct tok *t)
{
  size_t f;

  for (f = 1; f < sizeof fn_names / sizeof *fn_names; f++)
    if (strlen(fn_names[f]) == t->len &&
        !strncmp(fn_names[f], p->text + t->off, t->len))
      break;
  if (f == sizeof fn_names / sizeof *fn_names)
    return ff_error("at column %zu: unknown function '%.*s' (%s; a workload "
                    "alone is its median wall time)",
                    t->off + 1, (int)t->len, p->text + t->off, FN_LIST);
  n->fn = (enum fn)f;
  p->i++; /* "(" */
  if (peek(p)->kind != T_NAME ||
      (peek(p)->len == 8 && !strncmp(p->text + peek(p)->off, "baseline", 8)))
    return expected(p, n->base ? "expected a workload name (as in "
                                 "baseline.bytes(pvs))"
                               : "expected a workload name (as in "
                                 "bytes(pvs); the baseline's is "
                                 "baseline.bytes(pvs))");
  if (parse_workload(p, n, &p->t[p->i++]) < 0)
    return -1;
  if (peek(p)->kind != T_RP)
    return expected(p, "expected ')'");
  n->end = peek(p)->off + 1;
  p->i++;
  return 0;
}

static struct node *
parse_term(struct parser *p)
{
  const struct tok *t = &p->t[p->i++];
  struct node *n = new_node(N_TERM, t->off);

  if (!n)
    return NULL;
  n->end = t->off + t->len;
  if (t->len == 8 && !strncmp(p->text + t->off, "baseline", 8)) {
    n->base = true;
    p->e->uses_base = true;
    if (peek(p)->kind == T_DOT) {
      p->i++;
      if (peek(p)->kind != T_NAME) {
        expected(p, "expected a workload name after 'baseline.'");
        node_free(n);
        return NULL;
      }
      t = &p->t[p->i++];
    } else {
      n->bare = true;
      if (peek(p)->kind == T_QUAL || peek(p)->kind == T_LP) {
        col_error(peek(p)->off,
                  peek(p)->kind == T_QUAL
                    ? "a bare 'baseline' takes the qualifier of the other "
                      "side: write baseline.WORKLOAD[...]"
                    : "'baseline' is not a function: write "
                      "baseline.bytes(WORKLOAD) and the like",
                  NULL);
        node_free(n);
        return NULL;
      }
      return n;
    }
  }
  if ((peek(p)->kind == T_LP ? parse_call(p, n, t) : parse_workload(p, n, t)) <
      0) {
    node_free(n);
    return NULL;
  }
  return n;
}

static struct node *
parse_unary(struct parser *p)
{
  const struct tok *t = peek(p);
  struct node *n;

  switch (t->kind) {
  case T_MINUS:
    p->i++;
    n = new_node(N_NEG, t->off);
    if (!n)
      return NULL;
    n->a = parse_unary(p);
    if (!n->a) {
      node_free(n);
      return NULL;
    }
    n->end = n->a->end;
    return n;
  case T_NUM:
    p->i++;
    n = new_node(N_NUM, t->off);
    if (n) {
      n->num = t->num;
      n->dim = t->dim;
      n->end = t->off + t->len;
    }
    return n;
  case T_NAME:
    return parse_term(p);
  case T_LP: {
    size_t off = t->off;

    p->i++;
    n = parse_expr(p);
    if (!n)
      return NULL;
    if (peek(p)->kind != T_RP) {
      expected(p, "expected ')'");
      node_free(n);
      return NULL;
    }
    n->end = peek(p)->off + 1;
    n->off = off;
    n->paren = true;
    p->i++;
    return n;
  }
  default:
    expected(p, "expected a number or a workload name");
    return NULL;
  }
}

static int
need_number(const struct node *n)
{
  if (is_bool(n))
    return ff_error("at column %zu: expected a number, got a comparison",
                    n->off + 1);
  return 0;
}

/* A side of a comparison that is a wall time scaled by a positive
 * number (W, k * W, W * k, W / k): its term, and k in *k; else NULL. */
static const struct node *
scaled_wall(const struct node *n, double *k)
{
  const struct node *a = n->a, *b = n->b;

  *k = 1;
  if (n->kind == N_TERM)
    return n->fn == F_WALL ? n : NULL;
  if (n->kind != N_ARITH || (n->op != '*' && n->op != '/'))
    return NULL;
  if (n->op == '*' && a->kind == N_NUM && a->num > 0 && b->kind == N_TERM &&
      b->fn == F_WALL) {
    *k = a->num;
    return b;
  }
  if (a->kind == N_TERM && a->fn == F_WALL && b->kind == N_NUM && b->num > 0) {
    *k = n->op == '*' ? b->num : 1 / b->num;
    return a;
  }
  return NULL;
}

/* The binary operators, one level of precedence an entry, loosest first:
 * expr, and, cmp, sum, prod in the grammar (ff-expect.h).  Each level's
 * operands are the next level's (the last one's: unary). */
struct binop {
  enum tok_kind tok;
  enum node_kind kind;
  char op; /* N_ARITH, N_CMP: what eval() and check_dims() switch on */
};

static const struct level {
  struct binop ops[4];  /* ended by T_END where fewer */
  bool conditions;      /* its operands are comparisons, else numbers */
  const char *no_chain; /* set: a op b op c is this error at the second op */
} levels[] = {
  {{{T_OR, N_OR, 0}}, true, NULL},
  {{{T_AND, N_AND, 0}}, true, NULL},
  {{{T_LT, N_CMP, '<'},
    {T_LE, N_CMP, 'L'},
    {T_GT, N_CMP, '>'},
    {T_GE, N_CMP, 'G'}},
   false,
   "comparisons do not chain: write a < b and b < c"},
  {{{T_PLUS, N_ARITH, '+'}, {T_MINUS, N_ARITH, '-'}}, false, NULL},
  {{{T_STAR, N_ARITH, '*'}, {T_SLASH, N_ARITH, '/'}}, false, NULL},
};

#define NLEVELS (sizeof levels / sizeof *levels)

static const struct binop *
level_op(const struct level *lv, enum tok_kind k)
{
  for (size_t i = 0; i < sizeof lv->ops / sizeof *lv->ops; i++)
    if (lv->ops[i].tok != T_END && lv->ops[i].tok == k)
      return &lv->ops[i];
  return NULL;
}

/* An operand n of lv's operators: a comparison for and/or (else the error
 * is at the token after it), a number for the others (else at n). */
static int
operand_fits(struct parser *p, const struct level *lv, const struct node *n)
{
  if (lv->conditions)
    return is_bool(n) ? 0 : expected(p, "expected <, <=, > or >=");
  return need_number(n);
}

static struct node *parse_level(struct parser *p, size_t lv);

/* An operand of level lv's operators: the next level, after the last a
 * unary. */
static struct node *
parse_operand(struct parser *p, size_t lv)
{
  return lv + 1 < NLEVELS ? parse_level(p, lv + 1) : parse_unary(p);
}

/* Level lv and tighter.  Left-associative; a level with no_chain takes
 * one operator at most.  Not an operator of lv after its first operand:
 * that operand, whatever it is (a parenthesized condition, or a number
 * where a comparison is due: whoever wanted a comparison says so). */
static struct node *
parse_level(struct parser *p, size_t lv)
{
  const struct level *l = &levels[lv];
  struct node *left = parse_operand(p, lv);
  const struct binop *op;

  while (left && (op = level_op(l, peek(p)->kind))) {
    struct node *n;

    if (operand_fits(p, l, left) < 0) {
      node_free(left);
      return NULL;
    }
    n = new_node(op->kind, left->off);
    if (!n) {
      node_free(left);
      return NULL;
    }
    n->op = op->op;
    n->opoff = peek(p)->off;
    p->i++;
    n->a = left;
    n->b = parse_operand(p, lv);
    if (!n->b || operand_fits(p, l, n->b) < 0) {
      node_free(n);
      return NULL;
    }
    n->end = n->b->end;
    left = n;
    if (n->kind == N_CMP && peek(p)->kind == T_NAME && peek(p)->len == 11 &&
        !strncmp(p->text + peek(p)->off, "confidently", 11)) {
      double k;

      n->confident = true;
      n->end = peek(p)->off + peek(p)->len;
      if (!scaled_wall(n->a, &k) || !scaled_wall(n->b, &k)) {
        col_error(peek(p)->off,
                  "'confidently' compares two wall times, each perhaps "
                  "times a number (W[k=a] < 0.9 * W[k=b] confidently)",
                  NULL);
        node_free(left);
        return NULL;
      }
      p->i++;
    }
    if (l->no_chain && level_op(l, peek(p)->kind)) {
      col_error(peek(p)->off, l->no_chain, NULL);
      node_free(left);
      return NULL;
    }
  }
  return left;
}

static struct node *
parse_expr(struct parser *p)
{
  return parse_level(p, 0);
}

/* The workload terms (not baseline) of n: how many, and the last. */
static void
find_terms(struct node *n, size_t *count, struct node **last)
{
  if (!n)
    return;
  if (n->kind == N_TERM && !n->base) {
    if (!*last || strcmp((*last)->name, n->name) || (*last)->nq || n->nq ||
        (*last)->fn != n->fn) /* distinct unless the same plain term */
      ++*count;
    *last = n;
  }
  find_terms(n->a, count, last);
  find_terms(n->b, count, last);
}

static int
copy_quals(struct node *to, const struct node *from)
{
  to->fn = from->fn;
  to->name = strdup(from->name);
  if (!to->name)
    return oom();
  if (!from->nq)
    return 0;
  to->q = calloc(from->nq, sizeof *to->q);
  if (!to->q)
    return oom();
  for (size_t i = 0; i < from->nq; i++) {
    to->q[i].key = strdup(from->q[i].key);
    to->q[i].value = strdup(from->q[i].value);
    to->q[i].off = from->q[i].off;
    to->nq++;
    if (!to->q[i].key || !to->q[i].value)
      return oom();
  }
  return 0;
}

/* Give each bare "baseline" in side the one workload term of other. */
static int
bind_bare(struct node *side, struct node *other)
{
  if (!side)
    return 0;
  if (side->kind == N_TERM && side->bare) {
    size_t count = 0;
    struct node *last = NULL;

    find_terms(other, &count, &last);
    if (count != 1)
      return col_error(side->off,
                       "a bare 'baseline' needs one workload on the other "
                       "side of its comparison: write baseline.WORKLOAD",
                       NULL);
    return copy_quals(side, last);
  }
  if (bind_bare(side->a, other) < 0 || bind_bare(side->b, other) < 0)
    return -1;
  return 0;
}

static int
bind_all(struct node *n)
{
  if (!n)
    return 0;
  if (n->kind == N_CMP)
    return bind_bare(n->a, n->b) < 0 || bind_bare(n->b, n->a) < 0 ? -1 : 0;
  return bind_all(n->a) < 0 || bind_all(n->b) < 0 ? -1 : 0;
}

/* The text of n, for errors (static buffer). */
static const char *
node_text(const struct ff_expect *e, const struct node *n)
{
  static char buf[96];
  size_t len = n->end - n->off;

  if (len > 60)
    snprintf(buf, sizeof buf, "%.57s...", e->text + n->off);
  else
    snprintf(buf, sizeof buf, "%.*s", (int)len, e->text + n->off);
  return buf;
}

/* Set each node's dimension; -1 with ff_error at the operator that mixes
 * two that do not go together (a time compared with bytes, bytes added
 * to reads, ...).  A plain number goes with anything. */
static int
check_dims(const struct ff_expect *e, struct node *n)
{
  enum dim a, b;
  const char *what = NULL;

  if (!n)
    return 0;
  if (check_dims(e, n->a) < 0 || check_dims(e, n->b) < 0)
    return -1;
  switch (n->kind) {
  case N_NUM:
    return 0;
  case N_TERM:
    n->dim = fn_dim(n->fn);
    return 0;
  case N_NEG:
    n->dim = n->a->dim;
    return 0;
  case N_AND:
  case N_OR:
    n->dim = D_NONE;
    return 0;
  case N_ARITH:
  case N_CMP:
    break;
  }
  a = n->a->dim;
  b = n->b->dim;
  n->dim = a == D_NONE ? b : a;
  if (n->kind == N_CMP) {
    n->dim = D_NONE;
    if (a != b && a != D_NONE && b != D_NONE)
      what = "compare";
  } else if (n->op == '+' || n->op == '-') {
    if (a != b && a != D_NONE && b != D_NONE)
      what = n->op == '+' ? "add" : "subtract";
  } else if (n->op == '*') {
    if (a != D_NONE && b != D_NONE)
      what = "multiply";
  } else if (a == b) {
    n->dim = D_NONE; /* a ratio */
  } else if (b == D_NONE || (b == D_COUNT && a != D_NONE)) {
    n->dim = a; /* per read */
  } else {
    what = "divide";
  }
  if (!what)
    return 0;
  {
    char left[96];

    snprintf(left, sizeof left, "%s", node_text(e, n->a));
    return ff_error("at column %zu: cannot %s %s and %s: '%s' is %s, '%s' "
                    "is %s",
                    n->opoff + 1, what, dim_names[a], dim_names[b], left,
                    dim_names[a], node_text(e, n->b), dim_names[b]);
  }
}

struct ff_expect *
ff_expect_parse(const char *text)
{
  struct parser p = {.text = text};
  struct ff_expect *e;

  if (!text)
    text = p.text = "";
  e = calloc(1, sizeof *e);
  if (!e || !(e->text = strdup(text))) {
    free(e);
    oom();
    return NULL;
  }
  p.e = e;
  if (lex(&p) < 0)
    goto fail;
  if (p.nt == 1) {
    ff_error("at column 1: empty: expected a comparison such as "
             "'event-activation < 10 * direct-activation'");
    goto fail;
  }
  e->root = parse_expr(&p);
  if (!e->root)
    goto fail;
  if (!is_bool(e->root)) {
    expected(&p, "expected <, <=, > or >=");
    goto fail;
  }
  if (peek(&p)->kind != T_END) {
    if (peek(&p)->kind == T_RP)
      col_error(peek(&p)->off, "unmatched ')'", NULL);
    else
      expected(&p, "expected 'and', 'or' or the end");
    goto fail;
  }
  if (bind_all(e->root) < 0 || check_dims(e, e->root) < 0)
    goto fail;
  free(p.t);
  return e;
fail:
  free(p.t);
  ff_expect_free(e);
  return NULL;
}

/* ---- judging ----------------------------------------------------------- */

struct judge {
  const struct ff_expect *e;
  const struct ff_runreport *rr, *base;
  const struct ff_rr_config *cur;
  bool skip;     /* a qualified term has no configuration for cur */
  char why[768]; /* why skip */
  char *reason;  /* set: this evaluation cannot be judged */
  json_t *values;
  long long used[64]; /* config ids the terms resolved to (baseline: -id) */
  size_t nused;
  const struct ff_rr_workload *last_w; /* the last wall time term's */
};

static const char *
doc_name(const struct judge *j, const struct ff_runreport *doc)
{
  /* ff_expect_skeleton()'s document has no start time */
  if (!doc->started[0])
    return doc == j->base ? "the baseline scenario" : "the scenario";
  return doc == j->base ? "the baseline run" : "the run";
}

static void unjudged(struct judge *j, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void
unjudged(struct judge *j, const char *fmt, ...)
{
  va_list ap;

  if (j->reason)
    return;
  va_start(ap, fmt);
  if (vasprintf(&j->reason, fmt, ap) < 0)
    j->reason = NULL;
  va_end(ap);
  if (!j->reason)
    j->reason = strdup("out of memory");
}

/* The settings key of doc that q names: itself, or the one key ending in
 * "/KEY".  -1 with ff_error when none or several do. */
static long
find_key(const struct judge *j, const struct ff_runreport *doc,
         const struct qual *q)
{
  long found = -1;
  size_t n = strlen(q->key);
  char list[512] = "";
  size_t used = 0;

  for (size_t k = 0; k < doc->nkeys; k++)
    if (!strcmp(doc->keys[k], q->key))
      return (long)k;
  for (size_t k = 0; k < doc->nkeys; k++) {
    size_t kl = strlen(doc->keys[k]);

    if (kl > n && doc->keys[k][kl - n - 1] == '/' &&
        !strcmp(doc->keys[k] + kl - n, q->key)) {
      if (found >= 0) {
        ff_error("at column %zu: '%s' is ambiguous: %s and %s (write the "
                 "whole key)",
                 q->off + 1, q->key, doc->keys[found], doc->keys[k]);
        return -1;
      }
      found = (long)k;
    }
  }
  if (found >= 0)
    return found;
  for (size_t k = 0; k < doc->nkeys && used < sizeof list; k++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "",
                     doc->keys[k]);

    used = w < 0 ? sizeof list : used + (size_t)w;
  }
  ff_error("at column %zu: %s has no setting '%s' (%s%s)", q->off + 1,
           doc_name(j, doc), q->key, doc->nkeys ? "its settings: " : "",
           doc->nkeys ? list : "no matrix settings");
  return -1;
}

static bool
text_eq(const char *a, const char *b)
{
  return a ? b && !strcmp(a, b) : !b;
}

/* The configuration of doc for term n evaluated in j->cur.  NULL with
 * j->skip when there is none for cur; NULL with ff_error (err = 1) on bad
 * input. */
static const struct ff_rr_config *
resolve(struct judge *j, const struct ff_runreport *doc, const struct node *n,
        int *err)
{
  long qkey[16];
  const struct ff_rr_config *found = NULL;
  size_t nfound = 0;

  *err = 0;
  if (doc == j->rr && !n->nq)
    return j->cur;
  if (n->nq > sizeof qkey / sizeof *qkey) {
    *err = 1;
    ff_error("at column %zu: more than 16 qualifiers", n->off + 1);
    return NULL;
  }
  for (size_t i = 0; i < n->nq; i++) {
    bool seen = false;

    qkey[i] = find_key(j, doc, &n->q[i]);
    if (qkey[i] < 0) {
      *err = 1;
      return NULL;
    }
    for (size_t c = 0; c < doc->nconfigs && !seen; c++) {
      const struct ff_rr_setting *s =
        ff_runreport_setting(&doc->configs[c], doc->keys[qkey[i]]);

      seen = s && !strcmp(s->text, n->q[i].value);
    }
    if (!seen) {
      *err = 1;
      ff_error("at column %zu: no configuration of %s has %s=%s",
               n->q[i].off + 1, doc_name(j, doc), doc->keys[qkey[i]],
               n->q[i].value);
      return NULL;
    }
  }
  for (size_t c = 0; c < doc->nconfigs; c++) {
    const struct ff_rr_config *cf = &doc->configs[c];
    bool match = true;

    for (size_t k = 0; k < doc->nkeys && match; k++) {
      const struct ff_rr_setting *have =
        ff_runreport_setting(cf, doc->keys[k]);
      const char *want = NULL;
      bool qualified = false;

      for (size_t i = 0; i < n->nq; i++)
        if (qkey[i] == (long)k) {
          want = n->q[i].value;
          qualified = true;
        }
      if (!qualified) {
        const struct ff_rr_setting *s;

        if (!doc->varying[k])
          continue;
        s = ff_runreport_setting(j->cur, doc->keys[k]);
        want = s ? s->text : NULL;
      }
      match = text_eq(want, have ? have->text : NULL);
    }
    if (match) {
      found = found ? found : cf;
      nfound++;
    }
  }
  if (nfound > 1) {
    *err = 1;
    ff_error("at column %zu: %zu configurations of %s match '%.*s' (qualify "
             "it by the setting that tells them apart)",
             n->off + 1, nfound, doc_name(j, doc), (int)(n->end - n->off),
             j->e->text + n->off);
    return NULL;
  }
  if (!found) {
    size_t used = 0;

    j->skip = true;
    used = (size_t)snprintf(j->why, sizeof j->why,
                            "%s has no configuration for '%.*s' beside config "
                            "%lld (%s): it varies ",
                            doc_name(j, doc), (int)(n->end - n->off),
                            j->e->text + n->off, j->cur->id, j->cur->label);
    for (size_t k = 0, first = 1; k < doc->nkeys && used < sizeof j->why; k++)
      if (doc->varying[k]) {
        used += (size_t)snprintf(j->why + used, sizeof j->why - used, "%s%s",
                                 first ? "" : ", ", doc->keys[k]);
        first = 0;
      }
  }
  return found;
}

static bool
doc_has_workload(const struct ff_runreport *doc, const char *name)
{
  for (size_t c = 0; c < doc->nconfigs; c++)
    if (ff_runreport_find_workload(&doc->configs[c], name))
      return true;
  return false;
}

static int
no_workload(const struct judge *j, const struct ff_runreport *doc,
            const struct node *n)
{
  size_t nn;
  const char **names = ff_runreport_workload_names(doc, &nn);
  char list[512] = "";
  size_t used = 0;

  for (size_t i = 0; names && i < nn && used < sizeof list; i++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                     names[i]);

    used = w < 0 ? sizeof list : used + (size_t)w;
  }
  free(names);
  return ff_error("at column %zu: %s has no workload '%s' (its "
                  "workloads: %s)",
                  n->off + 1, doc_name(j, doc), n->name,
                  list[0] ? list : "none");
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts it). */
static double
median(double *v, size_t n)
{
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The commands a run of w ran: 1 for a single-command workload, the
 * run's "commands" for lvchange; 0 when the document does not say (an
 * event activation: its pvscans and vgchanges are not per run). */
static long long
run_commands(const struct ff_rr_workload *w, const struct ff_rr_run *r)
{
  if (w->event)
    return 0;
  if (!strcmp(w->type, "lvchange"))
    return r->commands > 0 ? r->commands : 0;
  return 1;
}

/* The I/O measure fn of n over w (in c of doc): the median over w's runs
 * of what the farm served in each (reads or bytes), divided per device or
 * per command; when the runs do not have their own counts (documents
 * before they did), the workload's, from its last run.  NAN with
 * j->reason when the document does not have what it needs; *err = -1
 * with ff_error when the workload can never have it. */
static double
measure(struct judge *j, const struct ff_runreport *doc,
        const struct ff_rr_config *c, const struct ff_rr_workload *w,
        const struct node *n, int *err)
{
  bool rd = n->fn == F_READS || n->fn == F_READS_PER_DEVICE ||
            n->fn == F_READS_PER_COMMAND;
  bool per_cmd = n->fn == F_READS_PER_COMMAND || n->fn == F_BYTES_PER_COMMAND;
  const char *field = rd ? "reads" : "bytes_read";
  double *v, m;
  size_t nv = 0;

  if (per_cmd && w->event) {
    *err = -1;
    ff_error("at column %zu: %s(%s): '%s' is an event activation: the run "
             "document does not count its commands per run (use %s(%s) or "
             "%s(%s))",
             n->off + 1, fn_names[n->fn], n->name, n->name,
             rd ? "reads" : "bytes", n->name,
             rd ? "reads_per_device" : "bytes_per_device", n->name);
    return NAN;
  }
  v = calloc(w->nruns, sizeof *v);
  if (!v) {
    *err = oom();
    return NAN;
  }
  for (size_t i = 0; i < w->nruns; i++) {
    long long x = rd ? w->runs[i].reads : w->runs[i].bytes_read;
    long long k = run_commands(w, &w->runs[i]);

    if (x < 0 || (per_cmd && !k))
      break;
    v[nv++] = per_cmd ? (double)x / (double)k : (double)x;
  }
  if (nv < w->nruns) {
    /* the document's runs lack their own counts: the last run's */
    long long x = rd ? w->reads : w->bytes_read;
    long long k = run_commands(w, &w->runs[w->nruns - 1]);

    nv = 0;
    if (x >= 0 && (!per_cmd || k))
      v[nv++] = per_cmd ? (double)x / (double)k : (double)x;
  }
  if (!nv) {
    free(v);
    unjudged(j,
             "'%s' in config %lld of %s: the run document has no \"%s\"%s "
             "(the farm's read counters were not recorded)",
             n->name, c->id, doc_name(j, doc), field,
             per_cmd ? " or no \"commands\" per run" : "");
    return NAN;
  }
  m = median(v, nv);
  free(v);
  if (n->fn == F_READS_PER_DEVICE || n->fn == F_BYTES_PER_DEVICE) {
    if (!c->has_farm || c->devices <= 0) {
      unjudged(j,
               "'%s' in config %lld of %s: the run document has no device "
               "count (\"farm\": {\"devices\"}) for %s()",
               n->name, c->id, doc_name(j, doc), fn_names[n->fn]);
      return NAN;
    }
    m /= (double)c->devices;
  }
  return m;
}

/* A term's value.  NAN with j->reason (not judged) or j->skip; -1 in *err
 * with ff_error on bad input. */
static double
term_value(struct judge *j, const struct node *n, int *err)
{
  const struct ff_runreport *doc = n->base ? j->base : j->rr;
  const struct ff_rr_config *c;
  const struct ff_rr_workload *w;
  char key[256];
  double v;

  if (!doc) {
    *err = -1;
    ff_error("at column %zu: '%.*s' needs --baseline RUN.json", n->off + 1,
             (int)(n->end - n->off), j->e->text + n->off);
    return NAN;
  }
  if (!doc_has_workload(doc, n->name)) {
    if (doc->error) {
      unjudged(j, "%s stopped early (%s) before any '%s' ran",
               doc_name(j, doc), doc->error, n->name);
      return NAN;
    }
    *err = no_workload(j, doc, n);
    return NAN;
  }
  c = resolve(j, doc, n, err);
  if (!c)
    return NAN;
  if (j->nused < sizeof j->used / sizeof *j->used)
    j->used[j->nused++] = n->base ? -c->id : c->id;
  w = ff_runreport_find_workload(c, n->name);
  if (!w) {
    unjudged(j, "%s did not time '%s' in config %lld (%s)%s%s",
             doc_name(j, doc), n->name, c->id, c->label,
             doc->error ? ": it stopped early: " : "",
             doc->error ? doc->error : "");
    return NAN;
  }
  /* bad input before "not judged": per command of an event activation */
  if (w->event &&
      (n->fn == F_READS_PER_COMMAND || n->fn == F_BYTES_PER_COMMAND))
    return measure(j, doc, c, w, n, err);
  if (w->failed_runs) {
    unjudged(j,
             "'%s' in config %lld of %s: %zu of %zu runs failed (worst "
             "exit %lld, failed commands: %lld): its time is not the "
             "workload's",
             n->name, c->id, doc_name(j, doc), w->failed_runs, w->nruns,
             w->worst_exit, w->errors);
    return NAN;
  }
  if (w->failed_units) {
    unjudged(j,
             "'%s' in config %lld of %s: %zu of its commands failed: its "
             "time is not the workload's",
             n->name, c->id, doc_name(j, doc), w->failed_units);
    return NAN;
  }
  v = n->fn == F_WALL ? w->median : measure(j, doc, c, w, n, err);
  if (isnan(v))
    return NAN;
  j->last_w = n->fn == F_WALL ? w : NULL;
  snprintf(key, sizeof key, "%.*s", (int)(n->end - n->off),
           j->e->text + n->off);
  if (n->bare)
    snprintf(key, sizeof key, "baseline.%s%s%s%s", fn_names[n->fn],
             n->fn ? "(" : "", n->name, n->fn ? ")" : "");
  json_object_set_new(j->values, key, json_real(v));
  return v;
}

static void
put_value(FILE *out, double v, enum dim dim)
{
  char buf[64];

  switch (dim) {
  case D_TIME:
    fputs(ff_runreport_fmt_secs(v, true, buf, sizeof buf), out);
    break;
  case D_BYTES:
    if (fabs(v) >= 1048576)
      fprintf(out, "%.4g MiB", v / 1048576);
    else if (fabs(v) >= 1024)
      fprintf(out, "%.4g KiB", v / 1024);
    else
      fprintf(out, "%.4g B", v);
    break;
  case D_COUNT:
    fprintf(out, "%.4g reads", v);
    break;
  case D_NONE:
    fprintf(out, "%.4g", v);
    break;
  }
}

/* A comparison k0 * A op k1 * B of wall times by the 95% interval of
 * A / B (ff-stats-ci.h) against t = k1 / k0: "confidently" holds only
 * when the whole interval is on the right side of t; otherwise (against
 * the baseline) it fails only when the whole interval is on the wrong
 * side.  Too few repetitions: "confidently" is not judged, a baseline
 * comparison keeps the medians' answer (median).  Writes what it found
 * to out; returns the verdict (NAN with j->reason). */
static double
interval_cmp(struct judge *j, const struct node *n,
             const struct ff_rr_workload *const w[2], double t, double median,
             FILE *out)
{
  bool less = n->op == '<' || n->op == 'L',
       strict = n->op == '<' || n->op == '>';
  struct ff_rr_ratio r;
  char a[32], b[32], c[32], th[32];
  bool v;

  if (ff_runreport_ratio(w[0], w[1], &r) < 0) {
    unjudged(j, "%s", ff_errmsg());
    return NAN;
  }
  if (r.judgement == FF_RR_TOO_FEW) {
    if (n->confident) {
      unjudged(j,
               "'confidently' needs a 95%% interval: %zu and %zu "
               "repetitions are too few (4 a side, or 3 and 5)",
               r.nruns_a, r.nruns_b);
      return NAN;
    }
    fprintf(out,
            " (medians: %zu and %zu repetitions are too few for a "
            "95%% interval)",
            r.nruns_a, r.nruns_b);
    return median;
  }
  if (n->confident)
    v =
      less ? (strict ? r.hi < t : r.hi <= t) : (strict ? r.lo > t : r.lo >= t);
  else
    v = less ? !(strict ? r.lo >= t : r.lo > t)
             : !(strict ? r.hi <= t : r.hi < t);
  ff_runreport_fmt_ratio(r.ratio, a, sizeof a);
  ff_runreport_fmt_ratio(r.lo, b, sizeof b);
  ff_runreport_fmt_ratio(r.hi, c, sizeof c);
  snprintf(th, sizeof th, "%.4g", t);
  b[strlen(b) - 1] = '\0';
  fprintf(out, " (ratio %s, 95%% CI %s\u2013%s against %s: %s)", a, b, c, th,
          n->confident ? (v ? "the whole interval is on its side"
                            : "the interval is not wholly on its side")
                       : (v ? "not clearly on the wrong side"
                            : "the whole interval is on the wrong side"));
  return v;
}

/* Evaluate n, writing it with the values substituted to out.  NAN with
 * j->reason or j->skip set, or *err. */
static double
eval(struct judge *j, const struct node *n, FILE *out, int *err)
{
  double a, b, v = NAN;

  if (*err || j->reason || j->skip)
    return NAN;
  if (n->paren)
    fputc('(', out);
  switch (n->kind) {
  case N_NUM:
    fprintf(out, "%.*s", (int)(n->end - n->off), j->e->text + n->off);
    v = n->num;
    break;
  case N_TERM:
    v = term_value(j, n, err);
    if (!isnan(v))
      put_value(out, v, n->dim);
    break;
  case N_NEG:
    fputc('-', out);
    v = -eval(j, n->a, out, err);
    break;
  case N_ARITH:
    a = eval(j, n->a, out, err);
    fprintf(out, " %c ", n->op);
    b = eval(j, n->b, out, err);
    if (n->op == '/' && b == 0 && !isnan(b)) {
      unjudged(j, "'%.*s' is 0: no ratio", (int)(n->b->end - n->b->off),
               j->e->text + n->b->off);
      break;
    }
    v = n->op == '+'   ? a + b
        : n->op == '-' ? a - b
        : n->op == '*' ? a * b
                       : a / b;
    break;
  case N_CMP: {
    static const char *const ops[] = {"<", "<=", ">", ">="};
    const char *op = ops[n->op == '<'   ? 0
                         : n->op == 'L' ? 1
                         : n->op == '>' ? 2
                                        : 3];
    const struct node *side[2] = {n->a, n->b}, *t[2];
    const struct ff_rr_workload *w[2] = {NULL, NULL};
    double sv[2], k[2];

    for (int s = 0; s < 2; s++) {
      t[s] = scaled_wall(side[s], &k[s]);
      j->last_w = NULL;
      sv[s] = eval(j, side[s], out, err);
      w[s] = t[s] ? j->last_w : NULL;
      if (side[s]->kind != N_NUM && side[s]->kind != N_TERM && !isnan(sv[s])) {
        fputs(" = ", out);
        put_value(out, sv[s], side[s]->dim);
      }
      if (!s)
        fprintf(out, " %s ", op);
    }
    a = sv[0];
    b = sv[1];
    v = n->op == '<'   ? a < b
        : n->op == 'L' ? a <= b
        : n->op == '>' ? a > b
                       : a >= b;
    /* against the baseline, or confidently: the 95% interval */
    if (w[0] && w[1] && (n->confident || t[0]->base != t[1]->base))
      v = interval_cmp(j, n, w, k[1] / k[0], v, out);
    fprintf(out, ": %s", v ? "true" : "false");
    break;
  }
  case N_AND:
  case N_OR:
    a = eval(j, n->a, out, err);
    fprintf(out, n->kind == N_AND ? " and " : " or ");
    b = eval(j, n->b, out, err);
    v = n->kind == N_AND ? (a && b) : (a || b);
    break;
  }
  if (n->paren)
    fputc(')', out);
  if (*err || j->reason || j->skip)
    return NAN;
  return v;
}

static bool
seen_before(long long used[][64], size_t *nused, size_t neval,
            const struct judge *j)
{
  for (size_t i = 0; i < neval; i++)
    if (nused[i] == j->nused &&
        !memcmp(used[i], j->used, j->nused * sizeof *j->used))
      return true;
  return false;
}

/* The short name of a setting: "use_aio" of "global/use_aio". */
static const char *
short_key(const char *key)
{
  const char *s = strrchr(key, '/');

  return s ? s + 1 : key;
}

/* Whether n has a workload term and every one (baseline terms aside)
 * qualifies the setting whose short name is key (len bytes). */
static bool
terms_fix(const struct node *n, const char *key, size_t len, bool *any)
{
  if (!n)
    return true;
  if (n->kind == N_TERM) {
    if (n->base)
      return true;
    *any = true;
    for (size_t i = 0; i < n->nq; i++) {
      const char *k = short_key(n->q[i].key);

      if (strlen(k) == len && !strncmp(k, key, len))
        return true;
    }
    return false;
  }
  return terms_fix(n->a, key, len, any) && terms_fix(n->b, key, len, any);
}

/* An evaluation's label: its configuration's ("lvm=2.02.180 use_aio=1")
 * less the settings every term of e fixes by its qualifier, which would
 * name the anchor configuration, not the ones compared.  Nothing left:
 * the whole label. */
static char *
eval_label(const struct ff_expect *e, const char *label)
{
  size_t n = strlen(label), o = 0;
  char *out = malloc(n + 1);

  if (!out)
    return NULL;
  for (const char *w = label; *w;) {
    size_t wl = strcspn(w, " "), kl = strcspn(w, "=");
    bool any = false;

    if (kl >= wl || !terms_fix(e->root, w, kl, &any) || !any) {
      if (o)
        out[o++] = ' ';
      memcpy(out + o, w, wl);
      o += wl;
    }
    w += wl;
    w += strspn(w, " ");
  }
  out[o] = '\0';
  if (!o)
    snprintf(out, n + 1, "%s", label);
  return out;
}

json_t *
ff_expect_judge(const struct ff_expect *e, const struct ff_runreport *rr,
                const struct ff_runreport *base, enum ff_expect_status *st)
{
  json_t *entry, *evals = json_array();
  long long(*used)[64] = calloc(rr->nconfigs, sizeof *used);
  size_t *nused = calloc(rr->nconfigs, sizeof *nused), neval = 0;
  bool any_fail = false, any_unjudged = false;
  char why_skip[768] = "";

  if (!evals || !used || !nused) {
    json_decref(evals);
    free(used);
    free(nused);
    oom();
    return NULL;
  }
  for (size_t c = 0; c < rr->nconfigs; c++) {
    struct judge j = {.e = e, .rr = rr, .base = base, .cur = &rr->configs[c]};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    int err = 0;
    double v;
    json_t *ev;
    char *label;

    j.values = json_object();
    if (!out || !j.values) {
      if (out)
        fclose(out);
      free(text);
      json_decref(j.values);
      json_decref(evals);
      free(used);
      free(nused);
      oom();
      return NULL;
    }
    v = eval(&j, e->root, out, &err);
    fclose(out);
    if (err || j.skip || seen_before(used, nused, neval, &j)) {
      free(text);
      free(j.reason);
      json_decref(j.values);
      if (err) {
        json_decref(evals);
        free(used);
        free(nused);
        return NULL;
      }
      if (j.skip)
        snprintf(why_skip, sizeof why_skip, "%s", j.why);
      continue;
    }
    memcpy(used[neval], j.used, sizeof j.used);
    nused[neval++] = j.nused;
    label = eval_label(e, j.cur->label);
    if (!label)
      oom();
    ev = json_pack("{s:I, s:s, s:o}", "config", (json_int_t)j.cur->id, "label",
                   label, "values", j.values);
    free(label);
    if (j.reason) {
      any_unjudged = true;
      json_object_set_new(ev, "holds", json_null());
      json_object_set_new(ev, "reason", json_string(j.reason));
    } else {
      any_fail |= !v;
      json_object_set_new(ev, "text", json_string(text));
      json_object_set_new(ev, "holds", json_boolean(v));
    }
    json_array_append_new(evals, ev);
    free(text);
    free(j.reason);
  }
  free(used);
  free(nused);
  if (!neval) {
    json_decref(evals);
    ff_error("no configuration to judge it in: %s",
             why_skip[0] ? why_skip : "the run has none");
    return NULL;
  }
  *st = any_unjudged ? FF_EXPECT_UNJUDGED
        : any_fail   ? FF_EXPECT_FAILS
                     : FF_EXPECT_HOLDS;
  entry = json_pack("{s:s, s:s, s:o}", "expression", e->text, "result",
                    ff_expect_status_name(*st), "evaluations", evals);
  if (!entry)
    oom();
  return entry;
}

int
ff_expect_exit(const enum ff_expect_status *st, size_t n)
{
  int rc = 0;

  for (size_t i = 0; i < n; i++)
    if (st[i] == FF_EXPECT_UNJUDGED)
      return 125;
    else if (st[i] == FF_EXPECT_FAILS)
      rc = 1;
  return rc;
}

int
ff_expect_judge_all(struct ff_expect *const *ex, size_t n,
                    const struct ff_runreport *rr,
                    const struct ff_runreport *base, json_t *doc)
{
  enum ff_expect_status *st = calloc(n ? n : 1, sizeof *st);
  json_t *arr = json_array();
  int rc;

  if (!st || !arr) {
    free(st);
    json_decref(arr);
    return oom();
  }
  for (size_t i = 0; i < n; i++) {
    json_t *entry = ff_expect_judge(ex[i], rr, base, &st[i]);

    if (!entry) {
      ff_error_prefix("--expect '%s': ", ex[i]->text);
      free(st);
      json_decref(arr);
      return -1;
    }
    json_array_append_new(arr, entry);
  }
  json_object_set_new(doc, "expect", arr);
  rc = ff_expect_exit(st, n);
  free(st);
  return rc;
}

void
ff_expect_print_error(FILE *out, const char *cmd, const char *text)
{
  const char *msg = ff_errmsg();
  unsigned col = 0;

  fprintf(out, "fusefarm %s: --expect: %s\n", cmd, msg);
  if (sscanf(msg, "at column %u:", &col) == 1 && col >= 1 &&
      col <= strlen(text) + 1)
    fprintf(out, "  %s\n  %*s^\n", text, (int)col - 1, "");
}

const char *
ff_expect_status_name(enum ff_expect_status st)
{
  return st == FF_EXPECT_HOLDS   ? "holds"
         : st == FF_EXPECT_FAILS ? "fails"
                                 : "not judged";
}

struct ff_runreport *
ff_expect_skeleton(const struct ff_scenario *sc)
{
  uint64_t nconf = ff_scenario_nconfigs(sc);
  unsigned *idx = calloc(sc->naxes + 1, sizeof *idx);
  json_t *doc, *configs = json_array();
  struct ff_runreport *rr = NULL;
  char *text;

  doc = json_pack("{s:s, s:i, s:{s:s}, s:s, s:{s:s, s:s}}", "format",
                  "fusefarm-run", "version", 1, "scenario", "name", sc->name,
                  "started", "", "host", "kernel", "", "lvm_version", "");
  if (!idx || !doc || !configs)
    goto out;
  json_object_set(doc, "configs", configs);
  for (uint64_t k = 0; k < nconf; k++) {
    char label[512], *st;
    json_t *settings, *wls = json_array(), *cj;

    ff_scenario_config(sc, k, idx);
    ff_config_label(sc, idx, label, sizeof label);
    st = ff_config_settings(sc, idx);
    settings = st ? json_loads(st, 0, NULL) : NULL;
    free(st);
    for (unsigned w = 0; wls && w < sc->nworkloads; w++) {
      const struct ff_workload *wl = &sc->workloads[w];
      json_t *wj = json_pack(
        "{s:s, s:s, s:i, s:[{s:f, s:i, s:i}], s:f, s:f, s:f}", "name",
        wl->name ? wl->name : ff_wtype_name(wl->type), "type",
        ff_wtype_name(wl->type), "repeat", 1, "runs", "wall", 1.0, "exit", 0,
        "errors", 0, "min", 1.0, "median", 1.0, "max", 1.0);

      if (wj && wl->type == FF_W_EVENT_ACTIVATION) {
        json_object_set_new(wj, "devices", json_array());
        json_object_set_new(wj, "activations", json_array());
      }
      json_array_append_new(wls, wj);
    }
    cj = json_pack("{s:I, s:s, s:o*, s:o*}", "id", (json_int_t)k + 1, "label",
                   label, "settings", settings, "workloads", wls);
    if (!cj || json_array_append_new(configs, cj) < 0)
      goto out;
  }
  text = json_dumps(doc, JSON_COMPACT);
  if (text)
    rr = ff_runreport_load_text(text, strlen(text), "the scenario");
  free(text);
  if (!rr)
    goto fail;
  goto done;
out:
  oom();
fail:
  rr = NULL;
done:
  json_decref(configs);
  json_decref(doc);
  free(idx);
  return rr;
}
