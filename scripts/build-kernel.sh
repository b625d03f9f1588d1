#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Configure (from the fragments, with merge_config.sh) and build the lab kernel.
#
#   scripts/build-kernel.sh [SRC_DIR [OBJ_DIR]]   (default: build/linux build/obj)
#
# KCONFIG_EXTRA: more fragments (paths, space-separated) merged after the lab's
# (scripts/build-debug-kernel.sh: configs/debug.config into build/obj-debug).
#
# Every option a fragment asks for must be in the final .config, else this
# fails and names it.  ccache makes rebuilds cheap.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=${1:-$REPO/build/linux}
OBJ=${2:-$REPO/build/obj}
FRAGS=("$REPO"/configs/lab-*.config "$REPO"/tools/testing/selftests/mm/{tiering,huge_zero}/config)
# the series' own options, where the tree has them (not in the bench's base)
SERIES_FRAG=$(mktemp)
trap 'rm -f "$SERIES_FRAG"' EXIT
"$REPO/scripts/series-options.sh" "$SRC" > "$SERIES_FRAG"
FRAGS+=("$SERIES_FRAG")
# shellcheck disable=SC2206
FRAGS+=(${KCONFIG_EXTRA:-})
JOBS=${JOBS:-$(($(nproc) + 1))}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache-tiering}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# paths relative to the build root, so base and patched trees (and CI clones) share hits
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$OBJ")}
# kbuild embeds neither time nor host into objects with these, so ccache hits
export KBUILD_BUILD_TIMESTAMP="2024-11-17" KBUILD_BUILD_USER=lab KBUILD_BUILD_HOST=lab
MAKE=(make -C "$SRC" O="$OBJ" -j"$JOBS" CC="ccache gcc" HOSTCC="ccache gcc")

mkdir -p "$OBJ"
stamp=$(cat "${FRAGS[@]}" | sha1sum | cut -c1-40)
if [ ! -f "$OBJ/.config" ] || [ "$(cat "$OBJ/.fragments.sha1" 2>/dev/null)" != "$stamp" ]; then
	echo "build: merging config fragments: ${FRAGS[*]#"$REPO/"}"
	(cd "$SRC" && scripts/kconfig/merge_config.sh -n -O "$OBJ" "${FRAGS[@]}" >"$OBJ/merge_config.log" 2>&1) ||
		{ cat "$OBJ/merge_config.log"; exit 1; }
	bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=n) opt=${line%%=*}
			grep -q "^$opt=[ym]" "$OBJ/.config" && { echo "build: $opt=n requested, .config has $(grep "^$opt=" "$OBJ/.config")" >&2; bad=1; } ;;
		CONFIG_*=*) opt=${line%%=*}
			grep -qxF "$line" "$OBJ/.config" || { echo "build: $line requested, .config has '$(grep "^$opt=" "$OBJ/.config" || echo "# $opt is not set")'" >&2; bad=1; } ;;
		esac
	done < <(cat "${FRAGS[@]}" | sed 's/[[:space:]]*#.*//' | grep '^CONFIG_')
	[ $bad = 0 ] || { echo "build: config fragments not satisfied (see above)" >&2; exit 1; }
	echo "$stamp" > "$OBJ/.fragments.sha1"
fi

echo "build: make -j$JOBS bzImage in ${OBJ#"$REPO/"} (progress: one line per 200 objects)"
start=$(date +%s)
"${MAKE[@]}" bzImage 2>&1 | tee "$OBJ/build.log" |
	awk '/ CC | LD | AR /{n++; if (n % 200 == 0) {printf "build: %d objects...\n", n; fflush()}}
	     /error:|warning:/{print; fflush()}'
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { echo "build: FAILED, last lines of ${OBJ#"$REPO/"}/build.log:" >&2; tail -30 "$OBJ/build.log" >&2; exit 1; }
echo "build: done in $(($(date +%s) - start)) s: ${OBJ#"$REPO/"}/arch/x86/boot/bzImage"
