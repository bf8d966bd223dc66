#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: user/examples builds against the INSTALLED libpmcring alone:
# `make install` into a scratch DESTDIR, a copy of user/examples outside the
# tree, built with only `pkg-config --cflags --libs libpmcring` pointing
# into that DESTDIR (dynamic, and static for the VM); then the consumer
# runs: against /dev/pmcring when the module is loaded, else it must say
# that the module is missing.
#
#   example_build.sh USER_DIR BUILD_DIR
#
# Leaves a static copy in BUILD_DIR/../vmroot/usr/local/bin/
# pmcring-example-consumer, which selftests/vmrun copies into the VM (see
# selftests/report_example.sh).  Exit 0 ok, 1 failure, 4 skip.
set -eu

user=$(cd "$1" && pwd)
build=$(mkdir -p "$2" && cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
command -v pkg-config >/dev/null 2>&1 ||
	{ echo "SKIP: pkg-config not installed"; exit 4; }

make -s -C "$user" install DESTDIR="$tmp/root" PREFIX=/usr >"$tmp/install.log" 2>&1 ||
	{ tail -n 30 "$tmp/install.log"; fail "make install"; }
for f in usr/include/libpmcring.h usr/include/pmcring/linux/pmcring.h \
	 usr/lib/pkgconfig/libpmcring.pc usr/lib/libpmcring.a; do
	[ -e "$tmp/root/$f" ] || fail "make install did not install /$f"
done
# the uapi header must not land where the distribution's kernel headers are
[ ! -e "$tmp/root/usr/include/linux/pmcring.h" ] ||
	fail "make install put pmcring.h into \$includedir/linux/"

# A copy outside the source tree: nothing but the installed files to use.
cp -r "$user/examples" "$tmp/src"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"
export PKG_CONFIG_LIBDIR="$tmp/root/usr/lib/pkgconfig"
make -s -C "$tmp/src" CFLAGS="-O2 -Werror" >"$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log"; fail "example build (dynamic)"; }
make -s -C "$tmp/src" STATIC=1 O="$tmp/static" CFLAGS="-O2 -Werror" \
	>"$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log"; fail "example build (static)"; }
mkdir -p "$build/../vmroot/usr/local/bin"
cp "$tmp/static/consumer" "$build/../vmroot/usr/local/bin/pmcring-example-consumer"
cp "$tmp/static/reader" "$build/../vmroot/usr/local/bin/pmcring-example-reader"

# the raw-ABI consumer must not need the library at all
if command -v nm >/dev/null 2>&1 && nm -u "$tmp/src/consumer" | grep -q pmcring_; then
	fail "consumer links libpmcring"
fi

for ex in consumer reader; do
	if [ -e /dev/pmcring ]; then
		LD_LIBRARY_PATH="$tmp/root/usr/lib" "$tmp/src/$ex" -q -w 16 -t 1 ||
			fail "$ex run"
		continue
	fi
	if LD_LIBRARY_PATH="$tmp/root/usr/lib" "$tmp/src/$ex" -q \
		>"$tmp/run.log" 2>&1; then
		fail "$ex succeeded without /dev/pmcring"
	fi
	grep -q "module loaded" "$tmp/run.log" ||
		{ cat "$tmp/run.log"; fail "$ex: no hint about the module"; }
done
if [ -e /dev/pmcring ]; then
	echo "ok: examples built from the installed files and ran"
else
	echo "ok: examples built from the installed files (no /dev/pmcring here:" \
		"they run in the VM, selftests/report_example.sh)"
fi
