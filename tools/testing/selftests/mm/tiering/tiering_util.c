// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the memory-tiering selftests.  See tiering_util.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "tiering_util.h"

#define MPOL_DEFAULT	0
#define MPOL_BIND	2

/**
 * write_file() - write a formatted string to a (sysfs) file
 * @path: file to write
 * @fmt: printf format
 *
 * Return: 0 on success, -errno of the failing open or write otherwise.
 */
int write_file(const char *path, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int fd, len, ret = 0;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

/**
 * read_file() - read a small file into a NUL-terminated buffer
 * @path: file to read
 * @buf: destination
 * @len: size of @buf
 *
 * Return: bytes read, or -errno.
 */
int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/**
 * read_long() - read a file holding one integer
 * @path: file to read
 *
 * Return: the value, or LONG_MIN if the file cannot be read.
 */
long read_long(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) < 0)
		return -__LONG_MAX__ - 1;
	return strtol(buf, NULL, 0);
}

/**
 * vmstat() - one counter of a vmstat-format file
 * @file: "/proc/vmstat" or a node's vmstat file
 * @name: counter name
 *
 * Return: the counter, or -1 if it is not there.
 */
long vmstat(const char *file, const char *name)
{
	char key[128];
	long val, ret = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%127s %ld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			ret = val;
			break;
		}
	}
	fclose(f);
	return ret;
}

/**
 * node_phys_range() - physical address range spanned by a node's memory blocks
 * @nid: node
 * @start: first byte
 * @end: one past the last byte
 *
 * Return: 0, or -1 if the node has no memory blocks.
 */
int node_phys_range(int nid, unsigned long *start, unsigned long *end)
{
	unsigned long bs, lo = -1UL, hi = 0, idx;
	char path[128], buf[64];
	struct dirent *d;
	DIR *dir;

	if (read_file("/sys/devices/system/memory/block_size_bytes", buf, sizeof(buf)) < 0)
		return -1;
	bs = strtoul(buf, NULL, 16);
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", nid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (sscanf(d->d_name, "memory%lu", &idx) != 1)
			continue;
		if (idx * bs < lo)
			lo = idx * bs;
		if ((idx + 1) * bs > hi)
			hi = (idx + 1) * bs;
	}
	closedir(dir);
	if (hi <= lo)
		return -1;
	*start = lo;
	*end = hi;
	return 0;
}

/**
 * node_mem_total_kb() - MemTotal of a node
 * @nid: node
 *
 * Return: kB, or -1.
 */
long node_mem_total_kb(int nid)
{
	char path[128], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d MemTotal: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/**
 * parse_nodelist() - parse a "0-1,3" style list
 * @list: the text
 * @nodes: set to true for each listed node
 * @max: size of @nodes
 *
 * Return: number of nodes listed.
 */
int parse_nodelist(const char *list, bool *nodes, int max)
{
	const char *p = list;
	int n = 0;

	memset(nodes, 0, max * sizeof(*nodes));
	while (*p >= '0' && *p <= '9') {
		char *q;
		long a = strtol(p, &q, 10), b = a;

		if (*q == '-')
			b = strtol(q + 1, &q, 10);
		for (; a <= b && a < max; a++, n++)
			nodes[a] = true;
		p = *q == ',' ? q + 1 : q;
	}
	return n;
}

/**
 * mem_tier_of() - memory tier id holding a node
 * @nid: node
 *
 * Return: the N of /sys/devices/virtual/memory_tiering/memory_tierN, or -1.
 */
int mem_tier_of(int nid)
{
	const char *base = "/sys/devices/virtual/memory_tiering";
	bool nodes[MAX_NODES];
	char path[512], buf[256];
	struct dirent *d;
	int tier, ret = -1;
	DIR *dir = opendir(base);

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (sscanf(d->d_name, "memory_tier%d", &tier) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/nodelist", base, d->d_name);
		if (read_file(path, buf, sizeof(buf)) < 0)
			continue;
		parse_nodelist(buf, nodes, MAX_NODES);
		if (nid < MAX_NODES && nodes[nid])
			ret = tier;
	}
	closedir(dir);
	return ret;
}

static long mbind_node(void *buf, size_t len, int mode, int nid, unsigned int flags)
{
	unsigned long mask = nid >= 0 ? 1UL << nid : 0;

	return syscall(SYS_mbind, buf, len, mode, nid >= 0 ? &mask : NULL,
		       nid >= 0 ? sizeof(mask) * 8 : 0, flags);
}

/**
 * alloc_on_node() - anonymous memory, faulted in on one node
 * @len: bytes (multiple of the page size)
 * @nid: node to fault the pages on
 *
 * The pages are faulted under MPOL_BIND to @nid, then the policy is reset to
 * default, so later migrations are not held back by it.
 *
 * Return: the mapping, or NULL.
 */
void *alloc_on_node(size_t len, int nid)
{
	void *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return NULL;
	madvise(buf, len, MADV_NOHUGEPAGE);
	if (mbind_node(buf, len, MPOL_BIND, nid, 0) ||
	    (memset(buf, 1, len), mbind_node(buf, len, MPOL_DEFAULT, -1, 0))) {
		munmap(buf, len);
		return NULL;
	}
	return buf;
}

/**
 * move_to_node() - migrate a range to one node with move_pages(2)
 * @buf: start
 * @len: bytes
 * @nid: destination
 *
 * Return: number of pages not on @nid afterwards, or -1.
 */
int move_to_node(void *buf, size_t len, int nid)
{
	long ps = sysconf(_SC_PAGESIZE), n = len / ps, i, left = 0;
	void **pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(int)), *status = calloc(n, sizeof(int));

	if (!pages || !nodes || !status) {
		left = -1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		pages[i] = (char *)buf + i * ps;
		nodes[i] = nid;
	}
	if (syscall(SYS_move_pages, 0, n, pages, nodes, status, 0) < 0) {
		left = -1;
		goto out;
	}
	for (i = 0; i < n; i++)
		left += status[i] != nid;
out:
	free(pages);
	free(nodes);
	free(status);
	return left;
}

/**
 * count_pages_per_node() - where the pages of a range are
 * @buf: start
 * @len: bytes
 * @counts: MAX_NODES entries, filled with the number of pages per node
 *
 * Uses move_pages(2) with a NULL node array, which only queries.
 *
 * Return: pages whose node could not be determined, or -1.
 */
int count_pages_per_node(void *buf, size_t len, long *counts)
{
	long ps = sysconf(_SC_PAGESIZE), n = len / ps, i;
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(int)), bad = 0;

	memset(counts, 0, MAX_NODES * sizeof(*counts));
	if (!pages || !status) {
		bad = -1;
		goto out;
	}
	for (i = 0; i < n; i++)
		pages[i] = (char *)buf + i * ps;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) < 0) {
		bad = -1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (status[i] >= 0 && status[i] < MAX_NODES)
			counts[status[i]]++;
		else
			bad++;
	}
out:
	free(pages);
	free(status);
	return bad;
}

/**
 * pgdemote() - pages demoted so far, by kswapd, direct reclaim and khugepaged
 *
 * Return: the sum of /proc/vmstat's pgdemote_* counters.
 */
long pgdemote(void)
{
	return vmstat("/proc/vmstat", "pgdemote_kswapd") +
	       vmstat("/proc/vmstat", "pgdemote_direct") +
	       vmstat("/proc/vmstat", "pgdemote_khugepaged");
}

/**
 * kswapd_pid() - the pid of a node's kswapd
 * @nid: the node
 *
 * Return: the pid of kswapd@nid, or 0.
 */
int kswapd_pid(int nid)
{
	char want[32], comm[32], path[64];
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int pid = 0, p;

	snprintf(want, sizeof(want), "kswapd%d\n", nid);
	while (dir && !pid && (d = readdir(dir))) {
		p = atoi(d->d_name);
		snprintf(path, sizeof(path), "/proc/%d/comm", p);
		if (p > 0 && read_file(path, comm, sizeof(comm)) > 0 &&
		    !strcmp(comm, want))
			pid = p;
	}
	if (dir)
		closedir(dir);
	return pid;
}

/**
 * task_state() - a task's state letter from /proc/<pid>/stat
 * @pid: the task
 *
 * Return: the letter ('S' for kswapd asleep), or '?'.
 */
char task_state(int pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return '?';
	p = strrchr(buf, ')');
	return p ? p[2] : '?';
}

/**
 * count_after_demotion() - place a range's pages once demotion has stopped
 * @nid: the node the range is bound to, whose kswapd demotes
 * @buf: start
 * @len: bytes
 * @counts: MAX_NODES entries, filled as by count_pages_per_node()
 * @timeout_s: give up after this many seconds
 * @quiet_s: where to store the seconds it took
 *
 * A fill past a node's memory returns with the node below its high
 * watermark, and its kswapd goes on demoting for a few seconds, in batches
 * of up to 32 pages.  Those pages are isolated and, from their unmap to the
 * end of their copy, mapped by migration entries, for which move_pages(2)
 * reports -ENOENT: a query made while kswapd works can find a batch in
 * flight, even the query right after one that found none.  So wait for the
 * end of demotion itself: kswapd@nid asleep, no page isolated and no page
 * demoted over the last second; then place the pages with one query and
 * keep its result.
 *
 * Return: pages of that query without a node (0 unless a migration
 * started anew), -1 if the query failed; *@quiet_s: seconds it took,
 * @timeout_s if demotion did not stop (then the last query's result).
 */
int count_after_demotion(int nid, void *buf, size_t len, long *counts,
			 int timeout_s, int *quiet_s)
{
	int pid = kswapd_pid(nid), bad = -1, s;
	long last = -1;

	for (s = 0; s < timeout_s; s++) {
		long demoted, isolated;

		vm_stat_refresh();
		demoted = pgdemote();
		isolated = vmstat("/proc/vmstat", "nr_isolated_anon");
		if (demoted == last && isolated == 0 &&
		    (!pid || task_state(pid) == 'S')) {
			bad = count_pages_per_node(buf, len, counts);
			if (!bad)
				break;
		}
		last = demoted;
		sleep(1);
	}
	*quiet_s = s;
	return s < timeout_s ? bad : count_pages_per_node(buf, len, counts);
}

/**
 * wait_for_pages_on_node() - poll a range's placement until enough is on a node
 * @buf: start
 * @len: bytes
 * @nid: the node
 * @want: pages wanted on @nid
 * @timeout_s: give up after this many seconds
 * @counts: MAX_NODES entries, the last placement seen
 *
 * Return: pages on @nid when done waiting.
 */
long wait_for_pages_on_node(void *buf, size_t len, int nid, long want,
			    int timeout_s, long *counts)
{
	for (int s = 0; s < timeout_s; s++) {
		count_pages_per_node(buf, len, counts);
		if (counts[nid] >= want)
			break;
		sleep(1);
	}
	return counts[nid];
}

/**
 * fill_pattern() - write a seed-dependent pattern, one word per 64 bytes
 * @buf: start
 * @len: bytes
 * @seed: pattern seed
 */
void fill_pattern(void *buf, size_t len, unsigned int seed)
{
	unsigned long *p = buf;
	size_t i;

	for (i = 0; i < len / sizeof(*p); i += 8)
		p[i] = (i * 2654435761UL) ^ seed;
}

/**
 * check_pattern() - verify what fill_pattern() wrote
 * @buf: start
 * @len: bytes
 * @seed: pattern seed
 *
 * Return: true if intact.
 */
bool check_pattern(void *buf, size_t len, unsigned int seed)
{
	unsigned long *p = buf;
	size_t i;

	for (i = 0; i < len / sizeof(*p); i += 8)
		if (p[i] != ((i * 2654435761UL) ^ seed))
			return false;
	return true;
}

static void *toucher_loop(void *arg)
{
	struct toucher *t = arg;
	long ps = getpagesize();

	for (unsigned long pass = 0; !READ_ONCE(t->stop); pass++) {
		for (size_t off = 0; off < t->len; off += ps)
			WRITE_ONCE(t->buf[off + 8], t->buf[off + 8] + 1);
		/*
		 * DAMON clears accessed bits without a TLB flush; QEMU TCG
		 * sets them again only on a TLB refill, and its TLB holds the
		 * whole buffer.  Force refills now and then, as a busy
		 * machine's TLB pressure would.
		 */
		if (pass % 16 == 15) {
			mprotect(t->buf, t->len, PROT_READ);
			mprotect(t->buf, t->len, PROT_READ | PROT_WRITE);
		}
	}
	return NULL;
}

/**
 * toucher_start() - start a thread that keeps writing every page of a buffer
 * @t: the toucher
 * @buf: the buffer
 * @len: its length
 *
 * Return: 0, or the pthread_create() error.
 */
int toucher_start(struct toucher *t, void *buf, size_t len)
{
	t->buf = buf;
	t->len = len;
	t->stop = 0;
	return pthread_create(&t->thread, NULL, toucher_loop, t);
}

/**
 * toucher_stop() - stop and join a toucher thread
 * @t: the toucher
 */
void toucher_stop(struct toucher *t)
{
	WRITE_ONCE(t->stop, 1);
	pthread_join(t->thread, NULL);
}

/**
 * trace_clear() - empty the tracefs ring buffer
 *
 * Writing to "trace" clears it only if the file is opened with O_TRUNC.
 *
 * Return: 0, or -errno.
 */
int trace_clear(void)
{
	int fd = open("/sys/kernel/tracing/trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * Scan the trace buffer for tiering:tiering_migrate events from @src to @dst
 * carrying @reason: the sum of their nr_moved, their number in *@events and
 * the largest nr_moved + nr_failed in *@largest.  -1 if it cannot be read.
 */
static long trace_scan(int src, int dst, const char *reason, long *events,
		       long *largest)
{
	char line[512], want[96];
	long sum = 0, moved, failed;
	FILE *f = fopen("/sys/kernel/tracing/trace", "r");

	*events = 0;
	*largest = 0;
	if (!f)
		return -1;
	snprintf(want, sizeof(want), "src_nid=%d dst_nid=%d ", src, dst);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want);

		if (!p || !strstr(p, reason) ||
		    sscanf(p + strlen(want), "nr_moved=%ld nr_failed=%ld",
			   &moved, &failed) != 2)
			continue;
		sum += moved;
		(*events)++;
		if (moved + failed > *largest)
			*largest = moved + failed;
	}
	fclose(f);
	return sum;
}

/**
 * trace_moved() - sum the pages of tiering:tiering_migrate events
 * @src: source node of the events to count
 * @dst: destination node of the events to count
 * @reason: "reason=..." text the events must carry
 * @events: set to the number of events counted
 *
 * Return: the sum of nr_moved over the matching events in the trace
 * buffer, or -1 if it cannot be read.
 */
long trace_moved(int src, int dst, const char *reason, long *events)
{
	long largest;

	return trace_scan(src, dst, reason, events, &largest);
}

/**
 * trace_largest() - the largest tiering:tiering_migrate event in the trace
 * @src: source node of the events to look at
 * @dst: destination node of the events to look at
 * @reason: "reason=..." text the events must carry
 *
 * Return: the largest nr_moved + nr_failed of the matching events in the
 * trace buffer (0 if none), or -1 if it cannot be read.
 */
long trace_largest(int src, int dst, const char *reason)
{
	long events, largest;

	if (trace_scan(src, dst, reason, &events, &largest) < 0)
		return -1;
	return largest;
}

/**
 * vm_stat_refresh() - fold the per-cpu vmstat deltas into the global counters
 *
 * Return: 0, or -errno.
 */
int vm_stat_refresh(void)
{
	return write_file("/proc/sys/vm/stat_refresh", "1");
}

#define KD	DAMON_ADMIN "/kdamonds/0"
#define CTX	KD "/contexts/0"

static int damon_scheme_setup(int i, const struct damos_cfg *c)
{
	char d[256], p[320];
	int err = 0;

	snprintf(d, sizeof(d), CTX "/schemes/%d", i);
#define W(file, fmt, ...) do {						\
		snprintf(p, sizeof(p), "%s/%s", d, file);		\
		err = err ? err : write_file(p, fmt, __VA_ARGS__);	\
	} while (0)
	W("action", "%s", c->action);
	W("target_nid", "%d", c->target_nid);
	W("access_pattern/sz/min", "%d", 0);
	W("access_pattern/sz/max", "%lu", c->end - c->start);
	W("access_pattern/nr_accesses/max", "%u", c->max_nr_accesses);
	W("access_pattern/nr_accesses/min", "%u", c->min_nr_accesses);
	W("access_pattern/age/max", "%u", 4000000000U);
	W("access_pattern/age/min", "%u", c->min_age);
#undef W
	return err;
}

/**
 * damon_start() - start one kdamond, one paddr context, one region per scheme
 * @schemes: the schemes, in ascending order of their regions
 * @nr_schemes: number of schemes
 *
 * Region i is [@schemes[i].start, @schemes[i].end).  DAMOS applies every
 * scheme to every region; a migration towards the node a page already sits
 * on is a no-op, so a migrate_cold scheme for node0 and a migrate_hot scheme
 * for node2 can share the context.  Sampling 5 ms, aggregation 100 ms,
 * 100 to 1000 regions (about 20 MiB per region on a 2 GiB node at first).
 *
 * Return: 0, or -errno of the first failing sysfs write.
 */
int damon_start(const struct damos_cfg *schemes, int nr_schemes)
{
	char p[256];
	int err;

	err = write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "1");
	err = err ? err : write_file(KD "/contexts/nr_contexts", "1");
	err = err ? err : write_file(CTX "/operations", "paddr");
	err = err ? err : write_file(CTX "/monitoring_attrs/intervals/sample_us", "5000");
	err = err ? err : write_file(CTX "/monitoring_attrs/intervals/aggr_us", "100000");
	err = err ? err : write_file(CTX "/monitoring_attrs/intervals/update_us", "1000000");
	err = err ? err : write_file(CTX "/monitoring_attrs/nr_regions/max", "1000");
	err = err ? err : write_file(CTX "/monitoring_attrs/nr_regions/min", "100");
	err = err ? err : write_file(CTX "/targets/nr_targets", "1");
	err = err ? err : write_file(CTX "/targets/0/regions/nr_regions", "%d", nr_schemes);
	for (int i = 0; i < nr_schemes && !err; i++) {
		snprintf(p, sizeof(p), CTX "/targets/0/regions/%d/end", i);
		err = write_file(p, "%lu", schemes[i].end);
		snprintf(p, sizeof(p), CTX "/targets/0/regions/%d/start", i);
		err = err ? err : write_file(p, "%lu", schemes[i].start);
	}
	err = err ? err : write_file(CTX "/schemes/nr_schemes", "%d", nr_schemes);
	for (int i = 0; i < nr_schemes && !err; i++)
		err = damon_scheme_setup(i, &schemes[i]);
	return err ? err : write_file(KD "/state", "on");
}

/**
 * damon_stop() - stop the kdamond and remove it
 *
 * Return: 0, or -errno.
 */
int damon_stop(void)
{
	char buf[16];

	if (read_file(KD "/state", buf, sizeof(buf)) > 0 && !strncmp(buf, "on", 2))
		write_file(KD "/state", "off");
	return write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "0");
}

/**
 * damon_clear_stopped() - remove the kdamond directories, none running
 *
 * Tests, DAMON's own selftests among them, leave their kdamond directories
 * behind once their kdamonds stop; writing 0 to nr_kdamonds removes them.
 * A kdamond that runs is somebody else's and is left alone.
 *
 * Return: 0 once no kdamond directory is left, -EBUSY if a kdamond runs,
 * or -errno of a failing sysfs access.
 */
int damon_clear_stopped(void)
{
	char p[128], buf[16];
	int err, n;

	err = read_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", buf, sizeof(buf));
	if (err < 0)
		return err;
	n = atoi(buf);
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), DAMON_ADMIN "/kdamonds/%d/state", i);
		if (read_file(p, buf, sizeof(buf)) > 0 && !strncmp(buf, "on", 2))
			return -EBUSY;
	}
	return n ? write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "0") : 0;
}

/**
 * kdamond_pid() - the pid of kdamond 0
 *
 * DAMON's sysfs gives EBUSY while the kdamond holds its lock: the pid is
 * read again, for up to a second.
 *
 * Return: the pid, -1 if the kdamond is not running, LONG_MIN if it cannot
 * be read.
 */
long kdamond_pid(void)
{
	long pid = read_long(DAMON_ADMIN "/kdamonds/0/pid");

	for (int try = 0; try < 100 && pid == -__LONG_MAX__ - 1; try++) {
		usleep(10000);
		pid = read_long(DAMON_ADMIN "/kdamonds/0/pid");
	}
	return pid;
}

/**
 * damon_scheme_stat() - refresh and read one stat of a running scheme
 * @scheme: scheme index
 * @stat: "nr_tried", "sz_applied", ...
 *
 * Return: the stat, or -1.
 */
long damon_scheme_stat(int scheme, const char *stat)
{
	char p[256];

	if (write_file(KD "/state", "update_schemes_stats"))
		return -1;
	snprintf(p, sizeof(p), CTX "/schemes/%d/stats/%s", scheme, stat);
	return read_long(p);
}
