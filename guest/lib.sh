# shellcheck shell=bash
#
# guest/lib.sh: what run-initramfs.sh, run-systemd.sh and
# run-hosttier.sh share, and the size and time reports of the image
# builds (build-initramfs.sh, build-rootfs.sh, prepare.sh) and the pruning
# of old images, which does not change an image.  Source it after
# defining say() and die() and the variables each function names.  The
# image builds' cache keys hash their own scripts, not this file: only
# reporting, pruning and guest_copy_libs (which the layers that use it
# hash themselves) belong here.

# guest_prune DIR PREFIX OUT FILE: besides OUT, keep the newest older
# image directory DIR/PREFIX* that holds FILE (a run started just before
# may still read it) and remove the rest; FF_GUEST_KEEP_OLD=1 keeps all.
# (build-initramfs.sh and build-rootfs.sh keep their own copies: their
# cache keys hash the scripts, and a change would rebuild every cache.)
guest_prune() {
  local old kept=""
  [ "${FF_GUEST_KEEP_OLD:-0}" != 1 ] || return 0
  while read -r old; do
    if [ "$old" = "$3" ] || [ ! -f "$old/$4" ]; then continue; fi
    if [ -n "$kept" ]; then say "removing the old $old"; rm -rf "$old"; fi
    kept=1
  done < <(ls -1dt "$1/$2"*/ 2>/dev/null | sed 's|/$||')
}

# guest_copy_libs ROOT BIN...: copy every library `ldd` lists for the
# BINs into ROOT, each at its own path under usr/ (/lib/... as
# /usr/lib/...: the guest's root is merged-/usr); print how many.  The
# layers that use it hash this function into their cache keys.
guest_copy_libs() {
  local root=$1 lib rel n=0
  shift
  while read -r lib; do
    rel=usr/${lib#/usr/}
    mkdir -p "$root/$(dirname "$rel")"
    cp -L "$lib" "$root/$rel"
    n=$((n + 1))
  done < <(ldd "$@" 2>/dev/null | awk '/=> \// { print $3 }' | sed 's|^/lib/|/usr/lib/|' | sort -u)
  echo "$n"
}

# guest_mib BYTES: BYTES in MiB, one decimal ("23.4 MiB").
guest_mib() {
  awk -v b="${1:-0}" 'BEGIN { printf "%.1f MiB", b / 1048576 }'
}

# guest_disk_usage PATH: the space PATH takes on disk (sparse files count
# what they allocate), in MiB.
guest_disk_usage() {
  guest_mib "$(du -s --block-size=1 "$1" 2>/dev/null | cut -f1)"
}

# guest_download_text DIR: what building the image in DIR downloaded, from
# its "download" file ("PACKAGES BYTES"): "N packages, X MiB".
guest_download_text() {
  local n b
  read -r n b 2>/dev/null <"$1/download" || { echo "not recorded"; return 0; }
  echo "$n packages, $(guest_mib "$b")"
}

# guest_require FILE... -- TOOL:PACKAGE...: every FILE exists (the
# program, plugin and in-guest binaries this run uses) and every TOOL is
# on PATH; else die naming it and what to do.
guest_require() {
  local t
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    [ -e "$1" ] || die "$1 not found (cmake --build the build tree, or --build/--fusefarm/--plugin)"
    shift
  done
  [ $# -eq 0 ] || shift
  for t in "$@"; do
    command -v "${t%%:*}" >/dev/null || die "${t%%:*} not found (apt-get install ${t#*:})"
  done
}

# guest_run_dir TEMPLATE: make the run directory ($run) and install the
# cleanup that stops every process in $pids (TERM, KILL after 5 s) and
# removes $run unless $keep is 1.
guest_run_dir() {
  run=$(mktemp -d "$1")
  pids=()
  trap guest_cleanup EXIT
  trap 'say "error: interrupted: stopping qemu and nbdkit"; exit 130' INT TERM
}

guest_cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [ "$keep" = 1 ]; then say "kept $run"; else rm -rf "$run"; fi
}

now() { date +%s.%N; }
since() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(now)"; }

# guest_manifest: the farm's manifest, scaled to about $fdevices devices
# when that is not 0 (as the plugin's devices= serves it), into
# $run/manifest-full.json.
guest_manifest() {
  [[ $fdevices =~ ^[0-9]+$ ]] || die "--devices $fdevices: expected a number"
  local scale=()
  [ "$fdevices" = 0 ] || scale=(--devices "$fdevices")
  "$ff" manifest "$spec" "${scale[@]}" >"$run/manifest-full.json" ||
    die "fusefarm manifest $spec failed"
}

# guest_serve: raise the fd limit (nbdkit checks 2 per export it serves,
# the whole farm of $run/manifest-full.json even when --disks attaches
# fewer; qemu holds one socket per attached disk), start nbdkit with
# $plugin spec=$spec (and $profile, and devices=$fdevices when set) on
# $run/nbd.sock, or with $serve_port set on that TCP port of 127.0.0.1
# (the guest's kernel nbd client, over slirp); with $stats_file set, the
# plugin writes its stats there every 50 ms (ff-snap.py reads them).
# Sets sock, popt.  nbdkit runs --threads 1: each disk has one request
# in flight, as a VM disk on its own connection; FF_NBD_THREADS=N lets
# the client keep up to N per disk in flight (qemu's nbd client sends up
# to 16), as a disk with a deeper queue.
guest_serve() {
  local nexp need
  nexp=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["devices"]))' \
    "$run/manifest-full.json")
  need=$((2 * (nexp > ndisks ? nexp : ndisks) + 256))
  ulimit -n "$need" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  [ "$(ulimit -n)" -ge $((need - 192)) ] ||
    die "ulimit -n is $(ulimit -n): $nexp exports and $ndisks disks need $((need - 192))"
  sock=$run/nbd.sock
  popt=()
  [ -z "$profile" ] || popt=(profile="$(realpath "$profile")")
  [ "${fdevices:-0}" = 0 ] || popt+=(devices="$fdevices")
  local sopt=()
  [ -z "${stats_file:-}" ] || sopt=(stats="$stats_file" stats-interval=50ms)
  local listen=(-U "$sock")
  # TCP: nbdkit writes the pid file once it listens (guest_wait_socket)
  [ -z "${serve_port:-}" ] || listen=(-i 127.0.0.1 -p "$serve_port" -P "$run/nbdkit.pid")
  nbdkit -f --exit-with-parent --threads "${FF_NBD_THREADS:-1}" "${listen[@]}" "$plugin" spec="$spec" "${popt[@]}" \
    "${sopt[@]}" 2>"$run/nbdkit.log" &
  nbdkit_pid=$!
  pids+=($!)
}

# peak_rss: the largest VmHWM (MiB) seen so far of qemu ($qpid) and of the
# nbdkit serving the disks ($nbdkit_pid), in rss_qemu and rss_nbdkit.
rss_qemu=0 rss_nbdkit=0
peak_rss() {
  local v
  v=$(awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/${qpid:-0}/status" 2>/dev/null) &&
    [ -n "$v" ] && [ "$v" -gt "$rss_qemu" ] && rss_qemu=$v
  v=$(awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/${nbdkit_pid:-0}/status" 2>/dev/null) &&
    [ -n "$v" ] && [ "$v" -gt "$rss_nbdkit" ] && rss_nbdkit=$v
  return 0
}

# guest memory: FF_GUEST_MEM (qemu -m syntax), default 2G
mem=${FF_GUEST_MEM:-2G}

guest_wait_socket() {
  local ready=(-S "$sock")
  [ -z "${serve_port:-}" ] || ready=(-s "$run/nbdkit.pid")
  for _ in $(seq 100); do [ "${ready[@]}" ] && break; sleep 0.1; done
  [ "${ready[@]}" ] || { cat "$run/nbdkit.log" >&2; die "nbdkit did not start"; }
}

# guest_accel: KVM when a real one is there, TCG otherwise (/dev/kvm may
# be PVM, which a stock kernel cannot run under).  Sets accel (qemu
# arguments), accel_name and why, and says which.
guest_accel() {
  accel=(-accel tcg,thread=multi -cpu max) accel_name=tcg why="no /dev/kvm"
  if [ -e /dev/kvm ]; then
    if [ -d /sys/module/kvm_pvm ]; then why="/dev/kvm is PVM (kvm_pvm)"
    elif ! grep -qwE 'vmx|svm' /proc/cpuinfo; then why="no VMX/SVM"
    elif [ ! -w /dev/kvm ]; then why="/dev/kvm not writable"
    else accel=(-enable-kvm -cpu host) accel_name=kvm why="real KVM"
    fi
  fi
  say "accelerator: $accel_name ($why)"
}

# guest_disk_args: append to args one virtio-scsi controller per 256
# disks and one NBD-backed scsi-hd per device in $devices (serial = its
# farm name), all served over $sock.  The disks tell the guest what the
# server says of their medium (nbdinfo's is_rotational, the profile's
# `rotational`): rotation_rate 1 (the guest's queue/rotational 0) or 7200
# (1); qemu's NBD client does not pass it on by itself.
guest_disk_args() {
  local c i n rot rate=""
  if command -v nbdinfo >/dev/null; then
    rot=$(nbdinfo --json "nbd+unix:///${devices[0]}?socket=$sock" 2>/dev/null |
      python3 -c 'import json, sys; print(int(json.load(sys.stdin)["exports"][0]["is_rotational"]))' 2>/dev/null) || rot=""
    case $rot in
      0) rate=",rotation_rate=1" ;;
      1) rate=",rotation_rate=7200" ;;
      *) say "note: nbdinfo could not read the disks' rotational flag: the guest sees them as rotational" ;;
    esac
  else
    say "note: nbdinfo not found (apt-get install libnbd-bin): the guest sees every disk as rotational"
  fi
  for ((c = 0; c * 256 < ndisks; c++)); do
    args+=(-device "virtio-scsi-pci,id=scsi$c")
  done
  for ((i = 0; i < ndisks; i++)); do
    n=${devices[$i]}
    args+=(-blockdev "driver=nbd,server.type=unix,server.path=$sock,export=$n,node-name=d$i"
           -device "scsi-hd,drive=d$i,bus=scsi$((i / 256)).0,channel=0,scsi-id=$((i % 256)),lun=0,serial=$n$rate")
  done
}

# guest_verdict RESULT LOG WHAT: end the run with a clear message unless
# the guest finished (RESULT done); LOG is the console it wrote, WHAT how
# messages call it ("serial log", "console").  Keeps the run directory.
guest_verdict() {
  local result=$1 log=$2 what=$3
  case $result in
    done) return 0 ;;
    panic)
      grep -a -m1 -A3 'Kernel panic' "$log" >&2
      say "error: guest kernel panic after ${t_run}s ($what above)" ;;
    exited)
      tail -5 "$run/qemu.log" >&2; tail -20 "$log" >&2 2>/dev/null || true
      say "error: qemu exited before the guest finished (qemu log and $what above)" ;;
    timeout)
      tail -20 "$log" >&2 || true
      say "error: timeout: the guest did not finish in ${timeout}s; killing qemu" ;;
  esac
  keep=1
  exit 1
}

# Readers of the guest's marker lines in $glog (set it first):
# mark NAME (first "FF-MARK NAME T"), section NAME (between FF-BEGIN and
# FF-END NAME), rc_of NAME (first "FF-RC NAME RC").
mark() { tr -d '\r' <"$glog" | awk -v m="$1" '$1 == "FF-MARK" && $2 == m && !n++ { print $3 }'; }
section() { tr -d '\r' <"$glog" | awk -v s="$1" '$1 == "FF-END" && $2 == s { p = 0 } p { print } $1 == "FF-BEGIN" && $2 == s { p = 1 }'; }
rc_of() { tr -d '\r' <"$glog" | awk -v s="$1" '$1 == "FF-RC" && $2 == s && !n++ { print $3 }'; }

# guest_systemd_args: qemu's arguments for a boot of the systemd root, in
# args: the kernel and initramfs of the image dir $img, the run's copy
# $run/root.img as the root (virtio-blk, snapshot=on), the console on
# ttyS0 into $run/console.log and the report channel, ttyS1, into
# $run/report.log.  Needs $mem and $accel (guest_accel).
guest_systemd_args() {
  args=(-nodefaults -display none -no-reboot -m "$mem" -smp 2 "${accel[@]}"
        -kernel "$img/vmlinuz" -initrd "$img/initrd.img"
        -append "root=/dev/vda rw console=ttyS0 panic=-1 quiet loglevel=3 systemd.show_status=0 ${FF_APPEND:-}"
        -drive "file=$run/root.img,if=virtio,format=raw,snapshot=on"
        -serial "file:$run/console.log" -serial "file:$run/report.log")
}

# guest_systemd_boot WHAT SHOW_RE: start qemu with args (WHAT says what
# it boots), show each report line matching SHOW_RE as it arrives, and
# wait until the report ends (FF-DONE), the kernel panics, qemu exits or
# $timeout seconds pass.  Sets qpid, tq (its start), rlog and clog (the
# report and console logs), result (done, panic, exited, timeout), t_run
# (start to result) and t_exit (start to qemu's exit, at most 5 s more).
guest_systemd_boot() {
  local lines shown=0 last_note=0 el
  tq=$(now)
  "$qemu" "${args[@]}" 2>"$run/qemu.log" &
  qpid=$!
  pids=("$qpid" "${pids[@]}")
  say "qemu started (pid $qpid), $1"
  rlog=$run/report.log clog=$run/console.log result=""
  while :; do
    if [ -f "$rlog" ]; then
      lines=$(grep -a -c '' "$rlog" || true)
      if [ "$lines" -gt "$shown" ]; then
        sed -n "$((shown + 1)),${lines}p" "$rlog" | tr -d '\r' |
          grep -a -E "$2" | sed 's/^/  guest: /' >&2 || true
        shown=$lines
      fi
      if grep -a -q '^FF-DONE' "$rlog"; then result=done; fi
    fi
    if [ -f "$clog" ] && grep -a -q 'Kernel panic' "$clog"; then result=panic; fi
    [ -n "$result" ] && break
    peak_rss  # qemu's and nbdkit's VmHWM, while they live
    if ! kill -0 "$qpid" 2>/dev/null; then
      # qemu is gone, so its logs are whole: read them once more (what was
      # written just before qemu exited may have missed the checks above)
      if [ -f "$clog" ] && grep -a -q 'Kernel panic' "$clog"; then result=panic
      elif [ -f "$rlog" ] && grep -a -q '^FF-DONE' "$rlog"; then result=done
      else result=exited; fi
      break
    fi
    el=$(since "$tq")
    if [ "${el%.*}" -ge "$timeout" ]; then result=timeout; break; fi
    if [ "$shown" = 0 ] && [ $(( ${el%.*} - last_note )) -ge 15 ]; then
      say "booting… ${el%.*}s"; last_note=${el%.*}
    fi
    sleep 0.5
  done
  t_run=$(since "$tq")
  for _ in $(seq 50); do peak_rss; kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
  t_exit=$(since "$tq")
}

# guest_tree_cmds ROOT [HAVE]: the debugfs commands that copy the staged
# tree ROOT into an image at the same paths: a mkdir for every directory
# (one the image has already only makes debugfs complain), a symlink for
# every link, and "rm" then "write" for every file, so a file the image
# has is replaced.  A file whose path is a line of the file HAVE (what
# the image holds already: its libraries) is left out.
guest_tree_cmds() {
  local root=$1 have=${2:-/dev/null} p
  (cd "$root" && find . -mindepth 1 -type d | LC_ALL=C sort) |
    while read -r p; do echo "mkdir ${p#.}"; done
  (cd "$root" && find . -mindepth 1 ! -type d | LC_ALL=C sort) |
    while read -r p; do
      p=${p#.}
      if [ -L "$root$p" ]; then
        echo "symlink $p $(readlink "$root$p")"
      elif ! grep -qxF "$p" "$have"; then
        echo "rm $p"
        echo "write $root$p $p"
      fi
    done
}
