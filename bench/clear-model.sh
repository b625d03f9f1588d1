#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Huge page clearing, host userspace model (not the kernel): 6.12's
# page-at-a-time string clear vs the series' chunked string clear (and,
# with CLZERO, its clzero clear of 1 GiB pages) vs a memset ceiling, on
# hugetlb memory of this machine, in one run.
#
#   bench/clear-model.sh              (as root, on the host, not in the lab)
#
# Builds bench/clear-model.c into build/bench/bin, reserves hugetlb pages
# (2 MiB through /proc/sys/vm/nr_hugepages, 1 GiB through sysfs), runs the
# model pinned to one CPU for each huge page size and target, puts the
# previous hugetlb settings back, and prints a summary.  A size whose pages
# cannot be reserved is skipped with a message.  Logs go to
# build/bench/clear-model-<timestamp>/.
#
# Environment:
#   CPU=N         the CPU to pin to (default: the last one)
#   REPS=N        repetitions per method and configuration (default 21)
#   RUNS=N        run everything N times, to see run-to-run spread (default 1)
#   NR_2M=N       2 MiB pages to reserve and clear (default 1024: 2 GiB,
#                 far more than the last-level cache, so clears go to DRAM
#                 as on a fault)
#   NR_1G=N       1 GiB pages (default 2)
#   TARGETS_2M, TARGETS_1G
#                 faulting subpages to model: first, middle, last, random
#                 (default "first random" and "first")
#   CHUNKS=LIST   chunk sizes of the chunked loop (default: the model's)
#   NTCHUNKS=LIST chunk sizes of the clzero loop, chunknt (default: the
#                 model's; only where the CPU has clzero)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$REPO/build/bench/bin
OUT=$REPO/build/bench/clear-model-$(date +%Y%m%d-%H%M%S)
CPU=${CPU:-$(($(nproc) - 1))}
REPS=${REPS:-21}
RUNS=${RUNS:-1}
NR_2M=${NR_2M:-1024}
NR_1G=${NR_1G:-2}
TARGETS_2M=${TARGETS_2M:-first random}
TARGETS_1G=${TARGETS_1G:-first}
CHUNKS=${CHUNKS:-}
NTCHUNKS=${NTCHUNKS:-}
HP2M=/proc/sys/vm/nr_hugepages
HP1G=/sys/kernel/mm/hugepages/hugepages-1048576kB
LABEL="host userspace model, not the kernel"

say() { echo "clear-model: $*"; }

[ "$(uname -m)" = x86_64 ] || { say "needs x86_64 (rep stosb)"; exit 4; }
[ "$(id -u)" = 0 ] || say "not root: using whatever hugetlb pages are free"

mkdir -p "$BIN" "$OUT"
gcc -O2 -Wall -Wextra -o "$BIN/clear-model" "$REPO/bench/clear-model.c"

# Reserve: remember the pool sizes, put them back however we leave.
old_2m=$(cat $HP2M)
old_1g=$(cat $HP1G/nr_hugepages 2>/dev/null || echo none)
restore() {
	[ "$(id -u)" = 0 ] || return 0
	echo "$old_2m" > $HP2M || true
	[ "$old_1g" = none ] || echo "$old_1g" > $HP1G/nr_hugepages || true
	say "hugetlb pools restored: 2M $(cat $HP2M), 1G $(cat $HP1G/nr_hugepages 2>/dev/null || echo -)"
}
trap restore EXIT
trap 'exit 130' INT TERM

# reserve DIR NR: make NR pages of DIR's size free; prints how many are
reserve() {
	local dir=$1 want=$2 free total
	free=$(cat "$dir/free_hugepages")
	total=$(cat "$dir/nr_hugepages")
	if [ "$free" -lt "$want" ] && [ "$(id -u)" = 0 ]; then
		echo $((total + want - free)) > "$dir/nr_hugepages" 2>/dev/null || true
		free=$(cat "$dir/free_hugepages")
	fi
	echo $((free < want ? free : want))
}

# 1 GiB first, while physical memory is least fragmented; compact once if
# the kernel could not find enough contiguous gigabytes
declare -A NR
NR[1G]=0
if [ -d $HP1G ]; then
	NR[1G]=$(reserve $HP1G "$NR_1G")
	if [ "${NR[1G]}" -lt "$NR_1G" ] && [ "$(id -u)" = 0 ]; then
		echo 1 > /proc/sys/vm/compact_memory || true
		NR[1G]=$(reserve $HP1G "$NR_1G")
	fi
fi
NR[2M]=0
if [ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]; then
	NR[2M]=$(reserve /sys/kernel/mm/hugepages/hugepages-2048kB "$NR_2M")
fi

{
	echo "== $LABEL =="
	echo "kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')," \
		"$(nproc) CPUs, pinned to CPU $CPU, $(free -g | awk '/Mem:/ { print $2 }') GiB"
	echo "cpu flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
		grep -xE 'erms|fsrm|fzrm|fsrs|clzero' | tr '\n' ' ')"
	/lib64/ld-linux-x86-64.so.2 --list-diagnostics 2>/dev/null |
		grep -E 'rep_stosb_threshold|non_temporal_threshold|level3_cache_size' |
		sed 's/^/glibc: /' || true
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "hugetlb pages available: 2M ${NR[2M]} (wanted $NR_2M), 1G ${NR[1G]} (wanted $NR_1G)"
} | tee "$OUT/header.txt"

# the model needs a pool well beyond the caches to model a fault's clear
min_pages() { [ "$1" = 2M ] && echo 32 || echo 1; }

for run in $(seq 1 "$RUNS"); do
	for size in 2M 1G; do
		if [ "${NR[$size]}" -lt "$(min_pages $size)" ]; then
			say "SKIP $size: could not reserve $size hugetlb pages" \
				"(got ${NR[$size]}; on 1G: the kernel may not allocate them at runtime)"
			continue
		fi
		targets=TARGETS_$size
		for t in ${!targets}; do
			log=$OUT/run$run-$size-$t.log
			say "run $run: $size pages x ${NR[$size]}, target $t -> ${log#"$REPO/"}"
			taskset -c "$CPU" "$BIN/clear-model" -s "$size" -n "${NR[$size]}" \
				-r "$REPS" -t "$t" ${CHUNKS:+-c "$CHUNKS"} \
				${NTCHUNKS:+-C "$NTCHUNKS"} > "$log" || {
				say "FAILED: $size target $t (exit $?), see $log"
				continue
			}
			grep -v '^RESULT' "$log" | sed -n '/^== /,$p' | cat -s
			echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
			echo
		done
	done
done

# summary: the targets, per run and configuration
{
	echo "== summary ($LABEL) =="
	printf '%-16s %9s %9s %8s %8s %8s %8s %8s %8s %8s %8s\n' \
		"" "page" "memset" "chunk90" "" "best" "" "chunkup90" "" \
		"chunknt90" ""
	printf '%-16s %9s %9s %8s %8s %8s %8s %8s %8s %8s %8s\n' \
		"run-size-target" "GB/s" "GB/s" "size" "x page" \
		"size" "x page" "size" "x page" "size" "x page"
	for log in "$OUT"/run*.log; do
		[ -f "$log" ] || continue
		name=$(basename "$log" .log)
		awk -v name="$name" '
		function sz(kib) {
			if (kib == "" || kib == "none")
				return "none"
			if (kib >= 1048576)
				return kib / 1048576 "G"
			return kib >= 1024 ? kib / 1024 "M" : kib "K"
		}
		/^RESULT / {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				k = kv[1]; sub(/^[0-9]+[MG]_/, "", k)
				v[k] = kv[2]
			}
		}
		/^6.12 clears/ { page = ($0 ~ /page_linear/) ? "page_linear" : "page_php" }
		END {
			printf "%-16s %9.2f %9.2f %8s %8.2f %8s %8.2f %8s %8.2f %8s %8.2f\n",
				name, v[page "_gbps"], v["memset_gbps"],
				sz(v["chunk90_kib"]), v["chunk90_x_page"],
				sz(v["best_chunk_kib"]), v["best_chunk_x_page"],
				sz(v["chunkup90_kib"]), v["chunkup90_x_page"],
				sz(v["chunknt90_kib"]), v["chunknt90_x_page"]
		}' "$log"
	done
	echo "chunk90: the smallest chunk size with >= 90% of memset (series order);"
	echo "chunkup90: the same with the far region cleared upwards;"
	echo "chunknt90: the same with the far region cleared with clzero (none: no"
	echo "size got there, or no clzero)"
	echo "targets: chunk90 exists; for 1G, chunk90 x page >= 1.30"
	for log in "$OUT"/run*-1G-*.log; do
		[ -f "$log" ] || continue
		for k in chunk chunkup chunknt; do
			grep -q "^RESULT 1G_${k}_" "$log" || continue
			echo "$(basename "$log" .log): ${k}_<size> x page:" \
				"$(sed -n "s/^RESULT 1G_${k}_\([0-9]*[KMG]\)_x_page=\(.*\)/\1 \2/p" "$log" |
				  tr '\n' ' ')"
		done
		x=$(sed -n 's/^RESULT 1G_chunk90_x_page=//p' "$log")
		if [ -z "$x" ]; then
			echo "$(basename "$log" .log): no chunk size reached 90% of memset: target not met"
		elif awk -v x="$x" 'BEGIN { exit !(x >= 1.3) }'; then
			echo "$(basename "$log" .log): chunk90 is ${x}x page: 1.3x target met"
		else
			echo "$(basename "$log" .log): chunk90 is ${x}x page: 1.3x target NOT met"
		fi
		for k in kchunk fchunk ntkchunk; do
			x=$(sed -n "s/^RESULT 1G_${k}_x_page=//p" "$log")
			m=$(sed -n "s/^RESULT 1G_${k}_x_memset=//p" "$log")
			if [ -z "$x" ]; then
				[ "$k" != ntkchunk ] ||
					echo "$(basename "$log" .log): ntkchunk: no clzero, not measured"
				continue
			fi
			case $k in
			kchunk) what="preempt=none/voluntary" ;;
			fchunk) what="preempt=full" ;;
			*) what="clzero, preempt=none/voluntary" ;;
			esac
			awk -v k=$k -v w="$what" -v x="$x" -v m="$m" \
				-v n="$(basename "$log" .log)" 'BEGIN {
				printf "%s: %s (%s) is %.2fx page, %.2fx memset: targets %s\n",
					n, k, w, x, m, (x >= 1.3 && m >= 0.9) ? "met" : "NOT met"
			}'
		done
	done
	echo "the kernel's own chunks (folio_zero_calibrate(), modelled; a chunk"
	echo "larger than the huge page is the whole page; the clzero chunk is the"
	echo "kernel's for 1G pages only):"
	for log in "$OUT"/run*.log; do
		[ -f "$log" ] || continue
		grep -E '^summary .*(calibration|kernel chunk|clzero)' "$log" |
			sed "s/^summary /$(basename "$log" .log): /"
	done
	echo "logs: ${OUT#"$REPO/"}"
} | tee "$OUT/summary.txt"
