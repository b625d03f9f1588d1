#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the debug lab kernel: the lab fragments plus configs/debug.config
# (KASAN, KFENCE, lockdep, DEBUG_VM, UBSAN...), in its own object directory,
# with the same ccache.  The lab kernel in build/obj is not touched.
#
#   scripts/build-debug-kernel.sh [SRC_DIR [OBJ_DIR]]  (default: build/linux build/obj-debug)
#
# Boot it with: scripts/lab.sh -k build/obj-debug/arch/x86/boot/bzImage ...
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
KCONFIG_EXTRA="${KCONFIG_EXTRA:-} $REPO/configs/debug.config" \
	exec "$REPO/scripts/build-kernel.sh" "${1:-$REPO/build/linux}" "${2:-$REPO/build/obj-debug}"
