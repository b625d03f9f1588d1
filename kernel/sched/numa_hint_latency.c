// SPDX-License-Identifier: GPL-2.0
/*
 * Fault-count NUMA hint latency for memory-tiering promotion.
 *
 * In memory-tiering mode (numa_balancing bit 2) the scanner stamps each
 * lower-tier folio it makes PROT_NONE, and the hint fault that follows
 * promotes the folio if the distance from the stamp is below a threshold.
 * Time mode stamps milliseconds.  For a process with a large address space a
 * scan pass takes long and its pages fault long after they were scanned, so
 * most hint faults, hot pages' included, come out far above a threshold of
 * about a second and nothing is promoted.
 *
 * In fault-count mode the stamp is a hint-fault sequence number instead, and
 * the latency is the number of hint faults between scan and fault.  The
 * sequence is a clock per source node (pglist_data::nbp_hint_clock): every
 * hint fault on a folio of that lower-tier node advances it, whichever
 * process takes the fault.  A latency therefore ranks a page among all the
 * promotion candidates of its node, the pages that compete for the same
 * promotion bandwidth, and pages of different processes compare: a small
 * process's pages do not look hot because the process itself faults
 * rarely, which a clock per mm would make them, and a busy node does not
 * make the pages of another, quiet node look cold, which one global clock
 * would.
 *
 * The stamp lives in the folio's _last_cpupid bits, as the millisecond
 * stamp does, so latencies come in units of 1 << PAGE_ACCESS_TIME_BUCKETS
 * and are taken modulo the stamp's range (at least 4096).  A page whose
 * true latency exceeds that range aliases to a small one; to keep that
 * rare, the scanner also refreshes the stamp of pages it finds still
 * PROT_NONE from an earlier pass, so a latency never spans more than one
 * scan pass.
 *
 * For comparison, hint_clock "mm" selects the design of the RFC this
 * follows ("sched/numa: Fault count based NUMA hint fault latency"): one
 * clock per address space, advanced by every hint fault of the process
 * (do_numa_page()), folios stamped with the count >> 16 in their
 * _last_cpupid bits, a fixed threshold of 1,000,000 faults.  The scanner
 * runs in the context of the task whose mm it scans (task_numa_work()),
 * and the hint fault in that of the faulting task, so both take the clock
 * of current->mm.  The RFC kept the count in a new mm_struct field; here
 * the clocks live in a small table indexed by a hash of the mm, so that a
 * setting kept for comparison does not grow mm_struct (nor change a header
 * that every file of the kernel includes).  Two live processes whose
 * hashes collide share a clock.
 */
#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/numa_hint_latency.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>

/* threshold adjustment: steps from one unit to twice the reference */
#define NUMA_HINT_ADJUST_STEPS	16

int numa_hint_latency_mode __read_mostly = NUMA_HINT_LATENCY_TIME;

int numa_hint_clock_scope __read_mostly = NUMA_HINT_CLOCK_NODE;

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

static const char * const numa_hint_mode_names[] = {
	[NUMA_HINT_LATENCY_TIME] = "time",
	[NUMA_HINT_LATENCY_FAULTS] = "faults",
};

static const char * const numa_hint_clock_names[] = {
	[NUMA_HINT_CLOCK_NODE] = "node",
	[NUMA_HINT_CLOCK_MM] = "mm",
};

/**
 * numa_hint_latency() - distance between a stamp and now, across wrap-around
 * @now: the current value of the clock
 * @last: the stamp read back from the folio (folio_xchg_access_time())
 *
 * The folio keeps only the low bits of a stamp, in units of
 * 1 << PAGE_ACCESS_TIME_BUCKETS, so the difference is taken modulo their
 * range and rounded down to a unit.  Used by both modes.
 *
 * Return: (@now - @last) masked with PAGE_ACCESS_TIME_MASK.
 */
unsigned int numa_hint_latency(unsigned int now, unsigned int last)
{
	return (now - last) & PAGE_ACCESS_TIME_MASK;
}

/**
 * numa_hint_mm_latency_mask() - range of a per-mm clock latency, minus one
 *
 * A folio keeps count >> NUMA_HINT_MM_BUCKET_SHIFT in LAST_CPUPID_SHIFT
 * bits, so latencies are taken modulo 2^(16 + LAST_CPUPID_SHIFT), or
 * modulo 2^32, the clock's own range, if that is smaller.  The RFC took
 * the difference unmasked, which is the same while the count fits in the
 * stored bits and wrong after.
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
		PAGE_ACCESS_TIME_MASK;
}

/**
 * numa_hint_adjust_threshold() - one step of the automatic threshold
 * @th: current threshold, 0 if none yet
 * @ref_th: reference threshold; the result stays within
 *	[@ref_th / 8, 2 * @ref_th]
 * @diff_cand: promotion candidates seen in the period that just ended
 * @ref_cand: candidates the promotion rate limit allows in one period
 *
 * The rule of numa_promotion_adjust_threshold() for milliseconds: more than
 * 110% of @ref_cand candidates lowers the threshold by one step
 * (@ref_th / 8), fewer than 90% raises it by one.
 *
 * Return: the threshold for the next period.
 */
unsigned int numa_hint_adjust_threshold(unsigned int th, unsigned int ref_th,
					unsigned long diff_cand,
					unsigned long ref_cand)
{
	unsigned int unit = max(ref_th * 2 / NUMA_HINT_ADJUST_STEPS, 1U);

	th = th ? : ref_th;
	if (diff_cand > ref_cand * 11 / 10)
		th = th > 2 * unit ? th - unit : unit;
	else if (diff_cand < ref_cand * 9 / 10)
		th = min(th + unit, ref_th * 2);
	return th;
}

/**
 * numa_hint_clock() - the hint-fault clock of a node
 * @nid: lower-tier node
 *
 * Return: the clock of @nid.
 */
static atomic_t *numa_hint_clock(int nid)
{
	return &NODE_DATA(nid)->nbp_hint_clock;
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
 * numa_hint_stamp_faults() - stamp a folio with its fault-count clock
 * @folio: a lower-tier folio the scanner passes
 *
 * With the per-mm clock, the count of the scanning task's mm in buckets;
 * otherwise the clock of the folio's node.
 */
static void numa_hint_stamp_faults(struct folio *folio)
{
	struct mm_struct *mm = current->mm;

	if (numa_hint_mm_clock() && mm)
		folio_xchg_last_cpupid(folio,
				       (unsigned int)atomic_read(numa_hint_mm_clock_of(mm)) >>
				       NUMA_HINT_MM_BUCKET_SHIFT);
	else
		folio_xchg_access_time(folio,
				       atomic_read(numa_hint_clock(folio_nid(folio))));
}

/**
 * numa_hint_scan_stamp() - stamp a folio the scanner makes PROT_NONE
 * @folio: the folio
 *
 * For a folio whose _last_cpupid holds an access stamp (a lower-tier folio
 * in memory-tiering mode): store the time in ms, or in fault-count mode the
 * current value of the clock of the folio's node.
 */
void numa_hint_scan_stamp(struct folio *folio)
{
	int now;

	if (!folio_use_access_time(folio))
		return;
	if (numa_hint_faults_mode()) {
		numa_hint_stamp_faults(folio);
		return;
	}
	now = jiffies_to_msecs(jiffies);
	folio_xchg_access_time(folio, now);
}

/**
 * numa_hint_scan_skipped() - refresh the stamp of a still-PROT_NONE folio
 * @folio: the folio of a PTE or PMD the scanner found PROT_NONE, or NULL
 *
 * In fault-count mode a folio that was not accessed since the previous scan
 * pass gets the current clock value, so that its latency, when it finally
 * faults, counts from the last pass and not from an older one whose
 * distance may exceed the stamp's range.  Time mode does nothing: its
 * latency is the time since the folio was made PROT_NONE.
 */
void numa_hint_scan_skipped(struct folio *folio)
{
	if (folio && numa_hint_faults_mode() && folio_use_access_time(folio))
		numa_hint_stamp_faults(folio);
}

/**
 * numa_hint_fault_count_latency() - latency of a hint fault, in faults
 * @folio: the faulting folio
 * @src_nid: its node
 *
 * Advances the clock of @src_nid by this fault and restamps @folio.  With
 * the per-mm clock, do_numa_page() has advanced the faulting task's clock
 * already: read it and restamp @folio in buckets.
 *
 * Return: the hint faults taken on @src_nid's folios (or by the faulting
 * process) since @folio was stamped, modulo the stamp's range.
 */
unsigned int numa_hint_fault_count_latency(struct folio *folio, int src_nid)
{
	struct mm_struct *mm = current->mm;
	unsigned int mm_now;
	int now, last;

	if (numa_hint_mm_clock() && mm) {
		mm_now = atomic_read(numa_hint_mm_clock_of(mm));
		last = folio_xchg_last_cpupid(folio,
					      mm_now >> NUMA_HINT_MM_BUCKET_SHIFT);
		return numa_hint_mm_latency(mm_now, last);
	}
	now = atomic_inc_return(numa_hint_clock(src_nid));
	last = folio_xchg_access_time(folio, now);
	return numa_hint_latency(now, last);
}

/**
 * numa_hint_fault_threshold() - fault-count threshold for promotion to a node
 * @pgdat: destination (top-tier) node
 * @rate_limit: promotion rate limit, in pages per second
 * @period: adjustment period in ms (numa_balancing scan_period_max_ms)
 *
 * The fixed threshold if one was set in debugfs.  Otherwise, with the
 * per-mm clock, NUMA_HINT_MM_THRESHOLD_FAULTS (the RFC's fixed value), and
 * with the per-node clock the automatic threshold: it starts at
 * NUMA_HINT_DEFAULT_THRESHOLD_FAULTS and, once per @period, moves one step
 * down if more promotion candidates than the rate limit allows reached
 * @pgdat, or one step up if fewer did (numa_hint_adjust_threshold()).
 *
 * Return: the threshold, in hint faults.
 */
unsigned int numa_hint_fault_threshold(struct pglist_data *pgdat,
				       unsigned long rate_limit,
				       unsigned int period)
{
	unsigned int fixed = READ_ONCE(numa_hint_threshold_faults);
	unsigned int now, start, th;
	unsigned long nr_cand, ref_cand;

	if (fixed)
		return fixed;
	if (numa_hint_mm_clock())
		return NUMA_HINT_MM_THRESHOLD_FAULTS;

	now = jiffies_to_msecs(jiffies);
	start = READ_ONCE(pgdat->nbp_fault_th_start);
	if (now - start > period &&
	    cmpxchg(&pgdat->nbp_fault_th_start, start, now) == start) {
		ref_cand = rate_limit * period / MSEC_PER_SEC;
		nr_cand = node_page_state(pgdat, PGPROMOTE_CANDIDATE);
		th = numa_hint_adjust_threshold(READ_ONCE(pgdat->nbp_fault_threshold),
						NUMA_HINT_DEFAULT_THRESHOLD_FAULTS,
						nr_cand - pgdat->nbp_fault_th_nr_cand,
						ref_cand);
		pgdat->nbp_fault_th_nr_cand = nr_cand;
		WRITE_ONCE(pgdat->nbp_fault_threshold, th);
	}
	return READ_ONCE(pgdat->nbp_fault_threshold) ? :
		NUMA_HINT_DEFAULT_THRESHOLD_FAULTS;
}

static int numa_hint_mode_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n",
		   numa_hint_mode_names[READ_ONCE(numa_hint_latency_mode)]);
	return 0;
}

static int numa_hint_mode_open(struct inode *inode, struct file *file)
{
	return single_open(file, numa_hint_mode_show, NULL);
}

/*
 * "time" or "faults", with an optional trailing newline; anything else is
 * -EINVAL and leaves the mode alone.
 */
static ssize_t numa_hint_mode_write(struct file *file, const char __user *ubuf,
				    size_t cnt, loff_t *ppos)
{
	char buf[16];
	int mode;

	if (cnt >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	mode = sysfs_match_string(numa_hint_mode_names, buf);
	if (mode < 0)
		return -EINVAL;
	WRITE_ONCE(numa_hint_latency_mode, mode);
	return cnt;
}

static const struct file_operations numa_hint_mode_fops = {
	.open		= numa_hint_mode_open,
	.read		= seq_read,
	.write		= numa_hint_mode_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int numa_hint_threshold_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%u\n", READ_ONCE(numa_hint_threshold_faults));
	return 0;
}

static int numa_hint_threshold_open(struct inode *inode, struct file *file)
{
	return single_open(file, numa_hint_threshold_show, NULL);
}

/**
 * numa_hint_set_threshold() - set hot_threshold_faults
 * @val: 0 (automatic) or a fixed threshold
 *
 * Return: 0, or -EINVAL and nothing changed if @val exceeds the largest
 * latency a stamp of the current clock scope can express.
 */
static int numa_hint_set_threshold(unsigned int val)
{
	int ret = 0;

	mutex_lock(&numa_hint_knob_lock);
	if (val > numa_hint_threshold_max(READ_ONCE(numa_hint_clock_scope)))
		ret = -EINVAL;
	else
		WRITE_ONCE(numa_hint_threshold_faults, val);
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

static const struct file_operations numa_hint_threshold_fops = {
	.open		= numa_hint_threshold_open,
	.read		= seq_read,
	.write		= numa_hint_threshold_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int numa_hint_clock_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n",
		   numa_hint_clock_names[READ_ONCE(numa_hint_clock_scope)]);
	return 0;
}

static int numa_hint_clock_open(struct inode *inode, struct file *file)
{
	return single_open(file, numa_hint_clock_show, NULL);
}

/*
 * "node" or "mm", with an optional trailing newline; anything else, or a
 * scope whose stamps cannot express the fixed threshold in force, is
 * -EINVAL and leaves the scope alone.
 */
static ssize_t numa_hint_clock_write(struct file *file, const char __user *ubuf,
				     size_t cnt, loff_t *ppos)
{
	char buf[16];
	int scope;

	if (cnt >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	scope = sysfs_match_string(numa_hint_clock_names, buf);
	if (scope < 0 || numa_hint_set_clock(scope))
		return -EINVAL;
	return cnt;
}

static const struct file_operations numa_hint_clock_fops = {
	.open		= numa_hint_clock_open,
	.read		= seq_read,
	.write		= numa_hint_clock_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/**
 * numa_hint_debugfs_init() - create the fault-count knobs
 * @dir: the sched/numa_balancing debugfs directory
 *
 * hint_latency_mode: "time" (default) or "faults".
 * hot_threshold_faults: 0 (default, automatic) or a fixed threshold.
 * hint_clock: "node" (default) or "mm" (the RFC's per-process clock, for
 * comparison).
 */
void numa_hint_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("hint_latency_mode", 0644, dir, NULL,
			    &numa_hint_mode_fops);
	debugfs_create_file("hot_threshold_faults", 0644, dir, NULL,
			    &numa_hint_threshold_fops);
	debugfs_create_file("hint_clock", 0644, dir, NULL,
			    &numa_hint_clock_fops);
}

#ifdef CONFIG_NUMA_HINT_LATENCY_KUNIT_TEST
#include "tests/numa_hint_latency-kunit.h"
#endif
