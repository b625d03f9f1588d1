#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in the debug lab guest (scripts/check-debug.sh): the mm/tiering
# kselftests and tiering_stress (TIERING_STRESS_SECONDS, default 300), in
# the runner's TAP shape.  KUnit already ran at boot; its TAP is in the
# console log.  The lanes' own tests go first (knob_fuzz, the stress,
# hotplug), then the rest of mm/tiering, so that a host-side timeout cuts
# the tests that the plain lab runs too.
REPO=$(cd "$(dirname "$0")/.." && pwd)
cp -a "$REPO/build/kselftest" /tmp/kselftest
cd /tmp/kselftest || exit 1

./run_kselftest.sh -o 7200 -t mm/tiering:knob_fuzz

# tiering_stress is not in the runner's list (TEST_GEN_PROGS_EXTENDED)
export TIERING_STRESS_SECONDS=${TIERING_STRESS_SECONDS:-300}
echo "# selftests: mm/tiering: tiering_stress (${TIERING_STRESS_SECONDS} s)"
(cd mm/tiering && ./tiering_stress) 2>&1 | sed -u 's/^/# /'
rc=${PIPESTATUS[0]}
case $rc in
0) echo "ok 1 selftests: mm/tiering: tiering_stress" ;;
4) echo "ok 1 selftests: mm/tiering: tiering_stress # SKIP" ;;
*) echo "not ok 1 selftests: mm/tiering: tiering_stress # exit=$rc" ;;
esac

./run_kselftest.sh -o 7200 -t mm/tiering:hotplug
for t in $(sed -n 's/^mm\/tiering://p' kselftest-list.txt); do
	case $t in knob_fuzz | hotplug) continue ;; esac
	./run_kselftest.sh -o 7200 -t "mm/tiering:$t"
done
./run_kselftest.sh -o 7200 -c mm/huge_zero
echo "check-debug-guest: done"
