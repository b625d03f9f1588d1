// SPDX-License-Identifier: GPL-2.0
/*
 * Zero huge folios for user space in contiguous, preemptible chunks.
 *
 * A huge folio is cleared in contiguous chunks (one string operation per
 * chunk where the architecture has clear_pages()) with a rescheduling point
 * between chunks, and a small window around the faulting subpage is cleared
 * last, so that its cache lines are hot when the fault returns:
 *
 *   1. [window end, folio end) in chunks, from the far end towards the window;
 *   2. [folio start, window start) in chunks, towards the window;
 *   3. the window.
 *
 * Chunk size.  Under preempt=none and preempt=voluntary a chunk is a stretch
 * in which no other task can run on this CPU.  It is a fixed 1 MiB
 * (FOLIO_ZERO_CHUNK_PAGES), long enough for a string clear to run at its
 * full rate and short enough to clear within 1 ms at 1 GB/s, far below
 * what a CPU clears even with a busy memory bus, a remote node or a
 * hypervisor's overhead.
 * Under preempt=full (and RT) a chunk can be preempted anywhere, so chunks
 * are larger (FOLIO_ZERO_CHUNK_PAGES_FULL, 32 MiB) and cond_resched() is
 * free.
 *
 * Gigantic folios (more than MAX_ORDER_NR_PAGES: 1 GiB hugetlb pages on
 * x86) are far larger than any cache, so most of what a cached clear
 * writes is evicted again before the task reads it.  Their pages outside
 * the window are cleared with clear_pages_nocache() where the architecture
 * has it, in the same chunks.  The window is still cleared through the
 * cache.
 */

#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sizes.h>

/* without preemption */
#define FOLIO_ZERO_CHUNK_PAGES		(SZ_1M >> PAGE_SHIFT)
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

/**
 * folio_zero_chunk_pages() - largest piece cleared without a resched point
 *
 * Return: pages, depending on the preemption model in force.
 */
static unsigned int folio_zero_chunk_pages(void)
{
	if (preempt_model_full() || preempt_model_rt())
		return FOLIO_ZERO_CHUNK_PAGES_FULL;
	return FOLIO_ZERO_CHUNK_PAGES;
}

/**
 * folio_zero_use_nocache() - clear this folio with clear_pages_nocache()?
 * @folio: the folio
 *
 * Return: true for a gigantic folio where the architecture has
 * clear_pages_nocache().
 */
static bool folio_zero_use_nocache(struct folio *folio)
{
#if defined(clear_pages_nocache) && !defined(CONFIG_HIGHMEM)
	return folio_nr_pages(folio) > FOLIO_ZERO_NOCACHE_PAGES;
#else
	return false;
#endif
}

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
	bool nocache = folio_zero_use_nocache(folio);
	struct folio_zero_plan plan;
	unsigned int start, nr;

	might_sleep();
	folio_zero_plan_init(&plan, folio_nr_pages(folio),
			     (addr_hint - base) >> PAGE_SHIFT,
			     folio_zero_chunk_pages(),
			     FOLIO_ZERO_WINDOW_PAGES);
	while (folio_zero_plan_next(&plan, &start, &nr)) {
		cond_resched();
		/* the window, last, through the cache */
		folio_zero_pages(folio, base, start, nr,
				 nocache && !plan.window_done);
	}
}

#ifdef CONFIG_FOLIO_ZERO_KUNIT_TEST
#include "tests/folio_zero-kunit.h"
#endif
