"""A flight-recorder server pulled from outside the process.

examples/flight_recorder_server --port P records every request into its
FlightRecorder and serves remote captures from the ring. Three ways in, each
through the real consumer: xprof's Capture Profile button (TSL's capture
client, a plain request: its window is served from the ring once it has
passed), our CLI's `capture --flight_recorder` (the last N seconds at once,
even for a window far longer than the test), and the dump signal SIGUSR2.
Every profile is read back through xprof's converters.
"""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

import capture_tools as ct
import xprof_tools
from xprof_server import XprofServer

FLIGHT = os.path.join(ct.BUILD_DIR, "examples", "flight_recorder_server")
SERVING_RE = re.compile(r"serving remote pulls on port (\d+)")


class FlightServer(ct._Process):  # pylint: disable=protected-access
  """flight_recorder_server serving remote pulls on a free loopback port;
  its logdir is also the server's allowed_root."""

  def __init__(self, logdir: str):
    self.logdir = logdir
    self.port = ct.free_loopback_port()
    super().__init__([ct.binary(FLIGHT, "flight_recorder_server"),
                      "--logdir", logdir, "--port", str(self.port)])
    try:
      self.wait_for_line(SERVING_RE, 120)
    except BaseException:
      self.stop()
      raise


@pytest.fixture
def flight(tmp_path):
  server = FlightServer(str(tmp_path / "dumps"))
  try:
    yield server
  finally:
    server.stop()


def warnings_of(xplane_path: str):
  space = xprof_tools.xplane_classes()["XSpace"]()
  with open(xplane_path, "rb") as f:
    space.ParseFromString(f.read())
  return list(space.warnings)


# flight_recorder_server's default --workers.
WORKERS = 4


def check_whole_requests(names, stage: str):
  """Every recorded request holds its `stage`. A request still open when the
  ring was frozen (at most one per worker) has its finished stages recorded
  but not yet itself: a marker is recorded when it ends."""
  assert 0 <= names[stage] - names["request"] <= WORKERS, names


def only_xplane(logdir: str) -> str:
  found = ct.xplanes(logdir)
  assert len(found) == 1, (found, ct.all_files(logdir))
  return next(iter(found.values()))


def test_capture_profile_button_gets_its_window_from_the_ring(flight):
  # TensorBoard's logdir is the app's: TSL's client asks the server to save
  # there (beside the slow request's dump).
  xprof = XprofServer(flight.logdir)
  try:
    status, answer = xprof.capture(f"grpc://localhost:{flight.port}", 500)
    assert status == 200 and "successfully" in answer.get("result", ""), (
        f"Capture Profile failed: {status} {answer}\n{xprof.native_errors()}")
  finally:
    xprof.stop()
  assert flight.alive(), "the server must keep running after a pull"
  found = ct.xplanes(flight.logdir)
  host = f"localhost_{flight.port}"
  assert host in found, (found, ct.all_files(flight.logdir))
  path = found[host]
  names = ct.marker_names(path)
  # A request every few ms, each with its nested stages.
  assert names["request"] >= 5, names
  check_whole_requests(names, "inference")
  assert any("served from this process's FlightRecorder" in w for w in warnings_of(path))


def test_cli_pulls_the_last_seconds_at_once(flight, tmp_path):
  logdir = str(tmp_path / "cli")
  started = time.monotonic()
  # A ten-minute window: answered from what the ring holds, not waited out.
  proc = ct.run_cli(["capture", "--service_addr", f"localhost:{flight.port}",
                     "--logdir", logdir, "--duration_ms", "600000",
                     "--flight_recorder"], timeout_s=120)
  assert proc.returncode == 0, ct.describe(proc)
  assert time.monotonic() - started < 120
  path = only_xplane(logdir)
  names = ct.marker_names(path)
  # The ring still holds the start-up burst, the slow request among them.
  assert names["request"] >= 100, names
  check_whole_requests(names, "parse")
  assert any("served at once" in w for w in warnings_of(path))


def test_sigusr2_dumps_the_ring(flight):
  os.kill(flight.proc.pid, signal.SIGUSR2)
  match = flight.wait_for_line(re.compile(r"signal dump: (\S+)"), 60)
  run_dir = match.group(1)
  assert run_dir.endswith("_signal_SIGUSR2"), run_dir
  xplanes = [f for f in os.listdir(run_dir) if f.endswith(".xplane.pb")]
  assert len(xplanes) == 1, os.listdir(run_dir)
  names = ct.marker_names(os.path.join(run_dir, xplanes[0]))
  assert names["request"] >= 100, names
  check_whole_requests(names, "serialize")
  assert flight.alive()
