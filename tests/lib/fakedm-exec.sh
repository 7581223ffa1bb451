#!/bin/sh
# fakedm-exec.sh CMD ARGS...: run CMD with the fake device-mapper
# (tests/lib/fakedm.c) in a private /dev.  Run it inside a private mount
# namespace (ff_lvm_exec's, or unshare -m): it covers /dev with a tmpfs
# holding the basic nodes, an empty mapper/ and the env's loops
# (FF_FAKEDM_LOOPS: "DEV<TAB>FILE" lines), then execs CMD (found in
# FF_FAKEDM_REAL_PATH) with FF_FAKEDM_SO preloaded.  Invoked as `lvm`
# (ff_fakedm_lvm's PATH entry, tests/lib/fakedm.sh) it runs lvm.
set -eu
if [ "${0##*/}" = lvm ]; then
	set -- lvm "$@"
fi
# the loops' numbers, read before /dev is covered
nodes=
while IFS='	' read -r dev _; do
	[ -n "$dev" ] || continue
	nodes="$nodes $dev:$(stat -L -c '%t:%T' "$dev")"
done <"$FF_FAKEDM_LOOPS"
mount -t tmpfs -o mode=0755 ff-fakedm-dev /dev
# lvm looks for the dm-cache policy modules (module_present: a directory
# /sys/module/dm_cache_smq, else modprobe) and writes policy = "mq" for a
# cache whose kernel has no smq; a distribution kernel has dm-cache-smq
# (and dm-cache-mq as its alias), so they are there, beside the real ones
mods=$(ls /sys/module)
mount -t tmpfs -o mode=0755 ff-fakedm-sysmod /sys/module
for m in $mods dm_cache dm_cache_smq dm_cache_mq; do
	mkdir -p "/sys/module/$m"
done
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/zero c 1 5
mknod -m 666 /dev/random c 1 8
mknod -m 666 /dev/urandom c 1 9
mkdir /dev/mapper
for n in $nodes; do
	dev=${n%%:*}
	mm=${n#*:}
	mknod -m 660 "$dev" b "$((0x${mm%:*}))" "$((0x${mm#*:}))"
done
PATH=$FF_FAKEDM_REAL_PATH
export PATH
LD_PRELOAD=$FF_FAKEDM_SO exec "$@"
