# varprof: the library, the program, its tests and its manual.
# `make` builds build/varprof and build/libvarprof.a; `make check` runs every
# test, then the suite again under AddressSanitizer and UBSan.

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

LIB_SRC := $(wildcard src/*.c) $(wildcard src/kernels/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/unit/*.c)
TEST_COMMON := tests/support/run_program.c tests/support/reference.c

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_COMMON_OBJ := $(TEST_COMMON:%.c=$(BUILD)/%.o)

.PHONY: all run figures check test check-san deps install uninstall clean
all: $(BUILD)/varprof $(BUILD)/libvarprof.a

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(KERNEL_FLAGS) -c $< -o $@

# Kernels: the build stays baseline; only each SIMD file gets its instruction
# set, and runs only after CPUID says so (src/kernels/isa.c). No contraction
# of a*b+c into an FMA the source did not write: every variant must round as
# the scalar reference does. Other architectures build the scalar one alone.
$(BUILD)/src/kernels/%.o: KERNEL_FLAGS += -ffp-contract=off
ifneq ($(filter x86_64-%,$(shell $(CC) -dumpmachine)),)
$(BUILD)/src/kernels/gauss_avx2.o: KERNEL_FLAGS += -mavx2 -mfma
$(BUILD)/src/kernels/gauss_avx512.o: KERNEL_FLAGS += -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma
$(BUILD)/src/kernels/matmul_avx2.o $(BUILD)/src/kernels/nn_avx2.o: KERNEL_FLAGS += -mavx2 -mfma
$(BUILD)/src/kernels/matmul_avx512.o $(BUILD)/src/kernels/nn_avx512.o: KERNEL_FLAGS += -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma
$(BUILD)/src/kernels/mc_loops_avx2.o: KERNEL_FLAGS += -mavx2
$(BUILD)/src/kernels/mc_loops_avx512.o: KERNEL_FLAGS += -mavx512f -mprefer-vector-width=512
endif
# the loops' explicit lanes are there to be vectorised
$(BUILD)/src/kernels/mc_loops_%.o: KERNEL_FLAGS += -O3 -Wno-psabi

$(BUILD)/libvarprof.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/varprof: $(CLI_OBJ) $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libvarprof.a $(LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(TEST_COMMON_OBJ) $(BUILD)/libvarprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(BUILD)/libvarprof.a $(TEST_LIBS) $(LIBS)

# Benchmarks: the Monte Carlo engine on one thread against a NumPy version of
# the same model (tests/bench/README.md). Built with the normal CFLAGS; prints
# PASS/MISS per target and does not fail on a miss. NumPy is optional: without
# it the comparison is skipped, saying so.
PYTHON3 ?= /usr/bin/python3
BENCH_BIN := $(BUILD)/bench/bench_mc
BENCH_MATMUL_BIN := $(BUILD)/bench/bench_matmul

.PHONY: bench
bench: $(BENCH_BIN) $(BENCH_MATMUL_BIN)
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

$(BUILD)/bench/bench_mc.o: tests/bench/bench_mc.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_BIN): $(BUILD)/bench/bench_mc.o $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libvarprof.a $(LIBS)

# The matmul against this core's measured FMA peak (tests/bench/bench_matmul.c).
$(BUILD)/bench/bench_matmul.o: tests/bench/bench_matmul.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BENCH_MATMUL_BIN): $(BUILD)/bench/bench_matmul.o $(BUILD)/libvarprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libvarprof.a $(LIBS)

# Installs any missing Debian package the build and the tests need.
deps:
	@scripts/install-deps

# The chapter's figure set, committed in plots/.
figures: deps all
	$(BUILD)/varprof figures --outdir plots --format svg

run: deps all
	$(BUILD)/varprof --placement pre-norm --layers 32

# The tests find the program through VARPROF and their data through VARPROF_TESTDATA.
test: all $(TEST_BIN)
	@failed=0; for t in $(TEST_BIN); do \
	  VARPROF=$(BUILD)/varprof VARPROF_TESTDATA=tests/data $$t || failed=1; \
	done; test $$failed -eq 0

SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-san:
	$(MAKE) test BUILD=build-san CFLAGS="$(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)"

check: deps
	$(MAKE) test
	tests/install_test.sh
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) check-san

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/include/varprof $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/varprof
	install -m 755 $(BUILD)/varprof $(DESTDIR)$(PREFIX)/bin/varprof
	install -m 644 $(BUILD)/libvarprof.a $(DESTDIR)$(PREFIX)/lib/libvarprof.a
	install -m 644 include/varprof/*.h $(DESTDIR)$(PREFIX)/include/varprof/
	install -m 644 data/models.csv $(DESTDIR)$(PREFIX)/share/varprof/models.csv
	sed 's/@VERSION@/$(VERSION)/g' man/varprof.1 > $(DESTDIR)$(PREFIX)/share/man/man1/varprof.1
	chmod 644 $(DESTDIR)$(PREFIX)/share/man/man1/varprof.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/varprof $(DESTDIR)$(PREFIX)/lib/libvarprof.a \
	  $(DESTDIR)$(PREFIX)/share/man/man1/varprof.1
	rm -rf $(DESTDIR)$(PREFIX)/include/varprof $(DESTDIR)$(PREFIX)/share/varprof

clean:
	rm -rf build build-san

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
