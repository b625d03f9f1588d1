// SPDX-License-Identifier: GPL-2.0
/*
 * Clear a contiguous run of pages with one string operation.
 *
 * clear_page() clears 4 KiB per call; for huge folios that means hundreds
 * or hundreds of thousands of short string operations.  With ERMS, one
 * REP STOSB over the whole run lets the CPU's fast-string microcode work on
 * the full length (it can avoid read-for-ownership of the destination
 * lines, which a 4 KiB store cannot amortise).
 *
 * clear_pages_nocache() is for pages that will not be read soon, such as
 * most of a 1 GiB page: with CLZERO (AMD) it zeroes line by line without
 * reading the lines and without filling the caches with them.
 */
#include <linux/export.h>
#include <linux/kmsan-checks.h>
#include <linux/mm.h>
#include <linux/cpufeature.h>

/**
 * clear_pages() - zero contiguous pages in the kernel's direct map
 * @addr: kernel virtual address of the first page, page aligned
 * @npages: number of pages
 *
 * One REP STOSB over @npages pages where the CPU has ERMS, clear_page()
 * per page otherwise.  REP STOSB can be interrupted; it is not a
 * rescheduling point, so callers bound @npages to keep latency in check
 * (see folio_zero_user()).
 */
void clear_pages(void *addr, unsigned int npages)
{
	unsigned long len = (unsigned long)npages << PAGE_SHIFT;
	unsigned int i;

	if (static_cpu_has(X86_FEATURE_ERMS)) {
		void *dst = addr;

		kmsan_unpoison_memory(addr, len);
		asm volatile("rep stosb"
			     : "+D" (dst), "+c" (len)
			     : "a" (0)
			     : "memory");
		return;
	}
	for (i = 0; i < npages; i++)
		clear_page(addr + ((unsigned long)i << PAGE_SHIFT));
}
EXPORT_SYMBOL_GPL(clear_pages);

/* CLZERO [rAX]: 0f 01 fc, spelled out for assemblers that lack it */
#define CLZERO_RAX	".byte 0x0f, 0x01, 0xfc"

/**
 * clear_pages_nocache() - zero contiguous pages without filling the cache
 * @addr: kernel virtual address of the first page, page aligned
 * @npages: number of pages
 *
 * For pages that will not be read soon.  Where the CPU has CLZERO, each
 * cache line of the range is zeroed with CLZERO, which writes the line
 * without reading it and without keeping it in the caches; an SFENCE then
 * orders these weakly ordered stores before any later store (e.g. the one
 * that makes the page visible to user space).  Elsewhere clear_pages().
 * Not a rescheduling point either: callers bound @npages.
 */
void clear_pages_nocache(void *addr, unsigned int npages)
{
	unsigned long len = (unsigned long)npages << PAGE_SHIFT;
	unsigned int line = boot_cpu_data.x86_clflush_size;
	void *p;

	if (!static_cpu_has(X86_FEATURE_CLZERO) || !line) {
		clear_pages(addr, npages);
		return;
	}
	kmsan_unpoison_memory(addr, len);
	for (p = addr; p < addr + len; p += line)
		asm volatile(CLZERO_RAX : : "a" (p) : "memory");
	asm volatile("sfence" : : : "memory");
}
EXPORT_SYMBOL_GPL(clear_pages_nocache);
