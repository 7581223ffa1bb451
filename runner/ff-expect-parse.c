/* fusefarm: --expect, the parser (ff-expect-int.h): a recursive-descent
 * parser over a token array, its binary operators one table of precedence
 * levels (levels[]); then bare baselines are bound and every node's
 * dimension is checked, so that a parsed expression can always be judged
 * (ff-expect.c).  Its messages are ff-expect.h's grammar errors, at a
 * column.  No threads. */
#include "ff-expect-int.h"
#include "ff-error.h"

#include <ctype.h>
#include <math.h>
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

static const char *const dim_names[] = {"a plain number", "a time", "bytes",
                                        "a count of reads"};

struct tok {
  enum tok_kind kind;
  size_t off, len; /* where in the text */
  double num;      /* T_NUM: in seconds or bytes when it has a unit */
  enum dim dim;
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

const char *
ff_ex_fn_name(enum fn f)
{
  return (unsigned)f < sizeof fn_names / sizeof *fn_names ? fn_names[f] : "?";
}

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

int
ff_ex_oom(void)
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
        return ff_ex_oom();
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
    ff_ex_oom();
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
      return ff_ex_oom();
    n->q = q;
    q = &n->q[n->nq];
    q->key = strndup(s + ks, ke - ks);
    q->value = strndup(s + vs, ve - vs);
    q->off = ks;
    if (!q->key || !q->value) {
      free(q->key);
      free(q->value);
      return ff_ex_oom();
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
    return ff_ex_oom();
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

const struct node *
ff_ex_scaled_wall(const struct node *n, double *k)
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
      if (!ff_ex_scaled_wall(n->a, &k) || !ff_ex_scaled_wall(n->b, &k)) {
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
    return ff_ex_oom();
  if (!from->nq)
    return 0;
  to->q = calloc(from->nq, sizeof *to->q);
  if (!to->q)
    return ff_ex_oom();
  for (size_t i = 0; i < from->nq; i++) {
    to->q[i].key = strdup(from->q[i].key);
    to->q[i].value = strdup(from->q[i].value);
    to->q[i].off = from->q[i].off;
    to->nq++;
    if (!to->q[i].key || !to->q[i].value)
      return ff_ex_oom();
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
    ff_ex_oom();
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
