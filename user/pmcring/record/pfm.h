/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PMU events through libpfm4 (Debian libpfm4-dev), kept apart because its
 * <perfmon/perf_event.h> and <linux/perf_event.h> both define
 * struct perf_event_attr.  Built without libpfm4, every call finds nothing.
 */
#ifndef PMCRING_PFM_H
#define PMCRING_PFM_H

#include <stdint.h>
#include <stdio.h>

struct pfm_event {
	uint32_t	type;		/* perf_event_attr.type */
	uint64_t	config;
	int		exclude_user, exclude_kernel;
};

/* Encode @name ("INST_RETIRED:ANY_P:u"): 0, or -ENOENT. */
int pfm_event_encode(const char *name, struct pfm_event *pe);
/*
 * Print the events of each PMU present on this machine, one per line
 * with its description; the number printed, or -ENOENT without libpfm4.
 */
int pfm_event_list(FILE *f);

#endif /* PMCRING_PFM_H */
