"""Shared helpers of the distributed interop tests (test_distributed_*.py).

- `DdpJob`: build/examples/libtorch_ddp in launcher mode (N rank processes
  on loopback, Gloo), serving on a free run of N ports chosen here, started
  once every rank prints its server line.
- `RankProcess`: one rank of the same program started the way an external
  launcher (torchrun, a scheduler) would: RANK etc. in its environment.
- `capture_ranks(...)`: one `neuronprof capture` over a port range.
- `kineto_run(...)`: the per-rank `.pt.trace.json.gz` files of a captured run.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from typing import Dict, List, Optional, Sequence

import pytest

import capture_tools as ct

DDP = os.path.join(ct.BUILD_DIR, "examples", "libtorch_ddp")
SERVER_RE = re.compile(
    r"rank (\d+): neuronprof server listening on 127\.0\.0\.1:(\d+) \(pid (\d+)\)")
TRAINING_RE = re.compile(r"rank (\d+): training")
# Small and single-threaded: up to 8 ranks share 2 cores in CI.
SMALL_MODEL = ("--hidden", "64", "--batch", "32")


def binary() -> str:
  return ct.binary(DDP, "libtorch_ddp")


def free_port_range(count: int) -> int:
  """A base port such that base .. base+count-1 are all free right now."""
  for _ in range(100):
    base = ct.free_loopback_port()
    if base + count > 65535:
      continue
    sockets = []
    try:
      for port in range(base, base + count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sockets.append(s)
        s.bind(("127.0.0.1", port))
      return base
    except OSError:
      continue
    finally:
      for s in sockets:
        s.close()
  pytest.fail(f"no run of {count} free loopback ports found")
  raise AssertionError  # unreachable


def wait_for_ranks(proc: "ct._Process", pattern: re.Pattern, ranks: int,
                   timeout_s: float = ct.STARTUP_TIMEOUT_S) -> Dict[int, re.Match]:
  """Waits until each of `ranks` ranks printed a line matching `pattern`."""
  seen: Dict[int, re.Match] = {}
  while len(seen) < ranks:
    match = proc.wait_for_line(pattern, timeout_s)
    seen[int(match.group(1))] = match
  return seen


class DdpJob(ct._Process):  # pylint: disable=protected-access
  """libtorch_ddp's launcher running `world_size` ranks, servers up."""

  def __init__(self, world_size: int, logdir: str, args: Sequence[str] = ()):
    self.world_size = world_size
    self.base_port = free_port_range(world_size)
    super().__init__([binary(), "--world_size", str(world_size),
                      "--port", str(self.base_port), "--logdir", logdir,
                      *SMALL_MODEL, *args])
    try:
      servers = wait_for_ranks(self, SERVER_RE, world_size)
    except BaseException:
      self.stop()
      raise
    # Rank r serves on base + local rank (here local rank = rank).
    assert {r: int(m.group(2)) for r, m in servers.items()} == {
        r: self.base_port + r for r in range(world_size)}, self.text()
    self.pids = {r: int(m.group(3)) for r, m in servers.items()}

  @property
  def service_addr(self) -> str:
    return f"127.0.0.1:{self.base_port}-{self.base_port + self.world_size - 1}"

  def wait(self, timeout_s: float = 60) -> int:
    try:
      return self.proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
      pytest.fail(f"libtorch_ddp did not end within {timeout_s} s:\n{self.text()}")
      raise


class RankProcess(ct._Process):  # pylint: disable=protected-access
  """One rank, started from its environment as torchrun would start it."""

  def __init__(self, rank: int, world_size: int, base_port: int, logdir: str,
               args: Sequence[str] = ()):
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
               WORLD_SIZE=str(world_size))
    super().__init__([binary(), "--port", str(base_port), "--logdir", logdir,
                      *SMALL_MODEL, *args], env=env)
    self.rank = rank
    self.port = base_port + rank


def capture_ranks(service_addr: str, logdir: str, run: str,
                  duration_ms: int) -> subprocess.CompletedProcess:
  return ct.run_cli(["capture", "--service_addr", service_addr, "--logdir", logdir,
                     "--duration_ms", str(duration_ms), "--run_name", run],
                    timeout_s=duration_ms / 1000 + 90)


def rank_xplanes(logdir: str, run: str) -> Dict[str, str]:
  """{<host>_rank<r>: path} of the run's .xplane.pb files."""
  run_dir = os.path.join(logdir, "plugins", "profile", run)
  return {name[:-len(".xplane.pb")]: os.path.join(run_dir, name)
          for name in sorted(os.listdir(run_dir)) if name.endswith(".xplane.pb")}


def kineto_run(logdir: str, run: str) -> str:
  """<logdir>/<run>/, where `neuronprof capture` wrote
  <host>_rank<r>.pt.trace.json.gz for every captured rank (checked)."""
  out_dir = os.path.join(logdir, run)
  for worker in rank_xplanes(logdir, run):
    out = os.path.join(out_dir, worker + ".pt.trace.json.gz")
    assert os.path.isfile(out), (out, sorted(os.listdir(out_dir)))
  return out_dir


def capture_lines(proc: subprocess.CompletedProcess) -> List[str]:
  return [l for l in proc.stdout.splitlines() if l.startswith(("OK ", "FAILED "))]


def summary(run_dir: str, extra: Optional[Sequence[str]] = None) -> subprocess.CompletedProcess:
  return ct.run_cli(["summary", run_dir, *(extra or [])])
