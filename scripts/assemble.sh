#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Assemble the kernel tree: pristine base + the repo's new files + patches/series.
#
#   scripts/assemble.sh [SRC_DIR]        (default: build/linux)
#
# SRC_DIR is a git repo: commit "base" is the pristine tarball, the commit on
# top of it ("series") is what this repo adds, so `git diff base` shows the
# series.  Re-assembly rewrites only files whose content changed, so kbuild
# rebuilds only what changed.  With BASE_ONLY=1 the tree stays pristine (bench).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/scripts/base.env"
SRC=${1:-$REPO/build/linux}

# Files of the repo that go into the kernel tree at the same path.
new_files() {
	(cd "$REPO" && git ls-files --cached --others --exclude-standard \
		arch mm kernel include tools/testing/selftests/mm/tiering \
		tools/testing/selftests/mm/huge_zero tools/mm \
		Documentation Kconfig.tiering 2>/dev/null | sort -u)
}
# (scripts/export-series.sh asks for the same list)
[ "${1:-}" = --new-files ] && { new_files; exit 0; }

unpack_base() {
	[ -d "$SRC/.git" ] && return
	[ -f "$BASE_TARBALL" ] || { echo "assemble: $BASE_TARBALL missing: run scripts/install-deps.sh" >&2; exit 1; }
	echo "assemble: unpacking $BASE_PKG $BASE_VERSION into $SRC"
	rm -rf "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xJf "$BASE_TARBALL" -C "$SRC.tmp" --strip-components=1
	git -C "$SRC.tmp" init -q
	git -C "$SRC.tmp" add -A -f
	git -C "$SRC.tmp" -c user.name=base -c user.email=base@localhost \
		commit -q -m "base: $BASE_PKG $BASE_VERSION (pristine)"
	git -C "$SRC.tmp" tag base
	mv "$SRC.tmp" "$SRC"
}

unpack_base
[ "${BASE_ONLY:-0}" = 1 ] && { echo "assemble: $SRC is the pristine base"; exit 0; }

# Build the desired version of every touched file in a scratch directory.
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT

mapfile -t PATCHES < <(grep -v -e '^#' -e '^[[:space:]]*$' "$REPO/patches/series" || true)
touched=()
for p in "${PATCHES[@]}"; do
	[ -f "$REPO/patches/$p" ] || { echo "assemble: patches/series names $p, which does not exist" >&2; exit 1; }
	while read -r f; do touched+=("$f"); done < <(sed -n 's#^+++ b/\([^\t ]*\).*#\1#p' "$REPO/patches/$p")
done
for f in "${touched[@]}"; do
	mkdir -p "$STAGE/$(dirname "$f")"
	git -C "$SRC" show "base:$f" > "$STAGE/$f" 2>/dev/null || rm -f "$STAGE/$f"
done
(cd "$REPO" && new_files | while read -r f; do
	[ -f "$f" ] || continue
	mkdir -p "$STAGE/$(dirname "$f")"
	cp -p "$f" "$STAGE/$f"
done)

# MAINTAINERS: each snippet's entry goes in before the first entry that
# sorts after it, with an M: line for TIERING_MAINTAINER ("NAME <EMAIL>")
# if set (scripts/export-series.sh sets it to the exporter's identity).
git -C "$SRC" show base:MAINTAINERS > "$STAGE/MAINTAINERS"
MAINTAINER=()
[ -z "${TIERING_MAINTAINER:-}" ] || MAINTAINER=(--maintainer "$TIERING_MAINTAINER")
for snippet in "$REPO"/MAINTAINERS*.snippet; do
	"$REPO/scripts/maintainers-merge.py" "$STAGE/MAINTAINERS" "$snippet" "${MAINTAINER[@]}"
done

for p in "${PATCHES[@]}"; do
	if ! out=$(patch -d "$STAGE" -p1 --fuzz=0 --no-backup-if-mismatch -s -f < "$REPO/patches/$p" 2>&1); then
		echo "assemble: FAILED to apply patches/$p (no fuzz allowed):" >&2
		echo "$out" >&2
		exit 1
	fi
done

# Sync into the tree: content-compare so unchanged files keep their mtime.
rsync -rc --out-format='assemble: updated %n' "$STAGE/" "$SRC/"
# Files the series touched before but no longer does: back to base.  (The
# Debian tree's .gitignore hides everything at top level: use -f and lists.)
(cd "$STAGE" && find . -type f | sed 's#^\./##' | sort) > "$STAGE.list"
git -C "$SRC" diff --name-only base | sort > "$STAGE.prev"
comm -23 "$STAGE.prev" "$STAGE.list" | while read -r f; do
	if git -C "$SRC" cat-file -e "base:$f" 2>/dev/null; then
		echo "assemble: reverting $f"
		git -C "$SRC" checkout -q base -- "$f"
	else
		echo "assemble: removing $f"
		git -C "$SRC" rm -q -f --cached -- "$f"
		rm -f "$SRC/$f"
	fi
done
(cd "$SRC" && xargs -a "$STAGE.list" git add -f --)
git -C "$SRC" add -u
rm -f "$STAGE.list" "$STAGE.prev"

git -C "$SRC" reset -q --soft base
if ! git -C "$SRC" diff --cached --quiet; then
	git -C "$SRC" -c user.name=series -c user.email=series@localhost \
		commit -q -m "series: assembled from $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo repo)"
fi
echo "assemble: $SRC = base + $(git -C "$SRC" diff --name-only base | wc -l) files (${#PATCHES[@]} patches)"
