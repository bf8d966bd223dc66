#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Real-use scenarios, run in the guest by selftests/realuse/run: pmcring
# record in the cross product of modes (command, -p, -t, -C, -a) x formats
# (pmclog, barman, blob, JSON blob) x stops (the target's exit, SIGINT,
# SIGTERM, SIGHUP, SIGKILL, --duration, ENOSPC, SIGSTOP/SIGCONT) with a
# busy loop on every CPU.  Each scenario's files, exit status and timings
# go to OUTDIR/NAME on the share, for check.py (python3, on the host: the
# guest has none) to read with readers of its own.
# usage: guest.sh OUTDIR [SCENARIO-FILTER-REGEX]
OUT=$1
FILTER=${2:-.}
mkdir -p "$OUT"
T=/tmp/ru
rm -rf "$T"; mkdir -p "$T"
NCPU=$(grep -c '^processor' /proc/cpuinfo)
echo "kernel $(uname -r) ncpu $NCPU" >"$OUT/guest-info.txt"
now() { cut -d' ' -f1 /proc/uptime; }
elapsed() { echo "$1 ${2:-$(now)}" | awk '{ printf "%.2f", $2 - $1 }'; }

# Load on every CPU: one burner per CPU, own name.
cp "$(command -v pmcring-workload)" "$T/bg-load"
i=0
while [ $i -lt "$NCPU" ]; do
	"$T/bg-load" -d 100000 -t 1 >/dev/null 2>&1 </dev/null &
	echo $! >>"$T/bg.pids"
	i=$((i + 1))
done
cleanup() { for p in $(cat "$T/bg.pids"); do kill "$p" 2>/dev/null; done; killall pmcring-workload 2>/dev/null; }
trap cleanup EXIT
sleep 0.5

mount_small() {	# mount_small DIR SIZE
	mkdir -p "$1"
	mount -t tmpfs -o size="$2" tmpfs "$1"
}

# sc NAME MODE STOP DELAY [record args...]
#  MODE: cmd (args contain -- CMD) | pid (a workload is started, -p) |
#        tid (a workload thread) | all | cpu (args carry -C)
#  STOP: int term hup kill exit dur enospc
sc() {
	name=$1 mode=$2 stop=$3 delay=$4
	shift 4
	echo "$name" | grep -Eq "$FILTER" || return 0
	d=$T/$name
	mkdir -p "$d"
	where=$d
	if [ "$stop" = enospc ]; then
		mount_small "$d/small" "${ENOSPC_SIZE:-1500k}"
		where=$d/small
	fi
	victim= vtid=
	case $mode in
	pid)	pmcring-workload -d "${PID_DUR:-30}" -t 2 >/dev/null 2>&1 </dev/null &
		victim=$!
		sleep 0.3
		set -- -p "$victim" "$@" ;;
	tid)	pmcring-workload -d 9 -t 2 >/dev/null 2>&1 </dev/null &
		victim=$!
		# phase 2 (3 s to 6 s): the threads, long enough for record
		# to start before they end on the slower arm64 guest (its
		# -t then failed with "enable: No such process")
		sleep 3.4
		for t in $(ls /proc/$victim/task); do
			[ "$t" != "$victim" ] && { vtid=$t; break; }
		done
		set -- -t "${vtid:-0}" "$@" ;;
	esac
	# output arg: "-o OUT" unless the args have it already
	case " $* " in
	*" -o "*) ;;
	*) set -- -o "$where/rec.out" "$@" ;;
	esac
	echo "$*" >"$d/args"
	t_start=$(now)
	pmcring record "$@" >"$d/rec.stdout" 2>"$d/rec.stderr" </dev/null &
	rec=$!
	t0=$t_start
	case $stop in
	stopcont)
		sleep "$delay"
		kill -STOP $rec; sleep 2; kill -CONT $rec; sleep 0.5
		t0=$(now)
		kill -INT $rec ;;
	int|term|hup|kill)
		sleep "$delay"
		t0=$(now)
		case $stop in
		int) kill -INT $rec ;;
		term) kill -TERM $rec ;;
		hup) kill -HUP $rec ;;
		kill) kill -KILL $rec ;;
		esac ;;
	esac
	i=0
	while kill -0 $rec 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 600 ]; then
			echo "timeout" >>"$d/notes"
			kill -KILL $rec
			break
		fi
		sleep 0.05
	done
	wait $rec
	rc=$?
	lat=$(elapsed "$t0")
	tot=$(elapsed "$t_start")
	# the recorded command or target still alive?
	left=$(ps -o pid,args 2>/dev/null | grep -c '[p]mcring-workload')
	vict_alive=0
	[ -n "$victim" ] && kill -0 "$victim" 2>/dev/null && vict_alive=1
	refcnt=$(cat /sys/module/pmcring/refcnt 2>/dev/null)
	{
		echo "name=$name"
		echo "mode=$mode"
		echo "stop=$stop"
		echo "rc=$rc"
		echo "latency=$lat"
		echo "total=$tot"
		echo "victim=$victim"
		echo "vtid=$vtid"
		echo "victim_alive_after=$vict_alive"
		echo "workloads_left=$left"
		echo "refcnt_after=$refcnt"
		echo "ncpu=$NCPU"
	} >"$d/meta"
	[ -n "$victim" ] && { kill -KILL "$victim"; wait "$victim"; } 2>/dev/null
	killall pmcring-workload 2>/dev/null
	sleep 0.2
	if [ "$stop" = enospc ]; then
		df -k "$d/small" >"$d/df" 2>&1
		cp -a "$d/small/." "$d/" 2>/dev/null
		umount "$d/small"
		rmdir "$d/small"
	fi
	cp -a "$d" "$OUT/" || echo "# copy of $name failed"
	rm -rf "$d"
	echo "# $name: rc=$rc lat=$lat total=$tot left=$left refcnt=$refcnt"
}

W="pmcring-workload -d 3 -t 2"
WL="pmcring-workload -d 30 -t 2"

# --- command mode, every format, natural exit (independent readers) ------
for f in pmclog barman blob json; do
	case $f in json) fa="--format blob --blob-json --timing";; blob) fa="--format blob --timing";; *) fa="--format $f";; esac
	# shellcheck disable=SC2086
	sc cmd-$f-exit cmd exit 0 $fa -- $W
done
# command mode, SIGHUP (terminal hangup / ssh drop) and SIGINT
for f in pmclog barman json; do
	case $f in json) fa="--format blob --blob-json --timing";; *) fa="--format $f";; esac
	sc cmd-$f-hup cmd hup 1.5 $fa -- $WL
done
# command exits non-zero through sh, its children still running? (exit 3)
sc cmd-pmclog-exit3 cmd exit 0 --format pmclog -- sh -c "$W >/dev/null; exit 3"
# --duration with a command that outlives it
sc cmd-barman-dur cmd dur 0 --format barman --duration 1.5 -- $WL
# --- -p: target exits by itself (fork/exec children recorded) ---------
for f in pmclog barman json; do
	case $f in json) fa="--format blob --blob-json --timing";; *) fa="--format $f";; esac
	PID_DUR=3 sc pid-$f-exit pid exit 0 $fa
done
sc pid-pmclog-hup pid hup 1.5 --format pmclog
sc pid-blob-dur pid dur 0 --format blob --timing --duration 1.5
# --- -t: stops when the thread ends, and by signal --------------------
for f in pmclog barman json; do
	case $f in json) fa="--format blob --blob-json --timing";; *) fa="--format $f";; esac
	sc tid-$f-exit tid exit 0 $fa
done
sc tid-pmclog-int tid int 0.5 --format pmclog
sc tid-blob-kill tid kill 0.7 --format blob --timing
# --- -C: per-CPU subsets, every format x stops ---------------------------
sc cpu1-pmclog-int cpu int 1.5 --format pmclog -C 1
sc cpu1-barman-term cpu term 1.5 --format barman -C 1
sc cpu0-json-dur cpu dur 0 --format blob --blob-json --timing -C 0 --duration 1.5
sc cpu0-blob-kill cpu kill 1.5 --format blob --timing -C 0
sc cpu01-pmclog-kill cpu kill 1.3 --format pmclog -C 0-1
sc cpu1-pmclog-hup cpu hup 1.5 --format pmclog -C 1
sc cpu0-barman-kill cpu kill 1.5 --format barman -C 0
# --- -a: SIGHUP, SIGKILL, --no-uring, rolls -----------------------------
sc all-pmclog-hup all hup 1.5 --format pmclog -a
sc all-barman-hup all hup 1.5 --format barman -a
sc all-pmclog-kill all kill 1.5 --format pmclog -a
sc all-json-kill all kill 1.5 --format blob --blob-json --timing -a
sc all-barman-kill all kill 1.5 --format barman -a
sc all-pmclog-nouring-term all term 1.5 --format pmclog --no-uring -a
sc all-json-roll-int all int 2 --format blob --blob-json --timing --roll-size 200k -a
sc all-blob-rolltime-dur all dur 0 --format blob --timing --roll-time 1 \
	--stream samples:callchain --stream sched:proccsw,thr_create,proc_create,procexec,map_in --duration 2.5 -a
# --- ENOSPC under load, every format, every mode ------------------------
sc all-pmclog-enospc all enospc 0 --format pmclog -a
sc all-barman-enospc all enospc 0 --format barman -a
sc all-json-enospc all enospc 0 --format blob --blob-json --timing -a
sc all-blob-enospc all enospc 0 --format blob --timing -a
ENOSPC_SIZE=600k sc cmd-pmclog-enospc cmd enospc 0 --format pmclog -- $WL
ENOSPC_SIZE=600k sc cpu1-json-enospc cpu enospc 0 --format blob --blob-json --timing -C 1
# --- an older, longer file at the output path ---------------------------
for f in pmclog barman; do
	name=stale-$f
	echo "$name" | grep -Eq "$FILTER" || continue
	mkdir -p "$T/pre"
	dd if=/dev/urandom of="$T/pre/rec.out" bs=1k count=4096 2>/dev/null
	dd if=/dev/urandom of="$T/pre/rec.out.periods" bs=1k count=512 2>/dev/null
	sc $name cmd exit 0 --format $f -o "$T/pre/rec.out" -- pmcring-workload -d 1 -t 1
	cp "$T/pre/rec.out" "$OUT/$name/rec.out" 2>/dev/null
	cp "$T/pre/rec.out.periods" "$OUT/$name/rec.out.periods" 2>/dev/null
	cp "$T/pre/rec.out.buildids" "$OUT/$name/rec.out.buildids" 2>/dev/null
	rm -rf "$T/pre"
done

# --- extras ---------------------------------------------------------------
# a command that ignores SIGTERM: --duration, then 10 s, then SIGKILL
sc x-cmd-pmclog-dur-termign cmd dur 0 --format pmclog --duration 1 -- sh -c "trap '' TERM; exec pmcring-workload -d 30 -t 1"
# SIGHUP with the fixed binary, every mode
sc x-cmd-pmclog-hup cmd hup 1.5 --format pmclog -- $WL
sc x-cmd-json-hup cmd hup 1.5 --format blob --blob-json --timing -- $WL
sc x-all-barman-hup all hup 1.5 --format barman -a
sc x-pid-pmclog-hup pid hup 1.5 --format pmclog
# ^Z / bg: stopped 2 s under load, continued, then SIGINT
sc x-all-pmclog-stopcont all stopcont 1 --format pmclog -a
sc x-all-barman-stopcont all stopcont 1 --format barman -a
sc x-all-json-stopcont all stopcont 1 --format blob --blob-json --timing -a
# -o /dev/null: no sidecar next to a device
if echo x-devnull | grep -Eq "$FILTER"; then
	mkdir -p "$OUT/x-devnull"
	pmcring record -o /dev/null -- pmcring-workload -d 1 -t 1 >"$OUT/x-devnull/out" 2>"$OUT/x-devnull/err"
	echo "rc=$?" >"$OUT/x-devnull/rc"
	ls -la /dev/null* >"$OUT/x-devnull/ls" 2>&1
	rm -f /dev/null.periods /dev/null.buildids /dev/null.buildids.tmp
fi
# -o a pipe: cli_pipe.sh
echo "# done"
