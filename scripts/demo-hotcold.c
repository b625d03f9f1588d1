// SPDX-License-Identifier: GPL-2.0
/*
 * demo-hotcold: the workload of the DAMOS migrate_hot/migrate_cold demo.
 *
 *   demo-hotcold HOT_MIB HOT_NODE COLD_MIB COLD_NODE STATUS_FILE
 *
 * Binds a hot set to HOT_NODE and a cold set to COLD_NODE with mbind(2),
 * faults both in, then writes to every hot page over and over and never
 * touches the cold set again.  At start and then about once a second it
 * replaces STATUS_FILE with the per-node placement of each set, as
 * queried with move_pages(2) (nodes == NULL), one line per set:
 *
 *   hot pages=16384 node0=0 node1=0 node2=16384 other=0
 *
 * ("other": pages move_pages() reports no node for.)  Runs until it gets
 * SIGTERM or SIGINT.  Plain libc and raw syscalls: no libnuma.
 *
 * Under QEMU TCG a PTE's accessed bit is set only when QEMU's software TLB
 * is refilled, and that TLB is large: once DAMON clears the bit (without a
 * flush), a page that stays in it looks idle however often it is touched.
 * So every few passes the hot set is flushed from the TLB with an
 * mprotect(2) round trip, as a small hardware TLB would have it.
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES	64
#define QUERY_CHUNK	4096
#define FLUSH_PASSES	16
#define NR_SETS		2	/* hot, cold */

struct set {
	const char *name;
	char *mem;
	unsigned long nr_pages;
	int node;
};

static volatile sig_atomic_t stop;
static long page_size;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "demo-hotcold: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Map @s, bind it to @s->node, and fault every page in there. */
static void set_alloc(struct set *s)
{
	unsigned long mask[MAX_NODES / (8 * sizeof(long))] = { 0 };
	size_t len = s->nr_pages * page_size;

	s->mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED)
		die("mmap");
	/* base pages, so that page counts are exact */
	madvise(s->mem, len, MADV_NOHUGEPAGE);
	mask[s->node / (8 * sizeof(long))] |= 1UL << (s->node % (8 * sizeof(long)));
	if (syscall(SYS_mbind, s->mem, len, MPOL_BIND, mask, MAX_NODES, 0))
		die("mbind");
	memset(s->mem, 1, len);
}

/* Make the next access to each page of @s refill the TLB. */
static void set_flush_tlb(const struct set *s)
{
	size_t len = s->nr_pages * page_size;

	if (mprotect(s->mem, len, PROT_READ) ||
	    mprotect(s->mem, len, PROT_READ | PROT_WRITE))
		die("mprotect");
}

/* Count the pages of @s per node; @count[MAX_NODES] is "no node". */
static void set_where(const struct set *s, unsigned long *count)
{
	void *pages[QUERY_CHUNK];
	int status[QUERY_CHUNK];
	unsigned long i, j, n;

	memset(count, 0, (MAX_NODES + 1) * sizeof(*count));
	for (i = 0; i < s->nr_pages; i += n) {
		n = s->nr_pages - i < QUERY_CHUNK ? s->nr_pages - i : QUERY_CHUNK;
		for (j = 0; j < n; j++)
			pages[j] = s->mem + (i + j) * page_size;
		if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
			die("move_pages");
		for (j = 0; j < n; j++) {
			if (status[j] >= 0 && status[j] < MAX_NODES)
				count[status[j]]++;
			else
				count[MAX_NODES]++;
		}
	}
}

/* Replace @path with the placement of @sets, atomically. */
static void report(const char *path, const struct set *sets)
{
	unsigned long count[MAX_NODES + 1];
	char tmp[4096];
	int i, j, nid, last;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	for (i = 0; i < NR_SETS; i++) {
		set_where(&sets[i], count);
		/* print up to the last node in use or asked for */
		last = 0;
		for (nid = 0; nid < MAX_NODES; nid++) {
			if (count[nid])
				last = nid;
		}
		for (j = 0; j < NR_SETS; j++) {
			if (sets[j].node > last)
				last = sets[j].node;
		}
		fprintf(f, "%s pages=%lu", sets[i].name, sets[i].nr_pages);
		for (nid = 0; nid <= last; nid++)
			fprintf(f, " node%d=%lu", nid, count[nid]);
		fprintf(f, " other=%lu\n", count[MAX_NODES]);
	}
	if (fclose(f) || rename(tmp, path))
		die(path);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct set sets[NR_SETS] = { { .name = "hot" }, { .name = "cold" } };
	struct set *hot = &sets[0], *cold = &sets[1];
	double last_report;
	unsigned long i, passes = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: %s HOT_MIB HOT_NODE COLD_MIB COLD_NODE STATUS_FILE\n",
			argv[0]);
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	hot->nr_pages = strtoul(argv[1], NULL, 0) * (1 << 20) / page_size;
	hot->node = atoi(argv[2]);
	cold->nr_pages = strtoul(argv[3], NULL, 0) * (1 << 20) / page_size;
	cold->node = atoi(argv[4]);
	if (!hot->nr_pages || !cold->nr_pages ||
	    hot->node < 0 || hot->node >= MAX_NODES ||
	    cold->node < 0 || cold->node >= MAX_NODES) {
		fprintf(stderr, "demo-hotcold: bad sizes or nodes\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	set_alloc(hot);
	set_alloc(cold);
	report(argv[5], sets);
	last_report = now();

	while (!stop) {
		for (i = 0; i < hot->nr_pages && !stop; i++)
			((volatile char *)hot->mem)[i * page_size]++;
		if (++passes % FLUSH_PASSES == 0)
			set_flush_tlb(hot);
		if (now() - last_report >= 1) {
			report(argv[5], sets);
			last_report = now();
		}
	}
	return 0;
}
