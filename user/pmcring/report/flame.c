// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graph SVG of a report's calling-context tree (see flame.h).
 *
 * Layout as in Brendan Gregg's flame graphs: the root at the bottom, one row
 * per stack depth, each frame as wide as its samples, children sorted by
 * name left to right.  The file is complete when written: every frame is
 * placed and labelled by this code, so it reads without JavaScript; the
 * inline script only adds hover details, click to zoom (with a "Reset zoom"
 * button), and a search box (an XHTML input in a foreignObject) whose
 * regular expression highlights matching frames and says which share of
 * the samples they cover.  URL parameters ?s=REGEX and
 * ?f=FRAME-ID preset a search and a zoom.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define FLAME_WIDTH		1200u
#define FLAME_PAD		10.0	/* left and right margin */
#define FLAME_ROW		17.0	/* frame height + 1 px gap */
#define FLAME_TOP		74.0	/* title, subtitle, legend */
#define FLAME_BOTTOM		40.0	/* details line */
#define FLAME_FONT_PX		12.0
#define FLAME_CHAR_PX		7.0	/* average glyph width at 12 px */
#define FLAME_MIN_PX		0.1	/* narrower frames are left out */

struct flame {
	struct report		*r;
	const struct report_node *nodes;
	FILE			*out;
	double			scale;	/* px per sample */
	double			height;	/* of the image */
	unsigned int		width;
	unsigned int		max_depth;
};

/* Text as XML character data: escaped, invalid UTF-8 replaced by '?'. */
static void flame_xml(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p && n < max) {
		unsigned int len = 1, i;

		if (*p >= 0xc2 && *p <= 0xdf)
			len = 2;
		else if (*p >= 0xe0 && *p <= 0xef)
			len = 3;
		else if (*p >= 0xf0 && *p <= 0xf4)
			len = 4;
		else if (*p >= 0x80)
			len = 0;	/* invalid lead byte */
		for (i = 1; i < len; i++)
			if ((p[i] & 0xc0) != 0x80)
				len = 0;
		if (len > 1) {
			fwrite(p, 1, len, out);
			p += len;
			n++;
			continue;
		}
		if (*p == '&')
			fputs("&amp;", out);
		else if (*p == '<')
			fputs("&lt;", out);
		else if (*p == '>')
			fputs("&gt;", out);
		else if (*p == '"')
			fputs("&quot;", out);
		else if (*p == '\'')
			fputs("&apos;", out);
		else	/* control characters would make the XML invalid */
			fputc(len && *p >= ' ' && *p != 0x7f ? *p : '?', out);
		p++;
		n++;
	}
}

/* Characters of @name shown in @px pixels ("na.." when cut), into @buf. */
static const char *flame_label(const char *name, double px, char *buf,
			       size_t sz)
{
	size_t fit = px > 6 ? (size_t)((px - 6) / FLAME_CHAR_PX) : 0;
	size_t len = strlen(name);

	if (fit < 3) {
		buf[0] = 0;
	} else if (len <= fit) {
		snprintf(buf, sz, "%s", name);
	} else {
		if (fit - 2 >= sz)
			fit = sz - 1;
		/* do not cut inside a UTF-8 sequence */
		fit -= 2;
		while (fit && ((unsigned char)name[fit] & 0xc0) == 0x80)
			fit--;
		snprintf(buf, sz, "%.*s..", (int)fit, name);
	}
	return buf;
}

/* A color of the kind's palette, varied by the name (stable across runs). */
static void flame_color(enum sym_kind kind, const char *name, bool all,
			char *buf, size_t sz)
{
	uint32_t h = 2166136261u;
	double v1, v2, v3;
	int r, g, b;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	v1 = (h & 0xff) / 255.0;
	v2 = ((h >> 8) & 0xff) / 255.0;
	v3 = ((h >> 16) & 0xff) / 255.0;
	switch (all ? SYM_KIND_NR : kind) {
	case SYM_KIND_USER:	/* warm: red to yellow */
		r = 205 + (int)(50 * v3);
		g = (int)(230 * v1);
		b = (int)(55 * v2);
		break;
	case SYM_KIND_KERNEL:	/* cool: blue to aqua, never violet */
		r = 40 + (int)(50 * v1);
		g = 160 + (int)(60 * v2);
		b = 200 + (int)(55 * v3);
		break;
	case SYM_KIND_UNKNOWN:	/* gray */
		r = 175 + (int)(40 * v1);
		g = r;
		b = r;
		break;
	case SYM_KIND_ROOT:	/* violet: the processes */
		r = 180 + (int)(40 * v1);
		g = 150 + (int)(30 * v1);
		b = 220 + (int)(30 * v2);
		break;
	default:		/* the "all" frame */
		r = 210;
		g = 210;
		b = 210;
		break;
	}
	snprintf(buf, sz, "rgb(%d,%d,%d)", r, g, b);
}

static const char *flame_kind_name(enum sym_kind k)
{
	switch (k) {
	case SYM_KIND_USER:	return "user";
	case SYM_KIND_KERNEL:	return "kernel";
	case SYM_KIND_UNKNOWN:	return "unknown";
	case SYM_KIND_ROOT:	return "process";
	default:		return "";
	}
}

static void flame_depth(struct flame *fl, uint32_t node, unsigned int depth)
{
	uint32_t c;

	if (depth > fl->max_depth)
		fl->max_depth = depth;
	for (c = fl->nodes[node].child; c; c = fl->nodes[c].sibling)
		if (fl->nodes[c].total * fl->scale >= FLAME_MIN_PX)
			flame_depth(fl, c, depth + 1);
}

static void flame_frame(struct flame *fl, uint32_t node, uint64_t x,
			unsigned int depth)
{
	const struct report_node *n = &fl->nodes[node];
	const struct sym_frame *f = node ?
		sym_frame_by_id(report_sym(fl->r), n->frame) : NULL;
	const char *name = f ? f->name : "all";
	uint64_t total = fl->nodes[0].total;
	double px = FLAME_PAD + x * fl->scale, w = n->total * fl->scale;
	double y = fl->height - FLAME_BOTTOM - (depth + 1) * FLAME_ROW;
	char color[32], label[512];

	flame_color(f ? f->kind : SYM_KIND_NR, name, !f, color, sizeof(color));
	fprintf(fl->out, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%"
		PRIu64 "\" data-d=\"%u\" data-id=\"%" PRIu32 "\" data-n=\"",
		x, n->total, depth, node);
	flame_xml(fl->out, name, 4096);
	fprintf(fl->out, "\"><title>");
	flame_xml(fl->out, name, 4096);
	if (f && f->module[0]) {
		fputs(" [", fl->out);
		flame_xml(fl->out, f->module, 512);
		fputc(']', fl->out);
	}
	fprintf(fl->out, " (%s) %" PRIu64 " samples, %.2f%%; self %" PRIu64
		"</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
		"fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
		f ? flame_kind_name(f->kind) : "every sample", n->total,
		100.0 * (double)n->total / (double)total, n->self, px, y, w,
		FLAME_ROW - 1, color, px + 3, y + FLAME_ROW - 5);
	flame_xml(fl->out, flame_label(name, w, label, sizeof(label)), 512);
	fputs("</text></g>\n", fl->out);
}

static int flame_tree(struct flame *fl, uint32_t node, uint64_t x,
		      unsigned int depth)
{
	uint32_t *kids, nk, i;
	int err;

	flame_frame(fl, node, x, depth);
	err = report_children_sorted(fl->r, node, &kids, &nk);
	if (err)
		return err;
	for (i = 0; i < nk && !err; i++) {
		const struct report_node *c = &fl->nodes[kids[i]];

		if (c->total * fl->scale >= FLAME_MIN_PX)
			err = flame_tree(fl, kids[i], x, depth + 1);
		x += c->total;
	}
	free(kids);
	return err;
}

/* The interactive part: runs on load of the SVG, no external resources. */
static const char flame_js[] =
"var W, PAD = 10, CH = 7, frames, details, matched, resetBtn, zoomed = null,\n"
"    searching = null, total = 1;\n"
"function $(id) { return document.getElementById(id); }\n"
"function init(evt) {\n"
"  W = +document.documentElement.getAttribute('width');\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  details = $('details'); matched = $('matched'); resetBtn = $('reset');\n"
"  total = +frames[0].getAttribute('data-w') || 1;\n"
"  frames.forEach(function (g) {\n"
"    g.addEventListener('click', function () { zoom(g); });\n"
"    g.addEventListener('mouseover', function () {\n"
"      details.textContent = g.querySelector('title').textContent; });\n"
"    g.addEventListener('mouseout', function () {\n"
"      details.textContent = ' '; });\n"
"  });\n"
"  resetBtn.addEventListener('click', function () { zoom(frames[0]); });\n"
"  var box = $('q');\n"
"  box.addEventListener('input', function () { search(box.value); });\n"
"  box.addEventListener('keydown', function (e) { e.stopPropagation();\n"
"    if (e.key === 'Escape') { box.value = ''; search(null); box.blur(); } });\n"
"  document.addEventListener('keydown', function (e) {\n"
"    if ((e.ctrlKey && e.key === 'f') || e.key === '/') {\n"
"      e.preventDefault(); box.focus(); box.select(); }\n"
"    if (e.key === 'Escape') { search(null); zoom(frames[0]); }\n"
"  });\n"
"  var q = new URLSearchParams(location.search);\n"
"  if (q.get('f')) frames.forEach(function (g) {\n"
"    if (g.getAttribute('data-id') === q.get('f')) zoom(g); });\n"
"  if (q.get('s')) { box.value = q.get('s'); search(q.get('s')); }\n"
"}\n"
"function label(name, px) {\n"
"  var fit = Math.floor((px - 6) / CH);\n"
"  if (fit < 3) return '';\n"
"  return name.length <= fit ? name : name.slice(0, fit - 2) + '..';\n"
"}\n"
"function place(g, x, w) {\n"
"  var r = g.querySelector('rect'), t = g.querySelector('text');\n"
"  r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));\n"
"  t.setAttribute('x', (x + 3).toFixed(2));\n"
"  t.textContent = label(g.getAttribute('data-n'), w);\n"
"}\n"
"function zoom(z) {\n"
"  var zx = +z.getAttribute('data-x'), zw = +z.getAttribute('data-w'),\n"
"      zd = +z.getAttribute('data-d'), s = (W - 2 * PAD) / zw;\n"
"  zoomed = zd ? z : null;\n"
"  resetBtn.style.display = zoomed ? 'inline' : 'none';\n"
"  frames.forEach(function (g) {\n"
"    var x = +g.getAttribute('data-x'), w = +g.getAttribute('data-w'),\n"
"        d = +g.getAttribute('data-d');\n"
"    g.classList.remove('hide'); g.classList.remove('anc');\n"
"    if (d < zd && x <= zx && x + w >= zx + zw) {\n"
"      g.classList.add('anc'); place(g, PAD, W - 2 * PAD);\n"
"    } else if (d >= zd && x >= zx && x + w <= zx + zw && w * s >= 0.1) {\n"
"      place(g, PAD + (x - zx) * s, w * s);\n"
"    } else {\n"
"      g.classList.add('hide');\n"
"    }\n"
"  });\n"
"}\n"

"function search(re) {\n"
"  var rx = null, spans = [];\n"
"  searching = re || null;\n"
"  try { if (searching) rx = new RegExp(searching); } catch (e) {\n"
"    matched.textContent = 'bad regular expression'; return; }\n"
"  frames.forEach(function (g) {\n"
"    var r = g.querySelector('rect');\n"
"    if (!r.hasAttribute('data-c')) r.setAttribute('data-c', r.getAttribute('fill'));\n"
"    if (rx && rx.test(g.getAttribute('data-n'))) {\n"
"      r.setAttribute('fill', 'rgb(230,0,230)');\n"
"      spans.push([+g.getAttribute('data-x'), +g.getAttribute('data-w')]);\n"
"    } else {\n"
"      r.setAttribute('fill', r.getAttribute('data-c'));\n"
"    }\n"
"  });\n"
"  /* nested matches cover the same samples: merge the intervals */\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  var covered = 0, end = -1;\n"
"  spans.forEach(function (s) {\n"
"    var e = s[0] + s[1];\n"
"    if (s[0] >= end) { covered += s[1]; end = e; }\n"
"    else if (e > end) { covered += e - end; end = e; }\n"
"  });\n"
"  matched.textContent = rx ? 'Matched: ' + (100 * covered / total).toFixed(2) +\n"
"    '% (' + covered + ' of ' + total + ' samples)' : ' ';\n"

"}\n";

static void flame_header(struct flame *fl, const struct flame_opts *o)
{
	static const enum sym_kind legend[] = {
		SYM_KIND_USER, SYM_KIND_KERNEL, SYM_KIND_UNKNOWN, SYM_KIND_ROOT,
	};
	FILE *out = fl->out;
	unsigned int i;
	char color[32];

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%.0f\" "
		"viewBox=\"0 0 %u %.0f\" onload=\"init(evt)\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<!-- flame graph written by pmcring report -->\n",
		fl->width, fl->height, fl->width, fl->height);
	fprintf(out, "<style type=\"text/css\">\n"
		"text { font-family: Verdana, 'DejaVu Sans', sans-serif; "
		"font-size: %.0fpx; fill: rgb(0,0,0); }\n"
		"#title { font-size: 17px; font-weight: bold; }\n"
		".btn { cursor: pointer; fill: rgb(40,40,160); }\n"
		".btn:hover { text-decoration: underline; }\n"
		"g.f { cursor: pointer; }\n"
		"g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
		"g.f text { pointer-events: none; }\n"
		"g.anc { opacity: 0.55; }\n"
		"g.hide { display: none; }\n"
		"</style>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
		FLAME_FONT_PX, flame_js);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%.0f\" "
		"fill=\"rgb(248,248,242)\"/>\n", fl->width, fl->height);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"24\" "
		"text-anchor=\"middle\">", fl->width / 2.0);
	flame_xml(out, o->title ? o->title : "pmcring flame graph", 256);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"42\" "
		"text-anchor=\"middle\" fill=\"rgb(90,90,90)\">", fl->width / 2.0);
	if (o->subtitle)
		flame_xml(out, o->subtitle, 256);
	fprintf(out, " - %" PRIu64 " samples</text>\n", fl->nodes[0].total);
	fprintf(out, "<text id=\"reset\" class=\"btn\" x=\"%.1f\" y=\"24\" "
		"style=\"display: none\">Reset zoom</text>\n", FLAME_PAD);
	/* the search box: an HTML input inside the SVG */
	fprintf(out, "<foreignObject x=\"%.1f\" y=\"8\" width=\"220\" "
		"height=\"26\"><input xmlns=\"http://www.w3.org/1999/xhtml\" "
		"id=\"q\" type=\"search\" placeholder=\"Search (regex)\" "
		"title=\"regular expression; matching frames turn magenta\" "
		"style=\"width: 210px; font: 12px Verdana, 'DejaVu Sans', "
		"sans-serif; padding: 2px 4px\"/></foreignObject>\n",
		fl->width - FLAME_PAD - 220);
	/* legend: the colors of the frame kinds */
	for (i = 0; i < ARRAY_SIZE(legend); i++) {
		double x = FLAME_PAD + i * 110.0;

		flame_color(legend[i], "legend", false, color, sizeof(color));
		fprintf(out, "<rect x=\"%.1f\" y=\"52\" width=\"14\" height=\"12\" "
			"fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" y=\"62\">%s</text>\n",
			x, color, x + 18, flame_kind_name(legend[i]));
	}
	fprintf(out, "<text x=\"%.1f\" y=\"62\" text-anchor=\"end\" "
		"fill=\"rgb(90,90,90)\">click: zoom, Ctrl-F or /: search, "
		"Esc: reset</text>\n", fl->width - FLAME_PAD);
	fprintf(out, "<text id=\"details\" x=\"%.1f\" y=\"%.1f\"> </text>\n",
		FLAME_PAD, fl->height - 14);
	fprintf(out, "<text id=\"matched\" x=\"%.1f\" y=\"%.1f\" "
		"text-anchor=\"end\"> </text>\n", fl->width - FLAME_PAD,
		fl->height - 14);
}

int flame_write_svg(struct report *r, FILE *out, const struct flame_opts *o)
{
	struct flame fl = { .r = r, .out = out };
	uint32_t nr;
	int err = 0;

	fl.nodes = report_nodes(r, &nr);
	fl.width = o->width ? o->width : FLAME_WIDTH;
	if (fl.nodes[0].total)
		fl.scale = (fl.width - 2 * FLAME_PAD) / (double)fl.nodes[0].total;
	if (fl.nodes[0].total)
		flame_depth(&fl, 0, 0);
	fl.height = FLAME_TOP + (fl.max_depth + 1) * FLAME_ROW + FLAME_BOTTOM + 8;
	flame_header(&fl, o);
	if (fl.nodes[0].total)
		err = flame_tree(&fl, 0, 0, 0);
	else
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
			"No samples</text>\n<g class=\"f\" data-x=\"0\" "
			"data-w=\"0\" data-d=\"0\" data-id=\"0\" data-n=\"all\">"
			"<title>all</title><rect/><text/></g>\n",
			fl.width / 2.0, fl.height - FLAME_BOTTOM - FLAME_ROW);
	fputs("</svg>\n", out);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}
