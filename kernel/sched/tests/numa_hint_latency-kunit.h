/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the fault-count NUMA hint latency
 * (kernel/sched/numa_hint_latency.c).  Included at the end of that file.
 */
#ifndef _NUMA_HINT_LATENCY_KUNIT_H
#define _NUMA_HINT_LATENCY_KUNIT_H

#include <kunit/test.h>
#include <linux/gfp.h>

/* a folio stores stamps in units of 1 << PAGE_ACCESS_TIME_BUCKETS */
#define NHL_UNIT	((unsigned int)BIT(PAGE_ACCESS_TIME_BUCKETS))
/* the range of latencies a stamp can express */
#define NHL_RANGE	((unsigned int)PAGE_ACCESS_TIME_MASK + NHL_UNIT)

/**
 * nhl_latency_through_folio() - stamp a real folio, then measure
 * @test: the test
 * @stamp: value the scanner stores
 * @now: clock value at the fault
 *
 * Return: the latency, computed from what the folio gave back.
 */
static unsigned int nhl_latency_through_folio(struct kunit *test,
					      unsigned int stamp,
					      unsigned int now)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct folio *folio;
	unsigned int latency;

	KUNIT_ASSERT_NOT_NULL(test, page);
	folio = page_folio(page);
	folio_xchg_access_time(folio, stamp);
	latency = numa_hint_latency(now, folio_xchg_access_time(folio, now));
	/* the fault restamps the folio with now */
	KUNIT_EXPECT_EQ(test,
			numa_hint_latency(now, folio_xchg_access_time(folio, now)),
			0U);
	__free_page(page);
	return latency;
}

static void numa_hint_test_latency(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 100 * NHL_UNIT,
							160 * NHL_UNIT),
			60 * NHL_UNIT);
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 7 * NHL_UNIT,
							7 * NHL_UNIT), 0U);
	/* the largest latency a stamp can express */
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 0,
							NHL_RANGE - NHL_UNIT),
			NHL_RANGE - NHL_UNIT);
}

static void numa_hint_test_latency_wraps(struct kunit *test)
{
	/* the stored bits wrap between stamp and fault */
	KUNIT_EXPECT_EQ(test,
			nhl_latency_through_folio(test, NHL_RANGE - 10 * NHL_UNIT,
						  NHL_RANGE + 20 * NHL_UNIT),
			30 * NHL_UNIT);
	/* the clock itself (an atomic_t) wraps */
	KUNIT_EXPECT_EQ(test,
			nhl_latency_through_folio(test, 0U - 10 * NHL_UNIT,
						  20 * NHL_UNIT),
			30 * NHL_UNIT);
	KUNIT_EXPECT_EQ(test,
			nhl_latency_through_folio(test, (unsigned int)INT_MAX + 1 -
						  4 * NHL_UNIT,
						  (unsigned int)INT_MAX + 1 +
						  4 * NHL_UNIT),
			8 * NHL_UNIT);
	/* beyond the range a latency aliases: documented, not hidden */
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 0,
							NHL_RANGE + 5 * NHL_UNIT),
			5 * NHL_UNIT);
}

static void numa_hint_test_fault_advances_clock(struct kunit *test)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct folio *folio;
	unsigned int latency;
	atomic_t *clock;
	int nid, before;

	KUNIT_ASSERT_NOT_NULL(test, page);
	folio = page_folio(page);
	nid = folio_nid(folio);
	clock = numa_hint_clock(nid);
	before = atomic_read(clock);
	folio_xchg_access_time(folio, before);
	/* 5 units of other hint faults on the node, then this one */
	atomic_add(5 * NHL_UNIT, clock);
	latency = numa_hint_fault_count_latency(folio, nid);
	/*
	 * at least: other CPUs may fault on the node meanwhile; latencies
	 * are whole units
	 */
	KUNIT_EXPECT_GE(test, latency, 5 * NHL_UNIT);
	KUNIT_EXPECT_GE(test, (unsigned int)(atomic_read(clock) - before),
			5 * NHL_UNIT + 1);
	__free_page(page);
}

static void numa_hint_test_adjust_threshold(struct kunit *test)
{
	/* reference 1024: one step is 128, the range [128, 2048] */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(0, 1024, 1000, 1000), 1024U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 1024, 1099, 1000), 1024U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 1024, 901, 1000), 1024U);
	/* too many candidates: down one step, never under one step */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 1024, 1101, 1000), 896U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(0, 1024, 5000, 1000), 896U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(200, 1024, 5000, 1000), 128U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(128, 1024, 5000, 1000), 128U);
	/* too few: up one step, never over twice the reference */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 1024, 899, 1000), 1152U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(2000, 1024, 0, 1000), 2048U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(2048, 1024, 0, 1000), 2048U);
	/* a tiny reference still moves by one */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1, 1, 5000, 1000), 1U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1, 1, 0, 1000), 2U);
}

static void numa_hint_test_adjust_converges(struct kunit *test)
{
	unsigned int th = 0;
	int i;

	/* sustained overload walks the threshold down to its floor ... */
	for (i = 0; i < 2 * NUMA_HINT_ADJUST_STEPS; i++)
		th = numa_hint_adjust_threshold(th, 1024, ULONG_MAX / 2, 1000);
	KUNIT_EXPECT_EQ(test, th, 128U);
	/* ... and an idle period walks it back up to its ceiling */
	for (i = 0; i < 2 * NUMA_HINT_ADJUST_STEPS; i++)
		th = numa_hint_adjust_threshold(th, 1024, 0, 1000);
	KUNIT_EXPECT_EQ(test, th, 2048U);
	/* the default and its ceiling are latencies a stamp can express */
	KUNIT_EXPECT_LT(test, 2U * NUMA_HINT_DEFAULT_THRESHOLD_FAULTS, NHL_RANGE);
}

/**
 * nhl_mm_latency_through_folio() - per-mm clock: stamp a folio, then measure
 * @test: the test
 * @stamp: the mm's count when the scanner passed
 * @now: the mm's count at the fault
 *
 * Return: the latency, computed from what the folio gave back.
 */
static unsigned int nhl_mm_latency_through_folio(struct kunit *test,
						 unsigned int stamp,
						 unsigned int now)
{
	struct page *page = alloc_page(GFP_KERNEL);
	unsigned int latency;
	struct folio *folio;

	KUNIT_ASSERT_NOT_NULL(test, page);
	folio = page_folio(page);
	folio_xchg_last_cpupid(folio, stamp >> NUMA_HINT_MM_BUCKET_SHIFT);
	latency = numa_hint_mm_latency(now,
				       folio_xchg_last_cpupid(folio,
							      now >> NUMA_HINT_MM_BUCKET_SHIFT));
	__free_page(page);
	return latency;
}

static void numa_hint_test_mm_latency(struct kunit *test)
{
	/* the RFC's buckets: now minus the start of the stamp's bucket */
	KUNIT_EXPECT_EQ(test, nhl_mm_latency_through_folio(test, 1000000, 1500000),
			1500000U - (1000000U & ~0xffffU));
	KUNIT_EXPECT_EQ(test, nhl_mm_latency_through_folio(test, 65536, 65536), 0U);
	/* within one bucket the latency is what the bucket has seen */
	KUNIT_EXPECT_EQ(test, nhl_mm_latency_through_folio(test, 70000, 70001),
			70001U - 65536U);
	/* the RFC's threshold is a latency the stamp can express */
	KUNIT_EXPECT_GE(test, numa_hint_mm_latency_mask(),
			(unsigned int)NUMA_HINT_MM_THRESHOLD_FAULTS);
	/* the 32-bit count wraps between scan and fault */
	KUNIT_EXPECT_EQ(test, nhl_mm_latency_through_folio(test, 0xffff0005U,
							   0x10005U),
			0x20005U);
}

static void numa_hint_test_knobs_einval(struct kunit *test)
{
	int scope = READ_ONCE(numa_hint_clock_scope);
	unsigned int th = READ_ONCE(numa_hint_threshold_faults);

	KUNIT_ASSERT_EQ(test, numa_hint_set_threshold(0), 0);
	KUNIT_ASSERT_EQ(test, numa_hint_set_clock(NUMA_HINT_CLOCK_NODE), 0);
	/* per-node stamps cannot express the RFC's threshold */
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(NUMA_HINT_MM_THRESHOLD_FAULTS),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(numa_hint_threshold_faults), 0U);
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(PAGE_ACCESS_TIME_MASK), 0);
	/* per-mm ones can */
	KUNIT_EXPECT_EQ(test, numa_hint_set_clock(NUMA_HINT_CLOCK_MM), 0);
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(NUMA_HINT_MM_THRESHOLD_FAULTS), 0);
	/* and back to per-node would leave it out of range: refused */
	KUNIT_EXPECT_EQ(test, numa_hint_set_clock(NUMA_HINT_CLOCK_NODE), -EINVAL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(numa_hint_clock_scope), NUMA_HINT_CLOCK_MM);
	/* the per-mm clock's default threshold is the RFC's */
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(0), 0);
	KUNIT_EXPECT_EQ(test, numa_hint_fault_threshold(NODE_DATA(first_online_node),
							1, 1000),
			(unsigned int)NUMA_HINT_MM_THRESHOLD_FAULTS);
	KUNIT_EXPECT_EQ(test, numa_hint_set_clock(NUMA_HINT_CLOCK_NODE), 0);
	WRITE_ONCE(numa_hint_threshold_faults, th);
	WRITE_ONCE(numa_hint_clock_scope, scope);
}

static struct kunit_case numa_hint_latency_test_cases[] = {
	KUNIT_CASE(numa_hint_test_latency),
	KUNIT_CASE(numa_hint_test_latency_wraps),
	KUNIT_CASE(numa_hint_test_fault_advances_clock),
	KUNIT_CASE(numa_hint_test_adjust_threshold),
	KUNIT_CASE(numa_hint_test_adjust_converges),
	KUNIT_CASE(numa_hint_test_mm_latency),
	KUNIT_CASE(numa_hint_test_knobs_einval),
	{},
};

static struct kunit_suite numa_hint_latency_test_suite = {
	.name = "numa-hint-latency",
	.test_cases = numa_hint_latency_test_cases,
};

kunit_test_suite(numa_hint_latency_test_suite);

#endif /* _NUMA_HINT_LATENCY_KUNIT_H */
