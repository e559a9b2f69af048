"""A real `xprof --logdir LOGDIR` server on a free loopback port.

Shared by the tests that use xprof's HTTP API: serving a logdir
(test_xprof_server.py) and its Capture Profile route
(test_capture_xprof_client.py). Its stdout+stderr are collected, since
TSL's capture client reports a server's refusal only in that log.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest

import capture_tools as ct

STARTUP_TIMEOUT_S = 60


class XprofServer(ct._Process):  # pylint: disable=protected-access
  """Started and answering /runs once constructed; stop() ends it."""

  def __init__(self, logdir: str):
    self.port = ct.free_loopback_port()
    xprof = os.path.join(os.path.dirname(sys.executable), "xprof")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0")
    # --grpc_port: xprof also starts a worker gRPC server, on 50051 unless
    # told otherwise; a free port keeps parallel or leftover xprofs apart.
    super().__init__([xprof, "--logdir", logdir, "--port", str(self.port),
                      "--grpc_port", str(ct.free_loopback_port())], env=env)
    self.base = f"http://127.0.0.1:{self.port}/data/plugin/profile"
    try:
      ct.wait_until(self._answers, STARTUP_TIMEOUT_S, "xprof to answer /runs",
                    interval_s=0.1)
    except BaseException:
      self.stop()
      raise

  def _answers(self) -> bool:
    if not self.alive():
      pytest.fail(f"xprof exited early:\n{self.text()}")
    try:
      self.get("/runs")
      return True
    except (urllib.error.URLError, ConnectionError):
      return False

  def get(self, path: str, timeout_s: float = 60):
    """(status, decoded JSON) of GET base+path; HTTP errors included."""
    try:
      with urllib.request.urlopen(self.base + path, timeout=timeout_s) as r:
        status, body = r.status, r.read()
    except urllib.error.HTTPError as e:
      status, body = e.code, e.read()
    if body[:2] == b"\x1f\x8b":  # xprof gzips whatever Accept-Encoding says
      body = gzip.decompress(body)
    return status, json.loads(body)

  def get_ok(self, path: str):
    """Decoded JSON of GET base+path, which must answer 200."""
    status, answer = self.get(path)
    assert status == 200, (path, status, answer)
    return answer

  def wait_for_runs(self):
    """The run list, once xprof has found at least one run (bounded)."""
    found = []
    def listed():
      found[:] = self.get_ok("/runs")
      return bool(found)
    ct.wait_until(listed, STARTUP_TIMEOUT_S, "xprof to list a run", interval_s=0.2)
    return found

  def data(self, run: str, tool: str, host: str):
    query = urllib.parse.urlencode({"run": run, "tag": tool, "host": host})
    return self.get_ok("/data?" + query)

  def native_errors(self) -> str:
    """The E/W lines of the native library's log (TSL's client errors).

    Complete only after stop(): the log is read by a thread."""
    return "\n".join(l for l in self.text().splitlines()
                     if re.match(r"[EW]\d{4} ", l))

  def capture(self, service_addr: str, duration_ms: int):
    """Presses Capture Profile: the dialog's query, as the frontend sends it."""
    query = urllib.parse.urlencode({
        "service_addr": service_addr, "duration": duration_ms, "num_retry": 0,
        "host_tracer_level": 2, "device_tracer_level": 1,
        "python_tracer_level": 0, "delay": 0, "is_tpu_name": "false"})
    return self.get("/capture_profile?" + query, timeout_s=duration_ms / 1000 + 60)
