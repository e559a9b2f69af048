#!/usr/bin/env bash
# Proves neuronprof is consumable by other CMake projects.
#
#   tests/packaging/check_packaging.sh <neuronprof_source_dir> <work_dir>
#
# 1. configures, builds and installs neuronprof (Release, no tests/examples/
#    bench) into <work_dir>/prefix;
# 2. checks the installed headers include no protobuf / grpc headers and
#    the installed package files do not point into the build or source tree;
# 3. builds tests/packaging/find_package against the prefix
#    (find_package(neuronprof CONFIG REQUIRED) via CMAKE_PREFIX_PATH);
# 4. builds tests/packaging/add_subdirectory (add_subdirectory(<source>));
# 5. runs both consumers.
# Prints one "PASS:"/"FAIL:" line per check and exits non-zero if any failed.
# Parallelism: $NEURONPROF_JOBS (default 2). Extra configure arguments for
# every project (e.g. -DCMAKE_CXX_COMPILER=...): $NEURONPROF_CMAKE_ARGS.
set -u

if [[ $# -ne 2 ]]; then
  echo "usage: $0 <neuronprof_source_dir> <work_dir>" >&2
  exit 2
fi
SRC=$(cd "$1" && pwd) || { echo "no such source dir: $1" >&2; exit 2; }
mkdir -p "$2" || exit 2
WORK=$(cd "$2" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JOBS=${NEURONPROF_JOBS:-2}
read -r -a EXTRA_ARGS <<< "${NEURONPROF_CMAKE_ARGS:-}"

PREFIX=$WORK/prefix
MAIN_BUILD=$WORK/build-neuronprof
FP_BUILD=$WORK/build-find_package
AS_BUILD=$WORK/build-add_subdirectory
LOGS=$WORK/logs
# Fresh state every run: stale caches or an old prefix must not hide a bug.
rm -rf "$PREFIX" "$MAIN_BUILD" "$FP_BUILD" "$AS_BUILD" "$LOGS"
mkdir -p "$LOGS"

FAILED=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILED=1; }

# run_logged <log name> <command...>: runs quietly, shows the log tail on error.
run_logged() {
  local log="$LOGS/$1.log"; shift
  if "$@" >"$log" 2>&1; then
    return 0
  fi
  echo "---- $* failed; last lines of $log:" >&2
  tail -n 40 "$log" >&2
  return 1
}

echo "== neuronprof packaging check: source $SRC, work dir $WORK"

# The optional collectors (libtorch, CUPTI) have their own tests and are not
# installed; leaving them out keeps this check to the core library's packaging.
OPTIONAL_OFF=(-DNEURONPROF_WITH_TORCH=OFF -DNEURONPROF_WITH_CUPTI=OFF)

# ---- 1. Build and install the library. -------------------------------------
INSTALLED=0
if run_logged main-configure cmake -S "$SRC" -B "$MAIN_BUILD" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
      -DNEURONPROF_BUILD_TESTS=OFF -DNEURONPROF_BUILD_EXAMPLES=OFF \
      -DNEURONPROF_BUILD_BENCH=OFF -DNEURONPROF_INSTALL=ON "${OPTIONAL_OFF[@]}" "${EXTRA_ARGS[@]}" &&
   run_logged main-build cmake --build "$MAIN_BUILD" -j "$JOBS" &&
   run_logged main-install cmake --install "$MAIN_BUILD"; then
  pass "install: neuronprof built and installed into $PREFIX"
  INSTALLED=1
else
  fail "install: building/installing neuronprof (logs in $LOGS)"
fi

# ---- 2. What got installed. ------------------------------------------------
if [[ $INSTALLED == 1 ]]; then
  INC=$PREFIX/include
  if [[ -f $INC/neuronprof/neuronprof.h ]]; then
    pass "headers: $INC/neuronprof/neuronprof.h installed"
  else
    fail "headers: $INC/neuronprof/neuronprof.h missing"
  fi
  if [[ -d $INC ]] && hits=$(grep -rnE 'google/protobuf|grpc' "$INC"); then
    echo "$hits"
    fail "headers: installed headers mention protobuf/grpc (see above)"
  else
    pass "headers: no protobuf/grpc includes in $INC"
  fi
  CONFIG=$(find "$PREFIX" -name neuronprofConfig.cmake -print -quit)
  if [[ -n $CONFIG ]]; then
    pass "config: $CONFIG"
    # An installed package must not refer to the tree it was built from.
    if hits=$(grep -rnF -e "$MAIN_BUILD" -e "$SRC/" "$(dirname "$CONFIG")"); then
      echo "$hits"
      fail "config: installed package files point into the build/source tree"
    else
      pass "config: installed package files are relocatable (no build/source paths)"
    fi
  else
    fail "config: no neuronprofConfig.cmake under $PREFIX"
  fi
fi

# run_consumer <name> <build dir>: runs the consumer with a fresh logdir.
run_consumer() {
  local name=$1 build=$2 logdir="$WORK/logdir-$1"
  rm -rf "$logdir"
  if run_logged "$name-run" "$build/consumer" "$logdir"; then
    if compgen -G "$logdir/plugins/profile/*/consumer.xplane.pb" >/dev/null; then
      pass "$name: consumer built, ran, wrote $(echo "$logdir"/plugins/profile/*/consumer.xplane.pb)"
    else
      fail "$name: consumer ran but no $logdir/plugins/profile/*/consumer.xplane.pb"
    fi
  else
    fail "$name: consumer exited non-zero (log: $LOGS/$name-run.log)"
  fi
}

# ---- 3. find_package consumer. ---------------------------------------------
if [[ $INSTALLED == 1 ]] &&
   run_logged find_package-configure cmake -S "$HERE/find_package" -B "$FP_BUILD" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" "${EXTRA_ARGS[@]}" &&
   run_logged find_package-build cmake --build "$FP_BUILD" -j "$JOBS"; then
  run_consumer find_package "$FP_BUILD"
else
  fail "find_package: consumer did not configure/build (logs in $LOGS)"
fi

# ---- 4. add_subdirectory consumer. -----------------------------------------
if run_logged add_subdirectory-configure cmake -S "$HERE/add_subdirectory" -B "$AS_BUILD" \
      -DCMAKE_BUILD_TYPE=Release -DNEURONPROF_SOURCE_DIR="$SRC" "${OPTIONAL_OFF[@]}" "${EXTRA_ARGS[@]}" &&
   run_logged add_subdirectory-build cmake --build "$AS_BUILD" -j "$JOBS" --target consumer; then
  run_consumer add_subdirectory "$AS_BUILD"
else
  fail "add_subdirectory: consumer did not configure/build (logs in $LOGS)"
fi

if [[ $FAILED == 0 ]]; then
  echo "== packaging check PASSED"
else
  echo "== packaging check FAILED"
fi
exit $FAILED
