"""xprof's own capture client against our server (capture_server_demo).

The code path behind TensorBoard's / xprof's "Capture Profile" button is the
HTTP route /data/plugin/profile/capture_profile of xprof's profile plugin
(xprof/profile_plugin.py, capture_route_impl), which calls

    xprof.convert._pywrap_profiler_plugin.trace(
        service_addr.removeprefix("grpc://"), logdir, worker_list,
        include_dataset_ops=True, duration_ms, num_tracing_attempts, options)

a ctypes binding over TSL's capture client (capture_profile.cc) compiled
into xprof's native library. These tests press that button for real: a
pinned `xprof` server on a loopback port, the route called over HTTP, the
running demo app captured, and the saved profile read back with xprof's
converters. A raw grpcio client (messages built from the ProfilerService
descriptors compiled into xprof's library, see xprof_tools.message_class)
covers what the button cannot ask for: emit_xspace and big responses.
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import re

import grpc
import pytest

import capture_tools as ct
import xprof_tools
from xprof_server import XprofServer

SERVICE = "/tensorflow.ProfilerService/"


@pytest.fixture
def demo(tmp_path):
  """capture_server_demo whose allowed_root is tmp_path/allowed."""
  allowed = tmp_path / "allowed"
  allowed.mkdir()
  server = ct.DemoServer(str(allowed))
  try:
    yield server
  finally:
    server.stop()


# ---------------------------------------------------------------------------
# The Capture Profile button.
# ---------------------------------------------------------------------------


def test_capture_profile_button_captures_the_running_app(demo, tmp_path):
  logdir = demo.allowed_root
  xprof = XprofServer(logdir)
  try:
    status, answer = xprof.capture(f"grpc://localhost:{demo.port}", 1000)
    assert status == 200 and "result" in answer, (
        f"Capture Profile failed: {status} {answer}\n{xprof.native_errors()}")
    assert "successfully" in answer["result"], answer
    # The run is listed by the same server, with its tools.
    status, runs = xprof.get("/runs")
    assert status == 200 and len(runs) == 1, runs
  finally:
    xprof.stop()
  assert demo.alive(), "the app must keep running after a capture"

  found = ct.xplanes(logdir)
  # TSL's client sends host_name "localhost:PORT"; like TSL's server, ours
  # names the file after it with ':' replaced by '_'.
  host = f"localhost_{demo.port}"
  assert list(found) == [host], (found, ct.all_files(logdir))
  run = os.path.basename(os.path.dirname(found[host]))
  assert run == runs[0]
  assert re.fullmatch(r"\d{4}(_\d\d){5}", run), run
  # The xplane.pb and the Kineto trace in <logdir>/<run>/, nothing else: no
  # Chrome trace beside the xplane.pb, since Perfetto opens the Kineto one.
  assert ct.all_files(logdir) == sorted([
      os.path.join("plugins", "profile", run, host + ".xplane.pb"),
      os.path.join(run, host + ".pt.trace.json.gz")])
  # The PyTorch plugin's loader reads that run, with its steps.
  from torch_tb_profiler.profiler.data import RunProfileData
  kineto = os.path.join(logdir, run, host + ".pt.trace.json.gz")
  data = RunProfileData.parse(host, None, kineto, str(tmp_path))
  assert data.steps_costs, f"no steps in {kineto}"
  # Perfetto's view of it (the same trace event format): the steps and the
  # demo's markers in them.
  with gzip.open(kineto, "rt") as f:
    names = collections.Counter(e.get("name") for e in json.load(f)["traceEvents"]
                                if e.get("ph") == "X")
  steps = sum(n for name, n in names.items() if str(name).startswith("ProfilerStep#"))
  assert steps >= 18 and all(names[m] >= 18 for m in ct.STEP_MARKERS), names.most_common(12)

  # ~1 s at 10 ms per step: the demo's markers, nested, in the trace viewer.
  complete = ct.check_demo_markers(found[host], min_steps=20)
  assert complete <= 110, complete
  meta = xprof_tools.trace_metadata(found[host])
  assert "/host:CPU" in meta["pids"].values(), meta
  assert xprof_tools.overview_steps(found[host]) >= 18


def test_capture_profile_button_outside_allowed_root_is_refused(demo, tmp_path):
  outside = tmp_path / "outside"
  outside.mkdir()
  xprof = XprofServer(str(outside))
  try:
    status, answer = xprof.capture(f"localhost:{demo.port}", 300)
  finally:
    xprof.stop()
  # Only once xprof has exited is its whole log read: the HTTP answer can
  # arrive before the reader thread has seen the log lines.
  log = xprof.native_errors()
  # TSL's client turns the refusal into "no trace collected" for the HTTP
  # answer; the server's own words reach xprof's log.
  assert status == 500 and "error" in answer, (status, answer)
  assert "No trace event was collected" in answer["error"], answer
  refusal = [l for l in log.splitlines() if "PERMISSION_DENIED" in l]
  assert refusal, log
  assert "allowed_root" in refusal[0] and demo.allowed_root in refusal[0], refusal
  assert str(outside) in refusal[0], refusal
  # Nothing written outside allowed_root, nor in it.
  assert ct.all_files(str(outside)) == [], ct.all_files(str(outside))
  assert os.listdir(outside) == []
  assert ct.all_files(demo.allowed_root) == []
  assert demo.alive()


# ---------------------------------------------------------------------------
# A raw gRPC client (grpcio from PyPI, TSL's message schema).
# ---------------------------------------------------------------------------


def _profile_stub(address: str):
  request_class = xprof_tools.message_class("tensorflow.ProfileRequest")
  response_class = xprof_tools.message_class("tensorflow.ProfileResponse")
  channel = grpc.insecure_channel(
      address, options=[("grpc.max_receive_message_length", -1)])
  stub = channel.unary_unary(SERVICE + "Profile",
                             request_serializer=request_class.SerializeToString,
                             response_deserializer=response_class.FromString)
  return channel, stub, request_class


def _request(request_class, duration_ms: int, **fields):
  request = request_class(duration_ms=duration_ms, **fields)
  request.opts.version = 1
  request.opts.duration_ms = duration_ms
  request.opts.host_tracer_level = 2
  return request


def test_grpc_emit_xspace_returns_the_markers(demo):
  channel, profile, request_class = _profile_stub(f"127.0.0.1:{demo.port}")
  with channel:
    response = profile(_request(request_class, 300, emit_xspace=True,
                                session_id="grpc_raw"), timeout=60)
  assert not response.empty_trace
  planes = {p.name: p for p in response.xspace.planes}
  assert "/host:CPU" in planes, list(planes)
  host = planes["/host:CPU"]
  names = {host.event_metadata[e.metadata_id].name
           for line in host.lines for e in line.events}
  assert {ct.STEP_NAME, *ct.STEP_MARKERS} <= names, names
  # Nothing saved on the server's side for emit_xspace.
  assert ct.all_files(demo.allowed_root) == []


def test_grpc_refusal_names_allowed_root(demo, tmp_path):
  outside = tmp_path / "elsewhere"
  channel, profile, request_class = _profile_stub(f"127.0.0.1:{demo.port}")
  with channel, pytest.raises(grpc.RpcError) as raised:
    profile(_request(request_class, 100, repository_root=str(outside),
                     session_id="run1", host_name="h"), timeout=60)
  error = raised.value
  assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error
  assert "allowed_root" in error.details() and demo.allowed_root in error.details()
  assert not outside.exists()


def test_grpc_response_over_4_mib(tmp_path):
  """A dense window (a step every few µs) answers with a >4 MiB XSpace.

  The window is several times longer than 4 MiB needs on an idle machine
  (~100k events in 150 ms), so a loaded CI machine still fills it."""
  allowed = tmp_path / "allowed"
  server = ct.DemoServer(str(allowed), ["--step_ms", "0", "--hidden", "1",
                                        "--batch", "1"])
  try:
    channel, profile, request_class = _profile_stub(f"127.0.0.1:{server.port}")
    with channel:
      response = profile(_request(request_class, 600, emit_xspace=True),
                         timeout=120)
  finally:
    server.stop()
  size = response.ByteSize()
  assert size > 4 << 20, f"response of {size} bytes; expected > 4 MiB"
  host = next(p for p in response.xspace.planes if p.name == "/host:CPU")
  events = sum(len(line.events) for line in host.lines)
  assert events > 100000, events
