#!/bin/bash
# The GPU checks of the rns engine in one run (docs/testing.md "On a GPU"): the engine's tests with their CuPy
# cases, the protocol suites on CuPy at ckks-32768-d9 (make test-rns) and the rns bench on CuPy. Each step has a
# time limit (seconds, overridable: T_ENV, T_TESTS, T_RNS, T_BENCH; the whole run stops at LIMIT) and writes
# <step>.log into OUT; the tables land in OUT/art/bench, packed into OUT/art.tgz at the end. Needs CuPy and a CUDA
# device; PY names the interpreter. The face-search pipelines have their own resumable script,
# scripts/gpu_facesearch.sh.
set -u
OUT=${OUT:-gpu-check}
PY=${PY:-python3}
LIMIT=${LIMIT:-450}
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg OMP_NUM_THREADS=1
mkdir -p "$OUT/art/bench"
source "$(dirname "$0")/gpu_steps.sh"

step 00_env "${T_ENV:-30}" bash -c "nvidia-smi; lscpu | head -14; $PY -c 'import sys, numpy, cupy, pandas
print(sys.version, numpy.__version__, cupy.__version__, pandas.__version__, cupy.cuda.runtime.runtimeGetVersion())
import dataclasses; from hepkg.facesearch import gpu; print(dataclasses.asdict(gpu.device_info(cupy)))'"
step 01_rns_tests "${T_TESTS:-200}" $PY -m pytest -p no:cacheprovider -p no:benchmark -n 8 -m "not full and not slow" -q -rs \
    tests/test_rns_*.py tests/test_facesearch_gpu.py
step 02_test_rns_cupy "${T_RNS:-130}" env HEPKG_RNS_XP=cupy HEPKG_TEST_CKKS=ckks-32768-d9 HEPKG_TEST_CKKS_BACKENDS=rns \
    $PY -m pytest -p no:cacheprovider -p no:benchmark -n 8 --dist load -m "not full and not slow" -q -rs \
    tests/test_he_protocol.py tests/test_hardening.py tests/test_fuzz.py
step 03_bench_rns_cupy "${T_BENCH:-90}" env HEPKG_ARTIFACTS="$OUT/art" \
    $PY -m hepkg.bench.rns_ops --paths cupy --save --tag gpu
tar czf "$OUT/art.tgz" -C "$OUT" art && rm -rf "$OUT/art"
echo "total $(($(date +%s) - T0)) s"
