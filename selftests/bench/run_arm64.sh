#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench ARCH=arm64`: B1 (pmcring's producer against the ftrace ring
# buffer) and the peers behind one tracepoint (tpbench's B1 rows: off,
# empty, minring, pmcring, perf's mmap ring, ftrace; and pmcring's B2
# lossless rate) in the arm64 VM (selftests/vmrun --arch arm64,
# guest side selftests/bench/guest.sh with ONLY=arm64).  Ratios only: the
# guest is a TCG-emulated CPU, whose ns say nothing of an arm64 machine's;
# both sides of a ratio ran in the same VM, interleaved.  Prints the tables
# (also out/bench-arm64.txt), writes out/bench-arm64.json and the SVGs
# out/bench-arm64.svg, out/bench-arm64-peers.svg.
#
# Not here, and why: B2's drain, B3, B4 and B5 (the x86 run has them; on
# the arm64 VM they measure TCG, not the design), B2 of the perf and
# trace-cmd peers (this host's binaries are amd64), the BPF peer (no libbpf for
# arm64 is unpacked: tpbench is built without it), the native rows.
#
# Environment: KVER (kernel series, default 6.1), BENCH_QUICK=1 (tiny sizes),
# BENCH_CPUS / BENCH_MEM (VM, default 2 / 2048), BENCH_TIMEOUT (VM
# seconds, default 1800), VM_TCG_THREAD (default from selftests/lib/tcg_thread,
# as run.sh).
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$TOP/build
AB=$BUILD/arm64
BDIR=$AB/bench
SHARE=$BDIR/share
OUT=$TOP/out
KVER=${KVER:-6.1}
CPUS=${BENCH_CPUS:-2}
MEM=${BENCH_MEM:-2048}
CROSS_COMPILE=${CROSS_COMPILE:-aarch64-linux-gnu-}

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	SIZES=(B1_PAGES=256 B1_MAX=5000 B1_REPS=3 TP_N=2000 TP_PAGES=256
	       TP_REPS=1 "TP2_RATES=10000 40000")
else
	SIZES=(B1_PAGES=4096 B1_MAX=100000 B1_REPS=5 TP_N=20000
	       TP_PAGES=2048 TP_REPS=3 TP2_PAGES=256 TP2_SECS=1
	       "TP2_RATES=10000 20000 40000 80000 160000")
fi

log() { echo "bench-arm64: $*" >&2; }

# -- build (make ARCH=arm64 built the module, the bench module, libpmcring) --
KO=$AB/src/kmod/bench/pmcring_ftrace_bench.ko
LIB=$AB/user/static/libpmcring.a
[ -r "$KO" ] && [ -r "$LIB" ] && [ -x "$AB/user/static/pmcring" ] ||
	{ log "no arm64 build (make ARCH=arm64 KVER=$KVER)"; exit 1; }
log "building pmcbench and tpbench for arm64 (no BPF peer)"
make -s -C "$TOP/selftests/bench" O="$BDIR" CC="${CROSS_COMPILE}gcc" \
	LIBPMCRING="$LIB" TP_BPF_HAVE= >/dev/null

rm -rf "$SHARE"
mkdir -p "$SHARE" "$OUT"
cp "$BDIR/pmcbench" "$BDIR/tpbench" "$TOP/selftests/bench/guest.sh" "$KO" \
	"$SHARE/"

# -- VM ------------------------------------------------------------------------
: >"$SHARE/results.jsonl"
envs=(--env ONLY=arm64)
for kv in "${SIZES[@]}"; do envs+=(--env "$kv"); done
# A host thread per vCPU where QEMU allows it (selftests/lib/tcg_thread:
# QEMU >= 8.1), as run.sh's x86 VM: B2's generator and consumer then do
# not share one emulated CPU thread.  On QEMU 7.2 one thread, as for
# every caller that flips kernel text often.  The ratios pair figures of
# the same run either way.
VM_TCG_THREAD=$(TCG_OLD=single "$TOP/selftests/lib/tcg_thread" \
	"${QEMU:-qemu-system-aarch64}" "$KVER")
export VM_TCG_THREAD
log "VM: arm64, $CPUS vCPUs, $MEM MiB, kernel $KVER, TCG ($VM_TCG_THREAD)"
set +e
"$TOP/selftests/vmrun" --arch arm64 --kernel "$KVER" --cpus "$CPUS" \
	--mem "$MEM" --share "$SHARE" --timeout "${BENCH_TIMEOUT:-1800}" \
	"${envs[@]}" -- sh "$SHARE/guest.sh" "$SHARE" 2>&1 |
	tee "$BDIR/vm.log" | grep -E '^(# bench|B1|  size| size|tp )' >&2
vm_rc=${PIPESTATUS[0]}
set -e
[ "$vm_rc" = 0 ] || log "VM run failed (exit $vm_rc), see $BDIR/vm.log"

# -- report --------------------------------------------------------------------
host_model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)
{
	echo "{\"bench\": \"host\", \"arch\": \"arm64\", \"host_cpu_model\": \"$host_model\", \"host_cpus\": $(nproc), \"host_kernel\": \"$(uname -r)\", \"qemu\": \"$(qemu-system-aarch64 --version | head -n 1)\", \"accel\": \"tcg\", \"tcg_thread\": \"$VM_TCG_THREAD\", \"vm_cpus\": $CPUS, \"vm_mem_mb\": $MEM, \"quick\": ${BENCH_QUICK:-0}, \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"commit\": \"$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)\", \"settings\": \"${SIZES[*]}\"}"
	cat "$SHARE/results.jsonl"
} >"$BDIR/all.jsonl"
{
	echo "make bench ARCH=arm64: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown), kernel $KVER arm64 under $(qemu-system-aarch64 --version | head -n 1) TCG on $host_model ($(nproc) CPUs)"
	echo "Ratios only: ns are of an emulated CPU."
	echo
	# report.awk's tables, less what this run has no rows for (B2's
	# drain and sweep, B3) and the BPF peer it has no figures of
	awk -v native=/dev/null -v drain= -v jsonout="$OUT/bench-arm64.json" \
		-v svgout="$OUT/bench-arm64.svg" \
		-v svgpeers="$OUT/bench-arm64-peers.svg" \
		-f "$TOP/selftests/bench/report.awk" "$BDIR/all.jsonl" |
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		     /^(B2 end-to-end drain|B2 rate sweep|B3 overhead)/ { next }
		     { print }' |
		sed -E -e 's/^( +[0-9]+ +(task|irq) .* - +[0-9.]+ +[0-9.]+ +)0\.000( +[0-9.]+)$/\1    -\3/' \
		    -e 's/; <= the BPF ring buffer [a-z]+;/;/'
	echo "(no BPF peer: no libbpf for arm64 here; perf's B1 row is its"
	echo "mmap ring opened by tpbench itself, perf's and trace-cmd's B2 rows need"
	echo "arm64 binaries of them)"
} | tee "$OUT/bench-arm64.txt"
log "wrote $OUT/bench-arm64.txt, $OUT/bench-arm64.json and the SVGs"
exit "$vm_rc"
