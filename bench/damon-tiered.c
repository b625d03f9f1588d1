// SPDX-License-Identifier: GPL-2.0
/*
 * damon-tiered: the workloads of the DAMON-tiered benchmark
 * (bench/scenarios/damon-tiered.sh).
 *
 *   damon-tiered cold MIB
 *   damon-tiered hot MIB RUN_S CSV LABEL DAMON
 *
 * cold: maps MIB of private anonymous memory, writes one byte of every page
 * once (in the caller's memory policy), prints "ready" and sleeps until
 * SIGTERM or SIGINT.  Then it prints where its pages are and exits.
 *
 * hot: maps HOT MIB of private anonymous memory, faults every page in (in
 * the caller's memory policy), then writes one byte of every page, over and
 * over, until RUN_S seconds after its start (or SIGTERM/SIGINT).  About
 * once a second it asks move_pages(2) where each page is, appends a line
 *
 *   LABEL,t_s,damon,node0,node1,node2,other,node0_pct
 *
 * to CSV ("other": absent, e.g. under migration, or on another node) and
 * keeps each page's node history.  DAMON is 1 if DAMON is on from the
 * start; SIGUSR1 says that it has just been turned on.  At the end it
 * prints "RESULT LABEL_key=value" lines:
 *
 *   pages            pages of the hot set
 *   damon_on_s       when DAMON was on (0: from the start; "never")
 *   initial_pct      % of the hot set on node0 at the first sample
 *   final_pct        % of the hot set on node0 at the last sample
 *   initial_slow_mib / final_slow_mib
 *                    MiB of the hot set on node2 at the first/last sample
 *   steady_s         time of the first sample from which on the hot set is
 *                    always >= STEADY_PCT% on node0, if that lasts at least
 *                    STEADY_HOLD_S until the end ("never" if not)
 *   steady_after_damon_s
 *                    the same, counted from when DAMON was turned on
 *   moved_pages      pages seen on more than one node
 *   pingpong_pages   pages whose node changed more than once
 *   roundtrip_pages  pages seen on node0, then node2, then node0 again
 *   demoted_pages    pages seen on node0 and later on node2
 *
 * Times are in seconds since the start (TCG times in the lab).  A page
 * that moves and moves back between two samples is not seen: the history
 * is a lower bound, to be read next to the kernel's counters.
 *
 * Under QEMU TCG a PTE's accessed bit is set only when QEMU's software TLB
 * is refilled, and that TLB holds the whole hot set: once DAMON clears the
 * bit (without a flush), a page that stays in it looks idle however often
 * it is written.  A hardware TLB is far smaller than the hot set, so every
 * pass would refill it; the hot loop does the same: before each pass it
 * flushes the whole TLB with an mprotect(2) round trip on a small mapping
 * of its own (FLUSH_PAGES, above the kernel's 33-page ceiling for
 * flushing page by page).  DAMON sees a page accessed only if it was
 * touched, after a refill, within one sampling interval (20 ms in the
 * scenario): flushing every 50 ms made hot pages look accessed in ~1
 * sample of 20, and hot regions lukewarm.
 *
 * Plain libc and raw syscalls: no libnuma.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAST_NID	0
#define SLOW_NID	2
#define NR_COLS		3	/* CSV columns node0..node2 */
#define MAX_NODES	64
#define QUERY_CHUNK	4096
#define SAMPLE_MS	1000
#define FLUSH_PAGES	64
#define STEADY_PCT	99.0
#define STEADY_HOLD_S	30.0	/* a steady state lasts at least this long */
#define NO_NODE		0xff

/* page history flags */
#define H_FAST		0x1	/* seen on FAST_NID */
#define H_DEMOTED	0x2	/* then seen on SLOW_NID */
#define H_ROUNDTRIP	0x4	/* then seen on FAST_NID again */

struct sample {
	double t;
	int damon;
	unsigned long count[NR_COLS + 1];	/* [NR_COLS]: other */
};

/* set by the signal handlers, read with __atomic_load_n() */
static int stop, damon_signalled;
static struct timespec damon_ts;
static long page_size;

static void on_stop(int sig)
{
	(void)sig;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
}

static void on_damon(int sig)
{
	(void)sig;
	clock_gettime(CLOCK_MONOTONIC, &damon_ts);
	__atomic_store_n(&damon_signalled, 1, __ATOMIC_RELEASE);
}

static void die(const char *what)
{
	fprintf(stderr, "damon-tiered: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double ts_sec(const struct timespec *ts)
{
	return ts->tv_sec + ts->tv_nsec / 1e9;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_sec(&ts);
}

/* Map @nr_pages of base pages and write one byte of each. */
static char *map_touch(unsigned long nr_pages)
{
	size_t len = nr_pages * page_size;
	unsigned long i;
	char *mem;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	/* base pages, so that page counts are exact */
	if (madvise(mem, len, MADV_NOHUGEPAGE))
		die("madvise");
	for (i = 0; i < nr_pages; i++)
		mem[i * page_size] = 1;
	return mem;
}

/*
 * Ask where each page of @mem is: @status[i] is page i's node, or a
 * negative errno.
 */
static void where(char *mem, unsigned long nr_pages, int *status)
{
	void *pages[QUERY_CHUNK];
	unsigned long i, j, n;

	for (i = 0; i < nr_pages; i += n) {
		n = nr_pages - i < QUERY_CHUNK ? nr_pages - i : QUERY_CHUNK;
		for (j = 0; j < n; j++)
			pages[j] = mem + (i + j) * page_size;
		if (syscall(SYS_move_pages, 0, n, pages, NULL, status + i, 0))
			die("move_pages");
	}
}

static void count_nodes(const int *status, unsigned long nr_pages,
			unsigned long *count)
{
	unsigned long i;

	memset(count, 0, (NR_COLS + 1) * sizeof(*count));
	for (i = 0; i < nr_pages; i++) {
		if (status[i] >= 0 && status[i] < NR_COLS)
			count[status[i]]++;
		else
			count[NR_COLS]++;
	}
}

static int do_cold(unsigned long nr_pages)
{
	unsigned long count[NR_COLS + 1];
	sigset_t stop_sigs, old;
	int *status;
	char *mem;

	status = malloc(nr_pages * sizeof(*status));
	if (!status)
		die("malloc");
	/* no wakeup lost between testing stop and sleeping */
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &stop_sigs, &old);
	mem = map_touch(nr_pages);
	printf("ready\n");
	fflush(stdout);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		sigsuspend(&old);
	where(mem, nr_pages, status);
	count_nodes(status, nr_pages, count);
	printf("bench: cold set: %lu pages: node0 %lu node1 %lu node2 %lu other %lu\n",
	       nr_pages, count[0], count[1], count[2], count[NR_COLS]);
	return 0;
}

static double pct(unsigned long part, unsigned long whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/*
 * Fold one placement query into each page's history: @last node, number of
 * node @changes (saturating) and H_* @flags.
 */
static void track(const int *status, unsigned long nr_pages,
		  unsigned char *last, unsigned char *changes,
		  unsigned char *flags)
{
	unsigned long i;
	int nid;

	for (i = 0; i < nr_pages; i++) {
		nid = status[i];
		if (nid < 0 || nid >= NO_NODE)
			continue;	/* absent: keep the last known node */
		if (last[i] != NO_NODE && last[i] != nid && changes[i] < 255)
			changes[i]++;
		last[i] = nid;
		if (nid == FAST_NID) {
			if (flags[i] & H_DEMOTED)
				flags[i] |= H_ROUNDTRIP;
			flags[i] |= H_FAST;
		} else if (nid == SLOW_NID && (flags[i] & H_FAST)) {
			flags[i] |= H_DEMOTED;
		}
	}
}

/* Print "@key=<t>" with the time of the steady state counted from @from. */
static void print_steady(const char *label, const char *key,
			 const struct sample *s, unsigned long nr,
			 unsigned long nr_pages, int damon_only, double from)
{
	unsigned long i, first = nr;

	/* the first sample after the last one below STEADY_PCT */
	for (i = 0; i < nr; i++) {
		if (damon_only && !s[i].damon)
			continue;
		if (pct(s[i].count[FAST_NID], nr_pages) < STEADY_PCT)
			first = nr;
		else if (first == nr)
			first = i;
	}
	if (first == nr || s[nr - 1].t - s[first].t < STEADY_HOLD_S)
		printf("RESULT %s_%s=never\n", label, key);
	else
		printf("RESULT %s_%s=%.1f\n", label, key, s[first].t - from);
}

/* The hot set and what is known about it. */
struct hot {
	const char *label;
	char *mem;
	unsigned long nr_pages;
	int *status;			/* the last query, per page */
	unsigned char *last;		/* per page: last node seen */
	unsigned char *changes;		/* per page: node changes seen */
	unsigned char *flags;		/* per page: H_* */
	struct sample *s;		/* the placement over time */
	unsigned long nr, max_nr;
	FILE *csv;
	double t0;
};

/* Take one sample of the hot set's placement at @t. */
static void hot_sample(struct hot *h, double t, int damon)
{
	struct sample *p = &h->s[h->nr++];
	double fast;

	where(h->mem, h->nr_pages, h->status);
	track(h->status, h->nr_pages, h->last, h->changes, h->flags);
	p->t = t - h->t0;
	p->damon = damon;
	count_nodes(h->status, h->nr_pages, p->count);
	fast = pct(p->count[FAST_NID], h->nr_pages);
	fprintf(h->csv, "%s,%.2f,%d,%lu,%lu,%lu,%lu,%.3f\n", h->label, p->t,
		damon, p->count[0], p->count[1], p->count[2],
		p->count[NR_COLS], fast);
	fflush(h->csv);
	if (h->nr % 10 == 1) {
		printf("bench: %s: [%5.1fs] hot set on node0 %6.2f%%, node2 %lu pages%s\n",
		       h->label, p->t, fast, p->count[SLOW_NID],
		       damon ? " (DAMON on)" : "");
		fflush(stdout);
	}
}

/* Print the RESULT lines of the hot set. */
static void hot_report(const struct hot *h, int damon, double damon_on)
{
	unsigned long i, n_moved = 0, n_pingpong = 0, n_roundtrip = 0;
	unsigned long n_demoted = 0, nr_pages = h->nr_pages;
	const struct sample *first = &h->s[0], *last = &h->s[h->nr - 1];
	const char *label = h->label;
	double mib = (double)page_size / (1 << 20);

	for (i = 0; i < nr_pages; i++) {
		n_moved += h->changes[i] >= 1;
		n_pingpong += h->changes[i] >= 2;
		n_roundtrip += !!(h->flags[i] & H_ROUNDTRIP);
		n_demoted += !!(h->flags[i] & H_DEMOTED);
	}
	printf("RESULT %s_pages=%lu\n", label, nr_pages);
	if (damon)
		printf("RESULT %s_damon_on_s=%.1f\n", label, damon_on);
	else
		printf("RESULT %s_damon_on_s=never\n", label);
	printf("RESULT %s_initial_pct=%.2f\n", label,
	       pct(first->count[FAST_NID], nr_pages));
	printf("RESULT %s_final_pct=%.2f\n", label,
	       pct(last->count[FAST_NID], nr_pages));
	printf("RESULT %s_initial_slow_mib=%.1f\n", label,
	       first->count[SLOW_NID] * mib);
	printf("RESULT %s_final_slow_mib=%.1f\n", label,
	       last->count[SLOW_NID] * mib);
	print_steady(label, "steady_s", h->s, h->nr, nr_pages, 0, 0);
	if (damon)
		print_steady(label, "steady_after_damon_s", h->s, h->nr,
			     nr_pages, 1, damon_on);
	else
		printf("RESULT %s_steady_after_damon_s=never\n", label);
	printf("RESULT %s_moved_pages=%lu\n", label, n_moved);
	printf("RESULT %s_pingpong_pages=%lu\n", label, n_pingpong);
	printf("RESULT %s_roundtrip_pages=%lu\n", label, n_roundtrip);
	printf("RESULT %s_demoted_pages=%lu\n", label, n_demoted);
}

/*
 * Flush this CPU's TLB: PROT_NONE on more than 33 present pages makes the
 * kernel flush the whole TLB (a CR3 write, which empties QEMU's software
 * TLB); going back to read-write needs no flush.
 */
static void flush_tlb(char *area)
{
	if (mprotect(area, FLUSH_PAGES * page_size, PROT_NONE) ||
	    mprotect(area, FLUSH_PAGES * page_size, PROT_READ | PROT_WRITE))
		die("mprotect");
}

/* Write every page of the hot set once; return when done. */
static double hot_pass(const struct hot *h, char val)
{
	unsigned long i;

	/* a store per page that the compiler cannot drop */
	for (i = 0; i < h->nr_pages; i++)
		__atomic_store_n(h->mem + i * page_size, val, __ATOMIC_RELAXED);
	return now();
}

static int do_hot(unsigned long nr_pages, double run_s, const char *csv,
		  const char *label, int damon)
{
	struct hot h = { .label = label, .nr_pages = nr_pages, .t0 = now() };
	unsigned long n_pass = 0;
	double damon_on = 0, t, t1, t_pass = 0, t_sample = 0, next_sample;
	char *flush_area;

	h.max_nr = run_s * 1000 / SAMPLE_MS + 16;
	h.s = calloc(h.max_nr, sizeof(*h.s));
	h.status = malloc(nr_pages * sizeof(*h.status));
	h.last = malloc(nr_pages);
	h.changes = calloc(nr_pages, 1);
	h.flags = calloc(nr_pages, 1);
	if (!h.s || !h.status || !h.last || !h.changes || !h.flags)
		die("malloc");
	memset(h.last, NO_NODE, nr_pages);
	h.csv = fopen(csv, "a");
	if (!h.csv)
		die(csv);

	flush_area = map_touch(FLUSH_PAGES);
	h.mem = map_touch(nr_pages);
	printf("bench: %s: hot set of %lu pages faulted in after %.1f s\n",
	       label, nr_pages, now() - h.t0);
	fflush(stdout);
	next_sample = now();

	for (;;) {
		t = now();
		if (!damon && __atomic_load_n(&damon_signalled, __ATOMIC_ACQUIRE)) {
			damon = 1;
			damon_on = ts_sec(&damon_ts) - h.t0;
		}
		if (t >= next_sample && h.nr < h.max_nr) {
			hot_sample(&h, t, damon);
			t1 = now();
			t_sample += t1 - t;
			next_sample += SAMPLE_MS / 1000.0;
			if (next_sample < t1)
				next_sample = t1;
			t = t1;
		}
		if (__atomic_load_n(&stop, __ATOMIC_RELAXED) || t - h.t0 >= run_s)
			break;
		flush_tlb(flush_area);
		t1 = hot_pass(&h, (char)n_pass++);
		t_pass += t1 - t;
	}
	fclose(h.csv);

	printf("bench: %s: %lu passes (TLB flush + writes), %.1f ms each (TCG)\n",
	       label, n_pass, n_pass ? 1000 * t_pass / n_pass : 0);
	printf("bench: %s: %lu samples, %.1f ms each (TCG)\n", label, h.nr,
	       h.nr ? 1000 * t_sample / h.nr : 0);
	if (!h.nr) {
		fprintf(stderr, "damon-tiered: no sample\n");
		return 1;
	}
	hot_report(&h, damon, damon_on);
	return 0;
}

static void bad_args(const char *prog)
{
	fprintf(stderr, "usage: %s cold MIB\n"
		"       %s hot MIB RUN_S CSV LABEL DAMON\n", prog, prog);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long nr_pages;

	if (argc < 3)
		bad_args(argv[0]);
	page_size = sysconf(_SC_PAGESIZE);
	nr_pages = strtoul(argv[2], NULL, 0) * (1UL << 20) / page_size;
	if (!nr_pages)
		bad_args(argv[0]);
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGUSR1, on_damon);

	if (!strcmp(argv[1], "cold") && argc == 3)
		return do_cold(nr_pages);
	if (strcmp(argv[1], "hot") || argc != 7 || atof(argv[3]) <= 0)
		bad_args(argv[0]);
	return do_hot(nr_pages, atof(argv[3]), argv[4], argv[5],
		      atoi(argv[6]));
}
