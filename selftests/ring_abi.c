// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the pmcring ABI: struct offsets of uapi/linux/pmcring.h,
 * GET_INFO, the contents of a freshly mapped region (control page fields,
 * zeroed producer and data pages, data pages mapped twice), WRITELOG
 * and CLOCK.
 */
#include <stddef.h>
#include "ring_common.h"

#define OFF(s, f) offsetof(struct s, f)

TEST(offsets)
{
	EXPECT_EQ(16, sizeof(struct pmcring_rec_header));
	EXPECT_EQ(0, OFF(pmcring_mmap_page, version));
	EXPECT_EQ(4, OFF(pmcring_mmap_page, compat_version));
	EXPECT_EQ(8, OFF(pmcring_mmap_page, cpu));
	EXPECT_EQ(12, OFF(pmcring_mmap_page, page_size));
	EXPECT_EQ(16, OFF(pmcring_mmap_page, region_size));
	EXPECT_EQ(24, OFF(pmcring_mmap_page, watermark));
	EXPECT_EQ(1024, OFF(pmcring_mmap_page, data_head));
	EXPECT_EQ(1032, OFF(pmcring_mmap_page, data_tail));
	EXPECT_EQ(1040, OFF(pmcring_mmap_page, data_offset));
	EXPECT_EQ(1048, OFF(pmcring_mmap_page, data_size));
	EXPECT_EQ(1056, OFF(pmcring_mmap_page, aux_head));
	EXPECT_EQ(1064, OFF(pmcring_mmap_page, aux_tail));
	EXPECT_EQ(1072, OFF(pmcring_mmap_page, aux_offset));
	EXPECT_EQ(1080, OFF(pmcring_mmap_page, aux_size));
	EXPECT_EQ(1088, sizeof(struct pmcring_mmap_page));
	EXPECT_EQ(0, OFF(pmcring_prod_page, pending_ts));
	EXPECT_EQ(8, OFF(pmcring_prod_page, lost));
	EXPECT_EQ(16, OFF(pmcring_prod_page, records));
	EXPECT_EQ(24, OFF(pmcring_prod_page, bytes));
	EXPECT_EQ(32, OFF(pmcring_prod_page, flags));
	EXPECT_EQ(40, OFF(pmcring_prod_page, nr_rings));
	EXPECT_EQ(48, OFF(pmcring_prod_page, reported));
	EXPECT_EQ(512, sizeof(struct pmcring_prod_page));
	EXPECT_EQ(80, sizeof(struct pmcring_info));
	EXPECT_EQ(40, OFF(pmcring_info, region_size));
	EXPECT_EQ(72, sizeof(struct pmcring_config));
	EXPECT_EQ(32, OFF(pmcring_config, region_size));
	EXPECT_EQ(128, sizeof(struct pmcring_counter));
	EXPECT_EQ(PMCRING_GENERATE_SIZE_VER1, sizeof(struct pmcring_generate));
	EXPECT_EQ(PMCRING_GENERATE_SIZE_VER0, OFF(pmcring_generate, written));
	EXPECT_EQ(48, PMCRING_GENERATE_SIZE_VER0);
	EXPECT_EQ(80, OFF(pmcring_generate, dropped));
	EXPECT_EQ(112, OFF(pmcring_generate, nmi_sent));
	EXPECT_EQ(120, OFF(pmcring_generate, nmi_depth));
	EXPECT_EQ(152, OFF(pmcring_generate, nmi_in_wrap));
	EXPECT_EQ(16, OFF(pmcring_generate, cpus));
	EXPECT_EQ(16, OFF(pmcring_rec_generated, pl_seq));
	EXPECT_EQ(24, OFF(pmcring_rec_generated, pl_cpu));
	EXPECT_EQ(28, OFF(pmcring_rec_generated, pl_ctx));
	EXPECT_EQ(32, OFF(pmcring_rec_generated, pl_fill));
	EXPECT_EQ(24, sizeof(struct pmcring_rec_userdata));
	EXPECT_EQ(PMCRING_SIZE_PERIOD, sizeof(struct pmcring_rec_period));
	EXPECT_EQ(16, OFF(pmcring_rec_period, pl_pmcid));
	EXPECT_EQ(20, OFF(pmcring_rec_period, pl_cpu));
	EXPECT_EQ(24, OFF(pmcring_rec_period, pl_period));
	EXPECT_EQ(PMCRING_SIZE_INITIALIZE, sizeof(struct pmcring_rec_initialize));
	EXPECT_EQ(PMCRING_SIZE_PMCALLOCATEDYN,
		  sizeof(struct pmcring_rec_pmcallocatedyn));
	EXPECT_EQ(0xEE0d0018u, PMCRING_HEADER(PMCRING_TYPE_USERDATA, 24));
	EXPECT_EQ(PMCRING_IOC_GET_INFO, _IOR(0xC1, 0x01, struct pmcring_info));
	EXPECT_EQ(PMCRING_IOC_GENERATE, _IOWR(0xC1, 0x06, struct pmcring_generate));
	/* The first version's number, as binaries built before have it. */
	EXPECT_EQ(PMCRING_IOC_GENERATE_VER0, _IOC(_IOC_WRITE, 0xC1, 0x06, 48));
}

/*
 * nsfs owns ioctl type 0xB7 (uapi/linux/nsfs.h; ioctl-number.rst).  No
 * pmcring number may be an nsfs one, and an nsfs ioctl sent to a session by
 * mistake must be ENOTTY: with ABI 1 NS_GET_NSTYPE was PMCRING_IOC_ENABLE and
 * enabled the session.
 */
#define NSFS_IO(nr)	_IO(0xB7, nr)

TEST(ioctl_numbers_not_nsfs)
{
	static const unsigned long ours[] = {
		PMCRING_IOC_GET_INFO, PMCRING_IOC_CONFIGURE, PMCRING_IOC_ENABLE,
		PMCRING_IOC_DISABLE, PMCRING_IOC_WRITELOG,
		PMCRING_IOC_GENERATE, PMCRING_IOC_CLOCK,
		PMCRING_IOC_ADD_COUNTER, PMCRING_IOC_FLUSH,
	};
	struct pmcring_config cfg = { .data_pages = 2 };
	struct pmcring_info info;
	unsigned int i, nr;
	int fd;

	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		EXPECT_NE(0xB7u, _IOC_TYPE(ours[i]));
	PMCRING_REQUIRE_DEV();
	fd = open(PMCRING_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_CONFIGURE, &cfg));
	/* NS_GET_USERNS, NS_GET_PARENT, NS_GET_NSTYPE, NS_GET_OWNER_UID */
	for (nr = 1; nr <= 4; nr++)
		EXPECT_EQ(-ENOTTY, rt_ioctl(fd, NSFS_IO(nr), NULL)) {
			TH_LOG("nsfs ioctl 0xB7/%u accepted by a session", nr);
		}
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	EXPECT_EQ(0, info.flags & PMCRING_INFO_F_ENABLED);
	close(fd);
}

TEST(info)
{
	struct pmcring_info info;
	struct pmcring_config cfg;
	int fd;

	PMCRING_REQUIRE_DEV();
	fd = open(PMCRING_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	EXPECT_EQ(PMCRING_ABI_VERSION, info.abi_version);
	EXPECT_EQ(PMCRING_ABI_COMPAT_VERSION, info.compat_version);
	EXPECT_LE((unsigned int)rt_online_cpus(), info.nr_cpus);
	EXPECT_EQ(sysconf(_SC_PAGESIZE), info.page_size);
	EXPECT_LE(1, info.min_data_pages);
	EXPECT_LE(info.min_data_pages, info.max_data_pages);
	EXPECT_EQ(0, info.min_data_pages & (info.min_data_pages - 1));
	EXPECT_EQ(0, info.max_data_pages & (info.max_data_pages - 1));
	EXPECT_EQ(PMCRING_RECORD_MAX, info.max_record);
	EXPECT_EQ(0, info.flags);
	EXPECT_NE(0, info.types_supported & PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED));
	EXPECT_NE(0, info.types_supported & PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD));
	EXPECT_EQ(0, info.region_size);
	EXPECT_EQ(0, info.__reserved[0] | info.__reserved[1] |
		  info.__reserved[2] | info.__reserved[3]);

	ASSERT_EQ(0, rt_configure(fd, &cfg, 4, 0));
	EXPECT_EQ((2 + 2 * 4) * (uint64_t)info.page_size, cfg.region_size);
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	EXPECT_EQ(PMCRING_INFO_F_CONFIGURED, info.flags);
	EXPECT_EQ(cfg.region_size, info.region_size);
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_ENABLE, NULL));
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	EXPECT_EQ(PMCRING_INFO_F_CONFIGURED | PMCRING_INFO_F_ENABLED, info.flags);
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_DISABLE, NULL));
	close(fd);
}

static int all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

TEST(fresh_region)
{
	const size_t page = sysconf(_SC_PAGESIZE);
	unsigned int cpu, rings = 0;
	struct rt_sess s;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 4, 0, 1));
	for (cpu = 0; cpu < s.nr_cpus; cpu++)
		rings += s.rings[cpu].base != NULL;
	for (cpu = 0; cpu < s.nr_cpus; cpu++) {
		struct rt_ring *r = &s.rings[cpu];
		const struct pmcring_mmap_page *c = r->ctl;

		/* No ring (mmap ENODEV) only for a CPU offline since CONFIGURE */
		if (!r->base) {
			EXPECT_EQ(0, rt_cpu_online(cpu))
				TH_LOG("cpu %u online without a ring", cpu);
			continue;
		}

		EXPECT_EQ(PMCRING_ABI_VERSION, c->version);
		EXPECT_EQ(PMCRING_ABI_COMPAT_VERSION, c->compat_version);
		EXPECT_EQ(cpu, c->cpu);
		EXPECT_EQ(page, c->page_size);
		EXPECT_EQ(s.cfg.region_size, c->region_size);
		EXPECT_EQ(4 * page / 4, c->watermark);
		EXPECT_TRUE(all_zero((const uint8_t *)c->__reserved,
				     sizeof(c->__reserved)));
		EXPECT_EQ(0, c->data_head);
		EXPECT_EQ(0, c->data_tail);
		EXPECT_EQ(2 * page, c->data_offset);
		EXPECT_EQ(4 * page, c->data_size);
		EXPECT_EQ(0, c->aux_head | c->aux_tail | c->aux_offset | c->aux_size);
		/* Nothing stale: the rest of the control page, producer, data. */
		EXPECT_TRUE(all_zero((const uint8_t *)c + sizeof(*c),
				     page - sizeof(*c)));
		/*
		 * The producer page: zero but flags (the data pages' mark, a
		 * ring that exists has them) and the count of rings.
		 */
		EXPECT_TRUE(all_zero((const uint8_t *)r->prod,
				     offsetof(struct pmcring_prod_page, flags)));
		EXPECT_EQ(PMCRING_PROD_F_DATA, r->prod->flags);
		EXPECT_EQ(rings, r->prod->nr_rings);
		EXPECT_TRUE(all_zero((const uint8_t *)(&r->prod->nr_rings + 1),
				     page - offsetof(struct pmcring_prod_page,
						     nr_rings) - 8));
		EXPECT_TRUE(all_zero(r->data, 2 * r->size));
	}
	rt_close(&s);
}

TEST(writelog_clock_double_map)
{
	struct pmcring_rec_userdata *u;
	struct rt_stats st = { 0 };
	uint64_t t0, t1, t2;
	struct rt_sess s;
	struct rt_ring *r;
	unsigned int i, n;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_pin_cpu(0));
	ASSERT_EQ(0, rt_open(&s, 2, 0, 1));
	r = &s.rings[0];
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_CLOCK, &t0));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_WRITELOG, &(uint32_t){ 0xc0ffee }));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_CLOCK, &t1));
	EXPECT_LE(t0, t1);
	/* CLOCK is CLOCK_MONOTONIC. */
	t2 = rt_now_ns();
	EXPECT_LE(t1, t2);
	EXPECT_LT(t2 - t1, 1000000000ull);

	ASSERT_EQ(24, rt_head(r));
	u = (struct pmcring_rec_userdata *)r->data;
	EXPECT_EQ(PMCRING_HEADER(PMCRING_TYPE_USERDATA, 24), u->h.pl_header);
	EXPECT_EQ(0, u->h.pl_spare);
	EXPECT_LE(t0, u->h.pl_tsc);
	EXPECT_GE(t1, u->h.pl_tsc);
	EXPECT_EQ(0xc0ffee, u->pl_userdata);
	EXPECT_EQ(0, u->pl_pad);
	EXPECT_EQ(1, rt_prod(&r->prod->records));
	EXPECT_EQ(24, rt_prod(&r->prod->bytes));
	EXPECT_EQ(0, rt_prod(&r->prod->lost));
	EXPECT_EQ(0, rt_prod(&r->prod->pending_ts));
	for (i = 1; i < s.nr_cpus; i++)
		EXPECT_EQ(0, rt_head(&s.rings[i]));

	/* The second copy of the data is the same memory. */
	EXPECT_EQ(0, memcmp(r->data, r->data + r->size, r->size));
	ASSERT_EQ(1, rt_drain(r, &st)) TH_LOG("%s", st.err);
	EXPECT_EQ(1, st.userdata);

	/* Go round the ring: every record readable in one piece. */
	for (i = 0; i < 6; i++) {
		for (n = 0; n < r->size / 2 / 24; n++)
			ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_WRITELOG, &n));
		ASSERT_LT(0, rt_drain(r, &st)) TH_LOG("%s", st.err);
	}
	EXPECT_NE(0, st.wrapped);
	EXPECT_EQ(0, memcmp(r->data, r->data + r->size, r->size));
	EXPECT_EQ(0, rt_prod(&r->prod->lost));
	rt_close(&s);
}

TEST_HARNESS_MAIN
