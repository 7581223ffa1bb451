# shellcheck shell=bash
#
# fakedm.sh: run lvm with the fake device-mapper (tests/lib/fakedm.c, built
# as ff-fakedm.so), for tests that need lvm to create mirror or raid LVs on
# a host whose kernel has no device-mapper.  Source it after lvm-env.sh
# and call ff_env_init first.
#
#   ff_fakedm_init      find the shim ($FF_FAKEDM_SO, else
#                       $FF_BUILD_DIR/tests/ff-fakedm.so) and make
#                       $FF_SCRATCH/fakedm/{bin,dm}
#   ff_fakedm_run CMD ARGS  CMD ARGS in a private mount namespace with
#                       the same /dev and shim as below (no lvm fence:
#                       for tests/lib/fakedm-selftest.py)
#   ff_fakedm_lvm ARGS  ff_lvm ARGS (the same fence: private LVM_SYSTEM_DIR,
#                       /run/lvm, /run/lock/lvm), and besides a private
#                       tmpfs /dev holding null, zero, random, urandom, an
#                       empty mapper/ and the env's loops, with the shim
#                       preloaded; its log is $FF_FAKEDM_LOG (set it
#                       per command or leave ff_fakedm_init's default
#                       $FF_SCRATCH/fakedm/log), its scratch files in
#                       $FF_SCRATCH/fakedm/dm
#
# Why the private /dev: with udev off libdm mknod()s /dev/mapper/VG-LV and
# the /dev/VG/LV links itself; they must not appear in the host's /dev.
# The tmpfs dies with the command's mount namespace, and so does every dm
# device the shim emulated (it keeps them in process memory).
#
# How: ff_fakedm_lvm puts $FF_SCRATCH/fakedm/bin first in PATH, where
# `lvm` is tests/lib/fakedm-exec.sh; ff_lvm_exec runs it as lvm inside the
# fence's namespace, and it mounts the /dev and execs the real lvm.

FF_FAKEDM_SO=${FF_FAKEDM_SO:-}

ff_fakedm_init() {
	[[ -n $FF_SCRATCH ]] || ff_die "ff_fakedm_init: call ff_env_init first"
	local lib
	lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	if [[ -z $FF_FAKEDM_SO ]]; then
		[[ -n ${FF_BUILD_DIR:-} ]] ||
			ff_die "fakedm: set FF_BUILD_DIR to the build tree (its tests/ff-fakedm.so) or FF_FAKEDM_SO"
		FF_FAKEDM_SO=$FF_BUILD_DIR/tests/ff-fakedm.so
	fi
	[[ -f $FF_FAKEDM_SO ]] ||
		ff_die "fakedm: $FF_FAKEDM_SO missing: build the ff-fakedm target (cmake --build BUILD --target ff-fakedm)"
	FF_FAKEDM_SO=$(realpath -- "$FF_FAKEDM_SO")
	ff_require stat mknod realpath
	mkdir -p "$FF_SCRATCH/fakedm/bin" "$FF_SCRATCH/fakedm/dm"
	FF_FAKEDM_LOG=${FF_FAKEDM_LOG:-$FF_SCRATCH/fakedm/log}
	ln -sf "$lib/fakedm-exec.sh" "$FF_SCRATCH/fakedm/bin/lvm"
}

# ff__fakedm_env: export what fakedm-exec.sh and the shim read (call it
# in a subshell).
ff__fakedm_env() {
	export FF_FAKEDM_REAL_PATH=$PATH FF_FAKEDM_LOOPS=$FF_SCRATCH/loops
	export FF_FAKEDM_SO FF_FAKEDM_DIR=$FF_SCRATCH/fakedm/dm FF_FAKEDM_LOG
}

ff_fakedm_lvm() {
	[[ -d ${FF_SCRATCH:-}/fakedm/bin ]] || ff_die "ff_fakedm_lvm: call ff_fakedm_init first"
	(
		ff__fakedm_env
		PATH=$FF_SCRATCH/fakedm/bin:$PATH ff_lvm "$@"
	)
}

ff_fakedm_run() {
	[[ -d ${FF_SCRATCH:-}/fakedm/bin ]] || ff_die "ff_fakedm_run: call ff_fakedm_init first"
	(
		ff__fakedm_env
		exec unshare -m --propagation private -- \
			"$(dirname "${BASH_SOURCE[0]}")/fakedm-exec.sh" "$@"
	)
}
