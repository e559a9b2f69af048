"""Real CUPTI captures from an NVIDIA H200, read by the real consumers.

tests/data/cupti_h200 holds what examples/cuda_steps wrote through
neuronprof::cupti on the GPU (see its README.md): xprof's kernel stats and
trace viewer, the PyTorch TensorBoard plugin's loader and HTA must read the
kernels, copies, launch flows and steps in them. No GPU is needed.

    NEURONPROF_BUILD_DIR=/path/to/build .venv/bin/python -m pytest \
      tests/interop/test_cupti_real_capture.py -q
"""

from __future__ import annotations

import collections
import glob
import json
import os
import shutil
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position

DATA = os.path.join(HERE, "..", "data", "cupti_h200")
STEPS = 10
SAXPY = "(anonymous namespace)::saxpy(int, float, float const*, float*)"
BLOCK_SUM = "(anonymous namespace)::block_sum(int, float const*, float*)"
SCALE = "(anonymous namespace)::scale(int, float, float*)"
EMPTY = "(anonymous namespace)::empty()"
# The runtime call that queued each kind of device work in cuda_steps.
LAUNCHED_BY = {SAXPY: "cudaLaunchKernel", BLOCK_SUM: "cudaLaunchKernel",
               SCALE: "cudaLaunchKernel", "MemcpyHtoD": "cudaMemcpyAsync",
               "Memset": "cudaMemsetAsync", "MemcpyDtoH": "cudaMemcpy"}


def _one(pattern: str) -> str:
  paths = glob.glob(os.path.join(DATA, pattern))
  assert len(paths) == 1, (pattern, paths)
  return paths[0]


def _rows(table):
  ids = [c["id"] for c in table["cols"]]
  return [{ids[i]: cell.get("v") for i, cell in enumerate(row["c"])}
          for row in table["rows"]]


def test_xprof_kernel_stats_reads_cuptis_launch_parameters():
  xplane = _one("steps/plugins/profile/*/vm.xplane.pb")
  data = json.loads(xprof_tools._convert(xplane, "kernel_stats"))  # pylint: disable=protected-access
  table = data[0] if isinstance(data, list) else data
  rows = {row["kernel_name"]: row for row in _rows(table)}
  assert set(rows) == {SAXPY, BLOCK_SUM, SCALE}
  for row in rows.values():
    assert row["occurrences"] == STEPS
    assert row["registers_per_thread"] == 16
    assert row["occupancy_pct"] == pytest.approx(100.0)
  assert rows[BLOCK_SUM]["shmem_bytes"] == 1024  # dynamic shared memory
  assert (rows[SAXPY]["grid_dim"], rows[SAXPY]["block_dim"]) == ("16384,1,1", "256,1,1")
  assert (rows[SCALE]["grid_dim"], rows[SCALE]["block_dim"]) == ("132,1,1", "512,1,1")
  assert rows[BLOCK_SUM]["total_duration_us"] == pytest.approx(197.155)


def test_xprof_trace_viewer_links_each_launch_to_its_work():
  xplane = _one("steps/plugins/profile/*/vm.xplane.pb")
  trace = xprof_tools.streaming_trace_json(xplane)
  pids = {ev["args"]["name"]: ev["pid"] for ev in trace["traceEvents"]
          if ev.get("ph") == "M" and ev.get("name") == "process_name"}
  gpu, runtime = pids["vm /device:GPU:0"], pids["vm /host:CPU-GPU-runtime"]
  events = [ev for ev in trace["traceEvents"] if ev.get("ph") == "X"]
  device = [ev for ev in events if ev["pid"] == gpu]
  assert collections.Counter(ev["name"] for ev in device) == {
      name: STEPS for name in LAUNCHED_BY}
  launches = {ev["bind_id"]: ev for ev in events
              if ev["pid"] == runtime and ev.get("flow_out")}
  for ev in device:
    assert ev.get("flow_in") is True, ev
    launch = launches[ev["bind_id"]]
    assert launch["name"] == LAUNCHED_BY[ev["name"]], (launch, ev)
    # CUPTI's clock mapped onto the host's: work starts after its call does.
    assert launch["ts"] <= ev["ts"], (launch, ev)


@pytest.fixture(scope="module")
def plugin_profile(tmp_path_factory):
  """The steps capture as the PyTorch plugin's own loader builds it."""
  from torch_tb_profiler import io as tb_io
  from torch_tb_profiler.profiler.loader import RunLoader
  run_dir = os.path.dirname(_one("steps/*/vm.pt.trace.json.gz"))
  logdir = tmp_path_factory.mktemp("tb")  # The loader writes caches beside it.
  run = os.path.join(logdir, os.path.basename(run_dir))
  shutil.copytree(run_dir, run)
  loaded = RunLoader(os.path.basename(run), run, tb_io.Cache()).load()
  assert loaded.get_workers("Overview") == ["vm"]
  profile = loaded.get_profile("vm", "default")
  assert profile is not None, "torch-tb-profiler failed to load the trace"
  return profile


def test_plugin_overview_breaks_each_step_down(plugin_profile):
  steps = plugin_profile.overview["steps"]
  columns = [c.get("name") for c in steps["columns"]]
  assert [row[0] for row in steps["rows"]] == [str(i) for i in range(STEPS)]
  for row in steps["rows"]:
    value = {name: row[i] for i, name in enumerate(columns) if name}
    for part in ("Kernel", "Memcpy", "Memset", "Runtime"):
      assert value[part] > 0, (part, row[0])


def test_plugin_gpu_summary_and_kernel_view(plugin_profile):
  summary = {item["title"]: item["value"] for item in plugin_profile.gpu_summary}
  assert summary["Name"] == "NVIDIA H200"
  assert summary["Compute Capability"] == "9.0"
  table = plugin_profile.kernel_table["data"]
  columns = [c["name"] for c in table["columns"]]
  rows = {row[0]: dict(zip(columns, row)) for row in table["rows"]}
  assert set(rows) == {SAXPY, BLOCK_SUM, SCALE}
  assert all(row["Calls"] == STEPS for row in rows.values())


def test_hta_reads_kernels_and_their_launches():
  from hta.trace_analysis import TraceAnalysis
  # The launches capture: HTA 0.5 under pandas 3 fails on a trace whose
  # correlation ids all fit in int8 (the steps capture's do), see
  # docs/guide/devices.md.
  run_dir = os.path.dirname(_one("launches/*/vm.pt.trace.json.gz"))
  analysis = TraceAnalysis(trace_dir=run_dir)
  df = analysis.t.get_trace(0)
  symbols = analysis.t.symbol_table.get_sym_table()
  names = collections.Counter(symbols[i] for i in df["name"])
  # HTA leaves out the last ProfilerStep and what starts after it.
  assert names[EMPTY] == 20 * (STEPS - 1)
  assert names[SAXPY] == STEPS - 1
  kernels = df[df["stream"].gt(0)]
  launched = df.loc[kernels["index_correlation"]]
  assert {symbols[i] for i in launched["name"]} >= {"cudaLaunchKernel", "cudaMemcpyAsync"}
  breakdown = analysis.get_gpu_kernel_breakdown(visualize=False)[0]
  assert set(breakdown["kernel_type"]) >= {"COMPUTATION", "MEMORY"}
