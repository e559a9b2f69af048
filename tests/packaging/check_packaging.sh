#!/usr/bin/env bash
# Proves neuronprof is consumable by other CMake projects, as users meet it.
#
#   tests/packaging/check_packaging.sh <neuronprof_source_dir> <build_dir> <work_dir>
#
# 1. installs <build_dir> (an already built tree: nothing is built twice)
#    into <work_dir>/prefix;
# 2. checks the installed headers (no protobuf / grpc), the package files
#    (no build or source paths), the shared libraries' sonames, and that they
#    export only neuronprof symbols (no protobuf, gRPC or Abseil ones);
#    libneuronprof_markers.so needs and imports no Abseil: it loads only the
#    C++ runtime and libunwind;
# 3. markers_only: find_package(neuronprof COMPONENTS markers) loads no other
#    package, the consumer's compile and link have no gRPC/protobuf/Abseil
#    (no Abseil header, flag, library or loaded object), it runs with an
#    "Abseil" of its own (own_abseil.h); the same project builds
#    plugin_backend.so, linked to markers only (and its own "Abseil");
# 4. find_package: the full library; the consumer dlopens plugin_backend.so
#    (RTLD_LOCAL) inside its capture and every backend marker is in the
#    file, as the installed CLI converts it, with the typed arguments
#    (neuronprof::Arg) of its marker; a FlightRecorder consumer
#    with the same plugin is dumped by SIGUSR2 and pulled remotely;
# 5. torch (when installed): the libtorch_mlp example trains under a
#    kOperator capture, and `neuronprof summary` shows its aten operators;
#    a custom op's RegisterOpCost formula gives its FLOPs in the summary;
#    the libtorch_ddp example's 2 ranks are captured by the installed CLI
#    and its multi-rank summary names the slowed rank;
# 6. cupti (when installed): EnableCuptiCollector and a capture without a GPU;
# 7. add_subdirectory: the source tree vendored, as static libraries
#    (BUILD_SHARED_LIBS=OFF, the one-copy build).
# Prints one "PASS:"/"FAIL:" line per check and exits non-zero if any failed.
# Parallelism: $NEURONPROF_JOBS (default 2). Extra configure arguments for
# every project (e.g. -DCMAKE_CXX_COMPILER=...): $NEURONPROF_CMAKE_ARGS.
set -u

if [[ $# -ne 3 ]]; then
  echo "usage: $0 <neuronprof_source_dir> <build_dir> <work_dir>" >&2
  exit 2
fi
SRC=$(cd "$1" && pwd) || { echo "no such source dir: $1" >&2; exit 2; }
MAIN_BUILD=$(cd "$2" && pwd) || { echo "no such build dir: $2" >&2; exit 2; }
mkdir -p "$3" || exit 2
WORK=$(cd "$3" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JOBS=${NEURONPROF_JOBS:-2}
read -r -a EXTRA_ARGS <<< "${NEURONPROF_CMAKE_ARGS:-}"

PREFIX=$WORK/prefix
MO_BUILD=$WORK/build-markers_only
FP_BUILD=$WORK/build-find_package
TORCH_BUILD=$WORK/build-torch
CUPTI_BUILD=$WORK/build-cupti
AS_BUILD=$WORK/build-add_subdirectory
LOGS=$WORK/logs
# Fresh state every run: stale caches or an old prefix must not hide a bug.
rm -rf "$PREFIX" "$MO_BUILD" "$FP_BUILD" "$TORCH_BUILD" "$CUPTI_BUILD" "$AS_BUILD" "$LOGS" \
  "$WORK"/logdir-*
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

# Consumers are built unoptimized and without debug info: this check is
# about packaging, and -O0 compiles libtorch's headers and the vendored
# sources markedly faster than Release (the slowest part of this test).
BUILD_TYPE_ARGS=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0)
# The add_subdirectory consumer builds the core libraries only, static.
OPTIONAL_OFF=(-DNEURONPROF_WITH_TORCH=OFF -DNEURONPROF_WITH_CUPTI=OFF)

# ---- 1. Install the build tree. --------------------------------------------
INSTALLED=0
if run_logged main-install cmake --install "$MAIN_BUILD" --prefix "$PREFIX"; then
  pass "install: $MAIN_BUILD installed into $PREFIX"
  INSTALLED=1
else
  fail "install: cmake --install $MAIN_BUILD (logs in $LOGS)"
fi
LIBDIR=$(dirname "$(find "$PREFIX" -name 'libneuronprof_markers.*' -print -quit 2>/dev/null)")
CLI=$PREFIX/bin/neuronprof

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
  # The markers-only headers (neuronprof::markers) include no Abseil either.
  markers_headers=("$INC"/neuronprof/trace.h "$INC"/neuronprof/trace_events.h
                   "$INC"/neuronprof/export.h "$INC"/neuronprof/internal/*.h)
  if hits=$(grep -nE '#[[:space:]]*include.*absl' "${markers_headers[@]}"); then
    echo "$hits"
    fail "headers: the markers-only headers include Abseil (see above)"
  else
    pass "headers: no Abseil includes in the markers-only headers (${#markers_headers[@]} files)"
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

# ---- 2b. The shared libraries: sonames, exports, dependencies. -------------
if [[ $INSTALLED == 1 ]]; then
  for lib in "$LIBDIR"/libneuronprof*.so; do
    [[ -e $lib ]] || { fail "libraries: no libneuronprof*.so in $LIBDIR"; break; }
    name=$(basename "$lib" .so)
    soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
    if [[ $soname =~ ^$name\.so\.[0-9]+\.[0-9]+$ ]]; then
      pass "soname: $name.so is $soname"
    else
      fail "soname: $name.so has soname '$soname' (want $name.so.MAJOR.MINOR)"
    fi
    # Hidden visibility leaves neuronprof's own symbols and the weak
    # standard-library instantiations every C++ library exports.
    if leaked=$(nm -D --defined-only -C "$lib" | cut -d' ' -f3- |
                grep -E '^((typeinfo( name)?|vtable|VTT) for )?(tensorflow|google|grpc|absl|upb)::|^(grpc|gpr|upb)_'); then
      echo "$leaked" | head -5
      fail "exports: $name.so exports protobuf/gRPC/Abseil symbols (see above)"
    else
      pass "exports: $name.so exports only neuronprof's API ($(nm -D --defined-only "$lib" | grep -c neuronprof) symbols)"
    fi
  done
  if ! dynamic=$(readelf -d "$LIBDIR/libneuronprof_markers.so"); then
    fail "markers: cannot read $LIBDIR/libneuronprof_markers.so"
  elif needed=$(grep -E 'NEEDED.*(grpc|protobuf)' <<<"$dynamic"); then
    echo "$needed"
    fail "markers: libneuronprof_markers.so needs gRPC/protobuf"
  else
    pass "markers: libneuronprof_markers.so needs no gRPC/protobuf"
  fi
  # A program or plug-in with its own Abseil (another version) links markers:
  # a second Abseil loaded beside it, or its symbols bound to the program's,
  # would collide. Nothing but the C++ runtime and libunwind is allowed.
  markers_lib=$LIBDIR/libneuronprof_markers.so
  if [[ -n ${dynamic:-} ]] && needed=$(grep -E 'NEEDED.*libabsl' <<<"$dynamic"); then
    echo "$needed"
    fail "markers: libneuronprof_markers.so needs Abseil (above)"
  elif [[ -n ${dynamic:-} ]]; then
    pass "markers: libneuronprof_markers.so needs no Abseil"
  fi
  if imported=$(nm -D --undefined-only -C "$markers_lib" | grep -E ' absl::'); then
    echo "$imported" | head -5
    fail "markers: libneuronprof_markers.so imports Abseil symbols (above)"
  else
    pass "markers: libneuronprof_markers.so imports no Abseil symbol"
  fi
  # ld.so, the vDSO, the C and C++ runtimes, libunwind and what it loads.
  runtime='linux-vdso\.so\.1|/.*/ld-linux[^/]*\.so\.[0-9]+|lib(c|m|stdc\+\+|gcc_s|unwind)\.so\.[0-9]+'
  if loaded=$(ldd "$markers_lib" | awk '{print $1}'); then
    unwind=$(ldd "$markers_lib" | awk '$1 ~ /^libunwind\.so/ {print $3; exit}')
    unwind_needs=$([[ -n $unwind ]] && ldd "$unwind" | awk '{print $1}')
    if extra=$(grep -vxE "$runtime" <<<"$loaded" | grep -vxF -f <(printf '%s\n' "$unwind_needs")); then
      echo "$extra"
      fail "markers: libneuronprof_markers.so loads more than the C++ runtime and libunwind (above)"
    else
      pass "markers: libneuronprof_markers.so loads only the C++ runtime and libunwind ($(echo $loaded))"
    fi
  else
    fail "markers: ldd $markers_lib failed"
  fi
fi

# configure_and_build <name> <project dir> <build dir> [cmake args...]
configure_and_build() {
  local name=$1 dir=$2 build=$3; shift 3
  run_logged "$name-configure" cmake -S "$dir" -B "$build" "${BUILD_TYPE_ARGS[@]}" \
      -DCMAKE_PREFIX_PATH="$PREFIX" "$@" "${EXTRA_ARGS[@]}" &&
    run_logged "$name-build" cmake --build "$build" -j "$JOBS"
}

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

# ---- 3. markers_only consumer (and the plugin backend). -------------------
PLUGIN=""
if [[ $INSTALLED == 1 ]] && configure_and_build markers_only "$HERE/markers_only" "$MO_BUILD"; then
  link_line=$(cat "$MO_BUILD"/CMakeFiles/consumer_markers.dir/link.txt)
  if grep -qE 'grpc|protobuf|absl' <<<"$link_line"; then
    echo "$link_line"
    fail "markers_only: the link line mentions gRPC/protobuf/Abseil (above)"
  else
    pass "markers_only: link line is libneuronprof_markers and the standard library"
  fi
  # No Abseil on the include path either: no Abseil directory in the compile
  # flags and no Abseil header in the compiler's dependency files (read by
  # each object's .d; none read would prove nothing).
  depfiles=$(find "$MO_BUILD/CMakeFiles" -name '*.o.d' | wc -l)
  hits=$(find "$MO_BUILD/CMakeFiles" -name '*.o.d' -exec grep -lE '/absl/' {} +
         find "$MO_BUILD/CMakeFiles" -name flags.make -exec grep -lE 'absl' {} +)
  if [[ $depfiles == 0 ]]; then
    fail "markers_only: no compiler dependency files (*.o.d) under $MO_BUILD/CMakeFiles"
  elif [[ -n $hits ]]; then
    echo "$hits"
    fail "markers_only: Abseil headers or include flags in the consumer's compile (files above)"
  else
    pass "markers_only: compiled without Abseil (no Abseil header in $depfiles objects' dependencies)"
  fi
  # What the consumer and the plug-in load at run time: no second Abseil.
  if hits=$(ldd "$MO_BUILD/consumer_markers" "$MO_BUILD/plugin_backend.so" | grep -E 'libabsl|grpc|protobuf'); then
    echo "$hits" | head -5
    fail "markers_only: the consumer or the plug-in loads Abseil/gRPC/protobuf (above)"
  else
    pass "markers_only: the consumer and the plug-in load no Abseil, gRPC or protobuf"
  fi
  if run_logged markers_only-run "$MO_BUILD/consumer_markers"; then
    pass "markers_only: consumer ran"
  else
    fail "markers_only: consumer exited non-zero (log: $LOGS/markers_only-run.log)"
  fi
  PLUGIN=$MO_BUILD/plugin_backend.so
  [[ -f $PLUGIN ]] || { fail "markers_only: no $PLUGIN"; PLUGIN=""; }
else
  fail "markers_only: consumer did not configure/build (logs in $LOGS)"
fi

# trace_query <xplane> <python code>: converts the file with the installed
# CLI and runs the code with `events`, the Chrome trace's events.
trace_query() {
  # A fresh file each time: convert never replaces one without --force.
  rm -f "$WORK/converted.json" &&
    "$CLI" convert "$1" -o "$WORK/converted.json" >/dev/null &&
    python3 -c "
import collections, json, sys
trace = json.load(open(sys.argv[1]))
events = trace['traceEvents'] if isinstance(trace, dict) else trace
$2" "$WORK/converted.json"
}

# count_events <xplane> : prints "<name> <count>" per event name and the
# thread names.
count_events() {
  trace_query "$1" '
names = collections.Counter(e["name"] for e in events if e.get("ph") == "X")
threads = [e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"]
for name, count in sorted(names.items()): print(name, count)
for thread in threads: print("thread", thread)
'
}

# typed_args <xplane> : the args of the "typed_work" marker, as JSON with
# sorted keys.
typed_args() {
  trace_query "$1" '
for e in events:
    if e.get("name") == "typed_work": print(json.dumps(e.get("args", {}), sort_keys=True))
'
}

# ---- 4. find_package consumer: full library, plugin loaded with dlopen. -----
if [[ $INSTALLED == 1 ]] && configure_and_build find_package "$HERE/find_package" "$FP_BUILD"; then
  logdir=$WORK/logdir-find_package
  if run_logged find_package-run "$FP_BUILD/consumer" "$logdir" $PLUGIN; then
    pass "find_package: consumer built, ran, recorded exactly its own and the plugin's markers; Stop() wrote the xplane.pb, Chrome and Kineto traces"
    xplane=$(compgen -G "$logdir/plugins/profile/*/consumer.xplane.pb" | head -1)
    if [[ -n $xplane ]] && args=$(typed_args "$xplane" 2>"$LOGS/convert-typed.log") &&
       grep -qF '"batch": 32' <<<"$args" && grep -qF '"dtype": "bf16"' <<<"$args" &&
       grep -qF '"scale": 0.5' <<<"$args"; then
      pass "typed args: neuronprof::Arg's batch, dtype and scale read back by the installed CLI"
    else
      echo "${args:-}"
      fail "typed args: typed_work's args are not batch 32, dtype bf16, scale 0.5 (log: $LOGS/convert-typed.log)"
    fi
    # The installed libunwind/libdw path: the marker's stack, symbolized at
    # Stop(), in the installed CLI's folded stacks.
    if [[ -n $xplane ]] && "$CLI" summary "$xplane" --folded - >"$LOGS/folded.txt" 2>&1 &&
       grep -q 'ConsumerStackedWork().*;stacked_work [0-9]*$' "$LOGS/folded.txt"; then
      pass "call stacks: NEURONPROF_SCOPE_STACK's frames (ConsumerStackedWork) in the installed CLI's --folded"
    else
      fail "call stacks: no ConsumerStackedWork frame before stacked_work in $LOGS/folded.txt"
    fi
    if [[ -n $PLUGIN && -n $xplane ]] && counts=$(count_events "$xplane" 2>"$LOGS/convert.log"); then
      if grep -qx 'backend_op 20' <<<"$counts" && grep -qx 'backend_step 20' <<<"$counts" &&
         grep -qx 'thread backend_worker' <<<"$counts"; then
        pass "dlopen: the RTLD_LOCAL plugin's 40 markers (2 threads, names from its own absl::StrCat) are in $xplane"
      else
        echo "$counts"
        fail "dlopen: the plugin's markers are not all in the capture (counts above)"
      fi
    else
      fail "dlopen: no plugin or no capture file to read (log: $LOGS/convert.log)"
    fi
  else
    fail "find_package: consumer exited non-zero (log: $LOGS/find_package-run.log)"
  fi
  # The flight recorder from the installed package, the plugin recording into
  # its ring; a SIGUSR2 dump and a remote pull each hold every marker, and
  # the installed CLI reads the pulled file.
  logdir=$WORK/logdir-flight
  if [[ -n $PLUGIN ]] && run_logged flight-run "$FP_BUILD/flight_consumer" "$logdir" "$PLUGIN" &&
     pulled=$(compgen -G "$logdir/plugins/profile/pulled/*.xplane.pb" | head -1) &&
     counts=$(count_events "$pulled" 2>"$LOGS/convert-flight.log") &&
     grep -qx 'backend_op 20' <<<"$counts" && grep -qx 'thread backend_worker' <<<"$counts"; then
    pass "flight recorder: the plugin's markers are in a SIGUSR2 dump and a remote pull"
  else
    fail "flight recorder: consumer, dump or pull failed (logs: $LOGS/flight-run.log, convert-flight.log)"
  fi
else
  fail "find_package: consumer did not configure/build (logs in $LOGS)"
fi

# Two ports in a row that nothing listens on, for the DDP ranks' servers.
free_port_pair() {
  python3 - <<'PY'
import socket
for base in range(20000, 60000, 7):
    socks = []
    try:
        for port in (base, base + 1):
            s = socket.socket()
            s.bind(("127.0.0.1", port))
            socks.append(s)
        print(base)
        break
    except OSError:
        pass
    finally:
        for s in socks:
            s.close()
PY
}

# The libtorch_ddp example built against the installed package: 2 ranks
# (rank 1 slowed down) captured by the installed CLI in one command; the
# installed summary must name rank 1 the straggler.
check_ddp_consumer() {
  if [[ ! -x $TORCH_BUILD/consumer_ddp ]]; then
    echo "SKIP: torch ddp: no Gloo headers (libgloo-dev)"
    return
  fi
  local logdir=$WORK/logdir-ddp port ddp_pid
  port=$(free_port_pair)
  "$TORCH_BUILD/consumer_ddp" --world_size 2 --steps 20 --slow_rank 1 --slow_ms 10 \
    --wait_for_capture --port "$port" --hidden 64 --batch 32 >"$LOGS/ddp-run.log" 2>&1 &
  ddp_pid=$!
  for _ in $(seq 600); do
    [[ $(grep -c 'neuronprof server listening' "$LOGS/ddp-run.log") -ge 2 ]] && break
    kill -0 "$ddp_pid" 2>/dev/null || break
    sleep 0.1
  done
  if run_logged ddp-capture "$CLI" capture --service_addr "127.0.0.1:$port-$((port + 1))" \
       --logdir "$logdir" --duration_ms 60000 --run_name ddp &&
     wait "$ddp_pid" &&
     run_logged ddp-summary "$CLI" summary "$logdir/plugins/profile/ddp"; then
    if grep -qE '^Straggler: rank 1\b' "$LOGS/ddp-summary.log" &&
       grep -qE '^  gloo:all_reduce ' "$LOGS/ddp-summary.log" &&
       [[ -f $logdir/ddp/127.0.0.1_rank1.pt.trace.json.gz ]]; then
      pass "torch ddp: 2 Gloo ranks captured in one command; the summary names rank 1 the straggler"
    else
      fail "torch ddp: no straggler rank 1, all_reduce row or Kineto file (log: $LOGS/ddp-summary.log)"
    fi
  else
    kill "$ddp_pid" 2>/dev/null
    fail "torch ddp: ranks, capture or summary failed (logs: $LOGS/ddp-run.log, ddp-capture.log, ddp-summary.log)"
  fi
}

# ---- 5. torch consumer. -----------------------------------------------------
if [[ $INSTALLED == 1 ]] && compgen -G "$PREFIX/*/cmake/neuronprof/neuronprofTorchTargets.cmake" >/dev/null; then
  if configure_and_build torch "$HERE/torch" "$TORCH_BUILD" -DNEURONPROF_SOURCE_DIR="$SRC"; then
    logdir=$WORK/logdir-torch
    if run_logged torch-run "$TORCH_BUILD/consumer_torch" --logdir "$logdir" --epochs 2 &&
       run_logged torch-summary "$CLI" summary "$logdir" --top 0; then
      if grep -qE 'fc2 +fprop +aten::addmm' "$LOGS/torch-summary.log" &&
         grep -qE 'bprop +AddmmBackward0' "$LOGS/torch-summary.log"; then
        pass "torch: the MLP trained under kOperator; summary lists its aten operators under their ModuleScope layers"
      else
        fail "torch: summary has no fprop aten::addmm / bprop AddmmBackward0 (log: $LOGS/torch-summary.log)"
      fi
    else
      fail "torch: consumer or summary failed (logs: $LOGS/torch-run.log, torch-summary.log)"
    fi
    # RegisterOpCost: the installed summary's op table has its FLOPs and
    # bytes (4 calls of 3 and 8 per element of a 64x64 float tensor).
    logdir=$WORK/logdir-op_cost
    if run_logged op_cost-run "$TORCH_BUILD/consumer_op_cost" "$logdir" &&
       run_logged op_cost-summary "$CLI" summary "$logdir" --csv "$LOGS/op_cost.csv" &&
       grep -qE '^,?[a-z]*,aten::cumsum,.*,4,[^,]*,[^,]*,49152,131072,[^,]*,own,' "$LOGS/op_cost.csv"; then
      pass "op costs: RegisterOpCost's aten::cumsum FLOPs and bytes are in the installed summary"
    else
      fail "op costs: no aten::cumsum row with 49152 FLOPs, 131072 bytes (logs: $LOGS/op_cost-run.log, op_cost-summary.log, op_cost.csv)"
    fi
    check_ddp_consumer
  else
    fail "torch: consumer did not configure/build (logs in $LOGS)"
  fi
else
  echo "SKIP: torch: neuronprof was built without libtorch"
fi

# ---- 6. cupti consumer. -----------------------------------------------------
if [[ $INSTALLED == 1 ]] && compgen -G "$PREFIX/*/cmake/neuronprof/neuronprofCuptiTargets.cmake" >/dev/null; then
  no_gpu=()
  command -v nvidia-smi >/dev/null && nvidia-smi >/dev/null 2>&1 || no_gpu=(--no-gpu)
  if configure_and_build cupti "$HERE/cupti" "$CUPTI_BUILD" &&
     run_logged cupti-run "$CUPTI_BUILD/consumer_cupti" "$WORK/logdir-cupti" "${no_gpu[@]}"; then
    pass "cupti: collector enabled from the installed package, capture ran ${no_gpu[*]}"
  else
    fail "cupti: consumer failed (logs in $LOGS)"
  fi
else
  echo "SKIP: cupti: neuronprof was built without CUPTI"
fi

# ---- 7. add_subdirectory consumer. -----------------------------------------
if run_logged add_subdirectory-configure cmake -S "$HERE/add_subdirectory" -B "$AS_BUILD" \
      "${BUILD_TYPE_ARGS[@]}" -DNEURONPROF_SOURCE_DIR="$SRC" -DBUILD_SHARED_LIBS=OFF "${OPTIONAL_OFF[@]}" "${EXTRA_ARGS[@]}" &&
   run_logged add_subdirectory-build cmake --build "$AS_BUILD" -j "$JOBS" --target consumer; then
  run_consumer add_subdirectory "$AS_BUILD"
  if readelf -d "$AS_BUILD/consumer" | grep -q 'NEEDED.*libneuronprof'; then
    fail "add_subdirectory: BUILD_SHARED_LIBS=OFF, yet the consumer needs a libneuronprof*.so"
  else
    pass "add_subdirectory: static libraries (the consumer needs no libneuronprof*.so)"
  fi
else
  fail "add_subdirectory: consumer did not configure/build (logs in $LOGS)"
fi

if [[ $FAILED == 0 ]]; then
  echo "== packaging check PASSED"
else
  echo "== packaging check FAILED"
fi
exit $FAILED
