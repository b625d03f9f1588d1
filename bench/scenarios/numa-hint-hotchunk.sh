#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernels: patched
# timeout: 3600
#
# numa-hint-seed.sh's configurations in numa-hint.sh's hot-chunk regime
# (WORKLOAD=hotchunk): a hot set of HOT_CHUNKS chunks on node2 gets every
# episode, and never-hot chunks are swept once now and then (bursts).  See
# numa-hint-seed.sh and bench/README.
WORKLOAD=hotchunk exec bash "$(dirname "$0")/numa-hint-seed.sh"
