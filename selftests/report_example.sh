#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: the two example consumers of user/examples (built against
# the installed libpmcring by `make -C user check`, which leaves static
# copies in build/vmroot/usr/local/bin/pmcring-example-{consumer,reader})
# run against the module: consumer.c on the raw ABI alone merges every
# CPU's ring with pending_ts and PMCRING_IOC_CLOCK, reader.c with
# libpmcring's pmcring_reader_poll() until -ENODATA.  Each reads back the 16
# USERDATA records it wrote exactly once, hands out every record in
# (timestamp, CPU) order, loses nothing, and its counts equal the kernel's
# producer-page records/bytes.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ex in consumer reader; do
	bin=$(command -v pmcring-example-$ex) ||
		skip "pmcring-example-$ex not built (make -C user check builds it)"
	# a CPU burner beside it, so that several rings have records
	( end=$(( $(date +%s) + 2 )); while [ "$(date +%s)" -lt "$end" ]; do :; done ) &
	burner=$!
	if ! "$bin" -w 16 -t 1 >"$out" 2>&1; then
		tail -n 20 "$out"
		echo "FAIL: $ex exited with an error"
		exit 1
	fi
	wait "$burner" 2>/dev/null || true
	tail -n 3 "$out"
	grep -q "userdata 16 written, all read back once" "$out" ||
		{ echo "FAIL: $ex: USERDATA records missing or duplicated"; exit 1; }
	grep -q " 0 lost," "$out" || { echo "FAIL: $ex: records lost"; exit 1; }
	grep -q "in timestamp order" "$out" ||
		{ echo "FAIL: $ex: records out of order"; exit 1; }
	grep -q "counters match the kernel's" "$out" ||
		{ echo "FAIL: $ex: counts differ from the kernel's"; exit 1; }
	n=$(grep -c " USERDATA " "$out" || true)
	[ "$n" -ge 16 ] || { echo "FAIL: $ex: only $n USERDATA lines printed"; exit 1; }
	echo "ok: example $ex read its 16 USERDATA records in order"
done
