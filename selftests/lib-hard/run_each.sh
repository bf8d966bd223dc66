#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run_each.sh OUTDIR TEST...: run installed selftest programs one by one in
# the guest (busybox sh), each under timeout (T_TIMEOUT, default 1200 s),
# and append to OUTDIR/summary one line per program: its exit status, its
# wall time and how many splat lines it added to dmesg.  Each program's
# output goes to OUTDIR/TEST.log, dmesg after it to OUTDIR/dmesg.after.TEST.
# For the debug kernel, where one boot costs a minute and the durations
# matter; OUTDIR must be on the share, e.g.:
#
#   DEBUG_VMRUN_ARGS="--share $PWD" selftests/lib-hard/debug_kernel.sh run \
#       -- sh $PWD/selftests/lib-hard/run_each.sh $PWD/out/each ring_order
#
# Exit status 1 if any program failed (exit status other than 0 or 4).
out=$1
shift
mkdir -p "$out" || exit 1
cd /kselftest/pmcring || exit 1
spl='WARNING:|BUG:|Oops|general protection|possible recursive locking|circular locking|INFO: |KASAN|lockdep'
fail=0
uname -r >"$out/uname"
for t in "$@"; do
	before=$(dmesg | grep -cE "$spl")
	s=$(date +%s)
	timeout "${T_TIMEOUT:-1200}" ./"$t" >"$out/$t.log" 2>&1
	rc=$?
	e=$(date +%s)
	after=$(dmesg | grep -cE "$spl")
	echo "$t rc=$rc $((e - s))s splat_lines=$((after - before))" |
		tee -a "$out/summary"
	[ "$rc" = 0 ] || [ "$rc" = 4 ] || fail=1
	dmesg >"$out/dmesg.after.$t"
done
exit $fail
