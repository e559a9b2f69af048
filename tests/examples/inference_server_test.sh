#!/usr/bin/env bash
# examples/inference_server under a short, fixed load (200 requests): it
# answers every request and its capture holds each request's "accept" on
# the acceptor thread and its "respond" on a worker thread, one "batch"
# step per batch it reported; with --accelerator, `neuronprof summary`
# gives every fake-NPU kernel to the layer marker that launched it.
# Counts only, no timing thresholds.
#   inference_server_test.sh NEURONPROF_BINARY SERVER_BINARY
set -u
CLI=$1
SERVER=$2
source "$(dirname "$0")/../cli/cli_test_lib.sh"
cli_test_begin inference_server

# The capture's Chrome trace: per marker name, its count and threads; and
# whether every request id has both an accept and a respond.
check_trace() {  # RUN_DIR LABEL BATCHES
  # A flight recorder's dump holds the .xplane.pb alone: convert it, as users do.
  if [[ -z $(ls "$1"/*.trace.json.gz 2>/dev/null) ]]; then
    "$CLI" convert "$1" -o "$WORK/trace.json" --force >/dev/null 2>"$WORK/err" ||
      { fail "$2: convert: $(cat "$WORK/err")"; return; }
  else
    zcat "$1"/*.trace.json.gz >"$WORK/trace.json" 2>/dev/null || { fail "$2: no trace in $1"; return; }
  fi
  python3 - "$WORK/trace.json" 200 "$3" >"$WORK/trace_check" 2>&1 <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
requests, batches = int(sys.argv[2]), int(sys.argv[3])
names = {}
for e in events:
    if e.get("ph") == "M" and e.get("name") == "thread_name":
        names[e["tid"]] = e["args"]["name"]
def spans(name):
    return [e for e in events if e.get("ph") == "X" and e.get("name") == name]
accept, respond, batch = spans("accept"), spans("respond"), spans("batch")
problems = []
if len(accept) != requests: problems.append(f"{len(accept)} accept markers")
if len(respond) != requests: problems.append(f"{len(respond)} respond markers")
if len(batch) != batches: problems.append(f"{len(batch)} batch steps, server said {batches}")
ids = lambda spans: sorted(e["args"]["request"] for e in spans)
if ids(accept) != list(range(requests)) or ids(respond) != list(range(requests)):
    problems.append("request ids differ between accept and respond")
accept_threads = {names.get(e["tid"]) for e in accept}
respond_threads = {names.get(e["tid"]) for e in respond}
if accept_threads != {"acceptor"}: problems.append(f"accept on {accept_threads}")
if not respond_threads or not all(str(t).startswith("worker-") for t in respond_threads):
    problems.append(f"respond on {respond_threads}")
# Serving events: each request's accept produces a flow its batch's one
# assemble (a TraceBatchConsumer: a link per request) and its respond
# consume, its life is one async span, the queue depth a counter.
assemble = spans("assemble")
links = [e for e in events if e.get("ph") == "i" and e.get("name") == "assemble"]
if len(assemble) != batches: problems.append(f"{len(assemble)} assemble markers")
if len(links) != requests: problems.append(f"{len(links)} assemble links")
at = {(e["tid"], e["ts"]): e["name"] for e in events if e.get("ph") in ("X", "i")}
ends = {}
for e in events:
    if e.get("ph") == "f": ends.setdefault(at.get((e["tid"], e["ts"])), set()).add(e["id"])
if len(ends.get("assemble", ())) != requests or len(ends.get("respond", ())) != requests:
    problems.append(f"flows into assemble / respond: {len(ends.get('assemble', ()))} / "
                    f"{len(ends.get('respond', ()))}")
lives = [e for e in events if e.get("ph") == "b" and e.get("name") == "request"]
if len(lives) != requests: problems.append(f"{len(lives)} request async spans")
if not any(e.get("ph") == "C" and e.get("name") == "queue_depth" for e in events):
    problems.append("no queue_depth counter")
print("; ".join(problems) if problems else "ok")
PY
  [[ "$(cat "$WORK/trace_check")" == ok ]] &&
    pass "$2: 200 requests accepted on the acceptor, answered on workers (flows, async spans, counters), one step per batch" ||
    fail "$2: $(cat "$WORK/trace_check")"
}

serve() {  # LABEL ARGS...
  local label=$1
  shift
  if ! "$SERVER" --logdir "$WORK/logs_$label" --requests 200 --rate 4000 --workers 2 \
      --max_batch 8 "$@" >"$WORK/out_$label" 2>"$WORK/err"; then
    fail "$label: exit status; $(cat "$WORK/out_$label" "$WORK/err")"
    return 1
  fi
  has "$label: every request answered" "$WORK/out_$label" "served 200 requests in"
  has "$label: latency percentiles" "$WORK/out_$label" "latency: p50 "
  RUN=$(sed -n 's/^capture: //p' "$WORK/out_$label")
  BATCHES=$(sed -n 's/.* requests\/s, \([0-9]*\) batches.*/\1/p' "$WORK/out_$label")
  [[ -d "$RUN" ]] || { fail "$label: no capture folder in $(cat "$WORK/out_$label")"; return 1; }
}

if serve profiler --accelerator; then
  check_trace "$RUN" profiler "$BATCHES"
  run 0 "summary of the capture" summary "$RUN" --top 0
  # Every kernel of the fake NPU goes to a layer marker: fc1, fc2 and fc3
  # each launched one kernel per call, and nothing is left unattributed.
  grep -qE '; [0-9]+ to a user marker around the launch, 0 to neither\)' "$WORK/out" &&
    pass "device events all attributed to markers" ||
    fail "device attribution: $(grep 'Device events' "$WORK/out")"
  # The markers table as CSV: name,source,thread,calls,...,device_events,...
  if "$CLI" summary "$RUN" --table markers --csv "$WORK/markers.csv" >/dev/null 2>"$WORK/err"; then
    for layer in fc1 fc2 fc3; do
      row=$(grep "^$layer,," "$WORK/markers.csv")
      calls=$(cut -d, -f4 <<<"$row")
      events=$(cut -d, -f13 <<<"$row")
      [[ -n "$calls" && "$calls" == "$BATCHES" && "$events" == "$BATCHES" ]] &&
        pass "$layer: $calls calls, $events device events" ||
        fail "$layer row: '$row' (batches $BATCHES)"
    done
  else
    fail "markers csv: $(cat "$WORK/err")"
  fi
  grep -qE 'MFU [0-9.]+% \([0-9.]+M FLOPs reported by the runtime' "$WORK/out" &&
    pass "MFU from the runtime's FLOPs" || fail "MFU: $(grep MFU "$WORK/out")"
fi

if serve flight --recorder flight; then
  check_trace "$RUN" flight "$BATCHES"
fi

# --alternate_ms: the recorder on and off in turn, each recording window
# compared with its neighbours; nothing written. Only with a flight
# recorder and a closed loop, where throughput is the server's.
if "$SERVER" --logdir "$WORK/logs_alternate" --recorder flight --alternate_ms 50 \
    --concurrency 16 --requests 20000 >"$WORK/out_alternate" 2>"$WORK/err"; then
  python3 - "$WORK/out_alternate" >"$WORK/alternate_check" 2>&1 <<'PY'
import re, sys
out = open(sys.argv[1]).read()
windows = re.search(r"in turn: (\d+) recording windows of 50 ms", out)
figures = re.findall(r"^(throughput|p99|CPU per request) flight/none: median ([\d.]+), "
                     r"95% CI ([\d.]+)-([\d.]+)$", out, re.M)
problems = []
if not windows or int(windows[1]) < 3: problems.append("fewer than 3 recording windows")
if [f[0] for f in figures] != ["throughput", "p99", "CPU per request"]:
    problems.append(f"figures {figures}")
for what, median, low, high in figures:
    if not float(low) <= float(median) <= float(high) or float(median) <= 0:
        problems.append(f"{what}: {median} outside {low}-{high}")
print("; ".join(problems) if problems else "ok")
PY
  [[ "$(cat "$WORK/alternate_check")" == ok ]] &&
    pass "--alternate_ms: throughput, p99 and CPU per request ratios with their intervals" ||
    fail "--alternate_ms: $(cat "$WORK/alternate_check") in $(cat "$WORK/out_alternate")"
  [[ ! -e "$WORK/logs_alternate" ]] && pass "--alternate_ms writes no capture" ||
    fail "--alternate_ms wrote $(find "$WORK/logs_alternate" | head -3)"
else
  fail "--alternate_ms: exit status; $(cat "$WORK/out_alternate" "$WORK/err")"
fi
for bad in "--recorder profiler --alternate_ms 50 --concurrency 16" \
           "--recorder flight --alternate_ms 50 --rate 1000" "--recorder flight --alternate_ms -1"; do
  # shellcheck disable=SC2086
  "$SERVER" --requests 10 $bad >"$WORK/out" 2>&1
  rc=$?
  [[ $rc == 2 ]] && pass "refused: $bad" || fail "$bad: exit status $rc ($(cat "$WORK/out"))"
done
cli_test_end
