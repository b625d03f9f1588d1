// SPDX-License-Identifier: GPL-2.0
/*
 * Early-lifetime fast NUMA migration (since 4.19): a new task whose private
 * pages sit on the remote DRAM node gets them moved to its local node within
 * its first NUMA scan passes, without waiting for the two-fault filter.
 * Runs on node0 and node1 (both DRAM) with numa_balancing=1.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#define SET_SIZE	(32UL << 20)
#define SET_PAGES	(SET_SIZE / 4096)
#define WAIT_S		60
#define NB		"/proc/sys/kernel/numa_balancing"
#define NB_DEBUG	"/sys/kernel/debug/sched/numa_balancing"

FIXTURE(early) {
	long saved_mode, saved_delay, saved_min;
};

FIXTURE_SETUP(early)
{
	self->saved_mode = read_long(NB);
	if (self->saved_mode < 0)
		SKIP(return, "no NUMA balancing");
	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "no node1");
	self->saved_delay = read_long(NB_DEBUG "/scan_delay_ms");
	self->saved_min = read_long(NB_DEBUG "/scan_period_min_ms");
	/* scan soon and often, so that "early" is seconds, not minutes */
	write_file(NB_DEBUG "/scan_delay_ms", "100");
	write_file(NB_DEBUG "/scan_period_min_ms", "100");
	ASSERT_EQ(write_file(NB, "1"), 0);
}

FIXTURE_TEARDOWN(early)
{
	write_file(NB, "%ld", self->saved_mode);
	if (self->saved_delay >= 0)
		write_file(NB_DEBUG "/scan_delay_ms", "%ld", self->saved_delay);
	if (self->saved_min >= 0)
		write_file(NB_DEBUG "/scan_period_min_ms", "%ld", self->saved_min);
}

/*
 * The new task: runs on CPU0 (node0), faults its set on node1, then keeps
 * reading it.  Exits with the number of seconds until 90% of the set was
 * local, or 255 if that did not happen within WAIT_S.
 */
static int new_task(void)
{
	long counts[MAX_NODES];
	cpu_set_t cpus;
	char *buf;
	time_t t0;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		return 254;
	buf = alloc_on_node(SET_SIZE, 1);
	if (!buf || count_pages_per_node(buf, SET_SIZE, counts) ||
	    counts[1] != SET_PAGES)
		return 253;
	t0 = time(NULL);
	while (time(NULL) - t0 < WAIT_S) {
		for (int i = 0; i < 20; i++)
			for (size_t off = 0; off < SET_SIZE; off += 4096)
				READ_ONCE(buf[off]);
		count_pages_per_node(buf, SET_SIZE, counts);
		if (counts[0] >= SET_PAGES * 9 / 10) {
			printf("# local after %ld s: node0 %ld node1 %ld pages\n",
			       (long)(time(NULL) - t0), counts[0], counts[1]);
			return time(NULL) - t0;
		}
	}
	printf("# not local after %d s: node0 %ld node1 %ld pages\n", WAIT_S,
	       counts[0], counts[1]);
	return 255;
}

TEST_F_TIMEOUT(early, remote_pages_move_local, WAIT_S + 60)
{
	long m0 = vmstat("/proc/vmstat", "numa_pages_migrated"), migrated;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(new_task());
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	vm_stat_refresh();
	migrated = vmstat("/proc/vmstat", "numa_pages_migrated") - m0;
	TH_LOG("child exit %d, numa_pages_migrated +%ld", WEXITSTATUS(status),
	       migrated);
	EXPECT_LT(WEXITSTATUS(status), 253);
	EXPECT_GE(migrated, (long)SET_PAGES * 9 / 10);
}

TEST_HARNESS_MAIN
