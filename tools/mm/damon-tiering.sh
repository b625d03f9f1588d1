#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-tuned DAMON memory tiering between fast nodes and slow ones.
#
#   damon-tiering.sh start [FAST:SLOW[,SLOW...]...]     (or: start FAST SLOW)
#   damon-tiering.sh update
#   damon-tiering.sh stop
#   damon-tiering.sh show
#
# Pairs: with no argument, start tiers every fast node of the kernel's
# demotion with its slow nodes.  6.12 does not show demotion targets in
# sysfs, so the script derives them as mm/memory-tiers.c establishes
# them: a node with memory in any memory tier but the slowest
# (/sys/devices/virtual/memory_tiering/memory_tierN/nodelist, a lower N a
# faster tier) demotes to the nodes with memory of the next tier at the
# least distance from it (/sys/devices/system/node/nodeN/distance).  Each
# node with memory in a lower tier is the slow node of one node of the
# tier above: its best initiator (nodeS/access0/initiators/, from the
# ACPI HMAT), else the nearest, else the lowest numbered.  A fast node
# with several slow nodes promotes from all of them, and demotes to one
# node, TARGET: where memory-tiers.c would demote (of several at the same
# least distance, among which the kernel picks at random per page, its
# first slow node, else the lowest numbered).  FAST:SLOW,SLOW... names
# them instead, the first SLOW the target.  No node may be in two pairs.
#
# start: per fast node two kdamonds through /sys/kernel/mm/damon/admin.
# One monitors FAST and migrate_cold moves its regions, the least
# accessed first, pages not young, to TARGET; the other monitors FAST's
# slow nodes and migrate_hot moves their regions with accesses, the most
# accessed first, young pages only, to FAST.  Both schemes act within 200
# MiB per second and are tuned by the "temporal_capped" goal tuner toward
# goals on FAST's memory: migrate_hot while FAST is used below 99.7% less
# R, migrate_cold while less than 0.5% plus R of it is free.  R is the
# memory FAST keeps free from migrations, which allocate without reclaim:
# per zone its high watermark plus its largest lowmem reserve, in basis
# points of its managed pages (/proc/zoneinfo).  Goals that ignore R would
# sit inside it on a small node (0.5% free is below the reserve of a 1
# GiB node), and migrate_cold would never run.  The schemes' apply
# interval is the time 200 MiB/s takes to move the 0.2% of FAST between
# the two goals (at least 1 ms, at most 1 s), so that an application
# moves about what is left to a goal.  DAMON applies a scheme at most once
# per sampling interval: a kdamond whose sampling has tuned itself longer
# applies at every sample, each time moving at most what is left to its
# goal.  Monitoring intervals tune themselves toward 4% of the possible
# accesses in 3 aggregations, sampling every 5 ms to 1 s, an aggregation
# 20 samples.
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
# it lists in $STATE (default /run/damon-tiering) with their pids and a
# checksum of the configuration it wrote.  DAMON sysfs removes and
# re-creates every kdamond directory when nr_kdamonds is written, and
# refuses that (EBUSY) while any kdamond runs.  So start takes free
# kdamond directories (off, no context), then ones that are off but hold
# a context (a kdamond that is off runs nothing; damo stop leaves its
# kdamond so), saying which it replaces, and where those are too few it
# grows nr_kdamonds, but only while no kdamond runs.  It never stops or
# empties a running kdamond.  It refuses, naming the kdamond in the way,
# when one is, and when a running kdamond has a migrate_hot or
# migrate_cold scheme that moves to or monitors one of its nodes, since
# the two would fight.  start either starts all of its kdamonds or, on
# any failure, turns off and empties the ones it took and shrinks
# nr_kdamonds back as stop does.  stop turns off the kdamonds $STATE names
# that run with the recorded pid, empties (nr_contexts 0) those whose
# configuration is still the one the script wrote, leaves the others as
# they are, and writes nr_kdamonds back to what it was only if start grew
# it and no directory is in use.
#
# Busy sysfs: DAMON's sysfs takes its lock with a trylock to write a
# kdamond's state and every nr_* file, and to read state and pid, and
# each running kdamond takes that lock at each of its samples: such a
# write or read refused busy (EBUSY) is tried again, every 10 ms.
#
# update: for the pairs started, take the nodes' memory blocks as they
# are now (after onlining or offlining memory: dax/kmem, memory hotplug)
# as the monitored ranges, read FAST's reserve again with the goals and
# apply interval that follow from it, and commit each kdamond whose
# values changed, without stopping it (after update_tuned_intervals, so
# that its tuned intervals carry on).  show: per kdamond of the script
# its node, goal, effective quota, tuned intervals and what it moved.
#
# Waits: no command waits longer than 30 s in all.  It waits for another
# damon-tiering.sh that holds $STATE.lock and for the kernel (busy sysfs
# files, kdamonds serving commands) 25 s at most, 5 s of that for the
# lock, and undoing a failed start or releasing kdamonds may wait 5 s
# more.  A command written to a kdamond's state file, other than on and
# off, returns once the kdamond has served it, and the kernel waits for
# that without a limit: update_schemes_stats,
# update_schemes_effective_quotas and update_tuned_intervals at the next
# sample (at most 1 s: the samples are bounded to that), commit at the
# end of the aggregation (20 samples).  The script asks for one only when
# its longest wait fits in what is left of the 25 s: show then says which
# values it could not refresh, and update names the kdamonds it did not
# commit (their sysfs files hold the new values; each update after it
# commits at least one of them, a commit waiting 20 s at most).
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

# Waits: no command waits longer than 30 s in all.  WAITED_US counts the
# time a command has waited for the kernel (busy sysfs files, kdamonds
# serving commands); its work waits no more once WAITED_US reaches
# WAIT_US, 25 s, and undoing a failed start or releasing kdamonds may
# wait 5 s more.
now_us() { echo "${EPOCHREALTIME/./}"; }
WAITED_US=0 WAIT_US=25000000
# grace: let the undoing and releasing wait 5 s more
grace() { WAIT_US=$((WAITED_US > WAIT_US ? WAITED_US : WAIT_US)); WAIT_US=$((WAIT_US + 5000000)); }
# waited T0: add the time since T0 (now_us) to WAITED_US
waited() { WAITED_US=$((WAITED_US + $(now_us) - $1)); }
# fits US: a wait of US, and a second of the kdamond's work, fits in
# what is left to wait
fits() { [ $((WAITED_US + $1 + 1000000)) -le "$WAIT_US" ]; }

# die and w: the sourcing script's own, if it has them
declare -F die > /dev/null || die()
{
	echo "damon-tiering: $*" >&2
	exit 1
}

# try_w VALUE FILE: write VALUE to FILE; 1 on failure.  DAMON's sysfs
# takes its lock with a trylock to write a kdamond's state and any nr_*
# file (nr_kdamonds, nr_contexts, nr_targets, nr_regions, nr_schemes,
# nr_goals, nr_filters), and every running kdamond takes that lock at
# each of its samples: a write refused busy (EBUSY) is tried again until
# the deadline.
try_w()
{
	local err t

	while ! err=$({ echo "$1" > "$2"; } 2>&1); do
		case $err in
		*busy*) fits 0 || return 1
			t=$(now_us)
			sleep 0.01
			waited "$t" ;;
		*) return 1 ;;
		esac
	done
	return 0
}

declare -F w > /dev/null || w()
{
	try_w "$1" "$2" || die "writing '$1' to $2 failed"
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

# nodes_ranges NID...: node_ranges of every NID, in the order of their
# addresses
nodes_ranges()
{
	local n

	for n in "$@"; do
		node_ranges "$n"
	done | sort -n
}

# node_target CTX NID...: the one target of context directory CTX covers the
# memory of the nodes NID...
node_target()
{
	local i=0 start end ranges n

	for n in "${@:2}"; do
		[ -n "$(node_ranges "$n")" ] || die "node$n has no memory blocks online"
	done
	ranges=$(nodes_ranges "${@:2}")
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

# default_groups: "FAST TARGET SLOW..." per fast node of the kernel's
# demotion: every node with memory in a tier below the fastest is the
# slow node of one node of the tier above (its initiator, else the
# nearest, else the lowest numbered), and TARGET is where FAST demotes:
# of the nodes of the next tier at the least distance from FAST (the
# ones mm/memory-tiers.c prefers), one of FAST's slow nodes, else the
# first
default_groups()
{
	local tiers=() t i f s nodes best init d pref target
	local -A slow=()

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
	for ((t = 0; t + 1 < ${#tiers[@]}; t++)); do
		# each slow node's fast node: its initiator, else the nearest
		for s in ${tiers[t + 1]}; do
			best='' init=''
			for f in ${tiers[t]}; do
				if [ -e $NODES/node"$s"/access0/initiators/node"$f" ]; then
					[ -n "$init" ] || { init=$f; best=$f; }
				elif [ -z "$init" ]; then
					{ [ -z "$best" ] || [ "$(distance "$f" "$s")" -lt \
						"$(distance "$best" "$s")" ]; } && best=$f
				fi
			done
			slow[$best]="${slow[$best]:-} $s"
		done
		for f in ${tiers[t]}; do
			[ -n "${slow[$f]:-}" ] || continue
			best='' pref=''
			for s in ${tiers[t + 1]}; do
				d=$(distance "$f" "$s")
				if [ -z "$best" ] || [ "$d" -lt "$best" ]; then
					best=$d pref=$s
				elif [ "$d" = "$best" ]; then
					pref="$pref $s"
				fi
			done
			target=
			for s in $pref; do
				case " ${slow[$f]} " in *" $s "*) target=$s; break ;; esac
			done
			echo "$f ${target:-${pref%% *}}${slow[$f]}"
		done
	done
}

# kd_state IDX, kd_pid IDX, kd_nr_contexts IDX
# DAMON's sysfs takes its lock with a trylock for a kdamond's state and pid
# files too: a read of them that fails busy is tried again until the
# deadline.

# kd_read IDX FILE: kdamond IDX's FILE (state or pid)
kd_read()
{
	local v

	until v=$(cat $KDS/"$1"/"$2" 2>/dev/null); do
		[ -e $KDS/"$1"/"$2" ] || return 1
		fits 0 || return 1
		sleep 0.01
		WAITED_US=$((WAITED_US + 10000))
	done
	echo "$v"
}

# kd_cmd IDX CMD: write CMD to kdamond IDX's state.  A command other than
# on and off returns once the kdamond has served it, which the kernel
# waits for without a limit: at its next sample, or for commit at the end
# of its aggregation.  The caller checks that the wait fits (fits).
kd_cmd()
{
	local t w0=$WAITED_US rc

	t=$(now_us)
	try_w "$2" $KDS/"$1"/state
	rc=$?
	WAITED_US=$w0
	waited "$t"
	return $rc
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

# kd_digest IDX: a checksum of kdamond IDX's configuration, the files the
# script writes, not the ones the kernel updates; read again while a file
# fails (a filter's memcg_path is read under a trylock of DAMON's lock)
kd_digest()
{
	local conf

	until conf=$(cd $KDS/"$1" 2>/dev/null && find contexts -type f \
		! -path '*/stats/*' ! -path '*/tried_regions/*' ! -name effective_bytes \
		! -name sample_us ! -name aggr_us ! -name current_value -perm -u=r -print0 |
		sort -z | xargs -0 grep -H '' 2>/dev/null); do
		fits 0 || return 1
		sleep 0.01
		WAITED_US=$((WAITED_US + 10000))
	done
	echo "$conf" | cksum | cut -d' ' -f1
}

# state file: "grew N0 N1" if start grew nr_kdamonds from N0 to N1, then
# "kdamond IDX PID ACTION TARGET_NID DIGEST [pending]" per kdamond
# ("pending": update wrote values it has not committed yet), then "pair
# FAST TARGET SLOW..." per fast node
own_kdamonds()
{
	[ -f "$STATE" ] && awk '$1 == "kdamond" { print $2, $3, $4, $5, $6, $7 }' "$STATE"
}
own_pairs() { [ -f "$STATE" ] && awk '$1 == "pair" { $1 = ""; print substr($0, 2) }' "$STATE"; }

# own_running IDX PID: kdamond IDX still runs as the script's, pid PID
own_running() { [ "$(kd_state "$1")" = on ] && [ "$(kd_pid "$1")" = "$2" ]; }

# release IDX PID DIGEST: turn kdamond IDX off if it runs as PID, then
# empty it if its configuration is still the script's (DIGEST, or
# "taken": start took it in this run); a kdamond that runs as another pid,
# or that another writer has configured since, is left alone.  1 if it
# stays in use as the script's.
release()
{
	local d

	if [ "$(kd_state "$1")" = on ]; then
		if [ "$(kd_pid "$1")" != "$2" ]; then
			echo "damon-tiering: kdamond $1 runs as pid $(kd_pid "$1")," \
				"not as $2: left alone" >&2
			return 0
		fi
		kd_cmd "$1" off || {
			echo "damon-tiering: could not turn kdamond $1 off" >&2
			return 1
		}
	fi
	[ "$(kd_state "$1")" = off ] || return 1
	[ "$(kd_nr_contexts "$1")" != 0 ] || return 0
	if [ "$3" != taken ]; then
		d=$(kd_digest "$1") || {
			echo "damon-tiering: could not read kdamond $1's configuration" >&2
			return 1
		}
		if [ "$d" != "$3" ]; then
			echo "damon-tiering: kdamond $1 is off with another writer's" \
				"configuration: left alone" >&2
			return 0
		fi
	fi
	try_w 0 $KDS/"$1"/contexts/nr_contexts || {
		echo "damon-tiering: could not empty kdamond $1" >&2
		return 1
	}
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
	try_w "$1" $KDS/nr_kdamonds || true
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
	# shellcheck disable=SC2086
	node_target "$ctx" ${2//,/ }
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

# parse_pairs ARG...: "FAST TARGET SLOW..." per fast node, checked
parse_pairs()
{
	local p f s t seen=" " out

	if [ $# = 0 ]; then
		out=$(default_groups)
		[ -n "$out" ] || die "the kernel names no demotion target: name the pairs FAST:SLOW"
	elif [ $# = 2 ] && [[ "$1$2" =~ ^[0-9]+$ ]]; then
		out="$1 $2 $2"
	else
		out=$(for p in "$@"; do
			[[ "$p" =~ ^[0-9]+:[0-9]+(,[0-9]+)*$ ]] ||
				die "'$p' is not FAST:SLOW[,SLOW...]"
			s=${p#*:}
			echo "${p%:*} ${s%%,*} ${s//,/ }"
		done) || exit 1
	fi
	while read -r f t s; do
		for p in "$f" $s; do
			[ -d $NODES/node"$p" ] || die "no node $p"
			has_memory "$p" || die "node$p has no memory"
			case $seen in *" $p "*) die "node$p is in two pairs" ;; esac
			seen="$seen$p "
		done
		[ -d $NODES/node"$t" ] && has_memory "$t" || die "node$t has no memory"
		[ "$t" != "$f" ] || die "node$f cannot demote to itself"
	done <<< "$out"
	echo "$out"
}

# take N: TAKEN, the indexes of N kdamond directories for start: free
# ones (off, no context) first, then ones that are off but hold another
# writer's context (a kdamond that is off runs nothing: damo stop leaves
# its kdamond so), and, where those are too few and no kdamond runs,
# directories that growing nr_kdamonds adds (which deletes every
# directory's context); never a running kdamond's.  Says what it
# replaces; START_GREW says what it grew.
TAKEN=()
take()
{
	local n i free=() held=() running=

	read -r n < $KDS/nr_kdamonds
	for ((i = 0; i < n; i++)); do
		if [ "$(kd_state "$i")" != off ]; then
			running=$i
		elif [ "$(kd_nr_contexts "$i")" = 0 ]; then
			free+=("$i")
		else
			held+=("$i")
		fi
	done
	free+=("${held[@]}")
	if [ ${#free[@]} -lt "$1" ]; then
		[ -z "$running" ] ||
			die "kdamond $running (pid $(kd_pid "$running")) is running, and DAMON" \
				"adds kdamonds only while none runs: $1 kdamonds that are" \
				"off needed, ${#free[@]} found"
		for i in "${held[@]}"; do
			echo "damon-tiering: replacing the configuration of kdamond $i," \
				"which is off" >&2
		done
		START_GREW="$n $((n + $1 - ${#free[@]}))"
		w $((n + $1 - ${#free[@]})) $KDS/nr_kdamonds
		mapfile -t TAKEN < <(seq 0 $((n + $1 - ${#free[@]} - 1)) | tail -n "$1")
		return 0
	fi
	for ((i = 0; i < $1; i++)); do
		[ "$(kd_nr_contexts "${free[i]}")" = 0 ] ||
			echo "damon-tiering: replacing the configuration of kdamond" \
				"${free[i]}, which is off" >&2
		TAKEN+=("${free[i]}")
	done
}

START_TAKEN=() START_GREW=
# start_cleanup: undo a start that did not finish (START_TAKEN: "IDX PID
# taken" per kdamond directory it took, PID -1 until it runs)
start_cleanup()
{
	local e

	[ ${#START_TAKEN[@]} != 0 ] || [ -n "$START_GREW" ] || return 0
	grace
	for e in "${START_TAKEN[@]}"; do
		# shellcheck disable=SC2086
		release $e || true
	done
	# shellcheck disable=SC2086
	[ -z "$START_GREW" ] || shrink $START_GREW || true
	START_TAKEN=() START_GREW=
}

start()
{
	local pairs n i need why f t sl k=0 idx g d out=() kds=() lines=()

	[ -d $KDS ] || die "no $KDS: DAMON sysfs (CONFIG_DAMON_SYSFS) is off"
	case ${DAMON_TIERING_FLOOR:-} in
	''|0|1) ;;
	*) die "DAMON_TIERING_FLOOR is '$DAMON_TIERING_FLOOR': 0 or 1, or unset" ;;
	esac
	pairs=$(parse_pairs "$@") || exit 1
	if [ -f "$STATE" ]; then
		while read -r idx n _; do
			[ -n "$idx" ] && own_running "$idx" "$n" &&
				die "already started (kdamond $idx, pid $n):" \
					"stop it first, or update"
		done <<< "$(own_kdamonds)"
		die "$STATE is left from a start whose kdamonds no longer run:" \
			"run damon-tiering.sh stop"
	fi
	read -r n < $KDS/nr_kdamonds
	for ((i = 0; i < n; i++)); do
		[ "$(kd_state "$i")" = on ] || continue
		# shellcheck disable=SC2046
		why=$(fights "$i" $(echo $pairs))
		[ -z "$why" ] ||
			die "kdamond $i (pid $(kd_pid "$i")) is running and $why: stop it first"
	done
	need=$((2 * $(echo "$pairs" | wc -l)))
	take $need
	kds=("${TAKEN[@]}")
	for i in "${kds[@]}"; do
		START_TAKEN+=("$i -1 taken")
	done
	while read -r f t sl; do
		g=$(goals "$f") || exit 1
		read -r -a g <<< "$g"
		# g: reserve, used goal, free goal, apply interval
		try_w 0 $KDS/"${kds[k]}"/contexts/nr_contexts ||
			die "cannot empty kdamond ${kds[k]}"
		setup "${kds[k]}" "$f" migrate_cold "$t" 0 node_mem_free_bp "${g[2]}" N \
			"${g[3]}" "$f"
		try_w 0 $KDS/"${kds[k + 1]}"/contexts/nr_contexts ||
			die "cannot empty kdamond ${kds[k + 1]}"
		# shellcheck disable=SC2086
		setup "${kds[k + 1]}" "$(echo $sl | tr ' ' ,)" migrate_hot "$f" 1 \
			node_mem_used_bp "${g[1]}" Y "${g[3]}" "$f"
		out+=("node$f reserve ${g[0]} bp: goals ${g[1]} bp used, ${g[2]} bp free;\
 apply interval $((g[3] / 1000)) ms; kdamonds ${kds[k]} (node$f to node$t)\
 ${kds[k + 1]} (node$(echo $sl | sed 's/ /, node/g') to node$f); $(floor_of "${kds[k]}")")
		lines+=("migrate_cold $t" "migrate_hot $f")
		k=$((k + 2))
	done <<< "$pairs"
	for ((i = 0; i < need; i++)); do
		idx=${kds[i]}
		if [ "${DAMON_TIERING_FAIL_ON:-0}" = $((i + 1)) ]; then
			w 4096 $KDS/"$idx"/contexts/0/targets/0/regions/0/start
			w 0 $KDS/"$idx"/contexts/0/targets/0/regions/0/end
		fi
		d=$(kd_digest "$idx") || die "cannot read kdamond $idx's configuration"
		lines[i]="$idx -1 ${lines[i]} $d"
		kd_cmd "$idx" on || die "writing 'on' to $KDS/$idx/state failed"
		START_TAKEN[i]="$idx $(kd_pid "$idx") taken"
		lines[i]="$idx $(kd_pid "$idx") ${lines[i]#* * }"
	done
	{
		[ -z "$START_GREW" ] || echo "grew $START_GREW"
		printf 'kdamond %s\n' "${lines[@]}"
		echo "$pairs" | sed 's/^/pair /'
	} > "$STATE.tmp" && mv "$STATE.tmp" "$STATE" || die "cannot write $STATE"
	START_TAKEN=() START_GREW=
	printf 'damon-tiering: %s\n' "${out[@]}"
}

stop()
{
	local idx pid digest grew left=

	[ -f "$STATE" ] || { echo "damon-tiering: not started"; return 0; }
	[ -d $KDS ] || { rm -f "$STATE"; return 0; }
	grace
	while read -r idx pid _ _ digest _; do
		[ -z "$idx" ] || release "$idx" "$pid" "$digest" || left="$left $idx"
	done <<< "$(own_kdamonds)"
	[ -z "$left" ] || die "kdamonds$left are still the script's: run stop again"
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

# state_digest IDX DIGEST [pending]: record DIGEST as kdamond IDX's in the
# state file, and whether a commit is pending
state_digest()
{
	awk -v i="$1" -v d="$2" -v p="${3:-}" \
		'$1 == "kdamond" && $2 == i { $6 = d; $7 = p; sub(/ +$/, "") } { print }' \
		"$STATE" > "$STATE.tmp" && mv "$STATE.tmp" "$STATE"
}

update()
{
	local idx pid action nid f t sl g node metric ranges ctx sc changed aggr d
	local pending=

	own_check
	while read -r f t sl; do
		read -r -a g <<< "$(goals "$f")"
		while read -r idx pid action nid _ changed; do
			case "$action $nid" in
			"migrate_cold $t") node=$f metric=${g[2]} ;;
			"migrate_hot $f") node=$sl metric=${g[1]} ;;
			*) continue ;;
			esac
			ctx=$KDS/$idx/contexts/0 sc=$KDS/$idx/contexts/0/schemes/0
			# shellcheck disable=SC2086
			ranges=$(nodes_ranges $node)
			[ -n "$ranges" ] || die \
				"node$node has no memory online: kdamond $idx left as it is"
			# changed: values written now, or by an update that could
			# not commit them
			[ "$changed" = pending ] && changed=1 || changed=0
			[ "$(kd_ranges "$idx")" = "$ranges" ] ||
				{ node_target "$ctx" $node; changed=1; }
			set_value "$sc/quotas/goals/0/target_value" "$metric" || changed=1
			set_value "$sc/apply_interval_us" "${g[3]}" || changed=1
			d=$(kd_digest "$idx") || die "cannot read kdamond $idx's configuration"
			state_digest "$idx" "$d" "$([ $changed = 0 ] || echo pending)"
			if [ $changed = 0 ]; then
				echo "damon-tiering: kdamond $idx" \
					"(node${node// /, node}): unchanged"
				continue
			fi
			# the tuned intervals first, so that they carry on; commit
			# waits for the end of the kdamond's aggregation
			if ! fits $MAX_SAMPLE_US; then
				pending="$pending $idx"
				continue
			fi
			kd_cmd "$idx" update_tuned_intervals ||
				die "kdamond $idx: update_tuned_intervals failed"
			aggr=$(cat "$ctx/monitoring_attrs/intervals/aggr_us")
			if ! fits "$aggr"; then
				pending="$pending $idx"
				continue
			fi
			kd_cmd "$idx" commit || die "kdamond $idx: commit failed"
			state_digest "$idx" "$d"
			echo "damon-tiering: kdamond $idx (node${node// /, node}): committed" \
				"$(echo $ranges | wc -w | awk '{ print $1 / 2 }') ranges," \
				"goal $metric bp, apply interval $((g[3] / 1000)) ms"
		done <<< "$(own_kdamonds)"
	done <<< "$(own_pairs)"
	[ -z "$pending" ] ||
		die "kdamonds$pending: not committed within 30 s (their sysfs files" \
			"hold the new values): run update again"
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
			if ! fits $MAX_SAMPLE_US; then
				echo "kdamond $idx: $r not asked: 30 s waited" \
					"(values as read before)"
			elif ! kd_cmd "$idx" $r; then
				echo "kdamond $idx: $r failed (another writer's command pending?)"
			fi
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
set -eEuo pipefail
trap 'echo "damon-tiering: failed at line $LINENO" >&2' ERR
USAGE="usage: damon-tiering.sh start [FAST:SLOW...] | start FAST SLOW | update | stop | show"
exec 8> "$STATE.lock" || die "cannot open $STATE.lock"
t0=$(now_us)
flock -w 5 8 || die "another damon-tiering.sh has run for 5 s: try again later"
waited "$t0"
trap start_cleanup EXIT
trap 'exit 1' INT TERM HUP
case "${1:-}" in
start) shift; start "$@" ;;
update) [ $# = 1 ] || die "$USAGE"; update ;;
stop) [ $# = 1 ] || die "$USAGE"; stop ;;
show) [ $# = 1 ] || die "$USAGE"; show ;;
*) die "$USAGE" ;;
esac
