#!/usr/bin/env bash
# `neuronprof summary` finds the leak of examples/memory_leak (64 KiB of
# relu output kept per step) and writes the memory table as CSV:
#   cli_memory_summary_test.sh NEURONPROF_BINARY MEMORY_LEAK_BINARY
set -u
CLI=$1
LEAKY=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin memory_summary

"$LEAKY" --logdir "$WORK/logs" --steps 4 >/dev/null || { echo "FAIL: memory_leak"; exit 1; }
if "$CLI" summary "$WORK/logs" >"$WORK/out" 2>"$WORK/err"; then
  has "memory section" "$WORK/out" "Memory of cpu: peak"
  has "leak verdict" "$WORK/out" \
    "LEAK? cpu grew in every step (+64.00 KiB per step on average, +256.00 KiB over 4 steps)"
  has "leaking op named" "$WORK/out" "aten::clamp_min holds blocks it allocated in 4 of 4 steps (256.00 KiB)"
  has "per-step growth" "$WORK/out" "infer 3"
  has "peak in the op stack" "$WORK/out" "in aten::relu > aten::clamp_min"
  # Inference: a Forward column, no Backward or Other ops column of zeros.
  has "forward column" "$WORK/out" "Step Time(ms) Forward Markers"
  hasnt "no Backward column of zeros" "$WORK/out" "Backward"
else
  fail "summary: $(cat "$WORK/err")"
fi
if "$CLI" summary "$WORK/logs" --memory_csv - >"$WORK/csv" 2>"$WORK/err"; then
  head -1 "$WORK/csv" | grep -qxF "allocator,op,allocations,allocated_bytes,freed_bytes,held_bytes,calls" &&
    pass "csv header" || fail "csv header: $(head -1 "$WORK/csv")"
  has "csv leak row" "$WORK/csv" "cpu,aten::clamp_min,4,262144,0,262144,4"
  grep -q "Memory of" "$WORK/csv" && fail "csv on stdout is the whole output" || pass "csv only"
else
  fail "summary --memory_csv -: $(cat "$WORK/err")"
fi
cli_test_end
