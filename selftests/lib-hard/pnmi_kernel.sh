#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# pnmi_kernel.sh: "make check-pnmi".  Cross-builds a small arm64 kernel from
# Debian's linux-source-6.1 with CONFIG_ARM64_PSEUDO_NMI=y (Debian's arm64
# kernels have it off), caches it under build/pnmi-kernel/, builds
# pmcring.ko against it and boots it with irqchip.gicv3_pseudo_nmi=1, so
# that the PMUv3 overflow interrupt, and with it pmcring's sampling handler
# and ring producer, runs as a (pseudo-)NMI.
#
#   selftests/lib-hard/pnmi_kernel.sh build   build (or reuse) the kernel
#   selftests/lib-hard/pnmi_kernel.sh module  build pmcring.ko for it
#   selftests/lib-hard/pnmi_kernel.sh run [-- CMD...]
#                                             boot it, check that the PMU
#                                             interrupt is an NMI, run CMD
#                                             (default: the NMI test list)
#   selftests/lib-hard/pnmi_kernel.sh         all three
#
# Needs make deps ARCH=arm64 and make ARCH=arm64 (the arm64 busybox root,
# kselftest install and static tools vmrun copies into the guest) and
# gcc-aarch64-linux-gnu.  Environment: PNMI_TIMEOUT (VM seconds, default
# 3000), PNMI_VMRUN_ARGS (more vmrun options), JOBS (default 2).
#
# The kernel starts from allnoconfig plus the fragment below (not
# defconfig: its hundreds of SoC drivers triple the build) and is rebuilt
# only when the tarball or the fragment changes (a stamp records both).
set -eu

KB_TAG=pnmi-kernel
KB_DIR=$(cd "$(dirname "$0")/../.." && pwd)/build/pnmi-kernel
KB_ARCH=arm64
KB_CROSS=${CROSS_COMPILE:-aarch64-linux-gnu-}
KB_IMAGE=arch/arm64/boot/Image
KB_BASE=allnoconfig
KB_CONFIG=pmcring-pnmi.config
KB_CHECK='^CONFIG_[A-Z0-9_]*=[^"]'
KB_APT="apt-get install flex bison bc gcc-aarch64-linux-gnu"
JOBS=${JOBS:-2}
# shellcheck source=selftests/lib-hard/kernel_build.sh
. "$(dirname "$0")/kernel_build.sh"
PK=$KB_DIR

# On top of allnoconfig: what vmrun's guest needs (PL011 console, virtio
# PCI and 9p built in, since vmrun's initramfs would otherwise load
# modules from Debian's tree), what pmcring needs (selftests/config), the
# pseudo-NMI and the PMUv3 driver, and the cheap debug checks.
fragment()
{
	cat <<'CFG'
CONFIG_LOCALVERSION="-pmcring-pnmi"
CONFIG_LOCALVERSION_AUTO=n
CONFIG_ARM64_PSEUDO_NMI=y
CONFIG_ARM64_DEBUG_PRIORITY_MASKING=y
CONFIG_PERF_EVENTS=y
CONFIG_ARM_PMU=y
CONFIG_HW_PERF_EVENTS=y
CONFIG_SMP=y
CONFIG_HOTPLUG_CPU=y
CONFIG_PREEMPT=y
CONFIG_HIGH_RES_TIMERS=y
CONFIG_NO_HZ_IDLE=y
CONFIG_PRINTK=y
CONFIG_PRINTK_TIME=y
CONFIG_BUG=y
CONFIG_MULTIUSER=y
CONFIG_FUTEX=y
CONFIG_EPOLL=y
CONFIG_IO_URING=y
CONFIG_CHECKPOINT_RESTORE=y
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_MODULE_SIG=n
CONFIG_MODVERSIONS=n
CONFIG_KALLSYMS=y
CONFIG_KALLSYMS_ALL=y
CONFIG_FTRACE=y
CONFIG_FUNCTION_TRACER=y
CONFIG_DYNAMIC_FTRACE=y
CONFIG_KPROBES=y
CONFIG_KRETPROBES=y
CONFIG_KPROBE_EVENTS=y
CONFIG_DEBUG_KERNEL=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_DEBUG_PREEMPT=y
CONFIG_DEBUG_INFO_NONE=y
CONFIG_DEBUG_FS=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_RD_GZIP=n
CONFIG_DEVTMPFS=y
CONFIG_TMPFS=y
CONFIG_PROC_FS=y
CONFIG_PROC_SYSCTL=y
CONFIG_SYSFS=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_TTY=y
CONFIG_UNIX98_PTYS=y
CONFIG_SERIAL_AMBA_PL011=y
CONFIG_SERIAL_AMBA_PL011_CONSOLE=y
CONFIG_PCI=y
CONFIG_PCI_HOST_GENERIC=y
CONFIG_VIRTIO_MENU=y
CONFIG_VIRTIO=y
CONFIG_VIRTIO_PCI=y
CONFIG_NET=y
CONFIG_UNIX=y
CONFIG_INET=y
CONFIG_NET_9P=y
CONFIG_NET_9P_VIRTIO=y
CONFIG_NETWORK_FILESYSTEMS=y
CONFIG_9P_FS=y
CONFIG_EFI=n
CONFIG_ACPI=n
CFG
}

# Run in the guest before CMD: the proof that the PMU interrupt is an NMI.
# The GICv3 driver prints "Pseudo-NMIs enabled" when the command line's
# irqchip.gicv3_pseudo_nmi=1 took; arm_pmu's armpmu_request_irq() tries
# request_nmi()/request_percpu_nmi() first and falls back to a plain IRQ
# only when that fails, and armpmu_register() ends its "enabled with ...
# PMU driver" line with ", using NMIs" after an NMI was granted.
NMI_CHECK='dmesg | grep -E "GICv3|NMI|PMU driver" | sed "s/^/pnmi: /"
dmesg | grep -q "Pseudo-NMIs enabled" || { echo "pnmi: FAIL: no pseudo-NMIs"; exit 1; }
dmesg | grep -q "PMU driver.*using NMIs" || { echo "pnmi: FAIL: the PMU interrupt is no NMI"; exit 1; }
echo "pnmi: ok: the PMU overflow interrupt is a pseudo-NMI"'

# One boot: NMI_CHECK, then CMD, then the PMU's NMI count (its line of
# /proc/interrupts: the NMIs the tests took).
boot()
{
	local rel=$1
	shift
	# shellcheck disable=SC2086,SC2016
	"$KB_VMRUN" --arch arm64 --kernel "$rel" \
		--append irqchip.gicv3_pseudo_nmi=1 \
		--timeout "${PNMI_TIMEOUT:-3000}" ${PNMI_VMRUN_ARGS:-} \
		--module "$TOP/build/kmod/$rel/pmcring.ko" -- \
		sh -c "$NMI_CHECK"'
"$@"; rc=$?
grep arm-pmu /proc/interrupts | sed "s/^/pnmi: /"
exit $rc' pnmi "$@"
}

# Default: the two boots of make check's arm64 stage (check.sh stage 7)
# on this kernel: pmu_sample.sh under -icount shift=0 (one TCG thread, the
# cycle counter following the instructions), then the ring and source
# stress tests with a TCG thread per vCPU, where the PMU's NMI lands in
# hard-IRQ writers too.  vmrun's status covers splats, the module's unload
# and the timeout; the tests' own results are the TAP lines, counted here
# as check.sh counts them.
do_run()
{
	local rel rc=0 log
	rel=$(kernel_release)
	[ -n "$rel" ] || { echo "pnmi-kernel: build the kernel first" >&2; exit 1; }
	make_vmrun "$rel"
	if [ $# -gt 0 ]; then
		boot "$rel" "$@"
		return
	fi
	log=$PK/run.log
	{
		VM_ICOUNT=0 boot "$rel" /kselftest/run_kselftest.sh \
			-t pmcring:pmu_sample.sh || echo "not ok - vmrun pmu_sample.sh: exit $?"
		boot "$rel" /kselftest/run_kselftest.sh -t pmcring:ring_order \
			-t pmcring:ring_drop -t pmcring:ring_hotplug \
			-t pmcring:ring_irq -t pmcring:src_stress ||
			echo "not ok - vmrun ring tests: exit $?"
	} 2>&1 | tee "$log"
	[ "$(grep -c '^pnmi: ok: ' "$log")" = 2 ] ||
		{ echo "pnmi-kernel: FAIL: a boot without the PMU's NMI"; rc=1; }
	[ "$(grep -Ec '^ok [0-9]+ selftests: pmcring: ' "$log")" = 6 ] ||
		{ echo "pnmi-kernel: FAIL: $(grep -Ec '^ok [0-9]+ selftests: pmcring: ' "$log") of 6 tests passed"; rc=1; }
	if grep -q '^not ok' "$log"; then
		grep '^not ok' "$log"
		rc=1
	fi
	[ "$rc" = 0 ] && echo "pnmi-kernel: 6 of 6 tests passed with the PMU interrupt as an NMI"
	return "$rc"
}

kb_main "$@"
