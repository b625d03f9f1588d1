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
 * "other" counts pages move_pages() reports no node for.  Runs until it
 * gets SIGTERM or SIGINT.  Plain libc and raw syscalls: no libnuma.
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
static void report(const char *path, const struct set *sets, int nr_sets)
{
	unsigned long count[MAX_NODES + 1];
	char tmp[4096];
	int i, nid, last;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	for (i = 0; i < nr_sets; i++) {
		set_where(&sets[i], count);
		last = 0;
		for (nid = 0; nid < MAX_NODES; nid++) {
			if (count[nid] || nid == sets[0].node ||
			    nid == sets[1].node)
				last = nid;
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
	struct set sets[2] = { { .name = "hot" }, { .name = "cold" } };
	struct set *hot = &sets[0];
	double last_report;
	unsigned long i;

	if (argc != 6) {
		fprintf(stderr, "usage: %s HOT_MIB HOT_NODE COLD_MIB COLD_NODE STATUS_FILE\n",
			argv[0]);
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	hot->nr_pages = strtoul(argv[1], NULL, 0) * (1 << 20) / page_size;
	hot->node = atoi(argv[2]);
	sets[1].nr_pages = strtoul(argv[3], NULL, 0) * (1 << 20) / page_size;
	sets[1].node = atoi(argv[4]);
	if (!hot->nr_pages || !sets[1].nr_pages ||
	    hot->node < 0 || hot->node >= MAX_NODES ||
	    sets[1].node < 0 || sets[1].node >= MAX_NODES) {
		fprintf(stderr, "demo-hotcold: bad sizes or nodes\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	set_alloc(&sets[0]);
	set_alloc(&sets[1]);
	report(argv[5], sets, 2);
	last_report = now();

	while (!stop) {
		for (i = 0; i < hot->nr_pages && !stop; i++)
			((volatile char *)hot->mem)[i * page_size]++;
		if (now() - last_report >= 1) {
			report(argv[5], sets, 2);
			last_report = now();
		}
	}
	return 0;
}
