#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install QEMU >= 8.1 (Debian bookworm-backports carries 10.0) for the test
# VMs when the machine has bookworm's 7.2, whose multi-threaded TCG can run
# a stale translation of patched kernel text and hang or oops the guest
# (selftests/lib-hard/tcg_textpoke.sh, tcg_hang.sh; fixed in QEMU 8.1).
# With it every guest runs one host thread per vCPU (selftests/lib/tcg_thread).
#
#   qemu_backports.sh [x86|arm64]...   (default: x86)
#
# The bookworm-backports entry is added for this install only and removed
# afterwards (then apt-get update), so the machine's apt sources are left
# as found.  QEMU_BACKPORTS=0 keeps what is installed (7.2 rules apply).
# Idempotent: nothing is done when every binary asked for is >= 8.1.
# A failure is an error under CI=true; elsewhere a warning, and the suite
# falls back to the 7.2 rules.
set -u

[ "${QEMU_BACKPORTS:-1}" = 0 ] && exit 0

# Version "major.minor" of a QEMU binary, empty if missing.
qver() {
	command -v "$1" >/dev/null 2>&1 || return 0
	"$1" --version 2>/dev/null |
		sed -n '1s/.*version \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p'
}
# True if "major.minor" $1 is at least 8.1.
new_enough() {
	case "$1" in
	"") return 1 ;;
	esac
	maj=${1%%.*} min=${1#*.}
	[ "$maj" -gt 8 ] || { [ "$maj" -eq 8 ] && [ "$min" -ge 1 ]; }
}

[ $# -eq 0 ] && set -- x86
pkgs=
for a in "$@"; do
	case "$a" in
	x86) bin=qemu-system-x86_64 pkg=qemu-system-x86 ;;
	arm64) bin=qemu-system-aarch64 pkg=qemu-system-arm ;;
	*) echo "qemu_backports: unknown arch '$a' (x86|arm64)" >&2; exit 2 ;;
	esac
	new_enough "$(qver "$bin")" || pkgs="$pkgs $pkg"
done
[ -z "$pkgs" ] && exit 0

fail() {
	if [ "${CI:-}" = true ]; then
		echo "qemu_backports: error: $*" >&2
		exit 1
	fi
	echo "qemu_backports: warning: $* -- keeping QEMU $(qver qemu-system-x86_64); the suite uses the 7.2 TCG thread rules (QEMU_BACKPORTS=0 silences this)" >&2
	exit 0
}

[ "$(id -u)" = 0 ] || fail "need root to install QEMU from bookworm-backports"
# shellcheck disable=SC1091
. /etc/os-release 2>/dev/null
[ "${VERSION_CODENAME:-}" = bookworm ] ||
	fail "not Debian bookworm (${VERSION_CODENAME:-unknown}); install QEMU >= 8.1 yourself"

# Both system emulators come from the same source package and share
# qemu-system-common/-data at the exact same version: upgrade whichever of
# the pair is already installed together so apt does not refuse.
for p in qemu-system-x86 qemu-system-arm; do
	case " $pkgs " in *" $p "*) continue ;; esac
	dpkg-query -W -f='${db:Status-Abbrev}' $p 2>/dev/null | grep -q '^ii' &&
		pkgs="$pkgs $p"
done

# The mirror the machine already uses for bookworm.
mirror=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources |
	awk '$2 ~ /debian\/?$/ { print $2; exit }')
[ -n "$mirror" ] || mirror=$(grep -hs '^deb .*bookworm ' /etc/apt/sources.list |
	awk '{ print $2; exit }')
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

list=/etc/apt/sources.list.d/pmcring-bookworm-backports.sources
cleanup() {
	if [ -e "$list" ]; then
		rm -f "$list"
		apt-get update -q -o DPkg::Lock::Timeout=900 >/dev/null 2>&1 ||
			echo "qemu_backports: warning: apt-get update after removing $list failed" >&2
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

cat >"$list" <<EOS
# Temporary, added by pmcring's selftests/lib/qemu_backports.sh
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
echo "qemu_backports: installing$pkgs from bookworm-backports ($mirror)"
export DEBIAN_FRONTEND=noninteractive
# No test VM may start while its QEMU is half replaced: hold vmrun's lock.
exec 9>>"${VM_LOCK:-/tmp/pmcring-vm.lock}"
if ! flock -n 9; then
	echo "qemu_backports: waiting for running test VMs (vmrun's lock)" >&2
	flock -w 1800 9 || fail "test VMs held vmrun's lock for 30 minutes"
fi
apt-get update -q -o DPkg::Lock::Timeout=900 >/dev/null ||
	fail "apt-get update with bookworm-backports failed"
# shellcheck disable=SC2086
apt-get install -y -q -o DPkg::Lock::Timeout=900 --no-install-recommends \
	-t bookworm-backports $pkgs >/dev/null ||
	fail "apt-get install -t bookworm-backports$pkgs failed"
for a in "$@"; do
	case "$a" in x86) bin=qemu-system-x86_64 ;; arm64) bin=qemu-system-aarch64 ;; esac
	v=$(qver "$bin")
	new_enough "$v" || fail "$bin is still ${v:-missing} after the install"
	echo "qemu_backports: $bin $v"
done
