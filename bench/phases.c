// SPDX-License-Identifier: GPL-2.0
/*
 * phases: a workload whose hot memory moves (the policy comparison's W1).
 *
 *   phases SIZE_MIB REGIONS PHASES PHASE_S SEED CSV
 *
 * SIZE_MIB of anonymous memory (no THP), cut into REGIONS regions of equal
 * size, bound to nodes FAST and SLOW (0 and 2; env PHASES_FAST,
 * PHASES_SLOW) with MPOL_BIND | MPOL_F_NUMA_BALANCING, so that NUMA
 * balancing may move pages between the two and nothing else lands on
 * another node.  The regions are written once, in order: the first ones
 * fill FAST, the rest spill to SLOW.
 *
 * Then PHASES phases of PHASE_S seconds each.  In each phase every region
 * has its own access weight: the region of rank k (0 the hottest) weighs
 * 1 / (k + 1)^1.5, and a phase's ranking is a random permutation drawn from
 * SEED, so the same SEED gives the same phases to every policy.  One thread
 * (on the CPU it was started on) reads and writes one word of a page chosen
 * at random, its region by weight and the page uniformly within the region,
 * as fast as it can.
 *
 * A second thread samples, every PHASES_SAMPLE_S seconds (default 2), where
 * every PHASES_STRIDE-th page (default 4) is, with move_pages(2), and
 * writes a CSV line: t_s, phase, share, oracle, pages on FAST, on SLOW,
 * elsewhere (not present: -errno), and pages that changed node since the
 * last sample (sampled pages times the stride).
 *   share:  the share of accesses that reach FAST: the sum over regions of
 *           weight x the fraction of the region's pages on FAST;
 *   oracle: the share if FAST's free memory at the start, less its high
 *           watermarks, held the hottest regions first.
 * A sampled page that leaves its node and comes back to it within one
 * phase counts as ping-pong.
 *
 * At the end, "RESULT key=value" lines: per phase p, share_p (mean share
 * over the second half of the phase), oracle_p, reach90_s_p (seconds from
 * the phase's start to the first sample at 90% of the oracle, -1 if none);
 * share_mean (every sample), share_late_mean (the second halves),
 * oracle_mean, pingpong_pages, fast_room_pages (the oracle's),
 * oracle_moves_p and oracle_moves (the pages the oracle itself moves into
 * and out of FAST at phase p's start, from the fill's layout for phase 0,
 * and their sum over the phases), moved_p (the pages the kernel
 * migrated during phase p, from /proc/vmstat's pgpromote_success,
 * pgdemote_* and damon_migrate_hot/cold: every migration on the machine,
 * which runs this alone),
 * fast_pages_after_fill, accesses_per_s,
 * sys_s and user_s of the whole run.  Times are those of the machine it
 * runs on (TCG in the lab).
 *
 * Plain libc and raw syscalls (bench/tier-sample.h): no libnuma.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tier-sample.h"

#define MAX_REGIONS		64
#define MAX_PHASES		32
#define MAX_SAMPLES		4096

static char *mem;
static unsigned long region_pages, nr_regions, nr_phases, stride = 4;
static int fast = 0, slow = 2;
/* per phase: a region's weight, and the cumulative weights to draw from */
static double weight[MAX_PHASES][MAX_REGIONS];
static double cumul[MAX_PHASES][MAX_REGIONS];
static double oracle[MAX_PHASES];
/* per phase: the oracle's pages of each region on FAST */
static unsigned long oracle_fast[MAX_PHASES][MAX_REGIONS];
static atomic_int phase;
static atomic_int stop;
static atomic_ulong accesses;

/* x^1.5 for x >= 1, by Newton's method for the root (no libm) */
static double pow15(double x)
{
	double r = x;

	for (int i = 0; i < 60; i++)
		r = (r + x / r) / 2;
	return x * r;
}

static void *access_thread(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ (uintptr_t)arg;
	unsigned long n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int p = atomic_load_explicit(&phase, memory_order_relaxed);

		for (int i = 0; i < 4096; i++) {
			double u = (xorshift(&s) >> 11) * (1.0 / 9007199254740992.0);
			unsigned long r = 0, pg;
			volatile unsigned long *word;

			while (r < nr_regions - 1 && u >= cumul[p][r])
				r++;
			pg = xorshift(&s) % region_pages;
			word = (volatile unsigned long *)(mem + (r * region_pages + pg) * PAGE +
							  (xorshift(&s) % (PAGE / 8)) * 8);
			*word = *word + 1;
		}
		n += 4096;
		atomic_store_explicit(&accesses, n, memory_order_relaxed);
	}
	return NULL;
}

/* the phases' rankings, weights and cumulative weights, drawn from @seed */
static void make_phases(uint64_t seed)
{
	for (unsigned long p = 0; p < nr_phases; p++) {
		unsigned long perm[MAX_REGIONS];
		double sum = 0, c = 0;

		for (unsigned long r = 0; r < nr_regions; r++)
			perm[r] = r;
		for (unsigned long r = nr_regions - 1; r > 0; r--) {
			unsigned long j = xorshift(&seed) % (r + 1), t = perm[r];

			perm[r] = perm[j];
			perm[j] = t;
		}
		/* perm[k]: the region of rank k */
		for (unsigned long k = 0; k < nr_regions; k++)
			sum += weight[p][perm[k]] = 1.0 / pow15(k + 1);
		for (unsigned long r = 0; r < nr_regions; r++) {
			weight[p][r] /= sum;
			c += weight[p][r];
			cumul[p][r] = c;
		}
		cumul[p][nr_regions - 1] = 1.0;
	}
}

/* the oracle's share per phase, FAST holding @cap of the workload's pages */
static void make_oracle(unsigned long cap)
{
	for (unsigned long p = 0; p < nr_phases; p++) {
		double w[MAX_REGIONS], share = 0;
		unsigned long left = cap;

		memcpy(w, weight[p], sizeof(w));
		for (unsigned long k = 0; k < nr_regions && left; k++) {
			unsigned long best = 0, take;

			for (unsigned long r = 1; r < nr_regions; r++)
				if (w[r] > w[best])
					best = r;
			take = left < region_pages ? left : region_pages;
			share += w[best] * take / region_pages;
			oracle_fast[p][best] = take;
			left -= take;
			w[best] = -1;
		}
		oracle[p] = share;
	}
}

static unsigned long oracle_moves[MAX_PHASES];

/*
 * The pages the oracle moves at each phase's start: per region, the
 * difference between its pages on FAST in the phase and in the one before
 * (for phase 0, where the fill left them: @home, one sampled page in
 * every stride).
 */
static void oracle_exchange(const int *home, unsigned long nr_samp)
{
	unsigned long before[MAX_REGIONS] = { 0 };

	for (unsigned long i = 0; i < nr_samp; i++)
		if (home[i] == fast)
			before[i * stride / region_pages] += stride;
	for (unsigned long p = 0; p < nr_phases; p++) {
		for (unsigned long r = 0; r < nr_regions; r++) {
			unsigned long want = oracle_fast[p][r];

			oracle_moves[p] += want > before[r] ? want - before[r] : before[r] - want;
			before[r] = want;
		}
	}
}

int main(int argc, char **argv)
{
	static double s_t[MAX_SAMPLES], s_share[MAX_SAMPLES];
	static int s_phase[MAX_SAMPLES];
	unsigned long size, nr_pages, nr_samp, fast_after_fill = 0, pingpong = 0;
	unsigned long cap;
	unsigned long nodemask = 0, ns = 0;
	double phase_s, sample_s = 2, t0, sum = 0, late_sum = 0, oracle_sum = 0;
	unsigned long oracle_moves_sum = 0, moved_p[MAX_PHASES] = { 0 }, vm_mark;
	int *status, *prev, *home, *moves, late_n = 0;
	void **pages;
	pthread_t th;
	struct rusage ru;
	FILE *csv;

	if (argc != 7) {
		fprintf(stderr, "usage: phases SIZE_MIB REGIONS PHASES PHASE_S SEED CSV\n");
		return 2;
	}
	size = strtoul(argv[1], NULL, 0) << 20;
	nr_regions = strtoul(argv[2], NULL, 0);
	nr_phases = strtoul(argv[3], NULL, 0);
	phase_s = atof(argv[4]);
	if (getenv("PHASES_FAST"))
		fast = atoi(getenv("PHASES_FAST"));
	if (getenv("PHASES_SLOW"))
		slow = atoi(getenv("PHASES_SLOW"));
	if (getenv("PHASES_SAMPLE_S"))
		sample_s = atof(getenv("PHASES_SAMPLE_S"));
	if (getenv("PHASES_STRIDE"))
		stride = strtoul(getenv("PHASES_STRIDE"), NULL, 0);
	if (nr_regions < 2 || nr_regions > MAX_REGIONS || !nr_phases ||
	    nr_phases > MAX_PHASES || phase_s <= 0 || sample_s <= 0 || !stride ||
	    fast < 0 || slow < 0 || fast >= 64 || slow >= 64 ||
	    size / nr_regions < PAGE) {
		fprintf(stderr, "phases: bad arguments\n");
		return 2;
	}
	region_pages = size / nr_regions / PAGE;
	nr_pages = region_pages * nr_regions;
	size = nr_pages * PAGE;
	csv = fopen(argv[6], "w");
	if (!csv) {
		perror("phases: CSV");
		return 1;
	}
	make_phases(strtoull(argv[5], NULL, 0) ?: 1);

	cap = fast_capacity(fast);
	nodemask = 1UL << fast | 1UL << slow;
	if (syscall(SYS_set_mempolicy, MPOL_BIND | MPOL_F_NUMA_BALANCING,
		    &nodemask, 65)) {
		perror("phases: set_mempolicy(MPOL_BIND | MPOL_F_NUMA_BALANCING)");
		return 1;
	}
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("phases: mmap");
		return 1;
	}
	madvise(mem, size, MADV_NOHUGEPAGE);
	for (unsigned long i = 0; i < nr_pages; i++)
		memset(mem + i * PAGE, 1, 64);

	nr_samp = (nr_pages + stride - 1) / stride;
	pages = calloc(nr_samp, sizeof(*pages));
	status = calloc(nr_samp, sizeof(*status));
	prev = calloc(nr_samp, sizeof(*prev));
	home = calloc(nr_samp, sizeof(*home));
	moves = calloc(nr_samp, sizeof(*moves));
	if (!pages || !status || !prev || !home || !moves) {
		fprintf(stderr, "phases: out of memory\n");
		return 1;
	}
	for (unsigned long i = 0; i < nr_samp; i++)
		pages[i] = mem + i * stride * PAGE;
	if (where(pages, status, nr_samp)) {
		perror("phases: move_pages");
		return 1;
	}
	for (unsigned long i = 0; i < nr_samp; i++) {
		fast_after_fill += status[i] == fast;
		home[i] = status[i];
	}
	fast_after_fill *= stride;
	make_oracle(cap < nr_pages ? cap : nr_pages);
	oracle_exchange(home, nr_samp);
	printf("phases: %lu MiB, %lu regions of %lu pages; node%d: room for %lu pages before, %lu of them there after the fill\n",
	       size >> 20, nr_regions, region_pages, fast, cap, fast_after_fill);
	fflush(stdout);

	fprintf(csv, "t_s,phase,share,oracle,fast_pages,slow_pages,other_pages,moved_pages\n");
	t0 = now();
	vm_mark = vm_moved();
	if (pthread_create(&th, NULL, access_thread, NULL)) {
		fprintf(stderr, "phases: pthread_create failed\n");
		return 1;
	}
	for (;;) {
		double t, share = 0;
		unsigned long on_fast[MAX_REGIONS] = { 0 }, in_r[MAX_REGIONS] = { 0 };
		unsigned long nf = 0, nsl = 0, no = 0, moved = 0;
		int p, cur;

		usleep(sample_s * 1e6);
		t = now() - t0;
		p = t / phase_s;
		if (p >= (int)nr_phases)
			break;
		cur = atomic_load(&phase);
		if (p != cur) {
			/* a new phase: where each page is now is its home */
			atomic_store(&phase, p);
			moved_p[cur] = vm_moved() - vm_mark;
			vm_mark += moved_p[cur];
			for (unsigned long i = 0; i < nr_samp; i++)
				pingpong += moves[i] == 2;
			memcpy(home, status, nr_samp * sizeof(*status));
			memset(moves, 0, nr_samp * sizeof(*moves));
		}
		memcpy(prev, status, nr_samp * sizeof(*status));
		if (where(pages, status, nr_samp)) {
			perror("phases: move_pages");
			break;
		}
		for (unsigned long i = 0; i < nr_samp; i++) {
			unsigned long r = i * stride / region_pages;

			in_r[r]++;
			if (status[i] == fast) {
				on_fast[r]++;
				nf++;
			} else if (status[i] == slow) {
				nsl++;
			} else {
				no++;
			}
			moved += status[i] != prev[i];
			/* 0: home, 1: left it, 2: left and came back */
			if (!moves[i] && status[i] != home[i] && status[i] >= 0)
				moves[i] = 1;
			else if (moves[i] == 1 && status[i] == home[i])
				moves[i] = 2;
		}
		for (unsigned long r = 0; r < nr_regions; r++)
			share += weight[p][r] * on_fast[r] / in_r[r];
		if (ns < MAX_SAMPLES) {
			s_t[ns] = t;
			s_share[ns] = share;
			s_phase[ns] = p;
			ns++;
		}
		fprintf(csv, "%.1f,%d,%.4f,%.4f,%lu,%lu,%lu,%lu\n", t, p, share,
			oracle[p], nf * stride, nsl * stride, no * stride,
			moved * stride);
		fflush(csv);
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	moved_p[atomic_load(&phase)] = vm_moved() - vm_mark;
	t0 = now() - t0;

	for (unsigned long i = 0; i < nr_samp; i++)
		pingpong += moves[i] == 2;
	for (unsigned long p = 0; p < nr_phases; p++) {
		double psum = 0, reach = -1;
		int pn = 0;

		for (unsigned long i = 0; i < ns; i++) {
			if (s_phase[i] != (int)p)
				continue;
			if (reach < 0 && s_share[i] >= 0.9 * oracle[p])
				reach = s_t[i] - p * phase_s;
			if (s_t[i] >= (p + 0.5) * phase_s) {
				psum += s_share[i];
				pn++;
			}
		}
		printf("RESULT share_%lu=%.4f\n", p, pn ? psum / pn : 0);
		printf("RESULT oracle_%lu=%.4f\n", p, oracle[p]);
		printf("RESULT reach90_s_%lu=%.1f\n", p, reach);
		printf("RESULT oracle_moves_%lu=%lu\n", p, oracle_moves[p]);
		printf("RESULT moved_%lu=%lu\n", p, moved_p[p]);
		oracle_moves_sum += oracle_moves[p];
		late_sum += psum;
		late_n += pn;
		oracle_sum += oracle[p];
	}
	for (unsigned long i = 0; i < ns; i++)
		sum += s_share[i];
	getrusage(RUSAGE_SELF, &ru);
	printf("RESULT share_mean=%.4f\n", ns ? sum / ns : 0);
	printf("RESULT share_late_mean=%.4f\n", late_n ? late_sum / late_n : 0);
	printf("RESULT oracle_mean=%.4f\n", oracle_sum / nr_phases);
	printf("RESULT oracle_moves=%lu\n", oracle_moves_sum);
	printf("RESULT pingpong_pages=%lu\n", pingpong * stride);
	printf("RESULT fast_room_pages=%lu\n", cap);
	printf("RESULT fast_pages_after_fill=%lu\n", fast_after_fill);
	printf("RESULT accesses_per_s=%.0f\n", atomic_load(&accesses) / t0);
	printf("RESULT user_s=%.1f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
	printf("RESULT sys_s=%.1f\n", ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	fclose(csv);
	return 0;
}
