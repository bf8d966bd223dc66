#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: io_uring and --no-uring consumers of `pmcring record` write
# the same records for the same input: PMCRING_IOC_GENERATE (the hidden
# --generate N,SIZE option) fills every CPU's ring with a deterministic
# sequence; the dumps of both files, timestamps aside, are identical, in
# the pmclog (zero-copy) and blob formats, with nothing dropped.  Without
# either option the summary line names the path picked (", auto").
# --direct-io (pmclog with O_DIRECT, io_uring 8 writes in flight, or
# pwritev() with --no-uring; by default pwritev() on tmpfs, else
# io_uring): the same records again, the summary line saying so; where
# the directory takes no O_DIRECT (tmpfs before Linux 6.6) the record
# fails with a message that says that.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring
make_tmpdir
n=20000
cpus=$(grep -c '^processor' /proc/cpuinfo)

# Records without their timestamps, in a stable order.
norm() {
	grep " GENERATED " "$1" | cut -d' ' -f2- | sort
}

for fmt in pmclog blob; do
	for mode in uring no-uring; do
		# --uring: on tmpfs the default would pick pwritev() too
		flag=--uring
		[ "$mode" = no-uring ] && flag=--no-uring
		out=$dir/$mode.$fmt
		# shellcheck disable=SC2086
		pmcring record --quiet $flag --format "$fmt" -o "$out" \
			--buffer-pages 1024 --generate $n,64 >"$dir/rec.log" 2>&1 ||
			{ cat "$dir/rec.log"; grep -q "generate: Operation not permitted" \
				"$dir/rec.log" && skip "GENERATE needs CAP_SYS_ADMIN"; \
			  fail "$fmt $mode: record"; }
		[ "$fmt" = blob ] && out=$(ls "$out"/pmcring/all.DAT.*)
		pmcring dump "$out" >"$dir/$mode.txt" || fail "$fmt $mode: dump"
		grep -q " DROPNOTIFY" "$dir/$mode.txt" && fail "$fmt $mode: records dropped"
		norm "$dir/$mode.txt" >"$dir/$mode.norm"
	done
	got=$(wc -l <"$dir/uring.norm")
	[ "$got" -eq $((n * cpus)) ] || fail "$fmt: $got records, expected $((n * cpus))"
	cmp -s "$dir/uring.norm" "$dir/no-uring.norm" ||
		{ diff "$dir/uring.norm" "$dir/no-uring.norm" | head; fail "$fmt: io_uring and --no-uring differ"; }
	echo "# $fmt: $got records, identical"
	cp "$dir/uring.norm" "$dir/$fmt.norm"
done
# Neither option: the path picked for the file system, named in the
# summary line (tmpfs on 6.1 takes no RWF_NOWAIT write: io_uring while a
# CPU is idle, read/write while none is, or how many batches went each way).
pmcring record --format pmclog -o "$dir/auto.pmclog" --buffer-pages 1024 \
	--generate 1000,64 >"$dir/auto.log" 2>&1 || { cat "$dir/auto.log"; fail "auto: record"; }
grep -Eq "MB/s, (io_uring|read/write|io_uring for [0-9]+ of [0-9]+ batches, read/write for small ones, those of many writes or while no CPU was idle), auto\)" \
	"$dir/auto.log" ||
	{ cat "$dir/auto.log"; fail "auto: the summary line does not name the path picked"; }
echo "# auto: $(grep -Eo "MB/s, [^)]*, auto" "$dir/auto.log")"
# --direct-io: the same pmclog records as the buffered writes above, with
# io_uring, with pwritev() and with the automatic choice: pwritev() on a
# file system in memory (tmpfs), else io_uring.
fstype=$(df -T "$dir" | awk 'NR == 2 { print $2 }')
for mode in uring no-uring auto; do
	flag=--$mode
	[ "$mode" = auto ] && flag=
	# shellcheck disable=SC2086
	if ! pmcring record --direct-io $flag --format pmclog \
		-o "$dir/dio-$mode.pmclog" --buffer-pages 1024 \
		--generate $n,64 >"$dir/dio.log" 2>&1; then
		grep -q "takes no O_DIRECT" "$dir/dio.log" ||
			{ cat "$dir/dio.log"; fail "direct-io $mode: record"; }
		echo "# direct-io $mode: $fstype takes no O_DIRECT: refused, with a message"
		continue
	fi
	case $mode in
	uring) want="io_uring, O_DIRECT, 8 in flight" ;;
	no-uring) want="read/write, O_DIRECT" ;;
	*) want="io_uring, auto, O_DIRECT, 8 in flight"
	   [ "$fstype" = tmpfs ] && want="read/write, auto, O_DIRECT" ;;
	esac
	grep -q "MB/s, $want)" "$dir/dio.log" ||
		{ cat "$dir/dio.log"; fail "direct-io $mode: summary line without \"$want\""; }
	pmcring dump "$dir/dio-$mode.pmclog" >"$dir/dio-$mode.txt" ||
		fail "direct-io $mode: dump"
	norm "$dir/dio-$mode.txt" >"$dir/dio-$mode.norm"
	cmp -s "$dir/dio-$mode.norm" "$dir/pmclog.norm" ||
		fail "direct-io $mode: records differ from the buffered ones"
	echo "# direct-io $mode: $(wc -l <"$dir/dio-$mode.norm") records, identical ($want, $fstype)"
done
echo "ok: io_uring and --no-uring write the same records"
