# SPDX-License-Identifier: GPL-2.0
# The BPF peer of tpbench (selftests/bench/tpbench.c), shared by
# selftests/bench/Makefile and selftests/Makefile (bench_tp): set
# TP_BPF_DEPS (prerequisites), TP_BPF_CFLAGS and TP_BPF_LIBS.  Needs TOP.
TP_BPF_DIR ?= $(TOP)/build/bench/bpf
TP_BPF_SRC := $(TOP)/selftests/bench/tp_ringbuf.bpf.c
TP_BPF_HAVE := $(and $(shell command -v clang 2>/dev/null),\
	$(shell command -v bpftool 2>/dev/null || ls /usr/sbin/bpftool 2>/dev/null),\
	$(wildcard /usr/include/bpf/libbpf.h),\
	$(wildcard /usr/lib/x86_64-linux-gnu/libbpf.a))
TP_BPFTOOL := $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)

ifneq ($(TP_BPF_HAVE),)
TP_BPF_DEPS := $(TP_BPF_DIR)/tp_ringbuf.skel.h
TP_BPF_CFLAGS := -I$(TP_BPF_DIR)
TP_BPF_LIBS := -lbpf -lelf -lz $(if $(wildcard /usr/lib/x86_64-linux-gnu/libzstd.a),-lzstd)
else
TP_BPF_DEPS :=
TP_BPF_CFLAGS := -DTP_NO_BPF
TP_BPF_LIBS :=
# (on stderr: the selftests' install captures a sub-make's stdout as its
# kselftest-list.txt, where this line became a test of the arm64 build)
$(shell echo "tpbench: no clang, bpftool or libbpf-dev: built without the BPF peer" >&2)
endif
TP_BPF_CLEAN := $(TP_BPF_DIR)

$(TP_BPF_DIR)/tp_ringbuf.bpf.o: $(TP_BPF_SRC)
	@mkdir -p $(@D)
	clang -O2 -g -target bpf -D__TARGET_ARCH_x86 \
		-I/usr/include/$(shell gcc -print-multiarch) -c $< -o $@

$(TP_BPF_DIR)/tp_ringbuf.skel.h: $(TP_BPF_DIR)/tp_ringbuf.bpf.o
	$(TP_BPFTOOL) gen skeleton $< name tp_ringbuf >$@.tmp && mv $@.tmp $@
