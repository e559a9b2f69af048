#!/usr/bin/env bash
# examples/flight_recorder_server: its slow request (id 150 of 200) makes
# the flight recorder dump; the dump holds that request, the requests
# before it, the nested stages and the slow_step_trigger event spanning it,
# read back with `neuronprof info` and from the dump's Chrome trace:
#   flight_recorder_server_test.sh NEURONPROF_BINARY SERVER_BINARY
set -u
CLI=$1
SERVER=$2
source "$(dirname "$0")/../cli/cli_test_lib.sh"
cli_test_begin flight_recorder_server

if ! "$SERVER" --logdir "$WORK/logs" --requests 200 --slow_request 150 >"$WORK/out" 2>"$WORK/err"; then
  echo "FAIL: flight_recorder_server: $(cat "$WORK/err")"
  exit 1
fi
run=$(sed -n 's/^dump: //p' "$WORK/out")
[[ -d "$run" && "$run" == "$WORK/logs/plugins/profile/"*_slow_request_* ]] &&
  pass "prints the dump's run folder" || fail "run folder: '$run' in $(cat "$WORK/out")"

xplane=$(ls "$run"/*.xplane.pb 2>/dev/null | head -1)
if "$CLI" info "$xplane" >"$WORK/info" 2>"$WORK/err"; then
  grep -qF 'step "request" (step_num 150) took' "$WORK/info" &&
    pass "warning names the slow request" || fail "no warning in $(cat "$WORK/info")"
  grep -q "neuronprof_trigger: 1 events" "$WORK/info" &&
    pass "trigger thread line" || fail "no trigger line in $(cat "$WORK/info")"
else
  fail "info: $(cat "$WORK/err")"
fi

# A dump writes the .xplane.pb alone (the default); the Chrome trace comes
# from it afterwards, outside the process.
[[ -z $(ls "$run"/*.json.gz 2>/dev/null) ]] && pass "the dump wrote the .xplane.pb alone" ||
  fail "the dump wrote more than the .xplane.pb: $(ls "$run")"
"$CLI" convert "$run" -o "$WORK/trace.json" >/dev/null 2>"$WORK/err" || fail "convert: $(cat "$WORK/err")"
has() { grep -qF -- "$2" "$WORK/trace.json" && pass "$1" || fail "$1: '$2' not in the trace"; }
has "the slow request" '"name":"request","args":{"step_num":150,'
has "a request before it" '"name":"request","args":{"step_num":149,'
has "nested stage" '"name":"layer_2"'
has "trigger event" '"name":"slow_step_trigger"'
# The trigger event spans the slow request exactly: same duration.
slow_dur=$(grep -F '"step_num":150,' "$WORK/trace.json" | sed -n 's/.*"dur":\([0-9.]*\).*/\1/p')
marker_dur=$(grep -F '"name":"slow_step_trigger"' "$WORK/trace.json" | sed -n 's/.*"dur":\([0-9.]*\).*/\1/p')
[[ -n "$slow_dur" && "$slow_dur" == "$marker_dur" ]] &&
  pass "trigger event spans the request ($slow_dur us)" ||
  fail "durations differ: request '$slow_dur', slow_step_trigger '$marker_dur'"
cli_test_end
