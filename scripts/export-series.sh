#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write the series as kernel people consume it: a `git format-patch` series
# with a cover letter, the repo's new files folded into the commit that
# introduces them (patches/new-files), that `git am` applies to the base.
#
#   scripts/export-series.sh [--build] [--check]     (make patches)
#
# Every commit is authored and signed off (Signed-off-by, the DCO) by the
# person exporting: GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, else git's user.name
# and user.email.  Without an identity it refuses to export.  --check
# (make check) verifies the series the same way but, where no identity is
# configured, exports unsigned patches and lets checkpatch skip only its
# missing sign-off test: they are for checking, not for sending.
#
# Writes build/export/0000-cover-letter.patch and build/export/NNNN-*.patch
# from build/export/linux, a git repo of the pristine base (tag "base") whose
# branch "export" is the series, one commit per entry of patches/new-files:
# the patch applied with `git am`, its new files added, the MAINTAINERS entry
# grown by their F: lines (scripts/maintainers-merge.py).  Then it checks:
#   (a) the series' final tree is the tree scripts/assemble.sh assembles;
#   (b) `git am` of the exported patches onto the base applies, and gives
#       the same tree at every step;
#   (c) scripts/checkpatch.pl --strict is clean on every exported patch;
#   (d) with --build: every step builds (scripts/build-kernel.sh
#       build/export/linux build/export/obj; logs build/export/build-NNNN.log).
# Exits non-zero if any check fails.  patches/ stays the source of truth:
# nothing here is committed back.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/scripts/base.env"
OUT=$REPO/build/export
SRC=$OUT/linux
OBJ=$OUT/obj
CHK=$OUT/verify
MAP=$REPO/patches/new-files
BUILD=0 CHECK=0
for a in "$@"; do
	case "$a" in
	--build) BUILD=1 ;;
	--check) CHECK=1 ;;
	*) echo "usage: scripts/export-series.sh [--build] [--check]" >&2; exit 2 ;;
	esac
done

die() { echo "export: $*" >&2; exit 1; }
# who exports, signs off
NAME=${GIT_AUTHOR_NAME:-$(command git -C "$REPO" config user.name || true)}
EMAIL=${GIT_AUTHOR_EMAIL:-$(command git -C "$REPO" config user.email || true)}
SIGNOFF=1
if [ -z "$NAME" ] || [ -z "$EMAIL" ]; then
	[ $CHECK = 1 ] || die "no git identity to sign the patches off with (Signed-off-by, the DCO):" \
		"set git config user.name and user.email (or GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL)"
	echo "export: no git identity: exporting unsigned patches, for checking only"
	SIGNOFF=0 NAME="unsigned" EMAIL="unsigned@invalid"
fi
# commits are dated like the repo's last commit, so the output is reproducible
DATE=$(git -C "$REPO" log -1 --format=%cI 2>/dev/null || date -R)
export GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$EMAIL
export GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$EMAIL
export GIT_COMMITTER_DATE=$DATE
git() { command git -c user.name="$GIT_COMMITTER_NAME" -c user.email="$GIT_COMMITTER_EMAIL" \
	-c core.autocrlf=false -c gc.auto=0 "$@"; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ---- patches/new-files: NAMES[i], FILES[i], message in $TMP/msg.i
NAMES=() FILES=()
n=-1 lineno=0
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	case "$line" in
	'#'* | '') ;;
	'|'*)	[ $n -ge 0 ] || die "patches/new-files:$lineno: message line before any entry"
		m=${line#|}
		printf '%s\n' "${m# }" >> "$TMP/msg.$n" ;;
	[[:space:]]*)
		[ -z "${line//[[:space:]]/}" ] && continue
		[ $n -ge 0 ] || die "patches/new-files:$lineno: file list before any entry"
		FILES[n]+=" $line" ;;
	*:*)	n=$((n + 1))
		NAMES[n]=${line%%:*}
		FILES[n]=${line#*:} ;;
	*)	die "patches/new-files:$lineno: not 'NAME: FILE...', a continuation or a '|' line: $line" ;;
	esac
done < "$MAP"

mapfile -t SERIES < <(grep -v -e '^#' -e '^[[:space:]]*$' "$REPO/patches/series" || true)
mapped=()
for i in "${!NAMES[@]}"; do
	case "${NAMES[i]}" in
	*.patch) mapped+=("${NAMES[i]}") ;;
	*)	[ -s "$TMP/msg.$i" ] || die "patches/new-files: entry ${NAMES[i]} is not a patch and has no '|' commit message"
		! grep -q '^Signed-off-by:' "$TMP/msg.$i" ||
			die "patches/new-files: the message of ${NAMES[i]} has a Signed-off-by: the exporter adds it" ;;
	esac
done
[ "${mapped[*]}" = "${SERIES[*]}" ] || {
	diff <(printf '%s\n' "${SERIES[@]}") <(printf '%s\n' "${mapped[@]}") | sed 's/^/export:   /' >&2 || true
	die "the .patch entries of patches/new-files (>) are not patches/series (<), in order"
}
# every new file exactly once, nothing else
{ "$REPO/scripts/assemble.sh" --new-files; echo Kconfig.tiering; echo MAINTAINERS.snippet; } | sort > "$TMP/want"
for i in "${!NAMES[@]}"; do for f in ${FILES[i]}; do echo "$f"; done; done | sort > "$TMP/have"
dup=$(uniq -d "$TMP/have")
[ -z "$dup" ] || die "patches/new-files lists more than once: $dup"
missing=$(comm -23 "$TMP/want" "$TMP/have")
[ -z "$missing" ] || die "new files not in patches/new-files (say which commit adds them):" "${missing//$'\n'/ }"
extra=$(comm -13 "$TMP/want" "$TMP/have")
[ -z "$extra" ] || die "patches/new-files lists files the repo does not have (or assemble.sh does not copy):" "${extra//$'\n'/ }"

tree_path() {
	case "$1" in
	Kconfig.tiering) echo mm/tiering/Kconfig ;;
	*) echo "$1" ;;
	esac
}

# ---- the scratch repo: pristine base, branch "export" rebuilt from it
mkdir -p "$OUT"
BASE_ONLY=1 "$REPO/scripts/assemble.sh" "$SRC" | sed 's/^/export: /'
[ -d "$SRC/.git/rebase-apply" ] && git -C "$SRC" am --abort
git -C "$SRC" checkout -q -f -B export base
git -C "$SRC" clean -q -f -d -x

echo "export: building branch export in ${SRC#"$REPO/"} from patches/series and patches/new-files"
maintainers=0
for i in "${!NAMES[@]}"; do
	name=${NAMES[i]}
	if [[ $name == *.patch ]]; then
		# patches/ carry no author: the exporter is, and signs off
		{ echo "From: $NAME <$EMAIL>"; cat "$REPO/patches/$name"; } > "$TMP/mail"
		if ! out=$(git -C "$SRC" am -q --no-3way $([ $SIGNOFF = 1 ] && echo --signoff) "$TMP/mail" 2>&1); then
			git -C "$SRC" am --abort || true
			die "git am of patches/$name failed:"$'\n'"$out"
		fi
	fi
	for f in ${FILES[i]}; do
		if [ "$f" = MAINTAINERS.snippet ]; then
			maintainers=1
			continue
		fi
		t=$(tree_path "$f")
		mkdir -p "$SRC/$(dirname "$t")"
		cp -p "$REPO/$f" "$SRC/$t"
		git -C "$SRC" add -f -- "$t"
	done
	if [ $maintainers = 1 ]; then
		"$REPO/scripts/maintainers-merge.py" "$SRC/MAINTAINERS" "$REPO/MAINTAINERS.snippet" --tree "$SRC"
		git -C "$SRC" add MAINTAINERS
	fi
	if [[ $name == *.patch ]]; then
		git -C "$SRC" commit -q --amend --no-edit --date="$DATE"
	else
		! git -C "$SRC" diff --cached --quiet || die "patches/new-files: entry $name adds nothing"
		git -C "$SRC" commit -q -F "$TMP/msg.$i" --cleanup=strip $([ $SIGNOFF = 1 ] && echo --signoff) \
			--author="$NAME <$EMAIL>" --date="$DATE"
	fi
	echo "export:   $(git -C "$SRC" log -1 --format=%s) ($(git -C "$SRC" diff --name-only HEAD~1 HEAD | wc -l) files)"
done

# ---- format-patch, with the cover letter from patches/cover-letter
rm -f "$OUT"/*.patch
sed -e "s/@BASE_PKG@/$BASE_PKG/g" -e "s/@BASE_VERSION@/$BASE_VERSION/g" \
	"$REPO/patches/cover-letter" > "$TMP/cover"
git -C "$SRC" config branch.export.description "$(cat "$TMP/cover")"
git -C "$SRC" format-patch -q --cover-letter --cover-from-description=subject \
	--zero-commit -o "$OUT" base..export
PATCHES=()
for p in "$OUT"/[0-9][0-9][0-9][0-9]-*.patch; do
	[[ $p == */0000-* ]] || PATCHES+=("${p##*/}")
done
echo "export: wrote ${OUT#"$REPO/"}/0000-cover-letter.patch and ${#PATCHES[@]} patches"
mapfile -t COMMITS < <(git -C "$SRC" rev-list --reverse base..export)

fail=0
declare -A RES_AM RES_CP RES_BUILD

# ---- (b) git am onto a fresh base: applies, same tree at every step
if [ -d "$CHK/.git" ] && [ "$(git -C "$CHK" rev-parse -q --verify base || true)" = "$(git -C "$SRC" rev-parse base)" ]; then
	[ -d "$CHK/.git/rebase-apply" ] && git -C "$CHK" am --abort
	git -C "$CHK" checkout -q -f -B verify base
	git -C "$CHK" clean -q -f -d -x
else
	echo "export: cloning the base into ${CHK#"$REPO/"} for the checks"
	rm -rf "$CHK"
	git clone -q -s -n "$SRC" "$CHK"
	git -C "$CHK" checkout -q -f -B verify base
fi
for k in "${!PATCHES[@]}"; do
	p=${PATCHES[k]}
	if out=$(git -C "$CHK" am -q "$OUT/$p" 2>&1); then
		if [ "$(git -C "$CHK" rev-parse 'HEAD^{tree}')" = "$(git -C "$SRC" rev-parse "${COMMITS[k]}^{tree}")" ]; then
			RES_AM[$p]=ok
		else
			RES_AM[$p]="applies, but the tree differs from the export branch"
			fail=1
		fi
	else
		echo "$out" | sed 's/^/export:   /'
		git -C "$CHK" am --abort || true
		RES_AM[$p]=FAILED
		fail=1
		break
	fi
done
echo "export: (b) git am of ${OUT#"$REPO/"}/*.patch onto the base: $([ $fail = 0 ] && echo ok || echo FAILED)"

# ---- (a) the final tree is what scripts/assemble.sh assembles
git -C "$CHK" checkout -q -f -B assembled base
if "$REPO/scripts/assemble.sh" "$CHK" > "$OUT/assemble.log" 2>&1; then
	if [ "$(git -C "$CHK" rev-parse 'HEAD^{tree}')" = "$(git -C "$SRC" rev-parse 'export^{tree}')" ]; then
		echo "export: (a) final tree = scripts/assemble.sh's tree: ok"
	else
		echo "export: (a) final tree differs from scripts/assemble.sh's tree (assembled <-> export):"
		git -C "$CHK" diff --stat HEAD "$(git -C "$SRC" rev-parse export)" | sed 's/^/export:   /'
		fail=1
	fi
else
	cat "$OUT/assemble.log"
	echo "export: (a) scripts/assemble.sh failed"
	fail=1
fi

# ---- (c) checkpatch --strict on every patch (the cover letter has no diff)
for p in "${PATCHES[@]}"; do
	out=$(cd "$SRC" && scripts/checkpatch.pl --strict \
		$([ $SIGNOFF = 0 ] && echo --ignore MISSING_SIGN_OFF) "$OUT/$p" 2>&1) && rc=0 || rc=$?
	total=$(echo "$out" | grep '^total:' || echo "total: ?")
	if [ "$rc" = 0 ] && [[ $total == "total: 0 errors, 0 warnings, 0 checks"* ]]; then
		RES_CP[$p]=clean
	else
		echo "$out" | sed 's/^/export:   /'
		RES_CP[$p]="NOT clean"
		fail=1
	fi
	echo "export: (c) checkpatch --strict $p: ${RES_CP[$p]} (${total#total: })"
done

# ---- (d) every step builds
if [ $BUILD = 1 ]; then
	for k in "${!PATCHES[@]}"; do
		p=${PATCHES[k]}
		git -C "$SRC" checkout -q "${COMMITS[k]}"
		log=$OUT/build-${p%%-*}.log
		echo "export: (d) building $p (log ${log#"$REPO/"})"
		t0=$(date +%s)
		if "$REPO/scripts/build-kernel.sh" "$SRC" "$OBJ" > "$log" 2>&1; then
			RES_BUILD[$p]="builds ($(($(date +%s) - t0)) s)"
		else
			tail -20 "$log" | sed 's/^/export:   /'
			RES_BUILD[$p]="FAILED ($(($(date +%s) - t0)) s)"
			fail=1
		fi
		echo "export: (d) $p: ${RES_BUILD[$p]}"
	done
	git -C "$SRC" checkout -q export
fi

echo "export: summary (${OUT#"$REPO/"}/)"
for p in "${PATCHES[@]}"; do
	printf 'export:   %-66.66s am %-6s checkpatch %-9s%s\n' "$p" "${RES_AM[$p]:-skipped}" \
		"${RES_CP[$p]}" "$([ $BUILD = 1 ] && echo " build ${RES_BUILD[$p]}")"
done
[ $fail = 0 ] || die "FAILED (see above)"
echo "export: ok: $((${#PATCHES[@]} + 1)) files in ${OUT#"$REPO/"}/ ($([ $BUILD = 1 ] && echo "every step builds" || echo "builds not checked: --build"))"
