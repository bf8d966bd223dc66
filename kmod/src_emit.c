// SPDX-License-Identifier: GPL-2.0
/*
 * pmcring_emit_generated(): GENERATED records written by another module
 * (see pmcring_emit.h).  The same path as the sources' probes: walk the
 * enabled sessions, reserve in this CPU's ring, fill, commit.
 */
#include <linux/export.h>
#include <linux/preempt.h>
#include <linux/rculist.h>
#include <linux/smp.h>
#include <linux/string.h>
#include "src.h"
#include "pmcring_emit.h"

int pmcring_emit_generated(u64 seq, u32 ctx, const void *data, u32 len)
{
	u32 size = (u32)sizeof(struct pmcring_rec_generated) + len;
	struct pmcring_rec_generated *rec;
	struct pmcring_session *s;
	struct pmcring_ring *rb;
	struct pmcring_wr wr;
	int n = 0;

	if (len > PMCRING_RECORD_MAX - sizeof(*rec) || size % 8)
		return -EINVAL;
	if (!pmcring_src_wanted(PMCRING_TYPE_GENERATED))
		return 0;
	/* this CPU's ring: no migration between the lookup and the commit */
	preempt_disable_notrace();
	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (!pmcring_session_wants(s, PMCRING_TYPE_GENERATED))
			continue;
		rb = pmcring_session_ring(s);
		if (!rb)
			continue;
		rec = pmcring_ring_reserve(rb, PMCRING_TYPE_GENERATED, size,
					   &wr);
		if (!rec)
			continue;
		rec->pl_seq = seq;
		rec->pl_cpu = smp_processor_id();
		rec->pl_ctx = ctx;
		memcpy(rec->pl_fill, data, len);
		pmcring_ring_commit(&wr);
		n++;
	}
	rcu_read_unlock();
	preempt_enable_notrace();
	return n;
}
EXPORT_SYMBOL_GPL(pmcring_emit_generated);
