#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The DAMOS migrate_hot/migrate_cold demo, guest side (run by scripts/demo.sh
# in the lab).
#
#   demo-guest.sh WORKLOAD
#
# WORKLOAD (demo-hotcold) puts a hot set on the slow node and a cold set on a
# fast node.  One kdamond, paddr operations, one target whose regions are the
# physical ranges of both nodes, and two schemes, each limited to its node
# by an address filter:
#   0: migrate_cold, node0 -> node2, regions not accessed for COLD_AGE_MS
#   1: migrate_hot,  node2 -> node0, regions accessed at all
# Every PERIOD_S it prints where each set's pages are, the migration
# counters of /proc/vmstat and the stats of both schemes; it stops when both
# sets are at least PASS_PCT% on their new node, or after MAX_S.  Exit 0 if
# they are, 1 if not.
set -u
WORKLOAD=${1:?usage: demo-guest.sh WORKLOAD}
HOT_MIB=64 COLD_MIB=128
FAST=0 SLOW=2
SAMPLE_US=5000 AGGR_US=100000 UPDATE_US=1000000
COLD_AGE_MS=3000
PERIOD_S=3 MAX_S=90 PASS_PCT=95
ADMIN=/sys/kernel/mm/damon/admin
KD=$ADMIN/kdamonds/0
CTX=$KD/contexts/0
STATUS=/tmp/demo-status
VMSTAT_KEYS="pgmigrate_success pgmigrate_fail pgdemote_kswapd pgdemote_direct
	pgpromote_success numa_pages_migrated numa_hint_faults"
ULONG_MAX=18446744073709551615
UINT_MAX=4294967295

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

# vmstat: the counters of VMSTAT_KEYS, as "key value" lines.
vmstat()
{
	local k

	for k in $VMSTAT_KEYS; do
		echo "$k $(awk -v k=$k '$1 == k { print $2 }' /proc/vmstat)"
	done
}

# placement SET: "<pages> <on node0> <on node1> <on node2>" of SET.
placement()
{
	awk -v set=$1 '$1 == set {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print v["pages"], v["node0"] + 0, v["node1"] + 0, v["node2"] + 0
	}' $STATUS
}

# show_set LABEL SET: one line with SET's pages per node.
show_set()
{
	local pages n0 n1 n2

	read -r pages n0 n1 n2 <<< "$(placement $2)"
	printf '%s %-4s %5d pages: node0 %5d (%3d%%)  node1 %5d  node2 %5d (%3d%%)\n' \
		"$1" $2 $pages $n0 $((n0 * 100 / pages)) $n1 $n2 \
		$((n2 * 100 / pages))
}

# pct SET NID: the percentage of SET's pages on node NID.
pct()
{
	local pages n0 n1 n2 n

	read -r pages n0 n1 n2 <<< "$(placement $1)"
	eval n=\$n$2
	echo $((n * 100 / pages))
}

# scheme_stat IDX FILE: a stats file of scheme IDX.
scheme_stat()
{
	cat $CTX/schemes/$1/stats/$2
}

show_schemes()
{
	local i

	w update_schemes_stats $KD/state
	for i in 0 1; do
		printf '%s damos %-12s tried %6d regions %7d KiB, applied %6d regions %7d KiB\n' \
			"$1" $(cat $CTX/schemes/$i/action) \
			$(scheme_stat $i nr_tried) $(($(scheme_stat $i sz_tried) / 1024)) \
			$(scheme_stat $i nr_applied) $(($(scheme_stat $i sz_applied) / 1024))
	done
}

# show_vmstat LABEL BASE: the VMSTAT_KEYS deltas since BASE (a vmstat output).
show_vmstat()
{
	echo "$1 vmstat:$(vmstat | awk -v base="$2" 'BEGIN {
		n = split(base, line, "\n")
		for (i = 1; i <= n; i++) { split(line[i], kv, " "); b[kv[1]] = kv[2] }
	} { printf " %s +%d", $1, $2 - b[$1] }')"
}

# scheme DIR ACTION TARGET_NID NR_MIN NR_MAX AGE_MIN START END: set up the
# scheme at DIR, acting only on [START, END).
scheme()
{
	w $2 $1/action
	w $3 $1/target_nid
	w 0 $1/access_pattern/sz/min
	w $ULONG_MAX $1/access_pattern/sz/max
	w $4 $1/access_pattern/nr_accesses/min
	w $5 $1/access_pattern/nr_accesses/max
	w $6 $1/access_pattern/age/min
	w $UINT_MAX $1/access_pattern/age/max
	# in 6.12 a filter excludes what it matches (matching Y) or what it
	# does not match (matching N): this one excludes all but [START, END)
	w 1 $1/filters/nr_filters
	w addr $1/filters/0/type
	w $7 $1/filters/0/addr_start
	w $8 $1/filters/0/addr_end
	w N $1/filters/0/matching
}

damon_setup()
{
	local ranges fast slow i=0

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
	w $(echo "$ranges" | wc -l) $CTX/targets/0/regions/nr_regions
	while read -r start end; do
		echo "region $i: [$(printf '%#x' $start), $(printf '%#x' $end))"
		w $start $CTX/targets/0/regions/$i/start
		w $end $CTX/targets/0/regions/$i/end
		i=$((i + 1))
	done <<< "$ranges"

	w 2 $CTX/schemes/nr_schemes
	# a node's span: from its first range's start to its last range's end
	scheme $CTX/schemes/0 migrate_cold $SLOW 0 0 $((COLD_AGE_MS * 1000 / AGGR_US)) \
		$(echo "$fast" | head -1 | cut -d' ' -f1) $(echo "$fast" | tail -1 | cut -d' ' -f2)
	scheme $CTX/schemes/1 migrate_hot $FAST 1 $UINT_MAX 0 \
		$(echo "$slow" | head -1 | cut -d' ' -f1) $(echo "$slow" | tail -1 | cut -d' ' -f2)
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
	printf '%s=node%s ' ${t##*/} $(cat $t/nodelist); done)"
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
init_hot=$(show_set "initial" hot)
init_cold=$(show_set "initial" cold)
echo "$init_hot"
echo "$init_cold"
vm0=$(vmstat)

damon_setup
start=$SECONDS
echo "demo: kdamond $(cat $KD/pid) on; sample ${SAMPLE_US}us aggr ${AGGR_US}us," \
	"cold = 0 accesses for ${COLD_AGE_MS}ms, hot = >= 1 access"

while :; do
	sleep $PERIOD_S
	t=$(printf '[%3ds]' $((SECONDS - start)))
	show_set "$t" hot
	show_set "$t" cold
	show_vmstat "$t" "$vm0"
	show_schemes "$t"
	if [ $(pct hot $FAST) -ge $PASS_PCT ] && [ $(pct cold $SLOW) -ge $PASS_PCT ]; then
		echo "demo: both sets moved after $((SECONDS - start))s"
		break
	fi
	[ $((SECONDS - start)) -ge $MAX_S ] && break
done

w update_schemes_stats $KD/state
echo
echo "=== summary ($((SECONDS - start))s of DAMON) ==="
echo "$init_hot"
show_set "final  " hot
echo "$init_cold"
show_set "final  " cold
cold_pages=$(($(scheme_stat 0 sz_applied) / 4096))
hot_pages=$(($(scheme_stat 1 sz_applied) / 4096))
echo "DAMOS migrate_cold node$FAST->node$SLOW: $cold_pages pages ($(scheme_stat 0 nr_applied) regions)"
echo "DAMOS migrate_hot  node$SLOW->node$FAST: $hot_pages pages ($(scheme_stat 1 nr_applied) regions)"
show_vmstat "since start," "$vm0"
echo "(pgmigrate_success counts both directions; the cold scheme also moves" \
	"other idle pages of node$FAST, e.g. page cache)"
w off $KD/state

hot_pct=$(pct hot $FAST)
cold_pct=$(pct cold $SLOW)
if [ $hot_pct -ge $PASS_PCT ] && [ $cold_pct -ge $PASS_PCT ]; then
	echo "PASS: hot set ${hot_pct}% on node$FAST, cold set ${cold_pct}% on node$SLOW"
	exit 0
fi
echo "FAIL: hot set ${hot_pct}% on node$FAST, cold set ${cold_pct}% on node$SLOW (want >= ${PASS_PCT}%)"
exit 1
