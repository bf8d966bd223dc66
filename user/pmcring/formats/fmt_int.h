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

#endif /* PMCRING_FMT_INT_H */
