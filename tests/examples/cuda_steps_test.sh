#!/usr/bin/env bash
# examples/cuda_steps' arguments, and its run on this machine: with a GPU a
# capture with a GPU plane; without one a clean failure naming the CUDA call
# (exit 1), which scripts/cupti_cost.sh passes on.
#   cuda_steps_test.sh NEURONPROF_BINARY CUDA_STEPS_BINARY
set -u
CLI=$1
STEPS=$2
source "$(dirname "$0")/../cli/cli_test_lib.sh"
cli_test_begin cuda_steps

usage_error() {  # DESCRIPTION ARGS...
  local what=$1 rc=0
  shift
  "$STEPS" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [[ $rc -eq 2 ]] && grep -q "^usage: .*--launches K" "$WORK/err" && pass "$what" ||
    fail "$what: exit $rc, $(cat "$WORK/err")"
}
usage_error "unknown option" --bogus
usage_error "--serve needs --seconds" --serve 0
usage_error "negative --launches" --launches -1

rc=0
"$STEPS" "$WORK/logs" --steps 2 --launches 2 >"$WORK/out" 2>"$WORK/err" || rc=$?
if [[ $rc -eq 0 ]]; then
  run 0 "info of the GPU capture" info "$WORK/logs" &&
    has "GPU plane" "$WORK/out" "plane /device:GPU:0"
else
  [[ $rc -eq 1 ]] && grep -q "^cuda_steps: cuda.* failed: " "$WORK/err" &&
    pass "no GPU: exit 1 naming the CUDA call" || fail "no GPU: exit $rc, $(cat "$WORK/err")"
  rc=0
  bash "$(dirname "$0")/../../scripts/cupti_cost.sh" "$STEPS" 1 2 1 >"$WORK/out" 2>&1 || rc=$?
  [[ $rc -eq 1 ]] && pass "cupti_cost.sh: exit 1 when a run fails" ||
    fail "cupti_cost.sh: exit $rc, $(cat "$WORK/out")"
fi
cli_test_end
