#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build OVIS LDMS for the LDMS tests, once: from ../shared/ldms/ldms-*.tar.xz
# (LDMS_TAR) into build/ldms/ (LDMS is not in Debian; it is a build
# dependency of the tests, never part of this tree).  Only what the tests
# use is built: ldmsd, the sock transport, the auth plugins, the stream
# and message libraries, blob_stream_writer and blob_msg_writer; samplers, stores, the man pages and the
# Python bindings are configured out (about 80 s on 2 cores instead of 100).
# A second run costs nothing: build/ldms/.stamp names the tarball and the
# configure options built.
#
# LDMS_PREFIX set (a site install, with sbin/ldmsd and
# lib/libldmsd_stream.so): nothing is built.  No tarball and no LDMS_PREFIX:
# prints why and exits 0 (the tests then skip and say so; with CI=true they
# fail).  The source tree stays in build/ldms/src for ldms-csv-from-blobs.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
DEST=$TOP/build/ldms
if [ -n "${LDMS_PREFIX:-}" ]; then
	if [ -x "$LDMS_PREFIX/sbin/ldmsd" ]; then
		echo "  LDMS    using LDMS_PREFIX=$LDMS_PREFIX"
		exit 0
	fi
	echo "ldms_build: LDMS_PREFIX=$LDMS_PREFIX has no sbin/ldmsd" >&2
	exit 1
fi
TAR=${LDMS_TAR:-$(ls "$TOP"/../shared/ldms/ldms-*.tar.xz 2>/dev/null | head -n1)}
if [ -z "$TAR" ] || [ ! -f "$TAR" ]; then
	echo "  LDMS    no ../shared/ldms/ldms-*.tar.xz and no LDMS_PREFIX:" \
		"LDMS tests will skip"
	exit 0
fi
off=
for o in store app-sampler array_example clock coretemp \
	cray_power_sampler csv curated_metrics cxi_sampler doc-man dstat \
	file_importer filesingle flatfile generic_sampler hello_ldms_msg \
	hello_stream jobinfo-sampler llnl-edac lnet_stats loadavg lustre \
	meminfo perf perfevent procdiskstats procinterrupts procnet \
	procnetdev procnfs procstat synthetic tsampler varset vmstat \
	spank_subscriber readline static; do
	off="$off --disable-$o"
done
stamp="$(basename "$TAR") --disable-python$off"
if [ -x "$DEST/sbin/ldmsd" ] && [ "$(cat "$DEST/.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
echo "  LDMS    build $(basename "$TAR") into build/ldms (once, ~1.5 min)"
start=$(date +%s)
rm -rf "$DEST"
mkdir -p "$DEST/src"
tar -xJf "$TAR" -C "$DEST/src" --strip-components=1
log=$DEST/build.log
(
	cd "$DEST/src"
	./autogen.sh
	# shellcheck disable=SC2086
	./configure --prefix="$DEST" --disable-python $off
	make -j"$(nproc)"
	make install
) >"$log" 2>&1 || {
	tail -n 30 "$log" >&2
	echo "ldms_build: failed, log in $log" >&2
	exit 1
}
echo "$stamp" >"$DEST/.stamp"
echo "  LDMS    built in $(( $(date +%s) - start ))s"
