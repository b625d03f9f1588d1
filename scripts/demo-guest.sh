#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The DAMOS migrate_hot/migrate_cold demo, guest side (run by scripts/demo.sh
# in the lab).
#
#   demo-guest.sh WORKLOAD
#
# WORKLOAD (demo-hotcold) puts a hot set on the slow node and a cold set on a
# fast node.  One kdamond, paddr operations, one target whose regions are the
# physical ranges of both nodes, and two schemes, each kept off the other
# node by an address filter and checking each page with a "young" filter:
#   0: migrate_cold, node0 -> node2: regions idle for COLD_AGE_MS, old pages
#   1: migrate_hot,  node2 -> node0: regions accessed at all, young pages
# Every PERIOD_S it prints where each set's pages are, the migration
# counters of /proc/vmstat and the stats of both schemes; it stops when both
# sets are at least PASS_PCT% on their new node, or after MAX_S.  Exit 0 if
# they are and the schemes' stats account for the pages moved, 1 if not.
# Under TCG each fork costs ~0.1 s: the reporting uses bash builtins where
# it can.
set -u
WORKLOAD=${1:?usage: demo-guest.sh WORKLOAD}
HOT_MIB=64 COLD_MIB=128
FAST=0 SLOW=2
SAMPLE_US=5000 AGGR_US=100000 UPDATE_US=1000000
COLD_AGE_MS=3000 COLD_APPLY_US=1000000
PERIOD_S=3 MAX_S=90 PASS_PCT=95
ADMIN=/sys/kernel/mm/damon/admin
KD=$ADMIN/kdamonds/0
CTX=$KD/contexts/0
STATUS=/tmp/demo-status
VMSTAT_KEYS="pgmigrate_success pgmigrate_fail pgdemote_kswapd pgdemote_direct
	pgpromote_success numa_pages_migrated numa_hint_faults
	damon_migrate_hot damon_migrate_cold damon_migrate_fail"
ULONG_MAX=18446744073709551615
UINT_MAX=4294967295
PAGE_SIZE=$(getconf PAGESIZE)

declare -A P V V0

die()
{
	echo "demo: $*" >&2
	exit 1
}

# w VALUE FILE: write a DAMON sysfs file, or die naming it.
w()
{
	echo "$1" > "$2" 2>/dev/null || die "writing '$1' to $2 failed"
}

# node_ranges NID: the physical address ranges of node NID, one "start end"
# line per run of contiguous memory blocks.  block_size_bytes is hex.
node_ranges()
{
	local bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
	local b start=-1 prev=-2

	for b in $(ls -d /sys/devices/system/node/node$1/memory[0-9]* |
		   sed 's/.*memory//' | sort -n) END; do
		if [ "$b" = END ] || [ "$b" -ne $((prev + 1)) ]; then
			[ $start -ge 0 ] && echo $((start * bs)) $(((prev + 1) * bs))
			start=$b
		fi
		prev=$b
	done
}

# snapshot: read the workload's latest report into P[set.key] (the workload
# replaces it by rename, so one read sees one report) and /proc/vmstat
# into V[key].  /proc/vmstat is read whole first: bash's line reads seek
# back, and a seq_file regenerated with new values tears lines.
snapshot()
{
	local set rest kv k v vmstat

	while read -r set rest; do
		for kv in $rest; do
			P[$set.${kv%=*}]=${kv#*=}
		done
	done < $STATUS
	read -r -d '' vmstat < /proc/vmstat
	while read -r k v; do
		V[$k]=$v
	done <<< "$vmstat"
}

# show_set LABEL SET: one line with SET's pages per node.
show_set()
{
	local pages=${P[$2.pages]} n0=${P[$2.node0]} n1=${P[$2.node1]} n2=${P[$2.node2]}

	printf '%s %-4s %5d pages: node0 %5d (%3d%%)  node1 %5d  node2 %5d (%3d%%)\n' \
		"$1" $2 $pages $n0 $((n0 * 100 / pages)) $n1 $n2 $((n2 * 100 / pages))
}

# pct SET NID: the percentage of SET's pages on node NID, in $REPLY.
pct()
{
	REPLY=$((P[$1.node$2] * 100 / P[$1.pages]))
}

# moved: both sets are at least PASS_PCT% on their new node.
moved()
{
	pct hot $FAST
	[ $REPLY -ge $PASS_PCT ] || return 1
	pct cold $SLOW
	[ $REPLY -ge $PASS_PCT ]
}

# show_vmstat LABEL: the VMSTAT_KEYS deltas since the start.
show_vmstat()
{
	local k line="$1 vmstat:"

	for k in $VMSTAT_KEYS; do
		line+=" $k +$((${V[$k]:-0} - ${V0[$k]:-0}))"
	done
	echo "$line"
}

# show_schemes LABEL: the stats of both schemes, as last updated.
show_schemes()
{
	local i d action nt st na sa

	for i in 0 1; do
		d=$CTX/schemes/$i
		read -r action < $d/action
		read -r nt < $d/stats/nr_tried
		read -r st < $d/stats/sz_tried
		read -r na < $d/stats/nr_applied
		read -r sa < $d/stats/sz_applied
		printf '%s damos %-12s tried %5d regions %8d KiB, applied %5d regions %6d KiB\n' \
			"$1" $action $nt $((st / 1024)) $na $((sa / 1024))
	done
}

# scheme DIR ACTION TARGET_NID NR_MIN NR_MAX AGE_MIN APPLY_US START END YOUNG:
# set up the scheme at DIR, acting on all regions but those in [START, END),
# on pages that are young (YOUNG=N: exclude the not young) or not (Y).
scheme()
{
	w $2 $1/action
	w $3 $1/target_nid
	w $7 $1/apply_interval_us
	w 0 $1/access_pattern/sz/min
	w $ULONG_MAX $1/access_pattern/sz/max
	w $4 $1/access_pattern/nr_accesses/min
	w $5 $1/access_pattern/nr_accesses/max
	w $6 $1/access_pattern/age/min
	w $UINT_MAX $1/access_pattern/age/max
	w 2 $1/filters/nr_filters
	# A 6.12 filter excludes what it matches (matching Y) or what it does
	# not (N).  Not N here: paddr re-checks every filter per folio and
	# takes an addr filter as "not matched", so addr + N excludes all.
	w addr $1/filters/0/type
	w $8 $1/filters/0/addr_start
	w $9 $1/filters/0/addr_end
	w Y $1/filters/0/matching
	# Both schemes are applied in one pass with the same region stats, and
	# the pages one moves land in freed space whose region stats describe
	# the pages that were there: without a per-page check, migrate_hot
	# sends freshly demoted cold pages straight back, and vice versa.
	w young $1/filters/1/type
	w ${10} $1/filters/1/matching
}

damon_setup()
{
	local ranges fast slow start end i=0

	fast=$(node_ranges $FAST)
	slow=$(node_ranges $SLOW)
	[ -n "$fast" ] && [ -n "$slow" ] || die "no memory blocks for node$FAST or node$SLOW"
	ranges=$(printf '%s\n%s\n' "$fast" "$slow" | sort -n)

	w 1 $ADMIN/kdamonds/nr_kdamonds
	w 1 $KD/contexts/nr_contexts
	w paddr $CTX/operations
	w $SAMPLE_US $CTX/monitoring_attrs/intervals/sample_us
	w $AGGR_US $CTX/monitoring_attrs/intervals/aggr_us
	w $UPDATE_US $CTX/monitoring_attrs/intervals/update_us
	w 1 $CTX/targets/nr_targets
	w "$(echo "$ranges" | wc -l)" $CTX/targets/0/regions/nr_regions
	while read -r start end; do
		printf 'demo: region %d: [%#x, %#x)\n' $i $start $end
		w $start $CTX/targets/0/regions/$i/start
		w $end $CTX/targets/0/regions/$i/end
		i=$((i + 1))
	done <<< "$ranges"

	w 2 $CTX/schemes/nr_schemes
	# each scheme excludes the other node's span (its first range's start
	# to its last range's end)
	scheme $CTX/schemes/0 migrate_cold $SLOW 0 0 $((COLD_AGE_MS * 1000 / AGGR_US)) \
		$COLD_APPLY_US ${slow%% *} ${slow##* } Y
	scheme $CTX/schemes/1 migrate_hot $FAST 1 $UINT_MAX 0 \
		0 ${fast%% *} ${fast##* } N
	w on $KD/state
	[ "$(cat $KD/state)" = on ] || die "kdamond did not start"
}

cleanup()
{
	[ -e $KD/state ] && echo off > $KD/state 2>/dev/null
	[ -n "${wpid:-}" ] && kill $wpid 2>/dev/null && wait $wpid 2>/dev/null
}
trap cleanup EXIT

echo "demo: $(uname -r); tiers: $(for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	printf '%s=node%s ' ${t##*/} "$(cat $t/nodelist)"; done)"
# NUMA balancing would move pages too: keep it off so that DAMOS alone does
echo 0 > /proc/sys/kernel/numa_balancing

rm -f $STATUS
"$WORKLOAD" $HOT_MIB $SLOW $COLD_MIB $FAST $STATUS &
wpid=$!
for i in $(seq 300); do
	[ -s $STATUS ] && break
	kill -0 $wpid 2>/dev/null || die "workload died"
	sleep 0.1
done
[ -s $STATUS ] || die "workload did not report"
snapshot
for k in "${!V[@]}"; do
	V0[$k]=${V[$k]}
done
init_hot=$(show_set "initial" hot)
init_cold=$(show_set "initial" cold)
init_hot_fast=${P[hot.node$FAST]}
init_cold_slow=${P[cold.node$SLOW]}
echo "$init_hot"
echo "$init_cold"

damon_setup
start=$SECONDS
echo "demo: kdamond $(cat $KD/pid) on; sample ${SAMPLE_US}us aggr ${AGGR_US}us;" \
	"cold: 0 accesses for ${COLD_AGE_MS}ms, hot: >= 1 access"

while :; do
	sleep $PERIOD_S
	w update_schemes_stats $KD/state
	snapshot
	t=$(printf '[%3ds]' $((SECONDS - start)))
	show_set "$t" hot
	show_set "$t" cold
	show_vmstat "$t"
	show_schemes "$t"
	if moved; then
		echo "demo: both sets moved after $((SECONDS - start))s"
		break
	fi
	[ $((SECONDS - start)) -ge $MAX_S ] && break
done

w update_schemes_stats $KD/state
w off $KD/state
echo
echo "=== summary ($((SECONDS - start))s of DAMON) ==="
sleep 2		# a report made with DAMON off
snapshot
echo "$init_hot"
show_set "final  " hot
echo "$init_cold"
show_set "final  " cold
read -r sz_cold < $CTX/schemes/0/stats/sz_applied
read -r sz_hot < $CTX/schemes/1/stats/sz_applied
cold_applied=$((sz_cold / PAGE_SIZE))
hot_applied=$((sz_hot / PAGE_SIZE))
cold_moved=$((${P[cold.node$SLOW]} - init_cold_slow))
hot_moved=$((${P[hot.node$FAST]} - init_hot_fast))
echo "cold set node$FAST->node$SLOW: $cold_moved pages;" \
	"DAMOS migrate_cold applied to $cold_applied pages"
echo "hot set  node$SLOW->node$FAST: $hot_moved pages;" \
	"DAMOS migrate_hot  applied to $hot_applied pages"
show_vmstat "since start,"
echo "(pgmigrate_success counts both directions; migrate_cold also moves" \
	"other idle pages of node$FAST, e.g. page cache)"

pct hot $FAST
hot_pct=$REPLY
pct cold $SLOW
cold_pct=$REPLY
if [ $hot_applied -lt $hot_moved ] || [ $cold_applied -lt $cold_moved ]; then
	echo "FAIL: the DAMOS stats miss pages that moved"
	exit 1
fi
if moved; then
	echo "PASS: hot set ${hot_pct}% on node$FAST, cold set ${cold_pct}% on node$SLOW"
	exit 0
fi
echo "FAIL: hot set ${hot_pct}% on node$FAST, cold set ${cold_pct}% on node$SLOW (want >= ${PASS_PCT}%)"
exit 1
