#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# "make run": record a system-wide profile of the built-in workload.
# Default: in the QEMU VM (selftests/vmrun).  HOST=1: load the module on
# this host (root, headers for the running kernel) and run there.
# Results go to out/run-<time>/ (out/latest points at the newest).
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$TOP/build
KVER=${KVER:-6.1}
SECS=${RUN_SECONDS:-3}
if [ "${HOST:-}" = 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "make run HOST=1: needs root" >&2; exit 1; }
	kdir=/lib/modules/$(uname -r)/build
	[ -d "$kdir" ] || { echo "make run HOST=1: no $kdir (install linux-headers-$(uname -r))" >&2; exit 1; }
fi

stamp=$(date +%Y%m%d-%H%M%S)
OUT=$TOP/out/run-$stamp
mkdir -p "$OUT"
ln -sfn "run-$stamp" "$TOP/out/latest"
cp "$TOP/selftests/lib/run-guest.sh" "$OUT/run-guest.sh"

start=$(date +%s)
if [ "${HOST:-}" = 1 ]; then
	make --no-print-directory -C "$TOP/kmod" KDIR="$kdir"
	if grep -q '^pmcring ' /proc/modules; then
		echo "make run HOST=1: pmcring already loaded, using it"
		loaded=0
	else
		insmod "$TOP/kmod/pmcring.ko" || {
			echo "make run HOST=1: insmod failed (module loading disabled here? use the VM: make run)" >&2
			exit 1; }
		loaded=1
	fi
	set +e
	PATH=$BUILD/user:$BUILD/selftests:$PATH sh "$OUT/run-guest.sh" "$OUT" "$SECS" 2>&1 |
		tee "$OUT/console.log"
	rc=${PIPESTATUS[0]}
	set -e
	[ "$loaded" = 1 ] && rmmod pmcring
else
	set +e
	"$TOP/selftests/vmrun" --kernel "$KVER" --share "$TOP/out" --timeout 600 -- \
		sh "$OUT/run-guest.sh" "$OUT" "$SECS" 2>&1 | tee "$OUT/console.log"
	rc=${PIPESTATUS[0]}
	set -e
fi

echo
echo "make run: $([ "$rc" = 0 ] && echo done || echo "FAILED (exit $rc)") in $(( $(date +%s) - start ))s"
echo "make run: results in $OUT (also out/latest):"
(cd "$OUT" && ls -l | sed 1d | awk '{ printf "   %10s  %s\n", $5, $9 }')
exit "$rc"
