/* fuse-uring: what would FUSE over io_uring save the farm's data path?
 *
 * usage: fuse-uring MNT SIZE dev|uring [THREADS]    (SIZE in bytes)
 *        fuse-uring MNT SIZE pt BACKING [THREADS]
 *
 * A FUSE server of one file, MNT/f, SIZE bytes of zeros (direct I/O:
 * every read reaches the server), spoken to the kernel either the way
 * libfuse 3.14 and fusefarm do (THREADS threads, default 8, each reading
 * a request from /dev/fuse and writing its reply) or over io_uring
 * (kernel 6.14+ with /sys/module/fuse/parameters/enable_uring set): one
 * thread per CPU, each with its own ring of entries registered with the
 * kernel (FUSE_IO_URING_CMD_REGISTER), a request arriving as a
 * completion and its reply going back with the next fetch
 * (FUSE_IO_URING_CMD_COMMIT_AND_FETCH).  Both modes answer with the same
 * code; only the transport differs, so the same reads of a loop device
 * over MNT/f, side by side, say what the transport costs
 * (bench/fuse-uring.sh; docs/benchmarks.md, "FUSE over io_uring").
 *
 * pt: /dev/fuse as dev, but f is opened in passthrough (kernel 6.9+,
 * FUSE_PASSTHROUGH): its reads and writes go from the kernel straight to
 * the file BACKING (SIZE bytes; its own bytes, not zeros) and never
 * reach this server; lookups, attributes and opens still do.  What the
 * farm's ideal-profile devices would cost served so.
 *
 * Mounts with mount(2) (root only), prints "ready" on stdout once the
 * kernel takes requests (in uring mode: once every queue is registered),
 * and serves until MNT is unmounted or it gets SIGTERM (then it unmounts
 * MNT itself).  A measuring tool, not a part of the farm: fusefarm mount
 * still speaks /dev/fuse through libfuse.
 *
 * The io_uring side of the kernel's FUSE interface (protocol 7.42) is
 * newer than the headers of Debian 12, so its structures are declared
 * here, as the kernel's include/uapi/linux/fuse.h documents them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include "ff-fuse740.h"

#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- the kernel's io_uring FUSE ABI (7.42) ---------------------------- */

#define URING_FLAG (1ULL << 41) /* FUSE_OVER_IO_URING, in flags2 << 32 */

#define URING_IN_OUT_HEADER_SZ 128
#define URING_OP_IN_OUT_SZ     128

struct uring_ent_in_out {
  uint64_t flags;
  uint64_t commit_id; /* to give back with the reply */
  uint32_t payload_sz;
  uint32_t padding;
  uint64_t reserved;
};

struct uring_req_header {
  char in_out[URING_IN_OUT_HEADER_SZ]; /* fuse_in_header / out_header */
  char op_in[URING_OP_IN_OUT_SZ];      /* the opcode's own header */
  struct uring_ent_in_out ent;
};

enum { URING_CMD_REGISTER = 1, URING_CMD_COMMIT_AND_FETCH = 2 };

struct uring_cmd_req { /* in the SQE's 80-byte command area */
  uint64_t flags;
  uint64_t commit_id;
  uint16_t qid;
  uint8_t padding[6];
};

_Static_assert(sizeof(struct uring_req_header) == 288, "7.42 header");
_Static_assert(sizeof(struct uring_cmd_req) == 24, "7.42 command");

/* ---- the file system: a directory holding f --------------------------- */

#define INO_FILE    2
#define MAX_PAYLOAD (1u << 20)
#define RING_DEPTH  32

static int fusefd = -1;
static uint64_t file_size;
static int backing_id = -1; /* pt: f's backing file, as the kernel knows it */
static const char *mnt;
/* requests served through each transport, printed at SIGTERM */
static _Atomic unsigned long served_dev, served_ring;

static void
die(const char *what)
{
  fprintf(stderr, "fuse-uring: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void
fill_attr(struct fuse_attr *a, uint64_t ino)
{
  memset(a, 0, sizeof *a);
  a->ino = ino;
  a->nlink = ino == INO_FILE ? 1 : 2;
  a->mode = ino == INO_FILE ? S_IFREG | 0644 : S_IFDIR | 0755;
  a->size = ino == INO_FILE ? file_size : 0;
  a->blocks = (a->size + 511) / 512;
  a->blksize = 4096;
}

/* One reply: what the handler leaves for the transport to send. */
struct reply {
  int error; /* 0 or -errno */
  int none;  /* no reply at all (FORGET, INTERRUPT) */
  const void *arg;
  size_t len;
};

static char zeros[MAX_PAYLOAD];

/* The same for both transports: in is the request header, op its
 * opcode's own header, payload the rest (a name, write data). */
static void
handle(const struct fuse_in_header *in, const void *op, const char *payload,
       void *scratch, struct reply *r)
{
  memset(r, 0, sizeof *r);
  switch (in->opcode) {
  case FUSE_LOOKUP: {
    struct fuse_entry_out *e = scratch;

    if (in->nodeid != FUSE_ROOT_ID || strcmp(payload, "f")) {
      r->error = -ENOENT;
      return;
    }
    memset(e, 0, sizeof *e);
    e->nodeid = INO_FILE;
    e->entry_valid = e->attr_valid = 3600;
    fill_attr(&e->attr, INO_FILE);
    r->arg = e;
    r->len = sizeof *e;
    return;
  }
  case FUSE_GETATTR: {
    struct fuse_attr_out *a = scratch;

    memset(a, 0, sizeof *a);
    a->attr_valid = 3600;
    fill_attr(&a->attr, in->nodeid);
    r->arg = a;
    r->len = sizeof *a;
    return;
  }
  case FUSE_OPEN:
  case FUSE_OPENDIR: {
    struct fuse_open_out *o = scratch;

    memset(o, 0, sizeof *o);
    o->open_flags = in->opcode == FUSE_OPEN ? FOPEN_DIRECT_IO : 0;
    if (in->opcode == FUSE_OPEN && backing_id >= 0) {
      /* (7.40's backing_id is 7.38's padding) */
      o->open_flags = FF_FOPEN_PASSTHROUGH;
      o->padding = (uint32_t)backing_id;
    }
    r->arg = o;
    r->len = sizeof *o;
    return;
  }
  case FUSE_READ: {
    const struct fuse_read_in *ri = op;
    uint64_t n = ri->size;

    if (ri->offset >= file_size)
      n = 0;
    else if (n > file_size - ri->offset)
      n = file_size - ri->offset;
    if (n > MAX_PAYLOAD)
      n = MAX_PAYLOAD;
    r->arg = zeros;
    r->len = n;
    return;
  }
  case FUSE_STATFS: {
    struct fuse_statfs_out *s = scratch;

    memset(s, 0, sizeof *s);
    s->st.bsize = s->st.frsize = 4096;
    s->st.namelen = 255;
    r->arg = s;
    r->len = sizeof *s;
    return;
  }
  case FUSE_READDIR: /* empty: nothing but f, found by lookup */
  case FUSE_FLUSH:
  case FUSE_RELEASE:
  case FUSE_RELEASEDIR:
  case FUSE_FSYNC:
  case FUSE_DESTROY:
    return;
  case FUSE_FORGET:
  case FUSE_BATCH_FORGET:
  case FUSE_INTERRUPT:
    r->none = 1;
    return;
  default:
    r->error = -ENOSYS;
    return;
  }
}

/* ---- /dev/fuse: a read, a write ---------------------------------------- */

/* The offset of the name or data after a /dev/fuse request's opcode
 * header (zero: the opcode has none, its first argument is the name). */
static size_t
op_header_size(uint32_t opcode)
{
  switch (opcode) {
  case FUSE_GETATTR:
    return sizeof(struct fuse_getattr_in);
  case FUSE_OPEN:
  case FUSE_OPENDIR:
    return sizeof(struct fuse_open_in);
  case FUSE_READ:
  case FUSE_READDIR:
    return sizeof(struct fuse_read_in);
  default:
    return 0;
  }
}

static void
dev_reply(uint64_t unique, const struct reply *r)
{
  struct fuse_out_header oh = {
    .len = (uint32_t)(sizeof oh + (r->error ? 0 : r->len)),
    .error = r->error,
    .unique = unique,
  };
  struct iovec iov[2] = {{&oh, sizeof oh}, {(void *)r->arg, r->len}};

  if (writev(fusefd, iov, r->error || !r->len ? 1 : 2) < 0 &&
      errno != ENOENT) /* ENOENT: the request was interrupted */
    perror("fuse-uring: writev /dev/fuse");
}

static void *
dev_thread(void *arg)
{
  char *buf = malloc(MAX_PAYLOAD + 4096);
  char scratch[256];

  (void)arg;
  if (!buf)
    die("malloc");
  for (;;) {
    ssize_t n = read(fusefd, buf, MAX_PAYLOAD + 4096);
    const struct fuse_in_header *in = (void *)buf;
    struct reply r;

    if (n < 0) {
      if (errno == EINTR || errno == ENOENT || errno == EAGAIN)
        continue;
      if (errno == ENODEV) /* unmounted */
        exit(0);
      die("read /dev/fuse");
    }
    served_dev++;
    handle(in, in + 1, (const char *)(in + 1) + op_header_size(in->opcode),
           scratch, &r);
    if (!r.none)
      dev_reply(in->unique, &r);
    if (in->opcode == FUSE_DESTROY)
      exit(0);
  }
  return NULL;
}

/* ---- io_uring ---------------------------------------------------------- */

struct ent {
  struct uring_req_header *hdr; /* page-aligned */
  char *payload;                /* MAX_PAYLOAD */
  struct iovec iov[2];
};

struct queue {
  int qid;
  struct io_uring ring;
  struct ent ent[RING_DEPTH];
  pthread_t tid;
};

static int nqueues;
static struct queue *queues;
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static int nready;

static void
prep_cmd(struct queue *q, struct ent *e, uint32_t op, uint64_t commit_id)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
  struct uring_cmd_req *cmd;

  if (!sqe) {
    fprintf(stderr, "fuse-uring: queue %d: no SQE free\n", q->qid);
    exit(1);
  }
  memset(sqe, 0, 128); /* SQE128 */
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = fusefd;
  sqe->cmd_op = op;
  if (op == URING_CMD_REGISTER) {
    sqe->addr = (uint64_t)(uintptr_t)e->iov;
    sqe->len = 2;
  }
  io_uring_sqe_set_data(sqe, e);
  cmd = (struct uring_cmd_req *)sqe->cmd;
  cmd->qid = (uint16_t)q->qid;
  cmd->commit_id = commit_id;
}

/* A request in e's buffers: answer it into the same buffers and fetch
 * the next one with the same command. */
static void
uring_serve(struct queue *q, struct ent *e)
{
  const struct fuse_in_header *in = (const void *)e->hdr->in_out;
  uint64_t commit_id = e->hdr->ent.commit_id;
  char scratch[256];
  struct reply r;
  struct fuse_out_header *oh = (void *)e->hdr->in_out;
  uint64_t unique = in->unique;

  e->payload[e->hdr->ent.payload_sz < MAX_PAYLOAD ? e->hdr->ent.payload_sz
                                                  : MAX_PAYLOAD - 1] = 0;
  served_ring++;
  handle(in, e->hdr->op_in, e->payload, scratch, &r);
  if (r.len && !r.error && r.arg != e->payload)
    memcpy(e->payload, r.arg, r.len);
  e->hdr->ent.payload_sz = r.error ? 0 : (uint32_t)r.len;
  memset(oh, 0, sizeof *oh);
  oh->error = r.error;
  oh->unique = unique;
  oh->len = (uint32_t)(sizeof *oh + e->hdr->ent.payload_sz);
  prep_cmd(q, e, URING_CMD_COMMIT_AND_FETCH, commit_id);
}

static void *
uring_thread(void *arg)
{
  struct queue *q = arg;
  struct io_uring_params p = {.flags =
                                IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE,
                              .cq_entries = 2 * RING_DEPTH};
  cpu_set_t set;
  int rc;

  CPU_ZERO(&set);
  CPU_SET(q->qid, &set);
  sched_setaffinity(0, sizeof set, &set); /* best effort: offline CPUs */
  rc = io_uring_queue_init_params(RING_DEPTH, &q->ring, &p);
  if (rc < 0) {
    errno = -rc;
    die("io_uring_queue_init_params");
  }
  for (int i = 0; i < RING_DEPTH; i++) {
    struct ent *e = &q->ent[i];

    if (posix_memalign((void **)&e->hdr, 4096, 4096) ||
        posix_memalign((void **)&e->payload, 4096, MAX_PAYLOAD))
      die("posix_memalign");
    memset(e->hdr, 0, 4096);
    e->iov[0] = (struct iovec){e->hdr, sizeof *e->hdr};
    e->iov[1] = (struct iovec){e->payload, MAX_PAYLOAD};
    prep_cmd(q, e, URING_CMD_REGISTER, 0);
  }
  rc = io_uring_submit(&q->ring);
  if (rc != RING_DEPTH) {
    errno = rc < 0 ? -rc : EIO;
    die("io_uring_submit (register)");
  }
  pthread_mutex_lock(&ready_lock);
  nready++;
  pthread_cond_broadcast(&ready_cond);
  pthread_mutex_unlock(&ready_lock);
  for (;;) {
    struct io_uring_cqe *cqe;
    unsigned head, n = 0;

    rc = io_uring_wait_cqe(&q->ring, &cqe);
    if (rc == -EINTR)
      continue;
    if (rc < 0) {
      errno = -rc;
      die("io_uring_wait_cqe");
    }
    io_uring_for_each_cqe(&q->ring, head, cqe)
    {
      struct ent *e = io_uring_cqe_get_data(cqe);

      n++;
      if (cqe->res == -ENOTCONN || cqe->res == -ENODEV)
        exit(0); /* unmounted */
      if (cqe->res < 0) {
        fprintf(stderr, "fuse-uring: queue %d: command failed: %s\n", q->qid,
                strerror(-cqe->res));
        exit(1);
      }
      uring_serve(q, e);
    }
    io_uring_cq_advance(&q->ring, n);
    io_uring_submit(&q->ring);
  }
  return NULL;
}

/* ---- setup ---------------------------------------------------------------
 */

static void
on_term(int sig)
{
  char msg[128];
  int n;

  (void)sig;
  n = snprintf(msg, sizeof msg,
               "fuse-uring: served %lu requests from "
               "/dev/fuse, %lu from the rings\n",
               (unsigned long)served_dev, (unsigned long)served_ring);
  if (n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0)
    n = 0;
  umount2(mnt, MNT_DETACH);
  _exit(0);
}

/* Read FUSE_INIT and answer it, asking for io_uring or passthrough when
 * wanted.  Returns whether the kernel offered what was wanted. */
static int
do_init(int want_uring, int want_pt)
{
  char *buf = malloc(MAX_PAYLOAD + 4096);
  struct fuse_in_header *in = (void *)buf;
  const struct fuse_init_in *ii = (const void *)(in + 1);
  struct fuse_init_out out;
  uint64_t kflags;
  ssize_t n;
  struct reply r = {.arg = &out, .len = sizeof out};

  if (!buf)
    die("malloc");
  do
    n = read(fusefd, buf, MAX_PAYLOAD + 4096);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    die("read FUSE_INIT");
  if (in->opcode != FUSE_INIT) {
    fprintf(stderr, "fuse-uring: expected FUSE_INIT, got opcode %u\n",
            in->opcode);
    exit(1);
  }
  kflags =
    ii->flags | ((ii->flags & FUSE_INIT_EXT) ? (uint64_t)ii->flags2 << 32 : 0);
  memset(&out, 0, sizeof out);
  out.major = FUSE_KERNEL_VERSION;
  out.minor = ii->minor < 42 ? ii->minor : 42;
  out.max_readahead = ii->max_readahead;
  out.flags = (uint32_t)(kflags & (FUSE_ASYNC_READ | FUSE_ASYNC_DIO |
                                   FUSE_MAX_PAGES | FUSE_INIT_EXT));
  if (want_uring && (kflags & URING_FLAG))
    out.flags2 = (uint32_t)(URING_FLAG >> 32);
  if (want_pt && (kflags & FF_FUSE_PASSTHROUGH)) {
    out.flags2 |= (uint32_t)(FF_FUSE_PASSTHROUGH >> 32);
    out.unused[0] = 1; /* 7.40's max_stack_depth: over a plain file system */
  }
  out.max_background = 1024;
  out.congestion_threshold = 768;
  out.max_write = MAX_PAYLOAD;
  out.time_gran = 1;
  out.max_pages = MAX_PAYLOAD / 4096;
  dev_reply(in->unique, &r);
  free(buf);
  return (kflags & (want_pt ? FF_FUSE_PASSTHROUGH : URING_FLAG)) != 0;
}

int
main(int argc, char **argv)
{
  char opts[256];
  int uring, pt, threads = 8, targ = 4;
  const char *backing = NULL;
  pthread_t t;

  pt = argc >= 5 && !strcmp(argv[3], "pt");
  if (pt)
    backing = argv[targ++];
  if (argc < 4 || argc > targ + 1 ||
      (strcmp(argv[3], "dev") && strcmp(argv[3], "uring") && !pt)) {
    fprintf(stderr, "usage: fuse-uring MNT SIZE dev|uring [THREADS]\n"
                    "       fuse-uring MNT SIZE pt BACKING [THREADS]\n");
    return 2;
  }
  mnt = argv[1];
  {
    char *end;

    errno = 0;
    file_size = strtoull(argv[2], &end, 0);
    if (errno || *end || end == argv[2]) {
      fprintf(stderr, "fuse-uring: SIZE %s: not a number of bytes\n", argv[2]);
      return 2;
    }
  }
  uring = !strcmp(argv[3], "uring");
  if (argc == targ + 1)
    threads = atoi(argv[targ]);
  if (threads < 1 || threads > 256 || file_size == 0) {
    fprintf(stderr, "fuse-uring: SIZE must be > 0, THREADS 1..256\n");
    return 2;
  }
  fusefd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fusefd < 0)
    die("open /dev/fuse");
  snprintf(opts, sizeof opts,
           "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fusefd);
  if (mount("fuse-uring", mnt, "fuse", MS_NOSUID | MS_NODEV, opts) < 0)
    die("mount");
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  if (uring && !do_init(1, 0)) {
    fprintf(stderr, "fuse-uring: the kernel does not offer FUSE over "
                    "io_uring (kernel 6.14+, and "
                    "/sys/module/fuse/parameters/enable_uring = Y)\n");
    umount2(mnt, MNT_DETACH);
    return 1;
  }
  if (pt) {
    struct ff_fuse_backing_map map = {.fd = open(backing, O_RDWR | O_CLOEXEC)};

    if (map.fd < 0)
      die(backing);
    if (!do_init(0, 1)) {
      fprintf(stderr, "fuse-uring: the kernel does not offer FUSE "
                      "passthrough (6.9+, CONFIG_FUSE_PASSTHROUGH)\n");
      umount2(mnt, MNT_DETACH);
      return 1;
    }
    backing_id = ioctl(fusefd, FF_FUSE_DEV_IOC_BACKING_OPEN, &map);
    if (backing_id < 0)
      die("FUSE_DEV_IOC_BACKING_OPEN");
    close(map.fd); /* the kernel holds it now */
  } else if (!uring)
    do_init(0, 0);
  if (uring) {
    nqueues = get_nprocs_conf();
    queues = calloc((size_t)nqueues, sizeof *queues);
    if (!queues)
      die("calloc");
    for (int i = 0; i < nqueues; i++) {
      queues[i].qid = i;
      if (pthread_create(&queues[i].tid, NULL, uring_thread, &queues[i]))
        die("pthread_create");
    }
    pthread_mutex_lock(&ready_lock);
    while (nready < nqueues)
      pthread_cond_wait(&ready_cond, &ready_lock);
    pthread_mutex_unlock(&ready_lock);
    threads = 1; /* /dev/fuse: what does not go through the rings */
  }
  for (int i = 1; i < threads; i++)
    if (pthread_create(&t, NULL, dev_thread, NULL))
      die("pthread_create");
  printf("ready\n");
  fflush(stdout);
  dev_thread(NULL);
  return 0;
}
