#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tcg_textpoke.sh: show that the guest kernel can oops on its own text
# patching under multi-threaded QEMU TCG, with no pmcring module loaded.
#
# Static keys and tracepoints are switched with text_poke_bp(): an int3 is
# written over the instruction, the rest is patched, the first byte is
# restored, and an IPI to every CPU makes the change visible.  Under
# multi-threaded TCG a vCPU can still run a translation of the int3 after
# the patch is complete; poke_int3_handler() then finds no patch in
# progress and the kernel dies with "Oops: int3" (seen in __schedule and in
# syscall_exit_to_user_mode_prepare, on 6.1 and 6.12), or, where
# kprobe_int3_handler() backs up onto the vanished int3, loops on it for
# ever (the 6.1 hang of cli_matrix; selftests/lib-hard/tcg_hang.sh).  The
# QEMU race is fixed in QEMU 8.1 (Documentation/testing.rst).  pmcring's
# sessions register tracepoints and perf counters, so its suite flips these
# keys hundreds of times; vmrun therefore runs 6.12 guests with one TCG
# thread (Documentation/testing.rst).  This script is the evidence:
#
#   selftests/lib-hard/tcg_textpoke.sh [--runs N] [vmrun options]
#
# runs N (default 3) VMs that flip perf's sched keys (textpoke_flip) and
# the sched_switch/sys_exit tracepoints (tracefs) beside the workload, and
# counts the runs that oopsed or hung.  VM_ACCEL=tcg,thread=single to compare.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=3
if [ "${1:-}" = --runs ]; then RUNS=$2; shift 2; fi
DIR=$TOP/build/tcg-textpoke
mkdir -p "$DIR"
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -static \
	-o "$DIR/textpoke_flip" "$TOP/selftests/lib-hard/textpoke_flip.c"
cat >"$DIR/guest.sh" <<'GUEST'
#!/bin/sh
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo 0 >/sys/kernel/tracing/tracing_on
T=/sys/kernel/tracing/events
pmcring-workload -d 900 -t 2 >/dev/null 2>&1 &
load=$!
(
	while :; do
		echo 1 >$T/sched/sched_switch/enable
		echo 1 >$T/raw_syscalls/sys_exit/enable
		usleep 300000
		echo 0 >$T/sched/sched_switch/enable
		echo 0 >$T/raw_syscalls/sys_exit/enable
		usleep 200000
	done
) &
flip=$!
"$(dirname "$0")/textpoke_flip" "${ROUNDS:-250}"
rc=$?
kill $flip $load
exit $rc
GUEST
chmod +x "$DIR/guest.sh"
oops=0
hung=0
for i in $(seq "$RUNS"); do
	log=$DIR/run$i.log
	rc=0
	"$TOP/selftests/vmrun" --no-module --share "$DIR" --timeout 600 "$@" \
		-- "$DIR/guest.sh" >"$log" 2>&1 || rc=$?
	if grep -q 'int3: 0000' "$log"; then
		oops=$((oops + 1))
		echo "run $i: Oops: int3 at $(grep -m1 -o 'RIP: 0010:[^ ]*' "$log")"
	elif [ "$rc" = 124 ]; then
		# 6.1 loops on the stale int3 instead: tcg_hang.sh shows where
		hung=$((hung + 1))
		echo "run $i: hung (vmrun timeout), no oops"
	else
		echo "run $i: exit $rc, no oops"
	fi
done
echo "tcg_textpoke: $oops of $RUNS runs oopsed, $hung hung (accel ${VM_ACCEL:-vmrun default})"
