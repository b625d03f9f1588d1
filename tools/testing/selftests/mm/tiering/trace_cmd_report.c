// SPDX-License-Identifier: GPL-2.0
/*
 * The tiering tracepoints as users read them: trace-cmd record of
 * tiering:tiering_migrate and tiering:tiering_promote_decision around a
 * workload that first promotes (numa_balancing=2: a set on node2 that a
 * task on node0's CPU keeps reading while node0 has free space) and then
 * demotes (node0 filled past its size under MPOL_BIND: reclaim can only
 * demote, to node2), then trace-cmd report.  The report must succeed, every
 * tiering event in it must name its reason, mode and decision
 * (reason=damon_hot|damon_cold|numa_hint|demotion, never a number: an enum
 * value the kernel does not export with TRACE_DEFINE_ENUM is printed as
 * one), and both a promotion (reason=numa_hint or a promote decision) and
 * reason=demotion must be in it.
 *
 * trace-cmd runs the workload as its command (this program with
 * --workload), so the events are recorded from before its first page
 * fault to after its last: nothing depends on timing.  trace-cmd's files
 * go to a new directory under /tmp, removed when the test passes.
 * Skips without trace-cmd, without the tiering tracepoints or without a
 * node in a lower memory tier than node0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#define FAST_NODE	0
#define SLOW_NODE	2
#define PAGE		4096UL
#define MPOL_BIND_	2
#define NB		"/proc/sys/kernel/numa_balancing"
#define NB_DEBUG	"/sys/kernel/debug/sched/numa_balancing"
#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"
#define TRACING		"/sys/kernel/tracing"
#define EV_MIGRATE	TRACING "/events/tiering/tiering_migrate/enable"
#define EV_DECISION	TRACING "/events/tiering/tiering_promote_decision/enable"
#define PROMOTE_PAGES	2048
#define PROMOTE_WAIT_S	300	/* for the set to be promoted */
#define DEMOTE_WAIT_S	90	/* for kswapd's demotion to stop */
/* for trace-cmd record to end, beyond PROMOTE_WAIT_S; then for the report */
#define RECORD_WAIT_S	400
#define REPORT_WAIT_S	120
#define LOG_LINES	10	/* bad report lines logged */

/* ---- the workload: trace-cmd record's command ---- */

/* burn CPU for about @ms: task_numa_work() runs from a running task's tick */
static void spin_ms(long ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/*
 * Promote: PROMOTE_PAGES faulted on SLOW_NODE, read over and over from
 * CPU0 until 90% of them are on FAST_NODE (or PROMOTE_WAIT_S).  The caller
 * set numa_balancing=2.  Return: the pages on FAST_NODE at the end, or -1.
 */
static long promote_phase(void)
{
	size_t len = PROMOTE_PAGES * PAGE;
	long counts[MAX_NODES];
	time_t t0 = time(NULL);
	char *buf;

	buf = alloc_on_node(len, SLOW_NODE);
	if (!buf || count_pages_per_node(buf, len, counts) ||
	    counts[SLOW_NODE] != PROMOTE_PAGES)
		return -1;
	for (;;) {
		for (size_t off = 0; off < len; off += PAGE)
			READ_ONCE(buf[off]);
		count_pages_per_node(buf, len, counts);
		if (counts[FAST_NODE] >= PROMOTE_PAGES * 9 / 10 ||
		    time(NULL) - t0 > PROMOTE_WAIT_S)
			break;
		spin_ms(20);
	}
	munmap(buf, len);
	return counts[FAST_NODE];
}

/*
 * Demote: bound to FAST_NODE, fill 128 MiB more than the node holds.
 * There is no swap, so reclaim makes room by demoting to SLOW_NODE.
 * Return: the pages of the mapping on SLOW_NODE at the end, or -1.
 */
static long demote_phase(long *demoted)
{
	long total = node_mem_total_kb(FAST_NODE) * 1024L, counts[MAX_NODES];
	unsigned long mask = 1UL << FAST_NODE;
	size_t len = total + (128L << 20);
	long d0;
	char *buf;
	int quiet_s;

	vm_stat_refresh();
	d0 = pgdemote();

	if (total <= 0)
		return -1;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return -1;
	madvise(buf, len, MADV_NOHUGEPAGE);
	if (syscall(SYS_mbind, buf, len, MPOL_BIND_, &mask, sizeof(mask) * 8, 0))
		return -1;
	fill_pattern(buf, len, 1);
	/* pages under demotion have no node yet: wait for demotion's end */
	if (count_after_demotion(FAST_NODE, buf, len, counts, DEMOTE_WAIT_S,
				 &quiet_s))
		return -1;
	vm_stat_refresh();
	*demoted = pgdemote() - d0;
	munmap(buf, len);
	return counts[SLOW_NODE];
}

/*
 * this program --workload RESULT: promote, then demote (numa_balancing 0
 * for that part), and write what was seen to RESULT.
 */
static int workload(const char *result)
{
	long promoted, on_slow, demoted = 0;
	cpu_set_t cpus;
	FILE *f;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		return 1;
	promoted = promote_phase();
	write_file(NB, "0");
	on_slow = demote_phase(&demoted);
	f = fopen(result, "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %ld %ld\n", promoted, on_slow, demoted);
	return fclose(f) ? 1 : 0;
}

/* ---- the test ---- */

/* is @name an executable in $PATH */
static bool in_path(const char *name)
{
	const char *path = getenv("PATH");
	char dir[PATH_MAX], file[PATH_MAX + 64];
	const char *p = path ? path : "/usr/bin:/bin", *e;

	for (; *p; p = *e ? e + 1 : e) {
		size_t n;

		e = strchrnul(p, ':');
		n = e - p < (long)sizeof(dir) - 1 ? (size_t)(e - p) : sizeof(dir) - 1;
		memcpy(dir, p, n);
		dir[n] = '\0';
		snprintf(file, sizeof(file), "%s/%s", n ? dir : ".", name);
		if (!access(file, X_OK))
			return true;
	}
	return false;
}

/*
 * Run a command, its arguments after @err up to a NULL, with stdout in
 * @out and stderr in @err.  Return: its pid, or -1.
 */
static pid_t spawn(const char *out, const char *err, ...)
{
	char *argv[16];
	va_list ap;
	pid_t pid;
	int o, e, i;

	va_start(ap, err);
	for (i = 0; i < (int)ARRAY_SIZE(argv) - 1; i++) {
		argv[i] = va_arg(ap, char *);
		if (!argv[i])
			break;
	}
	argv[i] = NULL;
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid)
		return pid;
	o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	i = open("/dev/null", O_RDONLY);
	if (o < 0 || e < 0 || i < 0)
		_exit(126);
	dup2(i, 0);
	dup2(o, 1);
	dup2(e, 2);
	execvp(argv[0], argv);
	_exit(127);
}

/*
 * Wait for @pid up to @secs seconds, then kill it.  Return: its wait
 * status, or -1 if it had to be killed.
 */
static int wait_secs(pid_t pid, int secs)
{
	int status;

	for (int i = 0; i < secs * 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* log the last lines of @path (up to about 2 KiB) */
static void log_tail(struct __test_metadata *_metadata, const char *path)
{
	char buf[2048], *line, *save;
	int fd = open(path, O_RDONLY);
	off_t end;
	ssize_t n;

	if (fd < 0)
		return;
	end = lseek(fd, 0, SEEK_END);
	lseek(fd, end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0,
	      SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	TH_LOG("--- %s (tail):", path);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		TH_LOG("  %s", line);
}

/* the value of " key=" in @line, copied to @val; false if none */
static bool field(const char *line, const char *key, char *val, size_t n)
{
	char pat[32];
	const char *p;
	size_t i = 0;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	while (p[i] && p[i] != ' ' && p[i] != '\n' && i < n - 1) {
		val[i] = p[i];
		i++;
	}
	val[i] = '\0';
	return true;
}

static int name_index(const char * const *names, int nr, const char *s)
{
	for (int i = 0; i < nr; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

static const char * const reasons[] = {
	"damon_hot", "damon_cold", "numa_hint", "demotion",
};

static const char * const hint_modes[] = { "time", "faults" };

static const char * const decisions[] = {
	"promote", "free_space", "latency", "ratelimit", "first",
};

/**
 * struct report - what trace-cmd report printed
 * @migrate: tiering_migrate events per reason
 * @decision: tiering_promote_decision events per decision
 * @bad: tiering events without a known name for reason, mode or decision
 * @failed: lines with "FAILED TO PARSE"
 */
struct report {
	long migrate[ARRAY_SIZE(reasons)];
	long decision[ARRAY_SIZE(decisions)];
	long bad, failed;
};

static int read_report(struct __test_metadata *_metadata, const char *path,
		       struct report *r)
{
	char line[1024], val[64], mode[64];
	FILE *f = fopen(path, "r");
	int i;

	memset(r, 0, sizeof(*r));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		bool ok = true;

		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, "FAILED TO PARSE"))
			r->failed++;
		if (strstr(line, "tiering_migrate:")) {
			ok = field(line, "reason", val, sizeof(val)) &&
			     (i = name_index(reasons, ARRAY_SIZE(reasons), val)) >= 0;
			if (ok)
				r->migrate[i]++;
		} else if (strstr(line, "tiering_promote_decision:")) {
			ok = field(line, "mode", mode, sizeof(mode)) &&
			     name_index(hint_modes, ARRAY_SIZE(hint_modes), mode) >= 0 &&
			     field(line, "decision", val, sizeof(val)) &&
			     (i = name_index(decisions, ARRAY_SIZE(decisions), val)) >= 0;
			if (ok)
				r->decision[i]++;
		} else if (!strstr(line, "FAILED TO PARSE")) {
			continue;
		}
		if (!ok && r->bad++ < LOG_LINES)
			TH_LOG("no name: %.200s", line);
	}
	fclose(f);
	return 0;
}

/* why this machine cannot run the test, or NULL */
static const char *skip_reason(void)
{
	if (!in_path("trace-cmd"))
		return "no trace-cmd in $PATH";
	if (access(EV_MIGRATE, W_OK) || access(EV_DECISION, W_OK))
		return "no tiering:tiering_migrate and tiering_promote_decision tracepoints";
	if (access(NB, W_OK))
		return "no " NB ": kernel without NUMA balancing";
	if (mem_tier_of(SLOW_NODE) < 0 ||
	    mem_tier_of(SLOW_NODE) <= mem_tier_of(FAST_NODE))
		return "node2 is not in a lower memory tier than node0";
	if (access(DEMOTION, W_OK))
		return "no " DEMOTION;
	return NULL;
}

FIXTURE(trace_cmd) {
	long nb, delay, min;
	char demotion[16], tracing_on[8], ev_migrate[8], ev_decision[8];
	char dir[64];
};

FIXTURE_SETUP(trace_cmd)
{
	const char *why = skip_reason();

	self->dir[0] = '\0';
	self->nb = -1;
	self->demotion[0] = '\0';
	if (why)
		SKIP(return, "%s", why);
	self->nb = read_long(NB);
	ASSERT_GE(self->nb, 0);
	ASSERT_GT(read_file(DEMOTION, self->demotion, sizeof(self->demotion)), 0);
	if (read_file(TRACING "/tracing_on", self->tracing_on,
		      sizeof(self->tracing_on)) < 0)
		self->tracing_on[0] = '\0';
	if (read_file(EV_MIGRATE, self->ev_migrate, sizeof(self->ev_migrate)) < 0)
		self->ev_migrate[0] = '\0';
	if (read_file(EV_DECISION, self->ev_decision, sizeof(self->ev_decision)) < 0)
		self->ev_decision[0] = '\0';
	self->delay = read_long(NB_DEBUG "/scan_delay_ms");
	self->min = read_long(NB_DEBUG "/scan_period_min_ms");
	snprintf(self->dir, sizeof(self->dir), "/tmp/tiering_trace_cmd.XXXXXX");
	ASSERT_NE(mkdtemp(self->dir), NULL);
}

FIXTURE_TEARDOWN(trace_cmd)
{
	if (self->nb >= 0)
		write_file(NB, "%ld", self->nb);
	if (self->demotion[0])
		write_file(DEMOTION, "%s", self->demotion);
	if (self->delay >= 0)
		write_file(NB_DEBUG "/scan_delay_ms", "%ld", self->delay);
	if (self->min >= 0)
		write_file(NB_DEBUG "/scan_period_min_ms", "%ld", self->min);
	/* trace-cmd leaves tracing as it likes: as it was for the next test */
	if (self->ev_migrate[0])
		write_file(EV_MIGRATE, "%s", self->ev_migrate);
	if (self->ev_decision[0])
		write_file(EV_DECISION, "%s", self->ev_decision);
	if (self->tracing_on[0])
		write_file(TRACING "/tracing_on", "%s", self->tracing_on);
}

/* within the kselftest runner's 900 s (settings) */
TEST_F_TIMEOUT(trace_cmd, report_names_reasons, 880)
{
	char exe[PATH_MAX], dat[128], result[128], rec_out[128], rec_err[128];
	char rep_out[128], rep_err[128];
	long promoted = -1, on_slow = -1, demoted = -1, promote_decisions;
	struct report r;
	ssize_t n;
	pid_t pid;
	FILE *f;
	int st;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(n, 0);
	exe[n] = '\0';
	snprintf(dat, sizeof(dat), "%s/trace.dat", self->dir);
	snprintf(result, sizeof(result), "%s/workload", self->dir);
	snprintf(rec_out, sizeof(rec_out), "%s/record.out", self->dir);
	snprintf(rec_err, sizeof(rec_err), "%s/record.err", self->dir);
	snprintf(rep_out, sizeof(rep_out), "%s/report.out", self->dir);
	snprintf(rep_err, sizeof(rep_err), "%s/report.err", self->dir);

	/* scan soon and often, tiering mode with the time latency, demotion */
	if (self->delay >= 0)
		ASSERT_EQ(write_file(NB_DEBUG "/scan_delay_ms", "100"), 0);
	if (self->min >= 0)
		ASSERT_EQ(write_file(NB_DEBUG "/scan_period_min_ms", "100"), 0);
	ASSERT_EQ(write_file(DEMOTION, "1"), 0);
	ASSERT_EQ(write_file(NB, "2"), 0);

	TH_LOG("trace-cmd record -o %s ... %s --workload: promote, then demote",
	       dat, exe);
	pid = spawn(rec_out, rec_err, "trace-cmd", "record", "-o", dat,
		    "-e", "tiering:tiering_migrate",
		    "-e", "tiering:tiering_promote_decision",
		    exe, "--workload", result, NULL);
	ASSERT_GT(pid, 0);
	/* the workload ends on its own conditions; trace-cmd then ends */
	st = wait_secs(pid, PROMOTE_WAIT_S + RECORD_WAIT_S);
	write_file(NB, "%ld", self->nb);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		log_tail(_metadata, rec_out);
		log_tail(_metadata, rec_err);
	}
	ASSERT_NE(st, -1) TH_LOG("trace-cmd record did not end: killed");
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("trace-cmd record: wait status %#x", st);

	f = fopen(result, "r");
	ASSERT_NE(f, NULL) {
		log_tail(_metadata, rec_out);
		TH_LOG("the workload left no result: killed?");
	}
	ASSERT_EQ(fscanf(f, "%ld %ld %ld", &promoted, &on_slow, &demoted), 3);
	fclose(f);
	TH_LOG("workload: %ld of %d pages promoted to node%d", promoted,
	       PROMOTE_PAGES, FAST_NODE);
	TH_LOG("workload: node%d filled: %ld pages on node%d, pgdemote +%ld",
	       FAST_NODE, on_slow, SLOW_NODE, demoted);
	/* what the trace must show happened; the report is read either way */
	EXPECT_GT(promoted, 0);
	EXPECT_GT(on_slow, 0);
	EXPECT_GT(demoted, 0);

	pid = spawn(rep_out, rep_err, "trace-cmd", "report", "-i", dat, NULL);
	ASSERT_GT(pid, 0);
	st = wait_secs(pid, REPORT_WAIT_S);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		log_tail(_metadata, rep_err);
	ASSERT_NE(st, -1) TH_LOG("trace-cmd report did not end: killed");
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("trace-cmd report: wait status %#x", st);

	ASSERT_EQ(read_report(_metadata, rep_out, &r), 0);
	for (size_t i = 0; i < ARRAY_SIZE(reasons); i++)
		TH_LOG("tiering_migrate reason=%s: %ld events", reasons[i],
		       r.migrate[i]);
	for (size_t i = 0; i < ARRAY_SIZE(decisions); i++)
		TH_LOG("tiering_promote_decision decision=%s: %ld events",
		       decisions[i], r.decision[i]);
	TH_LOG("%ld tiering events without a name, %ld lines FAILED TO PARSE",
	       r.bad, r.failed);
	promote_decisions = r.decision[0] + r.decision[1];
	EXPECT_EQ(r.bad, 0);
	EXPECT_EQ(r.failed, 0);
	EXPECT_TRUE(r.migrate[2] > 0 || promote_decisions > 0)
		TH_LOG("no reason=numa_hint and no promote decision");
	EXPECT_GT(r.migrate[3], 0) TH_LOG("no reason=demotion");
	if (r.bad || r.failed || !r.migrate[3] ||
	    (!r.migrate[2] && !promote_decisions)) {
		log_tail(_metadata, rep_err);
		TH_LOG("trace-cmd's files kept in %s", self->dir);
		return;
	}
	unlink(dat);
	unlink(result);
	unlink(rec_out);
	unlink(rec_err);
	unlink(rep_out);
	unlink(rep_err);
	rmdir(self->dir);
}

int main(int argc, char **argv)
{
	const char *why;

	if (argc == 3 && !strcmp(argv[1], "--workload"))
		return workload(argv[2]);
	/* nothing to run here: the whole program skips (exit 4) */
	why = skip_reason();
	if (why) {
		ksft_print_header();
		ksft_exit_skip("%s\n", why);
	}
	return test_harness_run(argc, argv);
}
