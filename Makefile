# Every target creates .venv on first use and installs the package with its dev extra.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck unit demo bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q -n 2

test: lint typecheck unit

demo: $(STAMP)
	$(BIN)/kubetide simulate examples/quickstart.yaml --output-dir out/quickstart

bench: $(STAMP)
	$(BIN)/python -m kubetide.bench all

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
