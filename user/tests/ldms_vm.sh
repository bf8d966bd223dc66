#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: the real `pmcring record -a --ldms` into real ldmsd daemons,
# in the test VM (selftests/vmrun): the dynamically linked pmcring (the
# VM's own is static and cannot dlopen LDMS) records the whole VM under
# pmcring-workload and publishes to a node ldmsd on the VM's loopback; an
# aggregator ldmsd subscribed to the node stores with LDMS's own
# blob_stream_writer (stream channel, one JSON message per record) and
# blob_msg_writer (message channel, binary records batched).  The guest
# half is ldms_vm_guest.sh; this half prepares what it runs, boots the VM
# and checks, on the host, the files the daemons wrote (their writers
# flush only when they exit):
#   - the stop matrix, SIGINT, SIGTERM, --duration and SIGKILL, on both
#     channels: exit 0, records published (FILE.ldms) = records in the
#     aggregator's set = records in pmcring's own blob set, the stored
#     DAT byte for byte the own one (unbatched: OFFSET and TYPE too;
#     batched: one index entry per message, each at a record of the own
#     set), whole records in timestamp order, read by `pmcring stat`;
#     SIGKILL: exit 137, no counts left, what the aggregator stored a
#     whole prefix of the stream in order (or the own file one of it);
#   - `-o none`: no file, the counts on stderr, as many records stored;
#   - `pmcring report` reads a stored binary set, LDMS's
#     ldms-csv-from-blobs a stored JSON set.
# The guest also leaves the static pmcring's recording (out/vm.pmclog),
# which ldms_cluster.sh vm replays into the host's daemons.
#
# How the dynamic binaries run in the busybox initramfs: ldd's closure of
# pmcring, pmcring-ldms-feed, ldmsd, ldmsctl and LDMS's libraries and
# plugins (zap sock, auth none, the two writers), with the host's loader,
# copied into build/ldms-vm/ (about 21 MB), which is the VM's 9p share;
# the guest links the loader at the binaries' interpreter path and puts
# the rest on LD_LIBRARY_PATH (ldms_vm_guest.sh).  The daemons run in the
# VM, on its loopback: no guest network device, no host ports, and the
# recording sees them as the load they are.
#
# Usage: ldms_vm.sh   KTAP; exit 0, 1, or 4 (skip).  KVER: the VM's
# kernel series (default 6.1).  LDMS: $LDMS_PREFIX, else build/ldms (make
# ldms).  Without it the test skips, except with CI set (a skip there
# hides a broken setup).
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$TOP/build
O=${PMCRING_O:-$BUILD/user}
P=${LDMS_PREFIX:-$BUILD/ldms}
V=$BUILD/ldms-vm
OUT=$V/out
PMCRING=$O/pmcring
FEED=$O/bench/pmcring-ldms-feed
KVER=${KVER:-6.1}

skip()
{
	if [ -n "${CI:-}" ] && [ "${CI:-}" != false ]; then
		echo "not ok 1 ldms_vm # CI: $1"
		exit 1
	fi
	echo "ok 1 ldms_vm # SKIP $1"
	exit 4
}

echo "KTAP version 1"
[ -x "$P/sbin/ldmsd" ] ||
	skip "no LDMS: no $P/sbin/ldmsd (make ldms builds it from ../shared/ldms; or LDMS_PREFIX=DIR)"
[ -x "$FEED" ] && [ -x "$PMCRING" ] ||
	skip "no $FEED or $PMCRING (make -C user ldms-feed)"
host=$(uname -m | sed -e 's/^aarch64$/arm64/' -e 's/^x86_64$/amd64/')
vm=${VM_ARCH:-$host}
case "$vm" in x86_64) vm=amd64 ;; aarch64) vm=arm64 ;; esac
# not a broken setup: this host's binaries cannot run in another
# architecture's VM (check.sh then records for the replay only)
if [ "$vm" != "$host" ]; then
	echo "ok 1 ldms_vm # SKIP the VM is $vm, this host $host: its LDMS and libraries cannot run there"
	exit 4
fi
CSV=$(ls "$P"/src/ldms/src/sampler/blob_stream/ldms-csv-from-blobs \
	"$P"/bin/ldms-csv-from-blobs 2>/dev/null | head -n1)

# -- what the guest runs: binaries, LDMS, and every library they load ------
rm -rf "$V"
mkdir -p "$V/lib" "$V/bin" "$V/ldms/sbin" "$V/ldms/lib/ovis-ldms"
cp "$PMCRING" "$FEED" "$V/bin/"
cp -L "$P/sbin/ldmsd" "$P/sbin/ldmsctl" "$V/ldms/sbin/"
cp -a "$P"/lib/*.so* "$V/ldms/lib/"
cp -a "$P"/lib/ovis-ldms/*.so* "$V/ldms/lib/ovis-ldms/"
cp "$TOP/user/tests/ldms_vm_guest.sh" "$V/guest.sh"
export LD_LIBRARY_PATH=$P/lib:$P/lib/ovis-ldms${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
interp=$(readelf -l "$PMCRING" | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
[ -n "$interp" ] || { echo "not ok 1 ldms_vm: no ELF interpreter in $PMCRING"; exit 1; }
# the closure outside LDMS (which is in $V/ldms): libc, libcrypto, ...
for f in "$V"/bin/* "$V"/ldms/sbin/* "$V"/ldms/lib/*.so.* "$V"/ldms/lib/ovis-ldms/*.so.*; do
	ldd "$f" 2>/dev/null
done | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	grep -v "^$P/" | sort -u | while read -r l; do cp -L "$l" "$V/lib/"; done
missing=$(for f in "$V"/bin/* "$V"/ldms/sbin/*; do ldd "$f"; done 2>&1 | grep 'not found')
[ -z "$missing" ] || { echo "not ok 1 ldms_vm: libraries not found: $missing"; exit 1; }
echo "$interp" >"$V/interp"
echo "# $(du -sh "$V" | cut -f1) shared with the VM: $(ls "$V/lib" | tr '\n' ' ')"

echo "1..8"
# -- the VM ------------------------------------------------------------------
t0=$(date +%s)
"$TOP/selftests/vmrun" --kernel "$KVER" --mem 2048 --timeout 600 --share "$V" -- \
	sh "$V/guest.sh" "$OUT" >"$V/vm.log" 2>&1
rc=$?
sed -n 's/^# guest: /# /p; /^vmrun: /s/^/# /p; /Out of memory/s/^/# /p' "$V/vm.log"
n=0
fail=0
ok()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=1; fi
}
ok $(( rc != 0 || $(cat "$OUT/flush.rc" 2>/dev/null || echo 1) != 0 ||
	$(cat "$OUT/agg.rc" 2>/dev/null || echo 1) != 0 )) \
	"the VM ran node and aggregator ldmsd and the recordings, the aggregator caught up and exited cleanly (vmrun exit $rc, $(( $(date +%s) - t0 )) s)"
if [ ! -f "$OUT/done" ]; then
	tail -n 30 "$V/vm.log" | sed 's/^/# /'
	exit 1
fi

# The sidecar's field $2 of run $1.
side() { sed -n "s/^/ /; s/.* $2 \([0-9]*\).*/\1/p" "$OUT/own-$1.ldms" 2>/dev/null | head -n1; }
# One file of a set: $1 DIR, $2 stream, $3 DAT/OFFSET/...
one() { ls "$1/$2"."$3".* 2>/dev/null | head -n 1; }

# STORED-DAT OWN-DAT MODE: whole records (binary) or JSON messages in
# timestamp order; MODE same: the stored DAT is the own one; prefix: the
# shorter a prefix of the other; none: no own set.  Prints the count.
setcheck()
{
	python3 -c '
import json, struct, sys
stored, own, mode = sys.argv[1], sys.argv[2], sys.argv[3]
d = open(stored, "rb").read()
n, last = 0, 0
if d[8:9] == b"{":
    for msg in d[8:].split(b"\0")[:-1]:
        try:
            ts = json.loads(msg)["ts"]
        except Exception:
            sys.exit("# %s: message %d is not whole JSON" % (stored, n))
        if ts < last:
            sys.exit("# %s: message %d: ts %d before %d" % (stored, n, ts, last))
        last, n = ts, n + 1
    if not d.endswith(b"\0"):
        sys.exit("# %s: a cut message at the end" % stored)
else:
    o = 8
    while o < len(d):
        if o + 16 > len(d):
            sys.exit("# %s: a cut header at %d" % (stored, o))
        h, _, ts = struct.unpack_from("<IIQ", d, o)
        l = h & 0xffff
        if h >> 24 != 0xEE or l < 16 or o + l > len(d):
            sys.exit("# %s: a bad or cut record at %d" % (stored, o))
        if ts < last:
            sys.exit("# %s: record %d: ts %d before %d" % (stored, n, ts, last))
        last, o, n = ts, o + l, n + 1
if mode != "none":
    od = open(own, "rb").read()
    m = min(len(d), len(od))
    if (d[:m] != od[:m]) if mode == "prefix" else (d != od):
        sys.exit("# %s: not the own DAT %s" % (stored, own))
print(n)
' "$@"
}

# BATCHED-SET OWN-SET MESSAGES: one OFFSET/TIMING/TYPE entry per
# message, each offset that of a record of the own set
batchcheck()
{
	python3 - "$@" <<'EOF'
import struct, sys
agg, own, msgs = sys.argv[1], sys.argv[2], int(sys.argv[3])
rd = lambda p, e: open(p.replace('.DAT.', '.%s.' % e), 'rb').read()
offs = lambda p: struct.unpack('<%dQ' % ((len(rd(p, 'OFFSET')) - 8) // 8), rd(p, 'OFFSET')[8:])
o_own, o_agg = set(offs(own)), offs(agg)
if len(o_agg) != msgs or (len(rd(agg, 'TIMING')) - 8) // 16 != msgs or rd(agg, 'TYPE')[8:] != b's' * msgs:
    sys.exit('# %s: %d OFFSET entries for %d messages' % (agg, len(o_agg), msgs))
if list(o_agg) != sorted(o_agg) or not set(o_agg) <= o_own:
    sys.exit('# %s: an OFFSET entry not at a record of the own set' % agg)
EOF
}

# -- the stop matrix ---------------------------------------------------------
for s in int term dur kill; do
	bad=0
	msg=
	for b in "" b; do
		r=$s$b
		rrc=$(cat "$OUT/rec-$r.rc" 2>/dev/null)
		sed "s/^/# $r: /" "$OUT/rec-$r.out" "$OUT/rec-$r.err" 2>/dev/null | tr -d '\r' | tail -n 3
		if [ -n "$b" ]; then st=$(one "$OUT/aggm/blobs" "v$r" DAT); else st=$(one "$OUT/agg/blobs" "v$r" DAT); fi
		own=$(one "$OUT/own-$r/pmcring" all DAT)
		if [ -z "$st" ] || [ -z "$own" ]; then
			echo "# $r: no stored set ($st) or own set ($own)"
			bad=1
			continue
		fi
		if [ $s = kill ]; then
			got=$(setcheck "$st" "$own" prefix) || { echo "$got"; bad=1; continue; }
			{ [ "$rrc" = 137 ] && [ "$got" -gt 0 ] && [ ! -e "$OUT/own-$r.ldms" ]; } || bad=1
			msg="$msg ${b:+batched: }$got stored, exit $rrc;"
			continue
		fi
		got=$(setcheck "$st" "$own" same) || { echo "$got"; bad=1; continue; }
		pub=$(side "$r" published)
		msgs=$(side "$r" messages)
		ack=$(side "$r" acknowledged)
		"$PMCRING" stat "$st" >"$V/stat-$r" 2>&1
		"$PMCRING" stat "$own" >"$V/stat-own-$r" 2>&1
		grep -q "format blob, $pub records" "$V/stat-$r" &&
			grep -q "format blob, $pub records" "$V/stat-own-$r" || bad=1
		drops=$(sed -n 's/.*drops \([0-9]*\).*/\1/p' "$V/stat-own-$r")
		if [ -n "$b" ]; then
			batchcheck "$st" "$own" "$msgs" || bad=1
		else
			for e in OFFSET TYPE; do
				cmp -s "$(one "$OUT/agg/blobs" "v$r" $e)" "$(one "$OUT/own-$r/pmcring" all $e)" ||
					{ echo "# $r: $e differs"; bad=1; }
			done
		fi
		# the counts next to the set, as `pmcring stat DIR` shows them
		"$PMCRING" stat "$OUT/own-$r" 2>&1 | grep '^ldms:' >"$V/side-$r"
		{ [ "$rrc" = 0 ] && [ -n "$pub" ] && [ "$got" = "$pub" ] && [ "$ack" = "$pub" ] &&
			[ "$pub" -gt 100 ] &&
			grep -q "^ldms: published $pub .* undelivered 0 .* gone 0 .*stream v$r" "$V/side-$r"; } ||
			{ sed "s/^/# $r: /" "$V/side-$r"; bad=1; }
		msg="$msg ${b:+batched: }$pub published in $msgs messages = $got stored, $drops drops, exit $rrc;"
	done
	if [ $s = kill ]; then
		ok $bad "stop by SIGKILL:$msg the aggregator's records whole and in order, a prefix of the own file's or it of theirs, no counts left"
	else
		ok $bad "stop by $s:$msg the aggregator's DAT pmcring's own, whole, in order"
	fi
done

# -- -o none -----------------------------------------------------------------
tr '\r' '\n' <"$OUT/rec-none.err" | grep -v '^$' | tail -n 2 | sed 's/^/# none: /'
pubn=$(tr '\r' '\n' <"$OUT/rec-none.err" | sed -n 's/^pmcring: --ldms .*: \([0-9]*\) records published.* 0 not acknowledged, 0 records undelivered.*/\1/p')
stn=$(one "$OUT/agg/blobs" vnone DAT)
gotn=$(setcheck "$stn" - none) || { echo "$gotn"; gotn=; }
[ "$(cat "$OUT/rec-none.rc")" = 0 ] && [ -n "$pubn" ] && [ "$pubn" -gt 100 ] &&
	[ "$gotn" = "$pubn" ] && [ ! -e "$OUT/none" ]
ok $? \
	"-o none: exit $(cat "$OUT/rec-none.rc"), no file, ${pubn:-?} records published (stderr) = ${gotn:-?} stored, in order"

# -- readers -----------------------------------------------------------------
stb=$(one "$OUT/aggm/blobs" vintb DAT)
"$PMCRING" report "$stb" >"$V/report" 2>&1
rc=$?
head -n 2 "$V/report" | sed 's/^/# /'
grep -Eq '^# [0-9]+ records, [1-9][0-9]* samples' "$V/report"
ok $(( rc != 0 || $? != 0 )) "pmcring report reads the aggregator's binary set (SIGINT, batched)"
if [ -n "$CSV" ]; then
	stj=$(one "$OUT/agg/blobs" vint DAT)
	rm -rf "$V/csv" && mkdir -p "$V/csv"
	(cd "$V/csv" && python3 "$CSV" "$stj") >"$V/csv.log" 2>&1
	rc=$?
	rows=$(cat "$V"/csv/*.DAT.* 2>/dev/null | wc -l)
	want=$(side int messages)
	ok $(( rc != 0 || rows != want )) "ldms-csv-from-blobs reads the aggregator's JSON set (SIGINT): $rows rows of $want messages"
else
	ok 1 "ldms-csv-from-blobs: not found in $P"
fi
[ $fail = 0 ] || tail -n 40 "$V/vm.log" | sed 's/^/# vm: /'
exit $fail
