/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the tiering accounting layer (mm/tiering_stat.c).
 * Included at the end of mm/tiering_stat.c, to reach its static functions.
 */
#ifndef _TIERING_STAT_KUNIT_H
#define _TIERING_STAT_KUNIT_H

#include <kunit/test.h>

static void tiering_stat_test_charge_nid(struct kunit *test)
{
	/* up a tier: destination, like pgpromote_success */
	if (IS_ENABLED(CONFIG_DAMON_PADDR))
		KUNIT_EXPECT_EQ(test, tiering_charge_nid(TIERING_DAMON_HOT, 2, 0), 0);
	/* down a tier: source, like pgdemote_* */
	KUNIT_EXPECT_EQ(test, tiering_charge_nid(TIERING_DAMON_COLD, 0, 2), 0);
	KUNIT_EXPECT_EQ(test, tiering_charge_nid(TIERING_DAMON_COLD, 1, 2), 1);
}

static void tiering_stat_test_every_reason_has_items(struct kunit *test)
{
	int i;

	for (i = 0; i < NR_TIERING_REASONS; i++) {
		/* traced only: reclaim charges pgdemote_* itself */
		if (i == TIERING_DEMOTION) {
			KUNIT_EXPECT_FALSE(test, tiering_stats[i].counted);
			continue;
		}
		/* no damon_migrate_* items without DAMON_PADDR, which moves them */
		if ((i == TIERING_DAMON_HOT || i == TIERING_DAMON_COLD) &&
		    !IS_ENABLED(CONFIG_DAMON_PADDR)) {
			KUNIT_EXPECT_FALSE(test, tiering_stats[i].counted);
			continue;
		}
		KUNIT_EXPECT_TRUE(test, tiering_stats[i].counted);
		KUNIT_EXPECT_LT(test, (int)tiering_stats[i].moved,
				NR_VM_NODE_STAT_ITEMS);
		KUNIT_EXPECT_NE(test, (int)tiering_stats[i].moved,
				(int)tiering_stats[i].failed);
	}
}

/* a reason without items changes no counter of any node */
static void tiering_stat_test_uncounted_charges_nothing(struct kunit *test)
{
	unsigned long before[NR_VM_NODE_STAT_ITEMS];
	int nid = first_memory_node, i;

	for (i = 0; i < NR_VM_NODE_STAT_ITEMS; i++)
		before[i] = node_page_state_pages(NODE_DATA(nid), i);
	tiering_account(nid, nid, 1000000, 1000000, TIERING_DEMOTION);
	for (i = 0; i < NR_VM_NODE_STAT_ITEMS; i++) {
		/* other CPUs move the busy items; a million is ours */
		long d = (long)(node_page_state_pages(NODE_DATA(nid), i) -
				before[i]);

		KUNIT_EXPECT_LT_MSG(test, d, 500000L, "item %d", i);
	}
}

static void tiering_stat_test_target_nid_valid(struct kunit *test)
{
	int nid;

	KUNIT_EXPECT_FALSE(test, tiering_target_nid_valid(NUMA_NO_NODE));
	KUNIT_EXPECT_FALSE(test, tiering_target_nid_valid(-2));
	KUNIT_EXPECT_FALSE(test, tiering_target_nid_valid(INT_MIN));
	KUNIT_EXPECT_FALSE(test, tiering_target_nid_valid(nr_node_ids));
	KUNIT_EXPECT_FALSE(test, tiering_target_nid_valid(MAX_NUMNODES));
	KUNIT_EXPECT_FALSE(test, tiering_target_nid_valid(INT_MAX));
	for (nid = 0; nid < nr_node_ids; nid++)
		KUNIT_EXPECT_EQ(test, tiering_target_nid_valid(nid),
				node_state(nid, N_MEMORY));
	KUNIT_EXPECT_TRUE(test, tiering_target_nid_valid(first_memory_node));
}

static void tiering_stat_test_nid_possible(struct kunit *test)
{
	int nid;

	KUNIT_EXPECT_FALSE(test, tiering_nid_possible(NUMA_NO_NODE));
	KUNIT_EXPECT_FALSE(test, tiering_nid_possible(INT_MIN));
	KUNIT_EXPECT_FALSE(test, tiering_nid_possible(nr_node_ids));
	KUNIT_EXPECT_FALSE(test, tiering_nid_possible(MAX_NUMNODES));
	KUNIT_EXPECT_FALSE(test, tiering_nid_possible(INT_MAX));
	for (nid = 0; nid < nr_node_ids; nid++) {
		KUNIT_EXPECT_EQ(test, tiering_nid_possible(nid),
				node_possible(nid));
		/* memory implies possible, not the other way round */
		if (tiering_target_nid_valid(nid))
			KUNIT_EXPECT_TRUE(test, tiering_nid_possible(nid));
	}
}

static struct kunit_case tiering_stat_test_cases[] = {
	KUNIT_CASE(tiering_stat_test_charge_nid),
	KUNIT_CASE(tiering_stat_test_every_reason_has_items),
	KUNIT_CASE(tiering_stat_test_uncounted_charges_nothing),
	KUNIT_CASE(tiering_stat_test_target_nid_valid),
	KUNIT_CASE(tiering_stat_test_nid_possible),
	{},
};

static struct kunit_suite tiering_stat_test_suite = {
	.name = "tiering-stat",
	.test_cases = tiering_stat_test_cases,
};

kunit_test_suite(tiering_stat_test_suite);

#endif /* _TIERING_STAT_KUNIT_H */
