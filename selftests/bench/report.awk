# SPDX-License-Identifier: GPL-2.0
#
# Report of `make bench` (POSIX awk): reads the flat JSON lines of
# build/bench/all.jsonl (run.sh and guest.sh), prints the tables, writes
# the JSON summary (-v jsonout=) with the native results (-v native=, and
# the native drain's JSON lines, -v drain=) and the SVG plot of B1
# (-v svgout=).  Medians over repetitions; every ratio
# pairs figures of the same run.

function get(key,    re, v) {
	re = "\"" key "\": *(\"[^\"]*\"|[-0-9.eE+a-z]+)"
	if (!match($0, re))
		return ""
	v = substr($0, RSTART, RLENGTH)
	sub(/^"[^"]*": */, "", v)
	gsub(/"/, "", v)
	return v
}

# median of the space-separated numbers in s
function median(s,    a, n, i, j, t) {
	n = split(s, a, " ")
	if (!n)
		return 0
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# B1 rows of one table (sizes x 1/all CPUs): printed; returns their JSON
function b1_rows(p, f, r, n, withn,    i, c, cp, k, js, sep) {
	for (i = 1; i <= nsizes; i++)
		for (c = 0; c < 2; c++) {
			cp = c ? "all" : "1"
			k = sizes[i] SUBSEP cp
			if (!(k in p))
				continue
			if (withn)
				printf "%6d %5s %10d", sizes[i], cp, n[k]
			else
				printf "%6d %5s", sizes[i], cp
			printf " %10.1f %10.1f %8.3f\n", p[k], f[k], r[k]
			js = js sep sprintf("{\"size\": %d, \"cpus\": \"%s\", ", sizes[i], cp) \
			     (withn ? sprintf("\"records_per_cpu\": %d, ", n[k]) : "") \
			     sprintf("\"pmcring_ns\": %.2f, \"ftrace_ns\": %.2f, \"ratio\": %.4f}", p[k], f[k], r[k])
			sep = ", "
		}
	return js
}

function add(arr, k, v) { arr[k] = (k in arr) ? arr[k] " " v : v }
function obj(line) { sub(/^\{"bench": "[a-z_0-9]*", */, "{", line); return line }
function div(a, b) { return b + 0 ? a / b : 0 }

{ bench = get("bench") }
bench == "host" { host = obj($0); accel = get("accel") }
bench == "machine" { guest = obj($0); gcpus = get("guest_cpus"); gkern = get("guest_kernel") }
bench == "b1_settings" && !b1reps { b1reps = get("reps") }
bench == "b1_settings" { b1set = obj($0) }
bench == "b1" && maincs != "" && get("clocksource") != maincs {
	altcs = get("clocksource")
	k = get("size") SUBSEP get("cpus")
	ab1p[k] = get("pmcring_ns"); ab1f[k] = get("ftrace_ns")
	ab1r[k] = get("ratio"); ab1n[k] = get("records_per_cpu")
	next
}
bench == "b1" {
	maincs = get("clocksource")
	k = get("size") SUBSEP get("cpus")
	if (!(get("size") in seen_size)) {
		seen_size[get("size")] = 1
		sizes[++nsizes] = get("size")
	}
	b1p[k] = get("pmcring_ns"); b1f[k] = get("ftrace_ns")
	b1r[k] = get("ratio"); b1n[k] = get("records_per_cpu")
	b1rm[k] = get("ratio_min")
}
bench == "b1_noclock" {
	k = get("noclock_size") SUBSEP get("cpus")
	nb1p[k] = get("pmcring_ns"); nb1f[k] = get("ftrace_ns"); nb1r[k] = get("ratio")
	nb1any = 1
}
bench == "b1_settings" { cmono = get("clock_mono_ns"); clocal = get("clock_local_ns") }
bench == "b2" {
	m = get("mode")
	add(b2s, m, get("seconds")); add(b2rec, m, get("generated"))
	add(b2b, m, get("bytes"))
	add(b2rps, m, div(get("generated"), get("seconds")))
	add(b2mbs, m, div(get("bytes"), get("seconds")) / 1e6)
	add(b2drop, m, get("n") * gcpus - get("generated"))
	b2n = get("n"); b2size = get("size")
}
bench == "b2_raw" { add(b2raw, get("mode"), get("mb_s")) }
bench == "b2_alone" { al_rps = get("drained_rps"); al_mbs = get("mb_s"); al_n = get("records"); al_s = get("seconds") }
bench == "b2_alone_raw" { al_raw = get("mb_s") }
bench == "b5" {
	fm = get("fmt")
	if (!(fm in b5seen)) { b5seen[fm] = 1; b5fmt[++nb5] = fm }
	add(b5rps, fm, div(get("records"), get("seconds")))
	add(b5lost, fm, get("lost"))
}
bench == "b5_rate" {
	fm = get("fmt"); r = get("rate") + 0
	if (!(fm in b5seen)) { b5seen[fm] = 1; b5fmt[++nb5] = fm }
	if (!(r in b5rseen)) { b5rseen[r] = 1; b5rate[++nb5r] = r }
	b5rl[fm, r] = get("lost") + 0
}
bench == "b1_tp_settings" { tpset = obj($0); tpreps = get("reps"); tppages = get("pages") }
bench == "b1_tp" { tp1[++ntp1] = obj($0) }
bench == "b2_tp" { tp2[++ntp2] = obj($0) }
bench == "b2_tp_max" {
	pe = get("peer")
	tp2peer[++ntp2m] = pe; tp2max[pe] = get("rate") + 0; tp2loss[pe] = get("first_loss") + 0
}
bench == "lat" {
	b = get("irq_batch")
	lat[++nlat] = b
	lrec[b] = get("records"); ldrop[b] = get("dropped")
	loff[b] = get("offered_rps"); ldr[b] = get("drained_rps")
	lmb[b] = get("mb_s"); l50[b] = get("p50_ms"); l99[b] = get("p99_ms")
	lmax[b] = get("max_ms"); lh99[b] = get("handout_p99_ms")
	lpl99[b] = get("poll_late_p99_ms"); lplmax[b] = get("poll_late_max_ms")
}
bench == "lat_w5" { w5 = obj($0); w5_50 = get("p50_ms"); w5_99 = get("p99_ms"); w5_max = get("max_ms") }
bench == "b3" {
	k = get("workload") SUBSEP get("tool") SUBSEP get("hz")
	if (!(k in b3t))
		b3keys[++nb3] = k
	add(b3t, k, get("seconds")); add(b3bytes, k, get("bytes"))
}

END {
	J = "{\n  \"machine\": {\"host\": " (host ? host : "{}") ", \"guest\": " \
	    (guest ? guest : "{}") "},\n"

	# ---- B1 ----
	printf "\nB1 producer cost: ns per record per CPU (in-kernel generator loop, %s clocksource)\n", maincs
	printf "%6s %5s %10s %10s %10s %8s %9s  %s\n", "size", "cpus", "records",
	       "pmcring", "ftrace", "ratio", "min-ratio", "goal <= 0.5 (median)"
	J = J "  \"b1\": {\"settings\": " (b1set ? b1set : "{}") ", \"results\": ["
	sep = ""
	for (i = 1; i <= nsizes; i++)
		for (c = 0; c < 2; c++) {
			cp = c ? "all" : "1"
			k = sizes[i] SUBSEP cp
			if (!(k in b1p))
				continue
			verdict = b1f[k] + 0 == 0 ? "no ftrace" : b1r[k] + 0 <= 0.5 ? "met" : \
				  sprintf("missed by %.2fx", b1r[k] / 0.5)
			printf "%6d %5s %10d %10.1f %10.1f %8.3f %9.3f  %s\n", sizes[i], cp,
			       b1n[k], b1p[k], b1f[k], b1r[k], b1rm[k], verdict
			J = J sep sprintf("{\"size\": %d, \"cpus\": \"%s\", \"records_per_cpu\": %d, \"pmcring_ns\": %.2f, \"ftrace_ns\": %.2f, \"ratio\": %.4f, \"ratio_min\": %.4f}",
				sizes[i], cp, b1n[k], b1p[k], b1f[k], b1r[k], b1rm[k] + 0)
			sep = ", "
		}
	J = J "], \"clocksource\": \"" maincs "\""
	if (nb1any) {
		printf "\nB1 without the clock reads (same run): each side minus its timestamp, read\n"
		printf "in the same loop on CPU 0: pmcring ktime_get_mono_fast_ns() %.1f ns,\n", cmono
		printf "ftrace trace_clock_local() %.1f ns per read\n", clocal
		printf "%6s %5s %10s %10s %8s\n", "size", "cpus", "pmcring", "ftrace", "ratio"
		J = J ", \"noclock\": {\"clock_mono_ns\": " (cmono + 0) ", \"clock_local_ns\": " (clocal + 0) ", \"results\": ["
		J = J b1_rows(nb1p, nb1f, nb1r, nb1p, 0)
		J = J "]}"
	}
	if (altcs != "") {
		printf "\nB1 with the %s clocksource (same run): ns per record per CPU\n", altcs
		printf "%6s %5s %10s %10s %10s %8s\n", "size", "cpus", "records",
		       "pmcring", "ftrace", "ratio"
		J = J ", \"" altcs "\": ["
		J = J b1_rows(ab1p, ab1f, ab1r, ab1n, 1)
		J = J "]"
	}
	J = J "},\n"

	# ---- B2 ----
	printf "\nB2 end-to-end drain: %d CPUs x %d records of %d bytes, pmcring record -> pmclog on tmpfs (median)\n", \
	       gcpus, b2n, b2size
	printf "%-14s %12s %10s %10s %10s %10s\n", "consumer", "records/s", "MB/s",
	       "drops", "raw MB/s", "of raw"
	J = J "  \"b2\": {\"records_per_cpu\": " (b2n + 0) ", \"size\": " (b2size + 0) ", \"consumers\": ["
	sep = ""
	split("uring plain", modes, " ")
	for (i = 1; i <= 2; i++) {
		m = modes[i]
		if (!(m in b2s))
			continue
		rps[m] = median(b2rps[m]); mbs[m] = median(b2mbs[m])
		raw[m] = median(b2raw[m])
		printf "%-14s %12.0f %10.2f %10d %10.1f %9.1f%%\n", \
		       m == "uring" ? "io_uring" : "--no-uring", rps[m], mbs[m],
		       median(b2drop[m]), raw[m], 100 * div(mbs[m], raw[m])
		J = J sep sprintf("{\"mode\": \"%s\", \"records_per_s\": %.0f, \"mb_s\": %.3f, \"drops\": %d, \"raw_mb_s\": %.3f, \"of_raw\": %.4f, \"seconds\": %.4f}",
			m, rps[m], mbs[m], median(b2drop[m]), raw[m],
			div(mbs[m], raw[m]), median(b2s[m]))
		sep = ", "
	}
	up = div(mbs["uring"], mbs["plain"])
	printf "io_uring / --no-uring: %.2fx (goal >= 1.3); io_uring / raw: %.1f%% (goal >= 50%%)\n", \
	       up, 100 * div(mbs["uring"], raw["uring"])
	if (al_n) {
		printf "consumer alone (rings filled first; libpmcring merge + writev): %.0f records/s, %.2f MB/s, raw %.1f MB/s: %.1f%% of raw\n", \
		       al_rps, al_mbs, al_raw, 100 * div(al_mbs, al_raw)
		J = J "], \"alone\": " sprintf("{\"records\": %d, \"seconds\": %.4f, \"records_per_s\": %.0f, \"mb_s\": %.3f, \"raw_mb_s\": %.3f, \"of_raw\": %.4f}",
			al_n, al_s, al_rps, al_mbs, al_raw, div(al_mbs, al_raw))
		J = J ", \"uring_over_plain\": " sprintf("%.4f", up) "},\n"
	} else
		J = J "], \"uring_over_plain\": " sprintf("%.4f", up) "},\n"

	printf "\nB2 rate sweep (libpmcring merge + writev, hard-IRQ generator on every CPU, default ring)\n"
	printf "%10s %12s %12s %10s %10s\n", "irq_batch", "offered/s", "drained/s",
	       "written", "dropped"
	J = J "  \"b2_sweep\": ["
	sep = ""
	for (i = 1; i <= nlat; i++) {
		b = lat[i]
		printf "%10d %12.0f %12.0f %10d %10d\n", b, loff[b], ldr[b], lrec[b], ldrop[b]
		J = J sep sprintf("{\"irq_batch\": %d, \"offered_rps\": %.0f, \"drained_rps\": %.0f, \"mb_s\": %.3f, \"records\": %d, \"dropped\": %d, \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"max_ms\": %.4f}",
			b, loff[b], ldr[b], lmb[b], lrec[b], ldrop[b], l50[b], l99[b], lmax[b])
		sep = ", "
	}
	J = J "],\n"

	# ---- B4 ----
	if (nlat) {
		b = lat[1]
		printf "\nB4 merge latency, commit -> write done (default settings, %d records, %.0f rec/s)\n", \
		       lrec[b], ldr[b]
		printf "p50 %.3f ms   p99 %.3f ms   max %.3f ms   (goal p99 < 10 ms: %s)\n", \
		       l50[b], l99[b], lmax[b], l99[b] + 0 < 10 ? "met" : \
		       sprintf("missed by %.1f ms", l99[b] - 10)
		J = J sprintf("  \"b4\": {\"irq_batch\": %d, \"records\": %d, \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"max_ms\": %.4f, \"handout_p99_ms\": %.4f, \"poll_late_p99_ms\": %.4f, \"poll_late_max_ms\": %.4f, \"poll_5ms\": %s},\n",
			b, lrec[b], l50[b], l99[b], lmax[b], lh99[b], lpl99[b], lplmax[b], w5 ? w5 : "null")
		printf "commit -> merge hand-out p99 %.3f ms; timed-out poll(10 ms) overslept p99 %.3f ms, max %.3f ms\n", \
		       lh99[b], lpl99[b], lplmax[b]
		if (w5)
			printf "with a 5 ms poll period: p50 %.3f ms   p99 %.3f ms   max %.3f ms\n", w5_50, w5_99, w5_max
	}

	# ---- B3 ----
	printf "\nB3 overhead on a workload (median seconds, slowdown vs bare, output bytes)\n"
	printf "%-6s %-8s %6s %10s %9s %12s\n", "work", "tool", "Hz", "seconds",
	       "slowdown", "bytes"
	J = J "  \"b3\": ["
	sep = ""
	for (i = 1; i <= nb3; i++) {
		split(b3keys[i], kk, SUBSEP)
		base = median(b3t[kk[1] SUBSEP "bare" SUBSEP 0])
		t = median(b3t[b3keys[i]])
		slow[b3keys[i]] = div(t, base)
		printf "%-6s %-8s %6d %10.3f %8.2fx %12d\n", kk[1], kk[2], kk[3], t,
		       div(t, base), median(b3bytes[b3keys[i]])
		J = J sep sprintf("{\"workload\": \"%s\", \"tool\": \"%s\", \"hz\": %d, \"seconds\": %.6f, \"slowdown\": %.4f, \"bytes\": %d}",
			kk[1], kk[2], kk[3], t, div(t, base), median(b3bytes[b3keys[i]]))
		sep = ", "
	}
	J = J "],\n"
	for (i = 1; i <= nb3; i++) {
		split(b3keys[i], kk, SUBSEP)
		if (kk[2] != "pmcring")
			continue
		pk = kk[1] SUBSEP "perf" SUBSEP kk[3]
		if (pk in slow)
			printf "%s %s Hz: pmcring overhead %+.0f%%, perf %+.0f%%: goal (pmcring <= perf) %s\n", \
			       kk[1], kk[3], 100 * (slow[b3keys[i]] - 1), 100 * (slow[pk] - 1),
			       slow[b3keys[i]] + 0 <= slow[pk] + 0 ? "met" : "missed"
	}
	# issue 29's goal: pmcring's overhead at most 0.7 of perf's, every row
	for (i = 1; i <= nb3; i++) {
		split(b3keys[i], kk, SUBSEP)
		if (kk[2] != "pmcring")
			continue
		pk = kk[1] SUBSEP "perf" SUBSEP kk[3]
		if (!(pk in slow) || slow[pk] <= 1)
			continue
		v = (slow[b3keys[i]] - 1) / (slow[pk] - 1)
		printf "%s %s Hz: overhead ratio pmcring / perf %.2f: goal (<= 0.7) %s\n", \
		       kk[1], kk[3], v, v <= 0.7 ? "met" : "missed"
		J3 = J3 sep3 sprintf("{\"workload\": \"%s\", \"hz\": %d, \"overhead_ratio\": %.4f}", kk[1], kk[3], v)
		sep3 = ", "
	}
	J = J "  \"b3_overhead_ratio\": [" J3 "],\n"

	# ---- B5 ----
	if (nb5) {
		printf "\nB5 writers: pmcring record --generate into rings that hold every record, files on tmpfs\n"
		printf "(records/s: median of the drain rates; lossless: highest offered rate per CPU, default rings, with 0 lost)\n"
		printf "%-8s %12s %10s %14s\n", "format", "records/s", "/pmclog", "lossless r/s"
		J = J "  \"b5\": ["
		sep = ""
		base = median(b5rps["pmclog"])
		for (i = 1; i <= nb5; i++) {
			fm = b5fmt[i]
			b5ll[fm] = 0
			for (j = 1; j <= nb5r; j++)
				if (((fm, b5rate[j]) in b5rl) && !b5rl[fm, b5rate[j]] &&
				    b5rate[j] > b5ll[fm])
					b5ll[fm] = b5rate[j]
			v = median(b5rps[fm])
			printf "%-8s %12.0f %10.3f %14d\n", fm, v, div(v, base), b5ll[fm]
			J = J sep sprintf("{\"format\": \"%s\", \"records_per_s\": %.0f, \"ratio_to_pmclog\": %.4f, \"lossless_rate_per_cpu\": %d, \"lost_in_drain_runs\": %d}",
				fm, v, div(v, base), b5ll[fm], median(b5lost[fm]))
			sep = ", "
		}
		J = J "],\n"
		for (i = 1; i <= nb5; i++) {
			fm = b5fmt[i]
			if (fm == "pmclog")
				continue
			v = div(median(b5rps[fm]), base)
			printf "%s: %.2f of pmclog's records/s: goal (>= 0.5) %s; lossless up to %d/s per CPU vs pmclog's %d: goal (>=) %s\n", \
			       fm, v, (v >= 0.5 ? "met" : "missed"), b5ll[fm], b5ll["pmclog"],
			       (b5ll[fm] >= b5ll["pmclog"] ? "met" : "missed")
		}
	}

	# ---- the peers behind one tracepoint (tpbench) ----
	if (ntp1) {
		np = split("off empty minring pmcring perf bpf ftrace", tpn, " ")
		printf "\nB1 tracepoint peers: ns/event, pmcring_bench:pfb_event fired on CPU 0, median of %s, %s pages per CPU each\n", tpreps, tppages
		printf "%5s %4s", "size", "ctx"
		for (i = 1; i <= np; i++)
			printf " %8s", tpn[i]
		printf " %9s %9s %9s\n", "pmc/perf", "pmc/bpf", "pmc/floor"
		J = J "  \"b1_tp\": {\"settings\": " (tpset ? tpset : "{}") ", \"rows\": ["
		sep = ""
		g_perf = g_bpf = g_floor = 1
		for (i = 1; i <= ntp1; i++) {
			$0 = tp1[i]
			printf "%5s %4s", get("size"), get("ctx")
			for (j = 1; j <= np; j++) {
				v = get(tpn[j] "_ns")
				if (v == "")
					printf " %8s", "-"
				else
					printf " %8.1f", v
				tpv[get("size"), get("ctx"), tpn[j]] = v
			}
			if (!(get("size") in tpseen)) {
				tpseen[get("size")] = 1
				tpsz[++ntpsz] = get("size")
			}
			pm = get("pmcring_ns") + 0
			r1 = div(pm, get("perf_ns")); r2 = div(pm, get("bpf_ns")); r3 = div(pm, get("minring_ns"))
			printf " %9.3f %9.3f %9.3f\n", r1, r2, r3
			if (!(r1 && r1 <= 0.5)) g_perf = 0
			if (!(r2 && r2 <= 1)) g_bpf = 0
			if (!(r3 && r3 <= 1.25)) g_floor = 0
			sub(/}$/, sprintf(", \"pmcring_per_perf\": %.4f, \"pmcring_per_bpf\": %.4f, \"pmcring_per_floor\": %.4f}", r1, r2, r3), tp1[i])
			J = J sep tp1[i]
			sep = ", "
		}
		J = J "]},\n"
		printf "goals: pmcring <= 0.5x perf's ring %s; <= the BPF ring buffer %s; <= 1.25x the floor (minring) %s (every row)\n", \
		       (g_perf ? "met" : "missed"), (g_bpf ? "met" : "missed"), (g_floor ? "met" : "missed")
	}
	if (ntp2m) {
		printf "\nB2 lossless rate per peer: pmcring_bench:pfb_event on every CPU from a hard-IRQ timer, output on tmpfs, equal ring memory per CPU\n"
		printf "%-10s %16s %14s\n", "peer", "lossless/s/CPU", "first loss at"
		J = J "  \"b2_tp\": {\"max\": ["
		sep = ""
		for (i = 1; i <= ntp2m; i++) {
			pe = tp2peer[i]
			printf "%-10s %16d %14s\n", pe, tp2max[pe], tp2loss[pe] ? tp2loss[pe] : "-"
			J = J sep sprintf("{\"peer\": \"%s\", \"lossless_rate_per_cpu\": %d, \"first_loss_rate\": %d}", pe, tp2max[pe], tp2loss[pe])
			sep = ", "
		}
		J = J "], \"runs\": ["
		sep = ""
		for (i = 1; i <= ntp2; i++) {
			J = J sep tp2[i]
			sep = ", "
		}
		J = J "]},\n"
		for (i = 1; i <= ntp2m; i++) {
			pe = tp2peer[i]
			if (pe == "pmcring")
				continue
			printf "pmcring (ordered pmclog) %d/s vs %s %d/s: goal (>=) %s\n", tp2max["pmcring"], pe, tp2max[pe], \
			       (tp2max["pmcring"] >= tp2max[pe] ? "met" : "missed")
		}
	}

	# ---- native drain (user/bench/drain, run.sh: -v drain=) ----
	native_drain()
	native_write()

	# ---- native ----
	nat = ""
	while ((getline line < native) > 0)
		nat = nat line "\n"
	sub(/\n+$/, "", nat)
	gsub(/\n/, "\n  ", nat)
	J = J "  \"native\": " (nat != "" ? nat : "null") "\n}\n"
	printf "%s", J > jsonout

	if (svgpeers != "")
		peers_svg()

	# ---- SVG: ns/record by size ----
	W = 640; H = 400; L = 70; R = 170; T = 50; B = 50
	ymax = 0
	for (k in b1p) {
		if (b1p[k] + 0 > ymax) ymax = b1p[k] + 0
		if (b1f[k] + 0 > ymax) ymax = b1f[k] + 0
	}
	if (!nsizes || !ymax) {
		printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\"><text x=\"20\" y=\"40\">no B1 results</text></svg>\n", W, H > svgout
		exit
	}
	o = svg_frame(sizes, nsizes, ymax, W, H, L, R, T, B,
		      "B1 producer cost: ns per record per CPU (lower is better)",
		      sprintf("guest %s, %d vCPUs (%s), %s clocksource, median of %d runs",
			      gkern, gcpus, accel, maincs, b1reps), "ns per record")
	pw = SV_pw
	nser = split("pmcring,1,#1f77b4,;ftrace,1,#d62728,;pmcring,all,#1f77b4,6 4;ftrace,all,#d62728,6 4", ser, ";")
	for (s = 1; s <= nser; s++) {
		split(ser[s], f, ",")
		pts = ""
		for (i = 1; i <= nsizes; i++) {
			k = sizes[i] SUBSEP f[2]
			v = f[1] == "pmcring" ? b1p[k] : b1f[k]
			if (!(k in b1p) || v + 0 <= 0)
				continue
			px = svg_x(sizes[i])
			py = svg_y(v)
			pts = pts sprintf("%.1f,%.1f ", px, py)
			o = o sprintf("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px, py, f[3])
		}
		if (pts == "")
			continue
		o = o sprintf("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", pts, f[3],
			      f[4] != "" ? " stroke-dasharray=\"" f[4] "\"" : "")
		ly = T + 10 + 20 * s
		o = o sprintf("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", L + pw + 15, ly, L + pw + 45, ly, f[3],
			      f[4] != "" ? " stroke-dasharray=\"" f[4] "\"" : "")
		o = o sprintf("<text x=\"%d\" y=\"%d\">%s, %s CPU%s</text>\n", L + pw + 50, ly + 4, f[1], f[2], f[2] == "1" ? "" : "s")
	}
	o = o "</svg>\n"
	printf "%s", o > svgout
}

# ---- SVG frame shared by the plots: the axes of ns (linear, from 0) by
# record size (log 2) for the sizes xs[1..nx] and values up to ymax; sets
# the scale (SV_*) that svg_x() and svg_y() use; returns the SVG text up to
# the series ----
# The native drain rows (JSON lines of pmcring-drain-bench -j): the
# table, the goals, and "native_drain" in the JSON summary.
function native_drain(    line, n, i, k, fs, f, r, m, sep, nfs, fsl, seen,
			  rate, cpu, ofr, cofr, ran, up, cup, dr_f, dr_r, dr_m,
			  jd) {
	split("pmclog barman blob", dr_f, " ")
	split("cc64 cc256", dr_r, " ")
	split("uring sync auto uring-dio sync-dio", dr_m, " ")
	n = 0
	while (drain != "" && (getline line < drain) > 0) {
		$0 = line
		n++
		fs = get("dir"); f = get("format"); r = get("record"); m = get("mode")
		k = fs SUBSEP f SUBSEP r SUBSEP m
		rate[k] = get("records_per_s"); ofr[k] = get("of_raw")
		cofr[k] = get("cpu_of_raw"); cpu[k] = get("cpu_ns_per_record")
		ran[k] = get("ran")
		if (!(fs in seen)) {
			seen[fs] = 1
			fsl[++nfs] = fs
		}
		jd = jd sep "    " line
		sep = ",\n"
	}
	if (!n)
		return
	printf "\nNative drain (pmcring record's consumer, rings filled first, 2 CPUs' CALLCHAINs interleaved)\n"
	printf "against a raw write of the same bytes in the same run; wall and CPU time (io-wq workers included), medians\n"
	printf "%-13s %-6s %-6s %-9s %12s %8s %8s %8s %9s\n", "fs", "format",
	       "record", "mode", "records/s", "of raw", "CPU ns", "CPU raw",
	       "/pmclog"
	for (i = 1; i <= nfs; i++)
		for (r = 1; r <= 2; r++)
			for (f = 1; f <= 3; f++)
				for (m = 1; m <= 5; m++) {
					k = fsl[i] SUBSEP dr_f[f] SUBSEP dr_r[r] SUBSEP dr_m[m]
					if (!(k in rate))
						continue
					printf "%-13s %-6s %-6s %-9s %12.0f %7.1f%% %8.1f %7.1f%% %9.2f%s\n",
					       fsl[i], dr_f[f], dr_r[r], dr_m[m], rate[k],
					       100 * ofr[k], cpu[k], 100 * cofr[k],
					       div(rate[k], rate[fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP dr_m[m]]),
					       dr_m[m] == "auto" ? " (" ran[k] ")" : ""
				}
	for (i = 1; i <= nfs; i++)
		for (r = 1; r <= 2; r++) {
			k = fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP "sync"
			if (!(k in rate))
				continue
			up = div(rate[fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP "uring"], rate[k])
			cup = div(cpu[fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP "uring"], cpu[k])
			printf "%s %s: pmclog (pwritev) %.1f%% of raw, %.1f%% in CPU time (goal >= 50%%); io_uring / pwritev %.2fx in records/s (goal >= 1.3), %.2fx the CPU per record\n",
			       fsl[i], dr_r[r], 100 * ofr[k], 100 * cofr[k], up, cup
			# the automatic choice (buffered: io_uring while a CPU is idle)
			ka = fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP "auto"
			if (ka in rate)
				printf "%s %s: pmclog auto (%s) / pwritev %.2fx in records/s, %.1f%% of raw\n",
				       fsl[i], dr_r[r], ran[ka], div(rate[ka], rate[k]), 100 * ofr[ka]
			# O_DIRECT (record --direct-io): io_uring, 8 in flight
			if ((fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP "uring-dio") in rate)
				printf "%s %s: pmclog O_DIRECT io_uring (8 in flight) / pwritev O_DIRECT %.2fx, / pwritev buffered %.2fx in records/s (goal >= 1.3)\n",
				       fsl[i], dr_r[r],
				       div(rate[fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP "uring-dio"],
					   rate[fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP "sync-dio"]),
				       div(rate[fsl[i] SUBSEP "pmclog" SUBSEP dr_r[r] SUBSEP "uring-dio"], rate[k])
			for (f = 2; f <= 3; f++)
				if ((fsl[i] SUBSEP dr_f[f] SUBSEP dr_r[r] SUBSEP "sync") in rate)
					printf "%s %s: %s / pmclog %.2f in records/s, %.2f in records per CPU second (goal >= 0.8)\n",
					       fsl[i], dr_r[r], dr_f[f],
					       div(rate[fsl[i] SUBSEP dr_f[f] SUBSEP dr_r[r] SUBSEP "sync"], rate[k]),
					       div(cpu[k], cpu[fsl[i] SUBSEP dr_f[f] SUBSEP dr_r[r] SUBSEP "sync"])
		}
	J = J "  \"native_drain\": [\n" jd "\n  ],\n"
}

# The write bench's rows (pmcring-write-bench -j, -v write=): io_uring
# against pwritev() alone, buffered and O_DIRECT, io_uring with 1 write in
# flight ("io_uring") and with more ("io_uring-qN", -q); "native_write" in
# JSON.  The goal line of each fs and io: the best io_uring row.
function native_write(    line, n, sep, jd, v, k, best, bway, nk, keys, i) {
	n = 0
	while (write != "" && (getline line < write) > 0) {
		$0 = line
		if (!n++) {
			printf "\nio_uring against pwritev() alone (user/bench/write: batches of %d KiB in 4 KiB iovecs; io_uring-qN: N writes in flight, else one), medians\n", get("batch") / 1024
			printf "%-13s %-9s %-11s %9s %9s %9s\n", "fs", "io", "way", "MB/s", "/pwritev", "CPU /pw"
		}
		printf "%-13s %-9s %-11s %9.1f %8.2fx %8.2fx\n", get("fs"), get("io"),
		       get("way"), get("mb_per_s"), get("of_pwritev"), get("cpu_of_pwritev")
		if (get("way") ~ /^io_uring/) {
			v = get("of_pwritev") + 0
			k = get("fs") " " get("io")
			if (!(k in best)) {
				keys[++nk] = k
				best[k] = -1
			}
			if (v > best[k]) {
				best[k] = v
				bway[k] = get("way")
			}
		}
		jd = jd sep "    " line
		sep = ",\n"
	}
	if (!n)
		return
	for (i = 1; i <= nk; i++)
		printf "%s: best io_uring (%s) / pwritev %.2fx: goal (>= 1.3) %s\n",
		       keys[i], bway[keys[i]], best[keys[i]],
		       (best[keys[i]] >= 1.3 ? "met" : "missed")
	J = J "  \"native_write\": [\n" jd "\n  ],\n"
}

function svg_frame(xs, nx, ymax, W, H, L, R, T, B, title, subt, ylabel,
		   i, v, y, px, py, step, o) {
	step = 10 ^ int(log(ymax) / log(10))
	while (ymax / step < 4) step /= 2
	SV_ytop = (int(ymax / step) + 1) * step
	SV_xl0 = SV_xl1 = log(xs[1]) / log(2)
	for (i = 1; i <= nx; i++) {
		v = log(xs[i]) / log(2)
		if (v < SV_xl0) SV_xl0 = v
		if (v > SV_xl1) SV_xl1 = v
	}
	if (SV_xl1 == SV_xl0) { SV_xl0 -= 1; SV_xl1 += 1 }
	SV_L = L; SV_T = T; SV_pw = W - L - R; SV_ph = H - T - B
	o = sprintf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H)
	o = o sprintf("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H)
	o = o sprintf("<text x=\"%d\" y=\"22\" font-size=\"14\">%s</text>\n", L, title)
	o = o sprintf("<text x=\"%d\" y=\"38\" font-size=\"11\" fill=\"#555\">%s</text>\n", L, subt)
	for (y = 0; y <= SV_ytop + step / 2; y += step) {
		py = svg_y(y)
		o = o sprintf("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, py, L + SV_pw, py)
		o = o sprintf("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, py + 4, y)
	}
	for (i = 1; i <= nx; i++) {
		px = svg_x(xs[i])
		o = o sprintf("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\"/>\n", px, T + SV_ph, px, T + SV_ph + 5)
		o = o sprintf("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", px, T + SV_ph + 18, xs[i])
	}
	o = o sprintf("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T + SV_ph, L + SV_pw, T + SV_ph)
	o = o sprintf("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L, T + SV_ph)
	o = o sprintf("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">record size, bytes</text>\n", L + SV_pw / 2, H - 10)
	o = o sprintf("<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", T + SV_ph / 2, ylabel)
	return o
}

function svg_x(size) { return SV_L + SV_pw * (log(size) / log(2) - SV_xl0) / (SV_xl1 - SV_xl0) }
function svg_y(v) { return SV_T + SV_ph - SV_ph * v / SV_ytop }

# ---- SVG of the tracepoint peers (-v svgpeers=): ns/event by record size,
# every peer of B1's tracepoint rows, task context solid, hard IRQ dashed ----
function peers_svg(    W, H, L, R, T, B, pw, ph, ymax, ytop, step, xl0, xl1,
		   i, j, c, v, px, py, pts, o, np, pn, col, nm, ctx, ly, n) {
	W = 720; H = 440; L = 70; R = 200; T = 50; B = 50
	np = split("minring pmcring perf bpf ftrace empty", pn, " ")
	split("#2ca02c #1f77b4 #d62728 #9467bd #ff7f0e #7f7f7f", col, " ")
	split("floor ring,pmcring,perf ring,BPF ring buffer,ftrace,empty probe", nm, ",")
	ymax = 0
	for (i = 1; i <= ntpsz; i++)
		for (j = 1; j <= np; j++)
			for (c = 0; c < 2; c++) {
				v = tpv[tpsz[i], c ? "irq" : "task", pn[j]]
				if (v + 0 > ymax) ymax = v + 0
			}
	if (!ntpsz || !ymax) {
		printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\"><text x=\"20\" y=\"40\">no B1 tracepoint results</text></svg>\n", W, H > svgpeers
		return
	}
	o = svg_frame(tpsz, ntpsz, ymax, W, H, L, R, T, B,
		      "B1 behind one tracepoint: ns per event on CPU 0 (lower is better)",
		      sprintf("guest %s, %d vCPUs (%s), median of %s, %s pages per CPU; solid: task, dashed: hard IRQ",
			      gkern, gcpus, accel, tpreps, tppages), "ns per event")
	pw = SV_pw
	n = 0
	for (j = 1; j <= np; j++)
		for (c = 0; c < 2; c++) {
			ctx = c ? "irq" : "task"
			pts = ""
			for (i = 1; i <= ntpsz; i++) {
				v = tpv[tpsz[i], ctx, pn[j]]
				if (v == "" || v + 0 <= 0)
					continue
				px = svg_x(tpsz[i])
				py = svg_y(v)
				pts = pts sprintf("%.1f,%.1f ", px, py)
				o = o sprintf("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px, py, col[j])
			}
			if (pts == "")
				continue
			o = o sprintf("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", pts, col[j],
				      c ? " stroke-dasharray=\"6 4\"" : "")
			if (c)
				continue
			ly = T + 10 + 20 * ++n
			o = o sprintf("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n", L + pw + 15, ly, L + pw + 45, ly, col[j])
			o = o sprintf("<text x=\"%d\" y=\"%d\">%s</text>\n", L + pw + 50, ly + 4, nm[j])
		}
	o = o "</svg>\n"
	printf "%s", o > svgpeers
}
