// SPDX-License-Identifier: GPL-2.0
/*
 * pmcring_emit_generated(): GENERATED records written by another module
 * (see pmcring_emit.h).  The same path as the sources' probes: walk the
 * enabled sessions, reserve in this CPU's ring, fill, commit; with the
 * producer inline (ring_prod.h), the only call left is the clock's.
 */
#include <linux/export.h>
#include <linux/preempt.h>
#include <linux/rculist.h>
#include <linux/smp.h>
#include <linux/string.h>
#include "src.h"
#include "pmcring_emit.h"
#include "ring_prod.h"

static __always_inline int pmcring_emit_gen(u64 seq, u32 ctx, const void *data,
					    u32 len)
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
	/*
	 * This CPU's ring: no migration between the lookup and the commit.
	 * The preemption-disabled section is also the RCU read side of
	 * pmcring_active (synchronize_rcu() waits for it, see pmcring.h), as
	 * the tracepoint core's __DO_TRACE() is for its probes.  perf's
	 * perf_tp_event() takes rcu_read_lock() besides; with PREEMPT_RCU
	 * (Debian's kernels) that is two out-of-line calls per event, which
	 * B1 measured (Documentation/performance.rst).
	 */
	rcu_read_lock_sched_notrace();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (!pmcring_session_wants(s, PMCRING_TYPE_GENERATED))
			continue;
		rb = pmcring_session_ring(s);
		if (!rb)
			continue;
		rec = pmcring_ring_reserve_inline(rb, PMCRING_TYPE_GENERATED,
						  size, &wr);
		if (!rec)
			continue;
		rec->pl_seq = seq;
		rec->pl_cpu = smp_processor_id();
		rec->pl_ctx = ctx;
		memcpy(rec->pl_fill, data, len);
		pmcring_ring_commit_inline(&wr);
		n++;
	}
	rcu_read_unlock_sched_notrace();
	return n;
}

int pmcring_emit_generated(u64 seq, u32 ctx, const void *data, u32 len)
{
	return pmcring_emit_gen(seq, ctx, data, len);
}
EXPORT_SYMBOL_GPL(pmcring_emit_generated);

/*
 * The same as a tracepoint probe, registered as such by the benchmark: the
 * tracepoint calls it directly (a static call while it is the only probe),
 * as it calls any other probe and as it would call a probe of pmcring's own
 * sources.  A probe of the benchmark that called pmcring_emit_generated()
 * through the pointer symbol_get() gives added an indirect call (a
 * retpoline on Debian's kernels) that no probe of the floor paid.
 */
void pmcring_emit_generated_probe(void *unused, u64 seq, u32 cpu, u32 ctx,
				  const u8 *data, u32 len)
{
	pmcring_emit_gen(seq, ctx, data, len);
}
EXPORT_SYMBOL_GPL(pmcring_emit_generated_probe);
