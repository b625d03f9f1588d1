// SPDX-License-Identifier: GPL-2.0
/*
 * numa-hint: the workload and the trace reader of the NUMA-balancing
 * hint-latency benchmark (bench/scenarios/numa-hint.sh).
 *
 *   numa-hint run [-t TOTAL_MIB] [-f FAST_MIB] [-c CHUNK_MIB] [-H HOT]
 *                 [-i ITERS] [-w SWEEP_EVERY] [-e EPISODES] [-r RUN_S]
 *                 [-s SEED] [-F FAST_NID] [-S SLOW_NID] [-q SAMPLE_S]
 *                 [-p PAUSE_MS] [-u] [-n] LABEL CSV
 *   numa-hint trace TRACE_PIPE
 *
 * run: the seed's microbenchmark (seeds/000) at lab scale.  It maps
 * TOTAL_MIB (1536) of private anonymous memory in base pages and faults it
 * in: the first FAST_MIB (0) with MPOL_BIND to FAST_NID and SLOW_NID (0 and
 * 2: node0 gives what it has above its low watermark, the rest spills), the
 * rest with MPOL_BIND to SLOW_NID; then the whole mapping goes back to the
 * default policy, so that NUMA balancing may promote any page (-n: no
 * mbind, for a test on a machine without those nodes).  The memory is cut
 * into chunks of CHUNK_MIB (8: 192 chunks, as the seed's 192 GB in 1 GB
 * chunks); HOT (16) chunks chosen at random among those wholly on SLOW_NID
 * are the hot ones, the others are never hot.  It prints "ready" and waits
 * for SIGUSR1; then, for EPISODES episodes (0: no limit) but at most RUN_S
 * (240) s (or until SIGTERM/SIGINT):
 *
 *   an episode: a hot chunk chosen at random gets ITERS (4 per page of a
 *     chunk) one-byte writes, each to a page of the chunk chosen at random;
 *   after every SWEEP_EVERY (4) episodes, a never-hot chunk chosen at
 *     random is swept once: one write to each of its pages, in order.
 *
 * -u, the seed's regime: every chunk is a candidate, an episode picks one
 * uniformly at random among all of them (wherever its pages are), and
 * there are no sweeps; the "hot" pages below are then all pages.  -w 0
 * turns the sweeps off, as does a hot set of every chunk.  -p sleeps
 * PAUSE_MS between episodes (a process with a low fault rate).  -q sets
 * the sampling period (1 s).
 *
 * Every episode is bracketed by two move_pages(2) queries of its chunk's
 * pages, before and after.  From them: the DRAM share of the episode's
 * accesses (the mean of node0's share before and after, times ITERS), a
 * modelled access cost with the lab's HMAT latencies (LAT_FAST_NS,
 * LAT_SLOW_NS from CPU0; scripts/lab.sh), the chunk's pages promoted
 * during the episode ("ep_promoted": on SLOW_NID before, on FAST_NID
 * after), and what became of them when their chunk's next episode
 * started: still on FAST_NID ("kept") or back on SLOW_NID ("undone").
 *
 * The random numbers come from SEED (1) alone, so every run with the same
 * arguments makes the same accesses in the same order (how many it makes
 * in RUN_S depends on the machine).  Once a second it asks move_pages(2)
 * where the hot chunks' pages are, and every FULL_EVERY samples (and at
 * the end) where all pages are, and appends a line
 *
 *   LABEL,t_s,hot_node0,hot_node2,hot_other,hot_on_node0_pct,hot_promoted,
 *   wrong_promoted,episodes
 *
 * to CSV (hot_node0/hot_node2: on FAST_NID/SLOW_NID; hot_promoted and
 * wrong_promoted: the hot and never-hot pages seen so far on SLOW_NID and
 * later on FAST_NID, wrong_promoted as of the last full sample; episodes:
 * done so far).  At the
 * end it prints "RESULT LABEL_key=value" lines (see bench/README).  A page
 * that moves and moves back between two samples is not seen: the page
 * counts are lower bounds, to be read next to the kernel's counters.
 *
 * trace: reads tiering:tiering_promote_decision events from TRACE_PIPE
 * (key=value fields latency, threshold, mode, decision, nr_pages) until
 * SIGTERM or SIGINT, then drains what is left and prints a summary:
 * events per decision, the latency distribution against the threshold in
 * force, and "RESULT trace_key=value" lines.
 *
 * Plain libc and raw syscalls: no libnuma.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_S	1.0
#define FULL_EVERY	15	/* samples between two queries of every page */
#define NO_NODE		0xff
#define MPOL_DEFAULT	0
#define MPOL_BIND	2

/*
 * The lab's HMAT (scripts/lab.sh), initiator CPU0: node0 10 ns, node2 30 ns
 * access latency.  Only the model uses them; TCG itself runs every node at
 * the host's speed.
 */
#define LAT_FAST_NS	10.0
#define LAT_SLOW_NS	30.0

/* per page history */
#define P_SLOW		0x1	/* seen on the slow node */
#define P_PROMOTED	0x2	/* then seen on the fast node */
#define P_FAST		0x4	/* seen on the fast node */
#define P_DEMOTED	0x8	/* then seen on the slow node */
#define P_EP_PROMOTED	0x10	/* promoted during its chunk's last episode */

static int stop, go;
static long page_size;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		__atomic_store_n(&go, 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
}

static void fail(const char *what)
{
	fprintf(stderr, "numa-hint: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *alloc(size_t n)
{
	void *p = calloc(n, 1);

	if (!p)
		fail("calloc");
	return p;
}

/* xorshift64*: the same sequence for the same seed, on every machine */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

static unsigned long rnd_below(unsigned long n)
{
	return (rnd() >> 11) % n;
}

/* The workload: its memory, its chunks and what the samples saw. */
struct bench {
	const char *label;
	char *mem;
	unsigned long nr_pages, chunk_pages, nr_chunks;
	unsigned long nr_hot, iters, sweep_every;
	int uniform;			/* -u: every chunk a candidate */
	unsigned long pause_ms;		/* -p: sleep between episodes */
	double sample_s;		/* -q: sampling period */
	int fast, slow;
	unsigned long *hot;		/* the hot chunks */
	unsigned char *chunk_hot;	/* per chunk: 1 if hot */
	void **addr;			/* every page, hot chunks' pages first */
	unsigned long *page_of;		/* addr[i] is page page_of[i] */
	int *status;			/* move_pages() result, as addr */
	unsigned char *last;		/* per page: last node seen */
	unsigned char *hist;		/* per page: P_* */
	unsigned char *moves;		/* per page: slow->fast moves seen */
	unsigned long nr_hot_pages;	/* addr[0..nr_hot_pages) are hot */
	unsigned long hot_now[3];	/* hot pages on fast, slow, elsewhere */
	unsigned long wrong;		/* never-hot pages P_PROMOTED */
	unsigned long nr_samples, nr_full;
	double t_hot, t_full;		/* time spent in the queries */
	double t0, t50, t90;		/* when the hot set first reached 50/90% */
	double run_s;
	unsigned long nr_ep, max_ep;	/* episodes done, to do (0: no limit) */
	long q1;			/* hot pages promoted by a quarter of it */
	double first_pct, last_pct;
	/* per episode, from the queries that bracket it */
	void **ep_addr;			/* the episode chunk's pages */
	int *ep_before, *ep_after;
	double acc, acc_fast;		/* accesses; share on the fast node */
	double acc_cost_ns;		/* modelled access cost */
	unsigned long ep_promoted, ep_demoted, kept, undone;
	double t_ep_query;
	FILE *csv;
};

static int page_hot(const struct bench *b, unsigned long page)
{
	return b->chunk_hot[page / b->chunk_pages];
}

static void set_policy(char *start, unsigned long len, int mode,
		       unsigned long nodes)
{
	if (syscall(SYS_mbind, start, len, mode, mode ? &nodes : NULL,
		    mode ? 8 * sizeof(nodes) : 0, 0))
		fail("mbind");
}

/* Map and fault in the memory: @fast_pages first, near the fast node. */
static void layout(struct bench *b, unsigned long fast_pages, int no_mbind)
{
	size_t len = b->nr_pages * page_size;
	unsigned long i;

	b->mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->mem == MAP_FAILED)
		fail("mmap");
	if (madvise(b->mem, len, MADV_NOHUGEPAGE))
		fail("madvise");
	if (!no_mbind) {
		set_policy(b->mem, fast_pages * page_size, MPOL_BIND,
			   1UL << b->fast | 1UL << b->slow);
		set_policy(b->mem + fast_pages * page_size,
			   (b->nr_pages - fast_pages) * page_size, MPOL_BIND,
			   1UL << b->slow);
	}
	for (i = 0; i < b->nr_pages; i++)
		b->mem[i * page_size] = 1;
	if (!no_mbind)
		set_policy(b->mem, len, MPOL_DEFAULT, 0);
}

/*
 * Choose the hot chunks among those wholly on the slow node, and order
 * the query array: the hot chunks' pages first, then all the others.
 */
static void choose_hot(struct bench *b)
{
	unsigned long c, i, n = 0, nr_slow = 0, *slow, cp = b->chunk_pages;
	void *one[1];
	int nid;

	slow = alloc(b->nr_chunks * sizeof(*slow));
	for (c = 0; c < b->nr_chunks; c++) {
		if (b->uniform) {	/* every chunk, wherever it is */
			slow[nr_slow++] = c;
			continue;
		}
		for (i = 0; i < cp; i += cp / 8) {
			one[0] = b->mem + (c * cp + i) * page_size;
			if (syscall(SYS_move_pages, 0, 1, one, NULL, &nid, 0))
				fail("move_pages");
			if (nid != b->slow)
				break;
		}
		if (i >= cp)
			slow[nr_slow++] = c;
	}
	if (nr_slow < b->nr_hot) {
		fprintf(stderr, "numa-hint: %lu chunks on node%d, %lu hot wanted\n",
			nr_slow, b->slow, b->nr_hot);
		exit(1);
	}
	/* a partial Fisher-Yates shuffle picks nr_hot of them */
	for (i = 0; i < b->nr_hot; i++) {
		c = i + rnd_below(nr_slow - i);
		b->hot[i] = slow[c];
		slow[c] = slow[i];
		b->chunk_hot[b->hot[i]] = 1;
	}
	free(slow);
	for (i = 0; i < b->nr_hot; i++)
		for (c = 0; c < cp; c++)
			b->page_of[n++] = b->hot[i] * cp + c;
	b->nr_hot_pages = n;
	for (i = 0; i < b->nr_pages; i++)
		if (!page_hot(b, i))
			b->page_of[n++] = i;
	for (i = 0; i < b->nr_pages; i++)
		b->addr[i] = b->mem + b->page_of[i] * page_size;
}

static double pct(unsigned long part, unsigned long whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* Ask where addr[0..n) are and fold the answer into their history. */
static void query(struct bench *b, unsigned long n)
{
	unsigned long i, page;
	int nid;

	if (syscall(SYS_move_pages, 0, n, b->addr, NULL, b->status, 0))
		fail("move_pages");
	memset(b->hot_now, 0, sizeof(b->hot_now));
	for (i = 0; i < n; i++) {
		nid = b->status[i];
		if (i < b->nr_hot_pages)
			b->hot_now[nid == b->fast ? 0 : nid == b->slow ? 1 : 2]++;
		if (nid != b->fast && nid != b->slow)
			continue;	/* absent or elsewhere: keep what we knew */
		page = b->page_of[i];
		if (nid == b->slow) {
			if (b->hist[page] & P_FAST)
				b->hist[page] |= P_DEMOTED;
			b->hist[page] |= P_SLOW;
		} else {
			if (b->last[page] == b->slow && b->moves[page] < 255)
				b->moves[page]++;
			if (b->hist[page] & P_SLOW)
				b->hist[page] |= P_PROMOTED;
			b->hist[page] |= P_FAST;
		}
		b->last[page] = nid;
	}
}

/* Count the pages (hot ones or the others) whose history has @flag. */
static unsigned long count(const struct bench *b, int hot, int flag)
{
	unsigned long i, n = 0;

	for (i = 0; i < b->nr_pages; i++)
		n += page_hot(b, i) == hot && (b->hist[i] & flag);
	return n;
}

static void sample(struct bench *b, int full)
{
	double t = mono(), p;
	unsigned long promoted;

	query(b, full ? b->nr_pages : b->nr_hot_pages);
	if (full) {
		b->wrong = count(b, 0, P_PROMOTED);
		b->t_full += mono() - t;
		b->nr_full++;
	} else {
		b->t_hot += mono() - t;
	}
	p = pct(b->hot_now[0], b->nr_hot_pages);
	if (!b->nr_samples++)
		b->first_pct = p;
	b->last_pct = p;
	t -= b->t0;
	if (p >= 50 && b->t50 < 0)
		b->t50 = t;
	if (p >= 90 && b->t90 < 0)
		b->t90 = t;
	promoted = count(b, 1, P_PROMOTED);
	if (b->q1 < 0 && (b->max_ep ? 4 * b->nr_ep >= b->max_ep :
			  4 * t >= b->run_s))
		b->q1 = promoted;
	fprintf(b->csv, "%s,%.2f,%lu,%lu,%lu,%.3f,%lu,%lu,%lu\n", b->label, t,
		b->hot_now[0], b->hot_now[1], b->hot_now[2], p, promoted,
		b->wrong, b->nr_ep);
	fflush(b->csv);
	if (b->nr_samples % 15 == 1) {
		printf("bench: %s: [%5.1fs] hot set on node%d %6.2f%%, wrong promotions %lu pages\n",
		       b->label, t, b->fast, p, b->wrong);
		fflush(stdout);
	}
}

/* One episode on hot chunk @c: iters writes to random pages of it. */
static void episode(const struct bench *b, unsigned long c, char val)
{
	char *base = b->mem + c * b->chunk_pages * page_size;
	unsigned long i;

	for (i = 0; i < b->iters; i++)
		__atomic_store_n(base + rnd_below(b->chunk_pages) * page_size,
				 val, __ATOMIC_RELAXED);
}

/* Where chunk @c's pages are, into @status. */
static void query_chunk(struct bench *b, unsigned long c, int *status)
{
	unsigned long i;
	double t = mono();

	for (i = 0; i < b->chunk_pages; i++)
		b->ep_addr[i] = b->mem + (c * b->chunk_pages + i) * page_size;
	if (syscall(SYS_move_pages, 0, b->chunk_pages, b->ep_addr, NULL,
		    status, 0))
		fail("move_pages");
	b->t_ep_query += mono() - t;
}

/*
 * Before an episode on chunk @c: settle its pages promoted by the previous
 * episode on it (kept or undone), and take the fast node's share.
 */
static unsigned long episode_before(struct bench *b, unsigned long c)
{
	unsigned long i, page, fast = 0;

	query_chunk(b, c, b->ep_before);
	for (i = 0; i < b->chunk_pages; i++) {
		page = c * b->chunk_pages + i;
		fast += b->ep_before[i] == b->fast;
		if (!(b->hist[page] & P_EP_PROMOTED))
			continue;
		b->hist[page] &= ~P_EP_PROMOTED;
		if (b->ep_before[i] == b->fast)
			b->kept++;
		else if (b->ep_before[i] == b->slow)
			b->undone++;
	}
	return fast;
}

/* After it: the pages it saw promoted, and the model's account of it. */
static void episode_after(struct bench *b, unsigned long c,
			  unsigned long fast_before)
{
	unsigned long i, page, fast = 0;
	double share;

	query_chunk(b, c, b->ep_after);
	for (i = 0; i < b->chunk_pages; i++) {
		page = c * b->chunk_pages + i;
		fast += b->ep_after[i] == b->fast;
		if (b->ep_before[i] == b->slow && b->ep_after[i] == b->fast) {
			b->ep_promoted++;
			b->hist[page] |= P_EP_PROMOTED;
		} else if (b->ep_before[i] == b->fast &&
			   b->ep_after[i] == b->slow) {
			b->ep_demoted++;
		}
	}
	share = (fast_before + fast) / (2.0 * b->chunk_pages);
	b->acc += b->iters;
	b->acc_fast += b->iters * share;
	b->acc_cost_ns += b->iters *
		(share * LAT_FAST_NS + (1 - share) * LAT_SLOW_NS);
}

static void sweep(const struct bench *b, unsigned long c, char val)
{
	char *base = b->mem + c * b->chunk_pages * page_size;
	unsigned long i;

	for (i = 0; i < b->chunk_pages; i++)
		__atomic_store_n(base + i * page_size, val, __ATOMIC_RELAXED);
}

static void print_time(const char *label, const char *key, double t)
{
	if (t < 0)
		printf("RESULT %s_%s=never\n", label, key);
	else
		printf("RESULT %s_%s=%.1f\n", label, key, t);
}

static void report(const struct bench *b, double run_s,
		   unsigned long nr_sweeps, double revisit)
{
	const char *l = b->label;
	unsigned long i, hot_moves = 0, wrong_moves = 0;

	for (i = 0; i < b->nr_pages; i++) {
		if (page_hot(b, i))
			hot_moves += b->moves[i];
		else
			wrong_moves += b->moves[i];
	}
	printf("RESULT %s_hot_pages=%lu\n", l, b->nr_hot_pages);
	printf("RESULT %s_cold_pages=%lu\n", l, b->nr_pages - b->nr_hot_pages);
	printf("RESULT %s_cold_slow_pages=%lu\n", l, count(b, 0, P_SLOW));
	printf("RESULT %s_hot_initial_pct=%.2f\n", l, b->first_pct);
	printf("RESULT %s_hot_final_pct=%.2f\n", l, b->last_pct);
	printf("RESULT %s_hot_promoted_pages=%lu\n", l, count(b, 1, P_PROMOTED));
	printf("RESULT %s_hot_promoted_q1_pages=%ld\n", l, b->q1);
	printf("RESULT %s_hot_promotions=%lu\n", l, hot_moves);
	printf("RESULT %s_hot_demoted_pages=%lu\n", l, count(b, 1, P_DEMOTED));
	printf("RESULT %s_wrong_promoted_pages=%lu\n", l, b->wrong);
	printf("RESULT %s_wrong_promotions=%lu\n", l, wrong_moves);
	printf("RESULT %s_cold_demoted_pages=%lu\n", l, count(b, 0, P_DEMOTED));
	printf("RESULT %s_accesses=%.0f\n", l, b->acc);
	printf("RESULT %s_dram_share_pct=%.2f\n", l,
	       b->acc ? 100 * b->acc_fast / b->acc : 0);
	printf("RESULT %s_access_model_s=%.4f\n", l, b->acc_cost_ns / 1e9);
	printf("RESULT %s_ep_promoted_pages=%lu\n", l, b->ep_promoted);
	printf("RESULT %s_ep_demoted_pages=%lu\n", l, b->ep_demoted);
	printf("RESULT %s_ep_promoted_kept=%lu\n", l, b->kept);
	printf("RESULT %s_ep_promoted_undone=%lu\n", l, b->undone);
	print_time(l, "hot50_s", b->t50);
	print_time(l, "hot90_s", b->t90);
	printf("RESULT %s_episodes=%lu\n", l, b->nr_ep);
	printf("RESULT %s_sweeps=%lu\n", l, nr_sweeps);
	printf("RESULT %s_revisit_s=%.2f\n", l, revisit);
	printf("RESULT %s_run_s=%.1f\n", l, run_s);
}

static int do_run(struct bench *b, unsigned long fast_mib, double run_s,
		  int no_mbind, const char *csv)
{
	unsigned long nr_sweeps = 0, nr_revisits = 0, c, fast_before;
	struct timespec pause;
	double t, next, sum_revisit = 0, *seen;
	sigset_t usr1, old;

	b->hot = alloc(b->nr_hot * sizeof(*b->hot));
	b->chunk_hot = alloc(b->nr_chunks);
	b->addr = alloc(b->nr_pages * sizeof(*b->addr));
	b->page_of = alloc(b->nr_pages * sizeof(*b->page_of));
	b->status = alloc(b->nr_pages * sizeof(*b->status));
	b->last = alloc(b->nr_pages);
	b->hist = alloc(b->nr_pages);
	b->moves = alloc(b->nr_pages);
	b->ep_addr = alloc(b->chunk_pages * sizeof(*b->ep_addr));
	b->ep_before = alloc(b->chunk_pages * sizeof(*b->ep_before));
	b->ep_after = alloc(b->chunk_pages * sizeof(*b->ep_after));
	seen = alloc(b->nr_chunks * sizeof(*seen));
	memset(b->last, NO_NODE, b->nr_pages);
	b->t50 = b->t90 = -1;
	b->q1 = -1;
	b->run_s = run_s;
	b->csv = fopen(csv, "a");
	if (!b->csv)
		fail(csv);

	/* no SIGUSR1 lost between testing go and sleeping */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	t = mono();
	layout(b, fast_mib * (1 << 20) / page_size, no_mbind);
	choose_hot(b);
	printf("bench: %s: %lu MiB faulted in after %.1f s (TCG); %lu chunks of %lu pages, %lu hot\n",
	       b->label, b->nr_pages * page_size >> 20, mono() - t,
	       b->nr_chunks, b->chunk_pages, b->nr_hot);
	printf("ready\n");
	fflush(stdout);
	while (!__atomic_load_n(&go, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&stop, __ATOMIC_RELAXED))
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);

	b->t0 = next = mono();
	for (;;) {
		t = mono();
		if (t >= next) {
			sample(b, b->nr_samples % FULL_EVERY == 0);
			next += b->sample_s;
			if (next < mono())
				next = mono();
		}
		if (__atomic_load_n(&stop, __ATOMIC_RELAXED) ||
		    t - b->t0 >= run_s || (b->max_ep && b->nr_ep >= b->max_ep))
			break;
		c = b->hot[rnd_below(b->nr_hot)];
		if (seen[c] > 0) {
			sum_revisit += t - seen[c];
			nr_revisits++;
		}
		seen[c] = t;
		fast_before = episode_before(b, c);
		episode(b, c, (char)b->nr_ep++);
		episode_after(b, c, fast_before);
		if (b->pause_ms) {
			pause.tv_sec = b->pause_ms / 1000;
			pause.tv_nsec = b->pause_ms % 1000 * 1000000;
			nanosleep(&pause, NULL);
		}
		/* sweeps need a never-hot chunk */
		if (!b->sweep_every || b->nr_hot >= b->nr_chunks ||
		    b->nr_ep % b->sweep_every)
			continue;
		do
			c = rnd_below(b->nr_chunks);
		while (b->chunk_hot[c]);
		sweep(b, c, (char)nr_sweeps++);
	}
	run_s = mono() - b->t0;
	sample(b, 1);
	fclose(b->csv);
	printf("bench: %s: %lu episodes, %lu sweeps in %.1f s; a hot chunk came back every %.2f s on average (TCG)\n",
	       b->label, b->nr_ep, nr_sweeps, run_s,
	       nr_revisits ? sum_revisit / nr_revisits : 0);
	printf("bench: %s: episode queries %.1f ms each (TCG)\n", b->label,
	       b->nr_ep ? 1000 * b->t_ep_query / (2 * b->nr_ep) : 0);
	printf("bench: %s: %lu samples, %.1f ms each; %lu of every page, %.1f ms each (TCG)\n",
	       b->label, b->nr_samples - b->nr_full,
	       b->nr_samples > b->nr_full ?
	       1000 * b->t_hot / (b->nr_samples - b->nr_full) : 0,
	       b->nr_full, 1000 * b->t_full / b->nr_full);
	report(b, run_s, nr_sweeps,
	       nr_revisits ? sum_revisit / nr_revisits : 0);
	return 0;
}

/* ---- trace: tiering:tiering_promote_decision ---- */

#define MAX_DECISIONS	8
#define NR_RATIO	7

/* latency / threshold buckets: < 1/4, 1/2, 1, 2, 4, 16, more */
static const double ratio_edge[NR_RATIO - 1] = { 0.25, 0.5, 1, 2, 4, 16 };

struct decision {
	char name[16];
	unsigned long events, pages;
	unsigned int *lat;		/* every latency, for quantiles */
	unsigned long nr_lat, max_lat;
	unsigned long ratio[NR_RATIO];
};

struct trace {
	struct decision d[MAX_DECISIONS];
	int nr_d;
	char mode[16];
	unsigned long events, lost, unparsed, below;
	unsigned long th_min, th_max;
};

/* The value of "@key=" in @line, or NULL. */
static const char *field(const char *line, const char *key)
{
	size_t n = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[n] == '=')
			return p + n + 1;
		p += n;
	}
	return NULL;
}

static void word(char *dst, size_t size, const char *src)
{
	size_t n = strcspn(src, " \n");

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

static struct decision *decision(struct trace *tr, const char *name)
{
	int i;

	for (i = 0; i < tr->nr_d; i++)
		if (!strcmp(tr->d[i].name, name))
			return &tr->d[i];
	if (tr->nr_d == MAX_DECISIONS)
		return NULL;
	snprintf(tr->d[tr->nr_d].name, sizeof(tr->d[0].name), "%s", name);
	return &tr->d[tr->nr_d++];
}

static void trace_line(struct trace *tr, const char *line)
{
	const char *lat, *th, *dec, *mode, *pages, *lost;
	unsigned long l, t, i;
	struct decision *d;
	char name[16];

	lost = strstr(line, "[LOST ");
	if (lost) {
		tr->lost += strtoul(lost + 6, NULL, 10);
		return;
	}
	if (!strstr(line, "tiering_promote_decision:"))
		return;
	lat = field(line, "latency");
	th = field(line, "threshold");
	dec = field(line, "decision");
	mode = field(line, "mode");
	pages = field(line, "nr_pages");
	if (!lat || !th || !dec) {
		tr->unparsed++;
		return;
	}
	word(name, sizeof(name), dec);
	d = decision(tr, name);
	if (!d) {
		tr->unparsed++;
		return;
	}
	if (mode)
		word(tr->mode, sizeof(tr->mode), mode);
	l = strtoul(lat, NULL, 10);
	t = strtoul(th, NULL, 10);
	tr->events++;
	d->events++;
	d->pages += pages ? strtoul(pages, NULL, 10) : 1;
	if (d->nr_lat == d->max_lat) {
		d->max_lat = d->max_lat ? 2 * d->max_lat : 4096;
		d->lat = realloc(d->lat, d->max_lat * sizeof(*d->lat));
		if (!d->lat)
			fail("realloc");
	}
	d->lat[d->nr_lat++] = l > UINT32_MAX ? UINT32_MAX : l;
	if (!tr->th_min || t < tr->th_min)
		tr->th_min = t;
	if (t > tr->th_max)
		tr->th_max = t;
	tr->below += l < t;
	for (i = 0; i < NR_RATIO - 1 && (t ? (double)l / t : 1e9) >= ratio_edge[i]; i++)
		;
	d->ratio[i]++;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return (x > y) - (x < y);
}

static unsigned int quantile(const struct decision *d, double q)
{
	return d->nr_lat ? d->lat[(unsigned long)(q * (d->nr_lat - 1))] : 0;
}

static void trace_report(struct trace *tr)
{
	unsigned long all[NR_RATIO] = { 0 };
	struct decision *d;
	int i, j;

	printf("bench: trace: %lu events (%s mode), %lu lost, %lu unparsed; threshold %lu..%lu\n",
	       tr->events, tr->mode[0] ? tr->mode : "?", tr->lost, tr->unparsed,
	       tr->th_min, tr->th_max);
	printf("bench: trace: %-10s %9s %9s %10s %10s %10s %10s  latency/threshold <1/4 <1/2 <1 <2 <4 <16 more\n",
	       "decision", "events", "pages", "lat_p10", "lat_p50", "lat_p90",
	       "lat_max");
	for (i = 0; i < tr->nr_d; i++) {
		d = &tr->d[i];
		qsort(d->lat, d->nr_lat, sizeof(*d->lat), cmp_uint);
		printf("bench: trace: %-10s %9lu %9lu %10u %10u %10u %10u  ",
		       d->name, d->events, d->pages, quantile(d, 0.1),
		       quantile(d, 0.5), quantile(d, 0.9), quantile(d, 1));
		for (j = 0; j < NR_RATIO; j++) {
			printf(" %lu", d->ratio[j]);
			all[j] += d->ratio[j];
		}
		printf("\n");
		printf("RESULT trace_%s=%lu\n", d->name, d->events);
		printf("RESULT trace_%s_lat_p50=%u\n", d->name, quantile(d, 0.5));
	}
	printf("bench: trace: all decisions, latency/threshold:");
	for (j = 0; j < NR_RATIO; j++)
		printf(" %.1f%%", pct(all[j], tr->events));
	printf(" (<1/4 <1/2 <1 <2 <4 <16 more)\n");
	printf("RESULT trace_events=%lu\n", tr->events);
	printf("RESULT trace_lost=%lu\n", tr->lost);
	printf("RESULT trace_below_threshold_pct=%.1f\n", pct(tr->below, tr->events));
	printf("RESULT trace_threshold_min=%lu\n", tr->th_min);
	printf("RESULT trace_threshold_max=%lu\n", tr->th_max);
}

/*
 * Read @path (trace_pipe) line by line until told to stop and then until
 * it is empty.
 */
static int do_trace(const char *path)
{
	static char buf[1 << 16];
	struct trace tr = { 0 };
	struct pollfd pfd;
	size_t have = 0;
	char *nl, *p;
	ssize_t n;

	pfd.fd = open(path, O_RDONLY | O_NONBLOCK);
	pfd.events = POLLIN;
	if (pfd.fd < 0)
		fail(path);
	for (;;) {
		n = read(pfd.fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			fail(path);
		if (n <= 0) {
			if (__atomic_load_n(&stop, __ATOMIC_RELAXED))
				break;	/* told to stop, and drained */
			poll(&pfd, 1, 200);
			continue;
		}
		have += n;
		buf[have] = 0;
		for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = 0;
			trace_line(&tr, p);
		}
		have -= p - buf;
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0;	/* a line longer than buf: drop it */
	}
	trace_report(&tr);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: numa-hint run [-t TOTAL_MIB] [-f FAST_MIB] [-c CHUNK_MIB] [-H HOT]\n"
		"                     [-i ITERS] [-w SWEEP_EVERY] [-e EPISODES] [-r RUN_S]\n"
		"                     [-s SEED] [-F FAST_NID] [-S SLOW_NID] [-q SAMPLE_S]\n"
		"                     [-p PAUSE_MS] [-u] [-n] LABEL CSV\n"
		"       numa-hint trace TRACE_PIPE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct bench b = { .nr_hot = 16, .sweep_every = 4, .fast = 0, .slow = 2,
			   .sample_s = SAMPLE_S };
	unsigned long total_mib = 1536, fast_mib = 0, chunk_mib = 8;
	double run_s = 240;
	int no_mbind = 0, o;
	struct sigaction sa = { .sa_handler = on_signal };

	page_size = sysconf(_SC_PAGESIZE);
	rnd_state = 1;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	if (argc == 3 && !strcmp(argv[1], "trace"))
		return do_trace(argv[2]);
	if (argc < 2 || strcmp(argv[1], "run"))
		usage();
	optind = 2;
	while ((o = getopt(argc, argv, "t:f:c:H:i:w:e:r:s:F:S:q:p:un")) != -1) {
		switch (o) {
		case 't': total_mib = strtoul(optarg, NULL, 0); break;
		case 'f': fast_mib = strtoul(optarg, NULL, 0); break;
		case 'c': chunk_mib = strtoul(optarg, NULL, 0); break;
		case 'H': b.nr_hot = strtoul(optarg, NULL, 0); break;
		case 'i': b.iters = strtoul(optarg, NULL, 0); break;
		case 'w': b.sweep_every = strtoul(optarg, NULL, 0); break;
		case 'e': b.max_ep = strtoul(optarg, NULL, 0); break;
		case 'r': run_s = atof(optarg); break;
		case 's': rnd_state = strtoull(optarg, NULL, 0) ? : 1; break;
		case 'F': b.fast = atoi(optarg); break;
		case 'S': b.slow = atoi(optarg); break;
		case 'q': b.sample_s = atof(optarg); break;
		case 'p': b.pause_ms = strtoul(optarg, NULL, 0); break;
		case 'u': b.uniform = 1; break;
		case 'n': no_mbind = 1; break;
		default: usage();
		}
	}
	if (argc - optind != 2 || !chunk_mib || total_mib < chunk_mib ||
	    fast_mib > total_mib || !b.nr_hot || run_s <= 0 || b.sample_s <= 0 ||
	    b.fast < 0 || b.fast >= 64 || b.slow < 0 || b.slow >= 64)
		usage();
	b.label = argv[optind];
	b.chunk_pages = chunk_mib * (1 << 20) / page_size;
	b.nr_chunks = total_mib / chunk_mib;
	b.nr_pages = b.nr_chunks * b.chunk_pages;
	if (b.uniform)
		b.nr_hot = b.nr_chunks;
	if (b.nr_hot > b.nr_chunks)
		usage();
	if (!b.iters)
		b.iters = 4 * b.chunk_pages;
	return do_run(&b, fast_mib, run_s, no_mbind, argv[optind + 1]);
}
