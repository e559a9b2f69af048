"""A flight recorder's streamed xplane.pb against the XSpace built whole.

tests/export/write_streamed_xplane records every kind of host record into a
ring and writes one snapshot twice: built whole, and with its host plane
streamed as a dump writes it (length placeholders as 5-byte varints, the
plane's metadata after its lines). Python's protobuf and xprof's converters
must read both as the same profile.
"""

from __future__ import annotations

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
