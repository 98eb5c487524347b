# One-command set-up: every target creates .venv and installs what it needs on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: all setup oracles demo test fuzz check lint bench clean

# Python writes the bytecode of the project's modules (into __pycache__, which git ignores) even where the
# environment says not to (PYTHONDONTWRITEBYTECODE, set on this project's machines): the suite starts hundreds of
# Python processes (simgpu run servers and clients, JIT workers, the CLI's tests), and each compiled every project
# module it imported from source (`simgpu run -- true`: 0.66 CPU-s, 0.30 with bytecode; pytest's collection of the
# suite 10 CPU-s a worker, 3.7 with it).
unexport PYTHONDONTWRITEBYTECODE

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@# the interposer of `simgpu run` (system C compiler); without one, `simgpu run` says so and its tests skip
	$(BIN)/python -m mockgpu.native || echo "make setup: the simgpu run interposer was not built: its tests skip"
	@# tinygrad's PyPI sdist, for its test/test_tiny.py under `simgpu run` (tests/wiring/test_run_sdist.py)
	$(BIN)/python -m tests.support.sdist || echo "make setup: tinygrad's sdist was not fetched: its tests skip"
	touch $(STAMP)

# LLVM 19 command-line tools are the test oracles (llvm-mc, llvm-objdump, ld.lld, clang).
oracles:
	@sh tools/install-oracles.sh

setup: $(STAMP) oracles

demo: setup
	$(BIN)/simgpu demo

# The whole suite on every CPU. worksteal: a worker that runs dry takes half of another's queue (tests/support/
# schedule.py starts every worker on its share of the files of the longest tests, from tests/data/suite_durations.json:
# those with a test of at least 1% of a worker's share of the recorded run, so the run ends on short ones); a progress
# line with an ETA at every tenth (tests/support/progress.py); the 20 slowest tests listed at the end. Regenerate the
# figures from a cold run's JUnit: tools/suite_durations.py.
PYTEST_XDIST := -n auto --dist worksteal

test: setup
	$(BIN)/python -m pytest $(PYTEST_XDIST) -q --durations=20

# The property tests (hypothesis) with fresh random examples, ten times as many where a test keeps the default
# (tests/conftest.py): the suite's own draws are fixed so that CI is reproducible; this is where new cases are found.
fuzz: setup
	SIMGPU_HYPOTHESIS=fuzz $(BIN)/python -m pytest $(PYTEST_XDIST) -q -m "not slow" $$(grep -rl --include='test_*.py' '@given' tests)

# A quick subset touching every layer (at most a minute on 2 cores): ISA, hardware definitions, memory, the shader
# engine, the SoC, mockgpu, the runtime, the compiler, traces, the CLI, and tinygrad as a client under simgpu run.
CHECK_TESTS := \
	tests/simgpu/isa/test_isa_scalar.py tests/simgpu/hw/test_hw_soc21.py tests/simgpu/mem/test_mmu_windows.py \
	tests/simgpu/shader/test_shader_engine.py tests/simgpu/soc/test_soc.py \
	tests/mockgpu/test_mockgpu_ioctl.py tests/mockgpu/test_mockgpu_pci.py \
	tests/runtime/test_runtime_launch.py tests/runtime/test_runtime_devices.py tests/runtime/test_runtime_args.py \
	tests/compiler/test_ir.py tests/compiler/test_cpu_device.py tests/compiler/test_ops_creation.py \
	tests/traces/test_traces_cli.py tests/wiring/test_disasm_cli.py \
	tests/wiring/test_run_tinygrad.py::test_add tests/wiring/test_run_tinygrad.py::test_matmul_64x64_matches_numpy

check: setup
	$(BIN)/python -m pytest $(PYTEST_XDIST) -q --durations=5 $(CHECK_TESTS)

lint: $(STAMP)
	$(BIN)/ruff check .

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
