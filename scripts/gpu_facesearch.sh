#!/bin/bash
# Face search's device pipelines on a GPU, one unit of Tables 7-8 per call, resumable across calls
# (docs/facesearch_gpu.md): first the gpu cases of tests/test_facesearch_gpu.py (the pipelines at a toy ring on
# the GPU, checked against numpy), then `python -m hepkg.facesearch.gpu_run`, which measures the first unit of its
# plan (K1024, streams, K32768, K65536, K131072) not committed complete in artifacts/facesearch_gpu/device/ and
# writes its rows to OUT/device/<unit>.jsonl as they finish. Copy OUT/device/* into artifacts/facesearch_gpu/device/
# and commit: the next call moves on. UNIT=K65536 picks a unit; CHECK=0 skips the check (it passed on this machine
# already); T_CHECK, T_UNIT (at most 8 minutes by default) and LIMIT (the whole run) bound the steps, in seconds;
# databases are enrolled under TMP (default /tmp; never under OUT: 21.5 GB at K = 2^17); RUN_ARGS adds arguments
# (e.g. --variants bsgs-tbs,bsgs-tbe). Needs CuPy and a CUDA device; PY names the interpreter.
set -u
OUT=${OUT:-gpu-facesearch}
PY=${PY:-python3}
LIMIT=${LIMIT:-570}
UNIT=${UNIT:-next}
TMP=${TMP:-/tmp}
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg HEPKG_RNS_XP=${XP:-cupy}
mkdir -p "$OUT/device"
source "$(dirname "$0")/gpu_steps.sh"

if [ "${CHECK:-1}" != 0 ]; then
  step 00_check "${T_CHECK:-120}" $PY -m pytest -p no:cacheprovider -p no:benchmark -n 0 -q -rs -m gpu \
      -k "not memory_estimate" tests/test_facesearch_gpu.py
  if ! tail -n 1 "$OUT/00_check.log" | grep -q "^rc=0 "; then
    echo "the pipelines' CuPy check failed (OUT/00_check.log): no unit measured"
    exit 1
  fi
fi
step 01_unit "${T_UNIT:-480}" $PY -m hepkg.facesearch.gpu_run --out "$OUT/device" --unit "$UNIT" --tmp "$TMP" \
    ${RUN_ARGS:-}
echo "total $(($(date +%s) - T0)) s"
