#!/usr/bin/env python3
"""docs/PERFORMANCE.md's first table, measured in one run (stdlib only).

  bash bench/perf_table.sh [BUILD_DIR] [--quick] [--soak_seconds N] [--check]

Runs every row's benchmark from the repository root against BUILD_DIR
(default `build`; the targets of "Building the benchmarks"), each with its
floor and peer in the same process or run as its method section says, and
prints the markdown table (what | figure | goal | peer | command) with the
date, machine, load average and commit above it. Progress goes to stderr.
The flight-recorder soak runs last (--soak_seconds, default 600).
A row whose prerequisite is absent here (a GPU, a Tracy build, libtorch)
says "not measured here" with its command; it never shows an old figure.

--quick: tiny rounds, so that ctest `perf_table_quick` checks in seconds
that every row is produced; its figures are not measurements.
--check: exit 1 when a row failed or a figure is empty or not a number.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

NOT_HERE = "not measured here"


class RowError(Exception):
    """A benchmark that failed or printed something unexpected."""


class Absent(Exception):
    """A prerequisite that this machine or build does not have."""


def log(message):
    print(f"[perf_table] {message}", file=sys.stderr, flush=True)


def median(values):
    return statistics.median(values)


def span(values, fmt):
    """'median (min-max)' of several runs, or the value of one."""
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


class Bench:
    """Runs the commands from the repository root against one build dir."""

    def __init__(self, build, quick, soak_seconds):
        self.build = build
        self.quick = quick
        self.soak_seconds = soak_seconds
        self.tmp = tempfile.mkdtemp(prefix="perf_table.")
        self.results = {}  # job name -> dict, RowError or Absent
        self.seconds = {}  # job name -> wall seconds

    def path(self, relative):
        return os.path.join(self.build, relative)

    def need(self, *relatives):
        """Each of `relatives` is built, or absent by the build's configuration."""
        cache = cmake_cache(self.build)
        for relative in relatives:
            if os.access(self.path(relative), os.X_OK):
                continue
            if "torch" in relative or relative.endswith("stop_bench"):
                found = cache.get("Torch_DIR", "NOTFOUND")
                if found.endswith("NOTFOUND"):
                    raise Absent("no libtorch in this build")
            elif relative.endswith("_shared") and cache.get("BUILD_SHARED_LIBS") in ("OFF", "0", "FALSE"):
                raise Absent("a static-library build")
            elif relative.startswith("examples/") and cache.get("NEURONPROF_BUILD_EXAMPLES") == "OFF":
                raise Absent("examples not built")
            elif relative.startswith("tests/") and cache.get("NEURONPROF_BUILD_TESTS") == "OFF":
                raise Absent("tests not built")
            raise RowError(f"{self.path(relative)} is not built (see 'Building the benchmarks')")

    def sh(self, command, timeout=900):
        """Runs `command` in bash; returns its stdout."""
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise RowError(f"exit {done.returncode}: {' / '.join(tail)}")
        return done.stdout

    def gbench(self, command, timeout=900, real=False):
        """A Google Benchmark run: {run_name: [ns per repetition]} (thread CPU time, or
        wall time when `real`) and {run_name: [its JSON runs]}."""
        fd, out = tempfile.mkstemp(suffix=".json", dir=self.tmp)
        os.close(fd)
        self.sh(f"{command} --benchmark_out={out} --benchmark_out_format=json >/dev/null",
                timeout)
        with open(out) as f:
            runs = json.load(f)["benchmarks"]
        times, counters = {}, {}
        clock = "real_time" if real else "cpu_time"
        for run in runs:
            if run.get("run_type") == "aggregate":
                continue
            if run.get("error_occurred"):
                raise RowError(f"{run['name']}: {run.get('error_message')}")
            scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[run.get("time_unit", "ns")]
            times.setdefault(run["run_name"], []).append(run[clock] * scale)
            counters.setdefault(run["run_name"], []).append(run)
        return times, counters


def cmake_cache(build):
    """{variable: value} of BUILD/CMakeCache.txt."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            return dict(re.findall(r"^([A-Za-z_][\w-]*):\w+=(.*)$", f.read(), re.M))
    except OSError:
        return {}


# ------------------------------------------------------------------ jobs --
# Each job runs one benchmark command (once) and returns what its rows read;
# the commands below are the ones the table prints.

def cmd_serving(b):
    rounds, iterations = (3, 20000) if b.quick else (7, 1000000)
    return f"{b.build}/bench/neuronprof_serving_bench --rounds {rounds} --iterations {iterations}"


def job_serving(b):
    b.need("bench/neuronprof_serving_bench")
    out = b.sh(cmd_serving(b))
    ns = {}
    for line in out.splitlines()[1:]:
        tokens = line.split()
        numbers = []
        while tokens:
            try:
                numbers.insert(0, float(tokens[-1]))
            except ValueError:
                break
            tokens.pop()
        if len(numbers) >= 3:
            ns[" ".join(tokens)] = numbers[0]
    source = re.search(r"tick source: (\w+)", out)
    dropped = re.search(r"events dropped: (\d+)", out)
    if "floor: 2 x NowTicks()" not in ns or not dropped:
        raise RowError("unexpected output")
    if int(dropped.group(1)) != 0:
        raise RowError(f"{dropped.group(1)} events dropped")
    return {"ns": ns, "tick_source": source.group(1) if source else "?"}


def cmd_torch_marker(b):
    reps = 1 if b.quick else 5
    # --quick: the legacy profiler's loop has a fixed 2M iterations (~2 s).
    which = "Disabled" if b.quick else ""
    return (f"{b.build}/bench/neuronprof_torch_bench --benchmark_filter='Torch_RecordFunction_{which}' "
            f"--benchmark_repetitions={reps} --benchmark_enable_random_interleaving=true"
            + (" --benchmark_min_time=0.01" if b.quick else ""))


def job_torch_marker(b):
    b.need("bench/neuronprof_torch_bench")
    times, _ = b.gbench(cmd_torch_marker(b))
    return {re.sub(r"^BM_Torch_RecordFunction_|/.*$", "", name): median(v)
            for name, v in times.items()}


MARKER_FILTER = ("^BM_Marker_(ScopeMacroLiteral|CopiedShortName|Ring_ScopeMacroLiteral)"
                 "/iterations:20000000$|^BM_Marker_Ring_(StepTrace|ScopeMacroLiteral_Trigger)/")


def cmd_markers(b):
    reps = 1 if b.quick else 5
    return (f"{b.build}/bench/neuronprof_bench --benchmark_filter='{MARKER_FILTER}' "
            f"--benchmark_repetitions={reps} --benchmark_enable_random_interleaving=true")


def job_markers(b):
    b.need("bench/neuronprof_bench")
    times, counters = b.gbench(cmd_markers(b))
    for name, runs in counters.items():
        if any(run.get("drops", 0) for run in runs):
            raise RowError(f"{name} dropped events")
    short = {re.sub(r"^BM_Marker_|/iterations:\d+$", "", k): median(v) for k, v in times.items()}
    per_event = {re.sub(r"^BM_Marker_|/iterations:\d+$", "", k): median(
        [r["bytes_per_event"] for r in runs]) for k, runs in counters.items()
        if "bytes_per_event" in runs[0]}
    return {"ns": short, "bytes": per_event}


def cmd_linking(b):
    return f"bash bench/compare_linking.sh {b.build} " + ("1 quick" if b.quick else "3")


def job_linking(b):
    b.need("bench/neuronprof_linking_bench_static", "bench/neuronprof_linking_bench_shared")
    out = b.sh(cmd_linking(b))
    ns = {}
    for line in out.splitlines()[1:]:
        fields = line.split()
        if len(fields) == 6:
            ns[fields[0]] = (float(fields[1]), float(fields[2]))
    if "Exe_ScopeMacroLiteral" not in ns or "Plugin_ScopeMacroLiteral" not in ns:
        raise RowError("unexpected output")
    return ns


MLP_FILTER = ("MlpStep_(NoProfiler|Neuronprof|NeuronprofShapes|NeuronprofStacks"
              "|TorchLegacyProfiler|TorchLegacyProfilerShapes)(/|$)")


def cmd_torch_ops(b):
    reps = 1 if b.quick else 5
    # --quick: the legacy profiler's loops have a fixed 3000 steps (~2 s).
    mlp_filter = MLP_FILTER.replace("|TorchLegacyProfiler|TorchLegacyProfilerShapes", "") \
        if b.quick else MLP_FILTER
    return (f"{b.build}/bench/neuronprof_torch_ops_bench --benchmark_filter='{mlp_filter}' "
            f"--benchmark_repetitions={reps} --benchmark_enable_random_interleaving=true"
            + (" --benchmark_min_time=0.01" if b.quick else ""))


def job_torch_ops(b):
    b.need("bench/neuronprof_torch_ops_bench")
    times, counters = b.gbench(cmd_torch_ops(b))
    us = {k.removeprefix("BM_MlpStep_").split("/")[0]: median(v) / 1e3 for k, v in times.items()}
    ops = [r["ops_per_step"] for runs in counters.values() for r in runs if "ops_per_step" in r]
    if len(us) != (4 if b.quick else 6) or not ops:
        raise RowError(f"unexpected benchmarks: {sorted(us)}")
    return {"us": us, "ops": median(ops)}


def cmd_torch_memory(b):
    return f"{b.build}/bench/neuronprof_torch_memory_bench " + (
        "--rounds 1 --iterations 2000" if b.quick else "--rounds 9")


def job_torch_memory(b):
    b.need("bench/neuronprof_torch_memory_bench")
    out = b.sh(cmd_torch_memory(b))
    events = re.findall(r"per recorded allocation event: neuronprof ([-\d.]+) ns, "
                        r"libtorch legacy ([-\d.]+) ns", out)
    without = re.search(r"without memory profiling: ([-+\d.]+) ns", out)
    if len(events) != 2 or not without:
        raise RowError("unexpected output")
    return {"empty": tuple(map(float, events[0])), "allocate": tuple(map(float, events[1])),
            "without": float(without.group(1))}


def parse_key_values(line):
    return dict(field.split("=", 1) for field in line.split() if "=" in field)


def cmd_stop(b, logdir="stop_logs"):
    steps = " --steps 100" if b.quick else ""
    return f"{b.build}/bench/neuronprof_stop_bench --logdir {logdir}{steps}"


def job_stop(b):
    b.need("bench/neuronprof_stop_bench")
    runs = []
    for _ in range(1 if b.quick else 3):  # One capture per process.
        out = b.sh(cmd_stop(b, f"{b.tmp}/stop_logs"))
        runs.append(parse_key_values(out.strip().splitlines()[-1]))
        b.sh(f"rm -rf {b.tmp}/stop_logs")
    if int(runs[0].get("dropped", 1)) != 0:
        raise RowError("events dropped")
    return runs


def cmd_stop_markers(b, logdir="stop_logs"):
    markers = 200000 if b.quick else 10000000
    return f"{b.build}/bench/neuronprof_stop_bench --markers {markers} --logdir {logdir}"


def job_stop_markers(b):
    b.need("bench/neuronprof_stop_bench")
    out = b.sh(cmd_stop_markers(b, f"{b.tmp}/stop_markers_logs"))
    run = parse_key_values(out.strip().splitlines()[-1])
    b.sh(f"rm -rf {b.tmp}/stop_markers_logs")
    return run


EXPORT_FILTER = "Export1M_Total|Run1M"


def cmd_export(b):
    reps = 1 if b.quick else 5
    return (f"{b.build}/bench/neuronprof_bench --benchmark_filter='{EXPORT_FILTER}' "
            f"--benchmark_repetitions={reps} --benchmark_enable_random_interleaving=true")


def job_export(b):
    b.need("bench/neuronprof_bench")
    # Wall time: the writers run on threads of their own.
    times, _ = b.gbench(cmd_export(b), real=True)
    return {re.sub(r"^BM_|/.*$", "", k): [t / 1e6 for t in v] for k, v in times.items()}


def cmd_remote(b, kineto):
    if b.quick:
        return (f"{b.build}/bench/neuronprof_remote_capture_bench --rounds=1 --duration_ms=300 "
                f"--rate=50000" + (" --kineto=1" if kineto else ""))
    return (f"{b.build}/bench/neuronprof_remote_capture_bench --rounds="
            + ("3 --kineto=1" if kineto else "7"))


def parse_remote(out):
    header = None
    rounds = []
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "round":
            header = fields[1:]
        elif header and fields and fields[0].isdigit() and len(fields) == len(header) + 1:
            rounds.append(dict(zip(header, map(float, fields[1:]))))
    if not rounds:
        raise RowError("no round completed")
    return rounds


def job_remote(b):
    b.need("bench/neuronprof_remote_capture_bench")
    return {"xplane": parse_remote(b.sh(cmd_remote(b, False))),
            "kineto": parse_remote(b.sh(cmd_remote(b, True)))}


def cmd_slow_clients(b):
    return f"bash bench/slow_clients_rss.sh {b.build}" + (" quick" if b.quick else "")


def job_slow_clients(b):
    b.need("bench/slow_clients_probe")
    out = b.sh(cmd_slow_clients(b))
    values = {}
    for key, pattern in (("went", r"after they went: (\d+) MB"),
                         ("pulls", r"after \d+ sequential pulls: (\d+) MB"),
                         ("peak", r"peak: (\d+) MB")):
        found = re.search(pattern, out)
        if not found:
            raise RowError(f"no '{pattern}' in its output")
        values[key] = int(found.group(1))
    return values


def run_measured(command):
    """Runs argv; returns (wall s, CPU s, peak RSS MB) of the process."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    if process.returncode != 0:
        raise RowError(f"{command[0]} exit {process.returncode}: "
                       f"{process.stderr.read().decode(errors='replace')[-200:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def free_port_range(count):
    """A base port whose `count` ports are free now."""
    for base in range(19012, 40000, 97):
        try:
            for port in range(base, base + count):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RowError("no free port range")


def cmd_ranks(b):
    return "section \"Capturing 8 ranks\""


def job_ranks(b):
    b.need("examples/capture_server_demo", "tools/neuronprof")
    root = os.path.join(b.tmp, "ranks")
    os.makedirs(root)
    base = free_port_range(8)
    seconds, window = ("4", "500") if b.quick else ("20", "2000")
    servers = []
    for rank in range(8):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="8")
        servers.append(subprocess.Popen(
            [b.path("examples/capture_server_demo"), "--port",
             str(base + rank), "--allowed_root", root, "--step_ms", "1", "--markers", "50",
             "--seconds", seconds], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
    try:
        wall, cpu, rss = run_measured(
            [b.path("tools/neuronprof"), "capture", "--service_addr",
             f"127.0.0.1:{base}-{base + 7}", "--logdir", os.path.join(root, "logs"),
             "--duration_ms", window, "--run_name", "bench"])
    finally:
        for server in servers:  # Ours: they would run on for --seconds.
            server.terminate()
        for server in servers:
            server.wait()
    return {"wall": wall, "cpu": cpu, "rss": rss}


def cmd_summaries(b):
    return "section \"Readers and summaries\""


def job_summaries(b):
    b.need("tests/write_rank_xplanes", "tests/write_worst_capture", "tools/neuronprof")
    tool = b.path("tools/neuronprof")
    scale = os.path.join(b.tmp, "scale")
    steps, nested, calls = ("100", 4000, 20000) if b.quick else ("1000", 40000, 200000)
    b.sh(f"mkdir -p {scale} && {b.build}/tests/write_rank_xplanes {scale} --world_size 8 --steps {steps} "
         "--extra_ops 95 --straggler 5 >/dev/null")
    summary = run_measured([tool, "summary", scale])
    worst = {}
    for shape, n in (("nested_steps", nested), ("runtime_calls", calls)):
        path = os.path.join(b.tmp, f"{shape}.xplane.pb")
        b.sh(f"{b.build}/tests/write_worst_capture {shape} {n} {path}")
        worst[shape] = (n, run_measured([tool, "summary", path])[0])
    return {"ranks": summary, "worst": worst}


def cmd_always_on(b):
    rounds, requests = (1, 2000) if b.quick else (7, 80000)
    return (f"bash bench/serving_always_on.sh {b.build}/examples/inference_server "
            f"{rounds} {requests} 64")


def job_always_on(b):
    b.need("examples/inference_server")
    out = b.sh(cmd_always_on(b), timeout=1800)
    ratios = dict(re.findall(r"median (requests/s|p99|CPU per request):.*flight/none ([\d.]+)",
                             out))
    if len(ratios) != 3:
        raise RowError("unexpected output")
    return {k: float(v) for k, v in ratios.items()}


def cmd_soak(b):
    if b.quick:
        return (f"{b.build}/bench/flight_recorder_soak --seconds {b.soak_seconds} --last_ms 0 "
                "--ring_mb 8 --dump_every 1 --threads 1")
    return f"{b.build}/bench/flight_recorder_soak --seconds {b.soak_seconds} --last_ms 0"


def job_soak(b):
    b.need("bench/flight_recorder_soak")
    out = b.sh(cmd_soak(b), timeout=b.soak_seconds * 3 + 120)
    dumps = re.findall(r"dump \d+: (\d+) ms, (\d+) events, (-?\d+) more dropped; rss before "
                       r"([\d.]+) MiB, transient \+([-\d.]+) MiB, after ([\d.]+) MiB "
                       r"\(([-+\d.]+) MiB vs recording\)", out)
    flat = re.search(r"growth ([\d.]+) MiB: (flat|NOT FLAT)", out)
    back = re.search(r"vs recording \(([\d.]+) MiB\): at most ([-+\d.]+) MiB: (.*)$", out, re.M)
    ring = re.search(r"ring=(\d+) MiB", out)
    if not dumps:
        raise RowError("no dump in the run (--soak_seconds below 10?)")
    if not flat or not back:
        raise RowError("unexpected output")
    return {"dump_ms": [float(d[0]) for d in dumps], "events": [int(d[1]) for d in dumps],
            "dropped": [int(d[2]) for d in dumps], "transient": [float(d[4]) for d in dumps],
            "after": [float(d[6]) for d in dumps], "growth": float(flat.group(1)),
            "flat": flat.group(2), "recording": float(back.group(1)),
            "most_after": float(back.group(2)), "back": back.group(3),
            "ring_mb": int(ring.group(1))}


def cmd_cupti(b):
    return ("bash scripts/cupti_cost.sh "
            f"{b.build}/examples/cuda_steps/cuda_steps " + ("1 20 10" if b.quick else "5 200 100"))


def job_cupti(b):
    has_gpu = subprocess.run(["bash", "-c", "nvidia-smi -L"], capture_output=True).returncode == 0
    if not has_gpu:
        raise Absent("no NVIDIA GPU")
    b.need("examples/cuda_steps/cuda_steps")
    out = b.sh(cmd_cupti(b))
    step = re.search(r"median us per step: ([\d.]+) off, ([\d.]+) on \(\+([\d.]+) us, x([\d.]+)\)",
                     out)
    launch = re.search(r"CUPTI cost per kernel launch: ([-\d.]+) us", out)
    if not step or not launch:
        raise RowError("unexpected output")
    return {"off": float(step.group(1)), "plus": float(step.group(3)),
            "ratio": float(step.group(4)), "launch": float(launch.group(1))}


def job_tracy(b):
    """Tracy's rows come from neuronprof_serving_bench's own run."""
    if not cmake_cache(b.build).get("NEURONPROF_TRACY_DIR"):
        raise Absent("needs a build with -DNEURONPROF_TRACY_DIR")
    return {}


# In this order; the soak last, so that the others fit before it.
JOBS = [("serving", job_serving), ("tracy", job_tracy), ("torch_marker", job_torch_marker),
        ("markers", job_markers), ("linking", job_linking), ("torch_ops", job_torch_ops),
        ("torch_memory", job_torch_memory), ("stop", job_stop),
        ("stop_markers", job_stop_markers), ("export", job_export), ("remote", job_remote),
        ("slow_clients", job_slow_clients), ("ranks", job_ranks), ("summaries", job_summaries),
        ("cupti", job_cupti), ("always_on", job_always_on), ("soak", job_soak)]


# ------------------------------------------------------------------ rows --

def get(b, job):
    result = b.results[job]
    if isinstance(result, Exception):
        raise result
    return result


def serving_ns(b, name):
    ns = get(b, "serving")["ns"]
    if name not in ns:
        raise RowError(f"no '{name}' in neuronprof_serving_bench's output")
    return ns[name]


def x_floor(b, name):
    return serving_ns(b, name) / serving_ns(b, "floor: 2 x NowTicks()")


def tracy(b, text):
    """A peer cell's Tracy part, or why it is absent."""
    try:
        get(b, "tracy")
    except Absent as absent:
        return f"Tracy: {NOT_HERE} ({absent})"
    return text()


def fig_scope(b):
    floor = serving_ns(b, "floor: 2 x NowTicks()")
    scope = serving_ns(b, 'NEURONPROF_SCOPE("literal")')
    return (f"{scope:.1f} ns = {scope / floor:.2f} x floor (2 clock reads: {floor:.1f} ns, "
            f"{get(b, 'serving')['tick_source']})")


def peer_scope(b):
    try:
        torch = f"libtorch `RECORD_FUNCTION` under its legacy profiler: {get(b, 'torch_marker')['LegacyProfiler']:.0f} ns"
    except (Absent, KeyError) as why:
        torch = f"libtorch `RECORD_FUNCTION`: {NOT_HERE} ({why if isinstance(why, Absent) else 'not in --quick'})"
    z = "Tracy ZoneScopedN"
    return torch + "; " + tracy(b, lambda: f"Tracy `ZoneScopedN` {serving_ns(b, z):.1f} ns "
                                           f"({x_floor(b, z):.2f} x)")


def fig_args(b):
    return (f"`Arg(int)` {x_floor(b, 'ScopedTrace + Arg(int)'):.2f} x floor, "
            f"`+ Arg(text)` {x_floor(b, 'ScopedTrace + Arg(int), Arg(text)'):.2f} x; "
            f"the initializer list {x_floor(b, 'ScopedTrace {{int}, {text}} list'):.2f} x; "
            f"`StepTrace` {x_floor(b, 'StepTrace(name, step)'):.2f} x")


def peer_args(b):
    v, t = "Tracy zone + ZoneValue(id)", "Tracy zone + ZoneValue + ZoneText"
    return tracy(b, lambda: f"Tracy `ZoneScopedN` + `ZoneValue` {x_floor(b, v):.2f} x, "
                            f"+ `ZoneText` {x_floor(b, t):.2f} x")


def fig_stack(b):
    name = 'NEURONPROF_SCOPE_STACK("literal")'
    return f"{serving_ns(b, name):.1f} ns = {x_floor(b, name):.2f} x floor"


def peer_stack(b):
    z = "Tracy ZoneScopedNS (call stack, depth 32)"
    return tracy(b, lambda: f"Tracy `ZoneScopedNS(name, 32)` {serving_ns(b, z):.0f} ns = "
                            f"{x_floor(b, z):.1f} x")


COPIED = 'ScopedTrace("copied")'
DISABLED_COPIED = 'disabled ScopedTrace("copied")'


def fig_disabled(b):
    return (f"{serving_ns(b, 'disabled NEURONPROF_SCOPE'):.2f} ns (`NEURONPROF_SCOPE`), "
            f"{serving_ns(b, DISABLED_COPIED):.2f} ns (`ScopedTrace`), "
            f"{serving_ns(b, 'disabled ScopedTrace + 2 Args'):.2f} ns (+ 2 `Arg`)")


def peer_disabled(b):
    try:
        return f"`RECORD_FUNCTION`, no profiler: {get(b, 'torch_marker')['Disabled']:.1f} ns"
    except Absent as absent:
        return f"`RECORD_FUNCTION`: {NOT_HERE} ({absent})"


def fig_compiled_out(b):
    return (f"{serving_ns(b, 'compiled out NEURONPROF_SCOPE'):.2f} ns (`NEURONPROF_SCOPE`), "
            f"{serving_ns(b, 'compiled out ScopedTrace + 2 Args'):.2f} ns (+ 2 `Arg`)")


def fig_serving(b):
    return (f"producer {x_floor(b, 'TraceProducer (new id)'):.2f}, "
            f"consumer {x_floor(b, 'TraceConsumer'):.2f}, "
            f"counter {x_floor(b, 'TraceCounter (int)'):.2f}, "
            f"async begin + end {x_floor(b, 'AsyncTrace begin + End()'):.2f}, "
            f"instant {x_floor(b, 'TraceInstant (no args)'):.2f} x floor")


def peer_serving(b):
    return tracy(b, lambda: f"Tracy zone + `ZoneValue` {x_floor(b, 'Tracy zone + ZoneValue(id)'):.2f}, "
                            f"`TracyPlot` {x_floor(b, 'Tracy TracyPlot (int64)'):.2f}, "
                            f"`TracyMessageL` {x_floor(b, 'Tracy TracyMessageL'):.2f} x floor")


def fig_batch(b):
    return (f"{serving_ns(b, 'TraceBatchConsumer (8 ids)'):.1f} ns "
            f"(one `TraceConsumer`: {serving_ns(b, 'TraceConsumer'):.1f} ns)")


def fig_always_on(b):
    r = get(b, "always_on")
    return (f"throughput {r['requests/s']:.3f} x, p99 {r['p99']:.3f} x, "
            f"CPU per request {r['CPU per request']:.3f} x")


def fig_bytes(b):
    per_event = get(b, "markers")["bytes"]
    return (f"{per_event['ScopeMacroLiteral']:.2f} B (literal name), "
            f"{per_event['CopiedShortName']:.2f} B (8-byte copied name)")


def fig_linking(b):
    r = get(b, "linking")
    parts = []
    for key, label in (("Exe_ScopeMacroLiteral", "executable"),
                       ("Plugin_ScopeMacroLiteral", "plug-in")):
        static, shared = r[key]
        parts.append(f"{shared - static:+.1f} ns ({(shared / static - 1) * 100:+.0f} %, {label})")
    return "shared vs static, per `NEURONPROF_SCOPE`: " + ", ".join(parts)


def fig_ring(b):
    ns = get(b, "markers")["ns"]
    ring, normal = ns["Ring_ScopeMacroLiteral"], ns["ScopeMacroLiteral"]
    return f"{ring:.1f} ns vs {normal:.1f} ns in a normal capture ({ring / normal:.2f} x)"


def fig_trigger(b):
    ns = get(b, "markers")["ns"]
    step = [ns[f"Ring_StepTrace/{arg}"] for arg in range(3)]
    scope = [ns[f"Ring_ScopeMacroLiteral_Trigger/{arg}"] for arg in range(2)]
    return (f"`StepTrace` {step[1] - step[0]:+.1f} ns (another name armed), "
            f"{step[2] - step[0]:+.1f} ns (its own name); `NEURONPROF_SCOPE` "
            f"{scope[1] - scope[0]:+.1f} ns")


def fig_mlp(b):
    us = get(b, "torch_ops")["us"]
    return (f"kOperator {us['Neuronprof']:.1f} us, with shapes {us['NeuronprofShapes']:.1f} us, "
            f"no profiler {us['NoProfiler']:.1f} us ({get(b, 'torch_ops')['ops']:.0f} ops)")


def peer_mlp(b):
    us = get(b, "torch_ops")["us"]
    if b.quick:
        return f"legacy profiler: {NOT_HERE} (not in --quick)"
    base = us["NoProfiler"]
    ratio = (us["TorchLegacyProfiler"] - base) / (us["Neuronprof"] - base)
    ratio_shapes = (us["TorchLegacyProfilerShapes"] - base) / (us["NeuronprofShapes"] - base)
    return (f"legacy profiler {us['TorchLegacyProfiler']:.1f} us, with shapes "
            f"{us['TorchLegacyProfilerShapes']:.1f} us: neuronprof's overhead is {ratio:.1f} x "
            f"(no shapes) / {ratio_shapes:.1f} x (shapes) smaller")


def fig_stacks(b):
    r = get(b, "torch_ops")
    us = r["us"]
    per_op = (us["NeuronprofStacks"] - us["Neuronprof"]) * 1e3 / r["ops"]
    return (f"{per_op:+.0f} ns per op: {us['NeuronprofStacks']:.1f} us per step vs "
            f"{us['Neuronprof']:.1f} us without stacks")


def fig_allocation(b):
    r = get(b, "torch_memory")
    return (f"{r['empty'][0]:.1f} ns (`torch::empty`), {r['allocate'][0]:.1f} ns "
            f"(`allocate(64)`); without `profile_memory`: {r['without']:+.1f} ns")


def peer_allocation(b):
    r = get(b, "torch_memory")
    return (f"legacy `profile_memory`: {r['empty'][1]:.1f} ns ({r['empty'][1] / r['empty'][0]:.1f} x), "
            f"{r['allocate'][1]:.1f} ns ({r['allocate'][1] / r['allocate'][0]:.1f} x)")


def fig_stop(b):
    runs = get(b, "stop")
    files = [f"{k} {int(v) / 1e6:.1f} MB" for k, v in runs[0].items() if k.endswith((".pb", ".gz"))]
    return (f"{span([float(r['stop_ms']) / 1e3 for r in runs], '{:.2f}')} s wall, "
            f"{span([float(r['stop_cpu_ms']) / 1e3 for r in runs], '{:.2f}')} s CPU, "
            f"peak RSS {span([float(r['peak_rss_mb']) for r in runs], '{:.0f}')} MB "
            f"({float(runs[0]['rss_before_mb']):.0f} MB before `Stop()`); "
            f"{int(runs[0]['events']) / 1e6:.2f}M events; " + ", ".join(files))


def fig_stop_markers(b):
    r = get(b, "stop_markers")
    return (f"peak RSS {float(r['peak_rss_mb']):.0f} MB = {float(r['peak_over_records']):.2f} x "
            f"the records ({float(r['records_mb']):.0f} MB); {float(r['stop_ms']) / 1e3:.2f} s wall, "
            f"{float(r['stop_cpu_ms']) / 1e3:.2f} s CPU")


def fig_transient(b):
    r = get(b, "soak")
    t = r["transient"]
    return (f"{min(t):.1f}-{max(t):.1f} MiB above the RSS before it (median {median(t):.1f}, "
            f"{len(t)} dumps of {median(r['events']) / 1e6:.2f}M events, the ring {r['ring_mb']} MiB)")


def fig_export(b):
    return f"{span(get(b, 'export')['Export1M_Total'], '{:.0f}')} ms"


def fig_remote(b):
    r = get(b, "remote")
    x, k = r["xplane"], r["kineto"]
    return (f"`.xplane.pb`: +{span([row['after'] for row in x], '{:.0f}')} ms (server collect "
            f"{median([row['collect'] for row in x]):.0f}, receive "
            f"{median([row['receive'] for row in x]):.0f}, write "
            f"{median([row['write'] for row in x]):.0f}; {median([row['events'] for row in x]) / 1e6:.2f}M events); "
            f"default outputs (+ Kineto trace): +{median([row['after'] for row in k]):.0f} ms")


def fig_run1m(b):
    r = get(b, "export")
    dump, stop = median(r["Run1M_FlightRecorderDump"]), median(r["Run1M_ProfilerStop"])
    return f"{dump:.0f} ms vs `Profiler::Stop()` {stop:.0f} ms ({dump / stop:.2f} x)"


def fig_soak(b):
    r = get(b, "soak")
    return (f"{len(r['after'])} dumps; RSS {r['recording']:.1f} MiB recording, at most "
            f"{r['most_after']:+.1f} MiB after a dump ({r['back']}); samples {r['flat']} "
            f"(growth {r['growth']:.1f} MiB); dumps {min(r['dump_ms']) / 1e3:.1f}-"
            f"{max(r['dump_ms']) / 1e3:.1f} s (median {median(r['dump_ms']) / 1e3:.1f}), "
            f"{median(r['dropped']) / 1e6:.2f}M events dropped per dump (median)")


def fig_slow_clients(b):
    r = get(b, "slow_clients")
    return (f"RSS {r['went']} MB after they went, {r['pulls']} MB after the pulls; "
            f"peak {r['peak']} MB")


def fig_ranks(b):
    r = get(b, "ranks")
    return f"{r['wall']:.2f} s wall, client {r['cpu']:.2f} s CPU, {r['rss']:.0f} MB"


def fig_summary(b):
    wall, _, rss = get(b, "summaries")["ranks"]
    return f"{wall:.2f} s, {rss:.0f} MB"


def fig_worst(b):
    worst = get(b, "summaries")["worst"]
    (n1, t1), (n2, t2) = worst["nested_steps"], worst["runtime_calls"]
    return f"`summary` of {n1} nested steps {t1:.2f} s; {n2} runtime calls {t2:.2f} s"


def fig_cupti(b):
    r = get(b, "cupti")
    return (f"per step ({r['off']:.0f} us): +{r['plus']:.1f} us = {r['ratio']:.3f} x; "
            f"per kernel launch {r['launch']:+.2f} us")


def cmd_summary(b):
    steps = 100 if b.quick else 1000
    return (f"`mkdir -p scale && {b.build}/tests/write_rank_xplanes scale --world_size 8 --steps {steps} "
            f"--extra_ops 95 --straggler 5` then `{b.build}/tools/neuronprof summary scale`")


def cmd_worst(b):
    n = 4000 if b.quick else 40000
    return (f"`{b.build}/tests/write_worst_capture nested_steps {n} worst.xplane.pb` then "
            f"`{b.build}/tools/neuronprof summary worst.xplane.pb` (and `runtime_calls`)")


def cmd_ranks_row(b):
    return 'the loop of section "Capturing 8 ranks"'


def cmd_export_row(b):
    return cmd_export(b)


ROWS = [
    ("enabled marker, `NEURONPROF_SCOPE(\"literal\")`", fig_scope, "≤ 1.3 x floor", peer_scope,
     cmd_serving),
    ("enabled marker, copied name `ScopedTrace(\"name\")`",
     lambda b: f"{serving_ns(b, COPIED):.1f} ns = {x_floor(b, COPIED):.2f} x floor",
     "≤ 1.3 x floor",
     lambda b: "", cmd_serving),
    ("marker with arguments, `ScopedTrace t(\"zone\", Arg(\"batch\", i))` / `+ Arg(\"tag\", \"x\")`",
     fig_args, "≤ 1.3 x / ≤ 2 x floor", peer_args, cmd_serving),
    ("marker with its call stack, `NEURONPROF_SCOPE_STACK(\"literal\")`", fig_stack, "",
     peer_stack, cmd_serving),
    ("disabled marker (no capture)", fig_disabled, "≤ 1 ns", peer_disabled, cmd_serving),
    ("compiled out (`NEURONPROF_DISABLE`)", fig_compiled_out, "no cost", lambda b: "",
     cmd_serving),
    ("serving markers", fig_serving, "producer, consumer ≤ 1.5; counter ≤ 1; async ≤ 2 x floor",
     peer_serving,
     cmd_serving),
    ("`TraceBatchConsumer`, 8 ids (a marker and 8 links)", fig_batch, "", lambda b: "",
     cmd_serving),
    ("always on: inference server at saturation, `--recorder flight` / `none`", fig_always_on,
     "throughput ≥ 0.99 x, p99 ≤ 1.02 x", lambda b: "", cmd_always_on),
    ("memory per event", fig_bytes, "≤ 32 B (+ 1 link per 64 KiB block)", lambda b: "",
     cmd_markers),
    ("shared vs static libraries", fig_linking, "", lambda b: "", cmd_linking),
    ("flight recorder (ring) marker", fig_ring, "≤ 1.1 x a normal capture", lambda b: "",
     cmd_markers),
    ("slow-step trigger armed", fig_trigger, "< 0.1 % of a 100 us step", lambda b: "",
     cmd_markers),
    ("libtorch operators, per MLP step", fig_mlp, "5 x cheaper than the legacy profiler",
     peer_mlp, cmd_torch_ops),
    ("libtorch operators with call stacks (`record_stacks`)", fig_stacks, "", lambda b: "",
     cmd_torch_ops),
    ("per recorded libtorch allocation", fig_allocation, "5 x cheaper than legacy",
     peer_allocation, cmd_torch_memory),
    ("`Profiler::Stop()` after ~1M libtorch operator and memory events, default outputs "
     "(kOperator, memory on)", fig_stop, "< 1 s wall idle, < 600 MB", lambda b: "",
     lambda b: f"`{cmd_stop(b)}` ({'1 run' if b.quick else '3 runs, one capture each'})"),
    ("`Profiler::Stop()`, 10M host markers (kTrace)", fig_stop_markers, "≤ 1.5 x the records",
     lambda b: "", cmd_stop_markers),
    ("export of 1M markers (build XSpace + files)", fig_export, "≤ 200 ms", lambda b: "",
     cmd_export_row),
    ("flight-recorder dump of 1M events", fig_run1m, "≤ a Profiler's stop", lambda b: "",
     cmd_export_row),
    ("remote capture: time after a 2 s window of 1M events", fig_remote, "window + 300 ms",
     lambda b: "", lambda b: f"{cmd_remote(b, False)}; {cmd_remote(b, True)}"),
    ("flight-recorder dump of a whole ring: transient memory", fig_transient, "≤ the ring",
     lambda b: "", cmd_soak),
    ("flight-recorder soak, 8 threads, whole-ring dumps every 5 s (xplane.pb)", fig_soak,
     "flat within 4 MiB + 2 % of the recording RSS", lambda b: "", cmd_soak),
    ("capture server, 10 clients that never read a 55 MB response", fig_slow_clients, "bounded",
     lambda b: "", cmd_slow_clients),
    ("capture of 8 ranks (`capture_server_demo`), 2 s window", fig_ranks, "", lambda b: "",
     cmd_ranks_row),
    ("multi-rank summary, 8 ranks x 102k events", fig_summary, "linear in events",
     lambda b: "", cmd_summary),
    ("readers on crafted worst shapes", fig_worst, "O(n log n)", lambda b: "", cmd_worst),
    ("CUPTI (GPU) collector, `examples/cuda_steps`", fig_cupti, "", lambda b: "", cmd_cupti),
]


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def row_cells(b, row):
    what, figure, goal, peer, command = row
    try:
        figure_text, peer_text, ok = figure(b), peer(b), True
    except Absent as absent:
        figure_text, peer_text, ok = f"{NOT_HERE} ({absent})", "", True
    except (RowError, KeyError, ValueError, ZeroDivisionError) as error:
        figure_text, peer_text, ok = f"FAILED: {type(error).__name__} {error}", "", False
    if ok and not figure_text.startswith(NOT_HERE) and re.search(r"\bnan\b|\binf\b",
                                                                  figure_text + peer_text):
        ok = False
    command_text = command(b)
    if not command_text.startswith(("`", "section", "the loop")):
        command_text = f"`{command_text}`"
    return [what, figure_text, goal, peer_text, command_text], ok


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            found = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            model = found.group(1).strip() if found else model
    except OSError:
        pass
    memory = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(re.search(r"MemTotal:\s*(\d+)", f.read()).group(1))
            memory = f", {kb / 1048576:.0f} GiB"
    except (OSError, AttributeError):
        pass
    return f"`{model}`, {os.cpu_count()} cores{memory}, kernel {os.uname().release}"


def commit():
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "?"
    return head + (" (with uncommitted changes)" if git("status", "--porcelain",
                                                         "--untracked-files=no") else "")


def build_type(build):
    return cmake_cache(build).get("CMAKE_BUILD_TYPE") or "?"


def run_job(b, name, job):
    t0 = time.monotonic()
    try:
        b.results[name] = job(b)
    except (RowError, Absent) as error:
        b.results[name] = error
    except subprocess.TimeoutExpired as error:
        b.results[name] = RowError(f"timed out after {error.timeout} s")
    b.seconds[name] = time.monotonic() - t0
    status = b.results[name]
    log(f"{name}: {b.seconds[name]:.1f} s"
        + (f" ({type(status).__name__}: {status})" if isinstance(status, Exception) else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--soak_seconds", type=int, default=None)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--only", metavar="REGEX",
                        help="run only the jobs whose name matches (serving, markers, soak, ...)")
    args = parser.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    soak = args.soak_seconds if args.soak_seconds is not None else (4 if args.quick else 600)
    b = Bench(args.build.rstrip("/"), args.quick, soak)
    load_before = os.getloadavg()
    started = time.monotonic()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    jobs = [job for job in JOBS if not args.only or re.search(args.only, job[0])]
    for name, _ in JOBS:
        b.results[name] = Absent("not run: --only")
    if args.quick:  # Side by side: --quick checks the steps, not the figures.
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda job: run_job(b, *job), jobs))
    else:  # One after the other, so that no benchmark shares the cores with another.
        for job in jobs:
            run_job(b, *job)
    load_after = os.getloadavg()
    total = time.monotonic() - started
    shutil.rmtree(b.tmp, ignore_errors=True)
    print(f"Measured {date} on {machine()}; commit {commit()}, {build_type(b.build)} build; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"{total / 60:.1f} min" + (" (--quick: NOT measurements)" if args.quick else "") + ".")
    print(f"Regenerate: `bash bench/perf_table.sh {b.build}`.")
    print()
    print("| what | figure | goal | peer | command |")
    print("|---|---|---|---|---|")
    failed = 0
    for row in ROWS:
        cells, ok = row_cells(b, row)
        failed += not ok or not cells[1].strip()
        print("| " + " | ".join(cell(c) for c in cells) + " |")
    if failed:
        log(f"{failed} rows failed")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
