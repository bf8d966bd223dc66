// SPDX-License-Identifier: GPL-2.0
/*
 * PMU events through libpfm4: `-e` names beyond perf's generic ones, and
 * `pmcring list`'s PMU section.  See pfm.h.
 */
#include <errno.h>
#include <string.h>

#include "pfm.h"

#ifdef PMCRING_HAVE_LIBPFM
#include <perfmon/pfmlib_perf_event.h>

static int pfm_ready(void)
{
	static int ready = -1;

	if (ready < 0)
		ready = pfm_initialize() == PFM_SUCCESS;
	return ready;
}

int pfm_event_encode(const char *name, struct pfm_event *pe)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;

	if (!pfm_ready())
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	if (pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3,
				      PFM_OS_PERF_EVENT, &arg) != PFM_SUCCESS)
		return -ENOENT;
	pe->type = attr.type;
	pe->config = attr.config;
	pe->exclude_user = attr.exclude_user;
	pe->exclude_kernel = attr.exclude_kernel;
	return 0;
}

int pfm_event_list(FILE *f)
{
	int pmu, n = 0;

	if (!pfm_ready())
		return -ENOENT;
	pfm_for_all_pmus(pmu) {
		pfm_pmu_info_t pinfo;
		int i;

		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS ||
		    !pinfo.is_present)
			continue;
		for (i = pinfo.first_event; i != -1;
		     i = pfm_get_event_next(i)) {
			pfm_event_info_t info;

			memset(&info, 0, sizeof(info));
			info.size = sizeof(info);
			if (pfm_get_event_info(i, PFM_OS_PERF_EVENT,
					       &info) != PFM_SUCCESS)
				continue;
			fprintf(f, "  %s::%s  [%s]\n", pinfo.name, info.name,
				pinfo.desc ? pinfo.desc : "PMU event");
			n++;
		}
	}
	return n;
}
#else
int pfm_event_encode(const char *name, struct pfm_event *pe)
{
	(void)name;
	(void)pe;
	return -ENOENT;
}

int pfm_event_list(FILE *f)
{
	(void)f;
	return -ENOENT;
}
#endif
