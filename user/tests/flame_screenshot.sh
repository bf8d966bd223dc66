#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: render a flame graph SVG of `pmcring report --svg` with
# headless Chromium and check that it is a real, readable picture: the PNG
# screenshot exists, has the window's size and more than a few colors; the
# SVG is well-formed XML; the DOM after the inline script ran holds the
# expected frame names; a search (?s=REGEX) highlights frames and reports
# the share it matched; a zoom (?f=ID) hides the frames outside it.
#
#   flame_screenshot.sh SVG OUTDIR [FRAME-NAME...]
#
# Writes OUTDIR/flame.png (and flame-search.png, flame-zoom.png, dom.html).  Exits 0 on
# success, 1 on failure, 4 (kselftest skip) when chromium is missing, with
# the reason on the last line; in CI (CI set) a missing chromium is a
# failure.
set -eu

svg=$1
outdir=$2
shift 2

skip() { echo "SKIP: $*"; exit 4; }
fail() { echo "FAIL: $*"; exit 1; }

chromium=
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then
		chromium=$(command -v "$c")
		break
	fi
done
if [ -z "$chromium" ]; then
	# make deps installs it: in CI a skip would hide a broken setup
	[ -z "${CI:-}" ] || fail "chromium not installed (CI: make deps installs it)"
	skip "chromium not installed (make deps, or apt-get install chromium)"
fi
[ -s "$svg" ] || fail "$svg: missing or empty"
mkdir -p "$outdir"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

abs=$(cd "$(dirname "$svg")" && pwd)/$(basename "$svg")

# One headless run; stderr (dbus noise) goes to a log kept for failures.
chrome() {
	timeout 120 nice "$chromium" --headless --no-sandbox --disable-gpu \
		--disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync \
		--user-data-dir="$profile" --window-size=1200,800 "$@" \
		2>>"$outdir/chromium.log"
}

# Well-formed XML: a browser shows a parse error page instead of the graph.
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' \
		"$svg" || fail "$svg is not well-formed XML"
fi

rm -f "$outdir/flame.png"
chrome --screenshot="$outdir/flame.png" "file://$abs" >/dev/null ||
	fail "chromium --screenshot failed (see $outdir/chromium.log)"
[ -s "$outdir/flame.png" ] || fail "no screenshot written"

# PNG signature, IHDR size 1200x800, and a picture rather than a blank page.
if command -v python3 >/dev/null 2>&1; then
	python3 - "$outdir/flame.png" <<'EOF' || fail "screenshot is not a flame graph picture"
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
w, h, depth, ctype = struct.unpack('>IIBB', data[16:26])
assert (w, h) == (1200, 800), 'size %dx%d' % (w, h)
assert depth == 8 and ctype in (2, 6), 'color type %d depth %d' % (ctype, depth)
idat, off = b'', 8
while off < len(data):
    n, = struct.unpack('>I', data[off:off + 4])
    if data[off + 4:off + 8] == b'IDAT':
        idat += data[off + 8:off + 8 + n]
    off += 12 + n
raw = zlib.decompress(idat)
bpp = 4 if ctype == 6 else 3
stride = w * bpp
prev, rows = bytearray(stride), []
for y in range(h):                # undo the PNG row filters
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
colors = set()
for line in rows[::2]:
    for x in range(0, stride, bpp * 3):
        colors.add(bytes(line[x:x + 3]))
print('png %dx%d, %d distinct colors' % (w, h, len(colors)))
assert len(colors) >= 20, 'only %d colors: blank page?' % len(colors)
EOF
else
	size=$(wc -c <"$outdir/flame.png")
	[ "$size" -gt 8000 ] || fail "screenshot only $size bytes"
fi

# The DOM after the script ran: frames present, search and zoom working.
chrome --dump-dom "file://$abs?s=." >"$outdir/dom.html" ||
	fail "chromium --dump-dom failed"
grep -q 'class="f"' "$outdir/dom.html" || fail "no frames in the DOM"
for name in "$@"; do
	grep -q "data-n=\"$name\"" "$outdir/dom.html" ||
		fail "frame '$name' not in the DOM"
done
grep -q 'Matched: 100.00%' "$outdir/dom.html" ||
	fail "search ?s=. did not match every sample (script not run?)"

grep -q '<input[^>]*id="q"' "$outdir/dom.html" || fail "no search box"
# A search for the first expected name, as a user typing it would see it.
if [ $# -gt 0 ]; then
	chrome --screenshot="$outdir/flame-search.png" "file://$abs?s=$1" \
		>/dev/null || fail "chromium --screenshot (search) failed"
fi

# Zoom into the first process (frame id 1 is a child of the root).
chrome --dump-dom "file://$abs?f=1" >"$outdir/dom-zoom.html" ||
	fail "chromium --dump-dom (zoom) failed"
grep -q 'id="reset" class="btn"[^>]*display: inline' "$outdir/dom-zoom.html" ||
	fail "zoom did not show the Reset zoom button"
chrome --screenshot="$outdir/flame-zoom.png" "file://$abs?f=1" >/dev/null ||
	fail "chromium --screenshot (zoom) failed"

echo "ok: $svg renders ($(wc -c <"$outdir/flame.png") byte PNG), frames: $*"
