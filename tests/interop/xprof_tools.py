#!/usr/bin/env python3
"""Run xprof's own converters on an .xplane.pb file (no server involved).

Importable helpers (all conversions are done by the pinned `xprof` wheel, see
requirements.txt):

    trace_text(path)          -> the trace viewer's JSON text
    trace_events(path)        -> list of {name, ts_us, dur_us, pid, tid, args}
    trace_metadata(path)      -> {"pids": {pid: name}, "tids": {(pid, tid): name}}
    streaming_trace_json(path) -> trace_viewer@ JSON (custom device planes, flows)
    overview_steps(path)      -> int, number of steps xprof's overview page counts
    overview_step_times(path) -> list of {step, step_time_ms}
    framework_op_stats(path)  -> list of dict rows (one per framework op)
    xplane_classes()          -> dict of protobuf message classes (XSpace, ...)

CLI:
    python xprof_tools.py trace    FILE.xplane.pb
    python xprof_tools.py steps    FILE.xplane.pb
    python xprof_tools.py overview FILE.xplane.pb
    python xprof_tools.py ops      FILE.xplane.pb
    python xprof_tools.py tools    FILE.xplane.pb

Notes: the xprof wheel does not ship an xplane_pb2 module; the XSpace schema is
taken from the serialized FileDescriptorProto that is compiled into xprof's
native library (profiler_plugin_c_api.so), so the classes used to build test
inputs are exactly the schema xprof parses with.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
import shutil
import sys
import tempfile
from typing import Any, Dict, List

# The native converter logs INFO/WARNING lines to stderr through absl/TSL
# logging; level 2 keeps errors only. Must be set before the library loads.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# ---------------------------------------------------------------------------
# Schema: protobuf classes from the descriptors embedded in xprof's library.
# ---------------------------------------------------------------------------

_PROTO_FILES = (
    "tsl/profiler/protobuf/xplane.proto",
    "tsl/profiler/protobuf/profiler_options.proto",
    "tsl/profiler/protobuf/profiler_service_monitor_result.proto",
    "tsl/profiler/protobuf/profiler_service.proto",
)


def _native_library_path() -> str:
  import xprof  # pylint: disable=import-outside-toplevel

  # xprof.convert is a namespace package (no __file__); go via xprof itself.
  libs = glob.glob(os.path.join(os.path.dirname(xprof.__file__), "convert",
                                "profiler_plugin_c_api*.so"))
  if not libs:
    raise RuntimeError("xprof native library not found")
  return libs[0]


def _read_varint(buf: bytes, pos: int):
  value = shift = 0
  while True:
    byte = buf[pos]
    pos += 1
    value |= (byte & 0x7F) << shift
    shift += 7
    if not byte & 0x80:
      return value, pos


def _wire_span(buf: bytes, start: int) -> bytes:
  """Longest run of plausible top-level FileDescriptorProto fields."""
  pos = end = start
  try:
    while pos < len(buf):
      tag, nxt = _read_varint(buf, pos)
      field, wire_type = tag >> 3, tag & 7
      if not 1 <= field <= 60 or wire_type not in (0, 2):
        break
      if wire_type == 0:
        _, nxt = _read_varint(buf, nxt)
      else:
        length, nxt = _read_varint(buf, nxt)
        nxt += length
        if nxt > len(buf):
          break
      pos = end = nxt
  except IndexError:
    pass
  return buf[start:end]


@functools.lru_cache(maxsize=None)
def embedded_file_descriptors() -> Dict[str, bytes]:
  """Serialized FileDescriptorProtos for _PROTO_FILES found in the library."""
  from google.protobuf import descriptor_pb2  # pylint: disable=import-outside-toplevel

  blob = open(_native_library_path(), "rb").read()
  found: Dict[str, bytes] = {}
  for name in _PROTO_FILES:
    raw = name.encode()
    needle = b"\n" + bytes([len(raw)]) + raw  # field 1 (name), length-delimited
    for match in re.finditer(re.escape(needle), blob):
      span = _wire_span(blob, match.start())
      fdp = descriptor_pb2.FileDescriptorProto()
      try:
        fdp.ParseFromString(span)
      except Exception:  # pylint: disable=broad-except
        continue
      if fdp.name == name and fdp.message_type:
        found[name] = span
        break
    if name not in found:
      raise RuntimeError(f"descriptor for {name} not found in xprof library")
  return found


@functools.lru_cache(maxsize=None)
def _pool():
  from google.protobuf import descriptor_pb2, descriptor_pool  # pylint: disable=import-outside-toplevel

  pool = descriptor_pool.DescriptorPool()
  for name, data in embedded_file_descriptors().items():
    pool.Add(descriptor_pb2.FileDescriptorProto.FromString(data))
  return pool


def message_class(full_name: str):
  from google.protobuf import message_factory  # pylint: disable=import-outside-toplevel

  return message_factory.GetMessageClass(
      _pool().FindMessageTypeByName(full_name))


def xplane_classes() -> Dict[str, Any]:
  names = ("XSpace", "XPlane", "XLine", "XEvent", "XStat", "XEventMetadata",
           "XStatMetadata")
  return {n: message_class("tensorflow.profiler." + n) for n in names}


# ---------------------------------------------------------------------------
# Converters.
# ---------------------------------------------------------------------------


def _private_copy(xplane_path: str, workdir: str) -> str:
  """Copies the input into workdir, keeping its <host>.xplane.pb name.

  xprof writes caches (op_stats, SSTABLE, hlo_proto) next to the xplane file
  and, by default, reuses them; converting a private copy keeps the caller's
  directory clean and rules out stale results.
  """
  if not os.path.isfile(xplane_path):
    raise FileNotFoundError(xplane_path)
  dst = os.path.join(workdir, os.path.basename(xplane_path))
  shutil.copyfile(xplane_path, dst)
  return dst


def _convert(xplane_path: str, tool: str, params: Dict[str, Any] | None = None):
  from xprof.convert import raw_to_tool_data  # pylint: disable=import-outside-toplevel

  params = dict(params or {})
  params.setdefault("use_saved_result", False)
  with tempfile.TemporaryDirectory(prefix="xprof_tools_") as workdir:
    path = _private_copy(xplane_path, workdir)
    data, _content_type = raw_to_tool_data.xspace_to_tool_data(
        [path], tool, params)
  if data is None:
    raise RuntimeError(f"xprof conversion '{tool}' failed for {xplane_path}")
  if isinstance(data, bytes):
    data = data.decode("utf-8")
  return data


def tool_names(xplane_path: str) -> List[str]:
  from xprof.convert import raw_to_tool_data  # pylint: disable=import-outside-toplevel

  with tempfile.TemporaryDirectory(prefix="xprof_tools_") as workdir:
    return raw_to_tool_data.xspace_to_tool_names(
        [_private_copy(xplane_path, workdir)])


def trace_text(xplane_path: str) -> str:
  """The text of xprof's `trace_viewer` tool output (Chrome-trace JSON)."""
  return _convert(xplane_path, "trace_viewer")


def trace_json(xplane_path: str) -> Dict[str, Any]:
  """The raw Chrome-trace JSON produced by xprof's `trace_viewer` tool."""
  return json.loads(trace_text(xplane_path))


def streaming_trace_json(xplane_path: str) -> Dict[str, Any]:
  """The JSON of `trace_viewer@`, the variant xprof's UI loads.

  Unlike `trace_viewer` it shows /device:CUSTOM:* planes and carries flows:
  `bind_id` with `flow_out` / `flow_in` on the linked "X" events (see
  NOTES.md, "Device planes and flows").
  """
  from xprof.convert import raw_to_tool_data  # pylint: disable=import-outside-toplevel

  with tempfile.TemporaryDirectory(prefix="xprof_tools_") as workdir:
    path = _private_copy(xplane_path, workdir)
    data, _ = raw_to_tool_data.xspace_to_tool_data(
        [path], "trace_viewer@", {"use_saved_result": False})
  if data is None:
    raise RuntimeError(f"xprof conversion 'trace_viewer@' failed for {xplane_path}")
  if isinstance(data, bytes):
    data = data.decode("utf-8")
  return json.loads(data)


def trace_metadata(xplane_path: str) -> Dict[str, Any]:
  """Process and thread names from the trace's "M" (metadata) events."""
  pids: Dict[int, str] = {}
  tids: Dict[tuple, str] = {}
  for ev in trace_json(xplane_path).get("traceEvents", []):
    if ev.get("ph") != "M":
      continue
    name = ev.get("args", {}).get("name")
    if ev.get("name") == "process_name":
      pids[ev["pid"]] = name
    elif ev.get("name") == "thread_name":
      tids[(ev["pid"], ev["tid"])] = name
  return {"pids": pids, "tids": tids}


def trace_events(xplane_path: str) -> List[Dict[str, Any]]:
  """Complete ("X") events, sorted by (pid, tid, ts, -dur)."""
  out = []
  for ev in trace_json(xplane_path).get("traceEvents", []):
    if ev.get("ph") != "X":
      continue
    out.append({
        "name": ev.get("name", ""),
        "ts_us": float(ev.get("ts", 0)),
        "dur_us": float(ev.get("dur", 0)),
        "pid": ev.get("pid"),
        "tid": ev.get("tid"),
        "args": dict(ev.get("args", {})),
    })
  out.sort(key=lambda e: (e["pid"], e["tid"], e["ts_us"], -e["dur_us"]))
  return out


def overview_page(xplane_path: str) -> Any:
  """The overview_page tool output (a JSON list of gviz DataTables)."""
  return json.loads(_convert(xplane_path, "overview_page"))


def _gviz_rows(table: Dict[str, Any]) -> List[Dict[str, Any]]:
  ids = [c.get("id") or c.get("label") for c in table.get("cols", [])]
  rows = []
  for row in table.get("rows", []):
    cells = row.get("c", [])
    rows.append({
        ids[i]: (cell.get("v") if isinstance(cell, dict) else cell)
        for i, cell in enumerate(cells)
    })
  return rows


def _find_table(tables: Any, column_id: str) -> Dict[str, Any] | None:
  for table in tables if isinstance(tables, list) else [tables]:
    if not isinstance(table, dict):
      continue
    if any((c.get("id") == column_id) for c in table.get("cols", [])):
      return table
  return None


def overview_step_times(xplane_path: str) -> List[Dict[str, Any]]:
  """Per-step rows of the overview page's step-time graph."""
  table = _find_table(overview_page(xplane_path), "stepnum")
  if table is None:
    return []
  return [{"step": r.get("stepnum"), "step_time_ms": r.get("stepTimeMs"),
           "row": r} for r in _gviz_rows(table)]


def overview_steps(xplane_path: str) -> int:
  """Number of steps in the overview page's step-time table.

  xprof keeps only well-formed steps (a `_r` root event with at least one
  nested, non-marker event on the same line) and, when more than 5 remain,
  drops the first and the last one. So N emitted steps read back as N for
  N <= 5 and N - 2 above that.
  """
  return len(overview_step_times(xplane_path))


def framework_op_stats(xplane_path: str) -> List[Dict[str, Any]]:
  """Rows of the first framework_op_stats table (times in microseconds).

  Only events carrying a `tf_op` str stat ("name:Type"), or whose own name has
  the "scope/name:Type" form, become ops; everything else is folded into the
  IDLE row. Columns include type, operation, occurrences, total_time,
  avg_time, total_self_time, avg_self_time, host_or_device.
  """
  data = json.loads(_convert(xplane_path, "framework_op_stats"))
  tables = data if isinstance(data, list) else [data]
  table = _find_table(tables, "operation") or (tables[0] if tables else {})
  return _gviz_rows(table)


# ---------------------------------------------------------------------------
# CLI.
# ---------------------------------------------------------------------------


def main(argv: List[str]) -> int:
  if len(argv) != 3:
    print(__doc__)
    return 2
  cmd, path = argv[1], argv[2]
  if cmd == "trace":
    result: Any = trace_events(path)
  elif cmd == "steps":
    result = {"steps": overview_steps(path),
              "step_times": [{k: v for k, v in r.items() if k != "row"}
                             for r in overview_step_times(path)]}
  elif cmd == "overview":
    result = overview_page(path)
  elif cmd == "ops":
    result = framework_op_stats(path)
  elif cmd == "tools":
    result = tool_names(path)
  else:
    print(__doc__)
    return 2
  json.dump(result, sys.stdout, indent=1, default=str)
  print()
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
