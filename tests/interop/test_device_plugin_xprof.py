"""A device plug-in's planes, read back by xprof itself.

Runs build/examples/custom_device_demo (a fake NPU runtime reporting through
neuronprof/device.h) and checks with the pinned xprof's `trace_viewer@` (the
variant its UI loads) that the NPU planes appear beside /host:CPU with the
kernels and copies on their queue lines, that every device event is linked
by a flow to the launch call that queued it, and that the overview page
still counts the steps. Our own Chrome trace must carry the same links.

    NEURONPROF_BUILD_DIR=/path/to/build .venv/bin/python -m pytest \
      tests/interop/test_device_plugin_xprof.py -q
"""

from __future__ import annotations

import collections
import glob
import gzip
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
DEMO = os.path.join(BUILD_DIR, "examples", "custom_device_demo")

STEPS = 8
DEVICES = 2
# Per step and device: one copy on queue 1, matmul and relu on queue 0.
QUEUE_EVENTS = {0: ("matmul", "relu"), 1: ("Memcpy HtoD",)}


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
  if not (os.path.isfile(DEMO) and os.access(DEMO, os.X_OK)):
    pytest.fail(f"custom_device_demo not found at {DEMO}; build it (make -C "
                f"{BUILD_DIR} custom_device_demo) or set NEURONPROF_BUILD_DIR")
  logdir = str(tmp_path_factory.mktemp("device_logs"))
  proc = subprocess.run(
      [DEMO, "--logdir", logdir, "--steps", str(STEPS), "--devices",
       str(DEVICES), "--work_us", "100"],
      capture_output=True, text=True, timeout=120, check=False)
  assert proc.returncode == 0, (
      f"custom_device_demo exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
  assert "warning" not in proc.stdout, proc.stdout
  xplanes = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
  assert len(xplanes) == 1, xplanes
  xplane = xplanes[0]
  host = os.path.basename(xplane)[:-len(".xplane.pb")]
  return {"xplane": xplane, "host": host,
          "trace": xprof_tools.streaming_trace_json(xplane)}


def _names(trace):
  pids, tids = {}, {}
  for ev in trace["traceEvents"]:
    if ev.get("ph") != "M":
      continue
    if ev.get("name") == "process_name":
      pids[ev["pid"]] = ev["args"]["name"]
    elif ev.get("name") == "thread_name":
      tids[(ev["pid"], ev["tid"])] = ev["args"]["name"]
  return pids, tids


def _complete(trace):
  return [ev for ev in trace["traceEvents"] if ev.get("ph") == "X"]


def test_device_planes_beside_the_host_plane(capture):
  pids, _ = _names(capture["trace"])
  names = set(pids.values())
  host = capture["host"]
  assert f"{host} /host:CPU" in names
  assert f"{host} /host:CPU-NPU-runtime" in names  # The launch calls.
  for device in range(DEVICES):
    assert f"{host} /device:CUSTOM:NPU:{device}" in names


def test_kernels_and_copies_on_their_queue_lines(capture):
  pids, tids = _names(capture["trace"])
  by_name = {name: pid for pid, name in pids.items()}
  events = _complete(capture["trace"])
  for device in range(DEVICES):
    pid = by_name[f"{capture['host']} /device:CUSTOM:NPU:{device}"]
    assert tids[(pid, 0)] == "Stream #0(Kernel)"
    assert tids[(pid, 1)] == "Stream #1(Memcpy)"
    for queue, expected in QUEUE_EVENTS.items():
      seen = collections.Counter(
          ev["name"] for ev in events if ev["pid"] == pid and ev["tid"] == queue)
      assert seen == {name: STEPS for name in expected}, (device, queue, seen)


def test_every_device_event_is_linked_to_its_launch(capture):
  pids, tids = _names(capture["trace"])
  host = capture["host"]
  by_name = {name: pid for pid, name in pids.items()}
  runtime_pid = by_name[f"{host} /host:CPU-NPU-runtime"]
  host_pid = by_name[f"{host} /host:CPU"]
  events = _complete(capture["trace"])
  launches = {ev["bind_id"]: ev for ev in events
              if ev["pid"] == runtime_pid and ev.get("flow_out")}
  device_events = [ev for ev in events if ev["pid"] not in (host_pid, runtime_pid)
                   and ev["name"] in ("matmul", "relu", "Memcpy HtoD")]
  assert len(device_events) == STEPS * DEVICES * 3
  assert len(launches) == len(device_events)
  for ev in device_events:
    assert ev.get("flow_in") is True, ev
    launch = launches.get(ev.get("bind_id"))
    assert launch is not None, f"no launch flows into {ev}"
    assert launch["name"] == "npuLaunch"
    # The device ran the work after it was queued: both times come from
    # the device clock through one monotonic mapping, so order is exact.
    assert ev["ts"] >= launch["ts"], (launch, ev)
  # The launches sit on a line named after the training thread, whose
  # markers are on /host:CPU.
  launch_tids = {ev["tid"] for ev in launches.values()}
  assert len(launch_tids) == 1
  tid = launch_tids.pop()
  assert tids[(runtime_pid, tid)] == tids[(host_pid, tid)]


def test_overview_page_still_counts_the_steps(capture):
  # More than 5 steps: xprof drops the first and the last (NOTES.md).
  assert xprof_tools.overview_steps(capture["xplane"]) == STEPS - 2


def test_our_chrome_trace_draws_the_same_links(capture):
  path = capture["xplane"][:-len(".xplane.pb")] + ".trace.json.gz"
  with gzip.open(path, "rt") as f:
    trace = json.load(f)
  events = trace["traceEvents"]
  starts = {ev["id"]: ev for ev in events if ev.get("ph") == "s"}
  ends = [ev for ev in events if ev.get("ph") == "f"]
  assert len(starts) == STEPS * DEVICES * 3
  assert len(ends) == len(starts)
  pids = {ev["pid"]: ev["args"]["name"] for ev in events
          if ev.get("ph") == "M" and ev.get("name") == "process_name"}
  for end in ends:
    assert end["bp"] == "e"
    start = starts[end["id"]]
    assert pids[start["pid"]] == "/host:CPU-NPU-runtime"
    assert pids[end["pid"]].startswith("/device:CUSTOM:NPU:")
    assert end["ts"] >= start["ts"]
