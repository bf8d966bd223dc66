#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: a hangup (SIGHUP: the terminal or the ssh session that ran
# `pmcring record` went away) finishes the recording as SIGTERM does: the
# file ends with CLOSELOG (pmclog) or its final header (barman), the
# pmclog's FILE.buildids is written, the recorded command gets the SIGHUP
# (status 129, as with timeout(1)) and is gone when record exits, and a
# system-wide recording exits 0.  Under nohup (SIGHUP ignored when record
# starts) the hangup changes nothing: record and its command run on to the
# command's own end.  Before, SIGHUP's default action killed record: no
# CLOSELOG, no final barman header, no FILE.buildids, and the command ran
# on unrecorded.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir
# the recorded commands run under their own name, so that only ours are
# looked for (and killed) here
cp "$(command -v pmcring-workload)" "$dir/hup-load"
trap 'killall hup-load 2>/dev/null; rm -rf "$dir"' EXIT

# complete FILE WHAT: `pmcring dump` reads FILE to its end with no note of
# a cut-short file, and the last record is CLOSELOG (pmclog) or the
# header's last_ts is not older than the last frame (barman)
complete() {
	pmcring dump "$1" >"$dir/dump.txt" 2>"$dir/dump.err" ||
		{ cat "$dir/dump.err"; fail "$2: dump"; }
	[ -s "$dir/dump.err" ] &&
		{ cat "$dir/dump.err"; fail "$2: the file was not finished"; }
	case $1 in
	*.pmclog)
		tail -n 1 "$dir/dump.txt" | grep -q " CLOSELOG" ||
			fail "$2: no CLOSELOG at the end" ;;
	*.barman)
		last=$(sed -n 's/^# barman .* last_ts=\([0-9]*\) .*/\1/p' "$dir/dump.txt")
		frame=$(grep -v '^#' "$dir/dump.txt" | tail -n 1 |
			awk '{ split($1, a, "."); printf "%.0f\n", a[1] * 1000000000 + a[2] }')
		[ -n "$last" ] && [ -n "$frame" ] && [ "$last" -ge "$frame" ] ||
			fail "$2: final header last_ts ${last:-?} older than the last frame ${frame:-?}" ;;
	esac
}

# wait_rec SECONDS: wait for $rec; its status in $rc, false on a timeout
wait_rec() {
	i=0
	while kill -0 "$rec" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt $(($1 * 10)) ]; then
			kill -KILL "$rec"
			wait "$rec"
			return 1
		fi
		sleep 0.1
	done
	wait "$rec"
	rc=$?
}

# -- a command: it gets the hangup, the file is finished -----------------
out=$dir/cmd.pmclog
pmcring record --quiet -o "$out" -- "$dir/hup-load" -d 30 -t 1 \
	>"$dir/rec.log" 2>&1 &
rec=$!
sleep 2
kill -HUP "$rec"
wait_rec 20 || fail "command: still recording 20 s after SIGHUP"
[ "$rc" = 129 ] || { cat "$dir/rec.log"; fail "command: exit $rc, want 129 (the command's SIGHUP)"; }
if pidof hup-load >/dev/null; then
	fail "command: still running after record exited (SIGHUP not passed on)"
fi
complete "$out" "command, SIGHUP"
[ -f "$out.buildids" ] || fail "command, SIGHUP: no FILE.buildids"
echo "# command, SIGHUP: exit 129, CLOSELOG last, FILE.buildids written, command gone"

# -- system-wide, barman: exit 0, final header ---------------------------
"$dir/hup-load" -d 30 -t 1 >/dev/null 2>&1 </dev/null &
load=$!
out=$dir/all.barman
pmcring record --quiet --format barman -a -o "$out" >"$dir/rec.log" 2>&1 &
rec=$!
sleep 2
kill -HUP "$rec"
wait_rec 20 || fail "-a: still recording 20 s after SIGHUP"
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null
[ "$rc" = 0 ] || { cat "$dir/rec.log"; fail "-a: exit $rc after SIGHUP, want 0"; }
complete "$out" "-a barman, SIGHUP"
echo "# -a barman, SIGHUP: exit 0, final header"

# -- nohup: SIGHUP ignored when record starts stays ignored ---------------
out=$dir/nohup.pmclog
(trap '' HUP; exec pmcring record --quiet -o "$out" -- "$dir/hup-load" -d 3 -t 1) \
	>"$dir/rec.log" 2>&1 &
rec=$!
sleep 1
kill -HUP "$rec"
wait_rec 30 || fail "nohup: still recording 30 s after the start"
[ "$rc" = 0 ] || { cat "$dir/rec.log"; fail "nohup: exit $rc, want 0 (the command ran to its end)"; }
complete "$out" "nohup"
wpid=$(sed -n 's/^pmcring-workload: pid \([0-9]*\),.*/\1/p' "$dir/rec.log")
[ -n "$wpid" ] || { cat "$dir/rec.log"; fail "nohup: the command did not finish"; }
grep -q " PROCEXIT .* pid=$wpid " "$dir/dump.txt" ||
	fail "nohup: no PROCEXIT of the command (pid $wpid)"
echo "# nohup: SIGHUP ignored, the command ran to its end, exit 0"
echo "ok: SIGHUP finishes the recording; under nohup it is ignored"
