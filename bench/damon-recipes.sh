# SPDX-License-Identifier: GPL-2.0
# DAMON tiering set up through sysfs, for the bench scenarios (sourced):
# one paddr kdamond per node, hand-tuned (kdamond) or self-tuned by
# mainline's recipe (kdamond_goals, the layout of damo's
# scripts/mem_tier.sh), and w VALUE FILE to write a sysfs file.  The
# caller defines die MESSAGE and sets ADMIN (/sys/kernel/mm/damon/admin),
# FAST, ULONG_MAX and UINT_MAX; kdamond also reads SAMPLE_US, AGGR_US and
# UPDATE_US, kdamond_goals goal_min_sample_us, goal_apply_us,
# goal_window_ms and goal_window_b.  node_target CTX NID and
# node_reserve_bp NID come from tools/mm/damon-tiering.sh.

# shellcheck source=tools/mm/damon-tiering.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/mm/damon-tiering.sh"

# w VALUE FILE: write a sysfs file, or die naming it.
w()
{
	echo "$1" > "$2" 2>/dev/null || die "writing '$1' to $2 failed"
}

# kdamond IDX NID ACTION TARGET_NID NR_MIN NR_MAX AGE_MIN APPLY_US YOUNG:
# kdamond IDX monitors node NID's memory and runs ACTION, moving pages to
# TARGET_NID, on regions within the access pattern, skipping the pages that
# are young (YOUNG=Y) or that are not (N).
kdamond()
{
	local kd=$ADMIN/kdamonds/$1
	local ctx=$ADMIN/kdamonds/$1/contexts/0
	local s=$ctx/schemes/0

	w 1 "$kd/contexts/nr_contexts"
	w paddr "$ctx/operations"
	w $SAMPLE_US "$ctx/monitoring_attrs/intervals/sample_us"
	w $AGGR_US "$ctx/monitoring_attrs/intervals/aggr_us"
	w $UPDATE_US "$ctx/monitoring_attrs/intervals/update_us"
	node_target "$ctx" "$2"
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
	local kd=$ADMIN/kdamonds/$1 nr_max=$UINT_MAX
	local ctx=$ADMIN/kdamonds/$1/contexts/0
	local s=$ctx/schemes/0 iv=$ADMIN/kdamonds/$1/contexts/0/monitoring_attrs/intervals

	w 1 "$kd/contexts/nr_contexts"
	w paddr "$ctx/operations"
	w $goal_min_sample_us "$iv/sample_us"
	w $((goal_min_sample_us * 20)) "$iv/aggr_us"
	w 400 "$iv/intervals_goal/access_bp"
	w 3 "$iv/intervals_goal/aggrs"
	w $goal_min_sample_us "$iv/intervals_goal/min_sample_us"
	w 10000000 "$iv/intervals_goal/max_sample_us"
	node_target "$ctx" "$2"
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
