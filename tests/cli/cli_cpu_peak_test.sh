#!/usr/bin/env bash
# `neuronprof summary --cpu_peak_gflops` on the libtorch MLP demo (CPU only):
# CPU MFU, and the "CPU BLAS below peak" recommendation against a peak no
# CPU reaches on these shapes, but not against one every BLAS exceeds.
#   cli_cpu_peak_test.sh NEURONPROF_BINARY LIBTORCH_MLP_BINARY
set -u
CLI=$1
MLP=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin cpu_peak

"$MLP" --logdir "$WORK/logs" --epochs 1 --stacks 0 >/dev/null || { echo "FAIL: libtorch_mlp"; exit 1; }
# --stacks takes what its usage line offers, 0 or 1, and nothing else.
rc=0
"$MLP" --logdir "$WORK/refused" --stacks 2 >/dev/null 2>&1 || rc=$?
[[ $rc -eq 2 ]] && pass "--stacks 2 is a usage error" || fail "--stacks 2: exit $rc"
# 1 PFLOP/s: far above any CPU, so the GEMMs run below a quarter of it.
if "$CLI" summary "$WORK/logs" --cpu_peak_gflops 1000000 >"$WORK/out" 2>"$WORK/err"; then
  has "CPU MFU" "$WORK/out" "CPU: MFU"
  has "roofline rows" "$WORK/out" "aten::addmm"
  has "CPU BLAS recommendation" "$WORK/out" "[cpu_blas_slow]"
  has "its evidence" "$WORK/out" "of the given peak 1.00PFLOP/s"
else
  fail "summary: $(cat "$WORK/err")"
fi
# 1 MFLOP/s: every BLAS beats it.
"$CLI" summary "$WORK/logs" --cpu_peak_gflops 0.001 >"$WORK/out" 2>&1 &&
  hasnt "no recommendation against a low peak" "$WORK/out" "[cpu_blas_slow]"
"$CLI" summary "$WORK/logs" >"$WORK/out" 2>&1 &&
  has "no peak given" "$WORK/out" "no peak known for CPU (give --cpu_peak_gflops)" &&
  hasnt "no recommendation without a peak" "$WORK/out" "[cpu_blas_slow]"
cli_test_end
