#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: every pmcring benchmark in one run.
#
#   B1-B4 in one QEMU VM (selftests/vmrun, guest side selftests/bench/guest.sh
#   driving selftests/bench/pmcbench), the native libpmcring benchmark on this
#   host (make -C user bench) and the native drain of pmcring record's
#   consumer against a raw write (user/bench/drain, tmpfs and ext4 on a
#   loop device) and io_uring against pwritev() alone (user/bench/write).  Prints the tables, writes out/bench.json,
#   out/bench.svg (ns/record by record size, pmcring and ftrace) and
#   out/bench-peers.svg (ns/event by record size, every tracepoint peer).
#
# Environment: KVER (kernel series, default 6.1), BENCH_QUICK=1 (tiny sizes,
# a minute), BENCH_CPUS / BENCH_MEM (VM, default 2 / 2048), BENCH_NO_PERF=1
# (skip perf in B3), BENCH_NO_VM=1 (native only), BENCH_TIMEOUT (VM seconds),
# BENCH_ONLY=b2|b5|tp|b3 (B2's drain rows alone; B5 alone; the tracepoint
# peers of B1/B2 alone; B3 alone, without the native benchmarks, B3_REPS
# repetitions, default 3, B3_PROFILE=1 adds its profiles, B3_HZ and
# B3_VARIANTS as guest.sh says, B3_ALT_MODULE another pmcring.ko for its
# alt:TOOL variants),
# BENCH_APPEND (guest kernel parameters, default tsc=reliable), PROFILE=0
# (no perf profiles), VM_TCG_THREAD (default from selftests/lib/tcg_thread:
# multi on QEMU >= 8.1, single on 7.2; see below).
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$TOP/build
BDIR=$BUILD/bench
SHARE=$BDIR/share
OUT=$TOP/out
KVER=${KVER:-6.1}
KREL=${KREL:-$("$TOP/selftests/lib/kver" "$KVER")}
KDIR=${KDIR:-/usr/src/linux-headers-$KREL}
CPUS=${BENCH_CPUS:-2}
MEM=${BENCH_MEM:-2048}

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	SIZES=(B1_PAGES=256 B1_MAX=5000 B1_REPS=3 B2_N=20000 B2_REPS=1
	       B3_PIPE=2000 B3_FORK=30 B3_REPS=1 B4_N=2000 "SWEEP=1 16"
	       B5_N=20000 B5_PAGES=512 B5_REPS=1 "B5_RATES=5000 20000" B5_SECS=1
	       TP_N=2000 TP_PAGES=256 TP_REPS=1 "TP2_RATES=10000 40000")
else
	SIZES=(B1_PAGES=4096 B1_MAX=100000 B1_REPS=9 B2_N=200000 B2_REPS=3
	       B3_PIPE=3000 B3_FORK=100 "B3_REPS=${B3_REPS:-3}" B4_N=20000
	       "SWEEP=1 2 4 8 16" TP_N=20000 TP_PAGES=2048 TP_REPS=3
	       TP2_PAGES=256 TP2_SECS=1
	       "TP2_RATES=10000 20000 40000 80000 160000 320000 640000")
fi

log() { echo "bench: $*" >&2; }

# -- build --------------------------------------------------------------------
log "building the bench module for $KREL, pmcbench and tpbench"
[ -d "$KDIR" ] || { log "no kernel headers $KDIR (make deps KVER=$KVER)"; exit 1; }
make -s -C "$TOP/kmod/bench" KDIR="$KDIR" >/dev/null
make -s -C "$TOP/selftests/bench" O="$BDIR" >/dev/null
[ -x "$BUILD/user/static/pmcring" ] || make -s -C "$TOP/user" static

rm -rf "$SHARE"
mkdir -p "$SHARE" "$OUT"
cp "$BDIR/pmcbench" "$BDIR/tpbench" "$TOP/selftests/bench/guest.sh" "$SHARE/"
cp "$TOP/kmod/bench/pmcring_ftrace_bench.ko" "$SHARE/"
# B3_ALT_MODULE=PATH: another build of pmcring.ko, B3's alt:TOOL variants
[ -n "${B3_ALT_MODULE:-}" ] && cp "$B3_ALT_MODULE" "$SHARE/pmcring-alt.ko"
# B3_ALT_PMCRING=PATH: another build of the static pmcring, B3's pmcring-bin
[ -n "${B3_ALT_PMCRING:-}" ] && cp "$B3_ALT_PMCRING" "$SHARE/pmcring-alt"

# perf (B3's reference, the perf peer of B1/B2) and trace-cmd (B2's ftrace
# peer): the host's binaries with their ldd closure and loader, run in the
# guest through the loader (no installation there, nothing added to every
# test VM's initramfs).  copy_dyn NAME: $SHARE/NAME/{NAME,lib/,ld.so}.
copy_dyn()
{
	bin=$(command -v "$1") || return 1
	"$bin" --version >/dev/null 2>&1 || "$bin" --help >/dev/null 2>&1 ||
		[ "$1" = trace-cmd ] || return 1
	mkdir -p "$SHARE/$1/lib"
	cp "$(readlink -f "$bin")" "$SHARE/$1/$1"
	ldd "$bin" | awk '/=> \// { print $3 }' | while read -r l; do
		cp -L "$l" "$SHARE/$1/lib/"
	done
	cp -L "$(ldd "$bin" | awk '/ld-linux/ { print $1 }')" "$SHARE/$1/ld.so"
}
if [ "${BENCH_NO_PERF:-0}" != 1 ] && copy_dyn perf; then
	PERF_VERSION=$(perf --version)
else
	log "no perf (apt-get install linux-perf): B3 without the perf reference, B1/B2 without the perf peer"
	PERF_VERSION=none
fi
if copy_dyn trace-cmd; then
	TRACECMD_VERSION=$(trace-cmd --version 2>/dev/null | sed -n 's/^trace-cmd version \([^ ]*\).*/\1/p' | head -n 1)
else
	log "no trace-cmd (apt-get install trace-cmd): B2 without the trace-cmd peer"
	TRACECMD_VERSION=none
fi

# -- native -------------------------------------------------------------------
if [ "${BENCH_ONLY:-}" = b3 ]; then
	BENCH_NO_NATIVE=1
	: >"$BDIR/native.json"
	: >"$BDIR/drain.jsonl"
	: >"$BDIR/write.jsonl"
fi
if [ "${BENCH_NO_NATIVE:-0}" != 1 ]; then
log "native: make -C user bench"
make -s -C "$TOP/user" bench BENCH_JSON="$BDIR/native.json" | tee "$BDIR/native.txt"

# The native drain (user/bench/drain): pmcring record's consumer against a
# raw write of the same bytes, pmclog, barman and blob, CALLCHAINs of 64
# and 256 bytes, io_uring, pwritev and the automatic choice; on tmpfs and
# on ext4 on a loop device (root: losetup, mkfs.ext4; the image is a
# sparse file in build/bench, gone after).  JSON lines in drain.jsonl.
DB=$BUILD/user/bench/pmcring-drain-bench
if [ "${BENCH_QUICK:-0}" = 1 ]; then DRAIN=(-n 20000 -R 1); else DRAIN=(-n 200000 -R 5); fi
make -s -C "$TOP/user" "$DB"
: >"$BDIR/drain.jsonl"
log "native: drain bench on tmpfs"
"$DB" "${DRAIN[@]}" -m uring,sync,auto -d /dev/shm -l tmpfs \
	-j "$BDIR/drain.jsonl" | tee "$BDIR/drain.txt"
# io_uring against pwritev() alone (user/bench/write): batches of 4 KiB
# iovecs, buffered and O_DIRECT, on tmpfs here and on ext4 below.
WB=$BUILD/user/bench/pmcring-write-bench
if [ "${BENCH_QUICK:-0}" = 1 ]; then WRITE=(-t 16777216 -R 1); else WRITE=(-t 268435456 -R 7); fi
make -s -C "$TOP/user" "$WB"
: >"$BDIR/write.jsonl"
log "native: write bench on tmpfs"
"$WB" "${WRITE[@]}" -q 1,2,4,8 -d /dev/shm -l tmpfs -j "$BDIR/write.jsonl" |
	tee "$BDIR/write.txt"
ext4_img=$BDIR/drain-ext4.img
ext4_mnt=$BDIR/drain-ext4
ext4_dev=
drain_ext4_done()
{
	mountpoint -q "$ext4_mnt" && umount "$ext4_mnt"
	[ -n "$ext4_dev" ] && losetup -d "$ext4_dev"
	rm -f "$ext4_img"
	rmdir "$ext4_mnt" 2>/dev/null || true
	ext4_dev=
}
# ext4_rows LABEL [LOSETUP_OPTION]: the drain and write benches on a 2 GiB
# ext4 on a loop device over a sparse file in build/bench.  ext4-loop: the
# loop device's own writes go through the host's page cache, so nothing
# the consumer writes waits for a disk; ext4-dio-loop (--direct-io=on):
# the loop device writes its backing file with O_DIRECT, so an O_DIRECT
# write of the consumer waits for this host's disk (/dev/vda here), the
# case where several io_uring writes in flight can overlap (-q: 1, 2, 4
# and 8 in flight).
ext4_rows()
{
	label=$1
	shift
	mkdir -p "$ext4_mnt"
	truncate -s 2G "$ext4_img"
	if ext4_dev=$(losetup -f --show "$@" "$ext4_img") &&
	   mkfs.ext4 -q -F "$ext4_dev" && mount "$ext4_dev" "$ext4_mnt"; then
		log "native: drain bench on ext4 ($ext4_dev $*), buffered"
		"$DB" "${DRAIN[@]}" -m uring,sync,auto,uring-dio,sync-dio \
			-d "$ext4_mnt" \
			-l "$label" -j "$BDIR/drain.jsonl" | tee -a "$BDIR/drain.txt"
		log "native: write bench on ext4 ($ext4_dev $*)"
		"$WB" "${WRITE[@]}" -q 1,2,4,8 -d "$ext4_mnt" -l "$label" \
			-j "$BDIR/write.jsonl" | tee -a "$BDIR/write.txt"
	else
		log "native: ext4 on a loop device ($*) failed: no $label rows"
	fi
	drain_ext4_done
}
if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null ||
   ! command -v mkfs.ext4 >/dev/null; then
	log "native: no ext4 rows (needs root, losetup and mkfs.ext4)"
else
	trap drain_ext4_done EXIT
	ext4_rows ext4-loop
	ext4_rows ext4-dio-loop --direct-io=on
	trap - EXIT
fi
fi

# -- VM -----------------------------------------------------------------------
: >"$SHARE/results.jsonl"
vm_rc=0
if [ "${BENCH_NO_VM:-0}" != 1 ]; then
	envs=()
	for kv in "${SIZES[@]}"; do envs+=(--env "$kv"); done
	[ -n "${PROFILE:-}" ] && envs+=(--env "PROFILE=$PROFILE")
	[ -n "${BENCH_ONLY:-}" ] && envs+=(--env "ONLY=$BENCH_ONLY")
	for kv in B3_PROFILE B3_HZ B3_VARIANTS B3_CPU_TOOLS; do
		[ -n "${!kv:-}" ] && envs+=(--env "$kv=${!kv}")
	done
	# Trust the TSC as real hardware does: without it a TCG guest keeps
	# time with the HPET and every clock read is an emulated MMIO access.
	# B1 also runs once with the hpet clocksource to show that cost.
	export VM_APPEND="${BENCH_APPEND-tsc=reliable} ${VM_APPEND:-}"
	# A host thread per vCPU on QEMU >= 8.1, so B2's producer and consumer
	# run in parallel as on real hardware.  On QEMU 7.2 one TCG thread for
	# both vCPUs (TCG_OLD=single): there multi-threaded TCG hung tpbench
	# in a soft lockup on 6.1 (CPU 0's timers stopped), the stale-
	# translation hang vmrun describes.  VM_TCG_THREAD overrides.
	export TCG_OLD=single
	VM_TCG_THREAD=$("$TOP/selftests/lib/tcg_thread" "${QEMU:-qemu-system-x86_64}" "$KREL")
	export VM_TCG_THREAD
	log "TCG thread=$VM_TCG_THREAD ($(${QEMU:-qemu-system-x86_64} --version | head -n 1))"
	log "VM: $CPUS vCPUs, $MEM MiB, kernel $KREL (TCG unless VM_ACCEL=kvm), append '$VM_APPEND'"
	set +e
	"$TOP/selftests/vmrun" --kernel "$KVER" --cpus "$CPUS" --mem "$MEM" \
		--share "$SHARE" --timeout "${BENCH_TIMEOUT:-1800}" "${envs[@]}" -- \
		sh "$SHARE/guest.sh" "$SHARE" 2>&1 | tee "$BDIR/vm.log" |
		grep -E '^(# bench|B1|B2|B3|B4|  size| size| +[0-9]+ +(1|all|task|irq) |tp )' >&2
	vm_rc=${PIPESTATUS[0]}
	set -e
	[ "$vm_rc" = 0 ] || log "VM run failed (exit $vm_rc), see $BDIR/vm.log"
fi
cp "$SHARE/results.jsonl" "$BDIR/results.jsonl"
for side in pmcring ftrace b2 b2c tp_pmcring tp_minring b3; do
	f=$SHARE/profile_$side.txt
	[ -s "$f" ] || continue
	cp "$f" "$OUT/bench-profile-$side.txt"
	echo
	case $side in
	b2) echo "B2 profile, pmcring record (io_uring) with the generator (perf cpu-clock, -a):" ;;
	b2c) echo "B2 profile, the consumer alone (pmcbench lat -F: merge + writev), its process only:" ;;
	b3) echo "B3 profile, pmcring record -F 10000 of the pipe workload (perf cpu-clock, -a), by command, then by command and symbol:" ;;
	tp_*) echo "B1 tracepoint profile, ${side#tp_} probe alone, 64-byte events (perf cpu-clock, CPU 0, idle left out):" ;;
	*) echo "B1 profile, $side side alone, 64-byte records (perf cpu-clock, -a):" ;;
	esac
	head -n 12 "$f"
done

# -- report -------------------------------------------------------------------
host_model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)
{
	echo "{\"bench\": \"host\", \"host_cpu_model\": \"$host_model\", \"host_cpus\": $(nproc), \"host_kernel\": \"$(uname -r)\", \"host_mem_kb\": $(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo), \"accel\": \"${VM_ACCEL:-tcg}\", \"tcg_thread\": \"${VM_TCG_THREAD:-single}\", \"qemu\": \"$(${QEMU:-qemu-system-x86_64} --version 2>/dev/null | sed -n '1s/.*version \([0-9.]*\).*/\1/p')\", \"vm_cpus\": $CPUS, \"vm_mem_mb\": $MEM, \"perf\": \"$PERF_VERSION\", \"trace_cmd\": \"${TRACECMD_VERSION:-none}\", \"quick\": ${BENCH_QUICK:-0}, \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"commit\": \"$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)\", \"settings\": \"${SIZES[*]}\"}"
	cat "$BDIR/results.jsonl"
} >"$BDIR/all.jsonl"

awk -v native="$BDIR/native.json" -v drain="$BDIR/drain.jsonl" \
	-v write="$BDIR/write.jsonl" \
	-v jsonout="$OUT/bench.json" \
	-v svgout="$OUT/bench.svg" -v svgpeers="$OUT/bench-peers.svg" \
	-f "$TOP/selftests/bench/report.awk" "$BDIR/all.jsonl"
log "wrote $OUT/bench.json, $OUT/bench.svg and $OUT/bench-peers.svg"
exit "$vm_rc"
