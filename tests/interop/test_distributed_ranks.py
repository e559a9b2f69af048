"""Many ranks captured in one command, a dead rank, and the launcher.

- 8 ranks of examples/libtorch_ddp on loopback, captured in parallel by one
  `neuronprof capture --service_addr 127.0.0.1:P-P+7`: 8 rank files, each
  with its Gloo collectives and steps.
- A rank killed (SIGKILL) before the capture: the capture of the range
  still writes the other ranks' complete files, names the dead rank's
  address and exits 1.
- The launcher reports a rank that dies (which rank, which signal) and
  stops the others.

  NEURONPROF_BUILD_DIR=build .venv/bin/python -m pytest \
      tests/interop/test_distributed_ranks.py
"""

from __future__ import annotations

import gzip
import json
import os
import re

import pytest

import capture_tools as ct
import ddp_tools

COMM_FAILED_RE = re.compile(r"rank \d+: collective failed \(did a peer rank die\?\)")


def _kineto(path: str):
  with gzip.open(path, "rt") as f:
    return json.load(f)


def test_eight_ranks_in_one_capture(tmp_path):
  ct.require_cli_capture()
  world, steps, run = 8, 4, "ddp8"
  logdir = str(tmp_path)
  job = ddp_tools.DdpJob(world, logdir, ["--steps", str(steps), "--wait_for_capture"])
  try:
    # Long window: every rank's exit ends its own.
    proc = ddp_tools.capture_ranks(job.service_addr, logdir, run, duration_ms=60000)
    assert proc.returncode == 0, ct.describe(proc) + job.text()
    assert job.wait() == 0, job.text()
  finally:
    job.stop()
  assert "captured 8 of 8 hosts" in proc.stdout, proc.stdout
  files = ddp_tools.rank_xplanes(logdir, run)
  assert sorted(files) == sorted(f"127.0.0.1_rank{r}" for r in range(world))
  for worker, path in files.items():
    names = ct.marker_names(path)  # Read back by xprof's converter.
    assert names["gloo:broadcast"] == 1, (worker, names)
    assert names["gloo:all_reduce"] == steps, (worker, names)
    assert names["train_step"] == steps, (worker, names)
    assert names["c10d::allreduce_"] == steps, (worker, names)
  kineto_dir = ddp_tools.kineto_run(logdir, run)
  for rank in range(world):
    trace = _kineto(os.path.join(kineto_dir, f"127.0.0.1_rank{rank}.pt.trace.json.gz"))
    assert trace["distributedInfo"] == {"backend": "gloo", "rank": rank, "world_size": world}


@pytest.fixture
def four_ranks_one_dead(tmp_path):
  """4 ranks started from their environment (as torchrun would), FileStore;
  rank 3 killed with SIGKILL once all trained. Gloo connects every pair of
  ranks, so each survivor's all-reduce fails at once; with --on_comm_error
  serve it then keeps serving captures (as a job hung on a dead peer would)."""
  world = 4
  logdir = str(tmp_path / "logs")
  base = ddp_tools.free_port_range(world)
  store = str(tmp_path / "store")
  ranks = []
  try:
    for rank in range(world):
      ranks.append(ddp_tools.RankProcess(
          rank, world, base, logdir,
          ["--store", "file", "--store_file", store, "--seconds", "600",
           "--on_comm_error", "serve", "--timeout_s", "10"]))
    for r in ranks:
      r.wait_for_line(ddp_tools.SERVER_RE, ct.STARTUP_TIMEOUT_S)
    for r in ranks:
      r.wait_for_line(ddp_tools.TRAINING_RE, ct.STARTUP_TIMEOUT_S)
    ranks[3].kill()
    assert ranks[3].proc.returncode == -9
    for r in ranks[:3]:
      r.wait_for_line(COMM_FAILED_RE, ct.STARTUP_TIMEOUT_S)
    yield logdir, base, ranks
  finally:
    for r in ranks:
      r.stop(timeout_s=5)


def test_capture_of_a_range_with_a_dead_rank(four_ranks_one_dead):
  ct.require_cli_capture()
  logdir, base, ranks = four_ranks_one_dead
  run = "dead3"
  proc = ddp_tools.capture_ranks(f"127.0.0.1:{base}-{base + 3}", logdir, run,
                                 duration_ms=500)
  assert proc.returncode == 1, ct.describe(proc)
  lines = ddp_tools.capture_lines(proc)
  for rank in range(3):
    assert any(l.startswith(f"OK 127.0.0.1:{base + rank} ") for l in lines), lines
  failed = [l for l in lines if l.startswith("FAILED")]
  assert len(failed) == 1 and failed[0].startswith(f"FAILED 127.0.0.1:{base + 3} "), lines
  assert "captured 3 of 4 hosts" in proc.stdout

  files = ddp_tools.rank_xplanes(logdir, run)
  assert sorted(files) == [f"127.0.0.1_rank{r}" for r in range(3)]
  # Complete: each reads back whole, in xprof and as Kineto, as its rank.
  for worker, path in files.items():
    names = ct.marker_names(path)
    # What a capture of a rank that lost its peer shows (--on_comm_error serve).
    assert names["waiting_after_comm_error"] >= 1, (worker, names)
  kineto_dir = ddp_tools.kineto_run(logdir, run)
  for rank in range(3):
    trace = _kineto(os.path.join(kineto_dir, f"127.0.0.1_rank{rank}.pt.trace.json.gz"))
    assert trace["distributedInfo"] == {"backend": "gloo", "rank": rank, "world_size": 4}
    assert trace["traceEvents"][-1]["name"] == "Record Window End"
  for r in ranks[:3]:
    assert r.alive(), r.text()

  # The summary of the run covers the survivors and names the lost rank.
  summary = ddp_tools.summary(os.path.join(logdir, "plugins", "profile", run))
  assert summary.returncode == 0, ct.describe(summary)
  assert re.search(r"^MISSING: rank 3 of world size 4\b", summary.stdout, re.M), \
      ct.describe(summary)


def test_launcher_reports_a_dead_rank_and_stops_the_others(tmp_path):
  job = ddp_tools.DdpJob(2, str(tmp_path), ["--seconds", "600"])
  try:
    ddp_tools.wait_for_ranks(job, ddp_tools.TRAINING_RE, 2)
    victim = job.pids[1]
    os.kill(victim, 9)
    assert job.wait() == 1, job.text()
  finally:
    job.stop()
  text = job.text()
  assert (f"libtorch_ddp: rank 1 (pid {victim}) was killed by signal 9 (SIGKILL); "
          "stopping the other ranks") in text, text
  # Rank 0 ended too (its all-reduce lost its peer, or the launcher's
  # SIGTERM), and was reaped by the launcher.
  with pytest.raises(ProcessLookupError):
    os.kill(job.pids[0], 0)
