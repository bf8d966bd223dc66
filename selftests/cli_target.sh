#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: `pmcring record -C LIST` and `-t TID` narrow what is
# recorded, as perf's options do: with pmcring-workload running, -C 1 (then
# -C 0) keeps only that CPU's samples (CALLCHAIN) and context switches
# (PROCCSW), yet still records them, and the process records (MAP_IN) of
# every CPU; once the workload's threads run, -t keeps only the samples and
# switches of one of them while -p of the same process sees several
# threads; --types keeps the types it names, and "all" is every type the
# module has.  Blob JSON, whose messages carry the CPU of every record.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir

# dump NAME: the records of recording NAME, one per line
dump() {
	pmcring dump "$dir/$1" >"$dir/$1.txt" 2>"$dir/$1.err" ||
		{ cat "$dir/$1.err"; fail "dump $1"; }
}

# rec NAME ARGS...: one second of recording in blob JSON
rec() {
	name=$1
	shift
	pmcring record --quiet --format blob --blob-json -e cpu-clock \
		--duration 1 -o "$dir/$name" "$@" >"$dir/$name.rec" 2>&1 ||
		{ cat "$dir/$name.rec"; fail "record $name: $*"; }
	dump "$name"
}

# No fd of the runner's: a straggler must not hold its output pipe open.
pmcring-workload -d 30 -t 3 >/dev/null 2>&1 </dev/null &
wl=$!
trap 'kill $wl 2>/dev/null; wait $wl 2>/dev/null; killall pmcring-workload 2>/dev/null; rm -rf "$dir"' EXIT
sleep 0.5

# -- -C: each listed CPU alone -------------------------------------------
ncpu=$(grep -c '^processor' /proc/cpuinfo)
[ "$ncpu" -ge 2 ] || skip "-C needs 2 CPUs, the guest has $ncpu"
for c in 1 0; do
	rec cpu$c -C $c
	t=$dir/cpu$c.txt
	for type in CALLCHAIN PROCCSW; do
		n=$(grep -c " cpu=$c $type " "$t")
		other=$(grep " $type " "$t" | grep -vc " cpu=$c $type ")
		echo "# -C $c: $n $type on CPU $c, $other on others"
		[ "$n" -gt 0 ] || fail "-C $c: no $type of CPU $c"
		[ "$other" = 0 ] || { grep " $type " "$t" | grep -v " cpu=$c " |
			head -n 3; fail "-C $c: $other $type of other CPUs"; }
	done
	# Process and mapping records still come from every CPU.
	grep -q " MAP_IN " "$t" || fail "-C $c: no MAP_IN records"
done

# -- -t: one thread of the workload ---------------------------------------
# Its threads run in the second third of its 30 s.
tid=
for i in $(seq 150); do
	for d in /proc/$wl/task/*; do
		[ "${d##*/}" != "$wl" ] && { tid=${d##*/}; break; }
	done
	[ -n "$tid" ] && break
	sleep 0.1
done
[ -n "$tid" ] || fail "pmcring-workload $wl started no thread in 15 s"
rec tid -t "$tid"
rec pid -p "$wl"
# dump prints each JSON message after "TIME cpu=N TYPE".
for type in CALLCHAIN PROCCSW; do
	n=$(grep " $type " "$dir/tid.txt" | grep -Ec "\"tid\":$tid[,}]")
	other=$(grep " $type " "$dir/tid.txt" | grep -Evc "\"tid\":$tid[,}]")
	echo "# -t $tid: $n $type of the thread, $other of others"
	[ "$n" -gt 0 ] || { grep " $type " "$dir/tid.txt" | head -n 3;
		fail "-t $tid: no $type of the thread"; }
	[ "$other" = 0 ] || { grep " $type " "$dir/tid.txt" |
		grep -Ev "\"tid\":$tid[,}]" | head -n 3
		fail "-t $tid: $other $type of other threads"; }
done
tids=$(grep " CALLCHAIN " "$dir/pid.txt" |
	sed -n 's/.*"tid":\([0-9]*\).*/\1/p' | sort -u | wc -l)
echo "# -p $wl: samples of $tids threads"
[ "$tids" -ge 2 ] || fail "-p $wl: samples of $tids thread(s), want several (the -t check proves nothing)"

# -- --types: one type alone, and "all" (every type the module has) -------
rec types_cc -a --types callchain
n=$(grep -c " CALLCHAIN " "$dir/types_cc.txt")
other=$(grep -Ec " (PROCCSW|MAP_IN|MAP_OUT|PROCEXEC|PROCFORK|PROCEXIT) " "$dir/types_cc.txt")
echo "# --types callchain: $n CALLCHAIN, $other of the other source types"
[ "$n" -gt 0 ] || fail "--types callchain: no CALLCHAIN"
[ "$other" = 0 ] || fail "--types callchain: $other records of other types"
rec types_all -a --types all
for type in CALLCHAIN PROCCSW; do
	grep -q " $type " "$dir/types_all.txt" || fail "--types all: no $type"
done
echo "ok"
