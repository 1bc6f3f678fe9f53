# dcsim: set-up, run, test, bench. Everything installs into .venv/ in this directory.
VENV     := .venv
PY       := $(VENV)/bin/python
PIP      := $(PY) -m pip
EXT      := $(VENV)/.dcsim-built
DEV      := $(VENV)/.dev-extras-installed
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml workloads/*.txt workloads/homa/*.txt
# The optional extras (pyproject.toml) that testing, linting and the docs need; `make run` needs none.
DEV_EXTRAS := plot ray test lint docs

.PHONY: all install run test test-rust test-python bench bench-table figures lint lint-rust lint-python docs fuzz clean

all: install

# The virtualenv with the build tool (its pin is build-system.requires in pyproject.toml) and a
# TOML reader for the rule below.
$(PY):
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip "maturin>=1.5,<2" "tomli>=1.1; python_version < '3.11'"

# Builds the Rust core in release mode (LTO) and installs the package in editable mode, with
# its runtime dependencies only (pyproject.toml [project] dependencies, installed by maturin).
$(EXT): $(PY) pyproject.toml $(RUST_SRC) $(shell find python -name '*.py')
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q
	touch $@

# The extras in DEV_EXTRAS, read from pyproject.toml (their one definition); no build needed.
$(DEV): pyproject.toml | $(PY)
	$(PY) -c 'import sys; tomllib = __import__("tomllib" if sys.version_info >= (3, 11) else "tomli"); \
	  extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]; \
	  print("\n".join(r for name in sys.argv[1:] for r in extras[name]))' $(DEV_EXTRAS) > $(VENV)/dev-requirements.txt
	$(PIP) install -q -r $(VENV)/dev-requirements.txt
	touch $@

install: $(EXT)

run: install
	$(VENV)/bin/dcsim run examples/quickstart.toml --out runs/quickstart

test: install $(DEV) test-rust test-python

test-rust:
	cargo test --workspace --exclude dcsim-py --exclude dcsim-bench

test-python: install $(DEV)
	$(PY) -m pytest -q tests
	$(PY) -m mypy.stubtest dcsim._dcsim

# Micro-benchmarks, the foundation benchmark, issue 16's side-by-side table against the pHost
# authors' simulator (benchmarks/bench_table.py, several minutes) and the sweep efficiency.
bench: install
	cargo bench -p dcsim-bench --bench micro -- --warm-up-time 1 --measurement-time 3
	cargo run --release -q -p dcsim-bench --bin dcsim-e2e
	$(PY) benchmarks/bench_table.py --threads 2
	for t in 1 2; do \
	  cargo run --release -q -p dcsim-bench --bin dcsim-e2e -- --threads $$t benchmarks/phost-default.toml transport.protocol=pfabric workload.flows=10000 engine.partitioned=true || exit 1; \
	  cargo run --release -q -p dcsim-bench --bin dcsim-e2e -- --threads $$t benchmarks/phost-default.toml transport.protocol=phost workload.flows=10000 engine.partitioned=true || exit 1; \
	  cargo run --release -q -p dcsim-bench --bin dcsim-e2e -- --threads $$t benchmarks/phost-default.toml transport.protocol=fastpass workload.flows=10000 engine.partitioned=true || exit 1; \
	  cargo run --release -q -p dcsim-bench --bin dcsim-e2e -- --threads $$t benchmarks/fat-tree-k16.toml engine.partitioned=true || exit 1; \
	done
	$(PY) benchmarks/sweep_efficiency.py

# Rows of the side-by-side table only, e.g. `make bench-table ROWS=phost-websearch,pfabric-imc10`
# (empty: every row); THREADS=2 also runs each row partitioned on 2 threads.
bench-table: install
	$(PY) benchmarks/bench_table.py --rows "$(ROWS)" --threads $(or $(THREADS),1)

# The long fuzz run: a million generated spec trees through the resolver (no panic, errors name
# a field, resolution idempotent), 600 scaled-down valid specs run with every invariant, 600
# trees in the partitioned model run on 1 and 2 threads (same bytes), 600 runs with fuzzed
# packet losses (every flow finishes), and 20,000 generated trees, TOML texts and overrides
# through the Python layer (SpecError or ok).
fuzz: install $(DEV)
	DCSIM_FUZZ_CASES=1000000 DCSIM_FUZZ_RUNS=600 DCSIM_FUZZ_PARALLEL_RUNS=600 DCSIM_FUZZ_LOSS_RUNS=600 cargo test --release -p dcsim --test it fuzz -- --nocapture
	DCSIM_HYPOTHESIS_EXAMPLES=20000 $(PY) -m pytest -q tests/test_fuzz.py

# Every reproduction at quick scale, then docs/figures.md.
figures: install $(DEV)
	$(VENV)/bin/dcsim reproduce --all --scale quick

# The docs site (docs/ with the Python API reference rendered from the docstrings) in
# target/site/; a warning is an error.
docs: $(DEV)
	$(PY) -m mkdocs build --strict

lint: lint-rust lint-python

lint-rust:
	cargo fmt --all -- --check
	cargo clippy --workspace --exclude dcsim-py --all-targets -- -D warnings

# ruff (rules and line length in pyproject.toml) and mypy on the package and every figure module.
# The figure modules are all named figure.py, in folders such as pfabric-hotnets/fig2 that are no
# Python package names, so mypy checks them one at a time (cached: well under a second each).
lint-python: $(DEV)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m mypy python/dcsim
	for f in experiments/*/*/figure.py; do $(PY) -m mypy "$$f" || exit 1; done

clean:
	rm -rf target $(VENV) runs python/dcsim/*.so
