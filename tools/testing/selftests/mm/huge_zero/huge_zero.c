// SPDX-License-Identifier: GPL-2.0
/*
 * Huge-page clearing: a freshly faulted huge page is zero in every byte.
 * THP 2 MiB, hugetlb 2 MiB and hugetlb 1 GiB, faulted first at the first, a
 * middle or the last subpage.  Before each fault the same huge pages were
 * dirtied with a pattern by another process and freed, so stale data would
 * show.  For hugetlb the pool holds exactly one page of the size under test,
 * so the page that was dirtied is the page that is faulted.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "thp_settings.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT	26
#endif
#define MAP_HUGE_2MB	(21 << MAP_HUGE_SHIFT)
#define MAP_HUGE_1GB	(30 << MAP_HUGE_SHIFT)
#define HP_SYSFS	"/sys/kernel/mm/hugepages/hugepages-%lukB/nr_hugepages"
#define NODE_HP_SYSFS	"/sys/devices/system/node/node%d/hugepages/hugepages-%lukB/nr_hugepages"
/* the node with room for a 1 GiB page in the lab */
#define BIG_NODE	2

enum kind { THP, HUGETLB };

FIXTURE(huge_zero) {
	size_t size;
	long saved_pool;
	int pool_node;
};

FIXTURE_VARIANT(huge_zero) {
	enum kind kind;
	size_t size;
	/* fault first at this fraction of the page: 0, 1/2, or the last subpage */
	int where;
};

FIXTURE_VARIANT_ADD(huge_zero, thp_2m_first) {
	.kind = THP, .size = 2UL << 20, .where = 0,
};

FIXTURE_VARIANT_ADD(huge_zero, thp_2m_middle) {
	.kind = THP, .size = 2UL << 20, .where = 1,
};

FIXTURE_VARIANT_ADD(huge_zero, thp_2m_last) {
	.kind = THP, .size = 2UL << 20, .where = 2,
};

FIXTURE_VARIANT_ADD(huge_zero, hugetlb_2m_first) {
	.kind = HUGETLB, .size = 2UL << 20, .where = 0,
};

FIXTURE_VARIANT_ADD(huge_zero, hugetlb_2m_middle) {
	.kind = HUGETLB, .size = 2UL << 20, .where = 1,
};

FIXTURE_VARIANT_ADD(huge_zero, hugetlb_2m_last) {
	.kind = HUGETLB, .size = 2UL << 20, .where = 2,
};

FIXTURE_VARIANT_ADD(huge_zero, hugetlb_1g_first) {
	.kind = HUGETLB, .size = 1UL << 30, .where = 0,
};

FIXTURE_VARIANT_ADD(huge_zero, hugetlb_1g_middle) {
	.kind = HUGETLB, .size = 1UL << 30, .where = 1,
};

FIXTURE_VARIANT_ADD(huge_zero, hugetlb_1g_last) {
	.kind = HUGETLB, .size = 1UL << 30, .where = 2,
};

static char pool_path[160];

/* a sysfs number, or -1 if the file is not there (read_num() needs it) */
static long read_long(const char *path)
{
	return access(path, R_OK) ? -1 : (long)read_num(path);
}

/*
 * Ask for a pool of @pages pages; the caller reads the pool back to see what
 * it got.  write_num() exits on a refused write (a gigantic pool cannot grow
 * without CONFIG_CONTIG_ALLOC), so it runs in a child.
 */
static void set_pool(const char *path, long pages)
{
	pid_t pid;

	if (read_long(path) == pages || access(path, W_OK))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		write_num(path, pages);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

FIXTURE_SETUP(huge_zero)
{
	unsigned long kb = variant->size >> 10;
	char buf[160];

	self->size = variant->size;
	self->saved_pool = -1;
	if (variant->kind == THP) {
		if (!read_file("/sys/kernel/mm/transparent_hugepage/enabled",
			       buf, sizeof(buf)) || strstr(buf, "[never]"))
			SKIP(return, "THP not available");
		return;
	}
	/* a pool of exactly one page: the dirtied page is the faulted one */
	self->pool_node = variant->size > (2UL << 20) ? BIG_NODE : 0;
	snprintf(pool_path, sizeof(pool_path), NODE_HP_SYSFS, self->pool_node, kb);
	snprintf(buf, sizeof(buf), HP_SYSFS, kb);
	if (read_long(buf) > 0 && read_long(pool_path) <= 0)
		SKIP(return, "hugetlb %lu kB pool in use elsewhere", kb);
	self->saved_pool = read_long(pool_path);
	if (self->saved_pool < 0)
		SKIP(return, "no hugetlb %lu kB pages on node%d", kb, self->pool_node);
	set_pool(pool_path, 1);
	if (read_long(pool_path) != 1)
		SKIP(return, "cannot allocate a %lu kB page on node%d", kb,
		     self->pool_node);
}

FIXTURE_TEARDOWN(huge_zero)
{
	if (self->saved_pool >= 0)
		set_pool(pool_path, self->saved_pool);
}

static char *map_huge(enum kind kind, size_t size)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	char *p;

	if (kind == HUGETLB) {
		flags |= MAP_HUGETLB | (size > (2UL << 20) ? MAP_HUGE_1GB : MAP_HUGE_2MB);
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	/* THP: an aligned range inside a larger mapping */
	p = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	p = (char *)(((unsigned long)p + size - 1) & ~(size - 1));
	madvise(p, size, MADV_HUGEPAGE);
	return p;
}

/* kB of AnonHugePages in the mapping that contains @addr */
static long thp_kb(void *addr)
{
	unsigned long lo, hi, a = (unsigned long)addr;
	char line[256];
	long kb = -1;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = a >= lo && a < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* In a child: fault the huge page, fill it with a pattern, free it. */
static int dirty_in_child(enum kind kind, size_t size)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		char *p = map_huge(kind, size);

		if (!p)
			_exit(1);
		memset(p, 0x5a, size);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F_TIMEOUT(huge_zero, every_byte_zero, 300)
{
	size_t off, bad = 0, first_bad = 0, sub = 4096;
	char *p;

	ASSERT_EQ(dirty_in_child(variant->kind, self->size), 0);
	p = map_huge(variant->kind, self->size);
	ASSERT_NE(p, NULL);
	off = variant->where == 0 ? 0 :
	      variant->where == 1 ? self->size / 2 : self->size - sub;
	/* the first touch is a write at the chosen subpage: it faults the page */
	p[off + 100] = 1;
	if (variant->kind == THP && thp_kb(p) < (long)(self->size >> 10))
		SKIP(return, "no THP for the mapping (AnonHugePages %ld kB)",
		     thp_kb(p));
	p[off + 100] = 0;
	for (size_t i = 0; i < self->size; i += sizeof(long)) {
		if (*(long *)(p + i)) {
			if (!bad)
				first_bad = i;
			bad++;
		}
	}
	EXPECT_EQ(bad, 0) {
		TH_LOG("%zu non-zero words, first at offset %#zx", bad, first_bad);
	}
}

TEST_HARNESS_MAIN
