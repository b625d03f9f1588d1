#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Turn edits made in build/linux to upstream files into a patch of the series.
#
#   scripts/new-patch.sh MSGFILE PATH...
#
# MSGFILE: first line is the subject ("mm/damon/paddr: ..."), then a blank
# line and the commit message body, without Signed-off-by: `make patches`
# adds the exporting person's (scripts/export-series.sh).  PATHs are
# the upstream files edited in build/linux since the last assembly.  Writes
# patches/NNNN-<slug>.patch, appends it to patches/series, and re-assembles.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=$REPO/build/linux
msg=$1
shift
subject=$(head -1 "$msg")
slug=$(echo "$subject" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$//' | cut -c1-60)
n=$(grep -c '\.patch$' "$REPO/patches/series" || true)
out=$REPO/patches/$(printf '%04d' $((n + 1)))-$slug.patch
diff=$(git -C "$SRC" diff -- "$@")
[ -n "$diff" ] || { echo "new-patch: no changes in $*" >&2; exit 1; }
{
	echo "Subject: [PATCH] $subject"
	echo
	tail -n +3 "$msg"
	echo "---"
	git -C "$SRC" diff --stat=72 -- "$@"
	echo
	echo "$diff"
	echo "-- "
	echo "2.39.5"
} > "$out"
echo "$(basename "$out")" >> "$REPO/patches/series"
# Keep the edited files' mtimes across the revert and re-assembly, so that
# kbuild does not rebuild what it has already built from the same content.
keep=$(mktemp -d)
trap 'rm -rf "$keep"' EXIT
(cd "$SRC" && cp -p --parents "$@" "$keep/")
git -C "$SRC" checkout -q -- "$@"
"$REPO/scripts/assemble.sh" | tail -1
for f in "$@"; do
	if cmp -s "$keep/$f" "$SRC/$f"; then
		touch -r "$keep/$f" "$SRC/$f"
	fi
done
echo "new-patch: wrote ${out#"$REPO/"}"
