#!/usr/bin/env python3
"""Write a small XSpace (.xplane.pb) shaped like what neuronprof emits.

Layout of the default sample (all on plane "/host:CPU"):
  line id=<main tid> name="MainThread":
    step k (k = 0..steps-1): event "<step_name>" at k*step_ms, lasting
        step_ms*0.9, with stats step_num=k (int64) and _r=1 (int64);
      nested: "model_build" (step 0 only), then "forward", "backward".
  line id=<worker tid> name="worker-0":
    "data_load" events between steps (not nested in any step).

The protobuf classes come from the XSpace descriptor compiled into the pinned
xprof wheel (see xprof_tools.xplane_classes), so the file is built against the
same schema xprof reads.

Usage:
  python make_sample_xplane.py OUT.xplane.pb [--steps N] [--step-name train]
      [--no-step-num] [--no-root] [--step-num-type int64|uint64]
      [--epoch-line-timestamps] [--no-task-env] [--meta-in-name] [--tf-op]
      [--check]

--check runs xprof's converters (via xprof_tools) on the written file and
asserts what the default sample must read back as: the step count, the
trace_viewer events and their nesting, and (with --tf-op) the op table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xprof_tools  # pylint: disable=wrong-import-position

PS_PER_NS = 1000
PS_PER_MS = 1000 * 1000 * 1000

MAIN_TID = 4242
WORKER_TID = 4243


class PlaneBuilder:
  """Minimal helper that interns event/stat metadata by name."""

  def __init__(self, plane):
    self.plane = plane
    self._event_ids = {}
    self._stat_ids = {}

  def event_id(self, name: str) -> int:
    if name not in self._event_ids:
      mid = len(self._event_ids) + 1  # id 0 stays unused
      md = self.plane.event_metadata[mid]
      md.id = mid
      md.name = name
      self._event_ids[name] = mid
    return self._event_ids[name]

  def stat_id(self, name: str) -> int:
    if name not in self._stat_ids:
      mid = len(self._stat_ids) + 1
      md = self.plane.stat_metadata[mid]
      md.id = mid
      md.name = name
      self._stat_ids[name] = mid
    return self._stat_ids[name]

  def add_event(self, line, name, offset_ps, duration_ps, stats=()):
    ev = line.events.add()
    ev.metadata_id = self.event_id(name)
    ev.offset_ps = int(offset_ps)
    ev.duration_ps = int(duration_ps)
    for stat_name, kind, value in stats:
      st = ev.stats.add()
      st.metadata_id = self.stat_id(stat_name)
      setattr(st, kind + "_value", value)
    return ev


def build(steps: int = 5, step_name: str = "train", with_step_num: bool = True,
          with_root: bool = True, step_num_type: str = "int64",
          step_ms: float = 10.0, start_ns: int | None = None,
          epoch_line_timestamps: bool = False, task_env: bool = True,
          meta_in_name: bool = False, tf_op: bool = False):
  """Returns an XSpace message.

  Line timestamps are written relative to the session start (as TSL does after
  NormalizeTimestamps) unless epoch_line_timestamps is set; the absolute start
  and stop wall times go to the "Task Environment" plane.
  """
  cls = xprof_tools.xplane_classes()
  space = cls["XSpace"]()
  space.hostnames.append("sample-host")
  plane = space.planes.add()
  plane.id = 0
  plane.name = "/host:CPU"
  b = PlaneBuilder(plane)

  if start_ns is None:
    start_ns = time.time_ns()
  step_ps = int(step_ms * PS_PER_MS)
  # The first events start 1 ms after the session start.
  line_ts = start_ns + 1_000_000 if epoch_line_timestamps else 1_000_000

  main = plane.lines.add()
  main.id = MAIN_TID
  main.display_id = MAIN_TID
  main.name = "MainThread"
  main.timestamp_ns = line_ts

  worker = plane.lines.add()
  worker.id = WORKER_TID
  worker.display_id = WORKER_TID
  worker.name = "worker-0"
  worker.timestamp_ns = line_ts

  for k in range(steps):
    t0 = k * step_ps
    stats = []
    if with_step_num:
      stats.append(("step_num", step_num_type, k))
    if with_root:
      stats.append(("_r", "int64", 1))
    # Parent first, children after, children strictly inside the parent.
    name = step_name
    if meta_in_name:  # TraceMe-style "name#k=v,k2=v2#" encoding, no XStats
      name = "%s#%s#" % (step_name, ",".join(
          "%s=%s" % (n, v) for n, _, v in stats))
      stats = []
    b.add_event(main, name, t0, step_ps * 9 // 10, stats)
    def op_stats(op_name):
      # framework_op_stats needs a "name:Type" tf_op stat to list an op.
      return [("tf_op", "str", "model/%s:%s" % (op_name, op_name.title()))
             ] if tf_op else []
    cursor = t0 + step_ps // 100
    if k == 0:
      b.add_event(main, "model_build", cursor, step_ps // 10,
                  op_stats("model_build"))
      cursor += step_ps // 10 + step_ps // 100
    b.add_event(main, "forward", cursor, step_ps * 3 // 10,
                op_stats("forward"))
    cursor += step_ps * 3 // 10 + step_ps // 100
    b.add_event(main, "backward", cursor, step_ps * 3 // 10,
                op_stats("backward"))
    # Worker thread: input loading overlapping the gap between steps.
    b.add_event(worker, "data_load", t0 + step_ps * 85 // 100,
                step_ps * 10 // 100)

  end_ps = steps * step_ps
  main.duration_ps = end_ps
  worker.duration_ps = end_ps

  if task_env:
    env = space.planes.add()
    env.id = 1
    env.name = "Task Environment"
    eb = PlaneBuilder(env)
    stop_ns = start_ns + 1_000_000 + end_ps // PS_PER_NS + 1_000_000
    for stat_name, value in (("profile_start_time", start_ns),
                             ("profile_stop_time", stop_ns)):
      st = env.stats.add()
      st.metadata_id = eb.stat_id(stat_name)
      st.uint64_value = value
  return space


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawTextHelpFormatter)
  ap.add_argument("out")
  ap.add_argument("--steps", type=int, default=5)
  ap.add_argument("--step-name", default="train")
  ap.add_argument("--no-step-num", action="store_true")
  ap.add_argument("--no-root", action="store_true")
  ap.add_argument("--step-num-type", choices=("int64", "uint64"),
                  default="int64")
  ap.add_argument("--start-ns", type=int, default=None)
  ap.add_argument("--epoch-line-timestamps", action="store_true",
                  help="write epoch ns into XLine.timestamp_ns (overflows "
                  "xprof's picosecond math; for demonstrating the gotcha)")
  ap.add_argument("--no-task-env", action="store_true")
  ap.add_argument("--meta-in-name", action="store_true",
                  help="encode step_num/_r as 'name#k=v#' instead of XStats")
  ap.add_argument("--tf-op", action="store_true",
                  help="give forward/backward/model_build a tf_op stat")
  ap.add_argument("--check", action="store_true",
                  help="validate the file with xprof's own converters")
  args = ap.parse_args(argv)
  space = build(steps=args.steps, step_name=args.step_name,
                with_step_num=not args.no_step_num,
                with_root=not args.no_root, step_num_type=args.step_num_type,
                start_ns=args.start_ns,
                epoch_line_timestamps=args.epoch_line_timestamps,
                task_env=not args.no_task_env, meta_in_name=args.meta_in_name,
                tf_op=args.tf_op)
  os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
  with open(args.out, "wb") as f:
    f.write(space.SerializeToString())
  print(args.out)
  if args.check:
    check(args.out, args.steps, args.step_name, args.tf_op)
    print("check: OK")
  return 0


def expected_overview_steps(emitted: int) -> int:
  """xprof drops the first and last step when more than 5 are found."""
  return emitted if emitted <= 5 else emitted - 2


def check(path: str, steps: int, step_name: str, tf_op: bool) -> None:
  """Asserts how xprof reads back a default-shaped sample."""
  got = xprof_tools.overview_steps(path)
  want = expected_overview_steps(steps)
  assert got == want, f"overview_steps: got {got}, want {want}"

  events = xprof_tools.trace_events(path)
  meta = xprof_tools.trace_metadata(path)
  main_evs = [e for e in events if e["tid"] == MAIN_TID]
  assert meta["tids"].get((main_evs[0]["pid"], MAIN_TID)) == "MainThread"
  roots = [e for e in main_evs if "step_name" in e["args"]]
  # Root events are renamed to "<name> <step_num>" by xprof's grouping.
  assert [e["name"] for e in roots] == [
      f"{step_name} {k}" for k in range(steps)], [e["name"] for e in roots]
  for k, root in enumerate(roots):
    assert root["args"]["group_id"] == str(k), root
    assert abs(root["dur_us"] - 9000.0) < 1e-6, root
  # Children: same pid/tid, inside the parent's [ts, ts+dur], same group_id.
  for ev in main_evs:
    if ev in roots:
      continue
    parent = [r for r in roots if r["ts_us"] <= ev["ts_us"] and
              ev["ts_us"] + ev["dur_us"] <= r["ts_us"] + r["dur_us"]]
    assert len(parent) == 1, ev
    assert ev["args"].get("group_id") == parent[0]["args"]["group_id"], ev
  assert [e["name"] for e in main_evs[:2]][1] == "model_build"
  worker = [e for e in events if e["tid"] == WORKER_TID]
  assert len(worker) == steps and all("group_id" not in e["args"]
                                      for e in worker), worker
  # Line timestamp 1 ms after session start -> first event at ts 1000 us.
  assert abs(main_evs[0]["ts_us"] - 1000.0) < 1e-6, main_evs[0]

  if tf_op:
    rows = {r["operation"]: r for r in xprof_tools.framework_op_stats(path)}
    assert rows["model/forward"]["occurrences"] == steps, rows
    assert abs(rows["model/forward"]["total_time"] - 3000.0 * steps) < 1e-3
    assert rows["model/model_build"]["occurrences"] == 1, rows


if __name__ == "__main__":
  sys.exit(main())
