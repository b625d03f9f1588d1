#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make run: the recommended tiering setup (tools/mm/damon-tiering.sh) on
# the policy bench's workload W1.  Builds the workload (bench/phases.c) into
# build/demo/, boots the tiered lab, runs scripts/demo-guest.sh there and
# streams its output.  The lab's files
# (out.log, console.log) stay in build/demo/lab.  Exit: the guest's.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$REPO/build/demo
LABDIR=$OUT/lab

mkdir -p "$LABDIR" || exit 1
gcc -O2 -Wall -o "$OUT/phases" "$REPO/bench/phases.c" || exit 1

rm -f "$LABDIR/out.log"
LAB_QUIET=1 "$REPO/scripts/lab.sh" -t 900 -d "$LABDIR" \
	"$(printf 'bash %q %q' "$REPO/scripts/demo-guest.sh" "$OUT/phases")" &
lab=$!
tail -n +1 -F --pid=$lab "$LABDIR/out.log" 2>/dev/null &
tailpid=$!
wait $lab
rc=$?
wait $tailpid
if [ $rc = 124 ] || [ $rc = 125 ]; then
	echo "demo: the lab failed; end of $LABDIR/console.log:" >&2
	tail -n 20 "$LABDIR/console.log" >&2
fi
exit $rc
