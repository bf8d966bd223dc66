#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: every recording mode stops on request and leaves a file its
# readers accept, with a competing workload running: the cross product of
# formats {pmclog, barman, blob, blob+JSON} x targets {-a, -p PID,
# -- COMMAND} x stops {SIGINT, SIGTERM, --duration, the target's exit,
# SIGKILL}.  For every cell: the time from the stop to pmcring's exit
# (measured, printed, and bounded), the exit status (the command's status
# passes through, as with time(1)), `pmcring stat` reading the file without
# a hole or corruption and (unless killed) counting what record's summary
# says it wrote, and the module free (refcnt 0) within 2 s of the
# recorder's exit, with rmmod then succeeding after each SIGKILL cell (the
# other cells end their session with close(), as the refcnt shows; vmrun
# unloads the module at the end; MATRIX_RMMOD=all: after every cell, at
# ~1 s of TCG each).
#
# MATRIX_STOP_BOUND=S (default 30): the stop-latency bound, seconds.  Under
# TCG with both vCPUs loaded, draining one full set of rings (the most the
# final drain has to write) takes a few seconds; the loaded cells of the
# old consumer never stopped at all.
# MATRIX_KILL=all|N (default all): run the SIGKILL column in every cell or
# in N cells picked with MATRIX_SEED (printed).
# MATRIX_FORMATS, MATRIX_TARGETS, MATRIX_STOPS: a part of the matrix only
# (default "pmclog barman blob json", "all pid cmd", "int term dur exit kill").
#
# Files go to a tmpfs scratch directory.  Where a 9p file system is mounted
# (the VM runner's share: slow writes, each a round trip to the host) the
# -a cells with SIGINT and SIGKILL run once more with their files there:
# that is where a system-wide recording used to record its own writes
# faster than it drained them and never stopped.  There also a second
# SIGINT 50 ms after the first ("int2") must end the final drain at once
# and still leave a complete file (the trailer is written).
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir

BOUND=${MATRIX_STOP_BOUND:-30}
KILLS=${MATRIX_KILL:-all}
SEED=${MATRIX_SEED:-$(($(date +%s) % 100000))}
echo "# seed $SEED (MATRIX_SEED=$SEED repeats the SIGKILL subset)"

# The module is reloaded after each cell's rmmod: the file it came from.
KO=${PMCRING_KO:-/lib/vmrun/pmcring.ko}
[ -f "$KO" ] || KO=$(modinfo -n pmcring 2>/dev/null || true)
if [ -z "$KO" ] || [ ! -f "$KO" ] || ! command -v rmmod >/dev/null ||
   [ ! -e /sys/module/pmcring/initstate ]; then
	KO=
	echo "# no loadable pmcring.ko found (PMCRING_KO=...): rmmod is not checked"
fi

now() { cut -d' ' -f1 /proc/uptime; }
# elapsed T0 [T1]: seconds from T0 to T1 (default now), two decimals
elapsed() { echo "$1 ${2:-$(now)}" | awk '{ printf "%.2f", $2 - $1 }'; }

# The competing load, under its own name so a cell can kill what its own
# command left behind (pmcring-workload forks) without killing the load.
cp "$(command -v pmcring-workload)" "$dir/bg-load"
"$dir/bg-load" -d 100000 -t 2 >/dev/null 2>&1 &
load=$!
trap 'kill $load 2>/dev/null; killall pmcring-workload 2>/dev/null; rm -rf "$dir"' EXIT

# wait_gone PID SECONDS: wait for PID to exit; false if it is still there.
wait_gone()
{
	i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $(($2 * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# rmmod_check: the module is free (its refcnt 0) within 2 s of the
# recorder's exit, and (SIGKILL cells) rmmod then succeeds at once; then
# load it again.
# free_t is the time to a zero refcnt, the issue's measure; rmmod_t adds
# rmmod's own run time (tracepoint and RCU synchronisation, slow in TCG).
free_t=-
rmmod_t=-
rmmod_check()
{
	free_t=-
	rmmod_t=-
	[ -n "$KO" ] || return 0
	t0=$(now)
	i=0
	until [ "$(cat /sys/module/pmcring/refcnt 2>/dev/null)" = 0 ]; do
		i=$((i + 1))
		if [ $i -ge 100 ]; then
			echo "# refcnt still $(cat /sys/module/pmcring/refcnt) after 2 s"
			return 1
		fi
		sleep 0.02
	done
	free_t=$(elapsed "$t0")
	[ "$stop" = kill ] || [ "${MATRIX_RMMOD:-}" = all ] || return 0
	if ! rmmod pmcring; then
		echo "# refcnt 0, yet rmmod failed"
		return 1
	fi
	rmmod_t=$(elapsed "$t0")
	insmod "$KO" || fail "insmod $KO"
}

cells=0
bad=0
kill_cells=0
worst=0
worst_free=0
# cell FMT TARGET STOP
cell()
{
	fmt=$1 tgt=$2 stop=$3
	name="$fmt $tgt $stop${where:+ (files on $where)}"
	out=${where:-$dir}/pmcring-matrix.$$.$fmt.$tgt.$stop
	case $fmt in
	pmclog|barman) fargs="--format $fmt" ;;
	blob) fargs="--format blob" ;;
	json) fargs="--format blob --blob-json" ;;
	esac
	dargs=
	[ "$stop" = dur ] && dargs="--duration 1"
	victim=
	want=0
	msg=
	case $tgt in
	all)	set -- -a ;;
	pid)	pmcring-workload -d 30 -t 1 >/dev/null 2>&1 &
		victim=$!
		set -- -p "$victim" ;;
	cmd)	case $stop in
		exit) set -- -- sh -c 'pmcring-workload -d 1 -t 1 >/dev/null; exit 3'
		      want=3 ;;
		int)  set -- -- pmcring-workload -d 30 -t 1; want=130 ;;
		*)    set -- -- pmcring-workload -d 30 -t 1; want=143 ;;
		esac ;;
	esac
	[ "$stop" = kill ] && want=137
	# shellcheck disable=SC2086
	pmcring record $fargs $dargs -o "$out" "$@" >"$dir/rec.out" 2>"$dir/rec.err" &
	rec=$!
	t_start=$(now)
	sleep 1
	t0=$(now)
	case $stop in
	int)	kill -INT $rec ;;
	int2)	kill -INT $rec; sleep 0.05; kill -INT $rec ;;
	term)	kill -TERM $rec ;;
	kill)	kill -KILL $rec ;;
	exit)	if [ -n "$victim" ]; then
			kill -KILL "$victim"; wait "$victim" 2>/dev/null; victim=
		fi ;;
	dur)	t0=$(echo "$t_start" | awk '{ print $1 + 1 }') ;;
	esac
	if ! wait_gone $rec $((BOUND + 10)); then
		kill -KILL $rec
		msg="still recording $((BOUND + 10)) s after the stop;"
	fi
	wait $rec
	rc=$?
	lat=$(elapsed "$t0")
	[ -n "$victim" ] && { kill -KILL "$victim"; wait "$victim"; } 2>/dev/null
	killall pmcring-workload 2>/dev/null

	[ "$rc" = "$want" ] || msg="$msg exit $rc, want $want;"
	if [ "$stop" != kill ] &&
	   [ "$(echo "$lat $BOUND" | awk '{ print ($1 > $2) }')" = 1 ]; then
		msg="$msg stopped after $lat s (bound $BOUND s);"
	fi
	if [ "$stop" != kill ]; then
		worst=$(echo "$worst $lat" | awk '{ print ($2 > $1) ? $2 : $1 }')
	fi

	# the file, by the project's own reader
	if ! pmcring stat "$out" >"$dir/stat.out" 2>"$dir/stat.err"; then
		msg="$msg stat failed: $(head -n 1 "$dir/stat.err");"
	elif grep -q corrupt "$dir/stat.err"; then
		msg="$msg $(head -n 1 "$dir/stat.err");"
	elif [ "$stop" != kill ]; then
		got=$(sed -n '1s/.* \([0-9]*\) records, .*/\1/p' "$dir/stat.out")
		said=$(sed -n 's/^pmcring: .*(\([0-9]*\) in the file).*/\1/p' "$dir/rec.err")
		[ -s "$dir/stat.err" ] && msg="$msg not complete: $(head -n 1 "$dir/stat.err");"
		[ -n "$said" ] && [ "$got" = "$said" ] ||
			msg="$msg stat counts ${got:-?}, record said ${said:-nothing};"
	fi
	if rmmod_check; then
		[ "$free_t" = - ] || worst_free=$(echo "$worst_free $free_t" |
			awk '{ print ($2 > $1) ? $2 : $1 }')
	else
		msg="$msg module not free 2 s after the recorder;"
	fi

	cells=$((cells + 1))
	n=$(sed -n '1s/.* \([0-9]*\) records, .*/\1/p' "$dir/stat.out" 2>/dev/null)
	if [ -n "$msg" ]; then
		bad=$((bad + 1))
		echo "not ok $cells $name:$msg"
		sed 's/^/#   record: /' "$dir/rec.err" | tail -n 3
	else
		echo "ok $cells $name: exit $rc, stop ${lat} s, ${n:-0} records, free ${free_t} s, rmmod ${rmmod_t} s"
	fi
	rm -rf "$out"
}

# The SIGKILL cells: all, or MATRIX_KILL of them picked from the seed.
pick_kill()
{
	[ "$KILLS" = all ] && return 0
	kill_cells=$((kill_cells + 1))
	echo "$SEED $kill_cells $KILLS" |
		awk '{ srand($1 * 1000 + $2); exit !(rand() < $3 / 12) }'
}

for fmt in ${MATRIX_FORMATS:-pmclog barman blob json}; do
	for tgt in ${MATRIX_TARGETS:-all pid cmd}; do
		for stop in ${MATRIX_STOPS:-int term dur exit kill}; do
			[ "$tgt.$stop" = all.exit ] && continue
			if [ "$stop" = kill ] && ! pick_kill; then
				echo "# skip $fmt $tgt kill (not in this seed's subset)"
				continue
			fi
			cell $fmt $tgt $stop
		done
	done
done

# Slow storage: the first writable 9p mount.
where=
for m in $(awk '$3 == "9p" { print $2 }' /proc/mounts); do
	if [ -d "$m" ] && [ -w "$m" ]; then
		where=$m
		break
	fi
done
if [ -n "$where" ]; then
	for fmt in ${MATRIX_FORMATS:-pmclog barman blob json}; do
		for stop in int int2 kill; do
			cell $fmt all $stop
		done
	done
else
	echo "# no writable 9p mount: the slow-storage cells do not run"
fi

echo "# worst stop latency: $worst s (bound $BOUND s)"
echo "# worst time to a free module: $worst_free s (bound 2 s)"
[ "$bad" = 0 ] || fail "$bad of $cells cells failed"
echo "ok: $cells cells"
