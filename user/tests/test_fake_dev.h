/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A stand-in for /dev/pmcring in a host test: the test opens a session on
 * /dev/null and this file's ioctl(), which wins over libc's (and ASan's)
 * for the libpmcring linked into the test, answers for it.  GET_INFO gives
 * fake_info and makes its fd the device's (fake_fd); CONFIGURE on that fd
 * calls the test's fake_configure() (0 or -errno); other requests on it
 * fail with ENOTTY; every other fd goes to the kernel.
 */
#ifndef TEST_FAKE_DEV_H
#define TEST_FAKE_DEV_H

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "libpmcring_test.h"

static struct pmcring_info fake_info;
static int fake_fd = -1;

static int fake_configure(struct pmcring_config *cfg);

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int err;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == PMCRING_IOC_GET_INFO) {
		fake_fd = fd;
		memcpy(arg, &fake_info, sizeof(fake_info));
		return 0;
	}
	if (fd != fake_fd || fd < 0)
		return (int)syscall(SYS_ioctl, fd, req, arg);
	err = req == PMCRING_IOC_CONFIGURE ? fake_configure(arg) : -ENOTTY;
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

#endif /* TEST_FAKE_DEV_H */
