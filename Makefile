# Makefile - builds EventSpace into build/, runs its tests, benchmarks and demo.
#
#   make            install missing Debian packages, build everything
#   make check      ... and run every test, plain and under ASan+UBSan and TSan
#                   (SAN=1, TSAN=1 or FAST=1: just that one flavour)
#   make demo       ... and run the demonstration
#   make bench      ... and run the benchmarks (BASE=an older build dir: it against this one)
#   make fuzz       ... and run the fuzzer and the kill test longer (COUNT=N cases)
#   make layers     ... and check that every include and library points down
#   make install    ... and install it (PREFIX=/usr/local, DESTDIR)
#
# The public targets first run mk/deps.sh, then re-enter make, so that the
# pkg-config look-ups below see packages the first step installed.

# make predefines CC=cc, so ?= would never take: gcc unless the caller names another
ifeq ($(origin CC),default)
CC      := gcc
endif
OPT     ?= -O2
VERSION := 0.13.0
CFLAGS  := -std=c11 $(OPT) -g -Wall -Wextra -Wshadow -Werror -fPIC -I. -DES_VERSION='"$(VERSION)"' $(EXTRA_CFLAGS)
LDLIBS  := -luring -pthread -lrt -lm

BUILD := build/release
ifeq ($(SAN),1)
BUILD := build/san
# ES_DEBUG: the invariants the comments state, checked (BASE_INVARIANT in pastset.h)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -DES_DEBUG
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(TSAN),1)
BUILD := build/tsan
# TSan does not model atomic_thread_fence; every access the seqlock's fences
# order is itself atomic, so TSan sees no false race, only this warning.
CFLAGS += -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
LDFLAGS += -fsanitize=thread
endif

# The MPI op codes and wrappers are written from collectors/mpi/calls.def
# into $(GEN) before anything is compiled (see "generated" below).
GEN := $(BUILD)/gen
CFLAGS += -I$(GEN)

CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)

# The targets' own work runs as many jobs as the machine has cores (the
# build; the tests themselves run one after another).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SUB := $(MAKE) --no-print-directory -j$(JOBS)

# --- public targets -------------------------------------------------------

.PHONY: all check run-check-all run-bench-all demo bench bench-mbi run-bench-mbi experiments deps clean build run-check run-demo run-bench run-experiments install fuzz layers run-layers
all: deps
	@$(SUB) build

# Plain `make check` runs the suites three times: optimised, under
# ASan+UBSan, and under TSan; SAN=1, TSAN=1 or FAST=1 run one flavour.
# Both end by checking that they left no process and no segment behind
# (mk/leftovers.sh: what appeared since they began and stayed); every
# process they start carries this run's ES_LEFTOVERS, which tells it from
# another run's beside it.
LEFT = $(BUILD)/.leftovers.$@
ES_LEFTOVERS ?= $(shell od -An -N8 -tx8 /dev/urandom | tr -d ' ')
export ES_LEFTOVERS
# Both run in a /dev/shm of their own (mk/own_shm.sh), so that the check
# judges only what they made.
check: deps
	@sh mk/own_shm.sh $(SUB) run-check-all

run-check-all:
	@mkdir -p $(BUILD) && sh mk/leftovers.sh start $(LEFT) && date +%s >$(LEFT).t
	@$(SUB) run-check
ifeq ($(SAN)$(TSAN)$(FAST),)
	@echo "== again under AddressSanitizer + UndefinedBehaviorSanitizer ($$(($$(date +%s) - $$(cat $(LEFT).t))) s so far)"
	@$(SUB) run-check SAN=1
	@echo "== again under ThreadSanitizer ($$(($$(date +%s) - $$(cat $(LEFT).t))) s so far)"
	@$(SUB) run-check TSAN=1
endif
	@echo "check: $$(($$(date +%s) - $$(cat $(LEFT).t))) s" && rm -f $(LEFT).t
	@sh mk/leftovers.sh check $(LEFT)

demo: deps
	@$(SUB) run-demo

# Dependencies point down (docs/ARCHITECTURE.md): no layer includes a higher
# layer's header, no library needs a higher library's symbols.
layers: deps
	@$(SUB) run-layers

# The fuzzer longer, with a new seed each time (printed, to replay a failure
# with --seed), under ASan+UBSan; the case that failed is left in build/san/fuzz.
fuzz: deps
	@$(SUB) build SAN=1
	@mkdir -p build/san/fuzz && build/san/tests/fuzz --count $(or $(COUNT),30000) --seed 0 --out build/san/fuzz
	@build/san/tests/kill 300 0

# make bench runs tests/bench/list, every benchmark to its end; heartbeat on
# the MPI Bugs Initiative's programs (about an hour) is make bench-mbi.
BENCH_RUN ?= run-bench
bench: deps
	@sh mk/deps.sh bench
	@sh mk/own_shm.sh $(SUB) run-bench-all

bench-mbi: deps
	@sh mk/own_shm.sh $(SUB) run-bench-all BENCH_RUN=run-bench-mbi

run-bench-all:
	@mkdir -p $(BUILD) && sh mk/leftovers.sh start $(LEFT)
	@$(SUB) $(BENCH_RUN)
	@sh mk/leftovers.sh check $(LEFT)

# The paper's section 6 on this machine: results in docs/results/.
experiments: deps
	@sh mk/deps.sh bench
	@$(SUB) run-experiments

deps:
	@sh mk/deps.sh

# make install PREFIX=/opt/eventspace (default /usr/local; DESTDIR for packagers)
PREFIX ?= /usr/local
install: deps
	@$(SUB) build
	@sh mk/install.sh $(BUILD) $(PREFIX)

clean:
	rm -rf build

# --- base/ -----------------------------------------------------------------
# What every layer builds with (base/base.h): the one hash table and
# vector, the hash, the clock, checked invariants, how files are opened.

BASE_SRC := base/table.c base/vec.c base/clock.c base/files.c base/invariant.c
BASE_LIB := $(BUILD)/lib/libbase.a

# --- pastset/ --------------------------------------------------------------

PASTSET_SRC := pastset/element.c pastset/server.c pastset/wait.c pastset/wire.c \
	       pastset/tcp.c pastset/tcp_segs.c pastset/tcp_serve.c pastset/tcp_peer.c pastset/conn.c pastset/secret.c pastset/layout.c pastset/remote.c pastset/batch.c \
	       pastset/guard.c pastset/locate.c pastset/segment.c pastset/expect.c
PASTSET_LIB := $(BUILD)/lib/libpastset.a

# --- trace/ ----------------------------------------------------------------
# The trace format every writer and reader shares (trace/trace.h): above
# PastSet's helpers only, below PATHS, pathmaps and the collectors.

TRACE_SRC := trace/ops.c trace/numbers.c trace/spaces.c
TRACE_LIB := $(BUILD)/lib/libtrace.a

# --- paths/ ----------------------------------------------------------------

PATHS_SRC := paths/registry.c paths/path.c paths/tree.c
PATHS_LIB := $(BUILD)/lib/libpaths.a

# --- steering/ --------------------------------------------------------------
# Objects an application exposes, the asks monitors queue for its safe
# points, and the rule language: PastSet's elements only, beside PATHS.

STEERING_SRC := steering/records.c steering/rules.c steering/app.c steering/mirror.c
STEERING_LIB := $(BUILD)/lib/libsteering.a

# --- pathmaps/ -------------------------------------------------------------

PATHMAPS_SRC := pathmaps/model.c pathmaps/load.c pathmaps/load_nodes.c pathmaps/load_topology.c pathmaps/load_paths.c pathmaps/generate.c pathmaps/show.c pathmaps/job.c
PATHMAPS_LIB := $(BUILD)/lib/libpathmaps.a

# --- collectors/ -----------------------------------------------------------

COLLECTORS_SRC := collectors/clock.c collectors/select.c collectors/space.c collectors/collector.c collectors/launch.c
COLLECTORS_LIB := $(BUILD)/lib/libcollectors.a

# --- scopes/ -----------------------------------------------------------------

SCOPES_SRC := scopes/wrappers.c scopes/scope.c scopes/read.c scopes/mpiview.c scopes/handler.c
SCOPES_LIB := $(BUILD)/lib/libscopes.a

# --- waitstates/ -------------------------------------------------------------
# Scalasca's wait states found in the tuples, one engine for the readers of
# an archive (esprofile, esconvert) and the live monitors (esview, colopmon).

WAITSTATES_SRC := waitstates/engine.c waitstates/rows.c waitstates/p2p.c waitstates/colls.c waitstates/gats.c waitstates/causes.c
WAITSTATES_LIB := $(BUILD)/lib/libwaitstates.a

# --- waitfor/ ----------------------------------------------------------------
# The wait-for graph (heartbeat's analysis, a peer of the wait-state
# engine): who waits for whom, who can still go on, deadlocks and the roots
# of stalls named.  The monitors fill it from a running job (monitors/waits.c).

WAITFOR_SRC := waitfor/graph.c waitfor/find.c waitfor/report.c
WAITFOR_LIB := $(BUILD)/lib/libwaitfor.a

# --- windtunnel/ -------------------------------------------------------------

WINDTUNNEL_SRC := windtunnel/lga.c windtunnel/tunnel.c windtunnel/picture.c
WINDTUNNEL_LIB := $(BUILD)/lib/libwindtunnel.a

# --- archive/ ---------------------------------------------------------------

# The archive's format (write, read, repair), its clocks and call sites'
# names, and the JSON escaper: beside scopes, below the monitors.  The
# converters (otf2.c, json.c, plot.c, profile*.c, page.c) are the
# programs' parts, linked into esconvert and esprofile.
ARCHIVE_SRC := archive/files.c archive/writer.c archive/reader.c archive/repair.c archive/items.c archive/messages.c archive/sites.c archive/clocks.c archive/waitfeed.c \
	       archive/symbols.c archive/escape.c archive/colours.c
ARCHIVE_LIB := $(BUILD)/lib/libesarchive.a

# --- monitors/ ---------------------------------------------------------------
# libesmon: what the monitor programs share (monitors/monitors.h), the
# recorder among it, and each analysis more than one program uses.

MONITORS_SRC := monitors/common.c monitors/record.c monitors/beat.c monitors/colls.c monitors/colop.c monitors/control.c monitors/resolve.c monitors/waits.c monitors/waits_rules.c \
		monitors/waitlive.c monitors/objects.c monitors/handlers.c
MONITORS_LIB := $(BUILD)/lib/libesmon.a

# --- view/ -------------------------------------------------------------------
# esview: the live view's ring and answers, its watch loop over the monitor
# runtime, its door; the program above them (view/esview.c).

VIEW_SRC := view/ring.c view/json.c view/door.c view/serve.c view/watch.c view/objects.c
VIEW_LIB := $(BUILD)/lib/libesview.a

# Libraries in link order: each layer before the ones it depends on.
LIBS := $(VIEW_LIB) $(MONITORS_LIB) $(ARCHIVE_LIB) $(WAITFOR_LIB) $(WAITSTATES_LIB) $(WINDTUNNEL_LIB) $(SCOPES_LIB) $(COLLECTORS_LIB) $(PATHMAPS_LIB) $(PATHS_LIB) $(STEERING_LIB) $(TRACE_LIB) $(PASTSET_LIB) $(BASE_LIB)
EXT_LIBS = $(shell pkg-config --libs yaml-0.1 hwloc)

# --- generated ---------------------------------------------------------------
# wrapgen reads the one list of MPI calls and writes the op codes
# (es_mpi_ops.h, .c) and libescollect's C and Fortran entry points
# (wrappers.c).  Every object waits for them (order-only: -MMD then knows
# which really include them).

WRAPGEN := $(GEN)/wrapgen
GENERATED := $(GEN)/es_mpi_ops.h $(GEN)/es_mpi_ops.c $(GEN)/wrappers.c $(GEN)/route.c $(GEN)/empty.c $(GEN)/floor.c

# its objects where mk/circles.sh sees them (not the others' flags: it runs
# before anything is generated)
WRAPGEN_OBJ := $(BUILD)/obj/collectors/mpi/wrapgen.o $(BUILD)/obj/collectors/mpi/wrapgen_emit.o
$(WRAPGEN_OBJ): $(BUILD)/obj/collectors/mpi/%.o: collectors/mpi/%.c collectors/mpi/wrapgen.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Wshadow -Werror -c $< -o $@

$(WRAPGEN): $(WRAPGEN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $^ -o $@

$(GEN)/stamp: collectors/mpi/calls.def $(WRAPGEN)
	$(WRAPGEN) collectors/mpi/calls.def $(GEN)
	@touch $@

$(GENERATED): $(GEN)/stamp ;

# --- objects and libraries -------------------------------------------------

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

$(BUILD)/obj/%.o: %.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/gen/es_mpi_ops.o: $(GEN)/es_mpi_ops.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BASE_LIB): $(call obj,$(BASE_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(PASTSET_LIB): $(call obj,$(PASTSET_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(PATHS_LIB): $(call obj,$(PATHS_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(STEERING_LIB): $(call obj,$(STEERING_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(PATHMAPS_LIB): $(call obj,$(PATHMAPS_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(TRACE_LIB): $(call obj,$(TRACE_SRC)) $(BUILD)/obj/gen/es_mpi_ops.o
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(COLLECTORS_LIB): $(call obj,$(COLLECTORS_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(SCOPES_LIB): $(call obj,$(SCOPES_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(WAITSTATES_LIB): $(call obj,$(WAITSTATES_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(WAITFOR_LIB): $(call obj,$(WAITFOR_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(WINDTUNNEL_LIB): $(call obj,$(WINDTUNNEL_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(ARCHIVE_LIB): $(call obj,$(ARCHIVE_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(MONITORS_LIB): $(call obj,$(MONITORS_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

$(VIEW_LIB): $(call obj,$(VIEW_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@ # made anew: a file moved out of the layer must not stay in it
	$(AR) rcs $@ $^

# --- binaries ----------------------------------------------------------------

BINS := $(BUILD)/bin/psadm $(BUILD)/bin/psdemo $(BUILD)/bin/pathmap \
	$(BUILD)/bin/heartbeat $(BUILD)/bin/geteventmon $(BUILD)/bin/colopmon $(BUILD)/bin/esctl $(BUILD)/bin/esview \
	$(BUILD)/bin/esrecord $(BUILD)/bin/esconvert $(BUILD)/bin/esprofile $(BUILD)/bin/eshandler

$(BUILD)/bin/%: $(BUILD)/obj/pastset/%.o $(TRACE_LIB) $(PASTSET_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/bin/%: $(BUILD)/obj/pathmaps/%.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(LDLIBS)

# The process a monitor runs each handler in (scopes/hhost.c: es_hlib's
# other end): the handler's library and libc, nothing of EventSpace's.
$(BUILD)/bin/eshandler: $(BUILD)/obj/scopes/hhost.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -ldl

# A monitor may take a snapshot (mon_snapshot: the recorder in process),
# which names call sites' frames through elfutils' libdw (libdw-dev).
DW_LIBS = $(shell pkg-config --libs libdw)
$(BUILD)/bin/%: $(BUILD)/obj/monitors/%.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(DW_LIBS) $(LDLIBS)

# esview serves the live view through GNU libmicrohttpd (libmicrohttpd-dev);
# its page is plain HTML and JavaScript, embedded at build time.
MHD_LIBS = $(shell pkg-config --libs libmicrohttpd)
$(GEN)/view_page.c: view/page/index.html mk/embed.sh
	@mkdir -p $(dir $@)
	sh mk/embed.sh es_view_page $< >$@
$(BUILD)/obj/gen/view_page.o: $(GEN)/view_page.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/bin/esview: $(BUILD)/obj/view/esview.o $(BUILD)/obj/gen/view_page.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(MHD_LIBS) $(DW_LIBS) $(LDLIBS)

# The converters write OTF2 through Debian's libotf2 (libotf2-trace-dev).
OTF2_CFLAGS = $(shell pkg-config --cflags otf2)
OTF2_LIBS = $(shell pkg-config --libs otf2)

$(BUILD)/bin/esprofile: $(BUILD)/obj/archive/esprofile.o $(BUILD)/obj/archive/profile.o $(BUILD)/obj/archive/page.o $(BUILD)/obj/archive/profile_json.o $(BUILD)/obj/archive/waits.o $(BUILD)/obj/archive/waits_out.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(DW_LIBS) $(LDLIBS)

$(BUILD)/obj/archive/otf2.o $(BUILD)/obj/archive/otf2_defs.o: $(BUILD)/obj/archive/%.o: archive/%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(OTF2_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/bin/esconvert: $(BUILD)/obj/archive/esconvert.o $(BUILD)/obj/archive/otf2.o $(BUILD)/obj/archive/otf2_defs.o $(BUILD)/obj/archive/json.o \
			$(BUILD)/obj/archive/plot.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(OTF2_LIBS) $(EXT_LIBS) $(LDLIBS)

$(BUILD)/bench/archive: $(BUILD)/obj/tests/bench/archive.o $(BUILD)/obj/archive/otf2.o $(BUILD)/obj/archive/otf2_defs.o $(BUILD)/obj/archive/json.o \
		       $(BUILD)/obj/archive/profile.o $(BUILD)/obj/archive/page.o $(BUILD)/obj/archive/profile_json.o $(BUILD)/obj/archive/waits.o $(BUILD)/obj/archive/waits_out.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(OTF2_LIBS) $(EXT_LIBS) $(LDLIBS)

$(BUILD)/bench/waits: $(BUILD)/obj/tests/bench/waits.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(DW_LIBS) $(LDLIBS)

$(BUILD)/bench/waitfor: $(BUILD)/obj/tests/bench/waitfor.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(LDLIBS)

# --- tests -------------------------------------------------------------------

UNIT_SRC := tests/unit/check_main.c tests/unit/test_base.c tests/unit/test_pastset.c \
	    tests/unit/test_pastset_shm.c tests/unit/test_pastset_stress.c \
	    tests/unit/test_paths.c tests/unit/test_paths_tree.c \
	    tests/unit/test_pathmaps.c tests/unit/test_collectors.c tests/unit/test_scopes.c \
	    tests/unit/test_windtunnel.c tests/unit/test_wire.c \
	    tests/unit/test_tcp_server.c tests/unit/test_remote.c tests/unit/tcp_fixture.c \
	    tests/unit/test_archive.c tests/unit/test_waitfor.c tests/unit/test_waits.c tests/unit/test_waitstates.c tests/unit/test_view.c tests/unit/test_view_door.c tests/unit/test_monitors.c tests/unit/test_steering.c tests/unit/test_handlers.c \
	    tests/unit/test_bench.c
UNIT_BIN := $(BUILD)/tests/unit

# the converters too (OTF2, JSON, the profile) and heartbeat's judgement, so
# that they run under the sanitizers
CONVERTERS := $(BUILD)/obj/archive/otf2.o $(BUILD)/obj/archive/otf2_defs.o $(BUILD)/obj/archive/json.o $(BUILD)/obj/archive/profile.o $(BUILD)/obj/archive/page.o $(BUILD)/obj/archive/profile_json.o $(BUILD)/obj/archive/waits.o $(BUILD)/obj/archive/waits_out.o \
	      $(BUILD)/obj/archive/plot.o

$(UNIT_BIN): $(call obj,$(UNIT_SRC)) $(CONVERTERS) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(CHECK_LIBS) $(OTF2_LIBS) $(DW_LIBS) $(EXT_LIBS) $(MHD_LIBS) $(LDLIBS)

# What EventSpace must survive (tests/fuzz): mutated pathmaps, hostile wire
# frames, damaged segments, archives recorded from real jobs (tests/fuzz/seeds)
# mutated and read by every reader; and SIGKILL at random points.  make check
# runs a bounded, seeded count (the fuzzer under ASan+UBSan; the archives at
# most 120 s); make fuzz runs longer.
FUZZ := $(BUILD)/tests/fuzz $(BUILD)/tests/kill
$(BUILD)/tests/fuzz: $(BUILD)/obj/tests/fuzz/fuzz.o $(BUILD)/obj/tests/fuzz/archive.o $(CONVERTERS) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(OTF2_LIBS) $(DW_LIBS) $(EXT_LIBS) $(LDLIBS)
$(BUILD)/tests/kill: $(BUILD)/obj/tests/fuzz/kill.o $(PASTSET_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# the benchmarks' programs (tests/bench/list says which are benchmarks)
BENCH_BINS := $(BUILD)/bench/pastset $(BUILD)/bench/paths $(BUILD)/bench/scopes $(BUILD)/bench/remote \
	      $(BUILD)/bench/waitfor $(BUILD)/bench/backlog
OBSERVE := $(BUILD)/bench/observe $(BUILD)/bench/nested $(BUILD)/bench/interval

$(BUILD)/bench/%: $(BUILD)/obj/tests/bench/%.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(LDLIBS)

# --- MPI: libescollect.so and the programs that test it ----------------------
# Only in the plain build: a preloaded library and sanitizer runtimes do not
# mix, and mpirun's own processes are not ours to instrument.

MPICC ?= mpicc
ESCOLLECT := $(BUILD)/lib/libescollect.so
MPI_TESTS := $(BUILD)/tests/mpi_calls $(BUILD)/tests/mpi_check $(BUILD)/tests/mpi_late \
	     $(BUILD)/tests/mpi_split $(BUILD)/tests/mpi_every $(BUILD)/tests/mpi_expect \
	     $(BUILD)/tests/mpi_wait $(BUILD)/tests/mpi_msgs $(BUILD)/tests/mpi_sites $(BUILD)/tests/mpi_io $(BUILD)/tests/mpi_io_f $(BUILD)/tests/mpi_hdf5 $(BUILD)/tests/mpi_phases \
	     $(BUILD)/tests/mpi_phases_f $(BUILD)/tests/ring_demo $(BUILD)/tests/mpi_crash $(BUILD)/tests/mpi_poll \
	     $(BUILD)/tests/mpi_complete $(BUILD)/tests/mpi_sites_cxx $(BUILD)/tests/mpi_sites_dyn $(BUILD)/tests/mpi_toggle \
	     $(BUILD)/tests/mpi_clocks $(BUILD)/tests/mpi_waits $(BUILD)/tests/mpi_waits_f $(BUILD)/tests/mpi_objects \
	     $(BUILD)/tests/mpi_objects_f $(BUILD)/tests/mpi_badargs $(BUILD)/tests/mpi_module_f

ESCOLLECT_SRC := collectors/mpi/escollect.c collectors/mpi/core.c collectors/mpi/comms.c collectors/mpi/requests.c \
		 collectors/mpi/fortran.c collectors/mpi/sites.c collectors/mpi/phases.c \
		 collectors/mpi/io.c collectors/mpi/ending.c collectors/mpi/control.c \
		 collectors/mpi/clocks.c collectors/mpi/names.c collectors/mpi/reqindex.c collectors/mpi/objects.c

$(BUILD)/obj/collectors/mpi/%.o: collectors/mpi/%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/gen/wrappers.o: $(GEN)/wrappers.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/gen/route.o: $(GEN)/route.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -MMD -MP -c $< -o $@

$(ESCOLLECT): $(call obj,$(ESCOLLECT_SRC)) $(BUILD)/obj/gen/wrappers.o $(BUILD)/obj/gen/route.o $(LIBS)
	@mkdir -p $(dir $@)
	$(MPICC) -shared -Wl,-z,defs $^ -o $@ $(EXT_LIBS) $(LDLIBS) -ldl

# What a program links to name its phases (es_region.h): calls that do
# nothing, which libescollect.so, preloaded, takes instead.
ESREGION := $(BUILD)/lib/libesregion.so
$(ESREGION): collectors/mpi/region_stub.c collectors/mpi/es_region.h collectors/mpi/es_object.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared $< -o $@

$(BUILD)/tests/ring_demo: collectors/mpi/ring_demo.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) $< -o $@

$(BUILD)/obj/tests/integration/mpi_%.o: tests/integration/mpi_%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/mpi_calls $(BUILD)/tests/mpi_late $(BUILD)/tests/mpi_split $(BUILD)/tests/mpi_every \
$(BUILD)/tests/mpi_wait $(BUILD)/tests/mpi_msgs $(BUILD)/tests/mpi_sites $(BUILD)/tests/mpi_io $(BUILD)/tests/mpi_crash \
$(BUILD)/tests/mpi_poll $(BUILD)/tests/mpi_complete $(BUILD)/tests/mpi_toggle $(BUILD)/tests/mpi_clocks \
$(BUILD)/tests/mpi_badargs: $(BUILD)/tests/mpi_%: $(BUILD)/obj/tests/integration/mpi_%.o
	$(MPICC) $^ -o $@ $(LDLIBS)

# mpi_sites exporting its functions (-rdynamic): stripped, they still name its sites
$(BUILD)/tests/mpi_sites_dyn: $(BUILD)/obj/tests/integration/mpi_sites.o
	$(MPICC) -rdynamic $^ -o $@ $(LDLIBS)

# C++: a call site inside a template method, named as written (symbols.c)
MPICXX ?= mpicxx
$(BUILD)/tests/mpi_sites_cxx: tests/integration/mpi_sites_cxx.cc
	@mkdir -p $(dir $@)
	$(MPICXX) -O2 -g -Wall -Wextra -Werror -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX $< -o $@

# A program that writes through parallel HDF5 (Debian's libhdf5-openmpi-dev).
HDF5_CFLAGS = $(shell pkg-config --cflags hdf5-openmpi)
HDF5_LIBS = $(shell pkg-config --libs hdf5-openmpi)
$(BUILD)/tests/mpi_hdf5: tests/integration/mpi_hdf5.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) $(HDF5_CFLAGS) $< -o $@ $(HDF5_LIBS) $(LDLIBS)

$(BUILD)/tests/mpi_io_f: tests/integration/mpi_io_f.F90
	@mkdir -p $(dir $@) $(BUILD)/obj/io_f
	$(MPIFC) -O1 -g -Wall -Werror -J $(BUILD)/obj/io_f $< -o $@

$(BUILD)/tests/mpi_module_f: tests/integration/mpi_module_f.F90
	@mkdir -p $(dir $@) $(BUILD)/obj/module_f
	$(MPIFC) -O0 -g -Wall -Werror -J $(BUILD)/obj/module_f $< -o $@

# Programs that name phases link the library that does nothing (es_region.h).
$(BUILD)/tests/mpi_phases: $(BUILD)/obj/tests/integration/mpi_phases.o $(ESREGION)
	$(MPICC) $< -o $@ -L$(BUILD)/lib -lesregion -Wl,-rpath,$(abspath $(BUILD)/lib) $(LDLIBS)
$(BUILD)/tests/mpi_phases_f: tests/integration/mpi_phases_f.F90 $(ESREGION)
	@mkdir -p $(dir $@) $(BUILD)/obj/phases_f
	$(MPIFC) -O1 -g -Wall -Werror -J $(BUILD)/obj/phases_f $< -o $@ -L$(BUILD)/lib -lesregion \
		-Wl,-rpath,$(abspath $(BUILD)/lib)

$(BUILD)/tests/mpi_waits: $(BUILD)/obj/tests/integration/mpi_waits.o $(ESREGION)
	$(MPICC) $< -o $@ -L$(BUILD)/lib -lesregion -Wl,-rpath,$(abspath $(BUILD)/lib) $(LDLIBS)
$(BUILD)/tests/mpi_waits_f: tests/integration/mpi_waits_f.F90 $(ESREGION)
	@mkdir -p $(dir $@) $(BUILD)/obj/waits_f
	$(MPIFC) -O1 -g -Wall -Werror -J $(BUILD)/obj/waits_f $< -o $@ -L$(BUILD)/lib -lesregion \
		-Wl,-rpath,$(abspath $(BUILD)/lib)

# Programs with objects (es_object.h) link the same library
$(BUILD)/tests/mpi_objects: $(BUILD)/obj/tests/integration/mpi_objects.o $(ESREGION)
	$(MPICC) $< -o $@ -L$(BUILD)/lib -lesregion -Wl,-rpath,$(abspath $(BUILD)/lib) $(LDLIBS)
$(BUILD)/tests/mpi_objects_f: tests/integration/mpi_objects_f.F90 $(ESREGION)
	@mkdir -p $(dir $@) $(BUILD)/obj/objects_f
	$(MPIFC) -O1 -g -Wall -Werror -J $(BUILD)/obj/objects_f $< -o $@ -L$(BUILD)/lib -lesregion \
		-Wl,-rpath,$(abspath $(BUILD)/lib)

# Handlers (handlers/es_handler.h): the two examples, and the tests' own
HANDLERS := $(BUILD)/lib/handlers/count.so $(BUILD)/lib/handlers/msgsize.so $(BUILD)/tests/handler_test.so
$(BUILD)/lib/handlers/%.so: handlers/%.c handlers/es_handler.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared $< -o $@
$(BUILD)/tests/handler_test.so: tests/integration/handler_test.c handlers/es_handler.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared $< -o $@

# Readers of what the MPI programs left: plain C, no MPI.
$(BUILD)/tests/mpi_check $(BUILD)/tests/mpi_expect: $(BUILD)/tests/mpi_%: $(BUILD)/obj/tests/integration/mpi_%.o $(LIBS)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(LDLIBS)

# Test scaffolding: puts each MPI rank in a network namespace of its own (t_remote.sh).
$(BUILD)/lib/libnetns_shim.so: tests/integration/netns_shim.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -shared $< -o $@

$(BUILD)/obj/windtunnel/main.o: windtunnel/main.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/bin/windtunnel: $(BUILD)/obj/windtunnel/main.o $(LIBS)
	@mkdir -p $(dir $@)
	$(MPICC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(LDLIBS)

# esrun needs no MPI to build: it sets the preload and runs the program.
$(BUILD)/bin/esrun: $(BUILD)/obj/collectors/mpi/esrun.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(LDLIBS)

$(BUILD)/obj/collectors/mpi/esrun.o: collectors/mpi/esrun.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The Fortran test, one source built against mpif.h, use mpi and use mpi_f08.
MPIFC ?= mpif90
FORTRAN_TESTS := $(BUILD)/tests/mpi_fortran77 $(BUILD)/tests/mpi_fortran90 $(BUILD)/tests/mpi_fortran08

$(BUILD)/tests/mpi_fortran%: tests/integration/mpi_fortran.F90
	@mkdir -p $(dir $@) $(BUILD)/obj/fortran$*
	$(MPIFC) -cpp -DBINDING=$(patsubst 0%,%,$*) -O1 -g -Wall -Werror -J $(BUILD)/obj/fortran$* $< -o $@

# libescollect.so with its invariants checked (-DES_DEBUG: the request
# board's, BASE_INVARIANT), which the sanitizer flavour cannot preload:
# t_messages runs its every-way-a-request-completes program under it.
ESCOLLECT_DEBUG := $(BUILD)/lib/debug/libescollect.so
$(ESCOLLECT_DEBUG): $(ESCOLLECT_SRC) $(GEN)/wrappers.c collectors/mpi/record.h collectors/mpi/requests.h collectors/mpi/wrap.h collectors/mpi/reqindex.h collectors/collectors.h pastset/pastset.h $(LIBS) | $(GEN)/stamp
	@mkdir -p $(BUILD)/obj/debug
	for f in $(ESCOLLECT_SRC) $(GEN)/wrappers.c $(GEN)/route.c; do \
		$(MPICC) $(CFLAGS) -DES_DEBUG -c $$f -o $(BUILD)/obj/debug/$$(basename $$f .c).o || exit 1; done
	@mkdir -p $(dir $@)
	$(MPICC) -shared -Wl,-z,defs $(addprefix $(BUILD)/obj/debug/,$(notdir $(ESCOLLECT_SRC:.c=.o)) wrappers.o route.o) $(LIBS) \
		-o $@ $(EXT_LIBS) $(LDLIBS) -ldl

# MPICH beside Open MPI (issue 40): the same collector, from the same
# sources and the same generated wrappers, built by MPICH's compiler
# wrapper (Debian's mpicc stays Open MPI's: its alternative's priority is
# higher), named for the MPI it serves; libescollect-openmpi.so names the other.
MPICC_MPICH ?= mpicc.mpich
MPICXX_MPICH ?= mpicxx.mpich
MPIFC_MPICH ?= mpif90.mpich
MPICH_OBJ := $(BUILD)/obj/mpich
ESCOLLECT_MPICH := $(BUILD)/lib/libescollect-mpich.so
$(MPICH_OBJ)/%.o: collectors/mpi/%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(CFLAGS) -MMD -MP -c $< -o $@
$(MPICH_OBJ)/gen_%.o: $(GEN)/%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(CFLAGS) -MMD -MP -c $< -o $@
$(ESCOLLECT_MPICH): $(addprefix $(MPICH_OBJ)/,$(notdir $(ESCOLLECT_SRC:.c=.o))) $(MPICH_OBJ)/gen_wrappers.o \
		    $(MPICH_OBJ)/gen_route.o $(LIBS)
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) -shared -Wl,-z,defs $^ -o $@ $(EXT_LIBS) $(LDLIBS) -ldl
$(BUILD)/lib/libescollect-openmpi.so: $(ESCOLLECT)
	ln -sf libescollect.so $@

# The build as an MPICH user has it, for the integration tests' MPICH run
# (tests/integration/run.sh): $(MV) is laid out as $(BUILD) is, its bin/
# the same programs (windtunnel built for MPICH), its lib/libescollect.so
# MPICH's, its tests/ the MPI test programs built by MPICH's wrappers from
# the same sources (mpi_hdf5 not: Debian's parallel HDF5 here is Open MPI's).
MV := $(BUILD)/mpich
# MPICH's MPI_STATUS(ES)_IGNORE is (MPI_Status *)1, which gcc takes for a
# 0-byte region passed where statuses are written
MV_CFLAGS = $(CFLAGS) -Wno-stringop-overflow
MV_C := mpi_calls mpi_late mpi_split mpi_every mpi_wait mpi_msgs mpi_sites mpi_io mpi_crash mpi_poll \
	mpi_complete mpi_toggle mpi_clocks mpi_badargs
MV_TESTS := $(addprefix $(MV)/tests/,$(MV_C) mpi_sites_dyn mpi_sites_cxx mpi_phases mpi_phases_f mpi_waits mpi_waits_f mpi_io_f \
	    mpi_objects mpi_objects_f mpi_module_f \
	    mpi_fortran77 mpi_fortran90 mpi_fortran08 ring_demo)
$(addprefix $(MV)/tests/,$(MV_C)): $(MV)/tests/%: tests/integration/%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(MV_CFLAGS) $< -o $@ $(LDLIBS)
$(MV)/tests/mpi_sites_dyn: tests/integration/mpi_sites.c
	$(MPICC_MPICH) $(MV_CFLAGS) -rdynamic $< -o $@ $(LDLIBS)
$(MV)/tests/mpi_sites_cxx: tests/integration/mpi_sites_cxx.cc
	@mkdir -p $(dir $@)
	$(MPICXX_MPICH) -O2 -g -Wall -Wextra -Werror -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX $< -o $@
$(MV)/tests/mpi_phases: tests/integration/mpi_phases.c $(ESREGION) | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(MV_CFLAGS) $< -o $@ -L$(BUILD)/lib -lesregion -Wl,-rpath,$(abspath $(BUILD)/lib) $(LDLIBS)
$(MV)/tests/mpi_waits: tests/integration/mpi_waits.c $(ESREGION) | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(MV_CFLAGS) $< -o $@ -L$(BUILD)/lib -lesregion -Wl,-rpath,$(abspath $(BUILD)/lib) $(LDLIBS)
$(MV)/tests/mpi_objects: tests/integration/mpi_objects.c $(ESREGION) | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(MV_CFLAGS) $< -o $@ -L$(BUILD)/lib -lesregion -Wl,-rpath,$(abspath $(BUILD)/lib) $(LDLIBS)
$(MV)/tests/mpi_objects_f: tests/integration/mpi_objects_f.F90 $(ESREGION)
	@mkdir -p $(dir $@) $(MPICH_OBJ)/objects_f
	$(MPIFC_MPICH) -O1 -g -Wall -Werror -J $(MPICH_OBJ)/objects_f $< -o $@ -L$(BUILD)/lib -lesregion \
		-Wl,-rpath,$(abspath $(BUILD)/lib)
$(MV)/tests/mpi_waits_f: tests/integration/mpi_waits_f.F90 $(ESREGION)
	@mkdir -p $(dir $@) $(MPICH_OBJ)/waits_f
	$(MPIFC_MPICH) -O1 -g -Wall -Werror -J $(MPICH_OBJ)/waits_f $< -o $@ -L$(BUILD)/lib -lesregion \
		-Wl,-rpath,$(abspath $(BUILD)/lib)
$(MV)/tests/mpi_phases_f: tests/integration/mpi_phases_f.F90 $(ESREGION)
	@mkdir -p $(dir $@) $(MPICH_OBJ)/phases_f
	$(MPIFC_MPICH) -O1 -g -Wall -Werror -J $(MPICH_OBJ)/phases_f $< -o $@ -L$(BUILD)/lib -lesregion \
		-Wl,-rpath,$(abspath $(BUILD)/lib)
$(MV)/tests/mpi_io_f: tests/integration/mpi_io_f.F90
	@mkdir -p $(dir $@) $(MPICH_OBJ)/io_f
	$(MPIFC_MPICH) -O1 -g -Wall -Werror -J $(MPICH_OBJ)/io_f $< -o $@
$(MV)/tests/mpi_module_f: tests/integration/mpi_module_f.F90
	@mkdir -p $(dir $@) $(MPICH_OBJ)/module_f
	$(MPIFC_MPICH) -O0 -g -Wall -Werror -J $(MPICH_OBJ)/module_f $< -o $@
$(MV)/tests/mpi_fortran%: tests/integration/mpi_fortran.F90
	@mkdir -p $(dir $@) $(MPICH_OBJ)/fortran$*
	$(MPIFC_MPICH) -cpp -DBINDING=$(patsubst 0%,%,$*) -O1 -g -Wall -Werror -J $(MPICH_OBJ)/fortran$* $< -o $@
$(MV)/tests/ring_demo: collectors/mpi/ring_demo.c
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(MV_CFLAGS) $< -o $@
$(MV)/bin/windtunnel: windtunnel/main.c $(LIBS) | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(MV_CFLAGS) $(LDFLAGS) $< $(LIBS) -o $@ $(EXT_LIBS) $(LDLIBS)
# the debug collector (invariants checked) for MPICH, as $(ESCOLLECT_DEBUG)
$(MV)/lib/debug/libescollect.so: $(ESCOLLECT_SRC) $(GEN)/wrappers.c collectors/mpi/record.h collectors/mpi/requests.h collectors/mpi/wrap.h collectors/mpi/reqindex.h collectors/collectors.h pastset/pastset.h $(LIBS) | $(GEN)/stamp
	@mkdir -p $(MPICH_OBJ)/debug $(dir $@)
	for f in $(ESCOLLECT_SRC) $(GEN)/wrappers.c $(GEN)/route.c; do \
		$(MPICC_MPICH) $(CFLAGS) -DES_DEBUG -c $$f -o $(MPICH_OBJ)/debug/$$(basename $$f .c).o || exit 1; done
	$(MPICC_MPICH) -shared -Wl,-z,defs $(addprefix $(MPICH_OBJ)/debug/,$(notdir $(ESCOLLECT_SRC:.c=.o)) wrappers.o route.o) \
		$(LIBS) -o $@ $(EXT_LIBS) $(LDLIBS) -ldl
# the rest of the view: links to what no MPI is built into
$(MV)/stamp: $(ESCOLLECT_MPICH) $(BINS) $(ESREGION) $(BUILD)/lib/libnetns_shim.so $(APPS) $(BUILD)/tests/mpi_check \
	     $(BUILD)/tests/mpi_expect $(BUILD)/bin/esrun
	@mkdir -p $(MV)/bin $(MV)/lib $(MV)/tests
	for f in $(BUILD)/bin/*; do [ "$$(basename $$f)" = windtunnel ] || ln -sfn ../../bin/$$(basename $$f) $(MV)/bin/; done
	ln -sfn ../../lib/libescollect-mpich.so $(MV)/lib/libescollect.so
	for f in libescollect-mpich.so libescollect-openmpi.so libesregion.so libnetns_shim.so; do \
		ln -sfn ../../lib/$$f $(MV)/lib/$$f; done
	for f in $(APPS) $(BUILD)/tests/mpi_check $(BUILD)/tests/mpi_expect; do ln -sfn ../../tests/$$(basename $$f) $(MV)/tests/; done
	ln -sfn ../gen $(MV)/gen
	touch $@
MPICH_PARTS := $(ESCOLLECT_MPICH) $(BUILD)/lib/libescollect-openmpi.so $(MV_TESTS) $(MV)/bin/windtunnel \
	       $(MV)/lib/debug/libescollect.so $(MV)/stamp

ifeq ($(SAN)$(TSAN),)
MPI_PARTS := $(ESCOLLECT) $(ESCOLLECT_DEBUG) $(ESREGION) $(BUILD)/bin/esrun $(MPI_TESTS) $(FORTRAN_TESTS) $(BUILD)/bin/windtunnel \
	     $(BUILD)/lib/libnetns_shim.so $(MPICH_PARTS)
endif

APPS := $(BUILD)/tests/app_stall $(BUILD)/tests/app_tree $(BUILD)/tests/app_died $(BUILD)/tests/ctl_forge

$(BUILD)/tests/%: $(BUILD)/obj/tests/integration/%.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(LDLIBS)

build: $(LIBS) $(BINS) $(UNIT_BIN) $(BENCH_BINS) $(OBSERVE) $(MPI_PARTS) $(APPS) $(FUZZ) $(HANDLERS)

# Sanitizer builds run slower: give Check's per-test timeouts room.
# Integration tests start processes that share memory but no threads, which
# TSan cannot see across; they run in the other two flavours.
run-layers: build
	@sh mk/layers.sh . $(BUILD)/lib
	@sh mk/circles.sh $(BUILD)/obj .

run-check: build run-layers
	@CK_TIMEOUT_MULTIPLIER=$(if $(SAN)$(TSAN),10,1) TSAN_OPTIONS="halt_on_error=1 allocator_may_return_null=1" \
	  ASAN_OPTIONS=allocator_may_return_null=1 sh mk/unit.sh $(UNIT_BIN) $(JOBS)
ifneq ($(TSAN),1)
	@sh tests/integration/run.sh $(BUILD)
endif
ifeq ($(SAN),1)
	@mkdir -p $(BUILD)/fuzz && $(BUILD)/tests/fuzz --count $(FUZZ_COUNT) --seed 1 --seconds 120 --out $(BUILD)/fuzz
	@$(BUILD)/tests/kill 100 1
endif

FUZZ_COUNT ?= 1000

run-demo: build
	@sh mk/demo.sh $(BUILD)

# The collector benchmark compares with LTTng-UST, which only it needs.
LTTNG_CFLAGS = $(shell pkg-config --cflags lttng-ust)
LTTNG_LIBS = $(shell pkg-config --libs lttng-ust)

$(BUILD)/obj/tests/bench/collector.o $(BUILD)/obj/tests/bench/es_tp.o: $(BUILD)/obj/tests/bench/%.o: tests/bench/%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LTTNG_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/bench/collector: $(BUILD)/obj/tests/bench/collector.o $(BUILD)/obj/tests/bench/es_tp.o $(LIBS)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(LTTNG_LIBS) $(LDLIBS)

$(BUILD)/obj/tests/bench/mpi_cost.o: tests/bench/mpi_cost.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/bench/mpi_cost: $(BUILD)/obj/tests/bench/mpi_cost.o
	$(MPICC) $^ -o $@

# libescollect.so without live control's check, for tests/bench/control.sh's
# side-by-side cost of that check: every object built again with ES_NO_CONTROL
NOCTL := $(BUILD)/bench/noctl
# ... and without its clock reads (each stamp a per-thread count): mpi.sh
# says how much of each call's cost the clock reads are
NOCLOCK := $(BUILD)/bench/noclock
# ... and following no request (each made, none looked for by its wait):
# mpi.sh says how much of a halo exchange's cost following its requests is
NOREQ := $(BUILD)/bench/noreq
$(NOCTL)/libescollect.so: VARIANT := -DES_NO_CONTROL
$(NOCLOCK)/libescollect.so: VARIANT := -DES_BENCH_NOCLOCK
$(NOREQ)/libescollect.so: VARIANT := -DES_BENCH_NOREQ
$(NOCTL)/libescollect.so $(NOCLOCK)/libescollect.so $(NOREQ)/libescollect.so: $(ESCOLLECT_SRC) $(GEN)/wrappers.c collectors/mpi/record.h collectors/mpi/requests.h collectors/mpi/wrap.h collectors/mpi/reqindex.h collectors/collectors.h $(LIBS) | $(GEN)/stamp
	@mkdir -p $(dir $@)
	for f in $(ESCOLLECT_SRC) $(GEN)/wrappers.c $(GEN)/route.c; do \
		$(MPICC) $(CFLAGS) $(VARIANT) -c $$f -o $(dir $@)$$(basename $$f .c).o || exit 1; done
	$(MPICC) -shared -Wl,-z,defs $(dir $@)*.o $(LIBS) -o $@ $(EXT_LIBS) $(LDLIBS) -ldl

# An empty PMPI interposer (wrapgen's empty.c), the floor tests/bench/mpi.sh
# measures libescollect against; built with libescollect's flags.
EMPTY := $(BUILD)/bench/empty/libesempty.so
$(EMPTY): $(GEN)/empty.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -shared -Wl,-z,defs $< -o $@
# ... and the floor of one that sees each poll's outcome (wrapgen's floor.c)
FLOOR := $(BUILD)/bench/floor/libesfloor.so
$(FLOOR): $(GEN)/floor.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -shared -Wl,-z,defs $< -o $@

# hpcc's and LAMMPS's communication (tests/bench/ra.c, halo.c) and the
# per-call costs, for each MPI: MPICH's builds beside the others in $(MV)
$(BUILD)/bench/ra $(BUILD)/bench/halo: $(BUILD)/bench/%: tests/bench/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) $< -o $@
$(MV)/bench/ra $(MV)/bench/halo $(MV)/bench/mpi_cost: $(MV)/bench/%: tests/bench/%.c | $(GEN)/stamp
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(MV_CFLAGS) $< -o $@
$(MV)/bench/empty/libesempty.so: $(GEN)/empty.c
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(CFLAGS) -shared -Wl,-z,defs $< -o $@
MPI_BENCH := $(BUILD)/bench/ra $(BUILD)/bench/halo $(MV)/bench/ra $(MV)/bench/halo $(MV)/bench/mpi_cost \
	     $(MV)/bench/empty/libesempty.so

run-experiments: build $(BUILD)/bench/collector $(BUILD)/bench/mpi_cost
	@sh tests/bench/experiments.sh $(BUILD)

run-bench: build $(BUILD)/bench/collector $(BUILD)/bench/mpi_cost $(BUILD)/bench/archive $(BUILD)/bench/listed $(BUILD)/bench/waits $(BUILD)/bench/steer $(NOCTL)/libescollect.so $(EMPTY) \
	   $(NOCLOCK)/libescollect.so $(NOREQ)/libescollect.so $(FLOOR) \
	   $(MPI_BENCH)
	@sh tests/bench/run.sh $(BUILD)
	@if [ -n "$(BASE)" ]; then sh tests/bench/versus.sh $(BASE) $(BUILD); fi

run-bench-mbi: build
	@if [ -f ../shared/mbi/labels.txt ]; then sh tests/bench/mbi.sh $(BUILD) && sh tests/bench/mbi.sh --mpi mpich $(BUILD) && \
		sh tests/bench/mbi_diff.sh $(BUILD); else echo "mbi: ../shared/mbi not here: skipped"; fi

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
.SECONDARY:
