#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernels: patched
# timeout: 3600
#
# NUMA-balancing hot-page promotion (numa_balancing=2) in the seed's regime
# (seeds/000: every chunk of a footprint larger than DRAM is a candidate, a
# chunk picked uniformly at random gets a long episode of random 4 KiB
# accesses), in one boot of the patched kernel, for each configuration of
# CONFIGS:
#   time         hint latency in ms, hot_threshold_ms 1000 (upstream)
#   time_raised  the same with hot_threshold_ms RAISED_MS (review: "echo
#                100000 > hot_threshold_ms"); time_raised_MS, for a sweep,
#                with hot_threshold_ms MS
#   seed         the RFC's exact design: a clock per mm, stamps in buckets
#                of 2^16 faults, fixed threshold 1,000,000, refresh on
#                (hint_clock=mm); skipped on a kernel without it
#   faults       the series: a clock per lower-tier node, automatic
#                threshold (hint_clock=node), hot_repeat 1, hint_refresh 1
#   faults_norepeat  the same with hot_repeat 0 (the kernel's default):
#                promotion on the first hint fault under the threshold
#   faults_fixed the same with the threshold fixed at its maximum (2^30):
#                no automatic threshold, every first hint fault a candidate
#                (not in the default CONFIGS)
#   faults_norefresh  faults_norepeat with hint_refresh 0: the scanner
#                leaves the stamps of still-PROT_NONE pages alone (the
#                kernel's default; the other faults configurations set
#                hint_refresh 1, as all did before it had a knob; not in
#                the default CONFIGS)
#   seed_scaled  seed with the threshold scaled to the lab's hint-fault
#                rate (SCALED_FAULTS, 110000: the seed's ~48 s window)
# WORKLOAD=uniform (default): one process, TOTAL_MIB in CHUNK_MIB chunks
# (numa-hint run -u).  WORKLOAD=twoproc (bench/scenarios/numa-hint-2proc.sh):
# the same large process, plus a small one started first whose SMALL_MIB
# hot set is all on node2 and which faults rarely (an episode of
# SMALL_ITERS writes, then SMALL_PAUSE_MS of sleep); it reports how much of
# its set ends on node0 (small_hot_final_pct).  Both run for RUN_S (300)
# seconds, with no episode limit (EPISODES 0), so that the small process's
# residency is read after the same time in every configuration.  WORKLOAD=hotchunk
# (bench/scenarios/numa-hint-hotchunk.sh): numa-hint.sh's hot-chunk regime
# with these configurations: HOT_CHUNKS chunks wholly on node2 are hot and
# get every episode, and after every SWEEP_EVERY episodes a never-hot chunk
# is swept once (one write per page: a burst, whose promotion is wrong;
# wrong_promoted_pages).  Runs in the lab guest.
#
# Each configuration starts from the same layout (new processes, the same
# seeds): NUMA balancing and demotion off, node0's free memory but
# NODE0_FREE_MIB filled first, the rest on node2; then the knobs, demotion
# and numa_balancing=2 on, EPISODES episodes of ITERS writes each.
#
# The cost model (stated, not measured): an access costs the lab's HMAT
# latency from CPU0 (node0 10 ns, node2 30 ns; scripts/lab.sh), split by
# where the episode's chunk was before and after it (move_pages(2)); every
# page promoted or demoted (pgpromote_success, pgdemote_kswapd,
# pgdemote_direct) costs a 4 KiB copy, read at its source's HMAT bandwidth
# and written at its destination's (node2 5 GB/s, node0 20 GB/s: 1024 ns a
# page either way).  model_s = access_model_s + migrate_model_s.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$REPO/build/bench/bin/numa-hint
OUTDIR=${BENCH_OUT:-/mnt/lab}
WORKLOAD=${WORKLOAD:-uniform}
CSV=$OUTDIR/numa-hint-$WORKLOAD.csv
CONFIGS=${CONFIGS:-time time_raised seed faults faults_norepeat}
TOTAL_MIB=${TOTAL_MIB:-1536}
NODE0_FREE_MIB=${NODE0_FREE_MIB:-64}
CHUNK_MIB=${CHUNK_MIB:-8}
if [ "$WORKLOAD" = hotchunk ]; then
	ITERS=${ITERS:-16777216}
	EPISODES=${EPISODES:-800}
elif [ "$WORKLOAD" = twoproc ]; then
	ITERS=${ITERS:-6291456}
	EPISODES=${EPISODES:-0}
	RUN_S=${RUN_S:-300}
else
	ITERS=${ITERS:-6291456}
	EPISODES=${EPISODES:-960}
fi
HOT_CHUNKS=${HOT_CHUNKS:-16}
SWEEP_EVERY=${SWEEP_EVERY:-4}
RUN_S=${RUN_S:-900}
SEED=${SEED:-1}
RAISED_MS=${RAISED_MS:-60000}
SCALED_FAULTS=${SCALED_FAULTS:-110000}
SMALL_MIB=${SMALL_MIB:-32}
SMALL_ITERS=${SMALL_ITERS:-8192}
SMALL_PAUSE_MS=${SMALL_PAUSE_MS:-200}
COPY_NS=1024	# 4096 B / 5 GB/s + 4096 B / 20 GB/s
NB=/sys/kernel/debug/sched/numa_balancing
TP=/sys/kernel/tracing/events/tiering/tiering_promote_decision
declare -A KNOBS=(
	[$NB/scan_delay_ms]=${SCAN_DELAY_MS:-1000}
	[$NB/scan_period_min_ms]=${SCAN_PERIOD_MIN_MS:-1000}
	[$NB/scan_period_max_ms]=${SCAN_PERIOD_MAX_MS:-60000}
	[$NB/scan_size_mb]=${SCAN_SIZE_MB:-256}
	[/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps]=${RATE_LIMIT_MBPS:-65536}
)
SCENARIO=numa-hint-seed
# shellcheck source=bench/numa-hint-lib.sh
. "$REPO/bench/numa-hint-lib.sh"

# configure CONFIG: the knobs of one configuration; non-zero if this
# kernel does not have it
configure()
{
	# numa_balancing: 2 (tiering), 6 with NUMA_BALANCING_TIERING_FAULTS
	NB_VAL=6
	[ -e $NB/hot_repeat ] && w 1 $NB/hot_repeat
	[ -e $NB/hint_refresh ] && w 1 $NB/hint_refresh
	case $1 in
	time | time_raised | time_raised_[0-9]*)
		NB_VAL=2
		w 0 $NB/hot_threshold_faults
		[ -e $NB/hint_clock ] && w node $NB/hint_clock
		case $1 in
		time) w 1000 $NB/hot_threshold_ms ;;
		time_raised) w "$RAISED_MS" $NB/hot_threshold_ms ;;
		*) w "${1#time_raised_}" $NB/hot_threshold_ms ;;
		esac ;;
	seed | seed_scaled)
		[ -e $NB/hint_clock ] || return 1
		w 1000 $NB/hot_threshold_ms
		w mm $NB/hint_clock
		w "$([ "$1" = seed ] && echo 1000000 || echo "$SCALED_FAULTS")" \
			$NB/hot_threshold_faults ;;
	faults | faults_norepeat | faults_fixed | faults_norefresh)
		[ "$1" != faults ] && { [ -e $NB/hot_repeat ] || return 1; w 0 $NB/hot_repeat; }
		if [ "$1" = faults_norefresh ]; then
			[ -e $NB/hint_refresh ] || return 1
			w 0 $NB/hint_refresh
		fi
		w 1000 $NB/hot_threshold_ms
		# 0 first: a per-node clock refuses a threshold beyond its range
		w 0 $NB/hot_threshold_faults
		[ -e $NB/hint_clock ] && w node $NB/hint_clock
		[ "$1" = faults_fixed ] && w 1073741824 $NB/hot_threshold_faults ;;
	*) die "unknown configuration $1" ;;
	esac
	# the mode is NB_VAL's bit 4, written when the run starts (run); the
	# case's last test is not this function's answer
	return 0
}

# start LABEL ARGS...: a workload process on CPU0, up to "ready"
start()
{
	local label=$1 p

	shift
	numactl --cpunodebind=0 -- "$BIN" run "$@" "$label" "$CSV" > "$TMP/run.$label" &
	p=$!
	pids+=("$p")
	wait_ready "$TMP/run.$label" "$p" "$label"
	started=$p
}

# collect FILE PREFIX LABEL: its RESULT lines LABEL_key as ${cfg}_PREFIXkey
collect()
{
	local line k

	while read -r line; do
		case $line in
		"RESULT "*)
			line=${line#RESULT }
			k=${line%%=*}
			k=${k#"$3"_}
			result "$2$k" "${line#*=}" ;;
		bench:*) echo "$line" ;;
		esac
	done < "$1"
}

run()
{
	local free big small="" tr=""

	cfg=$1
	echo "bench: === $cfg ==="
	w 0 /proc/sys/kernel/numa_balancing
	w 0 /sys/kernel/mm/numa/demotion_enabled
	configure "$cfg" || { echo "bench: $cfg: not in this kernel (no $NB/hint_clock, hot_repeat or hint_refresh), skipped"; return 0; }
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sleep 2
	if [ "$WORKLOAD" = twoproc ]; then
		# all of it on node2: -f 0; every chunk hot; no sweeps
		start "$cfg-small" -t "$SMALL_MIB" -f 0 -c 1 -H "$SMALL_MIB" -w 0 \
			-i "$SMALL_ITERS" -p "$SMALL_PAUSE_MS" -e 0 -r "$RUN_S" \
			-s $((SEED + 1))
		small=$started
	fi
	free=$(awk '$3 == "MemFree:" { print int($4 / 1024) }' \
		/sys/devices/system/node/node0/meminfo)
	if [ -z "$fast" ]; then
		fast=$((free - NODE0_FREE_MIB))
		[ $fast -gt 0 ] && [ $fast -lt "$TOTAL_MIB" ] ||
			die "node0 has $free MiB free: cannot leave $NODE0_FREE_MIB of it with $TOTAL_MIB in all"
	fi
	echo "bench: $cfg: node0 free $free MiB: $fast MiB of the workload there first"
	result node0_free_mib "$free"
	if [ "$WORKLOAD" = hotchunk ]; then
		start "$cfg" -t "$TOTAL_MIB" -f $fast -c "$CHUNK_MIB" -H "$HOT_CHUNKS" \
			-w "$SWEEP_EVERY" -i "$ITERS" -e "$EPISODES" -r "$RUN_S" -s "$SEED"
	else
		start "$cfg" -u -t "$TOTAL_MIB" -f $fast -c "$CHUNK_MIB" -i "$ITERS" \
			-e "$EPISODES" -r "$RUN_S" -q 5 -s "$SEED"
	fi
	big=$started
	echo "bench: $cfg: numa_balancing $NB_VAL" \
		"mode [$([ $NB_VAL = 6 ] && echo faults || echo time)]" \
		"clock [$(cat $NB/hint_clock 2>/dev/null || echo node)]" \
		"hot_threshold_ms $(cat $NB/hot_threshold_ms)" \
		"hot_threshold_faults $(cat $NB/hot_threshold_faults)" \
		"hot_repeat $(cat $NB/hot_repeat 2>/dev/null || echo -)" \
		"hint_refresh $(cat $NB/hint_refresh 2>/dev/null || echo -)"
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
	w $NB_VAL /proc/sys/kernel/numa_balancing
	[ "$(cat /proc/sys/kernel/numa_balancing)" = "$NB_VAL" ] ||
		die "$cfg: numa_balancing reads $(cat /proc/sys/kernel/numa_balancing), not $NB_VAL"
	[ -n "$small" ] && kill -USR1 "$small"
	kill -USR1 $big
	wait $big || die "$cfg: the workload failed"
	[ -n "$small" ] && { kill -TERM "$small"; wait "$small"; }
	w 0 /proc/sys/kernel/numa_balancing
	vmstat "$TMP/vmstat.$cfg.1"
	collect "$TMP/run.$cfg" "" "$cfg"
	[ -n "$small" ] && collect "$TMP/run.$cfg-small" small_ "$cfg-small"
	counter_deltas
	result migrate_model_s "$(awk -v p="${R[$cfg.pgpromote_success]}" \
		-v k="${R[$cfg.pgdemote_kswapd]}" -v d="${R[$cfg.pgdemote_direct]}" \
		-v c=$COPY_NS 'BEGIN { printf "%.4f\n", (p + k + d) * c / 1e9 }')"
	result model_s "$(awk -v a="${R[$cfg.access_model_s]}" \
		-v s="${R[$cfg.small_access_model_s]:-0}" \
		-v m="${R[$cfg.migrate_model_s]}" 'BEGIN { printf "%.4f\n", a + s + m }')"
	result model_per_ep_ms "$(awk -v m="${R[$cfg.model_s]}" \
		-v e="${R[$cfg.episodes]:-0}" \
		'BEGIN { if (e > 0) printf "%.4f\n", 1000 * m / e; else print "-" }')"
	result wrong_per_useful "$(awk -v u="${R[$cfg.ep_promoted_undone]}" \
		-v k="${R[$cfg.ep_promoted_kept]}" \
		'BEGIN { if (k > 0) printf "%.3f\n", u / k; else print "-" }')"
	if [ -n "$tr" ]; then
		w 0 $TP/enable
		kill -TERM $tr
		wait $tr
		collect "$TMP/trace.$cfg" trace_ trace
	fi
}

summary()
{
	local c f="%-18s %9s %9s %9s %8s %8s %8s %9s %9s %8s %9s %9s %9s %7s\n"

	echo
	echo "bench: $WORKLOAD: model_s = access + migration cost (modelled, s);" \
		"ep_prom: pages promoted during their chunk's episode; undone:" \
		"demoted again before its next one; times other than model TCG"
	printf "bench: $f" config ep_prom kept undone dram% final% wrong pgpromote \
		candidate rej_lat demoted model_s access_s small%
	for c in $CONFIGS; do
		[ -n "${R[$c.episodes]:-}" ] || continue
		printf "bench: $f" "$c" "${R[$c.ep_promoted_pages]:--}" \
			"${R[$c.ep_promoted_kept]:--}" "${R[$c.ep_promoted_undone]:--}" \
			"${R[$c.dram_share_pct]:--}" "${R[$c.hot_final_pct]:--}" \
			"${R[$c.wrong_promoted_pages]:--}" "${R[$c.pgpromote_success]:--}" \
			"${R[$c.pgpromote_candidate]:--}" \
			"${R[$c.pgpromote_reject_latency]:--}" \
			"$((${R[$c.pgdemote_kswapd]:-0} + ${R[$c.pgdemote_direct]:-0}))" \
			"${R[$c.model_s]:--}" "${R[$c.access_model_s]:--}" \
			"${R[$c.small_hot_final_pct]:--}"
	done
}

case $WORKLOAD in uniform | twoproc | hotchunk) ;; *) die "unknown WORKLOAD $WORKLOAD" ;; esac
setup
echo "bench: $WORKLOAD: $TOTAL_MIB MiB in $CHUNK_MIB MiB chunks, a chunk at random" \
	"$([ "$WORKLOAD" = hotchunk ] && echo "of $HOT_CHUNKS hot ones (a never-hot one swept after every $SWEEP_EVERY)")" \
	"per episode, $ITERS random writes each, $EPISODES episodes (0: no limit; at most ${RUN_S}s)" \
	"per configuration; seed $SEED; time_raised: hot_threshold_ms $RAISED_MS"
for c in $CONFIGS; do
	run "$c"
done
summary
