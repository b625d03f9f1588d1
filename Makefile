# SPDX-License-Identifier: GPL-2.0
# The memory-tiering series for Linux 6.12: harness.  Each target does one thing.
#
#   make run       build if needed, boot the tiered lab, run the recommended tiering on W1
#   make check     all tests: host checks, config matrix, build, one lab boot (KUnit, kselftests, DAMON selftests)
#   make check-debug  the debug lane alone: debug kernel (configs/debug.config), lab -H, stress
#   make shell     interactive shell in the lab
#   make bench     base vs patched benchmarks (bench/)
#   make deps      install packages (apt-get, root)
#   make tree      assemble build/linux = base + series
#   make kernel    configure and build build/obj/arch/x86/boot/bzImage
#   make patches   export the series as git format-patch files in build/export/
#   make matrix    build the series in other configs (configs/matrix/, i386, arm64) and per commit
#   make clean     remove build/ (the ccache stays)

.PHONY: run check check-debug shell bench deps tree kernel patches matrix clean
SHELL := /bin/bash

run: kernel
	scripts/demo.sh

check: deps
	scripts/check.sh

check-debug: tree
	scripts/check-debug.sh

shell: kernel
	scripts/lab.sh -i

bench: deps
	bench/run.sh

deps:
	scripts/install-deps.sh

tree: deps
	scripts/assemble.sh

kernel: tree
	scripts/build-kernel.sh

patches: deps
	scripts/export-series.sh

matrix: deps
	scripts/matrix.sh

clean:
	rm -rf build
