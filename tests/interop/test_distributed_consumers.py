"""A 4-rank data-parallel run, captured in one command, in the real tools.

examples/libtorch_ddp trains on 4 ranks (Gloo on loopback, rank 3 slowed
down on purpose); `neuronprof capture` takes every rank's server at once
(--wait_for_capture: each rank trains only once its window is open, so the
whole run, and so the same collectives, is in every rank's file; the ranks'
exit ends the windows). Then the per-rank `.pt.trace.json.gz` files must be
read by:
  - Holistic Trace Analysis (PyPI holistictraceanalysis): one trace per
    rank, told apart by distributedInfo.rank, and its communication /
    computation overlap per rank;
  - the PyTorch profiler plugin's loader (torch-tb-profiler 0.4.3): 4
    workers and its Distributed view (computation/communication overview,
    synchronizing time, the collectives table with their sizes);
and xprof must list the run with one host per rank, with each collective
in a framework_op_stats row of its own.

  NEURONPROF_BUILD_DIR=build .venv/bin/python -m pytest \
      tests/interop/test_distributed_consumers.py
"""

from __future__ import annotations

import collections
import gzip
import json
import math
import os
import re
import types
import urllib.parse

import pytest

import capture_tools as ct
import ddp_tools
import xprof_tools
from xprof_server import XprofServer

WORLD = 4
STEPS = 6
RUN = "ddp4"
WORKERS = [f"127.0.0.1_rank{r}" for r in range(WORLD)]


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
  """(logdir, kineto run dir) of one capture of a 4-rank run."""
  ct.require_cli_capture()
  logdir = str(tmp_path_factory.mktemp("ddp_logdir"))
  job = ddp_tools.DdpJob(WORLD, logdir, ["--steps", str(STEPS), "--wait_for_capture",
                                         "--slow_rank", "3", "--slow_ms", "40"])
  try:
    # The window is long on purpose: the ranks' exit ends it.
    proc = ddp_tools.capture_ranks(job.service_addr, logdir, RUN, duration_ms=60000)
    assert proc.returncode == 0, ct.describe(proc) + job.text()
    assert job.wait() == 0, job.text()
  finally:
    job.stop()
  assert len(ddp_tools.capture_lines(proc)) == WORLD, proc.stdout
  return logdir, ddp_tools.kineto_run(logdir, RUN)


def _trace(kineto_dir: str, worker: str):
  with gzip.open(os.path.join(kineto_dir, worker + ".pt.trace.json.gz"), "rt") as f:
    return json.load(f)


def test_each_rank_file_has_the_whole_run(captured):
  _, kineto_dir = captured
  assert sorted(os.listdir(kineto_dir)) == [w + ".pt.trace.json.gz" for w in WORKERS]
  for rank, worker in enumerate(WORKERS):
    trace = _trace(kineto_dir, worker)
    assert trace["distributedInfo"] == {"backend": "gloo", "rank": rank,
                                        "world_size": WORLD}
    names = collections.Counter(e.get("name") for e in trace["traceEvents"])
    assert names["gloo:broadcast"] == 1, worker
    assert names["gloo:all_reduce"] == STEPS, worker
    steps = sorted(e["name"] for e in trace["traceEvents"]
                   if e.get("name", "").startswith("ProfilerStep#"))
    assert steps == sorted(f"ProfilerStep#{s}" for s in range(STEPS)), worker
    assert names["slow_rank_delay"] == (STEPS if rank == 3 else 0), worker


def test_hta_parses_one_trace_per_rank(captured):
  from hta.trace_analysis import TraceAnalysis
  _, kineto_dir = captured
  analysis = TraceAnalysis(trace_dir=kineto_dir)
  assert sorted(analysis.t.traces) == list(range(WORLD))
  symbols = analysis.t.symbol_table.get_sym_table()
  for rank in range(WORLD):
    df = analysis.t.get_trace(rank)
    names = collections.Counter(symbols[i] for i in df["name"])
    # By default HTA keeps what starts before the last ProfilerStep (the
    # last step of a torch.profiler window is often cut): it must have
    # found our steps to drop exactly the last one and its all-reduce.
    assert names["gloo:all_reduce"] == STEPS - 1, rank
    assert sorted(s for s in names if s.startswith("ProfilerStep#")) == [
        f"ProfilerStep#{s}" for s in range(STEPS - 1)], rank
    assert names["gloo:broadcast"] == 1, rank
    assert names["aten::addmm"] > 0, rank

  overlap = analysis.get_comm_comp_overlap(visualize=False)
  assert list(overlap["rank"]) == list(range(WORLD))
  # HTA measures the overlap of communication and computation *GPU
  # kernels* (nccl*Kernel on CUDA streams); a Gloo job on CPUs has none,
  # so each rank's share is undefined (NaN), as for a torch.profiler trace
  # of the same job, not an error.
  for value in overlap["comp_comm_overlap_pctg"]:
    assert math.isnan(value) or 0 <= value <= 100, overlap


def _plugin_run(kineto_dir: str):
  from torch_tb_profiler import io as tb_io
  from torch_tb_profiler import plugin
  from torch_tb_profiler.profiler.loader import RunLoader
  logdir = os.path.dirname(kineto_dir)
  fake_plugin = types.SimpleNamespace(logdir=logdir)
  assert list(plugin.TorchProfilerPlugin._get_run_dirs(fake_plugin)) == [kineto_dir]
  return RunLoader(RUN, kineto_dir, tb_io.Cache()).load()


def test_plugin_loads_every_rank_and_its_distributed_view(captured):
  _, kineto_dir = captured
  run = _plugin_run(kineto_dir)
  assert sorted(run.get_workers("Overview")) == WORKERS
  for worker in WORKERS:
    assert run.get_profile(worker, "default") is not None, worker
  # The Distributed view exists only if every worker had communication
  # and the same number of collectives.
  assert run.get_workers("Distributed") == ["All"]
  distributed = run.get_profile("All", "default")
  assert [v.name for v in distributed.views] == ["distributed"]

  overlap = distributed.steps_to_overlap["data"]
  assert sorted(overlap["all"]) == WORKERS
  for step in range(STEPS):
    assert sorted(overlap[str(step)]) == WORKERS, step
  for worker in WORKERS:
    computation, _, communication, _ = overlap["all"][worker]
    assert computation > 0 and communication > 0, (worker, overlap["all"][worker])

  wait = distributed.steps_to_wait["data"]["all"]
  assert sorted(wait) == WORKERS
  # Rank 3 sleeps before every all-reduce: the others wait for it there.
  sync = {w: wait[w][1] for w in WORKERS}
  assert sync["127.0.0.1_rank3"] < min(sync[w] for w in WORKERS[:3]), sync

  bucket_bytes = None
  for event in _trace(kineto_dir, WORKERS[0])["traceEvents"]:
    if event.get("name") == "gloo:all_reduce":
      bucket_bytes = event["args"]["msg_bytes"]
      break
  assert bucket_bytes
  for worker in WORKERS:
    table = distributed.comm_ops["data"][worker]
    columns = [c["name"] for c in table["columns"]]
    rows = {row[0]: dict(zip(columns, row)) for row in table["rows"]}
    assert rows["gloo:all_reduce"]["Calls"] == STEPS
    assert rows["gloo:all_reduce"]["Total Size (bytes)"] == STEPS * bucket_bytes
    assert rows["gloo:broadcast"]["Calls"] == 1
    assert rows["gloo:broadcast"]["Total Size (bytes)"] > 0


def test_xprof_lists_one_host_per_rank(captured):
  logdir, _ = captured
  server = XprofServer(logdir)
  try:
    assert server.wait_for_runs() == [RUN]
    query = urllib.parse.urlencode({"run": RUN, "tag": "trace_viewer"})
    hosts = [h["hostname"] for h in server.get_ok("/hosts?" + query)]
    assert sorted(h for h in hosts if h in WORKERS) == WORKERS, hosts
    trace = server.data(RUN, "trace_viewer", WORKERS[2])
    names = collections.Counter(e.get("name") for e in trace["traceEvents"])
    assert names["gloo:all_reduce"] == STEPS, names.most_common(30)
  finally:
    server.stop()


def test_xprof_op_stats_give_each_collective_its_row(captured):
  # xprof reads an event name "a:b" as "<op>:<type>" and keys its rows by
  # <op>: under the Work titles ("gloo:all_reduce") every collective fell
  # into one "gloo" row, typed after whichever came first.
  logdir, _ = captured
  for worker, path in ddp_tools.rank_xplanes(logdir, RUN).items():
    rows = {(r["operation"], r["type"]): r for r in xprof_tools.framework_op_stats(path)}
    assert rows[("gloo/all_reduce", "all_reduce")]["occurrences"] == STEPS, worker
    assert rows[("gloo/broadcast", "broadcast")]["occurrences"] == 1, worker
    assert not [key for key in rows if key[0] == "gloo"], (worker, sorted(rows))


def test_summary_names_the_slow_rank(captured):
  logdir, _ = captured
  proc = ddp_tools.summary(os.path.join(logdir, "plugins", "profile", RUN))
  assert proc.returncode == 0, ct.describe(proc)
  assert re.search(rf"^Distributed job: {WORLD} ranks of world size {WORLD}, backend gloo$",
                   proc.stdout, re.M), proc.stdout
  # Rank 3 sleeps before every all-reduce: it is the straggler.
  assert re.search(r"^Straggler: rank 3\b", proc.stdout, re.M), proc.stdout
  # The collectives table names each Work by its title.
  assert re.search(r"^  gloo:all_reduce ", proc.stdout, re.M), proc.stdout
