# heapfs - see README.md.  `make demo` and `make test` are the two entry points.
#
# Layout: every .c under model/ analyses/ fs/ mountopts/ (except fs/main.c)
# goes into one static library; build/heapfs links it with fs/main.c.
# Unit tests: tests/unit/test_<name>.c -> build/tests/test_<name> (cmocka).
# Integration tests: tests/integration/*.sh, run against build/heapfs.
# Sanitizers: `make asan` builds the same into build-asan/ with ASan+UBSan.

CC      ?= cc
BUILD   ?= build
# Builds inside make test's phases run this many compilers at once.
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
OPT     ?= -O2
SAN     ?=
PKGS    := fuse3 libzstd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  := -std=gnu11 -Wall -Wextra -Werror $(OPT) -g -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
           -I. $(PKG_CFLAGS) $(SAN) $(EXTRA_CFLAGS)
LDLIBS  := $(PKG_LIBS) -lpthread -lm
# The program's malloc, calloc and realloc ask for huge pages for big
# blocks (fs/malloc_wrap.c, model/hugepages.h).  The unit tests and test
# tools link the same way, so that their allocations go through the same
# code (they do not turn the advice on).
WRAP_LDFLAGS := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
# ant and antlr3: mode=count's exactness tests and make bench-agent run
# on real applications from Debian packages (Apache Ant,
# ANTLR 3: tests/integration/test_agent_count.sh, agent/bench.sh); without
# them those parts are skipped.  Maven (package maven) is used the same way
# where it is installed, as on these machines; it is not installed here for
# the tests alone.
# jq: tests/integration/test_jfr_reader.sh turns the JDK's `jfr print
# --json` into the lines the JFR reader's dump prints, to compare them.
# libguava-java: tests/integration/test_agent_fields.sh records a program
# built on Guava's cache (whose LocalCache$Segment extends a JDK class) and
# compares the recorded field names with a heap dump's; skipped without it.
# libjackson2-databind-java, libcommons-collections4-java: the
# real-application suite (tests/realapps/: make realapps, and its short run
# tests/integration/test_realapps_short.sh) builds programs on Guava,
# Jackson and commons-collections4; a program whose jars are missing is
# skipped.
DEBS    := libfuse3-dev fuse3 libzstd-dev uthash-dev libcmocka-dev pkg-config \
           default-jdk-headless clang libclang-rt-14-dev ant antlr3 jq libguava-java \
           libjackson2-databind-java libcommons-collections4-java

LIB_SRC  := $(filter-out fs/main.c,$(wildcard model/*.c analyses/*.c fs/*.c mountopts/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_HELPER_SRC := $(filter-out $(TEST_SRC),$(wildcard tests/unit/*.c))

.PHONY: all deps build test unit unit-bins integration integration-bins asan tsan fuzz fuzz-short bench bench-huge bench-export export-check demo clean examples soak realapps
all: build
build: $(BUILD)/heapfs

deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libheapfs.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/heapfs: $(BUILD)/obj/fs/main.o $(BUILD)/libheapfs.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(WRAP_LDFLAGS)

$(BUILD)/tests/%: tests/unit/%.c $(TEST_HELPER_SRC) $(BUILD)/libheapfs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(TEST_HELPER_SRC) $(BUILD)/libheapfs.a $(LDLIBS) -lcmocka $(WRAP_LDFLAGS) $(TEST_LDFLAGS)

# test_mountopts makes mountopts' strdup fail (out of memory)
$(BUILD)/tests/test_mountopts: TEST_LDFLAGS = -Wl,--wrap=strdup

unit-bins: $(TEST_BIN)
# The suites run TEST_JOBS at a time (tests/run_parallel.sh: each one's
# output printed whole when it ends), the longest first so that they
# overlap the many short ones: on the machines' 2 cores a single test
# leaves one idle most of the time.  TEST_JOBS=1 runs them one by one.
TEST_JOBS ?= 2
RUN_TESTS = bash tests/run_parallel.sh $(TEST_JOBS)
# $(call longest_first,NAMES,PATHS): the PATHS ending in /NAME, in the
# order of NAMES, then the others in their own order.
longest_first = $(foreach t,$(1),$(filter %/$(t),$(2))) $(filter-out $(addprefix %/,$(1)),$(2))
# Longest first (seconds under ASan, where they take longest): test_instrument 41,
# test_classfile 28, test_groupclo 13, test_model 12.
UNIT_SLOW := test_instrument test_classfile test_groupclo test_model test_hprof
unit:
	@$(MAKE) --no-print-directory -j$(JOBS) unit-bins
	@$(RUN_TESTS) $(call longest_first,$(UNIT_SLOW),$(TEST_BIN))

# Test-only programs (tests/tools/X.c -> BUILD/tools/X), which the
# integration tests find beside HEAPFS: jfr_dump prints what model/jfr.c
# reads (test_jfr_reader.sh).
TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(wildcard tests/tools/*.c))
$(BUILD)/tools/%: tests/tools/%.c $(BUILD)/libheapfs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libheapfs.a $(LDLIBS) $(WRAP_LDFLAGS)

# Each suite's time is printed after it: CI has 90 minutes, make test should
# stay well under 20.
# Longest first (seconds, one at a time): test_agent_count 154,
# test_realapps_short 76, test_soak 72 (a fixed 60 s), test_mount 67,
# test_jfr_reader 35, test_agent_sample 31, test_signals 27.
INTEGRATION_SLOW := test_agent_count test_realapps_short test_soak test_mount test_jfr_reader test_agent_sample test_signals
integration:
	@$(MAKE) --no-print-directory -j$(JOBS) integration-bins
	@$(RUN_TESTS) $(foreach t,$(call longest_first,$(INTEGRATION_SLOW:%=%.sh),$(wildcard tests/integration/*.sh)), \
		"HEAPFS=$(abspath $(BUILD)/heapfs) bash $(t)")

# The concurrent soak for 10 minutes (make test runs it for 60 s as
# tests/integration/test_soak.sh): 16 readers under eviction pressure,
# every read byte-compared, peak RSS within status's memory_bound.
soak: deps
	$(MAKE) build
	SOAK_SECONDS=$${SOAK_SECONDS:-600} HEAPFS=$(abspath $(BUILD)/heapfs) bash tests/integration/test_soak.sh

# The real-application suite at full size (tests/realapps/run.sh): five
# programs on Debian's Guava, Jackson and commons-collections4, each with a
# planted leak, bloat, churn or GC overhead, checked against jcmd's class
# histograms and heap dumps and a recording with the agent; known heapfs
# failures print XFAIL and do not fail it.  make test runs a short part
# (tests/integration/test_realapps_short.sh).  Then mode=count's every
# counter variant on Ant, ANTLR 3, Maven and BeanShell against mode=full
# (make test runs path counters on three of them).
realapps: deps
	$(MAKE) -j$(JOBS) build agent
	HEAPFS=$(abspath $(BUILD)/heapfs) BUILD=$(BUILD) bash tests/realapps/run.sh
	AGENT_COUNT_APPS=all HEAPFS=$(abspath $(BUILD)/heapfs) BUILD=$(BUILD) bash tests/integration/test_agent_count.sh

# The sanitizer build: same sources, separate tree, whole unit suite.
# test_instrument walks every 4th JDK class there (the plain pass walks all
# 26,588): the whole walk took 4 of make test's 22 minutes under ASan.
asan:
	HEAPFS_TEST_JDK_EVERY=4 $(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" unit

# ThreadSanitizer over the unit tests whose code runs threads: the job
# pools that serve long reads, the render cache's single flight, the
# analyses' fork-join loop, a heap state's parallel reachability and
# in-edges, the table closures' parallel batches, the
# data-structure heads measured on several threads, the suspects
# report's graph analyses computed at once (test_suspects: 24 s here),
# a dump's pass over its objects on two threads (test_hprof), its id
# index built in ranges (test_iddir), the object loop of a
# classification on several threads (test_classify_par), the dominator
# tree's passes over the objects (test_closure), and a trace's live set
# read frame by frame on the threads (test_model's
# test_threads_same_state alone: HEAPFS_TEST_ONLY).
# Longest first (seconds, one at a time): test_groupclo 51, test_suspects
# 35, test_hprof 30, test_roles 23, test_closure 20.
TSAN_TESTS := test_groupclo test_suspects test_hprof test_roles test_closure test_classify_par test_heap_par test_parallel test_iddir test_jobs test_rcache test_progress
tsan:
	$(MAKE) -j$(JOBS) BUILD=build-tsan OPT=-O1 SAN="-fsanitize=thread" $(TSAN_TESTS:%=build-tsan/tests/%) build-tsan/tests/test_model
	@TSAN_OPTIONS=halt_on_error=1 $(RUN_TESTS) $(TSAN_TESTS:%=build-tsan/tests/%) \
		"HEAPFS_TEST_ONLY=test_threads_same_state build-tsan/tests/test_model"

FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
# The fuzz targets read traces: model/ only, so that work in progress elsewhere
# (analyses/, fs/) cannot break `make fuzz-short`, and builds stay quick.
# Each source is compiled once (build-fuzz/obj/, coverage-instrumented:
# fuzzer-no-link) and linked into every target that needs it.
FUZZ_CC := clang -std=gnu11 -g -O1 -D_GNU_SOURCE -I. $(PKG_CFLAGS)
FUZZ_OBJ = $(1:%.c=build-fuzz/obj/%.o)
FUZZ_LIB_OBJ := $(call FUZZ_OBJ,$(wildcard model/*.c))
# fuzz_expr reads classifier definitions: the expression language too.
build-fuzz/fuzz_expr: $(call FUZZ_OBJ,analyses/expr.c analyses/features.c)
# fuzz_classfile and fuzz_instrument read class files: the agent's reader
# and instrumenter.
build-fuzz/fuzz_classfile build-fuzz/fuzz_instrument: $(call FUZZ_OBJ,agent/classfile.c agent/cfg.c \
	agent/paths.c agent/instrument.c agent/loops.c agent/suid.c)
# fuzz_agent_input reads the agent's option string and hsperfdata buffers.
build-fuzz/fuzz_agent_input: $(call FUZZ_OBJ,agent/agent_opts.c agent/perfdata.c)
# fuzz_agent_profile reads mode=count's profile files.
build-fuzz/fuzz_agent_profile: $(call FUZZ_OBJ,agent/profile.c)
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@
# kept between builds (make would delete them as intermediate files)
.PRECIOUS: build-fuzz/obj/%.o
-include $(wildcard build-fuzz/obj/*/*.d)
build-fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(FUZZ_LIB_OBJ)
	@mkdir -p build-fuzz
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $< $(filter %.o,$^) $(LDLIBS)
# `make fuzz`: every target of FUZZ_TARGETS (default all) for FUZZ_SECONDS
# each, one after another on one core: 600 s, the 10 minutes in which each
# should pass 10^6 executions (tests/fuzz/README.md has the figures).  Each
# prints its executions and exec/s; a crash, leak, timeout or RSS over 4 GB
# (2 GB in fuzz-short) prints the log's tail, the others still run, and make
# fails at the end.
# `make fuzz-short` (in make test): FUZZ_SHORT_SECONDS each, FUZZ_JOBS at
# a time (the machines have 2 cores), built FUZZ_JOBS at a time too: 10
# targets x 18 s / 2 = 90 s; a failing target stops the rest (xargs stops
# at a command's exit 255).  Both start from tests/fuzz/seeds/<target>/
# (which holds every crash reproducer, so a regression fails at once) and
# keep what they find in fuzz-corpus/<target>/, artifacts in fuzz-corpus/,
# never in the source tree.
FUZZ_SECONDS ?= 600
FUZZ_SHORT_SECONDS ?= 18
FUZZ_JOBS ?= 2
FUZZ_TARGETS ?= $(notdir $(FUZZ_BIN))
FUZZ_RUN = f=build-fuzz/$$n; mkdir -p fuzz-corpus/$$n; \
	$$f -max_total_time=$$secs -rss_limit_mb=$$rss -print_final_stats=1 -artifact_prefix=fuzz-corpus/$$n- \
	  fuzz-corpus/$$n tests/fuzz/seeds/$$n > fuzz-corpus/$$n.log 2>&1
FUZZ_STATS = runs=$$(sed -n "s/^stat::number_of_executed_units: *//p" fuzz-corpus/$$n.log); \
	rate=$$(sed -n "s/^stat::average_exec_per_sec: *//p" fuzz-corpus/$$n.log)
fuzz-bins: $(FUZZ_BIN)
fuzz-short:
	@$(MAKE) --no-print-directory -j$(FUZZ_JOBS) fuzz-bins
	@printf '%s\n' $(notdir $(FUZZ_BIN)) | xargs -P $(FUZZ_JOBS) -n 1 sh -c 'n=$$0; secs=$(FUZZ_SHORT_SECONDS); rss=2048; \
	  if $(FUZZ_RUN); then $(FUZZ_STATS); echo "== $$n ($$secs s): $$runs runs, $$rate exec/s"; \
	  else echo "== $$n FAILED"; tail -n 40 fuzz-corpus/$$n.log; exit 255; fi'
fuzz: $(FUZZ_TARGETS:%=build-fuzz/%)
	@failed=; for n in $(FUZZ_TARGETS); do secs=$(FUZZ_SECONDS); rss=4096; \
	  if $(FUZZ_RUN); then $(FUZZ_STATS); \
	    echo "== $$n ($$secs s): $$runs runs, $$rate exec/s$$( [ "$$rate" -ge 1667 ] || echo ' (below the 1,667 exec/s that 10^6 in 10 minutes needs)')"; \
	  else echo "== $$n FAILED"; tail -n 40 fuzz-corpus/$$n.log; failed="$$failed $$n"; fi; done; \
	  if [ -n "$$failed" ]; then echo "make fuzz: failed:$$failed (logs in fuzz-corpus/)"; exit 1; fi

# Each phase's time is printed after it (PHASE below), so that a CI log
# shows where make test's minutes go.
PHASE = s=$$(date +%s); $(MAKE) $(1); rc=$$?; echo "== make $(1): $$(( $$(date +%s) - s )) s"; [ $$rc -eq 0 ]
test: deps
	bash tests/check_deps.sh
	@$(call PHASE,-j$(JOBS) build)
	@$(call PHASE,unit)
	@$(call PHASE,integration)
	@$(call PHASE,asan)
	@$(call PHASE,tsan)
	@$(call PHASE,fuzz-short)
	@echo "make test: all suites passed"

# make bench compares heap-dump import with VisualVM's own heap library
# (tests/bench/bench_hprof.sh: the goal names VisualVM); only the benchmark
# needs the package, so it is not among the test dependencies.
# visualvm: its heap library is what make bench compares heapfs with
# (tests/bench/bench_hprof.sh, bench_vvm.sh); libh2-java: the H2 database,
# the real application whose dump bench_vvm.sh makes.
bench: DEBS += visualvm libh2-java
bench: deps
	$(MAKE) build
	bash tests/bench/bench.sh $(abspath $(BUILD)/heapfs)

# A heap dump of 10 GB written by tests/tools/gen_hprof, opened and its
# files checked and timed (tests/bench/bench_huge_dump.sh; HUGE_N smaller
# for a quick run).
bench-huge: deps
	$(MAKE) build $(BUILD)/tools/gen_hprof
	BUILD=$(BUILD) HEAPFS=$(abspath $(BUILD)/heapfs) bash tests/bench/bench_huge_dump.sh

# heapfs export read by DuckDB's engine (tests/export/check.sh: four
# traces exported, DuckDB's answers compared with heapfs's files, docs/
# export.md's queries run) and by a second reader, arrow-rs.  Both come
# from npm packages (@duckdb/node-api; parquet-wasm and apache-arrow),
# pinned in tests/export/package.json and installed into
# tests/export/node_modules (gitignored) when one is missing.  make test
# runs the same check (tests/integration/test_export_duckdb.sh) only when
# node and those packages are already there, so it never reaches the
# network.
EXPORT_NPM := @duckdb/node-api parquet-wasm apache-arrow
export-check:
	@for p in $(EXPORT_NPM); do [ -f tests/export/node_modules/$$p/package.json ] || missing=1; done; \
	if [ -n "$$missing" ]; then cd tests/export && npm install --no-audit --no-fund; fi
	$(MAKE) build $(BUILD)/tools/gen_hprof
	HEAPFS=$(abspath $(BUILD)/heapfs) bash tests/export/check.sh

# heapfs export of a 10^7-object GC: throughput and peak memory beside
# what heapfs cat needs for that GC's files (tests/bench/bench_export.sh,
# docs/bench.md).
bench-export:
	$(MAKE) build
	bash tests/bench/bench_export.sh $(abspath $(BUILD)/heapfs)

demo: deps
	$(MAKE) build
	bash examples/demo.sh $(abspath $(BUILD)/heapfs)

clean:
	rm -rf build build-asan build-fuzz

# The JVMTI agent, the example programs and their recorded traces.
-include agent/agent.mk

# What the integration suites run, built at once before them (the scripts
# would otherwise build the agent and their helpers one file at a time).
integration-bins: $(BUILD)/heapfs $(TOOLS) $(AGENT_SO) $(EXAMPLE_CLASSES) $(AGENT_COUNT) \
	$(BUILD)/tests/gen_alloc_methods

-include $(LIB_OBJ:.o=.d) $(BUILD)/obj/fs/main.d
