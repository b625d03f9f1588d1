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
	/* a latency of 2^ALIAS_BITS - 1 thresholds, at the widest, is exact */
	th = NUMA_HINT_MAX_THRESHOLD_FAULTS;
	KUNIT_EXPECT_LT(test, (BIT(NUMA_HINT_ALIAS_BITS) - 1) *
			(th >> numa_hint_unit_shift(th)), NHL_RANGE);
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

/**
 * nhl_stat() - numa_hint_node_stat_exact(), read until two reads agree
 * @pgdat: the node
 * @item: the item
 *
 * A CPU's vmstat fold between the read of the node's total and the read
 * of that CPU's diff makes one read miss the diff; two equal reads in a
 * row did not race with a fold.
 *
 * Return: the item, every CPU folded in.
 */
static unsigned long nhl_stat(struct pglist_data *pgdat,
			      enum node_stat_item item)
{
	unsigned long a, b = numa_hint_node_stat_exact(pgdat, item);

	do {
		a = b;
		b = numa_hint_node_stat_exact(pgdat, item);
	} while (a != b);
	return a;
}

static void numa_hint_test_decide(struct kunit *test)
{
	unsigned int th = READ_ONCE(numa_hint_threshold_faults);
	int scope = READ_ONCE(numa_hint_clock_scope);
	bool repeat = READ_ONCE(numa_hint_repeat);
	struct page *page = alloc_page(GFP_KERNEL);
	unsigned int latency, threshold;
	unsigned long cand;
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
	cand = nhl_stat(NODE_DATA(nid), NUMA_HINT_CANDIDATES_TIERING);
	KUNIT_EXPECT_EQ(test, numa_hint_fault_decide(folio, NULL, nid, 1, 1000,
						     &latency, &threshold),
			NUMA_HINT_PROMOTE);
	/* a candidate is counted on its node, in pages */
	KUNIT_EXPECT_EQ(test, nhl_stat(NODE_DATA(nid),
				       NUMA_HINT_CANDIDATES_TIERING), cand + 1);
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

	WRITE_ONCE(numa_hint_repeat, repeat);
	WRITE_ONCE(numa_hint_threshold_faults, th);
	WRITE_ONCE(numa_hint_clock_scope, scope);
	__free_page(page);
}

/*
 * _last_cpupid of a migrating folio (folio_migrate_flags()): only a
 * lower-tier folio's holds a hint stamp, and only a per-node fault-count
 * stamp is reset when the folio changes node.  A top-tier folio's holds a
 * real cpupid, which NUMA balancing (mode 3, 7) reads, whatever the mode.
 */
static void numa_hint_test_stamp_migrates(struct kunit *test)
{
	const int modes[] = {
		NUMA_BALANCING_NORMAL, NUMA_BALANCING_MEMORY_TIERING,
		NUMA_BALANCING_NORMAL | NUMA_BALANCING_MEMORY_TIERING,
		NUMA_BALANCING_MEMORY_TIERING | NUMA_BALANCING_TIERING_FAULTS,
		NUMA_BALANCING_NORMAL | NUMA_BALANCING_MEMORY_TIERING |
		NUMA_BALANCING_TIERING_FAULTS,
	};
	int mode = READ_ONCE(sysctl_numa_balancing_mode);
	int scope = READ_ONCE(numa_hint_clock_scope);
	int top = NUMA_NO_NODE, top2 = NUMA_NO_NODE;
	int src, dst, m, sc;
	bool faults, reset;

	for_each_node_state(src, N_MEMORY) {
		if (!node_is_toptier(src))
			continue;
		if (top == NUMA_NO_NODE)
			top = src;
		else if (top2 == NUMA_NO_NODE)
			top2 = src;
	}
	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		WRITE_ONCE(sysctl_numa_balancing_mode, modes[m]);
		for (sc = NUMA_HINT_CLOCK_NODE; sc <= NUMA_HINT_CLOCK_MM; sc++) {
			WRITE_ONCE(numa_hint_clock_scope, sc);
			faults = (modes[m] & NUMA_BALANCING_TIERING_FAULTS) &&
				sc == NUMA_HINT_CLOCK_NODE;
			for_each_node_state(src, N_MEMORY) {
				for_each_node_state(dst, N_MEMORY) {
					reset = faults && src != dst &&
						!node_is_toptier(src);
					KUNIT_EXPECT_EQ_MSG(test,
							    numa_hint_stamp_migrates(src, dst),
							    !reset,
							    "mode %d clock %d %d->%d",
							    modes[m], sc, src, dst);
				}
			}
		}
	}
	/* the case that normal balancing depends on, named */
	if (top2 != NUMA_NO_NODE) {
		WRITE_ONCE(sysctl_numa_balancing_mode, NUMA_BALANCING_NORMAL |
			   NUMA_BALANCING_MEMORY_TIERING |
			   NUMA_BALANCING_TIERING_FAULTS);
		WRITE_ONCE(numa_hint_clock_scope, NUMA_HINT_CLOCK_NODE);
		KUNIT_EXPECT_TRUE(test, numa_hint_stamp_migrates(top, top2));
	}
	WRITE_ONCE(numa_hint_clock_scope, scope);
	WRITE_ONCE(sysctl_numa_balancing_mode, mode);
	if (top2 == NUMA_NO_NODE)
		kunit_skip(test, "fewer than two top-tier nodes with memory");
}

/*
 * A folio idle for longer than the stamp's range reads modulo the range:
 * at the largest threshold in units, at most 2^-NUMA_HINT_ALIAS_BITS of
 * such folios, whatever their stamp, may read as hot.
 */
static void numa_hint_test_alias(struct kunit *test)
{
	unsigned int th = BIT(20) - 1, fixed = READ_ONCE(numa_hint_threshold_faults);
	int scope = READ_ONCE(numa_hint_clock_scope);
	bool repeat = READ_ONCE(numa_hint_repeat);
	struct page *page = alloc_page(GFP_KERNEL);
	unsigned int latency, threshold, now, units, stride, r, cap;
	unsigned int hot = 0, n = 0;
	struct pglist_data *pgdat;
	struct folio *folio;
	unsigned long base;
	int nid;

	KUNIT_ASSERT_NOT_NULL(test, page);
	folio = page_folio(page);
	nid = folio_nid(folio);
	pgdat = NODE_DATA(nid);
	WRITE_ONCE(numa_hint_clock_scope, NUMA_HINT_CLOCK_NODE);
	WRITE_ONCE(numa_hint_repeat, false);
	KUNIT_ASSERT_EQ(test, numa_hint_set_threshold(th), 0);
	KUNIT_ASSERT_GE(test, th, numa_hint_clock_slack(pgdat));
	base = READ_ONCE(pgdat->nbp_hint_base);
	units = th >> (base & NUMA_HINT_SHIFT_MASK);
	/* the largest threshold a unit allows: 2^TH_BITS - 1 units */
	KUNIT_EXPECT_EQ(test, units, (unsigned int)BIT(NUMA_HINT_TH_BITS) - 1);
	/* every residue of the stamp, or 65536 of them spread evenly */
	stride = max(NHL_RANGE >> 16, 1U);
	for (r = 0; r < NHL_RANGE; r += stride) {
		enum numa_hint_decision d;

		/* a vmstat fold moving the clock in between: sample again */
		do {
			now = numa_hint_node_clock(pgdat);
			folio_xchg_last_cpupid(folio, ((now - r) &
						       NUMA_HINT_CLOCK_MASK) << 1);
			d = numa_hint_fault_decide(folio, NULL, nid, 1, 1000,
						   &latency, &threshold);
		} while (now != numa_hint_node_clock(pgdat));
		if (d == NUMA_HINT_PROMOTE)
			hot++;
		n++;
	}
	/* hot exactly where the residue is under the threshold */
	KUNIT_EXPECT_EQ(test, hot, DIV_ROUND_UP(units, stride));
	/* at most 1/256 of them; 1/128 and 1/64 with 9 and 8 clock bits */
	cap = 1U << NUMA_HINT_ALIAS_BITS;
	KUNIT_EXPECT_LE(test, (u64)hot * cap, (u64)n);
	WRITE_ONCE(numa_hint_repeat, repeat);
	WRITE_ONCE(numa_hint_clock_scope, scope);
	KUNIT_EXPECT_EQ(test, numa_hint_set_threshold(fixed), 0);
	__free_page(page);
}

/*
 * The clock's lag bound: online CPUs times the vmstat threshold, or the
 * faults of NUMA_HINT_FOLD_INTERVALS stat intervals if fewer.  The
 * effective window at 256 CPUs (threshold 125) and 1,000 hint faults a
 * second: 32,000 faults (32 s) by the first bound, 4,000 (4 s) by the
 * second.
 */
static void numa_hint_test_fold_slack(struct kunit *test)
{
	/* 1,000 faults a second over a 60 s period, folded within 4 s */
	KUNIT_EXPECT_EQ(test, numa_hint_fold_slack(60000, 60000, 4000, 0), 4000U);
	KUNIT_EXPECT_LT(test, numa_hint_fold_slack(60000, 60000, 4000, 0),
			256U * 125);
	/* rounded up, at least one; isolated CPUs add their whole threshold */
	KUNIT_EXPECT_EQ(test, numa_hint_fold_slack(1, 60000, 4000, 0), 1U);
	KUNIT_EXPECT_EQ(test, numa_hint_fold_slack(0, 60000, 4000, 0), 1U);
	KUNIT_EXPECT_EQ(test, numa_hint_fold_slack(0, 60000, 4000, 2 * 125), 250U);
	/* no overflow at absurd rates, nor with a zero-length period */
	KUNIT_EXPECT_EQ(test, numa_hint_fold_slack(ULONG_MAX / 2, 1, 4000, 0),
			U32_MAX);
	KUNIT_EXPECT_EQ(test, numa_hint_fold_slack(ULONG_MAX, 60000, U32_MAX, 0),
			U32_MAX);
	KUNIT_EXPECT_EQ(test, numa_hint_fold_slack(10, 0, 4000, 0), 40000U);
#if BITS_PER_LONG == 64
	/* a large count over a long time: 5e9 faults in 10 h, 4 s of them */
	KUNIT_EXPECT_EQ(test, numa_hint_fold_slack(5000000000UL, 36000000, 4000,
						   0), 555556U);
#endif
}

/**
 * struct nhl_node_state - what a test saves of a node's fault-count state
 * @base: nbp_hint_base
 * @threshold: nbp_fault_threshold
 * @start: nbp_fault_th_start
 * @slack: nbp_fault_slack
 * @nr_cand: nbp_fault_th_nr_cand
 * @faults: nbp_fault_th_faults
 */
struct nhl_node_state {
	unsigned long base;
	unsigned int threshold, start, slack;
	unsigned long nr_cand, faults;
};

/**
 * nhl_swap() - exchange a node's fault-count state with a saved one
 * @pgdat: the node
 * @st: the saved state
 *
 * A test saves the node's state into a zeroed @st, and restores it by
 * calling this again.
 */
static void nhl_swap(struct pglist_data *pgdat, struct nhl_node_state *st)
{
	swap(pgdat->nbp_hint_base, st->base);
	swap(pgdat->nbp_fault_threshold, st->threshold);
	swap(pgdat->nbp_fault_th_start, st->start);
	swap(pgdat->nbp_fault_slack, st->slack);
	swap(pgdat->nbp_fault_th_nr_cand, st->nr_cand);
	swap(pgdat->nbp_fault_th_faults, st->faults);
}

/*
 * The period's end counts what every CPU holds: a few candidates and
 * faults that stay in this CPU's vmstat diff, which node_page_state()
 * does not show, move the threshold and the lag bound.
 */
static void numa_hint_test_period_end(struct kunit *test)
{
	struct pglist_data *pgdat = NODE_DATA(numa_node_id());
	unsigned int interval = jiffies_to_msecs(sysctl_stat_interval);
	unsigned int fold = NUMA_HINT_FOLD_INTERVALS * interval, unfolded;
	unsigned long cand, faults;
	struct nhl_node_state st = { 0 };
	int tries;

	unfolded = numa_hint_unfolded_cpus() *
		this_cpu_read(pgdat->per_cpu_nodestats->stat_threshold);
	nhl_swap(pgdat, &st);
	mod_node_page_state(pgdat, NUMA_HINT_CANDIDATES_TIERING, 3);
	mod_node_page_state(pgdat, NUMA_HINT_FAULTS_TIERING, 7);
	/*
	 * 3 candidates against a limit of 1: scaled by 1/3.  The period's
	 * single read may race with a fold (nhl_stat()): such a read is
	 * taken again.
	 */
	for (tries = 0; tries < 5; tries++) {
		cand = nhl_stat(pgdat, NUMA_HINT_CANDIDATES_TIERING) - 3;
		faults = nhl_stat(pgdat, NUMA_HINT_FAULTS_TIERING) - 7;
		pgdat->nbp_fault_threshold = 3 * 4096;
		pgdat->nbp_fault_th_nr_cand = cand;
		pgdat->nbp_fault_th_faults = faults;
		pgdat->nbp_fault_slack = 0;
		numa_hint_period_end(pgdat, 1, 1000, 2 * interval, true);
		if (pgdat->nbp_fault_th_nr_cand == cand + 3 &&
		    pgdat->nbp_fault_th_faults == faults + 7)
			break;
	}
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_slack,
			numa_hint_fold_slack(7, 2 * interval, fold, unfolded));
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_threshold,
			max(4096U, numa_hint_clock_slack(pgdat)));
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_th_nr_cand, cand + 3);
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_th_faults, faults + 7);
	/* with a fixed threshold only the lag bound follows */
	numa_hint_period_end(pgdat, 1, 1000, 2 * interval, false);
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_threshold,
			max(4096U, numa_hint_clock_slack(pgdat)));
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_slack,
			numa_hint_fold_slack(0, 2 * interval, fold, unfolded));
	mod_node_page_state(pgdat, NUMA_HINT_CANDIDATES_TIERING, -3);
	mod_node_page_state(pgdat, NUMA_HINT_FAULTS_TIERING, -7);
	nhl_swap(pgdat, &st);
}

/*
 * A fault that finds its node's period over only claims the period's end;
 * the fold over every CPU runs in numa_hint_period_work, outside the fault
 * and its page table lock.  The work takes numa_hint_knob_lock, so holding
 * it shows what the fault alone did.  A period whose start is unknown (a
 * node that came online after the mode was turned on) only sets the next
 * period's baselines: the counts since the node came up judge nothing.
 */
static void numa_hint_test_period_deferred(struct kunit *test)
{
	struct pglist_data *pgdat = NODE_DATA(numa_node_id());
	unsigned int fixed = READ_ONCE(numa_hint_threshold_faults);
	struct nhl_node_state st = { 0 };
	unsigned long cand;
	int tries;

	nhl_swap(pgdat, &st);
	WRITE_ONCE(numa_hint_threshold_faults, 0);
	mod_node_page_state(pgdat, NUMA_HINT_CANDIDATES_TIERING, 3);
	/* a baseline read that raced with a fold is taken again */
	for (tries = 0; tries < 5; tries++) {
		cand = nhl_stat(pgdat, NUMA_HINT_CANDIDATES_TIERING) - 3;
		pgdat->nbp_fault_threshold = 3 * 4096;
		pgdat->nbp_fault_th_nr_cand = cand;
		pgdat->nbp_fault_th_start = jiffies_to_msecs(jiffies) - 2000;
		mutex_lock(&numa_hint_knob_lock);
		numa_hint_node_threshold(pgdat, 1, 1000);
		KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_threshold, 3 * 4096U);
		KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_th_nr_cand, cand);
		KUNIT_EXPECT_TRUE(test, node_isset(pgdat->node_id,
						   numa_hint_period_pending));
		KUNIT_EXPECT_GE(test, pgdat->nbp_fault_elapsed, 2000U);
		mutex_unlock(&numa_hint_knob_lock);
		flush_work(&numa_hint_period_work);
		if (pgdat->nbp_fault_th_nr_cand == cand + 3)
			break;
	}
	/* the work ended it: 3 candidates against a limit of 1, scaled by 1/3 */
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_th_nr_cand, cand + 3);
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_threshold,
			max(4096U, numa_hint_clock_slack(pgdat)));
	KUNIT_EXPECT_FALSE(test, node_isset(pgdat->node_id,
					    numa_hint_period_pending));

	for (tries = 0; tries < 5; tries++) {
		pgdat->nbp_fault_threshold = 3 * 4096;
		pgdat->nbp_fault_th_nr_cand = 0;
		pgdat->nbp_fault_th_start = 0;
		numa_hint_node_threshold(pgdat, 1, 1000);
		flush_work(&numa_hint_period_work);
		if (pgdat->nbp_fault_th_nr_cand ==
		    nhl_stat(pgdat, NUMA_HINT_CANDIDATES_TIERING))
			break;
	}
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_threshold, 3 * 4096U);
	KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_th_nr_cand,
			nhl_stat(pgdat, NUMA_HINT_CANDIDATES_TIERING));
	KUNIT_EXPECT_NE(test, pgdat->nbp_fault_th_start, 0U);

	mod_node_page_state(pgdat, NUMA_HINT_CANDIDATES_TIERING, -3);
	WRITE_ONCE(numa_hint_threshold_faults, fixed);
	nhl_swap(pgdat, &st);
}

/**
 * nhl_restarted() - do every node's period baselines match its counts?
 *
 * Return: true if each online node's candidate and fault baselines are
 * its counts now (nhl_stat()).
 */
static bool nhl_restarted(void)
{
	struct pglist_data *pgdat;

	for_each_online_pgdat(pgdat)
		if (pgdat->nbp_fault_th_nr_cand !=
		    nhl_stat(pgdat, NUMA_HINT_CANDIDATES_TIERING) ||
		    pgdat->nbp_fault_th_faults !=
		    nhl_stat(pgdat, NUMA_HINT_FAULTS_TIERING))
			return false;
	return true;
}

/*
 * Turning the fault-count latency on restarts every node's state; other
 * writes of the sysctl leave it alone.
 */
static void numa_hint_test_mode_change(struct kunit *test)
{
	const int t = NUMA_BALANCING_MEMORY_TIERING;
	const int f = NUMA_BALANCING_MEMORY_TIERING | NUMA_BALANCING_TIERING_FAULTS;
	const int keep[][2] = { { f, f }, { f, t }, { f, 0 },
				{ f | 1, f }, { 0, t }, { 1, t | 1 } };
	const int on[][2] = { { t, f }, { 0, f }, { 1, f | 1 }, { t | 1, f } };
	struct nhl_node_state *st;
	struct pglist_data *pgdat;
	unsigned int th, now, after;
	int i, tries;

	st = kunit_kcalloc(test, nr_node_ids, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	for_each_online_pgdat(pgdat)
		nhl_swap(pgdat, &st[pgdat->node_id]);
	for (i = 0; i < ARRAY_SIZE(keep) + ARRAY_SIZE(on); i++) {
		bool reset = i >= ARRAY_SIZE(keep);
		const int *w = reset ? on[i - ARRAY_SIZE(keep)] : keep[i];

		for_each_online_pgdat(pgdat) {
			pgdat->nbp_fault_threshold = 777;
			pgdat->nbp_fault_slack = 5;
			pgdat->nbp_fault_th_nr_cand = 0;
			pgdat->nbp_fault_th_faults = 0;
			pgdat->nbp_fault_th_start = 0;
		}
		now = jiffies_to_msecs(jiffies);
		numa_hint_mode_change(w[0], w[1]);
		/* a baseline read that raced with a fold is taken again */
		for (tries = 0; reset && tries < 5 && !nhl_restarted(); tries++)
			numa_hint_mode_change(w[0], w[1]);
		after = jiffies_to_msecs(jiffies);
		for_each_online_pgdat(pgdat) {
			KUNIT_EXPECT_EQ_MSG(test, pgdat->nbp_fault_threshold,
					    reset ? 0U : 777U, "%d -> %d", w[0], w[1]);
			KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_slack, reset ? 0U : 5U);
			if (!reset) {
				KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_th_start, 0U);
				continue;
			}
			KUNIT_EXPECT_LE(test, pgdat->nbp_fault_th_start - now,
					after - now);
			/* only what is counted from now on is judged */
			KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_th_nr_cand,
					nhl_stat(pgdat, NUMA_HINT_CANDIDATES_TIERING));
			KUNIT_EXPECT_EQ(test, pgdat->nbp_fault_th_faults,
					nhl_stat(pgdat, NUMA_HINT_FAULTS_TIERING));
			/* the clock's unit is the restarted threshold's */
			th = READ_ONCE(numa_hint_threshold_faults) ? :
				NUMA_HINT_MAX_THRESHOLD_FAULTS;
			KUNIT_EXPECT_EQ(test, pgdat->nbp_hint_base & NUMA_HINT_SHIFT_MASK,
					(unsigned long)numa_hint_unit_shift(max(th,
						numa_hint_clock_slack(pgdat))));
		}
	}
	for_each_online_pgdat(pgdat)
		nhl_swap(pgdat, &st[pgdat->node_id]);
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
	KUNIT_CASE(numa_hint_test_stamp_migrates),
	KUNIT_CASE(numa_hint_test_alias),
	KUNIT_CASE(numa_hint_test_fold_slack),
	KUNIT_CASE(numa_hint_test_period_end),
	KUNIT_CASE(numa_hint_test_period_deferred),
	KUNIT_CASE(numa_hint_test_mode_change),
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
