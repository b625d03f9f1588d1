#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Config matrix: the series builds with no warnings in configurations other
# than the lab's (make matrix).
#
#   scripts/matrix.sh [--base] [--no-bisect] [NAME...]
#                                  (default: every configs/matrix/NAME.config)
#
# Each entry configs/matrix/NAME.config is merged (merge_config.sh, onto
# allnoconfig) on top of the lab fragments and configs/matrix/common.config
# (CONFIG_WERROR=y: a warning fails the build).  A "# arch: i386" or
# "# arch: arm64" line in it builds for that architecture (arm64 with
# Debian's aarch64-linux-gnu-gcc).  Every option the entry and common.config
# ask for must be in the final .config, else the entry fails and names it.
# Then, in build/matrix/NAME: `make prepare` and `make` of the directories
# the series touches (from the patches' "+++ b/" lines and the repo's new C
# files, each directory once, under its top-most touched parent: mm/,
# kernel/sched/, arch/$SRCARCH/lib/), so Kbuild builds exactly what the
# config enables in them.  Headers are not built on their own: every
# directory above includes them.
#
# A failing entry is built again on the pristine base (build/base/linux, as
# bench/run.sh assembles it; objects in build/matrix-base/NAME): if every
# error of the series' build is also an error of the base's (same file and
# message, line numbers aside), the entry is "base-known", not the series'
# fault.  --base builds the base for every entry, failing or not.
#
# Then "bisect": scripts/export-series.sh --build --check, which builds
# the lab kernel at every commit of the exported series (--no-bisect skips
# it).  It is the expensive part: the commits that change mmzone.h or
# page_64.h rebuild nearly the whole kernel, cold that is several full
# builds.  make check runs the entries (scripts/check.sh: CHECK_MATRIX),
# not the bisect.
#
# Output: one line per entry, "matrix: pass NAME (N s, cpu N s)",
# "matrix: FAIL NAME: <first error> (...)" or "matrix: base-known NAME:
# <first error> (...)", then a summary.  Logs: build/matrix/NAME/build.log,
# build/matrix/bisect.log.  Exits non-zero if any entry FAILs.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=$REPO/build/linux
BASE_SRC=$REPO/build/base/linux
OUT=$REPO/build/matrix
JOBS=${JOBS:-$(($(nproc) + 1))}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache-tiering}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# paths relative to build/, so that every clone shares the cache's hits
export CCACHE_BASEDIR=$REPO/build
export KBUILD_BUILD_TIMESTAMP="2024-11-17" KBUILD_BUILD_USER=lab KBUILD_BUILD_HOST=lab

ALL_BASE=0 BISECT=1
NAMES=()
for a in "$@"; do
	case "$a" in
	--base) ALL_BASE=1 ;;
	--no-bisect) BISECT=0 ;;
	-*) echo "usage: scripts/matrix.sh [--base] [--no-bisect] [NAME...]" >&2; exit 2 ;;
	*) [ -f "$REPO/configs/matrix/$a.config" ] ||
		{ echo "matrix: no configs/matrix/$a.config" >&2; exit 2; }
	   NAMES+=("$a") ;;
	esac
done
if [ ${#NAMES[@]} = 0 ]; then
	for f in "$REPO"/configs/matrix/*.config; do
		n=$(basename "$f" .config)
		[ "$n" = common ] || NAMES+=("$n")
	done
fi

# The directories to build: those of every .c file and Makefile the series
# adds or patches, each under its top-most touched ancestor (mm/ covers
# mm/damon/: Kbuild descends into it only if the config wants it).
series_dirs() {
	{
		sed -n 's#^+++ b/\([^\t ]*\).*#\1#p' $(grep -v -e '^#' -e '^[[:space:]]*$' \
			"$REPO/patches/series" | sed "s#^#$REPO/patches/#")
		"$REPO/scripts/assemble.sh" --new-files
	} | grep -E '(\.c|/Makefile)$' | grep -v '^tools/' | xargs -n1 dirname | sort -u |
	awk '{ for (i = 1; i <= n; i++) if (index($0 "/", d[i] "/") == 1) next; d[++n] = $0 }
	     END { for (i = 1; i <= n; i++) print d[i] "/" }'
}
mapfile -t DIRS < <(series_dirs)

# arch_of NAME: the entry's "# arch:" line, x86_64 if none
arch_of() {
	local a
	a=$(sed -n 's/^# arch: *//p' "$REPO/configs/matrix/$1.config" | head -n 1)
	echo "${a:-x86_64}"
}

# configure TREE OBJ NAME ARCH: merge the fragments into OBJ/.config and
# check that the entry's options took effect (on the base, the series' own
# options do not exist and are not checked)
configure() {
	local src=$1 obj=$2 name=$3 arch=$4 frags line opt bad=0
	frags=("$REPO"/configs/lab-*.config "$REPO"/tools/testing/selftests/mm/{tiering,huge_zero}/config)
	mkdir -p "$obj"
	"$REPO/scripts/series-options.sh" "$src" > "$obj/series.config"
	frags+=("$obj/series.config")
	frags+=("$REPO/configs/matrix/common.config" "$REPO/configs/matrix/$name.config")
	stamp=$( (echo "$arch"; cat "${frags[@]}") | sha1sum | cut -c1-40)
	[ -f "$obj/.config" ] && [ "$(cat "$obj/.fragments.sha1" 2>/dev/null)" = "$stamp" ] && return 0
	(cd "$src" && scripts/kconfig/merge_config.sh -n -O "$obj" "${frags[@]}" \
		> "$obj/merge_config.log" 2>&1) || { tail -5 "$obj/merge_config.log"; return 1; }
	while IFS= read -r line; do
		opt=${line%%=*}
		case "$line" in
		*=n)	grep -q "^$opt=[ym]" "$obj/.config" || continue ;;
		*)	grep -qxF "$line" "$obj/.config" && continue ;;
		esac
		echo "$line requested, .config has '$(grep "^$opt=" "$obj/.config" || echo "# $opt is not set")'"
		bad=1
	done < <(cat "$REPO/configs/matrix/common.config" "$REPO/configs/matrix/$name.config" |
		sed 's/[[:space:]]*#.*//' | grep '^CONFIG_')
	[ $bad = 0 ] || return 1
	echo "$stamp" > "$obj/.fragments.sha1"
}

# build TREE OBJ NAME: configure, make prepare, make the series' directories
# (-k: every error, for the comparison with the base); log in OBJ/build.log
build() {
	local src=$1 obj=$2 name=$3 arch cross="" dirs=() d
	arch=$(arch_of "$name")
	[ "$arch" = arm64 ] && cross=aarch64-linux-gnu-
	local -x ARCH=$arch CROSS_COMPILE=$cross
	mkdir -p "$obj"
	configure "$src" "$obj" "$name" "$arch" > "$obj/build.log" 2>&1 || return 1
	# arch/x86/lib/ stands for "the arch's lib/" on another architecture
	for d in "${DIRS[@]}"; do
		case "$d" in
		arch/*/*) d=arch/$(srcarch "$arch")/${d#arch/*/} ;;
		esac
		[ -d "$src/$d" ] && dirs+=("$d")
	done
	echo "matrix: $name: make ARCH=$arch prepare ${dirs[*]}" >> "$obj/build.log"
	make -C "$src" O="$obj" -j"$JOBS" CC="ccache ${cross}gcc" HOSTCC="ccache gcc" \
		prepare >> "$obj/build.log" 2>&1 &&
	make -k -C "$src" O="$obj" -j"$JOBS" CC="ccache ${cross}gcc" HOSTCC="ccache gcc" \
		"${dirs[@]}" >> "$obj/build.log" 2>&1 || return 1
	# CONFIG_WERROR does not cover everything (host tools, the linker)
	! grep -q 'warning:' "$obj/build.log"
}

srcarch() {
	case "$1" in
	i386 | x86_64) echo x86 ;;
	*) echo "$1" ;;
	esac
}

# first_error LOG SRC OBJ: the line that says why the build failed, its
# path relative to the tree
first_error() {
	local rel
	rel=$(realpath -m --relative-to="$3" "$2")
	{ grep -m1 -E 'error:|warning:|requested, \.config has' "$1" ||
		grep -m1 -F '***' "$1" || tail -n 1 "$1"; } | sed -e "s#^$2/##" -e "s#^$rel/##"
}

# diagnostics LOG SRC OBJ: the compiler's errors and warnings, one per
# line, as "file: error: message", paths relative to the tree, no line
# numbers: the same problem on base and series gives the same line
diagnostics() {
	local rel
	rel=$(realpath -m --relative-to="$3" "$2")
	grep -E '^[^ ]+:[0-9]+(:[0-9]+)?: (fatal )?(error|warning): ' "$1" |
		sed -E -e "s#^$2/##" -e "s#^$rel/##" -e 's#^([^ :]+):[0-9]+(:[0-9]+)?:#\1:#' | sort -u
}

mkdir -p "$OUT"
echo "matrix: assembling build/linux"
"$REPO/scripts/assemble.sh" > "$OUT/assemble.log" 2>&1 ||
	{ cat "$OUT/assemble.log"; echo "matrix: FAIL: scripts/assemble.sh" >&2; exit 1; }
echo "matrix: ${#NAMES[@]} entries, each: make prepare ${DIRS[*]}"

have_base=0
need_base() {
	[ $have_base = 1 ] && return 0
	BASE_ONLY=1 "$REPO/scripts/assemble.sh" "$BASE_SRC" > "$OUT/base-assemble.log" 2>&1 ||
		{ cat "$OUT/base-assemble.log" >&2; return 1; }
	have_base=1
}

# cpu: CPU seconds (user + system) of this script's finished children so
# far; with other builds on the machine, wall time says less than this
cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ print int(($16 + $17) / hz) }' /proc/$$/stat
}

# report NAME STATUS DETAIL: the entry's line now, and its row in the summary
declare -A STATUS DETAIL
report() {
	STATUS[$1]=$2 DETAIL[$1]=$3
	case "$2" in
	pass) echo "matrix: pass $1 ($3)" ;;
	*) echo "matrix: $2 $1: $3" ;;
	esac
}

fail=0 t_all=$(date +%s)
for name in "${NAMES[@]}"; do
	obj=$OUT/$name bobj=$OUT-base/$name
	t0=$(date +%s) c0=$(cpu)
	if build "$SRC" "$obj" "$name"; then
		t="$(($(date +%s) - t0)) s, cpu $(($(cpu) - c0)) s"
		if [ $ALL_BASE = 1 ] && ! { need_base && build "$BASE_SRC" "$bobj" "$name"; }; then
			report "$name" pass "$t; the base FAILS: $(first_error "$bobj/build.log" "$BASE_SRC" "$bobj")"
		else
			report "$name" pass "$t"
		fi
		continue
	fi
	t="$(($(date +%s) - t0)) s, cpu $(($(cpu) - c0)) s"
	err=$(first_error "$obj/build.log" "$SRC" "$obj")
	# base-known: the base fails too, and every error of the series' build
	# is one of the base's (a config that did not take is always a FAIL)
	if ! grep -q 'requested, \.config has' "$obj/build.log" &&
	   need_base && ! build "$BASE_SRC" "$bobj" "$name" &&
	   [ -n "$(diagnostics "$bobj/build.log" "$BASE_SRC" "$bobj")" ] &&
	   [ -z "$(comm -23 <(diagnostics "$obj/build.log" "$SRC" "$obj") \
			    <(diagnostics "$bobj/build.log" "$BASE_SRC" "$bobj"))" ]; then
		report "$name" base-known "$err ($t; the base fails alike: build/matrix-base/$name/build.log)"
	else
		report "$name" FAIL "$err ($t; build/matrix/$name/build.log)"
		fail=1
	fi
done

# every commit of the exported series builds the lab kernel
if [ $BISECT = 1 ]; then
	NAMES+=(bisect)
	t0=$(date +%s) c0=$(cpu)
	if "$REPO/scripts/export-series.sh" --build --check > "$OUT/bisect.log" 2>&1; then
		report bisect pass "$(($(date +%s) - t0)) s, cpu $(($(cpu) - c0)) s"
	else
		err=$(grep -m1 -E '^export: \(d\) .*: FAILED' "$OUT/bisect.log" ||
			grep -m1 -E '^export: .*(FAILED|failed)' "$OUT/bisect.log" ||
			tail -n 1 "$OUT/bisect.log")
		t="$(($(date +%s) - t0)) s, cpu $(($(cpu) - c0)) s"
		report bisect FAIL "${err#export: } ($t; build/matrix/bisect.log)"
		fail=1
	fi
fi

echo "matrix: summary, $(($(date +%s) - t_all)) s, cpu $(cpu) s (logs: build/matrix/NAME/build.log)"
for name in "${NAMES[@]}"; do
	printf 'matrix:   %-10s %-20s %s\n' "${STATUS[$name]}" "$name" "${DETAIL[$name]}"
done
[ $fail = 0 ] || { echo "matrix: FAILED" >&2; exit 1; }
echo "matrix: ok"
