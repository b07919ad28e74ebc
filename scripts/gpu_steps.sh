# Sourced by the GPU scripts (scripts/gpu_check.sh, scripts/gpu_facesearch.sh): run each step within its own time
# limit and what is left of the whole run's LIMIT (seconds since T0), its output in OUT/<step>.log ending with
# "rc=<status> in <seconds> s"; a step with under 5 s left is skipped ("skipped: LIMIT reached").
T0=$(date +%s)

step() {  # step NAME SECONDS COMMAND...
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
