#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The debug lane: the lab kernel plus configs/debug.config (KASAN, KFENCE,
# lockdep, DEBUG_VM, UBSAN...) built in build/obj-debug, booted in the lab
# with hot-pluggable DIMMs (lab.sh -H) and 8 CPUs (DEBUG_LAB_CPUS), running
# the KUnit suites, the mm/tiering kselftests (knob_fuzz, hotplug) and
# tiering_stress.  Any WARNING/BUG/KASAN/UBSAN/lockdep report in the console
# fails it.
#
#   scripts/check-debug.sh        needs build/linux (make tree)
#
# TIERING_STRESS_SECONDS (default 300): the stress's duration.
# DEBUG_LAB_TIMEOUT (default 10800 s): the host-side limit of the boot.
# DEBUG_LAB_CPUS (default 8): the guest's CPUs, four per DRAM node, so that
# per-CPU code (vmstat diffs, the period's fold, kdamonds, DAMON's sysfs
# lock) runs on more than two CPUs at once; NR_CPUS is 512 (lab-machine).
# Ends with "N passed, N failed, N skipped"; logs in build/check-debug/.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=$REPO/build/linux
OUT=$REPO/build/check-debug
rm -rf "$OUT"
mkdir -p "$OUT"
RES=$OUT/host-results.tsv
: > "$RES"
t0=$(date +%s)

result() {	# name pass|fail|skip [detail]
	printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >> "$RES"
	printf 'check-debug: %-4s %s%s\n' "$2" "$1" "${3:+ ($3)}"
}
finish() {
	python3 "$REPO/scripts/check-report.py" --host "$RES" --tsv-out "$OUT/results.tsv" "$@"
	rc=$?
	echo "check-debug: logs in ${OUT#"$REPO/"}/, took $(($(date +%s) - t0)) s"
	exit $rc
}

[ -d "$SRC" ] || "$REPO/scripts/assemble.sh" || { result debug/tree fail; finish; }
echo "== build (debug kernel)"
b0=$(date +%s)
if "$REPO/scripts/build-debug-kernel.sh"; then
	result "debug/build/kernel" pass "$(($(date +%s) - b0)) s"
else
	result "debug/build/kernel" fail
	finish
fi
if make -C "$SRC/tools/testing/selftests" TARGETS="mm/tiering mm/huge_zero damon" \
	O="$REPO/build/kselftest-build" INSTALL_PATH="$REPO/build/kselftest" \
	install > "$OUT/kselftest-build.log" 2>&1; then
	result "debug/build/kselftests" pass
else
	tail -30 "$OUT/kselftest-build.log"
	result "debug/build/kselftests" fail
	finish
fi

echo "== debug lab (console: build/check-debug/lab/console.log)"
l0=$(date +%s)
LAB_QUIET=1 LAB_CPUS=${DEBUG_LAB_CPUS:-8} "$REPO/scripts/lab.sh" -H -k "$REPO/build/obj-debug/arch/x86/boot/bzImage" \
	-t "${DEBUG_LAB_TIMEOUT:-10800}" -a "hugepagesz=1G hugepages=2:1" -d "$OUT/lab" \
	"TIERING_STRESS_SECONDS=${TIERING_STRESS_SECONDS:-300} bash $REPO/scripts/check-debug-guest.sh"
lab_rc=$?
echo "check-debug: lab took $(($(date +%s) - l0)) s"
[ -f "$OUT/lab/out.log" ] && grep -E '^(not )?ok |^# (not )?ok |SKIP|TIMEOUT' "$OUT/lab/out.log" | sed 's/^/lab: /'
finish --lab-rc "$lab_rc" --console "$OUT/lab/console.log" \
	--kselftest "$OUT/lab/out.log" --kunit-json "$OUT/kunit.json" --prefix debug/
