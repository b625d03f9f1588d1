/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault-count NUMA hint latency for memory-tiering promotion.
 *
 * In NUMA-balancing memory-tiering mode a lower-tier folio is promoted when
 * its hint-fault latency, the distance between the scan that made it
 * PROT_NONE and the hint fault that followed, is below a threshold.
 * Time mode measures that distance in milliseconds.  The fault-count mode
 * measures it in hint faults: each lower-tier node has a clock that every
 * hint fault on one of its folios advances, and the scanner stamps a folio
 * with its node's clock.  The mode is bit NUMA_BALANCING_TIERING_FAULTS of
 * the numa_balancing sysctl.  See kernel/sched/numa_hint_latency.c.
 */
#ifndef _LINUX_NUMA_HINT_LATENCY_H
#define _LINUX_NUMA_HINT_LATENCY_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/sched/sysctl.h>
#include <linux/types.h>

struct dentry;
struct folio;
struct mm_struct;
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
 * enum numa_hint_clock_scope - whose hint faults the fault-count clock counts
 * @NUMA_HINT_CLOCK_NODE: those on folios of the faulting folio's node (its
 *	NUMA_HINT_FAULTS_TIERING vmstat item); the default
 * @NUMA_HINT_CLOCK_MM: those taken in the faulting folio's address space,
 *	stamped in buckets of 2^NUMA_HINT_MM_BUCKET_SHIFT faults, against a
 *	fixed threshold (NUMA_HINT_MM_THRESHOLD_FAULTS unless one is set)
 */
enum numa_hint_clock_scope {
	NUMA_HINT_CLOCK_NODE,
	NUMA_HINT_CLOCK_MM,
};

/**
 * enum numa_hint_decision - outcome of one promotion candidate
 * @NUMA_HINT_PROMOTE: latency below threshold and within the rate limit
 * @NUMA_HINT_FREE_SPACE: promoted without a latency check, the top-tier
 *	node has plenty of free memory
 * @NUMA_HINT_REJECT_LATENCY: latency at or above the threshold
 * @NUMA_HINT_REJECT_RATELIMIT: hot enough, but over the promotion rate limit
 * @NUMA_HINT_REJECT_FIRST: latency below threshold, but the folio took no
 *	hint fault in the scan pass before (fault-count mode, hot_repeat 1):
 *	one burst of accesses does not make a page hot
 */
enum numa_hint_decision {
	NUMA_HINT_PROMOTE,
	NUMA_HINT_FREE_SPACE,
	NUMA_HINT_REJECT_LATENCY,
	NUMA_HINT_REJECT_RATELIMIT,
	NUMA_HINT_REJECT_FIRST,
};

/*
 * The largest fault-count threshold of the per-node clock, and the one the
 * automatic threshold starts from: no page that faults is too cold until
 * the promotion rate limit says so.
 */
#define NUMA_HINT_MAX_THRESHOLD_FAULTS		((unsigned int)BIT(30))
/* per-mm clock: a folio keeps the count >> 16 */
#define NUMA_HINT_MM_BUCKET_SHIFT		16
/* per-mm clock: the threshold when none is set */
#define NUMA_HINT_MM_THRESHOLD_FAULTS		1000000

#ifdef CONFIG_NUMA_BALANCING
extern int numa_hint_clock_scope;
extern bool numa_hint_refresh;

/*
 * numa_hint_faults_mode() - is the hint latency counted in faults: does
 * the numa_balancing sysctl have NUMA_BALANCING_TIERING_FAULTS?
 */
#define numa_hint_faults_mode()						\
	(!!(READ_ONCE(sysctl_numa_balancing_mode) &			\
	    NUMA_BALANCING_TIERING_FAULTS))

/*
 * numa_hint_scan_refreshes() - does the scanner restamp the folios it finds
 * still PROT_NONE (fault-count mode with hint_refresh 1)?  Tested before
 * the folio lookup, so that the scanner pays nothing otherwise.
 */
#define numa_hint_scan_refreshes()					\
	(numa_hint_faults_mode() && READ_ONCE(numa_hint_refresh))

void __numa_hint_mm_fault(struct mm_struct *mm);

/**
 * numa_hint_mm_fault() - count a NUMA hint fault of @mm
 * @mm: the faulting address space
 *
 * Called for every NUMA hint fault (do_numa_page()).  Advances the
 * per-mm clock only while hint_clock is "mm"; a bare test otherwise.
 */
static inline void numa_hint_mm_fault(struct mm_struct *mm)
{
	if (READ_ONCE(numa_hint_clock_scope) == NUMA_HINT_CLOCK_MM)
		__numa_hint_mm_fault(mm);
}

unsigned int numa_hint_mm_latency(unsigned int now, unsigned int last);
unsigned int numa_hint_unit_shift(unsigned int th);
unsigned int numa_hint_unit_clock(unsigned long raw, unsigned long base);
unsigned long numa_hint_rebase(unsigned long raw, unsigned long base,
			       unsigned int shift);
unsigned int numa_hint_stamp_latency(unsigned int now, unsigned int stamp);
unsigned int numa_hint_adjust_threshold(unsigned int th,
					unsigned long diff_cand,
					unsigned long ref_cand);
void numa_hint_scan_stamp(struct folio *folio);
void numa_hint_scan_skipped(struct folio *folio);
void numa_hint_count_fault(int src_nid);
void numa_hint_reset_threshold(int src_nid);
void numa_hint_mode_change(int old, int new);
enum numa_hint_decision numa_hint_fault_decide(struct folio *folio,
					       struct mm_struct *mm,
					       int src_nid,
					       unsigned long rate_limit,
					       unsigned int period,
					       unsigned int *latency,
					       unsigned int *threshold);
void numa_hint_debugfs_init(struct dentry *dir);

bool numa_hint_stamp_migrates(int src_nid, int dst_nid);
#else /* !CONFIG_NUMA_BALANCING */
/*
 * The scanner hooks in mm/mprotect.c and mm/huge_memory.c are built in
 * every MMU kernel; without NUMA balancing nothing is ever stamped.
 */
static inline bool numa_hint_faults_mode(void)
{
	return false;
}

static inline bool numa_hint_scan_refreshes(void)
{
	return false;
}

static inline void numa_hint_scan_stamp(struct folio *folio)
{
}

static inline void numa_hint_mm_fault(struct mm_struct *mm)
{
}

static inline void numa_hint_scan_skipped(struct folio *folio)
{
}

static inline bool numa_hint_stamp_migrates(int src_nid, int dst_nid)
{
	return true;
}
#endif /* CONFIG_NUMA_BALANCING */

#endif /* _LINUX_NUMA_HINT_LATENCY_H */
