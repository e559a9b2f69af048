#!/usr/bin/env bash
# info, summary and convert on real CUPTI captures (tests/data/cupti_h200:
# examples/cuda_steps on an NVIDIA H200, see its README.md): what CUPTI 13
# really writes must keep reading as kernels, copies, memsets and launch
# flows, with the device time attributed to the steps and markers.
#   cli_cupti_capture_test.sh NEURONPROF_BINARY
set -u
CLI=$1
DATA=$(cd "$(dirname "$0")/../data/cupti_h200" && pwd)
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin cupti_capture

if run 0 "info" info "$DATA/steps"; then
  has "GPU plane" "$WORK/out" "plane /device:GPU:0: 3 lines, 60 events"
  has "compute stream" "$WORK/out" "line 13 Stream #13(Kernel,Memcpy,Memset): 40 events"
  has "legacy stream" "$WORK/out" "line 7 Stream #7(Memcpy): 10 events"
  has "runtime plane" "$WORK/out" "plane /host:CPU-GPU-runtime: 1 lines, 110 events"
  hasnt "no warnings" "$WORK/out" "warning"
fi

if run 0 "summary" summary "$DATA/steps" --kernel_csv "$WORK/kernels.csv"; then
  has "steps" "$WORK/out" "Steps: 10"
  has "step row" "$WORK/out" "    train 9    0.375   99.3% 0.7%       92.3%  16.3%  82.0%   1.2%        0.373"
  has "attribution" "$WORK/out" "Device events: 60 (0 attributed to an operator by correlation id, 0 by its framework-op stat, 60 unattributed; 60 to a user marker around the launch, 0 to neither)"
  has "marker device time" "$WORK/out" "forward      -         10     0.242    0.242   24.243  20.650  26.770   55.940   59.181      0.602         30"
  has "kernel row" "$WORK/out" "(anonymous namespace)::block_sum(int, float const*, float*)     10   197.155   19.715  19.616  20.064 16384,1,1 256,1,1   16   1024  100       100 -"
  has "copy row" "$WORK/out" "MemcpyHtoD    10  3053.663 160.00 MiB         54.94G"
  has "memset row" "$WORK/out" "Memset        10    47.104 160.00 MiB          3.56T"
  has "GPU properties" "$WORK/out" "/device:GPU:0 NVIDIA H200 (cc 9.0)"
  has "kernel csv" "$WORK/kernels.csv" 'kernel,"(anonymous namespace)::saxpy(int, float, float const*, float*)",10,142.112,14.211,14.080,14.624,"16384,1,1","256,1,1",16,0,100,100,0,,'
fi

run 0 "summary of 200 empty kernels" summary "$DATA/launches" &&
  has "empty kernel row" "$WORK/out" "(anonymous namespace)::empty()                                 200   114.438    0.572   0.512   0.832     1,1,1  32,1,1   16      0   50         0 -"

# Each of the 60 device events has one launch flow from its runtime call.
count_flows() {  # FILE: "<s> <f> <ac2g s> <ac2g f>"
  python3 -c '
import gzip, json, sys
with gzip.open(sys.argv[1], "rt") as f:
    events = json.load(f)["traceEvents"]
def n(ph, cat=None):
    return sum(1 for e in events if e.get("ph") == ph and (cat is None or e.get("cat") == cat))
print(n("s"), n("f"), n("s", "ac2g"), n("f", "ac2g"))' "$1"
}
if run 0 "convert to Chrome" convert "$DATA/steps" -o "$WORK/steps.trace.json.gz"; then
  [[ $(count_flows "$WORK/steps.trace.json.gz") == "60 60 0 0" ]] &&
    pass "Chrome: 60 launch flows" || fail "Chrome flows: $(count_flows "$WORK/steps.trace.json.gz")"
fi
if run 0 "convert to Kineto" convert "$DATA/steps" --format kineto -o "$WORK/steps.pt.trace.json.gz"; then
  [[ $(count_flows "$WORK/steps.pt.trace.json.gz") == "60 60 60 60" ]] &&
    pass "Kineto: 60 ac2g flows" || fail "Kineto flows: $(count_flows "$WORK/steps.pt.trace.json.gz")"
fi
cli_test_end
