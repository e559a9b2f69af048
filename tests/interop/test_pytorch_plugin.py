"""The .pt.trace.json.gz export, loaded by the real PyTorch Profiler
TensorBoard plugin (torch-tb-profiler 0.4.3, the last PyPI release).

write_kineto_sample (tests/export/write_kineto_sample.cc) writes a capture
with 3 steps of torch operators, CUDA runtime launches and the kernels,
copies and sets they queue, through the same WriteProfileFiles a Profiler
uses. The plugin must find the run and worker, and compute the Overview's
step breakdown, the Operator view (with device time) and the Kernel view.

  NEURONPROF_BUILD_DIR=build-x .venv/bin/python -m pytest tests/interop/test_pytorch_plugin.py
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
WRITER = os.path.join(BUILD_DIR, "tests", "write_kineto_sample")
CLI = os.path.join(BUILD_DIR, "tools", "neuronprof")

RUN = "2026_11_23_10_00_00"
WORKER = "testhost"
STEPS = 3
OPS = ("aten::addmm", "aten::relu", "aten::copy_", "aten::zero_", "AddmmBackward0")
KERNELS = ("ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel",
           "ampere_sgemm_64x64_tn")

# Imports the plugin with every "torch" module made unimportable, then
# parses a file: the loader must work on a machine without PyTorch.
NO_TORCH_LOADER = r"""
import importlib.abc, sys
class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
        return None
sys.meta_path.insert(0, NoTorch())
import tempfile
from torch_tb_profiler import plugin  # the TensorBoard entry point
from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.run_generator import RunGenerator
data = RunProfileData.parse("w", None, sys.argv[1], tempfile.mkdtemp())
profile = RunGenerator("w", None, data).generate_run_profile()
assert "torch" not in sys.modules
print("steps", len(data.steps_costs))
"""


def _binary(path: str, target: str) -> str:
  if not (os.path.isfile(path) and os.access(path, os.X_OK)):
    pytest.fail(f"{path} not found; build it (cmake --build {BUILD_DIR} "
                f"--target {target}) or set NEURONPROF_BUILD_DIR")
  return path


@pytest.fixture(scope="module")
def logdir():
  with tempfile.TemporaryDirectory(prefix="neuronprof_tb_") as tmp:
    out = subprocess.run([_binary(WRITER, "write_kineto_sample"), tmp, RUN],
                         capture_output=True, text=True, check=True).stdout
    trace = os.path.join(tmp, RUN, f"{WORKER}.pt.trace.json.gz")
    assert trace in out.split()
    yield tmp


@pytest.fixture(scope="module")
def trace_path(logdir):
  return os.path.join(logdir, RUN, f"{WORKER}.pt.trace.json.gz")


@pytest.fixture(scope="module")
def trace_json(trace_path):
  with gzip.open(trace_path, "rt") as f:
    return json.load(f)


@pytest.fixture(scope="module")
def profile(logdir):
  """The run as the plugin's own loader (RunLoader) builds it."""
  from torch_tb_profiler import io as tb_io
  from torch_tb_profiler import plugin
  from torch_tb_profiler.profiler.loader import RunLoader
  fake_plugin = types.SimpleNamespace(logdir=logdir)
  run_dir = os.path.join(logdir, RUN)
  run = RunLoader(plugin.TorchProfilerPlugin._get_run_name(fake_plugin, run_dir),
                  run_dir, tb_io.Cache()).load()
  # A file without a span in its name is stored as span "default", as the
  # plugin's HTTP handlers ask for it. The loader logs parse errors and
  # keeps no profile.
  assert run.get_workers("Overview") == [WORKER]
  loaded = run.get_profile(WORKER, "default")
  assert loaded is not None, "torch-tb-profiler failed to load the trace (see its log)"
  return loaded


def _step_events(trace_json):
  return sorted((e for e in trace_json["traceEvents"]
                 if e.get("name", "").startswith("ProfilerStep#")),
                key=lambda e: e["ts"])


def test_loader_needs_no_torch(trace_path):
  result = subprocess.run([sys.executable, "-c", NO_TORCH_LOADER, trace_path],
                          capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr[-4000:]
  assert f"steps {STEPS}" in result.stdout


def test_plugin_finds_the_run_and_worker(logdir):
  from torch_tb_profiler import consts
  from torch_tb_profiler import plugin
  fake_plugin = types.SimpleNamespace(logdir=logdir)
  run_dirs = list(plugin.TorchProfilerPlugin._get_run_dirs(fake_plugin))
  # Only <logdir>/<run>: the xprof files under plugins/profile are not runs.
  assert run_dirs == [os.path.join(logdir, RUN)]
  assert plugin.TorchProfilerPlugin._get_run_name(fake_plugin, run_dirs[0]) == RUN
  match = consts.WORKER_PATTERN.match(f"{WORKER}.pt.trace.json.gz")
  assert match and match.group(1) == WORKER and match.group(2) is None


def test_views(profile):
  names = [view.name for view in profile.views]
  for view in ("overall", "operator", "kernel", "trace"):
    assert view in names


def test_overview_step_breakdown(profile, trace_json):
  steps = profile.overview["steps"]
  columns = [c.get("name") for c in steps["columns"]]
  parts = ["Kernel", "Memcpy", "Memset", "Runtime", "DataLoader", "CPU Exec", "Other"]
  for part in parts:
    assert part in columns
  step_events = _step_events(trace_json)
  assert [row[0] for row in steps["rows"]] == [str(i) for i in range(STEPS)]
  kernels = [e for e in trace_json["traceEvents"] if e.get("cat") == "kernel"]
  for row, step in zip(steps["rows"], step_events):
    value = {name: row[i] for i, name in enumerate(columns) if name in parts}
    for part in ("Kernel", "Memcpy", "Memset", "Runtime", "CPU Exec"):
      assert value[part] > 0, (part, row[0])
    # The parts add up to the step's wall time (no device work runs past
    # the host step in the sample, so the step keeps its host length).
    assert sum(value.values()) == pytest.approx(step["dur"])
    # Kernel time is the (non-overlapping) kernels launched in this step.
    in_step = [k for k in kernels
               if step["ts"] <= k["ts"] and k["ts"] + k["dur"] <= step["ts"] + step["dur"]]
    assert len(in_step) == len(KERNELS)
    assert value["Kernel"] == pytest.approx(sum(k["dur"] for k in in_step))


def test_gpu_summary_uses_device_properties(profile):
  summary = {item["title"]: item["value"] for item in profile.gpu_summary}
  assert summary["Name"] == "NVIDIA H100 80GB HBM3"
  assert summary["Compute Capability"] == "9.0"
  assert summary["Memory"] == "80.0 GB"
  assert float(summary["GPU Utilization"].rstrip(" %")) > 0


def test_operator_view_has_ops_with_device_time(profile, trace_json):
  rows = {row["name"]: row for row in profile.operation_table_by_name["data"]}
  assert set(OPS) <= set(rows)
  for name in OPS:
    assert rows[name]["calls"] == STEPS
    assert rows[name]["device_self_duration"] > 0, name
    assert rows[name]["host_total_duration"] > 0, name
  # addmm's device time is exactly its kernels' (linked by External id and
  # correlation through the runtime launch).
  gemm = sum(e["dur"] for e in trace_json["traceEvents"]
             if e.get("name") == "ampere_sgemm_128x64_nn")
  assert rows["aten::addmm"]["device_total_duration"] == pytest.approx(gemm)
  # Grouped by input shape, Kineto's "Input Dims" come through.
  shapes = {(row["name"], row["input_shape"])
            for row in profile.operation_table_by_name_input["data"]}
  assert ("aten::addmm", "[[128], [64, 784], [784, 128]]") in shapes


def test_kernel_view_lists_kernels_with_their_ops(profile):
  table = profile.kernel_table["data"]
  columns = [c["name"] for c in table["columns"]]
  rows = {row[0]: dict(zip(columns, row)) for row in table["rows"]}
  assert set(rows) == set(KERNELS)
  for name in KERNELS:
    assert rows[name]["Calls"] == STEPS
  assert rows["ampere_sgemm_128x64_nn"]["Mean Est. Achieved Occupancy (%)"] == 50.0
  assert rows["ampere_sgemm_128x64_nn"]["Mean Blocks Per SM"] > 0
  op_table = profile.kernel_op_table["data"]
  op_columns = [c["name"] for c in op_table["columns"]]
  launched_by = {(r[op_columns.index("Name")], r[op_columns.index("Operator")])
                 for r in op_table["rows"]}
  assert ("ampere_sgemm_128x64_nn", "aten::addmm") in launched_by
  assert ("ampere_sgemm_64x64_tn", "AddmmBackward0") in launched_by


def test_forward_backward_flows_are_paired(trace_path):
  from torch_tb_profiler.profiler.data import RunProfileData
  data = RunProfileData.parse(WORKER, None, trace_path, tempfile.mkdtemp())
  # 0.4.3 reads the "forward_backward" category: forward ts -> backward ts.
  assert len(data.forward_backward_events) == STEPS


def test_each_kernel_and_copy_has_an_ac2g_flow_from_its_launch(trace_json):
  """Kineto's launch -> device arrows: an "ac2g" s/f pair per kernel and
  copy, id = the correlation id, from the runtime launch to the device."""
  events = trace_json["traceEvents"]
  launches = {e["args"]["correlation"]: e for e in events
              if e.get("cat") == "cuda_runtime" or e.get("cat") == "Runtime"
              if e.get("args", {}).get("correlation")}
  kernels = [e for e in events if e.get("cat") in ("kernel", "Memcpy", "Memset")]
  assert any(e["cat"] == "kernel" for e in kernels)
  flows = {(e["ph"], e["id"]): e for e in events if e.get("cat") == "ac2g"}
  assert kernels and launches
  assert len(flows) == 2 * len(kernels)
  for kernel in kernels:
    correlation = kernel["args"]["correlation"]
    start, end = flows[("s", correlation)], flows[("f", correlation)]
    launch = launches[correlation]
    assert (start["pid"], start["tid"], start["ts"]) == (launch["pid"], launch["tid"],
                                                         launch["ts"])
    assert (end["pid"], end["tid"], end["ts"]) == (kernel["pid"], kernel["tid"], kernel["ts"])
    assert end["bp"] == "e"


def test_cli_convert_writes_the_same_trace(logdir, trace_json, tmp_path):
  xplane = os.path.join(logdir, "plugins", "profile", RUN, f"{WORKER}.xplane.pb")
  out = tmp_path / "again.pt.trace.json.gz"
  subprocess.run([_binary(CLI, "neuronprof_cli"), "convert", xplane, "-o", str(out)],
                 check=True, capture_output=True, text=True)
  with gzip.open(out, "rt") as f:
    assert json.load(f) == trace_json


def test_loader_sees_each_rank_of_a_distributed_run(tmp_path):
  """Two ranks of a Gloo job (as one Profiler per rank writes them): the
  plugin's loader lists one worker per rank, and each parsed trace carries
  its rank in distributedInfo, the dict the Distributed view reads."""
  from torch_tb_profiler import io as tb_io
  from torch_tb_profiler import plugin
  from torch_tb_profiler.profiler.data import RunProfileData
  from torch_tb_profiler.profiler.loader import RunLoader
  run = "ranks"
  subprocess.run([_binary(WRITER, "write_kineto_sample"), str(tmp_path), run, "2"],
                 capture_output=True, text=True, check=True)
  run_dir = os.path.join(tmp_path, run)
  workers = [f"{WORKER}_rank{r}" for r in (0, 1)]
  assert sorted(os.listdir(run_dir)) == [f"{w}.pt.trace.json.gz" for w in workers]
  for rank, worker in enumerate(workers):
    data = RunProfileData.parse(worker, None, os.path.join(run_dir, f"{worker}.pt.trace.json.gz"),
                                tempfile.mkdtemp())
    assert data.distributed_info == {"backend": "gloo", "rank": rank, "world_size": 2}
  fake_plugin = types.SimpleNamespace(logdir=str(tmp_path))
  loaded = RunLoader(plugin.TorchProfilerPlugin._get_run_name(fake_plugin, run_dir),
                     run_dir, tb_io.Cache()).load()
  assert sorted(loaded.get_workers("Overview")) == workers
  for worker in workers:
    assert loaded.get_profile(worker, "default") is not None
