#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debug_kernel.sh: "make check-debug".  Builds a small x86_64 kernel from
# Debian's linux-source-6.1 with the kernel's own bug finders turned on
# (PROVE_LOCKING, KASAN, DEBUG_ATOMIC_SLEEP, DEBUG_PREEMPT), caches it under
# build/debug-kernel/, builds pmcring.ko against it and runs the selftests
# on it through selftests/vmrun.
#
#   selftests/lib-hard/debug_kernel.sh build   build (or reuse) the kernel
#   selftests/lib-hard/debug_kernel.sh module  build pmcring.ko for it
#   selftests/lib-hard/debug_kernel.sh run [-- CMD...]
#                                              boot it, run CMD (default:
#                                              the whole kselftest suite)
#   selftests/lib-hard/debug_kernel.sh         all three
#
# Environment: DEBUG_TIMEOUT (VM seconds, default 3000), DEBUG_VMRUN_ARGS
# (more vmrun options), JOBS (build parallelism, default nproc).
#
# The kernel is rebuilt only when the source tarball or this script's
# config fragment changes (a stamp records both).  The build runs under
# nice -n 19 with -j$(nproc).  It lives in this directory (not
# selftests/*.sh) so that the selftests wildcard does not install it.
set -eu

KB_TAG=debug-kernel
KB_DIR=$(cd "$(dirname "$0")/../.." && pwd)/build/debug-kernel
KB_ARCH=x86_64
KB_CROSS=
KB_IMAGE=arch/x86/boot/bzImage
KB_BASE="defconfig kvm_guest.config"
KB_CONFIG=pmcring-debug.config
KB_CHECK='^CONFIG_(PROVE_LOCKING|KASAN|DEBUG_ATOMIC_SLEEP|DEBUG_PREEMPT|9P_FS|NET_9P_VIRTIO|VIRTIO_PCI|PERF_EVENTS|MODULE_UNLOAD|KPROBES_ON_FTRACE|CHECKPOINT_RESTORE)='
KB_APT="apt-get install flex bison bc libelf-dev libssl-dev"
JOBS=${JOBS:-$(nproc)}
# shellcheck source=selftests/lib-hard/kernel_build.sh
. "$(dirname "$0")/kernel_build.sh"

# Options on top of x86_64 defconfig + kvm_guest.config.  Virtio PCI and
# 9p are built in because vmrun's initramfs loads modules from the host's
# Debian tree otherwise; everything big and useless in a TCG guest is off.
fragment()
{
	cat <<'CFG'
CONFIG_LOCALVERSION="-pmcring-debug"
CONFIG_LOCALVERSION_AUTO=n
CONFIG_PREEMPT=y
CONFIG_DEBUG_KERNEL=y
CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_LOCKDEP=n
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_DEBUG_PREEMPT=y
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_KASAN_OUTLINE=y
CONFIG_KASAN_VMALLOC=y
CONFIG_DEBUG_INFO_NONE=y
CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=n
CONFIG_DEBUG_INFO_BTF=n
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_MODULE_FORCE_UNLOAD=n
CONFIG_MODULE_SIG=n
CONFIG_MODVERSIONS=n
CONFIG_KALLSYMS=y
CONFIG_KALLSYMS_ALL=y
CONFIG_PERF_EVENTS=y
CONFIG_FTRACE=y
CONFIG_ENABLE_DEFAULT_TRACERS=y
CONFIG_FUNCTION_TRACER=y
CONFIG_DYNAMIC_FTRACE=y
CONFIG_KPROBES=y
CONFIG_KRETPROBES=y
CONFIG_KPROBES_ON_FTRACE=y
CONFIG_CHECKPOINT_RESTORE=y
CONFIG_HOTPLUG_CPU=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_DEVTMPFS=y
CONFIG_TMPFS=y
CONFIG_PROC_FS=y
CONFIG_SYSFS=y
CONFIG_DEBUG_FS=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_VIRTIO=y
CONFIG_VIRTIO_PCI=y
CONFIG_NET_9P=y
CONFIG_NET_9P_VIRTIO=y
CONFIG_NETWORK_FILESYSTEMS=y
CONFIG_9P_FS=y
CONFIG_9P_FS_POSIX_ACL=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_DRM=n
CONFIG_SOUND=n
CONFIG_USB_SUPPORT=n
CONFIG_WLAN=n
CONFIG_WIRELESS=n
CONFIG_CFG80211=n
CONFIG_NETFILTER=n
CONFIG_IPV6=n
CONFIG_ETHERNET=n
CONFIG_HID=n
CONFIG_INPUT_JOYSTICK=n
CONFIG_INPUT_TABLET=n
CONFIG_INPUT_TOUCHSCREEN=n
CONFIG_AGP=n
CONFIG_ATA=n
CONFIG_SCSI=n
CONFIG_MD=n
CONFIG_NFS_FS=n
CONFIG_ROOT_NFS=n
CONFIG_AUDIT=n
CONFIG_SECURITY_SELINUX=n
CONFIG_PCCARD=n
CONFIG_HAMRADIO=n
CONFIG_FB=n
CONFIG_EFI=n
CONFIG_WATCHDOG=n
CONFIG_DEBUG_INFO_REDUCED=n
CFG
}

do_run()
{
	local rel
	rel=$(kernel_release)
	[ -n "$rel" ] || { echo "debug-kernel: build the kernel first" >&2; exit 1; }
	make_vmrun "$rel"
	[ $# -gt 0 ] || set -- sh -c 'cd /kselftest && ./run_kselftest.sh'
	# KASAN + lockdep in TCG: boot and tests are several times slower.
	# DEBUG_VMRUN_ARGS: more vmrun options (--share DIR, --cpus N, ...).
	# shellcheck disable=SC2086
	# KASAN + lockdep make sessions ~5x slower: smaller loop counts keep
	# the hardening tests inside their kselftest timeouts.
	"$KB_VMRUN" --kernel "$rel" --mem 2048 \
		--timeout "${DEBUG_TIMEOUT:-3000}" ${DEBUG_VMRUN_ARGS:-} \
		--env HARD_LEAK_SESSIONS="${HARD_LEAK_SESSIONS:-2000}" \
		--env HARD_KILL_ROUNDS="${HARD_KILL_ROUNDS:-12}" \
		--env HARD_FUZZ_SECONDS="${HARD_FUZZ_SECONDS:-120}" \
		--module "$TOP/build/kmod/$rel/pmcring.ko" -- "$@"
}

kb_main "$@"
