#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The DAMOS migrate_hot/migrate_cold demo, guest side (run by scripts/demo.sh
# in the lab).
#
#   demo-guest.sh WORKLOAD
#
# DAMON tiering that tunes itself, with mainline's recipe (the sample of the
# node_mem_used_bp/node_mem_free_bp quota goals): one kdamond per node, paddr
# operations, default monitoring intervals auto-tuned toward 4% of the
# possible accesses seen in 3 aggregations (5 ms to 10 s samples), one
# scheme each, applied once a second within a 200 MiB/s quota that DAMON
# tunes toward a goal on node0's memory:
#   kdamond 0, node0: migrate_cold to node2 on regions without access,
#     goal node0 0.5% free (node_mem_free_bp 50), reject-young filter;
#   kdamond 1, node2: migrate_hot to node0 on regions with 5% of the
#     possible accesses, goal node0 99.7% used (node_mem_used_bp 9970),
#     allow-young filter.
# No age, no access threshold, no intervals picked for this machine.
#
# DAMON comes on first; then WORKLOAD (demo-hotcold) fills node0 with a cold
# set but FAST_FREE_MIB, and puts a hot set that it keeps writing on node2.
# The hot set is 8% of node2, above the intervals goal's 4%: a hot set
# smaller than that, in every sample, reads below the goal whatever the
# intervals, and the tuning takes them to max_sample_us.  It fits in what
# is left of node0: on the lab's 1 GiB node0 the
# page allocator keeps about 0.55% free (watermarks, lowmem reserves), so
# the recipe's 0.5% free goal is never reached and migrate_cold, which
# would make room, stays idle (see bench/README, goals mode).
# Every PERIOD_S it prints where each set's pages are, node0's use, each
# goal, effective quota and tuned intervals, the
# migration counters of /proc/vmstat and the stats of both schemes; it stops
# when the hot set is at least PASS_PCT% on node0, or after MAX_S.  Exit 0
# if it is and the schemes' stats account for the pages moved, 1 if not.
# Under TCG each fork costs ~0.1 s: the reporting uses bash builtins where
# it can.
set -u
WORKLOAD=${1:?usage: demo-guest.sh WORKLOAD}
HOT_MIB=256 FAST_FREE_MIB=320
FAST=0 SLOW=2
GOAL_USED_BP=9970 GOAL_FREE_BP=50 QUOTA_B=$((200 << 20))
PERIOD_S=3 MAX_S=180 PASS_PCT=95
ADMIN=/sys/kernel/mm/damon/admin
STATUS=/tmp/demo-status
VMSTAT_KEYS="pgmigrate_success pgmigrate_fail pgdemote_kswapd pgdemote_direct
	pgpromote_success numa_pages_migrated numa_hint_faults
	damon_migrate_hot damon_migrate_cold damon_migrate_fail"
ULONG_MAX=18446744073709551615
UINT_MAX=4294967295
PAGE_SIZE=$(getconf PAGESIZE)

declare -A P V V0

die()
{
	echo "demo: $*" >&2
	exit 1
}

# w VALUE FILE: write a DAMON sysfs file, or die naming it.
w()
{
	echo "$1" > "$2" 2>/dev/null || die "writing '$1' to $2 failed"
}

# node_ranges NID: from tools/mm/damon-tiering.sh
# shellcheck source=tools/mm/damon-tiering.sh
. "$(dirname "$0")/../tools/mm/damon-tiering.sh"

# snapshot: read the workload's latest report into P[set.key] (the workload
# replaces it by rename, so one read sees one report) and /proc/vmstat
# into V[key].  /proc/vmstat is read whole first: bash's line reads seek
# back, and a seq_file regenerated with new values tears lines.
snapshot()
{
	local set rest kv k v vmstat

	while read -r set rest; do
		for kv in $rest; do
			P[$set.${kv%=*}]=${kv#*=}
		done
	done < $STATUS
	read -r -d '' vmstat < /proc/vmstat
	while read -r k v; do
		V[$k]=$v
	done <<< "$vmstat"
}

# show_set LABEL SET: one line with SET's pages per node.
show_set()
{
	local pages=${P[$2.pages]} n0=${P[$2.node0]} n1=${P[$2.node1]} n2=${P[$2.node2]}

	printf '%s %-4s %5d pages: node0 %5d (%3d%%)  node1 %5d  node2 %5d (%3d%%)\n' \
		"$1" $2 $pages $n0 $((n0 * 100 / pages)) $n1 $n2 $((n2 * 100 / pages))
}

# pct SET NID: the percentage of SET's pages on node NID, in $REPLY.
pct()
{
	REPLY=$((P[$1.node$2] * 100 / P[$1.pages]))
}

# moved: the hot set is at least PASS_PCT% on node0.
moved()
{
	pct hot $FAST
	[ $REPLY -ge $PASS_PCT ]
}

# show_vmstat LABEL: the VMSTAT_KEYS deltas since the start.
show_vmstat()
{
	local k line="$1 vmstat:"

	for k in $VMSTAT_KEYS; do
		line+=" $k +$((${V[$k]:-0} - ${V0[$k]:-0}))"
	done
	echo "$line"
}

# update I: refresh the stats, effective quota and tuned intervals files
# of kdamond I
update()
{
	w update_schemes_stats $ADMIN/kdamonds/$1/state
	w update_schemes_effective_quotas $ADMIN/kdamonds/$1/state
	w update_tuned_intervals $ADMIN/kdamonds/$1/state
}

# show_node0 LABEL: node0's use against the goal
show_node0()
{
	local k v total=0 free=0 meminfo

	read -r -d '' meminfo < /sys/devices/system/node/node$FAST/meminfo
	while read -r _ _ k v _; do
		case $k in
		MemTotal:) total=$v ;;
		MemFree:) free=$v ;;
		esac
	done <<< "$meminfo"
	REPLY=$(((total - free) * 10000 / total))
	printf '%s node%d used %d.%02d%% (%d MiB free), goal %d.%02d%% used\n' "$1" $FAST \
		$((REPLY / 100)) $((REPLY % 100)) $((free / 1024)) \
		$((GOAL_USED_BP / 100)) $((GOAL_USED_BP % 100))
}

# show_schemes LABEL: per scheme its goal (the kernel does not write back
# what it measured: show_node0 gives node0's use), the effective quota, the
# tuned intervals and the stats, as last updated.
show_schemes()
{
	local i d iv action metric target nid esz sample aggr nt st na sa

	for i in 0 1; do
		d=$ADMIN/kdamonds/$i/contexts/0/schemes/0
		iv=$ADMIN/kdamonds/$i/contexts/0/monitoring_attrs/intervals
		read -r action < $d/action
		read -r metric < $d/quotas/goals/0/target_metric
		read -r target < $d/quotas/goals/0/target_value
		read -r nid < $d/quotas/goals/0/nid
		read -r esz < $d/quotas/effective_bytes
		read -r sample < $iv/sample_us
		read -r aggr < $iv/aggr_us
		read -r nt < $d/stats/nr_tried
		read -r st < $d/stats/sz_tried
		read -r na < $d/stats/nr_applied
		read -r sa < $d/stats/sz_applied
		printf '%s damos %-12s goal %s %d on node%d; quota %d KiB/s; sample %d us, aggr %d us\n' \
			"$1" $action $metric $target $nid $((esz / 1024)) $sample $aggr
		printf '%s       %-12s tried %5d regions %8d KiB, applied %5d regions %6d KiB\n' \
			"$1" "" $nt $((st / 1024)) $na $((sa / 1024))
	done
}

# kdamond I NID ACTION TARGET_NID NR_MIN METRIC TARGET_VALUE ALLOW: kdamond I
# monitors node NID and runs ACTION to TARGET_NID on regions with at least
# NR_MIN accesses (none if 0), within a quota tuned toward METRIC of node0 at
# TARGET_VALUE, on young pages (ALLOW=Y, an allow filter) or on the others
# (N, a reject filter).
kdamond()
{
	local ctx=$ADMIN/kdamonds/$1/contexts/0 start end i=0 ranges nr_max=$UINT_MAX
	local iv=$ADMIN/kdamonds/$1/contexts/0/monitoring_attrs/intervals
	local s=$ADMIN/kdamonds/$1/contexts/0/schemes/0

	ranges=$(node_ranges $2)
	[ -n "$ranges" ] || die "no memory blocks for node$2"
	w 1 $ADMIN/kdamonds/$1/contexts/nr_contexts
	w paddr $ctx/operations
	w 400 $iv/intervals_goal/access_bp
	w 3 $iv/intervals_goal/aggrs
	w 5000 $iv/intervals_goal/min_sample_us
	w 10000000 $iv/intervals_goal/max_sample_us
	w 1 $ctx/targets/nr_targets
	w "$(echo "$ranges" | wc -l)" $ctx/targets/0/regions/nr_regions
	while read -r start end; do
		printf 'demo: kdamond %d: node%d region [%#x, %#x)\n' $1 $2 $start $end
		w $start $ctx/targets/0/regions/$i/start
		w $end $ctx/targets/0/regions/$i/end
		i=$((i + 1))
	done <<< "$ranges"
	w 1 $ctx/schemes/nr_schemes
	w $3 $s/action
	w $4 $s/target_nid
	w 1000000 $s/apply_interval_us
	w 0 $s/access_pattern/sz/min
	w $ULONG_MAX $s/access_pattern/sz/max
	[ $5 = 0 ] && nr_max=0
	w $nr_max $s/access_pattern/nr_accesses/max
	w $5 $s/access_pattern/nr_accesses/min
	w 0 $s/access_pattern/age/min
	w $UINT_MAX $s/access_pattern/age/max
	w 1000 $s/quotas/reset_interval_ms
	w $QUOTA_B $s/quotas/bytes
	w 1 $s/quotas/goals/nr_goals
	w $6 $s/quotas/goals/0/target_metric
	w $7 $s/quotas/goals/0/target_value
	w $FAST $s/quotas/goals/0/nid
	w 1 $s/filters/nr_filters
	w young $s/filters/0/type
	w Y $s/filters/0/matching
	w $8 $s/filters/0/allow
}

damon_setup()
{
	local i

	w 2 $ADMIN/kdamonds/nr_kdamonds
	kdamond 0 $FAST migrate_cold $SLOW 0 node_mem_free_bp $GOAL_FREE_BP N
	kdamond 1 $SLOW migrate_hot $FAST 1 node_mem_used_bp $GOAL_USED_BP Y
	for i in 0 1; do
		w on $ADMIN/kdamonds/$i/state
		[ "$(cat $ADMIN/kdamonds/$i/state)" = on ] || die "kdamond $i did not start"
	done
}

cleanup()
{
	local i

	for i in 0 1; do
		[ -e $ADMIN/kdamonds/$i/state ] &&
			echo off > $ADMIN/kdamonds/$i/state 2>/dev/null
	done
	[ -n "${wpid:-}" ] && kill $wpid 2>/dev/null && wait $wpid 2>/dev/null
}
trap cleanup EXIT

echo "demo: $(uname -r); tiers: $(for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	printf '%s=node%s ' ${t##*/} "$(cat $t/nodelist)"; done)"
# NUMA balancing would move pages too: keep it off so that DAMOS alone does
echo 0 > /proc/sys/kernel/numa_balancing

damon_setup
start=$SECONDS
echo "demo: kdamonds $(cat $ADMIN/kdamonds/0/pid) $(cat $ADMIN/kdamonds/1/pid) on;" \
	"mainline's self-tuning recipe: nothing picked for this machine"
show_node0 "demo:"

# the cold set takes node0's free memory but FAST_FREE_MIB
read -r -d '' meminfo < /sys/devices/system/node/node$FAST/meminfo
while read -r _ _ k v _; do
	[ "$k" = MemFree: ] && COLD_MIB=$((v / 1024 - FAST_FREE_MIB))
done <<< "$meminfo"
[ "${COLD_MIB:-0}" -gt 0 ] || die "node$FAST has less than $FAST_FREE_MIB MiB free"
echo "demo: workload: hot set $HOT_MIB MiB on node$SLOW, cold set $COLD_MIB MiB on node$FAST"
rm -f $STATUS
"$WORKLOAD" $HOT_MIB $SLOW $COLD_MIB $FAST $STATUS &
wpid=$!
for i in $(seq 1200); do
	[ -s $STATUS ] && break
	kill -0 $wpid 2>/dev/null || die "workload died"
	sleep 0.1
done
[ -s $STATUS ] || die "workload did not report"
snapshot
for k in "${!V[@]}"; do
	V0[$k]=${V[$k]}
done
init_hot=$(show_set "initial" hot)
init_cold=$(show_set "initial" cold)
init_hot_fast=${P[hot.node$FAST]}
init_cold_slow=${P[cold.node$SLOW]}
echo "$init_hot"
echo "$init_cold"

while :; do
	sleep $PERIOD_S
	update 0
	update 1
	snapshot
	t=$(printf '[%3ds]' $((SECONDS - start)))
	show_set "$t" hot
	show_set "$t" cold
	show_node0 "$t"
	show_schemes "$t"
	show_vmstat "$t"
	if moved; then
		echo "demo: hot set on node$FAST after $((SECONDS - start))s of DAMON"
		break
	fi
	[ $((SECONDS - start)) -ge $MAX_S ] && break
done

# the placement first, then the stats: whatever moved by then is counted
snapshot
last_hot_fast=${P[hot.node$FAST]}
last_cold_slow=${P[cold.node$SLOW]}
update 0
update 1
for i in 0 1; do
	w off $ADMIN/kdamonds/$i/state
done
echo
echo "=== summary ($((SECONDS - start))s of DAMON) ==="
sleep 2		# a report made with DAMON off
snapshot
echo "$init_hot"
show_set "final  " hot
echo "$init_cold"
show_set "final  " cold
read -r sz_cold < $ADMIN/kdamonds/0/contexts/0/schemes/0/stats/sz_applied
read -r sz_hot < $ADMIN/kdamonds/1/contexts/0/schemes/0/stats/sz_applied
cold_applied=$((sz_cold / PAGE_SIZE))
hot_applied=$((sz_hot / PAGE_SIZE))
cold_moved=$((last_cold_slow - init_cold_slow))
hot_moved=$((last_hot_fast - init_hot_fast))
echo "cold set node$FAST->node$SLOW: $cold_moved pages;" \
	"DAMOS migrate_cold applied to $cold_applied pages"
echo "hot set  node$SLOW->node$FAST: $hot_moved pages;" \
	"DAMOS migrate_hot  applied to $hot_applied pages"
show_vmstat "since start,"
show_node0 "final:"
echo "(pgmigrate_success counts both directions; migrate_cold also moves" \
	"other idle pages of node$FAST, e.g. page cache; it demotes only" \
	"what node$FAST needs to stay 0.5% free, so most of the cold set stays)"

pct hot $FAST
hot_pct=$REPLY
pct cold $SLOW
cold_pct=$REPLY
if [ $hot_applied -lt $hot_moved ] || [ $cold_applied -lt $cold_moved ]; then
	echo "FAIL: the DAMOS stats miss pages that moved"
	exit 1
fi
if moved; then
	echo "PASS: hot set ${hot_pct}% on node$FAST, cold set ${cold_pct}% on node$SLOW"
	exit 0
fi
echo "FAIL: hot set ${hot_pct}% on node$FAST (want >= ${PASS_PCT}%), cold set ${cold_pct}% on node$SLOW"
exit 1
