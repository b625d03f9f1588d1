#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in the lab guest for `make check`: the mm/tiering and mm/huge_zero
# kselftests, then the base tree's DAMON selftests, through the kselftest
# runner (TAP on stdout).
# KUnit already ran at boot; its TAP is in the console log.
#
# Several upstream DAMON selftests sample timing-sensitive state and flake
# under TCG emulation.  A DAMON selftest that fails is run once more; the
# report takes the rerun's result and prints the test as FLAKY.  Our own
# mm/tiering tests are never rerun.
REPO=$(cd "$(dirname "$0")/.." && pwd)
cp -a "$REPO/build/kselftest" /tmp/kselftest
cd /tmp/kselftest || exit 1
./run_kselftest.sh -o 900 -c mm/tiering
./run_kselftest.sh -o 900 -c mm/huge_zero
./run_kselftest.sh -o 900 -c damon | tee /tmp/damon.tap
for t in $(sed -n 's/^not ok [0-9]* selftests: damon: \([^ ]*\).*/\1/p' /tmp/damon.tap); do
	echo "# check-guest: rerun damon:$t"
	./run_kselftest.sh -o 900 -t "damon:$t"
done
echo "check-guest: done"
