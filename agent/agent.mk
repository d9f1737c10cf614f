# The JVMTI agent (agent/), the example Java programs (examples/java/) and
# their recorded traces.  Included by the top-level Makefile.
#
#   make agent        build/libheapfs-agent.so
#   make examples     compile the examples, record build/examples/<name>.htr
#   make agent-test   agent unit tests + recorded-JVM integration tests
#   make bench-agent  the agent beside JFR (tests/bench/bench_agent.sh, docs/bench.md):
#                     no agent, JFR profile, mode=sample, mode=count, mode=full on the
#                     examples and real applications; do the top allocation sites
#                     agree; where mode=full's time goes.  BENCH_ONLY=costs: instead
#                     agent/bench.sh's tables (run time without agent / allocations
#                     only / graphs; mode=count (path and per-site counters) vs plain
#                     and mode=full; the instrumenter alone), count or full: a part
#                     of them; all: both

JAVAC      ?= $(shell readlink -f $$(command -v javac) 2>/dev/null)
JAVA_HOME_DIR := $(patsubst %/bin/javac,%,$(JAVAC))
JAVA       ?= $(JAVA_HOME_DIR)/bin/java
AGENT_SO   := $(BUILD)/libheapfs-agent.so
AGENT_SRC  := $(wildcard agent/*.c)
AGENT_OBJ  := $(AGENT_SRC:%.c=$(BUILD)/obj-pic/%.o) $(BUILD)/obj-pic/model/htr_writer.o $(BUILD)/obj-pic/model/buf.o
AGENT_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden -I$(JAVA_HOME_DIR)/include -I$(JAVA_HOME_DIR)/include/linux

.PHONY: agent agent-test bench-agent examples

agent: $(AGENT_SO)

$(BUILD)/obj-pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_CFLAGS) -MMD -MP -c $< -o $@

$(AGENT_SO): $(AGENT_OBJ)
	$(CC) -shared -o $@ $^ -lzstd -lpthread

-include $(AGENT_OBJ:.o=.d)

# A trace counter for the agent's integration tests (independent of fs/).
AGENT_COUNT := $(BUILD)/tests/agent_count
# Links the model objects only, so that work in progress elsewhere in the
# library does not stop the agent's tests.
AGENT_MODEL_OBJ := $(filter $(BUILD)/obj/model/%,$(LIB_OBJ))
$(AGENT_COUNT): tests/integration/agent_count.c $(AGENT_MODEL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(AGENT_MODEL_OBJ) $(LDLIBS)

# ---- the example programs ----------------------------------------------------
EXAMPLE_PKGS := multicache buggystack company churn gcstress slowleak threads
EXAMPLE_SRC  := $(foreach p,$(EXAMPLE_PKGS),$(wildcard examples/java/example/$(p)/*.java))
EXAMPLE_CLASSES := $(BUILD)/examples/classes/.stamp
EXAMPLE_JVM  := -Xmx128m -XX:+UseG1GC

.PHONY: examples-classes
examples-classes: $(EXAMPLE_CLASSES)
$(EXAMPLE_CLASSES): $(EXAMPLE_SRC)
	@mkdir -p $(dir $@)
	$(JAVAC) -d $(dir $@) $(EXAMPLE_SRC)
	@touch $@

# name | main class | arguments | agent options
EXAMPLE_RUNS := \
	multicache:example.multicache.Main:20000_8:graph=every \
	buggystack:example.buggystack.BuggyMain:20000:graph=every \
	company:example.company.Main:2000_3:graph=every \
	churn:example.churn.Server:2000000_20000:graph=4 \
	gcstress:example.gcstress.Pipeline:200000_8:graph=4 \
	slowleak:example.slowleak.Main:400000_20:graph=4

# Records every example; each program's printout lands next to its trace.
examples: $(AGENT_SO) $(EXAMPLE_CLASSES)
	@set -e; for r in $(EXAMPLE_RUNS); do \
	  name=$${r%%:*}; rest=$${r#*:}; cls=$${rest%%:*}; rest=$${rest#*:}; \
	  args=$$(echo $${rest%%:*} | tr _ ' '); opts=$${rest#*:}; \
	  echo "== recording $$name: $$cls $$args ($$opts)"; \
	  $(JAVA) $(EXAMPLE_JVM) -agentpath:$(abspath $(AGENT_SO))=out=$(BUILD)/examples/$$name.htr,$$opts \
	    -cp $(BUILD)/examples/classes $$cls $$args > $(BUILD)/examples/$$name.out; \
	  cat $(BUILD)/examples/$$name.out; \
	done

# The small MultiCache trace committed for `make demo` (needs no JVM).
.PHONY: demo-trace
demo-trace: $(AGENT_SO) $(EXAMPLE_CLASSES)
	$(JAVA) $(EXAMPLE_JVM) -agentpath:$(abspath $(AGENT_SO))=out=examples/multicache.htr,graph=every,zstd=3 \
	  -cp $(BUILD)/examples/classes example.multicache.Main 15000 8 > examples/multicache.out
	cat examples/multicache.out

# ---- tests and benchmark ------------------------------------------------------
AGENT_UNIT := $(BUILD)/tests/test_agent_opts
$(AGENT_UNIT): tests/unit/test_agent_opts.c agent/agent_opts.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ -lcmocka
# The hsperfdata reader, on buffers the test builds.
$(BUILD)/tests/test_perfdata: tests/unit/test_perfdata.c agent/perfdata.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ -lcmocka

# The set of tags mode=sample keeps of its live samples.
$(BUILD)/tests/test_tagset: tests/unit/test_tagset.c agent/tagset.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ -lcmocka

# The profile files of mode=count (agent/profile.h).
$(BUILD)/tests/test_profile: tests/unit/test_profile.c agent/profile.c model/buf.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ -lcmocka

# Class-file, CFG and path unit tests (agent code is not in libheapfs.a).
# Every class of the installed JDK is extracted once, for the round trip.
JDK_CLASSES := build/jdk-classes
$(JDK_CLASSES)/.stamp:
	rm -rf $(JDK_CLASSES) && mkdir -p $(JDK_CLASSES)
	$(JAVA_HOME_DIR)/bin/jimage extract --dir $(JDK_CLASSES) $(JAVA_HOME_DIR)/lib/modules
	@touch $@
CF_TEST_DEFS := -DJDK_CLASSES_DIR='"$(JDK_CLASSES)"' -DEXAMPLE_CLASSES_DIR='"$(BUILD)/examples/classes"'
$(BUILD)/tests/test_classfile: tests/unit/test_classfile.c agent/classfile.c model/buf.c | $(JDK_CLASSES)/.stamp $(EXAMPLE_CLASSES)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CF_TEST_DEFS) -o $@ $(filter %.c,$^) -lcmocka
$(BUILD)/tests/test_instrument: tests/unit/test_instrument.c agent/instrument.c agent/loops.c agent/suid.c agent/paths.c agent/cfg.c agent/classfile.c model/buf.c | $(JDK_CLASSES)/.stamp $(EXAMPLE_CLASSES)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CF_TEST_DEFS) -o $@ $(filter %.c,$^) -lcmocka
$(BUILD)/tests/test_suid: tests/unit/test_suid.c agent/suid.c agent/classfile.c model/buf.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) -lcmocka
$(BUILD)/tests/test_paths: tests/unit/test_paths.c agent/instrument.c agent/loops.c agent/suid.c agent/paths.c agent/cfg.c agent/classfile.c model/buf.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) -lcmocka

$(BUILD)/tests/test_loops: tests/unit/test_loops.c agent/loops.c agent/instrument.c agent/suid.c agent/paths.c agent/cfg.c agent/classfile.c model/buf.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) -lcmocka

$(BUILD)/tests/gen_alloc_methods: tests/integration/gen_alloc_methods.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $<

agent-test: $(AGENT_SO) $(AGENT_COUNT) $(AGENT_UNIT) $(BUILD)/tests/test_perfdata $(BUILD)/tests/test_tagset \
	    $(EXAMPLE_CLASSES) $(BUILD)/heapfs
	$(AGENT_UNIT)
	$(BUILD)/tests/test_perfdata
	$(BUILD)/tests/test_tagset
	@set -e; for t in tests/integration/test_agent*.sh; do echo "== $$t"; \
	  HEAPFS=$(abspath $(BUILD)/heapfs) BUILD=$(BUILD) bash $$t; done

# The instrumenter alone over class directories (agent/bench.sh).
$(BUILD)/tests/bench_instrument: tests/bench/bench_instrument.c agent/instrument.c agent/loops.c agent/suid.c agent/paths.c agent/cfg.c agent/classfile.c model/buf.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^)

# By default the side by side with the JDK's own tools (issue 31 item 4;
# about 13 minutes on 2 cores; its knobs BENCH_REPS, BENCH_PROGRAMS,
# BENCH_FULL, BENCH_FINE, BENCH_BREAKDOWN are read by the script), on the
# examples and on real applications from Debian packages (ANTLR 3 and the
# real-application suite's programs on Guava, Jackson and
# commons-collections4: in DEBS, which deps installs).  BENCH_ONLY=costs
# runs agent/bench.sh instead (what make bench-agent ran before; it takes
# longer), BENCH_ONLY=count or full the parts of it they name (as
# before), BENCH_ONLY=all both scripts.
bench-agent: deps
bench-agent: $(AGENT_SO) $(EXAMPLE_CLASSES) $(BUILD)/heapfs $(BUILD)/tests/gen_alloc_methods $(BUILD)/tests/bench_instrument
	@case "$${BENCH_ONLY:-}" in costs|count|full) ;; \
	  "") BUILD=$(BUILD) JAVA=$(JAVA) JAVAC=$(JAVAC) bash tests/bench/bench_agent.sh ;; \
	  all) BUILD=$(BUILD) JAVA=$(JAVA) JAVAC=$(JAVAC) bash tests/bench/bench_agent.sh && \
	       BUILD=$(BUILD) JAVA=$(JAVA) bash agent/bench.sh ;; \
	  *) echo "BENCH_ONLY must be costs, count, full or all" >&2; exit 2 ;; esac
	@case "$${BENCH_ONLY:-}" in costs) BUILD=$(BUILD) JAVA=$(JAVA) bash agent/bench.sh ;; \
	  count|full) BUILD=$(BUILD) JAVA=$(JAVA) BENCH_ONLY=$${BENCH_ONLY} bash agent/bench.sh ;; esac
