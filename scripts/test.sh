#!/usr/bin/env bash
# Quick start, part 2: the whole test suite, exactly as CI runs it.
#   1. unit tests and packaging tests (ctest) on a RelWithDebInfo build
#   2. interop tests against the real xprof converters (pytest, pinned PyPI)
#   3. unit tests again under ASan+UBSan and under TSan
#   4. each libFuzzer target (tests/fuzz) for NEURONPROF_FUZZ_SECONDS (60)
#      seconds, built with clang under ASan+UBSan; any finding fails
# Set NEURONPROF_SKIP_SANITIZERS=1 to skip steps 3 and 4 while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh --python
jobs=$(nproc)

echo "== build and unit tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== interop tests against xprof"
NEURONPROF_BUILD_DIR="$PWD/build" .venv/bin/python -m pytest tests/interop -q

if [ "${NEURONPROF_SKIP_SANITIZERS:-0}" != "1" ]; then
  for sanitizer in address,undefined thread; do
    dir="build-${sanitizer%%,*}"
    echo "== unit tests under -fsanitize=$sanitizer"
    # Debian's libtorch is not TSan-instrumented, so its tests are left out
    # of the TSan build (tests/CMakeLists.txt); skip building it there too.
    extra=()
    [ "$sanitizer" = thread ] && extra=(-DNEURONPROF_WITH_TORCH=OFF)
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DNEURONPROF_SANITIZE="$sanitizer" \
      -DNEURONPROF_BUILD_BENCH=OFF -DNEURONPROF_BUILD_EXAMPLES=OFF "${extra[@]}" >/dev/null
    cmake --build "$dir" -j"$jobs"
    ctest --test-dir "$dir" --output-on-failure -j"$jobs"
  done

  echo "== fuzzing each reader for ${NEURONPROF_FUZZ_SECONDS:-60}s (clang, ASan+UBSan)"
  cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
    -DNEURONPROF_FUZZ=ON >/dev/null
  cmake --build build-fuzz -j"$jobs"
  bash tests/fuzz/run_fuzzers.sh build-fuzz "${NEURONPROF_FUZZ_SECONDS:-60}"
fi
echo "== all test stages passed"
