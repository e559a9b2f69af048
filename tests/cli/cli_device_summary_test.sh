#!/usr/bin/env bash
# `neuronprof summary` on a GPU capture (write_operator_xplane --gpu):
# device time per op, the kernel and copy tables, utilisation against the
# H100 peak, recommendations, --kernel_csv and the CPU peak options.
#   cli_device_summary_test.sh NEURONPROF_BINARY WRITE_OPERATOR_XPLANE_BINARY
set -u
CLI=$1
WRITER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin device_summary

"$WRITER" "$WORK" host --gpu >/dev/null || { echo "FAIL: writer"; exit 1; }
FILE=$WORK/host.xplane.pb
if "$CLI" summary "$FILE" --kernel_csv "$WORK/kernels.csv" >"$WORK/out" 2>"$WORK/err"; then
  has "device columns" "$WORK/out" "Device(us) Kernels Dev FLOP/s"
  has "attribution" "$WORK/out" "Device events: 62 (62 attributed to an operator by correlation id"
  has "kernel table" "$WORK/out" "Kernels: 2 distinct"
  has "kernel row" "$WORK/out" "ampere_sgemm_64x64_nn             1    40.000   40.000  40.000  40.000 2,1,1 128,1,1  128  16384   25"
  has "copy row" "$WORK/out" "MemcpyHtoD     1   100.000 1.00 MiB         10.49G"
  has "MFU" "$WORK/out" "/device:GPU:0 (cc 9.0): MFU"
  has "CPU without a peak" "$WORK/out" "no peak known for CPU (give --cpu_peak_gflops)"
  has "launch-bound" "$WORK/out" "[launch_bound]"
  has "fp32 GEMM" "$WORK/out" "[fp32_gemm]"
  has "dims" "$WORK/out" "evidence: not a multiple of 8: aten::addmm (M=64,N=100,K=784,Float): N=100"
  has "kernel csv header" "$WORK/kernels.csv" "kind,name,calls,total_us,mean_us,min_us,max_us,grid,block,"
  has "kernel csv copy" "$WORK/kernels.csv" "memcpy,MemcpyHtoD,1,100.000,"
else
  fail "summary: exit status $?; $(cat "$WORK/err")"
fi
"$CLI" summary "$FILE" --kernel_csv - >"$WORK/out" 2>&1 &&
  head -1 "$WORK/out" | grep -q '^kind,name,' && ! grep -q "Recommendations" "$WORK/out" &&
  pass "--kernel_csv - prints only CSV" || fail "--kernel_csv -: $(head -3 "$WORK/out")"
"$CLI" summary "$FILE" --cpu_peak_gflops 100 >"$WORK/out" 2>&1 &&
  has "CPU peak given" "$WORK/out" "CPU: MFU"
# The H200 CUPTI capture (tests/data/cupti_h200): CUPTI reports no FLOPs,
# so MFU is unknown there, not zero; CSV numbers are plain decimals.
H200=$(dirname "$0")/../data/cupti_h200/steps
if "$CLI" summary "$H200" --kernel_csv "$WORK/h200.csv" >"$WORK/out" 2>"$WORK/err"; then
  has "unknown MFU" "$WORK/out" "NVIDIA H200 (cc 9.0): MFU - (FLOPs unknown"
  grep -q "MFU 0.00%" "$WORK/out" && fail "MFU 0.00% printed for unknown FLOPs" ||
    pass "no MFU 0.00% for unknown FLOPs"
  has "plain bytes_per_s" "$WORK/h200.csv" "memcpy,MemcpyHtoD,10,3053.663,,,,,,,,,,,167772160,54941300000"
  grep -q "e+" "$WORK/h200.csv" && fail "an exponent in the kernel CSV" || pass "no exponent in CSV"
else
  fail "summary of the H200 capture: exit status $?; $(cat "$WORK/err")"
fi
rc=0
"$CLI" summary "$FILE" --cpu_peak_gflops 0 >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && pass "--cpu_peak_gflops 0 is a usage error" ||
  fail "--cpu_peak_gflops 0: exit $rc, $(cat "$WORK/out")"
cli_test_end
