#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# damo's own tiering recipe, scripts/mem_tier.sh, on the lab kernel (run in
# the guest): the check that mainline's recipe runs unchanged on the
# damon-autotune series.
#
#   scripts/lab.sh -t 900 -d DIR "DAMO=/path/to/damo bash bench/scenarios/damo-mem-tier.sh"
#
# DAMO is a checkout of damonitor/damo (not a Debian package: bring it
# yourself).  The recipe is run as damo ships it but for its node ids: it
# assumes a fast node 0 and a slow node 1, the lab's slow node is 2, so
# "--numa_node 1" and "migrate_cold 1" become node 2 (and without
# CONFIG_DAMON_STAT, as on 6.12, its first line may fail: see below).  A cold process
# fills node0's free memory but HOT_FAST_MIB (bench/damon-tiered.c cold),
# then a HOT_MIB hot set is written over and over, bound to nodes 0 and 2
# (damon-tiered hot), for RUN_S.  Printed: the recipe's exit status and
# output, every sysfs file damo wrote, then every 10 s each scheme's
# effective quota and the damon_migrate_* counters, and at the end the
# tuned intervals and the hot set's share on node0 ("RESULT" lines).
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$REPO/build/bench/bin/damon-tiered
ADMIN=/sys/kernel/mm/damon/admin
DAMO=${DAMO:?set DAMO to a damo checkout}
HOT_MIB=${HOT_MIB:-256} HOT_FAST_MIB=${HOT_FAST_MIB:-72} RUN_S=${RUN_S:-180}
OUT=${BENCH_OUT:-/tmp}

[ -x "$DAMO/damo" ] || { echo "no $DAMO/damo"; exit 1; }
[ -x "$BIN" ] || { echo "no $BIN: gcc -O2 -o $BIN bench/damon-tiered.c"; exit 1; }
uname -r
sysctl -q -w vm.watermark_boost_factor=0
echo 0 > /sys/kernel/mm/numa/demotion_enabled

# the recipe, its node ids for this machine and its damo path absolute
sed -e 's/--numa_node 1 /--numa_node 2 /' -e 's/migrate_cold 1 /migrate_cold 2 /' \
	-e "s|^damo_bin=.*|damo_bin=$DAMO/damo|" "$DAMO/scripts/mem_tier.sh" > /tmp/mem_tier.sh
diff "$DAMO/scripts/mem_tier.sh" /tmp/mem_tier.sh

free_kb=$(awk '/MemFree/ { print $4 }' /sys/devices/system/node/node0/meminfo)
cold_mib=$((free_kb / 1024 - HOT_FAST_MIB))
numactl --cpunodebind=0 --membind=0 "$BIN" cold $cold_mib > /tmp/cold.log 2>&1 &
cold=$!
until grep -q ready /tmp/cold.log 2>/dev/null; do sleep 1; done
taskset -c 0 numactl --membind=0,2 "$BIN" hot $HOT_MIB $RUN_S "$OUT/damo-mem-tier.csv" \
	mem_tier 1 > /tmp/hot.log 2>&1 &
hot=$!
sleep 5

bash /tmp/mem_tier.sh > /tmp/recipe.log 2>&1
rc=$?
echo "RESULT mem_tier_rc=$rc"
cat /tmp/recipe.log
# The recipe first turns DAMON_STAT (mainline 6.17, CONFIG_DAMON_STAT) off,
# a module 6.12 does not have: damo then has no "module stat" command and
# the recipe stops there, as it does on a mainline kernel without it.  Run
# it again with that one line allowed to fail.
if [ $rc != 0 ] && [ ! -d /sys/module/damon_stat ]; then
	sed -i 's/ module stat write enabled N$/& || true/' /tmp/mem_tier.sh
	bash /tmp/mem_tier.sh > /tmp/recipe.log 2>&1
	echo "RESULT mem_tier_without_damon_stat_rc=$?"
	cat /tmp/recipe.log
fi
for kd in $ADMIN/kdamonds/*/; do
	[ -d "$kd" ] || continue
	echo "== $kd: state $(cat "$kd/state")"
	(cd "$kd/contexts/0" && grep -r . operations monitoring_attrs/intervals \
		schemes/0/action schemes/0/target_nid schemes/0/apply_interval_us \
		schemes/0/access_pattern schemes/0/quotas schemes/0/filters 2>/dev/null)
done

vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
t=0
while kill -0 $hot 2>/dev/null; do
	sleep 10
	t=$((t + 10))
	line="t=${t}s"
	for i in 0 1; do
		echo update_schemes_effective_quotas > $ADMIN/kdamonds/$i/state 2>/dev/null
		line="$line kd$i:esz=$(cat $ADMIN/kdamonds/$i/contexts/0/schemes/0/quotas/effective_bytes 2>/dev/null)"
	done
	echo "$line hot=$(vm damon_migrate_hot) cold=$(vm damon_migrate_cold) fail=$(vm damon_migrate_fail)" \
		"node0_free_kb=$(awk '/MemFree/ { print $4 }' /sys/devices/system/node/node0/meminfo)"
done
for i in 0 1; do
	echo update_tuned_intervals > $ADMIN/kdamonds/$i/state 2>/dev/null
	echo "RESULT kd${i}_sample_us=$(cat $ADMIN/kdamonds/$i/contexts/0/monitoring_attrs/intervals/sample_us)"
done
echo "RESULT damon_migrate_hot=$(vm damon_migrate_hot) damon_migrate_cold=$(vm damon_migrate_cold)" \
	"damon_migrate_fail=$(vm damon_migrate_fail)"
grep RESULT /tmp/hot.log
"$DAMO/damo" stop
kill $cold
wait
