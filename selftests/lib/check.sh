#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The test half of "make check" (the Makefile builds first): host unit
# tests, the LDMS cluster on loopback (ldms_cluster.sh), the DKMS build
# and install for 6.1 and 6.12 (dkms_check.sh), the VM harness' own
# checks, the kselftest suite in one VM boot through the installed
# run_kselftest.sh, and `pmcring record --ldms` into ldmsd daemons in a VM
# (user/tests/ldms_vm.sh).  Prints KTAP as it goes and ends
# with exactly one line "N passed, N failed, N skipped" (top-level results
# of every stage); exits non-zero on any failure.
#
# Environment: KVER (kernel series for the VM, default 6.1),
# ARCH (amd64, default, or arm64: every VM stage in the arm64 VM,
# pmu_sample.sh under -icount in a boot of its own, stage 7),
# CHECK_VM_TIMEOUT (seconds for the suite boot, default 1200),
# CHECK_SKIP_VM=1 (host stages only, for quick iterations),
# CHECK_ARM64=0 (amd64: no arm64 stage; the Makefile then builds no arm64).
#
# On amd64 a last stage boots the arm64 VM (selftests/vmrun --arch arm64,
# -icount shift=0) for what only it can show: hardware-counter sampling
# (pmu_sample.sh on armv8_pmuv3), and the ring order and loss tests on a
# weakly ordered CPU (ring_order, ring_drop); its recording is then
# reported on by this host's pmcring.
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$TOP/build
LOG=$BUILD/check
VMRUN=$TOP/selftests/vmrun
KVER=${KVER:-6.1}
ARCH=${ARCH:-amd64}
case "$ARCH" in x86_64) ARCH=amd64 ;; aarch64) ARCH=arm64 ;; esac
# Every vmrun below boots this architecture's VM.
export VM_ARCH=$ARCH
mkdir -p "$LOG"
# The arm64 kselftest install: build/arm64/ of a cross build, build/ of a
# native one.
AKSFT=$BUILD/arm64/kselftest-install
[ -d "$AKSFT" ] || AKSFT=$BUILD/kselftest-install

passed=0
failed=0
skipped=0
harness_n=0

# Count the top-level KTAP/TAP results of a log (nested lines start with
# '#' or blanks and are not counted).
count()
{
	local p f s
	p=$(grep -Ec '^ok [0-9]+' "$1")
	s=$(grep -E '^ok [0-9]+' "$1" | grep -Eic '# *skip')
	f=$(grep -Ec '^not ok [0-9]+' "$1")
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
}

# One result line of the harness checks.
result()
{
	harness_n=$((harness_n + 1))
	case "$1" in
	ok) passed=$((passed + 1)); echo "ok $harness_n $2" ;;
	skip) skipped=$((skipped + 1)); echo "ok $harness_n $2 # SKIP ${3:-}" ;;
	*) failed=$((failed + 1)); echo "not ok $harness_n $2${3:+ # $3}" ;;
	esac
}

start=$(date +%s)
stage=$start
# "# <what>: Ns" for the stage that just ended.
took()
{
	local now
	now=$(date +%s)
	echo "# $1: $((now - stage))s"
	stage=$now
}

# -- 1. host unit tests -------------------------------------------------------
if [ -f "$TOP/user/Makefile" ]; then
	echo "# host: make -C user check"
	make --no-print-directory -C "$TOP/user" check 2>&1 | tee "$LOG/host.log"
	rc=${PIPESTATUS[0]}
	count "$LOG/host.log"
	if [ "$rc" != 0 ] && ! grep -q '^not ok' "$LOG/host.log"; then
		echo "not ok - host: make -C user check exit=$rc"
		failed=$((failed + 1))
	fi
	took "host unit tests"
else
	echo "# host: no user/Makefile yet, no host unit tests"
fi

# -- 1a. LDMS: records through a node ldmsd and an aggregator on loopback -----
# (LDMS built once by `make ldms`; without it the test skips, in CI fails)
if [ -f "$TOP/user/Makefile" ]; then
	echo "# host: LDMS cluster (user/tests/ldms_cluster.sh)"
	if make --no-print-directory -s -C "$TOP/user" ldms-feed \
			>"$LOG/ldms-build.log" 2>&1; then
		"$TOP/user/tests/ldms_cluster.sh" 2>&1 | tee "$LOG/ldms.log"
		rc=${PIPESTATUS[0]}
		count "$LOG/ldms.log"
		if [ "$rc" != 0 ] && [ "$rc" != 4 ] &&
		   ! grep -q '^not ok' "$LOG/ldms.log"; then
			echo "not ok - host: ldms_cluster.sh exit=$rc"
			failed=$((failed + 1))
		fi
	else
		sed 's/^/# /' "$LOG/ldms-build.log"
		echo "not ok - host: make -C user ldms-feed"
		failed=$((failed + 1))
	fi
	took "LDMS cluster"
fi

# -- 1b. the DKMS install, in private trees ----------------------------------
# (for this host's kernels: an arm64 cross check has none to build for)
if [ "$ARCH" = amd64 ]; then
	echo "# host: DKMS build and install for 6.1 and 6.12 (selftests/lib/dkms_check.sh)"
	"$TOP/selftests/lib/dkms_check.sh" 2>&1 | tee "$LOG/dkms.log"
	count "$LOG/dkms.log"
	took "DKMS"
fi

# -- 2. harness checks ----------------------------------------------------------
echo "# harness: checks of the test machinery itself"
# tcg_thread: the TCG thread mode of the test VMs for a QEMU version and a
# guest kernel (multi on QEMU >= 8.1; on 7.2 single from 6.12 on or when
# the caller sets TCG_OLD=single), and a clear error on bad input.
tt=$TOP/selftests/lib/tcg_thread
tt_got=$(for c in "7.2 6.1.0-56-amd64" "7.2 6.12.117+deb12-amd64" \
		"10.0 6.12.117+deb12-amd64" "10.0 6.1.0-56-amd64" \
		"8.0 6.12.1" "8.1 6.12.1"; do
		# shellcheck disable=SC2086
		env -u VM_TCG_THREAD -u TCG_OLD "$tt" $c 2>&1 || echo "exit=$?"
	done
	env -u VM_TCG_THREAD TCG_OLD=single "$tt" 7.2 6.1.0-56-amd64
	env -u VM_TCG_THREAD TCG_OLD=single "$tt" 10.0 6.1.0-56-amd64
	env VM_TCG_THREAD=single "$tt" 10.0 6.1.0-56-amd64
	for c in "7.2 bogus" "seven 6.1" "7 6.1" "7.2"; do
		# shellcheck disable=SC2086
		env -u VM_TCG_THREAD -u TCG_OLD "$tt" $c >/dev/null 2>&1
		echo "exit=$?"
	done | tr '\n' ' ')
tt_want="multi single multi multi single multi single multi single exit=2 exit=2 exit=2 exit=2 "
if [ "$(echo $tt_got)" = "$(echo $tt_want)" ]; then
	result ok "harness: tcg_thread picks single/multi by QEMU version and kernel"
else
	result fail "harness: tcg_thread picks single/multi by QEMU version and kernel" \
		"got '$(echo $tt_got)', want '$(echo $tt_want)'"
fi
echo "TAP version 13"
if "$VMRUN" --help | grep -q -- '--share DIR'; then
	result ok "harness: vmrun --help"
else
	result fail "harness: vmrun --help"
fi

# The host path: without the module every selftest must skip, none fail.
if [ -e /sys/module/pmcring ]; then
	make -s --no-print-directory -C "$TOP/selftests" run_tests \
		>"$LOG/host-selftests.log" 2>&1
	echo "# host selftests (module loaded on this host):"
	sed 's/^/# /' "$LOG/host-selftests.log"
	count "$LOG/host-selftests.log"
else
	make -s --no-print-directory -C "$TOP/selftests" run_tests \
		>"$LOG/host-selftests.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^ok .* # SKIP' "$LOG/host-selftests.log" &&
	   ! grep -q '^not ok' "$LOG/host-selftests.log"; then
		result ok "harness: host run_tests without the module skips, exit 0"
	else
		sed 's/^/# /' "$LOG/host-selftests.log"
		bad=$(sed -n 's/^not ok [0-9]* selftests: [^:]*: \([^ ]*\).*/\1/p' \
			"$LOG/host-selftests.log" | tr '\n' ' ')
		result fail "harness: host run_tests without the module skips, exit 0" \
			"exit=$rc${bad:+; failed instead of skipping: $bad}"
	fi
fi

if [ "${CHECK_SKIP_VM:-0}" = 1 ]; then
	result skip "harness: vmrun fails a failing test with its status" "CHECK_SKIP_VM=1"
	result skip "harness: vmrun fails on a dmesg splat" "CHECK_SKIP_VM=1"
	result skip "harness: vmrun fails when the module does not unload" "CHECK_SKIP_VM=1"
	echo "# vm: skipped (CHECK_SKIP_VM=1)"
	skipped=$((skipped + 1))
else
	# One boot checks the three ways a run must fail, each by its own
	# evidence: a failing test program (its status, mapped 1 -> 7 so it
	# cannot be confused with vmrun's own 1, must come back), a WARNING in
	# dmesg, and a module left busy (a process keeps /dev/pmcring open).
	"$VMRUN" --kernel "$KVER" --timeout 300 -- sh -c \
		'cd / && sleep 600 </dev/pmcring & fake_splat.sh; fail_on_purpose; rc=$?; [ $rc = 1 ] && exit 7; exit $rc' \
		>"$LOG/vm-harness.log" 2>&1
	rc=$?
	if [ "$rc" = 7 ] && grep -q '^not ok 1 global.fails' "$LOG/vm-harness.log"; then
		result ok "harness: vmrun fails a failing test with its status"
	else
		result fail "harness: vmrun fails a failing test with its status" "exit=$rc, want 7"
	fi
	if grep -q 'FAIL: kernel splat in guest dmesg' "$LOG/vm-harness.log"; then
		result ok "harness: vmrun fails on a dmesg splat"
	else
		result fail "harness: vmrun fails on a dmesg splat"
	fi
	if grep -q 'FAIL: pmcring did not unload' "$LOG/vm-harness.log"; then
		result ok "harness: vmrun fails when the module does not unload"
	else
		result fail "harness: vmrun fails when the module does not unload"
	fi
	[ "$rc" = 7 ] || sed 's/^/# /' "$LOG/vm-harness.log"

	took "harness checks"

	# -- 3. the kselftest suite in one VM boot ---------------------------------
	# arm64: every test but pmu_sample.sh, which stage 7 runs in a boot
	# of its own under -icount (only there is the emulated cycle counter
	# exact: without it the counter follows the host's clock and its
	# overflow interrupts come late, by more than a 100 us period on this
	# loaded machine, and samples go missing: 957 for C/P 1411.92 under
	# QEMU 10 with a TCG thread per vCPU)
	suite=(-c pmcring)
	if [ "$ARCH" = arm64 ]; then
		suite=()
		for t in $(grep '^pmcring:' "$AKSFT/kselftest-list.txt" |
			   grep -vx 'pmcring:pmu_sample.sh'); do
			suite+=(-t "$t")
		done
	fi
	echo "# vm: run_kselftest.sh ${suite[*]:0:2}$([ ${#suite[@]} -gt 2 ] && echo " ...") on $KVER $ARCH (selftests/vmrun)"
	"$VMRUN" --kernel "$KVER" --timeout "${CHECK_VM_TIMEOUT:-1200}" -- \
		/kselftest/run_kselftest.sh "${suite[@]}" 2>&1 | tee "$LOG/vm.log"
	rc=${PIPESTATUS[0]}
	count "$LOG/vm.log"
	if ! grep -Eq '^(not )?ok [0-9]+ selftests: pmcring' "$LOG/vm.log"; then
		echo "not ok - vm: no selftest results (vmrun exit=$rc)"
		failed=$((failed + 1))
	elif [ "$rc" != 0 ]; then
		echo "not ok - vm: vmrun exit=$rc (splat, module unload or timeout; see above)"
		failed=$((failed + 1))
	fi
	took "VM suite"

	# -- 3b. cli_matrix: the record x format x stop matrix -------------------
	# Its own VM.  Its SIGKILL cells reload the module, every cell places its
	# kprobes and tracepoints while the workload runs: under QEMU 7.2's
	# multi-threaded TCG that live text patching hung the 6.1 guest in 3
	# of about 7 runs on 25 Nov (a vCPU kept running QEMU's stale
	# translation of an int3 that text_poke_bp() had already replaced;
	# QEMU's bug, fixed in 8.1: Documentation/testing.rst, "QEMU 10
	# against 7.2"; selftests/lib-hard/tcg_hang.sh).  So on 7.2 it gets
	# one TCG thread (TCG_OLD=single); on QEMU >= 8.1 a thread per vCPU.
	mqemu=qemu-system-x86_64
	[ "$ARCH" = arm64 ] && mqemu=qemu-system-aarch64
	mthread=$(TCG_OLD=single "$TOP/selftests/lib/tcg_thread" "${QEMU:-$mqemu}" "$KVER.0" 2>/dev/null || echo single)
	echo "# vm: cli_matrix.sh on $KVER (vmrun, TCG thread=$mthread)"
	TCG_OLD=single "$VMRUN" --kernel "$KVER" --timeout 900 -- \
		/kselftest/pmcring/cli_matrix.sh 2>&1 | tee "$LOG/vm-matrix.log" |
		sed "s/^/# /"
	rc=${PIPESTATUS[0]}
	if [ "$rc" = 0 ] && grep -q '^ok: ' "$LOG/vm-matrix.log"; then
		result ok "vm: cli_matrix.sh ($(sed -n 's/^ok: //p' "$LOG/vm-matrix.log"), TCG thread=$mthread)"
	else
		result fail "vm: cli_matrix.sh" "vmrun exit=$rc"
	fi
	took "cli_matrix VM"

	# -- 4. ring_warn: the test that expects a kernel WARNING ----------------
	# Its own VM, where vmrun reports the splat instead of failing on it;
	# the test reads the guest's kernel log and wants exactly one WARNING,
	# from pmcring_ring_reserve (so it is not in the runner's list).
	echo "# vm: ring_warn on $KVER (vmrun --no-splat-check)"
	"$VMRUN" --kernel "$KVER" --timeout 600 --no-splat-check \
		--env PMCRING_TEST_WARN=1 -- /kselftest/pmcring/ring_warn 2>&1 |
		tee "$LOG/vm-warn.log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" = 0 ] && grep -Eq '^# Totals: pass:[1-9]' "$LOG/vm-warn.log" &&
	   ! grep -Eq '^# Totals: .*skip:[1-9]' "$LOG/vm-warn.log"; then
		result ok "vm: ring_warn (a bad record length: one WARNING, every record dropped)"
	else
		result fail "vm: ring_warn" "vmrun exit=$rc"
	fi
	took "ring_warn VM"

	# -- 5. the permission tests on the other series ------------------------
	# The ptrace rule is rebuilt from the kernel's credentials and its
	# layout (kernel_cap_t is an array in 6.1, one u64 from 6.3): the
	# permission tests run on 6.12 as well (on 6.1 when KVER=6.12).
	# (amd64: the arm64 VM has only the series make deps ARCH=arm64 fetched)
	if [ "$ARCH" = amd64 ]; then
		other=6.12
		[ "$KVER" = 6.12 ] && other=6.1
		echo "# vm: the permission tests on $other (vmrun)"
		"$VMRUN" --kernel "$other" --timeout 600 -- /kselftest/run_kselftest.sh \
			-t pmcring:perm_caps -t pmcring:perm_exec -t pmcring:src_perm \
			2>&1 | tee "$LOG/vm-perm-$other.log"
		rc=${PIPESTATUS[0]}
		count "$LOG/vm-perm-$other.log"
		if ! grep -Eq '^(not )?ok [0-9]+ selftests: pmcring' "$LOG/vm-perm-$other.log"; then
			echo "not ok - vm: no permission test results on $other (vmrun exit=$rc)"
			failed=$((failed + 1))
		elif [ "$rc" != 0 ]; then
			echo "not ok - vm: permission tests on $other: vmrun exit=$rc"
			failed=$((failed + 1))
		fi
		took "permission tests on $other"
	fi

	# -- 6. LDMS: pmcring record --ldms in the VM, and a replay --------------
	# user/tests/ldms_vm.sh: the dynamically linked `pmcring record -a
	# --ldms` under load in the VM, publishing to a node ldmsd and an
	# aggregator on the VM's loopback (stop matrix, -o none), checked here
	# on the aggregator's files.  The same boot leaves a recording of the
	# static pmcring, which ldms_cluster.sh vm replays through record's
	# consumer into the host's daemons (Documentation/ldms.rst).
	echo "# vm: pmcring record -a --ldms into ldmsd in the VM (user/tests/ldms_vm.sh)"
	KVER=$KVER "$TOP/user/tests/ldms_vm.sh" 2>&1 | tee "$LOG/ldms-vm-live.log"
	rc=${PIPESTATUS[0]}
	count "$LOG/ldms-vm-live.log"
	if [ "$rc" != 0 ] && [ "$rc" != 4 ] && ! grep -q '^not ok' "$LOG/ldms-vm-live.log"; then
		echo "not ok - vm: ldms_vm.sh exit=$rc"
		failed=$((failed + 1))
	fi
	rec=$BUILD/ldms-vm/out/vm.pmclog
	# skipped for another architecture's VM (ARCH=arm64 here): a
	# recording for the replay only
	if [ "$rc" = 4 ] && [ -x "${LDMS_PREFIX:-$BUILD/ldms}/sbin/ldmsd" ]; then
		d=$BUILD/check/ldms-vm
		rm -rf "$d" && mkdir -p "$d"
		echo "# vm: pmcring record -a under load, for ldms_cluster.sh vm"
		"$VMRUN" --kernel "$KVER" --timeout 300 --share "$d" -- sh -c \
			"cd $d && { pmcring-workload -d 4 >/dev/null & } && pmcring record -a -q --duration 3 -o $d/vm.pmclog" \
			>"$LOG/vm-ldms.log" 2>&1 || sed 's/^/# /' "$LOG/vm-ldms.log"
		rec=$d/vm.pmclog
	fi
	"$TOP/user/tests/ldms_cluster.sh" vm "$rec" 2>&1 | tee "$LOG/ldms-vm.log"
	count "$LOG/ldms-vm.log"
	took "LDMS in the VM"
	# Name the test during which each kernel splat was printed.
	awk '/^# selftests: / { t = substr($0, 3) }
	     /^# kernel: / { print "# splat during " (t ? t : "boot") ": " substr($0, 11) }' \
		"$LOG/vm.log"
fi

# -- 7. arm64: the PMU, and the ring on a weakly ordered CPU ------------------
# Two boots of the arm64 VM: pmu_sample.sh with -icount shift=0 (the cycle
# counter then advances with the instructions run, so its counts are
# reproducible; one TCG thread), and ring_order and ring_drop with one TCG
# thread per vCPU (the ring's producers and consumer truly in parallel).
# ARCH=arm64: the first boot only (stage 3 ran the ring tests), which is
# where pmu_sample.sh runs, and the host's reports of its recordings.
if { [ "$ARCH" = arm64 ] || { [ "$ARCH" = amd64 ] && [ "${CHECK_ARM64:-1}" = 1 ]; }; } &&
   [ "${CHECK_SKIP_VM:-0}" != 1 ]; then
	keep=$TOP/out/check-arm64
	rm -rf "$keep"
	arm64_prefix() {
		sed 's/^\(\(not \)\{0,1\}ok [0-9]* selftests: pmcring: \)/\1arm64: /'
	}
	echo "# vm: arm64 pmu_sample.sh (vmrun --arch arm64, -icount shift=0)"
	VM_ARCH=arm64 VM_ICOUNT=0 "$VMRUN" --kernel "$KVER" --timeout 600 \
		--env PMU_SAMPLE_KEEP="$keep" -- /kselftest/run_kselftest.sh \
		-t pmcring:pmu_sample.sh 2>&1 | arm64_prefix | tee "$LOG/vm-arm64.log"
	rc1=${PIPESTATUS[0]}
	want=1
	rc=$rc1
	if [ "$ARCH" = amd64 ]; then
		echo "# vm: arm64 ring_order, ring_drop (vmrun --arch arm64)"
		VM_ARCH=arm64 "$VMRUN" --kernel "$KVER" --timeout 600 -- \
			/kselftest/run_kselftest.sh -t pmcring:ring_order \
			-t pmcring:ring_drop 2>&1 | arm64_prefix | tee -a "$LOG/vm-arm64.log"
		rc=${PIPESTATUS[0]}
		[ "$rc1" = 0 ] || rc=$rc1
		want=3
	fi
	count "$LOG/vm-arm64.log"
	n=$(grep -Ec '^(not )?ok [0-9]+ selftests: pmcring: arm64: ' "$LOG/vm-arm64.log")
	if [ "$n" != "$want" ]; then
		echo "not ok - vm: arm64: $n of $want results (vmrun exit=$rc)"
		failed=$((failed + 1))
	elif [ "$rc" != 0 ]; then
		echo "not ok - vm: arm64: vmrun exit=$rc (splat, module unload or timeout; see above)"
		failed=$((failed + 1))
	fi
	# The arm64 recording, reported on by this host (x86) with the
	# guest's files found through --path-map.
	rep=$LOG/arm64-report.txt
	if "$BUILD/user/pmcring" report \
		--path-map /kselftest="$AKSFT" \
		"$keep/c.pmclog" >"$rep" 2>&1 &&
	   sed -n '/^Top user functions/{n;n;p;q}' "$rep" | grep -q ' pmu_hot' &&
	   grep -q "^# Event 'cycles:u' (pmcid 1): [1-9][0-9]* samples" "$rep"; then
		result ok "arm64: the host's pmcring report resolves the arm64 recording's samples to pmu_hot"
	else
		head -n 20 "$rep" | sed 's/^/# /'
		result fail "arm64: the host's pmcring report of the arm64 recording"
	fi
	# -a in pmclog, barman and blob on the arm64 PMU, read back here.
	for fmt in pmclog barman blob; do
		f=$keep/fa.$fmt
		[ $fmt = blob ] && f=$(ls "$keep"/fa.blob/pmcring/all.DAT.* 2>/dev/null | head -n 1)
		if [ -n "$f" ] && "$BUILD/user/pmcring" stat "$f" >"$LOG/arm64-$fmt.stat" 2>&1 &&
		   "$BUILD/user/pmcring" report \
			--path-map /kselftest="$AKSFT" "$f" \
			>"$LOG/arm64-$fmt.report" 2>&1 &&
		   grep -Eq '^# [0-9]+ records, [1-9][0-9]* samples' "$LOG/arm64-$fmt.report"; then
			result ok "arm64: the host reads back the arm64 VM's record -a --format $fmt (stat, report)"
		else
			sed 's/^/# /' "$LOG/arm64-$fmt.stat" "$LOG/arm64-$fmt.report" 2>/dev/null | head -n 20
			result fail "arm64: the host reads back the arm64 VM's record -a --format $fmt"
		fi
	done
	took "arm64 VM"
fi

echo "# make check: $(( $(date +%s) - start ))s of tests, logs in $LOG"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
