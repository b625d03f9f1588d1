// SPDX-License-Identifier: GPL-2.0
/*
 * Zero huge folios for user space in contiguous, preemptible chunks.
 *
 * 6.12 cleared a huge folio 4 KiB at a time with cond_resched() between
 * pages, converging on the faulting subpage so that its cache lines are hot
 * when the fault returns.  Here the folio is cleared in contiguous chunks
 * (one string operation per chunk where the architecture has clear_pages())
 * with a rescheduling point between chunks, and a small window around the
 * faulting subpage is cleared last:
 *
 *   1. [window end, folio end) in chunks, from the far end towards the window;
 *   2. [folio start, window start) in chunks, towards the window;
 *   3. the window.
 *
 * Chunk size.  Under preempt=none and preempt=voluntary a chunk is a stretch
 * in which no other task can run on this CPU, so it is bounded to keep a
 * waiting task's wakeup latency within about 1 ms.  The bound comes from a
 * measurement the kernel makes at boot (late_initcall): it clears 64 MiB of
 * 2 MiB folios once, to have them faulted in on the host of a virtual
 * machine and to push them out of the caches, then times a second clear of
 * the first five, which the other 54 MiB have evicted since, and takes the
 * fastest.  That is the rate of a fault's clear, of memory not in the
 * cache (a cache-warm 2 MiB buffer clears up to three times faster: 60-99
 * vs 31-59 GB/s on an AMD EPYC host).  A chunk is the largest power-of-two
 * number of pages that clears within FOLIO_ZERO_BUDGET_NS (250 us) at that
 * rate, clamped to 64 KiB .. 32 MiB: a quarter of the 1 ms, leaving the
 * rest for a rate lower than the boot-time one (other CPUs' memory
 * traffic, a remote node) and for switching the waiting task in.  Until
 * the measurement, and if it cannot be made, chunks are 2 MiB.
 * Under preempt=full (and RT) a chunk can be preempted anywhere, so chunks
 * are larger (FOLIO_ZERO_CHUNK_PAGES_FULL, 32 MiB) and cond_resched() is
 * free.
 *
 * Gigantic folios (more than MAX_ORDER_NR_PAGES: 1 GiB hugetlb pages on
 * x86) are far larger than any cache, so most of what a cached clear
 * writes is evicted again before the task reads it.  Their pages outside
 * the window are cleared with clear_pages_nocache() where the architecture
 * has it (x86 with CLZERO): on an AMD EPYC host that runs within 10% of
 * memset()'s rate in chunks of 4 MiB and more (16 MiB clear in ~250 us),
 * while REP STOSB reaches that rate only beyond the last-level cache
 * (32 MiB), too long a stretch without preemption.  The window is still
 * cleared through the cache.  The boot-time measurement times
 * clear_pages_nocache() too: it is used only if it cleared faster than
 * clear_pages(), and its chunks are bounded by its own rate.
 */
#define pr_fmt(fmt) "folio_zero: " fmt

#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/init.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sizes.h>

/* without preemption: until measured, or if it cannot be */
#define FOLIO_ZERO_CHUNK_PAGES		(SZ_2M >> PAGE_SHIFT)
/* without preemption: the measured bound's range */
#define FOLIO_ZERO_CHUNK_PAGES_MIN	(SZ_64K >> PAGE_SHIFT)
#define FOLIO_ZERO_CHUNK_PAGES_MAX	(SZ_32M >> PAGE_SHIFT)
/* without preemption: how long one chunk may take at the measured rate */
#define FOLIO_ZERO_BUDGET_NS		(250 * NSEC_PER_USEC)
/*
 * The measurement: clear FOLIO_ZERO_CALIB_FOLIOS folios of
 * FOLIO_ZERO_CALIB_BYTES (more than a last-level cache), then time a second
 * clear of the first FOLIO_ZERO_CALIB_RUNS of them, and take the fastest.
 */
#define FOLIO_ZERO_CALIB_BYTES		SZ_2M
#define FOLIO_ZERO_CALIB_FOLIOS		(SZ_64M / FOLIO_ZERO_CALIB_BYTES)
#define FOLIO_ZERO_CALIB_RUNS		5
/* folios larger than this are cleared with clear_pages_nocache() */
#define FOLIO_ZERO_NOCACHE_PAGES	MAX_ORDER_NR_PAGES
/* preempt=full and RT */
#define FOLIO_ZERO_CHUNK_PAGES_FULL	(SZ_32M >> PAGE_SHIFT)
/* around the faulting subpage, cleared last: about an L2's worth */
#define FOLIO_ZERO_WINDOW_PAGES		(SZ_64K >> PAGE_SHIFT)

/**
 * struct folio_zero_plan - the order in which a folio's pages are cleared
 * @chunk: largest piece, in pages
 * @w0: first page of the window around the target, cleared last
 * @w1: one past the window's last page
 * @hi: phase 1 (pages from @w1 up): the next piece ends here
 * @lo: phase 2 (pages below @w0): the next piece starts here
 * @window_done: phase 3 done: set when the window is handed out, the last
 *	piece
 */
struct folio_zero_plan {
	unsigned int chunk;
	unsigned int w0;
	unsigned int w1;
	unsigned int hi;
	unsigned int lo;
	bool window_done;
};

/**
 * folio_zero_plan_init() - plan the clearing of a folio
 * @plan: the plan
 * @nr_pages: pages in the folio
 * @target: index of the faulting subpage
 * @chunk: largest piece, in pages (at least 1)
 * @window: pages around @target to clear last (at least 1)
 */
static void folio_zero_plan_init(struct folio_zero_plan *plan,
				 unsigned int nr_pages, unsigned int target,
				 unsigned int chunk, unsigned int window)
{
	window = min3(window, chunk, nr_pages);
	target = min(target, nr_pages - 1);
	plan->chunk = chunk;
	plan->w0 = min(rounddown(target, window), nr_pages - window);
	plan->w1 = plan->w0 + window;
	plan->hi = nr_pages;
	plan->lo = 0;
	plan->window_done = false;
}

/**
 * folio_zero_plan_next() - the next piece to clear
 * @plan: the plan
 * @start: first page of the piece
 * @nr: pages in the piece
 *
 * Return: false when every page has been handed out, exactly once.
 */
static bool folio_zero_plan_next(struct folio_zero_plan *plan,
				 unsigned int *start, unsigned int *nr)
{
	if (plan->hi > plan->w1) {
		*nr = min(plan->chunk, plan->hi - plan->w1);
		*start = plan->hi - *nr;
		plan->hi = *start;
		return true;
	}
	if (plan->lo < plan->w0) {
		*nr = min(plan->chunk, plan->w0 - plan->lo);
		*start = plan->lo;
		plan->lo += *nr;
		return true;
	}
	if (!plan->window_done) {
		*start = plan->w0;
		*nr = plan->w1 - plan->w0;
		plan->window_done = true;
		return true;
	}
	return false;
}

/**
 * folio_zero_pages() - clear contiguous pages of a folio
 * @folio: the folio
 * @base: user address the folio is mapped at
 * @start: first page
 * @nr: number of pages
 * @nocache: the pages will not be read soon: clear_pages_nocache() if the
 *	architecture has it
 */
static void folio_zero_pages(struct folio *folio, unsigned long base,
			     unsigned int start, unsigned int nr, bool nocache)
{
#if defined(clear_pages) && !defined(CONFIG_HIGHMEM)
	void *addr = page_address(folio_page(folio, start));

#ifdef clear_pages_nocache
	if (nocache) {
		clear_pages_nocache(addr, nr);
		return;
	}
#endif
	clear_pages(addr, nr);
#else
	for (; nr; nr--, start++)
		clear_user_highpage(folio_page(folio, start),
				    base + ((unsigned long)start << PAGE_SHIFT));
#endif
}

/*
 * Pages per chunk without preemption, of clear_pages() and of
 * clear_pages_nocache(): set once, by folio_zero_calibrate().
 */
static unsigned int folio_zero_chunk __read_mostly = FOLIO_ZERO_CHUNK_PAGES;
static unsigned int folio_zero_chunk_nocache __read_mostly =
	FOLIO_ZERO_CHUNK_PAGES;
/* clear_pages_nocache() for gigantic folios: measured faster at boot */
static bool folio_zero_nocache __read_mostly;

/**
 * folio_zero_chunk_for_rate() - chunk size for a measured clearing rate
 * @bytes: bytes cleared
 * @ns: nanoseconds it took
 *
 * The largest power-of-two number of pages that clears within
 * FOLIO_ZERO_BUDGET_NS at @bytes per @ns, clamped to
 * FOLIO_ZERO_CHUNK_PAGES_MIN .. FOLIO_ZERO_CHUNK_PAGES_MAX.  @ns of 0 (a
 * clock too coarse to see the clear) means "faster than measurable".
 *
 * Return: pages.
 */
static unsigned int folio_zero_chunk_for_rate(u64 bytes, u64 ns)
{
	u64 pages;

	/* keep bytes * FOLIO_ZERO_BUDGET_NS within 64 bits, the rate as it is */
	while (bytes > U32_MAX) {
		bytes >>= 1;
		ns >>= 1;
	}
	if (!ns)
		return FOLIO_ZERO_CHUNK_PAGES_MAX;
	pages = div64_u64(bytes * FOLIO_ZERO_BUDGET_NS, ns) >> PAGE_SHIFT;
	pages = clamp_t(u64, pages, FOLIO_ZERO_CHUNK_PAGES_MIN,
			FOLIO_ZERO_CHUNK_PAGES_MAX);
	return rounddown_pow_of_two(pages);
}

/**
 * folio_zero_chunk_pages() - largest piece cleared without a resched point
 * @nocache: for clear_pages_nocache() rather than clear_pages()
 *
 * Return: pages, depending on the preemption model in force: the measured
 * bound of the clear used under preempt=none and preempt=voluntary.
 */
static unsigned int folio_zero_chunk_pages(bool nocache)
{
	if (preempt_model_full() || preempt_model_rt())
		return FOLIO_ZERO_CHUNK_PAGES_FULL;
	return nocache ? READ_ONCE(folio_zero_chunk_nocache) :
			 READ_ONCE(folio_zero_chunk);
}

#if defined(CONFIG_TRANSPARENT_HUGEPAGE) || defined(CONFIG_HUGETLBFS)
/**
 * folio_zero_user - Zero a folio which will be mapped to userspace.
 * @folio: The folio to zero.
 * @addr_hint: The address that will be accessed, or the folio's base address
 *	if unclear; the pages around it are cleared last.
 *
 * Clears in contiguous chunks with a rescheduling point between chunks; see
 * the comment at the top of this file for the order, the chunk size and
 * when the cache is bypassed.
 */
void folio_zero_user(struct folio *folio, unsigned long addr_hint)
{
	unsigned long base = ALIGN_DOWN(addr_hint, folio_size(folio));
	bool nocache = folio_nr_pages(folio) > FOLIO_ZERO_NOCACHE_PAGES &&
		       READ_ONCE(folio_zero_nocache);
	struct folio_zero_plan plan;
	unsigned int start, nr;

	might_sleep();
	folio_zero_plan_init(&plan, folio_nr_pages(folio),
			     (addr_hint - base) >> PAGE_SHIFT,
			     folio_zero_chunk_pages(nocache),
			     FOLIO_ZERO_WINDOW_PAGES);
	while (folio_zero_plan_next(&plan, &start, &nr)) {
		cond_resched();
		/* the window, last, through the cache */
		folio_zero_pages(folio, base, start, nr,
				 nocache && !plan.window_done);
	}
}

/**
 * folio_zero_time() - time the clear of a folio, the fastest of several
 * @folios: the folios, cleared once already
 * @n: how many to clear
 * @nocache: with clear_pages_nocache()
 *
 * Return: nanoseconds of the fastest clear (the others may have been
 * interrupted).
 */
static u64 __init folio_zero_time(struct folio **folios, unsigned int n,
				  bool nocache)
{
	u64 best = U64_MAX, t;
	unsigned int i;

	for (i = 0; i < n; i++) {
		preempt_disable();
		t = ktime_get_ns();
		folio_zero_pages(folios[i], 0, 0, folio_nr_pages(folios[i]),
				 nocache);
		t = ktime_get_ns() - t;
		preempt_enable();
		best = min(best, t);
	}
	return best;
}

/**
 * folio_zero_calibrate() - measure the clearing rate, bound the chunk by it
 *
 * Clears FOLIO_ZERO_CALIB_FOLIOS folios of FOLIO_ZERO_CALIB_BYTES with
 * folio_zero_pages(), the fault path's clear, then clears the first
 * FOLIO_ZERO_CALIB_RUNS of them again, timed: by then the others have
 * pushed them out of the cache, as the pages a fault clears usually are.
 * The fastest of these (the others may have been interrupted) sets the
 * chunk used without preemption.  Then the next FOLIO_ZERO_CALIB_RUNS,
 * still out of the cache, are timed the same way with
 * clear_pages_nocache(): if that is faster, gigantic folios are cleared
 * with it, in chunks sized by its rate.  With fewer folios than that to be
 * had, both chunks stay FOLIO_ZERO_CHUNK_PAGES and gigantic folios are
 * cleared as the others.
 *
 * Return: 0.
 */
static int __init folio_zero_calibrate(void)
{
	unsigned int order = get_order(FOLIO_ZERO_CALIB_BYTES), chunk, n;
	u64 bytes = PAGE_SIZE << order, best = U64_MAX, best_nc = U64_MAX;
	struct folio *folios[FOLIO_ZERO_CALIB_FOLIOS];

	BUILD_BUG_ON(2 * FOLIO_ZERO_CALIB_RUNS > FOLIO_ZERO_CALIB_FOLIOS);
	for (n = 0; n < FOLIO_ZERO_CALIB_FOLIOS; n++) {
		folios[n] = folio_alloc(GFP_KERNEL | __GFP_NOWARN, order);
		if (!folios[n])
			break;
		folio_zero_pages(folios[n], 0, 0, folio_nr_pages(folios[n]),
				 false);
		cond_resched();
	}
	if (n == FOLIO_ZERO_CALIB_FOLIOS) {
		best = folio_zero_time(folios, FOLIO_ZERO_CALIB_RUNS, false);
		best_nc = folio_zero_time(folios + FOLIO_ZERO_CALIB_RUNS,
					  FOLIO_ZERO_CALIB_RUNS, true);
	}
	while (n)
		folio_put(folios[--n]);
	if (best == U64_MAX) {
		pr_info("no %d MiB to measure with: %lu KiB chunks without preemption\n",
			SZ_64M >> 20, folio_zero_chunk * PAGE_SIZE >> 10);
		return 0;
	}

	chunk = folio_zero_chunk_for_rate(bytes, best);
	WRITE_ONCE(folio_zero_chunk, chunk);
	pr_info("clear %llu MB/s (best of %u x %llu KiB, cold): %lu KiB chunks without preemption (%llu us each), %lu KiB with\n",
		best ? div64_u64(bytes * NSEC_PER_USEC, best) : 0,
		FOLIO_ZERO_CALIB_RUNS, bytes >> 10, chunk * PAGE_SIZE >> 10,
		div_u64(div64_u64(best * chunk, bytes >> PAGE_SHIFT),
			NSEC_PER_USEC),
		FOLIO_ZERO_CHUNK_PAGES_FULL * PAGE_SIZE >> 10);

	chunk = folio_zero_chunk_for_rate(bytes, best_nc);
	WRITE_ONCE(folio_zero_chunk_nocache, chunk);
	WRITE_ONCE(folio_zero_nocache, best_nc < best);
	if (best_nc < best)
		pr_info("clear_pages_nocache %llu MB/s (the same way): gigantic folios with it, %lu KiB chunks without preemption (%llu us each)\n",
			best_nc ? div64_u64(bytes * NSEC_PER_USEC, best_nc) : 0,
			chunk * PAGE_SIZE >> 10,
			div_u64(div64_u64(best_nc * chunk, bytes >> PAGE_SHIFT),
				NSEC_PER_USEC));
	else
		pr_info("clear_pages_nocache %llu MB/s (the same way): not faster, gigantic folios cleared as the others\n",
			best_nc ? div64_u64(bytes * NSEC_PER_USEC, best_nc) : 0);
	return 0;
}
late_initcall(folio_zero_calibrate);
#endif

#ifdef CONFIG_FOLIO_ZERO_KUNIT_TEST
#include "tests/folio_zero-kunit.h"
#endif
