# sweep: one non-recursive Makefile. Targets: all (build/sweep), demo, check, bench, fuzz, deps, deps-run,
# clean.
# Configuration can be overridden on the command line: make CUDA=0, make CUDA_ARCH="-arch=sm_90".

CC      ?= gcc
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
OPT     ?= -O2 -g
MPICC_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null)
MPICC_LIBS   := $(shell mpicc --showme:link 2>/dev/null)
# Extra include and library folders, for machines that lack a -dev package (tests/gpu/lib.sh passes vendor/).
EXTRA_CFLAGS ?=
EXTRA_LIBS   ?=
SQLITE_LIBS  ?= -lsqlite3
LIBS := $(EXTRA_LIBS) -lyaml $(SQLITE_LIBS) -ljansson -lpcre2-8 -lcrypto -lhwloc -lopenblas $(MPICC_LIBS) -lpthread -ldl -lm

# CUDA is built when nvcc is found (CUDA=0 turns it off). The binary links cudart statically, so a machine
# without a driver still runs every CPU kernel.
NVCC      ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA      ?= $(if $(NVCC),1,0)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_120,code=[sm_120,compute_120]
NVFLAGS   := -std=c++17 -O3 -g $(CUDA_ARCH) -Xcompiler -Wall,-Wextra,-Werror,-Wno-unused-parameter \
             -DSWEEP_CUDA $(MPICC_CFLAGS)

B := build
NPROC := $(shell nproc 2>/dev/null || echo 2)
# Objects of CUDA and CPU-only builds live apart, so that switching CUDA= never mixes them.
O := $(B)/$(if $(filter 1,$(CUDA)),cuda,cpu)
SRC_C  := $(filter-out src/main.c,$(wildcard src/*.c)) $(wildcard src/builtin/*.c) $(wildcard kernels/*.c)
SRC_CU := $(wildcard src/*.cu) $(wildcard kernels/*.cu)
CFLAGS_ALL = $(CSTD) $(WARN) $(OPT) $(EXTRA_CFLAGS) $(MPICC_CFLAGS) -MMD -MP
ifeq ($(CUDA),1)
CFLAGS_ALL += -DSWEEP_CUDA -I$(CUDA_HOME)/include
LIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart_static -lnccl -lrt -lstdc++
OBJ := $(SRC_C:%.c=$(O)/%.o) $(SRC_CU:%.cu=$(O)/%.o)
else
OBJ := $(SRC_C:%.c=$(O)/%.o)
endif

all: $(B)/sweep

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(O)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) $(EXTRA_CFLAGS) -c $< -o $@

# The commit the binary is built from (version.c): kept in $(B)/commit, rewritten only when it changes, so
# that a new commit rebuilds version.o alone. COMMIT= overrides it (a build from an archive has no git).
GIT_HEAD := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
COMMIT ?= $(GIT_HEAD)$(if $(GIT_HEAD),$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty))
$(shell mkdir -p $(B) && (echo '$(COMMIT)' | cmp -s - $(B)/commit || echo '$(COMMIT)' > $(B)/commit))
$(O)/src/version.o: $(B)/commit
$(O)/src/version.o: CFLAGS_ALL += -DSWEEP_COMMIT='"$(COMMIT)"'

$(O)/libsweep.a: $(OBJ)
	rm -f $@ && ar rcs $@ $^

# Always relinked (it is quick): build/sweep is whichever of the CUDA and CPU builds was made last.
$(B)/sweep: $(O)/src/main.o $(O)/libsweep.a FORCE
	$(CC) -o $@ $(O)/src/main.o $(O)/libsweep.a $(LIBS)
FORCE:

# Unit tests: one program per tests/unit/test_*.c, linked with the library. A sanitizer build of the same
# tests (no CUDA: the CUDA runtime and ASan do not mix) lives in build/san.
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
$(B)/tests/%: tests/unit/%.c $(O)/libsweep.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -iquote src -o $@ $< $(O)/libsweep.a $(LIBS)

# The fake NVML the tests load instead of the driver's (SWEEP_NVML_LIB): test_nvml and the e2e tests of
# locked clocks (tests/e2e/t0450-clocks.sh) use it.
FAKE_NVML := $(B)/tests/fake/libnvidia-ml.so.1
$(FAKE_NVML): tests/unit/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g -shared -fPIC -o $@ $<
$(B)/tests/test_nvml $(B)/san/tests/test_nvml: $(FAKE_NVML)

# The fake CUPTI the tests load instead of the toolkit's (SWEEP_CUPTI_LIB): test_counters and
# tests/e2e/t0461-cupti.sh use it. Built against the toolkit's CUPTI headers, so only where CUDA is.
FAKE_CUPTI := $(if $(filter 1,$(CUDA)),$(B)/tests/fake/libcupti-fake.so)
$(B)/tests/fake/libcupti-fake.so: tests/unit/fake_cupti.cc
	@mkdir -p $(dir $@)
	c++ -std=c++17 -Wall -Wextra -Werror -Wno-unused-parameter -O1 -g -shared -fPIC -I$(CUDA_HOME)/include -o $@ $<
$(B)/tests/test_counters: $(FAKE_CUPTI)

SAN := $(B)/san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_OBJ := $(SRC_C:%.c=$(SAN)/%.o)
$(SAN)/src/version.o: $(B)/commit
$(SAN)/src/version.o: EXTRA_CFLAGS += -DSWEEP_COMMIT='"$(COMMIT)"'
$(SAN)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(SANFLAGS) $(EXTRA_CFLAGS) $(MPICC_CFLAGS) -MMD -MP -c $< -o $@
$(SAN)/libsweep.a: $(SAN_OBJ)
	rm -f $@ && ar rcs $@ $^
$(SAN)/tests/%: tests/unit/%.c $(SAN)/libsweep.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(SANFLAGS) $(EXTRA_CFLAGS) $(MPICC_CFLAGS) -iquote src -o $@ $< \
		$(SAN)/libsweep.a $(filter-out -lcudart_static -lnccl -lstdc++,$(LIBS))
SAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(SAN)/tests/%)

# The Google Benchmark binary of examples/tools/gbench.yaml (Debian's libbenchmark-dev, which make deps
# installs).
$(B)/tools/gbench: examples/tools/gbench.cc
	@mkdir -p $(dir $@)
	c++ -std=c++17 -O2 -o $@ $< -lbenchmark -lpthread

deps:
	@tools/deps.sh all

# What building and running sweep needs, without the services the tests start (Slurm, munge, sshd).
deps-run:
	@tools/deps.sh run

demo: deps-run
	$(MAKE) -j$(NPROC) $(B)/sweep
	rm -f results/demo.db*
	$(B)/sweep run sweeps/demo.yaml
	$(B)/sweep report results/demo.db --rows dtype,M --cols N --metric gflops

# The pictures of the docs (docs/figures/: every kind of figure and the tour's page), drawn again from the
# simulated examples; tests/e2e/t0557-docs-figures.sh fails when they are not what the code draws.
figures: deps-run
	$(MAKE) -j$(NPROC) $(B)/sweep
	SWEEP=$(CURDIR)/$(B)/sweep tools/figures.sh docs/figures

check: deps
	$(MAKE) -j$(NPROC) $(B)/sweep $(UNIT_BIN) $(FAKE_NVML) $(FAKE_CUPTI)
	$(MAKE) -j$(NPROC) CUDA=0 $(SAN_BIN)
	SWEEP_CHECK=1 LAYERS_OBJ=$(O) tests/run.sh tests/layers.py tests/layers_planted.py tests/docs_links.py $(UNIT_BIN) $(SAN_BIN) $(sort $(wildcard tests/e2e/t*.sh))

# Debian's python3 has mpi4py (python3-mpi4py), whatever python3 comes first on PATH.
bench: deps
	$(MAKE) -j$(NPROC) $(B)/sweep
	tests/bench.sh
	tests/bench_start.sh
	tests/bench_report.sh
	tests/bench_command.sh
	tests/bench_exclude.sh

# Fuzzing the spec parser with libFuzzer (clang). FUZZ_SECONDS=300 for the long run.
FUZZ_SECONDS ?= 60
FUZZ_OBJ := $(SRC_C:%.c=$(B)/fuzz/%.o)
$(B)/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(CSTD) -O1 -g -fsanitize=fuzzer-no-link,address,undefined $(EXTRA_CFLAGS) $(MPICC_CFLAGS) -c $< -o $@
$(B)/fuzz_spec: tests/fuzz/fuzz_spec.c $(FUZZ_OBJ)
	clang $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined -iquote src -o $@ $^ \
		$(filter-out -lcudart_static -lnccl -lstdc++,$(LIBS))
fuzz: deps
	$(MAKE) CUDA=0 $(B)/fuzz_spec
	mkdir -p $(B)/fuzz-corpus
	$(B)/fuzz_spec -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
		$(B)/fuzz-corpus tests/fuzz/corpus

clean:
	rm -rf $(B)

.PHONY: all deps deps-run demo figures check bench fuzz clean FORCE
.SECONDARY:
-include $(shell find $(B) -name '*.d' 2>/dev/null)
