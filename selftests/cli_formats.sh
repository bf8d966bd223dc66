#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: `pmcring record` of pmcring-workload (CPU work, threads, pipe
# ping-pong, fork/exec) in each format - pmclog, barman, LDMS blob (binary
# and JSON) - read back by `pmcring dump` and `pmcring stat`: every file
# reads without error, records come out sorted by timestamp, and each holds
# the record types the workload causes; two blob runs in a row into one
# directory leave two whole file sets.
lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
. "$lib/pmcring_test.sh"

require_dev
require_cmd pmcring pmcring-workload
make_tmpdir

# Timestamps (first field) never go down; '#' lines are barman tables.
sorted() {
	grep -v '^#' "$1" | awk '{ t = $1 + 0; if (NR > 1 && t < p) { print "line " NR ": " $0; bad = 1; exit } p = t } END { exit bad }'
}

has() {	# has FILE TYPE...
	f=$1
	shift
	for t in "$@"; do
		grep -q " $t\( \|\$\)" "$f" || fail "$f: no $t record"
	done
}

record() {	# record NAME ARGS...
	name=$1
	shift
	pmcring record --quiet "$@" -- pmcring-workload -d 1 -t 2 \
		>"$dir/$name.rec" 2>&1 || { cat "$dir/$name.rec"; fail "record $name"; }
}

check() {	# check NAME PATH
	pmcring dump "$2" >"$dir/$1.txt" 2>"$dir/$1.err" ||
		{ cat "$dir/$1.err"; fail "dump $1"; }
	[ -s "$dir/$1.err" ] && { cat "$dir/$1.err"; fail "dump $1 complained"; }
	sorted "$dir/$1.txt" || fail "$1: records not sorted by timestamp"
	pmcring stat "$2" >"$dir/$1.stat" || fail "stat $1"
	echo "# $1: $(grep -vc '^#' "$dir/$1.txt") records"
	sed 's/^/# /' "$dir/$1.stat"
}

record pmclog -o "$dir/w.pmclog"
check pmclog "$dir/w.pmclog"
head -n 1 "$dir/pmclog.txt" | grep -q " INITIALIZE " || fail "pmclog: INITIALIZE not first"
tail -n 1 "$dir/pmclog.txt" | grep -q " CLOSELOG" || fail "pmclog: CLOSELOG not last"
has "$dir/pmclog.txt" PMCALLOCATEDYN CALLCHAIN PROC_CREATE PROCEXEC MAP_IN \
	PROCCSW PROCFORK THR_CREATE PROCEXIT
grep -q " PMCALLOCATE " "$dir/pmclog.txt" && fail "pmclog: PMCALLOCATE written (FreeBSD cannot resolve it)"
dup=$(grep " PMCALLOCATEDYN " "$dir/pmclog.txt" | awk '{ print $4 }' | sort | uniq -d)
[ -z "$dup" ] || fail "pmclog: several PMCALLOCATEDYN for $dup"

record barman --format barman -o "$dir/w.barman"
check barman "$dir/w.barman"
has "$dir/barman.txt" SAMPLE_WITH_PC TASK_SWITCH
grep -q '^# task .*name="pmcring-worklo' "$dir/barman.txt" || fail "barman: no task_info of the workload"
grep -q '^# mmap ' "$dir/barman.txt" || fail "barman: no mmap_layout"

record blob --format blob -o "$dir/blob" --container c --timing \
	--stream all --stream sched:proccsw,thr_create,thr_exit
dat=$(ls "$dir"/blob/c/all.DAT.*)
check blob "$dat"
has "$dir/blob.txt" CALLCHAIN PROCCSW PROCEXEC MAP_IN
sdat=$(ls "$dir"/blob/c/sched.DAT.*)
check blob-sched "$sdat"
grep -v " PROCCSW \| THR_CREATE \| THR_EXIT " "$dir/blob-sched.txt" &&
	fail "sched stream holds other types"

record json --format blob -o "$dir/json" --blob-json
jdat=$(ls "$dir"/json/pmcring/all.DAT.*)
check json "$jdat"
has "$dir/json.txt" CALLCHAIN PROCCSW
grep -q '"pc":"0x[0-9a-f;x]*"' "$dir/json.txt" || fail "json: no callchain string"
# Two runs in a row into one directory, possibly in the same second (the
# $t of a set's names): two whole sets, none overwritten.
for i in 1 2; do
	pmcring record --quiet --format blob -o "$dir/twice" \
		--generate 1000,64 >"$dir/twice.rec" 2>&1 ||
		{ cat "$dir/twice.rec"; fail "blob run $i into one directory"; }
done
set -- "$dir"/twice/pmcring/all.DAT.*
[ $# -eq 2 ] || fail "two runs into one directory: $# sets ($*)"
for d; do
	check twice "$d"
	echo "$(grep -vc '^#' "$dir/twice.txt")" >>"$dir/twice.n"
done
[ "$(sort -u "$dir/twice.n" | wc -l)" -eq 1 ] && [ "$(head -n 1 "$dir/twice.n")" -gt 0 ] ||
	fail "two runs: sets of $(tr '\n' ' ' <"$dir/twice.n")records"
echo "ok: pmclog, barman, blob and JSON blob recordings read back sorted;" \
	"two blob runs into one directory left two whole sets"
