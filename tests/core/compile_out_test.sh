#!/usr/bin/env bash
# NEURONPROF_DISABLE: tests/core/compile_out_markers.cc (every marker form)
# must compile and link with only the include directory (no libneuronprof),
# run, and reference no neuronprof symbol. Built at -O0, so nothing is hidden
# by the optimizer. Usage: compile_out_test.sh <c++ compiler> <include dir>
#                          <source> <work dir>
set -euo pipefail
cxx=$1 include_dir=$2 source=$3 work=$4
mkdir -p "$work"
binary=$work/compile_out_markers_disabled
"$cxx" -std=c++17 -O0 -Wall -Wextra -Werror -DNEURONPROF_DISABLE \
  -I"$include_dir" "$source" -o "$binary"
"$binary"
undefined=$(nm -C --undefined-only "$binary")
if grep -i neuronprof <<<"$undefined"; then
  echo "FAIL: the NEURONPROF_DISABLE build references the symbols above" >&2
  exit 1
fi
echo "no neuronprof symbol referenced"
