/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault-count NUMA hint latency for memory-tiering promotion.
 *
 * In NUMA-balancing memory-tiering mode a lower-tier folio is promoted when
 * its hint-fault latency, the distance between the scan that made it
 * PROT_NONE and the hint fault that followed, is below a threshold.
 * Time mode measures that distance in milliseconds.  The fault-count mode
 * measures it in hint faults: each lower-tier node has a sequence clock that
 * every hint fault on one of its folios advances, and the scanner stamps a
 * folio with its node's clock.  See kernel/sched/numa_hint_latency.c.
 */
#ifndef _LINUX_NUMA_HINT_LATENCY_H
#define _LINUX_NUMA_HINT_LATENCY_H

#include <linux/compiler.h>
#include <linux/types.h>

struct dentry;
struct folio;
struct pglist_data;

/**
 * enum numa_hint_latency_mode - what the hint-fault latency is counted in
 * @NUMA_HINT_LATENCY_TIME: milliseconds since the scan
 * @NUMA_HINT_LATENCY_FAULTS: hint faults on the folio's node
 */
enum numa_hint_latency_mode {
	NUMA_HINT_LATENCY_TIME,
	NUMA_HINT_LATENCY_FAULTS,
};

/**
 * enum numa_hint_decision - outcome of one promotion candidate
 * @NUMA_HINT_PROMOTE: latency below threshold and within the rate limit
 * @NUMA_HINT_FREE_SPACE: promoted without a latency check, the top-tier
 *	node has plenty of free memory
 * @NUMA_HINT_REJECT_LATENCY: latency at or above the threshold
 * @NUMA_HINT_REJECT_RATELIMIT: hot enough, but over the promotion rate limit
 */
enum numa_hint_decision {
	NUMA_HINT_PROMOTE,
	NUMA_HINT_FREE_SPACE,
	NUMA_HINT_REJECT_LATENCY,
	NUMA_HINT_REJECT_RATELIMIT,
};

/* the fault-count threshold that automatic adjustment starts from */
#define NUMA_HINT_DEFAULT_THRESHOLD_FAULTS	1024

#ifdef CONFIG_NUMA_BALANCING
extern int numa_hint_latency_mode;

/**
 * numa_hint_faults_mode() - is the hint latency counted in faults?
 *
 * Return: true in fault-count mode.
 */
static inline bool numa_hint_faults_mode(void)
{
	return READ_ONCE(numa_hint_latency_mode) == NUMA_HINT_LATENCY_FAULTS;
}

unsigned int numa_hint_latency(unsigned int now, unsigned int last);
unsigned int numa_hint_adjust_threshold(unsigned int th, unsigned int ref_th,
					unsigned long diff_cand,
					unsigned long ref_cand);
void numa_hint_scan_stamp(struct folio *folio);
void numa_hint_scan_skipped(struct folio *folio);
unsigned int numa_hint_fault_count_latency(struct folio *folio, int src_nid);
unsigned int numa_hint_fault_threshold(struct pglist_data *pgdat,
				       unsigned long rate_limit,
				       unsigned int period);
void numa_hint_debugfs_init(struct dentry *dir);
#else /* !CONFIG_NUMA_BALANCING */
/*
 * The scanner hooks in mm/mprotect.c and mm/huge_memory.c are built in
 * every MMU kernel; without NUMA balancing nothing is ever stamped.
 */
static inline bool numa_hint_faults_mode(void)
{
	return false;
}

static inline void numa_hint_scan_stamp(struct folio *folio)
{
}

static inline void numa_hint_scan_skipped(struct folio *folio)
{
}
#endif /* CONFIG_NUMA_BALANCING */

#endif /* _LINUX_NUMA_HINT_LATENCY_H */
