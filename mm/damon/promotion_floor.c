// SPDX-License-Identifier: GPL-2.0
/*
 * DAMOS promotion floor: a migrate_hot scheme takes only regions hotter
 * than the memory a migrate_cold scheme would demote next from the same
 * fast node.
 *
 * Two paddr kdamonds tier a fast node F and a slow node S: one monitors F
 * and demotes its coldest regions to S, the other monitors S and promotes
 * its hottest regions to F.  When F is full, each promotion displaces what
 * the demotion takes next.  Without a common measure the two cannot tell
 * whether the exchange gains anything: a region on S is "hot" if it was
 * accessed in any of its kdamond's samples, and that kdamond tunes its
 * sampling interval to its own node's traffic.  So memory of the same
 * access rate on both nodes is exchanged forever.
 *
 * Here the migrate_cold scheme whose floor_nid is F publishes, at each of
 * its applications, F's floor: the access rate of F's coldest memory that
 * holds data, taken as the coldest of F's regions beyond F's free memory
 * (free page frames look like the coldest memory).  A migrate_hot scheme
 * whose floor_nid is F takes a region only if the region's access rate is
 * above that floor, or if every sample of the aggregation saw it accessed
 * (its rate is then above what its sampling can show).  Rates are per
 * second: a region's is the samples that saw it accessed in the last
 * aggregation, over the aggregation interval; the floor's counts one access
 * more than its region showed, the resolution of F's sampling, so that a
 * region on S must be seen hotter than F's coldest by more than F's
 * kdamond can measure.  DAMON counts samples, not accesses, so no region's
 * rate exceeds one per sampling interval of its own kdamond: where S's
 * kdamond samples less often than the floor's rate, no region on S passes
 * on its rate, only by the every-sample rule.
 *
 * Cost: the publisher walks its context's regions once per application,
 * as the quota's score histogram does, and reads F's free page count
 * (si_meminfo_node()); the reader reads one published word per region it
 * would apply its action to.  Neither depends on the number of CPUs.
 */

#include <linux/damon.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/slab.h>

#include "promotion_floor.h"

#include <trace/events/damon.h>

/**
 * struct damos_floor - The promotion floor of a node.
 * @rate:	Access rate of the node's coldest memory that holds data, in
 *		accesses per 1,000 seconds.
 * @expires:	Jiffies after which @rate is stale (its publisher stopped).
 * @published:	Whether @rate and @expires were ever set.
 */
struct damos_floor {
	unsigned long rate;
	unsigned long expires;
	bool published;
};

/* one per possible node id, allocated at boot */
static struct damos_floor *damos_floors;

static int __init damos_floor_init(void)
{
	damos_floors = kcalloc(nr_node_ids, sizeof(*damos_floors), GFP_KERNEL);
	return damos_floors ? 0 : -ENOMEM;
}
subsys_initcall(damos_floor_init);

/**
 * damos_floor_rate() - A region's access rate.
 * @nr_accesses_bp:	Accesses over an aggregation interval, in bp (1/10,000)
 *			of an access.
 * @aggr_us:		The aggregation interval in microseconds.
 *
 * Return: the accesses per 1,000 seconds, at most ULONG_MAX.
 */
static unsigned long damos_floor_rate(unsigned int nr_accesses_bp,
				      unsigned long aggr_us)
{
	/* past 2^32 for aggregations under 23 us: capped on 32-bit */
	return min_t(u64, div64_u64((u64)nr_accesses_bp * 100000,
				    max(aggr_us, 1UL)), ULONG_MAX);
}

/**
 * damos_floor_nr_accesses_bp() - The floor of a context's memory.
 * @c:		The DAMON context, monitoring the node of the floor.
 * @free_sz:	The node's free memory in bytes.
 *
 * Sorts the context's regions by their accesses per aggregation (in
 * @c->regions_score_histogram, one bin per access, the last bin for
 * DAMOS_MAX_SCORE accesses or more) and takes the bin where the regions'
 * size, counted from the coldest, first exceeds @free_sz.
 *
 * Return: that bin's accesses plus one, in bp, or 0 if the regions are
 * no larger than @free_sz.
 */
static unsigned int damos_floor_nr_accesses_bp(struct damon_ctx *c,
					       unsigned long free_sz)
{
	unsigned long *hist = c->regions_score_histogram;
	unsigned long sz = 0;
	struct damon_target *t;
	struct damon_region *r;
	unsigned int i;

	memset(hist, 0, sizeof(*hist) * (DAMOS_MAX_SCORE + 1));
	damon_for_each_target(t, c) {
		damon_for_each_region(r, t) {
			i = min(DIV_ROUND_UP(r->nr_accesses_bp, 10000),
				DAMOS_MAX_SCORE);
			hist[i] += damon_sz_region(r);
		}
	}
	for (i = 0; i <= DAMOS_MAX_SCORE; i++) {
		sz += hist[i];
		if (sz > free_sz)
			return (i + 1) * 10000;
	}
	return 0;
}

/**
 * damos_floor_publish() - Publish a node's promotion floor.
 * @c:	The DAMON context of @s.
 * @s:	A scheme about to be applied.
 *
 * Does nothing unless @s is a migrate_cold scheme with a floor_nid.  The
 * floor stays fresh for two of @s's application intervals and a second.
 * Each publication is traced (damos_promotion_floor), with the floor's
 * accesses per aggregation and the node's free memory.
 */
void damos_floor_publish(struct damon_ctx *c, struct damos *s)
{
	unsigned long apply_us, free_sz, rate;
	unsigned int nr_accesses_bp;
	struct damos_floor *f;
	struct sysinfo i;
	int nid = s->floor_nid;

	if (s->action != DAMOS_MIGRATE_COLD || nid < 0 ||
	    nid >= nr_node_ids || !damos_floors)
		return;
	si_meminfo_node(&i, nid);
	/* a 32-bit kernel's free highmem may pass 4 GiB */
	free_sz = min_t(u64, (u64)i.freeram << PAGE_SHIFT, ULONG_MAX);
	apply_us = max(s->apply_interval_us ? s->apply_interval_us :
		       c->attrs.aggr_interval, c->attrs.sample_interval);

	nr_accesses_bp = damos_floor_nr_accesses_bp(c, free_sz);
	rate = damos_floor_rate(nr_accesses_bp, c->attrs.aggr_interval);
	trace_damos_promotion_floor(nid, nr_accesses_bp, c->attrs.aggr_interval,
				    rate, free_sz);

	f = &damos_floors[nid];
	WRITE_ONCE(f->rate, rate);
	WRITE_ONCE(f->expires, jiffies + usecs_to_jiffies(2 * apply_us) + HZ);
	WRITE_ONCE(f->published, true);
}

/**
 * damos_floor_admits() - Whether a scheme may take a region.
 * @c:	The DAMON context of @s.
 * @r:	A region that @s's access pattern and quota admit.
 * @s:	A scheme about to be applied to @r.
 *
 * Return: false if @s is a migrate_hot scheme with a floor_nid whose node
 * has a fresh floor, @r's access rate is not above it, and not every sample
 * of @r's aggregation saw an access; true otherwise.
 */
bool damos_floor_admits(struct damon_ctx *c, struct damon_region *r,
			struct damos *s)
{
	struct damos_floor *f;
	int nid = s->floor_nid;

	if (s->action != DAMOS_MIGRATE_HOT || nid < 0 ||
	    nid >= nr_node_ids || !damos_floors)
		return true;
	f = &damos_floors[nid];
	if (!READ_ONCE(f->published) ||
	    time_after(jiffies, READ_ONCE(f->expires)))
		return true;
	if (r->nr_accesses_bp / 10000 >= damon_max_nr_accesses(&c->attrs))
		return true;
	return damos_floor_rate(r->nr_accesses_bp, c->attrs.aggr_interval) >
		READ_ONCE(f->rate);
}

#ifdef CONFIG_DAMON_KUNIT_TEST
#include "tests/promotion_floor-kunit.h"
#endif
