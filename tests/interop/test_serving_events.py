"""Flows, async spans, counters and instants read back by their consumers.

build/tests/write_serving_capture records, through the public API, three
"serve" steps with TraceProducer/TraceConsumer flows (one to one, one to
many, many to one), AsyncTrace spans ended on another thread, TraceCounter
samples and a TraceInstant, and writes every output file. Then:
  - xprof's own trace viewer (`trace_viewer@`, the variant its UI loads)
    links each producer to its consumers (`bind_id`, `flow_out` / `flow_in`),
    draws the counters as counter events and the async spans on lines
    named after their track;
  - the Chrome trace is strict JSON with s/f flow pairs, b/e async pairs,
    C counters and i instants;
  - the Kineto trace is strict JSON, the PyTorch TensorBoard plugin's own
    loader builds a profile from it and HTA parses it.

    NEURONPROF_BUILD_DIR=/path/to/build python -m pytest tests/interop/test_serving_events.py
"""

from __future__ import annotations

import collections
import gzip
import os
import subprocess
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position
from test_hostile_strings import strict_json  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
WRITER = os.path.join(BUILD_DIR, "tests", "write_serving_capture")
STEPS = 3
REQUESTS = 2  # per step


@pytest.fixture(scope="module")
def files(tmp_path_factory):
  if not os.access(WRITER, os.X_OK):
    pytest.fail(f"{WRITER} not found; build it (cmake --build {BUILD_DIR} "
                "--target write_serving_capture) or set NEURONPROF_BUILD_DIR")
  logdir = str(tmp_path_factory.mktemp("logdir"))
  proc = subprocess.run([WRITER, logdir], capture_output=True, text=True, timeout=120,
                        check=False)
  assert proc.returncode == 0, proc.stderr
  by_kind = {"logdir": logdir}
  for suffix in (".xplane.pb", ".pt.trace.json.gz", ".trace.json.gz"):
    found = [p for p in proc.stdout.split() if p.endswith(suffix) and p not in by_kind.values()]
    assert len(found) == 1, f"{suffix} in {proc.stdout}"
    by_kind[suffix] = found[0]
  return by_kind


@pytest.fixture(scope="module")
def xprof_trace(files):
  return xprof_tools.streaming_trace_json(files[".xplane.pb"])["traceEvents"]


def named(events, name, ph="X"):
  return sorted((e for e in events if e.get("ph") == ph and e.get("name") == name),
                key=lambda e: e["ts"])


def test_xprof_links_each_producer_to_its_consumers(xprof_trace):
  accept = named(xprof_trace, "accept")
  infer = named(xprof_trace, "infer")
  reply = named(xprof_trace, "reply")
  assert len(accept) == len(infer) == len(reply) == STEPS * REQUESTS
  for producer, first, second in zip(accept, infer, reply):
    assert producer.get("flow_out") is True, producer
    # One to many: both consumers of the request's id share its arrow.
    assert first.get("flow_in") is True and second.get("flow_in") is True
    assert first["bind_id"] == producer["bind_id"] == second["bind_id"]
    assert first["tid"] != producer["tid"]  # Across threads.
  assert len({p["bind_id"] for p in accept}) == len(accept)


def test_xprof_links_a_batch_of_producers_to_one_consumer(xprof_trace):
  adds = named(xprof_trace, "add_to_batch")
  runs = named(xprof_trace, "run_batch")
  assert len(adds) == STEPS * 2 and len(runs) == STEPS
  for step, run in enumerate(runs):
    pair = adds[2 * step:2 * step + 2]
    assert run.get("flow_in") is True
    assert all(a.get("flow_out") and a["bind_id"] == run["bind_id"] for a in pair)
    # TSL's name for the context type kSharedBatchScheduler.
    assert run.get("cat") == "batch_sched"


def test_xprof_draws_an_arrow_from_each_request_into_a_batch_consumer(xprof_trace):
  # TraceBatchConsumer("assemble", ids of both requests): one marker and,
  # nested in it, one link per id; xprof draws each accept's arrow into it.
  accept = named(xprof_trace, "accept")
  assemble = named(xprof_trace, "assemble")
  links = [e for e in assemble if "bind_id" in e]  # zero length: xprof writes 1 ps
  markers = [e for e in assemble if "bind_id" not in e]
  assert len(markers) == STEPS and len(links) == STEPS * REQUESTS
  for step, marker in enumerate(markers):
    inside = [l for l in links if l["tid"] == marker["tid"] and
              marker["ts"] <= l["ts"] <= marker["ts"] + marker["dur"]]
    assert len(inside) == REQUESTS
    assert all(l.get("flow_in") is True for l in inside)
    producers = accept[REQUESTS * step:REQUESTS * (step + 1)]
    assert sorted(l["bind_id"] for l in inside) == sorted(p["bind_id"] for p in producers)


def test_xprof_draws_counters_and_async_tracks(xprof_trace):
  counters = {e["name"]: e for e in xprof_trace if e.get("ph") == "C"}
  assert set(counters) == {"queue_depth", "load"}
  depth = [value for _, value in counters["queue_depth"]["entries"]]
  assert depth == [1, 2, 0] * STEPS
  assert [value for _, value in counters["load"]["entries"]] == [0.25, 0.5, 0.75]
  threads = {e["tid"]: e["args"]["name"] for e in xprof_trace
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
  spans = named(xprof_trace, "request")
  assert len(spans) == STEPS * REQUESTS
  assert {threads[s["tid"]] for s in spans} == {"requests"}
  # Two requests of a step overlap: two lanes of the track.
  assert len({s["tid"] for s in spans}) == 2
  replies = named(xprof_trace, "reply")
  for span in spans:  # Each ends on the worker, after its reply began.
    assert any(span["ts"] < r["ts"] < span["ts"] + span["dur"] for r in replies)


def test_chrome_trace_has_flows_async_counters_instants(files):
  with gzip.open(files[".trace.json.gz"], "rb") as f:
    events = strict_json(f.read())["traceEvents"]
  # A flow's end is a slice, or a batch consumer's link (an "i" event).
  slices = {(e["tid"], e["ts"]): e["name"] for e in events if e.get("ph") in ("X", "i")}
  starts = {e["id"]: e for e in events if e.get("ph") == "s" and e.get("name") == "flow"}
  finishes = {e["id"]: e for e in events if e.get("ph") == "f" and e.get("name") == "flow"}
  assert starts.keys() == finishes.keys()
  pairs = collections.Counter(
      (slices[(s["tid"], s["ts"])], slices[(finishes[i]["tid"], finishes[i]["ts"])], s["cat"])
      for i, s in starts.items())
  assert pairs == {("accept", "infer", "generic"): STEPS * REQUESTS,
                   ("accept", "reply", "generic"): STEPS * REQUESTS,
                   ("accept", "assemble", "generic"): STEPS * REQUESTS,
                   ("add_to_batch", "run_batch", "shared_batch_scheduler"): STEPS * 2}
  begins = [e for e in events if e.get("ph") == "b"]
  ends = {e["id"]: e for e in events if e.get("ph") == "e"}
  assert len(begins) == len(ends) == STEPS * REQUESTS
  for b in begins:
    assert b["cat"] == "requests" and b["name"] == "request"
    assert ends[b["id"]]["ts"] > b["ts"]
  counters = [e for e in events if e.get("ph") == "C" and e["name"] == "queue_depth"]
  assert [c["args"]["value"] for c in counters] == [1, 2, 0] * STEPS
  instants = [e for e in events if e.get("ph") == "i" and e["name"] == "cache_miss"]
  assert [i["args"]["key"] for i in instants] == list(range(STEPS))


def test_pytorch_plugin_loads_the_kineto_trace(files):
  with gzip.open(files[".pt.trace.json.gz"], "rb") as f:
    events = strict_json(f.read())["traceEvents"]
  assert any(e.get("ph") == "C" and e.get("name") == "queue_depth" for e in events)
  assert len([e for e in events if e.get("ph") == "s" and e.get("cat") == "flow"]) == \
      STEPS * (3 * REQUESTS + 2)
  from torch_tb_profiler import io as tb_io  # pylint: disable=import-outside-toplevel
  from torch_tb_profiler import plugin  # pylint: disable=import-outside-toplevel
  from torch_tb_profiler.profiler.loader import RunLoader  # pylint: disable=import-outside-toplevel
  run_dir = os.path.dirname(files[".pt.trace.json.gz"])
  fake_plugin = types.SimpleNamespace(logdir=files["logdir"])
  run = RunLoader(plugin.TorchProfilerPlugin._get_run_name(fake_plugin, run_dir),  # pylint: disable=protected-access
                  run_dir, tb_io.Cache()).load()
  assert run.get_workers("Overview") == ["serving"]
  loaded = run.get_profile("serving", "default")
  assert loaded is not None, "torch-tb-profiler failed to load the trace (see its log)"
  # The steps the plugin's overview shows are the capture's StepTraces.
  assert [row[0] for row in loaded.overview["steps"]["rows"]] == [str(i) for i in range(STEPS)]


def test_hta_parses_the_kineto_trace(files):
  from hta.trace_analysis import TraceAnalysis  # pylint: disable=import-outside-toplevel
  analysis = TraceAnalysis(trace_dir=os.path.dirname(files[".pt.trace.json.gz"]))
  assert sorted(analysis.t.traces) == [0]
  symbols = analysis.t.symbol_table.get_sym_table()
  names = collections.Counter(symbols[i] for i in analysis.t.get_trace(0)["name"])
  # HTA keeps what starts before the last ProfilerStep: the first two steps'
  # requests, their async spans among them.
  assert names["accept"] == names["request"] == (STEPS - 1) * REQUESTS, names
  assert names["run_batch"] == STEPS - 1, names
