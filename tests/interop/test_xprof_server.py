"""The demo's logdir served by a real xprof server over its HTTP API.

This is what a user does after the quick start (`xprof --logdir logs`): the
run must be listed, and the overview page and trace viewer must come back
with the steps and markers. The server is the pinned `xprof` from PyPI,
bound to a loopback port.
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

import test_demo_xprof as demo

STARTUP_DEADLINE_S = 120


def _free_loopback_port() -> int:
  with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _get_json(url: str):
  with urllib.request.urlopen(url, timeout=60) as response:
    body = response.read()
  # xprof gzips its answers whatever the request's Accept-Encoding says.
  if body[:2] == b"\x1f\x8b":
    body = gzip.decompress(body)
  return json.loads(body)


class XprofServer:
  def __init__(self, logdir: str):
    self.port = _free_loopback_port()
    self.base = f"http://127.0.0.1:{self.port}/data/plugin/profile"
    xprof = os.path.join(os.path.dirname(sys.executable), "xprof")
    self.proc = subprocess.Popen(
        [xprof, "--logdir", logdir, "--port", str(self.port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

  def wait_for_runs(self):
    """Polls /runs until the server answers (bounded), or fails."""
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while True:
      if self.proc.poll() is not None:
        pytest.fail("xprof exited early:\n" + self.proc.stdout.read())
      try:
        runs = _get_json(self.base + "/runs")
        if runs:
          return runs
      except (urllib.error.URLError, ConnectionError):
        pass
      if time.monotonic() > deadline:
        pytest.fail(f"xprof did not serve /runs within {STARTUP_DEADLINE_S} s")
      time.sleep(0.2)

  def data(self, run: str, tool: str, host: str):
    query = urllib.parse.urlencode({"run": run, "tag": tool, "host": host})
    return _get_json(f"{self.base}/data?{query}")

  def close(self):
    self.proc.terminate()
    try:
      self.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
      self.proc.kill()
      self.proc.wait()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
  logdir = str(tmp_path_factory.mktemp("served_logdir"))
  demo.run_demo(logdir, demo.STEPS)
  run_dir, host = demo.find_run(logdir)
  server = XprofServer(logdir)
  try:
    yield server, os.path.basename(run_dir), host
  finally:
    server.close()


def test_run_is_listed_with_its_tools(served):
  server, run, _ = served
  assert server.wait_for_runs() == [run]
  tools = _get_json(server.base + "/run_tools?" + urllib.parse.urlencode({"run": run}))
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
