# The README's two commands. Each installs what it needs on a fresh Debian
# machine (as root), configures, builds, then runs the main job or the tests.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
DEBIAN_PACKAGES := cmake make gcc libc6-dev libjansson-dev pkg-config libopenmpi-dev openmpi-bin \
                   python3-numpy python3-cffi python3-pytest python3-pip \
                   python3-matplotlib libhdf5-dev python3-h5py

.PHONY: run test build deps sanitize fuzz clean

run: build
	./$(BUILD)/hinesbatch solve --cells 10000 --steps 20 --check
	./$(BUILD)/hinesbatch run examples/busyring_small.json -o $(BUILD)/busyring

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# The test suite again under AddressSanitizer and UndefinedBehaviorSanitizer, without MPI:
# Open MPI's own allocations, some in plugins it unloads, are reported as leaks.
sanitize: deps
	cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=Debug -DHB_SANITIZE=ON -DHB_CUDA=OFF -DHB_MPI=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD)-sanitize -j $(JOBS)
	cd $(BUILD)-sanitize && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# The libFuzzer targets (fuzz/, docs/reliability.md), FUZZ_SECONDS each from the seed corpora;
# needs clang. A crash, leak, slow or oversized input fails it (its input in $(BUILD)-fuzz/fuzz-work).
FUZZ_SECONDS ?= 60
fuzz: deps
	cmake -S . -B $(BUILD)-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release -DHB_FUZZ=ON -DHB_CUDA=OFF -DHB_MPI=OFF -DHB_OPENMP=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_targets
	rm -rf $(BUILD)-fuzz/fuzz-work
	fuzz/run.sh $(BUILD)-fuzz $(FUZZ_SECONDS)

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

clean:
	rm -rf $(BUILD) $(BUILD)-sanitize
