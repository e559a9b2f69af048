"""capture_server_demo itself: the port line, clean stops, a taken port."""

from __future__ import annotations

import re
import subprocess

import capture_tools as ct


def test_sigterm_stops_it_cleanly(tmp_path):
  server = ct.DemoServer(str(tmp_path))
  assert 0 < server.port < 65536
  assert server.stop() == 0, server.text()
  assert re.search(r"stopping after \d+ steps", server.text()), server.text()


def test_port_in_use_is_a_clear_error(tmp_path):
  server = ct.DemoServer(str(tmp_path))
  try:
    proc = subprocess.run(
        [ct.DEMO, "--port", str(server.port), "--allowed_root", str(tmp_path)],
        capture_output=True, text=True, timeout=30, check=False)
  finally:
    server.stop()
  assert proc.returncode == 1, ct.describe(proc)
  assert f"port {server.port} is in use" in proc.stderr, ct.describe(proc)
  assert "listening" not in proc.stdout


def test_seconds_ends_the_run_and_bad_flags_are_usage_errors(tmp_path):
  proc = subprocess.run([ct.DEMO, "--port", "0", "--seconds", "0.2",
                         "--allowed_root", str(tmp_path)],
                        capture_output=True, text=True, timeout=30, check=False)
  assert proc.returncode == 0, ct.describe(proc)
  assert ct.LISTENING_RE.search(proc.stdout), proc.stdout
  bad = subprocess.run([ct.DEMO, "--port", "70000"], capture_output=True,
                       text=True, timeout=30, check=False)
  assert bad.returncode == 2 and "usage" in bad.stderr, ct.describe(bad)
