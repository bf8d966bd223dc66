// SPDX-License-Identifier: GPL-2.0
/*
 * Record sources.  Placeholder until the sources land: sessions carry only
 * the records written through ioctls (WRITELOG, GENERATE).
 */
#include <linux/errno.h>
#include "pmcring.h"

int pmcring_src_init(void)
{
	return 0;
}

void pmcring_src_exit(void)
{
}

int pmcring_src_configure(struct pmcring_session *s,
			  const struct pmcring_config *cfg)
{
	if (cfg->flags & (PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_PID))
		return -EOPNOTSUPP;
	return 0;
}

int pmcring_src_enable(struct pmcring_session *s)
{
	return 0;
}

void pmcring_src_disable(struct pmcring_session *s)
{
}

long pmcring_src_add_counter(struct pmcring_session *s,
			     struct pmcring_counter __user *arg)
{
	return -EOPNOTSUPP;
}

void pmcring_src_release(struct pmcring_session *s)
{
}
