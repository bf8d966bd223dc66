#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: import a `pmcring script` output into speedscope (the npm
# package `make deps` installs under build/tools) in headless Chromium, as
# a user dropping the file on speedscope would: speedscope must detect it
# by content as "linux perf script output", name the profile
# "COMM pid: PID tid: TID (1/N)" and list each expected frame name in its
# sandwich view (the table of functions, one cell per name).  PROFILE-NAME
# is the toolbar's text, e.g. "comm pid: 1 tid: 1 (1/2)".
#
#   speedscope_import.sh SCRIPT.txt OUTDIR PROFILE-NAME [FRAME-NAME...]
#
# Writes OUTDIR/dom.html and OUTDIR/chromium.log.  Exits 0 on success, 1 on
# failure, 4 (skip) when chromium or speedscope is missing, except in CI
# (CI set), where a missing tool is a failure: `make deps` installs both.
set -eu

txt=$1
outdir=$2
profile_name=$3
shift 3

fail() { echo "FAIL: $*"; exit 1; }
missing() {
	[ -z "${CI:-}" ] || fail "$* (CI: make deps must install it)"
	echo "SKIP: $* (run make deps)"
	exit 4
}

here=$(cd "$(dirname "$0")" && pwd)
ss=${SPEEDSCOPE_DIR:-$here/../../build/tools/node_modules/speedscope/dist/release}
[ -f "$ss/index.html" ] || missing "speedscope not installed in $ss"
chromium=
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then
		chromium=$(command -v "$c")
		break
	fi
done
[ -n "$chromium" ] || missing "chromium not installed"
[ -s "$txt" ] || fail "$txt: missing or empty"
mkdir -p "$outdir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# speedscope's own way to open a local file (what its CLI does): a script
# that hands the file to the page, named by #localProfilePath.  The name
# has no perf-specific extension: the importer must recognise the content.
printf 'speedscope.loadFileFromBase64("pmcring-script.txt", "%s")\n' \
	"$(base64 -w0 "$txt")" >"$work/profile.js"
ss=$(cd "$ss" && pwd)
rm -f "$outdir/dom.html"
timeout 120 nice "$chromium" --headless --no-sandbox --disable-gpu \
	--disable-quic --no-first-run --disable-background-networking \
	--disable-component-update --disable-sync --user-data-dir="$work/prof" \
	--allow-file-access-from-files --enable-logging=stderr --v=0 \
	--virtual-time-budget=20000 --window-size=1200,800 --dump-dom \
	"file://$ss/index.html#localProfilePath=$work/profile.js&view=sandwich" \
	>"$outdir/dom.html" 2>"$outdir/chromium.log" ||
	fail "chromium --dump-dom failed (see $outdir/chromium.log)"

grep -q '"Importing from linux perf script output"' "$outdir/chromium.log" ||
	fail "speedscope did not import it as linux perf script output:
$(grep CONSOLE "$outdir/chromium.log" | tail -n 5)"
# the toolbar: "NAME" alone, or "NAME <span>(I/N)</span>" with N threads
shown=$(sed -n '/<body/,$p' "$outdir/dom.html" | sed 's/<span[^>]*>//g; s/<\/span>//g' |
	grep -o '>[^<>]*pid: [^<>]*<' | head -n 1 | sed 's/^>//; s/<$//')
[ "$shown" = "$profile_name" ] ||
	fail "profile shown is '$shown', not '$profile_name'"
for name in "$@"; do
	grep -q "</span>$name</td>" "$outdir/dom.html" ||
		fail "frame '$name' not in speedscope's sandwich view"
done
echo "ok: speedscope imported $txt: '$profile_name', frames: $*"
