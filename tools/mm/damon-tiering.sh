#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-tuned DAMON memory tiering between fast nodes and slow ones.
#
#   damon-tiering.sh start [FAST:SLOW...]     (or: start FAST SLOW)
#   damon-tiering.sh update
#   damon-tiering.sh stop
#   damon-tiering.sh show
#
# Pairs: with no argument, start tiers every pair of the kernel's demotion
# targets.  6.12 does not show those in sysfs, so the script derives them
# as mm/memory-tiers.c establishes them: a node with memory in any memory
# tier but the slowest (/sys/devices/virtual/memory_tiering/memory_tierN/
# nodelist, a lower N a faster tier) demotes to the nodes with memory of
# the next tier at the least distance from it (/sys/devices/system/node/
# nodeN/distance).  A slow node that several nodes demote to is paired
# with one of them: its best initiator (nodeS/access0/initiators/, from
# the ACPI HMAT), else the nearest, else the lowest numbered; a fast node
# is paired with its first slow node only.  FAST:SLOW arguments name the
# pairs instead.  No node may be in two pairs.
#
# start: per pair two kdamonds through /sys/kernel/mm/damon/admin.  One
# monitors FAST and migrate_cold moves its regions, the least accessed
# first, pages not young, to SLOW; the other monitors SLOW and migrate_hot
# moves its regions with accesses, the most accessed first, young pages
# only, to FAST.  Both schemes act within 200 MiB per second and are tuned
# by the "temporal_capped" goal tuner toward goals on FAST's memory:
# migrate_hot while FAST is used below 99.7% less R, migrate_cold while
# less than 0.5% plus R of it is free.  R is the memory FAST keeps free
# from migrations, which allocate without reclaim: per zone its high
# watermark plus its largest lowmem reserve, in basis points of its
# managed pages (/proc/zoneinfo).  Goals that ignore R would sit inside it
# on a small node (0.5% free is below the reserve of a 1 GiB node), and
# migrate_cold would never run.  The schemes' apply interval is the time
# 200 MiB/s takes to move the 0.2% of FAST between the two goals (at least
# 1 ms, at most 1 s), so that an application moves about what is left to
# a goal.  DAMON applies a scheme at most once per sampling interval: a
# kdamond whose sampling has tuned itself longer applies at every sample,
# each time moving at most what is left to its goal.  Monitoring
# intervals tune themselves toward 4% of the possible accesses in 3
# aggregations, sampling every 5 ms to 1 s, an aggregation 20 samples.
#
# Promotion floor: with DAMON_TIERING_FLOOR=1, on a kernel built with
# CONFIG_DAMOS_PROMOTION_FLOOR (a floor_nid file per scheme, which mainline
# lacks; start refuses without it), both schemes' floor_nid is FAST:
# migrate_cold publishes FAST's floor, the access rate of FAST's coldest
# memory that holds data, and migrate_hot takes only regions above it.
# The two kdamonds' sampling tunes itself to each node's own traffic, so
# without it a region of SLOW accessed once in an aggregation passes
# migrate_hot whatever FAST's coldest memory gets, and the pair exchanges
# memory of the same access rate.  With it the pair moves far less, and
# holds still where nothing changes, but follows a popularity that drifts
# key by key more slowly (bench/README).
#
# Other kdamonds: the script touches only the kdamonds it started, which
# it lists with their pids in $STATE (default /run/damon-tiering).  DAMON
# sysfs removes and re-creates every kdamond directory when nr_kdamonds
# is written, and refuses that (EBUSY) while any kdamond runs.  So start
# takes free kdamond directories (off, no context) where there are
# enough, and otherwise grows nr_kdamonds, but only while no kdamond runs
# and no other kdamond directory holds a context.  It refuses, naming the
# kdamond in the way, when one is, and when a running kdamond has a
# migrate_hot or migrate_cold scheme that moves to or monitors one of its
# nodes, since the two would fight.  start either starts all of its
# kdamonds or, on any failure, turns off and empties the ones it took and
# shrinks nr_kdamonds back as stop does.  stop turns off and empties
# (nr_contexts 0) the kdamonds $STATE names that run with the recorded pid
# (or are off and still hold their schemes), and writes nr_kdamonds back
# to what it was only if start grew it and no directory is in use.
#
# update: for the pairs started, take the nodes' memory blocks as they
# are now (after onlining or offlining memory: dax/kmem, memory hotplug)
# as the monitored ranges, read FAST's reserve again with the goals and
# apply interval that follow from it, and commit each kdamond whose
# values changed, without stopping it (after update_tuned_intervals, so
# that its tuned intervals carry on).  show: per kdamond of the script
# its node, goal, effective quota, tuned intervals and what it moved.
#
# Waits: a command written to a kdamond's state file, other than on and
# off, returns once the kdamond has served it: update_schemes_stats,
# update_schemes_effective_quotas and update_tuned_intervals at its next
# sample, commit at its next aggregation: each waits up to a sampling
# interval, or an aggregation of 20, plus the kdamond's work in it.  The
# samples are bounded to 1 s for that: show, three commands a kdamond,
# took 26 s for four kdamonds sampling every 0.6-1 s in the lab (QEMU
# TCG); update waits about 20 s more per kdamond it commits.
#
# Needs: bash, awk, flock; DAMON sysfs with paddr (CONFIG_DAMON_SYSFS,
# CONFIG_DAMON_PADDR), its migrate_hot and migrate_cold actions and young
# filter; from mainline, which 6.12 lacks (the damon-autotune series on
# 6.12): monitoring_attrs/intervals/intervals_goal/, the
# update_tuned_intervals command, filters/N/allow, quotas/goals/N/nid with
# the node_mem_used_bp and node_mem_free_bp metrics, and quotas/goal_tuner;
# and the goal tuner "temporal_capped", which mainline lacks
# (CONFIG_DAMOS_TUNER_TEMPORAL_CAPPED): under mainline's "temporal" each
# charge window would carry the node past its goals by up to 200 MiB.
# For DAMON_TIERING_FLOOR=1 only: the promotion floor
# (CONFIG_DAMOS_PROMOTION_FLOOR), which mainline lacks too.  Also
# /proc/zoneinfo, the nodes' memory blocks in sysfs, and for the
# default pairs the memory tiers and node distances in sysfs.  The script
# checks each of these and names what is missing.  Reclaim demotion
# (/sys/kernel/mm/numa/demotion_enabled) may stay on.
#
# For tests only: DAMON_TIERING_FAIL_ON=K gives start's K-th kdamond
# (from 1) a region that ends before it starts, so that the kernel
# refuses to turn it on.
#
# Sourced rather than run, it only defines its functions.
KDS=/sys/kernel/mm/damon/admin/kdamonds
QUOTA_B=$((200 << 20))
USED_BP=9970 FREE_BP=50
MIN_SAMPLE_US=5000 MAX_SAMPLE_US=1000000
STATE=${DAMON_TIERING_STATE:-/run/damon-tiering}
NODES=/sys/devices/system/node

# die and w: the sourcing script's own, if it has them
declare -F die > /dev/null || die()
{
	echo "damon-tiering: $*" >&2
	exit 1
}

declare -F w > /dev/null || w()
{
	echo "$1" > "$2" 2>/dev/null || die "writing '$1' to $2 failed"
}

# node_ranges NID: "start end" per run of contiguous online memory blocks
# of NID
node_ranges()
{
	local bs b start=-1 prev=-2 online

	bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
	for b in $(find $NODES/node"$1"/ -maxdepth 1 -name 'memory[0-9]*' |
		   sed 's/.*memory//' | sort -n) END; do
		if [ "$b" != END ]; then
			read -r online < /sys/devices/system/memory/memory"$b"/online ||
				online=0
			[ "$online" = 1 ] || continue
		fi
		if [ "$b" = END ] || [ "$b" -ne $((prev + 1)) ]; then
			[ $start -ge 0 ] && echo $((start * bs)) $(((prev + 1) * bs))
			start=$b
		fi
		prev=$b
	done
}

# node_target CTX NID...: the one target of context directory CTX covers the
# memory of the nodes NID..., given in the order of their addresses
node_target()
{
	local i=0 start end ranges n

	for n in "${@:2}"; do
		[ -n "$(node_ranges "$n")" ] || die "node$n has no memory blocks online"
	done
	ranges=$(for n in "${@:2}"; do node_ranges "$n"; done)
	w 1 "$1/targets/nr_targets"
	w "$(echo "$ranges" | wc -l)" "$1/targets/0/regions/nr_regions"
	while read -r start end; do
		w "$start" "$1/targets/0/regions/$i/start"
		w "$end" "$1/targets/0/regions/$i/end"
		i=$((i + 1))
	done <<< "$ranges"
}

# node_reserve_bp NID: per zone high watermark (less a passing boost) plus
# largest lowmem reserve (at most the zone), in bp of the node's managed
# pages
node_reserve_bp()
{
	awk -v n="$1" '$1 == "Node" { on = ($2 == n ","); next }
		!on { next }
		$1 == "boost" { b = $2 }
		$1 == "high" { hi = $2 - b }
		$1 == "managed" { m = $2; tm += m }
		$1 == "protection:" { gsub(/[(),]/, " "); p = 0
			for (i = 2; i <= NF; i++) if ($i + 0 > p) p = $i + 0
			r = hi + p; if (r > m) r = m; tr += r }
		END { printf "%d", tm ? tr * 10000 / tm : -1 }' /proc/zoneinfo
}

node_managed_pages()
{
	awk -v n="$1" '$1 == "Node" { on = ($2 == n ","); next }
		on && $1 == "managed" { m += $2 } END { print m + 0 }' /proc/zoneinfo
}

# nodes_of LIST: the nids of a node list such as "0-1,3"
nodes_of()
{
	local r

	for r in ${1//,/ }; do
		case $r in
		*-*) seq "${r%-*}" "${r#*-}" ;;
		*) echo "$r" ;;
		esac
	done
}

has_memory()
{
	[[ " $(echo $(nodes_of "$(cat $NODES/has_memory)")) " = *" $1 "* ]]
}

# distance A B: node distance from A to B
distance()
{
	local d

	read -r -a d < $NODES/node"$1"/distance
	echo "${d[$2]}"
}

# default_pairs: "FAST SLOW" per pair of the kernel's demotion targets
default_pairs()
{
	local tiers=() t i f s nodes best d cand=() pairs=() used=" " init

	[ -d /sys/devices/virtual/memory_tiering ] ||
		die "no /sys/devices/virtual/memory_tiering: name the pairs FAST:SLOW"
	# memory tiers with memory, fastest first
	for t in $(find /sys/devices/virtual/memory_tiering/ -maxdepth 1 -name 'memory_tier[0-9]*' |
		   sed 's/.*memory_tier//' | sort -n); do
		nodes=$(for i in $(nodes_of \
			"$(cat /sys/devices/virtual/memory_tiering/memory_tier"$t"/nodelist)"); do
			has_memory "$i" && echo "$i"; done)
		[ -n "$nodes" ] && tiers+=("$(echo $nodes)")
	done
	# every demotion: FAST to the nodes of the next tier at the least distance
	for ((t = 0; t + 1 < ${#tiers[@]}; t++)); do
		for f in ${tiers[t]}; do
			best=
			for s in ${tiers[t + 1]}; do
				d=$(distance "$f" "$s")
				[ -z "$best" ] || [ "$d" -lt "$best" ] && best=$d
			done
			for s in ${tiers[t + 1]}; do
				[ "$(distance "$f" "$s")" = "$best" ] && cand+=("$f $s")
			done
		done
	done
	# one fast node per slow node: its initiator, else the nearest
	for s in $(printf '%s\n' "${cand[@]}" | awk '{ print $2 }' | sort -nu); do
		best= init=
		for f in $(printf '%s\n' "${cand[@]}" | awk -v s="$s" '$2 == s { print $1 }' | \
			sort -n); do
			if [ -e $NODES/node"$s"/access0/initiators/node"$f" ]; then
				[ -n "$init" ] || { init=$f; best=$f; }
			elif [ -z "$init" ]; then
				{ [ -z "$best" ] || [ "$(distance "$f" "$s")" -lt \
					"$(distance "$best" "$s")" ]; } &&
					best=$f
			fi
		done
		pairs+=("$best $s")
	done
	# a fast node paired with its first slow node only
	for i in "${pairs[@]}"; do
		f=${i% *}
		case $used in *" $f "*) continue ;; esac
		used="$used$f "
		echo "$i"
	done
}

# kd_state IDX, kd_pid IDX, kd_nr_contexts IDX
# DAMON's sysfs takes its lock with a trylock for a kdamond's state and pid
# files, and a running kdamond holds that lock for a moment at its samples:
# a read or write of them may fail with EBUSY, and is tried again, for up
# to a second.

# kd_read IDX FILE: kdamond IDX's FILE (state or pid)
kd_read()
{
	local i v

	for ((i = 0; i < 100; i++)); do
		v=$(cat $KDS/"$1"/"$2" 2>/dev/null) && { echo "$v"; return 0; }
		[ -e $KDS/"$1"/"$2" ] || return 1
		sleep 0.01
	done
	return 1
}

# kd_cmd IDX CMD: write CMD to kdamond IDX's state
kd_cmd()
{
	local i err

	for ((i = 0; i < 100; i++)); do
		err=$({ echo "$2" > $KDS/"$1"/state; } 2>&1) && return 0
		case $err in
		*busy*) sleep 0.01 ;;
		*) return 1 ;;
		esac
	done
	return 1
}

kd_state() { kd_read "$1" state || echo none; }
kd_pid() { kd_read "$1" pid || echo -1; }
kd_nr_contexts() { cat $KDS/"$1"/contexts/nr_contexts 2>/dev/null || echo 0; }

# kd_schemes IDX: "ACTION TARGET_NID" per scheme of kdamond IDX
kd_schemes()
{
	local s

	[ "$(kd_nr_contexts "$1")" -gt 0 ] || return 0
	for s in $KDS/"$1"/contexts/0/schemes/[0-9]*; do
		[ -d "$s" ] || continue
		echo "$(cat "$s"/action) $(cat "$s"/target_nid 2>/dev/null)"
	done
}

# kd_ranges IDX: "start end" per region of the first target of kdamond IDX
kd_ranges()
{
	local r

	[ "$(kd_nr_contexts "$1")" -gt 0 ] || return 0
	for r in $KDS/"$1"/contexts/0/targets/0/regions/[0-9]*; do
		[ -d "$r" ] || continue
		echo "$(cat "$r"/start) $(cat "$r"/end)"
	done | sort -n
}

# fights IDX NODE...: why running kdamond IDX would fight tiering of
# NODEs, if it would
fights()
{
	local i=$1 n action nid start end s e ops

	shift
	ops=$(cat $KDS/"$i"/contexts/0/operations 2>/dev/null || true)
	while read -r action nid; do
		case $action in migrate_hot | migrate_cold) ;; *) continue ;; esac
		for n in "$@"; do
			if [ "$nid" = "$n" ]; then
				echo "its $action scheme moves to node$n"
				return 0
			fi
			[ "$ops" = paddr ] || continue
			while read -r start end; do
				[ -n "$start" ] || continue
				while read -r s e; do
					[ -n "$s" ] || continue
					if [ "$s" -lt "$end" ] && [ "$start" -lt "$e" ]; then
						echo "its $action scheme acts on node$n's memory"
						return 0
					fi
				done <<< "$(node_ranges "$n")"
			done <<< "$(kd_ranges "$i")"
		done
	done <<< "$(kd_schemes "$i")"
	return 0
}

# state file: "grew N0 N1" if start grew nr_kdamonds from N0 to N1, then
# "kdamond IDX PID ACTION NID TARGET_NID" per kdamond, then "pair FAST SLOW"
own_kdamonds() { [ -f "$STATE" ] && awk '$1 == "kdamond" { print $2, $3, $4, $5, $6 }' "$STATE"; }
own_pairs() { [ -f "$STATE" ] && awk '$1 == "pair" { print $2, $3 }' "$STATE"; }

# own_running IDX PID: kdamond IDX still runs as the script's, pid PID
own_running() { [ "$(kd_state "$1")" = on ] && [ "$(kd_pid "$1")" = "$2" ]; }

# release IDX PID ACTION TARGET_NID [taken]: turn kdamond IDX off if it
# runs as PID, then empty it if it holds the script's scheme (ACTION to
# TARGET_NID) or, with "taken", if start took it in this run
release()
{
	if [ "$(kd_state "$1")" = on ]; then
		if [ "$(kd_pid "$1")" != "$2" ]; then
			echo "damon-tiering: kdamond $1 runs as pid $(kd_pid "$1")," \
				"not as $2: left alone" >&2
			return 0
		fi
		kd_cmd "$1" off ||
			echo "damon-tiering: could not turn kdamond $1 off" >&2
	fi
	[ "$(kd_state "$1")" = off ] || return 0
	if [ "${5:-}" = taken ] || [ "$(kd_schemes "$1")" = "$3 $4" ]; then
		echo 0 > $KDS/"$1"/contexts/nr_contexts 2>/dev/null || true
	fi
	return 0
}

# shrink N0 N1: nr_kdamonds back from N1 to N0 if no directory is in use
shrink()
{
	local i n

	read -r n < $KDS/nr_kdamonds
	[ "$n" = "$2" ] || return 0
	for ((i = 0; i < n; i++)); do
		[ "$(kd_state "$i")" = off ] && [ "$(kd_nr_contexts "$i")" = 0 ] || return 0
	done
	echo "$1" > $KDS/nr_kdamonds 2>/dev/null || true
}

# floor_of IDX: "promotion floor of nodeN" for kdamond IDX's scheme, or
# "no promotion floor"
floor_of()
{
	local n=-1

	read -r n < $KDS/"$1"/contexts/0/schemes/0/floor_nid 2>/dev/null || n=-1
	if [ "$n" = -1 ]; then
		echo "no promotion floor"
	else
		echo "promotion floor of node$n"
	fi
}

# setup IDX NID ACTION TARGET NR_MIN METRIC VALUE ALLOW APPLY_US GOAL_NID
setup()
{
	local ctx=$KDS/$1/contexts/0 nr_max=4294967295
	local s=$KDS/$1/contexts/0/schemes/0 iv=$KDS/$1/contexts/0/monitoring_attrs/intervals

	w 1 "$KDS/$1/contexts/nr_contexts"
	w paddr "$ctx/operations"
	[ -e "$iv/intervals_goal" ] ||
		die "no intervals_goal: this kernel lacks intervals auto-tuning"
	w $MIN_SAMPLE_US "$iv/sample_us"
	w $((MIN_SAMPLE_US * 20)) "$iv/aggr_us"
	w 400 "$iv/intervals_goal/access_bp"
	w 3 "$iv/intervals_goal/aggrs"
	w $MIN_SAMPLE_US "$iv/intervals_goal/min_sample_us"
	w $MAX_SAMPLE_US "$iv/intervals_goal/max_sample_us"
	node_target "$ctx" "$2"
	w 1 "$ctx/schemes/nr_schemes"
	[ -e "$s/quotas/goal_tuner" ] ||
		die "no quotas/goal_tuner: this kernel lacks DAMON's goal tuners"
	[ -e "$s/filters/0" ] || [ -e "$s/filters/nr_filters" ] ||
		die "no schemes filters: this kernel lacks DAMOS filters"
	w "$3" "$s/action"
	w "$4" "$s/target_nid"
	w "$9" "$s/apply_interval_us"
	# sysfs starts every range at 0-0: any size and age
	w 18446744073709551615 "$s/access_pattern/sz/max"
	w 4294967295 "$s/access_pattern/age/max"
	w "$nr_max" "$s/access_pattern/nr_accesses/max"
	w "$5" "$s/access_pattern/nr_accesses/min"
	# within the quota: the hottest regions first for migrate_hot, the
	# coldest first for migrate_cold
	w 1000 "$s/quotas/weights/nr_accesses_permil"
	w 1000 "$s/quotas/weights/age_permil"
	w 1000 "$s/quotas/reset_interval_ms"
	w $QUOTA_B "$s/quotas/bytes"
	echo temporal_capped > "$s/quotas/goal_tuner" 2>/dev/null ||
		die "goal_tuner rejects temporal_capped:" \
			"build the kernel with CONFIG_DAMOS_TUNER_TEMPORAL_CAPPED"
	w 1 "$s/quotas/goals/nr_goals"
	w "$6" "$s/quotas/goals/0/target_metric"
	w "${10}" "$s/quotas/goals/0/nid"
	w "$7" "$s/quotas/goals/0/target_value"
	w 1 "$s/filters/nr_filters"
	w young "$s/filters/0/type"
	w Y "$s/filters/0/matching"
	[ -e "$s/filters/0/allow" ] ||
		die "no filters/0/allow: this kernel lacks DAMOS allow filters"
	w "$8" "$s/filters/0/allow"
	if [ "${DAMON_TIERING_FLOOR:-0}" = 1 ]; then
		[ -e "$s/floor_nid" ] ||
			die "no floor_nid: this kernel lacks CONFIG_DAMOS_PROMOTION_FLOOR"
		w "${10}" "$s/floor_nid"
	fi
}

# goals FAST: "RESERVE_BP USED_GOAL FREE_GOAL APPLY_US" for fast node FAST
goals()
{
	local reserve managed gap_ms

	reserve=$(node_reserve_bp "$1")
	[ "$reserve" -ge 0 ] && [ "$reserve" -lt $((USED_BP - FREE_BP - 100)) ] ||
		die "node$1 keeps $reserve bp of itself free: no room for the goals"
	managed=$(node_managed_pages "$1")
	# ms for QUOTA_B per second to move the node's memory between the goals
	gap_ms=$(((FREE_BP + USED_BP - 10000) * managed / 10000))
	gap_ms=$((gap_ms * $(getconf PAGESIZE) * 1000 / QUOTA_B))
	[ $gap_ms -ge 1 ] || gap_ms=1
	[ $gap_ms -le 1000 ] || gap_ms=1000
	echo "$reserve" $((USED_BP - reserve)) $((FREE_BP + reserve)) $((gap_ms * 1000))
}

# parse_pairs ARG...: "FAST SLOW" per pair, checked
parse_pairs()
{
	local p f s seen=" " out

	if [ $# = 0 ]; then
		out=$(default_pairs)
		[ -n "$out" ] || die "the kernel names no demotion target: name the pairs FAST:SLOW"
	elif [ $# = 2 ] && [[ "$1$2" =~ ^[0-9]+$ ]]; then
		out="$1 $2"
	else
		out=$(for p in "$@"; do
			[[ "$p" =~ ^[0-9]+:[0-9]+$ ]] || die "'$p' is not FAST:SLOW"
			echo "${p%:*} ${p#*:}"
		done) || exit 1
	fi
	while read -r f s; do
		for p in "$f" "$s"; do
			[ -d $NODES/node"$p" ] || die "no node $p"
			has_memory "$p" || die "node$p has no memory"
			case $seen in *" $p "*) die "node$p is in two pairs" ;; esac
			seen="$seen$p "
		done
	done <<< "$out"
	echo "$out"
}

START_TAKEN=() START_GREW=
# start_cleanup: undo a start that did not finish (START_TAKEN: "IDX PID
# ACTION TARGET_NID" per kdamond directory it took, PID -1 until it runs)
start_cleanup()
{
	local e

	for e in "${START_TAKEN[@]}"; do
		# shellcheck disable=SC2086
		release $e taken
	done
	# shellcheck disable=SC2086
	[ -z "$START_GREW" ] || shrink $START_GREW
	START_TAKEN=()
}

start()
{
	local pairs n i free=() busy=() need nid why f s k=0 idx g out=() action

	[ -d $KDS ] || die "no $KDS: DAMON sysfs (CONFIG_DAMON_SYSFS) is off"
	case ${DAMON_TIERING_FLOOR:-} in
	''|0|1) ;;
	*) die "DAMON_TIERING_FLOOR is '$DAMON_TIERING_FLOOR': 0 or 1, or unset" ;;
	esac
	pairs=$(parse_pairs "$@") || exit 1
	if [ -f "$STATE" ]; then
		while read -r idx n _; do
			own_running "$idx" "$n" &&
				die "already started (kdamond $idx, pid $n):" \
					"stop it first, or update"
		done <<< "$(own_kdamonds)"
		die "$STATE is left from a start whose kdamonds no longer run:" \
			"run damon-tiering.sh stop"
	fi
	read -r n < $KDS/nr_kdamonds
	need=$((2 * $(echo "$pairs" | wc -l)))
	for ((i = 0; i < n; i++)); do
		if [ "$(kd_state "$i")" = on ]; then
			why=$(fights "$i" $(echo $pairs))
			[ -z "$why" ] ||
				die "kdamond $i (pid $(kd_pid "$i")) is running and" \
					"$why: stop it first"
			busy+=("$i")
		elif [ "$(kd_nr_contexts "$i")" = 0 ]; then
			free+=("$i")
		else
			busy+=("$i")
		fi
	done
	if [ ${#free[@]} -lt "$need" ]; then
		for i in "${busy[@]}"; do
			if [ "$(kd_state "$i")" = on ]; then
				die "kdamond $i (pid $(kd_pid "$i")) is running, and DAMON adds" \
					"kdamonds only while none runs: $need free kdamonds" \
					"(off, nr_contexts 0) needed, ${#free[@]} found"
			fi
			die "kdamond $i is off but holds a context, which adding kdamonds" \
				"would delete: $need free kdamonds (off, nr_contexts 0) needed," \
				"${#free[@]} found"
		done
		k=$((n + need - ${#free[@]}))
		START_GREW="$n $k"
		w $k $KDS/nr_kdamonds
		for ((i = n; i < k; i++)); do
			free+=("$i")
		done
		k=0
	fi
	while read -r f s; do
		g=$(goals "$f") || exit 1
		read -r -a g <<< "$g"
		# g: reserve, used goal, free goal, apply interval
		START_TAKEN+=("${free[k]} -1 migrate_cold $s")
		setup "${free[k]}" "$f" migrate_cold "$s" 0 node_mem_free_bp "${g[2]}" N \
			"${g[3]}" "$f"
		START_TAKEN+=("${free[k + 1]} -1 migrate_hot $f")
		setup "${free[k + 1]}" "$s" migrate_hot "$f" 1 node_mem_used_bp "${g[1]}" Y \
			"${g[3]}" "$f"
		out+=("node$f reserve ${g[0]} bp: goals ${g[1]} bp used, ${g[2]} bp free;\
 apply interval $((g[3] / 1000)) ms; kdamonds ${free[k]} (node$f) ${free[k + 1]} (node$s);\
 $(floor_of "${free[k]}")")
		k=$((k + 2))
	done <<< "$pairs"
	for ((i = 0; i < need; i++)); do
		read -r idx _ action nid <<< "${START_TAKEN[i]}"
		if [ "${DAMON_TIERING_FAIL_ON:-0}" = $((i + 1)) ]; then
			w 4096 $KDS/"$idx"/contexts/0/targets/0/regions/0/start
			w 0 $KDS/"$idx"/contexts/0/targets/0/regions/0/end
		fi
		kd_cmd "$idx" on || die "writing 'on' to $KDS/$idx/state failed"
		START_TAKEN[i]="$idx $(kd_pid "$idx") $action $nid"
	done
	{
		[ -z "$START_GREW" ] || echo "grew $START_GREW"
		printf 'kdamond %s\n' "${START_TAKEN[@]}"
		echo "$pairs" | sed 's/^/pair /'
	} > "$STATE.tmp" && mv "$STATE.tmp" "$STATE" || die "cannot write $STATE"
	START_TAKEN=()
	printf 'damon-tiering: %s\n' "${out[@]}"
}

stop()
{
	local idx pid action nid grew

	[ -f "$STATE" ] || { echo "damon-tiering: not started"; return 0; }
	[ -d $KDS ] || { rm -f "$STATE"; return 0; }
	while read -r idx pid action nid; do
		[ -z "$idx" ] || release "$idx" "$pid" "$action" "$nid"
	done <<< "$(own_kdamonds)"
	grew=$(awk '$1 == "grew" { print $2, $3 }' "$STATE")
	# shellcheck disable=SC2086
	[ -z "$grew" ] || shrink $grew
	rm -f "$STATE"
}

# own_check: every kdamond of the state file runs with its pid
own_check()
{
	local idx pid

	[ -f "$STATE" ] || die "not started"
	while read -r idx pid _; do
		own_running "$idx" "$pid" ||
			die "kdamond $idx no longer runs as pid $pid: stop, then start again"
	done <<< "$(own_kdamonds)"
}

# set_value FILE VALUE: write VALUE if FILE holds another; 1 if it did
set_value()
{
	[ "$(cat "$1")" = "$2" ] && return 0
	w "$2" "$1"
	return 1
}

update()
{
	local idx pid action nid f s g node metric value ranges ctx sc changed

	own_check
	while read -r f s; do
		read -r -a g <<< "$(goals "$f")"
		while read -r idx pid action nid; do
			case "$action $nid" in
			"migrate_cold $s") node=$f metric=${g[2]} ;;
			"migrate_hot $f") node=$s metric=${g[1]} ;;
			*) continue ;;
			esac
			ctx=$KDS/$idx/contexts/0 sc=$KDS/$idx/contexts/0/schemes/0
			ranges=$(node_ranges "$node")
			[ -n "$ranges" ] || die \
				"node$node has no memory online: kdamond $idx left as it is"
			changed=0
			[ "$(kd_ranges "$idx")" = "$ranges" ] || { node_target "$ctx" "$node"; \
				changed=1; }
			set_value "$sc/quotas/goals/0/target_value" "$metric" || changed=1
			set_value "$sc/apply_interval_us" "${g[3]}" || changed=1
			if [ $changed = 1 ]; then
				kd_cmd "$idx" update_tuned_intervals ||
					die "kdamond $idx: update_tuned_intervals failed"
				kd_cmd "$idx" commit || die "kdamond $idx: commit failed"
				echo "damon-tiering: kdamond $idx (node$node): committed" \
					"$(echo $ranges | wc -w | awk '{ print $1 / 2 }') ranges," \
					"goal $metric bp, apply interval $((g[3] / 1000)) ms"
			else
				echo "damon-tiering: kdamond $idx (node$node): unchanged"
			fi
		done <<< "$(own_kdamonds)"
	done <<< "$(own_pairs)"
}

show()
{
	local idx pid d iv r

	[ -f "$STATE" ] || { echo "damon-tiering: not started"; return 0; }
	while read -r idx pid _; do
		d=$KDS/$idx/contexts/0/schemes/0
		iv=$KDS/$idx/contexts/0/monitoring_attrs/intervals
		if ! own_running "$idx" "$pid"; then
			echo "kdamond $idx: no longer runs as pid $pid"
			continue
		fi
		for r in update_schemes_stats update_schemes_effective_quotas \
			update_tuned_intervals; do
			kd_cmd "$idx" $r ||
				echo "kdamond $idx: $r failed (another writer's command pending?)"
		done
		printf 'kdamond %d (pid %d): %s to node%s, goal %s %s on node%s, %s\n' \
			"$idx" "$pid" "$(cat $d/action)" "$(cat $d/target_nid)" \
			"$(cat $d/quotas/goals/0/target_metric)" \
			"$(cat $d/quotas/goals/0/target_value)" "$(cat $d/quotas/goals/0/nid)" \
			"$(floor_of "$idx")"
		printf '  quota %d KiB per %d ms, sample %d us, aggr %d us, applied %d MiB\n' \
			$(($(cat $d/quotas/effective_bytes) >> 10)) \
			"$(cat $d/quotas/reset_interval_ms)" "$(cat $iv/sample_us)" \
			"$(cat $iv/aggr_us)" $(($(cat $d/stats/sz_applied) >> 20))
		# bash's printf, not awk's: mawk prints 0xffffffff for any
		# number from 2^32 on, and slow nodes often start above 4 GiB
		printf '  ranges %s\n' "$(kd_ranges "$idx" | while read -r a b; do
			printf '0x%x-0x%x\n' "$a" "$b"; done | paste -sd ' ')"
	done <<< "$(own_kdamonds)"
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
set -euo pipefail
USAGE="usage: damon-tiering.sh start [FAST:SLOW...] | start FAST SLOW | update | stop | show"
exec 8> "$STATE.lock" || die "cannot open $STATE.lock"
flock 8
trap start_cleanup EXIT
trap 'exit 1' INT TERM HUP
case "${1:-}" in
start) shift; start "$@" ;;
update) [ $# = 1 ] || die "$USAGE"; update ;;
stop) [ $# = 1 ] || die "$USAGE"; stop ;;
show) [ $# = 1 ] || die "$USAGE"; show ;;
*) die "$USAGE" ;;
esac
