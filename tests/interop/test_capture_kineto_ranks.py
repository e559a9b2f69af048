"""`neuronprof capture` of two ranks, read by the PyTorch profiler
TensorBoard plugin (torch-tb-profiler) as one distributed run.

Two capture_server_demo processes report themselves as ranks 0 and 1 of a
job of 2 (RANK, LOCAL_RANK, WORLD_SIZE). One CLI call captures both, by
default with <logdir>/<run>/<host>_rank<R>.pt.trace.json.gz, one per rank,
where a Profiler writes its own. The plugin's loader must list one worker
per rank, each trace must carry its rank in distributedInfo, and both ranks'
events must lie on the client's clock (measured offsets are printed).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
import time
import types

import pytest

import capture_tools as ct

RUN = "kineto_ranks"


@pytest.fixture
def two_ranks(tmp_path):
  logdir = tmp_path / "logs"
  logdir.mkdir()
  servers = []
  try:
    for rank in (0, 1):
      servers.append(ct.DemoServer(str(logdir), env={
          "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2"}))
    yield str(logdir), servers
  finally:
    for server in servers:
      server.stop()


def capture_with_kineto(logdir, servers):
  """Runs the CLI; returns it, and the client's clock before and after."""
  before_ns = time.time_ns()
  proc = ct.run_cli(["capture", "--service_addr", ",".join(s.address for s in servers),
                     "--logdir", logdir, "--duration_ms", "500", "--run_name", RUN],
                    timeout_s=60)
  after_ns = time.time_ns()
  assert proc.returncode == 0, ct.describe(proc)
  return proc, before_ns, after_ns


def test_kineto_traces_of_a_captured_job_load_as_one_run(two_ranks):
  ct.require_cli_capture()
  from torch_tb_profiler import io as tb_io
  from torch_tb_profiler import plugin
  from torch_tb_profiler.profiler.data import RunProfileData
  from torch_tb_profiler.profiler.loader import RunLoader

  logdir, servers = two_ranks
  proc, before_ns, after_ns = capture_with_kineto(logdir, servers)
  # Each rank's clock was measured and printed below its OK line.
  offsets = re.findall(r"^  clock_offset: ([-+][0-9.]+) ms \+- ([0-9.]+) ms",
                       proc.stdout, re.M)
  assert len(offsets) == 2, ct.describe(proc)

  run_dir = os.path.join(logdir, RUN)
  files = sorted(os.listdir(run_dir))
  assert len(files) == 2 and all(f.endswith("_rank%d.pt.trace.json.gz" % r)
                                 for r, f in enumerate(files)), files
  workers = [f[:-len(".pt.trace.json.gz")] for f in files]
  for path in (os.path.join(run_dir, f) for f in files):
    assert f"  kineto: {path}" in proc.stdout, ct.describe(proc)

  for rank, worker in enumerate(workers):
    path = os.path.join(run_dir, f"{worker}.pt.trace.json.gz")
    with gzip.open(path, "rt") as f:
      trace = json.load(f)
    assert trace["distributedInfo"]["rank"] == rank
    assert trace["distributedInfo"]["world_size"] == 2
    # The rank's window, on the capture client's clock.
    assert before_ns <= trace["baseTimeNanoseconds"] <= after_ns, (before_ns, after_ns)
    data = RunProfileData.parse(worker, None, path, tempfile.mkdtemp())
    assert data.distributed_info["rank"] == rank
    assert data.steps_costs, f"no steps in {worker}"

  fake_plugin = types.SimpleNamespace(logdir=logdir)
  loaded = RunLoader(plugin.TorchProfilerPlugin._get_run_name(fake_plugin, run_dir),
                     run_dir, tb_io.Cache()).load()
  assert sorted(loaded.get_workers("Overview")) == workers


def test_hta_reads_each_rank_of_a_captured_job(two_ranks):
  """Holistic Trace Analysis takes the run folder as one
  job: one trace per rank, told apart by distributedInfo.rank."""
  ct.require_cli_capture()
  from hta import trace_analysis  # pinned in requirements-nodeps.txt
  logdir, servers = two_ranks
  capture_with_kineto(logdir, servers)
  analysis = trace_analysis.TraceAnalysis(trace_dir=os.path.join(logdir, RUN))
  assert sorted(analysis.t.traces.keys()) == [0, 1]
  for rank in (0, 1):
    names = set(analysis.t.get_trace(rank)["s_name"].unique()) \
        if "s_name" in analysis.t.get_trace(rank) else set()
    if not names:
      symbols = analysis.t.symbol_table.get_sym_table()
      names = {symbols[i] for i in analysis.t.get_trace(rank)["name"].unique()}
    assert "optimizer_step" in names, sorted(names)[:20]
