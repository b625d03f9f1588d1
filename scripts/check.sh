#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test command (make check): host checks, build, one lab boot, summary.
#
#   1. host: the series applies with no fuzz; checkpatch.pl --strict on every
#      patch and new file; kernel-doc -none on every new C file
#   2. build the lab kernel and the kselftests (mm/tiering, damon); the
#      config matrix (scripts/matrix.sh): the series' directories build with
#      no warning in other configs, on i386 and arm64
#   3. one lab boot: KUnit suites (built in, run at boot), the mm/tiering
#      kselftests, the base tree's DAMON selftests; a second, of the
#      two-CXL machine (lab.sh -C), for damon_tiering_sh
#   4. scripts/check-report.py counts it all and scans the guest's console for
#      WARNING/BUG/Oops/KASAN/lockdep reports; last line "N passed, N failed"
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=$REPO/build/linux
OUT=$REPO/build/check
rm -rf "$OUT"
mkdir -p "$OUT"
RES=$OUT/host-results.tsv
# the config-matrix entries (configs/matrix/NAME.config) that make check builds
CHECK_MATRIX=(numa-balancing-off numa-off damon-off damon-paddr-off thp-hugetlbfs-off
	sched-debug-off tracing-off kunit-off memory-hotplug-off i386-highmem arm64)
: > "$RES"
t0=$(date +%s)

result() {	# name pass|fail|skip [detail]
	printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >> "$RES"
	printf 'check: %-4s %s%s\n' "$2" "$1" "${3:+ ($3)}"
}
finish() {
	python3 "$REPO/scripts/check-report.py" --host "$RES" "$@"
	rc=$?
	echo "check: logs in ${OUT#"$REPO/"}/, took $(($(date +%s) - t0)) s"
	exit $rc
}

echo "== host checks"
if "$REPO/scripts/assemble.sh" > "$OUT/assemble.log" 2>&1; then
	result "host/series-applies" pass
else
	cat "$OUT/assemble.log"
	result "host/series-applies" fail "see build/check/assemble.log"
	finish
fi

cd "$SRC" || exit 1
# patches/ carry no author and no sign-off: `make patches` adds the
# exporter's (checked on the exported patches below)
while read -r p; do
	if grep -q -E '^(From|Signed-off-by): ' "$REPO/patches/$p"; then
		result "host/no-identity/patches/$p" fail "carries a From: or Signed-off-by: line"
	else
		result "host/no-identity/patches/$p" pass
	fi
	if scripts/checkpatch.pl --strict -q --ignore MISSING_SIGN_OFF \
		"$REPO/patches/$p" > "$OUT/checkpatch.log" 2>&1; then
		result "host/checkpatch/patches/$p" pass
	else
		cat "$OUT/checkpatch.log"
		result "host/checkpatch/patches/$p" fail
	fi
done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$REPO/patches/series")

mapfile -t NEW < <(cd "$REPO" && git ls-files --cached --others --exclude-standard \
	arch mm kernel include Documentation tools/testing/selftests/mm/tiering \
	tools/testing/selftests/mm/huge_zero |
	grep -E '\.(c|h|rst)$')
for f in "${NEW[@]}"; do
	if scripts/checkpatch.pl --strict -q --no-tree -f "$f" > "$OUT/checkpatch.log" 2>&1; then
		result "host/checkpatch/$f" pass
	else
		cat "$OUT/checkpatch.log"
		result "host/checkpatch/$f" fail
	fi
done
for f in "${NEW[@]}"; do
	case "$f" in *.c | *.h) ;; *) continue ;; esac
	if scripts/kernel-doc -none -Wall "$f" > "$OUT/kernel-doc.log" 2>&1 &&
	   [ ! -s "$OUT/kernel-doc.log" ]; then
		result "host/kernel-doc/$f" pass
	else
		cat "$OUT/kernel-doc.log"
		result "host/kernel-doc/$f" fail
	fi
done
cd "$REPO" || exit 1

# the four series as git format-patch: each applies with git am alone on the
# base plus the series it builds on, all four in order give the assembled
# tree, checkpatch --strict per exported patch (every step builds:
# export-series.sh --build, make matrix)
# `make patches` without a git identity refuses, before doing anything
if env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 \
	GIT_CONFIG_GLOBAL=/dev/null scripts/export-series.sh > "$OUT/export-noid.log" 2>&1; then
	result "host/export-refuses-without-identity" fail "exported without a git identity"
elif grep -q "no git identity" "$OUT/export-noid.log"; then
	result "host/export-refuses-without-identity" pass
else
	result "host/export-refuses-without-identity" fail "see build/check/export-noid.log"
fi
scripts/export-series.sh --check > "$OUT/export.log" 2>&1
export_rc=$?
sed -n 's/^export: (c) checkpatch --strict \([^:]*\): \(.*\)$/\1\t\2/p' "$OUT/export.log" |
while IFS=$'\t' read -r p res; do
	case "$res" in
	clean*) result "host/checkpatch/export/$p" pass ;;
	*) result "host/checkpatch/export/$p" fail "$res" ;;
	esac
done
sed -n 's/^export: (b) \([^ :]*\) applies on \(.*\): ok$/\1\t\2/p; s/^export: (b) \([^ :]*\): FAILED$/\1\tFAILED/p' \
	"$OUT/export.log" |
while IFS=$'\t' read -r name on; do
	case "$on" in
	FAILED) result "host/series-applies/$name" fail "see build/check/export.log" ;;
	*) result "host/series-applies/$name" pass "on $on" ;;
	esac
done
if [ $export_rc = 0 ]; then
	result "host/export-series" pass
else
	grep -v '^export:   ' "$OUT/export.log" | tail -15
	result "host/export-series" fail "see build/check/export.log"
fi

echo "== build"
if scripts/build-kernel.sh; then
	result "build/kernel" pass
else
	result "build/kernel" fail
	finish
fi
if make -C "$SRC/tools/testing/selftests" TARGETS="mm/tiering mm/huge_zero damon" \
	O="$REPO/build/kselftest-build" INSTALL_PATH="$REPO/build/kselftest" \
	install > "$OUT/kselftest-build.log" 2>&1; then
	result "build/kselftests" pass
else
	tail -30 "$OUT/kselftest-build.log"
	result "build/kselftests" fail
	finish
fi

# the config matrix (scripts/matrix.sh, make matrix): the series builds with
# CONFIG_WERROR=y in other configs; a failure the base shares is base-known.
# All entries (CHECK_MATRIX above): about 1 min each from a warm ccache,
# 2-5 min cold.  Not here: building every commit of the exported series
# (make matrix does), several full kernel builds cold, too close to CI's
# 90 minutes.
echo "== config matrix (build/check/matrix.log)"
scripts/matrix.sh --no-bisect "${CHECK_MATRIX[@]}" > "$OUT/matrix.log" 2>&1
matrix_rc=$?
grep -E '^matrix: (pass|FAIL|base-known) ' "$OUT/matrix.log" |
while read -r _ st name detail; do
	case "$st" in
	pass) result "matrix/$name" pass "${detail//[()]/}" ;;
	FAIL) result "matrix/${name%:}" fail "$detail" ;;
	*) result "matrix/${name%:}" base-known "$detail" ;;
	esac
done
if [ $matrix_rc != 0 ] && ! grep -q '^matrix: FAIL ' "$OUT/matrix.log"; then
	tail -15 "$OUT/matrix.log"
	result "matrix/run" fail "see build/check/matrix.log"
fi

echo "== lab (console: build/check/lab/console.log)"
# one 1 GiB hugetlb page on node2 for the huge_zero test
LAB_QUIET=1 scripts/lab.sh -t 3000 -a "hugepagesz=1G hugepages=2:1" -d "$OUT/lab" \
	"bash $REPO/scripts/check-guest.sh"
lab_rc=$?
[ -f "$OUT/lab/out.log" ] && grep -E '^(not )?ok |^# (not )?ok |SKIP|TIMEOUT' "$OUT/lab/out.log" | sed 's/^/lab: /'

# the two-CXL machine (lab.sh -C: node3 is node1's CXL node) as a boot of its
# own: damon_tiering_sh tiers both pairs there (about 3 min; DAMO, if set,
# names damo's command for its test next to a damo-started kdamond)
echo "== lab -C (console: build/check/lab-two-cxl/console.log)"
LAB_QUIET=1 scripts/lab.sh -C -t 900 -d "$OUT/lab-two-cxl" \
	"cp -a $REPO/build/kselftest /tmp/kselftest && cd /tmp/kselftest &&
	 DAMO='${DAMO:-}' ./run_kselftest.sh -o 600 -t mm/tiering:damon_tiering_sh.sh"
cxl_rc=$?
t=$(grep -E '^(not )?ok [0-9]+ selftests: mm/tiering: damon_tiering_sh.sh' "$OUT/lab-two-cxl/out.log" 2>/dev/null)
echo "lab -C: ${t:-no result (guest rc $cxl_rc)}"
if grep -qE 'WARNING:|BUG:|Oops|KASAN|possible circular locking' "$OUT/lab-two-cxl/console.log" 2>/dev/null; then
	result lab-two-cxl/console fail "a kernel report: see build/check/lab-two-cxl/console.log"
fi
case $t in
ok*SKIP*) result lab-two-cxl/mm/tiering:damon_tiering_sh.sh skip ;;
ok*) result lab-two-cxl/mm/tiering:damon_tiering_sh.sh pass ;;
*) result lab-two-cxl/mm/tiering:damon_tiering_sh.sh fail "see build/check/lab-two-cxl/out.log" ;;
esac

# the debug lane as a second boot, of the debug kernel: CHECK_DEBUG=1 (too
# long for the time limits of make check: see README, "The debug lane")
if [ "${CHECK_DEBUG:-0}" = 1 ]; then
	echo "== debug lane (log: build/check/check-debug.log, console: build/check-debug/lab/console.log)"
	scripts/check-debug.sh > "$OUT/check-debug.log" 2>&1
	grep -E '^check-debug: |^(FAIL|SKIP) ' "$OUT/check-debug.log"
	if [ -s "$REPO/build/check-debug/results.tsv" ]; then
		cat "$REPO/build/check-debug/results.tsv" >> "$RES"
	else
		result "debug/lane" fail "no results: see build/check/check-debug.log"
	fi
fi
finish --lab-rc "$lab_rc" --console "$OUT/lab/console.log" \
	--kselftest "$OUT/lab/out.log" --kunit-json "$OUT/kunit.json" \
	--base-known "$REPO/scripts/base-known-failures"
