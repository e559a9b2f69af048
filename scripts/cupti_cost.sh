#!/usr/bin/env bash
# CUPTI's cost on a GPU, measured with examples/cuda_steps: each round runs
# the same loop without and with a capture (the order swapped every round),
# once as it is and once with LAUNCHES extra empty kernels per step, and the
# medians give the cost per step and per kernel launch. Needs an NVIDIA GPU.
#
#   bash scripts/cupti_cost.sh [BIN] [ROUNDS] [STEPS] [LAUNCHES]
#
# BIN defaults to build/examples/cuda_steps/cuda_steps; 5 rounds of 200
# steps, 100 extra launches. Exit 1 when a run fails.
set -euo pipefail
bin=${1:-build/examples/cuda_steps/cuda_steps}
rounds=${2:-5}
steps=${3:-200}
launches=${4:-100}
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

# Prints the run's microseconds per step.
us_per_step() {
  local out
  out=$("$bin" "$logdir" --steps "$steps" "$@") || { echo "$out" >&2; return 1; }
  sed -n 's/.* \([0-9.]*\) us per step.*/\1/p' <<<"$out"
}

median() {
  printf '%s\n' "$@" | sort -g |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

declare -a off0 on0 offk onk
for ((r = 0; r < rounds; ++r)); do
  if ((r % 2 == 0)); then
    off0+=("$(us_per_step --no-profile)"); on0+=("$(us_per_step)")
    offk+=("$(us_per_step --no-profile --launches "$launches")")
    onk+=("$(us_per_step --launches "$launches")")
  else
    onk+=("$(us_per_step --launches "$launches")")
    offk+=("$(us_per_step --no-profile --launches "$launches")")
    on0+=("$(us_per_step)"); off0+=("$(us_per_step --no-profile)")
  fi
  echo "round $r: us per step off/on ${off0[r]} / ${on0[r]};" \
       "with $launches launches ${offk[r]} / ${onk[r]}"
done
m_off0=$(median "${off0[@]}"); m_on0=$(median "${on0[@]}")
m_offk=$(median "${offk[@]}"); m_onk=$(median "${onk[@]}")
awk -v a="$m_off0" -v b="$m_on0" -v c="$m_offk" -v d="$m_onk" -v k="$launches" 'BEGIN {
  printf "median us per step: %.1f off, %.1f on (+%.1f us, x%.3f)\n", a, b, b - a, b / a
  printf "with %d launches:   %.1f off, %.1f on (+%.1f us)\n", k, c, d, d - c
  printf "CUPTI cost per kernel launch: %.2f us\n", ((d - c) - (b - a)) / k
}'
