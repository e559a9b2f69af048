#!/usr/bin/env bash
# The CLI's capture command, run as users and tests/interop run it:
#   cli_capture_test.sh NEURONPROF_BINARY TEST_CAPTURE_SERVER_BINARY
# Usage errors exit 2 with a message, a refused host exits 1 with a FAILED
# line, a capture from a live server exits 0 with an OK line and its files.
set -u
CLI=$1
SERVER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin cli

# expect_usage DESCRIPTION EXPECTED_STDERR_TEXT ARGS...: exit 2, message.
expect_usage() {
  local what=$1 text=$2
  shift 2
  local rc=0
  "$CLI" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [[ $rc -ne 2 ]]; then
    fail "$what: exit $rc, expected 2"
  elif ! grep -qF -- "$text" "$WORK/err"; then
    fail "$what: stderr lacks '$text': $(cat "$WORK/err")"
  elif ! grep -q "usage: neuronprof" "$WORK/err"; then
    fail "$what: no usage text on stderr"
  else
    pass "$what"
  fi
}

L=(--logdir "$WORK/logs")
A=(--service_addr 127.0.0.1:1 "${L[@]}")
expect_usage "unknown flag" "unknown option '--bogus'" capture --bogus 1
expect_usage "unknown flag, = form" "unknown option '--bogus'" capture --bogus=1
expect_usage "positional argument" "unexpected argument 'x'" capture x
expect_usage "missing --service_addr" "--service_addr is required" \
  capture "${L[@]}" --duration_ms 100
expect_usage "flag without value" "--duration_ms needs a value" capture "${A[@]}" --duration_ms
# Every numeric option: a value that is not a number, and one out of range.
expect_usage "non-numeric duration" "--duration_ms: Value abc not in range 1 to 3600000" \
  capture "${A[@]}" --duration_ms abc
expect_usage "zero duration" "--duration_ms: Value 0 not in range 1 to 3600000" \
  capture "${A[@]}" --duration_ms 0
expect_usage "negative duration" "--duration_ms: Value -5 not in range 1 to 3600000" \
  capture "${A[@]}" --duration_ms=-5
expect_usage "duration over an hour" "--duration_ms: Value 3600001 not in range" \
  capture "${A[@]}" --duration_ms 3600001
expect_usage "non-numeric attempts" "--num_tracing_attempts: Value 2x not in range 1 to 1000" \
  capture "${A[@]}" --duration_ms 100 --num_tracing_attempts=2x
expect_usage "zero attempts" "--num_tracing_attempts: Value 0 not in range 1 to 1000" \
  capture "${A[@]}" --duration_ms 100 --num_tracing_attempts 0
expect_usage "bad host tracer level" "--host_tracer_level: Value 7 not in range 0 to 3" \
  capture "${A[@]}" --duration_ms 100 --host_tracer_level 7
expect_usage "non-numeric host tracer level" "--host_tracer_level: Value x not in range" \
  capture "${A[@]}" --duration_ms 100 --host_tracer_level x
expect_usage "bad device tracer level" "--device_tracer_level: Value 3 not in range 0 to 2" \
  capture "${A[@]}" --duration_ms 100 --device_tracer_level 3
expect_usage "negative device tracer level" "--device_tracer_level: Value -1 not in range 0 to 2" \
  capture "${A[@]}" --duration_ms 100 --device_tracer_level=-1
expect_usage "bad address" "service_addresses[1]" \
  capture --service_addr 127.0.0.1:1,nohost "${L[@]}" --duration_ms 100
expect_usage "bad run name" "run_name" capture "${A[@]}" --duration_ms 100 --run_name ../up
expect_usage "reversed port range" "the range is reversed (9015 > 9012)" \
  capture --service_addr 127.0.0.1:9015-9012 "${L[@]}" --duration_ms 100
expect_usage "port range of over 1024 ports" "names 1025 ports, at most 1024" \
  capture --service_addr 127.0.0.1:9012-10036 "${L[@]}" --duration_ms 100
expect_usage "port range beyond 65535" "the ports must be numbers 1..65535" \
  capture --service_addr 127.0.0.1:65535-65536 "${L[@]}" --duration_ms 100
expect_usage "no command" "A subcommand is required"
expect_usage "unknown command" "unknown command 'capturee'" capturee
# --help: the generated help on stdout, exit 0, nothing captured.
rc=0
"$CLI" capture --help >"$WORK/out" 2>"$WORK/err" || rc=$?
if [[ $rc -eq 0 && ! -s $WORK/err ]] && grep -q "Usage: neuronprof capture \[OPTIONS\]" "$WORK/out" &&
   grep -q -- "--service_addr HOST:PORT\[-PORT\]\[,HOST:PORT...\] REQUIRED" "$WORK/out" &&
   grep -q -- "--num_tracing_attempts K:INT in \[1 - 1000\]=3" "$WORK/out"; then
  pass "capture --help"
else
  fail "capture --help: exit $rc; stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
fi
[[ -e $WORK/logs ]] && fail "usage errors created the logdir" || pass "usage errors leave no logdir"

# A live server in a child process: "port N" on its stdout, exits at EOF.
coproc HELPER { exec "$SERVER" "$WORK"; }
HELPER_PID=$HELPER_PID
read -r -t 20 -u "${HELPER[0]}" word port || { echo "FAIL: helper did not start"; exit 1; }
[[ $word == port ]] || { echo "FAIL: helper said '$word $port'"; exit 1; }

rc=0
"$CLI" capture --service_addr="grpc://127.0.0.1:$port" --logdir="$WORK/logs" \
  --duration_ms=300 --run_name=cli_run --progress >"$WORK/out" 2>"$WORK/err" || rc=$?
file="$WORK/logs/plugins/profile/cli_run/127.0.0.1.xplane.pb"
if [[ $rc -eq 0 ]] && grep -qE "^OK 127\.0\.0\.1:$port events=[1-9][0-9]* attempts=1 file=$file\$" "$WORK/out" &&
   grep -qx "run_dir: $WORK/logs/plugins/profile/cli_run" "$WORK/out" &&
   grep -q "^open with: xprof --logdir $WORK/logs" "$WORK/out" && [[ -s $file ]] &&
   [[ -s $WORK/logs/cli_run/127.0.0.1.pt.trace.json.gz ]] &&
   [[ ! -e ${file%.xplane.pb}.trace.json.gz ]]; then
  pass "capture from a live server"
else
  fail "capture from a live server: exit $rc; stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
fi
# --progress names each stage as it begins, in order: what the capture waits for.
stages=$(grep -oE "^(window [0-9.]+ s / 0\.3 s|server collecting|receiving [0-9.]+ (kB|MB)|writing)$" \
           "$WORK/err" | sed -E 's/^(window|receiving) .*/\1/' | uniq | tr '\n' ,)
if [[ $stages == "window,server collecting,receiving,writing," ]]; then
  pass "progress names the stages: $stages"
else
  fail "progress stages '$stages'; stderr: $(cat "$WORK/err")"
fi
# The Kineto trace by default, where a Profiler writes its own (as it does
# by default): the PyTorch plugin and HTA see the run.
kineto="$WORK/logs/cli_run/127.0.0.1.pt.trace.json.gz"
[[ -s $kineto ]] && grep -qx "  kineto: $kineto" "$WORK/out" &&
  pass "a capture writes the Kineto trace by default" ||
  fail "default Kineto trace: $(ls "$WORK/logs" 2>&1); stdout: $(cat "$WORK/out")"
# --no_kineto and --kineto=false turn it off; the xprof files are written,
# and the Chrome trace in its place (Perfetto's JSON).
for off in --no_kineto --kineto=false; do
  rc=0
  "$CLI" capture --service_addr "127.0.0.1:$port" --logdir "$WORK/logs" \
    --duration_ms 100 --run_name "off${off//=/_}" $off >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [[ $rc -eq 0 && -s $WORK/logs/plugins/profile/off${off//=/_}/127.0.0.1.xplane.pb &&
        -s $WORK/logs/plugins/profile/off${off//=/_}/127.0.0.1.trace.json.gz &&
        ! -e $WORK/logs/off${off//=/_} ]] && ! grep -q "kineto:" "$WORK/out"; then
    pass "$off: no Kineto trace, the Chrome trace instead"
  else
    fail "$off: exit $rc; $(ls "$WORK/logs" 2>&1); stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
  fi
done
# --chrome_trace adds the Chrome trace to the Kineto trace; --no_chrome_trace
# with --no_kineto leaves the .xplane.pb alone.
for flags in "--chrome_trace" "--no_kineto --no_chrome_trace"; do
  name=$(echo "$flags" | tr -d ' -')
  rc=0
  "$CLI" capture --service_addr "127.0.0.1:$port" --logdir "$WORK/logs" \
    --duration_ms 100 --run_name "$name" $flags >"$WORK/out" 2>"$WORK/err" || rc=$?
  files=$(cd "$WORK/logs" && find "$name" "plugins/profile/$name" -type f 2>/dev/null | sort | tr '\n' ' ')
  if [[ $flags == --chrome_trace ]]; then
    want="chrome_trace/127.0.0.1.pt.trace.json.gz plugins/profile/chrome_trace/127.0.0.1.trace.json.gz plugins/profile/chrome_trace/127.0.0.1.xplane.pb "
  else
    want="plugins/profile/no_kinetono_chrome_trace/127.0.0.1.xplane.pb "
  fi
  [[ $rc -eq 0 && $files == "$want" ]] && pass "$flags: $files" ||
    fail "$flags: exit $rc; files '$files', want '$want'; stderr: $(cat "$WORK/err")"
done

# Without --logdir or --duration_ms: ./logs and 2000 ms, as CaptureOptions.
mkdir "$WORK/cwd"
rc=0
(cd "$WORK/cwd" && "$CLI" capture --service_addr "127.0.0.1:$port" \
  --run_name default_logdir >"$WORK/out" 2>"$WORK/err") || rc=$?
if [[ $rc -eq 0 ]] && [[ -s $WORK/cwd/logs/plugins/profile/default_logdir/127.0.0.1.xplane.pb ]] &&
   grep -q "capturing 1 host for 2000 ms" "$WORK/err"; then
  pass "capture's --logdir defaults to ./logs, --duration_ms to 2000 (the library's)"
else
  fail "capture without --logdir: exit $rc; stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
fi
# Without --progress, a stderr that is not a terminal gets no progress:
# the one line saying what is captured.
if [[ $(wc -l <"$WORK/err") -eq 1 ]]; then
  pass "no progress lines without --progress when stderr is not a terminal"
else
  fail "progress without --progress: $(cat "$WORK/err")"
fi
# The live server and a refused port: exit 1, the other host's file kept
# (named host_port: both addresses share the host 127.0.0.1).
refused=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null || echo 1)
rc=0
"$CLI" capture --service_addr "127.0.0.1:$port,127.0.0.1:$refused" --logdir "$WORK/logs" \
  --duration_ms 100 --run_name mixed >"$WORK/out" 2>"$WORK/err" || rc=$?
if [[ $rc -eq 1 ]] && grep -q "^OK 127\.0\.0\.1:$port " "$WORK/out" &&
   grep -q "^FAILED 127\.0\.0\.1:$refused attempts=0 error=cannot connect to 127\.0\.0\.1:$refused" "$WORK/out" &&
   grep -qx "captured 1 of 2 hosts" "$WORK/out" &&
   [[ -s $WORK/logs/plugins/profile/mixed/127.0.0.1_$port.xplane.pb ]]; then
  pass "one refused host: exit 1, the other's file written"
else
  fail "one refused host: exit $rc; stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
fi

# --flight_recorder asks for a FlightRecorder's last seconds at once: this
# server has none, and says so (a minute-long window is not waited out).
rc=0
"$CLI" capture --service_addr "127.0.0.1:$port" --logdir "$WORK/logs" \
  --duration_ms 60000 --flight_recorder --run_name flight >"$WORK/out" 2>"$WORK/err" || rc=$?
if [[ $rc -eq 1 ]] && grep -q "^FAILED 127\.0\.0\.1:$port .*no FlightRecorder records" "$WORK/out" &&
   [[ ! -e $WORK/logs/plugins/profile/flight ]]; then
  pass "--flight_recorder on a server without one: exit 1, named"
else
  fail "--flight_recorder without a recorder: exit $rc; stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
fi

exec {HELPER[1]}>&-
wait "$HELPER_PID"

# Two ranks of a job on this host, each server started by a Profiler on
# base + LOCAL_RANK: one port range captures both into one run folder, one
# file per rank named by the rank each server reports.
base=$(python3 -c '
import socket
for _ in range(100):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); base = s.getsockname()[1]; s.close()
    try:
        t = socket.socket(); t.bind(("127.0.0.1", base + 1)); t.close()
        print(base); break
    except OSError:
        pass')
RANK_IN=()
for r in 0 1; do
  mkfifo "$WORK/in$r" "$WORK/out$r"
  # Without the earlier ranks' stdin pipes: each must see its own EOF.
  (for f in "${RANK_IN[@]}"; do eval "exec $f>&-"; done
   RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 exec "$SERVER" "$WORK/ranks" profiler "$base") \
    <"$WORK/in$r" >"$WORK/out$r" &
  RANK_PIDS[r]=$!
  exec {fd}>"$WORK/in$r"
  RANK_IN[r]=$fd
  exec {fd}<"$WORK/out$r"
  RANK_OUT[r]=$fd
  read -r -t 20 -u "$fd" word rank_port || fail "rank $r did not start"
  [[ "$word $rank_port" == "port $((base + r))" ]] || fail "rank $r said '$word $rank_port'"
done
rc=0
"$CLI" capture --service_addr "127.0.0.1:$base-$((base + 1))" --logdir "$WORK/logs" \
  --duration_ms 300 --run_name ranks --kineto --max_parallel_hosts 1 >"$WORK/out" 2>"$WORK/err" || rc=$?
run="$WORK/logs/plugins/profile/ranks"
if [[ $rc -eq 0 ]] && grep -qx "captured 2 of 2 hosts" "$WORK/out" &&
   grep -q "^OK 127\.0\.0\.1:$base .*file=$run/127.0.0.1_rank0.xplane.pb\$" "$WORK/out" &&
   grep -q "^OK 127\.0\.0\.1:$((base + 1)) .*file=$run/127.0.0.1_rank1.xplane.pb\$" "$WORK/out" &&
   [[ "$(ls "$run" | tr '\n' ' ')" == "127.0.0.1_rank0.xplane.pb 127.0.0.1_rank1.xplane.pb " ]] &&
   [[ "$(ls "$WORK/logs/ranks" | tr '\n' ' ')" == "127.0.0.1_rank0.pt.trace.json.gz 127.0.0.1_rank1.pt.trace.json.gz " ]]; then
  pass "a port range captures every rank of the host into one run"
else
  fail "port range capture: exit $rc; files: $(ls "$run" 2>&1); stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
fi
# One Kineto trace per rank where a Profiler writes its own (--kineto, the
# default, is still accepted).
if [[ "$(ls "$WORK/logs/ranks" 2>&1 | tr '\n' ' ')" == "127.0.0.1_rank0.pt.trace.json.gz 127.0.0.1_rank1.pt.trace.json.gz " ]] &&
   [[ $(grep -c "^  kineto: $WORK/logs/ranks/127.0.0.1_rank[01].pt.trace.json.gz\$" "$WORK/out") -eq 2 ]]; then
  pass "one Kineto trace per rank"
else
  fail "--kineto: $(ls "$WORK/logs/ranks" 2>&1); stdout: $(cat "$WORK/out")"
fi
# Each rank's clock was measured (same machine: an offset within its uncertainty of 0).
[[ $(grep -cE "^  clock_offset: [-+][0-9]+\.[0-9]{3} ms \+- [0-9]+\.[0-9]{3} ms \(aligned to this client's clock\)\$" "$WORK/out") -eq 2 ]] &&
  pass "each rank's clock offset is printed" || fail "clock offsets: $(cat "$WORK/out")"
# Each file says which rank wrote it.
for r in 0 1; do
  "$CLI" info "$run/127.0.0.1_rank$r.xplane.pb" >"$WORK/info$r" 2>&1
  has "rank $r's file says so" "$WORK/info$r" "rank: $r of world size 2 (local rank $r)"
done
for r in 0 1; do
  eval "exec ${RANK_IN[r]}>&- ${RANK_OUT[r]}<&-"
  wait "${RANK_PIDS[r]}"
done

# Only refused hosts: exit 1, FAILED lines, no run folder; the cause is
# printed once (not again as progress and as a final error).
rc=0
"$CLI" capture --service_addr "127.0.0.1:$refused" --logdir "$WORK/logs" \
  --duration_ms 100 --run_name none >"$WORK/out" 2>"$WORK/err" || rc=$?
causes=$(cat "$WORK/out" "$WORK/err" | grep -c "cannot connect to 127\.0\.0\.1:$refused")
[[ $causes -eq 1 ]] && pass "a dead port's error is printed once" ||
  fail "a dead port's error is printed $causes times: $(cat "$WORK/out" "$WORK/err")"
if [[ $rc -eq 1 ]] && grep -q "^FAILED 127\.0\.0\.1:$refused " "$WORK/out" &&
   grep -qx "captured 0 of 1 host" "$WORK/out" && [[ ! -e $WORK/logs/plugins/profile/none ]]; then
  pass "all hosts refused: exit 1, no run folder"
else
  fail "all hosts refused: exit $rc; stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
fi

cli_test_end
