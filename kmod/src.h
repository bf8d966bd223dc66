/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record sources internals shared by src.c (sessions, permissions, hooks),
 * src_sample.c (counters, callchains), src_sched.c (tracepoints) and
 * src_map.c (mappings, synthesis).  The ring core never includes this.
 */
#ifndef _PMCRING_SRC_H
#define _PMCRING_SRC_H

#include <linux/bitops.h>
#include <linux/sched.h>
#include <linux/threads.h>
#include "pmcring.h"

/* Counters one session may allocate; pmcid = index + 1, 0 = none. */
#define PMCRING_SRC_MAX_COUNTERS	8
/* CALLCHAIN depth when the configuration says 0. */
#define PMCRING_SRC_DEFAULT_DEPTH	128
/* Pids a per-pid session can follow: one bit per pid of the init ns. */
#define PMCRING_SRC_PID_BITS		PID_MAX_LIMIT

struct linux_binprm;
struct pmcring_src_counter;

/* Per-session state of the sources, s->src. */
struct pmcring_src_state {
	struct pmcring_session	*s;
	/*
	 * tgids (init pid ns) followed by a PMCRING_CFG_F_PID session; NULL
	 * for other sessions.  Set and cleared with atomic bitops by the
	 * fork/exit probes, tested locklessly in any context including NMI.
	 */
	unsigned long		*targets;
	pid_t			target;		/* tgid of config.pid, init ns */
	u32			depth;		/* CALLCHAIN frames, <= 512 */
	u32			nr_counters;	/* written under s->lock */
	u32			pmcid;		/* first counter's id, or 0 */
	bool			system_wide;
	bool			hooked;		/* holds hook references */
	struct pmcring_src_counter *counters[PMCRING_SRC_MAX_COUNTERS];
};

/* Record types each hook produces, for the cheap early-out. */
#define PMCRING_SRC_T(t)	PMCRING_TYPE_BIT(PMCRING_TYPE_##t)

/*
 * OR of the type masks of all enabled sessions, read locklessly by the
 * probes to leave early; src.c updates it under pmcring_src_mutex.
 */
extern u64 pmcring_src_want;

static inline bool pmcring_src_wanted(unsigned int type)
{
	return READ_ONCE(pmcring_src_want) & PMCRING_TYPE_BIT(type);
}

/*
 * Does session @s follow task @t?  System-wide sessions follow every task;
 * per-pid sessions the tgids in their target set; others none.  Any context.
 */
static inline bool pmcring_src_follows(const struct pmcring_session *s,
				       struct task_struct *t)
{
	const struct pmcring_src_state *st = s->src;
	pid_t tgid;

	if (st->system_wide)
		return true;
	if (!st->targets)
		return false;
	tgid = task_tgid_nr(t);
	return tgid > 0 && tgid < PMCRING_SRC_PID_BITS &&
	       test_bit(tgid, st->targets);
}

/*
 * Write one record of @type and length @len whose body (bytes 16..len-1)
 * is in @body, into this CPU's ring of @s.  Any context; preemption must
 * be disabled.
 */
void pmcring_src_emit(struct pmcring_session *s, unsigned int type, u32 len,
		      const void *body);
/* The same from process context: disables preemption itself. */
void pmcring_src_emit_task(struct pmcring_session *s, unsigned int type,
			   u32 len, const void *body);
/* A record with a trailing NUL-terminated path (PMCATTACH, PROCEXEC, MAP_IN). */
void pmcring_src_emit_path(struct pmcring_session *s, unsigned int type,
			   const void *fixed, u32 fixed_len, const char *path);

/* src_sample.c */
int pmcring_src_sample_init(void);
void pmcring_src_sample_exit(void);
struct pmcring_src_counter *pmcring_src_counter_new(struct pmcring_session *s,
						    struct pmcring_counter *c);
void pmcring_src_counter_commit(struct pmcring_session *s,
				struct pmcring_src_counter *ctr,
				const struct pmcring_counter *c);
void pmcring_src_counter_drop(struct pmcring_src_counter *ctr);
void pmcring_src_counters_arm(struct pmcring_session *s, bool on);
void pmcring_src_counters_free(struct pmcring_session *s);

/* src_sched.c */
int pmcring_src_sched_get(struct pmcring_session *s);
void pmcring_src_sched_put(struct pmcring_session *s);
void pmcring_src_sched_exit(void);
void pmcring_src_targets_fill(struct pmcring_session *s);

/* src_map.c */
int pmcring_src_map_init(void);
void pmcring_src_map_exit(void);
int pmcring_src_map_get(struct pmcring_session *s);
void pmcring_src_map_put(struct pmcring_session *s);
void pmcring_src_map_exec(struct pmcring_session *s, struct task_struct *t,
			  struct linux_binprm *bprm);
void pmcring_src_synthesize(struct pmcring_session *s);
int pmcring_src_exe_path(struct task_struct *t, char *buf, int size,
			 const char **path);

#endif /* _PMCRING_SRC_H */
