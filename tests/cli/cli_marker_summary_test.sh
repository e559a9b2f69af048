#!/usr/bin/env bash
# `neuronprof summary` on a marker-only serving capture, as a server's
# engineer runs it: markers and steps per name with self time and
# percentiles (per thread on request), the tail explained (the injected
# delay named with its figure; nothing blamed without one), every table as
# CSV and the whole summary as JSON, and step or time selections.
#   cli_marker_summary_test.sh NEURONPROF_BINARY WRITE_REQUEST_XPLANE_BINARY
set -u
CLI=$1
WRITER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin marker_summary

SLOW=$WORK/slow
CALM=$WORK/calm
mkdir -p "$SLOW" "$CALM"
# Requests 17 and 123 of 200 wait 30 ms more in queue_wait.
"$WRITER" "$SLOW" host --requests 200 --slow 17,123 --delay_us 30000 >/dev/null ||
  { echo "FAIL: writer"; exit 1; }
"$WRITER" "$CALM" host --requests 200 >/dev/null || { echo "FAIL: writer"; exit 1; }

if run 0 "text" summary "$SLOW"; then
  has "step statistics" "$WORK/out" "Step times by name"
  has "tail headline" "$WORK/out" "request: p50 3.52 ms, p99 3.84 ms, max 33.5 ms (200 instances)"
  has "tail names the delayed child" "$WORK/out" \
    "the slowest 1 % (2) take +30 ms over the median band, spending +30 ms in queue_wait, +4.76 us in 3 other parts"
  has "markers have self and percentiles" "$WORK/out" "Calls Total(ms) Self(ms) Mean(us)  p50(us)  p90(us)  p99(us)   Max(us)"
  # Quiet where there is nothing to say: no empty operator section, no
  # operator columns of 0.0 %, one line naming what this capture lacks.
  has "absent tables named once" "$WORK/out" \
    "Not in this capture: operator table (no operator events: capture with ProfilerOptions::profile_type = ProfileType::kOperator"
  hasnt "no empty operator section" "$WORK/out" "Operators: 0 calls"
  hasnt "no Forward/Backward columns of zeros" "$WORK/out" "Forward"
  has "the step breakdown keeps its columns" "$WORK/out" "Step Time(ms) Markers"
fi
# --kernel_csv / --memory_csv of a host-only capture: why, and no file.
if run 0 "--kernel_csv without device data" summary "$SLOW" --kernel_csv "$WORK/kernels.csv" \
     --memory_csv "$WORK/memory.csv"; then
  has "kernel_csv says why" "$WORK/err" \
    "neuronprof: note: --kernel_csv: nothing written: the capture has no device planes"
  has "memory_csv says why" "$WORK/err" \
    "neuronprof: note: --memory_csv: nothing written: the capture has no allocation events"
  hasnt "no 'wrote' for them" "$WORK/out" "wrote $WORK/kernels.csv"
  [[ ! -e $WORK/kernels.csv && ! -e $WORK/memory.csv ]] && pass "no empty CSV files" ||
    fail "empty CSV files written"
fi
run 0 "no delay" summary "$CALM" && has "nothing blamed" "$WORK/out" "nothing to blame"

# Requests 17 and 123 ran on worker-2 and worker-4 (round robin).
run 0 "--by_thread" summary "$SLOW" --by_thread &&
  has "a row per thread" "$WORK/out" "queue_wait -      worker-3    50    50.000   50.000 1000.000"
run 0 "--by_thread_group" summary "$SLOW" --by_thread_group &&
  has "a row per thread group" "$WORK/out" "queue_wait -      worker-*   200   260.000"
usage_error_rc() { run 2 "$1" "${@:3}" && has "$1 message" "$WORK/err" "$2"; }
usage_error_rc "both groupings" "excludes" summary "$SLOW" --by_thread --by_thread_group

# CSV: one table on stdout, every table in a folder.
if run 0 "--csv - --table markers" summary "$SLOW" --csv - --table markers; then
  head -1 "$WORK/out" | grep -qxF "name,source,thread,calls,total_us,self_us,mean_us,p50_us,p90_us,p99_us,max_us,device_us,device_events,device_flops" &&
    pass "markers csv header" || fail "markers csv header: $(head -1 "$WORK/out")"
  has "markers csv row" "$WORK/out" "queue_wait,,,200,260000.000,260000.000,1300.000,1000.000,1000.000,"
  hasnt "csv only" "$WORK/out" "Step times"
fi
if run 0 "--csv - on a marker-only capture" summary "$SLOW" --csv -; then
  has "the empty table is said" "$WORK/err" "the operators table is empty; tables: operators, time_share, steps, step_stats, tails, markers"
fi
if run 0 "--csv_dir" summary "$SLOW" --csv_dir "$WORK/tables"; then
  for table in operators time_share steps step_stats tails markers async_spans counters instants memory kernels \
      recommendations; do
    [[ -s $WORK/tables/$table.csv ]] && pass "$table.csv" || fail "$table.csv missing"
  done
  has "tails csv" "$WORK/tables/tails.csv" "step,request,200,3520.000,3839.800,33530.000,2,42,"
  has "tails csv part" "$WORK/tables/tails.csv" ",1,queue_wait,30000.000,31000.000,1000.000"
  has "step_stats csv" "$WORK/tables/step_stats.csv" "request,,200,"
  has "csv_dir reported" "$WORK/out" "wrote 12 tables to $WORK/tables/"
fi

# JSON: one strict document with every table.
if run 0 "--json -" summary "$SLOW" --json -; then
  python3 - "$WORK/out" <<'PY' && pass "json document" || fail "json document: $(head -c 300 "$WORK/out")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["format"] == "neuronprof.summary/1", doc["format"]
assert doc["selection"] is None
assert doc["warnings"] == [], doc["warnings"]  # what the capture lost: nothing here
tables = doc["tables"]
assert list(tables) == ["operators", "time_share", "steps", "step_stats", "tails", "markers",
                        "async_spans", "counters", "instants", "memory", "kernels",
                        "recommendations"], list(tables)
tail = tables["tails"][0]
assert tail["name"] == "request" and tail["part"] == "queue_wait", tail
assert tail["excess_us"] == 30000.0, tail
q = [m for m in tables["markers"] if m["name"] == "queue_wait"][0]
assert q["calls"] == 200 and q["max_us"] == 31000.0 and q["source"] == "", q
assert "+30 ms in queue_wait" in doc["tails"][0], doc["tails"]
assert len(tables["steps"]) == 200
PY
fi
run 0 "--json FILE" summary "$SLOW" --json "$WORK/summary.json" &&
  has "json path reported" "$WORK/out" "wrote $WORK/summary.json" &&
  python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$WORK/summary.json" &&
  pass "json file parses"

# Selections.
if run 0 "--steps" summary "$SLOW" --steps 10-19 --csv - --table step_stats; then
  has "ten steps" "$WORK/out" "request,,10,"
fi
run 0 "--steps text" summary "$SLOW" --steps 10-19 &&
  has "selection said" "$WORK/out" "Selection: steps 10-19: the 50 events wholly inside"
run 0 "--window_ms" summary "$SLOW" --window_ms 0-100 --csv - --table step_stats &&
  has "two steps in 100 ms" "$WORK/out" "request,,2,"
run 1 "steps not there" summary "$SLOW" --steps 500-600 &&
  has "steps not there message" "$WORK/err" "no step numbered 500-600: the capture's steps are numbered 0-199"
usage_error_rc "bad --steps" "--steps: '5-3' is not a step range A-B" summary "$SLOW" --steps 5-3
usage_error_rc "bad --window_ms" "--window_ms: 'x' is not a window A-B" summary "$SLOW" --window_ms x
usage_error_rc "both selections" "excludes" summary "$SLOW" --steps 1-2 --window_ms 0-1
usage_error_rc "unknown table" "--table: nope not in" summary "$SLOW" --csv - --table nope
usage_error_rc "--table without --csv" "--table requires --csv" summary "$SLOW" --table markers

# A serving capture with flows: a client's request step holds an enqueue
# producer whose infer consumer runs on a worker; an async span per request;
# a queue_depth counter and cache_miss instants. Requests 7 and 123 wait
# 30 ms more between enqueue and infer.
FLOWS=$WORK/flows
mkdir -p "$FLOWS"
"$WRITER" "$FLOWS" host --flows --slow 7,123 --delay_us 30000 >/dev/null ||
  { echo "FAIL: writer --flows"; exit 1; }
if run 0 "flows text" summary "$FLOWS"; then
  has "step tail names the queue wait" "$WORK/out" "+30 ms in wait enqueue->infer"
  has "async tail" "$WORK/out" "requests/request: p50"
  has "async spans table" "$WORK/out" "Async spans: 1 (name, track)"
  has "counters table" "$WORK/out" "Counters: 1"
  has "instants table" "$WORK/out" "Instants: 1"
fi
run 0 "counters csv" summary "$FLOWS" --csv - --table counters &&
  has "counter row" "$WORK/out" "queue_depth,400,0,0.5,1,0,"
run 0 "instants csv" summary "$FLOWS" --csv - --table instants &&
  has "instant row" "$WORK/out" "cache_miss,20"
run 0 "async csv with --steps" summary "$FLOWS" --steps 10-19 --csv - --table async_spans &&
  has "ten async spans" "$WORK/out" "request,requests,10,"
if run 0 "flows --json -" summary "$FLOWS" --json -; then
  python3 - "$WORK/out" <<'PY' && pass "flows json" || fail "flows json: $(head -c 300 "$WORK/out")"
import json, sys
doc = json.load(open(sys.argv[1]))
tables = doc["tables"]
assert tables["counters"][0]["name"] == "queue_depth", tables["counters"]
assert tables["instants"] == [{"name": "cache_miss", "count": 20}], tables["instants"]
assert tables["async_spans"][0]["calls"] == 200, tables["async_spans"]
parts = [t for t in tables["tails"] if t["kind"] == "async"]
assert parts[0]["part"] == "wait enqueue->infer" and parts[0]["excess_us"] == 30000.0, parts
assert any("+30 ms in wait enqueue->infer" in t for t in doc["tails"]), doc["tails"]
PY
fi

cli_test_end
