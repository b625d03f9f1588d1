# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by scripts/lab.sh -H: the lab with hot-pluggable memory.
#
#   dimm2  512 MiB pc-dimm on node2 (the CXL node), next to its 3 GiB
#   node3  a CPU-less node with no memory at boot: its only memory is
#   dimm3  512 MiB pc-dimm, so node3 is possible but has no memory until
#          that DIMM is onlined
#
# The DIMMs are ACPI memory devices (CONFIG_ACPI_HOTPLUG_MEMORY, in
# configs/debug.config); their blocks come up offline, and the tests
# (tools/testing/selftests/mm/tiering/hotplug.c) online them movable and
# offline them again.  node3 gets the same HMAT figures as node2.
QEMU+=(-m ${MEM_MIB}M,slots=2,maxmem=$((MEM_MIB + 1024))M
	-numa node,nodeid=3,initiator=0
	-numa dist,src=0,dst=3,val=30 -numa dist,src=1,dst=3,val=30
	-numa dist,src=2,dst=3,val=30)
for i in 0 1; do
	QEMU+=(-numa "hmat-lb,initiator=$i,target=3,hierarchy=memory,data-type=access-latency,latency=30"
	       -numa "hmat-lb,initiator=$i,target=3,hierarchy=memory,data-type=access-bandwidth,bandwidth=5G")
done
QEMU+=(-object memory-backend-ram,id=hp2,size=512M -device pc-dimm,id=dimm2,memdev=hp2,node=2
       -object memory-backend-ram,id=hp3,size=512M -device pc-dimm,id=dimm3,memdev=hp3,node=3)
