// SPDX-License-Identifier: GPL-2.0
/*
 * hugefault: demand-fault hugetlb pages over and over, optionally while a
 * real-time thread on the same CPU measures its wakeup latency.
 *
 *   hugefault [-g] [-s MIB] [-d SEC] [-r ROUNDS] [-c CPU]
 *             [-l [-i USEC] [-p PRIO] [-I]]
 *
 * A round maps -s MIB (default 1024) of private anonymous hugetlb memory
 * (MAP_HUGETLB, 2 MiB pages, or 1 GiB pages with -g), writes one byte at
 * the start of each huge page, so that each write is a fault in which the
 * kernel clears the whole huge page (folio_zero_user()), and unmaps it.
 * Rounds repeat for -d SEC seconds (default 10), at least -r ROUNDS
 * (default 1) of them.  The process runs on CPU -c (default 0).
 *
 * -l starts a measuring thread first, on the same CPU, SCHED_FIFO at
 * priority -p (default 99), that sleeps until an absolute time every -i
 * USEC (default 1000) microseconds with clock_nanosleep(TIMER_ABSTIME)
 * and records how late it woke up: what cyclictest -t1 -a CPU -p PRIO
 * -i USEC measures.  When the faulting thread is in the kernel clearing a
 * huge page, the measuring thread can only run once the clearing reaches a
 * rescheduling point (preempt=none/voluntary) or at once (preempt=full).
 * -I (idle) measures latency for -d SEC without faulting: the baseline.
 *
 * Output, one "key=value" per line (times are whatever clock the machine
 * has: in the QEMU TCG lab, emulated time):
 *   page_kib, size_mib, rounds, faults, cleared_gib
 *   fault_s          time spent in the touching loops (the faults)
 *   gibps            cleared_gib / fault_s
 *   fault_avg_us, fault_max_us
 *                    one touch, i.e. one huge page fault
 *   lat_samples, lat_overruns (wakeups later than a whole interval),
 *   lat_avg_us, lat_p50_us, lat_p99_us, lat_p999_us, lat_max_us
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT		26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB		(21 << MAP_HUGE_SHIFT)
#endif
#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB		(30 << MAP_HUGE_SHIFT)
#endif

#define SZ_1M			(1024UL * 1024)
#define SZ_2M			(2 * SZ_1M)
#define SZ_1G			(1024 * SZ_1M)
#define NSEC_PER_SEC		1000000000LL
#define NSEC_PER_USEC		1000LL
/* latency histogram: 1 us buckets up to 1 s, the last one for longer */
#define HIST_BUCKETS		1000001

struct lat_state {
	int cpu;
	int prio;
	long long interval_ns;
	bool ready;		/* __atomic_*: set by the thread */
	bool stop;		/* __atomic_*: set by main() */
	unsigned int *hist;
	long long samples;
	long long overruns;
	long long sum_ns;
	long long max_ns;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static struct timespec to_ts(long long ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	return ts;
}

static void *lat_thread(void *arg)
{
	struct lat_state *st = arg;
	long long next, now, late;
	struct timespec ts;

	next = now_ns();
	__atomic_store_n(&st->ready, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED)) {
		next += st->interval_ns;
		ts = to_ts(next);
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			continue;
		now = now_ns();
		late = now - next;
		if (late < 0)
			late = 0;
		st->samples++;
		st->sum_ns += late;
		if (late > st->max_ns)
			st->max_ns = late;
		if (late / NSEC_PER_USEC < HIST_BUCKETS - 1)
			st->hist[late / NSEC_PER_USEC]++;
		else
			st->hist[HIST_BUCKETS - 1]++;
		/* as cyclictest: skip the wakeups that were missed */
		while (next + st->interval_ns <= now) {
			next += st->interval_ns;
			st->overruns++;
		}
	}
	return NULL;
}

static int lat_start(struct lat_state *st, pthread_t *thread)
{
	struct sched_param sp = { .sched_priority = st->prio };
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	st->hist = calloc(HIST_BUCKETS, sizeof(*st->hist));
	if (!st->hist)
		return -ENOMEM;
	/* fault the histogram in now, not in the middle of a measurement */
	if (mlock(st->hist, HIST_BUCKETS * sizeof(*st->hist)))
		memset(st->hist, 0, HIST_BUCKETS * sizeof(*st->hist));
	CPU_ZERO(&set);
	CPU_SET(st->cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	err = pthread_create(thread, &attr, lat_thread, st);
	pthread_attr_destroy(&attr);
	if (err)
		return -err;
	while (!__atomic_load_n(&st->ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	return 0;
}

/* the smallest latency, in us, that at least @pct % of the samples reach */
static long long lat_pct(const struct lat_state *st, double pct)
{
	long long want = (long long)(st->samples * pct / 100.0 + 0.999999);
	long long seen = 0;
	long i;

	if (want < 1)
		want = 1;
	for (i = 0; i < HIST_BUCKETS - 1; i++) {
		seen += st->hist[i];
		if (seen >= want)
			return i;
	}
	return st->max_ns / NSEC_PER_USEC;
}

static void lat_report(const struct lat_state *st)
{
	printf("lat_samples=%lld\n", st->samples);
	printf("lat_overruns=%lld\n", st->overruns);
	printf("lat_avg_us=%.1f\n", st->samples ?
	       (double)st->sum_ns / st->samples / NSEC_PER_USEC : 0.0);
	printf("lat_p50_us=%lld\n", lat_pct(st, 50));
	printf("lat_p99_us=%lld\n", lat_pct(st, 99));
	printf("lat_p999_us=%lld\n", lat_pct(st, 99.9));
	printf("lat_max_us=%lld\n", st->max_ns / NSEC_PER_USEC);
}

static void bad_args(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-g] [-s MIB] [-d SEC] [-r ROUNDS] [-c CPU]\n"
		"       [-l [-i USEC] [-p PRIO] [-I]]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	struct lat_state st = { .cpu = 0, .prio = 99,
				.interval_ns = 1000 * NSEC_PER_USEC };
	long long fault_ns = 0, fault_max = 0, faults = 0, rounds = 0;
	long long t_end, t0, t1, min_rounds = 1;
	unsigned long hpage = SZ_2M, size_mib = 1024, off;
	int flags = MAP_HUGE_2MB, opt, err;
	bool lat = false, idle = false;
	double duration = 10;
	pthread_t thread;
	cpu_set_t set;
	size_t size;
	char *p;

	while ((opt = getopt(argc, argv, "gs:d:r:c:li:p:I")) != -1) {
		switch (opt) {
		case 'g':
			hpage = SZ_1G;
			flags = MAP_HUGE_1GB;
			break;
		case 's':
			size_mib = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			duration = strtod(optarg, NULL);
			break;
		case 'r':
			min_rounds = strtoll(optarg, NULL, 0);
			break;
		case 'c':
			st.cpu = atoi(optarg);
			break;
		case 'l':
			lat = true;
			break;
		case 'i':
			st.interval_ns = strtoll(optarg, NULL, 0) * NSEC_PER_USEC;
			break;
		case 'p':
			st.prio = atoi(optarg);
			break;
		case 'I':
			idle = true;
			break;
		default:
			bad_args(argv[0]);
		}
	}
	size = size_mib << 20;
	if (optind != argc || !size || size % hpage || st.interval_ns <= 0 ||
	    (idle && !lat))
		bad_args(argv[0]);

	CPU_ZERO(&set);
	CPU_SET(st.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("hugefault: sched_setaffinity");
		return 1;
	}
	if (lat) {
		err = lat_start(&st, &thread);
		if (err) {
			fprintf(stderr, "hugefault: latency thread: %s\n",
				strerror(-err));
			return 1;
		}
	}

	t_end = now_ns() + (long long)(duration * NSEC_PER_SEC);
	if (idle) {
		while (now_ns() < t_end)
			usleep(100000);
		goto report;
	}
	do {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | flags,
			 -1, 0);
		if (p == MAP_FAILED) {
			perror("hugefault: mmap (are the huge pages reserved?)");
			return 1;
		}
		for (off = 0; off < size; off += hpage) {
			t0 = now_ns();
			p[off] = 1;
			t1 = now_ns();
			fault_ns += t1 - t0;
			if (t1 - t0 > fault_max)
				fault_max = t1 - t0;
			faults++;
		}
		munmap(p, size);
		rounds++;
	} while (rounds < min_rounds || now_ns() < t_end);

report:
	if (lat) {
		__atomic_store_n(&st.stop, true, __ATOMIC_RELAXED);
		pthread_join(thread, NULL);
	}
	printf("page_kib=%lu\n", hpage >> 10);
	printf("size_mib=%lu\n", size_mib);
	printf("rounds=%lld\n", rounds);
	printf("faults=%lld\n", faults);
	printf("cleared_gib=%.3f\n", (double)faults * hpage / SZ_1G);
	printf("fault_s=%.3f\n", (double)fault_ns / NSEC_PER_SEC);
	printf("gibps=%.4f\n", fault_ns ?
	       (double)faults * hpage / SZ_1G * NSEC_PER_SEC / fault_ns : 0.0);
	printf("fault_avg_us=%.1f\n", faults ?
	       (double)fault_ns / faults / NSEC_PER_USEC : 0.0);
	printf("fault_max_us=%lld\n", fault_max / NSEC_PER_USEC);
	if (lat)
		lat_report(&st);
	return 0;
}
