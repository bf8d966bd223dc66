# SPDX-License-Identifier: GPL-2.0
#
# Summary of tp_ab.sh's output (awk -f tp_ab.awk LOG): per build, size and
# context, the medians over all rounds of the empty probe, the floor ring
# and pmcring (ns/event), pmcring / floor of the medians, and of the minima.
function get(s, key,    re, v) {
	re = "\"" key "\": *[-0-9.eE+]+"
	if (!match(s, re))
		return ""
	v = substr(s, RSTART, RLENGTH)
	sub(/^"[^"]*": */, "", v)
	return v + 0
}
function median(list,    a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$3 ~ /^\{/ {
	row = $0
	sub(/^[^{]*/, "", row)
	k = $1 SUBSEP get(row, "size") SUBSEP (row ~ /"ctx": "irq"/ ? "irq" : "task")
	if (!(k in seen)) {
		seen[k] = 1
		order[++n] = k
	}
	e[k] = e[k] " " get(row, "empty_ns")
	f[k] = f[k] " " get(row, "minring_ns")
	p[k] = p[k] " " get(row, "pmcring_ns")
	fm = get(row, "minring_min_ns"); pm = get(row, "pmcring_min_ns")
	if (!(k in fmin) || fm < fmin[k]) fmin[k] = fm
	if (!(k in pmin) || pm < pmin[k]) pmin[k] = pm
}
END {
	printf "%-10s %4s %4s %8s %8s %8s %9s %9s\n", "build", "size", "ctx",
	       "empty", "floor", "pmcring", "pmc/floor", "of minima"
	for (i = 1; i <= n; i++) {
		split(order[i], kk, SUBSEP)
		k = order[i]
		mf = median(f[k]); mp = median(p[k])
		printf "%-10s %4d %4s %8.1f %8.1f %8.1f %9.2f %9.2f\n", kk[1], kk[2],
		       kk[3], median(e[k]), mf, mp, mp / mf, pmin[k] / fmin[k]
	}
}
