#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# fuzz_vm.sh: the long, in-VM half of "make fuzz".  Boots one VM with 4
# vCPUs and runs the hardening tests with long settings:
#
#   hard_fuzz_ioctl   HARD_FUZZ_OPS operations (default 1,200,000), as
#                     runs of 120,000 with fresh seeds (each run stays
#                     inside the program's 175 s harness timeout and
#                     checks the module refcount at its end)
#   hard_overload     HARD_OVERLOAD_SECONDS of overload (default 30)
#   hard_hotplug      HARD_HOTPLUG_CYCLES rounds over CPUs 1-3 (default 10)
#   hard_kill.sh      HARD_KILL_ROUNDS SIGKILLs (default 100)
#   hard_lifecycle    HARD_KILL_ROUNDS kills, 10,000-session leak check
#
# then vmrun checks that the module unloads and dmesg is clean.  Needs the
# selftests built and installed (make selftests).  Usage:
#   selftests/lib-hard/fuzz_vm.sh [--kernel VER] [vmrun options]
# Exit status: vmrun's (0 = every test passed, no splat, module unloaded).
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
OPS=${HARD_FUZZ_OPS:-1200000}
SECS=${HARD_OVERLOAD_SECONDS:-30}
CYCLES=${HARD_HOTPLUG_CYCLES:-10}
KILLS=${HARD_KILL_ROUNDS:-100}

[ -x "$TOP/build/kselftest-install/pmcring/hard_fuzz_ioctl" ] || {
	echo "fuzz_vm: build the selftests first (make selftests)" >&2
	exit 2
}

# The guest runs each test from the installed kselftest tree.
exec "$TOP/selftests/vmrun" --cpus 4 --mem 1536 --timeout 3000 \
	--env FUZZ_RUNS=$(( (OPS + 119999) / 120000 )) \
	--env HARD_OVERLOAD_SECONDS="$SECS" \
	--env HARD_HOTPLUG_CYCLES="$CYCLES" \
	--env HARD_KILL_ROUNDS="$KILLS" "$@" -- sh -c '
	cd /kselftest/pmcring || exit 1
	rc=0
	n=0
	start=$(date +%s)
	while [ $n -lt "$FUZZ_RUNS" ]; do
		HARD_FUZZ_OPS=120000 HARD_FUZZ_SEED=$(( $(date +%s) * 1000 + n )) \
			./hard_fuzz_ioctl >/tmp/fuzz.log 2>&1 || { rc=1; cat /tmp/fuzz.log; }
		grep -E "^(not )?ok|operations=|VIOLATION|seed" /tmp/fuzz.log
		n=$((n + 1))
	done
	echo "# fuzz_vm: hard_fuzz_ioctl $n runs of 120000 in $(( $(date +%s) - start ))s"
	for t in hard_overload hard_hotplug hard_kill.sh hard_lifecycle \
		 hard_perm; do
		echo "# fuzz_vm: $t"
		start=$(date +%s)
		./$t; r=$?
		echo "# fuzz_vm: $t exit $r in $(( $(date +%s) - start ))s"
		[ $r = 0 ] || [ $r = 4 ] || rc=1
	done
	exit $rc'
