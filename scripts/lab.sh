#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a kernel in the emulated tiered machine and run a command in it.
#
#   scripts/lab.sh [-k BZIMAGE] [-t TIMEOUT_S] [-a KERNEL_ARGS] [-d LABDIR] [-i] [-H | -C] [CMD...]
#
# Machine: QEMU TCG, 2 CPUs (LAB_CPUS).  node0 (1 GiB, CPU0) and node1 (1 GiB, CPU1) are
# DRAM; node2 (3 GiB, no CPU) is "CXL": HMAT gives it 3x the latency and 1/4
# the bandwidth, so Linux puts it in a lower memory tier.  The guest's root is
# the host's / (read-only 9p); LABDIR (writable 9p, /mnt/lab in the guest)
# carries the command, its log (out.log), its exit code (rc) and the console
# log (console.log).  CMD runs under bash in the guest.  -i: interactive shell.
# -H: hot-pluggable DIMMs on node2 and on a memoryless node3 (lab-hotplug.sh).
# -C: two sockets with a CXL node each: node3 (1 GiB, no CPU) is node1's as
# node2 is node0's (initiator, distance 30, HMAT figures), and each CXL
# node is further from the other socket (distance 40, latency 40, 4G), so
# that the kernel demotes node0 to node2 and node1 to node3.  -H and -C
# both define node3: one or the other.
# The checkout is also shared on its own (read-only), so that it stays at
# its path in the guest even where the guest mounts a tmpfs (/tmp, /run, /mnt).
# One lab at a time on the machine: a second lab.sh waits for the first
# guest to end (lock file LAB_LOCK, default /tmp/tiering-lab.lock, held by
# the guest's QEMU), since two TCG guests share the host's CPUs and would skew
# every timing either one measures.  LAB_LOCK= (empty) runs next to others.
# LAB_NODE0_MIB (default 1024) sizes node0, for experiments on how a result
# scales with the fast node; the rest of the machine stays as above.
# LAB_CPUS (default 2, even) gives each socket, so node0 and node1, half of
# that many CPUs: the debug lane boots with 8, so that per-CPU code runs on
# more than two CPUs at once.  TCG runs them on the host's cores.
# Exit: CMD's exit code; 124 on host-side timeout; 125 if the guest died.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
KERNEL=$REPO/build/obj/arch/x86/boot/bzImage
TIMEOUT=600
APPEND=""
LABDIR=""
INTERACTIVE=0
HOTPLUG=0
TWO_CXL=0
NODE0_MIB=${LAB_NODE0_MIB:-1024} NODE1_MIB=1024 NODE2_MIB=3072
CPUS=${LAB_CPUS:-2}
while getopts "k:t:a:d:iHC" o; do
	case $o in
	k) KERNEL=$OPTARG ;;
	t) TIMEOUT=$OPTARG ;;
	a) APPEND=$OPTARG ;;
	d) LABDIR=$OPTARG ;;
	i) INTERACTIVE=1 ;;
	H) HOTPLUG=1 ;;	# hot-pluggable DIMMs on node2 and node3: scripts/lab-hotplug.sh
	C) TWO_CXL=1 ;;	# a second CXL node, node3, on socket 1
	*) sed -n '3,/^# Exit/p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $NODE0_MIB =~ ^[1-9][0-9]*$ ]] && [ "$NODE0_MIB" -ge 512 ] ||
	{ echo "lab: LAB_NODE0_MIB must be a number of MiB, 512 or more" >&2; exit 2; }
[[ $CPUS =~ ^[1-9][0-9]*$ ]] && [ $((CPUS % 2)) = 0 ] && [ "$CPUS" -le 64 ] ||
	{ echo "lab: LAB_CPUS must be an even number of CPUs, 2 to 64" >&2; exit 2; }
[ $HOTPLUG = 1 ] && [ $TWO_CXL = 1 ] &&
	{ echo "lab: -H and -C both define node3: use one of them" >&2; exit 2; }
NODE3_MIB=0
[ $TWO_CXL = 0 ] || NODE3_MIB=1024
MEM_MIB=$((NODE0_MIB + NODE1_MIB + NODE2_MIB + NODE3_MIB))
[ -f "$KERNEL" ] || { echo "lab: no kernel at $KERNEL (make kernel)" >&2; exit 2; }
[ -n "$LABDIR" ] || LABDIR=$(mktemp -d /tmp/lab.XXXXXX)
mkdir -p "$LABDIR"
rm -f "$LABDIR/rc" "$LABDIR/out.log" "$LABDIR/interactive"
printf '%s\n' "${*:-true}" > "$LABDIR/cmd"
[ $INTERACTIVE = 1 ] && touch "$LABDIR/interactive"

# -C: node3 before the HMAT figures that name it; node1 to node2 and node3
# to node0 are across the sockets
NODE3=() D12=30
if [ $TWO_CXL = 1 ]; then
	D12=40
	NODE3=(-object memory-backend-ram,size=${NODE3_MIB}M,id=m3
	       -numa node,nodeid=3,memdev=m3,initiator=1
	       -numa dist,src=0,dst=3,val=40 -numa dist,src=1,dst=3,val=30
	       -numa dist,src=2,dst=3,val=50)
fi
HMAT=()
for i in 0 1; do
	for t in 0 1 2 $([ $TWO_CXL = 0 ] || echo 3); do
		case $TWO_CXL$i$t in
		?00 | ?11) lat=10 bw=20G ;;
		?01 | ?10) lat=20 bw=10G ;;
		112 | 103) lat=40 bw=4G ;;	# the other socket's CXL node
		*) lat=30 bw=5G ;;
		esac
		HMAT+=(-numa "hmat-lb,initiator=$i,target=$t,hierarchy=memory,data-type=access-latency,latency=$lat")
		HMAT+=(-numa "hmat-lb,initiator=$i,target=$t,hierarchy=memory,data-type=access-bandwidth,bandwidth=$bw")
	done
done
QEMU=(qemu-system-x86_64 -machine pc,hmat=on -accel tcg,thread=multi -cpu max
	-smp $CPUS,sockets=2,cores=$((CPUS / 2)),threads=1 -m ${MEM_MIB}M
	-object memory-backend-ram,size=${NODE0_MIB}M,id=m0
	-object memory-backend-ram,size=${NODE1_MIB}M,id=m1
	-object memory-backend-ram,size=${NODE2_MIB}M,id=m2
	-numa node,nodeid=0,memdev=m0 -numa node,nodeid=1,memdev=m1
	-numa node,nodeid=2,memdev=m2,initiator=0
	-numa cpu,node-id=0,socket-id=0 -numa cpu,node-id=1,socket-id=1
	-numa dist,src=0,dst=1,val=20 -numa dist,src=0,dst=2,val=30
	-numa dist,src=1,dst=2,val=$D12
	"${NODE3[@]}" "${HMAT[@]}"
	-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap
	-virtfs "local,path=$REPO,mount_tag=repo,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$LABDIR,mount_tag=lab,security_model=none"
	-kernel "$KERNEL"
	-append "console=ttyS0 root=host rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose ro init=$REPO/scripts/guest-init.sh panic=-1 $APPEND"
	-nographic -no-reboot -nodefaults -serial mon:stdio -device virtio-rng-pci)

# shellcheck source=scripts/lab-hotplug.sh
[ $HOTPLUG = 1 ] && . "$REPO/scripts/lab-hotplug.sh"

LAB_LOCK=${LAB_LOCK-/tmp/tiering-lab.lock}
if [ -n "$LAB_LOCK" ]; then
	exec 9> "$LAB_LOCK"
	if ! flock -n 9; then
		echo "lab: another lab guest is running; waiting for it to end" >&2
		flock 9
	fi
fi
if [ $INTERACTIVE = 1 ]; then
	"${QEMU[@]}"
	exit 0
fi
echo "lab: booting $(basename "$KERNEL") (log: $LABDIR/console.log, timeout ${TIMEOUT}s)" >&2
timeout --foreground -k 10 "$TIMEOUT" "${QEMU[@]}" < /dev/null > "$LABDIR/console.log" 2>&1 &
qpid=$!
exec 9>&- # the guest holds the lock, not the console follower below
# follow the console while the guest runs (LAB_QUIET=1 to keep quiet)
if [ "${LAB_QUIET:-0}" != 1 ]; then
	tail -n +1 -F --pid=$qpid "$LABDIR/console.log" 2>/dev/null &
fi
wait $qpid
qrc=$?
sleep 0.2
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
	echo "lab: TIMEOUT after ${TIMEOUT}s: guest killed (see $LABDIR/console.log)" >&2
	exit 124
fi
[ -f "$LABDIR/rc" ] || { echo "lab: guest ended without a result (qemu rc $qrc; see $LABDIR/console.log)" >&2; exit 125; }
exit "$(cat "$LABDIR/rc")"
