#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: a recorded command that ignores SIGTERM is killed 10 s
# after record sent it the stop signal (pmcring.rst, Stopping, step 5: "waits
# for the command, at most 10 s, then kills it"), with both CPUs busy:
# `record --duration 1 -- CMD` exits 137 within 1 + 10 s plus a margin
# (GRACE_MARGIN, default 2.5 s; 0.2 to 0.5 s were measured), says so, and
# the file is finished.  The wait used to count 1000 naps of 10 ms, which
# oversleep under load: 14 s
# under TCG with both vCPUs loaded.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir

MARGIN=${GRACE_MARGIN:-2.5}
now() { cut -d' ' -f1 /proc/uptime; }

# one busy loop per CPU, and the command, under names of their own
cp "$(command -v pmcring-workload)" "$dir/grace-load"
cp "$(command -v pmcring-workload)" "$dir/grace-cmd"
trap 'killall grace-load grace-cmd 2>/dev/null; rm -rf "$dir"' EXIT
n=$(grep -c '^processor' /proc/cpuinfo)
i=0
while [ $i -lt "$n" ]; do
	"$dir/grace-load" -d 100 -t 1 >/dev/null 2>&1 </dev/null &
	i=$((i + 1))
done

out=$dir/g.pmclog
t0=$(now)
pmcring record --quiet --duration 1 -o "$out" -- \
	sh -c "trap '' TERM; exec $dir/grace-cmd -d 60 -t 1" >"$dir/rec.log" 2>&1
rc=$?
t=$(echo "$t0 $(now)" | awk '{ printf "%.2f", $2 - $1 }')
echo "# record --duration 1 of a command ignoring SIGTERM: exit $rc after $t s"
[ "$rc" = 137 ] || { cat "$dir/rec.log"; fail "exit $rc, want 137 (the command killed)"; }
grep -q "did not exit within 10 s of SIGTERM" "$dir/rec.log" ||
	{ cat "$dir/rec.log"; fail "no word of the kill"; }
[ "$(echo "$t $MARGIN" | awk '{ print ($1 <= 11 + $2) }')" = 1 ] ||
	fail "took $t s: the grace is 10 s after a 1 s recording (margin $MARGIN s)"
pmcring dump "$out" >"$dir/d.txt" 2>"$dir/d.err" || fail "dump"
[ -s "$dir/d.err" ] && { cat "$dir/d.err"; fail "the file was not finished"; }
tail -n 1 "$dir/d.txt" | grep -q " CLOSELOG" || fail "no CLOSELOG at the end"
echo "ok: the command was killed $t s after the start (bound $(echo "11 $MARGIN" | awk '{ print $1 + $2 }') s)"
