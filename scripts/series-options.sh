#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the lines of configs/series.config whose option the kernel tree SRC
# defines: the series' own options, where (and as far as) the series is
# applied.  The base, and a commit before the patch that adds an option,
# get none of them.
#
#   scripts/series-options.sh SRC > fragment.config
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=$1
grep '^CONFIG_' "$REPO/configs/series.config" | while IFS= read -r line; do
	opt=${line%%=*}
	if grep -qx "config ${opt#CONFIG_}" "$SRC"/Kconfig.tiering "$SRC"/mm/Kconfig "$SRC"/init/Kconfig \
		"$SRC"/mm/damon/Kconfig 2>/dev/null; then
		echo "$line"
	fi
done
