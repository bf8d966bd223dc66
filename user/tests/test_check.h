/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Failure reporting shared by the host tests: CHECK() records a failure and
 * goes on, REQUIRE() stops the program; main() returns t_failed.
 */
#ifndef TEST_CHECK_H
#define TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int t_failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		t_failed = 1;						\
	}								\
} while (0)

#define REQUIRE(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		exit(1);						\
	}								\
} while (0)

#endif /* TEST_CHECK_H */
