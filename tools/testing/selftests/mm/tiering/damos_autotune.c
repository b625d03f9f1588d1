// SPDX-License-Identifier: GPL-2.0
/*
 * DAMON tiering that tunes itself: allow filters, monitoring intervals
 * auto-tuning, node-memory and node_eligible_mem_bp quota goals and the fail
 * charge ratio, with mainline's sysfs files.  A node_eligible_mem_bp goal
 * measures where the scheme-eligible memory lies and fits paddr contexts
 * only; a fail charge ratio lets a scheme whose action fails try more than
 * its quota.
 *
 * Every new file exists under its mainline name, bad input is rejected with
 * EINVAL and changes nothing, migrate_hot with an allow-young filter moves
 * only the pages that were accessed, a node_mem_used_bp goal raises the
 * effective quota while node0 is under it and lowers it when above, the
 * temporal goal tuner gives the whole quota while a goal is missed and none
 * once it is met, reading the goals only when a charge window starts, and
 * the tuned intervals stay within their limits and are read back with
 * update_tuned_intervals.  Two threads that commit two kdamonds at once,
 * one whose input is wrong, each get their own kdamond's result.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#define SET_SIZE	(16UL << 20)
#define SET_PAGES	(SET_SIZE / 4096)
#define FAST_NODE	0
#define SLOW_NODE	2
#define KD		DAMON_ADMIN "/kdamonds/0"
#define CTX		KD "/contexts/0"
#define INTERVALS	CTX "/monitoring_attrs/intervals"
#define IGOAL		INTERVALS "/intervals_goal"
#define SCHEME		CTX "/schemes/0"
#define FILTER		SCHEME "/filters/0"
#define QGOAL		SCHEME "/quotas/goals/0"
#define TUNER		SCHEME "/quotas/goal_tuner"

/* what a file reads, without the newline */
static char *read_str(const char *path, char *buf, size_t len)
{
	if (read_file(path, buf, len) < 0)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * node's used memory in bp, from its meminfo, as DAMON computes it: the free
 * pages of the node's per-cpu lists are not in MemFree, and count as used
 */
static long node_used_bp(int nid)
{
	char path[96], line[256];
	long total = -1, free_kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		long kb;

		if (sscanf(line, "Node %*d MemTotal: %ld kB", &kb) == 1)
			total = kb;
		else if (sscanf(line, "Node %*d MemFree: %ld kB", &kb) == 1)
			free_kb = kb;
	}
	fclose(f);
	if (total <= 0 || free_kb < 0)
		return -1;
	return (total - free_kb) * 10000 / total;
}

/*
 * One kdamond, one paddr context on [start, end), one scheme with one
 * filter and one quota goal directory, not started.
 */
static int setup(const char *action, int target_nid, unsigned long start,
		 unsigned long end)
{
	int err;

	err = write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "1");
	err = err ? err : write_file(KD "/contexts/nr_contexts", "1");
	err = err ? err : write_file(CTX "/operations", "paddr");
	err = err ? err : write_file(INTERVALS "/sample_us", "5000");
	err = err ? err : write_file(INTERVALS "/aggr_us", "100000");
	err = err ? err : write_file(INTERVALS "/update_us", "1000000");
	err = err ? err : write_file(CTX "/monitoring_attrs/nr_regions/max", "1000");
	err = err ? err : write_file(CTX "/monitoring_attrs/nr_regions/min", "100");
	err = err ? err : write_file(CTX "/targets/nr_targets", "1");
	err = err ? err : write_file(CTX "/targets/0/regions/nr_regions", "1");
	err = err ? err : write_file(CTX "/targets/0/regions/0/end", "%lu", end);
	err = err ? err : write_file(CTX "/targets/0/regions/0/start", "%lu", start);
	err = err ? err : write_file(CTX "/schemes/nr_schemes", "1");
	err = err ? err : write_file(SCHEME "/action", "%s", action);
	err = err ? err : write_file(SCHEME "/target_nid", "%d", target_nid);
	err = err ? err : write_file(SCHEME "/access_pattern/sz/max", "%lu", end - start);
	err = err ? err : write_file(SCHEME "/access_pattern/nr_accesses/max", "%u", 4000000000U);
	err = err ? err : write_file(SCHEME "/access_pattern/age/max", "%u", 4000000000U);
	err = err ? err : write_file(SCHEME "/filters/nr_filters", "1");
	err = err ? err : write_file(SCHEME "/quotas/goals/nr_goals", "1");
	return err;
}

static long scheme_esz(void)
{
	if (write_file(KD "/state", "update_schemes_effective_quotas"))
		return -1;
	return read_long(SCHEME "/quotas/effective_bytes");
}

/*
 * The effective quota once it has grown to half the 200 MiB size quota
 * (@up) or fallen under 1 MiB, polled once a second for up to 60 s; the
 * last value read if it never did, -1 on error.
 */
static long esz_settled(bool up)
{
	long esz = -1;

	for (int s = 0; s < 60; s++) {
		esz = scheme_esz();
		if (up ? esz >= (100L << 20) : esz >= 0 && esz < (1L << 20))
			break;
		sleep(1);
	}
	return esz;
}

/* bytes of regions the scheme has tried so far, or -1 */
static long scheme_sz_tried(void)
{
	if (write_file(KD "/state", "update_schemes_stats"))
		return -1;
	return read_long(SCHEME "/stats/sz_tried");
}

FIXTURE(autotune) {
	char *hot, *cold;
	struct toucher t;
	bool touching;
	unsigned long start, end;
};

FIXTURE_SETUP(autotune)
{
	self->hot = NULL;
	self->cold = NULL;
	self->touching = false;
	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	if (access("/sys/devices/system/node/node2", F_OK))
		SKIP(return, "no node2: not the tiered lab");
	if (damon_clear_stopped() == -EBUSY)
		SKIP(return, "a kdamond runs: not this test's to stop");
	ASSERT_EQ(read_long(DAMON_ADMIN "/kdamonds/nr_kdamonds"), 0);
	ASSERT_EQ(node_phys_range(SLOW_NODE, &self->start, &self->end), 0);
	ASSERT_EQ(setup("stat", -1, self->start, self->end), 0);
	if (access(FILTER "/allow", F_OK) || access(QGOAL "/nid", F_OK) ||
	    access(IGOAL, F_OK))
		SKIP(return, "kernel without the DAMON self-tuning patches");
}

FIXTURE_TEARDOWN(autotune)
{
	if (self->touching)
		toucher_stop(&self->t);
	damon_stop();
	if (self->hot)
		munmap(self->hot, SET_SIZE);
	if (self->cold)
		munmap(self->cold, SET_SIZE);
}

TEST_F(autotune, files_have_mainline_names)
{
	static const char * const files[] = {
		IGOAL "/access_bp", IGOAL "/aggrs", IGOAL "/min_sample_us",
		IGOAL "/max_sample_us", FILTER "/allow", QGOAL "/nid",
		QGOAL "/target_metric", QGOAL "/target_value",
		QGOAL "/current_value", TUNER,
		SCHEME "/quotas/fail_charge_num",
		SCHEME "/quotas/fail_charge_denom",
	};
	static const char * const metrics[] = {
		"user_input", "some_mem_psi_us", "node_mem_used_bp",
		"node_mem_free_bp", "node_eligible_mem_bp",
	};
	char buf[64];

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		EXPECT_EQ(access(files[i], R_OK | W_OK), 0) {
			TH_LOG("%s: %s", files[i], strerror(errno));
		}
	}
	/* defaults: tuning off, a filter rejects, node 0 */
	EXPECT_EQ(read_long(IGOAL "/aggrs"), 0);
	EXPECT_STREQ(read_str(FILTER "/allow", buf, sizeof(buf)), "N");
	EXPECT_EQ(read_long(QGOAL "/nid"), 0);
	EXPECT_STREQ(read_str(TUNER, buf, sizeof(buf)), "consist");
	EXPECT_EQ(read_long(SCHEME "/quotas/fail_charge_num"), 0);
	EXPECT_EQ(read_long(SCHEME "/quotas/fail_charge_denom"), 0);
	EXPECT_EQ(write_file(SCHEME "/quotas/fail_charge_num", "1"), 0);
	EXPECT_EQ(write_file(SCHEME "/quotas/fail_charge_denom", "1024"), 0);
	EXPECT_EQ(read_long(SCHEME "/quotas/fail_charge_num"), 1);
	EXPECT_EQ(read_long(SCHEME "/quotas/fail_charge_denom"), 1024);
	EXPECT_EQ(write_file(TUNER, "temporal"), 0);
	EXPECT_STREQ(read_str(TUNER, buf, sizeof(buf)), "temporal");
	EXPECT_EQ(write_file(TUNER, "consist\n"), 0);
	EXPECT_STREQ(read_str(TUNER, buf, sizeof(buf)), "consist");
	for (size_t i = 0; i < ARRAY_SIZE(metrics); i++) {
		EXPECT_EQ(write_file(QGOAL "/target_metric", "%s", metrics[i]), 0);
		EXPECT_STREQ(read_str(QGOAL "/target_metric", buf, sizeof(buf)),
			     metrics[i]);
	}
	EXPECT_EQ(write_file(FILTER "/allow", "Y"), 0);
	EXPECT_STREQ(read_str(FILTER "/allow", buf, sizeof(buf)), "Y");
	EXPECT_EQ(write_file(QGOAL "/nid", "%d", SLOW_NODE), 0);
	EXPECT_EQ(read_long(QGOAL "/nid"), SLOW_NODE);
}

/* every bad write fails with EINVAL and leaves @path reading @keep */
static void expect_rejected(struct __test_metadata *_metadata,
			    const char *path, const char * const *bad,
			    size_t nr_bad, const char *keep)
{
	char buf[64];

	for (size_t i = 0; i < nr_bad; i++) {
		EXPECT_EQ(write_file(path, "%s", bad[i]), -EINVAL) {
			TH_LOG("%s: '%s' not rejected with EINVAL", path, bad[i]);
		}
		EXPECT_STREQ(read_str(path, buf, sizeof(buf)), keep) {
			TH_LOG("%s: '%s' changed the value", path, bad[i]);
		}
	}
}

TEST_F(autotune, bad_input_rejected)
{
	static const char * const bad_nid[] = {
		"-1", "-2", "abc", "\n", "1 2", "2abc", "99999999999999999999",
		"2147483648", "1024",
		"",	/* replaced by the first node id that is not possible */
	};
	static const char * const bad_bool[] = {"maybe", "2", "\n", "-1"};
	static const char * const bad_ul[] = {"abc", "-1", "1.5", "\n", "1 2"};
	static const char * const bad_metric[] = {"node_mem_bogus", "\n", "bp"};
	static const char * const bad_tuner[] = {
		"Temporal", "temporal2", " consist", "\n", "0", "1", "by_score",
	};
	static const char * const goal_files[] = {
		IGOAL "/access_bp", IGOAL "/aggrs", IGOAL "/min_sample_us",
		IGOAL "/max_sample_us", SCHEME "/quotas/fail_charge_num",
		SCHEME "/quotas/fail_charge_denom",
	};
	char possible[64], beyond[16];
	bool nodes[MAX_NODES];
	const char *nids[ARRAY_SIZE(bad_nid)];
	long pid;

	ASSERT_GT(read_file("/sys/devices/system/node/possible", possible,
			    sizeof(possible)), 0);
	snprintf(beyond, sizeof(beyond), "%d",
		 parse_nodelist(possible, nodes, MAX_NODES));
	for (size_t i = 0; i < ARRAY_SIZE(bad_nid); i++)
		nids[i] = bad_nid[i][0] ? bad_nid[i] : beyond;

	ASSERT_EQ(write_file(QGOAL "/nid", "1"), 0);
	expect_rejected(_metadata, QGOAL "/nid", nids, ARRAY_SIZE(nids), "1");
	ASSERT_EQ(write_file(FILTER "/allow", "Y"), 0);
	expect_rejected(_metadata, FILTER "/allow", bad_bool,
			ARRAY_SIZE(bad_bool), "Y");
	ASSERT_EQ(write_file(QGOAL "/target_metric", "node_mem_free_bp"), 0);
	expect_rejected(_metadata, QGOAL "/target_metric", bad_metric,
			ARRAY_SIZE(bad_metric), "node_mem_free_bp");
	ASSERT_EQ(write_file(TUNER, "temporal"), 0);
	expect_rejected(_metadata, TUNER, bad_tuner, ARRAY_SIZE(bad_tuner),
			"temporal");
	for (size_t i = 0; i < ARRAY_SIZE(goal_files); i++) {
		ASSERT_EQ(write_file(goal_files[i], "7"), 0);
		expect_rejected(_metadata, goal_files[i], bad_ul,
				ARRAY_SIZE(bad_ul), "7");
	}

	/* a goal whose sampling interval range is empty cannot start */
	ASSERT_EQ(write_file(IGOAL "/access_bp", "400"), 0);
	ASSERT_EQ(write_file(IGOAL "/aggrs", "3"), 0);
	ASSERT_EQ(write_file(IGOAL "/min_sample_us", "10000"), 0);
	ASSERT_EQ(write_file(IGOAL "/max_sample_us", "9000"), 0);
	EXPECT_EQ(write_file(KD "/state", "on"), -EINVAL);
	/* nor one that the sampling interval is outside of */
	ASSERT_EQ(write_file(IGOAL "/max_sample_us", "20000"), 0);
	EXPECT_EQ(write_file(KD "/state", "on"), -EINVAL);
	EXPECT_EQ(read_long(KD "/pid"), -1);

	/* a running kdamond rejects the same at commit, and keeps running */
	ASSERT_EQ(write_file(IGOAL "/min_sample_us", "5000"), 0);
	ASSERT_EQ(write_file(QGOAL "/target_metric", "node_mem_used_bp"), 0);
	ASSERT_EQ(write_file(QGOAL "/target_value", "9970"), 0);
	ASSERT_EQ(write_file(QGOAL "/nid", "%d", FAST_NODE), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	pid = read_long(KD "/pid");
	ASSERT_GT(pid, 0);
	ASSERT_EQ(write_file(IGOAL "/max_sample_us", "4000"), 0);
	EXPECT_EQ(write_file(KD "/state", "commit"), -EINVAL);
	EXPECT_EQ(read_long(KD "/pid"), pid);
	ASSERT_EQ(write_file(IGOAL "/max_sample_us", "10000000"), 0);
	EXPECT_EQ(write_file(KD "/state", "commit"), 0);
	EXPECT_EQ(read_long(KD "/pid"), pid);
}

/*
 * Two sets on node2: one a thread keeps writing, one nobody touches.
 * migrate_hot to node0 on every region (no access threshold), with only an
 * allow-young filter to tell them apart.
 */
TEST_F_TIMEOUT(autotune, migrate_hot_allow_young_moves_only_accessed, 300)
{
	long counts[MAX_NODES], hot_fast, cold_fast, tried;
	char buf[16];

	self->hot = alloc_on_node(SET_SIZE, SLOW_NODE);
	self->cold = alloc_on_node(SET_SIZE, SLOW_NODE);
	ASSERT_NE(self->hot, NULL);
	ASSERT_NE(self->cold, NULL);
	fill_pattern(self->cold, SET_SIZE, 3);

	ASSERT_EQ(write_file(SCHEME "/action", "migrate_hot"), 0);
	ASSERT_EQ(write_file(FILTER "/type", "young"), 0);
	ASSERT_EQ(write_file(FILTER "/matching", "Y"), 0);
	ASSERT_EQ(write_file(FILTER "/allow", "Y"), 0);
	ASSERT_EQ(write_file(SCHEME "/quotas/goals/nr_goals", "0"), 0);
	/*
	 * A page is young until DAMON has checked it once.  First aim the
	 * scheme at node2 itself: the filter checks (and ages) every page,
	 * and nothing moves.
	 */
	ASSERT_EQ(write_file(SCHEME "/target_nid", "%d", SLOW_NODE), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	for (int s = 0; s < 60; s++) {
		tried = damon_scheme_stat(0, "sz_tried");
		if (tried >= 2 * (long)(self->end - self->start))
			break;
		sleep(1);
	}
	ASSERT_GE(tried, 2 * (long)(self->end - self->start));
	count_pages_per_node(self->cold, SET_SIZE, counts);
	ASSERT_EQ(counts[SLOW_NODE], SET_PAGES);

	ASSERT_EQ(toucher_start(&self->t, self->hot, SET_SIZE), 0);
	self->touching = true;
	ASSERT_EQ(write_file(SCHEME "/target_nid", "%d", FAST_NODE), 0);
	ASSERT_EQ(write_file(KD "/state", "commit"), 0);
	ASSERT_STREQ(read_str(KD "/state", buf, sizeof(buf)), "on");

	hot_fast = wait_for_pages_on_node(self->hot, SET_SIZE, FAST_NODE,
					  SET_PAGES * 95 / 100, 180, counts);
	/* the cold set had as long to move as the hot one needed */
	count_pages_per_node(self->cold, SET_SIZE, counts);
	cold_fast = counts[FAST_NODE];
	TH_LOG("hot set on node0: %ld of %lu pages, cold set: %ld",
	       hot_fast, SET_PAGES, cold_fast);
	EXPECT_GE(hot_fast, SET_PAGES * 95 / 100);
	/* a few cold pages may share a huge folio or be read by reclaim */
	EXPECT_LE(cold_fast, SET_PAGES / 100);
	EXPECT_TRUE(check_pattern(self->cold, SET_SIZE, 3));
}

/*
 * A node_mem_used_bp goal on node0 for a stat scheme (which moves nothing):
 * with the goal above node0's use the effective quota grows to the size
 * quota, with it far below it falls to the minimum.  A node_mem_free_bp goal
 * twice node0's free share raises it again, one at half that share lowers
 * it: DAMON measures the free share between the two.  The kernel does not
 * write what it measured to current_value, which keeps what was written.
 *
 * "Far below" is a quarter of a ballast this test faults on node0, a tenth
 * of the node, so that node0's use is at least four times the goal whatever
 * else node0 holds, and the tuner, which drops the quota to its minimum for
 * a score of twice the goal or more, does so in the first charge window.
 */
TEST_F_TIMEOUT(autotune, node_mem_goals_tune_quota, 240)
{
	long used, ballast_bp, free_bp, up, down, cur, counts[MAX_NODES];
	long total_kb = node_mem_total_kb(FAST_NODE);
	size_t ballast_len;
	char *ballast;

	ASSERT_GT(total_kb, 0);
	ballast_len = (total_kb / 10 / 4) * 4 * 1024;
	ballast = alloc_on_node(ballast_len, FAST_NODE);
	ASSERT_NE(ballast, NULL);
	ASSERT_EQ(count_pages_per_node(ballast, ballast_len, counts), 0);
	ballast_bp = counts[FAST_NODE] * 4 * 10000 / total_kb;
	ASSERT_GE(ballast_bp, 900);
	used = node_used_bp(FAST_NODE);
	ASSERT_GE(used, ballast_bp);
	ASSERT_EQ(write_file(SCHEME "/quotas/bytes", "%lu", 200UL << 20), 0);
	ASSERT_EQ(write_file(SCHEME "/quotas/reset_interval_ms", "100"), 0);
	ASSERT_EQ(write_file(SCHEME "/apply_interval_us", "100000"), 0);
	ASSERT_EQ(write_file(QGOAL "/target_metric", "node_mem_used_bp"), 0);
	ASSERT_EQ(write_file(QGOAL "/nid", "%d", FAST_NODE), 0);
	/* under the goal: node0 is never 100% used */
	ASSERT_EQ(write_file(QGOAL "/target_value", "10000"), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	up = esz_settled(true);
	cur = read_long(QGOAL "/current_value");
	TH_LOG("under the goal: effective_bytes %ld, current_value %ld, node0 used %ld bp",
	       up, cur, node_used_bp(FAST_NODE));
	EXPECT_GE(up, 100L << 20);
	EXPECT_LE(up, 200L << 20);
	/* as written: the measured use is not written back */
	EXPECT_EQ(cur, 0);

	/* far above the goal: down to the minimum */
	ASSERT_EQ(write_file(QGOAL "/target_value", "%ld", ballast_bp / 4), 0);
	ASSERT_EQ(write_file(KD "/state", "commit_schemes_quota_goals"), 0);
	down = esz_settled(false);
	TH_LOG("%ld bp goal, %ld bp ballast, node0 used %ld bp: effective_bytes %ld",
	       ballast_bp / 4, ballast_bp, node_used_bp(FAST_NODE), down);
	EXPECT_GE(down, 0);
	EXPECT_LT(down, 1L << 20);

	/* the free metric: under a goal of twice the free share, up again */
	free_bp = 10000 - node_used_bp(FAST_NODE);
	ASSERT_GT(free_bp, 100);
	ASSERT_EQ(write_file(QGOAL "/target_metric", "node_mem_free_bp"), 0);
	ASSERT_EQ(write_file(QGOAL "/target_value", "%ld", 2 * free_bp), 0);
	ASSERT_EQ(write_file(KD "/state", "commit_schemes_quota_goals"), 0);
	up = esz_settled(true);
	/* and over a goal of half of it, down again */
	ASSERT_EQ(write_file(QGOAL "/target_value", "%ld", free_bp / 2), 0);
	ASSERT_EQ(write_file(KD "/state", "commit_schemes_quota_goals"), 0);
	down = esz_settled(false);
	TH_LOG("node0 free %ld bp: effective_bytes %ld under a %ld bp goal, %ld over %ld bp",
	       free_bp, up, 2 * free_bp, down, free_bp / 2);
	EXPECT_GE(up, 100L << 20);
	EXPECT_GE(down, 0);
	EXPECT_LT(down, 1L << 20);
	EXPECT_EQ(read_long(QGOAL "/current_value"), 0);
	munmap(ballast, ballast_len);
}

/*
 * A 200 MiB quota per RESET_MS charge window, applied every 100 ms, tuned by
 * the temporal tuner toward a node_mem_used_bp goal on node0 (its target
 * left to the caller).
 */
static int temporal_used_goal(unsigned long reset_ms)
{
	int err;

	err = write_file(SCHEME "/quotas/bytes", "%lu", 200UL << 20);
	err = err ? err : write_file(SCHEME "/quotas/reset_interval_ms", "%lu", reset_ms);
	err = err ? err : write_file(SCHEME "/apply_interval_us", "100000");
	err = err ? err : write_file(TUNER, "temporal");
	err = err ? err : write_file(QGOAL "/target_metric", "node_mem_used_bp");
	return err ? err : write_file(QGOAL "/nid", "%d", FAST_NODE);
}

/*
 * The temporal tuner on a node_mem_used_bp goal of node0: a goal node0 does
 * not meet gives the scheme its whole size quota from the first charge
 * window on, and a goal it meets gives it none: the scheme tries nothing.
 */
TEST_F_TIMEOUT(autotune, temporal_tuner_all_or_nothing, 120)
{
	long esz = -1, used, tried;

	used = node_used_bp(FAST_NODE);
	ASSERT_GT(used, 0);
	ASSERT_EQ(temporal_used_goal(100), 0);
	ASSERT_EQ(write_file(QGOAL "/target_value", "10000"), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	for (int s = 0; s < 20 && esz <= 0; s++) {
		sleep(1);
		esz = scheme_esz();
	}
	TH_LOG("missed: effective_bytes %ld", esz);
	EXPECT_EQ(esz, 200L << 20);

	ASSERT_EQ(write_file(QGOAL "/target_value", "%ld", used / 4 + 1), 0);
	ASSERT_EQ(write_file(KD "/state", "commit_schemes_quota_goals"), 0);
	for (int s = 0; s < 20 && esz != 0; s++) {
		sleep(1);
		esz = scheme_esz();
	}
	TH_LOG("met: effective_bytes %ld", esz);
	EXPECT_EQ(esz, 0);
	/* the goal is re-checked every 100 ms: a second of no quota tries nothing */
	tried = scheme_sz_tried();
	sleep(2);
	EXPECT_EQ(scheme_sz_tried(), tried);

	/* missed again: the scheme tries regions again */
	ASSERT_EQ(write_file(QGOAL "/target_value", "10000"), 0);
	ASSERT_EQ(write_file(KD "/state", "commit_schemes_quota_goals"), 0);
	sleep(2);
	EXPECT_EQ(scheme_esz(), 200L << 20);
	EXPECT_GT(scheme_sz_tried(), tried);
}

/*
 * A stat scheme on node2 with a node_eligible_mem_bp goal, tuned by the
 * temporal tuner: every page the context monitors is on node2, so node2's
 * share of the scheme-eligible memory is all of it and node0's none.  A goal
 * of all of it on node2 is met (no quota), one of any of it on node0 is not
 * (the whole quota).  A vaddr context cannot measure the metric: it does not
 * start, and a running paddr one keeps running when such a commit fails.
 */
TEST_F_TIMEOUT(autotune, node_eligible_goal_measures_node_share, 180)
{
	long counts[MAX_NODES], esz, pid;

	/* eligible memory needs folios: node2 may hold no other */
	self->cold = alloc_on_node(SET_SIZE, SLOW_NODE);
	ASSERT_NE(self->cold, NULL);
	fill_pattern(self->cold, SET_SIZE, 7);
	ASSERT_EQ(count_pages_per_node(self->cold, SET_SIZE, counts), 0);
	ASSERT_EQ(counts[SLOW_NODE], (long)SET_PAGES);

	ASSERT_EQ(temporal_used_goal(100), 0);
	ASSERT_EQ(write_file(SCHEME "/filters/nr_filters", "0"), 0);
	ASSERT_EQ(write_file(QGOAL "/nid", "%d", SLOW_NODE), 0);
	ASSERT_EQ(write_file(QGOAL "/target_value", "10000"), 0);
	/* a vaddr context of this process starts with another node goal... */
	ASSERT_EQ(write_file(CTX "/operations", "vaddr"), 0);
	ASSERT_EQ(write_file(CTX "/targets/0/pid_target", "%d", getpid()), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	ASSERT_EQ(write_file(KD "/state", "off"), 0);
	ASSERT_EQ(read_long(KD "/pid"), -1);
	/* ...and not with this one */
	ASSERT_EQ(write_file(QGOAL "/target_metric", "node_eligible_mem_bp"), 0);
	EXPECT_EQ(write_file(KD "/state", "on"), -EINVAL);
	EXPECT_EQ(read_long(KD "/pid"), -1);
	ASSERT_EQ(write_file(CTX "/operations", "paddr"), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	pid = read_long(KD "/pid");
	ASSERT_GT(pid, 0);
	esz = esz_settled(false);
	TH_LOG("all of it on node2: effective_bytes %ld", esz);
	EXPECT_EQ(esz, 0);

	ASSERT_EQ(write_file(QGOAL "/nid", "%d", FAST_NODE), 0);
	ASSERT_EQ(write_file(QGOAL "/target_value", "1"), 0);
	ASSERT_EQ(write_file(KD "/state", "commit_schemes_quota_goals"), 0);
	esz = esz_settled(true);
	TH_LOG("any of it on node0: effective_bytes %ld", esz);
	EXPECT_EQ(esz, 200L << 20);

	ASSERT_EQ(write_file(CTX "/operations", "vaddr"), 0);
	EXPECT_EQ(write_file(KD "/state", "commit"), -EINVAL);
	EXPECT_EQ(read_long(KD "/pid"), pid);
}

/*
 * migrate_hot from node2 to node2 fails for every page (a folio already on
 * the target node is not migrated), within a 4 MiB quota per second.  By
 * default each region is charged whole: the scheme tries at most 4 MiB per
 * charge window.  With a fail charge ratio of 1/1024, a failed 3 GiB pass
 * over node2 is charged 3 MiB: the scheme tries more than its quota.
 */
TEST_F_TIMEOUT(autotune, fail_charge_ratio_charges_failures_less, 180)
{
	const long quota = 4L << 20;
	struct timespec t0, t1;
	long tried0, tried1, bound;

	ASSERT_EQ(write_file(SCHEME "/action", "migrate_hot"), 0);
	ASSERT_EQ(write_file(SCHEME "/target_nid", "%d", SLOW_NODE), 0);
	ASSERT_EQ(write_file(SCHEME "/filters/nr_filters", "0"), 0);
	ASSERT_EQ(write_file(SCHEME "/quotas/goals/nr_goals", "0"), 0);
	ASSERT_EQ(write_file(SCHEME "/quotas/bytes", "%ld", quota), 0);
	ASSERT_EQ(write_file(SCHEME "/quotas/reset_interval_ms", "1000"), 0);
	ASSERT_EQ(write_file(SCHEME "/apply_interval_us", "100000"), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);

	/* whole regions charged: at most a quota per charge window begun */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tried0 = scheme_sz_tried();
	sleep(3);
	tried1 = scheme_sz_tried();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	bound = quota * (t1.tv_sec - t0.tv_sec + 2);
	TH_LOG("charged whole: %ld bytes tried, at most %ld", tried1 - tried0,
	       bound);
	ASSERT_GE(tried0, 0);
	EXPECT_LE(tried1 - tried0, bound);

	ASSERT_EQ(write_file(SCHEME "/quotas/fail_charge_num", "1"), 0);
	ASSERT_EQ(write_file(SCHEME "/quotas/fail_charge_denom", "1024"), 0);
	ASSERT_EQ(write_file(KD "/state", "commit"), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tried0 = scheme_sz_tried();
	for (int s = 0; s < 60; s++) {
		sleep(1);
		tried1 = scheme_sz_tried();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		bound = quota * (t1.tv_sec - t0.tv_sec + 2);
		if (tried1 - tried0 > bound)
			break;
	}
	TH_LOG("failures charged 1/1024: %ld bytes tried, quota windows' %ld",
	       tried1 - tried0, bound);
	EXPECT_GT(tried1 - tried0, bound);
}

/*
 * A migrate_hot scheme on the regions of node2 with accesses, with a 200 MiB
 * quota per @reset_ms charge window, tuned by @tuner toward a
 * node_mem_used_bp goal on node0, and a 64 MiB set a thread keeps writing
 * (the only memory of node2 with accesses).  The goal is raised @steps times, each time by @room
 * bytes, the first time from node0's use as MemFree shows it.  Each step
 * waits for the scheme to promote and then to have no quota left, which the
 * tuner gives when it reads the goal met, for up to STEP_WAIT_S seconds, and
 * 3 s more: what a step promotes depends on when the tuner reads the goals,
 * not on how fast the machine migrates.  Return: the pages promoted in all
 * steps, or -1 on error.
 */
#define STEP_WAIT_S	90
static long promote_to_used_goal(struct __test_metadata *_metadata,
				 struct toucher *t, bool *touching,
				 const char *tuner, unsigned long reset_ms,
				 unsigned long room, int steps)
{
	const unsigned long set = 64UL << 20;
	long counts[MAX_NODES], before, moved, total = 0, cur, total_kb, room_bp;
	char *buf;

	buf = alloc_on_node(set, SLOW_NODE);
	if (!buf)
		return -1;	/* the test runs in a child: exit unmaps buf */
	fill_pattern(buf, set, 5);
	count_pages_per_node(buf, set, counts);
	EXPECT_EQ(counts[SLOW_NODE], (long)(set / 4096));
	if (toucher_start(t, buf, set))
		return -1;
	*touching = true;

	total_kb = node_mem_total_kb(FAST_NODE);
	if (total_kb <= 0)
		return -1;
	room_bp = room / 1024 * 10000 / total_kb;
	/*
	 * Regions with accesses only: the quota goes to the set, not to the
	 * idle regions before it in the address order DAMOS walks node2 in.
	 */
	if (write_file(SCHEME "/action", "migrate_hot") ||
	    write_file(SCHEME "/target_nid", "%d", FAST_NODE) ||
	    write_file(SCHEME "/access_pattern/nr_accesses/min", "1") ||
	    write_file(SCHEME "/filters/nr_filters", "0") ||
	    temporal_used_goal(reset_ms) || write_file(TUNER, "%s", tuner) ||
	    /* met from the start: DAMON measures node0 and moves nothing */
	    write_file(QGOAL "/target_value", "1") ||
	    write_file(KD "/state", "on"))
		return -1;
	sleep(2);
	EXPECT_EQ(scheme_esz(), 0);
	cur = node_used_bp(FAST_NODE);
	if (cur <= 0 || cur + steps * room_bp >= 10000)
		return -1;

	for (int step = 1; step <= steps; step++) {
		if (vm_stat_refresh())
			return -1;
		before = vmstat("/proc/vmstat", "damon_migrate_hot");
		if (before < 0 ||
		    write_file(QGOAL "/target_value", "%ld", cur + step * room_bp) ||
		    write_file(KD "/state", "commit_schemes_quota_goals"))
			return -1;
		/* missed, the whole quota; met again, none */
		for (int s = 0; s < STEP_WAIT_S; s++) {
			sleep(1);
			if (vm_stat_refresh())
				return -1;
			if (scheme_esz() == 0 &&
			    vmstat("/proc/vmstat", "damon_migrate_hot") > before)
				break;
		}
		sleep(3);
		if (vm_stat_refresh())
			return -1;
		moved = vmstat("/proc/vmstat", "damon_migrate_hot") - before;
		total += moved;
		count_pages_per_node(buf, set, counts);
		TH_LOG("%s step %d: goal %ld bp (node0 %ld bp): %ld promoted, %ld of %lu on node0",
		       tuner, step, cur + step * room_bp, cur, moved,
		       counts[FAST_NODE], set / 4096);
	}
	toucher_stop(t);
	*touching = false;
	munmap(buf, set);
	return total;
}

/*
 * The temporal tuner, as mainline's, reads the goals when a charge window
 * starts only: a 10 s window that starts with the node_mem_used_bp goal
 * 8 MiB away promotes what it finds within its 200 MiB quota until the
 * window ends, more than twice the goal's 8 MiB of the 64 MiB set.  (The
 * window may start up to 10 s after the goal is set: a smaller room could
 * be taken by other allocations on node0 by then.)
 */
TEST_F_TIMEOUT(autotune, temporal_tuner_overshoots_node_goal, 150)
{
	const unsigned long room = 8UL << 20;
	long moved = promote_to_used_goal(_metadata, &self->t, &self->touching,
					  "temporal", 10000, room, 1);

	ASSERT_GE(moved, 0);
	EXPECT_GT(moved, (long)(2 * room / 4096));
}

/*
 * Intervals auto-tuning on node2, whose memory is mostly idle: the tuned
 * intervals grow, up to max_sample_us, and keep 20 samples per aggregation.
 */
TEST_F_TIMEOUT(autotune, tuned_intervals_within_limits, 120)
{
	long sample = -1, aggr = -1;

	ASSERT_EQ(write_file(IGOAL "/access_bp", "400"), 0);
	ASSERT_EQ(write_file(IGOAL "/aggrs", "3"), 0);
	ASSERT_EQ(write_file(IGOAL "/min_sample_us", "5000"), 0);
	ASSERT_EQ(write_file(IGOAL "/max_sample_us", "20000"), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	for (int s = 0; s < 60; s++) {
		sleep(1);
		ASSERT_EQ(write_file(KD "/state", "update_tuned_intervals"), 0);
		sample = read_long(INTERVALS "/sample_us");
		aggr = read_long(INTERVALS "/aggr_us");
		if (sample == 20000)
			break;
	}
	TH_LOG("tuned: sample_us %ld, aggr_us %ld", sample, aggr);
	EXPECT_EQ(sample, 20000);
	EXPECT_EQ(aggr, sample * 20);
	/* and it stays at the limit */
	sleep(3);
	ASSERT_EQ(write_file(KD "/state", "update_tuned_intervals"), 0);
	EXPECT_EQ(read_long(INTERVALS "/sample_us"), 20000);
	EXPECT_EQ(read_long(INTERVALS "/aggr_us"), 400000);
}

/*
 * Concurrent commits.  DAMON's sysfs has one command request slot for all
 * kdamonds: a writer of 'commit' posts its request, drops the lock and
 * sleeps until the kdamond has handled it, then relocks with a trylock.
 * By then another writer may have posted, and had handled, a request of
 * its own: each writer must still get its own request's result.
 */
#define NR_KDAMONDS	2
#define NR_COMMITS	200
/* a write refused busy is retried every millisecond, for up to a minute */
#define BUSY_RETRIES	60000
/* under kdamonds/N/ */
#define KD_ATTRS	"contexts/0/monitoring_attrs"

/* write kdamond @kd's @file (a path under kdamonds/@kd/) */
static __printf(3, 4) int kd_write(int kd, const char *file,
				   const char *fmt, ...)
{
	char path[192], val[64];
	va_list ap;

	snprintf(path, sizeof(path), DAMON_ADMIN "/kdamonds/%d/%s", kd, file);
	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	return write_file(path, "%s", val);
}

/*
 * Read kdamond @kd's @file, without the newline.  state and pid take
 * DAMON's sysfs lock with a trylock and fail with EBUSY while another
 * writer holds it: read again.
 */
static int kd_read(int kd, const char *file, char *buf, size_t len)
{
	char path[192];
	int ret, try = 0;

	snprintf(path, sizeof(path), DAMON_ADMIN "/kdamonds/%d/%s", kd, file);
	while ((ret = read_file(path, buf, len)) == -EBUSY && ++try < BUSY_RETRIES)
		usleep(1000);
	if (ret >= 0)
		buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

static long kd_pid(int kd)
{
	char buf[32];

	if (kd_read(kd, "pid", buf, sizeof(buf)) < 0)
		return -__LONG_MAX__ - 1;
	return strtol(buf, NULL, 0);
}

/*
 * Write @cmd to kdamond @kd's state.  A write that finds DAMON's sysfs lock
 * taken, or the request slot of all kdamonds holding another writer's
 * request, fails with EBUSY without doing anything: write again.
 *
 * Return: the result of the first write not refused busy (-EBUSY if all
 * were, for a minute); @busy, if not NULL, counts the refused ones.
 */
static int kd_state(int kd, const char *cmd, long *busy)
{
	int ret, try = 0;

	while ((ret = kd_write(kd, "state", "%s", cmd)) == -EBUSY &&
	       ++try < BUSY_RETRIES) {
		if (busy)
			(*busy)++;
		usleep(1000);
	}
	return ret;
}

/*
 * Kdamond @kd: one paddr context on [start, end) sampled every 5 ms,
 * aggregated every 100 ms, and one migrate_cold scheme to node0 whose
 * access pattern (sizes 0 to 0, the default) matches no region: nothing
 * moves, and a commit builds and checks the whole input.
 */
static int setup_kdamond(int kd, unsigned long start, unsigned long end)
{
	int err;

	err = kd_write(kd, "contexts/nr_contexts", "1");
	err = err ? err : kd_write(kd, "contexts/0/operations", "paddr");
	err = err ? err : kd_write(kd, KD_ATTRS "/intervals/sample_us", "5000");
	err = err ? err : kd_write(kd, KD_ATTRS "/intervals/aggr_us", "100000");
	err = err ? err : kd_write(kd, KD_ATTRS "/intervals/update_us", "1000000");
	err = err ? err : kd_write(kd, KD_ATTRS "/nr_regions/min", "10");
	err = err ? err : kd_write(kd, KD_ATTRS "/nr_regions/max", "100");
	err = err ? err : kd_write(kd, "contexts/0/targets/nr_targets", "1");
	err = err ? err : kd_write(kd, "contexts/0/targets/0/regions/nr_regions", "1");
	err = err ? err : kd_write(kd, "contexts/0/targets/0/regions/0/end", "%lu", end);
	err = err ? err : kd_write(kd, "contexts/0/targets/0/regions/0/start", "%lu", start);
	err = err ? err : kd_write(kd, "contexts/0/schemes/nr_schemes", "1");
	err = err ? err : kd_write(kd, "contexts/0/schemes/0/action", "migrate_cold");
	return err ? err : kd_write(kd, "contexts/0/schemes/0/target_nid", "%d", FAST_NODE);
}

/**
 * struct committer - a thread that commits one kdamond again and again
 * @kd: the kdamond
 * @start: where the threads wait for each other
 * @ok: commits that succeeded
 * @einval: commits that failed with EINVAL
 * @other: commits that failed otherwise (or stayed busy for a minute)
 * @other_err: the last of those errors
 * @busy: writes refused busy, and retried
 * @secs: how long the thread's commits took
 * @thread: the thread
 */
struct committer {
	int kd;
	pthread_barrier_t *start;
	long ok, einval, other, busy;
	int other_err;
	double secs;
	pthread_t thread;
};

static void *commit_loop(void *arg)
{
	struct committer *c = arg;
	struct timespec t0, t1;

	pthread_barrier_wait(c->start);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < NR_COMMITS; i++) {
		int ret = kd_state(c->kd, "commit", &c->busy);

		if (!ret) {
			c->ok++;
		} else if (ret == -EINVAL) {
			c->einval++;
		} else {
			c->other++;
			c->other_err = ret;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return NULL;
}

FIXTURE(commits) {
	bool kdamonds;
};

FIXTURE_SETUP(commits)
{
	unsigned long start, end;

	self->kdamonds = false;
	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	if (access("/sys/devices/system/node/node2", F_OK))
		SKIP(return, "no node2: not the tiered lab");
	if (damon_clear_stopped() == -EBUSY)
		SKIP(return, "a kdamond runs: not this test's to stop");
	ASSERT_EQ(read_long(DAMON_ADMIN "/kdamonds/nr_kdamonds"), 0);
	ASSERT_EQ(node_phys_range(SLOW_NODE, &start, &end), 0);
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "%d", NR_KDAMONDS), 0);
	self->kdamonds = true;
	for (int kd = 0; kd < NR_KDAMONDS; kd++)
		ASSERT_EQ(setup_kdamond(kd, start, end), 0);
}

FIXTURE_TEARDOWN(commits)
{
	char buf[16];
	int err, try = 0;

	if (!self->kdamonds)
		return;
	for (int kd = 0; kd < NR_KDAMONDS; kd++) {
		if (kd_read(kd, "state", buf, sizeof(buf)) > 0 && !strcmp(buf, "on"))
			EXPECT_EQ(kd_state(kd, "off", NULL), 0);
	}
	while ((err = write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "0")) == -EBUSY &&
	       ++try < BUSY_RETRIES)
		usleep(1000);
	EXPECT_EQ(err, 0);
}

/*
 * Two kdamonds run with valid input; then kdamond 0's target_nid is unset
 * (-1), which a migrate scheme cannot commit with.  Two threads commit,
 * one each kdamond, NR_COMMITS times each, at once: every commit of
 * kdamond 0 fails with EINVAL, every commit of kdamond 1 succeeds, and
 * both kdamonds keep running.
 */
TEST_F_TIMEOUT(commits, concurrent_commits_get_own_errors, 600)
{
	struct committer c[NR_KDAMONDS] = {};
	pthread_barrier_t start;
	long pid[NR_KDAMONDS];
	char buf[16];

	for (int kd = 0; kd < NR_KDAMONDS; kd++) {
		ASSERT_EQ(kd_state(kd, "on", NULL), 0);
		pid[kd] = kd_pid(kd);
		ASSERT_GT(pid[kd], 0);
	}
	for (int kd = 0; kd < NR_KDAMONDS; kd++)
		ASSERT_EQ(kd_state(kd, "commit", NULL), 0);
	ASSERT_EQ(kd_write(0, "contexts/0/schemes/0/target_nid", "-1"), 0);
	ASSERT_EQ(kd_state(0, "commit", NULL), -EINVAL);
	ASSERT_EQ(kd_read(0, "state", buf, sizeof(buf)), 3);
	ASSERT_STREQ(buf, "on");

	ASSERT_EQ(pthread_barrier_init(&start, NULL, NR_KDAMONDS), 0);
	for (int kd = 0; kd < NR_KDAMONDS; kd++) {
		c[kd].kd = kd;
		c[kd].start = &start;
		ASSERT_EQ(pthread_create(&c[kd].thread, NULL, commit_loop, &c[kd]), 0);
	}
	for (int kd = 0; kd < NR_KDAMONDS; kd++)
		ASSERT_EQ(pthread_join(c[kd].thread, NULL), 0);
	pthread_barrier_destroy(&start);

	for (int kd = 0; kd < NR_KDAMONDS; kd++)
		TH_LOG("kdamond %d, %d commits, %.1f s: ok %ld EINVAL %ld other %ld (%d) busy %ld",
		       kd, NR_COMMITS, c[kd].secs, c[kd].ok, c[kd].einval,
		       c[kd].other, c[kd].other_err, c[kd].busy);
	EXPECT_EQ(c[0].einval, NR_COMMITS);
	EXPECT_EQ(c[0].ok, 0);
	EXPECT_EQ(c[0].other, 0);
	EXPECT_EQ(c[1].ok, NR_COMMITS);
	EXPECT_EQ(c[1].einval, 0);
	EXPECT_EQ(c[1].other, 0);
	/* the same kdamonds still run: a rejected commit terminated none */
	for (int kd = 0; kd < NR_KDAMONDS; kd++) {
		EXPECT_EQ(kd_read(kd, "state", buf, sizeof(buf)), 3);
		EXPECT_STREQ(buf, "on");
		EXPECT_EQ(kd_pid(kd), pid[kd]);
	}
	/* and kdamond 0 takes valid input again */
	ASSERT_EQ(kd_write(0, "contexts/0/schemes/0/target_nid", "%d", FAST_NODE), 0);
	EXPECT_EQ(kd_state(0, "commit", NULL), 0);
	EXPECT_EQ(kd_pid(0), pid[0]);
}

TEST_HARNESS_MAIN
