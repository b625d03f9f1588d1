// SPDX-License-Identifier: GPL-2.0
/*
 * fill: allocate and touch anonymous memory, then say where it ended up.
 *
 *   fill SIZE_MB
 *
 * Maps SIZE_MB of private anonymous memory, writes one byte per page (in
 * the caller's memory policy: run it under numactl), then asks the kernel
 * with move_pages(2) which node holds each page.  A page being migrated
 * reads as not present, so while reclaim is still moving pages the query is
 * repeated, once a second, up to QUERY_TRIES times.  Prints "RESULT key=value"
 * lines: elapsed_s (map + touch), pages_nodeN for each node of the machine,
 * and pages_absent for pages still not resident (or not answered).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES	64
#define BATCH		4096
#define QUERY_TRIES	10

static long per_node[MAX_NODES];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Count the pages of [buf, buf + nr pages) per node; return the absent ones. */
static long query(char *buf, long nr, long page)
{
	static void *pages[BATCH];
	static int status[BATCH];
	long i, j, absent = 0;

	memset(per_node, 0, sizeof(per_node));
	for (i = 0; i < nr; i += BATCH) {
		long n = nr - i < BATCH ? nr - i : BATCH;

		for (j = 0; j < n; j++)
			pages[j] = buf + (i + j) * page;
		if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
			perror("fill: move_pages");
			exit(1);
		}
		for (j = 0; j < n; j++) {
			if (status[j] >= 0 && status[j] < MAX_NODES)
				per_node[status[j]]++;
			else
				absent++;
		}
	}
	return absent;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), nr, i, absent;
	double t0;
	size_t size;
	char *buf;

	if (argc != 2 || atol(argv[1]) <= 0) {
		fprintf(stderr, "usage: fill SIZE_MB\n");
		return 2;
	}
	size = (size_t)atol(argv[1]) << 20;
	nr = size / page;

	t0 = now();
	buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED) {
		perror("fill: mmap");
		return 1;
	}
	for (i = 0; i < nr; i++)
		buf[i * page] = 1;
	printf("RESULT elapsed_s=%.2f\n", now() - t0);
	fflush(stdout);

	for (i = 1; (absent = query(buf, nr, page)) && i < QUERY_TRIES; i++)
		sleep(1);

	for (i = 0; i < MAX_NODES; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%ld", i);
		if (per_node[i] || !access(path, F_OK))
			printf("RESULT pages_node%ld=%ld\n", i, per_node[i]);
	}
	printf("RESULT pages_absent=%ld\n", absent);
	return 0;
}
