#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of ldms_vm.sh, run by busybox sh in the test VM (vmrun's
# initramfs, the module loaded): the dynamically linked `pmcring record -a`
# publishing with --ldms to a node ldmsd on the VM's loopback, an
# aggregator ldmsd subscribed to the node storing with blob_stream_writer
# and blob_msg_writer, under pmcring-workload.  It only runs things and
# writes what happened into OUT on the 9p share; ldms_vm.sh checks it on
# the host once the VM is gone (python3 and the host's pmcring are there,
# not here).
#
# Usage: ldms_vm_guest.sh OUT, from the directory ldms_vm.sh prepared:
#   lib/   the host's loader and the shared libraries of everything below
#   ldms/  sbin/ldmsd, sbin/ldmsctl, lib/ and lib/ovis-ldms/ of LDMS
#   bin/   the dynamic pmcring and pmcring-ldms-feed
#
# The stop matrix, all at once under one workload: for each stop (SIGINT,
# SIGTERM, --duration, SIGKILL) one recording on the stream channel, one
# JSON message per record (type=json, acknowledged one by one), and one
# on the message channel with whole binary records packed per message
# (channel=msg,batch=16384); each also writes its own blob set (-o DIR,
# JSON or binary to match) for the host to compare.  And `-o none` (no
# file at all, stream channel), and the static pmcring's own recording
# (-o vm.pmclog) for ldms_cluster.sh vm.
V=$(cd "$(dirname "$0")" && pwd)
OUT=$1
# Everything is written to the guest's tmpfs and copied to OUT at the end,
# so neither the stores' small stdio writes nor the recordings' wait on a
# 9p round trip through QEMU each.
W=/tmp/ldms-vm
NODE=10411
AGG=10412
# the SIGINT/SIGTERM/SIGKILL moment and --duration, seconds
STOP_AT=${LDMS_VM_STOP_AT:-4}

# The binaries' ELF interpreter (/lib64/ld-linux-x86-64.so.2): the
# initramfs root is this VM's own tmpfs, so the host's loader is linked
# there and every dynamic binary runs as it would on the host (its own
# /proc/self/exe, argv[0] and pid; the loader finds the rest on
# LD_LIBRARY_PATH, and so do libldms' dlopen()s).
interp=$(cat "$V/interp")
mkdir -p "$(dirname "$interp")"
ln -sf "$V/lib/$(basename "$interp")" "$interp"
export LD_LIBRARY_PATH="$V/ldms/lib:$V/ldms/lib/ovis-ldms:$V/lib"
export LDMSD_PLUGIN_LIBPATH="$V/ldms/lib/ovis-ldms" ZAP_LIBPATH="$V/ldms/lib/ovis-ldms"
PMC=$V/bin/pmcring
FEED=$V/bin/pmcring-ldms-feed

rm -rf "$OUT" "$W"
mkdir -p "$OUT" "$W"
cd "$W" || exit 1
log() { echo "# guest: $*"; }

# ldmsd NAME PORT CONF: in the foreground (-F), pid in NAME.pid
ldmsd_start()
{
	printf '%s\n' "$3" >"$W/$1.conf"
	"$V/ldms/sbin/ldmsd" -F -x "sock:$2:127.0.0.1" -c "$W/$1.conf" \
		-l "$W/$1.log" -v ERROR &
	echo $! >"$W/$1.pid"
	i=0
	until netstat -ltn 2>/dev/null | grep -q "127.0.0.1:$2 "; do
		i=$((i + 1))
		if [ $i -ge 200 ]; then
			log "ldmsd $1 does not listen on $2"
			cat "$W/$1.log"
			return 1
		fi
		sleep 0.1
	done
}

STREAMS="vint vterm vdur vkill vnone vflush"
TAGS="vintb vtermb vdurb vkillb vflushm"
subs=
for s in $STREAMS; do subs="$subs
prdcr_subscribe regex=.* stream=$s"; done
for s in $TAGS; do subs="$subs
prdcr_subscribe regex=.* message_tag=$s"; done

t0=$(date +%s)
# the node with the send quota a site gives it (Documentation/ldms.rst,
# A cluster): a publisher has at most 4 MiB in flight on the message channel
ldmsd_start node $NODE "stream_enable
msg_enable
default_quota quota=4194304" || exit 1
ldmsd_start agg $AGG "stream_enable
msg_enable
load name=blob_stream_writer
config name=blob_stream_writer path=$W/agg container=blobs $(for s in $STREAMS; do printf 'stream=%s ' "$s"; done)timing=1 types=1
load name=blob_msg_writer
config name=blob_msg_writer path=$W/aggm container=blobs $(for s in $TAGS; do printf 'message_tag=%s ' "$s"; done)timing=1 types=1
prdcr_add name=node host=127.0.0.1 type=active xprt=sock port=$NODE reconnect=200000$subs
prdcr_start name=node" || exit 1
# the aggregator's subscriptions reached the node (stream channel; the
# message channel's are made on the same connection with them)
i=0
until [ "$(echo stream_client_dump | "$V/ldms/sbin/ldmsctl" -x sock \
		-h 127.0.0.1 -p $NODE -a none 2>/dev/null |
		grep -cE '^(vint|vterm|vdur|vkill|vnone|vflush) ')" = 6 ]; do
	i=$((i + 1))
	if [ $i -ge 100 ]; then
		log "the aggregator did not subscribe to the node"
		cat "$W/agg.log"
		exit 1
	fi
	sleep 0.2
done
log "node and aggregator up in $(( $(date +%s) - t0 )) s"

SPEC="host=127.0.0.1,port=$NODE,timeout=180000"
# rec NAME ARGS...: `pmcring record -a` in the background
rec()
{
	n=$1
	shift
	"$PMC" record -a --buffer-pages 16 --staging-mb 0 "$@" >"$W/rec-$n.out" 2>"$W/rec-$n.err" &
	echo $! >"$W/rec-$n.pid"
}
# The stream channel's sessions (one JSON message per record, each
# acknowledged) leave out context switches and sample at 500 Hz.  A
# system-wide recording publishing on the machine it records feeds
# itself: every message wakes ldmsd and the publisher's thread, every
# wakeup is a context switch record in every session, each one more
# message; the stream then runs at whatever the VM can do.  And LDMS's
# stream delivery keeps every JSON message it parses for
# blob_stream_writer (ldmsd_stream_deliver() frees its `entity`
# argument, never the document it parsed: about 25 KB a message), so
# the aggregator's memory grows with the number of JSON messages; with
# context switches it filled the VM's 2 GB.  The message channel's
# batched sessions record everything.
JTYPES="-F 50 --types callchain,procexec,procexit,procfork,map_in,map_out,thr_create,thr_exit,proc_create"
# One stop at a time, each on both channels at once, under the workload.
# (All nine recordings at once starved the VM's two vCPUs: every message
# wakes ldmsd, every wakeup is a context switch every session records
# and publishes; stops then took a minute.)
for s in int term dur kill; do
	t2=$(date +%s)
	names="$s ${s}b"
	d=-q
	[ $s = dur ] && d="-q --duration $STOP_AT"
	# shellcheck disable=SC2086
	rec $s $d $JTYPES --format blob --blob-json -o "$W/own-$s" \
		--ldms "$SPEC,stream=v$s,type=json"
	# shellcheck disable=SC2086
	rec ${s}b $d --format blob -o "$W/own-${s}b" \
		--ldms "$SPEC,stream=v${s}b,channel=msg,batch=16384"
	if [ $s = int ]; then
		# no file at all (not quiet: the counts are on stderr only)
		rec none $JTYPES -o none --ldms "$SPEC,stream=vnone,type=json"
		names="$names none"
	fi
	# each recording under way (its session open: LDMS loaded and
	# connected before that), then STOP_AT seconds of it: on a loaded
	# host the VM starts them slowly
	for n in $names; do
		i=0
		until ls -l "/proc/$(cat "$W/rec-$n.pid")/fd" 2>/dev/null |
				grep -q /dev/pmcring; do
			i=$((i + 1))
			[ $i -ge 600 ] && { log "$n: no session after 60 s"; break; }
			sleep 0.1
		done
	done
	log "$s: recording after $(( $(date +%s) - t2 )) s"
	if [ $s = int ]; then
		# the static pmcring's recording, replayed by ldms_cluster.sh vm
		pmcring record -a -q --duration 3 -o "$W/vm.pmclog" >"$W/static.log" 2>&1 &
		st=$!
	fi
	pmcring-workload -d $((STOP_AT + 1)) >>"$W/workload.log" 2>&1 &
	wl=$!
	sleep "$STOP_AT"
	t1=$(date +%s)
	for n in $names; do
		case $s in
		int) kill -INT "$(cat "$W/rec-$n.pid")" ;;
		term) kill -TERM "$(cat "$W/rec-$n.pid")" ;;
		kill) kill -KILL "$(cat "$W/rec-$n.pid")" ;;
		esac
	done
	for n in $names; do
		wait "$(cat "$W/rec-$n.pid")"
		echo $? >"$W/rec-$n.rc"
		log "$n: exit $(cat "$W/rec-$n.rc"), $(( $(date +%s) - t1 )) s after the stop"
	done
	if [ $s = int ]; then
		wait $st
		echo $? >"$W/static.rc"
	fi
	wait $wl
done
sleep 0.5	# what the killed ones had sent, read by the node

# The aggregator has everything the node forwarded before these: a flush
# stream on each channel, published after the rest, until the store's
# DAT is past one stdio buffer (blob_stream_writer/blob_msg_writer flush
# only then or at exit).
flushed()
{
	# (its exit status only says whether it saw every acknowledgement
	# within timeout=; the store's file is what tells)
	"$FEED" -q -n 200 -j --ldms "host=127.0.0.1,port=$NODE,stream=$2,type=json,timeout=180000$3" ||
		log "$1: the flush feed exited $?"
	i=0
	until [ "$(stat -c %s "$W/$1/blobs/$2".DAT.* 2>/dev/null || echo 0)" -ge 8192 ]; do
		i=$((i + 1))
		[ $i -ge 1800 ] && { log "$1: the store did not catch up in 180 s"; return 1; }
		sleep 0.1
	done
}
flushed agg vflush "" && flushed aggm vflushm ,channel=msg
echo $? >"$W/flush.rc"
for d in agg node; do
	log "ldmsd $d: $(grep -h VmHWM "/proc/$(cat "$W/$d.pid")/status" | tr -s ' \t' ' ')"
	kill -TERM "$(cat "$W/$d.pid")"
	wait "$(cat "$W/$d.pid")"
	echo $? >"$W/$d.rc"
done
# the kernel symbols of every recording but the static one's: 4 MB each,
# not needed on the host
rm -f "$W"/own-*/kallsyms
cp -a "$W/." "$OUT/"
log "done in $(( $(date +%s) - t0 )) s"
echo done >"$OUT/done"
