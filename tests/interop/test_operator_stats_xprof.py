"""xprof's framework_op_stats lists the operators our annotator labels.

tests/analysis/write_operator_xplane (C++) builds a capture with torch
operator events the way collectors/torch records them (aten ops nested in
ScopedTrace scopes, an autograd node with its aten::mm's, optimizer ops),
runs analysis::AnnotateOperatorEvents and writes <host>.xplane.pb with the
exporter. The pinned xprof wheel must then list one row per (scope, op)
with the aten op as its type and the recorded number of calls.

    NEURONPROF_BUILD_DIR=/path/to/build .venv/bin/python -m pytest \
        tests/interop/test_operator_stats_xprof.py -q
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
WRITER = os.path.join(BUILD_DIR, "tests", "write_operator_xplane")

STEPS = 4
# What one step of tests/analysis/operator_space.h records:
# (operation, type) -> (calls per step, total time per step in us).
EXPECTED = {
    ("MLP/layer_fc1/aten__linear", "aten__linear"): (1, 100.0),
    ("MLP/layer_fc1/aten__t", "aten__t"): (1, 10.0),
    ("MLP/layer_fc1/aten__addmm", "aten__addmm"): (1, 89.0),
    ("MLP/layer_fc1/aten__relu", "aten__relu"): (1, 30.0),
    ("MLP/aten__foo_unknown", "aten__foo_unknown"): (1, 50.0),
    ("loss_backward/AddmmBackward0", "AddmmBackward0"): (1, 290.0),
    ("loss_backward/aten__mm", "aten__mm"): (2, 180.0),
    ("optimizer_step/aten__add_", "aten__add_"): (1, 40.0),
    ("optimizer_step/aten__zero_", "aten__zero_"): (1, 10.0),
}
# xprof also parses marker names of the "name:Type" form: PyProf's
# "layer:fc1" marker (20..200 us) becomes a row of its own.
LAYER_ROW = ("layer", "fc1")


def _write(tmp_path, *flags) -> str:
  if not (os.path.isfile(WRITER) and os.access(WRITER, os.X_OK)):
    pytest.fail(f"write_operator_xplane not found at {WRITER}; build it "
                f"(cmake --build {BUILD_DIR} --target write_operator_xplane) "
                "or set NEURONPROF_BUILD_DIR")
  subprocess.run([WRITER, str(tmp_path), "host", "--steps", str(STEPS), *flags],
                 check=True, capture_output=True, timeout=60)
  return os.path.join(str(tmp_path), "host.xplane.pb")


def _op_rows(path: str):
  return {(r["operation"], r["type"]): r
          for r in xprof_tools.framework_op_stats(path)
          if r["type"] != "IDLE"}


def test_framework_op_stats_lists_every_annotated_op(tmp_path):
  rows = _op_rows(_write(tmp_path))
  assert set(rows) == set(EXPECTED) | {LAYER_ROW}
  assert rows[LAYER_ROW]["total_time"] == pytest.approx(180.0 * STEPS, abs=1e-3)
  for key, (calls, time_us) in EXPECTED.items():
    row = rows[key]
    assert row["occurrences"] == calls * STEPS, key
    assert row["total_time"] == pytest.approx(time_us * STEPS, abs=1e-3), key
    assert row["host_or_device"] == "Host"
  # xprof's self time nests the ops as we do: linear keeps 1 us per call
  # after its t (10 us) and addmm (89 us).
  linear = rows[("MLP/layer_fc1/aten__linear", "aten__linear")]
  assert linear["total_self_time"] == pytest.approx(1.0 * STEPS, abs=1e-3)


def test_without_annotation_xprof_lists_no_ops(tmp_path):
  # The tf_op stat is what makes the rows: without it only the layer:
  # marker (by its own name) is listed.
  assert set(_op_rows(_write(tmp_path, "--no-annotate"))) == {LAYER_ROW}
