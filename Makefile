# Two entry points work on a fresh machine: `make demo` and `make test`. Both create .venv first.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS := torch,index,llm,plot,mcp,sandbox,dev

.PHONY: demo test lint venv browser bench-capture ascend-env clean mutation

# The project's own Python files: what git tracks (and still exists). A user's untracked `my_kernels.py` or
# `dump/` is not linted; outside a git checkout, everything.
PY_FILES := $(or $(wildcard $(shell git ls-files '*.py' 2>/dev/null)),.)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first and pinned: the CPU build lies on disk; a resolver must never pull a CUDA build.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]" --config-settings editable_mode=compat
	touch $(STAMP)

venv: $(STAMP)

# Debian's chromium, for the HTML report test (a real headless browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium missing and not root: the browser test will skip"; fi; }

demo: $(STAMP)
	$(BIN)/python -m ladder.demo

# ruff (lint, format), the layer contract (import-linter), types (mypy); `make test` runs them before pytest.
lint: $(STAMP)
	$(BIN)/ruff check $(PY_FILES)
	$(BIN)/ruff format --check $(PY_FILES)
	$(BIN)/lint-imports
	$(BIN)/mypy

# One pytest worker per core (pytest-xdist); `make test PYTEST_WORKERS=0` runs them in one process.
PYTEST_WORKERS ?= auto

test: lint browser
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) tests

# Mutation testing (docs/mutation.md), not part of `make test`: mutmut over each group of tools/mutation.py
# (`make mutation GROUPS="hazards workspace"` for some of them), then a table of scores per file.
MUTATION_STAMP := $(VENV)/.mutation-installed
$(MUTATION_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS),mutation]" --config-settings editable_mode=compat
	touch $(MUTATION_STAMP)

mutation: $(MUTATION_STAMP)
	$(BIN)/python tools/mutation.py $(GROUPS)

bench-capture: $(STAMP)
	$(BIN)/python tools/capture_overhead.py

# triton-ascend (Triton 3.2 for Ascend NPUs) replaces `triton`, so it lives in its own environment.
ascend-env:
	PY=$(PY) scripts/ascend_env.sh

clean:
	rm -rf $(VENV) .venv-ascend out
