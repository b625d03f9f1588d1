#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernels: patched
# timeout: 3600
#
# numa-hint-seed.sh with two processes (WORKLOAD=twoproc): the seed-regime
# process, with a high hint-fault rate, and a small one whose hot set sits
# on node2 and faults rarely.  See numa-hint-seed.sh and bench/README.
WORKLOAD=twoproc exec bash "$(dirname "$0")/numa-hint-seed.sh"
