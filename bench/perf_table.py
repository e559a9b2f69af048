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
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_table_jobs import (  # noqa: E402  (the jobs, their commands, Bench)
    Absent, Bench, JOBS, NOT_HERE, RowError, cmake_cache, cmd_always_on, cmd_cupti, cmd_export,
    cmd_linking, cmd_markers, cmd_remote, cmd_serving, cmd_slow_clients, cmd_soak, cmd_stop,
    cmd_stop_markers, cmd_torch_marker, cmd_torch_memory, cmd_torch_ops, log, median, span)


# ------------------------------------------------------------------ rows --
# Each row: what, its figure and peer (from the jobs' results), goal, command.

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
    figure = lambda what: "{:.3f} x ({:.3f}-{:.3f})".format(*r["ratios"][what])
    return (f"throughput {figure('throughput')}, p99 {figure('p99')}, "
            f"CPU per request {figure('CPU per request')}: medians of {r['windows']} "
            f"recording windows of {r['window_ms']} ms against those around them, 95 % CI")


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
    r = get(b, "torch_ops")
    us = r["us"]
    # libtorch's own cost of calling no-op callbacks registered as ours.
    ours = (us["Neuronprof"] - us["EmptyCallback"]) * 1e3 / r["ops"]
    return (f"kOperator {us['Neuronprof']:.1f} us, with shapes {us['NeuronprofShapes']:.1f} us, "
            f"no profiler {us['NoProfiler']:.1f} us ({r['ops']:.0f} ops); libtorch's no-op "
            f"callbacks {us['EmptyCallback']:.1f} us, so neuronprof's own part {ours:.0f} ns per op")


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
            f"default outputs (+ Kineto trace): +{span([row['after'] for row in k], '{:.0f}')} ms")


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
     lambda b: f"`{cmd_serving(b)}`; libtorch: `{cmd_torch_marker(b)}`"),
    ("enabled marker, copied name `ScopedTrace(\"name\")`",
     lambda b: f"{serving_ns(b, COPIED):.1f} ns = {x_floor(b, COPIED):.2f} x floor",
     "≤ 1.3 x floor",
     lambda b: "", cmd_serving),
    ("marker with arguments, `ScopedTrace t(\"zone\", Arg(\"batch\", i))` / `+ Arg(\"tag\", \"x\")`",
     fig_args, "≤ 1.3 x / ≤ 2 x floor", peer_args, cmd_serving),
    ("marker with its call stack, `NEURONPROF_SCOPE_STACK(\"literal\")`", fig_stack, "",
     peer_stack, cmd_serving),
    ("disabled marker (no capture)", fig_disabled, "≤ 1 ns", peer_disabled,
     lambda b: f"`{cmd_serving(b)}`; libtorch: `{cmd_torch_marker(b)}`"),
    ("compiled out (`NEURONPROF_DISABLE`)", fig_compiled_out, "no cost", lambda b: "",
     cmd_serving),
    ("serving markers", fig_serving, "producer, consumer ≤ 1.5; counter ≤ 1; async ≤ 2 x floor",
     peer_serving,
     cmd_serving),
    ("`TraceBatchConsumer`, 8 ids (a marker and 8 links)", fig_batch, "", lambda b: "",
     cmd_serving),
    ("always on: inference server at saturation, flight recorder on / off", fig_always_on,
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
    else:  # One after the other, so that no benchmark shares the cores with another,
        for job in jobs:  # nor with the kernel writing back the files of the one before.
            os.sync()
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
