#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in the lab guest for `make check`: the mm/tiering kselftests, then the
# base tree's DAMON selftests, through the kselftest runner (TAP on stdout).
# KUnit already ran at boot; its TAP is in the console log.
REPO=$(cd "$(dirname "$0")/.." && pwd)
cp -a "$REPO/build/kselftest" /tmp/kselftest
cd /tmp/kselftest || exit 1
./run_kselftest.sh -o 900 -c mm/tiering
./run_kselftest.sh -o 900 -c damon
echo "check-guest: done"
