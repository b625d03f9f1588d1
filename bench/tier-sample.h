/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tier-sample.h: what the policy bench's workloads (bench/phases.c,
 * bench/hotset.c) share to measure placement: a clock, a PRNG, the fast
 * node's room, where pages are (move_pages(2)) and the kernel's migration
 * count (/proc/vmstat).  Plain libc and raw syscalls: no libnuma, no libm.
 */
#ifndef TIER_SAMPLE_H
#define TIER_SAMPLE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_BIND		2
#define MPOL_F_NUMA_BALANCING	(1 << 13)
#define PAGE			4096UL

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* node @nid's free pages less its high watermarks: what the oracle fills */
static unsigned long fast_capacity(int nid)
{
	char path[96], line[256];
	unsigned long free_kb = 0, high = 0, v;
	int on = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d MemFree: %lu kB", &v) == 1)
			free_kb = v;
	fclose(f);
	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d,", &n) == 1)
			on = n == nid;
		else if (on && sscanf(line, " high %lu", &v) == 1)
			high += v;
	}
	fclose(f);
	return free_kb / 4 > high ? free_kb / 4 - high : 0;
}

/* where each sampled page is: node ids in @status, -errno if not mapped */
static int where(void **pages, int *status, unsigned long n)
{
	const unsigned long batch = 16384;

	for (unsigned long i = 0; i < n; i += batch) {
		unsigned long k = n - i < batch ? n - i : batch;

		if (syscall(SYS_move_pages, 0, k, pages + i, NULL, status + i, 0))
			return -1;
	}
	return 0;
}

/*
 * The pages the kernel has migrated between nodes since boot, by
 * /proc/vmstat: promotions, reclaim's demotions, DAMOS migrations (a
 * counter the kernel lacks counts 0).
 */
static unsigned long vm_moved(void)
{
	static const char *const keys[] = {
		"pgpromote_success", "pgdemote_kswapd", "pgdemote_direct",
		"pgdemote_khugepaged", "damon_migrate_hot", "damon_migrate_cold",
	};
	unsigned long v, sum = 0;
	char k[64];
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return 0;
	while (fscanf(f, "%63s %lu", k, &v) == 2)
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(k, keys[i]))
				sum += v;
	fclose(f);
	return sum;
}

#endif
