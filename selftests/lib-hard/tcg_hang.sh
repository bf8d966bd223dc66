#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tcg_hang.sh: reproduce and diagnose the hang of the 6.1 guest under
# multi-threaded QEMU TCG that cli_matrix.sh ran into (issue 14), in a
# loop that does what each of its cells does first: reload pmcring, start a
# recording (kprobes, kretprobes and their twins, tracepoints) beside the
# workload, stop it.
#
#   selftests/lib-hard/tcg_hang.sh [--runs N] [--secs S] [--mode M] [vmrun options]
#
# runs N (default 3) VMs of S seconds (default 240) of such cycles with
# one TCG thread per vCPU (VM_TCG_THREAD overrides), boots with nokaslr and
# gives QEMU a monitor socket.  --mode tracefs does the same text patching
# without pmcring (the module is not loaded): kprobe events on the
# functions pmcring probes and the sched tracepoints, switched on and off
# through tracefs for each cycle, and sched_switch 20 times more.
# --mode matrix runs cli_matrix.sh itself, again and again; a cycle is
# one of its cells.
#
# The guest writes the cycle count to a file in the share after each
# cycle.  When it has not changed for 60 s the script samples every vCPU's
# RIP through the monitor (symbols from the guest's /proc/kallsyms), names
# the address a vCPU keeps taking int3 on and the bytes guest memory holds
# there, checks 60 s later that nothing moved, and then makes QEMU
# translate the guest code afresh ("singlestep on", 2 s, "singlestep
# off": translations are looked up with the single-step flag, so none made
# before is used again).  If the guest then carries on, the vCPU was
# executing a translation of bytes that memory no longer holds: QEMU's,
# not the guest's, state was wrong.  Each run prints one line; the last
# line counts the hangs.  Logs in build/tcg-hang/.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=3
SECS=240
MODE=pmcring
STALL=60
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) RUNS=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--mode) MODE=$2; shift 2 ;;
	*) break ;;
	esac
done
case "$MODE" in
pmcring|matrix) MODOPT=() ;;
tracefs) MODOPT=(--no-module) ;;
*) echo "tcg_hang: --mode pmcring, matrix or tracefs" >&2; exit 2 ;;
esac
command -v python3 >/dev/null || { echo "tcg_hang: needs python3" >&2; exit 2; }
MON="python3 $TOP/selftests/lib-hard/qemu_mon.py"
DIR=$TOP/build/tcg-hang
mkdir -p "$DIR"

cat >"$DIR/guest.sh" <<'GUEST'
#!/bin/sh
# guest.sh MODE SECONDS: reload+record cycles (or tracefs ones) for SECONDS
mode=$1 secs=$2 d=$(dirname "$0")
T=/sys/kernel/tracing
cat /proc/kallsyms >"$d/kallsyms"
echo 0 >"$d/progress"
echo 0 >$T/tracing_on
load=
if [ "$mode" != matrix ]; then	# cli_matrix runs its own
	pmcring-workload -d 100000 -t 2 >/dev/null 2>&1 &
	load=$!
fi
end=$(($(cut -d. -f1 /proc/uptime) + secs))
i=0
while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
	i=$((i + 1))
	case $mode in
	pmcring)
		rmmod pmcring 2>/dev/null
		insmod /lib/vmrun/pmcring.ko || { echo "insmod failed"; exit 1; }
		if [ $((i % 2)) = 0 ]; then
			pmcring record -a --duration 1 -o /tmp/hang.pmc
		else
			pmcring record -o /tmp/hang.pmc -- pmcring-workload -d 1 -t 1
		fi >/dev/null 2>&1
		rm -f /tmp/hang.pmc ;;
	tracefs)
		echo 'p:hang/mmap perf_event_mmap' >>$T/kprobe_events
		echo 'r:hang/munmap __x64_sys_munmap' >>$T/kprobe_events
		echo 'r:hang/mremap __x64_sys_mremap' >>$T/kprobe_events
		echo 1 >$T/events/hang/enable
		for e in sched_switch sched_process_exec sched_process_exit; do
			echo 1 >$T/events/sched/$e/enable
		done
		pmcring-workload -d 1 -t 1 >/dev/null 2>&1
		for e in sched_switch sched_process_exec sched_process_exit; do
			echo 0 >$T/events/sched/$e/enable
		done
		echo 0 >$T/events/hang/enable
		echo >$T/kprobe_events
		# and the hottest site of all, 20 times more
		for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			echo 1 >$T/events/sched/sched_switch/enable
			echo 0 >$T/events/sched/sched_switch/enable
		done ;;
	matrix)
		# the real thing: progress is the number of cells done
		i=$((i - 1))
		/kselftest/pmcring/cli_matrix.sh 2>&1 | while read -r l; do
			echo "$l"
			case $l in
			ok\ *|not\ ok\ *) i=$((i + 1)); echo $i >"$d/progress" ;;
			esac
		done
		i=$(cat "$d/progress")
		continue ;;
	esac
	echo $i >"$d/progress"
done
[ -z "$load" ] || kill $load
echo "tcg_hang guest: $i cycles"
GUEST
chmod +x "$DIR/guest.sh"

hangs=0
resumed=0
for run in $(seq "$RUNS"); do
	log=$DIR/run$run.log
	diag=$DIR/run$run.diag
	sock=/tmp/tcg-hang.$$.sock
	rm -f "$DIR/progress" "$DIR/kallsyms" "$sock" "$diag"
	VM_TCG_THREAD=${VM_TCG_THREAD:-multi} \
	VM_QEMU_ARGS="${VM_QEMU_ARGS:-} -monitor unix:$sock,server,nowait" \
		"$TOP/selftests/vmrun" --share "$DIR" --timeout $((SECS + 900)) \
		--append nokaslr ${MODOPT[@]+"${MODOPT[@]}"} "$@" \
		-- "$DIR/guest.sh" "$MODE" "$SECS" >"$log" 2>&1 &
	vm=$!
	last=
	last_t=$(date +%s)
	what=
	while kill -0 $vm 2>/dev/null; do
		sleep 5
		now=$(date +%s)
		p=$(cat "$DIR/progress" 2>/dev/null || true)
		if [ -z "$p" ] || [ "$p" != "$last" ]; then
			last=$p
			last_t=$now
			continue
		fi
		[ $((now - last_t)) -ge $STALL ] || continue

		# No cycle for STALL seconds: where are the vCPUs?
		hangs=$((hangs + 1))
		{
			echo "# no cycle done for ${STALL}s after cycle $p"
			$MON "$sock" rips 12 0.5 "$DIR/kallsyms"
		} >"$diag" 2>&1
		sites=$(sed -n 's/^int3-loop cpu[0-9]* sites //p' "$diag" | tr ' ' '\n' |
			sort -u | tr '\n' ' ')
		for s in $sites; do
			echo "# guest memory at ${s#*:}:" >>"$diag"
			$MON "$sock" bytes "${s%%:*}" 8 >>"$diag" 2>&1
		done
		sleep "$STALL"
		{
			echo "# ${STALL}s later (progress $(cat "$DIR/progress"))"
			$MON "$sock" rips 4 0.5 "$DIR/kallsyms"
		} >>"$diag" 2>&1
		what="hang after cycle $p; int3 loop at: ${sites:-none found}"
		if [ "$(cat "$DIR/progress")" = "$p" ]; then
			# Nothing moved: have QEMU retranslate, then watch.
			$MON "$sock" cmd "singlestep on" >>"$diag" 2>&1
			sleep 2
			$MON "$sock" cmd "singlestep off" >>"$diag" 2>&1
			echo "# retranslated at $(date +%T)" >>"$diag"
			i=0
			while [ $i -lt 12 ] && [ "$(cat "$DIR/progress")" = "$p" ]; do
				sleep 5
				i=$((i + 1))
			done
			if [ "$(cat "$DIR/progress")" != "$p" ]; then
				resumed=$((resumed + 1))
				sleep 10
				what="$what; went on after QEMU retranslated (cycle $(cat "$DIR/progress"))"
			else
				what="$what; still stuck after QEMU retranslated"
			fi
		else
			what="$what; went on by itself (cycle $(cat "$DIR/progress"))"
		fi
		$MON "$sock" cmd quit >/dev/null 2>&1 || true
		break
	done
	rc=0
	wait $vm || rc=$?
	rm -f "$sock"
	if [ -n "$what" ]; then
		echo "run $run: $what (diagnosis: $diag)"
	else
		echo "run $run: no hang, $(sed -n 's/^tcg_hang guest: //p' "$log" | tail -n 1), vmrun exit $rc"
	fi
done
echo "tcg_hang: $hangs of $RUNS runs hung, $resumed went on after QEMU retranslated (mode $MODE, ${SECS}s each, TCG thread=${VM_TCG_THREAD:-multi})"
