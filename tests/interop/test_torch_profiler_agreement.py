"""neuronprof's operators against torch.profiler's, op for op.

torch_reference.py (run by Debian's /usr/bin/python3 with python3-torch,
the libtorch neuronprof links) scripts five small models to TorchScript and
profiles ITERATIONS runs of each saved file with torch.profiler
(record_shapes, with_flops); tests/collectors/torch/torchscript_runner runs the same
files the same way under a kOperator capture. Operator names, call counts,
input shapes, torch's FLOPs and parent/child nesting must agree exactly,
less the differences docs/OPERATORS.md explains (CPP_ONLY_SCOPES); times only
loosely (both sides are timed on a shared machine).

    NEURONPROF_BUILD_DIR=$PWD/build .venv/bin/python -m pytest \\
        tests/interop/test_torch_profiler_agreement.py -q
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from typing import Dict, List

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
RUNNER = os.path.join(BUILD_DIR, "tests", "torchscript_runner")
SYSTEM_PYTHON = "/usr/bin/python3"
ITERATIONS = 3
MODELS = ["cnn", "transformer", "lstm", "embedding_bag", "train_step"]

# The C++ call of a scripted method (torch::jit::Method) opens one more
# TorchScript-function scope named after the method than Python's call does;
# the extra one is the outer one's only child (docs/OPERATORS.md). Folded
# before comparing.
CPP_ONLY_SCOPES = {"forward"}
# A child whose every reference instance lasts this long (us) is placed in
# the reference tree by its times (torch.profiler's own tree comes from
# microsecond times, so shorter ones nest by rounding).
NESTING_MIN_US = 3
NESTING_SLACK_US = 2

@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> str:
  for path, what in ((RUNNER, "build the torchscript_runner target (needs libtorch-dev)"),
                     (SYSTEM_PYTHON, "install python3")):
    if not os.access(path, os.X_OK):
      pytest.fail(f"{path} not found: {what}, or set NEURONPROF_BUILD_DIR")
  outdir = str(tmp_path_factory.mktemp("torch_reference"))
  env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
  done = subprocess.run([SYSTEM_PYTHON, os.path.join(HERE, "torch_reference.py"), outdir,
                         str(ITERATIONS)], capture_output=True, text=True, timeout=120, env=env)
  assert done.returncode == 0, ("torch_reference.py failed (Debian's python3-torch, "
                                f"scripts/install_deps.sh):\n{done.stderr}")
  return outdir


def ours(outdir: str, model: str) -> List[dict]:
  """The kOperator capture's ops, as torch_reference.py writes torch's."""
  args = [RUNNER, os.path.join(outdir, model + ".pt"), str(ITERATIONS),
          os.path.join(outdir, "logdir_" + model)]
  if model == "train_step":
    args.append("train")
  done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
  space = xprof_tools.xplane_classes()["XSpace"]()
  with open(done.stdout.strip(), "rb") as f:
    space.ParseFromString(f.read())
  rows: List[dict] = []
  for plane in space.planes:
    if plane.name != "/host:CPU":
      continue
    stat_names = {i: m.name for i, m in plane.stat_metadata.items()}
    event_names = {i: m.name for i, m in plane.event_metadata.items()}
    for line in plane.lines:
      events = []
      for event in line.events:
        # Stats shared by every call with the same arguments are on the
        # event's metadata; costs are on the event.
        stats = {stat_names[s.metadata_id]: s
                 for s in list(plane.event_metadata[event.metadata_id].stats) + list(event.stats)}
        if "framework" not in stats:
          continue
        start = line.timestamp_ns * 1000 + event.offset_ps
        text = lambda key: (stats[key].str_value or stat_names.get(stats[key].ref_value, "")
                            if key in stats else "")
        events.append({
            "name": event_names[event.metadata_id],
            "input_shapes": json.loads(text("input_dims")) if "input_dims" in stats else None,
            "self_flops": stats["flops"].int64_value if "flops" in stats else 0,
            "direction": text("direction"),
            "start_us": start / 1e6,
            "end_us": (start + event.duration_ps) / 1e6,
            "thread": line.id,
        })
      events.sort(key=lambda e: (e["start_us"], -e["end_us"]))
      stack: List[int] = []
      for e in events:
        while stack and rows[stack[-1]]["end_us"] < e["end_us"]:
          stack.pop()
        e["parent"] = stack[-1] if stack else None
        stack.append(len(rows))
        rows.append(e)
  return rows


def load_reference(outdir: str, model: str) -> List[dict]:
  with open(os.path.join(outdir, model + ".json")) as f:
    return json.load(f)["events"]


def counts(rows: List[dict]) -> Counter:
  return Counter(r["name"] for r in rows)


def shapes(rows: List[dict]) -> Counter:
  return Counter((r["name"], json.dumps(r["input_shapes"])) for r in rows)


def merge_lone_namesakes(rows: List[dict], names) -> List[dict]:
  """Folds an op named in `names` that is the only child of an op with the
  same name into it (its children move up), as torch.profiler's
  EventList._remove_dup_nodes does for every name."""
  rows = [dict(r) for r in rows]
  alive = [True] * len(rows)
  while True:
    children: Dict[int, List[int]] = {}
    for i, r in enumerate(rows):
      if alive[i] and r["parent"] is not None:
        children.setdefault(r["parent"], []).append(i)
    folded = [kids[0] for p, kids in children.items()
              if len(kids) == 1 and rows[kids[0]]["name"] == rows[p]["name"] and
              rows[p]["name"] in names]
    if not folded:
      break
    for i in folded:
      alive[i] = False
      for j in children.get(i, []):
        rows[j]["parent"] = rows[i]["parent"]
  index = {}
  out = []
  for i, r in enumerate(rows):
    if alive[i]:
      index[i] = len(out)
      out.append(r)
  for r in out:
    r["parent"] = None if r["parent"] is None else index[r["parent"]]
  return out


def subtree_flops(rows: List[dict]) -> List[int]:
  """Each op's FLOPs with those of the ops nested in it (ours are self
  FLOPs: a wrapper's count sits on the innermost op with a formula)."""
  total = [r.get("self_flops", 0) for r in rows]
  for i in range(len(rows) - 1, -1, -1):  # children follow their parents
    if rows[i]["parent"] is not None:
      total[rows[i]["parent"]] += total[i]
  return total


def long_names(ref: List[dict]) -> set:
  shortest: Dict[str, float] = {}
  for r in ref:
    shortest[r["name"]] = min(shortest.get(r["name"], 1e18), r["end_us"] - r["start_us"])
  return {name for name, us in shortest.items() if us >= NESTING_MIN_US}


def reference_nesting(ref: List[dict], names: set) -> Counter:
  """(parent, child) of each reference op named in `names`: the innermost
  op of its thread that encloses it, allowing for microsecond rounding."""
  pairs = Counter()
  order = sorted(range(len(ref)), key=lambda i: (ref[i]["start_us"], -ref[i]["end_us"]))
  for pos, i in enumerate(order):
    child = ref[i]
    if child["name"] not in names:
      continue
    parent = None
    for j in reversed(order[:pos]):
      r = ref[j]
      if (r["thread"] == child["thread"] and r["start_us"] <= child["start_us"] and
          r["end_us"] + NESTING_SLACK_US >= child["end_us"] and
          r["end_us"] - r["start_us"] >= child["end_us"] - child["start_us"]):
        parent = r["name"]
        break
    pairs[(parent, child["name"])] += 1
  return pairs


def our_nesting(rows: List[dict], names: set) -> Counter:
  return Counter((rows[r["parent"]]["name"] if r["parent"] is not None else None, r["name"])
                 for r in rows if r["name"] in names)


def fastest_forward_us(rows: List[dict]) -> float:
  """The fastest call of the scripted forward(): one iteration's forward
  pass (a slow first call or a busy moment left out)."""
  return min(r["end_us"] - r["start_us"] for r in rows if r["name"] == "forward")


@pytest.fixture(scope="module")
def runs(reference) -> Dict[str, tuple]:
  return {m: (load_reference(reference, m),
              merge_lone_namesakes(ours(reference, m), CPP_ONLY_SCOPES)) for m in MODELS}


@pytest.mark.parametrize("model", MODELS)
def test_operator_names_and_call_counts_agree(runs, model):
  ref, got = runs[model]
  assert counts(got) == counts(ref)


@pytest.mark.parametrize("model", MODELS)
def test_input_shapes_agree(runs, model):
  ref, got = runs[model]
  assert shapes(got) == shapes(ref)


@pytest.mark.parametrize("model", MODELS)
def test_torch_flops_agree(runs, model):
  """torch's with_flops counts (conv2d, mm, addmm, bmm, mul, add) against
  ours: an op's FLOPs with those of the ops nested in it."""
  ref, got = runs[model]
  expected, actual = Counter(), Counter()
  for r in ref:
    if r["flops"]:
      expected[r["name"]] += r["flops"]
  for r, flops in zip(got, subtree_flops(got)):
    if r["name"] in expected:
      actual[r["name"]] += flops
  if model != "embedding_bag":  # no op with a torch formula
    assert expected
  assert actual == expected


@pytest.mark.parametrize("model", MODELS)
def test_parent_child_nesting_agrees(runs, model):
  ref, got = runs[model]
  names = long_names(ref)
  assert names
  assert our_nesting(got, names) == reference_nesting(ref, names)


@pytest.mark.parametrize("model", MODELS)
def test_times_agree_loosely(runs, model):
  """Same work on a shared machine: the fastest forward() within 5x."""
  ref, got = runs[model]
  ours_us, ref_us = fastest_forward_us(got), fastest_forward_us(ref)
  assert ref_us / 5 <= ours_us <= ref_us * 5, (ours_us, ref_us)


def test_training_step_labels(runs):
  """The C++ step's SGD updates are optimizer ops, the loss is loss."""
  _, got = runs["train_step"]
  top = Counter((r["name"], r["direction"]) for r in got if r["parent"] is None)
  params = 4  # two linear layers' weights and biases
  assert top[("aten::add_", "optimizer")] == params * ITERATIONS
  assert top[("aten::zero_", "optimizer")] == params * ITERATIONS
  loss = [r for r in got if r["name"] == "aten::cross_entropy_loss"]
  assert len(loss) == ITERATIONS and all(r["direction"] == "loss" for r in loss)


# The plugin's Operator view groups ops by call stack ("View CallStack"):
# with record_stacks, each op's stack must reach it from "Call stack" and
# start at the model's TorchScript source (torch_reference.py, where it was
# scripted), then the C++ code that ran it, never inside libtorch.
STACK_LOADER = r"""
import json, sys, tempfile
from torch_tb_profiler.profiler.data import RunProfileData
data = RunProfileData.parse("w", None, sys.argv[1], tempfile.mkdtemp())
print(json.dumps({name: sorted({str(s) for agg in aggs for s in agg.callstacks})
                  for name, aggs in data.stack_lists_group_by_name.items()}))
"""


def test_call_stacks_reach_the_pytorch_plugins_operator_view(reference, tmp_path):
  logdir = str(tmp_path / "stacks")
  done = subprocess.run([RUNNER, os.path.join(reference, "cnn.pt"), "2", logdir, "stacks"],
                        capture_output=True, text=True, timeout=120, check=True)
  run = os.path.basename(os.path.dirname(done.stdout.strip()))
  run_dir = os.path.join(logdir, run)  # <logdir>/<run>/<host>.pt.trace.json.gz
  traces = [f for f in os.listdir(run_dir) if f.endswith(".pt.trace.json.gz")]
  assert len(traces) == 1, os.listdir(run_dir)
  loaded = subprocess.run([sys.executable, "-c", STACK_LOADER, os.path.join(run_dir, traces[0])],
                          capture_output=True, text=True, timeout=120)
  assert loaded.returncode == 0, loaded.stderr
  stacks = json.loads(loaded.stdout.splitlines()[-1])
  assert "aten::conv2d" in stacks, sorted(stacks)
  with open(os.path.join(HERE, "torch_reference.py")) as f:
    conv_line = 1 + [i for i, line in enumerate(f) if "self.conv(x)" in line][0]
  for stack in stacks["aten::conv2d"]:
    frames = stack.split(";")
    script = [f for f in frames if re.search(r"\.py:[0-9]+\)$", f)]
    assert frames[:len(script)] == script and script, frames  # script frames first
    assert script[0].startswith("_conv_forward ("), frames  # innermost first
    assert f"forward ({os.path.join(HERE, 'torch_reference.py')}:{conv_line})" in script, frames
    cpp = frames[len(script):]
    assert cpp[0].startswith("torch::jit::"), frames
    assert any(f.startswith("(anonymous namespace)::Run(torch::jit::Module&, bool) (")
               and "tests/collectors/torch/torchscript_runner.cc:" in f for f in frames), frames
