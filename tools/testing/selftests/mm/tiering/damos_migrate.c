// SPDX-License-Identifier: GPL-2.0
/*
 * DAMOS migrate_cold and migrate_hot on the tiered lab: pin what 6.12 does.
 *
 * migrate_cold on node0's physical range with target_nid=2 must move a cold
 * mapping of this process to node2; migrate_hot on node2's range with
 * target_nid=0 must bring a mapping that a thread keeps touching to node0.
 * Placement is read back with move_pages(2) on the test's own pages.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#define SET_SIZE	(32UL << 20)
#define WAIT_S		240
#define FAST_NODE	0
#define SLOW_NODE	2

FIXTURE(damos) {
	char *buf;
};

FIXTURE_SETUP(damos)
{
	char p[128];

	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	snprintf(p, sizeof(p), "/sys/devices/system/node/node%d", SLOW_NODE);
	if (access(p, F_OK))
		SKIP(return, "no node%d: not the tiered lab", SLOW_NODE);
	if (damon_clear_stopped() == -EBUSY)
		SKIP(return, "a kdamond runs: not this test's to stop");
	ASSERT_EQ(read_long(DAMON_ADMIN "/kdamonds/nr_kdamonds"), 0);
	self->buf = NULL;
}

FIXTURE_TEARDOWN(damos)
{
	damon_stop();
	if (self->buf)
		munmap(self->buf, SET_SIZE);
}

TEST_F(damos, every_scheme_has_target_nid)
{
	char p[256];

	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "1"), 0);
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/0/contexts/nr_contexts", "1"), 0);
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/0/contexts/0/schemes/nr_schemes", "3"), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p),
			 DAMON_ADMIN "/kdamonds/0/contexts/0/schemes/%d/target_nid", i);
		EXPECT_EQ(access(p, R_OK | W_OK), 0);
		/* unset is NUMA_NO_NODE */
		EXPECT_EQ(read_long(p), -1);
	}
}

TEST_F_TIMEOUT(damos, migrate_cold_node0_to_node2, WAIT_S + 60)
{
	struct damos_cfg cold = {
		.action = "migrate_cold", .target_nid = SLOW_NODE,
		.min_nr_accesses = 0, .max_nr_accesses = 0, .min_age = 10,
	};
	long npages = SET_SIZE / getpagesize(), counts[MAX_NODES];

	ASSERT_EQ(node_phys_range(FAST_NODE, &cold.start, &cold.end), 0);
	self->buf = alloc_on_node(SET_SIZE, FAST_NODE);
	ASSERT_NE(self->buf, NULL);
	fill_pattern(self->buf, SET_SIZE, 1);
	ASSERT_EQ(count_pages_per_node(self->buf, SET_SIZE, counts), 0);
	ASSERT_EQ(counts[FAST_NODE], npages);

	ASSERT_EQ(damon_start(&cold, 1), 0);
	EXPECT_GE(wait_for_pages_on_node(self->buf, SET_SIZE, SLOW_NODE,
					 npages * 9 / 10, WAIT_S, counts),
		  npages * 9 / 10);
	TH_LOG("placement: node0 %ld node1 %ld node2 %ld pages", counts[0],
	       counts[1], counts[2]);
	count_pages_per_node(self->buf, SET_SIZE, counts);
	EXPECT_EQ(counts[1], 0);
	EXPECT_GT(damon_scheme_stat(0, "sz_applied"), 0);
	EXPECT_TRUE(check_pattern(self->buf, SET_SIZE, 1));
}

TEST_F_TIMEOUT(damos, migrate_hot_node2_to_node0, WAIT_S + 60)
{
	struct damos_cfg hot = {
		.action = "migrate_hot", .target_nid = FAST_NODE,
		.min_nr_accesses = 1, .max_nr_accesses = 1000, .min_age = 0,
	};
	long npages = SET_SIZE / getpagesize(), counts[MAX_NODES];
	struct toucher t;

	ASSERT_EQ(node_phys_range(SLOW_NODE, &hot.start, &hot.end), 0);
	self->buf = alloc_on_node(SET_SIZE, SLOW_NODE);
	ASSERT_NE(self->buf, NULL);
	ASSERT_EQ(count_pages_per_node(self->buf, SET_SIZE, counts), 0);
	ASSERT_EQ(counts[SLOW_NODE], npages);

	ASSERT_EQ(toucher_start(&t, self->buf, SET_SIZE), 0);
	ASSERT_EQ(damon_start(&hot, 1), 0);
	EXPECT_GE(wait_for_pages_on_node(self->buf, SET_SIZE, FAST_NODE,
					 npages * 9 / 10, WAIT_S, counts),
		  npages * 9 / 10);
	TH_LOG("placement: node0 %ld node1 %ld node2 %ld pages", counts[0],
	       counts[1], counts[2]);
	toucher_stop(&t);
	count_pages_per_node(self->buf, SET_SIZE, counts);
	EXPECT_EQ(counts[1], 0);
	EXPECT_GT(damon_scheme_stat(0, "sz_applied"), 0);
}

TEST_HARNESS_MAIN
