"""The demo's logdir served by a real xprof server over its HTTP API.

This is what a user does after the quick start (`xprof --logdir logs`): the
run must be listed, and the overview page and trace viewer must come back
with the steps and markers. The server is the pinned `xprof` from PyPI,
bound to a loopback port.
"""

from __future__ import annotations

import collections
import os
import urllib.parse

import pytest

import test_demo_xprof as demo
from xprof_server import XprofServer

@pytest.fixture(scope="module")
def served(tmp_path_factory):
  logdir = str(tmp_path_factory.mktemp("served_logdir"))
  demo.run_demo(logdir, demo.STEPS)
  run_dir, host = demo.find_run(logdir)
  server = XprofServer(logdir)
  try:
    yield server, os.path.basename(run_dir), host
  finally:
    server.stop()


def test_run_is_listed_with_its_tools(served):
  server, run, _ = served
  assert server.wait_for_runs() == [run]
  tools = server.get_ok("/run_tools?" + urllib.parse.urlencode({"run": run}))
  assert "overview_page" in tools
  assert any(t.startswith("trace_viewer") for t in tools), tools


def test_served_overview_counts_steps(served):
  server, run, host = served
  server.wait_for_runs()
  tables = server.data(run, "overview_page", host)
  steps = [t for t in tables
           if any(c.get("id") == "stepnum" for c in t.get("cols", []))]
  assert len(steps) == 1
  # xprof leaves out the first and the last step when it sees more than 5.
  assert len(steps[0]["rows"]) == demo.STEPS - 2


def test_served_trace_viewer_has_every_marker(served):
  server, run, host = served
  server.wait_for_runs()
  trace = server.data(run, "trace_viewer", host)
  names = collections.Counter(
      e["name"].split(" ")[0] for e in trace["traceEvents"] if e.get("ph") == "X")
  for marker in ("train",) + demo.STEP_MARKERS + ("load_batch",):
    assert names[marker] == demo.STEPS, (marker, names)
