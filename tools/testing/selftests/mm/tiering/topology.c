// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated tiered machine is what the rest of the tiering tests assume:
 * three nodes with memory, node2 without CPUs, node2 in a lower memory tier
 * (from HMAT), and node2 the demotion target of node0 and node1.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#define SLOW_NODE	2
#define MPOL_BIND	2

TEST(three_nodes_node2_cpuless)
{
	bool mem[MAX_NODES], cpu[MAX_NODES];
	char buf[256];

	ASSERT_GT(read_file("/sys/devices/system/node/has_memory", buf, sizeof(buf)), 0);
	parse_nodelist(buf, mem, MAX_NODES);
	ASSERT_GT(read_file("/sys/devices/system/node/has_cpu", buf, sizeof(buf)), 0);
	parse_nodelist(buf, cpu, MAX_NODES);
	if (!mem[2])
		SKIP(return, "no node2 with memory: not the tiered lab");
	EXPECT_TRUE(mem[0] && mem[1] && mem[2]);
	EXPECT_TRUE(cpu[0] && cpu[1]);
	EXPECT_FALSE(cpu[2]);
}

TEST(node2_in_lower_tier)
{
	int t0 = mem_tier_of(0), t1 = mem_tier_of(1), t2 = mem_tier_of(SLOW_NODE);

	if (t2 < 0)
		SKIP(return, "node2 is in no memory tier");
	TH_LOG("memory tiers: node0 %d, node1 %d, node2 %d", t0, t1, t2);
	/* a larger tier id means a larger abstract distance: slower */
	EXPECT_EQ(t0, t1);
	EXPECT_GT(t2, t0);
}

FIXTURE(demotion) {
	char saved[16];
};

FIXTURE_SETUP(demotion)
{
	const char *f = "/sys/kernel/mm/numa/demotion_enabled";

	if (read_file(f, self->saved, sizeof(self->saved)) < 0)
		SKIP(return, "no %s", f);
	ASSERT_EQ(write_file(f, "1"), 0);
}

FIXTURE_TEARDOWN(demotion)
{
	write_file("/sys/kernel/mm/numa/demotion_enabled", "%s", self->saved);
}

/*
 * Bound to node0, allocate more than node0 holds.  There is no swap, so
 * reclaim can only make room by demoting node0's pages, and it must demote
 * them to node2: the pages found outside node0 are on node2, never node1.
 */
TEST_F_TIMEOUT(demotion, node0_and_node1_demote_to_node2, 300)
{
	const char *ev = "/sys/kernel/tracing/events/tiering/tiering_migrate/enable";
	bool traced_ok = access(ev, W_OK) == 0;

	if (traced_ok)
		ASSERT_EQ(write_file(ev, "1"), 0);
	for (int nid = 0; nid <= 1; nid++) {
		long total = node_mem_total_kb(nid) * 1024L, counts[MAX_NODES];
		size_t len = total + (128L << 20);
		unsigned long mask = 1UL << nid;
		long d0, demoted, traced, events, n;
		int quiet_s;
		char *buf;

		ASSERT_GT(total, 0);
		if (traced_ok)
			ASSERT_EQ(trace_clear(), 0);
		ASSERT_EQ(vm_stat_refresh(), 0);
		d0 = pgdemote();
		buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(buf, MAP_FAILED);
		madvise(buf, len, MADV_NOHUGEPAGE);
		ASSERT_EQ(syscall(SYS_mbind, buf, len, MPOL_BIND, &mask,
				  sizeof(mask) * 8, 0), 0);
		fill_pattern(buf, len, nid);
		/* pages still under demotion have no node yet: wait for its end */
		n = count_after_demotion(nid, buf, len, counts, 90, &quiet_s);
		TH_LOG("node%d: demotion over %d s after the fill", nid, quiet_s);
		EXPECT_LT(quiet_s, 90)
			TH_LOG("kswapd%d still demoting after %d s", nid, quiet_s);
		ASSERT_EQ(n, 0);
		ASSERT_EQ(vm_stat_refresh(), 0);
		demoted = pgdemote() - d0;
		/* pgdemote_* are global: count both DRAM nodes' batches */
		traced = trace_moved(0, SLOW_NODE, "reason=demotion", &events);
		traced += trace_moved(1, SLOW_NODE, "reason=demotion", &n);
		events += n;
		TH_LOG("bound to node%d, %zu MiB: node0 %ld node1 %ld node2 %ld pages",
		       nid, len >> 20, counts[0], counts[1], counts[2]);
		TH_LOG("%ld pages demoted, %ld traced in %ld events",
		       demoted, traced, events);
		EXPECT_TRUE(check_pattern(buf, len, nid));
		EXPECT_GT(counts[SLOW_NODE], 0);
		EXPECT_EQ(counts[!nid], 0);
		EXPECT_GE(demoted, counts[SLOW_NODE]);
		/* every demotion batch is a tiering_migrate event */
		if (traced_ok) {
			EXPECT_GT(events, 0);
			EXPECT_EQ(traced, demoted);
		}
		munmap(buf, len);
	}
	if (traced_ok)
		write_file(ev, "0");
}

TEST_HARNESS_MAIN
