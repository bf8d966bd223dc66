#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: `pmcring record`'s early errors name their cause and fix,
# and its exit status is the command's, as with time(1): --buffer-pages
# outside the module's range is refused with the range, a missing
# /dev/pmcring says how to load the module, a command that cannot be run
# exits 127, a command's own status passes through; perf's spellings (-F
# HZ, -g, --call-graph) work and the old ones say the new; --version and
# `pmcring list` (every event, and whether this machine counts it), which
# an event this machine cannot count points to.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring
make_tmpdir

# expect STATUS PATTERN ARGS...: record ARGS exits STATUS, stderr has PATTERN
expect()
{
	want=$1 pat=$2
	shift 2
	pmcring record -o "$dir/out" "$@" >"$dir/out.txt" 2>"$dir/err.txt"
	rc=$?
	[ "$rc" = "$want" ] ||
		{ cat "$dir/err.txt"; fail "record $*: exit $rc, want $want"; }
	if [ -n "$pat" ] && ! grep -q -- "$pat" "$dir/err.txt"; then
		cat "$dir/err.txt"
		fail "record $*: no '$pat' on stderr"
	fi
	echo "# record $*: exit $rc: $(head -n 1 "$dir/err.txt")"
}

expect 1 "buffer-pages 1: the module takes 2 to [0-9]* pages per CPU" \
	--buffer-pages 1 -a --duration 0.1
expect 127 "cannot run /nonexistent/cmd" -- /nonexistent/cmd
expect 5 "" -- sh -c 'exit 5'
expect 0 "" -- true
expect 137 "" -- sh -c 'kill -KILL $$'

# The device node moved away: the message says how to get the module.
mv /dev/pmcring "$dir/pmcring.dev" || fail "cannot move /dev/pmcring"
trap 'mv "$dir/pmcring.dev" /dev/pmcring 2>/dev/null; rm -rf "$dir"' EXIT
expect 1 "not found: load the module" -a --duration 0.1
mv "$dir/pmcring.dev" /dev/pmcring
# perf record's spellings; the old ones name the new
expect 0 "" -F 999 -g --call-graph fp,16 -e cpu-clock -- true
expect 0 "" --count 100000 -e cpu-clock -- true
expect 2 "output format is --format barman" -F barman -a
expect 2 "call-graph fp,64" -g 64 -a
expect 2 "-F/--freq" -f 100 -a

for sub in "" record dump stat report; do
	# shellcheck disable=SC2086
	v=$(pmcring $sub --version) || fail "pmcring $sub --version: exit $?"
	echo "$v" | grep -q "^pmcring [0-9]" || fail "pmcring $sub --version: '$v'"
done
echo "# pmcring --version: $v"

pmcring list >"$dir/list.txt" || fail "pmcring list: exit $?"
for ev in cycles instructions cpu-clock task-clock page-faults \
	context-switches; do
	grep -q "^$ev " "$dir/list.txt" || { cat "$dir/list.txt"; fail "list: no $ev"; }
done
# root may always open a software counter on itself
grep -q "^cpu-clock .* yes" "$dir/list.txt" ||
	{ cat "$dir/list.txt"; fail "list: cpu-clock not countable"; }
echo "# $(grep -c ' yes' "$dir/list.txt") events counted here"
# an event this machine cannot count (TCG has no PMU) points to the list
if ! grep -q "^cycles .* yes" "$dir/list.txt"; then
	expect 1 "cannot sample cycles: .*pmcring list" -e cycles -- true
else
	echo "# cycles is counted here: no uncountable event to try"
fi
echo "ok: errors say what to do; the command's status passes through"
