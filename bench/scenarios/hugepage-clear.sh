#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
#
# Huge page clearing on the fault path: wakeup latency next to it and its
# throughput (runs in the lab guest, base and patched kernels).
#
# 6.12 clears a huge page 4 KiB at a time with a cond_resched() before each
# 4 KiB; the series (folio_zero_user() in mm/memory.c, mainline's design)
# clears page ranges with a rescheduling point before each: under
# preempt=none/voluntary batches of up to 32 MiB
# (PROCESS_PAGES_NON_PREEMPT_BATCH), under preempt=full whole ranges.
# Under preempt=none/voluntary a batch is a stretch in which no other task
# gets the CPU, so a real-time task that wakes up on that CPU waits for the
# batch to end.  This measures both sides:
#
#   idle     build/bench/bin/hugefault -l -I: the latency thread alone on
#            CPU0 for IDLE_S (3) s: the lab's noise floor;
#   lat2m    hugefault -l on CPU0: a SCHED_FIFO 99 thread sleeping with
#            clock_nanosleep(TIMER_ABSTIME) every 1 ms (as cyclictest -t1
#            -a 0 -p 99 -i 1000) records how late it wakes, while a
#            SCHED_OTHER thread on the same CPU maps SIZE_MIB (1024) of
#            hugetlb 2 MiB pages, writes one byte per huge page (each
#            write is a fault that clears the whole page), unmaps it, and
#            again, for LAT_S (20) s;
#   cyc2m    the same faulting with cyclictest itself (-m -q -t1 -a 0 -p 99
#            -i 1000 -h HIST_US, from 1 s before the faulting to its end)
#            measuring instead: a cross-check (CYCLICTEST=0 to skip);
#   lat1g    lat2m with one 1 GiB page (on node2: remote from CPU0);
#   tput2m   hugefault alone on CPU0, TPUT_ROUNDS (3) rounds of SIZE_MIB of
#            2 MiB pages: fault throughput;
#   tput1g   the same with the 1 GiB page.
#
# Pools: 2 MiB pages, half of SIZE_MIB on node0 and half on node2
# (node0 has 1 GiB in all); one 1 GiB page on node2, reserved at boot with
# "hugepagesz=1G hugepages=2:1" if the kernel was booted so, else asked for
# now (skipped, with a message, if it cannot be had).  The preemption
# model is the one the kernel booted with (preempt=; the lab's default is
# voluntary); bench/hugepage-clear.sh boots each kernel with each model.
#
# Every pool page is faulted once, untimed, first: QEMU backs guest memory
# lazily, and a guest page's first write costs a host page fault.
#
# RESULT keys: preempt, erms,
# hugepages_2m, hugepages_1g; per part
# (idle_, lat2m_, cyc2m_, lat1g_, tput2m_, tput1g_): lat_max_us,
# lat_p999_us, lat_p99_us, lat_p50_us, lat_samples (latency parts), gibps (GiB cleared
# per second of faulting, as the faulting thread saw it), fault_avg_us,
# fault_max_us, cleared_gib.  All times and rates are TCG (emulated), not
# hardware.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
HF=$REPO/build/bench/bin/hugefault
SIZE_MIB=${SIZE_MIB:-1024}
LAT_S=${LAT_S:-20}
IDLE_S=${IDLE_S:-3}
TPUT_ROUNDS=${TPUT_ROUNDS:-3}
CYCLICTEST=${CYCLICTEST:-1}
HIST_US=${HIST_US:-100000}
CPU=0
NODE_SYS=/sys/devices/system/node

# result PART: hugefault's key=value lines on stdin -> one RESULT line
result() {
	local part=$1 kv line=""

	while read -r kv; do
		case $kv in
		lat_max_us=* | lat_p999_us=* | lat_p99_us=* | lat_p50_us=* | lat_samples=*)
			line+=" ${part}_${kv#lat_}"
			;;
		gibps=* | fault_avg_us=* | fault_max_us=* | cleared_gib=*)
			[ "$part" = idle ] || line+=" ${part}_$kv"
			;;
		esac
	done
	echo "RESULT${line}"
}

# run PART ARGS...: hugefault ARGS, its output kept in /tmp/PART.out
run() {
	local part=$1

	shift
	echo "bench: $part: hugefault $*"
	if ! "$HF" "$@" > "/tmp/$part.out"; then
		echo "bench: $part: hugefault failed"
		echo "RESULT ${part}_failed=1"
		return 1
	fi
	sed 's/^/bench:   /' "/tmp/$part.out"
	result "$part" < "/tmp/$part.out"
}

# pool SIZE_KB NODE COUNT: set NODE's pool of SIZE_KB pages, print what it got
pool() {
	local f=$NODE_SYS/node$2/hugepages/hugepages-$1kB/nr_hugepages

	[ -f "$f" ] || { echo 0; return; }
	echo "$3" > "$f" 2>/dev/null
	cat "$f"
}

# cyclictest's histogram (-h) on stdin -> p50, p99, p99.9, max, samples
cyc_stats() {
	awk '
	/^[0-9]+ +[0-9]+/ { c[$1 + 0] = $2 + 0; if ($1 + 0 > top) top = $1 + 0 }
	/^# Total:/ { total = $3 + 0 }
	/^# Max Latencies:/ { max = $4 + 0 }
	END {
		n50 = int(total * 0.50 + 0.999999); n99 = int(total * 0.99 + 0.999999)
		n999 = int(total * 0.999 + 0.999999)
		p50 = p99 = p999 = "overflow"
		for (i = 0; i <= top; i++) {
			seen += c[i]
			if (p50 == "overflow" && seen >= n50) p50 = i
			if (p99 == "overflow" && seen >= n99) p99 = i
			if (p999 == "overflow" && seen >= n999) p999 = i
		}
		printf "lat_p50_us=%s\nlat_p99_us=%s\nlat_p999_us=%s\nlat_max_us=%d\nlat_samples=%d\n",
			p50, p99, p999, max, total
	}'
}

model=$(dmesg | sed -n 's/.*Dynamic Preempt: *//p' | tail -n 1)
erms=$(grep -c -w -m 1 erms /proc/cpuinfo)
echo "bench: $(uname -r), preempt=${model:-?}, cmdline: $(cat /proc/cmdline)"
echo "RESULT preempt=${model:-unknown} erms=$erms"
half=$((SIZE_MIB / 2 / 2))
n0=$(pool 2048 0 $half)
n2=$(pool 2048 2 $((SIZE_MIB / 2 - n0)))
echo "bench: 2 MiB pool: node0 $n0, node2 $n2"
g=$(cat "$NODE_SYS/node2/hugepages/hugepages-1048576kB/nr_hugepages" 2>/dev/null || echo 0)
[ "$g" -ge 1 ] || g=$(pool 1048576 2 1)
echo "bench: 1 GiB pool: node2 $g"
echo "RESULT hugepages_2m=$((n0 + n2)) hugepages_1g=$g"
grep -i huge /proc/meminfo | sed 's/^/bench:   /'
if [ $((n0 + n2)) -lt $((SIZE_MIB / 2)) ]; then
	echo "bench: only $((n0 + n2)) 2 MiB pages: mapping $(((n0 + n2) * 2)) MiB"
	SIZE_MIB=$(((n0 + n2) * 2))
fi

# QEMU backs guest memory lazily: the first write to a guest page costs a
# host page fault.  Touch every pool page once first, so that no part pays
# for it (and base and patched pay alike).
echo "bench: warm-up: one untimed round over each pool"
"$HF" -c $CPU -s "$SIZE_MIB" -d 0 > /dev/null
[ "$g" -ge 1 ] && "$HF" -c $CPU -g -s 1024 -d 0 > /dev/null

run idle -c $CPU -l -I -d "$IDLE_S"
run lat2m -c $CPU -l -s "$SIZE_MIB" -d "$LAT_S"
if [ "$CYCLICTEST" = 1 ] && command -v cyclictest > /dev/null; then
	echo "bench: cyc2m: cyclictest -m -q -t1 -a $CPU -p 99 -i 1000 -h $HIST_US, hugefault alongside"
	cyclictest -m -q -t1 -a $CPU -p 99 -i 1000 -h "$HIST_US" \
		--histfile=/tmp/cyc.hist > /tmp/cyc.out 2>&1 &
	cpid=$!
	sleep 1
	"$HF" -c $CPU -s "$SIZE_MIB" -d "$LAT_S" > /tmp/cyc2m.out
	kill -INT $cpid
	wait $cpid
	grep -v '^WARN' /tmp/cyc.out | sed 's/^/bench:   /'
	{ grep -E '^(gibps|fault_|cleared)' /tmp/cyc2m.out; cyc_stats < /tmp/cyc.hist; } |
		tee -a /tmp/cyc2m.out | result cyc2m
fi
if [ "$g" -ge 1 ]; then
	run lat1g -c $CPU -l -g -s 1024 -d "$LAT_S"
else
	echo "bench: lat1g, tput1g: skipped, no 1 GiB page"
fi
run tput2m -c $CPU -s "$SIZE_MIB" -d 0 -r "$TPUT_ROUNDS"
[ "$g" -ge 1 ] && run tput1g -c $CPU -g -s 1024 -d 0 -r "$TPUT_ROUNDS"
exit 0
