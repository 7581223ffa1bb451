# shellcheck shell=bash
#
# farm.sh: helpers shared by the integration tests that generate a farm
# and look at it with real lvm2.  Source after lvm-env.sh.

# The lines lvm prints on a kernel without device-mapper, whatever the
# disks hold (lvm2-ondisk-format.md §8 item 17): allowed on stderr.
FF_NO_DM_RE='/dev/mapper/control: open failed|Failure to communicate with kernel device-mapper driver|Check that device-mapper is available in the kernel|Incompatible libdevmapper .* and kernel driver'

# ff_farm_attach FUSEFARM [SPEC]: generate SPEC (empty: the built-in farm)'s images and manifest into
# $FF_SCRATCH, attach every image (in manifest order) and write
# $FF_SCRATCH/map: "<loop device> <device name>" per line.
ff_farm_attach() {
  local bin=$1 spec=$2 n
  local -a names files loops
  "$bin" manifest ${spec:+"$spec"} >"$FF_SCRATCH/manifest.json"
  "$bin" gen -q ${spec:+"$spec"} -o "$FF_SCRATCH/img"
  mapfile -t names < <(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    print(d["name"])' "$FF_SCRATCH/manifest.json")
  for n in "${names[@]}"; do
    files+=("$FF_SCRATCH/img/$n")
  done
  mapfile -t loops < <(ff_loop_attach "${files[@]}")
  ((${#loops[@]} == ${#names[@]})) ||
    ff_die "attached ${#loops[@]} of ${#names[@]} devices"
  paste -d' ' <(printf '%s\n' "${loops[@]}") <(printf '%s\n' "${names[@]}") \
    >"$FF_SCRATCH/map"
}

# ff_loop_of NAME: the loop device carrying farm device NAME.
ff_loop_of() {
  awk -v n="$1" '$2 == n { print $1 }' "$FF_SCRATCH/map"
}

# ff_expect_clean_stderr FILE WHAT: fail unless FILE holds nothing but the
# known no-device-mapper lines, and, for each md signature device of the
# farm listed in the devices file, lvm's note that it excludes it.
ff_expect_clean_stderr() {
  local rest md re=$FF_NO_DM_RE
  for md in $(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    if d.get("signature") == "md":
        print(d["name"])' "$FF_SCRATCH/manifest.json"); do
    re+="|^  Devices file $(ff_loop_of "$md") is excluded: device is an md component\.\$"
  done
  rest=$(grep -Ev "$re" "$1" || true)
  if [[ -n $rest ]]; then
    printf '%s\n' "$rest" | head -20 >&2
    ff_die "$2: unexpected stderr (above)"
  fi
}
