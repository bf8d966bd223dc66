#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A/B of pmcring.ko builds behind the benchmark's tracepoint, in one VM
# (guest side; Documentation/performance.rst, "Comparing builds"): B1's
# tracepoint rows (tpbench b1) for the empty probe, the floor ring and
# pmcring, for each build in turn, ROUNDS rounds, the builds interleaved
# within each round so that the host's load falls on all of them alike.
#
#   tp_ab.sh DIR ROUNDS NAME...
#
# DIR holds tpbench, pmcring_ftrace_bench.ko and NAME.ko for each NAME (a
# pmcring.ko), and NAME.bench.ko where a build needs its own benchmark
# module.  Prints one line per row: NAME ROUND {tpbench's JSON row}.
# SIZES (default 32,64): record sizes.  Host side, e.g.:
#
#   selftests/vmrun --no-module --append tsc=reliable --share DIR -- \
#	sh DIR/tp_ab.sh DIR 3 before after
set -u
D=$1
R=$2
shift 2
echo "# tp_ab: builds: $*"
echo "# tp_ab: spectre_v2: $(cat /sys/devices/system/cpu/vulnerabilities/spectre_v2)"
echo "# tp_ab: clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
cp "$D/tpbench" /tmp/tpbench || exit 1
rmmod pmcring 2>/dev/null
i=0
while [ $i -lt "$R" ]; do
	for m in "$@"; do
		b=$D/pmcring_ftrace_bench.ko
		[ -f "$D/$m.bench.ko" ] && b=$D/$m.bench.ko
		insmod "$D/$m.ko" || { echo "tp_ab: insmod $m.ko failed" >&2; exit 1; }
		insmod "$b" || { echo "tp_ab: insmod $b failed" >&2; exit 1; }
		/tmp/tpbench b1 -n 20000 -p 2048 -r 3 -s "${SIZES:-32,64}" \
			-x empty,minring,pmcring | grep '"ctx"' | sed "s/^/$m $i /"
		rmmod pmcring_ftrace_bench
		rmmod pmcring
	done
	i=$((i + 1))
done
