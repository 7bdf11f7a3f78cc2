# SPDX-License-Identifier: MIT
# Ferry's front door. `make` builds everything, `make demo` builds and runs
# the ping-pong/bandwidth demo on 2 ranks, `make test` runs the whole suite
# (including an ASan+UBSan build). Missing Debian packages are installed
# when run as root.

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS       ?= 2
CMAKE_ARGS ?=

# Debian packages: the toolchain (gfortran for the Fortran bindings), plus
# MPICH and Open MPI, which the suite uses for the MPICH-built-binary tests,
# the launcher tests (Hydra, Open MPI's PMIx) and bench/compare; Slurm and
# munge for the srun --mpi=pmi2 test; libpmix-dev for PMIx's types (the
# library is loaded at run time).
DEB_PACKAGES = cmake ninja-build gcc gfortran make python3 mpich libmpich-dev \
               openmpi-bin libopenmpi-dev python3-matplotlib clang-format \
               libpmix-dev slurm-wlm munge libhwloc-dev \
               libfabric-dev libfabric-bin

.PHONY: all deps build demo test test-asan test-tsan format format-check compare install clean

all: build

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "Missing Debian packages:$$missing (run as root, or install them)"; \
	    exit 1; \
	  fi; \
	fi

# Warnings are errors in every build the suite makes (CI included).
$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_WERROR=ON $(CMAKE_ARGS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS)

demo: build
	@echo "== ferry-info"
	@$(BUILD)/bin/ferry-info
	@echo
	@echo "== one-way latency, 2 ranks (build/bin/mpiexec -n 2 build/bin/bench_latency)"
	@$(BUILD)/bin/mpiexec --timeout 120 -n 2 $(BUILD)/bin/bench_latency -m 1048576
	@echo
	@echo "== windowed bandwidth, 2 ranks (build/bin/mpiexec -n 2 build/bin/bench_bw)"
	@$(BUILD)/bin/mpiexec --timeout 120 -n 2 $(BUILD)/bin/bench_bw -m 4194304
	@echo
	@echo "== mechanism laboratory, quick run ($(BUILD)/bin/ferry-bench --quick --out $(BUILD)/lab)"
	@$(BUILD)/bin/ferry-bench --quick --out $(BUILD)/lab
	@echo
	@sed -n '/^## Summary/,/^Set-up is/p' $(BUILD)/lab/report.md | sed '$$d'
	@echo "Full report: $(BUILD)/lab/report.md (raw figures: $(BUILD)/lab/results.json)"
	@plots=$$(ls $(BUILD)/lab/*.png 2>/dev/null | tr '\n' ' '); \
	if [ -n "$$plots" ]; then echo "Plots: $$plots"; \
	else echo "No plots (install python3-matplotlib; see the report's Plots section)"; fi

test: build format-check test-asan test-tsan
	cd $(BUILD) && ctest --output-on-failure --timeout 300

# Unit tests and 2-rank tests again under AddressSanitizer + UBSan.
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRY_SANITIZE=ON -DFERRY_WERROR=ON $(CMAKE_ARGS) >/dev/null
	ninja -C $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure --timeout 300 -L 'unit|np2' -LE 'mpich|xfer'

# Unit tests again under ThreadSanitizer (the lock-free queues and the
# multi-process stress run in one address space per process; TSan checks
# each process's own threads and atomics), and the MPI_THREAD_MULTIPLE
# programs (four threads per rank in MPI at once, on the engine, object,
# window and no lock) at 2 and 3 ranks, and one-sided operations of three
# threads per rank by active messages and by cma (request-based ones among
# them, which once took the engine lock before the window's), and two to
# four threads per rank in blocking collectives over shared memory at
# once (mt_coll: a thread slot each). Only
# the library, those tests and what they need are built.
test-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRY_WERROR=ON \
	  -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
	  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread $(CMAKE_ARGS) >/dev/null
	ninja -C $(TSAN_BUILD) -j $(JOBS) $$(cd tests/unit && ls test_*.c | sed 's/\.c$$//') \
	  mpiexec mt_thread_multiple mt_thread_multiple2 mt_rma_am mt_mt_coll mt_mt_mixed mt_rma_random
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure --timeout 300 \
	  -L unit
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure --timeout 300 \
	  -R '^mpi\.(thread_multiple2?\.np[23]|rma_am\.np3\.(shmbuf|cma)\.multiple|mt_coll\.np2(\.threads4|\.split)?|mt_mixed\.np2(\.pool)?|rma_random\.np2\.threads3)$$'

# C sources checked against .clang-format (Debian's clang-format 14). The
# public header keeps its hand layout (grouped constants, long prototypes).
FORMAT_FILES = $(shell git ls-files 'src/*.[ch]' 'tools/*.c' 'bench/*.[ch]' \
                 'bench/lab/*.[ch]' 'tests/*.[ch]' 'tests/*/*.[ch]' 2>/dev/null)

format: deps
	clang-format -i $(FORMAT_FILES)

format-check: deps
	@if [ -z "$(FORMAT_FILES)" ]; then \
	  echo "clang-format: not a git checkout, nothing to check"; \
	else \
	  clang-format --dry-run -Werror $(FORMAT_FILES) && \
	  echo "clang-format: $(words $(FORMAT_FILES)) files clean"; \
	fi

compare: build
	bench/compare --build $(BUILD)

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
