# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What bench/scenarios/numa-hint.sh and numa-hint-seed.sh share (sourced):
# the counters they report, the helpers die, w, vmstat and result, the
# cleanup on exit, a started workload's wait for "ready", a run's counter
# deltas and the setup before the first run.  The caller sets SCENARIO
# (its name, for messages), BIN, OUTDIR, CSV, NB, TP and KNOBS (file ->
# value), and keeps the name of the current run in cfg.

COUNTERS="pgpromote_success pgpromote_candidate pgpromote_reject_latency
	pgpromote_reject_ratelimit pgpromote_fail numa_hint_faults numa_pte_updates
	numa_pages_migrated pgdemote_kswapd pgdemote_direct oom_kill"
declare -A R
fast=
TMP=$(mktemp -d)
pids=()

# die MESSAGE: print it, named by the scenario, and exit 1
die()
{
	echo "bench: $SCENARIO: $*" >&2
	exit 1
}

# w VALUE FILE: write a kernel knob, or die naming it.
w()
{
	echo "$1" > "$2" 2>/dev/null || die "writing '$1' to $2 failed"
}

# cleanup: NUMA balancing and the tracepoint off, the workloads killed
cleanup()
{
	local p

	echo 0 > /proc/sys/kernel/numa_balancing
	[ -e "$TP/enable" ] && echo 0 > "$TP/enable"
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait
	rm -rf "$TMP"
}
trap cleanup EXIT

# vmstat FILE: /proc/vmstat, brought up to date, into FILE
vmstat()
{
	echo 1 > /proc/sys/vm/stat_refresh
	cat /proc/vmstat > "$1"
}

# result KEY VALUE: print "RESULT cfg_KEY=VALUE" and keep it for the summary
result()
{
	echo "RESULT ${cfg}_$1=$2"
	R[$cfg.$1]=$2
}

# wait_ready FILE PID LABEL: wait until the workload PID writing FILE says
# "ready", or die
wait_ready()
{
	local i

	for ((i = 0; i < 6000; i++)); do
		grep -qx ready "$1" && return 0
		kill -0 "$2" 2>/dev/null || die "$3: the workload died"
		sleep 0.1
	done
	grep -qx ready "$1" || die "$3: the workload did not come up"
}

# counter_deltas: a result per counter of COUNTERS, its change from
# $TMP/vmstat.$cfg.0 to $TMP/vmstat.$cfg.1
counter_deltas()
{
	local k v

	awk -v want="$COUNTERS" 'BEGIN { n = split(want, w); for (i = 1; i <= n; i++) k[w[i]] = i }
		NR == FNR { v0[$1] = $2; next }
		$1 in k { d[k[$1]] = $2 - v0[$1] }
		END { for (i = 1; i <= n; i++) print w[i], d[i] + 0 }' \
		"$TMP/vmstat.$cfg.0" "$TMP/vmstat.$cfg.1" > "$TMP/delta.$cfg"
	while read -r k v; do
		result "$k" "$v"
	done < "$TMP/delta.$cfg"
}

# setup: check the helper, the output directory and the kernel, write
# KNOBS (one this kernel lacks keeps its default), THP off, a trace buffer
# for the tracepoint, and the CSV's header
setup()
{
	local t k

	[ -x "$BIN" ] || die "no $BIN (bench/run.sh builds it)"
	[ -d "$OUTDIR" ] && [ -w "$OUTDIR" ] || die "$OUTDIR is not a writable directory"
	[ -e "$NB/hot_threshold_faults" ] ||
		die "no $NB/hot_threshold_faults: not the patched kernel"
	for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
		echo "bench: $(basename "$t"): nodes $(cat "$t/nodelist")"
	done
	for k in "${!KNOBS[@]}"; do
		if [ -e "$k" ]; then
			w "${KNOBS[$k]}" "$k"
			echo "bench: $k = ${KNOBS[$k]}"
		else
			echo "bench: no $k: the kernel's default in force"
		fi
	done
	w never /sys/kernel/mm/transparent_hugepage/enabled
	[ -e "$TP/enable" ] && w 4096 /sys/kernel/tracing/buffer_size_kb
	echo "mode,t_s,hot_node0,hot_node2,hot_other,hot_on_node0_pct,hot_promoted,wrong_promoted,episodes" > "$CSV"
}
