# AsyncRT front door. Every target installs what is missing first (Debian 12
# packages, idempotent: nothing happens when all are present).
#
#   make run     build, then run the bundled example
#   make test    build, then run every test (unit, lit, ThreadSanitizer and
#                AddressSanitizer builds of the runtime libraries)
#   make build   build everything, run nothing
#   make bench   build and run the benchmarks against their peers; writes
#                build/bench/summary.json
#   make format  clang-format the sources

SHELL := /bin/bash
BUILD_DIR ?= build
TSAN_DIR ?= build-tsan
ASAN_DIR ?= build-asan
JOBS ?= $(shell nproc)
CTEST_JOBS ?= $(JOBS)

DEPS := cmake ninja-build ccache g++ python3 libabsl-dev libgtest-dev \
        libgmock-dev libbenchmark-dev llvm-22-dev libmlir-22-dev \
        mlir-22-tools llvm-22-tools python3-psutil clang libclang-rt-14-dev \
        libdnnl-dev libeigen3-dev libonnx-dev libonnx-testdata libprotobuf-dev \
        python3-torch python3-torchvision python3-onnx libopenblas0-pthread \
        ocl-icd-opencl-dev libboost-dev rapidjson-dev curl \
        libgrpc++-dev protobuf-compiler-grpc protobuf-compiler python3-yaml
# ocl-icd-opencl-dev: Debian's oneDNN CMake package requires OpenCL (its GPU
# runtime) but only recommends it, and we install without recommends.
# OpenBLAS: libtorch's matmul peer uses the system BLAS, by default the
# reference one.
# Node.js from another source (NodeSource's package bundles npm) conflicts
# with Debian's npm package: take Debian's only where there is no npm.
BENCH_DEPS := libtbb-dev libtorch-dev libopenblas0-pthread \
              wrk nginx-light $(if $(shell command -v npm),,nodejs npm)

CMAKE_COMMON := -G Ninja $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
RUNTIME_ONLY := -DASYNCRT_RUNTIME_ONLY=ON -DASYNCRT_BUILD_BENCHMARKS=OFF

.PHONY: all run test build bench deps bench-deps configure format clean

all: build

deps:
	@bash tools/install_deps.sh $(DEPS)

bench-deps: deps
	@bash tools/install_deps.sh $(BENCH_DEPS)

configure: deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_COMMON)

build: configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/bin/asyncrt-translate -mlir-to-bef examples/tour.mlir -o $(BUILD_DIR)/tour.bef
	$(BUILD_DIR)/bin/bef_executor --work_queue_type=mstd:2 $(BUILD_DIR)/tour.bef
	$(BUILD_DIR)/bin/host_context_demo
	$(BUILD_DIR)/bin/eager_example
	$(BUILD_DIR)/bin/lazy_example

test: build
	cmake -S . -B $(TSAN_DIR) $(CMAKE_COMMON) $(RUNTIME_ONLY) -DASYNCRT_SANITIZER=thread -DASYNCRT_ENABLE_CUDA=OFF
	ninja -C $(TSAN_DIR) -j $(JOBS)
	cmake -S . -B $(ASAN_DIR) $(CMAKE_COMMON) $(RUNTIME_ONLY) -DASYNCRT_SANITIZER=address -DASYNCRT_ENABLE_CUDA=OFF
	ninja -C $(ASAN_DIR) -j $(JOBS)
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(CTEST_JOBS)
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --test-dir $(TSAN_DIR) --output-on-failure -j $(CTEST_JOBS)
	ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" \
	  ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(CTEST_JOBS)

bench: bench-deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_COMMON) -DASYNCRT_BUILD_BENCHMARKS=ON
	ninja -C $(BUILD_DIR) -j $(JOBS)
	bash benchmarks/run_all.sh $(BUILD_DIR)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf $(BUILD_DIR) $(TSAN_DIR) $(ASAN_DIR)
