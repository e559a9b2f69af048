"""The Kineto trace's [memory] events, loaded by the real PyTorch Profiler
TensorBoard plugin (torch-tb-profiler 0.4.3): examples/memory_leak records
libtorch's CPU allocations, and the plugin's own loader must compute its
Memory view (curve with peak, memory-by-operator table) from our file.

  NEURONPROF_BUILD_DIR=build .venv/bin/python -m pytest tests/interop/test_memory_plugin.py
"""

from __future__ import annotations

import gzip
import json
import os
import types

import pytest


@pytest.fixture(scope="module")
def capture(tmp_path_factory, memory_leak_trace):
  logdir = str(tmp_path_factory.mktemp("memory_leak"))
  return logdir, memory_leak_trace(logdir, 4)


@pytest.fixture(scope="module")
def memory_events(capture):
  with gzip.open(capture[1], "rt") as f:
    events = json.load(f)["traceEvents"]
  return [e for e in events if e.get("name") == "[memory]"]


@pytest.fixture(scope="module")
def profile(capture):
  """The run as the plugin's RunLoader builds it (it logs parse errors and
  then keeps no profile)."""
  from torch_tb_profiler import io as tb_io
  from torch_tb_profiler import plugin
  from torch_tb_profiler.profiler.loader import RunLoader
  logdir, trace = capture
  run_dir = os.path.dirname(trace)
  fake_plugin = types.SimpleNamespace(logdir=logdir)
  run = RunLoader(plugin.TorchProfilerPlugin._get_run_name(fake_plugin, run_dir),
                  run_dir, tb_io.Cache()).load()
  worker = os.path.basename(trace)[:-len(".pt.trace.json.gz")]
  loaded = run.get_profile(worker, "default")
  assert loaded is not None, "torch-tb-profiler failed to load the trace (see its log)"
  return loaded


def test_memory_events_have_torch_profiler_keys(memory_events):
  assert memory_events, "no [memory] events in the Kineto trace"
  for event in memory_events:
    assert event["ph"] == "i" and event["s"] == "t"
    args = event["args"]
    for key in ("Device Type", "Device Id", "Addr", "Bytes", "Total Allocated",
                "Total Reserved"):
      assert key in args, (key, event)
    assert args["Device Type"] == 0  # The example runs on libtorch's CPU allocator.
  assert any(e["args"]["Bytes"] < 0 for e in memory_events), "no frees"
  assert any(e["args"]["Bytes"] > 0 for e in memory_events), "no allocations"


def test_plugin_memory_curve_peaks_at_our_total(profile, memory_events):
  curve = profile.get_memory_curve(time_metric="us", memory_metric="B",
                                   patch_for_step_plot=False)
  cpu = curve["rows"]["CPU"]
  assert len(cpu) > 1
  peak = max(e["args"]["Total Allocated"] for e in memory_events)
  assert peak > 0
  assert max(point[1] for point in cpu) == peak
  assert curve["metadata"]["peaks"]["CPU"] == f"Peak Memory Usage: {peak:.1f}B"


def test_plugin_memory_table_by_operator(profile):
  stats = profile.get_memory_stats(memory_metric="B")
  rows = stats["rows"]["CPU"]
  ops = {row[0] for row in rows}
  assert {"aten::clamp_min", "aten::empty"} <= ops, sorted(ops)
  # Columns: name, calls, size increase, self size increase, allocation
  # count, self allocation count, allocation size, self allocation size.
  empty = next(row for row in rows if row[0] == "aten::empty")
  assert empty[1] > 0 and empty[4] > 0 and empty[6] > 0, empty
