// SPDX-License-Identifier: GPL-2.0
/*
 * Description: out_put_ring(), how pmclog queues ring records: the file
 * gets exactly the bytes queued, in order, whatever mix of ring runs
 * (contiguous records, kept as zero-copy ranges) and short ranges (copied
 * into the arena, one iovec for many) and whatever record lengths (4 mod
 * 8 included); interleaved small records of two rings make a handful of
 * iovecs, not one each; long runs are not copied (one that starts while
 * the merge switches rings only up to OUT_COPY_MAX bytes); a full arena
 * leaves ranges as their own iovecs; a batch already in order is not
 * reordered; out_put_ring_phase() (blob's DAT, a later segment's phase,
 * index ranges between the records) copies short ranges the same way.
 */
#include "test_fmt_common.h"

#define RING	65536

static uint8_t ring[2][RING];

static unsigned int count_iov(struct out_batch *b)
{
	out_batch_prepare(b);
	return b->nr_iov;
}

/* Queue @n records alternating between the rings, then check the file. */
static void mix(const char *dir, unsigned int seed, size_t arena,
		unsigned int run_max, uint32_t len_max, unsigned int *iovs)
{
	static uint8_t exp[4 * RING];
	size_t pos[2] = { 0, 0 }, explen = 0, got_len;
	struct out_batch b;
	struct out_file f;
	char path[256];
	uint8_t *got;
	int err;

	snprintf(path, sizeof(path), "%s/mix.%u", dir, seed);
	REQUIRE(!out_file_open(&f, path, false), "open %s", path);
	REQUIRE(!out_batch_init(&b, 4096, arena), "batch");
	srand(seed);
	for (;;) {
		unsigned int r = (unsigned int)rand() % 2;
		unsigned int run = 1 + (unsigned int)rand() % run_max, i;

		for (i = 0; i < run; i++) {
			/* 4-byte multiples from 16: 4 mod 8 too */
			uint32_t len = 16 + 4 * ((uint32_t)rand() %
						 ((len_max - 16) / 4 + 1));

			if (pos[r] + len > RING || explen + len > sizeof(exp))
				goto done;
			err = out_put_ring(&b, &f, ring[r] + pos[r], len);
			REQUIRE(!err, "out_put_ring: %s", strerror(-err));
			memcpy(exp + explen, ring[r] + pos[r], len);
			explen += len;
			pos[r] += len;
			if (!out_batch_room(&b, 1, 0))
				goto done;
		}
	}
done:
	*iovs = count_iov(&b);
	run(&b);
	out_batch_free(&b);
	out_file_close(&f);
	got = read_file(path, &got_len);
	REQUIRE(got, "read %s", path);
	expect_bytes("out_put_ring file", got, got_len, exp, explen);
	free(got);
}

int main(void)
{
	struct out_batch b;
	struct out_file f;
	char path[256], *dir = scratch_dir();
	unsigned int i, iovs;

	for (i = 0; i < RING; i++) {
		ring[0][i] = (uint8_t)(i * 7 + 1);
		ring[1][i] = (uint8_t)(i * 13 + 2);
	}
	/* small records, the merge switching rings all the time */
	mix(dir, 1, 1 << 20, 1, 64, &iovs);
	CHECK(iovs <= 4, "alternating small records: %u iovecs", iovs);
	/* runs and sizes of every kind, copies and ring ranges mixed */
	for (i = 2; i < 40; i++)
		mix(dir, i, 1 << 20, 1 + i % 9, 16 + 4 * (i * 37 % 300), &iovs);
	/* a tiny arena: ranges stay iovecs of their own, bytes still right */
	mix(dir, 99, 256, 2, 64, &iovs);

	/* a long run of one ring stays one zero-copy range */
	snprintf(path, sizeof(path), "%s/run", dir);
	REQUIRE(!out_file_open(&f, path, false), "open");
	REQUIRE(!out_batch_init(&b, 64, 1 << 16), "batch");
	for (i = 0; i < 100; i++)
		REQUIRE(!out_put_ring(&b, &f, ring[0] + 64 * i, 64), "put");
	REQUIRE(!out_put_ring(&b, &f, ring[1], 64), "put");
	CHECK(b.nr_puts == 2 && b.puts[0].p == ring[0] &&
	      b.puts[0].len == 6400 && b.arena_used == 0,
	      "run: %u ranges, first %zu bytes, arena %zu", b.nr_puts,
	      b.puts[0].len, b.arena_used);
	run(&b);
	out_batch_free(&b);
	out_file_close(&f);

	/*
	 * The merge switching rings, then one ring's long run: the run is
	 * copied up to OUT_COPY_MAX bytes, then queued as a ring range.
	 */
	{
		static uint8_t exp[8192];
		size_t explen = 0, got_len;
		uint8_t *got;

		snprintf(path, sizeof(path), "%s/switch-run", dir);
		REQUIRE(!out_file_open(&f, path, false), "open");
		REQUIRE(!out_batch_init(&b, 64, 1 << 16), "batch");
		for (i = 0; i < 2; i++) {
			REQUIRE(!out_put_ring(&b, &f, ring[0] + 64 * i, 64),
				"put");
			memcpy(exp + explen, ring[0] + 64 * i, 64);
			explen += 64;
			REQUIRE(!out_put_ring(&b, &f, ring[1] + 64 * i, 64),
				"put");
			memcpy(exp + explen, ring[1] + 64 * i, 64);
			explen += 64;
		}
		for (i = 2; i < 100; i++) {
			REQUIRE(!out_put_ring(&b, &f, ring[1] + 64 * i, 64),
				"put");
			memcpy(exp + explen, ring[1] + 64 * i, 64);
			explen += 64;
		}
		CHECK(b.nr_puts == 2 && !b.puts[0].ring && b.puts[1].ring &&
		      b.arena_used <= 3 * 64 + OUT_COPY_MAX &&
		      b.puts[1].len >= 98 * 64 - OUT_COPY_MAX,
		      "switch then run: %u ranges, arena %zu, last %zu bytes",
		      b.nr_puts, b.arena_used, b.puts[b.nr_puts - 1].len);
		run(&b);
		out_batch_free(&b);
		out_file_close(&f);
		got = read_file(path, &got_len);
		REQUIRE(got, "read %s", path);
		expect_bytes("switch then run", got, got_len, exp, explen);
		free(got);
	}

	/*
	 * out_put_ring_phase() as blob queues DAT: a later segment's data
	 * phase, another file's index entries queued between the records
	 * now and then (a full slab).  Alternating records are copied on
	 * the fast path in that phase too (few iovecs), both files get
	 * exactly their bytes, and the phases still run in order.
	 */
	{
		static uint8_t exp[16384], exp_ix[2048];
		size_t explen = 0, ixlen = 0, got_len;
		unsigned int ph = OUT_PHASE(1, OUT_DATA), runs = 0;
		struct out_file ix;
		char ipath[300];
		uint8_t *got;

		snprintf(path, sizeof(path), "%s/phase-dat", dir);
		snprintf(ipath, sizeof(ipath), "%s/phase-ix", dir);
		REQUIRE(!out_file_open(&f, path, false), "open");
		REQUIRE(!out_file_open(&ix, ipath, false), "open");
		REQUIRE(!out_batch_init(&b, 256, 1 << 16), "batch");
		for (i = 0; i < 200; i++) {
			unsigned int r = i % 2;
			const uint8_t *rec = ring[r] + 64 * (i / 2);
			uint8_t *e;

			REQUIRE(!out_put_ring_phase(&b, &f, ph, rec, 64),
				"put %u", i);
			memcpy(exp + explen, rec, 64);
			explen += 64;
			if (i % 50 != 49)
				continue;
			/* an index slab of 8 entries, queued after DAT's */
			e = out_alloc(&b, 64);
			REQUIRE(e, "slab");
			memset(e, (int)i, 64);
			REQUIRE(!out_put(&b, &ix, OUT_PHASE(1, OUT_COMMIT), e,
					 64), "index");
			memcpy(exp_ix + ixlen, e, 64);
			ixlen += 64;
			runs++;
		}
		CHECK(b.ring_refs <= 2 * (runs + 1) &&
		      count_iov(&b) <= 2 * (runs + 1),
		      "phase %u: %llu ring ranges, %u iovecs for 200 records",
		      ph, (unsigned long long)b.ring_refs, b.nr_iov);
		CHECK(b.nr_ops == 2 && b.ops[0].f == &f && b.ops[1].f == &ix,
		      "data before the index: %u writes", b.nr_ops);
		run(&b);
		out_batch_free(&b);
		out_file_close(&f);
		out_file_close(&ix);
		got = read_file(path, &got_len);
		REQUIRE(got, "read %s", path);
		expect_bytes("phase DAT", got, got_len, exp, explen);
		free(got);
		got = read_file(ipath, &got_len);
		REQUIRE(got, "read %s", ipath);
		expect_bytes("phase index", got, got_len, exp_ix, ixlen);
		free(got);
	}

	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_out: all checks passed\n");
	return t_failed;
}
