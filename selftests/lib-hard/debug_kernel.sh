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

TOP=$(cd "$(dirname "$0")/../.." && pwd)
DK=$TOP/build/debug-kernel
TARBALL=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
SRC=$DK/src
OBJ=$DK/obj
JOBS=${JOBS:-$(nproc)}

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

kernel_release()
{
	cat "$OBJ/include/config/kernel.release" 2>/dev/null
}

do_build()
{
	local stamp want start
	mkdir -p "$DK"
	want="$(stat -c '%s %Y' "$TARBALL") $(fragment | sha256sum | cut -c1-16)"
	stamp=$DK/stamp
	if [ -r "$OBJ/arch/x86/boot/bzImage" ] && [ -r "$stamp" ] &&
	   [ "$(cat "$stamp")" = "$want" ]; then
		echo "debug-kernel: cached $(kernel_release) ($OBJ/arch/x86/boot/bzImage)"
		return 0
	fi
	local tool missing=
	for tool in flex bison bc perl gcc make; do
		command -v "$tool" >/dev/null || missing="$missing $tool"
	done
	[ -z "$missing" ] || { echo "debug-kernel: missing:$missing (apt-get install flex bison bc libelf-dev libssl-dev)" >&2; exit 1; }
	start=$(date +%s)
	if [ ! -r "$SRC/Makefile" ]; then
		echo "debug-kernel: extracting $TARBALL"
		rm -rf "$SRC.tmp"
		mkdir -p "$SRC.tmp"
		tar -C "$SRC.tmp" --strip-components=1 -xf "$TARBALL"
		mv "$SRC.tmp" "$SRC"
	fi
	mkdir -p "$OBJ"
	fragment >"$DK/pmcring-debug.config"
	# The fragment goes last so that it wins over kvm_guest.config.
	cp "$DK/pmcring-debug.config" "$SRC/kernel/configs/pmcring-debug.config"
	nice -n 19 make -s -C "$SRC" O="$OBJ" ARCH=x86_64 \
		defconfig kvm_guest.config pmcring-debug.config
	# Check that every option we asked for survived olddefconfig.
	local miss=0 line key val
	while IFS= read -r line; do
		key=${line%%=*} val=${line#*=}
		case "$val" in
		n) grep -q "^$key=" "$OBJ/.config" && { echo "debug-kernel: $key still set"; miss=1; } ;;
		*) grep -qx "$key=$val" "$OBJ/.config" || { echo "debug-kernel: $key=$val not applied"; miss=1; } ;;
		esac
	done < <(fragment | grep -E '^CONFIG_(PROVE_LOCKING|KASAN|DEBUG_ATOMIC_SLEEP|DEBUG_PREEMPT|9P_FS|NET_9P_VIRTIO|VIRTIO_PCI|PERF_EVENTS|MODULE_UNLOAD|KPROBES_ON_FTRACE|CHECKPOINT_RESTORE)=')
	[ "$miss" = 0 ] || { echo "debug-kernel: config incomplete" >&2; exit 1; }
	nice -n 19 make -s -C "$SRC" O="$OBJ" ARCH=x86_64 -j"$JOBS" bzImage modules
	echo "$want" >"$stamp"
	echo "debug-kernel: built $(kernel_release) in $(( $(date +%s) - start ))s with -j$JOBS" |
		tee "$DK/build-time.txt"
}

do_module()
{
	local rel
	rel=$(kernel_release)
	[ -n "$rel" ] || { echo "debug-kernel: build the kernel first" >&2; exit 1; }
	mkdir -p "$TOP/build/kmod/$rel"
	# Same sources as make kmod, out-of-tree build against the debug tree.
	# A copy (kmod/, the uapi/ it includes as ../uapi, the ../VERSION its
	# Kbuild reads), so that this build never touches the objects of
	# "make kmod" in the source tree.
	rm -rf "$DK/mod"
	mkdir -p "$DK/mod/kmod"
	cp "$TOP"/kmod/*.c "$TOP"/kmod/*.h "$TOP"/kmod/Kbuild "$DK/mod/kmod/"
	rm -f "$DK/mod/kmod/pmcring.mod.c"
	cp -r "$TOP/uapi" "$TOP/VERSION" "$DK/mod/"
	nice -n 19 make -s -C "$OBJ" M="$DK/mod/kmod" -j"$JOBS" modules
	cp "$DK/mod/kmod/pmcring.ko" "$TOP/build/kmod/$rel/pmcring.ko"
	echo "debug-kernel: $TOP/build/kmod/$rel/pmcring.ko"
}

# vmrun boots /boot/vmlinuz-$KREL and reads /lib/modules/$KREL; a private
# copy points both at the debug build instead (an empty modules.dep: the
# 9p client is built in).  Nothing outside build/ is touched.
make_vmrun()
{
	local rel=$1 mroot=$DK/modroot/$rel
	mkdir -p "$mroot"
	: >"$mroot/modules.dep"
	mkdir -p "$DK/vmrun-selftests/lib"
	sed -e "s|^VMLINUZ=.*|VMLINUZ=$OBJ/arch/x86/boot/bzImage|" \
	    -e "s|^MODROOT=.*|MODROOT=$mroot|" \
	    -e "s|^TOP=.*|TOP=$TOP|" \
	    "$TOP/selftests/vmrun" >"$DK/vmrun-selftests/vmrun"
	chmod +x "$DK/vmrun-selftests/vmrun"
	grep -q "^VMLINUZ=$OBJ" "$DK/vmrun-selftests/vmrun" ||
		{ echo "debug-kernel: cannot redirect vmrun" >&2; exit 1; }
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
	"$DK/vmrun-selftests/vmrun" --kernel "$rel" --mem 2048 \
		--timeout "${DEBUG_TIMEOUT:-3000}" ${DEBUG_VMRUN_ARGS:-} \
		--env HARD_LEAK_SESSIONS="${HARD_LEAK_SESSIONS:-2000}" \
		--env HARD_KILL_ROUNDS="${HARD_KILL_ROUNDS:-12}" \
		--env HARD_FUZZ_SECONDS="${HARD_FUZZ_SECONDS:-120}" \
		--module "$TOP/build/kmod/$rel/pmcring.ko" -- "$@"
}

case "${1:-all}" in
build) do_build ;;
module) do_module ;;
run) shift; [ "${1:-}" = -- ] && shift; do_run "$@" ;;
all) do_build; do_module; shift || true; [ "${1:-}" = -- ] && shift; do_run "$@" ;;
*) echo "usage: $0 [build|module|run [-- CMD...]|all]" >&2; exit 2 ;;
esac
