#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Demotion by reclaim (runs in the lab guest).
#
# With demotion on, NUMA balancing and THP off and no swap, a process bound to
# node0 (CPU and memory) allocates and touches 1.3x node0's memory.  node0
# fills up, so kswapd (and direct reclaim) must demote node0 pages to node2,
# the lower tier, for the process to finish without an OOM kill.
#
# RESULT keys: size_mb, elapsed_s, pages_nodeN and pages_absent (where the
# process's pages are at the end, from move_pages(2)), fill_rc, and the
# /proc/vmstat deltas pgdemote_kswapd, pgdemote_direct and oom_kill.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FILL=$REPO/build/bench/bin/fill

COUNTERS=(pgdemote_kswapd pgdemote_direct oom_kill)
declare -A before
vmstat_get() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

echo 1 > /sys/kernel/mm/numa/demotion_enabled
echo 0 > /proc/sys/kernel/numa_balancing
echo never > /sys/kernel/mm/transparent_hugepage/enabled
sync
echo 3 > /proc/sys/vm/drop_caches

for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	echo "bench: $(basename "$t"): nodes $(cat "$t/nodelist")"
done
node0_kb=$(awk '$3 == "MemTotal:" { print $4 }' /sys/devices/system/node/node0/meminfo)
size_mb=$((node0_kb * 13 / 10 / 1024))
echo "bench: node0 MemTotal $((node0_kb / 1024)) MiB, filling $size_mb MiB bound to node0"
echo "RESULT size_mb=$size_mb"

for k in "${COUNTERS[@]}"; do before[$k]=$(vmstat_get "$k"); done
rc=0
numactl --cpunodebind=0 --membind=0 "$FILL" "$size_mb" || rc=$?
echo "RESULT fill_rc=$rc"
for k in "${COUNTERS[@]}"; do
	echo "RESULT $k=$(($(vmstat_get "$k") - before[$k]))"
done
