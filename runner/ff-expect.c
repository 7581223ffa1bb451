/* fusefarm: --expect: parse an expression over a run's median wall times
 * and judge it (ff-expect.h, docs/bisect.md).  A recursive-descent parser
 * over a token array; judging evaluates the tree once per configuration
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

struct tok {
  enum tok_kind kind;
  size_t off, len; /* where in the text */
  double num;      /* T_NUM: in seconds when unit */
  bool unit;
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
  char op;
  double num;
  bool unit;
  struct node *a, *b;
  /* N_TERM */
  bool base, bare; /* baseline.W; bare "baseline" (name set after parse) */
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
        } units[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"min", 60}};
        size_t k;

        for (k = 0; k < sizeof units / sizeof *units; k++)
          if (strlen(units[k].name) == i - u &&
              !strncmp(units[k].name, s + u, i - u))
            break;
        if (k == sizeof units / sizeof *units)
          return ff_error("at column %zu: unknown unit '%.*s' (s, ms, us or "
                          "min)",
                          u + 1, (int)(i - u), s + u);
        t.num *= units[k].factor;
        t.unit = true;
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

static struct node *parse_or(struct parser *p);
static struct node *parse_sum(struct parser *p);

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
      if (peek(p)->kind == T_QUAL) {
        col_error(peek(p)->off,
                  "a bare 'baseline' takes the qualifier of the other side: "
                  "write baseline.WORKLOAD[...]",
                  NULL);
        node_free(n);
        return NULL;
      }
      return n;
    }
  }
  n->name = strndup(p->text + t->off, t->len);
  if (!n->name) {
    oom();
    node_free(n);
    return NULL;
  }
  n->end = t->off + t->len;
  if (peek(p)->kind == T_QUAL) {
    t = &p->t[p->i++];
    n->end = t->off + t->len;
    if (parse_quals(p, n, t) < 0) {
      node_free(n);
      return NULL;
    }
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
      n->unit = t->unit;
      n->end = t->off + t->len;
    }
    return n;
  case T_NAME:
    return parse_term(p);
  case T_LP: {
    size_t off = t->off;

    p->i++;
    n = parse_or(p);
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

static struct node *
parse_binary(struct parser *p, bool sum)
{
  struct node *l = sum ? parse_binary(p, false) : parse_unary(p);

  while (l) {
    enum tok_kind k = peek(p)->kind;
    struct node *n;

    if (sum ? k != T_PLUS && k != T_MINUS : k != T_STAR && k != T_SLASH)
      break;
    p->i++;
    n = new_node(N_ARITH, l->off);
    if (!n || need_number(l) < 0) {
      node_free(n);
      node_free(l);
      return NULL;
    }
    n->op = k == T_PLUS ? '+' : k == T_MINUS ? '-' : k == T_STAR ? '*' : '/';
    n->a = l;
    n->b = sum ? parse_binary(p, false) : parse_unary(p);
    if (!n->b || need_number(n->b) < 0) {
      node_free(n);
      return NULL;
    }
    n->end = n->b->end;
    l = n;
  }
  return l;
}

static struct node *
parse_sum(struct parser *p)
{
  return parse_binary(p, true);
}

static bool
is_cmp(enum tok_kind k)
{
  return k == T_LT || k == T_LE || k == T_GT || k == T_GE;
}

static struct node *
parse_cmp(struct parser *p)
{
  struct node *l = parse_sum(p), *n;
  enum tok_kind k;

  if (!l)
    return NULL;
  k = peek(p)->kind;
  /* Not a comparison: a parenthesized condition, (a < b or c < d), or a
   * number, in parentheses (2 * (a + b)) or where a comparison is due:
   * whoever wanted a comparison says so. */
  if (!is_cmp(k))
    return l;
  if (need_number(l) < 0) {
    node_free(l);
    return NULL;
  }
  p->i++;
  n = new_node(N_CMP, l->off);
  if (!n) {
    node_free(l);
    return NULL;
  }
  n->op = k == T_LT ? '<' : k == T_LE ? 'L' : k == T_GT ? '>' : 'G';
  n->a = l;
  n->b = parse_sum(p);
  if (!n->b || need_number(n->b) < 0) {
    node_free(n);
    return NULL;
  }
  n->end = n->b->end;
  if (is_cmp(peek(p)->kind)) {
    col_error(peek(p)->off, "comparisons do not chain: write a < b and b < c",
              NULL);
    node_free(n);
    return NULL;
  }
  return n;
}

static struct node *
parse_logic(struct parser *p, bool or)
{
  struct node *l = or ? parse_logic(p, false) : parse_cmp(p);

  while (l && peek(p)->kind == (or ? T_OR : T_AND)) {
    struct node *n;

    if (!is_bool(l)) {
      expected(p, "expected <, <=, > or >=");
      node_free(l);
      return NULL;
    }
    n = new_node(or ? N_OR : N_AND, l->off);
    p->i++;
    if (!n) {
      node_free(l);
      return NULL;
    }
    n->a = l;
    n->b = or ? parse_logic(p, false) : parse_cmp(p);
    if (n->b && !is_bool(n->b)) {
      expected(p, "expected <, <=, > or >=");
      node_free(n);
      return NULL;
    }
    if (!n->b) {
      node_free(n);
      return NULL;
    }
    n->end = n->b->end;
    l = n;
  }
  return l;
}

static struct node *
parse_or(struct parser *p)
{
  return parse_logic(p, true);
}

/* The workload terms (not baseline) of n: how many, and the last. */
static void
find_terms(struct node *n, size_t *count, struct node **last)
{
  if (!n)
    return;
  if (n->kind == N_TERM && !n->base) {
    if (!*last || strcmp((*last)->name, n->name) || (*last)->nq ||
        n->nq) /* distinct unless same plain name */
      ++*count;
    *last = n;
  }
  find_terms(n->a, count, last);
  find_terms(n->b, count, last);
}

static int
copy_quals(struct node *to, const struct node *from)
{
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
  e->root = parse_or(&p);
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
  if (bind_all(e->root) < 0)
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

/* A term's value.  NAN with j->reason (not judged) or j->skip; -1 in *err
 * with ff_error on bad input. */
static double
term_value(struct judge *j, const struct node *n, int *err)
{
  const struct ff_runreport *doc = n->base ? j->base : j->rr;
  const struct ff_rr_config *c;
  const struct ff_rr_workload *w;
  char key[256];

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
  snprintf(key, sizeof key, "%.*s", (int)(n->end - n->off),
           j->e->text + n->off);
  if (n->bare)
    snprintf(key, sizeof key, "baseline.%s", n->name);
  json_object_set_new(j->values, key, json_real(w->median));
  return w->median;
}

static bool
timed(const struct node *n)
{
  if (!n)
    return false;
  if (n->kind == N_TERM)
    return true;
  if (n->kind == N_NUM)
    return n->unit;
  return timed(n->a) || timed(n->b);
}

static void
put_value(FILE *out, double v, bool secs)
{
  char buf[64];

  if (secs)
    fputs(ff_runreport_fmt_secs(v, true, buf, sizeof buf), out);
  else
    fprintf(out, "%.4g", v);
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
      put_value(out, v, true);
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
    const struct node *side[2] = {n->a, n->b};
    double sv[2];

    for (int s = 0; s < 2; s++) {
      sv[s] = eval(j, side[s], out, err);
      if (side[s]->kind != N_NUM && side[s]->kind != N_TERM && !isnan(sv[s])) {
        fputs(" = ", out);
        put_value(out, sv[s], timed(side[s]));
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
    ev = json_pack("{s:I, s:s, s:o}", "config", (json_int_t)j.cur->id, "label",
                   j.cur->label, "values", j.values);
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
