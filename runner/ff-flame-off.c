/* fusefarm: off-CPU time from `perf script` text of sched_switch events
 * (ff-flame.h, ff_flame_parse_offcpu): each kept thread's switch-out
 * while not runnable paired with its next switch-in, the time between
 * folded by the switch-out's stack.  No threads.
 */
#include "ff-flame.h"
#include "ff-flame-int.h"
#include "ff-error.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A thread switched out while blocked: since when, on which stack (an
 * index into struct off's stacks; -1: none pending). */
struct pend {
  pid_t tid; /* 0: an empty slot */
  uint64_t t;
  long stack;
};

struct off {
  struct ff_flame_map stacks; /* interned switch-out stacks */
  uint64_t *ns;               /* [stacks.n] blocked nanoseconds */
  size_t ns_cap;
  struct pend *p; /* open addressing by tid, never deleted */
  size_t pcap, pn;
  struct ff_flame_off st;
};

static struct pend *
pend_find(struct off *o, pid_t tid, bool add)
{
  size_t i;

  if (add && (o->pn + 1) * 2 > o->pcap) {
    size_t cap = o->pcap ? o->pcap * 2 : 256;
    struct pend *p = calloc(cap, sizeof *p);

    if (!p)
      return NULL;
    for (size_t j = 0; j < o->pcap; j++) {
      if (!o->p[j].tid)
        continue;
      for (i = (size_t)o->p[j].tid * 2654435761u & (cap - 1); p[i].tid;
           i = (i + 1) & (cap - 1))
        ;
      p[i] = o->p[j];
    }
    free(o->p);
    o->p = p;
    o->pcap = cap;
  }
  if (!o->pcap)
    return NULL;
  for (i = (size_t)tid * 2654435761u & (o->pcap - 1); o->p[i].tid;
       i = (i + 1) & (o->pcap - 1))
    if (o->p[i].tid == tid)
      return &o->p[i];
  if (!add)
    return NULL;
  o->p[i].tid = tid;
  o->p[i].stack = -1;
  o->pn++;
  return &o->p[i];
}

/* The fields of one sched_switch event. */
struct sw {
  uint64_t t; /* nanoseconds */
  pid_t pid;  /* the header's process (prev's), -1 or 0: unknown */
  pid_t prev_pid, next_pid;
  char state[16]; /* prev_state */
};

/* "12345.678901234" (up to 9 decimals) as nanoseconds; -1 if not. */
static int
parse_time(const char *s, size_t n, uint64_t *t)
{
  uint64_t sec = 0, frac = 0;
  size_t i = 0, d = 0;

  for (; i < n && isdigit((unsigned char)s[i]); i++)
    sec = sec * 10 + (uint64_t)(s[i] - '0');
  if (!i || i == n || s[i] != '.')
    return -1;
  for (i++; i < n && isdigit((unsigned char)s[i]) && d < 9; i++, d++)
    frac = frac * 10 + (uint64_t)(s[i] - '0');
  if (i != n || !d)
    return -1;
  for (; d < 9; d++)
    frac *= 10;
  *t = sec * 1000000000ULL + frac;
  return 0;
}

/* An integer field "KEY=N" of the trace text. */
static int
int_field(const char *trace, const char *key, pid_t *v)
{
  const char *p = strstr(trace, key);
  char *end;
  long n;

  if (!p)
    return -1;
  p += strlen(key);
  errno = 0;
  n = strtol(p, &end, 10);
  if (end == p || errno || (*end && *end != ' '))
    return -1;
  *v = (pid_t)n;
  return 0;
}

/* The header "COMM PID/TID TIME: sched:sched_switch: prev_comm=C
 * prev_pid=N prev_prio=N prev_state=S ==> next_comm=C next_pid=N
 * next_prio=N" into w and s->comm (prev_comm); 1 when it is another
 * event, 0, or -1. */
static int
parse_header(char *line, struct sw *w, struct ff_flame_sample *s)
{
  char *ev = strstr(line, " sched:sched_switch:"), *tr, *c, *ce, *q;
  const char *tt, *at;
  size_t n;

  if (!ev)
    return 1;
  tr = ev + strlen(" sched:sched_switch:");
  /* the time, "TIME:", just before the event */
  q = ev;
  while (q > line && q[-1] == ' ')
    q--;
  if (q == line || q[-1] != ':')
    return -1;
  tt = q - 1;
  while (tt > line && tt[-1] != ' ' && tt[-1] != '\t')
    tt--;
  if (parse_time(tt, (size_t)(q - 1 - tt), &w->t) < 0)
    return -1;
  /* the header's PID/TID, before the time */
  line[tt - line] = '\0';
  w->pid = 0;
  at = ff_flame_pid_tid(line, &w->pid);
  if (!at)
    return -1;
  /* prev_comm: up to " prev_pid=" (a comm may hold spaces) */
  if (!(c = strstr(tr, "prev_comm=")) || !(ce = strstr(c, " prev_pid=")))
    return -1;
  c += strlen("prev_comm=");
  s->comm.len = 0;
  ff_flame_add_clean(&s->comm, c, (size_t)(ce - c));
  if (int_field(ce, " prev_pid=", &w->prev_pid) < 0)
    return -1;
  if (!(q = strstr(ce, " prev_state=")))
    return -1;
  q += strlen(" prev_state=");
  n = strcspn(q, " ");
  if (!n || n >= sizeof w->state)
    return -1;
  memcpy(w->state, q, n);
  w->state[n] = '\0';
  /* next_pid: its last " next_pid=" (next_comm may hold anything) */
  if (!(c = strstr(q, " ==> next_comm=")))
    return -1;
  for (ce = NULL; (c = strstr(c + 1, " next_pid=")); ce = c)
    ;
  if (!ce || int_field(ce, " next_pid=", &w->next_pid) < 0)
    return -1;
  return 0;
}

/* The event read: its switch-in ends next_pid's wait, its switch-out
 * (kept, blocked) starts prev_pid's. */
static int
event(struct off *o, const struct sw *w, struct ff_flame_sample *s)
{
  struct pend *p;
  struct ff_sb st = {0};
  int added;
  long k;

  o->st.events++;
  if (w->next_pid > 0 && (p = pend_find(o, w->next_pid, false)) &&
      p->stack >= 0) {
    if (w->t >= p->t) {
      o->ns[p->stack] += w->t - p->t;
      o->st.blocked_ns += w->t - p->t;
      o->st.paired++;
    } else {
      o->st.unpaired++;
    }
    p->stack = -1;
  }
  if (w->prev_pid <= 0)
    return 0;
  if ((p = pend_find(o, w->prev_pid, false)) && p->stack >= 0) {
    /* switched out twice: its switch-in was lost */
    o->st.unpaired++;
    p->stack = -1;
  }
  if (!s->keep)
    return 0;
  if (w->state[0] == 'R') {
    o->st.preempted++;
    return 0;
  }
  if (w->state[0] == 'Z' || w->state[0] == 'X')
    return 0; /* dead: never switched in again */
  if (ff_flame_sample_stack(s, &st) < 0)
    return -1;
  k = ff_flame_map_add(&o->stacks, st.buf, st.len, &added);
  ff_sb_release(&st);
  if (k < 0)
    return ff_error("out of memory");
  if (added && o->stacks.n > o->ns_cap) {
    size_t cap = o->stacks.keys_cap;
    uint64_t *ns = realloc(o->ns, cap * sizeof *ns);

    if (!ns)
      return ff_error("out of memory");
    o->ns = ns;
    o->ns_cap = cap;
  }
  if (added)
    o->ns[k] = 0;
  if (!(p = pend_find(o, w->prev_pid, true)))
    return ff_error("out of memory");
  p->t = w->t;
  p->stack = k;
  o->st.blocked++;
  return 0;
}

int
ff_flame_parse_offcpu(struct ff_flame *fl, FILE *in, const char *name,
                      const struct ff_flame_filter *flt,
                      struct ff_flame_off *stats)
{
  static const struct ff_flame_filter all;
  struct ff_flame_pids parents = {0};
  struct ff_flame_sample s = {0};
  struct off o = {0};
  struct sw w = {0};
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  ssize_t len;
  bool skip = false;
  int rc = 0;

  if (!flt)
    flt = &all;
  ff_flame_set_unit(fl, "us");
  errno = 0;
  while (!rc && (len = getline(&line, &cap, in)) >= 0) {
    const char *ev;
    bool blank;
    int h;

    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
      line[--len] = '\0';
    blank = strspn(line, " \t") == (size_t)len;
    if (!blank && (line[0] == ' ' || line[0] == '\t')) {
      if (skip)
        ; /* another event's frame */
      else if (!s.open)
        rc = ff_error("%s line %zu: a frame outside an event", name, lineno);
      else if (ff_flame_parse_frame(&s, line) < 0)
        rc = ff_error("%s line %zu: expected ADDRESS SYMBOL (OBJECT), got "
                      "'%.80s'",
                      name, lineno, line);
      continue;
    }
    /* a blank line or a header: the open event is complete */
    skip = false;
    if (s.open) {
      s.open = false;
      if ((rc = event(&o, &w, &s)) < 0)
        break;
    }
    if (blank)
      continue;
    if ((ev = strstr(line, "PERF_RECORD_"))) {
      int c, ct, p, pt;
      unsigned long long n;
      const char *l;
      struct pend *pe;

      if (!strncmp(ev, "PERF_RECORD_FORK(", 17) &&
          sscanf(ev + 17, "%d:%d):(%d:%d)", &c, &ct, &p, &pt) == 4 && c != p &&
          ff_flame_pid_set(&parents, c, p) < 0)
        rc = ff_error("out of memory");
      else if (!strncmp(ev, "PERF_RECORD_EXIT(", 17) &&
               sscanf(ev + 17, "%d:%d)", &c, &ct) == 2 && ct > 0 &&
               (pe = pend_find(&o, ct, false)) && pe->stack >= 0) {
        o.st.unpaired++;
        pe->stack = -1;
      } else if (!strncmp(ev, "PERF_RECORD_LOST", 16) &&
                 (l = strstr(ev, " lost ")) && sscanf(l + 6, "%llu", &n) == 1)
        o.st.lost += n;
      continue;
    }
    memset(&w, 0, sizeof w);
    h = parse_header(line, &w, &s);
    if (h < 0) {
      rc = ff_error("%s line %zu: expected COMM PID/TID TIME: "
                    "sched:sched_switch: prev_comm=.. prev_pid=.. "
                    "prev_state=.. ==> next_comm=.. next_pid=..",
                    name, lineno);
      break;
    }
    if (h > 0) { /* another event: its frames are skipped */
      if (!ff_flame_pid_tid(line, &w.pid)) {
        rc = ff_error("%s line %zu: expected COMM PID/TID, got '%.80s'", name,
                      lineno, line);
        break;
      }
      skip = true;
      continue;
    }
    if (w.pid <= 0)
      w.pid = w.prev_pid; /* perf 6.1's "-1/-1": the thread's own */
    s.open = true;
    s.keep = ff_flame_keeps(flt, &parents, w.pid, &s.farm);
    s.nframes = 0;
    s.frames.len = 0;
  }
  if (!rc && ferror(in))
    rc = ff_error("%s: read: %m", name);
  if (!rc && s.open)
    rc = event(&o, &w, &s);
  if (!rc && (ff_sb_failed(&s.comm) || ff_sb_failed(&s.frames)))
    rc = ff_error("out of memory");
  /* Switch-outs never switched in: dropped. */
  for (size_t i = 0; i < o.pcap; i++)
    if (o.p[i].tid && o.p[i].stack >= 0)
      o.st.unpaired++;
  for (size_t i = 0; !rc && i < o.stacks.n; i++) {
    uint64_t us = (o.ns[i] + 500) / 1000;

    size_t root = strcspn(o.stacks.keys[i], ";");

    /* The farm daemon's threads block mostly idle (a worker waiting for
     * the next request): counted apart, not in the graph, whose time is
     * then the workload's own waiting. */
    if (ff_flame_frame_kind(o.stacks.keys[i], root) == 'f')
      o.st.farm_us += us;
    else if (us)
      rc = ff_flame_add_n(fl, o.stacks.keys[i], strlen(o.stacks.keys[i]), us);
  }
  fl->seen += o.st.events;
  if (stats)
    *stats = o.st;
  ff_sb_release(&s.comm);
  ff_sb_release(&s.frames);
  ff_flame_pids_free(&parents);
  ff_flame_map_free(&o.stacks);
  free(o.ns);
  free(o.p);
  free(line);
  return rc;
}
