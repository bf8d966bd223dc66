#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: `pmcring record` of a frequency-mode counter (cpu-clock -F
# 1000, whose period perf fixes at 1000000 ns) leaves FILE.periods beside
# the pmclog file: the magic and one period per CALLCHAIN of the file, each
# 1000000, while the file itself has no PERIOD record; `pmcring report`
# gives the event count as the sum of those periods.  With -c the sidecar
# holds the fixed period; a recording without samples (no CALLCHAIN
# type, or no counter: -e none) has none and removes an older one.  A binary blob set keeps the PERIOD records, a JSON one gives each
# callchain its "period", which report weights it by.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-workload od
make_tmpdir

record() {	# record NAME ARGS...
	name=$1
	shift
	pmcring record --quiet "$@" -- pmcring-workload -d 1 -t 2 \
		>"$dir/$name.rec" 2>&1 || { cat "$dir/$name.rec"; fail "record $name"; }
}

# -F: the sidecar and the report
record freq -e cpu-clock -F 1000 -o "$dir/f.pmclog"
side="$dir/f.pmclog.periods"
[ -f "$side" ] || fail "no $side"
pmcring dump "$dir/f.pmclog" >"$dir/f.txt" || fail "dump"
grep -q " PERIOD" "$dir/f.txt" && fail "a PERIOD record in the pmclog file"
ncc=$(grep -c " CALLCHAIN " "$dir/f.txt")
[ "$ncc" -gt 50 ] || fail "only $ncc samples"
size=$(wc -c <"$side")
[ "$size" -eq $((16 + 8 * ncc)) ] ||
	fail "$side: $size bytes for $ncc samples (want $((16 + 8 * ncc)))"
[ "$(head -c 8 "$side" | od -A n -c | tr -d ' \n')" = 'pmcrprd\0' ] ||
	fail "$side: bad magic"
od -A n -t u8 -j 16 -v "$side" | tr -s ' ' '\n' | grep -v '^$' |
	sort | uniq -c >"$dir/periods"
echo "# periods (count, value): $(cat "$dir/periods")"
[ "$(awk '{ print $2 }' "$dir/periods")" = 1000000 ] ||
	fail "periods other than 1000000: $(cat "$dir/periods")"
pmcring report "$dir/f.pmclog" >"$dir/f.report" 2>"$dir/f.report.err" ||
	{ cat "$dir/f.report.err"; fail "report"; }
head=$(grep "^# Event 'cpu-clock'" "$dir/f.report")
echo "# $head"
want="$ncc samples, event count $((ncc * 1000000)) (the sum of the samples' recorded periods)"
case "$head" in
*"$want"*) ;;
*) fail "report head: '$head', want '$want'" ;;
esac
grep -q "recorded periods" "$dir/f.report.err" && fail "report warned"

# -c: no PERIOD records; the sidecar holds the fixed period, which the
# file's PMCALLOCATEDYN does not
record fixed -e cpu-clock -c 1000000 -o "$dir/f.pmclog"
pmcring dump "$dir/f.pmclog" >"$dir/c.txt" || fail "dump -c"
ncc=$(grep -c " CALLCHAIN " "$dir/c.txt")
[ "$(wc -c <"$side")" -eq $((16 + 8 * ncc)) ] || fail "-c: $side size"
[ "$(od -A n -t u8 -j 16 -v "$side" | tr -s ' ' '\n' | grep -v '^$' | sort -u)" = 1000000 ] ||
	fail "-c: periods other than 1000000"
pmcring report "$dir/f.pmclog" >"$dir/c.report" 2>/dev/null || fail "report -c"
grep -q "^# Event 'cpu-clock' (pmcid 1): $ncc samples, event count $((ncc * 1000000)) " \
	"$dir/c.report" || { grep "^# Event" "$dir/c.report"; fail "report -c head"; }

# no samples: no sidecar, the older one removed
record nosamples --types proccsw -e cpu-clock -F 1000 -o "$dir/f.pmclog"
[ -e "$side" ] && fail "a recording without samples left $side"
# -e none: no counter, so no sample either: no sidecar (it used to get one
# of the header alone, as the session still took CALLCHAIN)
record nocounter -e none -o "$dir/f.pmclog"
[ -e "$side" ] && fail "-e none (no counter, no sample) left $side ($(wc -c <"$side") bytes)"

# blob: binary keeps PERIOD, JSON puts the period in each callchain
record blob --format blob -e cpu-clock -F 1000 -o "$dir/blob"
dat=$(ls "$dir"/blob/*/*.DAT.* 2>/dev/null | head -n 1)
[ -n "$dat" ] || fail "no blob DAT file"
pmcring dump "$dat" >"$dir/b.txt" || fail "dump blob"
grep -q " PERIOD " "$dir/b.txt" || fail "blob: no PERIOD record"
record json --format blob --blob-json -e cpu-clock -F 1000 -o "$dir/json"
dat=$(ls "$dir"/json/*/*.DAT.* 2>/dev/null | head -n 1)
[ -n "$dat" ] || fail "no JSON DAT file"
tr '\0' '\n' <"$dat" | grep '"type":"callchain"' >"$dir/cc.json"
[ -s "$dir/cc.json" ] || fail "JSON: no callchain"
grep -v '"period":1000000}$' "$dir/cc.json" | head -n 2 >"$dir/bad.json"
[ -s "$dir/bad.json" ] && { cat "$dir/bad.json"; fail "JSON: callchain without its period"; }
njs=$(wc -l <"$dir/cc.json")
echo "# JSON: $njs callchains, each with \"period\":1000000"
pmcring report "$dat" >"$dir/j.report" 2>/dev/null || fail "report JSON"
grep -q "^# Event 'cpu-clock' (pmcid 1): $njs samples, event count $((njs * 1000000)) " \
	"$dir/j.report" || { grep "^# Event" "$dir/j.report"; fail "report JSON head"; }
exit 0
