# hepkg: `make help` lists the targets. `make setup` is run by every target that needs it.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.hepkg-installed
SCALE ?= default
ONLY ?=
EXECUTOR ?= inline
COMPUTE ?= cpu
PYTEST_ARGS ?=
TEST_WORKERS ?= 2
OVERWRITE ?= 0
# tests run as users run them: with bytecode caching on, whatever the calling shell set
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE MPLBACKEND=Agg
# JupyterLab opens on the README, Markdown shown rendered (.jupyterlab/overrides.json); root needs --allow-root
LAB_ARGS := --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/README.md --LabApp.app_settings_dir=$(CURDIR)/.jupyterlab
KEEP ?= 0
CUDA_BASE := nvidia/cuda:12.4.1-runtime-ubuntu22.04
comma := ,

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml scripts/setup.sh scripts/build_pyfhel.py
	bash scripts/setup.sh
	touch $(STAMP)

setup: $(STAMP) ## create .venv (Python 3.10) with hepkg and the pinned HE libraries; idempotent

test: $(STAMP) ## does the install work? every backend, every section at quick scale, the notebooks (nbval), on 2 cores: about 10 min
	$(TEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not full and not slow and not long" \
		--nbval-lax --nbval-current-env notebooks tests $(PYTEST_ARGS)

test-long: $(STAMP) ## what make test leaves out (CI runs both): fuzzing (1,000 mutations per deserializer), long suites, test-rns
	$(TEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) --dist load -m "(slow or long) and not full" --durations=20 tests $(PYTEST_ARGS)
	$(MAKE) test-rns

test-slow: $(STAMP) ## the fuzzing alone: 1,000 mutations per deserializer and backend (HEPKG_FUZZ_TRIALS); part of test-long
	$(TEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) --dist load -m slow tests $(PYTEST_ARGS)

test-rns: $(STAMP) ## the protocol, hardening and fuzz suites with rns (numpy) as the CKKS backend, at the 128-bit face-search set ckks-32768-d9
	$(TEST_ENV) HEPKG_TEST_CKKS=ckks-32768-d9 HEPKG_TEST_CKKS_BACKENDS=rns $(PY) -m pytest -n $(TEST_WORKERS) --dist load -m "not full and not slow" \
		tests/test_he_protocol.py tests/test_hardening.py tests/test_fuzz.py $(PYTEST_ARGS)

reproduce: $(STAMP) ## run the notebooks: SCALE=default into artifacts/ (the committed results), quick|full into artifacts/_<scale>/ (OVERWRITE=1: into artifacts/); ONLY=spmv,gemm, EXECUTOR=inline|process|dask
	MPLBACKEND=Agg $(PY) -m hepkg.reproduce --scale $(SCALE) --executor $(EXECUTOR) $(if $(ONLY),--only $(ONLY)) $(if $(filter 1,$(OVERWRITE)),--overwrite)

figures: $(STAMP) ## rebuild every table, figure, claim, results page and the README's results table from the committed raw tables, computing nothing
	MPLBACKEND=Agg $(PY) -m hepkg.bench.versus --render-only
	MPLBACKEND=Agg $(PY) -m hepkg.reproduce --render-only $(if $(ONLY),--only $(ONLY))

check-figures: $(STAMP) ## CI: make figures on a clean tree must leave it clean (byte-identical tables, figures, pages, executed notebooks)
	@git diff --quiet HEAD -- || { echo "check-figures needs a tree without uncommitted changes"; git status --short; exit 1; }
	@before=$$(git status --porcelain); $(MAKE) --no-print-directory figures; after=$$(git status --porcelain); \
	  if [ "$$before" != "$$after" ]; then echo "make figures changed the committed tree:"; git --no-pager diff --stat; \
	    diff <(echo "$$before") <(echo "$$after"); exit 1; fi; echo "check-figures: make figures left the tree as it was"

bench: $(STAMP) ## hepkg beside the authors' code / the paper's baseline (HEPKG_AUTHORS_CSSC=DIR ...; ONLY=spmv,gemm,facesearch,fasthe,omr) -> artifacts/bench
	MPLBACKEND=Agg $(PY) -m hepkg.bench.versus $(subst $(comma), ,$(ONLY))

bench-rns: $(STAMP) ## the rns engine (numpy, numba; CuPy on a GPU: each op's floor) beside OpenFHE at 1 and every thread: NTT, product, rotation, hoisted steps (N = 2^15, 2^16; depth 9, 11) -> artifacts/bench/rns_*
	$(PY) -m hepkg.bench.rns_ops --save

bench-ops: $(STAMP) ## per-op latency medians on every installed backend, beside the CSSC paper's Table 1
	$(PY) -m hepkg.bench.ops

lab: $(STAMP) ## JupyterLab at the repository's root, opening on the README: notebooks/ and artifacts/ (executed copies, tables, figures, results pages)
	$(VENV)/bin/jupyter lab $(LAB_ARGS) $(if $(filter 0,$(shell id -u)),--allow-root)

docker: ## build the image hepkg:cpu (COMPUTE=gpu: hepkg:gpu on a CUDA base); run it: docker run --rm --init -p 8888:8888 hepkg:cpu
	docker build $(if $(filter gpu,$(COMPUTE)),--build-arg BASE=$(CUDA_BASE)) --build-arg COMPUTE=$(COMPUTE) -t hepkg:$(COMPUTE) .

docker-test: ## as root: build the image on a debootstrap stand-in base with podman, run make test, a quick reproduce and JupyterLab in it (KEEP=1 keeps it)
	KEEP=$(KEEP) COMPUTE=$(COMPUTE) PYTEST_ARGS="$(PYTEST_ARGS)" bash scripts/docker-test.sh

clean: ## remove caches (keeps .venv and the cached Pyfhel wheel)
	rm -rf .pytest_cache .hypothesis build *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +

distclean: clean ## also remove .venv
	rm -rf $(VENV)

.PHONY: help setup test test-long test-slow test-rns reproduce figures check-figures bench bench-rns bench-ops lab docker docker-test clean distclean
