# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# kernel_build.sh: sourced by debug_kernel.sh and pnmi_kernel.sh, the two
# scripts that build a test kernel of their own from Debian's
# linux-source-6.1 and boot it through a private copy of selftests/vmrun.
# What differs between them (architecture, base config, fragment, the
# tests they run) stays in the callers; the steps they share are here:
# extract, configure and check the config, build, cache with a stamp,
# build pmcring.ko against the tree, redirect vmrun.
#
# The caller sets, before sourcing:
#   KB_TAG     message prefix ("debug-kernel")
#   KB_DIR     cache directory (build/NAME-kernel); src/ and obj/ below it
#   KB_ARCH    kernel ARCH (x86_64, arm64)
#   KB_CROSS   CROSS_COMPILE prefix, empty for a native build
#   KB_IMAGE   the boot image below obj/ (arch/x86/boot/bzImage)
#   KB_BASE    config targets before the fragment ("defconfig kvm_guest.config")
#   KB_CONFIG  the fragment's name in kernel/configs/ (pmcring-debug.config)
#   KB_CHECK   ERE of the fragment's lines that must survive olddefconfig
#   KB_APT     the apt-get line that installs what the build needs
#   JOBS       build parallelism
# and defines fragment(), which prints the config fragment.
#
# The kernel is rebuilt only when the source tarball or the fragment
# changes (a stamp records both).  Builds run under nice -n 19: the
# machine is shared.  KB_CONFIG_ONLY=1 stops "build" after the config
# check (half a minute), to try a fragment change without a kernel build.

TOP=$(cd "$(dirname "$0")/../.." && pwd)
TARBALL=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
SRC=$KB_DIR/src
OBJ=$KB_DIR/obj

kb_make()
{
	nice -n 19 make -s ARCH="$KB_ARCH" ${KB_CROSS:+CROSS_COMPILE="$KB_CROSS"} "$@"
}

kernel_release()
{
	cat "$OBJ/include/config/kernel.release" 2>/dev/null
}

do_build()
{
	local stamp want start tool missing='' miss=0 line key val
	mkdir -p "$KB_DIR"
	want="$(stat -c '%s %Y' "$TARBALL") $(fragment | sha256sum | cut -c1-16)"
	stamp=$KB_DIR/stamp
	if [ -r "$OBJ/$KB_IMAGE" ] && [ -r "$stamp" ] &&
	   [ "$(cat "$stamp")" = "$want" ]; then
		echo "$KB_TAG: cached $(kernel_release) ($OBJ/$KB_IMAGE)"
		return 0
	fi
	for tool in flex bison bc perl make "${KB_CROSS}gcc"; do
		command -v "$tool" >/dev/null || missing="$missing $tool"
	done
	[ -z "$missing" ] || { echo "$KB_TAG: missing:$missing ($KB_APT)" >&2; exit 1; }
	start=$(date +%s)
	if [ ! -r "$SRC/Makefile" ]; then
		echo "$KB_TAG: extracting $TARBALL"
		rm -rf "$SRC.tmp"
		mkdir -p "$SRC.tmp"
		tar -C "$SRC.tmp" --strip-components=1 -xf "$TARBALL"
		mv "$SRC.tmp" "$SRC"
	fi
	mkdir -p "$OBJ"
	fragment >"$KB_DIR/$KB_CONFIG"
	# The fragment goes last so that it wins over the base config.
	cp "$KB_DIR/$KB_CONFIG" "$SRC/kernel/configs/$KB_CONFIG"
	# shellcheck disable=SC2086
	kb_make -C "$SRC" O="$OBJ" $KB_BASE "$KB_CONFIG"
	# Check that every option asked for survived olddefconfig.
	while IFS= read -r line; do
		key=${line%%=*} val=${line#*=}
		case "$val" in
		n) grep -q "^$key=" "$OBJ/.config" && { echo "$KB_TAG: $key still set"; miss=1; } ;;
		*) grep -qx "$key=$val" "$OBJ/.config" || { echo "$KB_TAG: $key=$val not applied"; miss=1; } ;;
		esac
	done < <(fragment | grep -E "$KB_CHECK")
	[ "$miss" = 0 ] || { echo "$KB_TAG: config incomplete" >&2; exit 1; }
	[ -z "${KB_CONFIG_ONLY:-}" ] || { echo "$KB_TAG: config checked ($OBJ/.config)"; return 0; }
	kb_make -C "$SRC" O="$OBJ" -j"$JOBS" "${KB_IMAGE##*/}" modules
	echo "$want" >"$stamp"
	echo "$KB_TAG: built $(kernel_release) in $(( $(date +%s) - start ))s with -j$JOBS" |
		tee "$KB_DIR/build-time.txt"
}

do_module()
{
	local rel
	rel=$(kernel_release)
	[ -n "$rel" ] || { echo "$KB_TAG: build the kernel first" >&2; exit 1; }
	mkdir -p "$TOP/build/kmod/$rel"
	# Same sources as make kmod, out-of-tree build against this tree.  A
	# copy (kmod/, the uapi/ it includes as ../uapi, the ../VERSION its
	# Kbuild reads), so that this build never touches the objects of
	# "make kmod" in the source tree.
	rm -rf "$KB_DIR/mod"
	mkdir -p "$KB_DIR/mod/kmod"
	cp "$TOP"/kmod/*.c "$TOP"/kmod/*.h "$TOP"/kmod/Kbuild "$KB_DIR/mod/kmod/"
	rm -f "$KB_DIR/mod/kmod/pmcring.mod.c"
	cp -r "$TOP/uapi" "$TOP/VERSION" "$KB_DIR/mod/"
	kb_make -C "$OBJ" M="$KB_DIR/mod/kmod" -j"$JOBS" modules
	cp "$KB_DIR/mod/kmod/pmcring.ko" "$TOP/build/kmod/$rel/pmcring.ko"
	echo "$KB_TAG: $TOP/build/kmod/$rel/pmcring.ko"
}

# vmrun boots $VMLINUZ and reads $MODROOT; a private copy points both at
# this build (an empty modules.dep: virtio PCI and the 9p client are built
# in).  Nothing outside build/ is touched.  Sets KB_VMRUN.
make_vmrun()
{
	local rel=$1 mroot=$KB_DIR/modroot/$1
	mkdir -p "$mroot"
	: >"$mroot/modules.dep"
	mkdir -p "$KB_DIR/vmrun-selftests/lib"
	sed -e "s|^VMLINUZ=.*|VMLINUZ=$OBJ/$KB_IMAGE|" \
	    -e "s|^MODROOT=.*|MODROOT=$mroot|" \
	    -e "s|^TOP=.*|TOP=$TOP|" \
	    "$TOP/selftests/vmrun" >"$KB_DIR/vmrun-selftests/vmrun"
	chmod +x "$KB_DIR/vmrun-selftests/vmrun"
	grep -q "^VMLINUZ=$OBJ" "$KB_DIR/vmrun-selftests/vmrun" ||
		{ echo "$KB_TAG: cannot redirect vmrun" >&2; exit 1; }
	# shellcheck disable=SC2034 # the callers' do_run boots it
	KB_VMRUN=$KB_DIR/vmrun-selftests/vmrun
}

# The callers' command line: build, module, run [-- CMD...], or all three.
kb_main()
{
	case "${1:-all}" in
	build) do_build ;;
	module) do_module ;;
	run) shift; [ "${1:-}" = -- ] && shift; do_run "$@" ;;
	all) do_build; do_module; shift || true; [ "${1:-}" = -- ] && shift; do_run "$@" ;;
	*) echo "usage: $0 [build|module|run [-- CMD...]|all]" >&2; exit 2 ;;
	esac
}
