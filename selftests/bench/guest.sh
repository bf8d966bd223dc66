#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# VM side of `make bench` (POSIX sh, busybox): run B1-B5 and append one
# flat JSON object per measurement to DIR/results.jsonl.  DIR (shared with
# the host) holds pmcbench, pmcring_ftrace_bench.ko and perf/ (the host's
# perf with its libraries and loader); all scratch files go to /tmp (tmpfs).
#
# Usage: guest.sh DIR
# Sizes (environment, set by run.sh): B1_PAGES B1_MAX B1_REPS B2_N B2_SIZE
# B2_REPS B3_PIPE B3_FORK B3_REPS B4_N SWEEP (irq batches of the rate sweep)
# B5_N B5_PAGES B5_REPS B5_RATES B5_SECS TP_N TP_PAGES TP_REPS TP2_PAGES
# TP2_SIZE TP2_SECS TP2_RATES TP2_PEERS (default pmcring perf bpf
# trace-cmd); ONLY=b5 runs B5 alone, ONLY=b2 the B2
# drain rows alone (pmcring record against a raw write, the consumer
# alone, their profiles), ONLY=tp the tracepoint peers alone (B1 and B2
# rows of tpbench), ONLY=b3 B3 alone, ONLY=arm64 B1 and the tracepoint peers (run_arm64.sh)
set -u

D=$1
RES=$D/results.jsonl
T=/tmp/bench
B=$T/pmcbench
: "${B1_PAGES:=4096}" "${B1_MAX:=200000}" "${B1_REPS:=5}" "${B1_SIZES:=32,64,256}"
: "${B2_N:=500000}" "${B2_SIZE:=64}" "${B2_REPS:=3}"
: "${B3_PIPE:=20000}" "${B3_FORK:=300}" "${B3_REPS:=3}"
: "${B4_N:=20000}" "${SWEEP:=1 2 4 8 16}"

mkdir -p $T
: >"$RES"
cp "$D/pmcbench" $B
fail=0
CS=/sys/devices/system/clocksource/clocksource0

# emit NAME [k=v ...] < JSON: the object with "bench" and the pairs first
emit()
{
	name=$1
	shift
	pre="\"bench\": \"$name\""
	for kv in "$@"; do
		v=${kv#*=}
		case "$v" in
		*[!0-9.]*|'') v="\"$v\"" ;;
		esac
		pre="$pre, \"${kv%%=*}\": $v"
	done
	while read -r line; do
		case "$line" in
		'{}') echo "{$pre}" ;;
		'{'*) echo "{$pre, ${line#\{}" ;;
		esac
	done >>"$RES"
}

# json FILE KEY: a number or string value of a flat JSON object
json()
{
	sed -n "s/.*\"$2\": *\"\{0,1\}\([^,\"}]*\).*/\1/p" "$1" | head -n 1
}

step()
{
	echo "# bench: $*" >&2
}

# -- machine facts --
{
	model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)
	printf '{"guest_kernel": "%s", "guest_cpus": %s, "guest_cpu_model": "%s", "guest_mem_kb": %s, "clocksource": "%s", "cmdline": "%s"}\n' \
		"$(uname -r)" "$(grep -c ^processor /proc/cpuinfo)" "$model" \
		"$(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)" \
		"$(cat $CS/current_clocksource)" "$(cat /proc/cmdline)"
} | emit machine

if [ -e "$D/pmcring_ftrace_bench.ko" ]; then
	insmod "$D/pmcring_ftrace_bench.ko" || echo "# bench: insmod pmcring_ftrace_bench.ko failed" >&2
fi

PERF=
if [ -x "$D/perf/perf" ]; then
	cp -a "$D/perf" $T/perf
	PERF="$T/perf/ld.so --library-path $T/perf/lib $T/perf/perf"
	$PERF --version >/dev/null 2>&1 || { echo "# bench: perf does not run" >&2; PERF=; }
fi
# -- the peers behind one tracepoint (tpbench, pmcring_bench:pfb_event) --
: "${TP_N:=20000}" "${TP_PAGES:=2048}" "${TP_REPS:=5}"
: "${TP2_PAGES:=256}" "${TP2_SIZE:=64}" "${TP2_SECS:=1}"
: "${TP2_RATES:=10000 20000 40000 80000 160000 320000 640000}"
TPB=$T/tpbench
cp "$D/tpbench" $TPB
mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts ||
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
TRACECMD=
if [ -x "$D/trace-cmd/trace-cmd" ]; then
	cp -a "$D/trace-cmd" $T/trace-cmd
	TRACECMD="$T/trace-cmd/ld.so --library-path $T/trace-cmd/lib $T/trace-cmd/trace-cmd"
fi
NCPU=$(grep -c ^processor /proc/cpuinfo)

tp_b1()
{
	step "B1 tracepoint peers: $TP_N events max, $TP_PAGES pages per CPU each, x $TP_REPS"
	$TPB b1 -n "$TP_N" -p "$TP_PAGES" -r "$TP_REPS" -s "$B1_SIZES" >$T/tp1.json || fail=1
	grep '"ctx"' $T/tp1.json | emit b1_tp
	grep '"tp_settings"' $T/tp1.json | emit b1_tp_settings
	# where the time goes: pmcring's probe and the floor ring alone, on
	# CPU 0 (where the loop runs), the idle loop left out
	if [ -n "$PERF" ] && [ "${PROFILE:-1}" = 1 ]; then
		for side in pmcring minring; do
			step "B1 tracepoint profile of $side (perf record -C 0 -e cpu-clock)"
			$PERF record -q -N -C 0 -e cpu-clock -F 4000 -o $T/prof.data -- \
				$TPB b1 -n "$TP_N" -p "$TP_PAGES" -r 15 -s 64 -x $side \
				>/dev/null 2>$T/prof.err || cat $T/prof.err >&2
			$PERF report -i $T/prof.data --stdio --no-children \
				--sort symbol --percent-limit 0.5 2>/dev/null |
				grep -v '^#' | grep -v '^$' | grep -v native_safe_halt |
				head -n 30 >"$D/profile_tp_$side.txt"
			rm -f $T/prof.data
		done
	fi
}

# tp_b2_one PEER RATE: record the tracepoint with PEER to tmpfs while every
# CPU fires RATE events/s for TP2_SECS; emits b2_tp, returns 0 if the file
# holds every event fired (got >= fired: perf once counted one sample more
# than fired, see performance.rst) and the peer counted no loss.
tp_b2_one()
{
	peer=$1 rate=$2
	rm -rf $T/tp2.out $T/tp2.err $T/tp2.json
	case $peer in
	pmcring)
		pmcring record -a -e none --types generated \
			--buffer-pages "$TP2_PAGES" -o $T/tp2.out 2>$T/tp2.err & ;;
	perf)
		# shellcheck disable=SC2086
		$PERF record -a -N -e pmcring_bench:pfb_event \
			-m "$TP2_PAGES" -o $T/tp2.out 2>$T/tp2.err & ;;
	bpf)
		$TPB bpfrec -s "$TP2_SIZE" -m $((TP2_PAGES * 4096 * NCPU)) \
			-o $T/tp2.out >$T/tp2.json 2>$T/tp2.err & ;;
	trace-cmd)
		# shellcheck disable=SC2086
		$TRACECMD record -e pmcring_bench:pfb_event \
			-b $((TP2_PAGES * 4)) -o $T/tp2.out >$T/tp2.err 2>&1 & ;;
	esac
	pid=$!
	# pmcring's probe is the bench module's (pmcring_emit_generated());
	# the others attach from user space
	probe=0
	[ $peer = pmcring ] && probe=3
	sleep 2		# the consumer set up (perf and trace-cmd are slow in TCG)
	$TPB fire -n $((rate * TP2_SECS)) -s "$TP2_SIZE" -R "$rate" -x $probe >$T/tp2.fire ||
		{ fail=1; kill -INT $pid; wait $pid; return 1; }
	sleep 1
	kill -INT $pid
	wait $pid
	rc=$?
	fired=$(json $T/tp2.fire fired)
	secs=$(json $T/tp2.fire seconds)
	lost=0
	case $peer in
	pmcring)
		$B count $T/tp2.out >$T/tp2.count 2>/dev/null
		got=$(json $T/tp2.count generated)
		lost=$(sed -n 's/.*; \([0-9]*\) lost$/\1/p' $T/tp2.err | tail -n 1) ;;
	perf)
		# perf report --stats: the samples in the file, LOST records
		$PERF report -i $T/tp2.out --stats >$T/tp2.stat 2>&1
		[ "${TP_DEBUG:-0}" = 1 ] && cat $T/tp2.stat >&2
		# the tracepoint's own samples (its section of the stats)
		got=$(awk '/pmcring_bench:pfb_event stats:/ { f = 1; next }
			f && $1 == "SAMPLE" && $2 == "events:" { print $3; exit }' $T/tp2.stat)
		lost=$(awk '($1 == "LOST" || $1 == "LOST_SAMPLES") && $2 == "events:" { n += $3 } END { print n + 0 }' $T/tp2.stat) ;;
	bpf)
		got=$(json $T/tp2.json records)
		lost=$(json $T/tp2.json lost) ;;
	trace-cmd)
		# the events in the file, counted (its --stat read events
		# leave out what the last read wrote after the stats, and
		# read events plus entries overcounts); the loss: overrun
		# (events overwritten) and dropped events of those stats
		$TRACECMD report --stat -i $T/tp2.out >$T/tp2.stat 2>&1
		[ "${TP_DEBUG:-0}" = 1 ] && cat $T/tp2.stat >&2
		lost=$(awk '/^overrun:|^commit overrun:|^dropped events:/ { n += $NF } END { print n + 0 }' $T/tp2.stat)
		got=$($TRACECMD report -i $T/tp2.out 2>/dev/null | grep -c 'pfb_event:') ;;
	esac
	bytes=0
	[ -e $T/tp2.out ] && bytes=$(du -sk $T/tp2.out | cut -f1)
	: "${got:=0}" "${lost:=0}"
	echo "{\"fired\": ${fired:-0}, \"got\": $got, \"lost\": $lost, \"seconds\": ${secs:-0}, \"kb\": $bytes, \"exit\": $rc}" |
		emit b2_tp peer=$peer rate=$rate size="$TP2_SIZE" pages="$TP2_PAGES"
	echo "tp B2 $peer $rate/s per CPU: fired ${fired:-0} in ${secs:-0} s, got $got lost $lost (exit $rc)" >&2
	rm -rf $T/tp2.out
	if [ -n "$fired" ] && [ "$got" -ge "$fired" ] && [ "$lost" = 0 ]; then
		return 0
	fi
	[ "$got" = 0 ] && tail -c 1500 $T/tp2.err >&2	# why nothing
	return 1
}

# The highest rate of TP2_RATES (doubling) with nothing lost, then one
# bisection step between it and the first rate that lost.
tp_b2()
{
	step "B2 lossless rate per peer: rates $TP2_RATES per CPU, $TP2_SECS s each, $TP2_PAGES pages per CPU, size $TP2_SIZE"
	for peer in ${TP2_PEERS:-pmcring perf bpf trace-cmd}; do
		case $peer in
		perf) [ -n "$PERF" ] || { echo "# bench: B2 $peer: no perf" >&2; continue; } ;;
		trace-cmd) [ -n "$TRACECMD" ] || { echo "# bench: B2 $peer: no trace-cmd" >&2; continue; } ;;
		esac
		good=0 bad=0
		for rate in $TP2_RATES; do
			if tp_b2_one $peer $rate; then
				good=$rate
			else
				bad=$rate
				break
			fi
		done
		if [ $bad -gt 0 ] && [ $good -gt 0 ]; then
			mid=$(((good + bad) / 2))
			tp_b2_one $peer $mid && good=$mid
		fi
		echo '{}' | emit b2_tp_max peer=$peer rate=$good first_loss=$bad
		echo "tp B2 $peer: lossless up to $good/s per CPU (lost at ${bad:-none})" >&2
	done
}
if [ "${ONLY:-}" = tp ]; then
	tp_b1
	tp_b2
	grep -q '^pmcring_ftrace_bench ' /proc/modules && rmmod pmcring_ftrace_bench
	rm -rf $T
	exit $fail
fi

# make bench ARCH=arm64 (run_arm64.sh): B1 and the tracepoint peers alone,
# in the arm64 VM (no hpet there, no perf or trace-cmd binary for it)
if [ "${ONLY:-}" = arm64 ]; then
	step "B1 producer cost (pages $B1_PAGES, max $B1_MAX records, $B1_REPS reps)"
	$B b1 -p "$B1_PAGES" -n "$B1_MAX" -r "$B1_REPS" -s "$B1_SIZES" >$T/b1.json || fail=1
	grep '"size"' $T/b1.json | emit b1 clocksource="$(cat $CS/current_clocksource)"
	grep '"reps"' $T/b1.json | emit b1_settings
	grep '"noclock_size"' $T/b1.json | emit b1_noclock
	tp_b1
	# B2's peers with an arm64 consumer here: pmcring only (perf and
	# trace-cmd are the host's amd64 binaries, tpbench has no BPF peer)
	TP2_PEERS=pmcring tp_b2
	grep -q '^pmcring_ftrace_bench ' /proc/modules && rmmod pmcring_ftrace_bench
	rm -rf $T
	exit $fail
fi

# -- B5 writers: every output format against pmclog, same run --
B5_FMTS="pmclog barman blob json"
b5_args()
{
	case $1 in
	json) echo "--format blob --blob-json" ;;
	*) echo "--format $1" ;;
	esac
}
# b5_run FMT KIND ARGS...: one recording of generated records to tmpfs
b5_run()
{
	fmt=$1 kind=$2
	shift 2
	rm -rf $T/b5.out
	# shellcheck disable=SC2046
	$B time pmcring record $(b5_args "$fmt") -o $T/b5.out "$@" \
		>$T/b5.time 2>$T/b5.err || { cat $T/b5.err >&2; fail=1; return; }
	# "pmcring: R records, B bytes written to F (I in the file) in ...; L lost"
	sed -n 's/^pmcring: \([0-9]*\) records, \([0-9]*\) bytes .*; \([0-9]*\) lost$/{"records": \1, "bytes": \2, "lost": \3}/p' \
		$T/b5.err | tail -n 1 | sed "s/}\$/, \"seconds\": $(json $T/b5.time seconds)}/" |
		emit "$kind" fmt="$fmt" rep="$rep" rate="${rate:-0}"
	rm -rf $T/b5.out
}
b5()
{
	step "B5 writers: $B5_N records per CPU into rings that hold them ($B5_PAGES pages), x $B5_REPS"
	rep=0
	while [ $rep -lt "$B5_REPS" ]; do
		for fmt in $B5_FMTS; do
			b5_run $fmt b5 --buffer-pages "$B5_PAGES" --generate "$B5_N,$B5_SIZE"
		done
		rep=$((rep + 1))
	done
	step "B5 offered rates $B5_RATES records/s per CPU for $B5_SECS s, default rings"
	rep=0
	for rate in $B5_RATES; do
		for fmt in $B5_FMTS; do
			b5_run $fmt b5_rate --generate "$((rate * B5_SECS)),$B5_SIZE,$rate"
		done
	done
	rate=
}
: "${B5_N:=100000}" "${B5_PAGES:=2048}" "${B5_REPS:=3}" "${B5_SIZE:=64}"
: "${B5_RATES:=10000 20000 40000 80000 160000 320000}" "${B5_SECS:=2}"
if [ "${ONLY:-}" = b5 ]; then
	b5
	rm -rf $T
	exit $fail
fi

# -- B2 end-to-end drain --
b2()
{
	step "B2 drain: pmcring record --generate $B2_N,$B2_SIZE x $B2_REPS (uring, --no-uring, raw write)"
	rep=0
	while [ $rep -lt "$B2_REPS" ]; do
		for mode in uring plain; do
			opt=--uring
			[ $mode = plain ] && opt=--no-uring
			rm -f $T/b2.pmclog
			$B time pmcring record -q $opt --generate "$B2_N,$B2_SIZE" \
				-o $T/b2.pmclog >$T/b2.time 2>$T/b2.err || { cat $T/b2.err >&2; fail=1; }
			$B count $T/b2.pmclog >$T/b2.count || fail=1
			bytes=$(json $T/b2.count bytes)
			echo "{\"seconds\": $(json $T/b2.time seconds), \"records\": $(json $T/b2.count records), \"generated\": $(json $T/b2.count generated), \"bytes\": $bytes}" |
				emit b2 mode=$mode rep=$rep n=$B2_N size=$B2_SIZE
			rm -f $T/b2.pmclog
			$B raw $T/b2.raw "$bytes" | emit b2_raw mode=$mode rep=$rep
			rm -f $T/b2.raw
		done
		rep=$((rep + 1))
	done

	# The consumer alone: rings big enough for everything, filled first.
	step "B2 consumer alone: $B2_N records per CPU generated first, then drained"
	$B lat -F -p 8192 -n "$B2_N" -s "$B2_SIZE" -o $T/drain.pmclog >$T/drain.json || fail=1
	emit b2_alone <$T/drain.json
	bytes=$(wc -c <$T/drain.pmclog)
	rm -f $T/drain.pmclog
	$B raw $T/b2.raw "$bytes" | emit b2_alone_raw
	rm -f $T/b2.raw

	# Where the consumer time goes: cpu-clock profile of one io_uring run.
	if [ -n "$PERF" ] && [ "${PROFILE:-1}" = 1 ]; then
		step "B2 profile (perf record -a -e cpu-clock)"
		$PERF record -q -N -a -e cpu-clock -F 4000 -o $T/prof.data -- \
			pmcring record -q --generate "$B2_N,$B2_SIZE" -o $T/b2.pmclog \
			>/dev/null 2>$T/prof.err || cat $T/prof.err >&2
		rm -f $T/b2.pmclog
		$PERF report -i $T/prof.data --stdio --no-children \
			--sort comm,symbol --percent-limit 0.5 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 30 >"$D/profile_b2.txt"
		rm -f $T/prof.data
		$PERF record -q -N -a -e cpu-clock -F 4000 -o $T/prof.data -- \
			$B lat -F -p 8192 -n "$B2_N" -s "$B2_SIZE" -o $T/drain.pmclog \
			>/dev/null 2>$T/prof.err || cat $T/prof.err >&2
		rm -f $T/drain.pmclog
		$PERF report -i $T/prof.data --stdio --no-children --comm pmcbench \
			--sort symbol --percent-limit 0.5 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 30 >"$D/profile_b2c.txt"
		rm -f $T/prof.data
	fi
}
if [ "${ONLY:-}" = b2 ]; then
	b2
	rm -rf $T
	exit $fail
fi

# -- B3 overhead on a workload --
SCHED_TP="sched:sched_switch sched:sched_process_fork sched:sched_process_exec sched:sched_process_exit"
perf_events()
{
	echo "-e cpu-clock/freq=$1/"
	for tp in $SCHED_TP; do
		echo "-e $tp/call-graph=no/"
	done
}

# B3_HZ: the sampling rates; B3_VARIANTS: more tools (b3_one), e.g.
# "pmcring-nocsw pmcring-nosample pmcring-nocc perf-nocc perf-floor", and
# alt:TOOL, TOOL with the other module (b3_alt)
: "${B3_HZ:=1000 10000}" "${B3_VARIANTS:=}"
B3_NOCSW=closelog,dropnotify,initialize,pmcallocate,pmcattach,pmcdetach,procexec,procexit,procfork,sysexit,userdata,map_in,map_out,callchain,pmcallocatedyn,thr_create,thr_exit,proc_create,period
b3_one()
{
	tool=$1 hz=$2 wl=$3 n=$4 rep=$5 name=${6:-$1}
	rm -f $T/b3.out
	case $tool in
	bare)
		$B csw "$wl" "$n" >$T/b3.json ;;
	pmcring)
		pmcring record -q -e cpu-clock -F "$hz" -o $T/b3.out -- \
			$B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	perf)
		# shellcheck disable=SC2046
		$PERF record -q -N -g $(perf_events "$hz") -o $T/b3.out -- \
			$B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	# B3_VARIANTS: the parts of each tool's cost, one left out at a time
	pmcring-nocsw)	# no PROCCSW records (the sched_switch probe idles)
		pmcring record -q -e cpu-clock -F "$hz" --types "$B3_NOCSW" \
			-o $T/b3.out -- $B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	pmcring-nosample)	# scheduler records only, no counter
		pmcring record -q -e none -o $T/b3.out -- \
			$B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	pmcring-idle)	# a session and its consumer, no record from a probe
		pmcring record -q -e none --types closelog -o $T/b3.out -- \
			$B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	pmcring-bin)	# DIR/pmcring-alt (run.sh: B3_ALT_PMCRING), another build
		"$D/pmcring-alt" record -q -e cpu-clock -F "$hz" -o $T/b3.out -- \
			$B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	pmcring-sync)	# the plain read/write consumer, no io_uring
		pmcring record -q -e cpu-clock -F "$hz" --no-uring \
			-o $T/b3.out -- $B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	pmcring-nocc)	# the sampled PC only, no call chain
		pmcring record -q -e cpu-clock -F "$hz" --call-graph none \
			-o $T/b3.out -- $B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	perf-nocc)	# perf without -g
		# shellcheck disable=SC2046
		$PERF record -q -N $(perf_events "$hz") -o $T/b3.out -- \
			$B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	perf-floor)	# the cpu-clock event alone, no call chain, no tracepoint
		$PERF record -q -N -e "cpu-clock/freq=$hz/" -o $T/b3.out -- \
			$B csw "$wl" "$n" >$T/b3.json 2>$T/b3.err ;;
	esac
	rc=$?
	if [ $rc != 0 ] || ! grep -q seconds $T/b3.json; then
		echo "# bench: B3 $tool $hz $wl failed (exit $rc)" >&2
		cat $T/b3.err >&2 2>/dev/null
		fail=1
		return
	fi
	bytes=0
	[ -f $T/b3.out ] && bytes=$(wc -c <$T/b3.out)
	sed "s/}\$/, \"bytes\": $bytes}/" $T/b3.json |
		emit b3 tool=$name hz=$hz rep=$rep
}

# b3_alt TOOL ...: b3_one with DIR/pmcring-alt.ko (run.sh: B3_ALT_MODULE)
# loaded instead of the module under test, as TOOL-alt: two builds of the
# module measured in the same VM, their runs interleaved
b3_alt()
{
	[ -e "$D/pmcring-alt.ko" ] || return 0
	if ! rmmod pmcring || ! insmod "$D/pmcring-alt.ko"; then
		echo "# bench: B3 cannot load pmcring-alt.ko" >&2
		fail=1
	else
		b3_one "$@" "$1-alt"
		rmmod pmcring
	fi
	insmod /lib/vmrun/pmcring.ko || fail=1
}

b3()
{
	step "B3 overhead: pipe $B3_PIPE, fork $B3_FORK, $B3_REPS reps${PERF:+ (with perf)}"
	rep=0
	while [ $rep -lt "$B3_REPS" ]; do
		for wl in pipe fork; do
			n=$B3_PIPE
			[ $wl = fork ] && n=$B3_FORK
			b3_one bare 0 $wl $n $rep
			for hz in $B3_HZ; do
				b3_one pmcring $hz $wl $n $rep
				[ -n "$PERF" ] && b3_one perf $hz $wl $n $rep
				for v in $B3_VARIANTS; do
					case $v in
					perf*) [ -n "$PERF" ] || continue ;;
					alt:*)
						b3_alt ${v#alt:} $hz $wl $n $rep
						continue ;;
					esac
					b3_one $v $hz $wl $n $rep
				done
			done
		done
		rep=$((rep + 1))
	done
	[ "${B3_PROFILE:-0}" = 1 ] && [ -n "$PERF" ] && b3_profile
}
# b3_cpu TOOL HZ: the recorder's own CPU time while it records the pipe
# workload: the sum of /proc/PID/task/*/schedstat (ns on a CPU) of the
# recorder (the workload's parent) before and after the workload, and the
# records it wrote
b3_cpu()
{
	cat >$T/b3cpu.sh <<'EOS'
cpu() { awk '{ s += $1 } END { printf "%d", s }' /proc/$PPID/task/*/schedstat; }
a=$(cpu)
"$@" >/dev/null
b=$(cpu)
echo "$a $b" >"$B3CPU_OUT"
EOS
	case $1 in
	pmcring)
		B3CPU_OUT=$T/b3cpu.txt pmcring record -e cpu-clock -F "$2" \
			-o $T/b3.out -- sh $T/b3cpu.sh $B csw pipe "$B3_PIPE" \
			2>$T/b3.err ;;
	pmcring-bin)
		B3CPU_OUT=$T/b3cpu.txt "$D/pmcring-alt" record -e cpu-clock -F "$2" \
			-o $T/b3.out -- sh $T/b3cpu.sh $B csw pipe "$B3_PIPE" \
			2>$T/b3.err ;;
	pmcring-idle)
		B3CPU_OUT=$T/b3cpu.txt pmcring record -e none --types closelog \
			-o $T/b3.out -- sh $T/b3cpu.sh $B csw pipe "$B3_PIPE" \
			2>$T/b3.err ;;
	pmcring-nosample)
		B3CPU_OUT=$T/b3cpu.txt pmcring record -e none \
			-o $T/b3.out -- sh $T/b3cpu.sh $B csw pipe "$B3_PIPE" \
			2>$T/b3.err ;;
	perf)
		# shellcheck disable=SC2046
		B3CPU_OUT=$T/b3cpu.txt $PERF record -q -N -g $(perf_events "$2") \
			-o $T/b3.out -- sh $T/b3cpu.sh $B csw pipe "$B3_PIPE" \
			2>$T/b3.err ;;
	esac
	read -r a b <$T/b3cpu.txt
	recs=$(sed -n 's/^pmcring: \([0-9][0-9]*\) records,.*/\1/p' $T/b3.err | head -n 1)
	grep '^pmcring: [0-9]* records,' $T/b3.err >&2
	echo "{\"tool\": \"$1\", \"hz\": $2, \"recorder_cpu_ns\": $((b - a)), \"records\": ${recs:-0}, \"bytes\": $(wc -c <$T/b3.out)}" |
		emit b3_cpu
	echo "B3 recorder CPU: $1 $2 Hz: $(((b - a) / 1000)) us, ${recs:-?} records" >&2
	rm -f $T/b3.out $T/b3cpu.txt
}

# B3_PROFILE=1: the recorders' CPU time (b3_cpu), and where a recorded
# pipe ping-pong's time goes at 10 kHz, the whole guest (perf cpu-clock
# -a): by command, and by symbol
b3_profile()
{
	for t in ${B3_CPU_TOOLS:-pmcring-nosample pmcring perf}; do
		case $t in
		pmcring-bin) [ -x "$D/pmcring-alt" ] || continue ;;
		esac
		for hz in $B3_HZ; do
			b3_cpu $t $hz
		done
	done
	step "B3 profile: pmcring record -F 10000 of pipe $B3_PIPE (perf cpu-clock -a)"
	$PERF record -q -N -a -e cpu-clock -F 4000 -o $T/prof.data -- \
		pmcring record -q -e cpu-clock -F 10000 -o $T/b3.out -- \
		$B csw pipe "$B3_PIPE" >$T/b3.json 2>$T/prof.err || cat $T/prof.err >&2
	cat $T/b3.json >&2
	{
		$PERF report -i $T/prof.data --stdio --no-children \
			--sort comm --percent-limit 0.5 2>/dev/null |
			grep -v '^#' | grep -v '^$'
		echo
		$PERF report -i $T/prof.data --stdio --no-children \
			--sort comm,symbol --percent-limit 0.3 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 70
	} >"$D/profile_b3.txt"
	rm -f $T/prof.data $T/b3.out
}
if [ "${ONLY:-}" = b3 ]; then
	b3
	rm -rf $T
	exit $fail
fi

# -- B1 producer cost --
step "B1 producer cost (pages $B1_PAGES, max $B1_MAX records, $B1_REPS reps)"
$B b1 -p "$B1_PAGES" -n "$B1_MAX" -r "$B1_REPS" -s "$B1_SIZES" >$T/b1.json || fail=1
grep '"size"' $T/b1.json | emit b1 clocksource="$(cat $CS/current_clocksource)"
grep '"reps"' $T/b1.json | emit b1_settings
grep '"noclock_size"' $T/b1.json | emit b1_noclock

# The same with the hpet clocksource (what TCG guests fall back to when
# the TSC is not trusted): ktime_get_mono_fast_ns() then reads the HPET.
cs=$(cat $CS/current_clocksource)
if [ "$cs" != hpet ] && grep -qw hpet $CS/available_clocksource; then
	step "B1 again with the hpet clocksource (was $cs)"
	echo hpet >$CS/current_clocksource
	$B b1 -p "$B1_PAGES" -n "$((B1_MAX / 4))" -r 3 -s "$B1_SIZES" >$T/b1h.json || fail=1
	echo "$cs" >$CS/current_clocksource
	grep '"size"' $T/b1h.json | emit b1 clocksource=hpet
fi

tp_b1

# Where the producer time goes: cpu-clock profile of each side alone.
if [ -n "$PERF" ] && [ "${PROFILE:-1}" = 1 ]; then
	for side in pmcring ftrace; do
		step "B1 profile of $side (perf record -a -e cpu-clock)"
		$PERF record -q -N -a -e cpu-clock -F 4000 -o $T/prof.data -- \
			$B b1 -p "$B1_PAGES" -n "$B1_MAX" -r 1 -s 64 -x $side \
			>/dev/null 2>$T/prof.err || cat $T/prof.err >&2
		$PERF report -i $T/prof.data --stdio --no-children \
			--sort symbol --percent-limit 0.5 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 30 >"$D/profile_$side.txt"
		rm -f $T/prof.data
	done
fi

b2
tp_b2

# -- B2 rate sweep and B4 merge latency --
step "B2 rate sweep / B4 latency: hard-IRQ generator, batches $SWEEP"
for b in $SWEEP; do
	$B lat -n "$B4_N" -b "$b" -o $T/lat.pmclog | emit lat || fail=1
	rm -f $T/lat.pmclog
done
step "B4 with a 5 ms poll period"
$B lat -n "$B4_N" -b 1 -w 5 -o $T/lat.pmclog | emit lat_w5 || fail=1
rm -f $T/lat.pmclog

b3
b5

grep -q '^pmcring_ftrace_bench ' /proc/modules && rmmod pmcring_ftrace_bench
rm -rf $T
exit $fail
