// SPDX-License-Identifier: GPL-2.0
/*
 * Fault-count NUMA hint latency for memory-tiering promotion
 * (numa_balancing flag NUMA_BALANCING_TIERING_FAULTS, with
 * NUMA_BALANCING_MEMORY_TIERING).
 *
 * A lower-tier folio's hint-fault latency is counted in the hint faults taken
 * on its node, by every process, between the scan that made it PROT_NONE and
 * its fault, instead of in milliseconds.  Each lower-tier node's clock is its
 * NUMA_HINT_FAULTS_TIERING vmstat item; the scanner stamps a folio's
 * _last_cpupid with the clock in units of 2^shift faults, the shift following
 * the node's threshold so that the threshold fits the stamp's bits.  The
 * threshold is per lower-tier node: fixed (hot_threshold_faults), or
 * adjusted once per period towards the promotion rate limit.  It is never
 * below the clock's resolution, numa_hint_clock_slack().
 *
 * The debugfs knobs hint_clock, hint_refresh and hot_repeat select other
 * designs, for comparing them; they are not a tuning interface.
 */
#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/math64.h>
#include <linux/memory-tiers.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/numa_hint_latency.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>

/* the stamp's bit 0: the folio took a hint fault in the previous scan pass */
#define NUMA_HINT_STAMP_FAULTED	1U
/* the unit clock's bits in a stamp, above NUMA_HINT_STAMP_FAULTED */
#define NUMA_HINT_CLOCK_BITS	(LAST_CPUPID_SHIFT - 1)
#define NUMA_HINT_CLOCK_MASK	((1U << NUMA_HINT_CLOCK_BITS) - 1)
/*
 * A folio idle for longer than the stamp's range reads as a latency taken
 * modulo the range, so a share threshold / range of such folios reads as
 * hot.  Thresholds stay below 2^-NUMA_HINT_ALIAS_BITS of the range: 1/256
 * of it from 10 clock bits up (NR_CPUS 8 and more); with fewer, 2 bits of
 * threshold are kept and the share is 1/128 (NR_CPUS 4) or 1/64 (NR_CPUS 2).
 */
#define NUMA_HINT_ALIAS_BITS	(NUMA_HINT_CLOCK_BITS >= 10 ? 8 :	\
				 NUMA_HINT_CLOCK_BITS - 2)
/* thresholds stay below 2^NUMA_HINT_TH_BITS units */
#define NUMA_HINT_TH_BITS	(NUMA_HINT_CLOCK_BITS - NUMA_HINT_ALIAS_BITS)
/* pglist_data::nbp_hint_base: offset << NUMA_HINT_SHIFT_BITS | shift */
#define NUMA_HINT_SHIFT_BITS	6
#define NUMA_HINT_SHIFT_MASK	((1UL << NUMA_HINT_SHIFT_BITS) - 1)
/* the automatic threshold: at most this factor down in one period */
#define NUMA_HINT_MAX_STEP_DOWN	64
/*
 * vmstat folds every CPU's pending counts into the node's total at least
 * once per two stat intervals (vmstat_update(), vmstat_shepherd()); the
 * clock's lag is bounded by the hint faults of this many stat intervals,
 * which leaves two for the worker's own delay.
 */
#define NUMA_HINT_FOLD_INTERVALS	4

static_assert(NUMA_HINT_TH_BITS >= 2);
/* the offset in nbp_hint_base keeps at least the unit clock's bits */
static_assert(BITS_PER_LONG - NUMA_HINT_SHIFT_BITS >= NUMA_HINT_CLOCK_BITS);

int numa_hint_clock_scope __read_mostly = NUMA_HINT_CLOCK_NODE;

/*
 * numa_hint_stamped() - does @last, a folio's _last_cpupid, hold a stamp?
 * A folio never stamped, or whose stamp a migration reset, holds all ones
 * (page_cpupid_reset_last(), folio_migrate_flags()).
 */
static inline bool numa_hint_stamped(unsigned int last)
{
	return last != LAST_CPUPID_MASK;
}

/* hot_repeat: promote only folios that also faulted in the previous pass */
static bool numa_hint_repeat __read_mostly;

/* hint_refresh: with 1, the scanner restamps folios it finds still PROT_NONE */
bool numa_hint_refresh __read_mostly;

/* per-mm clocks (hint_clock "mm"): a slot per hash of the mm */
#define NUMA_HINT_MM_CLOCK_BITS	8

/**
 * struct numa_hint_mm_clock - the hint-fault count of the mms of one slot
 * @count: hint faults taken by those processes
 */
struct numa_hint_mm_clock {
	atomic_t count;
} ____cacheline_aligned_in_smp;

static struct numa_hint_mm_clock numa_hint_mm_clocks[1 << NUMA_HINT_MM_CLOCK_BITS];

/*
 * fixed fault-count threshold; 0: adjusted automatically (per-node clock)
 * or NUMA_HINT_MM_THRESHOLD_FAULTS (per-mm clock)
 */
static unsigned int numa_hint_threshold_faults __read_mostly;

/* serializes the knob writes that check one knob against the other */
static DEFINE_MUTEX(numa_hint_knob_lock);

/* lower-tier nodes whose adjustment period ended, for numa_hint_period_work */
static nodemask_t numa_hint_period_pending;
/* the promotion rate limit (pages/s) and period (ms) when a period ended */
static unsigned long numa_hint_period_rate_limit;
static unsigned int numa_hint_period_ms;

static void numa_hint_period_workfn(struct work_struct *work);
static DECLARE_WORK(numa_hint_period_work, numa_hint_period_workfn);

static const char * const numa_hint_clock_names[] = {
	[NUMA_HINT_CLOCK_NODE] = "node",
	[NUMA_HINT_CLOCK_MM] = "mm",
};

/**
 * numa_hint_unit_shift() - the unit of the per-node clock for a threshold
 * @th: threshold in hint faults
 *
 * Return: the smallest shift that brings @th below 2^NUMA_HINT_TH_BITS.
 */
unsigned int numa_hint_unit_shift(unsigned int th)
{
	unsigned int bits = fls(th);

	return bits > NUMA_HINT_TH_BITS ? bits - NUMA_HINT_TH_BITS : 0;
}

/**
 * numa_hint_unit_clock() - a node's clock in its current unit
 * @raw: the node's hint faults (NUMA_HINT_FAULTS_TIERING)
 * @base: the node's nbp_hint_base: offset and shift
 *
 * Return: (@raw >> shift) + offset; callers use the low bits only.
 */
unsigned int numa_hint_unit_clock(unsigned long raw, unsigned long base)
{
	return (raw >> (base & NUMA_HINT_SHIFT_MASK)) +
		(unsigned int)(base >> NUMA_HINT_SHIFT_BITS);
}

/**
 * numa_hint_rebase() - change the unit of a node's clock
 * @raw: the node's hint faults now
 * @base: its nbp_hint_base
 * @shift: the new unit, 2^@shift faults
 *
 * The unit clock then advances once every 2^@shift faults.  A stamp taken
 * before the change is read in the new unit, so that its span before the
 * change reads 2^(old shift - @shift) times too short or too long.  A
 * coarser unit only overstates latencies.  For a finer one, the clock also
 * jumps ahead by 2^NUMA_HINT_TH_BITS units, more than any threshold in
 * that unit: a folio stamped before the change is never judged hotter than
 * it is, but rejected at its next hint fault, which restamps it.
 *
 * Return: the nbp_hint_base under which the unit clock reads, at @raw, what
 * it read under @base, plus the jump if @shift is smaller than @base's.
 */
unsigned long numa_hint_rebase(unsigned long raw, unsigned long base,
			       unsigned int shift)
{
	unsigned int off = numa_hint_unit_clock(raw, base) -
		(unsigned int)(raw >> shift);

	if (shift < (base & NUMA_HINT_SHIFT_MASK))
		off += 1U << NUMA_HINT_TH_BITS;
	return (unsigned long)off << NUMA_HINT_SHIFT_BITS | shift;
}

/**
 * numa_hint_stamp_latency() - units between a stamp and now
 * @now: the node's unit clock at the fault
 * @stamp: what the folio held (a unit clock << 1, NUMA_HINT_STAMP_FAULTED)
 *
 * Return: (@now - clock of @stamp) modulo 2^NUMA_HINT_CLOCK_BITS, which is
 * right across wrap-around of both the clock and the stored bits.
 */
unsigned int numa_hint_stamp_latency(unsigned int now, unsigned int stamp)
{
	return (now - (stamp >> 1)) & NUMA_HINT_CLOCK_MASK;
}

/**
 * numa_hint_mm_latency_mask() - range of a per-mm clock latency, minus one
 *
 * A folio keeps count >> NUMA_HINT_MM_BUCKET_SHIFT in LAST_CPUPID_SHIFT
 * bits, so latencies are taken modulo 2^(16 + LAST_CPUPID_SHIFT), or
 * modulo 2^32, the clock's own range, if that is smaller.
 *
 * Return: the mask.
 */
static unsigned int numa_hint_mm_latency_mask(void)
{
	u64 range = ((u64)LAST_CPUPID_MASK + 1) << NUMA_HINT_MM_BUCKET_SHIFT;

	return range > U32_MAX ? U32_MAX : (unsigned int)range - 1;
}

/**
 * numa_hint_mm_latency() - per-mm clock latency of a stamp
 * @now: the mm's clock at the fault
 * @last: what the folio held: a clock value >> NUMA_HINT_MM_BUCKET_SHIFT,
 *	in LAST_CPUPID_SHIFT bits
 *
 * Return: @now minus the start of @last's bucket, modulo the stamp's range
 * (numa_hint_mm_latency_mask()): between the true latency and that plus
 * 65535.
 */
unsigned int numa_hint_mm_latency(unsigned int now, unsigned int last)
{
	return (now - (last << NUMA_HINT_MM_BUCKET_SHIFT)) &
		numa_hint_mm_latency_mask();
}

/**
 * numa_hint_threshold_max() - largest fixed threshold for a clock scope
 * @scope: enum numa_hint_clock_scope
 *
 * Return: the largest latency a stamp of @scope can express.
 */
static unsigned int numa_hint_threshold_max(int scope)
{
	return scope == NUMA_HINT_CLOCK_MM ? numa_hint_mm_latency_mask() :
		NUMA_HINT_MAX_THRESHOLD_FAULTS;
}

/**
 * numa_hint_adjust_threshold() - one period's step of the automatic threshold
 * @th: current threshold, in hint faults
 * @diff_cand: the node's promotion candidates in the period that ended
 * @ref_cand: candidates the promotion rate limit allows in one period
 *
 * Candidates are taken as proportional to the threshold: over 110% of
 * @ref_cand scales @th by @ref_cand / @diff_cand, at least halving it and
 * at most dividing it by NUMA_HINT_MAX_STEP_DOWN; under 90% doubles it.
 *
 * Return: the threshold for the next period, in [1,
 * NUMA_HINT_MAX_THRESHOLD_FAULTS].
 */
unsigned int numa_hint_adjust_threshold(unsigned int th,
					unsigned long diff_cand,
					unsigned long ref_cand)
{
	u64 t = th;

	if (diff_cand > ref_cand + ref_cand / 10) {
		t = mul_u64_u64_div_u64(t, ref_cand, diff_cand);
		t = clamp_t(u64, t, th / NUMA_HINT_MAX_STEP_DOWN, th / 2);
	} else if (diff_cand < ref_cand - ref_cand / 10) {
		t = 2 * t;
	}
	return clamp_t(u64, t, 1, NUMA_HINT_MAX_THRESHOLD_FAULTS);
}

/**
 * numa_hint_mm_clock() - is the fault-count clock per process?
 *
 * Return: true if hint_clock is "mm".
 */
static bool numa_hint_mm_clock(void)
{
	return READ_ONCE(numa_hint_clock_scope) == NUMA_HINT_CLOCK_MM;
}

/**
 * numa_hint_mm_clock_of() - the per-mm clock of an address space
 * @mm: the address space
 *
 * Return: the clock of @mm's slot.
 */
static atomic_t *numa_hint_mm_clock_of(struct mm_struct *mm)
{
	return &numa_hint_mm_clocks[hash_ptr(mm, NUMA_HINT_MM_CLOCK_BITS)].count;
}

/**
 * __numa_hint_mm_fault() - advance the per-mm clock
 * @mm: the faulting address space
 */
void __numa_hint_mm_fault(struct mm_struct *mm)
{
	atomic_inc(numa_hint_mm_clock_of(mm));
}

/**
 * numa_hint_node_clock() - a lower-tier node's unit clock now
 * @pgdat: the node
 *
 * Return: the unit clock (numa_hint_unit_clock()).
 */
static unsigned int numa_hint_node_clock(struct pglist_data *pgdat)
{
	return numa_hint_unit_clock(node_page_state(pgdat,
						    NUMA_HINT_FAULTS_TIERING),
				    READ_ONCE(pgdat->nbp_hint_base));
}

/**
 * numa_hint_clock_slack() - how far a node's clock can lag its hint faults
 * @pgdat: the node
 *
 * node_page_state() leaves out what each online CPU has counted but not yet
 * folded into the node's total: less than the node's vmstat stat_threshold
 * (at most 125) per CPU, and no more than the CPU counted since vmstat last
 * folded it.  The first bound is online CPUs times the threshold: 250
 * faults on 2 CPUs, 8,000 on 64 and 32,000 on 256.  The second is the
 * node's hint faults in NUMA_HINT_FOLD_INTERVALS stat intervals at the
 * rate of the last adjustment period, plus the threshold for each CPU that
 * vmstat_shepherd() leaves alone (numa_hint_fold_slack()): 4 s of faults
 * with the default interval, whatever the CPU count.  A latency shorter
 * than the lag cannot be told from zero, so no threshold goes below the
 * smaller bound.  O(1): one per-CPU read and one read of the node.
 *
 * Return: the smaller bound (the first until a period has ended), at
 * least 1.
 */
static unsigned int numa_hint_clock_slack(struct pglist_data *pgdat)
{
	unsigned int t = this_cpu_read(pgdat->per_cpu_nodestats->stat_threshold);
	unsigned int cpus = max(num_online_cpus() * t, 1U);
	unsigned int fold = READ_ONCE(pgdat->nbp_fault_slack);

	return fold ? min(cpus, fold) : cpus;
}

/**
 * numa_hint_fold_slack() - the clock's lag bound from its fault rate
 * @faults: the node's hint faults in the adjustment period that ended
 * @elapsed: its length in ms
 * @fold: the time in ms within which vmstat folds every CPU that it folds
 * @unfolded: the node's vmstat threshold times the online CPUs that
 *	vmstat_shepherd() does not fold (isolated ones)
 *
 * Return: @faults scaled from @elapsed to @fold, rounded up, plus
 * @unfolded, in [1, U32_MAX].
 */
static unsigned int numa_hint_fold_slack(unsigned long faults,
					 unsigned int elapsed, unsigned int fold,
					 unsigned int unfolded)
{
	u64 e = max(elapsed, 1U), q, r, v;

	/* faults = q * e + r: no product exceeds 64 bits */
	q = div64_u64_rem(faults, e, &r);
	if (q > U32_MAX)
		return U32_MAX;
	v = q * fold + div64_u64(r * fold + e - 1, e) + unfolded;
	return clamp_t(u64, v, 1, U32_MAX);
}

/**
 * numa_hint_node_stat_exact() - a node vmstat item with every CPU folded in
 * @pgdat: the node
 * @item: the item
 *
 * O(online CPUs): called once per adjustment period from a work item, and
 * by sysctl writes; never in a fault.
 * A CPU that folds its diff into the total between the two reads is
 * missed: a period's count is then off by less than one CPU's
 * stat_threshold, which the next period's count makes up.
 *
 * Return: the node's total plus what each online CPU holds of it.
 */
static unsigned long numa_hint_node_stat_exact(struct pglist_data *pgdat,
					       enum node_stat_item item)
{
	long x = atomic_long_read(&pgdat->vm_stat[item]);
	int cpu;

	for_each_online_cpu(cpu)
		x += per_cpu_ptr(pgdat->per_cpu_nodestats,
				 cpu)->vm_node_stat_diff[item];
	return x < 0 ? 0 : x;
}

/**
 * numa_hint_unfolded_cpus() - online CPUs that vmstat_shepherd() skips
 *
 * O(online CPUs): called once per adjustment period, from a work item.
 *
 * Return: the number of isolated online CPUs.
 */
static unsigned int numa_hint_unfolded_cpus(void)
{
	unsigned int n = 0;
	int cpu;

	for_each_online_cpu(cpu)
		if (cpu_is_isolated(cpu))
			n++;
	return n;
}

/**
 * numa_hint_stamp_faults() - stamp a folio with its fault-count clock
 * @folio: a lower-tier folio the scanner passes
 * @faulted: keep the folio's NUMA_HINT_STAMP_FAULTED bit; false clears it
 *
 * With the per-mm clock, the count of the scanning task's mm in buckets;
 * otherwise the unit clock of the folio's node.
 */
static void numa_hint_stamp_faults(struct folio *folio, bool faulted)
{
	struct mm_struct *mm = current->mm;
	unsigned int now, last;

	if (numa_hint_mm_clock() && mm) {
		folio_xchg_last_cpupid(folio,
				       (unsigned int)atomic_read(numa_hint_mm_clock_of(mm)) >>
				       NUMA_HINT_MM_BUCKET_SHIFT);
		return;
	}
	now = numa_hint_node_clock(folio_pgdat(folio));
	last = folio_last_cpupid(folio);
	if (!numa_hint_stamped(last))
		faulted = false;
	folio_xchg_last_cpupid(folio, now << 1 |
			       (faulted ? last & NUMA_HINT_STAMP_FAULTED : 0));
}

/**
 * numa_hint_scan_stamp() - stamp a folio the scanner makes PROT_NONE
 * @folio: the folio
 *
 * For a folio whose _last_cpupid holds an access stamp (a lower-tier folio
 * in memory-tiering mode): store the time in ms, or in fault-count mode the
 * clock, keeping the mark of a hint fault since the last scan (the folio
 * was accessible: it faulted, or it is new and has no mark).
 */
void numa_hint_scan_stamp(struct folio *folio)
{
	int now;

	if (!folio_use_access_time(folio))
		return;
	if (numa_hint_faults_mode()) {
		numa_hint_stamp_faults(folio, true);
		return;
	}
	now = jiffies_to_msecs(jiffies);
	folio_xchg_access_time(folio, now);
}

/**
 * numa_hint_scan_skipped() - refresh the stamp of a still-PROT_NONE folio
 * @folio: the folio of a PTE or PMD the scanner found PROT_NONE, or NULL
 *
 * With hint_refresh 1, in fault-count mode, a folio that was not accessed
 * since the previous scan pass gets the current clock value, so that its
 * latency, when it finally faults, counts from the last pass and not from
 * an older one whose distance may exceed the stamp's range, and loses its
 * mark of a fault in the pass before.  With hint_refresh 0 (the default)
 * and in time mode it does nothing: a latency counts from the pass that
 * made the folio PROT_NONE, so a folio idle for several passes reads as
 * idle for all of them.
 */
void numa_hint_scan_skipped(struct folio *folio)
{
	if (folio && numa_hint_faults_mode() && READ_ONCE(numa_hint_refresh) &&
	    folio_use_access_time(folio))
		numa_hint_stamp_faults(folio, false);
}

/**
 * numa_hint_stamp_migrates() - may a migrating folio keep its _last_cpupid?
 * @src_nid: the node the folio leaves
 * @dst_nid: the node it goes to
 *
 * Only a lower-tier folio holds a hint stamp (folio_use_access_time());
 * a top-tier folio holds a real cpupid, which NUMA balancing's two-stage
 * filter and numa_group joining read, and which always migrates.  A
 * fault-count stamp of the per-node clock is a reading of its node's
 * clock, which runs at that node's hint-fault rate: on another node it
 * would read as a latency of the wrong clock.  Time stamps and stamps of
 * the per-mm clock mean the same on every node.
 *
 * Return: false if the folio leaves a lower-tier node for another node
 * while stamps are of the per-node clock, true otherwise.
 */
bool numa_hint_stamp_migrates(int src_nid, int dst_nid)
{
	return src_nid == dst_nid || !numa_hint_faults_mode() ||
	       READ_ONCE(numa_hint_clock_scope) != NUMA_HINT_CLOCK_NODE ||
	       node_is_toptier(src_nid);
}

/**
 * numa_hint_count_fault() - advance a lower-tier node's clock
 * @src_nid: the node of a folio that took a memory-tiering hint fault
 *
 * Called for every such fault, whatever the mode and whether or not the
 * latency is checked.
 */
void numa_hint_count_fault(int src_nid)
{
	mod_node_page_state(NODE_DATA(src_nid), NUMA_HINT_FAULTS_TIERING, 1);
}

/**
 * numa_hint_reset_threshold() - restart a node's automatic threshold
 * @src_nid: lower-tier node
 *
 * Called while the top tier has free space and promotes unchecked: what
 * the threshold learnt no longer applies once it fills.
 */
void numa_hint_reset_threshold(int src_nid)
{
	struct pglist_data *pgdat = NODE_DATA(src_nid);

	if (READ_ONCE(pgdat->nbp_fault_threshold))
		WRITE_ONCE(pgdat->nbp_fault_threshold, 0);
}

/**
 * numa_hint_match_unit() - match the unit of a node's clock to a threshold
 * @pgdat: the node
 * @th: its threshold, in hint faults
 *
 * Rebases the clock (numa_hint_rebase()) if @th wants another unit
 * (numa_hint_unit_shift()).
 */
static void numa_hint_match_unit(struct pglist_data *pgdat, unsigned int th)
{
	unsigned int shift = numa_hint_unit_shift(th);
	unsigned long base = READ_ONCE(pgdat->nbp_hint_base);

	if ((base & NUMA_HINT_SHIFT_MASK) == shift)
		return;
	cmpxchg(&pgdat->nbp_hint_base, base,
		numa_hint_rebase(node_page_state(pgdat, NUMA_HINT_FAULTS_TIERING),
				 base, shift));
}

/**
 * numa_hint_period_end() - end a lower-tier node's adjustment period
 * @pgdat: the node
 * @rate_limit: promotion rate limit, in pages per second
 * @period: adjustment period in ms
 * @elapsed: ms since the period started, 0 if its start is unknown
 * @adjust: adjust the automatic threshold (no fixed one is set)
 *
 * Reads the node's hint faults and promotion candidates with every CPU
 * folded in, so that neither lags by what the CPUs hold: the clock's lag
 * bound for the next period (numa_hint_fold_slack()) and, if @adjust,
 * the automatic threshold (numa_hint_adjust_threshold()), at least that
 * bound, follow.  A period of unknown start (a node that came online
 * after fault-count mode was turned on has none) only sets the next
 * period's baselines: its counts hold everything since the node came up.
 * O(online CPUs): run by numa_hint_period_work, never in a fault.
 */
static void numa_hint_period_end(struct pglist_data *pgdat,
				 unsigned long rate_limit, unsigned int period,
				 unsigned int elapsed, bool adjust)
{
	unsigned long faults, nr_cand, ref_cand;
	unsigned int th, t, fold;

	faults = numa_hint_node_stat_exact(pgdat, NUMA_HINT_FAULTS_TIERING);
	nr_cand = numa_hint_node_stat_exact(pgdat, NUMA_HINT_CANDIDATES_TIERING);
	if (!elapsed)
		goto baselines;
	t = this_cpu_read(pgdat->per_cpu_nodestats->stat_threshold);
	fold = min_t(u64, (u64)NUMA_HINT_FOLD_INTERVALS *
		     jiffies_to_msecs(READ_ONCE(sysctl_stat_interval)), U32_MAX);
	WRITE_ONCE(pgdat->nbp_fault_slack,
		   numa_hint_fold_slack(faults -
					READ_ONCE(pgdat->nbp_fault_th_faults),
					elapsed, fold,
					numa_hint_unfolded_cpus() * t));
	if (adjust) {
		th = READ_ONCE(pgdat->nbp_fault_threshold) ? :
			NUMA_HINT_MAX_THRESHOLD_FAULTS;
		ref_cand = rate_limit * period / MSEC_PER_SEC;
		th = numa_hint_adjust_threshold(th, nr_cand -
						READ_ONCE(pgdat->nbp_fault_th_nr_cand),
						ref_cand);
		WRITE_ONCE(pgdat->nbp_fault_threshold,
			   max(th, numa_hint_clock_slack(pgdat)));
	}
baselines:
	WRITE_ONCE(pgdat->nbp_fault_th_faults, faults);
	WRITE_ONCE(pgdat->nbp_fault_th_nr_cand, nr_cand);
}

/**
 * numa_hint_period_workfn() - end the adjustment periods that faults claimed
 * @work: numa_hint_period_work
 *
 * Ends the period (numa_hint_period_end()) of each node that
 * numa_hint_period_claim() marked, with the rate limit and period length
 * the claiming fault saw, outside the fault and its page table lock.
 * Holds numa_hint_knob_lock, so that no knob write or mode change
 * restarts a node in the middle of its period's end.  O(nodes) to find
 * the marks, O(online CPUs) per marked node.
 */
static void numa_hint_period_workfn(struct work_struct *work)
{
	struct pglist_data *pgdat;
	int nid;

	guard(mutex)(&numa_hint_knob_lock);
	for_each_node_mask(nid, numa_hint_period_pending) {
		/* fully ordered: pairs with numa_hint_period_claim() */
		if (!test_and_clear_bit(nid, numa_hint_period_pending.bits) ||
		    !node_online(nid))
			continue;
		pgdat = NODE_DATA(nid);
		numa_hint_period_end(pgdat,
				     READ_ONCE(numa_hint_period_rate_limit),
				     READ_ONCE(numa_hint_period_ms),
				     READ_ONCE(pgdat->nbp_fault_elapsed),
				     !READ_ONCE(numa_hint_threshold_faults));
	}
}

/**
 * numa_hint_period_claim() - hand a node's period end to the work item
 * @pgdat: the node, whose period's end the caller claimed
 * @rate_limit: promotion rate limit, in pages per second
 * @period: adjustment period in ms
 * @elapsed: the period's length in ms, 0 if its start is unknown
 *
 * Marks @pgdat and queues numa_hint_period_work, which folds every CPU's
 * counts (O(online CPUs)) where no page table lock is held.  O(1) here: a
 * few stores, an atomic bit set and queue_work(), once per period and
 * node.  Until the work has run, faults use the threshold and the lag
 * bound of the period before.
 */
static void numa_hint_period_claim(struct pglist_data *pgdat,
				   unsigned long rate_limit,
				   unsigned int period, unsigned int elapsed)
{
	WRITE_ONCE(pgdat->nbp_fault_elapsed, elapsed);
	WRITE_ONCE(numa_hint_period_rate_limit, rate_limit);
	WRITE_ONCE(numa_hint_period_ms, period);
	/* the stores above before the mark that the work tests */
	smp_mb__before_atomic();
	node_set(pgdat->node_id, numa_hint_period_pending);
	queue_work(system_unbound_wq, &numa_hint_period_work);
}

/**
 * numa_hint_node_threshold() - a lower-tier node's threshold, in faults
 * @pgdat: the node
 * @rate_limit: promotion rate limit, in pages per second
 * @period: adjustment period in ms
 *
 * The fixed threshold if one is set, else the automatic one, adjusted
 * once per @period (numa_hint_period_end(), in a work item that the fault
 * which finds the period over queues: numa_hint_period_claim()); either
 * at least the clock's slack (numa_hint_clock_slack()).  Keeps the unit
 * of the node's clock matched to the threshold (numa_hint_unit_shift()).
 * O(1).
 *
 * Return: the threshold, in hint faults.
 */
static unsigned int numa_hint_node_threshold(struct pglist_data *pgdat,
					     unsigned long rate_limit,
					     unsigned int period)
{
	unsigned int th = READ_ONCE(numa_hint_threshold_faults);
	unsigned int now = jiffies_to_msecs(jiffies);
	unsigned int start = READ_ONCE(pgdat->nbp_fault_th_start);

	if (now - start > period &&
	    cmpxchg(&pgdat->nbp_fault_th_start, start, now) == start)
		numa_hint_period_claim(pgdat, rate_limit, period,
				       start ? now - start : 0);
	if (!th)
		th = READ_ONCE(pgdat->nbp_fault_threshold) ? :
			NUMA_HINT_MAX_THRESHOLD_FAULTS;
	th = max(th, numa_hint_clock_slack(pgdat));
	numa_hint_match_unit(pgdat, th);
	return th;
}

/**
 * numa_hint_mode_change() - restart the fault-count state on a mode change
 * @old: the numa_balancing sysctl's value before a write
 * @new: the value written
 *
 * Called by the sysctl's writer.  When a write turns the fault-count
 * latency on (NUMA_BALANCING_TIERING_FAULTS with
 * NUMA_BALANCING_MEMORY_TIERING, where either was off), every node's
 * automatic threshold restarts from the top, its adjustment period and
 * the clock's lag bound start now, the period counts only candidates and
 * faults from now, and the clock's unit follows the restarted threshold,
 * so that nothing learnt or counted before the switch is judged by it.
 */
void numa_hint_mode_change(int old, int new)
{
	const int on = NUMA_BALANCING_MEMORY_TIERING |
		NUMA_BALANCING_TIERING_FAULTS;
	struct pglist_data *pgdat;
	unsigned int th;

	if ((new & on) != on || (old & on) == on)
		return;
	mutex_lock(&numa_hint_knob_lock);
	for_each_online_pgdat(pgdat) {
		WRITE_ONCE(pgdat->nbp_fault_threshold, 0);
		WRITE_ONCE(pgdat->nbp_fault_slack, 0);
		WRITE_ONCE(pgdat->nbp_fault_th_faults,
			   numa_hint_node_stat_exact(pgdat,
						     NUMA_HINT_FAULTS_TIERING));
		WRITE_ONCE(pgdat->nbp_fault_th_nr_cand,
			   numa_hint_node_stat_exact(pgdat,
						     NUMA_HINT_CANDIDATES_TIERING));
		/* 0 would read as a period of unknown start */
		WRITE_ONCE(pgdat->nbp_fault_th_start,
			   jiffies_to_msecs(jiffies) ? : 1);
		th = READ_ONCE(numa_hint_threshold_faults) ? :
			NUMA_HINT_MAX_THRESHOLD_FAULTS;
		numa_hint_match_unit(pgdat, max(th, numa_hint_clock_slack(pgdat)));
	}
	mutex_unlock(&numa_hint_knob_lock);
}

/**
 * numa_hint_to_faults() - a count of units in hint faults, for reporting
 * @units: a latency or threshold in units of 2^@shift faults
 * @shift: the unit
 *
 * Return: @units << @shift, at most U32_MAX.
 */
static unsigned int numa_hint_to_faults(unsigned int units, unsigned int shift)
{
	return min_t(u64, (u64)units << shift, U32_MAX);
}

/**
 * numa_hint_fault_decide() - judge a hint fault by its fault-count latency
 * @folio: the faulting lower-tier folio
 * @mm: the address space it faulted in (the VMA's, also for a fault taken
 *	by another process through get_user_pages())
 * @src_nid: its node
 * @rate_limit: promotion rate limit, in pages per second
 * @period: adjustment period of the automatic threshold, in ms
 * @latency: set to the latency, in hint faults
 * @threshold: set to the threshold, in hint faults
 *
 * Restamps @folio.  With the per-node clock the latency counts the node's
 * hint faults since @folio's scan, and a folio under the threshold is also
 * rejected if hot_repeat is set and it took no hint fault in the scan pass
 * before; a candidate counts towards the node's automatic threshold.  With
 * the per-mm clock the latency counts the hint faults taken in @mm, the
 * clock that numa_hint_mm_fault() advanced for this fault and that the
 * scanner stamped @folio from, against a fixed threshold.
 *
 * Return: NUMA_HINT_PROMOTE (subject to the rate limit),
 * NUMA_HINT_REJECT_LATENCY or NUMA_HINT_REJECT_FIRST.
 */
enum numa_hint_decision numa_hint_fault_decide(struct folio *folio,
					       struct mm_struct *mm,
					       int src_nid,
					       unsigned long rate_limit,
					       unsigned int period,
					       unsigned int *latency,
					       unsigned int *threshold)
{
	struct pglist_data *pgdat = NODE_DATA(src_nid);
	unsigned int now, last, th, shift, units;
	unsigned long base;

	if (numa_hint_mm_clock() && mm) {
		now = atomic_read(numa_hint_mm_clock_of(mm));
		last = folio_xchg_last_cpupid(folio,
					      now >> NUMA_HINT_MM_BUCKET_SHIFT);
		*latency = numa_hint_mm_latency(now, last);
		*threshold = READ_ONCE(numa_hint_threshold_faults) ? :
			NUMA_HINT_MM_THRESHOLD_FAULTS;
		return *latency < *threshold ? NUMA_HINT_PROMOTE :
			NUMA_HINT_REJECT_LATENCY;
	}

	th = numa_hint_node_threshold(pgdat, rate_limit, period);
	base = READ_ONCE(pgdat->nbp_hint_base);
	shift = base & NUMA_HINT_SHIFT_MASK;
	now = numa_hint_unit_clock(node_page_state(pgdat,
						   NUMA_HINT_FAULTS_TIERING),
				   base);
	last = folio_xchg_last_cpupid(folio, now << 1 | NUMA_HINT_STAMP_FAULTED);
	*threshold = th;
	if (!numa_hint_stamped(last)) {	/* latency unknown */
		*latency = U32_MAX;
		return NUMA_HINT_REJECT_LATENCY;
	}
	units = numa_hint_stamp_latency(now, last);
	*latency = numa_hint_to_faults(units, shift);
	if (units >= max(th >> shift, 1U))
		return NUMA_HINT_REJECT_LATENCY;
	if (READ_ONCE(numa_hint_repeat) && !(last & NUMA_HINT_STAMP_FAULTED))
		return NUMA_HINT_REJECT_FIRST;
	mod_node_page_state(pgdat, NUMA_HINT_CANDIDATES_TIERING,
			    folio_nr_pages(folio));
	return NUMA_HINT_PROMOTE;
}

/**
 * numa_hint_match_write() - parse a keyword written to a knob
 * @ubuf: the user's buffer
 * @cnt: its length
 * @names: the keywords the knob accepts
 * @n: their number
 * @max: writes of @max bytes or more are refused (at most 16)
 *
 * Return: the index of the keyword written (an optional trailing newline
 * allowed), -EINVAL for anything else, or -EFAULT.
 */
static int numa_hint_match_write(const char __user *ubuf, size_t cnt,
				 const char * const *names, size_t n,
				 size_t max)
{
	char buf[16];

	if (cnt >= min(max, sizeof(buf)))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	return __sysfs_match_string(names, n, buf);
}

static int numa_hint_threshold_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%u\n", READ_ONCE(numa_hint_threshold_faults));
	return 0;
}

/**
 * numa_hint_set_threshold() - set hot_threshold_faults
 * @val: 0 (automatic) or a fixed threshold
 *
 * The unit of every node's clock follows at once, so that the stamps the
 * scanner takes from now on are in the unit their faults will be read in.
 *
 * Return: 0, or -EINVAL and nothing changed if @val exceeds the largest
 * latency a stamp of the current clock scope can express.
 */
static int numa_hint_set_threshold(unsigned int val)
{
	struct pglist_data *pgdat;
	unsigned int th;
	int nid, ret = 0;

	mutex_lock(&numa_hint_knob_lock);
	if (val > numa_hint_threshold_max(READ_ONCE(numa_hint_clock_scope))) {
		ret = -EINVAL;
	} else {
		WRITE_ONCE(numa_hint_threshold_faults, val);
		for_each_node_state(nid, N_MEMORY) {
			pgdat = NODE_DATA(nid);
			th = val ? : READ_ONCE(pgdat->nbp_fault_threshold) ? :
				NUMA_HINT_MAX_THRESHOLD_FAULTS;
			th = max(th, numa_hint_clock_slack(pgdat));
			numa_hint_match_unit(pgdat, th);
		}
	}
	mutex_unlock(&numa_hint_knob_lock);
	return ret;
}

/**
 * numa_hint_set_clock() - set hint_clock
 * @scope: enum numa_hint_clock_scope
 *
 * Return: 0, or -EINVAL and nothing changed if the fixed threshold in
 * force is beyond what a stamp of @scope can express (set
 * hot_threshold_faults first).
 */
static int numa_hint_set_clock(int scope)
{
	int ret = 0;

	mutex_lock(&numa_hint_knob_lock);
	if (READ_ONCE(numa_hint_threshold_faults) > numa_hint_threshold_max(scope))
		ret = -EINVAL;
	else
		WRITE_ONCE(numa_hint_clock_scope, scope);
	mutex_unlock(&numa_hint_knob_lock);
	return ret;
}

/*
 * 0 (automatic) or a fixed threshold up to the largest latency a stamp can
 * express; anything else is -EINVAL and leaves the threshold alone.  The
 * whole write is parsed (up to a page), so that trailing junk or a long
 * run of leading zeros is not cut off and misread.
 */
static ssize_t numa_hint_threshold_write(struct file *file,
					 const char __user *ubuf,
					 size_t cnt, loff_t *ppos)
{
	unsigned int val;
	char *buf;
	int err;

	if (cnt >= PAGE_SIZE)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, cnt);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	err = kstrtouint(buf, 0, &val);
	kfree(buf);
	if (err || numa_hint_set_threshold(val))
		return -EINVAL;
	return cnt;
}

DEFINE_SHOW_STORE_ATTRIBUTE(numa_hint_threshold);

static int numa_hint_clock_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n",
		   numa_hint_clock_names[READ_ONCE(numa_hint_clock_scope)]);
	return 0;
}

/*
 * "node" or "mm", with an optional trailing newline; anything else, or a
 * scope whose stamps cannot express the fixed threshold in force, is
 * -EINVAL and leaves the scope alone.
 */
static ssize_t numa_hint_clock_write(struct file *file, const char __user *ubuf,
				     size_t cnt, loff_t *ppos)
{
	int scope;

	scope = numa_hint_match_write(ubuf, cnt, numa_hint_clock_names,
				      ARRAY_SIZE(numa_hint_clock_names), 16);
	if (scope < 0)
		return scope;
	if (numa_hint_set_clock(scope))
		return -EINVAL;
	return cnt;
}

DEFINE_SHOW_STORE_ATTRIBUTE(numa_hint_clock);

static const char * const numa_hint_bool_names[] = { "0", "1" };

/* hot_repeat and hint_refresh: the knob's bool is the file's private data */
static int numa_hint_bool_show(struct seq_file *m, void *v)
{
	bool *knob = m->private;

	seq_printf(m, "%d\n", READ_ONCE(*knob));
	return 0;
}

/*
 * "0" or "1", with an optional trailing newline; anything else is -EINVAL
 * and leaves the knob alone.
 */
static ssize_t numa_hint_bool_write(struct file *file, const char __user *ubuf,
				    size_t cnt, loff_t *ppos)
{
	bool *knob = ((struct seq_file *)file->private_data)->private;
	int val;

	val = numa_hint_match_write(ubuf, cnt, numa_hint_bool_names,
				    ARRAY_SIZE(numa_hint_bool_names), 4);
	if (val < 0)
		return val;
	WRITE_ONCE(*knob, val);
	return cnt;
}

DEFINE_SHOW_STORE_ATTRIBUTE(numa_hint_bool);

/**
 * numa_hint_debugfs_init() - create the fault-count knobs
 * @dir: the sched/numa_balancing debugfs directory
 *
 * hot_threshold_faults: 0 (default, automatic) or a fixed threshold; a
 * value below the clock's slack reads back as written and is applied as the
 * slack (numa_hint_clock_slack(); the tracepoint shows the one applied).
 * hot_repeat: 1 promotes only pages that also took a hint fault in the scan
 * pass before, 0 (default) promotes on the first.
 * hint_clock: "node" (default) or "mm" (a clock per address space).
 * hint_refresh: 0 (default) leaves the stamps of the folios the scanner
 * finds still PROT_NONE alone, 1 restamps them.
 * hot_repeat, hint_clock and hint_refresh select other designs, to compare
 * them with the default; they are not a tuning interface.
 */
void numa_hint_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("hot_repeat", 0644, dir, &numa_hint_repeat,
			    &numa_hint_bool_fops);
	debugfs_create_file("hot_threshold_faults", 0644, dir, NULL,
			    &numa_hint_threshold_fops);
	debugfs_create_file("hint_clock", 0644, dir, NULL,
			    &numa_hint_clock_fops);
	debugfs_create_file("hint_refresh", 0644, dir, &numa_hint_refresh,
			    &numa_hint_bool_fops);
}

#ifdef CONFIG_NUMA_HINT_LATENCY_KUNIT_TEST
#include "tests/numa_hint_latency-kunit.h"
#endif
