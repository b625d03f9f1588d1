// SPDX-License-Identifier: GPL-2.0
/*
 * Clear a contiguous run of pages with one string operation.
 *
 * clear_page() clears 4 KiB per call; for huge folios that means hundreds
 * or hundreds of thousands of short string operations.  With ERMS, one
 * REP STOSB over the whole run lets the CPU's fast-string microcode work on
 * the full length (it can avoid read-for-ownership of the destination
 * lines, which a 4 KiB store cannot amortise).
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
