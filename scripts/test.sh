#!/usr/bin/env bash
# Quick start, part 2: the whole test suite, exactly as CI runs it.
#   1. unit tests and packaging tests (ctest) on a RelWithDebInfo build
#   2. interop tests against the real xprof converters (pytest, pinned PyPI)
#   3. unit tests again under ASan+UBSan (clang, the same build links the
#      libFuzzer targets) and under TSan
#   4. each libFuzzer target (tests/fuzz) for NEURONPROF_FUZZ_SECONDS (60)
#      seconds, side by side; any finding fails
# Set NEURONPROF_SKIP_SANITIZERS=1 to skip steps 3 and 4 while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# The pinned Python tools come from PyPI while the main build compiles:
# mostly downloads, which would leave the cores idle.
mkdir -p build
bash scripts/install_deps.sh --python >build/install_python.log 2>&1 &
python_deps=$!
jobs=$(nproc)

echo "== build and unit tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
wait "$python_deps" || { cat build/install_python.log; exit 1; }
cat build/install_python.log
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== interop tests against xprof"
NEURONPROF_BUILD_DIR="$PWD/build" .venv/bin/python -m pytest tests/interop -q

if [ "${NEURONPROF_SKIP_SANITIZERS:-0}" != "1" ]; then
  # One clang build serves the ASan/UBSan unit tests and the fuzzers
  # (NEURONPROF_FUZZ=ON, cmake/NeuronprofFuzz.cmake); -O1 keeps both quick
  # (the unit tests' own code is compiled at -O0 there: tests/CMakeLists.txt).
  # Sanitizer reports need only line tables: -gline-tables-only here makes
  # objects and binaries a third smaller, -g1 in the TSan build takes ~15 %
  # off its compile; call_stack_test and write_stack_xplane add their own
  # -g (tests/CMakeLists.txt).
  echo "== unit tests under -fsanitize=address,undefined (clang, fuzz targets linked)"
  cmake -S . -B build-address -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only -O1" \
    -DCMAKE_CXX_COMPILER=clang++-14 -DNEURONPROF_FUZZ=ON -DNEURONPROF_SANITIZE=address,undefined \
    -DNEURONPROF_BUILD_BENCH=OFF -DNEURONPROF_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-address -j"$jobs"
  ctest --test-dir build-address --output-on-failure -j"$jobs"

  echo "== unit tests under -fsanitize=thread"
  # Debian's libtorch is not TSan-instrumented, so its tests are left out
  # of the TSan build (tests/CMakeLists.txt); skip building it there too.
  cmake -S . -B build-thread -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1" -DNEURONPROF_SANITIZE=thread \
    -DNEURONPROF_BUILD_BENCH=OFF -DNEURONPROF_BUILD_EXAMPLES=OFF -DNEURONPROF_WITH_TORCH=OFF >/dev/null
  cmake --build build-thread -j"$jobs"
  ctest --test-dir build-thread --output-on-failure -j"$jobs"

  echo "== fuzzing each reader for ${NEURONPROF_FUZZ_SECONDS:-60}s (clang, ASan+UBSan)"
  bash tests/fuzz/run_fuzzers.sh build-address "${NEURONPROF_FUZZ_SECONDS:-60}"
fi
echo "== all test stages passed"
