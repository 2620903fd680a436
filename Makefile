# varprof: the library, the program, its tests and its manual.
# `make` builds build/varprof and build/libvarprof.a; `make check` runs every
# test, replays the fuzz corpora, then runs the suite again under
# AddressSanitizer and UBSan. `make fuzz` fuzzes the parsers (tests/fuzz/).

PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build

CC ?= cc
CFLAGS ?= -O2 -g
WARN := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
CPPFLAGS += -Iinclude -Isrc -Itests/support -MMD -MP
LIBS := -lcsv -lcjson -lgsl -lgslcblas -lpthread -lm
TEST_LIBS := -lcmocka -lgsl -lgslcblas

VERSION := $(shell sed -n 's/^#define VP_VERSION "\(.*\)"/\1/p' include/varprof/version.h)

LIB_SRC := $(filter-out src/cli/%,$(wildcard src/*/*.c))
CLI_SRC := $(wildcard src/cli/*.c)
TEST_UNIT_SRC := $(wildcard tests/unit/*.c)
TEST_PROGRAM_SRC := $(wildcard tests/program/*.c)
TEST_SRC := $(TEST_UNIT_SRC) $(TEST_PROGRAM_SRC)
TEST_COMMON := tests/support/run_program.c tests/support/reference.c tests/support/test_filter.c \
  tests/support/csv_text.c tests/support/torch_expected.c tests/support/torch_case.c \
  tests/support/output_check.c tests/support/text_file.c \
  tests/support/printed_number.c tests/support/edited_case.c tests/support/renamed_case.c

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_UNIT_BIN := $(TEST_UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_PROGRAM_BIN := $(TEST_PROGRAM_SRC:tests/program/%.c=$(BUILD)/tests/%)
TEST_BIN := $(TEST_UNIT_BIN) $(TEST_PROGRAM_BIN)
TEST_COMMON_OBJ := $(TEST_COMMON:%.c=$(BUILD)/%.o)

.PHONY: all run figures check check-tsan check-valgrind test check-san deps install uninstall clean
all: $(BUILD)/varprof $(BUILD)/libvarprof.a

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(KERNEL_FLAGS) -c $< -o $@

# Kernels: the build stays baseline; only each SIMD file gets its instruction
# set, by its name (name_avx2.c, name_avx512.c), and runs only after CPUID
# says so (src/kernels/isa.c). No contraction of a*b+c into an FMA the source
# did not write: every variant must round as the scalar reference does.
# Other architectures build the scalar one alone.
AVX2_FLAGS := -mavx2 -mfma
AVX512_FLAGS := -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma
$(BUILD)/src/kernels/%.o: KERNEL_FLAGS += -ffp-contract=off
ifneq ($(filter x86_64-%,$(shell $(CC) -dumpmachine)),)
$(BUILD)/src/kernels/%_avx2.o: KERNEL_FLAGS += $(AVX2_FLAGS)
$(BUILD)/src/kernels/%_avx512.o: KERNEL_FLAGS += $(AVX512_FLAGS)
# deliberate: GCC's generic tuning prefers 256-bit vectors even with AVX-512;
# the vector-extension bodies' eight lanes of double fill one 512-bit register
$(BUILD)/src/kernels/mc_loops_avx512.o: KERNEL_FLAGS += -mprefer-vector-width=512
$(BUILD)/src/kernels/residual_avx512.o: KERNEL_FLAGS += -mprefer-vector-width=512
$(BUILD)/src/kernels/stream_avx512.o: KERNEL_FLAGS += -mprefer-vector-width=512
endif
# the loops' explicit lanes are there to be vectorised
$(BUILD)/src/kernels/mc_loops_%.o: KERNEL_FLAGS += -O3 -Wno-psabi
# elementwise loops, for gcc to vectorise at the set's width
$(BUILD)/src/kernels/stream_%.o: KERNEL_FLAGS += -O3 -Wno-psabi
# every product in the residual sums is of two floats, exact in double, so a
# fused multiply-add rounds as the multiply and add do (residual_body.h)
$(BUILD)/src/kernels/residual_%.o: KERNEL_FLAGS += -O3 -Wno-psabi -ffp-contract=fast

$(BUILD)/libvarprof.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/varprof: $(CLI_OBJ) $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libvarprof.a $(LIBS)

# A test binary from its file in tests/unit/ (the library's functions) or
# tests/program/ (the program as a user runs it): one name, one of the two.
# Static patterns, so that an object left from a file since moved is never
# taken for the binary's source.
$(TEST_UNIT_BIN): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(TEST_COMMON_OBJ) $(BUILD)/libvarprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(BUILD)/libvarprof.a $(TEST_LIBS) $(LIBS)
$(TEST_PROGRAM_BIN): $(BUILD)/tests/%: $(BUILD)/tests/program/%.o $(TEST_COMMON_OBJ) $(BUILD)/libvarprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(BUILD)/libvarprof.a $(TEST_LIBS) $(LIBS)

# Benchmarks (tests/bench/README.md): the Monte Carlo engine on one thread
# against a NumPy version of the same model; the matmul against the FMA peak;
# the forward pass, GPT-style and Llama-style, against PyTorch. Built with
# the normal CFLAGS; prints PASS/MISS per target and does not fail on a miss.
# NumPy is optional: without it the comparison is skipped, saying so.
PYTHON3 ?= /usr/bin/python3
BENCH_BIN := $(BUILD)/bench/bench_mc
BENCH_MATMUL_BIN := $(BUILD)/bench/bench_matmul
BENCH_FORWARD_BIN := $(BUILD)/bench/bench_forward
BENCH_ARCH_BIN := $(BUILD)/bench/bench_arch
BENCH_FAMILIES_BIN := $(BUILD)/bench/bench_families
BENCH_BACKWARD_BIN := $(BUILD)/bench/bench_backward
BENCH_TRAIN_BIN := $(BUILD)/bench/bench_train
BENCH_SCALE_BIN := $(BUILD)/bench/bench_scale
BENCH_THREADS_BIN := $(BUILD)/bench/bench_threads

.PHONY: bench bench-run
bench: deps-bench
	$(MAKE) bench-run

bench-run: $(BENCH_BIN) $(BENCH_MATMUL_BIN) $(BENCH_FORWARD_BIN) $(BENCH_ARCH_BIN) $(BENCH_FAMILIES_BIN) \
  $(BENCH_BACKWARD_BIN) $(BENCH_TRAIN_BIN) $(BENCH_SCALE_BIN) $(BENCH_THREADS_BIN) $(BUILD)/varprof
	@case " $(CFLAGS) " in *fast-math*|*-Ofast*) \
	  echo "make bench: CFLAGS ($(CFLAGS)) must not contain -ffast-math or -Ofast" >&2; exit 1;; esac
	@if $(PYTHON3) -c 'import numpy' 2>/dev/null; then \
	  $(BENCH_BIN) --python $(PYTHON3) --script tests/bench/mc_numpy.py; \
	else \
	  echo "make bench: $(PYTHON3) cannot import numpy (apt-get install python3-numpy);" \
	       "skipping the NumPy comparison"; \
	  $(BENCH_BIN) --no-numpy; \
	fi
	@echo
	$(BENCH_MATMUL_BIN)
	@echo
	@if $(PYTHON3) -c 'import torch' 2>/dev/null; then \
	  echo "$(BENCH_FORWARD_BIN) --python $(PYTHON3) --script tests/bench/forward_torch.py"; \
	  $(BENCH_FORWARD_BIN) --python $(PYTHON3) --script tests/bench/forward_torch.py; \
	else \
	  echo "make bench: $(PYTHON3) cannot import torch (apt-get install python3-torch);" \
	       "skipping the PyTorch comparison"; \
	  $(BENCH_FORWARD_BIN) --no-torch; \
	fi
	@echo
	@if $(PYTHON3) -c 'import torch' 2>/dev/null; then \
	  echo "$(BENCH_ARCH_BIN) --python $(PYTHON3) --script tests/bench/arch_torch.py"; \
	  $(BENCH_ARCH_BIN) --python $(PYTHON3) --script tests/bench/arch_torch.py; \
	else \
	  echo "make bench: $(PYTHON3) cannot import torch (apt-get install python3-torch);" \
	       "skipping the PyTorch comparison of the Llama blocks"; \
	  $(BENCH_ARCH_BIN) --no-torch; \
	fi
	@echo
	@if $(PYTHON3) -c 'import torch' 2>/dev/null; then \
	  echo "$(BENCH_FAMILIES_BIN) --python $(PYTHON3) --script tests/bench/families_torch.py"; \
	  $(BENCH_FAMILIES_BIN) --python $(PYTHON3) --script tests/bench/families_torch.py; \
	else \
	  echo "make bench: $(PYTHON3) cannot import torch (apt-get install python3-torch);" \
	       "skipping the PyTorch comparison of the families' blocks"; \
	  $(BENCH_FAMILIES_BIN) --no-torch; \
	fi
	@echo
	@if $(PYTHON3) -c 'import torch' 2>/dev/null; then \
	  echo "$(BENCH_BACKWARD_BIN) --python $(PYTHON3) --script tests/bench/backward_torch.py"; \
	  $(BENCH_BACKWARD_BIN) --python $(PYTHON3) --script tests/bench/backward_torch.py; \
	else \
	  echo "make bench: $(PYTHON3) cannot import torch (apt-get install python3-torch);" \
	       "skipping the PyTorch autograd comparison"; \
	  $(BENCH_BACKWARD_BIN) --no-torch; \
	fi
	@echo
	@if $(PYTHON3) -c 'import torch' 2>/dev/null; then \
	  echo "$(BENCH_TRAIN_BIN) --varprof $(BUILD)/varprof --python $(PYTHON3) --script tests/bench/train_torch.py"; \
	  $(BENCH_TRAIN_BIN) --varprof $(BUILD)/varprof --python $(PYTHON3) --script tests/bench/train_torch.py; \
	else \
	  echo "make bench: $(PYTHON3) cannot import torch (apt-get install python3-torch);" \
	       "skipping the PyTorch training comparison"; \
	  $(BENCH_TRAIN_BIN) --varprof $(BUILD)/varprof --no-torch; \
	fi
	@echo
	$(BENCH_SCALE_BIN) --varprof $(BUILD)/varprof
	$(BENCH_THREADS_BIN) --varprof $(BUILD)/varprof

$(BUILD)/bench/bench_mc.o: tests/bench/bench_mc.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_BIN): $(BUILD)/bench/bench_mc.o $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libvarprof.a $(LIBS)

# The matmul against this core's measured FMA peak (tests/bench/bench_matmul.c).
$(BUILD)/bench/bench_matmul.o: tests/bench/bench_matmul.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BUILD)/bench/fma_peak.o: tests/bench/fma_peak.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

# Running a peer's timing script, shared by the benches that have one.
$(BUILD)/bench/peer_script.o: tests/bench/peer_script.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

# The forward pass's network timed, shared by bench_forward and bench_arch.
$(BUILD)/bench/network_timer.o: tests/bench/network_timer.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

# The options, shape loop and summaries of bench_forward, bench_arch and bench_families
# (bench_backward takes its options).
$(BUILD)/bench/bench_shapes.o: tests/bench/bench_shapes.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_MATMUL_BIN): $(BUILD)/bench/bench_matmul.o $(BUILD)/bench/fma_peak.o $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/fma_peak.o $(BUILD)/libvarprof.a $(LIBS)

# The forward pass against PyTorch and the FMA peak (tests/bench/bench_forward.c);
# it uses the library's internal headers (src/forward/network.h), as the tests do.
# PyTorch is optional: without it the comparison is skipped, saying so.
$(BUILD)/bench/bench_forward.o: tests/bench/bench_forward.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_FORWARD_BIN): $(BUILD)/bench/bench_forward.o $(BUILD)/bench/fma_peak.o $(BUILD)/bench/peer_script.o \
  $(BUILD)/bench/network_timer.o $(BUILD)/bench/bench_shapes.o \
  $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/fma_peak.o $(BUILD)/bench/peer_script.o \
	  $(BUILD)/bench/network_timer.o $(BUILD)/bench/bench_shapes.o \
	  $(BUILD)/libvarprof.a $(LIBS)

# Llama-style blocks (RMSNorm, RoPE, grouped-query attention, SwiGLU) against
# the same blocks in PyTorch and the FMA peak (tests/bench/bench_arch.c);
# internal headers and PyTorch optional, as bench_forward.
$(BUILD)/bench/bench_arch.o: tests/bench/bench_arch.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_ARCH_BIN): $(BUILD)/bench/bench_arch.o $(BUILD)/bench/fma_peak.o $(BUILD)/bench/peer_script.o \
  $(BUILD)/bench/network_timer.o $(BUILD)/bench/bench_shapes.o \
  $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/fma_peak.o $(BUILD)/bench/peer_script.o \
	  $(BUILD)/bench/network_timer.o $(BUILD)/bench/bench_shapes.o \
	  $(BUILD)/libvarprof.a $(LIBS)

# GPT-NeoX's parallel-residual and BLOOM's ALiBi blocks against the same
# blocks in PyTorch and the FMA peak (tests/bench/bench_families.c); as bench_arch.
$(BUILD)/bench/bench_families.o: tests/bench/bench_families.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_FAMILIES_BIN): $(BUILD)/bench/bench_families.o $(BUILD)/bench/fma_peak.o \
  $(BUILD)/bench/peer_script.o $(BUILD)/bench/network_timer.o $(BUILD)/bench/bench_shapes.o \
  $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/fma_peak.o $(BUILD)/bench/peer_script.o \
	  $(BUILD)/bench/network_timer.o $(BUILD)/bench/bench_shapes.o \
	  $(BUILD)/libvarprof.a $(LIBS)

# Forward plus backward against PyTorch autograd and the FMA peak
# (tests/bench/bench_backward.c, issue 13); PyTorch optional, as above.
$(BUILD)/bench/bench_backward.o: tests/bench/bench_backward.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_BACKWARD_BIN): $(BUILD)/bench/bench_backward.o $(BUILD)/bench/fma_peak.o $(BUILD)/bench/peer_script.o \
  $(BUILD)/bench/bench_shapes.o $(BUILD)/bench/network_timer.o $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/fma_peak.o $(BUILD)/bench/peer_script.o \
	  $(BUILD)/bench/bench_shapes.o $(BUILD)/bench/network_timer.o $(BUILD)/libvarprof.a $(LIBS)

# Llama 2 7B and Llama 3.1 70B shapes at full size, weights drawn on the
# fly, as whole processes (tests/bench/bench_scale.c, issue 16).
$(BUILD)/bench/bench_scale.o: tests/bench/bench_scale.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

# Each job at 1, 2, 4, ... threads up to the cores, and the default against
# the best (tests/bench/bench_threads.c, issue 31).
$(BUILD)/bench/bench_threads.o: tests/bench/bench_threads.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_THREADS_BIN): $(BUILD)/bench/bench_threads.o $(BUILD)/bench/fma_peak.o $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/fma_peak.o $(BUILD)/libvarprof.a $(LIBS)

$(BENCH_SCALE_BIN): $(BUILD)/bench/bench_scale.o $(BUILD)/bench/fma_peak.o $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/fma_peak.o $(BUILD)/libvarprof.a $(LIBS)

# The seed's whole training experiment as a process against the seed's
# PyTorch script (tests/bench/bench_train.c, issue 14); PyTorch optional.
$(BUILD)/bench/bench_train.o: tests/bench/bench_train.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_TRAIN_BIN): $(BUILD)/bench/bench_train.o $(BUILD)/bench/fma_peak.o $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/fma_peak.o $(BUILD)/libvarprof.a $(LIBS)

# Install any missing Debian package one kind of work needs
# (scripts/install-deps): `deps` what building and running take, deps-test
# what the tests add, deps-valgrind, deps-lint and deps-fuzz theirs. Each
# target below installs first, then builds in a sub-make, so that `make -j2
# run` on a fresh machine never compiles before the headers are there.
.PHONY: deps-test deps-valgrind deps-lint deps-fuzz deps-bench
deps:
	@scripts/install-deps run
deps-test deps-valgrind deps-lint deps-fuzz deps-bench: deps-%:
	@scripts/install-deps $*

# The chapter's figures, committed in plots/, then the seed's training
# claims (README, Training) on the scalar reference kernels: Post-LN at lr
# 1e-2 is chaotic, so the SIMD kernels' other summation orders (by design)
# grow into another curve, and only the reference's order is the same on
# every machine (two minutes on two cores).
figures: deps
	$(MAKE) all
	$(BUILD)/varprof figures --outdir plots --format svg
	VARPROF_ISA=scalar $(BUILD)/varprof figures --training --outdir plots --format svg

run: deps
	$(MAKE) all
	$(BUILD)/varprof --placement pre-norm --layers 32

# The tests find the program through VARPROF and their data through VARPROF_TESTDATA.
# Each binary runs as its own target, TEST_JOBS at a time (none of them times
# anything, so sharing the cores changes no result); its output goes to
# BUILD/tests/NAME.log and is shown whole when it ends, so that two never
# interleave. -k: one failure does not stop the others.
# Under a parent `make -jN` the binaries share its job slots instead.
TEST_JOBS ?= 2
TEST_PARALLEL = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(TEST_JOBS))
test: all $(TEST_BIN)
	@$(MAKE) --no-print-directory -k $(TEST_PARALLEL) $(TEST_BIN:%=%.run)

# TEST_ENV: variables for every binary of the run; TEST_ENV_<name>: for one.
.PHONY: FORCE
FORCE:
$(BUILD)/tests/%.run: $(BUILD)/tests/% FORCE
	@if $(TEST_ENV) $(TEST_ENV_$*) $(if $(TEST_WRAPPER),VARPROF_WRAPPER="$(TEST_WRAPPER)") \
	  VARPROF=$(BUILD)/varprof VARPROF_TESTDATA=tests/data $< >$<.log 2>&1; \
	then cat $<.log; else status=$$?; cat $<.log; \
	  echo "$(notdir $<): FAILED (exit $$status; its output: $<.log)"; exit 1; fi

SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# The models' real rows (test_model_forms) draw layers 8192 wide, a minute
# under the sanitizers; their toy rows run the same code and stay.
check-san:
	$(MAKE) -j$(TEST_JOBS) test fuzz-replay BUILD=build-san CFLAGS="$(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)" \
	  TEST_ENV_test_model_forms="VARPROF_TEST_SKIP=the_real_rows_run"

# The threaded engines under ThreadSanitizer: the tests that run threads.
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS := test_mc test_cli_mc test_forward test_cli_forward test_cli
check-tsan:
	$(MAKE) -j$(TEST_JOBS) BUILD=build-tsan CFLAGS="$(TSAN_FLAGS)" LDFLAGS="$(TSAN_FLAGS)" build-tsan/varprof \
	  $(TSAN_TESTS:%=build-tsan/tests/%)
	@$(MAKE) --no-print-directory -k $(TEST_PARALLEL) BUILD=build-tsan CFLAGS="$(TSAN_FLAGS)" \
	  LDFLAGS="$(TSAN_FLAGS)" TEST_ENV=TSAN_OPTIONS=halt_on_error=1 \
	  $(TSAN_TESTS:%=build-tsan/tests/%.run)

# Every example in the README and the manuals, run as written, against the
# output the page shows (scripts/check-examples). make check runs them all
# but the 70B-shaped forward pass, which takes a minute on two cores;
# make check-examples runs that one too.
.PHONY: check-examples check-examples-quick
check-examples: all
	BUILD=$(BUILD) scripts/check-examples
check-examples-quick: all
	BUILD=$(BUILD) scripts/check-examples --skip 'llama-3\.1-70b'

# The program's tests with every run of the program under valgrind's
# memcheck: any error or leak makes that run exit 99, which fails its test.
# test_cli_plot's two runs of the whole figure set (figure*: forward passes of
# 32 layers, some minutes each under memcheck) are left to ASan and UBSan
# (check-san), which run them with every other test.
VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full \
  --errors-for-leak-kinds=definite,indirect,possible --show-leak-kinds=definite,indirect,possible
VALGRIND_TESTS := test_cli test_cli_models test_cli_plot test_pytorch_match
check-valgrind: deps-valgrind
	$(MAKE) -j$(TEST_JOBS) check-valgrind-run

.PHONY: check-valgrind-run
check-valgrind-run: all $(VALGRIND_TESTS:%=$(BUILD)/tests/%)
	@$(MAKE) --no-print-directory -k $(TEST_PARALLEL) TEST_WRAPPER="$(VALGRIND)" \
	  TEST_ENV_test_cli_plot="VARPROF_TEST_SKIP=figure*" $(VALGRIND_TESTS:%=$(BUILD)/tests/%.run)

check: deps-test
	$(MAKE) -j$(TEST_JOBS) test
	$(MAKE) check-examples-quick
	$(MAKE) fuzz-replay
	tests/install_test.sh
	tests/shard_parallel.sh $(BUILD)/varprof
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) check-san
	$(MAKE) check-tsan

# Fuzzing (tests/fuzz/README.md): one libFuzzer target per parser,
# tests/fuzz/fuzz_<target>.c, with its seed corpus in tests/fuzz/corpus/<target>.
# `make fuzz` builds them with clang, ASan and UBSan into build-fuzz/ (the
# library through the rules above, so the kernels keep their flags) and runs
# each for FUZZ_SECONDS on a copy of its corpus; `make -j2 fuzz` runs two at a
# time. FUZZ_MERGE=1 merges what each run found into the committed corpus,
# minimised (-merge=1). A finding stops the run: the input is left in
# build-fuzz/artifacts/<target>/ and the report in build-fuzz/logs/<target>.log.
# `make fuzz-replay` runs every corpus file once through each target built
# with $(CC) and tests/fuzz/replay_main.c instead of libFuzzer; `make check`
# runs it.
FUZZ_TARGETS := $(sort $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_SECONDS ?= 60
FUZZ_MERGE ?= 0
FUZZ_OPTIONS ?=
FUZZ_CC ?= clang
FUZZ_BUILD := build-fuzz
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer
FUZZ_CLI_OBJ = $(addprefix $(BUILD)/src/cli/,options.o option_table.o stack_options.o \
  sampling_options.o output_file.o dash_lookalike.o nearest_name.o wrap_text.o)

.PHONY: fuzz fuzz-build fuzz-replay fuzz-bins $(FUZZ_TARGETS:%=fuzz-run-%)
fuzz: fuzz-build
	$(MAKE) $(FUZZ_TARGETS:%=fuzz-run-%)

fuzz-build: deps-fuzz
	@mkdir -p $(FUZZ_BUILD) && echo '*' > $(FUZZ_BUILD)/.gitignore
	$(MAKE) fuzz-bins BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) CFLAGS="$(FUZZ_FLAGS)" \
	  LDFLAGS="$(FUZZ_FLAGS)"

fuzz-bins: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)

$(BUILD)/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_CLI_OBJ) $(BUILD)/libvarprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(FUZZ_TARGETS:%=fuzz-run-%): fuzz-run-%:
	@rm -rf $(FUZZ_BUILD)/run/$*
	@mkdir -p $(FUZZ_BUILD)/run/$* $(FUZZ_BUILD)/artifacts/$* $(FUZZ_BUILD)/logs
	@cp tests/fuzz/corpus/$*/* $(FUZZ_BUILD)/run/$*/
	@echo "fuzz $*: $(FUZZ_SECONDS) s, log in $(FUZZ_BUILD)/logs/$*.log"
	@UBSAN_OPTIONS=print_stacktrace=1 $(FUZZ_BUILD)/fuzz/fuzz_$* \
	  -max_total_time=$(FUZZ_SECONDS) -timeout=30 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_BUILD)/artifacts/$*/ \
	  $(if $(wildcard tests/fuzz/$*.dict),-dict=tests/fuzz/$*.dict) \
	  $(FUZZ_OPTIONS) $(FUZZ_BUILD)/run/$* > $(FUZZ_BUILD)/logs/$*.log 2>&1 || \
	  { tail -n 60 $(FUZZ_BUILD)/logs/$*.log; \
	    echo "fuzz $*: FAILED; the input is in $(FUZZ_BUILD)/artifacts/$*/" >&2; exit 1; }
	@echo "fuzz $*: $$(grep -E '^#[0-9]+' $(FUZZ_BUILD)/logs/$*.log | tail -n 1)"
	@echo "fuzz $*: $$(grep -E '^Done' $(FUZZ_BUILD)/logs/$*.log)"
	@if [ "$(FUZZ_MERGE)" = 1 ]; then \
	  $(FUZZ_BUILD)/fuzz/fuzz_$* -merge=1 tests/fuzz/corpus/$* $(FUZZ_BUILD)/run/$* \
	    > $(FUZZ_BUILD)/logs/$*.merge.log 2>&1 && \
	  echo "fuzz $*: merged: $$(grep 'MERGE-OUTER: .* new files' $(FUZZ_BUILD)/logs/$*.merge.log)"; \
	fi

# keep the objects: the links above and below would delete them as intermediates
.SECONDARY: $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/fuzz_%.o) $(BUILD)/tests/fuzz/replay_main.o

fuzz-replay: $(FUZZ_TARGETS:%=$(BUILD)/fuzz-replay/fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	  $(BUILD)/fuzz-replay/fuzz_$$t tests/fuzz/corpus/$$t || { \
	    echo "fuzz-replay: fuzz_$$t failed on its corpus" >&2; exit 1; }; \
	done

$(BUILD)/fuzz-replay/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay_main.o \
  $(FUZZ_CLI_OBJ) $(BUILD)/libvarprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# Static analysis (scripts/lint): cppcheck, clang-tidy with .clang-tidy and
# gcc's -fanalyzer over every file of src/, each with the flags its rule above
# gives it (taken from a dry run of those rules into $(LINT_BUILD), so the SIMD
# kernels keep their instruction sets). Any finding fails; a false positive
# is silenced at its line with a one-line reason.
LINT_BUILD := $(BUILD)/lint
LINT_CC ?= gcc
.PHONY: lint lint-run
lint: deps-lint
	$(MAKE) lint-run

# Then the header contract (scripts/check-exports): the vp_ symbols the
# library exports are exactly those include/varprof/ declares; and the
# layout (scripts/check-format): every C file as .clang-format lays it out;
# the layers (scripts/check-layers): what src/io and src/core include,
# and no option named in a library message; and the sizes
# (scripts/check-sizes): no file in src/ over 500 lines, no function over
# 80 (60 in src/cli).
lint-run: $(BUILD)/libvarprof.a
	@mkdir -p $(LINT_BUILD)
	@$(MAKE) -nB --no-print-directory BUILD=$(LINT_BUILD) CC=$(LINT_CC) \
	  $(patsubst %.c,$(LINT_BUILD)/%.o,$(LIB_SRC) $(CLI_SRC)) > $(LINT_BUILD)/commands
	scripts/lint $(LINT_BUILD)
	CC=$(CC) scripts/check-exports $(BUILD)/libvarprof.a
	scripts/check-format
	scripts/check-layers
	scripts/check-sizes

# The manual pages carry the version in their .TH lines (so that man -l in
# the tree shows it); tests/install_test.sh holds them to version.h.
# varprof.pc lets a program build against the installed library with
# pkg-config --cflags --libs varprof (a static library: its dependencies are
# in Libs).
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/include/varprof $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/man/man7 $(DESTDIR)$(PREFIX)/share/varprof
	install -m 755 $(BUILD)/varprof $(DESTDIR)$(PREFIX)/bin/varprof
	install -m 644 $(BUILD)/libvarprof.a $(DESTDIR)$(PREFIX)/lib/libvarprof.a
	install -m 644 include/varprof/*.h $(DESTDIR)$(PREFIX)/include/varprof/
	install -m 644 data/models.csv $(DESTDIR)$(PREFIX)/share/varprof/models.csv
	install -m 644 man/varprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/varprof.1
	install -m 644 man/varprof-maths.7 $(DESTDIR)$(PREFIX)/share/man/man7/varprof-maths.7
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: varprof' 'Description: how a transformer'"'"'s residual stream grows for each norm placement' \
	  'Version: $(VERSION)' 'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -lvarprof $(LIBS)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/varprof.pc
	chmod 644 $(DESTDIR)$(PREFIX)/lib/pkgconfig/varprof.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/varprof $(DESTDIR)$(PREFIX)/lib/libvarprof.a \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig/varprof.pc \
	  $(DESTDIR)$(PREFIX)/share/man/man1/varprof.1 \
	  $(DESTDIR)$(PREFIX)/share/man/man7/varprof-maths.7
	rm -rf $(DESTDIR)$(PREFIX)/include/varprof $(DESTDIR)$(PREFIX)/share/varprof

clean:
	rm -rf build build-san build-tsan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
