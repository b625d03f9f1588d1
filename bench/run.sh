#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmarks: the unpatched base kernel vs the patched one, in one run.
#
#   bench/run.sh [SCENARIO...]        (default: every bench/scenarios/*.sh)
#
# Builds the helpers (bench/*.c -> build/bench/bin), the pristine base kernel
# (build/base/{linux,obj}) and the patched one (build/{linux,obj}), boots each
# in the tiered lab once per scenario, keeps the guest's output in
# build/bench/<timestamp>/{base,patched}/<scenario>.log (lab files next to it
# in <scenario>.lab/), and prints every "RESULT key=value" the scenarios
# printed, base vs patched, with the ratio patched/base.  Timing figures
# (keys ending in _s, _ms, _us, _ns) come from TCG (emulated), not hardware.
#
# A scenario may declare, in its header:
#   # kernels: patched     the kernels it runs on (default: base patched)
#   # timeout: SECONDS     the host-side timeout of its boots (default 900)
# A CSV file <scenario>.csv that it leaves in /mnt/lab is kept next to its
# log, and plotted by bench/<scenario>.gp, if any, into <scenario>.png.
#
# BENCH_TIMEOUT: host-side timeout of one lab boot, in seconds (overrides
# the scenarios' own).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$REPO/build/bench/$(date +%Y%m%d-%H%M%S)
BIN=$REPO/build/bench/bin
TCG_NOTE="TCG (emulated), not hardware"
start=$(date +%s)
trap 'echo "bench: FAILED: line $LINENO: $BASH_COMMAND" >&2' ERR

# header NAME SCENARIO: the value of the "# NAME: value" line of SCENARIO
header() {
	sed -n "s/^# $1: *//p" "$REPO/bench/scenarios/$2.sh" | head -n 1
}

scenarios=()
for s in "${@:-$REPO/bench/scenarios/*.sh}"; do
	for f in $s; do
		f=$(basename "$f" .sh)
		[ -f "$REPO/bench/scenarios/$f.sh" ] ||
			{ echo "bench: no scenario bench/scenarios/$f.sh" >&2; exit 2; }
		scenarios+=("$f")
	done
done

echo "bench: helpers -> ${BIN#"$REPO/"}"
mkdir -p "$BIN"
for c in "$REPO"/bench/*.c; do
	gcc -O2 -Wall -Wextra -o "$BIN/$(basename "$c" .c)" "$c"
done

declare -A KERNELS
need_base=0
for s in "${scenarios[@]}"; do
	KERNELS[$s]=$(header kernels "$s")
	KERNELS[$s]=${KERNELS[$s]:-base patched}
	[[ " ${KERNELS[$s]} " = *" base "* ]] && need_base=1
done

if [ $need_base = 1 ]; then
	echo "bench: base kernel (unpatched) in build/base"
	BASE_ONLY=1 "$REPO/scripts/assemble.sh" "$REPO/build/base/linux"
	"$REPO/scripts/build-kernel.sh" "$REPO/build/base/linux" "$REPO/build/base/obj"
fi
echo "bench: patched kernel in build"
"$REPO/scripts/assemble.sh"
"$REPO/scripts/build-kernel.sh"

declare -A KERNEL=(
	[base]=$REPO/build/base/obj/arch/x86/boot/bzImage
	[patched]=$REPO/build/obj/arch/x86/boot/bzImage
)

# table BASE_LOG PATCHED_LOG: one row per RESULT key, in order of appearance
table() {
	awk -v note="$TCG_NOTE" '
	function num(v) { return v ~ /^-?[0-9]+(\.[0-9]+)?$/ }
	/^RESULT / {
		f = FILENAME == ARGV[1] ? 1 : 2
		for (i = 2; i <= NF; i++) {
			p = index($i, "=")
			if (p < 2)
				continue
			k = substr($i, 1, p - 1)
			if (!(k in seen)) {
				seen[k] = 1
				keys[n++] = k
			}
			v[f, k] = substr($i, p + 1)
		}
	}
	END {
		printf "  %-22s %14s %14s %13s\n", "key", "base", "patched", "patched/base"
		for (i = 0; i < n; i++) {
			k = keys[i]
			b = ((1, k) in v) ? v[1, k] : "-"
			p = ((2, k) in v) ? v[2, k] : "-"
			r = (num(b) && num(p) && b + 0 != 0) ? sprintf("%.3f", p / b) : "-"
			printf "  %-22s %14s %14s %13s%s\n", k, b, p, r,
				k ~ /_(s|ms|us|ns)$/ ? "   " note : ""
		}
	}' "$1" "$2"
}

# table1 KERNEL LOG: the same for a scenario that ran on one kernel only
table1() {
	awk -v k="$1" -v note="$TCG_NOTE" '
	/^RESULT / {
		for (i = 2; i <= NF; i++) {
			p = index($i, "=")
			if (p < 2)
				continue
			key = substr($i, 1, p - 1)
			if (!(key in v))
				keys[n++] = key
			v[key] = substr($i, p + 1)
		}
	}
	END {
		printf "  %-30s %14s\n", "key", k
		for (i = 0; i < n; i++)
			printf "  %-30s %14s%s\n", keys[i], v[keys[i]],
				keys[i] ~ /_(s|ms|us|ns)$/ ? "   " note : ""
	}' "$2"
}

# plot SCENARIO CSV PNG [ARGS...]: bench/SCENARIO.gp CSV PNG ARGS...
plot()
{
	gnuplot -c "$REPO/bench/$1.gp" "$2" "$3" "${@:4}" &&
		echo "bench: plot ${3#"$REPO/"}" ||
		echo "bench: $1: gnuplot failed" >&2
}

mkdir -p "$OUT"
failed=()
for s in "${scenarios[@]}"; do
	timeout=${BENCH_TIMEOUT:-$(header timeout "$s")}
	for k in ${KERNELS[$s]}; do
		d=$OUT/$k
		mkdir -p "$d"
		echo "bench: $s on $k (${KERNEL[$k]#"$REPO/"})"
		rc=0
		LAB_QUIET=${LAB_QUIET:-1} "$REPO/scripts/lab.sh" -k "${KERNEL[$k]}" \
			-d "$d/$s.lab" -t "${timeout:-900}" "bash $REPO/bench/scenarios/$s.sh" || rc=$?
		cp "$d/$s.lab/out.log" "$d/$s.log" 2>/dev/null || : > "$d/$s.log"
		grep '^RESULT ' "$d/$s.log" | sed 's/^/  /' || true
		if [ -f "$d/$s.lab/$s.csv" ]; then
			cp "$d/$s.lab/$s.csv" "$d/$s.csv"
			[ -f "$REPO/bench/$s.gp" ] && plot "$s" "$d/$s.csv" "$d/$s.png"
		fi
		# tiering-policies' W4 to W7: one CSV, a plot per workload
		if [ -f "$d/$s.lab/$s-hotset.csv" ] && [ -f "$REPO/bench/$s.gp" ]; then
			for wl in W4 W5 W6 W7; do
				awk -F, -v w="$wl" 'NR == 1 || index($1, w "_") == 1' \
					"$d/$s.lab/$s-hotset.csv" > "$d/$s-$wl.csv"
				[ "$(wc -l < "$d/$s-$wl.csv")" -gt 1 ] || continue
				plot "$s" "$d/$s-$wl.csv" "$d/$s-$wl.png" "$wl"
			done
		fi
		if [ $rc != 0 ]; then
			echo "bench: $s on $k FAILED (lab exit $rc, see ${d#"$REPO/"}/$s.lab/console.log)" >&2
			failed+=("$s/$k")
		fi
	done
done

{
	echo
	echo "bench: results in ${OUT#"$REPO/"}  (base = unpatched, patched = base + series)"
	for s in "${scenarios[@]}"; do
		echo
		echo "$s:"
		set -- ${KERNELS[$s]}
		if [ $# = 1 ]; then
			table1 "$1" "$OUT/$1/$s.log"
		else
			table "$OUT/base/$s.log" "$OUT/patched/$s.log"
		fi
	done
	echo
	echo "Timing figures (*_s) are $TCG_NOTE; prefer the counts."
	[ ${#failed[@]} = 0 ] || echo "FAILED runs: ${failed[*]}"
} | tee "$OUT/table.txt"
ln -sfn "$(basename "$OUT")" "$REPO/build/bench/latest"
echo "bench: done in $(($(date +%s) - start)) s"
[ ${#failed[@]} = 0 ]
