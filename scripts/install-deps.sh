#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the base kernel source and every build/run dependency (Debian 12,
# as root).  Idempotent: a second run installs nothing.
set -euo pipefail
. "$(dirname "$0")/base.env"

PKGS=(
	"$BASE_PKG=$BASE_VERSION"
	build-essential flex bison bc cpio kmod libelf-dev libssl-dev
	xz-utils patch rsync git ccache python3 perl
	qemu-system-x86 busybox-static numactl trace-cmd gnuplot-nox rt-tests python3-ply
	redis-server redis-tools
	gcc-aarch64-linux-gnu
)

missing=()
for p in "${PKGS[@]}"; do
	name=${p%%=*}
	want=${p#*=}
	have=$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$name" 2>/dev/null || true)
	case "$have" in
	ii\ *)
		if [ "$name" = "$BASE_PKG" ] && [ "${have#ii }" != "$BASE_VERSION" ]; then
			echo "install-deps: $BASE_PKG ${have#ii } is installed, but scripts/base.env pins $BASE_VERSION" >&2
			exit 1
		fi ;;
	*)	missing+=("$p") ;;
	esac
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
	exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: need root for apt-get" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
