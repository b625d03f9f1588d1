# SPDX-License-Identifier: GPL-2.0
# A goals mode of bench/scenarios/damon-tiered.sh over time: node0's use
# against its goal, the self-tuned quotas and monitoring intervals.
#
#   gnuplot -c bench/damon-goals.gp CSV PNG [MODE [GOAL_PCT]]
#
# MODE: goals (default) or another goals mode; GOAL_PCT: the mode's
# node0 used goal in percent (its RESULT MODE_goal_used_bp / 100; 99.7).
#
# CSV columns: mode,t_s,node0_used_bp,hot_goal_used_bp,hot_esz_per_s,
# hot_sample_us,hot_aggr_us,cold_goal_free_bp,cold_esz_per_s,cold_sample_us,cold_aggr_us,
# node0_pcp_pages (free pages in node0's per-cpu lists, not in MemFree),
# damon_migrate_hot,damon_migrate_cold (/proc/vmstat, since boot)
if (ARGC < 2) {
	print "usage: gnuplot -c damon-goals.gp CSV PNG [MODE [GOAL_PCT]]"
	exit status 2
}
csv = ARG1
mode = ARGC >= 3 ? ARG3 : "goals"
goal = ARGC >= 4 ? ARG4 + 0.0 : 99.7
set datafile separator ","
set terminal pngcairo size 1000,1100 font ",10" noenhanced
set output ARG2
is_goals = 'strcol(1) eq "' . mode . '"'

set multiplot layout 3,1 title "DAMON tiered by node-memory goals and interval auto-tuning (mode " . mode . ")\n(times are QEMU TCG, not hardware)"
set grid
set key bottom right
set xlabel "time since DAMON came on (s, TCG)"

set ylabel "node0 used (%)"
set yrange [80:100.2]
plot csv using 2:(@is_goals ? $3 / 100.0 : NaN) with lines lw 2 title "node0 used (meminfo)", \
	'' using 2:(@is_goals ? $4 / 100.0 : NaN) with points pt 7 ps 0.4 title "node0 used as its goal measures it (per-cpu free pages free)", \
	goal with lines dt 2 lc rgb "gray" title sprintf("goal %.2f%%", goal), \
	goal - 0.5 with lines dt 3 lc rgb "gray" title "goal - 0.5 pp"

set ylabel "effective quota (MiB/s)"
set yrange [0:*]
set key top right
plot csv using 2:(@is_goals ? $5 / 1048576.0 : NaN) with lines lw 2 title "migrate_hot (node2 -> node0)", \
	'' using 2:(@is_goals ? $9 / 1048576.0 : NaN) with lines lw 2 title "migrate_cold (node0 -> node2)"

set ylabel "sampling interval (ms, log)"
set logscale y
set yrange [*:*]
plot csv using 2:(@is_goals ? $6 / 1000.0 : NaN) with lines lw 2 title "kdamond 1 (node2, migrate_hot)", \
	'' using 2:(@is_goals ? $10 / 1000.0 : NaN) with lines lw 2 title "kdamond 0 (node0, migrate_cold)"
unset multiplot
