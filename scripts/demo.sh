#!/usr/bin/env bash
# Quick start, part 1: installs dependencies, builds every example and the
# CLI (build/tools/neuronprof: what README.md and docs/guide/ use), and runs
# what this machine can show, each into ./logs:
#   1. the MLP training demo under a Profiler (markers, steps)
#   2. the same MLP in libtorch with operator profiling and its op table
#   3. the MLP data-parallel on 2 ranks, captured remotely from both at once,
#      with Kineto files (the PyTorch plugin's Distributed view, HTA)
#   4. an inference server under Poisson load on a fake accelerator
#   5. a flight recorder that dumps a slow request by itself
#   6. a deliberate memory leak, found by the summary's memory tables
# and ends with where to view each run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target neuronprof_cli mlp_demo training_schedule \
  capture_server_demo custom_device_demo flight_recorder_server inference_server \
  libtorch_mlp memory_leak libtorch_ddp
newest_run() { ls -1dt logs/plugins/profile/*/ | head -n 1; }

echo "== MLP training loop under a Profiler (markers and steps)"
./build/examples/mlp_demo --logdir logs "$@"
mlp_run=$(newest_run)
echo
echo "Summary of the newest run ($mlp_run):"
./build/tools/neuronprof info "$mlp_run"*.xplane.pb

echo
echo "== libtorch MLP with operator profiling (profile_type kOperator)"
./build/examples/libtorch_mlp --logdir logs
torch_run=$(newest_run)
echo
./build/tools/neuronprof summary "$torch_run"

echo
echo "== libtorch DDP: 2 ranks over Gloo (rank 1 slowed down), one capture of both"
# Rank r serves captures on 9012 + r. --wait_for_capture: the ranks train
# once both capture windows are open, and their exit ends the windows.
# One Kineto trace per rank too (by default), logs/<run>/<host>_rank<R>.pt.trace.json.gz.
ddp_log=$(mktemp)
./build/examples/libtorch_ddp --world_size 2 --steps 30 --slow_rank 1 --slow_ms 20 \
  --wait_for_capture --logdir logs >"$ddp_log" 2>&1 &
ddp=$!
for _ in $(seq 300); do
  [ "$(grep -c 'neuronprof server listening' "$ddp_log")" -ge 2 ] && break
  kill -0 "$ddp" 2>/dev/null || break
  sleep 0.1
done
ddp_run=ddp_$(date +%Y_%m_%d_%H_%M_%S)
./build/tools/neuronprof capture --service_addr 127.0.0.1:9012-9013 --logdir logs \
  --duration_ms 60000 --run_name "$ddp_run" || { cat "$ddp_log"; kill "$ddp"; exit 1; }
wait "$ddp" || { cat "$ddp_log"; exit 1; }
grep -E '^rank [0-9]+: done' "$ddp_log"
rm -f "$ddp_log"
echo
# The multi-rank summary (per rank and step: compute, communication,
# overlap, idle; the straggler; the collectives).
./build/tools/neuronprof summary "logs/plugins/profile/$ddp_run" --top 4

echo
echo "== inference server: 6000 requests at 2000/s, dynamic batching, fake NPU"
./build/examples/inference_server --logdir logs --requests 6000 --rate 2000 --workers 2 \
  --max_batch 8 --batch_timeout_us 2000 --accelerator
server_run=$(newest_run)
echo
./build/tools/neuronprof summary "$server_run" --top 8

echo
echo "== flight recorder: a request over its 50 ms threshold dumps the ring by itself"
./build/examples/flight_recorder_server --logdir logs
flight_run=$(newest_run)

echo
echo "== memory: libtorch allocations by operator and step, and a leak"
./build/examples/memory_leak --logdir logs >/dev/null
leak_run=$(newest_run)
./build/tools/neuronprof summary "$leak_run" | grep -E '^Memory of|LEAK'

cat <<EOF

== Where to view each run (pip install tensorboard xprof torch-tb-profiler)
  tensorboard --logdir logs   PROFILE tab (xprof): each run below (the DDP run: one host per rank);
                              PYTORCH_PROFILER tab: the Kineto traces, the DDP run's Distributed view
  HTA:                        TraceAnalysis(trace_dir="logs/$ddp_run")
  Perfetto (ui.perfetto.dev): drag a run's <host>.trace.json.gz (libtorch runs: logs/<run>/<host>.pt.trace.json.gz)
  in the terminal:            build/tools/neuronprof summary <run>
  markers and steps:          $mlp_run
  libtorch operators:         $torch_run
  2 DDP ranks, a straggler:   logs/plugins/profile/$ddp_run/ (threads rank<R>-main, rank<R>-gloo)
  inference server, fake NPU: $server_run
  flight-recorder dump:       $flight_run
  memory leak:                $leak_run
Next: README.md, "Where to go next" (docs/guide/): every command there runs as written.
EOF
