/* SPDX-License-Identifier: GPL-2.0 */
/* Writer plumbing shared by fmt.c and the fmt_<format>.c files. */
#ifndef PMCRING_FMT_INT_H
#define PMCRING_FMT_INT_H

#include "fmt.h"

struct fmt_ops {
	int	(*begin)(struct fmt_writer *w, struct out_batch *b);
	int	(*record)(struct fmt_writer *w, struct out_batch *b,
			  const struct fmt_rec *r);
	bool	(*direct)(struct fmt_writer *w, struct fmt_direct *d);
	int	(*flush)(struct fmt_writer *w, struct out_batch *b);
	int	(*end)(struct fmt_writer *w, struct out_batch *b, uint64_t ts);
	int	(*abort)(struct fmt_writer *w);
	void	(*free)(struct fmt_writer *w);
};

struct fmt_writer {
	const struct fmt_ops	*ops;
	struct fmt_opts		o;
	void			*priv;
};

extern const struct fmt_ops fmt_pmclog_ops, fmt_barman_ops, fmt_blob_ops;

/* pmcids with a period kept per ring: the module's go up to 8 */
#define FMT_MAX_PMCID	64u

/*
 * The last PERIOD of each ring and pmcid, [ring * FMT_MAX_PMCID + pmcid],
 * 0 for none: the period of the CALLCHAINs that follow on that ring.
 */
struct fmt_period_last {
	uint64_t	*v;
	unsigned int	nr_rings;
};

/*
 * The slot of @ring and @pmcid, grown as rings appear (up to 65536);
 * NULL for a pmcid beyond FMT_MAX_PMCID or when memory runs out.
 */
uint64_t *fmt_period_last(struct fmt_period_last *t, uint32_t ring,
			  uint32_t pmcid);

#endif /* PMCRING_FMT_INT_H */
