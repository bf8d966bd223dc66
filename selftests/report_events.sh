#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: `pmcring record -e cpu-clock,task-clock` of pmcring-workload,
# then `pmcring report`: one section per event, each with burn_cpu on top
# and its own sample count (not a sum of both); --event picks one for
# --folded; `pmcring script` names each sample's event, and both appear.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

fail() { echo "FAIL: $*"; [ -s "$dir/report.txt" ] && head -n 60 "$dir/report.txt"; exit 1; }

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir

pmcring record --quiet -e cpu-clock,task-clock -o "$dir/ev.pmclog" -- \
	pmcring-workload -d 1 -t 1 >"$dir/record.txt" 2>&1 ||
	{ cat "$dir/record.txt"; fail "pmcring record -e cpu-clock,task-clock"; }
ks=
[ -s "$dir/ev.pmclog.kallsyms" ] || ks="--kallsyms /proc/kallsyms"
# shellcheck disable=SC2086
pmcring report $ks "$dir/ev.pmclog" >"$dir/report.txt" 2>&1 || fail "pmcring report"
head -n 12 "$dir/report.txt"

n_all=$(sed -n 's/^# [0-9]* records, \([0-9]*\) samples.*/\1/p' "$dir/report.txt")
n_cpu=$(sed -n "s/^# Event 'cpu-clock' (pmcid [0-9]*): \([0-9]*\) samples.*/\1/p" "$dir/report.txt")
n_task=$(sed -n "s/^# Event 'task-clock' (pmcid [0-9]*): \([0-9]*\) samples.*/\1/p" "$dir/report.txt")
[ -n "$n_cpu" ] && [ -n "$n_task" ] || fail "no section per event"
[ "$n_cpu" -gt 0 ] && [ "$n_task" -gt 0 ] || fail "an event without samples"
[ $((n_cpu + n_task)) -eq "$n_all" ] ||
	fail "sections hold $n_cpu + $n_task samples, the file $n_all"
# each section's first "Top user functions" row is burn_cpu
rows=$(sed -n '/^Top user functions/{n;n;p}' "$dir/report.txt")
[ "$(echo "$rows" | grep -c ' burn_cpu ')" -eq 2 ] ||
	fail "burn_cpu is not the top user function of both events: $rows"

# shellcheck disable=SC2086
pmcring report --folded --event task-clock $ks "$dir/ev.pmclog" \
	>"$dir/task.folded" || fail "report --folded --event task-clock"
sum=$(awk '{ s += $NF } END { print s + 0 }' "$dir/task.folded")
[ "$sum" -eq "$n_task" ] || fail "--event task-clock folds $sum samples, not $n_task"

# shellcheck disable=SC2086
pmcring script $ks "$dir/ev.pmclog" >"$dir/script.txt" || fail "pmcring script"
c=$(grep -c ' cpu-clock: $' "$dir/script.txt")
t=$(grep -c ' task-clock: $' "$dir/script.txt")
[ "$c" -eq "$n_cpu" ] && [ "$t" -eq "$n_task" ] ||
	fail "script: $c cpu-clock and $t task-clock samples, want $n_cpu and $n_task"
echo "ok: two events, $n_cpu cpu-clock and $n_task task-clock samples, kept apart"
