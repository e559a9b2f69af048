#!/usr/bin/env bash
# Quick start, part 1: installs dependencies, builds neuronprof and runs the
# MLP training demo under a Profiler. The profile lands in ./logs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target mlp_demo neuronprof_cli
./build/examples/mlp_demo --logdir logs "$@"
run=$(ls -1d logs/plugins/profile/*/ | sort | tail -n 1)
echo
echo "Summary of the newest run ($run):"
./build/tools/neuronprof info "$run"*.xplane.pb
