#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write the series as kernel people consume it: one `git format-patch`
# series per maintainer tree, each with its cover letter, the repo's new
# files folded into the commit that introduces them (patches/new-files),
# each applying with `git am` to the base or on top of the series it names.
#
#   scripts/export-series.sh [--build] [--check]     (make patches)
#
# patches/series groups the patches: a line "#= NAME: base" starts a series
# that applies to the base, "#= NAME: after OTHER" one that applies on top
# of series OTHER; a selftests entry of patches/new-files belongs to the
# series of the patch before it.  patches/cover-letters/NAME is the series'
# cover letter: its subject, a blank line, its body.
#
# Every commit is authored and signed off (Signed-off-by, the DCO) by the
# person exporting: GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, else git's user.name
# and user.email.  Without an identity it refuses to export.  --check
# (make check) verifies the series the same way but, where no identity is
# configured, exports unsigned patches and lets checkpatch skip only its
# missing sign-off test: they are for checking, not for sending.
#
# Builds build/export/linux, a git repo of the pristine base (tag "base")
# whose branch "export" is every series in order, one commit per entry of
# patches/new-files: the patch applied with `git am` (its notes below
# "---" kept as a git note), its new files added, the MAINTAINERS entry
# grown by their F: lines, with the exporter as its M: line
# (scripts/maintainers-merge.py).  Writes
# build/export/NAME/0000-cover-letter.patch and NNNN-*.patch per series.
# Then it checks:
#   (a) the final tree of the series in order is the tree scripts/assemble.sh
#       assembles;
#   (b) each series applies with `git am` onto the base plus the series it
#       builds on, alone; where that is the order of patches/series, the
#       tree at every step is the export branch's;
#   (c) scripts/checkpatch.pl --strict is clean on every exported patch;
#   (d) with --build: every commit of the export branch builds, and so does
#       each series applied alone on the base plus the series it builds on
#       (scripts/build-kernel.sh; logs build/export/build-*.log).
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
# ... and maintains what the series adds: the M: line of its MAINTAINERS entries
MAINTAINER=()
[ $SIGNOFF = 0 ] || MAINTAINER=(--maintainer "$NAME <$EMAIL>")
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
{ "$REPO/scripts/assemble.sh" --new-files; (cd "$REPO" && ls MAINTAINERS*.snippet); } | sort > "$TMP/want"
for i in "${!NAMES[@]}"; do for f in ${FILES[i]}; do echo "$f"; done; done | sort > "$TMP/have"
dup=$(uniq -d "$TMP/have")
[ -z "$dup" ] || die "patches/new-files lists more than once: $dup"
missing=$(comm -23 "$TMP/want" "$TMP/have")
[ -z "$missing" ] || die "new files not in patches/new-files (say which commit adds them):" "${missing//$'\n'/ }"
extra=$(comm -13 "$TMP/want" "$TMP/have")
[ -z "$extra" ] || die "patches/new-files lists files the repo does not have (or assemble.sh does not copy):" "${extra//$'\n'/ }"

# ---- the scratch repo: pristine base, branch "export" rebuilt from it
mkdir -p "$OUT"
BASE_ONLY=1 "$REPO/scripts/assemble.sh" "$SRC" | sed 's/^/export: /'
[ -d "$SRC/.git/rebase-apply" ] && git -C "$SRC" am --abort
git -C "$SRC" checkout -q -f -B export base
git -C "$SRC" clean -q -f -d -x
git -C "$SRC" update-ref -d refs/notes/commits 2>/dev/null || true

echo "export: building branch export in ${SRC#"$REPO/"} from patches/series and patches/new-files"
SNIPPETS=()	# the MAINTAINERS entries added so far
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
		if [[ $f == MAINTAINERS*.snippet ]]; then
			SNIPPETS+=("$f")
			continue
		fi
		t=$f
		mkdir -p "$SRC/$(dirname "$t")"
		cp -p "$REPO/$f" "$SRC/$t"
		git -C "$SRC" add -f -- "$t"
	done
	for f in "${SNIPPETS[@]}"; do
		"$REPO/scripts/maintainers-merge.py" "$SRC/MAINTAINERS" "$REPO/$f" --tree "$SRC" \
			"${MAINTAINER[@]}"
		git -C "$SRC" add MAINTAINERS
	done
	if [[ $name == *.patch ]]; then
		git -C "$SRC" commit -q --amend --no-edit --date="$DATE"
		# the notes below "---", for format-patch --notes
		awk 'n && /^ [^ ].* \| +[0-9]/ { exit } n { print } /^---$/ { n = 1 }' \
			"$REPO/patches/$name" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$TMP/notes"
		if [ -s "$TMP/notes" ]; then
			git -C "$SRC" notes add -f -F "$TMP/notes" HEAD
		fi
	else
		! git -C "$SRC" diff --cached --quiet || die "patches/new-files: entry $name adds nothing"
		git -C "$SRC" commit -q -F "$TMP/msg.$i" --cleanup=strip $([ $SIGNOFF = 1 ] && echo --signoff) \
			--author="$NAME <$EMAIL>" --date="$DATE"
	fi
	echo "export:   $(git -C "$SRC" log -1 --format=%s) ($(git -C "$SRC" diff --name-only HEAD~1 HEAD | wc -l) files)"
done


# ---- the series of patches/series: SNAMES in order, PREREQ, SERIES_OF entry i
declare -A PREREQ SER_OF_PATCH
SNAMES=()
cur=""
while IFS= read -r line || [ -n "$line" ]; do
	case "$line" in
	'#= '*)	spec=${line#'#= '}
		cur=${spec%%:*}
		rest=${spec#*:}
		rest=${rest# }
		case "$rest" in
		base) PREREQ[$cur]="" ;;
		"after "*) PREREQ[$cur]=${rest#after }
			[[ " ${SNAMES[*]} " == *" ${PREREQ[$cur]} "* ]] ||
				die "patches/series: $cur is after ${PREREQ[$cur]}, which does not come before it" ;;
		*) die "patches/series: '$line': not '#= NAME: base' or '#= NAME: after OTHER'" ;;
		esac
		[ -f "$REPO/patches/cover-letters/$cur" ] || die "no patches/cover-letters/$cur"
		SNAMES+=("$cur") ;;
	'#'* | '') ;;
	*)	[ -n "$cur" ] || die "patches/series: $line comes before any '#= NAME' line"
		SER_OF_PATCH[$line]=$cur ;;
	esac
done < "$REPO/patches/series"
SERIES_OF=()
for i in "${!NAMES[@]}"; do
	if [[ ${NAMES[i]} == *.patch ]]; then
		SERIES_OF[i]=${SER_OF_PATCH[${NAMES[i]}]}
	else
		[ "$i" -gt 0 ] || die "patches/new-files: ${NAMES[i]} comes before any patch"
		SERIES_OF[i]=${SERIES_OF[i - 1]}
	fi
done
# chain NAME: the series NAME builds on, then NAME
chain() {
	local s=$1 c=()
	while [ -n "$s" ]; do
		c=("$s" "${c[@]}")
		s=${PREREQ[$s]}
	done
	echo "${c[@]}"
}

# on_what NAME: what NAME applies on, in words
on_what() {
	local c
	read -ra c <<< "$(chain "$1")"
	if [ ${#c[@]} = 1 ]; then
		echo "the base"
	else
		echo "the base + $(echo "${c[@]:0:${#c[@]}-1}" | sed 's/ / + /g')"
	fi
}

# ---- format-patch per series, with its cover letter
mapfile -t COMMITS < <(git -C "$SRC" rev-list --reverse base..export)
[ ${#COMMITS[@]} = ${#NAMES[@]} ] || die "the export branch has ${#COMMITS[@]} commits for ${#NAMES[@]} entries"
rm -rf "${OUT:?}"/*.patch
declare -A PATCHES_OF FIRST LAST
for i in "${!NAMES[@]}"; do
	s=${SERIES_OF[i]}
	[ -n "${FIRST[$s]:-}" ] || FIRST[$s]=$i
	[ "${LAST[$s]:-$i}" = $((i - 1)) ] || [ "${LAST[$s]:-$i}" = "$i" ] ||
		die "the entries of series $s are not together in patches/new-files"
	LAST[$s]=$i
done
for s in "${SNAMES[@]}"; do
	[ -n "${FIRST[$s]:-}" ] || die "series $s has no patch"
	rm -rf "${OUT:?}/$s"
	sed -e "s/@BASE_PKG@/$BASE_PKG/g" -e "s/@BASE_VERSION@/$BASE_VERSION/g" \
		"$REPO/patches/cover-letters/$s" > "$TMP/cover"
	git -C "$SRC" branch -q -f "series-$s" "${COMMITS[${LAST[$s]}]}"
	git -C "$SRC" config "branch.series-$s.description" "$(cat "$TMP/cover")"
	git -C "$SRC" format-patch -q --cover-letter --cover-from-description=subject \
		--zero-commit --notes -o "$OUT/$s" "${COMMITS[${FIRST[$s]}]}~1..series-$s"
	PATCHES_OF[$s]=$(cd "$OUT/$s" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-' | tr '\n' ' ')
	echo "export: wrote ${OUT#"$REPO/"}/$s/: cover letter and $(echo ${PATCHES_OF[$s]} | wc -w) patches" \
		"($([ -n "${PREREQ[$s]}" ] && echo "after ${PREREQ[$s]}" || echo "on the base"))"
done

fail=0
declare -A RES_AM RES_CP RES_BUILD

# ---- (b) each series, alone on the base plus the series it builds on
if [ -d "$CHK/.git" ] && [ "$(git -C "$CHK" rev-parse -q --verify base || true)" = "$(git -C "$SRC" rev-parse base)" ]; then
	[ -d "$CHK/.git/rebase-apply" ] && git -C "$CHK" am --abort
else
	echo "export: cloning the base into ${CHK#"$REPO/"} for the checks"
	rm -rf "$CHK"
	git clone -q -s -n "$SRC" "$CHK"
fi
# apply_chain NAME: the chain of NAME onto a fresh base in CHK; records
# RES_AM for NAME's patches; compares trees where the chain is the order of
# patches/series (every series before NAME)
apply_chain() {
	local s=$1 c p k linear=0 ok=0
	read -ra c <<< "$(chain "$s")"
	[ "${c[*]}" = "${SNAMES[*]:0:${#c[@]}}" ] && linear=1
	git -C "$CHK" checkout -q -f -B "verify-$s" base
	git -C "$CHK" clean -q -f -d -x
	k=0
	for cs in "${c[@]}"; do
		k=${FIRST[$cs]}
		for p in ${PATCHES_OF[$cs]}; do
			if ! out=$(git -C "$CHK" am -q "$OUT/$cs/$p" 2>&1); then
				echo "$out" | sed 's/^/export:   /'
				git -C "$CHK" am --abort || true
				[ "$cs" = "$s" ] && RES_AM[$s/$p]=FAILED
				echo "export: (b) $s: $cs/$p does not apply"
				return 1
			fi
			if [ "$cs" = "$s" ]; then
				if [ $linear = 0 ]; then
					RES_AM[$s/$p]=ok
				elif [ "$(git -C "$CHK" rev-parse 'HEAD^{tree}')" = \
				       "$(git -C "$SRC" rev-parse "${COMMITS[k]}^{tree}")" ]; then
					RES_AM[$s/$p]="ok, same tree"
				else
					RES_AM[$s/$p]="applies, but the tree differs from the export branch"
					ok=1
				fi
			fi
			k=$((k + 1))
		done
	done
	return $ok
}
for s in "${SNAMES[@]}"; do
	if apply_chain "$s"; then
		echo "export: (b) $s applies on $(on_what "$s"): ok"
	else
		echo "export: (b) $s: FAILED"
		fail=1
	fi
done

# ---- (a) the final tree is what scripts/assemble.sh assembles
git -C "$CHK" checkout -q -f -B assembled base
if TIERING_MAINTAINER=${MAINTAINER[1]:-} "$REPO/scripts/assemble.sh" "$CHK" > "$OUT/assemble.log" 2>&1; then
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
for s in "${SNAMES[@]}"; do
	for p in ${PATCHES_OF[$s]}; do
		out=$(cd "$SRC" && scripts/checkpatch.pl --strict \
			$([ $SIGNOFF = 0 ] && echo --ignore MISSING_SIGN_OFF) "$OUT/$s/$p" 2>&1) && rc=0 || rc=$?
		total=$(echo "$out" | grep '^total:' || echo "total: ?")
		if [ "$rc" = 0 ] && [[ $total == "total: 0 errors, 0 warnings, 0 checks"* ]]; then
			RES_CP[$s/$p]=clean
		else
			echo "$out" | sed 's/^/export:   /'
			RES_CP[$s/$p]="NOT clean"
			fail=1
		fi
		echo "export: (c) checkpatch --strict $s/$p: ${RES_CP[$s/$p]} (${total#total: })"
	done
done

# ---- (d) every commit of the export branch builds, and each series alone
build_at() {
	local tree=$1 obj=$2 log=$3 what=$4 t0
	t0=$(date +%s)
	if "$REPO/scripts/build-kernel.sh" "$tree" "$obj" > "$log" 2>&1; then
		echo "builds ($(($(date +%s) - t0)) s)"
	else
		tail -20 "$log" | sed 's/^/export:   /' >&2
		echo "FAILED ($(($(date +%s) - t0)) s, $what)"
	fi
}
if [ $BUILD = 1 ]; then
	for i in "${!NAMES[@]}"; do
		s=${SERIES_OF[i]}
		p=$(echo ${PATCHES_OF[$s]} | cut -d' ' -f$((i - FIRST[$s] + 1)))
		git -C "$SRC" checkout -q "${COMMITS[i]}"
		echo "export: (d) building $s/$p"
		RES_BUILD[$s/$p]=$(build_at "$SRC" "$OBJ" "$OUT/build-$s-${p%%-*}.log" "log build/export/build-$s-${p%%-*}.log")
		[[ ${RES_BUILD[$s/$p]} == builds* ]] || fail=1
		echo "export: (d) $s/$p: ${RES_BUILD[$s/$p]}"
	done
	git -C "$SRC" checkout -q export
	for s in "${SNAMES[@]}"; do
		read -ra c <<< "$(chain "$s")"
		[ "${c[*]}" = "${SNAMES[*]:0:${#c[@]}}" ] && continue
		apply_chain "$s" || true
		r=$(build_at "$CHK" "$OUT/obj-alone" "$OUT/build-$s-alone.log" "log build/export/build-$s-alone.log")
		[[ $r == builds* ]] || fail=1
		echo "export: (d) $s alone on $(on_what "$s"): $r"
	done
fi

echo "export: summary (${OUT#"$REPO/"}/)"
for s in "${SNAMES[@]}"; do
	for p in ${PATCHES_OF[$s]}; do
		printf 'export:   %-70.70s am %-14s checkpatch %-9s%s\n' "$s/$p" "${RES_AM[$s/$p]:-skipped}" \
			"${RES_CP[$s/$p]}" "$([ $BUILD = 1 ] && echo " build ${RES_BUILD[$s/$p]:-}")"
	done
done
[ $fail = 0 ] || die "FAILED (see above)"
echo "export: ok: ${#SNAMES[@]} series in ${OUT#"$REPO/"}/ ($([ $BUILD = 1 ] && echo "every step builds" || echo "builds not checked: --build"))"
