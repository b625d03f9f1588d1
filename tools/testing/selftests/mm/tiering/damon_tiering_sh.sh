#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/mm/damon-tiering.sh: a failed start leaves nothing of its own
# running; start, update and stop leave another user's kdamond running
# with its configuration (one set up through sysfs, and one of damo's if
# $DAMO names damo); every fast node of the machine gets its two
# kdamonds, from all of its slow nodes; update follows memory that goes
# offline and comes back; DAMON_TIERING_FLOOR=1 sets the promotion floor;
# start takes a kdamond left off with a context (as damo stop leaves
# it); start and stop work beside kdamonds that keep DAMON's sysfs lock
# busy; stop leaves a kdamond another writer reconfigured; update does
# not wait for a commit past 30 s.
# Needs root, DAMON sysfs with temporal_capped and a CPU-less node in a
# lower memory tier (scripts/lab.sh); skips elsewhere.
ADMIN=/sys/kernel/mm/damon/admin
KDS=$ADMIN/kdamonds
NODES=/sys/devices/system/node
MEM=/sys/devices/system/memory
HERE=$(cd "$(dirname "$0")" && pwd)
TOOL=${DAMON_TIERING_SH:-}
for t in "$HERE/damon-tiering.sh" "$HERE/../../../../mm/damon-tiering.sh"; do
	[ -n "$TOOL" ] || { [ -x "$t" ] && TOOL=$t; }
done
export DAMON_TIERING_STATE=/run/damon-tiering-test
PASS=0 FAIL=0 SKIP=0 N=0

ok() { N=$((N + 1)); PASS=$((PASS + 1)); echo "ok $N $1"; }
fail() { N=$((N + 1)); FAIL=$((FAIL + 1)); echo "not ok $N $1"; }
skip() { N=$((N + 1)); SKIP=$((SKIP + 1)); echo "ok $N $1 # SKIP $2"; }
log() { echo "# $*"; }
# check NAME CONDITION...: a test's verdict, saying what failed
check() {
	local name=$1

	shift
	if "$@"; then
		return 0
	fi
	log "$name: expected: $*"
	return 1
}

skip_all() { echo "1..0 # SKIP $1"; exit 4; }
[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -n "$TOOL" ] || skip_all "no damon-tiering.sh (set DAMON_TIERING_SH)"
[ -d $KDS ] || skip_all "no DAMON sysfs"
[ -d /sys/devices/virtual/memory_tiering ] || skip_all "no memory tiers"

nr_kd() { cat $KDS/nr_kdamonds; }
# kd IDX FILE: kdamond IDX's state or pid, read again for up to a second
# while it fails: DAMON's sysfs takes its lock with a trylock for them, and
# a running kdamond holds it for a moment at its samples
kd() {
	local i v

	for ((i = 0; i < 100; i++)); do
		v=$(cat $KDS/"$1"/"$2" 2>/dev/null) && { echo "$v"; return 0; }
		sleep 0.01
	done
	return 1
}
# kd_cmd IDX CMD: CMD written to kdamond IDX's state, again while busy
kd_cmd() { (. "$TOOL"; kd_cmd "$@"); }
running() {	# the indexes of the running kdamonds
	local i

	for ((i = 0; i < $(nr_kd); i++)); do
		[ "$(kd $i state)" = on ] && echo "$i"
	done
	return 0
}
[ -z "$(running)" ] || skip_all \
	"kdamond $(running | head -1) is running: the tests need DAMON to themselves"

# dump IDX: the configuration of kdamond IDX, file=value, without what the
# kdamond writes
dump() {
	(cd $KDS/"$1" && find . -type f ! -path '*/stats/*' ! -path '*/tried_regions/*' \
		! -name effective_bytes ! -name state ! -name pid ! -name sample_us \
		! -name aggr_us -perm -u=r -print0 | sort -z |
		xargs -0 grep -H . 2>/dev/null)
}
# in_use: kdamond directories that are on or hold a context
in_use() {
	local i

	for ((i = 0; i < $(nr_kd); i++)); do
		[ "$(kd $i state)" = off ] && [ "$(cat $KDS/$i/contexts/nr_contexts)" = 0 ] ||
			echo "$i"
	done
	return 0
}
# own FIELD: a field of the kdamond lines of the script's state file
own() { awk -v f="$1" '$1 == "kdamond" { print $f }' "$DAMON_TIERING_STATE" 2>/dev/null; }
# ranges IDX: the monitored ranges of kdamond IDX, "start end" a line
ranges() {
	local r

	for r in $KDS/"$1"/contexts/0/targets/0/regions/[0-9]*; do
		echo "$(cat "$r"/start) $(cat "$r"/end)"
	done | sort -n
}
# node_ranges NID: the online memory of node NID, "start end" a line
node_ranges() {
	(. "$TOOL"; node_ranges "$1")
}
has_memory() {
	(. "$TOOL"; has_memory "$1")
}
cleanup_all() {	# the test's own kdamonds: off, and none left
	local i

	"$TOOL" stop > /dev/null 2>&1
	for i in $(running); do kd_cmd "$i" off; done
	echo 0 > $KDS/nr_kdamonds
}
trap cleanup_all EXIT

# the fast nodes the script would tier by default: "FAST TARGET SLOW..." a
# line
PAIRS=$(. "$TOOL"; default_groups 2> /dev/null)
[ -n "$PAIRS" ] || skip_all "no demotion pair: the machine has no lower memory tier"
FAST=$(echo "$PAIRS" | head -1 | cut -d' ' -f1)
SLOW=$(echo "$PAIRS" | head -1 | cut -d' ' -f2)
SLOWS=$(echo "$PAIRS" | head -1 | cut -d' ' -f3-)
# nodes_ranges NID...: the online memory of the nodes, "start end" a line
nodes_ranges() {
	(. "$TOOL"; nodes_ranges "$@")
}
log "tiers: $(for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	printf '%s=%s ' "${t##*/}" "$(cat "$t"/nodelist)"; done)"
log "pairs: $(echo "$PAIRS" | tr ' ' : | tr '\n' ' ')"
echo "TAP version 13"
echo "1..13"

# 1. an injected failure at each kdamond's start leaves nothing running
# and DAMON's directories as they were
name=start_failure_leaves_nothing
res=0
nk=$((2 * $(echo "$PAIRS" | wc -l)))
for k in $(seq 1 $nk); do
	out=$(DAMON_TIERING_FAIL_ON=$k "$TOOL" start 2>&1)
	rc=$?
	log "FAIL_ON=$k: rc $rc: $out"
	check $name [ $rc != 0 ] || res=1
	check $name [ -z "$(running)" ] || res=1
	check $name [ "$(nr_kd)" = 0 ] || res=1
	check $name [ ! -e "$DAMON_TIERING_STATE" ] || res=1
done
# and so does a DAMON_TIERING_FLOOR that is neither 0 nor 1
out=$(DAMON_TIERING_FLOOR=2 "$TOOL" start 2>&1)
rc=$?
log "DAMON_TIERING_FLOOR=2: rc $rc: $out"
check $name [ $rc != 0 ] || res=1
check $name [ -z "$(running)" ] || res=1
check $name [ "$(nr_kd)" = 0 ] || res=1
[ $res = 0 ] && ok $name || fail $name
cleanup_all

# 2. every fast node gets its kdamonds: migrate_cold on FAST to its
# demotion target, migrate_hot on its slow nodes to FAST, both with a goal
# on FAST and no promotion floor
name=start_tiers_every_pair
res=0
if ! out=$("$TOOL" start 2>&1); then
	log "start failed: $out"
	res=1
else
	log "$out"
	check $name [ "$(own 2 | wc -l)" = "$nk" ] || res=1
	while read -r f t sl; do
		for a in "migrate_cold $t $f" "migrate_hot $f $sl"; do
			read -r action nid node <<< "$a"
			idx=$(awk -v a="$action" -v n="$nid" \
				'$1 == "kdamond" && $4 == a && $5 == n { print $2 }' \
				"$DAMON_TIERING_STATE")
			d=$KDS/$idx/contexts/0/schemes/0
			log "pair $f:${sl// /,}: kdamond $idx: $(cat $d/action)" \
				"to $(cat $d/target_nid)," \
				"goal $(cat $d/quotas/goals/0/target_metric)" \
				"on node$(cat $d/quotas/goals/0/nid)," \
				"tuner $(cat $d/quotas/goal_tuner), $(kd $idx state)"
			check $name [ -n "$idx" ] || { res=1; continue; }
			check $name [ "$(kd $idx state)" = on ] || res=1
			check $name [ "$(cat $d/action)" = "$action" ] || res=1
			check $name [ "$(cat $d/target_nid)" = "$nid" ] || res=1
			check $name [ "$(cat $d/quotas/goals/0/nid)" = "$f" ] || res=1
			check $name [ "$(cat $d/quotas/goal_tuner)" = temporal_capped ] || res=1
			# shellcheck disable=SC2086
			check $name [ "$(ranges "$idx")" = "$(nodes_ranges $node)" ] || res=1
			if [ -e $d/floor_nid ]; then
				check $name [ "$(cat $d/floor_nid)" = -1 ] || res=1
			fi
		done
	done <<< "$PAIRS"
	# a second start refuses and changes nothing
	pids=$(own 3)
	check $name eval '! "$TOOL" start > /dev/null 2>&1' || res=1
	check $name [ "$(own 3)" = "$pids" ] || res=1
fi
[ $res = 0 ] && ok $name || fail $name

# 3. with two CXL nodes (lab.sh -C), node0 demotes to node2 and node1 to
# node3, and the script tiers both pairs
name=two_cxl_pairs
if [ -d $NODES/node3 ] && has_memory 3 && [ -z "$(cat $NODES/node3/cpulist)" ] &&
	[ -e $NODES/node3/access0/initiators/node1 ]; then
	res=0
	check $name [ "$PAIRS" = "$(printf '0 2 2\n1 3 3')" ] || res=1
	# node3 is in node2's tier, below node0's and node1's
	t2=$(grep -l '' /sys/devices/virtual/memory_tiering/memory_tier*/nodelist |
		while read -r f; do (. "$TOOL"; nodes_of "$(cat "$f")") | grep -qx 2 && echo \
			"$f"; done)
	t0=$(grep -l '' /sys/devices/virtual/memory_tiering/memory_tier*/nodelist |
		while read -r f; do (. "$TOOL"; nodes_of "$(cat "$f")") | grep -qx 0 && echo \
			"$f"; done)
	check $name [ -n "$t2" ] || res=1
	check $name [ "$t2" != "$t0" ] || res=1
	check $name eval '(. "$TOOL"; nodes_of "$(cat "$t2")") | grep -qx 3' || res=1
	check $name eval '(. "$TOOL"; nodes_of "$(cat "$t0")") | grep -qx 1' || res=1
	# reclaim on node1, which a process bound to it fills, demotes to node3
	echo 1 > /sys/kernel/mm/numa/demotion_enabled
	numactl --cpunodebind=1 --membind=1 python3 -c "
import time
b = bytearray(b'x') * (1200 << 20)
print('ready', flush=True)
time.sleep(600)" > /tmp/dt-demote.out 2>&1 &
	hog=$!
	while ! grep -q ready /tmp/dt-demote.out 2> /dev/null && kill -0 $hog 2> /dev/null; do
		sleep 1
	done
	maps=$(awk '/anon/ { for (i = 1; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split($i, a, "=");
		n[a[1]] += a[2] } } END { for (k in n) printf "%s=%d ", k, n[k] \
			}' /proc/$hog/numa_maps)
	log "a 1200 MiB process bound to node1: pages $maps"
	kill $hog
	wait $hog 2> /dev/null
	n3=$(echo "$maps" | tr ' ' '\n' | sed -n 's/^N3=//p')
	check $name [ "${n3:-0}" -gt 8192 ] || res=1
	check $name eval '! echo "$maps" | grep -q "N2="' || res=1
	[ $res = 0 ] && ok $name || fail $name
else
	skip $name "no second CXL node (node3 with memory, no CPU, initiator node1: lab.sh -C)"
fi

# 4. show returns, naming every kdamond of the script with the ranges its
# sysfs regions hold (in hex: slow nodes often start above 4 GiB)
name=show
t0=$(date +%s%N)
out=$("$TOOL" show 2>&1)
ms=$((($(date +%s%N) - t0) / 1000000))
echo "$out" | sed 's/^/# /'
log "show took $ms ms"
bad=
for idx in $(awk '$1 == "kdamond" { print $2 }' "$DAMON_TIERING_STATE"); do
	want=$(for r in $KDS/"$idx"/contexts/0/targets/0/regions/[0-9]*; do
		echo "$(cat "$r"/start) $(cat "$r"/end)"
	done | sort -n | while read -r a b; do printf '0x%x-0x%x\n' "$a" "$b"; done | paste -sd ' ')
	got=$(echo "$out" | awk -v k="$idx" '$1 == "kdamond" { cur = $2 }
		cur == k && $1 == "ranges" { sub(/^ *ranges /, ""); print }')
	[ "$got" = "$want" ] ||
		{ log "kdamond $idx: show says ranges '$got', sysfs '$want'"; bad=1; }
done
[ "$(echo "$out" | grep -c '^kdamond .* (pid ')" = "$nk" ] && [ -z "$bad" ] && ok $name ||
	fail $name

# 5. update follows a memory block of a slow node that goes offline and
# comes back, without restarting the kdamond
name=update_follows_hotplug
idx=$(awk -v n="$FAST" '$1 == "kdamond" && $4 == "migrate_hot" && $5 == n { print $2 }' \
	"$DAMON_TIERING_STATE")
blocks=$(ls -d $NODES/node"$SLOW"/memory[0-9]* 2> /dev/null | sed 's/.*memory//' | sort -n)
blk=
# a block that is offline (a hot-pluggable DIMM, lab.sh -H) comes online
# first; otherwise a block that can go offline goes offline first
for b in $blocks; do
	[ "$(cat $MEM/memory"$b"/online)" = 0 ] && { blk=$b; first=online_movable \
		second=offline; break; }
done
if [ -z "$blk" ]; then
	for b in $(echo "$blocks" | sort -rn | head -64); do
		if echo offline > $MEM/memory"$b"/state 2> /dev/null; then
			blk=$b first=offlined second=online
			break
		fi
	done
fi
if [ -z "$idx" ]; then
	fail $name
elif [ -z "$blk" ]; then
	skip $name "no memory block of node$SLOW goes offline or online"
else
	res=0
	pid=$(kd $idx pid)
	bs=$((0x$(cat $MEM/block_size_bytes)))
	for st in $first $second; do
		# a block offlined while looking for one is offline already
		[ "$st" = offlined ] ||
			echo "$st" > $MEM/memory"$blk"/state ||
			{ log "$st memory$blk failed"; res=1; }
		before=$(ranges "$idx")
		# an update that could not wait for a commit names the
		# kdamonds and fails; each commits at least one (a commit
		# waits at most an aggregation, 20 s), so the next ones
		# commit the rest
		for ((i = 0; i < 2 * nk; i++)); do
			out=$("$TOOL" update 2>&1) && break
			echo "$out" | sed 's/^/# /'
			echo "$out" | grep -q "not committed within" || { res=1; break; }
		done
		[ $i -lt $((2 * nk)) ] || res=1
		echo "$out" | sed 's/^/# /'
		after=$(ranges "$idx")
		log "memory$blk $st: kdamond $idx ranges: $(echo $after)"
		# shellcheck disable=SC2086
		check $name [ "$after" = "$(nodes_ranges $SLOWS)" ] || res=1
		check $name [ "$after" != "$before" ] || res=1
		covered=$(echo "$after" | awk -v a=$((blk * bs)) -v e=$(((blk + 1) * bs)) \
			'$1 <= a && e <= $2 { c = 1 } END { print c + 0 }')
		want=1
		[ "${st#online}" != "$st" ] || want=0
		check $name [ "$covered" = $want ] || res=1
		check $name [ "$(kd $idx pid)" = "$pid" ] || res=1
	done
	# and an update with nothing changed commits nothing
	out=$("$TOOL" update 2>&1) || res=1
	check $name eval '! echo "$out" | grep -q committed' || res=1
	[ $res = 0 ] && ok $name || fail $name
fi
cleanup_all

# 6. another user's kdamond, set up through sysfs with spare kdamond
# directories, runs on with its configuration through start, update, show
# and stop; start refuses while it runs a migrate_cold to a paired node
name=sysfs_kdamond_kept
res=0
echo $((1 + nk)) > $KDS/nr_kdamonds
c=$KDS/0/contexts
echo 1 > $c/nr_contexts
echo paddr > $c/0/operations
echo 1 > $c/0/targets/nr_targets
echo 1 > $c/0/targets/0/regions/nr_regions
read -r s e <<< "$(node_ranges "$SLOW" | head -1)"
echo "$s" > $c/0/targets/0/regions/0/start
echo $((s + (16 << 20))) > $c/0/targets/0/regions/0/end
echo 1 > $c/0/schemes/nr_schemes
echo migrate_cold > $c/0/schemes/0/action
echo "$FAST" > $c/0/schemes/0/target_nid
# regions never get this old: nothing moves
echo 4294967295 > $c/0/schemes/0/access_pattern/age/min
echo 4294967295 > $c/0/schemes/0/access_pattern/age/max
echo 4294967295 > $c/0/schemes/0/access_pattern/nr_accesses/max
kd_cmd 0 on
pid=$(kd 0 pid)
out=$("$TOOL" start 2>&1)
rc=$?
log "next to a running migrate_cold to node$FAST: rc $rc: $out"
check $name [ $rc != 0 ] || res=1
check $name eval 'echo "$out" | grep -q "kdamond 0 (pid $pid)"' || res=1
check $name [ "$(running)" = 0 ] || res=1
# now a stat scheme: no fight
echo stat > $c/0/schemes/0/action
kd_cmd 0 commit || { log "commit failed"; res=1; }
conf=$(dump 0)
for cmd in start show update stop; do
	out=$("$TOOL" $cmd 2>&1) || { log "$cmd failed: $out"; res=1; }
	if [ $cmd = start ]; then
		log "$out"
		check $name [ "$(own 2 | sort -n | tr '\n' ' ')" = "$(seq 1 $nk | tr '\n' ' ')" \
			] || res=1
	fi
	check $name [ "$(kd 0 state)" = on ] || res=1
	check $name [ "$(kd 0 pid)" = "$pid" ] || res=1
	check $name [ "$(dump 0)" = "$conf" ] || { diff <(echo "$conf") <(dump 0) | sed \
		's/^/# /'; res=1; }
done
check $name [ "$(in_use)" = 0 ] || res=1
check $name [ "$(nr_kd)" = $((1 + nk)) ] || res=1
# a failed start next to it leaves it, and the spare directories, as they were
out=$(DAMON_TIERING_FAIL_ON=2 "$TOOL" start 2>&1)
check $name [ $? != 0 ] || res=1
check $name [ "$(running)" = 0 ] || res=1
check $name [ "$(in_use)" = 0 ] || res=1
check $name [ "$(kd 0 pid)" = "$pid" ] || res=1
check $name [ "$(dump 0)" = "$conf" ] || res=1
[ $res = 0 ] && ok $name || fail $name
cleanup_all

# 7. the same next to a kdamond damo started ($DAMO: damo's command), where
# start must refuse: damo leaves no spare kdamond directory
name=damo_kdamond_kept
if [ -z "${DAMO:-}" ] || ! $DAMO version > /dev/null 2>&1; then
	skip $name "no damo (set DAMO to damo's command)"
elif ! $DAMO start --ops paddr > /tmp/dt-damo.out 2>&1 || [ "$(running)" != 0 ]; then
	sed 's/^/# /' /tmp/dt-damo.out
	fail $name
else
	res=0
	pid=$(kd 0 pid)
	conf=$(dump 0)
	for cmd in start update show stop; do
		out=$("$TOOL" $cmd 2>&1)
		rc=$?
		log "$cmd: rc $rc: $out"
		case $cmd in
		start | update) check $name [ $rc != 0 ] || res=1 ;;
		*) check $name [ $rc = 0 ] || res=1 ;;
		esac
		[ $cmd = start ] && { check $name eval \
			'echo "$out" | grep -q "kdamond 0 (pid $pid)"' || res=1; }
		check $name [ "$(running)" = 0 ] || res=1
		check $name [ "$(kd 0 pid)" = "$pid" ] || res=1
		check $name [ "$(dump 0)" = "$conf" ] || res=1
	done
	$DAMO stop > /dev/null 2>&1
	# damo stop leaves its kdamond off with its context: start replaces it
	log "after damo stop: kdamonds $(nr_kd), in use: $(in_use | tr '\n' ' ')"
	out=$("$TOOL" start 2>&1)
	rc=$?
	log "start after damo stop: rc $rc: $out"
	check $name [ $rc = 0 ] || res=1
	check $name [ "$(own 2 | wc -l)" = "$nk" ] || res=1
	"$TOOL" stop > /dev/null 2>&1 || res=1
	check $name [ -z "$(in_use)" ] || res=1
	[ $res = 0 ] && ok $name || fail $name
fi
cleanup_all

# 8. DAMON_TIERING_FLOOR=1 gives both schemes of a pair the promotion floor
# of the pair's fast node, or, on a kernel without it, refuses to start and
# leaves nothing running
name=promotion_floor
cleanup_all
res=0
out=$(DAMON_TIERING_FLOOR=1 "$TOOL" start 2>&1)
rc=$?
log "DAMON_TIERING_FLOOR=1 start: rc $rc: $out"
if [ $rc = 0 ]; then
	check $name [ "$(own 2 | wc -l)" = "$nk" ] || res=1
	for idx in $(own 2); do
		d=$KDS/$idx/contexts/0/schemes/0
		log "kdamond $idx: $(cat $d/action), floor_nid $(cat $d/floor_nid)"
		check $name [ "$(cat $d/floor_nid)" = "$(cat $d/quotas/goals/0/nid)" ] || res=1
	done
	check $name eval '"$TOOL" show | grep -q "promotion floor of node"' || res=1
	"$TOOL" stop > /dev/null 2>&1
else
	check $name eval 'echo "$out" | grep -q CONFIG_DAMOS_PROMOTION_FLOOR' || res=1
	check $name [ -z "$(running)" ] || res=1
fi
[ $res = 0 ] && ok $name || fail $name
cleanup_all

# off_kdamond IDX: kdamond IDX set up as damo stop leaves its kdamond: a
# paddr context with a stat scheme, off
off_kdamond() {
	local c=$KDS/$1/contexts s e

	read -r s e <<< "$(node_ranges "$FAST" | head -1)"
	echo 1 > $c/nr_contexts
	echo paddr > $c/0/operations
	echo 1 > $c/0/targets/nr_targets
	echo 1 > $c/0/targets/0/regions/nr_regions
	echo "$s" > $c/0/targets/0/regions/0/start
	echo $((s + (16 << 20))) > $c/0/targets/0/regions/0/end
	echo 1 > $c/0/schemes/nr_schemes
	echo stat > $c/0/schemes/0/action
}

# 9. start after a kdamond is left off with a context, as damo stop
# leaves it: start takes its directory, saying so, or grows nr_kdamonds
# when there are too few; stop leaves no context behind
name=start_after_off_kdamond
res=0
for nr in 1 "$nk"; do
	echo "$nr" > $KDS/nr_kdamonds
	off_kdamond 0
	out=$("$TOOL" start 2>&1)
	rc=$?
	log "beside kdamond 0 off with a context, nr_kdamonds $nr: rc $rc: $out"
	check $name [ $rc = 0 ] || res=1
	check $name eval 'echo "$out" | grep -q "replacing the configuration of kdamond.* 0"' ||
		res=1
	check $name [ "$(running | wc -l)" = "$nk" ] || res=1
	"$TOOL" stop > /dev/null 2>&1 || res=1
	check $name [ -z "$(in_use)" ] || res=1
	check $name [ "$(nr_kd)" = "$nr" ] || res=1
done
[ $res = 0 ] && ok $name || fail $name
cleanup_all

# 10. start and stop, many times, beside kdamonds that hold DAMON's sysfs
# lock: one samples every millisecond, the other serves one
# update_schemes_tried_regions after another (which holds the lock across
# its samples), so that writes of the nr_* files and state are refused
# busy (the test checks that some are); each start must start, and each
# stop leave nothing of the script's behind
name=ebusy_contention
res=0
echo $((2 + nk)) > $KDS/nr_kdamonds
for i in 0 1; do
	off_kdamond $i
	c=$KDS/$i/contexts/0
	echo 1000 > $c/monitoring_attrs/intervals/sample_us
	echo 20000 > $c/monitoring_attrs/intervals/aggr_us
	echo 4294967295 > $c/schemes/0/access_pattern/nr_accesses/max
	echo 4294967295 > $c/schemes/0/access_pattern/age/max
	echo 18446744073709551615 > $c/schemes/0/access_pattern/sz/max
	kd_cmd $i on
done
(while :; do echo update_schemes_tried_regions > $KDS/1/state; sleep 0.01; done) \
	2> /dev/null &
hog=$!
busy=0
for ((i = 0; i < 1000 && busy < 10; i++)); do
	echo 0 > $KDS/2/contexts/nr_contexts 2> /dev/null || busy=$((busy + 1))
done
log "beside the two: $busy of $i writes of nr_contexts refused busy"
check $name [ $busy -gt 0 ] || res=1
for ((i = 1; i <= 10; i++)); do
	out=$("$TOOL" start 2>&1) || { log "start $i failed: $out"; res=1; }
	check $name [ "$(running | wc -l)" = $((2 + nk)) ] || res=1
	out=$("$TOOL" stop 2>&1) || { log "stop $i failed: $out"; res=1; }
	check $name [ "$(in_use | tr '\n' ' ')" = "0 1 " ] || res=1
	check $name [ ! -e "$DAMON_TIERING_STATE" ] || res=1
done
kill $hog
wait $hog 2> /dev/null
[ $res = 0 ] && ok $name || fail $name
cleanup_all

# started: start, or the test fails saying why
started() {
	out=$("$TOOL" start 2>&1) && return 0
	log "start failed: $out"
	res=1
	return 1
}

# 11. stop empties only the kdamonds the script configured: one that
# another writer has configured since (off, same action and target node)
# is left as it is
name=only_its_own
res=0
if started; then
	idx=$(own 2 | head -1)
	kd_cmd "$idx" off
	echo $(($(cat $KDS/"$idx"/contexts/0/schemes/0/apply_interval_us) + 1)) > \
		$KDS/"$idx"/contexts/0/schemes/0/apply_interval_us
	conf=$(dump "$idx")
	out=$("$TOOL" stop 2>&1)
	log "stop after kdamond $idx was reconfigured: $out"
	check $name [ "$(cat $KDS/"$idx"/contexts/nr_contexts)" = 1 ] || res=1
	check $name [ "$(dump "$idx")" = "$conf" ] || res=1
	check $name [ "$(in_use)" = "$idx" ] || res=1
	check $name eval 'echo "$out" | grep -q "kdamond $idx is off with another"' || res=1
fi
[ $res = 0 ] && ok $name || fail $name
cleanup_all

# 12. update does not wait past 30 s: with a kdamond's aggregation made
# 100 s long, the commit it needs is reported not done instead of waited
# for; the kdamond runs on
name=bounded_waits
res=0
if started; then
	idx=$(own 2 | head -1)
	pid=$(kd "$idx" pid)
	iv=$KDS/$idx/contexts/0/monitoring_attrs/intervals
	echo 0 > $iv/intervals_goal/aggrs
	echo 1000000 > $iv/sample_us
	echo 100000000 > $iv/aggr_us
	kd_cmd "$idx" commit
	g=$KDS/$idx/contexts/0/schemes/0/quotas/goals/0/target_value
	echo $(($(cat $g) - 1)) > $g
	out=$("$TOOL" update 2>&1)
	rc=$?
	log "update with a 100 s aggregation: rc $rc: $out"
	check $name [ $rc != 0 ] || res=1
	check $name eval 'echo "$out" | grep -q "kdamonds $idx: not committed"' || res=1
	check $name [ "$(kd "$idx" pid)" = "$pid" ] || res=1
fi
[ $res = 0 ] && ok $name || fail $name
cleanup_all

# 13. a fast node with two slow nodes (lab.sh -H: node3's DIMM, onlined
# here, puts node3 in node2's tier with node0 as its initiator): start
# promotes from both and demotes to node2, the first of the two that
# node0 prefers at the same distance
name=two_slow_nodes
blocks=$(ls -d $NODES/node3/memory[0-9]* 2> /dev/null | sed 's/.*memory//')
if [ ! -d $NODES/node3 ] || has_memory 3 || [ -z "$blocks" ] ||
	[ ! -e $NODES/node3/access0/initiators/node0 ]; then
	skip $name "no node3 whose DIMM is offline, with initiator node0 (lab.sh -H)"
else
	res=0
	for b in $blocks; do
		echo online_movable > $MEM/memory"$b"/state || res=1
	done
	groups=$(. "$TOOL"; default_groups 2> /dev/null)
	log "node3 online: groups: $(echo "$groups" | tr '\n' ';')"
	check $name [ "$(echo "$groups" | head -1)" = "0 2 2 3" ] || res=1
	if started; then
		log "$out"
		hot=$(awk '$1 == "kdamond" && $4 == "migrate_hot" && $5 == 0 { print $2 }' \
			"$DAMON_TIERING_STATE")
		cold=$(awk '$1 == "kdamond" && $4 == "migrate_cold" && $5 == 2 { print $2 }' \
			"$DAMON_TIERING_STATE")
		check $name [ -n "$hot" ] || res=1
		check $name [ -n "$cold" ] || res=1
		check $name [ "$(ranges "$hot")" = "$(nodes_ranges 2 3)" ] || res=1
		check $name [ "$(ranges "$cold")" = "$(nodes_ranges 0)" ] || res=1
		check $name [ "$(cat $KDS/"$cold"/contexts/0/schemes/0/target_nid)" = 2 ] ||
			res=1
	fi
	cleanup_all
	for b in $blocks; do
		echo offline > $MEM/memory"$b"/state || log "memory$b stays online"
	done
	[ $res = 0 ] && ok $name || fail $name
fi

log "$PASS passed, $FAIL failed, $SKIP skipped"
[ $FAIL = 0 ] || exit 1
[ $PASS = 0 ] && exit 4
exit 0
