#!/usr/bin/env bash
# What the fuzz corpora reach: each target's replayer (replay_main.cc) runs
# its corpus and kept findings once (MUTATIONS=0 by default) in a clang
# build instrumented for source coverage, and the lines and functions of
# the readers and writers (src/export, src/analysis, src/xplane, src/rpc,
# tools/) they run are summed per folder, from llvm-cov's export.
# --unreached also lists every function there that no input reaches.
# The build folder is configured (clang-14, -O0, coverage) when missing.
#   tests/fuzz/coverage.sh [BUILD_DIR] [--unreached]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "${1:-build-cov}")
unreached=${2:-}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O0 -fprofile-instr-generate -fcoverage-mapping" \
    -DCMAKE_EXE_LINKER_FLAGS=-fprofile-instr-generate \
    -DNEURONPROF_BUILD_BENCH=OFF -DNEURONPROF_BUILD_EXAMPLES=OFF >/dev/null
fi
targets=(fuzz_xspace_readers:xspace fuzz_capture_response:response fuzz_profile_request:request)
cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]%%:*}" >/dev/null
profiles=$(mktemp -d "${TMPDIR:-/tmp}/neuronprof_coverage_XXXXXX")
trap 'rm -rf "$profiles"' EXIT
objects=()
for pair in "${targets[@]}"; do
  target=${pair%%:*} corpus=${pair##*:}
  inputs=("$root/tests/fuzz/corpus/$corpus")
  [[ -d "$root/tests/fuzz/findings/$corpus" ]] && inputs+=("$root/tests/fuzz/findings/$corpus")
  LLVM_PROFILE_FILE="$profiles/$target-%p.profraw" \
    "$build/tests/fuzz/$target" --mutations "${MUTATIONS:-0}" "${inputs[@]}" >/dev/null
  objects+=(${objects[0]+-object} "$build/tests/fuzz/$target")
done
llvm-profdata-14 merge -sparse "$profiles"/*.profraw -o "$profiles/all.profdata"
llvm-cov-14 export -format=text -instr-profile="$profiles/all.profdata" "${objects[@]}" \
  2>/dev/null >"$profiles/coverage.json"
python3 - "$profiles/coverage.json" "$unreached" <<'PY'
import json, re, subprocess, sys
# Paths in the mapping may be relative to a compile folder (ccache's base dir).
FOLDER = re.compile(r"(?:^|/)(src/(?:export|analysis|xplane|rpc)|tools)/[^/]+$")
data = json.load(open(sys.argv[1]))["data"][0]
totals = {}
for f in data["files"]:
    m = FOLDER.search(f["filename"])
    if not m or not f["filename"].endswith(".cc"):
        continue
    t = totals.setdefault(m.group(1), [0, 0, 0, 0])
    s = f["summary"]
    t[0] += s["lines"]["covered"]; t[1] += s["lines"]["count"]
    t[2] += s["functions"]["covered"]; t[3] += s["functions"]["count"]
print(f"{'folder':<14} {'lines':>17} {'functions':>15}")
for k in sorted(totals):
    lc, ln, fc, fn = totals[k]
    print(f"{k:<14} {lc:>6}/{ln:<6} {100*lc/max(ln,1):5.1f}% {fc:>5}/{fn:<5} {100*fc/max(fn,1):5.1f}%")
lc, ln, fc, fn = (sum(t[i] for t in totals.values()) for i in range(4))
print(f"{'all':<14} {lc:>6}/{ln:<6} {100*lc/max(ln,1):5.1f}% {fc:>5}/{fn:<5} {100*fc/max(fn,1):5.1f}%")
if sys.argv[2] != "--unreached":
    sys.exit(0)
# A function counts as reached when any object's copy of it ran.
reached, where = {}, {}
for fn in data["functions"]:
    path = next((p for p in fn["filenames"] if FOLDER.search(p) and p.endswith(".cc")), None)
    if path is None:
        continue
    name = fn["name"].split(":")[-1]
    reached[name] = reached.get(name, False) or fn["count"] > 0
    where[name] = path[FOLDER.search(path).start():].lstrip("/")
names = sorted(n for n, r in reached.items() if not r)
plain = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout
def short(demangled):  # Argument lists dropped: lambdas stay told apart.
    while True:
        shorter = re.sub(r"\([^()]+\)", "()", demangled)
        if shorter == demangled:
            return re.sub(r"\[abi:cxx11\]|neuronprof::|\(anonymous namespace\)::", "", shorter)
        demangled = shorter
for line in sorted({f"{where[n]}: {short(d)}" for n, d in zip(names, plain.splitlines())}):
    print(line)
PY
