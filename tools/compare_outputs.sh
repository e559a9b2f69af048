#!/usr/bin/env bash
# Compares every output of two builds' CLIs on the same inputs, byte for
# byte: for a change that must not change behaviour (a restructuring).
#   tools/compare_outputs.sh OLD_BUILD NEW_BUILD [WORK_DIR]
# Inputs: the test writers of NEW_BUILD (operator, request, flow, stack,
# rank and worst-shape captures) and tests/data/cupti_h200. For each
# .xplane.pb: info, summary (text, --json, --csv_dir, --folded,
# --memory_csv, --kernel_csv, --by_thread, --steps 1-2) and convert
# (Chrome and Kineto); for each run folder: summary. Exit 0 when both
# builds wrote the same bytes, 1 with the diff otherwise.
set -u
OLD=$1 NEW=$2 WORK=${3:-$(mktemp -d)}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$NEW/tests IN=$WORK/in
rm -rf "$IN" && mkdir -p "$IN"
write() {  # write NAME WRITER [OPTIONS]: WRITER DIR host OPTIONS into $IN/NAME
  local dir=$IN/$1 writer=$2
  shift 2
  mkdir -p "$dir" && "$writer" "$dir" host "$@" >/dev/null 2>&1
}
write op2 "$T/write_operator_xplane" --steps 2
write op3dev "$T/write_operator_xplane" --steps 3 --device
write opgpu "$T/write_operator_xplane" --gpu
write slow "$T/write_request_xplane" --requests 200 --slow 17,123 --delay_us 30000
write flows "$T/write_request_xplane" --flows --slow 7,123 --delay_us 30000
write stacks "$T/write_stack_xplane"
write worst "$T/write_worst_capture"
mkdir -p "$IN/ranks" && "$T/write_rank_xplanes" "$IN/ranks" >/dev/null 2>&1
cp -r "$SRC/tests/data/cupti_h200" "$IN/cupti"

outputs() {  # outputs CLI OUT
  local cli=$1 out=$2 x d r
  rm -rf "$out" && mkdir -p "$out"
  for x in $(cd "$IN" && find . -name '*.xplane.pb' | sort); do
    d="$out/$(echo "$x" | tr '/' '_')" && mkdir -p "$d"
    "$cli" info "$IN/$x" >"$d/info.txt" 2>&1; echo "rc=$?" >>"$d/info.txt"
    "$cli" summary --top 0 "$IN/$x" --json "$d/summary.json" --csv_dir "$d/csv" \
      --folded "$d/folded.txt" --memory_csv "$d/mem.csv" --kernel_csv "$d/kern.csv" \
      >"$d/summary.txt" 2>&1; echo "rc=$?" >>"$d/summary.txt"
    "$cli" summary --by_thread "$IN/$x" >"$d/by_thread.txt" 2>&1; echo "rc=$?" >>"$d/by_thread.txt"
    "$cli" summary --steps 1-2 "$IN/$x" >"$d/steps.txt" 2>&1; echo "rc=$?" >>"$d/steps.txt"
    "$cli" convert "$IN/$x" -o "$d/trace.json" >"$d/convert.txt" 2>&1; echo "rc=$?" >>"$d/convert.txt"
    "$cli" convert "$IN/$x" --format kineto -o "$d/kineto.pt.trace.json" >>"$d/convert.txt" 2>&1
    echo "rc=$?" >>"$d/convert.txt"
  done
  for r in $(cd "$IN" && find . -mindepth 1 -maxdepth 1 -type d | sort); do
    "$cli" summary --top 0 "$IN/$r" >"$out/run_$(basename "$r").txt" 2>&1
    echo "rc=$?" >>"$out/run_$(basename "$r").txt"
  done
  grep -rlE "$IN|$out" "$out" 2>/dev/null | xargs -r sed -i "s|$IN|IN|g;s|$out|OUT|g"
}
outputs "$OLD/tools/neuronprof" "$WORK/old"
outputs "$NEW/tools/neuronprof" "$WORK/new"
if diff -r "$WORK/old" "$WORK/new"; then
  echo "compare_outputs: the same bytes from both builds ($(find "$WORK/new" -type f | wc -l) files)"
else
  echo "compare_outputs: the outputs differ (above)"; exit 1
fi
