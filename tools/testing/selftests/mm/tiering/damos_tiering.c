// SPDX-License-Identifier: GPL-2.0
/*
 * DAMOS migrate_hot/migrate_cold with the tiering series: target_nid is
 * validated, pages land exactly on target_nid, and every migration is
 * reported through the tiering layer: damon_migrate_{hot,cold,fail} in
 * /proc/vmstat and the nodes' vmstat files, and tiering:tiering_migrate.
 *
 * Placement is read back with move_pages(2) on the test's own pages; vmstat
 * is read after /proc/sys/vm/stat_refresh so that it is exact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#define SET_SIZE	(32UL << 20)
#define SET_PAGES	(SET_SIZE / 4096)
#define WAIT_S		240
#define FAST_NODE	0
#define SLOW_NODE	2
#define SCHEME0		DAMON_ADMIN "/kdamonds/0/contexts/0/schemes/0"
#define TRACE		"/sys/kernel/tracing"

/*
 * Other cold pages on node0 (page cache of the guest's programs) move with
 * the test's mapping: allowed extra pages in a counter delta.
 */
#define OTHER_PAGES	8192
/* pages DAMON may move between reading sz_applied and stopping */
#define LAST_BATCHES	1024

static long node_vmstat(int nid, const char *item)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/vmstat", nid);
	return vmstat(path, item);
}

/* Counters of the tiering layer, global and per node. */
struct snap {
	long hot, cold, fail, node_hot[3], node_cold[3], node_fail[3];
};

static void snap(struct snap *s)
{
	vm_stat_refresh();
	s->hot = vmstat("/proc/vmstat", "damon_migrate_hot");
	s->cold = vmstat("/proc/vmstat", "damon_migrate_cold");
	s->fail = vmstat("/proc/vmstat", "damon_migrate_fail");
	for (int n = 0; n < 3; n++) {
		s->node_hot[n] = node_vmstat(n, "damon_migrate_hot");
		s->node_cold[n] = node_vmstat(n, "damon_migrate_cold");
		s->node_fail[n] = node_vmstat(n, "damon_migrate_fail");
	}
}

FIXTURE(tiering) {
	char *buf;
};

FIXTURE_SETUP(tiering)
{
	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	if (access("/sys/devices/system/node/node2", F_OK))
		SKIP(return, "no node2: not the tiered lab");
	if (vmstat("/proc/vmstat", "damon_migrate_cold") < 0)
		SKIP(return, "kernel without the tiering accounting layer");
	if (damon_clear_stopped() == -EBUSY)
		SKIP(return, "a kdamond runs: not this test's to stop");
	ASSERT_EQ(read_long(DAMON_ADMIN "/kdamonds/nr_kdamonds"), 0);
	self->buf = NULL;
}

FIXTURE_TEARDOWN(tiering)
{
	damon_stop();
	write_file(TRACE "/events/tiering/tiering_migrate/enable", "0");
	if (self->buf)
		munmap(self->buf, SET_SIZE);
}

static void one_scheme(struct __test_metadata *_metadata)
{
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "1"), 0);
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/0/contexts/nr_contexts", "1"), 0);
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/0/contexts/0/schemes/nr_schemes", "1"), 0);
}

TEST_F(tiering, target_nid_bad_input_rejected)
{
	static const char * const bad[] = {
		"abc", "\n", "-2", "-100", "1000000", "0 2", "1,2", "0x40",
		"2147483648", "-2147483649", "99999999999999999999999", "2abc",
		"",	/* replaced by a node id that does not exist */
	};
	char possible[64], beyond[16];
	bool nodes[MAX_NODES];
	int nr_possible;

	ASSERT_GT(read_file("/sys/devices/system/node/possible", possible,
			    sizeof(possible)), 0);
	nr_possible = parse_nodelist(possible, nodes, MAX_NODES);
	/* a node id that does not exist */
	snprintf(beyond, sizeof(beyond), "%d", nr_possible);
	one_scheme(_metadata);

	for (int valid = -1; valid <= SLOW_NODE; valid++) {
		ASSERT_EQ(write_file(SCHEME0 "/target_nid", "%d", valid), 0);
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			const char *in = bad[i][0] ? bad[i] : beyond;

			EXPECT_EQ(write_file(SCHEME0 "/target_nid", "%s", in),
				  -EINVAL) {
				TH_LOG("target_nid '%s' was not rejected", in);
			}
			EXPECT_EQ(read_long(SCHEME0 "/target_nid"), valid) {
				TH_LOG("target_nid '%s' changed the value", in);
			}
		}
	}
}

TEST_F(tiering, target_nid_any_order)
{
	one_scheme(_metadata);
	/* before the action */
	EXPECT_EQ(write_file(SCHEME0 "/target_nid", "2"), 0);
	EXPECT_EQ(write_file(SCHEME0 "/action", "migrate_cold"), 0);
	EXPECT_EQ(read_long(SCHEME0 "/target_nid"), 2);
	/* after it, and with a trailing newline */
	EXPECT_EQ(write_file(SCHEME0 "/target_nid", "1\n"), 0);
	EXPECT_EQ(read_long(SCHEME0 "/target_nid"), 1);
	/* unset, then on a non-migration action */
	EXPECT_EQ(write_file(SCHEME0 "/target_nid", "-1"), 0);
	EXPECT_EQ(write_file(SCHEME0 "/action", "stat"), 0);
	EXPECT_EQ(write_file(SCHEME0 "/target_nid", "0"), 0);
	EXPECT_EQ(read_long(SCHEME0 "/target_nid"), 0);
}

TEST_F(tiering, migrate_without_target_fails_commit)
{
	struct damos_cfg cold = {
		.action = "migrate_cold", .target_nid = -1,
		.max_nr_accesses = 0, .min_age = 10,
	};

	ASSERT_EQ(node_phys_range(FAST_NODE, &cold.start, &cold.end), 0);
	EXPECT_EQ(damon_start(&cold, 1), -EINVAL);
	EXPECT_EQ(read_long(DAMON_ADMIN "/kdamonds/0/pid"), -1);
}

TEST_F_TIMEOUT(tiering, migrate_cold_counted_and_traced, WAIT_S + 60)
{
	struct damos_cfg cold = {
		.action = "migrate_cold", .target_nid = SLOW_NODE,
		.max_nr_accesses = 0, .min_age = 10,
	};
	long counts[MAX_NODES], moved, delta, traced, events, applied;
	struct snap a, b;

	ASSERT_EQ(node_phys_range(FAST_NODE, &cold.start, &cold.end), 0);
	self->buf = alloc_on_node(SET_SIZE, FAST_NODE);
	ASSERT_NE(self->buf, NULL);
	fill_pattern(self->buf, SET_SIZE, 7);
	ASSERT_EQ(trace_clear(), 0);
	ASSERT_EQ(write_file(TRACE "/events/tiering/tiering_migrate/enable", "1"), 0);

	snap(&a);
	ASSERT_EQ(damon_start(&cold, 1), 0);
	/*
	 * DAMON samples one page per region: a few of our pages can share a
	 * region with memory that is really accessed and never look cold.
	 */
	wait_for_pages_on_node(self->buf, SET_SIZE, SLOW_NODE,
			       SET_PAGES * 99 / 100, WAIT_S, counts);
	applied = damon_scheme_stat(0, "sz_applied") / 4096;
	damon_stop();
	snap(&b);
	/* read after the stop: every page counted below has moved */
	count_pages_per_node(self->buf, SET_SIZE, counts);
	moved = counts[SLOW_NODE];
	TH_LOG("placement: node0 %ld node1 %ld node2 %ld pages", counts[0],
	       counts[1], counts[2]);
	write_file(TRACE "/events/tiering/tiering_migrate/enable", "0");
	traced = trace_moved(FAST_NODE, SLOW_NODE, "reason=damon_cold", &events);

	delta = b.cold - a.cold;
	TH_LOG("moved %ld of %lu pages; damon_migrate_cold +%ld (node0 +%ld)",
	       moved, SET_PAGES, delta, b.node_cold[0] - a.node_cold[0]);
	TH_LOG("sz_applied %ld pages, traced %ld in %ld events, fail +%ld",
	       applied, traced, events, b.fail - a.fail);
	EXPECT_GE(moved, SET_PAGES * 99 / 100);
	EXPECT_EQ(counts[1], 0);
	EXPECT_TRUE(check_pattern(self->buf, SET_SIZE, 7));
	/* the counter moved by what moved: ours, plus a few other cold pages */
	EXPECT_GE(delta, moved);
	EXPECT_LE(delta, moved + OTHER_PAGES);
	/* charged to the source node, and it is the node's vmstat too */
	EXPECT_EQ(b.node_cold[FAST_NODE] - a.node_cold[FAST_NODE], delta);
	EXPECT_EQ(b.node_cold[SLOW_NODE] - a.node_cold[SLOW_NODE], 0);
	EXPECT_EQ(b.hot - a.hot, 0);
	/*
	 * The counter and the tracepoint agree exactly; sz_applied was read
	 * just before DAMON stopped, so it may miss the last batches.
	 */
	EXPECT_EQ(traced, delta);
	EXPECT_LE(applied, delta);
	EXPECT_LE(delta - applied, LAST_BATCHES);
	EXPECT_GT(events, 0);
}

TEST_F_TIMEOUT(tiering, migrate_hot_counted, WAIT_S + 60)
{
	struct damos_cfg hot = {
		.action = "migrate_hot", .target_nid = FAST_NODE,
		.min_nr_accesses = 1, .max_nr_accesses = 1000,
	};
	long counts[MAX_NODES], moved, delta, applied;
	struct toucher t;
	struct snap a, b;

	ASSERT_EQ(node_phys_range(SLOW_NODE, &hot.start, &hot.end), 0);
	self->buf = alloc_on_node(SET_SIZE, SLOW_NODE);
	ASSERT_NE(self->buf, NULL);

	snap(&a);
	ASSERT_EQ(toucher_start(&t, self->buf, SET_SIZE), 0);
	ASSERT_EQ(damon_start(&hot, 1), 0);
	wait_for_pages_on_node(self->buf, SET_SIZE, FAST_NODE,
			       SET_PAGES * 99 / 100, WAIT_S, counts);
	applied = damon_scheme_stat(0, "sz_applied") / 4096;
	damon_stop();
	toucher_stop(&t);
	snap(&b);
	count_pages_per_node(self->buf, SET_SIZE, counts);
	moved = counts[FAST_NODE];
	TH_LOG("placement: node0 %ld node1 %ld node2 %ld pages", counts[0],
	       counts[1], counts[2]);

	delta = b.hot - a.hot;
	TH_LOG("moved %ld of %lu pages; damon_migrate_hot +%ld (node0 +%ld)",
	       moved, SET_PAGES, delta, b.node_hot[0] - a.node_hot[0]);
	TH_LOG("sz_applied %ld pages", applied);
	EXPECT_GE(moved, SET_PAGES * 99 / 100);
	EXPECT_EQ(counts[1], 0);
	EXPECT_GE(delta, moved);
	EXPECT_LE(delta, moved + OTHER_PAGES);
	/* charged to the destination node */
	EXPECT_EQ(b.node_hot[FAST_NODE] - a.node_hot[FAST_NODE], delta);
	EXPECT_EQ(b.node_hot[SLOW_NODE] - a.node_hot[SLOW_NODE], 0);
	EXPECT_LE(applied, delta);
	EXPECT_LE(delta - applied, LAST_BATCHES);
}

#define FILL_CHUNK	(16UL << 20)
#define MAX_CHUNKS	256
/*
 * A region is migrated in batches of 512 base pages, and the folio that
 * completes a batch may bring up to a PMD's worth less one page more.
 */
#define BATCH_MAX_PAGES	(512 + 511)

/*
 * Fill a node with this process's memory: fault chunks on node1 and
 * move_pages(2) them over until a chunk no longer fits.  move_pages()
 * allocates with __GFP_THISNODE, which fails instead of invoking the OOM
 * killer, so the node ends up full and nobody is killed.
 */
static int fill_node(int nid, char **chunks)
{
	int n;

	for (n = 0; n < MAX_CHUNKS; n++) {
		chunks[n] = alloc_on_node(FILL_CHUNK, 1);
		if (!chunks[n])
			break;
		fill_pattern(chunks[n], FILL_CHUNK, 100 + n);
		if (move_to_node(chunks[n], FILL_CHUNK, nid)) {
			n++;
			break;
		}
	}
	return n;
}

TEST_F_TIMEOUT(tiering, migrate_cold_target_full, WAIT_S + 120)
{
	struct damos_cfg cold = {
		.action = "migrate_cold", .target_nid = SLOW_NODE,
		.max_nr_accesses = 0, .min_age = 10,
	};
	long counts[MAX_NODES], oom0, delta_fail, largest;
	char *chunks[MAX_CHUNKS];
	struct snap a, b;
	int nr_chunks, intact = 0;

	ASSERT_EQ(node_phys_range(FAST_NODE, &cold.start, &cold.end), 0);
	self->buf = alloc_on_node(SET_SIZE, FAST_NODE);
	ASSERT_NE(self->buf, NULL);
	fill_pattern(self->buf, SET_SIZE, 9);

	oom0 = vmstat("/proc/vmstat", "oom_kill");
	nr_chunks = fill_node(SLOW_NODE, chunks);
	ASSERT_GT(nr_chunks, 1);
	ASSERT_EQ(trace_clear(), 0);
	ASSERT_EQ(write_file(TRACE "/events/tiering/tiering_migrate/enable", "1"), 0);

	snap(&a);
	ASSERT_EQ(damon_start(&cold, 1), 0);
	/* let the scheme try our pages for a while */
	for (int s = 0; s < 60; s++) {
		sleep(1);
		snap(&b);
		if (b.fail - a.fail >= SET_PAGES && s >= 10)
			break;
	}
	damon_stop();
	snap(&b);
	write_file(TRACE "/events/tiering/tiering_migrate/enable", "0");
	largest = trace_largest(FAST_NODE, SLOW_NODE, "reason=damon_cold");
	count_pages_per_node(self->buf, SET_SIZE, counts);
	delta_fail = b.fail - a.fail;
	for (int i = 0; i < nr_chunks; i++)
		intact += check_pattern(chunks[i], FILL_CHUNK, 100 + i);
	TH_LOG("node2 filled with %d MiB; set: node0 %ld node1 %ld node2 %ld",
	       nr_chunks * 16, counts[0], counts[1], counts[2]);
	TH_LOG("damon_migrate_cold +%ld, damon_migrate_fail +%ld (node0 +%ld)",
	       b.cold - a.cold, delta_fail,
	       b.node_fail[FAST_NODE] - a.node_fail[FAST_NODE]);
	TH_LOG("largest migration batch: %ld pages", largest);
	/* failures counted, on the node the pages stayed on */
	EXPECT_GT(delta_fail, 0);
	/* tried in batches, not a region's worth of pages at once */
	EXPECT_GT(largest, 0);
	EXPECT_LE(largest, BATCH_MAX_PAGES);
	EXPECT_EQ(b.node_fail[FAST_NODE] - a.node_fail[FAST_NODE], delta_fail);
	/*
	 * How much of the set stays depends on how fast kswapd frees node2's
	 * page cache meanwhile (5122 of 8192 pages moved once): not checked.
	 * No fallback to node1; whatever moved went to node2 and was counted.
	 */
	EXPECT_EQ(counts[1], 0);
	EXPECT_GE(b.cold - a.cold, counts[SLOW_NODE]);
	/* data intact, nobody OOM-killed */
	EXPECT_TRUE(check_pattern(self->buf, SET_SIZE, 9));
	EXPECT_EQ(intact, nr_chunks);
	EXPECT_EQ(vmstat("/proc/vmstat", "oom_kill"), oom0);
	for (int i = 0; i < nr_chunks; i++)
		munmap(chunks[i], FILL_CHUNK);
}

/*
 * migrate_cold (node0 -> node2) and migrate_hot (node2 -> node0) on one
 * kdamond, for a minute of DAMON cycles, while a thread writes the hot set:
 * every page of both sets keeps its contents, nothing lands on node1, and
 * both directions are counted.
 */
TEST_F_TIMEOUT(tiering, hot_and_cold_together, 200)
{
	struct damos_cfg schemes[2] = {
		{ .action = "migrate_cold", .target_nid = SLOW_NODE,
		  .max_nr_accesses = 0, .min_age = 10 },
		{ .action = "migrate_hot", .target_nid = FAST_NODE,
		  .min_nr_accesses = 1, .max_nr_accesses = 1000 },
	};
	long hot_at[MAX_NODES], cold_at[MAX_NODES];
	int cycles = 0, bad_hot = 0, bad_cold = 0, on_node1 = 0;
	char *hot;
	struct toucher t;
	struct snap a, b;

	ASSERT_EQ(node_phys_range(FAST_NODE, &schemes[0].start, &schemes[0].end), 0);
	ASSERT_EQ(node_phys_range(SLOW_NODE, &schemes[1].start, &schemes[1].end), 0);
	self->buf = alloc_on_node(SET_SIZE, FAST_NODE);
	hot = alloc_on_node(SET_SIZE, SLOW_NODE);
	ASSERT_NE(self->buf, NULL);
	ASSERT_NE(hot, NULL);
	fill_pattern(self->buf, SET_SIZE, 11);
	/* the pattern words are at offset 0 mod 64; the toucher writes byte 8 */
	fill_pattern(hot, SET_SIZE, 12);

	snap(&a);
	ASSERT_EQ(toucher_start(&t, hot, SET_SIZE), 0);
	ASSERT_EQ(damon_start(schemes, 2), 0);
	for (cycles = 0; cycles < 60; cycles++) {
		sleep(1);
		bad_cold += !check_pattern(self->buf, SET_SIZE, 11);
		bad_hot += !check_pattern(hot, SET_SIZE, 12);
		count_pages_per_node(hot, SET_SIZE, hot_at);
		count_pages_per_node(self->buf, SET_SIZE, cold_at);
		on_node1 += hot_at[1] + cold_at[1];
	}
	damon_stop();
	toucher_stop(&t);
	snap(&b);
	TH_LOG("%d s: hot set node0 %ld node2 %ld, cold set node0 %ld node2 %ld",
	       cycles, hot_at[0], hot_at[2], cold_at[0], cold_at[2]);
	TH_LOG("damon_migrate_hot +%ld, cold +%ld, fail +%ld",
	       b.hot - a.hot, b.cold - a.cold, b.fail - a.fail);
	EXPECT_EQ(bad_cold, 0);
	EXPECT_EQ(bad_hot, 0);
	EXPECT_EQ(on_node1, 0);
	EXPECT_GT(b.hot - a.hot, 0);
	EXPECT_GT(b.cold - a.cold, 0);
	munmap(hot, SET_SIZE);
}

TEST_HARNESS_MAIN
