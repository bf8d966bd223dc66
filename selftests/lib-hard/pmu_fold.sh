#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pmu_fold.sh: where the samples of a moved program go (Documentation/
# arm64.rst, "ring full and migration").  A guest script for the arm64 VM
# under -icount:
#
#   VM_ARCH=arm64 VM_ICOUNT=0 selftests/vmrun --kernel 6.1 \
#	--share "$PWD/selftests/lib-hard" -- sh "$PWD/selftests/lib-hard/pmu_fold.sh"
#
# Records pmcring-pmuprog (-e cycles:u -c 10000) pinned with the ring full,
# moved every millisecond by pmcring-pmuprog -P with the ring full and with
# a big ring, and moving itself (-m), while kprobes on arm_pmu's
# armpmu_start(), armv8pmu_handle_irq() and armpmu_event_set_period()
# read the event's period_left and sample_period.  For each run it prints
# samples + lost against C/P, and the periods perf never handed to a
# handler: at a sched-in after an overflow whose interrupt was cleared at
# the sched-out (period_left <= 0 in armpmu_start(): every period in it),
# and in the interrupt when more than one period had passed (period_left
# <= -period: all but one).
#
# The offsets of hw.period_left and hw.sample_period in struct perf_event
# are Debian's 6.1.0-56-arm64's (offsetof() built against its headers);
# FOLD_OFFS="LEFT PERIOD" for another kernel.
PATH=/kselftest/pmcring:/kselftest:$PATH
N=${N:-30000000}
P=10000
set -- ${FOLD_OFFS:-504 488}
LEFT=$1 PER=$2
d=$(mktemp -d)
echo 25 >/proc/sys/kernel/perf_cpu_time_max_percent
echo 1000000 >/proc/sys/kernel/perf_event_max_sample_rate
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
T=/sys/kernel/tracing
[ -e $T/kprobe_events ] || mount -t tracefs nodev $T
echo 'p:fold/start armpmu_start' >>$T/kprobe_events &&
echo 'p:fold/hirq armv8pmu_handle_irq' >>$T/kprobe_events &&
echo "p:fold/setp armpmu_event_set_period left=+$LEFT(\$arg1):s64 period=+$PER(\$arg1):s64" >>$T/kprobe_events ||
	{ echo "no kprobes on arm_pmu here"; exit 1; }
echo 8192 >$T/buffer_size_kb
# run NAME PAGES STOP(0/1) MOVER(0/1) [taskset MASK] [pmuprog args]
run() {
	name=$1 pages=$2 stop=$3 mv=$4
	shift 4
	: >$d/$name.mv
	echo >$T/trace
	echo 1 >$T/events/fold/enable
	pmcring record --buffer-pages "$pages" --staging-mb 0 -e cycles:u -c $P \
		-o $d/$name.pmclog -- "$@" pmcring-pmuprog -s 1 -n "$N" \
		>$d/$name.out 2>$d/$name.err &
	rec=$!
	until grep -q '^pid ' $d/$name.out 2>/dev/null; do sleep 0.01; done
	[ "$stop" = 1 ] && kill -STOP $rec
	[ "$mv" = 1 ] &&
		pmcring-pmuprog -P "$(sed -n 's/^pid //p' $d/$name.out)" -u 1000 >$d/$name.mv &
	until grep -q '^cycles ' $d/$name.out 2>/dev/null; do sleep 0.01; done
	[ "$stop" = 1 ] && kill -CONT $rec
	wait
	echo 0 >$T/events/fold/enable
	# per CPU: the probe before set_period says who called it
	folds=$(awk -v p=$P '
		/ start: / { split($0, a, "["); last[substr(a[2], 1, 3)] = "s" }
		/ hirq: / { split($0, a, "["); last[substr(a[2], 1, 3)] = "h" }
		/ setp: / { split($0, a, "["); c = substr(a[2], 1, 3)
			l = $0; sub(/.*left=/, "", l); sub(/ .*/, "", l); l += 0
			q = $0; sub(/.*period=/, "", q); sub(/ .*/, "", q); q += 0
			if (q == p && last[c] == "s" && l <= 0) { ns++; ms += int(-l / p) + 1 }
			if (q == p && last[c] == "h") { nh++; if (l <= -p) { nm++; mh += int(-l / p) } }
			last[c] = "" }
		END { printf "%d %d %d %d %d", ns, ms, nh, nm, mh }' $T/trace)
	n=$(pmcring dump $d/$name.pmclog | grep -c " CALLCHAIN .*pmcid=0x1 ")
	lost=$(sed -n 's/.*; \([0-9]*\) lost.*/\1/p' $d/$name.err | tail -n 1)
	awk -v name="$name" -v p=$P -v n="$n" -v lost="$lost" -v f="$folds" '
		/^cycles / { c = $2 } /^moves / { mv = $2 }
		END { split(f, x, " ")
			printf "%s: %d samples + %d lost = %d, C/P %.2f, short %.2f; moves %d; " \
			       "sched-in folds %d (%d periods), interrupts %d, of them %d over a period (%d periods more)\n",
			       name, n, lost, n + lost, c / p, c / p - n - lost, mv, x[1], x[2], x[3], x[4], x[5] }' \
		$d/$name.out $d/$name.mv
}
for i in 1 2; do
	run full_pinned 2 1 0 taskset 1
	run full_moved 2 1 1
	run big_moved 1024 0 1
done
echo 0 >$T/events/fold/enable
echo >$T/kprobe_events
rm -rf "$d"
