# dcsim: set-up, run, test, bench. Everything installs into .venv/ in this directory.
VENV     := .venv
PY       := $(VENV)/bin/python
PIP      := $(PY) -m pip
DEPS     := $(VENV)/.deps-installed
EXT      := $(VENV)/.dcsim-built
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml workloads/*.txt

.PHONY: all install run test test-rust test-python bench figures lint lint-rust lint-python fuzz clean

all: install

$(PY):
	python3 -m venv $(VENV)

$(DEPS): pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.5,<2" "numpy>=1.21" "pandas>=1.5" "pyarrow>=10" "rich>=13" "matplotlib>=3.5" "pytest>=7" "mypy>=1.8" "ray>=2.9" \
	  "ruff~=0.17.6" "pandas-stubs~=3.1.0" "hypothesis>=6"
	touch $@

# Builds the Rust core in release mode (LTO) and installs the package in editable mode.
$(EXT): $(DEPS) $(RUST_SRC) $(shell find python -name '*.py')
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q
	touch $@

install: $(EXT)

run: install
	$(VENV)/bin/dcsim run examples/quickstart.toml --out runs/quickstart

test: install test-rust test-python

test-rust:
	cargo test --workspace --exclude dcsim-py --exclude dcsim-bench

test-python: install
	$(PY) -m pytest -q tests
	$(PY) -m mypy.stubtest dcsim._dcsim

bench: install
	cargo bench -p dcsim-bench --bench micro -- --warm-up-time 1 --measurement-time 3
	cargo run --release -q -p dcsim-bench --bin dcsim-e2e
	for p in pfabric phost fastpass; do \
	  cargo run --release -q -p dcsim-bench --bin dcsim-e2e -- benchmarks/phost-default.toml transport.protocol=$$p || exit 1; \
	  cargo run --release -q -p dcsim-bench --bin dcsim-e2e -- benchmarks/phost-default.toml transport.protocol=$$p workload.flow_sizes=datamining workload.flows=10000 || exit 1; \
	done
	$(PY) benchmarks/sweep_efficiency.py

# The long fuzz run: a million generated spec trees through the resolver (no panic, errors name
# a field, resolution idempotent), 600 scaled-down valid specs run with every invariant, and
# 20,000 generated trees, TOML texts and overrides through the Python layer (SpecError or ok).
fuzz: install
	DCSIM_FUZZ_CASES=1000000 DCSIM_FUZZ_RUNS=600 cargo test --release -p dcsim --test it fuzz -- --nocapture
	DCSIM_HYPOTHESIS_EXAMPLES=20000 $(PY) -m pytest -q tests/test_fuzz.py

# Every reproduction at quick scale, then docs/figures.md.
figures: install
	$(VENV)/bin/dcsim reproduce --all --scale quick

lint: lint-rust lint-python

lint-rust:
	cargo fmt --all -- --check
	cargo clippy --workspace --exclude dcsim-py --all-targets -- -D warnings

# ruff (rules and line length in pyproject.toml) and mypy on the package and every figure module.
# The figure modules are all named figure.py, in folders such as pfabric-hotnets/fig2 that are no
# Python package names, so mypy checks them one at a time (cached: well under a second each).
lint-python: $(DEPS)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m mypy python/dcsim
	for f in experiments/*/*/figure.py; do $(PY) -m mypy "$$f" || exit 1; done

clean:
	rm -rf target $(VENV) runs python/dcsim/*.so
