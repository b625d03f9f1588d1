// SPDX-License-Identifier: GPL-2.0
/*
 * Integrity stress for memory tiering.  Verifier processes keep writing and
 * checking known patterns over memory that spans node0 and node2 (anonymous
 * 4 KiB pages, THP, shmem, file page cache, hugetlb), while around them:
 *
 * - two kdamonds run migrate_cold (node0 -> node2) and migrate_hot
 *   (node2 -> node0) at short intervals;
 * - NUMA balancing runs in tiering mode, its hint latency flipping between
 *   the time and faults modes (bit 4 of numa_balancing: 2 and 6);
 * - a process keeps node0 under pressure, so reclaim demotes to node2;
 * - khugepaged is told to scan fast, and the THP verifier splits and
 *   collapses (MADV_COLLAPSE) its huge pages;
 * - a churner flips the series' knobs (target_nid, numa_balancing and its
 *   fault-count bit, hot_threshold_faults, hot_repeat) and turns the
 *   kdamonds off, on and commits, while the migrations run.
 *
 * Pass: no mismatched byte, no verifier killed, every knob write answered
 * as documented, and for each reason the counters (damon_migrate_hot/cold/
 * fail, pgpromote_success/fail, pgpromote_reject_latency/ratelimit) moved
 * by exactly what the tiering tracepoints reported over the run.
 *
 * TIERING_STRESS_SECONDS sets the duration (default 300).
 * TIERING_STRESS_FILE_DIR: where the page-cache verifier puts its file
 * (default: /mnt/lab, the lab's writable 9p share); it needs a file system
 * that is not tmpfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB	(21 << 26)
#endif
#define TMPFS_MAGIC_	0x01021994

#define FAST_NODE	0
#define SLOW_NODE	2
#define REGION		(32UL << 20)	/* per verifier */
#define CHUNK		(2UL << 20)
#define HUGE_PAGES	(REGION / CHUNK)
/* 9p page-cache faults are slow under TCG: the file is smaller */
#define FILE_REGION	(REGION / 4)
#define NB		"/proc/sys/kernel/numa_balancing"
#define NB_DEBUG	"/sys/kernel/debug/sched/numa_balancing"
#define TH_FAULTS	NB_DEBUG "/hot_threshold_faults"
#define KHUGEPAGED	"/sys/kernel/mm/transparent_hugepage/khugepaged"
#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"
#define INSTANCE	"/sys/kernel/tracing/instances/tiering_stress"
#define HUGETLB_NR(n)	"/sys/devices/system/node/node" #n \
			"/hugepages/hugepages-2048kB/nr_hugepages"

enum vtype { V_ANON, V_THP, V_SHMEM, V_FILE, V_HUGETLB, NR_VTYPES };

static const char * const vname[NR_VTYPES] = {
	"anon-4k", "thp", "shmem", "file", "hugetlb",
};

/* what a verifier reports, in memory shared with the parent */
struct vstat {
	int ran;			/* set up and ran */
	char skip[320];			/* why it could not run */
	long passes;
	long mismatched_bytes;
	long first_off;
	unsigned long first_want, first_got;
	long on_node[3];		/* placement at the start */
	long collapses;			/* MADV_COLLAPSE that succeeded */
	long chunks;			/* 2 MiB chunks checked */
};

struct shared {
	int stop;
	long pressure_cycles, pressure_mb;
	struct vstat v[NR_VTYPES];
};

static struct shared *sh;

static unsigned long pattern(unsigned int type, size_t word, unsigned long gen)
{
	unsigned long x = (word + 1) * 0x9e3779b97f4a7c15UL ^
			  (gen << 32) ^ ((unsigned long)type << 56);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9UL;
	return x ^ (x >> 32);
}

static void fill(unsigned int type, char *p, size_t len, size_t off,
		 unsigned long gen)
{
	unsigned long *w = (unsigned long *)p;

	for (size_t i = 0; i < len / 8; i++)
		w[i] = pattern(type, off / 8 + i, gen);
}

/* count the bytes of [p, p + len) that differ from the pattern */
static void check(struct vstat *v, unsigned int type, const char *p,
		  size_t len, size_t off, unsigned long gen)
{
	const unsigned long *w = (const unsigned long *)p;

	for (size_t i = 0; i < len / 8; i++) {
		unsigned long want = pattern(type, off / 8 + i, gen), got = w[i];

		if (got == want)
			continue;
		if (!v->mismatched_bytes) {
			v->first_off = off + i * 8;
			v->first_want = want;
			v->first_got = got;
		}
		for (int b = 0; b < 8; b++)
			v->mismatched_bytes += ((got ^ want) >> (8 * b) & 0xff) != 0;
	}
}

static long set_policy(int mode, int nid)
{
	unsigned long mask = 1UL << nid;

	return syscall(SYS_set_mempolicy, mode, mode ? &mask : NULL,
		       mode ? sizeof(mask) * 8 : 0);
}

/* fault the first half of @p on FAST_NODE, the second on SLOW_NODE */
static int fault_split(char *p, size_t len, unsigned int type, bool write)
{
	char sink = 0;

	for (int half = 0; half < 2; half++) {
		if (set_policy(2 /* MPOL_BIND */, half ? SLOW_NODE : FAST_NODE))
			return -1;
		for (size_t off = half * len / 2; off < (half + 1) * len / 2;
		     off += 4096) {
			if (write)
				fill(type, p + off, 4096, off, 0);
			else
				sink += READ_ONCE(p[off]);
		}
	}
	return set_policy(0, 0) + (sink & 0);
}

/* run on the CPUs of @nid: NUMA balancing promotes to the faulting CPU's node */
static void pin_to_node(int nid)
{
	char path[96], buf[64];
	cpu_set_t set;
	bool cpus[64];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", nid);
	if (read_file(path, buf, sizeof(buf)) <= 0 || !parse_nodelist(buf, cpus, 64))
		return;
	CPU_ZERO(&set);
	for (int c = 0; c < 64; c++)
		if (cpus[c])
			CPU_SET(c, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static char *map_region(enum vtype t, struct vstat *v, int *fdp)
{
	const char *dir = getenv("TIERING_STRESS_FILE_DIR");
	char path[256], *p, *raw;
	struct statfs sfs;
	int fd;

	switch (t) {
	case V_ANON:
		p = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			madvise(p, REGION, MADV_NOHUGEPAGE);
		return p;
	case V_THP:
		raw = mmap(NULL, REGION + CHUNK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED)
			return raw;
		p = (char *)(((unsigned long)raw + CHUNK - 1) & ~(CHUNK - 1));
		madvise(p, REGION, MADV_HUGEPAGE);
		return p;
	case V_SHMEM:
		return mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	case V_HUGETLB:
		p = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB,
			 -1, 0);
		if (p == MAP_FAILED)
			snprintf(v->skip, sizeof(v->skip),
				 "no 2 MiB hugetlb pages: %s", strerror(errno));
		return p;
	default:
		break;
	}
	/* file page cache: written with write(2), mapped read-only */
	dir = dir ? dir : "/mnt/lab";
	if (statfs(dir, &sfs) || sfs.f_type == TMPFS_MAGIC_) {
		snprintf(v->skip, sizeof(v->skip),
			 "%s: no file system other than tmpfs", dir);
		return MAP_FAILED;
	}
	snprintf(path, sizeof(path), "%s/tiering_stress.%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		snprintf(v->skip, sizeof(v->skip), "%s: %s", path, strerror(errno));
		return MAP_FAILED;
	}
	unlink(path);
	p = malloc(CHUNK);
	for (size_t off = 0; p && off < FILE_REGION; off += CHUNK) {
		fill(t, p, CHUNK, off, 0);
		if (pwrite(fd, p, CHUNK, off) != (ssize_t)CHUNK) {
			snprintf(v->skip, sizeof(v->skip), "write %s: %s", path,
				 strerror(errno));
			free(p);
			close(fd);
			return MAP_FAILED;
		}
	}
	free(p);
	*fdp = fd;
	/* private and read-only: maps the page cache itself (9p refuses shared+writable fds) */
	return mmap(NULL, FILE_REGION, PROT_READ, MAP_PRIVATE, fd, 0);
}

/*
 * The verifier: alternately keeps one half of its 2 MiB chunks busy (so the
 * other half turns cold and moves), rewrites and checks the busy half with
 * a new generation, and checks the idle half still holds its last one.
 */
static void verifier(enum vtype t)
{
	struct vstat *v = &sh->v[t];
	unsigned long gen[REGION / CHUNK] = { 0 };
	int nchunks = (t == V_FILE ? FILE_REGION : REGION) / CHUNK, fd = -1;
	long counts[MAX_NODES];
	bool ro = t == V_FILE;
	char *p;

	if (v->skip[0])
		_exit(0);
	p = map_region(t, v, &fd);
	if (p == MAP_FAILED) {
		if (!v->skip[0])
			snprintf(v->skip, sizeof(v->skip), "mmap: %s", strerror(errno));
		_exit(0);
	}
	pin_to_node(FAST_NODE);
	if (fault_split(p, nchunks * CHUNK, t, !ro)) {
		snprintf(v->skip, sizeof(v->skip), "set_mempolicy: %s", strerror(errno));
		_exit(0);
	}
	/* readahead does not follow the policy everywhere: move what strayed */
	move_to_node(p, nchunks * CHUNK / 2, FAST_NODE);
	move_to_node(p + nchunks * CHUNK / 2, nchunks * CHUNK / 2, SLOW_NODE);
	count_pages_per_node(p, nchunks * CHUNK, counts);
	for (int n = 0; n < 3; n++)
		v->on_node[n] = counts[n];
	v->ran = 1;
	for (unsigned long pass = 1; !READ_ONCE(sh->stop); pass++) {
		int busy = pass / 8 % 2;	/* which half of the chunks */

		for (int c = 0; c < nchunks; c++) {
			size_t off = c * CHUNK;

			if (c % 2 == busy && !ro) {
				check(v, t, p + off, CHUNK, off, gen[c]);
				gen[c] = pass;
				fill(t, p + off, CHUNK, off, pass);
			}
			check(v, t, p + off, CHUNK, off, gen[c]);
			v->chunks++;
		}
		if (t == V_THP && pass % 4 == 0) {
			size_t off = (pass / 4 % nchunks) * CHUNK;

			/* split one huge page, then collapse it back */
			mprotect(p + off, 4096, PROT_READ);
			mprotect(p + off, 4096, PROT_READ | PROT_WRITE);
			if (!madvise(p + off, CHUNK, MADV_COLLAPSE))
				v->collapses++;
		}
		if (ro && pass % 4 == 0)	/* drop some, fault them again */
			madvise(p + (pass / 4 % nchunks) * CHUNK, CHUNK, MADV_PAGEOUT);
		v->passes = pass;
		usleep(20000);
	}
	for (int c = 0; c < nchunks; c++)
		check(v, t, p + c * CHUNK, CHUNK, c * CHUNK, gen[c]);
	_exit(0);
}

static long node_free_kb(int nid)
{
	char path[96], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d MemFree: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Keeps node0 short of free memory, so that reclaim demotes to node2. */
static void pressure(void)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", getpid());
	write_file(path, "1000");
	/* off the verifiers' CPU: filling node0 must outpace migrate_cold */
	pin_to_node(1);
	while (!READ_ONCE(sh->stop)) {
		long free_kb = node_free_kb(FAST_NODE);
		long total_kb = node_mem_total_kb(FAST_NODE);
		size_t len;
		char *p;

		if (free_kb < 0 || total_kb < 0)
			break;
		/*
		 * More than is free, so that reclaim runs on node0 and
		 * demotes to node2 (no swap: demotion is its only way out)
		 */
		len = (free_kb + 65536) * 1024L;
		if (len > total_kb * 1024L)
			len = total_kb * 1024L;
		set_policy(2, FAST_NODE);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		set_policy(0, 0);
		if (p == MAP_FAILED)
			break;
		sh->pressure_cycles++;
		sh->pressure_mb = len >> 20;
		sleep(2);
		munmap(p, len);
		sleep(1);
	}
	_exit(0);
}

/*
 * A child that outlives a test stopped by a failed assertion would hold
 * the output pipe open and keep the runner waiting: it dies with its parent.
 */
static void die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
}

/* ---- two kdamonds ---- */

#define KDN(k)		DAMON_ADMIN "/kdamonds/" #k
static const char * const kd_path[2] = { KDN(0), KDN(1) };

static int kd_write(int k, const char *file, const char *fmt, unsigned long v)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", kd_path[k], file);
	return write_file(p, fmt, v);
}

static int kd_write_s(int k, const char *file, const char *s)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", kd_path[k], file);
	return write_file(p, "%s", s);
}

/*
 * DAMON's sysfs takes its lock with a trylock for the nr_* files and state,
 * and refuses a write with EBUSY, changing nothing, while a running kdamond
 * holds it.  The setup writes again, every millisecond for up to 10 s (the
 * churner takes EBUSY as an answer).
 */
static int damon_write_busy(const char *path, const char *val)
{
	int err, try = 0;

	while ((err = write_file(path, "%s", val)) == -EBUSY && ++try < 10000)
		usleep(1000);
	return err;
}

static int kd_set(int k, const char *file, const char *fmt, unsigned long v)
{
	char p[256], val[32];

	snprintf(p, sizeof(p), "%s/%s", kd_path[k], file);
	snprintf(val, sizeof(val), fmt, v);
	return damon_write_busy(p, val);
}

static int kd_set_s(int k, const char *file, const char *s)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", kd_path[k], file);
	return damon_write_busy(p, s);
}

/* kdamond 0: migrate_cold node0 -> node2; kdamond 1: migrate_hot node2 -> node0 */
static int damon_setup2(void)
{
	int err = damon_write_busy(DAMON_ADMIN "/kdamonds/nr_kdamonds", "2");

	for (int k = 0; k < 2 && !err; k++) {
		unsigned long start, end;
		int src = k ? SLOW_NODE : FAST_NODE;

		if (node_phys_range(src, &start, &end))
			return -ENOENT;
#define C(f)	"contexts/0/" f
#define S(f)	"contexts/0/schemes/0/" f
		err = kd_set_s(k, "contexts/nr_contexts", "1");
		err = err ? : kd_set_s(k, C("operations"), "paddr");
		err = err ? : kd_set(k, C("monitoring_attrs/intervals/sample_us"), "%lu", 2000);
		err = err ? : kd_set(k, C("monitoring_attrs/intervals/aggr_us"), "%lu", 40000);
		err = err ? : kd_set(k, C("monitoring_attrs/intervals/update_us"), "%lu", 400000);
		err = err ? : kd_set(k, C("monitoring_attrs/nr_regions/max"), "%lu", 200);
		err = err ? : kd_set(k, C("monitoring_attrs/nr_regions/min"), "%lu", 10);
		err = err ? : kd_set_s(k, C("targets/nr_targets"), "1");
		err = err ? : kd_set_s(k, C("targets/0/regions/nr_regions"), "1");
		err = err ? : kd_set(k, C("targets/0/regions/0/end"), "%lu", end);
		err = err ? : kd_set(k, C("targets/0/regions/0/start"), "%lu", start);
		err = err ? : kd_set_s(k, C("schemes/nr_schemes"), "1");
		err = err ? : kd_set_s(k, S("action"), k ? "migrate_hot" : "migrate_cold");
		err = err ? : kd_set(k, S("target_nid"), "%lu", k ? FAST_NODE : SLOW_NODE);
		err = err ? : kd_set(k, S("access_pattern/sz/max"), "%lu", end - start);
		err = err ? : kd_set(k, S("access_pattern/nr_accesses/min"), "%lu", k ? 1 : 0);
		err = err ? : kd_set(k, S("access_pattern/nr_accesses/max"), "%lu", k ? 1000 : 0);
		err = err ? : kd_set(k, S("access_pattern/age/min"), "%lu", k ? 0 : 5);
		err = err ? : kd_set(k, S("access_pattern/age/max"), "%lu", 4000000000UL);
		err = err ? : kd_set_s(k, "state", "on");
#undef C
#undef S
	}
	return err;
}

/* turn both kdamonds off and remove them */
static void damon_stop2(void)
{
	char state[16];

	for (int k = 0; k < 2; k++) {
		char p[256];

		snprintf(p, sizeof(p), "%s/state", kd_path[k]);
		if (read_file(p, state, sizeof(state)) > 0 && !strncmp(state, "on", 2))
			damon_write_busy(p, "off");
	}
	damon_write_busy(DAMON_ADMIN "/kdamonds/nr_kdamonds", "0");
}

/* ---- the churner ---- */

struct churn {
	struct __test_metadata *md;
	int stop;
	long writes, unexpected, commits, ons, offs;
	pthread_t thread;
};

static void churn_check(struct churn *c, const char *what, int err, bool ok)
{
	struct __test_metadata *_metadata = c->md;

	c->writes++;
	if (ok)
		return;
	if (c->unexpected++ < 20)
		TH_LOG("churn: %s: %s", what, err ? strerror(-err) : "accepted");
}

static void *churner(void *arg)
{
	struct churn *c = arg;
	unsigned int r = 1;

	while (!READ_ONCE(c->stop)) {
		int k = rand_r(&r) % 2, err;
		char state[16] = "";
		char p[256];

		snprintf(p, sizeof(p), "%s/state", kd_path[k]);
		read_file(p, state, sizeof(state));
		switch (rand_r(&r) % 10) {
		case 0: {	/* hint-latency mode: numa_balancing's bit 4 */
			long nb = read_long(NB), want;

			if (nb < 0) {
				churn_check(c, "numa_balancing read", -EIO, false);
				break;
			}
			if (!(rand_r(&r) % 8)) {
				/* the fault-count bit without tiering: refused */
				err = write_file(NB, "%ld", 4 | (nb & 1));
				churn_check(c, "numa_balancing 4|5", err,
					    err == -EINVAL && read_long(NB) == nb);
				break;
			}
			/* flip bit 4, keep bit 2 (and bit 0 as it is) */
			want = ((nb | 2) ^ 4) & 7;
			err = write_file(NB, "%ld", want);
			churn_check(c, "numa_balancing fault-count bit", err,
				    !err && read_long(NB) == want);
			break;
		}
		case 1:	/* automatic or a fixed threshold */
			err = write_file(TH_FAULTS, "%u",
					 rand_r(&r) % 2 ? 0 : rand_r(&r) % 4096);
			churn_check(c, "hot_threshold_faults", err, !err);
			err = write_file(NB_DEBUG "/hot_repeat", "%d", rand_r(&r) % 2);
			churn_check(c, "hot_repeat", err, !err);
			break;
		case 2:	/* tiering, with or without normal balancing and faults */
			err = write_file(NB, "%d", 2 | (rand_r(&r) % 4 ? 0 : 1) |
					 (rand_r(&r) % 2 ? 4 : 0));
			churn_check(c, "numa_balancing", err, !err);
			break;
		case 3:	/* a bad target: rejected, old value kept */
			err = kd_write(k, "contexts/0/schemes/0/target_nid", "%lu", 1000);
			churn_check(c, "target_nid 1000", err, err == -EINVAL);
			break;
		case 4:	/* the scheme's target back and forth */
			err = kd_write(k, "contexts/0/schemes/0/target_nid", "%lu",
				       rand_r(&r) % 4 ? (k ? FAST_NODE : SLOW_NODE) : 1);
			churn_check(c, "target_nid", err, !err);
			fallthrough;
		case 5:
			err = kd_write_s(k, "state", "commit");
			/* EINVAL if off, EBUSY while the kdamond holds the lock */
			churn_check(c, "commit", err, !err || err == -EBUSY ||
				    (err == -EINVAL && strncmp(state, "on", 2)));
			c->commits += !err;
			break;
		case 6:
			err = kd_write_s(k, "state", "off");
			/* off when off: EINVAL, or EPERM once it ran */
			churn_check(c, "off", err, !err || err == -EBUSY ||
				    ((err == -EINVAL || err == -EPERM) &&
				     strncmp(state, "on", 2)));
			c->offs += !err;
			break;
		default:
			err = kd_write_s(k, "state", "on");
			churn_check(c, "on", err, !err || err == -EBUSY);
			c->ons += !err;
			break;
		}
		usleep(100000 + rand_r(&r) % 200000);
	}
	return NULL;
}

/* ---- the tracepoint sums ---- */

enum { T_HOT, T_COLD, T_HINT, T_DEMOTE, T_OTHER, NR_T };

struct tsum {
	long moved[NR_T], failed[NR_T];
	long rej_latency, rej_ratelimit, events;
	int stop;
	pthread_t thread;
};

static void trace_line(struct tsum *s, const char *l)
{
	unsigned int moved, failed, nr;
	char reason[32], decision[32];
	const char *p;
	int t;

	p = strstr(l, "tiering_migrate: ");
	p = p ? strstr(p, "nr_moved=") : NULL;
	if (p && sscanf(p, "nr_moved=%u nr_failed=%u reason=%31s",
			&moved, &failed, reason) == 3) {
		t = !strcmp(reason, "damon_hot") ? T_HOT :
		    !strcmp(reason, "damon_cold") ? T_COLD :
		    !strcmp(reason, "numa_hint") ? T_HINT :
		    !strcmp(reason, "demotion") ? T_DEMOTE : T_OTHER;
		s->moved[t] += moved;
		s->failed[t] += failed;
		s->events++;
		return;
	}
	p = strstr(l, "tiering_promote_decision: ");
	if (!p)
		return;
	p = strstr(p, "nr_pages=");
	if (!p || sscanf(p, "nr_pages=%u", &nr) != 1)
		return;
	p = strstr(p, "decision=");
	if (p && sscanf(p, "decision=%31s", decision) == 1) {
		if (!strcmp(decision, "latency"))
			s->rej_latency += nr;
		else if (!strcmp(decision, "ratelimit"))
			s->rej_ratelimit += nr;
		s->events++;
	}
}

static void *trace_reader(void *arg)
{
	struct tsum *s = arg;
	static char buf[1 << 16];
	size_t have = 0;
	int fd = open(INSTANCE "/trace_pipe", O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *l, *nl;

		if (n <= 0) {
			if (READ_ONCE(s->stop))
				break;
			usleep(50000);
			continue;
		}
		have += n;
		buf[have] = '\0';
		for (l = buf; (nl = strchr(l, '\n')); l = nl + 1) {
			*nl = '\0';
			trace_line(s, l);
		}
		have -= l - buf;
		memmove(buf, l, have);
	}
	close(fd);
	return NULL;
}

static long trace_overruns(void)
{
	char path[128], line[128];
	long sum = 0, n;

	for (int cpu = 0; cpu < 64; cpu++) {
		FILE *f;

		snprintf(path, sizeof(path), INSTANCE "/per_cpu/cpu%d/stats", cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %ld", &n) == 1)
				sum += n;
		fclose(f);
	}
	return sum;
}

/* ---- counters ---- */

static const char * const counters[] = {
	"damon_migrate_hot", "damon_migrate_cold", "damon_migrate_fail",
	"pgpromote_success", "pgpromote_fail", "pgpromote_reject_latency",
	"pgpromote_reject_ratelimit", "pgdemote_kswapd", "pgdemote_direct",
	"pgdemote_khugepaged",
	"thp_collapse_alloc", "oom_kill", "numa_hint_faults",
};

#define NR_COUNTERS	ARRAY_SIZE(counters)

static void snap(long *c)
{
	vm_stat_refresh();
	for (size_t i = 0; i < NR_COUNTERS; i++)
		c[i] = vmstat("/proc/vmstat", counters[i]);
}

static long delta(const long *a, const long *b, const char *name)
{
	for (size_t i = 0; i < NR_COUNTERS; i++)
		if (!strcmp(counters[i], name))
			return b[i] - a[i];
	return 0;
}

/* pages demoted by reclaim, whoever reclaimed */
static long demoted(const long *a, const long *b)
{
	return delta(a, b, "pgdemote_kswapd") + delta(a, b, "pgdemote_direct") +
	       delta(a, b, "pgdemote_khugepaged");
}

static void progress(struct __test_metadata *_metadata, long secs,
		     const long *a)
{
	long c[NR_COUNTERS];

	snap(c);
	TH_LOG("%ld s: damon hot +%ld cold +%ld fail +%ld", secs,
	       delta(a, c, "damon_migrate_hot"), delta(a, c, "damon_migrate_cold"),
	       delta(a, c, "damon_migrate_fail"));
	TH_LOG("%ld s: promoted +%ld, demoted +%ld", secs,
	       delta(a, c, "pgpromote_success"),
	       demoted(a, c));
}

FIXTURE(stress) {
	long nb, th, delay, min, hp0, hp2, khp[3];
	char demotion[16];
};

static const char * const khp_files[3] = {
	KHUGEPAGED "/scan_sleep_millisecs", KHUGEPAGED "/alloc_sleep_millisecs",
	KHUGEPAGED "/pages_to_scan",
};

FIXTURE_SETUP(stress)
{
	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	if (mem_tier_of(SLOW_NODE) < 0 ||
	    mem_tier_of(SLOW_NODE) <= mem_tier_of(FAST_NODE))
		SKIP(return, "node%d is not in a lower memory tier than node%d",
		     SLOW_NODE, FAST_NODE);
	if (vmstat("/proc/vmstat", "numa_hint_faults_tiering") < 0)
		SKIP(return, "kernel without the fault-count hint latency");
	if (access(TH_FAULTS, F_OK))
		SKIP(return, "no %s (CONFIG_SCHED_DEBUG=n?)", TH_FAULTS);
	if (vmstat("/proc/vmstat", "damon_migrate_cold") < 0)
		SKIP(return, "kernel without the tiering accounting layer");
	if (access("/sys/kernel/tracing/instances", F_OK))
		SKIP(return, "no tracefs instances");
	if (damon_clear_stopped() == -EBUSY)
		SKIP(return, "a kdamond runs: not this test's to stop");
	ASSERT_EQ(read_long(DAMON_ADMIN "/kdamonds/nr_kdamonds"), 0);
	self->nb = read_long(NB);
	self->th = read_long(TH_FAULTS);
	self->delay = read_long(NB_DEBUG "/scan_delay_ms");
	self->min = read_long(NB_DEBUG "/scan_period_min_ms");
	if (read_file(DEMOTION, self->demotion, sizeof(self->demotion)) < 0)
		self->demotion[0] = '\0';
	self->hp0 = read_long(HUGETLB_NR(0));
	self->hp2 = read_long(HUGETLB_NR(2));
	for (int i = 0; i < 3; i++)
		self->khp[i] = read_long(khp_files[i]);
}

FIXTURE_TEARDOWN(stress)
{
	damon_stop2();
	if (self->nb >= 0)
		write_file(NB, "%ld", self->nb);
	if (self->th >= 0)
		write_file(TH_FAULTS, "%ld", self->th);
	if (self->delay >= 0)
		write_file(NB_DEBUG "/scan_delay_ms", "%ld", self->delay);
	if (self->min >= 0)
		write_file(NB_DEBUG "/scan_period_min_ms", "%ld", self->min);
	if (self->demotion[0])
		write_file(DEMOTION, "%s", self->demotion);
	for (int i = 0; i < 3; i++)
		if (self->khp[i] >= 0)
			write_file(khp_files[i], "%ld", self->khp[i]);
	if (self->hp0 >= 0)
		write_file(HUGETLB_NR(0), "%ld", self->hp0);
	if (self->hp2 >= 0)
		write_file(HUGETLB_NR(2), "%ld", self->hp2);
	rmdir(INSTANCE);
}

TEST_F_TIMEOUT(stress, integrity, 7200)
{
	const char *e = getenv("TIERING_STRESS_SECONDS");
	long secs = e ? atol(e) : 300, a[NR_COUNTERS], b[NR_COUNTERS];
	pid_t vpid[NR_VTYPES], ppid;
	long ballast;
	struct churn churn = { .md = _metadata };
	struct tsum ts = { 0 };
	int status, ran = 0;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	TH_LOG("%ld s of stress (TIERING_STRESS_SECONDS)", secs);

	/*
	 * hugetlb pages for the verifier, half on each node, and on node0 a
	 * ballast of 60% of its free memory, which neither DAMON nor
	 * reclaim moves: the node fills in seconds, and reclaim demotes
	 */
	ballast = node_free_kb(FAST_NODE) * 6 / 10 / 2048;
	write_file(HUGETLB_NR(0), "%ld", self->hp0 + HUGE_PAGES / 2 + ballast);
	write_file(HUGETLB_NR(2), "%ld", self->hp2 + HUGE_PAGES / 2);
	TH_LOG("node0: %ld MiB of hugetlb ballast", ballast * 2);
	if (read_long(HUGETLB_NR(0)) < self->hp0 + (long)HUGE_PAGES / 2 ||
	    read_long(HUGETLB_NR(2)) < self->hp2 + (long)HUGE_PAGES / 2)
		snprintf(sh->v[V_HUGETLB].skip, sizeof(sh->v[V_HUGETLB].skip),
			 "could not reserve %lu 2 MiB hugetlb pages on node0 and node2",
			 HUGE_PAGES / 2);
	ASSERT_EQ(write_file(DEMOTION, "true"), 0);
	write_file(KHUGEPAGED "/scan_sleep_millisecs", "100");
	write_file(KHUGEPAGED "/alloc_sleep_millisecs", "100");
	write_file(KHUGEPAGED "/pages_to_scan", "4096");
	ASSERT_EQ(write_file(NB_DEBUG "/scan_delay_ms", "100"), 0);
	ASSERT_EQ(write_file(NB_DEBUG "/scan_period_min_ms", "100"), 0);

	/* a tracing instance of our own, big enough for the whole run */
	rmdir(INSTANCE);
	ASSERT_EQ(mkdir(INSTANCE, 0700), 0);
	ASSERT_EQ(write_file(INSTANCE "/buffer_size_kb", "16384"), 0);
	snap(a);
	ASSERT_EQ(write_file(INSTANCE "/events/tiering/tiering_migrate/enable", "1"), 0);
	ASSERT_EQ(write_file(INSTANCE "/events/tiering/tiering_promote_decision/enable", "1"), 0);
	ASSERT_EQ(pthread_create(&ts.thread, NULL, trace_reader, &ts), 0);

	for (int t = 0; t < NR_VTYPES; t++) {
		vpid[t] = fork();
		ASSERT_GE(vpid[t], 0);
		if (!vpid[t]) {
			die_with_parent();
			verifier(t);
		}
	}
	ppid = fork();
	ASSERT_GE(ppid, 0);
	if (!ppid) {
		die_with_parent();
		pressure();
	}

	ASSERT_EQ(write_file(NB, "2"), 0);
	ASSERT_EQ(damon_setup2(), 0);
	ASSERT_EQ(pthread_create(&churn.thread, NULL, churner, &churn), 0);

	for (long s = 0; s < secs; s++) {
		sleep(1);
		if (s % 60 == 59)
			progress(_metadata, s + 1, a);
	}

	/* quiesce: no migration after this, then the last counters */
	WRITE_ONCE(churn.stop, 1);
	pthread_join(churn.thread, NULL);
	damon_stop2();
	WRITE_ONCE(sh->stop, 1);
	for (int t = 0; t < NR_VTYPES; t++) {
		ASSERT_EQ(waitpid(vpid[t], &status, 0), vpid[t]);
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
			TH_LOG("verifier %s: killed by signal %d", vname[t],
			       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		}
	}
	waitpid(ppid, &status, 0);
	TH_LOG("pressure: %ld cycles of %ld MiB on node0, exit status %#x",
	       sh->pressure_cycles, sh->pressure_mb, status);
	write_file(NB, "0");
	/* an in-flight promotion or batch ends before its event is read */
	sleep(2);
	snap(b);
	write_file(INSTANCE "/events/tiering/enable", "0");
	WRITE_ONCE(ts.stop, 1);
	pthread_join(ts.thread, NULL);

	for (int t = 0; t < NR_VTYPES; t++) {
		struct vstat *v = &sh->v[t];

		if (!v->ran) {
			TH_LOG("verifier %s did not run: %s", vname[t], v->skip);
			continue;
		}
		ran++;
		TH_LOG("verifier %s: %ld passes, %ld chunks, %ld bytes wrong",
		       vname[t], v->passes, v->chunks, v->mismatched_bytes);
		TH_LOG("verifier %s: at the start node0 %ld node2 %ld pages",
		       vname[t], v->on_node[0], v->on_node[2]);
		if (t == V_THP)
			TH_LOG("verifier thp: %ld MADV_COLLAPSE done", v->collapses);
		EXPECT_EQ(v->mismatched_bytes, 0) {
			TH_LOG("%s: first at offset %ld: want %#lx, got %#lx",
			       vname[t], v->first_off, v->first_want, v->first_got);
		}
		EXPECT_GT(v->chunks, 0);
		/*
		 * The memory really spans both nodes.  Not checked for the
		 * page cache: where readahead puts it and which clean pages
		 * reclaim drops under node0's pressure is the kernel's choice.
		 */
		if (t == V_FILE)
			continue;
		EXPECT_GT(v->on_node[FAST_NODE], 0);
		EXPECT_GT(v->on_node[SLOW_NODE], 0);
	}
	/* anonymous, THP and shmem need nothing more than the lab */
	EXPECT_TRUE(sh->v[V_ANON].ran && sh->v[V_THP].ran && sh->v[V_SHMEM].ran);

	TH_LOG("churn: %ld knob writes (%ld commits, %ld on, %ld off), %ld unexpected",
	       churn.writes, churn.commits, churn.ons, churn.offs, churn.unexpected);
	EXPECT_EQ(churn.unexpected, 0);

	TH_LOG("damon_migrate_hot +%ld, traced %ld", delta(a, b, "damon_migrate_hot"),
	       ts.moved[T_HOT]);
	TH_LOG("damon_migrate_cold +%ld, traced %ld", delta(a, b, "damon_migrate_cold"),
	       ts.moved[T_COLD]);
	TH_LOG("damon_migrate_fail +%ld, traced %ld", delta(a, b, "damon_migrate_fail"),
	       ts.failed[T_HOT] + ts.failed[T_COLD]);
	TH_LOG("pgpromote_success +%ld, traced %ld; pgpromote_fail +%ld, traced %ld",
	       delta(a, b, "pgpromote_success"), ts.moved[T_HINT],
	       delta(a, b, "pgpromote_fail"), ts.failed[T_HINT]);
	TH_LOG("pgpromote_reject_latency +%ld, traced %ld; ratelimit +%ld, traced %ld",
	       delta(a, b, "pgpromote_reject_latency"), ts.rej_latency,
	       delta(a, b, "pgpromote_reject_ratelimit"), ts.rej_ratelimit);
	TH_LOG("pgdemote_* +%ld, traced %ld (%ld left behind)", demoted(a, b),
	       ts.moved[T_DEMOTE], ts.failed[T_DEMOTE]);
	TH_LOG("thp_collapse_alloc +%ld, numa_hint_faults +%ld, oom_kill +%ld",
	       delta(a, b, "thp_collapse_alloc"), delta(a, b, "numa_hint_faults"),
	       delta(a, b, "oom_kill"));
	TH_LOG("%ld tiering events read", ts.events);

	/* the sums only hold if no event was lost */
	ASSERT_EQ(trace_overruns(), 0);
	EXPECT_EQ(delta(a, b, "damon_migrate_hot"), ts.moved[T_HOT]);
	EXPECT_EQ(delta(a, b, "damon_migrate_cold"), ts.moved[T_COLD]);
	EXPECT_EQ(delta(a, b, "damon_migrate_fail"), ts.failed[T_HOT] + ts.failed[T_COLD]);
	EXPECT_EQ(delta(a, b, "pgpromote_success"), ts.moved[T_HINT]);
	EXPECT_EQ(delta(a, b, "pgpromote_fail"), ts.failed[T_HINT]);
	EXPECT_EQ(delta(a, b, "pgpromote_reject_latency"), ts.rej_latency);
	EXPECT_EQ(delta(a, b, "pgpromote_reject_ratelimit"), ts.rej_ratelimit);
	EXPECT_EQ(demoted(a, b), ts.moved[T_DEMOTE]);
	EXPECT_EQ(ts.moved[T_OTHER] + ts.failed[T_OTHER], 0);

	/* the stress did stress: both schemes moved pages, reclaim demoted */
	EXPECT_GT(delta(a, b, "damon_migrate_hot"), 0);
	EXPECT_GT(delta(a, b, "damon_migrate_cold"), 0);
	EXPECT_GT(demoted(a, b), 0);
	EXPECT_GT(delta(a, b, "numa_hint_faults"), 0);
	EXPECT_GT(sh->v[V_THP].collapses + delta(a, b, "thp_collapse_alloc"), 0);
	EXPECT_GT(churn.commits, 0);
	EXPECT_GT(churn.offs, 0);
	EXPECT_GE(ran, 3);
}

TEST_HARNESS_MAIN
