#!/usr/bin/env bash
# Quick start, part 1: installs dependencies, builds neuronprof and runs the
# MLP training demo under a Profiler, then the same MLP in libtorch with
# operator profiling and its operator table. Profiles land in ./logs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target mlp_demo libtorch_mlp neuronprof_cli
./build/examples/mlp_demo --logdir logs "$@"
run=$(ls -1d logs/plugins/profile/*/ | sort | tail -n 1)
echo
echo "Summary of the newest run ($run):"
./build/tools/neuronprof info "$run"*.xplane.pb

echo
echo "== libtorch MLP with operator profiling (profile_type kOperator)"
./build/examples/libtorch_mlp --logdir logs
run=$(ls -1d logs/plugins/profile/*/ | sort | tail -n 1)
echo
./build/tools/neuronprof summary "$run"
