// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the barman reader of `pmcring dump` on any bytes (header
 * tables, string table pointers, frame lengths, record decoding).
 */
#include <stddef.h>
#include <stdint.h>

#include "../pmcring/formats/fmt.h"

static int touch(const struct fmt_item *it, void *ctx)
{
	uint64_t *sum = ctx;
	uint32_t i;

	*sum += it->ts + it->task + it->pc + (uint64_t)it->len;
	for (i = 0; i < it->nchain; i++)
		*sum += fmt_get64(it->chain, 8 * i);
	for (i = 0; i < it->text_len; i++)
		*sum += (uint8_t)it->text[i];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fmt_bm_info bi;
	uint64_t sum = 0;
	size_t bad;
	uint32_t i;

	if (!fmt_barman_info(data, size, &bi)) {
		sum += strlen(fmt_barman_str(&bi, bi.target_name_ptr));
		for (i = 0; i < bi.nr_tasks; i++)
			sum += strlen(fmt_barman_str(&bi,
				fmt_get32(bi.tasks, i * BM_TASK_SIZE + 12)));
		for (i = 0; i < bi.nr_mmaps; i++)
			sum += strlen(fmt_barman_str(&bi,
				fmt_get32(bi.mmaps, i * BM_MMAP_SIZE + 36)));
	}
	fmt_barman_read(data, size, touch, &sum, &bad);
	return sum == 42 ? 0 : 0;
}
