"""CUPTI activity records, translated by neuronprof::cupti, read by xprof.

build/tests/write_cupti_sample builds CUPTI records in memory (4 steps of a
cudaMemcpyAsync HtoD and two cudaLaunchKernel launches on stream 7, CUPTI's
clock 5 us ahead of the host's), passes them through the real translator and
device planes, and writes an .xplane.pb. The pinned xprof must then show the
kernels in its kernel_stats tool with the launch parameters CUPTI reported,
and put kernels and copies on "/device:GPU:0" with a flow from each launch.
No GPU is needed.

    NEURONPROF_BUILD_DIR=/path/to/build .venv/bin/python -m pytest \
      tests/interop/test_cupti_xprof.py -q
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
WRITER = os.path.join(BUILD_DIR, "tests", "write_cupti_sample")
CLI = os.path.join(BUILD_DIR, "tools", "neuronprof")
HOST = "cupti_sample"
STEPS = 4
SAXPY = "saxpy(int, float, float const*, float*)"
BLOCK_SUM = "block_sum(int, float const*, float*)"


@pytest.fixture(scope="module")
def xplane(tmp_path_factory):
  if not os.path.isfile(WRITER):
    if not os.path.isdir(os.path.join(BUILD_DIR, "src", "collectors", "cupti")):
      pytest.skip("neuronprof::cupti is not built here (no CUDA toolkit with CUPTI)")
    pytest.fail(f"write_cupti_sample not found at {WRITER}; build it or set "
                "NEURONPROF_BUILD_DIR")
  path = str(tmp_path_factory.mktemp("cupti") / f"{HOST}.xplane.pb")
  proc = subprocess.run([WRITER, path], capture_output=True, text=True,
                        timeout=60, check=False)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  assert "0 dropped" in proc.stdout, proc.stdout
  return path


def _rows(table):
  ids = [c["id"] for c in table["cols"]]
  return [{ids[i]: cell.get("v") for i, cell in enumerate(row["c"])}
          for row in table["rows"]]


def test_kernel_stats_reads_the_launch_parameters(xplane):
  assert "kernel_stats" in xprof_tools.tool_names(xplane)
  data = json.loads(xprof_tools._convert(xplane, "kernel_stats"))  # pylint: disable=protected-access
  table = data[0] if isinstance(data, list) else data
  rows = {row["kernel_name"]: row for row in _rows(table)}
  assert set(rows) == {SAXPY, BLOCK_SUM}
  saxpy, block_sum = rows[SAXPY], rows[BLOCK_SUM]
  assert saxpy["registers_per_thread"] == 32
  assert saxpy["shmem_bytes"] == 0
  assert block_sum["registers_per_thread"] == 24
  assert block_sum["shmem_bytes"] == 1024  # dynamic_shared
  for row in (saxpy, block_sum):
    assert row["block_dim"] == "256,1,1"
    assert row["grid_dim"] == "16384,1,1"
    # 8 blocks of 256 threads fill an H100 SM's 2048 threads.
    assert row["occupancy_pct"] == pytest.approx(100.0)
    assert row["occurrences"] == STEPS
  assert saxpy["avg_duration_us"] == pytest.approx(8.0)
  assert block_sum["avg_duration_us"] == pytest.approx(12.0)


def test_our_kernel_table_has_xprofs_figures(xplane, tmp_path):
  """`neuronprof summary --kernel_csv` and xprof's kernel_stats agree on
  every figure both have: calls, total/mean/min/max time, grid, block,
  registers, shared memory and occupancy."""
  data = json.loads(xprof_tools._convert(xplane, "kernel_stats"))  # pylint: disable=protected-access
  table = data[0] if isinstance(data, list) else data
  theirs = {row["kernel_name"]: row for row in _rows(table)}
  kernel_csv = tmp_path / "kernels.csv"
  proc = subprocess.run([CLI, "summary", xplane, "--kernel_csv", str(kernel_csv)],
                        capture_output=True, text=True, timeout=60, check=False)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  with open(kernel_csv, newline="") as f:
    ours = {row["name"]: row for row in csv.DictReader(f) if row["kind"] == "kernel"}
  assert set(ours) == set(theirs) == {SAXPY, BLOCK_SUM}
  for name, row in ours.items():
    xprof_row = theirs[name]
    assert int(row["calls"]) == xprof_row["occurrences"], name
    assert float(row["total_us"]) == pytest.approx(xprof_row["total_duration_us"]), name
    assert float(row["mean_us"]) == pytest.approx(xprof_row["avg_duration_us"]), name
    assert float(row["min_us"]) == pytest.approx(xprof_row["min_duration_us"]), name
    assert float(row["max_us"]) == pytest.approx(xprof_row["max_duration_us"]), name
    assert row["grid"] == xprof_row["grid_dim"], name
    assert row["block"] == xprof_row["block_dim"], name
    assert int(row["registers"]) == xprof_row["registers_per_thread"], name
    assert int(row["shared_bytes"]) == xprof_row["shmem_bytes"], name
    assert float(row["occupancy_pct"]) == pytest.approx(xprof_row["occupancy_pct"]), name


def test_trace_viewer_links_each_launch_to_its_gpu_work(xplane):
  trace = xprof_tools.streaming_trace_json(xplane)
  pids, tids = {}, {}
  for ev in trace["traceEvents"]:
    if ev.get("ph") == "M" and ev.get("name") == "process_name":
      pids[ev["args"]["name"]] = ev["pid"]
    elif ev.get("ph") == "M" and ev.get("name") == "thread_name":
      tids[(ev["pid"], ev["tid"])] = ev["args"]["name"]
  gpu = pids[f"{HOST} /device:GPU:0"]
  runtime = pids[f"{HOST} /host:CPU-GPU-runtime"]
  assert [name for (pid, _), name in tids.items() if pid == gpu] == [
      "Stream #7(Kernel,Memcpy)"]
  events = [ev for ev in trace["traceEvents"] if ev.get("ph") == "X"]
  device = [ev for ev in events if ev["pid"] == gpu]
  launches = {ev["bind_id"]: ev for ev in events
              if ev["pid"] == runtime and ev.get("flow_out")}
  assert sorted(ev["name"] for ev in device) == sorted(
      ["MemcpyHtoD", SAXPY, BLOCK_SUM] * STEPS)
  expected_call = {"MemcpyHtoD": "cudaMemcpyAsync", SAXPY: "cudaLaunchKernel",
                   BLOCK_SUM: "cudaLaunchKernel"}
  for ev in device:
    assert ev.get("flow_in") is True, ev
    launch = launches[ev["bind_id"]]
    assert launch["name"] == expected_call[ev["name"]]
    assert launch["tid"] == 4321
    # Both clocks mapped onto the host's: the launch precedes its work.
    assert launch["ts"] + launch["dur"] <= ev["ts"], (launch, ev)
