#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: the consumer killed with SIGKILL at random points.  In a
# loop, `pmcring record` writes a generated load in each format (pmclog,
# barman, LDMS blob) and is killed -9 after a random delay (0-500 ms:
# before the session exists, while rings fill, while writing).  After each
# kill: the output is a valid prefix (`pmcring dump` reads it to its end
# without an error, the generated records of each CPU come in increasing
# sequence order, no record is torn), the session is torn down (the
# module's reference count is back to 0) and nothing is left mapped.
# HARD_KILL_ROUNDS sets the number of kills (default 24); HARD_KILL_KEEP
# names a directory that receives the outputs that fail.
set -u

ROUNDS=${HARD_KILL_ROUNDS:-24}
KSFT_SKIP=4

skip() { echo "# SKIP: $*"; exit $KSFT_SKIP; }

[ -e /dev/pmcring ] || skip "/dev/pmcring missing (module not loaded)"
[ "$(id -u)" = 0 ] || skip "needs root"
command -v pmcring >/dev/null || skip "pmcring not on PATH"
[ -r /sys/module/pmcring/refcnt ] || skip "pmcring is not a loadable module"

DIR=$(mktemp -d /tmp/hard_kill.XXXXXX)
# Failing outputs are kept here for a look (HARD_KILL_KEEP, default none).
SHARE_KEEP=${HARD_KILL_KEEP:-/nonexistent}
trap 'rm -rf "$DIR"' EXIT

refcnt() { cat /sys/module/pmcring/refcnt; }

# Wait up to 2 s for the module's reference count to drop to 0.
settled()
{
	_w=0
	while [ "$(refcnt)" != 0 ] && [ $_w -lt 40 ]; do
		sleep 0.05
		_w=$((_w + 1))
	done
	[ "$(refcnt)" = 0 ]
}

# Random integer 0..$1-1 (busybox ash has $RANDOM; fall back to /dev/urandom).
rnd()
{
	_r=${RANDOM:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
	echo $((_r % $1))
}

# Checks a dump: per generating CPU, seq numbers strictly increase.
# dump prints "TS cpu=- GENERATED len=64 seq=N gen_cpu=C ..." (pmclog,
# blob) and "TS cpu=C ANNOTATION task=0 channel=0 text="pmcring GENERATED
# gen_cpu=C seq=N"" (barman): the fields are read at their place (a loop
# over every field of 10,000s of lines took up to 20 s a round under TCG),
# and looked for only where they are not.
check_order()
{
	awk '
	/ GENERATED / {
		cpu = ""; seq = ""
		if ($5 ~ /^seq=/ && $6 ~ /^gen_cpu=/) {
			seq = substr($5, 5); cpu = substr($6, 9)
		} else if ($8 ~ /^gen_cpu=/ && $9 ~ /^seq=[0-9]+"$/) {
			cpu = substr($8, 9); seq = substr($9, 5, length($9) - 5)
		} else for (i = 1; i <= NF; i++) {
			if ($i ~ /^gen_cpu=/) { cpu = $i; sub(/^gen_cpu=/, "", cpu) }
			if ($i ~ /^seq=/) { seq = $i; sub(/^seq=/, "", seq) }
		}
		if (cpu == "" || seq == "") next
		n++
		if ((cpu in last) && seq + 0 <= last[cpu]) {
			printf "cpu %s: seq %s after %s\n", cpu, seq, last[cpu]
			bad = 1; exit 1
		}
		last[cpu] = seq + 0
	}
	END { if (!bad) printf "%d", n; exit bad }' "$1"
}

echo "TAP version 13"
echo "1..1"
settled || { echo "not ok 1 kill loop # refcnt $(refcnt) before starting"; exit 1; }

fail=0
kills=0
records=0
i=0
while [ $i -lt "$ROUNDS" ]; do
	case $((i % 3)) in
	0) fmt=pmclog ;;
	1) fmt=barman ;;
	*) fmt=blob ;;
	esac
	out=$DIR/k$i.$fmt
	delay=$(rnd 500)
	pmcring record -q --format "$fmt" -o "$out" --buffer-pages 4 \
		--generate 100000,64 >"$DIR/rec.log" 2>&1 &
	pid=$!
	usleep $((delay * 1000)) 2>/dev/null || sleep "0.$(printf '%03d' "$delay")"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	kills=$((kills + 1))

	if ! settled; then
		echo "# round $i ($fmt, ${delay} ms): session not torn down, refcnt $(refcnt)"
		fail=1
	fi
	if grep -q " /dev/pmcring" /proc/[0-9]*/maps 2>/dev/null; then
		echo "# round $i: a pmcring mapping survived its owner"
		fail=1
	fi
	# A blob set is named by its DAT file; pmclog/barman by the file.
	target=$out
	[ $fmt = blob ] && target=$(ls "$out"/*/*.DAT.* 2>/dev/null | head -n 1)
	# Nothing written yet (killed before the file got its header) is a
	# valid empty prefix; anything else must read back cleanly.
	if [ -n "$target" ] && [ -s "$target" ]; then
		if ! pmcring dump "$target" >"$DIR/dump.txt" 2>"$DIR/dump.err"; then
			echo "# round $i ($fmt, killed after ${delay} ms, $(wc -c <"$target") bytes): pmcring dump failed:"
			sed 's/^/#   /' "$DIR/dump.err" | head -5
			mkdir -p "$SHARE_KEEP/k$i" 2>/dev/null &&
				cp -r "$out" "$SHARE_KEEP/k$i/" 2>/dev/null
			fail=1
		fi
		if n=$(check_order "$DIR/dump.txt"); then
			records=$((records + ${n:-0}))
		else
			echo "# round $i ($fmt): $n"
			fail=1
		fi
	fi
	rm -rf "$out" "$out".* 2>/dev/null
	i=$((i + 1))
done

echo "# hard_kill: kills=$kills records_checked=$records"
if [ $fail = 0 ]; then
	echo "ok 1 kill loop: $kills kills survived"
	exit 0
fi
echo "not ok 1 kill loop"
exit 1
