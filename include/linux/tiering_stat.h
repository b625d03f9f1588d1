/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One accounting layer for tiering migrations.
 *
 * Every path that moves pages between memory tiers (DAMOS migrate_hot and
 * migrate_cold, NUMA-balancing promotion, reclaim demotion) reports each
 * migration batch here, once: the layer charges the per-node vmstat items
 * (summed in /proc/vmstat) and emits the tiering:tiering_migrate tracepoint.
 * No path keeps counters of its own on the side.
 */
#ifndef _LINUX_TIERING_STAT_H
#define _LINUX_TIERING_STAT_H

#include <linux/mmzone.h>
#include <linux/types.h>

/**
 * enum tiering_reason - which path made a tiering migration
 * @TIERING_DAMON_HOT: DAMOS migrate_hot
 * @TIERING_DAMON_COLD: DAMOS migrate_cold
 * @NR_TIERING_REASONS: number of reasons
 */
enum tiering_reason {
	TIERING_DAMON_HOT,
	TIERING_DAMON_COLD,
	NR_TIERING_REASONS
};

#ifdef CONFIG_NUMA
void tiering_account(int src_nid, int dst_nid, unsigned int nr_moved,
		     unsigned int nr_failed, enum tiering_reason reason);
bool tiering_target_nid_valid(int nid);
#else
static inline void tiering_account(int src_nid, int dst_nid,
				   unsigned int nr_moved,
				   unsigned int nr_failed,
				   enum tiering_reason reason)
{
}

static inline bool tiering_target_nid_valid(int nid)
{
	return false;
}
#endif

#endif /* _LINUX_TIERING_STAT_H */
