# wheelbeat: the developer's and CI's entry point. On a fresh Debian 12 machine:
#
#   make demo    install missing packages, build, run the cluster demo (samples/demo/);
#                REGISTRY=redis runs it against a local redis-server instead of the embedded registry,
#                REGISTRY=zookeeper against a standalone ZooKeeper (started and removed by the demo)
#   make test    build and run every test in three configurations, then fuzz the codec (below)
#   make fuzz    only the fuzz stage: the frame decoder under libFuzzer for FUZZ_SECONDS, stats
#
# Other targets: deps, build, bench [ARGS=...], soak [SOAK_MINUTES=60], test-rel, test-asan,
# test-tsan, test-fuzz, format, format-check, tidy, docs (the API reference), clean, help.
#
# Build trees: build/ (Release, -O3, every program in build/bin/, tests in build/tests/bin/), build-asan/ (ASan+UBSan),
# build-tsan/ (TSan), build-fuzz/ (clang, tests/fuzz/ only: one ctest test, the bounded fuzz run).
# Knobs: JOBS, GENERATOR, TEST_TIMEOUT, CTEST_JOBS, SAN_BUILD_TYPE, ARGS, FUZZ_SECONDS.

SHELL := /bin/bash
.DEFAULT_GOAL := build
# The build tools parallelise inside each step; two configurations building at once on two cores
# would only fight over them.
.NOTPARALLEL:

DEB_PACKAGES := cmake g++ pkg-config libuv1-dev nlohmann-json3-dev doctest-dev libfmt-dev
# Ninja: the build trees' generator (better scheduling on two cores than Make, and the trees and
# the tests' own builds agree).
DEB_PACKAGES += ninja-build
# The metrics endpoint (net/): requests parsed by http-parser (nodejs/http-parser 2.9).
DEB_PACKAGES += libhttp-parser-dev
# make format-check (run by .ci/run) and make format.
DEB_PACKAGES += clang-format
# Every program's command line (samples, wheelbeat-config, benchmarks, soak): CLI11, header-only
# (config/cli/command_line.h); the libraries do not use it.
DEB_PACKAGES += libcli11-dev
# The fuzz stage: clang, and libFuzzer's runtime, which clang only recommends (so
# --no-install-recommends leaves it out): libclang-rt-dev pulls the one matching Debian's clang.
DEB_PACKAGES += clang libclang-rt-dev
# The Redis registry: hiredis (with its libuv adapter) and a redis-server the tests start on a
# loopback port of their own.
DEB_PACKAGES += libhiredis-dev redis-server
# The ZooKeeper registry: the single-threaded C client (libzookeeper_st, driven by the event loop),
# and a standalone ZooKeeper server (java + Debian's jars) the tests start on a loopback port.
DEB_PACKAGES += libzookeeper-st-dev zookeeper default-jre-headless
# The chaos suite (tests/chaos/, release tree, as root): network namespaces and veth pairs (`ip`,
# `ss`) and nftables rules (`nft`) as faults; without them its tests report themselves skipped.
DEB_PACKAGES += iproute2 nftables
# make bench's report: jq reads its JSON lines, gnuplot draws the charts (tests/bench/report.sh).
DEB_PACKAGES += jq gnuplot-nox
# make docs: the API reference from the public headers (docs/Doxyfile; no graphs, so no graphviz).
DEB_PACKAGES += doxygen
# make bench: Netty baseline (tests/bench/netty/: Netty 4.1.48's HashedWheelTimer, built with javac).
DEB_PACKAGES += libnetty-java default-jdk-headless
# make bench: gRPC C++ baseline of the cluster scenarios T0 / T1 (tests/bench/grpc/: gRPC 1.51,
# its protoc plugin; libgrpc++-dev does not pull protobuf's headers and library).
DEB_PACKAGES += libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
# The Hessian 2.0 tests' Java oracle (tests/hessian/java/): Java's Hessian 4.0 (hessian.jar) on the
# same values; without it that test reports itself skipped.
DEB_PACKAGES += libhessian-java
# The metrics tests (tests/registry/metrics/): promtool checks a live scrape's text; without it that
# test reports itself skipped.
DEB_PACKAGES += prometheus
# The Node.js interop tests (tests/dubbo/node/): node and npm, Debian's, unless an npm is already
# there (NodeSource's nodejs bundles its own and conflicts with Debian's npm); then `make deps`
# installs the npm packages pinned by its package-lock.json. Without them those tests report
# themselves skipped.
DEB_PACKAGES += $(if $(shell command -v npm 2>/dev/null),,nodejs npm)
NODE_DIR := tests/dubbo/node
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Ninja when present (make deps installs it), otherwise Make. Only used when a build tree is first
# configured: an existing tree keeps its generator.
GENERATOR ?= $(if $(wildcard /usr/bin/ninja),Ninja,Unix Makefiles)
# ccache, when installed, for trees configured from now on (rebuilds after a branch switch).
LAUNCHER := $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Default per-test limit in seconds (a test's own TIMEOUT property wins).
TEST_TIMEOUT ?= 300
# Tests run one at a time: several are real-time ("fires within [125, 650) ms") and two cores
# running two sanitized processes side by side would make them measure the scheduler.
CTEST_JOBS ?= 1
# Sanitizer trees keep assertions on (Debug) but optimise a little: -O0 makes TSan runs crawl.
# -Og rather than -O1: most of a sanitized file's compile time is code generation, and -Og
# generates it in ~60 % of -O1's time (e.g. tests/config/cluster_test.cpp with ASan+UBSan: 8.4 s
# against 14.1 s) while the tests run about as fast. Line tables (-g1) are all a sanitizer report
# needs (function, file, line) and build faster.
SAN_BUILD_TYPE ?= Debug
SAN_DEBUG_FLAGS ?= -g1 -Og

# Sanitizer runtime defaults; a value already in the environment wins. LeakSanitizer was checked
# to work on the target machines (Debian 12, gcc 12), so leaks fail the ASan run.
export ASAN_OPTIONS ?= halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1
export UBSAN_OPTIONS ?= halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS ?= halt_on_error=1:second_deadlock_stack=1

# Configurations of `make test`: <name>: <build dir> and its cmake arguments.
# Every tree is a developer's (WHEELBEAT_DEVELOPER: tests, samples, benchmarks, -Werror); a plain
# `cmake -B build` builds only the libraries and wheelbeat-config, without -Werror.
rel_DIR := build
# Release (-O3) with -Werror: the warnings only the optimiser sees fail here, not in a user's build.
rel_ARGS := -DWHEELBEAT_DEVELOPER=ON -DCMAKE_BUILD_TYPE=Release
asan_DIR := build-asan
asan_ARGS := -DWHEELBEAT_DEVELOPER=ON -DWHEELBEAT_SANITIZE=address -DWHEELBEAT_BUILD_BENCH=OFF \
             -DCMAKE_BUILD_TYPE=$(SAN_BUILD_TYPE) -DCMAKE_CXX_FLAGS_DEBUG="$(SAN_DEBUG_FLAGS)"
tsan_DIR := build-tsan
tsan_ARGS := -DWHEELBEAT_DEVELOPER=ON -DWHEELBEAT_SANITIZE=thread -DWHEELBEAT_BUILD_BENCH=OFF \
             -DCMAKE_BUILD_TYPE=$(SAN_BUILD_TYPE) -DCMAKE_CXX_FLAGS_DEBUG="$(SAN_DEBUG_FLAGS)"
# The fuzz stage is a project of its own (tests/fuzz/) built with clang: <name>_SRC and <name>_ENV
# default to the top directory and nothing. Its one test fuzzes for FUZZ_SECONDS (~15 s build).
FUZZ_SECONDS ?= 60
fuzz_DIR := build-fuzz
fuzz_SRC := tests/fuzz
fuzz_ENV := CC=clang CXX=clang++
fuzz_ARGS := -DWHEELBEAT_FUZZ_SECONDS=$(FUZZ_SECONDS)
# The fuzz targets are single-threaded and measure nothing: two at a time, one per core, and in
# make test alongside the TSan tree's tests, at idle CPU priority (tests/make_test.sh).
fuzz_CTEST_JOBS := 2
fuzz_ALONGSIDE := 1
CONFIGS := rel asan tsan fuzz

FORMAT_FILES = $(shell find core tasks net config samples tests \
                 \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cc' \) 2>/dev/null)

.PHONY: help deps build demo bench soak test fuzz clean format format-check tidy docs \
        $(addprefix build-,$(CONFIGS)) $(addprefix test-,$(CONFIGS)) $(addprefix ctest-,$(CONFIGS))

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

# Installs only what is missing: silent and instant when everything is there.
deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  command -v apt-get >/dev/null || { echo "deps: apt-get not found; install:$$missing" >&2; exit 1; }; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@[ -d $(NODE_DIR)/node_modules ] || npm ci --prefix $(NODE_DIR) --no-audit --no-fund || \
	  echo "deps: npm ci failed: the Node interop tests ($(NODE_DIR)) will report themselves skipped" >&2

# build-<config>: configure (generator chosen only for a new tree) and build.
$(foreach c,$(CONFIGS),$(eval build-$(c): deps ; \
	$($(c)_ENV) cmake -S $(or $($(c)_SRC),.) -B $($(c)_DIR) \
	  $$(if $$(wildcard $($(c)_DIR)/CMakeCache.txt),,-G "$$(GENERATOR)" $$(LAUNCHER)) \
	  $($(c)_ARGS) --log-level=WARNING && \
	cmake --build $($(c)_DIR) -j $$(JOBS)))

# ctest-<config>: run the tests of an already built tree; the log feeds the summary of `make test`.
$(foreach c,$(CONFIGS),$(eval ctest-$(c): ; \
	set -o pipefail; ctest --test-dir $($(c)_DIR) --output-on-failure --no-tests=error \
	  --timeout $$(TEST_TIMEOUT) -j $$(or $$($(c)_CTEST_JOBS),$$(CTEST_JOBS)) 2>&1 | tee $($(c)_DIR)/ctest.log))

# test-<config>: one configuration alone.
$(foreach c,$(CONFIGS),$(eval test-$(c): build-$(c) ; @$$(MAKE) --no-print-directory ctest-$(c)))

build: build-rel

# The cluster demo: registry, 3 providers, 2 consumers as processes, a scripted fault scenario.
REGISTRY ?= embedded
# Configures the release tree if needed, then builds only the demo's two programs.
demo: deps
	cmake -S . -B $(rel_DIR) $(if $(wildcard $(rel_DIR)/CMakeCache.txt),,-G "$(GENERATOR)" $(LAUNCHER)) \
	  $(rel_ARGS) --log-level=WARNING
	cmake --build $(rel_DIR) -j $(JOBS) --target wheelbeat_demo wheelbeat_demo_node
	./build/bin/wheelbeat_demo --registry $(REGISTRY)

# The wheel benchmark (ARGS), the same scenarios on Netty's HashedWheelTimer (NETTY_ARGS, by
# default ARGS without --self-check) and one wheelbeat/Netty ratio line per scenario
# (tests/bench/netty_compare.sh), then heartbeat-at-scale H1 and H2 over loopback (NET_ARGS, given
# to H1, H2 and D1, e.g. NET_ARGS=--quick), then R1, request / response against its raw-epoll
# floor (R1_ARGS, e.g. R1_ARGS="--cases 64x16 --loops 1"), then D1, the failure detectors under
# faults (D1_ARGS; needs root and nftables, else it says why and is skipped: exit code 77), then
# T0 / T1, the cluster client without and with faults (T1_ARGS, e.g. T1_ARGS="--duration 20"):
# ~32 min in all.
# stdout carries only the JSON lines (the build's output and every progress line go to stderr);
# they are also collected in build/bench/results.jsonl, from which tests/bench/report.sh writes
# build/bench/report.md with SVG charts (S5 lateness, CPU per heartbeat against the floor), and
# tests/bench/perf_tables.sh rewrites the result tables of docs/performance.md from them.
BENCH_DIR := build/bench
NETTY_ARGS ?= $(filter-out --self-check,$(ARGS))
bench:
	@$(MAKE) --no-print-directory build >&2
	@mkdir -p $(BENCH_DIR) && : > $(BENCH_DIR)/results.jsonl
	@set -o pipefail; \
	echo "bench: the wheel, S1-S7 (~2.5 min)" >&2; \
	./build/bin/wheelbeat_bench $(ARGS) | tee -a $(BENCH_DIR)/results.jsonl; \
	if [ -x ./build/bin/wheelbeat_netty_bench ]; then \
	  echo "bench: Netty 4.1.48's HashedWheelTimer, S1-S7 (~3 min)" >&2; \
	  ./build/bin/wheelbeat_netty_bench $(NETTY_ARGS) | tee -a $(BENCH_DIR)/results.jsonl; \
	  ratios=$$(tests/bench/netty_compare.sh $(BENCH_DIR)/results.jsonl); \
	  [ -z "$$ratios" ] || printf '%s\n' "$$ratios" | tee -a $(BENCH_DIR)/results.jsonl; \
	else \
	  echo "bench: no Netty baseline (build/bin/wheelbeat_netty_bench not built: javac or libnetty-java missing)" >&2; \
	fi; \
	for s in H1 H2; do \
	  echo "bench: heartbeats at scale, $$s (three rounds of the floor, wheelbeat and wheelbeat-loopwheel, ~3.5 min for H1, ~6 for H2)" >&2; \
	  ./build/bin/wheelbeat_net_bench --scenario $$s $(NET_ARGS) | tee -a $(BENCH_DIR)/results.jsonl; \
	done; \
	echo "bench: request / response, R1 (three rounds, ~4 min; R1_ARGS)" >&2; \
	./build/bin/wheelbeat_net_bench --scenario R1 $(R1_ARGS) | tee -a $(BENCH_DIR)/results.jsonl; \
	echo "bench: failure detectors under faults, D1 (~4 min; root and nftables)" >&2; \
	{ ./build/bin/wheelbeat_net_bench --scenario D1 $(NET_ARGS) $(D1_ARGS) || [ $$? -eq 77 ]; } \
	  | tee -a $(BENCH_DIR)/results.jsonl; \
	echo "bench: the cluster client over 8 provider processes, T0 and T1 (seven runs with T0's floor, ~8 min; T1_ARGS)" >&2; \
	./build/bin/wheelbeat_net_bench --scenario T0,T1 $(T1_ARGS) | tee -a $(BENCH_DIR)/results.jsonl; \
	if [ -x ./build/bin/wheelbeat_grpc_bench ]; then \
	  echo "bench: the same T0 / T1 on gRPC C++ 1.51, four configurations (~9 min; T1_ARGS)" >&2; \
	  ./build/bin/wheelbeat_grpc_bench --scenario T0,T1 --config round_robin,retry,outlier,best $(T1_ARGS) \
	    | tee -a $(BENCH_DIR)/results.jsonl; \
	  ratios=$$(tests/bench/t1_compare.sh $(BENCH_DIR)/results.jsonl); \
	  [ -z "$$ratios" ] || printf '%s\n' "$$ratios" | tee -a $(BENCH_DIR)/results.jsonl; \
	else \
	  echo "bench: no gRPC baseline (build/bin/wheelbeat_grpc_bench not built: libgrpc++-dev, libprotobuf-dev or protobuf-compiler-grpc missing)" >&2; \
	fi; \
	tests/bench/report.sh $(BENCH_DIR)/results.jsonl $(BENCH_DIR); \
	tests/bench/perf_tables.sh $(BENCH_DIR)/results.jsonl docs/performance.md

# The soak (not in CI): 2 000 connections churned by a random fault every 1-4 s (server and
# registry restarts, garbage and partial-frame peers, loop stalls) for SOAK_MINUTES; one JSON line
# a minute (RSS, open fds, pending timeouts); exit 1 if any grew beyond 5 % after the warm-up.
SOAK_MINUTES ?= 60
soak: build
	./build/bin/wheelbeat_soak --minutes $(SOAK_MINUTES) --connections 2000

# The fuzz stage alone, then libFuzzer's final statistics (executions, exec/s, peak RSS).
fuzz: test-fuzz
	@grep -E '^(stat::|Done [0-9]+ runs|replayed)' $(fuzz_DIR)/Testing/Temporary/LastTest.log || true

# Every configuration, built and tested by tests/make_test.sh: the next tree builds at idle CPU
# priority while this one's tests run (a build that fails stops at once; failing tests do not).
# Last line: one summary in ctest's own format, summed over the configurations, so CI counts every
# test that ran; the exit status is non-zero on any failure.
test: deps
	@MAKE="$(MAKE)" tests/make_test.sh $(foreach c,$(CONFIGS),$(c):$($(c)_DIR)$(if $($(c)_ALONGSIDE),:alongside))

clean:
	rm -rf $(foreach c,$(CONFIGS),$($(c)_DIR))

format:
	clang-format -i $(FORMAT_FILES)

# Compares clang-format's output with each file rather than trusting --dry-run: clang-format 14
# reports the closing `}  // TEST_SUITE("...")` comment (NamespaceMacros) as a violation although
# its own output is identical.
format-check:
	@printf '%s\n' $(FORMAT_FILES) | xargs -P $(JOBS) -I{} sh -c \
	  'clang-format "{}" | cmp -s - "{}" || { echo "{}: not clang-formatted (make format)"; exit 1; }'

# Needs build/compile_commands.json (make build) and clang-tidy (Debian: clang-tidy).
# clang-tidy reads a copy of build/compile_commands.json without gcc's precompiled headers
# (config/ and the tests use them; clang cannot read gcc's PCH: "input is not a PCH file").
# The gate covers the library (core, tasks, net with net/registry, config with config/cli);
# samples/ is example code and stays outside it.

# The API reference: build/docs/html/index.html from the public headers (docs/Doxyfile), in a few
# seconds. Fails on any Doxygen warning (build/docs/warnings.log must stay empty): CI runs it.
docs: deps
	@rm -rf build/docs && mkdir -p build/docs
	@doxygen docs/Doxyfile
	@if [ -s build/docs/warnings.log ]; then cat build/docs/warnings.log >&2; \
	  echo "docs: $$(wc -l < build/docs/warnings.log) Doxygen warning(s), above" >&2; exit 1; fi
	@echo "docs: build/docs/html/index.html (0 warnings)" >&2
tidy: build
	@mkdir -p build/tidy
	jq '[.[] | select(.file | test("cmake_pch") | not) | .command |= gsub(" -include [^ ]*cmake_pch.hxx"; "") | .command |= gsub(" -Winvalid-pch"; "")]' \
	  build/compile_commands.json > build/tidy/compile_commands.json
	run-clang-tidy -quiet -p build/tidy -j $(JOBS) '$(CURDIR)/(core|tasks|net|config)/'
