# rocketlab: the two set-up commands are `make lab` (run the kit) and `make test` (run the tests).
# Everything installs into .venv with the versions CI tested (constraints.txt); pip shows its progress.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip --disable-pip-version-check
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
CONSTRAINTS := constraints.txt
PYTEST_ARGS ?=

.PHONY: lab demo test venv java bench data docs wheel doctor constraints lint clean

## venv: create .venv if missing and install the kit (re-installs when pyproject.toml or constraints.txt change)
venv: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	@echo "make: installing the kit into $(VENV): the first time downloads about 0.6 GB and fills about 1.2 GB (1-3 minutes with a warm pip cache, longer without)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install -c $(CONSTRAINTS) -e .
	@touch $@

$(TEST_STAMP): pyproject.toml $(CONSTRAINTS) $(STAMP)
	@echo "make: installing the test extras (pytest, playwright, sphinx, ...) into $(VENV)"
	$(PIP) install -c $(CONSTRAINTS) -e '.[test]'
	@touch $@

## java: Spark 4 needs Java 17 or 21 (JAVA_HOME, else java on PATH; as root, installs Debian's JRE)
java:
	@if [ -n "$$JAVA_HOME" ] && [ -x "$$JAVA_HOME/bin/java" ]; then exit 0; fi; \
	if command -v java >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: installing Debian's openjdk-17-jre-headless for Spark (about 200 MB)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	else \
	  echo "make: Spark needs Java 17 or 21: install openjdk-17-jre-headless (or use environment.yml with conda)" >&2; exit 1; \
	fi

## lab: JupyterLab on labs/ (prints the URL with its token; open labs/00_tour.ipynb first)
lab: venv java
	$(VENV)/bin/rocketlab lab

## demo: the headless tour
demo: venv
	$(VENV)/bin/rocketlab demo

## doctor: what this machine has for the kit, and what to do about anything missing
doctor: venv
	$(VENV)/bin/rocketlab doctor

## test: create or refresh the venv, install the test extras, run the whole suite
test: $(TEST_STAMP) java
	$(PY) -m pytest $(PYTEST_ARGS)

## bench: run every benchmark and record its figures under benchmarks/results/
bench: $(TEST_STAMP) java
	$(VENV)/bin/rocketlab bench

## data: rebuild the sample runs under data/ (deterministic: the same bytes each time)
data: venv
	$(VENV)/bin/rocketlab data regenerate

## docs: the documentation site from docs/ (Markdown pages + API pages from the docstrings) in docs/_build/html
docs: $(TEST_STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

## wheel: the sdist and the wheel (with the labs, exercises, sample data and benchmarks) in dist/
wheel: $(TEST_STAMP)
	$(PY) -m build --outdir dist .

## constraints: re-resolve the dependencies in a scratch venv and pin them in constraints.txt (then run make test)
constraints:
	rm -rf build/constraints-venv
	$(PYTHON) -m venv build/constraints-venv
	build/constraints-venv/bin/pip install --disable-pip-version-check --quiet '.[test]'
	{ echo "# The versions CI tested (Python 3.11, Linux x86-64): pip install -c constraints.txt rocketlab"; \
	  echo "# pins a class environment to them. Regenerate with make constraints, then run make test."; \
	  build/constraints-venv/bin/pip freeze --exclude rocketlab; } > $(CONSTRAINTS)
	rm -rf build/constraints-venv

## lint: ruff, the layer contract of docs/architecture.md (import-linter) and the modules' and functions' budgets
lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check rocketlab tests benchmarks
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q tests/test_architecture.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache runs build dist docs/_build docs/api/generated
