#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make run, guest side (run by scripts/demo.sh in the lab): the recommended
# tiering setup, tools/mm/damon-tiering.sh, on workload W1 of the policy
# bench (bench/phases.c, bench/scenarios/tiering-policies.sh).
#
#   demo-guest.sh PHASES
#
# damon-tiering.sh starts its two self-tuned kdamonds on node0 (fast) and
# node2 (slow); NUMA balancing stays off, reclaim demotion on.  Then PHASES
# maps 1.5x node0's memory in 10 regions of equal size, bound to node0 and
# node2, and writes it once in order: the first regions fill node0, the
# rest land on node2.  For 3 phases of 60 s it accesses the regions, each
# with its own weight, and each phase ranks the regions anew (seed 42):
# when a phase starts, most of its hot memory is on node2.  Every 2 s
# (TCG seconds) a line: the share of accesses that node0 serves, against
# the oracle's, which holds the hottest regions first in node0's free
# memory; the pages that changed node since the last line; what DAMON's
# schemes moved so far.  At each phase change, damon-tiering.sh show.  At
# the end, per phase the share over its second half against the oracle's
# and the seconds to reach 90% of the oracle.
# Exit 0 if the workload ran and both schemes moved pages, 1 if not.
set -u
PHASES=${1:?usage: demo-guest.sh PHASES}
FAST=0 SLOW=2 REGIONS=10 NR_PHASES=3 PHASE_S=60 SEED=42
TOOL=$(cd "$(dirname "$0")/.." && pwd)/tools/mm/damon-tiering.sh
TMP=$(mktemp -d)
wpid=

die()
{
	echo "demo: $*" >&2
	exit 1
}

cleanup()
{
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
	"$TOOL" stop 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# damon_moved: "HOT COLD FAIL", the damon_migrate_* counters, in $REPLY
damon_moved()
{
	local k v vmstat hot=0 cold=0 fail=0

	read -r -d '' vmstat < /proc/vmstat
	while read -r k v; do
		case $k in
		damon_migrate_hot) hot=$v ;;
		damon_migrate_cold) cold=$v ;;
		damon_migrate_fail) fail=$v ;;
		esac
	done <<< "$vmstat"
	REPLY="$hot $cold $fail"
}

# follow: a line per sample of the workload's CSV, until it exits
follow()
{
	local t phase share oracle moved last=-1 hot cold fail

	tail -n +2 -F --pid="$wpid" "$TMP/w1.csv" 2>/dev/null |
	while IFS=, read -r t phase share oracle _ _ _ moved; do
		if [ "$phase" != "$last" ]; then
			echo "demo: phase $phase: the regions' ranking changes"
			"$TOOL" show | sed 's/^/demo:   /'
			last=$phase
		fi
		damon_moved
		read -r hot cold fail <<< "$REPLY"
		printf 'demo: [%5.0f s] phase %d: node0 serves %.3f of accesses, oracle %.3f (%3.0f%%); %6d pages moved; DAMON hot +%d cold +%d fail +%d\n' \
			"$t" "$phase" "$share" "$oracle" "$(awk -v s="$share" -v o="$oracle" 'BEGIN { print 100 * s / o }')" \
			"$moved" $((hot - H0)) $((cold - C0)) $((fail - F0))
	done
}

echo "demo: $(uname -r); tiers: $(for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	printf '%s=node%s ' "${t##*/}" "$(cat "$t/nodelist")"; done)"
echo 0 > /proc/sys/kernel/numa_balancing
echo true > /sys/kernel/mm/numa/demotion_enabled
sync
echo 3 > /proc/sys/vm/drop_caches
echo 1 > /proc/sys/vm/compact_memory
echo "demo: $TOOL start $FAST $SLOW"
"$TOOL" start $FAST $SLOW | sed 's/^/demo: /'
[ "${PIPESTATUS[0]}" = 0 ] || die "damon-tiering.sh start failed"
damon_moved
read -r H0 C0 F0 <<< "$REPLY"
total_kb=$(awk '$3 == "MemTotal:" { print $4 }' /sys/devices/system/node/node$FAST/meminfo)
mib=$((total_kb * 3 / 2 / 1024))
echo "demo: W1: $mib MiB in $REGIONS regions, bound to node$FAST and node$SLOW, CPU on node$FAST;" \
	"$NR_PHASES phases of $PHASE_S s (TCG: emulated time)"
numactl --cpunodebind=$FAST "$PHASES" $mib $REGIONS $NR_PHASES $PHASE_S $SEED "$TMP/w1.csv" \
	> "$TMP/w1.out" &
wpid=$!
while ! [ -s "$TMP/w1.csv" ] && kill -0 $wpid 2>/dev/null; do
	sleep 1
done
follow
wait $wpid || die "the workload failed: $(cat "$TMP/w1.out")"
wpid=
grep -v '^RESULT' "$TMP/w1.out" | sed 's/^/demo: /'
declare -A R
while read -r line; do
	[ "${line%% *}" = RESULT ] || continue
	line=${line#RESULT }
	R[${line%%=*}]=${line#*=}
done < "$TMP/w1.out"
for ((p = 0; p < NR_PHASES; p++)); do
	printf 'demo: phase %d: node0 served %.3f of accesses over its second half, oracle %.3f (%.0f%%); 90%% of the oracle %s\n' \
		$p "${R[share_$p]}" "${R[oracle_$p]}" \
		"$(awk -v s="${R[share_$p]}" -v o="${R[oracle_$p]}" 'BEGIN { print 100 * s / o }')" \
		"$([ "${R[reach90_s_$p]}" = -1.0 ] && echo "not reached" || echo "after ${R[reach90_s_$p]} s")"
done
damon_moved
read -r hot cold fail <<< "$REPLY"
printf 'demo: all phases: %.3f of %.3f (%.0f%% of the oracle); DAMON moved %d pages hot, %d cold, %d failed; %d pages moved back within a phase\n' \
	"${R[share_late_mean]}" "${R[oracle_mean]}" \
	"$(awk -v s="${R[share_late_mean]}" -v o="${R[oracle_mean]}" 'BEGIN { print 100 * s / o }')" \
	$((hot - H0)) $((cold - C0)) $((fail - F0)) "${R[pingpong_pages]}"
"$TOOL" show | sed 's/^/demo:   /'
if [ $((hot - H0)) = 0 ] || [ $((cold - C0)) = 0 ]; then
	die "a scheme moved nothing"
fi
echo "demo: ok"
