/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for mm/folio_zero.c: the clearing order and the clearing
 * itself, on a folio whose untouched pages act as guard bytes.
 * Included at the end of mm/folio_zero.c, to reach its static functions.
 */
#ifndef _FOLIO_ZERO_KUNIT_H
#define _FOLIO_ZERO_KUNIT_H

#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/log2.h>

static void folio_zero_check_plan(struct kunit *test, unsigned int nr,
				  unsigned int target, unsigned int chunk)
{
	unsigned long *seen = kunit_kzalloc(test, BITS_TO_LONGS(nr) *
					    sizeof(long), GFP_KERNEL);
	unsigned int start, n, last_start = 0, last_n = 0, pieces = 0;
	unsigned int window_pieces = 0;
	struct folio_zero_plan plan;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	folio_zero_plan_init(&plan, nr, target, chunk, FOLIO_ZERO_WINDOW_PAGES);
	while (folio_zero_plan_next(&plan, &start, &n)) {
		KUNIT_ASSERT_GT(test, n, 0U);
		KUNIT_ASSERT_LE(test, n, chunk);
		KUNIT_ASSERT_LE(test, start + n, nr);
		/* every page exactly once */
		KUNIT_ASSERT_EQ(test, find_next_bit(seen, start + n, start),
				(unsigned long)start + n);
		bitmap_set(seen, start, n);
		/* set with the window and after it: only the last piece */
		window_pieces += plan.window_done;
		last_start = start;
		last_n = n;
		pieces++;
	}
	KUNIT_EXPECT_TRUE(test, bitmap_full(seen, nr));
	/* the faulting subpage is in the piece cleared last */
	KUNIT_EXPECT_LE(test, last_start, target);
	KUNIT_EXPECT_LT(test, target, last_start + last_n);
	/* ... which is the window, the one piece cleared through the cache */
	KUNIT_EXPECT_EQ(test, window_pieces, 1U);
	/* contiguous: at most two pieces more than the minimum */
	KUNIT_EXPECT_LE(test, pieces, DIV_ROUND_UP(nr, chunk) + 2);
}

static void folio_zero_test_plan(struct kunit *test)
{
	static const unsigned int nrs[] = { 1, 2, 16, 17, 512, 262144 };
	static const unsigned int chunks[] = { 1, 16, 512, 8192 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(nrs); i++) {
		unsigned int nr = nrs[i];
		unsigned int targets[] = { 0, 1 % nr, nr / 2, nr - 1 };
		unsigned int k;

		for (j = 0; j < ARRAY_SIZE(chunks); j++)
			for (k = 0; k < ARRAY_SIZE(targets); k++)
				folio_zero_check_plan(test, nr, targets[k],
						      chunks[j]);
	}
}

static void folio_zero_test_chunk_bound(struct kunit *test)
{
	bool full = preempt_model_full() || preempt_model_rt();

	KUNIT_EXPECT_EQ(test, folio_zero_chunk_pages(),
			full ? FOLIO_ZERO_CHUNK_PAGES_FULL :
			       FOLIO_ZERO_CHUNK_PAGES);
	KUNIT_EXPECT_GE(test, folio_zero_chunk_pages(),
			FOLIO_ZERO_WINDOW_PAGES);
}

#define GUARD	0xa5

/* Pages [start, start + nr) zero, every other page of @folio still GUARD. */
static void folio_zero_expect(struct kunit *test, struct folio *folio,
			      unsigned int start, unsigned int nr)
{
	unsigned int i, bad = 0;
	size_t b;

	for (i = 0; i < folio_nr_pages(folio); i++) {
		u8 *p = page_address(folio_page(folio, i));
		u8 want = (i >= start && i < start + nr) ? 0 : GUARD;

		for (b = 0; b < PAGE_SIZE; b++)
			bad += p[b] != want;
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "clearing pages %u-%u of %ld",
			    start, start + nr - 1, folio_nr_pages(folio));
}

static void folio_zero_test_pages_guarded(struct kunit *test)
{
	static const unsigned int ranges[][2] = {
		{ 0, 1 }, { 3, 5 }, { 15, 1 }, { 0, 16 }, { 1, 14 },
	};
	struct folio *folio = folio_alloc(GFP_KERNEL, 4);
	unsigned int i;
	int nocache;

	KUNIT_ASSERT_NOT_NULL(test, folio);
	/* clear_pages(), then clear_pages_nocache() */
	for (nocache = 0; nocache <= 1; nocache++) {
		for (i = 0; i < ARRAY_SIZE(ranges); i++) {
			memset(folio_address(folio), GUARD, folio_size(folio));
			folio_zero_pages(folio, 0, ranges[i][0], ranges[i][1],
					 nocache);
			folio_zero_expect(test, folio, ranges[i][0],
					  ranges[i][1]);
		}
	}
	folio_put(folio);
}

static void folio_zero_test_user(struct kunit *test)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, 9);
	unsigned long base = 0x40000000UL, hints[] = { 0, 255, 511 };
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, folio);
	for (i = 0; i < ARRAY_SIZE(hints); i++) {
		memset(folio_address(folio), GUARD, folio_size(folio));
		folio_zero_user(folio, base + hints[i] * PAGE_SIZE + 123);
		folio_zero_expect(test, folio, 0, folio_nr_pages(folio));
	}
	folio_put(folio);
}

static struct kunit_case folio_zero_test_cases[] = {
	KUNIT_CASE(folio_zero_test_plan),
	KUNIT_CASE(folio_zero_test_chunk_bound),
	KUNIT_CASE(folio_zero_test_pages_guarded),
	KUNIT_CASE(folio_zero_test_user),
	{},
};

static struct kunit_suite folio_zero_test_suite = {
	.name = "folio-zero",
	.test_cases = folio_zero_test_cases,
};

kunit_test_suite(folio_zero_test_suite);

#endif /* _FOLIO_ZERO_KUNIT_H */
