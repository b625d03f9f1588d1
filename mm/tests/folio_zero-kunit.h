/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for clearing huge folios for user space: folio_zero_user()
 * and the range helpers under it clear exactly the pages asked for and
 * touch no other byte.  Included at the end of mm/memory.c, to reach its
 * static functions.
 */
#ifndef _FOLIO_ZERO_KUNIT_H
#define _FOLIO_ZERO_KUNIT_H

#include <kunit/test.h>

#define FOLIO_ZERO_GUARD	0xa5

static void folio_zero_fill(struct folio *folio)
{
	long i;

	for (i = 0; i < folio_nr_pages(folio); i++)
		memset(page_address(folio_page(folio, i)), FOLIO_ZERO_GUARD,
		       PAGE_SIZE);
}

/*
 * Expect pages [start, start + nr) of @folio zero and every byte of its
 * other pages still FOLIO_ZERO_GUARD; name the first page that is not.
 */
static void folio_zero_expect(struct kunit *test, struct folio *folio,
			      long start, long nr, const char *what)
{
	long i, bad = 0, first = -1;

	for (i = 0; i < folio_nr_pages(folio); i++) {
		int want = i >= start && i < start + nr ? 0 : FOLIO_ZERO_GUARD;

		if (memchr_inv(page_address(folio_page(folio, i)), want,
			       PAGE_SIZE)) {
			if (first < 0)
				first = i;
			bad++;
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0L,
			    "%s: pages %ld-%ld of %ld cleared: %ld pages wrong, the first %ld",
			    what, start, start + nr - 1, folio_nr_pages(folio),
			    bad, first);
}

/*
 * Clear each of a few ranges of a 16-page folio with @clear(folio, start,
 * nr) and check that exactly those pages changed.
 */
static void folio_zero_check_ranges(struct kunit *test,
				    void (*clear)(struct folio *folio,
						  unsigned int start,
						  unsigned int nr),
				    const char *what)
{
	static const unsigned int ranges[][2] = {
		{ 0, 1 }, { 3, 5 }, { 15, 1 }, { 0, 16 }, { 1, 14 },
	};
	struct folio *folio = folio_alloc(GFP_KERNEL, 4);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, folio);
	for (i = 0; i < ARRAY_SIZE(ranges); i++) {
		folio_zero_fill(folio);
		clear(folio, ranges[i][0], ranges[i][1]);
		folio_zero_expect(test, folio, ranges[i][0], ranges[i][1], what);
	}
	folio_put(folio);
}

static void folio_zero_user_highpages(struct folio *folio, unsigned int start,
				      unsigned int nr)
{
	clear_user_highpages(folio_page(folio, start),
			     0x40000000UL + start * PAGE_SIZE, nr);
}

/* clear_user_highpages(): through clear_pages() where the arch has it */
static void folio_zero_test_user_highpages(struct kunit *test)
{
	folio_zero_check_ranges(test, folio_zero_user_highpages,
				"clear_user_highpages()");
}

#ifdef CONFIG_X86_64
/*
 * clear_pages() runs the variant the CPU's features chose at boot; run the
 * unrolled one, which CPUs with ERMS or REP_GOOD never do, directly.
 */
static void folio_zero_unrolled(struct folio *folio, unsigned int start,
				unsigned int nr)
{
	void *addr = page_address(folio_page(folio, start));
	unsigned long len = (unsigned long)nr << PAGE_SHIFT;

	asm volatile("call __clear_pages_unrolled"
		     : "+c" (len), "+D" (addr), ASM_CALL_CONSTRAINT
		     : "a" (0)
		     : "cc", "memory");
}

static void folio_zero_test_unrolled(struct kunit *test)
{
	folio_zero_check_ranges(test, folio_zero_unrolled,
				"__clear_pages_unrolled()");
}
#endif

/* clear_contig_highpages() on parts of a MAX_ORDER folio */
static void folio_zero_test_contig(struct kunit *test)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, MAX_PAGE_ORDER);
	const unsigned int n = MAX_ORDER_NR_PAGES;
	const unsigned int ranges[][2] = {
		{ 0, n }, { 1, n - 2 }, { n / 4, n / 2 }, { n - 1, 1 },
	};
	unsigned int i;

	if (!folio)
		kunit_skip(test, "no free order-%d folio", MAX_PAGE_ORDER);
	for (i = 0; i < ARRAY_SIZE(ranges); i++) {
		folio_zero_fill(folio);
		clear_contig_highpages(folio_page(folio, ranges[i][0]),
				       0x40000000UL + ranges[i][0] * PAGE_SIZE,
				       ranges[i][1]);
		folio_zero_expect(test, folio, ranges[i][0], ranges[i][1],
				  "clear_contig_highpages()");
	}
	folio_put(folio);
}

/*
 * folio_zero_user() on folios smaller and larger than the faulting page's
 * neighbourhood, faulting at each end, next to each end and in the middle.
 */
static void folio_zero_test_user(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 1, 2, 9 };
	const unsigned long base = 0x40000000UL;
	unsigned int o;

	for (o = 0; o < ARRAY_SIZE(orders); o++) {
		struct folio *folio = folio_alloc(GFP_KERNEL, orders[o]);
		long nr = 1L << orders[o];
		long hints[] = { 0, 1, 2, nr / 2, nr - 3, nr - 2, nr - 1 };
		unsigned int h;

		KUNIT_ASSERT_NOT_NULL(test, folio);
		for (h = 0; h < ARRAY_SIZE(hints); h++) {
			if (hints[h] < 0 || hints[h] >= nr)
				continue;
			folio_zero_fill(folio);
			folio_zero_user(folio, base + hints[h] * PAGE_SIZE + 123);
			folio_zero_expect(test, folio, 0, nr, "folio_zero_user()");
		}
		folio_put(folio);
	}
}

static struct kunit_case folio_zero_test_cases[] = {
	KUNIT_CASE(folio_zero_test_user_highpages),
#ifdef CONFIG_X86_64
	KUNIT_CASE(folio_zero_test_unrolled),
#endif
	KUNIT_CASE(folio_zero_test_contig),
	KUNIT_CASE(folio_zero_test_user),
	{},
};

static struct kunit_suite folio_zero_test_suite = {
	.name = "folio-zero",
	.test_cases = folio_zero_test_cases,
};

kunit_test_suite(folio_zero_test_suite);

#endif /* _FOLIO_ZERO_KUNIT_H */
