#!/bin/bash
# host-tier (guest, systemd boot): fusefarm as a user runs it on a host
# with udev, systemd, lvm2 and device-mapper live, and what the host did.
# guest/run-hosttier.sh installs fusefarm into the image copy
# (build-fusefarm-layer.sh), this script as /usr/local/sbin/ff-host-tier,
# ff-hosttier.service to start it once the boot is done, and
# /etc/ff/hosttier.conf:
#   FF_STEPS    the steps, in order (default "fenced run dmreal kill9 pvrule
#               control")
#   FF_DEVICES  the size of the fenced step's farm (mount --devices)
#   FF_RUN_DEVICES  the size of the runs' farms (run --devices)
#   FF_WAIT     seconds any one wait may take before it is a failure
#
# A step is a function step_NAME.  It starts on a host with no farm and
# must leave it so: every step ends with farm_gone, which checks that no
# loop, mount, dm device, fusefarm udev rule or run scratch dir is left.
# The probe host_evidence lists what the host's udev, lvm2 and systemd
# did with a farm's VGs (dm devices, lvm's online records, lvm-activate
# units, the journal); the steps that run fusefarm require it empty, the
# control requires it not to be, so a probe that cannot see the host's
# activation fails the control.
#
# Everything goes to ttyS1, the report channel: FF-MARK NAME UPTIME,
# FF-STEP NAME begin|pass|fail, one FF-CHECK STEP: WHAT per check passed
# and FF-FAIL STEP: WHAT per check failed (FF-INFO STEP: lines after it
# say why), FF-DONE last.  Exit 0 when no check failed.
export LC_ALL=C PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
FF_STEPS="fenced run dmreal kill9 pvrule control" FF_DEVICES=200 FF_RUN_DEVICES=6 FF_WAIT=300 FF_SCENARIO=""
. /etc/ff/hosttier.conf
out=/dev/ttyS1
stty -F $out raw -echo 115200 2>/dev/null
exec >$out 2>&1
data=/usr/local/share/fusefarm/configs
w=/root/ff-hosttier
mkdir -p "$w"
failed=0 step=""

up() { read -r u _ </proc/uptime; echo "$u"; }
mark() { echo "FF-MARK $1 $(up)"; }
ok() { echo "FF-CHECK $step: $*"; }
bad() { echo "FF-FAIL $step: $*"; step_failed=1; }
info() { sed -e "s/^/FF-INFO $step: /" | head -n "${1:-30}"; }
# check WHAT CMD...: CMD's success is the check's
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# summary: lines "KIND: DETAIL" as one line per kind, its count and its
# first three details
summary() {
  awk '{ k = $0; sub(/: .*/, "", k); d = substr($0, length(k) + 3)
         if (!(k in n)) order[++nk] = k
         if (++n[k] <= 3) ex[k] = ex[k] (n[k] > 1 ? ", " : "") d }
       END { for (i = 1; i <= nk; i++) { k = order[i]
               print n[k] " x " k ": " ex[k] (n[k] > 3 ? ", ..." : "") } }'
}
# empty WHAT FILE: the check that FILE holds nothing; else what it holds
empty() {
  if [ -s "$2" ]; then bad "$1"; summary <"$2" | info; else ok "$1"; fi
}
# wait_until SECS CMD...: CMD again every half second until it succeeds;
# 1 when it did not in SECS
wait_until() {
  local end=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.5
  done
}

cursor() { journalctl -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p'; }

# farm_vgs MANIFEST: the VG names of a manifest (fusefarm manifest, or a
# mount's .fusefarm/manifest.json), sorted
farm_vgs() { grep -o '"vg":"[^"]*"' "$1" | cut -d'"' -f4 | sort -u; }

# host_evidence VGS CURSOR: what the host did with the VGs named in the
# file VGS since the journal's CURSOR, one line each: their dm devices
# (VG-LV, '-' doubled in the names), lvm's online records
# (/run/lvm/pvs_online, vgs_online: pvscan --cache of lvm2's udev rule),
# lvm-activate-VG and lvm2-pvscan@ units, and the journal's lines of lvm
# and systemd about them
host_evidence() {
  local vgs=$1 cur=$2
  dmsetup ls 2>/dev/null | awk 'NR == FNR { p = $1; gsub(/-/, "--", p); pre[p "-"] = 1; next }
    { for (p in pre) if (index($1, p) == 1) { print "dm device: " $1; break } }' "$vgs" -
  { ls /run/lvm/vgs_online 2>/dev/null; } | sort | comm -12 - "$vgs" |
    sed 's|^|lvm online record: /run/lvm/vgs_online/|'
  { cat /run/lvm/pvs_online/* 2>/dev/null | sed -n 's/^vg://p'; } | sort -u | comm -12 - "$vgs" |
    sed 's|^|lvm online record: /run/lvm/pvs_online, a PV of VG |'
  systemctl list-units --all --plain --no-legend 'lvm-activate-*' 'lvm2-pvscan@*' 2>/dev/null |
    awk '{ print $1 }' | sed -n 's/^lvm-activate-\(.*\)\.service$/\1/p' | sort -u |
    comm -12 - "$vgs" | sed 's/^/systemd unit: lvm-activate-/'
  systemctl list-units --all --plain --no-legend 'lvm2-pvscan@7:*' 2>/dev/null |
    awk '{ print "systemd unit: " $1 " (a loop device)" }'
  journalctl -q --after-cursor "$cur" -o cat 2>/dev/null |
    sed -n -e 's/.*VG \([^ ]*\) is complete.*/\1 VG \1 is complete/p' \
      -e 's/.*volume group "\([^"]*\)" now active.*/\1 volume group "\1" now active/p' \
      -e 's/.*\(lvm-activate-\([^ ]*\)\.service\).*/\2 unit \1/p' | sort -u |
    join - "$vgs" | cut -d' ' -f2- | sed 's/^/journal: /'
}

# the loops whose backing file's path starts with PREFIX
loops_under() { losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v d="$1" 'index($2, d) == 1'; }
mounted() { awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; }

# farm_gone WHAT PREFIX: nothing of a farm mounted at a path starting
# with PREFIX is left: no loop backed by a file there, no mount there,
# no dm device at all (nothing else
# in this guest makes one), no fusefarm udev rule, no fusefarm run scratch
farm_gone() {
  loops_under "$2" | sed 's/^/loop: /' >"$w/left"
  awk -v m="$2" 'index($2, m) == 1 { print "mount: " $2 " (" $3 ")" }' /proc/mounts >>"$w/left"
  dmsetup ls 2>/dev/null | grep -v '^No devices found' | sed 's/^/dm device: /' >>"$w/left"
  ls -d /run/udev/rules.d/*fusefarm* /etc/udev/rules.d/*fusefarm* /tmp/fusefarm-run.* 2>/dev/null |
    sed 's/^/file: /' >>"$w/left"
  empty "$1: nothing left (loops, mounts, dm devices, udev rules, run scratch)" "$w/left"
}

# release_farm VGS DIR: after a failed step, take back what the host
# stacked on the farm (lvm-activate units, dm devices of its VGs), so the
# next step starts clean; says what it did
release_farm() {
  local n
  systemctl list-units --all --plain --no-legend 'lvm-activate-*' | awk '{ print $1 }' |
    xargs -r systemctl stop 2>&1 | info 5
  for n in 1 2 3 4; do
    host_evidence "$1" "$(cursor)" | sed -n 's/^dm device: //p' >"$w/dm"
    [ -s "$w/dm" ] || break
    xargs -r -n1 dmsetup remove --retry <"$w/dm" 2>&1 | info 5
  done
  loops_under "$2" | awk '{ print $1 }' | xargs -r losetup -d 2>&1 | info 5
  mounted "$2" && { fusermount3 -u "$2" 2>/dev/null || umount -l "$2"; }
  echo "released what was left of the farm at $2" | info
}

# ---- the steps ----------------------------------------------------------

# fenced: mount and attach a farm as a user does, with the default state
# dir; udev's record of every loop carries fusefarm's rule and the host
# did nothing with the farm; detach and unmount leave nothing
step_fenced() {
  local mnt=/mnt/farm cur st rc n l
  mkdir -p "$mnt"
  cur=$(cursor)
  check "fusefarm mount mixed-1000.conf $mnt --devices $FF_DEVICES" \
    fusefarm mount "$data/mixed-1000.conf" "$mnt" --devices "$FF_DEVICES"
  mounted "$mnt" || return 0
  farm_vgs "$mnt/.fusefarm/manifest.json" >"$w/vgs"
  mark attach
  rc=0; fusefarm attach "$mnt" >"$w/attach.out" 2>"$w/attach.err" || rc=$?
  mark attached
  if [ $rc = 0 ]; then ok "fusefarm attach $mnt: $(grep -c . "$mnt/.fusefarm/devices") devices, $(grep -c . "$w/vgs") VGs"
  else bad "fusefarm attach $mnt: exit $rc"; info <"$w/attach.err"; fi
  n=$(grep -c . "$mnt/.fusefarm/devices")
  check "attach says: udev: all $n loop devices fenced" \
    grep -q "udev: all $n loop devices fenced" "$w/attach.err"
  check "attach says: host: no device-mapper device on the farm's loops" \
    grep -q "host: no device-mapper device on the farm's loops" "$w/attach.err"
  st=/run/fusefarm/$(echo "$mnt" | sed 's|/|%2F|g')
  awk '{ print $1 }' "$st/loops" 2>/dev/null >"$w/loops"
  # udev's record of every farm loop, read at once (a udevadm per loop
  # costs seconds under TCG)
  udevadm info --export-db >"$w/udev-db"
  awk -v m="$mnt" 'NR == FNR { want[$1] = 1; next }
    function done() {
      if (dev in want) {
        seen[dev] = 1
        if (!(("FUSEFARM_MOUNT=" m) in e) || !("DM_UDEV_DISABLE_OTHER_RULES_FLAG=1" in e) || odd != "")
          print "unfenced loop: " dev " " (("FUSEFARM_MOUNT=" m) in e ? "" : "no FUSEFARM_MOUNT=" m " ") \
                ("DM_UDEV_DISABLE_OTHER_RULES_FLAG=1" in e ? "" : "no DM_UDEV_DISABLE_OTHER_RULES_FLAG=1 ") odd
      }
      dev = ""; odd = ""; delete e
    }
    /^$/ { done(); next }
    /^N: / { dev = "/dev/" substr($0, 4) }
    /^E: / { kv = substr($0, 4); e[kv] = 1; if (kv ~ /^(ID_FS_TYPE|LVM_[A-Z_]*)=/) odd = odd kv " " }
    END { done(); for (d in want) if (!(d in seen)) print "unfenced loop: " d " not in udev'"'"'s database" }' \
    "$w/loops" "$w/udev-db" >"$w/unfenced"
  if [ ! -s "$w/loops" ]; then bad "no loop recorded in $st/loops"
  else
    l=$(head -n1 "$w/loops")
    udevadm info --query=property --name="$l" |
      grep -E '^(FUSEFARM_MOUNT|DM_UDEV_DISABLE_OTHER_RULES_FLAG|SYSTEMD_READY|UDISKS_IGNORE)=' |
      sed "s|^|udevadm info $l: |" | info
    empty "udev: every one of $(grep -c . "$w/loops") loops has FUSEFARM_MOUNT=$mnt, DM_UDEV_DISABLE_OTHER_RULES_FLAG=1, no ID_FS_TYPE, no LVM_*" "$w/unfenced"
  fi
  udevadm settle
  host_evidence "$w/vgs" "$cur" >"$w/evidence"
  empty "host: no dm device, lvm online record, lvm-activate unit or journal line for the farm's $(grep -c . "$w/vgs") VGs" "$w/evidence"
  mark detach
  rc=0; fusefarm detach "$mnt" >"$w/detach.out" 2>&1 || rc=$?
  if [ $rc = 0 ]; then ok "fusefarm detach $mnt"; else bad "fusefarm detach $mnt: exit $rc"; info <"$w/detach.out"; fi
  rc=0; fusermount3 -u "$mnt" >"$w/umount.out" 2>&1 || rc=$?
  if [ $rc = 0 ]; then ok "fusermount3 -u $mnt"; else bad "fusermount3 -u $mnt: exit $rc"; info <"$w/umount.out"; fi
  mark detached
  [ "$step_failed" = 0 ] || release_farm "$w/vgs" "$mnt"
  host_evidence "$w/vgs" "$cur" >"$w/evidence"
  [ "$step_failed" = 1 ] ||
    empty "host: still nothing of the farm's VGs after detach" "$w/evidence"
  farm_gone "detach and unmount" "$mnt"
}

# dm_of_vgs VGS: the dm devices (names on stdin, one per line) of the VGs
# named in the file VGS, as lvm names them (VG-LV, '-' doubled in names)
dm_of_vgs() {
  awk 'NR == FNR { p = $1; gsub(/-/, "--", p); pre[p "-"] = 1; next }
    { for (p in pre) if (index($1, p) == 1) { print $1; break } }' "$1" -
}

# jnum FILE KEY: every value of "KEY": N in the JSON FILE, one per line;
# jsum: their sum
jnum() { grep -o "\"$2\": *[0-9]*" "$1" | sed 's/.*: *//'; }
jsum() { jnum "$1" "$2" | awk '{ s += $1 } END { print s + 0 }'; }

# run_sampled NAME ARGS...: `fusefarm run ARGS... --json $w/NAME.json` in
# the background, with udev's block events in $w/NAME-events and the dm
# devices that exist while it runs in $w/NAME-dm-seen (sampling, not
# synchronisation); waits FF_WAIT seconds at most
run_sampled() {
  local name=$1 pid mon end rc; shift
  : >"$w/$name-dm-seen"
  udevadm monitor --udev --property --subsystem-match=block >"$w/$name-events" 2>&1 &
  mon=$!
  wait_until 30 grep -q '^UDEV' "$w/$name-events" || bad "udevadm monitor did not start"
  mark "$name"
  fusefarm run "$@" --no-svg --json "$w/$name.json" >"$w/$name.out" 2>&1 &
  pid=$!
  end=$(( $(date +%s) + FF_WAIT ))
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
    dmsetup ls 2>/dev/null | grep -v '^No devices found' | awk '{ print $1 }' >>"$w/$name-dm-seen"
    sleep 0.5
  done
  kill -0 "$pid" 2>/dev/null && { bad "fusefarm run $* still running after ${FF_WAIT}s: killed"; kill "$pid"; }
  rc=0; wait "$pid" || rc=$?
  mark "$name-ran"
  kill "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
  if [ $rc = 0 ]; then ok "fusefarm run $*: exit 0, $(grep -o 'farm: .* attached' "$w/$name.out" | head -n1)"
  else bad "fusefarm run $*: exit $rc"; tail -n 20 "$w/$name.out" | info; fi
  # what it measured, for the log: the report from its farm line on
  [ -s "$w/$name.json" ] && fusefarm report "$w/$name.json" 2>&1 | sed -n '/^farm:/,/^notes:/p' | info 60
}

# run_checks NAME VGS CURSOR: what the host did during run_sampled NAME,
# whose farm has the VGs of the file VGS: udev saw the run's loops
# fenced, dm devices came only from the run's VGs (the run activates
# them when the kernel has dm), the host's lvm and systemd never
# activated one, and nothing of the run is left
run_checks() {
  local name=$1 vgs=$2 cur=$3 n
  awk 'BEGIN { RS = "" } /DEVNAME=\/dev\/loop/ && /FUSEFARM_MOUNT=\/tmp\/fusefarm-run\./ { f++ }
       /DEVNAME=\/dev\/loop/ && /(ID_FS_TYPE=LVM2_member|LVM_VG_NAME_COMPLETE|LVM_PV_)/ { d = $0; sub(/.*DEVNAME=/, "", d); sub(/\n.*/, "", d)
         print "udev event with LVM2_member: " d }
       END { print f + 0 >"/dev/stderr" }' "$w/$name-events" >"$w/unfenced" 2>"$w/nfenced"
  n=$(cat "$w/nfenced")
  check "udev: $n loop events carried fusefarm's rule for the run's mount" [ "$n" -ge "$FF_RUN_DEVICES" ]
  empty "udev: no loop event with lvm's or blkid's LVM2_member properties" "$w/unfenced"
  sort -u "$w/$name-dm-seen" >"$w/dm-seen.u"
  dm_of_vgs "$vgs" <"$w/dm-seen.u" >"$w/dm-ours"
  comm -23 "$w/dm-seen.u" "$w/dm-ours" | sed 's/^/dm device of no farm VG while it ran: /' >"$w/evidence"
  empty "dm devices while it ran: $(grep -c . "$w/dm-ours") of the run's VGs, none else" "$w/evidence"
  host_evidence "$vgs" "$cur" >"$w/evidence"
  empty "host: no dm device left, no lvm online record, lvm-activate unit or journal line for the run's $(grep -c . "$vgs") VGs" "$w/evidence"
  farm_gone "after fusefarm run" /tmp/fusefarm-run.
}

# run: the README's main job, `fusefarm run` of the built-in default
# scenario, at FF_RUN_DEVICES devices and each workload once (under TCG
# every lvm command costs about a second), dm as by default (auto: real
# here)
step_run() {
  local cur
  fusefarm manifest builtin:default-1000 --devices "$FF_RUN_DEVICES" >"$w/run-manifest.json"
  farm_vgs "$w/run-manifest.json" >"$w/vgs"
  cur=$(cursor)
  run_sampled run --devices "$FF_RUN_DEVICES" --repeat 1
  check "run.json: the default dm = auto ran \"real\" on this kernel" \
    grep -q '"mode": *"real"' "$w/run.json"
  run_checks run "$w/vgs" "$cur"
}

# dmreal: `fusefarm run ci-small --dm real`: activation made real dm
# devices, as many at once as the manifest has LVs, of the run's VGs and
# nothing else, every one removed by `vgchange -an` before the next
# repetition and at the end; the host's lvm never activated a VG of it
step_dmreal() {
  local cur lvs j=$w/dmreal.json
  fusefarm manifest "$data/mixed-1000.conf" --devices "$FF_RUN_DEVICES" >"$w/dm-manifest.json"
  farm_vgs "$w/dm-manifest.json" >"$w/vgs"
  lvs=$(grep -c '"extents":' "$w/dm-manifest.json")
  cur=$(cursor)
  run_sampled dmreal ci-small --dm real --devices "$FF_RUN_DEVICES"
  if [ -s "$j" ]; then
    check "run.json: every config says \"mode\": \"real\"" \
      test "$(grep -o '"mode": *"real"' "$j" | wc -l)" = "$(grep -o '"requested": *"[a-z]*"' "$j" | wc -l)"
    check "run.json: every config's activations made dm devices (created: $(jnum "$j" created | xargs))" \
      sh -c "! grep -q '\"created\": *0[,}]' '$j'"
    check "run.json: the most at once is the manifest's $lvs LVs (max_active: $(jnum "$j" max_active | xargs))" \
      sh -c "! grep -o '\"max_active\": *[0-9]*' '$j' | sed 's/.*: *//' | grep -qvx '$lvs'"
    check "run.json: every device the activations made was removed (created $(jsum "$j" created) = removed by vgchange -an $(jsum "$j" removed) + by the runner $(jsum "$j" forced))" \
      test "$(jsum "$j" created)" = "$(( $(jsum "$j" removed) + $(jsum "$j" forced) ))"
  else
    bad "no run document $j"
  fi
  check "dm devices of the run's VGs were seen while it ran" [ -s "$w/dmreal-dm-seen" ]
  run_checks dmreal "$w/vgs" "$cur"
}

# kill9: a run killed with SIGKILL while its real activation has dm
# devices up, its watchdog killed too (nothing of the run tears down);
# then `fusefarm cleanup` alone removes its dm devices, loops, mount,
# udev rule and scratch
step_kill9() {
  local cur pid wd e rc
  fusefarm manifest "$data/mixed-1000.conf" --devices "$FF_RUN_DEVICES" >"$w/k9-manifest.json"
  farm_vgs "$w/k9-manifest.json" >"$w/vgs"
  cur=$(cursor)
  cat >"$w/kill9.conf" <<EOF
name = "kill9";
spec = "$data/mixed-1000.conf";
devices = $FF_RUN_DEVICES;
dm = "real";
workloads = ( { type = "lvchange"; count = 100; repeat = 1000; } );
EOF
  fusefarm run "$w/kill9.conf" --no-svg --json "$w/kill9.json" >"$w/kill9.out" 2>&1 &
  pid=$!
  have_dm() { dmsetup ls 2>/dev/null | awk '{ print $1 }' | dm_of_vgs "$w/vgs" | grep -q .; }
  # lvm_children: the runner's lvm processes still running (a zombie,
  # ended but not reaped by the stopped runner, does not count)
  # (/proc/PID/stat: pid (comm) state ppid ...; the image has no ps)
  lvm_children() { cat /proc/[0-9]*/stat 2>/dev/null | awk -v p="$pid" '$2 == "(lvm)" && $3 != "Z" && $4 == p { f = 1 } END { exit !f }'; }
  # The event: the run's activation has made dm devices.  The runner and
  # its watchdog are then stopped (SIGSTOP) and the lvm command it had
  # running allowed to end: if that was the `vgchange -an` between two
  # repetitions, the devices are gone, and the run goes on to activate
  # again.  So the kill lands on a run whose dm devices are up, whatever
  # the timing.  The workload keeps them up for most of its time: 100
  # `lvchange -ay` of one LV per repetition (the first activates it, the
  # rest find it active), one `vgchange -an` after them.  With one
  # `vgchange -ay` per repetition instead, the devices are up only from
  # its end to the sweep's `-an`, and once the farm's loops read with
  # direct I/O, ten tries in a row of a CI run stopped it in its `-an`.
  e="" wd=""
  for try in 1 2 3 4 5 6 7 8 9 10; do
    wait_until "$FF_WAIT" have_dm || break
    [ -n "$wd" ] || {
      e=$(grep -l "^creator $pid " /run/fusefarm/farms/* 2>/dev/null | head -n1)
      wd=$([ -n "$e" ] && sed -n 's/^watchdog \([0-9]*\) .*/\1/p' "$e")
    }
    kill -STOP "$pid" ${wd:+"$wd"} 2>/dev/null
    wait_until "$FF_WAIT" eval '! lvm_children' || true
    have_dm && ! lvm_children && break
    kill -CONT "$pid" ${wd:+"$wd"} 2>/dev/null
  done
  if have_dm; then
    ok "the run's activation made $(dmsetup ls | awk '{ print $1 }' | dm_of_vgs "$w/vgs" | wc -l) dm devices (runner stopped at try $try)"
  else
    bad "no dm device of the run's VGs up with the runner stopped in ${FF_WAIT}s"; tail -n 20 "$w/kill9.out" | info
  fi
  check "registry entry ${e:-(none)} names the runner $pid and its watchdog ${wd:-(none)}" [ -n "$wd" ]
  kill -9 "$pid" ${wd:+"$wd"} 2>/dev/null
  wait "$pid" 2>/dev/null
  mark killed
  check "after kill -9 of the runner and its watchdog its dm devices are still there (what cleanup must remove)" have_dm
  rc=0; fusefarm cleanup >"$w/cleanup.out" 2>&1 || rc=$?
  if [ $rc = 0 ]; then ok "fusefarm cleanup: exit 0"; else bad "fusefarm cleanup: exit $rc"; fi
  info 20 <"$w/cleanup.out"
  mark cleaned
  host_evidence "$w/vgs" "$cur" >"$w/evidence"
  empty "host: no dm device left, no lvm online record, lvm-activate unit or journal line for the run's VGs" "$w/evidence"
  farm_gone "after fusefarm cleanup" /tmp/fusefarm-run.
  [ "$step_failed" = 0 ] || release_farm "$w/vgs" /tmp/fusefarm-run.
}

# scenario: a measurement, not a check: `fusefarm run $FF_SCENARIO`
# (run-hosttier.sh --scenario "NAME ARGS..."), its report printed whole
# (FF-INFO lines)
step_scenario() {
  local rc=0
  [ -n "$FF_SCENARIO" ] || { bad "no scenario (run-hosttier.sh --scenario NAME)"; return; }
  mark scenario
  # shellcheck disable=SC2086 # NAME and its options
  fusefarm run $FF_SCENARIO --no-svg --json "$w/scenario.json" >"$w/scenario.out" 2>&1 || rc=$?
  mark scenario-ran
  if [ $rc = 0 ]; then ok "fusefarm run $FF_SCENARIO: exit 0"; else bad "fusefarm run $FF_SCENARIO: exit $rc"; tail -n 20 "$w/scenario.out" | info; fi
  [ -s "$w/scenario.json" ] && fusefarm report "$w/scenario.json" 2>&1 | info 400
  farm_gone "after the scenario" /tmp/fusefarm-run.
}

# smoke_loops: the two images of smoke.conf that `fusefarm gen` writes,
# in $w/img, each on a plain loop device (losetup -f, no fusefarm
# attach), into the caller's array loops
smoke_loops() {
  local f l
  loops=()
  rm -rf "$w/img"
  check "fusefarm gen smoke.conf -o $w/img" fusefarm gen "$data/smoke.conf" -o "$w/img" -q
  for f in "$w"/img/pv*; do
    l=$(losetup -f --show "$f") && loops+=("$l")
  done
  check "losetup -f: ${loops[*]}" [ ${#loops[@]} = 2 ]
}

# pvrule: farm PVs that reach the host other than by attach (nbd-client,
# a qemu disk: gen's images on plain loops stand for them, since the rule
# reads the PV's UUID through blkid, not the transport): with `fusefarm
# udev-rule --install` the host's lvm leaves them alone and udev's
# record says why; --remove takes the rule away.  The control step is the
# same farm without the rule.
step_pvrule() {
  local cur l loops=() vgs=$w/pvrule-vgs
  echo smoke >"$vgs"
  check "fusefarm udev-rule --install" fusefarm udev-rule --install
  check "the rule is in /etc/udev/rules.d" [ -f /etc/udev/rules.d/61-fusefarm-pv.rules ]
  cur=$(cursor)
  smoke_loops
  # lvm2's pvscan runs inside udev's event processing: after settle its
  # online records and journal lines are there or never will be
  udevadm settle
  mark pvrule-attached
  for l in "${loops[@]}"; do
    udevadm info --query=property "$l" >"$w/prop"
    if grep -qx 'FUSEFARM_PV=1' "$w/prop" && grep -qx 'DM_UDEV_DISABLE_OTHER_RULES_FLAG=1' "$w/prop" &&
      grep -q '^ID_FS_UUID=fusefm-' "$w/prop" && ! grep -q '^ID_FS_TYPE=.' "$w/prop"; then
      ok "udev's record of $l: FUSEFARM_PV=1, DM_UDEV_DISABLE_OTHER_RULES_FLAG=1, $(grep '^ID_FS_UUID=' "$w/prop"), no ID_FS_TYPE"
    else
      bad "udev's record of $l is not a fenced farm PV's"; grep -E '^(FUSEFARM|DM_UDEV|ID_FS|LVM_)' "$w/prop" | info
    fi
  done
  host_evidence "$vgs" "$cur" >"$w/evidence"
  empty "host: no dm device, lvm online record, lvm-activate unit or journal line for smoke" "$w/evidence"
  [ -s "$w/evidence" ] && release_farm "$vgs" "$w/img"
  losetup -d "${loops[@]}"
  check "fusefarm udev-rule --remove" fusefarm udev-rule --remove
  rm -rf "$w/img"
  farm_gone "pvrule cleaned up" "$w/img"
}

# control: a farm attached without fusefarm (its images, losetup -f), as
# before fusefarm had its udev rules: the host's lvm2 activates it and
# host_evidence sees that, else the probes above prove nothing
step_control() {
  local cur l loops=() vgs=$w/control-vgs
  echo smoke >"$vgs"
  cur=$(cursor)
  smoke_loops
  udevadm settle
  mark control-attached
  smoke_active() {
    dmsetup info smoke-lin >/dev/null 2>&1 && dmsetup info smoke-str >/dev/null 2>&1 &&
      journalctl -q --after-cursor "$cur" -o cat | grep -q 'volume group "smoke" now active'
  }
  wait_until "$FF_WAIT" smoke_active ||
    bad "the host did not activate smoke in ${FF_WAIT}s (no smoke-lin and smoke-str, or no \"now active\")"
  mark control-active
  host_evidence "$vgs" "$cur" >"$w/evidence"
  if grep -q '^dm device: smoke-lin' "$w/evidence" && grep -q '^journal' "$w/evidence"; then
    ok "host activated an unfenced farm (expected): $(grep -c . "$w/evidence") signs"
    summary <"$w/evidence" | info
  else
    bad "the probe did not see the host activate an unfenced farm"; info <"$w/evidence"
  fi
  vgchange -an smoke >"$w/vgchange.out" 2>&1 || { bad "vgchange -an smoke"; info <"$w/vgchange.out"; }
  losetup -d "${loops[@]}"
  rm -rf "$w/img"
  farm_gone "control cleaned up" "$w/img"
}

mark host-tier-start
modprobe fuse && modprobe loop || echo "FF-FAIL setup: modprobe fuse loop"
echo "FF-INFO setup: $(fusefarm --version), $(lvm version | awk '/LVM version/ { print "lvm2 " $3 }'), systemd $(systemctl --version | awk 'NR == 1 { print $2 }'), kernel $(uname -r)"
for s in $FF_STEPS; do
  step=$s step_failed=0
  if ! declare -F "step_$s" >/dev/null; then echo "FF-FAIL $s: no such step"; failed=1; continue; fi
  echo "FF-STEP $s begin $(up)"
  "step_$s"
  if [ "$step_failed" = 0 ]; then echo "FF-STEP $s pass $(up)"; else echo "FF-STEP $s fail $(up)"; failed=1; fi
done
echo "FF-DONE $([ $failed = 0 ] && echo pass || echo fail)"
sync
exit $failed
