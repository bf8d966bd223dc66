#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: `pmcring record -g` of pmcring-workload (which burns its CPU
# time in burn_cpu()) then `pmcring report`: the top user function is
# burn_cpu, symbolized from the recording's own PROCEXEC/MAP_IN records;
# kernel frames are named with no option, from the FILE.kallsyms and
# FILE.modules that record wrote (as perf keeps kallsyms in perf.data);
# an earlier file of that name is kept as FILE.old; no sample is of
# pmcring's fork before the command's exec (perf's enable on exec);
# --switches shows the
# workload's threads; --folded and --svg hold burn_cpu too; --sort and -G show it in
# perf report's table and call graph; `pmcring script` prints its samples
# in perf script's layout with burn_cpu frames.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

# fail, and show the start of the report
fail() { echo "FAIL: $*"; [ -s "$dir/report.txt" ] && head -n 40 "$dir/report.txt"; exit 1; }

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir

# an earlier recording of that name is kept as prof.pmclog.old (perf's .old)
echo old >"$dir/prof.pmclog"
if ! pmcring record -g --quiet -o "$dir/prof.pmclog" -- \
		pmcring-workload -d 2 -t 1 >"$dir/record.txt" 2>&1; then
	cat "$dir/record.txt"
	grep -qi "not supported\|unknown command\|not implemented\|not built yet" "$dir/record.txt" &&
		skip "pmcring record cannot record this yet"
	fail "pmcring record"
fi

[ "$(cat "$dir/prof.pmclog.old" 2>/dev/null)" = old ] ||
	fail "the earlier prof.pmclog was not kept as prof.pmclog.old"
# record saves the kernel's symbols; report needs no --kallsyms
[ -s "$dir/prof.pmclog.kallsyms" ] || fail "record wrote no prof.pmclog.kallsyms"
[ -s "$dir/prof.pmclog.modules" ] || [ -z "$(cat /proc/modules)" ] ||
	fail "record wrote no prof.pmclog.modules"
ks=
# shellcheck disable=SC2086
pmcring report --switches $ks --svg "$dir/flame.svg" "$dir/prof.pmclog" \
	>"$dir/report.txt" 2>&1 || fail "pmcring report"
head -n 30 "$dir/report.txt"

top=$(sed -n '/^Top user functions/{n;n;p;q}' "$dir/report.txt")
echo "$top" | grep -q " burn_cpu " || fail "top user function is not burn_cpu: $top"
grep -q "^ .* k [a-z_].* \[kernel\]$" "$dir/report.txt" ||
	fail "no kernel frame named from kallsyms"
grep -Eq "^ +[0-9]+ +[0-9]+ pmcring-workload +[0-9]+ +[0-9.]+ " "$dir/report.txt" ||
	fail "no context switch row of pmcring-workload"
pmcring report --folded $ks "$dir/prof.pmclog" >"$dir/folded.txt" ||
	fail "pmcring report --folded"
grep -Eq "^pmcring-workload;(.*;)?burn_cpu(;| )" "$dir/folded.txt" ||
	fail "no folded stack of pmcring-workload ending in burn_cpu"
grep -q 'data-n="burn_cpu"' "$dir/flame.svg" || fail "burn_cpu not in the SVG"
# perf report's habits: -i PATH, and pmcring.pmclog when none is given
# shellcheck disable=SC2086
pmcring report --folded $ks -i "$dir/prof.pmclog" >"$dir/folded-i.txt" &&
	cmp -s "$dir/folded.txt" "$dir/folded-i.txt" || fail "report -i PATH differs"
ks2="--kallsyms $dir/prof.pmclog.kallsyms"
# shellcheck disable=SC2086
(cd "$dir" && cp prof.pmclog pmcring.pmclog &&
	pmcring report --folded $ks $ks2 >"$dir/folded-d.txt") &&
	cmp -s "$dir/folded.txt" "$dir/folded-d.txt" ||
	fail "report without PATH does not read pmcring.pmclog"
# one section per event, named by its PMCALLOCATEDYN record
grep -q "^# Event '[a-z-]*' (pmcid [0-9]*): [0-9]* samples" "$dir/report.txt" ||
	fail "no event section head"
# perf report's table and call graph
# shellcheck disable=SC2086
pmcring report --sort comm,dso,sym -G --top 5 $ks "$dir/prof.pmclog" \
	>"$dir/sort.txt" 2>&1 || fail "pmcring report --sort -G"
grep -Eq "^ +[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9]+  pmcring-workload +pmcring-workload +\[\.\] burn_cpu$" \
	"$dir/sort.txt" || { head -n 20 "$dir/sort.txt"; fail "--sort: no burn_cpu row"; }
grep -q "^          ---" "$dir/sort.txt" || fail "-G: no call graph tree"
# perf script's layout: the workload's samples with burn_cpu+0xOFF (dso)
# shellcheck disable=SC2086
pmcring script $ks "$dir/prof.pmclog" >"$dir/script.txt" 2>&1 ||
	fail "pmcring script"
grep -Eq "^pmcring-workload +[0-9]+/[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: .*: $" \
	"$dir/script.txt" || { head -n 20 "$dir/script.txt"; fail "script: no sample line"; }
grep -Eq "^	 *[0-9a-f]+ burn_cpu\+0x[0-9a-f]+ \(/.*pmcring-workload\)$" \
	"$dir/script.txt" || { head -n 20 "$dir/script.txt"; fail "script: no burn_cpu frame"; }
# perf's enable on exec: no sample of pmcring's fork waiting to exec
grep -Eq "^pmcring +[0-9]+/[0-9]+ " "$dir/script.txt" &&
	{ grep -E -m3 "^pmcring +[0-9]+/" "$dir/script.txt"; fail "script: samples of pmcring before the exec"; }
echo "ok: report of the workload: top user function burn_cpu"
