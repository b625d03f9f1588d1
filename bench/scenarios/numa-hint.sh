#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernels: patched
# timeout: 1500
#
# NUMA-balancing hot-page promotion (numa_balancing=2), hint-fault latency
# in "time" mode (upstream: ms from scan to fault, hot_threshold_ms) against
# "faults" mode (the series: hint faults from scan to fault,
# hot_threshold_faults), in one boot of the patched kernel: the seed's
# microbenchmark (seeds/000: footprint larger than DRAM, on DRAM and CXL,
# in chunks; a chunk chosen at random gets a fixed number of random 4 KiB
# accesses) scaled to the lab.  Runs in the lab guest.
#
# Each mode, from the same layout (a new process, the same seed):
#   1. with NUMA balancing and demotion off, the workload (numa-hint run,
#      on CPU0) faults in TOTAL_MIB in base pages: node0's free memory but
#      NODE0_FREE_MIB first, the rest on node2; 8 MiB chunks, HOT_CHUNKS of
#      those on node2 are hot, all others never hot;
#   2. hot_threshold_faults is set, the tracepoint
#      tiering:tiering_promote_decision is read on CPU1 (numa-hint trace),
#      demotion and numa_balancing go on (2 in time mode; 6, with
#      NUMA_BALANCING_TIERING_FAULTS, in faults mode: the sysctl bit is the
#      only switch of the hint latency's unit), and the workload runs EPISODES
#      episodes (a random hot chunk, ITERS writes to random pages of it;
#      at most RUN_S seconds) and, after every SWEEP_EVERY episodes, sweeps
#      a random never-hot chunk once (the same work in each mode: under
#      TCG on a shared host the rate of work moves with the host's load).
#      Once a second it asks move_pages(2) where the hot pages are (every
#      page every 15 s): hot pages promoted, never-hot pages promoted
#      ("wrong"), residency of the hot set on node0.
# The scanner knobs are upstream's defaults, written explicitly.
#
# Output: RESULT lines (keys MODE_key, and the faults/time ratios, see
# bench/README), the hot set's residency over time in /mnt/lab/numa-hint.csv
# (bench/run.sh plots it with bench/numa-hint.gp) and a summary.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$REPO/build/bench/bin/numa-hint
OUTDIR=${BENCH_OUT:-/mnt/lab}
CSV=$OUTDIR/numa-hint.csv
MODES=${MODES:-time faults}
TOTAL_MIB=${TOTAL_MIB:-1536}
NODE0_FREE_MIB=${NODE0_FREE_MIB:-64}
CHUNK_MIB=${CHUNK_MIB:-8}
HOT_CHUNKS=${HOT_CHUNKS:-16}
ITERS=${ITERS:-16777216}
SWEEP_EVERY=${SWEEP_EVERY:-4}
EPISODES=${EPISODES:-800}
RUN_S=${RUN_S:-480}
SEED=${SEED:-1}
HOT_THRESHOLD_FAULTS=${HOT_THRESHOLD_FAULTS:-0}
NB=/sys/kernel/debug/sched/numa_balancing
TP=/sys/kernel/tracing/events/tiering/tiering_promote_decision
# upstream defaults
declare -A KNOBS=(
	[$NB/scan_delay_ms]=${SCAN_DELAY_MS:-1000}
	[$NB/scan_period_min_ms]=${SCAN_PERIOD_MIN_MS:-1000}
	[$NB/scan_period_max_ms]=${SCAN_PERIOD_MAX_MS:-60000}
	[$NB/scan_size_mb]=${SCAN_SIZE_MB:-256}
	[$NB/hot_threshold_ms]=${HOT_THRESHOLD_MS:-1000}
	[/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps]=${RATE_LIMIT_MBPS:-65536}
)
SCENARIO=numa-hint
# shellcheck source=bench/numa-hint-lib.sh
. "$REPO/bench/numa-hint-lib.sh"

# run MODE: one mode (cfg), from a new layout to RESULT lines
run()
{
	local free wl tail tr line nb_val

	cfg=$1
	# tiering mode, with NUMA_BALANCING_TIERING_FAULTS (4) in faults mode
	nb_val=$([ "$cfg" = faults ] && echo 6 || echo 2)
	echo "bench: === $cfg ==="
	w 0 /proc/sys/kernel/numa_balancing
	w 0 /sys/kernel/mm/numa/demotion_enabled
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sleep 2
	free=$(awk '$3 == "MemFree:" { print int($4 / 1024) }' \
		/sys/devices/system/node/node0/meminfo)
	if [ -z "$fast" ]; then	# the first mode's layout for all
		fast=$((free - NODE0_FREE_MIB))
		[ $fast -gt 0 ] && [ $fast -lt "$TOTAL_MIB" ] ||
			die "node0 has $free MiB free: cannot leave $NODE0_FREE_MIB of it with $TOTAL_MIB in all"
	fi
	echo "bench: $cfg: node0 free $free MiB: $fast MiB of the workload there first"
	result node0_free_mib $free
	result fast_mib $fast

	numactl --cpunodebind=0 -- "$BIN" run -t "$TOTAL_MIB" -f $fast \
		-c "$CHUNK_MIB" -H "$HOT_CHUNKS" -i "$ITERS" -w "$SWEEP_EVERY" \
		-e "$EPISODES" -r "$RUN_S" -s "$SEED" "$cfg" "$CSV" > "$TMP/run.$cfg" &
	wl=$!
	pids+=("$wl")
	tail -n +1 -f --pid=$wl "$TMP/run.$cfg" | grep --line-buffered -vx ready &
	tail=$!
	wait_ready "$TMP/run.$cfg" $wl "$cfg"

	w "$HOT_THRESHOLD_FAULTS" $NB/hot_threshold_faults
	echo "bench: $cfg: numa_balancing $nb_val" \
		"hot_threshold_ms $(cat $NB/hot_threshold_ms)" \
		"hot_threshold_faults $(cat $NB/hot_threshold_faults)"
	tr=
	if [ -e $TP/enable ]; then
		echo > /sys/kernel/tracing/trace
		numactl --cpunodebind=1 --membind=1 -- "$BIN" trace \
			/sys/kernel/tracing/trace_pipe > "$TMP/trace.$cfg" &
		tr=$!
		pids+=("$tr")
		w 1 $TP/enable
	fi
	vmstat "$TMP/vmstat.$cfg.0"
	w 1 /sys/kernel/mm/numa/demotion_enabled
	w "$nb_val" /proc/sys/kernel/numa_balancing
	[ "$(cat /proc/sys/kernel/numa_balancing)" = "$nb_val" ] ||
		die "$cfg: numa_balancing reads $(cat /proc/sys/kernel/numa_balancing), not $nb_val"
	kill -USR1 $wl
	wait $wl || die "$cfg: the workload failed"
	w 0 /proc/sys/kernel/numa_balancing
	vmstat "$TMP/vmstat.$cfg.1"
	wait $tail
	while read -r line; do
		[ "${line%% *}" = RESULT ] || continue
		line=${line#RESULT "$cfg"_}
		R[$cfg.${line%%=*}]=${line#*=}
	done < "$TMP/run.$cfg"
	counter_deltas
	if [ -n "$tr" ]; then
		w 0 $TP/enable
		kill -TERM $tr
		wait $tr
		while read -r line; do
			case $line in
			"RESULT trace_"*)
				line=${line#RESULT }
				result "${line%%=*}" "${line#*=}" ;;
			*) echo "$line" ;;
			esac
		done < "$TMP/trace.$cfg"
	else
		echo "bench: $cfg: no tracepoint tiering:tiering_promote_decision"
	fi
}

# ratio KEY: faults/time of KEY, "-" when time's is 0 or missing
ratio()
{
	awk -v f="${R[faults.$1]:-}" -v t="${R[time.$1]:-}" 'BEGIN {
		if (f ~ /^[0-9.]+$/ && t ~ /^[0-9.]+$/ && t > 0)
			printf "%.2f\n", f / t
		else
			print "-" }'
}

summary()
{
	local m k f="%-7s %8s %8s %8s %8s %8s %9s %9s %9s %9s %8s\n"

	echo
	echo "bench: hot set $((HOT_CHUNKS * CHUNK_MIB)) MiB on node2 at the start;" \
		"promotions are pages seen moving node2 -> node0; times TCG, not hardware"
	printf "bench: $f" mode "hot_prom" "q1_prom" "wrong" "start%" "final%" pgpromote \
		candidate "rej_lat" hint_flt "revisit"
	for m in $MODES; do
		printf "bench: $f" $m ${R[$m.hot_promoted_pages]:--} \
			${R[$m.hot_promoted_q1_pages]:--} \
			${R[$m.wrong_promoted_pages]:--} ${R[$m.hot_initial_pct]:--} \
			${R[$m.hot_final_pct]:--} ${R[$m.pgpromote_success]:--} \
			${R[$m.pgpromote_candidate]:--} \
			${R[$m.pgpromote_reject_latency]:--} \
			${R[$m.numa_hint_faults]:--} ${R[$m.revisit_s]:--}
	done
	[ -n "${R[time.hot_promoted_pages]:-}" ] &&
		[ -n "${R[faults.hot_promoted_pages]:-}" ] || return 0
	cfg=faults_time
	for k in hot_promoted_pages hot_promoted_q1_pages hot_promotions pgpromote_success \
		pgpromote_candidate wrong_promoted_pages hot_final_pct; do
		result "${k}_ratio" "$(ratio $k)"
	done
	echo "bench: seed 000's claim, at lab scale: faults mode >= 3.7x the hot-page" \
		"promotions of time mode: ${R[faults_time.hot_promoted_pages_ratio]}x;" \
		"wrong promotions ${R[time.wrong_promoted_pages]} (time)" \
		"-> ${R[faults.wrong_promoted_pages]} (faults);" \
		"final hot residency ${R[time.hot_final_pct]}% -> ${R[faults.hot_final_pct]}%"
}

setup
echo "bench: $TOTAL_MIB MiB in $CHUNK_MIB MiB chunks, $HOT_CHUNKS hot on node2;" \
	"episode: $ITERS random writes in a hot chunk; a never-hot chunk swept" \
	"after every $SWEEP_EVERY; $EPISODES episodes (at most ${RUN_S}s) per mode; seed $SEED"

for m in $MODES; do
	case $m in
	time | faults) run $m ;;
	*) die "unknown mode $m" ;;
	esac
done
summary
echo "bench: anchor (seeds/000, 192 GB in 1 GB chunks on DRAM + CXL):" \
	"pgpromote_success 1,804,500 (time) -> 6,709,526 (faults), 3.7x;" \
	"latency rejects 10,595,933 -> 4,557,401"
