#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernels: patched
# timeout: 5400
#
# Which tiering to turn on: every policy of POLICIES on every workload of
# WORKLOADS (default W1 W2; W3, the longest, in a boot of its own; W4,
# W5, W6), in one boot, with the same seeds (runs in the lab guest, patched
# kernel: it reads the series' counters and files).
#
# Workload W1 (build/bench/bin/phases, bench/phases.c): W1_MIB (default
# 1.5x node0's MemTotal) of anonymous memory in W1_REGIONS (10) regions,
# bound to node0 and node2 with MPOL_F_NUMA_BALANCING, CPU on node0;
# W1_PHASES (3) phases of W1_PHASE_S (60) seconds, each with its own
# ranking of the regions' access weights (seed W1_SEED).  The metric is the
# DRAM share of accesses, sampled every 2 s with move_pages(2), against an
# oracle that puts the hottest regions first into node0's free memory;
# oracle_moves_P counts the pages that oracle itself moves between the
# nodes at phase P's start, the floor of any policy's page exchange;
# mv/or in the table: per phase, the pages the kernel migrated during it
# (moved_P, from /proc/vmstat) over oracle_moves_P.
#
# Workload W2, the seed RFC's Redis case with Debian's redis-server and
# redis-benchmark: redis-server (CPU0, numactl -b --membind=0,2) gets a
# cold dataset first (DEBUG POPULATE, W2_COLD_KEYS values of 20,000 bytes,
# default node0's MemTotal / 20 KB: it fills node0), then a hot one
# (redis-benchmark SET, W2_HOT_KEYS keys, default 10000, 200 MB), which
# lands on node2.  Then W2_WINDOWS (12) runs of W2_REQS (20000) random GETs
# of the hot keys (redis-benchmark on CPU1, 4 clients, pipeline 16), each
# giving ops/s and latencies; the policy should bring the hot keys to
# node0.  At the end, redis-server's pages per node (numa_maps).
#
# Workload W3, numa-hint-seed.sh's two regimes of bench/numa-hint.c under
# each policy (W3_REGIMES, default "uniform hotchunk"), with that
# scenario's NUMA-balancing scan knobs and THP off for the run: 1536 MiB
# in 8 MiB chunks, node0's free memory but 64 MiB filled first (demotion
# off while it fills), the rest on node2; then the policy on, and episodes
# of random writes to one chunk each: in "uniform" (the seed's regime) any
# chunk, W3_UNIFORM_EPISODES (768) of 6291456 writes; in "hotchunk" one
# of 16 hot chunks, with a never-hot chunk swept after every 4 episodes,
# W3_HOTCHUNK_EPISODES (400) of 16777216 writes.  Keys W3u_/W3h_POLICY_:
# dram_share_pct (of the episodes' accesses), hot_final_pct,
# ep_promoted_pages, _kept, _undone, wrong_promoted_pages (never-hot
# pages promoted), and the counters.
#
# Workloads W4 and W5 (build/bench/bin/hotset, bench/hotset.c): W4_MIB or
# W5_MIB (default 1.5x node0's MemTotal) of anonymous memory in 16 KiB
# keys, bound and sampled as W1's, CPU on node0, written in order (the
# first keys fill node0).  W4, a moving hot set (HeMem's gups-hotset-move):
# 90% of the accesses go to W4_HOT_MIB (node0's MemTotal / 2), the first
# keys, the rest to the other keys; at W4_MOVE_S (90) the hot set's first
# quarter turns cold and as many cold keys at the end of the memory (on
# node2) turn hot; the run ends at W4_RUN_S (210).  W5, drifting
# popularity: Zipf (exponent 1) over the keys by distance from a centre
# key (ranks 2d after it, 2d - 1 before), the centre moved by
# 1/W5_PERIOD_S (300) of the keys every second: keys ahead warm, keys
# behind cool; from the fill's layout (the oracle's) on, for W5_RUN_S
# (210).  The oracle holds the currently hottest keys in node0's free
# memory at the start, moving as few as it can.  The access thread flushes
# its TLB every W45_FLUSH_MS (5; 0: never), for DAMON under TCG
# (bench/hotset.c).  Keys W4_POLICY_ and W5_POLICY_: share_P, oracle_P
# (phase P's second half; W4: 0 before the move, 1 after, W5: 0 only),
# reach90_s_P, late_over_oracle, oracle_moves_P, moved_P (as W1's),
# moved_back_pages (sampled pages that left their node and came back
# within a phase), and the counters; samples in
# /mnt/lab/tiering-policies-hotset.csv (W1's columns).
#
# Workload W6, nothing changes (hotset steady): W4's memory and hot set,
# which never moves, for W6_RUN_S (180): the fill's layout is the
# oracle's, so a policy can only lose share and whatever it migrates is
# exchange without a gain.  Keys W6_POLICY_ as W4's phase 0, and
# moved_pct_min: the pages migrated per minute of the run, in % of
# node0's pages (the target: below 1, with share_0 no lower than P0's).
# The policy runs during the fill, which writes every page once in key
# order, the hot keys first.
#
# Workload W7: W6 with the policy turned on after the fill (HOTSET_GO), so
# that the oracle's layout is in place when it starts.  Keys W7_POLICY_
# as W6's.
#
# Policies (each starts from the same state: DAMON off, NUMA balancing
# off, reclaim demotion on, caches dropped, memory compacted):
#   P0   demotion only (numa_balancing 0, demotion_enabled 1)
#   P1   NUMA-balancing tiering, time mode, defaults (numa_balancing 2)
#   P2@MS  P1 with hot_threshold_ms MS (P2 alone: P2_HOT_MS, 10000)
#   P3   NUMA-balancing tiering, fault-count mode (numa_balancing 6)
#   P4   DAMON, mainline's self-tuned recipe as damo's scripts/mem_tier.sh
#        writes it (bench/damon-recipes.sh: kdamond_goals): node0 99.7%
#        used / 0.5% free goals, intervals goal 4% 3 5ms 10s, 200 MiB/s
#        quotas, young filters, the "consist" tuner
#   P5   P4 with the "temporal" goal tuner on both schemes
#   P6   hand-tuned DAMOS: damon-tiered's "early" (20 ms / 400 ms,
#        migrate_cold after 4 s idle, migrate_hot on any access, no quota)
#   P7   P1's promotion with P4's migrate_cold doing the demotion
#   P8   the series' recommended setup: tools/mm/damon-tiering.sh (P5 with
#        its goals moved by node0's reserve, its apply interval the time
#        the quota's rate takes to cross the gap between them)
#   P9   mainline's PULL/PUSH pair, a bandwidth split (7.2,
#        node_eligible_mem_bp's cover letter, its published values: 60% of
#        the hot memory on node0 and 40% on node2 by design, so not
#        capacity tiering): one paddr kdamond over node0 and
#        node2, two migrate_hot schemes on regions with any access, each
#        kept to its source node by allow addr filters: PULL to node0 with
#        a node_eligible_mem_bp goal of 6000 on node0, PUSH to node2 with
#        one of 4000 on node2; the temporal tuner, P4's quota (200 MiB per
#        second, applied every second) and intervals auto-tuning
#   P12  P8 with the promotion floor (DAMON_TIERING_FLOOR=1, the kernel
#        built with CONFIG_DAMOS_PROMOTION_FLOOR): migrate_hot takes only
#        regions hotter than node0's coldest memory that holds data
#   P13  mainline's capacity recipe in one context: P5's two schemes
#        (mem_tier.sh's goals and access patterns, young filters, the
#        "temporal" tuner) in one paddr kdamond over node0 and node2,
#        each kept to its source node by reject addr filters on the
#        other node's memory, with P9's intervals auto-tuning
#   P14  P8's two schemes in one context: P13's layout with
#        damon-tiering.sh's goals (moved by node0's reserve), apply
#        interval, quota weights, sampling (5 ms to 1 s) and the
#        "temporal_capped" tuner
# Reclaim demotion stays on under every policy: it is what keeps a full
# node0 allocating, and what a tiered machine runs.
#
# Output: the workload's RESULT lines per policy (W1: POLICY_key, W2:
# W2_POLICY_key, W4 to W7: Wn_POLICY_key), the policy's vmstat deltas
# and kdamond CPU time, the samples of every policy in
# /mnt/lab/tiering-policies.csv and tiering-policies-hotset.csv (plotted
# by bench/tiering-policies.gp: bench/run.sh makes a plot per workload),
# and a table per workload.  Times are TCG (emulated), not hardware.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$REPO/build/bench/bin/phases
OUTDIR=${BENCH_OUT:-/mnt/lab}
CSV=$OUTDIR/tiering-policies.csv
W2_CSV=$OUTDIR/tiering-policies-redis.csv
POLICIES=${POLICIES:-P0 P1 P2 P3 P4 P5 P6 P7 P8 P9 P12 P13 P14}
WORKLOADS=${WORKLOADS:-W1 W2}
W3_REGIMES=${W3_REGIMES:-uniform hotchunk}
W3_UNIFORM_EPISODES=${W3_UNIFORM_EPISODES:-768}
W3_HOTCHUNK_EPISODES=${W3_HOTCHUNK_EPISODES:-400}
NH=$REPO/build/bench/bin/numa-hint
NB=/sys/kernel/debug/sched/numa_balancing
W2_HOT_KEYS=${W2_HOT_KEYS:-10000} W2_WINDOWS=${W2_WINDOWS:-12} W2_REQS=${W2_REQS:-20000}

FAST=0 SLOW=2
W1_REGIONS=${W1_REGIONS:-10} W1_PHASES=${W1_PHASES:-3}
W1_PHASE_S=${W1_PHASE_S:-60} W1_SEED=${W1_SEED:-42}
HS=$REPO/build/bench/bin/hotset
HS_CSV=$OUTDIR/tiering-policies-hotset.csv
W4_MOVE_S=${W4_MOVE_S:-90} W4_RUN_S=${W4_RUN_S:-210}
W5_PERIOD_S=${W5_PERIOD_S:-300} W5_RUN_S=${W5_RUN_S:-210}
W6_RUN_S=${W6_RUN_S:-180}
W45_FLUSH_MS=${W45_FLUSH_MS:-5}
P2_HOT_MS=${P2_HOT_MS:-10000}
ADMIN=/sys/kernel/mm/damon/admin
ULONG_MAX=18446744073709551615
UINT_MAX=4294967295
SAMPLE_US=20000 AGGR_US=400000 UPDATE_US=2000000 COLD_AGE_MS=4000
COUNTERS=(pgpromote_success pgpromote_candidate numa_hint_faults
	numa_hint_faults_tiering pgdemote_kswapd pgdemote_direct
	damon_migrate_hot damon_migrate_cold damon_migrate_fail
	pgmigrate_fail oom_kill)
declare -A V0 VM R
TMP=$(mktemp -d)
w1_pid=
redis_pid=

die()
{
	echo "bench: tiering-policies: $*" >&2
	exit 1
}

# shellcheck source=bench/damon-recipes.sh
. "$REPO/bench/damon-recipes.sh"

vmstat_snap()
{
	local k v vmstat

	echo 1 > /proc/sys/vm/stat_refresh
	read -r -d '' vmstat < /proc/vmstat
	while read -r k v; do
		VM[$k]=$v
	done <<< "$vmstat"
}

# kdamonds_cs: the CPU time (utime + stime) of the running kdamonds, in
# centiseconds
kdamonds_cs()
{
	local i n pid stat cs=0 hz

	hz=$(getconf CLK_TCK)
	read -r n < $ADMIN/kdamonds/nr_kdamonds
	for ((i = 0; i < n; i++)); do
		read -r pid < $ADMIN/kdamonds/$i/pid
		[ "$pid" -gt 0 ] || continue
		read -r stat < /proc/$pid/stat
		read -ra stat <<< "${stat##*) }"
		cs=$((cs + (stat[11] + stat[12]) * 100 / hz))
	done
	echo $cs
}

damon_off()
{
	local i n

	# P8's own record of its kdamonds goes with them
	"$REPO/tools/mm/damon-tiering.sh" stop > /dev/null 2>&1
	read -r n < $ADMIN/kdamonds/nr_kdamonds
	for ((i = 0; i < n; i++)); do
		echo off > $ADMIN/kdamonds/$i/state 2>/dev/null
	done
	w 0 $ADMIN/kdamonds/nr_kdamonds
}

# reset: every policy off, reclaim demotion on, a clean start
reset()
{
	damon_off
	w 0 /proc/sys/kernel/numa_balancing
	w 1000 /sys/kernel/debug/sched/numa_balancing/hot_threshold_ms
	w true /sys/kernel/mm/numa/demotion_enabled
	sync
	echo 3 > /proc/sys/vm/drop_caches
	echo 1 > /proc/sys/vm/compact_memory
}

# recipe TUNER [cold-only]: mainline's self-tuned recipe (damo's
# scripts/mem_tier.sh), both schemes tuned by TUNER; "cold-only" starts
# only its migrate_cold kdamond
recipe()
{
	local i n=2

	goal_min_sample_us=5000 goal_apply_us=1000000
	goal_window_ms=1000 goal_window_b=$((200 << 20))
	[ "${2:-}" = cold-only ] && n=1
	w $n $ADMIN/kdamonds/nr_kdamonds
	kdamond_goals 0 $FAST migrate_cold $SLOW 0 node_mem_free_bp 50 N "$1"
	[ $n = 2 ] && kdamond_goals 1 $SLOW migrate_hot $FAST 1 node_mem_used_bp 9970 Y "$1"
	for ((i = 0; i < n; i++)); do
		w on $ADMIN/kdamonds/$i/state
	done
}

# ctx_scheme S ACTION TARGET_NID NR_MIN NR_MAX METRIC VALUE GOAL_NID:
# scheme S of kdamond 0's context runs ACTION to TARGET_NID once a
# second on regions with NR_MIN to NR_MAX accesses, within 200 MiB per
# second tuned by "temporal" toward METRIC of GOAL_NID at VALUE
ctx_scheme()
{
	local s=$ADMIN/kdamonds/0/contexts/0/schemes/$1

	w "$2" "$s/action"
	w "$3" "$s/target_nid"
	w 1000000 "$s/apply_interval_us"
	w 0 "$s/access_pattern/sz/min"
	w $ULONG_MAX "$s/access_pattern/sz/max"
	w "$5" "$s/access_pattern/nr_accesses/max"
	w "$4" "$s/access_pattern/nr_accesses/min"
	w 0 "$s/access_pattern/age/min"
	w $UINT_MAX "$s/access_pattern/age/max"
	w 1000 "$s/quotas/reset_interval_ms"
	w $((200 << 20)) "$s/quotas/bytes"
	w temporal "$s/quotas/goal_tuner"
	w 1 "$s/quotas/goals/nr_goals"
	w "$6" "$s/quotas/goals/0/target_metric"
	w "$7" "$s/quotas/goals/0/target_value"
	w "$8" "$s/quotas/goals/0/nid"
}

# addr_filters S ALLOW NID [EXTRA]: scheme S of kdamond 0's context gets
# an addr filter per range of NID's memory, allowing it (ALLOW=Y) or
# rejecting it (N), and room for EXTRA (default 0) filters after them
addr_filters()
{
	local s=$ADMIN/kdamonds/0/contexts/0/schemes/$1 f=0 start end ranges

	ranges=$(node_ranges "$3")
	w $(($(echo "$ranges" | wc -l) + ${4:-0})) "$s/filters/nr_filters"
	while read -r start end; do
		w addr "$s/filters/$f/type"
		w Y "$s/filters/$f/matching"
		w "$2" "$s/filters/$f/allow"
		w "$start" "$s/filters/$f/addr_start"
		w "$end" "$s/filters/$f/addr_end"
		f=$((f + 1))
	done <<< "$ranges"
}

# pull_push_scheme S TARGET_NID GOAL_NID GOAL_BP SRC_NID: scheme S of
# kdamond 0's context is P9's migrate_hot to TARGET_NID on the memory of
# SRC_NID (an allow addr filter per range), tuned toward a
# node_eligible_mem_bp goal of GOAL_BP on GOAL_NID
pull_push_scheme()
{
	ctx_scheme "$1" migrate_hot "$2" 1 $UINT_MAX node_eligible_mem_bp "$4" "$3"
	addr_filters "$1" Y "$5"
}

# one_kdamond: kdamond 0, the only one, monitors node0's and node2's
# memory in one context of two schemes (left for the caller to set),
# with intervals auto-tuning (4% of the possible accesses in 3
# aggregations, sampling every 5 ms to 10 s)
one_kdamond()
{
	local ctx=$ADMIN/kdamonds/0/contexts/0 iv=$ADMIN/kdamonds/0/contexts/0/monitoring_attrs/intervals

	w 1 $ADMIN/kdamonds/nr_kdamonds
	w 1 $ADMIN/kdamonds/0/contexts/nr_contexts
	w paddr "$ctx/operations"
	w 5000 "$iv/sample_us"
	w 100000 "$iv/aggr_us"
	w 400 "$iv/intervals_goal/access_bp"
	w 3 "$iv/intervals_goal/aggrs"
	w 5000 "$iv/intervals_goal/min_sample_us"
	w 10000000 "$iv/intervals_goal/max_sample_us"
	node_target "$ctx" $FAST $SLOW
	w 2 "$ctx/schemes/nr_schemes"
}

# pull_push: P9
pull_push()
{
	one_kdamond
	pull_push_scheme 0 $FAST $FAST 6000 $SLOW
	pull_push_scheme 1 $SLOW $SLOW 4000 $FAST
	w on $ADMIN/kdamonds/0/state
}

# one_context_scheme S ACTION TARGET_NID NR_MIN NR_MAX METRIC VALUE
# YOUNG_ALLOW OTHER_NID: scheme S of kdamond 0's context is P13's ACTION
# to TARGET_NID (ctx_scheme, the goal on node0), kept off OTHER_NID's
# memory by a reject addr filter per range, then young pages allowed
# (YOUNG_ALLOW=Y) or rejected (N).  Reject filters, not allow ones: a
# core filter that allows a region skips the page filters, the young one
# included.
one_context_scheme()
{
	local s=$ADMIN/kdamonds/0/contexts/0/schemes/$1 f

	ctx_scheme "$1" "$2" "$3" "$4" "$5" "$6" "$7" $FAST
	addr_filters "$1" N "$9" 1
	f=$(($(cat "$s/filters/nr_filters") - 1))
	w young "$s/filters/$f/type"
	w Y "$s/filters/$f/matching"
	w "$8" "$s/filters/$f/allow"
}

# one_context: P13, P5's two schemes in one kdamond
one_context()
{
	one_kdamond
	one_context_scheme 0 migrate_cold $SLOW 0 0 node_mem_free_bp 50 N $SLOW
	one_context_scheme 1 migrate_hot $FAST 1 $UINT_MAX node_mem_used_bp 9970 Y $FAST
	w on $ADMIN/kdamonds/0/state
}

# p8_context: P14, P13's one context with P8's values: damon-tiering.sh's
# goals for node0 (its goals function), apply interval, weights, sampling
# and tuner
p8_context()
{
	local i s reserve used free apply_us

	read -r reserve used free apply_us <<< "$(goals $FAST)"
	echo "bench: P14: reserve $reserve bp, goals $used/$free, apply $apply_us us"
	one_kdamond
	w 1000000 $ADMIN/kdamonds/0/contexts/0/monitoring_attrs/intervals/intervals_goal/max_sample_us
	one_context_scheme 0 migrate_cold $SLOW 0 $UINT_MAX node_mem_free_bp "$free" N $SLOW
	one_context_scheme 1 migrate_hot $FAST 1 $UINT_MAX node_mem_used_bp "$used" Y $FAST
	for i in 0 1; do
		s=$ADMIN/kdamonds/0/contexts/0/schemes/$i
		w "$apply_us" "$s/apply_interval_us"
		w 1000 "$s/quotas/weights/nr_accesses_permil"
		w 1000 "$s/quotas/weights/age_permil"
		w temporal_capped "$s/quotas/goal_tuner"
	done
	w on $ADMIN/kdamonds/0/state
}

# policy_on POLICY
policy_on()
{
	local i

	case $1 in
	P0) ;;
	P1) w 2 /proc/sys/kernel/numa_balancing ;;
	P2|P2@*)
		w 2 /proc/sys/kernel/numa_balancing
		i=${1#P2@}
		[ "$i" = P2 ] && i=$P2_HOT_MS
		w "$i" /sys/kernel/debug/sched/numa_balancing/hot_threshold_ms
		;;
	P3) w 6 /proc/sys/kernel/numa_balancing ;;
	P4) recipe consist ;;
	P5) recipe temporal ;;
	P6)
		w 2 $ADMIN/kdamonds/nr_kdamonds
		kdamond 0 $FAST migrate_cold $SLOW 0 0 $((COLD_AGE_MS * 1000 / AGGR_US)) 1000000 Y
		kdamond 1 $SLOW migrate_hot $FAST 1 $UINT_MAX 0 0 N
		for i in 0 1; do
			w on $ADMIN/kdamonds/$i/state
		done
		;;
	P7)
		w 2 /proc/sys/kernel/numa_balancing
		recipe consist cold-only
		;;
	P8) "$REPO/tools/mm/damon-tiering.sh" start $FAST $SLOW || die "P8 did not start" ;;
	P9) pull_push ;;
	P13) one_context ;;
	P14) p8_context ;;
	P12) DAMON_TIERING_FLOOR=1 "$REPO/tools/mm/damon-tiering.sh" start $FAST $SLOW ||
		die "P12 did not start" ;;
	*) die "no policy $1" ;;
	esac
}

cleanup()
{
	[ -n "$w1_pid" ] && kill "$w1_pid" 2>/dev/null
	[ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null
	wait
	damon_off 2>/dev/null
	echo 0 > /proc/sys/kernel/numa_balancing
	rm -rf "$TMP"
}
trap cleanup EXIT

# start POLICY: a clean start, counters snapped, POLICY on
start()
{
	local k

	reset
	vmstat_snap
	for k in "${COUNTERS[@]}"; do V0[$k]=${VM[$k]:-0}; done
	policy_on "$1"
}

# damon_tiering_state NAME: what damon-tiering.sh's kdamonds tuned
# themselves to by the end of the run (show: quotas, intervals, moved)
damon_tiering_state()
{
	"$REPO/tools/mm/damon-tiering.sh" show 2>&1 | sed "s/^/bench: $1: /"
}

# one_context_state NAME: for a policy of one kdamond (P9, P13, P14), the
# intervals it tuned itself to and each scheme's applied bytes
one_context_state()
{
	local kd=$ADMIN/kdamonds/0 ctx=$ADMIN/kdamonds/0/contexts/0 i

	echo update_tuned_intervals > $kd/state 2>/dev/null
	echo update_schemes_stats > $kd/state 2>/dev/null
	echo "bench: $1: sample $(cat $ctx/monitoring_attrs/intervals/sample_us) us," \
		"aggr $(cat $ctx/monitoring_attrs/intervals/aggr_us) us"
	for i in 0 1; do
		echo "bench: $1: scheme $i $(cat $ctx/schemes/$i/action):" \
			"$(($(cat $ctx/schemes/$i/stats/sz_applied) >> 20)) MiB applied," \
			"$(cat $ctx/schemes/$i/stats/nr_applied) regions"
	done
}

# finish NAME: POLICY off, RESULT lines of the counters' deltas and of the
# kdamonds' CPU time under NAME
finish()
{
	local k kd_cs=0

	[ -e $ADMIN/kdamonds/0/pid ] && kd_cs=$(kdamonds_cs)
	case ${1##*_} in
	P8|P12) damon_tiering_state "$1" ;;
	P9|P13|P14) one_context_state "$1" ;;
	esac
	damon_off
	echo 0 > /proc/sys/kernel/numa_balancing
	vmstat_snap
	for k in "${COUNTERS[@]}"; do
		result "$1" "$k" $((${VM[$k]:-0} - V0[$k]))
	done
	result "$1" kdamond_cpu_s "$((kd_cs / 100)).$(printf %02d $((kd_cs % 100)))"
}

# node0_kb: node0's MemTotal in kB
node0_kb()
{
	awk '$3 == "MemTotal:" { print $4 }' /sys/devices/system/node/node$FAST/meminfo
}

# run_sampled NAME CSV CMD...: CMD CSV_FILE (a workload that samples where
# its pages are: phases, hotset) on node0's CPU, to RESULT lines under
# NAME; its samples appended to CSV, NAME first
run_sampled()
{
	local n=$1 csv=$2 line

	shift 2
	numactl --cpunodebind=$FAST "$@" "$TMP/w.csv" > "$TMP/w.out" &
	w1_pid=$!
	wait $w1_pid || die "$n: the workload failed"
	w1_pid=
	finish "$n"
	grep -v '^RESULT' "$TMP/w.out" | sed "s/^/bench: $n: /"
	while read -r line; do
		[ "${line%% *}" = RESULT ] || continue
		line=${line#RESULT }
		result "$n" "${line%%=*}" "${line#*=}"
	done < "$TMP/w.out"
	tail -n +2 "$TMP/w.csv" | sed "s/^/$n,/" >> "$csv"
}

# run_w1 POLICY: W1 under POLICY, to RESULT lines
run_w1()
{
	echo "bench: === W1 $1 ==="
	start "$1"
	run_sampled "$1" "$CSV" "$BIN" "${W1_MIB:-$(($(node0_kb) * 3 / 2 / 1024))}" "$W1_REGIONS" \
		"$W1_PHASES" "$W1_PHASE_S" "$W1_SEED"
}

# run_w45 WORKLOAD POLICY: W4, W5, W6 or W7 under POLICY, to RESULT lines
# WORKLOAD_POLICY_key
run_w45()
{
	local kb hs=(env HOTSET_FLUSH_MS="$W45_FLUSH_MS" "$HS")

	echo "bench: === $1 $2 ==="
	if [ "$1" = W7 ]; then
		start P0
		rm -f "$TMP/go" "$TMP/w.out"
		hs=(env HOTSET_FLUSH_MS="$W45_FLUSH_MS" HOTSET_GO="$TMP/go" "$HS")
		(
			until grep -qx 'hotset: filled' "$TMP/w.out" 2>/dev/null; do
				sleep 0.2
			done
			policy_on "$2"
			touch "$TMP/go"
		) &
	else
		start "$2"
	fi
	kb=$(node0_kb)
	case $1 in
	W4) run_sampled "W4_$2" "$HS_CSV" "${hs[@]}" move "${W4_MIB:-$((kb * 3 / 2 / 1024))}" \
		"${W4_HOT_MIB:-$((kb / 2 / 1024))}" "$W4_MOVE_S" "$W4_RUN_S" ;;
	W5) run_sampled "W5_$2" "$HS_CSV" "${hs[@]}" drift "${W5_MIB:-$((kb * 3 / 2 / 1024))}" \
		"$W5_PERIOD_S" "$W5_RUN_S" ;;
	W6|W7) run_sampled "$1_$2" "$HS_CSV" "${hs[@]}" steady "${W4_MIB:-$((kb * 3 / 2 / 1024))}" \
		"${W4_HOT_MIB:-$((kb / 2 / 1024))}" "$W6_RUN_S"
		result "$1_$2" moved_pct_min "$(awk -v m="${R[$1_$2.moved]}" -v s="$W6_RUN_S" \
			-v p=$((kb / 4)) 'BEGIN { printf "%.2f", m * 60 / s * 100 / p }')" ;;
	esac
}

# w3_knobs save|set|restore: numa-hint-seed.sh's scan knobs and THP off
# for W3 (set), or the values saved before (restore)
declare -A W3_SAVED
w3_knobs()
{
	local k
	local -A want=([$NB/scan_delay_ms]=1000 [$NB/scan_period_min_ms]=1000
		[$NB/scan_period_max_ms]=60000 [$NB/scan_size_mb]=256
		[/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps]=65536)

	case $1 in
	save)
		for k in "${!want[@]}"; do W3_SAVED[$k]=$(cat "$k"); done
		W3_SAVED[thp]=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled) ;;
	set)
		for k in "${!want[@]}"; do w "${want[$k]}" "$k"; done
		w never /sys/kernel/mm/transparent_hugepage/enabled ;;
	restore)
		for k in "${!want[@]}"; do w "${W3_SAVED[$k]}" "$k"; done
		w "${W3_SAVED[thp]}" /sys/kernel/mm/transparent_hugepage/enabled ;;
	esac
}

# run_w3 POLICY REGIME: W3's REGIME (uniform, hotchunk) under POLICY, to
# RESULT lines W3u_POLICY_key or W3h_POLICY_key
run_w3()
{
	local p=$1 n="W3${2:0:1}_$1" free args i line k

	echo "bench: === W3 $2 $p ==="
	reset
	w false /sys/kernel/mm/numa/demotion_enabled
	free=$(awk '$3 == "MemFree:" { print int($4 / 1024) }' /sys/devices/system/node/node$FAST/meminfo)
	case $2 in
	uniform) args=(-u -i 6291456 -e "$W3_UNIFORM_EPISODES") ;;
	hotchunk) args=(-H 16 -w 4 -i 16777216 -e "$W3_HOTCHUNK_EPISODES") ;;
	*) die "no W3 regime $2" ;;
	esac
	numactl --cpunodebind=$FAST -- "$NH" run -t 1536 -f $((free - 64)) -c 8 -r 900 -q 5 -s 1 \
		"${args[@]}" w3 "$TMP/w3.csv" > "$TMP/w3.out" &
	w1_pid=$!
	for ((i = 0; i < 6000; i++)); do
		grep -qx ready "$TMP/w3.out" && break
		kill -0 $w1_pid 2>/dev/null || die "W3 $2 $p: the workload died"
		sleep 0.1
	done
	grep -qx ready "$TMP/w3.out" || die "W3 $2 $p: the workload did not come up"
	vmstat_snap
	for k in "${COUNTERS[@]}"; do V0[$k]=${VM[$k]:-0}; done
	w true /sys/kernel/mm/numa/demotion_enabled
	policy_on "$p"
	kill -USR1 $w1_pid
	wait $w1_pid || die "W3 $2 $p: the workload failed"
	w1_pid=
	finish "$n"
	while read -r line; do
		[ "${line%% *}" = RESULT ] || continue
		line=${line#RESULT w3_}
		result "$n" "${line%%=*}" "${line#*=}"
	done < "$TMP/w3.out"
}

# redis_bench ARGS...: redis-benchmark against W2's server (a unix
# socket: the lab guest has no network) on CPU1, 4
# clients, pipeline 16, 20,000-byte values; its CSV result line
redis_bench()
{
	numactl --physcpubind=1 redis-benchmark -s "$TMP/redis.sock" -c 4 -P 16 -d 20000 \
		--csv "$@" 2>/dev/null | tail -n 1
}

# run_w2 POLICY: W2 under POLICY, to RESULT lines
run_w2()
{
	local p=$1 n=W2_$1 cold i line t0 rps sum=0 late=0 nlate=0 p99 node

	echo "bench: === W2 $p ==="
	start "$p"
	cold=${W2_COLD_KEYS:-$(awk '$3 == "MemTotal:" { print int($4 / 20) }' \
		/sys/devices/system/node/node$FAST/meminfo)}
	numactl -b --cpunodebind=$FAST --membind=$FAST,$SLOW redis-server \
		--port 0 --unixsocket "$TMP/redis.sock" --save '' --appendonly no --dir "$TMP" \
		--enable-debug-command local --loglevel warning > "$TMP/redis.log" 2>&1 &
	redis_pid=$!
	for ((i = 0; i < 300; i++)); do
		redis-cli -s "$TMP/redis.sock" ping > /dev/null 2>&1 && break
		sleep 0.1
	done
	redis-cli -s "$TMP/redis.sock" DEBUG POPULATE "$cold" cold 20000 > /dev/null ||
		die "W2 $p: DEBUG POPULATE failed"
	redis_bench -t set -r "$W2_HOT_KEYS" -n $((W2_HOT_KEYS * 4)) > /dev/null
	result "$n" keys "$(redis-cli -s "$TMP/redis.sock" dbsize)"
	t0=$SECONDS
	for ((i = 0; i < W2_WINDOWS; i++)); do
		line=$(redis_bench -t get -r "$W2_HOT_KEYS" -n "$W2_REQS")
		IFS=, read -r _ rps _ _ _ _ p99 _ <<< "${line//\"/}"
		echo "bench: W2 $p: [$((SECONDS - t0)) s] GET ${rps:-?} ops/s, p99 ${p99:-?} ms (TCG)"
		echo "$p,$i,$((SECONDS - t0)),$rps,$p99" >> "$W2_CSV"
		sum=$(awk -v a=$sum -v b="${rps:-0}" 'BEGIN { print a + b }')
		if [ $((2 * i)) -ge "$W2_WINDOWS" ]; then
			late=$(awk -v a=$late -v b="${rps:-0}" 'BEGIN { print a + b }')
			nlate=$((nlate + 1))
		fi
		[ "$i" = 0 ] && result "$n" first_ops_per_s "$rps"
	done
	result "$n" ops_per_s_mean "$(awk -v a=$sum -v n="$W2_WINDOWS" 'BEGIN { printf "%.0f", a / n }')"
	result "$n" ops_per_s_late "$(awk -v a=$late -v n=$nlate 'BEGIN { printf "%.0f", a / n }')"
	result "$n" p99_ms_last "$p99"
	for node in $FAST $SLOW; do
		result "$n" "pages_node$node" "$(awk -v k="N$node=" '{ for (i = 1; i <= NF; i++)
			if (index($i, k) == 1) s += substr($i, length(k) + 1) } END { print s + 0 }' \
			/proc/$redis_pid/numa_maps)"
	done
	kill $redis_pid
	wait $redis_pid 2>/dev/null
	redis_pid=
	finish "$n"
}

# result POLICY KEY VALUE
result()
{
	echo "RESULT $1_$2=$3"
	R[$1.$2]=$3
}

[ -x "$BIN" ] || die "no $BIN (bench/run.sh builds it)"
[ -w /sys/kernel/debug/sched/numa_balancing/hot_threshold_ms ] ||
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo "policy,t_s,phase,share,oracle,fast_pages,slow_pages,other_pages,moved_pages" > "$CSV"
echo "policy,window,t_s,get_ops_per_s,p99_ms" > "$W2_CSV"
[ "${WORKLOADS/W[456]/}" = "$WORKLOADS" ] ||
	echo "policy,t_s,phase,share,oracle,fast_pages,slow_pages,other_pages,moved_pages" > "$HS_CSV"
for wl in $WORKLOADS; do
	case $wl in
	W1) for p in $POLICIES; do run_w1 "$p"; done ;;
	W2)
		command -v redis-server > /dev/null || die "no redis-server (scripts/install-deps.sh installs it)"
		for p in $POLICIES; do run_w2 "$p"; done
		;;
	W3)
		[ -x "$NH" ] || die "no $NH (bench/run.sh builds it)"
		w3_knobs save
		w3_knobs set
		for r in $W3_REGIMES; do
			for p in $POLICIES; do run_w3 "$p" "$r"; done
		done
		w3_knobs restore
		;;
	W4|W5|W6|W7)
		[ -x "$HS" ] || die "no $HS (bench/run.sh builds it)"
		for p in $POLICIES; do run_w45 "$wl" "$p"; done
		;;
	*) die "no workload $wl" ;;
	esac
done

# w1_table: W1's table
w1_table()
{
	local p r90 i mvor

	f="%-9s %6s %6s %6s %6s %6s %9s %9s %9s %9s %8s %11s %7s %7s\n"
	echo
	echo "bench: W1 DRAM share of accesses (late: second half of each phase); reach90: s to 90% of the oracle per phase; mv/or: pages migrated over the oracle's exchange per phase; times TCG (emulated), not hardware"
	# shellcheck disable=SC2059
	printf "bench: $f" policy mean late oracle late/or pingpg reach90 promoted demoted dmn_hot/cld fail mv/or kd_cpu sys_s
	for p in $POLICIES; do
		r90=${R[$p.reach90_s_0]:--}
		for ((i = 1; i < W1_PHASES; i++)); do r90+="/${R[$p.reach90_s_$i]:--}"; done
		mvor=
		for ((i = 0; i < W1_PHASES; i++)); do
			mvor+=${mvor:+/}$(awk -v a="${R[$p.moved_$i]:-0}" -v b="${R[$p.oracle_moves_$i]:-0}" \
				'BEGIN { if (b > 0) printf "%.1f", a / b; else printf "-" }')
		done
		# shellcheck disable=SC2059
		printf "bench: $f" "$p" "${R[$p.share_mean]:--}" "${R[$p.share_late_mean]:--}" \
			"${R[$p.oracle_mean]:--}" \
			"$(awk -v a="${R[$p.share_late_mean]:-0}" -v b="${R[$p.oracle_mean]:-1}" 'BEGIN { printf "%.3f", a / b }')" \
			"${R[$p.pingpong_pages]:--}" "$r90" "${R[$p.pgpromote_success]:--}" \
			"$((${R[$p.pgdemote_kswapd]:-0} + ${R[$p.pgdemote_direct]:-0}))" \
			"${R[$p.damon_migrate_hot]:--}/${R[$p.damon_migrate_cold]:--}" \
			"${R[$p.pgmigrate_fail]:--}" \
			"$mvor" \
			"${R[$p.kdamond_cpu_s]:--}" "${R[$p.sys_s]:--}"
	done
}

# w2_table: W2's table
w2_table()
{
	local p n

	f="%-9s %8s %8s %8s %8s %9s %9s %9s %9s %11s %7s\n"
	echo
	echo "bench: W2 redis GET of the hot keys: ops/s (first window, mean, second half), p99 of the last window; redis pages per node at the end; TCG (emulated), not hardware"
	# shellcheck disable=SC2059
	printf "bench: $f" policy first mean late p99_ms node0 node2 promoted demoted dmn_hot/cld kd_cpu
	for p in $POLICIES; do
		n=W2_$p
		# shellcheck disable=SC2059
		printf "bench: $f" "$p" "${R[$n.first_ops_per_s]:--}" "${R[$n.ops_per_s_mean]:--}" \
			"${R[$n.ops_per_s_late]:--}" "${R[$n.p99_ms_last]:--}" \
			"${R[$n.pages_node0]:--}" "${R[$n.pages_node2]:--}" "${R[$n.pgpromote_success]:--}" \
			"$((${R[$n.pgdemote_kswapd]:-0} + ${R[$n.pgdemote_direct]:-0}))" \
			"${R[$n.damon_migrate_hot]:--}/${R[$n.damon_migrate_cold]:--}" "${R[$n.kdamond_cpu_s]:--}"
	done
}

# w3_table REGIME
w3_table()
{
	local p n

	f="%-9s %6s %6s %8s %7s %7s %7s %9s %9s %5s %6s %6s\n"
	echo
	echo "bench: W3 $1: DRAM share of the episodes' accesses, hot pages on node0 at the end, pages promoted during their chunk's episode (kept / undone by its next one), never-hot pages promoted, pages moved by the kernel; times TCG (emulated), not hardware"
	# shellcheck disable=SC2059
	printf "bench: $f" policy dram% final% ep_prom kept undone wrong promoted demoted eps run_s kd_cpu
	for p in $POLICIES; do
		n="W3${1:0:1}_$p"
		# shellcheck disable=SC2059
		printf "bench: $f" "$p" "${R[$n.dram_share_pct]:--}" "${R[$n.hot_final_pct]:--}" \
			"${R[$n.ep_promoted_pages]:--}" "${R[$n.ep_promoted_kept]:--}" \
			"${R[$n.ep_promoted_undone]:--}" "${R[$n.wrong_promoted_pages]:--}" \
			"$((${R[$n.pgpromote_success]:-0} + ${R[$n.damon_migrate_hot]:-0}))" \
			"$((${R[$n.pgdemote_kswapd]:-0} + ${R[$n.pgdemote_direct]:-0} + ${R[$n.damon_migrate_cold]:-0}))" \
			"${R[$n.episodes]:--}" "${R[$n.run_s]:--}" "${R[$n.kdamond_cpu_s]:--}"
	done
}

# ratio A B: A / B to 3 decimals, "-" if B is missing or 0
ratio()
{
	awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "-" }'
}

# w45_table WORKLOAD: W4's or W5's table
w45_table()
{
	local p n

	f="%-9s %6s %6s %6s %6s %7s %9s %9s %9s %9s %11s %7s\n"
	echo
	echo "bench: $1 DRAM share of accesses over the oracle's (late: each phase's second half; W4: before/after the move), s to 90% of the oracle after the move, pages migrated / the oracle's, pages moved back; times TCG (emulated), not hardware"
	# shellcheck disable=SC2059
	printf "bench: $f" policy late/or ph0/or ph1/or reach90 mv/or moved oracle_mv moved_bk promoted dmn_hot/cld kd_cpu
	for p in $POLICIES; do
		n=$1_$p
		# shellcheck disable=SC2059
		printf "bench: $f" "$p" "${R[$n.late_over_oracle]:--}" \
			"$(ratio "${R[$n.share_0]:-}" "${R[$n.oracle_0]:-}")" \
			"$(ratio "${R[$n.share_1]:-}" "${R[$n.oracle_1]:-}")" \
			"${R[$n.reach90_s_1]:--}" "$(ratio "${R[$n.moved]:-}" "${R[$n.oracle_moves]:-}")" \
			"${R[$n.moved]:--}" "${R[$n.oracle_moves]:--}" "${R[$n.moved_back_pages]:--}" \
			"${R[$n.pgpromote_success]:--}" \
			"${R[$n.damon_migrate_hot]:--}/${R[$n.damon_migrate_cold]:--}" "${R[$n.kdamond_cpu_s]:--}"
	done
}

# w6_table W6|W7: that workload's table, each policy's share against P0's
# if P0 ran
w6_table()
{
	local p n

	f="%-9s %6s %6s %8s %9s %9s %9s %11s %7s\n"
	echo
	echo "bench: $1 (nothing changes$([ "$1" = W7 ] && echo ", policy on after the fill")) DRAM share of accesses (second half) over the oracle's and over P0's, pages migrated (per minute, % of node0), pages moved back; times TCG (emulated), not hardware"
	# shellcheck disable=SC2059
	printf "bench: $f" policy sh/or sh/P0 moved %n0/min moved_bk promoted dmn_hot/cld kd_cpu
	for p in $POLICIES; do
		n=$1_$p
		# shellcheck disable=SC2059
		printf "bench: $f" "$p" "$(ratio "${R[$n.share_0]:-}" "${R[$n.oracle_0]:-}")" \
			"$(ratio "${R[$n.share_0]:-}" "${R[$1_P0.share_0]:-}")" \
			"${R[$n.moved]:--}" "${R[$n.moved_pct_min]:--}" "${R[$n.moved_back_pages]:--}" \
			"${R[$n.pgpromote_success]:--}" \
			"${R[$n.damon_migrate_hot]:--}/${R[$n.damon_migrate_cold]:--}" "${R[$n.kdamond_cpu_s]:--}"
	done
}

[ "${WORKLOADS/W1/}" = "$WORKLOADS" ] || w1_table
[ "${WORKLOADS/W2/}" = "$WORKLOADS" ] || w2_table
if [ "${WORKLOADS/W3/}" != "$WORKLOADS" ]; then
	for r in $W3_REGIMES; do w3_table "$r"; done
fi
[ "${WORKLOADS/W4/}" = "$WORKLOADS" ] || w45_table W4
[ "${WORKLOADS/W5/}" = "$WORKLOADS" ] || w45_table W5
[ "${WORKLOADS/W6/}" = "$WORKLOADS" ] || w6_table W6
[ "${WORKLOADS/W7/}" = "$WORKLOADS" ] || w6_table W7
