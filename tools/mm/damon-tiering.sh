#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-tuned DAMON memory tiering between a fast node and a slow one.
#
#   damon-tiering.sh start FAST_NID SLOW_NID
#   damon-tiering.sh stop
#   damon-tiering.sh show
#
# start: two kdamonds through /sys/kernel/mm/damon/admin (there must be no
# running kdamond; stopped ones are removed).  kdamond 0 monitors FAST_NID
# and migrate_cold moves its regions, the least accessed first, pages not
# young, to SLOW_NID; kdamond 1 monitors SLOW_NID and migrate_hot moves its
# regions with accesses, the most accessed first, young pages only, to
# FAST_NID.  Both schemes act within
# 200 MiB per second and are tuned by the "temporal_capped" goal tuner
# toward goals on FAST_NID's memory: migrate_hot while FAST_NID is used below
# 99.7% less R, migrate_cold while less than 0.5% plus R of it is free.
# R is the memory FAST_NID keeps free from migrations, which allocate
# without reclaim: per zone its high watermark plus its largest lowmem
# reserve, in basis points of its managed pages (/proc/zoneinfo).  Goals
# that ignore R would sit inside it on a small node (0.5% free is below
# the reserve of a 1 GiB node), and migrate_cold would never run.
# The schemes' apply interval is the time 200 MiB/s takes to move the
# 0.2% of the node between the two goals (at least 1 ms, at most 1 s), so
# that an application moves about what is left to a goal.  DAMON applies a
# scheme at most once per sampling interval: a kdamond whose sampling has
# tuned itself longer applies at every sample, each time moving at most
# what is left to its goal.
# Monitoring intervals tune themselves toward 4% of the possible accesses
# in 3 aggregations, sampling every 5 ms to 10 s.
#
# Needs mainline's DAMON sysfs files (the damon-autotune series on 6.12:
# quotas/goals/N/nid, quotas/goal_tuner, intervals_goal, filters/N/allow)
# and the goal tuner "temporal_capped", which mainline lacks
# (CONFIG_DAMOS_TUNER_TEMPORAL_CAPPED): under mainline's "temporal" each
# charge window would carry the node past its goals by up to 200 MiB.
# Reclaim demotion (/sys/kernel/mm/numa/demotion_enabled) may stay on.
#
# stop: turn every kdamond off and remove them.  show: per kdamond its
# node, goal, effective quota, tuned intervals and what it moved.
# Sourced rather than run, it only defines its functions.
KDS=/sys/kernel/mm/damon/admin/kdamonds
QUOTA_B=$((200 << 20))
USED_BP=9970 FREE_BP=50

# die and w: the sourcing script's own, if it has them
declare -F die > /dev/null || die()
{
	echo "damon-tiering: $*" >&2
	exit 1
}

declare -F w > /dev/null || w()
{
	echo "$1" > "$2" 2>/dev/null || die "writing '$1' to $2 failed"
}

# node_ranges NID: "start end" per run of contiguous memory blocks of NID
node_ranges()
{
	local bs b start=-1 prev=-2

	bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
	for b in $(find /sys/devices/system/node/node"$1"/ -maxdepth 1 -name 'memory[0-9]*' |
		   sed 's/.*memory//' | sort -n) END; do
		if [ "$b" = END ] || [ "$b" -ne $((prev + 1)) ]; then
			[ $start -ge 0 ] && echo $((start * bs)) $(((prev + 1) * bs))
			start=$b
		fi
		prev=$b
	done
}

# node_target CTX NID: the one target of context directory CTX covers node
# NID's memory
node_target()
{
	local i=0 start end ranges

	ranges=$(node_ranges "$2")
	[ -n "$ranges" ] || die "node$2 has no memory blocks"
	w 1 "$1/targets/nr_targets"
	w "$(echo "$ranges" | wc -l)" "$1/targets/0/regions/nr_regions"
	while read -r start end; do
		w "$start" "$1/targets/0/regions/$i/start"
		w "$end" "$1/targets/0/regions/$i/end"
		i=$((i + 1))
	done <<< "$ranges"
}

# node_reserve_bp NID: per zone high watermark (less a passing boost) plus
# largest lowmem reserve (at most the zone), in bp of the node's managed
# pages
node_reserve_bp()
{
	awk -v n="$1" '$1 == "Node" { on = ($2 == n ","); next }
		!on { next }
		$1 == "boost" { b = $2 }
		$1 == "high" { hi = $2 - b }
		$1 == "managed" { m = $2; tm += m }
		$1 == "protection:" { gsub(/[(),]/, " "); p = 0
			for (i = 2; i <= NF; i++) if ($i + 0 > p) p = $i + 0
			r = hi + p; if (r > m) r = m; tr += r }
		END { printf "%d", tm ? tr * 10000 / tm : -1 }' /proc/zoneinfo
}

node_managed_pages()
{
	awk -v n="$1" '$1 == "Node" { on = ($2 == n ","); next }
		on && $1 == "managed" { m += $2 } END { print m + 0 }' /proc/zoneinfo
}

# kdamond IDX NID ACTION TARGET NR_MIN METRIC VALUE ALLOW APPLY_US GOAL_NID
kdamond()
{
	local ctx=$KDS/$1/contexts/0 nr_max=4294967295
	local s=$KDS/$1/contexts/0/schemes/0 iv=$KDS/$1/contexts/0/monitoring_attrs/intervals

	w 1 "$KDS/$1/contexts/nr_contexts"
	w paddr "$ctx/operations"
	[ -e "$iv/intervals_goal" ] ||
		die "no intervals_goal: this kernel lacks intervals auto-tuning"
	w 5000 "$iv/sample_us"
	w 100000 "$iv/aggr_us"
	w 400 "$iv/intervals_goal/access_bp"
	w 3 "$iv/intervals_goal/aggrs"
	w 5000 "$iv/intervals_goal/min_sample_us"
	w 10000000 "$iv/intervals_goal/max_sample_us"
	node_target "$ctx" "$2"
	w 1 "$ctx/schemes/nr_schemes"
	[ -e "$s/quotas/goal_tuner" ] ||
		die "no quotas/goal_tuner: this kernel lacks DAMON's goal tuners"
	w "$3" "$s/action"
	w "$4" "$s/target_nid"
	w "$9" "$s/apply_interval_us"
	# sysfs starts every range at 0-0: any size and age
	w 18446744073709551615 "$s/access_pattern/sz/max"
	w 4294967295 "$s/access_pattern/age/max"
	w "$nr_max" "$s/access_pattern/nr_accesses/max"
	w "$5" "$s/access_pattern/nr_accesses/min"
	# within the quota: the hottest regions first for migrate_hot, the
	# coldest first for migrate_cold
	w 1000 "$s/quotas/weights/nr_accesses_permil"
	w 1000 "$s/quotas/weights/age_permil"
	w 1000 "$s/quotas/reset_interval_ms"
	w $QUOTA_B "$s/quotas/bytes"
	echo temporal_capped > "$s/quotas/goal_tuner" 2>/dev/null ||
		die "goal_tuner rejects temporal_capped:" \
			"build the kernel with CONFIG_DAMOS_TUNER_TEMPORAL_CAPPED"
	w 1 "$s/quotas/goals/nr_goals"
	w "$6" "$s/quotas/goals/0/target_metric"
	w "${10}" "$s/quotas/goals/0/nid"
	w "$7" "$s/quotas/goals/0/target_value"
	w 1 "$s/filters/nr_filters"
	w young "$s/filters/0/type"
	w Y "$s/filters/0/matching"
	w "$8" "$s/filters/0/allow"
}

start()
{
	local fast=$1 slow=$2 n i state reserve managed gap_ms

	[ -d $KDS ] || die "no $KDS: DAMON sysfs (CONFIG_DAMON_SYSFS) is off"
	for nid in "$fast" "$slow"; do
		[[ "$nid" =~ ^[0-9]+$ ]] && [ -d /sys/devices/system/node/node"$nid" ] ||
			die "no node $nid"
	done
	[ "$fast" != "$slow" ] || die "the fast and the slow node are the same"
	read -r n < $KDS/nr_kdamonds
	for ((i = 0; i < n; i++)); do
		read -r state < $KDS/$i/state
		[ "$state" = off ] || die "kdamond $i is running (stop it first)"
	done
	w 0 $KDS/nr_kdamonds
	w 2 $KDS/nr_kdamonds
	reserve=$(node_reserve_bp "$fast")
	[ "$reserve" -ge 0 ] && [ "$reserve" -lt $((USED_BP - FREE_BP - 100)) ] ||
		die "node$fast keeps $reserve bp of itself free: no room for the goals"
	managed=$(node_managed_pages "$fast")
	# ms for QUOTA_B per second to move the node's memory between the goals
	gap_ms=$(((FREE_BP + USED_BP - 10000) * managed / 10000))
	gap_ms=$((gap_ms * $(getconf PAGESIZE) * 1000 / QUOTA_B))
	[ $gap_ms -ge 1 ] || gap_ms=1
	[ $gap_ms -le 1000 ] || gap_ms=1000
	kdamond 0 "$fast" migrate_cold "$slow" 0 node_mem_free_bp $((FREE_BP + reserve)) N \
		$((gap_ms * 1000)) "$fast"
	kdamond 1 "$slow" migrate_hot "$fast" 1 node_mem_used_bp $((USED_BP - reserve)) Y \
		$((gap_ms * 1000)) "$fast"
	w on $KDS/0/state
	w on $KDS/1/state || { echo off > $KDS/0/state; exit 1; }
	echo "damon-tiering: node$fast reserve $reserve bp: goals $((USED_BP - reserve)) bp used," \
		"$((FREE_BP + reserve)) bp free; apply interval $gap_ms ms;" \
		"kdamonds $(cat $KDS/0/pid) (node$fast) $(cat $KDS/1/pid) (node$slow)"
}

stop()
{
	local n i

	[ -d $KDS ] || exit 0
	read -r n < $KDS/nr_kdamonds
	for ((i = 0; i < n; i++)); do
		echo off > $KDS/$i/state 2>/dev/null || true
	done
	w 0 $KDS/nr_kdamonds
}

show()
{
	local n i d iv

	read -r n < $KDS/nr_kdamonds
	for ((i = 0; i < n; i++)); do
		d=$KDS/$i/contexts/0/schemes/0
		iv=$KDS/$i/contexts/0/monitoring_attrs/intervals
		echo update_schemes_stats > $KDS/$i/state 2>/dev/null || continue
		echo update_schemes_effective_quotas > $KDS/$i/state
		echo update_tuned_intervals > $KDS/$i/state
		printf 'kdamond %d: %s to node%s, goal %s %s on node%s\n' "$i" \
			"$(cat $d/action)" "$(cat $d/target_nid)" \
			"$(cat $d/quotas/goals/0/target_metric)" \
			"$(cat $d/quotas/goals/0/target_value)" "$(cat $d/quotas/goals/0/nid)"
		printf '  quota %d KiB per %d ms, sample %d us, aggr %d us, applied %d MiB\n' \
			$(($(cat $d/quotas/effective_bytes) >> 10)) \
			"$(cat $d/quotas/reset_interval_ms)" "$(cat $iv/sample_us)" \
			"$(cat $iv/aggr_us)" $(($(cat $d/stats/sz_applied) >> 20))
	done
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
set -euo pipefail
case "${1:-}" in
start) [ $# = 3 ] || die "usage: damon-tiering.sh start FAST_NID SLOW_NID"; start "$2" "$3" ;;
stop) stop ;;
show) show ;;
*) die "usage: damon-tiering.sh start FAST_NID SLOW_NID | stop | show" ;;
esac
