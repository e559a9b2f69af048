#!/usr/bin/env bash
# `neuronprof summary` on a capture with call stacks (NEURONPROF_SCOPE_STACK
# in known functions of write_stack_xplane): the top-down tree in the text
# report, --folded for flamegraph.pl / speedscope, and a note (no file) for
# a capture without stacks.
#   cli_stack_summary_test.sh NEURONPROF_BINARY WRITE_STACK_XPLANE_BINARY WRITE_REQUEST_XPLANE_BINARY
set -u
CLI=$1
WRITER=$2
PLAIN_WRITER=$3
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin stack_summary

mkdir -p "$WORK/stacks" "$WORK/plain"
"$WRITER" "$WORK/stacks" host >/dev/null || { echo "FAIL: writer"; exit 1; }
"$PLAIN_WRITER" "$WORK/plain" host --requests 5 >/dev/null || { echo "FAIL: plain writer"; exit 1; }
SRC=write_stack_xplane.cc

if run 0 "--folded FILE" summary "$WORK/stacks" --folded "$WORK/stacks.folded"; then
  has "wrote the file" "$WORK/out" "wrote $WORK/stacks.folded"
  # Outermost first: main, the caller, the marker's function, the marker.
  # "inner" (no stack) is in hot's weight; "deep" extends hot's path.
  grep -Eq "(^|;)main \([^;]*$SRC:[0-9]+\);\(anonymous namespace\)::StackHot\(\) \([^;]*$SRC:[0-9]+\);hot [0-9]+$" \
    "$WORK/stacks.folded" && pass "hot's folded line" || fail "hot's folded line: $(cat "$WORK/stacks.folded")"
  grep -Eq ";hot;deep [0-9]+$" "$WORK/stacks.folded" && pass "nested stack extends the path" ||
    fail "nested stack: $(cat "$WORK/stacks.folded")"
  [[ $(wc -l <"$WORK/stacks.folded") -eq 2 ]] && pass "one line per path" ||
    fail "lines: $(cat "$WORK/stacks.folded")"
  hasnt "a scope without a stack is no frame" "$WORK/stacks.folded" "inner"
  # hot holds >= 600 us of self time (3 x (100 + 100 us in inner)), deep >= 600 us.
  awk '{ n = $NF } /;hot [0-9]+$/ && n < 600000 { bad = 1 } /;hot [0-9]+$/ { seen = 1 } END { exit bad || !seen }' "$WORK/stacks.folded" &&
    pass "hot weighs its self time and inner's, in ns" || fail "weights: $(cat "$WORK/stacks.folded")"
  has "text tree" "$WORK/out" "Call stacks (top-down"
  grep -Eq "^ +[0-9.]+ +[0-9.]+  +\(anonymous namespace\)::StackHot\(\) \(.*$SRC:[0-9]+\)$" "$WORK/out" &&
    pass "tree row of the marker's function" || fail "tree: $(cat "$WORK/out")"
fi
if run 0 "--folded -" summary "$WORK/stacks" --folded -; then
  cmp -s "$WORK/out" "$WORK/stacks.folded" && pass "stdout holds only the folded stacks" ||
    fail "--folded - differs: $(head -3 "$WORK/out")"
fi
# The trace viewers' args: the Chrome / Perfetto trace carries the stat.
if run 0 "convert to Chrome JSON" convert "$WORK/stacks/host.xplane.pb" --out "$WORK/trace.json.gz"; then
  gzip -dc "$WORK/trace.json.gz" >"$WORK/trace.json"
  has "stack in the marker's args" "$WORK/trace.json" '"stack":"(anonymous namespace)::StackHot() ('
fi
run 1 "an existing file" summary "$WORK/stacks" --folded "$WORK/stacks.folded" &&
  has "names --force" "$WORK/err" "--force"
if run 0 "no stacks" summary "$WORK/plain" --folded "$WORK/none.folded"; then
  has "says why" "$WORK/err" "--folded: nothing written: the capture has no call stacks"
  hasnt "no tree" "$WORK/out" "Call stacks"
  [[ ! -e $WORK/none.folded ]] && pass "no empty file" || fail "empty file written"
fi
cli_test_end
