# hepkg: `make help` lists the targets. `make setup` is run by every target that needs it.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.hepkg-installed
SCALE ?= default
ONLY ?=
PYTEST_ARGS ?=

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml scripts/setup.sh scripts/build_pyfhel.py
	bash scripts/setup.sh
	touch $(STAMP)

setup: $(STAMP) ## create .venv (Python 3.10) with hepkg and the pinned HE libraries; idempotent

test: $(STAMP) ## run the test suite (sets up first when needed)
	MPLBACKEND=Agg $(PY) -m pytest -m "not full" $(PYTEST_ARGS)

bench-ops: $(STAMP) ## per-op latency medians on every installed backend, beside the CSSC paper's Table 1
	$(PY) -m hepkg.bench.ops

lab: $(STAMP) ## start JupyterLab on the notebooks
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

clean: ## remove caches (keeps .venv and the cached Pyfhel wheel)
	rm -rf .pytest_cache .hypothesis build *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +

distclean: clean ## also remove .venv
	rm -rf $(VENV)

.PHONY: help setup test bench-ops lab clean distclean
