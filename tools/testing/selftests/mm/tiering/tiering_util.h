/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the memory-tiering selftests: sysfs and vmstat access,
 * node geometry, page placement (mbind(2)/move_pages(2)), and a minimal DAMON
 * sysfs driver for one kdamond with paddr schemes.
 */
#ifndef TIERING_UTIL_H
#define TIERING_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/compiler.h>

#define DAMON_ADMIN	"/sys/kernel/mm/damon/admin"
#define MAX_NODES	64

/**
 * struct damos_cfg - one DAMOS scheme on one paddr region
 * @action: "migrate_hot", "migrate_cold", "stat", ...
 * @target_nid: value for the scheme's target_nid file
 * @start: physical start of the monitored region
 * @end: physical end of the monitored region
 * @min_nr_accesses: access-pattern nr_accesses min
 * @max_nr_accesses: access-pattern nr_accesses max
 * @min_age: access-pattern age min, in aggregation intervals
 */
struct damos_cfg {
	const char *action;
	int target_nid;
	unsigned long start;
	unsigned long end;
	unsigned int min_nr_accesses;
	unsigned int max_nr_accesses;
	unsigned int min_age;
};

__printf(2, 3) int write_file(const char *path, const char *fmt, ...);
int read_file(const char *path, char *buf, size_t len);
long read_long(const char *path);
long vmstat(const char *file, const char *name);
int node_phys_range(int nid, unsigned long *start, unsigned long *end);
long node_mem_total_kb(int nid);
int parse_nodelist(const char *list, bool *nodes, int max);
int mem_tier_of(int nid);

void *alloc_on_node(size_t len, int nid);
int move_to_node(void *buf, size_t len, int nid);
int count_pages_per_node(void *buf, size_t len, long *counts);
long pgdemote(void);
int kswapd_pid(int nid);
char task_state(int pid);
int count_after_demotion(int nid, void *buf, size_t len, long *counts,
			 int timeout_s, int *quiet_s);
long wait_for_pages_on_node(void *buf, size_t len, int nid, long want,
			    int timeout_s, long *counts);
void fill_pattern(void *buf, size_t len, unsigned int seed);
bool check_pattern(void *buf, size_t len, unsigned int seed);

/**
 * struct toucher - a thread that keeps writing every page of a buffer
 * @buf: the buffer
 * @len: its length
 * @stop: set to stop the thread
 * @thread: the thread
 */
struct toucher {
	char *buf;
	size_t len;
	int stop;
	pthread_t thread;
};

int toucher_start(struct toucher *t, void *buf, size_t len);
void toucher_stop(struct toucher *t);
int vm_stat_refresh(void);
int trace_clear(void);
long trace_moved(int src, int dst, const char *reason, long *events);
long trace_largest(int src, int dst, const char *reason);

int damon_start(const struct damos_cfg *schemes, int nr_schemes);
int damon_stop(void);
int damon_clear_stopped(void);
long damon_scheme_stat(int scheme, const char *stat);
long kdamond_pid(void);

#endif /* TIERING_UTIL_H */
