#!/bin/bash
# Face search's device pipelines on a GPU, one unit of Tables 7-8 per call, resumable across calls
# (docs/facesearch_gpu.md): first the gpu cases of tests/test_facesearch_gpu.py (the pipelines at a toy ring on
# the GPU, checked against numpy), then `python -m hepkg.facesearch.gpu_run`, which measures the first unit of its
# plan (K1024, streams, K32768, K65536, K131072) not committed complete in artifacts/facesearch_gpu/device/ and
# writes its rows to OUT/device/<unit>.jsonl as they finish. Copy OUT/device/* into artifacts/facesearch_gpu/device/
# and commit: the next call moves on. UNIT=K65536 picks a unit; T_CHECK and LIMIT (seconds, the whole run) bound the
# steps; databases are enrolled under TMP (default /tmp; never under OUT: 21.5 GB at K = 2^17). Needs CuPy and a
# CUDA device; PY names the interpreter.
set -u
OUT=${OUT:-gpu-facesearch}
PY=${PY:-python3}
LIMIT=${LIMIT:-480}
UNIT=${UNIT:-next}
TMP=${TMP:-/tmp}
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg HEPKG_RNS_XP=${XP:-cupy}
mkdir -p "$OUT/device"
source "$(dirname "$0")/gpu_steps.sh"

step 00_check "${T_CHECK:-90}" $PY -m pytest -p no:cacheprovider -p no:benchmark -n 0 -q -rs -m gpu \
    tests/test_facesearch_gpu.py
if ! tail -n 1 "$OUT/00_check.log" | grep -q "^rc=0 "; then
  echo "the pipelines' CuPy check failed (OUT/00_check.log): no unit measured"
  exit 1
fi
step 01_unit "$LIMIT" $PY -m hepkg.facesearch.gpu_run --out "$OUT/device" --unit "$UNIT" --tmp "$TMP" ${RUN_ARGS:-}
echo "total $(($(date +%s) - T0)) s"
