/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One accounting layer for tiering migrations.
 *
 * Every path that moves pages between memory tiers reports each migration
 * batch here, once (enum tiering_reason): the layer charges the per-node
 * vmstat items of the reason (summed in /proc/vmstat) and emits the
 * tiering:tiering_migrate tracepoint.  Reclaim demotion keeps charging its
 * pgdemote_* items itself, which tell kswapd, direct reclaim and khugepaged
 * apart; the layer traces its batches.
 */
#ifndef _LINUX_TIERING_STAT_H
#define _LINUX_TIERING_STAT_H

#include <linux/mmzone.h>
#include <linux/tracepoint-defs.h>
#include <linux/types.h>

struct mem_cgroup;

/**
 * enum tiering_reason - which path made a tiering migration
 * @TIERING_DAMON_HOT: DAMOS migrate_hot
 * @TIERING_DAMON_COLD: DAMOS migrate_cold
 * @TIERING_DEMOTION: reclaim demotion to a lower tier (counted by reclaim
 *	itself in pgdemote_*, traced here)
 * @NR_TIERING_REASONS: number of reasons
 */
enum tiering_reason {
	TIERING_DAMON_HOT,
	TIERING_DAMON_COLD,
	TIERING_DEMOTION,
	NR_TIERING_REASONS
};

#ifdef CONFIG_NUMA
DECLARE_TRACEPOINT(tiering_migrate);

/**
 * tiering_migrate_traced() - is tiering:tiering_migrate enabled?
 *
 * For a path that reports batches only to trace them (reclaim demotion),
 * so that it counts nothing while the event is off.
 *
 * Return: true if the event is enabled.
 */
static inline bool tiering_migrate_traced(void)
{
	return tracepoint_enabled(tiering_migrate);
}

void tiering_account_memcg(struct mem_cgroup *memcg, int src_nid,
			   int dst_nid, unsigned int nr_moved,
			   unsigned int nr_failed, enum tiering_reason reason);
bool tiering_nid_possible(int nid);
bool tiering_target_nid_valid(int nid);
#else
static inline void tiering_account_memcg(struct mem_cgroup *memcg,
					 int src_nid, int dst_nid,
					 unsigned int nr_moved,
					 unsigned int nr_failed,
					 enum tiering_reason reason)
{
}

static inline bool tiering_migrate_traced(void)
{
	return false;
}

static inline bool tiering_nid_possible(int nid)
{
	return nid == 0;
}

static inline bool tiering_target_nid_valid(int nid)
{
	return false;
}
#endif

/**
 * tiering_account() - report one batch of a tiering migration
 * @src_nid: node the pages were on
 * @dst_nid: node they were to move to
 * @nr_moved: base pages that moved
 * @nr_failed: base pages that were tried and stayed on @src_nid
 * @reason: which path migrated them
 *
 * tiering_account_memcg() without a memory cgroup to charge.
 */
static inline void tiering_account(int src_nid, int dst_nid,
				   unsigned int nr_moved,
				   unsigned int nr_failed,
				   enum tiering_reason reason)
{
	tiering_account_memcg(NULL, src_nid, dst_nid, nr_moved, nr_failed,
			      reason);
}

#endif /* _LINUX_TIERING_STAT_H */
