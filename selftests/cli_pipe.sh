#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: `pmcring record -o /dev/stdout | ...` (a pipe, e.g. to ssh):
# a pmclog stream is written whole through the pipe with io_uring and with
# --no-uring (CLOSELOG last, `pmcring dump` reads it without a note), and a
# barman file, whose header is rewritten in place, is refused up front
# (exit 1, "not seekable") instead of writing a stream with a second header
# in the middle.  Before, --no-uring failed on the pipe with "Illegal seek"
# after writing nothing readable, and barman exited 0 with a stream corrupt
# at the end of its first header.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir

# topipe NAME ARGS...: record ARGS into a pipe; status in $dir/NAME.rc,
# the stream in $dir/NAME.out, messages in $dir/NAME.err
topipe() {
	name=$1
	shift
	{ pmcring record --quiet -o /dev/stdout "$@" -- \
		sh -c 'exec pmcring-workload -d 1 -t 1 >/dev/null' \
		2>"$dir/$name.err"; echo $? >"$dir/$name.rc"; } |
		cat >"$dir/$name.out"
}

for mode in uring no-uring; do
	extra=--uring
	[ $mode = no-uring ] && extra=--no-uring
	topipe "p-$mode" --format pmclog $extra
	rc=$(cat "$dir/p-$mode.rc")
	[ "$rc" = 0 ] || { cat "$dir/p-$mode.err"; fail "pmclog to a pipe ($mode): exit $rc"; }
	pmcring dump "$dir/p-$mode.out" >"$dir/p.txt" 2>"$dir/p.err" ||
		{ cat "$dir/p.err"; fail "pmclog to a pipe ($mode): dump"; }
	[ -s "$dir/p.err" ] && { cat "$dir/p.err"; fail "pmclog to a pipe ($mode): not finished"; }
	tail -n 1 "$dir/p.txt" | grep -q " CLOSELOG" ||
		fail "pmclog to a pipe ($mode): no CLOSELOG at the end"
	grep -q " CALLCHAIN " "$dir/p.txt" || fail "pmclog to a pipe ($mode): no sample"
	echo "# pmclog to a pipe ($mode): $(wc -l <"$dir/p.txt") records, CLOSELOG last"
done

topipe b --format barman
rc=$(cat "$dir/b.rc")
[ "$rc" = 1 ] || { cat "$dir/b.err"; fail "barman to a pipe: exit $rc, want 1 (refused)"; }
grep -q "not seekable" "$dir/b.err" ||
	{ cat "$dir/b.err"; fail "barman to a pipe: no clear message"; }
echo "# barman to a pipe: refused: $(head -n 1 "$dir/b.err")"
echo "ok: pmclog streams through a pipe; barman is refused"
