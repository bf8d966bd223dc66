#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# hotplug4.sh: CPU hotplug while recording with 4 vCPUs (CPUs 1-3 go
# offline and come back HARD_HOTPLUG_CYCLES times each, default 3).  The
# make check suite boots 2 vCPUs, where hard_hotplug can only cycle CPU 1;
# this is the separate 4-vCPU run (check.sh: one extra vmrun, ~1-2 min in
# TCG).  Prints the test's KTAP; exit status: vmrun's.
#   selftests/lib-hard/hotplug4.sh [--kernel VER]
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$TOP/build/kselftest-install/pmcring/hard_hotplug" ] || {
	echo "hotplug4: build the selftests first (make selftests)" >&2
	exit 2
}
exec "$TOP/selftests/vmrun" --cpus 4 --timeout 900 \
	--env HARD_HOTPLUG_CYCLES="${HARD_HOTPLUG_CYCLES:-3}" "$@" -- \
	/kselftest/pmcring/hard_hotplug
