#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernels: patched
# timeout: 1500
#
# DAMON-tiered memory: the experiment of the DAMOS migrate_hot/migrate_cold
# RFC (seeds/003: redis + YCSB on 512 GB DRAM + 96 GB CXL), scaled to the
# lab (runs in the lab guest, patched kernel only: it reads the series'
# damon_migrate_* counters).
#
# Each mode, in one boot:
#   1. a cold process (damon-tiered cold, CPU and memory bound to node0)
#      writes every page of node0's free memory but HOT_FAST_MIB once and
#      sleeps: node0 is full of cold memory, as in the seed;
#   2. the workload (damon-tiered hot, on CPU0, memory policy MPOL_BIND to
#      nodes 0 and 2) faults in a HOT_MIB hot set and writes every page of
#      it over and over for RUN_S seconds.  Its pages come from node0 while
#      node0 is above its low watermark and then spill to node2 by
#      themselves (node1 is left out: the seed's machine had node1
#      disabled).  Once a second it asks move_pages(2) where its pages are.
# Modes:
#   none   no tiering: DAMON off (NUMA balancing and demotion are always off)
#   early  DAMON tiered, on before step 1 (the seed's order)
#   lazy   DAMON tiered, on LAZY_S seconds after the workload started
#   goals  DAMON tiered by mainline's self-tuning recipe (6.16's sample),
#          on before step 1: nothing hand-picked for this machine, see
#          damon_goals_on()
#   goals_sized
#          the same recipe, its two goals moved by the free memory node0
#          keeps for itself (watermarks and lowmem reserves, from
#          /proc/zoneinfo): 0.5% free and 0.3% left unused beyond it
#   goals_node
#          goals_sized, with migrate_hot's quota tuned by mainline's
#          "temporal" goal tuner (the whole quota while node0 is under its
#          goal, none once it is there) instead of the feedback loop
#   goals_temporal
#          goals_node, with migrate_cold's quota tuned by "temporal" too
#   goals_band
#          goals_temporal, with the quota's charge window (and the apply
#          interval) shortened, at the same 200 MiB/s, until one window
#          moves no more than the gap between the two goals: see
#          damon_goals_on()
#   goals_step
#          goals_temporal under "temporal_capped" (the damon-tiering
#          series, CONFIG_DAMOS_TUNER_TEMPORAL_CAPPED) instead of
#          "temporal", applied as often as goals_band, its 1 s window
#          kept: see damon_goals_on()
#   goals_step_floor20
#          goals_step with the intervals goal's min_sample_us at 20 ms, the
#          hand-tuned modes' sampling interval, instead of the recipe's
#          5 ms: not a recipe, a measurement of what the floor costs
# DAMON tiered is the seed's (HMSDK's) layout: one kdamond per node, paddr,
#   kdamond 0 monitors node0 and runs migrate_cold to node2 on regions with
#     no access for COLD_AGE_MS,
#   kdamond 1 monitors node2 and runs migrate_hot to node0 on regions with
#     any access;
# each scheme also checks every page with a "young" filter (migrate_cold
# skips young pages, migrate_hot skips old ones), without which pages that
# one scheme moves land in space whose region stats describe the pages that
# were there, and are sent straight back.
#
# DAMON's intervals are 4x the usual 5 ms / 100 ms (SAMPLE_US, AGGR_US):
# under TCG one pass of the workload over its hot set takes ~10 ms (25-40
# ms while the kdamonds are busy), and a hot page is seen accessed only in
# a sample interval in which it was touched.  With 5 ms samples hot regions
# read 1-2 accesses of 20, so node0's largest nr_accesses stays under 10,
# the merge threshold (max / 10) is 0, and any 0 <-> 1 flicker resets a
# region's age.  migrate_cold's first pass (young filter) moves only the
# pages DAMON's own sampling had made old, migrate_hot refills those
# scattered holes with hot pages, every node0 region then flickers, none
# reaches COLD_AGE_MS, and demotion stops with node0 full: measured, the
# hot set stalled at 50-87% on node0 with millions of damon_migrate_fail.
# At 20 ms / 400 ms a hot page is seen in most samples, as with 5 ms
# samples on hardware, where the same pass takes ~5-7 ms.
#
# Output: RESULT lines (keys MODE_key, see bench/README), the placement of
# the hot set over time in /mnt/lab/damon-tiered.csv (bench/run.sh plots it
# with bench/damon-tiered.gp), and a summary next to the seed's numbers.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$REPO/build/bench/bin/damon-tiered
OUTDIR=${BENCH_OUT:-/mnt/lab}
CSV=$OUTDIR/damon-tiered.csv
MODES=${MODES:-none early lazy}
HOT_MIB=${HOT_MIB:-256}
HOT_FAST_MIB=${HOT_FAST_MIB:-72}
RUN_NONE_S=${RUN_NONE_S:-45}
RUN_S=${RUN_S:-240}
LAZY_S=${LAZY_S:-20}
FAST=0 SLOW=2
SAMPLE_US=${SAMPLE_US:-20000} AGGR_US=${AGGR_US:-400000} UPDATE_US=${UPDATE_US:-2000000}
WMARK_BOOST_FACTOR=${WMARK_BOOST_FACTOR:-}
COLD_AGE_MS=${COLD_AGE_MS:-4000} COLD_APPLY_US=${COLD_APPLY_US:-1000000}
# goals modes: mainline's recipe, default intervals for the tuning to start from
GOAL_USED_BP=${GOAL_USED_BP:-9970} GOAL_FREE_BP=${GOAL_FREE_BP:-50} GOAL_QUOTA_B=$((200 << 20))
goal_used=$GOAL_USED_BP goal_free=$GOAL_FREE_BP
GOALS_CSV=$OUTDIR/damon-goals.csv
TRACE=/sys/kernel/tracing TRACE_S=${TRACE_S:-2}
AGGR_EVENT=$TRACE/events/damon/damon_aggregated
probe_pid=
sampler_pid=
ADMIN=/sys/kernel/mm/damon/admin
ULONG_MAX=18446744073709551615
UINT_MAX=4294967295
COUNTERS=(damon_migrate_hot damon_migrate_cold damon_migrate_fail
	damon_migrate_fail_node0 damon_migrate_fail_node2
	pgdemote_kswapd pgdemote_direct oom_kill)
declare -A V0 R
declare -a kdamond_cs_of
TMP=$(mktemp -d)
# shellcheck source=bench/damon-recipes.sh
. "$REPO/bench/damon-recipes.sh"
cold_pid=
hot_pid=

die()
{
	echo "bench: damon-tiered: $*" >&2
	exit 1
}

vmstat_snap()
{
	local k v n vmstat

	echo 1 > /proc/sys/vm/stat_refresh
	read -r -d '' vmstat < /proc/vmstat
	while read -r k v; do
		VM[$k]=$v
	done <<< "$vmstat"
	# failed migrations are counted on the node the pages were on:
	# node2's are migrate_hot's, node0's migrate_cold's
	for n in $FAST $SLOW; do
		read -r -d '' vmstat < /sys/devices/system/node/node$n/vmstat
		while read -r k v; do
			[ "$k" = damon_migrate_fail ] && VM[${k}_node$n]=$v
		done <<< "$vmstat"
	done
}

# uptime_cs: /proc/uptime in centiseconds, in $REPLY.
uptime_cs()
{
	local up rest

	read -r up rest < /proc/uptime
	REPLY=$((10#${up/./}))
}

# sample_goals: every 2 s until killed, a line of GOALS_CSV: node0's use,
# node0's use and free memory as the node_mem_* goals measure them (the
# free pages of node0's per-cpu lists counted free: the series drains those
# lists before each measurement; the kernel does not show what it measured),
# the effective quotas and the tuned intervals.
sample_goals()
{
	local t0 used total free pcp k sz goal aggr line
	local page_kb=$(($(getconf PAGESIZE) / 1024))

	uptime_cs
	t0=$REPLY
	while :; do
		for k in 0 1; do
			echo update_schemes_effective_quotas > $ADMIN/kdamonds/$k/state
			echo update_tuned_intervals > $ADMIN/kdamonds/$k/state
		done 2>/dev/null
		uptime_cs
		line="$mode,$(cs2s $((REPLY - t0)))"
		read -r total free <<< "$(awk '$3 == "MemTotal:" { t = $4 }
			$3 == "MemFree:" { f = $4 } END { print t, f }' \
			/sys/devices/system/node/node$FAST/meminfo)"
		# free pages held in node0's per-cpu lists: MemFree leaves them out
		pcp=$(awk -v n=$FAST '$1 == "Node" { on = ($2 == n ",") }
			on && $1 == "count:" { c += $2 } END { print c + 0 }' /proc/zoneinfo)
		used=$(((total - free) * 10000 / total))
		line+=",$used"
		for k in 1 0; do
			if [ $k = 1 ]; then
				goal=$(((total - free - pcp * page_kb) * 10000 / total))
			else
				goal=$(((free + pcp * page_kb) * 10000 / total))
			fi
			read -r sz < $ADMIN/kdamonds/$k/contexts/0/schemes/0/quotas/effective_bytes
			sz=$((sz * 1000 / goal_window_ms))	# per second
			read -r sample < $ADMIN/kdamonds/$k/contexts/0/monitoring_attrs/intervals/sample_us
			read -r aggr < $ADMIN/kdamonds/$k/contexts/0/monitoring_attrs/intervals/aggr_us
			line+=",$goal,$sz,$sample,$aggr"
		done
		line+=",$pcp"
		line+=",$(awk '$1 == "damon_migrate_hot" { h = $2 }
			$1 == "damon_migrate_cold" { c = $2 } END { print h "," c }' /proc/vmstat)"
		echo "$line" >> "$GOALS_CSV"
		sleep 2
	done
}

# damon_goals_on: mainline's self-tuning tiering recipe (the sample of the
# node_mem_{used,free}_bp goals, 6.16), one kdamond per node:
#   kdamond 0 monitors node0: migrate_cold to node2 on regions with no
#     access, quota tuned toward node0 0.5% free, reject-young filter;
#   kdamond 1 monitors node2: migrate_hot to node0 on regions with at least
#     5% of the possible accesses (1 of the 20 samples of an aggregation),
#     quota tuned toward node0 99.7% used, allow-young filter.
# No age, no intervals for this machine: those the tuning finds.
# goals_sized and goals_node move both goals by node0's reserve (see
# node_reserve_bp); goals_node also tunes migrate_hot with "temporal".
# goals_band keeps the recipe's rate but shortens its 1 s charge window
# until one window moves at most the gap between the goals (0.2% of node0,
# the used memory between 99.5% and 99.7%): under "temporal" a scheme
# reads its goal only when a window starts, so each window can carry
# node0 past its goal by what it moves.  With the recipe's 200 MiB on
# hundreds of GiB of DRAM a window is already below that gap, and the rule
# changes nothing there.  goals_step keeps the recipe's 1 s window and
# applies the schemes as often as goals_band does, under
# "temporal_capped", which measures node memory goals again before each
# action and stops at them, so an application moves at most about the
# gap, and the short apply interval keeps the recipe's rate.
damon_goals_on()
{
	local i wm reserve hot_tuner=consist cold_tuner=consist gap_b gap_ms managed

	# node0's watermarks, summed over its zones, in bp of its memory: a
	# migration allocates without reclaim, so it fails below "low"
	wm=$(awk -v n=$FAST '$1 == "Node" { on = ($2 == n "," ) }
		on && $1 == "min" { mn += $2 } on && $1 == "low" { lo += $2 }
		on && $1 == "high" { hi += $2 } on && $1 == "managed" { m += $2 }
		END { printf "min %d low %d high %d pages: %.2f%% %.2f%% %.2f%% of %d", \
			mn, lo, hi, mn * 100 / m, lo * 100 / m, hi * 100 / m, m }' /proc/zoneinfo)
	reserve=$(node_reserve_bp $FAST)
	goal_used=$GOAL_USED_BP goal_free=$GOAL_FREE_BP
	goal_window_ms=1000 goal_window_b=$GOAL_QUOTA_B goal_apply_us=1000000
	goal_min_sample_us=5000
	# the time the recipe's rate takes to move the gap between the goals
	managed=$(awk -v n=$FAST '$1 == "Node" { on = ($2 == n ",") }
		on && $1 == "managed" { m += $2 } END { print m }' /proc/zoneinfo)
	gap_b=$(((GOAL_FREE_BP + GOAL_USED_BP - 10000) * managed / 10000 * $(getconf PAGESIZE)))
	gap_ms=$((gap_b * 1000 / GOAL_QUOTA_B))
	[ $gap_ms -ge 1 ] || gap_ms=1
	[ $gap_ms -le 1000 ] || gap_ms=1000
	case $mode in
	goals_band)
		goal_window_ms=$gap_ms
		goal_window_b=$((GOAL_QUOTA_B / 1000 * goal_window_ms))
		goal_apply_us=$((goal_window_ms * 1000))
		;&
	goals_step_floor20)
		goal_min_sample_us=20000
		;&
	goals_step)
		[ $mode = goals_band ] || goal_apply_us=$((gap_ms * 1000))
		;&
	goals_temporal) cold_tuner=temporal ;&
	goals_node) hot_tuner=temporal ;&
	goals_sized) goal_used=$((GOAL_USED_BP - reserve)) goal_free=$((GOAL_FREE_BP + reserve)) ;;
	esac
	case $mode in
	goals_step*) hot_tuner=temporal_capped cold_tuner=temporal_capped ;;
	esac
	echo "bench: $mode: node$FAST watermarks $wm managed pages;" \
		"reserve (high watermark + lowmem reserve, per zone) $reserve bp;" \
		"goals: used $goal_used bp, free $goal_free bp;" \
		"tuners: migrate_hot $hot_tuner, migrate_cold $cold_tuner;" \
		"quota $goal_window_b bytes per $goal_window_ms ms, applied every $goal_apply_us us;" \
		"sampling $goal_min_sample_us us or more"

	w 2 $ADMIN/kdamonds/nr_kdamonds
	kdamond_goals 0 $FAST migrate_cold $SLOW 0 node_mem_free_bp $goal_free N $cold_tuner
	kdamond_goals 1 $SLOW migrate_hot $FAST 1 node_mem_used_bp $goal_used Y $hot_tuner
	for i in 0 1; do
		w on $ADMIN/kdamonds/$i/state
	done
	uptime_cs
	damon_start=$REPLY
	echo "bench: $mode: DAMON on (self-tuning): kdamond pids" \
		"$(cat $ADMIN/kdamonds/0/pid) $(cat $ADMIN/kdamonds/1/pid)"
	sample_goals &
	sampler_pid=$!
}

# access_probe: 20 s before the workload ends, what each kdamond saw over
# TRACE_S seconds of aggregations (longer, up to 15 s, to take in two of
# the longest aggregation interval), from the damon_aggregated tracepoint:
# the accesses it saw as a share of the possible ones (the measure the
# intervals goal's access_bp tunes toward, in bp) and its regions per
# aggregation, as "IDX BP REGIONS" lines in $TMP/access.$mode
access_probe()
{
	local i pid s a d secs=$TRACE_S

	sleep $((RUN_S - 20))
	for i in 0 1; do
		echo update_tuned_intervals > $ADMIN/kdamonds/$i/state 2>/dev/null
		read -r pid < $ADMIN/kdamonds/$i/pid
		read -r s < $ADMIN/kdamonds/$i/contexts/0/monitoring_attrs/intervals/sample_us
		read -r a < $ADMIN/kdamonds/$i/contexts/0/monitoring_attrs/intervals/aggr_us
		echo "$pid $i $((a / s))"
		d=$(((2 * a + 999999) / 1000000))	# two aggregations, in s
		[ $d -le $secs ] || secs=$d
	done > "$TMP/kd.$mode"
	[ $secs -le 15 ] || secs=15
	echo > $TRACE/trace
	echo 1 > $AGGR_EVENT/enable
	sleep $secs
	echo 0 > $AGGR_EVENT/enable
	awk 'NR == FNR { idx[$1] = $2; samples[$1] = $3; next }
		!/damon_aggregated:/ { next }
		{
			pid = $1; sub(/.*-/, "", pid)
			if (!(pid in idx)) next
			for (f = 1; f < NF; f++) if ($f ~ /^[0-9]+-[0-9]+:$/) break
			split($f, r, /[-:]/)
			seen[pid] += (r[2] - r[1]) * $(f + 1)
			all[pid] += (r[2] - r[1]) * samples[pid]
			for (g = 1; g < f; g++) if ($g ~ /^nr_regions=/) {
				sub(/^nr_regions=/, "", $g); nreg[pid] = $g
			}
		}
		END { for (p in all) printf "%d %d %d\n", idx[p], seen[p] * 10000 / all[p], nreg[p] }' \
		"$TMP/kd.$mode" $TRACE/trace > "$TMP/access.$mode"
}

# goals_summary: node0's use against the goal over the last GOALS_TAIL_S
# seconds of a goals mode, from GOALS_CSV
goals_summary()
{
	local r

	r=$(awk -F, -v goal=$goal_used -v tail=${GOALS_TAIL_S:-120} -v m=$mode '
		$1 == m { t[n] = $2; u[n] = $3; n++ }
		END {
			if (!n) exit
			last = t[n - 1]
			for (i = 0; i < n; i++) {
				if (t[i] < last - tail) continue
				d = u[i] - goal; if (d < 0) d = -d
				if (d > maxd) maxd = d
				sum += u[i]; k++
				if (d <= 50) in_band++
			}
			printf "%.2f %.2f %d", sum / k / 100, maxd / 100, in_band * 100 / k
		}' "$GOALS_CSV")
	[ -n "$r" ] || return
	set -- $r
	result node0_used_mean_pct "$1"
	result node0_used_maxdev_pp "$2"
	result node0_used_within_0.5pp_pct "$3"
	result goal_used_bp $goal_used
	result goal_free_bp $goal_free
}

damon_on()
{
	local i

	w 2 $ADMIN/kdamonds/nr_kdamonds
	kdamond 0 $FAST migrate_cold $SLOW 0 0 $((COLD_AGE_MS * 1000 / AGGR_US)) \
		$COLD_APPLY_US Y
	kdamond 1 $SLOW migrate_hot $FAST 1 $UINT_MAX 0 0 N
	for i in 0 1; do
		w on $ADMIN/kdamonds/$i/state
	done
	uptime_cs
	damon_start=$REPLY
	echo "bench: $mode: DAMON on: kdamond pids $(cat $ADMIN/kdamonds/0/pid)" \
		"$(cat $ADMIN/kdamonds/1/pid)"
}

# damon_off: stop both kdamonds; their CPU time (utime + stime) and the
# time DAMON ran, in centiseconds, in $kdamond_cs and $damon_cs; each
# kdamond's CPU time in kdamond_cs_of[IDX].
damon_off()
{
	local i pid stat hz

	hz=$(getconf CLK_TCK)
	kdamond_cs=0
	for i in 0 1; do
		read -r pid < $ADMIN/kdamonds/$i/pid
		[ "$pid" -gt 0 ] || die "kdamond $i is not running"
		read -r stat < /proc/$pid/stat
		read -ra stat <<< "${stat##*) }"	# fields 3..: comm may hold spaces
		kdamond_cs_of[$i]=$(((stat[11] + stat[12]) * 100 / hz))
		kdamond_cs=$((kdamond_cs + kdamond_cs_of[i]))
	done
	uptime_cs
	damon_cs=$((REPLY - damon_start))
	stop_sample_goals
	for i in 0 1; do
		w off $ADMIN/kdamonds/$i/state
	done
}

# stop_sample_goals: stop sample_goals, if it runs
stop_sample_goals()
{
	[ -n "$sampler_pid" ] || return
	kill "$sampler_pid" 2>/dev/null
	wait "$sampler_pid" 2>/dev/null
	sampler_pid=
}

node0_free_mib()
{
	awk '$3 == "MemFree:" { print int($4 / 1024) }' \
		/sys/devices/system/node/node$FAST/meminfo
}

# cs2s CS: centiseconds as seconds with two decimals
cs2s()
{
	printf '%d.%02d' $(($1 / 100)) $(($1 % 100))
}

cleanup()
{
	local i

	[ -n "$hot_pid" ] && kill "$hot_pid" 2>/dev/null
	[ -n "$cold_pid" ] && kill "$cold_pid" 2>/dev/null
	[ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
	[ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null
	for i in 0 1; do
		[ -e $ADMIN/kdamonds/$i/state ] &&
			echo off > $ADMIN/kdamonds/$i/state 2>/dev/null
	done
	wait
	rm -rf "$TMP"
}
trap cleanup EXIT

# run MODE: one mode, from an emptied node0 to RESULT lines
run()
{
	local run_s=$RUN_S damon=0 cold_mib cold_out k line i bp nreg
	local -a kd_node=($FAST $SLOW)	# the node each kdamond monitors
	declare -A VM

	mode=$1
	[ "$mode" = none ] && run_s=$RUN_NONE_S
	echo "bench: === $mode ==="
	sync
	echo 3 > /proc/sys/vm/drop_caches
	vmstat_snap
	for k in "${COUNTERS[@]}"; do V0[$k]=${VM[$k]:-0}; done

	if [ "$mode" = early ]; then
		damon_on
		damon=1
	elif [ "${mode#goals}" != "$mode" ]; then
		damon_goals_on
		damon=1
	fi
	cold_mib=$(($(node0_free_mib) - HOT_FAST_MIB))
	[ $cold_mib -gt 0 ] || die "node0 has less than $HOT_FAST_MIB MiB free"
	echo "bench: $mode: cold set: $cold_mib MiB on node$FAST" \
		"(node$FAST free: $((cold_mib + HOT_FAST_MIB)) MiB)"
	cold_out="$TMP/cold.$mode"
	: > "$cold_out"
	numactl --cpunodebind=$FAST --membind=$FAST "$BIN" cold $cold_mib > "$cold_out" &
	cold_pid=$!
	line=
	for ((i = 0; i < 3000; i++)); do
		read -r line < "$cold_out"
		[ "$line" = ready ] && break
		kill -0 $cold_pid 2>/dev/null || die "$mode: the cold set died"
		sleep 0.1
	done
	[ "$line" = ready ] || die "$mode: the cold set did not come up"
	echo "bench: $mode: cold set written; node$FAST free: $(node0_free_mib) MiB"
	echo "RESULT ${mode}_cold_mib=$cold_mib"

	numactl --cpunodebind=$FAST --membind=$FAST,$SLOW \
		"$BIN" hot "$HOT_MIB" "$run_s" "$CSV" "$mode" $damon \
		> >(tee "$TMP/hot.$mode") &
	hot_pid=$!
	if [ "$mode" != none ] && [ -e $AGGR_EVENT/enable ]; then
		access_probe &
		probe_pid=$!
	fi
	if [ "$mode" = lazy ]; then
		sleep "$LAZY_S"
		damon_on
		kill -USR1 $hot_pid
	fi
	wait $hot_pid || die "$mode: the workload failed"
	hot_pid=
	# node0's use once the workload has freed its memory is not the goals'
	stop_sample_goals
	if [ -n "$probe_pid" ]; then
		wait $probe_pid
		probe_pid=
		while read -r i bp nreg; do
			result "kdamond_node${kd_node[i]}_access_bp" "$bp"
			result "kdamond_node${kd_node[i]}_regions" "$nreg"
		done < "$TMP/access.$mode"
	fi
	for ((i = 0; i < 50; i++)); do	# tee's last lines
		grep -q "^RESULT ${mode}_demoted_pages=" "$TMP/hot.$mode" && break
		sleep 0.1
	done
	keep < "$TMP/hot.$mode"
	if [ "$mode" != none ]; then
		damon_off
		result kdamond_cpu_s "$(cs2s $kdamond_cs)"
		result kdamond_node0_cpu_s "$(cs2s ${kdamond_cs_of[0]})"
		result kdamond_node2_cpu_s "$(cs2s ${kdamond_cs_of[1]})"
		result damon_s "$(cs2s $damon_cs)"
		result kdamond_cpu_pct $((kdamond_cs * 100 / damon_cs))
		[ "${mode#goals}" != "$mode" ] && goals_summary
	else
		result kdamond_cpu_s 0
	fi
	vmstat_snap
	for k in "${COUNTERS[@]}"; do
		result "$k" $((${VM[$k]:-0} - V0[$k]))
	done
	if kill $cold_pid 2>/dev/null; then
		wait $cold_pid
	else
		wait $cold_pid
		echo "bench: $mode: the cold set died before the end (exit $?)"
	fi
	cold_pid=
	while read -r line; do
		[ "$line" = ready ] || echo "$line"
	done < "$cold_out"
}

# result KEY VALUE: print "RESULT MODE_KEY=VALUE" and keep it for the summary
result()
{
	echo "RESULT ${mode}_$1=$2"
	R[$mode.$1]=$2
}

# keep: keep the RESULT lines of stdin for the summary
keep()
{
	local line kv

	while read -r line; do
		[ "${line%% *}" = RESULT ] || continue
		kv=${line#RESULT "$mode"_}
		R[$mode.${kv%%=*}]=${kv#*=}
	done
}

# summary: one row per mode
summary()
{
	local m g f="%-11s %7s %7s %8s %8s %8s %7s %6s %9s %9s %6s\n"

	echo
	echo "bench: hot set ($HOT_MIB MiB) on node$FAST; pages migrated; times TCG (emulated), not hardware"
	printf "bench: $f" mode "start%" "final%" "slow_MiB" steady_s "damon_on" "+steady" \
		"fail" "mig_hot" "mig_cold" "pingpg"
	for m in $MODES; do
		printf "bench: $f" $m ${R[$m.initial_pct]:--} ${R[$m.final_pct]:--} \
			${R[$m.final_slow_mib]:--} ${R[$m.steady_s]:--} \
			${R[$m.damon_on_s]:--} ${R[$m.steady_after_damon_s]:--} \
			${R[$m.damon_migrate_fail]:--} ${R[$m.damon_migrate_hot]:--} \
			${R[$m.damon_migrate_cold]:--} ${R[$m.pingpong_pages]:--}
	done
	for m in $MODES; do
		[ -n "${R[$m.node0_used_mean_pct]:-}" ] || continue
		g=${R[$m.goal_used_bp]}
		echo "bench: $m: node0 used ${R[$m.node0_used_mean_pct]}% on average" \
			"(goal $((g / 100)).$(printf %02d $((g % 100)))%)," \
			"at most ${R[$m.node0_used_maxdev_pp]} pp off," \
			"${R[$m.node0_used_within_0.5pp_pct]}% of samples within 0.5 pp," \
			"over the last ${GOALS_TAIL_S:-120} s"
	done
	for m in $MODES; do
		[ "$m" = none ] && continue
		echo "bench: $m: kdamond CPU ${R[$m.kdamond_cpu_s]:--} s over ${R[$m.damon_s]:--} s" \
			"of DAMON (${R[$m.kdamond_cpu_pct]:--}% of a CPU; TCG);" \
			"hot pages seen moving twice or more ${R[$m.pingpong_pages]:--}," \
			"node0->node2->node0 ${R[$m.roundtrip_pages]:--}"
	done
}

[ -x "$BIN" ] || die "no $BIN (bench/run.sh builds it)"
[ -d "$OUTDIR" ] && [ -w "$OUTDIR" ] || die "$OUTDIR is not a writable directory"
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	echo "bench: $(basename "$t"): nodes $(cat "$t/nodelist")"
done
[ -e /proc/sys/vm/stat_refresh ] && grep -q '^damon_migrate_hot ' /proc/vmstat ||
	die "no damon_migrate_* counters: not the patched kernel"
# DAMON alone moves pages: no NUMA-balancing promotion, no reclaim demotion
echo 0 > /proc/sys/kernel/numa_balancing
echo 0 > /sys/kernel/mm/numa/demotion_enabled
echo never > /sys/kernel/mm/transparent_hugepage/enabled
# WMARK_BOOST_FACTOR: vm.watermark_boost_factor for the boot (default: the
# kernel's); 0 keeps kswapd from reclaiming for fragmentation events on a
# node0 that the goals modes hold near its watermarks (bench/README)
[ -n "$WMARK_BOOST_FACTOR" ] && w "$WMARK_BOOST_FACTOR" /proc/sys/vm/watermark_boost_factor
# the trace buffer the access probe fills, allocated now rather than during
# a mode, where it would count as node memory in use
[ -e $AGGR_EVENT/enable ] && echo 4096 > $TRACE/buffer_size_kb
echo "mode,t_s,damon,node0,node1,node2,other,node0_pct" > "$CSV"
echo "mode,t_s,node0_used_bp,hot_goal_used_bp,hot_esz_per_s,hot_sample_us,hot_aggr_us,cold_goal_free_bp,cold_esz_per_s,cold_sample_us,cold_aggr_us,node0_pcp_pages,damon_migrate_hot,damon_migrate_cold" > "$GOALS_CSV"
echo "bench: hot set $HOT_MIB MiB; node$FAST left with $HOT_FAST_MIB MiB free;" \
	"runs ${RUN_NONE_S}s (none), ${RUN_S}s (early, lazy); lazy: DAMON on at ${LAZY_S}s"
echo "bench: DAMON: sample ${SAMPLE_US}us aggr ${AGGR_US}us update ${UPDATE_US}us;" \
	"cold: no access for ${COLD_AGE_MS}ms; hot: any access;" \
	"vm.watermark_boost_factor $(cat /proc/sys/vm/watermark_boost_factor)"

for m in $MODES; do
	case $m in
	none | early | lazy | goals | goals_sized | goals_node | goals_temporal | \
	goals_band | goals_step | goals_step_floor20) run $m ;;
	*) die "unknown mode $m" ;;
	esac
done
summary
echo "bench: anchor (seeds/003, redis + YCSB zipfian, 52.6 GB of it):" \
	"on CXL 38.1 GB (72%) by default, 0.7 GB (1.3%) with DAMON tiered"
