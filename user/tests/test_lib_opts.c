// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: what pmcring_new() hands PMCRING_IOC_CONFIGURE from its
 * options.  opts.pidfd sits where the 0.2 struct had tail padding (same
 * size), so a caller built against 0.2 passes whatever bytes were there:
 * the library takes pidfd only with PMCRING_CFG_F_PIDFD in opts.flags, and
 * CONFIGURE gets 0 otherwise (the module refuses a pidfd without the flag).
 * The device is test_fake_dev.h's: GET_INFO answers a one-CPU device,
 * CONFIGURE keeps the config it was given and fails with EDOM, so the
 * session stops there.  Runs in user/ (make check).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include "test_fake_dev.h"
#include "test_check.h"

static struct pmcring_config seen;
static unsigned int nr_configure;

/* CONFIGURE: keep what it was given, fail */
static int fake_configure(struct pmcring_config *cfg)
{
	memcpy(&seen, cfg, sizeof(seen));
	nr_configure++;
	return -EDOM;
}

/* pmcring_new(@o) on the fake device: the config CONFIGURE got. */
static void configure(const struct pmcring_opts *o, const char *what)
{
	unsigned int n = nr_configure;

	memset(&seen, 0xee, sizeof(seen));
	errno = 0;
	CHECK(!pmcring_new(o) && errno == EDOM,
	      "%s: pmcring_new() should stop at CONFIGURE (errno %d)", what,
	      errno);
	REQUIRE(nr_configure == n + 1, "%s: CONFIGURE not called", what);
}

/* A 0.2 caller: every field set, pidfd's bytes whatever was there. */
static void opts_02(struct pmcring_opts *o, uint32_t flags)
{
	memset(o, 0xa5, sizeof(*o));
	o->sz = sizeof(*o);
	o->dev_path = "/dev/null";
	o->data_pages = 4;
	o->flags = flags;
	o->watermark = 0;
	o->types = 0;
	o->pid = 4242;
	o->callchain_depth = 0;
	o->cpus = NULL;
	o->cpus_size = 0;
}

int main(void)
{
	struct pmcring_opts o;

	fake_info = (struct pmcring_info){
		.abi_version = PMCRING_ABI_VERSION,
		.compat_version = PMCRING_ABI_VERSION,
		.nr_cpus = 1, .page_size = 4096,
		.min_data_pages = 1, .max_data_pages = 1024,
		.max_record = PMCRING_RECORD_MAX,
		.types_supported = ~0ull,
	};

	/* garbage in pidfd, no PIDFD flag: CONFIGURE gets 0, as in 0.2 */
	opts_02(&o, PMCRING_CFG_F_PID);
	configure(&o, "0.2 caller");
	CHECK(seen.pidfd == 0, "pidfd %d without PMCRING_CFG_F_PIDFD",
	      seen.pidfd);
	CHECK(seen.flags == PMCRING_CFG_F_PID && seen.pid == 4242 &&
	      seen.data_pages == 4 && seen.cpus == 0 && seen.cpus_size == 0,
	      "flags %#x pid %d data_pages %u", seen.flags, seen.pid,
	      seen.data_pages);
	CHECK(!seen.__reserved[0] && !seen.__reserved[1], "reserved not 0");

	/* the same with TID: still no pidfd */
	opts_02(&o, PMCRING_CFG_F_PID | PMCRING_CFG_F_TID);
	configure(&o, "0.2 caller, TID");
	CHECK(seen.pidfd == 0, "pidfd %d with TID, without PIDFD", seen.pidfd);

	/* the flag: the caller's pidfd goes through as it is */
	opts_02(&o, PMCRING_CFG_F_PID | PMCRING_CFG_F_PIDFD);
	o.pidfd = 7;
	configure(&o, "PIDFD");
	CHECK(seen.pidfd == 7 && (seen.flags & PMCRING_CFG_F_PIDFD),
	      "pidfd %d flags %#x with PMCRING_CFG_F_PIDFD", seen.pidfd,
	      seen.flags);

	/* a struct that ends before pidfd: the flag finds no pidfd, 0 */
	opts_02(&o, PMCRING_CFG_F_PID | PMCRING_CFG_F_PIDFD);
	o.sz = offsetof(struct pmcring_opts, pidfd);
	configure(&o, "short struct");
	CHECK(seen.pidfd == 0, "pidfd %d past the caller's struct",
	      seen.pidfd);

	/* zeroed options of this release: no flag, pidfd 0 */
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.dev_path = "/dev/null";
	configure(&o, "zeroed");
	CHECK(seen.pidfd == 0 && seen.flags == 0, "pidfd %d flags %#x",
	      seen.pidfd, seen.flags);
	if (!t_failed)
		printf("ok: CONFIGURE gets opts.pidfd only with "
		       "PMCRING_CFG_F_PIDFD\n");
	return t_failed;
}
