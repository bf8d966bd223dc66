#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: sampling a hardware counter (the CPU's PMU: armv8_pmuv3 in
# the arm64 VM, selftests/vmrun --arch arm64; the x86 TCG VM has no PMU and
# skips).  pmcring-pmuprog counts its own user cycles with perf_event_open()
# around its work (C), the reference every check compares with:
#
#  1. record -e cycles:u -c P -g: the samples number C/P within 1 + 1%
#     (the recording's counter also counts the program's start, before its
#     own counter is enabled: a few thousand cycles), the report's event
#     count is samples x P, PMCALLOCATEDYN names the event, and the
#     callchains resolve to pmu_hot() called from main().
#  2. -F 1000: the sum of the recorded periods (report's event count) is C
#     within 10% (the last, partial period is never sampled; perf's first
#     periods are short).
#  3. three hardware counters at once (cycles:u, r11:u = PMUv3 CPU_CYCLES,
#     instructions:u): every one samples, the two cycle counters within
#     1 + 3% (QEMU's counters come up to 1.6% short with three of them).
#  4. -p PID and -a (--duration 3), each attached while the program sleeps
#     before its work: its samples within the bound of 1.
#  5. ring full (2 pages, no staging, the consumer stopped while the program
#     works, no throttling): samples + lost (record's
#     summary, the module's exact counters) within the bound of 1 of C/P,
#     with lost > 0 and drop notices in the file, which still reads back.
#     The program is pinned to CPU 0: moved, perf itself hands over fewer
#     overflows than C/P (5b).
# 5b. the program moved between CPU 0 and 1 every millisecond, with a big
#     ring and with the ring full: every call of pmcring's overflow
#     handler (a kprobe counts them) is a sample in the file or lost.
#  6. throttling: kernel.perf_event_max_sample_rate lowered to 1000 and
#     kernel.perf_cpu_time_max_percent at its default 25 (the arm64 VM boots
#     with 0), P so small that perf throttles the counter: the recording
#     counts losses and has drop notices (the module counts each throttle
#     as a lost record), not a silently thin profile.
#
# PMU_SAMPLE_KEEP=DIR copies check 1's recording there (make check reports
# on it on the host).  PMU_ITERS sets the program's loop count.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-pmuprog awk
pmu=
for d in /sys/bus/event_source/devices/*; do
	# the CPU's PMU: cpu_cycles on arm64 (armv8_pmuv3), cpu-cycles on x86
	[ -e "$d/events/cpu_cycles" ] || [ -e "$d/events/cpu-cycles" ] ||
		continue
	pmu=${d##*/}
	break
done
[ -n "$pmu" ] || skip "no hardware PMU here (x86 TCG VMs have none: selftests/vmrun --arch arm64 runs this with armv8_pmuv3)"
echo "# PMU: $pmu"
make_tmpdir
t0=$(date +%s)
# step WHAT: a comment line with the seconds since the start
step() { echo "# [$(( $(date +%s) - t0 ))s] $*"; }
# 3 instructions an iteration; -icount shift=0 (the arm64 VM of make
# check) counts about a cycle an instruction: 9e7 cycles.
ITERS=${PMU_ITERS:-30000000}
P=100000
# rings that hold every sample of a run (the consumer of a TCG guest is slow)
BIG=1024

# prog_cycles FILE: the program's own count of its user cycles.
prog_cycles() { sed -n 's/^cycles //p' "$1"; }
# ncc FILE PMCID: CALLCHAIN records of counter PMCID (and pid PID if set).
ncc() {
	pmcring dump "$1" | grep " CALLCHAIN .*${PID:+pid=$PID .*}pmcid=$2 " | wc -l
}
# within GOT WANT [PCT]: |GOT - WANT| <= 1 + WANT x PCT / 100 (PCT 1)
within() {
	awk -v g="$1" -v w="$2" -v p="${3:-1}" 'BEGIN { d = g - w; if (d < 0) d = -d;
		exit !(d <= 1 + w * p / 100) }'
}
record() {	# record NAME ARGS... (the rest of the command line)
	name=$1
	shift
	pmcring record --quiet "$@" >"$dir/$name.out" 2>"$dir/$name.err" ||
		{ cat "$dir/$name.out" "$dir/$name.err"; fail "record $name"; }
}
# drops FILE: the drops pmcring stat counts in the recording
drops() {
	pmcring stat "$1" 2>/dev/null | sed -n 's/.*, drops \([0-9]*\).*/\1/p'
}
# nodrop NAME: the exact checks want every sample in the file (big rings)
nodrop() {
	d=$(drops "$dir/$1.pmclog")
	[ "$d" = 0 ] || fail "$1: '$d' drops with $BIG pages per CPU"
}
report_event() {	# report_event FILE NAME: the report's "# Event" line
	pmcring report "$1" 2>/dev/null | grep "^# Event '$2'"
}

# 1. -c P: count, periods, event name, callchains
record c --buffer-pages $BIG -e cycles:u -c $P -g -o "$dir/c.pmclog" -- pmcring-pmuprog -n "$ITERS"
nodrop c
C=$(prog_cycles "$dir/c.out")
[ -n "$C" ] && [ "$C" -gt $((100 * P)) ] ||
	fail "the program counted '$C' cycles (want > $((100 * P)))"
n=$(ncc "$dir/c.pmclog" 0x1)
step "-c $P: $n samples, program's counter $C cycles, C/P $(awk -v c="$C" -v p=$P 'BEGIN { printf "%.2f", c / p }')"
within "$n" "$(awk -v c="$C" -v p=$P 'BEGIN { printf "%.2f", c / p }')" ||
	fail "-c $P: $n samples for $C cycles"
pmcring dump "$dir/c.pmclog" | grep -q ' PMCALLOCATEDYN .*name="cycles:u"' ||
	fail "no PMCALLOCATEDYN naming cycles:u"
head=$(report_event "$dir/c.pmclog" cycles:u)
echo "# $head"
case "$head" in
*": $n samples, event count $((n * P)) "*) ;;
*) fail "report head '$head', want $n samples, event count $((n * P))" ;;
esac
pmcring report "$dir/c.pmclog" >"$dir/c.report" 2>&1 || fail "report"
top=$(sed -n '/^Top user functions/{n;n;p;q}' "$dir/c.report")
echo "# top: $top"
echo "$top" | grep -q ' pmu_hot' || fail "top user function is not pmu_hot: $top"
# pmcring list names the PMU's sysfs events with their -e rHEX
pmcring list >"$dir/list" 2>&1 || fail "pmcring list"
grep -q "^  $pmu/cpu_cycles/  -e r11\$" "$dir/list" ||
	grep -q "^  $pmu/cpu-cycles/  -e r" "$dir/list" ||
	{ cat "$dir/list"; fail "pmcring list does not list $pmu's sysfs events"; }
pmcring report --folded "$dir/c.pmclog" >"$dir/c.folded" 2>/dev/null || fail "report --folded"
grep -Eq '^pmcring-pmuprog;.*main;(.*;)?pmu_hot[^;]* [0-9]+$' "$dir/c.folded" ||
	{ head -n 5 "$dir/c.folded"; fail "no callchain main -> ... -> pmu_hot"; }
if [ -n "${PMU_SAMPLE_KEEP:-}" ]; then
	mkdir -p "$PMU_SAMPLE_KEEP" && cp "$dir"/c.pmclog* "$PMU_SAMPLE_KEEP/" ||
		fail "cannot keep the recording in $PMU_SAMPLE_KEEP"
fi

# 2. -F: the sum of the periods
record f --buffer-pages $BIG -e cycles:u -F 1000 -o "$dir/f.pmclog" -- pmcring-pmuprog -n "$ITERS"
nodrop f
C=$(prog_cycles "$dir/f.out")
head=$(report_event "$dir/f.pmclog" cycles:u)
sum=$(echo "$head" | sed -n 's/.*event count \([0-9]*\).*/\1/p')
step "-F 1000: $head; program's counter $C"
[ -n "$sum" ] && awk -v s="$sum" -v c="$C" 'BEGIN { d = s - c; if (d < 0) d = -d;
	exit !(d <= c / 10) }' || fail "-F 1000: periods sum to '$sum' for $C cycles"
[ "$(echo "$head" | sed -n 's/.*: \([0-9]*\) samples.*/\1/p')" -ge 3 ] ||
	fail "-F 1000: fewer than 3 samples"

# 3. several hardware counters at once; instructions count only under
# -icount (QEMU's PMUv3), r11 of every mode stands in for them otherwise
third=instructions:u
pmcring list 2>/dev/null | grep -q '^instructions  *hardware  yes' || third=r11
record m --buffer-pages $BIG -e cycles:u,r11:u,$third -c $P -o "$dir/m.pmclog" -- \
	pmcring-pmuprog -n "$ITERS"
nodrop m
C=$(prog_cycles "$dir/m.out")
want=$(awk -v c="$C" -v p=$P 'BEGIN { printf "%.2f", c / p }')
n1=$(ncc "$dir/m.pmclog" 0x1)
n2=$(ncc "$dir/m.pmclog" 0x2)
n3=$(ncc "$dir/m.pmclog" 0x3)
step "cycles:u $n1, r11:u $n2, $third $n3 samples; C/P $want"
# 3%: with three counters overflowing, QEMU 7.2's counters came up to
# 1.6% short of the program's (1191 of 1210.65), never over
within "$n1" "$want" 3 || fail "3 counters: cycles:u $n1 samples, want $want"
within "$n2" "$want" 3 || fail "3 counters: r11:u $n2 samples, want $want"
[ "$n3" -gt 0 ] || fail "3 counters: no $third sample"

# 4. -p PID (attached while the program sleeps) and -a
pmcring-pmuprog -s 1 -n "$ITERS" >"$dir/p.prog" &
job=$!
i=0
until grep -q '^pid ' "$dir/p.prog" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "-p: the program did not start"
	sleep 0.1
done
# its own word for its pid: the shell's $! may be a subshell's
ppid=$(sed -n 's/^pid //p' "$dir/p.prog")
record p --buffer-pages $BIG -e cycles:u -c $P -p "$ppid" -o "$dir/p.pmclog"
wait "$job" || fail "-p: the program failed"
nodrop p
C=$(prog_cycles "$dir/p.prog")
n=$(PID=$ppid ncc "$dir/p.pmclog" 0x1)
want=$(awk -v c="$C" -v p=$P 'BEGIN { printf "%.2f", c / p }')
step "-p: $n samples, C/P $want"
within "$n" "$want" ||
	{ cat "$dir/p.out" "$dir/p.err" "$dir/p.prog"; pmcring dump "$dir/p.pmclog" | grep -v CALLCHAIN;
	  fail "-p: $n samples, want $want"; }

# record_all NAME ITERS ARGS...: -a takes no command, so the program runs
# in the background (it sleeps 2 s, then works), recorded system-wide
# with ARGS until it has exited
record_all() {
	name=$1
	iters=$2
	shift 2
	pmcring-pmuprog -s 2 -n "$iters" >"$dir/$name.prog" &
	job=$!
	pmcring record --quiet -a "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
	rec=$!
	wait "$job" || fail "-a: the program failed"
	kill -INT "$rec"
	wait "$rec" || { cat "$dir/$name.out" "$dir/$name.err"; fail "record $name"; }
}
record_all a "$ITERS" --buffer-pages $BIG -e cycles:u -c $P -o "$dir/a.pmclog"
nodrop a
C=$(prog_cycles "$dir/a.prog")
apid=$(sed -n 's/^pid //p' "$dir/a.prog")
n=$(PID=$apid ncc "$dir/a.pmclog" 0x1)
want=$(awk -v c="$C" -v p=$P 'BEGIN { printf "%.2f", c / p }')
step "-a: $n samples of pid $apid, C/P $want"
within "$n" "$want" || fail "-a: $n samples of the program, want $want"

# 4b. -a in every format, with the hardware counter: each file
# reads back (dump, stat) with samples of the program, and
# PMU_SAMPLE_KEEP gets them for the host's stat and report
for fmt in pmclog barman blob; do
	out=$dir/fa.$fmt
	record_all "fa-$fmt" $((ITERS / 3)) --format $fmt -e cycles:u -c $P -o "$out"
	f=$out
	[ $fmt = blob ] && f=$(ls "$out"/pmcring/all.DAT.* 2>/dev/null | head -n 1)
	[ -n "$f" ] && [ -s "$f" ] || fail "-a --format $fmt: no file"
	pmcring stat "$f" >"$dir/fa-$fmt.stat" 2>&1 || { cat "$dir/fa-$fmt.stat"; fail "stat of -a --format $fmt"; }
	apid=$(sed -n 's/^pid //p' "$dir/fa-$fmt.prog")
	case $fmt in
	barman) n=$(pmcring dump "$f" | grep -c " SAMPLE_WITH_PC task=$apid ") ;;
	*) n=$(PID=$apid ncc "$f" 0x1) ;;
	esac
	step "-a --format $fmt: $n samples of the program; $(head -n 2 "$dir/fa-$fmt.stat" | tail -n 1)"
	[ "$n" -gt 0 ] || { pmcring dump "$f" | head -n 20; fail "-a --format $fmt: no sample of the program"; }
	if [ -n "${PMU_SAMPLE_KEEP:-}" ]; then
		cp -r "$out" "$PMU_SAMPLE_KEEP/fa.$fmt" || fail "keep $out"
	fi
done

# 5. the ring full: every refused sample counted
# No throttling here (6. is about it): perf's limit raised and its
# automatic lowering off while this runs.
PS=10000
rate=/proc/sys/kernel/perf_event_max_sample_rate
pct=/proc/sys/kernel/perf_cpu_time_max_percent
old_rate=$(cat $rate)
old_pct=$(cat $pct)
# set_rate RATE PCT: perf's sample rate limit, then its automatic lowering
# (PCT 0: off, as selftests/vmrun --arch arm64 boots).  The kernel refuses
# a new rate while the percentage is 0 or 100: 25, its default, meanwhile.
set_rate() {
	echo 25 >$pct && echo "$1" >$rate && echo "$2" >$pct
}
set_rate 1000000 0 || fail "cannot raise $rate"
# The consumer is stopped (SIGSTOP) while the program works: the 2-page
# ring fills and the rest of the samples are refused, each counted.  The
# program is pinned to CPU 0 (taskset mask 1): moved between the vCPUs,
# perf itself delivered 1.4-6% fewer overflows than C/P (arm_pmu folds
# periods that pass before the interrupt is taken, and TCG's round-robin
# vCPUs let them pass: Documentation/arm64.rst, "ring full and
# migration"), which no count of pmcring's can see; 5b holds the moved
# program to the overflows perf delivered.
pmcring record --buffer-pages 2 --staging-mb 0 -e cycles:u -c $PS \
	-o "$dir/d.pmclog" -- taskset 1 pmcring-pmuprog -s 1 -n "$ITERS" \
	>"$dir/d.out" 2>"$dir/d.err" &
rec=$!
i=0
until grep -q '^pid ' "$dir/d.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "ring full: the program did not start"
	sleep 0.1
done
kill -STOP $rec
i=0
until grep -q '^cycles ' "$dir/d.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 600 ] || { kill -CONT $rec; fail "ring full: the program did not end"; }
	sleep 0.1
done
kill -CONT $rec
wait $rec
rc=$?
set_rate "$old_rate" "$old_pct" || fail "cannot restore $rate, $pct"
[ $rc = 0 ] || { cat "$dir/d.out" "$dir/d.err"; fail "record d"; }
C=$(prog_cycles "$dir/d.out")
# record's last word: "...; N lost" (the module's lost counters, exact)
lost=$(sed -n 's/.*; \([0-9]*\) lost.*/\1/p' "$dir/d.err" | tail -n 1)
pmcring stat "$dir/d.pmclog" >"$dir/d.stat" 2>&1 || { cat "$dir/d.stat"; fail "stat of a ring-full recording"; }
notes=$(sed -n 's/.*, drops \([0-9]*\).*/\1/p' "$dir/d.stat")
n=$(ncc "$dir/d.pmclog" 0x1)
want=$(awk -v c="$C" -v p=$PS 'BEGIN { printf "%.2f", c / p }')
step "ring full: $n samples + $lost lost ($notes drop notices in the file), C/P $want"
[ -n "$lost" ] && [ "$lost" -gt 0 ] || { cat "$dir/d.err"; fail "ring full: no loss counted"; }
[ -n "$notes" ] && [ "$notes" -gt 0 ] || fail "ring full: no drop notice in the file"
within $((n + lost)) "$want" || fail "ring full: $n samples + $lost lost, want $want"

# 5b. the program moved between the CPUs every millisecond by another task
# (pmcring-pmuprog -P: preempted wherever it is, as load balancing moves
# it), with the ring full as in 5. and with a big ring and the consumer
# running.  The reference is not C/P here but the overflows perf handed
# pmcring's handler: a kprobe on pmcring_src_overflow() counts them, by
# comm: those of "pmcring", record's child before it execs the program,
# are samples record leaves out on purpose (perf's enable_on_exec).  Each
# other one must be a sample in the file or a lost record: with the big ring the
# samples equal the calls exactly; with the ring full samples + lost are
# at least the calls, and at most 1 + 3% more (lost counts every record
# refused, not only samples: the program's other records, 1.9% in the
# runs of Documentation/arm64.rst).  C/P - calls is what perf itself did
# not deliver: arm_pmu's armpmu_event_set_period() makes one overflow of
# several periods that passed before the interrupt was taken, and drops
# an overflow still pending when the task is switched out; under TCG's
# round-robin vCPUs the guest's cycle counter runs on while the vCPU waits
# its turn (Documentation/arm64.rst, "ring full and migration").
T=/sys/kernel/tracing
[ -e $T/kprobe_events ] || mount -t tracefs nodev $T 2>/dev/null
probe=
if [ -w $T/kprobe_events ] &&
   echo 'p:pmcring_pmu/ovf pmcring_src_overflow cm=$comm' >>$T/kprobe_events 2>/dev/null; then
	probe=$T/events/pmcring_pmu/ovf
	# removed at the end: the module must unload after the test
	trap 'echo 0 >$probe/enable; echo "!hist:keys=cm" >$probe/trigger 2>/dev/null
	      echo "-:pmcring_pmu/ovf" >>$T/kprobe_events; rm -rf "$dir"' EXIT
else
	echo "# no kprobe events ($T/kprobe_events: CONFIG_KPROBE_EVENTS, tracefs): the moved runs check against C/P only"
fi
# moved NAME PAGES STOP: record the program (STOP 1: the consumer stopped
# while it works) while pmcring-pmuprog -P moves it every millisecond;
# sets n, lost, calls (empty without the probe), moves, C
moved() {
	name=$1
	if [ -n "$probe" ]; then
		echo 'hist:keys=cm' >$probe/trigger && echo 1 >$probe/enable ||
			fail "$name: cannot count pmcring_src_overflow() calls"
	fi
	pmcring record --buffer-pages "$2" --staging-mb 0 -e cycles:u -c $PS \
		-o "$dir/$name.pmclog" -- pmcring-pmuprog -s 1 -n "$ITERS" \
		>"$dir/$name.out" 2>"$dir/$name.err" &
	rec=$!
	i=0
	until grep -q '^pid ' "$dir/$name.out" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "$name: the program did not start"
		sleep 0.1
	done
	[ "$3" = 1 ] && kill -STOP $rec
	pmcring-pmuprog -P "$(sed -n 's/^pid //p' "$dir/$name.out")" -u 1000 >"$dir/$name.mv" &
	mover=$!
	i=0
	until grep -q '^cycles ' "$dir/$name.out" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 600 ] || { kill -CONT $rec; fail "$name: the program did not end"; }
		sleep 0.1
	done
	[ "$3" = 1 ] && kill -CONT $rec
	wait $rec || { cat "$dir/$name.out" "$dir/$name.err"; fail "record $name"; }
	wait $mover || fail "$name: the mover failed"
	calls=
	if [ -n "$probe" ]; then
		echo 0 >$probe/enable
		grep -v '^#' $probe/hist >"$dir/$name.hist"
		echo '!hist:keys=cm' >$probe/trigger
		calls=$(sed -n 's/.*cm: *pmcring-pmuprog *} *hitcount: *\([0-9]*\).*/\1/p' "$dir/$name.hist")
		calls=${calls:-0}
		pre=$(sed -n 's/.*cm: *pmcring *} *hitcount: *\([0-9]*\).*/\1/p' "$dir/$name.hist")
	fi
	C=$(prog_cycles "$dir/$name.out")
	moves=$(sed -n 's/^moves //p' "$dir/$name.mv")
	lost=$(sed -n 's/.*; \([0-9]*\) lost.*/\1/p' "$dir/$name.err" | tail -n 1)
	n=$(ncc "$dir/$name.pmclog" 0x1)
	want=$(awk -v c="$C" -v p=$PS 'BEGIN { printf "%.2f", c / p }')
	step "$name: moved $moves times: $n samples + $lost lost, handler calls ${calls:-unknown} (${pre:-0} more before the exec), C/P $want"
	[ -n "$moves" ] && [ "$moves" -ge 10 ] || fail "$name: the program was moved '$moves' times"
	[ -n "$lost" ] || { cat "$dir/$name.err"; fail "$name: no lost count"; }
}
set_rate 1000000 0 || fail "cannot raise $rate"
moved mbig $BIG 0
[ "$lost" = 0 ] || fail "mbig: $lost lost with $BIG pages per CPU"
if [ -n "$calls" ]; then
	[ "$n" = "$calls" ] || { cat "$dir/mbig.hist"; pmcring dump "$dir/mbig.pmclog" | grep ' CALLCHAIN' |
		sed 's/.* \(pid=[0-9]*\) .*/\1/' | sort | uniq -c
		fail "moved, big ring: $n samples for $calls handler calls"; }
else
	# never more samples than the counter's overflows
	awk -v n="$n" -v w="$want" 'BEGIN { exit !(n <= 1 + w * 1.01) }' ||
		fail "moved, big ring: $n samples, C/P $want"
fi
moved mfull 2 1
set_rate "$old_rate" "$old_pct" || fail "cannot restore $rate, $pct"
[ "$lost" -gt 0 ] || fail "moved, ring full: no loss counted"
if [ -n "$calls" ]; then
	[ $((n + lost)) -ge "$calls" ] ||
		fail "moved, ring full: $n samples + $lost lost < $calls handler calls: drops not counted"
	within $((n + lost)) "$calls" 3 ||
		fail "moved, ring full: $n samples + $lost lost for $calls handler calls"
fi

# 6. throttling, with perf's automatic lowering back on at its default
# (vmrun --arch arm64 boots with it off: TCG's slow interrupt handlers
# would otherwise lower the limit of every test)
PS=1000
set_rate 1000 25 || fail "cannot set $rate"
pmcring record -e cycles:u -c $PS -o "$dir/t.pmclog" -- \
	pmcring-pmuprog -n $((ITERS / 3)) >"$dir/t.out" 2>"$dir/t.err"
rc=$?
set_rate "$old_rate" "$old_pct" || fail "cannot restore $rate, $pct"
[ $rc = 0 ] || { cat "$dir/t.out" "$dir/t.err"; fail "record t"; }
C=$(prog_cycles "$dir/t.out")
lost=$(sed -n 's/.*; \([0-9]*\) lost.*/\1/p' "$dir/t.err" | tail -n 1)
n=$(ncc "$dir/t.pmclog" 0x1)
step "throttled (max_sample_rate 1000): $n samples + $lost lost for C/P $((C / PS))"
[ "$n" -lt $((C / PS / 2)) ] || fail "throttling: $n samples, not throttled (C/P $((C / PS)))"
[ -n "$lost" ] && [ "$lost" -gt 0 ] ||
	{ cat "$dir/t.err"; fail "throttling: $n samples of $((C / PS)) and nothing counted lost"; }
pmcring stat "$dir/t.pmclog" | grep -q ', drops [1-9]' ||
	fail "throttling: no drop notice in the file"
echo "ok: $pmu cycles sampling"
