"""End-to-end interop test: mlp_demo's logdir, read back by xprof itself.

Runs build/examples/mlp_demo into a temporary logdir and checks, with the
pinned xprof wheel's own converters (see xprof_tools.py and NOTES.md), that
the trace viewer and overview page show what the demo recorded: thread
lines, marker nesting, durations (cross-checked against our own
<host>.trace.json.gz), load_batch args and the step count.

    NEURONPROF_BUILD_DIR=/path/to/build \
      /work/venv-interop/bin/python -m pytest tests/interop -q

NEURONPROF_BUILD_DIR defaults to <repo>/build; the demo must be built there
(`make -C build mlp_demo`).
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import re
import subprocess
import sys
import warnings

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
DEMO = os.path.join(BUILD_DIR, "examples", "mlp_demo")
DEMO_SOURCE = os.path.join(REPO, "examples", "mlp_demo", "mlp_demo.cc")

STEPS = 12
BATCH = 16
HIDDEN = 32
RUN_RE = re.compile(r"^\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d(_\d+)*$")
STEP_MARKERS = ("model_build", "forward", "loss_backward", "optimizer_step")
# Float rounding of ps -> us conversions; far below any real duration.
EPS_US = 1e-3
# Our trace.json.gz vs xprof's trace viewer: same events, same durations.
DUR_TOLERANCE_US = 1.0


# ---------------------------------------------------------------------------
# Running the demo.
# ---------------------------------------------------------------------------


def _demo_binary() -> str:
  if not (os.path.isfile(DEMO) and os.access(DEMO, os.X_OK)):
    pytest.fail(f"mlp_demo not found at {DEMO}; build it (make -C "
                f"{BUILD_DIR} mlp_demo) or set NEURONPROF_BUILD_DIR")
  if (os.path.exists(DEMO_SOURCE)
      and os.path.getmtime(DEMO_SOURCE) > os.path.getmtime(DEMO)):
    warnings.warn(f"{DEMO} is older than {DEMO_SOURCE}: rebuild it "
                  f"(make -C {BUILD_DIR} mlp_demo) or results may be stale")
  return DEMO


def run_demo(logdir: str, steps: int) -> subprocess.CompletedProcess:
  proc = subprocess.run(
      [_demo_binary(), "--logdir", logdir, "--steps", str(steps),
       "--hidden", str(HIDDEN), "--batch", str(BATCH)],
      capture_output=True, text=True, timeout=300, check=False)
  assert proc.returncode == 0, (
      f"mlp_demo exited {proc.returncode}\nstdout:\n{proc.stdout}\n"
      f"stderr:\n{proc.stderr}")
  return proc


def find_run(logdir: str):
  """(run_dir, host) of the single run under <logdir>/plugins/profile."""
  profile = os.path.join(logdir, "plugins", "profile")
  assert os.path.isdir(profile), f"no {profile}"
  runs = os.listdir(profile)
  assert len(runs) == 1, f"expected one run folder, got {runs}"
  run_dir = os.path.join(profile, runs[0])
  xplanes = [f for f in os.listdir(run_dir) if f.endswith(".xplane.pb")]
  assert len(xplanes) == 1, f"expected one .xplane.pb in {run_dir}: {xplanes}"
  return run_dir, xplanes[0][:-len(".xplane.pb")]


def load_our_trace(path: str):
  with gzip.open(path, "rt", encoding="utf-8") as f:
    return json.load(f)


class Capture:
  """One demo run and everything read back from it."""

  def __init__(self, logdir: str, steps: int):
    self.logdir = logdir
    self.steps = steps
    self.proc = run_demo(logdir, steps)
    self.run_dir, self.host = find_run(logdir)
    self.xplane = os.path.join(self.run_dir, self.host + ".xplane.pb")
    self.trace_gz = os.path.join(self.run_dir, self.host + ".trace.json.gz")
    self.events = xprof_tools.trace_events(self.xplane)
    self.meta = xprof_tools.trace_metadata(self.xplane)

  def line_name(self, ev) -> str:
    return self.meta["tids"].get((ev["pid"], ev["tid"]), "")

  def main_line(self):
    tids = {(e["pid"], e["tid"]) for e in self.events
            if re.fullmatch(r"train \d+", e["name"])}
    assert len(tids) == 1, f"train steps on several lines: {tids}"
    return tids.pop()

  def on_line(self, key):
    return [e for e in self.events if (e["pid"], e["tid"]) == key]

  def loader_line(self):
    keys = [k for k, name in self.meta["tids"].items() if name == "data_loader"]
    assert len(keys) == 1, f"expected one data_loader line: {self.meta['tids']}"
    return keys[0]


@pytest.fixture(scope="module")
def cap(tmp_path_factory) -> Capture:
  return Capture(str(tmp_path_factory.mktemp("logdir")), STEPS)


def end(ev) -> float:
  return ev["ts_us"] + ev["dur_us"]


def inside(child, parent) -> bool:
  return (parent["ts_us"] - EPS_US <= child["ts_us"]
          and end(child) <= end(parent) + EPS_US)


# ---------------------------------------------------------------------------
# Logdir layout.
# ---------------------------------------------------------------------------


def test_logdir_layout(cap):
  run = os.path.basename(cap.run_dir)
  assert RUN_RE.match(run), f"run folder name {run!r}"
  assert cap.host and "/" not in cap.host
  # Exactly the three output files, nothing else anywhere in the logdir (no
  # temp files, no .neuronprof_working, no xprof caches): the PyTorch
  # plugin's trace sits in <logdir>/<run>/, its run folder.
  found = []
  for root, dirs, files in os.walk(cap.logdir):
    for d in dirs:
      found.append(os.path.relpath(os.path.join(root, d), cap.logdir) + "/")
    for f in files:
      found.append(os.path.relpath(os.path.join(root, f), cap.logdir))
  run_rel = os.path.join("plugins", "profile", run)
  assert sorted(found) == sorted([
      "plugins/", "plugins/profile/", run_rel + "/",
      os.path.join(run_rel, cap.host + ".xplane.pb"),
      os.path.join(run_rel, cap.host + ".trace.json.gz"),
      run + "/", os.path.join(run, cap.host + ".pt.trace.json.gz"),
  ]), found
  assert not os.path.exists(os.path.join(cap.logdir, ".neuronprof_working"))
  for path in (cap.xplane, cap.trace_gz):
    assert os.path.getsize(path) > 0, path
    assert path in cap.proc.stdout, f"demo did not report writing {path}"


def test_xplane_raw_structure(cap):
  """The file itself, parsed with the schema compiled into xprof."""
  classes = xprof_tools.xplane_classes()
  with open(cap.xplane, "rb") as f:
    space = classes["XSpace"].FromString(f.read())
  assert list(space.hostnames) == [cap.host]
  planes = {p.name: p for p in space.planes}
  assert "/host:CPU" in planes, list(planes)
  env = planes.get("Task Environment")
  assert env is not None, "no Task Environment plane (profile start/stop)"
  stats = {env.stat_metadata[s.metadata_id].name: s.uint64_value
           for s in env.stats}
  assert 0 < stats["profile_start_time"] < stats["profile_stop_time"], stats
  # Our Chrome trace keeps the same epoch start.
  ours = load_our_trace(cap.trace_gz)
  assert ours["baseTimeNanoseconds"] == stats["profile_start_time"]
  host = planes["/host:CPU"]
  for line in host.lines:
    offsets = [(e.offset_ps, -e.duration_ps) for e in line.events]
    assert offsets == sorted(offsets), f"events of line {line.name} unsorted"
    assert all(e.duration_ps > 0 for e in line.events)


# ---------------------------------------------------------------------------
# xprof trace viewer.
# ---------------------------------------------------------------------------


def test_trace_viewer_lines(cap):
  assert set(cap.meta["pids"].values()) == {"/host:CPU"}, cap.meta["pids"]
  main = cap.main_line()
  loader = cap.loader_line()
  assert main != loader
  main_name = cap.meta["tids"].get(main)
  assert main_name and main_name != "data_loader", cap.meta["tids"]
  # Every event is on one of these two lines, with the right names.
  counts = collections.Counter(
      (cap.line_name(e), re.sub(r" \d+$", "", e["name"])) for e in cap.events)
  expected = collections.Counter({(main_name, "train"): STEPS,
                                  ("data_loader", "load_batch"): STEPS})
  for marker in STEP_MARKERS:
    expected[(main_name, marker)] = STEPS
  assert counts == expected


def test_trace_viewer_steps_named_and_ordered(cap):
  steps = [e for e in cap.on_line(cap.main_line())
           if e["name"].startswith("train")]
  assert [s["name"] for s in steps] == [f"train {i}" for i in range(STEPS)]
  assert [s["args"].get("step_num") for s in steps] == [
      str(i) for i in range(STEPS)]
  for a, b in zip(steps, steps[1:]):
    assert end(a) <= b["ts_us"] + EPS_US, f"{a['name']} overlaps {b['name']}"


def test_trace_viewer_nesting(cap):
  events = cap.on_line(cap.main_line())
  steps = [e for e in events if e["name"].startswith("train")]
  others = [e for e in events if not e["name"].startswith("train")]
  # Every marker lies in exactly one step.
  for ev in others:
    holders = [s["name"] for s in steps if inside(ev, s)]
    assert len(holders) == 1, f"{ev['name']} at {ev['ts_us']} in {holders}"
  for step in steps:
    kids = [e for e in others if inside(e, step)]
    by_name = collections.defaultdict(list)
    for e in kids:
      by_name[e["name"]].append(e)
    assert sorted(by_name) == sorted(STEP_MARKERS), (step["name"], kids)
    assert all(len(v) == 1 for v in by_name.values()), (step["name"], kids)
    build, fwd = by_name["model_build"][0], by_name["forward"][0]
    back, opt = by_name["loss_backward"][0], by_name["optimizer_step"][0]
    assert inside(fwd, build), f"{step['name']}: forward not in model_build"
    assert fwd["dur_us"] <= build["dur_us"] + EPS_US
    assert not inside(back, build) and not inside(opt, build)
    assert end(build) <= back["ts_us"] + EPS_US, step["name"]
    assert end(back) <= opt["ts_us"] + EPS_US, step["name"]
    # xprof grouped them into this step.
    gid = step["args"].get("group_id")
    assert gid is not None, step
    assert all(e["args"].get("group_id") == gid for e in kids), (step, kids)


def test_trace_viewer_durations_and_timestamps(cap):
  for ev in cap.events:
    assert ev["dur_us"] > 0, ev
    # Line timestamps must be relative to the profile start: epoch ones
    # overflow in xprof and come out as garbage (NOTES.md, Timestamps).
    assert 0 <= ev["ts_us"] < 1e9, ev


def test_load_batch_args(cap):
  loads = cap.on_line(cap.loader_line())
  assert [e["name"] for e in loads] == ["load_batch"] * STEPS
  assert [e["args"].get("batch_index") for e in loads] == [
      str(i) for i in range(STEPS)]
  assert all(e["args"].get("size") == str(BATCH) for e in loads), loads


# ---------------------------------------------------------------------------
# Our own trace.json.gz, against xprof's view of the xplane.
# ---------------------------------------------------------------------------


def _our_events(trace):
  """(thread name, name as xprof shows it) -> events sorted by ts."""
  threads = {}
  for ev in trace["traceEvents"]:
    if ev.get("ph") == "M" and ev.get("name") == "thread_name":
      threads[(ev["pid"], ev["tid"])] = ev["args"]["name"]
  out = collections.defaultdict(list)
  for ev in trace["traceEvents"]:
    if ev.get("ph") != "X":
      continue
    name = ev["name"]
    if "step_num" in ev.get("args", {}):
      name = f"{name} {ev['args']['step_num']}"  # xprof's step-root naming.
    out[(threads.get((ev["pid"], ev["tid"]), ""), name)].append(ev)
  for evs in out.values():
    evs.sort(key=lambda e: e["ts"])
  return out


def _xprof_events(cap):
  out = collections.defaultdict(list)
  for ev in cap.events:
    out[(cap.line_name(ev), ev["name"])].append(ev)
  for evs in out.values():
    evs.sort(key=lambda e: e["ts_us"])
  return out


def test_our_trace_json_valid_and_same_events(cap):
  trace = load_our_trace(cap.trace_gz)
  assert isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list)
  procs = [e["args"]["name"] for e in trace["traceEvents"]
           if e.get("ph") == "M" and e.get("name") == "process_name"]
  assert procs == ["/host:CPU"], procs
  for ev in trace["traceEvents"]:
    assert ev.get("ph") in ("M", "X"), ev
    if ev["ph"] == "X":
      for key in ("name", "pid", "tid", "ts", "dur"):
        assert key in ev, ev
  ours = _our_events(trace)
  theirs = _xprof_events(cap)
  assert ({k: len(v) for k, v in ours.items()}
          == {k: len(v) for k, v in theirs.items()})

  # Same against the raw xplane (not through xprof's trace viewer).
  classes = xprof_tools.xplane_classes()
  with open(cap.xplane, "rb") as f:
    space = classes["XSpace"].FromString(f.read())
  host = next(p for p in space.planes if p.name == "/host:CPU")
  raw = collections.Counter()
  for line in host.lines:
    for e in line.events:
      raw[(line.display_name or line.name,
           host.event_metadata[e.metadata_id].name)] += 1
  flat = collections.Counter()
  for (thread, name), evs in ours.items():
    flat[(thread, re.sub(r" \d+$", "", name))] += len(evs)
  assert flat == raw


def test_durations_match_our_trace(cap):
  ours = _our_events(load_our_trace(cap.trace_gz))
  theirs = _xprof_events(cap)
  assert ours.keys() == theirs.keys()
  # Both are microseconds from the profile start (our file keeps the epoch
  # start in baseTimeNanoseconds), so the same event has the same ts.
  offsets = []
  for key, evs in theirs.items():
    for mine, xp in zip(ours[key], evs):
      assert mine["dur"] > 0 and xp["dur_us"] > 0, (key, mine, xp)
      assert abs(mine["dur"] - xp["dur_us"]) <= DUR_TOLERANCE_US, (key, mine, xp)
      offsets.append(mine["ts"] - xp["ts_us"])
  assert offsets
  assert max(abs(o) for o in offsets) <= DUR_TOLERANCE_US, (min(offsets),
                                                            max(offsets))


# ---------------------------------------------------------------------------
# xprof overview page.
# ---------------------------------------------------------------------------


def test_overview_counts_steps(cap):
  rows = xprof_tools.overview_step_times(cap.xplane)
  # More than 5 steps: xprof drops the first and the last (NOTES.md).
  assert [r["step"] for r in rows] == [f"train {i}" for i in range(1, STEPS - 1)]
  steps = {e["name"]: e for e in cap.events if e["name"].startswith("train")}
  for r in rows:
    assert r["step_time_ms"] > 0, r
    assert abs(r["step_time_ms"] * 1e3 - steps[r["step"]]["dur_us"]) <= 1.0, r


def test_overview_counts_few_steps(tmp_path):
  small = Capture(str(tmp_path / "logdir"), 4)
  assert xprof_tools.overview_steps(small.xplane) == 4
