#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Huge page clearing: base vs patched kernel, under preempt=voluntary and
# preempt=none (and preempt=full if asked for), in the lab (QEMU TCG).
#
#   bench/hugepage-clear.sh
#   MODELS=voluntary REPEAT=2 LAT_S=30 bench/hugepage-clear.sh
#
# Boots each kernel (KERNELS, default "base patched") with each preemption
# model (MODELS, default "voluntary none") on the kernel command line, plus
# BOOT_ARGS (default "hugepagesz=1G hugepages=2:1": one 1 GiB hugetlb page
# on node2), REPEAT (1) times, base and patched back to back for each
# model (in KERNELS order in odd runs, reversed in even runs, so that with
# an even REPEAT each kernel boots first as often as second: the second
# boot of a pair sees larger latency maxima, see bench/README), and runs bench/scenarios/hugepage-clear.sh in each boot: wakeup
# latency of a SCHED_FIFO thread on CPU0 while another thread on CPU0
# demand-faults hugetlb pages (2 MiB and 1 GiB), and the fault throughput.
# Then prints one table: per model, base, patched and patched/base for
# each RESULT key (the median over the REPEAT runs), and the check that
# patched's max wakeup latency stays within base's + 1 ms, next to the
# time the longest stretch without a rescheduling point takes.  Every time and rate in it is TCG (emulated), not hardware.
#
# It builds nothing but build/bench/bin/hugefault: the kernels must be
# there (make bench, or make kernel and bench/run.sh, builds them).
# Passed to the guest: LAT_S, IDLE_S, SIZE_MIB, TPUT_ROUNDS, CYCLICTEST
# (see the scenario).  BENCH_TIMEOUT: host-side timeout of one boot (600).
# Output: build/bench/hugepage-clear-<timestamp>/ (KERNEL-MODEL-rN.log, the
# lab directories next to them, table.txt).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$REPO/build/bench/hugepage-clear-$(date +%Y%m%d-%H%M%S)
BIN=$REPO/build/bench/bin
MODELS=${MODELS:-voluntary none}
KERNELS=${KERNELS:-base patched}
REPEAT=${REPEAT:-1}
BOOT_ARGS=${BOOT_ARGS-hugepagesz=1G hugepages=2:1}
TIMEOUT=${BENCH_TIMEOUT:-600}
start=$(date +%s)

declare -A KERNEL=(
	[base]=$REPO/build/base/obj/arch/x86/boot/bzImage
	[patched]=$REPO/build/obj/arch/x86/boot/bzImage
)
for k in $KERNELS; do
	[ -f "${KERNEL[$k]:-}" ] ||
		{ echo "hugepage-clear: no $k kernel (${KERNEL[$k]:-?}): make bench" >&2; exit 2; }
done
mkdir -p "$BIN" "$OUT"
gcc -O2 -Wall -Wextra -o "$BIN/hugefault" "$REPO/bench/hugefault.c" || exit 2

env=""
for v in LAT_S IDLE_S SIZE_MIB TPUT_ROUNDS CYCLICTEST; do
	[ -n "${!v:-}" ] && env+="$v=${!v} "
done

failed=()
for r in $(seq 1 "$REPEAT"); do
	for m in $MODELS; do
		order=$KERNELS
		[ $((r % 2)) = 0 ] && order=$(echo "$KERNELS" | tr ' ' '\n' | tac | xargs)
		for k in $order; do
			run=$k-$m-r$r
			echo "hugepage-clear: $run: booting ${KERNEL[$k]#"$REPO/"} with preempt=$m $BOOT_ARGS"
			rc=0
			LAB_QUIET=${LAB_QUIET:-1} "$REPO/scripts/lab.sh" -k "${KERNEL[$k]}" \
				-a "preempt=$m $BOOT_ARGS" -t "$TIMEOUT" -d "$OUT/$run.lab" \
				"${env}bash $REPO/bench/scenarios/hugepage-clear.sh" || rc=$?
			cp "$OUT/$run.lab/out.log" "$OUT/$run.log" 2>/dev/null || : > "$OUT/$run.log"
			grep '^RESULT ' "$OUT/$run.log" | sed 's/^/  /'
			if [ $rc != 0 ]; then
				echo "hugepage-clear: $run FAILED (lab exit $rc, see ${OUT#"$REPO/"}/$run.lab/console.log)" >&2
				failed+=("$run")
			fi
		done
	done
done

python3 - "$OUT" "$MODELS" "$KERNELS" "$REPEAT" <<'EOF' | tee "$OUT/table.txt"
import re
import statistics
import sys

out, models, kernels, repeat = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4])
vals = {}   # (kernel, model, key) -> [values, one per run]
keys = []
for m in models:
    for k in kernels:
        for r in range(1, repeat + 1):
            try:
                lines = open(f"{out}/{k}-{m}-r{r}.log").read().splitlines()
            except OSError:
                continue
            for line in lines:
                if not line.startswith("RESULT "):
                    continue
                for kv in line.split()[1:]:
                    key, _, v = kv.partition("=")
                    if key not in keys:
                        keys.append(key)
                    vals.setdefault((k, m, key), []).append(v)


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def fmt(v):
    return "%d" % round(v) if v == int(v) or abs(v) >= 1000 else "%.4g" % v


def cell(k, m, key):
    vs = vals.get((k, m, key), [])
    ns = [num(v) for v in vs]
    if not vs:
        return None, "-"
    if None in ns:
        return None, ",".join(vs)
    med = statistics.median(ns)
    return med, fmt(med) if len(ns) == 1 else "%s [%s]" % (fmt(med), ",".join(vs))


tcg = "  TCG"
print(f"hugepage-clear: results in {out}")
print("base = unpatched 6.12, patched = base + series; cells: the value "
      + ("(median [each run])" if repeat > 1 else "of the one run")
      + "; *_us, *_s, *gibps are TCG (emulated) times and rates, not hardware")
for m in models:
    print(f"\npreempt={m}:")
    print("  %-22s %22s %22s %12s" % ("key", kernels[0], kernels[-1],
                                      f"{kernels[-1]}/{kernels[0]}"))
    for key in keys:
        if key == "preempt":
            continue
        (b, bs), (p, ps) = cell(kernels[0], m, key), cell(kernels[-1], m, key)
        ratio = "%.3f" % (p / b) if b and p is not None else "-"
        t = tcg if re.search(r"(_us|_s|gibps)$", key) else ""
        print("  %-22s %22s %22s %12s%s" % (key, bs, ps, ratio, t))



def run_val(k, m, key, r):
    vs = vals.get((k, m, key), [])
    return num(vs[r]) if r < len(vs) else None


if "base" in kernels and "patched" in kernels:
    print("\nchecks, each run's base and patched boots side by side (TCG):")
    for m in models:
        # pairs per part: (booted first, max base, max patched)
        pairs = {}
        for r in range(repeat):
            first = kernels[0] if r % 2 == 0 else kernels[-1]
            ib = run_val("base", m, "idle_max_us", r)
            ip = run_val("patched", m, "idle_max_us", r)
            if ib is not None and ip is not None:
                print(f"  preempt={m:9} r{r + 1} idle (noise floor): max {fmt(ib)} / "
                      f"{fmt(ip)} us, p99 {fmt(run_val('base', m, 'idle_p99_us', r))} / "
                      f"{fmt(run_val('patched', m, 'idle_p99_us', r))} us")
            for part in ("lat2m", "cyc2m", "lat1g"):
                b, p = (run_val(k, m, part + "_max_us", r) for k in ("base", "patched"))
                b50, p50 = (run_val(k, m, part + "_p50_us", r) for k in ("base", "patched"))
                b99, p99 = (run_val(k, m, part + "_p99_us", r) for k in ("base", "patched"))
                b999, p999 = (run_val(k, m, part + "_p999_us", r) for k in ("base", "patched"))
                if None in (b, p, b50, p50, b99, p99):
                    continue
                ok = "yes" if p <= b + 1000 else "NO"
                pairs.setdefault(part, []).append((first, b, p))
                tail = ""
                if None not in (b999, p999):
                    tail = f", p99.9 {fmt(b999)} -> {fmt(p999)}"
                print(f"  preempt={m:9} r{r + 1} ({first} first) {part}: max {fmt(b)} -> "
                      f"{fmt(p)} us ({p - b:+.0f}; within base + 1 ms: {ok}){tail}, "
                      f"p99 {fmt(b99)} -> {fmt(p99)}, p50 {fmt(b50)} -> {fmt(p50)} us")
        for part, ps in pairs.items():
            for who in ("base", "patched"):
                d = ["%+.0f" % (p - b) for f, b, p in ps if f == who]
                if d:
                    print(f"  preempt={m:9} {part}: patched - base max, {who} booted "
                          f"first: {' '.join(d)} us")
        for part in ("tput2m", "tput1g"):
            b, _ = cell("base", m, part + "_gibps")
            p, _ = cell("patched", m, part + "_gibps")
            if b and p:
                print(f"  preempt={m:9} {part}: {fmt(b)} -> {fmt(p)} GiB/s (median), "
                      f"patched/base {p / b:.3f}")
        # patched (mm/memory.c): without preemption a range is cleared in
        # batches of PROCESS_PAGES_NON_PREEMPT_BATCH (32 MiB on x86); a
        # 2 MiB page faulted at its start is a 2036 KiB range, then 12 KiB
        if m in ("none", "voluntary"):
            for part, kib in (("tput2m", 2036), ("tput1g", 32768)):
                p, _ = cell("patched", m, part + "_gibps")
                if p:
                    print(f"  preempt={m:9} {part}: patched's longest stretch without a "
                          f"rescheduling point, {kib} KiB, takes {kib / 1048576 / p * 1e6:.0f} us "
                          f"at its rate (base: 4 KiB)")
    print("  (a max is one sample: in TCG on a shared host it is as much host "
          "scheduling as kernel; read it next to the idle floor and the p50/p99)")
EOF

echo "hugepage-clear: done in $(($(date +%s) - start)) s"
[ ${#failed[@]} = 0 ] || { echo "FAILED runs: ${failed[*]}"; exit 1; }
