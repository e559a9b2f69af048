"""`neuronprof capture` on bad input: usage errors and an unreachable host."""

from __future__ import annotations

import capture_tools as ct


def test_missing_service_addr_is_a_usage_error(tmp_path):
  ct.require_cli_capture()
  proc = ct.run_cli(["capture", "--logdir", str(tmp_path / "logs"),
                     "--duration_ms", "100"])
  assert proc.returncode == 2, ct.describe(proc)
  assert "service_addr" in proc.stdout + proc.stderr, ct.describe(proc)
  assert not (tmp_path / "logs").exists()


def test_nobody_listening_fails_naming_the_address(tmp_path):
  ct.require_cli_capture()
  port = ct.free_loopback_port()  # closed again: connections are refused
  address = f"localhost:{port}"
  logdir = tmp_path / "logs"
  proc = ct.run_cli(["capture", "--service_addr", address, "--logdir",
                     str(logdir), "--duration_ms", "500"], timeout_s=60)
  assert proc.returncode == 1, ct.describe(proc)
  assert address in proc.stdout + proc.stderr, ct.describe(proc)
  assert ct.xplanes(str(logdir)) == {}, ct.all_files(str(logdir))
