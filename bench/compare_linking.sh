#!/usr/bin/env bash
# Enabled-marker cost, static vs shared linking, in alternating rounds.
#
#   bench/compare_linking.sh <build_dir> [rounds] [quick]     (default 5 rounds)
#
# Each round runs neuronprof_linking_bench_static and
# neuronprof_linking_bench_shared (order alternating between rounds), each
# with 3 randomly interleaved repetitions, so both see the same machine
# load. Prints per benchmark the median CPU ns per marker over all
# repetitions of each binary, and the ratio to that binary's floor (two raw
# tick reads). A ~5-minute run for 5 rounds on a 2-core VM. quick (bench/
# perf_table.sh --quick): one repetition of the floor and NEURONPROF_SCOPE
# only, to check that the steps run; its figures are not measurements.
set -euo pipefail
build=${1:?usage: $0 <build_dir> [rounds]}
rounds=${2:-5}
args=(--benchmark_repetitions=3)
if [[ ${3:-} == quick ]]; then
  args=(--benchmark_repetitions=1 --benchmark_min_time=0.01
        --benchmark_filter='Floor|ScopeMacroLiteral')
fi
out=$(mktemp -d /tmp/neuronprof_linking.XXXXXX)
for variant in static shared; do
  [[ -x $build/bench/neuronprof_linking_bench_$variant ]] || {
    echo "missing $build/bench/neuronprof_linking_bench_$variant (build the bench targets)" >&2
    exit 2
  }
done
for ((round = 1; round <= rounds; round++)); do
  order=(static shared)
  ((round % 2 == 0)) && order=(shared static)
  for variant in "${order[@]}"; do
    echo "round $round/$rounds: $variant" >&2
    "$build/bench/neuronprof_linking_bench_$variant" "${args[@]}" \
      --benchmark_enable_random_interleaving=true --benchmark_format=json \
      --benchmark_out="$out/$variant-$round.json" --benchmark_out_format=json >/dev/null
  done
done
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
times = {}
for path in glob.glob(os.path.join(out, "*.json")):
    variant = os.path.basename(path).split("-")[0]
    for run in json.load(open(path))["benchmarks"]:
        if run.get("run_type") == "aggregate" or run.get("error_occurred"):
            continue
        if run.get("drops", 0) != 0:
            sys.exit(f"{path}: {run['name']} dropped events; the numbers would be wrong")
        name = run["run_name"].split("/")[0].removeprefix("BM_")
        times.setdefault(name, {}).setdefault(variant, []).append(run["cpu_time"])
floor = {v: statistics.median(times["Floor_TwoNowTicks"][v]) for v in ("static", "shared")}
print(f"{'benchmark':28} {'static ns':>10} {'shared ns':>10} {'static/floor':>13} {'shared/floor':>13} {'n':>4}")
for name in sorted(times, key=lambda n: (n != "Floor_TwoNowTicks", n)):
    s, d = (statistics.median(times[name][v]) for v in ("static", "shared"))
    n = min(len(times[name]["static"]), len(times[name]["shared"]))
    print(f"{name:28} {s:10.2f} {d:10.2f} {s / floor['static']:13.2f} {d / floor['shared']:13.2f} {n:4}")
PY
if [[ ${3:-} == quick ]]; then rm -rf "$out"; else echo "raw JSON: $out" >&2; fi
