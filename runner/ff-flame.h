/* fusefarm: where the time goes: `perf script` text folded into stacks,
 * drawn as flame graphs, and two of them compared (docs/report.md,
 * "Where the time goes").
 *
 * INVARIANTS
 *
 * - A set of folded stacks maps a stack, its frames root first joined
 *   by ';' ("lvm;main;lvm_run_command;read_[k]"), to a sample count.
 *   The root frame is the process's command name (comm).  A frame's kind
 *   is in its name's suffix: "_[k]" kernel (perf's [kernel.kallsyms] or
 *   any address >= 0xffff000000000000), "_[f]" the farm (every frame of
 *   the fusefarm daemon's process but its kernel ones), none: user
 *   space of the workload's processes (lvm and its libraries, fio,
 *   mkfs).  A frame with no symbol is named after its object,
 *   "[libc.so.6]", or "[unknown]".  No frame holds ';' or a newline
 *   (replaced by ':' and ' ').
 * - The file form is one "STACK COUNT" line per stack, in byte order of
 *   the stacks, as the folded format others read it: the count is after
 *   the last space.
 * - The layout of a graph is fixed by its stacks: siblings in byte
 *   order of their names, width in proportion to inclusive samples.
 *
 * OWNERSHIP
 *
 * struct ff_flame is opaque; ff_flame_new() makes one, ff_flame_free()
 * frees it and everything it holds.  Inputs are borrowed for the call.
 *
 * ERRORS
 *
 * -1 (or NULL) with one ff_error() message: "perf script line 12: ...",
 * "flame.folded:3: expected STACK COUNT".
 *
 * THREADS
 *
 * None.  A struct ff_flame is used by one thread at a time.
 */
#ifndef FF_FLAME_H
#define FF_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct ff_flame;

/* Which samples of a system-wide recording are the workload's.  All
 * zero: every sample. */
struct ff_flame_filter {
  /* Keep the processes descended from root (by the fork events perf
   * recorded: a process's parent is the one it was forked by), but not
   * root itself nor skip and skip2 and their descendants (the perfs:
   * on-CPU and off-CPU).  0: none. */
  pid_t root, skip, skip2;
  /* Keep this process too, its frames marked as the farm's (the FUSE
   * daemon, which left the runner's tree when it daemonized).  0: none. */
  pid_t farm;
};

struct ff_flame *ff_flame_new(void);
void ff_flame_free(struct ff_flame *fl);

/* Add n samples of stack (frames root first, ';'-joined, suffixes as
 * above).  0, or -1 (out of memory, an empty stack or frame). */
int ff_flame_add(struct ff_flame *fl, const char *stack, uint64_t n);

/* Read the text of `perf script --show-task-events -F
 * comm,pid,tid,ip,sym,dso` (other fields after pid/tid on a header
 * line are ignored) from in, named name in messages, and add the
 * samples flt keeps.  0, or -1 on a read error or a line that is none
 * of a sample header, a frame, a task event or blank. */
int ff_flame_parse_perf(struct ff_flame *fl, FILE *in, const char *name,
                        const struct ff_flame_filter *flt);

/* Off-CPU time (ff-flame-off.c): the text of `perf script --ns
 * --show-task-events --show-lost-events -F
 * comm,pid,tid,time,event,trace,ip,sym,dso` of a `perf record -e
 * sched:sched_switch -g -a`.  A thread flt keeps (by the process on the
 * event's header, as ff_flame_parse_perf) that is switched out while
 * not runnable (prev_state other than R or R+; a dead one's Z or X
 * aside) is blocked from then until it is next switched in (its
 * next_pid); that time is added to the switch-out's stack, rooted at
 * its prev_comm, in microseconds (each stack's nanoseconds, rounded,
 * once at the end: the set's samples are its blocked microseconds).  A
 * switch-out not followed by its switch-in (perf lost it, the text
 * ends, the thread switched out again) is dropped. */
struct ff_flame_off {
  uint64_t events;     /* sched_switch events read */
  uint64_t blocked;    /* kept switch-outs while not runnable */
  uint64_t paired;     /* of them, paired with a switch-in: folded */
  uint64_t unpaired;   /* of them, dropped: no switch-in */
  uint64_t preempted;  /* kept switch-outs while runnable: not counted */
  uint64_t lost;       /* events perf said it lost (PERF_RECORD_LOST) */
  uint64_t blocked_ns; /* the paired ones' time, before rounding */
  uint64_t farm_us;    /* of the set's microseconds, the farm's threads' */
};

/* Read such text from in (named name in messages) into fl, which
 * counts microseconds from then on (ff_flame_set_unit "us"); st (may be
 * NULL) filled.  0, or -1 on a read error or a line that is none of an
 * event header, a frame, a task event or blank, or a sched_switch
 * without its fields. */
int ff_flame_parse_offcpu(struct ff_flame *fl, FILE *in, const char *name,
                          const struct ff_flame_filter *flt,
                          struct ff_flame_off *st);

/* What a count is, in the SVG's words: "samples" (NULL, the default)
 * or "us" (microseconds).  unit is borrowed: a string literal. */
void ff_flame_set_unit(struct ff_flame *fl, const char *unit);
const char *ff_flame_unit(const struct ff_flame *fl);

/* Samples read by ff_flame_parse_perf (kept or not), and the samples in
 * the set (kept ones, and what ff_flame_add added). */
uint64_t ff_flame_seen(const struct ff_flame *fl);
uint64_t ff_flame_samples(const struct ff_flame *fl);
/* Distinct stacks. */
size_t ff_flame_nstacks(const struct ff_flame *fl);

/* Add every stack of from to fl. */
int ff_flame_merge(struct ff_flame *fl, const struct ff_flame *from);

/* The folded file form to out (byte order of stacks); and read it back
 * (adding to fl), path naming it in messages.  0 or -1. */
int ff_flame_write_folded(const struct ff_flame *fl, FILE *out);
int ff_flame_read_folded(struct ff_flame *fl, FILE *in, const char *path);
/* The same on paths (written with ff_fopen_write). */
int ff_flame_save(const struct ff_flame *fl, const char *path);
int ff_flame_load(struct ff_flame *fl, const char *path);

/* What a drawing holds. */
struct ff_flame_svg_info {
  size_t frames;    /* frames drawn (the root "all" one included) */
  size_t hidden;    /* frames narrower than a tenth of a pixel, left out */
  unsigned depth;   /* the deepest stack's frames, root frame included */
  double max_delta; /* a difference graph: the largest change of share
                     * (a fraction) its colours are scaled to */
};

/* Draw fl as an SVG flame graph to out: one <g class="f"> per frame
 * holding a <title> ("NAME (KIND): N samples, P%"), a rect whose width
 * is its share of the graph's width and, where it fits, its name.
 * With base non-NULL, a difference graph: fl's frames coloured by the
 * change of their share from base's (each over its own total; red grew,
 * blue shrank, white the same), the title saying both.  title heads
 * the picture; info (may be NULL) is filled.  0, or -1 (a write
 * error, out of memory). */
int ff_flame_svg(const struct ff_flame *fl, const struct ff_flame *base,
                 const char *title, FILE *out, struct ff_flame_svg_info *info);
int ff_flame_svg_file(const struct ff_flame *fl, const struct ff_flame *base,
                      const char *title, const char *path,
                      struct ff_flame_svg_info *info);

/* One frame name's change between two sets: its inclusive share (the
 * samples with it anywhere on their stack, once per sample, over all
 * samples) and self share (at the top of the stack), in a and b. */
struct ff_flame_delta {
  char *name; /* the frame, suffix included; owned by the array */
  double a_incl, b_incl, a_self, b_self;
};

/* The frames whose inclusive share grew most from a to b, largest
 * change first (ties: by name), at most max of them, only those that
 * grew.  *out is a malloc'd array (ff_flame_deltas_free); the count, or
 * -1. */
long ff_flame_grew(const struct ff_flame *a, const struct ff_flame *b,
                   size_t max, struct ff_flame_delta **out);
void ff_flame_deltas_free(struct ff_flame_delta *d, size_t n);

/* The table of ff_flame_grew(a, b, max) as text, a line per frame under
 * a header: inclusive shares in A and B, the change in percentage points,
 * self shares in A and B, the frame ("[kernel]", "[farm]" after the
 * name of such a frame):
 *     A incl  B incl  change  A self  B self  frame
 *     14.29%  75.00%  +60.71  14.29%  75.00%  label_scan */
int ff_flame_print_grew(const struct ff_flame *a, const struct ff_flame *b,
                        size_t max, FILE *out);

/* A frame's name without its kind suffix, into buf; and its kind: 'k'
 * kernel, 'f' farm, 'u' user. */
const char *ff_flame_frame_name(const char *frame, size_t len, char *buf,
                                size_t bufsize);
char ff_flame_frame_kind(const char *frame, size_t len);

#endif
