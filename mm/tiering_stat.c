// SPDX-License-Identifier: GPL-2.0
/*
 * One accounting layer for tiering migrations: per-node vmstat items and the
 * tiering:tiering_migrate tracepoint.  See include/linux/tiering_stat.h.
 *
 * Which node a batch is charged to follows the existing promotion and
 * demotion counters: pages moved up a tier (like pgpromote_success) count on
 * the destination node, pages moved down a tier (like pgdemote_*) on the
 * source node, and pages that failed to move on the node they stayed on.
 * Reclaim demotion is traced only: its pages are counted in pgdemote_* by
 * reclaim, per reclaimer.
 */
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/tiering_stat.h>
#include <linux/vmstat.h>

#define CREATE_TRACE_POINTS
#include <trace/events/tiering.h>

/**
 * struct tiering_reason_stat - the vmstat items one reason charges
 * @counted: @moved and @failed are set; a reason without items (or an
 *	entry left empty by the configuration) charges nothing, it is only
 *	traced
 * @moved: item for pages that moved
 * @failed: item for pages that were taken to move and did not move
 * @charge_dst: charge @moved to the destination node, not the source
 * @memcg: @moved is also a memory cgroup statistic (memory.stat)
 */
struct tiering_reason_stat {
	bool counted;
	enum node_stat_item moved;
	enum node_stat_item failed;
	bool charge_dst;
	bool memcg;
};

static const struct tiering_reason_stat tiering_stats[NR_TIERING_REASONS] = {
#ifdef CONFIG_DAMON_PADDR
	[TIERING_DAMON_HOT] = {
		.counted = true,
		.moved = DAMON_MIGRATE_HOT,
		.failed = DAMON_MIGRATE_FAIL,
		.charge_dst = true,
	},
	[TIERING_DAMON_COLD] = {
		.counted = true,
		.moved = DAMON_MIGRATE_COLD,
		.failed = DAMON_MIGRATE_FAIL,
		.charge_dst = false,
	},
#endif
	/* pgdemote_* are charged by reclaim: demote_folio_list() */
	[TIERING_DEMOTION] = {
		.counted = false,
	},
};

/**
 * tiering_charge_nid() - node whose counter a batch's moved pages go to
 * @reason: which path moved them
 * @src_nid: node they came from
 * @dst_nid: node they went to
 *
 * Return: @dst_nid or @src_nid, see the comment at the top of this file.
 */
static int tiering_charge_nid(enum tiering_reason reason, int src_nid,
			      int dst_nid)
{
	return tiering_stats[reason].charge_dst ? dst_nid : src_nid;
}

/**
 * tiering_account_memcg() - report one batch of a tiering migration
 * @memcg: memory cgroup whose statistics the moved pages are charged to as
 *	well, for reasons whose counter is a memcg statistic; may be NULL
 * @src_nid: node the pages were on
 * @dst_nid: node they were to move to; may be a node without memory (or
 *	NUMA_NO_NODE) when the whole batch failed because of it
 * @nr_moved: base pages that moved
 * @nr_failed: base pages that were taken to move and stayed on @src_nid
 * @reason: which path migrated them
 *
 * Charges the per-node vmstat items of @reason, if it has any, and emits
 * tiering:tiering_migrate.  The tracepoint is a static branch: with tracing
 * off this costs two per-cpu counter updates.  Callable from any context
 * that may update node vmstat counters.
 */
void tiering_account_memcg(struct mem_cgroup *memcg, int src_nid,
			   int dst_nid, unsigned int nr_moved,
			   unsigned int nr_failed, enum tiering_reason reason)
{
	const struct tiering_reason_stat *stat;
	struct pglist_data *pgdat;

	if (WARN_ON_ONCE((unsigned int)reason >= NR_TIERING_REASONS))
		return;
	stat = &tiering_stats[reason];
	if (!stat->counted)
		goto trace;
	if (nr_moved) {
		pgdat = NODE_DATA(tiering_charge_nid(reason, src_nid, dst_nid));
		if (memcg && stat->memcg)
			mod_lruvec_state(mem_cgroup_lruvec(memcg, pgdat),
					 stat->moved, nr_moved);
		else
			mod_node_page_state(pgdat, stat->moved, nr_moved);
	}
	if (nr_failed)
		mod_node_page_state(NODE_DATA(src_nid), stat->failed, nr_failed);
trace:
	trace_tiering_migrate(src_nid, dst_nid, nr_moved, nr_failed, reason);
}

/**
 * tiering_nid_possible() - can this node id ever have memory?
 * @nid: node id, as written by a user
 *
 * A node that is possible but has no memory yet (CXL memory not onlined,
 * a dax device not yet given to the kernel) may get some later.
 *
 * Return: true if @nid is a possible node id.
 */
bool tiering_nid_possible(int nid)
{
	return nid >= 0 && nid < nr_node_ids && node_possible(nid);
}

/**
 * tiering_target_nid_valid() - may pages be migrated to this node?
 * @nid: node id, as written by a user
 *
 * Return: true if @nid is a possible node id that has memory now.
 */
bool tiering_target_nid_valid(int nid)
{
	return tiering_nid_possible(nid) && node_state(nid, N_MEMORY);
}

#ifdef CONFIG_TIERING_STAT_KUNIT_TEST
#include "tests/tiering_stat-kunit.h"
#endif
