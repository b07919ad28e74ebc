#!/bin/bash
# The GPU checks in one run (docs/testing.md "On a GPU"): the rns engine's tests with their CuPy cases, the
# protocol suites on CuPy at ckks-32768-d9 (make test-rns), the rns bench on CuPy, and a probe of the face-search
# device pipelines at the paper's ring. Each step has a time limit (seconds, overridable: T_ENV, T_TESTS, T_RNS,
# T_BENCH, T_PIPELINES; the whole run stops at LIMIT) and writes <step>.log into OUT; the tables land in
# OUT/art/bench, packed into OUT/art.tgz at the end. Needs CuPy and a CUDA device; PY names the interpreter.
set -u
OUT=${OUT:-gpu-check}
PY=${PY:-python3}
LIMIT=${LIMIT:-600}
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg OMP_NUM_THREADS=1
mkdir -p "$OUT/art/bench"
T0=$(date +%s)

step() {  # step NAME SECONDS COMMAND...: run it within its limit and what is left of LIMIT
  local name=$1 t=$2 s left
  shift 2
  left=$((LIMIT - ($(date +%s) - T0)))
  ((t > left)) && t=$left
  if ((t < 5)); then echo "skipped: LIMIT reached" >"$OUT/$name.log"; return; fi
  echo "== $name (limit $t s) $(date +%T)"
  s=$(date +%s)
  timeout "$t" "$@" >"$OUT/$name.log" 2>&1
  echo "rc=$? in $(($(date +%s) - s)) s" | tee -a "$OUT/$name.log"
}

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
# the device pipelines at ckks-32768-d9, l 512, kappa 8, 3 rounds: BSGS-GPU-TBS/TBE at K 2^10, then 2^16, then
# HyDia-GPU-DG at 2^10 (its 516 keys are made on the host first); the rows of each call saved as it ends
step 04_pipelines "${T_PIPELINES:-400}" env HEPKG_RNS_XP=cupy $PY -c "
import pandas as pd
from hepkg.facesearch import gpu
plan = [(('bsgs-tbs', 'bsgs-tbe'), 2 ** 10), (('bsgs-tbs', 'bsgs-tbe'), 2 ** 16), (('hydia-dg',), 2 ** 10)]
for i, (variants, K) in enumerate(plan):
    rows = pd.DataFrame(gpu.measure(dict(params='ckks-32768-d9', K=K, Km=16, l=512, kappa=8, reps=3, seed=0,
                                         variants=variants)))
    rows.to_csv('$OUT/art/bench/gpu_pipelines_probe_{}.csv'.format(i), index=False)
    print(rows[['variant', 'K', 'rep', 'membership_s', 'phase_baby_steps_s', 'identify_s', 'correct']].to_string())"
tar czf "$OUT/art.tgz" -C "$OUT" art && rm -rf "$OUT/art"
echo "total $(($(date +%s) - T0)) s"
