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
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/numa_hint_latency.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/vmstat.h>

/* threshold adjustment: steps from one unit to twice the reference */
#define NUMA_HINT_ADJUST_STEPS	16

int numa_hint_latency_mode __read_mostly = NUMA_HINT_LATENCY_TIME;

/* fixed fault-count threshold; 0: adjusted automatically */
static unsigned int numa_hint_threshold_faults __read_mostly;

static const char * const numa_hint_mode_names[] = {
	[NUMA_HINT_LATENCY_TIME] = "time",
	[NUMA_HINT_LATENCY_FAULTS] = "faults",
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
	if (numa_hint_faults_mode())
		now = atomic_read(numa_hint_clock(folio_nid(folio)));
	else
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
		folio_xchg_access_time(folio,
				       atomic_read(numa_hint_clock(folio_nid(folio))));
}

/**
 * numa_hint_fault_count_latency() - latency of a hint fault, in faults
 * @folio: the faulting folio
 * @src_nid: its node
 *
 * Advances the clock of @src_nid by this fault and restamps @folio.
 *
 * Return: the hint faults taken on @src_nid's folios since @folio was
 * stamped, modulo the stamp's range.
 */
unsigned int numa_hint_fault_count_latency(struct folio *folio, int src_nid)
{
	int now = atomic_inc_return(numa_hint_clock(src_nid));
	int last = folio_xchg_access_time(folio, now);

	return numa_hint_latency(now, last);
}

/**
 * numa_hint_fault_threshold() - fault-count threshold for promotion to a node
 * @pgdat: destination (top-tier) node
 * @rate_limit: promotion rate limit, in pages per second
 * @period: adjustment period in ms (numa_balancing scan_period_max_ms)
 *
 * The fixed threshold if one was set in debugfs.  Otherwise the automatic
 * one: it starts at NUMA_HINT_DEFAULT_THRESHOLD_FAULTS and, once per
 * @period, moves one step down if more promotion
 * candidates than the rate limit allows reached @pgdat, or one step up if
 * fewer did (numa_hint_adjust_threshold()).
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

/*
 * 0 (automatic) or a fixed threshold up to the largest latency a stamp can
 * express; anything else is -EINVAL and leaves the threshold alone.
 */
static ssize_t numa_hint_threshold_write(struct file *file,
					 const char __user *ubuf,
					 size_t cnt, loff_t *ppos)
{
	unsigned int val;

	if (kstrtouint_from_user(ubuf, cnt, 0, &val) ||
	    val > PAGE_ACCESS_TIME_MASK)
		return -EINVAL;
	WRITE_ONCE(numa_hint_threshold_faults, val);
	return cnt;
}

static const struct file_operations numa_hint_threshold_fops = {
	.open		= numa_hint_threshold_open,
	.read		= seq_read,
	.write		= numa_hint_threshold_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/**
 * numa_hint_debugfs_init() - create the fault-count knobs
 * @dir: the sched/numa_balancing debugfs directory
 *
 * hint_latency_mode: "time" (default) or "faults".
 * hot_threshold_faults: 0 (default, automatic) or a fixed threshold.
 */
void numa_hint_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("hint_latency_mode", 0644, dir, NULL,
			    &numa_hint_mode_fops);
	debugfs_create_file("hot_threshold_faults", 0644, dir, NULL,
			    &numa_hint_threshold_fops);
}

#ifdef CONFIG_NUMA_HINT_LATENCY_KUNIT_TEST
#include "tests/numa_hint_latency-kunit.h"
#endif
