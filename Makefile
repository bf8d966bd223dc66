# SPDX-License-Identifier: GPL-2.0
#
# pmcring top-level build.
#
#   make deps     install build/test dependencies with apt-get (idempotent)
#   make          build the module, userspace (if present) and selftests
#   make check    -Werror build, host unit tests, selftests in a QEMU VM,
#                 the arm64 PMU/ring tests in an arm64 VM;
#                 ends with "N passed, N failed, N skipped"
#   make ARCH=arm64 [check]  cross-build for arm64 (make deps ARCH=arm64
#                 first), the whole suite in the arm64 VM
#   make run      build, boot the VM (HOST=1: this host), record a workload
#   make lint     checkpatch --strict on kmod/ and uapi/
#   make fuzz     libFuzzer targets, then long VM fuzzing (FUZZ_NO_VM=1: skip)
#   make check-debug    the suite on a LOCKDEP/KASAN kernel (built once)
#   make check-hotplug  CPU hotplug while recording, 4 vCPUs
#   make check-warn     the test that expects a kernel WARNING (ring_warn)
#   make check-pnmi     the arm64 PMU and ring tests on a pseudo-NMI kernel
#                 (cross-built once, cached in build/pnmi-kernel)
#   make ldms     OVIS LDMS for the LDMS tests, built once into build/ldms
#   make bench / install / clean
#   make dkms-install   the module's source in /usr/src/pmcring-VERSION,
#                 dkms add/build/install (DKMS_KERNELS, default the running
#                 kernel); make install DKMS=1 does the same;
#                 make dkms-uninstall removes it
#
# KVER selects the Debian kernel series (default 6.1): the newest installed
# /usr/src/linux-headers-$(KVER).*-amd64 is used and the VM boots the
# matching /boot/vmlinuz.  KREL/KDIR may be given to pin an exact release.
#
# ARCH=arm64 on an amd64 machine cross-builds everything for arm64 into
# build/arm64/ (Debian's arm64 kernel, headers, busybox and static
# libraries unpacked into build/arm64/root/ by "make deps ARCH=arm64", see
# selftests/lib/arm64_root.sh) and runs the tests in an arm64 VM
# (selftests/vmrun --arch arm64).  On an arm64 machine plain "make" is a
# native build.

KVER ?= 6.1
SHELL := /bin/bash
# The target architecture: Debian's names (amd64 builds say x86_64 too).
HOST_ARCH := $(shell uname -m | sed -e 's/^aarch64$$/arm64/' -e 's/^x86_64$$/amd64/')
ARCH ?= $(HOST_ARCH)
override ARCH := $(patsubst x86_64,amd64,$(patsubst aarch64,arm64,$(ARCH)))
ifeq ($(filter amd64 arm64,$(ARCH)),)
$(error ARCH=$(ARCH): amd64 (x86_64) or arm64 (aarch64))
endif
CROSS := $(if $(filter $(HOST_ARCH),$(ARCH)),,y)
# The kernel's name of it, given to every kernel build (ARCH=amd64 from our
# command line would reach it otherwise).
KBUILD_ARCH := $(if $(filter amd64,$(ARCH)),x86,arm64)
ifneq ($(CROSS),)
ifneq ($(HOST_ARCH)-$(ARCH),amd64-arm64)
$(error ARCH=$(ARCH) on $(HOST_ARCH): only amd64 -> arm64 cross builds)
endif
endif
# The release, one place: user/Makefile, kmod/Kbuild and dkms.conf read it.
VERSION := $(shell cat $(CURDIR)/VERSION)
MAKEFLAGS += --no-print-directory

TOP := $(CURDIR)
BUILD := $(TOP)/build
KSRC_TAR ?= /usr/src/linux-source-6.1.tar.xz
KSRC := $(BUILD)/ksrc
KSFT_DIR := $(KSRC)/tools/testing/selftests
KSFT_INSTALL := $(BUILD)/kselftest-install

# Lazily evaluated (=): "make deps" may install the headers first.
ifeq ($(CROSS),)
KREL = $(shell KVER_ARCH=$(ARCH) $(TOP)/selftests/lib/kver $(KVER))
KDIR = /usr/src/linux-headers-$(KREL)
# Where this architecture's builds go (the x86 layout for native builds).
ABUILD := $(BUILD)
else
ARM64_ROOT := $(BUILD)/arm64/root
KREL = $(shell KVER_ARCH=arm64 KVER_ROOT=$(ARM64_ROOT) $(TOP)/selftests/lib/kver $(KVER))
KDIR = $(ARM64_ROOT)/usr/src/linux-headers-$(KREL)
ABUILD := $(BUILD)/arm64
CROSS_COMPILE := aarch64-linux-gnu-
KMAKE_ARGS := ARCH=$(KBUILD_ARCH) CROSS_COMPILE=$(CROSS_COMPILE)
# The static libraries and headers of arm64_root.sh, before the host's.
X_CFLAGS := -isystem $(ARM64_ROOT)/usr/include \
	-isystem $(ARM64_ROOT)/usr/include/aarch64-linux-gnu
X_LDFLAGS := -L$(ARM64_ROOT)/usr/lib/aarch64-linux-gnu
USER_ARGS := O=$(ABUILD)/user CC=$(CROSS_COMPILE)gcc AR=$(CROSS_COMPILE)ar \
	"CFLAGS=$(X_CFLAGS)" "LDFLAGS=$(X_LDFLAGS)"
# No libbpf for arm64 here: bench_tp without its BPF peer.
SELFTESTS_ARGS := OUTPUT=$(ABUILD)/selftests CC=$(CROSS_COMPILE)gcc \
	LIBPMCRING=$(ABUILD)/user/static/libpmcring.a TP_BPF_HAVE= \
	"LDFLAGS=-static -pthread $(X_LDFLAGS)"
KSFT_INSTALL := $(ABUILD)/kselftest-install
endif

# Packages: the 6.1 series comes from bookworm's meta packages, any other
# series from the versioned meta packages (linux-image-6.12-amd64, ...).
# (An arm64 build on amd64 installs the amd64 ones too: their kbuild
# tools build the arm64 module, and make check runs the x86 suite.)
KARCH := $(if $(CROSS),amd64,$(ARCH))
ifeq ($(KVER),6.1)
KPKGS := linux-image-$(KARCH) linux-headers-$(KARCH)
else
KPKGS := linux-image-$(KVER)-$(KARCH) linux-headers-$(KVER)-$(KARCH)
endif
DEB_PKGS := gcc make libc6-dev pkg-config perl python3 xz-utils kmod rsync \
	    clang libclang-rt-14-dev chromium dkms \
	    libelf-dev libdw-dev zlib1g-dev liblzma-dev libbz2-dev g++ \
	    libpfm4-dev libjson-c-dev rustc dwz \
	    libbpf-dev bpftool libzstd-dev linux-perf trace-cmd \
	    qemu-system-x86 busybox-static cpio liburing-dev linux-source-6.1 \
	    flex bison bc libssl-dev \
	    autoconf automake libtool libjansson-dev python3-docutils \
	    $(KPKGS)
# The arm64 VM and the cross toolchain (amd64 packages: nothing of arm64 is
# installed; selftests/lib/arm64_root.sh unpacks what is needed).
ARM64_CROSS_PKGS := gcc-aarch64-linux-gnu g++-aarch64-linux-gnu \
	libc6-dev-arm64-cross qemu-system-arm
ifeq ($(ARCH),arm64)
DEB_PKGS += $(if $(CROSS),$(ARM64_CROSS_PKGS),qemu-system-arm)
endif

# npm package of the speedscope import test (user/tests/speedscope_import.sh)
SPEEDSCOPE_VERSION := 1.25.0

HAVE_USER = $(wildcard $(TOP)/user/Makefile)
# Does user/Makefile know target $(1)?  (make -q exits 2 on "no rule")
user_has = $(and $(HAVE_USER),$(shell $(MAKE) -C $(TOP)/user -q $(1) \
	>/dev/null 2>&1; [ $$? -ne 2 ] && echo y))

.PHONY: all deps kmod user selftests ksrc lint check run fuzz bench ldms \
	install clean help check-debug check-hotplug check-warn check-pnmi \
	dkms-src dkms-install dkms-uninstall

all: kmod user selftests

help:
	@sed -n '3,27p' $(firstword $(MAKEFILE_LIST)) | sed 's/^# \{0,1\}//'

# ---------------------------------------------------------------------------
# Dependencies.  dpkg-query first so a second run costs nothing.
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		s=$$(dpkg-query -W -f='$${db:Status-Abbrev}' $$p 2>/dev/null); \
		case "$$s" in ii*) ;; *) echo $$p;; esac; done); \
	qc=$$(dpkg-query -W -f='$${Version}' qemu-system-common 2>/dev/null); \
	case "$$qc:$${QEMU_BACKPORTS:-1}" in \
	*bpo*:1) missing=$$(echo $$missing | tr ' ' '\n' | grep -v '^qemu-system-');; \
	esac; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then \
			echo "deps: need root (try: sudo make deps)" >&2; exit 1; \
		fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q -o DPkg::Lock::Timeout=900 && \
		apt-get install -y -q -o DPkg::Lock::Timeout=900 --no-install-recommends $$missing || exit 1; \
	fi; \
	krel=$$(KVER_ARCH=$(KARCH) $(TOP)/selftests/lib/kver $(KVER)) && [ -n "$$krel" ] || \
		{ echo "deps: no kernel $(KVER) headers+image installed" >&2; exit 1; }
	@# QEMU >= 8.1 (10.0 from bookworm-backports) for multi-threaded TCG in
	@# every test VM; QEMU_BACKPORTS=0 keeps Debian's 7.2 (selftests/lib/tcg_thread).
	@# Once the backports' qemu-system-common is in, another emulator
	@# (qemu-system-arm for ARCH=arm64) must come from there too: bookworm's
	@# 7.2 wants its own -common, and apt refuses.  The line above leaves
	@# qemu-system-* to this script then.
	@$(TOP)/selftests/lib/qemu_backports.sh x86 $(if $(CROSS),arm64)
ifneq ($(CROSS),)
	@# arm64 packages are only downloaded, never installed (arm64_root.sh).
	@if ! dpkg --print-foreign-architectures | grep -qx arm64 || \
	    ! apt-cache show busybox-static:arm64 >/dev/null 2>&1; then \
		echo "deps: dpkg --add-architecture arm64"; \
		dpkg --add-architecture arm64 && \
		apt-get update -q -o DPkg::Lock::Timeout=900 >/dev/null || exit 1; \
	fi
	@$(TOP)/selftests/lib/arm64_root.sh $(KVER) >/dev/null
endif
	@# speedscope (npm) for the import test of `pmcring script`, under
	@# build/tools; node and npm from Debian if the machine has no npm.
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "deps: installing: nodejs npm"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q -o DPkg::Lock::Timeout=900 && \
		apt-get install -y -q -o DPkg::Lock::Timeout=900 --no-install-recommends nodejs npm || exit 1; \
	fi; \
	d=$(BUILD)/tools/node_modules/speedscope; \
	if ! grep -qs '"version": "$(SPEEDSCOPE_VERSION)"' $$d/package.json; then \
		echo "deps: npm install speedscope@$(SPEEDSCOPE_VERSION) in $(BUILD)/tools"; \
		mkdir -p $(BUILD)/tools && \
		npm install --prefix $(BUILD)/tools --no-audit --no-fund \
			--no-save speedscope@$(SPEEDSCOPE_VERSION) >/dev/null || exit 1; \
	fi

# ---------------------------------------------------------------------------
# Kernel files we use but never commit, extracted from linux-source-6.1.
KSRC_FILES := tools/testing/selftests/kselftest.h \
	tools/testing/selftests/kselftest_harness.h \
	tools/testing/selftests/lib.mk \
	tools/testing/selftests/run_kselftest.sh \
	tools/testing/selftests/kselftest/* \
	scripts/checkpatch.pl scripts/spelling.txt \
	scripts/const_structs.checkpatch

$(KSRC)/.stamp: $(KSRC_TAR)
	@echo "  EXTRACT kselftest + checkpatch from $(notdir $(KSRC_TAR))"
	@rm -rf $(KSRC) && mkdir -p $(KSRC)
	@tar -xJf $(KSRC_TAR) -C $(KSRC) --strip-components=1 --wildcards \
		$(foreach f,$(KSRC_FILES),'*/$(f)')
	@mkdir -p $(BUILD)/kselftest
	@cp $(KSFT_DIR)/kselftest.h $(KSFT_DIR)/kselftest_harness.h \
		$(BUILD)/kselftest/
	@touch $@

ksrc: $(KSRC)/.stamp

# ---------------------------------------------------------------------------
# Build.  The module is also copied to build/kmod/<release>/ so 6.1 and
# 6.12 builds can coexist for the VM runner.
ifneq ($(CROSS),)
# A cross build compiles a copy of the module's sources (the dkms-src
# layout) so that the x86 objects in kmod/ stay.
XKMOD := $(ABUILD)/src/kmod
kmod:
	@test -d "$(KDIR)" || { echo "no arm64 headers for KVER=$(KVER);" \
		"run: make deps ARCH=arm64 KVER=$(KVER)" >&2; exit 1; }
	@# rsync -a keeps the times: Kbuild rebuilds only what changed.
	@mkdir -p $(XKMOD)/bench $(ABUILD)/src/uapi/linux
	@rsync -a --exclude '*.mod.c' --include Kbuild --include Makefile \
		--include '*.[ch]' --include bench/ --exclude '*' kmod/ $(XKMOD)/
	@rsync -a uapi/linux/pmcring.h $(ABUILD)/src/uapi/linux/
	@rsync -a VERSION $(ABUILD)/src/
	@rm -f $(XKMOD)/pmcring.mod.c
	$(MAKE) -C $(XKMOD) KDIR=$(KDIR) $(KMAKE_ARGS)
	@mkdir -p $(BUILD)/kmod/$(KREL)
	@cp $(XKMOD)/pmcring.ko $(BUILD)/kmod/$(KREL)/pmcring.ko
	@d=$(ABUILD)/vmroot/lib/modules/$(KREL)/kernel/lib; mkdir -p $$d; \
	 cp -f $(ARM64_ROOT)/lib/modules/$(KREL)/kernel/lib/crc7.ko* $$d/ 2>/dev/null || \
	 echo "  NOTE    no crc7 module for $(KREL): src_records skips its module test"
	$(MAKE) -C $(XKMOD)/bench KDIR=$(KDIR) $(KMAKE_ARGS)
	@d=$(ABUILD)/vmroot/lib/modules/$(KREL)/extra; mkdir -p $$d; \
	 cp -f $(XKMOD)/bench/pmcring_ftrace_bench.ko $$d/
else
kmod:
	@test -d "$(KDIR)" || { echo "no headers for KVER=$(KVER);" \
		"run: make deps KVER=$(KVER)" >&2; exit 1; }
	@# kmod/Kbuild's *.c wildcard would pick up modpost's generated
	@# pmcring.mod.c (stale from another kernel) on the next run.
	@rm -f kmod/pmcring.mod.c
	$(MAKE) -C kmod KDIR=$(KDIR) ARCH=$(KBUILD_ARCH)
	@mkdir -p $(BUILD)/kmod/$(KREL)
	@cp kmod/pmcring.ko $(BUILD)/kmod/$(KREL)/pmcring.ko
	@# src_records loads a small unloaded module (crc7) of the guest's
	@# kernel to see MAP_IN/MAP_OUT; the guest's root is built from vmroot.
	@d=$(BUILD)/vmroot/lib/modules/$(KREL)/kernel/lib; mkdir -p $$d; \
	 cp -f /lib/modules/$(KREL)/kernel/lib/crc7.ko* $$d/ 2>/dev/null || \
	 echo "  NOTE    no crc7 module for $(KREL): src_records skips its module test"
	@# bench_smoke (make check) runs B1 against the ftrace reference too.
	$(MAKE) -C kmod/bench KDIR=$(KDIR) ARCH=$(KBUILD_ARCH)
	@d=$(BUILD)/vmroot/lib/modules/$(KREL)/extra; mkdir -p $$d; \
	 cp -f kmod/bench/pmcring_ftrace_bench.ko $$d/
endif

user:
ifneq ($(CROSS),)
	@# libpmcring (static and shared) and the static pmcring the VM runs.
	$(MAKE) -C user $(USER_ARGS) $(ABUILD)/user/libpmcring.a \
		$(ABUILD)/user/libpmcring.so static
else ifneq ($(HAVE_USER),)
	$(MAKE) -C user
	$(MAKE) -C user static
else
	@echo "  SKIP    user/ (no user/Makefile yet)"
endif

# Selftests are static programs; they may link build/user/static/libpmcring.a.
selftests: ksrc user
	$(MAKE) -C selftests $(SELFTESTS_ARGS)
	@# perm_exec's setuid-root helper, in the VM's root (vmrun copies
	@# build/vmroot/ with its modes; the build runs as root).
	@d=$(ABUILD)/vmroot/usr/local/libexec; mkdir -p $$d && \
	 $(if $(CROSS),$(CROSS_COMPILE)gcc,$(CC)) -std=gnu11 -O2 -Wall -Wextra -Werror -static \
		-o $$d/pmcring-suid-spin selftests/lib/suid_spin.c && \
	 chmod 4755 $$d/pmcring-suid-spin
ifneq ($(CROSS),)
	@# report_example.sh's consumers (user/examples), static for the VM:
	@# on amd64 user/tests/example_build.sh builds them from an installed
	@# libpmcring; a cross build compiles them against this tree's.
	@d=$(ABUILD)/vmroot/usr/local/bin; mkdir -p $$d && \
	 $(CROSS_COMPILE)gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static \
		-Iuapi -o $$d/pmcring-example-consumer user/examples/consumer.c && \
	 $(CROSS_COMPILE)gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static \
		-Iuapi -Iuser/include -o $$d/pmcring-example-reader \
		user/examples/reader.c $(ABUILD)/user/static/libpmcring.a -pthread
endif
	@# Install beside, then swap: a vmrun of someone else may be copying it.
	@rm -rf $(KSFT_INSTALL).new
	$(MAKE) -C selftests $(SELFTESTS_ARGS) install INSTALL_PATH=$(KSFT_INSTALL).new >/dev/null
	@rm -rf $(KSFT_INSTALL).old; \
	 [ ! -d $(KSFT_INSTALL) ] || mv $(KSFT_INSTALL) $(KSFT_INSTALL).old; \
	 mv $(KSFT_INSTALL).new $(KSFT_INSTALL) && rm -rf $(KSFT_INSTALL).old

# ---------------------------------------------------------------------------
# OVIS LDMS for the LDMS tests (not in Debian): built once from
# ../shared/ldms/ldms-*.tar.xz into build/ldms/; LDMS_PREFIX=DIR uses a
# site install instead.  Neither: the LDMS tests skip (fail with CI=true).
ldms:
	@$(TOP)/selftests/lib/ldms_build.sh

# ---------------------------------------------------------------------------
CHECKPATCH := perl $(KSRC)/scripts/checkpatch.pl --strict --no-tree \
	--terse --show-types
# The uapi header is checked under its in-kernel name include/uapi/linux/
# so checkpatch applies its uapi rules (no BIT() there, etc.).
lint: ksrc
	@echo "  CHECKPATCH --strict kmod/*.[ch] uapi/linux/pmcring.h"
	@rc=0; $(CHECKPATCH) -f $(filter-out %.mod.c,$(wildcard kmod/*.[ch])) || rc=1; \
	mkdir -p $(BUILD)/lint/include/uapi/linux && \
	cp uapi/linux/pmcring.h $(BUILD)/lint/include/uapi/linux/ && \
	cd $(BUILD)/lint && \
	$(CHECKPATCH) -f include/uapi/linux/pmcring.h || rc=1; \
	cd $(TOP) && echo "  ARCH-CHECK kmod refuses a kernel that is neither x86-64 nor arm64" && \
	{ $(MAKE) -s -C kmod KDIR=$(KDIR) CONFIG_X86_64= CONFIG_ARM64= 2>&1 | \
	  grep -q 'only x86-64 and arm64 are supported' || \
	  { echo "kmod/Kbuild: no clear error without CONFIG_X86_64 or CONFIG_ARM64"; rc=1; }; }; \
	exit $$rc

# ---------------------------------------------------------------------------
# selftests/lib/dkms_check.sh builds the module through dkms for both series;
# the permission tests also run in a 6.12 guest (selftests/lib/check.sh).
# On amd64 it also cross-builds for arm64 and runs the PMU, ring order and
# loss tests in the arm64 VM (CHECK_ARM64=0: not); ARCH=arm64 runs the
# suite's VM stages in the arm64 VM (the host stages stay amd64).
CHECK_ARM64 ?= 1
check: DEB_PKGS += linux-headers-amd64 linux-headers-6.12-amd64 \
		   linux-image-6.12-amd64
# The builds go CHECK_JOBS at a time (default: every CPU; 316 s -> 207 s
# on 2 cores for the x86, 6.12 and arm64 builds with LDMS).
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check: deps
ifeq ($(ARCH),amd64)
	@$(MAKE) -j$(CHECK_JOBS) all ldms
	@if [ "$(KVER)" != 6.12 ]; then $(MAKE) -j$(CHECK_JOBS) kmod KVER=6.12; fi
ifeq ($(CHECK_ARM64),1)
	@$(MAKE) deps ARCH=arm64
	@$(MAKE) -j$(CHECK_JOBS) all ARCH=arm64
endif
else
	@$(MAKE) -j$(CHECK_JOBS) all ldms ARCH=amd64
	@$(MAKE) -j$(CHECK_JOBS) all
endif
	@ARCH=$(ARCH) CHECK_ARM64=$(CHECK_ARM64) KVER=$(KVER) KREL=$(KREL) \
		$(TOP)/selftests/lib/check.sh

run: deps
	@$(MAKE) all
	@KVER=$(KVER) KREL=$(KREL) KDIR=$(KDIR) HOST=$(HOST) \
		$(TOP)/selftests/lib/run.sh

# B1-B5 in the VM and the native benchmark (make -C user bench):
# selftests/bench/run.sh, results in out/bench.json and out/bench.svg.
# perf (B3's reference, B1/B2's perf peer) and trace-cmd (B2's ftrace peer)
# are the host's binaries, run in the guest with their libraries; the BPF
# peer (tpbench) links libbpf statically.
# ARCH=arm64 on amd64: B1 and the tracepoint peers in the arm64 VM, ratios
# only (selftests/bench/run_arm64.sh, out/bench-arm64.{txt,json}).
bench: deps
	@$(MAKE) kmod user
ifneq ($(CROSS),)
	@KVER=$(KVER) CROSS_COMPILE=$(CROSS_COMPILE) $(TOP)/selftests/bench/run_arm64.sh
else
	@KVER=$(KVER) KREL=$(KREL) KDIR=$(KDIR) $(TOP)/selftests/bench/run.sh
	@# records/s published to LDMS against the blob writer (ldms.rst)
	@$(MAKE) ldms
	@mkdir -p $(TOP)/out && $(MAKE) -C user ldms-bench \
		LDMS_BENCH_JSON=$(TOP)/out/bench-ldms.json
endif

# make fuzz: libFuzzer targets on the host, then (FUZZ_NO_VM=1 to skip)
# the long in-VM ioctl/mmap fuzzer and overload runs, ~15 min.
fuzz:
ifneq ($(HAVE_USER),)
	@if [ -n "$(call user_has,$@)" ]; then $(MAKE) -C user $@; else \
		echo "$@: user/Makefile has no '$@' target yet"; fi
else
	@echo "$@: user/ does not exist yet"
endif
	@if [ -z "$(FUZZ_NO_VM)" ]; then $(MAKE) kmod selftests && \
		KVER=$(KVER) $(TOP)/selftests/lib-hard/fuzz_vm.sh; fi

# The suite on a kernel built with PROVE_LOCKING, KASAN, DEBUG_ATOMIC_SLEEP
# and DEBUG_PREEMPT (built once, ~28 min on 2 cores, cached in build/).
check-debug: deps
	@$(MAKE) user selftests
	@$(TOP)/selftests/lib-hard/debug_kernel.sh

# The arm64 PMU and ring tests on an arm64 kernel with
# CONFIG_ARM64_PSEUDO_NMI=y booted with irqchip.gicv3_pseudo_nmi=1, where
# the PMU's overflow interrupt, and pmcring's sampling handler with it, is
# an NMI (Debian's arm64 kernels have no pseudo-NMI).  The kernel is
# cross-built once and cached in build/pnmi-kernel/.  Not part of check.
check-pnmi:
	@$(MAKE) ARCH=arm64 deps
	@$(MAKE) ARCH=arm64 all
	@$(TOP)/selftests/lib-hard/pnmi_kernel.sh

# CPU hotplug while recording with 4 vCPUs (make check boots 2).
check-hotplug: deps
	@$(MAKE) all
	@$(TOP)/selftests/lib-hard/hotplug4.sh --kernel $(KVER)

# ring_warn expects the producer's WARN_ON_ONCE for a bad length: its own
# VM, where vmrun reports the splat instead of failing on it; the test
# checks the kernel log itself (make check runs it the same way).
check-warn: deps
	@$(MAKE) all
	@$(TOP)/selftests/vmrun --kernel $(KVER) --no-splat-check \
		--env PMCRING_TEST_WARN=1 -- ring_warn

install: $(if $(DKMS),dkms-install,kmod)
ifeq ($(DKMS),)
	$(MAKE) -C kmod KDIR=$(KDIR) modules_install
endif
ifneq ($(HAVE_USER),)
	@if [ -n "$(call user_has,install)" ]; then $(MAKE) -C user install; \
	else echo "install: user/Makefile has no 'install' target yet"; fi
endif

# ---------------------------------------------------------------------------
# DKMS.  dkms-src writes the self-contained source tree DKMS builds from:
# dkms.conf (kmod/dkms.conf.in with the release), VERSION, the module's
# sources in kmod/ and the uapi header in uapi/linux/, the repository's
# layout, so kmod/Kbuild needs nothing else.  DKMS_FLAGS passes options to
# every dkms command (selftests/lib/dkms_check.sh: private --dkmstree and
# --installtree); the source tree is always DKMS_SRC_ROOT.
DKMS_SRC_ROOT ?= /usr/src
DKMS_KERNELS ?= $(shell uname -r)
DKMS_FLAGS ?=
DKMS_TREE_DIR = $(DKMS_SRC_ROOT)/pmcring-$(VERSION)
DKMS_CMD = dkms $(1) -m pmcring -v $(VERSION) \
	--sourcetree $(DKMS_SRC_ROOT) $(DKMS_FLAGS)
DKMS_KMOD_SRCS = kmod/Kbuild kmod/Makefile \
	$(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h)

dkms-src:
	@test -n "$(VERSION)" || { echo "no release in VERSION" >&2; exit 1; }
	@echo "  DKMS-SRC $(DKMS_TREE_DIR)"
	@rm -rf $(DKMS_TREE_DIR)
	@install -d $(DKMS_TREE_DIR)/kmod $(DKMS_TREE_DIR)/uapi/linux
	@install -m 644 $(DKMS_KMOD_SRCS) $(DKMS_TREE_DIR)/kmod/
	@install -m 644 uapi/linux/pmcring.h $(DKMS_TREE_DIR)/uapi/linux/
	@install -m 644 VERSION $(DKMS_TREE_DIR)/
	@sed 's/@VERSION@/$(VERSION)/' kmod/dkms.conf.in \
		>$(DKMS_TREE_DIR)/dkms.conf

# A second dkms-install of the same release replaces the first: dkms add
# refuses a release it has.
dkms-install:
	@command -v dkms >/dev/null || \
		{ echo "dkms-install: no dkms (run: make deps)" >&2; exit 1; }
	@if [ -n "$$($(call DKMS_CMD,status))" ]; then \
		$(call DKMS_CMD,remove) --all || exit 1; fi
	@$(MAKE) dkms-src
	$(call DKMS_CMD,add)
	@for k in $(DKMS_KERNELS); do \
		echo "$(call DKMS_CMD,build) -k $$k"; \
		$(call DKMS_CMD,build) -k $$k || exit 1; \
		echo "$(call DKMS_CMD,install) -k $$k"; \
		$(call DKMS_CMD,install) -k $$k || exit 1; \
	done

dkms-uninstall:
	@command -v dkms >/dev/null || \
		{ echo "dkms-uninstall: no dkms" >&2; exit 1; }
	@if [ -n "$$($(call DKMS_CMD,status))" ]; then \
		echo "$(call DKMS_CMD,remove) --all"; \
		$(call DKMS_CMD,remove) --all || exit 1; fi
	rm -rf $(DKMS_TREE_DIR)

clean:
	-$(MAKE) -C kmod KDIR=$(KDIR) clean
ifneq ($(HAVE_USER),)
	-$(MAKE) -C user clean
endif
	-$(MAKE) -C selftests clean
	rm -rf $(BUILD) $(TOP)/out
