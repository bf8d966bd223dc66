#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: SIGINT or SIGTERM stop `pmcring record` cleanly (CLOSELOG
# last, final barman header; the recorded command gets the signal and its
# status, 130 or 143, is record's, also for a SIGTERM sent while the
# command is being started); SIGKILL at a random moment leaves
# files that `pmcring dump` reads to their last whole record, sorted, in
# every format (a blob OFFSET never points past its DAT, a barman header
# never describes frames that are not there).
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir

# barman: last_ts of the header against the last frame's timestamp (ns)
bm_last_ts() { sed -n 's/^# barman .* last_ts=\([0-9]*\) .*/\1/p' "$1"; }
bm_last_frame() {
	grep -v '^#' "$1" | tail -n 1 | awk '{ split($1, a, "."); printf "%.0f\n", a[1] * 1000000000 + a[2] }'
}

sorted() {
	grep -v '^#' "$1" | awk '{ t = $1 + 0; if (NR > 1 && t < p) { bad = 1; exit } p = t } END { exit bad }'
}

# start FMT OUT: record the workload in the background; $rec is its pid
start() {
	pmcring record --quiet --format "$1" -o "$2" -- pmcring-workload -d 4 -t 2 \
		>"$dir/rec.log" 2>&1 &
	rec=$!
	sleep 2
}

# record passes the signal on to the command and exits with its status
for sig in INT:130 TERM:143; do
	want=${sig#*:}
	sig=${sig%:*}
	start pmclog "$dir/$sig.pmclog"
	kill -"$sig" "$rec"
	wait "$rec"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$dir/rec.log"; fail "SIG$sig: record exited $rc, want $want"; }
	pmcring dump "$dir/$sig.pmclog" >"$dir/$sig.txt" 2>"$dir/$sig.err" ||
		fail "SIG$sig: dump"
	[ -s "$dir/$sig.err" ] && { cat "$dir/$sig.err"; fail "SIG$sig: file not complete"; }
	tail -n 1 "$dir/$sig.txt" | grep -q " CLOSELOG" || fail "SIG$sig: no CLOSELOG"
	sorted "$dir/$sig.txt" || fail "SIG$sig: not sorted"
	echo "# SIG$sig: $(wc -l <"$dir/$sig.txt") records, CLOSELOG last"
done
wait

start barman "$dir/int.barman"
kill -INT "$rec"
wait "$rec"
rc=$?
[ "$rc" = 130 ] || fail "SIGINT barman: exit $rc, want 130"
pmcring dump "$dir/int.barman" >"$dir/int.txt" 2>&1 || fail "SIGINT barman: dump"
grep -q '^# barman .*last_ts=' "$dir/int.txt" || fail "SIGINT barman: header"
[ "$(bm_last_ts "$dir/int.txt")" -ge "$(bm_last_frame "$dir/int.txt")" ] ||
	fail "SIGINT barman: final header older than the last frame"
wait

# SIGTERM early, while the command is being started: before the fix the
# child could take it in record's own handler between fork and exec, and
# the command then ran on until record killed it 10 s later (exit 137).
# The shell's own SIGTERM before record's handler is in gives 143 as well.
for d in 0 0.01 0.05 0.1 0.2 0.4; do
	t0=$(date +%s)
	pmcring record --quiet -o "$dir/early.pmclog" -- \
		pmcring-workload -d 30 -t 1 >"$dir/early.log" 2>&1 &
	rec=$!
	sleep "$d"
	kill -TERM "$rec"
	wait "$rec"
	rc=$?
	t=$(( $(date +%s) - t0 ))
	[ "$rc" = 143 ] || { cat "$dir/early.log"; fail "SIGTERM after ${d}s: exit $rc, want 143"; }
	[ "$t" -le 5 ] || { cat "$dir/early.log"; fail "SIGTERM after ${d}s: took ${t}s"; }
done
echo "# SIGTERM 0 to 0.4 s after start: exit 143 each time, within 5 s"

for fmt in pmclog barman blob; do
	out=$dir/kill.$fmt
	start "$fmt" "$out"
	kill -KILL "$rec"
	wait "$rec" 2>/dev/null
	[ "$fmt" = blob ] && out=$(ls "$out"/pmcring/all.DAT.*)
	pmcring dump "$out" >"$dir/kill.txt" 2>"$dir/kill.err" ||
		{ cat "$dir/kill.err"; fail "SIGKILL $fmt: dump of the prefix"; }
	sorted "$dir/kill.txt" || fail "SIGKILL $fmt: not sorted"
	if [ "$fmt" = barman ]; then
		# the header never describes frames that are not there
		[ "$(bm_last_ts "$dir/kill.txt")" -le "$(bm_last_frame "$dir/kill.txt")" ] ||
			fail "SIGKILL barman: header's last_ts past the last frame"
	fi
	echo "# SIGKILL $fmt: $(grep -vc '^#' "$dir/kill.txt") records; $(cat "$dir/kill.err")"
	wait	# the orphaned workload
done
echo "ok: SIGINT/SIGTERM finish the files, SIGKILL leaves readable prefixes"
