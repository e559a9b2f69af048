"""The jobs of bench/perf_table.py: each runs one row's benchmark command
(from the repository root, against a build dir) and returns what its rows
read from the output. Python's standard library only.
"""
import json
import os
import re
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


MLP_FILTER = ("MlpStep_(NoProfiler|EmptyCallback|Neuronprof|NeuronprofShapes|NeuronprofStacks"
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
    if len(us) != (5 if b.quick else 7) or not ops:
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
    # kineto: the capture's default outputs; else the xplane.pb alone.
    outputs = "" if kineto else " --kineto=0 --chrome_trace=0"
    if b.quick:
        return (f"{b.build}/bench/neuronprof_remote_capture_bench --rounds=1 --duration_ms=300 "
                f"--rate=50000" + outputs)
    return f"{b.build}/bench/neuronprof_remote_capture_bench --rounds=7" + outputs


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
    requests, window_ms = (30000, 100) if b.quick else (1500000, 500)
    return (f"bash bench/serving_always_on.sh {b.build}/examples/inference_server "
            f"{requests} {window_ms} 64")


def job_always_on(b):
    b.need("examples/inference_server")
    out = b.sh(cmd_always_on(b), timeout=1800)
    ratios = {what: tuple(float(v) for v in fig) for what, *fig in re.findall(
        r"^(throughput|p99|CPU per request) flight/none: median ([\d.]+), 95% CI ([\d.]+)-([\d.]+)",
        out, re.M)}
    windows = re.search(r"in turn: (\d+) recording windows of (\d+) ms", out)
    if len(ratios) != 3 or not windows:
        raise RowError("unexpected output")
    return {"ratios": ratios, "windows": int(windows[1]), "window_ms": int(windows[2])}


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
