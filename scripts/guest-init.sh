#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PID 1 of the lab guest.  The root is the host's / over virtio-9p, read-only
# (the virtme-ng way); this mounts the kernel filesystems and scratch tmpfs,
# runs /lab/cmd from the writable "lab" share with output to the console and
# /lab/out.log, records its exit code in /lab/rc, and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp TERM=${TERM:-linux}
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm 2>/dev/null
mount -t devpts devpts /dev/pts
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t tmpfs shm /dev/shm
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs lab-mnt /mnt
mkdir -p /mnt/lab /tmp/hugetlb
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 lab /mnt/lab
mount -t hugetlbfs none /tmp/hugetlb
# a checkout under one of the tmpfs above is hidden by it: mount its own share
REPO=$(dirname "$(dirname "$0")")
if [ ! -x "$0" ]; then
	mkdir -p "$REPO"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro repo "$REPO" ||
		echo "lab: cannot mount the checkout at $REPO"
fi
ln -sf /mnt/lab /tmp/lab
hostname lab
echo "lab: guest up: $(uname -r), $(nproc) cpus, nodes $(cat /sys/devices/system/node/online)"
cd /tmp
if [ -t 0 ] && [ -f /mnt/lab/interactive ]; then
	echo "lab: interactive shell; 'poweroff -f' or Ctrl-D leaves the lab"
	setsid -c bash -i
	rc=0
else
	bash /mnt/lab/cmd 2>&1 | tee /mnt/lab/out.log
	rc=${PIPESTATUS[0]}
fi
echo "$rc" > /mnt/lab/rc
sync
echo "lab: command exited $rc, powering off"
/bin/busybox poweroff -f
