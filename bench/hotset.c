// SPDX-License-Identifier: GPL-2.0
/*
 * hotset: the policy comparison's workloads W4 (a hot set, a quarter of
 * which moves), W5 (Zipf popularity that drifts every second) and W6 (a
 * hot set that never moves).
 *
 *   hotset move   SIZE_MIB HOT_MIB MOVE_S RUN_S CSV       (W4)
 *   hotset drift  SIZE_MIB PERIOD_S RUN_S CSV             (W5)
 *   hotset steady SIZE_MIB HOT_MIB RUN_S CSV              (W6)
 *
 * SIZE_MIB of anonymous memory (no THP) in keys of 4 pages (16 KiB), bound
 * to nodes 0 (fast) and 2 (slow) with MPOL_BIND | MPOL_F_NUMA_BALANCING,
 * written once in key order: the first keys fill node0, the rest spill to
 * node2.  One thread (on the CPU it was started on) then reads and writes
 * one word of a random page of a key drawn by the popularity below, as
 * fast as it can, for RUN_S seconds.
 *
 * move: the hot set is HOT_MIB of keys, the first ones (on node0 after
 * the fill); 90% of the accesses go to a hot key, 10% to a cold one, each
 * uniformly.  At MOVE_S the hot set's first quarter turns cold and as many
 * keys at the end of the memory (cold, on node2) turn hot: HeMem's
 * gups-hotset-move.  Phase 0 is before the move, phase 1 after it.
 * steady: move's hot set, which never moves: the fill's layout is the
 * oracle's from the start and stays it, so whatever a policy migrates is
 * exchange without a gain.  One phase.
 * drift: key popularity is Zipf with exponent 1 (the key of rank r gets
 * 1 / (r + 1) of the accesses, normalised) around a centre key: the keys
 * at distance d after and before it have ranks 2d and 2d - 1 (modulo
 * KEYS).  In second s of the run the centre is key C + s * D, D =
 * KEYS / PERIOD_S: the keys ahead warm, those behind cool, all gradually,
 * and the mapping turns once in PERIOD_S.  C is half the keys the oracle
 * can hold, so that the fill's layout starts as the oracle's.  One phase.
 *
 * Every 2 s the first page of every key is located with move_pages(2)
 * and a CSV line written: t_s, phase, share, oracle, pages on node0, on
 * node2, elsewhere, pages that changed node since the last sample (keys
 * times 4).
 *   share:  the share of accesses node0 serves: the weights of the keys
 *           whose page is on node0;
 *   oracle: the same for an oracle that holds, in node0's free memory at
 *           the start less its high watermarks, the keys of the highest
 *           weight now, keeping the keys it holds where weights tie, and
 *           starting from the fill's layout.
 * A sampled page that leaves its node and comes back within a phase
 * counts as moved back.
 *
 * HOTSET_GO (default unset): after the fill, print "hotset: filled" and
 * wait until a file of that name exists before the accesses and the clock
 * start, so that a policy can be turned on with the fill's layout in place.
 *
 * HOTSET_FLUSH_MS (default 0: never): the access thread flushes its CPU's
 * TLB that often, as bench/damon-tiered.c does and for its reason: QEMU
 * TCG sets a PTE's accessed bit only when its software TLB, which holds
 * the whole footprint, is refilled, where a hardware TLB, far smaller,
 * would be refilled on almost every access of this random pattern.
 *
 * At the end, "RESULT key=value" lines: per phase p, share_p and
 * oracle_p (means over the phase's second half), reach90_s_p (seconds from
 * the phase's start to the first sample at 90% of the oracle, -1 if none),
 * oracle_moves_p (the pages the oracle moved in and out of node0 in the
 * phase, phase 0 from the fill's layout), moved_p (the pages the kernel
 * migrated in the phase, by /proc/vmstat: every migration on the machine,
 * which runs this alone); late_over_oracle (the share over the oracle's in
 * every phase's second half), share_mean, moved, oracle_moves,
 * moved_back_pages, fast_room_pages, fast_pages_after_fill,
 * accesses_per_s, user_s, sys_s.  Times are the machine's (TCG in the lab).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "tier-sample.h"

#define KEY_PAGES	4
#define MAX_SAMPLES	4096
#define HOT_SHARE	0.9
#define FAST		0
#define SLOW		2
/* above the kernel's 33-page ceiling for flushing page by page */
#define FLUSH_PAGES	64

static int drift, steady;
static char *mem;
static unsigned long nr_keys;
/* move: hot keys, a quarter of them, the move's time */
static unsigned long hot, quarter;
static double move_s;
/* drift: the first centre, keys per second, the Zipf CDF by rank, its sum */
static unsigned long centre0, step;
static double *cdf, harmonic;
static double t0, flush_s;
static char *flush_area;
static atomic_int stop;
static atomic_ulong accesses;

static int phase_at(double t)
{
	return !drift && !steady && t >= move_s;
}

/* drift: the centre key in second @t of the run */
static unsigned long centre_at(double t)
{
	return (centre0 + (unsigned long)t * step) % nr_keys;
}

/* drift: the rank of key @k at time @t */
static unsigned long rank_of(unsigned long k, double t)
{
	unsigned long x = (k + nr_keys - centre_at(t)) % nr_keys;

	return x < nr_keys - x ? 2 * x : 2 * (nr_keys - x) - 1;
}

static int is_hot(unsigned long k, int phase)
{
	if (!phase)
		return k < hot;
	return (k >= quarter && k < hot) || k >= nr_keys - quarter;
}

/* the share of all accesses that key @k gets at time @t */
static double weight(unsigned long k, double t)
{
	if (drift)
		return 1 / ((rank_of(k, t) + 1) * harmonic);
	if (is_hot(k, phase_at(t)))
		return HOT_SHARE / hot;
	return (1 - HOT_SHARE) / (nr_keys - hot);
}

/* a key drawn from the popularity at time @t, by the uniform @u in [0,1) */
static unsigned long draw(uint64_t *s, double u, double t)
{
	unsigned long lo = 0, hi = nr_keys - 1, x;

	if (drift) {
		/* the lowest rank whose cumulative share exceeds u */
		while (lo < hi) {
			unsigned long mid = (lo + hi) / 2;

			if (cdf[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		x = lo % 2 ? nr_keys - (lo + 1) / 2 : lo / 2;
		return (centre_at(t) + x) % nr_keys;
	}
	if (u < HOT_SHARE) {
		x = xorshift(s) % hot;
		if (!phase_at(t))
			return x;
		return x < hot - quarter ? quarter + x : nr_keys - hot + x;
	}
	x = xorshift(s) % (nr_keys - hot);
	if (!phase_at(t))
		return hot + x;
	return x < quarter ? x : hot + x - quarter;
}

/*
 * Flush this CPU's TLB: PROT_NONE on more than 33 present pages makes the
 * kernel flush it whole (a CR3 write, which empties QEMU's software TLB).
 */
static void flush_tlb(void)
{
	mprotect(flush_area, FLUSH_PAGES * PAGE, PROT_NONE);
	mprotect(flush_area, FLUSH_PAGES * PAGE, PROT_READ | PROT_WRITE);
}

static void *access_thread(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ (uintptr_t)arg;
	unsigned long n = 0;
	double flushed = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		double t = now() - t0;

		if (flush_s > 0 && t - flushed >= flush_s) {
			flush_tlb();
			flushed = t;
		}
		for (int i = 0; i < 1024; i++) {
			double u = (xorshift(&s) >> 11) * (1.0 / 9007199254740992.0);
			unsigned long k = draw(&s, u, t);
			unsigned long pg = k * KEY_PAGES + xorshift(&s) % KEY_PAGES;
			volatile unsigned long *word;

			word = (volatile unsigned long *)(mem + pg * PAGE +
							  (xorshift(&s) % (PAGE / 8)) * 8);
			*word = *word + 1;
		}
		n += 1024;
		atomic_store_explicit(&accesses, n, memory_order_relaxed);
	}
	return NULL;
}

/*
 * The oracle's node0 (@in: a flag per key) at time @t, @cap keys: drift,
 * the @cap hottest keys; move, every hot key it has room for, then cold
 * ones, keeping those it holds.  Returns the keys it moved in or out.
 */
static unsigned long oracle_update(unsigned char *in, unsigned long cap, double t)
{
	unsigned long moves = 0, held[2] = { 0 };
	long need[2];
	int p = phase_at(t);

	if (drift) {
		for (unsigned long k = 0; k < nr_keys; k++) {
			unsigned char want = rank_of(k, t) < cap;

			moves += want != in[k];
			in[k] = want;
		}
		return moves;
	}
	for (unsigned long k = 0; k < nr_keys; k++)
		held[is_hot(k, p)] += in[k];
	need[1] = (long)(cap < hot ? cap : hot) - (long)held[1];
	need[0] = (long)(cap > hot ? cap - hot : 0) - (long)held[0];
	for (unsigned long k = 0; k < nr_keys; k++) {
		int c = is_hot(k, p);

		if ((in[k] && need[c] < 0) || (!in[k] && need[c] > 0)) {
			need[c] += in[k] ? 1 : -1;
			in[k] = !in[k];
			moves++;
		}
	}
	return moves;
}

static void usage(void)
{
	fprintf(stderr, "usage: hotset move SIZE_MIB HOT_MIB MOVE_S RUN_S CSV\n"
		"       hotset drift SIZE_MIB PERIOD_S RUN_S CSV\n"
		"       hotset steady SIZE_MIB HOT_MIB RUN_S CSV\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static double s_t[MAX_SAMPLES], s_share[MAX_SAMPLES], s_oracle[MAX_SAMPLES];
	static int s_phase[MAX_SAMPLES];
	unsigned long nodemask = 1UL << FAST | 1UL << SLOW, cap, ns = 0;
	unsigned long fast_after_fill = 0, moved_back = 0, vm_mark;
	unsigned long moved_p[2] = { 0 }, oracle_moves[2] = { 0 };
	double run_s, phase_start[2] = { 0 }, sum = 0, late_s = 0, late_o = 0;
	int *status, *prev, *home, *left, nr_phases, cur = 0;
	unsigned char *in;
	void **pages;
	const char *csv_path;
	pthread_t th;
	struct rusage ru;
	FILE *csv;

	if (argc < 2)
		usage();
	drift = !strcmp(argv[1], "drift");
	steady = !strcmp(argv[1], "steady");
	if (drift || steady ? argc != 6 : argc != 7 || strcmp(argv[1], "move"))
		usage();
	nr_keys = (strtoul(argv[2], NULL, 0) << 20) / (KEY_PAGES * PAGE);
	if (drift) {
		double period = atof(argv[3]);

		step = period > 0 ? nr_keys / period : 0;
		run_s = atof(argv[4]);
		csv_path = argv[5];
		if (!step)
			usage();
		cdf = malloc(nr_keys * sizeof(*cdf));
		if (!cdf)
			return 1;
		for (unsigned long r = 0; r < nr_keys; r++)
			cdf[r] = harmonic += 1.0 / (r + 1);
		for (unsigned long r = 0; r < nr_keys; r++)
			cdf[r] /= harmonic;
		cdf[nr_keys - 1] = 1.0;
	} else if (steady) {
		hot = (strtoul(argv[3], NULL, 0) << 20) / (KEY_PAGES * PAGE);
		run_s = atof(argv[4]);
		csv_path = argv[5];
		if (!hot || hot >= nr_keys || run_s <= 0)
			usage();
	} else {
		hot = (strtoul(argv[3], NULL, 0) << 20) / (KEY_PAGES * PAGE);
		quarter = hot / 4;
		move_s = atof(argv[4]);
		run_s = atof(argv[5]);
		csv_path = argv[6];
		phase_start[1] = move_s;
		if (!quarter || hot + quarter >= nr_keys || move_s <= 0 || move_s >= run_s)
			usage();
	}
	nr_phases = drift || steady ? 1 : 2;
	if (getenv("HOTSET_FLUSH_MS"))
		flush_s = atof(getenv("HOTSET_FLUSH_MS")) / 1000;
	flush_area = mmap(NULL, FLUSH_PAGES * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (flush_area == MAP_FAILED) {
		perror("hotset: mmap");
		return 1;
	}
	memset(flush_area, 1, FLUSH_PAGES * PAGE);
	csv = fopen(csv_path, "w");
	if (!csv) {
		perror("hotset: CSV");
		return 1;
	}

	cap = fast_capacity(FAST) / KEY_PAGES;
	if (cap > nr_keys)
		cap = nr_keys;
	centre0 = cap / 2;
	if (syscall(SYS_set_mempolicy, MPOL_BIND | MPOL_F_NUMA_BALANCING, &nodemask, 65)) {
		perror("hotset: set_mempolicy(MPOL_BIND | MPOL_F_NUMA_BALANCING)");
		return 1;
	}
	mem = mmap(NULL, nr_keys * KEY_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("hotset: mmap");
		return 1;
	}
	madvise(mem, nr_keys * KEY_PAGES * PAGE, MADV_NOHUGEPAGE);
	for (unsigned long pg = 0; pg < nr_keys * KEY_PAGES; pg++)
		mem[pg * PAGE] = 1;

	pages = calloc(nr_keys, sizeof(*pages));
	status = calloc(nr_keys, sizeof(*status));
	prev = calloc(nr_keys, sizeof(*prev));
	home = calloc(nr_keys, sizeof(*home));
	left = calloc(nr_keys, sizeof(*left));
	in = calloc(nr_keys, 1);
	if (!pages || !status || !prev || !home || !left || !in) {
		fprintf(stderr, "hotset: out of memory\n");
		return 1;
	}
	for (unsigned long k = 0; k < nr_keys; k++)
		pages[k] = mem + k * KEY_PAGES * PAGE;
	if (where(pages, status, nr_keys)) {
		perror("hotset: move_pages");
		return 1;
	}
	for (unsigned long k = 0; k < nr_keys; k++) {
		in[k] = status[k] == FAST;
		fast_after_fill += in[k];
		home[k] = status[k];
	}
	oracle_moves[0] = oracle_update(in, cap, 0);
	printf("hotset: %s, %lu MiB in %lu keys of %d pages; node%d: room for %lu keys, %lu of them there after the fill\n",
	       argv[1], nr_keys * KEY_PAGES * PAGE >> 20, nr_keys, KEY_PAGES, FAST,
	       cap, fast_after_fill);
	fflush(stdout);

	if (getenv("HOTSET_GO")) {
		printf("hotset: filled\n");
		fflush(stdout);
		while (access(getenv("HOTSET_GO"), F_OK))
			usleep(100000);
	}
	fprintf(csv, "t_s,phase,share,oracle,fast_pages,slow_pages,other_pages,moved_pages\n");
	t0 = now();
	vm_mark = vm_moved();
	if (pthread_create(&th, NULL, access_thread, NULL)) {
		fprintf(stderr, "hotset: pthread_create failed\n");
		return 1;
	}
	for (;;) {
		unsigned long nf = 0, nsl = 0, no = 0, changed = 0;
		double t, share = 0, oracle = 0;
		int p;

		usleep(2000000);
		t = now() - t0;
		if (t >= run_s)
			break;
		p = phase_at(t);
		if (p != cur) {
			/* the move: where each page is now is its home */
			moved_p[cur] = vm_moved() - vm_mark;
			vm_mark += moved_p[cur];
			for (unsigned long k = 0; k < nr_keys; k++)
				moved_back += left[k] == 2;
			memcpy(home, status, nr_keys * sizeof(*status));
			memset(left, 0, nr_keys * sizeof(*left));
			cur = p;
		}
		oracle_moves[p] += oracle_update(in, cap, t);
		memcpy(prev, status, nr_keys * sizeof(*status));
		if (where(pages, status, nr_keys)) {
			perror("hotset: move_pages");
			break;
		}
		for (unsigned long k = 0; k < nr_keys; k++) {
			double w = weight(k, t);

			if (status[k] == FAST) {
				share += w;
				nf++;
			} else if (status[k] == SLOW) {
				nsl++;
			} else {
				no++;
			}
			oracle += in[k] * w;
			changed += status[k] != prev[k];
			/* 0: at home, 1: left it, 2: left and came back */
			if (!left[k] && status[k] != home[k] && status[k] >= 0)
				left[k] = 1;
			else if (left[k] == 1 && status[k] == home[k])
				left[k] = 2;
		}
		if (ns < MAX_SAMPLES) {
			s_t[ns] = t;
			s_share[ns] = share;
			s_oracle[ns] = oracle;
			s_phase[ns] = p;
			ns++;
		}
		fprintf(csv, "%.1f,%d,%.4f,%.4f,%lu,%lu,%lu,%lu\n", t, p, share, oracle,
			nf * KEY_PAGES, nsl * KEY_PAGES, no * KEY_PAGES, changed * KEY_PAGES);
		fflush(csv);
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	moved_p[cur] = vm_moved() - vm_mark;
	t0 = now() - t0;
	for (unsigned long k = 0; k < nr_keys; k++)
		moved_back += left[k] == 2;

	for (int p = 0; p < nr_phases; p++) {
		double end = p + 1 < nr_phases ? phase_start[p + 1] : run_s;
		double mid = (phase_start[p] + end) / 2, ps = 0, po = 0, reach = -1;
		int pn = 0;

		for (unsigned long i = 0; i < ns; i++) {
			if (s_phase[i] != p)
				continue;
			if (reach < 0 && s_share[i] >= 0.9 * s_oracle[i])
				reach = s_t[i] - phase_start[p];
			if (s_t[i] >= mid) {
				ps += s_share[i];
				po += s_oracle[i];
				pn++;
			}
		}
		printf("RESULT share_%d=%.4f\n", p, pn ? ps / pn : 0);
		printf("RESULT oracle_%d=%.4f\n", p, pn ? po / pn : 0);
		printf("RESULT reach90_s_%d=%.1f\n", p, reach);
		printf("RESULT oracle_moves_%d=%lu\n", p, oracle_moves[p] * KEY_PAGES);
		printf("RESULT moved_%d=%lu\n", p, moved_p[p]);
		late_s += ps;
		late_o += po;
	}
	for (unsigned long i = 0; i < ns; i++)
		sum += s_share[i];
	getrusage(RUSAGE_SELF, &ru);
	printf("RESULT late_over_oracle=%.3f\n", late_o > 0 ? late_s / late_o : 0);
	printf("RESULT share_mean=%.4f\n", ns ? sum / ns : 0);
	printf("RESULT moved=%lu\n", moved_p[0] + moved_p[1]);
	printf("RESULT oracle_moves=%lu\n", (oracle_moves[0] + oracle_moves[1]) * KEY_PAGES);
	printf("RESULT moved_back_pages=%lu\n", moved_back * KEY_PAGES);
	printf("RESULT fast_room_pages=%lu\n", cap * KEY_PAGES);
	printf("RESULT fast_pages_after_fill=%lu\n", fast_after_fill * KEY_PAGES);
	printf("RESULT accesses_per_s=%.0f\n", atomic_load(&accesses) / t0);
	printf("RESULT user_s=%.1f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
	printf("RESULT sys_s=%.1f\n", ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	fclose(csv);
	return 0;
}
