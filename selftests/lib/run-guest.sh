#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The "make run" session, run as root where pmcring is loaded (the VM, or
# the host with HOST=1): record system-wide while pmcring-workload runs,
# then summarize.  Does what the installed pmcring supports and says what
# is not there yet.   Usage: run-guest.sh OUTDIR [WORKLOAD_SECONDS]
OUT=$1
SECS=${2:-3}
PROFILE=$OUT/profile.pmclog
cd "$OUT" || exit 1

echo "== pmcring run: $(uname -r), $(nproc) CPUs, output in $OUT"
if [ -e /dev/pmcring ]; then
	echo "== /dev/pmcring: $(ls -l /dev/pmcring)"
else
	echo "== /dev/pmcring missing: the module is not loaded"
	exit 1
fi

rec_pid=
if ! command -v pmcring >/dev/null 2>&1; then
	echo "== not there yet: no pmcring command (build/user/static/pmcring)"
else
	pmcring record -a -o "$PROFILE" >record.log 2>&1 &
	rec_pid=$!
	sleep 1
	if ! kill -0 "$rec_pid" 2>/dev/null; then
		wait "$rec_pid"
		echo "== not there yet: 'pmcring record -a' exited with $? at once:"
		sed 's/^/   /' record.log
		rec_pid=
	fi
fi

echo "== workload: pmcring-workload -d $SECS (burn_cpu, threads, pipe ping-pong, fork+exec)"
pmcring-workload -d "$SECS" | tee workload.log
wl=$?

if [ -n "$rec_pid" ]; then
	kill -INT "$rec_pid"
	wait "$rec_pid"
	echo "== pmcring record exited with $?"
	sed 's/^/   /' record.log
fi
# record wrote $PROFILE.kallsyms and .modules itself when it ended

if [ -s "$PROFILE" ]; then
	echo "== $(ls -l "$PROFILE")"
	if pmcring report --top 10 "$PROFILE" >report.txt 2>&1; then
		echo "== pmcring report --top 10 (full: $OUT/report.txt)"
		head -n 40 report.txt
	else
		echo "== not there yet: pmcring report failed:"
		head -n 5 report.txt
	fi
	if pmcring report --svg flame.svg "$PROFILE" >/dev/null 2>&1; then
		echo "== flame graph: $OUT/flame.svg"
	fi
else
	echo "== no recording written (see above)"
fi
exit $wl
