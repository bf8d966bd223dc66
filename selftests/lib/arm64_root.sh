#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# arm64_root.sh SERIES: what an amd64 machine needs to build and test for
# arm64, without installing a single arm64 package (make deps ARCH=arm64).
#
# "apt-get install linux-headers-*-arm64:arm64" would remove the amd64
# toolchain (the headers pull in gcc-12:arm64), so the arm64 packages are
# fetched with apt-get download and unpacked with dpkg-deb -x into
# build/arm64/root/ (ARM64_ROOT):
#
#   boot/vmlinuz-REL, lib/modules/REL/   the kernel the arm64 VM boots
#   usr/src/linux-headers-REL/           kbuild tree: its scripts and tools
#                                        links point at the installed amd64
#                                        /usr/lib/linux-kbuild-SERIES, its
#                                        Makefile at the unpacked -common
#   bin/busybox                          the VM's shell (busybox-static)
#   usr/lib/aarch64-linux-gnu/*.a        static libraries of pmcring
#   usr/include/                         and their headers
#
# The amd64 side (cross compiler, qemu-system-arm, the kbuild tools of the
# series) is apt-get installed by the Makefile's deps first.  Idempotent: a
# package already unpacked (its .deb in build/arm64/debs) is skipped.
set -eu
SERIES=${1:-6.1}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=${ARM64_ROOT:-$TOP/build/arm64/root}
DEBS=$TOP/build/arm64/debs
mkdir -p "$ROOT" "$DEBS"

# The series' ABI name from its meta package (linux-headers-arm64 for
# 6.1, linux-headers-6.12-arm64 for 6.12), as the amd64 Makefile does.
# The meta package may have versions of several series (with
# bookworm-backports, linux-headers-arm64 also depends on a 6.12 ABI, and
# apt-cache lists it first): the newest ABI of this series, "6.1" followed
# by '.' or '-' so that it does not take 6.12's.
case "$SERIES" in
6.1) meta=linux-headers-arm64 ;;
*) meta=linux-headers-$SERIES-arm64 ;;
esac
series_re="^linux-headers-$(printf '%s' "$SERIES" | sed 's/\./\\./g')[.-]"
hdr=$(apt-cache show "$meta:arm64" 2>/dev/null |
	sed -n 's/^Depends: \(linux-headers-[^ ,]*-arm64\).*/\1/p' |
	grep -E "$series_re" | sort -V | tail -n 1)
[ -n "$hdr" ] || { echo "arm64_root: no $meta:arm64 of the $SERIES series (apt-get update after dpkg --add-architecture arm64?)" >&2; exit 1; }
krel=${hdr#linux-headers-}
common=linux-headers-${krel%-arm64}-common
kbuild=$(apt-cache show "$hdr:arm64" |
	sed -n 's/^Depends: .*\(linux-kbuild-[^ ,]*\).*/\1/p' | head -n 1)
[ -d "/usr/lib/$kbuild" ] || {
	echo "arm64_root: /usr/lib/$kbuild missing (make deps ARCH=arm64 installs the amd64 $kbuild)" >&2
	exit 1
}

# :arm64 packages (arch all ones without the suffix).
PKGS="linux-image-$krel-unsigned:arm64 $hdr:arm64 $common
busybox-static:arm64
liburing-dev:arm64 liburing2:arm64 libelf-dev:arm64 libelf1:arm64
libdw-dev:arm64 libdw1:arm64 zlib1g-dev:arm64 zlib1g:arm64
libjson-c-dev:arm64 libjson-c5:arm64 liblzma-dev:arm64 liblzma5:arm64
libbz2-dev:arm64 libbz2-1.0:arm64 libzstd-dev:arm64 libzstd1:arm64
libpfm4-dev:arm64 libpfm4:arm64"

missing=
for p in $PKGS; do
	name=${p%:arm64}
	ls "$DEBS/${name}_"*.deb >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "arm64_root: apt-get download$missing"
	# _apt cannot write into build/: download as the caller, quietly.
	(cd "$DEBS" && apt-get download -q $missing 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
	for p in $missing; do
		name=${p%:arm64}
		f=$(ls "$DEBS/${name}_"*.deb 2>/dev/null | head -n 1)
		[ -n "$f" ] || { echo "arm64_root: could not download $p" >&2; exit 1; }
		dpkg-deb -x "$f" "$ROOT"
	done
fi

# The kbuild tree: host tools from the amd64 linux-kbuild package, the
# common part from our own unpacked copy (not /usr/src, which may be absent
# or another release).
h=$ROOT/usr/src/linux-headers-$krel
for l in scripts tools; do
	for d in "$h" "$ROOT/usr/src/$common"; do
		ln -sfn "/usr/lib/$kbuild/$l" "$d/$l"
	done
done
sed -i "s|^include /usr/src/$common/Makefile|include $ROOT/usr/src/$common/Makefile|" "$h/Makefile"
[ -r "$ROOT/boot/vmlinuz-$krel" ] || { echo "arm64_root: no $ROOT/boot/vmlinuz-$krel" >&2; exit 1; }
# modules.dep is made by the package's postinst, which never ran here:
# depmod reads arm64 modules as well as amd64 ones (vmrun resolves 9p with it).
[ -r "$ROOT/lib/modules/$krel/modules.dep" ] ||
	depmod -b "$ROOT" "$krel" || { echo "arm64_root: depmod failed" >&2; exit 1; }
echo "$krel"
