"""The summary's marker and step percentiles are numpy's on the same durations.

tests/analysis/write_request_xplane (C++) writes a serving capture
(request_space.h: requests with queue_wait, infer holding matmul, respond;
infer's durations irregular, three requests delayed) as <host>.xplane.pb and
<host>.trace.json.gz. The durations are read back from the Chrome trace
(what Perfetto shows), numpy.percentile (its default, linear method) and
numpy.mean are computed on them, and `neuronprof summary --json -` must
report the same calls, total, mean, p50, p90, p99 and max per marker and
step name.

    NEURONPROF_BUILD_DIR=/path/to/build .venv/bin/python -m pytest \
        tests/interop/test_marker_percentiles.py -q
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import subprocess

import numpy
import pytest

import capture_tools as ct

WRITER = os.path.join(ct.BUILD_DIR, "tests", "write_request_xplane")


def _durations_us(trace_path: str) -> dict[str, list[float]]:
  with gzip.open(trace_path, "rt", encoding="utf-8") as f:
    events = json.load(f)["traceEvents"]
  out = collections.defaultdict(list)
  for e in events:
    if e.get("ph") == "X":
      out[e["name"]].append(float(e["dur"]))
  return out


def test_percentiles_match_numpy(tmp_path):
  subprocess.run([ct.binary(WRITER, "write_request_xplane"), str(tmp_path), "host",
                  "--requests", "1000", "--irregular", "--slow", "5,600,901",
                  "--delay_us", "7000"], check=True, capture_output=True, timeout=60)
  durations = _durations_us(os.path.join(str(tmp_path), "host.trace.json.gz"))
  summary = subprocess.run([ct.binary(ct.CLI, "neuronprof_cli"), "summary", str(tmp_path),
                            "--json", "-"], check=True, capture_output=True, text=True,
                           timeout=60)
  tables = json.loads(summary.stdout)["tables"]
  rows = {r["name"]: r for r in tables["markers"] + tables["step_stats"]}
  assert set(rows) == {"request", "queue_wait", "infer", "matmul", "respond", "startup"}
  for name, row in rows.items():
    d = numpy.array(durations[name])
    assert row["calls"] == len(d), name
    # The JSON holds microseconds with 3 decimals (whole nanoseconds).
    expected = {"total_us": d.sum(), "mean_us": d.mean(), "max_us": d.max(),
                "p50_us": numpy.percentile(d, 50), "p90_us": numpy.percentile(d, 90),
                "p99_us": numpy.percentile(d, 99)}
    for column, value in expected.items():
      assert row[column] == pytest.approx(value, abs=0.0006), (name, column)
  # The durations are irregular enough that p90 and p99 interpolate.
  infer = numpy.array(durations["infer"])
  assert numpy.percentile(infer, 99) not in set(infer)


def test_async_spans_counters_and_instants_match_the_chrome_trace(tmp_path):
  """Async spans ("b"/"e" pairs by id), counters ("C") and instants ("i") as
  Perfetto reads them: the summary's figures are numpy's on the same data,
  the counter's time-weighted mean holding each sample until the next one
  and the last until the trace's last event ends."""
  subprocess.run([ct.binary(WRITER, "write_request_xplane"), str(tmp_path), "host", "--flows",
                  "--requests", "300", "--slow", "5,200", "--delay_us", "7000"],
                 check=True, capture_output=True, timeout=60)
  with gzip.open(os.path.join(str(tmp_path), "host.trace.json.gz"), "rt",
                 encoding="utf-8") as f:
    events = json.load(f)["traceEvents"]
  begins = {e["id"]: e["ts"] for e in events if e.get("ph") == "b"}
  spans = numpy.array([e["ts"] - begins[e["id"]] for e in events if e.get("ph") == "e"])
  samples = sorted((e["ts"], e["args"]["value"]) for e in events if e.get("ph") == "C")
  end = max(e["ts"] + e.get("dur", 0) for e in events if "ts" in e)
  times = [t for t, _ in samples] + [end]
  values = numpy.array([v for _, v in samples], dtype=float)
  weighted = (values * numpy.diff(times)).sum() / (end - samples[0][0])
  instants = collections.Counter(e["name"] for e in events if e.get("ph") == "i")

  summary = subprocess.run([ct.binary(ct.CLI, "neuronprof_cli"), "summary", str(tmp_path),
                            "--json", "-"], check=True, capture_output=True, text=True,
                           timeout=60)
  tables = json.loads(summary.stdout)["tables"]
  [row] = tables["async_spans"]
  assert (row["name"], row["thread"], row["calls"]) == ("request", "requests", len(spans))
  for column, value in {"total_us": spans.sum(), "mean_us": spans.mean(),
                        "max_us": spans.max(), "p50_us": numpy.percentile(spans, 50),
                        "p90_us": numpy.percentile(spans, 90),
                        "p99_us": numpy.percentile(spans, 99)}.items():
    assert row[column] == pytest.approx(value, abs=0.0006), column
  [counter] = tables["counters"]
  assert counter["name"] == "queue_depth" and counter["samples"] == len(values)
  assert counter["mean"] == pytest.approx(values.mean())
  assert counter["last"] == values[-1]
  assert counter["time_weighted_mean"] == pytest.approx(weighted, rel=1e-6)
  assert {r["name"]: r["count"] for r in tables["instants"]} == dict(instants)
