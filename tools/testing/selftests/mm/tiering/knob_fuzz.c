// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the knobs of the tiering series: DAMOS target_nid (and, next to it,
 * action and the kdamond's state), the DAMON self-tuning files (a filter's
 * allow, a quota goal's nid, the quotas' goal_tuner, the intervals goal's
 * access_bp), the numa_balancing sysctl (whose bit 4 is the fault-count
 * hint latency) and the NUMA hint-latency debugfs knobs
 * hot_threshold_faults, hot_repeat and hint_refresh.
 *
 * Every write is random: bytes of random length (0, 1, short, the page
 * size and past it), NUL bytes and non-ASCII, leading and trailing white
 * space, numbers at and past every integer limit in every base.  Each
 * write's outcome is predicted by a model of the kernel's parsers
 * (lib/kstrtox.c with base 0, sysfs_streq(), kernfs' page-size limit,
 * proc_dointvec_minmax() for the sysctl):
 * a write the model accepts must return its length (for the sysctl, the
 * count the model gives: proc_dointvec() stops after the number and its
 * white space) and read back as the parsed value; a write the model
 * rejects must fail with EINVAL (ERANGE where kstrtoul()'s error is
 * returned as is, as for the intervals goal) and leave the value as it
 * was.  The last test races writers against commit, on and off.  The
 * inputs come from a seeded generator: the seed is logged, and
 * KNOB_FUZZ_SEED replays it.  KNOB_FUZZ_WRITES (default 100000) is the
 * total number of writes, shared by the tests.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tiering_util.h"

#define KD		DAMON_ADMIN "/kdamonds/0"
#define CTX		KD "/contexts/0"
#define SCHEMES		CTX "/schemes"
#define SCHEME0		SCHEMES "/0"
#define IGOAL		CTX "/monitoring_attrs/intervals/intervals_goal"
#define NB		"/proc/sys/kernel/numa_balancing"
#define NB_DEBUG	"/sys/kernel/debug/sched/numa_balancing"
#define TH_FAULTS	NB_DEBUG "/hot_threshold_faults"
#define REPEAT		NB_DEBUG "/hot_repeat"
#define REFRESH		NB_DEBUG "/hint_refresh"
#define MAX_IN		(3 * 4096)
#define LOG_MAX		20	/* mismatches logged in full per test */

enum knob_type {
	K_NID, K_ACTION, K_STATE, K_NB, K_THRESH, K_REPEAT,
	K_GOAL_NID, K_BOOL, K_TUNER, K_UL,
};

/* what the model says a write does */
enum verdict { V_REJECT, V_ACCEPT, V_NOOP, V_EITHER };

static const char * const actions[] = {
	"willneed", "cold", "pageout", "hugepage", "nohugepage", "lru_prio",
	"lru_deprio", "migrate_hot", "migrate_cold", "stat",
};

static const char * const state_cmds[] = {
	"on", "off", "commit", "commit_schemes_quota_goals",
	"update_schemes_stats", "update_schemes_tried_bytes",
	"update_schemes_tried_regions", "clear_schemes_tried_regions",
	"update_schemes_effective_quotas",
};

static const char * const tuners[] = { "consist", "temporal" };
static const char * const bools[] = {
	"Y", "N", "y", "n", "1", "0", "on", "off", "true", "false", "o", "e",
};

static const char * const repeats[] = { "0", "1" };

/* numbers at and past the limits of every integer type, in several bases */
static const char * const limits[] = {
	"0", "1", "-1", "-0", "+0", "+1", "-2", "2", "3", "63", "64", "1023",
	"1024", "4095", "4096", "65535", "65536", "131071", "131072",
	"2147483647", "2147483648", "-2147483648", "-2147483649",
	"4294967295", "4294967296", "-4294967296",
	"9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "18446744073709551616",
	"99999999999999999999999999999999999999",
	"0x7fffffff", "0x80000000", "0xffffffff", "0x100000000",
	"0X7FFFFFFFFFFFFFFF", "0xffffffffffffffff", "0x10000000000000000",
	"-0x80000000", "-0x80000001", "017777777777", "020000000000",
	"037777777777", "040000000000", "01777777777777777777777",
	"02000000000000000000000", "0x", "0x-1", "08", "09", "0b1", "1e3",
	"--1", "+-1", "-+1", "++1", "1.0", "0.5", "1,2", "1 2", "1-2",
};

/* decorations around a token */
static const char * const prefixes[] = {
	"", "", "", " ", "\t", "\n", "+", "-", "0", "00", "\xff", "\x80",
	"\xc3\xa9", "\r", "\v",
};

static const char * const suffixes[] = {
	"", "", "", "\n", "\n\n", " ", "\t", "\r\n", "\x20\n", "\n ", "x",
	"\xc2\xa0", "\xff", " 1", "\n1", "0", "garbage",
};

static long page_size;
static int nr_node_ids;		/* highest possible node + 1 */
static int last_mem_node;	/* highest node with memory */
static bool node_possible[MAX_NODES], node_has_memory[MAX_NODES];
static unsigned int th_max;	/* largest hot_threshold_faults accepted */

/* xorshift64*: a seeded generator, one state per thread */
static unsigned long long rnd(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static unsigned long rnd_below(unsigned long long *s, unsigned long n)
{
	return n ? rnd(s) % n : 0;
}

/* ---- the model of the kernel's parsers ---- */

/*
 * lib/kstrtox.c's _parse_integer_fixup_radix() and _parse_integer(), which
 * both kstrtoull() and proc_get_long() use: the base from the prefix ("0x"
 * and a hex digit: 16, "0": 8, else 10), then the digits of that base.
 * Advances *sp past the prefix and the digits and returns how many digits
 * it took; *overflow is set if the value does not fit.
 */
static int model_parse_integer(const char **sp, unsigned long long *res,
			       bool *overflow)
{
	const char *s = *sp;
	unsigned long long v = 0;
	unsigned int base = 10;
	int n = 0;

	if (s[0] == '0') {
		if ((s[1] | 0x20) == 'x' && isxdigit((unsigned char)s[2])) {
			base = 16;
			s += 2;
		} else {
			base = 8;
		}
	}
	for (;; s++, n++) {
		unsigned int c = (unsigned char)*s, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (d >= base)
			break;
		if (v > (ULLONG_MAX - d) / base)
			*overflow = true;
		v = v * base + d;
	}
	*sp = s;
	*res = v;
	return n;
}

/* lib/kstrtox.c: _kstrtoull() with base 0 */
static int model_kstrtoull_raw(const char *s, unsigned long long *res)
{
	unsigned long long v;
	bool overflow = false;
	int n = model_parse_integer(&s, &v, &overflow);

	if (overflow)
		return -ERANGE;
	if (!n)
		return -EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = v;
	return 0;
}

/* kstrtoint(s, 0, res) */
static int model_kstrtoint(const char *s, int *res)
{
	unsigned long long t;
	long long v;
	int err;

	if (s[0] == '-') {
		err = model_kstrtoull_raw(s + 1, &t);
		if (err)
			return err;
		if ((long long)-t > 0)
			return -ERANGE;
		v = -t;
	} else {
		err = model_kstrtoull_raw(s[0] == '+' ? s + 1 : s, &t);
		if (err)
			return err;
		if ((long long)t < 0)
			return -ERANGE;
		v = t;
	}
	if (v != (int)v)
		return -ERANGE;
	*res = v;
	return 0;
}

/* kstrtouint(s, 0, res) */
static int model_kstrtouint(const char *s, unsigned int *res)
{
	unsigned long long t;
	int err = model_kstrtoull_raw(s[0] == '+' ? s + 1 : s, &t);

	if (err)
		return err;
	if (t != (unsigned int)t)
		return -ERANGE;
	*res = t;
	return 0;
}

/* lib/string.c: sysfs_streq(), a trailing newline on either side */
static bool model_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	if (*a == *b)
		return true;
	if (!*a && *b == '\n' && !b[1])
		return true;
	return *a == '\n' && !a[1] && !*b;
}

static int match(const char * const *list, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (model_streq(s, list[i]))
			return i;
	return -1;
}

/* lib/kstrtox.c: kstrtobool(), from its first one or two characters */
static int model_kstrtobool(const char *s, bool *res)
{
	switch (s[0]) {
	case 'y': case 'Y': case 't': case 'T': case '1':
		*res = true;
		return 0;
	case 'n': case 'N': case 'f': case 'F': case '0':
		*res = false;
		return 0;
	case 'o': case 'O':
		if ((s[1] | 0x20) == 'n' || (s[1] | 0x20) == 'f') {
			*res = (s[1] | 0x20) == 'n';
			return 0;
		}
	}
	return -EINVAL;
}

/* lib/ctype.c: the kernel's isspace() (Latin-1: 0xa0 is a space too) */
static bool k_isspace(unsigned char c)
{
	return (c >= '\t' && c <= '\r') || c == ' ' || c == 0xa0;
}

/*
 * kernel.numa_balancing: sysctl_numa_balancing() parses one int with
 * proc_dointvec_minmax() in [0, 7] and then refuses the fault-count bit (4)
 * without the tiering bit (2).  The model follows 6.12's kernel/sysctl.c
 * (__do_proc_dointvec(), proc_get_long(), strtoul_lenient()) byte for
 * byte; unlike the kstrto*() parsers above, a NUL byte does not end the
 * input but is a byte that is neither a space nor a digit:
 * - a write of 0 bytes is a no-op that returns 0;
 * - at most PAGE_SIZE - 1 bytes are looked at, the rest is ignored;
 * - leading isspace() is skipped (the kernel's: \t-\r, ' ', 0xa0); then
 *   an optional '-' (not '+'), which must be followed by a digit;
 * - the number: base 0 (0x/0X hex if a hex digit follows, 0 octal, else
 *   decimal), digits as far as they go; overflow of an unsigned long,
 *   beyond INT_MAX (INT_MIN negated) or outside [0, 7]: EINVAL;
 * - sign and number must take fewer than 21 bytes (TMPBUFLEN - 1), else
 *   EINVAL;
 * - the byte after the number, if any, must be ' ', '\t' or '\n', else
 *   EINVAL; after it isspace() is skipped, and if anything is left the
 *   write returns a short count (the bytes up to there): the value is
 *   taken all the same;
 * - every rejection is EINVAL and leaves the value as it was.
 * Nothing here is a guess at an edge of the parser: each rule is a line
 * of the 6.12 source, so the fuzz is not restricted to a subset of inputs.
 */
static enum verdict model_numa_balancing(const char *in, size_t len, char *val,
					 size_t vlen, ssize_t *ret)
{
	size_t n = len < (size_t)page_size - 1 ? len : (size_t)page_size - 1;
	unsigned long long v = 0;
	size_t i = 0, w, took;
	bool overflow = false;
	char tmp[22];	/* proc_get_long()'s TMPBUFLEN */
	const char *p;
	long long x;

	if (!len)
		return V_NOOP;
	while (i < n && k_isspace(in[i]))
		i++;
	if (i == n)
		return V_REJECT;
	w = n - i < sizeof(tmp) - 1 ? n - i : sizeof(tmp) - 1;
	memcpy(tmp, in + i, w);
	tmp[w] = '\0';
	p = tmp;
	if (*p == '-' && n - i > 1)
		p++;
	if (*p < '0' || *p > '9')
		return V_REJECT;
	model_parse_integer(&p, &v, &overflow);
	took = p - tmp;
	if (overflow || took == sizeof(tmp) - 1)
		return V_REJECT;
	if (took < n - i && *p != ' ' && *p != '\t' && *p != '\n')
		return V_REJECT;
	if (tmp[0] == '-') {
		if (v > (unsigned long long)INT_MAX + 1)
			return V_REJECT;
		x = -(long long)v;
	} else {
		if (v > INT_MAX)
			return V_REJECT;
		x = v;
	}
	if (x < 0 || x > 7 || ((x & 4) && !(x & 2)))
		return V_REJECT;
	for (i += took; i < n && k_isspace(in[i]); i++)
		;
	*ret = len - (n - i);
	snprintf(val, vlen, "%lld\n", x);
	return V_ACCEPT;
}

/*
 * What writing @in (@len bytes) to a knob of @type does, and the value it
 * reads back as if accepted (@val), the return value of the write if
 * accepted (@ret), and its errno if rejected (@rej).
 */
static enum verdict model(enum knob_type type, const char *in, size_t len,
			  char *val, size_t vlen, ssize_t *ret, int *rej)
{
	static __thread char s[MAX_IN + 1];
	unsigned long long ull;
	size_t eff = len;
	unsigned int u;
	bool b;
	int i;

	*rej = EINVAL;
	if (type == K_NB)
		return model_numa_balancing(in, len, val, vlen, ret);
	switch (type) {
	case K_NID:
	case K_ACTION:
	case K_STATE:
	case K_GOAL_NID:
	case K_BOOL:
	case K_TUNER:
	case K_UL:
		/* kernfs: one page at most, a zero-length write is a no-op */
		eff = len < (size_t)page_size ? len : (size_t)page_size;
		if (!eff)
			return V_NOOP;
		break;
	case K_NB:
		break;
	case K_REPEAT:
		if (len >= 4)
			return V_REJECT;
		break;
	case K_THRESH:
		/* the whole write is parsed, up to a page */
		if (len >= (size_t)page_size)
			return V_REJECT;
		break;
	}
	*ret = type == K_THRESH || type == K_REPEAT ?
		(ssize_t)len : (ssize_t)eff;
	memcpy(s, in, eff);
	s[eff] = '\0';	/* the parsers stop at the first NUL */

	switch (type) {
	case K_NID:
		if (model_kstrtoint(s, &i))
			return V_REJECT;
		snprintf(val, vlen, "%d\n", i);
		if (i == -1)
			return V_ACCEPT;
		if (i < 0 || i >= nr_node_ids || i >= MAX_NODES || !node_possible[i])
			return V_REJECT;
		/* with or without memory: that is checked at commit */
		return V_ACCEPT;
	case K_ACTION:
		i = match(actions, ARRAY_SIZE(actions), s);
		if (i < 0)
			return V_REJECT;
		snprintf(val, vlen, "%s\n", actions[i]);
		return V_ACCEPT;
	case K_STATE:
		/* only garbage is written to state outside the race test */
		return match(state_cmds, ARRAY_SIZE(state_cmds), s) < 0 ?
			V_REJECT : V_EITHER;
	case K_NB:	/* model_numa_balancing() above */
		return V_EITHER;
	case K_REPEAT:
		i = match(repeats, ARRAY_SIZE(repeats), s);
		if (i < 0)
			return V_REJECT;
		snprintf(val, vlen, "%s\n", repeats[i]);
		return V_ACCEPT;
	case K_THRESH:
		if (model_kstrtouint(s, &u) || u > th_max)
			return V_REJECT;
		snprintf(val, vlen, "%u\n", u);
		return V_ACCEPT;
	case K_GOAL_NID:
		/* a goal always measures a node: no -1 */
		if (model_kstrtoint(s, &i) || i < 0 || i >= nr_node_ids ||
		    i >= MAX_NODES || !node_possible[i])
			return V_REJECT;
		snprintf(val, vlen, "%d\n", i);
		return V_ACCEPT;
	case K_BOOL:
		if (model_kstrtobool(s, &b))
			return V_REJECT;
		snprintf(val, vlen, "%s\n", b ? "Y" : "N");
		return V_ACCEPT;
	case K_TUNER:
		i = match(tuners, ARRAY_SIZE(tuners), s);
		if (i < 0)
			return V_REJECT;
		snprintf(val, vlen, "%s\n", tuners[i]);
		return V_ACCEPT;
	case K_UL:
		/* kstrtoul(): its error, EINVAL or ERANGE, is the write's */
		i = model_kstrtoull_raw(s[0] == '+' ? s + 1 : s, &ull);
		if (i) {
			*rej = -i;
			return V_REJECT;
		}
		snprintf(val, vlen, "%llu\n", ull);
		return V_ACCEPT;
	}
	return V_EITHER;
}

/* ---- the input generator ---- */

static size_t put(char *buf, size_t at, const char *s, size_t n)
{
	if (at + n > MAX_IN)
		n = MAX_IN - at;
	memcpy(buf + at, s, n);
	return at + n;
}

/* a token that may be valid for @type */
static void token(enum knob_type type, unsigned long long *r, char *t, size_t n)
{
	switch (type) {
	case K_NID:
	case K_GOAL_NID:
		snprintf(t, n, "%ld", (long)rnd_below(r, nr_node_ids + 3) - 1);
		break;
	case K_ACTION:
		snprintf(t, n, "%s", actions[rnd_below(r, ARRAY_SIZE(actions))]);
		break;
	case K_STATE:
		snprintf(t, n, "%s", state_cmds[rnd_below(r, ARRAY_SIZE(state_cmds))]);
		break;
	case K_NB: {	/* -2..9, now and then in hex or octal */
		int v = (int)rnd_below(r, 12) - 2;

		if (v >= 0 && !rnd_below(r, 4))
			snprintf(t, n, rnd_below(r, 2) ? "%#x" : "0%o", v);
		else
			snprintf(t, n, "%d", v);
		break;
	}
	case K_REPEAT:
		snprintf(t, n, "%s", repeats[rnd_below(r, ARRAY_SIZE(repeats))]);
		break;
	case K_BOOL:
		snprintf(t, n, "%s", bools[rnd_below(r, ARRAY_SIZE(bools))]);
		break;
	case K_TUNER:
		snprintf(t, n, "%s", tuners[rnd_below(r, ARRAY_SIZE(tuners))]);
		break;
	case K_UL:
		snprintf(t, n, "%lu", (unsigned long)rnd_below(r, 20000));
		break;
	case K_THRESH:
		switch (rnd_below(r, 4)) {
		case 0:
			snprintf(t, n, "%u", th_max + (unsigned int)rnd_below(r, 3) - 1);
			break;
		case 1:
			snprintf(t, n, "%#x", (unsigned int)rnd_below(r, th_max + 2));
			break;
		default:
			snprintf(t, n, "%u", (unsigned int)rnd_below(r, th_max + 2));
		}
		break;
	}
}

/* a random number of random width, in a random base */
static void number(unsigned long long *r, char *t, size_t n)
{
	unsigned int bits = rnd_below(r, 66);
	unsigned long long v = bits >= 64 ? rnd(r) : rnd(r) & ((1ULL << bits) - 1);
	const char *sign = rnd_below(r, 4) ? "" : "-";

	switch (rnd_below(r, 3)) {
	case 0:
		snprintf(t, n, "%s%#llx", sign, v);
		break;
	case 1:
		snprintf(t, n, "%s%#llo", sign, v);
		break;
	default:
		snprintf(t, n, "%s%llu", sign, v);
	}
	/* one past: append a digit */
	if (bits >= 64 && rnd_below(r, 2))
		strncat(t, "0", n - strlen(t) - 1);
}

/* lengths that matter: 0, 1, short, and around the page size */
static size_t odd_len(unsigned long long *r)
{
	switch (rnd_below(r, 8)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return page_size - 1;
	case 3:
		return page_size;
	case 4:
		return page_size + 1;
	case 5:
		return 2 * page_size + rnd_below(r, 64);
	default:
		return 2 + rnd_below(r, 62);
	}
}

/* fill @buf with one input for a knob of @type; return its length */
static size_t gen(enum knob_type type, unsigned long long *r, char *buf)
{
	char tok[128];
	size_t len = 0, want, i;

	switch (rnd_below(r, 8)) {
	case 0:		/* random bytes */
		len = odd_len(r);
		for (i = 0; i < len; i++)
			buf[i] = rnd(r);
		return len;
	case 1:		/* random printable text */
		len = rnd_below(r, 3) ? rnd_below(r, 24) : odd_len(r);
		for (i = 0; i < len; i++)
			buf[i] = 32 + rnd_below(r, 95);
		return len;
	case 2:		/* numbers at the limits */
		snprintf(tok, sizeof(tok), "%s", limits[rnd_below(r, ARRAY_SIZE(limits))]);
		break;
	case 3:
		number(r, tok, sizeof(tok));
		break;
	default:	/* a token that may be valid */
		token(type, r, tok, sizeof(tok));
	}
	if (rnd_below(r, 2)) {
		const char *p = prefixes[rnd_below(r, ARRAY_SIZE(prefixes))];

		len = put(buf, len, p, strlen(p));
	}
	len = put(buf, len, tok, strlen(tok));
	switch (rnd_below(r, 6)) {
	case 0: {	/* NUL, then anything */
		static const char * const tail[] = {
			"", "\n", "junk", "\xff\xfe", "0",
		};
		const char *t = tail[rnd_below(r, ARRAY_SIZE(tail))];

		len = put(buf, len, "", 1);
		len = put(buf, len, t, strlen(t));
		break;
	}
	case 1: {	/* padded to an odd length */
		static const char pads[] = { ' ', '\n', '\t', '0', '\0', 'x' };
		char pad = pads[rnd_below(r, sizeof(pads))];

		want = odd_len(r);
		while (len < want && len < MAX_IN)
			buf[len++] = pad;
		break;
	}
	case 2:
	case 3: {
		const char *s = suffixes[rnd_below(r, ARRAY_SIZE(suffixes))];

		len = put(buf, len, s, strlen(s));
		break;
	}
	default:
		break;
	}
	return len;
}

static void hexdump(char *out, size_t n, const char *in, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && i < 40 && o + 5 < n; i++)
		o += snprintf(out + o, n - o, isprint((unsigned char)in[i]) &&
			      in[i] != '\\' ? "%c" : "\\x%02x",
			      (unsigned char)in[i]);
	if (len > 40 && o + 4 < n)
		snprintf(out + o, n - o, "...");
}

/* ---- one knob ---- */

struct knob {
	const char *path;
	enum knob_type type;
	char cur[64];		/* the value read back last */
	long writes, accepted, rejected, bad;
};

/*
 * A fresh open for every access: debugfs files do not take pread/pwrite.
 * DAMON's state gives EBUSY while a kdamond holds its lock: read again.
 */
static int knob_read(struct knob *k, char *buf, size_t n)
{
	ssize_t r = -1;

	for (int try = 0; try < 100; try++) {
		int fd = open(k->path, O_RDONLY);

		if (fd < 0)
			return -errno;
		r = read(fd, buf, n - 1);
		close(fd);
		if (r >= 0 || errno != EBUSY)
			break;
		usleep(10000);
	}
	if (r < 0)
		return -errno;
	buf[r] = '\0';
	return 0;
}

static ssize_t knob_pwrite(struct knob *k, const char *in, size_t len)
{
	int fd = open(k->path, O_WRONLY), err;
	ssize_t r;

	if (fd < 0)
		return -1;
	r = write(fd, in, len);
	err = errno;
	close(fd);
	errno = err;
	return r;
}

static int knob_open(struct knob *k, const char *path, enum knob_type type)
{
	memset(k, 0, sizeof(*k));
	k->path = path;
	k->type = type;
	return knob_read(k, k->cur, sizeof(k->cur));
}

/*
 * One write and its check.  Return true if the kernel did what the model
 * says; log the first LOG_MAX mismatches.
 */
static bool knob_write(struct __test_metadata *_metadata, struct knob *k,
		       const char *in, size_t len)
{
	char val[64] = "", now[64], hex[200];
	ssize_t want_ret = 0, ret;
	enum verdict v;
	int err, werr, rej;
	bool ok;

	v = model(k->type, in, len, val, sizeof(val), &want_ret, &rej);
	if (k->type == K_STATE && v != V_REJECT)
		return true;	/* a real command: not in this test */
	ret = knob_pwrite(k, in, len);
	werr = ret < 0 ? errno : 0;
	k->writes++;
	err = knob_read(k, now, sizeof(now));
	if (err) {
		TH_LOG("%s: cannot read back after a write: %s", k->path,
		       strerror(-err));
		k->bad++;
		return false;
	}
	switch (v) {
	case V_ACCEPT:
		ok = ret == want_ret && !strcmp(now, val);
		break;
	case V_NOOP:
		ok = ret == 0 && !strcmp(now, k->cur);
		break;
	case V_REJECT:
		/* DAMON's state gives EBUSY while its lock is taken */
		ok = ret < 0 && (werr == rej ||
				 (k->type == K_STATE && werr == EBUSY)) &&
		     !strcmp(now, k->cur);
		break;
	default:
		ok = (ret < 0 && werr == EINVAL && !strcmp(now, k->cur)) ||
		     (ret == want_ret && !strcmp(now, val));
	}
	if (ret >= 0)
		k->accepted++;
	else
		k->rejected++;
	if (!ok) {
		if (k->bad++ < LOG_MAX) {
			hexdump(hex, sizeof(hex), in, len);
			TH_LOG("%s: '%s' (%zu bytes): model %s, wrote %zd (%s)",
			       k->path, hex, len,
			       v == V_ACCEPT ? "accept" : v == V_REJECT ?
			       "reject" : v == V_NOOP ? "no-op" : "either",
			       ret, werr ? strerror(werr) : "ok");
			TH_LOG("  value '%.20s' -> '%.20s'", k->cur, now);
		}
	}
	snprintf(k->cur, sizeof(k->cur), "%s", now);
	return ok;
}

static long budget(int percent)
{
	const char *e = getenv("KNOB_FUZZ_WRITES");
	long total = e ? atol(e) : 100000;

	return total * percent / 100;
}

static unsigned long long input_seed(struct __test_metadata *_metadata)
{
	const char *e = getenv("KNOB_FUZZ_SEED");
	unsigned long long s = e ? strtoull(e, NULL, 0) : (unsigned long long)time(NULL);

	TH_LOG("inputs from seed %llu (KNOB_FUZZ_SEED replays them)", s);
	return s ? s : 1;
}

/* fuzz one knob with @n writes; return the number of mismatches */
static long fuzz(struct __test_metadata *_metadata, const char *path,
		 enum knob_type type, long n)
{
	static char in[MAX_IN];
	unsigned long long r = input_seed(_metadata);
	struct knob k;
	size_t len;

	if (knob_open(&k, path, type)) {
		TH_LOG("cannot open %s: %s", path, strerror(errno));
		return 1;
	}
	/* inputs that are real commands of state are not written: not counted */
	while (k.writes < n) {
		len = gen(type, &r, in);
		knob_write(_metadata, &k, in, len);
	}
	TH_LOG("%s: %ld writes, %ld accepted, %ld rejected, %ld wrong",
	       path, k.writes, k.accepted, k.rejected, k.bad);
	return k.bad;
}

/* ---- machine facts ---- */

static void read_nodes(void)
{
	char buf[256];

	page_size = sysconf(_SC_PAGESIZE);
	nr_node_ids = 0;
	if (read_file("/sys/devices/system/node/possible", buf, sizeof(buf)) > 0)
		parse_nodelist(buf, node_possible, MAX_NODES);
	if (read_file("/sys/devices/system/node/has_memory", buf, sizeof(buf)) > 0)
		parse_nodelist(buf, node_has_memory, MAX_NODES);
	for (int i = 0; i < MAX_NODES; i++) {
		if (node_possible[i])
			nr_node_ids = i + 1;
		if (node_has_memory[i])
			last_mem_node = i;
	}
}

/*
 * The largest fixed threshold hot_threshold_faults takes: the knob accepts
 * exactly [0, max].  Found by bisection; the value is restored by the
 * fixture.
 */
static long find_th_max(void)
{
	unsigned long lo = 0, hi = 1UL << 32;

	if (write_file(TH_FAULTS, "%lu", lo))
		return -1;
	while (hi - lo > 1) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (write_file(TH_FAULTS, "%lu", mid))
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

/* the kdamond's state, read again while DAMON's lock is busy */
static int kdamond_state(char *buf, size_t n)
{
	struct knob k = { .path = KD "/state" };

	return knob_read(&k, buf, n) ? -1 : (int)strlen(buf);
}

/* A context that can be turned on; its schemes match no region. */
static int damon_setup(int nr_schemes)
{
	unsigned long start, end;
	char p[256];
	int err;

	if (node_phys_range(0, &start, &end))
		return -ENOENT;
	err = write_file(DAMON_ADMIN "/kdamonds/nr_kdamonds", "1");
	err = err ? err : write_file(KD "/contexts/nr_contexts", "1");
	err = err ? err : write_file(CTX "/operations", "paddr");
	err = err ? err : write_file(CTX "/targets/nr_targets", "1");
	err = err ? err : write_file(CTX "/targets/0/regions/nr_regions", "1");
	err = err ? err : write_file(CTX "/targets/0/regions/0/end", "%lu", end);
	err = err ? err : write_file(CTX "/targets/0/regions/0/start", "%lu", start);
	err = err ? err : write_file(SCHEMES "/nr_schemes", "%d", nr_schemes);
	for (int i = 0; i < nr_schemes && !err; i++) {
		/* an age no region reaches: the scheme never applies */
		snprintf(p, sizeof(p), SCHEMES "/%d/access_pattern/age/min", i);
		err = write_file(p, "%u", 4000000000U);
		snprintf(p, sizeof(p), SCHEMES "/%d/action", i);
		err = err ? err : write_file(p, "stat");
	}
	return err;
}

FIXTURE(knobs) {
	long nb, th, repeat, refresh;
};

FIXTURE_SETUP(knobs)
{
	read_nodes();
	self->th = read_long(TH_FAULTS);
	self->repeat = read_long(REPEAT);
	self->refresh = read_long(REFRESH);
	self->nb = read_long(NB);
	if (!access(DAMON_ADMIN, F_OK)) {
		if (damon_clear_stopped() == -EBUSY)
			SKIP(return, "a kdamond runs: not this test's to stop");
		ASSERT_EQ(read_long(DAMON_ADMIN "/kdamonds/nr_kdamonds"), 0);
	}
}

FIXTURE_TEARDOWN(knobs)
{
	damon_stop();
	if (self->nb >= 0)
		write_file(NB, "%ld", self->nb);
	if (self->th >= 0)
		write_file(TH_FAULTS, "%ld", self->th);
	if (self->repeat >= 0)
		write_file(REPEAT, "%ld", self->repeat);
	if (self->refresh >= 0)
		write_file(REFRESH, "%ld", self->refresh);
}

TEST_F_TIMEOUT(knobs, target_nid, 1800)
{
	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	ASSERT_GT(nr_node_ids, 0);
	ASSERT_EQ(damon_setup(1), 0);
	ASSERT_EQ(write_file(SCHEME0 "/action", "migrate_cold"), 0);
	EXPECT_EQ(fuzz(_metadata, SCHEME0 "/target_nid", K_NID, budget(16)), 0);
	/* a bad write while the kdamond runs */
	ASSERT_EQ(write_file(SCHEME0 "/target_nid", "%d", last_mem_node), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	EXPECT_EQ(fuzz(_metadata, SCHEME0 "/target_nid", K_NID, budget(4)), 0);
}

/*
 * The files of the DAMON self-tuning patches, on a stopped and on a running
 * kdamond: a filter's allow, a quota goal's nid, the quotas' goal_tuner and
 * the intervals goal's access_bp.
 */
TEST_F_TIMEOUT(knobs, damon_self_tuning_files, 1800)
{
	static const struct {
		const char *path;
		enum knob_type type;
	} files[] = {
		{ SCHEME0 "/filters/0/allow", K_BOOL },
		{ SCHEME0 "/quotas/goals/0/nid", K_GOAL_NID },
		{ SCHEME0 "/quotas/goal_tuner", K_TUNER },
		{ IGOAL "/access_bp", K_UL },
	};

	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	ASSERT_EQ(damon_setup(1), 0);
	ASSERT_EQ(write_file(SCHEME0 "/filters/nr_filters", "1"), 0);
	ASSERT_EQ(write_file(SCHEME0 "/quotas/goals/nr_goals", "1"), 0);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (access(files[i].path, F_OK))
			SKIP(return, "no %s: kernel without the DAMON self-tuning patches",
			     files[i].path);
	}
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		EXPECT_EQ(fuzz(_metadata, files[i].path, files[i].type, budget(3)), 0);
	/* while the kdamond runs: the files only take input until a commit */
	ASSERT_EQ(write_file(SCHEME0 "/quotas/goals/0/nid", "0"), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		EXPECT_EQ(fuzz(_metadata, files[i].path, files[i].type, budget(1)), 0);
	EXPECT_GT(kdamond_pid(), 0);
}

TEST_F_TIMEOUT(knobs, action, 1800)
{
	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	ASSERT_EQ(damon_setup(1), 0);
	EXPECT_EQ(fuzz(_metadata, SCHEME0 "/action", K_ACTION, budget(10)), 0);
}

TEST_F_TIMEOUT(knobs, state_garbage, 1800)
{
	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	ASSERT_EQ(damon_setup(1), 0);
	/* off, then on: garbage changes neither */
	EXPECT_EQ(fuzz(_metadata, KD "/state", K_STATE, budget(4)), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	EXPECT_EQ(fuzz(_metadata, KD "/state", K_STATE, budget(4)), 0);
	EXPECT_GT(kdamond_pid(), 0);
}

/*
 * kernel.numa_balancing, whose bit 4 (NUMA_BALANCING_TIERING_FAULTS) is the
 * fault-count hint latency: 0-3, 6 and 7 are taken, 4 and 5 (the bit
 * without tiering) are EINVAL like anything else (model_numa_balancing()).
 */
TEST_F_TIMEOUT(knobs, numa_balancing, 1800)
{
	if (self->nb < 0)
		SKIP(return, "no %s: kernel without NUMA balancing", NB);
	if (vmstat("/proc/vmstat", "numa_hint_faults_tiering") < 0)
		SKIP(return, "kernel without the fault-count hint latency");
	EXPECT_EQ(fuzz(_metadata, NB, K_NB, budget(8)), 0);
}

TEST_F_TIMEOUT(knobs, hot_repeat, 1800)
{
	if (self->repeat < 0)
		SKIP(return, "no %s: kernel without the fault-count hint latency",
		     REPEAT);
	EXPECT_EQ(fuzz(_metadata, REPEAT, K_REPEAT, budget(5)), 0);
}

/* hint_refresh takes what hot_repeat takes: "0" or "1" */
TEST_F_TIMEOUT(knobs, hint_refresh, 1800)
{
	if (self->refresh < 0)
		SKIP(return, "no %s: kernel without the fault-count hint latency",
		     REFRESH);
	EXPECT_EQ(fuzz(_metadata, REFRESH, K_REPEAT, budget(5)), 0);
}

TEST_F_TIMEOUT(knobs, hot_threshold_faults, 1800)
{
	long max;

	if (self->th < 0)
		SKIP(return, "no %s: kernel without the fault-count hint latency",
		     TH_FAULTS);
	max = find_th_max();
	TH_LOG("hot_threshold_faults takes 0..%ld", max);
	/* at least a 12-bit stamp (Documentation/admin-guide/mm/tiering.rst) */
	ASSERT_GE(max, 4095);
	ASSERT_LT(max, 1L << 32);
	th_max = max;
	EXPECT_EQ(fuzz(_metadata, TH_FAULTS, K_THRESH, budget(13)), 0);
}

/*
 * The documented contract, for inputs longer than a number needs: the whole
 * write is parsed, so text that is not a number is rejected wherever the
 * junk starts, and leading zeros do not push a number out of the buffer.
 */
TEST_F_TIMEOUT(knobs, hot_threshold_faults_long_input, 300)
{
	static const char * const in[] = {
		"000000000000000000000000000000000001x",
		"0000000000000000000000000000000000002",
		"1                                   ",
		"1\n                                  junk",
	};
	struct knob k;

	if (self->th < 0)
		SKIP(return, "no %s: kernel without the fault-count hint latency",
		     TH_FAULTS);
	th_max = find_th_max();
	ASSERT_EQ(write_file(TH_FAULTS, "7"), 0);
	ASSERT_EQ(knob_open(&k, TH_FAULTS, K_THRESH), 0);
	for (size_t i = 0; i < ARRAY_SIZE(in); i++)
		EXPECT_TRUE(knob_write(_metadata, &k, in[i], strlen(in[i])));
	EXPECT_EQ(k.bad, 0);
}

/*
 * The commit rule of target_nid: a migrate scheme without a target node
 * (or with one that has no memory) is refused with EINVAL, at "on" and at
 * "commit" alike, and a refused commit leaves the kdamond running.
 */
TEST_F_TIMEOUT(knobs, commit_refused_keeps_kdamond, 300)
{
	char buf[16];

	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	ASSERT_EQ(damon_setup(1), 0);
	/* a refused commit keeps the kdamond with the DAMON self-tuning series */
	if (access(CTX "/monitoring_attrs/intervals/intervals_goal", F_OK))
		SKIP(return, "kernel without the DAMON self-tuning series");
	ASSERT_EQ(write_file(SCHEME0 "/action", "migrate_cold"), 0);
	ASSERT_EQ(write_file(SCHEME0 "/target_nid", "-1"), 0);
	EXPECT_EQ(write_file(KD "/state", "on"), -EINVAL);
	EXPECT_EQ(kdamond_pid(), -1);

	ASSERT_EQ(write_file(SCHEME0 "/action", "stat"), 0);
	ASSERT_EQ(write_file(KD "/state", "on"), 0);
	ASSERT_GT(kdamond_pid(), 0);
	ASSERT_EQ(write_file(SCHEME0 "/action", "migrate_cold"), 0);
	EXPECT_EQ(write_file(KD "/state", "commit"), -EINVAL);
	/* a stopped kdamond shows once its thread is gone */
	sleep(1);
	EXPECT_GT(kdamond_pid(), 0) {
		TH_LOG("the refused commit stopped the kdamond");
	}
	ASSERT_GT(kdamond_state(buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "on\n");
	/* a valid commit still works */
	ASSERT_EQ(write_file(SCHEME0 "/action", "stat"), 0);
	EXPECT_EQ(write_file(KD "/state", "commit"), 0);
}

/* ---- writers racing with commit, on and off ---- */

struct racer {
	struct __test_metadata *md;
	unsigned long long r;
	long n, writes, bad;
	int kind;
	pthread_t thread;
};

enum { R_SCHEME, R_STATE, R_NR_SCHEMES, R_NUMA };

static void race_log(struct racer *x, const char *path, const char *in,
		     size_t len, ssize_t ret, int err)
{
	struct __test_metadata *_metadata = x->md;
	char hex[200];

	if (x->bad++ >= LOG_MAX)
		return;
	hexdump(hex, sizeof(hex), in, len);
	TH_LOG("race: %s '%s': wrote %zd (%s)", path, hex, ret,
	       err ? strerror(err) : "ok");
}

/* write once to a file that the nr_schemes racer may remove */
static ssize_t write_path(const char *path, const char *in, size_t len, int *err)
{
	int fd = open(path, O_WRONLY);
	ssize_t ret;

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	ret = write(fd, in, len);
	*err = ret < 0 ? errno : 0;
	close(fd);
	return ret;
}

static void *racer_main(void *arg)
{
	static const char * const state_race[] = {
		"on", "commit", "update_schemes_stats", "commit", "off",
		"update_schemes_tried_regions", "on", "off", "commit",
	};
	static const char * const safe_actions[] = {
		"stat", "migrate_hot", "migrate_cold", "lru_prio", "lru_deprio",
	};
	struct racer *x = arg;
	char in[MAX_IN + 1], path[256];
	const char *p;
	size_t len;
	ssize_t ret;
	int err;
	bool ok;

	while (x->writes < x->n) {
		switch (x->kind) {
		case R_SCHEME: {
			enum knob_type t = rnd_below(&x->r, 2) ? K_NID : K_ACTION;

			snprintf(path, sizeof(path), SCHEMES "/%lu/%s",
				 rnd_below(&x->r, 2),
				 t == K_NID ? "target_nid" : "action");
			if (t == K_ACTION && rnd_below(&x->r, 2))
				len = snprintf(in, sizeof(in), "%s",
					       safe_actions[rnd_below(&x->r, 5)]);
			else
				len = gen(t, &x->r, in);
			/* no destructive action: pageout would reclaim */
			in[len] = '\0';
			if (t == K_ACTION && match(actions, ARRAY_SIZE(actions), in) >= 0 &&
			    match(safe_actions, 5, in) < 0)
				continue;
			ret = write_path(path, in, len, &err);
			/* the scheme directory may be gone for a moment */
			ok = ret >= 0 || err == EINVAL || err == ENOENT || err == ENODEV;
			p = path;
			break;
		}
		case R_STATE:
			p = KD "/state";
			len = snprintf(in, sizeof(in), "%s",
				       state_race[rnd_below(&x->r, ARRAY_SIZE(state_race))]);
			ret = write_path(p, in, len, &err);
			/*
			 * on when on: EBUSY; commit when off: EINVAL; off
			 * when off: EINVAL, or EPERM once it has run
			 */
			ok = ret >= 0 || err == EINVAL || err == EBUSY ||
			     (err == EPERM && !strcmp(in, "off"));
			break;
		case R_NR_SCHEMES:
			p = SCHEMES "/nr_schemes";
			len = snprintf(in, sizeof(in), "%lu", 1 + rnd_below(&x->r, 2));
			ret = write_path(p, in, len, &err);
			ok = ret >= 0 || err == EBUSY;
			if (!rnd_below(&x->r, 4))
				usleep(1000);
			break;
		default: {
			enum knob_type t = rnd_below(&x->r, 2) ? K_NB : K_THRESH;

			p = t == K_NB ? NB : TH_FAULTS;
			len = gen(t, &x->r, in);
			ret = write_path(p, in, len, &err);
			ok = ret >= 0 || err == EINVAL;
		}
		}
		x->writes++;
		if (!ok)
			race_log(x, p, in, len, ret, err);
	}
	return NULL;
}

TEST_F_TIMEOUT(knobs, writers_race_commit_on_off, 3600)
{
	struct racer x[5] = {
		{ .kind = R_SCHEME }, { .kind = R_SCHEME }, { .kind = R_STATE },
		{ .kind = R_NR_SCHEMES }, { .kind = R_NUMA },
	};
	unsigned long long s = input_seed(_metadata);
	long total = budget(20), writes = 0, bad = 0;
	int nr = ARRAY_SIZE(x);
	char buf[64];

	if (access(DAMON_ADMIN, F_OK))
		SKIP(return, "no DAMON sysfs interface");
	if (self->nb < 0 || self->th < 0)
		nr--;	/* no NUMA knobs: race DAMON alone */
	th_max = self->th >= 0 ? find_th_max() : 0;
	ASSERT_EQ(damon_setup(2), 0);
	for (int i = 0; i < nr; i++) {
		x[i].md = _metadata;
		x[i].r = s + i * 0x9e3779b97f4a7c15ULL;
		/* nr_schemes rebuilds directories: fewer of those */
		x[i].n = x[i].kind == R_NR_SCHEMES ? total * 3 / 100 :
			 x[i].kind == R_STATE ? total * 12 / 100 :
			 x[i].kind == R_SCHEME ? total * 30 / 100 : total / 4;
		ASSERT_EQ(pthread_create(&x[i].thread, NULL, racer_main, &x[i]), 0);
	}
	for (int i = 0; i < nr; i++) {
		pthread_join(x[i].thread, NULL);
		writes += x[i].writes;
		bad += x[i].bad;
	}
	TH_LOG("%ld racing writes by %d threads, %ld with an unexpected result",
	       writes, nr, bad);
	EXPECT_EQ(bad, 0);

	/* the interface still works: a known configuration reads back */
	write_file(KD "/state", "off");
	ASSERT_EQ(damon_setup(1), 0);
	EXPECT_EQ(write_file(SCHEME0 "/target_nid", "%d", last_mem_node), 0);
	EXPECT_EQ(write_file(SCHEME0 "/action", "migrate_cold"), 0);
	EXPECT_EQ(write_file(KD "/state", "on"), 0);
	EXPECT_EQ(read_long(SCHEME0 "/target_nid"), last_mem_node);
	EXPECT_GT(kdamond_pid(), 0);
	EXPECT_EQ(write_file(KD "/state", "off"), 0);
	ASSERT_GT(kdamond_state(buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "off\n");
}

TEST_HARNESS_MAIN
