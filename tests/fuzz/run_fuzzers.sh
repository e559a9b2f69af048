#!/usr/bin/env bash
# Runs every libFuzzer target of a NEURONPROF_FUZZ=ON build for a bounded
# time, side by side, starting from the committed seed corpus (copied to a scratch
# folder, so the tree stays clean) plus the kept findings. Any crash, leak,
# sanitizer report or timeout fails the run; libFuzzer leaves the input as
# crash-*/leak-*/timeout-* in the artifacts folder, which is printed.
# The seed is fixed (NEURONPROF_FUZZ_SEED, default 1), so a run is a prefix
# of the same input sequence everywhere: what passed here for longer passes
# in CI too, and a finding reproduces. NEURONPROF_FUZZ_MAX_RUNS (300000)
# caps the inputs per target, so a faster machine does not run past the
# prefix that was checked before submitting.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET]
set -euo pipefail
build=$1
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/neuronprof_fuzz_XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
targets=(fuzz_xspace_readers:xspace fuzz_capture_response:response fuzz_profile_request:request)
# fuzz_one <target> <corpus>: one target for the time budget; its exit status.
fuzz_one() {
  local target=$1 corpus=$2
  mkdir -p "$scratch/$target/corpus" "$scratch/$target/artifacts"
  cp "$here/corpus/$corpus"/* "$scratch/$target/corpus/"
  if [[ -d "$here/findings/$corpus" ]]; then
    cp "$here/findings/$corpus"/* "$scratch/$target/corpus/"
  fi
  # -rss_limit_mb: the readers must not allocate without bound.
  "$build/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 \
    -seed="${NEURONPROF_FUZZ_SEED:-1}" -runs="${NEURONPROF_FUZZ_MAX_RUNS:-300000}" \
    -dict="$here/int64_extremes.dict" \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$scratch/$target/artifacts/" \
    "$scratch/$target/corpus" >"$scratch/$target/log" 2>&1
}
# The targets run side by side (one core each where there are enough): the
# stage takes the time of one target, not of all of them in a row.
pids=()
for pair in "${targets[@]}"; do
  echo "== ${pair%%:*} for ${seconds}s"
  fuzz_one "${pair%%:*}" "${pair##*:}" &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  target=${targets[$i]%%:*}
  if ! wait "${pids[$i]}"; then
    failed=1
    echo "FAIL: $target found a problem:"
    grep -E -A25 "ERROR:|runtime error|Test unit written" "$scratch/$target/log" | head -60
    mkdir -p "${NEURONPROF_FUZZ_KEEP:-$PWD/fuzz-findings}"
    cp "$scratch/$target/artifacts/"* "${NEURONPROF_FUZZ_KEEP:-$PWD/fuzz-findings}/" 2>/dev/null || true
    echo "inputs kept in ${NEURONPROF_FUZZ_KEEP:-$PWD/fuzz-findings}/"
  else
    echo -n "$target: "
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$scratch/$target/log" |
      tr '\n' ' '
    echo
  fi
done
exit $failed
