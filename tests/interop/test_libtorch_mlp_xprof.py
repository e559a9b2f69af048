"""The libtorch MLP example's capture opens in xprof with operators and steps.

examples/libtorch_mlp trains the seeds' 3-layer MLP with libtorch under a
kOperator Profiler. The pinned xprof must list its aten operators in
framework_op_stats (one call per layer per epoch), count its steps on the
overview page, and show the ops with their costs in the trace viewer.

    NEURONPROF_BUILD_DIR=/path/to/build .venv/bin/python -m pytest \
        tests/interop/test_libtorch_mlp_xprof.py -q
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

import xprof_tools

EPOCHS = 7
BATCH, HIDDEN = 16, 32


@pytest.fixture(scope="module")
def capture(tmp_path_factory, example_capture) -> str:
  return example_capture(tmp_path_factory.mktemp("libtorch_mlp"), "libtorch_mlp",
                         "--epochs", str(EPOCHS), "--batch", str(BATCH), "--hidden", str(HIDDEN))


def test_framework_op_stats_lists_the_aten_operators(capture):
  rows = xprof_tools.framework_op_stats(capture)
  calls = Counter()
  for row in rows:
    calls[row["type"]] += int(row["occurrences"])
  # Three Linear layers: one addmm each per epoch forward, and one
  # AddmmBackward0 each per epoch backward.
  assert calls["aten__addmm"] == 3 * EPOCHS
  assert calls["AddmmBackward0"] == 3 * EPOCHS
  assert calls["aten__relu"] == 2 * EPOCHS
  assert calls["aten___log_softmax"] == EPOCHS
  # The weight gradients of all three layers and the input gradients of the
  # two upper ones are matrix products.
  assert calls["aten__mm"] == 5 * EPOCHS
  # Operation names carry the marker scope the op ran in.
  addmm_ops = {row["operation"] for row in rows if row["type"] == "aten__addmm"}
  assert addmm_ops == {f"model_build/MLP/layer_{layer}/aten__addmm"
                       for layer in ("fc1", "fc2", "fc3")}


def test_overview_counts_the_epochs_as_steps(capture):
  # xprof drops the first and last step when there are more than five.
  assert xprof_tools.overview_steps(capture) == EPOCHS - 2


def test_trace_viewer_shows_ops_with_their_costs(capture):
  events = xprof_tools.trace_events(capture)
  addmm = [e for e in events if e["name"] == "aten::addmm"]
  assert len(addmm) == 3 * EPOCHS
  # fc2: a (BATCH x HIDDEN) @ (HIDDEN x HIDDEN) product, 2*M*N*K FLOPs.
  fc2 = [e for e in addmm
         if e["args"].get("input_dims") == f"[[{HIDDEN}],[{BATCH},{HIDDEN}],[{HIDDEN},{HIDDEN}],[],[]]"]
  assert len(fc2) == EPOCHS
  # xprof's trace viewer hides the `flops` stat (tests/collectors/torch checks it) but
  # shows bytes_accessed: 4 bytes x (M*N + M*K + N*K) for float32.
  m, n, k = BATCH, HIDDEN, HIDDEN
  assert all(int(e["args"]["bytes_accessed"]) == 4 * (m * n + m * k + n * k) for e in fc2)
  assert all(e["args"]["direction"] == "fprop" for e in fc2)
  assert all(e["args"]["layer"] == "fc2" for e in fc2)


def test_trace_viewer_shows_marker_sources_and_module_layers(capture):
  """NEURONPROF_SCOPE's file:line reaches xprof's trace viewer (stat "source",
  TSL's kSourceInfo, on the call site's metadata), and each ModuleScope is
  a "layer:<registered name>" marker around its Linear's addmm."""
  events = xprof_tools.trace_events(capture)
  builds = [e for e in events if e["name"] == "model_build"]
  assert len(builds) == EPOCHS
  for event in builds:
    assert re.search(r"/libtorch_mlp/libtorch_mlp\.cc:[0-9]+$", event["args"].get("source", "")), event
  # ScopedTrace-style markers (the ModuleScopes) carry no source.
  layers = [e for e in events if e["name"] in ("layer:fc1", "layer:fc2", "layer:fc3")]
  assert len(layers) == 3 * EPOCHS
  assert all("source" not in e["args"] for e in layers)
  for layer in layers:
    inside = [e for e in events
              if e["name"] == "aten::addmm" and e["tid"] == layer["tid"] and
              layer["ts_us"] <= e["ts_us"] and
              e["ts_us"] + e["dur_us"] <= layer["ts_us"] + layer["dur_us"]]
    assert len(inside) == 1, layer
