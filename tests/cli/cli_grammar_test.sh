#!/usr/bin/env bash
# One grammar for every command: info, convert and summary read a logdir, an
# xprof run folder, the PyTorch plugin's Kineto run folder or a file (the
# .xplane.pb, or a trace written beside it); no command writes over a file
# without --force; a run of several hosts that are not ranks is summarised
# host by host.
#   cli_grammar_test.sh NEURONPROF_BINARY WRITE_OPERATOR_XPLANE_BINARY
set -u
CLI=$1
WRITER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin grammar

# A logdir as a capture leaves it: the xprof run (xplane + Chrome trace) and
# the Kineto run folder the PyTorch plugin lists.
RUN=$WORK/logs/plugins/profile/run1
mkdir -p "$RUN" "$WORK/logs/run1"
"$WRITER" "$RUN" host --steps 2 --gpu >/dev/null || { echo "FAIL: writer"; exit 1; }
"$CLI" convert "$RUN/host.xplane.pb" >/dev/null || fail "convert to the run's Chrome trace"
"$CLI" convert "$RUN/host.xplane.pb" -o "$WORK/logs/run1/host.pt.trace.json.gz" >/dev/null ||
  fail "convert to a Kineto trace"

# Every input form reads the same capture.
for input in "$WORK/logs" "$RUN" "$RUN/host.xplane.pb" "$RUN/host.trace.json.gz" \
             "$WORK/logs/run1" "$WORK/logs/run1/host.pt.trace.json.gz"; do
  name=${input#"$WORK"/}
  for command in info summary; do
    if run 0 "$command $name" $command "$input"; then
      has "$command $name reads the capture" "$WORK/out" "$RUN/host.xplane.pb"
    fi
  done
done
has "a trace is mapped to its capture, said on stderr" "$WORK/err" \
  "reading $RUN/host.xplane.pb, the capture $WORK/logs/run1/host.pt.trace.json.gz was written from"
# A trace without its capture: why not, precisely.
mkdir "$WORK/lone"
cp "$RUN/host.trace.json.gz" "$WORK/lone/"
run 1 "a lone Chrome trace is refused" summary "$WORK/lone/host.trace.json.gz" &&
  has "the refusal names the missing capture" "$WORK/err" \
    "is a Chrome trace; neuronprof reads the .xplane.pb capture it was written from, and '$WORK/lone/host.xplane.pb' does not exist"
[[ $(wc -l <"$WORK/err") -eq 1 ]] && pass "one error line" || fail "error lines: $(cat "$WORK/err")"

# No overwriting without --force: convert's default output is the run's own
# Chrome trace.
before=$(md5sum <"$RUN/host.trace.json.gz")
run 1 "convert without -o keeps the run's trace" convert "$RUN/host.xplane.pb" &&
  has "convert names --force" "$WORK/err" "host.trace.json.gz' exists: add --force to replace it"
[[ $(md5sum <"$RUN/host.trace.json.gz") == "$before" ]] && pass "the run's trace is unchanged" ||
  fail "the run's trace was replaced"
run 0 "convert --force replaces" convert "$RUN/host.xplane.pb" --force
echo keep >"$WORK/taken.csv"
for option in --csv --kernel_csv --json; do
  run 1 "summary $option onto an existing file" summary "$RUN" $option "$WORK/taken.csv" &&
    has "summary $option names --force" "$WORK/err" "taken.csv' exists: add --force"
done
[[ $(cat "$WORK/taken.csv") == keep ]] && pass "the existing CSV is unchanged" ||
  fail "the existing CSV was replaced"
run 0 "summary --csv --force replaces" summary "$RUN" --csv "$WORK/taken.csv" --force &&
  has "the CSV is the operator table" "$WORK/taken.csv" "layer,direction,op"

# Several hosts that are not ranks: one section each, no "pick one".
"$WRITER" "$RUN" other --steps 3 >/dev/null || fail "writer, second host"
if run 0 "summary of a two-host run" summary "$RUN"; then
  has "the hosts are listed" "$WORK/out" "2 hosts (host, other), one section each"
  has "host section" "$WORK/out" "=== host host (1 of 2) ==="
  has "other section" "$WORK/out" "=== host other (2 of 2) ==="
  [[ $(grep -c "^Steps: " "$WORK/out") -eq 2 ]] && pass "each host's report" ||
    fail "reports: $(grep "^Steps: " "$WORK/out")"
fi
run 0 "info of a two-host run" info "$RUN" &&
  has "info lists the second host" "$WORK/out" "$RUN/other.xplane.pb"

cli_test_end
