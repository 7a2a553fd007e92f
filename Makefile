# One entry per routine task; .ci/run calls these same targets. `make help` lists them.
PYTHON ?= python
OUT ?= dist

.PHONY: help develop test test-fast layers rust-lint rust-test lint docs wheel wheel-aarch64 sdist digest bench ci

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

develop:  ## build the extension in place (release profile) into the active environment
	$(PYTHON) -m maturin develop --release

test:  ## the whole Python test suite, slow coverage simulations included
	$(PYTHON) -m pytest

test-fast:  ## the Python tests without the slow coverage simulations
	$(PYTHON) -m pytest -m "not slow"

layers:  ## the import graph: no cycle, no import pointing up a layer
	$(PYTHON) scripts/check_layers.py

rust-lint:  ## cargo fmt and clippy, with and without the Python binding
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings

rust-test:  ## the Rust unit and property tests
	cargo test

lint: layers  ## ruff, ruff format and mypy --strict (needs .[lint])
	ruff check python tests benches scripts
	ruff format --check python tests benches scripts
	mypy

docs:  ## the documentation site, warnings as errors (needs .[docs])
	$(PYTHON) -m sphinx -W --keep-going -q -b html docs docs/_build/html

# manylinux2014 (glibc >= 2.17) wheels, linked by zig so that no old-glibc container is needed
# (pip install "maturin[zig]"); aarch64 is cross-compiled the same way (rustup target add
# aarch64-unknown-linux-gnu).
WHEEL = $(PYTHON) -m maturin build --release --zig --compatibility manylinux2014 --auditwheel check --out $(OUT)

wheel:  ## the release wheel (x86_64, abi3, manylinux2014) into $(OUT)
	$(WHEEL)

wheel-aarch64:  ## the same wheel for aarch64 (cross-compiled with zig) into $(OUT)
	$(WHEEL) --target aarch64-unknown-linux-gnu

sdist:  ## the source distribution into $(OUT) (builds with plain pip install and a Rust toolchain)
	$(PYTHON) -m maturin sdist --out $(OUT)

digest:  ## one digest of every capability's outputs (must not change with threads or builds)
	$(PYTHON) scripts/determinism_digest.py

bench:  ## the side-by-side benchmarks (needs .[bench]); results in bench-results/
	mkdir -p bench-results
	for b in benches/bench_*.py; do $(PYTHON) $$b --json bench-results/$$(basename $$b .py).json || exit 1; done

ci:  ## everything CI runs, on this checkout
	bash .ci/run
