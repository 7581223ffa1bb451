#!/usr/bin/env bash
# Write docs/parser-errors.md: bad specs, profiles and scenarios, each fed
# through the real parsers (ff-parse-check, built with the tests), with
# the exact message each gets.  Nothing in the table is typed by hand:
# change a message, then run this again.  The ctest test
# fuzz/error-table fails when the committed table is not what this
# script writes.
#
# usage: tests/fuzz/gen-error-table.sh [--check] BUILD_DIR [OUT]
#   OUT defaults to docs/parser-errors.md; "-" writes to stdout.
#   --check writes nothing: exit 1 when OUT differs from what it would be.
# Exit 1 when an input meant to fail loads (or one meant to load fails).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mode="write"
if [[ ${1:-} == --check ]]; then
  mode=check
  shift
fi
build=${1:?usage: gen-error-table.sh [--check] BUILD_DIR [OUT]}
out=${2:-$top/docs/parser-errors.md}
check=$build/tests/fuzz/ff-parse-check
[[ -x $check ]] || {
  echo "gen-error-table.sh: $check is missing (build the tests first)" >&2
  exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)
body=$tmp/body.md
: >"$body"
fmt=
status=0

# Markdown table cell: the text inside backticks, pipes escaped.
cell() {
  local s=${1//|/\\|}
  # shellcheck disable=SC2016 # the backticks are Markdown
  printf '`%s`' "$s"
}

# row WHAT TEXT [ok]: TEXT (printf %b escapes: \n, \x00) saved as
# bad.conf and checked as $fmt; the message goes into the table.
row() {
  local what=$1 text=$2 want=${3:-fail} msg rc=0
  printf '%b' "$text" >"$tmp/bad.conf"
  msg=$(cd "$tmp" && "$check" "$fmt" bad.conf) || rc=$?
  msg=${msg//$tmp\//}
  if [[ $want == ok && $rc != 0 ]] || [[ $want != ok && $rc != 1 ]]; then
    echo "gen-error-table.sh: $fmt: '$what' gave (exit $rc) $msg" >&2
    status=1
  fi
  [[ $want == ok ]] && msg="(accepted) $msg"
  printf '| %s | %s | %s |\n' "$what" "$(cell "$text")" "$(cell "$msg")" \
    >>"$body"
}

section() {
  fmt=$1
  printf '\n## %s\n\n%s\n\n| what is wrong | input (bad.conf) | message |\n' \
    "$2" "$3" >>"$body"
  printf '|---|---|---|\n' >>"$body"
}

section spec "Farm specs (docs/spec-format.md)" \
  "Checked as \`fusefarm check bad.conf\` does: parsed, then built into a farm (which prints the same message after \`fusefarm check: \`)."
row "syntax: a value is missing" 'seed = ;'
row "syntax: unterminated string" 'device_name = "pv%u;\n'
row "syntax: unclosed list" 'vgs = ({ pvs = 2; }\n'
row "syntax: a stray character on line 3" 'seed = 1;\n\nvgs = ({ pvs = 2; }) }\n'
row "syntax: the same key twice" 'seed = 1;\nseed = 2;'
row "empty file" ''
row "binary garbage" '\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe'
row "binary garbage without a NUL byte" '\xff\xfe\x80\x81 = \x90;'
row "unknown key at the top" 'colour = "red";'
row "a scenario given as a spec" 'name = "s";\nworkloads = ({ type = "pvs"; });'
row "unknown key in a VG group, line 3" 'seed = 1;\nvgs = ({ pvs = 2;\n  bogus = 1; });'
row "unknown key in an LV group" 'vgs = ({ lvs = ({ fill = 0.5; raid = 1; }); });'
row "a key of another group kind" 'blanks = ({ pe_start = "1M"; });'
row "wrong type: string for an integer" 'seed = "7";'
row "wrong type: number for a string" 'device_name = 7;'
row "wrong type: float for a size" 'device_size = 1.5;'
row "wrong type: a group for the VG list" 'vgs = { pvs = 1; };'
row "wrong type: a number in the VG list" 'vgs = ( 5 );'
row "wrong type: string for a fraction" 'vgs = ({ lvs = ({ fill = "half"; }); });'
row "wrong type: devices not a list" 'blanks = ({ devices = "d0"; });'
row "out of range: pvs = 0" 'vgs = ({ pvs = 0; });'
row "out of range: mda_copies = 3" 'vgs = ({ mda_copies = 3; });'
row "bad value: no PV of the VG with a metadata area" 'vgs = ({ pvs = 2; mda_copies = [0, 0]; });'
row "bad value: mda_copies list of the wrong length" 'vgs = ({ pvs = 3; mda_copies = [1, 0]; });'
row "unsupported: PVs without a metadata area at another pe_start" 'vgs = ({ pvs = 2; mda_copies = [1, 0]; metadatasize = "4M"; });'
row "missing: the mdas lvm ignored below vg_mda_copies" 'vgs = ({ pvs = 2; vg_mda_copies = 1; });'
row "bad value: ignored_mdas of the wrong length" 'vgs = ({ pvs = 3; vg_mda_copies = 1; ignored_mdas = ["0:0"]; });'
row "bad value: vg_mda_copies lvm does not take" 'vgs = ({ vg_mda_copies = "some"; });'
row "bad value: a system ID lvm refuses" 'system_id = "$$";'
row "bad value: a system ID lvm would change" 'vgs = ({ system_id = "a b"; });'
row "bad value: a system ID starting localhost" 'vgs = ({ system_id = "localhost2"; });'
row "bad value: max_pv below the VG's PVs" 'vgs = ({ pvs = 3; max_pv = 2; });'
row "bad value: max_lv below the VG's LVs" 'vgs = ({ max_lv = 1; lvs = ({ count = 2; size = "4M"; }); });'
row "bad enum: VG allocation policy inherit" 'vgs = ({ alloc = "inherit"; });'
row "bad enum: VG allocation policy" 'vgs = ({ alloc = "nearest"; });'
row "bad enum: LV permission" 'vgs = ({ lvs = ({ size = "4M"; permission = "w"; }); });'
row "bad value: LV minor out of lvm's range" 'vgs = ({ lvs = ({ size = "4M"; minor = 1048576; }); });'
row "bad value: LV major out of lvm's range" 'vgs = ({ lvs = ({ size = "4M"; minor = 1; major = 4096; }); });'
row "missing: LV major without minor" 'vgs = ({ lvs = ({ size = "4M"; major = 253; }); });'
row "bad value: LV read_ahead not in sectors" 'vgs = ({ lvs = ({ size = "4M"; read_ahead = "100b"; }); });'
row "not supported: LV flags of a raid LV" 'vgs = ({ pvs = 2; lvs = ({ size = "4M"; type = "raid1"; activation_skip = true; }); });'
row "out of range: label_sector = 4" 'orphans = ({ label_sector = 4; });'
row "out of range: count too large" 'blanks = ({ count = 2000000; });'
row "out of range: fill above 1" 'vgs = ({ lvs = ({ fill = 1.5; }); });'
row "out of range: negative creation_time" 'creation_time = -1;'
row "bad size: unknown unit" 'device_size = "10Q";'
row "bad size: two-letter unit" 'device_size = "10GB";'
row "bad size: negative" 'device_size = -512;'
row "bad size: not a multiple of 512" 'device_size = 1000;'
row "bad size: fraction" 'device_size = "1.5G";'
row "bad size: extent_size not a power of 2" 'vgs = ({ extent_size = "3M"; });'
row "bad size: pe_start too small" 'vgs = ({ pe_start = 4096; });'
row "bad size: mda0 runs into the data area" 'vgs = ({ mda_size = "2M"; });'
row "bad size: device too small for one extent" 'vgs = ({ device_size = "1M"; });'
row "bad size: orphan too small for two metadata areas" 'orphans = ({ device_size = 65536; pe_start = 36864;\n  mda_size = 32768; mda_copies = 2; });'
row "bad value: a tag with a blank" 'vgs = ({ tags = ["ok", "not ok"]; });'
row "bad value: device_id_type lvm never writes" 'vgs = ({ device_id_type = "devname"; device_ids = ["/dev/sda"]; });'
row "bad size: device_sizes of the wrong length" 'vgs = ({ pvs = 2; device_sizes = ["1G"]; });'
row "bad value: a change of another command" 'vgs = ({ changes = ({ command = "vgrename"; addtag = ["a"]; }); });'
row "missing: the LV of an lvchange" 'vgs = ({ changes = ({ command = "lvchange"; addtag = ["a"]; }); });'
row "bad key: a key of another command in a change" 'vgs = ({ changes = ({ command = "vgchange"; size = "8M"; }); });'
row "refused: lvrename to a name in use" 'vgs = ({ lvs = ({ name = "a"; size = "4M"; }, { name = "b"; size = "4M"; }); changes = ({ command = "lvrename"; lv = "a"; new_name = "b"; }); });'
row "refused: lvextend beyond the free space" 'vgs = ({ device_size = "64M"; lvs = ({ name = "a"; size = "8M"; }); changes = ({ command = "lvextend"; lv = "a"; size = "1G"; }); });'
row "refused: lvchange -p r of a read-only LV" 'vgs = ({ lvs = ({ name = "a"; size = "8M"; permission = "r"; }); changes = ({ command = "lvchange"; lv = "a"; permission = "r"; }); });'
row "not supported: lvextend of a raid1 LV" 'vgs = ({ pvs = 2; lvs = ({ name = "m"; type = "raid1"; size = "8M"; }); changes = ({ command = "lvextend"; lv = "m"; size = "16M"; }); });'
row "not supported: lvremove of an external origin" 'vgs = ({ lvs = ({ name = "p"; type = "thin-pool"; size = "8M"; }, { name = "l"; size = "8M"; permission = "r"; }, { name = "x"; type = "thin"; pool = "p"; origin = "l"; }); changes = ({ command = "lvremove"; lv = "l"; }); });'
row "refused: lvcreate --cachevol with --cachemode" 'vgs = ({ lvs = ({ name = "f"; size = "8M"; }, { type = "cache"; cachevol = "f"; size = "8M"; cachemode = "writeback"; }); });'
row "refused: pvmove of a PV with nothing on it" 'vgs = ({ pvs = 2; lvs = ({ size = "4M"; placement = ( ["1:0"] ); }); changes = ({ command = "pvmove"; pv = 0; }); });'
row "refused: writecache fua and nofua" 'vgs = ({ changes = ({ command = "lvconvert"; type = "writecache"; lv = "a"; cachevol = "b"; cachesettings = ["fua=1", "nofua=1"]; }); });'
row "bad value: a writecache setting lvm does not know" 'vgs = ({ changes = ({ command = "lvconvert"; type = "writecache"; lv = "a"; cachevol = "b"; cachesettings = ["frob=1"]; }); });'
row "refused: lvrename to a historical LV's name" 'vgs = ({ lvs = ({ name = "p"; type = "thin-pool"; size = "8M"; }, { name = "t"; type = "thin"; pool = "p"; size = "8M"; }, { name = "s"; type = "thin"; origin = "t"; }, { name = "l"; size = "4M"; }); changes = ({ command = "lvremove"; lv = "t"; record_lvs_history = true; }, { command = "lvrename"; lv = "l"; new_name = "t"; }); });'
row "not supported: a second thin snapshot of one origin" 'vgs = ({ lvs = ({ name = "p"; type = "thin-pool"; size = "8M"; }, { name = "t"; type = "thin"; pool = "p"; size = "8M"; }, { name = "s"; type = "thin"; origin = "t"; }, { name = "s2"; type = "thin"; origin = "t"; }); });'
row "bad value: a cache setting that is not NAME=NUMBER" 'vgs = ({ lvs = ({ type = "cache-pool"; size = "8M"; cachesettings = ["migration_threshold"]; }); });'
row "conflict: pvcreate options and the layout" 'vgs = ({ dataalignment = "4M"; pe_start = "4M"; });'
row "bad size: alignment offset beyond the alignment" 'vgs = ({ dataalignment = "1M"; dataalignmentoffset = "2M"; });'
row "bad size: bootloader area fills the device" 'vgs = ({ device_size = "8M"; bootloaderareasize = "8M"; });'
row "huge number: integer beyond 64 bits" 'seed = 99999999999999999999;'
row "huge number: integer beyond 32 bits without L" 'device_size = 4294967296;'
row "huge number: size beyond 64 bits" 'device_size = "99999999999999999999";'
row "huge number: 16E overflows" 'device_size = "16E";'
row "huge number: LV larger than its VG" 'vgs = ({ device_size = "8M"; lvs = ({ size = "1T"; }); });'
row "missing: neither size nor fill" 'vgs = ({ lvs = ({ name = "data"; }); });'
row "missing: signature type" 'signatures = ({ count = 1; });'
row "missing: device_name has no %u" 'device_name = "disk";'
row "bad enum: damage" 'vgs = ({ pvs = 2; damage = "on-fire"; });'
row "bad enum: orphan damage" 'orphans = ({ damage = "missing-pv"; });'
row "bad enum: LV type" 'vgs = ({ lvs = ({ type = "raid7"; fill = 1; }); });'
row "bad enum: LV allocation policy" 'vgs = ({ lvs = ({ alloc = "nearest"; fill = 1; }); });'
row "bad enum: signature type" 'signatures = ({ type = "ntfs"; });'
row "bad value: UUID too short" 'vgs = ({ uuid = "abc"; });'
row "bad value: VG name format with %s" 'vgs = ({ name = "vg%s"; });'
row "bad value: invalid VG name" 'vgs = ({ name = "-vg"; });'
row "huge number: name format field width" 'vgs = ({ name = "vg%0999999999u"; });'
row "bad value: devices list of the wrong length" 'vgs = ({ pvs = 2; devices = ["a"]; });'
row "bad value: more stripes than PVs" 'vgs = ({ pvs = 2; lvs = ({ type = "striped"; stripes = 3; fill = 1; }); });'
row "no room: contiguous policy, no free area large enough" 'vgs = ({ pvs = 2; device_size = "13M";\n  lvs = ({ size = "8M"; }, { size = "16M"; alloc = "contiguous"; }); });'
row "no room: normal policy, stripes on distinct PVs" 'vgs = ({ pvs = 2; device_size = "13M";\n  lvs = ({ size = "8M"; }, { type = "striped"; size = "16M"; }); });'
row "mirror/raid: more images than PVs" 'vgs = ({ pvs = 2; lvs = ({ type = "raid5"; size = "8M"; }); });'
row "mirror/raid: mirrors on a striped raid" 'vgs = ({ pvs = 3; lvs = ({ type = "raid5"; mirrors = 2; size = "8M"; }); });'
row "mirror/raid: raid10 has two copies" 'vgs = ({ pvs = 6; lvs = ({ type = "raid10"; mirrors = 2; size = "8M"; }); });'
row "mirror/raid: stripes on raid1" 'vgs = ({ pvs = 3; lvs = ({ type = "raid1"; stripes = 2; size = "8M"; }); });'
row "mirror/raid: raid6 needs 3 stripes" 'vgs = ({ pvs = 5; lvs = ({ type = "raid6"; stripes = 2; size = "8M"; }); });'
row "mirror/raid: region_size not a power of 2" 'vgs = ({ pvs = 2; lvs = ({ type = "raid1"; region_size = "3M"; size = "8M"; }); });'
row "mirror/raid: region_size below the page size" 'vgs = ({ pvs = 2; lvs = ({ type = "mirror"; region_size = "2K"; size = "8M"; }); });'
row "mirror/raid: mirrored log" 'vgs = ({ pvs = 2; lvs = ({ type = "mirror"; mirror_log = "mirrored"; size = "8M"; }); });'
row "mirror/raid: unknown mirror log" 'vgs = ({ pvs = 2; lvs = ({ type = "mirror"; mirror_log = "ram"; size = "8M"; }); });'
row "mirror/raid: mirror_log on raid" 'vgs = ({ pvs = 2; lvs = ({ type = "raid1"; mirror_log = "core"; size = "8M"; }); });'
row "mirror/raid: nosync on raid6" 'vgs = ({ pvs = 5; lvs = ({ type = "raid6"; nosync = true; size = "8M"; }); });'
row "mirror/raid: a mirror key on a linear LV" 'vgs = ({ lvs = ({ nosync = true; size = "8M"; }); });'
row "mirror/raid: uuids of the wrong length" 'vgs = ({ pvs = 2; lvs = ({ type = "raid1"; uuids = ["wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5"]; size = "8M"; }); });'
row "mirror/raid: write_times on a core-log mirror" 'vgs = ({ pvs = 2; lvs = ({ type = "mirror"; mirror_log = "core";\n  write_times = [1, 2]; size = "8M"; }); });'
row "mirror/raid: descriptions on a linear LV" 'vgs = ({ lvs = ({ descriptions = ["a", "b"]; size = "8M"; }); });'
row "mirror/raid: write_times not two" 'vgs = ({ pvs = 2; lvs = ({ type = "raid1"; write_times = [1]; size = "8M"; }); });'
row "mirror/raid: placement" 'vgs = ({ pvs = 2; lvs = ({ type = "raid1"; placement = ( ["0:0"] ); }); });'
row "mirror/raid: no room for a raid image" 'vgs = ({ pvs = 2; device_size = "13M";\n  lvs = ({ size = "8M"; }, { type = "raid1"; size = "4M"; }); });'
row "mirror/raid: a name a sub-LV could have" 'vgs = ({ pvs = 2; lvs = ({ name = "lv"; type = "raid1"; size = "8M"; },\n  { name = "lv_rimage_0"; size = "4M"; }); });'
row "thin: pool chunk_size below 64 KiB" 'vgs = ({ lvs = ({ type = "thin-pool"; chunk_size = "32K"; size = "16M"; }); });'
row "thin: pool chunk_size not a multiple of 64 KiB" 'vgs = ({ lvs = ({ type = "thin-pool"; chunk_size = "96K"; size = "16M"; }); });'
row "thin: unknown discards" 'vgs = ({ lvs = ({ type = "thin-pool"; discards = "sometimes"; size = "16M"; }); });'
row "thin: a striped pool over more PVs than the VG has" 'vgs = ({ pvs = 2; lvs = ({ type = "thin-pool"; stripes = 3; size = "16M"; }); });'
row "pools: a later pool's metadata larger than the spare" 'vgs = ({ device_size = "256M"; lvs = ({ type = "thin-pool"; size = "16M"; }, { type = "cache-pool"; size = "16M"; }); });'
row "thin: pool uuids for a pool that makes the spare" 'vgs = ({ lvs = ({ type = "thin-pool"; size = "8M";
  uuids = ["wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5", "wJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI6"]; }); });'
row "thin: write_times of a pool are three" 'vgs = ({ lvs = ({ type = "thin-pool"; size = "8M"; write_times = [1, 2]; }); });'
row "thin: a thin LV without pool" 'vgs = ({ lvs = ({ type = "thin"; size = "8M"; }); });'
row "thin: a pool that is not one" 'vgs = ({ lvs = ({ name = "lv"; size = "8M"; },
  { type = "thin"; pool = "lv"; size = "8M"; }); });'
row "thin: a pool made later" 'vgs = ({ lvs = ({ type = "thin"; pool = "pool"; size = "8M"; },
  { name = "pool"; type = "thin-pool"; size = "8M"; }); });'
row "thin: a pool key on a linear LV" 'vgs = ({ lvs = ({ zero = false; size = "8M"; }); });'
row "thin: a name lvm reserves" 'vgs = ({ lvs = ({ name = "x_tmeta"; size = "8M"; }); });'
row "cache: pool chunk_size below 32 KiB" 'vgs = ({ lvs = ({ type = "cache-pool"; chunk_size = "16K"; size = "8M"; }); });'
row "cache: pool chunk_size not a multiple of 32 KiB" 'vgs = ({ lvs = ({ type = "cache-pool"; chunk_size = "48K"; size = "8M"; }); });'
row "cache: unknown cachemode" 'vgs = ({ lvs = ({ type = "cache-pool"; cachemode = "fast"; size = "8M"; }); });'
row "cache: unknown policy" 'vgs = ({ lvs = ({ type = "cache-pool"; policy = "cleaner"; size = "8M"; }); });'
row "cache: a thin pool key on a cache pool" 'vgs = ({ lvs = ({ type = "cache-pool"; zero = false; size = "8M"; }); });'
row "cache: a cache LV without pool" 'vgs = ({ lvs = ({ type = "cache"; size = "8M"; }); });'
row "cache: a pool that is not one" 'vgs = ({ lvs = ({ name = "lv"; size = "8M"; },
  { type = "cache"; pool = "lv"; size = "8M"; }); });'
row "cache: a pool that caches an LV already" 'vgs = ({ lvs = ({ name = "p"; type = "cache-pool"; size = "8M"; },
  { name = "a"; type = "cache"; pool = "p"; size = "4M"; },
  { type = "cache"; pool = "p"; size = "4M"; }); });'
row "cache: a cache key on a linear LV" 'vgs = ({ lvs = ({ cachemode = "writeback"; size = "8M"; }); });'
row "cache: lvconvert without pool" 'vgs = ({ changes = ({ command = "lvconvert"; lv = "a"; }); });'
row "cache: lvconvert of a raid LV" 'vgs = ({ pvs = 2; lvs = ({ name = "r"; type = "raid1"; size = "8M"; },
  { name = "p"; type = "cache-pool"; size = "8M"; }); changes = ({ command = "lvconvert"; lv = "r"; pool = "p"; }); });'
row "cache: a name lvm reserves" 'vgs = ({ lvs = ({ name = "x_cpool"; size = "8M"; }); });'
row "snapshot: no origin" 'vgs = ({ lvs = ({ type = "snapshot"; size = "8M"; }); });'
row "snapshot: chunk_size out of range" 'vgs = ({ lvs = ({ name = "lv"; size = "8M"; },
  { type = "snapshot"; origin = "lv"; chunk_size = "1M"; size = "8M"; }); });'
row "snapshot: of a snapshot" 'vgs = ({ lvs = ({ name = "lv"; size = "8M"; },
  { name = "s1"; type = "snapshot"; origin = "lv"; size = "4M"; },
  { name = "s2"; type = "snapshot"; origin = "s1"; size = "4M"; }); });'
row "snapshot: of a raid LV" 'vgs = ({ pvs = 2; lvs = ({ name = "r"; type = "raid1"; size = "8M"; },
  { type = "snapshot"; origin = "r"; size = "4M"; }); });'
row "snapshot: smaller than 3 chunks" 'vgs = ({ extent_size = "4K"; lvs = ({ name = "lv"; size = "8M"; },
  { type = "snapshot"; origin = "lv"; chunk_size = "8K"; size = "16K"; }); });'
row "snapshot: a name lvm reserves" 'vgs = ({ lvs = ({ name = "snapshot1"; size = "8M"; }); });'
row "type not supported yet" 'vgs = ({ lvs = ({ type = "cache"; size = "8M"; }); });'
row "bad value: placement range syntax" 'vgs = ({ lvs = ({ placement = ( ["0-1"] ); }); });'
row "bad value: placement range backwards" 'vgs = ({ lvs = ({ placement = ( ["0:2-1"] ); }); });'
row "bad value: placement PV not in the VG" 'vgs = ({ pvs = 2; lvs = ({ placement = ( ["2:0-1"] ); }); });'
row "bad value: placement ranges per stripe" 'vgs = ({ pvs = 2; lvs = ({ type = "striped";\n  placement = ( ["0:0-1"] ); }); });'
row "bad value: placement stripes of unequal length" 'vgs = ({ pvs = 2; lvs = ({ type = "striped";\n  placement = ( ["0:0-1", "1:0"] ); }); });'
row "bad value: placement with fill" 'vgs = ({ lvs = ({ fill = 0.5; placement = ( ["0:0"] ); }); });'
row "bad value: placement for several LVs" 'vgs = ({ lvs = ({ count = 2; placement = ( ["0:0"] ); }); });'
row "bad value: placement past the PV's end" 'vgs = ({ device_size = "13M"; lvs = ({ placement = ( ["0:2-3"] ); }); });'
row "bad value: placement on another LV's extents" 'vgs = ({ lvs = ({ name = "a"; size = "8M"; },\n  { placement = ( ["0:0"],\n    ["0:1-4"] ); }); });'
row "bad value: size and placement disagree" 'vgs = ({ lvs = ({ size = "4M"; placement = ( ["0:0-1"] ); }); });'
row "bad value: seqno below 1 + LVs" 'vgs = ({ seqno = 1; lvs = ({ fill = 0.5; }); });'
row "bad value: damage that needs two PVs" 'vgs = ({ damage = "missing-pv"; });'
row "bad value: metadata larger than its area" 'vgs = ({ pe_start = 36864; mda_size = 32768; lvs = ({ count = 90; fill = 0.01; }); });'
row "duplicate: VG name" 'vgs = ({ count = 2; name = "v%u"; },\n  { name = "v1"; });'
row "duplicate: device name" 'orphans = ({ count = 1; });\nblanks = ({ devices = ["pv0000"]; });'
row "duplicate: LV name" 'vgs = ({ lvs = ({ name = "a"; fill = 0.1; },\n  { name = "a"; fill = 0.1; }); });'
row "duplicate: a name format without %u for count > 1" 'vgs = ({ count = 2; name = "same"; });'

section profile "I/O profiles (docs/profile-format.md)" \
  "Loaded for the built-in default farm (devices pv0000 to pv0013), as \`fusefarm mount --profile bad.conf\` loads one."
row "syntax: a value is missing" 'name = ;'
row "syntax: unclosed group" 'groups = ({ read = { dist = "fixed"; value = "1ms"; };\n'
row "syntax: the same key twice" 'seed = 1;\nseed = 2;'
row "empty file (every default: the ideal profile)" '' ok
row "binary garbage" '\x00\x01\x02\xff\xfe\xfd'
row "unknown key at the top" 'nmae = "x";'
row "a farm spec given as a profile" 'seed = 1;\nvgs = ({ pvs = 2; });'
row "unknown key in a group, line 2" 'groups = ({\n  colour = 1; });'
row "unknown key in a distribution" 'groups = ({ read = { dist = "lognormal"; value = "4ms"; }; });'
row "unknown key in a queue" 'queue = { depth = 2; service = "1ms"; lanes = 1; };'
row "unknown key in faults" 'groups = ({ faults = { crash = true; }; });'
row "wrong type: integer for a bool" 'rotational = 1;'
row "wrong type: string for an integer" 'seed = "x";'
row "wrong type: a group for the group list" 'groups = { a = 1; };'
row "wrong type: a number in the group list" 'groups = ( 1 );'
row "wrong type: a string for a distribution" 'groups = ({ read = "1ms"; });'
row "wrong type: a number for a duration" 'groups = ({ faults = { vanish_at = 30; }; });'
row "wrong type: a number for devices" 'groups = ({ devices = 3; });'
row "out of range: fraction above 1" 'groups = ({ fraction = 1.5; });'
row "out of range: negative iops" 'groups = ({ iops = -1; });'
row "out of range: eio_rate above 1" 'groups = ({ faults = { eio_rate = 2.0; }; });'
row "out of range: negative vanish_after" 'groups = ({ faults = { vanish_after = -1; }; });'
row "wrong type: a string for a count" 'groups = ({ faults = { eio_after = "10"; }; });'
row "out of range: queue depth 0" 'queue = { depth = 0; service = "1ms"; };'
row "out of range: depth x shards" 'groups = ({ queue = { depth = 65536; service = "1ms"; shards = 65536; }; });'
row "out of range: pareto alpha 0" 'groups = ({ read = { dist = "pareto"; scale = "1ms"; alpha = 0; }; });'
row "bad duration: no unit" 'groups = ({ spinup = "1.5"; });'
row "bad duration: unknown unit" 'groups = ({ write = { dist = "fixed"; value = "4xs"; }; });'
row "bad duration: negative" 'groups = ({ spinup = "-1ms"; });'
row "bad size: unknown unit" 'groups = ({ bandwidth = "200Q"; });'
row "bad value: median not below p99" 'groups = ({ read = { dist = "lognormal"; median = "20ms"; p99 = "4ms"; }; });'
row "bad value: stall as long as its period" 'groups = ({ stall = { every = "1s"; duration = "1s"; }; });'
row "bad value: min above max" 'groups = ({ read = { dist = "uniform"; min = "2ms"; max = "1ms"; }; });'
row "bad value: two parameterisations" 'groups = ({ read = { dist = "normal"; mean = "1ms"; stddev = "1ms"; median = "1ms"; p99 = "2ms"; }; });'
row "bad value: empty name" 'name = "";'
row "bad value: eio range of length 0" 'groups = ({ faults = { eio_ranges = ( ["0", "0"] ); }; });'
row "bad value: eio range not a pair" 'groups = ({ faults = { eio_ranges = ( ["0"] ); }; });'
row "missing: dist" 'groups = ({ read = { median = "1ms"; p99 = "2ms"; }; });'
row "missing: fixed value" 'groups = ({ read = { dist = "fixed"; }; });'
row "missing: p99 for median" 'groups = ({ read = { dist = "pareto"; median = "4ms"; }; });'
row "missing: queue service" 'groups = ({ queue = { depth = 2; }; });'
row "missing: stall duration" 'groups = ({ stall = { every = "1s"; }; });'
row "bad enum: distribution" 'groups = ({\n  read = { dist = "gamma"; };\n});'
row "bad device: not in the farm" 'groups = ({ devices = ["pv0001", "pv9999"]; });'
row "bad device: glob matches nothing" 'groups = ({ devices = "zz*"; });'
row "bad device: empty list" 'groups = ({ devices = []; });'
row "huge number: duration with too many digits" 'groups = ({ spinup = "99999999999999999999ms"; });'
row "huge number: duration beyond 10^18 ns" 'groups = ({ spinup = "99999999999m"; });'
row "huge number: integer beyond 64 bits" 'seed = 99999999999999999999;'

section scenario "Scenarios (docs/scenario-format.md)" \
  "Loaded as \`fusefarm run bad.conf\` loads one (relative paths resolve against the scenario's directory; it is shown here as bad.conf)."
row "syntax: unclosed list" 'workloads = ({ type = "pvs"; }\n'
row "syntax: a value is missing" 'name = ;\nworkloads = ({ type = "pvs"; });'
row "syntax: the same key twice" 'name = "a";\nname = "b";\nworkloads = ({ type = "pvs"; });'
row "empty file" ''
row "binary garbage" '\xde\xad\xbe\xef\x00\x01'
row "unknown key at the top" 'colour = 1;\nworkloads = ({ type = "pvs"; });'
row "a farm spec given as a scenario" 'seed = 1;\nvgs = ({ pvs = 2; });'
row "a run document given as a scenario" '{ "format": "fusefarm-run", "version": 1 }'
row "unknown key in a workload" 'workloads = ({ type = "pvs"; speed = 2; });'
row "unknown key in a matrix axis" 'matrix = ({ key = "global/use_aio"; values = [0]; step = 1; });\nworkloads = ({ type = "pvs"; });'
row "wrong type: workloads not a list" 'workloads = { type = "pvs"; };'
row "wrong type: a number in the workload list" 'workloads = ( 1 );'
row "wrong type: integer for a string" 'name = 5;\nworkloads = ({ type = "pvs"; });'
row "wrong type: matrix not a list" 'matrix = { key = "global/use_aio"; };\nworkloads = ({ type = "pvs"; });'
row "wrong type: a float matrix value" 'matrix = ({ key = "global/use_aio"; values = [0.5]; });\nworkloads = ({ type = "pvs"; });'
row "wrong type: aio_contention not a group" 'aio_contention = 1;\nworkloads = ({ type = "pvs"; });'
row "out of range: repeat = 0" 'workloads = ({ type = "pvs"; repeat = 0; });'
row "bad value: repeat neither a number nor auto" 'workloads = ({ type = "pvs"; repeat = "often"; });'
row "repeat = \"auto\"" 'workloads = ({ type = "pvs"; repeat = "auto"; });' ok
row "bad value: repeat_budget not a duration" 'repeat_budget = "soon";\nworkloads = ({ type = "pvs"; repeat = "auto"; });'
row "out of range: repeat_max_rounds below the 4 the verdict needs" 'repeat_max_rounds = 2;\nworkloads = ({ type = "pvs"; repeat = "auto"; });'
row "out of range: devices = 0" 'devices = 0;\nworkloads = ({ type = "pvs"; });'
row "out of range: aio share above 1" 'aio_contention = { share = 1.5; };\nworkloads = ({ type = "pvs"; });'
row "out of range: aio_contention axis value 2" 'matrix = ({ key = "fusefarm/aio_contention"; values = [2]; });\nworkloads = ({ type = "pvs"; });'
row "out of range: more than 10000 configurations" 'matrix = ({ key = "a/b"; values = [1,2,3,4,5,6,7,8,9,10,11]; },\n  { key = "a/c"; values = [1,2,3,4,5,6,7,8,9,10,11]; },\n  { key = "a/d"; values = [1,2,3,4,5,6,7,8,9,10,11]; },\n  { key = "a/e"; values = [1,2,3,4,5,6,7,8,9,10,11]; });\nworkloads = ({ type = "pvs"; });'
row "bad duration: spread without unit" 'workloads = ({ type = "event-activation"; spread = "2"; });'
row "bad duration: latency with unknown unit" 'latency = "5 ms";\nworkloads = ({ type = "pvs"; });'
row "missing: workloads" 'name = "x";'
row "missing: workloads is empty" 'workloads = ();'
row "missing: workload type" 'workloads = ({ repeat = 2; });'
row "missing: matrix values" 'matrix = ({ key = "global/use_aio"; });\nworkloads = ({ type = "pvs"; });'
row "missing: matrix values empty" 'matrix = ({ key = "global/use_aio"; values = []; });\nworkloads = ({ type = "pvs"; });'
row "bad enum: workload type" 'workloads = ({ type = "fsck"; });'
row "bad enum: attach method" 'attach = "iscsi";\nworkloads = ({ type = "pvs"; });'
row "bad enum: fence" 'fence = "none-at-all";\nworkloads = ({ type = "pvs"; });'
row "bad enum: dev_names" 'dev_names = "nvme";\nworkloads = ({ type = "pvs"; });'
row "bad value: fusefarm/fence" 'matrix = ({ key = "fusefarm/fence"; values = ["none", "lvmetad"]; });\nworkloads = ({ type = "pvs"; });'
row "bad enum: runner setting" 'matrix = ({ key = "fusefarm/colour"; values = [0]; });\nworkloads = ({ type = "pvs"; });'
row "bad value: matrix key not SECTION/NAME" 'matrix = ({ key = "use_aio"; values = [0]; });\nworkloads = ({ type = "pvs"; });'
row "bad value: lv not VG/LV" 'workloads = ({ type = "lvchange"; lv = "novg"; });'
row "missing: io target" 'workloads = ({ type = "io"; rw = "randread"; });'
row "bad enum: io rw" 'workloads = ({ type = "io"; target = "pv0001";\n  rw = "trim"; });'
row "bad enum: io ioengine" 'workloads = ({ type = "io"; target = "pv0001";\n  ioengine = "mmap"; });'
row "bad value: io bs not whole sectors with direct" 'workloads = ({ type = "io"; target = "pv0001";\n  bs = 1000; });'
row "bad value: io size not a multiple of bs" 'workloads = ({ type = "io"; target = "pv0001";\n  size = "6K"; });'
row "bad value: io iodepth" 'workloads = ({ type = "io"; target = "pv0001";\n  iodepth = 2048; });'
row "bad value: io runtime under 1 s" 'workloads = ({ type = "io"; target = "pv0001";\n  runtime = "500ms"; });'
row "bad value: io key on another workload" 'workloads = ({ type = "pvs"; bs = "4K"; });'
row "bad enum: fs fstype" 'workloads = ({ type = "fs"; target = "pv0001";\n  fstype = "btrfs"; });'
row "bad value: fs mount_options with a blank" 'workloads = ({ type = "fs"; target = "pv0001";\n  mount_options = "logbufs=8, logbsize=256k"; });'
row "bad value: fs mkfs_options with a quote" 'workloads = ({ type = "fs"; target = "pv0001";\n  mkfs_options = "-L \\"my fs\\""; });'
row "bad value: fs key on an io workload" 'workloads = ({ type = "io"; target = "pv0001"; nrfiles = 4; });'
row "bad value: fusefarm/target axis value" 'matrix = ({ key = "fusefarm/target"; values = ["pv0001", "a/b/c"]; });\nworkloads = ({ type = "io"; target = "pv0001"; });'
row "bad value: fusefarm/transport axis value" 'matrix = ({ key = "fusefarm/transport"; values = ["scsi", "iscsi"]; });\nworkloads = ({ type = "io"; target = "pv0001"; });'
row "bad value: fusefarm/mount_options axis with no fs workload" 'matrix = ({ key = "fusefarm/mount_options"; values = ["logbufs=8"]; });\nworkloads = ({ type = "io"; target = "pv0001"; });'
row "bad value: concurrency for a scan" 'workloads = ({ type = "pvs"; concurrency = 4; });'
row "bad value: profile and latency" 'profile = "a.conf";\nlatency = "1ms";\nworkloads = ({ type = "pvs"; });'
row "bad value: spec and farm" 'spec = "a.conf";\nfarm = "seed = 1;";\nworkloads = ({ type = "pvs"; });'
row "bad value: a quote in a matrix value" 'matrix = ({ key = "devices/filter"; values = ["a\\"b"]; });\nworkloads = ({ type = "pvs"; });'
row "duplicate: workload name" 'workloads = ({ type = "pvs"; },\n  { type = "pvs"; });'
row "duplicate: matrix axis" 'matrix = ({ key = "global/use_aio"; values = [0]; },\n  { key = "global/use_aio"; values = [1]; });\nworkloads = ({ type = "pvs"; });'
row "huge number: devices beyond 64 bits" 'devices = 99999999999999999999;\nworkloads = ({ type = "pvs"; });'
row "huge number: repeat beyond int" 'workloads = ({ type = "pvs"; repeat = 9999999999; });'

{
  cat <<'EOF'
# Parser errors

What the spec, profile and scenario parsers say about bad input: every
message names the file, the line and the key path (`file:line: key:
what was expected`), or the file alone when the problem is the whole file
(it is empty, or two groups clash).  Generated by
`tests/fuzz/gen-error-table.sh BUILD_DIR` from real runs of the parsers
(`ff-parse-check`, built with the tests); do not edit by hand.  The ctest
test `fuzz/error-table` checks that this page is current.  Inputs are
written with `\n` for a newline and `\xNN` for a raw byte.

The fuzz targets that throw random input at the same parsers are
described in [fuzzing.md](fuzzing.md).
EOF
  cat "$body"
} >"$tmp/out.md"
if [[ $mode == check ]]; then
  if ! diff -u "$out" "$tmp/out.md"; then
    echo "gen-error-table.sh: $out is out of date: run" \
      "tests/fuzz/gen-error-table.sh BUILD_DIR" >&2
    status=1
  fi
elif [[ $out == - ]]; then
  cat "$tmp/out.md"
else
  cp "$tmp/out.md" "$out"
fi
exit "$status"
