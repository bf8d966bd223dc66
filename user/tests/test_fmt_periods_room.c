// SPDX-License-Identifier: GPL-2.0
/*
 * The pmclog writer with FILE.periods on a nearly full arena: CALLCHAINs
 * that alternate between two rings, so that each is copied behind the
 * other's short range (out_put_ring()), while the periods' slab fills.
 * Every record must be taken (at worst after -EAGAIN and a batch run, as
 * the consumer does), and FILE.periods must end with exactly one entry
 * per CALLCHAIN.  Before the slab was taken first, a new slab did not
 * fit after the copy: ENOBUFS, a recording that stopped with its batch.
 */
#include "test_fmt_common.h"
#include <linux/pmcring.h>

#define NR	60000u

static uint8_t ring[2][1 << 20];

static void one_arena(const char *dir, size_t arena)
{
	char path[512], side[600];
	struct fmt_writer *w;
	struct out_batch b;
	struct fmt_opts o;
	size_t off[2] = { 0, 0 }, len;
	unsigned int i;
	void *f;
	int err;

	snprintf(path, sizeof(path), "%s/a%zu.pmclog", dir, arena);
	snprintf(side, sizeof(side), "%s.periods", path);
	test_opts(&o, FMT_PMCLOG, path);
	o.periods = true;
	REQUIRE(!out_batch_init(&b, 4096, arena), "batch");
	w = fmt_writer_new(&o);
	REQUIRE(w, "fmt_writer_new: %s", strerror(errno));
	REQUIRE(!fmt_begin(w, &b), "fmt_begin");
	srand(1);
	for (i = 0; i < NR; i++) {
		uint32_t n = 200 + 8 * (uint32_t)(rand() % 40);
		unsigned int c = i & 1;
		struct fmt_rec r = {
			.len = n, .type = PMCRING_TYPE_CALLCHAIN, .cpu = c,
			.ts = T0 + i,
		};
		uint8_t *p;

		if (off[c] + n + 64 > sizeof(ring[c]))
			off[c] = 0;
		p = ring[c] + off[c];
		off[c] += n + 8;	/* a gap: never one range */
		memset(p, 0, n);
		fmt_put32(p, 0, PMCRING_HEADER(PMCRING_TYPE_CALLCHAIN, n));
		fmt_put64(p, 8, T0 + i);
		fmt_put32(p, 24, 0x100);
		r.data = p;
		err = fmt_record(w, &b, &r);
		if (err == -EAGAIN) {
			REQUIRE(!fmt_flush(w, &b), "flush");
			run(&b);
			err = fmt_record(w, &b, &r);
		}
		if (err) {
			CHECK(0, "arena %zu: record %u: %s", arena, i,
			      strerror(-err));
			break;
		}
	}
	finish(w, &b, T0 + NR);
	fmt_writer_free(w);
	out_batch_free(&b);
	f = read_file(side, &len);
	CHECK(f && len == 16 + 8ull * i, "arena %zu: %s is %zu bytes for %u "
	      "samples, want %llu", arena, side, len, i, 16 + 8ull * i);
	free(f);
	unlink(side);
	unlink(path);
}

int main(void)
{
	static const size_t arenas[] = { 94000, 99000, 120000, 1 << 20 };
	char *dir = scratch_dir();
	unsigned int k;

	for (k = 0; k < sizeof(arenas) / sizeof(arenas[0]); k++)
		one_arena(dir, arenas[k]);
	rm_rf(dir);
	if (!t_failed)
		printf("ok: %u CALLCHAINs each on 4 arenas, one period each\n",
		       NR);
	return t_failed;
}
