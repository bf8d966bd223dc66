#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: the consumer's memory stays bounded for a recording of any
# length: `pmcring record` of a paced PMCRING_IOC_GENERATE load (the
# hidden --generate N,SIZE,RATE option, 20000 records a second per CPU)
# for SECONDS (first argument, default 5; the documented measurement is
# `cli_rss.sh 60`), its VmRSS sampled twice a second and its VmHWM at the
# end must stay within 32 MiB plus the --staging-mb limit (64 MiB).
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring
make_tmpdir
secs=${1:-5}
rate=20000
staging=64
limit=$(( (32 + staging) * 1024 ))	# KiB

pmcring record --quiet --staging-mb $staging -o "$dir/rss.pmclog" \
	--generate $((rate * secs)),64,$rate >"$dir/rec.log" 2>&1 &
pid=$!
peak=0
hwm=0
while kill -0 $pid 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$pid/status 2>/dev/null)
	h=$(awk '/^VmHWM:/ { print $2 }' /proc/$pid/status 2>/dev/null)
	[ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
	[ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
	sleep 0.5
done
wait $pid || { cat "$dir/rec.log"; grep -q "generate: Operation not permitted" \
	"$dir/rec.log" && skip "GENERATE needs CAP_SYS_ADMIN"; fail "record"; }
size=$(wc -c <"$dir/rss.pmclog")
echo "# $secs s at $rate records/s per CPU: $size bytes written; VmRSS" \
	"peak $peak KiB, VmHWM $hwm KiB (limit $limit KiB = 32 MiB +" \
	"--staging-mb $staging)"
[ "$peak" -gt 0 ] || fail "no VmRSS sample"
[ "$hwm" -le "$limit" ] || fail "VmHWM $hwm KiB above $limit KiB"
[ "$peak" -le "$limit" ] || fail "VmRSS $peak KiB above $limit KiB"
echo "ok: the consumer's memory stays within 32 MiB + the staging limit"
