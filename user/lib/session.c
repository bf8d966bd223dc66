// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A session on /dev/pmcring: open, configure, map the region of every CPU
 * that has a ring (control page read-write, the rest read-only, one
 * contiguous view per CPU), and the ioctl wrappers.  A possible CPU that
 * has no ring yet (mmap() says ENODEV: not online since CONFIGURE) gets a
 * stand-in iterator, an idle CPU to the merge, until its ring appears:
 * pmcring_session_refresh() maps it when the producer pages' nr_rings
 * grows, from the merge's clock read and from pmcring_cpu_buffer().
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"

#define PMCRING_DEFAULT_DATA_PAGES	64u

struct pmcring {
	int			fd;
	struct pmcring_info	info;
	uint64_t		region_size;
	unsigned int		nr_cpus;
	unsigned int		nr_mapped;	/* rings mapped */
	unsigned int		first;		/* a CPU with a ring mapped */
	struct pmcring_cpu_buf	*bufs;		/* [nr_cpus] */
};

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

static uint32_t pick_data_pages(const struct pmcring_info *info, uint32_t want)
{
	if (!want) {
		want = PMCRING_DEFAULT_DATA_PAGES;
		if (want < info->min_data_pages)
			want = info->min_data_pages;
		if (info->max_data_pages && want > info->max_data_pages)
			want = info->max_data_pages;
	}
	return want;
}

/* Map @cpu's ring into its stand-in: 0, -ENODEV (no ring yet), -errno. */
static int map_cpu(struct pmcring *s, unsigned int cpu)
{
	void *base = pmcring_map_region(s->fd, (off_t)(cpu * s->region_size),
					s->region_size, s->info.page_size);
	int err;

	if (!base)
		return -errno;
	err = pmcring_cpu_buf_adopt(&s->bufs[cpu], base, s->region_size);
	if (err) {
		munmap(base, s->region_size);
		return err;
	}
	s->nr_mapped++;
	return 0;
}

static int map_all(struct pmcring *s)
{
	/* the layout: region = 2 pages + the data mapped twice */
	uint64_t data_size = (s->region_size - 2 * s->info.page_size) / 2;
	unsigned int cpu;
	int err;

	if (s->region_size <= 2 * s->info.page_size ||
	    data_size & (data_size - 1))
		return -EPROTO;
	s->bufs = calloc(s->nr_cpus, sizeof(*s->bufs));
	if (!s->bufs)
		return -ENOMEM;
	for (cpu = 0; cpu < s->nr_cpus; cpu++)
		pmcring_cpu_buf_init_absent(&s->bufs[cpu], cpu, data_size);
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		err = map_cpu(s, cpu);
		if (err == -ENODEV)
			continue;
		if (err)
			return err;
		if (s->nr_mapped == 1)
			s->first = cpu;
	}
	/* CONFIGURE gave the CPU that called it a ring at least */
	return s->nr_mapped ? 0 : -EPROTO;
}

int pmcring_session_refresh(struct pmcring *s)
{
	const struct pmcring_prod_page *prod;
	unsigned int cpu, n = 0;
	uint64_t nr;
	int err;

	if (s->nr_mapped == s->nr_cpus)
		return 0;
	prod = s->bufs[s->first].prod;
	/*
	 * After T; pairs with the kernel's smp_store_release() of nr_rings
	 * (pmcring_ring_set_nr_rings()), made after the ring was published.
	 */
	nr = smp_load_acquire(&prod->nr_rings);
	if (nr <= s->nr_mapped)
		return 0;
	for (cpu = 0; cpu < s->nr_cpus && s->nr_mapped < nr; cpu++) {
		if (s->bufs[cpu].base)
			continue;
		err = map_cpu(s, cpu);
		if (err == -ENODEV)
			continue;
		if (err)
			return err;
		n++;
	}
	return (int)n;
}

struct pmcring *pmcring_new(const struct pmcring_opts *opts)
{
	struct pmcring_config cfg = { 0 };
	struct pmcring *s;
	int err;

	if (!OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->fd = open(OPTS_GET(opts, dev_path, NULL) ?: PMCRING_DEV_PATH,
		     O_RDWR | O_CLOEXEC);
	if (s->fd < 0) {
		err = -errno;
		goto err_free;
	}
	err = xioctl(s->fd, PMCRING_IOC_GET_INFO, &s->info);
	if (err)
		goto err_close;
	if (s->info.compat_version > PMCRING_ABI_VERSION ||
	    !s->info.nr_cpus || !s->info.page_size) {
		err = -EPROTO;
		goto err_close;
	}
	cfg.data_pages = pick_data_pages(&s->info,
					 OPTS_GET(opts, data_pages, 0));
	cfg.flags = OPTS_GET(opts, flags, 0);
	cfg.watermark = OPTS_GET(opts, watermark, 0);
	cfg.types = OPTS_GET(opts, types, 0);
	/* ALL: whatever this module can produce (it refuses unknown bits) */
	if (cfg.types == PMCRING_TYPES_ALL)
		cfg.types = s->info.types_supported;
	cfg.pid = OPTS_GET(opts, pid, 0);
	cfg.callchain_depth = OPTS_GET(opts, callchain_depth, 0);
	cfg.cpus = (uintptr_t)OPTS_GET(opts, cpus, NULL);
	cfg.cpus_size = OPTS_GET(opts, cpus_size, 0);
	/*
	 * pidfd sits in what was the tail padding of the 0.2 struct, which
	 * had the same size: a caller built against it passes that padding
	 * as pidfd.  Read it only when the caller asked for a pidfd.
	 */
	if (cfg.flags & PMCRING_CFG_F_PIDFD)
		cfg.pidfd = OPTS_GET(opts, pidfd, 0);
	err = xioctl(s->fd, PMCRING_IOC_CONFIGURE, &cfg);
	if (err)
		goto err_close;
	s->region_size = cfg.region_size;
	s->info.region_size = cfg.region_size;
	s->nr_cpus = s->info.nr_cpus;
	if (!s->region_size || s->region_size % s->info.page_size) {
		err = -EPROTO;
		goto err_close;
	}
	err = map_all(s);
	if (err)
		goto err_unmap;
	return s;

err_unmap:
	pmcring_free(s);
	errno = -err;
	return NULL;
err_close:
	close(s->fd);
err_free:
	free(s);
	errno = -err;
	return NULL;
}

void pmcring_free(struct pmcring *s)
{
	unsigned int cpu;

	if (!s)
		return;
	if (s->bufs) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			if (s->bufs[cpu].base)
				munmap(s->bufs[cpu].base, s->region_size);
		free(s->bufs);
	}
	close(s->fd);
	free(s);
}

int pmcring_fd(const struct pmcring *s)
{
	return s->fd;
}

int pmcring_info(const struct pmcring *s, struct pmcring_info *info)
{
	*info = s->info;
	return 0;
}

int pmcring_enable(struct pmcring *s)
{
	return xioctl(s->fd, PMCRING_IOC_ENABLE, NULL);
}

int pmcring_disable(struct pmcring *s)
{
	return xioctl(s->fd, PMCRING_IOC_DISABLE, NULL);
}

int pmcring_flush(struct pmcring *s)
{
	return xioctl(s->fd, PMCRING_IOC_FLUSH, NULL);
}

int pmcring_writelog(struct pmcring *s, uint32_t v)
{
	return xioctl(s->fd, PMCRING_IOC_WRITELOG, &v);
}

int pmcring_clock(struct pmcring *s, uint64_t *now)
{
	return xioctl(s->fd, PMCRING_IOC_CLOCK, now);
}

int pmcring_add_counter(struct pmcring *s, struct pmcring_counter *c)
{
	return xioctl(s->fd, PMCRING_IOC_ADD_COUNTER, c);
}

int pmcring_generate(struct pmcring *s, const struct pmcring_generate *g)
{
	struct pmcring_generate copy = *g;

	return xioctl(s->fd, PMCRING_IOC_GENERATE, &copy);
}

unsigned int pmcring_nr_cpus(const struct pmcring *s)
{
	return s->nr_cpus;
}

int pmcring_cpu_buffer(struct pmcring *s, unsigned int cpu, void **base,
		       size_t *size)
{
	int err;

	if (cpu >= s->nr_cpus)
		return -EINVAL;
	if (!s->bufs[cpu].base) {
		err = pmcring_session_refresh(s);
		if (err < 0)
			return err;
		if (!s->bufs[cpu].base)
			return -ENODEV;
	}
	*base = s->bufs[cpu].base;
	*size = s->bufs[cpu].size;
	return 0;
}

struct pmcring_cpu_buf *pmcring_cpu_buf(struct pmcring *s, unsigned int cpu)
{
	if (cpu >= s->nr_cpus) {
		errno = EINVAL;
		return NULL;
	}
	return &s->bufs[cpu];
}

int pmcring_cpu_stats(struct pmcring *s, unsigned int cpu,
		      struct pmcring_cpu_stats *st)
{
	if (cpu >= s->nr_cpus)
		return -EINVAL;
	return pmcring_cpu_buf_stats(&s->bufs[cpu], st);
}
