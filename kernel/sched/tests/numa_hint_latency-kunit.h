/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the fault-count NUMA hint latency
 * (kernel/sched/numa_hint_latency.c).  Included at the end of that file.
 */
#ifndef _NUMA_HINT_LATENCY_KUNIT_H
#define _NUMA_HINT_LATENCY_KUNIT_H

#include <kunit/test.h>
#include <linux/gfp.h>

/* the range of unit-clock latencies a stamp can express */
#define NHL_RANGE	((unsigned int)BIT(NUMA_HINT_CLOCK_BITS))

/**
 * nhl_latency_through_folio() - stamp a real folio, then measure
 * @test: the test
 * @stamp: unit clock the scanner stores
 * @now: unit clock at the fault
 *
 * Return: the latency, computed from what the folio gave back.
 */
static unsigned int nhl_latency_through_folio(struct kunit *test,
					      unsigned int stamp,
					      unsigned int now)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct folio *folio;
	unsigned int latency, last;

	KUNIT_ASSERT_NOT_NULL(test, page);
	folio = page_folio(page);
	folio_xchg_last_cpupid(folio, stamp << 1);
	last = folio_xchg_last_cpupid(folio, now << 1 | NUMA_HINT_STAMP_FAULTED);
	KUNIT_EXPECT_EQ(test, last & NUMA_HINT_STAMP_FAULTED, 0U);
	latency = numa_hint_stamp_latency(now, last);
	/* the fault restamps the folio with now, and marks it */
	last = folio_last_cpupid(folio);
	KUNIT_EXPECT_EQ(test, numa_hint_stamp_latency(now, last), 0U);
	KUNIT_EXPECT_EQ(test, last & NUMA_HINT_STAMP_FAULTED,
			NUMA_HINT_STAMP_FAULTED);
	__free_page(page);
	return latency;
}

static void numa_hint_test_latency(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 100, 160), 60U);
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 7, 7), 0U);
	/* the largest latency a stamp can express */
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 0, NHL_RANGE - 1),
			NHL_RANGE - 1);
}

static void numa_hint_test_latency_wraps(struct kunit *test)
{
	/* the stored bits wrap between stamp and fault */
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, NHL_RANGE - 10,
							NHL_RANGE + 20), 30U);
	/* the unit clock itself wraps */
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 0U - 10, 20), 30U);
	/* beyond the range a latency aliases: documented, not hidden */
	KUNIT_EXPECT_EQ(test, nhl_latency_through_folio(test, 0, NHL_RANGE + 5),
			5U);
}

static void numa_hint_test_unit_shift(struct kunit *test)
{
	unsigned int th;

	/* thresholds below 2^NUMA_HINT_TH_BITS are counted in single faults */
	KUNIT_EXPECT_EQ(test, numa_hint_unit_shift(1), 0U);
	KUNIT_EXPECT_EQ(test, numa_hint_unit_shift(BIT(NUMA_HINT_TH_BITS) - 1), 0U);
	KUNIT_EXPECT_EQ(test, numa_hint_unit_shift(BIT(NUMA_HINT_TH_BITS)), 1U);
	/* every threshold fits, with at least 2^(TH_BITS - 1) units of resolution */
	for (th = 1; th && th <= NUMA_HINT_MAX_THRESHOLD_FAULTS; th = th * 3 + 1) {
		unsigned int shift = numa_hint_unit_shift(th);

		KUNIT_EXPECT_LT(test, th >> shift, BIT(NUMA_HINT_TH_BITS));
		if (shift)
			KUNIT_EXPECT_GE(test, th >> shift,
					BIT(NUMA_HINT_TH_BITS - 1));
	}
	/* a latency of 15 thresholds, at the widest range, is still exact */
	th = NUMA_HINT_MAX_THRESHOLD_FAULTS;
	KUNIT_EXPECT_LT(test, 15 * (th >> numa_hint_unit_shift(th)), NHL_RANGE);
	KUNIT_EXPECT_LE(test, numa_hint_unit_shift(th),
			(unsigned int)NUMA_HINT_SHIFT_MASK);
}

static void numa_hint_test_rebase(struct kunit *test)
{
	unsigned long raws[] = { 0, 12345, 1UL << 31, ULONG_MAX / 2 };
	unsigned long base, nbase, raw;
	unsigned int shift, nshift, now;
	int i;

	for (i = 0; i < ARRAY_SIZE(raws); i++) {
		raw = raws[i];
		base = 0;
		for (shift = 0; shift < 24; shift += 5) {
			for (nshift = 0; nshift < 24; nshift += 7) {
				now = numa_hint_unit_clock(raw, base);
				nbase = numa_hint_rebase(raw, base, nshift);
				/*
				 * at the change: the same value, in its low
				 * bits, or a jump past any threshold to a
				 * finer unit
				 */
				KUNIT_EXPECT_EQ(test,
						(numa_hint_unit_clock(raw, nbase) -
						 now) & NUMA_HINT_CLOCK_MASK,
						nshift < (base & NUMA_HINT_SHIFT_MASK) ?
						BIT(NUMA_HINT_TH_BITS) : 0);
				/* then one unit per 2^nshift faults */
				KUNIT_EXPECT_EQ(test,
						(numa_hint_unit_clock(raw + (3UL << nshift),
								      nbase) -
						 numa_hint_unit_clock(raw, nbase)) &
						NUMA_HINT_CLOCK_MASK, 3U);
				base = nbase;
			}
			base = numa_hint_rebase(raw, base, shift);
		}
	}
}

/*
 * The automatic threshold can fall 64x in one period, and the unit with
 * it by 2^6.  A folio stamped just before, hot or not, must not read as
 * hotter than it is: every stamp of the old unit reads at least the new
 * threshold.  A rise of the unit only lengthens old latencies.
 */
static void numa_hint_test_rebase_64x(struct kunit *test)
{
	unsigned int th = NUMA_HINT_MAX_THRESHOLD_FAULTS, nth = th / 64;
	unsigned int shift = numa_hint_unit_shift(th);
	unsigned int nshift = numa_hint_unit_shift(nth);
	unsigned long raw = 1UL << 31, base, nbase;
	unsigned int stamp, d, lat;

	KUNIT_ASSERT_EQ(test, shift - nshift, 6U);
	base = numa_hint_rebase(raw, 0, shift);
	nbase = numa_hint_rebase(raw, base, nshift);
	for (d = 0; d < 2 * th; d += th / 8) {
		/* stamped d faults before the drop: at least the threshold */
		stamp = numa_hint_unit_clock(raw - d, base);
		lat = numa_hint_stamp_latency(numa_hint_unit_clock(raw, nbase),
					      stamp << 1);
		KUNIT_EXPECT_GE(test, lat, nth >> nshift);
	}
	base = numa_hint_rebase(raw, nbase, shift);
	for (d = 0; d < 8 * nth; d += nth / 8) {
		/* stamped d faults before a rise: at least d */
		stamp = numa_hint_unit_clock(raw - d, nbase);
		lat = numa_hint_stamp_latency(numa_hint_unit_clock(raw, base),
					      stamp << 1);
		KUNIT_EXPECT_GE(test, (u64)lat << shift, (u64)d);
	}
}

static void numa_hint_test_adjust_threshold(struct kunit *test)
{
	const unsigned int max = NUMA_HINT_MAX_THRESHOLD_FAULTS;

	/* within 10% of the rate limit: unchanged */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 1000, 1000), 1024U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 1100, 1000), 1024U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 900, 1000), 1024U);
	/* too few candidates: doubled, up to the maximum */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 899, 1000), 2048U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(max / 2 + 1, 0, 1000), max);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(max, 0, 1000), max);
	/* too many: scaled by limit / candidates, at least halved ... */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 1101, 1000), 512U);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1024, 4000, 1000), 256U);
	/* ... at most by 64, never below one fault */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1 << 20, ULONG_MAX, 1000),
			(1U << 20) / NUMA_HINT_MAX_STEP_DOWN);
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(1, 5000, 1000), 1U);
	/* a rate limit of 0 candidates: down at the fastest step */
	KUNIT_EXPECT_EQ(test, numa_hint_adjust_threshold(6400, 1, 0), 100U);
	/* a huge rate limit does not overflow */
	KUNIT_EXPECT_GE(test, numa_hint_adjust_threshold(max, ULONG_MAX,
							 ULONG_MAX / 4),
			max / 4 - 1);
	KUNIT_EXPECT_LE(test, numa_hint_adjust_threshold(max, ULONG_MAX,
							 ULONG_MAX / 4),
			max / 4);
}

static void numa_hint_test_adjust_converges(struct kunit *test)
{
	/* candidates per period proportional to the threshold: 10 per fault */
	unsigned long rates[] = { 100, 10000, 1000000 };
	unsigned int th, i, n;

	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		/* the limit allows what a threshold of rates[i] faults yields */
		unsigned long ref = 10 * rates[i];

		th = NUMA_HINT_MAX_THRESHOLD_FAULTS;
		for (n = 0; n < 8; n++)
			th = numa_hint_adjust_threshold(th, 10UL * th, ref);
		/* from the top in at most 8 periods, within the 10% band */
		KUNIT_EXPECT_LE(test, 10UL * th, ref + ref / 10);
		KUNIT_EXPECT_GE(test, 10UL * th, ref - ref / 10);
	}
}

static void numa_hint_test_decide(struct kunit *test)
{
	unsigned int th = READ_ONCE(numa_hint_threshold_faults);
	int scope = READ_ONCE(numa_hint_clock_scope);
	bool repeat = READ_ONCE(numa_hint_repeat);
	int mode = READ_ONCE(sysctl_numa_balancing_mode);
	struct page *page = alloc_page(GFP_KERNEL);
	unsigned int latency, threshold;
	struct folio *folio;
	int nid;

	KUNIT_ASSERT_NOT_NULL(test, page);
	folio = page_folio(page);
	nid = folio_nid(folio);
	WRITE_ONCE(numa_hint_clock_scope, NUMA_HINT_CLOCK_NODE);
	/* a threshold below the clock's slack is raised to it */
	KUNIT_ASSERT_EQ(test, numa_hint_set_threshold(1), 0);
	numa_hint_fault_decide(folio, NULL, nid, 1, 1000, &latency, &threshold);
	KUNIT_EXPECT_EQ(test, threshold, numa_hint_clock_slack(NODE_DATA(nid)));
	KUNIT_ASSERT_EQ(test, numa_hint_set_threshold(1000), 0);
	WRITE_ONCE(numa_hint_repeat, true);

	/* the scanner found it still PROT_NONE: stamped, unmarked */
	numa_hint_stamp_faults(folio, false);
	KUNIT_EXPECT_EQ(test, numa_hint_fault_decide(folio, NULL, nid, 1, 1000,
						     &latency, &threshold),
			NUMA_HINT_REJECT_FIRST);
	KUNIT_EXPECT_EQ(test, threshold,
			max(1000U, numa_hint_clock_slack(NODE_DATA(nid))));
	/* a scan that finds it accessed keeps the mark */
	numa_hint_stamp_faults(folio, true);
	KUNIT_EXPECT_EQ(test, numa_hint_fault_decide(folio, NULL, nid, 1, 1000,
						     &latency, &threshold),
			NUMA_HINT_PROMOTE);
	/* five thresholds and the slack later: too cold */
	numa_hint_stamp_faults(folio, true);
	mod_node_page_state(NODE_DATA(nid), NUMA_HINT_FAULTS_TIERING,
			    5 * threshold + numa_hint_clock_slack(NODE_DATA(nid)));
	KUNIT_EXPECT_EQ(test, numa_hint_fault_decide(folio, NULL, nid, 1, 1000,
						     &latency, &threshold),
			NUMA_HINT_REJECT_LATENCY);
	KUNIT_EXPECT_GE(test, latency, 4 * threshold);
	/* without hot_repeat the first fault under the threshold is enough */
	WRITE_ONCE(numa_hint_repeat, false);
	numa_hint_stamp_faults(folio, false);
	KUNIT_EXPECT_EQ(test, numa_hint_fault_decide(folio, NULL, nid, 1, 1000,
						     &latency, &threshold),
			NUMA_HINT_PROMOTE);
	/* no stamp (a migration reset it): rejected, then stamped */
	folio_xchg_last_cpupid(folio, -1);
	KUNIT_EXPECT_EQ(test, numa_hint_fault_decide(folio, NULL, nid, 1, 1000,
						     &latency, &threshold),
			NUMA_HINT_REJECT_LATENCY);
	KUNIT_EXPECT_EQ(test, latency, U32_MAX);
	KUNIT_EXPECT_NE(test, folio_last_cpupid(folio), (int)LAST_CPUPID_MASK);
	KUNIT_EXPECT_EQ(test, numa_hint_fault_decide(folio, NULL, nid, 1, 1000,
						     &latency, &threshold),
			NUMA_HINT_PROMOTE);
	/* in fault-count mode a per-node stamp does not move to another node */
	WRITE_ONCE(sysctl_numa_balancing_mode, NUMA_BALANCING_MEMORY_TIERING |
		   NUMA_BALANCING_TIERING_FAULTS);
	KUNIT_EXPECT_TRUE(test, numa_hint_stamp_migrates(nid, nid));
	KUNIT_EXPECT_FALSE(test, numa_hint_stamp_migrates(nid, nid + 1));
	WRITE_ONCE(numa_hint_clock_scope, NUMA_HINT_CLOCK_MM);
	KUNIT_EXPECT_TRUE(test, numa_hint_stamp_migrates(nid, nid + 1));
	WRITE_ONCE(numa_hint_clock_scope, NUMA_HINT_CLOCK_NODE);
	WRITE_ONCE(sysctl_numa_balancing_mode, NUMA_BALANCING_MEMORY_TIERING);
	KUNIT_EXPECT_TRUE(test, numa_hint_stamp_migrates(nid, nid + 1));
	WRITE_ONCE(sysctl_numa_balancing_mode, mode);

	WRITE_ONCE(numa_hint_repeat, repeat);
	WRITE_ONCE(numa_hint_threshold_faults, th);
	WRITE_ONCE(numa_hint_clock_scope, scope);
	__free_page(page);
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
	/* per-node thresholds go up to NUMA_HINT_MAX_THRESHOLD_FAULTS */
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(NUMA_HINT_MAX_THRESHOLD_FAULTS + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(numa_hint_threshold_faults), 0U);
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(NUMA_HINT_MAX_THRESHOLD_FAULTS), 0);
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(NUMA_HINT_MM_THRESHOLD_FAULTS), 0);
	/* per-mm ones further, if the stamp's bits allow */
	KUNIT_EXPECT_EQ(test, numa_hint_set_clock(NUMA_HINT_CLOCK_MM), 0);
	if (numa_hint_mm_latency_mask() > NUMA_HINT_MAX_THRESHOLD_FAULTS) {
		KUNIT_EXPECT_EQ(test,
				numa_hint_set_threshold(NUMA_HINT_MAX_THRESHOLD_FAULTS + 1),
				0);
		/* and back to per-node would leave it out of range: refused */
		KUNIT_EXPECT_EQ(test, numa_hint_set_clock(NUMA_HINT_CLOCK_NODE),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, READ_ONCE(numa_hint_clock_scope),
				NUMA_HINT_CLOCK_MM);
	}
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(0), 0);
	KUNIT_EXPECT_EQ(test, numa_hint_set_clock(NUMA_HINT_CLOCK_NODE), 0);
	WRITE_ONCE(numa_hint_threshold_faults, th);
	WRITE_ONCE(numa_hint_clock_scope, scope);
}

static struct kunit_case numa_hint_latency_test_cases[] = {
	KUNIT_CASE(numa_hint_test_latency),
	KUNIT_CASE(numa_hint_test_latency_wraps),
	KUNIT_CASE(numa_hint_test_unit_shift),
	KUNIT_CASE(numa_hint_test_rebase),
	KUNIT_CASE(numa_hint_test_rebase_64x),
	KUNIT_CASE(numa_hint_test_adjust_threshold),
	KUNIT_CASE(numa_hint_test_adjust_converges),
	KUNIT_CASE(numa_hint_test_decide),
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
