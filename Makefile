# rocketlab: the two set-up commands are `make lab` (run the kit) and `make test` (run the tests).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
PYTEST_ARGS ?=

.PHONY: lab demo test venv java bench data lint clean

## venv: create .venv if missing and install the kit (re-installs when pyproject.toml changes)
venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e .
	@touch $@

$(TEST_STAMP): pyproject.toml $(STAMP)
	$(PIP) install --quiet -e '.[test]'
	@touch $@

## java: Spark 4 needs Java 17 or 21 (JAVA_HOME, else java on PATH; as root, installs Debian's JRE)
java:
	@if [ -n "$$JAVA_HOME" ] && [ -x "$$JAVA_HOME/bin/java" ]; then exit 0; fi; \
	if command -v java >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: installing Debian's openjdk-17-jre-headless for Spark"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	else \
	  echo "make: Spark needs Java 17 or 21: install openjdk-17-jre-headless (or use environment.yml with conda)" >&2; exit 1; \
	fi

## lab: JupyterLab on labs/ (prints the URL with its token)
lab: venv java
	$(VENV)/bin/rocketlab lab

## demo: the headless tour
demo: venv
	$(VENV)/bin/rocketlab demo

## test: create or refresh the venv, install the test extras, run the whole suite
test: $(TEST_STAMP) java
	$(PY) -m pytest $(PYTEST_ARGS)

## bench: run every benchmark and record its figures under benchmarks/results/
bench: $(TEST_STAMP) java
	$(VENV)/bin/rocketlab bench

## data: rebuild the sample runs under data/ (deterministic: the same bytes each time)
data: venv
	$(VENV)/bin/rocketlab data regenerate

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check rocketlab tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache runs
