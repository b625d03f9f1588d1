# SPDX-License-Identifier: GPL-2.0
# NUMA-balancing promotion, hint latency in time vs faults mode: the hot
# set's residency on node0 and the pages promoted over time, per mode, from
# the CSV of bench/scenarios/numa-hint.sh (bench/run.sh runs this).
#
#   gnuplot -c bench/numa-hint.gp CSV PNG
#
# CSV columns: mode,t_s,hot_node0,hot_node2,hot_other,hot_on_node0_pct,
#              hot_promoted,wrong_promoted,episodes
# Top: residency over time; bottom: pages promoted over the work done
# (episodes), which both modes do alike however fast TCG runs.
if (ARGC != 2) {
	print "usage: gnuplot -c numa-hint.gp CSV PNG"
	exit status 2
}
csv = ARG1
set datafile separator ","
set terminal pngcairo size 1000,800 font ",10"
set output ARG2

modes = "time faults"
set linetype 1 lc rgb "#0072b2"
set linetype 2 lc rgb "#d55e00"
title(m) = m eq "time" ? "time mode (upstream: ms, hot\\_threshold\\_ms)" : \
	"faults mode (hint faults, hot\\_threshold\\_faults)"
is(m) = strcol(1) eq m

set multiplot layout 2,1 title "NUMA-balancing promotion at lab scale: hot chunks on node2, footprint larger than node0\n(times are QEMU TCG, not hardware)"
set key bottom right
set grid
set xlabel "time since the workload started (s, TCG)"
set ylabel "hot set on node0 (%)"
set yrange [0:100]
plot for [i = 1:2] csv using 2:(is(word(modes, i)) ? $6 : NaN) \
	with lines lt i lw 2 title title(word(modes, i))

set yrange [0:*]
set xlabel "episodes done (one hot chunk each)"
set ylabel "pages promoted node2 -> node0"
set key top left
plot for [i = 1:2] csv using 9:(is(word(modes, i)) ? $7 : NaN) \
		with lines lt i lw 2 title "hot pages, ".word(modes, i), \
	for [i = 1:2] csv using 9:(is(word(modes, i)) ? $8 : NaN) \
		with lines lt i lw 1 dt 2 title "never-hot pages (wrong), ".word(modes, i)
unset multiplot
