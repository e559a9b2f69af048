"""A .pt.trace.json.gz of several gzip members (GzipSink writes one per
1 MiB block, compressed by igzip), read whole by the readers users
open it with: Python's gzip, the PyTorch Profiler TensorBoard plugin's
loader (torch-tb-profiler 0.4.3) and Holistic Trace Analysis. A reader that
stopped after the first member would see about 1 MiB of the trace.

  NEURONPROF_BUILD_DIR=build .venv/bin/python -m pytest tests/interop/test_gzip_members.py
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import types
import zlib

import pytest

STEPS = 600  # About 5 MiB of JSON: 5 members.


@pytest.fixture(scope="module")
def capture(tmp_path_factory, memory_leak_trace):
  logdir = str(tmp_path_factory.mktemp("members"))
  return logdir, memory_leak_trace(logdir, STEPS)


@pytest.fixture(scope="module")
def events(capture):
  with gzip.open(capture[1], "rt") as f:
    return json.load(f)["traceEvents"]


def _members(path: str) -> int:
  data = open(path, "rb").read()
  count = 0
  while data:
    member = zlib.decompressobj(16 + zlib.MAX_WBITS)
    member.decompress(data)
    assert member.eof, "a member is cut short"
    data = member.unused_data
    count += 1
  return count


def test_the_trace_has_several_members_read_whole_by_python(capture, events):
  assert _members(capture[1]) >= 4
  # The last event is the window's end: the text was read to its end.
  assert events[-1]["name"] == "Record Window End"
  assert sum(e.get("name") == "[memory]" for e in events) >= 2 * STEPS


def test_the_plugin_loads_every_member(capture, events):
  from torch_tb_profiler import io as tb_io
  from torch_tb_profiler import plugin
  from torch_tb_profiler.profiler.loader import RunLoader
  logdir, trace = capture
  run_dir = os.path.dirname(trace)
  fake_plugin = types.SimpleNamespace(logdir=logdir)
  run = RunLoader(plugin.TorchProfilerPlugin._get_run_name(fake_plugin, run_dir),
                  run_dir, tb_io.Cache()).load()
  worker = os.path.basename(trace)[:-len(".pt.trace.json.gz")]
  profile = run.get_profile(worker, "default")
  assert profile is not None, "torch-tb-profiler failed to load the trace (see its log)"
  # Its operator table counts the calls of every step, last member included
  # (one relu per step).
  relus = sum(e.get("cat") == "cpu_op" and e["name"] == "aten::relu" for e in events)
  table = {row["name"]: row["calls"] for row in profile.operation_table_by_name["data"]}
  assert table["aten::relu"] == relus == STEPS


def test_hta_loads_every_member(capture, events):
  from hta.trace_analysis import TraceAnalysis
  analysis = TraceAnalysis(trace_dir=os.path.dirname(capture[1]))
  symbols = analysis.t.symbol_table.get_sym_table()
  df = analysis.t.get_trace(0)
  names = collections.Counter(symbols[i] for i in df["name"])
  # HTA keeps what starts before the last step; the steps before it, from
  # the first member to the last, are all there.
  steps = sorted(int(e["name"].split("#")[1]) for e in events
                 if e.get("name", "").startswith("ProfilerStep#"))
  assert len(steps) == STEPS
  assert sorted(int(s.split("#")[1]) for s in names
                if s.startswith("ProfilerStep#")) == steps[:-1]
