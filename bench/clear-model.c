// SPDX-License-Identifier: GPL-2.0
/*
 * clear-model: a host userspace model of huge page clearing.
 *
 * This is not the kernel.  It runs the loops of folio_zero_user() in user
 * space, on hugetlb-backed memory that is already faulted in, and measures
 * how fast each one zeroes a pool of huge pages:
 *
 *   page_php     6.12's page-at-a-time clear in process_huge_page() order
 *                (mm/memory.c: the subpages farthest from the target first,
 *                then left-right-left-right towards it), one 4 KiB
 *                "rep stosb" per subpage (clear_page_erms,
 *                arch/x86/lib/clear_page_64.S) and a resched point before
 *                each subpage.  6.12 uses it for folios of at most
 *                MAX_ORDER_NR_PAGES (1024) pages: 2 MiB pages.
 *   page_linear  6.12's clear_gigantic_page(): the same per-subpage clear
 *                in ascending order, target ignored.  6.12 uses it for
 *                larger folios: 1 GiB pages.
 *   chunk_<N>    the series' loop (mm/folio_zero.c, folio_zero_plan_*):
 *                "rep stosb" over up to N bytes at a time (clear_pages(),
 *                arch/x86/lib/clear_pages_64.c) with a resched point
 *                between chunks.  A window of -w bytes around the target,
 *                aligned down to its size, is cleared last; before it the
 *                region after the window, in chunks from the far end down
 *                towards it, then the region before it, upwards.
 *   chunkup_<N>  the same, but the region after the window upwards, from
 *                the window to the end: shows what the downward walk costs.
 *   chunknt_<N>  the series' loop for gigantic folios (more than
 *                MAX_ORDER_NR_PAGES pages: 1 GiB pages): the same order,
 *                but the pieces outside the window are cleared with
 *                clear_pages_nocache() (arch/x86/lib/clear_pages_64.c: a
 *                CLZERO per cache line, then an SFENCE), in chunks of up to
 *                N bytes (-C); the window, last, still with "rep stosb".
 *                Only on a CPU with CLZERO (AMD).
 *   stosb_all    one "rep stosb" over the whole huge page.
 *   clzero_all   clear_pages_nocache() over the whole huge page.
 *   memset       glibc memset() over the whole huge page: the ceiling.
 *
 * The kernel sizes its chunk (without preemption) at boot, in
 * folio_zero_calibrate(): it clears 32 pieces of 2 MiB, then times the
 * first 5 again (cold by then) and takes the fastest as the rate; the
 * chunk is the largest power of two of pages that clears in 250 us at that
 * rate, clamped to 64 KiB..32 MiB.  The model does the same on the first
 * 64 MiB of its pool (RESULT <size>_calib_mbps,
 * <size>_kchunk_kib), makes sure that chunk size is among the chunked
 * loop's, and reports it as kchunk (the chunk a preempt=none/voluntary
 * kernel would use here) next to fchunk, the 32 MiB of preempt=full.
 * With CLZERO it then times the next 5 pieces (5..9, cold too) with
 * clear_pages_nocache(), as folio_zero_calibrate() does for the chunk of
 * gigantic folios, sizes ntkchunk from that rate the same way
 * (<size>_ntcalib_mbps, <size>_ntkchunk_kib) and makes sure it is among
 * the chunknt sizes.  ntkchunk is the kernel's method for 1 GiB pages; for
 * 2 MiB pages, which the kernel clears with kchunk and "rep stosb" only,
 * it is reported as information (a chunk larger than the page is the
 * whole page).
 *
 * "page" in the ratios is the order 6.12 uses for that huge page size.
 *
 * The resched point stands in for cond_resched(): a relaxed load of a flag
 * that is never set and a branch to sched_yield() that is never taken,
 * about what a cond_resched() that finds nothing to do costs.
 *
 * Each repetition runs every method once, in a rotated order, and times
 * one pass over the whole pool (several passes if the pool is small), so
 * other load on the machine hits all methods alike.  Output: RESULT
 * key=value lines and a table.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT		26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB		(21 << MAP_HUGE_SHIFT)
#endif
#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB		(30 << MAP_HUGE_SHIFT)
#endif

#define PAGE_SIZE		4096UL
#define SZ_1K			1024UL
#define SZ_1M			(1024 * SZ_1K)
#define SZ_2M			(2 * SZ_1M)
#define SZ_1G			(1024 * SZ_1M)
/* x86-64, 6.12: MAX_PAGE_ORDER 10 */
#define MAX_ORDER_NR_PAGES	1024UL
/* passes over a small pool until a repetition has cleared this much */
#define MIN_REP_BYTES		(256 * SZ_1M)
#define MAX_METHODS		64
#define DEFAULT_CHUNKS	"4K,16K,64K,256K,1M,2M,4M,8M,16M,32M,64M,128M,256M,512M,1G"
#define DEFAULT_NT_CHUNKS	"64K,256K,1M,4M,16M"
/* mm/folio_zero.c: the boot-time measurement and the bound it sets */
#define CALIB_BYTES		SZ_2M
#define CALIB_RUNS		5
/* the pieces timed with clear_pages_nocache(): the next CALIB_RUNS */
#define CALIB_NT_FIRST		CALIB_RUNS
#define CALIB_FOLIOS		32
#define BUDGET_NS		250000UL
#define KCHUNK_MIN		(64 * SZ_1K)
#define KCHUNK_MAX		(32 * SZ_1M)
#define FCHUNK			(32 * SZ_1M)

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define unlikely(x)		__builtin_expect(!!(x), 0)

enum method_kind {
	M_PAGE_PHP,
	M_PAGE_LINEAR,
	M_CHUNK,
	M_CHUNK_UP,
	M_CHUNK_NT,
	M_STOSB_ALL,
	M_CLZERO_ALL,
	M_MEMSET,
};

struct method {
	enum method_kind kind;
	unsigned long chunk;		/* bytes, M_CHUNK* */
	char name[32];
	char desc[64];
	unsigned long points;		/* resched points per huge page */
	double *gbps;			/* one per repetition */
	double median, lo, hi;
};

enum target_mode { T_FIRST, T_MIDDLE, T_LAST, T_RANDOM };

static const char * const target_names[] = {
	[T_FIRST] = "first",
	[T_MIDDLE] = "middle",
	[T_LAST] = "last",
	[T_RANDOM] = "random",
};

static unsigned long hpage_size = SZ_2M;
static unsigned long pool_pages = 64;
static unsigned int reps = 11;
/* mm/folio_zero.c: FOLIO_ZERO_WINDOW_PAGES */
static unsigned long window_pages = 16;
static enum target_mode target_mode = T_FIRST;
static const char *chunk_list = DEFAULT_CHUNKS;
static const char *nt_chunk_list = DEFAULT_NT_CHUNKS;
/* CPUID 0x80000008 EBX bit 0 (X86_FEATURE_CLZERO), unless -Z */
static bool have_clzero;
static bool no_clzero;
/* boot_cpu_data.x86_clflush_size: CPUID 1 EBX[15:8] x 8 */
static unsigned long clzero_line;

static struct method methods[MAX_METHODS];
static unsigned int nr_methods;
/* the kernel's measurement, as folio_zero_calibrate() makes it */
static double calib_ns, calib_warm_ns, ntcalib_ns;
static unsigned long kchunk, ntkchunk;

/* cond_resched() stand-in: never set, so the branch is never taken */
static int need_resched_flag;

static inline unsigned long min_ul(unsigned long a, unsigned long b)
{
	return a < b ? a : b;
}

static inline void resched_point(void)
{
	if (unlikely(__atomic_load_n(&need_resched_flag, __ATOMIC_RELAXED)))
		sched_yield();
}

static inline void rep_stosb(void *dst, unsigned long len)
{
	asm volatile("rep stosb"
		     : "+D" (dst), "+c" (len)
		     : "a" (0)
		     : "memory");
}

/*
 * arch/x86/lib/clear_pages_64.c, clear_pages_nocache(): CLZERO over every
 * cache line (it zeroes the line containing rAX), then one SFENCE to order
 * these weakly ordered stores before later ones; "rep stosb" (clear_pages())
 * without CLZERO.
 */
static void clear_pages_nocache(void *addr, unsigned long npages)
{
	unsigned long len = npages * PAGE_SIZE;
	char *p, *end = (char *)addr + len;

	if (!have_clzero || !clzero_line) {
		rep_stosb(addr, len);
		return;
	}
	for (p = addr; p < end; p += clzero_line)
		asm volatile("clzero" : : "a" (p) : "memory");
	asm volatile("sfence" : : : "memory");
}

/* arch/x86/lib/clear_page_64.S: clear_page_erms, a call per subpage */
void clear_page_erms(void *page);
asm(".text\n"
	".globl clear_page_erms\n"
	".type clear_page_erms, @function\n"
	"clear_page_erms:\n"
	"\tmovl $4096, %ecx\n"
	"\txorl %eax, %eax\n"
	"\trep stosb\n"
	"\tret\n"
	".size clear_page_erms, . - clear_page_erms\n");

static int clear_subpage(char *addr, unsigned long idx,
			 void *arg)
{
	(void)arg;
	clear_page_erms(addr + idx * PAGE_SIZE);
	return 0;
}

/*
 * 6.12 process_huge_page(), mm/memory.c, with the same arithmetic and
 * order; the subpage is given as (base address, index).
 */
static inline int
process_huge_page(char *addr, unsigned long nr, unsigned long n,
		  int (*process_subpage)(char *addr, unsigned long idx,
					 void *arg),
		  void *arg)
{
	long i, base, l;
	int ret;

	if (2 * n <= nr) {
		/* If target subpage in first half of huge page */
		base = 0;
		l = n;
		/* Process subpages at the end of huge page */
		for (i = nr - 1; i >= (long)(2 * n); i--) {
			resched_point();
			ret = process_subpage(addr, i, arg);
			if (ret)
				return ret;
		}
	} else {
		/* If target subpage in second half of huge page */
		base = nr - 2 * (nr - n);
		l = nr - n;
		/* Process subpages at the begin of huge page */
		for (i = 0; i < base; i++) {
			resched_point();
			ret = process_subpage(addr, i, arg);
			if (ret)
				return ret;
		}
	}
	/*
	 * Process remaining subpages in left-right-left-right pattern
	 * towards the target subpage
	 */
	for (i = 0; i < l; i++) {
		long left_idx = base + i;
		long right_idx = base + 2 * l - 1 - i;

		resched_point();
		ret = process_subpage(addr, left_idx, arg);
		if (ret)
			return ret;
		resched_point();
		ret = process_subpage(addr, right_idx, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* 6.12 clear_gigantic_page(), mm/memory.c: ascending, target ignored */
static inline void
clear_gigantic_page(char *addr, unsigned long nr,
		    int (*process_subpage)(char *addr, unsigned long idx,
					   void *arg),
		    void *arg)
{
	unsigned long i;

	for (i = 0; i < nr; i++) {
		resched_point();
		process_subpage(addr, i, arg);
	}
}

static void clear_range(char *addr, unsigned long start, unsigned long end,
			void *arg)
{
	(void)arg;
	rep_stosb(addr + start * PAGE_SIZE, (end - start) * PAGE_SIZE);
}

static void clear_range_nocache(char *addr, unsigned long start,
				unsigned long end, void *arg)
{
	(void)arg;
	clear_pages_nocache(addr + start * PAGE_SIZE, end - start);
}

/* mm/folio_zero.c, folio_zero_plan_init(): the window cleared last */
static void chunk_window(unsigned long nr, unsigned long n,
			 unsigned long chunk, unsigned long *w0,
			 unsigned long *w1)
{
	unsigned long win = min_ul(min_ul(window_pages, chunk), nr);

	*w0 = min_ul(n / win * win, nr - win);
	*w1 = *w0 + win;
}

/*
 * The series' loop, mm/folio_zero.c: [w1, nr) in chunks from the far end
 * down (or, @up, from w1 up), [0, w0) in chunks upwards, each with
 * @process_range, then the window [w0, w1) around the target with
 * @process_window.  A resched point before each piece.
 */
static inline void
clear_huge_chunked(char *addr, unsigned long nr, unsigned long n,
		   unsigned long chunk, bool up,
		   void (*process_range)(char *addr, unsigned long start,
					 unsigned long end, void *arg),
		   void (*process_window)(char *addr, unsigned long start,
					  unsigned long end, void *arg),
		   void *arg)
{
	unsigned long w0, w1, lo, hi, k;

	chunk_window(nr, n, chunk, &w0, &w1);
	if (up) {
		for (lo = w1; lo < nr; lo += k) {
			k = min_ul(chunk, nr - lo);
			resched_point();
			process_range(addr, lo, lo + k, arg);
		}
	} else {
		for (hi = nr; hi > w1; hi -= k) {
			k = min_ul(chunk, hi - w1);
			resched_point();
			process_range(addr, hi - k, hi, arg);
		}
	}
	for (lo = 0; lo < w0; lo += k) {
		k = min_ul(chunk, w0 - lo);
		resched_point();
		process_range(addr, lo, lo + k, arg);
	}
	resched_point();
	process_window(addr, w0, w1, arg);
}

static unsigned long nr_chunks(unsigned long pages, unsigned long chunk)
{
	return (pages + chunk - 1) / chunk;
}

static unsigned long chunked_points(unsigned long nr, unsigned long n,
				    unsigned long chunk)
{
	unsigned long w0, w1;

	chunk_window(nr, n, chunk, &w0, &w1);
	return nr_chunks(nr - w1, chunk) + nr_chunks(w0, chunk) + 1;
}

/* Zero one huge page at @addr, target subpage @n, with method @m. */
static void clear_huge(const struct method *m, char *addr, unsigned long n)
{
	unsigned long nr = hpage_size / PAGE_SIZE;

	switch (m->kind) {
	case M_PAGE_PHP:
		process_huge_page(addr, nr, n, clear_subpage, NULL);
		break;
	case M_PAGE_LINEAR:
		clear_gigantic_page(addr, nr, clear_subpage, NULL);
		break;
	case M_CHUNK:
	case M_CHUNK_UP:
		clear_huge_chunked(addr, nr, n, m->chunk / PAGE_SIZE,
				   m->kind == M_CHUNK_UP, clear_range,
				   clear_range, NULL);
		break;
	case M_CHUNK_NT:
		/* folio_zero_user(): the window, last, through the cache */
		clear_huge_chunked(addr, nr, n, m->chunk / PAGE_SIZE, false,
				   clear_range_nocache, clear_range, NULL);
		break;
	case M_STOSB_ALL:
		rep_stosb(addr, hpage_size);
		break;
	case M_CLZERO_ALL:
		clear_pages_nocache(addr, nr);
		break;
	case M_MEMSET:
		memset(addr, 0, hpage_size);
		break;
	}
}

/* ---- self-test of the orders: every subpage once, target last ---- */

struct visit {
	unsigned char *seen;
	unsigned long count, last;
	bool twice;
	/* chunked loops: the window pieces, and whether any piece followed */
	unsigned long windows, win0, win1;
	bool after_window;
};

static int visit_subpage(char *addr, unsigned long idx,
			 void *arg)
{
	struct visit *v = arg;

	(void)addr;
	if (v->seen[idx])
		v->twice = true;
	v->seen[idx] = 1;
	v->count++;
	v->last = idx;
	return 0;
}

static void visit_range(char *addr, unsigned long start, unsigned long end,
			void *arg)
{
	struct visit *v = arg;
	unsigned long i;

	if (v->windows)
		v->after_window = true;
	for (i = start; i < end; i++)
		visit_subpage(addr, i, arg);
}

static void visit_window(char *addr, unsigned long start, unsigned long end,
			 void *arg)
{
	struct visit *v = arg;
	unsigned long i;

	if (v->windows)
		v->after_window = true;
	v->windows++;
	v->win0 = start;
	v->win1 = end;
	for (i = start; i < end; i++)
		visit_subpage(addr, i, arg);
}

static bool is_chunked(enum method_kind kind)
{
	return kind == M_CHUNK || kind == M_CHUNK_UP || kind == M_CHUNK_NT;
}

static bool check_order(const struct method *m, unsigned long nr,
			unsigned long n)
{
	struct visit v = { .seen = calloc(nr, 1) };
	bool ok;

	if (!v.seen) {
		perror("calloc");
		exit(1);
	}
	switch (m->kind) {
	case M_PAGE_PHP:
		process_huge_page(NULL, nr, n, visit_subpage, &v);
		break;
	case M_PAGE_LINEAR:
		clear_gigantic_page(NULL, nr, visit_subpage, &v);
		break;
	case M_CHUNK:
	case M_CHUNK_UP:
	case M_CHUNK_NT:
		clear_huge_chunked(NULL, nr, n, m->chunk / PAGE_SIZE,
				   m->kind == M_CHUNK_UP, visit_range,
				   visit_window, &v);
		break;
	default:
		free(v.seen);
		return true;
	}
	ok = v.count == nr && !v.twice;
	/* page_linear ignores the target, as clear_gigantic_page() does */
	if (m->kind == M_PAGE_PHP && v.last != n)
		ok = false;
	if (is_chunked(m->kind)) {
		unsigned long w0, w1;

		/* the window: one piece, the last, [w0, w1) around the target */
		chunk_window(nr, n, m->chunk / PAGE_SIZE, &w0, &w1);
		if (v.last != w1 - 1 || n < w0 || n >= w1 || v.windows != 1 ||
		    v.after_window || v.win0 != w0 || v.win1 != w1)
			ok = false;
	}
	if (!ok)
		fprintf(stderr,
			"clear-model: %s order wrong: nr=%lu target=%lu: %lu visits, last %lu, %lu window piece(s) [%lu, %lu)%s%s\n",
			m->name, nr, n, v.count, v.last, v.windows, v.win0,
			v.win1, v.after_window ? ", not last" : "",
			v.twice ? ", a subpage twice" : "");
	free(v.seen);
	return ok;
}

/* every byte of [p, p + len) is @c */
static bool is_filled(const char *p, unsigned long len, unsigned char c)
{
	const unsigned long *w = (const unsigned long *)p;
	unsigned long i, pattern = c * 0x0101010101010101UL;

	for (i = 0; i < len / sizeof(*w); i++)
		if (w[i] != pattern)
			return false;
	return true;
}

static bool is_zero(const char *p, unsigned long len)
{
	return is_filled(p, len, 0);
}

/*
 * Every order on a few sizes and targets, then a real clear of memory: a
 * huge page (the second, when the pool has three) filled with a pattern
 * must be all zero after the clear (after the SFENCE, for clzero), and
 * GUARD_BYTES either side of it, where the pool has them, untouched.
 */
#define GUARD_BYTES		(64 * SZ_1K)
static bool self_test(char *pool)
{
	static const unsigned long sizes[] = { 1, 2, 7, 8, 512, 4096 };
	unsigned long nr = hpage_size / PAGE_SIZE;
	char *page = pool + (pool_pages > 2 ? hpage_size : 0);
	char *end = pool + pool_pages * hpage_size;
	unsigned long before = min_ul(page - pool, GUARD_BYTES);
	unsigned long after = min_ul(end - page - hpage_size, GUARD_BYTES);
	unsigned int i, j;
	bool ok = true;

	for (i = 0; i < nr_methods; i++) {
		for (j = 0; j < ARRAY_SIZE(sizes); j++) {
			unsigned long s = sizes[j];

			ok &= check_order(&methods[i], s, 0);
			ok &= check_order(&methods[i], s, s / 2);
			ok &= check_order(&methods[i], s, s - 1);
			ok &= check_order(&methods[i], s, s / 3);
		}
		ok &= check_order(&methods[i], nr, 0);
		ok &= check_order(&methods[i], nr, nr / 2 + 1);

		memset(page - before, 0xa5, before + hpage_size + after);
		clear_huge(&methods[i], page, nr / 3);
		if (!is_zero(page, hpage_size)) {
			fprintf(stderr, "clear-model: %s left bytes non-zero\n",
				methods[i].name);
			ok = false;
		}
		if (!is_filled(page - before, before, 0xa5) ||
		    !is_filled(page + hpage_size, after, 0xa5)) {
			fprintf(stderr, "clear-model: %s wrote outside the huge page\n",
				methods[i].name);
			ok = false;
		}
	}
	return ok;
}

/* ---- setup ---- */

static unsigned long parse_size(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	switch (*end) {
	case 'k': case 'K':
		v *= SZ_1K;
		end++;
		break;
	case 'm': case 'M':
		v *= SZ_1M;
		end++;
		break;
	case 'g': case 'G':
		v *= SZ_1G;
		end++;
		break;
	}
	if (*end && *end != ',')
		return 0;
	return v;
}

static void size_name(char *buf, size_t len, unsigned long bytes)
{
	if (bytes >= SZ_1G && !(bytes % SZ_1G))
		snprintf(buf, len, "%luG", bytes / SZ_1G);
	else if (bytes >= SZ_1M && !(bytes % SZ_1M))
		snprintf(buf, len, "%luM", bytes / SZ_1M);
	else
		snprintf(buf, len, "%luK", bytes / SZ_1K);
}

static struct method *add_method(enum method_kind kind, const char *name,
				 const char *desc)
{
	struct method *m;

	if (nr_methods == MAX_METHODS) {
		fprintf(stderr, "clear-model: too many methods\n");
		exit(2);
	}
	m = &methods[nr_methods++];
	m->kind = kind;
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->desc, sizeof(m->desc), "%s", desc);
	m->gbps = calloc(reps, sizeof(*m->gbps));
	if (!m->gbps) {
		perror("calloc");
		exit(1);
	}
	return m;
}

/**
 * parse_chunks() - the chunk sizes of a list, up to the huge page size
 * @list: comma-separated sizes ("64K,1M,...")
 * @chunks: MAX_METHODS slots
 * @extra: a size to add if missing and not larger than the huge page
 *	(the calibrated one), 0 for none
 *
 * Return: how many sizes are in @chunks.
 */
static unsigned int parse_chunks(const char *list, unsigned long *chunks,
				 unsigned long extra)
{
	unsigned int nr_chunk_sizes = 0, i;
	const char *s = list;

	while (*s) {
		unsigned long chunk = parse_size(s);

		if (!chunk || chunk % PAGE_SIZE) {
			fprintf(stderr, "clear-model: bad chunk size in '%s'\n",
				s);
			exit(2);
		}
		if (chunk <= hpage_size && nr_chunk_sizes < MAX_METHODS)
			chunks[nr_chunk_sizes++] = chunk;
		s = strchrnul(s, ',');
		if (*s)
			s++;
	}
	for (i = 0; i < nr_chunk_sizes && chunks[i] != extra; i++)
		;
	if (i == nr_chunk_sizes && extra && extra <= hpage_size &&
	    nr_chunk_sizes < MAX_METHODS) {
		/* keep the list ascending */
		for (i = nr_chunk_sizes; i && chunks[i - 1] > extra; i--)
			chunks[i] = chunks[i - 1];
		chunks[i] = extra;
		nr_chunk_sizes++;
	}
	return nr_chunk_sizes;
}

static void setup_methods(void)
{
	unsigned long nr = hpage_size / PAGE_SIZE;
	bool gigantic = nr > MAX_ORDER_NR_PAGES;
	unsigned long chunks[MAX_METHODS];
	char sz[24], name[32], desc[64];
	unsigned int nr_chunk_sizes, i;
	struct method *m;

	m = add_method(M_PAGE_PHP, "page_php",
		       gigantic ? "page, process_huge_page order" :
				  "page, process_huge_page order (6.12)");
	m->points = nr;
	m = add_method(M_PAGE_LINEAR, "page_linear",
		       gigantic ? "page, ascending (6.12)" :
				  "page, ascending");
	m->points = nr;

	nr_chunk_sizes = parse_chunks(chunk_list, chunks, kchunk);
	for (i = 0; i < 2 * nr_chunk_sizes; i++) {
		bool up = i >= nr_chunk_sizes;
		unsigned long chunk = chunks[i % nr_chunk_sizes];

		size_name(sz, sizeof(sz), chunk);
		snprintf(name, sizeof(name), "chunk%s_%s", up ? "up" : "", sz);
		snprintf(desc, sizeof(desc), "%s chunks, %s", sz,
			 up ? "far region upwards" : "series order");
		m = add_method(up ? M_CHUNK_UP : M_CHUNK, name, desc);
		m->chunk = chunk;
	}
	if (have_clzero) {
		/* a chunk larger than the page is the whole page */
		nr_chunk_sizes = parse_chunks(nt_chunk_list, chunks,
					      min_ul(ntkchunk, hpage_size));
		for (i = 0; i < nr_chunk_sizes; i++) {
			size_name(sz, sizeof(sz), chunks[i]);
			snprintf(name, sizeof(name), "chunknt_%s", sz);
			snprintf(desc, sizeof(desc),
				 "%s clzero chunks, window stosb", sz);
			m = add_method(M_CHUNK_NT, name, desc);
			m->chunk = chunks[i];
		}
	}

	m = add_method(M_STOSB_ALL, "stosb_all", "rep stosb, whole huge page");
	m->points = 0;
	if (have_clzero) {
		m = add_method(M_CLZERO_ALL, "clzero_all",
			       "clzero + sfence, whole huge page");
		m->points = 0;
	}
	m = add_method(M_MEMSET, "memset", "glibc memset (ceiling)");
	m->points = 0;
}

static bool cpu_flag(const char *flags, const char *flag)
{
	size_t len = strlen(flag);
	const char *p = flags;

	while ((p = strstr(p, flag))) {
		if ((p == flags || p[-1] == ' ') &&
		    (p[len] == ' ' || p[len] == '\n' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

static void probe_clzero(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid(1, &a, &b, &c, &d))
		clzero_line = ((b >> 8) & 0xff) * 8;
	if (__get_cpuid(0x80000008, &a, &b, &c, &d))
		have_clzero = b & 1;
}

static void print_cpu(void)
{
	static const char * const flags[] = {
		"erms", "fsrm", "fzrm", "fsrs", "clzero"
	};
	char line[8192], model[256] = "unknown";
	bool have[ARRAY_SIZE(flags)] = { false };
	FILE *f = fopen("/proc/cpuinfo", "r");
	bool cpuid_clzero;
	unsigned int i;

	probe_clzero();
	cpuid_clzero = have_clzero;
	if (no_clzero || !clzero_line)
		have_clzero = false;

	if (f) {
		bool got_flags = false, got_model = false;

		while (fgets(line, sizeof(line), f) &&
		       !(got_flags && got_model)) {
			char *v = strchr(line, ':');

			if (!v)
				continue;
			v += 2;
			if (!got_model && !strncmp(line, "model name", 10)) {
				snprintf(model, sizeof(model), "%s", v);
				model[strcspn(model, "\n")] = 0;
				got_model = true;
			} else if (!got_flags && !strncmp(line, "flags", 5)) {
				for (i = 0; i < ARRAY_SIZE(flags); i++)
					have[i] = cpu_flag(v, flags[i]);
				got_flags = true;
			}
		}
		fclose(f);
	}
	printf("clear-model: cpu: %s; erms=%d fsrm=%d fzrm=%d fsrs=%d; running on CPU %d\n",
	       model, have[0], have[1], have[2], have[3], sched_getcpu());
	printf("RESULT erms=%d fsrm=%d fzrm=%d fsrs=%d\n",
	       have[0], have[1], have[2], have[3]);
	printf("clear-model: clzero: cpuinfo %d, cpuid 0x80000008 ebx bit 0 %d, line %lu bytes%s\n",
	       have[4], cpuid_clzero, clzero_line,
	       have_clzero ? "" :
	       no_clzero ? ": not used (-Z): chunknt_*, clzero_all, ntkchunk skipped" :
	       ": not there: chunknt_*, clzero_all, ntkchunk skipped");
	printf("RESULT clzero=%d clzero_cpuid=%d clzero_used=%d\n", have[4],
	       cpuid_clzero, have_clzero);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static unsigned long pick_target(unsigned long nr)
{
	switch (target_mode) {
	case T_FIRST:
		return 0;
	case T_MIDDLE:
		return nr / 2;
	case T_LAST:
		return nr - 1;
	case T_RANDOM:
		break;
	}
	return (unsigned long)random() % nr;
}

static void help(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-s 2M|1G] [-n pool_pages] [-r reps] [-t first|middle|last|random]\n"
		"          [-w window] [-c chunk,chunk,...] [-C chunk,chunk,...] [-Z]\n"
		"Host userspace model of huge page clearing (not the kernel).\n"
		"  -s  huge page size (default 2M)\n"
		"  -n  huge pages in the pool, each cleared once a pass (default 64)\n"
		"  -r  repetitions per method; the median is reported (default 11)\n"
		"  -t  target (faulting) subpage (default first)\n"
		"  -w  bytes around the target the chunked loop clears last\n"
		"      (default 64K, as mm/folio_zero.c)\n"
		"  -c  chunk sizes of the chunked loop (default %s)\n"
		"  -C  chunk sizes of the clzero loop, chunknt (default %s)\n"
		"  -Z  model a CPU without clzero: skip chunknt, clzero_all\n",
		prog, DEFAULT_CHUNKS, DEFAULT_NT_CHUNKS);
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	int opt;
	unsigned int i;

	while ((opt = getopt(argc, argv, "s:n:r:t:w:c:C:Zh")) != -1) {
		switch (opt) {
		case 's':
			hpage_size = parse_size(optarg);
			if (hpage_size != SZ_2M && hpage_size != SZ_1G)
				help(argv[0]);
			break;
		case 'n':
			pool_pages = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			reps = strtoul(optarg, NULL, 0);
			break;
		case 't':
			for (i = 0; i < 4; i++)
				if (!strcmp(optarg, target_names[i]))
					break;
			if (i == 4)
				help(argv[0]);
			target_mode = i;
			break;
		case 'w':
			window_pages = parse_size(optarg) / PAGE_SIZE;
			if (!window_pages)
				help(argv[0]);
			break;
		case 'c':
			chunk_list = optarg;
			break;
		case 'C':
			nt_chunk_list = optarg;
			break;
		case 'Z':
			no_clzero = true;
			break;
		default:
			help(argv[0]);
		}
	}
	if (!pool_pages || !reps)
		help(argv[0]);
}

/* ---- measurement ---- */

/*
 * folio_zero_time(): time CALIB_RUNS clears of CALIB_BYTES, of pieces
 * @first.. of the @n at @addr (of piece @first each time, @warm), with
 * "rep stosb" or (@nt) clear_pages_nocache(); the fastest.
 */
static double calibrate_time(char *addr, unsigned long n, unsigned long first,
			     bool warm, bool nt)
{
	double t, best = 1e30;
	unsigned int i;

	for (i = 0; i < CALIB_RUNS; i++) {
		char *piece = addr + (first + (warm ? 0 : i)) % n * CALIB_BYTES;

		t = now();
		if (nt)
			clear_pages_nocache(piece, CALIB_BYTES / PAGE_SIZE);
		else
			rep_stosb(piece, CALIB_BYTES);
		t = (now() - t) * 1e9;
		if (t < best)
			best = t;
	}
	return best;
}

/*
 * folio_zero_calibrate() in user space: clear CALIB_FOLIOS x CALIB_BYTES
 * at @addr with "rep stosb", then time a second clear of the first
 * CALIB_RUNS pieces, evicted by the rest since: the fastest sets kchunk;
 * then, with clzero, time the next CALIB_RUNS (CALIB_NT_FIRST..) the same
 * way with clear_pages_nocache(): @nt_ns, for ntkchunk.  @warm: time
 * CALIB_RUNS clears of the same cache-warm piece instead (what a
 * measurement on one small buffer would see), no @nt_ns.
 */
static double calibrate_ns(char *addr, bool warm, double *nt_ns)
{
	unsigned long n = pool_pages * hpage_size / CALIB_BYTES;
	double best;
	unsigned int i;

	/* a pool smaller than the kernel's 64 MiB: all of it */
	for (i = 0; i < CALIB_FOLIOS && i < n; i++)
		rep_stosb(addr + i * CALIB_BYTES, CALIB_BYTES);
	best = calibrate_time(addr, n, 0, warm, false);
	if (nt_ns && have_clzero)
		*nt_ns = calibrate_time(addr, n, CALIB_NT_FIRST, false, true);
	return best;
}

/* folio_zero_chunk_for_rate(): bytes of a chunk for CALIB_BYTES in @ns */
static unsigned long chunk_for_rate(double ns)
{
	unsigned long pages, p;

	pages = ns > 0 ? (unsigned long)(CALIB_BYTES * (double)BUDGET_NS /
					 ns) / PAGE_SIZE :
			 KCHUNK_MAX / PAGE_SIZE;
	if (pages < KCHUNK_MIN / PAGE_SIZE)
		pages = KCHUNK_MIN / PAGE_SIZE;
	if (pages > KCHUNK_MAX / PAGE_SIZE)
		pages = KCHUNK_MAX / PAGE_SIZE;
	for (p = 1; p * 2 <= pages; p *= 2)
		;
	return p * PAGE_SIZE;
}

static void calibrate(char *addr)
{
	calib_warm_ns = calibrate_ns(addr, true, NULL);
	calib_ns = calibrate_ns(addr, false, &ntcalib_ns);
	kchunk = chunk_for_rate(calib_ns);
	if (have_clzero)
		ntkchunk = chunk_for_rate(ntcalib_ns);
}

static void run(char *pool, unsigned long passes, unsigned long *targets)
{
	unsigned long nr = hpage_size / PAGE_SIZE;
	double bytes = (double)passes * pool_pages * hpage_size;
	unsigned int r, k, i;
	unsigned long p, q;

	/* r == 0 is a warm-up, not recorded */
	for (r = 0; r <= reps; r++) {
		for (k = 0; k < nr_methods; k++) {
			struct method *m = &methods[(k + r) % nr_methods];
			double t;

			for (p = 0; p < pool_pages; p++)
				targets[p] = pick_target(nr);
			t = now();
			for (q = 0; q < passes; q++)
				for (p = 0; p < pool_pages; p++)
					clear_huge(m, pool + p * hpage_size,
						   targets[p]);
			t = now() - t;
			if (r)
				m->gbps[r - 1] = bytes / t / 1e9;
		}
	}

	for (i = 0; i < nr_methods; i++) {
		struct method *m = &methods[i];

		qsort(m->gbps, reps, sizeof(*m->gbps), cmp_double);
		m->lo = m->gbps[0];
		m->hi = m->gbps[reps - 1];
		m->median = reps % 2 ? m->gbps[reps / 2] :
			    (m->gbps[reps / 2 - 1] + m->gbps[reps / 2]) / 2;
	}
}

static struct method *find_method(enum method_kind kind)
{
	unsigned int i;

	for (i = 0; i < nr_methods; i++)
		if (methods[i].kind == kind)
			return &methods[i];
	return NULL;
}

static void result(const char *hp, const char *name, const char *key,
		   double v)
{
	printf("RESULT %s_%s%s=%.3f\n", hp, name, key, v);
}

/* @m's rate against 6.12's and memset's: <key>_x_page, <key>_x_memset */
static void print_ratios(const char *hp, const char *what, const char *key,
			 struct method *m, struct method *page,
			 struct method *ceil)
{
	printf("summary %s: %s: %s, %.2f GB/s = %.2fx memset, %.2fx page\n",
	       hp, what, m->name, m->median, m->median / ceil->median,
	       m->median / page->median);
	result(hp, key, "_x_page", m->median / page->median);
	result(hp, key, "_x_memset", m->median / ceil->median);
}

/* the same and @m's chunk size, <key>_kib */
static void print_summary(const char *hp, const char *what, const char *key,
			  struct method *m, struct method *page,
			  struct method *ceil)
{
	print_ratios(hp, what, key, m, page, ceil);
	printf("RESULT %s_%s_kib=%lu\n", hp, key, m->chunk / SZ_1K);
}

/*
 * For the chunked loop @kind: the smallest chunk size with at least 90% of
 * memset's median (<prefix>90_*) and the fastest one (best_<prefix>_*).
 */
static void summarize(const char *hp, enum method_kind kind,
		      const char *prefix, struct method *page,
		      struct method *ceil)
{
	struct method *first90 = NULL, *best = NULL;
	char key[32], what[64];
	unsigned int i;

	for (i = 0; i < nr_methods; i++) {
		struct method *m = &methods[i];

		if (m->kind != kind)
			continue;
		if (!first90 && m->median >= 0.9 * ceil->median)
			first90 = m;
		if (!best || m->median > best->median)
			best = m;
	}
	if (!best)
		return;
	snprintf(key, sizeof(key), "%s90", prefix);
	snprintf(what, sizeof(what), "smallest %s >= 90%% of memset", prefix);
	if (first90) {
		print_summary(hp, what, key, first90, page, ceil);
	} else {
		printf("summary %s: no %s size reached 90%% of memset\n", hp,
		       prefix);
		printf("RESULT %s_%s_kib=none\n", hp, key);
	}
	snprintf(key, sizeof(key), "best_%s", prefix);
	snprintf(what, sizeof(what), "best %s", prefix);
	print_summary(hp, what, key, best, page, ceil);
}

static void report(void)
{
	unsigned long nr = hpage_size / PAGE_SIZE;
	bool gigantic = nr > MAX_ORDER_NR_PAGES;
	struct method *page = find_method(gigantic ? M_PAGE_LINEAR :
					  M_PAGE_PHP);
	struct method *ceil = find_method(M_MEMSET);
	char hp[24];
	unsigned int i;

	size_name(hp, sizeof(hp), hpage_size);
	printf("\n== host userspace model, not the kernel: %s huge pages ==\n",
	       hp);
	printf("pool %lu pages (%lu MiB), target %s, window %lu KiB, %u reps\n",
	       pool_pages, pool_pages * hpage_size / SZ_1M,
	       target_names[target_mode], window_pages * PAGE_SIZE / SZ_1K,
	       reps);
	printf("6.12 clears a %s page with %s: 'x page' is against that row\n",
	       hp, gigantic ? "clear_gigantic_page() (page_linear)" :
			      "process_huge_page() (page_php)");
	printf("%-12s %-38s %10s %7s %15s %6s %8s %10s\n",
	       "method", "", "resched/hp", "GB/s", "[min..max]", "x page",
	       "x memset", "us/resched");
	for (i = 0; i < nr_methods; i++) {
		struct method *m = &methods[i];
		double us;
		char range[32];

		if (is_chunked(m->kind)) {
			m->points = chunked_points(nr, target_mode == T_RANDOM ?
						   nr / 2 : pick_target(nr),
						   m->chunk / PAGE_SIZE);
			us = m->chunk / (m->median * 1e3);
		} else if (m->points) {
			us = PAGE_SIZE / (m->median * 1e3);
		} else {
			us = hpage_size / (m->median * 1e3);
		}
		snprintf(range, sizeof(range), "[%.2f..%.2f]", m->lo, m->hi);
		printf("%-12s %-38s %10lu %7.2f %15s %6.2f %8.2f %10.1f\n",
		       m->name, m->desc, m->points, m->median, range,
		       m->median / page->median, m->median / ceil->median, us);
	}
	printf("us/resched: time between resched points at the median rate\n");
	printf("(whole-page methods: the time of one huge page)\n\n");

	for (i = 0; i < nr_methods; i++) {
		struct method *m = &methods[i];

		result(hp, m->name, "_gbps", m->median);
		result(hp, m->name, "_min_gbps", m->lo);
		result(hp, m->name, "_max_gbps", m->hi);
		result(hp, m->name, "_x_page", m->median / page->median);
		result(hp, m->name, "_x_memset", m->median / ceil->median);
	}

	printf("\nsummary %s: page (6.12) %.2f GB/s, memset %.2f GB/s\n",
	       hp, page->median, ceil->median);
	summarize(hp, M_CHUNK, "chunk", page, ceil);
	summarize(hp, M_CHUNK_UP, "chunkup", page, ceil);
	summarize(hp, M_CHUNK_NT, "chunknt", page, ceil);

	printf("summary %s: calibration: %.0f MB/s (best of %u x %lu KiB), %lu KiB chunks without preemption, %.0f us each\n",
	       hp, CALIB_BYTES / calib_ns * 1e3, CALIB_RUNS,
	       CALIB_BYTES / SZ_1K, kchunk / SZ_1K,
	       calib_ns * kchunk / CALIB_BYTES / 1e3);
	printf("summary %s: calibration on one cache-warm 2 MiB piece instead: %.0f MB/s\n",
	       hp, CALIB_BYTES / calib_warm_ns * 1e3);
	printf("RESULT %s_calib_mbps=%.0f %s_calib_warm_mbps=%.0f %s_kchunk_us=%.0f\n",
	       hp, CALIB_BYTES / calib_ns * 1e3, hp,
	       CALIB_BYTES / calib_warm_ns * 1e3, hp,
	       calib_ns * kchunk / CALIB_BYTES / 1e3);
	for (i = 0; i < nr_methods; i++) {
		struct method *m = &methods[i];

		if (m->kind != M_CHUNK)
			continue;
		if (m->chunk == kchunk)
			print_summary(hp, "kernel chunk, preempt=none/voluntary",
				      "kchunk", m, page, ceil);
		if (m->chunk == FCHUNK)
			print_summary(hp, "kernel chunk, preempt=full",
				      "fchunk", m, page, ceil);
	}

	if (!have_clzero) {
		printf("summary %s: no clzero used (%s): no chunknt_*, clzero_all, ntkchunk\n",
		       hp, no_clzero ? "-Z" : "not on this CPU");
		return;
	}
	printf("summary %s: clzero calibration: %.0f MB/s (best of %u x %lu KiB, pieces %u..%u), %lu KiB clear_pages_nocache() chunks without preemption, %.0f us each\n",
	       hp, CALIB_BYTES / ntcalib_ns * 1e3, CALIB_RUNS,
	       CALIB_BYTES / SZ_1K, CALIB_NT_FIRST,
	       CALIB_NT_FIRST + CALIB_RUNS - 1, ntkchunk / SZ_1K,
	       ntcalib_ns * ntkchunk / CALIB_BYTES / 1e3);
	printf("RESULT %s_ntcalib_mbps=%.0f %s_ntkchunk_kib=%lu %s_ntkchunk_us=%.0f\n",
	       hp, CALIB_BYTES / ntcalib_ns * 1e3, hp, ntkchunk / SZ_1K, hp,
	       ntcalib_ns * ntkchunk / CALIB_BYTES / 1e3);
	for (i = 0; i < nr_methods; i++) {
		struct method *m = &methods[i];

		if (m->kind != M_CHUNK_NT ||
		    m->chunk != min_ul(ntkchunk, hpage_size))
			continue;
		if (gigantic)
			print_ratios(hp, "kernel chunk, clzero, preempt=none/voluntary",
				     "ntkchunk", m, page, ceil);
		else
			print_ratios(hp, "clzero chunk, information only (2M: the kernel uses kchunk)",
				     "ntkchunk", m, page, ceil);
	}
}

int main(int argc, char **argv)
{
	unsigned long passes, *targets;
	size_t len;
	char *pool;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE;

	parse_args(argc, argv);
	flags |= hpage_size == SZ_1G ? MAP_HUGE_1GB : MAP_HUGE_2MB;
	len = pool_pages * hpage_size;
	srandom(1);

	print_cpu();
	pool = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (pool == MAP_FAILED) {
		fprintf(stderr, "clear-model: mmap of %lu hugetlb pages of %lu KiB: %s\n",
			pool_pages, hpage_size / SZ_1K, strerror(errno));
		return 4;
	}
	/* pre-fault once (MAP_POPULATE did it; make sure every page is ours) */
	memset(pool, 1, len);
	calibrate(pool);
	setup_methods();

	if (!self_test(pool)) {
		fprintf(stderr, "clear-model: self-test failed\n");
		return 1;
	}
	printf("clear-model: self-test passed: every subpage cleared once,\n");
	printf("clear-model: target window last, memory zeroed\n");

	passes = (MIN_REP_BYTES + len - 1) / len;
	targets = calloc(pool_pages, sizeof(*targets));
	if (!targets) {
		perror("calloc");
		return 1;
	}
	printf("clear-model: %lu x %lu KiB hugetlb pages, %lu pass(es) a rep\n",
	       pool_pages, hpage_size / SZ_1K, passes);
	fflush(stdout);

	run(pool, passes, targets);
	report();

	free(targets);
	munmap(pool, len);
	return 0;
}
