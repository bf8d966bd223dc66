#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS install of "make check", on the host: make dkms-install builds and
# installs the module through Debian's dkms (dkms add, build -k, install -k)
# for the newest installed 6.1 and 6.12 kernels, then make dkms-uninstall
# removes it.  Everything goes to private trees under build/dkms-check/
# (make's DKMS_SRC_ROOT, dkms' --dkmstree and --installtree, --no-depmod,
# a signing key of its own), so the machine's /usr/src, /var/lib/dkms and
# /lib/modules are not touched.  Each built module must carry its kernel's
# vermagic and the release of VERSION.  KTAP on stdout, exit 1 on failure.
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$TOP/build/dkms-check
SERIES="6.1 6.12"
VERSION=$(cat "$TOP/VERSION")

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1${2:+ # $2}"; }
# check NAME CONDITION-STATUS [WHY]
check() { if [ "$2" = 0 ]; then ok "$1"; else notok "$1" "${3:-}"; fi; }

echo "TAP version 13"
if ! command -v dkms >/dev/null; then
	# make check installs dkms (make deps): a missing one is a failure.
	echo "1..1"
	notok "dkms: make dkms-install" "no dkms command (run: make deps)"
	exit 1
fi
rels=
for s in $SERIES; do
	r=$("$TOP/selftests/lib/kver" "$s") && rels="$rels $r"
done
echo "1..$((3 + 2 * $(echo "$SERIES" | wc -w)))"

rm -rf "$T"
mkdir -p "$T/tree" "$T/src"
for r in $rels; do mkdir -p "$T/lib/modules/$r"; done
# The trees, for make and for every dkms command it runs.
mkvars=(DKMS_SRC_ROOT="$T/src"
	DKMS_FLAGS="--dkmstree $T/tree --installtree $T/lib/modules --no-depmod"
	DKMS_KERNELS="$rels")
# dkms signs with (and first creates) /var/lib/dkms/mok.* by default.
export mok_signing_key=$T/mok.key mok_certificate=$T/mok.pub

start=$(date +%s)
make -s --no-print-directory -C "$TOP" dkms-install "${mkvars[@]}" \
	>"$T/install.log" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
	sed 's/^/# /' "$T/install.log"
	tail -n 30 "$T/tree/pmcring/$VERSION/build/make.log" 2>/dev/null |
		sed 's/^/# make.log: /'
fi
check "dkms: make dkms-install (dkms add, build, install) for$rels" "$rc" \
	"exit $rc"
echo "# make dkms-install: $(( $(date +%s) - start ))s for$rels"

# The source tree: dkms.conf at the root with the release, the uapi header
# inside (the build above had nothing else).
src=$T/src/pmcring-$VERSION
why=
[ -f "$src/dkms.conf" ] || why="no dkms.conf at the root of $src"
grep -qx "PACKAGE_VERSION=\"$VERSION\"" "$src/dkms.conf" 2>/dev/null ||
	why="${why:-PACKAGE_VERSION of dkms.conf is not $VERSION}"
cmp -s "$src/uapi/linux/pmcring.h" "$TOP/uapi/linux/pmcring.h" ||
	why="${why:-uapi/linux/pmcring.h missing from $src}"
[ -z "$why" ]
check "dkms: $src is self-contained (dkms.conf, VERSION, kmod/, uapi/)" \
	$? "$why"

for s in $SERIES; do
	r=$("$TOP/selftests/lib/kver" "$s")
	if [ -z "$r" ]; then
		notok "dkms: build for $s" "no $s headers (run: make deps)"
		notok "dkms: install for $s" "no $s headers (run: make deps)"
		continue
	fi
	ko=$(ls "$T/tree/pmcring/$VERSION/$r"/*/module/pmcring.ko* 2>/dev/null |
	     head -n 1)
	vm=$([ -n "$ko" ] && modinfo -F vermagic "$ko" | cut -d' ' -f1)
	ver=$([ -n "$ko" ] && modinfo -F version "$ko")
	echo "# $r: ${ko#"$T"/} vermagic $vm version $ver"
	[ -n "$ko" ] && [ "$vm" = "$r" ] && [ "$ver" = "$VERSION" ]
	check "dkms: dkms build -k $r: vermagic $r, version $VERSION" $? \
		"module ${ko:-none}, vermagic $vm, version $ver"
	inst=$(ls "$T/lib/modules/$r/updates/dkms"/pmcring.ko* 2>/dev/null)
	st=$(dkms status -m pmcring -v "$VERSION" -k "$r" --dkmstree "$T/tree" \
		--installtree "$T/lib/modules" 2>/dev/null)
	echo "# dkms status: $st"
	[ -n "$inst" ] && cmp -s "$inst" "$ko" && [[ "$st" == *": installed"* ]]
	check "dkms: dkms install -k $r: in updates/dkms, status installed" $? \
		"installed ${inst:-none}, status $st"
done

make -s --no-print-directory -C "$TOP" dkms-uninstall "${mkvars[@]}" \
	>"$T/uninstall.log" 2>&1
rc=$?
left=$(find "$T/lib/modules" "$T/src" "$T/tree" -mindepth 1 \
	\( -name 'pmcring*' -o -path "$T/tree/*" \) 2>/dev/null | head -n 3)
[ "$rc" = 0 ] && [ -z "$left" ] || sed 's/^/# /' "$T/uninstall.log"
[ "$rc" = 0 ] && [ -z "$left" ]
check "dkms: make dkms-uninstall removes module, registration and source" \
	$? "exit $rc, left: $(echo "$left" | tr '\n' ' ')"

[ "$failed" = 0 ]
