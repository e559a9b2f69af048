"""A flight recorder's streamed xplane.pb against the XSpace built whole.

tests/export/write_streamed_xplane records every kind of host record into a
ring and writes one snapshot twice: built whole, and with its host plane
streamed as a dump writes it (length placeholders as 5-byte varints, the
plane's metadata after its lines), with the Chrome and Kineto traces
written whole and from fragments of the plane (as Stop() of host markers
writes them). Python's protobuf, xprof's converters and the PyTorch
plugin's loader must read both as the same profile.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess

import xprof_tools


def _write(build_binary, tmp_path):
  subprocess.run([build_binary("tests", "write_streamed_xplane"), str(tmp_path), "host"],
                 check=True, capture_output=True, timeout=120)
  return (os.path.join(str(tmp_path), "whole", "host.xplane.pb"),
          os.path.join(str(tmp_path), "streamed", "host.xplane.pb"))


def test_python_protobuf_parses_the_streamed_file_as_the_whole_one(build_binary, tmp_path):
  whole, streamed = _write(build_binary, tmp_path)
  space_class = xprof_tools.xplane_classes()["XSpace"]
  spaces = []
  for path in (whole, streamed):
    space = space_class()
    with open(path, "rb") as f:
      space.ParseFromString(f.read())
    spaces.append(space)
  assert spaces[0] == spaces[1]
  assert sum(len(line.events) for line in spaces[1].planes[1].lines) > 8192


def test_xprof_converters_read_the_streamed_file_as_the_whole_one(build_binary, tmp_path):
  whole, streamed = _write(build_binary, tmp_path)
  events = [xprof_tools.trace_events(path) for path in (whole, streamed)]
  assert len(events[1]) > 8192
  key = lambda e: (e.get("pid"), e.get("tid"), e.get("ts"), e.get("name"), e.get("dur"))
  assert sorted(map(key, events[0])) == sorted(map(key, events[1]))
  assert {e["name"] for e in events[1]} >= {"op", "layer_3", "enqueue", "run_batch"}
  assert xprof_tools.framework_op_stats(whole) == xprof_tools.framework_op_stats(streamed)


def test_traces_from_fragments_read_as_the_whole_ones(build_binary, tmp_path):
  _write(build_binary, tmp_path)
  texts = {}
  for kind in ("whole", "streamed"):
    for name in ("host.trace.json.gz", "host.pt.trace.json.gz"):
      with gzip.open(os.path.join(str(tmp_path), kind, name), "rt") as f:
        texts[kind, name] = json.load(f)
  # The same events; a trace written from fragments lists them in its order.
  for name in ("host.trace.json.gz", "host.pt.trace.json.gz"):
    events = {}
    for kind in ("whole", "streamed"):
      trace = dict(texts[kind, name])
      events[kind] = sorted(json.dumps(e, sort_keys=True) for e in trace.pop("traceEvents"))
      texts[kind, name] = trace
    assert events["streamed"] == events["whole"], name
    assert len(events["streamed"]) > 8192
    assert texts["streamed", name] == texts["whole", name], name
  # What the PyTorch plugin's loader makes of each Kineto trace.
  from torch_tb_profiler.profiler.data import RunProfileData
  loaded = []
  for kind in ("whole", "streamed"):
    cache = tmp_path / ("cache_" + kind)
    cache.mkdir()
    data = RunProfileData.parse("host", None,
                                os.path.join(str(tmp_path), kind, "host.pt.trace.json.gz"),
                                str(cache))
    loaded.append((data.steps_names, [step.costs for step in data.steps_costs or []]))
  assert loaded[0] == loaded[1]
  assert loaded[1][0], "no steps"
