# SPDX-License-Identifier: GPL-2.0
# The hot set's residency on node0 over time, per mode, from the CSV of
# bench/scenarios/damon-tiered.sh (bench/run.sh runs this).
#
#   gnuplot -c bench/damon-tiered.gp CSV PNG
#
# CSV columns: mode,t_s,damon,node0,node1,node2,other,node0_pct
if (ARGC != 2) {
	print "usage: gnuplot -c damon-tiered.gp CSV PNG"
	exit status 2
}
csv = ARG1
set datafile separator ","
set terminal pngcairo size 1000,800 font ",10"
set output ARG2

modes = "none early lazy goals"
set linetype 1 lc rgb "#9400d3"
set linetype 2 lc rgb "#0072b2"
set linetype 3 lc rgb "#e69f00"
set linetype 4 lc rgb "#009e73"
title(m) = m eq "none" ? "no tiering" : \
	m eq "early" ? "DAMON tiered, on before the workload" : \
	m eq "goals" ? "DAMON self-tuned (node-memory goals), on before the workload" : \
	sprintf("DAMON tiered, on %.0f s after the workload (lazy)", lazy_on)
is(m) = strcol(1) eq m

# when DAMON came on in the lazy mode: its first sample with damon=1
lazy_on = NaN
stats csv using (is("lazy") && $3 == 1 ? $2 : NaN) nooutput
if (exists("STATS_records") && STATS_records > 0) { lazy_on = STATS_min }

set multiplot layout 2,1 title "DAMON tiered, lab scale: hot set on node0 (DRAM) with node0 full of cold memory\n(times are QEMU TCG, not hardware)"
set key bottom right
set grid
set xlabel "time since the workload started (s, TCG)"
set ylabel "hot set on node0 (%)"
set yrange [0:100]
if (lazy_on == lazy_on) {
	set arrow 1 from lazy_on, graph 0 to lazy_on, graph 1 nohead dt 3 lc 3
	set label 1 "lazy: DAMON on" at lazy_on, graph 0.05 offset 0.5,0 tc lt 3
}
plot for [i = 1:4] csv using 2:(is(word(modes, i)) ? $8 : NaN) \
		with lines lt i lw 2 title title(word(modes, i)), \
	99 with lines dt 2 lc rgb "gray" title "99% target"

set yrange [95:100]
set ylabel "hot set on node0 (%), 95-100 zoomed"
unset label 1
unset key
replot
unset multiplot
