# One-command set-up: every target creates .venv and installs what it needs on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: all setup oracles demo test lint bench clean

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

test: setup
	$(BIN)/python -m pytest -n auto -q

lint: $(STAMP)
	$(BIN)/ruff check .

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
