# One entry per routine task; .ci/run calls these same targets. `make help` lists them.
PYTHON ?= python
OUT ?= dist

.PHONY: help develop test test-fast layers rust-lint rust-test lint docs wheel digest bench ci

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

wheel:  ## the release wheel into $(OUT), checked by auditwheel
	$(PYTHON) -m maturin build --release --auditwheel check --out $(OUT)

digest:  ## one digest of every capability's outputs (must not change with threads or builds)
	$(PYTHON) scripts/determinism_digest.py

bench:  ## the side-by-side benchmarks (needs .[bench]); results in bench-results/
	mkdir -p bench-results
	for b in benches/bench_*.py; do $(PYTHON) $$b --json bench-results/$$(basename $$b .py).json || exit 1; done

ci:  ## everything CI runs, on this checkout
	bash .ci/run
