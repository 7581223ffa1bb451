/* fusefarm: folded stacks from `perf script` text, their file form and
 * the frames that grew between two sets (ff-flame.h).  The drawing is
 * ff-flame-svg.c.  No threads.
 */
#include "ff-flame.h"
#include "ff-flame-int.h"
#include "ff-error.h"
#include "ff-file.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* --- a string -> dense index map (open addressing, FNV-1a) ----------- */

static uint64_t
hash_str(const char *s, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ULL;

  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

void
ff_flame_map_free(struct ff_flame_map *m)
{
  for (size_t i = 0; i < m->n; i++)
    free(m->keys[i]);
  free(m->keys);
  free(m->slots);
  memset(m, 0, sizeof *m);
}

static int
map_grow(struct ff_flame_map *m)
{
  size_t cap = m->cap ? m->cap * 2 : 64;
  size_t *slots = malloc(cap * sizeof *slots);

  if (!slots)
    return -1;
  for (size_t i = 0; i < cap; i++)
    slots[i] = SIZE_MAX;
  for (size_t k = 0; k < m->n; k++) {
    size_t i = hash_str(m->keys[k], strlen(m->keys[k])) & (cap - 1);

    while (slots[i] != SIZE_MAX)
      i = (i + 1) & (cap - 1);
    slots[i] = k;
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return 0;
}

long
ff_flame_map_find(const struct ff_flame_map *m, const char *key, size_t n)
{
  if (!m->cap)
    return -1;
  for (size_t i = hash_str(key, n) & (m->cap - 1); m->slots[i] != SIZE_MAX;
       i = (i + 1) & (m->cap - 1)) {
    const char *k = m->keys[m->slots[i]];

    if (!strncmp(k, key, n) && k[n] == '\0')
      return (long)m->slots[i];
  }
  return -1;
}

long
ff_flame_map_add(struct ff_flame_map *m, const char *key, size_t n, int *added)
{
  long k = ff_flame_map_find(m, key, n);
  size_t i;
  char **keys;

  *added = 0;
  if (k >= 0)
    return k;
  if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
    return -1;
  if (m->n == m->keys_cap) {
    size_t cap = m->keys_cap ? m->keys_cap * 2 : 64;

    keys = realloc(m->keys, cap * sizeof *keys);
    if (!keys)
      return -1;
    m->keys = keys;
    m->keys_cap = cap;
  }
  if (!(m->keys[m->n] = strndup(key, n)))
    return -1;
  for (i = hash_str(key, n) & (m->cap - 1); m->slots[i] != SIZE_MAX;
       i = (i + 1) & (m->cap - 1))
    ;
  m->slots[i] = m->n;
  *added = 1;
  return (long)m->n++;
}

/* --- the set ---------------------------------------------------------- */

struct ff_flame *
ff_flame_new(void)
{
  struct ff_flame *fl = calloc(1, sizeof *fl);

  if (!fl)
    ff_error("out of memory");
  return fl;
}

void
ff_flame_free(struct ff_flame *fl)
{
  if (!fl)
    return;
  ff_flame_map_free(&fl->stacks);
  free(fl->counts);
  free(fl);
}

uint64_t
ff_flame_seen(const struct ff_flame *fl)
{
  return fl->seen;
}

uint64_t
ff_flame_samples(const struct ff_flame *fl)
{
  return fl->samples;
}

void
ff_flame_set_unit(struct ff_flame *fl, const char *unit)
{
  fl->unit = unit;
}

const char *
ff_flame_unit(const struct ff_flame *fl)
{
  return fl->unit ? fl->unit : "samples";
}

size_t
ff_flame_nstacks(const struct ff_flame *fl)
{
  return fl->stacks.n;
}

int
ff_flame_add_n(struct ff_flame *fl, const char *stack, size_t len, uint64_t n)
{
  int added;
  long k;

  if (!len || stack[0] == ';' || stack[len - 1] == ';' ||
      memmem(stack, len, ";;", 2))
    return ff_error("empty frame in stack '%.*s'", (int)len, stack);
  k = ff_flame_map_add(&fl->stacks, stack, len, &added);
  if (k < 0)
    return ff_error("out of memory");
  if (added && fl->stacks.n > fl->counts_cap) {
    size_t cap = fl->stacks.keys_cap;
    uint64_t *c = realloc(fl->counts, cap * sizeof *c);

    if (!c)
      return ff_error("out of memory");
    fl->counts = c;
    fl->counts_cap = cap;
  }
  if (added)
    fl->counts[k] = 0;
  fl->counts[k] += n;
  fl->samples += n;
  return 0;
}

int
ff_flame_add(struct ff_flame *fl, const char *stack, uint64_t n)
{
  return ff_flame_add_n(fl, stack, strlen(stack), n);
}

int
ff_flame_merge(struct ff_flame *fl, const struct ff_flame *from)
{
  for (size_t i = 0; i < from->stacks.n; i++)
    if (ff_flame_add(fl, from->stacks.keys[i], from->counts[i]) < 0)
      return -1;
  return 0;
}

/* --- frames ----------------------------------------------------------- */

char
ff_flame_frame_kind(const char *frame, size_t len)
{
  if (len > 4 && frame[len - 4] == '_' && frame[len - 3] == '[' &&
      frame[len - 1] == ']') {
    if (frame[len - 2] == 'k')
      return 'k';
    if (frame[len - 2] == 'f')
      return 'f';
  }
  return 'u';
}

const char *
ff_flame_frame_name(const char *frame, size_t len, char *buf, size_t bufsize)
{
  if (ff_flame_frame_kind(frame, len) != 'u')
    len -= 4;
  snprintf(buf, bufsize, "%.*s", (int)len, frame);
  return buf;
}

/* --- perf script ------------------------------------------------------ */

int
ff_flame_pid_set(struct ff_flame_pids *m, pid_t k, pid_t v)
{
  size_t i;

  if ((m->n + 1) * 2 > m->cap) {
    struct ff_flame_pids g = {.cap = m->cap ? m->cap * 2 : 256};

    g.key = calloc(g.cap, sizeof *g.key);
    g.val = calloc(g.cap, sizeof *g.val);
    if (!g.key || !g.val) {
      free(g.key);
      free(g.val);
      return -1;
    }
    for (size_t j = 0; j < m->cap; j++)
      if (m->key[j])
        ff_flame_pid_set(&g, m->key[j], m->val[j]);
    free(m->key);
    free(m->val);
    *m = g;
  }
  for (i = (size_t)k * 2654435761u & (m->cap - 1); m->key[i] && m->key[i] != k;
       i = (i + 1) & (m->cap - 1))
    ;
  if (!m->key[i])
    m->n++;
  m->key[i] = k;
  m->val[i] = v;
  return 0;
}

pid_t
ff_flame_pid_get(const struct ff_flame_pids *m, pid_t k)
{
  if (!m->cap)
    return 0;
  for (size_t i = (size_t)k * 2654435761u & (m->cap - 1); m->key[i];
       i = (i + 1) & (m->cap - 1))
    if (m->key[i] == k)
      return m->val[i];
  return 0;
}

void
ff_flame_pids_free(struct ff_flame_pids *m)
{
  free(m->key);
  free(m->val);
  memset(m, 0, sizeof *m);
}

bool
ff_flame_keeps(const struct ff_flame_filter *flt,
               const struct ff_flame_pids *parents, pid_t pid, bool *farm)
{
  *farm = flt->farm && pid == flt->farm;
  if (*farm)
    return true;
  if (!flt->root && !flt->farm)
    return true;
  if (!flt->root || pid == flt->root)
    return false;
  /* Bounded: a pid reused while perf ran could make a loop. */
  for (int depth = 0; pid > 0 && depth < 1024; depth++) {
    if (pid == flt->skip || (flt->skip2 && pid == flt->skip2))
      return false;
    if (pid == flt->root)
      return true;
    pid = ff_flame_pid_get(parents, pid);
  }
  return false;
}

int
ff_flame_sample_stack(const struct ff_flame_sample *s, struct ff_sb *st)
{
  const char **f = NULL;
  size_t k = 0;

  if (s->nframes && !(f = calloc(s->nframes, sizeof *f)))
    return ff_error("out of memory");
  for (const char *p = s->frames.buf; k < s->nframes; p += strlen(p) + 1)
    f[k++] = p;
  ff_sb_add(st, s->comm.buf && s->comm.len ? s->comm.buf : "[unknown]");
  if (s->farm)
    ff_sb_add(st, "_[f]");
  while (k--)
    ff_sb_addf(st, ";%s", f[k]);
  free(f);
  if (ff_sb_failed(st))
    return ff_error("out of memory");
  return 0;
}

/* Fold the open sample into fl. */
static int
commit(struct ff_flame *fl, struct ff_flame_sample *s)
{
  struct ff_sb st = {0};
  int rc;

  if (!s->open)
    return 0;
  s->open = false;
  fl->seen++;
  if (!s->keep)
    return 0;
  rc = ff_flame_sample_stack(s, &st);
  if (!rc)
    rc = ff_flame_add_n(fl, st.buf, st.len, 1);
  ff_sb_release(&st);
  return rc;
}

/* Append text to sb with ';' and control characters replaced: a frame
 * or a comm as the folded form can carry it. */
void
ff_flame_add_clean(struct ff_sb *sb, const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    char c = s[i];

    ff_sb_addn(sb, c == ';' ? ":" : (unsigned char)c < ' ' ? " " : &c, 1);
  }
}

/* "  ffffffff8163d350 get_page_from_freelist ([kernel.kallsyms])" */
int
ff_flame_parse_frame(struct ff_flame_sample *s, const char *line)
{
  const char *p = line, *sym, *end, *dso = NULL, *dso_end = NULL;
  char *after;
  unsigned long long addr;
  bool kernel;
  size_t before = s->frames.len;

  while (isspace((unsigned char)*p))
    p++;
  errno = 0;
  addr = strtoull(p, &after, 16);
  if (after == p || errno || (*after && !isspace((unsigned char)*after)))
    return -1;
  sym = after;
  while (isspace((unsigned char)*sym))
    sym++;
  end = sym + strlen(sym);
  while (end > sym && isspace((unsigned char)end[-1]))
    end--;
  if (end > sym && end[-1] == ')') {
    for (const char *q = end - 1; q > sym; q--)
      if (*q == '(' && (q == sym || q[-1] == ' ')) {
        dso = q + 1;
        dso_end = end - 1;
        end = q;
        break;
      }
    if (!dso && *sym == '(') { /* no symbol at all: "(dso)" */
      dso = sym + 1;
      dso_end = end - 1;
      end = sym;
    }
  }
  while (end > sym && isspace((unsigned char)end[-1]))
    end--;
  kernel = addr >= 0xffff000000000000ULL ||
           (dso && !strncmp(dso, "[kernel", 7) && dso_end - dso >= 7);
  if (end == sym || (end - sym == 9 && !memcmp(sym, "[unknown]", 9))) {
    /* No symbol: the object's base name. */
    const char *b = dso;

    for (const char *q = dso; q && q < dso_end; q++)
      if (*q == '/')
        b = q + 1;
    if (b && dso_end > b &&
        !(dso_end - b == 9 && !memcmp(b, "[unknown]", 9)) &&
        !(dso_end - b == 7 && !memcmp(b, "unknown", 7))) {
      bool br = *b == '[';

      ff_sb_add(&s->frames, br ? "" : "[");
      ff_flame_add_clean(&s->frames, b, (size_t)(dso_end - b));
      ff_sb_add(&s->frames, br ? "" : "]");
    } else {
      ff_sb_add(&s->frames, "[unknown]");
    }
  } else {
    ff_flame_add_clean(&s->frames, sym, (size_t)(end - sym));
  }
  if (kernel)
    ff_sb_add(&s->frames, "_[k]");
  else if (s->farm)
    ff_sb_add(&s->frames, "_[f]");
  ff_sb_addn(&s->frames, "", 1);
  if (s->frames.len == before)
    return -1;
  s->nframes++;
  return 0;
}

const char *
ff_flame_pid_tid(const char *line, pid_t *pid)
{
  const char *found = NULL, *p = line;

  while (*p) {
    const char *t, *q;

    while (*p == ' ' || *p == '\t')
      p++;
    t = p;
    while (*p && *p != ' ' && *p != '\t')
      p++;
    q = t + (*t == '-');
    while (q < p && isdigit((unsigned char)*q))
      q++;
    if (q > t + (*t == '-') && q < p - 1 && *q == '/') {
      const char *r = q + 1 + (q[1] == '-'), *d = r;

      while (r < p && isdigit((unsigned char)*r))
        r++;
      if (r == p && r > d && t > line) {
        found = t;
        *pid = (pid_t)strtol(t, NULL, 10);
      }
    }
  }
  return found;
}

int
ff_flame_parse_perf(struct ff_flame *fl, FILE *in, const char *name,
                    const struct ff_flame_filter *flt)
{
  static const struct ff_flame_filter all;
  struct ff_flame_pids parents = {0};
  struct ff_flame_sample s = {0};
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  ssize_t len;
  int rc = 0;

  if (!flt)
    flt = &all;
  errno = 0;
  while (!rc && (len = getline(&line, &cap, in)) >= 0) {
    const char *ev, *at;
    pid_t pid = 0;

    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
      line[--len] = '\0';
    if (strspn(line, " \t") == (size_t)len) {
      rc = commit(fl, &s);
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') {
      if (!s.open)
        rc = ff_error("%s line %zu: a frame outside a sample", name, lineno);
      else if (ff_flame_parse_frame(&s, line) < 0)
        rc = ff_error("%s line %zu: expected ADDRESS SYMBOL (OBJECT), got "
                      "'%.80s'",
                      name, lineno, line);
      continue;
    }
    if ((rc = commit(fl, &s)) < 0)
      break;
    if ((ev = strstr(line, "PERF_RECORD_"))) {
      int c, ct, p, pt;

      if (!strncmp(ev, "PERF_RECORD_FORK(", 17) &&
          sscanf(ev + 17, "%d:%d):(%d:%d)", &c, &ct, &p, &pt) == 4 && c != p &&
          ff_flame_pid_set(&parents, c, p) < 0)
        rc = ff_error("out of memory");
      continue;
    }
    at = ff_flame_pid_tid(line, &pid);
    if (!at) {
      rc = ff_error("%s line %zu: expected COMM PID/TID, got '%.80s'", name,
                    lineno, line);
      break;
    }
    while (at > line && (at[-1] == ' ' || at[-1] == '\t'))
      at--;
    s.open = true;
    s.keep = ff_flame_keeps(flt, &parents, pid, &s.farm);
    s.nframes = 0;
    s.frames.len = 0;
    s.comm.len = 0;
    ff_flame_add_clean(&s.comm, line, (size_t)(at - line));
  }
  if (!rc && ferror(in))
    rc = ff_error("%s: read: %m", name);
  if (!rc)
    rc = commit(fl, &s);
  if (!rc && (ff_sb_failed(&s.comm) || ff_sb_failed(&s.frames)))
    rc = ff_error("out of memory");
  ff_sb_release(&s.comm);
  ff_sb_release(&s.frames);
  ff_flame_pids_free(&parents);
  free(line);
  return rc;
}

/* --- the folded file -------------------------------------------------- */

static int
by_key(const void *a, const void *b, void *keys)
{
  char **k = keys;

  return strcmp(k[*(const size_t *)a], k[*(const size_t *)b]);
}

size_t *
ff_flame_order(const struct ff_flame *fl)
{
  size_t *o = malloc((fl->stacks.n ? fl->stacks.n : 1) * sizeof *o);

  if (!o) {
    ff_error("out of memory");
    return NULL;
  }
  for (size_t i = 0; i < fl->stacks.n; i++)
    o[i] = i;
  qsort_r(o, fl->stacks.n, sizeof *o, by_key, fl->stacks.keys);
  return o;
}

int
ff_flame_write_folded(const struct ff_flame *fl, FILE *out)
{
  size_t *o = ff_flame_order(fl);

  if (!o)
    return -1;
  for (size_t i = 0; i < fl->stacks.n; i++)
    fprintf(out, "%s %" PRIu64 "\n", fl->stacks.keys[o[i]], fl->counts[o[i]]);
  free(o);
  if (fflush(out) == EOF || ferror(out))
    return ff_error("write folded stacks: %m");
  return 0;
}

int
ff_flame_read_folded(struct ff_flame *fl, FILE *in, const char *path)
{
  char *line = NULL, *sp, *end;
  size_t cap = 0, lineno = 0;
  ssize_t len;
  int rc = 0;

  while (!rc && (len = getline(&line, &cap, in)) >= 0) {
    unsigned long long n;

    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
      line[--len] = '\0';
    if (!len)
      continue;
    sp = strrchr(line, ' ');
    errno = 0;
    n = sp ? strtoull(sp + 1, &end, 10) : 0;
    if (!sp || sp == line || !sp[1] || *end || errno ||
        !isdigit((unsigned char)sp[1])) {
      rc = ff_error("%s:%zu: expected STACK COUNT", path, lineno);
      break;
    }
    if (ff_flame_add_n(fl, line, (size_t)(sp - line), n) < 0)
      rc = ff_error_prefix("%s:%zu: ", path, lineno);
  }
  if (!rc && ferror(in))
    rc = ff_error("%s: read: %m", path);
  free(line);
  return rc;
}

int
ff_flame_save(const struct ff_flame *fl, const char *path)
{
  FILE *f = ff_fopen_write(path, "w");
  int rc;

  if (!f)
    return -1;
  rc = ff_flame_write_folded(fl, f);
  if (fclose(f) == EOF && !rc)
    rc = ff_error("close %s: %m", path);
  if (rc)
    ff_error_prefix("%s: ", path);
  return rc;
}

int
ff_flame_load(struct ff_flame *fl, const char *path)
{
  FILE *f = fopen(path, "re");
  int rc;

  if (!f)
    return ff_error("open %s: %m", path);
  rc = ff_flame_read_folded(fl, f, path);
  fclose(f);
  return rc;
}

/* --- what grew -------------------------------------------------------- */

struct tally {
  struct ff_flame_map names;
  uint64_t (*v)[4]; /* a incl, b incl, a self, b self */
  size_t vcap;
};

static int
tally_add(struct tally *t, const char *f, size_t n, int col, uint64_t c)
{
  int added;
  long k = ff_flame_map_add(&t->names, f, n, &added);

  if (k < 0)
    return -1;
  if ((size_t)k >= t->vcap) {
    size_t cap = t->names.keys_cap;
    uint64_t(*v)[4] = realloc(t->v, cap * sizeof *v);

    if (!v)
      return -1;
    t->v = v;
    t->vcap = cap;
  }
  if (added)
    memset(t->v[k], 0, sizeof t->v[k]);
  t->v[k][col] += c;
  return 0;
}

/* Every stack of fl into column side (0: a, 1: b): each frame once per
 * stack in incl, the leaf in self. */
static int
tally_set(struct tally *t, const struct ff_flame *fl, int side)
{
  for (size_t i = 0; i < fl->stacks.n; i++) {
    const char *st = fl->stacks.keys[i];
    size_t len = strlen(st);

    for (size_t b = 0; b < len;) {
      size_t e = b + strcspn(st + b, ";");
      bool again = false;

      /* Recursion: count a name once per stack. */
      for (size_t p = 0; p < b && !again;) {
        size_t q = p + strcspn(st + p, ";");

        again = q - p == e - b && !memcmp(st + p, st + b, e - b);
        p = q + 1;
      }
      if (!again && tally_add(t, st + b, e - b, side, fl->counts[i]) < 0)
        return -1;
      if (e == len && tally_add(t, st + b, e - b, 2 + side, fl->counts[i]) < 0)
        return -1;
      b = e + 1;
    }
  }
  return 0;
}

static int
by_growth(const void *x, const void *y)
{
  const struct ff_flame_delta *a = x, *b = y;
  double da = a->b_incl - a->a_incl, db = b->b_incl - b->a_incl;

  if (da != db)
    return da > db ? -1 : 1;
  return strcmp(a->name, b->name);
}

void
ff_flame_deltas_free(struct ff_flame_delta *d, size_t n)
{
  for (size_t i = 0; d && i < n; i++)
    free(d[i].name);
  free(d);
}

long
ff_flame_grew(const struct ff_flame *a, const struct ff_flame *b, size_t max,
              struct ff_flame_delta **out)
{
  struct tally t = {0};
  struct ff_flame_delta *d = NULL;
  double ta = a->samples ? (double)a->samples : 1;
  double tb = b->samples ? (double)b->samples : 1;
  size_t n = 0;

  *out = NULL;
  if (tally_set(&t, a, 0) < 0 || tally_set(&t, b, 1) < 0 ||
      !(d = calloc(t.names.n ? t.names.n : 1, sizeof *d)))
    goto oom;
  for (size_t k = 0; k < t.names.n; k++) {
    struct ff_flame_delta e = {NULL, (double)t.v[k][0] / ta,
                               (double)t.v[k][1] / tb, (double)t.v[k][2] / ta,
                               (double)t.v[k][3] / tb};

    if (e.b_incl > e.a_incl) {
      e.name = t.names.keys[k];
      d[n++] = e;
    }
  }
  if (n > 1)
    qsort(d, n, sizeof *d, by_growth);
  if (n > max)
    n = max;
  for (size_t k = 0; k < n; k++)
    if (!(d[k].name = strdup(d[k].name))) {
      ff_flame_deltas_free(d, k);
      d = NULL;
      goto oom;
    }
  ff_flame_map_free(&t.names);
  free(t.v);
  *out = d;
  return (long)n;
oom:
  free(d);
  ff_flame_map_free(&t.names);
  free(t.v);
  return ff_error("out of memory");
}

int
ff_flame_print_grew(const struct ff_flame *a, const struct ff_flame *b,
                    size_t max, FILE *out)
{
  struct ff_flame_delta *d;
  long n = ff_flame_grew(a, b, max, &d);

  if (n < 0)
    return -1;
  fprintf(out, "  %7s %7s %7s %7s %7s  %s\n", "A incl", "B incl", "change",
          "A self", "B self", "frame");
  for (long i = 0; i < n; i++) {
    char name[512];
    char kind = ff_flame_frame_kind(d[i].name, strlen(d[i].name));

    fprintf(
      out, "  %6.2f%% %6.2f%% %+7.2f %6.2f%% %6.2f%%  %s%s\n",
      100 * d[i].a_incl, 100 * d[i].b_incl, 100 * (d[i].b_incl - d[i].a_incl),
      100 * d[i].a_self, 100 * d[i].b_self,
      ff_flame_frame_name(d[i].name, strlen(d[i].name), name, sizeof name),
      kind == 'k'   ? " [kernel]"
      : kind == 'f' ? " [farm]"
                    : "");
  }
  if (!n)
    fputs("  (no frame's share grew)\n", out);
  ff_flame_deltas_free(d, (size_t)n);
  if (ferror(out))
    return ff_error("write: %m");
  return 0;
}
