/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interactive flame graph SVG of a report's calling-context tree: one
 * self-contained file (inline CSS and JavaScript, no external resources)
 * with hover details, click to zoom, search, frames colored by kind.
 */
#ifndef PMCRING_FLAME_H
#define PMCRING_FLAME_H

#include <stdio.h>

#include "report.h"

struct flame_opts {
	const char	*title;		/* NULL: "pmcring flame graph" */
	const char	*subtitle;	/* NULL: none */
	unsigned int	width;		/* pixels; 0: 1200 */
};

/* 0 or -errno (-EIO when writing @out failed). */
int flame_write_svg(struct report *r, FILE *out, const struct flame_opts *o);

#endif /* PMCRING_FLAME_H */
