# SPDX-License-Identifier: GPL-2.0
#
# Standalone stand-in for tools/testing/selftests/lib.mk: same variables
# (TEST_GEN_PROGS, TEST_PROGS, TEST_GEN_PROGS_EXTENDED, TEST_PROGS_EXTENDED,
# TEST_FILES, OUTPUT, INSTALL_PATH) and targets (all, run_tests, install,
# emit_tests, clean).  "install" also lays out what the kernel's top-level
# selftests Makefile adds (run_kselftest.sh, kselftest/, kselftest-list.txt)
# so the kernel's runner runs the suite, and run_tests runs exactly that
# installed copy through run_kselftest.sh.

COLLECTION ?= pmcring
OUTPUT := $(abspath $(OUTPUT))

TEST_GEN_PROGS := $(patsubst %,$(OUTPUT)/%,$(TEST_GEN_PROGS))
TEST_GEN_PROGS_EXTENDED := $(patsubst %,$(OUTPUT)/%,$(TEST_GEN_PROGS_EXTENDED))
TEST_GEN_FILES := $(patsubst %,$(OUTPUT)/%,$(TEST_GEN_FILES))

LOCAL_HDRS += $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h

all: $(TEST_GEN_PROGS) $(TEST_GEN_PROGS_EXTENDED) $(TEST_GEN_FILES)

$(OUTPUT)/%: %.c $(LOCAL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(filter-out $(LOCAL_HDRS),$^) $(LDFLAGS) $(LDLIBS) -o $@

$(KSFT_DIR)/kselftest.h $(KSFT_DIR)/kselftest_harness.h:
	@echo "missing $@: run 'make ksrc' at the top of the pmcring tree" >&2
	@exit 1

KSFT_RUNNER := $(KSFT_DIR)/run_kselftest.sh $(KSFT_DIR)/kselftest

emit_tests:
	@for t in $(TEST_GEN_PROGS) $(TEST_PROGS); do \
		echo "$(COLLECTION):$$(basename $$t)"; done

install: all
ifeq ($(INSTALL_PATH),)
	$(error set INSTALL_PATH to use install)
endif
	@mkdir -p $(INSTALL_PATH)/$(COLLECTION)
	@cp -a $(TEST_GEN_PROGS) $(TEST_GEN_PROGS_EXTENDED) $(TEST_GEN_FILES) \
		$(TEST_PROGS) $(TEST_PROGS_EXTENDED) $(TEST_FILES) \
		$(wildcard settings) $(INSTALL_PATH)/$(COLLECTION)/
	@cp -a $(KSFT_RUNNER) $(INSTALL_PATH)/
	@list=$(INSTALL_PATH)/kselftest-list.txt; \
	{ [ -f $$list ] && grep -v '^$(COLLECTION):' $$list; \
	  $(MAKE) -s --no-print-directory emit_tests; } >$$list.new; \
	mv $$list.new $$list
	@echo "installed $(COLLECTION) selftests in $(INSTALL_PATH)" \
		"(run: $(INSTALL_PATH)/run_kselftest.sh -c $(COLLECTION))"

# Run the installed copy, the same way the VM does; exit 1 on "not ok".
RUN_DIR := $(OUTPUT)/kselftest-run
run_tests: all
	@rm -rf $(RUN_DIR)
	@$(MAKE) -s --no-print-directory install INSTALL_PATH=$(RUN_DIR) >/dev/null
	@$(RUN_DIR)/run_kselftest.sh -c $(COLLECTION) | tee $(OUTPUT)/run_tests.log
	@! grep -q '^not ok' $(OUTPUT)/run_tests.log

clean:
	rm -rf $(TEST_GEN_PROGS) $(TEST_GEN_PROGS_EXTENDED) $(TEST_GEN_FILES) \
		$(RUN_DIR) $(EXTRA_CLEAN)

.PHONY: all run_tests install emit_tests clean
