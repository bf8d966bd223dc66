#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: pmcring's records through an LDMS cluster on loopback.  A
# node ldmsd (stream_enable, msg_enable) takes what `record --ldms`
# publishes; an aggregator ldmsd subscribes to it (prdcr_add /
# prdcr_subscribe) and stores with LDMS's own blob_stream_writer and
# blob_msg_writer; a third ldmsd stores what it is sent itself.  The
# records come from record's consumer fed by user space rings
# (pmcring-ldms-feed) while two producer threads write them, or (vm mode)
# from a recording the module made in the VM, whose static pmcring cannot
# load LDMS.  Checks, on the stores' files once the daemons exit
# (blob_stream_writer flushes only then):
#   - every published message is there: DAT, OFFSET and TYPE are byte for
#     byte those pmcring's own blob writer wrote for the same records, in
#     the same run (TIMING is the store's clock): binary (one ldmsd; and
#     through the aggregator on the message channel) and JSON;
#   - the records are in timestamp order; `pmcring stat` and `pmcring
#     report` read the sets; LDMS's ldms-csv-from-blobs reads the JSON set;
#   - faults: no LDMS, no daemon at start (clear errors, exit 1, also from
#     `pmcring record` itself), the daemon killed mid-run (stops, says so,
#     counts undelivered, the file stays whole), a stopped (slow) node
#     (back-pressure: drops counted, nothing published lost), records
#     ldmsd refuses (vm: binary not ending in NUL, counted);
#   - the stop matrix: SIGINT, SIGTERM, -d (--duration) and SIGKILL of the
#     publisher under a paced load, unbatched (stream channel) and batched
#     (channel=msg,batch=): records published = records stored, the stored
#     DAT pmcring's own, whole records in timestamp order; SIGKILL: what
#     the daemon received, a whole prefix of the stream;
#   - the counts outlive the run: DIR.ldms next to the own set, shown by
#     `pmcring stat DIR` (published, undelivered, quota waits, ...);
#   - the node has `default_quota` (as Documentation/ldms.rst's cluster);
#     a daemon with a small one caps batch= at half of it, nothing lost;
#   - reconnect=: the daemon stopped and another started on its port:
#     the publisher connects again, counts what it could not deliver,
#     and the two daemons' sets are runs of pmcring's own stream;
#   - a daemon that stops reading (SIGSTOP) with the connection up: the
#     first SIGINT's stop waits for it and says so, the second ends the
#     waits on both channels at once, what was not published counted;
#     one SIGTERM or -d: the wait ends timeout= after the stop.
#
# Usage: ldms_cluster.sh          the test, KTAP; exit 0, 1, or 4 (skip)
#        ldms_cluster.sh vm PMCLOG   a recording of the module (the VM's)
#                                 replayed, published and compared (KTAP)
#        ldms_cluster.sh bench    records/s: own blob writer, one ldmsd
#                                 (both channels, batch=), node + aggregator
#                                 (LDMS_BENCH_N records per CPU, default
#                                 100000; LDMS_BENCH_BATCH: batch= bytes,
#                                 default 1 MiB, capped by LDMS;
#                                 LDMS_BENCH_QUOTA: node's and one
#                                 ldmsd's default_quota, default 4 MiB,
#                                 0 unlimited; LDMS_BENCH_JSON: results
#                                 file)
# LDMS: $LDMS_PREFIX, else build/ldms (make ldms).  Without it the test
# skips, except with CI set (a skip there hides a broken setup).
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
O=${PMCRING_O:-$TOP/build/user}
FEED=$O/bench/pmcring-ldms-feed
PMCRING=$O/pmcring
P=${LDMS_PREFIX:-$TOP/build/ldms}
MODE=${1:-test}

skip()
{
	if [ -n "${CI:-}" ] && [ "${CI:-}" != false ]; then
		echo "not ok 1 ldms_cluster # CI: $1"
		exit 1
	fi
	echo "ok 1 ldms_cluster # SKIP $1"
	echo "$1"
	exit 4
}

[ -x "$P/sbin/ldmsd" ] ||
	skip "no LDMS: no $P/sbin/ldmsd (make ldms builds it from ../shared/ldms; or LDMS_PREFIX=DIR)"
[ -x "$FEED" ] && [ -x "$PMCRING" ] ||
	skip "no $FEED or $PMCRING (make -C user ldms-feed)"
CSV=$(ls "$P"/src/ldms/src/sampler/blob_stream/ldms-csv-from-blobs \
	"$P"/bin/ldms-csv-from-blobs 2>/dev/null | head -n1)

export LD_LIBRARY_PATH=$P/lib:$P/lib/ovis-ldms${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LDMSD_PLUGIN_LIBPATH=$P/lib/ovis-ldms ZAP_LIBPATH=$P/lib/ovis-ldms

W=$(mktemp -d /tmp/pmcring-ldms.XXXXXX)
PIDS=()
cleanup()
{
	local p
	for p in "${PIDS[@]}"; do
		{ kill -CONT "$p"; kill -9 "$p"; wait "$p"; } 2>/dev/null
	done
	[ -n "${LDMS_KEEP:-}" ] && echo "# kept $W" || rm -rf "$W"
}
trap cleanup EXIT

# A free loopback port.
port()
{
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		ss -ltn 2>/dev/null | grep -q ":$p " || { echo "$p"; return; }
	done
}

# ldmsd NAME PORT CONFIG-TEXT: start one in the foreground (-F), its pid
# in $NAME.pid, its log in $W/NAME.log; wait until it listens.
ldmsd_start()
{
	local i
	printf '%s\n' "$3" >"$W/$1.conf"
	"$P/sbin/ldmsd" -F -x "sock:$2:127.0.0.1" -c "$W/$1.conf" \
		-l "$W/$1.log" -v ERROR &
	echo $! >"$W/$1.pid"
	PIDS+=("$!")
	for i in $(seq 100); do
		ss -ltn 2>/dev/null | grep -q "127.0.0.1:$2 " && return 0
		sleep 0.05
	done
	echo "# ldmsd $1 does not listen on $2"; sed 's/^/# /' "$W/$1.log"
	return 1
}

# Stop ldmsd NAME with SIGTERM and wait: its writer flushes and closes.
ldmsd_stop()
{
	local pid
	pid=$(cat "$W/$1.pid")
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# Wait until the node on PORT lists a remote subscriber of stream $2.
subscribed()
{
	local i
	for i in $(seq 50); do
		echo stream_client_dump | "$P/sbin/ldmsctl" -x sock \
			-h 127.0.0.1 -p "$1" -a none 2>/dev/null |
			grep -q "^$2 " && return 0
		sleep 0.1
	done
	return 1
}

# node + aggregator storing STREAMs into $W/agg/blobs.  With $QUOTA
# (bytes; bench mode) the node has that `default_quota`: what a publisher
# may have in flight to it on the message channel (else unlimited).
cluster()
{
	local s subs=""
	NODE=$(port)
	AGG=$(port)
	while [ "$AGG" = "$NODE" ]; do AGG=$(port); done
	for s in "$@"; do
		subs="$subs
prdcr_subscribe regex=.* stream=$s"
	done
	ldmsd_start node "$NODE" "stream_enable
msg_enable${QUOTA:+
default_quota quota=$QUOTA}" || return 1
	# and the message channel: pmcmsg, pmcflushm into $W/aggm/blobs
	ldmsd_start agg "$AGG" "stream_enable
msg_enable
load name=blob_stream_writer
config name=blob_stream_writer path=$W/agg container=blobs $(printf 'stream=%s ' "$@")timing=1 types=1
load name=blob_msg_writer
config name=blob_msg_writer path=$W/aggm container=blobs message_tag=pmcmsg message_tag=pmcbatch message_tag=pmcflushm timing=1 types=1
prdcr_add name=node host=127.0.0.1 type=active xprt=sock port=$NODE reconnect=200000$subs
prdcr_subscribe regex=.* message_tag=pmcmsg
prdcr_subscribe regex=.* message_tag=pmcbatch
prdcr_subscribe regex=.* message_tag=pmcflushm
prdcr_start name=node" || return 1
	for s in "$@"; do
		subscribed "$NODE" "$s" || {
			echo "# the aggregator did not subscribe to $s"
			return 1
		}
	done
}

n=0
fail=0
ok()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=1; fi
}

# Field $2 of the feed's output line in file $1.
field()
{
	sed -n "s/.* $2 \([0-9.]*\).*/\1/p; s/^$2 \([0-9.]*\).*/\1/p" "$1" | head -n1
}

# Make sure ldmsd on PORT $1 storing into DIR $2 has processed everything
# published to it so far: publish to stream pmcflush, through the same
# connection after the rest, until its store writes pmcflush.DAT past one
# stdio buffer (blob_stream_writer never flushes; its files stay short of
# the last buffer until it exits).
drained()
{
	local i
	"$FEED" -q -n 200 -j --ldms "host=127.0.0.1,port=$1,stream=$3,type=json${4:+,$4}" || return 1
	for i in $(seq 200); do
		[ "$(stat -c %s "$2/$3".DAT.* 2>/dev/null || echo 0)" -ge 8192 ] && return 0
		sleep 0.1
	done
	echo "# $2: the store did not catch up in 20 s"
	return 1
}

# vm PMCLOG: a recording the module made (`pmcring record -a` under load
# in the VM, whose static pmcring cannot load LDMS) replayed through
# record's consumer here, through node and aggregator: binary on the
# message channel, JSON on the stream channel, each set compared with
# pmcring's own of the same run.  (Binary on the stream channel loses
# some of these records in ldmsd: Documentation/ldms.rst, Limits.)
if [ "$MODE" = vm ]; then
	rec=${2:-}
	echo "KTAP version 1"
	echo "1..5"
	[ -s "$rec" ] || { echo "not ok 1 vm: no recording $rec"; exit 1; }
	"$PMCRING" stat "$rec" 2>&1 | head -n 2 | sed 's/^/# recording: /'
	onep=$(port)
	ldmsd_start one "$onep" "stream_enable
load name=blob_stream_writer
config name=blob_stream_writer path=$W/one container=blobs stream=pmcring stream=pmcflush timing=1 types=1" ||
		exit 1
	cluster pmcjson pmcflush || exit 1
	mkdir -p "$W/own" "$W/ownj" "$W/owns"
	"$FEED" -R "$rec" -o "$W/own" --ldms "host=127.0.0.1,port=$NODE,stream=pmcmsg,channel=msg" >"$W/vb.out" 2>&1
	r1=$?
	"$FEED" -R "$rec" -j -o "$W/ownj" --ldms "host=127.0.0.1,port=$NODE,stream=pmcjson,type=json" >"$W/vj.out" 2>&1
	r2=$?
	sed 's/^/# /' "$W/vb.out" "$W/vj.out"
	taken=$(field "$W/vb.out" records)
	pub=$(field "$W/vb.out" published)
	pubj=$(field "$W/vj.out" published)
	nomsg=$(field "$W/vj.out" no_msg)
	ok $(( r1 != 0 || r2 != 0 || pub != taken || pubj + nomsg != taken || taken < 1000 )) \
		"vm: all $taken recorded records published and acknowledged, binary and JSON"
	# binary on the stream channel: ldmsd refuses the records that do not
	# end in NUL; each is counted, the rest stored
	"$FEED" -R "$rec" -o "$W/owns" --ldms "host=127.0.0.1,port=$onep" >"$W/vs.out" 2>&1
	r4=$?
	sed 's/^/# stream, binary: /' "$W/vs.out"
	drained "$onep" "$W/one/blobs" pmcflush
	d0=$?
	ldmsd_stop one
	pubs=$(field "$W/vs.out" published)
	rej=$(field "$W/vs.out" rejected)
	nonul=$(python3 - "$W"/owns/blobs/pmcring.DAT.* <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
o, n = 8, 0
while o < len(d):
    l = struct.unpack_from('<I', d, o)[0] & 0xffff
    n += d[o + l - 1] != 0
    o += l
print(n)
EOF
)
	"$PMCRING" stat "$W"/one/blobs/pmcring.DAT.* >"$W/stats" 2>&1
	grep -q "format blob, $((pubs - rej)) records" "$W/stats"
	ok $(( $? != 0 || d0 != 0 || r4 != 1 || rej != nonul || rej == 0 )) \
		"vm: stream channel, binary: the $rej records not ending in NUL refused by ldmsd and counted (exit 1), the $((pubs - rej)) others stored"
	drained "$NODE" "$W/aggm/blobs" pmcflushm channel=msg
	d1=$?
	drained "$NODE" "$W/agg/blobs" pmcflush
	d2=$?
	ldmsd_stop agg
	same=$(( d1 != 0 || d2 != 0 ))
	for e in DAT OFFSET TYPE; do
		cmp -s "$W"/own/blobs/pmcring.$e.* "$W"/aggm/blobs/pmcmsg.$e.* || { same=1; echo "# binary $e differs"; }
		cmp -s "$W"/ownj/blobs/pmcring.$e.* "$W"/agg/blobs/pmcjson.$e.* || { same=1; echo "# json $e differs"; }
	done
	ok $same "vm: the stored sets are byte for byte pmcring's own (DAT, OFFSET, TYPE)"
	"$PMCRING" stat "$W"/aggm/blobs/pmcmsg.DAT.* >"$W/stat" 2>&1
	"$PMCRING" report "$W"/aggm/blobs/pmcmsg.DAT.* >"$W/report" 2>&1
	r3=$?
	head -n 2 "$W/stat" | sed 's/^/# /'
	head -n 2 "$W/report" | sed 's/^/# /'
	grep -q "format blob, $pub records" "$W/stat"
	ok $(( $? != 0 || r3 != 0 )) "vm: pmcring stat and report read the stored binary set"
	if [ -n "$CSV" ]; then
		mkdir -p "$W/csv"
		(cd "$W/csv" && python3 "$CSV" "$W"/agg/blobs/pmcjson.DAT.*) >"$W/csv.log" 2>&1
		rc=$?
		rows=$(cat "$W"/csv/*.DAT.* 2>/dev/null | wc -l)
		ok $(( rc != 0 || rows != pubj )) "vm: ldms-csv-from-blobs reads the aggregator's JSON set: $rows rows of $pubj"
	else
		ok 1 "vm: ldms-csv-from-blobs not found"
	fi
	exit $fail
fi

if [ "$MODE" = bench ]; then
	N=${LDMS_BENCH_N:-100000}
	B=${LDMS_BENCH_BATCH:-1048576}	# capped at the transport's limit
	# the receive quota of the daemons pmcring publishes to (one, node:
	# `default_quota`), as a site sets it: the publisher has at most that
	# much in flight on the message channel and waits for the daemon
	# (quota_waits), instead of queueing without bound in its own memory
	# and timing out at the end (timeout=); 0: unlimited.  Not on the
	# aggregator's prdcr_add: there a quota loses messages in this LDMS
	# (Documentation/ldms.rst, Limits)
	QUOTA=${LDMS_BENCH_QUOTA:-4194304}
	[ "$QUOTA" = 0 ] && QUOTA=
	onep=$(port)
	ldmsd_start one "$onep" "stream_enable
msg_enable${QUOTA:+
default_quota quota=$QUOTA}
load name=blob_stream_writer
config name=blob_stream_writer path=$W/one container=blobs stream=pmcring timing=1 types=1
load name=blob_msg_writer
config name=blob_msg_writer path=$W/onem container=blobs message_tag=pmcmsg message_tag=pmcbatch timing=1 types=1" ||
		exit 1
	cluster pmcjson pmcflush || exit 1
	run()
	{
		"$FEED" -n "$N" "$@" >"$W/b.out" 2>"$W/b.err" || {
			sed 's/^/ldms-bench: failed: /' "$W/b.out" "$W/b.err" >&2
			touch "$W/failed"
		}
		field "$W/b.out" records_per_s
	}
	# pmcring's own blob writer: three runs spread over the bench (the
	# load of this shared machine varies), the median the reference
	ownrun() { rm -rf "$W/own"; mkdir -p "$W/own"; run -o "$W/own"; }
	own1=$(ownrun)
	one=$(run --ldms "host=127.0.0.1,port=$onep")
	onem=$(run --ldms "host=127.0.0.1,port=$onep,stream=pmcmsg,channel=msg")
	oneb=$(run --ldms "host=127.0.0.1,port=$onep,stream=pmcbatch,channel=msg,batch=$B")
	msgs1=$(field "$W/b.out" messages)
	cap=$(sed -n 's/.* batch=\([0-9]*\).*/\1/p' "$W/b.err")
	own2=$(ownrun)
	# through node + aggregator: batched first, then unbatched, JSON last.
	# The stream channel has no quota: the aggregator goes on parsing
	# (and, in blob_stream_writer, leaking) JSON for seconds after the
	# node acknowledged the last message, and a run after it would
	# measure that backlog (Documentation/ldms.rst, Limits)
	aggb=$(run --ldms "host=127.0.0.1,port=$NODE,stream=pmcbatch,channel=msg,batch=$B")
	pubb=$(field "$W/b.out" published)
	msgsb=$(field "$W/b.out" messages)
	aggm=$(run --ldms "host=127.0.0.1,port=$NODE,stream=pmcmsg,channel=msg")
	pubm=$(field "$W/b.out" published)
	aggj=$(run -j --ldms "host=127.0.0.1,port=$NODE,stream=pmcjson,type=json")
	pubj=$(field "$W/b.out" published)
	own3=$(ownrun)
	own=$(printf '%s\n' "${own1:-0}" "${own2:-0}" "${own3:-0}" | sort -n | sed -n 2p)
	drained "$NODE" "$W/agg/blobs" pmcflush
	drained "$NODE" "$W/aggm/blobs" pmcflushm channel=msg
	ldmsd_stop one
	ldmsd_stop agg
	storedj=$("$PMCRING" stat "$W"/agg/blobs/pmcjson.DAT.* | sed -n 's/.*format blob, \([0-9]*\) records.*/\1/p')
	storedm=$("$PMCRING" stat "$W"/aggm/blobs/pmcmsg.DAT.* | sed -n 's/.*format blob, \([0-9]*\) records.*/\1/p')
	storedb=$("$PMCRING" stat "$W"/aggm/blobs/pmcbatch.DAT.* | sed -n 's/.*format blob, \([0-9]*\) records.*/\1/p')
	x() { awk "BEGIN{printf \"%.3f\", ${1:-0}/${own:-1}}"; }
	echo "ldms-bench: $((2 * N + 1)) records per run (2 producer CPUs, 64-byte call chains), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), quota ${QUOTA:-unlimited}"
	echo "ldms-bench: pmcring's own blob writer (binary)            $own records/s (median of $own1 $own2 $own3)"
	echo "ldms-bench: one ldmsd + blob_stream_writer (binary)       $one records/s ($(x "$one")x)"
	echo "ldms-bench: one ldmsd + blob_msg_writer, channel=msg      $onem records/s ($(x "$onem")x)"
	echo "ldms-bench: one ldmsd + blob_msg_writer, batch=$cap $oneb records/s ($(x "$oneb")x), $msgs1 messages"
	echo "ldms-bench: node + aggregator, batch=$cap       $aggb records/s ($(x "$aggb")x), $storedb of $pubb stored in $msgsb messages"
	echo "ldms-bench: node + aggregator, channel=msg, binary        $aggm records/s ($(x "$aggm")x), $storedm of $pubm stored"
	echo "ldms-bench: node + aggregator, stream channel, JSON       $aggj records/s ($(x "$aggj")x), $storedj of $pubj stored"
	printf '{"ldms_own_rps": %s, "ldms_one_rps": %s, "ldms_one_msg_rps": %s, "ldms_one_batch_rps": %s, "ldms_one_batch_ratio": %s, "ldms_batch_bytes": %s, "ldms_quota_bytes": %s, "ldms_agg_json_rps": %s, "ldms_agg_json_stored": %s, "ldms_agg_json_published": %s, "ldms_agg_msg_rps": %s, "ldms_agg_msg_stored": %s, "ldms_agg_msg_published": %s, "ldms_agg_batch_rps": %s, "ldms_agg_batch_ratio": %s, "ldms_agg_batch_stored": %s, "ldms_agg_batch_published": %s}\n' \
		"${own:-0}" "${one:-0}" "${onem:-0}" "${oneb:-0}" "$(x "$oneb")" "${cap:-0}" "${QUOTA:-0}" "${aggj:-0}" "${storedj:-0}" "${pubj:-0}" "${aggm:-0}" "${storedm:-0}" "${pubm:-0}" \
		"${aggb:-0}" "$(x "$aggb")" "${storedb:-0}" "${pubb:-0}" >"${LDMS_BENCH_JSON:-/dev/null}"
	[ ! -e "$W/failed" ] && [ -n "$pubj" ] && [ "$storedj" = "$pubj" ] &&
		[ "$storedm" = "$pubm" ] && [ "$storedb" = "$pubb" ]
	exit
fi

echo "KTAP version 1"
echo "1..29"
N=20000
# the node with the receive quota Documentation/ldms.rst's cluster sets
QUOTA=4194304
# the binary set into one ldmsd that stores it itself: LDMS's stream
# forwarding (prdcr_subscribe) cuts string messages at their first NUL,
# so binary records do not cross an aggregator; JSON ones do.
onep=$(port)
ldmsd_start one "$onep" "stream_enable
load name=blob_stream_writer
config name=blob_stream_writer path=$W/one container=blobs stream=pmcring stream=pmcflush timing=1 types=1" ||
	{ echo "not ok 1 ldms_cluster: ldmsd setup"; exit 1; }
cluster pmcjson pmcslow pmcflush || { echo "not ok 1 ldms_cluster: cluster setup"; exit 1; }
mkdir -p "$W/own" "$W/ownj"
# -- binary into one ldmsd, JSON through node + aggregator -------------------
"$FEED" -n $N -o "$W/own" --ldms "xprt=sock,host=127.0.0.1,port=$onep,auth=none,stream=pmcring" \
	>"$W/bin.out" 2>"$W/bin.err"
rc=$?
sed 's/^/# binary: /' "$W/bin.out" "$W/bin.err"
pub=$(field "$W/bin.out" published)
ok $(( rc != 0 || pub != 2 * N + 1 )) "binary: all $((2 * N + 1)) records published and acknowledged"
"$FEED" -n $N -j -o "$W/ownj" --ldms "host=127.0.0.1,port=$NODE,stream=pmcjson,type=json" \
	>"$W/json.out" 2>"$W/json.err"
rc=$?
sed 's/^/# json: /' "$W/json.out" "$W/json.err"
pubj=$(field "$W/json.out" published)
nomsg=$(field "$W/json.out" no_msg)
ok $(( rc != 0 || pubj + nomsg != 2 * N + 1 )) "json: every record published (PERIODs ride on their callchains)"

# -- back-pressure: the node stopped for a second under load ----------------
# 2 x 5000 records/s for 2 s, which the node takes in its stride when it
# runs; stopped, it acknowledges nothing: the publisher waits at window=,
# the consumer with it, and the 32 KiB rings overflow.
"$FEED" -n 10000 -r 5000 -p 8 -j --ldms "host=127.0.0.1,port=$NODE,stream=pmcslow,window=256" \
	>"$W/slow.out" 2>"$W/slow.err" &
feed=$!
sleep 0.3
kill -STOP "$(cat "$W/node.pid")"
sleep 1
kill -CONT "$(cat "$W/node.pid")"
wait $feed
rc=$?
sed 's/^/# slow node: /' "$W/slow.out" "$W/slow.err"
drops=$(field "$W/slow.out" drops)
pubs=$(field "$W/slow.out" published)
ok $(( rc != 0 || drops == 0 )) "slow node: back-pressure reaches the rings, $drops drops counted, every published message acknowledged"

# -- binary on the message channel, through node + aggregator ----------------
mkdir -p "$W/ownm"
"$FEED" -n $N -o "$W/ownm" --ldms "host=127.0.0.1,port=$NODE,stream=pmcmsg,channel=msg" \
	>"$W/msg.out" 2>"$W/msg.err"
rc=$?
sed 's/^/# msg: /' "$W/msg.out" "$W/msg.err"
pubm=$(field "$W/msg.out" published)
ok $(( rc != 0 || pubm != 2 * N + 1 )) "channel=msg: all $((2 * N + 1)) binary records published"

# -- batch=: whole records packed per message, through node + aggregator ----
mkdir -p "$W/ownb"
"$FEED" -n $N -o "$W/ownb" --ldms "host=127.0.0.1,port=$NODE,stream=pmcbatch,channel=msg,batch=65536" \
	>"$W/batch.out" 2>"$W/batch.err"
rc=$?
sed 's/^/# batch: /' "$W/batch.out" "$W/batch.err"
pubb=$(field "$W/batch.out" published)
msgb=$(field "$W/batch.out" messages)
ok $(( rc != 0 || pubb != 2 * N + 1 || msgb < 1 || msgb * 16 > pubb )) \
	"batch=65536: all $pubb records published and acknowledged in $msgb messages"

drained "$onep" "$W/one/blobs" pmcflush
d1=$?
drained "$NODE" "$W/agg/blobs" pmcflush
d2=$?
drained "$NODE" "$W/aggm/blobs" pmcflushm channel=msg
ok $(( d1 != 0 || d2 != 0 || $? != 0 )) "the stores caught up (a flush stream after the rest)"
ldmsd_stop one
ldmsd_stop agg
ldmsd_stop node
one=$W/one/blobs
agg=$W/agg/blobs
ls -l "$one" "$agg" | sed 's/^/# /'

same=0
for e in DAT OFFSET TYPE; do
	cmp -s "$W"/own/blobs/pmcring.$e.* "$one"/pmcring.$e.* || { same=1; echo "# binary $e differs"; }
	cmp -s "$W"/ownj/blobs/pmcring.$e.* "$agg"/pmcjson.$e.* || { same=1; echo "# json $e differs"; }
done
ok $same "stored DAT, OFFSET and TYPE are byte for byte pmcring's own blob sets (binary: ldmsd; JSON: aggregator)"

same=0
for e in DAT OFFSET TYPE; do
	cmp -s "$W"/ownm/blobs/pmcring.$e.* "$W"/aggm/blobs/pmcmsg.$e.* || { same=1; echo "# msg $e differs"; }
done
"$PMCRING" stat "$W"/aggm/blobs/pmcmsg.DAT.* 2>&1 | head -n 1 | sed 's/^/# /'
ok $same "channel=msg: blob_msg_writer's set on the aggregator is byte for byte pmcring's own (binary)"

# the batched set: DAT is pmcring's own byte for byte (the same records,
# in order); one OFFSET/TIMING/TYPE entry per message, each offset one of
# the own set's (a message starts on a record); pmcring stat reads every
# record
python3 - "$W"/ownb/blobs/pmcring.DAT.* "$W"/aggm/blobs/pmcbatch.DAT.* "$msgb" <<'EOF'
import struct, sys
own, agg, msgs = sys.argv[1], sys.argv[2], int(sys.argv[3])
rd = lambda p, e: open(p.replace('.DAT.', '.%s.' % e), 'rb').read()
if rd(own, 'DAT') != rd(agg, 'DAT'):
    sys.exit('# batch: DAT differs from the own set')
offs = lambda p: struct.unpack('<%dQ' % ((len(rd(p, 'OFFSET')) - 8) // 8), rd(p, 'OFFSET')[8:])
o_own, o_agg = set(offs(own)), offs(agg)
if len(o_agg) != msgs or (len(rd(agg, 'TIMING')) - 8) // 16 != msgs or rd(agg, 'TYPE')[8:] != b's' * msgs:
    sys.exit('# batch: %d OFFSET entries for %d messages' % (len(o_agg), msgs))
if list(o_agg) != sorted(o_agg) or not set(o_agg) <= o_own:
    sys.exit('# batch: an OFFSET entry not at a record of the own set')
print('# batch: DAT the own set\'s, %d messages for %d records' % (msgs, len(o_own)))
EOF
r1=$?
"$PMCRING" stat "$W"/aggm/blobs/pmcbatch.DAT.* >"$W/statb" 2>&1
sed 's/^/# /' "$W/statb" | head -n 2
grep -q "format blob, $pubb records" "$W/statb"
ok $(( r1 != 0 || $? != 0 )) "batch=: the aggregator's set is the own DAT, one index entry per message, pmcring stat reads all $pubb records"

tim=$(( ($(stat -c %s "$one"/pmcring.TIMING.*) - 8) / 16 ))
timj=$(( ($(stat -c %s "$agg"/pmcjson.TIMING.*) - 8) / 16 ))
ok $(( tim != pub || timj != pubj )) "TIMING has one entry per message ($tim, $timj)"

python3 - "$one"/pmcring.DAT.* "$agg"/pmcjson.DAT.* <<'EOF'
import json, struct, sys
d = open(sys.argv[1], 'rb').read()
o, last, n = 8, 0, 0
while o < len(d):
    h, _, ts = struct.unpack_from('<IIQ', d, o)
    if h >> 24 != 0xEE or not h & 0xffff:
        sys.exit('# binary: bad record at %d' % o)
    if ts < last:
        sys.exit('# binary: record %d at %d: ts %d before %d' % (n, o, ts, last))
    last, o, n = ts, o + (h & 0xffff), n + 1
last, m = 0, 0
for msg in open(sys.argv[2], 'rb').read()[8:].split(b'\0')[:-1]:
    ts = json.loads(msg)['ts']
    if ts < last:
        sys.exit('# json: message %d: ts %d before %d' % (m, ts, last))
    last, m = ts, m + 1
print('# %d binary records, %d JSON messages, each in timestamp order' % (n, m))
EOF
ok $? "stored records are in timestamp order (binary and JSON)"

"$PMCRING" stat "$one"/pmcring.DAT.* >"$W/stat" 2>&1
sed 's/^/# /' "$W/stat" | head -n 2
grep -q "format blob, $pub records" "$W/stat"
r1=$?
"$PMCRING" stat "$agg"/pmcjson.DAT.* >"$W/statj" 2>&1
sed 's/^/# /' "$W/statj" | head -n 2
grep -q "format blob, $pubj records" "$W/statj"
ok $(( r1 != 0 || $? != 0 )) "pmcring stat reads the stored sets: $pub and $pubj records"

"$PMCRING" report "$one"/pmcring.DAT.* >"$W/report" 2>&1
rc=$?
head -n 3 "$W/report" | sed 's/^/# /'
grep -q "$((2 * N - 2 * N / 16)) samples" "$W/report"
ok $(( rc != 0 || $? != 0 )) "pmcring report reads the stored binary set: every callchain a sample"

if [ -n "$CSV" ]; then
	mkdir -p "$W/csv"
	(cd "$W/csv" && python3 "$CSV" "$agg"/pmcjson.DAT.*) >"$W/csv.log" 2>&1
	rc=$?
	tail -n 5 "$W/csv.log" | sed 's/^/# /'
	rows=$(cat "$W"/csv/*.DAT.* 2>/dev/null | wc -l)
	ok $(( rc != 0 || rows != pubj )) "ldms-csv-from-blobs reads the aggregator's JSON set: $rows rows of $pubj messages"
else
	ok 1 "ldms-csv-from-blobs: not found in $P (src/ldms/src/sampler/blob_stream)"
fi

"$PMCRING" stat "$agg"/pmcslow.DAT.* >"$W/stat" 2>&1
sed 's/^/# /' "$W/stat" | head -n 2
grep -q "format blob, $pubs records.*" "$W/stat" && grep -q "drops [1-9]" "$W/stat"
ok $? "slow node: the aggregator has all $pubs published, drops in the stream"

# -- the stop matrix: the publisher stopped by SIGINT, SIGTERM, -d, SIGKILL --
# 8 feeds at once into one ldmsd, each 2 x 3000 records/s paced, stopped
# after about a second: unbatched binary on the stream channel (each
# message acknowledged) and batch=16384 on the message channel.
stopp=$(port)
ldmsd_start stop "$stopp" "stream_enable
msg_enable
load name=blob_stream_writer
config name=blob_stream_writer path=$W/stop container=blobs stream=stopint stream=stopterm stream=stopdur stream=stopkill timing=1 types=1
load name=blob_msg_writer
config name=blob_msg_writer path=$W/stopm container=blobs message_tag=stopintb message_tag=stoptermb message_tag=stopdurb message_tag=stopkillb timing=1 types=1" ||
	exit 1
declare -A FP FRC
for s in int term dur kill; do
	for b in "" b; do
		spec="host=127.0.0.1,port=$stopp,stream=stop$s$b"
		[ -n "$b" ] && spec="$spec,channel=msg,batch=16384"
		mkdir -p "$W/own-$s$b"
		dur=""
		[ $s = dur ] && dur="-d 1000"
		# shellcheck disable=SC2086
		"$FEED" -n 100000 -r 3000 $dur -o "$W/own-$s$b" --ldms "$spec" \
			>"$W/stop-$s$b.out" 2>"$W/stop-$s$b.err" &
		FP[$s$b]=$!
	done
done
sleep 1
kill -INT "${FP[int]}" "${FP[intb]}"
kill -TERM "${FP[term]}" "${FP[termb]}"
kill -KILL "${FP[kill]}" "${FP[killb]}"
for k in "${!FP[@]}"; do
	wait "${FP[$k]}" 2>/dev/null
	FRC[$k]=$?
done
sleep 0.3	# what the killed ones had sent, read by the daemon
ldmsd_stop stop
# STORED-DAT OWN-DAT KILLED: whole records in timestamp order, and the
# stored DAT pmcring's own (killed: the shorter a prefix of the other);
# prints the number of records
stopcheck()
{
	python3 -c '
import struct, sys
stored, own, killed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
d = open(stored, "rb").read()
o, last, n = 8, 0, 0
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
od = open(own, "rb").read()
m = min(len(d), len(od))
if (d[:m] != od[:m]) if killed else (d != od):
    sys.exit("# %s: not the own DAT" % stored)
print(n)
' "$@"
}
side_bad=0
for s in int term dur kill; do
	bad=0
	msg=""
	for b in "" b; do
		sed "s/^/# stop $s$b: /" "$W/stop-$s$b.out" "$W/stop-$s$b.err"
		if [ -n "$b" ]; then st=$W/stopm/blobs/stop$s$b; else st=$W/stop/blobs/stop$s; fi
		killed=0
		[ $s = kill ] && killed=1
		got=$(stopcheck "$st".DAT.* "$W"/own-$s$b/blobs/pmcring.DAT.* $killed 2>&1) ||
			{ echo "$got"; bad=1; continue; }
		if [ $s = kill ]; then
			{ [ "${FRC[$s$b]}" = 137 ] && [ "$got" -gt 0 ]; } || bad=1
			msg="$msg ${b:+batched: }$got stored, exit ${FRC[$s$b]};"
			continue
		fi
		taken=$(field "$W/stop-$s$b.out" records)
		spub=$(field "$W/stop-$s$b.out" published)
		{ [ "${FRC[$s$b]}" = 0 ] && [ "$spub" = "$taken" ] &&
			[ "$got" = "$spub" ] && [ "$taken" -gt 1000 ] &&
			[ "$taken" -lt 200001 ]; } || bad=1
		# the counts next to the set, as `pmcring stat` shows them
		"$PMCRING" stat "$W/own-$s$b" 2>&1 | grep '^ldms:' >>"$W/sidecars"
		grep -q "^ldms: published $spub .* undelivered 0 .* gone 0 to .*stop$s$b" "$W/sidecars" ||
			side_bad=1
		msg="$msg ${b:+batched: }$spub published = $got stored, exit ${FRC[$s$b]};"
	done
	if [ $s = kill ]; then
		ok $bad "stop by SIGKILL of the publisher:$msg the daemon's records a whole prefix in order (what it had not sent is lost)"
	else
		ok $bad "stop by $s:$msg the stored DAT pmcring's own, in order"
	fi
done

# -- batch= under a daemon's default_quota: at most half of it ----------------
# (ldms_msg_publish() refuses a message larger than the whole quota every
# time: a larger batch would wait for quota for ever, through SIGTERM too,
# hence the KILL)
capp=$(port)
ldmsd_start cap "$capp" "stream_enable
msg_enable
default_quota quota=262144
load name=blob_msg_writer
config name=blob_msg_writer path=$W/cap container=blobs message_tag=pmccap timing=1 types=1" || exit 1
mkdir -p "$W/owncap"
timeout -s KILL 60 "$FEED" -n $N -o "$W/owncap" \
	--ldms "host=127.0.0.1,port=$capp,stream=pmccap,channel=msg,batch=1048576" \
	>"$W/cap.out" 2>"$W/cap.err"
rc=$?
ldmsd_stop cap
sed 's/^/# quota: /' "$W/cap.out" "$W/cap.err"
pubc=$(field "$W/cap.out" published)
grep -q " batch=126976\$" "$W/cap.err" &&
	cmp -s "$W"/owncap/blobs/pmcring.DAT.* "$W"/cap/blobs/pmccap.DAT.*
ok $(( rc != 0 || $? != 0 || pubc != 2 * N + 1 )) \
	"default_quota 262144: batch=1048576 capped at 126976, all $pubc records published and stored, the DAT pmcring's own"

# -- faults: no daemon; the daemon killed mid-run ------------------------------
gone=$(port)
"$FEED" -n 10 --ldms "host=127.0.0.1,port=$gone" >"$W/absent.out" 2>"$W/absent.err"
rc=$?
sed 's/^/# absent: /' "$W/absent.err"
grep -q "no ldmsd at sock:127.0.0.1:$gone" "$W/absent.err"
ok $(( rc != 1 || $? != 0 )) "no daemon at start: a clear error, exit 1"

# pmcring record itself: LDMS and the daemon are checked before the
# module is asked for (this host may have no /dev/pmcring)
env -u LD_LIBRARY_PATH -u LDMS_PREFIX "$PMCRING" record --ldms "port=$gone" -a \
	>"$W/rec1.out" 2>&1
rc=$?
sed 's/^/# record, no LDMS: /' "$W/rec1.out"
grep -q "cannot load LDMS: libldmsd_stream.so.0" "$W/rec1.out"
ok $(( rc != 1 || $? != 0 )) "pmcring record --ldms without LDMS: says which library and how to point at it, exit 1"
"$PMCRING" record --ldms "host=127.0.0.1,port=$gone" -a >"$W/rec2.out" 2>&1
rc=$?
sed 's/^/# record, no daemon: /' "$W/rec2.out"
grep -q "no ldmsd at sock:127.0.0.1:$gone" "$W/rec2.out" && ! grep -q pmcring.ko "$W/rec2.out"
ok $(( rc != 1 || $? != 0 )) "pmcring record --ldms without a daemon: a clear error before recording, exit 1"

solo=$(port)
ldmsd_start solo "$solo" "stream_enable" || exit 1
mkdir -p "$W/kill"
"$FEED" -n 2000000 -o "$W/kill" --ldms "host=127.0.0.1,port=$solo" \
	>"$W/kill.out" 2>"$W/kill.err" &
feed=$!
sleep 0.5
{ kill -9 "$(cat "$W/solo.pid")"; wait "$(cat "$W/solo.pid")"; } 2>/dev/null
wait $feed
rc=$?
sed 's/^/# killed: /' "$W/kill.out" "$W/kill.err"
und=$(field "$W/kill.out" undelivered)
taken=$(field "$W/kill.out" records)
"$PMCRING" stat "$W"/kill/blobs/pmcring.DAT.* >"$W/stat" 2>&1
grep -q "format blob, $taken records" "$W/stat"
whole=$?
ok $(( rc != 1 || und == 0 || whole != 0 )) \
	"daemon killed mid-run: stops, exit 1, $und records counted undelivered, own file whole ($taken records)"
"$PMCRING" stat "$W/kill" 2>&1 | grep '^ldms:' >>"$W/sidecars"
sed 's/^/# sidecar: /' "$W/sidecars"
grep -q "^ldms: published $(field "$W/kill.out" published) .* undelivered $und .* gone 1 " "$W/sidecars"
ok $(( side_bad != 0 || $? != 0 || $(wc -l <"$W/sidecars") != 7 )) \
	"the counts outlive the run: DIR.ldms, shown by pmcring stat DIR (6 stopped runs, the killed daemon's $und undelivered)"

# the same with batch= on the message channel: every record taken is
# either published (in a message sent) or counted undelivered (packed or
# taken after the loss), none in between
solom=$(port)
ldmsd_start solom "$solom" "msg_enable
stream_enable" || exit 1
"$FEED" -n 1000000 -r 500000 --ldms "host=127.0.0.1,port=$solom,stream=pmcbatch,channel=msg,batch=65536" \
	>"$W/killb.out" 2>"$W/killb.err" &
feed=$!
sleep 0.5
{ kill -9 "$(cat "$W/solom.pid")"; wait "$(cat "$W/solom.pid")"; } 2>/dev/null
wait $feed
rc=$?
sed 's/^/# killed, batch: /' "$W/killb.out" "$W/killb.err"
und=$(field "$W/killb.out" undelivered)
pubk=$(field "$W/killb.out" published)
taken=$(field "$W/killb.out" records)
ok $(( rc != 1 || und == 0 || pubk + und != taken )) \
	"daemon killed mid-run, batch=: exit 1, $pubk published + $und undelivered = $taken taken"

# reconnect=: the daemon stopped (SIGTERM, so its store flushes) under a
# paced load and started again on the same port: the publisher connects
# again and goes on; the records taken while it was away are counted
# undelivered, each daemon stores a run of pmcring's own stream, and
# together they hold every record acknowledged (those the first one had
# not answered when it went are counted not acknowledged)
recp=$(port)
recd()
{
	ldmsd_start "rec$1" "$recp" "stream_enable
load name=blob_stream_writer
config name=blob_stream_writer path=$W/rec$1 container=blobs stream=pmcre timing=1 types=1"
}
recd 1 || exit 1
mkdir -p "$W/ownr"
"$FEED" -n 100000 -r 2000 -d 3000 -j -o "$W/ownr" \
	--ldms "host=127.0.0.1,port=$recp,stream=pmcre,type=json,reconnect=200" \
	>"$W/recon.out" 2>"$W/recon.err" &
feed=$!
sleep 1
ldmsd_stop rec1
sleep 0.5
recd 2 || exit 1
wait $feed
rc=$?
sleep 0.3
ldmsd_stop rec2
sed 's/^/# reconnect: /' "$W/recon.out" "$W/recon.err"
taken=$(field "$W/recon.out" records)
pubr=$(field "$W/recon.out" published)
undr=$(field "$W/recon.out" undelivered)
nomr=$(field "$W/recon.out" no_msg)
ackr=$(field "$W/recon.out" acked)
python3 - "$W"/ownr/blobs/pmcring.DAT.* "$W"/rec1/blobs/pmcre.DAT.* "$W"/rec2/blobs/pmcre.DAT.* "$pubr" "$ackr" <<'EOF2'
import sys
msgs = lambda p: open(p, 'rb').read()[8:].split(b'\0')[:-1]
own, d1, d2 = msgs(sys.argv[1]), msgs(sys.argv[2]), msgs(sys.argv[3])
pub, ack = int(sys.argv[4]), int(sys.argv[5])
if not d1 or not d2 or own[:len(d1)] != d1:
    sys.exit('# reconnect: the first daemon\'s set is not a prefix of the own one')
i = own.index(d2[0], len(d1))
# every acknowledged message stored; those the first daemon did not
# answer before it went may or may not be
if own[i:i + len(d2)] != d2 or not ack <= len(d1) + len(d2) <= pub:
    sys.exit('# reconnect: %d + %d stored, %d published, %d acknowledged' %
             (len(d1), len(d2), pub, ack))
print('# reconnect: %d + %d stored of %d published (%d acknowledged), %d of the own %d skipped' %
      (len(d1), len(d2), pub, ack, i - len(d1), len(own)))
EOF2
r1=$?
grep -q "connected again" "$W/recon.err" && grep -q " reconnects 1 " "$W/recon.out"
ok $(( rc != 1 || r1 != 0 || $? != 0 || undr == 0 || pubr + undr + nomr != taken )) \
	"reconnect=200: the daemon stopped and started again: connected again, exit 1, $pubr published + $undr undelivered (+ $nomr PERIODs) = $taken taken, the two daemons' sets runs of the own stream holding every acknowledged record"

# -- a daemon that stops reading, the connection up: two signals stop ------
# ldmsd SIGSTOPped under a paced load: the stream channel's publisher
# waits at window=, the message channel's for send quota (default_quota
# 262144: batch= is capped at half of it); neither wait ends by itself.
# The first SIGINT asks for the stop, which would drain into the daemon:
# both say the stop waits for it; the second stops at once, what was not
# published counted undelivered, the own file whole.
# stalled DAEMON F1 F2 OUT1 OUT2 MSG: after the stop signal(s) sent by the
# caller, wait up to 10 s for feeds F1 and F2 (then give the daemon back,
# so a publisher that still waits ends, and fails), and check each: MSG
# on stderr, published + undelivered = taken, some undelivered, its own
# blob set (OWN DIR OUTn/...) read by pmcring stat.  Sets took (ms since
# t0), r1, r2, bad.
stalled()
{
	local d=$1 f own i
	for i in $(seq 100); do
		kill -0 "$2" 2>/dev/null || kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	took=$(( ($(date +%s%N) - t0) / 1000000 ))
	kill -CONT "$(cat "$W/$d.pid")"
	wait "$2"
	r1=$?
	wait "$3"
	r2=$?
	ldmsd_stop "$d"
	bad=0
	for f in "$4" "$5"; do
		sed "s/^/# $f: /" "$W/$f.out" "$W/$f.err"
		taken=$(field "$W/$f.out" records)
		pubs=$(field "$W/$f.out" published)
		unds=$(field "$W/$f.out" undelivered)
		noms=$(field "$W/$f.out" no_msg)
		grep -q "$6" "$W/$f.err" && [ -n "$taken" ] && [ "${unds:-0}" -gt 0 ] &&
			[ $((pubs + unds + ${noms:-0})) = "$taken" ] ||
			{ echo "# $f: counts or messages wrong"; bad=1; }
		own=$(ls "$W/own-$f"/blobs/pmcring.DAT.*)
		"$PMCRING" stat "$own" >"$W/$f.stat" 2>&1 ||
			{ sed "s/^/# $f: /" "$W/$f.stat"; bad=1; }
	done
}
stp=$(port)
ldmsd_start stall "$stp" "stream_enable
msg_enable
default_quota quota=262144
load name=blob_stream_writer
config name=blob_stream_writer path=$W/stall container=blobs stream=pmcstall timing=1 types=1
load name=blob_msg_writer
config name=blob_msg_writer path=$W/stallm container=blobs message_tag=pmcstallm timing=1 types=1" || exit 1
"$FEED" -n 200000 -r 20000 -p 8 -o "$W/own-stall" \
	--ldms "host=127.0.0.1,port=$stp,stream=pmcstall,type=json,window=64" -j \
	>"$W/stall.out" 2>"$W/stall.err" &
f1=$!
"$FEED" -n 200000 -r 20000 -p 8 -o "$W/own-stallm" \
	--ldms "host=127.0.0.1,port=$stp,stream=pmcstallm,channel=msg,batch=65536" \
	>"$W/stallm.out" 2>"$W/stallm.err" &
f2=$!
sleep 0.5
kill -STOP "$(cat "$W/stall.pid")"
sleep 1
kill -INT $f1 $f2
sleep 2
alive=0
kill -0 $f1 2>/dev/null && kill -0 $f2 2>/dev/null && alive=1
t0=$(date +%s%N)
kill -INT $f1 $f2
stalled stall $f1 $f2 stall stallm "the stop waits for the daemon (at most timeout=5000 ms; signal again: stop at once)"
grep -q "stopped at once: what was not yet published is counted undelivered" "$W/stall.err" &&
	grep -q "stopped at once: what was not yet published is counted undelivered" "$W/stallm.err" || bad=1
ok $(( alive != 1 || r1 != 1 || r2 != 1 || took > 5000 || bad != 0 )) \
	"daemon stopped (SIGSTOP), connection up: the first SIGINT waits and says so, the second stops both channels at once ($took ms, exit $r1 $r2), published + undelivered = taken, own files whole"

# -- the same stalled daemon, one SIGTERM or --duration: timeout= ends it ----
# A batch system sends one SIGTERM (then SIGKILL after its grace); an
# unattended run has --duration.  After the stop a wait that lasts
# timeout= gives the daemon up as the second signal does, and the file is
# ended before any SIGKILL.
ldmsd_start stall2 "$stp" "stream_enable
msg_enable
default_quota quota=262144" || exit 1
"$FEED" -n 200000 -r 20000 -p 8 -o "$W/own-stallt" -j \
	--ldms "host=127.0.0.1,port=$stp,stream=pmcstall,type=json,window=64,timeout=2000" \
	>"$W/stallt.out" 2>"$W/stallt.err" &
f1=$!
"$FEED" -n 200000 -r 20000 -p 8 -d 1500 -o "$W/own-stalld" \
	--ldms "host=127.0.0.1,port=$stp,stream=pmcstallm,channel=msg,batch=65536,timeout=2000" \
	>"$W/stalld.out" 2>"$W/stalld.err" &
f2=$!
sleep 0.5
kill -STOP "$(cat "$W/stall2.pid")"
sleep 1
t0=$(date +%s%N)
kill -TERM $f1
stalled stall2 $f1 $f2 stallt stalld "the daemon took nothing for timeout=2000 ms after the stop: stopped at once"
ok $(( r1 != 1 || r2 != 1 || took > 6000 || bad != 0 )) \
	"daemon stopped, one SIGTERM (stream channel) or -d 1500 (channel=msg): given up timeout=2000 ms after the stop ($took ms after the SIGTERM, exit $r1 $r2), published + undelivered = taken, own files whole"

[ $fail = 0 ] || { echo "# logs:"; tail -n 5 "$W"/*.log "$W"/*.err 2>/dev/null | sed 's/^/# /'; }
exit $fail
