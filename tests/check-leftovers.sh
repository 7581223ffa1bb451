#!/usr/bin/env bash
# check-leftovers.sh: did the tests leave anything behind?
#
# usage: tests/check-leftovers.sh snapshot FILE
#        tests/check-leftovers.sh compare FILE
#
# snapshot records what is on the machine now; compare (after the tests)
# lists everything that is there now and was not then, and exits 1 if
# there is any.  tests/run.sh runs it around each ctest pass
# (docs/testing.md).  What is looked at:
#   loop    every attached loop device, with its backing file
#   mount   every mount in this mount namespace (fuse.fusefarm and any
#           other type), with its type and source
#   proc    qemu-system-*, nbdkit and fusefarm processes, and any process
#           carrying FF_LEFTOVER_TAG=<tag> in its environment (see below)
#   state   /run/fusefarm/* (fusefarm attach's default state dirs)
# An item is identified by what would make it a different one (a loop
# device by its number and backing file, a process by its pid and start
# time), so an item that went away and came back as something else counts
# as new.  compare waits up to FF_LEFTOVER_WAIT seconds (default 10) for
# new items to go away (a daemon still saving its overlay after an
# unmount) before it reports them.
#
# Telling the tests' leftovers from other users of the machine:
#   FF_LEFTOVER_SCOPE=DIR  the tests' TMPDIR; an item is the tests' when
#                          its path (loop backing file, mount point, the
#                          mount point a state dir is named after) is
#                          under DIR, or a process's command line names DIR
#   FF_LEFTOVER_TAG=TAG    a value the tests' environment carried; a
#                          process whose environment has it is the tests'
# tests/run.sh sets both for ctest.  Each new item is listed as "[tests]"
# or "[unknown]".  By default every new item is a failure (a CI machine
# runs nothing else).  With FF_LEFTOVER_SHARED=1 (a machine shared with
# other people's tests) only "[tests]" items fail; the others are listed
# and ignored.
#
# Needs python3 and root (other users' /proc/PID/environ).  Exit status:
# 0 nothing new, 1 leftovers, 2 bad usage.
set -euo pipefail

usage() {
  echo "usage: ${0##*/} snapshot FILE | compare FILE" >&2
  exit 2
}
(($# == 2)) || usage
case $1 in
snapshot | compare) ;;
*) usage ;;
esac
command -v python3 >/dev/null ||
  { echo "${0##*/}: python3: command not found (apt-get install python3)" >&2; exit 1; }

exec python3 - "$1" "$2" <<'PY'
import glob
import json
import os
import sys
import time

mode, path = sys.argv[1], sys.argv[2]
scope = os.environ.get("FF_LEFTOVER_SCOPE", "").rstrip("/")
tag = os.environ.get("FF_LEFTOVER_TAG", "")
shared = os.environ.get("FF_LEFTOVER_SHARED", "0") == "1"
wait = float(os.environ.get("FF_LEFTOVER_WAIT", "10"))
PROC_NAMES = ("nbdkit", "fusefarm", "ff-nbdkit")


def read(p, mode="r"):
    try:
        with open(p, mode) as f:
            return f.read()
    except OSError:
        return None


def under(p):
    return bool(scope) and (p == scope or p.startswith(scope + "/"))


def unescape(s):
    # /proc/self/mountinfo escapes space, tab, newline and backslash.
    for a, b in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        s = s.replace(a, b)
    return s


def ancestors():
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        stat = read(f"/proc/{pid}/stat")
        if not stat:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pids


def scan():
    items = {}

    for bf in glob.glob("/sys/block/loop*/loop/backing_file"):
        dev = bf.split("/")[3]
        f = read(bf)
        if f is None:
            continue
        f = f.rstrip("\n")
        back = f[:-len(" (deleted)")] if f.endswith(" (deleted)") else f
        items[f"loop {dev} {f}"] = {
            "kind": "loop", "what": f"/dev/{dev} -> {f}", "ours": under(back),
            "undo": f"losetup -d /dev/{dev}"}

    for line in (read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        f, r = left.split(), right.split()
        mnt = unescape(f[4])
        fstype, src = r[0], unescape(r[1]) if len(r) > 1 else ""
        items[f"mount {f[0]} {mnt}"] = {
            "kind": "mount", "what": f"{mnt} ({fstype}, {src})", "ours": under(mnt),
            "undo": (f"fusermount3 -u {mnt}" if fstype.startswith("fuse")
                     else f"umount {mnt}")}

    skip = ancestors()
    for d in glob.glob("/proc/[0-9]*"):
        pid = int(d[6:])
        if pid in skip:
            continue
        stat = read(f"{d}/stat")
        if not stat:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        start = stat.rsplit(")", 1)[1].split()[19]
        raw = read(f"{d}/cmdline", "rb") or b""
        args = raw.replace(b"\0", b" ").decode(errors="replace").strip()
        env = (read(f"{d}/environ", "rb") or b"").split(b"\0")
        tagged = bool(tag) and f"FF_LEFTOVER_TAG={tag}".encode() in env
        named = comm.startswith("qemu-system") or comm in PROC_NAMES
        if not (named or tagged):
            continue
        if not args:
            continue  # a kernel thread or a process already gone
        items[f"proc {pid} {start}"] = {
            "kind": "proc", "what": f"pid {pid} ({comm}): {args[:200]}",
            "ours": tagged or (bool(scope) and scope in args),
            "undo": f"kill {pid}"}

    for s in glob.glob("/run/fusefarm/*"):
        name = os.path.basename(s)
        items[f"state {name}"] = {
            "kind": "state", "what": s, "ours": under(name.replace("%2F", "/")),
            "undo": f"fusefarm detach {name.replace('%2F', '/')} (or rm -r {s})"}
    return items


if mode == "snapshot":
    items = scan()
    with open(path, "w") as f:
        json.dump(sorted(items), f)
    counts = {}
    for v in items.values():
        counts[v["kind"]] = counts.get(v["kind"], 0) + 1
    print(f"check-leftovers: snapshot of {counts.get('loop', 0)} loop devices, "
          f"{counts.get('mount', 0)} mounts, {counts.get('proc', 0)} qemu/nbdkit/"
          f"fusefarm processes, {counts.get('state', 0)} /run/fusefarm dirs -> {path}")
    sys.exit(0)

try:
    before = set(json.load(open(path)))
except (OSError, ValueError) as e:
    print(f"check-leftovers: {path}: {e} (run snapshot first)", file=sys.stderr)
    sys.exit(2)
deadline = time.monotonic() + wait
while True:
    new = {k: v for k, v in scan().items() if k not in before}
    failing = {k: v for k, v in new.items() if v["ours"] or not shared}
    if not failing or time.monotonic() >= deadline:
        break
    time.sleep(0.5)

ignored = 0
for k in sorted(new, key=lambda k: (new[k]["kind"], k)):
    v = new[k]
    mark = "[tests]" if v["ours"] else "[unknown]"
    if k not in failing:
        # Someone else's, on a shared machine: a few are named, not all.
        ignored += 1
        if ignored > 5:
            continue
    verdict = "" if k in failing else " (ignored: FF_LEFTOVER_SHARED=1)"
    print(f"check-leftovers: new {v['kind']}: {mark} {v['what']}{verdict}",
          file=sys.stderr)
if ignored > 5:
    print(f"check-leftovers: ... and {ignored - 5} more new item(s) not the "
          f"tests' (ignored: FF_LEFTOVER_SHARED=1)", file=sys.stderr)
if failing:
    print(f"check-leftovers: FAIL: {len(failing)} new item(s) after the tests "
          f"(waited {wait:g} s); to clean up:", file=sys.stderr)
    for k in sorted(failing):
        print(f"  {failing[k]['undo']}", file=sys.stderr)
    if not shared and any(not v["ours"] for v in failing.values()):
        print("check-leftovers: items marked [unknown] may belong to someone "
              "else on this machine: FF_LEFTOVER_SHARED=1 ignores them",
              file=sys.stderr)
    sys.exit(1)
print(f"check-leftovers: nothing left behind ({len(new)} new item(s) not the "
      f"tests')" if new else "check-leftovers: nothing left behind")
PY
