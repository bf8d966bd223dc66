#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: `pmcring record` onto a full file system (a small tmpfs)
# stops with a clear "no space left" error and a non-zero exit, and what it
# wrote is a valid prefix that `pmcring dump` reads, in every format; the
# files of a blob set end on the same whole message (cut back after the
# failed write).
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring

dir=$(mktemp -d)
mnt=$dir/small
mkdir "$mnt"
mount -t tmpfs -o size=256k tmpfs "$mnt" || skip "cannot mount a tmpfs"
trap 'umount "$mnt"; rm -rf "$dir"' EXIT

for fmt in pmclog blob barman; do
	rm -rf "${mnt:?}"/*
	if [ "$fmt" = barman ]; then
		# barman takes no GENERATED records: the workload's samples
		# and switches, onto 32 KiB (its header alone is 15600 bytes)
		umount "$mnt"
		mount -t tmpfs -o size=32k tmpfs "$mnt"
		command -v pmcring-workload >/dev/null ||
			skip "pmcring-workload not on PATH"
		pmcring record --quiet --format barman -o "$mnt/out" -- \
			pmcring-workload -d 4 -t 2 >"$dir/rec.log" 2>&1
	else
		# 4 MiB of generated records per CPU: far more than fits
		extra=
		[ "$fmt" = blob ] && extra=--timing
		pmcring record --quiet --format "$fmt" -o "$mnt/out" $extra \
			--buffer-pages 64 --generate 65536,64 >"$dir/rec.log" 2>&1
	fi
	rc=$?
	if grep -q "generate: Operation not permitted\|generate: Inappropriate" "$dir/rec.log"; then
		skip "PMCRING_IOC_GENERATE not available"
	fi
	[ "$rc" -ne 0 ] || fail "$fmt: record succeeded on a full disk"
	grep -q "no space left on device" "$dir/rec.log" ||
		{ cat "$dir/rec.log"; fail "$fmt: no clear ENOSPC message"; }
	out=$mnt/out
	[ "$fmt" = blob ] && out=$(ls "$mnt"/out/pmcring/all.DAT.*)
	if [ "$fmt" = blob ]; then
		# cut back to whole entries: n messages in every file, DAT
		# ending where the last one does (what LDMS's reader needs)
		set_t=${out##*.DAT.}
		stem=${out%.DAT.*}
		off=$(wc -c <"$stem.OFFSET.$set_t")
		tim=$(wc -c <"$stem.TIMING.$set_t")
		nm=$(($(wc -c <"$stem.TYPE.$set_t") - 8))
		[ "$off" -eq $((8 + 8 * nm)) ] && [ "$tim" -eq $((8 + 16 * nm)) ] ||
			fail "blob: OFFSET $off, TIMING $tim bytes for $nm messages"
		[ "$nm" -gt 0 ] || fail "blob: no message kept"
		# the last message: at its OFFSET entry, length in its header
		last=$(od -An -tu8 -j $((off - 8)) -N8 "$stem.OFFSET.$set_t")
		last=$((last))
		hdr=$(od -An -tu4 -j "$last" -N4 "$out")
		dat=$(wc -c <"$out")
		[ "$dat" -eq $((last + (hdr & 65535))) ] ||
			fail "blob: DAT $dat bytes, its last message ends at" \
				"$((last + (hdr & 65535)))"
		echo "# blob: $nm messages, every file ends on a whole entry"
	fi
	pmcring dump "$out" >"$dir/dump.txt" 2>"$dir/dump.err" ||
		{ cat "$dir/dump.err"; fail "$fmt: prefix not readable"; }
	n=$(grep -vc '^#' "$dir/dump.txt")
	[ "$n" -gt 100 ] || fail "$fmt: only $n records in the prefix"
	echo "# $fmt: $n records kept; $(head -c 200 "$dir/rec.log")"
done
# Past RLIMIT_FSIZE: EFBIG, not SIGXFSZ's default (killed, status 153,
# files not cut back), for pmclog and a blob set
for fmt in pmclog blob; do
	rm -rf "$dir/big"
	extra=
	[ "$fmt" = blob ] && extra=--timing
	(ulimit -f 512 && exec pmcring record --quiet --format "$fmt" \
		-o "$dir/big" $extra --buffer-pages 64 --generate 65536,64) \
		>"$dir/rec.log" 2>&1
	rc=$?
	[ "$rc" -ne 153 ] || fail "$fmt: killed by SIGXFSZ past ulimit -f"
	[ "$rc" -ne 0 ] || fail "$fmt: record succeeded past ulimit -f"
	grep -qi "file too large" "$dir/rec.log" ||
		{ cat "$dir/rec.log"; fail "$fmt: no clear EFBIG message"; }
	out=$dir/big
	[ "$fmt" = blob ] && out=$(ls "$dir"/big/pmcring/all.DAT.*)
	pmcring dump "$out" >"$dir/dump.txt" 2>"$dir/dump.err" ||
		{ cat "$dir/dump.err"; fail "$fmt: EFBIG prefix not readable"; }
	echo "# $fmt past ulimit -f: exit $rc, $(grep -vc '^#' "$dir/dump.txt") records kept"
done
echo "ok: ENOSPC and EFBIG stop record with a readable prefix"
