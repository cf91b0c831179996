/*
 * test.h - the unit tests' harness: CHECK(cond) records a pass or a
 * failure with file and line; TEST_MAIN's main prints
 * "N passed, N failed" and exits 1 when anything failed.
 */
#ifndef IDPMAKE_TEST_H
#define IDPMAKE_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* where scratch files go: $TMPDIR, or /tmp without it */
static inline const char *test_tmpdir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

static int t_passed, t_failed;

#define CHECK(cond) do { \
	if (cond) { t_passed++; } else { t_failed++; \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (a_ && b_ && !strcmp(a_, b_)) { t_passed++; } else { t_failed++; \
		fprintf(stderr, "%s:%d: check failed: %s == %s (\"%s\" vs \"%s\")\n", \
			__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } \
} while (0)


/*
 * setup, the tests, teardown; with TEST_SEED=N in the environment (N > 0) the
 * tests run in an order shuffled from N, which shows that none depends on
 * another having run first.
 */
#define TEST_MAIN_SHUFFLE(setup_, teardown_, ...) int main(void) { \
	void (*tests_[])(void) = { __VA_ARGS__ }; \
	size_t n_ = sizeof(tests_) / sizeof(tests_[0]); \
	const char *seed_ = getenv("TEST_SEED"); \
	if (seed_ && atoi(seed_) > 0) { \
		srand((unsigned)atoi(seed_)); \
		for (size_t i_ = n_ - 1; i_ > 0; i_--) { \
			size_t j_ = (size_t)rand() % (i_ + 1); \
			void (*t_)(void) = tests_[i_]; tests_[i_] = tests_[j_]; tests_[j_] = t_; \
		} \
		fprintf(stderr, "tests shuffled with TEST_SEED=%s\n", seed_); \
	} \
	setup_(); \
	for (size_t i_ = 0; i_ < n_; i_++) tests_[i_](); \
	teardown_(); \
	printf("%d passed, %d failed\n", t_passed, t_failed); \
	fflush(stdout); \
	return t_failed ? 1 : 0; \
}
static inline void test_nothing_(void)
{
}

#define TEST_MAIN(...) TEST_MAIN_SHUFFLE(test_nothing_, test_nothing_, __VA_ARGS__)

#endif
