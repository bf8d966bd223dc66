#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: the custom consumer example of user/examples (built against
# the installed libpmcring by `make -C user check`, which leaves a static
# copy in build/vmroot/usr/local/bin/pmcring-example-consumer) maps every
# CPU's ring with the raw ABI, reads back 16 USERDATA records it wrote with
# PMCRING_IOC_WRITELOG exactly once each, and loses nothing.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
consumer=$(command -v pmcring-example-consumer) ||
	skip "pmcring-example-consumer not built (make -C user check builds it)"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$consumer" -w 16 -t 1 >"$out" 2>&1; then
	tail -n 20 "$out"
	echo "FAIL: consumer exited with an error"
	exit 1
fi
tail -n 2 "$out"
grep -q "userdata 16 written, all read back once" "$out" ||
	{ echo "FAIL: USERDATA records missing or duplicated"; exit 1; }
grep -q " 0 lost," "$out" || { echo "FAIL: records lost"; exit 1; }
n=$(grep -c " USERDATA " "$out" || true)
[ "$n" -ge 16 ] || { echo "FAIL: only $n USERDATA lines printed"; exit 1; }
echo "ok: example consumer read its 16 USERDATA records"
