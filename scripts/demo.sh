#!/usr/bin/env bash
# Quick start, part 1: installs dependencies, builds neuronprof and runs the
# MLP training demo under a Profiler, then the same MLP in libtorch with
# operator profiling and its operator table, then the MLP trained
# data-parallel on 2 ranks and captured remotely from both at once, and an
# inference server under a few seconds of Poisson load.
# Profiles land in ./logs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target mlp_demo libtorch_mlp libtorch_ddp \
  inference_server neuronprof_cli
./build/examples/mlp_demo --logdir logs "$@"
run=$(ls -1dt logs/plugins/profile/*/ | head -n 1)  # the run just written
echo
echo "Summary of the newest run ($run):"
./build/tools/neuronprof info "$run"*.xplane.pb

echo
echo "== libtorch MLP with operator profiling (profile_type kOperator)"
./build/examples/libtorch_mlp --logdir logs
run=$(ls -1dt logs/plugins/profile/*/ | head -n 1)  # the run just written
echo
./build/tools/neuronprof summary "$run"

echo
echo "== libtorch DDP: 2 ranks over Gloo (rank 1 slowed down), one capture of both"
# Rank r serves captures on 9012 + r. --wait_for_capture: the ranks train
# once both capture windows are open, and their exit ends the windows.
ddp_log=$(mktemp)
./build/examples/libtorch_ddp --world_size 2 --steps 30 --slow_rank 1 --slow_ms 20 \
  --wait_for_capture --logdir logs >"$ddp_log" 2>&1 &
ddp=$!
for _ in $(seq 300); do
  [ "$(grep -c 'neuronprof server listening' "$ddp_log")" -ge 2 ] && break
  kill -0 "$ddp" 2>/dev/null || break
  sleep 0.1
done
run=ddp_$(date +%Y_%m_%d_%H_%M_%S)
./build/tools/neuronprof capture --service_addr 127.0.0.1:9012-9013 --logdir logs \
  --duration_ms 60000 --run_name "$run" || { cat "$ddp_log"; kill "$ddp"; exit 1; }
wait "$ddp" || { cat "$ddp_log"; exit 1; }
grep -E '^rank [0-9]+: done' "$ddp_log"
rm -f "$ddp_log"
echo
# The multi-rank summary (per rank and step: compute, communication,
# overlap, idle; the straggler; the collectives).
./build/tools/neuronprof summary "logs/plugins/profile/$run" --top 4

echo
echo "== inference server: 6000 requests at 2000/s, dynamic batching, fake NPU"
./build/examples/inference_server --logdir logs --requests 6000 --rate 2000 --workers 2 \
  --max_batch 8 --batch_timeout_us 2000 --accelerator
run=$(ls -1dt logs/plugins/profile/*/ | head -n 1)  # the run just written
echo
./build/tools/neuronprof summary "$run" --top 8
