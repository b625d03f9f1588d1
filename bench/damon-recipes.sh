# SPDX-License-Identifier: GPL-2.0
# DAMON tiering set up through sysfs, for the bench scenarios (sourced):
# one paddr kdamond per node, hand-tuned (kdamond) or self-tuned by
# mainline's recipe (kdamond_goals, the layout of damo's
# scripts/mem_tier.sh), and w VALUE FILE to write a sysfs file.  The
# caller defines die MESSAGE and sets ADMIN (/sys/kernel/mm/damon/admin),
# FAST, ULONG_MAX and UINT_MAX; kdamond also reads SAMPLE_US, AGGR_US and
# UPDATE_US, kdamond_goals goal_min_sample_us, goal_apply_us,
# goal_window_ms and goal_window_b.

# w VALUE FILE: write a sysfs file, or die naming it.
w()
{
	echo "$1" > "$2" 2>/dev/null || die "writing '$1' to $2 failed"
}

# node_ranges NID: the physical address ranges of node NID, one "start end"
# line per run of contiguous memory blocks (scripts/demo-guest.sh).
node_ranges()
{
	local bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
	local b start=-1 prev=-2

	for b in $(ls -d /sys/devices/system/node/node$1/memory[0-9]* |
		   sed 's/.*memory//' | sort -n) END; do
		if [ "$b" = END ] || [ "$b" -ne $((prev + 1)) ]; then
			[ $start -ge 0 ] && echo $((start * bs)) $(((prev + 1) * bs))
			start=$b
		fi
		prev=$b
	done
}

# kdamond IDX NID ACTION TARGET_NID NR_MIN NR_MAX AGE_MIN APPLY_US YOUNG:
# kdamond IDX monitors node NID's memory and runs ACTION, moving pages to
# TARGET_NID, on regions within the access pattern, skipping the pages that
# are young (YOUNG=Y) or that are not (N).
kdamond()
{
	local kd=$ADMIN/kdamonds/$1 start end i=0 ranges
	local ctx=$ADMIN/kdamonds/$1/contexts/0
	local s=$ctx/schemes/0

	ranges=$(node_ranges "$2")
	[ -n "$ranges" ] || die "no memory blocks for node$2"
	w 1 "$kd/contexts/nr_contexts"
	w paddr "$ctx/operations"
	w $SAMPLE_US "$ctx/monitoring_attrs/intervals/sample_us"
	w $AGGR_US "$ctx/monitoring_attrs/intervals/aggr_us"
	w $UPDATE_US "$ctx/monitoring_attrs/intervals/update_us"
	w 1 "$ctx/targets/nr_targets"
	w "$(echo "$ranges" | wc -l)" "$ctx/targets/0/regions/nr_regions"
	while read -r start end; do
		w "$start" "$ctx/targets/0/regions/$i/start"
		w "$end" "$ctx/targets/0/regions/$i/end"
		i=$((i + 1))
	done <<< "$ranges"
	w 1 "$ctx/schemes/nr_schemes"
	w "$3" "$s/action"
	w "$4" "$s/target_nid"
	w "$8" "$s/apply_interval_us"
	w 0 "$s/access_pattern/sz/min"
	w $ULONG_MAX "$s/access_pattern/sz/max"
	w "$5" "$s/access_pattern/nr_accesses/min"
	w "$6" "$s/access_pattern/nr_accesses/max"
	w "$7" "$s/access_pattern/age/min"
	w $UINT_MAX "$s/access_pattern/age/max"
	w 1 "$s/filters/nr_filters"
	w young "$s/filters/0/type"
	w "$9" "$s/filters/0/matching"
}

# kdamond_goals IDX NID ACTION TARGET_NID NR_MIN METRIC TARGET_VALUE ALLOW TUNER:
# kdamond IDX monitors node NID with the default intervals, auto-tuned
# toward 4% of the possible accesses seen in 3 aggregations (sampling 5 ms
# to 10 s), and runs ACTION to TARGET_NID once a window on regions with at
# least NR_MIN accesses (and at most NR_MIN if it is 0), any age, within a
# 200 MiB/s quota (goal_window_b per goal_window_ms: 200 MiB per second but
# in goals_band) tuned by TUNER (consist: the feedback loop, temporal)
# toward METRIC of node FAST at TARGET_VALUE, on the young pages (ALLOW=Y:
# an allow filter) or on the others (N: reject).
kdamond_goals()
{
	local kd=$ADMIN/kdamonds/$1 start end i=0 ranges nr_max=$UINT_MAX
	local ctx=$ADMIN/kdamonds/$1/contexts/0
	local s=$ctx/schemes/0 iv=$ADMIN/kdamonds/$1/contexts/0/monitoring_attrs/intervals

	ranges=$(node_ranges "$2")
	[ -n "$ranges" ] || die "no memory blocks for node$2"
	w 1 "$kd/contexts/nr_contexts"
	w paddr "$ctx/operations"
	w $goal_min_sample_us "$iv/sample_us"
	w $((goal_min_sample_us * 20)) "$iv/aggr_us"
	w 400 "$iv/intervals_goal/access_bp"
	w 3 "$iv/intervals_goal/aggrs"
	w $goal_min_sample_us "$iv/intervals_goal/min_sample_us"
	w 10000000 "$iv/intervals_goal/max_sample_us"
	w 1 "$ctx/targets/nr_targets"
	w "$(echo "$ranges" | wc -l)" "$ctx/targets/0/regions/nr_regions"
	while read -r start end; do
		w "$start" "$ctx/targets/0/regions/$i/start"
		w "$end" "$ctx/targets/0/regions/$i/end"
		i=$((i + 1))
	done <<< "$ranges"
	w 1 "$ctx/schemes/nr_schemes"
	w "$3" "$s/action"
	w "$4" "$s/target_nid"
	w $goal_apply_us "$s/apply_interval_us"
	w 0 "$s/access_pattern/sz/min"
	w $ULONG_MAX "$s/access_pattern/sz/max"
	[ "$5" = 0 ] && nr_max=0
	w "$nr_max" "$s/access_pattern/nr_accesses/max"
	w "$5" "$s/access_pattern/nr_accesses/min"
	w 0 "$s/access_pattern/age/min"
	w $UINT_MAX "$s/access_pattern/age/max"
	w $goal_window_ms "$s/quotas/reset_interval_ms"
	w $goal_window_b "$s/quotas/bytes"
	# a kernel without the file has only the feedback loop
	[ "$9" = consist ] && [ ! -e "$s/quotas/goal_tuner" ] || w "$9" "$s/quotas/goal_tuner"
	w 1 "$s/quotas/goals/nr_goals"
	w "$6" "$s/quotas/goals/0/target_metric"
	w "$7" "$s/quotas/goals/0/target_value"
	w $FAST "$s/quotas/goals/0/nid"
	w 1 "$s/filters/nr_filters"
	w young "$s/filters/0/type"
	w Y "$s/filters/0/matching"
	w "$8" "$s/filters/0/allow"
}

# node_reserve_bp NID: the free memory node NID keeps from allocations that
# may not reclaim, in bp of its managed pages: per zone, its high watermark
# plus its largest lowmem reserve, at most the zone's managed pages (a
# migration allocates without direct reclaim; kswapd stops at "high")
node_reserve_bp()
{
	awk -v n="$1" '$1 == "Node" { on = ($2 == n ","); next }
		!on { next }
		$1 == "high" { hi = $2 }
		$1 == "managed" { m = $2; tm += m }
		$1 == "protection:" { gsub(/[(),]/, " "); p = 0
			for (i = 2; i <= NF; i++) if ($i + 0 > p) p = $i + 0
			r = hi + p; if (r > m) r = m; tr += r }
		END { printf "%d", tm ? tr * 10000 / tm : 0 }' /proc/zoneinfo
}
