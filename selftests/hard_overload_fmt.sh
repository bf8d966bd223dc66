#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: overload through `pmcring record` in every format.  Every
# online CPU generates HARD_OVERLOAD_FMT_COUNT records (default 20000) into
# 4-page rings, far faster than the consumer writes, once per format
# (pmclog, barman, LDMS blob).  Per CPU and format: generated == written +
# dropped, where written is the generated records in the file (read back
# with `pmcring dump`) and dropped the sequence numbers missing from it;
# each sequence number appears at most once and in order, and the file
# holds every record the consumer drained (the count `pmcring record`
# reports), and the records missing from the file are exactly the ones
# the kernel counted as lost (record's "; L lost", summed over CPUs).
# Drops at the very end are announced too: each CPU whose last generated
# records were dropped has a drop note after the file's last generated
# record (record writes one where no DROPNOTIFY of the ring announced its
# drops), and `pmcring stat` counts the notes the file holds.  The exact
# per-CPU kernel count is checked against the producer page by
# hard_overload.c.
set -u

N=${HARD_OVERLOAD_FMT_COUNT:-20000}
SIZE=64
KSFT_SKIP=4

skip() { echo "# SKIP: $*"; exit $KSFT_SKIP; }

[ -e /dev/pmcring ] || skip "/dev/pmcring missing (module not loaded)"
[ "$(id -u)" = 0 ] || skip "needs root"
command -v pmcring >/dev/null || skip "pmcring not on PATH"

DIR=$(mktemp -d /tmp/hard_overload_fmt.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
CPUS=$(grep -c '^processor' /proc/cpuinfo)

echo "TAP version 13"
echo "1..3"
n=0
fail=0
for fmt in pmclog barman blob; do
	n=$((n + 1))
	out=$DIR/o.$fmt
	if ! pmcring record --format "$fmt" -o "$out" --buffer-pages 4 \
			--generate "$N,$SIZE" >"$DIR/rec.out" 2>"$DIR/rec.err"; then
		sed 's/^/# /' "$DIR/rec.err"
		echo "not ok $n $fmt: pmcring record failed"
		fail=1
		continue
	fi
	target=$out
	[ $fmt = blob ] && target=$(ls "$out"/*/*.DAT.* | head -n 1)
	if ! pmcring dump "$target" >"$DIR/dump.txt" 2>"$DIR/dump.err"; then
		sed 's/^/# /' "$DIR/dump.err" | head -5
		echo "not ok $n $fmt: pmcring dump failed"
		fail=1
		continue
	fi
	# What the consumer drained, from record's last line:
	# "pmcring: R records, B bytes written to ..."
	drained=$(sed -n 's/^pmcring: \([0-9]*\) records, .*/\1/p' "$DIR/rec.err" | tail -n 1)
	# ... "; L lost": the kernel's lost count summed over the CPUs.
	lost=$(sed -n 's/^pmcring: .*; \([0-9]*\) lost$/\1/p' "$DIR/rec.err" | tail -n 1)
	# "duration D s, rate R records/s, drops N": stat's drop notes.
	stat=$(pmcring stat "$target" 2>/dev/null |
	       sed -n 's/.*, drops \([0-9]*\)$/\1/p')
	if awk -v n="$N" -v cpus="$CPUS" -v fmt="$fmt" -v drained="${drained:-}" -v lost="${lost:-}" -v stat="${stat:-}" '
	/ GENERATED / {
		cpu = ""; seq = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^gen_cpu=/) { cpu = $i; sub(/^gen_cpu=/, "", cpu) }
			if ($i ~ /^seq=/) { seq = $i; sub(/^seq=/, "", seq) }
		}
		gen++
		if (cpu == "" || seq == "") { bad = bad "unparsed: " $0 "\n"; next }
		seq += 0
		if (seq >= n) bad = bad sprintf("cpu %s: seq %d >= %d\n", cpu, seq, n)
		if ((cpu in last) && seq <= last[cpu])
			bad = bad sprintf("cpu %s: seq %d after %d\n", cpu, seq, last[cpu])
		last[cpu] = seq
		written[cpu]++
		lastgen = NR
		next
	}
	/ DROPNOTIFY| WARNING / { notes++; notepos[notes] = NR }
	END {
		for (c = 0; c < cpus; c++) {
			w = written[c] + 0
			printf "# %s cpu %d: generated %d = written %d + dropped %d\n",
				fmt, c, n, w, n - w
			tw += w
			if (w == 0)
				bad = bad sprintf("cpu %d: no generated record in the %s file\n", c, fmt)
			if ((c in last) && last[c] != n - 1)
				tails++
		}
		# A ring DROPNOTIFY comes just before a record of its CPU;
		# drops after a CPU last record get one at the end.
		for (i = 1; i <= notes; i++)
			if (notepos[i] > lastgen)
				endnotes++
		printf "# %s: %d CPUs dropped their last records, %d drop notes after the last record\n",
			fmt, tails, endnotes
		if (tails != endnotes)
			bad = bad sprintf("%d CPUs dropped their last records, %d drop notes at the end\n",
					  tails, endnotes)
		printf "# %s: generated %d, written %d, dropped %d, drop notes %d, drained %s, kernel lost %s\n",
			fmt, n * cpus, tw, n * cpus - tw, notes, drained, lost
		# The kernel counted exactly the records missing from the file.
		if (lost != "" && n * cpus - tw != lost)
			bad = bad sprintf("%d generated records missing, the kernel lost %s\n",
					  n * cpus - tw, lost)
		if (drained != "" && fmt != "barman" && gen + notes != drained)
			bad = bad sprintf("file holds %d records, the consumer drained %s\n",
					  gen + notes, drained)
		if (stat != "" && stat != notes)
			bad = bad sprintf("pmcring stat counts %s drops, the file holds %d drop notes\n",
					  stat, notes)
		if (bad != "") { printf "%s", bad; exit 1 }
	}' "$DIR/dump.txt" >"$DIR/check.txt"; then
		sed 's/^/#/; s/^##/#/' "$DIR/check.txt"
		echo "ok $n $fmt: generated = written + dropped on every CPU"
	else
		sed 's/^/#/; s/^##/#/' "$DIR/check.txt" | head -20
		echo "not ok $n $fmt"
		fail=1
	fi
done
exit $fail
