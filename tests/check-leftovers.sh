#!/usr/bin/env bash
# check-leftovers.sh: did the tests leave anything behind?
#
# usage: FF_LEFTOVER_SCOPE=DIR [FF_LEFTOVER_TAG=TAG] \
#          tests/check-leftovers.sh snapshot FILE | compare FILE
#
# A test sees only its own world (docs/testing.md "Own world"), and so
# does this check: it fails only on what the tests created, so it passes
# on a machine where other people's farms, loops, mounts and qemus come
# and go.  What belongs to the tests:
#   loop    an attached loop device whose backing file is under the scope
#   mount   a mount whose mount point (or source) is under the scope
#   proc    a process whose environment carries FF_LEFTOVER_TAG=TAG (every
#           process a test starts inherits it, daemons included), whose
#           command line names the scope, or whose working directory is
#           under it
#   created a loop device that `fusefarm attach` created for a backing
#           file under the scope (its FUSEFARM_LOOP_JOURNAL says so) and
#           that still exists, unbound, after the pass: detach deletes the
#           loop devices attach created, so the kernel's loop devices stay
#           as the pass found them.  run.sh sets FUSEFARM_LOOP_JOURNAL for
#           the tests; without it this kind is not checked.  Loop devices
#           others created are never looked at
#   state   a fusefarm attach state dir under the scope (a "loops" file
#           beside an "lvm" directory: attach ran and detach did not), or
#           a /run/fusefarm/* state dir named after a mount point under
#           the scope (the tests always pass --state; this catches one
#           that did not)
#   udev    a /run/udev/rules.d/*fusefarm-*.rules file naming a farm mount
#           under the scope (`fusefarm attach` writes them, detach
#           removes them)
#   dm      a device-mapper device resting on a loop whose backing file
#           is under the scope
#   registry an entry of /run/fusefarm/farms (a `fusefarm run`'s farm that
#           was not torn down) whose scratch dir or mount point is under
#           the scope
# FF_LEFTOVER_SCOPE is the tests' TMPDIR (tests/run.sh makes a fresh one
# and gives it to ctest, so every scratch dir, mount point and loop
# backing file is under it) and FF_LEFTOVER_TAG a word their environment
# carries (run.sh sets both).
#
# snapshot records what is there now; compare (after the tests) lists what
# is new.  A new item of the tests fails the check, with the command that
# would remove it.  A new item that is not the tests' (a qemu, loop, mount
# or fusefarm process of someone else on the machine) is listed as
# information, the first FF_LEFTOVER_SHOW of them (default 5; 0 lists
# all), and never fails it, on any machine.
# An item is identified by what would make it a different one (a loop
# device by its number and backing file, a process by its pid and start
# time), so an item that went away and came back as something else counts
# as new.  compare waits up to FF_LEFTOVER_WAIT seconds (default 10) for
# the tests' new items to go away (a daemon still saving its overlay after
# an unmount) before it reports them.
#
# A loop whose FUSE mount was lazily unmounted shows a backing file of
# "/NAME" and cannot be told apart by its path; the daemon serving it
# still runs and carries the tag, so the check fails on that.
#
# Needs python3 and root (other users' /proc/PID/environ).  Exit status:
# 0 nothing of the tests' left, 1 leftovers, 2 bad usage (also: no
# FF_LEFTOVER_SCOPE).
set -euo pipefail

usage() {
  echo "usage: FF_LEFTOVER_SCOPE=DIR ${0##*/} snapshot FILE | compare FILE" >&2
  exit 2
}
(($# == 2)) || usage
case $1 in
snapshot | compare) ;;
*) usage ;;
esac
[[ ${FF_LEFTOVER_SCOPE:-} == /?* ]] || {
  echo "${0##*/}: FF_LEFTOVER_SCOPE: expected the tests' TMPDIR (an absolute path), got \"${FF_LEFTOVER_SCOPE:-}\"" >&2
  exit 2
}
command -v python3 >/dev/null ||
  { echo "${0##*/}: python3: command not found (apt-get install python3)" >&2; exit 1; }

exec python3 - "$1" "$2" <<'PY'
import glob
import json
import os
import sys
import time

mode, path = sys.argv[1], sys.argv[2]
scope = os.path.realpath(os.environ["FF_LEFTOVER_SCOPE"]).rstrip("/")
tag = os.environ.get("FF_LEFTOVER_TAG", "")
wait = float(os.environ.get("FF_LEFTOVER_WAIT", "10"))
show = int(os.environ.get("FF_LEFTOVER_SHOW", "5") or "5")
PROC_NAMES = ("nbdkit", "fusefarm", "ff-nbdkit")
STATE_DEPTH = 4  # scope/<test scratch>/<...>/state
if "FF_LEFTOVER_SHARED" in os.environ:
    print("check-leftovers: note: FF_LEFTOVER_SHARED is gone: only the tests' "
          "items ever fail the check", file=sys.stderr)


def read(p, mode="r"):
    try:
        with open(p, mode) as f:
            return f.read()
    except OSError:
        return None


def under(p):
    return p == scope or p.startswith(scope + "/")


def names_scope(args):
    """Does a command line name the scope (not a longer sibling of it)?"""
    i = args.find(scope)
    while i >= 0:
        j = i + len(scope)
        if j == len(args) or args[j] in "/ '\"":
            return True
        i = args.find(scope, i + 1)
    return False


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


def state_dirs(mounts):
    """Attach state dirs under the scope, never entering a mount (a FUSE
    mount whose daemon hangs would block the walk)."""
    found = []
    base = scope.count("/")
    for top, dirs, files in os.walk(scope):
        if "loops" in files and "lvm" in dirs:
            found.append(top)
        if top.count("/") - base >= STATE_DEPTH:
            dirs[:] = []
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in mounts]
    return found


def scan():
    items = {}

    # One open per loop device (a glob would list each one's directory:
    # slow with 10,000 loop devices on a loaded machine).
    for dev in os.listdir("/sys/block"):
        if not dev.startswith("loop"):
            continue
        f = read(f"/sys/block/{dev}/loop/backing_file")
        if f is None:
            continue  # not attached
        f = f.rstrip("\n")
        back = f[:-len(" (deleted)")] if f.endswith(" (deleted)") else f
        items[f"loop {dev} {f}"] = {
            "kind": "loop", "what": f"/dev/{dev} -> {f}", "ours": under(back),
            "undo": f"losetup -d /dev/{dev}"}

    # Loop devices a pass's attach created and detach has not deleted
    # (nor found someone else's since: "left").
    journal = os.environ.get("FUSEFARM_LOOP_JOURNAL", "")
    created = {}
    for line in (read(journal) or "").splitlines() if journal else []:
        what, _, rest = line.partition(" ")
        dev, _, back = rest.partition(" ")
        if what == "created" and under(back):
            created[dev] = back
        elif what in ("deleted", "left"):
            created.pop(dev, None)
    for dev, back in created.items():
        name = os.path.basename(dev)
        if not os.path.exists(f"/sys/block/{name}"):
            continue
        if read(f"/sys/block/{name}/loop/backing_file") is not None:
            continue  # bound: the loop check above judges it
        items[f"created {dev} {back}"] = {
            "kind": "created", "ours": True,
            "what": f"{dev} (attach created it for {back}; still there, unbound)",
            "undo": "python3 -c \"import fcntl, os; fcntl.ioctl(os.open("
                    f"'/dev/loop-control', os.O_RDWR), 0x4C81, {name[4:]})\""
                    "  # LOOP_CTL_REMOVE"}

    mounts = set()
    for line in (read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        f, r = left.split(), right.split()
        mnt = unescape(f[4])
        mounts.add(mnt)
        fstype, src = r[0], unescape(r[1]) if len(r) > 1 else ""
        items[f"mount {f[0]} {mnt}"] = {
            "kind": "mount", "what": f"{mnt} ({fstype}, {src})",
            "ours": under(mnt) or under(src),
            "undo": (f"fusermount3 -u {mnt}" if fstype.startswith("fuse")
                     else f"umount {mnt}")}

    skip = ancestors()
    needle = f"FF_LEFTOVER_TAG={tag}".encode()
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
        if not raw:
            continue  # a kernel thread or a process already gone
        args = raw.replace(b"\0", b" ").decode(errors="replace").strip()
        env = (read(f"{d}/environ", "rb") or b"").split(b"\0")
        tagged = bool(tag) and needle in env
        try:
            cwd = os.readlink(f"{d}/cwd")
        except OSError:
            cwd = ""
        ours = tagged or names_scope(args) or under(cwd)
        named = comm.startswith("qemu-system") or comm in PROC_NAMES
        if not (named or ours):
            continue
        items[f"proc {pid} {start}"] = {
            "kind": "proc", "what": f"pid {pid} ({comm}): {args[:200]}",
            "ours": ours, "undo": f"kill {pid}"}

    for s in glob.glob("/run/fusefarm/farms/*"):
        # the registry of `fusefarm run`'s farms (fusefarm/farm-registry.h)
        fields = dict(l.split(" ", 1) for l in (read(s) or "").splitlines()
                      if " " in l)
        items[f"registry {s}"] = {
            "kind": "registry", "what": f"{s} ({fields.get('scratch', '?')})",
            "ours": under(fields.get("scratch", "")) or under(fields.get("mnt", "")),
            "undo": f"fusefarm cleanup --prefix {scope}"}
    for s in glob.glob("/run/fusefarm/*"):
        name = os.path.basename(s)
        if name == "farms":
            continue
        # MNT.save-failed: a daemon's failed save at exit, not yet told
        mnt = name.removesuffix(".save-failed").replace("%2F", "/")
        items[f"state {s}"] = {
            "kind": "state", "what": s, "ours": under(mnt),
            "undo": f"fusefarm detach {mnt} (or rm -r {s})"}
    # udev rules `fusefarm attach` wrote for a farm mounted under the
    # scope ("# mount: MNT" names it), which detach removes.
    for r in glob.glob("/run/udev/rules.d/*fusefarm-*.rules"):
        mnt = ""
        for line in (read(r) or "").splitlines():
            if line.startswith("# mount: "):
                mnt = line[len("# mount: "):]
                break
        items[f"udev {r}"] = {
            "kind": "udev", "what": f"{r} (udev rule for the farm at {mnt})",
            "ours": bool(mnt) and under(mnt),
            "undo": f"fusefarm detach {mnt} (or rm {r}; udevadm control --reload)"}
    # device-mapper devices resting on a loop whose backing file is under
    # the scope (the host's udev activated a farm VG, or a test did)
    for dm in glob.glob("/sys/block/dm-*"):
        name = (read(f"{dm}/dm/name") or "").strip()
        slaves = [os.path.basename(x) for x in glob.glob(f"{dm}/slaves/*")]
        backs = [(read(f"/sys/block/{x}/loop/backing_file") or "").strip()
                 for x in slaves if x.startswith("loop")]
        items[f"dm {name} {os.path.basename(dm)}"] = {
            "kind": "dm", "what": f"/dev/mapper/{name} on {', '.join(slaves)}",
            "ours": any(b and under(b) for b in backs),
            "undo": f"dmsetup remove {name}"}
    if os.path.isdir(scope):
        for s in state_dirs(mounts):
            items[f"state {s}"] = {
                "kind": "state", "what": f"{s} (attach state, not detached)",
                "ours": True, "undo": f"fusefarm detach MNT --state {s}"}
    return items


if mode == "snapshot":
    items = scan()
    with open(path, "w") as f:
        json.dump(sorted(items), f)
    counts = {}
    for v in items.values():
        counts[v["kind"]] = counts.get(v["kind"], 0) + 1
    ours = sum(v["ours"] for v in items.values())
    print(f"check-leftovers: snapshot of {counts.get('loop', 0)} loop devices, "
          f"{counts.get('mount', 0)} mounts, {counts.get('proc', 0)} qemu/nbdkit/"
          f"fusefarm processes, {counts.get('state', 0)} state dirs, "
          f"{counts.get('udev', 0)} fusefarm udev rules, {counts.get('dm', 0)} dm devices "
          f"({ours} in the tests' scope {scope}) -> {path}")
    sys.exit(0)

try:
    before = set(json.load(open(path)))
except (OSError, ValueError) as e:
    print(f"check-leftovers: {path}: {e} (run snapshot first)", file=sys.stderr)
    sys.exit(2)
deadline = time.monotonic() + wait
while True:
    new = {k: v for k, v in scan().items() if k not in before}
    failing = {k: v for k, v in new.items() if v["ours"]}
    if not failing or time.monotonic() >= deadline:
        break
    time.sleep(0.5)

others = sorted((k for k in new if k not in failing),
                key=lambda k: (new[k]["kind"], k))
for k in sorted(failing, key=lambda k: (failing[k]["kind"], k)):
    print(f"check-leftovers: new {failing[k]['kind']}: {failing[k]['what']}",
          file=sys.stderr)
listed = others[:show] if show > 0 else others
for k in listed:
    print(f"check-leftovers: (not the tests', ignored) new {new[k]['kind']}: "
          f"{new[k]['what']}", file=sys.stderr)
if len(others) > len(listed):
    print(f"check-leftovers: (not the tests', ignored) ... and "
          f"{len(others) - len(listed)} more", file=sys.stderr)
if failing:
    print(f"check-leftovers: FAIL: the tests left {len(failing)} item(s) behind "
          f"(scope {scope}, waited {wait:g} s); to clean up:", file=sys.stderr)
    for k in sorted(failing):
        print(f"  {failing[k]['undo']}", file=sys.stderr)
    sys.exit(1)
print(f"check-leftovers: nothing of the tests' left behind (scope {scope}"
      + (f"; {len(others)} new item(s) of others ignored)" if others else ")"))
PY
