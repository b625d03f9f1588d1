// SPDX-License-Identifier: GPL-2.0
/*
 * DAMOS migrate_cold and CXL memory hot-remove / hot-add.  Needs the lab
 * booted with scripts/lab.sh -H: a 512 MiB DIMM on node2, and a node3 with
 * no memory at boot but a 512 MiB DIMM of its own; the DIMMs' blocks come
 * up offline.  Elsewhere the tests skip.
 *
 * - target_nid can name node3 before node3 has memory; the commit fails
 *   until its memory is online, then the scheme moves pages there;
 * - offlining all of node3 while a scheme migrates to it: offlining moves
 *   the pages away intact, the scheme's batches fail and are counted in
 *   damon_migrate_fail, a commit is refused, and once the memory is back
 *   the scheme moves pages to node3 again;
 * - offlining node2's DIMM while migrate_cold targets node2: the pages on
 *   it are moved, intact, and after onlining it again the scheme puts
 *   pages on it again.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#define FAST_NODE	0
#define SLOW_NODE	2
#define EMPTY_NODE	3
#define SET_SIZE	(32UL << 20)
#define SET_PAGES	(SET_SIZE / 4096)
#define WAIT_S		600
#define MEM		"/sys/devices/system/memory"
#define SCHEME0		DAMON_ADMIN "/kdamonds/0/contexts/0/schemes/0"
#define KD_STATE	DAMON_ADMIN "/kdamonds/0/state"
#define MAX_BLOCKS	64

/* the memory blocks of one node's DIMMs, and their physical range */
struct dimm {
	int nid;
	int nr;
	long block[MAX_BLOCKS];
	unsigned long start, end;
};

static bool block_is_dimm(long b, int *nid)
{
	char path[128], link[256];
	struct dirent *d;
	ssize_t n;
	DIR *dir;

	snprintf(path, sizeof(path), MEM "/memory%ld/firmware_node", b);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	/* an ACPI memory device: a DIMM */
	if (!strstr(link, "PNP0C80"))
		return false;
	snprintf(path, sizeof(path), MEM "/memory%ld", b);
	dir = opendir(path);
	if (!dir)
		return false;
	*nid = -1;
	while ((d = readdir(dir)))
		if (sscanf(d->d_name, "node%d", nid) == 1)
			break;
	closedir(dir);
	return *nid >= 0;
}

static void find_dimm(struct dimm *dm, int nid)
{
	unsigned long bs;
	struct dirent *d;
	char buf[64];
	DIR *dir;
	long b;
	int n;

	memset(dm, 0, sizeof(*dm));
	dm->nid = nid;
	dm->start = -1UL;
	if (read_file(MEM "/block_size_bytes", buf, sizeof(buf)) < 0)
		return;
	bs = strtoul(buf, NULL, 16);
	dir = opendir(MEM);
	if (!dir)
		return;
	while ((d = readdir(dir)) && dm->nr < MAX_BLOCKS) {
		if (sscanf(d->d_name, "memory%ld", &b) != 1 ||
		    !block_is_dimm(b, &n) || n != nid)
			continue;
		dm->block[dm->nr++] = b;
		if (b * bs < dm->start)
			dm->start = b * bs;
		if ((b + 1) * bs > dm->end)
			dm->end = (b + 1) * bs;
	}
	closedir(dir);
}

/*
 * Set every block of a DIMM to @state ("online_movable" or "offline").
 * Offlining migrates the pages away and may be refused for a while
 * (EBUSY, EAGAIN) when a page cannot move yet: try again.
 *
 * Return: 0, or -errno of the last failing write.
 */
static int dimm_set(struct dimm *dm, const char *state)
{
	bool online = !strncmp(state, "online", 6);
	int err = 0;

	for (int i = 0; i < dm->nr; i++) {
		char path[128], cur[32];

		snprintf(path, sizeof(path), MEM "/memory%ld/state", dm->block[i]);
		for (int try = 0; try < 20; try++) {
			if (read_file(path, cur, sizeof(cur)) > 0 &&
			    (strncmp(cur, "online", 6) == 0) == online) {
				err = 0;
				break;
			}
			err = write_file(path, "%s", state);
			if (!err)
				break;
			sleep(2);
		}
		if (err)
			return err;
	}
	return 0;
}

static bool node_has_memory(int nid)
{
	bool nodes[MAX_NODES];
	char buf[256];

	if (read_file("/sys/devices/system/node/has_memory", buf, sizeof(buf)) < 0)
		return false;
	parse_nodelist(buf, nodes, MAX_NODES);
	return nid < MAX_NODES && nodes[nid];
}

/* pages of [buf, buf + len) whose frame is in [start, end) (needs root) */
static long pages_in_range(void *buf, size_t len, unsigned long start,
			   unsigned long end)
{
	long ps = getpagesize(), n = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return -1;
	for (size_t off = 0; off < len; off += ps) {
		uint64_t e;
		unsigned long pa;

		if (pread(fd, &e, sizeof(e),
			  ((unsigned long)buf + off) / ps * sizeof(e)) != sizeof(e))
			break;
		if (!(e >> 63))
			continue;
		pa = (e & ((1ULL << 55) - 1)) * ps;
		n += pa >= start && pa < end;
	}
	close(fd);
	return n;
}

/* fault @len on @nid under MPOL_BIND, without resetting the policy */
static void *alloc_bound(size_t len, int nid)
{
	unsigned long mask = 1UL << nid;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	if (syscall(SYS_mbind, p, len, 2 /* MPOL_BIND */, &mask,
		    sizeof(mask) * 8, 0)) {
		munmap(p, len);
		return NULL;
	}
	memset(p, 1, len);
	return p;
}

static void snap_fail(long *fail, long *cold)
{
	vm_stat_refresh();
	*fail = vmstat("/proc/vmstat", "damon_migrate_fail");
	*cold = vmstat("/proc/vmstat", "damon_migrate_cold");
}

/* one kdamond, one scheme: migrate_cold from node0's range to @nid */
static int setup_cold(int nid)
{
	struct damos_cfg cold = {
		.action = "migrate_cold", .target_nid = nid,
		.max_nr_accesses = 0, .min_age = 10,
	};

	if (node_phys_range(FAST_NODE, &cold.start, &cold.end))
		return -ENOENT;
	return damon_start(&cold, 1);
}

FIXTURE(hotplug) {
	struct dimm d2, d3;
	char *bufs[4];
};

FIXTURE_SETUP(hotplug)
{
	memset(self->bufs, 0, sizeof(self->bufs));
	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	find_dimm(&self->d2, SLOW_NODE);
	find_dimm(&self->d3, EMPTY_NODE);
	if (!self->d2.nr || !self->d3.nr)
		SKIP(return, "no DIMMs on node%d and node%d (lab.sh -H)",
		     SLOW_NODE, EMPTY_NODE);
	if (vmstat("/proc/vmstat", "damon_migrate_fail") < 0)
		SKIP(return, "kernel without the tiering accounting layer");
	if (damon_clear_stopped() == -EBUSY)
		SKIP(return, "a kdamond runs: not this test's to stop");
	ASSERT_EQ(read_long(DAMON_ADMIN "/kdamonds/nr_kdamonds"), 0);
	/* every test starts with the DIMMs offline: node3 without memory */
	ASSERT_EQ(dimm_set(&self->d2, "offline"), 0);
	ASSERT_EQ(dimm_set(&self->d3, "offline"), 0);
	ASSERT_FALSE(node_has_memory(EMPTY_NODE));
	TH_LOG("node2 DIMM: %d blocks at %#lx-%#lx; node3 DIMM: %d blocks at %#lx-%#lx",
	       self->d2.nr, self->d2.start, self->d2.end, self->d3.nr,
	       self->d3.start, self->d3.end);
}

FIXTURE_TEARDOWN(hotplug)
{
	damon_stop();
	for (int i = 0; i < 4; i++)
		if (self->bufs[i])
			munmap(self->bufs[i], SET_SIZE);
	dimm_set(&self->d2, "offline");
	dimm_set(&self->d3, "offline");
}

TEST_F_TIMEOUT(hotplug, target_nid_before_online, WAIT_S + 300)
{
	long counts[MAX_NODES], on3;

	/* a possible node without memory is accepted at write time */
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "1"), 0);
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/0/contexts/nr_contexts", "1"), 0);
	ASSERT_EQ(write_file(DAMON_ADMIN "/kdamonds/0/contexts/0/schemes/nr_schemes", "1"), 0);
	EXPECT_EQ(write_file(SCHEME0 "/target_nid", "%d", EMPTY_NODE), 0);
	EXPECT_EQ(read_long(SCHEME0 "/target_nid"), EMPTY_NODE);
	ASSERT_EQ(damon_stop(), 0);

	/* but a migrate scheme for it is not committed */
	self->bufs[0] = alloc_on_node(SET_SIZE, FAST_NODE);
	ASSERT_NE(self->bufs[0], NULL);
	fill_pattern(self->bufs[0], SET_SIZE, 31);
	EXPECT_EQ(setup_cold(EMPTY_NODE), -EINVAL);
	EXPECT_EQ(kdamond_pid(), -1);

	/* its memory comes online: now the scheme runs and moves pages there */
	ASSERT_EQ(dimm_set(&self->d3, "online_movable"), 0);
	ASSERT_TRUE(node_has_memory(EMPTY_NODE));
	EXPECT_EQ(write_file(KD_STATE, "on"), 0);
	on3 = wait_for_pages_on_node(self->bufs[0], SET_SIZE, EMPTY_NODE,
				     SET_PAGES * 9 / 10, WAIT_S, counts);
	TH_LOG("cold set: node0 %ld node2 %ld node3 %ld pages", counts[0],
	       counts[2], counts[3]);
	EXPECT_GE(on3, SET_PAGES * 9 / 10);
	EXPECT_TRUE(check_pattern(self->bufs[0], SET_SIZE, 31));
}

TEST_F_TIMEOUT(hotplug, offline_target_node_while_migrating, 3 * WAIT_S + 300)
{
	long counts[MAX_NODES], fail0, cold0, fail1, cold1, on3;

	ASSERT_EQ(dimm_set(&self->d3, "online_movable"), 0);
	self->bufs[0] = alloc_on_node(SET_SIZE, FAST_NODE);
	ASSERT_NE(self->bufs[0], NULL);
	fill_pattern(self->bufs[0], SET_SIZE, 41);
	ASSERT_EQ(setup_cold(EMPTY_NODE), 0);
	on3 = wait_for_pages_on_node(self->bufs[0], SET_SIZE, EMPTY_NODE,
				     SET_PAGES / 2, WAIT_S, counts);
	ASSERT_GE(on3, SET_PAGES / 2);

	/* node3's memory goes while DAMON runs */
	ASSERT_EQ(dimm_set(&self->d3, "offline"), 0);
	ASSERT_FALSE(node_has_memory(EMPTY_NODE));
	/* offlining moved the first set off node3, intact */
	count_pages_per_node(self->bufs[0], SET_SIZE, counts);
	EXPECT_EQ(counts[EMPTY_NODE], 0);
	EXPECT_TRUE(check_pattern(self->bufs[0], SET_SIZE, 41));

	/* a second cold set on node0, which the scheme can only fail to move */
	snap_fail(&fail0, &cold0);
	self->bufs[1] = alloc_on_node(SET_SIZE, FAST_NODE);
	ASSERT_NE(self->bufs[1], NULL);
	fill_pattern(self->bufs[1], SET_SIZE, 42);

	/* the scheme goes on; its batches for node3 fail and are counted */
	for (int s = 0; s < WAIT_S; s++) {
		snap_fail(&fail1, &cold1);
		if (fail1 - fail0 >= SET_PAGES / 2)
			break;
		sleep(1);
	}
	count_pages_per_node(self->bufs[1], SET_SIZE, counts);
	TH_LOG("node3 offline: damon_migrate_fail +%ld, damon_migrate_cold +%ld",
	       fail1 - fail0, cold1 - cold0);
	TH_LOG("second set: node0 %ld node1 %ld node2 %ld node3 %ld pages",
	       counts[0], counts[1], counts[2], counts[3]);
	EXPECT_GT(fail1 - fail0, 0);
	EXPECT_GT(kdamond_pid(), 0);
	/* a commit for a node without memory is refused, and stops nothing */
	EXPECT_EQ(write_file(KD_STATE, "commit"), -EINVAL);
	sleep(1);
	EXPECT_GT(kdamond_pid(), 0) {
		TH_LOG("the refused commit stopped the kdamond");
	}
	EXPECT_TRUE(check_pattern(self->bufs[1], SET_SIZE, 42));
	EXPECT_EQ(counts[EMPTY_NODE], 0);
	/* nothing went anywhere else either */
	EXPECT_EQ(cold1 - cold0, 0);

	/* back online: the running scheme moves pages to node3 again */
	ASSERT_EQ(dimm_set(&self->d3, "online_movable"), 0);
	if (kdamond_pid() <= 0)
		ASSERT_EQ(write_file(KD_STATE, "on"), 0);
	on3 = wait_for_pages_on_node(self->bufs[1], SET_SIZE, EMPTY_NODE,
				     SET_PAGES / 2, WAIT_S, counts);
	TH_LOG("after re-onlining: second set node0 %ld node3 %ld pages",
	       counts[0], counts[3]);
	EXPECT_GE(on3, SET_PAGES / 2);
	EXPECT_TRUE(check_pattern(self->bufs[1], SET_SIZE, 42));
	EXPECT_TRUE(check_pattern(self->bufs[0], SET_SIZE, 41));
}

TEST_F_TIMEOUT(hotplug, offline_node2_dimm_under_migrate_cold, 2 * WAIT_S + 300)
{
	long counts[MAX_NODES], on_dimm, fail0, cold0, fail1, cold1, n;
	struct dimm *d = &self->d2;

	ASSERT_EQ(dimm_set(d, "online_movable"), 0);
	/* user pages bound to node2 take its movable zone (the DIMM) first */
	self->bufs[0] = alloc_bound(SET_SIZE, SLOW_NODE);
	ASSERT_NE(self->bufs[0], NULL);
	fill_pattern(self->bufs[0], SET_SIZE, 51);
	on_dimm = pages_in_range(self->bufs[0], SET_SIZE, d->start, d->end);
	TH_LOG("node2 set: %ld of %lu pages on the DIMM", on_dimm, SET_PAGES);
	ASSERT_GT(on_dimm, 0);

	/* migrate_cold towards node2 runs while the DIMM goes away */
	self->bufs[1] = alloc_on_node(SET_SIZE, FAST_NODE);
	ASSERT_NE(self->bufs[1], NULL);
	fill_pattern(self->bufs[1], SET_SIZE, 52);
	snap_fail(&fail0, &cold0);
	ASSERT_EQ(setup_cold(SLOW_NODE), 0);
	sleep(5);
	ASSERT_EQ(dimm_set(d, "offline"), 0);
	snap_fail(&fail1, &cold1);
	TH_LOG("during the offline: damon_migrate_cold +%ld, damon_migrate_fail +%ld",
	       cold1 - cold0, fail1 - fail0);
	n = pages_in_range(self->bufs[0], SET_SIZE, d->start, d->end);
	EXPECT_EQ(n, 0);
	EXPECT_TRUE(check_pattern(self->bufs[0], SET_SIZE, 51));
	EXPECT_TRUE(check_pattern(self->bufs[1], SET_SIZE, 52));
	EXPECT_GT(kdamond_pid(), 0);

	/* online again: the scheme puts a new cold set on node2, DIMM first */
	ASSERT_EQ(dimm_set(d, "online_movable"), 0);
	self->bufs[2] = alloc_on_node(SET_SIZE, FAST_NODE);
	ASSERT_NE(self->bufs[2], NULL);
	fill_pattern(self->bufs[2], SET_SIZE, 53);
	wait_for_pages_on_node(self->bufs[2], SET_SIZE, SLOW_NODE,
			       SET_PAGES * 9 / 10, WAIT_S, counts);
	on_dimm = pages_in_range(self->bufs[2], SET_SIZE, d->start, d->end);
	TH_LOG("after re-onlining: new set node0 %ld node2 %ld, %ld on the DIMM",
	       counts[0], counts[2], on_dimm);
	EXPECT_GE(counts[SLOW_NODE], SET_PAGES * 9 / 10);
	EXPECT_GT(on_dimm, 0);
	EXPECT_TRUE(check_pattern(self->bufs[2], SET_SIZE, 53));
	EXPECT_TRUE(check_pattern(self->bufs[0], SET_SIZE, 51));
}

TEST_HARNESS_MAIN
