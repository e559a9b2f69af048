"""One `neuronprof capture` over three running apps, one of which dies.

Three capture_server_demo processes on free loopback ports; a single CLI
call captures all of them in parallel into one run folder. About 1 s into
the 3 s window one server is killed with SIGKILL (a crashed host). The CLI
must exit 1, keep the two surviving hosts' profiles (readable by xprof, with
the demo's markers) and name the dead host's address in its report.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

import capture_tools as ct

DURATION_MS = 3000
KILL_AFTER_S = 1.0


@pytest.fixture
def three_servers(tmp_path):
  logdir = tmp_path / "logs"
  logdir.mkdir()
  servers = []
  try:
    for _ in range(3):
      servers.append(ct.DemoServer(str(logdir)))
    yield str(logdir), servers
  finally:
    for server in servers:
      server.stop()


def test_capture_three_hosts_one_killed(three_servers):
  ct.require_cli_capture()
  logdir, servers = three_servers
  victim = servers[1]
  addresses = ",".join(s.address for s in servers)
  cli = subprocess.Popen(
      [ct.CLI, "capture", "--service_addr", addresses, "--logdir", logdir,
       "--duration_ms", str(DURATION_MS)],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      stdin=subprocess.DEVNULL)
  try:
    # The capture is in flight once every server holds the CLI's connection.
    ct.wait_until(
        lambda: all(ct.established_connections(s.port) > 0 for s in servers)
        or cli.poll() is not None,
        30, "the CLI to connect to all three servers")
    assert cli.poll() is None, "the CLI ended before the window: " + cli.stdout.read()
    in_flight = time.monotonic()
    # Into the window (the one timed wait of this test: the kill must land
    # well inside the 3 s window, not at its edges).
    time.sleep(max(0.0, in_flight + KILL_AFTER_S - time.monotonic()))
    assert cli.poll() is None
    victim.kill()
    out, err = cli.communicate(timeout=60)
  finally:
    if cli.poll() is None:
      cli.kill()
      cli.communicate()
  text = out + err
  assert cli.returncode == 1, f"exit {cli.returncode}\n{text}"

  # The survivors' profiles, in one run folder.
  runs = ct.run_dirs(logdir)
  assert len(runs) == 1, (runs, ct.all_files(logdir))
  found = ct.xplanes(logdir)
  assert len(found) == 2, (found, ct.all_files(logdir), text)
  for host, path in found.items():
    # By default the Kineto trace (which Perfetto opens too), no Chrome trace.
    assert os.path.isfile(os.path.join(logdir, os.path.basename(runs[0]),
                                       host + ".pt.trace.json.gz")), ct.all_files(logdir)
    assert not os.path.exists(os.path.join(runs[0], host + ".trace.json.gz"))
    # ~3 s at 10 ms per step (2 cores shared by 3 apps, the CLI and xprof).
    ct.check_demo_markers(path, min_steps=50)

  # The report: the dead host's address on a failure line; the others OK.
  lines = text.splitlines()
  failed = [l for l in lines if victim.address in l and re.search(r"fail", l, re.I)]
  assert failed, f"no failure line naming {victim.address}:\n{text}"
  for server in (servers[0], servers[2]):
    ok = [l for l in lines if server.address in l and re.search(r"\bok\b", l, re.I)]
    assert ok, f"no OK line naming {server.address}:\n{text}"
  # The survivors are still serving.
  assert servers[0].alive() and servers[2].alive()
