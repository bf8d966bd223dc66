#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Wall time of `pmcring report` (or script) on one recording with two
# builds of the command, interleaved run by run on the same machine so that
# both see the same load and page cache:
#
#   user/bench/report_time.sh [-n RUNS] OLD NEW -- REPORT-ARGS...
#
# e.g. OLD = a build of main, NEW = build/user/pmcring, REPORT-ARGS =
# "report --folded rec.pmclog".  One warm-up run each; then RUNS (default
# 7) of each; prints the median and min of each in ms and NEW/OLD of the
# medians.  Output goes to /dev/null, so printing is not measured.
set -eu

runs=7
if [ "${1:-}" = -n ]; then runs=$2; shift 2; fi
[ $# -ge 4 ] && [ "$3" = -- ] || {
	echo "usage: $0 [-n RUNS] OLD NEW -- REPORT-ARGS..." >&2; exit 2; }
old=$1 new=$2
shift 3

# one run of "$@" with binary $1: elapsed ns on stdout
one() {
	b=$1; shift
	t0=$(date +%s%N)
	"$b" "$@" >/dev/null 2>&1 || { echo "$b $*: failed" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

one "$old" "$@" >/dev/null
one "$new" "$@" >/dev/null
to= tn=
i=0
while [ $i -lt "$runs" ]; do
	to="$to $(one "$old" "$@")"
	tn="$tn $(one "$new" "$@")"
	i=$((i + 1))
done

# median and min in ms of a list of ns
stats() {
	echo "$1" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk '
		{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%.1f %.1f\n", m / 1e6, v[1] / 1e6 }'
}
so=$(stats "$to")
sn=$(stats "$tn")
echo "$so" "$sn" | awk -v runs="$runs" -v args="$*" '{
	printf "pmcring %s: %d runs each\n", args, runs
	printf "  old: median %8.1f ms  min %8.1f ms\n", $1, $2
	printf "  new: median %8.1f ms  min %8.1f ms\n", $3, $4
	printf "  new/old (medians): %.2f\n", $3 / $1 }'
