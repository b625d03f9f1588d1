# SPDX-License-Identifier: GPL-2.0
# The DRAM share of a workload's accesses over time, one line per policy,
# from a CSV of bench/scenarios/tiering-policies.sh (bench/run.sh runs
# this: W1's, and W4's to W7's each from the hotset CSV).
#
#   gnuplot -c bench/tiering-policies.gp CSV PNG [WORKLOAD]
#
# CSV columns: policy,t_s,phase,share,oracle,fast_pages,slow_pages,
# other_pages,moved_pages.  The first policy's phase changes are marked;
# WORKLOAD (default W1) names the plot.
if (ARGC < 2) {
	print "usage: gnuplot -c tiering-policies.gp CSV PNG [WORKLOAD]"
	exit status 2
}
csv = ARG1
workload = ARGC >= 3 ? ARG3 : "W1"
set datafile separator ","
set terminal pngcairo size 1100,650 font ",10" noenhanced
set output ARG2

# twelve distinguishable lines, solid then dashed
colors = "#000000 #e69f00 #56b4e9 #009e73 #d55e00 #0072b2 #cc79a7 #999999 #7f0000 #00b000 #8000ff #b0b000"
do for [i = 1 : 6] {
	set linetype i lc rgb word(colors, i) lw 2 dt 1
}
do for [i = 7 : 12] {
	set linetype i lc rgb word(colors, i) lw 2 dt 2
}
set linetype cycle 12

# the policies, in the order of the CSV
policies = system("awk -F, 'NR > 1 && !($1 in s) { s[$1]; printf \"%s \", $1 }' " . csv)
# the times at which the first policy's samples change phase
changes = system("awk -F, 'NR == 2 { p = $1; ph = $3 } NR > 2 && $1 == p && $3 != ph { printf \"%s \", $2; ph = $3 }' " . csv)
do for [i = 1 : words(changes)] {
	t = word(changes, i) + 0.0
	set arrow from t, graph 0 to t, graph 1 nohead lw 2 dt 2 lc rgb "#cc0000"
}

set title workload . ": DRAM share of accesses per policy (phase changes dashed red; times are QEMU TCG, not hardware)"
set xlabel "time since the workload's fill (s, TCG)"
set ylabel "share of accesses on node0"
set yrange [0:1]
set grid
set key outside right
plot csv using 2:(strcol(1) eq word(policies, 1) ? $5 : NaN) with lines lw 3 dt 3 lc rgb "black" title "oracle", \
	for [i = 1 : words(policies)] '' using 2:(strcol(1) eq word(policies, i) ? $4 : NaN) \
		with lines lt (i % 12) + 1 title word(policies, i)
